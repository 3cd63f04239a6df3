#!/usr/bin/env bash
# Starts N copies of a program as the ranks of one run, the way torchrun does: no mpirun,
# only RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT. Fails
# when any rank fails.
#
# usage: launch_ranks.sh N PORT_PROGRAM PROGRAM [ARGS...]
#   PORT_PROGRAM prints a free TCP port (the test program's --free-port mode)
set -u
n="$1"
port_cmd="$2"
shift 2
port="$("$port_cmd" --free-port)" || { echo "launch_ranks.sh: no free port" >&2; exit 1; }
pids=()
for ((r = 0; r < n; ++r)); do
  RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r LOCAL_WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=$port "$@" &
  pids+=($!)
done
status=0
for ((r = 0; r < n; ++r)); do
  if ! wait "${pids[$r]}"; then
    echo "launch_ranks.sh: rank $r failed" >&2
    status=1
  fi
done
exit $status
