#!/usr/bin/env python3
"""The tables of the wire formats' accuracy study (bench/precision/run_precision.sh) from its
raw logs: held-out perplexity (word) and bits per character (char), mean and standard
deviation over the seeds, against fp32's mean, with the bytes per step; the PyTorch example's
training loss. With --best, prints the eight-bit word setting of the lowest mean perplexity."""
import json
import math
import pathlib
import re
import statistics
import sys

EIGHT_BIT = ("fp8_", "int8")


def runs(raw, prefix):
    """{setting: [(seed, valid ppl, mean bytes per step, steps skipped)]} of the runs whose
    files are raw/<prefix>_<setting>_s<seed>.json."""
    out = {}
    for path in sorted(pathlib.Path(raw).glob(f"{prefix}_*_s*.json")):
        m = re.fullmatch(rf"{prefix}_(.+)_s(\d+)\.json", path.name)
        if not m:
            continue
        ppl, sent, skipped = None, [], 0
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if event.get("event") == "valid":
                ppl = event["ppl"]
            elif event.get("event") == "progress":
                sent.append(event["bytes_per_step"])
                skipped += event.get("skipped", 0)  # the steps skipped since the last line
        if ppl is not None:
            out.setdefault(m.group(1), []).append(
                (int(m.group(2)), ppl, statistics.mean(sent) if sent else 0.0, skipped))
    return out


def summary(values):
    mean = statistics.mean(values)
    return mean, (statistics.stdev(values) if len(values) > 1 else 0.0)


def best_eight_bit(raw):
    word = runs(raw, "word")
    means = {s: statistics.mean(r[1] for r in rs) for s, rs in word.items()
             if s.startswith(EIGHT_BIT)}
    return min(means, key=means.get)


def table(raw, prefix, bits):
    settings = runs(raw, prefix)
    if "fp32" not in settings:
        return [f"(no {prefix} runs)"]
    # Bits per character: log2 of each run's perplexity, then the mean over the seeds.
    values = {s: [math.log2(r[1]) if bits else r[1] for r in rs] for s, rs in settings.items()}
    base, base_sd = summary(values["fp32"])
    measure = "bits per character" if bits else "held-out perplexity"
    lines = [f"| wire | {measure}, mean | sd | vs fp32 | within 1 % or fp32's sd (either "
             "side) | MB per step | skipped | seeds |", "|---|---|---|---|---|---|---|---|"]
    order = sorted(settings, key=lambda s: (s != "fp32", statistics.mean(values[s])))
    for s in order:
        rs = settings[s]
        mean, sd = summary(values[s])
        rel = (mean - base) / base
        holds = abs(mean - base) <= max(0.01 * base, base_sd)
        lines.append(f"| {s} | {mean:.3f} | {sd:.3f} | {rel * 100:+.2f} % | "
                     f"{'yes' if holds else 'no'} | {statistics.mean(r[2] for r in rs) / 1e6:.3f} | "
                     f"{sum(r[3] for r in rs)} | {len(rs)} |")
    return lines


def torch_table(raw):
    lines = ["| wire | mean training loss, last 5 logged steps | steps |", "|---|---|---|"]
    for path in sorted(pathlib.Path(raw).glob("torch_*.txt")):
        losses = [float(m.group(1)) for m in
                  re.finditer(r"^step \d+: loss ([0-9.]+)", path.read_text(), re.M)]
        if losses:
            lines.append(f"| {path.stem[len('torch_'):]} | {statistics.mean(losses[-5:]):.4f} | "
                         f"{len(losses)} logged |")
    return lines


def main():
    if sys.argv[1] == "--best":
        print(best_eight_bit(sys.argv[2]))
        return
    if sys.argv[1] == "--page":  # the tables into the page, between its markers
        tables, page = pathlib.Path(sys.argv[2]).read_text(), pathlib.Path(sys.argv[3])
        text = page.read_text()
        start, end = "<!-- precision tables: start -->", "<!-- precision tables: end -->"
        page.write_text(text[:text.index(start) + len(start)] + "\n" + tables + "\n" +
                        text[text.index(end):])
        return
    raw = sys.argv[1]
    stamp = pathlib.Path(raw, "stamp.txt").read_text().strip().lstrip("# ")
    out = [stamp[0].upper() + stamp[1:] + ".", "", "### Word LM (4 ranks, 600 steps, held-out perplexity)", ""]
    out += table(raw, "word", bits=False)
    out += ["", "### Char LM (4 ranks, 600 steps, bits per character)", ""]
    out += table(raw, "char", bits=True)
    out += ["", "### PyTorch example under torchrun (4 ranks)", ""]
    out += torch_table(raw)
    print("\n".join(out))


if __name__ == "__main__":
    main()
