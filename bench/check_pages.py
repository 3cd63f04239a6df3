#!/usr/bin/env python3
"""Checks that the published figures belong to the project's version and to their raw outputs.

usage: check_pages.py [--root DIR] [--python PY] [--selftest]

  1. Versions: every text file under docs/benchmarks (pages, tables, raw outputs) names the
     zipfcoll version that made it near its top, and every version any of them names has the
     project's major.minor (CMakeLists.txt). The one exception is a page whose first line
     says it was "made on an earlier version" (the GPU page, which needs a GPU to regenerate):
     it and the raw folder it names there are exempt, and README.md must list it as such.
  2. Generated pages: each page and table a generator writes is written again from the
     committed raw outputs, in a copy of the folder, and must come out the same, apart from
     the lines that stamp it (checked by 1). The GPU page is checked by its own generator
     (bench/gpu/compare.py --check).
  3. Quoted figures: every decimal figure of a hand-written page (NOTES.md, scale_model.md),
     and of each README.md paragraph that names a page under docs/benchmarks, is written the
     same way on a generated page or in a raw output; such a README paragraph names the
     version the figures come from.
--selftest runs the check on copies edited in the ways it must catch (an old stamp, a table
cell changed, a quoted figure no raw output holds) and fails unless each copy fails.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

PAGES = "docs/benchmarks"
BENCH = os.path.dirname(os.path.abspath(__file__))  # the generators, whatever root is checked
HAND_PAGES = ["NOTES.md", "scale_model.md"]
TEXT_EXT = (".md", ".txt", ".csv", ".json", ".jsonl", ".log")
VERSION = re.compile(r"\bzipfcoll (\d+)\.(\d+)\.(\d+)")
ANY_VERSION = re.compile(r"(?<![\d.])(\d+)\.(\d+)\.(\d+)(?![\d.])")
FIGURE = re.compile(r"(?<![\w.])\d+\.\d+(?!\w|\.\d)")
EARLIER = re.compile(r"made on an earlier version, zipfcoll (\d+\.\d+\.\d+)(?:; raw: (\S+?))?\W")
# Lines that only say what made a file; their versions are checked by check_versions.
STAMP_LINE = re.compile(r"^(# )?_?[Mm]ade by |^# zipfcoll \d|\"made_by\"|"
                        r"wall time of the whole run")


def project_version(root):
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        m = re.search(r"project\(zipfcoll\s+VERSION (\d+)\.(\d+)\.(\d+)", f.read())
    return m.group(1), m.group(2)


def text_files(folder):
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(TEXT_EXT):
                yield os.path.join(top, name)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def earlier_pages(folder):
    """{page: (version, raw folder or None)} for the pages declared made on an earlier
    version in their first line."""
    found = {}
    for path in text_files(folder):
        if path.endswith(".md"):
            first = read(path).split("\n", 1)[0]
            m = EARLIER.search(first + "\n")
            if m:
                raw = os.path.join(folder, m.group(2)) if m.group(2) else None
                found[path] = (m.group(1), raw)
    return found


def check_versions(root, folder, want, errors):
    exempt = earlier_pages(folder)
    exempt_dirs = [raw for _, raw in exempt.values() if raw]
    readme = read(os.path.join(root, "README.md"))
    for page, (version, _) in exempt.items():
        name = os.path.relpath(page, root)
        if not re.search(re.escape(name) + r"[^\n]*\n?[^\n]*earlier version|earlier version"
                         r"[^\n]*\n?[^\n]*" + re.escape(name), readme):
            errors.append(f"{name} says it was made on an earlier version ({version}), but "
                          "README.md does not list it as such")
    for path in text_files(folder):
        if path in exempt or any(path.startswith(d + os.sep) for d in exempt_dirs):
            continue
        text = read(path)
        name = os.path.relpath(path, root)
        if not VERSION.search(text[:600]):
            errors.append(f"{name}: names no zipfcoll version near its top")
        for m in VERSION.finditer(text):
            if (m.group(1), m.group(2)) != want:
                errors.append(f"{name}: made by zipfcoll {'.'.join(m.groups())}, the project "
                              f"is {'.'.join(want)}")
                break


def strip_stamps(text):
    lines = [line for line in text.splitlines() if not STAMP_LINE.search(line)]
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines


def readme_command(folder):
    """The command bench/plot_results.py wrote into the results README (a run's own record)."""
    m = re.search(r"Produced by one command[^\n]*\n\n```\n([^\n]*)\n```", read(
        os.path.join(folder, "README.md")))
    return m.group(1) if m else "bench/run_all.sh"


def regenerate(root, py, copy):
    """Runs every page generator on the copy's raw outputs, writing into the copy."""
    b = lambda *p: os.path.join(BENCH, *p)  # noqa: E731
    c = lambda *p: os.path.join(copy, *p)  # noqa: E731
    runs = [
        [py, b("plot_results.py"), "--raw", c("raw"), "--out", copy, "--seconds", "0",
         "--command", readme_command(copy), "--stamp", "-"],
        [py, b("pages_report.py"), "--raw", c("raw"), "--out", copy, "--stamp", "made by -"],
    ]
    if os.path.isdir(c("raw_scale")):
        runs.append([py, b("scale_report.py"), "--raw", c("raw_scale"), "--out", copy])
    if os.path.isdir(c("raw_sharded")):
        runs.append([py, b("sharded_report.py"), "--raw", c("raw_sharded"), "--out",
                     c("sharded.md")])
    if os.path.isdir(c("raw_fused")):
        runs.append([py, b("fused_report.py"), "--raw", c("raw_fused"), "--out", c("fused.md")])
    if os.path.isdir(c("trainer")):
        runs.append([py, b("trainer", "trainer_report.py"), c("trainer")])
    for cmd in runs:
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            return f"{' '.join(cmd)} failed:\n{done.stderr}"
    return None


def check_generated(root, folder, py, errors):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "benchmarks")
        shutil.copytree(folder, copy)
        failed = regenerate(root, py, copy)
        if failed:
            errors.append(failed)
            return
        for path in text_files(copy):
            name = os.path.relpath(path, copy)
            mine = os.path.join(folder, name)
            if not os.path.exists(mine):
                errors.append(f"{PAGES}/{name}: written by a generator but not committed")
                continue
            got, want = strip_stamps(read(mine)), strip_stamps(read(path))
            if got != want:
                line = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w),
                            min(len(got), len(want)))
                errors.append(f"{PAGES}/{name}: not what its generator makes from the raw "
                              f"outputs (line {line + 1} of the unstamped text:\n  page: "
                              f"{got[line] if line < len(got) else '(end)'}\n  raw:  "
                              f"{want[line] if line < len(want) else '(end)'})")
    gpu = os.path.join(folder, "gpu.md")
    raw_gpu = os.path.join(folder, "raw_gpu")
    if os.path.exists(gpu) and os.path.isdir(raw_gpu):
        done = subprocess.run(
            [py, os.path.join(BENCH, "gpu", "compare.py"),
             "--zfc", os.path.join(raw_gpu, "zfc_gpu.json"),
             "--torch", os.path.join(raw_gpu, "torch.json"), "--steps", raw_gpu, "--check", gpu],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            errors.append(done.stdout.strip())


def figures(text):
    """The decimal figures of a text, versions and dotted names left out."""
    text = ANY_VERSION.sub(" ", text)
    return set(FIGURE.findall(text))


def check_figures(root, folder, errors):
    hand = {os.path.join(folder, p) for p in HAND_PAGES}
    held = set()
    for path in text_files(folder):
        if path not in hand:
            held |= figures(read(path))
    for path in sorted(hand):
        if os.path.exists(path):
            missing = sorted(figures(read(path)) - held, key=float)
            if missing:
                errors.append(f"{os.path.relpath(path, root)}: figures no generated page or "
                              f"raw output holds: {', '.join(missing)}")
    want = project_version(root)
    exempt = earlier_pages(folder)
    for n, para in enumerate(read(os.path.join(root, "README.md")).split("\n\n")):
        pages = set(re.findall(re.escape(PAGES) + r"/[\w/.-]+\.md", para))
        if not pages:
            continue
        quoted = figures(para)
        if not quoted:
            continue
        first = " ".join(para.split())[:70]
        missing = sorted(quoted - held, key=float)
        if missing:
            errors.append(f"README.md, the paragraph '{first}...': figures no page or raw "
                          f"output holds: {', '.join(missing)}")
        versions = {(m.group(1), m.group(2)) for m in ANY_VERSION.finditer(para)}
        earlier = {tuple(exempt[os.path.join(root, p)][0].split(".")[:2])
                   for p in pages if os.path.join(root, p) in exempt}
        if want not in versions and not (earlier & versions):
            errors.append(f"README.md, the paragraph '{first}...': quotes figures of "
                          f"{', '.join(sorted(pages))} without naming the version "
                          f"{'.'.join(want)} that made them")


def check(root, py):
    folder = os.path.join(root, PAGES)
    errors = []
    check_versions(root, folder, project_version(root), errors)
    check_generated(root, folder, py, errors)
    check_figures(root, folder, errors)
    return errors


def edit(path, old, new):
    text = read(path)
    if old not in text:
        return False
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new, 1))
    return True


