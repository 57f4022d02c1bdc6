//! Corrupted objects, generated: a real object (compiled here from a small C program with
//! functions, data, TLS, relocations, mergeable strings, COMDAT groups and `-g3` debug info) is
//! corrupted one field at a time (every ELF header field, every field of every section header,
//! every field of every symbol, each set to a few chosen values) and by random byte changes, and
//! each copy is linked by the linker under test and by lld. The linker must never crash: it exits 1
//! with `rivet: error:` naming the file, or links. When it links an input that lld rejects, the
//! test fails, unless lld's reason is in `TOLERATED` (each entry says why the field does not
//! matter to rivet).
//!
//! `RIVET_MUTATIONS=N` sets how many randomly mutated copies the differential test links (default
//! 1500); the seed is fixed, `RIVET_MUTATION_SEED` changes it.
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const PROGRAM: &str = r#"
static const char *greeting = "hello, corrupt world";
int counter = 3;
static int table[4] = {1, 2, 3, 4};
__thread int tls_value = 7;
extern int puts(const char *);
static int helper(int x) { return table[x & 3] * counter; }
int compute(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += helper(i);
    return s + tls_value;
}
const char *name(void) { return greeting; }
int main(void) {
    puts(name());
    puts("second string");
    return compute(counter) & 0x7f;
}
"#;

/// lld's rejections that rivet may accept, each with the reason the corrupted field does not
/// change what rivet links.
const TOLERATED: &[(&str, &str)] = &[
    // lld crashed (a signal, not a diagnosis): nothing to compare with.
    ("PLEASE submit a bug report", "lld crashed"),
    ("Stack dump:", "lld crashed"),
];

fn lld() -> Option<PathBuf> {
    ["ld.lld", "ld.lld-19", "/usr/lib/llvm-19/bin/ld.lld"]
        .iter()
        .map(PathBuf::from)
        .find(|p| Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// The object under test, compiled into `tmp`.
fn compile(tmp: &TempDir) -> Vec<u8> {
    let c = tmp.join("prog.c");
    std::fs::write(&c, PROGRAM).unwrap();
    let o = tmp.join("prog.o");
    must(Command::new("gcc").args(["-c", "-g3", "-O1", "-fcf-protection"]).arg(&c).arg("-o").arg(&o));
    std::fs::read(&o).unwrap()
}

struct Outcome {
    code: Option<i32>,
    stderr: String,
}

/// Links `obj` alone (the libc calls left undefined: each link takes milliseconds).
fn link(ld: &Path, obj: &Path, out: &Path) -> Outcome {
    let mut cmd = Command::new(ld);
    cmd.args(["-static", "-e", "main", "--unresolved-symbols=ignore-all", "-o"]).arg(out).arg(obj);
    let (o, timed_out) = run_with_timeout(&mut cmd, b"", std::time::Duration::from_secs(60));
    assert!(!timed_out, "{} hung", render(&cmd));
    Outcome { code: o.status.code(), stderr: String::from_utf8_lossy(&o.stderr).into_owned() }
}

fn u16_at(b: &[u8], at: usize) -> u64 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap()) as u64
}
fn u32_at(b: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as u64
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}
fn get(b: &[u8], at: usize, width: usize) -> u64 {
    match width {
        1 => b[at] as u64,
        2 => u16_at(b, at),
        4 => u32_at(b, at),
        _ => u64_at(b, at),
    }
}

/// One corrupted copy: `width` bytes at `at` set to `value`.
struct Field {
    what: String,
    at: usize,
    width: usize,
    value: u64,
}

/// The values a field is set to: 0, all ones, one more than it is, the top bit, and `bound` (the
/// first value past what the field may hold: a count, a size) when there is one.
fn values(width: usize, current: u64, bound: Option<u64>) -> Vec<u64> {
    let ones = if width == 8 { u64::MAX } else { (1u64 << (8 * width)) - 1 };
    let mut v = vec![0, ones, current.wrapping_add(1) & ones, 1 << (8 * width - 1)];
    v.extend(bound.map(|b| b & ones));
    v.sort_unstable();
    v.dedup();
    v.retain(|&x| x != current);
    v
}

