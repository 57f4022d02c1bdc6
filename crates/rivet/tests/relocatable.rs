//! Relocatable output (`-r`): objects combined by the linker under test, then linked by GNU ld, lld
//! and the linker under test, must give programs that behave like the ones linked from the
//! original objects; the combined object's symbols and sections must say what GNU ld's `-r`
//! output says (symbols kept, common, undefined; groups; mergeable strings; notes); the object
//! must read cleanly with readelf and objdump; and a `-r` of a `-r` output must work too.
mod common;

use common::*;
use std::path::Path;
use std::process::Command;

/// lld through gcc (`-fuse-ld=lld`), when lld 19 is installed.
const LLD_DIR: &str = "/usr/lib/llvm-19/bin";

fn setup(name: &str, tools: &[&str]) -> Option<TempDir> {
    if !testing_rivet() || tools.iter().any(|t| !have(t)) {
        eprintln!("skipped: needs {tools:?} and rivet as the linker under test");
        return None;
    }
    Some(TempDir::new(name))
}

fn write(tmp: &TempDir, files: &[(&str, &str)]) {
    for (name, text) in files {
        std::fs::write(tmp.join(name), text).unwrap();
    }
}

/// Runs the linker under test directly: `rivet ARGS`.
fn rivet(tmp: &TempDir, args: &[&str]) -> std::process::Output {
    let out = Command::new(linker()).current_dir(&tmp.path).args(args).output().unwrap();
    assert!(out.status.success(), "rivet {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "rivet {args:?} warned:\n{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Links `objects` into `out` through `driver` (gcc or g++) with GNU ld, lld or the linker under
/// test, and returns what the program prints.
fn link_and_run(tmp: &TempDir, driver: &str, by: &str, objects: &[&str], out: &str) -> String {
    let mut cmd = Command::new(driver);
    cmd.current_dir(&tmp.path);
    match by {
        "gnu" => {}
        "lld" => {
            cmd.arg("-fuse-ld=lld").arg(format!("-B{LLD_DIR}"));
        }
        "rivet" => {
            cmd.arg("-B").arg(linker_dir(tmp));
        }
        _ => unreachable!(),
    }
    must(cmd.args(objects).arg("-o").arg(out));
    let run = must(&mut Command::new(tmp.join(out)));
    String::from_utf8(run.stdout).unwrap()
}

/// The linkers that can link the combined objects here: GNU ld, lld (when installed), rivet.
fn linkers() -> Vec<&'static str> {
    let mut v = vec!["gnu", "rivet"];
    if Path::new(LLD_DIR).join("ld.lld").exists() {
        v.push("lld");
    } else {
        eprintln!("note: lld 19 is not installed; the combined objects are linked by GNU ld and rivet only");
    }
    v
}

/// readelf and objdump read the object with no complaint that GNU ld's `-r` output of the same
/// inputs (`args`) does not draw too (readelf cannot apply DTPOFF32 in .debug_info, for one).
fn reads_cleanly(tmp: &TempDir, object: &str, args: &[&str]) {
    let mut gnu = vec!["-r", "-o", "reference-gnu.o"];
    gnu.extend(args);
    must(Command::new("ld").current_dir(&tmp.path).args(&gnu));
    for (tool, flags) in [("readelf", vec!["-a", "-W", "--debug-dump=info,frames"]), ("objdump", vec!["-dr", "-g"])] {
        let complaints = |file: &str| {
            let out = must(Command::new(tool).current_dir(&tmp.path).args(&flags).arg(file));
            let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
            let mut lines: Vec<String> = text
                .lines()
                .filter(|l| {
                    l.contains("Warning") || l.contains("warning:") || l.contains("Error") || l.contains("error:")
                })
                .map(|l| l.replace(file, "FILE"))
                .collect();
            lines.sort();
            lines.dedup();
            lines
        };
        let (ours, reference) = (complaints(object), complaints("reference-gnu.o"));
        let extra: Vec<&String> = ours.iter().filter(|l| !reference.contains(l)).collect();
        assert!(extra.is_empty(), "{tool} {flags:?} {object} complains where GNU ld's output does not: {extra:?}");
    }
}

const C_LIB: &str = r#"
#include <stdio.h>
static int counter = 5;
static const char *greeting(void) { return "hello from a"; }
__thread int tls_value = 7;
int common_value;
__attribute__((weak)) int weak_answer(void) { return 1; }
int (*pointer_to_greet)(void);
static int init_ran;
__attribute__((constructor)) static void init(void) { init_ran = 1; }
int bump(void) { return ++counter + tls_value + init_ran; }
void greet(void) { puts(greeting()); printf("%s %d\n", "strings merge", counter); }
"#;
const C_MORE: &str = r#"
int helper(int x) { return x * 3; }
int weak_answer(void) { return 42; }
"#;
const C_MAIN: &str = r#"
#include <stdio.h>
extern int common_value;
int bump(void);
void greet(void);
int helper(int);
int weak_answer(void);
int main(void) {
    common_value = 9;
    greet();
    printf("%d %d %d %d\n", bump(), helper(4), weak_answer(), common_value);
    return 0;
}
"#;

/// C: statics, TLS, a constructor, a weak definition overridden, a common symbol, strings: the
/// program from `-r` outputs (and from a `-r` of a `-r`) prints what the one from the objects does,
/// whichever linker takes the combined object.
#[test]
fn c_program_from_combined_objects_behaves_the_same() {
    let Some(tmp) = setup("reloc-c", &["gcc", "readelf", "objdump"]) else { return };
    write(&tmp, &[("a.c", C_LIB), ("more.c", C_MORE), ("main.c", C_MAIN)]);
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-O1", "-g", "-fcommon", "a.c", "more.c", "main.c"]));
    let expected = link_and_run(&tmp, "gcc", "gnu", &["a.o", "more.o", "main.o"], "direct");
    assert!(expected.contains("hello from a") && expected.contains("42"), "{expected}");
    rivet(&tmp, &["-r", "a.o", "more.o", "main.o", "-o", "all.o"]);
    // A -r of a -r output, and `--relocatable` spelled out.
    rivet(&tmp, &["-r", "a.o", "more.o", "-o", "part.o"]);
    rivet(&tmp, &["--relocatable", "part.o", "main.o", "-o", "again.o"]);
    for object in ["all.o", "again.o"] {
        reads_cleanly(&tmp, object, &["a.o", "more.o", "main.o"]);
        for by in linkers() {
            let got = link_and_run(&tmp, "gcc", by, &[object], &format!("{object}-{by}"));
            assert_eq!(got, expected, "{object} linked by {by}");
        }
    }
    tmp.finish();
}

const CXX_A: &str = r#"
#include <stdexcept>
#include <string>
template <typename T> T checked_twice(T x) {
    if (x < 0) throw std::runtime_error("negative: " + std::to_string(x));
    return x * 2;
}
int from_a(int x) { return checked_twice(x) + 1; }
"#;
const CXX_B: &str = r#"
#include <cstdio>
#include <stdexcept>
#include <string>
template <typename T> T checked_twice(T x) {
    if (x < 0) throw std::runtime_error("negative: " + std::to_string(x));
    return x * 2;
}
int from_a(int x);
int main() {
    std::printf("%d %d\n", from_a(3), checked_twice(5));
    try { from_a(-2); } catch (const std::exception &e) { std::printf("caught %s\n", e.what()); }
    try { checked_twice(-4); } catch (const std::exception &e) { std::printf("caught %s\n", e.what()); }
}
"#;

/// The frame descriptions of the copy the link dropped are gone from an executable (rivet turns
/// their relocation into R_X86_64_NONE, as lld does; GNU ld rewrites .eh_frame).
fn fde_count(tmp: &TempDir, exe: &str) -> usize {
    let out = must(Command::new("readelf").current_dir(&tmp.path).args(["-W", "--debug-dump=frames", exe]));
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.contains(" FDE ")).count()
}

/// C++ with exceptions and the same template in both objects (a COMDAT group each), with debug
/// information: the groups survive `-r`, exceptions still unwind, the dropped copy's frame goes,
/// and addr2line finds the same source line.
#[test]
fn cxx_exceptions_comdat_and_debug_info_survive() {
    let Some(tmp) = setup("reloc-cxx", &["g++", "readelf", "objdump", "addr2line", "nm"]) else { return };
    write(&tmp, &[("a.cc", CXX_A), ("b.cc", CXX_B)]);
    must(Command::new("g++").current_dir(&tmp.path).args(["-c", "-O0", "-g", "a.cc", "b.cc"]));
    let expected = link_and_run(&tmp, "g++", "gnu", &["a.o", "b.o"], "direct");
    assert!(expected.contains("caught negative: -2") && expected.contains("caught negative: -4"), "{expected}");
    // One object alone keeps its groups; both together keep one copy of each.
    rivet(&tmp, &["-r", "a.o", "-o", "a-r.o"]);
    rivet(&tmp, &["-r", "a.o", "b.o", "-o", "ab.o"]);
    let groups = must(Command::new("readelf").current_dir(&tmp.path).args(["-W", "-g", "ab.o"]));
    let groups = String::from_utf8_lossy(&groups.stdout);
    assert_eq!(groups.matches("[_Z13checked_twiceIiET_S0_]").count(), 1, "{groups}");
    let gnu = must(Command::new("ld").current_dir(&tmp.path).args(["-r", "a.o", "b.o", "-o", "ab-gnu.o"]));
    assert!(gnu.status.success());
    let gnu_groups = must(Command::new("readelf").current_dir(&tmp.path).args(["-W", "-g", "ab-gnu.o"]));
    let count = |t: &str| t.matches("COMDAT group section").count();
    assert_eq!(count(&groups), count(&String::from_utf8_lossy(&gnu_groups.stdout)), "{groups}");
    for object in ["ab.o"] {
        reads_cleanly(&tmp, object, &["a.o", "b.o"]);
        for by in linkers() {
            assert_eq!(link_and_run(&tmp, "g++", by, &[object], &format!("{object}-{by}")), expected, "{by}");
        }
    }
    for by in linkers() {
        let exe = format!("split-{by}");
        assert_eq!(link_and_run(&tmp, "g++", by, &["a-r.o", "b.o"], &exe), expected, "a-r.o + b.o by {by}");
    }
    // The same frames as the program linked by rivet from the original objects.
    link_and_run(&tmp, "g++", "rivet", &["a.o", "b.o"], "direct-rivet");
    assert_eq!(fde_count(&tmp, "ab.o-rivet"), fde_count(&tmp, "direct-rivet"));
    // addr2line: from_a's address maps to a.cc line 8 in both programs.
    for exe in ["direct", "ab.o-rivet", "ab.o-gnu"] {
        let nm = must(Command::new("nm").current_dir(&tmp.path).arg(exe));
        let nm = String::from_utf8_lossy(&nm.stdout);
        let addr = nm.lines().find(|l| l.ends_with(" _Z6from_ai")).unwrap().split(' ').next().unwrap().to_string();
        let line = must(Command::new("addr2line").current_dir(&tmp.path).args(["-e", exe, &addr]));
        assert!(String::from_utf8_lossy(&line.stdout).trim().ends_with("a.cc:8"), "{exe}: {line:?}");
    }
    tmp.finish();
}

/// (name, binding, kind) of each global symbol: kind is UND, COM, ABS or DEF.
fn globals(tmp: &TempDir, object: &str) -> Vec<(String, String, String)> {
    let out = must(Command::new("readelf").current_dir(&tmp.path).args(["-W", "-s", object]));
    let mut v: Vec<_> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 8 || f[4] == "LOCAL" || !f[0].ends_with(':') {
                return None;
            }
            let kind = match f[6] {
                "UND" | "COM" | "ABS" => f[6],
                _ => "DEF",
            };
            Some((f[7].to_string(), f[4].to_string(), kind.to_string()))
        })
        .collect();
    v.sort();
    v
}

