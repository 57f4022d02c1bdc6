//! AArch64 links: C and C++ programs compiled by the Debian cross compiler
//! (`aarch64-linux-gnu-gcc`/`g++`), linked by the cross GNU ld (plain cross gcc) and by the linker
//! under test (`-B`), run under `qemu-aarch64` with the cross sysroot: both print the same and
//! exit alike, and a few `readelf` facts agree (segments, dynamic tags, dynamic relocation
//! types). Covered: PIE, non-PIE, static and static-PIE executables, a shared library with TLS
//! (descriptors in the library, relaxed in the executable), function pointers, PLT calls and a
//! copied variable, IFUNCs, variant-PCS functions, GOT load relaxation, a C++ exception thrown through a shared object, `dlopen`, library
//! search past another machine's library, the Cortex-A53 erratum 843419 workaround (which the
//! cross gcc asks for by default), range-extension thunks, and the errors of the target's checks. Skipped (with a
//! message) when the cross compiler, its binutils or qemu is missing (Debian packages
//! gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu, binutils-aarch64-linux-gnu, qemu-user).
mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output};

const SYSROOT: &str = "/usr/aarch64-linux-gnu";

fn setup(name: &str) -> Option<TempDir> {
    for tool in ["aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "aarch64-linux-gnu-readelf", "qemu-aarch64"] {
        if !have(tool) {
            eprintln!("skipped: {tool} missing");
            return None;
        }
    }
    Some(TempDir::new(&format!("aarch64-{name}")))
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
        Command::new("qemu-aarch64").args(["-L", SYSROOT]).arg(exe).current_dir(exe.parent().unwrap()),
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

/// A `-l` search skips a library for another machine, as GNU ld does.
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
    // Data 256 MiB away: an adr cannot reach its page, and the patches lld and GNU ld branch to
    // are not written: an error naming the place.
    let args = [
        "-nostdlib",
        "-static",
        "-Wl,-e,main",
        "e.o",
        "-Wl,-Ttext=0x410000",
        "-Wl,--section-start=.fardata=0x10400000",
    ];
    let o = cc(&tmp, false, true, &args, "far");
    assert!(!o.status.success(), "the far link succeeded");
    if testing_rivet() {
        let e = stderr_text(&o);
        for w in [
            "e.o:(.text.e1+0xFF8)",
            "e.o:(.text.e2+0xFFC)",
            "843419",
            "more than 1 MiB away",
            "-mno-fix-cortex-a53-843419",
        ] {
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
/// another target's options, a branch out of its reach (a conditional one, a thunk's).
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
    if have("gcc") {
        std::fs::write(tmp.join("x.c"), "int x(void) { return 1; }\n").unwrap();
        must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "x.c"]));
        fails(&["hello.o", "x.o"], &["x.o: is for machine x86-64 (62), not AArch64", "first ELF input"]);
        fails(&["--fix-cortex-a53-843419", "x.o"], &["--fix-cortex-a53-843419 is not an option for x86-64"]);
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
