#!/usr/bin/env bash
# The full fault trial set behind docs/reliability.md: TRIALS trials (default 50) of each
# fault (kill, stop, exit, extra) over each transport (mpi, ucx), timeout_ms 2000, seed 2026,
# with the time bound held (FAULT_TRIALS_TIME_BOUND=1). Writes the stamped log to OUT as it
# goes, so a run cut short keeps the rows it finished. Exits non-zero if any trial failed.
# usage: tests/reliability/fault_trials_all.sh BUILD_DIR OUT [TRIALS]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
build="${1:?usage: fault_trials_all.sh BUILD_DIR OUT [TRIALS]}"
out="${2:?output file}"
trials="${3:-50}"
# shellcheck source=../../bench/stamp.sh
source bench/stamp.sh
failed=0
{
  echo "# $(bench_stamp tests/reliability/fault_trials_all.sh "$build" "$out" "$trials")"
  echo "# each row: tests/reliability/fault_trials.sh $build/tests/zfc_fault_trial LAUNCH" \
       "FAULT $trials 2000 2026"
} > "$out"
for launch in mpi ucx; do
  for fault in kill stop exit extra; do
    echo "## $launch $fault" >> "$out"
    FAULT_TRIALS_TIME_BOUND=1 bash tests/reliability/fault_trials.sh \
      "$build/tests/zfc_fault_trial" "$launch" "$fault" "$trials" 2000 2026 >> "$out" 2>&1 ||
      failed=1
  done
done
grep -E '^(mpi|ucx) [a-z]+: survived' "$out"
exit $failed
