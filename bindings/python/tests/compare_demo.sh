#!/usr/bin/env bash
# python -m zipfcoll.demo runs the steps zfc_demo runs: every exact figure (bytes, U_g,
# workspace, the algorithm auto chose, the identity verdict) must match; the times differ.
# What auto chooses follows the machine model, which each run would otherwise measure when
# its communicator is made: both runs are given the same model, so the auto row is exact.
# usage: compare_demo.sh ZFC_DEMO PYTHON MPIEXEC [MPIEXEC_ARGS...]   (the command line up to
# and including the rank count)
set -euo pipefail
demo="$1" python="$2"
shift 2
# The same run, the same options (nccl-tests' -n/-w names).
args=(-n 3 -w 1 -D 64 --windows 16 --vocab 20000)
export ZIPFCOLL_MACHINE_MODEL="intra=5:10,inter=5:10,local=10"
exact() {
  # Drop the two time columns (median step, speedup) of the table, keep everything else.
  sed -E 's/ +[0-9.]+ ms +[0-9.]+x//'
}
c_out="$("$@" "$demo" "${args[@]}")"
py_out="$("$@" "$python" -m zipfcoll.demo "${args[@]}")"
echo "$py_out"
if ! diff <(echo "$c_out" | exact) <(echo "$py_out" | exact); then
  echo "python -m zipfcoll.demo and zfc_demo differ (above: < zfc_demo, > python)"
  exit 1
fi
echo "python -m zipfcoll.demo and zfc_demo print the same figures"
