#!/usr/bin/env python3
"""Each kernel's device time from an Nsight Compute CSV, launches of one kernel taken together.

    ncu --clock-control none --csv --print-units base --kernel-name-base demangled \\
        --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \\
        build-gpu/bench/zfc_gpu_bench -K 1e6 -D 512 -n 1 > ncu.csv
    python3 bench/gpu/kernel_times.py ncu.csv

prints, per kernel in order of first launch: its launches, their median and least time in
microseconds and their median DRAM throughput as a percentage of peak. ncu's own notes and
a "# made by" stamp at the top of the file are skipped.
"""
import collections
import csv
import re
import sys

TIME = "gpu__time_duration.sum"  # nanoseconds with --print-units base
DRAM = "dram__throughput.avg.pct_of_peak_sustained_elapsed"


def short_name(name):
    """The kernel's name without its namespaces, parameters or CUB's policy arguments."""
    name = re.sub(r"zfc::(cuda::)?(\(anonymous namespace\)|<unnamed>)::", "", name)
    name = re.sub(r"\(.*", "", name)
    name = re.sub(r"<radix::policy.*|<scan::policy.*|<cub::.*", "", name)
    return name.replace("void ", "")[:56]


def main(path):
    with open(path, encoding="utf-8") as f:
        lines = [line for line in f if line.startswith('"')]
    rows = list(csv.reader(lines))
    if len(rows) < 2:
        sys.exit(f"{path}: no kernel rows (could ncu read the counters?)")
    head, rows = rows[0], rows[1:]
    name_at, metric_at, value_at = (head.index(h) for h in
                                    ("Kernel Name", "Metric Name", "Metric Value"))
    kernels = collections.OrderedDict()
    for r in rows:
        value = r[value_at].replace(",", "")
        kernels.setdefault(short_name(r[name_at]), collections.defaultdict(list))[
            r[metric_at]].append(float(value) if value else float("nan"))
    print(f"# {'kernel':56s} {'launches':>8s} {'median_us':>10s} {'min_us':>8s} {'dram_%':>7s}")
    for name, m in kernels.items():
        t, d = sorted(m[TIME]), sorted(m[DRAM])
        print(f"  {name:56s} {len(t):8d} {t[len(t) // 2] / 1e3:10.1f} {t[0] / 1e3:8.1f} "
              f"{d[len(d) // 2]:7.1f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
