#!/usr/bin/env bash
# Runs every fuzz target for a fixed number of executions and prints how many each ran.
# usage: tests/fuzz/run_fuzzers.sh BUILD_DIR [RUNS_EACH]   (default 300000 each, 1.2e6 in all)
# BUILD_DIR is a build configured with clang, -DZIPFCOLL_SANITIZE="address;undefined" and
# -DZIPFCOLL_BUILD_FUZZERS=ON.
set -euo pipefail
build="${1:?usage: run_fuzzers.sh BUILD_DIR [RUNS_EACH]}"
runs="${2:-300000}"
total=0
# What made the counts (bench/stamp.sh): the version, the commit and this command.
source "$(dirname "$0")/../../bench/stamp.sh"
(cd "$(dirname "$0")/../.." && echo "# made by $(bench_stamp tests/fuzz/run_fuzzers.sh "$@")")
for f in fuzz_config fuzz_header fuzz_arguments fuzz_kernels; do
  bin="$build/tests/fuzz/$f"
  [ -x "$bin" ] || { echo "no $bin: configure with -DZIPFCOLL_BUILD_FUZZERS=ON" >&2; exit 1; }
  corpus="$(mktemp -d)"
  start=$(date +%s.%N)
  "$bin" -runs="$runs" -seed=1 -print_final_stats=1 -artifact_prefix="$corpus/../$f-" \
    "$corpus" "$(dirname "$0")/regressions" > "$corpus.log" 2>&1 || {
    tail -40 "$corpus.log"; echo "$f: FAILED (corpus and log kept in $corpus)"; exit 1; }
  done_runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$corpus.log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$corpus.log" | tail -1)
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  printf '%-15s %9d executions in %6.1f s, %s, no failure\n' "$f" "$done_runs" "$secs" "$cov"
  total=$((total + done_runs))
  rm -rf "$corpus" "$corpus.log"
done
echo "fuzz executions in all: $total"
