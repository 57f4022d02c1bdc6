//! Old and rare ELF conventions, linked by GNU ld (plain gcc) and by the linker under test (`gcc
//! -B`), the programs run and the outputs' facts compared: common symbols, plain and thread-local,
//! in `.common` / `.tls_common` (and kept `SHN_COMMON` by `-r`); `--retain-symbols-file`;
//! `--unique=PATTERN`; `.gnu.linkonce.*` sections; more output sections than the ELF header holds.
mod common;

use common::*;
use common::{link_with as link, stderr_text as stderr};
use std::path::Path;
use std::process::Command;

/// Writes `src` to `file` in the test's directory and compiles it with `gcc -c ARGS`.
fn compile(tmp: &TempDir, file: &str, src: &str, args: &[&str]) {
    std::fs::write(tmp.join(file), src).unwrap();
    let obj = format!("{}.o", file.rsplit_once('.').unwrap().0);
    must(Command::new("gcc").current_dir(&tmp.path).args(args).args(["-c", file, "-o", &obj]));
}

/// Links with GNU ld (`ours` false) or the linker under test; panics if the link fails.
fn must_link(tmp: &TempDir, ours: bool, args: &[&str], out: &str) {
    let o = link(tmp, ours, args, out);
    assert!(o.status.success(), "link of {out} failed:\n{}", stderr(&o));
}

