//! Links real C and C++ programs with GNU ld (through plain gcc) and with the linker under test
//! (through `gcc -B DIR`, `DIR/ld` → rivet), runs both, and compares stdout and exit status.
//!
//! Each program is one file in `tests/programs/`. Directives sit in `//` comments at the top:
//! - `// modes: static static-pie` — link modes that apply (default: every mode in `MODES`; the
//!   dynamic ones, `pie` and `no-pie`, also run with `LD_BIND_NOW=1`);
//! - `// cflags: …` / `// ldflags: …` — extra compiler / link flags; `// gnu-ldflags: …` — link flags
//!   for GNU ld's reference build only, after the others (where GNU ld needs help that lld does not);
//! - `// args: …`, `// stdin: …`, `// expect-exit: N` — how to run it (the exit status is compared
//!   with GNU ld's anyway; `expect-exit` also pins it);
//! - `// prepare: CMD` — a shell command run in the build directory after compiling (build an
//!   archive…); `// link: …` replaces the default link inputs (all objects);
//! - `// shared: libNAME.so a.c b.c [-- LDFLAGS]` — a shared library built from those sources (compiled
//!   with -fPIC, left out of the executable) by the same linker as the executable; the executable
//!   finds it through `-L` and `$ORIGIN`. GNU ld's and the tested linker's builds each live in
//!   their own directory;
//! - `// check: addr2line SYMBOL FILE:LINE`, `// check: nm-absent SYMBOL`, `// check: nm-present SYMBOL`,
//!   `// check: needed LIB`, `// check: not-needed LIB`, `// check: compressed SECTION zlib|zstd`,
//!   `// check: file-smaller-than BYTES`, `// check: symbol-at-section SYMBOL SECTION` (the symbol's
//!   value is the section's address), `// check: symbol-offset SYMBOL OTHER N` (SYMBOL = OTHER + N),
//!   `// check: segment-align SECTION N` (the PT_LOAD holding SECTION has p_align >= N)
//!   — checks on the output of the tested linker.
//!
//! - `// no-structure: REASON` — skip the comparison of `readelf` facts with GNU ld's output (every
//!   program's PT_* kinds, LOAD permissions and largest alignment, GNU_STACK, DT_NEEDED, DT_FLAGS,
//!   DT_FLAGS_1, GNU properties and entry symbol must otherwise agree); REASON says why they differ.
//!
//! - `// check-TARGET: …` (`check-x86_64`, `check-aarch64`) — a check on that target only;
//! - `// targets: x86_64` — the machines the program is for (default: every one; x86 assembly or
//!   x86-only options need this).
//!
//! `RIVET_TEST_TARGET=aarch64` runs the same programs for AArch64: compiled by Debian's cross
//! gcc/g++ (`aarch64-linux-gnu-*`, also for the `prepare` steps, whose `gcc` and `g++` name them),
//! linked by the cross GNU ld and by the linker under test, run under `qemu-aarch64 -L
//! /usr/aarch64-linux-gnu`, and read with the cross binutils.
//!
//! A file may hold several sources: a line `//--- name.c` starts a new one (the lines before the first
//! marker are the first source, `main.c` or `main.cpp`).
//!
//! One `#[test]` per program, so a failure in one never hides another. Add a program: drop a file in
//! `tests/programs/` and add its name to the `programs!` list at the bottom.
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The link modes: gcc's default (a dynamic PIE), `-no-pie`, `-static`, `-static-pie`.
/// `RIVET_TEST_MODES=static,pie` narrows the list.
const MODES: &[&str] = &["pie", "no-pie", "static", "static-pie"];

