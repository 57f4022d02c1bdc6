//! What linking the Linux kernel needs of rivet beyond ordinary programs, each checked against GNU ld
//! on a small input: GNU ld's `--warn-rwx-segments` (its default) and `--no-warn-rwx-segments`
//! (the kernel passes the latter to GNU ld for its decompressor and vmlinux, whose segments are
//! RWX by design), writable code ("awx") placed in a writable segment that is also executable,
//! and `-m elf_i386` (the real-mode setup code) refused by naming the emulation. The whole kernel
//! build and boot is scripts/kernel-test.sh.
mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output};

fn setup(name: &str) -> Option<TempDir> {
    if !have("as") || !have("readelf") || !have("ld.bfd") {
        eprintln!("skipped: as, readelf or ld.bfd missing");
        return None;
    }
    Some(TempDir::new(name))
}

fn assemble(tmp: &TempDir, name: &str, src: &str) {
    std::fs::write(tmp.join(&format!("{name}.s")), src).unwrap();
    must(Command::new("as").current_dir(&tmp.path).args([&format!("{name}.s"), "-o", &format!("{name}.o")]));
}

/// Runs GNU ld (`ours` false) or the linker under test on `args` in the test's directory.
fn ld(tmp: &TempDir, ours: bool, args: &[&str]) -> Output {
    let prog = if ours { linker() } else { "ld.bfd".into() };
    Command::new(prog).current_dir(&tmp.path).args(args).output().unwrap()
}

/// readelf's program headers: (type, flags, memsz) of each PT_LOAD and PT_TLS.
fn segments(file: &Path) -> Vec<(String, String, u64)> {
    let out = String::from_utf8_lossy(&must(Command::new("readelf").arg("-lW").arg(file)).stdout).into_owned();
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w.first() != Some(&"LOAD") && w.first() != Some(&"TLS") {
                return None;
            }
            // Type Offset VirtAddr PhysAddr FileSiz MemSiz Flg... Align: the flags are the words
            // between MemSiz and Align ("R E" is two words).
            let flags = w[6..w.len() - 1].join("");
            Some((w[0].to_string(), flags, u64::from_str_radix(w[5].trim_start_matches("0x"), 16).unwrap()))
        })
        .collect()
}

fn has_rwx_load(file: &Path) -> bool {
    segments(file).iter().any(|(t, f, m)| t == "LOAD" && f == "RWE" && *m > 0)
}

fn warned_rwx(o: &Output) -> bool {
    stderr_text(o).contains("has a LOAD segment with RWX permissions")
}

const START: &str = ".globl _start\n.text\n_start: ret\n.data\n.quad 1\n.section .note.GNU-stack,\"\",@progbits\n";
const AWX: &str = ".globl _start\n.text\n_start:\n  movb $2, code_in_data(%rip)\n  ret\n\
    .data\n.quad 1\n.section .wx,\"awx\",@progbits\n.globl code_in_data\ncode_in_data: .byte 1\n\
    .section .note.GNU-stack,\"\",@progbits\n";

/// An ordinary executable has no RWX segment and no warning; `-N` (one segment for everything)
/// and a PHDRS FLAGS(7) segment have one, and both linkers warn, naming the output; after
/// `--no-warn-rwx-segments` neither says anything, and the last of the two options wins.
#[test]
fn rwx_segments_are_warned_about_as_gnu_ld_does() {
    let Some(tmp) = setup("kernel-rwx") else { return };
    assemble(&tmp, "a", START);
    std::fs::write(
        tmp.join("phdrs.lds"),
        "PHDRS { all PT_LOAD FLAGS(7); }\nSECTIONS { . = 0x400000; .text : { *(.text) } :all .data : { *(.data) } :all }\n",
    )
    .unwrap();
    for ours in [false, true] {
        let who = if ours { "rivet" } else { "GNU ld" };
        let plain = ld(&tmp, ours, &["a.o", "-o", "plain"]);
        assert!(plain.status.success() && !warned_rwx(&plain), "{who}: {}", stderr_text(&plain));
        assert!(!has_rwx_load(&tmp.join("plain")), "{who}");
        for (args, out) in [(&["-N"][..], "omagic"), (&["-T", "phdrs.lds"][..], "scripted")] {
            let mut all = vec!["a.o", "-o", out];
            all.extend_from_slice(args);
            let o = ld(&tmp, ours, &all);
            assert!(o.status.success(), "{who} {args:?}: {}", stderr_text(&o));
            assert!(has_rwx_load(&tmp.join(out)), "{who} {args:?}: {:?}", segments(&tmp.join(out)));
            assert!(warned_rwx(&o), "{who} {args:?} did not warn: {}", stderr_text(&o));
            if ours && testing_rivet() {
                assert!(
                    stderr_text(&o).contains(&format!("rivet: warning: {out} has a LOAD segment")),
                    "{}",
                    stderr_text(&o)
                );
            }
            all.push("--no-warn-rwx-segments");
            let quiet = ld(&tmp, ours, &all);
            assert!(quiet.status.success() && !warned_rwx(&quiet), "{who} {all:?}: {}", stderr_text(&quiet));
            all.push("--warn-rwx-segments");
            assert!(warned_rwx(&ld(&tmp, ours, &all)), "{who} {all:?}: the last option wins");
            // With --fatal-warnings the warning fails the link.
            let mut fatal = vec!["--fatal-warnings"];
            fatal.extend_from_slice(&all);
            assert!(!ld(&tmp, ours, &fatal).status.success(), "{who} {fatal:?}");
        }
        // A relocatable output has no segments and no warning.
        let r = ld(&tmp, ours, &["-N", "-r", "a.o", "-o", "r.o"]);
        assert!(r.status.success() && !warned_rwx(&r), "{who} -r: {}", stderr_text(&r));
    }
    tmp.finish();
}

