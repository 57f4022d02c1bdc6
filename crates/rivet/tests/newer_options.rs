//! Options of the newest GNU ld and lld releases that build systems start to pass. Where the
//! installed GNU ld (2.40) or lld (19) predates an option, the test checks its documented effect
//! on the output with `readelf`/`objdump` and runs the program against GNU ld's build.
mod common;

use common::*;
use std::path::Path;
use std::process::Command;

const PROGRAM: &str = "#include <stdio.h>\n#include <string.h>\n\
    int main(void) { puts(\"hello\"); return (int)strlen(\"abc\") - 3; }\n";

fn tool(cmd: &str, args: &[&str], file: &Path) -> String {
    String::from_utf8_lossy(&must(Command::new(cmd).args(args).arg(file)).stdout).into_owned()
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or_else(|_| panic!("not hex: {s}"))
}

/// `-z mark-plt` (GNU ld 2.41): DT_X86_64_PLT/PLTSZ/PLTENT name the section holding the PLT
/// entries (`.plt.sec` in an IBT PLT) and each R_X86_64_JUMP_SLOT's addend is the address of its
/// entry's indirect `jmp` through that very slot; `-z nomark-plt` and the default leave both out.
#[test]
fn z_mark_plt() {
    if !have("gcc") || !have("objdump") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("mark-plt");
    std::fs::write(tmp.join("m.c"), PROGRAM).unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-fPIC", "m.c"]));
    must(Command::new("gcc").current_dir(&tmp.path).args(["m.o", "-o", "gnu"]));
    let want = must(&mut Command::new(tmp.join("gnu")));
    for (name, flags) in [
        ("lazy", &["-Wl,-z,mark-plt"][..]),
        ("now", &["-Wl,-z,mark-plt", "-Wl,-z,now"][..]),
        ("ibt", &["-Wl,-z,mark-plt", "-Wl,-z,ibtplt"][..]),
        ("shared", &["-Wl,-z,mark-plt", "-shared"][..]),
        ("undone", &["-Wl,-z,mark-plt", "-Wl,-z,nomark-plt"][..]),
        ("default", &[][..]),
    ] {
        let out = tmp.join(name);
        must(
            Command::new("gcc")
                .current_dir(&tmp.path)
                .arg("-B")
                .arg(linker_dir(&tmp))
                .arg("m.o")
                .args(flags)
                .arg("-o")
                .arg(&out),
        );
        if name != "shared" {
            let got = Command::new(&out).output().unwrap();
            assert_eq!((got.status.code(), &got.stdout), (want.status.code(), &want.stdout), "{name}");
        }
        let dynamic = tool("readelf", &["-dW"], &out);
        let tag = |t: &str| {
            dynamic.lines().find(|l| l.trim_start().starts_with(t)).map(|l| hex(l.split_whitespace().last().unwrap()))
        };
        let relocs = tool("readelf", &["-rW"], &out);
        let slots: Vec<(u64, u64)> = relocs
            .lines()
            .filter(|l| l.contains("R_X86_64_JUMP_SLOT"))
            .map(|l| (hex(l.split_whitespace().next().unwrap()), hex(l.rsplit(" + ").next().unwrap())))
            .collect();
        assert!(!slots.is_empty(), "{name}: no JUMP_SLOT relocations:\n{relocs}");
        if matches!(name, "undone" | "default") {
            assert_eq!(tag("0x0000000070000000"), None, "{name}:\n{dynamic}");
            assert!(slots.iter().all(|&(_, a)| a == 0), "{name}: {slots:?}");
            continue;
        }
        let entries = if name == "ibt" { ".plt.sec" } else { ".plt" };
        let headers = tool("readelf", &["-SW"], &out);
        let line = headers.lines().find(|l| l.contains(&format!(" {entries} "))).unwrap();
        let f: Vec<&str> = line.split_whitespace().collect();
        let at = f.iter().position(|x| *x == entries).unwrap();
        let (addr, size) = (hex(f[at + 2]), hex(f[at + 4]));
        assert_eq!(tag("0x0000000070000000"), Some(addr), "{name}: DT_X86_64_PLT\n{dynamic}");
        assert_eq!(tag("0x0000000070000001"), Some(size), "{name}: DT_X86_64_PLTSZ");
        assert_eq!(tag("0x0000000070000003"), Some(16), "{name}: DT_X86_64_PLTENT");
        let code = tool("objdump", &["-d", "--no-show-raw-insn", "-j", entries], &out);
        for (slot, branch) in slots {
            assert!((addr..addr + size).contains(&branch), "{name}: {branch:#x} is not in {entries}");
            let insn = code
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{branch:x}:")))
                .unwrap_or_else(|| panic!("{name}: no instruction at {branch:x}\n{code}"));
            assert!(insn.contains("jmp") && insn.contains(&format!("# {slot:x}")), "{name}: {insn}");
        }
    }
    tmp.finish();
}

