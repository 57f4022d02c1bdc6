//! Command-line options of GNU ld, lld and mold that decide facts of the output: the stack's
//! executability (`-z execstack-if-needed`, the warning for objects that ask for an executable
//! stack), the x86 ISA level note (`-z x86-64-vN`), `-z nosectionheader`, `-z rewrite-endbr`,
//! `-Ttext-segment`, `--hash-style`, where `.interp` goes (`--dynamic-linker`, `-shared -pie`),
//! `-f`/`--auxiliary` outside a shared library, shared objects under `-static`/`-Bstatic`, and
//! repeated `-rpath` directories. Programs are compiled at test time, linked by GNU ld (plain gcc)
//! or lld and by the linker under test, run, and compared by what readelf and objdump show.
mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output};

const LLD: &str = "ld.lld-19";

fn setup(name: &str, tools: &[&str]) -> Option<TempDir> {
    for t in ["gcc", "readelf"].iter().chain(tools) {
        if !have(t) {
            eprintln!("skipped: {t} missing");
            return None;
        }
    }
    Some(TempDir::new(name))
}

/// Compiles `file` (C or assembly, by its extension) in `tmp` with `gcc -c` and `flags`.
fn compile(tmp: &TempDir, file: &str, text: &str, flags: &[&str]) {
    std::fs::write(tmp.join(file), text).unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).arg("-c").args(flags).arg(file));
}

/// Links through gcc: with GNU ld (`ours` false) or the linker under test.
fn gcc_link(tmp: &TempDir, ours: bool, args: &[&str]) -> Output {
    let mut cmd = Command::new("gcc");
    cmd.current_dir(&tmp.path);
    if ours {
        cmd.arg("-B").arg(linker_dir(tmp));
    }
    cmd.args(args).output().unwrap()
}

fn gcc_must(tmp: &TempDir, ours: bool, args: &[&str]) -> Output {
    let out = gcc_link(tmp, ours, args);
    assert!(out.status.success(), "gcc {args:?} (ours: {ours}) failed:\n{}", stderr(&out));
    out
}

/// Runs a linker (`ld`: GNU ld, lld or the linker under test) directly.
fn ld(tmp: &TempDir, ld: &Path, args: &[&str]) -> Output {
    Command::new(ld).current_dir(&tmp.path).args(args).output().unwrap()
}

fn ld_must(tmp: &TempDir, linker: &Path, args: &[&str]) -> Output {
    let out = ld(tmp, linker, args);
    assert!(out.status.success(), "{} {args:?} failed:\n{}", linker.display(), stderr(&out));
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn readelf(tmp: &TempDir, flags: &str, file: &str) -> String {
    String::from_utf8_lossy(&must(Command::new("readelf").arg(flags).arg(tmp.join(file))).stdout).into_owned()
}

/// The program's standard output and exit code.
fn run(tmp: &TempDir, exe: &str) -> (String, Option<i32>) {
    let out = Command::new(tmp.join(exe)).current_dir(&tmp.path).output().unwrap();
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
}

/// PT_GNU_STACK's flags as readelf prints them (`RW`, `RWE`).
fn stack_flags(tmp: &TempDir, file: &str) -> String {
    let segs = readelf(tmp, "-lW", file);
    let line = segs.lines().find(|l| l.trim_start().starts_with("GNU_STACK")).expect("no PT_GNU_STACK");
    let words: Vec<&str> = line.split_whitespace().collect();
    words[6..words.len() - 1].join("")
}

fn section_names(tmp: &TempDir, file: &str) -> Vec<String> {
    readelf(tmp, "-SW", file)
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            l.starts_with('[').then(|| l.split(']').nth(1)?.split_whitespace().next().map(str::to_string))?
        })
        .collect()
}

/// A GNU C nested function whose address is taken: gcc builds a trampoline on the stack and marks
/// the object's `.note.GNU-stack` executable.
const NESTED: &str = "#include <stdio.h>\n\
    static int apply(int (*f)(int), int v) { return f(v); }\n\
    int main(void) {\n\
      int base = 40;\n\
      int add(int x) { return base + x; }\n\
      printf(\"%d\\n\", apply(add, 2));\n\
      return 0;\n\
    }\n";

