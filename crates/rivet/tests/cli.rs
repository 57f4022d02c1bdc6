//! rivet's own promises on real links: both output modes and every thread count give the same
//! bytes, the timing report and the Chrome trace show the phases. They take a target
//! (`RIVET_TEST_TARGET=aarch64`: the cross gcc and binutils, programs run under qemu).
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles a small C++ program (exceptions, iostream, -g: many sections and relocations).
fn prepare(tmp: &TempDir) -> bool {
    if !have(&target_tool("g++")) {
        eprintln!("skipped: g++ missing");
        return false;
    }
    std::fs::write(
        tmp.join("p.cpp"),
        "#include <iostream>\n#include <stdexcept>\nint main(int c, char**) { try { if (c > 0) throw std::runtime_error(\"x\"); } catch (std::exception &e) { std::cout << e.what() << std::endl; } }\n",
    )
    .unwrap();
    must(Command::new(target_tool("g++")).current_dir(&tmp.path).args(["-c", "-g", "p.cpp"]));
    true
}

/// Links p.o statically through `g++ -B` with the linker under test; `extra` go to the linker.
fn link(tmp: &TempDir, out: &str, extra: &[&str]) -> (PathBuf, String) {
    let mut cmd = Command::new(target_tool("g++"));
    cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(tmp)).args(["-static", "p.o", "-o", out]);
    for e in extra {
        cmd.arg(format!("-Wl,{e}"));
    }
    let o = must(&mut cmd);
    (tmp.join(out), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn runs(exe: &Path) {
    let o = must(&mut target_run(exe));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "x\n");
}

#[test]
fn output_modes_and_thread_counts_give_identical_bytes() {
    if !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("cli-identical");
    if !prepare(&tmp) {
        return;
    }
    let (mmap, _) = link(&tmp, "mmap", &["--mmap-output-file"]);
    let (heap, _) = link(&tmp, "heap", &["--no-mmap-output-file"]);
    let (one, _) = link(&tmp, "one", &["--threads=1"]);
    let (no_prefetch, _) = link(&tmp, "noprefetch", &["--no-prefetch-inputs", "--no-mmap-output-file"]);
    let (prefetch, _) = link(&tmp, "prefetch", &["--prefetch-inputs", "--mmap-output-file"]);
    let reference = std::fs::read(&mmap).unwrap();
    for other in [&heap, &one, &no_prefetch, &prefetch] {
        assert!(std::fs::read(other).unwrap() == reference, "{} differs from {}", other.display(), mmap.display());
    }
    // Ten consecutive links, each identical to the first.
    for _ in 0..10 {
        let (again, _) = link(&tmp, "again", &[]);
        assert!(std::fs::read(&again).unwrap() == reference, "a repeated link gave different bytes");
    }
    runs(&mmap);
    runs(&heap);
    tmp.finish();
}

#[test]
fn timing_report_and_trace_show_the_phases() {
    if !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("cli-timing");
    if !prepare(&tmp) {
        return;
    }
    let trace = tmp.join("trace.json");
    let (exe, stderr) = link(&tmp, "timed", &["--print-timing", &format!("--time-trace={}", trace.display())]);
    runs(&exe);
    for phase in [
        "open inputs",
        "resolve symbols",
        "layout",
        "write",
        "commit",
        "total",
        "I/O",
        "output mode",
        "prefetch",
        "read from disk",
        "page faults",
    ] {
        assert!(stderr.contains(phase), "no '{phase}' in the timing report:\n{stderr}");
    }
    let json = std::fs::read_to_string(&trace).unwrap();
    assert!(json.starts_with("{\"traceEvents\":[") && json.trim_end().ends_with('}'), "{json}");
    assert!(json.contains("\"name\":\"resolve symbols\""), "{json}");
    assert!(json.contains("\"name\":\"open ") && json.contains("\"name\":\"parse "), "no per-file spans: {json}");
    tmp.finish();
}

#[test]
fn io_flags_change_the_reported_strategy() {
    if !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("cli-io");
    if !prepare(&tmp) {
        return;
    }
    let (_, heap) = link(&tmp, "heap", &["--no-mmap-output-file", "--no-prefetch-inputs", "--print-timing"]);
    assert!(heap.contains("output mode      heap (sequential write): --no-mmap-output-file"), "{heap}");
    assert!(heap.contains("prefetch         --no-prefetch-inputs"), "{heap}");
    // A small link with memory to spare: the allocator keeps what it frees (policy::choose_allocator).
    assert!(heap.contains("allocator        tuned for a short link"), "{heap}");
    let (_, mmap) = link(&tmp, "mmap", &["--mmap-output-file", "--prefetch-inputs", "--print-timing"]);
    assert!(mmap.contains("output mode      mmap: --mmap-output-file"), "{mmap}");
    assert!(mmap.contains("requests"), "{mmap}");
    tmp.finish();
}

#[test]
fn version_and_help() {
    let v = must(Command::new(linker()).arg("--version"));
    let text = String::from_utf8_lossy(&v.stdout);
    assert!(text.contains("compatible with GNU ld") || !testing_rivet(), "{text}");
    if testing_rivet() {
        let h = must(Command::new(linker()).arg("--help"));
        assert!(String::from_utf8_lossy(&h.stdout).contains("--no-mmap-output-file"));
    }
}

#[test]
fn unimplemented_options_are_refused() {
    if !testing_rivet() {
        return;
    }
    let out = Command::new(linker()).args(["-static", "--io-strategy=mmap", "x.o"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not supported yet"));
}

#[test]
fn build_id_styles() {
    if !testing_rivet() || !have(&target_tool("readelf")) {
        return;
    }
    let tmp = TempDir::new("cli-buildid");
    if !prepare(&tmp) {
        return;
    }
    let id_of = |out: &str, style: &str| -> Option<String> {
        let (exe, _) = link(&tmp, out, &[style]);
        runs(&exe);
        let notes = readelf(&["-n"], &exe);
        notes.lines().find_map(|l| l.trim().strip_prefix("Build ID: ").map(str::to_string))
    };
    let sha1 = id_of("sha1", "--build-id=sha1").unwrap();
    assert_eq!(sha1.len(), 40);
    assert_eq!(id_of("sha1b", "--build-id=sha1").unwrap(), sha1, "same input, same id");
    // Without a style: GNU ld's size, XXH3's digest (not the same id as sha1's).
    let default = id_of("default", "--build-id").unwrap();
    assert_eq!(default.len(), 40);
    assert_eq!(id_of("default2", "--build-id").unwrap(), default, "same input, same id");
    assert_ne!(default, sha1);
    assert_eq!(id_of("md5", "--build-id=md5").unwrap().len(), 32);
    let u1 = id_of("uuid1", "--build-id=uuid").unwrap();
    let u2 = id_of("uuid2", "--build-id=uuid").unwrap();
    assert_eq!(u1.len(), 32);
    assert_ne!(u1, u2, "uuids must differ");
    assert_eq!(id_of("hex", "--build-id=0xCAFE1234").unwrap(), "cafe1234");
    assert_eq!(id_of("none", "--build-id=none"), None);
    tmp.finish();
}

#[test]
fn program_headers() {
    if !testing_rivet() || !have(&target_tool("readelf")) {
        return;
    }
    let tmp = TempDir::new("cli-phdrs");
    if !prepare(&tmp) {
        return;
    }
    let segments = |out: &str, extra: &[&str]| -> String {
        let (exe, _) = link(&tmp, out, extra);
        runs(&exe);
        readelf(&["-lW"], &exe)
    };
    let default = segments("default", &[]);
    let stack = default.lines().find(|l| l.trim_start().starts_with("GNU_STACK")).unwrap();
    assert!(stack.contains("RW ") && !stack.contains("RWE"), "{stack}");
    assert!(default.contains("GNU_RELRO"), "{default}");
    assert!(default.contains(" TLS "), "{default}");
    // The code segment is R E and nothing else is executable (-z separate-code).
    let loads: Vec<&str> = default.lines().filter(|l| l.trim_start().starts_with("LOAD")).collect();
    assert_eq!(loads.iter().filter(|l| l.contains(" R E ")).count(), 1, "{default}");
    let norelro = segments("norelro", &["-z", "norelro"]);
    assert!(!norelro.contains("GNU_RELRO"), "{norelro}");
    let exec = segments("execstack", &["-z", "execstack"]);
    assert!(exec.lines().any(|l| l.trim_start().starts_with("GNU_STACK") && l.contains("RWE")), "{exec}");
    // On AArch64 the code is not kept apart by default (GNU ld's and lld's -z noseparate-code),
    // the read-only data is (lld's layout): --no-rosegment joins it to the code.
    let count = |t: &str| t.lines().filter(|l| l.trim_start().starts_with("LOAD")).count();
    if test_target() == "aarch64" {
        let joined = segments("norosegment", &["--no-rosegment"]);
        assert!(count(&joined) < loads.len(), "{joined}");
    } else {
        let joined = segments("noseparate", &["-z", "noseparate-code"]);
        assert!(count(&joined) < loads.len(), "{joined}");
    }
    tmp.finish();
}

/// readelf finds nothing to complain about in rivet's dynamic outputs (executables and a shared
/// library), and their dynamic sections carry what glibc's loader needs.
#[test]
fn readelf_accepts_dynamic_outputs() {
    if !testing_rivet() || !have(&target_tool("readelf")) || !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-readelf");
    std::fs::write(tmp.join("lib.c"), "__thread int t; int lib(void) { return ++t; }\n").unwrap();
    std::fs::write(
        tmp.join("main.c"),
        "#include <stdio.h>\nint lib(void);\nint main(void) { printf(\"%d\\n\", lib()); return 0; }\n",
    )
    .unwrap();
    let ldir = linker_dir(&tmp);
    let gcc =
        |args: &[&str]| must(Command::new(target_tool("gcc")).current_dir(&tmp.path).arg("-B").arg(&ldir).args(args));
    gcc(&["-shared", "-fPIC", "lib.c", "-o", "liblib.so"]);
    gcc(&["main.c", "-L.", "-llib", "-Wl,-rpath,$ORIGIN", "-o", "pie"]);
    gcc(&["-no-pie", "main.c", "-L.", "-llib", "-Wl,-rpath,$ORIGIN", "-o", "nopie"]);
    for f in ["liblib.so", "pie", "nopie"] {
        let out = must(Command::new(target_tool("readelf")).args(["-a", "-W", "-V", "--dyn-syms"]).arg(tmp.join(f)));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.trim().is_empty(), "readelf complains about {f}:\n{stderr}");
        let text = String::from_utf8_lossy(&out.stdout);
        for needed in ["(NEEDED)", "(STRTAB)", "(SYMTAB)", "(GNU_HASH)", "(VERNEED)"] {
            assert!(text.contains(needed), "{f} lacks {needed}");
        }
        if f != "liblib.so" {
            let interp = match test_target().as_str() {
                "aarch64" => "/lib/ld-linux-aarch64.so.1",
                _ => "/lib64/ld-linux-x86-64.so.2",
            };
            assert!(text.contains(&format!("Requesting program interpreter: {interp}")), "{f}: no PT_INTERP");
            let o = must(&mut target_run(&tmp.join(f)));
            assert_eq!(String::from_utf8_lossy(&o.stdout), "1\n");
        }
    }
    tmp.finish();
}

/// `--reproduce` writes a tarball that replays the link with rivet and with GNU ld.
#[test]
fn reproduce_tarball_replays() {
    if !testing_rivet() || !have("tar") || !have(&target_tool("ld.bfd")) {
        return;
    }
    let tmp = TempDir::new("cli-reproduce");
    if !prepare(&tmp) {
        return;
    }
    let tar = tmp.join("job.tar");
    let (exe, _) = link(&tmp, "orig", &[&format!("--reproduce={}", tar.display())]);
    runs(&exe);
    must(Command::new("tar").arg("xf").arg(&tar).current_dir(&tmp.path));
    let job = tmp.join("job");
    let response = std::fs::read_to_string(job.join("response.txt")).unwrap();
    assert!(!response.contains("--reproduce") && !response.contains("-plugin"), "{response}");
    must(Command::new(linker()).arg("@response.txt").current_dir(&job));
    runs(&job.join("orig"));
    must(Command::new(target_tool("ld.bfd")).args(["@response.txt", "-o", "by-bfd"]).current_dir(&job));
    runs(&job.join("by-bfd"));
    for lld in ["ld.lld-19", "ld.lld"] {
        if have(lld) {
            must(Command::new(lld).args(["@response.txt", "-o", "by-lld"]).current_dir(&job));
            runs(&job.join("by-lld"));
            break;
        }
    }
    tmp.finish();
}

/// Every copy method in both output modes gives the same bytes (build-id included) as memcpy, and
/// the in-kernel methods really copy: 40 objects with a 1 MB relocation-free blob each make a 40 MB
/// output, so write-behind windows hold whole kernel-copied sections too.
#[test]
fn copy_methods_give_identical_bytes() {
    if !testing_rivet() || !have(&target_tool("gcc")) || !have(&target_tool("as")) {
        return;
    }
    let tmp = TempDir::new("cli-copy");
    let mut state = 0x2545F4914F6CDD1Du64;
    let random: Vec<u8> = (0..1_100_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    std::fs::write(tmp.join("random.bin"), &random).unwrap();
    let mut objs = Vec::new();
    for i in 0..40 {
        let s = tmp.join(&format!("blob{i}.s"));
        std::fs::write(
            &s,
            format!(
                ".section .rodata.blob{i},\"a\"\n.globl blob{i}\nblob{i}:\n.incbin \"random.bin\", {}, 1000000\n",
                i * 1000
            ),
        )
        .unwrap();
        must(Command::new(target_tool("as")).current_dir(&tmp.path).arg(&s).arg("-o").arg(format!("blob{i}.o")));
        objs.push(format!("blob{i}.o"));
    }
    std::fs::write(
        tmp.join("main.c"),
        "#include <stdio.h>\nextern const unsigned char blob0[], blob39[];\n\
         int main(void) { unsigned s = 0; for (int i = 0; i < 1000000; i++) s = s * 31 + blob0[i] + blob39[i]; printf(\"%u\\n\", s); return 0; }\n",
    )
    .unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "-g", "main.c"]));
    let expected: u32 =
        (0..1_000_000).fold(0u32, |s, i| s.wrapping_mul(31).wrapping_add(random[i] as u32 + random[39_000 + i] as u32));
    let mut reference: Option<Vec<u8>> = None;
    for method in ["memcpy", "copy-file-range", "sendfile"] {
        for mode in ["--mmap-output-file", "--no-mmap-output-file"] {
            let out = format!("out-{method}{mode}");
            let mut cmd = Command::new(target_tool("gcc"));
            cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(&tmp)).arg("main.o").args(&objs).args(["-o", &out]);
            cmd.args([
                "-Wl,--build-id=sha1",
                "-Wl,--print-timing",
                &format!("-Wl,--copy-method={method}"),
                &format!("-Wl,{mode}"),
            ]);
            let o = must(&mut cmd);
            let report = String::from_utf8_lossy(&o.stderr);
            assert!(report.contains(&format!("copy method      {method}")), "{report}");
            if method != "memcpy" {
                // 38.1 MiB of blobs; write-behind copies the ones in the windows written last itself.
                let mib: f64 = report
                    .split(" MiB copied in the kernel")
                    .next()
                    .and_then(|s| s.rsplit(' ').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("no kernel copy line: {report}"));
                assert!(mib > 35.0, "{method} {mode}: only {mib} MiB copied in the kernel\n{report}");
            }
            let bytes = std::fs::read(tmp.join(&out)).unwrap();
            match &reference {
                None => reference = Some(bytes),
                Some(r) => assert!(*r == bytes, "{out} differs from the memcpy output"),
            }
            let run = must(&mut target_run(&tmp.join(&out)));
            assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), expected.to_string());
            std::fs::remove_file(tmp.join(&out)).unwrap();
        }
    }
    tmp.finish();
}

