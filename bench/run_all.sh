#!/usr/bin/env bash
# Runs every benchmark of zipfcoll and writes every table, CSV and plot under
# docs/benchmarks/ (the wall time of its last run is in docs/benchmarks/README.md):
#   - zfc_perf sparse: G in {1,2,4,8} ranks x K in {640,2560} x D in {512,1024}, on real text
#     windows and on a seeded Zipf stream, every algorithm (owner_partitioned and auto
#     included) and wire format                                  -> README.md, sparse.csv
#   - zfc_perf allreduce: 1 KiB to 64 MiB on 2, 4 and 8 ranks against MPI_Allreduce
#   - zfc_heaps on every corpus directory given; zfc_kernel_bench, fastest of 3 repetitions
#   - zfc_demo on 8 ranks at K = 640 and 2560 on real text       -> docs/algorithms.md
#   - the same sparse steps over MPI and over UCX in one run       -> transports.md
#   - sampled-softmax candidates in 1, 2, 4 and 8 seed groups      -> seed_groups.md
#   - bench/run_scale.sh: G = 2..8, nodes (hierarchical), a character vocabulary
#     (dense_vocab), the cost model against measurement, zfc_model to 4096 ranks
#                                                                  -> scale_model.md
#   - bench/run_sharded.sh: replicated against sharded tables, G = 2..8 -> sharded.md
#   - bench/run_fused.sh: fused, streamed updates of replicated tables, G = 2..8 -> fused.md
#   - bench/trainer/run_trainer.sh: the example trainer's throughput, grouped and sharded
#     runs and equal-step validation runs                          -> trainer/report.md
#   - bench/run_torch.sh: PyTorch's word LM under torchrun, DDP over gloo against DDP
#     with zipfcoll's hook and a ShardedEmbedding, fp32 and fp16     -> torch.md
#   - the reliability records docs/reliability.md quotes: 50 fault trials of each kind over
#     each transport, the abort/re-init counts, and (with --fuzz-build) the fuzz runs
#                                                   -> reliability/
# bench/check_pages.py (ctest docs_pages_current) then checks that every page is what its
# generator makes of these raw outputs and names this version.
# Every raw output is stamped with the version, the commit and this command
# (bench/stamp_outputs.py), and every page names the raw files its numbers come from.
#
# usage: bench/run_all.sh [--build DIR] [--out DIR] [--data DIR] [--quick]
#                         [--trainer-steps N] [--no-trainer] [--no-reliability]
#                         [--fuzz-build DIR]
#   --build DIR        the CMake build directory (build)
#   --out DIR          where results go (docs/benchmarks)
#   --data DIR         a directory holding the text corpora gutenberg/ and sotu/ (any
#                      directory of .txt files per corpus works; default: ../shared/data)
#   --quick            a small sweep (G in {1,2}, few steps, no scale or trainer runs) that
#                      checks the whole pipeline
#   --trainer-steps N  steps of each trainer validation run (600)
#   --no-trainer       leave the trainer's figures as they are
#   --no-reliability   leave the fault trial and re-init records as they are
#   --fuzz-build DIR   a clang build with sanitizers and fuzzers (tests/fuzz/run_fuzzers.sh)
#                      whose fuzz targets run 250000 times each; without it the fuzz record
#                      is left as it is
# Exits 77 when no python3 with matplotlib is found.
set -euo pipefail

# Everything runs from the source root, so the records name paths relative to it.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="build"
out="docs/benchmarks"
data="../shared/data"
quick=0
trainer_steps=600
trainer=1
reliability=1
fuzz_build=""
invocation="bench/run_all.sh${*:+ $*}"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    --trainer-steps) trainer_steps="$2"; shift 2 ;;
    --no-trainer) trainer=0; shift ;;
    --no-reliability) reliability=0; shift ;;
    --fuzz-build) fuzz_build="$2"; shift 2 ;;
    *) echo "run_all.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

for tool in zfc_perf zfc_heaps zfc_kernel_bench zfc_demo; do
  if [ ! -x "$build/bench/$tool" ]; then
    echo "run_all.sh: $build/bench/$tool not built (cmake --build $build)" >&2
    exit 1
  fi
done
# The reliability records need two test programs; found missing only after the benchmarks, the
# run would have replaced the committed records with failures.
if [ "$quick" = 0 ] && [ "$reliability" = 1 ]; then
  for program in zfc_fault_trial mpi_reinit; do
    if [ ! -x "$build/tests/$program" ]; then
      echo "run_all.sh: $build/tests/$program not built (or give --no-reliability)" >&2
      exit 1
    fi
  done
