#!/usr/bin/env python3
"""Builds rivet's benchmark corpus: replayable link jobs captured while the real compiler and GNU ld
do a real build.

    python3 bench/corpus.py build [--jobs c-hello,synth-1,c-debug,rust-debug,cxx-big] [--force]
    python3 bench/corpus.py list

A job is a directory (cached in ~/.cache/rivet-bench/jobs/NAME, or $RIVET_BENCH_CACHE/jobs/NAME;
never committed) holding
  response.txt   the link's arguments, one per line, paths relative to the job directory, no -o:
                 replay with `cd JOB && LINKER @response.txt -o OUT`
  build/, ext/   the copied inputs (build/ from the build tree, ext/ from elsewhere, under their
                 absolute path); system .so files and linker-script stubs are named by absolute path
  job.json       name, description, kind (exe/shared), mode (pie, no-pie, static, static-pie,
                 shared), input_bytes (everything the link reads), copied_bytes, input_files,
                 output_bytes (GNU ld's output), run_args (how to run the output for the check)
  capture.json   the capture's details: every input, the original command line and directory

Capture: the compiler driver finds bench/capture_ld.py as its `ld` (gcc -B DIR / rustc
-C link-arg=-BDIR); it runs the real GNU ld with -t, copies what the link read and writes the
response file (see capture_ld.py). Jobs:
  c-hello      examples/hello (two files, -g), dynamic PIE; for smoke tests
  synth-N      generated C: N x 1000 functions in N x 250 files (-g -O0, every file includes a
               header of 300 struct types and keeps them with -fno-eliminate-unused-debug-types,
               like C++ headers do), plus a 90 KB .rodata blob per file (.incbin: half random,
               half regular bytes); ~105 MB of inputs per N, linear in N
  c-debug      OpenSSL 3 (the sources bundled in the openssl-src crate) built with -g -O2: the
               `openssl` program, its 57 objects + libapps.a, libssl.a, libcrypto.a (1135 members);
               ~2 minutes to build on 2 cores
  rust-debug   a Rust program using regex, serde_json and clap (derive), debug build; the final
               link of the binary is captured
  cxx-big      bench/cxx_big.cpp (LLVM's O2 pipeline + x86 code generation) linked statically
               against Debian's LLVM 19 libraries (llvm-19-dev) and libstdc++
"""
import argparse, concurrent.futures, json, os, random, shutil, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
DEFAULT_CACHE = Path(os.environ.get("RIVET_BENCH_CACHE", Path.home() / ".cache" / "rivet-bench"))
ALL_JOBS = "c-hello,synth-1,c-debug,rust-debug,cxx-big"
JOBS_CPU = max(1, os.cpu_count() or 1)


def sh(cmd, quiet=False, **kw):
    text = " ".join(map(str, cmd)) if isinstance(cmd, list) else cmd
    print("+", text if len(text) < 300 else text[:300] + f" ... ({len(cmd)} arguments)", flush=True)
    if quiet:
        r = subprocess.run(cmd, capture_output=True, text=True, **kw)
        if r.returncode != 0:
            sys.exit(f"failed ({r.returncode}): {text[:300]}\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
        return r
    return subprocess.run(cmd, check=True, **kw)


def rivet_bin():
    """target/release/rivet (or $CARGO_TARGET_DIR/release/rivet), built if missing."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    exe = target / "release" / "rivet"
    if not exe.exists():
        sh(["cargo", "build", "--release", "--quiet"], cwd=ROOT)
    return exe


def rotated(items, i):
    """`items` in the order of round `i` of rotated rounds: each starts a round in turn, so no
    one's place in the order favours it."""
    items = list(items)
    k = i % len(items) if items else 0
    return items[k:] + items[:k]


def parallel(cmds, cwd):
    """Runs commands on every core; stops at the first failure."""
    def one(cmd):
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}\n{r.stderr[-2000:]}")
    with concurrent.futures.ThreadPoolExecutor(JOBS_CPU) as ex:
        for f in [ex.submit(one, c) for c in cmds]:
            f.result()


