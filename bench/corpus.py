#!/usr/bin/env python3
"""Builds rivet's benchmark corpus: replayable link jobs captured while the real compiler and GNU ld
do a real build.

    python3 bench/corpus.py build [--jobs c-hello,synth-1,c-debug,rust-debug,cxx-big,rust-big] [--force]
    python3 bench/corpus.py build --jobs a64-synth-1,a64-c-debug      # AArch64 (cross gcc, qemu-aarch64)
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
  rust-big     a Rust program over ~250 crates (tokio, axum, reqwest, tera, image, rayon and
               more), debug build: it serves a report to itself over loopback; ~6 minutes to
               build on 2 cores
  cxx-templates  generated C++: 32 units putting their own record types through the standard
               containers, algorithms, smart pointers, std::function and std::variant (-g1 -O0:
               ~170k COMDAT groups, most of them copies that resolution drops)
  shared-big   OpenSSL 3's libcrypto.so (-g -O2), a -shared link; checked by a program that loads
               the output under the library's soname and computes digests
AArch64 jobs (Debian's cross compiler, aarch64-linux-gnu-gcc with the sysroot /usr/aarch64-linux-gnu;
the link recorded through the cross GNU ld, aarch64-linux-gnu-ld; job.json says "machine": "aarch64",
`run_with` runs the output under qemu-aarch64 and `reference_linker` names the cross ld):
  a64-synth-N  synth-N's generator, sources and flags, compiled by the cross gcc
  a64-c-debug  c-debug's OpenSSL build (`openssl` program, -g -O2, no-asm) configured for linux-aarch64
"""
import argparse, concurrent.futures, json, os, random, shutil, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
DEFAULT_CACHE = Path(os.environ.get("RIVET_BENCH_CACHE", Path.home() / ".cache" / "rivet-bench"))
ALL_JOBS = "c-hello,synth-1,c-debug,rust-debug,cxx-big,rust-big,cxx-templates,shared-big"
A64_JOBS = "a64-synth-1,a64-c-debug"

# A cross target: the compiler, the GNU ld that records its links, how to run what they link.
AARCH64 = {
    "machine": "aarch64",
    "prefix": "aarch64-linux-gnu-",
    "cc": "aarch64-linux-gnu-gcc",
    "ld": "/usr/bin/aarch64-linux-gnu-ld",
    "openssl_target": "linux-aarch64",
    "run_with": ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"],
}
NATIVE = {"machine": "x86_64", "prefix": "", "cc": "gcc", "ld": "/usr/bin/ld.bfd", "openssl_target": "linux-x86_64",
          "run_with": []}
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

    def __init__(self, name, cache, tmp, match="*", build_root=None, target=NATIVE):
        self.name, self.cache, self.target = name, cache, target
        self.wrap = Path(tmp) / "capture-ld"
        self.wrap.mkdir(exist_ok=True)
        (self.wrap / "ld").unlink(missing_ok=True)
        (self.wrap / "ld").symlink_to(BENCH / "capture_ld.py")
        self.staging = cache / "jobs" / f".{name}.partial"
        shutil.rmtree(self.staging, ignore_errors=True)
        self.env = dict(os.environ, RIVET_BENCH_JOB_DIR=str(self.staging), RIVET_BENCH_CAPTURE_MATCH=match,
                        RIVET_BENCH_BUILD_ROOT=str(build_root or tmp), RIVET_BENCH_REAL_LD=target["ld"])
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
            "machine": self.target["machine"],
        }
        if self.target is not NATIVE:
            # The outputs run under an emulator; the reference output is the cross GNU ld's.
            meta["run_with"] = self.target["run_with"]
            meta["reference_linker"] = os.path.basename(self.target["ld"])
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


def job_synth(n, cache, tmp, target=NATIVE):
    """synth-N; with target=AARCH64 the same sources and flags compiled by the cross gcc (a64-synth-N)."""
    rng = random.Random(n)
    files = SYNTH_FILES * n
    name = f"a64-synth-{n}" if target is AARCH64 else f"synth-{n}"
    cc = target["cc"]
    src = Path(tmp) / name
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
    print(f"+ {cc} -c {' '.join(flags)} s0.c ... s{files - 1}.c ({JOBS_CPU} at a time)", flush=True)
    parallel([[cc, "-c", *flags, f"s{i}.c", "-o", f"s{i}.o"] for i in range(files)] +
             [[cc, "-c", *flags, "main.c", "-o", "main.o"]], src)
    cap = Capture(name, cache, tmp, build_root=src, target=target)
    sh([cc, cap.gcc_flag, "main.o", *[f"s{i}.o" for i in range(files)], "-o", name], cwd=src, env=cap.env)
    cap.finish(f"generated C: {files * SYNTH_FUNCS} functions in {files} files, -g -O0, dynamic PIE"
               + (f", {target['machine']} ({cc})" if target is not NATIVE else ""))


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


