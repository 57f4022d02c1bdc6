//! Diagnostics worded and shaped as lld's: objects compiled here (gcc, g++, clang when installed;
//! with and without `-g`, DWARF 4 and 5, compressed debug sections), linked by the linker under
//! test and by ld.lld-19 in the same directory, and their messages compared line by line (the
//! program name aside). A few expected lines are spelled out too, so the tests check something
//! where lld is not installed.
mod common;
use common::*;
use std::path::Path;
use std::process::Command;

const LLD: &str = "ld.lld-19";

/// Compiles `source` (written to `file` in `dir`) with `compiler` and `flags` into `out`.
fn compile(dir: &Path, compiler: &str, file: &str, source: &str, flags: &[&str], out: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, source).unwrap();
    must(Command::new(compiler).current_dir(dir).args(flags).args(["-c", file, "-o", out]));
}

/// The linker's messages for a link that must fail, each line with the program name replaced.
fn messages(ld: &Path, dir: &Path, args: &[&str]) -> Vec<String> {
    let out = Command::new(ld).current_dir(dir).args(args).args(["-o", "out"]).output().unwrap();
    assert!(!out.status.success(), "{} {args:?} linked", ld.display());
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    text.lines()
        .map(|l| match l.split_once(": ") {
            Some((_, rest)) if !l.starts_with(">>>") => format!("LD: {rest}"),
            _ => l.to_string(),
        })
        .collect()
}

/// The linker under test's messages for `args`, checked against lld's when lld is installed.
fn same_as_lld(dir: &Path, args: &[&str]) -> Vec<String> {
    let ours = messages(&linker(), dir, args);
    if testing_rivet() && have(LLD) {
        let theirs = messages(Path::new(LLD), dir, args);
        assert_eq!(ours, theirs, "{args:?}: ours, then lld's");
    }
    ours
}

fn has(lines: &[String], expected: &[&str]) {
    if !testing_rivet() {
        return;
    }
    let at =
        lines.iter().position(|l| l == expected[0]).unwrap_or_else(|| panic!("{:?} not in {lines:#?}", expected[0]));
    assert_eq!(&lines[at..(at + expected.len()).min(lines.len())], expected, "{lines:#?}");
}

