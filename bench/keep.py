#!/usr/bin/env python3
"""Keeps a bench/run.py result as the latest of its scenario in docs/benchmarks/: copies its .md,
.json and .png there, appends one line per job x linker (date, commit, scenario, job, linker,
median_s, runs, result) to docs/benchmarks/history.jsonl, and deletes the result of the same
scenario it replaces (whose medians are already in the history).

    python3 bench/keep.py bench/results/warm-20261126-0530.json
"""
import json
import re
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"


def history_lines(result: dict, name: str) -> list:
    m = re.search(r"Measured (\d{4}-\d\d-\d\d \d\d:\d\d) at commit (\w+)", result["header"])
    if not m:
        sys.exit(f"{name}: no 'Measured DATE at commit C' in its header")
    date, commit = m.groups()
    lines = []
    for r in result["results"]:
        line = {"date": date, "commit": commit, "scenario": result["scenario"], "job": r["job"],
                "linker": r["linker"], "median_s": r.get("median"), "runs": r.get("runs"), "result": name}
        if r.get("median") is None:
            line["note"] = "; ".join(sorted({s.get("error", f"exit {s.get('exit')}") for s in r["samples"]}))
        lines.append(line)
    return lines


def main():
    if len(sys.argv) != 2 or not sys.argv[1].endswith(".json"):
        sys.exit(__doc__)
    src = Path(sys.argv[1])
    result = json.loads(src.read_text())
    scenario = result["scenario"]
    stem = src.stem
    if not stem.startswith(scenario + "-"):
        sys.exit(f"{src}: the file name does not start with its scenario ({scenario})")
    old = sorted(p for p in DOCS.glob(f"{scenario}-*") if p.stem != stem)
    with open(DOCS / "history.jsonl", "a") as h:
        for line in history_lines(result, f"{stem}.md"):
            h.write(json.dumps(line) + "\n")
    for ext in (".md", ".json", ".png"):
        if src.with_suffix(ext).exists():
            shutil.copy(src.with_suffix(ext), DOCS / f"{stem}{ext}")
    for p in old:
        p.unlink()
    print(f"kept {stem} in {DOCS}; replaced: {', '.join(p.name for p in old) or 'nothing'}")


if __name__ == "__main__":
    main()