def job_c_debug(cache, tmp, target=NATIVE):
    """c-debug; with target=AARCH64 the same build configured for linux-aarch64 with the cross
    compiler (`--cross-compile-prefix`: gcc, ar and ranlib of the cross binutils) as a64-c-debug."""
    name = "a64-c-debug" if target is AARCH64 else "c-debug"
    found = cargo_registry_source('openssl-src = "300"', "*/openssl-src-300.*/openssl")
    if not found:
        sys.exit(f"{name}: OpenSSL's sources were not found after cargo fetch of openssl-src")
    src = Path(tmp) / "openssl"
    shutil.copytree(found[-1], src, symlinks=True)
    cross = [f"--cross-compile-prefix={target['prefix']}"] if target["prefix"] else []
    sh(["perl", "Configure", target["openssl_target"], *cross, "no-asm", "no-shared", "no-tests", "no-docs", "no-module",
        "-g", "-O2"], quiet=True, cwd=src)
    sh(["make", f"-j{JOBS_CPU}", "build_generated"], quiet=True, cwd=src)
    # Everything apps/openssl needs (about 1200 objects with -g -O2): about 2 minutes on 2 cores.
    sh(["make", f"-j{JOBS_CPU}", "apps/openssl"], quiet=True, cwd=src)
    # The final link again, through the capturing wrapper (make's own link used the system ld).
    (src / "apps" / "openssl").unlink()
    # (CC on make's command line replaces the Makefile's $(CROSS_COMPILE)gcc: the cross compiler by name.)
    cap = Capture(name, cache, tmp, match="openssl", build_root=src, target=target)
    sh(["make", "apps/openssl", f"CC={target['cc']} {cap.gcc_flag}"], quiet=True, cwd=src, env=cap.env)
    cap.finish("OpenSSL 3 `openssl` program: 57 objects + libapps.a, libssl.a, libcrypto.a, -g -O2 (openssl-src crate)"
               + (f", {target['machine']} ({target['cc']})" if target is not NATIVE else ""),
               run_args=["list", "-digest-algorithms"])


SHARED_CHECK = r'''#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    const char *names[] = {"SHA256", "SHA3-512", "BLAKE2b512", "SM3"};
    for (int i = 0; i < 4; i++) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int n = 0;
        EVP_Digest("rivet", 5, md, &n, EVP_get_digestbyname(names[i]), NULL);
        printf("%s ", names[i]);
        for (unsigned int j = 0; j < n; j++) printf("%02x", md[j]);
        printf("\n");
    }
    return 0;
}
'''


def job_shared_big(cache, tmp):
    """libcrypto.so of OpenSSL 3 (-g -O2): a -shared link of the library's ~800 objects (the whole of
    libcrypto.a, built position-independent); checked by a program that loads it and computes
    digests. (OpenSSL's own shared build needs scripts the openssl-src crate leaves out.)"""
    found = cargo_registry_source('openssl-src = "300"', "*/openssl-src-300.*/openssl")
    if not found:
        sys.exit("shared-big: OpenSSL's sources were not found after cargo fetch of openssl-src")
    src = Path(tmp) / "openssl"
    shutil.copytree(found[-1], src, symlinks=True)
    sh(["perl", "Configure", "linux-x86_64", "no-asm", "no-shared", "no-tests", "no-docs", "no-module", "-g", "-O2",
        "-fPIC"], quiet=True, cwd=src)
    sh(["make", f"-j{JOBS_CPU}", "build_generated"], quiet=True, cwd=src)
    sh(["make", f"-j{JOBS_CPU}", "libcrypto.a"], quiet=True, cwd=src)
    cap = Capture("shared-big", cache, tmp, match="libcrypto.so.3", build_root=src)
    sh(["gcc", cap.gcc_flag, "-shared", "-Wl,-soname,libcrypto.so.3", "-Wl,--whole-archive", "libcrypto.a",
        "-Wl,--no-whole-archive", "-pthread", "-ldl", "-o", "libcrypto.so.3"], cwd=src, env=cap.env)
    dest = cap.finish("OpenSSL 3 libcrypto.so.3: a -shared link of all of libcrypto.a, -g -O2 -fPIC (openssl-src crate)")
    # The check: a program linked against the library by its soname, run with the output in its
    # place (bench/run.py, `check` in job.json).
    (dest / "check.c").write_text(SHARED_CHECK)
    sh(["gcc", "-I", str(src / "include"), "check.c", "-o", "check", str(src / "libcrypto.so.3")], cwd=dest)
    meta = json.loads((dest / "job.json").read_text())
    meta["check"] = {"program": "check", "soname": "libcrypto.so.3"}
    (dest / "job.json").write_text(json.dumps(meta, indent=2) + "\n")


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


