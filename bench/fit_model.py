#!/usr/bin/env python3
"""Fits the machine model's three figures (a latency, a link bandwidth, a local memory
throughput) to the steps timed in zfc_perf sparse JSON rows, and reports the model's error
on rows it was not fitted to.

The cost model is linear in latency, 1 / bandwidth and 1 / local throughput: for each row
the library itself (zfcPredictSparseReduce, through ctypes) prices the row's step once with
only a 1 us latency, once with only a 1 GB/s link and once with only 1 GB/s of local
throughput, each with the row's ranks per core; the fit then minimises the squared relative
error sum (prediction / measured - 1)^2 over the rows, all figures >= 0. One figure stands
for both link classes (the runs share one host).

The fitted figures, written as a ZIPFCOLL_MACHINE_MODEL value, pin the model: runs made with
it give the same predictions and the same choices of `auto` every time, so their error can be
compared from run to run (bench/run_scale.sh --model).

usage: fit_model.py --lib LIBZIPFCOLL --fit DIR [--check DIR] [--write FILE]
"""
import argparse
import ctypes
import glob
import json
import os
import statistics

import numpy as np

ALGOS = {"allgather": 1, "unique_allreduce": 2, "dense_vocab": 3, "unique_allgather": 4,
         "owner_partitioned": 5, "hierarchical": 6, "key_routed": 7}
WIRES = {"none": 0, "fp16": 1, "bf16": 2}
FLOAT32 = 2


class Link(ctypes.Structure):
    _fields_ = [("latency_us", ctypes.c_double), ("bandwidth_gbs", ctypes.c_double)]


class Model(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("intra", Link), ("inter", Link),
                ("local_gbs", ctypes.c_double), ("ranks_per_core", ctypes.c_double)]


class Shape(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("ranks", ctypes.c_int), ("nodes", ctypes.c_int),
                ("tokens", ctypes.c_double), ("max_tokens", ctypes.c_double),
                ("local_unique", ctypes.c_double), ("max_local_unique", ctypes.c_double),
                ("global_unique", ctypes.c_double), ("vocab_size", ctypes.c_int64),
                ("dim", ctypes.c_size_t), ("row_type", ctypes.c_int),
                ("compression", ctypes.c_int)]


class Prediction(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("seconds", ctypes.c_double),
                ("bytes", ctypes.c_double), ("internode_bytes", ctypes.c_double),
                ("workspace_bytes", ctypes.c_double)]


def load_rows(raw):
    """(run name, row, doc) for every row that carries the model's inputs."""
    out = []
    for path in sorted(glob.glob(os.path.join(raw, "*.json"))):
        with open(path) as f:
            doc = json.load(f)
        for r in doc.get("rows", []):
            if "U_i_sum" in r and r.get("ran") in ALGOS and r["time_us"] > 0:
                out.append((os.path.basename(path)[:-5], r, doc))
    return out


