//! Options that order sections, name audit libraries, report on the inputs and stamp the output,
//! each checked against the linker that defines it: lld (`--shuffle-sections=GLOB=SEED`,
//! `--symbol-ordering-file`, `--warn-backrefs`, the `.comment` stamp, `__start_`/`__stop_` symbols
//! and `-z start-stop-visibility`), GNU ld (`--audit`,
//! `--depaudit`/`-P`) and mold (`--shuffle-sections[=SEED]`, `--reverse-sections`,
//! `--section-align`, `--print-dependencies`), with real C and C++ programs compiled here, linked,
//! run and compared.
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const LLD: &str = "/usr/lib/llvm-19/bin/ld.lld";

fn setup(name: &str, tools: &[&str]) -> Option<TempDir> {
    if !testing_rivet() {
        return None;
    }
    for t in tools {
        let found = if t.starts_with('/') { Path::new(t).exists() } else { have(t) };
        if !found {
            eprintln!("skipped: {t} missing");
            return None;
        }
    }
    Some(TempDir::new(name))
}

/// A directory with `ld` → `linker`, for `gcc -B`.
fn ld_dir(tmp: &TempDir, name: &str, linker: &Path) -> PathBuf {
    let dir = tmp.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let _ = std::fs::remove_file(dir.join("ld"));
    std::os::unix::fs::symlink(linker, dir.join("ld")).unwrap();
    dir
}

fn rivet_dir(tmp: &TempDir) -> PathBuf {
    linker_dir(tmp)
}

fn write(tmp: &TempDir, name: &str, text: &str) {
    std::fs::write(tmp.join(name), text).unwrap();
}

fn run_in(tmp: &TempDir, prog: &str, args: &[&str]) -> std::process::Output {
    must(Command::new(prog).current_dir(&tmp.path).args(args))
}

/// `gcc -B dir` link (or compile) in `tmp`; gives stderr.
fn gcc(tmp: &TempDir, dir: Option<&Path>, args: &[&str]) -> String {
    let mut cmd = Command::new("gcc");
    cmd.current_dir(&tmp.path);
    if let Some(d) = dir {
        cmd.arg("-B").arg(d);
    }
    let o = must(cmd.args(args));
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout_of(path: &Path) -> String {
    String::from_utf8_lossy(&must(&mut Command::new(path)).stdout).into_owned()
}

/// The names of the functions `names` in address order.
fn address_order(exe: &Path, names: &[String]) -> Vec<String> {
    let o = must(Command::new("nm").arg("-n").arg(exe));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| names.iter().any(|m| m == n))
        .map(str::to_string)
        .collect()
}

/// Warnings with the linker's name taken off (`ld.lld: warning: x` → `warning: x`).
fn warnings(stderr: &str) -> Vec<String> {
    stderr.lines().filter_map(|l| l.find("warning: ").map(|at| l[at..].to_string())).collect()
}

/// Twenty functions, each in its own section, and a main that calls them all.
fn many_functions(tmp: &TempDir) -> Vec<String> {
    let names: Vec<String> = (1..=20).map(|i| format!("fn{i}")).collect();
    let mut src = String::from("#include <stdio.h>\nint total;\n");
    for (i, n) in names.iter().enumerate() {
        src.push_str(&format!("void {n}(void) {{ total += {}; }}\n", i + 1));
    }
    src.push_str("int main(void) {\n");
    for n in &names {
        src.push_str(&format!("  {n}();\n"));
    }
    src.push_str("  printf(\"%d\\n\", total);\n  return 0;\n}\n");
    write(tmp, "many.c", &src);
    gcc(tmp, None, &["-c", "-O1", "-ffunction-sections", "many.c"]);
    names
}

