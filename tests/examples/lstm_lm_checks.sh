#!/usr/bin/env bash
# End-to-end checks of the example trainer, each after 20 steps on real text:
#   identical      4 ranks with --sync allgather and with --sync unique_allreduce end with
#                  bit-identical parameters (sampled softmax, seed groups, Adagrad, clipping)
#   data_parallel  4 ranks of 2 streams end within 1e-5 (relative) of 1 process of 8 streams
#                  on the same global batch (full softmax, so no sampling differs; SGD,
#                  whose update is linear in the gradient, so rounding is not amplified)
#   overflow_skip  4 ranks with fp16 on the wire; at step 3 one rank's gradient holds an
#                  inf: every rank skips that step, so the tables after 3 steps are
#                  bit-identical to those after 2. The algorithm is named: compressed, each
#                  algorithm rounds differently, and auto's choice follows measured links
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
case "$check" in
  identical)
    for sync in allgather unique_allreduce; do
      "$@" 4 "$bin" "${common[@]}" --batch 4 --samples 200 --sync "$sync" \
        --save "$work/$sync.ckpt" | tail -3
    done
    "$bin" --compare "$work/allgather.ckpt" "$work/unique_allreduce.ckpt" --tolerance 0
    ;;
  data_parallel)
    sgd=(--softmax full --optimizer sgd --lr 1)
    "$@" 4 "$bin" "${common[@]}" "${sgd[@]}" --batch 2 --save "$work/four.ckpt" | tail -2
    "$@" 1 "$bin" "${common[@]}" "${sgd[@]}" --batch 8 --save "$work/one.ckpt" | tail -2
    "$bin" --compare "$work/four.ckpt" "$work/one.ckpt" --tolerance 1e-5
    ;;
  overflow_skip)
    short=(--corpus "$corpus" --vocab 3000 --dim 32 --hidden 32 --bptt 8 --batch 4
           --samples 200 --log-every 1 --valid-tokens 200 --seed 11 --compression fp16:1024
           --sync unique_allreduce)
    "$@" 4 "$bin" "${short[@]}" --steps 3 --inject-inf 3 --log-json "$work/skip.json" \
      --save "$work/three.ckpt" | tail -2
    "$@" 4 "$bin" "${short[@]}" --steps 2 --save "$work/two.ckpt" | tail -2
    grep -q '"step":3,.*"skipped":1' "$work/skip.json" || {
      echo "step 3 was not reported skipped:"; cat "$work/skip.json"; exit 1; }
    "$bin" --compare "$work/three.ckpt" "$work/two.ckpt" --tolerance 0
    ;;
  *)
    echo "unknown check $check" >&2
    exit 2
    ;;
esac
echo "check $check passed"