/// The global symbols of `rivet -r` and `ld -r` agree: archive members pulled by need (and all of
/// them with --whole-archive), common symbols kept common (allocated with -d), weak references and
/// `-u`.
#[test]
fn symbols_agree_with_gnu_ld() {
    let Some(tmp) = setup("reloc-syms", &["gcc", "ar", "readelf", "ld"]) else { return };
    write(
        &tmp,
        &[
            (
                "main.c",
                "int shared_common; extern int needed(void); __attribute__((weak)) int maybe(void);\n\
                        int main(void) { return needed() + (maybe ? maybe() : 0) + shared_common; }\n",
            ),
            ("m1.c", "int shared_common; int needed(void) { return 1; }\n"),
            ("m2.c", "int unneeded(void) { return 2; }\n"),
            ("m3.c", "int by_u(void) { return 3; }\n"),
        ],
    );
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-fcommon", "main.c", "m1.c", "m2.c", "m3.c"]));
    must(Command::new("ar").current_dir(&tmp.path).args(["crs", "lib.a", "m1.o", "m2.o", "m3.o"]));
    for args in [
        vec!["main.o", "lib.a"],
        vec!["-u", "by_u", "main.o", "lib.a"],
        vec!["main.o", "--whole-archive", "lib.a", "--no-whole-archive"],
        vec!["-d", "main.o", "lib.a"],
    ] {
        let mut ours = vec!["-r", "-o", "ours.o"];
        ours.extend(&args);
        rivet(&tmp, &ours);
        let mut theirs = vec!["-r", "-o", "gnu.o"];
        theirs.extend(&args);
        must(Command::new("ld").current_dir(&tmp.path).args(&theirs));
        let (a, b) = (globals(&tmp, "ours.o"), globals(&tmp, "gnu.o"));
        assert_eq!(a, b, "{args:?}");
        assert!(a.iter().any(|(n, _, _)| n == "needed"), "{a:?}");
    }
    tmp.finish();
}

