//! Symbol rules at the edges: version-script patterns (bracket classes with escapes; an open class
//! is an error), a version script naming a symbol nothing defines (a warning by default, an error
//! under `--no-undefined-version`, nothing under `--undefined-version`), `--warn-common` and
//! `-w` / `--no-warnings`. The same objects are linked by GNU ld (plain gcc) and by the linker
//! under test (`gcc -B`); the outputs' dynamic symbols and the programs' output are compared.
mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output};

fn setup(name: &str, files: &[(&str, &str)], cflags: &[&str]) -> Option<TempDir> {
    if !have("gcc") || !have("readelf") {
        eprintln!("skipped: gcc or readelf missing");
        return None;
    }
    let tmp = TempDir::new(name);
    for (file, text) in files {
        std::fs::write(tmp.join(file), text).unwrap();
        if let Some(stem) = file.strip_suffix(".c").or_else(|| file.strip_suffix(".s")) {
            let obj = format!("{stem}.o");
            must(Command::new("gcc").current_dir(&tmp.path).args(cflags).args(["-c", file, "-o", &obj]));
        }
    }
    Some(tmp)
}

/// Links with GNU ld (`ours` false) or the linker under test; `args` go to gcc.
fn link(tmp: &TempDir, ours: bool, args: &[&str], out: &str) -> Output {
    let mut cmd = Command::new("gcc");
    cmd.current_dir(&tmp.path);
    if ours {
        cmd.arg("-B").arg(linker_dir(tmp));
    }
    cmd.args(args).arg("-o").arg(out).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn linked(tmp: &TempDir, ours: bool, args: &[&str], out: &str) {
    let o = link(tmp, ours, args, out);
    assert!(o.status.success(), "{} {args:?}: {}", if ours { "rivet" } else { "GNU ld" }, stderr(&o));
}

fn readelf(args: &[&str], file: &Path) -> String {
    String::from_utf8_lossy(&must(Command::new("readelf").args(args).arg(file)).stdout).into_owned()
}

/// The names of the defined global dynamic symbols (without version suffixes), sorted.
fn exported(file: &Path) -> Vec<String> {
    let text = readelf(&["-W", "--dyn-syms"], file);
    let mut names: Vec<String> = text
        .lines()
        .filter(|l| l.contains(" GLOBAL ") && !l.contains(" UND "))
        .filter_map(|l| l.split_whitespace().nth(7))
        .map(|n| n.split('@').next().unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn run(exe: &Path) -> String {
    let out = must(Command::new(exe).current_dir(exe.parent().unwrap()));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `[^\]a-z]`: `\]` is a member of the class, `^` and `!` negate it; GNU ld exports the same names.
#[test]
fn version_script_bracket_classes() {
    let src = "void azZ(void) {}\nvoid czZ(void) {}\nvoid azC(void) {}\nvoid aaZ(void) {}\n\
               void azZ_(void) {}\nvoid czZ_(void) {}\nvoid azC_(void) {}\nvoid aaZ_(void) {}\n";
    let script = "{\nglobal:\n  [abc][^abc][^\\]a-zABC];\n  [abc][!abc][!\\]a-zABC]_;\nlocal:\n  *;\n};\n";
    let Some(tmp) = setup("symrules-classes", &[("b.c", src), ("a.ver", script)], &["-fPIC"]) else { return };
    for ours in [false, true] {
        let out = if ours { "ours.so" } else { "gnu.so" };
        linked(&tmp, ours, &["-shared", "-Wl,--version-script=a.ver", "b.o"], out);
        assert_eq!(exported(&tmp.join(out)), ["azZ", "azZ_", "czZ", "czZ_"], "{out}");
    }
    tmp.finish();
}

/// A `[` that no `]` closes is an error naming the script and the pattern, and nothing is written.
#[test]
fn version_script_open_class_is_an_error() {
    let Some(tmp) = setup(
        "symrules-openclass",
        &[("a.c", "int main(void) { return 0; }\n"), ("b.ver", "VER1 { foo[12; };\n")],
        &["-fPIC"],
    ) else {
        return;
    };
    let o = link(&tmp, true, &["-shared", "-Wl,--version-script=b.ver", "a.o"], "c.so");
    assert!(!o.status.success());
    assert!(!tmp.join("c.so").exists());
    if testing_rivet() {
        let e = stderr(&o);
        assert!(e.contains("b.ver") && e.contains("invalid version pattern 'foo[12'"), "{e}");
    }
    tmp.finish();
}

/// A version script naming a symbol that nothing defines: a warning by default, an error with
/// `--no-undefined-version`, silence with `--undefined-version`. The output is the same as GNU
/// ld's whenever one is written.
#[test]
fn version_script_names_an_undefined_symbol() {
    let files = [("b.c", "int main(void) { return 0; }\n"), ("a.ver", "ver_x { global: foo; };\n")];
    let Some(tmp) = setup("symrules-undefver", &files, &[]) else { return };
    linked(&tmp, false, &["-Wl,--version-script=a.ver", "b.o"], "gnu");
    let warned = link(&tmp, true, &["-Wl,--version-script=a.ver", "b.o"], "ours");
    assert!(warned.status.success(), "{}", stderr(&warned));
    assert_eq!(run(&tmp.join("ours")), run(&tmp.join("gnu")));
    let failed = link(&tmp, true, &["-Wl,--version-script=a.ver", "-Wl,--no-undefined-version", "b.o"], "strict");
    assert!(!failed.status.success());
    assert!(!tmp.join("strict").exists());
    let quiet = link(&tmp, true, &["-Wl,--version-script=a.ver", "-Wl,--undefined-version", "b.o"], "quiet");
    assert!(quiet.status.success());
    if testing_rivet() {
        let msg = "a.ver: cannot assign version `ver_x` to symbol `foo`: symbol not found";
        assert!(stderr(&warned).contains(&format!("warning: {msg}")), "{}", stderr(&warned));
        assert!(stderr(&failed).contains(&format!("error: {msg}")), "{}", stderr(&failed));
        assert!(!stderr(&quiet).contains("cannot assign version"), "{}", stderr(&quiet));
    }
    tmp.finish();
}

/// `--warn-common` warns of two commons of one name; `-w` / `--no-warnings` drop the warning and
/// cancel `--fatal-warnings`; the program links and runs as GNU ld links it.
#[test]
fn warn_common_and_no_warnings() {
    let files = [("a.c", "int foo;\n"), ("b.c", "int foo;\nint main(void) { return foo; }\n")];
    let Some(tmp) = setup("symrules-warncommon", &files, &["-fcommon"]) else { return };
    linked(&tmp, false, &["a.o", "b.o", "-Wl,--warn-common"], "gnu");
    let plain = link(&tmp, true, &["a.o", "b.o"], "plain");
    assert!(plain.status.success() && !stderr(&plain).contains("common"), "{}", stderr(&plain));
    let warned = link(&tmp, true, &["a.o", "b.o", "-Wl,-warn-common"], "warned");
    assert!(warned.status.success());
    let fatal = link(&tmp, true, &["a.o", "b.o", "-Wl,-warn-common", "-Wl,--fatal-warnings"], "fatal");
    assert!(!fatal.status.success());
    assert!(!tmp.join("fatal").exists());
    for quiet in ["-Wl,-w", "-Wl,--no-warnings"] {
        let o = link(&tmp, true, &["a.o", "b.o", "-Wl,-warn-common", quiet], "quiet");
        assert!(o.status.success() && !stderr(&o).contains("common"), "{quiet}: {}", stderr(&o));
        let o = link(&tmp, true, &["a.o", "b.o", "-Wl,-warn-common", "-Wl,-fatal-warnings", quiet], "quiet");
        assert!(o.status.success(), "{quiet} cancels --fatal-warnings: {}", stderr(&o));
        assert_eq!(run(&tmp.join("quiet")), run(&tmp.join("gnu")));
    }
    if testing_rivet() {
        let e = stderr(&warned);
        assert!(e.contains("warning: b.o and a.o: multiple common symbols of `foo'"), "{e}");
    }
    tmp.finish();
}
