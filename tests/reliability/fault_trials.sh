#!/usr/bin/env bash
# Fault trials: ranks run fused sparse reduces while one rank is SIGKILLed, SIGSTOPped, ends
# its process mid-call, or calls an extra collective, at a random phase of a random call
# (tests/reliability/fault_trial.cpp). Each trial passes when every surviving rank returns
# the right error within timeout + 5 s of the fault, or, under mpirun for a dead rank, when
# the job ends with a non-zero status within that bound (Open MPI tears a job down when
# one of its processes dies).
#
# usage: fault_trials.sh PROGRAM mpi|ucx kill|stop|exit|extra TRIALS [TIMEOUT_MS] [SEED]
#   MPIEXEC overrides the mpirun command line (default: mpirun, with --oversubscribe and,
#   as root, --allow-run-as-root). Trials alternate between 3 and 4 ranks.
# Prints one line per trial and a summary: "survived N/M, worst time to error S s".
# FAULT_TRIALS_TIME_BOUND=0 reports the times without holding them to the bound (as ctest
# runs it: a loaded machine can make any bound fail; a hang still fails, by give-up time).
set -u
prog="$1" launch="$2" fault="$3" trials="$4" timeout_ms="${5:-2000}" seed="${6:-$$}"
RANDOM=$seed
bound_ns=$(( (timeout_ms + 5000) * 1000000 ))
if [ -n "${MPIEXEC:-}" ]; then
  read -r -a mpiexec <<< "$MPIEXEC"
else
  mpiexec=(mpirun --oversubscribe)
  [ "$(id -u)" = 0 ] && mpiexec+=(--allow-run-as-root)
fi
phase_names=(local header index_exchange merge scatter row_exchange total)
algorithms=(1 2 4 5)  # allgather, unique_allreduce, unique_allgather, owner_partitioned
now_ns() { date +%s%N; }  # only to bound the wait; times to error use the ranks' clock
mono_ns() { "$prog" --now; }  # the ranks' steady clock, for the end of an mpirun job

