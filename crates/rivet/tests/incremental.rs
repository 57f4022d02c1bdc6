//! `--incremental`: a relink that nothing changed writes nothing and leaves the output the full
//! link's, byte for byte; an edit of code and data bytes alone patches the output in place, which
//! is then the full link's, byte for byte; every other change is a full link that says why (the
//! I/O report's `incremental` line); a link killed at any moment leaves nothing that the next link
//! trusts wrongly. Programs are compared with GNU ld's build of the same inputs.
mod common;

use common::*;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const MAIN: &str = "#include <stdio.h>\nint f(void);\nint main(void) { printf(\"f says %d\\n\", f()); return 0; }\n";

fn compile(tmp: &TempDir, name: &str, source: &str) -> PathBuf {
    let c = tmp.join(&format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let o = tmp.join(&format!("{name}.o"));
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).arg("-c").arg(&c).arg("-o").arg(&o));
    o
}

/// A temp dir `name` with `main.o` (which prints `f()`) and `f.o` compiled from `f_source`; None
/// where the test cannot run (no gcc for the target, or not testing rivet).
fn main_and_f(name: &str, f_source: &str) -> Option<TempDir> {
    if !have(&target_tool("gcc")) || !testing_rivet() {
        return None;
    }
    let tmp = TempDir::new(name);
    compile(&tmp, "main", MAIN);
    compile(&tmp, "f", f_source);
    Some(tmp)
}

/// `gcc -B (rivet) ARGS -Wl,--incremental -Wl,--print-timing -o OUT`: must succeed; its report's
/// `incremental` line.
fn relink(tmp: &TempDir, args: &[&str], out: &str) -> String {
    incremental_line(&relink_report(tmp, args, out))
}

/// `relink`'s whole report.
fn relink_report(tmp: &TempDir, args: &[&str], out: &str) -> String {
    let mut cmd = Command::new(target_tool("gcc"));
    cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(tmp)).args(args);
    cmd.args(["-Wl,--incremental", "-Wl,--print-timing", "-o", out]);
    stderr_text(&must(&mut cmd))
}

fn incremental_line(report: &str) -> String {
    // The I/O block's line (the timing table above it has rows named "incremental ..." too).
    let io = report.lines().skip_while(|l| *l != "I/O");
    let line = io.into_iter().find_map(|l| l.trim_start().strip_prefix("incremental"));
    line.unwrap_or_else(|| panic!("no incremental line in the report:\n{report}")).trim().to_string()
}

/// `gcc -B (rivet) ARGS -o OUT` without `--incremental` (must succeed).
fn plain_link(tmp: &TempDir, args: &[&str], out: &str) {
    let mut cmd = Command::new(target_tool("gcc"));
    must(cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(tmp)).args(args).args(["-o", out]));
}

/// What the program prints (it must exit with 0).
fn run(exe: &Path) -> String {
    String::from_utf8_lossy(&must(&mut target_run(exe)).stdout).into_owned()
}

/// The program as GNU ld links it from the same arguments: what it prints.
fn gnu_ld_run(tmp: &TempDir, args: &[&str]) -> String {
    let mut cmd = Command::new(target_tool("gcc"));
    must(cmd.current_dir(&tmp.path).args(args).args(["-o", "gnu.out"]));
    run(&tmp.join("gnu.out"))
}

/// (inode, mtime in ns) of `p`: a file nothing rewrote keeps both.
fn identity(p: &Path) -> (u64, i64, i64) {
    let m = std::fs::metadata(p).unwrap();
    (m.ino(), m.mtime(), m.mtime_nsec())
}