/// An object asking for an executable stack gets one from GNU ld by default, from the linker under
/// test only with `-z execstack-if-needed` (or `-z execstack`); without, the link warns, naming
/// the object, and the program's trampoline faults. Objects that do not ask get a non-executable
/// stack whatever `-z execstack-if-needed` says, as GNU ld gives them.
#[test]
fn executable_stack_only_if_needed_and_asked() {
    let Some(tmp) = setup("gnuopt-execstack", &[]) else { return };
    compile(&tmp, "nest.c", NESTED, &[]);
    compile(&tmp, "plain.c", "#include <stdio.h>\nint main(void) { puts(\"plain\"); return 0; }\n", &[]);
    assert!(readelf(&tmp, "-SW", "nest.o").lines().any(|l| l.contains(".note.GNU-stack") && l.contains(" X ")));

    gcc_must(&tmp, false, &["nest.o", "-o", "gnu"]);
    assert_eq!(stack_flags(&tmp, "gnu"), "RWE");
    assert_eq!(run(&tmp, "gnu"), ("42\n".to_string(), Some(0)));
    for (exe, flag) in [("if-needed", "-Wl,-z,execstack-if-needed"), ("forced", "-Wl,-z,execstack")] {
        let out = gcc_must(&tmp, true, &["nest.o", flag, "-o", exe]);
        assert_eq!(stack_flags(&tmp, exe), "RWE", "{flag}");
        assert_eq!(run(&tmp, exe), ("42\n".to_string(), Some(0)), "{flag}");
        if testing_rivet() {
            assert!(!stderr(&out).contains("executable stack"), "{flag}: {}", stderr(&out));
        }
    }
    // The last of -z execstack-if-needed / -z noexecstack decides.
    gcc_must(&tmp, true, &["nest.o", "-Wl,-z,execstack-if-needed,-z,noexecstack", "-o", "undone"]);
    assert_eq!(stack_flags(&tmp, "undone"), "RW");

    let out = gcc_must(&tmp, true, &["nest.o", "-o", "default"]);
    assert_eq!(stack_flags(&tmp, "default"), "RW");
    if testing_rivet() {
        let err = stderr(&out);
        for phrase in ["warning: nest.o: requires executable stack", "may cause a segmentation fault", "-z execstack"] {
            assert!(err.contains(phrase), "missing {phrase:?} in:\n{err}");
        }
    }
    // The trampoline on a non-executable stack: the program dies of SIGSEGV, as the warning says.
    assert_eq!(run(&tmp, "default").1, None, "the trampoline ran on a non-executable stack");

    gcc_must(&tmp, false, &["plain.o", "-o", "plain-gnu"]);
    let out = gcc_must(&tmp, true, &["plain.o", "-Wl,-z,execstack-if-needed", "-o", "plain-ours"]);
    assert_eq!(stack_flags(&tmp, "plain-ours"), stack_flags(&tmp, "plain-gnu"));
    assert_eq!(stack_flags(&tmp, "plain-ours"), "RW");
    assert!(!stderr(&out).contains("executable stack"), "{}", stderr(&out));
    tmp.finish();
}

/// The `x86 ISA needed` line of `readelf -n`.
fn isa_needed(tmp: &TempDir, file: &str) -> Option<String> {
    readelf(tmp, "-nW", file).lines().find(|l| l.contains("x86 ISA needed")).map(|l| l.trim().to_string())
}

