//! The other output forms: `--separate-debug-file` (gdb finds the debug file through
//! `.gnu_debuglink` and debugs as it does the program GNU ld links with its debug sections in
//! place), `--oformat=binary` (the bytes lld writes, and objcopy's raw image of the same layout),
//! `-n`/`-N`/`-z separate-loadable-segments`/`-z noseparate-code` (program headers against lld's
//! and GNU ld's, programs run), and `--compress-debug-sections` levels (zstd through libzstd,
//! sections over 1 MiB in several frames) that gdb reads.
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const LLD: &str = "/usr/lib/llvm-19/bin/ld.lld";

const PROGRAM: &str = "#include <stdio.h>\n\
    int return1(void);\n\
    int counter = 3;\n\
    static int helper(int x) {\n\
    \x20 return x * counter;\n\
    }\n\
    int main(void) {\n\
    \x20 printf(\"v=%d\\n\", helper(return1()));\n\
    \x20 return 0;\n\
    }\n";
const LIB: &str = "int return1(void) { return 1; }\n";

fn setup(name: &str, tools: &[&str]) -> Option<TempDir> {
    if !testing_rivet() || !tools.iter().all(|t| have(t)) {
        eprintln!("skipped: needs rivet as the linker under test and {tools:?}");
        return None;
    }
    Some(TempDir::new(name))
}

fn gcc(tmp: &TempDir, args: &[&str]) -> std::process::Output {
    must(Command::new("gcc").current_dir(&tmp.path).args(args))
}

/// Links with rivet through gcc; returns the command's output (it may fail).
fn rivet_gcc(tmp: &TempDir, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new("gcc");
    cmd.current_dir(&tmp.path).arg("-B").arg(linker_dir(tmp)).args(args);
    cmd.output().unwrap()
}

/// Waits until the linker has finished writing `dbg` (it holds an flock on it meanwhile).
fn wait_for(dbg: &Path) {
    must(Command::new("flock").arg(dbg).arg("true"));
}

