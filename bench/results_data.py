"""Loading the raw results of bench/run_all.sh, and small helpers over result rows."""
import csv
import glob
import json
import math
import os
import re

import numpy as np

ALGO_COLORS = {"allgather": "tab:red", "unique_allreduce": "tab:blue",
               "unique_allgather": "tab:green", "auto": "tab:purple", "dense_vocab": "tab:gray",
               "owner_partitioned": "tab:orange", "hierarchical": "tab:brown",
               "key_routed": "tab:olive"}
WIRE_STYLES = {"none": "-", "fp16": "--", "bf16": ":", "fp8_e4m3": "-.", "fp8_e5m2": "-.",
               "int8": "-.", "int8_sr": "-."}
EIGHT_BIT_WIRES = ("fp8_e4m3", "fp8_e5m2", "int8", "int8_sr")
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
                         for r in csv.DictReader(line for line in f if not line.startswith("#"))]
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


def kernel_label(b):
    name = b.get("run_name", b["name"])
    return name.split("/")[0].replace("BM_", "")


def kernel_size(b):
    m = re.search(r"rows:(\d+)", b["name"])
    return int(m.group(1)) if m else None


def fmt(v, spec=".2f"):
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def natural_key(b):
    """Benchmark names with their numbers compared as numbers (rows:4000 before 16000)."""
    name = b.get("run_name", b["name"])
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]
