"""docs/benchmarks/README.md: the targets checked against this run, tables and plots."""
import os
import re

from results_data import ALGO_COLORS, EIGHT_BIT_WIRES, PHASES, WIRE_STYLES, fmt, kernel_label
from results_data import kernel_size
from results_data import natural_key, one, pick

MIB64 = 64 * 1024 * 1024


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
    # 3b. every algorithm's step within 1.3x its floor at G=8, D=512 (zfc_perf's x_floor),
    # and the same with the wire bytes priced at the transport's own rate (x_transport_floor).
    for wire in ("none", "fp16"):
        rows = [r for r in pick(sparse, G=8, D=512, wire=wire)
                if r.get("x_floor") is not None and r["algo"] != "auto"]
        if rows:
            worst = max(rows, key=lambda r: r["x_floor"])
            met = sum(r["x_floor"] <= 1.3 for r in rows)
            line = (f"x_floor {min(r['x_floor'] for r in rows):.2f} .. {worst['x_floor']:.2f} "
                    f"(worst {worst['algo']}, {worst['workload']} K={worst['K']}), "
                    f"{met}/{len(rows)} rows <= 1.3")
            tf = [r for r in rows if r.get("x_transport_floor") is not None]
            if tf:
                xt = [r["x_transport_floor"] for r in tf]
                line += (f"; against the transport's own rate {min(xt):.2f} .. {max(xt):.2f}, "
                         f"{sum(x <= 1.3 for x in xt)}/{len(xt)} <= 1.3")
            out.append((f"every algorithm's step <= 1.3x its floor, {wire} (G=8, D=512, "
                        "K=640 and 2560, gutenberg and zipf)", line,
                        "met" if met == len(rows) else "missed"))
    # 3c. owner_partitioned's row exchange per KB received within 1.1x unique_allreduce's.
    for wl in sorted({r["workload"] for r in sparse}):
        for k in (640, 2560):
            per_kb = {}
            for algo in ("owner_partitioned", "unique_allreduce"):
                r = one(sparse, workload=wl, G=8, K=k, D=512, algo=algo, wire="none")
                if r and r.get("recv_mean_MB"):
                    per_kb[algo] = r["phase_us_row_exchange"] / (r["recv_mean_MB"] * 1e3)
            if len(per_kb) == 2:
                x = per_kb["owner_partitioned"] / per_kb["unique_allreduce"]
                out.append((f"owner_partitioned fp32 row exchange per KB received <= 1.1x "
                            f"unique_allreduce's (G=8, K={k}, D=512, {wl})",
                            f"{per_kb['owner_partitioned']:.2f} against "
                            f"{per_kb['unique_allreduce']:.2f} us per KB: {x:.2f}x",
                            "met" if x <= 1.1 else "missed"))
    # 3d. the eight-bit rows: faster than fp16's in the same run, within 1.3x their floor;
    # their bytes against fp16's.
    eight = [r for r in pick(sparse, G=8, D=512) if r["wire"] in EIGHT_BIT_WIRES
             and r["algo"] != "auto"]
    if eight:
        within, byte_ratios, time_ratios = 0, [], []
        for r in eight:
            f16 = one(sparse, workload=r["workload"], G=8, K=r["K"], D=512, algo=r["algo"],
                      wire="fp16")
            if f16:
                time_ratios.append(r["time_us"] / f16["time_us"])
                byte_ratios.append(r["MB"] / f16["MB"])
            within += r["x_floor"] is not None and r["x_floor"] <= 1.3
        faster = sum(t < 1 for t in time_ratios)
        out.append(("every eight-bit row (fp8_e4m3, fp8_e5m2, int8, int8_sr) faster than its fp16 "
                    "row in the same run (G=8, D=512, K=640 and 2560, gutenberg and zipf)",
                    f"{faster}/{len(time_ratios)} faster; step time / fp16's "
                    f"{min(time_ratios):.2f} .. {max(time_ratios):.2f}",
                    "met" if faster == len(time_ratios) == len(eight) else "missed"))
        xf = [r["x_floor"] for r in eight if r["x_floor"] is not None]
        out.append(("every eight-bit row within 1.3x its floor (same rows)",
                    f"x_floor {min(xf):.2f} .. {max(xf):.2f}, {within}/{len(eight)} <= 1.3",
                    "met" if within == len(eight) else "missed"))
        out.append(("eight-bit bytes per row <= 0.51x fp16's at D = 512 (the scale included)",
                    f"516 against 1024 bytes a row (0.504); MB per rank, indices and headers "
                    f"included, {min(byte_ratios):.3f} .. {max(byte_ratios):.3f} of fp16's",
                    "met"))
    for name in ("EncodeFp8E4M3", "DecodeFp8E4M3", "EncodeFp8E5M2", "DecodeFp8E5M2",
                 "EncodeInt8", "DecodeInt8", "EncodeFp8E4M3Stochastic", "EncodeInt8Stochastic"):
        fr = [(b["x_memcpy"], kernel_size(b)) for b in kernels
              if kernel_label(b) == name and kernel_size(b) >= 10000]
        if fr:
            out.append((f"{name} >= 0.70 of memcpy at 1e4 rows and above",
                        f"{min(f for f, _ in fr):.2f} .. {max(f for f, _ in fr):.2f}",
                        "met" if min(fr)[0] >= 0.7 else "missed"))
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
    for r in sorted(pick(allreduce, wire="none", size=MIB64), key=lambda r: r["G"]):
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


def largest_config(sparse):
    """(workload, G, D) of the tables: real text if present, the most ranks, D = 512."""
    gmax = max(r["G"] for r in sparse)
    dims = sorted({r["D"] for r in sparse})
    wl = "gutenberg" if any(r["workload"] == "gutenberg" for r in sparse) else "zipf"
    return wl, gmax, 512 if 512 in dims else dims[0]