/// Sections as GNU ld keeps them: mergeable strings stay mergeable, the CET property note is
/// carried, `.note.GNU-stack` stays (non-executable), COMDAT members keep their names.
#[test]
fn section_kinds_are_kept() {
    let Some(tmp) = setup("reloc-sections", &["gcc", "readelf"]) else { return };
    write(
        &tmp,
        &[
            ("a.c", "const char *a(void) { return \"shared string\"; }\n"),
            ("b.c", "const char *b(void) { return \"shared string\"; }\n"),
        ],
    );
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-O1", "-fcf-protection", "a.c", "b.c"]));
    rivet(&tmp, &["-r", "a.o", "b.o", "-o", "ab.o"]);
    must(Command::new("ld").current_dir(&tmp.path).args(["-r", "a.o", "b.o", "-o", "ab-gnu.o"]));
    let facts = |object: &str| {
        let s = must(Command::new("readelf").current_dir(&tmp.path).args(["-W", "-S", "-n", object]));
        let s = String::from_utf8_lossy(&s.stdout).into_owned();
        let flags_of = |name: &str| {
            let line = s.lines().find(|l| l.contains(&format!(" {name} "))).unwrap_or_else(|| panic!("{name}:\n{s}"));
            let f: Vec<&str> = line.split_whitespace().collect();
            // [Nr] Name Type Address Off Size ES Flg ...: the flags follow the entry size.
            let es = f.iter().position(|w| w.len() == 2 && w.chars().all(|c| c.is_ascii_hexdigit())).unwrap();
            f[es + 1].to_string()
        };
        (flags_of(".rodata.str1.1"), flags_of(".note.GNU-stack"), s.contains("IBT, SHSTK"))
    };
    let ours = facts("ab.o");
    assert_eq!(ours, facts("ab-gnu.o"));
    assert_eq!(ours.0, "AMS");
    assert!(ours.2, "the IBT/SHSTK property note is carried");
    tmp.finish();
}

