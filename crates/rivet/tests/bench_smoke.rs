//! The benchmark tool must not rot: build the tiny c-hello job with it and run it once with GNU ld
//! and rivet (into a temporary cache and results directory). Timings are not checked: this test
//! only proves the tool works end to end.
mod common;

use common::*;
use std::process::Command;

#[test]
fn bench_tool_builds_and_runs_a_tiny_job() {
    if !have("python3") || !have("gcc") || !testing_rivet() {
        eprintln!("skipped: python3 or gcc missing");
        return;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tmp = TempDir::new("bench-smoke");
    let cache = tmp.join("cache");
    let rivet = std::path::Path::new(env!("CARGO_BIN_EXE_rivet"));
    // corpus.py finds rivet in CARGO_TARGET_DIR/release; point it at a directory holding this build.
    let target = tmp.join("target");
    std::fs::create_dir_all(target.join("release")).unwrap();
    std::os::unix::fs::symlink(rivet, target.join("release/rivet")).unwrap();
    let env = [("RIVET_BENCH_CACHE", cache.as_os_str()), ("CARGO_TARGET_DIR", target.as_os_str())];
    must(Command::new("python3").current_dir(&root).envs(env).args(["bench/corpus.py", "build", "--jobs", "c-hello"]));
    let out = must(
        Command::new("python3")
            .current_dir(&root)
            .envs(env)
            .args(["bench/run.py", "--jobs", "c-hello", "--linkers", "bfd,rivet", "--runs", "1", "--no-plot", "--out"])
            .arg(tmp.join("results")),
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("| c-hello | rivet |") && table.contains("| c-hello | bfd |"), "{table}");
    assert!(!table.contains("failed"), "{table}");
    assert!(std::fs::read_dir(tmp.join("results")).unwrap().any(|e| e
        .unwrap()
        .path()
        .extension()
        .is_some_and(|x| x == "json")));
    tmp.finish();
}