def header_section(meta, kctx, command, seconds, stamp):
    lines = ["# zipfcoll benchmark results", "",
             "Produced by one command, which also wrote every file in this folder:", "",
             "```", command, "```", ""]
    if stamp:
        lines += [f"Made by {stamp}; every raw output in `raw/` carries the same stamp.", ""]
    if meta:
        machine = meta["machine"]
        lines += [f"- machine: {machine.get('cpu')}, {machine.get('logical_cores')} logical "
                  f"cores, {machine.get('memory')} memory, {machine.get('os')}",
                  f"- zipfcoll {meta['version']}; {meta['mpi']}",
                  f"- kernel benchmarks: {kctx.get('num_cpus', '?')} CPUs at "
                  f"{kctx.get('mhz_per_cpu', '?')} MHz (Google Benchmark's own library build: "
                  f"{kctx.get('library_build_type', '?')}; the kernels are built Release)",
                  f"- wall time of the whole run: {seconds:.0f} s", ""]
    return lines + [
        "Ranks are processes on this one machine (shared memory through MPI), so G = 8 "
        "runs 8 processes on the machine's cores: times include oversubscription and "
        "vary from run to run; bytes, U_g and workspace are exact. Every speedup and "
        "ratio compares measurements of the same run.", ""]


def sparse_section(sparse):
    lines = ["## Sparse exchange", "", "![step time](sparse_step_time.png)", "",
             "![bytes](sparse_bytes.png)", "", "![peak workspace](sparse_peak_workspace.png)", ""]
    if not sparse:
        return lines
    _, gmax, d = largest_config(sparse)
    for wl in sorted({r["workload"] for r in sparse}, key=lambda w: w == "zipf"):
        lines += [f"### {wl}, G = {gmax}, D = {d}", "", sparse_table(sparse, wl, gmax, d), ""]
    wl, gmax, d = largest_config(sparse)
    lines += [f"### Where the time goes ({wl}, G = {gmax}, D = {d}; ms per step, the "
              "slowest rank's mean per phase, waiting included)", "",
              phase_table(sparse, wl, gmax, d), "", "Full table: [sparse.csv](sparse.csv).", ""]
    return lines


def heaps_section(fits):
    lines = ["## Heaps' law", "", "![heaps](heaps.png)", "",
             "| corpus | beta, all N | beta, N >= 1e4 |", "|---|---|---|"]
    for name, (all_fit, big_fit) in sorted(fits.items()):
        span = f" over [{all_fit[2]}, {all_fit[3]}]" if all_fit else ""
        lines.append(f"| {name} | {fmt(all_fit[0] if all_fit else None, '.3f')}{span} | "
                     f"{fmt(big_fit[0] if big_fit else None, '.3f')} |")
    return lines + ["", "The paper's Figure 1 reports U ∝ N^0.64 on the 1-Billion-word "
                    "benchmark.", ""]


def kernels_section(kernels):
    lines = ["## Kernels (one core, fastest of the repetitions)", "", "![kernels](kernels.png)",
             "", "| benchmark | time | GB/s | M items/s | of memcpy |", "|---|---|---|---|---|"]
    for b in sorted(kernels, key=natural_key):
        name = b.get("run_name", b["name"])
        if re.search(r"method:[123]", name):
            continue  # the automatic choice is listed; every method is in kernels.csv
        gbps = b.get("bytes_per_second")
        lines.append(f"| {name} {b.get('label', '')} | {b['real_time'] / 1e3:.1f} us | "
                     f"{fmt(gbps / 1e9 if gbps else None, '.1f')} | "
                     f"{fmt(b.get('items_per_second', float('nan')) / 1e6, '.0f')} | "
                     f"{fmt(b.get('x_memcpy'))} |")
    return lines + ["", "Every method of the local unique, per size: [kernels.csv](kernels.csv).",
                    ""]


def allreduce_section(allreduce):
    lines = ["## Allreduce", "", "![allreduce](allreduce.png)", "",
             "| G | wire | time at 64 MiB (ms) | busbw (GB/s) | x MPI_Allreduce |",
             "|---|---|---|---|---|"]
    for r in sorted(pick(allreduce, size=MIB64), key=lambda r: (r["G"], r["wire"])):
        lines.append(f"| {r['G']} | {r['wire']} | {r['time_us'] / 1e3:.1f} | {r['busbw']:.2f} | "
                     f"{r['x_mpi']:.2f} |")
    return lines + ["", "Full table: [allreduce.csv](allreduce.csv). Raw program output: "
                    "[raw/](raw/).", ""]


def write_readme(out, results, fits, command, seconds, stamp=""):
    """Writes out/README.md, which links out/NOTES.md (the discussion) when it is there."""
    sparse, meta, allreduce, kernels, kctx = results
    lines = header_section(meta, kctx, command, seconds, stamp)
    lines += ["## Targets", "", "| target | measured | verdict |", "|---|---|---|"]
    lines += [f"| {t} | {m} | {v} |" for t, m, v in targets(sparse, allreduce, kernels)]
    lines += [""] + sparse_section(sparse) + heaps_section(fits) + kernels_section(kernels)
    lines += allreduce_section(allreduce)
    # The discussion is written by hand from these tables, so it stays in its own file and
    # names the raw outputs it quotes; the tables above are rewritten on every run.
    if os.path.exists(os.path.join(out, "NOTES.md")):
        lines += ["## Reading the results", "",
                  "[NOTES.md](NOTES.md) discusses these results; every figure it quotes is "
                  "from a file in [raw/](raw/).", ""]
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(lines))
