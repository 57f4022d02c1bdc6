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

#[test]
fn workspace_with_proc_macro_and_cdylib() {
    if !have("cargo") || !have("cc") {
        eprintln!("skipped: cargo or cc missing");
        return;
    }
    let tmp = TempDir::new("cargo");
    let ws = tmp.join("ws");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cargo_workspace"), &ws);
    let (bin, log) = (tmp.join("bin"), tmp.join("links.log"));
    logging_ld(&bin, &log);
    let target = tmp.join("target");
    let out = must(
        Command::new("cargo")
            .current_dir(&ws)
            .args(["build", "--offline", "--quiet", "--target-dir"])
            .arg(&target)
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_RUSTFLAGS")
            .env("RUSTFLAGS", format!("-C linker-features=-lld -C link-arg=-B{}", bin.display())),
    );
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