fn run(exe: &Path) -> String {
    let out = must(Command::new(exe).current_dir(exe.parent().unwrap()));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// readelf's line for section `name` (`-SW`), split into fields from the name on.
fn section(file: &Path, name: &str) -> Option<Vec<String>> {
    let text = readelf(&["-SW"], file);
    let line = text.lines().find(|l| l.split_whitespace().any(|w| w == name))?;
    let fields: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    let at = fields.iter().position(|f| f == name)?;
    Some(fields[at..].to_vec())
}

/// readelf's `-sW` line for symbol `name` in `.symtab`, as fields.
fn symbol(file: &Path, name: &str) -> Option<Vec<String>> {
    let text = readelf(&["-sW"], file);
    let symtab = text.split("Symbol table '.symtab'").nth(1)?;
    let line = symtab.lines().find(|l| l.split_whitespace().last() == Some(name))?;
    Some(line.split_whitespace().map(str::to_string).collect())
}

const COMMONS_A: &str = "int foo; int bar; int baz = 42; long big[100];\n";
const COMMONS_B: &str = "#include <stdio.h>\n\
    #include <pthread.h>\n\
    int foo; int bar = 5; int baz; long big[100];\n\
    extern _Thread_local int tfoo; extern _Thread_local long tbar;\n\
    _Thread_local int tinit = 7; _Thread_local int tzero;\n\
    static void *thread(void *p) { tfoo += 2; tbar += 3; return (void *)(long)(tfoo + tbar + tinit + tzero); }\n\
    int main(void) {\n\
      tfoo = 5; tbar = 6; big[99] = 1;\n\
      pthread_t t; void *r; pthread_create(&t, 0, thread, 0); pthread_join(t, &r);\n\
      printf(\"%d %d %d %d %ld %ld %d %ld\\n\", foo, bar, baz, tfoo, tbar, (long)r, tinit, big[99]);\n\
      return 0;\n\
    }\n";
/// Thread-local commons as `.tls_common` makes them (STT_TLS, SHN_COMMON), GCC's `-fcommon` for
/// thread-locals in older versions.
const TLS_COMMONS: &str = ".globl tfoo\n.tls_common tfoo,4,4\n.globl tbar\n.tls_common tbar,8,8\n\
    .section .note.GNU-stack,\"\",@progbits\n";

#[test]
fn common_symbols_get_sections_of_their_own_and_thread_local_ones_stay_in_the_tls_block() {
    let Some(tmp) = gcc_readelf_tmp("commons") else { return };
    compile(&tmp, "a.c", COMMONS_A, &["-fcommon"]);
    compile(&tmp, "b.c", COMMONS_B, &["-fcommon"]);
    compile(&tmp, "t.s", TLS_COMMONS, &[]);
    let args = ["a.o", "b.o", "t.o", "-pthread"];
    must_link(&tmp, false, &args, "gnu");
    must_link(&tmp, true, &args, "ours");
    let expected = "0 5 42 5 6 12 7 1\n";
    assert_eq!(run(&tmp.join("gnu")), expected);
    assert_eq!(run(&tmp.join("ours")), expected);
    let ours = tmp.join("ours");
    // GNU ld puts them at the end of .bss / .tbss; the linker under test in sections of their own
    // (mold's names), zero-filled, writable, the thread-local one in the TLS segment.
    let common = section(&ours, ".common").expect("a .common section");
    assert_eq!((common[1].as_str(), common[6].as_str()), ("NOBITS", "WA"), "{common:?}");
    let tls = section(&ours, ".tls_common").expect("a .tls_common section");
    assert_eq!((tls[1].as_str(), tls[6].as_str()), ("NOBITS", "WAT"), "{tls:?}");
    let segments = readelf(&["-lW"], &ours);
    let tls_seg = segments.lines().find(|l| l.trim_start().starts_with("TLS")).expect("a TLS segment");
    let f: Vec<&str> = tls_seg.split_whitespace().collect();
    let (start, memsz) = (u64::from_str_radix(&f[2][2..], 16).unwrap(), u64::from_str_radix(&f[5][2..], 16).unwrap());
    let at = u64::from_str_radix(&tls[2], 16).unwrap();
    let size = u64::from_str_radix(&tls[4], 16).unwrap();
    assert!(at >= start && at + size <= start + memsz, ".tls_common outside the TLS segment:\n{segments}");
    // The symbols: in those sections, typed as objects (not STT_COMMON), TLS ones with offsets
    // inside the block.
    let index = |s: &[String]| {
        readelf(&["-SW"], &ours)
            .lines()
            .find(|l| l.contains(&format!(" {} ", s[0])))
            .map(|l| l.split(']').next().unwrap().trim_start_matches([' ', '[']).trim().to_string())
    };
    let foo = symbol(&ours, "foo").unwrap();
    assert_eq!((foo[3].as_str(), Some(foo[6].clone())), ("OBJECT", index(&common)), "{foo:?}");
    let tfoo = symbol(&ours, "tfoo").unwrap();
    assert_eq!((tfoo[3].as_str(), Some(tfoo[6].clone())), ("TLS", index(&tls)), "{tfoo:?}");
    assert!(u64::from_str_radix(&tfoo[1], 16).unwrap() < memsz, "{tfoo:?}");
    // A definition beats a common: bar and baz are in .data.
    assert_ne!(Some(symbol(&ours, "baz").unwrap()[6].clone()), index(&common));
    tmp.finish();
}

#[test]
fn common_symbols_in_a_shared_library_and_a_static_executable() {
    let Some(tmp) = gcc_readelf_tmp("commons-dso") else { return };
    compile(&tmp, "a.c", COMMONS_A, &["-fcommon", "-fPIC"]);
    compile(&tmp, "b.c", COMMONS_B, &["-fcommon"]);
    // The executable's own definitions, not commons, beside the library's commons (which of a
    // common and a library's definition wins is where GNU ld and lld differ).
    std::fs::copy(tmp.join("b.c"), tmp.join("main.c")).unwrap();
    compile(&tmp, "main.c", COMMONS_B, &["-fno-common"]);
    compile(&tmp, "t.s", TLS_COMMONS, &[]);
    for ours in [false, true] {
        let (lib, exe, st) =
            if ours { ("libours.so", "ours", "ours-static") } else { ("libgnu.so", "gnu", "gnu-static") };
        must_link(&tmp, ours, &["-shared", "a.o", "t.o"], lib);
        must_link(&tmp, ours, &["main.o", lib, "-pthread", "-Wl,-rpath,$ORIGIN"], exe);
        must_link(&tmp, ours, &["-static", "a.o", "b.o", "t.o", "-pthread"], st);
        assert_eq!(run(&tmp.join(exe)), "0 5 0 5 6 12 7 1\n", "{exe}");
        assert_eq!(run(&tmp.join(st)), "0 5 42 5 6 12 7 1\n", "{st}");
    }
    // The library exports its commons from the sections that hold them.
    let dynsym = readelf(&["--dyn-syms", "-W"], &tmp.join("libours.so"));
    let line = dynsym.lines().find(|l| l.ends_with(" tfoo")).expect("tfoo exported");
    assert!(line.contains(" TLS ") && line.contains(" GLOBAL "), "{line}");
    tmp.finish();
}

#[test]
fn relocatable_output_keeps_common_symbols_common_unless_told_to_allocate_them() {
    let Some(tmp) = gcc_readelf_tmp("commons-r") else { return };
    compile(&tmp, "a.c", COMMONS_A, &["-fcommon"]);
    compile(&tmp, "t.s", TLS_COMMONS, &[]);
    for ours in [false, true] {
        let out = if ours { "ours.o" } else { "gnu.o" };
        must_link(&tmp, ours, &["-nostdlib", "-r", "a.o", "t.o"], out);
        for name in ["foo", "tfoo"] {
            let s = symbol(&tmp.join(out), name).unwrap();
            assert_eq!(s[6], "COM", "{out}: {s:?}");
        }
        assert!(section(&tmp.join(out), ".common").is_none(), "{out}");
    }
    tmp.finish();
}

/// The `.symtab` entries readelf shows as (bind, name), sorted, and the `.dynsym` names.
fn tables(file: &Path) -> (Vec<String>, Vec<String>) {
    let text = readelf(&["-sW"], file);
    let entries = |table: &str| -> Vec<String> {
        let Some(part) = text.split(&format!("Symbol table '{table}'")).nth(1) else { return Vec::new() };
        let part = part.split("Symbol table '").next().unwrap();
        let mut v: Vec<String> = part
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() >= 8 && f[0].ends_with(':') && f[0] != "Num:").then(|| format!("{} {}", f[4], f[7]))
            })
            .collect();
        v.sort();
        v
    };
    (entries(".symtab"), entries(".dynsym"))
}

