#!/usr/bin/env bash
# The measurements behind docs/benchmarks/sharded.md (about 3 minutes on 2 cores): zfc_perf
# sharded on real text (K = 640, D = 512, V = 10^5), G = 2, 3, 4 and 8, fp32 and fp16: a
# table trained with SGD, replicated (allgather baseline, owner_partitioned) against sharded
# by rows, the routed exchanges direct (ZIPFCOLL_ROUTE=direct), and at G = 8 once more
# forwarded; and zfc_model's projection of replicated, fused and sharded steps to 4096 ranks,
# each exchange routed as the cost model chooses.
# Then bench/sharded_report.py writes the page and its plot (sharded_vs_G.png), checking the
# targets of bytes, table memory and projected efficiency against the raw outputs.
#
# usage: bench/run_sharded.sh [--build DIR] [--out DIR] [--data DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="build"; out="docs/benchmarks"; data="../shared/data"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    *) echo "run_sharded.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
source bench/stamp.sh
python="$(plot_python)"
if [ -z "$python" ]; then echo "run_sharded.sh: no python3 with matplotlib" >&2; exit 77; fi
if [ ! -d "$data/gutenberg" ]; then echo "run_sharded.sh: no $data/gutenberg" >&2; exit 77; fi
mpirun=(mpirun --oversubscribe)
if [ "$(id -u)" = 0 ]; then mpirun+=(--allow-run-as-root); fi
raw="$out/raw_sharded"
rm -rf "$raw"; mkdir -p "$raw"
for g in 2 3 4 8; do
  name="gutenberg_G${g}_K640"
  echo "[$name]"
  "${mpirun[@]}" -np "$g" -x ZIPFCOLL_ROUTE=direct "$build/bench/zfc_perf" sharded -n 10 -w 2 \
    --compression none,fp16 --corpus "$data/gutenberg" --vocab 100000 -K 640 -D 512 \
    -J "$raw/$name.json" > "$raw/$name.txt"
done
# The same step at G = 8 with every routed exchange forwarded: its relays, measured.
echo "[forwarded_G8_K640]"
"${mpirun[@]}" -np 8 -x ZIPFCOLL_ROUTE=forwarded "$build/bench/zfc_perf" sharded -n 10 -w 2 \
  --compression none,fp16 --corpus "$data/gutenberg" --vocab 100000 -K 640 -D 512 \
  -J "$raw/forwarded_G8_K640.json" > "$raw/forwarded_G8_K640.txt"
echo "[zfc_model]"
"$build/bench/zfc_model" --corpus "$data/gutenberg" --ranks 8,16,64,256,1024,4096 \
  -J "$raw/model.jsonl" > "$raw/model.txt"
# Stamped here (with bench/run_all.sh's stamp when it runs this), before the report quotes it.
stamp="${ZIPFCOLL_BENCH_STAMP:-$(bench_stamp bench/run_sharded.sh)}"
"$python" bench/stamp_outputs.py "$stamp" "$raw"/*
"$python" bench/sharded_report.py --raw "$raw" --out "$out/sharded.md"