struct Program {
    name: String,
    sources: Vec<(String, String)>,
    modes: Vec<String>,
    cflags: Vec<String>,
    ldflags: Vec<String>,
    gnu_ldflags: Vec<String>,
    args: Vec<String>,
    stdin: String,
    expect_exit: Option<i32>,
    prepare: Vec<String>,
    link: Option<Vec<String>>,
    shared: Vec<(String, Vec<String>, Vec<String>)>,
    checks: Vec<Vec<String>>,
    /// `// no-structure: REASON`: the readelf facts are not compared with GNU ld's (the reason
    /// says why they legitimately differ).
    no_structure: bool,
    /// `// targets: …`: the machines it is for (empty: all).
    targets: Vec<String>,
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

fn parse_program(name: &str, text: &str) -> Program {
    let cpp = name.ends_with(".cpp");
    let first = if cpp { "main.cpp" } else { "main.c" };
    let mut sources = vec![(first.to_string(), String::new())];
    for line in text.lines() {
        match line.strip_prefix("//--- ") {
            Some(file) => sources.push((file.trim().to_string(), String::new())),
            None => {
                let cur = &mut sources.last_mut().unwrap().1;
                cur.push_str(line);
                cur.push('\n');
            }
        }
    }
    let mut p = Program {
        name: name.to_string(),
        sources,
        modes: env_modes(),
        cflags: vec![],
        ldflags: vec![],
        gnu_ldflags: vec![],
        args: vec![],
        stdin: String::new(),
        expect_exit: None,
        prepare: vec![],
        link: None,
        shared: vec![],
        checks: vec![],
        no_structure: false,
        targets: vec![],
    };
    for line in text.lines().take_while(|l| l.starts_with("//") && !l.starts_with("//---")) {
        let Some((key, value)) = line[2..].trim().split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "modes" => p.modes = words(value).into_iter().filter(|m| env_modes().contains(m)).collect(),
            "cflags" => p.cflags.extend(words(value)),
            "ldflags" => p.ldflags.extend(words(value)),
            "gnu-ldflags" => p.gnu_ldflags.extend(words(value)),
            "args" => p.args = words(value),
            "stdin" => p.stdin = value.replace("\\n", "\n"),
            "expect-exit" => p.expect_exit = Some(value.parse().expect("expect-exit takes a number")),
            "prepare" => p.prepare.push(value.to_string()),
            "link" => p.link = Some(words(value)),
            "check" => p.checks.push(words(value)),
            // A check for one target only: `// check-aarch64: …`.
            k if k.strip_prefix("check-") == Some(test_target().as_str()) => p.checks.push(words(value)),
            "no-structure" => p.no_structure = true,
            "targets" => p.targets = words(value),
            "shared" => {
                let (files, flags) = value.split_once(" -- ").unwrap_or((value, ""));
                let mut w = words(files);
                let lib = w.remove(0);
                p.shared.push((lib, w, words(flags)));
            }
            _ => {}
        }
    }
    p
}

fn env_modes() -> Vec<String> {
    match std::env::var("RIVET_TEST_MODES") {
        Ok(v) => v.split(',').map(str::to_string).collect(),
        Err(_) => MODES.iter().map(|m| m.to_string()).collect(),
    }
}

fn mode_cflags(mode: &str) -> &'static [&'static str] {
    match mode {
        "static" | "no-pie" => &["-fno-pie"],
        _ => &["-fPIE"],
    }
}

fn mode_ldflags(mode: &str) -> &'static [&'static str] {
    match mode {
        "static" => &["-static"],
        "static-pie" => &["-static-pie"],
        "no-pie" => &["-no-pie"],
        "pie" => &["-pie"],
        other => panic!("unknown mode {other}"),
    }
}

fn compiler(file: &str) -> String {
    if file.ends_with(".cpp") || file.ends_with(".cc") {
        target_tool("g++")
    } else {
        target_tool("gcc")
    }
}