/// `-z x86-64-v2|v3|v4` add the level to GNU_PROPERTY_X86_ISA_1_NEEDED as GNU ld does, ORed
/// with what the inputs say (gcc's start files: baseline), in executables and shared libraries;
/// the last one given counts.
#[test]
fn isa_level_note_matches_gnu_ld() {
    let Some(tmp) = setup("gnuopt-isa", &[]) else { return };
    compile(&tmp, "m.c", "int main(void) { return 0; }\n", &["-fPIC"]);
    for level in ["v2", "v3", "v4"] {
        let flag = format!("-Wl,-z,x86-64-{level}");
        for (kind, extra) in [("exe", &[][..]), ("so", &["-shared"][..])] {
            let (gnu, ours) = (format!("gnu-{level}.{kind}"), format!("ours-{level}.{kind}"));
            gcc_must(&tmp, false, &[&["m.o", &flag, "-o", &gnu][..], extra].concat());
            gcc_must(&tmp, true, &[&["m.o", &flag, "-o", &ours][..], extra].concat());
            let want = isa_needed(&tmp, &gnu);
            assert!(want.as_deref().is_some_and(|w| w.contains(&format!("x86-64-{level}"))), "{want:?}");
            assert_eq!(isa_needed(&tmp, &ours), want, "{kind} -z x86-64-{level}");
        }
    }
    gcc_must(&tmp, false, &["m.o", "-Wl,-z,x86-64-v4,-z,x86-64-v2", "-o", "gnu-last"]);
    gcc_must(&tmp, true, &["m.o", "-Wl,-z,x86-64-v4,-z,x86-64-v2", "-o", "ours-last"]);
    assert_eq!(isa_needed(&tmp, "ours-last"), isa_needed(&tmp, "gnu-last"));
    assert!(run(&tmp, "ours-v2.exe").1 == Some(0));
    // Without the option the note says what the inputs say.
    gcc_must(&tmp, false, &["m.o", "-o", "gnu-none"]);
    gcc_must(&tmp, true, &["m.o", "-o", "ours-none"]);
    assert_eq!(isa_needed(&tmp, "ours-none"), isa_needed(&tmp, "gnu-none"));
    tmp.finish();
}

const HELLO: &str = "#include <stdio.h>\nint main(void) { printf(\"Hello \"); puts(\"world\"); return 0; }\n";

/// `-z nosectionheader` (lld 20's, mold's): no section header table and none of the sections only
/// it could find; the loaded image and the program headers are those of the same link without it,
/// and the program runs as GNU ld's does. `-z sectionheader` after it undoes it; with `-r` or a
/// separate debug file it is refused.
#[test]
fn no_section_header_table() {
    let Some(tmp) = setup("gnuopt-noshdr", &[]) else { return };
    compile(&tmp, "a.c", HELLO, &["-g"]);
    gcc_must(&tmp, false, &["a.o", "-o", "gnu"]);
    gcc_must(&tmp, true, &["a.o", "-o", "with"]);
    gcc_must(&tmp, true, &["a.o", "-Wl,-z,nosectionheader", "-o", "without"]);
    gcc_must(&tmp, true, &["a.o", "-Wl,-z,nosectionheader,-z,sectionheader", "-o", "undone"]);
    let want = run(&tmp, "gnu");
    assert_eq!(want.0, "Hello world\n");
    assert_eq!(run(&tmp, "without"), want);

    let header = readelf(&tmp, "-hW", "without");
    for fact in [
        "Start of section headers:          0 ",
        "Size of section headers:           0 ",
        "Number of section headers:         0",
    ] {
        assert!(header.contains(fact), "missing {fact:?}:\n{header}");
    }
    assert!(readelf(&tmp, "-hW", "undone").contains("Size of section headers:           64 (bytes)"));
    let segments =
        |f: &str| readelf(&tmp, "-lW", f).lines().filter(|l| l.contains("0x")).collect::<Vec<_>>().join("\n");
    assert_eq!(segments("without"), segments("with"));
    // The file ends where the last loaded byte does: no .symtab, .debug_* or .comment.
    let size = |f: &str| std::fs::metadata(tmp.join(f)).unwrap().len();
    let load_end = readelf(&tmp, "-lW", "with")
        .lines()
        .filter(|l| l.trim_start().starts_with("LOAD"))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            u64::from_str_radix(&w[1][2..], 16).unwrap() + u64::from_str_radix(&w[4][2..], 16).unwrap()
        })
        .max()
        .unwrap();
    assert_eq!(size("without"), load_end);
    assert!(size("with") > size("without"));
    let dump = std::fs::read(tmp.join("without")).unwrap();
    assert!(!dump.windows(8).any(|w| w == b".symtab\0"), "section names left in the file");

    for (args, phrase) in [
        (&["-r", "a.o", "-z", "nosectionheader", "-o", "r.o"][..], "-r and -z nosectionheader"),
        (&["-shared", "a.o", "-z", "nosectionheader", "--separate-debug-file", "-o", "x.so"][..], "-z nosectionheader"),
    ] {
        if testing_rivet() {
            let out = ld(&tmp, &linker(), args);
            assert!(!out.status.success(), "{args:?} linked");
            assert!(stderr(&out).contains(phrase), "{}", stderr(&out));
        }
    }
    tmp.finish();
}

