#!/usr/bin/env python3
"""docs/benchmarks/gpu.md from one run of zfc_gpu_bench and torch_pipeline.py on one GPU.

usage: compare.py --zfc ZFC.json --torch TORCH.json --out gpu.md [--command TEXT]
"""
import argparse
import json


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zfc", required=True)
    ap.add_argument("--torch", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="bench/gpu/run_gpu.sh")
    a = ap.parse_args()
    z, t = load(a.zfc), load(a.torch)
    zr = {(r["kernel"], r["N"], r["D"]): r for r in z["rows"]}
    tr = {(r["kernel"], r["N"], r["D"]): r for r in t["rows"]}
    lines = ["# zipfcoll on a GPU", "", "How these figures are made, and the other GPU runs: "
             "`docs/gpu.md`.", "", f"GPU: {z['gpu']}; PyTorch {t['torch']}; ids from "
             f"Zipf(1.1) over V = {z['vocab']}. Produced by:", "", "```", a.command, "```", "",
             "## Local pipeline against PyTorch (same GPU, same run)", "",
             "| N = G·K | D | U | zipfcoll (µs) | PyTorch (µs) | speedup |",
             "|---|---|---|---|---|---|"]
    for (kernel, n, d), r in sorted(zr.items(), key=lambda kv: (kv[0][2], kv[0][1])):
        if kernel != "pipeline" or (kernel, n, d) not in tr:
            continue
        p = tr[(kernel, n, d)]
        lines.append(f"| {n} | {d} | {r['U']} | {r['ms'] * 1e3:.1f} | {p['ms'] * 1e3:.1f} | "
                     f"{p['ms'] / r['ms']:.2f}x |")
    lines += ["", "## Kernels against a device-to-device copy", "",
              "| kernel | N | D | time (µs) | GB/s | of copy |", "|---|---|---|---|---|---|"]
    for (kernel, n, d), r in sorted(zr.items(), key=lambda kv: (kv[0][2], kv[0][1], kv[0][0])):
        gbps = r["bytes"] / (r["ms"] * 1e6)
        lines.append(f"| {kernel} | {n} | {d} | {r['ms'] * 1e3:.1f} | {gbps:.0f} | "
                     f"{gbps / r['copy_gbps']:.2f} |")
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
