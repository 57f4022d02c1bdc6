#!/usr/bin/env python3
"""Replays corpus link jobs with several linkers, side by side and interleaved, and writes a markdown
table, a JSON file and a PNG plot to bench/results/SCENARIO-DATE.{md,json,png}.

    python3 bench/run.py --jobs synth-1,c-debug --scenario warm --linkers bfd,gold,lld,mold,rivet --runs 5
    python3 bench/run.py --scenario scale            # synth-1,2,4,8 (build them first), log-log plot
    python3 bench/run.py --scenario cold             # sync + drop_caches before every run (root)
    python3 bench/run.py --scenario compressed       # output on compress-force=zstd btrfs, memory cgroup
    python3 bench/run.py --scenario slow-disk        # output on a loop device throttled to 30 MB/s
    python3 bench/run.py --scenario aarch64 --runs 9 # the AArch64 jobs (a64-*), warm, outputs run under qemu

Linkers (--linkers, comma-separated): bfd, gold, lld, mold, wild (also wild-nogc: --no-gc-sections,
the same work as rivet; wild-fork: wild's default, which forks), rivet (automatic I/O choices, with
--no-fork; rivet-fork: its default, which forks) and
rivet's forced I/O modes: rivet-mmap (--mmap-output-file), rivet-heap (--no-mmap-output-file),
rivet-prefetch / rivet-noprefetch (--[no-]prefetch-inputs), rivet-copy-METHOD (--copy-method=METHOD
for memcpy, copy-file-range, sendfile), rivet-noreuse (--no-reuse-output), rivet-populate
(--populate-output); `rivet-all` is rivet plus every mode this rivet supports
(probed with a tiny link). mold and wild run with --no-fork so the measured process does the whole
link. Missing linkers and unsupported modes are skipped with a message.

Each job is first linked once with ld.bfd (untimed) for the reference output. Then one warm-up round
and --runs measured rounds, round-robin over the linkers (the starting linker rotates). Each run:
wall time, user+sys CPU and peak RSS from wait4(); the output, if an executable, is run and its exit
status and stdout compared with the reference. In the warm and scale scenarios each link replaces
that linker's own previous output, as in an edit-compile-link loop (`--outputs keep`, their default:
rivet and mold rewrite it in place when they can); in the others, and with `--outputs delete`,
outputs are deleted before each run (every linker writes a new file).

Jobs of another machine (job.json "machine", e.g. the AArch64 jobs a64-synth-1 and a64-c-debug) are
linked by bfd and gold as that machine's GNU linkers (aarch64-linux-gnu-ld, aarch64-linux-gnu-ld.gold);
the reference output is the job's `reference_linker`'s, and every output runs under the job's
`run_with` (qemu-aarch64 -L /usr/aarch64-linux-gnu). The `aarch64` scenario is `warm` on those jobs
with bfd, lld, mold, wild, wild-nogc and rivet, plus callgrind's instruction counts at one thread
for rivet and wild (--instructions; the count is taken once per job after the timed rounds).
"""
import argparse, datetime, hashlib, json, os, platform, shlex, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import A64_JOBS, DEFAULT_CACHE, rivet_bin  # noqa: E402

SCENARIOS = ["warm", "cold", "compressed", "slow-disk", "scale", "aarch64"]
DEFAULT_JOBS = "c-hello,synth-1,c-debug,rust-debug,cxx-big"
DEFAULT_LINKERS = "bfd,gold,lld,mold,wild,rivet-all"
# The aarch64 scenario: the cross jobs, warm, against the linkers that link AArch64.
AARCH64_LINKERS = "bfd,lld,mold,wild,wild-nogc,rivet"
# Another machine's GNU linkers, by the name of the host's.
CROSS_GNU = {"aarch64": {"ld.bfd": "aarch64-linux-gnu-ld", "ld.gold": "aarch64-linux-gnu-ld.gold"}}
MOUNT = Path("/mnt/rivet-bench")
CGROUP_NAME = "rivet-bench"
SLOW_DISK_MBPS = 30


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# linkers ---------------------------------------------------------------------------------------
def rivet_modes(rivet):
    """rivet's forced I/O modes, each (column name, flags), for the flags this rivet accepts and
    implements: the flag must appear in --help or be accepted by a tiny link that uses it."""
    helptext = subprocess.run([rivet, "--help"], capture_output=True, text=True).stdout
    candidates = [("rivet-mmap", ["--mmap-output-file"]), ("rivet-heap", ["--no-mmap-output-file"]),
                  ("rivet-prefetch", ["--prefetch-inputs"]), ("rivet-noprefetch", ["--no-prefetch-inputs"])]
    candidates += [(f"rivet-copy-{m}", [f"--copy-method={m}"]) for m in ("memcpy", "copy-file-range", "sendfile")]
    candidates += [("rivet-noreuse", ["--no-reuse-output"]), ("rivet-populate", ["--populate-output"])]
    modes = {}
    with tempfile.TemporaryDirectory() as t:
        (Path(t) / "tiny.s").write_text(".globl _start\n_start:\n  ret\n")
        subprocess.run(["as", "tiny.s", "-o", "tiny.o"], cwd=t, check=True)
        for name, flags in candidates:
            r = subprocess.run([rivet, *flags, "tiny.o", "-o", "tiny"], cwd=t, capture_output=True, text=True)
            if r.returncode == 0:
                modes[name] = flags
            else:
                why = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
                where = "listed in --help" if flags[0].split("=")[0] in helptext else "not in --help"
                log(f"skipping {name}: rivet {' '.join(flags)} does not link ({where}): {why}")
    return modes


