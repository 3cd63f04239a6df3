#!/usr/bin/env python3
"""Writes docs/benchmarks/scale_model.md, scale.csv and scale_projection.png from the raw
output of bench/run_scale.sh: owner_partitioned against unique_allreduce, auto against the
best fixed algorithm, the cost model's error against measured times, and zfc_model's
projection to 4096 ranks beside the paper's Table III.

usage: scale_report.py --raw DIR --out DIR
"""
import argparse
import glob
import json
import os
import re
import statistics

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# "Language Modeling at Scale", Table III: word LM on 1-Billion words, Titan X GPUs, 8 per
# node, parallel efficiency against 8 GPUs with the paper's techniques.
PAPER_G = [8, 16, 24, 32, 64]
PAPER_EFF = [1.00, 0.90, 0.76, 0.67, 0.40]
FIXED = ["allgather", "unique_allreduce", "unique_allgather", "owner_partitioned", "key_routed",
         "hierarchical", "dense_vocab"]


def load_runs(raw):
    runs = {}
    for path in sorted(glob.glob(os.path.join(raw, "*.json"))):
        with open(path) as f:
            doc = json.load(f)
        runs[os.path.basename(path)[:-5]] = doc["rows"]
    return runs


def load_model(path):
    rows = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 10 and not line.startswith("#") and p[0] != "algo":
                rows.append({"algo": p[0], "wire": p[1], "G": int(p[2]), "U_g": float(p[3]),
                             "MB": float(p[4]), "xnode_MB": float(p[5]), "ws_MB": float(p[6]),
                             "exchange_ms": float(p[7]), "step_ms": float(p[8]),
                             "eff": float(p[9])})
    return rows


def owner_rows(runs):
    out = []
    for name, rows in sorted(runs.items()):
        for wire in ("none", "fp16"):
            by = {r["algo"]: r for r in rows if r["wire"] == wire}
            if "owner_partitioned" in by and "unique_allreduce" in by:
                o, u = by["owner_partitioned"], by["unique_allreduce"]
                out.append((name, wire, o["MB"] / u["MB"], u["time_us"] / o["time_us"]))
    return out


def auto_rows(runs):
    out = []
    for name, rows in sorted(runs.items()):
        for wire in ("none", "fp16"):
            fixed = [r for r in rows if r["wire"] == wire and r["algo"] in FIXED]
            auto = [r for r in rows if r["wire"] == wire and r["algo"] == "auto"]
            if fixed and auto:
                best = min(fixed, key=lambda r: r["time_us"])
                out.append((name, wire, auto[0]["ran"], best["algo"],
                            auto[0]["time_us"] / best["time_us"]))
    return out


def machine_models(raw):
    """The machine models the runs predicted with, as zfc_perf printed them."""
    seen = set()
    for path in glob.glob(os.path.join(raw, "*.txt")):
        with open(path) as f:
            for line in f:
                if line.startswith("# cost model:"):
                    # Ranks per core is counted in each run; the figures are the model.
                    text = line[len("# cost model:"):].strip()
                    seen.add(re.sub(r", [0-9.e+]+ ranks per core$", "", text))
    return "; ".join(sorted(seen)) + " (ranks per core as each run counted)" if seen \
        else "unknown"


def model_errors(runs):
    errs = []
    for name, rows in sorted(runs.items()):
        for r in rows:
            if r.get("model_us") is not None and r["time_us"] > 0:
                errs.append((name, r["algo"], r["wire"], r["G"], r["model_err"]))
    return errs


def plot(models, out):
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.plot(PAPER_G, PAPER_EFF, "ko-", label="paper, Table III (Titan X, measured)")
    styles = {"paper": "-", "h100": "--"}
    for setup, rows in sorted(models.items()):
        for algo, color in (("allgather", "tab:red"), ("unique_allreduce", "tab:blue"),
                            ("owner_partitioned", "tab:orange"), ("hierarchical", "tab:green")):
            wire = "none" if algo == "allgather" else "fp16"
            pts = [(r["G"], r["eff"]) for r in rows if r["algo"] == algo and r["wire"] == wire]
            if pts:
                g, e = zip(*pts)
                ax.plot(g, e, styles.get(setup, ":"), color=color,
                        label=f"model {setup}: {algo} {wire}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("ranks (GPUs), 8 per node")
    ax.set_ylabel("weak-scaling parallel efficiency vs 8")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("word LM step (K=640, D=512, V=100k, gutenberg's U(N)): projection")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "scale_projection.png"), dpi=110)


def write_csv(models, out):
    with open(os.path.join(out, "scale.csv"), "w") as f:
        f.write("setup,algo,wire,G,U_g,MB,xnode_MB,ws_MB,exchange_ms,step_ms,eff\n")
        for setup, rows in sorted(models.items()):
            for r in rows:
                f.write(f"{setup},{r['algo']},{r['wire']},{r['G']},{r['U_g']:.0f},{r['MB']},"
                        f"{r['xnode_MB']},{r['ws_MB']},{r['exchange_ms']},{r['step_ms']},"
                        f"{r['eff']}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    runs = load_runs(a.raw)
    models = {os.path.basename(p)[6:-4]: load_model(p)
              for p in glob.glob(os.path.join(a.raw, "model_*.txt"))}
    plot(models, a.out)
    write_csv(models, a.out)
    with open(os.path.join(a.out, "scale_report.txt"), "w") as f:
        f.write("owner_partitioned vs unique_allreduce: run wire byte_ratio speedup\n")
        for r in owner_rows(runs):
            f.write(f"  {r[0]:32s} {r[1]:5s} {r[2]:.3f} {r[3]:.2f}\n")
        f.write("auto vs best fixed: run wire auto_ran best auto/best\n")
        for r in auto_rows(runs):
            f.write(f"  {r[0]:32s} {r[1]:5s} {r[2]:22s} {r[3]:18s} {r[4]:.3f}\n")
        errs = model_errors(runs)
        f.write("model error (predicted / measured - 1) per run, "
                f"with the machine model {machine_models(a.raw)}:\n")
        for name in sorted({e[0] for e in errs}):
            es = [abs(e[4]) for e in errs if e[0] == name]
            f.write(f"  {name:32s} median |err| {statistics.median(es):.3f} max {max(es):.3f}\n")
        # Per algorithm and wire over the sweep's G = 2..8 rows: the model's target is
        # |err| <= 25 % for every one of them.
        f.write("model error per algorithm and wire (G = 2..8): median |err|, worst |err|, "
                "rows within 25%\n")
        for algo, wire in sorted({(e[1], e[2]) for e in errs if 2 <= e[3] <= 8}):
            es = [abs(e[4]) for e in errs if (e[1], e[2]) == (algo, wire) and 2 <= e[3] <= 8]
            f.write(f"  {algo:18s} {wire:5s} median {statistics.median(es):.3f} "
                    f"worst {max(es):.3f} {sum(1 for e in es if e <= 0.25)}/{len(es)}\n")
        allabs = [abs(e[4]) for e in errs]
        f.write(f"all rows: median |err| {statistics.median(allabs):.3f}, "
                f"{sum(1 for e in allabs if e <= 0.25)}/{len(allabs)} within 25%\n")
    print(open(os.path.join(a.out, "scale_report.txt")).read())


if __name__ == "__main__":
    main()