class Capture:
    """A wrapper directory whose `ld` is capture_ld.py, and the environment that tells it where to
    put the job. `env` goes to the build command; `gcc_flag` / `rust_flags` put the wrapper first."""

    def __init__(self, name, cache, tmp, match="*", build_root=None):
        self.name, self.cache = name, cache
        self.wrap = Path(tmp) / "capture-ld"
        self.wrap.mkdir(exist_ok=True)
        (self.wrap / "ld").unlink(missing_ok=True)
        (self.wrap / "ld").symlink_to(BENCH / "capture_ld.py")
        self.staging = cache / "jobs" / f".{name}.partial"
        shutil.rmtree(self.staging, ignore_errors=True)
        self.env = dict(os.environ, RIVET_BENCH_JOB_DIR=str(self.staging), RIVET_BENCH_CAPTURE_MATCH=match,
                        RIVET_BENCH_BUILD_ROOT=str(build_root or tmp))
        self.gcc_flag = f"-B{self.wrap}"

    def finish(self, description, run_args=()):
        if not (self.staging / "response.txt").exists():
            sys.exit(f"{self.name}: the build finished but no link matched the capture (nothing in {self.staging})")
        cap = json.loads((self.staging / "capture.json").read_text())
        also = [p for p in cap["also_read"] if os.path.isfile(p)]
        meta = {
            "name": self.name,
            "description": description,
            "kind": cap["kind"],
            "mode": cap["mode"],
            "input_bytes": sum(i["bytes"] for i in cap["inputs"]) + sum(os.path.getsize(p) for p in also),
            "copied_bytes": sum(i["bytes"] for i in cap["inputs"] if i["copied"]),
            "input_files": len(cap["inputs"]) + len(also),
            "output_bytes": cap["output_bytes"],
            "run_args": list(run_args),
            "captured_with": cap["real_ld"],
        }
        (self.staging / "job.json").write_text(json.dumps(meta, indent=2) + "\n")
        dest = self.cache / "jobs" / self.name
        shutil.rmtree(dest, ignore_errors=True)
        self.staging.rename(dest)
        print(f"job {self.name}: {meta['input_files']} inputs, {meta['input_bytes'] / 1e6:.1f} MB "
              f"({meta['copied_bytes'] / 1e6:.1f} MB copied), output {meta['output_bytes'] / 1e6:.1f} MB -> {dest}")
        return dest


def job_c_hello(cache, tmp):
    cap = Capture("c-hello", cache, tmp)
    for f in ["main.c", "greet.c"]:
        sh(["gcc", "-c", "-g", str(ROOT / "examples/hello" / f), "-o", f"{tmp}/{f[:-2]}.o"])
    sh(["gcc", cap.gcc_flag, "main.o", "greet.o", "-o", "c-hello"], cwd=tmp, env=cap.env)
    cap.finish("examples/hello (2 files, -g), dynamic PIE")


# synth-N ---------------------------------------------------------------------------------------
SYNTH_FILES = 250        # per N
SYNTH_FUNCS = 4          # per file: N x 1000 functions
SYNTH_TYPES = 300        # struct types in the shared header
SYNTH_BLOB = 90 * 1024   # .rodata bytes per file
PRIMS = ["int", "unsigned long", "double", "const char *", "short", "unsigned char", "float", "long long"]


