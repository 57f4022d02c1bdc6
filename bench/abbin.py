#!/usr/bin/env python3
"""Before/after: rotated runs of two (or more) rivet binaries on corpus jobs, warm, medians and the
ratio of each to the first. For the numbers in a commit message that claims speed. A binary may
come with arguments of its own, in one quoted word (another linker, or rivet with an option).

    python3 bench/abbin.py ROUNDS JOB[,JOB...] BIN_A BIN_B [BIN...]
    python3 bench/abbin.py 15 synth-1,rust-debug /tmp/rivet-base target/release/rivet
    python3 bench/abbin.py 11 cxx-big target/release/rivet "wild --no-fork --no-gc-sections"

Outputs go to $ABBIN_OUT (default /tmp); one untimed warm-up link per binary and job first.
A link that leaves OUT.dbg (`--separate-debug-file`) may still be writing it when it returns: the
next run waits for its lock (`flock`, as mold and rivet hold it), and that time is reported too
(`done=`), after the link-return time.
"""
import os, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_CACHE, rotated  # noqa: E402


def binary_commands(bins):
    """Each binary with its arguments (one quoted word) as an argument list. A path is made
    absolute (the links run in the job's directory); a bare name is looked up on PATH when run."""
    return [[str(Path(w[0]).resolve()) if "/" in w[0] else w[0], *w[1:]] for w in (b.split() for b in bins)]


def arguments(doc):
    """ROUNDS JOB[,JOB...] BIN... from the command line (`doc` is the usage): the rounds, the jobs,
    the binaries as written and as argument lists."""
    if len(sys.argv) < 5:
        sys.exit(doc)
    rounds, jobs, bins = int(sys.argv[1]), sys.argv[2].split(","), sys.argv[3:]
    return rounds, jobs, bins, binary_commands(bins)


def label(b):
    """How a binary (with its arguments) is named in the results: its file name and arguments."""
    first = b.split()[0]
    return f"{Path(first).name}{b[len(first):]}"


def main():
    rounds, jobs, bins, cmds = arguments(__doc__)
    outdir = Path(os.environ.get("ABBIN_OUT", "/tmp"))
    for job in jobs:
        jd = DEFAULT_CACHE / "jobs" / job
        times = [[] for _ in bins]
        done = [[] for _ in bins]
        for i in range(rounds + 1):
            for k in rotated(range(len(bins)), i):
                out = outdir / f"abbin-{job}-{k}"
                Path(f"{out}.dbg").unlink(missing_ok=True)
                start = time.perf_counter()
                subprocess.run(cmds[k] + ["@response.txt", "-o", str(out)], cwd=jd, check=True, stdout=subprocess.DEVNULL)
                returned = time.perf_counter() - start
                dbg = Path(f"{out}.dbg")
                if dbg.exists():
                    subprocess.run(["flock", str(dbg), "true"], check=True)
                if i > 0:
                    times[k].append(returned)
                    done[k].append(time.perf_counter() - start)
        base = statistics.median(times[0])
        def one(b, t, d):
            line = f"{label(b)}={statistics.median(t):.4f}({statistics.median(t) / base:.3f})"
            if statistics.median(d) - statistics.median(t) > 0.001:
                line += f"[done={statistics.median(d):.4f}]"
            return line
        print(job, " ".join(one(b, t, d) for b, t, d in zip(bins, times, done)), flush=True)


if __name__ == "__main__":
    main()
