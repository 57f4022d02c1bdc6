//! Details of the output that tools read rather than programs: the linker-defined symbols a
//! `.symtab` shows, and the like. Each is compared with GNU ld's build of the same objects where
//! GNU ld has the fact, and the programs are run to show that both builds behave alike.
mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Writes `source` to `file` in the test directory and compiles it with `cflags` (`-c` added).
fn compile(tmp: &TempDir, file: &str, source: &str, cflags: &[&str]) {
    std::fs::write(tmp.join(file), source).unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).arg("-c").args(cflags).arg(file));
}

/// `gcc ARGS -o OUT`, by GNU ld or the linker under test; must succeed.
fn link(tmp: &TempDir, ours: bool, args: &[&str], out: &str) -> std::path::PathBuf {
    let o = link_with(tmp, ours, args, out);
    assert!(o.status.success(), "linking {out} ({args:?}) failed:\n{}", stderr_text(&o));
    tmp.join(out)
}

fn run(exe: &Path) -> String {
    String::from_utf8_lossy(&must(&mut Command::new(exe)).stdout).into_owned()
}

/// One `.symtab` (or `.dynsym`) entry as readelf shows it.
#[derive(Debug, Clone)]
struct Sym {
    value: u64,
    ty: String,
    bind: String,
    ndx: String,
}

/// The named symbols of `readelf -Ws` in the table `table` (".symtab" or ".dynsym"), by name (the
/// last entry of a name wins; versions are cut).
fn symbols(file: &Path, table: &str) -> BTreeMap<String, Sym> {
    let text = readelf(&["-Ws"], file);
    let mut map = BTreeMap::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("Symbol table ") {
            inside = line.contains(&format!("'{table}'"));
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        if !inside || w.len() < 8 || !w[0].ends_with(':') {
            continue;
        }
        let name = w[7].split('@').next().unwrap().to_string();
        let value = u64::from_str_radix(w[1], 16).unwrap_or(0);
        map.insert(name, Sym { value, ty: w[3].into(), bind: w[4].into(), ndx: w[6].into() });
    }
    map
}

/// (name, address, size, flags) of every section of `readelf -SW` but the null one: section
/// index N is entry N - 1.
fn sections(file: &Path) -> Vec<(String, u64, u64, String)> {
    let text = readelf(&["-SW"], file);
    let mut v = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('[') else { continue };
        let Some((index, rest)) = rest.split_once(']') else { continue };
        let w: Vec<&str> = rest.split_whitespace().collect();
        // The null section (index 0) has no name; the others are listed in index order.
        if w.len() < 7 || w[0] == "Name" || index.trim() == "0" {
            continue;
        }
        let hex = |s: &str| u64::from_str_radix(s, 16).unwrap_or(0);
        // Name Type Address Off Size ES Flags...; flags are absent when empty.
        let flags = if w.len() >= 10 { w[6].to_string() } else { String::new() };
        v.push((w[0].to_string(), hex(w[2]), hex(w[4]), flags));
    }
    v
}

/// The end of the loaded image: the highest end of a loaded section that is not a TLS template.
fn image_end(file: &Path) -> u64 {
    sections(file).iter().filter(|s| s.3.contains('A') && !s.3.contains('T')).map(|s| s.1 + s.2).max().unwrap()
}