#[test]
fn undefined_and_duplicate_symbols_name_source_lines_like_lld() {
    if !have("gcc") || !have("g++") {
        return;
    }
    let tmp = TempDir::new("diag-lines");
    let dir = &tmp.path;
    let full = dir.display().to_string();
    let undef = "int foo();\nint main() { return foo(); }\n";
    compile(dir, "g++", "undef.cpp", undef, &["-g"], "undef.o");
    compile(dir, "g++", "undef.cpp", undef, &[], "undef-nog.o");
    compile(dir, "gcc", "a.c", "int x;\n\nint dup(void) { return 1; }\n", &["-g"], "a.o");
    compile(dir, "gcc", "b.c", "\nint dup(void) { return 2; }\nint main(void) { return dup(); }\n", &["-g"], "b.o");
    compile(dir, "gcc", "a.c", "int x;\n\nint dup(void) { return 1; }\n", &[], "a-nog.o");
    compile(dir, "gcc", "b.c", "\nint dup(void) { return 2; }\nint main(void) { return dup(); }\n", &[], "b-nog.o");
    // Five references from three functions: three shown, then how many more.
    let multi = "extern int var;\nvoid bar(void);\nstatic void s1(void) { bar(); }\n\
                 void f1(void) { bar(); bar();\n  bar(); }\nint main(void) { s1(); f1(); bar(); return var; }\n";
    compile(dir, "gcc", "multi.c", multi, &["-g"], "multi.o");
    // Variables: no line table row for .data, so their declarations (DWARF 4, and compressed).
    compile(dir, "gcc", "dv1.c", "int shared_var = 1;\n", &["-g", "-gdwarf-4"], "dv1.o");
    compile(dir, "gcc", "dv2.c", "int other;\nint shared_var = 2;\n", &["-g", "-gz"], "dv2.o");
    // A relative source path, a header's inline function, a reference from data, one section
    // per function.
    let x = "#include \"hdr.h\"\nextern int gv;\nint *p = &gv;\nint f(int x) { return viah(x); }\n";
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/hdr.h"), "int ext(int);\nstatic inline int viah(int x) { return ext(x) + 1; }\n")
        .unwrap();
    compile(dir, "gcc", "sub/x.c", x, &["-g"], "x5.o");
    compile(dir, "gcc", "sub/x.c", x, &["-g", "-gdwarf-4", "-ffunction-sections"], "x4.o");
    compile(dir, "gcc", "sub/x.c", x, &["-g", "-gz", "-ffunction-sections"], "xgz.o");
    // An archive member.
    compile(dir, "gcc", "m1.c", "void missing(void);\nvoid usem(void) { missing(); }\n", &["-g"], "m1.o");
    compile(dir, "gcc", "mm.c", "void usem(void);\nint main(void) { usem(); return 0; }\n", &["-g"], "mm.o");
    must(Command::new("ar").current_dir(dir).args(["rcs", "libm1.a", "m1.o"]));

    let lines = same_as_lld(dir, &["undef.o"]);
    has(
        &lines,
        &[
            "LD: error: undefined symbol: foo()",
            &format!(">>> referenced by undef.cpp:2 ({full}/undef.cpp:2)"),
            ">>>               undef.o:(main)",
        ],
    );
    // Without DWARF, the STT_FILE name.
    let lines = same_as_lld(dir, &["undef-nog.o"]);
    has(&lines, &[">>> referenced by undef.cpp", ">>>               undef-nog.o:(main)"]);
    let lines = same_as_lld(dir, &["a.o", "b.o"]);
    has(
        &lines,
        &[
            "LD: error: duplicate symbol: dup",
            &format!(">>> defined at a.c:3 ({full}/a.c:3)"),
            ">>>            a.o:(dup)",
            &format!(">>> defined at b.c:2 ({full}/b.c:2)"),
            ">>>            b.o:(.text+0x0)",
        ],
    );
    same_as_lld(dir, &["a-nog.o", "b-nog.o"]);
    let lines = same_as_lld(dir, &["multi.o"]);
    has(&lines, &[">>> referenced 2 more times", "", "LD: error: undefined symbol: var"]);
    let lines = same_as_lld(dir, &["dv1.o", "dv2.o"]);
    has(&lines, &[">>> defined at dv1.c:1", ">>>            dv1.o:(shared_var)"]);
    for obj in ["x5.o", "x4.o", "xgz.o"] {
        let lines = same_as_lld(dir, &[obj]);
        has(&lines, &[">>> referenced by hdr.h:2 (sub/hdr.h:2)"]);
    }
    same_as_lld(dir, &["x5.o", "xgz.o"]);
    let lines = same_as_lld(dir, &["mm.o", "libm1.a"]);
    has(&lines, &[">>>               m1.o:(usem) in archive libm1.a"]);
    let lines = same_as_lld(dir, &["--no-demangle", "undef.o"]);
    has(&lines, &["LD: error: undefined symbol: _Z3foov"]);
    for clang in ["clang-19", "clang"] {
        if have(clang) {
            compile(dir, clang, "sub/x.c", x, &["-g"], "xc5.o");
            compile(dir, clang, "sub/x.c", x, &["-g", "-gdwarf-4"], "xc4.o");
            compile(dir, clang, "undef.cpp", undef, &["-g", "-xc++"], "undefc.o");
            let lines = same_as_lld(dir, &["xc5.o"]);
            has(&lines, &[&format!(">>> referenced by x.c:3 ({full}/sub/x.c:3)"), ">>>               xc5.o:(p)"]);
            same_as_lld(dir, &["xc4.o"]);
            same_as_lld(dir, &["xc5.o", "xc4.o"]);
            same_as_lld(dir, &["undefc.o"]);
            break;
        }
    }
    tmp.finish();
}

