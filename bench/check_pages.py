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
     and of each paragraph of README.md and of the pages in docs/ that names a page or raw
     output under docs/benchmarks, is written the same way on a generated page or in a raw
     output; such a paragraph names the version the figures come from.
--selftest runs the check on the committed pages, which must pass, and on copies edited in the
ways it must catch (an old stamp, a table cell changed, a quoted figure its sources do not
hold, on a notes page and in a page of docs/), and fails unless each copy fails.
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
ANY_VERSION = re.compile(r"(?<![\d.])(\d+)\.(\d+)\.(\d+)(?!\d|\.\d)")
# A decimal figure, with whatever unit follows it ("1.57x", "3.6e-08" gives 3.6); a sign is
# not part of it. Integers are not checked: they are mostly sizes a run was given.
FIGURE = re.compile(r"(?<![\w.])\d+\.\d+(?!\d|\.\d)")
EARLIER = re.compile(r"made on an earlier version, zipfcoll (\d+\.\d+\.\d+)"
                     r"(?:; raw: ([^\s;,)]+?))?\.?(?:\)|\s|$)")
# What the generators write, from the raw outputs (regenerate()).
GENERATED = ["README.md", "sparse.csv", "allreduce.csv", "heaps.csv", "kernels.csv",
             "transports.md", "seed_groups.md", "scale.csv", "scale_report.txt", "sharded.md",
             "fused.md", "trainer/report.md", "torch.md"]
# The files a page's figures come from when it names none: its raw folders and tables.
SOURCES = {"README.md": ["README.md", "raw"], "transports.md": ["transports.md", "raw"],
           "seed_groups.md": ["seed_groups.md", "raw"], "NOTES.md": ["README.md"],
           "scale_model.md": ["scale_report.txt", "scale.csv"],
           "sharded.md": ["sharded.md", "raw_sharded"], "fused.md": ["fused.md", "raw_fused"],
           "trainer/report.md": ["trainer"], "gpu.md": ["gpu.md", "raw_gpu"],
           "torch.md": ["torch.md", "raw_torch"]}
# Folders a generator reads: never exempt from the version check.
GENERATOR_INPUTS = ["raw", "raw_scale", "raw_sharded", "raw_fused", "trainer", "raw_torch"]
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
            m = EARLIER.search(first)
            if m:
                raw = os.path.join(folder, m.group(2).rstrip("/")) if m.group(2) else None
                found[path] = (m.group(1), raw)
    return found


def check_versions(root, folder, want, errors):
    exempt = earlier_pages(folder)
    exempt_dirs = [raw for _, raw in exempt.values() if raw]
    for d in exempt_dirs:
        name = os.path.relpath(d, folder)
        if not os.path.isdir(d) or name.split(os.sep)[0] in GENERATOR_INPUTS:
            errors.append(f"{PAGES}/{name}: cannot be exempt as an earlier version's raw "
                          "outputs (missing, or read by a generator of this version)")
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
    path = os.path.join(folder, "README.md")
    m = re.search(r"Produced by one command[^\n]*\n\n```\n([^\n]*)\n```",
                  read(path)) if os.path.exists(path) else None
    return m.group(1) if m else "bench/run_all.sh"


def regenerate(py, copy, command):
    """Runs every page generator on the copy's raw outputs, writing into the copy."""
    b = lambda *p: os.path.join(BENCH, *p)  # noqa: E731
    c = lambda *p: os.path.join(copy, *p)  # noqa: E731
    runs = [
        [py, b("plot_results.py"), "--raw", c("raw"), "--out", copy, "--seconds", "0",
         "--command", command, "--stamp", "-"],
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
    if os.path.isdir(c("raw_torch")):
        runs.append([py, b("torch_report.py"), "--raw", c("raw_torch"), "--out", c("torch.md")])
    for cmd in runs:
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            return f"{' '.join(cmd)} failed:\n{done.stderr}"
    return None


def check_generated(root, folder, py, errors):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "benchmarks")
        shutil.copytree(folder, copy)
        # The generators' pages go first, so that one no generator writes again is missed,
        # not compared with itself.
        for name in GENERATED:
            if os.path.exists(os.path.join(copy, name)):
                os.remove(os.path.join(copy, name))
        failed = regenerate(py, copy, readme_command(folder))
        if failed:
            errors.append(failed.replace(tmp, "<copy>"))
            return
        for name in GENERATED:
            if os.path.exists(os.path.join(folder, name)) and \
                    not os.path.exists(os.path.join(copy, name)):
                errors.append(f"{PAGES}/{name}: no generator wrote it from the raw outputs")
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
    text = re.sub(r"\bx(?=\d+\.\d)", "x ", text)  # a factor the tables write "x2.69"
    return set(FIGURE.findall(text))