/// gdb's view of a program: where `break helper` stops, what `list` shows there, the backtrace.
fn gdb_transcript(exe: &Path) -> String {
    let out = must(
        Command::new("gdb")
            .args(["-nx", "-batch", "-ex", "break helper", "-ex", "run", "-ex", "list 4,5"])
            .args(["-ex", "bt", "-ex", "print counter"])
            .arg(exe),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.contains("thread_db") && !l.starts_with('[') && !l.contains("0x"))
        .map(|l| l.replace(&exe.display().to_string(), "EXE"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The bytes of section `name` of `file`, as stored (compressed sections stay compressed).
fn section_bytes(file: &Path, name: &str) -> Vec<u8> {
    use object::read::{Object, ObjectSection};
    let bytes = std::fs::read(file).unwrap();
    let elf = object::read::elf::ElfFile64::<object::LittleEndian>::parse(&*bytes).unwrap();
    let data = elf.section_by_name(name).unwrap_or_else(|| panic!("no {name} in {}", file.display())).data().unwrap();
    data.to_vec()
}

/// `--separate-debug-file`: the program has no debug sections and names its debug file, whose CRC
/// is the one recorded; gdb debugs it through the link as it debugs GNU ld's program with the
/// debug sections in place (same breakpoint, source lines, backtrace, variable), and it runs as
/// GNU ld's does. The bytes are the same detached or not and on one thread.
#[test]
fn separate_debug_file_is_found_by_gdb() {
    let Some(tmp) = setup("sep-debug", &["gcc", "gdb", "readelf", "flock"]) else { return };
    std::fs::write(tmp.join("m.c"), PROGRAM).unwrap();
    std::fs::write(tmp.join("lib.c"), LIB).unwrap();
    gcc(&tmp, &["-c", "-g", "-O0", "m.c", "lib.c"]);
    gcc(&tmp, &["-g", "m.o", "lib.o", "-o", "bfd"]);
    let out = rivet_gcc(&tmp, &["m.o", "lib.o", "-o", "sep", "-Wl,--separate-debug-file"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (exe, dbg) = (tmp.join("sep"), tmp.join("sep.dbg"));
    wait_for(&dbg);
    let main_sections = section_names(&exe);
    assert!(main_sections.contains(&".gnu_debuglink".to_string()), "{main_sections:?}");
    assert!(!main_sections.iter().any(|s| s.starts_with(".debug") || s == ".symtab"), "{main_sections:?}");
    let dbg_sections = section_names(&dbg);
    for s in [".debug_info", ".debug_line", ".symtab", ".strtab", ".note.gnu.build-id"] {
        assert!(dbg_sections.contains(&s.to_string()), "{s} not in the debug file: {dbg_sections:?}");
    }
    // .gnu_debuglink: "sep.dbg", padding, then the CRC-32 of the debug file.
    let bytes = section_bytes(&exe, ".gnu_debuglink");
    assert!(bytes.starts_with(b"sep.dbg\0"), "{bytes:?}");
    let crc = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().unwrap());
    assert_eq!(crc, crc32fast::hash(&std::fs::read(&dbg).unwrap()), "the debug file's CRC is the one recorded");
    // The same program, the same debugging, as GNU ld's with its debug sections.
    let run = |p: &Path| must(&mut Command::new(p)).stdout;
    assert_eq!(run(&exe), run(&tmp.join("bfd")));
    let (ours, theirs) = (gdb_transcript(&exe), gdb_transcript(&tmp.join("bfd")));
    assert!(ours.contains("helper (x=1) at m.c:5") && ours.contains("return x * counter;"), "{ours}");
    assert_eq!(ours, theirs);
    // Deterministic: --no-detach and one thread give the same two files.
    for (dir, extra) in [("nodetach", "-Wl,--no-detach"), ("one", "-Wl,--threads=1")] {
        std::fs::create_dir(tmp.join(dir)).unwrap();
        let out = format!("{dir}/sep");
        assert!(rivet_gcc(&tmp, &["m.o", "lib.o", "-o", &out, "-Wl,--separate-debug-file", extra]).status.success());
        wait_for(&tmp.join(&format!("{out}.dbg")));
        let same = |a: &Path, b: &Path| std::fs::read(a).unwrap() == std::fs::read(b).unwrap();
        assert!(same(&tmp.join(&out), &exe), "{dir}: the output differs");
        assert!(same(&tmp.join(&format!("{out}.dbg")), &dbg), "{dir}: the debug file differs");
    }
    tmp.finish();
}

/// A symbolic link at the debug file's path (to a file of the user's, or dangling) is replaced by
/// the debug file, like a link at the output path, and the file it pointed to is untouched and
/// never created: detached or not.
#[test]
fn separate_debug_file_replaces_a_link() {
    let Some(tmp) = setup("sep-debug-link", &["gcc"]) else { return };
    std::fs::write(tmp.join("m.c"), PROGRAM).unwrap();
    std::fs::write(tmp.join("lib.c"), LIB).unwrap();
    gcc(&tmp, &["-c", "-g", "m.c", "lib.c"]);
    std::fs::write(tmp.join("notes"), "my notes\n").unwrap();
    for (i, detach) in ["-Wl,--detach", "-Wl,--no-detach"].iter().enumerate() {
        for (link, to) in [(format!("to-notes{i}.dbg"), "notes"), (format!("dangling{i}.dbg"), "fresh")] {
            std::os::unix::fs::symlink(to, tmp.join(&link)).unwrap();
            let o = format!("-Wl,--separate-debug-file={link}");
            let out = rivet_gcc(&tmp, &["m.o", "lib.o", "-o", &format!("e{i}"), &o, detach]);
            assert!(out.status.success(), "{link} {detach}: {}", String::from_utf8_lossy(&out.stderr));
            wait_for(&tmp.join(&link));
            let meta = std::fs::symlink_metadata(tmp.join(&link)).unwrap();
            assert!(meta.file_type().is_file(), "{link} {detach}: the link is still there");
            assert!(std::fs::read(tmp.join(&link)).unwrap().starts_with(b"\x7fELF"), "{link} {detach}");
            assert_eq!(std::fs::read_to_string(tmp.join("notes")).unwrap(), "my notes\n", "{link} {detach}");
            assert!(!tmp.join("fresh").exists(), "{link} {detach}: the dangling link's target was created");
        }
    }
    tmp.finish();
}

/// The debug file's errors are the link's: a path that cannot be created, or a disk without room
/// for it, fails the link (exit status 1, the file named, no debug file left), detached or not.
#[test]
fn separate_debug_file_errors_fail_the_link() {
    let Some(tmp) = setup("sep-debug-err", &["gcc"]) else { return };
    std::fs::write(tmp.join("m.c"), PROGRAM).unwrap();
    std::fs::write(tmp.join("lib.c"), LIB).unwrap();
    gcc(&tmp, &["-c", "-g", "m.c", "lib.c"]);
    std::fs::create_dir(tmp.join("adir")).unwrap();
    for (target, why) in [("missing/x.dbg", "No such file"), ("adir", "Is a directory")] {
        for detach in ["-Wl,--detach", "-Wl,--no-detach"] {
            let o = format!("-Wl,--separate-debug-file={target}");
            let out = rivet_gcc(&tmp, &["m.o", "lib.o", "-o", "e", &o, detach]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{target} {detach}: the link succeeded");
            assert!(err.contains(&format!("cannot create separate debug file {target}")) && err.contains(why), "{err}");
        }
    }
    // A disk too small for the debug file: the link fails with the file named and leaves none.
    let mut src = String::new();
    for i in 0..10000 {
        src.push_str(&format!("int a_rather_long_variable_name_to_fill_debug_str_{i:05} = {i};\n"));
    }
    std::fs::write(tmp.join("big.c"), src + "int main(void) { return 0; }\n").unwrap();
    gcc(&tmp, &["-c", "-g", "big.c"]);
    let disk = tmp.join("disk");
    std::fs::create_dir(&disk).unwrap();
    let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", "size=300k", "tmpfs"]).arg(&disk).status();
    if mounted.is_ok_and(|s| s.success()) {
        for detach in ["-Wl,--detach", "-Wl,--no-detach"] {
            let out = rivet_gcc(&tmp, &["big.o", "-o", "big", "-Wl,--separate-debug-file=disk/x.dbg", detach]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{detach}: the link succeeded");
            assert!(err.contains("cannot write disk/x.dbg: no space left on device"), "{err}");
            assert!(files_in(&disk).is_empty(), "{detach}: {:?} left on the disk", files_in(&disk));
        }
        must(Command::new("umount").arg(&disk));
    } else {
        eprintln!("no tmpfs: the full-disk case is not checked");
    }
    // Refused combinations say so.
    let out = Command::new(linker())
        .current_dir(&tmp.path)
        .args(["-r", "m.o", "-o", "r.o", "--separate-debug-file"])
        .output()
        .unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("final links"));
    tmp.finish();
}

/// A freestanding program with absolute addresses in its code and data.
const RAW: &str = "static const char msg[] = \"raw image\";\n\
    const char *ptr = msg;\n\
    int data_word = 0x1234;\n\
    void _start(void) { data_word += ptr[1]; for (;;); }\n";

/// `--oformat=binary`: the same bytes as lld's raw binary, and as `objcopy -O binary` of the
/// ELF output laid out the same way (-N: no page alignment); no ELF header; the map lists the
/// loaded sections only.
#[test]
fn raw_binary_is_lld_s_image() {
    let Some(tmp) = setup("oformat", &["gcc", "objcopy"]) else { return };
    if !Path::new(LLD).exists() {
        return;
    }
    std::fs::write(tmp.join("raw.c"), RAW).unwrap();
    gcc(&tmp, &["-c", "-O1", "-fno-pie", "-fno-asynchronous-unwind-tables", "raw.c"]);
    for start in ["-Ttext=0x500000", "-Ttext=0x4000"] {
        let link = |cmd: &Path, out: &str, extra: &[&str]| {
            must(
                Command::new(cmd)
                    .current_dir(&tmp.path)
                    .args(["-static", "--build-id=none", "raw.o", start, "-o", out])
                    .args(extra),
            );
            std::fs::read(tmp.join(out)).unwrap()
        };
        let ours = link(&linker(), "raw.bin", &["--oformat=binary", "-Map=raw.map"]);
        let lld = link(Path::new(LLD), "lld.bin", &["--oformat=binary"]);
        assert!(ours == lld, "{start}: rivet's raw binary differs from lld's ({} / {} bytes)", ours.len(), lld.len());
        assert!(!ours.starts_with(b"\x7fELF") && ours.len() < 64, "{} bytes", ours.len());
        let map = std::fs::read_to_string(tmp.join("raw.map")).unwrap();
        assert!(map.contains(" .text") && map.contains(" .data"), "{map}");
        for absent in [".symtab", ".strtab", ".shstrtab", ".comment"] {
            assert!(!map.contains(absent), "{absent} in the map of a raw binary:\n{map}");
        }
        if start == "-Ttext=0x500000" {
            link(&linker(), "raw.elf", &["-N"]);
            must(Command::new("objcopy").current_dir(&tmp.path).args(["-O", "binary", "raw.elf", "objcopy.bin"]));
            assert!(
                ours == std::fs::read(tmp.join("objcopy.bin")).unwrap(),
                "objcopy's image of the -N output differs"
            );
        }
    }
    let out = Command::new(linker()).current_dir(&tmp.path).args(["raw.o", "--oformat=srec"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--oformat: unknown format 'srec'"));
    tmp.finish();
}

/// A freestanding program that writes a line and exits with a status, with read-only data,
/// writable data and bss.
const FREESTANDING: &str = "const char msg[] = \"segments\\n\";\n\
    int counter = 5;\n\
    int table[100];\n\
    void _start(void) {\n\
    \x20 long r;\n\
    \x20 table[3] = counter;\n\
    \x20 __asm__ volatile(\"syscall\" : \"=a\"(r) : \"a\"(1), \"D\"(1), \"S\"(msg), \"d\"(sizeof msg - 1) : \"rcx\", \"r11\", \"memory\");\n\
    \x20 __asm__ volatile(\"syscall\" :: \"a\"(60), \"D\"(table[3] - 5));\n\
    }\n";

/// (type, flags, offset, vaddr, align) of each program header readelf lists.
fn phdrs(file: &Path) -> Vec<(String, String, u64, u64, u64)> {
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    readelf(&["-lW"], file)
        .lines()
        .map(str::split_whitespace)
        .map(Iterator::collect::<Vec<_>>)
        .filter(|w| w.len() >= 7 && w[1].starts_with("0x") && w[2].starts_with("0x"))
        .map(|w| (w[0].to_string(), w[6..w.len() - 1].join(""), hex(w[1]), hex(w[2]), hex(w[w.len() - 1])))
        .collect()
}

fn loads(file: &Path) -> Vec<(String, String, u64, u64, u64)> {
    phdrs(file).into_iter().filter(|p| p.0 == "LOAD").collect()
}

/// `-n`, `-N`, `-z separate-loadable-segments` and `-z noseparate-code`: program headers as lld
/// (or, where rivet follows GNU ld's segment order, GNU ld) makes them; the programs that can run
/// do.
#[test]
fn segment_options_match_the_reference_linkers() {
    let Some(tmp) = setup("segments", &["gcc", "readelf", "ld"]) else { return };
    if !Path::new(LLD).exists() {
        return;
    }
    std::fs::write(tmp.join("f.c"), FREESTANDING).unwrap();
    gcc(&tmp, &["-c", "-O1", "-fno-pie", "-fno-asynchronous-unwind-tables", "f.c"]);
    let link = |cmd: &str, out: &str, flags: &[&str]| -> PathBuf {
        let cmd = if cmd == "rivet" { linker() } else { PathBuf::from(cmd) };
        must(
            Command::new(cmd).current_dir(&tmp.path).args(["-static", "--build-id=none", "f.o", "-o", out]).args(flags),
        );
        tmp.join(out)
    };
    let runs = |exe: &Path| {
        let out = Command::new(exe).output().unwrap();
        assert_eq!((out.status.code(), out.stdout.as_slice()), (Some(0), &b"segments\n"[..]), "{}", exe.display());
    };
    // -n: no page alignment (each PT_LOAD aligned as its most aligned section, at most 32 here), no
    // RELRO, sections packed: as lld, whose segments have the same flags in its own order.
    let (ours, lld) = (link("rivet", "n", &["-n"]), link(LLD, "n.lld", &["-n"]));
    let default = link("rivet", "default", &[]);
    for file in [&ours, &lld] {
        let l = loads(file);
        assert!(l.iter().all(|p| p.4 <= 32), "{}: {l:?}", file.display());
        assert!(!phdrs(file).iter().any(|p| p.0 == "GNU_RELRO"), "{}", file.display());
    }
    let flags = |f: &Path| {
        let mut v: Vec<String> = loads(f).into_iter().map(|p| p.1).filter(|f| f != "R").collect();
        v.sort();
        v
    };
    assert_eq!(flags(&ours), flags(&lld));
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&ours) < size(&default) / 4, "-n: {} bytes, {} by default", size(&ours), size(&default));
    // -N: one read-write-execute segment, as lld's; the program runs.
    let (ours, lld) = (link("rivet", "big-n", &["-N"]), link(LLD, "big-n.lld", &["-N"]));
    assert_eq!(loads(&ours).iter().map(|p| p.1.clone()).collect::<Vec<_>>(), ["RWE"]);
    assert_eq!(loads(&lld).iter().map(|p| p.1.clone()).collect::<Vec<_>>(), ["RWE"]);
    runs(&ours);
    // -z separate-loadable-segments: every PT_LOAD starts a page in the file and in memory, as lld.
    for (file, by) in [
        (link("rivet", "sls", &["-z", "separate-loadable-segments"]), "rivet"),
        (link(LLD, "sls.lld", &["-z", "separate-loadable-segments"]), "lld"),
    ] {
        let l = loads(&file);
        assert!(l.len() >= 3 && l.iter().all(|p| p.2 % 4096 == 0 && p.3 % 4096 == 0 && p.4 == 4096), "{by}: {l:?}");
        runs(&file);
    }
    // -z noseparate-code: read-only data and code share one R+X segment, no page padding in the file
    // (GNU ld's segment order, which rivet follows).
    let (ours, bfd) =
        (link("rivet", "nsc", &["-z", "noseparate-code"]), link("ld", "nsc.bfd", &["-z", "noseparate-code"]));
    let shape = |f: &Path| loads(f).into_iter().map(|p| p.1).collect::<Vec<_>>();
    assert_eq!(shape(&ours), shape(&bfd));
    assert_eq!(shape(&ours), ["RE", "RW"]);
    assert!(size(&ours) < 8192, "{} bytes", size(&ours));
    runs(&ours);
    tmp.finish();
}

/// `--compress-debug-sections=FORMAT:LEVEL`: zstd levels through libzstd (a higher level is no
/// larger), zlib:0 stored yet flagged compressed (larger than zlib:9), a .debug_str over 1 MiB in
/// several zstd frames; readelf decompresses each to the uncompressed output's DWARF, and gdb finds
/// a variable's value as in GNU ld's program.
#[test]
fn compression_levels_and_frames() {
    let Some(tmp) = setup("compress-levels", &["gcc", "readelf", "gdb"]) else { return };
    // ~1.5 MB of .debug_str: long distinct variable names.
    let mut src = String::new();
    for i in 0..30000 {
        src.push_str(&format!("int a_rather_long_variable_name_to_fill_debug_str_{i:05} = {i};\n"));
    }
    src.push_str("int main(void) { return a_rather_long_variable_name_to_fill_debug_str_29999 != 29999; }\n");
    std::fs::write(tmp.join("big.c"), src).unwrap();
    gcc(&tmp, &["-c", "-g", "big.c"]);
    gcc(&tmp, &["big.o", "-o", "bfd"]);
    let print = |exe: &Path| {
        let v = "a_rather_long_variable_name_to_fill_debug_str_12345";
        let gdb = must(Command::new("gdb").args(["-nx", "-batch", "-ex", &format!("print {v}")]).arg(exe));
        String::from_utf8_lossy(&gdb.stdout).into_owned()
    };
    let expected = print(&tmp.join("bfd"));
    assert!(expected.contains("= 12345"), "{expected}");
    let dump = |f: &Path| {
        let s = readelf(&["--debug-dump=info", "-p", ".debug_str", "-z"], f);
        s.lines().filter(|l| !l.contains(&f.display().to_string())).collect::<Vec<_>>().join("\n")
    };
    assert!(rivet_gcc(&tmp, &["big.o", "-o", "plain"]).status.success());
    let reference = dump(&tmp.join("plain"));
    let mut sizes = Vec::new();
    for level in ["zstd:1", "zstd:19", "zlib:0", "zlib:9"] {
        let out = format!("e-{}", level.replace(':', "-"));
        let r = rivet_gcc(&tmp, &["big.o", "-o", &out, &format!("-Wl,--compress-debug-sections={level}")]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let exe = tmp.join(&out);
        let sections = readelf(&["-SW"], &exe);
        let str_line = sections.lines().find(|l| l.contains(" .debug_str ")).unwrap();
        assert!(str_line.contains(" MSC "), "{level}: {str_line}");
        assert!(dump(&exe) == reference, "{level}: the decompressed DWARF differs from the uncompressed output's");
        assert_eq!(print(&exe), expected, "{level}");
        sizes.push(std::fs::metadata(&exe).unwrap().len());
    }
    assert!(sizes[1] <= sizes[0], "zstd:19 {} > zstd:1 {}", sizes[1], sizes[0]);
    assert!(sizes[2] > sizes[3], "zlib:0 {} <= zlib:9 {}", sizes[2], sizes[3]);
    // Several frames: the section is over 1 MiB and zstd frames start with their magic number.
    let packed = section_bytes(&tmp.join("e-zstd-1"), ".debug_str");
    let frames = packed.windows(4).filter(|w| *w == [0x28, 0xb5, 0x2f, 0xfd]).count();
    assert!(frames >= 2, "{frames} zstd frame magic numbers seen");
    for (bad, msg) in [
        ("zstd:0", "zstd level must be between 1 and 22"),
        ("zstd:23", "zstd level must be between 1 and 22"),
        ("zlib:10", "zlib level must be between 0 and 9"),
    ] {
        let r = rivet_gcc(&tmp, &["big.o", "-o", "x", &format!("-Wl,--compress-debug-sections={bad}")]);
        assert!(!r.status.success() && String::from_utf8_lossy(&r.stderr).contains(msg), "{bad}");
    }
    tmp.finish();
}
