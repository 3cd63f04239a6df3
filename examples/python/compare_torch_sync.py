"""Compares two runs of torch_word_lm.py saved with --save: zipfcoll's sync and torch's.
Every parameter must agree within `--rtol` relative to its norm (||a - b|| <= rtol * ||b||):
the two syncs sum the same gradients in different orders, so they differ by fp32 rounding.

usage: compare_torch_sync.py ZIPFCOLL.pt TORCH.pt [--rtol 1e-6]
"""
import argparse
import sys

import torch

p = argparse.ArgumentParser()
p.add_argument("zipfcoll")
p.add_argument("torch")
p.add_argument("--rtol", type=float, default=1e-6)
args = p.parse_args()
a, b = torch.load(args.zipfcoll), torch.load(args.torch)
worst = 0.0
for name in b:
    err = ((a[name] - b[name]).norm() / b[name].norm().clamp_min(1e-30)).item()
    worst = max(worst, err)
    print(f"{name:24s} relative difference {err:.3g}")
ok = set(a) == set(b) and worst <= args.rtol
print(f"largest relative difference {worst:.3g} (allowed {args.rtol:g}): "
      f"{'parameters agree' if ok else 'parameters differ'}")
sys.exit(0 if ok else 1)
