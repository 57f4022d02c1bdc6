#!/usr/bin/env python3
"""`--incremental` on every job: what it costs a full link, and what a relink that nothing changed
costs. Five configurations:

  full            rivet --no-fork, a plain link
  incr-full       rivet --no-fork --incremental, its state deleted before each link: a full link
                  that hashes the files objects were loaded from, works out the objects' shapes and
                  writes the state for the next one
  incr-again      rivet --no-fork --incremental, its output's mtime moved before each link: a full
                  link (the output is not the one the state describes) that takes the hashes of the
                  files it read from the state, as a full link after an edit does for the files the
                  edit left alone
  incr-unchanged  rivet --no-fork --incremental over its own previous output and state: the relink
                  after a build step that changed nothing the link reads (nothing is written)
  full-fork, incr-full-fork
                  the two full links as users run them (`--fork`, the default): the command returns
                  once the output is in place, and the state is written after that

    python3 bench/incremental.py ROUNDS [JOB,...] [RIVET]
    python3 bench/incremental.py 9                  # every job of the corpus (ALL_JOBS)

Per job: a link by ld.bfd for the reference; each configuration's output run (or loaded by the
job's check program) against it, and byte-compared with the plain link's; then ROUNDS rotated
rounds after a warm-up round, measured by run.py's spawn helper (wall, user+sys CPU). Each
unchanged relink's report must say `up to date` and leave the output's bytes as they were. Writes
bench/results/incremental-DATE.{md,json}; `bench/keep.py` keeps them (the `incremental` scenario).
"""
import os, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import ALL_JOBS, DEFAULT_CACHE, rotated  # noqa: E402
from run import (bfd_reference, check_output, machine, measure, measured_header, med, rounds_jobs_rivet, save_result,  # noqa: E402
                 spawn_helper)

OUT = Path(os.environ.get("INCREMENTAL_BENCH_OUT", "/tmp"))
LABELS = ("full", "incr-full", "incr-again", "incr-unchanged", "full-fork", "incr-full-fork")


def state_of(out):
    return Path(str(out) + ".rivet-incremental")


def bench_job(helper, job, rounds, rivet):
    ref = OUT / f"incr-bench-{job}-bfd"
    jd, meta, expected = bfd_reference(job, ref)
    outs = {k: OUT / f"incr-bench-{job}-{k}" for k in LABELS}
    cmds = {
        "full": [str(rivet), "--no-fork", "--print-timing"],
        "incr-full": [str(rivet), "--no-fork", "--print-timing", "--incremental"],
        "incr-again": [str(rivet), "--no-fork", "--print-timing", "--incremental"],
        "incr-unchanged": [str(rivet), "--no-fork", "--print-timing", "--incremental"],
        "full-fork": [str(rivet), "--print-timing"],
        "incr-full-fork": [str(rivet), "--print-timing", "--incremental"],
    }

    def link(label, keep_output=False):
        out = outs[label]
        if label in ("incr-full", "incr-full-fork"):
            state_of(out).unlink(missing_ok=True)
        if label == "incr-again" and out.exists():
            os.utime(out, ns=(out.stat().st_atime_ns, out.stat().st_mtime_ns + 1000))
        m = measure(helper, [*cmds[label], "@response.txt", "-o", str(out)], jd, [], 600, keep_output=keep_output)
        if not m["ok"]:
            sys.exit(f"{job}: {label} failed: {m.get('error')}")
        return m

    res = {}
    for label in LABELS:
        for p in (outs[label], state_of(outs[label])):
            p.unlink(missing_ok=True)
        link(label)
        if label == "incr-again":
            said = link(label, keep_output=True)["output"]
            if "changed since the last link wrote it; state kept for the next link" not in said:
                sys.exit(f"{job}: the link after the output's mtime moved was not a full one keeping a state:\n{said[-2000:]}")
        if label == "incr-unchanged":
            before = outs[label].stat()
            said = link(label, keep_output=True)["output"]
            after = outs[label].stat()
            if "up to date: nothing written" not in said or (before.st_ino, before.st_mtime_ns) != (after.st_ino, after.st_mtime_ns):
                sys.exit(f"{job}: the unchanged relink was not up to date:\n{said[-2000:]}")
        got = check_output(jd, meta, outs[label])
        same = outs[label].read_bytes() == outs["full"].read_bytes()
        res[label] = {"checked": None if expected is None else got == expected, "identical": same,
                      "output_mb": outs[label].stat().st_size / 1e6, "samples": []}
        if got != expected or not same:
            print(f"{job}: {label}'s output differs (from ld.bfd's run: {got != expected}; from the plain link's bytes: "
                  f"{not same})", file=sys.stderr)
    res["incr-full"]["state_kb"] = state_of(outs["incr-full"]).stat().st_size / 1e3
    for i in range(rounds + 1):
        for label in rotated(LABELS, i):
            m = link(label)
            if i > 0:
                res[label]["samples"].append(m)
    for label in LABELS:
        outs[label].unlink(missing_ok=True)
        state_of(outs[label]).unlink(missing_ok=True)
    ref.unlink(missing_ok=True)
    return meta, res