#[test]
fn shuffle_and_reverse_sections() {
    let Some(tmp) = setup("shuffle", &["gcc", "g++", "nm", LLD]) else { return };
    let names = many_functions(&tmp);
    let (ours, lld) = (rivet_dir(&tmp), ld_dir(&tmp, "lld-bin", Path::new(LLD)));
    gcc(&tmp, Some(&ours), &["many.o", "-o", "plain"]);
    let plain = address_order(&tmp.join("plain"), &names);
    assert_eq!(plain, names, "without an option the functions are in input order");
    // lld's form: seed -1 reverses the matching sections, as lld does.
    for (dir, out) in [(&ours, "rev-ours"), (&lld, "rev-lld")] {
        gcc(&tmp, Some(dir), &["many.o", "-o", out, "-Wl,--shuffle-sections=.text.fn*=-1"]);
        assert_eq!(stdout_of(&tmp.join(out)), "210\n");
    }
    let reversed: Vec<String> = names.iter().rev().cloned().collect();
    assert_eq!(address_order(&tmp.join("rev-lld"), &names), reversed);
    assert_eq!(address_order(&tmp.join("rev-ours"), &names), reversed);
    // mold's form: a seed gives one order, the same every time, another seed another one.
    let shuffled = |out: &str, opt: &str| {
        gcc(&tmp, Some(&ours), &["many.o", "-o", out, &format!("-Wl,{opt}")]);
        assert_eq!(stdout_of(&tmp.join(out)), "210\n", "{opt}");
        address_order(&tmp.join(out), &names)
    };
    let a = shuffled("s42a", "--shuffle-sections=42");
    assert_ne!(a, names);
    let mut sorted = a.clone();
    sorted.sort();
    let mut expected = names.clone();
    expected.sort();
    assert_eq!(sorted, expected);
    shuffled("s42b", "--shuffle-sections=42");
    assert_eq!(std::fs::read(tmp.join("s42a")).unwrap(), std::fs::read(tmp.join("s42b")).unwrap());
    assert_ne!(shuffled("s5", "--shuffle-sections=5"), a);
    assert_ne!(shuffled("random", "--shuffle-sections"), names);
    // --reverse-sections (mold): constructors of each file run in the order of their files
    // reversed, and the functions are reversed too.
    for (name, first, second) in [("a", 1, 2), ("b", 3, 4), ("c", 5, 6)] {
        let mut src = String::from("#include <cstdio>\n");
        for (i, n) in [first, second].iter().enumerate() {
            src.push_str(&format!("static struct S{n} {{ S{n}() {{ std::printf(\"foo{n} \"); }} }} x{i};\n"));
        }
        if name == "c" {
            src.push_str("int main() { std::printf(\"\\n\"); }\n");
        }
        write(&tmp, &format!("{name}.cpp"), &src);
    }
    must(Command::new("g++").current_dir(&tmp.path).args(["-c", "a.cpp", "b.cpp", "c.cpp"]));
    for (out, extra, expected) in [
        ("ctor", None, "foo1 foo2 foo3 foo4 foo5 foo6 \n"),
        ("ctor-rev", Some("-Wl,--reverse-sections"), "foo5 foo6 foo3 foo4 foo1 foo2 \n"),
    ] {
        let mut cmd = Command::new("g++");
        cmd.current_dir(&tmp.path).arg("-B").arg(&ours).args(["a.o", "b.o", "c.o", "-o", out]);
        cmd.args(extra);
        must(&mut cmd);
        assert_eq!(stdout_of(&tmp.join(out)), expected);
    }
    gcc(&tmp, Some(&ours), &["many.o", "-o", "rev-mold", "-Wl,--reverse-sections"]);
    assert_eq!(stdout_of(&tmp.join("rev-mold")), "210\n");
    assert_eq!(address_order(&tmp.join("rev-mold"), &names), reversed);
    tmp.finish();
}

#[test]
fn symbol_ordering_file_orders_and_warns_as_lld() {
    let Some(tmp) = setup("symbol-ordering", &["gcc", "nm", "ar", LLD]) else { return };
    write(
        &tmp,
        "so.c",
        "#include <stdio.h>\nvoid fa(void) { puts(\"a\"); }\nvoid fb(void) { puts(\"b\"); }\n\
         void fc(void) { puts(\"c\"); }\nstatic void loc(void) { puts(\"l\"); }\nint d1 = 1, d2 = 2;\n\
         extern void undef_fn(void) __attribute__((weak));\n\
         int main(void) { fa(); fb(); fc(); loc(); if (undef_fn) undef_fn(); return d1 + d2 - 3; }\n",
    );
    gcc(&tmp, None, &["-c", "-ffunction-sections", "-fdata-sections", "so.c"]);
    // A member nothing fetches: lld calls its symbol undefined, from <internal>.
    write(&tmp, "lz.c", "int lazyfn(void) { return 1; }\n");
    gcc(&tmp, None, &["-c", "lz.c"]);
    run_in(&tmp, "ar", &["rcs", "liblz.a", "lz.o"]);
    write(&tmp, "order.txt", "fc\n  loc \n# a comment\n\nfb\nmissing\nfc\nd2\nundef_fn\nlazyfn\nputs\n");
    let names: Vec<String> = ["fa", "fb", "fc", "loc", "main", "d1", "d2"].map(String::from).to_vec();
    let (ours, lld) = (rivet_dir(&tmp), ld_dir(&tmp, "lld-bin", Path::new(LLD)));
    let mut orders = Vec::new();
    let mut said = Vec::new();
    for (dir, out) in [(&lld, "lld"), (&ours, "ours")] {
        let stderr = gcc(&tmp, Some(dir), &["so.o", "liblz.a", "-o", out, "-Wl,--symbol-ordering-file=order.txt"]);
        assert_eq!(stdout_of(&tmp.join(out)), "a\nb\nc\nl\n");
        orders.push(address_order(&tmp.join(out), &names));
        let mut w = warnings(&stderr);
        // lld says the shared symbol's line twice (libc.so.6 comes in twice through libc.so).
        w.sort();
        w.dedup();
        said.push(w);
    }
    assert_eq!(orders[0], ["fc", "loc", "fb", "fa", "main", "d2", "d1"]);
    assert_eq!(orders[1], orders[0]);
    for w in [
        "warning: order.txt: duplicate ordered symbol: fc",
        "warning: so.o: unable to order undefined symbol: undef_fn",
        "warning: <internal>: unable to order undefined symbol: lazyfn",
        "warning: /lib/x86_64-linux-gnu/libc.so.6: unable to order shared symbol: puts",
        "warning: symbol ordering file: no such symbol: missing",
    ] {
        assert!(said[0].iter().any(|l| l == w), "lld: {:?}", said[0]);
    }
    assert_eq!(said[1], said[0]);
    // --no-warn-symbol-ordering: the same order, no word.
    let stderr = gcc(
        &tmp,
        Some(&ours),
        &["so.o", "-o", "quiet", "-Wl,--symbol-ordering-file=order.txt", "-Wl,--no-warn-symbol-ordering"],
    );
    assert!(warnings(&stderr).is_empty(), "{stderr}");
    assert_eq!(address_order(&tmp.join("quiet"), &names), orders[0]);
    // A missing file is an error naming it.
    let o = Command::new("gcc")
        .current_dir(&tmp.path)
        .arg("-B")
        .arg(&ours)
        .args(["so.o", "-o", "none", "-Wl,--symbol-ordering-file=nothere.txt"])
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("cannot open nothere.txt"));
    tmp.finish();
}

