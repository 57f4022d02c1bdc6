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

/// The PLT ranges (address, end) of a linked program's `.plt*` sections.
fn plt_ranges(file: &Path) -> Vec<(u64, u64)> {
    let out = String::from_utf8_lossy(&must(Command::new("readelf").arg("-SW").arg(file)).stdout).into_owned();
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let at = w.iter().position(|f| f.starts_with(".plt"))?;
            let addr = u64::from_str_radix(w.get(at + 2)?, 16).ok()?;
            let size = u64::from_str_radix(w.get(at + 4)?, 16).ok()?;
            Some((addr, addr + size))
        })
        .collect()
}

/// The pc ranges of the FDEs in a program's `.eh_frame`.
fn fde_ranges(file: &Path) -> Vec<(u64, u64)> {
    let out = String::from_utf8_lossy(&must(Command::new("readelf").arg("--debug-dump=frames").arg(file)).stdout)
        .into_owned();
    out.lines()
        .filter(|l| l.contains(" FDE "))
        .filter_map(|l| {
            let pc = l.split("pc=").nth(1)?;
            let (a, b) = pc.split_once("..")?;
            Some((u64::from_str_radix(a, 16).ok()?, u64::from_str_radix(b.trim(), 16).ok()?))
        })
        .collect()
}

/// `--no-ld-generated-unwind-info` (the kernel's decompressor asks for it): GNU ld then writes no
/// FDE for its PLT, which is what rivet writes with or without the option (lld's behaviour): the
/// program's FDEs cover its own code only, as many as GNU ld's, and it runs.
#[test]
fn no_ld_generated_unwind_info_matches_gnu_ld() {
    if !have("gcc") || !have("readelf") {
        eprintln!("skipped: gcc or readelf missing");
        return;
    }
    let tmp = TempDir::new("kernel-unwind");
    std::fs::write(tmp.join("p.c"), "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n").unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-O2", "p.c"]));
    let gnu_default = link_with(&tmp, false, &["p.o"], "gnu-default");
    assert!(gnu_default.status.success());
    let plt_fdes = |exe: &str| {
        let plts = plt_ranges(&tmp.join(exe));
        assert!(!plts.is_empty(), "{exe}: a PLT");
        fde_ranges(&tmp.join(exe)).iter().filter(|(a, _)| plts.iter().any(|(s, e)| s <= a && a < e)).count()
    };
    // Without the option GNU ld describes its PLT: the option has something to turn off there.
    assert!(plt_fdes("gnu-default") > 0);
    let mut counts = Vec::new();
    for (ours, exe) in [(false, "gnu"), (true, "ours"), (true, "ours-default")] {
        let args: &[&str] =
            if exe == "ours-default" { &["p.o"] } else { &["p.o", "-Wl,--no-ld-generated-unwind-info"] };
        let o = link_with(&tmp, ours, args, exe);
        assert!(o.status.success(), "{exe}: {}", stderr_text(&o));
        assert_eq!(plt_fdes(exe), 0, "{exe}: no FDE for the PLT");
        counts.push(fde_ranges(&tmp.join(exe)).len());
        assert_eq!(String::from_utf8_lossy(&must(&mut Command::new(tmp.join(exe))).stdout), "hi\n");
    }
    assert!(counts.iter().all(|&c| c == counts[0] && c > 0), "FDE counts {counts:?}");
    tmp.finish();
}

/// The kernel's vmlinux.lds: `.notes : AT(...) { __start_notes = .; KEEP(*(.note.*)) __stop_notes = .; }`
/// in a PT_NOTE of its own, linked with `--build-id=sha1`.
const NOTES_SCRIPT: &str = "PHDRS { text PT_LOAD FLAGS(5); note PT_NOTE FLAGS(4); }
SECTIONS {
  . = 0x400000 + SIZEOF_HEADERS;
  .text : AT(ADDR(.text) - 0x100000) { *(.text) } :text
  .notes : AT(ADDR(.notes) - 0x100000) { __start_notes = .; KEEP(*(.note.*)) __stop_notes = .; } :text :note
  .data : AT(ADDR(.data) - 0x100000) { *(.data) } :text
}
";

const NOTE_OBJECT: &str = ".globl _start\n.text\n_start: ret\n.section .note.mine,\"a\",@note\n.balign 4\n\
    .long 6, 4, 1\n.asciz \"Linux\"\n.balign 4\n.long 0\n.data\n.quad 1\n.section .note.GNU-stack,\"\",@progbits\n";

/// (offset, vaddr, paddr, filesz) of the PT_NOTE segments.
fn note_segments(file: &Path) -> Vec<(String, String, String, String)> {
    let out = String::from_utf8_lossy(&must(Command::new("readelf").arg("-lW").arg(file)).stdout).into_owned();
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.first() == Some(&"NOTE")).then(|| (w[1].into(), w[2].into(), w[3].into(), w[4].into()))
        })
        .collect()
}

