#!/usr/bin/env python3
"""docs/benchmarks/gpu.md from one run of zfc_gpu_bench and torch_pipeline.py on one GPU.

usage: compare.py --zfc ZFC.json --torch TORCH.json (--out gpu.md | --check gpu.md)
                  [--command TEXT] [--stamp TEXT] [--steps DIR]
  --steps DIR  also the fused step over NCCL on device buffers (zfc_perf_sparse_nccl_np*.json,
               and zfc_perf_sparse_nccl_flag_on_device_np*.json for plans that leave the
               overflow flag on the device) against a plain NCCL allgather of all rows
               (nccl_allgather_*_np*.json)
  --check PAGE instead of writing, exits 1 unless PAGE's "GPU:" line and its tables -- from
               its first table heading to the hand-written section that follows them (NOTES)
               or the end -- are the ones these outputs make
"""
import argparse
import glob
import json
import os
import re
import sys


# The heading of the page's hand-written section, which follows the tables.
NOTES = "## What ran on the GPU"


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zfc", required=True)
    ap.add_argument("--torch", required=True)
    out = ap.add_mutually_exclusive_group(required=True)
    out.add_argument("--out")
    out.add_argument("--check")
    ap.add_argument("--command", default="bench/gpu/run_gpu.sh")
    ap.add_argument("--steps", default=None)
    ap.add_argument("--stamp", default=None, help="what made the figures (bench/stamp.sh)")
    a = ap.parse_args()
    z, t = load(a.zfc), load(a.torch)
    zr = {(r["kernel"], r["N"], r["D"]): r for r in z["rows"]}
    tr = {(r["kernel"], r["N"], r["D"]): r for r in t["rows"]}
    # The title names the version; a later release made without a GPU edits it to say
    # "made on an earlier version, zipfcoll X.Y.Z; raw: raw_gpu" (bench/check_pages.py).
    made = a.stamp.split(",")[0] if a.stamp else "zipfcoll"
    lines = [f"# zipfcoll on a GPU ({made})", "", "How these figures are made, and the other GPU runs: "
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
    lines += target_table(zr, tr)
    if a.steps:
        lines += step_table(a.steps)
    if a.check:
        sys.exit(0 if check(a.check, lines) else 1)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


# The targets the device path is held to, at 10^6 rows: the local pipeline (unique, scatter,
# fp16 cast) at least 3 times PyTorch's speed at D = 512, and the casts and the scatter at
# least 0.70 of a device-to-device copy's bandwidth (at every D measured).
PIPELINE_TARGET, PIPELINE_D, COPY_TARGET, TARGET_N = 3.0, 512, 0.70, 10**6
COPY_KERNELS = ("encode_fp16", "decode_fp16", "scatter_grouped", "scatter")


def target_table(zr, tr):
    """One row per target and D at 10^6 rows: what was measured, and whether it is met."""
    lines = ["", "## Against the targets, at 10^6 rows", "",
             "`scatter_grouped` is the scatter as the step and the pipeline call it (the "
             "unique's order); `scatter` is `zfcScatterToDense`, which sorts first. A target "
             "is met when the measured value before rounding reaches it.", "",
             "| target | D | measured | needed | met |", "|---|---|---|---|---|"]
    dims = sorted({d for (_, n, d) in zr if n == TARGET_N})
    for d in dims:
        z, t = zr.get(("pipeline", TARGET_N, d)), tr.get(("pipeline", TARGET_N, d))
        if z and t and d == PIPELINE_D:
            x = t["ms"] / z["ms"]
            lines.append(f"| pipeline against PyTorch | {d} | {x:.2f}x | "
                         f"{PIPELINE_TARGET:.0f}x | {'yes' if x >= PIPELINE_TARGET else 'no'} |")
    for kernel in COPY_KERNELS:
        for d in dims:
            r = zr.get((kernel, TARGET_N, d))
            if not r:
                continue
            share = r["bytes"] / (r["ms"] * 1e6) / r["copy_gbps"]
            lines.append(f"| {kernel} of copy bandwidth | {d} | {share:.2f} | "
                         f"{COPY_TARGET:.2f} | {'yes' if share >= COPY_TARGET else 'no'} |")
    if not dims:
        lines.append("| (no run at 10^6 rows) | | | | |")
    return lines


def check(page, lines):
    """Whether the page's "GPU:" line and its tables (from the first table heading to NOTES or
    the end) are these lines'."""
    with open(page, encoding="utf-8") as f:
        text = f.read()
    gpu = next(line for line in lines if line.startswith("GPU: "))
    if gpu not in text.splitlines():
        print(f"{page}: its GPU line differs from the runs':\n  runs: {gpu}")
        return False
    start = next(i for i, line in enumerate(lines) if line.startswith("## "))
    want = "\n".join(lines[start:]).strip()
    first = re.search("^" + re.escape(lines[start]) + "$", text, re.M)
    if first is None:
        print(f"{page}: no '{lines[start]}'")
        return False
    notes = re.search("^" + re.escape(NOTES), text[first.start():], re.M)
    end = first.start() + notes.start() if notes else len(text)
    got = text[first.start():end].strip()
    if got != want:
        for i, (g, w) in enumerate(zip(got.splitlines(), want.splitlines())):
            if g != w:
                print(f"{page}: line {i + 1} of the tables differs:\n  page: {g}\n  runs: {w}")
                break
        else:
            print(f"{page}: the tables have {len(got.splitlines())} lines, the runs make "
                  f"{len(want.splitlines())}")
        return False
    print(f"{page}: its tables are the raw outputs'")
    return True


def step_table(folder):
    """The fused step on device buffers over NCCL against ncclAllGather of all rows; nothing
    where the folder has no such run (a GPU machine without MPI)."""
    runs = glob.glob(os.path.join(folder, "zfc_perf_sparse_nccl_*np*.json"))
    if not runs:
        return []
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

    for path in sorted(runs, key=order):
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