/// String merging is on by default (the same literal in two files is one copy, --stats counts what
/// was merged away), `-O0` turns it off, and `-O2` adds tail merging (a literal that ends another
/// is found inside it), as in lld.
#[test]
fn string_merging_and_o0() {
    if !testing_rivet() || !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-merge");
    std::fs::write(
        tmp.join("a.c"),
        "#include <stdio.h>\nconst char *b(void);\nconst char *a(void) { return \"the same literal\"; }\n\
         const char *c(void);\n\
         int main(void) { printf(\"%d %d %s|%s\\n\", a() == b(), c() == a() + 9, a(), c()); return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        tmp.join("b.c"),
        "const char *b(void) { return \"the same literal\"; }\nconst char *c(void) { return \"literal\"; }\n",
    )
    .unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "-g", "-O1", "a.c", "b.c"]));
    let build = |out: &str, extra: &[&str]| {
        let mut cmd = Command::new(target_tool("gcc"));
        cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(&tmp)).args(["a.o", "b.o", "-o", out]).args(extra);
        let o = must(&mut cmd);
        let run = must(&mut target_run(&tmp.join(out)));
        let size = std::fs::metadata(tmp.join(out)).unwrap().len();
        (String::from_utf8_lossy(&run.stdout).into_owned(), size, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (merged, merged_size, stats) = build("merged", &["-Wl,--stats"]);
    let (plain, plain_size, _) = build("plain", &["-Wl,-O0"]);
    let (tail, tail_size, _) = build("tail", &["-Wl,-O2"]);
    assert_eq!(merged, "1 0 the same literal|literal\n", "identical literals from two files should be one copy");
    assert_eq!(plain, "0 0 the same literal|literal\n", "-O0 should keep every copy");
    // gcc for AArch64 aligns string literals to 8 (`.rodata.str1.8`): no tail starts inside another.
    let inside = if test_target() == "aarch64" { 0 } else { 1 };
    assert_eq!(tail, format!("1 {inside} the same literal|literal\n"), "-O2: \"literal\" at the end of the other");
    assert!(merged_size < plain_size, "merged {merged_size} bytes, unmerged {plain_size}");
    assert!(tail_size <= merged_size, "tail-merged {tail_size} bytes, merged {merged_size}");
    let saved: u64 = stats
        .lines()
        .find_map(|l| l.trim().strip_prefix("bytes merged away: "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no merge statistics: {stats}"));
    assert!(saved >= "the same literal".len() as u64, "{stats}");
    tmp.finish();
}

/// `--gc-sections` drops what nothing reaches (here a large unused function and table from a
/// section per function and object): the output is smaller and runs the same; `--print-gc-sections`
/// names what went.
#[test]
fn gc_sections_shrinks_the_output() {
    if !testing_rivet() || !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-gc");
    let mut src =
        String::from("#include <stdio.h>\nint used(int x) { return x * 3; }\nlong unused_table[4096] = {1};\n");
    src.push_str("long unused_fn(long x) {\n");
    for i in 0..400 {
        src.push_str(&format!("  x = x * {} + unused_table[{i}];\n", i + 7));
    }
    src.push_str("  return x;\n}\nint main(void) { printf(\"%d\\n\", used(14)); return 0; }\n");
    std::fs::write(tmp.join("g.c"), src).unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args([
        "-c",
        "-O1",
        "-ffunction-sections",
        "-fdata-sections",
        "g.c",
    ]));
    let build = |out: &str, extra: &[&str]| {
        let mut cmd = Command::new(target_tool("gcc"));
        cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(&tmp)).args(["g.o", "-o", out]).args(extra);
        let o = must(&mut cmd);
        let run = String::from_utf8_lossy(&must(&mut target_run(&tmp.join(out))).stdout).into_owned();
        (run, std::fs::metadata(tmp.join(out)).unwrap().len(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (kept_run, kept_size, _) = build("kept", &[]);
    let (gc_run, gc_size, printed) = build("gc", &["-Wl,--gc-sections", "-Wl,--print-gc-sections"]);
    assert_eq!((kept_run.as_str(), gc_run.as_str()), ("42\n", "42\n"));
    assert!(gc_size + 32768 < kept_size, "--gc-sections {gc_size} bytes, without {kept_size}");
    for name in [".text.unused_fn", ".data.unused_table"] {
        assert!(printed.contains(&format!("removing unused section '{name}'")), "{printed}");
    }
    tmp.finish();
}

/// `--icf=all` folds identical template instantiations (the output is smaller and behaves the same,
/// except that distinct functions may share an address); `--icf=safe` keeps address-taken
/// functions distinct.
#[test]
fn identical_code_folding() {
    if !testing_rivet() || !have(&target_tool("g++")) {
        return;
    }
    let tmp = TempDir::new("cli-icf");
    let mut src = String::from(
        "#include <cstdio>\ntemplate <int N> struct W { int v; };\n\
         template <class T> __attribute__((noinline)) long churn(T *p, int n) {\n\
           long s = 0; for (int i = 0; i < n; i++) { s = s * 31 + p[i].v; if (s % 7 == 3) s ^= i; s += (s >> 3) * (i | 1); }\n\
           return s; }\n\
         __attribute__((noinline)) int twin_a(int x) { return x * 5 + 1; }\n\
         __attribute__((noinline)) int twin_b(int x) { return x * 5 + 1; }\n\
         int (*volatile pa)(int) = twin_a;\nint (*volatile pb)(int) = twin_b;\nint main() {\n  long t = 0;\n",
    );
    for i in 0..150 {
        src.push_str(&format!("  {{ W<{i}> w[4] = {{{{1}}, {{2}}, {{{i}}}, {{4}}}}; t += churn(w, 4); }}\n"));
    }
    src.push_str("  std::printf(\"%ld %d\\n\", t, twin_a(2) + twin_b(3));\n  std::printf(\"same address: %d\\n\", pa == pb);\n  return 0;\n}\n");
    std::fs::write(tmp.join("t.cpp"), src).unwrap();
    must(Command::new(target_tool("g++")).current_dir(&tmp.path).args(["-c", "-O2", "-ffunction-sections", "t.cpp"]));
    let build = |mode: &str| {
        let out = format!("t-{mode}");
        let mut cmd = Command::new(target_tool("g++"));
        cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(&tmp)).args(["t.o", "-o", &out]);
        cmd.arg(format!("-Wl,--icf={mode}")).arg("-Wl,--stats");
        let o = must(&mut cmd);
        let stats = String::from_utf8_lossy(&o.stderr).into_owned();
        let folded: u64 = stats
            .lines()
            .find_map(|l| l.trim().strip_prefix("sections folded (ICF): "))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no ICF statistics: {stats}"));
        let run = String::from_utf8_lossy(&must(&mut target_run(&tmp.join(&out))).stdout).into_owned();
        (folded, std::fs::metadata(tmp.join(&out)).unwrap().len(), run)
    };
    let (none_folded, none_size, none_run) = build("none");
    let (safe_folded, _, safe_run) = build("safe");
    let (all_folded, all_size, all_run) = build("all");
    assert_eq!(none_folded, 0);
    assert!(safe_folded >= 149, "the 150 identical instantiations should fold: {safe_folded}");
    assert_eq!(all_folded, safe_folded + 1, "all also folds the address-taken twins");
    assert!(all_size < none_size, "--icf=all {all_size} bytes, none {none_size}");
    let first_line = |s: &str| s.lines().next().unwrap_or_default().to_string();
    assert_eq!(first_line(&all_run), first_line(&none_run));
    assert_eq!(first_line(&safe_run), first_line(&none_run));
    assert!(none_run.ends_with("same address: 0\n") && safe_run.ends_with("same address: 0\n"), "{safe_run}");
    assert!(all_run.ends_with("same address: 1\n"), "{all_run}");
    tmp.finish();
}

/// Links `inputs` (in `tmp`) with `driver -B` and the linker under test, `--icf=all
/// --print-icf-sections` and `extra`; returns what was printed on stderr.
fn icf_link(tmp: &TempDir, driver: &str, inputs: &[&str], out: &str, extra: &[&str]) -> String {
    let mut cmd = Command::new(target_tool(driver));
    cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(tmp)).args(inputs).args(["-o", out]);
    cmd.args(["-Wl,--icf=all", "-Wl,--print-icf-sections"]).args(extra);
    String::from_utf8_lossy(&must(&mut cmd).stderr).into_owned()
}

/// Functions with the same code fold only when their exception tables (LSDAs, reached through
/// their FDEs) are alike too, and alike tables fold as well; `--print-icf-sections` names each
/// class in lld's words.
#[test]
fn icf_compares_exception_tables() {
    if !testing_rivet() || !have(&target_tool("g++")) {
        return;
    }
    let tmp = TempDir::new("cli-icf-lsda");
    std::fs::write(
        tmp.join("e.cpp"),
        "#include <cstdio>\nstruct A {};\nstruct B {};\nint which;\n\
         __attribute__((noinline)) void g() { if (which == 1) throw B(); if (which == 2) throw A(); }\n\
         __attribute__((noinline)) void catch_a() { try { g(); } catch (A &) { std::puts(\"caught\"); } }\n\
         __attribute__((noinline)) void catch_b() { try { g(); } catch (B &) { std::puts(\"caught\"); } }\n\
         __attribute__((noinline)) void catch_a_too() { try { g(); } catch (A &) { std::puts(\"caught\"); } }\n\
         int main() { which = 1; catch_b(); which = 2; catch_a(); catch_a_too(); std::puts(\"OK\"); }\n",
    )
    .unwrap();
    must(Command::new(target_tool("g++")).current_dir(&tmp.path).args(["-c", "-O2", "-ffunction-sections", "e.cpp"]));
    let printed = icf_link(&tmp, "g++", &["e.o"], "e", &[]);
    let run = must(&mut target_run(&tmp.join("e")));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "caught\ncaught\ncaught\nOK\n");
    for sec in [".text._Z7catch_av", ".gcc_except_table._Z7catch_av"] {
        let twin = sec.replace("_Z7catch_av", "_Z11catch_a_toov");
        let want = format!("selected section e.o:({sec})\n  removing identical section e.o:({twin})\n");
        assert!(printed.contains(&want), "want\n{want}in\n{printed}");
    }
    assert!(!printed.contains("catch_b"), "{printed}");
    tmp.finish();
}