#[test]
fn an_unchanged_relink_writes_nothing_and_an_edit_relinks() {
    let Some(tmp) = main_and_f("incr-same", "int f(void) { return 1; }\n") else { return };
    let args = ["main.o", "f.o"];
    let first = relink(&tmp, &args, "prog");
    assert!(first.starts_with("full link: no state from an earlier link"), "{first}");
    assert!(first.ends_with("state kept for the next link"), "{first}");
    assert!(tmp.join("prog.rivet-incremental").is_file());
    assert_eq!(run(&tmp.join("prog")), gnu_ld_run(&tmp, &args));
    // The incremental link's output is a plain link's, byte for byte.
    plain_link(&tmp, &args, "plain");
    assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), std::fs::read(tmp.join("plain")).unwrap());

    let before = identity(&tmp.join("prog"));
    let again = relink(&tmp, &args, "prog");
    assert!(again.starts_with("up to date: nothing written"), "{again}");
    assert_eq!(identity(&tmp.join("prog")), before, "an up-to-date output is not written");
    assert_eq!(run(&tmp.join("prog")), "f says 1\n");

    // A file rewritten with the same bytes: hashed, found the same, and remembered with its new
    // mtime.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let bytes = std::fs::read(tmp.join("f.o")).unwrap();
    std::fs::write(tmp.join("f.o"), &bytes).unwrap();
    let touched = relink(&tmp, &args, "prog");
    assert!(touched.contains("1 had a new mtime and the same bytes"), "{touched}");
    assert_eq!(identity(&tmp.join("prog")), before);
    let quiet = relink(&tmp, &args, "prog");
    assert!(quiet.starts_with("up to date") && !quiet.contains("new mtime"), "{quiet}");

    // An edit that keeps the object's size and, put back, its mtime: the file was written just
    // before the state (its mtime cannot tell a later write), so its bytes are compared.
    let stamp = tmp.join("f.stamp");
    must(Command::new("touch").arg("-r").arg(tmp.join("f.o")).arg(&stamp));
    let size = std::fs::metadata(tmp.join("f.o")).unwrap().len();
    compile(&tmp, "f", "int f(void) { return 9; }\n");
    assert_eq!(std::fs::metadata(tmp.join("f.o")).unwrap().len(), size, "the edit keeps f.o's size");
    must(Command::new("touch").arg("-r").arg(&stamp).arg(tmp.join("f.o")));
    let patched = relink(&tmp, &args, "prog");
    assert!(patched.starts_with("patched in place: 1 changed file, "), "{patched}");
    assert_eq!(run(&tmp.join("prog")), "f says 9\n");

    // An edit that changes more than bytes (a call, so a new symbol and relocation): a full link
    // that names the file, and the program shows the edit as GNU ld's does.
    compile(&tmp, "f", "int h(int x) { return x; }\nint f(void) { return h(2); }\n");
    let edited = relink(&tmp, &args, "prog");
    assert!(edited.starts_with("full link: f.o changed beyond its code and data bytes"), "{edited}");
    assert!(edited.ends_with("; state kept for the next link"), "{edited}");
    assert_eq!(run(&tmp.join("prog")), "f says 2\n");
    assert_eq!(run(&tmp.join("prog")), gnu_ld_run(&tmp, &args));
    assert!(relink(&tmp, &args, "prog").starts_with("up to date"));

    // A link without the option: the state and the output's second name are gone.
    plain_link(&tmp, &args, "prog");
    assert!(!tmp.join("prog.rivet-incremental").exists() && !tmp.join("prog.rivet-incremental-output").exists());
    // So with -r, whose output is written apart.
    assert!(relink(&tmp, &args, "prog").starts_with("full link"));
    assert!(tmp.join("prog.rivet-incremental-output").exists());
    must(Command::new(linker()).current_dir(&tmp.path).args(["-r", "main.o", "f.o", "-o", "prog"]));
    assert!(!tmp.join("prog.rivet-incremental").exists() && !tmp.join("prog.rivet-incremental-output").exists());
    tmp.finish();
}

