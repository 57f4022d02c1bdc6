#!/usr/bin/env python3
"""Instructions each linker executes on each job, counted by valgrind's callgrind at one thread:
a measure that does not move with the machine's load (the same binary and inputs give the same
count). rivet with `--no-fork`, wild with `--no-fork` and `--no-gc-sections` unless the job's line
collects sections, so both do the same work; both with `--threads=1`.

    python3 bench/instructions.py JOB[,JOB...] [RIVET] [WILD]
    python3 bench/instructions.py c-debug,rust-debug,cxx-big

Slow (valgrind runs a link 50-100 times slower): one job at a time. Writes
bench/results/instructions-DATE.md (and prints it).
"""
import re, subprocess, sys, tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_CACHE, rivet_bin  # noqa: E402
from profile import save  # noqa: E402
from run import machine  # noqa: E402


def count(cmd, cwd, out_file):
    """Instructions callgrind counted for `cmd` (its children included: none with --no-fork). The
    output is deleted first: rivet releases a replaced output's blocks in a `clone(CLONE_VM)` child,
    which valgrind cannot run."""
    Path(out_file).unlink(missing_ok=True)
    with tempfile.NamedTemporaryFile(prefix="rivet-callgrind-") as out:
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", *cmd],
                           cwd=cwd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed under valgrind in {cwd}:\n{r.stderr[-1500:]}")
        m = re.search(r"Collected : (\d+)", r.stderr)
        if not m:
            sys.exit(f"callgrind printed no count for {' '.join(cmd)}")
        return int(m.group(1))


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    jobs = args[0].split(",")
    rivet = Path(args[1]).resolve() if len(args) > 1 else rivet_bin()
    wild = args[2] if len(args) > 2 else "wild"
    m = machine(DEFAULT_CACHE, Path("/tmp"))
    version = subprocess.run([wild, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[0]
    lines = [f"# instructions ({m['date']})", "",
             f"Counted {m['date']} at commit {m['commit']}"
             + (" (rivet sources modified)" if m["rivet_source_modified"] else "")
             + f" by valgrind's callgrind, `--threads=1 --no-fork` for both linkers. wild: {version}.", "",
             "| job | rivet | wild | rivet / wild |", "|---|---|---|---|"]
    for job in jobs:
        jd = DEFAULT_CACHE / "jobs" / job
        gc = "--gc-sections" in (jd / "response.txt").read_text().split()
        r = count([str(rivet), "@response.txt", "-o", "/tmp/instructions-rivet", "--no-fork", "--threads=1"], jd,
                  "/tmp/instructions-rivet")
        w = count([wild, "@response.txt", "-o", "/tmp/instructions-wild", "--no-fork", "--threads=1"]
                  + ([] if gc else ["--no-gc-sections"]), jd, "/tmp/instructions-wild")
        lines.append(f"| {job} | {r / 1e6:,.1f}M | {w / 1e6:,.1f}M | {r / w:.2f} |")
        print(lines[-1], flush=True)
    save("instructions", lines + [""])


if __name__ == "__main__":
    main()