/// Unwind records are compared through their CIEs: functions whose personality routines differ
/// stay apart. The copy kept gets the strictest alignment of the sections folded into it.
#[test]
fn icf_compares_personalities_and_keeps_the_strictest_alignment() {
    if x86_only("its functions are x86-64 assembly") {
        return;
    }
    if !testing_rivet() || !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-icf-asm");
    let mut asm = String::from(".text\n.globl pers1, pers2\npers1: ret\npers2: ret\n");
    // fn4 is there to take the padding that ends .eh_frame, which no other FDE would match.
    for (f, pers, body) in
        [("fn1", "pers1", "ret"), ("fn2", "pers2", "ret"), ("fn3", "pers1", "ret"), ("fn4", "pers2", "nop; ret")]
    {
        asm.push_str(&format!(
            ".section .text.{f},\"ax\",@progbits\n.globl {f}\n{f}:\n.cfi_startproc\n.cfi_personality 0x1b, {pers}\n{body}\n.cfi_endproc\n"
        ));
    }
    // Without unwind records; `odd` is placed one byte past a 64-byte boundary if nothing aligns it.
    asm.push_str(".section .text.pad,\"ax\",@progbits\n.p2align 6\npad: nop\n");
    asm.push_str(".section .text.odd,\"ax\",@progbits\n.globl odd\n.p2align 0\nodd: xor %eax, %eax; ret\n");
    asm.push_str(".section .text.even,\"ax\",@progbits\n.globl even\n.p2align 6\neven: xor %eax, %eax; ret\n");
    std::fs::write(tmp.join("f.s"), asm).unwrap();
    std::fs::write(
        tmp.join("m.c"),
        "#include <stdio.h>\nextern char fn1, fn2, fn3, odd, even;\n\
         int main(void) { long a = (long)&fn1, b = (long)&fn2, c = (long)&fn3, o = (long)&odd, e = (long)&even;\n\
           printf(\"%d %d %d %d\\n\", a == b, a == c, o == e, (int)(o % 64)); }\n",
    )
    .unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "f.s", "m.c"]));
    let printed = icf_link(&tmp, "gcc", &["m.o", "f.o"], "p", &[]);
    let run = must(&mut target_run(&tmp.join("p")));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "0 1 1 0\n", "{printed}");
    assert!(printed.contains("selected section f.o:(.text.fn1)\n  removing identical section f.o:(.text.fn3)\n"));
    assert!(printed.contains("selected section f.o:(.text.odd)\n  removing identical section f.o:(.text.even)\n"));
    tmp.finish();
}

/// In a shared library, a call to a preemptible symbol and a call to a hidden alias of it are
/// different (the first may reach another library's definition): the callers stay apart, unless
/// `-Bsymbolic` binds the symbol inside the library.
#[test]
fn icf_compares_preemptible_targets_by_symbol() {
    if x86_only("its functions are x86-64 assembly") {
        return;
    }
    if !testing_rivet() || !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-icf-preempt");
    std::fs::write(
        tmp.join("p.s"),
        ".section .text.target,\"ax\",@progbits\n.globl target, target_local\n.hidden target_local\n\
         target:\ntarget_local:\nret\n\
         .section .text.call_preemptible,\"ax\",@progbits\ncall_preemptible: jmp target@PLT\n\
         .section .text.call_local,\"ax\",@progbits\ncall_local: jmp target_local@PLT\n",
    )
    .unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "p.s"]));
    let printed = icf_link(&tmp, "gcc", &["p.o"], "libp.so", &["-shared", "-nostdlib"]);
    assert!(!printed.contains("call_"), "{printed}");
    let printed = icf_link(&tmp, "gcc", &["p.o"], "libq.so", &["-shared", "-nostdlib", "-Wl,-Bsymbolic"]);
    let want = "selected section p.o:(.text.call_preemptible)\n  removing identical section p.o:(.text.call_local)\n";
    assert!(printed.contains(want), "{printed}");
    tmp.finish();
}

/// `-Map=FILE` writes the link map: output sections, their input sections and the symbols defined
/// there, at the addresses the output really has (checked against nm).
#[test]
fn link_map() {
    if !testing_rivet() || !have(&target_tool("gcc")) || !have(&target_tool("nm")) {
        return;
    }
    let tmp = TempDir::new("cli-map");
    std::fs::write(tmp.join("m.c"), "int counter = 3;\nint main(void) { return counter - 3; }\n").unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "m.c"]));
    let mut cmd = Command::new(target_tool("gcc"));
    cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(&tmp)).args(["m.o", "-o", "m", "-Wl,-Map=m.map"]);
    must(&mut cmd);
    let map = std::fs::read_to_string(tmp.join("m.map")).unwrap();
    let nm = String::from_utf8_lossy(&must(Command::new(target_tool("nm")).arg(tmp.join("m"))).stdout).into_owned();
    for sym in ["main", "counter"] {
        let addr = nm
            .lines()
            .find_map(|l| l.strip_suffix(&format!(" {sym}")).and_then(|l| l.split_whitespace().next()))
            .map(|a| u64::from_str_radix(a, 16).unwrap())
            .unwrap_or_else(|| panic!("{sym} not in nm output"));
        let line = map
            .lines()
            .find(|l| l.split_whitespace().last() == Some(sym))
            .unwrap_or_else(|| panic!("{sym} not in map:\n{map}"));
        assert_eq!(u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).unwrap(), addr, "{line}");
    }
    assert!(map.lines().any(|l| l.ends_with(" .text")), "{map}");
    assert!(map.contains("m.o:(.text)") && map.contains("m.o:(.data)"), "{map}");
    tmp.finish();
}