#[test]
fn every_other_change_is_a_full_link_that_says_why() {
    let Some(tmp) = main_and_f("incr-why", "int f(void) { return 1; }\n") else { return };
    std::fs::create_dir_all(tmp.join("early")).unwrap();
    std::fs::create_dir_all(tmp.join("late")).unwrap();
    must(Command::new(target_tool("ar")).current_dir(&tmp.path).args(["rcs", "late/libf.a", "f.o"]));
    std::fs::write(tmp.join("v.map"), "{ global: main; local: *; };\n").unwrap();
    let args = ["main.o", "-Learly", "-Llate", "-lf", "-Wl,--version-script=v.map"];
    let full = |line: &str, why: &str| {
        assert!(line.starts_with(&format!("full link: {why}")), "expected a full link because {why}, got: {line}");
    };
    relink(&tmp, &args, "prog");
    assert!(relink(&tmp, &args, "prog").starts_with("up to date"));

    // The timing report asked for, or not: the same command line (the report changes nothing the
    // link writes).
    let before = identity(&tmp.join("prog"));
    plain_link(&tmp, &[&args[..], &["-Wl,--incremental"]].concat(), "prog");
    assert_eq!(identity(&tmp.join("prog")), before, "up to date without the report: nothing written");
    assert!(relink(&tmp, &args, "prog").starts_with("up to date"));

    // Another command line.
    let mut more = args.to_vec();
    more.push("-Wl,-O1");
    full(&relink(&tmp, &more, "prog"), "the command line changed");
    full(&relink(&tmp, &args, "prog"), "the command line changed");

    // The same command line finding another input: a libf.a now earlier in the search.
    std::fs::copy(tmp.join("late/libf.a"), tmp.join("early/libf.a")).unwrap();
    full(&relink(&tmp, &args, "prog"), "the inputs changed: input");
    std::fs::remove_file(tmp.join("early/libf.a")).unwrap();
    full(&relink(&tmp, &args, "prog"), "the inputs changed: input");

    // A file read outside the inputs: the version script.
    std::fs::write(tmp.join("v.map"), "{ global: main; f; local: *; };\n").unwrap();
    full(&relink(&tmp, &args, "prog"), "v.map changed");

    // A shared library rewritten with the same bytes: no object was loaded from it, so its size
    // and mtime alone are compared (an object's bytes are: see f.o touched, up to date). Made
    // older than the racy window first: a file written just before the link is compared by its
    // bytes.
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-shared", "f.o", "-o", "libg.so"]));
    must(Command::new("touch").current_dir(&tmp.path).args(["-d", "1 minute ago", "libg.so"]));
    let with_so = [&args[..], &["libg.so"]].concat();
    full(&relink(&tmp, &with_so, "prog"), "the command line changed");
    assert!(relink(&tmp, &with_so, "prog").starts_with("up to date"));
    let bytes = std::fs::read(tmp.join("libg.so")).unwrap();
    std::fs::write(tmp.join("libg.so"), &bytes).unwrap();
    full(&relink(&tmp, &with_so, "prog"), "libg.so changed (its size or mtime; no object was loaded from it");
    assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), plain_bytes(&tmp, &with_so));
    assert!(relink(&tmp, &with_so, "prog").starts_with("up to date"));
    full(&relink(&tmp, &args, "prog"), "the command line changed");

    // The output, changed or removed by someone else since the last link.
    assert!(relink(&tmp, &args, "prog").starts_with("up to date"));
    must(Command::new(target_tool("strip")).arg(tmp.join("prog")));
    full(&relink(&tmp, &args, "prog"), "prog changed since the last link wrote it");
    // Removed from its path (rustc removes its output before every link): its other name gives
    // it back, the same file.
    assert!(relink(&tmp, &args, "prog").starts_with("up to date"));
    let before = identity(&tmp.join("prog"));
    std::fs::remove_file(tmp.join("prog")).unwrap();
    let back = relink(&tmp, &args, "prog");
    assert!(back.ends_with("; the output, removed from its path, given its name back)"), "{back}");
    assert_eq!(identity(&tmp.join("prog")), before);
    assert_eq!(run(&tmp.join("prog")), gnu_ld_run(&tmp, &args));
    // Removed under both names.
    std::fs::remove_file(tmp.join("prog")).unwrap();
    std::fs::remove_file(tmp.join("prog.rivet-incremental-output")).unwrap();
    full(&relink(&tmp, &args, "prog"), "prog is not there");

    // A damaged state, a missing one.
    let state = tmp.join("prog.rivet-incremental");
    let bytes = std::fs::read(&state).unwrap();
    std::fs::write(&state, &bytes[..bytes.len() / 2]).unwrap();
    full(&relink(&tmp, &args, "prog"), "prog.rivet-incremental is unusable: ");
    std::fs::remove_file(&state).unwrap();
    full(&relink(&tmp, &args, "prog"), "no state from an earlier link");

    // Another working directory, the same paths (absolute, so that it finds the same files).
    let abs: Vec<String> = ["main.o", "late/libf.a"].iter().map(|p| tmp.join(p).display().to_string()).collect();
    let abs: Vec<&str> = abs.iter().map(String::as_str).collect();
    relink(&tmp, &abs, "prog");
    let sub = tmp.join("early");
    let o = must(
        Command::new(target_tool("gcc"))
            .current_dir(&sub)
            .arg("-B")
            .arg(linker_dir(&tmp))
            .args(&abs)
            .args(["-Wl,--incremental", "-Wl,--print-timing", "-o"])
            .arg(tmp.join("prog")),
    );
    full(&incremental_line(&stderr_text(&o)), "the working directory is not the last link's");

    // Links that never leave a state: a side output, a warning.
    let mut mapped = args.to_vec();
    mapped.push("-Wl,-Map=prog.map");
    let line = relink(&tmp, &mapped, "prog");
    assert_eq!(line, "full link: -Map asks for what only a full link prints or writes");
    assert!(!state.exists() && !tmp.join("prog.rivet-incremental-output").exists());
    assert_eq!(relink(&tmp, &mapped, "prog"), line);
    let mut warned = args.to_vec();
    warned.push("-Wl,-z,no-such-keyword");
    let o = Command::new(target_tool("gcc"))
        .current_dir(&tmp.path)
        .arg("-B")
        .arg(linker_dir(&tmp))
        .args(&warned)
        .args(["-Wl,--incremental", "-Wl,--print-timing", "-o", "prog"])
        .output()
        .unwrap();
    let report = stderr_text(&o);
    assert!(o.status.success(), "{report}");
    assert!(report.contains("warning:"), "{report}");
    assert!(incremental_line(&report)
        .ends_with("no state kept: the link gave warnings, which only a full link gives again"));
    assert!(!state.exists());
    assert_eq!(run(&tmp.join("prog")), gnu_ld_run(&tmp, &args));

    // An input read from a pipe: its bytes cannot be compared next time.
    let o = Command::new("bash")
        .current_dir(&tmp.path)
        .arg("-c")
        .arg(format!(
            "{} -B {} main.o -x none <(cat f.o) -Wl,--incremental -Wl,--print-timing -o prog",
            target_tool("gcc"),
            linker_dir(&tmp).display()
        ))
        .output()
        .unwrap();
    let report = stderr_text(&o);
    assert!(o.status.success(), "{report}");
    let line = incremental_line(&report);
    assert!(line.ends_with("is not a regular file: its bytes cannot be compared next time"), "{line}");
    assert!(!state.exists());
    tmp.finish();
}

