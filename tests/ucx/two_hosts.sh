#!/usr/bin/env bash
# Two hosts on one machine: two network namespaces, each with its own host name, joined by a
# veth pair (10.77.0.1 and 10.77.0.2), and N ranks started in each over UCX on TCP. The run
# must pass the same checks as on one host and print the same result hash as a single-host
# run of the same ranks. Skips (77) where namespaces cannot be made (not root, no iproute2).
#
# usage: two_hosts.sh PROGRAM [RANKS_PER_HOST]
set -u
prog="$1"
per_host="${2:-2}"
world=$((2 * per_host))
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
a="zfca$$"
b="zfcb$$"
if ! command -v ip >/dev/null || ! command -v unshare >/dev/null ||
   ! ip netns add "$a" 2>/dev/null; then
  echo "two_hosts.sh: cannot create network namespaces here (root, iproute2, unshare): skipped"
  exit 77
fi
cleanup() { ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null; }
trap cleanup EXIT
ip netns add "$b"
ip link add "v$a" type veth peer name "v$b"
ip link set "v$a" netns "$a"
ip link set "v$b" netns "$b"
ip -n "$a" addr add 10.77.0.1/24 dev "v$a"
ip -n "$b" addr add 10.77.0.2/24 dev "v$b"
for ns in "$a" "$b"; do
  ip -n "$ns" link set lo up
done
ip -n "$a" link set "v$a" up
ip -n "$b" link set "v$b" up

# The reference: the same ranks on one host.
single="$(bash "$here/launch_ranks.sh" "$world" "$prog" "$prog" 2>&1)" || {
  echo "$single"
  echo "two_hosts.sh: the single-host run failed"
  exit 1
}
want="$(grep -o 'result hash: [0-9a-f]*' <<<"$single")"

port="$("$prog" --free-port)"
out="$(mktemp)"
pids=()
for ((r = 0; r < world; ++r)); do
  if ((r < per_host)); then ns="$a" host=host-a dev="v$a"; else ns="$b" host=host-b dev="v$b"; fi
  ip netns exec "$ns" unshare --uts sh -c "hostname $host && exec env RANK=$r \
    WORLD_SIZE=$world LOCAL_RANK=$((r % per_host)) LOCAL_WORLD_SIZE=$per_host \
    MASTER_ADDR=10.77.0.1 MASTER_PORT=$port UCX_TLS=tcp,self UCX_NET_DEVICES=$dev \
    \"$prog\"" >>"$out" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
cat "$out"
got="$(grep -o 'result hash: [0-9a-f]*' "$out")"
rm -f "$out"
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