def linkers(names):
    rivet = str(rivet_bin())
    table = {
        "bfd": ["ld.bfd"],
        "gold": ["ld.gold"],
        "lld": ["ld.lld-19"] if shutil.which("ld.lld-19") else ["ld.lld"],
        "mold": ["mold", "--no-fork"],
        "wild": ["wild", "--no-fork"],
        # The same work as rivet: wild collects unused sections unless told not to, rivet only
        # with --gc-sections (which the corpus link lines do not pass).
        "wild-nogc": ["wild", "--no-fork", "--no-gc-sections"],
        # wild as its users run it: it forks and returns once the output is written.
        "wild-fork": ["wild"],
        # --no-fork, as mold and wild run here: the measured process does the whole link (CPU time
        # and peak RSS are its own); rivet-fork is rivet as its users run it.
        "rivet": [rivet, "--no-fork"],
        "rivet-fork": [rivet],
    }
    wanted = []  # "rivet-all" is rivet, then every supported mode ("@modes")
    for n in names:
        wanted += ["rivet", "@modes"] if n == "rivet-all" else [n]
    modes = rivet_modes(rivet) if any(n.startswith("rivet-") or n == "@modes" for n in wanted) else {}
    for m, flags in modes.items():
        table[m] = [rivet, "--no-fork", *flags]
    out = {}
    for n in wanted:
        if n == "@modes":
            out.update({m: table[m] for m in modes})
            continue
        if n not in table:
            if n.startswith("rivet-"):
                continue  # unsupported mode, already reported
            sys.exit(
                f"unknown linker {n} (known: bfd, gold, lld, mold, wild, wild-nogc, wild-fork, rivet, rivet-fork,"
                " rivet-all, rivet-MODE)"
            )
        if shutil.which(table[n][0]) is None:
            hint = " (cargo install wild-linker)" if n.startswith("wild") else " (bench/setup.sh installs it)"
            log(f"skipping {n}: {table[n][0]} is not installed{hint}")
            continue
        out[n] = table[n]
    return out


def for_machine(lks, meta):
    """The linker commands for a job: for a job of another machine, bfd and gold are that machine's
    GNU linkers (the others pick the machine from the inputs and `-m`); those not installed are
    left out with a message."""
    gnu = CROSS_GNU.get(meta.get("machine", "x86_64"), {})
    out = {}
    for n, cmd in lks.items():
        if cmd[0] in gnu:
            if shutil.which(gnu[cmd[0]]) is None:
                log(f"{meta['name']}: skipping {n}: {gnu[cmd[0]]} is not installed")
                continue
            cmd = [gnu[cmd[0]], *cmd[1:]]
        out[n] = cmd
    return out


def linker_version(cmd):
    exe = cmd[0]
    r = subprocess.run([exe, "--version"], capture_output=True, text=True)
    return (r.stdout or r.stderr).strip().splitlines()[0] if (r.stdout or r.stderr).strip() else "?"


# the machine -----------------------------------------------------------------------------------
def fs_type(path):
    r = subprocess.run(["findmnt", "-no", "FSTYPE,OPTIONS", "--target", str(path)], capture_output=True, text=True)
    parts = r.stdout.split()
    if not parts:
        return "?"
    opts = [o for o in (parts[1].split(",") if len(parts) > 1 else []) if o.startswith("compress")]
    return parts[0] + (f" ({','.join(opts)})" if opts else "")


def machine(cache, out_dir):
    mem_kb = int(next(l for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal")).split()[1])
    git = lambda *a: subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "crates", "Cargo.toml", "Cargo.lock")
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), "?")
    return {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "commit": git("rev-parse", "--short", "HEAD"),
            "rivet_source_modified": bool(dirty), "nproc": os.cpu_count(), "cpu": cpu, "ram_gb": round(mem_kb / 1024 / 1024, 1),
            "kernel": platform.release(), "corpus_fs": fs_type(cache), "output_fs": fs_type(out_dir)}


