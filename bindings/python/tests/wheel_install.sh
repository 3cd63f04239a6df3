#!/usr/bin/env bash
# The packages a user would install: `python -m build` makes the sdist and, from it, the
# wheel (so the sdist must hold everything the build needs); the wheel goes into a fresh
# virtual environment (NumPy from the system's packages, nothing from an index), which
# imports it from there and runs two ranks (wheel_smoke.py). The wheel is built without CUDA
# to keep the test short; the library's options pass through -C cmake.define.*.
#
# usage: wheel_install.sh PYTHON SOURCE_DIR WORK_DIR VERSION
set -euo pipefail
python="$1" source="$2" work="$3" version="$4"
for module in build scikit_build_core pybind11 venv; do
  if ! "$python" -c "import $module" 2> /dev/null; then
    echo "wheel_install.sh: $python lacks the module $module (.ci/run installs it); skipping"
    exit 77
  fi
done
rm -rf "$work"
mkdir -p "$work"
"$python" -m build --no-isolation --outdir "$work/dist" \
  -C cmake.define.ZIPFCOLL_WITH_CUDA=OFF "$source" > "$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; echo "wheel_install.sh: python -m build failed"; exit 1; }
ls -l "$work/dist"
sdist="$work/dist/zipfcoll-$version.tar.gz"
wheel="$(ls "$work"/dist/zipfcoll-"$version"-*.whl)"
[ -f "$sdist" ] || { echo "wheel_install.sh: no sdist $sdist"; exit 1; }
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-index "$wheel"
cd "$work"
env -u PYTHONPATH "$work/venv/bin/python" "$source/bindings/python/tests/wheel_smoke.py" \
  "$work/venv" "$version"
echo "wheel_install.sh: the wheel installs and runs"
