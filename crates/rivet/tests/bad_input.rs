//! Bad input never crashes the linker, never leaves a partial or temp file, and never touches an
//! existing output: every case must exit 1 with `rivet: error:` naming the culprit.
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const OLD: &[u8] = b"previous output, must survive a failed link";

struct Case {
    tmp: TempDir,
}

impl Case {
    fn new(name: &str) -> Option<Case> {
        if !have("gcc") {
            eprintln!("skipped: gcc missing");
            return None;
        }
        let tmp = TempDir::new(&format!("bad-{name}"));
        std::fs::create_dir_all(tmp.join("out")).unwrap();
        std::fs::write(tmp.join("out/a.out"), OLD).unwrap();
        Some(Case { tmp })
    }

    fn object(&self, name: &str, source: &str) -> PathBuf {
        let c = self.tmp.join(&format!("{name}.c"));
        std::fs::write(&c, source).unwrap();
        let o = self.tmp.join(&format!("{name}.o"));
        must(Command::new("gcc").arg("-c").arg(&c).arg("-o").arg(&o));
        o
    }

    fn output(&self) -> PathBuf {
        self.tmp.join("out/a.out")
    }

    /// Runs the linker with `args` (`-o OUT` added unless given) and checks every promise; returns
    /// stderr for case-specific checks.
    fn fails(&self, args: &[&Path], names: &[&str]) -> String {
        self.fails_with(args, names, true)
    }

    fn fails_with(&self, args: &[&Path], names: &[&str], add_output: bool) -> String {
        let mut cmd = Command::new(linker());
        cmd.arg("-static");
        if add_output {
            cmd.arg("-o").arg(self.output());
        }
        cmd.args(args);
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{}: expected exit 1\n{stderr}", render(&cmd));
        if testing_rivet() {
            assert!(stderr.starts_with("rivet: error:"), "{stderr}");
            for n in names {
                assert!(stderr.contains(n), "stderr does not name '{n}':\n{stderr}");
            }
        }
        assert_eq!(files_in(&self.tmp.join("out")), vec!["a.out"], "a temp file or new output was left behind");
        assert_eq!(std::fs::read(self.output()).unwrap(), OLD, "the existing output was changed");
        stderr
    }
}

#[test]
fn not_an_elf_file() {
    let Some(c) = Case::new("text") else { return };
    let f = c.tmp.join("notes.o");
    std::fs::write(&f, "this is not an object file\n").unwrap();
    c.fails(&[&f], &["notes.o", "unknown file type"]);
    c.tmp.finish();
}

#[test]
fn truncated_object() {
    let Some(c) = Case::new("truncated") else {
        return;
    };
    let o = c.object("whole", "int f(void) { return 1; }\n");
    let cut = c.tmp.join("cut.o");
    std::fs::write(&cut, &std::fs::read(&o).unwrap()[..100]).unwrap();
    c.fails(&[&cut], &["cut.o"]);
    c.tmp.finish();
}

#[test]
fn object_for_another_machine() {
    let Some(c) = Case::new("machine") else {
        return;
    };
    let o = c.object("arm", "int f(void) { return 1; }\n");
    let mut bytes = std::fs::read(&o).unwrap();
    bytes[18..20].copy_from_slice(&183u16.to_le_bytes()); // EM_AARCH64
    std::fs::write(&o, bytes).unwrap();
    c.fails(&[&o], &["arm.o", "AArch64", "not x86-64"]);
    c.tmp.finish();
}

#[test]
fn corrupt_archive_header() {
    let Some(c) = Case::new("archive") else {
        return;
    };
    let o = c.object("member", "int g(void) { return 2; }\n");
    let main = c.object("main", "int g(void); int main(void) { return g(); }\n");
    let lib = c.tmp.join("libbad.a");
    must(Command::new("ar").arg("rcs").arg(&lib).arg(&o));
    let mut bytes = std::fs::read(&lib).unwrap();
    bytes[8 + 48..8 + 58].copy_from_slice(b"99999x9999");
    std::fs::write(&lib, bytes).unwrap();
    c.fails(&[&main, &lib], &["libbad.a", "size"]);
    c.tmp.finish();
}

#[test]
fn undefined_symbol() {
    let Some(c) = Case::new("undef") else { return };
    let o = c.object("caller", "int missing_fn(void);\nint main(void) { return missing_fn(); }\n");
    let err = c.fails(&[&o], &["undefined symbol: missing_fn", ">>> referenced by", "caller.o:(main)"]);
    assert!(!testing_rivet() || !err.contains("_start"), "the missing default entry must not be an error:\n{err}");
    c.tmp.finish();
}

#[test]
fn duplicate_symbol() {
    let Some(c) = Case::new("dup") else { return };
    let a = c.object("first", "int dup = 1;\nint main(void) { return dup; }\n");
    let b = c.object("second", "int dup = 2;\n");
    c.fails(&[&a, &b], &["duplicate symbol: dup", "first.o", "second.o"]);
    c.tmp.finish();
}

