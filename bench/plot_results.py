#!/usr/bin/env python3
"""Turns the raw output of bench/run_all.sh into CSV tables, PNG plots and a README.

usage: plot_results.py --raw DIR --out DIR [--command TEXT] [--seconds N]

Reads DIR/sparse_*.json and DIR/allreduce_*.json (zfc_perf --json), DIR/heaps_*.csv
(zfc_heaps --csv) and DIR/kernels.json (Google Benchmark), and checks every target of the
benchmark issue against what was measured in this run.
"""
import argparse
import csv
import glob
import json
import math
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

ALGO_COLORS = {"allgather": "tab:red", "unique_allreduce": "tab:blue",
               "unique_allgather": "tab:green", "auto": "tab:purple", "dense_vocab": "tab:gray"}
WIRE_STYLES = {"none": "-", "fp16": "--", "bf16": ":"}
PHASES = ["local", "header", "index_exchange", "merge", "scatter", "row_exchange", "total"]


def load_sparse(raw):
    rows, meta = [], None
    for path in sorted(glob.glob(os.path.join(raw, "sparse_*.json"))):
        with open(path) as f:
            doc = json.load(f)
        meta = meta or doc
        opts = doc["options"]
        workload = os.path.basename(opts["corpus"].rstrip("/")) if opts["corpus"] else "zipf"
        for r in doc["rows"]:
            r = dict(r)
            r["workload"] = workload
            rows.append(r)
    return rows, meta


def load_allreduce(raw):
    rows = []
    for path in sorted(glob.glob(os.path.join(raw, "allreduce_*.json"))):
        with open(path) as f:
            doc = json.load(f)
        for r in doc["rows"]:
            r = dict(r)
            r["G"] = doc["ranks"]
            rows.append(r)
    return rows


def load_heaps(raw):
    out = {}
    for path in sorted(glob.glob(os.path.join(raw, "heaps_*.csv"))):
        name = os.path.basename(path)[len("heaps_"):-len(".csv")]
        with open(path) as f:
            out[name] = [(int(r["N"]), float(r["U_mean"]), float(r["U_min"]), float(r["U_max"]))
                         for r in csv.DictReader(f)]
    return out


def load_kernels(raw):
    """The fastest repetition of every benchmark, with its counters."""
    path = os.path.join(raw, "kernels.json")
    if not os.path.exists(path):
        return [], {}
    with open(path) as f:
        doc = json.load(f)
    best = {}
    for b in doc["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        name = b.get("run_name", b["name"])
        if name not in best or b["real_time"] < best[name]["real_time"]:
            best[name] = b
    return list(best.values()), doc.get("context", {})


def fit(points, n_min=0):
    pts = [(n, u) for n, u, *_ in points if n >= n_min and u > 0]
    if len(pts) < 2:
        return None
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    beta, logk = np.polyfit(x, y, 1)
    return beta, math.exp(logk), pts[0][0], pts[-1][0]


def write_csv(path, rows, keys):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def pick(rows, **kw):
    return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]


def one(rows, **kw):
    got = pick(rows, **kw)
    return got[0] if got else None


def panels(rows):
    """(workload, K, D) combinations present, real text first."""
    combos = sorted({(r["workload"], r["K"], r["D"]) for r in rows},
                    key=lambda c: (c[0] == "zipf", c[1], c[2]))
    return combos


