//! Reports on `--gc-sections`: `--print-gc-sections` into a file (lld's `--print-gc-sections=FILE`)
//! says what stderr says, and the sections GNU ld drops from the same object; `--why-live=GLOB`
//! (lld 21) explains why each matching symbol survived with lld's chain of `>>> kept live by`
//! lines. lld 19, installed here, predates `--why-live`: the expected chains are those lld's own
//! tests give for the same assembly (every case: a symbol reached directly, one that shares its
//! section, a reference through a section symbol inside and outside a sized symbol, a retained
//! section, an absolute, an undefined and a shared library's symbol, a dead one, globs).
mod common;

use common::*;
use std::process::Command;

const WHY_LIVE_ASM: &str = r#".globl _start
.section ._start,"ax",@progbits
_start:
jmp test_simple
jmp .Llocal
jmp .Llocal_within_symbol
jmp test_shared
.size _start, .-_start

.globl test_simple
.section .test_simple,"ax",@progbits
test_simple:
jmp test_simple
jmp test_from_unsized

.globl test_incidental
test_incidental:
jmp test_incidental

.globl test_from_unsized
.section .test_from_unsized,"ax",@progbits
test_from_unsized:
jmp test_from_unsized

.globl test_dead
.section .test_dead,"ax",@progbits
test_dead:
jmp test_dead

.globl test_absolute
test_absolute = 1234

.globl test_retained
.section .test_retained,"axR",@progbits
test_retained:
jmp test_retained

.globl test_section_offset
.section .test_section_offset,"ax",@progbits
test_section_offset:
jmp test_section_offset
.Llocal:
jmp test_section_offset

