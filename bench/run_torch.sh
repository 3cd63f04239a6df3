#!/usr/bin/env bash
# The comparison behind docs/benchmarks/torch.md (about 10 minutes on 2 cores): PyTorch's word
# LM example (examples/python/torch_word_lm.py) under a real torchrun at 4 ranks on real text,
# the same seed and steps, synced
#   (a) by DDP alone over gloo, as PyTorch users run it (its sparse allreduce gathers every
#       rank's coalesced rows; a 16-bit wire: torch's fp16_compress_hook),
#   (b) by DDP with zipfcoll's hook,
#   (c) with the embedding a zipfcoll.torch.ShardedEmbedding and the hook for the rest,
# each with fp32 and fp16 on the wire, in two models: a full softmax over V = 50 000 words
# (its dense gradient is most of the traffic) and a short-list softmax over the 1 000 most
# frequent words (the sparse embedding's is a large part). Every run is repeated; the order of
# the syncs rotates from repeat to repeat. The parameters of (a), (b) and (c) after the steps
# are compared in fp32. Then bench/torch_report.py writes the page.
#
# --short is the comparison's short form for the test suite: one small model (V = 3000,
# D = 64) at 2 ranks, one repeat, into a scratch folder; it fails unless every run ends and
# the parameters of (a) and (b) agree within 1e-6.
#
# usage: bench/run_torch.sh [--build DIR] [--out DIR] [--data DIR] [--python PY]
#                           [--repeats N] [--short]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="build"; out="docs/benchmarks"; data="../shared/data"; python=""; repeats=3; short=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --repeats) repeats="$2"; shift 2 ;;
    --short) short=1; shift ;;
    *) echo "run_torch.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
source bench/stamp.sh
# The Python the build's module was made for.
[ -n "$python" ] || python="$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")"
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
if ! "$python" -c 'import zipfcoll, torch.distributed.run' 2> /dev/null; then
  echo "run_torch.sh: $python has no torch or no zipfcoll module in $build: skipped"
  exit 77
fi
if [ ! -d "$data/gutenberg" ]; then echo "run_torch.sh: no $data/gutenberg: skipped"; exit 77; fi
if [ "$short" = 1 ]; then
  raw="$(mktemp -d)"
  trap 'rm -rf "$raw"' EXIT
  repeats=1; ranks=2
  models=("small:--vocab 3000 --dim 64 --batch 8 --bptt 20 --max-words 100000")
else
  raw="$out/raw_torch"; ranks=4
  rm -rf "$raw"; mkdir -p "$raw"
  models=("full:--vocab 50000 --dim 256 --batch 8 --bptt 20 --max-words 1000000"
          "shortlist:--vocab 50000 --dim 256 --shortlist 1000 --batch 32 --bptt 20 --max-words 1000000")
fi
syncs=(torch zipfcoll sharded)
for model in "${models[@]}"; do
  name="${model%%:*}"
  read -r -a args <<< "${model#*:}"
  for ((r = 1; r <= repeats; ++r)); do
    for wire in none fp16; do
      for ((k = 0; k < 3; ++k)); do
        sync="${syncs[$(((k + r - 1) % 3))]}"
        run="$raw/${name}_${sync}_${wire}_r$r"
        save=()
        if [ "$r" = 1 ] && [ "$wire" = none ]; then save=(--save "$run.pt"); fi
        echo "[${name} ${sync} ${wire} repeat $r]"
        if ! OMP_NUM_THREADS=1 "$python" -m torch.distributed.run --standalone \
             --nproc-per-node="$ranks" examples/python/torch_word_lm.py --corpus "$data/gutenberg" \
             --steps 20 --sync "$sync" --compression "$wire" "${args[@]}" "${save[@]}" \
             > "$run.out" 2>&1; then
          cat "$run.out"
          echo "run_torch.sh: the ${name} ${sync} ${wire} run failed"
          exit 1
        fi
        # The run's own lines (not torchrun's warnings).
        grep -E '^(torch_word_lm: |step |sync )' "$run.out" > "$run.txt"
        rm -f "$run.out"
        cat "$run.txt"
      done
    done
  done
  for other in zipfcoll sharded; do
    echo "[${name}: parameters of ${other} against torch, fp32]"
    # Parameters that differ are a result (the page says so, and the short form fails on
    # it); a comparison that cannot run at all is a failure of this script.
    rc=0
    "$python" examples/python/compare_torch_sync.py "$raw/${name}_${other}_none_r1.pt" \
      "$raw/${name}_torch_none_r1.pt" > "$raw/${name}_params_${other}.txt" 2>&1 || rc=$?
    cat "$raw/${name}_params_${other}.txt"
    if ! grep -q "^largest relative difference" "$raw/${name}_params_${other}.txt"; then
      echo "run_torch.sh: the ${name} comparison of ${other} against torch did not run (exit $rc)"
      exit 1
    fi
  done
  rm -f "$raw"/*.pt
done
if [ "$short" = 1 ]; then
  if grep -q "parameters agree" "$raw/small_params_zipfcoll.txt"; then
    echo "run_torch.sh: the short form ran; torch and the hook's parameters agree"
    exit 0
  fi
  exit 1
fi
stamp="${ZIPFCOLL_BENCH_STAMP:-$(bench_stamp bench/run_torch.sh)}"
py="$(plot_python)"
"$py" bench/stamp_outputs.py "$stamp" "$raw"/*
"$py" bench/torch_report.py --raw "$raw" --out "$out/torch.md"