/// Compressed debug sections (`-gz`) are read and written plain; objdump reads the DWARF.
#[test]
fn compressed_debug_inputs() {
    let Some(tmp) = setup("reloc-gz", &["gcc", "readelf", "objdump"]) else { return };
    write(&tmp, &[("a.c", C_LIB), ("more.c", C_MORE), ("main.c", C_MAIN)]);
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-g", "-gz", "-fcommon", "a.c", "more.c", "main.c"]));
    rivet(&tmp, &["-r", "a.o", "more.o", "main.o", "-o", "all.o"]);
    reads_cleanly(&tmp, "all.o", &["a.o", "more.o", "main.o"]);
    let sections = must(Command::new("readelf").current_dir(&tmp.path).args(["-W", "-S", "all.o"]));
    let sections = String::from_utf8_lossy(&sections.stdout);
    let info = sections.lines().find(|l| l.contains(" .debug_info ")).unwrap();
    assert!(!info.contains(" C "), "written uncompressed: {info}");
    let expected = link_and_run(&tmp, "gcc", "gnu", &["a.o", "more.o", "main.o"], "direct");
    assert_eq!(link_and_run(&tmp, "gcc", "rivet", &["all.o"], "combined"), expected);
    tmp.finish();
}

/// More sections than a 16-bit index holds: extended numbering (section 0's size and link,
/// SHT_SYMTAB_SHNDX), read back by readelf and linked.
#[test]
fn extended_section_numbering() {
    let Some(tmp) = setup("reloc-many", &["gcc", "readelf"]) else { return };
    let mut asm = String::from(".globl answer\n.set answer, 0x1000\n");
    for i in 1..=70000 {
        asm.push_str(&format!(".section .data.{i},\"aw\"\n.globl x{i}\nx{i}: .long {i}\n"));
    }
    write(&tmp, &[("many.s", &asm), ("main.c", "extern int x69999; int main(void) { return x69999 != 69999; }\n")]);
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "many.s", "main.c"]));
    rivet(&tmp, &["-r", "many.o", "-o", "many-r.o"]);
    let out = must(Command::new("readelf").current_dir(&tmp.path).args(["-W", "-S", "-s", "many-r.o"]));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(".data.70000"), "all sections listed");
    let x = text.lines().find(|l| l.ends_with(" x69999")).unwrap();
    let shndx: u32 = x.split_whitespace().nth(6).unwrap().parse().unwrap();
    assert!(shndx > 0xff00, "{x}");
    assert!(text.lines().any(|l| l.contains(" ABS ") && l.ends_with(" answer")), "absolute symbol kept");
    link_and_run(&tmp, "gcc", "rivet", &["many-r.o", "main.o"], "exe");
    tmp.finish();
}

