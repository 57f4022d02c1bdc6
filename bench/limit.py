#!/usr/bin/env python3
"""Distance from the physical limit (how close a link gets to pure I/O): for each job, a link's
wall time over the time to read its inputs once and write its output once, warm.

    python3 bench/limit.py ROUNDS JOB[,JOB...] [LINKER...]
    python3 bench/limit.py 7 synth-1,c-debug target/release/rivet wild ld.lld

The limit of a job = `cat` of every input it reads (capture.json: inputs + also_read) to /dev/null
+ a sequential write of an output-sized file of zeros (`head -c N /dev/zero > FILE`, no sync, as
a warm link does not sync), each the median of ROUNDS runs after one warm-up; the links are
rotated with them. Prints a markdown table. Outputs go to $LIMIT_OUT (default /tmp).
"""
import json, os, shlex, shutil, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_CACHE, rotated  # noqa: E402


def timed(cmd, cwd):
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, shell=isinstance(cmd, str), stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rounds, jobs = int(sys.argv[1]), sys.argv[2].split(",")
    linkers = sys.argv[3:] or [str(Path(__file__).resolve().parent.parent / "target/release/rivet")]
    # Absolute paths (the links run in the job's directory); not resolved: ld.lld is a symlink
    # whose name selects the flavour.
    linkers = [os.path.abspath(l) if "/" in l else (shutil.which(l) or l) for l in linkers]
    outdir = Path(os.environ.get("LIMIT_OUT", "/tmp"))
    print("| job | inputs MB | output MB | read inputs s | write output s | limit s | "
          + " | ".join(f"{Path(l).name} s (x limit)" for l in linkers) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(linkers))
    for job in jobs:
        jd = DEFAULT_CACHE / "jobs" / job
        cap = json.loads((jd / "capture.json").read_text())
        files = [i["as"] for i in cap["inputs"]] + [p for p in cap["also_read"] if os.path.isfile(p)]
        in_bytes = sum(os.path.getsize(jd / f) for f in files)
        out_bytes = cap["output_bytes"]
        out = outdir / f"limit-{job}"
        cat = "cat " + " ".join(shlex.quote(f) for f in files) + " > /dev/null"
        write = f"head -c {out_bytes} /dev/zero > {shlex.quote(str(out))}.zeros"
        steps = {"read": cat, "write": write}
        steps.update({l: [l, "@response.txt", "-o", str(out)] for l in linkers})
        times = {k: [] for k in steps}
        for r in range(rounds + 1):
            for k in rotated(steps, r):
                t = timed(steps[k], jd)
                if r > 0:
                    times[k].append(t)
        med = {k: statistics.median(v) for k, v in times.items()}
        limit = med["read"] + med["write"]
        print(f"| {job} | {in_bytes / 1e6:.0f} | {out_bytes / 1e6:.0f} | {med['read']:.3f} | {med['write']:.3f} | "
              f"{limit:.3f} | " + " | ".join(f"{med[l]:.3f} ({med[l] / limit:.1f})" for l in linkers) + " |",
              flush=True)


if __name__ == "__main__":
    main()
