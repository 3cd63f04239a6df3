#!/usr/bin/env bash
# The counts behind docs/reliability.md's abort and re-init paragraph: mpi_reinit's 50 cycles
# on 3 and 4 ranks, over MPI and over UCX, each rank's line (descriptors, operator new blocks
# and bytes, MPI communicators and datatypes, from cycle 5 to cycle 50), into OUT.
# usage: tests/reliability/reinit_counts.sh BUILD_DIR OUT
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build="${1:?usage: reinit_counts.sh BUILD_DIR OUT}"
out="${2:?output file}"
mpirun=(mpirun --oversubscribe)
if [ "$(id -u)" = 0 ]; then mpirun+=(--allow-run-as-root); fi
source bench/stamp.sh  # the version, the commit and this command, as the benchmarks say it
stamp="$(bench_stamp tests/reliability/reinit_counts.sh "$build" "$out")"
{
  echo "# made by $stamp"
  for np in 3 4; do
    for transport in mpi ucx; do
      echo "## $np ranks over $transport"
      "${mpirun[@]}" -np "$np" -x ZIPFCOLL_TEST_TRANSPORT="$transport" \
        "$build/tests/mpi_reinit" --gtest_color=no \
        --gtest_filter=AbortReinit.FiftyCyclesLeaveNothingBehind 2>&1 |
        grep -E "abort/re-init|PASSED|FAILED" | sort
    done
  done
} > "$out"
cat "$out"
