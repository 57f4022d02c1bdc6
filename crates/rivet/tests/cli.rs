//! rivet's own promises on real links: both output modes and every thread count give the same
//! bytes, the timing report and the Chrome trace show the phases.
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles a small C++ program (exceptions, iostream, -g: many sections and relocations).
fn prepare(tmp: &TempDir) -> bool {
    if !have("g++") {
        eprintln!("skipped: g++ missing");
        return false;
    }
    std::fs::write(
        tmp.join("p.cpp"),
        "#include <iostream>\n#include <stdexcept>\nint main(int c, char**) { try { if (c > 0) throw std::runtime_error(\"x\"); } catch (std::exception &e) { std::cout << e.what() << std::endl; } }\n",
    )
    .unwrap();
    must(
        Command::new("g++")
            .current_dir(&tmp.path)
            .args(["-c", "-g", "p.cpp"]),
    );
    true
}

/// Links p.o statically through `g++ -B` with the linker under test; `extra` go to the linker.
fn link(tmp: &TempDir, out: &str, extra: &[&str]) -> (PathBuf, String) {
    let mut cmd = Command::new("g++");
    cmd.current_dir(&tmp.path)
        .arg("-B")
        .arg(linker_dir(tmp))
        .args(["-static", "p.o", "-o", out]);
    for e in extra {
        cmd.arg(format!("-Wl,{e}"));
    }
    let o = must(&mut cmd);
    (
        tmp.join(out),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn runs(exe: &Path) {
    let o = must(&mut Command::new(exe));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "x\n");
}

#[test]
fn output_modes_and_thread_counts_give_identical_bytes() {
    if !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("cli-identical");
    if !prepare(&tmp) {
        return;
    }
    let (mmap, _) = link(&tmp, "mmap", &["--mmap-output-file"]);
    let (heap, _) = link(&tmp, "heap", &["--no-mmap-output-file"]);
    let (one, _) = link(&tmp, "one", &["--threads=1"]);
    let reference = std::fs::read(&mmap).unwrap();
    for other in [&heap, &one] {
        assert!(
            std::fs::read(other).unwrap() == reference,
            "{} differs from {}",
            other.display(),
            mmap.display()
        );
    }
    for _ in 0..3 {
        let (again, _) = link(&tmp, "again", &[]);
        assert!(
            std::fs::read(&again).unwrap() == reference,
            "a repeated link gave different bytes"
        );
    }
    runs(&mmap);
    runs(&heap);
    tmp.finish();
}

#[test]
fn timing_report_and_trace_show_the_phases() {
    if !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("cli-timing");
    if !prepare(&tmp) {
        return;
    }
    let trace = tmp.join("trace.json");
    let (exe, stderr) = link(
        &tmp,
        "timed",
        &[
            "--print-timing",
            &format!("--time-trace={}", trace.display()),
        ],
    );
    runs(&exe);
    for phase in [
        "open inputs",
        "resolve symbols",
        "layout",
        "write",
        "commit",
        "total",
    ] {
        assert!(
            stderr.contains(phase),
            "no '{phase}' in the timing report:\n{stderr}"
        );
    }
    let json = std::fs::read_to_string(&trace).unwrap();
    assert!(
        json.starts_with("{\"traceEvents\":[") && json.trim_end().ends_with('}'),
        "{json}"
    );
    assert!(json.contains("\"name\":\"resolve symbols\""), "{json}");
    tmp.finish();
}

#[test]
fn version_and_help() {
    let v = must(Command::new(linker()).arg("--version"));
    let text = String::from_utf8_lossy(&v.stdout);
    assert!(
        text.contains("compatible with GNU ld") || !testing_rivet(),
        "{text}"
    );
    if testing_rivet() {
        let h = must(Command::new(linker()).arg("--help"));
        assert!(String::from_utf8_lossy(&h.stdout).contains("--no-mmap-output-file"));
    }
}

#[test]
fn unimplemented_options_are_refused() {
    if !testing_rivet() {
        return;
    }
    let out = Command::new(linker())
        .args(["-static", "--wrap=malloc", "x.o"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not supported yet: --wrap"));
}
