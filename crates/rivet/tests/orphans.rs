//! `--orphan-handling=place|warn|error|discard` (GNU ld and lld): what becomes of an input
//! section that a linker script's `SECTIONS` does not place. The messages are lld's, naming each
//! orphan and where it goes; `discard` (GNU ld's; lld 19 lacks it) drops them as GNU ld does.
mod common;

use common::*;
use std::process::Command;

const LLD: &str = "ld.lld-19";

const ASM: &str = ".globl _start\n.text\n_start: ret\n.section .foo,\"a\"\n.byte 1\n\
    .section .bar,\"aw\"\n.byte 2\n.data\n.byte 3\n.section .note.GNU-stack,\"\",@progbits\n";
const SCRIPT: &str = "SECTIONS { . = 0x10000; .text : { *(.text) } .data : { *(.data) } }\n";

/// The lines of `text` about input sections (lld also names its own linker-made sections, which
/// are no input's orphans; GNU ld names none of those either).
fn input_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains("is being placed in") && !l.contains("<internal>"))
        .map(|l| l.rsplit_once(": ").map_or(l, |(_, rest)| rest).to_string())
        .collect()
}

fn sections(file: &std::path::Path) -> Vec<String> {
    let out = must(Command::new("readelf").arg("-SW").arg(file));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once("] ").map(|(_, r)| r.split_whitespace().next().unwrap_or("").to_string()))
        .filter(|n| n.starts_with('.'))
        .collect()
}

#[test]
fn orphan_handling_as_lld_and_gnu_ld() {
    if !have("as") || !have("readelf") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("orphans");
    std::fs::write(tmp.join("a.s"), ASM).unwrap();
    std::fs::write(tmp.join("s.ld"), SCRIPT).unwrap();
    must(Command::new("as").current_dir(&tmp.path).args(["a.s", "-o", "a.o"]));
    let run = |linker: &str, mode: &str, out: &str| {
        Command::new(linker)
            .current_dir(&tmp.path)
            .args(["a.o", "-T", "s.ld", "-o", out, &format!("--orphan-handling={mode}")])
            .output()
            .unwrap()
    };
    let ours = linker().display().to_string();
    let want = vec![
        "a.o:(.bss) is being placed in '.bss'".to_string(),
        "a.o:(.foo) is being placed in '.foo'".to_string(),
        "a.o:(.bar) is being placed in '.bar'".to_string(),
    ];
    for mode in ["warn", "error"] {
        let o = run(&ours, mode, &format!("ours-{mode}"));
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.success(), mode == "warn", "{mode}: {e}");
        assert_eq!(input_lines(&e), want, "{mode}");
        assert!(
            e.lines().filter(|l| l.contains("is being placed")).all(|l| l.starts_with(&format!("rivet: {mode}"))),
            "{e}"
        );
        if have(LLD) {
            let l = run(LLD, mode, &format!("lld-{mode}"));
            assert_eq!(input_lines(&String::from_utf8_lossy(&l.stderr)), want, "lld, {mode}");
        }
    }
    assert!(!tmp.join("ours-error").exists(), "an output was left");
    // place: silent; the orphans are in the output.
    let o = run(&ours, "place", "ours-place");
    assert!(o.status.success() && !String::from_utf8_lossy(&o.stderr).contains("placed"));
    let placed = sections(&tmp.join("ours-place"));
    assert!([".foo", ".bar", ".bss"].iter().all(|s| placed.contains(&s.to_string())), "{placed:?}");
    // discard: none of them, as in GNU ld's output.
    let o = run(&ours, "discard", "ours-discard");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours_kept = sections(&tmp.join("ours-discard"));
    assert!(![".foo", ".bar", ".bss"].iter().any(|s| ours_kept.contains(&s.to_string())), "{ours_kept:?}");
    if have("ld.bfd") {
        assert!(run("ld.bfd", "discard", "gnu-discard").status.success());
        let gnu_kept = sections(&tmp.join("gnu-discard"));
        for s in [".text", ".data", ".foo", ".bar", ".bss"] {
            assert_eq!(
                ours_kept.contains(&s.to_string()),
                gnu_kept.contains(&s.to_string()),
                "{s}: {ours_kept:?} {gnu_kept:?}"
            );
        }
    }
    let bad = run(&ours, "bogus", "x");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--orphan-handling: unknown value 'bogus'"));
    tmp.finish();
}