RUST_BIG_DEPS = """tokio = { version = "1", features = ["full"] }
axum = "0.7"
reqwest = { version = "0.12", default-features = false, features = ["json"] }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
clap = { version = "4", features = ["derive"] }
regex = "1"
tracing = "0.1"
tracing-subscriber = { version = "0.3", features = ["env-filter", "json"] }
chrono = "0.4"
uuid = { version = "1", features = ["v4"] }
rand = "0.8"
toml = "0.8"
image = { version = "0.25", default-features = false, features = ["png", "jpeg", "gif", "bmp", "tiff"] }
tera = "1"
tower-http = { version = "0.5", features = ["full"] }
pulldown-cmark = "0.12"
indicatif = "0.17"
ignore = "0.4"
rayon = "1"
csv = "1"
sha2 = "0.10"
aes = "0.8"
quick-xml = "0.36"
serde_yaml = "0.9"
petgraph = "0.6"
nom = "7"
dashmap = "6"
crossbeam = "0.8"
"""

RUST_BIG_MAIN = r'''use axum::{routing::get, Json, Router};
use clap::Parser;
use serde::{Deserialize, Serialize};
use sha2::Digest;

#[derive(Parser)]
struct Args {
    #[arg(default_value = "a1b22c333")]
    text: String,
}

#[derive(Serialize, Deserialize, Debug)]
struct Report {
    numbers: Vec<String>,
    html: String,
    digest: String,
    png_bytes: usize,
    yaml: String,
    csv: String,
    path_len: usize,
}

async fn report(text: String) -> Json<Report> {
    let re = regex::Regex::new(r"[0-9]+").unwrap();
    let numbers: Vec<String> = re.find_iter(&text).map(|m| m.as_str().to_string()).collect();
    let mut tera = tera::Tera::default();
    tera.add_raw_template("t", "{% for n in numbers %}<li>{{ n }}</li>{% endfor %}").unwrap();
    let mut cx = tera::Context::new();
    cx.insert("numbers", &numbers);
    let list = tera.render("t", &cx).unwrap();
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, pulldown_cmark::Parser::new(&format!("# {text}\n\n*numbers*")));
    html.push_str(&list);
    let digest = hex(&sha2::Sha256::digest(text.as_bytes()));
    let img = image::RgbImage::from_fn(16, 16, |x, y| image::Rgb([x as u8 * 16, y as u8 * 16, 128]));
    let mut png = std::io::Cursor::new(Vec::new());
    img.write_to(&mut png, image::ImageFormat::Png).unwrap();
    let back = image::load_from_memory(png.get_ref()).unwrap();
    assert_eq!(back.width(), 16);
    let yaml = serde_yaml::to_string(&numbers).unwrap();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&numbers).unwrap();
    let csv = String::from_utf8(w.into_inner().unwrap()).unwrap();
    let mut g = petgraph::Graph::<&str, u32>::new();
    let (a, b, c) = (g.add_node("a"), g.add_node("b"), g.add_node("c"));
    g.extend_with_edges([(a, b, 1), (b, c, 2), (a, c, 5)]);
    let path_len = petgraph::algo::dijkstra(&g, a, Some(c), |e| *e.weight())[&c] as usize;
    let total: u64 = rayon::prelude::ParallelIterator::sum(rayon::prelude::IntoParallelIterator::into_par_iter(
        numbers.iter().map(|n| n.parse::<u64>().unwrap()).collect::<Vec<_>>(),
    ));
    tracing::info!(total, "report");
    Json(Report { numbers, html, digest, png_bytes: png.get_ref().len(), yaml, csv, path_len })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::new("warn")).init();
    let args = Args::parse();
    let text = args.text.clone();
    let app = Router::new().route("/report", get(move || report(text.clone())));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let r: Report = reqwest::get(format!("http://{addr}/report")).await.unwrap().json().await.unwrap();
    let (id, stamp) = (uuid::Uuid::new_v4(), chrono::Utc::now());
    assert!(!id.is_nil() && stamp.timestamp() > 0);
    let key = aes::cipher::generic_array::GenericArray::from([0u8; 16]);
    let _cipher: aes::Aes128 = aes::cipher::KeyInit::new(&key);
    let dash = dashmap::DashMap::new();
    dash.insert("n", r.numbers.len());
    let parsed: nom::IResult<&str, &str> = nom::character::complete::digit1("123abc");
    let xml = quick_xml::escape::escape("<a>");
    let cfg: toml::Value = toml::from_str("x = 1").unwrap();
    println!("{}", serde_json::to_string(&r).unwrap());
    println!("{} {:?} {} {} {}", dash.get("n").map(|v| *v).unwrap(), parsed.unwrap().1, xml, cfg["x"], rand::random::<u8>() < 255 || true);
    let _ = (indicatif::ProgressBar::hidden(), ignore::WalkBuilder::new("."), crossbeam::channel::unbounded::<u8>());
}
'''


