//! A cargo workspace built with the linker under test as rustc's linker: a binary that uses a
//! proc-macro crate (a shared object the compiler loads, linked by us) and a cdylib (loaded with
//! dlopen at run time). The binary runs, finds the cdylib's export, and its panic backtrace is
//! symbolized with file and line from the debug info we linked. Offline: no crates.io dependencies.
mod common;

use common::*;
use std::path::Path;
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The test workspace copied into `tmp`, and an `ld` for `-B` there that logs each link's output
/// before running the linker under test: (workspace, the `-B` directory, the log).
fn workspace(tmp: &TempDir) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let ws = tmp.join("ws");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cargo_workspace"), &ws);
    let (bin, log) = (tmp.join("bin"), tmp.join("links.log"));
    logging_ld(&bin, &log);
    (ws, bin, log)
}

/// `cargo build` of workspace `ws` into `target`, rustc linking through `cc -B bin`, with `more`
/// rustc flags.
fn cargo_build(ws: &Path, target: &Path, bin: &Path, more: &str) -> std::process::Output {
    must(
        Command::new("cargo")
            .current_dir(ws)
            .args(["build", "--offline", "--quiet", "--target-dir"])
            .arg(target)
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_RUSTFLAGS")
            .env("RUSTFLAGS", format!("-C linker-features=-lld -C link-arg=-B{} {more}", bin.display())),
    )
}

#[test]
fn workspace_with_proc_macro_and_cdylib() {
    if !have("cargo") || !have("cc") {
        eprintln!("skipped: cargo or cc missing");
        return;
    }
    let tmp = TempDir::new("cargo");
    let (ws, bin, log) = workspace(&tmp);
    let target = tmp.join("target");
    let out = cargo_build(&ws, &target, &bin, "");
    let linked = std::fs::read_to_string(&log).unwrap_or_default();
    for what in ["libmac-", "libcdy", "/app-"] {
        assert!(linked.lines().any(|l| l.contains(what)), "{what} was not linked by us:\n{linked}\n{out:?}");
    }
    let app = target.join("debug/app");
    let lib = target.join("debug/libcdy.so");
    let run = must(Command::new(&app).arg(&lib));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "Point with 3 fields\nchecksum 308930151\n");
    let panicked = Command::new(&app).arg(&lib).env("APP_PANIC", "1").env("RUST_BACKTRACE", "1").output().unwrap();
    assert_eq!(panicked.status.code(), Some(101));
    let bt = String::from_utf8_lossy(&panicked.stderr);
    assert!(bt.contains("deliberate panic for the backtrace"), "{bt}");
    let frames: Vec<&str> = bt.lines().collect();
    let at = frames.iter().position(|l| l.contains("app::deep_failure")).unwrap_or_else(|| panic!("no frame: {bt}"));
    assert!(frames[at + 1].contains("app/src/main.rs:10"), "the frame has no file and line:\n{bt}");
    assert!(frames.iter().any(|l| l.contains("app::main")), "{bt}");
    tmp.finish();
}

/// `--incremental` under cargo: rustc removes the output and names its objects and a temp
/// directory anew before every link, yet a rebuild that changes no byte the link reads is up to
/// date (the output given back its name: the same file), and an edit relinks, the program
/// showing it.
#[test]
fn incremental_relinks_of_a_cargo_binary() {
    if !have("cargo") || !have("cc") || !testing_rivet() {
        eprintln!("skipped: cargo or cc missing, or not testing rivet");
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let tmp = TempDir::new("cargo-incremental");
    let (ws, bin, log) = workspace(&tmp);
    let app_links =
        || std::fs::read_to_string(&log).unwrap_or_default().lines().filter(|l| l.contains("/app-")).count();
    let target = tmp.join("target");
    let build = || cargo_build(&ws, &target, &bin, "-C link-arg=-Wl,--incremental");
    let app = target.join("debug/app");
    let identity = || {
        let m = std::fs::metadata(&app).unwrap();
        (m.ino(), m.mtime(), m.mtime_nsec())
    };
    let main_rs = ws.join("app/src/main.rs");
    build();
    let first = identity();
    let states: Vec<_> = std::fs::read_dir(target.join("debug/deps"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.starts_with("app-") && n.ends_with(".rivet-incremental"))
        .collect();
    assert_eq!(states.len(), 1, "one state beside the binary: {states:?}");
    // Recompiled, the same bytes: up to date.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let source = std::fs::read_to_string(&main_rs).unwrap();
    std::fs::write(&main_rs, &source).unwrap();
    build();
    assert_eq!(app_links(), 2, "cargo ran the link again");
    assert_eq!(identity(), first, "a rebuild that changed no byte the link reads relinked");
    // An edit: a full link, and the program shows it.
    std::fs::write(&main_rs, source.replace("checksum {sum}", "sum {sum}")).unwrap();
    build();
    assert_eq!(app_links(), 3);
    assert_ne!(identity(), first);
    let run = must(Command::new(&app).arg(target.join("debug/libcdy.so")));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "Point with 3 fields\nsum 308930151\n");
    tmp.finish();
}