/// Every field of the ELF header, of every section header and of every symbol.
fn fields(obj: &[u8]) -> Vec<Field> {
    let mut out = Vec::new();
    let mut add = |what: String, at: usize, width: usize, bound: Option<u64>| {
        for value in values(width, get(obj, at, width), bound) {
            out.push(Field { what: what.clone(), at, width, value });
        }
    };
    const HEADER: &[(usize, usize, &str)] = &[
        (4, 1, "EI_CLASS"),
        (5, 1, "EI_DATA"),
        (6, 1, "EI_VERSION"),
        (7, 1, "EI_OSABI"),
        (8, 1, "EI_ABIVERSION"),
        (16, 2, "e_type"),
        (18, 2, "e_machine"),
        (20, 4, "e_version"),
        (24, 8, "e_entry"),
        (32, 8, "e_phoff"),
        (40, 8, "e_shoff"),
        (48, 4, "e_flags"),
        (52, 2, "e_ehsize"),
        (54, 2, "e_phentsize"),
        (56, 2, "e_phnum"),
        (58, 2, "e_shentsize"),
        (60, 2, "e_shnum"),
        (62, 2, "e_shstrndx"),
    ];
    for &(at, width, name) in HEADER {
        add(name.to_string(), at, width, None);
    }
    let shoff = u64_at(obj, 0x28) as usize;
    let shnum = u16_at(obj, 0x3c);
    const SECTION: &[(usize, usize, &str)] = &[
        (0, 4, "sh_name"),
        (4, 4, "sh_type"),
        (8, 8, "sh_flags"),
        (16, 8, "sh_addr"),
        (24, 8, "sh_offset"),
        (32, 8, "sh_size"),
        (40, 4, "sh_link"),
        (44, 4, "sh_info"),
        (48, 8, "sh_addralign"),
        (56, 8, "sh_entsize"),
    ];
    for i in 0..shnum as usize {
        let h = shoff + 64 * i;
        for &(off, width, name) in SECTION {
            let bound = match name {
                "sh_link" | "sh_info" => Some(shnum),
                "sh_size" => Some(obj.len() as u64 - u64_at(obj, h + 24) + 1),
                _ => None,
            };
            add(format!("section {i} {name}"), h + off, width, bound);
        }
        if u32_at(obj, h + 4) == 2 {
            // SHT_SYMTAB: every symbol.
            let (start, size, link) = (u64_at(obj, h + 24) as usize, u64_at(obj, h + 32) as usize, u32_at(obj, h + 40));
            let strsize = u64_at(obj, shoff + 64 * link as usize + 32);
            const SYMBOL: &[(usize, usize, &str)] = &[
                (0, 4, "st_name"),
                (4, 1, "st_info"),
                (5, 1, "st_other"),
                (6, 2, "st_shndx"),
                (8, 8, "st_value"),
                (16, 8, "st_size"),
            ];
            for k in 0..size / 24 {
                for &(off, width, name) in SYMBOL {
                    let bound = match name {
                        "st_name" => Some(strsize),
                        "st_shndx" => Some(shnum),
                        _ => None,
                    };
                    add(format!("symbol {k} {name}"), start + 24 * k + off, width, bound);
                }
            }
        }
    }
    out
}

/// What one case came to, for the summary and the failures.
#[derive(Default)]
struct Tally {
    cases: AtomicUsize,
    rivet_rejects: AtomicUsize,
    both_reject: AtomicUsize,
    both_accept: AtomicUsize,
    only_lld_rejects_tolerated: AtomicUsize,
    failures: Mutex<Vec<String>>,
}

impl Tally {
    fn fail(&self, msg: String) {
        self.failures.lock().unwrap().push(msg);
    }

    fn summary(&self, name: &str) -> String {
        format!(
            "{name}: {} cases; rivet rejected {} (lld too: {}), both linked {}, lld alone rejected {} (tolerated)",
            self.cases.load(Ordering::Relaxed),
            self.rivet_rejects.load(Ordering::Relaxed),
            self.both_reject.load(Ordering::Relaxed),
            self.both_accept.load(Ordering::Relaxed),
            self.only_lld_rejects_tolerated.load(Ordering::Relaxed),
        )
    }

    fn finish(&self, name: &str) {
        eprintln!("{}", self.summary(name));
        let failures = self.failures.lock().unwrap();
        assert!(failures.is_empty(), "{}\n{} failures:\n{}", self.summary(name), failures.len(), failures.join("\n"));
    }
}