/// The image bounds are in an executable's `.symtab` whether the program refers to them or not:
/// `_end`, `_edata` and `__bss_start` as GNU ld defines them, and (as mold has them) `end`,
/// `edata`, `_etext`, `etext`, which rivet makes local so that nothing is exported; each in a
/// section, not absolute, so that a PIE's are relocated by tools. A program's own `end` stays its
/// own, and `-nmagic` (pages not padded) ends the image lower.
#[test]
fn image_bounds_are_in_the_symbol_table() {
    let Some(tmp) = gcc_readelf_tmp("image-bounds") else { return };
    compile(
        &tmp,
        "main.c",
        "#include <stdio.h>\nint zeroed[100];\nint main(void) { zeroed[3] = 1; puts(\"ok\"); return 0; }\n",
        &[],
    );
    for (mode, flags) in [("pie", &["-pie"][..]), ("nopie", &["-no-pie"][..]), ("static", &["-static"][..])] {
        let mut args = vec!["main.o"];
        args.extend_from_slice(flags);
        let gnu = link(&tmp, false, &args, &format!("gnu-{mode}"));
        let ours = link(&tmp, true, &args, &format!("ours-{mode}"));
        assert_eq!(run(&gnu), run(&ours), "{mode}");
        let (g, o) = (symbols(&gnu, ".symtab"), symbols(&ours, ".symtab"));
        for name in ["_end", "_edata", "__bss_start"] {
            assert!(g.contains_key(name), "{mode}: GNU ld defines {name}: {g:?}");
            assert!(o.contains_key(name), "{mode}: {name} is in the symbol table");
            assert_ne!(o[name].ndx, "ABS", "{mode}: {name} belongs to a section");
        }
        assert_eq!(g["_end"].value, image_end(&gnu), "{mode}: GNU ld's _end is the image's end");
        assert_eq!(o["_end"].value, image_end(&ours), "{mode}: _end is the image's end");
        if testing_rivet() {
            for (name, same_as) in [("end", "_end"), ("edata", "_edata"), ("etext", "_etext")] {
                let s = o.get(name).unwrap_or_else(|| panic!("{mode}: {name} is in the symbol table"));
                assert_eq!(s.value, o[same_as].value, "{mode}: {name} = {same_as}");
                assert_eq!(s.bind, "LOCAL", "{mode}: unreferenced, {name} is local");
                assert_ne!(s.ndx, "ABS", "{mode}: {name} belongs to a section");
            }
            let dynsym = symbols(&ours, ".dynsym");
            assert!(!dynsym.contains_key("end") && !dynsym.contains_key("_end"), "{mode}: nothing exported");
        }
    }
    // A program's own `end` is the one it uses; the linker's `_end` is still the image's end.
    compile(
        &tmp,
        "own.c",
        "#include <stdio.h>\nchar end[] = \"mine\";\nextern char _end[];\n\
         int main(void) { printf(\"%s %d\\n\", end, _end > end); return 0; }\n",
        &[],
    );
    let gnu = link(&tmp, false, &["own.o"], "gnu-own");
    let ours = link(&tmp, true, &["own.o"], "ours-own");
    assert_eq!(run(&gnu), "mine 1\n");
    assert_eq!(run(&ours), "mine 1\n");
    let o = symbols(&ours, ".symtab");
    assert_eq!(o["end"].bind, "GLOBAL", "the program's own end");
    assert_eq!(o["end"].ty, "OBJECT");
    // -nmagic: no page padding, so the image ends lower.
    if testing_rivet() {
        compile(&tmp, "start.c", "void _start(void) {}\n", &[]);
        let magic = link(&tmp, true, &["start.o", "-nostdlib", "-Wl,-nmagic"], "ours-nmagic");
        let paged = link(&tmp, true, &["start.o", "-nostdlib"], "ours-paged");
        let (m, p) = (symbols(&magic, ".symtab"), symbols(&paged, ".symtab"));
        assert!(m["end"].value < p["end"].value, "{:?} {:?}", m["end"], p["end"]);
    }
    tmp.finish();
}