#[test]
fn retain_symbols_file_keeps_only_the_listed_globals_in_symtab_and_leaves_dynsym_alone() {
    let Some(tmp) = gcc_readelf_tmp("retain") else { return };
    let src = "#include <stdio.h>\n\
        static int helper(void) { return 1; }\n\
        int keep_a(void) { return helper(); }\n\
        int keep_b = 2;\n\
        int drop_c(void) { return 3; }\n\
        __attribute__((visibility(\"hidden\"))) int hidden_d(void) { return 4; }\n\
        int main(void) { printf(\"%d %d %d %d\\n\", keep_a(), keep_b, drop_c(), hidden_d()); return 0; }\n";
    compile(&tmp, "a.c", src, &["-fPIC"]);
    // Blanks around a name and empty lines are no names; a listed name that nothing defines and
    // a local's name keep nothing.
    std::fs::write(tmp.join("keep.txt"), "keep_a\n  keep_b \n\nhelper\nnot_defined\nhidden_d\n").unwrap();
    for ours in [false, true] {
        let (exe, lib) = if ours { ("ours", "libours.so") } else { ("gnu", "libgnu.so") };
        must_link(&tmp, ours, &["a.o", "-rdynamic", "-Wl,--retain-symbols-file=keep.txt"], exe);
        assert_eq!(run(&tmp.join(exe)), "1 2 3 4\n");
        must_link(&tmp, ours, &["-shared", "a.o", "-Wl,--retain-symbols-file", "-Wl,keep.txt"], lib);
    }
    for (gnu, ours) in [("gnu", "ours"), ("libgnu.so", "libours.so")] {
        let (g_symtab, g_dynsym) = tables(&tmp.join(gnu));
        let (o_symtab, o_dynsym) = tables(&tmp.join(ours));
        // .dynsym: what it would be without the option (every exported definition); GNU ld adds
        // its version references, so compare the names defined here.
        let ours_names = ["keep_a", "keep_b", "drop_c", "main"];
        let pick = |v: &[String]| -> Vec<String> {
            v.iter().filter(|e| ours_names.iter().any(|n| e.ends_with(&format!(" {n}")))).cloned().collect()
        };
        assert_eq!(pick(&o_dynsym), pick(&g_dynsym), "{ours}: .dynsym");
        assert!(o_dynsym.iter().any(|e| e == "GLOBAL drop_c"), "{ours}: {o_dynsym:?}");
        // .symtab: the listed globals (GNU ld's), and no local symbol at all (GNU ld also keeps
        // the listed local `helper`).
        let globals = |v: &[String]| -> Vec<String> { v.iter().filter(|e| !e.starts_with("LOCAL")).cloned().collect() };
        assert_eq!(globals(&o_symtab), globals(&g_symtab), "{ours}: .symtab");
        assert_eq!(globals(&o_symtab), ["GLOBAL keep_a", "GLOBAL keep_b"], "{ours}");
        let locals: Vec<&String> = o_symtab.iter().filter(|e| e.starts_with("LOCAL")).collect();
        assert_eq!(locals, ["LOCAL hidden_d"], "{ours}: {o_symtab:?} (GNU ld: {g_symtab:?})");
    }
    let missing = link(&tmp, true, &["a.o", "-Wl,--retain-symbols-file=nope.txt"], "x");
    assert!(!missing.status.success() && !tmp.join("x").exists());
    if testing_rivet() {
        assert!(stderr(&missing).contains("nope.txt"), "{}", stderr(&missing));
    }
    tmp.finish();
}

