//! Shared test support: the linker under test, temp directories, running commands with a timeout.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The linker under test: rivet as built by cargo, or `RIVET_TEST_LINKER` (e.g. /usr/bin/ld.bfd to
/// check the tests themselves, or a self-linked rivet).
pub fn linker() -> PathBuf {
    match std::env::var_os("RIVET_TEST_LINKER") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_rivet")),
    }
}

/// True when the linker under test is rivet (messages are checked only then): the one cargo built,
/// or a `RIVET_TEST_LINKER` that says it is rivet (a self-linked rivet).
pub fn testing_rivet() -> bool {
    static IS_RIVET: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *IS_RIVET.get_or_init(|| match std::env::var_os("RIVET_TEST_LINKER") {
        None => true,
        Some(p) => Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).starts_with("rivet ")),
    })
}

/// A fresh directory under the system temp dir; removed by `finish` on success, kept on failure.
pub struct TempDir {
    pub path: PathBuf,
}

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!("rivet-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir { path }
    }
    pub fn join(&self, p: &str) -> PathBuf {
        self.path.join(p)
    }
    pub fn finish(self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A directory holding `ld` → the linker under test, for `gcc -B DIR`. gcc 12's collect2 looks for
/// `DIR/ld` first among the -B prefixes (checked by `gcc_runs_the_linker_under_test`).
pub fn linker_dir(tmp: &TempDir) -> PathBuf {
    let dir = tmp.join("linker");
    std::fs::create_dir_all(&dir).unwrap();
    let ld = dir.join("ld");
    if !ld.exists() {
        std::os::unix::fs::symlink(linker(), &ld).unwrap();
    }
    dir
}

pub fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

/// A shell-quoted rendering of a command, for reproducing failures by hand.
pub fn render(cmd: &Command) -> String {
    let mut s = String::new();
    if let Some(d) = cmd.get_current_dir() {
        s.push_str(&format!("(cd {} && ", d.display()));
    }
    s.push_str(&cmd.get_program().to_string_lossy());
    for a in cmd.get_args() {
        let a = a.to_string_lossy();
        if a.contains(' ') || a.is_empty() {
            s.push_str(&format!(" '{a}'"));
        } else {
            s.push_str(&format!(" {a}"));
        }
    }
    if cmd.get_current_dir().is_some() {
        s.push(')');
    }
    s
}

/// Runs `cmd` with stdin from `input`, killing it after `limit`. Returns (output, timed out).
pub fn run_with_timeout(cmd: &mut Command, input: &[u8], limit: Duration) -> (Output, bool) {
    use std::io::Write;
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot run {}: {e}", render(cmd)));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let start = Instant::now();
    let mut timed_out = false;
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            timed_out = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    let _ = writer.join();
    (out, timed_out)
}

/// Runs a command that must succeed; panics with its output and the command line otherwise.
pub fn must(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {}: {e}", render(cmd)));
    if !out.status.success() {
        panic!(
            "command failed ({}):\n{}\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            render(cmd),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

pub fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// Writes an `ld` into `dir` (for `gcc -B dir`) that appends each `-o` argument to `log`, then runs
/// the linker under test: a test that drives a build system learns which links were ours.
pub fn logging_ld(dir: &Path, log: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let ld = dir.join("ld");
    std::fs::write(
        &ld,
        format!(
            "#!/bin/sh\nprev=\nfor a in \"$@\"; do [ \"$prev\" = -o ] && echo \"$a\" >> {}; prev=$a; done\nexec {} \"$@\"\n",
            log.display(),
            linker().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&ld, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// `gcc ARGS -o OUT` in the test's directory, linked by GNU ld (`ours` false: plain gcc) or by
/// the linker under test (`gcc -B`); the output, whatever the exit status.
pub fn link_with(tmp: &TempDir, ours: bool, args: &[&str], out: &str) -> Output {
    let mut cmd = Command::new("gcc");
    cmd.current_dir(&tmp.path);
    if ours {
        cmd.arg("-B").arg(linker_dir(tmp));
    }
    cmd.args(args).arg("-o").arg(out).output().unwrap()
}

/// A command's stderr as text.
pub fn stderr_text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A temp directory for a test that compiles with gcc and reads outputs with readelf; None (the
/// test skips, saying so) when either is missing.
pub fn gcc_readelf_tmp(name: &str) -> Option<TempDir> {
    if !have("gcc") || !have("readelf") {
        eprintln!("skipped: gcc or readelf missing");
        return None;
    }
    Some(TempDir::new(name))
}

/// `readelf ARGS FILE`'s standard output (the command must succeed).
pub fn readelf(args: &[&str], file: &Path) -> String {
    String::from_utf8_lossy(&must(Command::new("readelf").args(args).arg(file)).stdout).into_owned()
}

/// The output sections' names as `readelf -SW` lists them, in section header order (the null
/// section's is `NULL`).
pub fn section_names(file: &Path) -> Vec<String> {
    readelf(&["-SW"], file)
        .lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix('[')?;
            let (_, rest) = rest.split_once(']')?;
            rest.split_whitespace().next().map(str::to_string)
        })
        .collect()
}

/// The machine the tests that take a target build for: `RIVET_TEST_TARGET` (`x86_64`, the host's,
/// or `aarch64`: Debian's cross compiler and binutils, programs run under qemu-aarch64).
pub fn test_target() -> String {
    std::env::var("RIVET_TEST_TARGET").unwrap_or_else(|_| "x86_64".to_string())
}

/// The cross tools' prefix for the test target (`aarch64-linux-gnu-`), or none for the host's.
pub fn target_prefix() -> &'static str {
    match test_target().as_str() {
        "x86_64" => "",
        "aarch64" => "aarch64-linux-gnu-",
        other => panic!("RIVET_TEST_TARGET={other}: the targets are x86_64 and aarch64"),
    }
}

/// A compiler or binutils tool (`gcc`, `readelf`, …) for the test target.
pub fn target_tool(name: &str) -> String {
    format!("{}{name}", target_prefix())
}

/// The cross sysroot qemu runs AArch64 programs with.
pub const AARCH64_SYSROOT: &str = "/usr/aarch64-linux-gnu";

/// A command that runs program `exe` of the test target: itself, or under
/// `qemu-aarch64 -L /usr/aarch64-linux-gnu`.
pub fn target_run(exe: &Path) -> Command {
    match test_target().as_str() {
        "aarch64" => {
            let mut cmd = Command::new("qemu-aarch64");
            cmd.args(["-L", AARCH64_SYSROOT]).arg(exe);
            cmd
        }
        _ => Command::new(exe),
    }
}

/// For a test that is about x86-64 only: true (after saying so) when the test target is another
/// machine, so that the test returns.
pub fn x86_only(why: &str) -> bool {
    let other = test_target() != "x86_64";
    if other {
        eprintln!("skipped for {}: {why}", test_target());
    }
    other
}