/// `-z start-stop-visibility=protected` given explicitly (mold's meaning): the `__start_SEC` /
/// `__stop_SEC` pair of every loaded section named as a C identifier is defined even though no
/// code refers to it, and exported, so that `dlsym` finds the section; without the option (or
/// with `hidden`) nothing is exported, as GNU ld and lld have it.
#[test]
fn protected_start_stop_symbols_are_exported() {
    let Some(tmp) = gcc_readelf_tmp("start-stop-export") else { return };
    compile(
        &tmp,
        "main.c",
        "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <stdio.h>\n\
         __attribute__((section(\"hello\"), used)) static char msg[] = \"Hello world\";\n\
         int main(void) {\n\
           char *start = dlsym(RTLD_DEFAULT, \"__start_hello\");\n\
           char *stop = dlsym(RTLD_DEFAULT, \"__stop_hello\");\n\
           if (start && stop) printf(\"%.*s\\n\", (int)(stop - start), start); else puts(\"none\");\n\
           return 0;\n\
         }\n",
        &[],
    );
    for (name, flags) in [("plain", &[][..]), ("hidden", &["-Wl,-z,start-stop-visibility=hidden"][..])] {
        let mut args = vec!["main.o", "-ldl"];
        args.extend_from_slice(flags);
        let gnu = link(&tmp, false, &args, &format!("gnu-{name}"));
        let ours = link(&tmp, true, &args, &format!("ours-{name}"));
        assert_eq!(run(&gnu), "none\n", "{name}");
        assert_eq!(run(&ours), "none\n", "{name}");
        assert!(!symbols(&ours, ".dynsym").contains_key("__start_hello"), "{name}");
    }
    if testing_rivet() {
        let ours = link(&tmp, true, &["main.o", "-ldl", "-Wl,-z,start-stop-visibility=protected"], "ours-protected");
        assert_eq!(run(&ours), "Hello world\n");
        let dynsym = readelf(&["-W", "--dyn-syms"], &ours);
        for name in ["__start_hello", "__stop_hello"] {
            let line = dynsym.lines().find(|l| l.ends_with(&format!(" {name}"))).unwrap_or_else(|| panic!("{dynsym}"));
            assert!(line.contains("GLOBAL PROTECTED"), "{line}");
        }
        // The last word counts: protected then hidden exports nothing.
        let args = ["main.o", "-ldl", "-Wl,-z,start-stop-visibility=protected", "-Wl,-z,start-stop-visibility=hidden"];
        let hidden = link(&tmp, true, &args, "ours-protected-hidden");
        assert_eq!(run(&hidden), "none\n");
    }
    tmp.finish();
}

/// `--undefined-glob=PATTERN` with `--gc-sections`: the symbols the pattern fetched from an
/// archive are kept, as `-u NAME` keeps a name under GNU ld (compared with GNU ld given each
/// matching name by `-u`); what it does not match is neither fetched nor kept.
#[test]
fn undefined_glob_symbols_survive_gc_sections() {
    let Some(tmp) = gcc_readelf_tmp("undefined-glob-gc") else { return };
    if !have("ar") {
        eprintln!("skipped: ar missing");
        return;
    }
    compile(&tmp, "a.c", "int foo = 1;\n", &[]);
    compile(&tmp, "b.c", "int foobar = 2;\n", &[]);
    compile(&tmp, "c.c", "int baz = 3;\n", &[]);
    compile(&tmp, "main.c", "int main(void) { return 0; }\n", &[]);
    must(Command::new("ar").current_dir(&tmp.path).args(["crs", "libd.a", "a.o", "b.o", "c.o"]));
    let gnu = link(&tmp, false, &["main.o", "-Wl,-u,foo,-u,foobar,--gc-sections", "libd.a"], "gnu");
    let g = symbols(&gnu, ".symtab");
    assert!(g.contains_key("foo") && g.contains_key("foobar") && !g.contains_key("baz"));
    if testing_rivet() {
        let ours = link(&tmp, true, &["libd.a", "main.o", "-Wl,--undefined-glob=foo*", "-Wl,--gc-sections"], "ours");
        let o = symbols(&ours, ".symtab");
        for name in ["foo", "foobar"] {
            assert!(o.contains_key(name), "{name} kept");
            assert_eq!(o[name].ty, "OBJECT");
            assert_ne!(o[name].ndx, "UND", "{name} defined");
        }
        assert!(!o.contains_key("baz"), "baz is not matched");
        // A plain object's symbol that the pattern matches is kept too (as `-u` keeps it).
        compile(&tmp, "extra.c", "int foo_extra = 4;\nint other = 5;\n", &["-fdata-sections"]);
        let args = ["main.o", "extra.o", "-Wl,--undefined-glob=foo*", "-Wl,--gc-sections"];
        let o = symbols(&link(&tmp, true, &args, "ours-extra"), ".symtab");
        assert!(o.contains_key("foo_extra") && !o.contains_key("other"), "{o:?}");
        run(&tmp.join("ours-extra"));
    }
    tmp.finish();
}

