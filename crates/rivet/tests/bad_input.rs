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
        self.fails_as(&["-static"], args, names, add_output)
    }

    /// `fails_with` for a link of another kind (`mode`: `-pie`, or nothing for a dynamic
    /// executable) than the static default.
    fn fails_as(&self, mode: &[&str], args: &[&Path], names: &[&str], add_output: bool) -> String {
        let mut cmd = Command::new(linker());
        cmd.args(mode).args(["-e", "main"]);
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
    // An empty file too (any text is read as a linker script, but not nothing at all).
    let empty = c.tmp.join("empty.o");
    std::fs::write(&empty, "").unwrap();
    c.fails(&[&empty], &["empty.o", "unknown file type"]);
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

/// Every command-line object that cannot be parsed is named, wherever it stands, and nothing
/// else is said: the objects are parsed while earlier ones are added, and what the good ones
/// would give (a duplicate, an undefined symbol) is not reported beside the parse errors.
#[test]
fn every_unparseable_object_and_nothing_else() {
    let Some(c) = Case::new("unparseable") else {
        return;
    };
    let main = c.object("main", "int missing(void);\nint main(void) { return missing(); }\n");
    let again = c.object("again", "int main(void) { return 2; }\n");
    let whole = std::fs::read(&main).unwrap();
    let (cut1, cut2) = (c.tmp.join("cut1.o"), c.tmp.join("cut2.o"));
    std::fs::write(&cut1, &whole[..100]).unwrap();
    std::fs::write(&cut2, &whole[..200]).unwrap();
    let stderr = c.fails(&[&main, &cut1, &again, &cut2], &["cut1.o", "cut2.o"]);
    for unsaid in ["duplicate symbol", "undefined symbol", "missing"] {
        assert!(!stderr.contains(unsaid), "a parse failure's link said '{unsaid}':\n{stderr}");
    }
    c.tmp.finish();
}

#[test]
fn object_for_another_machine() {
    let Some(c) = Case::new("machine") else {
        return;
    };
    // (AArch64 objects are linked: the machine here is one rivet does not link.)
    let o = c.object("riscv", "int f(void) { return 1; }\n");
    let mut bytes = std::fs::read(&o).unwrap();
    bytes[18..20].copy_from_slice(&243u16.to_le_bytes()); // EM_RISCV
    std::fs::write(&o, bytes).unwrap();
    c.fails(&[&o], &["riscv.o", "RISC-V", "not one rivet links (x86-64, AArch64)"]);
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
fn shared_library_in_a_static_link() {
    let Some(c) = Case::new("static-so") else { return };
    let main = c.object("main", "int lib(void); int main(void) { return lib(); }\n");
    let lib = c.object("lib", "int lib(void) { return 0; }\n");
    let so = c.tmp.join("libx.so");
    must(Command::new("gcc").arg("-shared").arg(&lib).arg("-o").arg(&so));
    let err = c.fails(&[&main, &so], &["attempted static link of a dynamic object", "libx.so"]);
    assert!(!err.contains("internal error"), "{err}");
    c.tmp.finish();
}

/// A copy relocation of a protected variable, or any under `-z nocopyreloc`, is refused (the
/// library would keep using its own copy): GNU ld's error, with lld's advice.
#[test]
fn copy_relocation_refused() {
    let Some(c) = Case::new("copyrel") else { return };
    let lib = c.object("lib", "__attribute__((visibility(\"protected\"))) int prot = 1;\nint plain = 2;\n");
    let so = c.tmp.join("libv.so");
    must(Command::new("gcc").arg("-shared").arg(&lib).arg("-o").arg(&so));
    let use_prot = c.object("useprot", "extern int prot; int main(void) { return prot; }\n");
    let use_plain = c.object("useplain", "extern int plain; int main(void) { return plain; }\n");
    if testing_rivet() {
        let protected = ["cannot create a copy relocation for protected symbol 'prot'", "recompile with -fPIC"];
        c.fails_as(&[], &[&use_prot, &so], &protected, true);
        let nocopy = ["cannot create a copy relocation for 'plain'", "-z nocopyreloc"];
        c.fails_as(&[], &[Path::new("-z"), Path::new("nocopyreloc"), &use_plain, &so], &nocopy, true);
    }
    c.tmp.finish();
}

/// Absolute 32-bit relocations in a position-independent output: lld's message and advice.
#[test]
fn absolute_relocation_in_a_pie() {
    let Some(c) = Case::new("abs32-pie") else { return };
    let c_src = c.tmp.join("abs.c");
    std::fs::write(&c_src, "int value = 3;\nint main(void) { return *(volatile int *)&value - 3; }\n").unwrap();
    let obj = c.tmp.join("abs.o");
    must(Command::new("gcc").args(["-c", "-fno-pic", "-mcmodel=small"]).arg(&c_src).arg("-o").arg(&obj));
    let names = ["cannot be used against symbol 'value'", "recompile with -fPIC", "abs.o:(main)"];
    c.fails_as(&["-pie"], &[&obj], &names, true);
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

/// A compiled object opened for surgery: its section headers by name, fields patched in place.
struct Elf {
    bytes: Vec<u8>,
}

impl Elf {
    fn open(path: &Path) -> Elf {
        Elf { bytes: std::fs::read(path).unwrap() }
    }

    fn u16_at(&self, off: usize) -> usize {
        u16::from_le_bytes(self.bytes[off..off + 2].try_into().unwrap()) as usize
    }

    fn u32_at(&self, off: usize) -> u64 {
        u32::from_le_bytes(self.bytes[off..off + 4].try_into().unwrap()) as u64
    }

    fn u64_at(&self, off: usize) -> u64 {
        u64::from_le_bytes(self.bytes[off..off + 8].try_into().unwrap())
    }

    /// File offset of the header of the section called `name`.
    fn header(&self, name: &str) -> usize {
        let shoff = self.u64_at(0x28) as usize;
        let (num, strndx) = (self.u16_at(0x3c), self.u16_at(0x3e));
        let strtab = self.u64_at(shoff + strndx * 64 + 24) as usize;
        (0..num)
            .map(|i| shoff + i * 64)
            .find(|&h| {
                let n = strtab + self.u32_at(h) as usize;
                let end = n + self.bytes[n..].iter().position(|&b| b == 0).unwrap();
                &self.bytes[n..end] == name.as_bytes()
            })
            .unwrap_or_else(|| panic!("no section {name}"))
    }

    /// Patches field `field` (byte offset inside the section header: 24 offset, 32 size, 40 link,
    /// 44 info, 48 addralign) of section `name`.
    fn set(&mut self, name: &str, field: usize, value: u64) -> &mut Elf {
        let at = self.header(name) + field;
        match field {
            40 | 44 | 0 | 4 => self.bytes[at..at + 4].copy_from_slice(&(value as u32).to_le_bytes()),
            _ => self.bytes[at..at + 8].copy_from_slice(&value.to_le_bytes()),
        }
        self
    }

    /// Byte offset of section `name`'s contents in the file.
    fn contents(&self, name: &str) -> usize {
        self.u64_at(self.header(name) + 24) as usize
    }

    fn write(&self, path: &Path) -> PathBuf {
        std::fs::write(path, &self.bytes).unwrap();
        path.to_path_buf()
    }

    /// The index of section `name` in the section header table.
    fn index(&self, name: &str) -> u64 {
        ((self.header(name) - self.u64_at(0x28) as usize) / 64) as u64
    }

    /// File offset of the symbol-table entry of the symbol called `name`.
    fn symbol(&self, name: &str) -> usize {
        let (symtab, size) = (self.contents(".symtab"), self.u64_at(self.header(".symtab") + 32) as usize);
        let strtab = self.contents(".strtab");
        (symtab..symtab + size)
            .step_by(24)
            .find(|&e| {
                let n = strtab + self.u32_at(e) as usize;
                let end = n + self.bytes[n..].iter().position(|&b| b == 0).unwrap();
                &self.bytes[n..end] == name.as_bytes()
            })
            .unwrap_or_else(|| panic!("no symbol {name}"))
    }

    /// Sets `width` bytes at `at`.
    fn put(&mut self, at: usize, width: usize, value: u64) -> &mut Elf {
        self.bytes[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
        self
    }
}

/// Calls `g`, which it defines itself (so the link gets as far as relocation).
const CALLER: &str = "int g(int x) { return x * 2; }\nint data = 5;\nint main(void) { return g(data); }\n";
/// Calls `g`, which an archive defines.
const NEEDS_G: &str = "extern int g(int);\nint data = 5;\nint main(void) { return g(data); }\n";

#[test]
fn section_contents_past_the_end_of_the_file() {
    let Some(c) = Case::new("secpast") else { return };
    let o = c.object("caller", CALLER);
    let mut e = Elf::open(&o);
    let len = e.bytes.len() as u64;
    let bad = e.set(".text", 24, len - 4).write(&c.tmp.join("past.o"));
    c.fails(&[&bad], &["past.o", ".text", "past the end of the file"]);
    let mut e = Elf::open(&o);
    let bad = e.set(".data", 32, 1 << 40).write(&c.tmp.join("huge.o"));
    c.fails(&[&bad], &["huge.o", ".data", "past the end of the file"]);
    c.tmp.finish();
}

#[test]
fn overlapping_and_misaligned_sections() {
    let Some(c) = Case::new("overlap") else { return };
    let o = c.object("caller", CALLER);
    let mut e = Elf::open(&o);
    let text = e.contents(".text") as u64;
    let bad = e.set(".data", 24, text).write(&c.tmp.join("overlap.o"));
    c.fails(&[&bad], &["overlap.o", ".data", "overlaps", ".text"]);
    // Relocation sections are ordered apart from the rest before the check: one placed over
    // another section's bytes is still found.
    let mut e = Elf::open(&o);
    let bad = e.set(".rela.text", 24, text).write(&c.tmp.join("reloverlap.o"));
    c.fails(&[&bad], &["reloverlap.o", ".rela.text", "overlaps", ".text"]);
    let mut e = Elf::open(&o);
    let bad = e.set(".text", 48, 12).write(&c.tmp.join("align.o"));
    c.fails(&[&bad], &["align.o", ".text", "not a power of two"]);
    // Found by fuzzing: an 8 GiB alignment made a 17 GB output from a 60 KB object.
    let mut e = Elf::open(&o);
    let bad = e.set(".data", 48, 1 << 33).write(&c.tmp.join("hugealign.o"));
    c.fails(&[&bad], &["hugealign.o", ".data", "too large"]);
    // A relocation table whose size is not a whole number of entries.
    let mut e = Elf::open(&o);
    let size = e.u64_at(e.header(".rela.text") + 32);
    let bad = e.set(".rela.text", 32, size - 3).write(&c.tmp.join("relsize.o"));
    c.fails(&[&bad], &["relsize.o", "relocation section"]);
    c.tmp.finish();
}

#[test]
fn bad_symbol_and_relocation_indices() {
    let Some(c) = Case::new("indices") else { return };
    let o = c.object("caller", CALLER);
    // The first relocation of .text names symbol 9999.
    let mut e = Elf::open(&o);
    let r = e.contents(".rela.text");
    e.bytes[r + 12..r + 16].copy_from_slice(&9999u32.to_le_bytes());
    let bad = e.write(&c.tmp.join("relsym.o"));
    c.fails(&[&bad], &["relsym.o", ".text", "symbol 9999"]);
    // The same in debug information (whose relocations are checked after resolution, on every
    // core), alone and in an archive member.
    let debug_object = |name: &str, source: &str| {
        let src = c.tmp.join(&format!("{name}.c"));
        std::fs::write(&src, source).unwrap();
        let o = c.tmp.join(&format!("{name}.o"));
        must(Command::new("gcc").args(["-g", "-c"]).arg(&src).arg("-o").arg(&o));
        let mut e = Elf::open(&o);
        let r = e.contents(".rela.debug_info");
        e.bytes[r + 12..r + 16].copy_from_slice(&9999u32.to_le_bytes());
        e.write(&c.tmp.join(&format!("{name}-bad.o")))
    };
    let bad = debug_object("dbgsym", CALLER);
    c.fails(&[&bad], &["dbgsym-bad.o", ".debug_info", "symbol 9999"]);
    let member = debug_object("g", "int g(int x) { return x * 2; }\n");
    let lib = c.tmp.join("libdbg.a");
    must(Command::new("ar").arg("rc").arg(&lib).arg(&member));
    let main = c.object("needs_g", NEEDS_G);
    c.fails(&[&main, &lib], &["libdbg.a(g-bad.o)", ".debug_info", "symbol 9999"]);
    // ... and points far outside .text.
    let mut e = Elf::open(&o);
    let r = e.contents(".rela.text");
    e.bytes[r..r + 8].copy_from_slice(&0x10_0000u64.to_le_bytes());
    let bad = e.write(&c.tmp.join("reloff.o"));
    c.fails(&[&bad], &["reloff.o", ".text", "past the end of the section"]);
    // The symbol table claims no local symbols (symbol 0 is always local).
    let mut e = Elf::open(&o);
    let bad = e.set(".symtab", 44, 0).write(&c.tmp.join("info0.o"));
    c.fails(&[&bad], &["info0.o", "first global index"]);
    // The symbol table's first global is past its end.
    let mut e = Elf::open(&o);
    let bad = e.set(".symtab", 44, 5000).write(&c.tmp.join("info.o"));
    c.fails(&[&bad], &["info.o", "first global index 5000"]);
    // The symbol table's string table is a section that does not exist.
    let mut e = Elf::open(&o);
    let bad = e.set(".symtab", 40, 999).write(&c.tmp.join("link.o"));
    c.fails(&[&bad], &["link.o", "symbol table"]);
    // The last symbol's section index says "extended" (SHN_XINDEX) but the file has no
    // SHT_SYMTAB_SHNDX section to hold it.
    let mut e = Elf::open(&o);
    let (symtab, size) = (e.contents(".symtab"), e.u64_at(e.header(".symtab") + 32) as usize);
    let last = symtab + size - 24;
    e.bytes[last + 6..last + 8].copy_from_slice(&0xffffu16.to_le_bytes());
    let bad = e.write(&c.tmp.join("xindex.o"));
    c.fails(&[&bad], &["xindex.o", "extended section index", "SHT_SYMTAB_SHNDX"]);
    c.tmp.finish();
}

#[test]
fn bad_string_table_offsets() {
    let Some(c) = Case::new("strtab") else { return };
    let o = c.object("caller", CALLER);
    // Every symbol name offset points past the end of .strtab: shrink .strtab to one byte.
    let mut e = Elf::open(&o);
    let bad = e.set(".strtab", 32, 1).write(&c.tmp.join("symname.o"));
    c.fails(&[&bad], &["symname.o", "name"]);
    // A section name offset past the end of .shstrtab.
    let mut e = Elf::open(&o);
    let bad = e.set(".data", 0, 0x7fff_0000).write(&c.tmp.join("secname.o"));
    c.fails(&[&bad], &["secname.o", "bad name"]);
    c.tmp.finish();
}

#[test]
fn archives_with_bad_sizes_or_a_lying_symbol_table() {
    let Some(c) = Case::new("badar") else { return };
    let member = c.object("member", "int g(int x) { return x + 1; }\n");
    let other = c.object("other", "int unrelated(void) { return 7; }\n");
    let main = c.object("main", NEEDS_G);
    let lib = c.tmp.join("libgood.a");
    must(Command::new("ar").arg("rcs").arg(&lib).arg(&member).arg(&other));
    let good = std::fs::read(&lib).unwrap();
    // The first member (the symbol table) claims to be larger than the archive.
    let mut bytes = good.clone();
    bytes[8 + 48..8 + 58].copy_from_slice(format!("{:<10}", good.len() * 2).as_bytes());
    let big = c.tmp.join("libbig.a");
    std::fs::write(&big, &bytes).unwrap();
    c.fails(&[&main, &big], &["libbig.a", "bytes but the archive ends"]);
    // The symbol table sends `g` to an offset inside a member's body instead of a header.
    let mut bytes = good.clone();
    let count = u32::from_be_bytes(bytes[68..72].try_into().unwrap()) as usize;
    assert!(count >= 2);
    for i in 0..count {
        let at = 72 + 4 * i;
        let off = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
        bytes[at..at + 4].copy_from_slice(&(off + 7).to_be_bytes());
    }
    let lying = c.tmp.join("liblying.a");
    std::fs::write(&lying, &bytes).unwrap();
    c.fails(&[&main, &lying], &["liblying.a"]);
    // The symbol table sends `g` to a member that does not define it: like lld, the member is
    // loaded and `g` stays undefined.
    let mut bytes = good.clone();
    let names_at = 72 + 4 * count;
    let names: Vec<&[u8]> = bytes[names_at..].split(|&b| b == 0).take(count).collect();
    let gi = names.iter().position(|n| *n == b"g").expect("g in the symbol table");
    let ui = names.iter().position(|n| *n == b"unrelated").expect("unrelated in the symbol table");
    let u_off: [u8; 4] = bytes[72 + 4 * ui..76 + 4 * ui].try_into().unwrap();
    bytes[72 + 4 * gi..76 + 4 * gi].copy_from_slice(&u_off);
    let wrong = c.tmp.join("libwrong.a");
    std::fs::write(&wrong, &bytes).unwrap();
    c.fails(&[&main, &wrong], &["undefined symbol: g", "main.o:(main)"]);
    c.tmp.finish();
}

#[test]
fn recursive_or_missing_group_entries() {
    let Some(c) = Case::new("groups") else { return };
    let main = c.object("main", CALLER);
    let script = c.tmp.join("libloop.so");
    std::fs::write(&script, format!("GROUP ( {} )\n", script.display())).unwrap();
    c.fails(&[&main, &script], &["libloop.so", "includes itself"]);
    // Two scripts naming each other.
    let (a, b) = (c.tmp.join("liba.so"), c.tmp.join("libb.so"));
    std::fs::write(&a, format!("INPUT ( {} )\n", b.display())).unwrap();
    std::fs::write(&b, format!("GROUP ( {} )\n", a.display())).unwrap();
    c.fails(&[&main, &a], &["liba.so", "includes itself"]);
    let missing = c.tmp.join("libmissing.so");
    std::fs::write(&missing, "GROUP ( /nonexistent/libnothing.so.1 AS_NEEDED ( -lnothing_at_all ) )\n").unwrap();
    c.fails(&[&main, &missing], &["libmissing.so", "/nonexistent/libnothing.so.1"]);
    c.tmp.finish();
}

#[test]
fn response_files_that_include_each_other() {
    let Some(c) = Case::new("rsp") else { return };
    let (a, b) = (c.tmp.join("a.rsp"), c.tmp.join("b.rsp"));
    std::fs::write(&a, format!("-e main @{}\n", b.display())).unwrap();
    std::fs::write(&b, format!("--gc-sections @{}\n", a.display())).unwrap();
    let at = PathBuf::from(format!("@{}", a.display()));
    c.fails(&[&at], &["a.rsp", "includes itself"]);
    let at = PathBuf::from("@/nonexistent/args.rsp");
    c.fails(&[&at], &["/nonexistent/args.rsp"]);
    c.tmp.finish();
}

#[test]
fn defsym_expressions_rivet_cannot_evaluate() {
    let Some(c) = Case::new("defsym") else { return };
    let o = c.object("main", "int main(void) { return 0; }\n");
    c.fails(&[Path::new("--defsym=x=main-main"), &o], &["--defsym=x=main-main", "combines symbol addresses"]);
    c.fails(&[Path::new("--defsym=x=ALIGN(8)"), &o], &["--defsym=x=ALIGN(8)", "unexpected '('"]);
    c.fails(&[Path::new("--defsym=x=(main+4"), &o], &["--defsym=x=(main+4", "missing ')'"]);
    c.fails(&[Path::new("--defsym=x=nowhere+4"), &o], &["--defsym=x=nowhere+4", "undefined symbol: nowhere"]);
    c.tmp.finish();
}

/// A program with what the malformed-field cases corrupt: a string literal (`.LC0` in
/// `.rodata.str1.1`), TLS, relocations, and with `-g3` COMDAT groups of `.debug_macro`.
const FIELDS: &str = "__thread int tv = 1;\nint g(int x) { return x * 2 + tv; }\nint data = 5;\n\
                      const char *s(void) { return \"a string\"; }\n\
                      int main(void) { return g(data) + s()[0]; }\n\
                      __asm__(\".section .extra,\\\"\\\",@progbits\\n.byte 1\\n.previous\");\n";

/// Malformed fields that lld rejects (and rivet used to link): each one alone must be an error
/// naming the file, the section or symbol, and what is wrong. Failures are collected, so a run
/// against an older linker lists every case it accepts.
#[test]
fn malformed_fields_lld_rejects_too() {
    let Some(c) = Case::new("fields") else { return };
    let src = c.tmp.join("fields.c");
    std::fs::write(&src, FIELDS).unwrap();
    let o = c.tmp.join("fields.o");
    must(Command::new("gcc").args(["-c", "-g3", "-O1"]).arg(&src).arg("-o").arg(&o));
    let other = c.tmp.join("other.o");
    let other_src = c.tmp.join("other.c");
    std::fs::write(&other_src, "__asm__(\".section .extra,\\\"\\\",@progbits\\n.byte 2\\n.previous\");\n").unwrap();
    must(Command::new("gcc").arg("-c").arg(&other_src).arg("-o").arg(&other));
    let base = Elf::open(&o);
    let mut failures = Vec::new();
    let mut case = |name: &str, patch: &dyn Fn(&mut Elf), extra: Option<&Path>, expect: &[&str]| {
        let mut e = Elf::open(&o);
        patch(&mut e);
        let bad = e.write(&c.tmp.join(&format!("{name}.o")));
        let mut cmd = Command::new(linker());
        // An extra input comes first: the error names the input that does not fit.
        cmd.args(["-static", "-e", "main", "-o"]).arg(c.output()).args(extra).arg(&bad);
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let file = format!("{name}.o");
        let named = !testing_rivet() || expect.iter().chain([&file.as_str()]).all(|n| stderr.contains(n));
        if out.status.code() != Some(1) || !named || std::fs::read(c.output()).unwrap() != OLD {
            failures.push(format!("{name}: exit {:?}, expected {expect:?}: {stderr}", out.status.code()));
        }
    };
    let strtab_size = base.u64_at(base.header(".strtab") + 32);
    let lc0 = base.symbol(".LC0");
    // Symbols: a local's name (never looked up) past the string table; a local with global
    // binding; a global with binding 8.
    case(
        "symname",
        &|e| _ = e.put(lc0, 4, strtab_size),
        None,
        &["symbol", "name offset", "past the end of the string table"],
    );
    case("nonlocal", &|e| _ = e.put(lc0 + 4, 1, 0x10), None, &["is not local", "first global"]);
    let main = base.symbol("main");
    case("binding", &|e| _ = e.put(main + 4, 1, 0x82), None, &["invalid binding 8"]);
    // Entry sizes of tables.
    for (n, sec, want) in
        [("symtab_ent", ".symtab", "24"), ("rela_ent", ".rela.text", "24"), ("group_ent", ".group", "4")]
    {
        case(n, &|e| _ = e.set(sec, 56, 0), None, &[sec, "invalid sh_entsize: expected", want, "got 0"]);
    }
    // The section-name table is not a string table.
    case("shstrtab_type", &|e| _ = e.set(".shstrtab", 4, 0), None, &["section header string table", "SHT_STRTAB"]);
    // No section headers, but e_shstrndx names one.
    case("no_sections", &|e| _ = e.put(0x28, 8, 0), None, &["section header string table index", "does not exist"]);
    // Mergeable strings: size not a multiple of the entry size, writable, last string unterminated.
    let str_size = base.u64_at(base.header(".rodata.str1.1") + 32);
    case(
        "merge_ent",
        &|e| _ = e.set(".rodata.str1.1", 56, str_size + 1),
        None,
        &[".rodata.str1.1", "multiple of sh_entsize"],
    );
    case("merge_write", &|e| _ = e.set(".rodata.str1.1", 8, 0x33), None, &[".rodata.str1.1", "writable SHF_MERGE"]);
    let last = base.contents(".rodata.str1.1") + str_size as usize - 1;
    case("merge_nul", &|e| _ = e.put(last, 1, b'x' as u64), None, &[".rodata.str1.1", "not null terminated"]);
    // A symbol past the end of its mergeable section.
    case("merge_sym", &|e| _ = e.put(lc0 + 8, 8, 1 << 20), None, &["symbol", "outside its section", ".rodata.str1.1"]);
    // Unknown section types (GNU ld and lld refuse both).
    case("type_f7", &|e| _ = e.set(".data", 4, 0xf7), None, &["section .data (", "unsupported section type: 0xf7"]);
    case(
        "type_650001",
        &|e| _ = e.set(".text", 4, 0x650001),
        None,
        &["section .text (", "unsupported section type: 0x650001"],
    );
    // A relocation section that applies to the symbol table, and a second one for .text.
    let symtab_index = base.index(".symtab");
    case(
        "rela_info",
        &|e| _ = e.set(".rela.text", 44, symtab_index),
        None,
        &["relocation section", ".symtab", "holds no contents"],
    );
    let text = base.index(".text");
    case(
        "rela_twice",
        &|e| _ = e.set(".rela.eh_frame", 44, text),
        None,
        &[".text", "more than one relocation section"],
    );
    // A group turned into an SHT_SYMTAB_SHNDX with the wrong number of entries; a group with
    // unknown flags.
    case("shndx", &|e| _ = e.set(".group", 4, 18), None, &["SHT_SYMTAB_SHNDX", "entries, but the symbol table has"]);
    let group = base.contents(".group");
    case("group_flags", &|e| _ = e.put(group, 4, 0x81), None, &["group section", "unknown flags 0x81"]);
    // A NOBITS section larger than the address space.
    case("bss_size", &|e| _ = e.set(".bss", 32, u64::MAX), None, &["section .bss (", "larger than the address space"]);
    // A TLS variable in a section that is not TLS.
    case("tls", &|e| _ = e.set(".tdata", 8, 3), None, &["symbol", "TLS symbol", ".tdata"]);
    // .LC0 made undefined: `s` refers to an undefined local.
    case("undef_local", &|e| _ = e.put(lc0 + 6, 2, 0), None, &["relocation", ".text", "local symbol", "undefined"]);
    // One output section from inputs of incompatible types or TLS flags.
    let other = other.as_path();
    case("type_mismatch", &|e| _ = e.set(".extra", 4, 0x8000_0000), Some(other), &["section type mismatch for .extra"]);
    case("tls_mismatch", &|e| _ = e.set(".extra", 8, 0x400), Some(other), &["incompatible section flags for .extra"]);
    assert!(failures.is_empty(), "{} cases:\n{}", failures.len(), failures.join("\n"));
    c.tmp.finish();
}

/// Two output sections with members they cannot take, from different files: the error is the
/// one GNU ld and lld meet first, in command-line order, and only that one.
#[test]
fn first_incompatible_member_in_command_line_order() {
    let Some(c) = Case::new("incompatible") else { return };
    let asm = "__asm__(\".section .extra,\\\"\\\",@progbits\\n.byte 1\\n\
               .section .more,\\\"\\\",@progbits\\n.byte 2\\n.previous\");\n";
    let main = c.object("main", &format!("{asm}int main(void) {{ return 0; }}\n"));
    let sections = c.object("sections", asm);
    // The second output section (.more) gets a member of another type from the second file; the
    // first (.extra) a TLS member from the third.
    let typed = Elf::open(&sections).set(".more", 4, 0x8000_0000).write(&c.tmp.join("typed.o"));
    let tls = Elf::open(&sections).set(".extra", 8, 0x400).write(&c.tmp.join("tls.o"));
    let stderr = c.fails(&[&main, &typed, &tls], &["section type mismatch for .more", "typed.o"]);
    assert!(!stderr.contains("tls.o") && !stderr.contains(".extra"), "a later error was reported:\n{stderr}");
    // The other way round, the TLS member comes first.
    let stderr = c.fails(&[&main, &tls, &typed], &["incompatible section flags for .extra", "tls.o"]);
    assert!(!stderr.contains("typed.o") && !stderr.contains(".more"), "a later error was reported:\n{stderr}");
    c.tmp.finish();
}

/// An archive whose symbol table sends a symbol nobody needs past the end of the archive: the
/// table is checked when the archive is read, not only for the members that get loaded.
#[test]
fn archive_symbol_table_pointing_outside_the_archive() {
    let Some(c) = Case::new("arsym") else { return };
    let member = c.object("member", "int g(int x) { return x + 1; }\n");
    let other = c.object("other", "int unrelated(void) { return 7; }\n");
    let main = c.object("main", NEEDS_G);
    let lib = c.tmp.join("libout.a");
    must(Command::new("ar").arg("rcs").arg(&lib).arg(&member).arg(&other));
    let mut bytes = std::fs::read(&lib).unwrap();
    let count = u32::from_be_bytes(bytes[68..72].try_into().unwrap()) as usize;
    let names_at = 72 + 4 * count;
    let names: Vec<&[u8]> = bytes[names_at..].split(|&b| b == 0).take(count).collect();
    let ui = names.iter().position(|n| *n == b"unrelated").expect("unrelated in the symbol table");
    bytes[72 + 4 * ui..76 + 4 * ui].copy_from_slice(&0x7fff_0000u32.to_be_bytes());
    std::fs::write(&lib, &bytes).unwrap();
    c.fails(&[&main, &lib], &["libout.a", "symbol table entry", "past the end of the archive"]);
    c.tmp.finish();
}

/// The other side of bad input: a corrupt archive member the link does not need is no error,
/// also when a member it loads refers to a name the corrupt one offers in its archive's symbol
/// table, so that resolution parses it ahead on a guess (a guess's result is dropped unless
/// resolution asks for that member itself). The same member, needed, fails the link.
#[test]
fn corrupt_member_the_link_does_not_need() {
    let Some(c) = Case::new("unneeded") else { return };
    // main.o defines f and calls g; liba.a's a.o defines g, calls f and starts a chain of members
    // (g1 calls g2 ...), which keeps resolution busy while the guessed member is parsed; libb.a's
    // b.o offers f again, with a section alignment no linker accepts.
    let main =
        c.object("main", "int f(int x) { return x + 1; }\nextern int g(int);\nint main(void) { return g(1); }\n");
    let mut members = vec![c.object("a", "extern int f(int), g1(int);\nint g(int x) { return f(x) + g1(x); }\n")];
    const CHAIN: usize = 24;
    for i in 1..=CHAIN {
        let body = match i {
            CHAIN => format!("int g{i}(int x) {{ return x; }}\n"),
            _ => format!("extern int g{}(int);\nint g{i}(int x) {{ return g{}(x) + 1; }}\n", i + 1, i + 1),
        };
        members.push(c.object(&format!("c{i}"), &body));
    }
    let b = c.object("b", "int f(int x) { return x; }\n");
    let (liba, libb) = (c.tmp.join("liba.a"), c.tmp.join("libb.a"));
    must(Command::new("ar").arg("rcs").arg(&liba).args(&members));
    must(Command::new("ar").arg("rcs").arg(&libb).arg(&b));
    let good = std::fs::read(&b).unwrap();
    let corrupt = std::fs::read(Elf::open(&b).set(".text", 48, 12).write(&c.tmp.join("bad.o"))).unwrap();
    let mut bytes = std::fs::read(&libb).unwrap();
    let at = bytes.windows(good.len()).position(|w| w == good).expect("b.o's bytes in libb.a");
    bytes[at..at + good.len()].copy_from_slice(&corrupt);
    std::fs::write(&libb, &bytes).unwrap();
    for _ in 0..5 {
        let out = c.tmp.join("out/ok");
        let mut cmd = Command::new(linker());
        cmd.args(["-static", "-e", "main", "-o"]).arg(&out).arg(&main).arg(&liba).arg(&libb);
        let r = cmd.output().unwrap();
        assert!(r.status.success(), "{}:\n{}", render(&cmd), String::from_utf8_lossy(&r.stderr));
        std::fs::remove_file(&out).unwrap();
    }
    let needs_f = c.object("needsf", "extern int f(int);\nint main(void) { return f(1); }\n");
    c.fails(&[&needs_f, &libb], &["libb.a(b.o)", ".text", "not a power of two"]);
    c.tmp.finish();
}

/// An input that changes between being read and the output being committed: rivet refuses to
/// commit. Made deterministic by rivet itself: `--reproduce` writes its tarball (before symbol
/// resolution) over a linker-script input, which was read and parsed when inputs were opened and
/// is not read again; its size and modification time change, as an input rewritten by a parallel
/// build step would.
#[test]
fn input_changed_during_the_link() {
    let Some(c) = Case::new("changed") else { return };
    let main = c.object("main", CALLER);
    let script = c.tmp.join("inputs.ld");
    std::fs::write(&script, format!("INPUT ( {} )\n", main.display())).unwrap();
    let repro = PathBuf::from(format!("--reproduce={}", script.display()));
    c.fails(&[&repro, &script], &["inputs.ld", "changed while it was being linked", "output not written"]);
    assert!(std::fs::read(&script).unwrap().len() > 1024, "the tarball was not written over the script");
    c.tmp.finish();
}

/// References through a merged section's section symbol whose addend points at or past the end of
/// the section (or before its start): the piece they mean does not exist. lld stops with
/// "offset is outside the section" (GNU ld warns and links); rivet names the relocation, the file
/// and the section. Code, data and debug info (the non-allocated path) are each checked; a
/// reference to the last byte still links.
#[test]
fn addend_outside_a_merged_section() {
    let Some(c) = Case::new("mergeaddend") else { return };
    let asm = |name: &str, body: &str| {
        let s = c.tmp.join(&format!("{name}.s"));
        let text = format!(
            ".section .rodata.str1.1,\"aMS\",@progbits,1\n.string \"hello\"\n.string \"world\"\n\
             .section .debug_str,\"MS\",@progbits,1\n.string \"name\"\n\
             .text\n.globl main\nmain:\n{body}\n"
        );
        std::fs::write(&s, text).unwrap();
        let o = c.tmp.join(&format!("{name}.o"));
        must(Command::new("gcc").arg("-c").arg(&s).arg("-o").arg(&o));
        o
    };
    let lld = ["ld.lld", "ld.lld-19", "/usr/lib/llvm-19/bin/ld.lld"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success()));
    let cases = [
        ("code", "movl $.rodata.str1.1+100, %eax\nret", "R_X86_64_32 against .rodata.str1.1+0x64", ".rodata.str1.1"),
        ("end", "ret\n.data\n.quad .rodata.str1.1+12", "R_X86_64_64 against .rodata.str1.1+0xc", ".rodata.str1.1"),
        ("before", "ret\n.data\n.quad .rodata.str1.1-1", "R_X86_64_64 against .rodata.str1.1-0x1", ".rodata.str1.1"),
        ("debug", "ret\n.section .debug_info\n.long .debug_str+5", "R_X86_64_32 against .debug_str+0x5", ".debug_str"),
    ];
    for (name, body, reloc, section) in cases {
        let o = asm(name, body);
        let file = format!("{name}.o");
        c.fails(&[&o], &[&file, reloc, &format!("{file}:({section}): offset is outside the section")]);
        if let Some(lld) = lld {
            let mut cmd = Command::new(lld);
            cmd.args(["-static", "-e", "main", "-o"]).arg(c.tmp.join("lld.out")).arg(&o);
            let stderr = String::from_utf8_lossy(&cmd.output().unwrap().stderr).into_owned();
            assert!(stderr.contains("offset is outside the section"), "lld accepted {name}: {stderr}");
        }
    }
    // The last byte (the second string's terminator) is inside: this links.
    let o = asm("last", "ret\n.data\n.quad .rodata.str1.1+11");
    must(Command::new(linker()).args(["-static", "-e", "main", "-o"]).arg(c.tmp.join("last.out")).arg(&o));
    c.tmp.finish();
}

/// A relocation in a debug section at an offset near 2^64 (found by fuzzing the `-r` target with
/// overflow checks): the duplicate-symbol message reads the inputs' DWARF for source lines, and
/// applying that relocation must neither overflow nor write anywhere; the link fails with the
/// duplicate and the bad relocation named.
#[test]
fn debug_relocation_offset_near_the_top_of_the_address_space() {
    let Some(c) = Case::new("debugreloff") else { return };
    let src = c.tmp.join("dup.c");
    std::fs::write(&src, "int dup(void) { return 1; }\nint main(void) { return dup(); }\n").unwrap();
    let o = c.tmp.join("dup.o");
    must(Command::new("gcc").args(["-c", "-g"]).arg(&src).arg("-o").arg(&o));
    let mut e = Elf::open(&o);
    let r = e.contents(".rela.debug_info");
    e.bytes[r..r + 8].copy_from_slice(&(u64::MAX - 2).to_le_bytes());
    let bad = e.write(&c.tmp.join("debugreloff.o"));
    c.fails(&[&bad, &bad], &["duplicate symbol: dup", "debugreloff.o"]);
    c.tmp.finish();
}

/// Relocations whose instruction sequence or field would run past the section (found by fuzzing
/// with overflow checks, and by reading the TLS relaxations): an offset near 2^64 and a
/// general-dynamic TLS sequence cut short at the end of its section are errors naming the file and
/// section, as GNU ld and lld refuse both (the TLS one used to abort rivet with an index panic).
#[test]
fn relocations_running_past_their_section() {
    let Some(c) = Case::new("relend") else { return };
    let o = c.object("caller", CALLER);
    let mut e = Elf::open(&o);
    let r = e.contents(".rela.text");
    e.bytes[r..r + 8].copy_from_slice(&(u64::MAX - 1).to_le_bytes());
    let bad = e.write(&c.tmp.join("reltop.o"));
    c.fails(&[&bad], &["reltop.o", ".text", "past the end of the section"]);
    // A relocatable link copies relocations rather than applying them: it must refuse them too,
    // or its output's relocation would point into the next member.
    c.fails_as(&["-r"], &[&bad], &["reltop.o", "relocation 0 in section .text", "past the end"], true);
    let mut e = Elf::open(&o);
    let r = e.contents(".rela.text");
    e.bytes[r..r + 8].copy_from_slice(&0x10_0000u64.to_le_bytes());
    let bad = e.write(&c.tmp.join("relfar.o"));
    c.fails_as(&["-r"], &[&bad], &["relfar.o", "offset 0x100000, past the end of the section"], true);
    // `data16 lea x@tlsgd(%rip),%rdi; data16 data16 rex64 call` with the call's operand missing:
    // relaxing it to local-exec would rewrite 4 bytes past the section.
    let s = c.tmp.join("tlsend.s");
    std::fs::write(
        &s,
        "\t.section .tbss,\"awT\",@nobits\n\t.globl x\nx:\t.zero 4\n\t.text\n\t.globl main\nmain:\tret\n\
         \t.section .text.z,\"ax\",@progbits\n\t.byte 0x66, 0x48, 0x8d, 0x3d\n1:\t.long 0\n\
         \t.reloc 1b, R_X86_64_TLSGD, x-4\n\t.byte 0x66, 0x66, 0x48, 0xe8\n",
    )
    .unwrap();
    let tls = c.tmp.join("tlsend.o");
    must(Command::new("gcc").arg("-c").arg(&s).arg("-o").arg(&tls));
    c.fails(&[&tls], &["tlsend.o", ".text.z", "unrecognised general-dynamic TLS sequence"]);
    c.tmp.finish();
}

/// An FDE whose code address is out of reach (a fuzzed addend of -2^63): found by fuzzing with
/// overflow checks, where building `.eh_frame_hdr`'s table subtracted past i64. The link fails
/// naming the relocation, as lld's does, and the table refuses an offset it cannot hold.
#[test]
fn frame_address_out_of_reach() {
    let Some(c) = Case::new("fdepc") else { return };
    let o = c.object("caller", CALLER);
    let mut e = Elf::open(&o);
    let r = e.contents(".rela.eh_frame");
    e.bytes[r + 16..r + 24].copy_from_slice(&i64::MIN.to_le_bytes());
    let bad = e.write(&c.tmp.join("fdepc.o"));
    c.fails_as(&["-static", "--eh-frame-hdr"], &[&bad], &["fdepc.o", ".eh_frame", "out of range"], true);
    c.fails_as(&["-pie", "--eh-frame-hdr"], &[&bad], &["fdepc.o", ".eh_frame", "out of range"], true);
    c.tmp.finish();
}

/// Expressions nested 100,000 deep, in a linker script given as an input and in a `--defsym` from a
/// response file: found by the shared-library fuzz target (a fuzzed input read as a script) as a
/// silent stack overflow. An error naming the place, as GNU ld's "memory exhausted" (lld crashes).
#[test]
fn expressions_nested_too_deeply() {
    let Some(c) = Case::new("deepexpr") else { return };
    let o = c.object("caller", CALLER);
    let n = 100_000;
    let script = c.tmp.join("deep.ld");
    std::fs::write(&script, format!("x = {}1{};\n", "(".repeat(n), ")".repeat(n))).unwrap();
    c.fails(&[&o, &script], &["deep.ld:1", "nested more than 256 levels"]);
    let signs = c.tmp.join("signs.ld");
    std::fs::write(&signs, format!("x = {}1;\n", "-".repeat(n))).unwrap();
    c.fails(&[&o, &signs], &["signs.ld:1", "nested more than 256 levels"]);
    let rsp = c.tmp.join("defsym.rsp");
    std::fs::write(&rsp, format!("--defsym=x={}1{}\n", "(".repeat(n), ")".repeat(n))).unwrap();
    let at = std::path::PathBuf::from(format!("@{}", rsp.display()));
    c.fails(&[&o, &at], &["--defsym", "nested more than 256 levels"]);
    c.tmp.finish();
}
