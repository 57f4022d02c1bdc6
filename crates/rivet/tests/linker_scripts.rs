//! Linker scripts: C programs linked with scripts by GNU ld or lld (through gcc) and by the
//! linker under test (`gcc -B`), run, and the facts the scripts decide compared: the symbols they
//! define (section, type, size, value relative to other symbols), section addresses and program
//! headers where a script fixes them. lld is the reference where GNU ld and lld differ (a script
//! symbol's section and type); its facts are compared when it is installed.
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const LLD_DIR: &str = "/usr/lib/llvm-19/bin";

fn setup(name: &str) -> Option<TempDir> {
    if !have("gcc") || !have("readelf") || !testing_rivet() {
        eprintln!("skipped: gcc or readelf missing, or not testing rivet");
        return None;
    }
    Some(TempDir::new(name))
}

fn have_lld() -> bool {
    Path::new(LLD_DIR).join("ld.lld").exists()
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Ld {
    Gnu,
    Lld,
    Ours,
}

fn write(tmp: &TempDir, name: &str, text: &str) {
    let p = tmp.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn cc(tmp: &TempDir, args: &[&str]) {
    must(Command::new("gcc").current_dir(&tmp.path).args(args));
}

/// `gcc ARGS -o OUT` with the chosen linker.
fn link_cmd(tmp: &TempDir, ld: Ld, args: &[&str], out: &str) -> Command {
    let mut cmd = Command::new("gcc");
    cmd.current_dir(&tmp.path);
    match ld {
        Ld::Gnu => {}
        Ld::Lld => {
            cmd.arg("-fuse-ld=lld").arg(format!("-B{LLD_DIR}"));
        }
        Ld::Ours => {
            cmd.arg("-B").arg(linker_dir(tmp));
        }
    }
    cmd.args(args).arg("-o").arg(out);
    cmd
}

fn link(tmp: &TempDir, ld: Ld, args: &[&str], out: &str) -> PathBuf {
    must(&mut link_cmd(tmp, ld, args, out));
    tmp.join(out)
}

/// The link fails; gives its stderr.
fn link_fails(tmp: &TempDir, args: &[&str]) -> String {
    let out = link_cmd(tmp, Ld::Ours, args, "fail.out").output().unwrap();
    assert!(!out.status.success(), "link should fail: {args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn run(path: &Path) -> String {
    String::from_utf8_lossy(&must(&mut Command::new(path)).stdout).into_owned()
}

/// A `.symtab` symbol: (value, size, type, bind, visibility, section name).
#[derive(Clone, Debug, PartialEq)]
struct Sym {
    value: u64,
    size: u64,
    ty: String,
    bind: String,
    vis: String,
    section: String,
}

fn symbols(file: &Path) -> std::collections::HashMap<String, Sym> {
    let sections = section_names(file);
    let mut out = std::collections::HashMap::new();
    let text = readelf(&["-sW"], file);
    let mut in_symtab = false;
    for line in text.lines() {
        if line.starts_with("Symbol table") {
            in_symtab = line.contains("'.symtab'");
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if !in_symtab || f.len() < 8 || !f[0].trim_end_matches(':').bytes().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let section = match f[6].parse::<usize>() {
            Ok(i) => sections.get(i).cloned().unwrap_or_default(),
            Err(_) => f[6].to_string(),
        };
        let sym = Sym {
            value: u64::from_str_radix(f[1], 16).unwrap(),
            size: f[2].parse().unwrap_or(0),
            ty: f[3].into(),
            bind: f[4].into(),
            vis: f[5].into(),
            section,
        };
        out.insert(f[7].to_string(), sym);
    }
    out
}

/// Section names by index.
fn section_names(file: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for line in readelf(&["-SW"], file).lines() {
        let Some(rest) = line.trim_start().strip_prefix('[') else { continue };
        let Some((idx, tail)) = rest.split_once(']') else { continue };
        let Ok(i) = idx.trim().parse::<usize>() else { continue };
        let name = tail.split_whitespace().next().unwrap_or("");
        if names.len() <= i {
            names.resize(i + 1, String::new());
        }
        names[i] = if name == "NULL" { String::new() } else { name.to_string() };
    }
    names
}

/// `name`'s facts with its value given relative to `base`'s (addresses differ between linkers).
fn relative(syms: &std::collections::HashMap<String, Sym>, name: &str, base: &str) -> Option<(i64, Sym)> {
    let s = syms.get(name)?.clone();
    let b = syms.get(base).map_or(0, |b| b.value);
    let rel = if s.section == "ABS" { s.value as i64 } else { s.value.wrapping_sub(b) as i64 };
    Some((rel, Sym { value: 0, ..s }))
}

const FOO: &str = "int foo(void) { return 42; }\nint ext_fn(void) { return 5; }\n";
const MAIN: &str = "#include <stdio.h>\n\
    int bar(void);\n\
    extern char provided[], answer[], hid[];\n\
    int main(void) {\n\
        printf(\"%d %lu %lu %d\\n\", bar(), (unsigned long)provided, (unsigned long)answer, hid != 0);\n\
        return 0;\n\
    }\n";
/// Commands outside SECTIONS: the archive found through SEARCH_DIR, a copy of a function, numbers,
/// PROVIDE (used and unused), HIDDEN, EXTERN pulling a member nothing references, ASSERT, and an
/// INCLUDEd file with more of the same.
const SCRIPT: &str = "/* commands only */\n\
    SEARCH_DIR(lib)\n\
    INPUT(-lfoo)\n\
    EXTERN(ext_fn)\n\
    bar = foo;\n\
    answer = 0x10 * 4 + (1 << 3) - 6 / 2 + 1K % 1000;\n\
    PROVIDE(provided = answer + 1);\n\
    PROVIDE(unused_provide = 1);\n\
    HIDDEN(hid = foo + 1);\n\
    INCLUDE more.ld\n\
    ASSERT(DEFINED(foo) && answer == 93, \"foo must be defined\")\n";
const MORE: &str = "copy_of_bar = bar;\nmax_of = MAX(answer, 100) + MIN(2, 3) + CONSTANT(MAXPAGESIZE) / 4096;\n";

fn commands_setup(tmp: &TempDir) {
    write(tmp, "foo.c", FOO);
    write(tmp, "main.c", MAIN);
    write(tmp, "cmds.ld", SCRIPT);
    write(tmp, "more.ld", MORE);
    cc(tmp, &["-c", "-fPIC", "foo.c", "main.c"]);
    std::fs::create_dir_all(tmp.join("lib")).unwrap();
    must(Command::new("ar").current_dir(&tmp.path).args(["rcs", "lib/libfoo.a", "foo.o"]));
}

#[test]
fn script_commands_define_symbols_as_lld_does() {
    let Some(tmp) = setup("ls-commands") else { return };
    commands_setup(&tmp);
    // GNU ld's -T replaces its whole default script, so a -T script without SECTIONS makes no
    // working program there: lld (which keeps its default layout) is the reference for -T.
    for (how, args) in [("input", &["-no-pie", "main.o", "cmds.ld"][..]), ("-T", &["main.o", "-Wl,-T,cmds.ld"][..])] {
        let ours = link(&tmp, Ld::Ours, args, "ours.out");
        // In a PIE too, `provided` and `answer` are absolute: the same value at any load address.
        assert_eq!(run(&ours), "42 94 93 1\n", "{how}");
        if how == "input" {
            assert_eq!(run(&ours), run(&link(&tmp, Ld::Gnu, args, "gnu.out")), "{how}");
        }
        let syms = symbols(&ours);
        assert!(syms.contains_key("ext_fn"), "{how}: EXTERN pulls its member in");
        assert!(!syms.contains_key("unused_provide"), "{how}: an unreferenced PROVIDE defines nothing");
        assert_eq!(syms["hid"].bind, "LOCAL", "{how}: HIDDEN makes a local symbol in the executable");
        assert_eq!(syms["max_of"].value, 100 + 2 + 1);
        let reference = if have_lld() { Some(link(&tmp, Ld::Lld, args, "lld.out")) } else { None };
        if let Some(lld) = reference {
            let theirs = symbols(&lld);
            for name in ["bar", "copy_of_bar", "answer", "provided", "hid", "max_of", "foo", "ext_fn"] {
                assert_eq!(
                    relative(&syms, name, "foo"),
                    relative(&theirs, name, "foo"),
                    "{how}: {name} as lld makes it"
                );
            }
        }
    }
    tmp.finish();
}

#[test]
fn a_copied_function_is_exported_from_a_shared_library() {
    let Some(tmp) = setup("ls-defsym") else { return };
    write(&tmp, "a.c", "int foo(void) { return 42; }\n");
    write(&tmp, "c.c", "#include <stdio.h>\nint bar(void);\nint main(void) { printf(\"%d\\n\", bar()); return 0; }\n");
    write(&tmp, "script", "bar = foo;\n");
    cc(&tmp, &["-c", "-fPIC", "a.c", "c.c"]);
    for ld in [Ld::Gnu, Ld::Ours] {
        let lib = link(&tmp, ld, &["-shared", "script", "a.o"], "libb.so");
        let dynsym = readelf(&["--dyn-syms", "-W"], &lib);
        assert!(dynsym.lines().any(|l| l.contains("FUNC") && l.ends_with(" bar")), "{ld:?}: {dynsym}");
        let exe = link(&tmp, ld, &["c.o", "-L.", "-lb", "-Wl,-rpath,$ORIGIN"], "exe");
        assert_eq!(run(&exe), "42\n");
    }
    tmp.finish();
}

#[test]
fn version_blocks_count_in_command_line_order() {
    let Some(tmp) = setup("ls-version") else { return };
    write(&tmp, "a.script", "VERSION {\n  ver_a { global: foo; };\n}\n");
    write(&tmp, "b.script", "VERSION { ver_b { global: bar; }; }\n");
    write(&tmp, "c.ver", "ver_c { global: baz; local: *; };\n");
    write(&tmp, "c.c", "void foo(void) {}\nvoid bar(void) {}\nvoid baz(void) {}\nvoid hidden_one(void) {}\n");
    cc(&tmp, &["-c", "-fPIC", "c.c"]);
    let order = |f: &Path| -> Vec<String> {
        readelf(&["--version-info"], f)
            .lines()
            .filter_map(|l| l.split("Name: ").nth(1))
            .filter(|n| n.starts_with("ver_"))
            .map(|n| n.split_whitespace().next().unwrap().to_string())
            .collect()
    };
    let args = ["-shared", "a.script", "-Wl,--version-script=c.ver", "b.script", "c.o"];
    let gnu = link(&tmp, Ld::Gnu, &args, "gnu.so");
    let ours = link(&tmp, Ld::Ours, &args, "ours.so");
    // The --version-script's nodes first, then the scripts' in command-line order (GNU ld, lld).
    assert_eq!(order(&ours), ["ver_c", "ver_a", "ver_b"]);
    assert_eq!(order(&ours), order(&gnu));
    if have_lld() {
        assert_eq!(order(&ours), order(&link(&tmp, Ld::Lld, &args, "lld.so")));
    }
    let dyn_names = |f: &Path| readelf(&["--dyn-syms", "-W"], f).contains("hidden_one");
    assert_eq!(dyn_names(&ours), dyn_names(&gnu));
    tmp.finish();
}

#[test]
fn entry_output_and_sysroot_names() {
    let Some(tmp) = setup("ls-entry") else { return };
    write(&tmp, "s.c", "#include <stdio.h>\n#include <stdlib.h>\nvoid hello(void);\nvoid my_start(void) { hello(); exit(0); }\nint main(void) { return 1; }\n");
    write(&tmp, "sysroot/foo/h.c", "#include <stdio.h>\nvoid hello(void) { puts(\"hello\"); }\n");
    cc(&tmp, &["-c", "s.c", "-o", "s.o"]);
    cc(&tmp, &["-c", "sysroot/foo/h.c", "-o", "sysroot/foo/h.o"]);
    // `=` is the sysroot; an absolute name in a script inside the sysroot is under it too.
    write(&tmp, "e.ld", "ENTRY(my_start)\nOUTPUT_FORMAT(\"elf64-x86-64\", \"elf64-x86-64\", \"elf64-x86-64\")\nOUTPUT_ARCH(i386:x86-64)\nTARGET(elf64-x86-64)\nINPUT(=/foo/h.o)\n");
    write(&tmp, "sysroot/in.ld", "INPUT(/foo/h.o)\n");
    let sysroot = format!("-Wl,--sysroot={}", tmp.join("sysroot").display());
    for ld in [Ld::Gnu, Ld::Ours] {
        let exe = link(&tmp, ld, &[&sysroot, "s.o", "e.ld"], "exe");
        assert_eq!(run(&exe), "hello\n", "{ld:?}: ENTRY(my_start) runs my_start");
    }
    let exe = link(&tmp, Ld::Ours, &[&sysroot, "s.o", "sysroot/in.ld", "-Wl,-e,my_start"], "exe2");
    assert_eq!(run(&exe), "hello\n");
    // OUTPUT names the output when -o does not (rivet called directly: gcc always passes -o); a
    // freestanding program that exits with status 7.
    write(&tmp, "bare.c", "void _start(void) { __asm__ volatile(\"mov $60, %eax\\n mov $7, %edi\\n syscall\"); }\n");
    cc(&tmp, &["-c", "-O1", "-fno-pic", "bare.c"]);
    write(&tmp, "o.ld", "OUTPUT(named.out)\nINPUT(bare.o)\n");
    must(Command::new(linker()).current_dir(&tmp.path).args(["-static", "o.ld"]));
    let status = Command::new(tmp.join("named.out")).status().unwrap();
    assert_eq!(status.code(), Some(7));
    tmp.finish();
}

#[test]
fn script_errors_name_the_file_and_line() {
    let Some(tmp) = setup("ls-errors") else { return };
    write(&tmp, "a.c", "int main(void) { return 0; }\n");
    cc(&tmp, &["-c", "a.c"]);
    let cases: &[(&str, &str, &[&str])] = &[
        ("comment.ld", "VERSION { ver_x /*", &["comment.ld:1: unclosed comment in a linker script"]),
        ("unknown.ld", "/* x */\nENTRY(main)\nFROB(1)\n", &["unknown.ld:3: unknown directive: FROB"]),
        ("format.ld", "OUTPUT_FORMAT(elf32-i386)\n", &["format.ld:1", "unsupported output format 'elf32-i386'"]),
        ("arch.ld", "OUTPUT_ARCH(riscv)\n", &["arch.ld:1", "unsupported architecture 'riscv'"]),
        (
            "other.ld",
            "OUTPUT_ARCH(aarch64)\n",
            &["other.ld:1", "OUTPUT_ARCH(aarch64) names AArch64, not x86-64, the link's target"],
        ),
        (
            "otherformat.ld",
            "OUTPUT_FORMAT(elf64-littleaarch64)\n",
            &["otherformat.ld:1", "OUTPUT_FORMAT(elf64-littleaarch64) names AArch64, not x86-64"],
        ),
        ("assert.ld", "x = 1;\n\nASSERT(x == 2, \"x must be two\")\n", &["assert.ld:3", "x must be two"]),
        ("dot.ld", "\nx = . + 1;\n", &["dot.ld:2", "'.' outside SECTIONS"]),
        ("undef.ld", "x = nowhere + 1;\n", &["undef.ld:1", "symbol not found: nowhere"]),
        ("include.ld", "INCLUDE missing.ld\n", &["include.ld:1", "cannot find linker script missing.ld"]),
        ("quote.ld", "INPUT(\"a.o)\n", &["quote.ld:1: unclosed quote"]),
        ("div.ld", "x = 1 / (2 - 2);\n", &["div.ld:1", "division by zero"]),
        (
            "awi.ld",
            "SECTIONS { .t : ALIGN_WITH_INPUT { *(.text) } }\n",
            &["awi.ld:1", "ALIGN_WITH_INPUT is not supported"],
        ),
        (
            "insert.ld",
            "SECTIONS { .foo : { BYTE(1) } } INSERT AFTER .nothing;\n",
            &["insert.ld:1", "unable to insert .foo after .nothing: no such output section"],
        ),
        ("phdrs.ld", "PHDRS { text PT_LOAD; }\n", &["phdrs.ld: PHDRS without SECTIONS is not supported yet"]),
        (
            "backward.ld",
            "SECTIONS { .text : { *(.text*) . = 0; } }\n",
            &["backward.ld:1", "unable to move location counter backward for: .text"],
        ),
    ];
    for (name, text, wanted) in cases {
        write(&tmp, name, text);
        let dash_t = format!("-Wl,-T,{name}");
        for args in [["a.o", name], ["a.o", dash_t.as_str()]] {
            let err = link_fails(&tmp, &args);
            for w in *wanted {
                assert!(err.contains(w), "{name} ({args:?}): expected '{w}' in:\n{err}");
            }
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    tmp.finish();
}

/// GNU ld's own default script (`ld --verbose`) for the mode.
fn gnu_default_script(mode: &str) -> String {
    let out = must(Command::new("ld").args([mode, "--verbose"]).arg("--verbose"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut parts = text.split("==================================================");
    parts.nth(1).expect("ld --verbose prints its script between rules").to_string()
}

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

/// (stdout, exit status) of a program.
fn outcome(path: &Path) -> (String, Option<i32>) {
    let out = Command::new(path).output().unwrap();
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
}

#[test]
fn gnu_lds_default_scripts_give_programs_that_run_like_gnu_lds() {
    let Some(tmp) = setup("ls-gnu-default") else { return };
    if !have("ld") || !have("g++") {
        eprintln!("skipped: GNU ld or g++ missing");
        return;
    }
    let dir = programs_dir();
    let include = format!("-I{}", dir.display());
    // Init and fini arrays by priority, copy relocations, IFUNCs (a static program finds its
    // IRELATIVEs through __rela_iplt_*), TLS (.tbss and .tcommon), __start_/__stop_, linker-defined
    // symbols, C++ (threads, iostream).
    let programs = [
        "ctors.c",
        "environ.c",
        "ifunc.c",
        "thread_local_init.c",
        "tls_bss_sections.c",
        "gc_start_stop.c",
        "linker_symbols.c",
        "cxx_thread.cpp",
    ];
    for (mode, flag) in [("-no-pie", "--no-pie"), ("-pie", "-pie"), ("-static", "-static")] {
        let script = format!("default{mode}.ld");
        let flag = if flag == "--no-pie" { "-znoexecstack" } else { flag };
        write(&tmp, &script, &gnu_default_script(flag));
        let dash_t = format!("-Wl,-T,{script}");
        for p in programs {
            let src = dir.join(p);
            let src = src.to_str().unwrap();
            let driver = if p.ends_with(".cpp") { "g++" } else { "gcc" };
            let outcome_of = |ld: Ld, out: &str| {
                let cmd = link_cmd(&tmp, ld, &[mode, "-O1", include.as_str(), src, dash_t.as_str()], out);
                let program = cmd.get_program().to_owned();
                let args: Vec<_> = cmd.get_args().map(|a| a.to_owned()).collect();
                let mut c = Command::new(if program == "gcc" { driver } else { program.to_str().unwrap() });
                c.current_dir(&tmp.path).args(args);
                must(&mut c);
                outcome(&tmp.join(out))
            };
            let gnu = outcome_of(Ld::Gnu, "gnu.out");
            let ours = outcome_of(Ld::Ours, "ours.out");
            assert_eq!(ours, gnu, "{p} {mode}: with GNU ld's default script as -T");
            // The script's layout holds: RELRO (DATA_SEGMENT_RELRO_END), and the program headers
            // cover the headers (SIZEOF_HEADERS in the first segment).
            let phdrs = readelf(&["-lW"], &tmp.join("ours.out"));
            assert!(phdrs.contains("GNU_RELRO"), "{p} {mode}:\n{phdrs}");
            assert!(phdrs.contains("LOAD           0x000000 "), "{p} {mode}: headers loaded\n{phdrs}");
        }
    }
    tmp.finish();
}

const FIXED_C: &str = r#"static const char msg[] = "hello from fixed addresses\n";
int counter = 5;
int zeroed[64];
extern char __data_start[], __data_end[], __bss_start[], __bss_end[];
static long sys(long n, long a, long b, long c) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}
void _start(void) {
    sys(1, 1, (long)msg, sizeof msg - 1);
    long code = counter;
    for (int i = 0; i < 64; i++) code += zeroed[i];
    code += (__data_end - __data_start == 4) * 10;
    code += ((long)__bss_start == 0x20001000) * 20;
    code += ((long)&_start >= 0x10000000 && (long)&_start < 0x10010000) * 40;
    sys(60, code, 0, 0);
}
"#;

fn fixed_script(rom_length: &str) -> String {
    format!(
        "MEMORY {{\n  rom (rx) : ORIGIN = 0x10000000, LENGTH = {rom_length}\n  ram (rw) : ORIGIN = 0x20000000, LENGTH = 64K\n}}\n\
         ENTRY(_start)\n\
         SECTIONS {{\n\
           .text : {{ *(.text .text.*) }} > rom\n\
           .rodata : ALIGN(0x1000) {{ *(.rodata .rodata.*) }} > rom\n\
           .data : {{ __data_start = .; *(.data .data.*) __data_end = .; }} > ram AT > rom\n\
           . = ALIGN(0x1000);\n\
           .bss (NOLOAD) : ALIGN(0x1000) {{ __bss_start = .; *(.bss .bss.*) *(COMMON) __bss_end = .; }} > ram\n\
           /DISCARD/ : {{ *(.comment) *(.note*) *(.eh_frame*) }}\n\
         }}\n"
    )
}

/// The loadable segments and the sections' addresses (what the script decides).
fn placement(file: &Path) -> (Vec<String>, Vec<String>) {
    let loads =
        readelf(&["-lW"], file).lines().filter(|l| l.trim_start().starts_with("LOAD")).map(String::from).collect();
    let sections = readelf(&["-SW"], file)
        .lines()
        .filter(|l| l.contains("] .") && (l.contains(" A") || l.contains("WA")))
        .map(|l| l.split(']').nth(1).unwrap().split_whitespace().take(5).collect::<Vec<_>>().join(" "))
        .collect();
    (loads, sections)
}

#[test]
fn a_freestanding_program_placed_by_memory_regions_runs() {
    let Some(tmp) = setup("ls-fixed") else { return };
    write(&tmp, "fixed.c", FIXED_C);
    cc(&tmp, &["-c", "-O1", "-ffreestanding", "-fno-pic", "-fno-stack-protector", "fixed.c"]);
    write(&tmp, "fixed.ld", &fixed_script("64K"));
    let args = ["-nostdlib", "-static", "-Wl,--build-id=none", "fixed.o", "-Wl,-T,fixed.ld"];
    let ours = link(&tmp, Ld::Ours, &args, "ours.out");
    // Code in rom, data run in ram but loaded after the code in rom (AT>), bss not loaded.
    assert_eq!(outcome(&ours), ("hello from fixed addresses\n".to_string(), Some(75)));
    let (loads, sections) = placement(&ours);
    assert_eq!(loads.len(), 4, "{loads:?}");
    let names: Vec<&str> = sections.iter().map(|s| s.split(' ').next().unwrap()).collect();
    assert_eq!(names, [".text", ".rodata", ".data", ".bss"]);
    assert!(loads[2].contains("0x0000000020000000 0x000000001000101c"), "data loaded in rom: {loads:?}");
    let syms = symbols(&ours);
    assert_eq!(syms["__data_start"].value, 0x2000_0000);
    assert_eq!(syms["__bss_end"].value - syms["__bss_start"].value, 256);
    assert!(!section_names(&ours).iter().any(|n| n == ".comment" || n.starts_with(".note")), "/DISCARD/");
    if have_lld() {
        let lld = link(&tmp, Ld::Lld, &args, "lld.out");
        assert_eq!(placement(&ours), placement(&lld), "segments and sections as lld places them");
        for name in ["__data_start", "__data_end", "__bss_start", "__bss_end", "_start", "counter", "zeroed"] {
            assert_eq!(syms[name].value, symbols(&lld)[name].value, "{name}");
        }
    }
    // A region too small for what goes in it is an error naming both, as lld's.
    write(&tmp, "small.ld", &fixed_script("0x40"));
    let err = link_fails(&tmp, &["-nostdlib", "-static", "fixed.o", "-Wl,-T,small.ld"]);
    assert!(err.contains("section '.text' will not fit in region 'rom': overflowed by"), "{err}");
    tmp.finish();
}

const TABLE_C: &str = r#"#include <stdio.h>
struct entry { const char *name; int value; };
#define ENTRY(n, v) static const struct entry e_##n __attribute__((used, section(".mytab." #n))) = { #n, v };
ENTRY(bravo, 2)
ENTRY(alpha, 1)
ENTRY(charlie, 3)
static const char junk[] __attribute__((used, section(".junk"))) = "discarded";
extern const struct entry __mytab_start[], __mytab_end[];
extern const unsigned char __mytab_data[];
int main(void) {
    for (const struct entry *e = __mytab_start; e < __mytab_end; e++) printf("%s=%d\n", e->name, e->value);
    printf("%02x %02x%02x%02x%02x\n", __mytab_data[0], __mytab_data[1], __mytab_data[2], __mytab_data[3], __mytab_data[4]);
    return 0;
}
"#;

#[test]
fn sections_commands_keep_sort_discard_and_define_symbols() {
    let Some(tmp) = setup("ls-table") else { return };
    if !have("ld") {
        return;
    }
    write(&tmp, "table.c", TABLE_C);
    cc(&tmp, &["-c", "-O1", "-ffunction-sections", "-fdata-sections", "table.c"]);
    // GNU ld's default script with a table of entries sorted by name (kept under
    // --gc-sections), data commands after it, and a section discarded.
    let table = "  .mytab : { __mytab_start = .; KEEP(*(SORT_BY_NAME(.mytab.*))) __mytab_end = .; \
                 __mytab_data = .; BYTE(0x2a) LONG(0x01020304) . = ALIGN(8); }\n  /DISCARD/ : { *(.junk) }\n";
    let script = gnu_default_script("-pie").replacen("  .data           :", &format!("{table}  .data           :"), 1);
    assert!(script.contains(".mytab"), "the default script has a .data description");
    write(&tmp, "table.ld", &script);
    let args = ["-pie", "table.o", "-Wl,-T,table.ld", "-Wl,--gc-sections"];
    let ours = link(&tmp, Ld::Ours, &args, "ours.out");
    let gnu = link(&tmp, Ld::Gnu, &args, "gnu.out");
    assert_eq!(run(&ours), "alpha=1\nbravo=2\ncharlie=3\n2a 04030201\n");
    assert_eq!(run(&ours), run(&gnu));
    let names = section_names(&ours);
    assert!(names.iter().any(|n| n == ".mytab") && !names.iter().any(|n| n == ".junk"), "{names:?}");
    let syms = symbols(&ours);
    let mytab_size = syms["__mytab_end"].value - syms["__mytab_start"].value;
    assert_eq!(mytab_size, 48);
    if have_lld() {
        let lld = symbols(&link(&tmp, Ld::Lld, &args, "lld.out"));
        for name in ["__mytab_end", "__mytab_data"] {
            assert_eq!(relative(&syms, name, "__mytab_start"), relative(&lld, name, "__mytab_start"), "{name}");
        }
    }
    tmp.finish();
}

#[test]
fn insert_after_puts_a_block_into_the_other_scripts_sections() {
    let Some(tmp) = setup("ls-insert") else { return };
    if !have("ld") {
        return;
    }
    write(&tmp, "table.c", TABLE_C);
    cc(&tmp, &["-c", "-O1", "-ffunction-sections", "-fdata-sections", "table.c"]);
    write(&tmp, "default.ld", &gnu_default_script("-pie"));
    write(
        &tmp,
        "insert.ld",
        "SECTIONS {\n  .mytab : { __mytab_start = .; KEEP(*(SORT_BY_NAME(.mytab.*))) __mytab_end = .;\n\
         __mytab_data = .; BYTE(0x2a) LONG(0x01020304) }\n  /DISCARD/ : { *(.junk) }\n} INSERT AFTER .data;\n",
    );
    // GNU ld and lld insert into their default layout; rivet into the SECTIONS of the other
    // script (here GNU ld's default one).
    let ours = link(&tmp, Ld::Ours, &["-pie", "table.o", "-Wl,-T,default.ld", "-Wl,-T,insert.ld"], "ours.out");
    let gnu = link(&tmp, Ld::Gnu, &["-pie", "table.o", "-Wl,-T,insert.ld"], "gnu.out");
    assert_eq!(run(&ours), "alpha=1\nbravo=2\ncharlie=3\n2a 04030201\n");
    assert_eq!(run(&ours), run(&gnu));
    let names = section_names(&ours);
    let at = |n: &str| names.iter().position(|x| x == n).unwrap_or_else(|| panic!("{n} in {names:?}"));
    assert_eq!(at(".mytab"), at(".data") + 1, "{names:?}");
    if have_lld() {
        let lld = symbols(&link(&tmp, Ld::Lld, &["-pie", "table.o", "-Wl,-T,insert.ld"], "lld.out"));
        let syms = symbols(&ours);
        for name in ["__mytab_end", "__mytab_data"] {
            assert_eq!(relative(&syms, name, "__mytab_start"), relative(&lld, name, "__mytab_start"), "{name}");
        }
    }
    // Without SECTIONS the block goes into rivet's default layout, as GNU ld and lld put it into
    // theirs.
    let alone = link(&tmp, Ld::Ours, &["-pie", "table.o", "-Wl,-T,insert.ld"], "alone.out");
    assert_eq!(run(&alone), run(&gnu));
    let names = section_names(&alone);
    let at = |n: &str| names.iter().position(|x| x == n).unwrap_or_else(|| panic!("{n} in {names:?}"));
    assert_eq!(at(".mytab"), at(".data") + 1, "{names:?}");
    assert!(!names.iter().any(|n| n == ".junk"), "{names:?}");
    let syms = symbols(&alone);
    assert_eq!(syms["__mytab_end"].value - syms["__mytab_start"].value, 48);
    // Inserting after a section no description names is an error naming the script.
    write(&tmp, "nowhere.ld", "SECTIONS { .x : { *(.x) } } INSERT BEFORE .nowhere;\n");
    let err = link_fails(&tmp, &["-pie", "table.o", "-Wl,-T,default.ld", "-Wl,-T,nowhere.ld"]);
    assert!(err.contains("nowhere.ld: unable to insert .x before .nowhere"), "{err}");
    tmp.finish();
}

#[test]
fn nocrossrefs_reports_references_between_the_sections_as_lld_does() {
    let Some(tmp) = setup("ls-nocrossrefs") else { return };
    write(
        &tmp,
        "a.c",
        "int data_var = 3;\n__attribute__((section(\".other\"))) int other_fn(void) { return data_var; }\n\
         int main(void) { return other_fn() - 3; }\n",
    );
    cc(&tmp, &["-c", "-O1", "a.c"]);
    let layout = "SECTIONS { .text : { *(.text*) } .other : { *(.other) } .data : { *(.data*) } }\n";
    write(&tmp, "both.ld", &format!("{layout}NOCROSSREFS(.other .data)\n"));
    write(&tmp, "to.ld", &format!("{layout}NOCROSSREFS_TO(.data .other)\n"));
    write(&tmp, "to_other.ld", &format!("{layout}NOCROSSREFS_TO(.other .data)\n"));
    let wanted =
        "a.o:(function other_fn: .other+0x2): prohibited cross reference from '.other' to 'data_var' in '.data'";
    for script in ["both.ld", "to.ld"] {
        let out =
            Command::new(linker()).current_dir(&tmp.path).args(["-T", script, "a.o", "-o", "x"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{script}: {err}");
        assert!(err.contains(wanted), "{script}: {err}");
        if have_lld() {
            let lld = Command::new(Path::new(LLD_DIR).join("ld.lld"))
                .current_dir(&tmp.path)
                .args(["-T", script, "a.o", "-o", "y"])
                .output()
                .unwrap();
            assert!(String::from_utf8_lossy(&lld.stderr).contains(wanted), "lld's words");
        }
    }
    // Only references into the first section count with NOCROSSREFS_TO: .data refers to nothing.
    let out = Command::new(linker())
        .current_dir(&tmp.path)
        .args(["-T", "to_other.ld", "-e", "main", "a.o", "-o", "x"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    tmp.finish();
}

/// A section's bytes, as `objdump -s` shows them (without the addresses).
fn section_bytes(file: &Path, name: &str) -> String {
    let out = must(Command::new("objdump").args(["-s", "-j", name]).arg(file));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with(' '))
        .map(|l| l.trim_start().split("  ").next().unwrap().split(' ').skip(1).collect::<Vec<_>>().join(""))
        .collect()
}

#[test]
fn fill_patterns_fill_the_gaps_as_lld_fills_them() {
    let Some(tmp) = setup("ls-fill") else { return };
    if !have("objdump") {
        return;
    }
    write(
        &tmp,
        "f.c",
        "int main(void) { return 0; }\n\
         static const char a[3] __attribute__((used, section(\".fa\"))) = {7, 7, 7};\n\
         static const long b __attribute__((used, section(\".fb\"))) = 9;\n",
    );
    cc(&tmp, &["-c", "-O1", "f.c"]);
    write(
        &tmp,
        "fill.ld",
        "SECTIONS {\n  .text : { *(.text*) }\n\
         .fillme : { BYTE(1) . = . + 5; BYTE(2) *(.fa) *(.fb) SHORT(0x0304) } =0xdeadbeef\n\
         .fill2 : { FILL(0x11223344); . = . + 6; QUAD(0x0102030405060708) }\n}\n",
    );
    let ours = tmp.join("ours.out");
    must(Command::new(linker()).current_dir(&tmp.path).args(["-T", "fill.ld", "-e", "main", "f.o", "-o"]).arg(&ours));
    // Before the first input section and after each one, the pattern starts afresh; data
    // commands are written over it.
    assert_eq!(section_bytes(&ours, ".fillme"), "01adbeefdead02070707deadbeefdead09000000000000000403");
    assert_eq!(section_bytes(&ours, ".fill2"), "1122334411220807060504030201");
    if have_lld() {
        let lld = tmp.join("lld.out");
        must(
            Command::new(Path::new(LLD_DIR).join("ld.lld"))
                .current_dir(&tmp.path)
                .args(["-T", "fill.ld", "-e", "main", "f.o", "-o"])
                .arg(&lld),
        );
        for name in [".fillme", ".fill2"] {
            assert_eq!(section_bytes(&ours, name), section_bytes(&lld, name), "{name}");
        }
    }
    tmp.finish();
}

const PHDRS_SCRIPT: &str = "PHDRS {\n  headers PT_PHDR PHDRS;\n  text PT_LOAD FILEHDR PHDRS;\n  data PT_LOAD;\n\
      note PT_NOTE;\n  stack PT_GNU_STACK FLAGS(6);\n}\nENTRY(_start)\nSECTIONS {\n\
      . = 0x10000000 + SIZEOF_HEADERS;\n  .text : { *(.text .text.*) } :text\n\
      .rodata : { *(.rodata .rodata.*) }\n\
      .data 0x20000000 : { __data_start = .; *(.data .data.*) __data_end = .; } :data\n\
      .bss : ALIGN(0x1000) { __bss_start = .; *(.bss .bss.*) *(COMMON) __bss_end = .; }\n\
      /DISCARD/ : { *(.comment) *(.note*) *(.eh_frame*) }\n}\n";

/// The program header table, as `readelf -lW` prints it.
fn program_headers(file: &Path) -> Vec<String> {
    let text = readelf(&["-lW"], file);
    let table = text.split("Program Headers:").nth(1).unwrap_or("");
    let table = table.split("Section to Segment").next().unwrap_or("");
    table.lines().filter(|l| l.starts_with("  ") && !l.contains("Type")).map(|l| l.trim().to_string()).collect()
}

#[test]
fn phdrs_give_the_program_headers_the_script_lists() {
    let Some(tmp) = setup("ls-phdrs") else { return };
    write(&tmp, "fixed.c", FIXED_C);
    cc(&tmp, &["-c", "-O1", "-ffreestanding", "-fno-pic", "-fno-stack-protector", "fixed.c"]);
    write(&tmp, "phdrs.ld", PHDRS_SCRIPT);
    let args = ["-nostdlib", "-static", "-Wl,--build-id=none", "fixed.o", "-Wl,-T,phdrs.ld"];
    let ours = link(&tmp, Ld::Ours, &args, "ours.out");
    // The headers are loaded with the code (FILEHDR PHDRS), .rodata follows .text into `text`,
    // .bss follows .data into `data`.
    assert_eq!(outcome(&ours), ("hello from fixed addresses\n".to_string(), Some(75)));
    let phdrs = program_headers(&ours);
    let types: Vec<&str> = phdrs.iter().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(types, ["PHDR", "LOAD", "LOAD", "NOTE", "GNU_STACK"], "{phdrs:?}");
    assert!(phdrs[1].starts_with("LOAD           0x000000 0x0000000010000000"), "{phdrs:?}");
    assert!(phdrs[4].contains(" RW "), "FLAGS(6): {phdrs:?}");
    if have_lld() {
        let lld = link(&tmp, Ld::Lld, &args, "lld.out");
        assert_eq!(phdrs, program_headers(&lld));
    }
    write(&tmp, "bad.ld", &PHDRS_SCRIPT.replace(":data", ":nowhere"));
    let err = link_fails(&tmp, &["-nostdlib", "-static", "fixed.o", "-Wl,-T,bad.ld"]);
    assert!(err.contains("program header 'nowhere' is not listed in PHDRS"), "{err}");
    tmp.finish();
}

#[test]
fn overlay_sections_share_an_address_and_load_one_after_another() {
    let Some(tmp) = setup("ls-overlay") else { return };
    write(
        &tmp,
        "o.c",
        "int a1 __attribute__((section(\".ov1\"))) = 1;\nint a2[4] __attribute__((section(\".ov2\"))) = {2};\n\
         void _start(void) {}\n",
    );
    cc(&tmp, &["-c", "-O1", "-fno-pic", "o.c"]);
    write(
        &tmp,
        "o.ld",
        "SECTIONS {\n  . = 0x10000;\n  .text : { *(.text*) }\n\
         OVERLAY 0x20000 : AT(0x30000) {\n    .ov1 { *(.ov1) }\n    .ov2 { *(.ov2) }\n  }\n\
         after = .;\n  .data : { *(.data*) }\n  /DISCARD/ : { *(.eh_frame) *(.note*) }\n}\n",
    );
    let ours = tmp.join("ours.out");
    must(Command::new(linker()).current_dir(&tmp.path).args(["-T", "o.ld", "o.o", "-o"]).arg(&ours));
    let syms = symbols(&ours);
    assert_eq!((syms["a1"].value, syms["a2"].value), (0x20000, 0x20000), "one address");
    assert_eq!(syms["after"].value, 0x20010, ". is past the largest");
    let phdrs = program_headers(&ours);
    assert!(phdrs.iter().any(|l| l.contains("0x0000000000020000 0x0000000000030004")), "{phdrs:?}");
    if have_lld() {
        let lld = tmp.join("lld.out");
        must(
            Command::new(Path::new(LLD_DIR).join("ld.lld"))
                .current_dir(&tmp.path)
                .args(["-T", "o.ld", "o.o", "-o"])
                .arg(&lld),
        );
        // (PT_GNU_STACK's alignment is GNU ld's 16 here, lld's 0.)
        let loads = |p: Vec<String>| p.into_iter().filter(|l| l.starts_with("LOAD")).collect::<Vec<_>>();
        assert_eq!(loads(phdrs), loads(program_headers(&lld)));
        assert_eq!(syms["after"].value, symbols(&lld)["after"].value);
    }
    tmp.finish();
}

/// A script symbol below the image's start (the kernel's vDSO: `vvar_page = . - 4 * PAGE_SIZE`)
/// reached PC-relatively: the value is negative in the psABI's 64-bit arithmetic and fits the
/// 32-bit field, as GNU ld and lld write it (it was once refused as a huge unsigned number). The
/// instruction reaches the same address in all three outputs; the data and a positive offset of
/// the same symbol too.
#[test]
fn pc_relative_reference_below_the_image() {
    let Some(tmp) = setup("ls-below-image") else { return };
    write(&tmp, "v.s", ".hidden vvar_page\n.globl f\nf:\n  movl vvar_page+128(%rip), %eax\n  ret\n");
    write(&tmp, "v.lds", "SECTIONS {\n  vvar_page = . - 4 * 4096;\n  . = SIZEOF_HEADERS;\n  .text : { *(.text) }\n}\n");
    cc(&tmp, &["-c", "v.s", "-o", "v.o"]);
    let mut targets = Vec::new();
    for (ld, out) in [(Ld::Gnu, "gnu.so"), (Ld::Lld, "lld.so"), (Ld::Ours, "ours.so")] {
        if ld == Ld::Lld && !have_lld() {
            continue;
        }
        let so = link(&tmp, ld, &["-shared", "-nostdlib", "-Wl,-T,v.lds", "v.o"], out);
        let code = String::from_utf8_lossy(&must(Command::new("objdump").arg("-d").arg(&so)).stdout).into_owned();
        let insn =
            code.lines().find(|l| l.contains("mov ")).unwrap_or_else(|| panic!("{out}: no mov\n{code}")).to_string();
        // `mov -0x....(%rip),%eax  # ffffffffffffc080 <vvar_page+0x80>`
        assert!(insn.contains("-0x") && insn.contains("(%rip)"), "{out}: {insn}");
        targets.push(insn.rsplit('#').next().unwrap().trim().to_string());
    }
    assert!(targets.iter().all(|t| t.starts_with("ffffffffffffc080")), "{targets:?}");
    // Out of reach is still an error, with the value as the psABI computes it.
    write(
        &tmp,
        "far.lds",
        "SECTIONS {\n  vvar_page = . - 0x100000000;\n  . = SIZEOF_HEADERS;\n  .text : { *(.text) }\n}\n",
    );
    let e = link_fails(&tmp, &["-shared", "-nostdlib", "-Wl,-T,far.lds", "v.o"]);
    assert!(e.contains("relocation R_X86_64_PC32 against vvar_page out of range: -42949"), "{e}");
    tmp.finish();
}

#[test]
fn a_reference_into_a_discarded_section_is_refused() {
    if !have("gcc") {
        return;
    }
    let tmp = TempDir::new("ls-discard-ref");
    write(&tmp, "keep.c", "__attribute__((section(\".gone\"))) int gone = 7;\nint main(void) { return gone; }\n");
    write(&tmp, "unused.c", "__attribute__((section(\".gone\"))) int unused = 7;\nint main(void) { return 0; }\n");
    write(&tmp, "discard.lds", "SECTIONS { /DISCARD/ : { *(.gone) } }\nINSERT AFTER .data;\n");
    cc(&tmp, &["-c", "-O2", "keep.c", "unused.c"]);
    // GNU ld and lld refuse it: `main` would read through a relocation pointing nowhere.
    let mut linkers = vec![Ld::Gnu];
    if have_lld() {
        linkers.push(Ld::Lld);
    }
    for ld in linkers {
        let out = link_cmd(&tmp, ld, &["keep.o", "-Wl,-T,discard.lds"], "ref.out").output().unwrap();
        assert!(!out.status.success(), "{ld:?} links it");
    }
    let e = link_fails(&tmp, &["keep.o", "-Wl,-T,discard.lds"]);
    assert!(
        e.contains("relocation refers to a symbol in a discarded section: gone\n>>> defined in keep.o (section .gone, /DISCARD/)")
            && e.contains("keep.o:(main)"),
        "{e}"
    );
    assert!(!tmp.join("fail.out").exists(), "no output is left");
    // Nothing refers to it: the section goes, the program runs.
    let exe = link(&tmp, Ld::Ours, &["unused.o", "-Wl,-T,discard.lds"], "unused.out");
    assert!(!readelf(&["-SW"], &exe).contains(".gone"));
    assert!(Command::new(&exe).status().unwrap().success());
    tmp.finish();
}

/// An INSERTed output section with an address is placed at it, as GNU ld places it (rivet used to
/// put it after the section named); the command line's `--section-start` wins over the script, as in GNU ld and lld.
#[test]
fn inserted_section_keeps_its_address() {
    let Some(tmp) = setup("ls-insert-addr") else { return };
    write(
        &tmp,
        "far.c",
        "#include <stdio.h>\n__attribute__((section(\".far\"))) int far_fn(int x) { return x + 1; }\n\
         int main(void) { printf(\"%d\\n\", far_fn(41)); return 0; }\n",
    );
    cc(&tmp, &["-c", "-O1", "far.c"]);
    write(&tmp, "far.ld", "SECTIONS {\n  .far 0x20000000 : { *(.far) }\n} INSERT AFTER .text;\n");
    let addr = |exe: &Path| -> Option<u64> {
        readelf(&["-SW"], exe).lines().find(|l| l.contains(" .far ")).and_then(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let at = w.iter().position(|&x| x == ".far")?;
            u64::from_str_radix(w.get(at + 2)?, 16).ok()
        })
    };
    let args = ["-no-pie", "far.o", "-Wl,-T,far.ld"];
    let gnu = link(&tmp, Ld::Gnu, &args, "gnu.out");
    let ours = link(&tmp, Ld::Ours, &args, "ours.out");
    assert_eq!(run(&ours), "42\n");
    assert_eq!(run(&ours), run(&gnu));
    assert_eq!(addr(&gnu), Some(0x2000_0000));
    assert_eq!(addr(&ours), addr(&gnu));
    let moved = link(&tmp, Ld::Ours, &[&args[..], &["-Wl,--section-start=.far=0x30000000"]].concat(), "moved.out");
    assert_eq!(run(&moved), "42\n");
    assert_eq!(addr(&moved), Some(0x3000_0000));
    tmp.finish();
}
