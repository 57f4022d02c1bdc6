//! Options that shape the dynamic section and the program headers, compared with GNU ld: the same
//! objects are linked by GNU ld (plain gcc) and by the linker under test (`gcc -B`), and the
//! `readelf` facts each option decides (DT_FLAGS, DT_FLAGS_1, which of DT_INIT / DT_FINI /
//! DT_DEBUG exist, PT_GNU_STACK's size and flags, PT_DYNAMIC's flags) must agree. Where GNU ld
//! lacks an option (`-Bsymbolic-non-weak*`, `-z rodynamic`: lld's) the facts lld gives are written
//! out, and the programs are run where running them shows the option's effect.
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const LIB: &str = "int counter = 1;\n\
    int get(void) { return counter; }\n\
    __attribute__((weak)) int weak_get(void) { return 10; }\n\
    int call_get(void) { return get(); }\n\
    int call_weak(void) { return weak_get(); }\n\
    int *counter_addr(void) { return &counter; }\n\
    void foo(void) {}\n";
const EXE: &str = "#include <stdio.h>\n\
    int get(void) { return 2; }\n\
    int weak_get(void) { return 20; }\n\
    int call_get(void); int call_weak(void);\n\
    void foo(void) {}\n\
    int main(void) { printf(\"%d %d\\n\", call_get(), call_weak()); return 0; }\n";
/// An executable of its own with the library's object linked in.
const APP: &str = "#include <stdio.h>\n\
    int call_get(void);\n\
    int main(void) { printf(\"%d\\n\", call_get()); return 0; }\n";

fn setup(name: &str) -> Option<TempDir> {
    if !have("gcc") || !have("readelf") || !testing_rivet() {
        eprintln!("skipped: gcc or readelf missing, or not testing rivet");
        return None;
    }
    let tmp = TempDir::new(name);
    std::fs::write(tmp.join("lib.c"), LIB).unwrap();
    std::fs::write(tmp.join("main.c"), EXE).unwrap();
    std::fs::write(tmp.join("app.c"), APP).unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-fPIC", "lib.c", "main.c", "app.c"]));
    Some(tmp)
}

/// Links `inputs` into `out` with GNU ld (`ours` false) or the linker under test; `flags` go to the
/// linker (comma-joined after -Wl).
fn link(tmp: &TempDir, ours: bool, shared: bool, inputs: &[&str], flags: &[&str], out: &str) -> PathBuf {
    let mut cmd = Command::new("gcc");
    cmd.current_dir(&tmp.path);
    if ours {
        cmd.arg("-B").arg(linker_dir(tmp));
    }
    if shared {
        cmd.arg("-shared");
    }
    cmd.args(inputs).arg("-o").arg(out);
    for f in flags {
        cmd.arg(format!("-Wl,{}", f.replace(' ', ",")));
    }
    must(&mut cmd);
    tmp.join(out)
}

/// Links the same inputs with GNU ld (`gnu-NAME`) and with the linker under test (`ours-NAME`).
fn link_both(tmp: &TempDir, shared: bool, inputs: &[&str], flags: &[&str], name: &str) -> (PathBuf, PathBuf) {
    (
        link(tmp, false, shared, inputs, flags, &format!("gnu-{name}")),
        link(tmp, true, shared, inputs, flags, &format!("ours-{name}")),
    )
}

/// Writes `source` to `file` in the test directory and compiles it with `cflags` (`-c` added).
fn compile(tmp: &TempDir, file: &str, source: &str, cflags: &[&str]) {
    std::fs::write(tmp.join(file), source).unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).arg("-c").args(cflags).arg(file));
}

