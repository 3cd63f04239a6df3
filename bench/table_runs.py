"""The raw outputs of zfc_perf's table modes (sharded, sparse --apply), as
bench/run_sharded.sh and bench/run_fused.sh write them: one JSON file per rank count G,
named gutenberg_G<G>_K640.json. Shared by sharded_report.py and fused_report.py,
with zfc_model's projection beside them."""
import argparse
import glob
import json
import os
import re


def load(raw):
    """{G: the run's JSON}, by increasing G."""
    runs = {}
    for path in glob.glob(os.path.join(raw, "gutenberg_G*_K640.json")):
        g = int(re.search(r"_G(\d+)_", path).group(1))
        with open(path) as f:
            runs[g] = json.load(f)
    return dict(sorted(runs.items()))


def row(run, algo, wire):
    """The run's row of `algo` with `wire` on the MPI transport."""
    for r in run["rows"]:
        if r["algo"] == algo and r["wire"] == wire and r["net"] == "mpi":
            return r
    raise KeyError(f"{algo}/{wire}")


def load_model(raw):
    """zfc_model's JSON lines in raw/model.jsonl: {(algo, wire, G): record}."""
    lines = {}
    with open(os.path.join(raw, "model.jsonl")) as f:
        for text in f:
            if text.startswith("#"):
                continue
            rec = json.loads(text)
            if "G" in rec:
                lines[(rec["algo"], rec["wire"], rec["G"])] = rec
    return lines


def report_inputs(who):
    """A report's command line (--raw DIR --out FILE) and what every report reads first: the
    arguments, the runs, their stamp, and the workload's (vocab, dim, tokens per rank)."""
    ap = argparse.ArgumentParser(prog=who)
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    runs = load(args.raw)
    if not runs:
        raise SystemExit(f"{who}: no raw outputs in {args.raw}")
    first = next(iter(runs.values()))
    made_by = first.get("made_by", "(not stamped)")
    shape = tuple(first["options"][k] for k in ("vocab", "dim", "tokens_per_rank"))
    return args, runs, made_by, shape
