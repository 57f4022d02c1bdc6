//! mold's own options, which a build that switches from mold keeps passing: each links real C
//! programs with gcc (`gcc -B`, the linker under test) and checks what the option does by running
//! the program and reading the output with readelf, next to GNU ld's (plain gcc) or lld's output
//! where they have the same feature. Covered: `--zero-to-bss`, `--discard-section` /
//! `--no-discard-section`, `--filler`, `--spare-program-headers`, `--start-stop`,
//! `--execute-only` (mold's x86-64 meaning), `--quick-exit` / `--no-quick-exit`, `-repro` and
//! `MOLD_REPRO`, `--physical-image-base`, and unknown options in mold's words.
mod common;

use common::*;
use common::{link_with as link, stderr_text as stderr};
use std::path::{Path, PathBuf};
use std::process::Command;

const LLD: &str = "ld.lld-19";

fn setup(name: &str, sources: &[(&str, &str)]) -> Option<TempDir> {
    let tmp = gcc_readelf_tmp(name)?;
    for (file, text) in sources {
        std::fs::write(tmp.join(file), text).unwrap();
        must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-O1", file]));
    }
    Some(tmp)
}

/// `link` that must succeed; returns the output's path.
fn linked(tmp: &TempDir, ours: bool, args: &[&str], out: &str) -> PathBuf {
    let o = link(tmp, ours, args, out);
    assert!(o.status.success(), "linking {out} with {args:?} failed:\n{}", stderr(&o));
    tmp.join(out)
}

fn run(exe: &Path) -> String {
    String::from_utf8_lossy(&must(&mut Command::new(exe)).stdout).into_owned()
}

fn readelf(flags: &str, file: &Path) -> String {
    String::from_utf8_lossy(&must(Command::new("readelf").arg(flags).arg(file)).stdout).into_owned()
}

/// (type, flags) of every section header line of `readelf -SW`, by section name.
fn section(file: &Path, name: &str) -> Option<(String, String)> {
    readelf("-SW", file).lines().find_map(|l| {
        let rest = l.split_once(']')?.1;
        let f: Vec<&str> = rest.split_whitespace().collect();
        (f.first() == Some(&name)).then(|| (f[1].to_string(), f.get(7).unwrap_or(&"").to_string()))
    })
}

/// The program headers: (type, offset, vaddr, paddr, filesz, memsz, flags).
fn segments(file: &Path) -> Vec<(String, u64, u64, u64, u64, u64, String)> {
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    readelf("-lW", file)
        .lines()
        .filter(|l| l.starts_with("  ") && l.split_whitespace().nth(1).is_some_and(|f| f.starts_with("0x")))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // Flags are 1-3 columns ("R E", "RW", "  E"): what lies between memsz and the alignment.
            let flags = l[..l.rfind("0x").unwrap()].split_whitespace().skip(6).collect::<Vec<_>>().join(" ");
            (f[0].to_string(), hex(f[1]), hex(f[2]), hex(f[3]), hex(f[4]), hex(f[5]), flags)
        })
        .collect()
}

/// A symbol's value in `.symtab`.
fn symbol(file: &Path, name: &str) -> Option<u64> {
    readelf("-sW", file).lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 8 && f[7] == name).then(|| u64::from_str_radix(f[1], 16).unwrap())
    })
}

const HELLO: &str = "#include <stdio.h>\nint main(void) { printf(\"Hello world\\n\"); return 0; }\n";