#[test]
fn unique_gives_each_matching_input_section_an_output_section_of_its_own() {
    let Some(tmp) = gcc_readelf_tmp("unique") else { return };
    let asm = |letter: &str| {
        format!(
            ".section .data.foo.1,\"aw\",@progbits\n.ascii \"{letter}1\"\n\
             .section .data.foo.2,\"aw\",@progbits\n.ascii \"{letter}2\"\n\
             .section .data.bar.1,\"aw\",@progbits\n.ascii \"{letter}3\"\n\
             .section .note.GNU-stack,\"\",@progbits\n"
        )
    };
    compile(&tmp, "a.s", &asm("a"), &[]);
    compile(&tmp, "b.s", &asm("b"), &[]);
    compile(&tmp, "main.c", "int main(void) { return 0; }\n", &[]);
    for ours in [false, true] {
        let out = if ours { "ours" } else { "gnu" };
        // GNU ld takes the single-dash spelling too.
        must_link(&tmp, ours, &["main.o", "a.o", "b.o", "-Wl,-unique=*foo*", "-Wl,--unique=.data.bar.?"], out);
        assert_eq!(run(&tmp.join(out)), "");
    }
    let names = |f: &str| {
        let mut v: Vec<String> = section_names(&tmp.join(f)).into_iter().filter(|n| n.starts_with(".data")).collect();
        v.sort();
        v
    };
    // One output section per input section: two files, two of each name; nothing else merged.
    let expected = [".data", ".data.bar.1", ".data.bar.1", ".data.foo.1", ".data.foo.1", ".data.foo.2", ".data.foo.2"];
    assert_eq!(names("gnu"), expected);
    assert_eq!(names("ours"), expected);
    let hex = readelf(&["-x", ".data.foo.2"], &tmp.join("ours"));
    assert!(hex.contains("a2") || hex.contains("b2"), "{hex}");
    if testing_rivet() {
        let bare = link(&tmp, true, &["main.o", "a.o", "-Wl,--unique"], "x");
        assert!(!bare.status.success() && stderr(&bare).contains("--unique=PATTERN"), "{}", stderr(&bare));
        std::fs::write(tmp.join("s.lds"), "SECTIONS { .data : { *(.data*) } }\n").unwrap();
        let scripted = link(&tmp, true, &["main.o", "a.o", "-Wl,--unique=*foo*", "-Wl,-T,s.lds"], "x");
        assert!(!scripted.status.success() && stderr(&scripted).contains("--unique=*foo*"), "{}", stderr(&scripted));
    }
    tmp.finish();
}

/// Two copies of one function and one datum in `.gnu.linkonce.*` sections, each copy telling
/// which file it came from.
fn linkonce_asm(n: u32) -> String {
    format!(
        ".section .gnu.linkonce.t.lo_func,\"ax\",@progbits\n.globl lo_func\n.type lo_func,@function\n\
         lo_func:\n  mov ${n}, %eax\n  ret\n\
         .section .gnu.linkonce.d.lo_data,\"aw\",@progbits\n.globl lo_data\n.type lo_data,@object\n\
         .size lo_data,4\nlo_data:\n  .long {n}0\n\
         .section .gnu.linkonce.r.lo_const,\"a\",@progbits\n.globl lo_const\nlo_const:\n  .long {n}00\n\
         .section .note.GNU-stack,\"\",@progbits\n"
    )
}

