#!/usr/bin/env python3
"""Runs link jobs from the corpus with several linkers, side by side and interleaved, and writes a
markdown table, a JSON file and (with matplotlib) a PNG plot.

    python3 bench/run.py --jobs synth-1,c-debug --scenario warm --runs 5
    python3 bench/run.py --scenario scale            # synth-1,2,4,8
    python3 bench/run.py --scenario cold             # drop_caches before every run (root)
    python3 bench/run.py --scenario compressed       # output on compress-force=zstd btrfs, memory cgroup
    python3 bench/run.py --scenario slow-disk        # output on a loop device throttled to 30 MB/s (cgroup v2 io.max)

Linkers (--linkers): bfd, gold, lld, mold, wild, and rivet in each I/O setting: rivet (automatic),
rivet-mmap, rivet-heap, rivet-noprefetch. Missing linkers are skipped with a message. Every output
that is an executable is run and its output compared with the first linker's.
"""
import argparse, datetime, json, os, platform, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_CACHE, rivet_bin  # noqa: E402

BTRFS_MOUNT = Path("/mnt/rivet-bench-btrfs")
CGROUP = Path("/sys/fs/cgroup/rivet-bench")


def linkers(names):
    rivet = str(rivet_bin())
    table = {
        "bfd": ["ld.bfd"],
        "gold": ["ld.gold"],
        "lld": ["ld.lld-19"] if shutil.which("ld.lld-19") else ["ld.lld"],
        "mold": ["mold", "--no-fork"],
        "wild": ["wild", "--no-fork"],
        "rivet": [rivet],
        "rivet-mmap": [rivet, "--mmap-output-file"],
        "rivet-heap": [rivet, "--no-mmap-output-file"],
        "rivet-noprefetch": [rivet, "--no-prefetch-inputs"],
    }
    out = {}
    for n in names:
        if n not in table:
            sys.exit(f"unknown linker {n}")
        if shutil.which(table[n][0]) is None:
            print(f"skipping {n}: {table[n][0]} is not installed", file=sys.stderr)
            continue
        out[n] = table[n]
    return out


def drop_caches():
    subprocess.run(["sync"], check=True)
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def can_drop_caches():
    try:
        drop_caches()
        return True
    except OSError as e:
        print(f"cold scenario skipped: cannot drop caches ({e})", file=sys.stderr)
        return False


def loop_stat_written(dev):
    """Bytes written to a block device so far (/sys/block/X/stat, sectors written × 512)."""
    fields = Path(f"/sys/block/{Path(dev).name}/stat").read_text().split()
    return int(fields[6]) * 512


