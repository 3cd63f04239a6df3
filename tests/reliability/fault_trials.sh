#!/usr/bin/env bash
# Fault trials: ranks run fused sparse reduces while one rank is SIGKILLed, SIGSTOPped, ends
# its process mid-call, or calls an extra collective, at a random phase of a random call
# (tests/reliability/fault_trial.cpp).
#
# A trial of a lost rank (kill, stop, exit) passes only when EVERY other rank
#   - reports zfcRemoteError or zfcTimeout, and then zfcInvalidUsage for a call after it,
#   - within timeout + 5 s of the fault, both read on the ranks' steady clock,
#   - and then ends by itself with that code as its exit status.
# A trial of an extra collective passes when every rank reports the same zfcMismatch, naming
# the collectives' sequence numbers, and ends with status 0. A rank that does not report,
# reports another code, or has to be ended by this script fails the trial.
# Under mpirun the survivors must outlive the lost rank, so Open MPI's mpirun runs with
# --enable-recovery (MPICH's with -disable-auto-cleanup), and each rank runs inside a shell
# that hands this script its exit status. A stopped victim is killed once every survivor has
# ended.
#
# usage: fault_trials.sh PROGRAM mpi|ucx kill|stop|exit|extra TRIALS [TIMEOUT_MS] [SEED]
#   MPIEXEC overrides the mpirun command line (default: mpirun, with --oversubscribe and,
#   as root, --allow-run-as-root). Trials alternate between 3 and 4 ranks.
# Prints one line per trial and a summary: "survived N/M, worst time to error S s"; exits
# with status 0 only when every trial passed.
# FAULT_TRIALS_TIME_BOUND=0 reports the times without holding them to the bound (as ctest
# runs it: a loaded machine can make any time bound fail). Everything else still holds, and
# a rank that has not ended timeout + 60 s after the launch fails the trial.
set -u
if [ $# -lt 4 ]; then
  echo "usage: $0 PROGRAM mpi|ucx kill|stop|exit|extra TRIALS [TIMEOUT_MS] [SEED]" >&2
  exit 2
fi
prog="$1" launch="$2" fault="$3" trials="$4" timeout_ms="${5:-2000}" seed="${6:-$$}"
case "$launch" in mpi | ucx) ;; *) echo "$0: launch '$launch' is not mpi or ucx" >&2; exit 2;; esac
case "$fault" in kill | stop | exit | extra) ;;
  *) echo "$0: fault '$fault' is not kill, stop, exit or extra" >&2; exit 2;; esac
if ! [[ "$trials" =~ ^[1-9][0-9]*$ ]]; then echo "$0: TRIALS '$trials' is not >= 1" >&2; exit 2; fi
if ! [[ "$timeout_ms" =~ ^[1-9][0-9]*$ ]]; then
  echo "$0: TIMEOUT_MS '$timeout_ms' is not >= 1" >&2; exit 2
fi
RANDOM=$seed
bound_ns=$(( (timeout_ms + 5000) * 1000000 ))
give_up_s=$(( timeout_ms / 1000 + 60 ))

mpi_launcher() {
  if [ -n "${MPIEXEC:-}" ]; then
    read -r -a mpiexec <<< "$MPIEXEC"
  else
    mpiexec=(mpirun --oversubscribe)
    [ "$(id -u)" = 0 ] && mpiexec+=(--allow-run-as-root)
  fi
  local version
  version=$("${mpiexec[0]}" --version 2>&1)
  if [[ "$version" == *"Open MPI"* || "$version" == *OpenRTE* ]]; then
    mpiexec+=(--enable-recovery --mca orte_abort_on_non_zero_status 0)
  elif [[ "$version" == *HYDRA* ]]; then
    mpiexec+=(-disable-auto-cleanup)
  else
    echo "$0: ${mpiexec[0]} is neither Open MPI's nor MPICH's: no way to keep the" \
         "survivors of a lost rank running" >&2
    exit 2
  fi
}
[ "$launch" = mpi ] && mpi_launcher