/// `-x` drops every local symbol from .symtab, `-X` (the default) only `.L` temporaries, and
/// `--discard-none` keeps those too, as GNU ld does.
#[test]
fn discarding_local_symbols() {
    if !testing_rivet() || !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-discard");
    std::fs::write(
        tmp.join("d.c"),
        "#include <stdio.h>\n__attribute__((noinline)) static int helper(int x) { return x + 1; }\n\
         __attribute__((noinline)) const char *s(void) { return \"lit\"; }\n\
         int main(void) { printf(\"%d %s\\n\", helper(1), s()); return 0; }\n",
    )
    .unwrap();
    // At -O1 the literal goes to .rodata.str1.1 and GNU as keeps its .LC0 label as a symbol.
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "-O1", "d.c"]));
    let locals = |flag: &str| -> Vec<String> {
        let mut cmd = Command::new(target_tool("gcc"));
        cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(&tmp)).args(["d.o", "-o", "d"]);
        if !flag.is_empty() {
            cmd.arg(format!("-Wl,{flag}"));
        }
        must(&mut cmd);
        let out = readelf(&["-sW"], &tmp.join("d"));
        out.lines()
            .filter(|l| l.contains(" LOCAL "))
            .filter_map(|l| l.split_whitespace().nth(7).map(String::from))
            .collect()
    };
    let default = locals("");
    assert!(default.iter().any(|n| n == "helper"), "{default:?}");
    assert!(!default.iter().any(|n| n.starts_with(".L")), "{default:?}");
    assert_eq!(locals("-X"), default);
    let all = locals("-x");
    assert!(!all.iter().any(|n| n == "helper" || n == "d.c"), "{all:?}");
    let none = locals("--discard-none");
    // Where the assembler kept the literal's `.L` label as a symbol (GNU as for x86-64; for
    // AArch64 it refers to the section instead), --discard-none keeps it.
    let in_object = readelf(&["-sW"], &tmp.join("d.o"))
        .lines()
        .any(|l| l.split_whitespace().nth(7).is_some_and(|n| n.starts_with(".L")));
    assert_eq!(none.iter().any(|n| n.starts_with(".L")), in_object, "{none:?}");
    tmp.finish();
}

/// `--color-diagnostics`: `always` (or the bare flag) colours the message kind as lld does,
/// `never` and the default on a pipe (auto) do not.
#[test]
fn color_diagnostics() {
    if !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("cli-color");
    let stderr_of = |flags: &[&str]| {
        let out = Command::new(linker())
            .current_dir(&tmp.path)
            .args(flags)
            .args(["missing.o", "-o", "out"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let red = "rivet: \x1b[0;1;31merror: \x1b[0m";
    for flags in [&["--color-diagnostics"][..], &["--color-diagnostics=always"]] {
        let e = stderr_of(flags);
        assert!(e.starts_with(red) && e.contains("missing.o"), "{flags:?}: {e:?}");
    }
    for flags in [&[][..], &["--color-diagnostics=never"], &["--color-diagnostics=auto"], &["--no-color-diagnostics"]] {
        let e = stderr_of(flags);
        assert!(e.starts_with("rivet: error: ") && !e.contains('\x1b'), "{flags:?}: {e:?}");
    }
    assert!(stderr_of(&["--color-diagnostics=sometimes"]).contains("sometimes"));
    tmp.finish();
}

/// Debug info that refers to sections not in the output (a COMDAT copy another object provides, a
/// function `--gc-sections` removed) gets lld's tombstones: 1 in `.debug_ranges` (0 would end the
/// list), 0 elsewhere. The names it refers to (merged `.debug_str` pieces) are GNU ld's.
#[test]
fn debug_info_tombstones() {
    if !testing_rivet() || !have(&target_tool("g++")) || !have(&target_tool("readelf")) {
        return;
    }
    let tmp = TempDir::new("cli-tomb");
    std::fs::write(
        tmp.join("a.cpp"),
        "inline int twice(int x) { return 2 * x; }\nint from_a(int x) { return twice(x) + 1; }\n",
    )
    .unwrap();
    std::fs::write(
        tmp.join("b.cpp"),
        "inline int twice(int x) { return 2 * x; }\nint from_a(int);\nint unused_b(int x) { return x * 7; }\n\
         int main(int c, char**) { return twice(c) + from_a(c) - 7; }\n",
    )
    .unwrap();
    must(Command::new(target_tool("g++")).current_dir(&tmp.path).args([
        "-c",
        "-g",
        "-O0",
        "-gdwarf-4",
        "-ffunction-sections",
        "a.cpp",
        "b.cpp",
    ]));
    let build = |out: &str, via: Option<PathBuf>| {
        let mut cmd = Command::new(target_tool("g++"));
        cmd.current_dir(&tmp.path);
        if let Some(dir) = via {
            cmd.arg("-B").arg(dir);
        }
        must(cmd.args(["a.o", "b.o", "-o", out, "-Wl,--gc-sections"]));
        let dump = |what: &str| {
            let o = must(Command::new(target_tool("readelf")).arg(format!("--debug-dump={what}")).arg(tmp.join(out)));
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        let mut names: Vec<String> = dump("info")
            .lines()
            .filter(|l| l.contains("DW_AT_name"))
            .map(|l| l.rsplit(": ").next().unwrap().to_string())
            .collect();
        names.sort();
        (names, dump("Ranges"))
    };
    let (ld_names, _) = build("by-ld", None);
    let (names, ranges) = build("by-rivet", Some(linker_dir(&tmp)));
    assert!(names.iter().any(|n| n.contains("unused_b")), "{names:?}");
    assert_eq!(names, ld_names);
    // b.o's CU: its copy of `twice` (dropped: a.o's is kept) and `unused_b` (collected) are
    // tombstones, `main` is a real range.
    let b_cu: Vec<&str> = ranges.lines().filter(|l| l.trim_start().starts_with("00000030")).collect();
    let tombstones = b_cu.iter().filter(|l| l.contains("0000000000000001 0000000000000001")).count();
    assert_eq!((b_cu.len(), tombstones), (4, 2), "{ranges}");
    tmp.finish();
}

/// `-o -` writes the output to standard output (build systems pipe it), byte for byte what a
/// file output holds, and creates no file named `-`.
#[test]
fn output_to_stdout() {
    if !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("cli-stdout");
    if !prepare(&tmp) {
        return;
    }
    let (file, _) = link(&tmp, "file", &[]);
    let mut cmd = Command::new(target_tool("g++"));
    cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(&tmp)).args(["-static", "p.o", "-o", "-"]);
    let out = must(&mut cmd);
    assert!(out.stdout == std::fs::read(&file).unwrap(), "stdout differs from the file output");
    assert!(!tmp.join("-").exists(), "a file named '-' was created");
    tmp.finish();
}

/// A fixed-address executable with no shared library, nothing exported and no interpreter named
/// is static, as GNU ld makes it: no interpreter, no dynamic section or symbols. Naming one
/// (`-dynamic-linker`, as compiler drivers do) keeps it dynamic: lld and mold write the `.interp`
/// asked for; rivet gives it the dynamic section the loader needs to run it, which theirs lack.
#[test]
fn executable_without_shared_libraries_is_static() {
    if x86_only("its program is x86-64 assembly") {
        return;
    }
    if !have(&target_tool("gcc")) || !have(&target_tool("readelf")) {
        return;
    }
    let tmp = TempDir::new("cli-nostdlib");
    std::fs::write(tmp.join("a.s"), ".globl _start\n_start:\n mov $60, %eax\n mov $7, %edi\n syscall\n").unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "a.s", "-o", "a.o"]));
    let interp = ["-dynamic-linker", "/lib64/ld-linux-x86-64.so.2"];
    for (name, ld, args) in
        [("gnu", PathBuf::from("ld"), &[][..]), ("ours", linker(), &[][..]), ("ours-interp", linker(), &interp[..])]
    {
        let exe = tmp.join(name);
        must(Command::new(&ld).current_dir(&tmp.path).args(args).arg("-o").arg(&exe).arg("a.o"));
        let sections = String::from_utf8_lossy(&must(Command::new(target_tool("readelf")).arg("-SW").arg(&exe)).stdout)
            .into_owned();
        for s in [" .interp ", " .dynamic ", " .dynsym ", " .dynstr "] {
            let dynamic = !args.is_empty();
            assert_eq!(sections.contains(s), dynamic, "{name}: {s} (dynamic: {dynamic}):\n{sections}");
        }
        assert_eq!(target_run(&exe).status().unwrap().code(), Some(7), "{name}");
    }
    tmp.finish();
}

/// Compiles each (file, C source) in `tmp` with `gcc -c` and `cflags`.
fn compile_all(tmp: &TempDir, sources: &[(&str, &str)], cflags: &[&str]) {
    for (file, text) in sources {
        std::fs::write(tmp.join(file), text).unwrap();
        must(Command::new(target_tool("gcc")).current_dir(&tmp.path).arg("-c").args(cflags).arg(file));
    }
}

/// Runs `ld` (the linker under test or a reference) in `tmp` with `args`; its output.
fn run_ld(tmp: &TempDir, ld: &Path, args: &[&str]) -> std::process::Output {
    Command::new(ld).current_dir(&tmp.path).args(args).output().unwrap()
}

/// The names of the defined global symbols of `file` (nm), sorted.
fn defined_globals(file: &Path) -> Vec<String> {
    let out = must(Command::new(target_tool("nm")).arg("-g").arg("--defined-only").arg(file));
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(String::from)
        .collect();
    names.sort();
    names
}

const LLD: &str = "ld.lld-19";

/// `--trace` prints what lld prints, on stdout: objects, the archive members that were loaded as
/// `archive(member)` (thin archives too), shared libraries; not the archives themselves.
#[test]
fn trace_prints_inputs_as_lld() {
    if !testing_rivet() || !have(&target_tool("gcc")) || !have(LLD) {
        return;
    }
    let tmp = TempDir::new("cli-trace");
    compile_all(
        &tmp,
        &[
            ("long-long-long-filename.c", "int three(void) { return 3; }\n"),
            ("b.c", "int five(void) { return 5; }\n"),
            ("unused.c", "int unused(void) { return 0; }\n"),
            ("c.c", "int three(void); int five(void);\nint _start(void) { return three() + five(); }\n"),
            ("lib.c", "int lib(void) { return 1; }\n"),
        ],
        &["-fPIC"],
    );
    must(Command::new(target_tool("ar")).current_dir(&tmp.path).args([
        "rcs",
        "d.a",
        "long-long-long-filename.o",
        "b.o",
        "unused.o",
    ]));
    must(Command::new(target_tool("ar")).current_dir(&tmp.path).args([
        "rcsT",
        "thin.a",
        "long-long-long-filename.o",
        "b.o",
    ]));
    must(Command::new(LLD).current_dir(&tmp.path).args(["-shared", "-o", "lib.so", "lib.o"]));
    for archive in ["d.a", "thin.a"] {
        let args = ["-t", "-o", "out", "c.o", archive, "lib.so"];
        let ours = run_ld(&tmp, &linker(), &args);
        let lld = run_ld(&tmp, Path::new(LLD), &args);
        assert!(ours.status.success() && lld.status.success(), "{}", String::from_utf8_lossy(&ours.stderr));
        assert_eq!(String::from_utf8_lossy(&ours.stdout), String::from_utf8_lossy(&lld.stdout), "{archive}");
        assert!(String::from_utf8_lossy(&ours.stdout).contains(&format!("{archive}(b.o)")));
    }
    tmp.finish();
}