#[test]
fn a_relink_decides_before_opening_its_inputs_while_their_search_finds_the_same_files() {
    let Some(tmp) = main_and_f("incr-probes", "int f(void) { return 1; }\n") else { return };
    for d in ["early", "late", "other"] {
        std::fs::create_dir_all(tmp.join(d)).unwrap();
    }
    let ar = |lib: &str, objects: &[&str]| {
        let _ = std::fs::remove_file(tmp.join(lib));
        must(Command::new(target_tool("ar")).current_dir(&tmp.path).arg("rcs").arg(lib).args(objects));
    };
    ar("late/libf.a", &["f.o"]);
    // An archive for another machine earlier in the search, which the search skips: an object
    // whose header names another e_machine (EM_RISCV unless the target is RISC-V: it never is).
    let mut foreign = std::fs::read(tmp.join("f.o")).unwrap();
    foreign[18..20].copy_from_slice(&243u16.to_le_bytes());
    std::fs::write(tmp.join("foreign.o"), &foreign).unwrap();
    ar("early/libf.a", &["foreign.o"]);
    // A version script found in the search path, and an archive named twice, by two names of
    // one file (the second name opens the first's file).
    std::fs::write(tmp.join("late/v.map"), "{ global: main; local: *; };\n").unwrap();
    std::fs::hard_link(tmp.join("late/libf.a"), tmp.join("other/libf.a")).unwrap();
    let args = ["main.o", "-Learly", "-Llate", "-lf", "other/libf.a", "-Wl,--version-script=v.map"];
    let full = |line: &str, why: &str| {
        assert!(line.starts_with(&format!("full link: {why}")), "expected a full link because {why}, got: {line}");
    };
    full(&relink(&tmp, &args, "prog"), "no state from an earlier link");
    assert_eq!(run(&tmp.join("prog")), gnu_ld_run(&tmp, &args));
    // Up to date, and patched, with no input opened: the report says so.
    let report = relink_report(&tmp, &args, "prog");
    assert!(incremental_line(&report).starts_with("up to date"), "{report}");
    assert!(report.contains(" files, none opened to find them"), "{report}");
    compile(&tmp, "f", "int f(void) { return 2; }\n");
    ar("late/libf.a", &["f.o"]);
    std::fs::remove_file(tmp.join("other/libf.a")).unwrap();
    std::fs::hard_link(tmp.join("late/libf.a"), tmp.join("other/libf.a")).unwrap();
    let report = relink_report(&tmp, &args, "prog");
    assert!(incremental_line(&report).starts_with("patched in place: 1 changed file, "), "{report}");
    assert!(report.contains(" files, none opened to find them"), "{report}");
    assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), plain_bytes(&tmp, &args));
    assert_eq!(run(&tmp.join("prog")), "f says 2\n");

    // Each answer the search got, changed, is a full link: the skipped archive now for this
    // machine (found first) ...
    ar("early/libf.a", &["f.o"]);
    full(&relink(&tmp, &args, "prog"), "the inputs changed: input ");
    assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), plain_bytes(&tmp, &args));
    ar("early/libf.a", &["foreign.o"]);
    full(&relink(&tmp, &args, "prog"), "the inputs changed: input ");
    assert!(relink(&tmp, &args, "prog").starts_with("up to date"));
    // ... a shared library beside the archive, which the search prefers ...
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-shared", "f.o", "-o", "late/libf.so"]));
    full(&relink(&tmp, &args, "prog"), "the inputs changed: input ");
    assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), plain_bytes(&tmp, &args));
    std::fs::remove_file(tmp.join("late/libf.so")).unwrap();
    full(&relink(&tmp, &args, "prog"), "the inputs changed: input ");
    // ... the second name now another file with the same bytes (two inputs, no longer one) ...
    assert!(relink(&tmp, &args, "prog").starts_with("up to date"));
    std::fs::remove_file(tmp.join("other/libf.a")).unwrap();
    std::fs::copy(tmp.join("late/libf.a"), tmp.join("other/libf.a")).unwrap();
    full(&relink(&tmp, &args, "prog"), "the inputs changed: input ");
    assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), plain_bytes(&tmp, &args));
    // ... and the version script, now found in the working directory first.
    assert!(relink(&tmp, &args, "prog").starts_with("up to date"));
    std::fs::write(tmp.join("v.map"), "{ global: main; f; local: *; };\n").unwrap();
    full(&relink(&tmp, &args, "prog"), "v.map is found elsewhere than the last link found it");
    assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), plain_bytes(&tmp, &args));
    assert_eq!(run(&tmp.join("prog")), gnu_ld_run(&tmp, &args));

    // Without -o, a linker script's OUTPUT names the output, and so where its state is.
    compile(&tmp, "start", "void _start(void) { for (;;) ; }\n");
    std::fs::write(tmp.join("out.ld"), "OUTPUT(named.out)\nINPUT(start.o)\n").unwrap();
    let named = || {
        let o = must(Command::new(linker()).current_dir(&tmp.path).args(["--incremental", "--print-timing", "out.ld"]));
        incremental_line(&stderr_text(&o))
    };
    full(&named(), "no state from an earlier link");
    assert!(tmp.join("named.out.rivet-incremental").is_file());
    assert!(named().starts_with("up to date"));

    // A linker script among the inputs, naming another file now: a full link.
    std::fs::write(tmp.join("libs.txt"), "INPUT(f.o)\n").unwrap();
    let scripted = ["main.o", "libs.txt"];
    full(&relink(&tmp, &scripted, "scripted"), "no state");
    assert!(relink(&tmp, &scripted, "scripted").starts_with("up to date"));
    std::fs::copy(tmp.join("f.o"), tmp.join("g.o")).unwrap();
    std::fs::write(tmp.join("libs.txt"), "INPUT(g.o)\n").unwrap();
    full(&relink(&tmp, &scripted, "scripted"), "libs.txt changed, and it is not an object or archive");
    assert_eq!(std::fs::read(tmp.join("scripted")).unwrap(), plain_bytes(&tmp, &scripted));
    tmp.finish();
}

