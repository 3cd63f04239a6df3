#!/usr/bin/env bash
# The whole test suite, as CI runs it, in two parts that each end with ctest's summary:
#   1. the normal build (CUDA and NCCL compiled where nvcc is found, the Python module) and
#      every test in it;
#   2. a clang build of the host code with AddressSanitizer and UndefinedBehaviorSanitizer
#      (undefined behaviour is fatal, leaks are reported), running the unit and multi-rank
#      tests again, and every fuzz target for 15 s; then a clang build with ThreadSanitizer
#      of the one test that calls the library from two threads (tests/threads/async_path.cpp:
#      the calls zipfcoll.torch's hook makes from its worker), run with any report fatal.
# With both parts (the default), the sanitizer build compiles at the lowest CPU priority
# (nice 19) while the normal build's tests run: most of those tests wait on their ranks'
# messages and leave a core idle part of the time, which the build takes, and at nice 19 it
# takes little CPU from a test that wants it. Its output goes to build-sanitize.log, shown when
# it fails.
# usage: scripts/run-tests.sh [normal|sanitize|all]   (default all)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"

# The sanitizer build: configure and compile.
sanitize_build() {
  if ! command -v clang++ > /dev/null; then
    echo "run-tests.sh: the sanitizer build needs clang++ (scripts/debian-packages.txt)" >&2
    return 1
  fi
  CC=clang CXX=clang++ cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DZIPFCOLL_SANITIZE="address;undefined" -DZIPFCOLL_BUILD_FUZZERS=ON \
    -DZIPFCOLL_WITH_CUDA=OFF -DZIPFCOLL_BUILD_BENCH=OFF -DZIPFCOLL_BUILD_EXAMPLES=OFF \
    -DZIPFCOLL_BUILD_PYTHON=OFF
  cmake --build build-sanitize
  # ThreadSanitizer cannot share a build with AddressSanitizer; only its test is built.
  CC=clang CXX=clang++ cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DZIPFCOLL_SANITIZE=thread -DZIPFCOLL_WITH_CUDA=OFF -DZIPFCOLL_BUILD_BENCH=OFF \
    -DZIPFCOLL_BUILD_EXAMPLES=OFF -DZIPFCOLL_BUILD_PYTHON=OFF
  cmake --build build-tsan --target zfc_async_path
}

if [ "$what" = normal ] || [ "$what" = all ]; then
  # The Python module and its tests are required here (AUTO would leave them out quietly).
  # They are built for the first Python that has NumPy, pytest and mpi4py: $PYTHON if set,
  # then python3 on PATH, then /usr/bin/python3, where the Debian packages install them
  # (another python3 earlier on PATH, a pyenv or a venv, may lack them).
  python=""
  for p in ${PYTHON:+"$PYTHON"} python3 /usr/bin/python3; do
    if "$p" -c 'import numpy, pytest, mpi4py' 2> /dev/null; then
      python="$(command -v "$p")"
      break
    fi
  done
  if [ -z "$python" ]; then
    echo "run-tests.sh: no Python with numpy, pytest and mpi4py" \
         "(scripts/debian-packages.txt installs them for /usr/bin/python3)" >&2
    exit 1
  fi
  cmake -S . -B build -G Ninja -DZIPFCOLL_BUILD_PYTHON=ON -DPython3_EXECUTABLE="$python"
  cmake --build build
  sanitize_pid=""
  if [ "$what" = all ]; then
    (nice -n 19 bash -c "set -euo pipefail; $(declare -f sanitize_build); sanitize_build" \
      > build-sanitize.log 2>&1) &
    sanitize_pid=$!
  fi
  # The sanitizer build is waited for whatever the tests gave, so that it never outlives
  # this script; the tests' status is kept.
  status=0
  ctest --test-dir build --output-on-failure -j2 || status=$?
  if [ -n "$sanitize_pid" ] && ! wait "$sanitize_pid"; then
    tail -60 build-sanitize.log
    echo "run-tests.sh: the sanitizer build failed (build-sanitize.log)" >&2
    exit 1
  fi
  [ "$status" = 0 ] || exit "$status"
fi

if [ "$what" = sanitize ] || [ "$what" = all ]; then
  # Built above, in the background, when both parts run.
  [ "$what" = all ] || sanitize_build
  export LSAN_OPTIONS="suppressions=$PWD/tests/sanitize/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  asan="strict_string_checks=1:detect_stack_use_after_return=1"
  # Processes started without mpirun (unit tests, fuzzers, UCX ranks, the plugin checks) are
  # checked for leaks.
  plugins='plugins_(needed|query|nccl_alone|ucx_world|missing_ucx|one_missing)'
  no_mpirun="^(unit|ucx_.*|fuzz_.*|fault_ucx_.*|$plugins)\$"
  ASAN_OPTIONS="$asan:detect_leaks=1" \
    ctest --test-dir build-sanitize --output-on-failure -j2 -R "$no_mpirun"
  # Under mpirun, Open MPI's run-time unloads its plugins before the process ends, so its
  # own allocations cannot be told from zipfcoll's: leaks are not checked there (the
  # abort/re-init test counts descriptors and heap itself). The installed-package test
  # builds an outside program without the sanitizers.
  ASAN_OPTIONS="$asan:detect_leaks=0" \
    ctest --test-dir build-sanitize --output-on-failure -j2 -E "$no_mpirun|^install_consumer$"
  TSAN_OPTIONS="halt_on_error=1:exitcode=66" \
    ctest --test-dir build-tsan --output-on-failure -j2 -R '^async_path_np[0-9]+$'
fi
