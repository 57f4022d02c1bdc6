//! Symbol rules at the edges: version-script patterns (bracket classes with escapes; an open class
//! is an error), a version script naming a symbol nothing defines (a warning by default, an error
//! under `--no-undefined-version`, nothing under `--undefined-version`), `--warn-common` and
//! `-w` / `--no-warnings`. The same objects are linked by GNU ld (plain gcc) and by the linker
//! under test (`gcc -B`); the outputs' dynamic symbols and the programs' output are compared.
mod common;

use common::*;
use common::{link_with as link, stderr_text as stderr};
use std::path::Path;
use std::process::Command;

fn setup(name: &str, files: &[(&str, &str)], cflags: &[&str]) -> Option<TempDir> {
    let tmp = gcc_readelf_tmp(name)?;
    for (file, text) in files {
        std::fs::write(tmp.join(file), text).unwrap();
        if let Some(stem) = file.strip_suffix(".c").or_else(|| file.strip_suffix(".s")) {
            let obj = format!("{stem}.o");
            must(Command::new("gcc").current_dir(&tmp.path).args(cflags).args(["-c", file, "-o", &obj]));
        }
    }
    Some(tmp)
}

fn linked(tmp: &TempDir, ours: bool, args: &[&str], out: &str) {
    let o = link(tmp, ours, args, out);
    assert!(o.status.success(), "{} {args:?}: {}", if ours { "rivet" } else { "GNU ld" }, stderr(&o));
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

/// `.symver x, name@` and `.symver x, name@@` (an empty version): `name` exported in the base
/// version, even past a version script's `local: *`, as GNU ld exports it.
#[test]
fn empty_symbol_versions_are_the_base_version() {
    let src = "void foo1(void) {}\nvoid foo2(void) {}\n\
               __asm__(\".symver foo1, bar1@\");\n__asm__(\".symver foo2, bar2@@\");\n";
    let Some(tmp) = setup("symrules-emptyver", &[("a.c", src), ("b.ver", "{ local: *; };\n")], &["-fPIC"]) else {
        return;
    };
    for ours in [false, true] {
        for (script, out) in [(None, "plain"), (Some("-Wl,--version-script=b.ver"), "hidden")] {
            let out = format!("{out}-{}.so", if ours { "ours" } else { "gnu" });
            let mut args = vec!["-shared", "a.o"];
            args.extend(script);
            linked(&tmp, ours, &args, &out);
            let names = exported(&tmp.join(&out));
            assert!(names.contains(&"bar1".to_string()) && names.contains(&"bar2".to_string()), "{out}: {names:?}");
            let syms = readelf(&["-W", "--dyn-syms"], &tmp.join(&out));
            assert!(!syms.contains("bar1@") && !syms.contains("bar2@"), "{out}: unversioned\n{syms}");
        }
    }
    tmp.finish();
}

/// `.symver foo, foo@V1` and `.symver foo, foo@@V2` on `foo` itself: one definition under the
/// names `foo`, `foo@V1` and `foo@@V2`, not a duplicate; the library exports both versions, as
/// lld links it (GNU ld reports a multiple definition of `foo`).
#[test]
fn one_definition_in_two_versions() {
    let src = "void foo(void) {}\n__asm__(\".symver foo, foo@TEST1\");\n__asm__(\".symver foo, foo@@TEST2\");\n";
    let script = "TEST1 { };\nTEST2 { };\n";
    let Some(tmp) = setup("symrules-multiver", &[("a.c", src), ("b.ver", script)], &["-fPIC"]) else { return };
    linked(&tmp, true, &["-shared", "a.o", "-Wl,--version-script=b.ver"], "ours.so");
    let mut outs = vec!["ours.so"];
    if have("ld.lld-19") {
        must(Command::new("ld.lld-19").current_dir(&tmp.path).args([
            "-shared",
            "a.o",
            "--version-script=b.ver",
            "-o",
            "lld.so",
        ]));
        outs.push("lld.so");
    }
    for out in outs {
        let syms = readelf(&["-W", "--dyn-syms"], &tmp.join(out));
        assert!(syms.contains(" foo@TEST1") && syms.contains(" foo@@TEST2"), "{out}\n{syms}");
    }
    tmp.finish();
}

/// `foo@V` and `foo@@V` defined at two places: a reference to `foo@V` could mean either, so the
/// link fails naming the object and the name. Different versions of one name are fine.
#[test]
fn a_version_defined_twice_is_a_duplicate() {
    let script = "VERS_1.1 { global: foo; };\nVERS_1.2 { global: foo; } VERS_1.1;\n";
    let dup = "__asm__(\".symver foo1,foo@VERS_1.2\");\n__asm__(\".symver foo2,foo@@VERS_1.2\");\n\
               void foo1(void) {}\nvoid foo2(void) {}\n";
    let fine = "__asm__(\".symver foo1,foo@VERS_1.1\");\n__asm__(\".symver foo2,foo@@VERS_1.2\");\n\
                void foo1(void) {}\nvoid foo2(void) {}\n";
    let files = [("a.ver", script), ("dup.c", dup), ("fine.c", fine)];
    let Some(tmp) = setup("symrules-symverdup", &files, &["-fPIC"]) else { return };
    let o = link(&tmp, true, &["-shared", "dup.o", "-Wl,--version-script=a.ver"], "dup.so");
    assert!(!o.status.success());
    assert!(!tmp.join("dup.so").exists());
    if testing_rivet() {
        assert!(stderr(&o).contains("duplicate symbol: dup.o: foo@VERS_1.2"), "{}", stderr(&o));
    }
    for (ours, out) in [(false, "gnu.so"), (true, "ours.so")] {
        linked(&tmp, ours, &["-shared", "fine.o", "-Wl,--version-script=a.ver"], out);
        let syms = readelf(&["-W", "--dyn-syms"], &tmp.join(out));
        assert!(syms.contains(" foo@VERS_1.1") && syms.contains(" foo@@VERS_1.2"), "{out}\n{syms}");
    }
    tmp.finish();
}

/// A shared library whose `.gnu.version` gives a definition index 0 (VER_NDX_LOCAL) is refused,
/// naming the library and the symbol, rather than taken as not defining it.
#[test]
fn version_index_zero_on_a_definition_is_an_error() {
    let files = [
        ("a.c", "int foo(void) { return 3; }\nint bar(void) { return 5; }\n"),
        ("a.ver", "VER1 { global: bar; };\n"),
        ("b.c", "int foo(void);\nint main(void) { return foo() == 3 ? 0 : 1; }\n"),
    ];
    let Some(tmp) = setup("symrules-versym0", &files, &["-fPIC"]) else { return };
    linked(&tmp, false, &["-shared", "a.o", "-Wl,--version-script=a.ver"], "a.so");
    let lib = tmp.join("a.so");
    // foo's index in .dynsym and where .gnu.version starts in the file.
    let dynsym = readelf(&["-W", "--dyn-syms"], &lib);
    let idx: usize = (dynsym.lines())
        .find(|l| l.split_whitespace().nth(7) == Some("foo"))
        .and_then(|l| l.split_whitespace().next()?.trim_end_matches(':').parse().ok())
        .expect("foo in .dynsym");
    let sections = readelf(&["-W", "-S"], &lib);
    let line = sections.lines().find(|l| l.contains(" .gnu.version ")).expect(".gnu.version");
    let fields: Vec<&str> = line.split(']').nth(1).unwrap().split_whitespace().collect();
    let off = u64::from_str_radix(fields[3], 16).unwrap() as usize + idx * 2;
    let mut bytes = std::fs::read(&lib).unwrap();
    assert_ne!(bytes[off..off + 2], [0, 0]);
    bytes[off..off + 2].copy_from_slice(&[0, 0]);
    std::fs::write(&lib, bytes).unwrap();
    let o = link(&tmp, true, &["b.o", "a.so", "-Wl,-rpath,."], "exe");
    assert!(!o.status.success());
    assert!(!tmp.join("exe").exists());
    if testing_rivet() {
        let e = stderr(&o);
        assert!(e.contains("a.so: invalid version index 0 for defined symbol foo"), "{e}");
    }
    tmp.finish();
}

/// A common symbol fetches an archive member that defines the name for real (as GNU ld does),
/// but not one where it is only common again; the programs print what GNU ld's print.
#[test]
fn common_symbols_fetch_archive_definitions() {
    let files = [
        (
            "a.c",
            "#include <stdio.h>\nint foo;\nint bar;\nextern int baz;\n__attribute__((weak)) int two(void);\n\
             int main(void) { printf(\"%d %d %d %d\\n\", foo, bar, baz, two ? two() : -1); return 0; }\n",
        ),
        ("b.c", "int foo = 5;\n"),
        ("c.c", "int bar;\nint two(void) { return 2; }\n"),
        ("d.c", "int baz;\n"),
        ("f.c", "int bar = 0;\nint baz = 7;\nint two(void) { return 2; }\n"),
    ];
    let Some(tmp) = setup("symrules-commonar", &files, &["-fcommon"]) else { return };
    must(Command::new("ar").current_dir(&tmp.path).args(["rcs", "e.a", "b.o", "c.o", "d.o"]));
    must(Command::new("ar").current_dir(&tmp.path).args(["rcs", "f.a", "b.o", "f.o"]));
    for (archive, expected) in [("e.a", "5 0 0 -1\n"), ("f.a", "5 0 7 2\n")] {
        linked(&tmp, false, &["a.o", archive], "gnu");
        linked(&tmp, true, &["a.o", archive], "ours");
        assert_eq!(run(&tmp.join("gnu")), expected, "{archive}");
        assert_eq!(run(&tmp.join("ours")), expected, "{archive}");
    }
    tmp.finish();
}