#[test]
fn a_link_killed_at_any_moment_is_followed_by_a_correct_one() {
    if !have(&target_tool("gcc")) || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("incr-kill");
    // A program large enough that the link takes tens of milliseconds, so the kills land
    // throughout it.
    let mut big = String::from("#include <stdio.h>\n");
    for i in 0..3000 {
        big.push_str(&format!(
            "int g{i}(int x) {{ static int t[64]; t[x & 63] += x; return t[(x * 7) & 63] + {i}; }}\n"
        ));
    }
    big.push_str("int f(void) { int s = 0;\n");
    for i in (0..3000).step_by(97) {
        big.push_str(&format!("s += g{i}(s);\n"));
    }
    big.push_str("return s & 0xff; }\n");
    compile(&tmp, "main", MAIN);
    compile(&tmp, "big", &big);
    // The command line gcc gives the linker, to run rivet alone (killing gcc would not kill it).
    let log = tmp.join("args");
    let dir = tmp.join("argslog");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("ld"),
        format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\nexec {} \"$@\"\n", log.display(), linker().display()),
    )
    .unwrap();
    std::fs::set_permissions(dir.join("ld"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    must(Command::new(target_tool("gcc")).current_dir(&tmp.path).arg("-B").arg(&dir).args([
        "main.o",
        "big.o",
        "-o",
        "prog",
        "-Wl,--incremental",
        "-Wl,--no-fork",
    ]));
    let line_args: Vec<String> = std::fs::read_to_string(&log).unwrap().lines().map(str::to_string).collect();
    let rivet = |extra: &[&str]| {
        let mut c = Command::new(linker());
        c.current_dir(&tmp.path).args(&line_args).args(extra);
        c
    };
    let reference = std::fs::read(tmp.join("prog")).unwrap();
    let expected = run(&tmp.join("prog"));
    assert_eq!(expected, gnu_ld_run(&tmp, &["main.o", "big.o"]));
    let mut full_links = 0;
    for step in 0..12u64 {
        // An input whose mtime changes, so that the killed link is a full one.
        let bytes = std::fs::read(tmp.join("main.o")).unwrap();
        std::fs::write(tmp.join("main.o"), &bytes).unwrap();
        std::fs::write(tmp.join("big.o"), std::fs::read(tmp.join("big.o")).unwrap()).unwrap();
        if step % 3 == 0 {
            // Some kills after a change in the state's eyes: another output.
            std::fs::write(tmp.join("prog"), b"not the output").unwrap();
        }
        let mut child = rivet(&[]).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_micros(step * 2_500 + (step * 7919) % 1_000));
        let _ = child.kill();
        let _ = child.wait();
        let o = must(&mut rivet(&["--print-timing"]));
        let line = incremental_line(&stderr_text(&o));
        full_links += line.starts_with("full link") as usize;
        assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), reference, "after the kill at step {step}: {line}");
        assert_eq!(run(&tmp.join("prog")), expected);
    }
    eprintln!("{full_links} of 12 links after a kill were full links");

    // Patches killed at staggered moments: two versions of big.c that differ only in the values
    // of a 400 KB table in .data, swapped in turn (data, so that AArch64's erratum scan, which
    // reads code, does not turn the patch into a full link).
    let variant = |add: u32| {
        let values: Vec<String> = (0..100_000u32).map(|i| ((i * 7 + add) % 100_000).to_string()).collect();
        let v = format!("{big}int bigtable[] = {{{}}};\n", values.join(","));
        std::fs::read(compile(&tmp, "bigv", &v)).unwrap()
    };
    let variants = [variant(1), variant(2)];
    let mut references = Vec::new();
    for v in &variants {
        std::fs::write(tmp.join("big.o"), v).unwrap();
        references.push((plain_bytes(&tmp, &["main.o", "big.o"]), gnu_ld_run(&tmp, &["main.o", "big.o"])));
    }
    // The same command line for the killed link and the next (`--print-timing` is compared too).
    must(&mut rivet(&["--print-timing"]));
    // Unkilled, each swap is a patch.
    for k in [0, 1] {
        std::fs::write(tmp.join("big.o"), &variants[k]).unwrap();
        let line = incremental_line(&stderr_text(&must(&mut rivet(&["--print-timing"]))));
        assert!(line.starts_with("patched in place: 1 changed file, "), "{line}");
    }
    let mut after = std::collections::BTreeMap::<String, usize>::new();
    for step in 0..12u64 {
        let k = (step % 2) as usize;
        std::fs::write(tmp.join("big.o"), &variants[k]).unwrap();
        let mut child = rivet(&["--print-timing"]).stderr(std::process::Stdio::null()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_micros(step * 1_500 + (step * 7919) % 500));
        let _ = child.kill();
        let _ = child.wait();
        let o = must(&mut rivet(&["--print-timing"]));
        let line = incremental_line(&stderr_text(&o));
        *after.entry(line.split(':').next().unwrap().to_string()).or_default() += 1;
        assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), references[k].0, "after the kill at step {step}: {line}");
        assert_eq!(run(&tmp.join("prog")), references[k].1);
    }
    eprintln!("the links after 12 killed patches: {after:?}");
    tmp.finish();
}

