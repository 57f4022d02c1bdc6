#!/usr/bin/env python3
"""Builds rivet's benchmark corpus: replayable link jobs (inputs + response.txt, lld's --reproduce
layout), captured with rivet's own --reproduce while the real compiler drives the link.

    python3 bench/corpus.py build [--jobs c-hello,synth-1,c-debug,rust-debug] [--cache DIR]
    python3 bench/corpus.py list

Jobs are cached in ~/.cache/rivet-bench/jobs/NAME (never in the repository):
  c-hello      the README's two-file example (smoke tests)
  synth-N      generated assembly: N x 1000 files with code, data, relocations and debug-like sections
               (~100 MB of inputs per N), for the scale and I/O scenarios
  c-debug      SQLite (the amalgamation bundled in the libsqlite3-sys crate) with -g -O2 and a main
  rust-debug   a Rust binary with regex/serde_json/clap from crates.io, debug build
  cxx-big      bench/cxx_big.cpp (LLVM's O2 pipeline and x86 code generation) linked statically
               against Debian's LLVM 19 libraries (llvm-19-dev)
"""
import argparse, json, os, random, shutil, subprocess, sys, tarfile, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = Path(os.environ.get("RIVET_BENCH_CACHE", Path.home() / ".cache" / "rivet-bench"))


def sh(cmd, **kw):
    text = " ".join(map(str, cmd)) if isinstance(cmd, list) else cmd
    print("+", text if len(text) < 300 else text[:300] + f" ... ({len(cmd)} arguments)", flush=True)
    subprocess.run(cmd, check=True, **kw)


def rivet_bin():
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    exe = target / "release" / "rivet"
    if not exe.exists():
        sh(["cargo", "build", "--release", "--quiet"], cwd=ROOT)
    return exe


def linker_dir(tmp):
    d = Path(tmp) / "ld-dir"
    d.mkdir(exist_ok=True)
    (d / "ld").unlink(missing_ok=True)
    (d / "ld").symlink_to(rivet_bin())
    return d


def capture(name, cache, link_cmd, cwd, kind="exe", run_args=None, description=""):
    """Runs `link_cmd` (a gcc/rustc command that links) with rivet and --reproduce, then unpacks the
    tarball into cache/jobs/name."""
    jobs = cache / "jobs"
    jobs.mkdir(parents=True, exist_ok=True)
    tar = Path(cwd) / f"{name}.tar"
    env = dict(os.environ)
    cmd = link_cmd(tar)
    sh(cmd, cwd=cwd, env=env)
    dest = jobs / name
    shutil.rmtree(dest, ignore_errors=True)
    with tempfile.TemporaryDirectory() as t:
        with tarfile.open(tar) as tf:
            tf.extractall(t, filter="fully_trusted")
        inner = next(Path(t).iterdir())
        shutil.move(str(inner), dest)
    size = sum(f.stat().st_size for f in dest.rglob("*") if f.is_file())
    meta = {"name": name, "description": description, "kind": kind, "input_bytes": size, "run_args": run_args or []}
    (dest / "job.json").write_text(json.dumps(meta, indent=2))
    print(f"job {name}: {size / 1e6:.1f} MB of inputs in {dest}")
    return dest


def job_c_hello(cache, tmp):
    ld = linker_dir(tmp)
    for f in ["main.c", "greet.c"]:
        sh(["gcc", "-c", "-g", str(ROOT / "examples/hello" / f), "-o", f"{tmp}/{f}.o"])
    capture("c-hello", cache, lambda tar: ["gcc", "-B", str(ld), f"{tmp}/main.c.o", f"{tmp}/greet.c.o", "-o", "c-hello",
                                           f"-Wl,--reproduce={tar}"], tmp, description="examples/hello, dynamic PIE")


SYNTH_FILES = 1000


