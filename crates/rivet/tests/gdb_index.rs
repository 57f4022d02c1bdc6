//! `--gdb-index`: the `.gdb_index` rivet writes says what lld's says for the same objects (compile
//! units, how many address ranges each has, every name with its kind and units), its ranges cover
//! each function, gdb takes it (`.gdb_index: version 7` instead of building its own index) and
//! stops at breakpoints set by name, and it is the same bytes whatever the thread count. DWARF 4
//! and 5, `-ffunction-sections` (range lists), compressed inputs, split DWARF and
//! `--gc-sections` are covered.
mod common;

use common::*;
use std::collections::BTreeMap;
use std::process::Command;

const LLD_DIR: &str = "/usr/lib/llvm-19/bin";

const A: &str = "void fn3(void);\n\
    static void fn2(void) { fn3(); }\n\
    void fn1(void) { fn2(); }\n\
    struct point { int x, y; };\n\
    int use_point(struct point *p) { return p->x; }\n\
    void unused_a(void) {}\n";
const B: &str = "#include <stdio.h>\n\
    void trap(void) {}\n\
    static void fn4(void) { printf(\"Hello\\n\"); trap(); }\n\
    void fn3(void) { fn4(); }\n\
    void unused_b(void) {}\n";
const MAIN: &str = "void fn1(void);\n\
    int main(void) { fn1(); return 0; }\n";

fn setup(name: &str, flags: &[&[&str]]) -> Option<TempDir> {
    if !testing_rivet() || !have("gcc") || !have("readelf") || !std::path::Path::new(LLD_DIR).join("ld.lld").exists() {
        eprintln!("skipped: needs gcc, readelf, lld 19 and rivet as the linker under test");
        return None;
    }
    let tmp = TempDir::new(name);
    for (file, text) in [("a.c", A), ("b.c", B), ("main.c", MAIN)] {
        std::fs::write(tmp.join(file), text).unwrap();
    }
    for (file, f) in ["a.c", "b.c", "main.c"].iter().zip(flags) {
        must(
            Command::new("gcc").current_dir(&tmp.path).args(["-c", "-g", "-ggnu-pubnames", "-fPIC"]).args(*f).arg(file),
        );
    }
    Some(tmp)
}

fn link(tmp: &TempDir, by_lld: bool, extra: &[&str], out: &str) {
    let mut cmd = Command::new("gcc");
    cmd.current_dir(&tmp.path);
    if by_lld {
        cmd.arg("-fuse-ld=lld").arg(format!("-B{LLD_DIR}"));
    } else {
        cmd.arg("-B").arg(linker_dir(tmp));
    }
    cmd.args(["a.o", "b.o", "main.o", "-Wl,--gdb-index", "-o", out]).args(extra);
    must(&mut cmd);
}

/// What readelf shows of an index, addresses left out: the unit table, the number of address
/// ranges per unit, and each name's (unit, kind) list.
#[derive(Debug, PartialEq)]
struct Index {
    units: Vec<String>,
    ranges_per_unit: BTreeMap<u32, usize>,
    names: BTreeMap<String, Vec<String>>,
    /// (start, end) of every range.
    ranges: Vec<(u64, u64)>,
}

fn index(tmp: &TempDir, exe: &str) -> Index {
    let out = must(Command::new("readelf").current_dir(&tmp.path).args(["--debug-dump=gdb_index", exe]));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("Version 7"), "{exe} has a version 7 index:\n{text}");
    let mut idx =
        Index { units: Vec::new(), ranges_per_unit: BTreeMap::new(), names: BTreeMap::new(), ranges: Vec::new() };
    let mut part = "";
    let mut current: Option<String> = None;
    for line in text.lines() {
        match line.trim_end() {
            "CU table:" | "TU table:" | "Address table:" | "Symbol table:" => {
                part = line.trim_end();
                continue;
            }
            "" => continue,
            _ => {}
        }
        match part {
            "CU table:" => idx.units.push(line.split_once(']').unwrap().1.trim().to_string()),
            "Address table:" => {
                let f: Vec<&str> = line.split_whitespace().collect();
                let (lo, hi) = (u64::from_str_radix(f[0], 16).unwrap(), u64::from_str_radix(f[1], 16).unwrap());
                idx.ranges.push((lo, hi));
                *idx.ranges_per_unit.entry(f[2].parse().unwrap()).or_default() += 1;
            }
            "Symbol table:" => {
                if let Some(rest) = line.trim_start().strip_prefix('[') {
                    // "[  8] use_pt: 0 [global, function]" or "[ 18] int:" followed by entry lines.
                    let (_, entry) = rest.split_once("] ").unwrap();
                    let (name, units) = entry.rsplit_once(':').unwrap();
                    let name = if units.trim().is_empty() || units.trim().starts_with(|c: char| c.is_ascii_digit()) {
                        name
                    } else {
                        entry
                    };
                    current = Some(name.to_string());
                    let list = idx.names.entry(name.to_string()).or_default();
                    if !units.trim().is_empty() {
                        list.push(units.trim().to_string());
                    }
                } else if let Some(n) = &current {
                    idx.names.get_mut(n).unwrap().push(line.trim().to_string());
                }
            }
            _ => {}
        }
    }
    for v in idx.names.values_mut() {
        v.sort();
    }
    idx
}