def setup_btrfs(size_gb):
    img = Path("/var/tmp/rivet-bench-btrfs.img")
    subprocess.run(["umount", str(BTRFS_MOUNT)], capture_output=True)
    img.unlink(missing_ok=True)
    subprocess.run(["truncate", "-s", f"{size_gb}G", str(img)], check=True)
    subprocess.run(["mkfs.btrfs", "-q", "-f", str(img)], check=True, capture_output=True)
    BTRFS_MOUNT.mkdir(parents=True, exist_ok=True)
    dev = subprocess.run(["losetup", "--find", "--show", str(img)], check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run(["mount", "-o", "compress-force=zstd", dev, str(BTRFS_MOUNT)], check=True)
    return dev, img


def teardown_btrfs(dev, img):
    subprocess.run(["umount", str(BTRFS_MOUNT)], capture_output=True)
    subprocess.run(["losetup", "-d", dev], capture_output=True)
    img.unlink(missing_ok=True)


def setup_cgroup(limit_bytes):
    """A memory cgroup with the given limit: cgroup v2 if the memory controller is there, else v1
    (this machine mounts the v1 memory hierarchy at /sys/fs/cgroup/memory). Returns its directory;
    a process joins it by writing its pid to cgroup.procs in both versions."""
    root = Path("/sys/fs/cgroup")
    v2 = root / "cgroup.controllers"
    if v2.exists() and "memory" in v2.read_text():
        if "memory" not in (root / "cgroup.subtree_control").read_text():
            (root / "cgroup.subtree_control").write_text("+memory")
        cg = root / "rivet-bench"
        cg.mkdir(exist_ok=True)
        (cg / "memory.max").write_text(str(limit_bytes))
        return cg
    v1 = root / "memory"
    if (v1 / "memory.limit_in_bytes").exists():
        cg = v1 / "rivet-bench"
        cg.mkdir(exist_ok=True)
        (cg / "memory.limit_in_bytes").write_text(str(limit_bytes))
        return cg
    raise OSError("no memory cgroup controller (v1 or v2) available")


TIMEOUT = 300


def setup_slow_disk(mbps):
    """An ext4 loop device whose writes a cgroup v2 `io.max` throttles. Buffered writes are charged to
    the writer's cgroup only in cgroup v2; without its io controller (cgroup v1 blkio throttles
    direct I/O only) or device-mapper's delay target, this machine cannot build a slow disk."""
    root = Path("/sys/fs/cgroup")
    v2 = root / "cgroup.controllers"
    if not (v2.exists() and "io" in v2.read_text().split()):
        raise OSError("no cgroup v2 io controller here (cgroup v1 blkio cannot throttle buffered writeback, "
                      "and the kernel has no device-mapper delay target): cannot build a throttled disk")
    img = Path("/var/tmp/rivet-bench-slow.img")
    img.unlink(missing_ok=True)
    subprocess.run(["truncate", "-s", "8G", str(img)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(img)], check=True)
    dev = subprocess.run(["losetup", "--find", "--show", str(img)], check=True, capture_output=True, text=True).stdout.strip()
    BTRFS_MOUNT.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", dev, str(BTRFS_MOUNT)], check=True)
    if "io" not in (root / "cgroup.subtree_control").read_text():
        (root / "cgroup.subtree_control").write_text("+io")
    cg = root / "rivet-bench"
    cg.mkdir(exist_ok=True)
    major_minor = Path(f"/sys/block/{Path(dev).name}/dev").read_text().strip()
    (cg / "io.max").write_text(f"{major_minor} wbps={mbps * 1000 * 1000}")
    return dev, img, cg


def measure(cmd, cwd, cgroup=None):
    """Runs one link; a link still running after TIMEOUT seconds is killed and counted as failed."""
    def enter():
        if cgroup is not None:
            (cgroup / "cgroup.procs").write_text(str(os.getpid()))
    start = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=enter)
    timer = __import__("threading").Timer(TIMEOUT, p.kill)
    timer.start()
    _, status, ru = os.wait4(p.pid, 0)
    timer.cancel()
    wall = time.perf_counter() - start
    if wall >= TIMEOUT:
        return {"ok": False, "wall": wall, "cpu": 0, "rss_kb": 0, "stderr": f"killed after {TIMEOUT} s"}
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    return {"ok": os.waitstatus_to_exitcode(status) == 0, "wall": wall, "cpu": ru.ru_utime + ru.ru_stime,
            "rss_kb": ru.ru_maxrss, "stderr": err[-2000:]}


def run_output(path, args):
    try:
        r = subprocess.run([str(path), *args], capture_output=True, timeout=30)
        return r.returncode, r.stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e).encode()


def bench(jobs, lks, runs, scenario, out_dir, cgroup=None, device=None):
    cache_jobs = DEFAULT_CACHE / "jobs"
    results = []
    for job in jobs:
        jd = cache_jobs / job
        if not (jd / "response.txt").exists():
            print(f"skipping job {job}: not built (python3 bench/corpus.py build --jobs {job})", file=sys.stderr)
            continue
        meta = json.loads((jd / "job.json").read_text())
        samples = {n: [] for n in lks}
        expected = None
        order = list(lks)
        for r in range(runs + 1):  # round 0 is the warm-up
            order = order[1:] + order[:1]
            for n in order:
                out = out_dir / f"{job}.{n}.out"
                out.unlink(missing_ok=True)
                if scenario == "cold":
                    drop_caches()
                before = loop_stat_written(device) if device else 0
                m = measure([*lks[n], "@response.txt", "-o", str(out)], jd, cgroup)
                if device:
                    subprocess.run(["sync", "-f", str(out_dir)], check=False)
                    m["device_written"] = loop_stat_written(device) - before
                if not m["ok"]:
                    print(f"{job}/{n}: link failed: {m['stderr'].strip()[:500]}", file=sys.stderr)
                elif meta["kind"] == "exe" and r == 0:
                    got = run_output(out, meta.get("run_args", []))
                    if expected is None:
                        expected = got
                    m["output_ok"] = got == expected
                    if got != expected:
                        print(f"{job}/{n}: output differs from the first linker's", file=sys.stderr)
                if r > 0:
                    samples[n].append(m)
                out.unlink(missing_ok=True)
        for n, ms in samples.items():
            ok = [m for m in ms if m["ok"]]
            if not ok:
                results.append({"job": job, "linker": n, "failed": True})
                continue
            walls = [m["wall"] for m in ok]
            entry = {"job": job, "linker": n, "input_mb": meta["input_bytes"] / 1e6, "median": statistics.median(walls),
                     "min": min(walls), "max": max(walls), "cpu": statistics.median(m["cpu"] for m in ok),
                     "rss_mb": max(m["rss_kb"] for m in ok) / 1024, "runs": len(ok)}
            if device:
                entry["device_mb"] = statistics.median(m["device_written"] for m in ok) / 1e6
            results.append(entry)
    return results