survived=0
worst_ns=0
for ((trial = 1; trial <= trials; ++trial)); do
  np=$((3 + trial % 2))
  victim=$((RANDOM % np))
  call=$((1 + RANDOM % 2))
  phase=$((RANDOM % 7))
  algo=${algorithms[$((RANDOM % 4))]}
  dir=$(mktemp -d)
  args=(--fault "$fault" --victim "$victim" --call "$call" --phase "$phase"
        --algorithm "$algo" --timeout-ms "$timeout_ms" --report "$dir")
  pids=()
  if [ "$launch" = mpi ]; then
    "${mpiexec[@]}" -np "$np" "$prog" --launch mpi "${args[@]}" > "$dir/job.log" 2>&1 &
    pids+=($!)
  else
    port=$("$prog" --free-port)
    for ((r = 0; r < np; ++r)); do
      # In a subshell whose own stderr is dropped: it announces a rank killed by a signal.
      (RANK=$r WORLD_SIZE=$np LOCAL_RANK=$r LOCAL_WORLD_SIZE=$np MASTER_ADDR=127.0.0.1 \
        MASTER_PORT=$port "$prog" --launch env "${args[@]}" > "$dir/rank$r.log" 2>&1
       exit $?) 2> /dev/null &
      pids+=($!)
    done
  fi
  # Who must report: every rank for an extra call, else every rank but the victim.
  expect=$np
  [ "$fault" != extra ] && expect=$((np - 1))
  give_up=$(( $(now_ns) + (timeout_ms + 60000) * 1000000 ))
  job_end=""
  while :; do
    reported=$(ls "$dir" | grep -c '^rank[0-9]*\.txt$')
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2> /dev/null && alive=1; done
    if [ "$launch" = mpi ] && [ $alive = 0 ] && [ -z "$job_end" ]; then job_end=$(mono_ns); fi
    [ "$reported" -ge "$expect" ] && break
    [ $alive = 0 ] && break
    [ "$(now_ns)" -gt "$give_up" ] && break
    sleep 0.05
  done
  # A stopped victim is killed, then the job is ended and its status collected.
  [ -f "$dir/fault.txt" ] && kill -KILL "$(cut -d' ' -f2 "$dir/fault.txt")" 2> /dev/null
  if [ "$launch" = mpi ] && [ "$reported" -ge "$expect" ] && [ "$fault" != extra ]; then
    kill -TERM "${pids[0]}" 2> /dev/null
  fi
  statuses=()
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null; statuses+=($?); done
  [ "$launch" = mpi ] && [ -z "$job_end" ] && job_end=$(mono_ns)

  verdict=ok
  worst_here=0
  detail=""
  fault_ns=""
  [ -f "$dir/fault.txt" ] && fault_ns=$(cut -d' ' -f1 "$dir/fault.txt")
  if [ "$fault" != extra ] && [ -z "$fault_ns" ]; then verdict="the fault never fired"; fi
  for ((r = 0; r < np; ++r)); do
    [ "$fault" != extra ] && [ $r = "$victim" ] && continue
    f="$dir/rank$r.txt"
    if [ ! -f "$f" ]; then
      # Under mpirun a dead rank takes the job down: survivors may not get to report.
      if [ "$launch" = mpi ] && { [ "$fault" = kill ] || [ "$fault" = exit ]; }; then continue; fi
      [ "$verdict" = ok ] && verdict="rank $r did not report"
      continue
    fi
    read -r code t_ns _ _ _ then _ < "$f"
    detail+=" r$r:$code"
    # zfcMismatch for an extra call; else zfcTimeout or zfcRemoteError (for a stopped rank,
    # a survivor may find that another survivor, which timed out first, has closed its
    # connection: that is a remote error too).
    ok_codes=" 7 8 "
    [ "$fault" = extra ] && ok_codes=" 3 "
    if [[ "$ok_codes" != *" $code "* ]]; then
      [ "$verdict" = ok ] && verdict="rank $r returned $(cut -d' ' -f3- "$f")"
    fi
    if [ "$fault" != extra ] && [ "$then" != 2 ]; then
      [ "$verdict" = ok ] && verdict="rank $r's next call returned $then, not zfcInvalidUsage"
    fi
    if [ "$fault" = extra ]; then
      if ! grep -q "out of step: rank 0 is in collective #" "$f"; then
        [ "$verdict" = ok ] && verdict="rank $r's message names no sequence numbers"
      fi
    elif [ -n "$fault_ns" ]; then
      waited=$((t_ns - fault_ns))
      [ $waited -gt $worst_here ] && worst_here=$waited
    fi
  done
  if [ "$fault" = extra ]; then
    if [ "$(cut -d: -f2- "$dir"/rank*.txt | sort -u | wc -l)" != 1 ]; then  # same text
      [ "$verdict" = ok ] && verdict="the ranks' verdicts differ"
    fi
    for s in "${statuses[@]}"; do
      [ "$s" != 0 ] && [ "$verdict" = ok ] && verdict="a rank exited with status $s"
    done
  fi
  if [ "$launch" = mpi ] && { [ "$fault" = kill ] || [ "$fault" = exit ]; } &&
     [ -n "$fault_ns" ]; then
    [ "${statuses[0]}" = 0 ] && [ "$verdict" = ok ] && verdict="mpirun exited with status 0"
    waited=$((job_end - fault_ns))
    [ $waited -gt $worst_here ] && worst_here=$waited
    detail+=" mpirun:${statuses[0]}"
  fi
  if [ "${FAULT_TRIALS_TIME_BOUND:-1}" = 1 ] && [ $worst_here -gt $bound_ns ] &&
     [ "$verdict" = ok ]; then
    verdict="took longer than timeout + 5 s"
  fi
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
    echo "  kept $dir"; cat "$dir"/*.txt "$dir"/*.log 2> /dev/null | head -20 | sed 's/^/  /'
  fi
done
printf '%s %s: survived %d/%d, worst time to error %.2f s (timeout_ms %d)\n' "$launch" \
  "$fault" "$survived" "$trials" "$(awk -v n="$worst_ns" 'BEGIN { print n / 1e9 }')" \
  "$timeout_ms"
[ "$survived" = "$trials" ]
