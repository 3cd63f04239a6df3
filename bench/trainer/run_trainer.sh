#!/usr/bin/env bash
# The example trainer's figures, into docs/benchmarks/trainer/ and docs/trainer.md.
#
# usage: bench/trainer/run_trainer.sh BUILD_DIR CORPUS_DIR [throughput|group|tables|validation|all]
#        [STEPS] [OUT]
#   (all: every one of them, in the order below)
#   throughput  words/s per rank and the step split (compute vs the library, each
#               collective timed apart: --group off) for
#               allgather, unique_allreduce and unique_allreduce with fp16 on 4 and 8 ranks
#               (60 steps each, about 5 minutes)
#   group       the step's collectives grouped (--group on) and one by one (--group off),
#               owner_partitioned with fp16 on 4 and 8 ranks (60 steps each): rounds,
#               bytes and the library's time per step, in group_np*_{on,off}.{txt,json}
#   tables      the embedding tables replicated and sharded (--tables, --clip 0 in both),
#               4 and 8 ranks, 60 steps each: the tables' memory per rank, bytes, rounds and
#               the library's time per step, in tables_np*_{replicated,sharded}.{txt,json}
#   validation  word LM runs of BUDGET_S seconds each (default 900) on 4 ranks: fp32,
#               fp16 with scale 4096, and the seed-group policies all-distinct, power(0.64)
#               and all-same; and the char LM (bits per character)
# Every run writes its JSON log; bench/trainer/trainer_report.py turns them into the report.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build="${1:?usage: run_trainer.sh BUILD_DIR CORPUS_DIR [throughput|group|tables|validation|all] [STEPS] [OUT]}"
corpus="${2:?corpus directory}"
what="${3:-all}"
steps="${4:-600}"
out="${5:-docs/benchmarks/trainer}"
mkdir -p "$out"
bin="$build/examples/lstm_lm/lstm_lm"
mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OPENBLAS_NUM_THREADS=1
word=(--corpus "$corpus" --vocab 10000 --dim 256 --hidden 256 --bptt 20 --batch 16
      --samples 1024 --seed 1)

if [ "$what" = throughput ] || [ "$what" = all ]; then
  for np in 4 8; do
    for sync in allgather unique_allreduce unique_allreduce+fp16; do
      algo="${sync%+fp16}"
      comp=none
      [ "$sync" != "$algo" ] && comp=fp16:4096
      name="throughput_np${np}_${sync}"
      echo "== $name"
      "${mpi[@]}" -np "$np" "$bin" "${word[@]}" --sync "$algo" --compression "$comp" \
        --group off --steps 60 --log-every 20 --valid-tokens 20000 -J "$out/$name.json" |
        tee "$out/$name.txt" | grep -E "^step|perplexity"
    done
  done
fi

if [ "$what" = group ] || [ "$what" = all ]; then
  for np in 4 8; do
    for group in on off; do
      name="group_np${np}_${group}"
      echo "== $name"
      "${mpi[@]}" -np "$np" "$bin" "${word[@]}" --sync owner_partitioned \
        --compression fp16:4096 --group "$group" --steps 60 --log-every 20 \
        --valid-tokens 20000 -J "$out/$name.json" | tee "$out/$name.txt" | grep -E "^step"
    done
  done
  if [ "$what" = group ]; then  # run alone: stamped here (bench/run_all.sh stamps its own)
    source bench/stamp.sh
    python3 bench/stamp_outputs.py \
      "$(bench_stamp bench/trainer/run_trainer.sh BUILD_DIR CORPUS_DIR group)" \
      "$out"/group_np*_o*.txt "$out"/group_np*_o*.json
    exit 0
  fi
fi

if [ "$what" = tables ] || [ "$what" = all ]; then
  for np in 4 8; do
    for tables in replicated sharded; do
      name="tables_np${np}_${tables}"
      echo "== $name"
      "${mpi[@]}" -np "$np" "$bin" "${word[@]}" --tables "$tables" --clip 0 --steps 60 \
        --log-every 20 --valid-tokens 20000 -J "$out/$name.json" |
        tee "$out/$name.txt" | grep -E "^step|tables"
    done
  done
  if [ "$what" = tables ]; then
    source bench/stamp.sh
    python3 bench/stamp_outputs.py \
      "$(bench_stamp bench/trainer/run_trainer.sh BUILD_DIR CORPUS_DIR tables)" \
      "$out"/tables_np*.txt "$out"/tables_np*.json
    exit 0
  fi
fi

if [ "$what" = validation ] || [ "$what" = all ]; then
  run() {  # name, then options
    local name="$1"
    shift
    echo "== $name ($steps steps)"
    "${mpi[@]}" -np 4 "$bin" "$@" --steps "$steps" --epochs 100 --log-every 100 \
      --eval-every 200 --valid-tokens 50000 \
      -J "$out/$name.json" --generate 60 | tee "$out/$name.txt" |
      grep -E "perplexity|bits"
  }
  run valid_fp32_power064 "${word[@]}" --sync auto --seed-groups power:0.64
  run valid_fp16_power064 "${word[@]}" --sync auto --seed-groups power:0.64 \
    --compression fp16:4096
  run valid_fp32_alldistinct "${word[@]}" --sync auto --seed-groups all-distinct
  run valid_fp32_allsame "${word[@]}" --sync auto --seed-groups all-same
  run valid_char "--corpus" "$corpus" --mode char --dim 256 --hidden 256 --bptt 50 \
    --batch 16 --sync auto --seed 1
fi
# Run alone (not from bench/run_all.sh, which stamps what it ran), the logs are stamped here,
# before the report quotes them.
if [ -z "${ZIPFCOLL_BENCH_STAMP:-}" ]; then
  source bench/stamp.sh
  ZIPFCOLL_BENCH_STAMP="$(bench_stamp bench/trainer/run_trainer.sh BUILD_DIR CORPUS_DIR \
    "$what" "$steps")"
  export ZIPFCOLL_BENCH_STAMP  # the report's own line names it too
  python3 bench/stamp_outputs.py "$ZIPFCOLL_BENCH_STAMP" "$out"/*.txt "$out"/*.json
fi
python=""
for p in /usr/bin/python3 python3; do
  if "$p" -c "import matplotlib" > /dev/null 2>&1; then python="$p"; break; fi
done
if [ -z "$python" ]; then
  echo "no Python with matplotlib: the logs are in $out; run bench/trainer/trainer_report.py"
  exit 0
fi
"$python" bench/trainer/trainer_report.py "$out"