def main():
    rounds, jobs, rivet, _ = rounds_jobs_rivet(__doc__, ALL_JOBS)
    m = machine(DEFAULT_CACHE, OUT)
    helper = spawn_helper(DEFAULT_CACHE)
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    header = measured_header(m, rounds) + ", all with `--print-timing`."
    results, rows = [], []
    for job in jobs:
        meta, res = bench_job(helper, job, rounds, rivet)
        for label, r in res.items():
            results.append({"job": job, "linker": label, "runs": len(r["samples"]),
                            "median": med([s["wall"] for s in r["samples"]]), "output_ok": r["checked"],
                            "identical": r["identical"], "output_mb": r["output_mb"],
                            "samples": [{k: s[k] for k in ("wall", "user", "sys", "rss_mb")} for s in r["samples"]]})
        w = {k: med([s["wall"] for s in r["samples"]]) for k, r in res.items()}
        cpu = {k: med([s["user"] + s["sys"] for s in r["samples"]]) for k, r in res.items()}
        checked = "/".join({True: "yes", False: "**NO**", None: "-"}[res[k]["checked"]] for k in LABELS)
        identical = "yes" if all(res[k]["identical"] for k in LABELS) else "**NO**"
        rows.append(f"| {job} | {w['full'] * 1000:.1f} | {w['incr-full'] * 1000:.1f} (**{w['incr-full'] / w['full']:.3f}**) | "
                    f"{w['incr-again'] * 1000:.1f} (**{w['incr-again'] / w['full']:.3f}**) | "
                    f"{w['incr-unchanged'] * 1000:.1f} (**{w['incr-unchanged'] / w['full']:.3f}**) | "
                    f"{w['full-fork'] * 1000:.1f} / {w['incr-full-fork'] * 1000:.1f} "
                    f"(**{w['incr-full-fork'] / w['full-fork']:.3f}**) | "
                    f"{cpu['full'] * 1000:.1f} / {cpu['incr-full'] * 1000:.1f} / {cpu['incr-unchanged'] * 1000:.1f} | "
                    f"{res['full']['output_mb']:.2f} | {res['incr-full']['state_kb']:.1f} | {identical} | {checked} |")
        print(rows[-1], flush=True)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    header += (f" Load average (1, 5, 15 min) {' '.join(load_before)} at the start, {' '.join(load_after)} at the end.")
    lines = [f"# incremental ({m['date']})", "", header, "",
             "**full**: a plain link, `--no-fork`. **incr-full**: `--incremental` with no state (a full link that hashes "
             "the files objects were loaded from, works out the objects' shapes and writes the state), `--no-fork`. **incr-again**: `--incremental` after the output's mtime "
             "moved (a full link that takes every file's hash from the state, as one after an edit does for the files the "
             "edit left alone), `--no-fork`. **incr-unchanged**: `--incremental` again, nothing "
             "changed (the report says `up to date: nothing written`), `--no-fork`. **as users run them**: the plain and "
             "the incremental full link with `--fork` (the default: the command returns once the output is in place, "
             "and the state is written after). Ratios are against the plain link. Identical: every configuration's output "
             "is the plain link's, byte for byte. Checked: each output run (or loaded) against ld.bfd's "
             "(full / incr-full / incr-again / incr-unchanged / full-fork / incr-full-fork).", "",
             "| job | full ms | incr-full ms | incr-again ms | incr-unchanged ms | as users run them: full / incr-full ms | "
             "CPU ms (full / incr-full / unchanged) | output MB | state KB | identical | checked |",
             "|---|---|---|---|---|---|---|---|---|---|---|", *rows, ""]
    save_result("incremental", m, header, rounds, results, lines)


if __name__ == "__main__":
    main()
