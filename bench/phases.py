#!/usr/bin/env python3
"""Before/after of `--print-timing` phases: rotated runs of two (or more) rivet binaries on corpus
jobs, warm, with the output reused (a new file linked once, then linked again to the same path:
the second link is measured) and fresh (the output deleted before the measured link). Prints the
medians of the `create output` and `write` rows, of their sum per link, and of the whole `link`,
each binary's create+write over the first's. For changes to how the output is created and
written, whose effect a wall-clock run (bench/abbin.py) cannot resolve from the noise.

    python3 bench/phases.py ROUNDS JOB[,JOB...] BIN_A BIN_B [BIN...]
    python3 bench/phases.py 17 c-debug,rust-debug,cxx-big /tmp/rivet-base target/release/rivet
    python3 bench/phases.py 17 cxx-big target/release/rivet "target/release/rivet --populate-output"

A binary may come with arguments of its own, in one quoted word. Outputs go to $PHASES_OUT
(default /tmp); one warm-up round first; PHASES_MODES=reused or =fresh measures only that case.
"""
import os, statistics, subprocess, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from abbin import arguments, label  # noqa: E402
from corpus import DEFAULT_CACHE, rotated  # noqa: E402

ROWS = ("create output", "write", "link")


def link(cmd, job, out):
    """One link with --print-timing: {row: wall ms} for ROWS (the first row of each name)."""
    r = subprocess.run(cmd + ["@response.txt", "-o", str(out), "--print-timing"], cwd=DEFAULT_CACHE / "jobs" / job,
                       capture_output=True, text=True, check=True)
    rows = {}
    for line in r.stderr.splitlines():
        for name in ROWS:
            rest = line.strip()[len(name):].split()
            if line.strip().startswith(name + " ") and rest and rest[0].replace(".", "").isdigit():
                rows.setdefault(name, float(rest[0]))
    return rows


def main():
    rounds, jobs, bins, cmds = arguments(__doc__)
    outdir = Path(os.environ.get("PHASES_OUT", "/tmp"))
    for job in jobs:
        for mode in os.environ.get("PHASES_MODES", "reused,fresh").split(","):
            res = [[] for _ in bins]
            for i in range(rounds + 1):
                for k in rotated(range(len(bins)), i):
                    out = outdir / f"phases-{job}-{k}"
                    out.unlink(missing_ok=True)
                    if mode == "reused":
                        link(cmds[k], job, out)  # the previous output: a new file, made by this binary
                    rows = link(cmds[k], job, out)
                    if i > 0:
                        res[k].append(rows)
                    out.unlink(missing_ok=True)
            base = statistics.median(r["create output"] + r["write"] for r in res[0])
            cols = []
            for b, rs in zip(bins, res):
                med = {n: statistics.median(r[n] for r in rs) for n in ROWS}
                cw = statistics.median(r["create output"] + r["write"] for r in rs)
                cols.append(f"{label(b)}: create {med['create output']:.2f} write {med['write']:.2f} "
                            f"create+write {cw:.2f} ({cw / base:.3f}) link {med['link']:.1f}")
            print(f"{job} {mode} (ms): " + " | ".join(cols), flush=True)


if __name__ == "__main__":
    main()
