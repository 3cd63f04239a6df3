#!/usr/bin/env python3
"""Writes docs/benchmarks/sharded.md from the raw outputs of bench/run_sharded.sh: per rank
count, bytes per rank and step, the busiest rank's received bytes, workspace and table memory
of each variant, and the targets checked against them.

usage: sharded_report.py --raw DIR --out FILE
"""
import argparse

from table_runs import load, row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    runs = load(a.raw)
    if not runs:
        raise SystemExit("sharded_report.py: no raw outputs in " + a.raw)
    first = next(iter(runs.values()))
    made_by = first.get("made_by", "(not stamped)")
    vocab, dim, tokens = (first["options"][k] for k in ("vocab", "dim", "tokens_per_rank"))
    lines = [
        "# Sharded tables against replicated ones",
        "",
        f"A table of V = {vocab} rows of D = {dim} fp32 values trained with SGD on real text",
        f"(gutenberg, K = {tokens} tokens per rank and step), kept replicated on every rank",
        "(`zfcSparseReduce` then `zfcApplyUpdate` on the whole table) or sharded by rows",
        "(`zfcShardedGather` for the forward lookup, then `zfcShardedReduceApply`). Made by",
        "`bench/run_sharded.sh` (raw outputs in `raw_sharded/`: " + made_by + ").",
        "MB is sent + received per rank and step, the mean over ranks; recv_max_MB the",
        "busiest rank's received bytes; table_MB the table one rank holds (the largest",
        "shard), apart from the library's workspace (peak_ws_MB). A sharded step is the",
        "gather and the update together; a replicated one the reduce and the update.",
        "`wrong` compares each table after the last step with the baseline's: bit for bit in",
        "fp32, within a bound on the wire's rounding in fp16 (`bench/perf/perf_table_steps.cpp`).",
        "",
        "| G | variant | MB | recv_max_MB | peak_ws_MB | table_MB | rounds | wrong |",
        "|---|---------|----|-------------|------------|----------|--------|-------|",
    ]
    for g, run in runs.items():
        for algo, wire in [("allgather", "none"), ("owner_partitioned", "none"),
                           ("owner_partitioned", "fp16"), ("sharded", "none"),
                           ("sharded", "fp16")]:
            r = row(run, algo, wire)
            lines.append(f"| {g} | {algo}/{wire} | {r['MB']:.3f} | {r['recv_max_MB']:.3f} | "
                         f"{r['peak_ws_MB']:.3f} | {r['table_MB']:.2f} | {r['rounds']:.0f} | "
                         f"{r['wrong']:.0f} |")
    lines += ["", "## Targets", ""]
    g8 = runs.get(8)
    if g8 is not None:
        best = min(row(g8, a, w)["MB"] for a, w in [("allgather", "none"),
                   ("owner_partitioned", "none"), ("owner_partitioned", "fp16")])
        sharded = row(g8, "sharded", "fp16")["MB"]
        verdict = "met" if sharded <= 0.5 * best else "not met"
        lines.append(f"- Bytes per rank and step at G = 8, sharded fp16 against the best "
                     f"replicated algorithm: {sharded:.3f} MB / {best:.3f} MB = "
                     f"{sharded / best:.3f} (target <= 0.5: {verdict}).")
    norm = {g: row(run, "sharded", "fp16")["MB"] / ((g - 1) / g) for g, run in runs.items()}
    lo, hi = min(norm.values()), max(norm.values())
    mid = (lo + hi) / 2
    spread = (hi - lo) / 2 / mid
    verdict = "met" if spread <= 0.15 else "not met"
    lines.append("- Sharded fp16 MB divided by (G-1)/G: " +
                 ", ".join(f"G={g}: {v:.3f}" for g, v in norm.items()) +
                 f"; within +-{100 * spread:.1f} % of {mid:.3f} (target +-15 %: {verdict}).")
    worst = 0.0
    for g, run in runs.items():
        r = row(run, "sharded", "fp16")
        row_mb = dim * 4 / 1e6
        worst = max(worst, abs(r["table_MB"] - vocab * row_mb / g) / row_mb)
    verdict = "met" if worst <= 1.0 else "not met"
    lines.append(f"- Table memory per rank against V*D*4/G: the largest shard is within "
                 f"{worst:.2f} rows of it at every G (target: one row: {verdict}).")
    lines.append("")
    with open(a.out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