.globl test_section_offset_within_symbol
.section .test_section_offset_within_symbol,"ax",@progbits
test_section_offset_within_symbol:
jmp test_section_offset_within_symbol
.Llocal_within_symbol:
jmp test_section_offset_within_symbol
.size test_section_offset_within_symbol, .-test_section_offset_within_symbol
"#;

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn why_live_explains_as_lld_does() {
    if !have("as") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("why-live");
    std::fs::write(tmp.join("t.s"), WHY_LIVE_ASM).unwrap();
    std::fs::write(
        tmp.join("s.s"),
        ".globl test_shared\n.section .test_shared,\"ax\",@progbits\ntest_shared: jmp test_shared\n",
    )
    .unwrap();
    must(Command::new("as").current_dir(&tmp.path).args(["t.s", "-o", "t.o"]));
    must(Command::new("as").current_dir(&tmp.path).args(["s.s", "-o", "s.o"]));
    must(Command::new(linker()).current_dir(&tmp.path).args(["-shared", "s.o", "-o", "s.so"]));
    let why = |globs: &[&str]| {
        let mut cmd = Command::new(linker());
        cmd.current_dir(&tmp.path).args(["t.o", "s.so", "-o", "out", "--gc-sections", "-u", "test_undef"]);
        for g in globs {
            cmd.arg(format!("--why-live={g}"));
        }
        stdout(&must(&mut cmd))
    };
    let cases: &[(&str, &str)] = &[
        ("test_simple", "live symbol: test_simple\n>>> kept live by _start\n"),
        (
            "test_incidental",
            "live symbol: test_incidental\n>>> kept live by t.o:(.test_simple)\n>>> kept live by test_simple\n>>> kept live by _start\n",
        ),
        (
            "test_from_unsized",
            "live symbol: test_from_unsized\n>>> kept live by t.o:(.test_simple)\n>>> kept live by test_simple\n>>> kept live by _start\n",
        ),
        ("test_dead", ""),
        ("test_undef", "live symbol: test_undef\n"),
        ("test_absolute", "live symbol: test_absolute\n"),
        ("test_retained", "live symbol: test_retained\n>>> kept live by t.o:(.test_retained)\n"),
        (
            "test_section_offset",
            "live symbol: test_section_offset\n>>> kept live by t.o:(.test_section_offset)\n>>> kept live by _start\n",
        ),
        ("test_section_offset_within_symbol", "live symbol: test_section_offset_within_symbol\n>>> kept live by _start\n"),
        ("test_shared", "live symbol: test_shared\n>>> kept live by _start\n"),
    ];
    for (glob, want) in cases {
        assert_eq!(why(&[glob]), *want, "--why-live={glob}");
    }
    // A glob, and several options, give the union.
    let glob = why(&["test_s*"]);
    let two = why(&["test_simple", "test_shared"]);
    for text in [&glob, &two] {
        assert!(text.contains("live symbol: test_simple\n>>> kept live by _start\n"), "{text}");
        assert!(text.contains("live symbol: test_shared\n>>> kept live by _start\n"), "{text}");
    }
    assert!(glob.contains("live symbol: test_section_offset\n"), "{glob}");
    // Without --gc-sections nothing is collected: said, not ignored.
    let out = must(Command::new(linker()).current_dir(&tmp.path).args([
        "t.o",
        "s.so",
        "-o",
        "out",
        "--why-live=test_simple",
    ]));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("warning: --why-live has no effect without --gc-sections"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tmp.finish();
}

/// `--print-gc-sections=FILE` writes what `--print-gc-sections` prints on stderr (`-`: standard
/// output), and for the test's own object names the sections GNU ld removes.
#[test]
fn print_gc_sections_to_a_file() {
    if !have("gcc") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("gc-print-file");
    std::fs::write(
        tmp.join("g.c"),
        "#include <stdio.h>\nint used(int x) { return x * 3; }\nint unused_fn(int x) { return x - 1; }\n\
         int unused_data[64] = {1};\nint main(void) { printf(\"%d\\n\", used(14)); return 0; }\n",
    )
    .unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-ffunction-sections", "-fdata-sections", "g.c"]));
    let link = |ours: bool, flag: &str| {
        let mut cmd = Command::new("gcc");
        cmd.current_dir(&tmp.path);
        if ours {
            cmd.arg("-B").arg(linker_dir(&tmp));
        }
        must(cmd.args(["g.o", "-o", "out", "-Wl,--gc-sections"]).arg(format!("-Wl,{flag}")))
    };
    // The lines about g.o, as "section in file" pairs, whoever printed them.
    let ours_of = |text: &str| -> Vec<String> {
        let mut v: Vec<String> = text
            .lines()
            .filter(|l| l.contains("removing unused section") && l.contains("'g.o'"))
            .map(|l| l.split("removing unused section ").nth(1).unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    let on_stderr = ours_of(&String::from_utf8_lossy(&link(true, "--print-gc-sections").stderr));
    let quiet = link(true, "--print-gc-sections=removed.txt");
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("removing unused"), "the file's lines went to stderr too");
    let in_file = ours_of(&std::fs::read_to_string(tmp.join("removed.txt")).unwrap());
    let on_stdout = ours_of(&stdout(&link(true, "--print-gc-sections=-")));
    let gnu = ours_of(&String::from_utf8_lossy(&link(false, "--print-gc-sections").stderr));
    assert_eq!(on_stderr, vec!["'.data.unused_data' in file 'g.o'", "'.text.unused_fn' in file 'g.o'"]);
    assert_eq!(in_file, on_stderr);
    assert_eq!(on_stdout, on_stderr);
    assert_eq!(gnu, on_stderr, "GNU ld removes other sections of g.o");
    // A file that cannot be written fails the link, naming it.
    let bad = Command::new("gcc")
        .current_dir(&tmp.path)
        .arg("-B")
        .arg(linker_dir(&tmp))
        .args(["g.o", "-o", "out2", "-Wl,--gc-sections", "-Wl,--print-gc-sections=no/such/dir/x"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && e.contains("cannot write --print-gc-sections output to no/such/dir/x"), "{e}");
    assert!(!tmp.join("out2").exists(), "an output was left");
    tmp.finish();
}
