//! AArch64 links: C and C++ programs compiled by the Debian cross compiler
//! (`aarch64-linux-gnu-gcc`/`g++`), linked by the cross GNU ld (plain cross gcc) and by the linker
//! under test (`-B`), run under `qemu-aarch64` with the cross sysroot: both print the same and
//! exit alike, and a few `readelf` facts agree (segments, dynamic tags, dynamic relocation
//! types). Covered: PIE, non-PIE, static and static-PIE executables, a shared library with TLS
//! (descriptors in the library, relaxed in the executable), function pointers, PLT calls and a
//! copied variable, IFUNCs, variant-PCS functions, GOT load relaxation, a C++ exception thrown through a shared object, `dlopen`, library
//! search past another machine's library, the Cortex-A53 erratum 843419 workaround (which the
//! cross gcc asks for by default), range-extension thunks, a Rust program, LTO, `-r`, a separate debug file, `--gdb-index`, RELR, an
//! inserted script section, BTI and PAC (`-mbranch-protection=standard` code, the
//! property notes, `-z force-bti` enforced by qemu, `-z pac-plt`, the guarded PLT against lld's),
//! and the errors of the target's checks. Skipped (with a message) when the cross compiler, its
//! binutils or qemu is missing (Debian packages gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu,
//! binutils-aarch64-linux-gnu, qemu-user; the PLT tests need llvm-objdump-19, and compare with
//! ld.lld-19 when it is installed).
mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output};

fn setup(name: &str) -> Option<TempDir> {
    for tool in ["aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "aarch64-linux-gnu-readelf", "qemu-aarch64"] {
        if !have(tool) {
            eprintln!("skipped: {tool} missing");
            return None;
        }
    }
    Some(TempDir::new(&format!("aarch64-{name}")))
}

/// `setup` for a test that reads PLTs (`plt_listing`) with `llvm-objdump-19`.
fn setup_disassembling(name: &str) -> Option<TempDir> {
    if !have("llvm-objdump-19") {
        eprintln!("skipped: llvm-objdump-19 missing");
        return None;
    }
    setup(name)
}

/// `aarch64-linux-gnu-{gcc,g++} ARGS -o OUT` in the test's directory, linked by the cross GNU ld
/// (`ours` false) or by the linker under test; the output, whatever the exit status.
fn cc(tmp: &TempDir, cxx: bool, ours: bool, args: &[&str], out: &str) -> Output {
    let mut cmd = Command::new(if cxx { "aarch64-linux-gnu-g++" } else { "aarch64-linux-gnu-gcc" });
    cmd.current_dir(&tmp.path);
    if ours {
        cmd.arg("-B").arg(linker_dir(tmp));
    }
    cmd.args(args).arg("-o").arg(out).output().unwrap()
}

fn cc_ok(tmp: &TempDir, cxx: bool, ours: bool, args: &[&str], out: &str) {
    let o = cc(tmp, cxx, ours, args, out);
    assert!(o.status.success(), "linking {out} failed: {}", stderr_text(&o));
}

/// Runs an AArch64 program under qemu: (stdout, exit code).
fn run(exe: &Path) -> (String, i32) {
    let (out, timed_out) = run_with_timeout(
        Command::new("qemu-aarch64").args(["-L", AARCH64_SYSROOT]).arg(exe).current_dir(exe.parent().unwrap()),
        b"",
        std::time::Duration::from_secs(60),
    );
    assert!(!timed_out, "{} timed out", exe.display());
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code().unwrap_or(-1))
}

fn readelf(args: &[&str], file: &Path) -> String {
    String::from_utf8_lossy(&must(Command::new("aarch64-linux-gnu-readelf").args(args).arg(file)).stdout).into_owned()
}

/// Links `args` with both linkers into `NAME-gnu` and `NAME-ours`, runs both and checks they
/// print and exit alike (and as `want`, when given). Gives both paths.
fn both(tmp: &TempDir, cxx: bool, args: &[&str], name: &str, want: Option<(&str, i32)>) -> (String, String) {
    let (gnu, ours) = (format!("{name}-gnu"), format!("{name}-ours"));
    cc_ok(tmp, cxx, false, args, &gnu);
    cc_ok(tmp, cxx, true, args, &ours);
    let expected = run(&tmp.join(&gnu));
    let got = run(&tmp.join(&ours));
    assert_eq!(got, expected, "{name}: the linker under test's program behaves otherwise than GNU ld's");
    if let Some((out, code)) = want {
        assert_eq!(got, (out.to_string(), code), "{name}");
    }
    (tmp.join(&gnu).display().to_string(), tmp.join(&ours).display().to_string())
}

/// The program headers' types, flags and alignments, in order.
fn segments(file: &str) -> Vec<String> {
    readelf(&["-lW"], Path::new(file))
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<&str>>())
        .filter(|w| w.len() >= 8 && w[0].starts_with(|c: char| c.is_ascii_uppercase()) && w[1].starts_with("0x"))
        .map(|w| {
            // Type Offset VirtAddr PhysAddr FileSiz MemSiz Flg... Align
            format!("{} {} {}", w[0], w[6..w.len() - 1].join(""), w[w.len() - 1])
        })
        .collect()
}

/// The dynamic tags' names.
fn dynamic_tags(file: &str) -> std::collections::BTreeSet<String> {
    readelf(&["-dW"], Path::new(file))
        .lines()
        .filter_map(|l| Some(l.split_once('(')?.1.split_once(')')?.0.to_string()))
        .collect()
}

/// The dynamic relocations' types.
fn reloc_types(file: &str) -> std::collections::BTreeSet<String> {
    readelf(&["-rW"], Path::new(file))
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).filter(|t| t.starts_with("R_AARCH64_")).map(str::to_string))
        .collect()
}

const HELLO: &str = "#include <stdio.h>\nint main(void) { printf(\"hello %d\\n\", 42); return 3; }\n";

#[test]
fn hello_in_every_executable_kind() {
    let Some(tmp) = setup("hello") else { return };
    std::fs::write(tmp.join("hello.c"), HELLO).unwrap();
    for (kind, flags) in [
        ("pie", &[][..]),
        ("nopie", &["-fno-pie", "-no-pie"][..]),
        ("static", &["-static"]),
        ("spie", &["-static-pie"]),
    ] {
        let mut args = vec!["hello.c"];
        args.extend(flags);
        let (gnu, ours) = both(&tmp, false, &args, kind, Some(("hello 42\n", 3)));
        // The same kinds of program headers, every PT_LOAD 64 KiB-aligned. The layout is lld's:
        // read-only data in read-only PT_LOADs (GNU ld puts it in the executable one), the
        // code in one PT_LOAD, RELRO in a read-write PT_LOAD of its own.
        let (mine, theirs) = (segments(&ours), segments(&gnu));
        let kinds = |v: &[String]| {
            v.iter().map(|s| s.split(' ').next().unwrap().to_string()).collect::<std::collections::BTreeSet<_>>()
        };
        assert_eq!(kinds(&mine), kinds(&theirs), "{kind}: {mine:?} {theirs:?}");
        let loads: Vec<&String> = mine.iter().filter(|s| s.starts_with("LOAD")).collect();
        assert_eq!(loads.iter().filter(|l| l.contains(" RE ")).count(), 1, "{kind}: {mine:?}");
        assert_eq!(loads[0], "LOAD R 0x10000", "{kind}: {mine:?}");
        assert!(loads.iter().all(|l| l.ends_with(" 0x10000")), "{kind}: {mine:?}");
        let h = readelf(&["-hW"], Path::new(&ours));
        assert!(h.contains("AArch64") && h.contains("ELF64") && h.contains("little endian"), "{h}");
    }
    tmp.finish();
}

const LIB: &str = "\
__thread int libv = 100;
static __thread int priv = 9;
int lib_get(void) { return libv + priv; }
int counter = 1;
int bump(int x) { counter += x; return counter; }
";