/// What cannot be combined is refused with GNU ld's and lld's words, and no output is written.
#[test]
fn refused_combinations() {
    let Some(tmp) = setup("reloc-refused", &["gcc"]) else { return };
    write(&tmp, &[("a.c", "int a(void) { return 1; }\n")]);
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-fPIC", "a.c"]));
    must(Command::new("gcc").current_dir(&tmp.path).args(["-shared", "a.o", "-o", "liba.so"]));
    for (args, message) in [
        (vec!["-r", "-shared", "a.o"], "-r and -shared may not be used together"),
        (vec!["-r", "-pie", "a.o"], "-r and -pie may not be used together"),
        (vec!["-r", "a.o", "liba.so"], "liba.so"),
        (vec!["-r", "--gc-sections", "a.o"], "--gc-sections is not supported with relocatable output"),
    ] {
        let mut all = args.clone();
        all.extend(["-o", "out.o"]);
        let out = Command::new(linker()).current_dir(&tmp.path).args(&all).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(!tmp.join("out.o").exists(), "{args:?} wrote an output");
    }
    tmp.finish();
}

/// `.rela.*` sections of an output: name → number of entries.
fn emitted(tmp: &TempDir, exe: &str) -> std::collections::BTreeMap<String, u64> {
    let out = must(Command::new("readelf").current_dir(&tmp.path).args(["-W", "-S", exe]));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let l = l.split_once(']')?.1;
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = f.first()?;
            (name.starts_with(".rela.") && *name != ".rela.dyn" && *name != ".rela.plt")
                .then(|| (name.to_string(), u64::from_str_radix(f[4], 16).unwrap() / 24))
        })
        .collect()
}

