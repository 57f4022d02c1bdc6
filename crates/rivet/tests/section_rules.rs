//! Where input sections land by GNU ld's default rules, and what they become there. Each case
//! links the same objects with GNU ld (plain gcc) and with the linker under test (`gcc -B`), runs
//! both programs and compares their output and the readelf facts that matter.
//!
//! Covered: `.ctors`/`.dtors` tables (with and without priorities) placed in `.init_array` and
//! `.fini_array`, their entries reversed so that they run in the order the old `.ctors` walk ran
//! them, between the arrays' own prioritized entries, in executables, PIEs and static programs;
//! debug sections of 32-bit DWARF objects placed before those of 64-bit DWARF ones, whatever the
//! command-line order (GNU ld keeps that order; the result must still read as the same units).
mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output};

fn compile(tmp: &TempDir, src: &str, file: &str, args: &[&str]) {
    std::fs::write(tmp.join(file), src).unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", file]).args(args));
}

/// Links with GNU ld (`ours` false) or the linker under test; `args` go to gcc.
fn link(tmp: &TempDir, ours: bool, args: &[&str], out: &str) -> Output {
    let mut cmd = Command::new("gcc");
    cmd.current_dir(&tmp.path);
    if ours {
        cmd.arg("-B").arg(linker_dir(tmp));
    }
    let o = cmd.args(args).arg("-o").arg(out).output().unwrap();
    assert!(o.status.success(), "link of {out} failed: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn run(exe: &Path) -> String {
    let out = must(Command::new(exe).current_dir(exe.parent().unwrap()));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// (type, entry size) of section `name`, as `readelf -SW` prints them.
fn type_and_entsize(file: &Path, name: &str) -> Option<(String, String)> {
    readelf(&["-SW"], file).lines().find_map(|l| {
        let f: Vec<&str> = l.split(']').nth(1)?.split_whitespace().collect();
        (f.first() == Some(&name)).then(|| (f[1].to_string(), f[5].to_string()))
    })
}

const CTORS: &str = r#"#include <stdio.h>
static void ctor1(void) { printf("ctor1 "); }
static void ctor2(void) { printf("ctor2 "); }
static void ctor3(void) { printf("ctor3 "); }
static void ctor4(void) { printf("ctor4 "); }
static void dtor1(void) { printf("dtor1 "); }
static void dtor2(void) { printf("dtor2 "); }
static void dtor3(void) { printf("dtor3 "); }
static void dtor4(void) { printf("dtor4 "); }
__attribute__((aligned(8), section(".ctors.65435"))) void (*ctors65435[])(void) = { ctor1 };
__attribute__((aligned(8), section(".ctors.65433"))) void (*ctors65433[])(void) = { ctor2 };
__attribute__((aligned(8), section(".ctors"))) void (*ctors[])(void) = { ctor4, ctor3 };
__attribute__((aligned(8), section(".dtors"))) void (*dtors[])(void) = { dtor1, dtor2 };
__attribute__((aligned(8), section(".dtors.65433"))) void (*dtors65433[])(void) = { dtor3 };
__attribute__((aligned(8), section(".dtors.65435"))) void (*dtors65435[])(void) = { dtor4 };
"#;

const INITS: &str = r#"#include <stdio.h>
__attribute__((constructor(101))) static void init1(void) { printf("init1 "); }
__attribute__((constructor)) static void init2(void) { printf("init2 "); }
__attribute__((destructor(101))) static void fini1(void) { printf("fini1 "); }
__attribute__((destructor)) static void fini2(void) { printf("fini2 "); }
int main(void) { printf("main "); return 0; }
"#;

/// `.ctors.N` runs as `.init_array.(65535-N)` does, plain `.ctors` with plain `.init_array` in
/// command-line order, each table's entries from last to first; `.dtors` mirrors it.
const EXPECTED: &str = "ctor1 init1 ctor2 ctor3 ctor4 init2 main fini2 dtor1 dtor2 dtor3 fini1 dtor4 ";

#[test]
fn ctors_and_dtors_run_from_the_init_and_fini_arrays_in_gnu_ld_order() {
    let Some(tmp) = gcc_readelf_tmp("section-rules-ctors") else { return };
    for (pic, modes) in [("-fno-PIE", &[&["-no-pie"][..], &["-static"]][..]), ("-fPIE", &[&["-pie"][..]])] {
        compile(&tmp, CTORS, "ctors.c", &[pic, "-o", "ctors.o"]);
        compile(&tmp, INITS, "inits.c", &[pic, "-o", "inits.o"]);
        for mode in modes {
            let args: Vec<&str> = mode.iter().copied().chain(["ctors.o", "inits.o"]).collect();
            link(&tmp, false, &args, "gnu");
            link(&tmp, true, &args, "ours");
            let (gnu, ours) = (tmp.join("gnu"), tmp.join("ours"));
            assert_eq!(run(&gnu), EXPECTED, "GNU ld {mode:?}");
            assert_eq!(run(&ours), EXPECTED, "linker under test {mode:?}");
            let names = section_names(&ours);
            assert!(!names.iter().any(|n| n == ".ctors" || n == ".dtors"), "{mode:?}: {names:?}");
            for (name, ty) in [(".init_array", "INIT_ARRAY"), (".fini_array", "FINI_ARRAY")] {
                let want = Some((ty.to_string(), "08".to_string()));
                assert_eq!(type_and_entsize(&ours, name), want, "{name} {mode:?}");
                assert_eq!(type_and_entsize(&gnu, name), want, "GNU ld's {name} {mode:?}");
            }
        }
    }
    tmp.finish();
}

/// A shared library's `.ctors` run when it is loaded, in the same order, and a table whose
/// entries need symbolic relocations (a function the library exports) keeps them on the right
/// entries once reversed.
#[test]
fn a_shared_librarys_ctors_run_in_order_with_their_relocations() {
    let Some(tmp) = gcc_readelf_tmp("section-rules-ctors-dso") else { return };
    let lib = r#"#include <stdio.h>
void exported1(void) { printf("exported1 "); }
void exported2(void) { printf("exported2 "); }
static void local1(void) { printf("local1 "); }
__attribute__((aligned(8), section(".ctors"))) void (*ctors[])(void) = { exported2, local1, exported1 };
"#;
    compile(&tmp, lib, "lib.c", &["-fPIC", "-o", "lib.o"]);
    compile(&tmp, "#include <stdio.h>\nint main(void) { puts(\"main\"); return 0; }\n", "main.c", &["-o", "main.o"]);
    for (ours, name) in [(false, "gnu"), (true, "ours")] {
        link(&tmp, ours, &["-shared", "lib.o"], &format!("lib{name}.so"));
        link(&tmp, ours, &["main.o", "-Wl,--no-as-needed", &format!("./lib{name}.so")], name);
        assert_eq!(run(&tmp.join(name)), "exported1 local1 exported2 main\n", "{name}");
    }
    let relocs = readelf(&["-rW"], &tmp.join("libours.so"));
    assert!(relocs.contains("exported1") && relocs.contains("exported2"), "{relocs}");
    tmp.finish();
}

/// The compilation units of `.debug_info`: (format, name), in output order; readelf must read
/// the section without a complaint.
fn units(file: &Path) -> Vec<(String, String)> {
    let out = must(Command::new("readelf").arg("--debug-dump=info").arg(file));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut units = Vec::new();
    let mut format = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("Length:") {
            format = line.rsplit('(').next().unwrap_or("").trim_end_matches(')').to_string();
        } else if line.contains("DW_AT_name") && line.trim_end().ends_with(".c") && !format.is_empty() {
            units.push((std::mem::take(&mut format), line.rsplit(' ').next().unwrap().to_string()));
        }
    }
    units
}

#[test]
fn debug_sections_of_32_bit_dwarf_come_before_64_bit_ones() {
    let Some(tmp) = gcc_readelf_tmp("section-rules-dwarf64") else { return };
    compile(&tmp, "int x = 1;\nint foo(void) { return x; }\n", "a32.c", &["-g", "-gdwarf32"]);
    compile(&tmp, "int foo(void);\nint main(void) { return foo() - 1; }\n", "b64.c", &["-g", "-gdwarf64"]);
    let (thirty_two, sixty_four) =
        (("32-bit".to_string(), "a32.c".to_string()), ("64-bit".to_string(), "b64.c".to_string()));
    for order in [["a32.o", "b64.o"], ["b64.o", "a32.o"]] {
        link(&tmp, false, &order, "gnu");
        link(&tmp, true, &order, "ours");
        let gnu = units(&tmp.join("gnu"));
        let ours = units(&tmp.join("ours"));
        let mut sorted = gnu.clone();
        sorted.sort();
        assert_eq!(sorted, vec![thirty_two.clone(), sixty_four.clone()], "GNU ld, {order:?}");
        assert_eq!(ours, vec![thirty_two.clone(), sixty_four.clone()], "{order:?}");
        for exe in ["gnu", "ours"] {
            assert!(Command::new(tmp.join(exe)).status().unwrap().success(), "{exe} {order:?}");
        }
        // The line tables follow the same order and still name each unit's file.
        let lines = readelf(&["--debug-dump=line"], &tmp.join("ours"));
        let (a, b) = (lines.find("a32.c"), lines.find("b64.c"));
        assert!(a.is_some() && b.is_some() && a < b, "{order:?}: {lines}");
    }
    tmp.finish();
}

/// An object holding both formats (a `-r` output) counts as 32-bit: its units go before those of
/// an object in the 64-bit format only.
#[test]
fn an_object_with_a_32_bit_dwarf_unit_goes_first() {
    let Some(tmp) = gcc_readelf_tmp("section-rules-dwarf-mixed") else { return };
    compile(&tmp, "int foo(void) { return 0; }\n", "a64.c", &["-g", "-gdwarf64"]);
    compile(&tmp, "int bar(void) { return 0; }\n", "b32.c", &["-g", "-gdwarf32"]);
    compile(
        &tmp,
        "int foo(void), bar(void);\nint main(void) { return foo() + bar(); }\n",
        "main64.c",
        &["-g", "-gdwarf64"],
    );
    must(Command::new("gcc").current_dir(&tmp.path).args(["-r", "-nostdlib", "a64.o", "b32.o", "-o", "mixed.o"]));
    link(&tmp, true, &["main64.o", "mixed.o"], "ours");
    let names: Vec<String> = units(&tmp.join("ours")).into_iter().map(|(_, name)| name).collect();
    assert_eq!(names, ["a64.c", "b32.c", "main64.c"]);
    assert!(Command::new(tmp.join("ours")).status().unwrap().success());
    tmp.finish();
}
