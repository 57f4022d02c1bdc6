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