/// A program with several functions and data objects, each in a section of its own, and a C++
/// exception (its unwind tables must survive the padding).
const SECTIONED: &str = "#include <cstdio>\n#include <stdexcept>\n\
    extern \"C\" __attribute__((noinline)) int cold1(int x) { return x + 1; }\n\
    extern \"C\" __attribute__((noinline)) int hot1(int x) { return x * 2; }\n\
    extern \"C\" __attribute__((noinline)) int cold2(int x) { if (x > 100) throw std::runtime_error(\"big\"); return x - 3; }\n\
    extern \"C\" __attribute__((noinline)) int hot2(int x) { return x * 5; }\n\
    extern \"C\" { int big_table[16] = {1}; int small_var = 7; const char message[] = \"sum\"; }\n\
    int main() { int s = hot1(1) + hot2(2) + cold1(3) + cold2(4) + big_table[0] + small_var;\n\
      try { cold2(1000); } catch (const std::exception &e) { std::printf(\"caught %s\\n\", e.what()); }\n\
      std::printf(\"%s %d\\n\", message, s); return 0; }\n";

fn sectioned(name: &str) -> Option<TempDir> {
    if !have("g++") || !have("nm") || !testing_rivet() {
        return None;
    }
    let tmp = TempDir::new(name);
    std::fs::write(tmp.join("s.cpp"), SECTIONED).unwrap();
    must(Command::new("g++").current_dir(&tmp.path).args([
        "-c",
        "-O1",
        "-ffunction-sections",
        "-fdata-sections",
        "s.cpp",
    ]));
    must(Command::new("g++").current_dir(&tmp.path).args(["s.o", "-o", "gnu"]));
    Some(tmp)
}

fn link_ours(tmp: &TempDir, out: &str, flags: &[&str]) -> std::process::Output {
    Command::new("g++")
        .current_dir(&tmp.path)
        .arg("-B")
        .arg(linker_dir(tmp))
        .arg("s.o")
        .args(flags)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

/// Symbol name → address, from nm.
fn addresses(file: &Path) -> std::collections::BTreeMap<String, u64> {
    tool("nm", &[], file)
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 3).then(|| (w[2].to_string(), hex(w[0])))
        })
        .collect()
}

