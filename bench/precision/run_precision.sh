#!/usr/bin/env bash
# The accuracy study of the wire formats (docs/precision.md): the example trainer on real text
# at 4 ranks, equal steps, seeds 1, 2 and 3, for every wire format and rounding, then the
# char model and the PyTorch example with the best eight-bit setting; the report is written
# from the raw logs by bench/precision/precision_report.py.
#
# usage: bench/precision/run_precision.sh [--build DIR] [--data DIR] [--out DIR]
#                                         [--steps N] [--seeds "1 2 3"] [--python PY]
#
#   word   the word LM (V = 10000, D = H = 256, sampled softmax of 1024, seed groups
#          power(0.64), --sync auto) for fp32, fp16 and bf16, fp8 e4m3 and e5m2 and int8,
#          each rounded to nearest and stochastically, and the eight-bit ones to nearest
#          with error feedback on the dense weights (--error-feedback on)
#   char   the char LM (D = H = 256, T = 50, dense output) for fp32, fp16 (scale 1) and the
#          eight-bit setting whose word runs' mean held-out perplexity was lowest
#   torch  examples/python/torch_word_lm.py under torchrun in fp32 and that setting's format
# Each run evaluates the held-out split once, after its last step. About an hour on 2 cores.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build="build"; data="../shared/data"; out="docs/benchmarks/precision"; steps=600
seeds="1 2 3"; python=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    *) echo "run_precision.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
source bench/stamp.sh
bin="$build/examples/lstm_lm/lstm_lm"
[ -x "$bin" ] || { echo "run_precision.sh: no $bin" >&2; exit 1; }
[ -d "$data/gutenberg" ] || { echo "run_precision.sh: no $data/gutenberg" >&2; exit 1; }
raw="$out/raw"
mkdir -p "$raw"
stamp="$(bench_stamp bench/precision/run_precision.sh --steps "$steps" --seeds "\"$seeds\"")"
echo "# made by $stamp" > "$raw/stamp.txt"
mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OPENBLAS_NUM_THREADS=1
word=(--corpus "$data/gutenberg" --vocab 10000 --dim 256 --hidden 256 --bptt 20 --batch 16
      --samples 1024 --seed-groups power:0.64 --sync auto)
char=(--corpus "$data/gutenberg" --mode char --dim 256 --hidden 256 --bptt 50 --batch 16
      --sync auto)

# run NAME SEED OPTIONS...: one trainer run, its JSON lines and log kept.
run() {
  local name="$1" seed="$2"
  shift 2
  local base="$raw/${name}_s${seed}"
  if [ -s "$base.json" ] && grep -q '"event": "valid"' "$base.json"; then return; fi
  echo "== $name seed $seed"
  "${mpi[@]}" -np 4 "$bin" "$@" --seed "$seed" --steps "$steps" --epochs 100 \
    --log-every 100 --eval-every "$steps" --valid-tokens 50000 -J "$base.json" > "$base.txt"
  grep -E "validation" "$base.txt" | tail -1
}

# The word runs: name, then --compression and any more options.
word_settings=(
  "fp32|none"
  "fp16|fp16:4096" "fp16_sr|fp16_sr:4096" "bf16|bf16" "bf16_sr|bf16_sr"
  "fp8_e4m3|fp8_e4m3" "fp8_e4m3_sr|fp8_e4m3_sr" "fp8_e5m2|fp8_e5m2" "fp8_e5m2_sr|fp8_e5m2_sr"
  "int8|int8" "int8_sr|int8_sr"
  "fp8_e4m3_ef|fp8_e4m3 --error-feedback on" "fp8_e5m2_ef|fp8_e5m2 --error-feedback on"
  "int8_ef|int8 --error-feedback on")
for seed in $seeds; do
  for s in "${word_settings[@]}"; do
    name="${s%%|*}"
    read -r -a opts <<< "${s#*|}"
    run "word_$name" "$seed" "${word[@]}" --compression "${opts[@]}"
  done
done

# The eight-bit setting with the lowest mean held-out perplexity over the seeds.
best="$(python3 bench/precision/precision_report.py --best "$raw")"
echo "best eight-bit setting of the word runs: $best"
best_opts=""
for s in "${word_settings[@]}"; do [ "${s%%|*}" = "$best" ] && best_opts="${s#*|}"; done
for seed in $seeds; do
  run char_fp32 "$seed" "${char[@]}" --compression none
  # fp16 at scale 1: the char model's dense output table's summed gradients pass fp16's
  # range at the word model's 4096, and every step overflows.
  run char_fp16 "$seed" "${char[@]}" --compression fp16
  read -r -a opts <<< "$best_opts"
  run "char_$best" "$seed" "${char[@]}" --compression "${opts[@]}"
done

# The PyTorch example under torchrun: fp32 and the best setting's format (its hook has no
# error feedback), the mean training loss of its last steps.
[ -n "$python" ] || python="$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")"
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
if "$python" -c 'import zipfcoll, torch.distributed.run' 2> /dev/null; then
  wire="${best_opts%% *}"
  for w in none "$wire"; do
    base="$raw/torch_${w}"
    [ -s "$base.txt" ] && continue
    echo "== torch $w"
    OMP_NUM_THREADS=1 "$python" -m torch.distributed.run --standalone --nproc-per-node=4 \
      examples/python/torch_word_lm.py --corpus "$data/gutenberg" --steps 200 --dim 64 \
      --compression "$w" > "$base.out" 2>&1
    grep -E '^(torch_word_lm: |step |sync )' "$base.out" > "$base.txt"
    rm -f "$base.out"
    tail -1 "$base.txt"
  done
else
  echo "run_precision.sh: $python has no torch or zipfcoll: the torch runs are left out"
fi
# Every raw output stamped with what made it, then the tables, and docs/precision.md with
# them between its markers.
python3 bench/stamp_outputs.py "$stamp" "$raw"/*.txt "$raw"/*.json
python3 bench/precision/precision_report.py "$raw" > "$out/tables.md"
python3 bench/precision/precision_report.py --page "$out/tables.md" docs/precision.md
echo "tables: $out/tables.md, and in docs/precision.md"