/// `RIVET_TEST_EXTRA_LDFLAGS`: driver flags added to the linker under test's links only (for
/// example `-Wl,--icf=all -Wl,--gc-sections`: the programs must still behave like GNU ld's build).
fn extra_flags() -> Vec<String> {
    std::env::var("RIVET_TEST_EXTRA_LDFLAGS")
        .map(|v| v.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

/// `RIVET_TEST_EXTRA_CFLAGS`: compiler flags for every source (both linkers link the same objects),
/// before the program's own, which win (`-O0` where a check needs exact lines).
fn extra_cflags() -> Vec<String> {
    std::env::var("RIVET_TEST_EXTRA_CFLAGS")
        .map(|v| v.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

/// Compiles, prepares and links one program in one mode with gcc (GNU ld) and with the linker under
/// test, each into its own directory (`ref/`, `out/`). Returns the two executables.
fn build(p: &Program, mode: &str, dir: &Path, ldir: &Path) -> (PathBuf, PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let driver = if p.sources.iter().any(|(f, _)| compiler(f) == target_tool("g++")) {
        target_tool("g++")
    } else {
        target_tool("gcc")
    };
    for (file, text) in &p.sources {
        std::fs::write(dir.join(file), text).unwrap();
    }
    let in_library = |f: &str| p.shared.iter().any(|(_, srcs, _)| srcs.iter().any(|s| s == f));
    let object_name =
        |f: &str, pic: bool| format!("{}{}.o", f.rsplit_once('.').unwrap().0, if pic { ".pic" } else { "" });
    let mut objects = Vec::new();
    for (file, _) in &p.sources {
        if !(file.ends_with(".c") || file.ends_with(".cpp")) {
            continue;
        }
        let pic = in_library(file);
        let obj = object_name(file, pic);
        let mut cc = Command::new(compiler(file));
        cc.current_dir(dir).args(["-c", file, "-o", &obj]).args(extra_cflags()).args(&p.cflags);
        if pic {
            cc.arg("-fPIC");
        } else {
            cc.args(mode_cflags(mode));
            objects.push(obj);
        }
        must(&mut cc);
    }
    for cmd in &p.prepare {
        let mut sh = Command::new("sh");
        sh.current_dir(dir).args(["-c", cmd]);
        // The steps' `gcc` and `g++` are the target's.
        if !target_prefix().is_empty() {
            let shims = dir.join("cross-bin");
            std::fs::create_dir_all(&shims).unwrap();
            for t in ["gcc", "g++"] {
                let shim = shims.join(t);
                std::fs::write(&shim, format!("#!/bin/sh\nexec {} \"$@\"\n", target_tool(t))).unwrap();
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            let path = std::env::var("PATH").unwrap_or_default();
            sh.env("PATH", format!("{}:{path}", shims.display()));
        }
        must(&mut sh);
    }
    let inputs = p.link.clone().unwrap_or(objects);
    let link = |variant: &str, via: Option<&Path>| {
        let out_dir = dir.join(variant);
        std::fs::create_dir_all(&out_dir).unwrap();
        for (lib, srcs, flags) in &p.shared {
            let mut cmd = Command::new(&driver);
            cmd.current_dir(dir);
            if let Some(d) = via {
                cmd.arg("-B").arg(d);
            }
            cmd.arg("-shared").args(srcs.iter().map(|f| object_name(f, true))).args(flags);
            cmd.arg("-o").arg(out_dir.join(lib));
            must(&mut cmd);
        }
        let mut cmd = Command::new(&driver);
        cmd.current_dir(dir);
        if let Some(d) = via {
            cmd.arg("-B").arg(d);
        }
        cmd.args(mode_ldflags(mode)).args(&inputs);
        if !p.shared.is_empty() {
            cmd.arg(format!("-L{}", out_dir.display())).arg("-Wl,-rpath,$ORIGIN");
        }
        // The extra flags come before the program's own, which win where they disagree; GNU ld's
        // own flags come last, to win over the program's where GNU ld needs help.
        if via.is_some() {
            cmd.args(extra_flags()).args(&p.ldflags);
        } else {
            cmd.args(&p.ldflags).args(&p.gnu_ldflags);
        }
        cmd.arg("-o").arg(out_dir.join("prog"));
        must(&mut cmd);
        out_dir.join("prog")
    };
    (link("ref", None), link("out", Some(ldir)))
}

fn run(exe: &Path, p: &Program, bind_now: bool) -> (String, Option<i32>, String) {
    let mut cmd = target_run(exe);
    cmd.args(&p.args).current_dir(exe.parent().unwrap());
    if bind_now {
        cmd.env("LD_BIND_NOW", "1");
    }
    let (out, timed_out) = run_with_timeout(&mut cmd, p.stdin.as_bytes(), Duration::from_secs(10));
    let code = if timed_out { Some(-999) } else { out.status.code() };
    (String::from_utf8_lossy(&out.stdout).into_owned(), code, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn symbol_address(exe: &Path, sym: &str) -> String {
    let out = must(Command::new(target_tool("nm")).arg(exe));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(sym))
        .unwrap_or_else(|| panic!("{sym} not in nm output of {}", exe.display()));
    line.split_whitespace().next().unwrap().to_string()
}

fn has_symbol(exe: &Path, sym: &str) -> bool {
    let out = must(Command::new(target_tool("nm")).arg(exe));
    String::from_utf8_lossy(&out.stdout).lines().any(|l| l.split_whitespace().last() == Some(sym))
}

fn check(exe: &Path, c: &[String]) -> Result<(), String> {
    match c.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["addr2line", sym, want] => {
            let addr = symbol_address(exe, sym);
            let out = must(Command::new(target_tool("addr2line")).arg("-e").arg(exe).arg(&addr));
            let got = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if got.ends_with(want) {
                Ok(())
            } else {
                Err(format!("addr2line {sym} ({addr}) gave '{got}', want '*{want}'"))
            }
        }
        ["nm-absent", sym] if has_symbol(exe, sym) => Err(format!("{sym} should not be linked in")),
        ["nm-present", sym] if !has_symbol(exe, sym) => Err(format!("{sym} should be linked in")),
        ["nm-absent" | "nm-present", _] => Ok(()),
        ["needed" | "not-needed", lib] => {
            let out = must(Command::new(target_tool("readelf")).arg("-d").arg(exe));
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let has = text.lines().any(|l| l.contains("(NEEDED)") && l.contains(&format!("[{lib}]")));
            match (c[0].as_str(), has) {
                ("needed", false) => Err(format!("{lib} is not DT_NEEDED")),
                ("not-needed", true) => Err(format!("{lib} is DT_NEEDED but unused")),
                _ => Ok(()),
            }
        }
        ["compressed", section, kind] => {
            // readelf -t prints each section's flags and, for SHF_COMPRESSED ones, the header's type.
            let out = must(Command::new(target_tool("readelf")).arg("-tW").arg(exe));
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let lines: Vec<&str> = text.lines().collect();
            let at = lines.iter().position(|l| l.split_whitespace().nth(1) == Some(*section));
            let Some(at) = at else { return Err(format!("no section {section}")) };
            let block = lines[at..lines.len().min(at + 5)].join("\n");
            let want = kind.to_uppercase();
            if block.contains("COMPRESSED") && block.contains(&want) {
                Ok(())
            } else {
                Err(format!("{section} is not {kind}-compressed:\n{block}"))
            }
        }
        ["symbol-at-section", sym, section] => {
            let value = u64::from_str_radix(&symbol_address(exe, sym), 16).map_err(|e| e.to_string())?;
            let out = must(Command::new(target_tool("readelf")).arg("-SW").arg(exe));
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let addr = text
                .lines()
                .filter_map(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    let at = w.iter().position(|x| x == section)?;
                    u64::from_str_radix(w.get(at + 2)?, 16).ok()
                })
                .next()
                .ok_or_else(|| format!("no section {section}"))?;
            if value == addr {
                Ok(())
            } else {
                Err(format!("{sym} is {value:#x}, {section} starts at {addr:#x}"))
            }
        }
        ["segment-align", section, min] => {
            let min: u64 = min.parse().map_err(|_| format!("segment-align: bad number {min}"))?;
            let out = must(Command::new(target_tool("readelf")).arg("-lSW").arg(exe));
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
            let addr = text
                .lines()
                .find_map(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    let at = w.iter().position(|x| x == section)?;
                    hex(w.get(at + 2)?)
                })
                .ok_or_else(|| format!("no section {section}"))?;
            let align = text
                .lines()
                .filter(|l| l.trim_start().starts_with("LOAD"))
                .find_map(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    let (va, memsz) = (hex(w.get(2)?)?, hex(w.get(5)?)?);
                    (va <= addr && addr < va + memsz).then(|| hex(w.last()?)).flatten()
                })
                .ok_or_else(|| format!("no PT_LOAD holds {section} at {addr:#x}"))?;
            if align >= min {
                Ok(())
            } else {
                Err(format!("the PT_LOAD holding {section} is aligned to {align:#x}, not {min:#x}"))
            }
        }
        ["symbol-offset", sym, other, n] => {
            let value = |s: &str| u64::from_str_radix(&symbol_address(exe, s), 16).map_err(|e| e.to_string());
            let n: u64 = n.parse().map_err(|_| format!("symbol-offset: bad number {n}"))?;
            let (a, b) = (value(sym)?, value(other)?);
            if a == b.wrapping_add(n) {
                Ok(())
            } else {
                Err(format!("{sym} is {a:#x}, {other} + {n} is {:#x}", b.wrapping_add(n)))
            }
        }
        ["file-smaller-than", limit] => {
            let limit: u64 = limit.parse().map_err(|_| format!("file-smaller-than: bad size {limit}"))?;
            let size = std::fs::metadata(exe).map_err(|e| e.to_string())?.len();
            if size < limit {
                Ok(())
            } else {
                Err(format!("the output is {size} bytes, not under {limit}"))
            }
        }
        other => Err(format!("unknown check {other:?}")),
    }
}

/// The facts of an executable that must agree with GNU ld's build of the same objects: which
/// kinds of program headers it has (PT_LOAD by permissions: R, R E, RW), the largest PT_LOAD
/// alignment, PT_GNU_STACK's permissions, DT_NEEDED, DT_FLAGS and DT_FLAGS_1, the GNU property
/// note, and the symbol at the entry point. (Not how many segments or where: that is each linker's
/// choice.)
fn structure(exe: &Path) -> std::collections::BTreeSet<String> {
    let text = |args: &[&str]| {
        let out = must(Command::new(target_tool("readelf")).args(args).arg(exe));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut facts = std::collections::BTreeSet::new();
    let headers = text(&["-lW"]);
    let mut max_align = 0u64;
    let mut entry = 0u64;
    for line in headers.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if line.starts_with("Entry point ") {
            entry = u64::from_str_radix(w[2].trim_start_matches("0x"), 16).unwrap_or(0);
        }
        let Some(&kind) = w.first() else { continue };
        if w.len() < 8 || !kind.chars().all(|c| c.is_ascii_uppercase() || c == '_') || !w[1].starts_with("0x") {
            continue;
        }
        let flags = w[6..w.len() - 1].join(" ");
        match kind {
            "LOAD" => {
                facts.insert(format!("LOAD {flags}"));
                max_align =
                    max_align.max(u64::from_str_radix(w[w.len() - 1].trim_start_matches("0x"), 16).unwrap_or(0));
            }
            "GNU_STACK" => {
                facts.insert(format!("GNU_STACK {flags}"));
            }
            // The note layout (how many PT_NOTEs) is each linker's own.
            "NOTE" => {}
            other => {
                facts.insert(other.to_string());
            }
        }
    }
    facts.insert(format!("max LOAD align {max_align:#x}"));
    let dynamic = text(&["-dW"]);
    for line in dynamic.lines() {
        for tag in ["(NEEDED)", "(FLAGS)", "(FLAGS_1)"] {
            if let Some(rest) = line.split(tag).nth(1) {
                facts.insert(format!("{tag} {}", rest.trim()));
            }
        }
        // Packed relative relocations (-z pack-relative-relocs): whether there are any.
        if line.contains("(RELR)") {
            facts.insert("DT_RELR".to_string());
        }
    }
    // Version needs that are not about symbols: GLIBC_ABI_DT_RELR.
    if text(&["-VW"]).contains("Name: GLIBC_ABI_DT_RELR") {
        facts.insert("needs GLIBC_ABI_DT_RELR".to_string());
    }
    let notes = text(&["-nW"]);
    for line in notes.lines().map(str::trim).filter(|l| l.starts_with("Properties:") || l.starts_with("x86")) {
        facts.insert(line.to_string());
    }
    // The entry point's symbol (what `-e` or the default chose), by address.
    let symbols = text(&["-sW"]);
    let at_entry: std::collections::BTreeSet<&str> = symbols
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 8 && u64::from_str_radix(w[1], 16).ok() == Some(entry) && w[3] == "FUNC").then(|| w[7])
        })
        .collect();
    facts.insert(format!("entry at {}", at_entry.into_iter().collect::<Vec<_>>().join("/")));
    facts
}