/// `--zero-to-bss`: a writable section of zeros with no relocations becomes NOBITS (the file
/// shrinks by its size) and the program behaves as GNU ld's; read-only zeros, non-zero data and
/// zeros that a relocation fills stay PROGBITS.
#[test]
fn zero_to_bss() {
    let main = "#include <stdio.h>\n#include <string.h>\n\
        __attribute__((section(\".zero\"))) char zero[65536];\n\
        __attribute__((section(\".const\"))) const char konst[256];\n\
        __attribute__((section(\".ones\"))) int ones[4] = {1, 1, 1, 1};\n\
        static int target;\n\
        __attribute__((section(\".ptr\"))) int *ptr = &target;\n\
        int main(void) {\n\
          int nonzero = 0;\n\
          for (int i = 0; i < 65536; i++) nonzero += zero[i] != 0;\n\
          memset(zero, 7, 100);\n\
          *ptr = 5;\n\
          printf(\"%d %d %d %d %d\\n\", nonzero, zero[99] + zero[100], konst[3], ones[2], target);\n\
          return 0;\n\
        }\n";
    let Some(tmp) = setup("mold-zero-to-bss", &[("main.c", main)]) else { return };
    let bfd = linked(&tmp, false, &["main.o"], "bfd");
    let plain = linked(&tmp, true, &["main.o"], "plain");
    let zero = linked(&tmp, true, &["main.o", "-Wl,--zero-to-bss"], "zero");
    let expected = run(&bfd);
    assert_eq!(expected, "0 7 0 1 5\n");
    assert_eq!(run(&plain), expected);
    assert_eq!(run(&zero), expected);
    assert_eq!(section(&plain, ".zero").unwrap().0, "PROGBITS");
    assert_eq!(section(&zero, ".zero").unwrap().0, "NOBITS");
    for kept in [".const", ".ones", ".ptr"] {
        assert_eq!(section(&zero, kept).unwrap().0, "PROGBITS", "{kept}");
    }
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&zero) + 65536 <= size(&plain), "{} vs {}", size(&zero), size(&plain));
    // A static executable too.
    let st = linked(&tmp, true, &["-static", "main.o", "-Wl,--zero-to-bss"], "static");
    assert_eq!(run(&st), expected);
    assert_eq!(section(&st, ".zero").unwrap().0, "NOBITS");
    tmp.finish();
}

/// `--discard-section=NAME` drops the input sections of that name, `--no-discard-section` takes a
/// name back; a reference to a symbol defined in a discarded section is an error, as GNU ld's and
/// lld's `/DISCARD/` make it.
#[test]
fn discard_section() {
    let main = "__attribute__((section(\".foo\"))) int foo = 1;\n\
        __attribute__((section(\".bar\"))) int bar = 2;\n\
        int main(void) { return 0; }\n";
    let uses = "__attribute__((section(\".used\"))) int used = 3;\nint get(void) { return used; }\n";
    let Some(tmp) = setup("mold-discard-section", &[("main.c", main), ("uses.c", uses)]) else { return };
    let exe0 = linked(&tmp, true, &["main.o"], "exe0");
    assert!(section(&exe0, ".foo").is_some() && section(&exe0, ".bar").is_some());
    let exe1 = linked(&tmp, true, &["main.o", "-Wl,--discard-section=.foo"], "exe1");
    assert!(section(&exe1, ".foo").is_none() && section(&exe1, ".bar").is_some());
    run(&exe1);
    let exe2 = linked(
        &tmp,
        true,
        &["main.o", "-Wl,--discard-section=.foo,--discard-section,.bar,--no-discard-section=.foo"],
        "exe2",
    );
    assert!(section(&exe2, ".foo").is_some() && section(&exe2, ".bar").is_none());
    run(&exe2);
    // GNU ld's way to the same output: /DISCARD/ in a script.
    std::fs::write(tmp.join("discard.ld"), "SECTIONS { /DISCARD/ : { *(.foo) } } INSERT AFTER .data;\n").unwrap();
    let bfd = linked(&tmp, false, &["main.o", "-Wl,-T,discard.ld"], "bfd");
    assert!(section(&bfd, ".foo").is_none() && section(&bfd, ".bar").is_some());
    // A section that code refers to: an error with both, and no output.
    std::fs::write(tmp.join("used.ld"), "SECTIONS { /DISCARD/ : { *(.used) } } INSERT AFTER .data;\n").unwrap();
    let theirs = link(&tmp, false, &["main.o", "uses.o", "-Wl,-T,used.ld"], "bfd-used");
    assert!(!theirs.status.success());
    let ours = link(&tmp, true, &["main.o", "uses.o", "-Wl,--discard-section=.used"], "used");
    assert!(!ours.status.success() && !tmp.join("used").exists());
    if testing_rivet() {
        let e = stderr(&ours);
        assert!(e.contains("relocation refers to a symbol in a discarded section: used"), "{e}");
        assert!(e.contains(">>> defined in uses.o (section .used, --discard-section)"), "{e}");
        assert!(e.contains("uses.o:(get)"), "{e}");
    }
    tmp.finish();
}