def files_under(path, folder):
    """The text files at path (a file, or a folder's files; an earlier version's runs kept in
    raw_gpu's subfolders are left out unless named)."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        return []
    if os.path.relpath(path, folder) == "raw_gpu":
        return [os.path.join(path, n) for n in sorted(os.listdir(path))
                if n.endswith(TEXT_EXT) and os.path.isfile(os.path.join(path, n))]
    return list(text_files(path))


def named_files(text, folder):
    """The files and folders under docs/benchmarks a text names in backquotes: by path from
    the folder or the repository, or by a file's name alone where it is one file's."""
    found = []
    for token in re.findall(r"`([\w./{},-]+)`", text):
        token = token.strip("/")
        if token.startswith(PAGES + "/"):
            token = token[len(PAGES) + 1:]
        path = os.path.join(folder, token)
        if os.path.exists(path):
            found += files_under(path, folder)
        elif "/" not in token and token.endswith(TEXT_EXT):
            found += [p for p in text_files(folder) if os.path.basename(p) == token]
    return found


def held_by(pages, text, folder):
    """The figures the sources of `text` hold: the pages it names, their default sources
    (SOURCES) and every file it names."""
    paths = list(named_files(text, folder))
    for page in pages:
        for src in SOURCES.get(page, [page]):
            paths += files_under(os.path.join(folder, src), folder)
    held = set()
    for path in set(paths):
        held |= figures(read(path))
    return held


def check_figures(root, folder, errors):
    for page in HAND_PAGES:
        path = os.path.join(folder, page)
        if not os.path.exists(path):
            continue
        text = read(path)
        missing = sorted(figures(text) - held_by([page], text, folder), key=float)
        if missing:
            errors.append(f"{os.path.relpath(path, root)}: figures the files it reads do not "
                          f"hold: {', '.join(missing)}")
    want = project_version(root)
    exempt = earlier_pages(folder)
    # README.md names pages from the repository's top; the pages in docs/ name them from there.
    check_paragraphs(root, "README.md", re.escape(PAGES), folder, want, exempt, errors)
    for name in sorted(os.listdir(os.path.join(root, "docs"))):
        if name.endswith(".md"):
            check_paragraphs(root, "docs/" + name, r"(?:docs/)?benchmarks", folder, want,
                             exempt, errors)


def check_paragraphs(root, name, prefix, folder, want, exempt, errors):
    """Each paragraph of the page `name` that names a page or raw output under docs/benchmarks
    quotes only figures those files hold, and names the version that made them."""
    exempt_dirs = {raw: version for version, raw in exempt.values() if raw}
    pattern = re.compile(r"(?<![\w/])" + prefix + r"/([\w/.-]+\.(?:md|txt|csv|json))")
    for para in read(os.path.join(root, name)).split("\n\n"):
        pages = sorted(set(pattern.findall(para)))
        if not pages:
            continue
        quoted = figures(para)
        if not quoted:
            continue
        first = " ".join(para.split())[:70]
        missing = sorted(quoted - held_by(pages, para, folder), key=float)
        if missing:
            errors.append(f"{name}, the paragraph '{first}...': figures the pages it names "
                          f"do not hold: {', '.join(missing)}")
        versions = {(m.group(1), m.group(2)) for m in ANY_VERSION.finditer(para)}
        earlier = set()
        for p in pages:
            path = os.path.join(folder, p)
            if path in exempt:
                earlier.add(tuple(exempt[path][0].split(".")[:2]))
            for raw, version in exempt_dirs.items():
                if path.startswith(raw + os.sep):
                    earlier.add(tuple(version.split(".")[:2]))
        if want not in versions and not (earlier & versions):
            errors.append(f"{name}, the paragraph '{first}...': quotes figures of "
                          f"{', '.join(pages)} without naming the version "
                          f"{'.'.join(want)} that made them")


def check(root, py, parts=("versions", "generated", "figures")):
    folder = os.path.join(root, PAGES)
    errors = []
    if "versions" in parts:
        check_versions(root, folder, project_version(root), errors)
    if "generated" in parts:
        check_generated(root, folder, py, errors)
    if "figures" in parts:
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
    """Each edit must make the check fail; returns what went wrong (nothing when every edit
    was caught). The committed pages must pass first, so that a problem they already have
    cannot pass for a catch; each edit runs only the part of the check it concerns."""
    base = check(root, py)
    if base:
        return ["the committed pages already fail the check: " + base[0].splitlines()[0]]
    major, minor = project_version(root)
    # Another major.minor than the project's: the minor before, or a major before.
    old = f"{major}.{int(minor) - 1}." if int(minor) > 0 else f"{max(int(major) - 1, 0)}.99."
    if old == f"{major}.{minor}.":
        old = f"{int(major) + 1}.0."

    def old_stamp(copy):
        page = os.path.join(copy, PAGES, "transports.md")
        return edit(page, f"zipfcoll {major}.{minor}.", f"zipfcoll {old}")

    def table_cell(copy):
        page = os.path.join(copy, PAGES, "sharded.md")
        m = re.search(r"\| (\d+\.\d+) \|", read(page))
        return m is not None and edit(page, m.group(0), f"| {m.group(1)}9 |")

    def quoted_figure(copy):
        # A figure the page quotes, changed to one its sources do not hold.
        folder = os.path.join(copy, PAGES)
        page = os.path.join(folder, "NOTES.md")
        text = read(page)
        held = held_by(["NOTES.md"], text, folder)
        figure = sorted(figures(text))[0]
        wrong = figure + "1"
        while wrong in held:
            wrong += "1"
        return edit(page, figure, wrong)

    def docs_figure(copy):
        # A figure of the first paragraph in docs/ that quotes a page or record, changed.
        folder = os.path.join(copy, PAGES)
        named = re.compile(r"(?<![\w/])(?:docs/)?benchmarks/[\w/.-]+\.(?:md|txt|csv|json)")
        for name in sorted(os.listdir(os.path.join(copy, "docs"))):
            page = os.path.join(copy, "docs", name)
            if not name.endswith(".md"):
                continue
            for para in read(page).split("\n\n"):
                if named.search(para) and figures(para):
                    figure = sorted(figures(para))[0]
                    wrong = figure + "1"
                    while wrong in held_by([], para, folder):
                        wrong += "1"
                    changed = re.sub(r"(?<![\w.])" + re.escape(figure) + r"(?!\d)", wrong, para,
                                     count=1)
                    if changed != para:  # a figure written "x2.69" is left for the next
                        return edit(page, para, changed)
        return False

    missed = []
    for name, change, part in [("an old stamp", old_stamp, "versions"),
                               ("a table cell", table_cell, "generated"),
                               ("a quoted figure no source holds", quoted_figure, "figures"),
                               ("a figure of docs/ its record does not hold", docs_figure,
                                "figures")]:
        with tempfile.TemporaryDirectory() as tmp:
            for f in ("CMakeLists.txt", "README.md"):
                shutil.copy(os.path.join(root, f), tmp)
            os.makedirs(os.path.join(tmp, "docs"))
            for f in os.listdir(os.path.join(root, "docs")):
                if f.endswith(".md"):
                    shutil.copy(os.path.join(root, "docs", f), os.path.join(tmp, "docs"))
            shutil.copytree(os.path.join(root, PAGES), os.path.join(tmp, PAGES))
            if not change(tmp):
                missed.append(f"{name} (the edit found nothing to change)")
                continue
            new = check(tmp, py, (part,))
            print(f"selftest, {name}: {len(new)} problem(s), first: "
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
            print("check_pages selftest: failed: " + "; ".join(missed))
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