fi
if [ -n "$fuzz_build" ] && [ ! -x "$fuzz_build/tests/fuzz/fuzz_kernels" ]; then
  echo "run_all.sh: no fuzz targets in $fuzz_build (tests/fuzz/run_fuzzers.sh says how to build them)" >&2
  exit 1
fi
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

# What made these outputs (bench/stamp.sh).
source bench/stamp.sh
stamp="$(bench_stamp "$invocation")"
export ZIPFCOLL_BENCH_STAMP="$stamp"  # for the reports that run_scale.sh and run_trainer.sh make

raw="$out/raw"
# --no-trainer keeps the trainer's figures, so also the log of the run that made them.
kept_trainer_log=""
if [ "$trainer" = 0 ] && [ -f "$raw/run_trainer.log" ]; then
  kept_trainer_log="$(mktemp)"
  cp "$raw/run_trainer.log" "$kept_trainer_log"
fi
rm -rf "$raw"
mkdir -p "$raw"
if [ -n "$kept_trainer_log" ]; then mv "$kept_trainer_log" "$raw/run_trainer.log"; fi
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
        # The eight-bit wires beside the others where their targets are judged.
        wires=()
        if [ "$g" = 8 ] && [ "$d" = 512 ]; then
          wires=(--compression none,fp16,bf16,fp8_e4m3,fp8_e5m2,int8,int8_sr)
        fi
        "${mpirun[@]}" -np "$g" "$build/bench/zfc_perf" sparse "${wargs[@]}" -K "$k" -D "$d" \
          "${steps[@]}" "${wires[@]}" -J "$raw/$name.json" > "$raw/$name.txt"
      done
    done
  done
done

for g in "${ar_ranks[@]}"; do
  log "allreduce_G$g"
  "${mpirun[@]}" -np "$g" "$build/bench/zfc_perf" allreduce "${ar_sizes[@]}" \
    -J "$raw/allreduce_G$g.json" > "$raw/allreduce_G$g.txt"
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

# The same steps over both transports of this machine, and the seed groups of sampled
# softmax, on real text (a Zipf stream without it).
if [ "$quick" = 1 ]; then
  tr_ranks=(2); tr_args=(-K 640 -D 64 -n 3 -w 1); sg_counts=(1 2); sg_np=2
  sg_args=(-K 640 -D 64 -n 2 -w 1 --candidates 256)
else
  tr_ranks=(4 8); tr_args=(-K 640 -D 512 -n 20 -w 3); sg_counts=(1 2 4 8); sg_np=8
  sg_args=(-K 640 -D 512 -n 5 -w 1 --candidates 1024)
fi
text=("${wargs[@]}")
if [ -d "$data/gutenberg" ]; then text=(--corpus "$data/gutenberg" --vocab 100000); fi
# UCX is optional: without it the page compares nothing, and says so by its absence.
# UCX when the build made its plugin (the library itself loads it on first use, so it does
# not link UCX).
transports=mpi
if [ -e "$build/lib/libzipfcoll-ucx.so" ]; then
  transports=mpi,ucx
fi
for g in "${tr_ranks[@]}"; do
  log "transports_G$g"
  "${mpirun[@]}" -np "$g" "$build/bench/zfc_perf" sparse "${text[@]}" "${tr_args[@]}" \
    --algo allgather,unique_allreduce,owner_partitioned --compression none,fp16 \
    --transport "$transports" -J "$raw/transports_G$g.json" > "$raw/transports_G$g.txt"
done
for s in "${sg_counts[@]}"; do
  log "seed_groups_S$s"
  "${mpirun[@]}" -np "$sg_np" "$build/bench/zfc_perf" sparse "${text[@]}" "${sg_args[@]}" \
    --algo allgather,unique_allreduce --compression none --seed-groups "$s" \
    -J "$raw/seed_groups_S$s.json" > "$raw/seed_groups_S$s.txt"
done
"$python" bench/pages_report.py --raw "$raw" --out "$out" --stamp "made by $stamp"

# The demo, as docs/algorithms.md quotes it: the paper's word-model step on real text.
if [ "$quick" = 1 ]; then
  demos=("2 4")
else
  demos=("8 32" "8 128")