/// Every function of the program's own sources lies in exactly one address range.
fn ranges_cover_functions(tmp: &TempDir, exe: &str, idx: &Index, functions: &[&str]) {
    let nm = must(Command::new("nm").current_dir(&tmp.path).arg(exe));
    let nm = String::from_utf8_lossy(&nm.stdout);
    for f in functions {
        let addr = nm
            .lines()
            .find_map(|l| {
                let p: Vec<&str> = l.split_whitespace().collect();
                (p.len() == 3 && p[2] == *f).then(|| u64::from_str_radix(p[0], 16).unwrap())
            })
            .unwrap_or_else(|| panic!("{f} in {exe}"));
        let n = idx.ranges.iter().filter(|&&(lo, hi)| lo <= addr && addr < hi).count();
        assert_eq!(n, 1, "{exe}: {f} at {addr:#x} is in {n} ranges: {:x?}", idx.ranges);
    }
}

/// gdb reads the index rather than the DWARF, and a breakpoint by name stops in the right place.
fn gdb_uses_index(tmp: &TempDir, exe: &str) {
    if !have("gdb") {
        eprintln!("note: gdb is not installed; the index is checked with readelf only");
        return;
    }
    let out = Command::new("gdb")
        .current_dir(&tmp.path)
        .env("DEBUGINFOD_URLS", "")
        .args(["-nx", "-batch", "-ex", "maint print objfiles", "-ex", "break fn4", "-ex", "run", "-ex", "bt"])
        .arg(exe)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains(".gdb_index: version 7"), "gdb did not use the index of {exe}:\n{text}");
    for frame in ["fn4 () at b.c:3", "fn3 () at b.c:4", "fn2 () at a.c:2", "fn1 () at a.c:3", "main () at main.c:2"] {
        assert!(text.contains(frame), "{exe}: no '{frame}' in:\n{text}");
    }
}

fn same_as_lld(name: &str, flags: &[&[&str]], extra: &[&str], functions: &[&str]) {
    let Some(tmp) = setup(name, flags) else { return };
    link(&tmp, true, extra, "by-lld");
    link(&tmp, false, extra, "by-rivet");
    let (ours, lld) = (index(&tmp, "by-rivet"), index(&tmp, "by-lld"));
    assert_eq!(ours.units, lld.units, "unit tables");
    assert_eq!(ours.ranges_per_unit, lld.ranges_per_unit, "ranges per unit");
    assert_eq!(ours.names, lld.names, "names");
    ranges_cover_functions(&tmp, "by-rivet", &ours, functions);
    gdb_uses_index(&tmp, "by-rivet");
    tmp.finish();
}

const ALL: &[&str] = &["fn1", "fn2", "fn3", "fn4", "trap", "main", "use_point"];

#[test]
fn dwarf4_and_5_with_function_sections() {
    same_as_lld(
        "gdb-index-mixed",
        &[&["-gdwarf-5", "-ffunction-sections"], &["-gdwarf-4", "-ffunction-sections"], &["-gdwarf-5"]],
        &[],
        ALL,
    );
}

#[test]
fn dwarf2_and_compressed_inputs() {
    same_as_lld("gdb-index-dwarf2", &[&["-gdwarf-2", "-ffunction-sections"], &["-gdwarf-3"], &["-gz"]], &[], ALL);
}

#[test]
fn split_dwarf_skeletons() {
    same_as_lld(
        "gdb-index-split",
        &[&["-gdwarf-5", "-gsplit-dwarf"], &["-gdwarf-4", "-gsplit-dwarf"], &["-gdwarf-5"]],
        &[],
        ALL,
    );
}

/// Code dropped by --gc-sections has no range; the output's debug sections compressed.
#[test]
fn gc_sections_and_compressed_output() {
    same_as_lld(
        "gdb-index-gc",
        &[&["-ffunction-sections"], &["-ffunction-sections"], &[]],
        &["-Wl,--gc-sections", "-Wl,--compress-debug-sections=zlib"],
        // use_point and the unused_* functions are dropped; lld's index has no range for them
        // either (ranges per unit are compared).
        &["fn1", "fn2", "fn3", "fn4", "trap", "main"],
    );
}

/// The same bytes with one thread and with all of them; no index without debug information.
#[test]
fn deterministic_and_absent_without_dwarf() {
    let Some(tmp) = setup("gdb-index-det", &[&[], &[], &[]]) else { return };
    let mut outputs = Vec::new();
    for threads in ["--threads=1", "--threads=2"] {
        let out = format!("exe{threads}");
        link(&tmp, false, &[&format!("-Wl,{threads}")], &out);
        outputs.push(std::fs::read(tmp.join(&out)).unwrap());
    }
    assert_eq!(outputs[0], outputs[1]);
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-g0", "main.c", "-o", "plain.o"]));
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-g0", "a.c", "-o", "a.o"]));
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-g0", "b.c", "-o", "b.o"]));
    let mut cmd = Command::new("gcc");
    cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(&tmp));
    must(cmd.args(["a.o", "b.o", "plain.o", "-Wl,--gdb-index", "-o", "nodebug"]));
    let sections = must(Command::new("readelf").current_dir(&tmp.path).args(["-S", "nodebug"]));
    assert!(!String::from_utf8_lossy(&sections.stdout).contains(".gdb_index"));
    tmp.finish();
}