def synth_file(i, n_files, rng):
    """One assembly file: 20 functions calling into other files, a 48 KiB .rodata blob, a .data
    table of pointers (RELATIVE relocations in a PIE) and .debug_info/.debug_str-like sections
    full of absolute relocations, like -g output."""
    out = [f"# synth file {i}", ".text"]
    for f in range(20):
        callee = f"s{rng.randrange(n_files)}_f{rng.randrange(20)}"
        out += [f".globl s{i}_f{f}", f".type s{i}_f{f}, @function", f"s{i}_f{f}:", "  push %rbp", "  mov %rsp, %rbp",
                f"  lea s{i}_table(%rip), %rax", "  mov (%rax), %rax",
                f"  test %rdi, %rdi", f"  jz 1f", "  dec %rdi", f"  call {callee}@PLT", "1:",
                "  pop %rbp", "  ret", f".size s{i}_f{f}, .-s{i}_f{f}"]
    out += [".section .rodata", f"s{i}_blob:"]
    words = [str(rng.getrandbits(32)) for _ in range(48 * 1024 // 4)]
    for k in range(0, len(words), 16):
        out.append("  .long " + ",".join(words[k:k + 16]))
    out += [".data", ".p2align 3", f"s{i}_table:"] + [f"  .quad s{i}_f{f}" for f in range(20)]
    out += [".section .debug_str,\"MS\",@progbits,1"] + [f"  .asciz \"s{i}_f{f} in synthetic unit {i}\"" for f in range(20)]
    out += [".section .debug_info,\"\",@progbits"]
    for rep in range(40):
        out += [f"  .quad s{i}_f{f}" for f in range(20)] + ["  .long 0x12345678, 0x9abcdef0"]
    return "\n".join(out) + "\n"


def job_synth(n, cache, tmp):
    rng = random.Random(n)
    files = SYNTH_FILES * n
    src = Path(tmp) / f"synth-{n}"
    src.mkdir()
    for i in range(files):
        (src / f"s{i}.s").write_text(synth_file(i, files, rng))
    main = ["#include <stdio.h>", *[f"void s{i}_f0(long);" for i in range(0, files, 97)], "int main(void) {"]
    main += [f"  s{i}_f0(3);" for i in range(0, files, 97)] + ['  puts("synth ok");', "  return 0;", "}"]
    (src / "main.c").write_text("\n".join(main) + "\n")
    objs = []
    procs = []
    for i in range(files):
        procs.append(subprocess.Popen(["as", f"s{i}.s", "-o", f"s{i}.o"], cwd=src))
        objs.append(f"s{i}.o")
        if len(procs) >= 8:
            for p in procs:
                if p.wait() != 0:
                    sys.exit(f"as failed on synth file")
            procs = []
    for p in procs:
        p.wait()
    sh(["gcc", "-c", "main.c", "-o", "main.o"], cwd=src)
    for i in range(files):
        (src / f"s{i}.s").unlink()
    ld = linker_dir(tmp)
    capture(f"synth-{n}", cache, lambda tar: ["gcc", "-B", str(ld), "main.o", *objs, "-o", f"synth-{n}", f"-Wl,--reproduce={tar}"],
            src, description=f"{files} generated objects")


def cargo_registry_source(crate_dep, glob):
    """Lets cargo fetch a crate from crates.io and returns the paths matching `glob` in its source."""
    with tempfile.TemporaryDirectory() as t:
        proj = Path(t) / "fetch"
        sh(["cargo", "new", "-q", "--vcs", "none", str(proj)])
        with open(proj / "Cargo.toml", "a") as f:
            f.write(f"{crate_dep}\n")
        sh(["cargo", "fetch", "-q"], cwd=proj)
    registry = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo")) / "registry" / "src"
    return sorted(registry.glob(glob))


def job_c_debug(cache, tmp):
    found = cargo_registry_source('libsqlite3-sys = { version = "0.30", features = ["bundled"] }', "*/libsqlite3-sys-*/sqlite3/sqlite3.c")
    if not found:
        sys.exit("c-debug: the SQLite amalgamation was not found after cargo fetch")
    sqlite = found[-1]
    (Path(tmp) / "main.c").write_text(r'''#include <stdio.h>
#include "sqlite3.h"
static int row(void *u, int n, char **v, char **c) { (void)u; (void)c; for (int i = 0; i < n; i++) printf("%s ", v[i]); puts(""); return 0; }
int main(void) {
    sqlite3 *db; char *err = 0;
    sqlite3_open(":memory:", &db);
    sqlite3_exec(db, "create table t(a,b); insert into t values(1,'one'),(2,'two'); select a,b,length(b) from t order by a;", row, 0, &err);
    sqlite3_close(db);
    return 0;
}
''')
    sh(["gcc", "-c", "-g", "-O2", f"-I{sqlite.parent}", str(sqlite), "-o", "sqlite3.o"], cwd=tmp)
    sh(["gcc", "-c", "-g", "-O2", f"-I{sqlite.parent}", "main.c", "-o", "main.o"], cwd=tmp)
    ld = linker_dir(tmp)
    capture("c-debug", cache, lambda tar: ["gcc", "-B", str(ld), "main.o", "sqlite3.o", "-lm", "-o", "c-debug", f"-Wl,--reproduce={tar}"],
            tmp, description="SQLite amalgamation, -g -O2")


def job_rust_debug(cache, tmp):
    proj = Path(tmp) / "rustjob"
    sh(["cargo", "new", "-q", "--vcs", "none", "--name", "rustjob", str(proj)])
    with open(proj / "Cargo.toml", "a") as f:
        f.write('regex = "1"\nserde_json = "1"\nclap = { version = "4", features = ["derive"] }\n')
    (proj / "src" / "main.rs").write_text(r'''use clap::Parser;
#[derive(Parser)]
struct Args { #[arg(default_value = "a1b22c333")] text: String }
fn main() {
    let args = Args::parse();
    let re = regex::Regex::new(r"[0-9]+").unwrap();
    let nums: Vec<&str> = re.find_iter(&args.text).map(|m| m.as_str()).collect();
    println!("{}", serde_json::json!({ "numbers": nums }));
}
''')
    ld = linker_dir(tmp)
    tar = proj / "rust-debug.tar"
    env = dict(os.environ, RUSTFLAGS=f"-C linker-features=-lld -C link-arg=-B{ld} -C link-arg=-Wl,--reproduce={tar}")
    sh(["cargo", "build", "-q"], cwd=proj, env=env)
    capture("rust-debug", cache, lambda _tar: ["true"], proj, description="regex + serde_json + clap, debug build")


def job_cxx_big(cache, tmp):
    lc = "/usr/lib/llvm-19/bin/llvm-config"
    if not Path(lc).exists():
        sys.exit("cxx-big needs llvm-19-dev (bench/setup.sh installs it)")
    out = lambda *a: subprocess.run([lc, *a], check=True, capture_output=True, text=True).stdout.split()
    sh(["g++", "-c", "-O1", *out("--cxxflags"), str(ROOT / "bench" / "cxx_big.cpp"), "-o", "cxx_big.o"], cwd=tmp)
    libs = [*out("--ldflags"), *out("--link-static", "--libs", "core", "support", "passes", "x86codegen", "x86asmparser",
                                    "x86desc", "x86info"), *out("--link-static", "--system-libs")]
    ld = linker_dir(tmp)
    capture("cxx-big", cache, lambda tar: ["g++", "-B", str(ld), "cxx_big.o", *libs, "-o", "cxx-big", f"-Wl,--reproduce={tar}"],
            tmp, description="LLVM 19 static libraries (O2 pipeline + x86 codegen)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["build", "list"])
    ap.add_argument("--jobs", default="c-hello,synth-1,c-debug,rust-debug,cxx-big")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    a = ap.parse_args()
    if a.command == "list":
        for d in sorted((a.cache / "jobs").glob("*/job.json")):
            meta = json.loads(d.read_text())
            print(f"{meta['name']:<12} {meta['input_bytes'] / 1e6:9.1f} MB  {meta['description']}")
        return
    for job in a.jobs.split(","):
        with tempfile.TemporaryDirectory(prefix=f"rivet-corpus-{job}-") as tmp:
            if job == "c-hello":
                job_c_hello(a.cache, tmp)
            elif job.startswith("synth-"):
                job_synth(int(job.split("-")[1]), a.cache, tmp)
            elif job == "c-debug":
                job_c_debug(a.cache, tmp)
            elif job == "rust-debug":
                job_rust_debug(a.cache, tmp)
            elif job == "cxx-big":
                job_cxx_big(a.cache, tmp)
            else:
                sys.exit(f"unknown job {job}")


if __name__ == "__main__":
    main()
