#!/usr/bin/env python3
"""rivet against wild on every job, in one table: wall time doing the same work (`--no-fork` for
both, wild with `--no-gc-sections`) and as users run them (both linkers' defaults: they fork, wild
collects unused sections), user+sys CPU, peak RSS, the peak of anonymous memory (RssAnon: the
heap and other private memory, without the mapped inputs and output that peak RSS counts), and
the instruction counts of the latest `bench/instructions.py` result kept in docs/benchmarks when
rivet's sources have not changed since it.

    python3 bench/wild.py ROUNDS [JOB,...] [RIVET] [WILD]
    python3 bench/wild.py 9                      # every job of the corpus (ALL_JOBS)
    python3 bench/wild.py 9 cxx-templates,rust-big

Per job: one link by ld.bfd for the reference, one link by each configuration whose output is
checked against it (run with the job's run_args, or loaded by its check program: run.py's
check), then ROUNDS rotated rounds after a warm-up round, each link over its own previous output,
measured by run.py's spawn helper (wall, CPU and peak RSS of the measured process: for the
forking defaults, the parent, which returns when the output is complete), then 3 links per
`--no-fork` configuration whose RssAnon is sampled from /proc/PID/status every millisecond (a
lower bound of the peak) and whose minor page faults wait4 reports. Writes
bench/results/wild-DATE.{md,json}; `bench/keep.py` keeps them (the `wild` scenario).
"""
import os, re, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import ALL_JOBS, DEFAULT_CACHE, rotated  # noqa: E402
from run import (bfd_reference, check_output, machine, measure, measured_header, med, rounds_jobs_rivet, save_result,  # noqa: E402
                 spawn_helper)

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks"
OUT = Path(os.environ.get("WILD_BENCH_OUT", "/tmp"))
ANON_RUNS = 3


def configurations(rivet, wild):
    """Label -> the linker's arguments before `@response.txt` (the labels are run.py's)."""
    return {
        "rivet": [str(rivet), "--no-fork"],
        "wild-nogc": [wild, "--no-fork", "--no-gc-sections"],
        "rivet-fork": [str(rivet)],
        "wild-fork": [wild],
    }