/// `--filler=BYTE` fills the output buffer before it is written; every byte is written (padding
/// zeroed), so the output is the same whatever the byte, in both output modes and for a reused
/// output file.
#[test]
fn filler_never_shows() {
    let main = "#include <stdio.h>\n\
        __attribute__((aligned(512))) char hello[] = \"Hello\";\n\
        __attribute__((aligned(4096))) char world[] = \"world\";\n\
        __thread int t = 3;\n\
        int main(void) { printf(\"%s %s %d\\n\", hello, world, t); return 0; }\n";
    let Some(tmp) = setup("mold-filler", &[("main.c", main)]) else { return };
    for (mode, extra) in [("static", &["-static"][..]), ("pie", &[]), ("heap", &["-Wl,--no-mmap-output-file"])] {
        let args = |more: &[&'static str]| -> Vec<&'static str> {
            let mut v = vec!["main.o"];
            v.extend(extra);
            v.extend(more);
            v
        };
        let plain = std::fs::read(linked(&tmp, true, &args(&[]), mode)).unwrap();
        for filler in ["-Wl,--filler,0xfe", "-Wl,--filler=0x00", "-Wl,--filler=ff"] {
            let out = format!("{mode}-filled");
            // Twice: a new file, then the previous output rewritten in place.
            for _ in 0..2 {
                let p = linked(&tmp, true, &args(&[filler]), &out);
                assert!(std::fs::read(&p).unwrap() == plain, "{mode} {filler}: the filler shows in the output");
            }
            assert_eq!(run(&tmp.join(&out)), "Hello world 3\n");
        }
    }
    for bad in ["-Wl,--filler=0x100", "-Wl,--filler=zz"] {
        let o = link(&tmp, true, &["main.o", bad], "bad");
        assert!(!o.status.success(), "{bad}");
        if testing_rivet() {
            assert!(stderr(&o).contains("--filler: expected a byte"), "{}", stderr(&o));
        }
    }
    tmp.finish();
}

/// `--spare-program-headers=N`: N PT_NULL entries after the others; the program still runs.
#[test]
fn spare_program_headers() {
    let Some(tmp) = setup("mold-spare-phdrs", &[("main.c", HELLO)]) else { return };
    let count = |p: &Path, ty: &str| segments(p).iter().filter(|s| s.0 == ty).count();
    let plain = linked(&tmp, true, &["main.o"], "exe0");
    let loads = count(&plain, "LOAD");
    assert_eq!(count(&plain, "NULL"), 0);
    for n in [0, 1, 5] {
        for extra in [&[][..], &["-static"], &["-shared"]] {
            let mut args = vec!["main.o".to_string(), format!("-Wl,--spare-program-headers={n}")];
            args.extend(extra.iter().map(|s| s.to_string()));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = format!("exe{n}{}", extra.join(""));
            let p = linked(&tmp, true, &args, &out);
            let all = segments(&p);
            assert_eq!(count(&p, "NULL"), n, "{out}");
            // The spare entries come last.
            assert!(all.iter().skip(all.len() - n).all(|s| s.0 == "NULL"), "{out}: {all:?}");
            if extra.is_empty() {
                assert_eq!(count(&p, "LOAD"), loads);
                assert_eq!(run(&p), "Hello world\n");
            } else if extra == ["-static"] {
                assert_eq!(run(&p), "Hello world\n");
            }
        }
    }
    tmp.finish();
}

/// `--start-stop`: `__start_NAME`/`__stop_NAME` for every loaded section, NAME being the
/// section's name without its dot, other characters made `_`; without it, GNU ld and the linker
/// under test both refuse the undefined `__start_text`.
#[test]
fn start_stop() {
    let main = "#include <stdio.h>\n#include <stdint.h>\n\
        extern char __start_text[], __stop_text[], __start_data_rel_ro[], __stop_data_rel_ro[];\n\
        __attribute__((section(\".data.rel.ro\"))) const char *const p = \"x\";\n\
        int main(void) {\n\
          uintptr_t m = (uintptr_t)main, s = (uintptr_t)__start_text, e = (uintptr_t)__stop_text;\n\
          uintptr_t r = (uintptr_t)&p, rs = (uintptr_t)__start_data_rel_ro, re = (uintptr_t)__stop_data_rel_ro;\n\
          printf(\"%d %d\\n\", s <= m && m < e, rs <= r && r < re);\n\
          return 0;\n\
        }\n";
    let Some(tmp) = setup("mold-start-stop", &[("main.c", main)]) else { return };
    assert!(!link(&tmp, false, &["main.o"], "bfd").status.success());
    assert!(!link(&tmp, true, &["main.o"], "plain").status.success());
    for extra in [&[][..], &["-static"], &["-no-pie"]] {
        let mut args = vec!["main.o", "-Wl,--start-stop"];
        args.extend(extra);
        let exe = linked(&tmp, true, &args, "exe");
        assert_eq!(run(&exe), "1 1\n", "{extra:?}");
        let text = readelf("-SW", &exe);
        let text_addr = text
            .lines()
            .find(|l| l.contains(" .text "))
            .and_then(|l| {
                l.split_once(']').unwrap().1.split_whitespace().nth(2).map(|a| u64::from_str_radix(a, 16).unwrap())
            })
            .unwrap();
        assert_eq!(symbol(&exe, "__start_text"), Some(text_addr));
        // Every loaded section has its pair, referenced or not.
        for name in ["__start_rodata", "__stop_rodata", "__start_eh_frame", "__stop_init_array", "__start_bss"] {
            assert!(symbol(&exe, name).is_some(), "{extra:?}: {name}");
        }
    }
    tmp.finish();
}

/// `--execute-only` (mold's x86-64 meaning): the code segment is PF_X alone, nothing else shares
/// it (also under `-z noseparate-code`), and the program runs (x86-64 pages stay readable).
#[test]
fn execute_only() {
    let Some(tmp) = setup("mold-execute-only", &[("main.c", HELLO)]) else { return };
    for extra in [&[][..], &["-Wl,-z,noseparate-code"], &["-static"], &["-shared"]] {
        let mut args = vec!["main.o", "-Wl,--execute-only"];
        args.extend(extra);
        let exe = linked(&tmp, true, &args, "exe");
        let segs = segments(&exe);
        let loads: Vec<_> = segs.iter().filter(|s| s.0 == "LOAD").collect();
        let code: Vec<_> = loads.iter().filter(|s| s.6.contains('E')).collect();
        assert_eq!(code.len(), 1, "{extra:?}: {segs:?}");
        assert_eq!(code[0].6, "E", "{extra:?}: {segs:?}");
        // The code segment holds code only (the headers and read-only data are elsewhere).
        assert!(code[0].1 > 0);
        let (ty, flags) = section(&exe, ".rodata").unwrap_or_default();
        if !ty.is_empty() {
            assert!(!flags.contains('X'));
        }
        if extra != ["-shared"] {
            assert_eq!(run(&exe), "Hello world\n", "{extra:?}");
        }
    }
    tmp.finish();
}

/// `--quick-exit` (the default) and `--no-quick-exit` (the link tears down its memory before
/// exiting) give the same output.
#[test]
fn quick_exit() {
    let Some(tmp) = setup("mold-quick-exit", &[("main.c", HELLO)]) else { return };
    let plain = std::fs::read(linked(&tmp, true, &["main.o"], "plain")).unwrap();
    for flag in ["-Wl,-no-quick-exit", "-Wl,--quick-exit", "-Wl,--no-quick-exit"] {
        let exe = linked(&tmp, true, &["main.o", flag], "exe");
        assert_eq!(run(&exe), "Hello world\n");
        assert!(std::fs::read(&exe).unwrap() == plain, "{flag}");
    }
    tmp.finish();
}

/// `-repro` (and `MOLD_REPRO`): OUTPUT.repro.tar, whose `OUTPUT.repro/response.txt` replays the
/// link with the linker under test and with GNU ld; nothing without them.
#[test]
fn repro() {
    if !have("tar") {
        return;
    }
    let Some(tmp) = setup("mold-repro", &[("main.c", HELLO)]) else { return };
    linked(&tmp, true, &["main.o"], "exe");
    assert!(!tmp.join("exe.repro.tar").exists());
    for (flag, env) in [("-Wl,-repro", None), ("-Wl,--repro", None), ("", Some("1"))] {
        let _ = std::fs::remove_dir_all(tmp.join("exe.repro"));
        let _ = std::fs::remove_file(tmp.join("exe.repro.tar"));
        let mut cmd = Command::new("gcc");
        cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(&tmp)).args(["main.o", "-o", "exe"]);
        if !flag.is_empty() {
            cmd.arg(flag);
        }
        if let Some(v) = env {
            cmd.env("MOLD_REPRO", v);
        }
        must(&mut cmd);
        assert_eq!(run(&tmp.join("exe")), "Hello world\n");
        let list = String::from_utf8_lossy(
            &must(Command::new("tar").current_dir(&tmp.path).args(["tf", "exe.repro.tar"])).stdout,
        )
        .into_owned();
        assert!(list.lines().any(|l| l.starts_with("exe.repro/") && l.ends_with("/main.o")), "{list}");
        assert!(list.lines().any(|l| l == "exe.repro/response.txt"), "{list}");
        must(Command::new("tar").current_dir(&tmp.path).args(["xf", "exe.repro.tar"]));
        let job = tmp.join("exe.repro");
        let response = std::fs::read_to_string(job.join("response.txt")).unwrap();
        assert!(response.contains("/main.o") && !response.lines().any(|l| l.ends_with("-repro")), "{response}");
        must(Command::new(linker()).arg("@response.txt").current_dir(&job));
        assert_eq!(run(&job.join("exe")), "Hello world\n");
        if have("ld.bfd") {
            must(Command::new("ld.bfd").args(["@response.txt", "-o", "by-bfd"]).current_dir(&job));
            assert_eq!(run(&job.join("by-bfd")), "Hello world\n");
        }
        if testing_rivet() {
            let version = std::fs::read_to_string(job.join("version.txt")).unwrap();
            assert!(version.starts_with("rivet ") && version.contains("mold"), "{version}");
        }
    }
    tmp.finish();
}