/// `--randomize-section-padding=SEED` (lld 20): the program runs as GNU ld's build does, its
/// functions and data move by amounts that depend on the seed (the same seed gives the same
/// file), and the first section of a later segment no longer starts where it did.
#[test]
fn randomize_section_padding() {
    let Some(tmp) = sectioned("random-padding") else { return };
    let want = must(&mut Command::new(tmp.join("gnu"))).stdout;
    let mut layouts = Vec::new();
    for (out, flags) in [
        ("plain", &[][..]),
        ("seed6", &["-Wl,--randomize-section-padding=6"][..]),
        ("seed46", &["-Wl,--randomize-section-padding=46"][..]),
        ("again46", &["-Wl,--randomize-section-padding=46"][..]),
    ] {
        let o = link_ours(&tmp, out, flags);
        assert!(o.status.success(), "{out}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(must(&mut Command::new(tmp.join(out))).stdout, want, "{out}");
        layouts.push(addresses(&tmp.join(out)));
    }
    let pick = |l: &std::collections::BTreeMap<String, u64>| -> Vec<u64> {
        ["hot1", "hot2", "cold1", "cold2", "big_table", "small_var"].iter().map(|s| l[*s]).collect()
    };
    assert_ne!(pick(&layouts[0]), pick(&layouts[1]), "seed 6 moved nothing");
    assert_ne!(pick(&layouts[1]), pick(&layouts[2]), "seeds 6 and 46 give the same layout");
    assert_eq!(std::fs::read(tmp.join("seed46")).unwrap(), std::fs::read(tmp.join("again46")).unwrap());
    // Padding before sections: the gaps between consecutive functions grow somewhere.
    let gaps = |l: &std::collections::BTreeMap<String, u64>| {
        let mut v: Vec<u64> = ["cold1", "hot1", "cold2", "hot2"].iter().map(|s| l[*s]).collect();
        v.sort();
        v.windows(2).map(|w| w[1] - w[0]).sum::<u64>()
    };
    assert!(gaps(&layouts[1]) > gaps(&layouts[0]) || gaps(&layouts[2]) > gaps(&layouts[0]));
    // Padding at segment starts: a later PT_LOAD's first section lies past the segment's start.
    let segment_gaps = |out: &str| -> Vec<u64> {
        let file = tmp.join(out);
        let loads: Vec<u64> = tool("readelf", &["-lW"], &file)
            .lines()
            .filter(|l| l.trim_start().starts_with("LOAD"))
            .map(|l| hex(l.split_whitespace().nth(2).unwrap()))
            .collect();
        let starts: Vec<u64> = tool("readelf", &["-SW"], &file)
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let at = f.iter().position(|x| x.starts_with('.'))?;
                let addr = hex(f.get(at + 2)?);
                (addr != 0).then_some(addr)
            })
            .collect();
        loads[1..].iter().map(|&v| starts.iter().filter(|&&a| a >= v).min().unwrap() - v).collect()
    };
    assert!(segment_gaps("plain").iter().all(|&g| g == 0), "{:?}", segment_gaps("plain"));
    assert!(segment_gaps("seed46").iter().any(|&g| g > 0), "{:?}", segment_gaps("seed46"));
    let bad = link_ours(&tmp, "bad", &["-Wl,--randomize-section-padding=many"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--randomize-section-padding: expected a number"));
    tmp.finish();
}

/// `--section-ordering-file` (GNU ld 2.43): the sections its descriptions match go first in the
/// output sections they name, in the file's order (a new name makes a new output section); the
/// program runs as GNU ld's build does. What it may not hold is refused, naming the file.
#[test]
fn section_ordering_file() {
    let Some(tmp) = sectioned("section-ordering") else { return };
    let want = must(&mut Command::new(tmp.join("gnu"))).stdout;
    std::fs::write(
        tmp.join("order.txt"),
        "/* hot code first */\n.text : {\n  *(.text.hot2)\n  s.o(.text.hot1)\n}\n.data : { *(.data.small_var) }\n\
         .hotdata : { *(.data.big_table) }\n",
    )
    .unwrap();
    let o = link_ours(&tmp, "ordered", &["-Wl,--section-ordering-file,order.txt"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let exe = tmp.join("ordered");
    assert_eq!(must(&mut Command::new(&exe)).stdout, want);
    let a = addresses(&exe);
    let text = tool("readelf", &["-SW"], &exe);
    let start = |name: &str| {
        let l = text.lines().find(|l| l.contains(&format!(" {name} "))).unwrap_or_else(|| panic!("no {name}:\n{text}"));
        let f: Vec<&str> = l.split_whitespace().collect();
        hex(f[f.iter().position(|x| *x == name).unwrap() + 2])
    };
    assert_eq!(a["hot2"], start(".text"), "hot2 starts .text");
    assert!(a["hot2"] < a["hot1"] && a["hot1"] < a["cold1"] && a["hot1"] < a["cold2"] && a["hot1"] < a["main"]);
    assert_eq!(a["small_var"], start(".data"), "small_var starts .data");
    assert_eq!(a["big_table"], start(".hotdata"), "big_table went to .hotdata");
    for (text, why) in [
        ("x = 1;\n", "an assignment or ASSERT in SECTIONS"),
        (".text : { KEEP(*(.text.hot1)) }\n", "KEEP or SORT in .text"),
        (".text 0x1000 : { *(.text.hot1) }\n", "an address, type, alignment or region in .text"),
        (".text : { *(.text.hot1) \n", "order.bad"),
    ] {
        std::fs::write(tmp.join("order.bad"), text).unwrap();
        let o = link_ours(&tmp, "bad", &["-Wl,--section-ordering-file=order.bad"]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && e.contains("--section-ordering-file order.bad") && e.contains(why),
            "{text:?}: {e}"
        );
    }
    std::fs::write(tmp.join("script.ld"), "SECTIONS { .text : { *(.text*) } .data : { *(.data*) } }\n").unwrap();
    let o = link_ours(&tmp, "bad", &["-Wl,--section-ordering-file=order.txt", "-Wl,-T,script.ld"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("not supported together with a linker script's SECTIONS"));
    tmp.finish();
}

const BRANCHES_ASM: &str = r#".text
.globl main
.type main,@function
main:
  sub $8, %rsp
  call tramp1
  mov %eax, %edi
  call tramp2
  add %eax, %edi
  cmp $100, %edi
  jne fail
  xor %eax, %eax
  add $8, %rsp
  ret
fail:
  mov $1, %eax
  add $8, %rsp
  ret
.section .text.t1,"ax",@progbits
.globl tramp1
.type tramp1,@function
tramp1:
  jmp tramp1b
.section .text.t1b,"ax",@progbits
.globl tramp1b
.type tramp1b,@function
tramp1b:
  jmp real1
.section .text.t2,"ax",@progbits
.globl tramp2
.type tramp2,@function
tramp2:
  jmp self_loop_guard
.section .text.r,"ax",@progbits
.globl real1
.type real1,@function
real1:
  mov $42, %eax
  ret
.globl self_loop_guard
.type self_loop_guard,@function
self_loop_guard:
  mov $58, %eax
  ret
.section .note.GNU-stack,"",@progbits
"#;

/// `--branch-to-branch` (lld 21, on at `-O2`): calls and jumps to a `jmp` go straight to where
/// the chain of jumps ends; the program exits as before. Off by default, with
/// `--no-branch-to-branch`, and with `--emit-relocs` (whose relocations would no longer match the
/// code).
#[test]
fn branch_to_branch() {
    if !have("gcc") || !have("objdump") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("branch-to-branch");
    std::fs::write(tmp.join("b.s"), BRANCHES_ASM).unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "b.s"]));
    for (out, flags, direct) in [
        ("default", &[][..], false),
        ("on", &["-Wl,--branch-to-branch"][..], true),
        ("o2", &["-Wl,-O2"][..], true),
        ("o2-off", &["-Wl,-O2", "-Wl,--no-branch-to-branch"][..], false),
        ("emit", &["-Wl,--branch-to-branch", "-Wl,--emit-relocs"][..], false),
    ] {
        must(
            Command::new("gcc")
                .current_dir(&tmp.path)
                .arg("-B")
                .arg(linker_dir(&tmp))
                .arg("b.o")
                .args(flags)
                .arg("-o")
                .arg(out),
        );
        assert_eq!(Command::new(tmp.join(out)).status().unwrap().code(), Some(0), "{out}");
        let code = tool("objdump", &["-d", "--no-show-raw-insn"], &tmp.join(out));
        let calls: Vec<&str> = code.lines().filter(|l| l.contains("call ") || l.contains("jmp ")).collect();
        let says =
            |from_insn: &str, to: &str| calls.iter().any(|l| l.contains(from_insn) && l.contains(&format!("<{to}>")));
        if direct {
            assert!(says("call", "real1") && says("call", "self_loop_guard"), "{out}: {calls:#?}");
            assert!(says("jmp", "real1") && !says("call", "tramp1"), "{out}: {calls:#?}");
        } else {
            assert!(says("call", "tramp1") && says("call", "tramp2") && says("jmp", "tramp1b"), "{out}: {calls:#?}");
        }
    }
    tmp.finish();
}
