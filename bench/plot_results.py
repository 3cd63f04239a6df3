#!/usr/bin/env python3
"""Turns the raw output of bench/run_all.sh into CSV tables, PNG plots and a README.

usage: plot_results.py --raw DIR --out DIR [--command TEXT] [--seconds N] [--stamp TEXT]

Reads DIR/sparse_*.json and DIR/allreduce_*.json (zfc_perf --json), DIR/heaps_*.csv
(zfc_heaps --csv) and DIR/kernels.json (Google Benchmark), writes sparse.csv, allreduce.csv,
heaps.csv, kernels.csv and the plots into --out, and a README.md there that checks every
benchmark target against what this run measured.
"""
import argparse
import os

from results_data import PHASES, load_allreduce, load_heaps, load_kernels, load_sparse
from results_data import natural_key, write_csv
from results_plots import allreduce_plot, heaps_plot, kernels_plot, sparse_plot
from results_readme import write_readme


def write_tables(out, sparse, allreduce, heaps, kernels):
    write_csv(os.path.join(out, "sparse.csv"), sparse,
              ["workload", "G", "K", "D", "algo", "wire", "ran", "U_g", "U_g/GK", "time_us", "MB",
               "x_formula", "peak_ws_MB", "wrong", "speedup", "byte_ratio"] +
              ["phase_us_" + p for p in PHASES])
    write_csv(os.path.join(out, "allreduce.csv"), allreduce,
              ["G", "size", "count", "wire", "time_us", "algbw", "busbw", "wrong", "x_mpi",
               "peak_ws"])
    with open(os.path.join(out, "heaps.csv"), "w") as f:
        f.write("corpus,N,U_mean,U_min,U_max\n")
        for name, pts in sorted(heaps.items()):
            for p in pts:
                f.write(f"{name},{p[0]},{p[1]},{p[2]},{p[3]}\n")
    with open(os.path.join(out, "kernels.csv"), "w") as f:
        f.write("benchmark,real_time_ns,bytes_per_second,items_per_second,x_memcpy,label\n")
        for b in sorted(kernels, key=natural_key):
            f.write(f"{b.get('run_name', b['name'])},{b['real_time']:.1f},"
                    f"{b.get('bytes_per_second', '')},{b.get('items_per_second', '')},"
                    f"{b.get('x_memcpy', '')},{b.get('label', '')}\n")


def make_plots(out, sparse, allreduce, heaps, kernels):
    """Writes every PNG; returns the Heaps fits (all N, N >= 1e4) per corpus."""
    shown = [("allgather", "none"), ("allgather", "fp16"), ("unique_allreduce", "none"),
             ("unique_allreduce", "fp16"), ("unique_allgather", "none"),
             ("unique_allgather", "fp16"), ("auto", "none"), ("auto", "fp16")]
    sparse_plot(sparse, os.path.join(out, "sparse_step_time.png"),
                lambda r: r["time_us"] / 1e3, "step time (ms)",
                "embedding-gradient exchange: median step time (slowest rank)", shown)
    sparse_plot(sparse, os.path.join(out, "sparse_bytes.png"), lambda r: r["MB"],
                "MB sent + received per rank", "bytes per rank and step", shown)
    sparse_plot(sparse, os.path.join(out, "sparse_peak_workspace.png"),
                lambda r: r["peak_ws_MB"], "peak workspace (MB)",
                "peak library workspace (largest rank)",
                [("allgather", "none"), ("unique_allreduce", "none"),
                 ("unique_allreduce", "fp16"), ("unique_allgather", "none")], logy=False)
    kernels_plot(kernels, os.path.join(out, "kernels.png"))
    allreduce_plot(allreduce, os.path.join(out, "allreduce.png"))
    return heaps_plot(heaps, os.path.join(out, "heaps.png"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="bench/run_all.sh")
    ap.add_argument("--seconds", type=float, default=float("nan"))
    ap.add_argument("--stamp", default="")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    sparse, meta = load_sparse(a.raw)
    allreduce = load_allreduce(a.raw)
    heaps = load_heaps(a.raw)
    kernels, kctx = load_kernels(a.raw)
    write_tables(a.out, sparse, allreduce, heaps, kernels)
    fits = make_plots(a.out, sparse, allreduce, heaps, kernels)
    write_readme(a.out, (sparse, meta, allreduce, kernels, kctx), fits, a.command, a.seconds,
                 a.stamp)


if __name__ == "__main__":
    main()
