#!/usr/bin/env bash
# The measurements behind docs/benchmarks/scale_model.md (about 4 minutes on 2 cores):
#   - zfc_perf sparse on real text (K = 640 and 2560, D = 512) and on a Zipf stream, G = 2,
#     3, 4 and 8, every algorithm, fp32 and fp16: owner_partitioned against the paper's
#     unique_allreduce, auto against the best fixed algorithm, and the cost model's
#     prediction of every row against its measured time;
#   - the same at G = 8 with nodes of 4 and of 2 ranks (--ranks-per-node), hierarchical too;
#   - a 98-symbol vocabulary (a character model), where dense_vocab should win;
#   - zfc_model from G = 8 to 4096 with the paper's compute time and with an H100's.
# Then bench/scale_report.py writes the CSV, the plot and the report.
#
# The zfc_perf runs use the pinned machine model of bench/pinned_model.txt (fitted by
# bench/fit_model.py), so that their predictions, auto's choices and the model's error are
# the same from run to run; --model measured lets each run measure its own instead.
#
# usage: bench/run_scale.sh [--build DIR] [--out DIR] [--data DIR] [--model pinned|measured]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="build"; out="docs/benchmarks"; data="../shared/data"; model="pinned"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    *) echo "run_scale.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
source bench/stamp.sh
python="$(plot_python)"
if [ -z "$python" ]; then echo "run_scale.sh: no python3 with matplotlib" >&2; exit 77; fi
if [ ! -d "$data/gutenberg" ]; then echo "run_scale.sh: no $data/gutenberg" >&2; exit 77; fi
mpirun=(mpirun --oversubscribe)
if [ "$(id -u)" = 0 ]; then mpirun+=(--allow-run-as-root); fi
case "$model" in
  pinned) export ZIPFCOLL_MACHINE_MODEL="$(grep -v '^#' bench/pinned_model.txt)"
          mpirun+=(-x ZIPFCOLL_MACHINE_MODEL) ;;
  measured) unset ZIPFCOLL_MACHINE_MODEL ;;
  *) echo "run_scale.sh: --model pinned or measured, not $model" >&2; exit 2 ;;
esac
raw="$out/raw_scale"
rm -rf "$raw"; mkdir -p "$raw"
perf() {  # perf NAME NP ARGS...
  local name="$1" np="$2"; shift 2
  echo "[$name]"
  "${mpirun[@]}" -np "$np" "$build/bench/zfc_perf" sparse -n 15 -w 3 --compression none,fp16 \
    -J "$raw/$name.json" "$@" > "$raw/$name.txt"
}
text=(--corpus "$data/gutenberg" --vocab 100000)
for g in 2 3 4 8; do
  perf "gutenberg_G${g}_K640" "$g" "${text[@]}" -K 640 -D 512 --algo all
  perf "gutenberg_G${g}_K2560" "$g" "${text[@]}" -K 2560 -D 512 --algo all
  perf "zipf_G${g}_K640" "$g" --zipf 1.1,100000 -K 640 -D 512 --algo all
done
for n in 4 2; do
  perf "gutenberg_G8_K640_nodes$n" 8 "${text[@]}" -K 640 -D 512 --algo all,hierarchical \
    --ranks-per-node "$n"
done
perf "chars_G4" 4 --zipf 0.5,98 -K 4000 -D 256 --algo all,dense_vocab
for setup in paper h100; do
  compute=55.7; [ "$setup" = h100 ] && compute=0.34
  echo "[model_$setup]"
  "$build/bench/zfc_model" --corpus "$data/gutenberg" --compute-ms "$compute" \
    > "$raw/model_$setup.txt"
done
"$python" bench/scale_report.py --raw "$raw" --out "$out"
# Run alone (not from bench/run_all.sh, which stamps what it ran), stamp the outputs here.
if [ -z "${ZIPFCOLL_BENCH_STAMP:-}" ]; then
  "$python" bench/stamp_outputs.py "$(bench_stamp bench/run_scale.sh --model "$model")" \
    "$raw"/* "$out/scale.csv" "$out/scale_report.txt"
fi
