#!/usr/bin/env bash
# End-to-end checks of the example trainer, each after 20 steps on real text:
#   identical      4 ranks with --sync allgather and with --sync unique_allreduce end with
#                  bit-identical parameters (sampled softmax, seed groups, Adagrad, clipping),
#                  and so do its calls grouped (the default) and one by one (--group off)
#   data_parallel  4 ranks of 2 streams end within 1e-5 (relative) of 1 process of 8 streams
#                  on the same global batch (full softmax, so no sampling differs; SGD,
#                  whose update is linear in the gradient, so rounding is not amplified)
#   overflow_skip  4 ranks with fp16 on the wire; at step 3 one rank's gradient holds an
#                  inf: every rank skips that step, so the tables after 3 steps are
#                  bit-identical to those after 2. The algorithm is named: compressed, each
#                  algorithm rounds differently, and auto's choice follows measured links
#   resume         3 ranks: 40 steps straight, and 20 steps (a checkpoint every 7) then 20
#                  more from the checkpoint, write the same checkpoint file, byte for byte
#                  (parameters, Adagrad state, step, epoch, data position, recurrent state;
#                  the 40 steps cross an epoch, where the learning rate decays); a load at
#                  or past --steps trains nothing; --steps 0 trains nothing
#   command_line   2 ranks: --help exits 0; a checkpoint of SGD loads as SGD, and asking
#                  for Adagrad on it is refused on every rank with the reason
#   sharded        --tables sharded against replicated tables (--clip 0, which sharded
#                  tables need): bit-identical parameters and Adagrad state after 20 steps
#                  at 1, 2, 3, 4 and 8 ranks (sampled softmax: both tables sharded), and at
#                  3 with full softmax and SGD (the input table sharded); 20 sharded steps
#                  (a checkpoint every 7) and 20 more from the checkpoint write, byte for
#                  byte, the checkpoint of 40 replicated steps; with fp16 on the wire an inf
#                  at step 3 leaves every shard as after step 2; --clip 1 and --group off
#                  are refused
# usage: lstm_lm_checks.sh CHECK LSTM_LM DATA_DIR MPIEXEC [MPIEXEC_ARGS...] NUMPROC_FLAG
# (the rank count is appended to the command after NUMPROC_FLAG)
# Exits 77 (skipped) when DATA_DIR has no corpus.
set -euo pipefail
check="$1" bin="$2" data="$3"
shift 3
corpus="$data/gutenberg/carroll-alice.txt"
if [ -z "$data" ] || [ ! -f "$corpus" ]; then
  echo "skipped: no corpus at '$corpus' (set ZIPFCOLL_TEST_DATA)"
  exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1
common=(--corpus "$corpus" --vocab 3000 --dim 32 --hidden 32 --bptt 8 --steps 20
        --log-every 10 --valid-tokens 2000 --seed 11)
launch=("$@")  # the MPI launcher; the rank count follows it
short=(--corpus "$corpus" --vocab 3000 --dim 32 --hidden 32 --bptt 8 --batch 4
       --samples 200 --log-every 1 --valid-tokens 200 --seed 11 --compression fp16:1024)

