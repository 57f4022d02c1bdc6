//! The I/O promises on real links: a full disk is a clear error before anything is written (never a
//! SIGBUS), with no temp file and the old output intact; a running executable can be relinked.
mod common;

use common::*;
use std::process::Command;
use std::time::Duration;

fn compile(tmp: &TempDir, name: &str, source: &str) -> std::path::PathBuf {
    let c = tmp.join(&format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let o = tmp.join(&format!("{name}.o"));
    must(Command::new("gcc").arg("-c").arg(&c).arg("-o").arg(&o));
    o
}

#[test]
fn full_disk_is_a_clear_error_in_both_modes() {
    if !have("gcc") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("io-full");
    let obj = compile(&tmp, "big", "char blob[4 << 20] = {1};\nint main(void) { return blob[0] - 1; }\n");
    let disk = tmp.join("disk");
    std::fs::create_dir_all(&disk).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&disk)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a small tmpfs");
        return;
    }
    let old = b"the previous output".to_vec();
    std::fs::write(disk.join("a.out"), &old).unwrap();
    let mut results = Vec::new();
    for mode in ["--mmap-output-file", "--no-mmap-output-file"] {
        let out = Command::new("gcc")
            .arg("-B")
            .arg(linker_dir(&tmp))
            .arg("-static")
            .arg(&obj)
            .arg(format!("-Wl,{mode}"))
            .arg("-o")
            .arg(disk.join("a.out"))
            .output()
            .unwrap();
        results.push((
            mode,
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            files_in(&disk),
            std::fs::read(disk.join("a.out")).unwrap(),
        ));
    }
    let _ = Command::new("umount").arg(&disk).status();
    for (mode, code, stderr, listing, content) in results {
        assert_ne!(code, Some(0), "{mode}: the link should fail");
        assert!(stderr.contains("rivet: error:") && stderr.contains("no space left"), "{mode}: {stderr}");
        assert!(!stderr.contains("SIGBUS") && !stderr.contains("signal"), "{mode}: {stderr}");
        assert_eq!(listing, vec!["a.out"], "{mode}: a temp file was left");
        assert_eq!(content, old, "{mode}: the old output changed");
    }
    tmp.finish();
}

#[test]
fn relinking_a_running_executable() {
    if !have("gcc") {
        return;
    }
    let tmp = TempDir::new("io-running");
    let v1 = compile(&tmp, "v1", "#include <stdio.h>\n#include <unistd.h>\nint main(void) { puts(\"v1 start\"); fflush(stdout); usleep(600000); puts(\"v1 end\"); return 0; }\n");
    let v2 = compile(&tmp, "v2", "#include <stdio.h>\nint main(void) { puts(\"v2\"); return 0; }\n");
    let exe = tmp.join("prog");
    let link =
        |obj: &std::path::Path| must(Command::new("gcc").arg("-B").arg(linker_dir(&tmp)).arg(obj).arg("-o").arg(&exe));
    link(&v1);
    let running = Command::new(&exe).stdout(std::process::Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(150));
    link(&v2); // the file is busy (ETXTBSY for writing): a new file must replace it
    let out = running.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "v1 start\nv1 end\n");
    assert!(out.status.success());
    let now = must(&mut Command::new(&exe));
    assert_eq!(String::from_utf8_lossy(&now.stdout), "v2\n");
    tmp.finish();
}

/// The replaced output is released by a child process; it must never hold the new output open for
/// writing, or executing it right after the link fails with ETXTBSY ("Text file busy").
#[test]
fn new_output_runs_immediately_after_replacing_the_old_one() {
    if !have("gcc") {
        return;
    }
    let tmp = TempDir::new("io-txtbsy");
    let obj = compile(&tmp, "p", "int main(void) { return 7; }\n");
    let exe = tmp.join("p");
    for mode in ["--mmap-output-file", "--no-mmap-output-file"] {
        for _ in 0..8 {
            must(
                Command::new("gcc")
                    .arg("-B")
                    .arg(linker_dir(&tmp))
                    .arg(&obj)
                    .arg(format!("-Wl,{mode}"))
                    .arg("-o")
                    .arg(&exe),
            );
            let status =
                Command::new(&exe).status().unwrap_or_else(|e| panic!("{mode}: cannot run the new output: {e}"));
            assert_eq!(status.code(), Some(7), "{mode}");
        }
    }
    tmp.finish();
}

/// Hundreds of mapped inputs link under `ulimit -n 32`: no descriptor is kept per input.
#[test]
fn many_inputs_with_few_file_descriptors() {
    if !have("gcc") || !have("as") || !have("sh") {
        return;
    }
    let tmp = TempDir::new("io-fds");
    let mut objs = Vec::new();
    for i in 0..150 {
        // 24 KiB each: above the 16 KiB threshold, so the input is mapped.
        let s = tmp.join(&format!("f{i}.s"));
        std::fs::write(&s, format!(".text\n.globl f{i}\nf{i}:\n  ret\n.data\n.fill 24576,1,{}\n", i % 200)).unwrap();
        let o = tmp.join(&format!("f{i}.o"));
        must(Command::new("as").arg(&s).arg("-o").arg(&o));
        objs.push(o.display().to_string());
    }
    let main = compile(&tmp, "main", "void f0(void); void f149(void); int main(void) { f0(); f149(); return 5; }\n");
    let exe = tmp.join("prog");
    let ldir = linker_dir(&tmp);
    let script = format!(
        "ulimit -n 32 && exec gcc -B {} {} {} -o {}",
        ldir.display(),
        main.display(),
        objs.join(" "),
        exe.display()
    );
    must(Command::new("sh").arg("-c").arg(&script));
    assert_eq!(Command::new(&exe).status().unwrap().code(), Some(5));
    tmp.finish();
}