def selftest(root, py):
    """Each edit must make the check fail; returns the edits it did not catch."""
    major, minor = project_version(root)
    old = f"zipfcoll {major}.{int(minor) - 1 if int(minor) else minor}.0"
    if old.endswith(f"{major}.{minor}.0"):
        old = f"zipfcoll {int(major) - 1}.99.0"

    def old_stamp(copy):
        page = os.path.join(copy, PAGES, "transports.md")
        return edit(page, f"zipfcoll {major}.{minor}.", old[:-1])

    def table_cell(copy):
        page = os.path.join(copy, PAGES, "sharded.md")
        text = read(page)
        m = re.search(r"\| (\d+\.\d+) \|", text)
        return m is not None and edit(page, m.group(0), f"| {m.group(1)}9 |")

    def quoted_figure(copy):
        return edit(os.path.join(copy, PAGES, "NOTES.md"), "\n\n", "\n\nA figure: 123.456789.\n\n")

    # An edit is caught when the edited copy has a problem the unedited one has not, so a
    # problem the committed pages already have cannot pass for a catch.
    base = set(check(root, py))
    missed = []
    for name, change in [("an old stamp", old_stamp), ("a table cell", table_cell),
                         ("a figure without a raw output", quoted_figure)]:
        with tempfile.TemporaryDirectory() as tmp:
            for part in ("CMakeLists.txt", "README.md"):
                shutil.copy(os.path.join(root, part), tmp)
            shutil.copytree(os.path.join(root, PAGES), os.path.join(tmp, PAGES))
            if not change(tmp):
                missed.append(f"{name} (the edit found nothing to change)")
                continue
            new = [e for e in check(tmp, py) if e not in base]
            print(f"selftest, {name}: {len(new)} new problem(s), first: "
                  f"{new[0].splitlines()[0] if new else '(none)'}")
            if not new:
                missed.append(name)
    return missed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    if a.selftest:
        missed = selftest(root, a.python)
        if missed:
            print("check_pages selftest: not caught: " + "; ".join(missed))
            sys.exit(1)
        print("check_pages selftest: every edit caught")
        return
    errors = check(root, a.python)
    for e in errors:
        print(e)
    major, minor = project_version(root)
    print(f"check_pages: {len(errors)} problem(s) in {PAGES} and README.md "
          f"(project {major}.{minor})")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