# Every rank runs inside this shell, which tells the trial's pipe "pid RANK PID" when the
# program starts and "exit RANK STATUS" when it ends. Arguments: the pipe, the rank (empty:
# from the MPI launcher's environment), the command.
rank_shell='pipe=$1 rank=${2:-${OMPI_COMM_WORLD_RANK:-$PMI_RANK}}; shift 2
  "$@" & pid=$!
  echo "pid $rank $pid" > "$pipe"
  wait $pid; status=$?
  echo "exit $rank $status" > "$pipe"'

phase_names=(local header index_exchange merge scatter row_exchange total)
algorithms=(1 2 4 5)  # allgather, unique_allreduce, unique_allgather, owner_partitioned
survived=0
worst_ns=0

# Starts the trial's ranks. Sets: launched (the pids this script waits for).
launch_ranks() {
  local args=(--fault "$fault" --victim "$victim" --call "$call" --phase "$phase"
              --algorithm "$algo" --timeout-ms "$timeout_ms" --report "$dir")
  launched=()
  if [ "$launch" = mpi ]; then
    "${mpiexec[@]}" -np "$np" bash -c "$rank_shell" rank_shell "$dir/pipe" "" \
      "$prog" --launch mpi "${args[@]}" > "$dir/job.log" 2>&1 &
    launched+=($!)
    return
  fi
  local port r
  port=$("$prog" --free-port)
  for ((r = 0; r < np; ++r)); do
    # The shell's own stderr is dropped: it announces a rank killed by a signal.
    RANK=$r WORLD_SIZE=$np LOCAL_RANK=$r LOCAL_WORLD_SIZE=$np MASTER_ADDR=127.0.0.1 \
      MASTER_PORT=$port bash -c "$rank_shell" rank_shell "$dir/pipe" "$r" \
      "$prog" --launch env "${args[@]}" > "$dir/rank$r.log" 2> /dev/null &
    launched+=($!)
  done
}

# Reads the pipe until every rank in `must_end` has ended, or the give-up time. Sets pids[r]
# and statuses[r] (the statuses of ranks that ended by themselves).
await_ranks() {
  local deadline=$((SECONDS + give_up_s)) left r line="" chunk kind rank value
  while :; do
    left=0
    for r in $must_end; do [ -z "${statuses[$r]:-}" ] && left=1; done
    [ $left = 0 ] && return
    [ $SECONDS -ge $deadline ] && return
    # A read that times out keeps what it had of a line; the rest comes with the next one.
    if ! IFS= read -r -t 1 -u 3 chunk; then
      line+=$chunk
      continue
    fi
    read -r kind rank value <<< "$line$chunk"
    line=""
    [ "$kind" = pid ] && pids[rank]=$value
    [ "$kind" = exit ] && statuses[rank]=$value
  done
}

# Ends whatever still runs: the stopped victim, and any rank that did not end by itself.
end_trial() {
  local r
  [ -f "$dir/fault.txt" ] && kill -KILL "$(cut -d' ' -f2 "$dir/fault.txt")" 2> /dev/null
  for r in "${!pids[@]}"; do
    [ -z "${statuses[$r]:-}" ] && kill -KILL "${pids[$r]}" 2> /dev/null
  done
  wait "${launched[@]}" 2> /dev/null
}