/// `--start-lib`/`--end-lib` objects are loaded only for a symbol that is needed, and
/// `--undefined-glob` loads the archive members (and such objects) defining matching symbols,
/// wherever the archive stands: the symbols each output defines are lld's.
#[test]
fn start_lib_and_undefined_glob_load_what_lld_loads() {
    if !have(&target_tool("gcc")) || !have(LLD) || !have(&target_tool("nm")) {
        return;
    }
    let tmp = TempDir::new("cli-lazy");
    compile_all(
        &tmp,
        &[
            ("foo.c", "int foo = 1;\n"),
            ("foobar.c", "int foobar = 1;\n"),
            ("baz.c", "int baz = 1;\n"),
            ("uses_baz.c", "extern int baz; int get_baz(void) { return baz; }\n"),
            ("main.c", "int get_baz(void);\nint _start(void) { return 0; }\nint call(void) { return get_baz(); }\n"),
            ("plain.c", "int _start(void) { return 0; }\n"),
        ],
        &[],
    );
    must(Command::new(target_tool("ar")).current_dir(&tmp.path).args(["rcs", "d.a", "foo.o", "foobar.o", "baz.o"]));
    let cases: &[&[&str]] = &[
        &["--start-lib", "foo.o", "foobar.o", "--end-lib", "plain.o"],
        // baz.o is needed (through uses_baz.o, itself needed by main.o); foo.o and foobar.o not.
        &["--start-lib", "foo.o", "baz.o", "uses_baz.o", "--end-lib", "main.o"],
        &["d.a", "plain.o"],
        &["d.a", "plain.o", "--undefined-glob=foo*"],
        &["d.a", "plain.o", "--undefined-glob", "f?o", "--undefined-glob=[b]az"],
        &["--start-lib", "foo.o", "baz.o", "--end-lib", "plain.o", "--undefined-glob=*a*"],
    ];
    for (i, args) in cases.iter().enumerate() {
        let mut names = Vec::new();
        for (who, ld) in [("lld", Path::new(LLD)), ("ours", linker().as_path())] {
            let out = format!("{who}-{i}");
            let o = run_ld(&tmp, ld, &[&["-o", &out], *args].concat());
            assert!(o.status.success(), "{who} {args:?}: {}", String::from_utf8_lossy(&o.stderr));
            names.push(defined_globals(&tmp.join(&out)));
        }
        assert_eq!(names[1], names[0], "{args:?}");
    }
    tmp.finish();
}

/// `--warn-common` says what GNU ld says, in its words; `--fatal-warnings` makes it fail the link.
#[test]
fn warn_common_matches_gnu_ld() {
    if !testing_rivet() || !have(&target_tool("gcc")) || !have(&target_tool("ld.bfd")) {
        return;
    }
    let tmp = TempDir::new("cli-warn-common");
    compile_all(
        &tmp,
        &[
            ("a.c", "int foo;\n"),
            ("b.c", "int foo;\nint _start(void) { return foo; }\n"),
            ("big.c", "long foo[4];\n"),
            ("def.c", "int foo = 1;\n"),
        ],
        &["-fcommon"],
    );
    // GNU ld: "ld.bfd: b.o and a.o: warning: multiple common of `foo'"; rivet:
    // "rivet: warning: b.o and a.o: multiple common symbols of `foo'" (mold's phrase, "multiple
    // common symbols", in GNU ld's sentence; the other messages are GNU ld's words).
    let words = |stderr: &[u8], tool: &str| -> Vec<String> {
        String::from_utf8_lossy(stderr)
            .lines()
            .map(|l| l.replacen(tool, "", 1).replacen("warning: ", "", 1))
            .filter(|l| !l.is_empty())
            .collect()
    };
    for inputs in [&["a.o", "b.o"][..], &["a.o", "big.o", "b.o"], &["a.o", "def.o", "b.o"], &["def.o", "a.o", "b.o"]] {
        let args = [&["--warn-common", "-o", "out"], inputs].concat();
        let gnu = run_ld(&tmp, Path::new(&target_tool("ld.bfd")), &args);
        let ours = run_ld(&tmp, &linker(), &args);
        assert!(ours.status.success(), "{inputs:?}");
        let expected: Vec<String> = (words(&gnu.stderr, &format!("{}: ", target_tool("ld.bfd"))).iter())
            .map(|l| l.replace("multiple common of", "multiple common symbols of"))
            .collect();
        assert!(!expected.is_empty(), "{inputs:?}");
        assert_eq!(words(&ours.stderr, "rivet: "), expected, "{inputs:?}");
        // Without the option, nothing is said.
        assert!(run_ld(&tmp, &linker(), &args[1..]).stderr.is_empty(), "{inputs:?}");
    }
    let fatal = run_ld(&tmp, &linker(), &["--warn-common", "--fatal-warnings", "-o", "fatal", "a.o", "b.o"]);
    assert_eq!(fatal.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&fatal.stderr).contains("error: b.o and a.o: multiple common symbols of `foo'"));
    assert!(!tmp.join("fatal").exists());
    tmp.finish();
}

/// `--filter`/`-F` and `--auxiliary`/`-f` give the DT_FILTER and DT_AUXILIARY entries lld gives
/// (every one, in order), and are refused outside a shared library as lld and GNU ld refuse them.
#[test]
fn filter_and_auxiliary_entries_match_lld() {
    if !testing_rivet() || !have(&target_tool("gcc")) || !have(LLD) || !have(&target_tool("readelf")) {
        return;
    }
    let tmp = TempDir::new("cli-filter");
    std::fs::write(tmp.join("a.s"), ".globl _start\n_start:\n nop\n").unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "a.s", "-o", "a.o"]));
    let entries = |file: &str| -> Vec<String> {
        let out = must(Command::new(target_tool("readelf")).arg("-dW").arg(tmp.join(file)));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains("(FILTER)") || l.contains("(AUXILIARY)"))
            .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
            .collect()
    };
    let args = ["-shared", "a.o", "--filter", "foo", "-F", "bar", "--auxiliary=aux1", "-f", "aux2", "-soname", "x"];
    must(Command::new(LLD).current_dir(&tmp.path).args(args).args(["-o", "lld.so"]));
    must(Command::new(linker()).current_dir(&tmp.path).args(args).args(["-o", "ours.so"]));
    let expected = entries("lld.so");
    assert_eq!(expected.len(), 4);
    assert_eq!(entries("ours.so"), expected);
    for (opt, message) in [
        ("-F", "-F/--filter may not be used without -shared"),
        ("-f", "-f/--auxiliary may not be used without -shared"),
    ] {
        let o = run_ld(&tmp, &linker(), &["a.o", opt, "foo", "-o", "exe"]);
        assert_eq!(o.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&o.stderr).contains(message), "{}", String::from_utf8_lossy(&o.stderr));
    }
    tmp.finish();
}

/// The output sections of the PT_LOAD that holds `.text`, from `readelf -lW`'s mapping.
fn text_segment(file: &Path) -> Vec<String> {
    let out = must(Command::new(target_tool("readelf")).arg("-lW").arg(file));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mapping = text.split("Segment Sections...").nth(1).unwrap_or("").to_string();
    mapping
        .lines()
        .map(|l| l.split_whitespace().skip(1).map(String::from).collect::<Vec<_>>())
        .find(|secs| {
            secs.iter().any(|s| s == ".text") && secs.iter().any(|s| s == ".init" || s == ".plt" || s == ".fini")
        })
        .unwrap_or_default()
}

/// `--no-rosegment` puts read-only data in the executable segment, `--rosegment` keeps it out
/// also under `-z noseparate-code`: where `.rodata` and `.dynsym` go is where lld puts them.
#[test]
fn rosegment_places_read_only_data_as_lld() {
    if !have(&target_tool("gcc")) || !have(LLD) || !have(&target_tool("readelf")) {
        return;
    }
    let tmp = TempDir::new("cli-rosegment");
    compile_all(&tmp, &[("a.c", "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n")], &[]);
    let lld_dir = tmp.join("lld");
    std::fs::create_dir_all(&lld_dir).unwrap();
    let _ = std::os::unix::fs::symlink(which(LLD), lld_dir.join("ld"));
    for flags in [&["--no-rosegment"][..], &["--rosegment", "-z", "noseparate-code"], &["--rosegment"]] {
        let mut has = Vec::new();
        for (who, dir) in [("lld", lld_dir.clone()), ("ours", linker_dir(&tmp))] {
            let out = format!("{who}-{}", flags.len());
            let mut cmd = Command::new(target_tool("gcc"));
            cmd.current_dir(&tmp.path).arg("-B").arg(&dir).args(["a.o", "-o", &out]);
            cmd.arg(format!("-Wl,{}", flags.join(",")));
            must(&mut cmd);
            let exe = tmp.join(&out);
            let secs = text_segment(&exe);
            has.push([".rodata", ".dynsym", ".eh_frame"].map(|s| secs.iter().any(|x| x == s)));
            assert_eq!(must(&mut target_run(&exe)).stdout, b"hello\n", "{who} {flags:?}");
        }
        assert_eq!(has[1], has[0], "{flags:?}: which of .rodata, .dynsym, .eh_frame share .text's segment");
    }
    tmp.finish();
}

fn which(tool: &str) -> PathBuf {
    let out = must(Command::new("sh").args(["-c", &format!("command -v {tool}")]));
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// `-z keep-text-section-prefix` keeps `.text.hot`, `.text.unlikely`, ... as output sections of
/// their own, with the same members lld gives them; without it they are all `.text`.
#[test]
fn keep_text_section_prefix_names_sections_as_lld() {
    if !have(&target_tool("gcc")) || !have(LLD) || !have(&target_tool("readelf")) {
        return;
    }
    let tmp = TempDir::new("cli-text-prefix");
    let mut asm = String::from(".globl _start\n.text\n_start:\n ret\n");
    for name in [
        ".text.hot",
        ".text.hot.foo",
        ".text.hotter",
        ".text.unknown.foo",
        ".text.unlikely",
        ".text.unlikely.foo",
        ".text.startup.foo",
        ".text.exit",
        ".text.split.x",
        ".text.foo",
    ] {
        asm.push_str(&format!(".section {name},\"ax\",@progbits\n.ascii \"{name} \"\n"));
    }
    std::fs::write(tmp.join("a.s"), asm).unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "a.s", "-o", "a.o"]));
    let text_sections = |file: &str| -> Vec<(String, String)> {
        let out = must(Command::new(target_tool("readelf")).arg("-SW").arg(tmp.join(file)));
        let mut v: Vec<(String, String)> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split(']').nth(1)?.split_whitespace().next().map(String::from))
            .filter(|n| n.starts_with(".text"))
            .map(|n| {
                let dump = must(Command::new(target_tool("readelf")).arg("-p").arg(&n).arg(tmp.join(file)));
                let s = String::from_utf8_lossy(&dump.stdout);
                (n, s.lines().filter_map(|l| l.split(']').nth(1)).map(str::trim).collect::<Vec<_>>().join(" "))
            })
            .collect();
        v.sort();
        v
    };
    for flags in [
        &["-z", "keep-text-section-prefix"][..],
        &[],
        &["-z", "keep-text-section-prefix", "-z", "nokeep-text-section-prefix"],
    ] {
        let args = [&["a.o"], flags].concat();
        must(Command::new(LLD).current_dir(&tmp.path).args(&args).args(["-o", "lld"]));
        must(Command::new(linker()).current_dir(&tmp.path).args(&args).args(["-o", "ours"]));
        let expected = text_sections("lld");
        assert_eq!(text_sections("ours"), expected, "{flags:?}");
        assert_eq!(expected.len(), if flags.len() == 2 { 7 } else { 1 }, "{expected:?}");
    }
    tmp.finish();
}