/// `--physical-image-base=ADDR`: the first PT_LOAD's physical address is ADDR and the later ones
/// follow it packed (mold's rule once virtual and physical addresses part); `__phys_start_foo`
/// and `__phys_stop_foo` are section foo's physical bounds, defined whether referenced or not.
#[test]
fn physical_image_base() {
    let main = "#include <stdio.h>\n\
        __attribute__((section(\"foo\"))) int bar = 5;\n\
        __attribute__((section(\"baz\"))) int qux = 6;\n\
        extern char __phys_start_foo[], __phys_stop_foo[];\n\
        int main(void) { printf(\"%lx %lx %d\\n\", (long)__phys_start_foo, (long)__phys_stop_foo, bar); return 0; }\n";
    let Some(tmp) = setup("mold-physical-image-base", &[("main.c", main)]) else { return };
    let exe = linked(
        &tmp,
        true,
        &["-no-pie", "main.o", "-Wl,--image-base=0x200000", "-Wl,--physical-image-base=0x800000"],
        "exe",
    );
    let loads: Vec<_> = segments(&exe).into_iter().filter(|s| s.0 == "LOAD").collect();
    assert_eq!((loads[0].2, loads[0].3), (0x200000, 0x800000), "{loads:?}");
    // Packed: each segment's physical image follows the previous one's.
    for w in loads.windows(2) {
        assert_eq!(w[1].3, w[0].3 + w[0].5, "{loads:?}");
    }
    let foo = readelf("-SW", &exe)
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_once(']')?.1.split_whitespace().collect();
            (f[0] == "foo").then(|| (u64::from_str_radix(f[2], 16).unwrap(), u64::from_str_radix(f[4], 16).unwrap()))
        })
        .unwrap();
    let seg = loads.iter().find(|s| s.2 <= foo.0 && foo.0 < s.2 + s.5).unwrap();
    let phys = seg.3 + (foo.0 - seg.2);
    assert_eq!(run(&exe), format!("{phys:x} {:x} 5\n", phys + foo.1));
    // Unreferenced ones too.
    assert!(symbol(&exe, "__phys_start_baz").is_some() && symbol(&exe, "__phys_stop_baz").is_some());
    // Without the option, physical addresses are the virtual ones (GNU ld's too).
    let plain = linked(
        &tmp,
        true,
        &["-no-pie", "main.o", "-Wl,--defsym=__phys_start_foo=0,--defsym=__phys_stop_foo=0"],
        "plain",
    );
    let bfd = linked(
        &tmp,
        false,
        &["-no-pie", "main.o", "-Wl,--defsym=__phys_start_foo=0,--defsym=__phys_stop_foo=0"],
        "bfd",
    );
    for p in [plain, bfd] {
        assert!(segments(&p).iter().all(|s| s.2 == s.3), "{}", p.display());
    }
    tmp.finish();
}