#[test]
fn undefined_symbols_suggest_spellings_like_lld() {
    if !have("gcc") || !have("g++") {
        return;
    }
    let tmp = TempDir::new("diag-spelling");
    let dir = &tmp.path;
    // One edit away (a global of another file), and a case difference (a local of the same file).
    compile(
        dir,
        "gcc",
        "c1.c",
        "static int Qux(void) { return 1; }\nint foo_bar(int);\nint qux(void);\n\
         int main(void) { return foo_bar(1) + qux() + Qux(); }\n",
        &["-g"],
        "c1.o",
    );
    compile(dir, "gcc", "c1def.c", "int foobar(int x) { return x; }\n", &["-g"], "c1def.o");
    // extern "C" on one side only, both ways.
    compile(
        dir,
        "g++",
        "spell.cpp",
        "extern \"C\" int bar2(int);\nint cfun(int);\nint main() { return bar2(2) + cfun(1); }\n",
        &["-g"],
        "spell.o",
    );
    compile(dir, "g++", "spelldef.cpp", "int bar2(int x) { return x; }\n", &["-g"], "spelldef.o");
    compile(dir, "gcc", "cdef.c", "int cfun(int x) { return x; }\n", &["-g"], "cdef.o");
    // Only the first two undefined symbols get suggestions, as in lld; a vtable gets lld's hint.
    compile(
        dir,
        "g++",
        "vt.cpp",
        "int first(); int second(); int third();\nstruct K { virtual ~K(); virtual int g(); };\n\
         int K::g() { return 2; }\nint main() { K *k = new K; return first() + second() + third() + k->g(); }\n",
        &[],
        "vt.o",
    );
    compile(dir, "g++", "vtdef.cpp", "int firsT() { return 0; }\nint third_() { return 0; }\n", &[], "vtdef.o");

    let lines = same_as_lld(dir, &["c1.o", "c1def.o"]);
    has(&lines, &[">>> did you mean: foobar", ">>> defined in: c1def.o"]);
    has(&lines, &[">>> did you mean: Qux", ">>> defined in: c1.o"]);
    let lines = same_as_lld(dir, &["spell.o", "spelldef.o", "cdef.o"]);
    has(&lines, &[">>> did you mean to declare bar2(int) as extern \"C\"?", ">>> defined in: spelldef.o"]);
    has(&lines, &[">>> did you mean: extern \"C\" cfun", ">>> defined in: cdef.o"]);
    same_as_lld(dir, &["--no-demangle", "spell.o", "spelldef.o", "cdef.o"]);
    let lines = same_as_lld(dir, &["vt.o", "vtdef.o"]);
    has(&lines, &[">>> did you mean: firsT()"]);
    if testing_rivet() {
        assert!(!lines.iter().any(|l| l.contains("third_")), "{lines:#?}");
        assert!(lines.iter().any(|l| l == "LD: error: undefined symbol: vtable for K"), "{lines:#?}");
        assert!(lines.iter().any(|l| l.starts_with(">>> the vtable symbol may be undefined")), "{lines:#?}");
    }
    tmp.finish();
}

/// Where lld says a suggested name is defined: an archive member that was loaded, and none for a
/// member that was not (lld made its symbols undefined: not suggested, or `<internal>` for a C++
/// function a C reference could mean), `--defsym`, a script's line, the linker, and the first
/// object referring to a name nothing defines.
#[test]
fn suggestions_say_where_lld_says_they_are_defined() {
    if !have("gcc") || !have("g++") || !have("ar") {
        return;
    }
    let tmp = TempDir::new("diag-defined-in");
    let dir = &tmp.path;
    compile(
        dir,
        "gcc",
        "m.c",
        "int used(void); int speled(void); int lonly(void);\n\
         int main(void) { return used() + speled() + lonly(); }\n",
        &[],
        "m.o",
    );
    compile(dir, "gcc", "loaded.c", "int used(void) { return 0; }\nint spelled(void) { return 1; }\n", &[], "loaded.o");
    compile(dir, "gcc", "unloaded.c", "int lonely(void) { return 2; }\n", &[], "unloaded.o");
    must(Command::new("ar").current_dir(dir).args(["rcs", "libs.a", "loaded.o", "unloaded.o"]));
    let lines = same_as_lld(dir, &["m.o", "libs.a"]);
    has(&lines, &[">>> did you mean: spelled", ">>> defined in: libs.a(loaded.o)"]);
    if testing_rivet() {
        assert!(!lines.iter().any(|l| l.contains("lonely")), "{lines:#?}");
    }
    // A C reference to a C++ function of a member never loaded; and to one nothing defines,
    // referred to (by its mangled name) from the same file.
    compile(
        dir,
        "gcc",
        "c.c",
        "int cpp_fn(int); int other(int);\nint cpp_ref(int) __asm__(\"_Z5otheri\");\n\
         int main(void) { return cpp_fn(1) + other(2) + cpp_ref(3); }\n",
        &[],
        "c.o",
    );
    compile(dir, "g++", "cpp.cpp", "int cpp_fn(int x) { return x; }\n", &[], "cpp.o");
    must(Command::new("ar").current_dir(dir).args(["rcs", "libcpp.a", "cpp.o"]));
    let lines = same_as_lld(dir, &["c.o", "libcpp.a"]);
    has(&lines, &[">>> did you mean to declare cpp_fn(int) as extern \"C\"?", ">>> defined in: <internal>"]);
    has(&lines, &[">>> did you mean to declare other(int) as extern \"C\"?", ">>> defined in: c.o"]);
    // Names from --defsym (an alias of an object's symbol), a script and the linker itself.
    compile(
        dir,
        "gcc",
        "d.c",
        "extern char _edn[], _end[], valeu[], otehr[];\n\
         int main(void) { return _edn[0] + _end[0] + valeu[0] + otehr[0]; }\n",
        &[],
        "d.o",
    );
    std::fs::write(dir.join("s.ld"), "other = 0x2000;\n").unwrap();
    let lines = same_as_lld(dir, &["d.o", "--defsym=value=main", "s.ld"]);
    has(&lines, &[">>> did you mean: _end", ">>> defined in: <internal>"]);
    has(&lines, &[">>> did you mean: value", ">>> defined in: --defsym"]);
    let lines = same_as_lld(dir, &["d.o", "s.ld", "--defsym=_edn=0"]);
    has(&lines, &[">>> did you mean: other", ">>> defined in: s.ld:1"]);
    tmp.finish();
}