#[test]
fn gnu_linkonce_sections_keep_the_first_of_each_name_in_the_usual_output_sections() {
    let Some(tmp) = gcc_readelf_tmp("linkonce") else { return };
    compile(&tmp, "one.s", &linkonce_asm(1), &[]);
    compile(&tmp, "two.s", &linkonce_asm(2), &[]);
    let main = "#include <stdio.h>\nint lo_func(void); extern int lo_data; extern const int lo_const;\n\
        int main(void) { printf(\"%d %d %d\\n\", lo_func(), lo_data, lo_const); return 0; }\n";
    compile(&tmp, "main.c", main, &[]);
    for (order, expected) in [(["one.o", "two.o"], "1 10 100\n"), (["two.o", "one.o"], "2 20 200\n")] {
        for ours in [false, true] {
            let out = if ours { "ours" } else { "gnu" };
            must_link(&tmp, ours, &["main.o", order[0], order[1]], out);
            assert_eq!(run(&tmp.join(out)), expected, "{out} {order:?}");
            // No section keeps the old name: code in .text, data in .data, constants in .rodata.
            let names = section_names(&tmp.join(out));
            assert!(!names.iter().any(|n| n.contains("linkonce")), "{out}: {names:?}");
            let text = section(&tmp.join(out), ".text").unwrap();
            let func = symbol(&tmp.join(out), "lo_func").unwrap();
            let (start, size) =
                (u64::from_str_radix(&text[2], 16).unwrap(), u64::from_str_radix(&text[4], 16).unwrap());
            let at = u64::from_str_radix(&func[1], 16).unwrap();
            assert!((start..start + size).contains(&at), "{out}: lo_func outside .text");
        }
    }
    tmp.finish();
}

/// glibc < 2.32's i386 crti.o defined `__x86.get_pc_thunk.bx` in a linkonce section beside the
/// COMDAT copies (another signature) of other objects: that section is dropped, as lld and mold
/// drop it, so the COMDAT copy is the definition (GNU ld reports a duplicate).
#[test]
fn the_old_crti_pc_thunk_linkonce_section_gives_way_to_the_comdat_copy() {
    let Some(tmp) = gcc_readelf_tmp("linkonce-thunk") else { return };
    compile(
        &tmp,
        "a.s",
        ".globl __x86.get_pc_thunk.bx\n.section .gnu.linkonce.t.__x86.get_pc_thunk.bx,\"ax\"\n\
         __x86.get_pc_thunk.bx:\n  mov $1, %eax\n  ret\n.section .note.GNU-stack,\"\",@progbits\n",
        &[],
    );
    compile(
        &tmp,
        "b.s",
        ".globl __x86.get_pc_thunk.bx\n.section .text.__x86.get_pc_thunk.bx,\"axG\",@progbits,foobar,comdat\n\
         __x86.get_pc_thunk.bx:\n  mov $2, %eax\n  ret\n.section .note.GNU-stack,\"\",@progbits\n",
        &[],
    );
    let main = "#include <stdio.h>\nint thunk(void) __asm__(\"__x86.get_pc_thunk.bx\");\n\
        int main(void) { printf(\"%d\\n\", thunk()); return 0; }\n";
    compile(&tmp, "main.c", main, &[]);
    must_link(&tmp, true, &["main.o", "a.o", "b.o"], "ours");
    assert_eq!(run(&tmp.join("ours")), "2\n");
    tmp.finish();
}

/// More output sections than ELF's 16-bit header fields hold without the extended numbering: a
/// clear error and no output file, never a header with a truncated count (rivet's limit: GNU ld
/// and lld write the extended numbering, so this is checked of rivet only).
#[test]
fn too_many_output_sections_is_an_error_naming_the_count() {
    if !testing_rivet() {
        return;
    }
    let Some(tmp) = gcc_readelf_tmp("many-sections") else { return };
    let mut asm = String::with_capacity(70_000 * 48);
    for i in 0..70_000 {
        asm.push_str(&format!(".globl foo{i}\n.section .foo{i},\"aw\"\nfoo{i}: .word 0\n"));
    }
    asm.push_str(".section .note.GNU-stack,\"\",@progbits\n");
    compile(&tmp, "a.s", &asm, &[]);
    let o = link(&tmp, true, &["-shared", "a.o"], "c.so");
    assert!(!o.status.success(), "linked 70000 output sections");
    assert!(!tmp.join("c.so").exists());
    let text = stderr(&o);
    assert!(text.contains("c.so: too many output sections: 700") && text.contains("65279"), "{text}");
    tmp.finish();
}