def bfd_reference(job, out):
    """Job `job` of the corpus linked by ld.bfd into `out`: the job's directory, its job.json and
    what ld.bfd's output does (`check_output`), which every other output is checked against."""
    jd = DEFAULT_CACHE / "jobs" / job
    meta = json.loads((jd / "job.json").read_text())
    r = subprocess.run(["ld.bfd", "@response.txt", "-o", str(out)], cwd=jd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{job}: ld.bfd failed:\n{r.stderr[-1500:]}")
    expected = check_output(jd, meta, out)
    if expected is not None and expected[0] != 0:
        sys.exit(f"{job}: ld.bfd's output fails its own check: {expected}")
    return jd, meta, expected


def med(xs):
    """The median, or None for no samples."""
    return statistics.median(xs) if xs else None


def rounds_jobs_rivet(doc, default_jobs):
    """`ROUNDS [JOB,...] [RIVET] [MORE...]` from the command line (exits with `doc` without ROUNDS):
    rounds, jobs, rivet's path and the arguments after it."""
    args = sys.argv[1:]
    if not args or not args[0].isdigit():
        sys.exit(doc)
    jobs = (args[1] if len(args) > 1 else default_jobs).split(",")
    rivet = Path(args[2]).resolve() if len(args) > 2 else rivet_bin()
    return int(args[0]), jobs, rivet, args[3:]


def measured_header(m, rounds):
    """The first sentences of a result: when, at which commit, on what machine, how measured."""
    return (f"Measured {m['date']} at commit {m['commit']}"
            + (" (rivet sources modified)" if m["rivet_source_modified"] else "")
            + f"; {m['nproc']} cores ({m['cpu']}), {m['ram_gb']} GB RAM, Linux {m['kernel']}; corpus on "
            f"{m['corpus_fs']}, outputs on {m['output_fs']}. Warm; medians of {rounds} rotated rounds after a "
            f"warm-up round")


def save_result(scenario, m, header, rounds, results, lines):
    """Writes bench/results/SCENARIO-DATE.{md,json} (the markdown `lines`; `results` and `header`
    in the json, as `bench/keep.py` reads them) and prints the markdown."""
    results_dir = ROOT / "bench" / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    base = results_dir / f"{scenario}-{m['date'].replace('-', '').replace(' ', '-').replace(':', '')}"
    base.with_suffix(".md").write_text("\n".join(lines))
    base.with_suffix(".json").write_text(json.dumps({"scenario": scenario, "machine": m, "header": header,
                                                     "runs": rounds, "results": results}, indent=1) + "\n")
    print("\n".join(lines))
    print(f"-> {base}.md", file=sys.stderr)


def header_text(m, scenario, runs, linker_versions, setup_note):
    lines = [f"Measured {m['date']} at commit {m['commit']}" + (" (rivet sources modified)" if m["rivet_source_modified"] else "")
             + f"; {m['nproc']} cores ({m['cpu']}), {m['ram_gb']} GB RAM, Linux {m['kernel']}; "
             f"corpus on {m['corpus_fs']}, outputs on {m['output_fs']}.",
             f"Scenario `{scenario}`: {setup_note} Median of {runs} interleaved runs after a warm-up run; "
             "ratio = median / fastest median for the job.",
             "Linkers: " + "; ".join(f"{n}: {v}" for n, v in linker_versions.items()) + "."]
    return "\n".join(lines)


# scenarios: caches, loop devices, cgroups --------------------------------------------------------
def drop_caches():
    subprocess.run(["sync"], check=True)
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def loop_bytes_written(dev):
    """Bytes written to a block device so far (/sys/block/X/stat field 7: sectors written x 512)."""
    return int(Path(f"/sys/block/{Path(dev).name}/stat").read_text().split()[6]) * 512


def cgroup_roots():
    """(v2 root, v1 controller roots) as mounted here; v2 may be /sys/fs/cgroup or .../unified."""
    v2 = None
    for line in Path("/proc/mounts").read_text().splitlines():
        dev, mnt, fstype = line.split()[:3]
        if fstype == "cgroup2" and v2 is None:
            v2 = Path(mnt)
    return v2, Path("/sys/fs/cgroup")


def v2_has(v2, controller):
    return v2 is not None and controller in (v2 / "cgroup.controllers").read_text().split()


class Cgroup:
    """The cgroup the measured linker runs in (it joins by writing its pid to cgroup.procs from
    preexec_fn). cgroup v2 if the controller is there, else cgroup v1 (this machine kind mounts the
    v1 memory and blkio hierarchies and an empty v2 hierarchy at /sys/fs/cgroup/unified)."""

    def __init__(self):
        self.dirs = []
        self.notes = []

    def _v2_dir(self, v2, controller):
        if controller not in (v2 / "cgroup.subtree_control").read_text().split():
            (v2 / "cgroup.subtree_control").write_text(f"+{controller}")
        d = v2 / CGROUP_NAME
        d.mkdir(exist_ok=True)
        if d not in self.dirs:
            self.dirs.append(d)
        return d

    def limit_memory(self, limit):
        v2, v1 = cgroup_roots()
        if v2_has(v2, "memory"):
            d = self._v2_dir(v2, "memory")
            (d / "memory.max").write_text(str(limit))
            if (d / "memory.swap.max").exists():
                (d / "memory.swap.max").write_text("0")
            return f"cgroup v2 memory.max = {limit / 2**20:.0f} MiB"
        if (v1 / "memory" / "memory.limit_in_bytes").exists():
            d = v1 / "memory" / CGROUP_NAME
            d.mkdir(exist_ok=True)
            if d not in self.dirs:
                self.dirs.append(d)
            (d / "memory.limit_in_bytes").write_text(str(limit))
            return f"cgroup v1 memory.limit_in_bytes = {limit / 2**20:.0f} MiB (no v2 memory controller here)"
        raise OSError("no memory cgroup controller (v1 or v2)")

    def procs_files(self):
        return [d / "cgroup.procs" for d in self.dirs]

    def remove(self):
        for d in reversed(self.dirs):
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)