#[test]
fn missing_input_and_library() {
    let Some(c) = Case::new("missing") else {
        return;
    };
    c.fails(&[Path::new("/nonexistent/input.o")], &["/nonexistent/input.o"]);
    c.fails(&[Path::new("-lrivet_no_such_library")], &["-lrivet_no_such_library"]);
    c.tmp.finish();
}

#[test]
fn bad_command_lines() {
    let Some(c) = Case::new("cmdline") else {
        return;
    };
    c.fails(&[Path::new("--frobnicate")], &["--frobnicate"]);
    let rsp = c.tmp.join("self.rsp");
    std::fs::write(&rsp, format!("@{}", rsp.display())).unwrap();
    let at = PathBuf::from(format!("@{}", rsp.display()));
    c.fails(&[&at], &["self.rsp", "includes itself"]);
    c.tmp.finish();
}

#[test]
fn output_directory_missing_or_read_only() {
    let Some(c) = Case::new("outdir") else { return };
    let o = c.object("ok", "int main(void) { return 0; }\n");
    let missing = c.tmp.join("no/such/dir/a.out");
    let mut cmd = Command::new(linker());
    cmd.args(["-static", "-e", "main", "-o"]).arg(&missing).arg(&o);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!testing_rivet() || stderr.contains("no/such/dir/a.out"), "{stderr}");
    assert!(!c.tmp.join("no").exists());
    // Root ignores directory permissions; a read-only mount refuses even root.
    let ro = c.tmp.join("ro");
    std::fs::create_dir_all(&ro).unwrap();
    std::fs::write(ro.join("a.out"), OLD).unwrap();
    let mounted = Command::new("mount").args(["--bind"]).arg(&ro).arg(&ro).status().is_ok_and(|s| s.success())
        && Command::new("mount").args(["-o", "remount,bind,ro"]).arg(&ro).status().is_ok_and(|s| s.success());
    if mounted {
        let mut cmd = Command::new(linker());
        cmd.args(["-static", "-e", "main", "-o"]).arg(ro.join("a.out")).arg(&o);
        let out = cmd.output().unwrap();
        let listing = files_in(&ro);
        let content = std::fs::read(ro.join("a.out")).unwrap();
        let _ = Command::new("umount").arg(&ro).status();
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(listing, vec!["a.out"]);
        assert_eq!(content, OLD);
    } else {
        eprintln!("read-only case skipped: cannot bind-mount read-only here");
    }
    c.tmp.finish();
}

#[test]
fn output_path_is_a_directory() {
    let Some(c) = Case::new("outisdir") else {
        return;
    };
    let o = c.object("ok", "int main(void) { return 0; }\n");
    let dir = c.tmp.join("out");
    let mut cmd = Command::new(linker());
    cmd.args(["-static", "-e", "main", "-o"]).arg(&dir).arg(&o);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    if testing_rivet() {
        assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory"));
    }
    assert_eq!(files_in(&dir), vec!["a.out"]);
    c.tmp.finish();
}

#[test]
fn lto_object_is_refused() {
    let Some(c) = Case::new("lto") else { return };
    let src = c.tmp.join("lto.c");
    std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
    let o = c.tmp.join("lto.o");
    must(Command::new("gcc").args(["-flto", "-c"]).arg(&src).arg("-o").arg(&o));
    c.fails(&[&o], &["lto.o", "LTO"]);
    c.tmp.finish();
}

#[test]
fn shared_library_undefined_with_z_defs() {
    let Some(c) = Case::new("zdefs") else { return };
    let src = c.tmp.join("lib.c");
    std::fs::write(&src, "int missing_in_lib(void);\nint api(void) { return missing_in_lib(); }\n").unwrap();
    let o = c.tmp.join("lib.o");
    must(Command::new("gcc").args(["-fPIC", "-c"]).arg(&src).arg("-o").arg(&o));
    let out = Command::new(linker()).args(["-shared", "-z", "defs", "-o"]).arg(c.output()).arg(&o).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    if testing_rivet() {
        assert!(stderr.contains("undefined symbol: missing_in_lib") && stderr.contains("lib.o:(api)"), "{stderr}");
    }
    assert_eq!(std::fs::read(c.output()).unwrap(), OLD);
    assert_eq!(files_in(&c.tmp.join("out")), vec!["a.out"]);
    c.tmp.finish();
}

#[test]
fn output_that_is_also_an_input_is_refused() {
    let Some(c) = Case::new("outinput") else { return };
    let o = c.object("self", "int main(void) { return 0; }\n");
    let before = std::fs::read(&o).unwrap();
    let out = Command::new(linker()).args(["-static", "-e", "main", "-o"]).arg(&o).arg(&o).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    if testing_rivet() {
        assert!(stderr.contains("is also an input"), "{stderr}");
    }
    assert_eq!(std::fs::read(&o).unwrap(), before, "the input was overwritten");
    c.tmp.finish();
}