#[test]
fn section_align_sets_the_output_alignment() {
    let Some(tmp) = setup("section-align", &["gcc", "readelf"]) else { return };
    write(&tmp, "a.c", "__attribute__((section(\".foo\"))) int foo = 1;\nint main(void) { return foo - 1; }\n");
    gcc(&tmp, None, &["-c", "a.c"]);
    let ours = rivet_dir(&tmp);
    for (align, out) in [("0x2000", "exe1"), ("256", "exe2")] {
        gcc(&tmp, Some(&ours), &["a.o", "-o", out, &format!("-Wl,--section-align=.foo={align}")]);
        let o = must(Command::new("readelf").args(["-WS"]).arg(tmp.join(out)));
        let text = String::from_utf8_lossy(&o.stdout);
        let line = text.lines().find(|l| l.contains(" .foo ")).expect(".foo in the output");
        let fields: Vec<&str> = line.split_whitespace().collect();
        let want = parse_int(align);
        assert_eq!(fields.last().unwrap().parse::<u64>().unwrap(), want, "{line}");
        let addr = u64::from_str_radix(fields[fields.iter().position(|f| *f == "PROGBITS").unwrap() + 1], 16).unwrap();
        assert_eq!(addr % want, 0, "{line}");
        must(&mut Command::new(tmp.join(out)));
    }
    let o = Command::new("gcc")
        .current_dir(&tmp.path)
        .arg("-B")
        .arg(&ours)
        .args(["a.o", "-o", "exe3", "-Wl,--section-align=.foo=3"])
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("must be a power of 2"));
    tmp.finish();
}

fn parse_int(s: &str) -> u64 {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap(),
        None => s.parse().unwrap(),
    }
}

/// The AUDIT and DEPAUDIT lines of `readelf -d`.
fn audit_lines(exe: &Path) -> Vec<String> {
    let o = must(Command::new("readelf").arg("-d").arg(exe));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains("AUDIT"))
        .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn audit_entries_as_gnu_ld_writes_them() {
    let Some(tmp) = setup("audit", &["gcc", "readelf", "ld.bfd"]) else { return };
    write(&tmp, "a.c", "int main(void) { return 0; }\n");
    write(&tmp, "l.c", "void lib(void) {}\n");
    gcc(&tmp, None, &["-c", "a.c"]);
    let (ours, bfd) = (rivet_dir(&tmp), ld_dir(&tmp, "bfd-bin", Path::new("/usr/bin/ld.bfd")));
    // A library with audit libraries of its own: they audit what links against it.
    gcc(&tmp, Some(&bfd), &["-shared", "-fPIC", "l.c", "-o", "libl.so", "-Wl,--audit=/x/a.so", "-Wl,--audit=b.so"]);
    let args = ["a.o", "-Wl,--audit=foo", "-Wl,-P,bar", "-Wl,--depaudit=baz", "-Wl,--no-as-needed", "libl.so"];
    let mut seen = Vec::new();
    for (dir, out) in [(&bfd, "bfd"), (&ours, "ours")] {
        let mut a = args.to_vec();
        a.extend(["-o", out]);
        gcc(&tmp, Some(dir), &a);
        seen.push(audit_lines(&tmp.join(out)));
    }
    assert_eq!(
        seen[0],
        ["(AUDIT) Audit library: [foo]", "(DEPAUDIT) Dependency audit library: [bar:baz:/x/a.so:b.so]"]
    );
    assert_eq!(seen[1], seen[0]);
    // A shared library of our own with DT_AUDIT, and nothing without the options.
    gcc(&tmp, Some(&ours), &["-shared", "-fPIC", "l.c", "-o", "libours.so", "-Wl,--audit=x:y", "-Wl,--audit=z"]);
    assert_eq!(audit_lines(&tmp.join("libours.so")), ["(AUDIT) Audit library: [x:y:z]"]);
    gcc(&tmp, Some(&ours), &["a.o", "-o", "plain"]);
    assert!(audit_lines(&tmp.join("plain")).is_empty());
    must(&mut Command::new(tmp.join("plain")));
    tmp.finish();
}

