#!/usr/bin/env python3
"""A model of each link past this machine's cores: from runs at one and at two threads, each phase's
serial and parallel parts, and the link time they predict at 8, 16 and 32 threads, for rivet and
wild. Warm, rotated rounds, `--no-fork` for both; wild gets `--no-gc-sections` unless the job's line
collects sections, so both do the same work.

    python3 bench/scaling.py ROUNDS JOB[,JOB...] [RIVET] [WILD]
    python3 bench/scaling.py 7 c-debug,rust-debug,cxx-big

The model (Amdahl's law per phase): a phase that takes t1 at one thread and t2 at two has a
parallel part p = 2 (t1 - t2) (clamped to 0..t1) and a serial part s = t1 - p; at N threads it
takes s + p / N. rivet's phases are its `--print-timing` rows; wild's are its `--time` top-level
rows. It is optimistic where a phase's parallel part is bounded by memory bandwidth or by the
number of input files, and it cannot see a phase that scales only past two threads. Writes
bench/results/scaling-DATE.md (and prints it); `cp` it to docs/benchmarks/ to keep it.
"""
import statistics, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_CACHE, rotated  # noqa: E402
from profile import rivet_phases, save, setup, timed, wild_phases  # noqa: E402

THREADS = (8, 16, 32)


def split(t1, t2):
    """(serial, parallel) ms of a phase from its times at one and two threads."""
    p = min(max(2 * (t1 - t2), 0.0), t1)
    return t1 - p, p


def model(phases1, phases2):
    """Per phase (name, t1, t2, serial, parallel), leaving out the whole-link row."""
    rows = []
    for name, t1 in phases1.items():
        if name == "link" or name not in phases2:
            continue
        s, p = split(t1, phases2[name])
        rows.append((name, t1, phases2[name], s, p))
    return rows


def predict(rows, n):
    return sum(s + p / n for _, _, _, s, p in rows)


def medians(samples):
    """Phase -> median ms over the samples (dicts of phase -> ms)."""
    names = list(samples[0])
    return {k: statistics.median([s[k] for s in samples if k in s]) for k in names}


def scale_job(helper, job, rounds, rivet, wild):
    jd = DEFAULT_CACHE / "jobs" / job
    gc = "--gc-sections" in (jd / "response.txt").read_text().split()
    cmds = {}
    for t in (1, 2):
        cmds[f"rivet-{t}"] = [str(rivet), "@response.txt", "-o", f"/tmp/scaling-rivet-{t}", "--no-fork",
                              "--print-timing", f"--threads={t}"]
        cmds[f"wild-{t}"] = [wild, "@response.txt", "-o", f"/tmp/scaling-wild-{t}", "--no-fork", "--time",
                             f"--threads={t}"] + ([] if gc else ["--no-gc-sections"])
    samples = {k: [] for k in cmds}
    for i in range(rounds + 1):  # round 0 warms the caches and the previous outputs
        for k in rotated(cmds, i):
            out, wall, _ = timed(helper, cmds[k], jd)
            if i > 0:
                phases = (rivet_phases(out) if k.startswith("rivet") else wild_phases(out))
                phases = {n: (v[0] if isinstance(v, tuple) else v) for n, v in phases.items()}
                phases["wall"] = wall * 1000
                samples[k].append(phases)
    lines = [f"## {job}", ""]
    summary = []
    for linker in ("rivet", "wild"):
        m1, m2 = medians(samples[f"{linker}-1"]), medians(samples[f"{linker}-2"])
        rows = [r for r in model(m1, m2) if r[0] != "wall"]
        # What the phases do not cover (start-up, mapping, exit): a phase of its own.
        rest = [m["wall"] - sum(v for k, v in m.items() if k not in ("wall", "link")) for m in (m1, m2)]
        rows.append(("outside the phases", rest[0], rest[1], *split(max(rest[0], 0.0), max(rest[1], 0.0))))
        lines += [f"{linker}'s phases (median ms):", "",
                  "| phase | 1 thread | 2 threads | serial | parallel |", "|---|---|---|---|---|"]
        for name, t1, t2, s, p in rows:
            if t1 >= 0.5:
                lines.append(f"| {name} | {t1:.1f} | {t2:.1f} | {s:.1f} | {p:.1f} |")
        serial, par = sum(r[3] for r in rows), sum(r[4] for r in rows)
        lines += [f"| all phases | {sum(r[1] for r in rows):.1f} | {sum(r[2] for r in rows):.1f} | {serial:.1f} | {par:.1f} |", ""]
        summary.append((linker, m1["wall"], m2["wall"], serial, par, [predict(rows, n) for n in THREADS]))
    head = "| linker | wall 1 thread ms | wall 2 threads ms | serial ms | parallel ms | " + " | ".join(
        f"{n} threads ms" for n in THREADS) + " |"
    table = [head, "|" + "---|" * (5 + len(THREADS))]
    for linker, w1, w2, s, p, pred in summary:
        table.append(f"| {linker} | {w1:.1f} | {w2:.1f} | {s:.1f} | {p:.1f} | " + " | ".join(f"{x:.1f}" for x in pred) + " |")
    r, w = summary[0][5], summary[1][5]
    table += ["", "rivet / wild, predicted: " + ", ".join(f"{n} threads {a / b:.2f}×" for n, a, b in zip(THREADS, r, w)), ""]
    return lines[:2] + table + lines[2:]


def main():
    rounds, jobs, rivet, wild, m, helper, version = setup(sys.argv[1:], __doc__)
    lines = [f"# scaling ({m['date']})", "",
             f"Measured {m['date']} at commit {m['commit']}"
             + (" (rivet sources modified)" if m["rivet_source_modified"] else "")
             + f"; {m['nproc']} cores ({m['cpu']}), {m['ram_gb']} GB RAM, Linux {m['kernel']}. Warm; medians of "
             f"{rounds} rotated rounds after a warm-up round; `--no-fork`, `--threads=1` and `--threads=2` for both "
             f"linkers. wild: {version}. Predictions by Amdahl's law per phase (see bench/scaling.py): an upper "
             "bound on what more cores give.", ""]
    for job in jobs:
        lines += scale_job(helper, job, rounds, rivet, wild)
    save("scaling", lines)


if __name__ == "__main__":
    main()
