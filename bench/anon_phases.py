#!/usr/bin/env python3
"""Which of rivet's phases grow its anonymous memory: one link per job at `--threads=1` (so the
phases follow one another) with `--print-timing`, RssAnon sampled from /proc/PID/status every
half millisecond; each phase's samples are placed by adding up the phase times from the start of
the process (a few milliseconds of process start-up shift them, so a short phase may hold no
sample). Prints, per phase, its time and RssAnon at its end.

    python3 bench/anon_phases.py JOB[,JOB...] [RIVET]
    python3 bench/anon_phases.py cxx-templates,rust-big
"""
import re, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_CACHE, rivet_bin  # noqa: E402


def one(job, rivet):
    jd = DEFAULT_CACHE / "jobs" / job
    out = Path(f"/tmp/anon-phases-{job}")
    out.unlink(missing_ok=True)
    cmd = [str(rivet), "@response.txt", "-o", str(out), "--no-fork", "--print-timing", "--threads=1"]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=jd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    samples, status = [], Path(f"/proc/{p.pid}/status")
    while p.poll() is None:
        try:
            m = re.search(r"^RssAnon:\s+(\d+) kB", status.read_text(), re.M)
            if m:
                samples.append((time.perf_counter() - t0, int(m.group(1)) / 1024))
        except OSError:
            pass
        time.sleep(0.0005)
    err = p.stderr.read().decode(errors="replace")
    out.unlink(missing_ok=True)
    if p.returncode != 0:
        sys.exit(f"{job}: rivet failed:\n{err[-1500:]}")
    rows = [(m.group(1), float(m.group(2)) / 1000) for m in
            (re.match(r"^  (\S.*?)\s+([\d.]+)\s+[\d.]+%", line) for line in err.splitlines()) if m]
    print(f"## {job}: RssAnon peak {max(s[1] for s in samples):.1f} MB\n\n| phase | ms | RssAnon at its end, MB |\n|---|---|---|")
    start = 0.0
    for name, d in rows:
        inside = [s[1] for s in samples if start <= s[0] < start + d]
        if d >= 0.001:
            print(f"| {name} | {d * 1000:.1f} | {inside[-1]:.1f} |" if inside else f"| {name} | {d * 1000:.1f} | - |")
        start += d
    print()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rivet = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else rivet_bin()
    for job in sys.argv[1].split(","):
        one(job, rivet)


if __name__ == "__main__":
    main()