/// The output a plain link of `args` writes (as "plain").
fn plain_bytes(tmp: &TempDir, args: &[&str]) -> Vec<u8> {
    plain_link(tmp, args, "plain");
    std::fs::read(tmp.join("plain")).unwrap()
}

/// The file offset in object `bytes` of the field of the first relocation of its `.text` of one
/// of `types` (of any type when `types` is empty).
fn text_field(bytes: &[u8], types: &[u32]) -> Option<usize> {
    use object::{Object, ObjectSection, RelocationFlags};
    let file = object::File::parse(bytes).ok()?;
    let text = file.section_by_name(".text")?;
    let start = text.file_range()?.0 as usize;
    text.relocations().find_map(|(offset, r)| match r.flags() {
        RelocationFlags::Elf { r_type } if types.is_empty() || types.contains(&r_type) => Some(start + offset as usize),
        _ => None,
    })
}

const CODE_AND_DATA: &str = "int counter = 5;\nstatic const int table[4] = {10, 20, 30, 40};\n\
                             int f(void) { return counter * 3 + table[counter & 3] + 7; }\n";

#[test]
fn an_edit_of_code_and_data_bytes_patches_the_output_in_place() {
    let Some(tmp) = main_and_f("incr-patch", CODE_AND_DATA) else { return };
    let args = ["main.o", "f.o"];
    relink(&tmp, &args, "prog");
    let before = identity(&tmp.join("prog"));
    let mut sections = String::new();
    // A constant in the code, one in .data, one in .rodata: each the same size as before.
    for (i, edit) in
        [("7;", "8;"), ("counter = 5", "counter = 6"), ("{10, 20, 30, 40}", "{10, 20, 31, 41}")].into_iter().enumerate()
    {
        let source = std::fs::read_to_string(tmp.join("f.c")).unwrap().replace(edit.0, edit.1);
        compile(&tmp, "f", &source);
        let line = relink(&tmp, &args, "prog");
        assert!(line.starts_with("patched in place: 1 changed file, "), "edit {i}: {line}");
        sections = line.split(", ").nth(1).unwrap().to_string();
        // In place: the same file, rewritten.
        assert_eq!(identity(&tmp.join("prog")).0, before.0);
        // Byte for byte the full link's output, build-id included.
        assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), plain_bytes(&tmp, &args), "edit {i}");
        assert_eq!(run(&tmp.join("prog")), gnu_ld_run(&tmp, &args), "edit {i}");
        assert!(relink(&tmp, &args, "prog").starts_with("up to date"));
    }
    assert_eq!(run(&tmp.join("prog")), "f says 57\n");

    // A byte of a field the link writes whatever it holds (x86-64's PC32 to `counter`): the
    // object changed, its shape did not, and no byte of the output differs. An AArch64 field is
    // bits of an instruction whose other bits the link keeps: a full link.
    let x86 = test_target() == "x86_64";
    let mut bytes = std::fs::read(tmp.join("f.o")).unwrap();
    let pc32 = [object::elf::R_X86_64_PC32, object::elf::R_X86_64_PLT32];
    let at = text_field(&bytes, if x86 { &pc32 } else { &[] }).expect("a relocation in f.o's .text");
    bytes[at] ^= 0x5a;
    std::fs::write(tmp.join("f.o"), &bytes).unwrap();
    let line = relink(&tmp, &args, "prog");
    match x86 {
        true => assert!(line.starts_with("patched in place: 1 changed file, "), "{line}"),
        false => assert!(line.starts_with("full link: f.o changed beyond its code and data bytes"), "{line}"),
    }
    assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), plain_bytes(&tmp, &args));
    // (The AArch64 instruction is another one now: not run.)
    if x86 {
        assert_eq!(run(&tmp.join("prog")), "f says 57\n");
    }
    compile(&tmp, "f", &std::fs::read_to_string(tmp.join("f.c")).unwrap());

    // An archive member: the archive changed, and only the member's bytes in it. Only that
    // member is written: the other one, loaded too, is as it was.
    compile(&tmp, "g", "int g_table[1000] = {1, 2, 3};\nint g(void) { return g_table[2]; }\n");
    must(Command::new(target_tool("ar")).current_dir(&tmp.path).args(["rcsD", "libf.a", "f.o", "g.o"]));
    let lib = ["main.o", "-Wl,--whole-archive", "libf.a", "-Wl,--no-whole-archive"];
    assert!(relink(&tmp, &lib, "libprog").starts_with("full link"));
    let source = std::fs::read_to_string(tmp.join("f.c")).unwrap().replace("8;", "9;");
    compile(&tmp, "f", &source);
    must(Command::new(target_tool("ar")).current_dir(&tmp.path).args(["rcsD", "libf.a", "f.o", "g.o"]));
    let line = relink(&tmp, &lib, "libprog");
    assert!(line.starts_with(&format!("patched in place: 1 changed file, {sections}, ")), "{line} ({sections})");
    assert_eq!(std::fs::read(tmp.join("libprog")).unwrap(), plain_bytes(&tmp, &lib));
    assert_eq!(run(&tmp.join("libprog")), gnu_ld_run(&tmp, &lib));

    // More than bytes: a new function is a full link that says so.
    compile(&tmp, "f", &format!("{source}int g(void) {{ return 1; }}\n"));
    let line = relink(&tmp, &args, "prog");
    assert!(line.starts_with("full link: f.o changed beyond its code and data bytes"), "{line}");
    assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), plain_bytes(&tmp, &args));

    // A command line whose stages read code bytes: never patched.
    let mut folded = args.to_vec();
    folded.push("-Wl,--icf=all");
    relink(&tmp, &folded, "prog");
    compile(&tmp, "f", &source.replace("9;", "10;"));
    let line = relink(&tmp, &folded, "prog");
    assert!(
        line.starts_with("full link: f.o changed, and no output of this command line is patched: --icf folds"),
        "{line}"
    );
    assert_eq!(std::fs::read(tmp.join("prog")).unwrap(), plain_bytes(&tmp, &folded));

    // A running program cannot be written (ETXTBSY): a full link replaces it. Under qemu the
    // program is not executed by the kernel, so only for a native target.
    if target_prefix().is_empty() {
        std::fs::write(
            tmp.join("wait.c"),
            "#include <stdio.h>\nint f(void);\nint main(void) { getchar(); printf(\"%d\\n\", f()); return 0; }\n",
        )
        .unwrap();
        must(Command::new(target_tool("gcc")).current_dir(&tmp.path).args(["-c", "wait.c"]));
        let waiting = ["wait.o", "f.o"];
        relink(&tmp, &waiting, "waiting");
        let mut child = Command::new(tmp.join("waiting"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        compile(&tmp, "f", &source.replace("9;", "11;"));
        let line = relink(&tmp, &waiting, "waiting");
        assert!(line.starts_with("full link: "), "{line}");
        assert!(line.contains("waiting is running and cannot be written (text file busy)"), "{line}");
        drop(child.stdin.take());
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success());
        assert_eq!(std::fs::read(tmp.join("waiting")).unwrap(), plain_bytes(&tmp, &waiting));
    }
    tmp.finish();
}