#[test]
fn print_dependencies_in_molds_format() {
    let Some(tmp) = setup("print-deps", &["gcc"]) else { return };
    write(&tmp, "a.c", "void foo(void) {}\n");
    write(
        &tmp,
        "b.c",
        "void foo(void);\nextern void maybe(void) __attribute__((weak));\nint puts(const char *);\n\
        int main(void) { foo(); if (maybe) maybe(); puts(\"x\"); return 0; }\n",
    );
    write(&tmp, "c.c", "void maybe(void) {}\n");
    gcc(&tmp, None, &["-c", "a.c", "b.c", "c.c"]);
    let o = must(Command::new(linker()).current_dir(&tmp.path).args([
        "--print-dependencies",
        "-o",
        "exe",
        "a.o",
        "b.o",
        "c.o",
        "/lib/x86_64-linux-gnu/libc.so.6",
        "--allow-shlib-undefined",
        "-e",
        "main",
    ]));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(lines.contains(&"b.o:(.text)\ta.o:(.text)\tu\tfoo"), "{text}");
    assert!(lines.contains(&"b.o:(.text)\tc.o:(.text)\tw\tmaybe"), "{text}");
    assert!(lines.contains(&"b.o:(.text)\t/lib/x86_64-linux-gnu/libc.so.6\tu\tputs"), "{text}");
    // Nobody depends on b.o, and a.o and c.o depend on nothing.
    assert!(lines.iter().all(|l| l.starts_with("b.o:") || l.starts_with("/lib")), "{text}");
    tmp.finish();
}

#[test]
fn warn_backrefs_as_lld() {
    let Some(tmp) = setup("warn-backrefs", &["gcc", "ar", LLD]) else { return };
    write(&tmp, "m.c", "int foo(void);\nint main(void) { return foo() - 42; }\n");
    write(&tmp, "f.c", "int bar(void);\nint foo(void) { return bar(); }\n");
    write(&tmp, "b.c", "int bar(void) { return 42; }\n");
    gcc(&tmp, None, &["-c", "m.c", "f.c", "b.c"]);
    run_in(&tmp, "ar", &["rcs", "libf.a", "f.o"]);
    run_in(&tmp, "ar", &["rcs", "libb.a", "b.o"]);
    let (ours, lld) = (rivet_dir(&tmp), ld_dir(&tmp, "lld-bin", Path::new(LLD)));
    let cases: [&[&str]; 8] = [
        &["libb.a", "m.o", "libf.a"],
        &["libf.a", "m.o", "libb.a"],
        &["-Wl,--warn-backrefs-exclude=*libf.a(*", "libf.a", "m.o", "libb.a"],
        &["-Wl,--start-group", "libf.a", "m.o", "libb.a", "-Wl,--end-group"],
        // The linking sandwich: a later copy of the archive is what GNU ld would use.
        &["libb.a", "m.o", "libf.a", "libb.a"],
        &["m.o", "libf.a", "libb.a"],
        // --start-lib objects: one group per --start-lib ... --end-lib, as lld numbers them.
        &["m.o", "-Wl,--start-lib", "b.o", "f.o", "-Wl,--end-lib"],
        &["-Wl,--start-lib", "b.o", "-Wl,--end-lib", "-Wl,--start-lib", "f.o", "-Wl,--end-lib", "m.o"],
    ];
    let mut any = false;
    for (i, case) in cases.iter().enumerate() {
        let mut said = Vec::new();
        for (dir, out) in [(&lld, "lld"), (&ours, "ours")] {
            let mut args = vec!["-Wl,--warn-backrefs", "-o", out];
            args.extend_from_slice(case);
            // lld prints them in its hash table's order: compared as sets.
            let mut w = warnings(&gcc(&tmp, Some(dir), &args));
            w.sort();
            said.push(w);
            assert_eq!(must(&mut Command::new(tmp.join(out))).status.code(), Some(0));
        }
        assert_eq!(said[1], said[0], "case {i}: {case:?}");
        any |= !said[0].is_empty();
    }
    assert!(any, "lld warned about none of the cases");
    tmp.finish();
}

fn comment(file: &Path) -> String {
    String::from_utf8_lossy(&must(Command::new("readelf").args(["-p", ".comment"]).arg(file)).stdout).into_owned()
}