fn readelf(args: &str, file: &Path) -> String {
    let out = must(Command::new("readelf").args(args.split(' ')).arg(file));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The facts the options decide, one per line.
fn facts(file: &Path) -> Vec<String> {
    let dynamic = readelf("-dW", file);
    let mut f: Vec<String> = Vec::new();
    for tag in ["(FLAGS)", "(FLAGS_1)"] {
        let line = dynamic.lines().find(|l| l.contains(tag));
        f.push(format!("{tag} {}", line.map_or("absent".into(), |l| l.split(tag).nth(1).unwrap().trim().to_string())));
    }
    for tag in ["(INIT)", "(FINI)", "(DEBUG)"] {
        f.push(format!("{tag} {}", dynamic.contains(tag)));
    }
    let segments = readelf("-lW", file);
    for kind in ["GNU_STACK", "DYNAMIC"] {
        let line = segments.lines().find(|l| l.trim_start().starts_with(kind)).unwrap_or("");
        let w: Vec<&str> = line.split_whitespace().collect();
        // Type Offset VirtAddr PhysAddr FileSiz MemSiz Flg... Align: the stack's size, and flags.
        let flags = w.get(6..w.len().saturating_sub(1)).map(|x| x.join("")).unwrap_or_default();
        let size = if kind == "GNU_STACK" { w.get(5).copied().unwrap_or("-") } else { "" };
        f.push(format!("{kind} {size} {flags}"));
    }
    f
}

/// Links `inputs` with the linker under test and `flag`, which must fail; gives its stderr.
fn link_fails(tmp: &TempDir, inputs: &[&str], flag: &str) -> String {
    let out = Command::new("gcc")
        .current_dir(&tmp.path)
        .arg("-B")
        .arg(linker_dir(tmp))
        .args(inputs)
        .args(["-o", "bad"])
        .arg(format!("-Wl,{flag}"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{flag} linked: {stderr}");
    stderr
}

fn run(exe: &Path) -> String {
    let out = must(Command::new(exe).current_dir(exe.parent().unwrap()).env("LD_LIBRARY_PATH", exe.parent().unwrap()));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn z_keywords_and_init_fini_match_gnu_ld() {
    let Some(tmp) = setup("dynfacts-z") else { return };
    let cases: &[&[&str]] = &[
        &[],
        &["-z initfirst"],
        &["-z interpose"],
        &["-z nodefaultlib"],
        &["-z origin"],
        &["-z nodelete", "-z nodlopen", "-z global"],
        &["-z stack-size=0x900000"],
        &["-z now", "-z origin", "-z initfirst"],
        &["-init foo", "-fini foo"],
        &["-init no_such_symbol"],
        &["-Bsymbolic"],
        &["-Bsymbolic-functions"],
        &["-Bsymbolic", "-Bno-symbolic"],
    ];
    let mut failures = Vec::new();
    for (i, flags) in cases.iter().enumerate() {
        for shared in [true, false] {
            let inputs: &[&str] = if shared { &["lib.o"] } else { &["app.o", "lib.o"] };
            let (gnu, ours) = link_both(&tmp, shared, inputs, flags, &format!("{i}{shared}"));
            let (want, got) = (facts(&gnu), facts(&ours));
            if want != got {
                failures.push(format!("{flags:?} shared={shared}:\n  GNU ld: {want:?}\n  ours:   {got:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "facts differ from GNU ld's:\n{}", failures.join("\n"));
    tmp.finish();
}

#[test]
fn symbolic_variants_bind_as_lld_does() {
    let Some(tmp) = setup("dynfacts-symbolic") else { return };
    // main.o defines get and weak_get too: a preemptible definition in the library is replaced by
    // the executable's (2, 20); one bound inside the library keeps its own (1, 10).
    let cases: &[(&str, &str)] = &[
        ("", "2 20\n"),
        ("-Bsymbolic", "1 10\n"),
        ("-Bsymbolic-functions", "1 10\n"),
        ("-Bsymbolic-non-weak", "1 20\n"),
        ("-Bsymbolic-non-weak-functions", "1 20\n"),
        ("-Bsymbolic -Bno-symbolic", "2 20\n"),
    ];
    for (i, (flags, want)) in cases.iter().enumerate() {
        let flags: Vec<&str> = flags.split_whitespace().collect();
        let lib = link(&tmp, true, true, &["lib.o"], &flags, &format!("libs{i}.so"));
        std::fs::copy(&lib, tmp.join("libs.so")).unwrap();
        let exe = link(&tmp, true, false, &["main.o", "libs.so"], &[], &format!("exe{i}"));
        assert_eq!(run(&exe), *want, "library linked with {flags:?}");
        // DF_SYMBOLIC only for plain -Bsymbolic, as lld (and GNU ld) set it.
        let symbolic_flag = facts(&lib)[0].contains("SYMBOLIC");
        assert_eq!(symbolic_flag, flags.last() == Some(&"-Bsymbolic"), "DF_SYMBOLIC with {flags:?}");
    }
    tmp.finish();
}

#[test]
fn rodynamic_makes_dynamic_read_only() {
    let Some(tmp) = setup("dynfacts-rodynamic") else { return };
    let exe = link(&tmp, true, false, &["app.o", "lib.o"], &["-z rodynamic"], "exe");
    let sections = readelf("-SW", &exe);
    let line = sections.lines().find(|l| l.contains(" .dynamic ")).expect("a .dynamic section");
    let flags = line.split_whitespace().rev().nth(3).unwrap();
    assert_eq!(flags, "A", ".dynamic's flags under -z rodynamic: {line}");
    let f = facts(&exe);
    assert!(f.contains(&"(DEBUG) false".to_string()), "no DT_DEBUG in a read-only .dynamic: {f:?}");
    assert!(f.iter().any(|l| l == "DYNAMIC  R"), "PT_DYNAMIC read-only: {f:?}");
    assert_eq!(run(&exe), "1\n");
    tmp.finish();
}

/// The size of a section of `file` (0 when it has none).
fn section_size(file: &Path, name: &str) -> u64 {
    let sections = readelf("-SW", file);
    let line = sections.lines().find(|l| l.split_whitespace().any(|w| w == name));
    line.and_then(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        let at = w.iter().position(|x| *x == name)?;
        u64::from_str_radix(w.get(at + 4)?, 16).ok()
    })
    .unwrap_or(0)
}

#[test]
fn no_relax_keeps_got_loads() {
    let Some(tmp) = setup("dynfacts-relax") else { return };
    // lib.o (-fPIC) loads `counter`'s address from the GOT: relaxed into a lea by default, so the
    // executable needs fewer GOT entries than with --no-relax, which keeps every one.
    let relaxed = link(&tmp, true, false, &["app.o", "lib.o"], &[], "relaxed");
    let kept = link(&tmp, true, false, &["app.o", "lib.o"], &["--no-relax"], "kept");
    let (a, b) = (section_size(&relaxed, ".got"), section_size(&kept, ".got"));
    assert!(b > a, ".got with --no-relax ({b} bytes) should be larger than relaxed ({a} bytes)");
    assert_eq!(run(&relaxed), "1\n");
    assert_eq!(run(&kept), "1\n");
    tmp.finish();
}

#[test]
fn initial_exec_tls_in_a_shared_object_sets_static_tls() {
    let Some(tmp) = setup("dynfacts-static-tls") else { return };
    let tls = "static _Thread_local int foo = 5;\nint bar(void) { return foo; }\n";
    compile(&tmp, "tls.c", tls, &["-fPIC", "-ftls-model=initial-exec"]);
    compile(&tmp, "tls.c", tls, &["-fPIC", "-o", "gd.o"]);
    for (object, flags) in [("tls.o", &[][..]), ("tls.o", &["--no-relax"][..]), ("gd.o", &[][..])] {
        let (gnu, ours) = link_both(&tmp, true, &[object], flags, "tls.so");
        assert_eq!(facts(&gnu)[0], facts(&ours)[0], "DT_FLAGS of a shared object from {object} {flags:?}");
    }
    assert!(facts(&link(&tmp, true, true, &["tls.o"], &[], "ie.so"))[0].contains("STATIC_TLS"));
    tmp.finish();
}

/// (type, binding, visibility, defined or UND) of each named symbol in `.symtab`.
fn symtab_facts(file: &Path, names: &[&str]) -> Vec<String> {
    let symbols = readelf("-sW", file);
    let mut table = symbols.split("Symbol table '.symtab'").nth(1).unwrap_or("").lines();
    let mut out = Vec::new();
    for name in names {
        // GNU ld writes an import's version into its .symtab name (`puts@GLIBC_2.2.5`); lld does not.
        let named = |l: &&str| l.split_whitespace().nth(7).is_some_and(|n| n.split('@').next() == Some(*name));
        let line = table.by_ref().clone().find(named);
        out.push(match line {
            Some(l) => {
                let w: Vec<&str> = l.split_whitespace().collect();
                format!("{name}: {} {} {} {}", w[3], w[4], w[5], if w[6] == "UND" { "UND" } else { "defined" })
            }
            None => format!("{name}: absent"),
        });
    }
    out
}

#[test]
fn symtab_bindings_match_gnu_ld() {
    let Some(tmp) = setup("dynfacts-symtab") else { return };
    compile(
        &tmp,
        "sb.c",
        "#include <stdio.h>\n__attribute__((visibility(\"hidden\"))) void hidden_fn(void) {}\n\
         __attribute__((weak)) void weak_fn(void) {}\nvoid global_fn(void) {}\n\
         extern void maybe(void) __attribute__((weak));\n\
         int main(void) { if (maybe) maybe(); puts(\"hi\"); return 0; }\n",
        &["-fPIC"],
    );
    std::fs::write(tmp.join("local.ver"), "{ global: global_fn; local: *; };\n").unwrap();
    // A version script's `local:` makes weak_fn and main LOCAL with their DEFAULT visibility; an
    // import is GLOBAL when some reference is strong (puts), WEAK when all are weak (maybe).
    let names = ["weak_fn", "global_fn", "main", "puts", "maybe"];
    for (shared, flags) in [(false, &[][..]), (true, &["--version-script=local.ver"][..])] {
        let (gnu, ours) = link_both(&tmp, shared, &["sb.o"], flags, "sym");
        assert_eq!(symtab_facts(&gnu, &names), symtab_facts(&ours, &names), "shared={shared} {flags:?}");
        // A hidden definition becomes local, as lld writes it (GNU ld 2.40 leaves it GLOBAL HIDDEN
        // in executables).
        assert_eq!(symtab_facts(&ours, &["hidden_fn"]), ["hidden_fn: FUNC LOCAL HIDDEN defined"]);
    }
    tmp.finish();
}

#[test]
fn hidden_weak_undefined_is_not_imported() {
    let Some(tmp) = setup("dynfacts-hidden-weak") else { return };
    compile(
        &tmp,
        "hw.c",
        "__attribute__((weak, visibility(\"hidden\"))) void foo(void);\n\
         int bar(void) { return foo ? 1 : 2; }\n",
        &["-fPIC"],
    );
    for ours in [false, true] {
        let lib = link(&tmp, ours, true, &["hw.o"], &[], "libhw.so");
        let dynsym = readelf("--dyn-syms -W", &lib);
        assert!(!dynsym.lines().any(|l| l.ends_with(" foo")), "ours={ours}: foo imported:\n{dynsym}");
        assert!(dynsym.lines().any(|l| l.ends_with(" bar")), "ours={ours}: bar not exported:\n{dynsym}");
        assert!(!readelf("-rW", &lib).contains(" foo"), "ours={ours}: a dynamic relocation names foo");
    }
    tmp.finish();
}

/// The defined `.dynsym` names with their versions (`foo@@V1`), sorted. (GNU ld also writes an
/// absolute symbol per version name, which lld does not: left out.)
fn exported_names(file: &Path) -> Vec<String> {
    let mut names: Vec<String> = readelf("--dyn-syms -W", file)
        .lines()
        .filter(|l| l.contains("GLOBAL") && !l.contains(" UND ") && !l.contains(" ABS "))
        .filter_map(|l| l.split_whitespace().nth(7).map(str::to_string))
        .collect();
    names.sort();
    names
}

#[test]
fn version_script_patterns_match_gnu_ld() {
    let Some(tmp) = setup("dynfacts-verscript") else { return };
    compile(
        &tmp,
        "v.s",
        ".globl foo, bar, baz, all_stars, \"foo?\", xfoobarx\n.text\nfoo:\nbar:\nbaz:\nall_stars:\n\"foo?\":\nxfoobarx:\n ret\n",
        &[],
    );
    std::fs::create_dir_all(tmp.join("scripts")).unwrap();
    // A wildcard beats the catch-all; backslashes escape; a script named by a relative path that
    // is not in the current directory is found in the -L directories.
    std::fs::write(tmp.join("star.ver"), "VER_X1 { global: *; local: b*; };\n").unwrap();
    std::fs::write(tmp.join("scripts/escape.ver"), "VER0 { **; };\nVER1 { foo\\?; };\nVER2 { *foo\\bar*; };\n")
        .unwrap();
    for flags in [&["--version-script=star.ver"][..], &["-Lscripts", "--version-script=escape.ver"][..]] {
        let (gnu, ours) = link_both(&tmp, true, &["v.o"], flags, "v.so");
        assert_eq!(exported_names(&gnu), exported_names(&ours), "{flags:?}");
    }
    tmp.finish();
}

/// The output's GNU property note as `readelf -n` prints it, and its PT_GNU_PROPERTY (size, align)
/// and which PLT sections it has.
fn property_facts(file: &Path) -> Vec<String> {
    let notes = readelf("-nW", file);
    let mut f: Vec<String> = Vec::new();
    let mut inside = false;
    for l in notes.lines() {
        if l.starts_with("Displaying notes found in:") {
            inside = l.contains(".note.gnu.property");
        } else if inside && !l.trim().is_empty() {
            f.push(l.trim().to_string());
        }
    }
    let segments = readelf("-lW", file);
    let line = segments.lines().find(|l| l.trim_start().starts_with("GNU_PROPERTY")).unwrap_or("GNU_PROPERTY absent");
    let w: Vec<&str> = line.split_whitespace().collect();
    f.push(format!("PT_GNU_PROPERTY size {} align {}", w.get(4).unwrap_or(&"-"), w.last().unwrap()));
    let sections = readelf("-SW", file);
    let plts: Vec<&str> =
        sections.split_whitespace().filter(|w| w.starts_with(".plt") && !w.starts_with(".plt.got")).collect();
    f.push(format!("PLT sections {plts:?}"));
    f
}

#[test]
fn gnu_property_note_matches_gnu_ld() {
    let Some(tmp) = setup("dynfacts-property") else { return };
    std::fs::write(tmp.join("cet.c"), "#include <stdio.h>\nint cet(void) { return puts(\"cet\"); }\n").unwrap();
    std::fs::write(tmp.join("plain.c"), "int plain(void) { return 2; }\n").unwrap();
    std::fs::write(tmp.join("cetmain.c"), "int cet(void);\nint main(void) { return cet() < 0; }\n").unwrap();
    let gcc = |args: &[&str]| must(Command::new("gcc").current_dir(&tmp.path).args(args));
    gcc(&["-c", "-fPIC", "-fcf-protection=full", "cet.c", "cetmain.c"]);
    gcc(&["-c", "-fPIC", "-fcf-protection=none", "plain.c"]);
    // (gcc arguments, linker flags): without start files every input is the test's own object.
    let cases: &[(&[&str], &[&str])] = &[
        (&["-shared", "-nostartfiles", "cet.o"], &[]),
        (&["-shared", "-nostartfiles", "cet.o", "plain.o"], &[]),
        (&["-shared", "-nostartfiles", "plain.o"], &["-z ibt"]),
        (&["-shared", "-nostartfiles", "plain.o"], &["-z shstk"]),
        (&["-shared", "-nostartfiles", "cet.o", "plain.o"], &["-z ibt", "-z shstk"]),
        (&["-shared", "-nostartfiles", "plain.o"], &["-z ibtplt"]),
        // With gcc's start files (crti.o has no note, Scrt1.o needs the x86-64 baseline ISA).
        (&["cetmain.o", "cet.o"], &[]),
        (&["cetmain.o", "cet.o"], &["-z ibt", "-z shstk"]),
        (&["-no-pie", "cetmain.o", "cet.o", "plain.o"], &["-z ibtplt"]),
        (&["-static", "cetmain.o", "cet.o"], &["-z shstk"]),
    ];
    let mut failures = Vec::new();
    for (i, (args, flags)) in cases.iter().enumerate() {
        let mut outs = Vec::new();
        for ours in [false, true] {
            let out = format!("prop{i}{ours}");
            let mut cmd = Command::new("gcc");
            cmd.current_dir(&tmp.path);
            if ours {
                cmd.arg("-B").arg(linker_dir(&tmp));
            }
            cmd.args(*args).arg("-o").arg(&out);
            for f in *flags {
                cmd.arg(format!("-Wl,{}", f.replace(' ', ",")));
            }
            must(&mut cmd);
            outs.push(property_facts(&tmp.join(&out)));
        }
        if outs[0] != outs[1] {
            failures.push(format!("{args:?} {flags:?}:\n  GNU ld: {:?}\n  ours:   {:?}", outs[0], outs[1]));
        }
    }
    assert!(failures.is_empty(), "GNU property notes differ from GNU ld's:\n{}", failures.join("\n"));
    // The executables built with IBT PLTs run.
    assert_eq!(run(&tmp.join("prop7true")), "cet\n");
    assert_eq!(run(&tmp.join("prop8true")), "cet\n");
    tmp.finish();
}

#[test]
fn cet_report_names_objects_missing_ibt_or_shstk() {
    let Some(tmp) = setup("dynfacts-cet-report") else { return };
    std::fs::write(tmp.join("cet.c"), "int cet(void) { return 1; }\n").unwrap();
    std::fs::write(tmp.join("plain.c"), "int plain(void) { return 2; }\n").unwrap();
    let gcc = |args: &[&str]| must(Command::new("gcc").current_dir(&tmp.path).args(args));
    gcc(&["-c", "-fPIC", "-fcf-protection=full", "cet.c"]);
    gcc(&["-c", "-fPIC", "-fcf-protection=none", "plain.c"]);
    let link = |report: &str| {
        let mut cmd = Command::new("gcc");
        cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(&tmp));
        cmd.args(["-shared", "-nostartfiles", "cet.o", "plain.o", "-o", "out.so"]);
        cmd.arg(format!("-Wl,-z,cet-report={report}"));
        cmd.output().unwrap()
    };
    let warned = link("warning");
    let log = String::from_utf8_lossy(&warned.stderr).into_owned();
    assert!(warned.status.success(), "{log}");
    for feature in ["IBT", "SHSTK"] {
        let want = format!("plain.o: -cet-report=warning: missing GNU_PROPERTY_X86_FEATURE_1_{feature}");
        assert!(log.contains(&want), "no '{want}' in:\n{log}");
    }
    assert!(!log.contains("cet.o:"), "cet.o has both features:\n{log}");
    let refused = link("error");
    let log = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(!refused.status.success());
    assert!(log.contains("plain.o: -cet-report=error: missing GNU_PROPERTY_X86_FEATURE_1_IBT"), "{log}");
    assert!(link("none").stderr.is_empty());
    tmp.finish();
}

#[test]
fn symver_non_default_version_with_a_script_matches_gnu_ld() {
    let Some(tmp) = setup("dynfacts-symver") else { return };
    // `.symver foo, foo@TEST` keeps a plain foo beside foo@TEST; the script naming foo must not
    // export it as foo@@TEST too. bar1's alias has another name: bar1 stays exported.
    compile(
        &tmp,
        "sv.c",
        "void foo(void) {}\nvoid bar1(void) {}\n__asm__(\".symver foo, foo@TEST\");\n__asm__(\".symver bar1, bar@TEST\");\n",
        &["-fPIC"],
    );
    std::fs::write(tmp.join("sv.ver"), "TEST { global: foo; };\n").unwrap();
    let (gnu, ours) = link_both(&tmp, true, &["sv.o"], &["--version-script=sv.ver"], "sv.so");
    assert_eq!(exported_names(&gnu), exported_names(&ours));
    assert!(exported_names(&ours).contains(&"foo@TEST".to_string()));
    tmp.finish();
}

#[test]
fn export_dynamic_symbol_options_match_gnu_ld() {
    let Some(tmp) = setup("dynfacts-export-sym") else { return };
    compile(
        &tmp,
        "ex.c",
        "void foo(void) {}\nvoid foobar(void) {}\nvoid bar(void) {}\nvoid other(void) {}\nint main(void) { return 0; }\n",
        &["-fPIE"],
    );
    std::fs::write(tmp.join("dyn"), "{ bar; };\n").unwrap();
    for flags in [
        &["--export-dynamic-symbol=foo*"][..],
        &["--export-dynamic-symbol=bar", "--export-dynamic-symbol=foo"][..],
        &["--export-dynamic-symbol-list=dyn"][..],
    ] {
        let (gnu, ours) = link_both(&tmp, false, &["ex.o"], flags, "exe");
        assert_eq!(exported_names(&gnu), exported_names(&ours), "{flags:?}");
        assert!(!exported_names(&ours).is_empty(), "{flags:?}: nothing exported");
    }
    tmp.finish();
}

/// The RELATIVE relocations of the output's `.rela.dyn` and the addresses `.relr.dyn` relocates,
/// as readelf decodes them.
fn relative_relocations(file: &Path) -> (Vec<String>, Vec<String>) {
    let text = readelf("-rW", file);
    let (mut rela, mut relr) = (Vec::new(), Vec::new());
    let mut in_relr = false;
    for line in text.lines() {
        if line.starts_with("Relocation section") {
            in_relr = line.contains(".relr.dyn");
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        if in_relr && w.len() == 1 && u64::from_str_radix(w[0], 16).is_ok() {
            relr.push(w[0].to_string());
        } else if !in_relr && w.get(2) == Some(&"R_X86_64_RELATIVE") {
            rela.push(w[0].to_string());
        }
    }
    (rela, relr)
}

#[test]
fn pack_relative_relocs_matches_gnu_ld() {
    let Some(tmp) = setup("relr") else { return };
    // Word-aligned pointers pack; one at an odd offset cannot, and stays in .rela.dyn.
    let source = "#include <stdio.h>\n\
        static int a = 1, b = 2;\n\
        int *ptrs[] = {&a, &b, &a, &b, 0};\n\
        struct __attribute__((packed)) odd { char c; int *p; } odd = {0, &b};\n\
        int main(void) { int s = 0; for (int i = 0; ptrs[i]; i++) s += *ptrs[i]; printf(\"%d %d\\n\", s, *odd.p); return 0; }\n";
    compile(&tmp, "relr.c", source, &["-fPIC"]);
    // (GNU ld's flags, ours: lld's --pack-dyn-relocs has no GNU ld spelling), whether the output
    // packs, whether it needs GLIBC_ABI_DT_RELR (glibc refuses to load DT_RELR without it, so
    // both spellings ask for it).
    let z = &["-z pack-relative-relocs"][..];
    for (gnu_flags, flags, relr, glibc) in [
        (z, z, true, true),
        (z, &["--pack-dyn-relocs=relr"][..], true, true),
        (&[][..], &["-z pack-relative-relocs", "-z nopack-relative-relocs"][..], false, false),
    ] {
        let gnu = link(&tmp, false, false, &["relr.o", "-pie"], gnu_flags, "gnu-relr");
        let ours = link(&tmp, true, false, &["relr.o", "-pie"], flags, "ours-relr");
        assert_eq!(run(&ours), "6 2\n", "{flags:?}");
        let (g, o) = (relative_relocations(&gnu), relative_relocations(&ours));
        // Which relocations are packed agrees with GNU ld (addresses differ between the linkers).
        assert_eq!((g.0.len(), g.1.len()), (o.0.len(), o.1.len()), "{flags:?}: GNU ld {g:?}, ours {o:?}");
        assert_eq!(!o.1.is_empty(), relr, "{flags:?}: {o:?}");
        assert_eq!(readelf("-dW", &ours).contains("(RELR)"), relr, "{flags:?}");
        assert_eq!(readelf("-VW", &ours).contains("GLIBC_ABI_DT_RELR"), glibc, "{flags:?}");
    }
    // --use-android-relr-tags: the same packing under Android's tags and section type (lld's
    // option; glibc does not read them, so the program is for Android's loader, not run here).
    let flags = &["--pack-dyn-relocs=relr", "--use-android-relr-tags"];
    let ours = link(&tmp, true, false, &["relr.o", "-pie"], flags, "android");
    let dynamic = readelf("-dW", &ours);
    assert!(dynamic.contains("0x000000006fffe000") && !dynamic.contains("(RELR)"), "{dynamic}");
    assert!(readelf("-SW", &ours).contains("LOOS+0xfffff00"), "{}", readelf("-SW", &ours));
}

/// `llvm-readelf -SW`'s allocated sections: (name, address, size).
fn alloc_sections(file: &Path) -> Vec<(String, u64, u64)> {
    let out = must(Command::new("llvm-readelf").arg("-SW").arg(file));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_once(']')?.1.split_whitespace().collect();
            let (addr, size) = (u64::from_str_radix(f.get(2)?, 16).ok()?, u64::from_str_radix(f.get(4)?, 16).ok()?);
            (addr != 0 && f.get(6).is_some_and(|fl| fl.contains('A'))).then(|| (f[0].to_string(), addr, size))
        })
        .collect()
}

/// The dynamic relocations of `.rela.dyn` as `llvm-readelf -rW` decodes them (it reads Android's
/// packed format too), each address written as its section and the offset in it, so that two
/// links with different layouts compare: "TYPE SECTION+OFF SYMBOL ADDEND", sorted.
fn dynamic_relocations(file: &Path) -> Vec<String> {
    let sections = alloc_sections(file);
    let at = |a: u64| match sections.iter().find(|(_, s, n)| a >= *s && a < s + (*n).max(1)) {
        Some((name, s, _)) => format!("{name}+{:#x}", a - s),
        None => format!("{a:#x}"),
    };
    let out = must(Command::new("llvm-readelf").arg("-rW").arg(file));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut in_dyn = false;
    let mut rels = Vec::new();
    for line in text.lines() {
        if line.starts_with("Relocation section") {
            in_dyn = line.contains("'.rela.dyn'");
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        let Some(offset) = w.first().and_then(|o| u64::from_str_radix(o, 16).ok()) else { continue };
        if !in_dyn || w.len() < 3 {
            continue;
        }
        let rel = match w[2] {
            // Its addend is an address: where it points.
            "R_X86_64_RELATIVE" => format!("RELATIVE {} - {}", at(offset), at(u64::from_str_radix(w[3], 16).unwrap())),
            ty => format!("{ty} {} {}", at(offset), w[4..].join(" ")),
        };
        rels.push(rel);
    }
    rels.sort();
    rels
}

#[test]
fn android_packed_relocations_decode_as_the_plain_ones() {
    let Some(tmp) = setup("aps2") else { return };
    if !have("llvm-readelf") {
        eprintln!("skipped: llvm-readelf (which decodes Android's packed relocations) missing");
        return;
    }
    // Pointers to local and imported data and functions (RELATIVE, symbolic R_X86_64_64 with
    // addends, GLOB_DAT), runs of them (grouped), and TLS through the GOT (DTPMOD64 and a TPOFF64
    // without a symbol in a shared object; TPOFF64 against an imported variable).
    let source = "#include <stdio.h>\n\
        extern int counter;\n\
        extern __thread int tls_in_lib;\n\
        static __thread int tls_here = 3;\n\
        static int a = 1, b = 2, c[8];\n\
        int *ptrs[] = {&a, &b, &a, &b, &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7], &a, &b};\n\
        int *imported[] = {&counter, &counter + 1, &counter, &counter, &counter};\n\
        void *funcs[] = {(void *)puts, (void *)printf, (void *)puts};\n\
        int tls_sum(void) { return tls_here + tls_in_lib; }\n\
        int sum(void) { return *ptrs[0] + *imported[0] + (funcs[0] != 0); }\n";
    compile(&tmp, "packed.c", source, &["-fPIC"]);
    compile(&tmp, "tlslib.c", "int counter = 4;\n__thread int tls_in_lib = 5;\n", &["-fPIC"]);
    compile(
        &tmp,
        "ie.c",
        "extern __thread int tls_in_lib;\nint ie(void) { return tls_in_lib; }\n",
        &["-fPIC", "-ftls-model=initial-exec"],
    );
    compile(
        &tmp,
        "pmain.c",
        "int sum(void);\nint tls_sum(void);\nint main(void) { return sum() + tls_sum() == 0; }\n",
        &["-fPIC"],
    );
    link(&tmp, false, true, &["tlslib.o"], &[], "libtlslib.so");
    let lld_dir = tmp.join("lld");
    std::fs::create_dir_all(&lld_dir).unwrap();
    let lld = have("ld.lld-19").then(|| std::os::unix::fs::symlink(which("ld.lld-19"), lld_dir.join("ld")).unwrap());
    for (shared, inputs) in [
        (true, &["packed.o", "ie.o", "-L.", "-ltlslib"][..]),
        (false, &["packed.o", "pmain.o", "ie.o", "-L.", "-ltlslib", "-pie"][..]),
    ] {
        let plain = link(&tmp, true, shared, inputs, &[], "plain");
        let expected = dynamic_relocations(&plain);
        assert!(expected.len() > 20, "{expected:#?}");
        for format in ["android", "android+relr"] {
            let flag = format!("--pack-dyn-relocs={format}");
            let packed = link(&tmp, true, shared, inputs, &[&flag], "packed");
            // Android's section type and tags instead of SHT_RELA, DT_RELA and DT_RELASZ.
            let headers = must(Command::new("llvm-readelf").arg("-SW").arg(&packed));
            let headers = String::from_utf8_lossy(&headers.stdout).into_owned();
            assert!(headers.lines().any(|l| l.contains(" .rela.dyn ") && l.contains("ANDROID_RELA")), "{headers}");
            let dynamic = must(Command::new("llvm-readelf").arg("-dW").arg(&packed));
            let dynamic = String::from_utf8_lossy(&dynamic.stdout).into_owned();
            assert!(dynamic.contains("(ANDROID_RELA)") && dynamic.contains("(ANDROID_RELASZ)"), "{dynamic}");
            assert!(!dynamic.contains("(RELA)") && !dynamic.contains("(RELACOUNT)"), "{dynamic}");
            // The same relocations, decoded from the packed stream (with relr, the RELATIVE
            // ones are in .relr.dyn instead).
            let relr = format == "android+relr";
            let want: Vec<String> = expected.iter().filter(|r| !relr || !r.starts_with("RELATIVE")).cloned().collect();
            assert_eq!(dynamic_relocations(&packed), want, "{format}, shared {shared}");
            assert_eq!(dynamic.contains("(RELR)"), relr, "{dynamic}");
            // Smaller than the plain table it stands for.
            let size = |f: &Path| alloc_sections(f).into_iter().find(|s| s.0 == ".rela.dyn").map_or(0, |s| s.2);
            assert!(size(&packed) * 2 < 24 * want.len() as u64, "{format}: {} bytes for {}", size(&packed), want.len());
            // lld packs the same relocations (its layout differs: compare types and symbols).
            if lld.is_some() {
                let mut cmd = Command::new("gcc");
                cmd.current_dir(&tmp.path).arg("-B").arg(&lld_dir).args(inputs).arg(format!("-Wl,{flag}"));
                if shared {
                    cmd.arg("-shared");
                }
                must(cmd.arg("-o").arg("lld-packed"));
                let kinds = |rels: Vec<String>| {
                    let mut k: Vec<String> = rels
                        .iter()
                        .map(|r| {
                            let w: Vec<&str> = r.split_whitespace().collect();
                            format!("{} {}", w[0], if w[0] == "RELATIVE" { "" } else { w.get(2).unwrap_or(&"") })
                        })
                        // An executable leaves crt's undefined weak symbols to 0, not to the
                        // loader, as mold does; lld 19 imports them.
                        .filter(|k| {
                            !["__gmon_start__", "_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable"]
                                .iter()
                                .any(|weak| k.ends_with(weak))
                        })
                        .collect();
                    k.sort();
                    k
                };
                let ours = kinds(dynamic_relocations(&packed));
                let theirs = kinds(dynamic_relocations(&tmp.join("lld-packed")));
                assert_eq!(ours, theirs, "{format}, shared {shared}: rivet against lld");
            }
        }
    }
    tmp.finish();
}

/// A tool's path on PATH.
fn which(tool: &str) -> PathBuf {
    let out = must(Command::new("sh").args(["-c", &format!("command -v {tool}")]));
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

#[test]
fn package_metadata_note_matches_gnu_ld() {
    let Some(tmp) = setup("package-metadata") else { return };
    // No comma: the flags reach the linker through -Wl, which splits at commas.
    let json = r#"{"name":"rivet-test"}"#;
    let metadata = |file: &Path| {
        let notes = readelf("-nW", file);
        notes.lines().find_map(|l| l.split("Packaging Metadata: ").nth(1).map(|m| m.trim().to_string()))
    };
    let flag = format!("--package-metadata={json}");
    let (gnu, ours) = link_both(&tmp, false, &["app.o", "lib.o"], &[flag.as_str()], "pkg");
    assert_eq!(metadata(&ours), Some(json.to_string()));
    assert_eq!(metadata(&ours), metadata(&gnu));
    assert!(readelf("-SW", &ours).contains(".note.package"));
    // %XX escapes are decoded, as lld does (GNU ld takes the text as it is).
    let escaped = "--package-metadata=%7B%22name%22%3A%22rivet-test%22%7D";
    let decoded = link(&tmp, true, false, &["app.o", "lib.o"], &[escaped], "pkg-escaped");
    assert_eq!(metadata(&decoded), Some(json.to_string()));
    // A broken escape is an error naming the option.
    let stderr = link_fails(&tmp, &["app.o", "lib.o"], "--package-metadata=foo%x");
    assert!(stderr.contains("--package-metadata: invalid string: foo%x"), "{stderr}");
}

#[test]
fn build_id_sizes_match_lld() {
    let Some(tmp) = setup("build-id-sizes") else { return };
    let size = |file: &Path| {
        let notes = readelf("-nW", file);
        let line = notes.lines().find(|l| l.contains("NT_GNU_BUILD_ID")).unwrap_or("").to_string();
        line.split_whitespace().nth(1).map(str::to_string).unwrap_or_default()
    };
    // (style, descriptor size): lld's and GNU ld's for sha1/md5/uuid/sha256; `fast` is 32 bytes as
    // mold makes it.
    for (style, want) in [
        ("sha1", "0x00000014"),
        ("md5", "0x00000010"),
        ("uuid", "0x00000010"),
        ("sha256", "0x00000020"),
        ("fast", "0x00000020"),
    ] {
        let flag = format!("--build-id={style}");
        let ours = link(&tmp, true, false, &["app.o", "lib.o"], &[flag.as_str()], &format!("bid-{style}"));
        assert_eq!(size(&ours), want, "{style}");
        assert_eq!(run(&ours), "1\n", "{style}");
    }
}

#[test]
fn compression_levels() {
    let Some(tmp) = setup("compress-levels") else { return };
    // Enough debug info (many similar types) that compression pays at every level.
    let mut source = String::from("#include <stdio.h>\n");
    for i in 0..200 {
        source.push_str(&format!(
            "struct s{i} {{ int field_a{i}; long field_b{i}; char name{i}[8]; }};\nstruct s{i} v{i};\n"
        ));
    }
    source.push_str("int main(void) { printf(\"%d\\n\", (int)sizeof v199); return 0; }\n");
    compile(&tmp, "dbg.c", &source, &["-g"]);
    let flags = |f: &'static str| [f];
    let fast = link(&tmp, true, false, &["dbg.o"], &flags("--compress-debug-sections=zlib:1"), "z1");
    let best = link(&tmp, true, false, &["dbg.o"], &flags("--compress-debug-sections=zlib:9"), "z9");
    let zstd = link(&tmp, true, false, &["dbg.o"], &flags("--compress-debug-sections=zstd:1"), "zs1");
    for exe in [&fast, &best, &zstd] {
        assert_eq!(run(exe), "24\n");
        // readelf -S marks compressed sections with C.
        let debug_info = readelf("-SW", exe).lines().find(|l| l.contains(".debug_info")).unwrap_or("").to_string();
        assert!(debug_info.split_whitespace().any(|w| w.contains('C')), "{debug_info}");
    }
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&best) <= size(&fast), "level 9 gave {} bytes, level 1 {}", size(&best), size(&fast));
    // Levels out of range are errors.
    for (flag, message) in [
        ("--compress-debug-sections=zlib:10", "zlib level must be between 0 and 9"),
        ("--compress-debug-sections=zstd:0", "zstd level must be between 1 and 22"),
        ("--compress-debug-sections=zstd:23", "zstd level must be between 1 and 22"),
    ] {
        let stderr = link_fails(&tmp, &["dbg.o"], flag);
        assert!(stderr.contains(message), "{flag}: {stderr}");
    }
}

/// `-z nodynamic-undefined-weak`: a shared library's undefined weak symbol is bound to 0 at link
/// time (not in .dynsym), so the executable's definition is not seen; by default it is left to the
/// loader (GNU ld's behaviour), and `-z dynamic-undefined-weak` asks for that explicitly. In a PIE,
/// `-z dynamic-undefined-weak` imports it (mold's option; lld 19 lacks it).
#[test]
fn dynamic_undefined_weak() {
    let Some(tmp) = setup("dyn-undef-weak") else { return };
    let weak = "__attribute__((weak)) int foo(void);\nint bar(void) { return foo ? foo() : 0; }\n";
    let exe = "#include <stdio.h>\nint foo(void) { return 1; }\nint bar(void);\nint main(void) { printf(\"%d\\n\", bar()); return 0; }\n";
    std::fs::write(tmp.join("weak.c"), weak).unwrap();
    std::fs::write(tmp.join("exe.c"), exe).unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-fPIC", "weak.c", "exe.c"]));
    for (flags, expect, in_dynsym) in [
        (&[][..], "1", true),
        (&["-z dynamic-undefined-weak"][..], "1", true),
        (&["-z nodynamic-undefined-weak"][..], "0", false),
    ] {
        let lib = link(&tmp, true, true, &["weak.o"], flags, "libweak.so");
        let dynsym = Command::new("readelf").args(["--dyn-syms", "-W"]).arg(&lib).output().unwrap();
        let has = String::from_utf8_lossy(&dynsym.stdout).lines().any(|l| l.ends_with(" foo"));
        assert_eq!(has, in_dynsym, "{flags:?}");
        let prog = link(&tmp, true, false, &["exe.o", "./libweak.so"], &[], "prog");
        let run = must(Command::new(&prog).current_dir(&tmp.path));
        assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), expect, "{flags:?}");
    }
    // A PIE: undefined weak imported with the option, 0 without.
    std::fs::write(tmp.join("pie.c"), "#include <stdio.h>\n__attribute__((weak)) extern int foo;\nint main(void) { printf(\"%d\\n\", &foo == 0); return 0; }\n").unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-fPIE", "pie.c"]));
    for (flags, imported) in [(&[][..], false), (&["-z dynamic-undefined-weak"][..], true)] {
        let exe = link(&tmp, true, false, &["pie.o"], flags, "pie");
        let dynsym = Command::new("readelf").args(["--dyn-syms", "-W"]).arg(&exe).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&dynsym.stdout).lines().any(|l| l.ends_with(" foo")), imported, "{flags:?}");
        assert_eq!(String::from_utf8_lossy(&must(&mut Command::new(&exe)).stdout).trim(), "1");
    }
    tmp.finish();
}

/// `--default-symver`: a shared library's definitions get its soname (else the output's file name)
/// as version, as GNU ld gives them (lld 19 lacks the option); a program linked against it binds
/// that version and runs.
#[test]
fn default_symver_matches_gnu_ld() {
    let Some(tmp) = setup("default-symver") else { return };
    let versioned = |file: &str| {
        let out = must(Command::new("readelf").args(["--dyn-syms", "-W"]).arg(tmp.join(file)));
        let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().nth(7).filter(|n| n.contains('@')).map(String::from))
            .filter(|n| !n.contains("GLIBC"))
            .collect();
        v.sort();
        v
    };
    for (flags, expect) in [
        (&["--default-symver"][..], "get@@libgnu.so"),
        (&["--default-symver", "-soname libx.so.1"][..], "get@@libx.so.1"),
    ] {
        let gnu = link(&tmp, false, true, &["lib.o"], flags, "libgnu.so");
        let gnu_syms = versioned("libgnu.so");
        std::fs::rename(&gnu, tmp.join("libkeep.so")).unwrap();
        // Same file name for ours, so the version (when it is the file's name) is comparable.
        link(&tmp, true, true, &["lib.o"], flags, "libgnu.so");
        assert_eq!(versioned("libgnu.so"), gnu_syms, "{flags:?}");
        assert!(gnu_syms.iter().any(|n| n == expect), "{flags:?}: {gnu_syms:?}");
        let prog = link(&tmp, true, false, &["app.o", "./libgnu.so"], &[], "app");
        if flags.len() > 1 {
            // The program needs the library by its soname.
            std::fs::copy(tmp.join("libgnu.so"), tmp.join("libx.so.1")).unwrap();
        }
        must(Command::new(&prog).current_dir(&tmp.path).env("LD_LIBRARY_PATH", &tmp.path));
    }
    tmp.finish();
}