/// A small deterministic generator (xorshift), so that a failing sequence can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Where the debug information of `exe` puts function `name` (`FILE:LINE`, the file's own name),
/// as `addr2line` reads it at the symbol's address.
fn line_of(exe: &Path, name: &str) -> String {
    let symbols = String::from_utf8_lossy(&must(Command::new(target_tool("nm")).arg(exe)).stdout).into_owned();
    let addr = symbols
        .lines()
        .find_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [addr, _, n] if n == name => Some(addr.to_string()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{name} is not in {}'s symbols", exe.display()));
    let o = must(Command::new(target_tool("addr2line")).arg("-e").arg(exe).arg(&addr));
    let place = String::from_utf8_lossy(&o.stdout);
    let place = place.trim();
    place.rsplit('/').next().unwrap_or(place).to_string()
}

/// One generated source file: its functions' constants, its data, and the kinds of code it holds.
#[derive(Clone)]
struct Unit {
    k: Vec<u32>,
    data: [u32; 4],
    extra: u32,
    puts: bool,
    tls: bool,
    ctor: bool,
}

impl Unit {
    /// The unit's source: C, or C++ (`cxx`: the same, with a class with virtual functions, a
    /// static object constructed before main, and a path that throws and catches an exception).
    fn source(&self, n: usize, cxx: bool) -> String {
        let mut c = String::from("#include <stdio.h>\n");
        if cxx {
            // The C++ part first; the C part's functions keep C names.
            c += &format!(
                "struct Obj{n} {{ int v; Obj{n}() : v({k0}) {{}} \
                 virtual int get() const {{ return v * {k1}; }} virtual ~Obj{n}() {{}} }};\n\
                 static Obj{n} global{n};\n\
                 static int checked{n}(int x) {{ if ((x & 0xff) > {k2}) throw x; return x & 0xff; }}\n\
                 extern \"C\" int cxx{n}(int s) {{ int r = global{n}.get(); try {{ r += checked{n}(s); }} \
                 catch (int e) {{ r += {k0} + (e & 1); }} return r; }}\nextern \"C\" {{\n",
                k0 = self.k[0],
                k1 = self.k[1],
                k2 = self.k[2] + 100
            );
        }
        c += &format!("int data{n}[4] = {{{}, {}, {}, {}}};\n", self.data[0], self.data[1], self.data[2], self.data[3]);
        c += &format!("static const int ro{n}[4] = {{{}, {}, {}, {}}};\n", self.k[0], self.k[1], self.data[2], 3);
        if self.tls {
            c += &format!("__thread int tls{n} = {};\n", self.k[0] % 100);
        }
        if self.ctor {
            c += &format!(
                "static void __attribute__((constructor)) init{n}(void) {{ data{n}[3] += {}; }}\n",
                self.k[1] % 50
            );
        }
        for (i, k) in self.k.iter().enumerate() {
            c += &format!("int u{n}_{i}(int x) {{ return x * {k} + data{n}[{}] - ro{n}[{}]; }}\n", i % 4, (i + 1) % 4);
        }
        for e in 0..self.extra {
            c += &format!("int u{n}_extra{e}(int x) {{ return x ^ {}; }}\n", e * 17 + 1);
        }
        c += &format!("int unit{n}(int x) {{\n  int s = x;\n");
        for i in 0..self.k.len() {
            c += &format!("  s += u{n}_{i}(s & 0xff);\n");
        }
        for e in 0..self.extra {
            c += &format!("  s += u{n}_extra{e}(s & 0xff);\n");
        }
        if self.tls {
            c += &format!("  tls{n} += s & 7; s += tls{n};\n");
        }
        if self.puts {
            c += &format!("  if (x < 0) puts(\"unit {n}\");\n");
        }
        if cxx {
            c += &format!("  s += cxx{n}(s);\n");
        }
        c += "  return s;\n}\n";
        if cxx {
            c += "}\n";
        }
        c
    }
}

#[test]
fn randomised_edit_sequences_relink_exactly_as_full_links() {
    randomised_edits(false);
}

#[test]
fn randomised_edit_sequences_of_a_cxx_program_relink_exactly_as_full_links() {
    randomised_edits(true);
}

/// 200 random edits of a generated program of three units (C, or C++ with `cxx`), each one
/// recompiled and relinked with `--incremental`: patched in place or linked in full, the output
/// must be the plain link's, byte for byte, and run as GNU ld's build does.
fn randomised_edits(cxx: bool) {
    let compiler = target_tool(if cxx { "g++" } else { "gcc" });
    if !have(&compiler) || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new(if cxx { "incr-random-cxx" } else { "incr-random" });
    let ext = if cxx { "cpp" } else { "c" };
    let build = |name: &str, source: &str| {
        std::fs::write(tmp.join(&format!("{name}.{ext}")), source).unwrap();
        must(Command::new(&compiler).current_dir(&tmp.path).args(["-c", "-g", &format!("{name}.{ext}")]));
    };
    const UNITS: usize = 3;
    let mut main = String::from("#include <stdio.h>\n");
    for n in 0..UNITS {
        main += &format!("int unit{n}(int);\n");
    }
    main += "int main(void) { int s = 1;\n";
    for n in 0..UNITS {
        main += &format!("  s = s * 31 + unit{n}(s & 0xffff);\n");
    }
    main += "  printf(\"%d\\n\", s); return 0; }\n";
    if cxx {
        main = main.replace("int unit", "extern \"C\" int unit");
    }
    build("main", &main);
    let mut units: Vec<Unit> = (0..UNITS)
        .map(|n| Unit {
            k: vec![3 + n as u32, 5, 7],
            data: [1, 2, 3, 4],
            extra: 0,
            puts: false,
            tls: false,
            ctor: false,
        })
        .collect();
    for (n, u) in units.iter().enumerate() {
        build(&format!("u{n}"), &u.source(n, cxx));
    }
    let names: Vec<String> = (0..UNITS).map(|n| format!("u{n}.o")).collect();
    let mut args = vec!["main.o"];
    args.extend(names.iter().map(String::as_str));
    if cxx {
        args.push("-lstdc++");
    }
    relink(&tmp, &args, "prog");
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let (mut patched, mut full) = (0, 0);
    const STEPS: usize = 200;
    for step in 0..STEPS {
        let n = rng.below(UNITS as u64) as usize;
        let u = &mut units[n];
        let kind = rng.below(10);
        let what = match kind {
            // Same-size edits: a constant in a function (kept in its instruction's immediate
            // width), in .data, in .rodata.
            0..=3 => {
                let i = rng.below(u.k.len() as u64) as usize;
                u.k[i] = 2 + rng.below(100) as u32;
                "a function's constant"
            }
            4 | 5 => {
                u.data[rng.below(4) as usize] = rng.below(1000) as u32;
                "data"
            }
            // Everything else changes more than bytes.
            6 => {
                u.extra = (u.extra + 1) % 3;
                "a function added or removed"
            }
            7 => {
                u.puts = !u.puts;
                "a call to libc added or removed"
            }
            8 => {
                u.tls = !u.tls;
                "a thread-local added or removed"
            }
            // (In C++ the constants are also the static object's value, its virtual function's
            // factor and the threshold of the path that throws.)
            _ => {
                u.ctor = !u.ctor;
                "a constructor added or removed"
            }
        };
        build(&format!("u{n}"), &u.source(n, cxx));
        let line = relink(&tmp, &args, "prog");
        if line.starts_with("patched in place") {
            patched += 1;
        } else if line.starts_with("full link") || line.starts_with("up to date") {
            full += line.starts_with("full link") as usize;
        } else {
            panic!("step {step} ({what}): {line}");
        }
        assert_eq!(
            std::fs::read(tmp.join("prog")).unwrap(),
            plain_bytes(&tmp, &args),
            "step {step}, {what} in u{n}.c: the relink ({line}) is not the full link's output"
        );
        // The edited unit's functions are where its source has them, as the debug information of
        // the output says.
        let source = u.source(n, cxx);
        for f in [format!("u{n}_0"), format!("unit{n}")] {
            let at = source.lines().position(|l| l.starts_with(&format!("int {f}("))).expect("defined") + 1;
            assert_eq!(line_of(&tmp.join("prog"), &f), format!("u{n}.{ext}:{at}"), "step {step}, {what}: {line}");
        }
        // The program runs as GNU ld's build does (every tenth step: a run under qemu is slow).
        if step % 10 == 0 {
            assert_eq!(run(&tmp.join("prog")), gnu_ld_run(&tmp, &args), "step {step}");
        }
    }
    eprintln!("{STEPS} edits: {patched} patched in place, {full} full links");
    assert!(patched >= STEPS / 4, "only {patched} of {STEPS} edits were patched");
    tmp.finish();
}