// The undefined-symbol policy (`--unresolved-symbols`, `--[no-]warn/error-unresolved-symbols`,
// `-z defs/undefs`, `--[no-]allow-shlib-undefined`): lld is the reference, and where ld.lld-19 is
// installed every case is also linked with it and must succeed or fail as it does.

/// lld, when installed.
fn lld() -> Option<PathBuf> {
    have("ld.lld-19").then(|| PathBuf::from("ld.lld-19"))
}

/// Runs `ld` in `dir` with `args`: (success, stderr).
fn ld_in(ld: &Path, dir: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(ld).current_dir(dir).args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Links `args` with the linker under test and with lld (when installed): both must succeed (`ok`)
/// or both fail; gives the linker under test's stderr.
fn agrees_with_lld(dir: &Path, args: &[&str], ok: bool) -> String {
    let (ours, stderr) = ld_in(&linker(), dir, args);
    assert_eq!(ours, ok, "{args:?}: expected {}\n{stderr}", if ok { "success" } else { "failure" });
    if let Some(lld) = lld() {
        let (theirs, lld_err) = ld_in(&lld, dir, args);
        assert_eq!(theirs, ok, "lld disagrees on {args:?}\n{lld_err}");
    }
    stderr
}

fn compile(dir: &Path, name: &str, source: &str, flags: &[&str]) {
    let src = if name.ends_with("pp") { format!("{name}.cpp") } else { format!("{name}.c") };
    std::fs::write(dir.join(&src), source).unwrap();
    must(Command::new(target_tool("gcc")).current_dir(dir).args(flags).args(["-c", &src, "-o", &format!("{name}.o")]));
}

#[test]
fn unresolved_symbol_options_agree_with_lld() {
    if x86_only("its programs exit through an x86-64 syscall") {
        return;
    }
    if !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-unresolved");
    let dir = &tmp.path;
    // Exits with the low byte of the missing variable's address.
    let caller = "extern int missing;\n\
        void _start(void) { __asm__ volatile(\"syscall\" :: \"a\"(60), \"D\"((long)&missing)); }\n";
    compile(dir, "caller", caller, &[]);
    compile(dir, "lib", "int missing_fn(void);\nint api(void) { return missing_fn(); }\n", &["-fPIC"]);
    compile(
        dir,
        "hidden",
        "__attribute__((visibility(\"hidden\"))) int hid(void);\nint main(void) { return hid(); }\n",
        &[],
    );
    let exe = ["-static", "caller.o", "-o", "exe"];
    let warned = |e: &str| e.matches("warning: undefined symbol: missing").count();
    // (options, links, warns)
    let cases: &[(&[&str], bool, bool)] = &[
        (&[], false, false),
        (&["--warn-unresolved-symbols"], true, true),
        (&["-warn-unresolved-symbols", "--error-unresolved-symbols"], false, false),
        (&["--error-unresolved-symbols", "--warn-unresolved-symbols"], true, true),
        (&["--unresolved-symbols=ignore-all"], true, false),
        (&["--unresolved-symbols", "ignore-in-object-files"], true, false),
        (&["--unresolved-symbols=ignore-in-shared-libs"], false, false),
        (&["-unresolved-symbols=report-all"], false, false),
        (&["--unresolved-symbols=report-all", "--warn-unresolved-symbols"], true, true),
        (&["-z", "undefs"], true, false),
        (&["-z", "undefs", "-z", "defs"], false, false),
        (&["--unresolved-symbols=ignore-all", "-z", "defs"], false, false),
        (&["--unresolved-symbols=ignore-all", "--error-unresolved-symbols"], true, false),
        // --fatal-warnings makes the warning an error.
        (&["--warn-unresolved-symbols", "--fatal-warnings"], false, false),
        // Each symbol is reported once already: --warn-once changes nothing.
        (&["--warn-unresolved-symbols", "--warn-once"], true, true),
    ];
    for &(opts, ok, warns) in cases {
        let args: Vec<&str> = exe.iter().chain(opts).copied().collect();
        let stderr = agrees_with_lld(dir, &args, ok);
        if testing_rivet() {
            assert_eq!(warned(&stderr), warns as usize, "{opts:?}:\n{stderr}");
            if !ok {
                assert!(
                    stderr.contains(
                        "error: undefined symbol: missing\n>>> referenced by caller.c\n>>>               caller.o:(_start)"
                    ),
                    "{stderr}"
                );
            }
        }
        if ok {
            // The ignored symbol is 0, as a weak undefined one would be.
            assert_eq!(target_run(&tmp.join("exe")).status().unwrap().code(), Some(0), "{opts:?}");
        }
    }
    // A shared library's undefined symbols are errors only with -z defs / --no-undefined.
    let so = ["-shared", "lib.o", "-o", "lib.so"];
    let cases: &[(&[&str], bool, bool)] = &[
        (&[], true, false),
        (&["-z", "defs"], false, false),
        (&["--no-undefined"], false, false),
        (&["-z", "defs", "-z", "undefs"], true, false),
        (&["-z", "defs", "--warn-unresolved-symbols"], true, true),
        (&["-z", "defs", "--unresolved-symbols=ignore-in-object-files"], true, false),
    ];
    for &(opts, ok, warns) in cases {
        let args: Vec<&str> = so.iter().chain(opts).copied().collect();
        let stderr = agrees_with_lld(dir, &args, ok);
        if testing_rivet() {
            assert_eq!(stderr.matches("warning: undefined symbol: missing_fn").count(), warns as usize, "{stderr}");
        }
        if ok && have(&target_tool("readelf")) {
            // Left for the loader.
            let syms = readelf(&["--dyn-syms", "-W"], &tmp.join("lib.so"));
            assert!(syms.lines().any(|l| l.contains(" UND ") && l.ends_with(" missing_fn")), "{opts:?}\n{syms}");
        }
    }
    // A hidden symbol must be defined here, whatever the options say.
    for opts in [&["--unresolved-symbols=ignore-all"][..], &["--warn-unresolved-symbols"], &["-shared"]] {
        let args: Vec<&str> = ["-e", "main", "hidden.o", "-o", "hidden"].iter().chain(opts).copied().collect();
        let stderr = agrees_with_lld(dir, &args, false);
        assert!(!testing_rivet() || stderr.contains("error: undefined hidden symbol: hid"), "{stderr}");
    }
    // An unknown value is refused.
    let (ok, stderr) = ld_in(&linker(), dir, &["--unresolved-symbols=some", "caller.o"]);
    assert!(!ok && (!testing_rivet() || stderr.contains("unknown --unresolved-symbols value: some")), "{stderr}");
    tmp.finish();
}

#[test]
fn shared_library_undefined_symbols_agree_with_lld() {
    if !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-shlib-undef");
    let dir = &tmp.path;
    compile(dir, "foo", "void foo(void) {}\n", &["-fPIC"]);
    compile(dir, "bar", "void foo(void);\nvoid bar(void) { foo(); }\n", &["-fPIC"]);
    compile(dir, "main", "void bar(void);\nint main(void) { bar(); return 0; }\n", &["-fPIC"]);
    compile(dir, "hide", "__attribute__((visibility(\"hidden\"))) void foo(void) {}\nvoid bar(void);\nint main(void) { bar(); return 0; }\n", &[]);
    // The libraries are fixtures: no DT_NEEDED but the ones asked for (libbar2.so needs libfoo.so).
    let so = |args: &[&str]| {
        must(Command::new(target_tool("gcc")).current_dir(dir).args(["-shared", "-nostdlib"]).args(args))
    };
    so(&["foo.o", "-o", "libfoo.so"]);
    so(&["bar.o", "-o", "libbar.so"]);
    so(&["bar.o", "-o", "libbar2.so", "-Wl,-soname,libbar2.so", "-L.", "-lfoo"]);
    let exe = ["-pie", "-e", "main", "-o", "exe", "main.o"];
    let msg = "error: libbar.so: --no-allow-shlib-undefined: undefined symbol: foo\n>>> nothing in the link defines it";
    // (options and libraries, links, the message expected)
    let cases: &[(&[&str], bool, &str)] = &[
        (&["--no-allow-shlib-undefined", "libbar.so"], false, msg),
        // The default for an executable.
        (&["libbar.so"], false, msg),
        (&["--allow-shlib-undefined", "libbar.so"], true, ""),
        (&["--unresolved-symbols=ignore-in-shared-libs", "libbar.so"], true, ""),
        (&["--unresolved-symbols=ignore-in-object-files", "libbar.so"], false, msg),
        (
            &["--warn-unresolved-symbols", "libbar.so"],
            true,
            "warning: libbar.so: --no-allow-shlib-undefined: undefined symbol: foo",
        ),
        (&["--no-allow-shlib-undefined", "libfoo.so", "libbar.so"], true, ""),
        // libbar2.so needs libfoo.so, which is not loaded: foo may be there, so it is not checked.
        (&["--no-allow-shlib-undefined", "libbar2.so"], true, ""),
        // The default for a shared library is to allow them.
        (&["-shared", "libbar.so"], true, ""),
        (&["-shared", "--no-allow-shlib-undefined", "libbar.so"], false, msg),
    ];
    for &(opts, ok, expected) in cases {
        let args: Vec<&str> =
            exe.iter().chain(opts).copied().filter(|a| !(opts.contains(&"-shared") && *a == "-pie")).collect();
        let stderr = agrees_with_lld(dir, &args, ok);
        assert!(!testing_rivet() || stderr.contains(expected), "{opts:?}: {stderr}");
    }
    // With libfoo.so, a dependency of libbar2.so, not loaded, foo may be there (GNU ld, which loads
    // it, finds it there): nothing is checked. lld checks libbar.so and rejects this.
    let args = ["-pie", "-e", "main", "-o", "exe", "main.o", "libbar2.so", "libbar.so", "-rpath-link", "."];
    assert!(ld_in(&linker(), dir, &args).0, "{args:?}");
    if have(&target_tool("ld.bfd")) {
        assert!(ld_in(Path::new(&target_tool("ld.bfd")), dir, &args).0, "GNU ld, {args:?}");
    }
    // A definition the output does not export cannot be what the library binds to.
    let stderr = agrees_with_lld(dir, &["-pie", "-e", "main", "-o", "exe", "hide.o", "libbar.so"], false);
    let msg = "error: libbar.so: --no-allow-shlib-undefined: undefined symbol: foo\n>>> defined in hide.o but not exported (hidden)";
    assert!(!testing_rivet() || stderr.contains(msg), "{stderr}");
    tmp.finish();
}

#[test]
fn a_hidden_reference_is_not_bound_to_a_shared_library() {
    if !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-hidden-ref");
    let dir = &tmp.path;
    compile(dir, "foo", "void foo(void) {}\nint weakfoo;\n", &["-fPIC"]);
    must(Command::new(target_tool("gcc")).current_dir(dir).args(["-shared", "-nostdlib", "foo.o", "-o", "libfoo.so"]));
    compile(
        dir,
        "ref",
        "__attribute__((visibility(\"hidden\"))) void foo(void);\nint main(void) { foo(); return 0; }\n",
        &["-fPIC"],
    );
    // The library before the object, as in `cc a.so b.o`: the library's definition is seen first.
    let stderr = agrees_with_lld(dir, &["-pie", "-e", "main", "-o", "exe", "libfoo.so", "ref.o"], false);
    let msg = "error: undefined symbol: foo\n>>> the reference is hidden and must bind in the output: the definition in libfoo.so cannot satisfy it";
    assert!(!testing_rivet() || stderr.contains(msg), "{stderr}");
    if have(&target_tool("ld.bfd")) {
        assert!(
            !ld_in(Path::new(&target_tool("ld.bfd")), dir, &["-pie", "-e", "main", "-o", "exe", "libfoo.so", "ref.o"])
                .0
        );
    }
    // An archive member after the library defines it: fetched, and the link binds there (GNU ld
    // and lld alike).
    must(Command::new(target_tool("ar")).current_dir(dir).args(["rcs", "libfoo.a", "foo.o"]));
    agrees_with_lld(dir, &["-pie", "-e", "main", "-o", "arch", "ref.o", "libfoo.so", "libfoo.a"], true);
    if have(&target_tool("ld.bfd")) {
        assert!(
            ld_in(
                Path::new(&target_tool("ld.bfd")),
                dir,
                &["-pie", "-e", "main", "-o", "arch", "ref.o", "libfoo.so", "libfoo.a"]
            )
            .0
        );
    }
    if have(&target_tool("readelf")) {
        let o = must(Command::new(target_tool("readelf")).args(["--dyn-syms", "-sW"]).arg(dir.join("arch")));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.lines().any(|l| l.ends_with(" foo") && l.contains("LOCAL") && !l.contains(" UND ")), "{text}");
    }
    // A weak hidden reference stays undefined and resolves to zero: nothing is imported.
    compile(
        dir,
        "weakref",
        "__attribute__((weak, visibility(\"hidden\"))) extern int weakfoo;\nint *main(void) { return &weakfoo; }\n",
        &["-fPIC"],
    );
    agrees_with_lld(dir, &["-pie", "-e", "main", "-o", "weak", "libfoo.so", "weakref.o"], true);
    if have(&target_tool("readelf")) {
        let o = must(Command::new(target_tool("readelf")).args(["--dyn-syms", "-rW"]).arg(dir.join("weak")));
        assert!(!String::from_utf8_lossy(&o.stdout).contains("weakfoo"), "{}", String::from_utf8_lossy(&o.stdout));
    }
    tmp.finish();
}