/// `--emit-relocs` (`-q`): the same `.rela.*` sections with the same number of entries as GNU ld's
/// `-q` output of the same objects, and every PC-relative relocation kept in `.rela.text` says
/// what the code holds: the bytes at its offset are S + A - P with S from `.symtab` (so offsets,
/// symbol indices and re-based section addends are right). `.eh_frame` frames of code that
/// `--gc-sections` dropped take their relocations with them.
#[test]
fn emit_relocs_match_gnu_ld() {
    let Some(tmp) = setup("emit-relocs", &["gcc", "readelf", "ld"]) else { return };
    write(&tmp, &[("a.c", C_LIB), ("more.c", C_MORE), ("main.c", C_MAIN)]);
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-O1", "-fcommon", "a.c", "more.c", "main.c"]));
    let objects = ["a.o", "more.o", "main.o"];
    let mut gnu = Command::new("gcc");
    must(gnu.current_dir(&tmp.path).args(objects).args(["-Wl,-q", "-o", "gnu"]));
    let expected = String::from_utf8(must(&mut Command::new(tmp.join("gnu"))).stdout).unwrap();
    assert_eq!(link_and_run(&tmp, "gcc", "rivet", &["a.o", "more.o", "main.o", "-Wl,--emit-relocs"], "ours"), expected);
    let (ours, theirs) = (emitted(&tmp, "ours"), emitted(&tmp, "gnu"));
    assert_eq!(ours, theirs);
    assert!(ours.contains_key(".rela.text") && ours.contains_key(".rela.eh_frame"), "{ours:?}");
    // S + A - P against the bytes.
    let bytes = std::fs::read(tmp.join("ours")).unwrap();
    let file = object::read::elf::ElfFile64::<object::LittleEndian>::parse(&*bytes).unwrap();
    use object::{Object, ObjectSection, ObjectSymbol, ObjectSymbolTable};
    let symtab = file.symbol_table().unwrap();
    let text = file.section_by_name(".text").unwrap();
    let rela = file.section_by_name(".rela.text").unwrap();
    let data = rela.data().unwrap();
    let mut checked = 0;
    for entry in data.chunks(24) {
        let off = u64::from_le_bytes(entry[0..8].try_into().unwrap());
        let info = u64::from_le_bytes(entry[8..16].try_into().unwrap());
        let addend = i64::from_le_bytes(entry[16..24].try_into().unwrap());
        let (sym, ty) = ((info >> 32) as usize, info as u32);
        if ty != object::elf::R_X86_64_PC32 || sym == 0 {
            continue;
        }
        let s = symtab.symbol_by_index(object::SymbolIndex(sym)).unwrap();
        if s.is_undefined() {
            continue;
        }
        let at = (off - text.address() + text.file_range().unwrap().0) as usize;
        let field = i32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as i64;
        assert_eq!(field, s.address() as i64 + addend - off as i64, "relocation at {off:#x} against {:?}", s.name());
        checked += 1;
    }
    assert!(checked >= 3, "checked {checked} PC32 relocations");
    // Dropped code takes its frames' relocations along.
    must(Command::new("gcc").current_dir(&tmp.path).args([
        "-c",
        "-O1",
        "-fcommon",
        "-ffunction-sections",
        "a.c",
        "more.c",
        "main.c",
    ]));
    let mut gnu = Command::new("gcc");
    must(gnu.current_dir(&tmp.path).args(objects).args(["-Wl,-q,--gc-sections", "-o", "gnu-gc"]));
    link_and_run(&tmp, "gcc", "rivet", &["a.o", "more.o", "main.o", "-Wl,-q,--gc-sections"], "ours-gc");
    // GNU ld leaves an R_X86_64_NONE where a dropped frame's relocation was; rivet leaves nothing.
    let frames = |exe: &str| {
        let out = must(Command::new("readelf").current_dir(&tmp.path).args(["-W", "-r", exe]));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let part =
            text.split("Relocation section '.rela.eh_frame'").nth(1).unwrap().split("\n\n").next().unwrap().to_string();
        part.lines().filter(|l| l.contains("R_X86_64_PC32")).count()
    };
    assert_eq!(frames("ours-gc"), frames("gnu-gc"));
    assert!(frames("ours-gc") < frames("ours"), "frames of dropped code are gone");
    tmp.finish();
}