class LoopFs:
    """A file system on a loop device over an image in /var/tmp, mounted at MOUNT."""

    def __init__(self, fstype, size_gb, mount_opts):
        self.img = Path(f"/var/tmp/rivet-bench-{fstype}.img")
        subprocess.run(["umount", str(MOUNT)], capture_output=True)
        self.img.unlink(missing_ok=True)
        subprocess.run(["truncate", "-s", f"{size_gb}G", str(self.img)], check=True)
        self.dev = subprocess.run(["losetup", "--find", "--show", str(self.img)], check=True, capture_output=True,
                                  text=True).stdout.strip()
        self.mounted = False
        mkfs = {"btrfs": ["mkfs.btrfs", "-q", "-f"], "ext4": ["mkfs.ext4", "-q", "-F"]}[fstype]
        if shutil.which(mkfs[0]) is None:
            self.remove()
            raise OSError(f"{mkfs[0]} is not installed (bench/setup.sh installs btrfs-progs)")
        subprocess.run([*mkfs, self.dev], check=True, capture_output=True)
        MOUNT.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", *(["-o", mount_opts] if mount_opts else []), self.dev, str(MOUNT)], check=True)
        self.mounted = True
        self.majmin = Path(f"/sys/block/{Path(self.dev).name}/dev").read_text().strip()
        self.throttle = None

    def throttle_writes(self, bps):
        """Throttles writes to this loop device: cgroup v2 io.max where the io controller is
        available, else cgroup v1 blkio.throttle.write_bps_device on the root blkio group, scoped to
        this device only (writeback is issued from the root cgroup in v1, so a rule on the linker's
        own cgroup would not see buffered writes)."""
        v2, v1 = cgroup_roots()
        if v2_has(v2, "io"):
            raise OSError("cgroup v2 io controller present: use io.max (not implemented: this machine kind has none)")
        f = v1 / "blkio" / "blkio.throttle.write_bps_device"
        if not f.exists():
            raise OSError("no blkio throttling (neither cgroup v2 io nor v1 blkio.throttle)")
        f.write_text(f"{self.majmin} {bps}")
        self.throttle = f
        return f"writes to {self.dev} throttled to {bps / 1e6:.0f} MB/s (cgroup v1 blkio.throttle.write_bps_device, root group)"

    def remove(self):
        if self.throttle:
            try:
                self.throttle.write_text(f"{self.majmin} 0")
            except OSError:
                pass
        if getattr(self, "mounted", False):
            subprocess.run(["umount", str(MOUNT)], capture_output=True)
        subprocess.run(["losetup", "-d", self.dev], capture_output=True)
        self.img.unlink(missing_ok=True)


# measuring -------------------------------------------------------------------------------------
def spawn_helper(cache):
    """bench/spawn_rusage.c built once (static) into the cache; rebuilt when the source changes."""
    src = Path(__file__).resolve().parent / "spawn_rusage.c"
    tag = hashlib.sha1(src.read_bytes()).hexdigest()[:12]
    exe = cache / "bin" / f"spawn-rusage-{tag}"
    if not exe.exists():
        exe.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["gcc", "-O2", "-static", str(src), "-o", str(exe)], check=True)
    return exe