def job_rust_big(cache, tmp):
    proj = Path(tmp) / "rustbig"
    sh(["cargo", "new", "-q", "--vcs", "none", "--name", "rustbig", str(proj)])
    with open(proj / "Cargo.toml", "a") as f:
        f.write(RUST_BIG_DEPS)
    (proj / "src" / "main.rs").write_text(RUST_BIG_MAIN)
    cap = Capture("rust-big", cache, tmp, match="rustbig-*", build_root=proj)
    env = dict(cap.env, RUSTFLAGS=f"-C linker-features=-lld -C link-arg={cap.gcc_flag}",
               CARGO_TARGET_DIR=str(proj / "target"))
    sh(["cargo", "build", "-q", f"-j{JOBS_CPU}"], cwd=proj, env=env)
    crates = subprocess.run(["cargo", "tree", "--prefix", "none"], cwd=proj, check=True, capture_output=True,
                            text=True).stdout
    count = len({line.split()[0] for line in crates.splitlines() if line.strip()})
    cap.finish(f"Rust: {count} crates (tokio, axum, reqwest, tera, image, rayon, ...), debug build, dynamic PIE; "
               "serves a report over loopback to itself")


# cxx-templates ---------------------------------------------------------------------------------
CXXT_FILES = 32    # translation units
CXXT_TYPES = 10    # record types per unit, each put through the same standard templates


def cxxt_unit(i):
    """One translation unit: its own record types, each instantiated through containers,
    algorithms, smart pointers, std::function, std::variant and streams; the shared instances
    (std::string's, std::vector<int>'s) come again in every unit as COMDAT groups."""
    c = ["#include <algorithm>", "#include <functional>", "#include <map>", "#include <memory>",
         "#include <numeric>", "#include <set>", "#include <sstream>", "#include <string>",
         "#include <unordered_map>", "#include <variant>", "#include <vector>", "",
         f"namespace u{i} {{"]
    for t in range(CXXT_TYPES):
        c += [f"struct R{t} {{ int k; std::string name; double w; "
              f"bool operator<(const R{t} &o) const {{ return k < o.k; }} }};",
              f"template <class T> long fold{t}(const std::vector<T> &v) {{",
              f"    std::map<std::string, T> by_name; std::unordered_map<int, T> by_key; std::set<T> ordered;",
              "    for (const auto &x : v) { by_name.emplace(x.name, x); by_key.emplace(x.k, x); ordered.insert(x); }",
              "    std::vector<std::shared_ptr<T>> shared;",
              "    for (const auto &x : ordered) shared.push_back(std::make_shared<T>(x));",
              "    std::function<long(const T &)> f = [&](const T &x) { return x.k + (long)by_name.size(); };",
              "    std::variant<T, int, std::string> var = v.empty() ? std::variant<T, int, std::string>(0) : v[0];",
              "    std::ostringstream os; for (const auto &p : shared) os << p->name << ':' << p->w << ';';",
              "    long sum = std::accumulate(v.begin(), v.end(), 0L, [&](long a, const T &x) { return a + f(x); });",
              "    auto sorted = v; std::sort(sorted.begin(), sorted.end());",
              "    return sum + (long)os.str().size() + (long)by_key.size() + (long)var.index() + sorted.front().k;",
              "}"]
    c += ["long run() {", "    long total = 0;"]
    for t in range(CXXT_TYPES):
        c += [f"    {{ std::vector<R{t}> v; for (int j = 0; j < {t % 5 + 3}; j++) "
              f"v.push_back(R{t}{{{i} * 7 + j * {t + 1}, \"n\" + std::to_string(j), j * 0.5}}); total += fold{t}(v); }}"]
    c += ["    return total;", "}", "}", f"long run_{i}() {{ return u{i}::run(); }}"]
    return "\n".join(c) + "\n"