def sparse_plot(rows, path, value, ylabel, title, variants, logy=True):
    combos = panels(rows)
    if not combos:
        return
    cols = min(4, len(combos))
    nrows = (len(combos) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.4 * nrows), squeeze=False)
    for ax, (wl, k, d) in zip(axes.flat, combos):
        for algo, wire in variants:
            pts = sorted((r["G"], value(r)) for r in pick(rows, workload=wl, K=k, D=d,
                                                         algo=algo, wire=wire))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], WIRE_STYLES[wire], marker="o",
                        ms=3, color=ALGO_COLORS[algo], label=f"{algo} {wire}")
        ax.set_title(f"{wl}, K={k}, D={d}", fontsize=9)
        ax.set_xscale("log", base=2)
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel("ranks G")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(combos):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.08, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def heaps_plot(heaps, path):
    if not heaps:
        return {}
    fits = {}
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for (name, pts), color in zip(sorted(heaps.items()), ["tab:blue", "tab:orange", "tab:green"]):
        n = np.array([p[0] for p in pts], dtype=float)
        u = np.array([p[1] for p in pts])
        ax.plot(n, u, "o", color=color, ms=4, label=f"{name}: U(N), windows of 20 words")
        f = fit(pts, 10000)
        fits[name] = (fit(pts), f)
        if f:
            beta, k, lo, hi = f
            xs = np.array([lo, hi], dtype=float)
            ax.plot(xs, k * xs ** beta, "-", color=color,
                    label=f"{name}: fit N^{beta:.2f} over [{lo:.0e}, {hi:.1e}]")
    n_all = np.array(sorted({p[0] for pts in heaps.values() for p in pts}), dtype=float)
    ref = list(heaps.values())[0]
    k064 = ref[0][1] / ref[0][0] ** 0.64
    ax.plot(n_all, k064 * n_all ** 0.64, "k:", label="N^0.64 (paper, Fig. 1)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("tokens N")
    ax.set_ylabel("distinct words U(N)")
    ax.set_title("Heaps' law on the bundled corpora")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return fits


def kernel_label(b):
    name = b.get("run_name", b["name"])
    return name.split("/")[0].replace("BM_", "")


def kernel_size(b):
    m = re.search(r"rows:(\d+)", b["name"])
    return int(m.group(1)) if m else None


def kernels_plot(kernels, path):
    if not kernels:
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    series = {}
    for b in kernels:
        rows = kernel_size(b)
        if rows is not None and "x_memcpy" in b:
            series.setdefault(kernel_label(b), []).append((rows * 512, b["x_memcpy"]))
    for name, pts in sorted(series.items()):
        pts.sort()
        ax1.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=name)
    ax1.axhline(0.7, color="k", ls=":", label="target 0.7")
    ax1.set_xscale("log")
    ax1.set_xlabel("elements (rows x 512)")
    ax1.set_ylabel("bandwidth / memcpy bandwidth")
    ax1.set_title("row and cast kernels against memcpy (1 core)")
    ax1.grid(True, alpha=0.3)
    ax1.legend(fontsize=7)
    uniq = {}
    for b in kernels:
        m = re.search(r"BM_LocalUnique/N:(\d+)/V:(\d+)/method:(\d)", b["name"])
        if m:
            n, v, meth = int(m.group(1)), int(m.group(2)), int(m.group(3))
            label = ["auto", "bitmap", "hash", "sort"][meth]
            uniq.setdefault((v, label), []).append((n, n / (b["real_time"] * 1e-9)))
    styles = {"auto": "-", "bitmap": "--", "hash": "-.", "sort": ":"}
    colors = {100000: "tab:blue", 10000000: "tab:orange"}
    for (v, label), pts in sorted(uniq.items()):
        pts.sort()
        ax2.plot([p[0] for p in pts], [p[1] / 1e6 for p in pts], styles[label], marker="o",
                 ms=3, color=colors.get(v, "k"), label=f"V={v:.0e} {label}")
    ax2.axhline(100, color="k", ls=":", label="target 100 M keys/s")
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("keys N")
    ax2.set_ylabel("M keys/s")
    ax2.set_title("local unique with inverse (1 core)")
    ax2.grid(True, alpha=0.3)
    ax2.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def allreduce_plot(rows, path):
    if not rows:
        return
    gs = sorted({r["G"] for r in rows})
    fig, axes = plt.subplots(1, len(gs), figsize=(4.5 * len(gs), 3.8), squeeze=False)
    for ax, g in zip(axes.flat, gs):
        for wire, color in [("MPI_Allreduce", "k"), ("none", "tab:blue"), ("fp16", "tab:green"),
                            ("bf16", "tab:orange")]:
            pts = sorted((r["size"], r["time_us"]) for r in pick(rows, G=g, wire=wire))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3,
                        color=color, label=wire)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("fp32 bytes per rank")
        ax.set_ylabel("time (us)")
        ax.set_title(f"zfcAllReduce vs MPI_Allreduce, G={g}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fmt(v, spec=".2f"):
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def targets(sparse, allreduce, kernels):
    """Rows of (target, measured, verdict)."""
    out = []
    # 1. local unique >= 100 M keys/s up to 1 M keys.
    for v in (100000, 10000000):
        rates = []
        for b in kernels:
            m = re.search(r"BM_LocalUnique/N:(\d+)/V:(\d+)/method:0", b["name"])
            if m and int(m.group(2)) == v and int(m.group(1)) <= 1000000:
                rates.append((int(m.group(1)) / (b["real_time"] * 1e-9), int(m.group(1))))
        if rates:
            worst = min(rates)
            out.append((f"local unique >= 100 M keys/s for N <= 1e6 (V = {v:.0e}, automatic "
                        "method)", f"slowest {worst[0] / 1e6:.0f} M keys/s (N = {worst[1]})",
                        "met" if worst[0] >= 100e6 else
                        f"missed by {100 - worst[0] / 1e6:.0f} M keys/s"))
    # 2. casts >= 70% of memcpy.
    for name in ("EncodeFp16", "DecodeFp16", "EncodeBf16", "DecodeBf16"):
        fr = [(b["x_memcpy"], kernel_size(b)) for b in kernels if kernel_label(b) == name]
        if fr:
            lo = min(fr)
            out.append((f"{name} >= 0.70 of memcpy",
                        f"{min(f for f, _ in fr):.2f} .. {max(f for f, _ in fr):.2f} "
                        f"(lowest at {lo[1]} rows)",
                        "met at every size" if lo[0] >= 0.7 else
                        "met at " + ", ".join(str(s) for f, s in sorted(fr, key=lambda t: t[1])
                                             if f >= 0.7) + " rows" if any(f >= 0.7 for f, _ in fr)
                        else "missed"))
    # 3. speedup >= byte ratio at G=8, K=640, D=512 on real text (and K=2560).
    for k in (640, 2560):
        for wire in ("none", "fp16"):
            r = one(sparse, workload="gutenberg", G=8, K=k, D=512, algo="unique_allreduce",
                    wire=wire)
            if r:
                ok = r["speedup"] >= r["byte_ratio"]
                out.append((f"unique_allreduce {wire} speedup >= byte ratio vs allgather fp32 "
                            f"(G=8, K={k}, D=512, gutenberg)",
                            f"speedup {r['speedup']:.2f}x, byte ratio {r['byte_ratio']:.2f}x",
                            "met" if ok else
                            f"missed by {100 * (1 - r['speedup'] / r['byte_ratio']):.0f}%"))
    # 4. bytes within 5% of the formula.
    if sparse:
        dev = max(abs(r["x_formula"] - 1) for r in sparse if r["x_formula"] is not None)
        out.append(("bytes per rank within 5% of each algorithm's formula",
                    f"largest deviation {100 * dev:.3f}% over {len(sparse)} rows",
                    "met" if dev <= 0.05 else "missed"))
    # 5. peak workspace: unique_allreduce flat (+-10%) from 2 to 8 ranks, allgather linear.
    for wl in sorted({r["workload"] for r in sparse}):
        for k in sorted({r["K"] for r in sparse}):
            ua = {r["G"]: r["peak_ws_MB"] for r in pick(sparse, workload=wl, K=k, D=512,
                                                        algo="unique_allreduce", wire="none")}
            ag = {r["G"]: r["peak_ws_MB"] for r in pick(sparse, workload=wl, K=k, D=512,
                                                        algo="allgather", wire="none")}
            if 2 in ua and 8 in ua and 2 in ag and 8 in ag:
                g_ua, g_ag = ua[8] / ua[2], ag[8] / ag[2]
                out.append((f"peak workspace 2 -> 8 ranks: unique_allreduce flat (+-10%), "
                            f"allgather linear ({wl}, K={k}, D=512)",
                            f"unique_allreduce x{g_ua:.2f} ({ua[2]:.1f} -> {ua[8]:.1f} MB), "
                            f"allgather x{g_ag:.2f} ({ag[2]:.1f} -> {ag[8]:.1f} MB)",
                            "met" if abs(g_ua - 1) <= 0.1 else
                            f"missed: grows x{g_ua:.2f} (U_g grows with G)"))
    # 6. allreduce none within 1.3x MPI_Allreduce at 64 MiB.
    for r in sorted(pick(allreduce, wire="none", size=64 * 1024 * 1024), key=lambda r: r["G"]):
        out.append((f"zfcAllReduce (no compression) within 1.3x MPI_Allreduce at 64 MiB, "
                    f"G={r['G']}", f"{r['x_mpi']:.2f}x", "met" if r["x_mpi"] <= 1.3 else
                    f"missed by {100 * (r['x_mpi'] / 1.3 - 1):.0f}%"))
    return out


def sparse_table(sparse, wl, g, d):
    lines = ["| K | algorithm | wire | U_g/(G·K) | step time (ms) | MB/rank | vs formula | "
             "peak workspace (MB) | speedup | byte ratio | #wrong |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(pick(sparse, workload=wl, G=g, D=d),
                    key=lambda r: (r["K"], list(ALGO_COLORS).index(r["algo"]),
                                   list(WIRE_STYLES).index(r["wire"]))):
        lines.append(f"| {r['K']} | {r['algo']}{' → ' + r['ran'] if r['algo'] == 'auto' else ''}"
                     f" | {r['wire']} | {r['U_g/GK']:.3f} | {r['time_us'] / 1e3:.2f} | "
                     f"{r['MB']:.3f} | {r['x_formula']:.4f} | {r['peak_ws_MB']:.2f} | "
                     f"{r['speedup']:.2f} | {fmt(r['byte_ratio'])} | {r['wrong']:.0f} |")
    return "\n".join(lines)


def phase_table(sparse, wl, g, d):
    lines = ["| K | algorithm | wire | step | " + " | ".join(PHASES[:-1]) + " |",
             "|---|---|---|---|" + "---|" * (len(PHASES) - 1)]
    for r in sorted(pick(sparse, workload=wl, G=g, D=d),
                    key=lambda r: (r["K"], list(ALGO_COLORS).index(r["algo"]),
                                   list(WIRE_STYLES).index(r["wire"]))):
        if r["algo"] not in ("allgather", "unique_allreduce") or r["wire"] == "bf16":
            continue
        cells = [f"{r.get('phase_us_' + p, float('nan')) / 1e3:.1f}" for p in PHASES[:-1]]
        lines.append(f"| {r['K']} | {r['algo']} | {r['wire']} | {r['time_us'] / 1e3:.1f} | " +
                     " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="bench/run_all.sh")
    ap.add_argument("--seconds", type=float, default=float("nan"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)

    sparse, meta = load_sparse(a.raw)
    allreduce = load_allreduce(a.raw)
    heaps = load_heaps(a.raw)
    kernels, kctx = load_kernels(a.raw)

    write_csv(os.path.join(a.out, "sparse.csv"), sparse,
              ["workload", "G", "K", "D", "algo", "wire", "ran", "U_g", "U_g/GK", "time_us", "MB",
               "x_formula", "peak_ws_MB", "wrong", "speedup", "byte_ratio"] +
              ["phase_us_" + p for p in PHASES])
    write_csv(os.path.join(a.out, "allreduce.csv"), allreduce,
              ["G", "size", "count", "wire", "time_us", "algbw", "busbw", "wrong", "x_mpi",
               "peak_ws"])
    with open(os.path.join(a.out, "heaps.csv"), "w") as f:
        f.write("corpus,N,U_mean,U_min,U_max\n")
        for name, pts in sorted(heaps.items()):
            for p in pts:
                f.write(f"{name},{p[0]},{p[1]},{p[2]},{p[3]}\n")
    with open(os.path.join(a.out, "kernels.csv"), "w") as f:
        f.write("benchmark,real_time_ns,bytes_per_second,items_per_second,x_memcpy,label\n")
        for b in sorted(kernels, key=lambda b: b["name"]):
            f.write(f"{b.get('run_name', b['name'])},{b['real_time']:.1f},"
                    f"{b.get('bytes_per_second', '')},{b.get('items_per_second', '')},"
                    f"{b.get('x_memcpy', '')},{b.get('label', '')}\n")

    base = [("allgather", "none"), ("allgather", "fp16"), ("unique_allreduce", "none"),
            ("unique_allreduce", "fp16"), ("unique_allgather", "none"),
            ("unique_allgather", "fp16"), ("auto", "none"), ("auto", "fp16")]
    sparse_plot(sparse, os.path.join(a.out, "sparse_step_time.png"),
                lambda r: r["time_us"] / 1e3, "step time (ms)",
                "embedding-gradient exchange: median step time (slowest rank)", base)
    sparse_plot(sparse, os.path.join(a.out, "sparse_bytes.png"), lambda r: r["MB"],
                "MB sent + received per rank", "bytes per rank and step", base)
    sparse_plot(sparse, os.path.join(a.out, "sparse_peak_workspace.png"),
                lambda r: r["peak_ws_MB"], "peak workspace (MB)",
                "peak library workspace (largest rank)",
                [("allgather", "none"), ("unique_allreduce", "none"),
                 ("unique_allreduce", "fp16"), ("unique_allgather", "none")], logy=False)
    fits = heaps_plot(heaps, os.path.join(a.out, "heaps.png"))
    kernels_plot(kernels, os.path.join(a.out, "kernels.png"))
    allreduce_plot(allreduce, os.path.join(a.out, "allreduce.png"))

    machine = meta["machine"] if meta else {}
    lines = ["# zipfcoll benchmark results", "",
             "Produced by one command, which also wrote every file in this folder:", "",
             "```", a.command, "```", ""]
    if meta:
        lines += [f"- machine: {machine.get('cpu')}, {machine.get('logical_cores')} logical "
                  f"cores, {machine.get('memory')} memory, {machine.get('os')}",
                  f"- zipfcoll {meta['version']}; {meta['mpi']}",
                  f"- kernel benchmarks: {kctx.get('num_cpus', '?')} CPUs at "
                  f"{kctx.get('mhz_per_cpu', '?')} MHz (Google Benchmark's own library build: "
                  f"{kctx.get('library_build_type', '?')}; the kernels are built Release)",
                  f"- wall time of the whole run: {a.seconds:.0f} s", ""]
    lines += ["Ranks are processes on this one machine (shared memory through MPI), so G = 8 "
              "runs 8 processes on the machine's cores: times include oversubscription and "
              "vary from run to run; bytes, U_g and workspace are exact. Every speedup and "
              "ratio compares measurements of the same run.", "",
              "## Targets", "", "| target | measured | verdict |", "|---|---|---|"]
    for t, m, v in targets(sparse, allreduce, kernels):
        lines.append(f"| {t} | {m} | {v} |")
    lines += ["", "## Sparse exchange", "",
              "![step time](sparse_step_time.png)", "", "![bytes](sparse_bytes.png)", "",
              "![peak workspace](sparse_peak_workspace.png)", ""]
    for wl in sorted({r["workload"] for r in sparse}, key=lambda w: w == "zipf"):
        gmax = max(r["G"] for r in sparse)
        dims = sorted({r["D"] for r in sparse})
        d = 512 if 512 in dims else dims[0]
        lines += [f"### {wl}, G = {gmax}, D = {d}", "", sparse_table(sparse, wl, gmax, d), ""]
    if sparse:
        gmax = max(r["G"] for r in sparse)
        dims = sorted({r["D"] for r in sparse})
        d = 512 if 512 in dims else dims[0]
        wl = "gutenberg" if any(r["workload"] == "gutenberg" for r in sparse) else "zipf"
        lines += [f"### Where the time goes ({wl}, G = {gmax}, D = {d}; ms per step, the "
                  "slowest rank's mean per phase, waiting included)", "",
                  phase_table(sparse, wl, gmax, d), ""]
    lines += ["Full table: [sparse.csv](sparse.csv).", "", "## Heaps' law", "",
              "![heaps](heaps.png)", "", "| corpus | beta, all N | beta, N >= 1e4 |",
              "|---|---|---|"]
    for name, (all_fit, big_fit) in sorted(fits.items()):
        lines.append(f"| {name} | {fmt(all_fit[0] if all_fit else None, '.3f')} over "
                     f"[{all_fit[2]}, {all_fit[3]}] | "
                     f"{fmt(big_fit[0] if big_fit else None, '.3f')} |")
    lines += ["", "The paper's Figure 1 reports U ∝ N^0.64 on the 1-Billion-word benchmark.", "",
              "## Kernels (one core, fastest of the repetitions)", "", "![kernels](kernels.png)",
              "", "| benchmark | time | GB/s | M items/s | of memcpy |", "|---|---|---|---|---|"]
    for b in sorted(kernels, key=lambda b: b["name"]):
        name = b.get("run_name", b["name"])
        if "method:1" in name or "method:2" in name or "method:3" in name:
            continue
        lines.append(f"| {name} {b.get('label', '')} | {b['real_time'] / 1e3:.1f} us | "
                     f"{b.get('bytes_per_second', 0) / 1e9:.1f} | "
                     f"{fmt(b.get('items_per_second', float('nan')) / 1e6, '.0f')} | "
                     f"{b.get('x_memcpy', float('nan')):.2f} |")
    lines += ["", "Every method of the local unique, per size: [kernels.csv](kernels.csv).", "",
              "## Allreduce", "", "![allreduce](allreduce.png)", "",
              "| G | wire | time at 64 MiB (ms) | busbw (GB/s) | x MPI_Allreduce |",
              "|---|---|---|---|---|"]
    for r in sorted(pick(allreduce, size=64 * 1024 * 1024), key=lambda r: (r["G"], r["wire"])):
        lines.append(f"| {r['G']} | {r['wire']} | {r['time_us'] / 1e3:.1f} | {r['busbw']:.2f} | "
                     f"{r['x_mpi']:.2f} |")
    lines += ["", "Full table: [allreduce.csv](allreduce.csv). Raw program output: [raw/](raw/).",
              ""]
    notes = os.path.join(a.out, "NOTES.md")
    if os.path.exists(notes):
        lines += ["## Reading the results", "", open(notes).read().strip(), ""]
    with open(os.path.join(a.out, "README.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