def anon_peak(cmd, cwd):
    """Runs `cmd` and samples its RssAnon every millisecond until it exits: the largest sample (MB)
    and the minor page faults of the process (wait4's rusage)."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    status = Path(f"/proc/{p.pid}/status")
    while True:
        pid, wait_status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        try:
            m = re.search(r"^RssAnon:\s+(\d+) kB", status.read_text(), re.M)
            if m:
                peak = max(peak, int(m.group(1)))
        except OSError:
            pass
        time.sleep(0.001)
    p.returncode = os.waitstatus_to_exitcode(wait_status)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed in {cwd} (exit {p.returncode})")
    return peak / 1024, ru.ru_minflt


def instructions():
    """The latest kept instructions-*.md: (file name, commit, {job: (rivet M, wild M)}) when rivet's
    sources (crates/, Cargo.*) are the same at its commit and now; None otherwise."""
    kept = sorted(DOCS.glob("instructions-*.md"))
    if not kept:
        return None
    text = kept[-1].read_text()
    m = re.search(r"at commit (\w+)", text)
    if not m:
        return None
    same = subprocess.run(["git", "diff", "--quiet", m.group(1), "HEAD", "--", "crates", "Cargo.toml", "Cargo.lock"],
                          cwd=ROOT).returncode == 0
    if not same:
        return None
    counts = {}
    for row in re.finditer(r"^\| (\S+) \| ([\d,.]+)M \| ([\d,.]+)M \|", text, re.M):
        counts[row.group(1)] = (float(row.group(2).replace(",", "")), float(row.group(3).replace(",", "")))
    return kept[-1].name, m.group(1), counts


def bench_job(helper, job, rounds, cfgs):
    ref = OUT / f"wild-bench-{job}-bfd"
    jd, meta, expected = bfd_reference(job, ref)
    res = {}
    for label, pre in cfgs.items():
        out = OUT / f"wild-bench-{job}-{label}"
        out.unlink(missing_ok=True)
        m = measure(helper, [*pre, "@response.txt", "-o", str(out)], jd, [], 600)
        if not m["ok"]:
            sys.exit(f"{job}: {label} failed: {m.get('error')}")
        got = check_output(jd, meta, out)
        res[label] = {"checked": None if expected is None else got == expected, "output_mb": out.stat().st_size / 1e6,
                      "samples": []}
        if got != expected:
            print(f"{job}: {label}'s output differs from ld.bfd's: {str(got)[:500]} against {str(expected)[:500]}",
                  file=sys.stderr)
    for i in range(rounds + 1):
        for label in rotated(cfgs, i):
            out = OUT / f"wild-bench-{job}-{label}"
            m = measure(helper, [*cfgs[label], "@response.txt", "-o", str(out)], jd, [], 600)
            if not m["ok"]:
                sys.exit(f"{job}: {label} failed: {m.get('error')}")
            if i > 0:
                res[label]["samples"].append(m)
    for label in ("rivet", "wild-nogc"):
        out = OUT / f"wild-bench-{job}-{label}"
        runs = [anon_peak([*cfgs[label], "@response.txt", "-o", str(out)], jd) for _ in range(ANON_RUNS)]
        res[label]["anon_mb"] = [r[0] for r in runs]
        res[label]["minor_faults"] = [r[1] for r in runs]
    for label in cfgs:
        (OUT / f"wild-bench-{job}-{label}").unlink(missing_ok=True)
    ref.unlink(missing_ok=True)
    return meta, res


def main():
    rounds, jobs, rivet, rest = rounds_jobs_rivet(__doc__, ALL_JOBS)
    wild = rest[0] if rest else "wild"
    cfgs = configurations(rivet, wild)
    m = machine(DEFAULT_CACHE, OUT)
    helper = spawn_helper(DEFAULT_CACHE)
    version = subprocess.run([wild, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[0]
    ins = instructions()
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    header = measured_header(m, rounds) + f", each link over its own previous output. wild: {version}."
    results, rows = [], []
    for job in jobs:
        meta, res = bench_job(helper, job, rounds, cfgs)
        for label, r in res.items():
            results.append({"job": job, "linker": label, "runs": len(r["samples"]),
                            "median": med([s["wall"] for s in r["samples"]]), "output_ok": r["checked"],
                            "output_mb": r["output_mb"], "anon_mb": r.get("anon_mb"),
                            "minor_faults": r.get("minor_faults"),
                            "samples": [{k: s[k] for k in ("wall", "user", "sys", "rss_mb")} for s in r["samples"]]})
        w = {k: med([s["wall"] for s in r["samples"]]) for k, r in res.items()}
        cpu = {k: med([s["user"] + s["sys"] for s in r["samples"]]) for k, r in res.items()}
        rss = {k: med([s["rss_mb"] for s in r["samples"]]) for k, r in res.items()}
        anon = {k: max(res[k]["anon_mb"]) for k in ("rivet", "wild-nogc")}
        faults = {k: med(res[k]["minor_faults"]) / 1000 for k in ("rivet", "wild-nogc")}
        checked = "/".join({True: "yes", False: "**NO**", None: "-"}[res[k]["checked"]] for k in cfgs)
        ic = ins[2].get(job) if ins else None
        rows.append(f"| {job} | {meta['input_bytes'] / 1e6:.0f} | {w['rivet']:.3f} / {w['wild-nogc']:.3f} "
                    f"(**{w['rivet'] / w['wild-nogc']:.2f}**) | {w['rivet-fork']:.3f} / {w['wild-fork']:.3f} "
                    f"({w['rivet-fork'] / w['wild-fork']:.2f}) | {cpu['rivet']:.3f} / {cpu['wild-nogc']:.3f} "
                    f"({cpu['rivet'] / cpu['wild-nogc']:.2f}) | {rss['rivet']:.0f} / {rss['wild-nogc']:.0f} | "
                    f"{anon['rivet']:.0f} / {anon['wild-nogc']:.0f} ({anon['rivet'] / anon['wild-nogc']:.2f}) | "
                    f"{faults['rivet']:.1f}k / {faults['wild-nogc']:.1f}k ({faults['rivet'] / faults['wild-nogc']:.2f}) | "
                    + (f"{ic[0]:,.0f}M / {ic[1]:,.0f}M ({ic[0] / ic[1]:.2f})" if ic else "-")
                    + f" | {res['rivet-fork']['output_mb']:.2f} / {res['wild-fork']['output_mb']:.2f} | {checked} |")
        print(rows[-1], flush=True)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    header += (f" Load average (1, 5, 15 min) {' '.join(load_before)} at the start, {' '.join(load_after)} at the end: "
               f"other work on the machine slows both linkers' wall times, not their instructions.")
    lines = [f"# wild ({m['date']})", "", header, "",
             "Each cell is rivet / wild (ratio). **same work**: `rivet --no-fork` against `wild --no-fork "
             "--no-gc-sections` (a job whose line has `--gc-sections` collects with both). **defaults**: both as "
             "users run them (they fork and return when the output is complete; wild collects unused sections, "
             "so its output is smaller: the output column is the defaults'). CPU = user+sys, peak RSS (wait4's, "
             "mapped files included) and RssAnon (sampled each ms, the most of "
             f"{ANON_RUNS} links; minor page faults, their median) are of the same-work links. Instructions: callgrind at `--threads=1`, "
             + (f"from [{ins[0]}]({ins[0]}) (commit {ins[1]}, rivet's sources unchanged since)" if ins
                else "none kept for these sources (`bench/instructions.py`)")
             + ". Checked: each output run against ld.bfd's (rivet, wild-nogc, rivet-fork, wild-fork).", "",
             "| job | inputs MB | wall s, same work | wall s, defaults | CPU s | peak RSS MB | RssAnon peak MB | "
             "minor faults | instructions | output MB | checked |",
             "|---|---|---|---|---|---|---|---|---|---|---|", *rows, ""]
    save_result("wild", m, header, rounds, results, lines)


if __name__ == "__main__":
    main()