/// Links one corrupted copy with both linkers and records the outcome.
fn check(dir: &Path, n: usize, bytes: &[u8], what: &str, lld: Option<&Path>, tally: &Tally) {
    let obj = dir.join(format!("case{n}.o"));
    std::fs::write(&obj, bytes).unwrap();
    let out = dir.join(format!("case{n}.out"));
    let ours = link(&linker(), &obj, &out);
    tally.cases.fetch_add(1, Ordering::Relaxed);
    let first_line = ours.stderr.lines().next().unwrap_or("").to_string();
    match ours.code {
        Some(0) => {
            if let Some(lld) = lld {
                let theirs = link(lld, &obj, &dir.join(format!("case{n}.lld")));
                let _ = std::fs::remove_file(dir.join(format!("case{n}.lld")));
                if theirs.code == Some(0) {
                    tally.both_accept.fetch_add(1, Ordering::Relaxed);
                } else if TOLERATED.iter().any(|(m, _)| theirs.stderr.contains(m)) || theirs.code.is_none() {
                    tally.only_lld_rejects_tolerated.fetch_add(1, Ordering::Relaxed);
                } else {
                    let why = theirs.stderr.lines().find(|l| l.contains("error:")).unwrap_or("").to_string();
                    tally.fail(format!("{what}: linked, but lld says: {why}"));
                }
            }
        }
        Some(1) => {
            tally.rivet_rejects.fetch_add(1, Ordering::Relaxed);
            if testing_rivet() {
                // Warnings may come first (a mutated symbol table can lose `main`: "cannot find
                // entry symbol"); the error must follow and name the file.
                let has_error = ours.stderr.lines().any(|l| l.starts_with("rivet: error:"));
                let named = has_error && ours.stderr.contains(&format!("case{n}.o"));
                if !named {
                    tally.fail(format!("{what}: the error does not name the file: {first_line}"));
                }
            }
            if lld.is_some_and(|l| link(l, &obj, &dir.join(format!("case{n}.lld"))).code != Some(0)) {
                tally.both_reject.fetch_add(1, Ordering::Relaxed);
            }
            let _ = std::fs::remove_file(dir.join(format!("case{n}.lld")));
        }
        code => tally.fail(format!("{what}: exit {code:?} (a crash?)\n{}", ours.stderr)),
    }
    let _ = std::fs::remove_file(&obj);
    let _ = std::fs::remove_file(&out);
}

/// Runs `work(i)` for i in 0..n on a few threads.
fn parallel(n: usize, work: impl Fn(usize) + Sync) {
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |p| p.get()).clamp(2, 4);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                work(i);
            });
        }
    });
}

fn setup(name: &str) -> Option<(TempDir, Vec<u8>, Option<PathBuf>)> {
    if !have("gcc") {
        eprintln!("skipped: gcc missing");
        return None;
    }
    let lld = lld();
    if lld.is_none() {
        eprintln!("lld missing: checking only that rivet never crashes");
    }
    let tmp = TempDir::new(name);
    let obj = compile(&tmp);
    // The uncorrupted object links.
    let base = link(&linker(), &tmp.join("prog.o"), &tmp.join("base.out"));
    assert_eq!(base.code, Some(0), "{}", base.stderr);
    Some((tmp, obj, lld))
}

#[test]
fn every_field_corrupted_alone() {
    let Some((tmp, obj, lld)) = setup("fields") else { return };
    let cases = fields(&obj);
    assert!(cases.len() > 1500, "{} cases", cases.len());
    let tally = Tally::default();
    parallel(cases.len(), |i| {
        let f = &cases[i];
        let mut bytes = obj.clone();
        bytes[f.at..f.at + f.width].copy_from_slice(&f.value.to_le_bytes()[..f.width]);
        let what = format!("{} = {:#x}", f.what, f.value);
        check(&tmp.path, i, &bytes, &what, lld.as_deref(), &tally);
    });
    tally.finish("every field corrupted alone");
    tmp.finish();
}

/// xorshift64: a fixed, dependency-free sequence.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn random_byte_changes_against_lld() {
    let Some((tmp, obj, lld)) = setup("mutations") else { return };
    let count = std::env::var("RIVET_MUTATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(1500usize);
    let seed0 =
        std::env::var("RIVET_MUTATION_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x9e37_79b9_7f4a_7c15u64);
    let tally = Tally::default();
    parallel(count, |i| {
        let mut seed = seed0 ^ ((i as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
        let mut bytes = obj.clone();
        let changes = 1 + next(&mut seed) % 8;
        let mut what = format!("mutation {i} (seed {seed0:#x}):");
        for _ in 0..changes {
            let at = (next(&mut seed) % bytes.len() as u64) as usize;
            let value = next(&mut seed) as u8;
            what.push_str(&format!(" [{at:#x}]={value:#04x}"));
            bytes[at] = value;
        }
        check(&tmp.path, i, &bytes, &what, lld.as_deref(), &tally);
    });
    tally.finish("random byte changes");
    tmp.finish();
}
