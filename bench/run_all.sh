#!/usr/bin/env bash
# Runs every benchmark sweep of zipfcoll and writes the results as CSV and PNG plots, with a
# README that shows them, into docs/benchmarks/ (about 6 minutes on 2 cores):
#   - zfc_perf sparse: G in {1,2,4,8} ranks x K in {640,2560} x D in {512,1024}, on real text
#     windows and on a seeded Zipf stream, every algorithm and wire format;
#   - zfc_perf allreduce: 1 KiB to 64 MiB on 2, 4 and 8 ranks against MPI_Allreduce;
#   - zfc_heaps on every corpus directory given;
#   - zfc_kernel_bench (Google Benchmark), fastest of 3 repetitions.
#
# usage: bench/run_all.sh [--build DIR] [--out DIR] [--data DIR] [--quick]
#   --build DIR   the CMake build directory (build)
#   --out DIR     where results go (docs/benchmarks)
#   --data DIR    a directory holding the text corpora gutenberg/ and sotu/ (any directory
#                 of .txt files per corpus works; default: ../shared/data beside the source)
#   --quick       a small sweep (G in {1,2}, few steps) that checks the whole pipeline
# Exits 77 when no python3 with matplotlib is found.
set -euo pipefail

# Everything runs from the source root, so the records name paths relative to it.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="build"
out="docs/benchmarks"
data="../shared/data"
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    *) echo "run_all.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

for tool in zfc_perf zfc_heaps zfc_kernel_bench; do
  if [ ! -x "$build/bench/$tool" ]; then
    echo "run_all.sh: $build/bench/$tool not built (cmake --build $build)" >&2
    exit 1
  fi
done
# The plots need matplotlib; Debian's python3 has it from python3-matplotlib.
python=""
for p in /usr/bin/python3 python3; do
  if "$p" -c "import matplotlib, numpy" >/dev/null 2>&1; then python="$p"; break; fi
done
if [ -z "$python" ]; then
  echo "run_all.sh: no python3 with matplotlib and numpy (apt-get install python3-matplotlib)" >&2
  exit 77  # the tests' "skipped"
fi

mpirun=(mpirun --oversubscribe)
if [ "$(id -u)" = 0 ]; then mpirun+=(--allow-run-as-root); fi

raw="$out/raw"
rm -rf "$raw"
mkdir -p "$raw"
started=$(date +%s)
log() { echo "[$(( $(date +%s) - started ))s] $*"; }

if [ "$quick" = 1 ]; then
  ranks=(1 2); tokens=(640); dims=(64); steps=(-n 3 -w 1)
  ar_ranks=(2); ar_sizes=(-b 1K -e 1M -f 32 -n 3 -w 1)
  kernel_args=(--benchmark_min_time=0.01 "--benchmark_filter=N:1000/|rows:100$")
else
  ranks=(1 2 4 8); tokens=(640 2560); dims=(512 1024); steps=(-n 10 -w 2)
  ar_ranks=(2 4 8); ar_sizes=(-b 1K -e 64M -f 4 -n 10 -w 2)
  kernel_args=(--benchmark_min_time=0.1 --benchmark_repetitions=3)
fi

workloads=(zipf)
if [ -d "$data/gutenberg" ]; then
  workloads=(gutenberg zipf)
else
  log "no $data/gutenberg: real-text sweeps skipped"
fi

for w in "${workloads[@]}"; do
  if [ "$w" = zipf ]; then wargs=(--zipf 1.1,100000); else wargs=(--corpus "$data/$w" --vocab 100000); fi
  for g in "${ranks[@]}"; do
    for k in "${tokens[@]}"; do
      for d in "${dims[@]}"; do
        name="sparse_${w}_G${g}_K${k}_D${d}"
        log "$name"
        "${mpirun[@]}" -np "$g" "$build/bench/zfc_perf" sparse "${wargs[@]}" -K "$k" -D "$d" \
          "${steps[@]}" --json "$raw/$name.json" > "$raw/$name.txt"
      done
    done
  done
done

for g in "${ar_ranks[@]}"; do
  log "allreduce_G$g"
  "${mpirun[@]}" -np "$g" "$build/bench/zfc_perf" allreduce "${ar_sizes[@]}" \
    --json "$raw/allreduce_G$g.json" > "$raw/allreduce_G$g.txt"
done

for corpus in gutenberg sotu; do
  if [ -d "$data/$corpus" ]; then
    log "heaps_$corpus"
    "$build/bench/zfc_heaps" --corpus "$data/$corpus" --csv "$raw/heaps_$corpus.csv" \
      > "$raw/heaps_$corpus.txt"
  fi
done

log "kernels"
"$build/bench/zfc_kernel_bench" "${kernel_args[@]}" --benchmark_out="$raw/kernels.json" \
  --benchmark_out_format=json > "$raw/kernels.txt"

log "plots"
elapsed=$(( $(date +%s) - started ))
"$python" bench/plot_results.py --raw "$raw" --out "$out" --seconds "$elapsed" \
  --command "bench/run_all.sh$([ "$quick" = 1 ] && echo ' --quick')"
log "done: $out/README.md"