const TLS_MAIN: &str = "\
#include <stdio.h>
#include <pthread.h>
__thread int a = 5;
__thread long b[4] = {1, 2, 3, 4};
static __thread int c;
extern __thread int libv;
int lib_get(void);
static void *run(void *p) {
  a += 1; c = 7; b[2] += (long)p; libv += 3;
  return (void *)(long)(a + c + b[2] + libv + lib_get());
}
int main(void) {
  pthread_t t; void *r;
  pthread_create(&t, 0, run, (void *)10);
  pthread_join(t, &r);
  printf(\"%d %d %ld %ld %d %d\\n\", a, c, b[2], (long)r, libv, lib_get());
  return 0;
}
";

#[test]
fn thread_locals_in_an_executable_and_a_shared_library() {
    let Some(tmp) = setup("tls") else { return };
    std::fs::write(tmp.join("lib.c"), LIB).unwrap();
    std::fs::write(tmp.join("main.c"), TLS_MAIN).unwrap();
    // The library by each linker, each executable against its own linker's library.
    cc_ok(&tmp, false, false, &["-fPIC", "-shared", "lib.c"], "libgnu.so");
    cc_ok(&tmp, false, true, &["-fPIC", "-shared", "lib.c"], "libours.so");
    let rpath = format!("-Wl,-rpath,{}", tmp.path.display());
    for (kind, pie) in [("pie", &["-pie"][..]), ("nopie", &["-fno-pie", "-no-pie"][..])] {
        let gnu = format!("{kind}-gnu");
        let ours = format!("{kind}-ours");
        let args = |lib| [pie, &["main.c", lib, &rpath, "-lpthread"]].concat();
        cc_ok(&tmp, false, false, &args("./libgnu.so"), &gnu);
        cc_ok(&tmp, false, true, &args("./libours.so"), &ours);
        let want = ("5 0 3 241 100 109\n".to_string(), 0);
        assert_eq!(run(&tmp.join(&gnu)), want, "{kind} by GNU ld");
        assert_eq!(run(&tmp.join(&ours)), want, "{kind}");
        // The executable's own TLS accesses are relaxed; the library's variable is reached
        // through a TPREL GOT entry.
        let relocs = reloc_types(&tmp.join(&ours).display().to_string());
        assert!(relocs.contains("R_AARCH64_TLS_TPREL64"), "{relocs:?}");
        assert!(!relocs.contains("R_AARCH64_TLSDESC"), "{relocs:?}");
    }
    // A shared object keeps its descriptors.
    let lib = tmp.join("libours.so").display().to_string();
    assert!(reloc_types(&lib).contains("R_AARCH64_TLSDESC"), "{:?}", reloc_types(&lib));
    for tag in ["PLTGOT", "JMPREL", "RELA", "RELACOUNT", "GNU_HASH", "INIT_ARRAY", "FINI_ARRAY"] {
        assert!(dynamic_tags(&lib).contains(tag), "{tag}: {:?}", dynamic_tags(&lib));
    }
    // And a static link of both.
    both(&tmp, false, &["-static", "main.c", "lib.c", "-lpthread"], "static", Some(("5 0 3 241 100 109\n", 0)));
    tmp.finish();
}

const FP_MAIN: &str = "\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int bump(int);
extern int counter;
int (*fp)(int) = bump;
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int main(void) {
  int v[5] = {5, 3, 1, 4, 2};
  qsort(v, 5, sizeof v[0], cmp);
  int (*p)(const char *) = puts;
  p(\"via pointer\");
  fp(3);
  bump(4);
  printf(\"%d %d %d counter=%d %zu\\n\", v[0], v[4], fp == bump, counter, strlen(\"abc\"));
  return counter;
}
";

#[test]
fn plt_calls_function_pointers_and_copied_data() {
    let Some(tmp) = setup("plt") else { return };
    std::fs::write(tmp.join("lib.c"), LIB).unwrap();
    std::fs::write(tmp.join("main.c"), FP_MAIN).unwrap();
    cc_ok(&tmp, false, false, &["-fPIC", "-shared", "lib.c"], "libl.so");
    let rpath = format!("-Wl,-rpath,{}", tmp.path.display());
    let want = Some(("via pointer\n1 5 1 counter=8 3\n", 8));
    let (_, ours) = both(&tmp, false, &["-fno-pie", "-no-pie", "main.c", "./libl.so", &rpath], "nopie", want);
    // A position-dependent executable copies the library's variable and gives `bump` a
    // canonical PLT entry; both call through the lazy PLT.
    for t in ["R_AARCH64_COPY", "R_AARCH64_JUMP_SLOT"] {
        assert!(reloc_types(&ours).contains(t), "{t}: {:?}", reloc_types(&ours));
    }
    for tag in ["NEEDED", "PLTGOT", "JMPREL", "PLTREL", "PLTRELSZ", "RELA", "GNU_HASH", "SYMTAB", "STRTAB", "DEBUG"] {
        assert!(dynamic_tags(&ours).contains(tag), "{tag}: {:?}", dynamic_tags(&ours));
    }
    assert!(!dynamic_tags(&ours).iter().any(|t| t.starts_with("AARCH64_")), "no AArch64 tags are needed");
    let (_, ours) = both(&tmp, false, &["-pie", "main.c", "./libl.so", &rpath], "pie", want);
    for t in ["R_AARCH64_RELATIVE", "R_AARCH64_GLOB_DAT", "R_AARCH64_JUMP_SLOT"] {
        assert!(reloc_types(&ours).contains(t), "{t}: {:?}", reloc_types(&ours));
    }
    tmp.finish();
}

const IFUNC: &str = "\
#include <stdio.h>
static int one(void) { return 1; }
static int two(void) { return 2; }
static int (*resolve(void))(void) { return getenv(\"NOPE\") ? one : two; }
int pick(void) __attribute__((ifunc(\"resolve\")));
int (*taken)(void) = pick;
int main(void) { printf(\"%d %d\\n\", pick(), taken()); return pick(); }
";

#[test]
fn ifuncs_dynamic_and_static() {
    let Some(tmp) = setup("ifunc") else { return };
    std::fs::write(tmp.join("main.c"), format!("#include <stdlib.h>\n{IFUNC}")).unwrap();
    // (GNU ld 2.40's PIE crashes under qemu here: the outputs are checked for what they print.)
    for (kind, flags) in [("pie", &["-pie"][..]), ("nopie", &["-fno-pie", "-no-pie"][..]), ("static", &["-static"])] {
        let ours = format!("{kind}-ours");
        cc_ok(&tmp, false, true, &[flags, &["main.c"]].concat(), &ours);
        assert_eq!(run(&tmp.join(&ours)), ("2 2\n".to_string(), 2), "{kind}");
        let relocs = reloc_types(&tmp.join(&ours).display().to_string());
        assert!(relocs.contains("R_AARCH64_IRELATIVE"), "{kind}: {relocs:?}");
    }
    tmp.finish();
}

const THROWER: &str = "\
#include <stdexcept>
#include <string>
void thrower(int n) { if (n > 2) throw std::runtime_error(\"too big: \" + std::to_string(n)); }
";

const CATCHER: &str = "\
#include <cstdio>
#include <stdexcept>
void thrower(int n);
int main() {
  int caught = 0;
  for (int i = 0; i < 5; i++) {
    try { thrower(i); } catch (const std::exception &e) { std::printf(\"%s\\n\", e.what()); caught++; }
  }
  return caught;
}
";

#[test]
fn cxx_exception_across_a_shared_object() {
    let Some(tmp) = setup("cxx") else { return };
    std::fs::write(tmp.join("thrower.cc"), THROWER).unwrap();
    std::fs::write(tmp.join("catcher.cc"), CATCHER).unwrap();
    cc_ok(&tmp, true, true, &["-fPIC", "-shared", "thrower.cc"], "libthrow.so");
    let rpath = format!("-Wl,-rpath,{}", tmp.path.display());
    both(&tmp, true, &["catcher.cc", "./libthrow.so", &rpath], "cxx", Some(("too big: 3\ntoo big: 4\n", 2)));
    both(&tmp, true, &["-static", "catcher.cc", "thrower.cc"], "cxx-static", Some(("too big: 3\ntoo big: 4\n", 2)));
    tmp.finish();
}

#[test]
fn dlopen_of_a_shared_object() {
    let Some(tmp) = setup("dlopen") else { return };
    std::fs::write(tmp.join("lib.c"), LIB).unwrap();
    let main = format!(
        "#include <stdio.h>\n#include <dlfcn.h>\nint main(void) {{\n\
         void *h = dlopen(\"{}/libdl-ours.so\", RTLD_NOW);\n\
         if (!h) {{ printf(\"%s\\n\", dlerror()); return 1; }}\n\
         int (*bump)(int) = (int (*)(int))dlsym(h, \"bump\");\n\
         int (*get)(void) = (int (*)(void))dlsym(h, \"lib_get\");\n\
         printf(\"%d %d\\n\", bump(41), get());\n return 0;\n}}\n",
        tmp.path.display()
    );
    std::fs::write(tmp.join("main.c"), main).unwrap();
    cc_ok(&tmp, false, true, &["-fPIC", "-shared", "lib.c"], "libdl-ours.so");
    both(&tmp, false, &["main.c", "-ldl"], "dlopen", Some(("42 109\n", 0)));
    let lib = tmp.join("libdl-ours.so").display().to_string();
    let seg = segments(&lib);
    assert!(seg.iter().any(|s| s.starts_with("LOAD RE 0x10000")), "{seg:?}");
    assert!(seg.iter().any(|s| s.starts_with("GNU_RELRO")), "{seg:?}");
    tmp.finish();
}

/// A `-l` search skips a library for another machine, as GNU ld does, and `-t` says so.
#[test]
fn library_search_skips_another_machines_library() {
    let Some(tmp) = setup("search") else { return };
    if !have("gcc") {
        eprintln!("skipped: gcc missing");
        return;
    }
    std::fs::create_dir_all(tmp.join("x86")).unwrap();
    std::fs::create_dir_all(tmp.join("arm")).unwrap();
    std::fs::write(tmp.join("f.c"), "int f(void) { return 7; }\n").unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "f.c", "-o", "x86/f.o"]));
    must(Command::new("ar").current_dir(&tmp.path).args(["rc", "x86/libf.a", "x86/f.o"]));
    must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(["-c", "f.c", "-o", "arm/f.o"]));
    must(Command::new("aarch64-linux-gnu-ar").current_dir(&tmp.path).args(["rc", "arm/libf.a", "arm/f.o"]));
    std::fs::write(tmp.join("main.c"), "int f(void);\nint main(void) { return f(); }\n").unwrap();
    both(&tmp, false, &["main.c", "-Lx86", "-Larm", "-lf"], "search", Some(("", 7)));
    // -t says which it skipped, in GNU ld's words.
    let o = cc(&tmp, false, true, &["main.c", "-Lx86", "-Larm", "-lf", "-Wl,-t"], "traced");
    assert!(o.status.success(), "{}", stderr_text(&o));
    if testing_rivet() {
        let e = stderr_text(&o);
        assert!(e.contains("skipping incompatible x86/libf.a when searching for -lf"), "{e}");
    }
    tmp.finish();
}

/// Two erratum 843419 sequences (an `adrp` at 0xff8 with the load based on it two instructions
/// later; at 0xffc with an instruction between), linked with `--fix-cortex-a53-843419` (the
/// cross gcc's default): both linkers rewrite each `adrp` as the `adr` of the same page, and the
/// program loads its data through them. Data in a code section that looks like a sequence (after
/// a `$d` mapping symbol) is left alone.
const ERRATUM: &str = "\
        .text
        .globl main
        .type main, %function
main:
        b t1
        .section .text.e1, \"ax\", %progbits
        .balign 4096
        .space 4096 - 8
t1:
        adrp x0, dat
        ldr x1, [sp, #0]
        ldr x0, [x0, :lo12:dat]
        b t2
        .section .text.e2, \"ax\", %progbits
        .balign 4096
        .space 4096 - 4
t2:
        adrp x2, dat
        str x3, [sp, #8]
        add x4, x4, #1
        ldr w0, [x2, :lo12:dat]
        ret
        .section .text.e3, \"ax\", %progbits
        .balign 4096
        .space 4096 - 8
t3:
        .word 0xb0000000, 0xf94003e1, 0xf9400400
        .section .fardata, \"aw\"
        .globl dat
dat:    .quad 42
        .section .note.GNU-stack, \"\", %progbits
";

/// The mnemonics of the `n` instructions from label `name` on, in `objdump -d`.
fn instructions(file: &Path, name: &str, n: usize) -> Vec<String> {
    let out = must(Command::new("aarch64-linux-gnu-objdump").arg("-d").arg(file));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.ends_with(&format!("<{name}>:"))).unwrap_or_else(|| panic!("{name}: {text}"));
    lines[at + 1..at + 1 + n].iter().map(|l| l.split('\t').nth(2).unwrap_or("").to_string()).collect()
}

/// The mnemonic of the first instruction after each label of `names` in `objdump -d`.
fn first_instructions(file: &Path, names: &[&str]) -> Vec<String> {
    let out = must(Command::new("aarch64-linux-gnu-objdump").arg("-d").arg(file));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    names
        .iter()
        .map(|n| {
            let at =
                lines.iter().position(|l| l.ends_with(&format!("<{n}>:"))).unwrap_or_else(|| panic!("{n}: {text}"));
            lines[at + 1].split('\t').nth(2).unwrap_or("").to_string()
        })
        .collect()
}

#[test]
fn cortex_a53_erratum_843419_sequences() {
    let Some(tmp) = setup("erratum") else { return };
    std::fs::write(tmp.join("e.s"), ERRATUM).unwrap();
    must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(["-c", "e.s"]));
    let (gnu, ours) = both(&tmp, false, &["-no-pie", "e.o"], "erratum", Some(("", 42)));
    for exe in [&gnu, &ours] {
        assert_eq!(first_instructions(Path::new(exe), &["t1", "t2", "t3"]), ["adr", "adr", ".word"], "{exe}");
    }
    // Without the option the sequences stay.
    cc_ok(&tmp, false, true, &["-mno-fix-cortex-a53-843419", "-no-pie", "e.o"], "kept");
    assert_eq!(first_instructions(&tmp.join("kept"), &["t1", "t2"]), ["adrp", "adrp"]);
    // Data 256 MiB away: an adr cannot reach its page. The sequence's last load moves to a patch
    // (lld's patches, GNU ld's veneers) that branches back, and the program runs as GNU ld's.
    let args = ["-no-pie", "e.o", "-Wl,-Ttext=0x410000", "-Wl,--section-start=.fardata=0x10400000"];
    let (gnu, ours) = both(&tmp, false, &args, "far", Some(("", 42)));
    for exe in [&gnu, &ours] {
        assert_eq!(instructions(Path::new(exe), "t1", 3), ["adrp", "ldr", "b"], "{exe}");
    }
    assert_eq!(instructions(Path::new(&ours), "t2", 4), ["adrp", "str", "add", "b"]);
    // Under a linker script's SECTIONS, which places members anew, there is no room for patches.
    std::fs::write(
        tmp.join("far.ld"),
        "SECTIONS {\n . = 0x410000 + SIZEOF_HEADERS;\n .text : { *(.text .text.*) }\n .fardata 0x10400000 : { *(.fardata) }\n}\n",
    )
    .unwrap();
    let o = cc(&tmp, false, true, &["-nostdlib", "-static", "-Wl,-e,main", "e.o", "-Wl,-T,far.ld"], "scripted");
    assert!(!o.status.success(), "the scripted far link succeeded");
    if testing_rivet() {
        let e = stderr_text(&o);
        for w in ["scripted: a Cortex-A53 erratum 843419 sequence needs a patch", "linker script"] {
            assert!(e.contains(w), "{w:?} not in {e}");
        }
    }
    tmp.finish();
}

/// A function of a variant procedure-call standard (`.variant_pcs`, as SVE functions are marked)
/// keeps its flag in the library's `.dynsym`, and an executable calling it through the PLT gets
/// DT_AARCH64_VARIANT_PCS (so that the loader binds the entry at start-up), as with GNU ld.
#[test]
fn variant_pcs_functions() {
    let Some(tmp) = setup("vpcs") else { return };
    std::fs::write(
        tmp.join("v.s"),
        ".globl vfn\n.type vfn, %function\n.variant_pcs vfn\nvfn:\n mov w0, #9\n ret\n\
         .section .note.GNU-stack,\"\",%progbits\n",
    )
    .unwrap();
    std::fs::write(tmp.join("main.c"), "int vfn(void);\nint main(void) { return vfn(); }\n").unwrap();
    must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(["-c", "v.s"]));
    cc_ok(&tmp, false, true, &["-shared", "v.o"], "libv.so");
    let dynsyms = readelf(&["--dyn-syms", "-W"], &tmp.join("libv.so"));
    assert!(dynsyms.lines().any(|l| l.contains("vfn") && l.contains("[VARIANT_PCS]")), "{dynsyms}");
    let rpath = format!("-Wl,-rpath,{}", tmp.path.display());
    let (gnu, ours) = both(&tmp, false, &["main.c", "./libv.so", &rpath], "vpcs", Some(("", 9)));
    for exe in [gnu, ours] {
        assert!(dynamic_tags(&exe).contains("AARCH64_VARIANT_PCS"), "{exe}: {:?}", dynamic_tags(&exe));
    }
    tmp.finish();
}

/// GOT loads and `adrp`+`add` pairs, relaxed as lld relaxes them: a GOT load of a near symbol
/// becomes `nop; adr`, of a far one (256 MiB away) `adrp; add`, and an `adrp; add` of a near one
/// `nop; adr`; `--emit-relocs` reports what the instructions became; `--no-relax` keeps them.
const RELAX: &str = "\
        .text
        .globl _start
_start:
        adrp x0, :got:near
        ldr x0, [x0, #:got_lo12:near]
        adrp x1, :got:far
        ldr x1, [x1, #:got_lo12:far]
        adrp x2, near
        add x2, x2, #:lo12:near
        ldr w3, [x0]
        ldr w4, [x1]
        ldr w5, [x2]
        add w0, w3, w4
        add w0, w0, w5
        mov x8, #93
        svc #0
        .globl near
        .hidden near
near:   .word 20
        .section .fardata, \"aw\"
        .globl far
        .hidden far
far:    .word 2
        .section .note.GNU-stack, \"\", %progbits
";

#[test]
fn got_loads_and_address_pairs_relax() {
    let Some(tmp) = setup("relax") else { return };
    std::fs::write(tmp.join("r.s"), RELAX).unwrap();
    must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(["-c", "r.s"]));
    let link = |extra: &[&str], out: &str| {
        let args = [&["-nostdlib", "-static", "-Wl,-e,_start", "r.o", "-Wl,--emit-relocs"][..], extra].concat();
        cc_ok(&tmp, false, true, &args, out);
        assert_eq!(run(&tmp.join(out)), (String::new(), 42), "{out}");
    };
    let far = ["-Wl,-Ttext=0x410000", "-Wl,--section-start=.fardata=0x10400000"];
    link(&far, "relaxed");
    link(&[&far[..], &["-Wl,--no-relax"]].concat(), "kept");
    assert_eq!(instructions(&tmp.join("relaxed"), "_start", 6), ["nop", "adr", "adrp", "add", "nop", "adr"]);
    assert_eq!(instructions(&tmp.join("kept"), "_start", 6), ["adrp", "ldr", "adrp", "ldr", "adrp", "add"]);
    let dump = String::from_utf8_lossy(
        &must(Command::new("aarch64-linux-gnu-objdump").arg("-dr").arg(tmp.join("relaxed"))).stdout,
    )
    .into_owned();
    assert!(!dump.contains("R_AARCH64_ADR_GOT_PAGE") && !dump.contains("R_AARCH64_LD64_GOT_LO12_NC"), "{dump}");
    for t in ["R_AARCH64_ADR_PREL_LO21", "R_AARCH64_ADR_PREL_PG_HI21", "R_AARCH64_ADD_ABS_LO12_NC"] {
        assert!(dump.contains(t), "{t}: {dump}");
    }
    tmp.finish();
}

/// The target's checks, in rivet's words: an object of another machine, big-endian output,
/// another target's options (either way), a branch out of its reach (a conditional one, a thunk's).
#[test]
fn target_errors() {
    let Some(tmp) = setup("errors") else { return };
    std::fs::write(tmp.join("hello.c"), HELLO).unwrap();
    must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(["-c", "hello.c"]));
    let link = |args: &[&str]| {
        let mut cmd = Command::new(linker());
        cmd.current_dir(&tmp.path).args(args);
        cmd.output().unwrap()
    };
    let fails = |args: &[&str], words: &[&str]| {
        let o = link(args);
        assert!(!o.status.success(), "{args:?} succeeded");
        let e = stderr_text(&o);
        if testing_rivet() {
            for w in words {
                assert!(e.contains(w), "{args:?}: {w:?} not in {e}");
            }
        }
    };
    fails(&["-maarch64linux", "-EB", "hello.o"], &["-EB", "big-endian"]);
    fails(&["-maarch64linuxb", "hello.o"], &["big-endian AArch64 is not supported"]);
    fails(&["-z", "ibtplt", "hello.o"], &["-z ibtplt is not an option for AArch64"]);
    fails(&["-z", "cet-report=warning", "hello.o"], &["-z cet-report is not an option for AArch64"]);
    if have("gcc") {
        std::fs::write(tmp.join("x.c"), "int x(void) { return 1; }\n").unwrap();
        must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "x.c"]));
        fails(&["hello.o", "x.o"], &["x.o: is for machine x86-64 (62), not AArch64", "first ELF input"]);
        fails(&["--fix-cortex-a53-843419", "x.o"], &["--fix-cortex-a53-843419 is not an option for x86-64"]);
        // AArch64's BTI, PAC and GCS options in an x86-64 link, refused as lld refuses them.
        for opt in ["force-bti", "pac-plt", "bti-report=warning", "gcs=always", "gcs-report=error"] {
            let name = opt.split('=').next().unwrap();
            fails(&["-z", opt, "x.o"], &[&format!("-z {name} is not an option for x86-64")]);
            if let Some(lld) = lld() {
                let o = Command::new(lld).current_dir(&tmp.path).args(["-z", opt, "x.o", "-o", "x"]).output().unwrap();
                assert!(stderr_text(&o).contains(&format!("-z {name} only supported on AArch64")), "{opt}: lld");
            }
        }
        // An archive member of another machine, pulled in by a reference.
        must(Command::new("ar").current_dir(&tmp.path).args(["rc", "libx.a", "x.o"]));
        fails(&["hello.o", "-u", "x", "libx.a"], &["libx.a(x.o): is for machine x86-64 (62), not AArch64"]);
    }
    // A call 256 MiB away goes through a thunk; a conditional branch there has none (as in lld):
    // out of CONDBR19's reach, an error naming the place and the symbol.
    std::fs::write(
        tmp.join("far.s"),
        ".globl _start\n_start:\n bl far\n.section .far,\"ax\"\n.globl far\nfar:\n ret\n",
    )
    .unwrap();
    must(Command::new("aarch64-linux-gnu-as").current_dir(&tmp.path).args(["far.s", "-o", "far.o"]));
    let o = link(&["-static", "far.o", "-Ttext=0x410000", "--section-start=.far=0x20000000", "-o", "far"]);
    assert!(o.status.success(), "{}", stderr_text(&o));
    std::fs::write(
        tmp.join("cond.s"),
        ".globl _start\n_start:\n cbz x0, far\n.section .far,\"ax\"\n.globl far\nfar:\n ret\n",
    )
    .unwrap();
    must(Command::new("aarch64-linux-gnu-as").current_dir(&tmp.path).args(["cond.s", "-o", "cond.o"]));
    fails(
        &["-static", "cond.o", "-Ttext=0x410000", "--section-start=.far=0x20000000", "-o", "cond"],
        &["cond.o:(.text+0x0)", "R_AARCH64_CONDBR19", "far", "out of range"],
    );
    assert!(!tmp.join("cond").exists());
    // 8 GiB away: out of a thunk's adrp too.
    fails(
        &["-static", "far.o", "-Ttext=0x410000", "--section-start=.far=0x200000000", "-o", "farther"],
        &["range-extension thunk", "for far cannot reach 0x200000000", "4 GiB"],
    );
    assert!(!tmp.join("farther").exists());
    // A script for another machine.
    std::fs::write(tmp.join("x86.ld"), "OUTPUT_FORMAT(elf64-x86-64)\n").unwrap();
    fails(
        &["hello.o", "x86.ld"],
        &["x86.ld:1", "OUTPUT_FORMAT(elf64-x86-64) names x86-64, not AArch64, the link's target"],
    );
    // An undefined symbol, its reference placed by the object's (AArch64-relocated) line table.
    std::fs::write(tmp.join("und.c"), "int missing(void);\nint main(void) {\n  return missing();\n}\n").unwrap();
    must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(["-g", "-c", "und.c"]));
    fails(&["-static", "und.o", "-o", "und"], &["undefined symbol: missing", "und.c:3", "und.o:(main)"]);
    // A GOT reference to a local symbol, which the assembler writes as its section plus an offset.
    std::fs::write(
        tmp.join("got.s"),
        ".globl _start\n_start:\n adrp x0, :got:loc\n ldr x0, [x0, #:got_lo12:loc]\n ret\nloc: .word 1\n",
    )
    .unwrap();
    must(Command::new("aarch64-linux-gnu-as").current_dir(&tmp.path).args(["got.s", "-o", "got.o"]));
    fails(&["-static", "got.o", "-o", "got"], &["got.o:(.text+0x0)", "R_AARCH64_ADR_GOT_PAGE", "has addend 12"]);
    let o = link(&["-static", "far.o", "-Ttext=0x410000", "--section-start=.far=0x4000000", "-o", "near"]);
    assert!(o.status.success(), "{}", stderr_text(&o));
    tmp.finish();
}

/// Runs an AArch64 program under qemu, on `cpu` when given (qemu's default is `max`, which has
/// BTI and pointer authentication): its stdout, exit code and the signal that killed it (qemu
/// dies by the guest's signal).
fn run_on(exe: &Path, cpu: Option<&str>) -> (String, Option<i32>, Option<i32>) {
    use std::os::unix::process::ExitStatusExt;
    let mut cmd = Command::new("qemu-aarch64");
    if let Some(cpu) = cpu {
        cmd.args(["-cpu", cpu]);
    }
    cmd.args(["-L", AARCH64_SYSROOT]).arg(exe).current_dir(exe.parent().unwrap());
    let (out, timed_out) = run_with_timeout(&mut cmd, b"", std::time::Duration::from_secs(60));
    assert!(!timed_out, "{} timed out", exe.display());
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code(), out.status.signal())
}

/// The AArch64 feature bits `readelf -n` shows (`AArch64 feature: BTI, PAC`), or "" without the
/// property.
fn aarch64_features(file: &Path) -> String {
    let notes = readelf(&["-n"], file);
    notes.lines().find_map(|l| l.trim().strip_prefix("Properties: ")).unwrap_or("").to_string()
}

/// A `.note.gnu.property` with GNU_PROPERTY_AARCH64_FEATURE_1_AND = `bits` (BTI 1, PAC 2, GCS 4),
/// in assembly.
fn property_note(bits: u32) -> String {
    format!(
        ".section .note.gnu.property, \"a\"\n.p2align 3\n.long 4, 16, 5\n.asciz \"GNU\"\n\
         .long 0xc0000000, 4, {bits}, 0\n.text\n"
    )
}

/// The PLT as `llvm-objdump-19 -d` lists it (`.plt`, and lld's `.iplt`): each label (`@plt` or
/// `$plt` dropped: entries are named from `.rela.plt`, or from rivet's `NAME$plt` symbols) with the
/// mnemonics under it. GNU objdump 2.40 cannot be used: it names PLT entries as if they were all
/// 16 bytes long (GNU ld's BTI PLT has 24-byte entries only in position-dependent executables).
fn plt_listing(file: &Path) -> Vec<(String, Vec<String>)> {
    let out = must(Command::new("llvm-objdump-19").args(["-d", "--no-show-raw-insn", "--mattr=+bti,+pauth"]).arg(file));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut listing: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_plt = false;
    for l in text.lines() {
        if let Some(s) = l.strip_prefix("Disassembly of section ") {
            in_plt = s == ".plt:" || s == ".iplt:";
        } else if !in_plt {
        } else if let Some(label) = l.strip_suffix(">:").and_then(|l| l.split_once('<')).map(|(_, n)| n) {
            let name = label.trim_end_matches("@plt").trim_end_matches("$plt");
            listing.push((name.to_string(), Vec::new()));
        } else if let (Some(last), Some(m)) = (listing.last_mut(), l.split('\t').nth(1)) {
            last.1.push(m.trim().to_string());
        }
    }
    listing
}

/// The mnemonics of the PLT entry labelled `name` (the header is `.plt`).
fn plt_entry(listing: &[(String, Vec<String>)], name: &str) -> Vec<String> {
    listing.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no {name} in {listing:?}")).1.clone()
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// The file offset of address `addr` in section `name` (from `readelf -SW`).
fn file_offset(file: &Path, name: &str, addr: u64) -> usize {
    let sections = readelf(&["-SW"], file);
    let line = sections.lines().find(|l| l.split_whitespace().any(|w| w == name)).expect("section");
    let w: Vec<&str> = line.split_whitespace().collect();
    let at = w.iter().position(|&x| x == name).unwrap();
    let hex = |s: &str| u64::from_str_radix(s, 16).unwrap();
    (addr - hex(w[at + 2]) + hex(w[at + 3])) as usize
}

/// The address of the label `name` in `llvm-objdump-19 -d`.
fn label_addr(file: &Path, name: &str) -> u64 {
    let out = must(Command::new("llvm-objdump-19").arg("-d").arg(file));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text.lines().find(|l| l.ends_with(&format!(" <{name}>:"))).unwrap_or_else(|| panic!("{name}: {text}"));
    u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).unwrap()
}

/// The cross GNU ld links for each `-mbranch-protection=standard` build below; lld 19 (when
/// installed) for the layouts only lld has.
fn lld() -> Option<&'static str> {
    have("ld.lld-19").then_some("ld.lld-19")
}

const BTI_LIB: &str = "\
#include <stdio.h>
int lib_twice(int x) { return 2 * x; }
int lib_apply(int (*f)(int), int x) { return f(x) + 1; }
void lib_hello(const char *s) { printf(\"lib: %s\\n\", s); }
";

/// A program with a start of its own (Debian's start files have no BTI property, so a program
/// linked with them is not BTI): libc's qsort calls back into it, the library calls its local
/// function and (in a position-dependent executable) the library's own function through the
/// executable's canonical PLT entry, by `blr`.
const BTI_START: &str = "\
#include <stdio.h>
#include <stdlib.h>
int lib_twice(int);
int lib_apply(int (*)(int), int);
void lib_hello(const char *);
static int local_inc(int x) { return x + 10; }
int (*volatile fp)(int) = lib_twice;
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
void _start(void) {
  int v[3] = {3, 1, 2};
  qsort(v, 3, sizeof v[0], cmp);
  lib_hello(\"start\");
  int r = fp(5) + lib_apply(local_inc, 1) + lib_apply(lib_twice, 2);
  printf(\"%d %d %d %d\\n\", r, v[0], v[1], v[2]);
  exit(r);
}
";

/// Code built with `-mbranch-protection=standard` (BTI landing pads and return-address signing):
/// a shared library and executables built from such objects alone are marked BTI and PAC by both
/// linkers, and run under qemu, which (like Linux) guards the pages of a BTI program and glibc's
/// loader those of a BTI library: every indirect branch must land on a `bti c` (or `paciasp`).
/// The PLT is lld's: `bti c` in the header and in the canonical entry the library branches to,
/// and removing that one landing pad makes the program die with SIGILL. With Debian's start
/// files, which carry no property, a program is not BTI (GNU ld's output neither).
#[test]
fn bti_program_through_a_shared_library() {
    let Some(tmp) = setup_disassembling("bti") else { return };
    std::fs::write(tmp.join("lib.c"), BTI_LIB).unwrap();
    std::fs::write(tmp.join("start.c"), BTI_START).unwrap();
    std::fs::write(tmp.join("hello.c"), HELLO).unwrap();
    let bp = "-mbranch-protection=standard";
    let gcc = |args: &[&str]| must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(args));
    gcc(&["-O2", bp, "-fPIC", "-c", "lib.c"]);
    gcc(&["-O2", bp, "-fPIE", "-c", "start.c", "-o", "start-pie.o"]);
    gcc(&["-O2", bp, "-fno-pie", "-c", "start.c", "-o", "start-nopie.o"]);
    let features = aarch64_features(&tmp.join("lib.o"));
    assert_eq!(features, "AArch64 feature: BTI, PAC", "the cross gcc's note");
    cc_ok(&tmp, false, false, &["-shared", "-nostartfiles", "lib.o"], "libbti-gnu.so");
    cc_ok(&tmp, false, true, &["-shared", "-nostartfiles", "lib.o"], "libbti-ours.so");
    for lib in ["libbti-gnu.so", "libbti-ours.so"] {
        assert_eq!(aarch64_features(&tmp.join(lib)), features, "{lib}");
    }
    let rpath = format!("-Wl,-rpath,{}", tmp.path.display());
    let want = ("lib: start\n27 1 2 3\n".to_string(), Some(27), None);
    for kind in ["pie", "nopie"] {
        let pie = if kind == "pie" { "-pie" } else { "-no-pie" };
        let obj = format!("start-{kind}.o");
        let (gnu, ours) = (format!("{kind}-gnu"), format!("{kind}-ours"));
        cc_ok(&tmp, false, false, &[pie, "-nostartfiles", &obj, "./libbti-gnu.so", &rpath], &gnu);
        cc_ok(&tmp, false, true, &[pie, "-nostartfiles", &obj, "./libbti-ours.so", &rpath], &ours);
        assert_eq!(run_on(&tmp.join(&gnu), None), want, "{kind} by GNU ld");
        assert_eq!(run_on(&tmp.join(&ours), None), want, "{kind}");
        assert_eq!(aarch64_features(&tmp.join(&ours)), features, "{kind}");
        assert_eq!(aarch64_features(&tmp.join(&gnu)), features, "{kind} by GNU ld");
        for exe in [&gnu, &ours] {
            let tags = dynamic_tags(&tmp.join(exe).display().to_string());
            assert!(tags.contains("AARCH64_BTI_PLT") && !tags.contains("AARCH64_PAC_PLT"), "{exe}: {tags:?}");
        }
        let plt = plt_listing(&tmp.join(&ours));
        assert_eq!(plt_entry(&plt, ".plt")[0], "bti", "{kind}: {plt:?}");
        // Called by `bl` only: no landing pad (lld's rule; GNU ld puts one in every entry).
        assert_eq!(plt_entry(&plt, "printf"), words("adrp ldr add br nop nop"), "{kind}");
    }
    // The library branches to the executable's canonical entry of `lib_twice`: its `bti c` is
    // what lets the program run.
    let exe = tmp.join("nopie-ours");
    assert_eq!(plt_entry(&plt_listing(&exe), "lib_twice"), words("bti adrp ldr add br nop"));
    let at = file_offset(&exe, ".plt", label_addr(&exe, "lib_twice@plt"));
    let mut bytes = std::fs::read(&exe).unwrap();
    assert_eq!(bytes[at..at + 4], 0xd503_245f_u32.to_le_bytes(), "bti c");
    bytes[at..at + 4].copy_from_slice(&0xd503_201f_u32.to_le_bytes());
    std::fs::write(tmp.join("nopad"), &bytes).unwrap();
    std::fs::set_permissions(tmp.join("nopad"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (_, code, signal) = run_on(&tmp.join("nopad"), None);
    assert_eq!((code, signal), (None, Some(4)), "a missing landing pad is SIGILL");
    // Debian's start files have no property: a whole program is not BTI, with either linker.
    let (gnu, ours) = both(&tmp, false, &[bp, "hello.c"], "hello", Some(("hello 42\n", 3)));
    assert_eq!(aarch64_features(Path::new(&gnu)), "");
    assert_eq!(aarch64_features(Path::new(&ours)), "");
    assert!(!dynamic_tags(&ours).iter().any(|t| t.starts_with("AARCH64_")), "{:?}", dynamic_tags(&ours));
    tmp.finish();
}

/// A program of its own start and no library, calling through a function pointer: qemu raises
/// SIGILL when the output says BTI (`-z force-bti`) and the callee has no landing pad, and runs it
/// when the callee has one or the output does not say BTI: the property is what the loader
/// enforces. `-z force-bti` warns about each object without BTI, naming it (lld's words), and
/// `-z bti-report=error` refuses it, as lld does (GNU ld 2.40 ignores `-z bti-report`).
const NOLIB: &str = "\
static long sys(long n, long a, long b, long c) {
  register long x8 __asm__(\"x8\") = n; register long x0 __asm__(\"x0\") = a;
  register long x1 __asm__(\"x1\") = b; register long x2 __asm__(\"x2\") = c;
  __asm__ volatile(\"svc 0\" : \"+r\"(x0) : \"r\"(x8), \"r\"(x1), \"r\"(x2) : \"memory\");
  return x0;
}
__attribute__((noinline)) int target(int x) { sys(64, 1, (long)\"called\\n\", 7); return x + 1; }
int (*volatile fp)(int) = target;
void _start(void) { int r = fp(41); sys(93, r == 42 ? 0 : 1, 0, 0); for (;;); }
";

#[test]
fn force_bti_is_what_qemu_enforces() {
    let Some(tmp) = setup("force-bti") else { return };
    std::fs::write(tmp.join("nolib.c"), NOLIB).unwrap();
    let gcc = |args: &[&str]| must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(args));
    gcc(&["-O2", "-mbranch-protection=standard", "-c", "nolib.c", "-o", "pads.o"]);
    gcc(&["-O2", "-mbranch-protection=none", "-c", "nolib.c", "-o", "nopads.o"]);
    let static_ = ["-nostdlib", "-static"];
    let called = ("called\n".to_string(), Some(0), None);
    for ours in [false, true] {
        let who = if ours { "ours" } else { "GNU ld" };
        let link = |obj: &str, extra: &[&str], out: &str| {
            let o = cc(&tmp, false, ours, &[&static_[..], &[obj], extra].concat(), out);
            assert!(o.status.success(), "{who}: {out}: {}", stderr_text(&o));
            stderr_text(&o)
        };
        let force = ["-Wl,-z,force-bti"];
        assert_eq!(link("pads.o", &force, "pads"), "", "{who}");
        assert_eq!(aarch64_features(&tmp.join("pads")), "AArch64 feature: BTI, PAC", "{who}");
        assert_eq!(run_on(&tmp.join("pads"), None), called, "{who}");
        link("nopads.o", &[], "plain");
        assert_eq!(aarch64_features(&tmp.join("plain")), "", "{who}");
        assert_eq!(run_on(&tmp.join("plain"), None), called, "{who}");
        let warning = link("nopads.o", &force, "forced");
        assert!(warning.contains("nopads.o") && warning.contains("force-bti"), "{who}: {warning}");
        assert_eq!(aarch64_features(&tmp.join("forced")), "AArch64 feature: BTI", "{who}");
        assert_eq!(run_on(&tmp.join("forced"), None), (String::new(), None, Some(4)), "{who}: SIGILL");
    }
    if !testing_rivet() {
        return tmp.finish();
    }
    let ld = |args: &[&str]| {
        let mut cmd = Command::new(linker());
        cmd.current_dir(&tmp.path).args(args);
        cmd.output().unwrap()
    };
    let lld_says = |args: &[&str]| {
        lld().map(|l| {
            let o = Command::new(l).current_dir(&tmp.path).args(["-m", "aarch64linux"]).args(args).output().unwrap();
            (o.status.success(), stderr_text(&o).replace("ld.lld-19: ", ""))
        })
    };
    let missing = "nopads.o: -z force-bti: file does not have GNU_PROPERTY_AARCH64_FEATURE_1_BTI property";
    let report = "nopads.o: -z bti-report: file does not have GNU_PROPERTY_AARCH64_FEATURE_1_BTI property";
    for (args, ok, want) in [
        (&["-z", "force-bti", "nopads.o", "-o", "f"][..], true, format!("warning: {missing}\n")),
        (&["-z", "force-bti", "-z", "bti-report=warning", "nopads.o", "-o", "f"], true, format!("warning: {report}\n")),
        (&["-z", "force-bti", "-z", "bti-report=error", "nopads.o", "-o", "e"], false, format!("error: {report}\n")),
        (&["-z", "bti-report=error", "pads.o", "-o", "p"], true, String::new()),
    ] {
        let o = ld(args);
        assert_eq!((o.status.success(), stderr_text(&o).replace("rivet: ", "")), (ok, want.clone()), "{args:?}");
        if let Some(theirs) = lld_says(args) {
            assert_eq!(theirs, (ok, want), "{args:?} by lld");
        }
    }
    assert!(!tmp.join("e").exists(), "no output after the error");
    tmp.finish();
}

/// `-z pac-plt`: each PLT entry authenticates the address it loaded (`autia1716` before `br
/// x17`, entries of 24 bytes), DT_AARCH64_PAC_PLT says so (both linkers), and the output is
/// marked PAC as lld marks it (GNU ld does not), each object without PAC warned about. glibc's
/// loader does not sign `.got.plt` slots, so on a CPU with pointer authentication (qemu's
/// default) the authentication fails and both linkers' programs die; on one without (a
/// Cortex-A72) `autia1716` is a hint, a nop, and they run.
#[test]
fn pac_plt_authenticates_plt_entries() {
    let Some(tmp) = setup_disassembling("pac-plt") else { return };
    std::fs::write(tmp.join("hello.c"), HELLO).unwrap();
    let (gnu, ours) = (tmp.join("gnu"), tmp.join("ours"));
    cc_ok(&tmp, false, false, &["hello.c", "-Wl,-z,pac-plt"], "gnu");
    let o = cc(&tmp, false, true, &["hello.c", "-Wl,-z,pac-plt"], "ours");
    assert!(o.status.success(), "{}", stderr_text(&o));
    if testing_rivet() {
        let e = stderr_text(&o);
        assert!(
            e.contains("crtn.o: -z pac-plt: file does not have GNU_PROPERTY_AARCH64_FEATURE_1_PAC property"),
            "{e}"
        );
    }
    let plt = plt_listing(&ours);
    assert_eq!(plt_entry(&plt, ".plt"), words("stp adrp ldr add br nop nop nop"));
    let entries: Vec<_> = plt.iter().filter(|(n, _)| n != ".plt").collect();
    assert!(!entries.is_empty());
    for (name, m) in entries {
        assert_eq!(*m, words("adrp ldr add autia1716 br nop"), "{name}");
    }
    assert_eq!(aarch64_features(&ours), "AArch64 feature: PAC");
    assert_eq!(aarch64_features(&gnu), "");
    for exe in [&gnu, &ours] {
        assert!(dynamic_tags(&exe.display().to_string()).contains("AARCH64_PAC_PLT"), "{}", exe.display());
        assert_eq!(run_on(exe, Some("cortex-a72")), ("hello 42\n".to_string(), Some(3), None), "{}", exe.display());
        let (out, code, signal) = run_on(exe, None);
        assert!(out.is_empty() && code.is_none() && signal.is_some(), "{}: {out} {code:?}", exe.display());
    }
    tmp.finish();
}

/// The guarded PLT byte for byte as lld 19 lays it out (its instructions compared entry by entry
/// with lld's output when ld.lld-19 is installed), the note's bits and the dynamic tags, from
/// assembly objects: BTI, BTI + PAC and PAC-only outputs, an ordinary, a canonical and an IFUNC
/// entry; `-z gcs`, `-r`'s merged note (as GNU ld and lld merge it), the warnings in lld's words.
#[test]
fn guarded_plt_as_lld_lays_it_out() {
    let Some(tmp) = setup_disassembling("guarded-plt") else { return };
    let all = property_note(7);
    let sources = [
        (
            "lib.s",
            format!(
                "{all}.globl lfunc, lfunc2\n.type lfunc, %function\n.type lfunc2, %function\n\
                 lfunc: bti c\n ret\nlfunc2: bti c\n ret\n"
            ),
        ),
        (
            "main.s",
            format!(
                "{all}.globl _start\n.type _start, %function\n_start: bti c\n bl lfunc\n adrp x0, lfunc2\n \
                 add x0, x0, :lo12:lfunc2\n bl ifn\n ret\n.type ifn, %gnu_indirect_function\nifn: ret\n"
            ),
        ),
        ("bti-pac.s", format!("{}.globl f3\nf3: ret\n", property_note(3))),
        ("plain.s", ".text\n.globl f4\nf4: ret\n".to_string()),
    ];
    for (name, text) in sources {
        std::fs::write(tmp.join(name), text + ".section .note.GNU-stack, \"\", %progbits\n").unwrap();
        let obj = name.replace(".s", ".o");
        must(Command::new("aarch64-linux-gnu-as").current_dir(&tmp.path).args([name, "-o", &obj]));
    }
    let link = |args: &[&str], out: &str| {
        let mut cmd = Command::new(linker());
        let o = cmd.current_dir(&tmp.path).args(args).args(["-o", out]).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr_text(&o));
        stderr_text(&o).replace("rivet: ", "")
    };
    let lld_link = |args: &[&str], out: &str| {
        lld().map(|l| {
            let o = Command::new(l)
                .current_dir(&tmp.path)
                .args(["-m", "aarch64linux"])
                .args(args)
                .args(["-o", out])
                .output()
                .unwrap();
            assert!(o.status.success(), "lld {args:?}: {}", stderr_text(&o));
            stderr_text(&o).replace("ld.lld-19: ", "")
        })
    };
    link(&["-shared", "lib.o"], "lib.so");
    let bti_header = words("bti stp adrp ldr add br nop nop");
    let header = words("stp adrp ldr add br nop nop nop");
    let plain = words("adrp ldr add br nop nop");
    let pad = words("bti adrp ldr add br nop");
    let pac = words("adrp ldr add autia1716 br nop");
    let pad_pac = words("bti adrp ldr add autia1716 br");
    let pac_warning = "warning: plain.o: -z pac-plt: file does not have GNU_PROPERTY_AARCH64_FEATURE_1_PAC property\n";
    // (arguments, the header, `lfunc`'s entry (called), `lfunc2`'s (canonical) and `ifn`'s (an
    // IFUNC), the note's bits, the dynamic tags, the warnings)
    type Case<'a> = (&'a [&'a str], &'a [String], &'a [String], &'a [String], &'a str, &'a [&'a str], &'a str);
    let cases: [Case; 4] = [
        (&["main.o", "lib.so"], &bti_header, &plain, &pad, "BTI, PAC, <unknown: 4>", &["AARCH64_BTI_PLT"], ""),
        (
            &["main.o", "lib.so", "-z", "pac-plt"],
            &bti_header,
            &pac,
            &pad_pac,
            "BTI, PAC, <unknown: 4>",
            &["AARCH64_BTI_PLT", "AARCH64_PAC_PLT"],
            "",
        ),
        (
            &["main.o", "plain.o", "lib.so", "-z", "pac-plt"],
            &header,
            &pac,
            &pac,
            "PAC",
            &["AARCH64_PAC_PLT"],
            pac_warning,
        ),
        (&["main.o", "bti-pac.o", "lib.so"], &bti_header, &plain, &pad, "BTI, PAC", &["AARCH64_BTI_PLT"], ""),
    ];
    for (i, (args, head, called, canonical, bits, tags, warnings)) in cases.into_iter().enumerate() {
        let out = format!("case{i}");
        assert_eq!(link(args, &out), warnings, "{args:?}");
        let exe = tmp.join(&out);
        let plt = plt_listing(&exe);
        assert_eq!(plt_entry(&plt, ".plt"), head, "{args:?}");
        assert_eq!(plt_entry(&plt, "lfunc"), called, "{args:?}");
        assert_eq!(plt_entry(&plt, "lfunc2"), canonical, "{args:?}");
        assert_eq!(plt_entry(&plt, "ifn"), canonical, "{args:?}: a non-preemptible IFUNC's entry");
        assert_eq!(aarch64_features(&exe), format!("AArch64 feature: {bits}"), "{args:?}");
        let found: Vec<String> =
            dynamic_tags(&exe.display().to_string()).into_iter().filter(|t| t.starts_with("AARCH64_")).collect();
        assert_eq!(found, tags, "{args:?}");
        let theirs = format!("case{i}-lld");
        if let Some(their_warnings) = lld_link(args, &theirs) {
            assert_eq!(their_warnings, warnings, "{args:?} by lld");
            let lld_plt = plt_listing(&tmp.join(&theirs));
            for name in [".plt", "lfunc", "lfunc2"] {
                assert_eq!(plt_entry(&lld_plt, name), plt_entry(&plt, name), "{args:?}: {name} by lld");
            }
            assert_eq!(aarch64_features(&tmp.join(&theirs)), aarch64_features(&exe), "{args:?} by lld");
        }
    }
    // Without BTI or PAC the PLT is the 16-byte one, and there is no note.
    link(&["main.o", "plain.o", "lib.so"], "unguarded");
    let plt = plt_listing(&tmp.join("unguarded"));
    assert_eq!(plt_entry(&plt, "lfunc"), words("adrp ldr add br"));
    assert_eq!(aarch64_features(&tmp.join("unguarded")), "");
    // A static executable's IFUNC entry, a landing pad (lld's .iplt entry).
    link(&["-static", "main.o", "bti-pac.o", "--defsym", "lfunc=f3", "--defsym", "lfunc2=f3"], "static");
    assert_eq!(plt_entry(&plt_listing(&tmp.join("static")), "ifn"), pad);
    if lld_link(&["-static", "main.o", "bti-pac.o", "--defsym", "lfunc=f3", "--defsym", "lfunc2=f3"], "static-lld")
        .is_some()
    {
        // Its only entry (in `.iplt`, unnamed: the IFUNC's symbol stays on its resolver).
        let theirs = plt_listing(&tmp.join("static-lld"));
        assert_eq!(theirs.iter().map(|e| &e.1).collect::<Vec<_>>(), [&pad], "by lld");
    }
    // -z gcs: GCS (bit 4, which binutils 2.40's readelf does not name) set or cleared whatever the
    // inputs say; -z gcs-report names the objects without it.
    for (args, bits, warning) in [
        (&["main.o", "lib.so", "-z", "gcs=never"][..], "BTI, PAC", ""),
        (&["main.o", "bti-pac.o", "lib.so", "-z", "gcs=always"], "BTI, PAC, <unknown: 4>", ""),
        (
            &["main.o", "bti-pac.o", "lib.so", "-z", "gcs-report=warning"],
            "BTI, PAC",
            "warning: bti-pac.o: -z gcs-report: file does not have GNU_PROPERTY_AARCH64_FEATURE_1_GCS property\n",
        ),
    ] {
        assert_eq!(link(args, "gcs"), warning, "{args:?}");
        assert_eq!(aarch64_features(&tmp.join("gcs")), format!("AArch64 feature: {bits}"), "{args:?}");
        if let Some(theirs) = lld_link(args, "gcs-lld") {
            assert_eq!(
                (theirs.as_str(), aarch64_features(&tmp.join("gcs-lld"))),
                (warning, aarch64_features(&tmp.join("gcs")))
            );
        }
    }
    // -r: the note ANDed over the objects, as GNU ld and lld write it.
    link(&["-r", "main.o", "bti-pac.o"], "r.o");
    assert_eq!(aarch64_features(&tmp.join("r.o")), "AArch64 feature: BTI, PAC");
    must(Command::new("aarch64-linux-gnu-ld").current_dir(&tmp.path).args([
        "-r",
        "main.o",
        "bti-pac.o",
        "-o",
        "r-gnu.o",
    ]));
    assert_eq!(aarch64_features(&tmp.join("r-gnu.o")), "AArch64 feature: BTI, PAC");
    link(&["-r", "main.o", "plain.o"], "r2.o");
    assert_eq!(aarch64_features(&tmp.join("r2.o")), "");
    tmp.finish();
}

/// The names of the range-extension thunk symbols (`NAME$thunkN`) in `file`'s `.symtab`, without
/// their group numbers, sorted.
fn thunk_names(file: &Path) -> Vec<String> {
    let mut names: Vec<String> = readelf(&["-sW"], file)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(7))
        .filter_map(|n| n.split_once("$thunk").map(|(name, _)| name.to_string()))
        .collect();
    names.sort();
    names
}

const FAR_SECTIONS: &str = r#"#include <stdio.h>
void fn3(int);
void fn4(int);
__attribute__((section(".low"))) void fn1(int x) { printf(" fn1"); fn3(x); }
__attribute__((section(".low"))) void fn2(int x) { printf(" fn2"); fn4(x); }
__attribute__((section(".high"))) void fn3(int x) { printf(" fn3"); fn2(x); }
__attribute__((section(".high"))) void fn4(int x) { printf(" fn4 %d", x); }
int main(void) { printf("main"); fn1(7); printf("\n"); return 0; }
"#;

/// Calls between code sections placed 256 MiB apart (`--section-start`), and from them to the
/// PLT, out of `bl`'s ±128 MiB: they go through range-extension thunks and run as GNU ld's
/// build (which uses its own stubs) runs. Only the thunks a call needs are kept: from `.text`
/// (with the PLT) to `fn1`, from `.low` to the PLT; `.high` is near the PLT, `fn3` is reached
/// from `.low` directly.
#[test]
fn range_extension_thunks_between_far_sections() {
    let Some(tmp) = setup("far-sections") else { return };
    std::fs::write(tmp.join("far.c"), FAR_SECTIONS).unwrap();
    must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(["-O2", "-c", "far.c"]));
    let start = "-Wl,--section-start=.low=0x10000000,--section-start=.high=0x20000000";
    for mode in ["-no-pie", "-pie"] {
        let name = format!("far{mode}");
        let (_, ours) = both(&tmp, false, &[mode, "far.o", start], &name, Some(("main fn1 fn3 fn2 fn4 7\n", 0)));
        assert_eq!(thunk_names(Path::new(&ours)), ["fn1", "printf"], "{name}");
        // Each entry: adrp, add, br x16.
        assert_eq!(instructions(Path::new(&ours), "fn1$thunk0", 3), ["adrp", "add", "br"], "{name}");
    }
    // Near each other, the same calls need none.
    cc_ok(&tmp, false, true, &["far.o", "-Wl,--section-start=.low=0x1000000,--section-start=.high=0x2000000"], "near");
    assert_eq!(run(&tmp.join("near")), ("main fn1 fn3 fn2 fn4 7\n".to_string(), 0));
    assert!(thunk_names(&tmp.join("near")).is_empty());
    tmp.finish();
}

/// More than 128 MiB of code in one section: `near_fn` and `far_fn` call each other across a
/// 130 MiB block, and `far_fn` calls `printf` in the PLT before it. Dynamic executables run as
/// GNU ld's builds do; the static one, which GNU ld 2.40 cannot link (its stubs do not reach
/// libc.a's calls to `memcpy` and `strlen` across the block), prints what they print.
#[test]
fn more_than_128_mib_of_code() {
    let Some(tmp) = setup("big-code") else { return };
    let near = "#include <stdio.h>\nvoid far_fn(int);\nvoid near_fn(int x) { printf(\"near %d\\n\", x); if (x) far_fn(x - 1); }\nint main(void) { near_fn(3); return 0; }\n";
    let far = "#include <stdio.h>\nvoid near_fn(int);\nvoid far_fn(int x) { printf(\"far %d\\n\", x); if (x) near_fn(x - 1); }\n";
    let pad = "\t.text\n\t.globl pad\npad:\n\t.space 130*1024*1024\n\t.section .note.GNU-stack,\"\",%progbits\n";
    std::fs::write(tmp.join("near.c"), near).unwrap();
    std::fs::write(tmp.join("far.c"), far).unwrap();
    std::fs::write(tmp.join("pad.s"), pad).unwrap();
    must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(["-O1", "-c", "near.c", "far.c", "pad.s"]));
    let want = "near 3\nfar 2\nnear 1\nfar 0\n";
    for mode in ["-pie", "-no-pie"] {
        let name = format!("big{mode}");
        let (_, ours) = both(&tmp, false, &[mode, "near.o", "pad.o", "far.o"], &name, Some((want, 0)));
        assert_eq!(thunk_names(Path::new(&ours)), ["far_fn", "near_fn", "printf"], "{name}");
        std::fs::remove_file(&ours).unwrap();
        std::fs::remove_file(tmp.join(&format!("{name}-gnu"))).unwrap();
    }
    cc_ok(&tmp, false, true, &["-static", "near.o", "pad.o", "far.o"], "big-static");
    assert_eq!(run(&tmp.join("big-static")), (want.to_string(), 0));
    let names = thunk_names(&tmp.join("big-static"));
    for name in ["far_fn", "near_fn", "printf", "memcpy"] {
        assert!(names.iter().any(|n| n == name), "{name}: {names:?}");
    }
    tmp.finish();
}

/// A linker script's SECTIONS places members anew at their addresses, which rivet's thunks do
/// not follow: a link that needs thunks under one is refused, naming the output, and writes
/// nothing.
#[test]
fn thunks_under_a_sections_script_are_refused() {
    let Some(tmp) = setup("far-script") else { return };
    std::fs::write(tmp.join("far.c"), FAR_SECTIONS).unwrap();
    let script = "SECTIONS {\n  . = 0x400000 + SIZEOF_HEADERS;\n  .text : { *(.text .text.*) }\n  .low 0x10000000 : { *(.low) }\n  .high 0x20000000 : { *(.high) }\n}\n";
    std::fs::write(tmp.join("far.ld"), script).unwrap();
    must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(["-O2", "-c", "far.c"]));
    let o = cc(&tmp, false, true, &["-no-pie", "far.o", "-Wl,-T,far.ld"], "scripted");
    assert!(!o.status.success());
    let err = stderr_text(&o);
    assert!(
        err.contains("scripted: a branch does not reach its destination") && err.contains("range-extension thunks"),
        "{err}"
    );
    assert!(!tmp.join("scripted").exists());
    tmp.finish();
}

const RUST_PROGRAM: &str = r#"use std::collections::HashMap;
use std::sync::{Arc, Mutex};
trait Shape { fn area(&self) -> f64; }
struct Sq(f64);
impl Shape for Sq { fn area(&self) -> f64 { self.0 * self.0 } }
fn main() {
    let total = Arc::new(Mutex::new(0u64));
    let hs: Vec<_> = (0..4u64)
        .map(|i| { let t = total.clone(); std::thread::spawn(move || { *t.lock().unwrap() += i * 10; }) })
        .collect();
    for h in hs { h.join().unwrap(); }
    let mut m = HashMap::new();
    for w in "a b a c b a".split(' ') { *m.entry(w).or_insert(0) += 1; }
    let mut v: Vec<_> = m.into_iter().collect();
    v.sort();
    let shapes: Vec<Box<dyn Shape>> = vec![Box::new(Sq(1.5)), Box::new(Sq(2.0))];
    let r = std::panic::catch_unwind(|| { if v.len() == 3 { panic!("caught") } });
    println!("{} {:?} {:.2} {}", total.lock().unwrap(), v, shapes.iter().map(|s| s.area()).sum::<f64>(), r.is_err());
}
"#;

/// A Rust program for AArch64 (threads, a hash map, trait objects, a panic caught by unwinding),
/// compiled by rustc with the cross gcc as its linker driver: dynamic and `+crt-static`, linked
/// by the cross GNU ld and by rivet, both run under qemu and print alike. Skipped, saying so,
/// where rustup has no `aarch64-unknown-linux-gnu` standard library (scripts/install-deps.sh adds
/// it where it can).
#[test]
fn rust_program() {
    let Some(tmp) = setup("rust") else { return };
    let libdir =
        Command::new("rustc").args(["--print", "target-libdir", "--target", "aarch64-unknown-linux-gnu"]).output();
    let installed = libdir.ok().filter(|o| o.status.success()).is_some_and(|o| {
        std::fs::read_dir(String::from_utf8_lossy(&o.stdout).trim())
            .is_ok_and(|d| d.flatten().any(|e| e.file_name().to_string_lossy().starts_with("libstd-")))
    });
    if !installed {
        eprintln!("skipped: rustc has no standard library for aarch64-unknown-linux-gnu (rustup target add aarch64-unknown-linux-gnu)");
        return;
    }
    std::fs::write(tmp.join("r.rs"), RUST_PROGRAM).unwrap();
    for (mode, flags) in [("dynamic", &[][..]), ("static", &["-C", "target-feature=+crt-static"][..])] {
        let build = |ours: bool, out: &str| {
            let mut cmd = Command::new("rustc");
            cmd.current_dir(&tmp.path)
                .args(["--edition", "2021", "--target", "aarch64-unknown-linux-gnu", "-C", "opt-level=1"])
                .args(["-C", "linker=aarch64-linux-gnu-gcc"])
                .args(flags)
                .args(["r.rs", "-o", out]);
            if ours {
                cmd.arg("-C").arg(format!("link-arg=-B{}", linker_dir(&tmp).display()));
            }
            must(&mut cmd);
        };
        let (gnu, ours) = (format!("r-{mode}-gnu"), format!("r-{mode}-ours"));
        build(false, &gnu);
        build(true, &ours);
        let want = ("60 [(\"a\", 3), (\"b\", 2), (\"c\", 1)] 6.25 true\n".to_string(), 0);
        assert_eq!(run(&tmp.join(&gnu)), want, "{gnu}");
        assert_eq!(run(&tmp.join(&ours)), want, "{ours}");
        if testing_rivet() {
            assert!(readelf(&["-p", ".comment"], &tmp.join(&ours)).contains("Linker: rivet"), "{ours}: not ours");
        }
    }
    tmp.finish();
}

/// The rest of what rivet does on x86-64, for AArch64: LTO through the cross gcc's plugin, `-r`
/// and a link of its output, `--separate-debug-file` (the debug file holds the debug sections,
/// the output a `.gnu_debuglink`), `--gdb-index`, `-z pack-relative-relocs` (RELR; the cross GNU
/// ld 2.40 has none for AArch64, so the program's output is the reference), a build-id and a
/// linker script's `SECTIONS`. Each program runs as GNU ld's build of the same objects runs.
#[test]
fn lto_relocatable_debug_file_gdb_index_relr_and_scripts() {
    let Some(tmp) = setup("more") else { return };
    std::fs::write(tmp.join("l1.c"), "int f(int x);\nint main(void) { return f(3) - 2; }\n").unwrap();
    std::fs::write(tmp.join("l2.c"), "int f(int x) { return x * 3; }\n").unwrap();
    std::fs::write(
        tmp.join("g.c"),
        "#include <stdio.h>\nstatic const char *names[] = {\"a\", \"b\"};\nconst char **p = names;\n\
         __attribute__((section(\".mine\"), used)) static const int mine = 1;\n\
         int main(void) { printf(\"%s %s\\n\", p[0], p[1]); return 0; }\n",
    )
    .unwrap();
    must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(["-O2", "-flto", "-c", "l1.c", "l2.c"]));
    must(Command::new("aarch64-linux-gnu-gcc").current_dir(&tmp.path).args(["-g", "-O1", "-c", "g.c"]));
    // LTO: the cross gcc's plugin compiles the IR during the link.
    both(&tmp, false, &["-O2", "-flto", "l1.o", "l2.o"], "lto", Some(("", 7)));
    // -r, then a link of what it made.
    cc_ok(&tmp, false, true, &["-r", "-nostdlib", "g.o"], "g-r.o");
    assert!(readelf(&["-h"], &tmp.join("g-r.o")).contains("REL (Relocatable file)"));
    both(&tmp, false, &["g-r.o"], "relocatable", Some(("a b\n", 0)));
    // A separate debug file.
    cc_ok(&tmp, false, true, &["g.o", "-Wl,--separate-debug-file=sep.debug", "-Wl,--build-id"], "sep");
    assert_eq!(run(&tmp.join("sep")), ("a b\n".to_string(), 0));
    let main = readelf(&["-SW"], &tmp.join("sep"));
    assert!(main.contains(".gnu_debuglink") && !main.contains(".debug_info"), "{main}");
    assert!(readelf(&["-SW"], &tmp.join("sep.debug")).contains(".debug_info"));
    assert!(readelf(&["-n"], &tmp.join("sep")).contains("Build ID"));
    // --gdb-index: readelf reads the index.
    cc_ok(&tmp, false, true, &["g.o", "-Wl,--gdb-index"], "gdbindex");
    let index = readelf(&["--debug-dump=gdb_index"], &tmp.join("gdbindex"));
    assert!(index.contains("Version 7") && index.contains("CU table"), "{index}");
    // RELR: the pointer to `names` in a PIE, packed.
    cc_ok(&tmp, false, true, &["g.o", "-Wl,-z,pack-relative-relocs"], "relr");
    assert_eq!(run(&tmp.join("relr")), ("a b\n".to_string(), 0));
    assert!(dynamic_tags(&tmp.join("relr").display().to_string()).contains("RELR"));
    // A script's output section, inserted after .rodata, with a symbol at its end.
    let script = "SECTIONS {\n  .mine : { KEEP(*(.mine)) mine_end = .; }\n} INSERT AFTER .rodata;\n";
    std::fs::write(tmp.join("s.ld"), script).unwrap();
    let (gnu, ours) = both(&tmp, false, &["g.o", "-Wl,-T,s.ld"], "script", Some(("a b\n", 0)));
    for exe in [&gnu, &ours] {
        assert!(readelf(&["-SW"], Path::new(exe)).contains(" .mine "), "{exe}");
        assert!(readelf(&["-sW"], Path::new(exe)).contains(" mine_end"), "{exe}");
    }
    tmp.finish();
}