def synth_header(rng):
    h = ["/* generated by bench/corpus.py */", "#pragma once", "#include <stddef.h>"]
    for t in range(SYNTH_TYPES):
        h.append(f"enum synth_kind_{t} {{ " + ", ".join(f"SYNTH_KIND_{t}_{k}" for k in range(8)) + " };")
        mem = []
        for m in range(12):
            r = rng.random()
            if t and r < 0.2:
                mem.append(f"struct synth_record_{rng.randrange(t)} *link_{m};")
            elif t and r < 0.3:
                mem.append(f"int (*callback_{m})(struct synth_record_{rng.randrange(t)} *, void *);")
            elif r < 0.4:
                mem.append(f"{rng.choice(PRIMS)} values_{m}[{rng.randrange(2, 16)}];")
            elif r < 0.45:
                mem.append(f"enum synth_kind_{t} kind_{m};")
            else:
                mem.append(f"{rng.choice(PRIMS)} field_{m}_{rng.choice(['count', 'offset', 'size', 'name', 'flags', 'state'])};")
        h.append(f"struct synth_record_{t} {{ " + " ".join(mem) + " };")
        h.append(f"typedef struct synth_record_{t} synth_record_{t}_t;")
    return "\n".join(h) + "\n"


def synth_blob(rng, size):
    """Half random 4 KiB blocks, half regular ones (a table of counters), so a compressing file
    system has something to do but not everything."""
    out = bytearray()
    for b in range(size // 4096):
        out += rng.randbytes(4096) if b % 2 else b"".join((b * 1024 + k).to_bytes(4, "little") for k in range(1024))
    return bytes(out)


def synth_file(i, files, rng):
    nxt = (i + 7) % files
    c = ['#include "synth_types.h"', "#include <string.h>", f"extern long synth_counter_{(i + 1) % files};"]
    c += [f"long synth_{nxt}_{f}(long, const char *);" for f in range(SYNTH_FUNCS)]
    c.append(f"long synth_counter_{i} = {i};")
    off = (i * 3 * 4096) % (4 * 1024 * 1024 - SYNTH_BLOB) // 4096 * 4096
    c.append(f'__asm__(".section .rodata.synth_blob_{i},\\"a\\"\\n\\t.globl synth_blob_{i}\\n\\t.hidden synth_blob_{i}\\n'
             f'synth_blob_{i}:\\n\\t.incbin \\"blob.bin\\", {off}, {SYNTH_BLOB}\\n\\t.text");')
    c.append(f'extern const unsigned char synth_blob_{i}[] __attribute__((visibility("hidden")));')
    for f in range(SYNTH_FUNCS):
        t = rng.randrange(SYNTH_TYPES)
        c.append(f"""long synth_{i}_{f}(long depth, const char *tag) {{
    struct synth_record_{t} rec;
    long acc = depth * {rng.randrange(1, 100)};
    memset(&rec, 0, sizeof rec);
    static const char *const names[] = {{ "synth {i}.{f} alpha", "synth {i}.{f} beta", "shared name", "unit {i}" }};
    switch (depth & 7) {{
    case 0: acc += 11; break;
    case 1: acc ^= 0x{rng.getrandbits(16):x}; break;
    case 2: acc -= (long)strlen(tag); break;
    case 3: acc += names[depth & 3][0]; break;
    case 4: acc *= 3; break;
    case 5: acc += synth_counter_{(i + 1) % files}; break;
    case 6: acc += (long)sizeof rec + synth_blob_{i}[(depth * 4093) % {SYNTH_BLOB}]; break;
    default: acc = ~acc; break;
    }}
    for (int k = 0; k < (int)(depth & 3); k++)
        acc += k * (long)names[k][1];
    if (depth > 0)
        acc += synth_{nxt}_{f}(depth - 1, names[depth & 3]);
    return acc;
}}""")
    c.append(f"long (*const synth_table_{i}[])(long, const char *) = {{ "
             + ", ".join(f"synth_{i}_{f}" for f in range(SYNTH_FUNCS)) + " };")
    return "\n".join(c) + "\n"


def job_synth(n, cache, tmp):
    rng = random.Random(n)
    files = SYNTH_FILES * n
    src = Path(tmp) / f"synth-{n}"
    src.mkdir()
    (src / "synth_types.h").write_text(synth_header(random.Random(0)))
    (src / "blob.bin").write_bytes(synth_blob(random.Random(1), 4 * 1024 * 1024))
    for i in range(files):
        (src / f"s{i}.c").write_text(synth_file(i, files, rng))
    picks = list(range(0, files, 37))
    main = ["#include <stdio.h>", *[f"extern long (*const synth_table_{i}[])(long, const char *);" for i in picks],
            "int main(void) {", "    long sum = 0;"]
    main += [f'    sum += synth_table_{i}[{i % SYNTH_FUNCS}]({i % 5 + 2}, "main");' for i in picks]
    main += ['    printf("synth-%d: %ld\\n", ' + str(n) + ', sum);', "    return 0;", "}"]
    (src / "main.c").write_text("\n".join(main) + "\n")
    flags = ["-g", "-O0", "-fno-eliminate-unused-debug-types"]
    print(f"+ gcc -c {' '.join(flags)} s0.c ... s{files - 1}.c ({JOBS_CPU} at a time)", flush=True)
    parallel([["gcc", "-c", *flags, f"s{i}.c", "-o", f"s{i}.o"] for i in range(files)] +
             [["gcc", "-c", *flags, "main.c", "-o", "main.o"]], src)
    cap = Capture(f"synth-{n}", cache, tmp, build_root=src)
    sh(["gcc", cap.gcc_flag, "main.o", *[f"s{i}.o" for i in range(files)], "-o", f"synth-{n}"], cwd=src, env=cap.env)
    cap.finish(f"generated C: {files * SYNTH_FUNCS} functions in {files} files, -g -O0, dynamic PIE")


# real programs ---------------------------------------------------------------------------------
def cargo_registry_source(crate_dep, glob):
    """Lets cargo fetch a crate from crates.io (a throwaway project depending on it) and returns the
    paths matching `glob` in ~/.cargo/registry/src."""
    with tempfile.TemporaryDirectory() as t:
        proj = Path(t) / "fetch"
        sh(["cargo", "new", "-q", "--vcs", "none", "--name", "fetch", str(proj)])
        with open(proj / "Cargo.toml", "a") as f:
            f.write(f"{crate_dep}\n")
        sh(["cargo", "fetch", "-q"], cwd=proj)
    registry = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo")) / "registry" / "src"
    return sorted(registry.glob(glob))


def job_c_debug(cache, tmp):
    found = cargo_registry_source('openssl-src = "300"', "*/openssl-src-300.*/openssl")
    if not found:
        sys.exit("c-debug: OpenSSL's sources were not found after cargo fetch of openssl-src")
    src = Path(tmp) / "openssl"
    shutil.copytree(found[-1], src, symlinks=True)
    sh(["perl", "Configure", "linux-x86_64", "no-asm", "no-shared", "no-tests", "no-docs", "no-module", "-g", "-O2"],
       quiet=True, cwd=src)
    sh(["make", f"-j{JOBS_CPU}", "build_generated"], quiet=True, cwd=src)
    # Everything apps/openssl needs (about 1200 objects with -g -O2): about 2 minutes on 2 cores.
    sh(["make", f"-j{JOBS_CPU}", "apps/openssl"], quiet=True, cwd=src)
    # The final link again, through the capturing wrapper (make's own link used the system ld).
    (src / "apps" / "openssl").unlink()
    cap = Capture("c-debug", cache, tmp, match="openssl", build_root=src)
    sh(["make", "apps/openssl", f"CC=gcc {cap.gcc_flag}"], quiet=True, cwd=src, env=cap.env)
    cap.finish("OpenSSL 3 `openssl` program: 57 objects + libapps.a, libssl.a, libcrypto.a, -g -O2 (openssl-src crate)",
               run_args=["list", "-digest-algorithms"])


RUST_MAIN = r'''use clap::Parser;
#[derive(Parser)]
struct Args {
    #[arg(default_value = "a1b22c333")]
    text: String,
}
fn main() {
    let args = Args::parse();
    let re = regex::Regex::new(r"[0-9]+").unwrap();
    let nums: Vec<&str> = re.find_iter(&args.text).map(|m| m.as_str()).collect();
    println!("{}", serde_json::json!({ "numbers": nums }));
}
'''


def job_rust_debug(cache, tmp):
    proj = Path(tmp) / "rustjob"
    sh(["cargo", "new", "-q", "--vcs", "none", "--name", "rustjob", str(proj)])
    with open(proj / "Cargo.toml", "a") as f:
        f.write('regex = "1"\nserde_json = "1"\nclap = { version = "4", features = ["derive"] }\n')
    (proj / "src" / "main.rs").write_text(RUST_MAIN)
    # Dependencies first with the normal linker, then only the binary's link through the wrapper
    # (cargo rebuilds the binary because RUSTFLAGS changed; build scripts and proc macros are
    # built for the host with the same flags, so the wrapper only captures `rustjob-*`).
    cap = Capture("rust-debug", cache, tmp, match="rustjob-*", build_root=proj)
    env = dict(cap.env, RUSTFLAGS=f"-C linker-features=-lld -C link-arg={cap.gcc_flag}",
               CARGO_TARGET_DIR=str(proj / "target"))
    sh(["cargo", "build", "-q", f"-j{JOBS_CPU}"], cwd=proj, env=env)
    cap.finish("Rust: regex + serde_json + clap (derive), debug build, dynamic PIE")


def job_cxx_big(cache, tmp):
    lc = "/usr/lib/llvm-19/bin/llvm-config"
    if not Path(lc).exists():
        sys.exit("cxx-big needs llvm-19-dev (bench/setup.sh installs it)")
    out = lambda *a: subprocess.run([lc, *a], check=True, capture_output=True, text=True).stdout.split()
    sh(["g++", "-c", "-O1", *out("--cxxflags"), str(BENCH / "cxx_big.cpp"), "-o", "cxx_big.o"], cwd=tmp)
    libs = [*out("--ldflags"), *out("--link-static", "--libs", "core", "support", "passes", "x86codegen", "x86asmparser",
                                    "x86desc", "x86info"), *out("--link-static", "--system-libs")]
    cap = Capture("cxx-big", cache, tmp)
    sh(["g++", cap.gcc_flag, "cxx_big.o", *libs, "-o", "cxx-big"], cwd=tmp, env=cap.env)
    cap.finish("C++: LLVM 19 static libraries (O2 pipeline + x86 codegen), dynamic PIE against libstdc++.so")


BUILDERS = {"c-hello": job_c_hello, "c-debug": job_c_debug, "rust-debug": job_rust_debug, "cxx-big": job_cxx_big}


def build(job, cache, force=False):
    if not force and (cache / "jobs" / job / "capture.json").exists():
        print(f"job {job}: cached in {cache / 'jobs' / job} (--force rebuilds)")
        return
    with tempfile.TemporaryDirectory(prefix=f"rivet-corpus-{job}-", dir=os.environ.get("RIVET_BENCH_TMP")) as tmp:
        if job.startswith("synth-") and job[6:].isdigit():
            job_synth(int(job[6:]), cache, tmp)
        elif job in BUILDERS:
            BUILDERS[job](cache, tmp)
        else:
            sys.exit(f"unknown job {job} (known: c-hello, synth-N, c-debug, rust-debug, cxx-big)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["build", "list"])
    ap.add_argument("--jobs", default=ALL_JOBS, help=f"comma-separated (default {ALL_JOBS})")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--force", action="store_true", help="rebuild jobs that are already cached")
    a = ap.parse_args()
    if a.command == "list":
        for d in sorted((a.cache / "jobs").glob("*/job.json")):
            m = json.loads(d.read_text())
            print(f"{m['name']:<12} {m['input_bytes'] / 1e6:9.1f} MB {m.get('input_files', '?'):>6} files  "
                  f"{m.get('mode', m['kind']):<10} {m['description']}")
        return
    for job in a.jobs.split(","):
        build(job, a.cache, a.force)


if __name__ == "__main__":
    main()