/// The first instruction of each function of `exe` that objdump shows: (name, mnemonic).
fn first_instructions(tmp: &TempDir, exe: &str) -> Vec<(String, String)> {
    let out = must(Command::new("objdump").arg("-d").arg("--no-show-raw-insn").arg(tmp.join(exe)));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut found = Vec::new();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if let Some(name) = l.strip_suffix(">:").and_then(|l| l.split_once('<')).map(|(_, n)| n.to_string()) {
            let insn = lines.next().unwrap_or("").split('\t').nth(1).unwrap_or("").split_whitespace().next();
            found.push((name, insn.unwrap_or("").to_string()));
        }
    }
    found
}

fn first_of(found: &[(String, String)], name: &str) -> String {
    found.iter().find(|f| f.0 == name).map(|f| f.1.clone()).unwrap_or_else(|| panic!("no {name} in {found:?}"))
}

const ENDBR_LIB: &str = "int foo(void) { return 3; }\n\
    int bar(void) { return foo() + 1; }\n\
    int taken(void) { return 5; }\n\
    int (*ptr)(void) = taken;\n\
    __attribute__((visibility(\"default\"))) int exported(void) { return 7; }\n";

const ENDBR_MAIN: &str = "#include <stdio.h>\n\
    int foo(void); int bar(void); extern int (*ptr)(void);\n\
    int main(void) { printf(\"%d %d %d\\n\", foo(), bar(), ptr()); return 0; }\n";

/// `-z rewrite-endbr` (mold's): the `endbr64` of functions that are only called directly becomes
/// a nop; main (called by libc through a pointer), a function whose address is stored, and a
/// shared library's exported functions keep theirs. The programs run as GNU ld's, and without the
/// option every function keeps its `endbr64`, as with GNU ld.
#[test]
fn rewrite_endbr_keeps_landing_pads_that_are_needed() {
    let Some(tmp) = setup("gnuopt-endbr", &["objdump"]) else { return };
    for (sections, flag) in [("split", "-ffunction-sections"), ("one", "-fno-function-sections")] {
        let (lib, main) = (format!("lib-{sections}.c"), format!("main-{sections}.c"));
        compile(&tmp, &lib, ENDBR_LIB, &["-O", "-fcf-protection", "-fno-inline", flag]);
        compile(&tmp, &main, ENDBR_MAIN, &["-O", "-fcf-protection", "-fno-inline", flag]);
        let objs = [format!("lib-{sections}.o"), format!("main-{sections}.o")];
        let objs: Vec<&str> = objs.iter().map(String::as_str).collect();
        let (gnu, plain, ours) = (format!("gnu-{sections}"), format!("plain-{sections}"), format!("ours-{sections}"));
        gcc_must(&tmp, false, &[&objs[..], &["-o", &gnu]].concat());
        gcc_must(&tmp, true, &[&objs[..], &["-o", &plain]].concat());
        gcc_must(&tmp, true, &[&objs[..], &["-Wl,-z,rewrite-endbr", "-o", &ours]].concat());
        let want = run(&tmp, &gnu);
        assert_eq!(want.0, "3 4 5\n");
        assert_eq!(run(&tmp, &ours), want, "{sections}");
        let (g, p, o) =
            (first_instructions(&tmp, &gnu), first_instructions(&tmp, &plain), first_instructions(&tmp, &ours));
        for f in ["foo", "bar", "taken", "main"] {
            assert_eq!(first_of(&g, f), "endbr64", "{sections}: GNU ld's {f}");
            assert_eq!(first_of(&p, f), "endbr64", "{sections}: {f} without the option");
        }
        assert_eq!(first_of(&o, "foo"), "nopl", "{sections}: foo");
        assert_eq!(first_of(&o, "bar"), "nopl", "{sections}: bar");
        assert_eq!(first_of(&o, "taken"), "endbr64", "{sections}: taken's address is stored");
        assert_eq!(first_of(&o, "main"), "endbr64", "{sections}: main is called through a pointer");
        assert_eq!(first_of(&o, "_start"), first_of(&g, "_start"), "{sections}: the entry point");
    }
    // A shared library: exported functions may be called through the PLT of any program.
    compile(&tmp, "so.c", ENDBR_LIB, &["-O", "-fPIC", "-fcf-protection", "-fno-inline", "-fvisibility=hidden"]);
    gcc_must(&tmp, true, &["-shared", "so.o", "-Wl,-z,rewrite-endbr", "-o", "libendbr.so"]);
    let o = first_instructions(&tmp, "libendbr.so");
    assert_eq!(first_of(&o, "exported"), "endbr64");
    assert_eq!(first_of(&o, "taken"), "endbr64");
    assert_eq!(first_of(&o, "foo"), "nopl");
    tmp.finish();
}

