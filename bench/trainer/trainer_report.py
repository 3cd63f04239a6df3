#!/usr/bin/env python3
"""Tables and loss curves from the JSON logs of bench/trainer/run_trainer.sh.

usage: trainer_report.py LOG_DIR
Writes LOG_DIR/report.md (the tables docs/trainer.md quotes) and LOG_DIR/loss_curves.png.
"""
import glob
import json
import math
import os
import re
import sys


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def text_of(path):
    txt = path[:-5] + ".txt"
    return open(txt).read() if os.path.exists(txt) else ""


def throughput_rows(log_dir):
    rows = []
    for path in sorted(glob.glob(os.path.join(log_dir, "throughput_np*.json"))):
        m = re.search(r"throughput_np(\d+)_(.+)\.json", path)
        ranks, sync = int(m.group(1)), m.group(2)
        prog = [r for r in records(path) if r["event"] == "progress"][1:]  # first: warm-up
        if not prog:
            continue
        steps = sum(r["steps"] for r in prog)
        compute = sum(r["compute_s"] for r in prog) / steps
        comm = sum(r["comm_s"] for r in prog) / steps
        tps = sum(r["tokens_per_s"] * r["steps"] for r in prog) / steps
        rows.append({
            "ranks": ranks, "sync": sync, "words_per_rank": tps / ranks,
            "compute_ms": 1e3 * compute, "comm_ms": 1e3 * comm,
            "mb_per_step": sum(r["bytes_per_step"] * r["steps"] for r in prog) / steps / 1e6,
            "ug": sum(r["ug_ratio"] * r["steps"] for r in prog) / steps,
            "dense_ms": 1e3 * sum(r.get("dense_allreduce_s", 0) for r in prog) / steps,
            "in_ms": 1e3 * sum(r.get("input_plan_s", 0) for r in prog) / steps,
            "out_ms": 1e3 * sum(r.get("output_plan_s", 0) for r in prog) / steps,
        })
    order = ["allgather", "unique_allreduce", "unique_allreduce+fp16"]
    rows.sort(key=lambda r: (r["ranks"], order.index(r["sync"]) if r["sync"] in order else 9))
    return rows


def algorithms_of(recs):
    """What the input and output plans ran, each change as "step N: in / out"."""
    ran = [r for r in recs if r["event"] == "algorithms"]
    return "; ".join(f"step {r['step']}: {r['input_plan']} / {r['output_plan']}" for r in ran)


def validation_rows(log_dir):
    rows = []
    for path in sorted(glob.glob(os.path.join(log_dir, "valid_*.json"))):
        recs = records(path)
        valid = [r for r in recs if r["event"] == "valid"]
        prog = [r for r in recs if r["event"] == "progress"]
        text = text_of(path)
        uni = re.search(r"unigram perplexity of the held-out split: ([0-9.]+)", text)
        rows.append({
            "run": os.path.basename(path)[6:-5],
            "ppl": valid[-1]["ppl"] if valid else float("nan"),
            "unigram": float(uni.group(1)) if uni else float("nan"),
            "steps": prog[-1]["step"] if prog else 0,
            "elapsed": prog[-1]["elapsed"] if prog else 0,
            "skipped": sum(r["skipped"] for r in prog),
            "curve": [(r["step"], r["loss"]) for r in prog],
            "valid": [(r["step"], r["ppl"]) for r in valid],
            "algorithms": algorithms_of(recs),
        })
    return rows


def write_report(log_dir, thr, val):
    # bench/run_all.sh says what made the logs; they carry the same stamp.
    stamp = os.environ.get("ZIPFCOLL_BENCH_STAMP", "")
    lines = [f"_Made by {stamp}; raw logs: the .json and .txt files beside this page._", ""] \
        if stamp else []
    if thr:
        lines += ["| ranks | sync | words/s per rank | compute ms/step | library ms/step | "
                  "of which dense allreduce / input plan / output plan | "
                  "MB/step per rank | U_g/(G K) |", "|---|---|---|---|---|---|---|---|"]
        for r in thr:
            lines.append(f"| {r['ranks']} | {r['sync']} | {r['words_per_rank']:.0f} | "
                         f"{r['compute_ms']:.0f} | {r['comm_ms']:.0f} | "
                         f"{r['dense_ms']:.1f} / {r['in_ms']:.1f} / {r['out_ms']:.1f} | "
                         f"{r['mb_per_step']:.2f} | {r['ug']:.3f} |")
        lines.append("")
    if val:
        lines += ["| run | validation perplexity | bits/char | unigram perplexity | steps | "
                  "seconds | steps skipped (overflow) | plans ran (input / output) |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in val:
            bpc = f"{math.log2(r['ppl']):.3f}" if r["run"] == "char" else ""
            lines.append(f"| {r['run']} | {r['ppl']:.2f} | {bpc} | {r['unigram']:.2f} | "
                         f"{r['steps']} | {r['elapsed']:.0f} | {r['skipped']} | "
                         f"{r['algorithms']} |")
    with open(os.path.join(log_dir, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def plot(log_dir, val):
    if not val:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for r in val:
        if r["run"] == "char":
            continue
        xs, ys = zip(*r["curve"]) if r["curve"] else ([], [])
        axes[0].plot(xs, ys, label=r["run"])
        if r["valid"]:
            vx, vy = zip(*r["valid"])
            axes[1].plot(vx, vy, marker="o", label=r["run"])
    axes[0].set(xlabel="step", ylabel="training loss (sampled softmax, nats)",
                title="word LM, 4 ranks")
    axes[1].set(xlabel="step", ylabel="validation perplexity (full softmax)",
                title="held-out perplexity")
    for a in axes:
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(log_dir, "loss_curves.png"), dpi=110)


def main():
    log_dir = sys.argv[1]
    thr, val = throughput_rows(log_dir), validation_rows(log_dir)
    write_report(log_dir, thr, val)
    plot(log_dir, val)


if __name__ == "__main__":
    main()