/// The build-id note is an input section to a script, as GNU ld and lld have it: the kernel's
/// `*(.note.*)` takes it into `.notes`, between `__start_notes` and `__stop_notes` (the kernel
/// reads its build-id there) and inside the PT_NOTE, whose physical address is the section's load
/// address (AT), not its virtual one. Both linkers give the same section sizes, the same notes, the
/// same symbols and the same PT_NOTE.
#[test]
fn build_id_note_goes_where_the_script_puts_note_sections() {
    let Some(tmp) = setup("kernel-build-id") else { return };
    assemble(&tmp, "a", NOTE_OBJECT);
    std::fs::write(tmp.join("notes.lds"), NOTES_SCRIPT).unwrap();
    let mut facts = Vec::new();
    for ours in [false, true] {
        let who = if ours { "rivet" } else { "GNU ld" };
        let out = if ours { "ours" } else { "gnu" };
        let o = ld(&tmp, ours, &["-T", "notes.lds", "--build-id=sha1", "a.o", "-o", out]);
        assert!(o.status.success(), "{who}: {}", stderr_text(&o));
        let file = tmp.join(out);
        let sections =
            String::from_utf8_lossy(&must(Command::new("readelf").arg("-SW").arg(&file)).stdout).into_owned();
        assert!(!sections.contains(".note.gnu.build-id"), "{who}: no section of its own\n{sections}");
        let notes_line = sections.lines().find(|l| l.contains(" .notes ")).expect(".notes").to_string();
        let w: Vec<&str> = notes_line.split_whitespace().collect();
        let at = w.iter().position(|f| *f == ".notes").unwrap();
        let (addr, size) = (u64::from_str_radix(w[at + 2], 16).unwrap(), u64::from_str_radix(w[at + 4], 16).unwrap());
        // One 12-byte note with "Linux" (8) and a 4-byte descriptor, one with "GNU" and 20 bytes.
        assert_eq!(size, 24 + 36, "{who}: {notes_line}");
        let nm = String::from_utf8_lossy(&must(Command::new("nm").arg(&file)).stdout).into_owned();
        let sym = |name: &str| {
            let line = nm.lines().find(|l| l.ends_with(&format!(" {name}"))).unwrap_or_else(|| panic!("{who}: {name}"));
            u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).unwrap()
        };
        assert_eq!((sym("__start_notes"), sym("__stop_notes")), (addr, addr + size), "{who}");
        let notes = String::from_utf8_lossy(&must(Command::new("readelf").arg("-nW").arg(&file)).stdout).into_owned();
        let owners: Vec<&str> = notes
            .lines()
            .filter_map(|l| l.split_whitespace().next().filter(|o| *o == "GNU" || *o == "Linux"))
            .collect();
        assert_eq!(owners.len(), 2, "{who}: {notes}");
        let id_line = notes.lines().find(|l| l.contains("Build ID:")).unwrap_or_else(|| panic!("{who}: {notes}"));
        let id = id_line.rsplit(' ').next().unwrap();
        assert!(id.len() == 40 && id.chars().any(|c| c != '0'), "{who}: a filled-in sha1-sized id: {id_line}");
        let phdr = note_segments(&file);
        assert_eq!(phdr.len(), 1, "{who}");
        assert_eq!(
            u64::from_str_radix(phdr[0].2.trim_start_matches("0x"), 16).unwrap(),
            addr - 0x100000,
            "{who}: paddr"
        );
        facts.push((size, owners.iter().map(|s| s.to_string()).collect::<Vec<_>>(), phdr));
    }
    assert_eq!(facts[0], facts[1], "GNU ld, then rivet");
    tmp.finish();
}

/// Defined dynamic symbols, by name (GNU ld's version-name symbol, ABS with the version's own
/// name, left out: lld and rivet write none).
fn defined_dynsyms(file: &Path) -> Vec<String> {
    let out = String::from_utf8_lossy(&must(Command::new("readelf").arg("--dyn-syms").arg("-W").arg(file)).stdout)
        .into_owned();
    let mut v: Vec<String> = out
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() >= 8 && w[0].trim_end_matches(':').parse::<u32>().is_ok() && w[6] != "UND")
                .then(|| w[7].to_string())
        })
        .filter(|n| n != "V1")
        .collect();
    v.sort();
    v
}

/// The vDSO's link: a shared object whose script assigns symbols (`vvar_page = vvar_start;`) and
/// whose `VERSION { ... local: *; }` hides everything but the functions it names. The script's
/// and --defsym's symbols are hidden too (GNU ld and lld export only `foo@@V1`), and stay in
/// `.symtab`, where the kernel's vdso2c reads them.
#[test]
fn version_script_local_hides_script_and_defsym_symbols() {
    let Some(tmp) = setup("kernel-vdso-locals") else { return };
    assemble(&tmp, "a", ".globl foo\n.text\nfoo: ret\n.section .note.GNU-stack,\"\",@progbits\n");
    std::fs::write(
        tmp.join("vdso.lds"),
        "SECTIONS {\n  vvar_start = . - 2 * 4096;\n  vvar_page = vvar_start;\n  . = SIZEOF_HEADERS;\n  \
         .text : { *(.text) }\n  .dynamic : { *(.dynamic) }\n}\nVERSION { V1 { global: foo; local: *; }; }\n",
    )
    .unwrap();
    for ours in [false, true] {
        let who = if ours { "rivet" } else { "GNU ld" };
        let out = if ours { "ours.so" } else { "gnu.so" };
        let o = ld(&tmp, ours, &["-shared", "-T", "vdso.lds", "--defsym=dsym=0x10", "a.o", "-o", out]);
        assert!(o.status.success(), "{who}: {}", stderr_text(&o));
        assert_eq!(defined_dynsyms(&tmp.join(out)), ["foo@@V1"], "{who}");
        let nm = String::from_utf8_lossy(&must(Command::new("nm").arg(tmp.join(out))).stdout).into_owned();
        for name in ["vvar_start", "vvar_page"] {
            assert!(nm.lines().any(|l| l.ends_with(&format!(" {name}"))), "{who}: {name} in .symtab\n{nm}");
        }
    }
    tmp.finish();
}