/// `(type, virtual address)` of the first PT_LOAD and the ELF type.
fn first_load(tmp: &TempDir, file: &str) -> (String, u64) {
    let segs = readelf(tmp, "-lW", file);
    let ty = segs.lines().find(|l| l.starts_with("Elf file type is")).unwrap().split_whitespace().nth(4).unwrap();
    let load = segs.lines().find(|l| l.trim_start().starts_with("LOAD")).unwrap();
    let vaddr = load.split_whitespace().nth(2).unwrap();
    (ty.to_string(), u64::from_str_radix(&vaddr[2..], 16).unwrap())
}

const WHERE: &str = "#include <stdio.h>\nint main(void) { printf(\"%p\\n\", (void *)main); return 0; }\n";

/// `-Ttext-segment`: the first segment starts at the address given, as GNU ld puts it, and the
/// program runs there. A position-independent executable so placed is ET_EXEC, still marked PIE,
/// so that the kernel loads it at that address, as GNU ld makes it; at address 0 too (mold's
/// rule, where GNU ld falls back to an ordinary ET_DYN PIE).
#[test]
fn ttext_segment_places_the_first_segment() {
    let Some(tmp) = setup("gnuopt-ttext", &["nm"]) else { return };
    compile(&tmp, "a.c", WHERE, &["-fPIE"]);
    gcc_must(&tmp, false, &["-no-pie", "a.o", "-Wl,-Ttext-segment=0x9000000", "-o", "gnu"]);
    gcc_must(&tmp, true, &["-no-pie", "a.o", "-Wl,-Ttext-segment=0x9000000", "-o", "ours"]);
    assert_eq!(first_load(&tmp, "ours"), first_load(&tmp, "gnu"));
    assert_eq!(first_load(&tmp, "ours"), ("EXEC".to_string(), 0x9000000));

    gcc_must(&tmp, false, &["-pie", "a.o", "-Wl,-Ttext-segment=0xa000000", "-o", "gnu-pie"]);
    gcc_must(&tmp, true, &["-pie", "a.o", "-Wl,--Ttext-segment,0xa000000", "-o", "ours-pie"]);
    assert_eq!(first_load(&tmp, "ours-pie"), first_load(&tmp, "gnu-pie"));
    assert_eq!(first_load(&tmp, "ours-pie"), ("EXEC".to_string(), 0xa000000));
    gcc_must(&tmp, true, &["-pie", "a.o", "-Wl,-Ttext-segment=0", "-o", "ours-zero"]);
    assert_eq!(first_load(&tmp, "ours-zero"), ("EXEC".to_string(), 0));
    assert!(readelf(&tmp, "-dW", "ours-pie").lines().any(|l| l.contains("FLAGS_1") && l.contains("PIE")));
    // main runs at the address it was linked at.
    for exe in ["ours", "ours-pie"] {
        let nm = String::from_utf8_lossy(&must(Command::new("nm").arg(tmp.join(exe))).stdout).into_owned();
        let main = nm.lines().find(|l| l.ends_with(" T main")).unwrap().split_whitespace().next().unwrap();
        let linked = u64::from_str_radix(main, 16).unwrap();
        let (out, code) = run(&tmp, exe);
        assert_eq!(code, Some(0));
        assert_eq!(u64::from_str_radix(out.trim().trim_start_matches("0x"), 16).unwrap(), linked, "{exe}");
    }
    // Without it a PIE stays ET_DYN at 0.
    gcc_must(&tmp, true, &["-pie", "a.o", "-o", "plain-pie"]);
    assert_eq!(first_load(&tmp, "plain-pie"), ("DYN".to_string(), 0));
    tmp.finish();
}