#[test]
fn comment_names_the_linker() {
    let Some(tmp) = setup("comment", &["gcc", "readelf", LLD]) else { return };
    write(&tmp, "a.c", "int main(void) { return 0; }\n");
    gcc(&tmp, None, &["-c", "a.c"]);
    let (ours, lld) = (rivet_dir(&tmp), ld_dir(&tmp, "lld-bin", Path::new(LLD)));
    gcc(&tmp, Some(&lld), &["a.o", "-o", "lld"]);
    gcc(&tmp, Some(&ours), &["a.o", "-o", "ours"]);
    let (theirs, mine) = (comment(&tmp.join("lld")), comment(&tmp.join("ours")));
    // lld's line comes first, then the compilers' lines; ours likewise.
    let strings = |t: &str| -> Vec<String> {
        t.lines().filter_map(|l| l.split_once(']').map(|(_, s)| s.trim().to_string())).collect()
    };
    let (theirs, mine) = (strings(&theirs), strings(&mine));
    assert!(theirs[0].contains("LLD"), "{theirs:?}");
    assert_eq!(mine[0], format!("Linker: rivet {}", env!("CARGO_PKG_VERSION")));
    assert_eq!(mine[1..], theirs[1..]);
    let o = must(Command::new("readelf").args(["-SW"]).arg(tmp.join("ours")));
    let sections = String::from_utf8_lossy(&o.stdout);
    assert!(sections.lines().any(|l| l.contains(".comment") && l.contains(" MS ")), "{sections}");
    // An object with no .comment of its own still gets the stamp, and -r outputs none (as lld).
    write(&tmp, "s.s", ".globl _start\n_start: mov $60, %eax\n xor %edi, %edi\n syscall\n");
    gcc(&tmp, None, &["-c", "s.s"]);
    must(Command::new(linker()).current_dir(&tmp.path).args(["s.o", "-o", "bare"]));
    assert!(strings(&comment(&tmp.join("bare"))) == [format!("Linker: rivet {}", env!("CARGO_PKG_VERSION"))]);
    must(Command::new(linker()).current_dir(&tmp.path).args(["-r", "a.o", "-o", "r.o"]));
    assert!(!comment(&tmp.join("r.o")).contains("rivet"));
    tmp.finish();
}

#[test]
fn run_makes_every_link_ours() {
    let Some(tmp) = setup("run", &["gcc", "make", "readelf"]) else { return };
    write(&tmp, "util.c", "int twice(int x) { return 2 * x; }\n");
    write(&tmp, "greet.c", "#include <stdio.h>\nint twice(int);\nvoid greet(void) { printf(\"%d\\n\", twice(21)); }\n");
    write(&tmp, "main.c", "void greet(void);\nint main(void) { greet(); return 0; }\n");
    // Plain make rules: cc links, through collect2 and whatever `ld` it finds; the shared library
    // is linked with `-fuse-ld=bfd`, and one program by calling `ld.gold` by name.
    write(
        &tmp,
        "Makefile",
        "CFLAGS = -O1 -fPIC\n\
         all: app app-static app-gold\n\
         libgreet.so: greet.o util.o\n\t$(CC) -shared -fuse-ld=bfd -o $@ $^\n\
         app: main.o libgreet.so\n\t$(CC) -o $@ main.o -L. -lgreet -Wl,-rpath,'$$ORIGIN'\n\
         app-static: main.o greet.o util.o\n\t$(CC) -static -o $@ $^\n\
         app-gold: main.o greet.o util.o\n\t$(CC) -fuse-ld=gold -o $@ $^\n",
    );
    let o = must(Command::new(linker()).current_dir(&tmp.path).args(["-run", "make"]));
    let made = String::from_utf8_lossy(&o.stdout);
    for out in ["libgreet.so", "app", "app-static", "app-gold"] {
        let text = comment(&tmp.join(out));
        assert!(text.contains("Linker: rivet"), "{out} was not linked by rivet ({made}):\n{text}");
    }
    for exe in ["app", "app-static", "app-gold"] {
        assert_eq!(stdout_of(&tmp.join(exe)), "42\n");
    }
    // The command's exit status is rivet's, and the linker directory is gone afterwards.
    let st = Command::new(linker()).current_dir(&tmp.path).args(["-run", "sh", "-c", "exit 3"]).status().unwrap();
    assert_eq!(st.code(), Some(3));
    let o = must(Command::new(linker()).args(["-run", "sh", "-c", "command -v ld.lld; echo $COMPILER_PATH"]));
    let said = String::from_utf8_lossy(&o.stdout);
    let dir = Path::new(said.lines().next().unwrap()).parent().unwrap().to_path_buf();
    assert_eq!(said.lines().nth(1).unwrap().split(':').next().unwrap(), dir.to_str().unwrap());
    assert!(!dir.exists(), "{} was left behind", dir.display());
    tmp.finish();
}

