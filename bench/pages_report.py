#!/usr/bin/env python3
"""The pages of docs/benchmarks/ that bench/run_all.sh makes from its own raw outputs:

  transports.md   the fused sparse reduce over MPI and over UCX in one run
                  (raw/transports_G<G>.json)
  seed_groups.md  the output embedding's rows with S seed groups of sampled-softmax
                  candidates (raw/seed_groups_S<S>.json)

usage: pages_report.py --raw DIR --out DIR [--stamp TEXT]
Every number on a page is read from the raw file the page names.
"""
import argparse
import glob
import json
import os
import re


def load(path):
    with open(path) as f:
        return json.load(f)


def rel_command(doc):
    """The recorded command with the program's path relative to the source root."""
    cmd = doc["command"]
    return re.sub(r"^\S*/(build/bench/)", r"\1", cmd)


def numbered(raw, prefix):
    """raw/<prefix><n>.json in the order of n, with each n."""
    found = []
    for path in glob.glob(os.path.join(raw, f"{prefix}*.json")):
        m = re.fullmatch(re.escape(prefix) + r"(\d+)\.json", os.path.basename(path))
        if m:
            found.append((int(m.group(1)), path))
    return sorted(found)


def page_head(title, stamp, files):
    """The title, the stamp and the list of raw files a page reads."""
    lines = [f"# {title}", ""] + ([f"_{stamp}_", ""] if stamp else [])
    return lines, ", ".join(f"`raw/{os.path.basename(f)}`" for _, f in files)


def transports_page(raw, stamp):
    files = numbered(raw, "transports_G")
    if not files:
        return None
    lines, named = page_head("MPI and UCX in one run", stamp, files)
    lines += ["The fused sparse reduce on real text, the same steps over MPI and over UCX in",
              "one `zfc_perf` run (the UCX communicator is made from the same processes). Time",
              "is the median over steps of the slowest rank; MB is sent + received per rank",
              "and step. Raw outputs: " + named + ".", ""]
    for _, path in files:
        lines += ["```", rel_command(load(path)), "```", ""]
    lines += ["| G | algorithm | wire | MB/rank | MPI step (µs) | UCX step (µs) | UCX / MPI |"
              " same bytes | wrong |",
              "|---|---|---|---|---|---|---|---|---|"]
    for _, path in files:
        rows = load(path)["rows"]
        by = {(r["algo"], r["wire"], r["net"]): r for r in rows}
        for (algo, wire, net), m in sorted(by.items()):
            if net != "mpi" or (algo, wire, "ucx") not in by:
                continue
            u = by[(algo, wire, "ucx")]
            lines.append(f"| {m['G']} | {algo} | {wire} | {m['MB']:.3f} | {m['time_us']:.0f} |"
                         f" {u['time_us']:.0f} | {u['time_us'] / m['time_us']:.2f} |"
                         f" {'yes' if m['MB'] == u['MB'] else 'no'} |"
                         f" {m['wrong'] + u['wrong']} |")
    if lines[-1].startswith("|---"):
        # A build without the UCX plugin runs MPI alone: say so rather than show no rows.
        lines[-2:] = ["No run here had UCX beside MPI (a build without the UCX transport).", ""]
        return "\n".join(lines)
    lines += ["", "On one host both move the data through shared memory: Open MPI's vader and",
              "UCX's sysv and cma transports (a peer's exit is watched through a pidfd, since",
              "those cannot report a failed peer). The same algorithms run over both, so the",
              "UCX / MPI column compares the transports' own schedules and copies.", ""]
    return "\n".join(lines)


def seed_groups_page(raw, stamp):
    files = numbered(raw, "seed_groups_S")
    if not files:
        return None
    lines, named = page_head("Seed groups: the output embedding's rows", stamp, files)
    lines += ["Ranks of one seed group draw the same sampled-softmax candidates each step, so",
              "their output-embedding rows overlap (\"Language Modeling at Scale\", section",
              "III-B). Each rank holds the targets of its real-text tokens plus the",
              "candidates its group's step seed draws; S seed groups over G ranks. Raw",
              "outputs: " + named + ".", ""]
    lines += ["```", rel_command(load(files[0][1])), "```",
              "(and the same with each `--seed-groups S` of the table)", ""]
    lines += ["| S | G | rows per rank | U_g | U_g / (G·rows) | `unique_allreduce` MB/rank |"
              " `allgather` MB/rank | byte ratio | step-time speedup | wrong |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for s, path in files:
        rows = {r["algo"]: r for r in load(path)["rows"] if r["wire"] == "none"}
        u, a = rows.get("unique_allreduce"), rows.get("allgather")
        if u is None or a is None:
            continue
        lines.append(f"| {s} | {u['G']} | {u['K']} | {u['U_g']:.0f} | {u['U_g/GK']:.3f} |"
                     f" {u['MB']:.2f} | {a['MB']:.2f} | {a['MB'] / u['MB']:.2f}× |"
                     f" {u['speedup']:.2f}× | {u['wrong'] + a['wrong']} |")
    lines += ["", "Fewer groups mean more shared candidates, a smaller U_g and fewer bytes; the",
              "paper keeps about G^0.64 groups for accuracy. Bytes and U_g are exact and",
              "repeat from run to run; the step-time speedup is one run's on this machine.", ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--stamp", default="")
    a = ap.parse_args()
    for name, page in (("transports.md", transports_page(a.raw, a.stamp)),
                       ("seed_groups.md", seed_groups_page(a.raw, a.stamp))):
        if page is not None:
            with open(os.path.join(a.out, name), "w") as f:
                f.write(page)


if __name__ == "__main__":
    main()