fn has_hash_sections(tmp: &TempDir, file: &str) -> (bool, bool) {
    let names = section_names(tmp, file);
    (names.iter().any(|n| n == ".hash"), names.iter().any(|n| n == ".gnu.hash"))
}

/// `--hash-style`: by default both tables, as GNU ld (Debian's) and lld write them when called
/// directly; `none` (mold's) writes neither, whatever came before it, and a program so linked
/// still runs.
#[test]
fn hash_style_default_and_none() {
    let Some(tmp) = setup("gnuopt-hash", &[LLD]) else { return };
    compile(&tmp, "a.c", "void foo(void) {}\n", &["-fPIC"]);
    ld_must(&tmp, Path::new("ld"), &["-shared", "-o", "gnu.so", "a.o"]);
    ld_must(&tmp, Path::new(LLD), &["-shared", "-o", "lld.so", "a.o"]);
    ld_must(&tmp, &linker(), &["-shared", "-o", "ours.so", "a.o"]);
    assert_eq!(has_hash_sections(&tmp, "ours.so"), has_hash_sections(&tmp, "gnu.so"));
    assert_eq!(has_hash_sections(&tmp, "ours.so"), has_hash_sections(&tmp, "lld.so"));
    assert_eq!(has_hash_sections(&tmp, "ours.so"), (true, true));
    for (style, want) in [("sysv", (true, false)), ("gnu", (false, true)), ("both", (true, true))] {
        let out = format!("{style}.so");
        ld_must(
            &tmp,
            Path::new("ld"),
            &["-shared", "-o", &format!("gnu-{out}"), "a.o", &format!("--hash-style={style}")],
        );
        ld_must(&tmp, &linker(), &["-shared", "-o", &out, "a.o", &format!("--hash-style={style}")]);
        assert_eq!(has_hash_sections(&tmp, &out), has_hash_sections(&tmp, &format!("gnu-{out}")));
        assert_eq!(has_hash_sections(&tmp, &out), want, "{style}");
    }
    ld_must(&tmp, &linker(), &["-shared", "-o", "none.so", "a.o", "--hash-style=both", "--hash-style=none"]);
    assert_eq!(has_hash_sections(&tmp, "none.so"), (false, false));
    assert!(!readelf(&tmp, "-dW", "none.so").contains("HASH"));

    compile(&tmp, "hello.c", HELLO, &[]);
    gcc_must(&tmp, true, &["hello.o", "-Wl,--hash-style=none", "-o", "hello"]);
    assert_eq!(has_hash_sections(&tmp, "hello"), (false, false));
    assert_eq!(run(&tmp, "hello"), ("Hello world\n".to_string(), Some(0)));
    tmp.finish();
}

fn has_interp(tmp: &TempDir, file: &str) -> bool {
    let segs = readelf(tmp, "-lW", file);
    let phdr = segs.lines().any(|l| l.trim_start().starts_with("INTERP"));
    assert_eq!(phdr, section_names(tmp, file).iter().any(|n| n == ".interp"), "{file}: PT_INTERP and .interp");
    phdr
}

const EXIT7: &str = ".globl _start\n_start:\n mov $60, %eax\n mov $7, %edi\n syscall\n\
    .section .note.GNU-stack,\"\",@progbits\n";