def job_cxx_templates(cache, tmp):
    src = Path(tmp) / "cxxt"
    src.mkdir()
    for i in range(CXXT_FILES):
        (src / f"t{i}.cpp").write_text(cxxt_unit(i))
    main = ["#include <cstdio>", *[f"long run_{i}();" for i in range(CXXT_FILES)], "int main() {", "    long total = 0;"]
    main += [f"    total += run_{i}();" for i in range(CXXT_FILES)]
    main += ['    std::printf("cxx-templates: %ld\\n", total);', "    return 0;", "}"]
    (src / "main.cpp").write_text("\n".join(main) + "\n")
    flags = ["-g1", "-O0", "-std=c++17"]
    print(f"+ g++ -c {' '.join(flags)} t0.cpp ... t{CXXT_FILES - 1}.cpp ({JOBS_CPU} at a time)", flush=True)
    parallel([["g++", "-c", *flags, f"t{i}.cpp", "-o", f"t{i}.o"] for i in range(CXXT_FILES)] +
             [["g++", "-c", *flags, "main.cpp", "-o", "main.o"]], src)
    groups = 0
    for i in range(CXXT_FILES):
        out = subprocess.run(["readelf", "-gW", f"t{i}.o"], cwd=src, capture_output=True, text=True).stdout
        groups += out.count("COMDAT group section")
    cap = Capture("cxx-templates", cache, tmp, build_root=src)
    sh(["g++", cap.gcc_flag, "main.o", *[f"t{i}.o" for i in range(CXXT_FILES)], "-o", "cxx-templates"], cwd=src,
       env=cap.env)
    cap.finish(f"generated C++: {CXXT_FILES} units of standard templates over their own types, -g1 -O0, "
               f"{groups} COMDAT groups in the inputs, dynamic PIE against libstdc++.so")


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


BUILDERS = {"c-hello": job_c_hello, "c-debug": job_c_debug, "a64-c-debug": lambda c, t: job_c_debug(c, t, AARCH64), "rust-debug": job_rust_debug, "cxx-big": job_cxx_big,
            "rust-big": job_rust_big, "cxx-templates": job_cxx_templates, "shared-big": job_shared_big}


def build(job, cache, force=False):
    if not force and (cache / "jobs" / job / "capture.json").exists():
        print(f"job {job}: cached in {cache / 'jobs' / job} (--force rebuilds)")
        return
    with tempfile.TemporaryDirectory(prefix=f"rivet-corpus-{job}-", dir=os.environ.get("RIVET_BENCH_TMP")) as tmp:
        if job.startswith("synth-") and job[6:].isdigit():
            job_synth(int(job[6:]), cache, tmp)
        elif job.startswith("a64-synth-") and job[10:].isdigit():
            job_synth(int(job[10:]), cache, tmp, AARCH64)
        elif job in BUILDERS:
            BUILDERS[job](cache, tmp)
        else:
            sys.exit(f"unknown job {job} (known: c-hello, synth-N, a64-synth-N, {', '.join(BUILDERS)})")


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
            print(f"{m['name']:<13} {m['input_bytes'] / 1e6:9.1f} MB {m.get('input_files', '?'):>6} files  "
                  f"{m.get('machine', 'x86_64'):<8} {m.get('mode', m['kind']):<10} {m['description']}")
        return
    for job in a.jobs.split(","):
        build(job, a.cache, a.force)


if __name__ == "__main__":
    main()
