#!/usr/bin/env python3
"""Rotated A/B runs of rivet's automatic I/O choice against each fixed setting on one corpus job:
`auto` (no flag), `mmap`, `heap` (write-behind), `prefetch`, `noprefetch`. Each round runs every
setting once, the starting setting rotating, and prints the medians and their ratio to the best.
It answers "is auto within 5% of the best fixed setting?" with more runs than bench/run.py affords,
also as paired per-round ratios (auto over each setting in the same round, median over rounds).

    python3 bench/ab.py JOB OUTDIR ROUNDS [PREFIX...]
    python3 bench/ab.py synth-1 /tmp 12                                   # warm
    AB_DROP=1 python3 bench/ab.py synth-1 /tmp 6                          # cold: sync + drop_caches
                                                                          # before each run (untimed, root)
    python3 bench/ab.py synth-1 /mnt/x 8 sh -c 'echo $$ > /sys/fs/cgroup/memory/g/cgroup.procs; exec "$@"' sh
                                                                          # inside a memory cgroup
    AB_SYNC=1 python3 bench/ab.py ...                                     # sync (untimed) before each run:
                                                                          # each starts from a written-back disk
    AB_SETTINGS=auto,prefetch python3 bench/ab.py ...                     # only these settings (auto first):
                                                                          # more rounds in the same time
    AB_JSON=FILE python3 bench/ab.py ...                                  # also write every run's time
                                                                          # (seconds, inf = failed) to FILE

Paired ratios come with the 10th-90th percentile range of a bootstrap of their median, so a
reader can tell an effect from the scenario's noise.

The job comes from the corpus cache (~/.cache/rivet-bench/jobs, see corpus.py); the output goes
to OUTDIR; rivet is target/release/rivet (or $CARGO_TARGET_DIR's). A failed link counts as infinite.
"""
import json, os, random, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_CACHE, rivet_bin, rotated  # noqa: E402

SETTINGS = {"auto": [], "mmap": ["--mmap-output-file"], "heap": ["--no-mmap-output-file"],
            "prefetch": ["--prefetch-inputs"], "noprefetch": ["--no-prefetch-inputs"]}


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    job, outdir, rounds, prefix = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    rivet = str(rivet_bin())
    os.chdir(DEFAULT_CACHE / "jobs" / job)
    chosen = os.environ.get("AB_SETTINGS", ",".join(SETTINGS)).split(",")
    if chosen[0] != "auto" or any(k not in SETTINGS for k in chosen):
        sys.exit(f"AB_SETTINGS: auto first, then some of {', '.join(SETTINGS)}")
    times = {k: [] for k in chosen}
    # Warm-up link outside PREFIX (untimed), as bench/run.py's reference link: the inputs are then
    # cached and charged to this cgroup, not to a memory cgroup of PREFIX. Read first inside a small
    # cgroup, the inputs count against its limit and every linker thrashes (cxx-big: 115 s, 54 GiB
    # read, in a 118 MiB cgroup), which is not the scenario measured here.
    subprocess.run([rivet, "@response.txt", "-o", str(outdir / f"ab-{job}-warmup")], check=True)
    (outdir / f"ab-{job}-warmup").unlink()
    for i in range(rounds):
        for k in rotated(chosen, i):
            out = outdir / f"ab-{job}-{k}"
            out.unlink(missing_ok=True)
            if os.environ.get("AB_DROP") or os.environ.get("AB_SYNC"):
                subprocess.run(["sync"], check=True)
            if os.environ.get("AB_DROP"):
                Path("/proc/sys/vm/drop_caches").write_text("3\n")
            start = time.perf_counter()
            r = subprocess.run(prefix + [rivet, "@response.txt", "-o", str(out)] + SETTINGS[k])
            times[k].append(time.perf_counter() - start if r.returncode == 0 else float("inf"))
            # Each run starts from the same state: the output just written is removed at once, not
            # left in the page cache (charged to PREFIX's memory cgroup) until this setting's next
            # round. Left there, every link first had to reclaim the other settings' outputs, likely
            # by an amount that depended on its place in the rotation (suspected, not measured
            # apart): rust-debug in a 66 MiB cgroup measured auto 1.094 [1.050-1.111] of mmap, the
            # very same configuration.
            out.unlink(missing_ok=True)
    if os.environ.get("AB_JSON"):
        Path(os.environ["AB_JSON"]).write_text(json.dumps({"job": job, "rounds": rounds, "times": times}, indent=1))
    failed = {k: sum(t == float("inf") for t in v) for k, v in times.items() if float("inf") in v}
    if failed:
        print(job, "failed links:", " ".join(f"{k}={n}" for k, n in failed.items()))
    best = min(statistics.median(v) for v in times.values())
    print(job, " ".join(f"{k}={statistics.median(v):.3f}({statistics.median(v) / best:.2f})" for k, v in times.items()))
    # Paired: in each round, auto's time over each fixed setting's time in that same round; the
    # median over rounds cancels the machine's drift between rounds, which the ratio of medians
    # does not. auto is within 5% of the best fixed setting when every one of these is <= 1.05.
    paired = {k: [a / b for a, b in zip(times["auto"], v)] for k, v in times.items() if k != "auto"}
    print(job, "paired auto/setting:", " ".join(f"{k}={statistics.median(r):.3f}{spread(r)}" for k, r in paired.items()))


def spread(ratios):
    """The 10th-90th percentile range of the median of `ratios` over 1000 bootstrap resamples."""
    if any(r != r or r in (0.0, float("inf")) for r in ratios) or len(ratios) < 5:
        return ""
    rng = random.Random(1)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(1000))
    return f"[{medians[100]:.3f}-{medians[900]:.3f}]"


if __name__ == "__main__":
    main()
