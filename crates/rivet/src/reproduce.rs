//! `--reproduce=FILE.tar` (and mold's `-repro`: OUTPUT.repro.tar): a tarball that replays this link anywhere, in the layout lld uses so the
//! same archive serves every linker: `NAME/response.txt` (the command line with every input path
//! made relative to `NAME/`), `NAME/version.txt`, and each input stored under its absolute path
//! (`NAME/usr/lib/x86_64-linux-gnu/crt1.o`). Extract it, `cd NAME`, run `LINKER @response.txt`.
use crate::args::Config;
use crate::diag::{Context, Result};
use crate::timing::Timer;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where a file lives inside the archive (relative to `NAME/`).
fn stored_path(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map(|d| d.join(p)).unwrap_or_else(|_| p.to_path_buf())
    };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::Normal(n) => out.push(n),
            std::path::Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

fn quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:+,@%".contains(&b)) {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// The replay command line: inputs, `-L`, scripts and lists point into the archive; `-o` is the
/// output's file name; `--reproduce` and mold's `-repro` themselves are dropped.
fn response(config: &Config, files: &[PathBuf]) -> String {
    let rewrite = |a: &str| -> String {
        let p = Path::new(a);
        if !a.starts_with('-') && files.iter().any(|f| f == p) {
            stored_path(p).display().to_string()
        } else {
            a.to_string()
        }
    };
    let mut out = Vec::new();
    let mut args = config.raw_args.iter();
    while let Some(a) = args.next() {
        if a.starts_with("--reproduce") || a.starts_with("-reproduce") {
            if !a.contains('=') {
                args.next();
            }
            continue;
        }
        if a == "-repro" || a == "--repro" {
            continue;
        }
        // gcc's LTO plugin is not an input; without LTO objects no linker needs it.
        if a == "-plugin" || a == "--plugin" {
            args.next();
            continue;
        }
        if a.starts_with("-plugin-opt") || a.starts_with("--plugin-opt") {
            if !a.contains('=') {
                args.next();
            }
            continue;
        }
        if a == "-o" || a == "--output" {
            args.next();
            continue;
        }
        if a.starts_with("-o") && a.len() > 2 && !a.starts_with("--") {
            continue;
        }
        if let Some(dir) = a.strip_prefix("-L") {
            if dir.is_empty() {
                if let Some(d) = args.next() {
                    out.push(format!("-L{}", stored_path(Path::new(d)).display()));
                }
            } else {
                out.push(format!("-L{}", stored_path(Path::new(dir)).display()));
            }
            continue;
        }
        for prefix in ["--version-script=", "--dynamic-list="] {
            if let Some(f) = a.strip_prefix(prefix) {
                out.push(format!("{prefix}{}", stored_path(Path::new(f)).display()));
            }
        }
        if a.starts_with("--version-script=") || a.starts_with("--dynamic-list=") {
            continue;
        }
        if crate::args::takes_separate_value(a) && !a.starts_with("-l") {
            out.push(a.clone());
            if let Some(v) = args.next() {
                out.push(v.clone());
            }
            continue;
        }
        out.push(rewrite(a));
    }
    let name = config.output.file_name().map_or("a.out".into(), |n| n.to_string_lossy().into_owned());
    out.push("-o".into());
    out.push(name);
    out.iter().map(|a| quote(a)).collect::<Vec<_>>().join("\n") + "\n"
}

/// A ustar header; names too long for it go in a PAX extended header first.
fn tar_entry(out: &mut Vec<u8>, name: &str, size: u64) {
    if name.len() > 99 {
        let record = |len: usize| format!("{len} path={name}\n");
        let mut len = record(0).len();
        while record(len).len() != len {
            len = record(len).len();
        }
        let pax = record(len);
        header(out, "pax", pax.len() as u64, b'x');
        out.extend_from_slice(pax.as_bytes());
        pad(out);
    }
    header(out, &name[..name.len().min(99)], size, b'0');
}

