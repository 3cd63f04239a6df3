#!/usr/bin/env bash
# The measurements behind docs/benchmarks/fused.md (about 3 minutes on 2 cores): zfc_perf
# sparse --apply sgd on real text (K = 640, D = 512, V = 10^5), G = 2, 3, 4, 6 and 8, fp32 and
# fp16: a replicated table trained with SGD, by zfcSparseReduce then zfcApplyUpdate
# (allgather baseline, owner_partitioned, key_routed) against the fused, streamed
# zfcSparseReduceApply, the routed exchanges direct (ZIPFCOLL_ROUTE=direct, so that the bytes
# do not follow the measured machine model); and zfc_model's projection of the same step to
# 4096 ranks, each exchange routed as the cost model chooses. Then
# bench/fused_report.py writes the page, checking the workspace targets against the raw
# outputs.
#
# usage: bench/run_fused.sh [--build DIR] [--out DIR] [--data DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="build"; out="docs/benchmarks"; data="../shared/data"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    *) echo "run_fused.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ ! -d "$data/gutenberg" ]; then echo "run_fused.sh: no $data/gutenberg" >&2; exit 77; fi
mpirun=(mpirun --oversubscribe)
if [ "$(id -u)" = 0 ]; then mpirun+=(--allow-run-as-root); fi
raw="$out/raw_fused"
rm -rf "$raw"; mkdir -p "$raw"
for g in 2 3 4 6 8; do
  name="gutenberg_G${g}_K640"
  echo "[$name]"
  "${mpirun[@]}" -np "$g" -x ZIPFCOLL_ROUTE=direct "$build/bench/zfc_perf" sparse --apply sgd \
    -n 10 -w 2 \
    --compression none,fp16 --corpus "$data/gutenberg" --vocab 100000 -K 640 -D 512 \
    -J "$raw/$name.json" > "$raw/$name.txt"
done
echo "[zfc_model]"
"$build/bench/zfc_model" --corpus "$data/gutenberg" --ranks 2,4,8,64,512,4096 \
  -J "$raw/model.jsonl" > "$raw/model.txt"
# Stamped here (with bench/run_all.sh's stamp when it runs this), before the report quotes it.
source bench/stamp.sh
stamp="${ZIPFCOLL_BENCH_STAMP:-$(bench_stamp bench/run_fused.sh)}"
python3 bench/stamp_outputs.py "$stamp" "$raw"/*
python3 bench/fused_report.py --raw "$raw" --out "$out/fused.md"
