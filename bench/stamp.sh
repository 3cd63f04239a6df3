# Sourced by the benchmark scripts (from the repository's top folder). bench_stamp CMD prints
# what made their outputs: the version the build reports, the commit, "+dirty" when the
# sources (outside the results in docs/benchmarks) differ from it, and CMD.
bench_stamp() {
  local version commit
  version="$(sed -n '/^project(zipfcoll/,/)/s/^ *VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt |
    head -1)"
  commit="$(git rev-parse --short=12 HEAD 2> /dev/null || echo unknown)"
  if [ -n "$(git status --porcelain -- . ':!docs/benchmarks' 2> /dev/null)" ]; then
    commit="$commit+dirty"
  fi
  echo "zipfcoll $version, commit $commit, by $*"
}

# plot_python prints the first of /usr/bin/python3 and python3 that has matplotlib and NumPy
# (Debian's python3-matplotlib), or nothing.
plot_python() {
  local p
  for p in /usr/bin/python3 python3; do
    if "$p" -c "import matplotlib, numpy" > /dev/null 2>&1; then
      echo "$p"
      return
    fi
  done
}