/// The symbol lines under each input section of a `-Map` file: (input section line, [(size,
/// alignment, name)]), addresses left out (they differ between linkers).
fn map_symbols(map: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in map.lines().skip(1) {
        let (columns, rest) = line.split_at(line.len().min(48));
        if let Some(name) = rest.strip_prefix("                 ") {
            let fields: Vec<&str> = columns.split_whitespace().collect();
            if let Some(last) = out.last_mut() {
                last.1.push(format!("{} {} {name}", fields[2], fields[3]));
            }
        } else if let Some(section) = rest.strip_prefix("         ") {
            out.push((section.to_string(), Vec::new()));
        }
    }
    out
}

/// `-Map` lists, under each input section, the symbols it defines as lld 19 does: locals and
/// globals, demangled (or not, with `--no-demangle`), with their sizes and alignment 1.
#[test]
fn link_map_symbols_match_lld() {
    if !testing_rivet() || !have("g++") || !have(LLD) {
        return;
    }
    let tmp = TempDir::new("diag-map");
    let dir = &tmp.path;
    let source =
        "#include <cstdio>\nnamespace ns { int counter = 3; int add(int a, int b) { return a + b + counter; } }\n\
                  static int twice(int x) { return x * 2; }\nint (*keep)(int) = twice;\n\
                  int main() { std::printf(\"%d\\n\", ns::add(1, 2) + keep(3)); }\n";
    compile(dir, "g++", "m.cpp", source, &["-O1"], "m.o");
    let lld_dir = dir.join("lld-bin");
    std::fs::create_dir_all(&lld_dir).unwrap();
    let which = must(Command::new("sh").args(["-c", &format!("command -v {LLD}")])).stdout;
    std::os::unix::fs::symlink(String::from_utf8_lossy(&which).trim(), lld_dir.join("ld")).unwrap();
    for demangle in ["--demangle", "--no-demangle"] {
        let mut maps = Vec::new();
        for (who, bin) in [("ours", linker_dir(&tmp)), ("lld", lld_dir.clone())] {
            let map = format!("{who}.map");
            let flags = format!("-Wl,-Map={map},{demangle}");
            must(Command::new("g++").current_dir(dir).arg("-B").arg(&bin).args([
                "m.o",
                "-o",
                &format!("{who}.exe"),
                &flags,
            ]));
            maps.push(map_symbols(&std::fs::read_to_string(dir.join(&map)).unwrap()));
        }
        let (ours, lld) = (&maps[0], &maps[1]);
        let mut compared = 0;
        for (section, symbols) in lld.iter().filter(|(_, s)| !s.is_empty()) {
            let mine = ours.iter().find(|(s, _)| s == section).map(|(_, v)| v);
            assert_eq!(mine, Some(symbols), "{demangle}: symbols of {section}");
            compared += symbols.len();
        }
        let names: Vec<&String> = lld.iter().flat_map(|(_, s)| s).collect();
        let (add, twice) = match demangle {
            "--demangle" => ("a 1 ns::add(int, int)", " 1 twice(int)"),
            _ => ("a 1 _ZN2ns3addEii", " 1 _ZL5twicei"),
        };
        assert!(names.iter().any(|n| n.ends_with(add)) && names.iter().any(|n| n.ends_with(twice)), "{names:?}");
        assert!(compared >= 8, "{names:?}");
    }
    tmp.finish();
}