fn run_program(file: &str) {
    if !have(&target_tool("gcc")) || !have(&target_tool("nm")) || (test_target() == "aarch64" && !have("qemu-aarch64"))
    {
        eprintln!("skipped {file}: {} or binutils (or qemu-aarch64) missing", target_tool("gcc"));
        return;
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs").join(file);
    let p = parse_program(file, &std::fs::read_to_string(&src).unwrap());
    if !p.targets.is_empty() && !p.targets.contains(&test_target()) {
        eprintln!("skipped {file}: a program for {} only", p.targets.join(", "));
        return;
    }
    let tmp = TempDir::new(&format!("prog-{}", p.name.replace('.', "-")));
    let ldir = linker_dir(&tmp);
    let mut failures = Vec::new();
    for mode in &p.modes {
        let dir = tmp.join(mode);
        let (reference, ours) = build(&p, mode, &dir, &ldir);
        let want = run(&reference, &p, false);
        let got = run(&ours, &p, false);
        if let Some(code) = p.expect_exit {
            assert_eq!(want.1, Some(code), "{file} [{mode}]: the GNU ld build itself exits {:?}, not {code}", want.1);
        }
        // A program killed by a signal is a failure even when both builds die alike: GNU ld's
        // build crashing is no reference (give it `gnu-ldflags` that make it run).
        if want.1.is_none() {
            failures.push(format!("[{mode}] GNU ld's build was killed by a signal: {}", want.2));
        }
        if got.1.is_none() {
            failures.push(format!("[{mode}] the build was killed by a signal; its stderr:\n{}", got.2));
        } else if (&want.0, want.1) != (&got.0, got.1) {
            failures.push(format!(
                "[{mode}] output differs\n--- GNU ld (exit {:?})\n{}--- linker under test (exit {:?})\n{}--- its stderr\n{}",
                want.1, want.0, got.1, got.0, got.2
            ));
        }
        // Dynamic outputs also run with every symbol bound at start-up (no lazy PLT).
        if matches!(mode.as_str(), "pie" | "no-pie") {
            let now = run(&ours, &p, true);
            if now.1.is_none() || (&want.0, want.1) != (&now.0, now.1) {
                failures.push(format!(
                    "[{mode}, LD_BIND_NOW=1] output differs\n--- GNU ld\n{}--- linker under test (exit {:?})\n{}--- its stderr\n{}",
                    want.0, now.1, now.0, now.2
                ));
            }
        }
        for c in &p.checks {
            if let Err(e) = check(&ours, c) {
                failures.push(format!("[{mode}] check failed: {e}"));
            }
        }
        // The loader-visible shape must agree with GNU ld's: a wrong segment or dynamic flag can
        // run here and still break elsewhere (a bad RELRO with large pages, a wrong DT_NEEDED).
        if !p.no_structure {
            let (mut want, got) = (structure(&reference), structure(&ours));
            // GNU ld makes the stack executable when some input (an assembly file) lacks
            // .note.GNU-stack; lld and rivet only with -z execstack.
            if want.contains("GNU_STACK RWE") && got.contains("GNU_STACK RW") {
                want.remove("GNU_STACK RWE");
                want.insert("GNU_STACK RW".into());
            }
            // Extra flags given to the linker under test alone (a 2 MiB page) move its segments'
            // alignment on purpose.
            let mut got = got;
            // On AArch64 read-only data has a segment of its own, as lld lays it out (GNU ld puts
            // it in the code's).
            if test_target() == "aarch64" && !want.contains("LOAD R") {
                got.remove("LOAD R");
            }
            if !extra_flags().is_empty() {
                want.retain(|f| !f.starts_with("max LOAD align"));
                got.retain(|f| !f.starts_with("max LOAD align"));
            }
            if want != got {
                let only = |a: &std::collections::BTreeSet<String>, b: &std::collections::BTreeSet<String>| {
                    a.difference(b).cloned().collect::<Vec<_>>().join(", ")
                };
                failures.push(format!(
                    "[{mode}] readelf facts differ from GNU ld's\n  only GNU ld: {}\n  only ours:   {}",
                    only(&want, &got),
                    only(&got, &want)
                ));
            }
        }
    }
    if failures.is_empty() {
        tmp.finish();
    } else {
        panic!("{file}: {} failure(s); files kept in {}\n{}", failures.len(), tmp.path.display(), failures.join("\n"));
    }
}

/// gcc must really run the linker under test when given `-B DIR`.
#[test]
fn gcc_runs_the_linker_under_test() {
    if !have("gcc") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("gcc-b");
    let ldir = linker_dir(&tmp);
    let out = must(Command::new("gcc").arg("-B").arg(&ldir).arg("-Wl,--version"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("rivet"), "gcc -B did not run rivet: {text}");
    tmp.finish();
}

macro_rules! programs {
    ($($name:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $name() {
                run_program($file);
            }
        )*

        /// Every file in tests/programs is listed above (a forgotten one would silently not run).
        #[test]
        fn every_program_is_listed() {
            let listed = [$($file),*];
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
            for f in files_in(&dir) {
                assert!(listed.contains(&f.as_str()), "tests/programs/{f} is not in the programs! list");
            }
        }
    };
}

programs! {
    alignment => "alignment.c",
    allow_multiple_definition => "allow_multiple_definition.c",
    archive => "archive.c",
    archive_first_definition => "archive_first_definition.c",
    as_needed => "as_needed.c",
    as_needed_gc => "as_needed_gc.c",
    big_bss => "big_bss.c",
    callbacks => "callbacks.c",
    comdat_discarded_definition => "comdat_discarded_definition.c",
    comdat_local_signature => "comdat_local_signature.c",
    common_page_size => "common_page_size.c",
    common_symbols => "common_symbols.c",
    copy_relocation_relro => "copy_relocation_relro.c",
    ctors => "ctors.c",
    cxx_exceptions => "cxx_exceptions.cpp",
    cxx_shared => "cxx_shared.cpp",
    cxx_static_libstdcxx => "cxx_static_libstdcxx.cpp",
    cxx_thread => "cxx_thread.cpp",
    compressed_debug => "compressed_debug.c",
    debug_info => "debug_info.c",
    defsym => "defsym.c",
    dlopen_plugin => "dlopen_plugin.c",
    dynamic_list => "dynamic_list.c",
    environ => "environ.c",
    exclude_libs => "exclude_libs.c",
    exit_code => "exit_code.c",
    far_got_load => "far_got_load.c",
    gc_sections => "gc_sections.c",
    gc_start_stop => "gc_start_stop.c",
    groups => "groups.c",
    gz_zlib => "gz_zlib.c",
    gz_zlib_gnu => "gz_zlib_gnu.c",
    hello => "hello.c",
    ibt_plt => "ibt_plt.c",
    ibt_plt_shared => "ibt_plt_shared.c",
    icf_exception_tables => "icf_exception_tables.cpp",
    ifunc => "ifunc.c",
    ifunc_calls => "ifunc_calls.c",
    ifunc_exported => "ifunc_exported.c",
    jump_table => "jump_table.c",
    large_code_model => "large_code_model.c",
    large_section_alignment => "large_section_alignment.c",
    libm => "libm.c",
    linker_symbols => "linker_symbols.c",
    max_page_size => "max_page_size.c",
    many_sections => "many_sections.c",
    merge_mixed_alignment => "merge_mixed_alignment.c",
    merge_strings => "merge_strings.c",
    multi_object => "multi_object.c",
    needed_by_path => "needed_by_path.c",
    no_relax => "no_relax.c",
    pack_relative_relocs => "pack_relative_relocs.c",
    optimized_debug => "optimized_debug.c",
    out_debug_zlib => "out_debug_zlib.c",
    out_debug_zstd => "out_debug_zstd.c",
    section_start => "section_start.c",
    separate_segments => "separate_segments.c",
    setjmp => "setjmp.c",
    shared_library => "shared_library.c",
    shared_lib_pulls_archive => "shared_lib_pulls_archive.c",
    sort_alignment => "sort_alignment.c",
    sort_section => "sort_section.c",
    start_stop => "start_stop.c",
    stdio_buffering => "stdio_buffering.c",
    strings => "strings.c",
    symbolic => "symbolic.c",
    symver_in_executable => "symver_in_executable.c",
    thin_archive => "thin_archive.c",
    thread_local_init => "thread_local_init.c",
    tls_bss_sections => "tls_bss_sections.c",
    tls_desc_import => "tls_desc_import.c",
    tls_desc_shared => "tls_desc_shared.c",
    tls_descriptors => "tls_descriptors.c",
    tls_local_dynamic_desc => "tls_local_dynamic_desc.c",
    tls_threads => "tls_threads.c",
    versioned_library => "versioned_library.c",
    versioned_reference => "versioned_reference.c",
    weak => "weak.c",
    whole_archive => "whole_archive.c",
    wrap => "wrap.c",
}