const RELAXED_GOT_LOAD: &str = ".text\n.globl _start\n_start:\n  movq foo@GOTPCREL(%rip), %rax\n  movl (%rax), %eax\n\
    cmpl $42, %eax\n  jne 1f\n  xorl %edi, %edi\n  jmp 2f\n1:\n  movl $1, %edi\n2:\n  movl $60, %eax\n  syscall\n\
    .data\n.hidden foo\nfoo:\n  .long 42\n";

/// The relocation types `objdump -dr` shows after each instruction.
fn relocations_after_instructions(tmp: &TempDir, exe: &str) -> Vec<(String, String)> {
    let out = must(Command::new("objdump").current_dir(&tmp.path).args(["-dr", exe]));
    let mut prev = String::new();
    let mut pairs = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some(ty) = line.split_whitespace().find(|w| w.starts_with("R_X86_64_")) {
            let insn = prev.split('\t').nth(2).unwrap_or("").split_whitespace().next().unwrap_or("").to_string();
            pairs.push((insn, ty.to_string()));
        } else {
            prev = line.to_string();
        }
    }
    pairs
}

/// A GOT load relaxed to `lea` is reported as the PC-relative reference it became, as GNU ld
/// writes it for `-q`; a relaxed TLS sequence keeps its type as a marker.
#[test]
fn emit_relocs_report_a_relaxed_got_load_as_pc32() {
    let Some(tmp) = setup("emit-relocs-relax", &["gcc", "objdump", "ld"]) else { return };
    write(&tmp, &[("a.s", RELAXED_GOT_LOAD)]);
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "a.s"]));
    // A PIE, where GNU ld relaxes to `lea` too (in a fixed-address executable it makes
    // `mov $foo` with R_X86_64_32S; rivet and lld make `lea` there as well).
    let args = ["-pie", "--no-dynamic-linker", "-nostdlib", "-e", "_start", "--emit-relocs", "a.o", "-o"];
    rivet(&tmp, &[&args[..], &["ours"]].concat());
    must(Command::new("ld").current_dir(&tmp.path).args(args).arg("gnu"));
    assert!(must(&mut Command::new(tmp.join("ours"))).status.success());
    let ours = relocations_after_instructions(&tmp, "ours");
    assert_eq!(ours, [("lea".to_string(), "R_X86_64_PC32".to_string())]);
    assert_eq!(ours, relocations_after_instructions(&tmp, "gnu"));
}

/// `--relocatable-merge-sections` (mold): `-r` names its sections as a final link would, so
/// `.text.foo` and `.text.bar` become one `.text`; the object still links into a program that
/// runs.
#[test]
fn relocatable_merge_sections_merges_by_output_name() {
    let Some(tmp) = setup("reloc-merge-sections", &["gcc", "readelf"]) else { return };
    write(&tmp, &[("a.c", "int foo(void) { return 40; }\nint bar(void) { return 2; }\n"), ("main.c", C_CALLS_FOO_BAR)]);
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-O1", "-ffunction-sections", "a.c", "main.c"]));
    let names = |object: &str| -> Vec<String> {
        let out = must(Command::new("readelf").current_dir(&tmp.path).args(["-W", "-S", object]));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once(']').map(|(_, r)| r.split_whitespace().next().unwrap_or("").to_string()))
            .collect()
    };
    rivet(&tmp, &["-r", "a.o", "-o", "kept.o"]);
    assert!(names("kept.o").iter().any(|n| n == ".text.foo"), "{:?}", names("kept.o"));
    rivet(&tmp, &["-r", "--relocatable-merge-sections", "a.o", "-o", "merged.o"]);
    let merged = names("merged.o");
    assert!(!merged.iter().any(|n| n.starts_with(".text.")) && merged.iter().any(|n| n == ".text"), "{merged:?}");
    assert_eq!(link_and_run(&tmp, "gcc", "rivet", &["merged.o", "main.o"], "prog"), "42\n");
}

const C_CALLS_FOO_BAR: &str = "#include <stdio.h>\nint foo(void);\nint bar(void);\n\
    int main(void) { printf(\"%d\\n\", foo() + bar()); return 0; }\n";
