#!/usr/bin/env bash
# Programs started by a real torchrun (torch.distributed.run from the PyPI torch package, run
# by PYTHON), one host, its own free port (--standalone). Skips (77) where torch is missing.
#
# usage: torchrun_launch.sh PYTHON world N TEST_PROGRAM
#   zfc_ucx_tests's ranks under torchrun: they pass, as one N-rank world, and print the same
#   result hash as the same ranks started as plain processes (tests/ucx/launch_ranks.sh).
# usage: torchrun_launch.sh PYTHON joins N PROGRAM [ARGS...]
#   PROGRAM runs to the end (exit 0) and prints its world once: "N ranks".
# usage: torchrun_launch.sh PYTHON refuses N PROGRAM [ARGS...]
#   every rank of PROGRAM exits with status 2 and says it was started by a launcher other
#   than mpirun (each rank's status is read on its own).
set -u
python="$1" mode="$2" n="$3" prog="$4"
shift 4
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! "$python" -c 'import torch.distributed.run' 2> /dev/null; then
  echo "torchrun_launch.sh: $python has no torch (pip install torch): skipped"
  exit 77
fi
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
torchrun() {
  # OMP_NUM_THREADS set, so that torchrun does not print its warning about it.
  OMP_NUM_THREADS=1 "$python" -m torch.distributed.run --standalone --nproc-per-node="$n" \
    --no-python "$@"
}
case "$mode" in
  world)
    want="$(bash "$here/../ucx/launch_ranks.sh" "$n" "$prog" "$prog" 2>&1)" || {
      echo "$want"; echo "torchrun_launch.sh: the plain-process run failed"; exit 1; }
    want="$(grep -o 'result hash: [0-9a-f]*' <<<"$want")"
    torchrun "$prog" > "$out" 2>&1
    rc=$?
    cat "$out"
    got="$(grep -o 'result hash: [0-9a-f]*' "$out")"
    echo "plain processes: $want; torchrun: $got"
    if [ "$rc" != 0 ] || [ -z "$want" ] || [ "$want" != "$got" ]; then
      echo "torchrun_launch.sh: the torchrun run failed (exit $rc) or differs"
      exit 1
    fi
    echo "torchrun_launch.sh: one $n-rank world, the same result as plain processes"
    ;;
  joins)
    args=("$@")
    for ((i = 0; i + 1 < ${#args[@]}; ++i)); do
      if [ "${args[$i]}" = --corpus ] && [ ! -d "${args[$((i + 1))]}" ]; then
        echo "torchrun_launch.sh: no corpus at '${args[$((i + 1))]}': skipped"
        exit 77
      fi
    done
    torchrun "$prog" "$@" > "$out" 2>&1
    rc=$?
    cat "$out"
    worlds="$(grep -c ": $n ranks" "$out")"
    if [ "$rc" != 0 ] || [ "$worlds" != 1 ]; then
      echo "torchrun_launch.sh: exit $rc, $worlds lines with '$n ranks' (want exit 0 and 1)"
      exit 1
    fi
    echo "torchrun_launch.sh: joined as one $n-rank world"
    ;;
  refuses)
    # Each rank runs under a shell that reports its exit status and exits 0: torchrun stops
    # the other workers as soon as one fails, which would cut short a rank still starting.
    # The ranks of an MPI program start as singletons, each making Open MPI's session
    # directory: started at once they race to create the same top folder and one may fail
    # ("File exists") before it can refuse. Each rank gets a session folder of its own.
    sessions="$(mktemp -d)"
    trap 'rm -f "$out"; rm -rf "$sessions"' EXIT
    torchrun sh -c 'd="$0/rank$RANK"; mkdir -p "$d"; shift_prog="$1"; shift
      OMPI_MCA_orte_tmpdir_base="$d" "$shift_prog" "$@"
      echo "torchrun_launch: rank $RANK exit $?"' "$sessions" "$prog" "$@" > "$out" 2>&1
    rc=$?
    cat "$out"
    # Occurrences, not lines, and each rank's own status: lines of ranks sharing one stream
    # may run together.
    said="$(grep -o "by a launcher other than mpirun" "$out" | wc -l)"
    refused=0
    for r in $(seq 0 $((n - 1))); do
      if grep -q "torchrun_launch: rank $r exit 2\b" "$out"; then refused=$((refused + 1)); fi
    done
    if [ "$rc" != 0 ] || [ "$said" != "$n" ] || [ "$refused" != "$n" ]; then
      echo "torchrun_launch.sh: torchrun exit $rc; $said of $n ranks said why and $refused" \
        "exited with status 2 (want every rank)"
      exit 1
    fi
    echo "torchrun_launch.sh: every rank refused the launch"
    ;;
  *) echo "torchrun_launch.sh: unknown mode $mode"; exit 2 ;;
esac