def measure(helper, cmd, cwd, procs_files, timeout, keep_output=False):
    """One link, through the spawn helper: wall time from just before fork to after wait4, user+sys
    CPU (and each apart) and peak RSS from wait4's rusage. The helper joins the cgroup first (the
    linker inherits). `keep_output`: what the linker printed (stdout, then stderr) is in `output`."""
    def enter():
        for f in procs_files:
            with open(f, "w") as fh:
                fh.write(str(os.getpid()))
    with tempfile.NamedTemporaryFile(prefix="rusage-") as res:
        p = subprocess.Popen([str(helper), res.name, *cmd], cwd=cwd,
                             stdout=subprocess.PIPE if keep_output else subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=enter if procs_files else None, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            out, err = p.communicate()
            timed_out = True
        fields = Path(res.name).read_text().split()
    if timed_out or len(fields) != 5:
        return {"ok": False, "wall": timeout, "cpu": 0, "rss_mb": 0, "exit": None,
                "error": f"killed after the {timeout} s timeout" if timed_out else err.decode(errors="replace")[-1500:]}
    wall, user, sys_, rss_kb, status = float(fields[0]), float(fields[1]), float(fields[2]), int(fields[3]), int(fields[4])
    code = os.waitstatus_to_exitcode(status)
    m = {"ok": code == 0, "wall": wall, "cpu": user + sys_, "user": user, "sys": sys_, "rss_mb": rss_kb / 1024,
         "exit": code}
    if keep_output:
        m["output"] = (out or b"").decode(errors="replace") + err.decode(errors="replace")
    if not m["ok"]:
        text = err.decode(errors="replace").strip()
        if code == -9:
            text = (text + "\n" if text else "") + "killed by SIGKILL (memory limit?)"
        m["error"] = text[-1500:] or f"exit status {code}"
    return m


def run_output(path, args, run_with=()):
    """Runs a linked program (under `run_with`, an emulator, for another machine's job)."""
    try:
        r = subprocess.run([*run_with, str(path), *args], capture_output=True, timeout=60)
        return [r.returncode, r.stdout.decode(errors="replace")]
    except (OSError, subprocess.TimeoutExpired) as e:
        return [None, f"could not run: {e}"]


def check_output(jd, meta, path):
    """What the output does: an executable run with the job's arguments; a shared library through
    the job's check program, which loads it under its soname. None: the job has no check."""
    if meta["kind"] == "exe":
        return run_output(path, meta.get("run_args", []), meta.get("run_with", []))
    check = meta.get("check")
    if not check:
        return None
    with tempfile.TemporaryDirectory(prefix="rivet-bench-check-") as d:
        os.symlink(os.path.abspath(path), os.path.join(d, check["soname"]))
        try:
            r = subprocess.run([str(jd / check["program"])], capture_output=True, timeout=60,
                               env=dict(os.environ, LD_LIBRARY_PATH=d))
            return [r.returncode, r.stdout.decode(errors="replace")]
        except (OSError, subprocess.TimeoutExpired) as e:
            return [None, f"could not run: {e}"]


def instruction_counts(jd, lks, out_dir):
    """callgrind's instruction counts at one thread for rivet and wild (bench/instructions.py's way:
    --no-fork --threads=1, wild with --no-gc-sections unless the job's line collects sections, so
    both do the same work). {linker: count or an error string}."""
    from instructions import count  # late: instructions.py imports this module
    gc = "--gc-sections" in (jd / "response.txt").read_text().split()
    cmds = {}
    if "rivet" in lks:
        cmds["rivet"] = [lks["rivet"][0], "--no-fork", "--threads=1"]
    wild = next((c[0] for n, c in lks.items() if n.startswith("wild")), None)
    if wild:
        cmds["wild"] = [wild, "--no-fork", "--threads=1", *([] if gc else ["--no-gc-sections"])]
    counts = {}
    for n, cmd in cmds.items():
        out = out_dir / f"{jd.name}.{n}.callgrind.out"
        log(f"  {jd.name:<12} callgrind {n}")
        try:
            counts[n] = count([cmd[0], "@response.txt", "-o", str(out), *cmd[1:]], jd, out)
        except SystemExit as e:
            counts[n] = str(e)[:300]
        out.unlink(missing_ok=True)
    return counts


def bench_job(helper, jd, meta, lks, runs, scenario, out_dir, cgroup_files, loopfs, timeout, keep=False,
              instructions=False):
    job = meta["name"]
    lks = for_machine(lks, meta)
    ref_ld = meta.get("reference_linker", "ld.bfd")
    ref_out = out_dir / f"{job}.reference"
    ref_out.unlink(missing_ok=True)
    r = subprocess.run([ref_ld, "@response.txt", "-o", str(ref_out)], cwd=jd, capture_output=True, text=True)
    expected = None
    if r.returncode != 0:
        log(f"{job}: the reference link with {ref_ld} failed, outputs are not checked:\n{r.stderr[-1000:]}")
    else:
        expected = check_output(jd, meta, ref_out)
        if expected is not None and expected[0] != 0:
            log(f"{job}: the reference output exits with {expected[0]}")
    ref_out.unlink(missing_ok=True)
    samples = {n: [] for n in lks}
    order = list(lks)
    for rnd in range(runs + 1):  # round 0 is the warm-up
        for n in order:
            out = out_dir / f"{job}.{n}.out"
            if out.exists() and not keep:
                out.unlink()
                if loopfs:
                    subprocess.run(["sync", "-f", str(out_dir)])
            if scenario == "cold":
                drop_caches()
            before = loop_bytes_written(loopfs.dev) if loopfs else 0
            m = measure(helper, [*lks[n], "@response.txt", "-o", str(out)], jd, cgroup_files, timeout)
            if loopfs:
                t = time.perf_counter()
                subprocess.run(["sync", "-f", str(out_dir)])
                m["synced"] = m["wall"] + time.perf_counter() - t
                m["device_mb"] = (loop_bytes_written(loopfs.dev) - before) / 1e6
            if m["ok"]:
                m["output_mb"] = out.stat().st_size / 1e6
                if expected is not None:
                    got = check_output(jd, meta, out)
                    m["output_ok"] = got == expected
                    if got != expected:
                        log(f"{job}/{n}: the output does not behave like {ref_ld}'s: exit {got[0]} vs {expected[0]}, "
                            f"stdout {got[1][:200]!r} vs {expected[1][:200]!r}")
            else:
                log(f"{job}/{n}: link failed: {m['error'][:600]}")
            m["round"] = rnd
            samples[n].append(m)
            log(f"  {job:<12} {'warm-up' if rnd == 0 else f'run {rnd}':<8} {n:<18} "
                + (f"{m['wall']:8.3f} s" if m["ok"] else "failed"))
        order = order[1:] + order[:1]
    counts = instruction_counts(jd, lks, out_dir) if instructions else {}
    if out_dir.exists():
        for f in out_dir.glob(f"{job}.*.out"):
            f.unlink()
    results = []
    for n, ms in samples.items():
        measured = [m for m in ms if m["round"] > 0]
        ok = [m for m in measured if m["ok"]]
        entry = {"job": job, "linker": n, "command": lks[n], "input_mb": meta["input_bytes"] / 1e6, "samples": ms}
        if len(ok) < len(measured) or not ok:
            entry["failed"] = True
            entry["error"] = next(m["error"] for m in ms if not m["ok"])
        if ok:
            walls = [m["wall"] for m in ok]
            entry.update(median=statistics.median(walls), min=min(walls), max=max(walls),
                         cpu=statistics.median(m["cpu"] for m in ok), rss_mb=max(m["rss_mb"] for m in ok),
                         output_mb=statistics.median(m["output_mb"] for m in ok), runs=len(ok))
            checked = [m["output_ok"] for m in ms if "output_ok" in m]
            entry["output_ok"] = all(checked) if checked else None
            if loopfs:
                entry["synced"] = statistics.median(m["synced"] for m in ok)
                entry["device_mb"] = statistics.median(m["device_mb"] for m in ok)
        if n in counts:
            entry["instructions"] = counts[n]
        results.append(entry)
    return results


# reporting -------------------------------------------------------------------------------------
def fmt_s(x):
    return f"{x:.3f}" if x < 10 else f"{x:.2f}"


def fmt_mb(x):
    return f"{x:.2f}" if x < 10 else f"{x:.0f}"


def markdown(data):
    res, jobs_meta = data["results"], data["jobs"]
    lks = list(dict.fromkeys(r["linker"] for r in res))
    jobs = list(dict.fromkeys(r["job"] for r in res))
    io = any("synced" in r for r in res)
    lines = [f"# {data['scenario']} ({data['machine']['date']})", "", data["header"], ""]
    # Summary: one row per job, one column per linker.
    lines += ["Median wall time in seconds (ratio to the fastest):", "",
              "| job | inputs | " + " | ".join(lks) + " |", "|---|---|" + "---|" * len(lks)]
    for job in jobs:
        rows = {r["linker"]: r for r in res if r["job"] == job}
        best = min((r["median"] for r in rows.values() if not r.get("failed")), default=None)
        cells = []
        for l in lks:
            r = rows.get(l)
            if r is None:
                cells.append("")
            elif r.get("failed"):
                cells.append("failed")
            else:
                c = f"{fmt_s(r['median'])} ({r['median'] / best:.2f})"
                cells.append(f"**{c}**" if r["median"] == best else c)
        jm = jobs_meta.get(job, {})
        lines.append(f"| {job} | {jm.get('input_bytes', 0) / 1e6:.0f} MB, {jm.get('input_files', '?')} files | "
                     + " | ".join(cells) + " |")
    refs = sorted({m.get("reference_linker", "ld.bfd") for m in jobs_meta.values()})
    lines += ["", "Details (sorted by median wall time; CPU = user+sys median, RSS = peak, output checked = the "
              f"linked program ran like {' / '.join(refs)}'s):", ""]
    head = "| job | linker | median s | min–max s | ratio | CPU s | peak RSS MB | output MB | output checked |"
    sep = "|---|---|---|---|---|---|---|---|---|"
    if io:
        head += " on disk (+sync) s | device written MB |"
        sep += "---|---|"
    lines += [head, sep]
    for job in jobs:
        rows = [r for r in res if r["job"] == job and not r.get("failed")]
        best = min((r["median"] for r in rows), default=1)
        for r in sorted(rows, key=lambda r: r["median"]):
            chk = {True: "yes", False: "**NO**", None: "n/a"}[r.get("output_ok")]
            line = (f"| {job} | {r['linker']} | {fmt_s(r['median'])} | {fmt_s(r['min'])}–{fmt_s(r['max'])} | "
                    f"{r['median'] / best:.2f} | {fmt_s(r['cpu'])} | {r['rss_mb']:.0f} | {fmt_mb(r['output_mb'])} | {chk} |")
            if io:
                line += f" {fmt_s(r['synced'])} | {r['device_mb']:.0f} |"
            lines.append(line)
        for r in res:
            if r["job"] == job and r.get("failed"):
                err = r.get("error", "").replace("\n", " ").replace("|", "\\|")[:200]
                lines.append(f"| {job} | {r['linker']} | failed | | | | | | {err} |" + (" | |" if io else ""))
    if "rivet" in lks and len(lks) > 1:
        others = [l for l in lks if l != "rivet"]
        lines += ["", "rivet's median over each other linker's, wall time / user+sys CPU (below 1: rivet is faster, "
                  "uses less CPU):", "", "| job | " + " | ".join(f"rivet / {l}" for l in others) + " |",
                  "|---|" + "---|" * len(others)]
        for job in jobs:
            rows = {r["linker"]: r for r in res if r["job"] == job and not r.get("failed")}
            rv = rows.get("rivet")
            cells = [f"{rv['median'] / rows[l]['median']:.2f} / {rv['cpu'] / rows[l]['cpu']:.2f}"
                     if rv and l in rows and rows[l]["cpu"] > 0 else "" for l in others]
            lines.append(f"| {job} | " + " | ".join(cells) + " |")
    counted = [r for r in res if "instructions" in r]
    if counted:
        lines += ["", "Instructions at one thread (valgrind's callgrind, `--no-fork --threads=1`; wild with "
                  "`--no-gc-sections` unless the job's line has `--gc-sections`, the same work as rivet; one count "
                  "per job, not moved by the machine's load):", "",
                  "| job | rivet | wild | rivet / wild |", "|---|---|---|---|"]
        for job in jobs:
            c = {r["linker"]: r["instructions"] for r in counted if r["job"] == job}
            fmt = lambda v: f"{v / 1e6:,.1f}M" if isinstance(v, int) else (f"failed: {v}" if v else "")
            ratio = f"{c['rivet'] / c['wild']:.2f}" if all(isinstance(c.get(k), int) for k in ("rivet", "wild")) else ""
            lines.append(f"| {job} | {fmt(c.get('rivet'))} | {fmt(c.get('wild'))} | {ratio} |")
    lines += ["", "Jobs: " + "; ".join(f"{j} = {m.get('description', '')} ({m.get('mode', m.get('kind'))}, "
                                      f"output {fmt_mb(m.get('output_bytes', 0) / 1e6)} MB)" for j, m in jobs_meta.items()) + "."]
    return "\n".join(lines) + "\n"


def main():
    # A SIGTERM (timeout, kill) must still tear down mounts, loop devices, cgroups and the blkio
    # throttle: turn it into SystemExit so the finally blocks run.
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(f"{sys.argv[0]}: terminated"))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", default=None, help=f"default {DEFAULT_JOBS}; {A64_JOBS} in the aarch64 scenario")
    ap.add_argument("--scenario", default="warm", choices=SCENARIOS)
    ap.add_argument("--linkers", default=None,
                    help=f"default {DEFAULT_LINKERS}; {AARCH64_LINKERS} in the aarch64 scenario")
    ap.add_argument("--instructions", action=argparse.BooleanOptionalAction, default=None,
                    help="also count rivet's and wild's instructions at one thread with callgrind, once per job "
                         "(default: on in the aarch64 scenario)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results", help="where results go")
    ap.add_argument("--name", default=None, help="results file name prefix (default: the scenario)")
    ap.add_argument("--memory-fraction", type=float, default=0.5,
                    help="compressed/slow-disk: the memory cgroup limit as a fraction of the job's inputs + output "
                         "(default 0.5; 0 = no limit)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds before a link is killed")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--outputs", choices=["keep", "delete"], default=None,
                    help="keep: each link replaces the linker's previous output (default for warm and scale); "
                         "delete: outputs are deleted before each run (default for the others)")
    a = ap.parse_args()

    a64 = a.scenario == "aarch64"
    if a.jobs is None:
        a.jobs = A64_JOBS if a64 else DEFAULT_JOBS
    if a.linkers is None:
        a.linkers = AARCH64_LINKERS if a64 else DEFAULT_LINKERS
    if a.instructions is None:
        a.instructions = a64
    if a.instructions and shutil.which("valgrind") is None:
        log("no instruction counts: valgrind is not installed")
        a.instructions = False
    jobs = ["synth-1", "synth-2", "synth-4", "synth-8"] if a.scenario == "scale" else a.jobs.split(",")
    metas = {}
    for j in jobs:
        f = a.cache / "jobs" / j / "job.json"
        if f.exists() and (f.parent / "capture.json").exists():
            metas[j] = json.loads(f.read_text())
        else:
            log(f"skipping job {j}: not built (python3 bench/corpus.py build --jobs {j})")
    if not metas:
        sys.exit("no jobs to run")
    if a.scenario in ("cold", "compressed", "slow-disk") and os.geteuid() != 0:
        log(f"{a.scenario} scenario skipped: it needs root (drop_caches, loop devices, cgroups)")
        return
    lks = linkers(a.linkers.split(","))
    if not lks:
        sys.exit("no linkers to run")
    # Versions of the linkers as each job runs them (another machine's jobs: its GNU linkers).
    versions = {}
    for meta in metas.values():
        for n, c in for_machine({n: c for n, c in lks.items() if n in ("bfd", "gold", "lld", "mold", "wild", "rivet")},
                                meta).items():
            key = n if c[0] == lks[n][0] else f"{n} ({c[0]})"
            if key not in versions:
                versions[key] = linker_version(c)

    helper = spawn_helper(a.cache)
    cg = Cgroup()
    loopfs = None
    out_dir = None
    notes = {"warm": "inputs in the page cache (warm-up run), output on the local disk.",
             "scale": "synthetic jobs of 1x, 2x, 4x, 8x size, warm page cache, output on the local disk.",
             "aarch64": "AArch64 jobs (cross-compiled, linked for aarch64; bfd = aarch64-linux-gnu-ld), inputs in the "
                        "page cache (warm-up run), output on the local disk; every output runs under qemu-aarch64 "
                        "and is compared with the cross GNU ld's.",
             "cold": "`sync; echo 3 > /proc/sys/vm/drop_caches` before every run (inputs, linker binaries and "
                     "libraries all come from disk).",
             "compressed": "output on a loop-mounted btrfs with compress-force=zstd; the linker runs in a memory cgroup "
                           "smaller than inputs + output, so dirty output pages must be written back during the link; "
                           "`on disk` = link + `sync -f`.",
             "slow-disk": f"output on an ext4 loop device whose writes are throttled to {SLOW_DISK_MBPS} MB/s, the linker "
                          "in a memory cgroup smaller than inputs + output; `on disk` = link + `sync -f`."}
    keep = (a.outputs or ("keep" if a.scenario in ("warm", "scale", "aarch64") else "delete")) == "keep"
    setup = notes[a.scenario] + (" Each link replaces the linker's own previous output." if keep
                                 else " Outputs are deleted before each run.")
    results = []
    try:
        if a.scenario == "cold":
            try:
                drop_caches()
            except OSError as e:
                log(f"cold scenario skipped: cannot drop caches ({e})")
                return
        if a.scenario in ("compressed", "slow-disk"):
            try:
                if a.scenario == "compressed":
                    loopfs = LoopFs("btrfs", 16, "compress-force=zstd")
                else:
                    loopfs = LoopFs("ext4", 16, None)
                    setup += " " + loopfs.throttle_writes(SLOW_DISK_MBPS * 10**6) + "."
            except (OSError, subprocess.CalledProcessError) as e:
                log(f"{a.scenario} scenario skipped: cannot set up the loop file system: {e}")
                if loopfs:
                    loopfs.remove()
                return
            out_dir = MOUNT / "out"
            out_dir.mkdir()
        else:
            (a.cache / "out").mkdir(parents=True, exist_ok=True)
            out_dir = Path(tempfile.mkdtemp(prefix=f"{a.scenario}-", dir=a.cache / "out"))
        mach = machine(a.cache, out_dir)
        limits = []
        for j, meta in metas.items():
            files = []
            if loopfs and a.memory_fraction > 0:
                limit = max(64 << 20, int((meta["input_bytes"] + meta["output_bytes"]) * a.memory_fraction))
                try:
                    limits.append(f"{j}: " + cg.limit_memory(limit))
                    files = cg.procs_files()
                except OSError as e:
                    log(f"{a.scenario}: no memory limit ({e})")
            log(f"{j}: {meta['input_bytes'] / 1e6:.0f} MB of inputs, {len(lks)} linkers, {a.runs} runs")
            results += bench_job(helper, a.cache / "jobs" / j, meta, lks, a.runs, a.scenario, out_dir, files, loopfs, a.timeout,
                                 keep, a.instructions)
        if limits:
            setup += " Memory limits: " + "; ".join(limits) + "."
    finally:
        cg.remove()
        if loopfs:
            loopfs.remove()
        elif out_dir:
            shutil.rmtree(out_dir, ignore_errors=True)

    header = header_text(mach, a.scenario, a.runs, versions, setup)
    data = {"scenario": a.scenario, "machine": mach, "header": header, "runs": a.runs, "linkers": lks,
            "jobs": metas, "results": results}
    a.out.mkdir(parents=True, exist_ok=True)
    base = a.out / f"{a.name or a.scenario}-{datetime.datetime.now().strftime('%Y%m%d-%H%M')}"
    base.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    text = markdown(data)
    base.with_suffix(".md").write_text(text)
    print(text)
    print(f"results: {base}.md, {base}.json", file=sys.stderr)
    if not a.no_plot:
        try:
            from plot import plot
            plot(base.with_suffix(".json"), base.with_suffix(".png"))
            print(f"plot: {base}.png", file=sys.stderr)
        except ImportError as e:
            log(f"no plot: {e} (pip install matplotlib)")


if __name__ == "__main__":
    main()