/// Where `.interp` goes: a `--dynamic-linker` given for an executable without shared libraries is
/// written (as lld and mold write it; rivet also keeps the dynamic section the loader needs, so
/// the program runs), not under `-static` (GNU ld's, mold's), never in a shared library (GNU ld,
/// lld), and `-shared -pie` is a position-independent executable with an interpreter (GNU ld:
/// the last of the two decides).
#[test]
fn interpreter_rules() {
    let Some(tmp) = setup("gnuopt-interp", &[LLD]) else { return };
    compile(&tmp, "a.s", EXIT7, &["-fPIC"]);
    let dl = "--dynamic-linker=/lib64/ld-linux-x86-64.so.2";
    let ours = linker();
    for (name, args) in [("exe", &[dl][..]), ("static", &[dl, "-static"][..])] {
        let args = [&["a.o", "-o", name][..], args].concat();
        ld_must(&tmp, &ours, &args);
        assert_eq!(run(&tmp, name).1, Some(7), "{name}");
    }
    ld_must(&tmp, Path::new(LLD), &["a.o", "-o", "lld-exe", dl]);
    assert!(has_interp(&tmp, "lld-exe"));
    assert!(has_interp(&tmp, "exe"));
    assert!(section_names(&tmp, "exe").iter().any(|n| n == ".dynamic"), "the loader needs a dynamic section");
    ld_must(&tmp, Path::new("ld"), &["a.o", "-o", "gnu-static", dl, "-static"]);
    assert_eq!(has_interp(&tmp, "static"), has_interp(&tmp, "gnu-static"));
    assert!(!has_interp(&tmp, "static"));
    // Without the option the executable stays static, as GNU ld makes it.
    ld_must(&tmp, &ours, &["a.o", "-o", "bare"]);
    assert!(!has_interp(&tmp, "bare"));

    for (name, args) in [
        ("lib.so", &["-shared", dl][..]),
        ("pie", &["-pie", dl][..]),
        ("runnable.so", &["-shared", "-pie", dl][..]),
        ("lib2.so", &["-pie", "-shared", dl][..]),
    ] {
        let args = [&["-e", "_start", "a.o", "-o"][..], &[name][..], args].concat();
        ld_must(&tmp, Path::new("ld"), &[&args[..], &["-o", &format!("gnu-{name}")]].concat());
        ld_must(&tmp, &ours, &args);
        assert_eq!(has_interp(&tmp, name), has_interp(&tmp, &format!("gnu-{name}")), "{name}");
        let header = |f: &str| readelf(&tmp, "-hW", f).lines().find(|l| l.contains("Type:")).unwrap().to_string();
        assert_eq!(header(name), header(&format!("gnu-{name}")), "{name}");
    }
    assert!(has_interp(&tmp, "runnable.so") && !has_interp(&tmp, "lib.so") && !has_interp(&tmp, "lib2.so"));
    assert_eq!(run(&tmp, "runnable.so").1, Some(7));
    tmp.finish();
}

/// `-f`/`--auxiliary` without `-shared` is refused, as GNU ld and lld refuse it; a stray
/// `-fuse-ld=NAME` (a compiler driver's option) is not taken for `-f use-ld=NAME` and changes
/// nothing.
#[test]
fn auxiliary_needs_shared_and_fuse_ld_is_ignored() {
    let Some(tmp) = setup("gnuopt-aux", &[LLD]) else { return };
    compile(&tmp, "a.s", EXIT7, &[]);
    for (name, l) in [("gnu", Path::new("ld")), ("lld", Path::new(LLD)), ("ours", &linker())] {
        let out = ld(&tmp, l, &["-o", "exe", "a.o", "-f", "bar"]);
        assert!(!out.status.success(), "{name} linked -f without -shared");
    }
    let out = ld(&tmp, &linker(), &["-o", "exe", "a.o", "--auxiliary=bar"]);
    if testing_rivet() {
        assert!(stderr(&out).contains("error: -f/--auxiliary may not be used without -shared"), "{}", stderr(&out));
    }
    ld_must(&tmp, &linker(), &["-o", "plain", "a.o"]);
    ld_must(&tmp, &linker(), &["-o", "fuse", "a.o", "-fuse-ld=mold"]);
    assert_eq!(std::fs::read(tmp.join("plain")).unwrap(), std::fs::read(tmp.join("fuse")).unwrap());
    ld_must(&tmp, &linker(), &["-shared", "-o", "aux.so", "a.o", "-f", "bar", "--auxiliary", "foo"]);
    let dynamic = readelf(&tmp, "-dW", "aux.so");
    assert!(dynamic.contains("Auxiliary library: [bar]") && dynamic.contains("Auxiliary library: [foo]"));
    tmp.finish();
}