/// Writable code ("awx") goes to a writable segment that is executable too, as GNU ld and lld
/// place it (never the read-only code segment, where the program's write to it would fault): the
/// program writes to it and exits 0, and both linkers warn about the RWX segment.
#[test]
fn writable_code_gets_a_writable_executable_segment() {
    let Some(tmp) = setup("kernel-awx") else { return };
    let exit = "  mov $60, %eax\n  xor %edi, %edi\n  syscall\n";
    assemble(&tmp, "w", &AWX.replace("  ret\n", exit));
    for ours in [false, true] {
        let who = if ours { "rivet" } else { "GNU ld" };
        let out = if ours { "ours" } else { "gnu" };
        let o = ld(&tmp, ours, &["w.o", "-o", out]);
        assert!(o.status.success(), "{who}: {}", stderr_text(&o));
        assert!(warned_rwx(&o), "{who}: {}", stderr_text(&o));
        assert!(has_rwx_load(&tmp.join(out)), "{who}: {:?}", segments(&tmp.join(out)));
        // The code segment stays R E: only the segment holding .wx is RWE.
        assert!(segments(&tmp.join(out)).iter().any(|(t, f, _)| t == "LOAD" && f == "RE"), "{who}");
        let sections =
            String::from_utf8_lossy(&must(Command::new("readelf").arg("-SW").arg(tmp.join(out))).stdout).into_owned();
        assert!(sections.lines().any(|l| l.contains(" .wx ") && l.contains("WAX")), "{who}: {sections}");
        let run = Command::new(tmp.join(out)).status().unwrap();
        assert!(run.success(), "{who}: the write to .wx: {run}");
    }
    tmp.finish();
}

/// The real-mode setup code links with `-m elf_i386`: rivet cannot write i386 output and says so,
/// naming the emulation, with no output left behind (GNU ld links it; the kernel test hands exactly
/// those links to GNU ld).
#[test]
fn i386_emulation_is_refused_by_name() {
    let Some(tmp) = setup("kernel-i386") else { return };
    assemble(&tmp, "a", START);
    for args in [&["-m", "elf_i386"][..], &["-melf_i386"][..], &["-m", "elf32_x86_64"][..]] {
        let mut all = args.to_vec();
        all.extend_from_slice(&["a.o", "-o", "out"]);
        let o = ld(&tmp, true, &all);
        assert!(!o.status.success(), "{args:?}");
        assert!(!tmp.join("out").exists(), "{args:?}: no output");
        if testing_rivet() {
            let text = stderr_text(&o);
            let emulation = args.last().unwrap().trim_start_matches("-m");
            assert!(text.contains(&format!("rivet: error: -m {emulation}: the ")), "{text}");
            assert!(text.contains("target is not supported") && text.contains("elf_x86_64"), "{text}");
        }
    }
    // The one it writes is accepted.
    let o = ld(&tmp, true, &["-m", "elf_x86_64", "a.o", "-o", "out"]);
    assert!(o.status.success(), "{}", stderr_text(&o));
    tmp.finish();
}