/// Global, defined names in `.dynsym`, sorted.
fn dynamic_definitions(file: &Path) -> Vec<String> {
    let o = must(Command::new("readelf").args(["-W", "--dyn-syms"]).arg(file));
    let mut v: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() >= 8 && f[4] == "GLOBAL" && f[6] != "UND")
        .map(|f| f[7].to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn gnu_ld_options_dynamic_list_data_nodump_noinhibit_exec() {
    let Some(tmp) = setup("gnu-ld-options", &["gcc", "readelf", "ld.bfd"]) else { return };
    write(
        &tmp,
        "d.c",
        "int foo = 5; __thread int tvar = 1; int comm;\nvoid bar(void) {}\nint get(void) { return foo + tvar; }\n\
         int call(void) { bar(); return get(); }\nint main(void) { return call() - 6; }\n",
    );
    gcc(&tmp, None, &["-c", "-fPIC", "-fcommon", "d.c"]);
    let (ours, bfd) = (rivet_dir(&tmp), ld_dir(&tmp, "bfd-bin", Path::new("/usr/bin/ld.bfd")));
    let mut exports = Vec::new();
    let mut relocs = Vec::new();
    for (dir, name) in [(&bfd, "bfd"), (&ours, "ours")] {
        // --dynamic-list-data: an executable exports its data (not TLS, not functions) ...
        let exe = format!("{name}-exe");
        gcc(&tmp, Some(dir), &["d.o", "-o", &exe, "-Wl,--dynamic-list-data"]);
        assert_eq!(must(&mut Command::new(tmp.join(&exe))).status.code(), Some(0));
        exports.push(dynamic_definitions(&tmp.join(&exe)));
        // ... and in a shared library only the data stays preemptible: the functions bind inside.
        let lib = format!("lib{name}.so");
        gcc(&tmp, Some(dir), &["-shared", "d.o", "-o", &lib, "-Wl,--dynamic-list-data"]);
        let o = must(Command::new("readelf").args(["-rW"]).arg(tmp.join(&lib)));
        let mut r: Vec<String> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.contains("R_X86_64_") && !l.contains("RELATIVE"))
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                format!("{} {}", f[2], f.get(4).copied().unwrap_or(""))
            })
            // TLS aside: GNU ld names the symbol in a local module's DTPMOD64, lld and rivet do not.
            .filter(|l| [" foo", " bar", " get", " comm"].iter().any(|n| l.ends_with(n)))
            .collect();
        r.sort();
        relocs.push(r);
        // -z nodump: DF_1_NODUMP.
        let nodump = format!("nodump-{name}.so");
        gcc(&tmp, Some(dir), &["-shared", "d.o", "-o", &nodump, "-Wl,-z,nodump"]);
        let o = must(Command::new("readelf").arg("-d").arg(tmp.join(&nodump)));
        assert!(String::from_utf8_lossy(&o.stdout).lines().any(|l| l.contains("FLAGS_1") && l.contains("NODUMP")));
        // --noinhibit-exec: a missing --require-defined symbol is said, and the output written.
        let kept = format!("kept-{name}.so");
        let stderr = gcc(
            &tmp,
            Some(dir),
            &["-shared", "d.o", "-o", &kept, "-Wl,--require-defined=no_such_sym,--noinhibit-exec"],
        );
        assert!(stderr.contains("no_such_sym") && tmp.join(&kept).exists(), "{name}: {stderr}");
    }
    assert_eq!(exports[0], ["_IO_stdin_used", "comm", "foo"]);
    assert_eq!(exports[1], exports[0]);
    assert!(relocs[0].iter().any(|r| r.ends_with(" foo")) && !relocs[0].iter().any(|r| r.ends_with(" bar")));
    assert_eq!(relocs[1], relocs[0]);
    tmp.finish();
}

/// The loaded sections of `exe` in address order (`readelf -S`), with their addresses.
fn alloc_sections_by_address(exe: &Path) -> Vec<(u64, String)> {
    let o = must(Command::new("readelf").args(["-WS"]).arg(exe));
    let mut secs: Vec<(u64, String)> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let l = l.split_once(']')?.1;
            let f: Vec<&str> = l.split_whitespace().collect();
            let flags = f.get(6)?;
            let addr = u64::from_str_radix(f.get(2)?, 16).ok()?;
            (flags.contains('A') && addr != 0).then(|| (addr, f[0].to_string()))
        })
        .collect();
    secs.sort();
    secs
}

/// `--section-start` in any order: the sections given an address come first, in address order,
/// and the others follow the last of them (lld's layout; before, a later section given a lower
/// address was refused). Checked against ld.lld-19: the same first sections, everything else
/// after them, PT_LOADs ascending, and the program runs.
#[test]
fn section_start_places_addressed_sections_first_by_address() {
    let Some(tmp) = setup("section-start", &["gcc", "readelf", LLD]) else { return };
    write(
        &tmp,
        "a.c",
        "#include <stdio.h>\n\
         __attribute__((section(\".fn1\"))) void fn1(void) { printf(\" fn1\"); }\n\
         __attribute__((section(\".fn2\"))) void fn2(void) { printf(\" fn2\"); }\n\
         int main(void) { printf(\"main\"); fn1(); fn2(); printf(\" %p %p\\n\", (void *)fn1, (void *)fn2); }\n",
    );
    gcc(&tmp, None, &["-c", "-fno-PIC", "a.c"]);
    let ours = rivet_dir(&tmp);
    let lld = ld_dir(&tmp, "lld", Path::new(LLD));
    for (fn1, fn2) in [("0x10000000", "0x20000000"), ("0x20000000", "0x10000000")] {
        let starts = format!("-Wl,--section-start=.fn1={fn1},--section-start=.fn2={fn2}");
        let mut firsts = Vec::new();
        for (dir, exe) in [(&ours, "exe"), (&lld, "exe-lld")] {
            gcc(&tmp, Some(dir), &["a.o", "-no-pie", "-o", exe, &starts]);
            assert_eq!(stdout_of(&tmp.join(exe)), format!("main fn1 fn2 {fn1} {fn2}\n"), "{exe} {starts}");
            let secs = alloc_sections_by_address(&tmp.join(exe));
            let names: Vec<&str> = secs.iter().map(|(_, n)| n.as_str()).collect();
            firsts.push(names[..2].join(" "));
            let high = parse_int(fn1).max(parse_int(fn2));
            assert!(secs[2..].iter().all(|(a, _)| *a > high), "{exe}: a section below {high:#x}: {secs:?}");
            let o = must(Command::new("readelf").args(["-Wl"]).arg(tmp.join(exe)));
            let loads: Vec<u64> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.trim_start().starts_with("LOAD"))
                .map(|l| parse_int(l.split_whitespace().nth(2).unwrap()))
                .collect();
            assert!(loads.windows(2).all(|w| w[0] < w[1]), "{exe}: PT_LOADs not ascending: {loads:x?}");
        }
        assert_eq!(firsts[0], firsts[1], "{starts}: the first sections differ from lld's");
    }
    tmp.finish();
}