/// A shared library named under `-static` or `-Bstatic` is refused by GNU ld, lld and the linker
/// under test ("attempted static link of a dynamic object", naming it); after `-Bdynamic` it
/// links, and the program runs.
#[test]
fn shared_object_under_bstatic_is_refused() {
    let Some(tmp) = setup("gnuopt-staticdso", &[LLD]) else { return };
    compile(&tmp, "lib.c", "int fn(int a, int b) { return a + b; }\n", &["-fPIC"]);
    must(Command::new("gcc").current_dir(&tmp.path).args(["-shared", "lib.o", "-o", "liba.so"]));
    compile(&tmp, "b.s", ".globl _start\n_start:\n mov $1, %edi\n mov $2, %esi\n call fn@PLT\n mov %eax, %edi\n mov $60, %eax\n syscall\n.section .note.GNU-stack,\"\",@progbits\n", &[]);
    let dl = "--dynamic-linker=/lib64/ld-linux-x86-64.so.2";
    for (name, l) in [("gnu", Path::new("ld")), ("lld", Path::new(LLD)), ("ours", &linker())] {
        for refused in [&["-static", "b.o", "liba.so"][..], &["b.o", "-Bstatic", "liba.so"][..]] {
            let out = ld(&tmp, l, &[&["-o", "x"][..], refused].concat());
            assert!(!out.status.success(), "{name} linked {refused:?}");
            if name == "ours" && testing_rivet() {
                let err = stderr(&out);
                assert!(err.contains("liba.so: attempted static link of a dynamic object"), "{err}");
            }
        }
        let exe = format!("{name}-exe");
        ld_must(&tmp, l, &["-o", &exe, dl, "b.o", "-Bstatic", "-Bdynamic", "liba.so", "-rpath", "$ORIGIN"]);
        assert_eq!(run(&tmp, &exe).1, Some(3), "{name}");
    }
    tmp.finish();
}

fn runpath(tmp: &TempDir, file: &str) -> Option<String> {
    readelf(tmp, "-dW", file).lines().find_map(|l| {
        let (_, rest) = l.split_once("Library runpath: [")?;
        Some(rest.trim_end_matches(']').to_string())
    })
}

/// Several `-rpath`/`-R` directories make one DT_RUNPATH in command-line order, a directory given
/// again written once: GNU ld's string.
#[test]
fn rpath_directories_joined_once_each() {
    let Some(tmp) = setup("gnuopt-rpath", &[]) else { return };
    compile(&tmp, "a.c", "int main(void) { return 0; }\n", &[]);
    for (i, flags) in [
        "-Wl,-rpath,/foo,-rpath,/bar,-R/no/such/directory,-R/",
        "-Wl,-rpath,/foo,-rpath,/bar,-rpath,/foo,-rpath,/baz",
        "-Wl,-rpath,/a:/b,-rpath,/b,-rpath,/c:/a",
    ]
    .iter()
    .enumerate()
    {
        let (gnu, ours) = (format!("gnu{i}"), format!("ours{i}"));
        gcc_must(&tmp, false, &["a.o", flags, "-o", &gnu]);
        gcc_must(&tmp, true, &["a.o", flags, "-o", &ours]);
        assert!(runpath(&tmp, &gnu).is_some());
        assert_eq!(runpath(&tmp, &ours), runpath(&tmp, &gnu), "{flags}");
    }
    assert_eq!(runpath(&tmp, "ours1").as_deref(), Some("/foo:/bar:/baz"));
    tmp.finish();
}