/// Every output section made of input sections has an STT_SECTION symbol in `.symtab` (LOCAL,
/// at the section's address, in that section), as mold writes them and GNU ld did before 2.37;
/// they come before the other locals and change nothing the program does.
#[test]
fn section_symbols_are_in_the_symbol_table() {
    let Some(tmp) = gcc_readelf_tmp("section-symbols") else { return };
    compile(&tmp, "main.c", "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n", &[]);
    let gnu = link(&tmp, false, &["main.o"], "gnu");
    let ours = link(&tmp, true, &["main.o"], "ours");
    assert_eq!(run(&gnu), run(&ours));
    if !testing_rivet() {
        return tmp.finish();
    }
    let secs = sections(&ours);
    let text = readelf(&["-Ws"], &ours);
    let symtab = text.split("Symbol table '.symtab'").nth(1).expect("a .symtab");
    let mut seen = Vec::new();
    for line in symtab.lines().filter(|l| l.contains(" SECTION ")) {
        let w: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(&w[3..6], ["SECTION", "LOCAL", "DEFAULT"], "{line}");
        let ndx: usize = w[6].parse().unwrap_or_else(|_| panic!("{line}"));
        let (name, addr, ..) = &secs[ndx - 1];
        assert_eq!(u64::from_str_radix(w[1], 16).unwrap(), *addr, "{line}");
        seen.push(name.clone());
    }
    for name in [".text", ".data", ".rodata", ".init_array"] {
        assert!(seen.iter().any(|s| s == name), "{name} has its section symbol: {seen:?}");
    }
    tmp.finish();
}

/// Each PLT entry has a local function symbol `NAME$plt` over it (mold's names), in the PLT
/// section that calls go to, so that disassemblers and profilers name the stub; the library
/// works as GNU ld's build does.
#[test]
fn plt_entries_have_symbols() {
    let Some(tmp) = gcc_readelf_tmp("plt-symbols") else { return };
    compile(&tmp, "lib.c", "int bar(void);\nint foo(void) { return bar() + 1; }\n", &["-fPIC"]);
    compile(&tmp, "bar.c", "int bar(void) { return 41; }\n", &["-fPIC"]);
    compile(
        &tmp,
        "main.c",
        "#include <stdio.h>\nint foo(void);\nint main(void) { printf(\"%d\\n\", foo()); return 0; }\n",
        &[],
    );
    link(&tmp, true, &["-shared", "bar.o", "-o", "libbar.so"], "libbar.so");
    for ours in [false, true] {
        let lib = if ours { "libours.so" } else { "libgnu.so" };
        link(&tmp, ours, &["-shared", "lib.o", "-L.", "-lbar", "-Wl,-rpath,$ORIGIN"], lib);
        let exe = format!("main-{lib}");
        link(&tmp, false, &["main.o", lib, "-L.", "-lbar", "-Wl,-rpath,$ORIGIN"], &exe);
        assert_eq!(run(&tmp.join(&exe)), "42\n", "{lib}");
    }
    if !testing_rivet() {
        return tmp.finish();
    }
    let lib = tmp.join("libours.so");
    let syms = symbols(&lib, ".symtab");
    let plt = syms.get("bar$plt").unwrap_or_else(|| panic!("bar$plt: {syms:?}"));
    assert_eq!((plt.ty.as_str(), plt.bind.as_str()), ("FUNC", "LOCAL"));
    let secs = sections(&lib);
    let (name, addr, size, _) = &secs[plt.ndx.parse::<usize>().unwrap() - 1];
    assert!(name == ".plt" || name == ".plt.sec", "{name}");
    assert!(*addr <= plt.value && plt.value + 16 <= addr + size);
    // The call in foo goes to the entry the symbol is over.
    if have("objdump") {
        let dis =
            String::from_utf8_lossy(&must(Command::new("objdump").args(["-d", "--no-show-raw-insn"]).arg(&lib)).stdout)
                .into_owned();
        // (objdump names the stub `bar@plt` itself.)
        let call = format!("call   {:x} <bar", plt.value);
        assert!(dis.contains(&call), "{call} in:\n{dis}");
    }
    tmp.finish();
}

