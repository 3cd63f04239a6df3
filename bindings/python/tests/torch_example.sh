#!/usr/bin/env bash
# The PyTorch example (examples/python/torch_word_lm.py) on 4 ranks of real text under a real
# torchrun, synced by zipfcoll and then by torch alone: after 20 steps the parameters must
# agree within 1e-6 relative; both runs print the embedding's bytes per step. Skips (77)
# without torch or without the corpus.
# usage: torch_example.sh PYTHON EXAMPLES_DIR CORPUS
set -u
python="$1" examples="$2" corpus="$3"
if ! "$python" -c 'import torch.distributed.run' 2> /dev/null; then
  echo "torch_example.sh: $python has no torch: skipped"; exit 77
fi
if [ ! -d "$corpus" ]; then echo "torch_example.sh: no corpus at $corpus: skipped"; exit 77; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for sync in zipfcoll torch; do
  OMP_NUM_THREADS=1 "$python" -m torch.distributed.run --standalone --nproc-per-node=4 \
    "$examples/torch_word_lm.py" --corpus "$corpus" --max-words 300000 --steps 20 --sync "$sync" \
    --save "$work/$sync.pt" > "$work/$sync.out" 2>&1
  rc=$?
  grep -v '^W[0-9]' "$work/$sync.out" | grep -v 'UserWarning'
  if [ "$rc" != 0 ]; then echo "torch_example.sh: the $sync run failed (exit $rc)"; exit 1; fi
done
"$python" "$examples/compare_torch_sync.py" "$work/zipfcoll.pt" "$work/torch.pt"
