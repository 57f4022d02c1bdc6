//! `--incremental`: a relink that nothing changed writes nothing and leaves the output the full
//! link's, byte for byte; every change is a full link that says why (the I/O report's
//! `incremental` line); a link killed at any moment leaves nothing that the next link trusts
//! wrongly. Programs are compared with GNU ld's build of the same inputs.
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

/// `gcc -B (rivet) ARGS -Wl,--incremental -Wl,--print-timing -o OUT`: must succeed; its report's
/// `incremental` line.
fn relink(tmp: &TempDir, args: &[&str], out: &str) -> String {
    let mut cmd = Command::new(target_tool("gcc"));
    cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(tmp)).args(args);
    cmd.args(["-Wl,--incremental", "-Wl,--print-timing", "-o", out]);
    let o = must(&mut cmd);
    incremental_line(&stderr_text(&o))
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
    if !have(&target_tool("gcc")) || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("incr-same");
    compile(&tmp, "main", MAIN);
    compile(&tmp, "f", "int f(void) { return 1; }\n");
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
    assert_eq!(relink(&tmp, &args, "prog"), "full link: f.o changed; state kept for the next link");
    assert_eq!(run(&tmp.join("prog")), "f says 9\n");

    // An edit: a full link that names the file, and the program shows the edit as GNU ld's does.
    compile(&tmp, "f", "int f(void) { return 2; }\n");
    let edited = relink(&tmp, &args, "prog");
    assert_eq!(edited, "full link: f.o changed; state kept for the next link");
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
    if !have(&target_tool("gcc")) || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("incr-why");
    compile(&tmp, "main", MAIN);
    compile(&tmp, "f", "int f(void) { return 1; }\n");
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
    tmp.finish();
}
