"""The PNG plots of docs/benchmarks."""
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from results_data import ALGO_COLORS, WIRE_STYLES, fit, kernel_label  # noqa: E402
from results_data import kernel_size, pick  # noqa: E402


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
    for b in kernels:
        m = re.search(r"BM_StdSortUnique/N:(\d+)", b["name"])
        if m:
            n = int(m.group(1))
            uniq.setdefault((100000, "std::sort"), []).append((n, n / (b["real_time"] * 1e-9)))
    styles = {"auto": "-", "bitmap": "--", "hash": "-.", "sort": ":", "std::sort": (0, (1, 3))}
    colors = {100000: "tab:blue", 10000000: "tab:orange"}
    for (v, label), pts in sorted(uniq.items()):
        pts.sort()
        ax2.plot([p[0] for p in pts], [p[1] / 1e6 for p in pts], linestyle=styles[label],
                 marker="o",
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