def nodes_of(doc, r):
    # Runs split into nodes with --ranks-per-node; the others share one host.
    per = doc.get("options", {}).get("ranks_per_node", 0)
    return max(1, -(-r["G"] // per)) if per > 0 else 1


class Pricer:
    def __init__(self, lib):
        self.lib = ctypes.CDLL(lib)
        self.lib.zfcPredictSparseReduce.argtypes = [
            ctypes.POINTER(Model), ctypes.POINTER(Shape), ctypes.c_int,
            ctypes.POINTER(Prediction)]

    def seconds(self, name, r, doc, lat_us, gbs, local_gbs):
        m = Model(ctypes.sizeof(Model), Link(lat_us, gbs), Link(lat_us, gbs), local_gbs,
                  r.get("ranks_per_core", 1.0))
        s = Shape(ctypes.sizeof(Shape), r["G"], nodes_of(doc, r), r["K"] * r["G"], r["K"],
                  r["U_i_sum"], r["U_i_max"], r["U_g"], doc["options"]["vocab"], r["D"], FLOAT32,
                  WIRES[r["wire"]])
        p = Prediction(ctypes.sizeof(Prediction), 0, 0, 0, 0)
        rc = self.lib.zfcPredictSparseReduce(ctypes.byref(m), ctypes.byref(s),
                                             ALGOS[r["ran"]], ctypes.byref(p))
        if rc != 0:
            raise SystemExit(f"zfcPredictSparseReduce failed ({rc}) on {name} {r['algo']}")
        return p.seconds * 1e6

    def terms(self, name, r, doc):
        """The row's time per us of latency, per (s per GB) of link, per (s per GB) local."""
        return [self.seconds(name, r, doc, 1.0, 0.0, 0.0),
                self.seconds(name, r, doc, 0.0, 1.0, 0.0),
                self.seconds(name, r, doc, 0.0, 0.0, 1.0)]


def fit(pricer, rows):
    a, b = [], []
    for name, r, doc in rows:
        t = pricer.terms(name, r, doc)
        a.append([x / r["time_us"] for x in t])
        b.append(1.0)
    a, b = np.array(a), np.array(b)
    cols = [0, 1, 2]
    while True:  # least squares, dropping a term whose coefficient comes out negative
        x, *_ = np.linalg.lstsq(a[:, cols], b, rcond=None)
        if (x >= 0).all():
            break
        cols.pop(int(np.argmin(x)))
    coef = [0.0, 0.0, 0.0]
    for c, v in zip(cols, x):
        coef[c] = float(v)
    lat = coef[0]
    gbs = 1.0 / coef[1] if coef[1] > 0 else 1e6
    local = 1.0 / coef[2] if coef[2] > 0 else 1e6
    return float(f"{lat:.4g}"), float(f"{gbs:.4g}"), float(f"{local:.4g}")


def errors(pricer, rows, figures):
    lat, gbs, local = figures
    out = []
    for name, r, doc in rows:
        t = pricer.seconds(name, r, doc, lat, gbs, local)
        out.append((name, r, t / r["time_us"] - 1.0))
    return out


def summary(errs):
    e = [abs(x[2]) for x in errs]
    within = sum(1 for x in e if x <= 0.25)
    return (f"{len(e)} rows: median |err| {statistics.median(e):.3f}, "
            f"{within} of {len(e)} within 25 %")


def per_algorithm(errs):
    """Lines of the median and worst |error| per algorithm run and wire, G = 2..8."""
    lines = []
    for ran, wire in sorted({(r["ran"], r["wire"]) for _, r, _ in errs}):
        e = [abs(x) for _, r, x in errs
             if (r["ran"], r["wire"]) == (ran, wire) and 2 <= r["G"] <= 8]
        if e:
            lines.append(f"    {ran:18s} {wire:5s} {len(e):3d} rows: median |err| "
                         f"{statistics.median(e):.3f}, worst {max(e):.3f}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="the built libzipfcoll.so")
    ap.add_argument("--fit", required=True, help="zfc_perf JSON runs to fit the figures to")
    ap.add_argument("--check", help="other runs to report the fitted model's error on")
    ap.add_argument("--write", help="write the ZIPFCOLL_MACHINE_MODEL value to this file")
    a = ap.parse_args()
    pricer = Pricer(a.lib)
    rows = load_rows(a.fit)
    if not rows:
        raise SystemExit(f"fit_model.py: no rows with the model's inputs in {a.fit}")
    lat, gbs, local = fit(pricer, rows)
    text = f"intra={lat:g}:{gbs:g},inter={lat:g}:{gbs:g},local={local:g}"
    print(f"fitted on {a.fit}: ZIPFCOLL_MACHINE_MODEL={text}")
    fitted = errors(pricer, rows, (lat, gbs, local))
    print(f"  on the rows fitted: {summary(fitted)}")
    print(per_algorithm(fitted))
    if a.check:
        check = errors(pricer, load_rows(a.check), (lat, gbs, local))
        print(f"  on {a.check}: {summary(check)}")
        print(per_algorithm(check))
    if a.write:
        with open(a.write, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