def markdown(results, scenario, header):
    lines = [f"# {scenario}", "", header, "", "| job | linker | median s | min–max s | ratio to fastest | CPU s | peak RSS MB |"
             + (" device written MB |" if any("device_mb" in r for r in results) else ""),
             "|---|---|---|---|---|---|---|" + ("---|" if any("device_mb" in r for r in results) else "")]
    for job in dict.fromkeys(r["job"] for r in results):
        rows = [r for r in results if r["job"] == job and not r.get("failed")]
        best = min(r["median"] for r in rows) if rows else 1
        for r in sorted(rows, key=lambda r: r["median"]):
            line = (f"| {job} | {r['linker']} | {r['median']:.3f} | {r['min']:.3f}–{r['max']:.3f} | {r['median'] / best:.2f} |"
                    f" {r['cpu']:.3f} | {r['rss_mb']:.0f} |")
            if "device_mb" in r:
                line += f" {r['device_mb']:.0f} |"
            lines.append(line)
        for r in results:
            if r["job"] == job and r.get("failed"):
                lines.append(f"| {job} | {r['linker']} | failed | | | | |")
    return "\n".join(lines) + "\n"


def machine_header():
    mem = next(l for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal"))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    fs = subprocess.run(["findmnt", "-no", "FSTYPE", "--target", str(ROOT)], capture_output=True, text=True).stdout.strip()
    return (f"Measured {datetime.date.today()} at commit {commit} on {os.cpu_count()} cores, {mem.split()[1]} kB RAM, "
            f"Linux {platform.release()}, repository on {fs}. Medians of interleaved runs after a warm-up run.")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", default="c-hello,synth-1,c-debug,rust-debug,cxx-big")
    ap.add_argument("--scenario", default="warm", choices=["warm", "cold", "scale", "compressed", "slow-disk"])
    ap.add_argument("--linkers", default="bfd,gold,lld,mold,wild,rivet,rivet-mmap,rivet-heap,rivet-noprefetch")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--no-plot", action="store_true")
    a = ap.parse_args()
    lks = linkers(a.linkers.split(","))
    jobs = a.jobs.split(",")
    if a.scenario == "scale":
        jobs = ["synth-1", "synth-2", "synth-4", "synth-8"]
    a.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="rivet-bench-"))
    cgroup = device = img = None
    try:
        if a.scenario == "cold" and not can_drop_caches():
            return
        if a.scenario == "compressed":
            try:
                device, img = setup_btrfs(16)
                work = BTRFS_MOUNT / "work"
                work.mkdir()
                biggest = max(json.loads((DEFAULT_CACHE / "jobs" / j / "job.json").read_text())["input_bytes"] for j in jobs
                              if (DEFAULT_CACHE / "jobs" / j / "job.json").exists())
                # Smaller than inputs + output, as DESIGN.md's scenario asks: dirty output pages
                # must be written back while the link runs.
                cgroup = setup_cgroup(int(biggest))
            except (OSError, subprocess.CalledProcessError) as e:
                print(f"compressed scenario skipped: {e}", file=sys.stderr)
                return
        if a.scenario == "slow-disk":
            try:
                device, img, cgroup = setup_slow_disk(30)
                work = BTRFS_MOUNT / "work"
                work.mkdir()
            except (OSError, subprocess.CalledProcessError) as e:
                print(f"slow-disk scenario skipped: {e}", file=sys.stderr)
                return
        results = bench(jobs, lks, a.runs, a.scenario, work, cgroup, device)
    finally:
        if cgroup:
            try:
                cgroup.rmdir()
            except OSError:
                pass
        if img:
            teardown_btrfs(device, img)
        if a.scenario not in ("compressed", "slow-disk"):
            shutil.rmtree(work, ignore_errors=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    base = a.out / f"{a.scenario}-{stamp}"
    header = machine_header()
    base.with_suffix(".json").write_text(json.dumps({"scenario": a.scenario, "header": header, "results": results}, indent=2))
    base.with_suffix(".md").write_text(markdown(results, a.scenario, header))
    print(markdown(results, a.scenario, header))
    if not a.no_plot:
        from plot import plot
        plot(base.with_suffix(".json"), base.with_suffix(".png"))
        print(f"plot: {base.with_suffix('.png')}")


if __name__ == "__main__":
    main()