/// A copy relocation's copy is aligned as the library's variable: its address's alignment, no
/// more than its section's (a 32-aligned variable gets a 32-aligned copy, not a page-aligned one
/// when it happens to sit at a page boundary). Copies go to sections of their own, named as
/// mold names them: `.copyrel` for writable variables, `.copyrel.rel.ro` (inside PT_GNU_RELRO)
/// for read-only ones under `-z relro`; the program reads the same values as GNU ld's build.
#[test]
fn copy_relocations_keep_alignment_and_have_their_sections() {
    let Some(tmp) = gcc_readelf_tmp("copyrel") else { return };
    for align in [8, 32, 256] {
        compile(
            &tmp,
            &format!("lib{align}.c"),
            &format!("__attribute__((aligned({align}))) int foo = {align};\n"),
            &["-fPIC"],
        );
        link(&tmp, false, &["-shared", &format!("lib{align}.o")], &format!("lib{align}.so"));
    }
    compile(
        &tmp,
        "ro.c",
        "__attribute__((section(\".data.rel.ro\"))) char msg[100] = \"read only\";\nchar rw[16] = \"writable\";\n",
        &["-fPIC"],
    );
    link(&tmp, false, &["-shared", "ro.o"], "libro.so");
    compile(&tmp, "main.c", "#include <stdio.h>\nextern int foo;\nint main(void) { printf(\"%d %d\\n\", foo, (int)((long)&foo % 8)); return 0; }\n", &["-fno-PIE"]);
    compile(&tmp, "ro-main.c", "#include <stdio.h>\nextern char msg[100], rw[16];\nint main(void) { printf(\"%s %s\\n\", msg, rw); return 0; }\n", &["-fno-PIE"]);
    for align in [8u64, 32, 256] {
        let lib = format!("lib{align}.so");
        let args = ["main.o", lib.as_str(), "-no-pie", "-Wl,-rpath,$ORIGIN"];
        let gnu = link(&tmp, false, &args, &format!("gnu-{align}"));
        let ours = link(&tmp, true, &args, &format!("ours-{align}"));
        assert_eq!(run(&gnu), run(&ours));
        assert_eq!(run(&ours), format!("{align} 0\n"));
        let foo = symbols(&ours, ".dynsym")["foo"].clone();
        assert_eq!(foo.value % align, 0, "the copy of a {align}-aligned variable");
        if testing_rivet() {
            let secs = sections(&ours);
            let (name, addr, size, _) = &secs[foo.ndx.parse::<usize>().unwrap() - 1];
            assert_eq!(name, ".copyrel");
            assert!(*addr <= foo.value && foo.value < addr + size);
            let line = readelf(&["-SW"], &ours).lines().find(|l| l.contains(" .copyrel ")).unwrap().to_string();
            assert!(line.trim_end().ends_with(&format!(" {align}")), "the section is {align}-aligned: {line}");
        }
    }
    for (relro, want) in [("-zrelro", true), ("-znorelro", false)] {
        let args = ["ro-main.o", "libro.so", "-no-pie", "-Wl,-rpath,$ORIGIN", &format!("-Wl,{relro}")];
        let ours = link(&tmp, true, &args, &format!("ours-ro{relro}"));
        assert_eq!(run(&ours), "read only writable\n");
        if testing_rivet() {
            let names: Vec<String> = sections(&ours).into_iter().map(|s| s.0).collect();
            assert_eq!(names.iter().any(|n| n == ".copyrel.rel.ro"), want, "{relro}: {names:?}");
            assert!(names.iter().any(|n| n == ".copyrel"), "{relro}: the writable copy: {names:?}");
            if want {
                let segments = readelf(&["-lW"], &ours);
                let relro_line = segments.lines().find(|l| l.contains("GNU_RELRO")).unwrap();
                let w: Vec<&str> = relro_line.split_whitespace().collect();
                let (start, size) =
                    (u64::from_str_radix(&w[2][2..], 16).unwrap(), u64::from_str_radix(&w[5][2..], 16).unwrap());
                let msg = symbols(&ours, ".dynsym")["msg"].value;
                assert!(start <= msg && msg + 100 <= start + size, "the read-only copy is in PT_GNU_RELRO");
            }
        }
    }
    tmp.finish();
}
