#!/usr/bin/env python3
"""Stamps the raw outputs of a benchmark run with what made them: the version, the commit
(with "+dirty" when the sources differed from it) and the command.

usage: stamp_outputs.py STAMP FILE...
  .txt and .csv files get a first line "# STAMP"; a JSON object gets the key "made_by"; a
  file of JSON lines (one record per line, as the trainer logs) gets a first record
  {"event": "made_by", "made_by": STAMP}. A file stamped already is left as it is.
"""
import json
import sys


def stamp_file(path, stamp):
    with open(path) as f:
        text = f.read()
    if path.endswith(".json"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            doc = None
        if isinstance(doc, dict):
            if "made_by" in doc:
                return
            doc = {"made_by": stamp, **doc}
            text = json.dumps(doc, indent=1) + "\n"
        else:  # JSON lines
            if text.startswith('{"event": "made_by"'):
                return
            text = json.dumps({"event": "made_by", "made_by": stamp}) + "\n" + text
    else:
        if text.startswith("# made by "):
            return
        text = f"# made by {stamp}\n" + text
    with open(path, "w") as f:
        f.write(text)


def main():
    stamp = sys.argv[1]
    for path in sys.argv[2:]:
        stamp_file(path, stamp)


if __name__ == "__main__":
    main()