#[test]
fn a_data_definition_of_a_library_function_name_is_warned_about() {
    if !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-type-mismatch");
    let dir = &tmp.path;
    compile(dir, "lib", "void times(void) {}\nint counter;\nint same(void) { return 0; }\n", &["-fPIC"]);
    must(Command::new(target_tool("gcc")).current_dir(dir).args(["-shared", "-nostdlib", "lib.o", "-o", "liblib.so"]));
    compile(dir, "data", "int times = -1;\nvoid counter(void) {}\nint same(void) { return 1; }\n", &["-fPIC"]);
    // GNU ld and lld link it silently; rivet links the same output and says what it saw (mold's warning).
    let stderr = agrees_with_lld(dir, &["-shared", "-o", "out.so", "data.o", "liblib.so"], true);
    if testing_rivet() {
        let times = "warning: symbol type mismatch: times\n>>> defined as data in data.o\n>>> defined as a function in liblib.so";
        let counter =
            "warning: symbol type mismatch: counter\n>>> defined as a function in data.o\n>>> defined as data in liblib.so";
        assert!(stderr.contains(times) && stderr.contains(counter), "{stderr}");
        assert!(!stderr.contains("mismatch: same"), "{stderr}");
    }
    tmp.finish();
}

#[test]
fn messages_demangle_cpp_names_like_lld() {
    if !have(&target_tool("g++")) {
        return;
    }
    let tmp = TempDir::new("cli-demangle");
    let dir = &tmp.path;
    compile(dir, "callpp", "int foo(int, int);\nint main() { return foo(3, 4); }\n", &["-xc++"]);
    compile(dir, "dup1pp", "int dup(int x) { return x; }\n", &["-xc++"]);
    compile(dir, "dup2pp", "int dup(int x) { return x + 1; }\nint main() { return 0; }\n", &["-xc++"]);
    let cases: &[(&[&str], &str)] = &[
        (&["callpp.o"], "undefined symbol: foo(int, int)\n"),
        (&["--demangle", "callpp.o"], "undefined symbol: foo(int, int)\n"),
        (&["--no-demangle", "callpp.o"], "undefined symbol: _Z3fooii\n"),
        (&["dup1pp.o", "dup2pp.o"], "duplicate symbol: dup(int)\n"),
        (&["--no-demangle", "dup1pp.o", "dup2pp.o"], "duplicate symbol: _Z3dupi\n"),
    ];
    for &(opts, expected) in cases {
        let args: Vec<&str> = ["-static", "-e", "main", "-o", "exe"].iter().chain(opts).copied().collect();
        let stderr = agrees_with_lld(dir, &args, false);
        assert!(!testing_rivet() || stderr.contains(expected), "{opts:?}: {stderr}");
        if let Some(lld) = lld() {
            let (_, theirs) = ld_in(&lld, dir, &args);
            assert!(theirs.contains(expected), "lld: {opts:?}: {theirs}");
        }
    }
    tmp.finish();
}

#[test]
fn error_limit_counts_printed_errors_like_lld() {
    if !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-error-limit");
    let dir = &tmp.path;
    let calls: String = (0..25).map(|i| format!("f{i}();")).collect();
    let decls: String = (0..25).map(|i| format!("int f{i}(void);")).collect();
    compile(dir, "many", &format!("{decls}\nint main(void) {{ {calls} return 0; }}\n"), &[]);
    let printed = |e: &str| e.matches("error: undefined symbol: f").count();
    for (opts, count, stopped) in [
        (&[][..], 20, true),
        (&["--error-limit=0"], 25, false),
        (&["--error-limit", "5"], 5, true),
        (&["--error-limit=30"], 25, false),
    ] {
        let args: Vec<&str> = ["-static", "-e", "main", "-o", "exe", "many.o"].iter().chain(opts).copied().collect();
        let stderr = agrees_with_lld(dir, &args, false);
        if testing_rivet() {
            assert_eq!(printed(&stderr), count, "{opts:?}: {stderr}");
            assert_eq!(stderr.contains("too many errors emitted, stopping now"), stopped, "{stderr}");
        }
        if let Some(lld) = lld() {
            assert_eq!(printed(&ld_in(&lld, dir, &args).1), count, "lld, {opts:?}");
        }
    }
    let (ok, stderr) = ld_in(&linker(), dir, &["--error-limit=many", "many.o"]);
    assert!(!ok && (!testing_rivet() || stderr.contains("--error-limit: 'many' is not a number")), "{stderr}");
    tmp.finish();
}

/// Linking nothing is an error (GNU ld and lld: "no input files"), not an empty a.out.
#[test]
fn no_input_files_is_an_error() {
    let tmp = TempDir::new("cli-no-inputs");
    for args in [&[][..], &["-o", "out"], &["-static", "-e", "main", "--gc-sections"]] {
        for ld in [linker(), PathBuf::from("ld.bfd")] {
            if !have(&ld.to_string_lossy()) {
                continue;
            }
            let (ok, stderr) = ld_in(&ld, &tmp.path, args);
            assert!(!ok && stderr.contains("no input files"), "{ld:?} {args:?}: {stderr}");
        }
        assert_eq!(files_in(&tmp.path), Vec::<String>::new(), "an output was written");
    }
    // Only asking for the version is no link.
    assert!(ld_in(&linker(), &tmp.path, &["-v"]).0);
    tmp.finish();
}

/// An undefined symbol that only a symbol table lists (`.globl foo`, no relocation uses it) is no
/// error for GNU ld and lld.
#[test]
fn unused_undefined_symbol_is_not_an_error() {
    if x86_only("its program is x86-64 assembly") {
        return;
    }
    if !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-unused-undef");
    std::fs::write(tmp.join("a.s"), ".globl _start, foo\n_start:\n mov $60, %eax\n xor %edi, %edi\n syscall\n")
        .unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "a.s", "-o", "a.o"]));
    agrees_with_lld(&tmp.path, &["-o", "exe", "a.o"], true);
    agrees_with_lld(&tmp.path, &["-shared", "-z", "defs", "-o", "a.so", "a.o"], true);
    assert_eq!(target_run(&tmp.join("exe")).status().unwrap().code(), Some(0));
    tmp.finish();
}

/// -rpath-link only tells GNU ld where to find a library's dependencies; rivet does not load them
/// (as lld), so the output is the same with or without it.
#[test]
fn rpath_link_is_accepted_and_changes_nothing() {
    if !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("cli-rpath-link");
    let dir = &tmp.path;
    compile(dir, "main", "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n", &[]);
    let mut outputs = Vec::new();
    for (out, extra) in
        [("plain", ""), ("with", "-Wl,-rpath-link,/nonexistent:/usr/lib"), ("eq", "-Wl,--rpath-link=/opt")]
    {
        let mut cmd = Command::new(target_tool("gcc"));
        cmd.current_dir(dir).arg("-B").arg(linker_dir(&tmp)).args(["main.o", "-o", out]);
        if !extra.is_empty() {
            cmd.arg(extra);
        }
        must(&mut cmd);
        outputs.push(std::fs::read(tmp.join(out)).unwrap());
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]), "-rpath-link changed the output");
    tmp.finish();
}