fn header(out: &mut Vec<u8>, name: &str, size: u64, kind: u8) {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    h[100..107].copy_from_slice(b"0000644");
    h[108..115].copy_from_slice(b"0000000");
    h[116..123].copy_from_slice(b"0000000");
    h[124..135].copy_from_slice(format!("{size:011o}").as_bytes());
    h[136..147].copy_from_slice(b"00000000000");
    h[156] = kind;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| b as u32).sum();
    h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    out.extend_from_slice(&h);
}

fn pad(out: &mut Vec<u8>) {
    let rem = out.len() % 512;
    if rem != 0 {
        out.extend(std::iter::repeat_n(0u8, 512 - rem));
    }
}

/// `--reproduce`: like lld, the archive is written before linking, so a failing link can be
/// replayed too; its inputs are every file the link has opened (`cache`).
pub fn write_if_asked(config: &Config, cache: &rivet_io::InputCache, timer: &Timer) -> Result<()> {
    let Some(tar) = &config.reproduce else { return Ok(()) };
    let files: Vec<_> = cache.files();
    let inputs: Vec<_> = files.iter().map(|f| (f.path().to_path_buf(), f.data())).collect();
    timer.phase("reproduce", || write(config, &inputs)).with_context(|| format!("cannot write {}", tar.display()))
}

/// Writes the archive. `inputs` are every file the link read (as opened), with their bytes. The
/// error (a version script that cannot be read, the archive that cannot be written) does not name
/// the archive: the caller says what could not be written.
pub fn write(config: &Config, inputs: &[(PathBuf, &[u8])]) -> Result<()> {
    let tar_path = config.reproduce.as_ref().expect("--reproduce given");
    let base = tar_path.file_stem().map_or("repro".into(), |s| s.to_string_lossy().into_owned());
    let mut extra: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for f in config.version_scripts.iter().chain(&config.dynamic_lists) {
        extra.push((f.clone(), std::fs::read(f)?));
    }
    let mut files: Vec<PathBuf> = inputs.iter().map(|(p, _)| p.clone()).collect();
    files.extend(extra.iter().map(|(p, _)| p.clone()));
    let mut out = Vec::new();
    let resp = response(config, &files);
    for (name, data) in [
        ("response.txt", resp.as_bytes()),
        // The archive replays with any of the linkers whose command lines rivet takes.
        (
            "version.txt",
            concat!("rivet v", env!("CARGO_PKG_VERSION"), " (compatible with GNU ld, lld and mold)\n").as_bytes(),
        ),
    ] {
        tar_entry(&mut out, &format!("{base}/{name}"), data.len() as u64);
        out.extend_from_slice(data);
        pad(&mut out);
    }
    let mut seen = std::collections::HashSet::new();
    let all = inputs.iter().map(|(p, d)| (p.clone(), *d)).chain(extra.iter().map(|(p, d)| (p.clone(), d.as_slice())));
    for (path, data) in all {
        let stored = format!("{base}/{}", stored_path(&path).display());
        if !seen.insert(stored.clone()) {
            continue;
        }
        tar_entry(&mut out, &stored, data.len() as u64);
        out.extend_from_slice(data);
        pad(&mut out);
    }
    out.extend(std::iter::repeat_n(0u8, 1024));
    let mut f = std::fs::File::create(tar_path)?;
    Ok(f.write_all(&out)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_the_archive() {
        assert_eq!(stored_path(Path::new("/usr/lib/../lib/crt1.o")), PathBuf::from("usr/lib/crt1.o"));
        assert_eq!(quote("-lc"), "-lc");
        assert_eq!(quote("a b"), "\"a b\"");
    }

    #[test]
    fn tar_headers_have_valid_checksums() {
        let mut out = Vec::new();
        tar_entry(&mut out, "x/file", 5);
        let h = &out[..512];
        let stored = u32::from_str_radix(std::str::from_utf8(&h[148..154]).unwrap(), 8).unwrap();
        let mut copy = h.to_vec();
        copy[148..156].copy_from_slice(b"        ");
        assert_eq!(stored, copy.iter().map(|&b| b as u32).sum::<u32>());
        let long = format!("x/{}", "d/".repeat(80));
        let mut out = Vec::new();
        tar_entry(&mut out, &long, 1);
        assert_eq!(out[156], b'x', "a PAX header carries the long name");
    }
}
