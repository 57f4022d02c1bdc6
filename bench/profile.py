#!/usr/bin/env python3
"""Where each link's time goes, rivet beside wild doing the same work: per job, rivet's phases
(`--print-timing`: wall ms, CPU ms and cores of each phase, medians of the rounds) with its user
and system time and peak RSS, and wild's top-level phases (`--time`) with the same totals. Warm,
rotated rounds, `--no-fork` for both (the totals are the link's own process); wild gets
`--no-gc-sections` unless the job's line collects sections, so both do the same work.

    python3 bench/profile.py [--cold] ROUNDS JOB[,JOB...] [RIVET] [WILD]
    python3 bench/profile.py 9 c-debug,rust-debug,cxx-big
    python3 bench/profile.py --cold 5 cxx-big      # page cache dropped before every link (root)

RIVET defaults to target/release/rivet, WILD to `wild` on PATH. Writes
bench/results/profile-DATE.md (and prints it); `cp` it to docs/benchmarks/ to keep it.
"""
import datetime, re, statistics, subprocess, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_CACHE, rivet_bin, rotated  # noqa: E402
from run import drop_caches, machine, measure, spawn_helper  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def timed(helper, cmd, cwd):
    """Runs `cmd` through run.py's `measure` (its spawn helper: the peak RSS is the linker's own,
    not the interpreter's): what it printed (rivet's timing goes to stderr, wild's to stdout), wall
    seconds and (user s, sys s, peak RSS MB)."""
    m = measure(helper, cmd, cwd, [], 600, keep_output=True)
    if not m["ok"]:
        sys.exit(f"{' '.join(cmd)} failed in {cwd}:\n{m.get('error')}")
    return m["output"], m["wall"], (m["user"], m["sys"], m["rss_mb"])


def rivet_phases(err):
    """`--print-timing`'s rows: phase -> (ms, cpu ms), in the table's order."""
    rows = {}
    for line in err.splitlines():
        m = re.match(r"^(?:link|  (\S.*?))\s+([\d.]+)\s+[\d.]+%\s+([\d.]+)\s+(?:[\d.]+|-)$", line)
        if m:
            rows[m.group(1) or "link"] = (float(m.group(2)), float(m.group(3)))
    if not rows:
        sys.exit("rivet printed no --print-timing table")
    return rows


def wild_phases(err):
    """`--time`'s top-level rows (not inside another's box): phase -> ms, in its order."""
    rows = {}
    for line in err.splitlines():
        m = re.match(r"^[├└┌][─┬┴]*\s+([\d.]+) (.+)$", line)
        if m and m.group(2) != "Link":
            rows[m.group(2)] = float(m.group(1))
    return rows


def med(xs):
    return statistics.median(xs) if xs else 0.0


def profile_job(helper, job, rounds, rivet, wild, cold):
    jd = DEFAULT_CACHE / "jobs" / job
    gc = "--gc-sections" in (jd / "response.txt").read_text().split()
    cmds = {
        "rivet": [str(rivet), "@response.txt", "-o", "/tmp/profile-rivet", "--no-fork", "--print-timing"],
        "wild": [wild, "@response.txt", "-o", "/tmp/profile-wild", "--no-fork", "--time"]
        + ([] if gc else ["--no-gc-sections"]),
    }
    samples = {k: [] for k in cmds}
    for i in range(rounds + 1):  # round 0 warms the caches and the previous outputs
        for k in rotated(cmds, i):
            if cold:
                drop_caches()
            s = timed(helper, cmds[k], jd)
            if i > 0:
                samples[k].append(s)
    out = [f"## {job}", ""]
    totals = []
    for k, ss in samples.items():
        walls = [s[1] for s in ss]
        user, sys_, rss = (med([s[2][n] for s in ss]) for n in range(3))
        totals.append(f"| {k} | {med(walls):.3f} | {user:.3f} | {sys_:.3f} | {(user + sys_) / med(walls):.2f} | {rss:.0f} |")
    out += ["| linker | wall s | user s | sys s | cores | peak RSS MB |", "|---|---|---|---|---|---|", *totals, ""]
    phases = [rivet_phases(s[0]) for s in samples["rivet"]]
    out += ["rivet's phases (medians; cores = CPU / wall of the phase):", "",
            "| phase | ms | CPU ms | cores |", "|---|---|---|---|"]
    for name in phases[0]:
        ms = med([p[name][0] for p in phases if name in p])
        cpu = med([p[name][1] for p in phases if name in p])
        if ms >= 0.5 or name == "link":
            out.append(f"| {name} | {ms:.1f} | {cpu:.1f} | {cpu / ms if ms else 0:.2f} |")
    wp = [wild_phases(s[0]) for s in samples["wild"]]
    out += ["", "wild's top-level phases (medians, ms; wild reports no CPU per phase):", "",
            "| phase | ms |", "|---|---|"]
    for name in wp[0]:
        ms = med([p[name] for p in wp if name in p])
        if ms >= 0.5:
            out.append(f"| {name} | {ms:.1f} |")
    return out + [""]


def setup(args, usage):
    """`ROUNDS JOB[,JOB...] [RIVET] [WILD]`: (rounds, jobs, rivet, wild, machine facts, spawn helper,
    wild's version line)."""
    if len(args) < 2:
        sys.exit(usage)
    rounds, jobs = int(args[0]), args[1].split(",")
    rivet = Path(args[2]).resolve() if len(args) > 2 else rivet_bin()
    wild = args[3] if len(args) > 3 else "wild"
    m = machine(DEFAULT_CACHE, Path("/tmp"))
    helper = spawn_helper(DEFAULT_CACHE)
    version = subprocess.run([wild, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[0]
    return rounds, jobs, rivet, wild, m, helper, version


def save(scenario, lines):
    """Writes the report to bench/results/SCENARIO-DATE.md and prints it."""
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines)
    path = results / f"{scenario}-{datetime.datetime.now().strftime('%Y%m%d-%H%M')}.md"
    path.write_text(text)
    print(text)
    print(f"-> {path}", file=sys.stderr)


def main():
    args = sys.argv[1:]
    cold = args[:1] == ["--cold"]
    rounds, jobs, rivet, wild, m, helper, version = setup(args[1:] if cold else args, __doc__)
    scenario = "profile-cold" if cold else "profile"
    lines = [f"# {scenario} ({m['date']})", "",
             f"Measured {m['date']} at commit {m['commit']}"
             + (" (rivet sources modified)" if m["rivet_source_modified"] else "")
             + f"; {m['nproc']} cores ({m['cpu']}), {m['ram_gb']} GB RAM, Linux {m['kernel']}; corpus on "
             f"{m['corpus_fs']}, outputs on {m['output_fs']}. "
             + ("Cold: the page cache dropped before every link" if cold else "Warm") + f"; medians of {rounds} rotated rounds after a "
             f"warm-up round; each link over its own previous output; `--no-fork` for both linkers. wild: {version}.",
             ""]
    for job in jobs:
        lines += profile_job(helper, job, rounds, rivet, wild, cold)
    save(scenario, lines)


if __name__ == "__main__":
    main()
