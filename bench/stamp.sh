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
