#!/usr/bin/env python3
"""The local pipeline of one rank written in PyTorch, timed on the sizes zfc_gpu_bench uses.

    python3 bench/gpu/torch_pipeline.py [--sizes 1e4,1e5,1e6,4e6] [--dims 512,1024]
                                        [--vocab 100000] [--iters 20] [--json FILE]

unique (torch.unique with return_inverse), scatter (index_add_ into zeros), encode
(scaled .half()), and the three together: what a framework does today for the same step.
Ids are drawn from the same Zipf(1.1) law over the vocabulary (not the same stream).
"""
import argparse
import json

import numpy as np
import torch


def zipf_ids(n, vocab, seed=1, s=1.1):
    p = 1.0 / np.arange(1, vocab + 1, dtype=np.float64) ** s
    p /= p.sum()
    return np.random.default_rng(seed).choice(vocab, size=n, p=p).astype(np.int64)


def time_ms(iters, body):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(2):
        body()
    times = []
    for _ in range(iters):
        start.record()
        body()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]


def run(n, dim, vocab, iters):
    keys = torch.from_numpy(zipf_ids(n, vocab)).cuda()
    grad = torch.rand(n, dim, device="cuda") * 2 - 1
    uniq, inv = torch.unique(keys, sorted=True, return_inverse=True)
    u = uniq.numel()
    dense = torch.zeros(u, dim, device="cuda")

    def unique():
        torch.unique(keys, sorted=True, return_inverse=True)

    def scatter():
        dense.zero_()
        dense.index_add_(0, inv, grad)

    def encode():
        (dense * 1024.0).half()

    def pipeline():
        uq, iv = torch.unique(keys, sorted=True, return_inverse=True)
        d = torch.zeros(uq.numel(), dim, device="cuda")
        d.index_add_(0, iv, grad)
        (d * 1024.0).half()

    return [{"kernel": name, "N": n, "D": dim, "U": u, "ms": time_ms(iters, fn)}
            for name, fn in [("unique", unique), ("scatter", scatter), ("encode_fp16", encode),
                             ("pipeline", pipeline)]]


def main():
    # The option names of zfc_gpu_bench, whose rows these sit beside
    # (common/tools/tool_options.hpp); the older spellings are kept as other names.
    ap = argparse.ArgumentParser(description="PyTorch's unique + index_add_ + cast on a GPU")
    ap.add_argument("-K", "--tokens", "--sizes", dest="sizes", default="1e4,1e5,1e6,4e6",
                    help="comma list of index counts N")
    ap.add_argument("-D", "--dim", "--dims", dest="dims", default="512,1024",
                    help="comma list of row widths")
    ap.add_argument("--vocab", type=int, default=100000, help="ids drawn below V")
    ap.add_argument("-n", "--iters", type=int, default=20, help="timed runs (the median)")
    ap.add_argument("-J", "--output_file", "--json", dest="json", help="the JSON record")
    a = ap.parse_args()
    rows = []
    print(f"# PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
    for dim in [int(float(x)) for x in a.dims.split(",")]:
        for n in [int(float(x)) for x in a.sizes.split(",")]:
            for r in run(n, dim, a.vocab, a.iters):
                print(f"  {r['kernel']:<12} {r['N']:>9} {r['D']:>5} {r['U']:>8} "
                      f"{r['ms'] * 1e3:>10.1f} us")
                rows.append(r)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "vocab": a.vocab, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
