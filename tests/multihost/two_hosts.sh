#!/usr/bin/env bash
# Two hosts on one machine: two network namespaces, each with its own host name, joined by a
# veth pair (10.77.0.1 and 10.77.0.2), with ranks started in each. Skips (77) where
# namespaces cannot be made (not root, no iproute2).
#
# usage: two_hosts.sh ucx PROGRAM [RANKS_PER_HOST]
#   ranks started as plain processes (torchrun-style variables) over UCX on TCP; PROGRAM is
#   tests/ucx's test program: it must pass and print the same result hash as the same ranks
#   on one host.
# usage: two_hosts.sh torchrun PROGRAM RANKS_PER_HOST PYTHON [ARGS...]
#   each host's ranks started by a real torchrun (PYTHON's torch.distributed.run,
#   --nnodes=2), whose agent on host A serves the store the ranks meet through. Without ARGS,
#   PROGRAM is tests/ucx's test program, checked as for ucx; with them, PROGRAM ARGS (the
#   trainer) must end well on every rank and print one world of all the ranks ("N ranks").
#   Skips (77) where PYTHON has no torch.
# usage: two_hosts.sh mpi ZFC_PERF [RANKS_PER_HOST]
#   mpirun across the two hosts (its remote launcher enters the other namespace), over MPI on
#   TCP and over UCX on TCP in one run of zfc_perf sparse -c 1, whose results must equal the
#   reference every rank computes, bit for bit, as on one host.
set -u
mode="$1"
prog="$2"
per_host="${3:-2}"
world=$((2 * per_host))
python="${4:-python3}"
program_args=("${@:5}")
for ((i = 0; i + 1 < ${#program_args[@]}; ++i)); do
  if [ "${program_args[$i]}" = --corpus ] && [ ! -d "${program_args[$((i + 1))]}" ]; then
    echo "two_hosts.sh: no corpus at '${program_args[$((i + 1))]}': skipped"
    exit 77
  fi
done
if [ "$mode" = torchrun ] && ! "$python" -c 'import torch.distributed.run' 2> /dev/null; then
  echo "two_hosts.sh: $python has no torch (pip install torch): skipped"
  exit 77
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
a="zfca$$"
b="zfcb$$"
if ! command -v ip >/dev/null || ! command -v unshare >/dev/null ||
   ! ip netns add "$a" 2>/dev/null; then
  echo "two_hosts.sh: cannot create network namespaces here (root, iproute2, unshare): skipped"
  exit 77
fi
work="$(mktemp -d)"
cleanup() {
  ip netns del "$a" 2>/dev/null
  ip netns del "$b" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$b"
ip link add "v$a" type veth peer name "v$b"
ip link set "v$a" netns "$a"
ip link set "v$b" netns "$b"
ip -n "$a" addr add 10.77.0.1/24 dev "v$a"
ip -n "$b" addr add 10.77.0.2/24 dev "v$b"
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
ip -n "$a" link set "v$a" up
ip -n "$b" link set "v$b" up

if [ "$mode" = mpi ]; then
  # mpirun runs on host A; its remote launcher runs a command on host B by entering B's
  # namespace under B's host name.
  cat >"$work/enter_host.sh" <<AGENT
#!/bin/sh
shift  # the host (always B here)
exec ip netns exec "$b" unshare --uts sh -c "hostname host-b; \$*"
AGENT
  chmod +x "$work/enter_host.sh"
  root=""
  if [ "$(id -u)" = 0 ]; then root="--allow-run-as-root"; fi
  ip netns exec "$a" unshare --uts sh -c "hostname host-a && \
    ZIPFCOLL_SOCKET_ADDR=10.77.0.1 UCX_TLS=tcp,self mpirun $root --oversubscribe \
    -x ZIPFCOLL_SOCKET_ADDR -x UCX_TLS --mca plm_rsh_agent $work/enter_host.sh \
    --mca oob_tcp_if_include 10.77.0.0/24 --mca btl tcp,self \
    --mca btl_tcp_if_include 10.77.0.0/24 -H 10.77.0.1:$per_host,10.77.0.2:$per_host \
    -np $world '$prog' sparse --zipf 1.1,20000 -K 320 -D 32 -n 3 -w 1 -c 1 \
    --algo allgather,unique_allreduce,owner_partitioned,hierarchical --compression none,fp16 \
    --transport mpi,ucx" 2>&1 | tee "$work/out"
  if grep -q "Out of bounds values : 0 OK" "$work/out"; then
    echo "two_hosts.sh: identical results on one host and on two (MPI and UCX over TCP)"
    exit 0
  fi
  echo "two_hosts.sh: the two-host run failed or differs from the reference"
  exit 1
fi

# Each host's agent: torchrun --nnodes=2, the store on host A.
start_torchrun() {  # start_torchrun PORT PROGRAM [ARGS...]
  local port="$1" node ns host
  shift
  for node in 0 1; do
    if ((node == 0)); then ns="$a" host=host-a; else ns="$b" host=host-b; fi
    ip netns exec "$ns" unshare --uts sh -c "hostname $host && exec env UCX_TLS=tcp,self \
      OMP_NUM_THREADS=1 '$python' -m torch.distributed.run --nnodes=2 --node-rank=$node \
      --nproc-per-node=$per_host --master-addr=10.77.0.1 --master-port=$port --no-python \
      $(printf "'%s' " "$@")" >>"$work/out" 2>&1 &
    pids+=($!)
  done
}
free_port='import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'

if [ "$mode" = torchrun ] && [ ${#program_args[@]} -gt 0 ]; then
  pids=()
  start_torchrun "$("$python" -c "$free_port")" "$prog" "${program_args[@]}"
  status=0
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  cat "$work/out"
  worlds="$(grep -c ": $world ranks" "$work/out")"
  if [ "$status" != 0 ] || [ "$worlds" != 1 ]; then
    echo "two_hosts.sh: exit status $status, $worlds lines with '$world ranks' (want 0 and 1)"
    exit 1
  fi
  echo "two_hosts.sh: torchrun on two hosts made one $world-rank world"
  exit 0
fi

# ucx and torchrun: the reference is the same ranks on one host.
# One host standing in for two: nodes of per_host ranks, so sums run in the same order.
single="$(ZIPFCOLL_TEST_RANKS_PER_NODE=$per_host \
  bash "$here/../ucx/launch_ranks.sh" "$world" "$prog" "$prog" 2>&1)" || {
  echo "$single"
  echo "two_hosts.sh: the single-host run failed"
  exit 1
}
want="$(grep -o 'result hash: [0-9a-f]*' <<<"$single")"
port="$("$prog" --free-port)"
pids=()
if [ "$mode" = torchrun ]; then
  start_torchrun "$port" "$prog"
  world=0  # no plain processes
fi
for ((r = 0; r < world; ++r)); do
  if ((r < per_host)); then ns="$a" host=host-a; else ns="$b" host=host-b; fi
  ip netns exec "$ns" unshare --uts sh -c "hostname $host && exec env RANK=$r \
    WORLD_SIZE=$world LOCAL_RANK=$((r % per_host)) LOCAL_WORLD_SIZE=$per_host \
    MASTER_ADDR=10.77.0.1 MASTER_PORT=$port UCX_TLS=tcp,self '$prog'" >>"$work/out" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
cat "$work/out"
got="$(grep -o 'result hash: [0-9a-f]*' "$work/out")"
if [ "$status" != 0 ]; then
  echo "two_hosts.sh: a rank failed on two hosts"
  exit 1
fi
echo "single host: $want; two hosts: $got"
if [ -z "$want" ] || [ "$want" != "$got" ]; then
  echo "two_hosts.sh: the two-host result differs from the single-host one"
  exit 1
fi
echo "two_hosts.sh: identical results on one host and on two"