# 4 ranks with fp16 on the wire and the options given: an inf in the last rank's gradient at
# step 3 makes every rank skip that step, so the parameters after 3 steps are those after 2.
skips_step_3() {
  "${launch[@]}" 4 "$bin" "${short[@]}" "$@" --steps 3 --inject-inf 3 \
    -J "$work/skip.json" --save "$work/three.ckpt" | tail -2
  "${launch[@]}" 4 "$bin" "${short[@]}" "$@" --steps 2 --save "$work/two.ckpt" | tail -2
  grep -q '"step": 3,.*"skipped": 1' "$work/skip.json" || {
    echo "step 3 was not reported skipped:"; cat "$work/skip.json"; exit 1; }
  "$bin" --compare "$work/three.ckpt" "$work/two.ckpt" --tolerance 0
}
case "$check" in
  identical)
    for sync in allgather unique_allreduce; do
      "$@" 4 "$bin" "${common[@]}" --batch 4 --samples 200 --sync "$sync" \
        --save "$work/$sync.ckpt" | tail -3
    done
    "$@" 4 "$bin" "${common[@]}" --batch 4 --samples 200 --sync unique_allreduce \
      --group off --save "$work/separate.ckpt" | tail -3
    "$bin" --compare "$work/allgather.ckpt" "$work/unique_allreduce.ckpt" --tolerance 0
    "$bin" --compare "$work/separate.ckpt" "$work/unique_allreduce.ckpt" --tolerance 0
    ;;
  data_parallel)
    sgd=(--softmax full --optimizer sgd --lr 1)
    "$@" 4 "$bin" "${common[@]}" "${sgd[@]}" --batch 2 --save "$work/four.ckpt" | tail -2
    "$@" 1 "$bin" "${common[@]}" "${sgd[@]}" --batch 8 --save "$work/one.ckpt" | tail -2
    "$bin" --compare "$work/four.ckpt" "$work/one.ckpt" --tolerance 1e-5
    ;;
  overflow_skip)
    skips_step_3 --sync unique_allreduce
    ;;
  resume)
    # 26242 training tokens / (3 ranks x 40 streams x 8) = 27 batches per epoch
    run=(--corpus "$corpus" --vocab 3000 --dim 32 --hidden 32 --bptt 8 --batch 40
         --samples 200 --log-every 10 --valid-tokens 2000 --seed 11 --epochs 3
         --lr-decay 0.5 --decay-after 1 --sync owner_partitioned)
    "$@" 3 "$bin" "${run[@]}" --steps 40 --save "$work/straight.ckpt" | tail -1
    "$@" 3 "$bin" "${run[@]}" --steps 20 --save-every 7 --save "$work/half.ckpt" | tail -1
    "$@" 3 "$bin" "${run[@]}" --load "$work/half.ckpt" --steps 40 \
      --save "$work/resumed.ckpt" | tail -1
    cmp "$work/straight.ckpt" "$work/resumed.ckpt"
    echo "40 steps straight and 20 + 20 from a checkpoint: the same checkpoint"
    "$@" 3 "$bin" "${run[@]}" --load "$work/half.ckpt" --steps 20 --save "$work/again.ckpt" \
      > "$work/again.log"
    grep -q "nothing to train" "$work/again.log" || { cat "$work/again.log"; exit 1; }
    cmp "$work/half.ckpt" "$work/again.ckpt"
    "$@" 3 "$bin" "${run[@]}" --steps 0 --save "$work/zero.ckpt" > "$work/zero.log"
    if grep -q "^step  *[0-9]* *sampled loss" "$work/zero.log"; then
      echo "--steps 0 trained:"; cat "$work/zero.log"; exit 1
    fi
    "$@" 3 "$bin" "${run[@]}" --load "$work/zero.ckpt" --steps 40 \
      --save "$work/from_zero.ckpt" | tail -1
    cmp "$work/straight.ckpt" "$work/from_zero.ckpt"
    if ls "$work"/*.partial > /dev/null 2>&1; then echo "a temporary file was left"; exit 1; fi
    ;;
  command_line)
    "$bin" --help > "$work/help.txt"
    grep -q -- "--save-every" "$work/help.txt"
    small=(--corpus "$corpus" --vocab 3000 --dim 32 --hidden 32 --bptt 8 --batch 4
           --samples 200 --valid-tokens 200 --seed 11 --lr 1)
    "$@" 2 "$bin" "${small[@]}" --optimizer sgd --steps 3 --save "$work/sgd.ckpt" | tail -1
    # Without --optimizer the checkpoint's is taken.
    "$@" 2 "$bin" "${small[@]}" --load "$work/sgd.ckpt" --steps 5 | tee "$work/load.log" \
      | tail -1
    head -1 "$work/load.log" | grep -q " sgd " || { cat "$work/load.log"; exit 1; }
    if "$@" 2 "$bin" --corpus "$corpus" --vocab 3000 --batch 4 --optimizer adagrad \
         --load "$work/sgd.ckpt" --steps 5 > "$work/refused.log" 2>&1; then
      echo "Adagrad on an SGD checkpoint was not refused"; exit 1
    fi
    for r in 0 1; do
      grep -q "(rank $r): .*trained with --optimizer sgd" "$work/refused.log" || {
        cat "$work/refused.log"; exit 1; }
    done
    ;;
  sharded)
    for np in 1 2 3 4 8; do
      for tables in replicated sharded; do
        "$@" "$np" "$bin" "${common[@]}" --batch 4 --samples 200 --clip 0 --tables "$tables" \
          --save "$work/$tables$np.ckpt" | tail -1
      done
      "$bin" --compare "$work/replicated$np.ckpt" "$work/sharded$np.ckpt" --tolerance 0 | tail -1
    done
    full=(--batch 4 --softmax full --optimizer sgd --lr 1 --clip 0)
    "$@" 3 "$bin" "${common[@]}" "${full[@]}" --save "$work/full_r.ckpt" | tail -1
    "$@" 3 "$bin" "${common[@]}" "${full[@]}" --tables sharded --save "$work/full_s.ckpt" \
      | tail -1
    "$bin" --compare "$work/full_r.ckpt" "$work/full_s.ckpt" --tolerance 0 | tail -1
    run=(--corpus "$corpus" --vocab 3000 --dim 32 --hidden 32 --bptt 8 --batch 40
         --samples 200 --log-every 10 --valid-tokens 2000 --seed 11 --epochs 3
         --lr-decay 0.5 --decay-after 1 --clip 0)
    "$@" 3 "$bin" "${run[@]}" --steps 40 --save "$work/straight.ckpt" | tail -1
    "$@" 3 "$bin" "${run[@]}" --tables sharded --steps 20 --save-every 7 \
      --save "$work/half.ckpt" | tail -1
    "$@" 3 "$bin" "${run[@]}" --tables sharded --load "$work/half.ckpt" --steps 40 \
      --save "$work/resumed.ckpt" | tail -1
    cmp "$work/straight.ckpt" "$work/resumed.ckpt"
    echo "40 replicated steps, and 20 + 20 sharded from a checkpoint: the same checkpoint"
    skips_step_3 --tables sharded
    for refused in "--clip 1" "--group off"; do
      # shellcheck disable=SC2086
      if "$bin" "${short[@]}" --tables sharded --steps 1 $refused > "$work/refused.log" 2>&1
      then
        echo "--tables sharded $refused was not refused"; exit 1
      fi
      grep -q "tables sharded" "$work/refused.log" || { cat "$work/refused.log"; exit 1; }
    done
    ;;
  *)
    echo "unknown check $check" >&2
    exit 2
    ;;
esac
echo "check $check passed"