/// `-N`/`--omagic`: one segment that is readable, writable and executable, no RELRO, as lld
/// makes it; the static program still runs.
#[test]
fn omagic_makes_one_rwx_segment_as_lld() {
    if !testing_rivet() || !have(&target_tool("gcc")) || !have(LLD) {
        return;
    }
    let tmp = TempDir::new("cli-omagic");
    compile_all(&tmp, &[("hello.c", "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n")], &[]);
    let lld_dir = tmp.join("lld");
    std::fs::create_dir_all(&lld_dir).unwrap();
    std::os::unix::fs::symlink(which(LLD), lld_dir.join("ld")).unwrap();
    let segments = |dir: &Path, out: &str| {
        must(Command::new(target_tool("gcc")).current_dir(&tmp.path).arg("-B").arg(dir).args([
            "hello.o",
            "-static",
            "-no-pie",
            "-Wl,--omagic",
            "-o",
            out,
        ]));
        let text = String::from_utf8_lossy(
            &must(Command::new(target_tool("readelf")).args(["-lW", out]).current_dir(&tmp.path)).stdout,
        )
        .into_owned();
        let loads: Vec<String> = text
            .lines()
            .filter(|l| l.trim_start().starts_with("LOAD"))
            .map(|l| l.split_whitespace().skip(6).take_while(|w| !w.starts_with("0x")).collect::<Vec<_>>().join(""))
            .collect();
        (loads, text.contains("GNU_RELRO"))
    };
    let ours = segments(&linker_dir(&tmp), "ours.out");
    let lld = segments(&lld_dir, "lld.out");
    assert_eq!(ours, (vec!["RWE".to_string()], false));
    assert_eq!(ours, lld);
    assert_eq!(String::from_utf8_lossy(&must(&mut target_run(&tmp.join("ours.out"))).stdout), "hi\n");
    tmp.finish();
}

/// `-y`/`--trace-symbol` and `--why-extract=-` print what lld prints (stdout): each file's
/// reference to or definition of a traced symbol, shared definitions, and why each archive member
/// was fetched (`<internal>` for `-u`).
#[test]
fn trace_symbol_and_why_extract_match_lld() {
    if !testing_rivet() || !have(&target_tool("gcc")) || !have(LLD) {
        return;
    }
    let tmp = TempDir::new("cli-why");
    compile_all(
        &tmp,
        &[
            ("user.c", "int needed(void); int also(void);\nint _start(void) { return needed() + also(); }\n"),
            ("m1.c", "int needed(void) { return 1; }\n"),
            ("m2.c", "int also(void) { return 2; }\n"),
            ("m3.c", "int by_u(void) { return 3; }\n"),
            ("lib.c", "int also(void) { return 4; }\n"),
        ],
        &["-fPIC"],
    );
    must(Command::new(target_tool("ar")).current_dir(&tmp.path).args(["rcs", "lib.a", "m1.o", "m2.o", "m3.o"]));
    must(Command::new(LLD).current_dir(&tmp.path).args(["-shared", "-o", "lib.so", "lib.o"]));
    for args in [
        vec!["-y", "needed", "--trace-symbol=also", "-o", "out", "user.o", "lib.a", "lib.so"],
        vec!["--why-extract=-", "-u", "by_u", "-o", "out", "user.o", "lib.a"],
        vec!["-y", "also", "--why-extract=-", "-o", "out", "user.o", "lib.so", "lib.a"],
    ] {
        let ours = run_ld(&tmp, &linker(), &args);
        let lld = run_ld(&tmp, Path::new(LLD), &args);
        assert!(ours.status.success(), "{args:?}: {}", String::from_utf8_lossy(&ours.stderr));
        assert_eq!(String::from_utf8_lossy(&ours.stdout), String::from_utf8_lossy(&lld.stdout), "{args:?}");
        assert!(!ours.stdout.is_empty(), "{args:?} printed something");
    }
    // Into a file.
    let out = run_ld(&tmp, &linker(), &["--why-extract=why.txt", "-o", "out", "user.o", "lib.a"]);
    assert!(out.status.success());
    let text = std::fs::read_to_string(tmp.join("why.txt")).unwrap();
    assert_eq!(text, "reference\textracted\tsymbol\nuser.o\tlib.a(m1.o)\tneeded\nuser.o\tlib.a(m2.o)\talso\n");
    tmp.finish();
}

/// `--dependency-file`: a Makefile rule naming every input read: lld's rule, on one line as mold
/// writes it (rivet also escapes a space in the output's name, which lld 19 leaves bare);
/// `--thread-count=N` is `--threads=N`; `--noinhibit-exec` turns undefined symbols into warnings
/// and writes the output (GNU ld and lld). (`--execute-only`, which lld refuses on x86-64, takes
/// mold's meaning there: tests/mold_options.rs.)
#[test]
fn dependency_file_thread_count_noinhibit_exec() {
    if !testing_rivet() || !have(&target_tool("gcc")) || !have(LLD) {
        return;
    }
    let tmp = TempDir::new("cli-depfile");
    compile_all(
        &tmp,
        &[
            ("main.c", "int helper(void);\nint _start(void) { return helper(); }\n"),
            ("h.c", "int helper(void) { return 0; }\n"),
        ],
        &[],
    );
    must(Command::new(target_tool("ar")).current_dir(&tmp.path).args(["rcs", "libh.a", "h.o"]));
    for (ld, dep) in [(linker(), "ours.d"), (Path::new(LLD).to_path_buf(), "lld.d")] {
        let dep_arg = format!("--dependency-file={dep}");
        let out = run_ld(&tmp, &ld, &[&dep_arg, "-o", "out", "main.o", "libh.a"]);
        assert!(out.status.success());
    }
    let (ours, lld) =
        (std::fs::read_to_string(tmp.join("ours.d")).unwrap(), std::fs::read_to_string(tmp.join("lld.d")).unwrap());
    // The same rule as lld's, which continues its first line with `\`.
    assert_eq!(ours, lld.replace(" \\\n ", " "));
    assert_eq!(ours, "out: main.o libh.a\n\nmain.o:\n\nlibh.a:\n");
    let out = run_ld(&tmp, &linker(), &["--dependency-file=sp.d", "-o", "with space", "main.o", "libh.a"]);
    assert!(out.status.success());
    assert!(std::fs::read_to_string(tmp.join("sp.d")).unwrap().starts_with("with\\ space: main.o"));
    // --thread-count=1 gives the bytes --threads=1 does.
    assert!(run_ld(&tmp, &linker(), &["--thread-count=1", "-o", "t1", "main.o", "libh.a"]).status.success());
    assert!(run_ld(&tmp, &linker(), &["--threads=1", "-o", "t2", "main.o", "libh.a"]).status.success());
    assert_eq!(std::fs::read(tmp.join("t1")).unwrap(), std::fs::read(tmp.join("t2")).unwrap());
    let bad = run_ld(&tmp, &linker(), &["--thread-count=0", "-o", "t3", "main.o"]);
    assert_eq!(bad.status.code(), Some(1));
    // main.o alone: `helper` is undefined.
    let failed = run_ld(&tmp, &linker(), &["-o", "ni", "main.o"]);
    assert_eq!(failed.status.code(), Some(1));
    let kept = run_ld(&tmp, &linker(), &["--noinhibit-exec", "-o", "ni", "main.o"]);
    assert!(kept.status.success(), "{}", String::from_utf8_lossy(&kept.stderr));
    assert!(String::from_utf8_lossy(&kept.stderr).contains("warning: undefined symbol: helper"));
    assert!(tmp.join("ni").exists());
    tmp.finish();
}

/// An unknown `-z` keyword is a warning and the link goes on, in lld's words (GNU ld also warns);
/// with `--fatal-warnings` it fails.
#[test]
fn unknown_z_keywords_warn_as_lld_does() {
    if !testing_rivet() || !have(&target_tool("gcc")) {
        return;
    }
    let tmp = TempDir::new("unknown-z");
    std::fs::write(tmp.join("a.c"), "int main(void) { return 0; }\n").unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "a.c"]));
    let out = Command::new(linker())
        .current_dir(&tmp.path)
        .args(["-shared", "-z", "no-such-keyword", "a.o", "-o", "a.so"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("warning: unknown -z value: no-such-keyword"), "{err}");
    assert!(tmp.join("a.so").exists());
    let lld = std::path::Path::new("/usr/lib/llvm-19/bin/ld.lld");
    if lld.exists() {
        let theirs = Command::new(lld)
            .current_dir(&tmp.path)
            .args(["-shared", "-z", "no-such-keyword", "a.o", "-o", "b.so"])
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&theirs.stderr).contains("warning: unknown -z value: no-such-keyword"));
    }
    let fatal = Command::new(linker())
        .current_dir(&tmp.path)
        .args(["-shared", "--fatal-warnings", "-z", "no-such-keyword", "a.o", "-o", "c.so"])
        .output()
        .unwrap();
    assert_eq!(fatal.status.code(), Some(1));
    tmp.finish();
}

/// `-z nognustack` leaves PT_GNU_STACK out (lld's option); the program still runs.
#[test]
fn nognustack_leaves_the_stack_header_out() {
    if !testing_rivet() || !have(&target_tool("gcc")) || !have(&target_tool("readelf")) {
        return;
    }
    let tmp = TempDir::new("nognustack");
    std::fs::write(tmp.join("a.c"), "int main(void) { return 3; }\n").unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "a.c"]));
    let types = |exe: &str| -> Vec<String> {
        let out = must(Command::new(target_tool("readelf")).current_dir(&tmp.path).args(["-lW", exe]));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let table =
            text.split("Program Headers:").nth(1).unwrap().split("Section to Segment").next().unwrap().to_string();
        table
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|w| w.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
            .map(String::from)
            .collect()
    };
    for (flag, out) in [("-Wl,-z,nognustack", "without"), ("-Wl,-z,gnustack", "with")] {
        let mut cmd = Command::new(target_tool("gcc"));
        cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(&tmp)).args(["a.o", flag, "-o", out]);
        must(&mut cmd);
        let code = target_run(&tmp.join(out)).status().unwrap().code();
        assert_eq!(code, Some(3), "{flag}");
    }
    assert!(!types("without").iter().any(|t| t == "GNU_STACK"), "{:?}", types("without"));
    assert!(types("with").iter().any(|t| t == "GNU_STACK"));
    let lld = std::path::Path::new("/usr/lib/llvm-19/bin");
    if lld.join("ld.lld").exists() {
        let mut cmd = Command::new(target_tool("gcc"));
        cmd.current_dir(&tmp.path).arg(format!("-B{}", lld.display())).args([
            "-fuse-ld=lld",
            "a.o",
            "-Wl,-z,nognustack",
            "-o",
            "lld",
        ]);
        must(&mut cmd);
        assert!(!types("lld").iter().any(|t| t == "GNU_STACK"));
    }
    tmp.finish();
}
