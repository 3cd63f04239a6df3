#!/usr/bin/env python3
"""docs/benchmarks/gpu.md from one run of zfc_gpu_bench and torch_pipeline.py on one GPU.

usage: compare.py --zfc ZFC.json --torch TORCH.json --out gpu.md [--command TEXT]
                  [--steps DIR]
  --steps DIR  also the fused step over NCCL on device buffers (zfc_perf_sparse_nccl_np*.json,
               and zfc_perf_sparse_nccl_flag_on_device_np*.json for plans that leave the
               overflow flag on the device) against a plain NCCL allgather of all rows
               (nccl_allgather_*_np*.json)
"""
import argparse
import glob
import json
import os
import re


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zfc", required=True)
    ap.add_argument("--torch", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="bench/gpu/run_gpu.sh")
    ap.add_argument("--steps", default=None)
    ap.add_argument("--stamp", default=None, help="what made the figures (bench/stamp.sh)")
    a = ap.parse_args()
    z, t = load(a.zfc), load(a.torch)
    zr = {(r["kernel"], r["N"], r["D"]): r for r in z["rows"]}
    tr = {(r["kernel"], r["N"], r["D"]): r for r in t["rows"]}
    lines = ["# zipfcoll on a GPU", "", "How these figures are made, and the other GPU runs: "
             "`docs/gpu.md`.", ""]
    if a.stamp:
        lines += [f"Made by {a.stamp}.", ""]
    lines += [f"GPU: {z['gpu']}; PyTorch {t['torch']}; ids from "
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
    if a.steps:
        lines += step_table(a.steps)
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


def step_table(folder):
    """The fused step on device buffers over NCCL against ncclAllGather of all rows."""
    lines = ["", "## Fused step on device buffers against a plain NCCL allgather", "",
             "K = 640 tokens per rank, D = 512, one rank per GPU; time: median over steps of "
             "the slowest rank. `path` and `syncs` are zfcOpStats_t's: where the step ran and "
             "its waits for the caller's stream.", "",
             "| G | variant | path | syncs | time (µs) | MB | ncclAllGather same wire (µs) | "
             "speedup | wrong |", "|---|---|---|---|---|---|---|---|---|"]
    # zfc_perf_sparse_nccl_np*: the default plans; ..._flag_on_device_np*: plans made with
    # overflow_on_device = 1, whose step leaves the flag on the device.
    def order(path):  # by G, the default plans first
        name = os.path.basename(path)
        return int(re.search(r"np(\d+)\.json$", name).group(1)), "flag_on_device" in name

    for path in sorted(glob.glob(os.path.join(folder, "zfc_perf_sparse_nccl_*np*.json")),
                       key=order):
        np_, flag_on_device = order(path)
        label = " (flag on device)" if flag_on_device else ""
        base = {}
        for wire in ("fp32", "fp16"):
            p = os.path.join(folder, f"nccl_allgather_{wire}_np{np_}.json")
            if os.path.exists(p):
                base[wire] = load(p)["time_us"]
        for r in load(path)["rows"]:
            wire = "fp16" if r["wire"] == "fp16" else "fp32"
            b = base.get(wire)
            speed = f"{b / r['time_us']:.2f}x" if b else "-"
            lines.append(f"| {np_} | {r['algo']}/{r['wire']}{label} | {r.get('path', '-')} | "
                         f"{r.get('host_syncs', 0):.0f} | {r['time_us']:.1f} | {r['MB']:.3f} | "
                         f"{f'{b:.1f}' if b is not None else '-'} | {speed} | "
                         f"{r['wrong']:.0f} |")
    return lines


if __name__ == "__main__":
    main()