/// Unknown options: an error naming the option in mold's words (`unknown command line option:
/// --abcdefg`); an unknown `-z` keyword a warning, in lld's words and mold's, spelled as given.
#[test]
fn unknown_options() {
    let Some(tmp) = setup("mold-cmdline", &[("main.c", HELLO)]) else { return };
    let ld = |args: &[&str]| Command::new(linker()).current_dir(&tmp.path).args(args).output().unwrap();
    for opt in ["-abcdefg", "--abcdefg"] {
        let o = ld(&[opt, "main.o", "-o", "x"]);
        assert_eq!(o.status.code(), Some(1));
        assert!(!tmp.join("x").exists());
        if testing_rivet() {
            assert!(stderr(&o).contains(&format!("error: unknown command line option: {opt}")), "{}", stderr(&o));
        }
    }
    for (args, spelled) in [(&["-zfoo"][..], "-zfoo"), (&["-z", "foo"], "-z foo")] {
        // Alone, the warning comes before the refusal of a command line without inputs.
        let o = ld(args);
        assert_eq!(o.status.code(), Some(1));
        let e = stderr(&o);
        if testing_rivet() {
            let warning = format!("warning: unknown -z value: foo (unknown command line option: {spelled})");
            assert!(e.contains(&warning), "{e}");
            assert!(e.find(&warning) < e.find("no input files"), "{e}");
        }
        if have(LLD) {
            let theirs = Command::new(LLD).args(args).output().unwrap();
            assert!(stderr(&theirs).contains("warning: unknown -z value: foo"));
        }
    }
    // With inputs, the link goes on (lld's and GNU ld's behaviour).
    let mut args = vec!["-Wl,-z,foo", "main.o"];
    let exe = linked(&tmp, true, &args, "exe");
    assert_eq!(run(&exe), "Hello world\n");
    args.push("-Wl,--fatal-warnings");
    assert!(!link(&tmp, true, &args, "fatal").status.success());
    tmp.finish();
}