# Judges one rank's report and status; appends to `detail`, sets `verdict` on the first
# failure and raises `worst_here`.
judge_rank() {
  local r=$1 f="$dir/rank$1.txt" code t_ns next_code ok_codes waited
  if [ ! -f "$f" ]; then
    [ "$verdict" = ok ] && verdict="rank $r did not report"
    return
  fi
  read -r code t_ns _ _ _ next_code _ < "$f"
  detail+=" r$r:$code/${statuses[$r]:--}"
  # zfcMismatch for an extra call; else zfcTimeout or zfcRemoteError (for a stopped rank,
  # a survivor may find that another survivor, which timed out first, has closed its
  # connection: that is a remote error too).
  ok_codes=" 7 8 "
  [ "$fault" = extra ] && ok_codes=" 3 "
  if [[ "$ok_codes" != *" $code "* ]]; then
    [ "$verdict" = ok ] && verdict="rank $r returned $(cut -d' ' -f3- "$f")"
  fi
  if [ "$fault" != extra ] && [ "$next_code" != 2 ]; then
    [ "$verdict" = ok ] && verdict="rank $r's next call returned $next_code, not zfcInvalidUsage"
  fi
  local expected_status=$code
  [ "$fault" = extra ] && expected_status=0
  if [ -z "${statuses[$r]:-}" ]; then
    [ "$verdict" = ok ] && verdict="rank $r did not end by itself within $give_up_s s"
  elif [ "${statuses[$r]}" != "$expected_status" ]; then
    [ "$verdict" = ok ] && verdict="rank $r ended with status ${statuses[$r]}, not $expected_status"
  fi
  if [ "$fault" = extra ]; then
    if ! grep -q "out of step: rank 0 is in collective #" "$f"; then
      [ "$verdict" = ok ] && verdict="rank $r's message names no sequence numbers"
    fi
  elif [ -n "$fault_ns" ]; then
    waited=$((t_ns - fault_ns))
    [ $waited -gt $worst_here ] && worst_here=$waited
  fi
}

judge_trial() {
  local r
  verdict=ok
  worst_here=0
  detail=""
  fault_ns=""
  [ -f "$dir/fault.txt" ] && fault_ns=$(cut -d' ' -f1 "$dir/fault.txt")
  if [ "$fault" != extra ] && [ -z "$fault_ns" ]; then verdict="the fault never fired"; fi
  for r in $must_end; do judge_rank "$r"; done
  if [ "$fault" = extra ] && [ "$(cut -d: -f2- "$dir"/rank*.txt | sort -u | wc -l)" != 1 ]; then
    [ "$verdict" = ok ] && verdict="the ranks' verdicts differ"  # the same text everywhere
  fi
  if [ "${FAULT_TRIALS_TIME_BOUND:-1}" = 1 ] && [ $worst_here -gt $bound_ns ] &&
     [ "$verdict" = ok ]; then
    verdict="took longer than timeout + 5 s"
  fi
}

for ((trial = 1; trial <= trials; ++trial)); do
  np=$((3 + trial % 2))
  victim=$((RANDOM % np))
  call=$((1 + RANDOM % 2))
  phase=$((RANDOM % 7))
  algo=${algorithms[$((RANDOM % 4))]}
  dir=$(mktemp -d)
  mkfifo "$dir/pipe"
  exec 3<> "$dir/pipe"  # read and write: no writer ever blocks, nor this reader on open
  # Who must report and end by itself: every rank for an extra call, else all but the victim.
  must_end=""
  for ((r = 0; r < np; ++r)); do
    [ "$fault" != extra ] && [ $r = "$victim" ] && continue
    must_end+=" $r"
  done
  pids=() statuses=()
  launch_ranks
  await_ranks
  end_trial
  exec 3<&-
  judge_trial
  [ $worst_here -gt $worst_ns ] && worst_ns=$worst_here
  where="phase ${phase_names[$phase]}"
  [ "$fault" = extra ] && where="before it"  # the extra collective precedes the call
  printf 'trial %d: np %d, rank %d, call %d, %s, algorithm %d:%s, %.2f s: %s\n' \
    "$trial" "$np" "$victim" "$call" "$where" "$algo" "$detail" \
    "$(awk -v n="$worst_here" 'BEGIN { print n / 1e9 }')" "$verdict"
  if [ "$verdict" = ok ]; then
    survived=$((survived + 1))
    rm -rf "$dir"
  else
    echo "  kept $dir"
    cat "$dir"/*.txt "$dir"/*.log 2> /dev/null | grep -v 'PMIX ERROR' | head -20 | sed 's/^/  /'
  fi
done
printf '%s %s: survived %d/%d, worst time to error %.2f s (timeout_ms %d)\n' "$launch" \
  "$fault" "$survived" "$trials" "$(awk -v n="$worst_ns" 'BEGIN { print n / 1e9 }')" \
  "$timeout_ms"
[ "$survived" = "$trials" ]