/// Each `__start_*`/`__stop_*` entry of `.dynsym` and `.symtab`: table, name, binding,
/// visibility, type and the name of its section (`ABS` when absolute), sorted.
fn start_stop_entries(file: &Path) -> Vec<String> {
    let o = must(Command::new("readelf").args(["-SW"]).arg(file));
    let sections: std::collections::HashMap<String, String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let (index, rest) = l.trim_start().strip_prefix('[')?.split_once(']')?;
            Some((index.trim().to_string(), rest.split_whitespace().next()?.to_string()))
        })
        .collect();
    let o = must(Command::new("readelf").args(["-sW", "--dyn-syms"]).arg(file));
    let mut table = String::new();
    let mut v = Vec::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        if let Some(rest) = l.strip_prefix("Symbol table '") {
            table = rest.split('\'').next().unwrap_or("").to_string();
            continue;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 8 || !(f[7].starts_with("__start_") || f[7].starts_with("__stop_")) {
            continue;
        }
        let section = sections.get(f[6]).map_or(f[6], |s| s.as_str());
        v.push(format!("{table} {} {} {} {} {section}", f[7], f[4], f[5], f[3]));
    }
    v.sort();
    v
}

/// The dynamic relocations that name a `__start_*`/`__stop_*` symbol (type and symbol), sorted.
fn start_stop_relocations(file: &Path) -> Vec<String> {
    let o = must(Command::new("readelf").args(["-rW"]).arg(file));
    let mut v: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() >= 5 && (f[4].starts_with("__start_") || f[4].starts_with("__stop_")))
        .map(|f| format!("{} {}", f[2], f[4]))
        .collect();
    v.sort();
    v
}