const ORDERED: &str = "#include <stdio.h>\n\
    __attribute__((section(\".fn1\"))) void fn1(void) { printf(\" fn1\"); }\n\
    __attribute__((section(\".fn2\"))) void fn2(void) { printf(\" fn2\"); }\n\
    int x = 5; int y;\n\
    __thread int t = 2; __thread int tb;\n\
    int main(void) { fn1(); fn2(); printf(\" Hello %d %d %d %d\\n\", x, y, t, tb); return 0; }\n";

/// The address of a section, from `readelf -SW`.
fn section_addr(file: &Path, name: &str) -> u64 {
    readelf("-SW", file)
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_once(']')?.1.split_whitespace().collect();
            (f[0] == name).then(|| u64::from_str_radix(f[2], 16).unwrap())
        })
        .unwrap_or_else(|| panic!("{}: no section {name}", file.display()))
}

/// `--section-order`: sections at the addresses the words give, the ELF header and the program
/// header table where `EHDR` and `PHDR` put them (`e_phoff` follows), `!SYM` symbols at the
/// current address, `%ALIGN`; the programs run and print what GNU ld's default layout prints
/// (dynamic, static with TLS, PIE). Errors: an address going backward, a section no word covers,
/// an ELF header off a page boundary, EHDR not first, a clash with `-Ttext`.
#[test]
fn section_order() {
    if !have("gcc") || !have("readelf") {
        return;
    }
    let tmp = TempDir::new("mold-section-order");
    std::fs::write(tmp.join("main.c"), ORDERED).unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-fno-PIC", "main.c", "-o", "nopic.o"]));
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-fPIE", "main.c", "-o", "pie.o"]));
    let expected = run(&linked(&tmp, false, &["-no-pie", "nopic.o"], "bfd"));
    assert_eq!(expected, " fn1 fn2 Hello 5 0 2 0\n");
    let order = |spec: &str| format!("-Wl,--section-order={spec}");
    let exe1 = linked(
        &tmp,
        true,
        &["-no-pie", "nopic.o", &order("=0x100000 EHDR PHDR =0x200000 .fn2 TEXT =0x300000 .fn1 DATA BSS RODATA")],
        "exe1",
    );
    assert_eq!(run(&exe1), expected);
    assert_eq!((section_addr(&exe1, ".fn2"), section_addr(&exe1, ".fn1")), (0x200000, 0x300000));
    let exe2 = linked(
        &tmp,
        true,
        &["-no-pie", "nopic.o", &order("=0x200000 EHDR RODATA =0x300000 PHDR =0x400000 .fn2 TEXT DATA BSS")],
        "exe2",
    );
    assert_eq!(run(&exe2), expected);
    assert_eq!(section_addr(&exe2, ".fn2"), 0x400000);
    assert_eq!(symbol(&exe2, "__ehdr_start"), Some(0x200000));
    let segs = segments(&exe2);
    let phdr = segs.iter().find(|s| s.0 == "PHDR").unwrap();
    assert_eq!(phdr.2, 0x300000, "{segs:?}");
    // The table is where PT_PHDR says, and e_phoff says so too.
    let header = readelf("-hW", &exe2);
    assert!(header.contains(&format!("Start of program headers:          {} (bytes into file)", phdr.1)), "{header}");
    // Code, read-only data and data never share a page; no RELRO segment.
    let loads: Vec<_> = segs.iter().filter(|s| s.0 == "LOAD").collect();
    for w in loads.windows(2) {
        assert!(w[0].2 + w[0].5 <= w[1].2 & !0xfff, "{loads:?}");
    }
    assert!(!segs.iter().any(|s| s.0 == "GNU_RELRO"));
    let exe3 = linked(
        &tmp,
        true,
        &[
            "-no-pie",
            "nopic.o",
            &order(
                "=0x200000 !ehdr_start EHDR %0x20 !rodata_start RODATA =0x300000 !phdr_start PHDR %4096 \
                 !phdr_end =0x400000 !text_start TEXT DATA BSS",
            ),
        ],
        "exe3",
    );
    assert_eq!(run(&exe3), expected);
    for (name, value) in [
        ("ehdr_start", 0x200000),
        ("rodata_start", 0x200040),
        ("phdr_start", 0x300000),
        ("phdr_end", 0x301000),
        ("text_start", 0x400000),
    ] {
        assert_eq!(symbol(&exe3, name), Some(value), "{name}");
    }
    // A static executable (TLS included) and a PIE.
    let spec = order("=0x200000 EHDR RODATA =0x300000 PHDR =0x400000 .fn2 TEXT DATA BSS");
    assert_eq!(run(&linked(&tmp, true, &["-static", "nopic.o", &spec], "static")), expected);
    let pie = linked(&tmp, true, &["-pie", "pie.o", &order("EHDR PHDR TEXT RODATA DATA BSS")], "pie");
    assert_eq!(run(&pie), expected);
    let refused = [
        ("=0x800000 EHDR PHDR =0x200000 .fn2 TEXT =0x300000 .fn1 DATA BSS RODATA", "address goes backward"),
        ("EHDR PHDR TEXT DATA", "missing section specification for"),
        ("=0x200010 EHDR PHDR TEXT RODATA DATA BSS", "must be page-aligned"),
        ("TEXT EHDR PHDR RODATA DATA BSS", "EHDR must come before every section"),
        (".fn1 EHDR PHDR TEXT RODATA DATA BSS", "EHDR must be the first section specifier"),
    ];
    for (spec, why) in refused {
        let o = link(&tmp, true, &["-no-pie", "nopic.o", &order(spec)], "bad");
        assert!(!o.status.success() && !tmp.join("bad").exists(), "{spec}");
        if testing_rivet() {
            assert!(stderr(&o).contains(why), "{spec}: {}", stderr(&o));
        }
    }
    let o = link(
        &tmp,
        true,
        &["-no-pie", "nopic.o", &order("EHDR PHDR TEXT RODATA DATA BSS"), "-Wl,-Ttext=0x500000"],
        "bad",
    );
    assert!(!o.status.success());
    if testing_rivet() {
        assert!(stderr(&o).contains("--section-order may not be used with -Ttext"), "{}", stderr(&o));
    }
    // With --physical-image-base: segments that start where the physical image is stay in step.
    let phys = linked(
        &tmp,
        true,
        &[
            "-static",
            "nopic.o",
            "-Wl,--physical-image-base=0x800000",
            &order("=0x800000 TEXT RODATA =0x900000 DATA BSS"),
        ],
        "phys",
    );
    let loads: Vec<_> = segments(&phys).into_iter().filter(|s| s.0 == "LOAD").collect();
    assert!(loads.iter().filter(|s| s.6 != "RW").all(|s| s.2 == s.3), "{loads:?}");
    assert_eq!(loads[0].3, 0x800000);
    tmp.finish();
}