fi
demo_data=()
if [ -d "$data/gutenberg" ]; then demo_data=(--corpus "$data/gutenberg"); fi
for d in "${demos[@]}"; do
  read -r g windows <<< "$d"
  log "demo_G${g}_W${windows}"
  "${mpirun[@]}" -np "$g" "$build/bench/zfc_demo" "${demo_data[@]}" -n 10 \
    --windows "$windows" > "$raw/demo_G${g}_W${windows}.txt"
done

stamped=("$raw"/*)
if [ "$quick" = 0 ] && [ -d "$data/gutenberg" ]; then
  log "scale (bench/run_scale.sh)"
  bash bench/run_scale.sh --build "$build" --out "$out" --data "$data" > "$raw/run_scale.log"
  stamped+=("$out"/raw_scale/* "$out/scale.csv" "$out/scale_report.txt")
  log "sharded tables (bench/run_sharded.sh)"
  # It stamps its raw outputs itself (with this run's stamp), before its page quotes them.
  bash bench/run_sharded.sh --build "$build" --out "$out" --data "$data" > "$raw/run_sharded.log"
  log "fused updates (bench/run_fused.sh)"
  bash bench/run_fused.sh --build "$build" --out "$out" --data "$data" > "$raw/run_fused.log"
  if [ "$trainer" = 1 ] && [ -x "$build/examples/lstm_lm/lstm_lm" ]; then
    log "trainer (bench/trainer/run_trainer.sh, $trainer_steps steps per validation run)"
    rm -rf "$out/trainer"
    bash bench/trainer/run_trainer.sh "$build" "$data/gutenberg" all "$trainer_steps" \
      "$out/trainer" > "$raw/run_trainer.log"
    stamped+=("$out"/trainer/*.json "$out"/trainer/*.txt)
  fi
fi

# PyTorch's word LM under a real torchrun: DDP over gloo, DDP with zipfcoll's hook, and a
# ShardedEmbedding (bench/run_torch.sh, which stamps its raw outputs and writes torch.md),
# with the Python the build's module was made for, where that Python has torch.
if [ "$quick" = 0 ] && [ -d "$data/gutenberg" ]; then
  log "torch comparison (bench/run_torch.sh)"
  status=0
  bash bench/run_torch.sh --build "$build" --out "$out" --data "$data" \
    > "$raw/run_torch.log" || status=$?
  if [ "$status" = 77 ]; then log "torch comparison skipped: no torch for the module's Python"
  elif [ "$status" != 0 ]; then tail -40 "$raw/run_torch.log"; exit 1; fi
fi
for f in "$raw"/*.log; do  # the logs of the scale, sharded, fused and trainer runs
  if [ -f "$f" ]; then stamped+=("$f"); fi
done

# The reliability records (each stamps itself, as bench/stamp.sh says). A failed trial is
# published as measured, and makes this run fail.
reliability_failed=0
mkdir -p "$out/reliability"
if [ "$quick" = 0 ] && [ "$reliability" = 1 ]; then
  log "fault trials (tests/reliability/fault_trials_all.sh, 50 of each kind)"
  bash tests/reliability/fault_trials_all.sh "$build" "$out/reliability/fault_trials.txt" 50 \
    > /dev/null || reliability_failed=1
  log "abort/re-init counts (tests/reliability/reinit_counts.sh)"
  bash tests/reliability/reinit_counts.sh "$build" "$out/reliability/reinit.txt" \
    > /dev/null || reliability_failed=1
fi
if [ "$quick" = 0 ] && [ -n "$fuzz_build" ]; then
  log "fuzz runs (tests/fuzz/run_fuzzers.sh $fuzz_build 250000)"
  fuzz_log="$(mktemp)"
  if bash tests/fuzz/run_fuzzers.sh "$fuzz_build" 250000 > "$fuzz_log" 2>&1; then
    mv "$fuzz_log" "$out/reliability/fuzz_runs.txt"
  else
    echo "run_all.sh: a fuzz target failed; its log: $fuzz_log" >&2
    reliability_failed=1
  fi
fi

log "plots"
elapsed=$(( $(date +%s) - started ))
"$python" bench/plot_results.py --raw "$raw" --out "$out" --seconds "$elapsed" \
  --command "$invocation" --stamp "$stamp"
"$python" bench/stamp_outputs.py "$stamp" "${stamped[@]}" "$out/sparse.csv" \
  "$out/allreduce.csv" "$out/kernels.csv" "$out/heaps.csv"
log "done: $out/README.md"
if [ "$reliability_failed" = 1 ]; then
  echo "run_all.sh: a reliability record failed (see $out/reliability/ and the log named above)" >&2
  exit 1
fi