#[test]
fn start_stop_symbols_as_lld() {
    let Some(tmp) = setup("start-stop", &["gcc", "readelf", LLD]) else { return };
    // The library's section `foo` and its bounds, read by code (GOT loads) and by data (an
    // absolute pointer); the program has a `foo` of its own.
    write(
        &tmp,
        "lib.c",
        "__attribute__((section(\"foo\"), used)) int a[2] = {1, 2};\n\
         extern char __start_foo[], __stop_foo[];\nchar *foo_ptr = __start_foo;\n\
         long foo_size(void) { return __stop_foo - __start_foo; }\n\
         int foo_ptr_ok(void) { return foo_ptr == __start_foo; }\n",
    );
    write(
        &tmp,
        "main.c",
        "#include <stdio.h>\n__attribute__((section(\"foo\"), used)) int m[3] = {7, 8, 9};\n\
         extern char __start_foo[], __stop_foo[];\nlong foo_size(void);\nint foo_ptr_ok(void);\n\
         int main(void) {\n  printf(\"lib %ld exe %ld ptr %d\\n\", foo_size(), (long)(__stop_foo - __start_foo), \
         foo_ptr_ok());\n  return 0;\n}\n",
    );
    // dlopen: the bounds are found in the library when it exports them.
    write(
        &tmp,
        "open.c",
        "#include <dlfcn.h>\n#include <stdio.h>\nint main(int argc, char **argv) {\n\
         void *h = dlopen(argv[1], RTLD_NOW);\n  if (!h) { puts(dlerror()); return 1; }\n\
         char *s = dlsym(h, \"__start_foo\"), *e = dlsym(h, \"__stop_foo\");\n\
         long (*size)(void) = (long (*)(void))dlsym(h, \"foo_size\");\n\
         if (s && e) printf(\"exported %ld of %ld\\n\", (long)(e - s), size());\n\
         else printf(\"not exported, %ld\\n\", size());\n  return 0;\n}\n",
    );
    gcc(&tmp, None, &["-c", "-fPIC", "lib.c", "main.c", "open.c"]);
    let (ours, lld) = (rivet_dir(&tmp), ld_dir(&tmp, "lld-bin", Path::new(LLD)));
    gcc(&tmp, None, &["open.o", "-o", "open", "-ldl"]);
    for vis in ["", "default", "protected", "hidden", "internal"] {
        let mut said = Vec::new();
        for (dir, name) in [(&lld, "lld"), (&ours, "ours")] {
            let out = format!("{name}-{vis}");
            std::fs::create_dir_all(tmp.join(&out)).unwrap();
            let lib = format!("{out}/libfoo.so");
            let mut args = vec!["-shared", "lib.o", "-o", &lib];
            let z = format!("-Wl,-z,start-stop-visibility={vis}");
            if !vis.is_empty() {
                args.push(&z);
            }
            let stderr = gcc(&tmp, Some(dir), &args);
            assert!(!stderr.contains("warning"), "{name} {vis}: {stderr}");
            let exe = format!("{out}/main");
            let (libdir, rpath) = (format!("-L{out}"), format!("-Wl,-rpath,{}", tmp.join(&out).display()));
            gcc(&tmp, Some(dir), &["main.o", "-o", &exe, &libdir, "-lfoo", &rpath]);
            let run = stdout_of(&tmp.join(&exe));
            let opened = must(Command::new(tmp.join("open")).arg(tmp.join(&lib)));
            let opened = String::from_utf8_lossy(&opened.stdout).into_owned();
            let (lib, exe) = (tmp.join(&lib), tmp.join(&exe));
            said.push((
                start_stop_entries(&lib),
                start_stop_relocations(&lib),
                start_stop_entries(&exe),
                start_stop_relocations(&exe),
                run,
                opened,
            ));
        }
        assert_eq!(said[1], said[0], "-z start-stop-visibility={vis}: ours, then lld's");
        let (entries, relocs, _, _, run, opened) = &said[0];
        // What lld gave, so that the comparison means something: a symbol of section `foo`,
        // exported unless hidden, interposed by the program's only with default visibility.
        assert!(entries.iter().all(|e| e.ends_with(" foo")), "{entries:?}");
        let hidden = matches!(vis, "hidden" | "internal");
        assert_eq!(entries.iter().any(|e| e.starts_with(".dynsym")), !hidden, "{entries:?}");
        assert_eq!(!relocs.is_empty(), vis == "default", "{relocs:?}");
        let lib_size = if vis == "default" { 12 } else { 8 };
        assert_eq!(run, &format!("lib {lib_size} exe 12 ptr 1\n"));
        assert_eq!(opened, if hidden { "not exported, 8\n" } else { "exported 8 of 8\n" });
    }
    // In a static executable too, the bounds are symbols of their section.
    let mut entries = Vec::new();
    for (dir, name) in [(&lld, "lld"), (&ours, "ours")] {
        let exe = format!("static-{name}");
        gcc(&tmp, Some(dir), &["-static", "-fPIC", "open.c", "-x", "none", "lib.o", "-o", &exe, "-ldl"]);
        entries.push(start_stop_entries(&tmp.join(&exe)));
    }
    assert_eq!(entries[1], entries[0]);
    // (libc's `__libc_atexit` and `__libc_IO_vtables` have theirs too.)
    let foo = ".symtab __start_foo GLOBAL PROTECTED NOTYPE foo".to_string();
    assert!(entries[0].contains(&foo), "{entries:?}");
    assert!(entries[0].iter().all(|e| e.contains(" GLOBAL PROTECTED NOTYPE ")), "{entries:?}");
    tmp.finish();
}

/// A shared library with general-dynamic TLS linked on its own (`ld -shared x.o`, no libc on the
/// line, as libtool and hand-written Makefiles do): `__tls_get_addr` stays undefined for the loader,
/// as GNU ld and lld leave it (rivet refused it as "called outside a TLS sequence"); the same
/// dynamic relocations as GNU ld's, and a program using the library runs.
#[test]
fn shared_library_imports_tls_get_addr() {
    let Some(tmp) = setup("tls-get-addr", &["gcc", "ld", "readelf"]) else { return };
    write(&tmp, "t.c", "__thread int t = 7;\nint get(void) { return t; }\n");
    write(&tmp, "m.c", "#include <stdio.h>\nint get(void);\nint main(void) { printf(\"%d\\n\", get()); return 0; }\n");
    gcc(&tmp, None, &["-c", "-fPIC", "t.c"]);
    let kinds = |so: &str| -> Vec<String> {
        let o = must(Command::new("readelf").args(["-rW"]).arg(tmp.join(so)));
        let mut v: Vec<String> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() >= 3 && f[2].starts_with("R_X86_64_")).then(|| format!("{} {}", f[2], f.get(4).unwrap_or(&"")))
            })
            .collect();
        v.sort();
        v
    };
    must(Command::new(linker()).current_dir(&tmp.path).args(["-shared", "t.o", "-o", "libt.so"]));
    must(Command::new("ld").current_dir(&tmp.path).args(["-shared", "t.o", "-o", "libt-gnu.so"]));
    assert_eq!(kinds("libt.so"), kinds("libt-gnu.so"));
    assert!(kinds("libt.so").iter().any(|k| k.contains("__tls_get_addr")), "{:?}", kinds("libt.so"));
    gcc(&tmp, None, &["m.c", "-L.", "-lt", "-Wl,-rpath,$ORIGIN", "-o", "m"]);
    assert_eq!(stdout_of(&tmp.join("m")), "7\n");
    tmp.finish();
}