/// Every message that names a symbol demangles it unless `--no-demangle` (relocation errors,
/// `--why-extract`), and says where the reference is as lld does; `-y` prints the name as given, as
/// lld does.
#[test]
fn symbol_names_are_demangled_in_every_message() {
    if !have("g++") {
        return;
    }
    let tmp = TempDir::new("diag-demangle");
    let dir = &tmp.path;
    compile(dir, "g++", "y.cpp", "int foo(int);\nint main() { return foo(1); }\n", &[], "y.o");
    compile(dir, "g++", "yd.cpp", "int foo(int x) { return x; }\n", &[], "yd.o");
    must(Command::new("ar").current_dir(dir).args(["rcs", "liby.a", "yd.o"]));
    let stdout = |ld: &Path, args: &[&str]| {
        let out = must(Command::new(ld).current_dir(dir).args(args).args(["-o", "out"]));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for extra in [&[][..], &["--no-demangle"]] {
        let args: Vec<&str> =
            ["-e", "main", "y.o", "liby.a", "-y", "_Z3fooi", "--why-extract=-"].iter().chain(extra).copied().collect();
        let ours = stdout(&linker(), &args);
        if testing_rivet() {
            let symbol = if extra.is_empty() { "foo(int)" } else { "_Z3fooi" };
            assert!(ours.contains(&format!("y.o\tliby.a(yd.o)\t{symbol}\n")), "{ours}");
            assert!(ours.contains("y.o: reference to _Z3fooi\n"), "{ours}");
            if have(LLD) {
                assert_eq!(ours, stdout(Path::new(LLD), &args), "{args:?}");
            }
        }
    }
    // A relocation a shared library cannot have, against a C++ variable.
    compile(
        dir,
        "g++",
        "r.cpp",
        "namespace ns { extern int gvar; }\nint getv() { return ns::gvar; }\n",
        &["-g", "-fno-pic"],
        "r.o",
    );
    let lines = messages(&linker(), dir, &["-shared", "r.o"]);
    let full = dir.display().to_string();
    let source = format!(">>> referenced by r.cpp:2 ({full}/r.cpp:2)");
    has(&lines, &[&source, ">>>               r.o:(getv())"]);
    if testing_rivet() {
        assert!(lines.iter().any(|l| l.contains("against symbol 'ns::gvar'")), "{lines:#?}");
        let raw = messages(&linker(), dir, &["-shared", "--no-demangle", "r.o"]);
        assert!(raw.iter().any(|l| l.contains("against symbol '_ZN2ns4gvarE'")), "{raw:#?}");
    }
    tmp.finish();
}

/// `__tls_get_addr` is only needed by TLS sequences a static link does not relax: a direct call to
/// it there is an undefined symbol (lld: the same, at the call), while the general-dynamic
/// sequence that calls it links, relaxed to local-exec.
#[test]
fn tls_get_addr_is_undefined_only_outside_a_relaxed_tls_sequence() {
    if !have("as") {
        return;
    }
    let tmp = TempDir::new("diag-tls-get-addr");
    let dir = &tmp.path;
    let assemble = |name: &str, text: &str| {
        std::fs::write(dir.join(format!("{name}.s")), text).unwrap();
        must(Command::new("as").current_dir(dir).args([&format!("{name}.s"), "-o", &format!("{name}.o")]));
    };
    assemble("call", ".globl _start\n_start:\n call __tls_get_addr@PLT\n ret\n");
    let tbss = ".section .tbss,\"awT\",@nobits\n.globl x\nx: .zero 4\n";
    let sequence = ".globl _start\n_start:\n .byte 0x66\n leaq x@tlsgd(%rip), %rdi\n .value 0x6666\n rex64\n \
                    call __tls_get_addr@PLT\n ret\n";
    assemble("sequence", &format!("{sequence}{tbss}"));
    let lines = messages(&linker(), dir, &["-static", "call.o"]);
    if testing_rivet() {
        assert!(lines.iter().any(|l| l.contains("call.o:(.text+0x1): undefined symbol: __tls_get_addr")), "{lines:#?}");
    }
    let out = Command::new(linker()).current_dir(dir).args(["-static", "sequence.o", "-o", "seq"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    tmp.finish();
}
