//! The I/O promises on real links: a full disk is a clear error before anything is written (never a
//! SIGBUS), with no temp file and the old output intact; a running executable can be relinked; the
//! previous output is rewritten in place only when that is safe, with the same bytes as a new file.
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

/// A tmpfs of `size` mounted at `TMP/disk` (None, with a note, where mounting is not allowed); the
/// test unmounts it when it is done with it.
fn mount_tmpfs(tmp: &TempDir, size: &str) -> Option<std::path::PathBuf> {
    let disk = tmp.join("disk");
    std::fs::create_dir_all(&disk).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(&disk)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs of {size}");
        return None;
    }
    Some(disk)
}

#[test]
fn full_disk_is_a_clear_error_in_both_modes() {
    if !have("gcc") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("io-full");
    let obj = compile(&tmp, "big", "char blob[4 << 20] = {1};\nint main(void) { return blob[0] - 1; }\n");
    let Some(disk) = mount_tmpfs(&tmp, "1m") else { return };
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
    must(Command::new("gcc").arg("-B").arg(linker_dir(&tmp)).arg(&v1).arg("-o").arg(&exe));
    let running = Command::new(&exe).stdout(std::process::Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(150));
    // The file is busy (ETXTBSY for writing): it is not reused, a new file replaces it.
    let relink = must(
        Command::new("gcc").arg("-B").arg(linker_dir(&tmp)).arg(&v2).arg("-Wl,--print-timing").arg("-o").arg(&exe),
    );
    if testing_rivet() {
        let report = String::from_utf8_lossy(&relink.stderr);
        assert!(report.contains("output file      new file: the previous output is running (ETXTBSY)"), "{report}");
    }
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
    for i in 0..250 {
        // 24 KiB each: above the 16 KiB threshold, so the input is mapped.
        let s = tmp.join(&format!("f{i}.s"));
        std::fs::write(&s, format!(".text\n.globl f{i}\nf{i}:\n  ret\n.data\n.fill 24576,1,{}\n", i % 200)).unwrap();
        let o = tmp.join(&format!("f{i}.o"));
        must(Command::new("as").arg(&s).arg("-o").arg(&o));
        objs.push(o.display().to_string());
    }
    let main = compile(&tmp, "main", "void f0(void); void f249(void); int main(void) { f0(); f249(); return 5; }\n");
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

fn gcc_link(tmp: &TempDir, objs: &[&std::path::Path], out: &std::path::Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new("gcc");
    cmd.arg("-B").arg(linker_dir(tmp)).args(objs).args(extra).arg("-o").arg(out);
    cmd
}

/// Several links racing to the same output: every one succeeds or fails cleanly, and what is left
/// is one complete output from one of them, with no temp files.
#[test]
fn concurrent_links_to_the_same_output() {
    if !have("gcc") {
        return;
    }
    let tmp = TempDir::new("io-concurrent");
    let objs: Vec<_> = (0..4)
        .map(|i| {
            compile(
                &tmp,
                &format!("v{i}"),
                &format!("#include <stdio.h>\nint main(void) {{ puts(\"v{i}\"); return 0; }}\n"),
            )
        })
        .collect();
    let outdir = tmp.join("out");
    std::fs::create_dir_all(&outdir).unwrap();
    let exe = outdir.join("prog");
    for round in 0..5 {
        let children: Vec<_> = objs
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let mode = if i % 2 == 0 { "-Wl,--mmap-output-file" } else { "-Wl,--no-mmap-output-file" };
                gcc_link(&tmp, &[o], &exe, &[mode]).stderr(std::process::Stdio::piped()).spawn().unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: {}", String::from_utf8_lossy(&out.stderr));
        }
        assert_eq!(files_in(&outdir), vec!["prog"], "round {round}: temp files left");
        let run = must(&mut Command::new(&exe));
        let text = String::from_utf8_lossy(&run.stdout).into_owned();
        assert!((0..4).any(|i| text == format!("v{i}\n")), "round {round}: the output printed {text:?}");
    }
    tmp.finish();
}

/// `-o LINK` where LINK is a symbolic link: the link is replaced by the output and the file it
/// pointed to is left alone, as lld does and GNU ld does for a link to a non-empty file. (This test
/// used to expect the link kept and its target rewritten: writing through a link at the output
/// path lets whoever can plant one in a shared directory overwrite any file of the user's.) Every
/// kind of link, in both output modes, over a previous output and over a file that is not one.
/// `-o /dev/null` writes into the device instead of replacing it with a file.
#[test]
fn symlinked_and_device_outputs() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    if !have("gcc") {
        return;
    }
    let tmp = TempDir::new("io-symlink");
    let obj = compile(&tmp, "p", "int main(void) { return 9; }\n");
    // The output modes are rivet's options; another linker is run with its own default.
    let modes: &[&str] = if testing_rivet() { &["--mmap-output-file", "--no-mmap-output-file"] } else { &[""] };
    for (m, mode) in modes.iter().enumerate() {
        for target in ["previous output", "notes"] {
            // GNU ld creates the file a dangling link names; lld and rivet replace the link.
            let dangling: &[&str] = if testing_rivet() { &["dangling"] } else { &[] };
            for kind in ["relative", "absolute", "chain"].iter().chain(dangling) {
                let what = format!("{mode}, a {kind} link to {target}");
                let dir = tmp.join(&format!("{m}-{}-{kind}", target.len()));
                std::fs::create_dir_all(dir.join("bin")).unwrap();
                let real = dir.join("bin/real");
                if target == "notes" {
                    std::fs::write(&real, "my notes\n").unwrap();
                    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
                } else {
                    must(&mut gcc_link(&tmp, &[&obj], &real, &[]));
                }
                let (bytes, meta) = (std::fs::read(&real).unwrap(), std::fs::metadata(&real).unwrap());
                let out = dir.join("prog");
                match *kind {
                    "relative" => symlink("bin/real", &out).unwrap(),
                    "absolute" => symlink(&real, &out).unwrap(),
                    "chain" => {
                        symlink("bin/real", dir.join("middle")).unwrap();
                        symlink(dir.join("middle"), &out).unwrap();
                    }
                    _ => symlink("bin/fresh", &out).unwrap(),
                }
                let extra = if mode.is_empty() { vec![] } else { vec![format!("-Wl,{mode}")] };
                must(&mut gcc_link(&tmp, &[&obj], &out, &extra.iter().map(String::as_str).collect::<Vec<_>>()));
                assert!(
                    std::fs::symlink_metadata(&out).unwrap().file_type().is_file(),
                    "{what}: the link is still there"
                );
                assert_eq!(Command::new(&out).status().unwrap().code(), Some(9), "{what}");
                assert_eq!(std::fs::read(&real).unwrap(), bytes, "{what}: the link's target was written");
                let after = std::fs::metadata(&real).unwrap();
                assert_eq!(after.permissions().mode(), meta.permissions().mode(), "{what}: the target's mode changed");
                assert_eq!(inode(&real), inode_of(&meta), "{what}: the link's target was replaced");
                assert_eq!(files_in(&dir.join("bin")), vec!["real"], "{what}: a file was created beside the target");
            }
        }
    }
    use std::os::unix::fs::FileTypeExt;
    let null = std::path::Path::new("/dev/null");
    if std::fs::metadata(null).is_ok_and(|m| m.file_type().is_char_device()) {
        must(&mut gcc_link(&tmp, &[&obj], null, &[]));
        assert!(std::fs::metadata(null).unwrap().file_type().is_char_device(), "/dev/null is no longer a device");
    }
    tmp.finish();
}

/// The attack a link at the output path allows, with two users: in a sticky world-writable
/// directory (`/tmp`), another user plants `a.out -> ~/notes` (or a dangling link to a file of
/// ours); `cc hello.c -o DIR/a.out` must leave our file untouched, whatever
/// `fs.protected_symlinks` says (this machine may have it off). The link is the other user's, so
/// it cannot be replaced in a sticky directory: the link fails, saying so, and leaves nothing.
/// Needs root, to act as two users (plain uids with no account: nothing to create or remove).
#[test]
fn a_planted_link_in_a_sticky_directory_cannot_aim_the_output() {
    use std::os::unix::fs::{chown, lchown, symlink, PermissionsExt};
    use std::os::unix::process::CommandExt;
    if !have("gcc") || !testing_rivet() {
        return;
    }
    // SAFETY: geteuid has no failure mode.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: acting as two users needs root");
        return;
    }
    let (attacker, victim) = (64_101u32, 64_102u32);
    let tmp = TempDir::new("io-two-users");
    let mode = |p: &std::path::Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    mode(&tmp.path, 0o755);
    let obj = compile(&tmp, "hello", "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n");
    mode(&obj, 0o644);
    // The linker as the victim runs it: a copy anyone can run (the build tree may be private).
    let bin = tmp.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(linker(), bin.join("ld")).unwrap();
    mode(&bin, 0o755);
    mode(&bin.join("ld"), 0o755);
    let shared = tmp.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    mode(&shared, 0o1777);
    let home = tmp.join("home");
    std::fs::create_dir_all(&home).unwrap();
    chown(&home, Some(victim), Some(victim)).unwrap();
    mode(&home, 0o700);
    let notes = home.join("notes");
    std::fs::write(&notes, "my notes\n").unwrap();
    chown(&notes, Some(victim), Some(victim)).unwrap();
    mode(&notes, 0o600);
    let notes_inode = inode(&notes);
    for (name, points_to) in [("a.out", notes.clone()), ("b.out", home.join("created"))] {
        let planted = shared.join(name);
        symlink(&points_to, &planted).unwrap();
        lchown(&planted, Some(attacker), Some(attacker)).unwrap();
        for flag in ["--mmap-output-file", "--no-mmap-output-file"] {
            let out = Command::new("gcc")
                .arg("-B")
                .arg(&bin)
                .arg(&obj)
                .arg(format!("-Wl,{flag}"))
                .arg("-o")
                .arg(&planted)
                .uid(victim)
                .gid(victim)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let what = format!("{name} -> {}, {flag}", points_to.display());
            assert!(!out.status.success(), "{what}: the link succeeded over another user's link");
            assert!(
                stderr.contains(&planted.display().to_string()) && stderr.contains("not permitted"),
                "{what}: the error does not name the output and the reason:\n{stderr}"
            );
            assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n", "{what}: the victim's file was written");
            assert_eq!(std::fs::metadata(&notes).unwrap().permissions().mode() & 0o7777, 0o600, "{what}");
            assert_eq!(inode(&notes), notes_inode, "{what}");
            assert_eq!(files_in(&home), vec!["notes"], "{what}: a file was created where the link points");
            assert!(std::fs::symlink_metadata(&planted).unwrap().file_type().is_symlink(), "{what}");
        }
    }
    assert_eq!(files_in(&shared), vec!["a.out", "b.out"], "temp files left in the shared directory");
    tmp.finish();
}

/// A shared library that running processes have loaded is relinked: they keep running on the old
/// mapping, and a new process gets the new library.
#[test]
fn relinking_a_loaded_shared_library() {
    if !have("gcc") {
        return;
    }
    let tmp = TempDir::new("io-loaded-so");
    let lib_src = |v: u32| {
        format!("int version(void) {{ return {v}; }}\nint twice(int x) {{ return 2 * x + version() - {v}; }}\n")
    };
    let c = tmp.join("lib.c");
    let so = tmp.join("libv.so");
    let build_lib = |v: u32| {
        std::fs::write(&c, lib_src(v)).unwrap();
        must(Command::new("gcc").arg("-B").arg(linker_dir(&tmp)).args(["-shared", "-fPIC"]).arg(&c).arg("-o").arg(&so));
    };
    build_lib(1);
    let main = compile(
        &tmp,
        "main",
        "#include <stdio.h>\n#include <unistd.h>\nint version(void); int twice(int);\n\
         int main(void) { printf(\"%d\\n\", version()); fflush(stdout); usleep(700000);\n\
         printf(\"%d %d\\n\", version(), twice(21)); return 0; }\n",
    );
    let exe = tmp.join("prog");
    let rpath = format!("-Wl,-rpath,{}", tmp.path.display());
    must(&mut gcc_link(&tmp, &[&main], &exe, &[&format!("-L{}", tmp.path.display()), "-lv", &rpath]));
    let running = Command::new(&exe).stdout(std::process::Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    // Not rewritten in place by default: the running process has it mapped.
    std::fs::write(&c, lib_src(2)).unwrap();
    let relink = must(
        Command::new("gcc")
            .arg("-B")
            .arg(linker_dir(&tmp))
            .args(["-shared", "-fPIC", "-Wl,--print-timing"])
            .arg(&c)
            .arg("-o")
            .arg(&so),
    );
    if testing_rivet() {
        let report = String::from_utf8_lossy(&relink.stderr);
        assert!(report.contains("new file: a shared object may be mapped by running processes"), "{report}");
    }
    let out = running.wait_with_output().unwrap();
    assert!(out.status.success(), "the running process died: {:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n1 42\n");
    assert_eq!(String::from_utf8_lossy(&must(&mut Command::new(&exe)).stdout), "2\n2 42\n");
    tmp.finish();
}

/// An input rewritten while the link runs (a parallel build step) must not give an output built from
/// torn bytes: the link fails naming the input, and the old output stays (with `--no-reuse-output`;
/// `failed_link_over_a_reused_output_leaves_no_file` is the default's case). strace holds the link
/// inside `fallocate` (after every input was read) while the test rewrites an input.
#[test]
fn input_changed_during_the_link_is_refused() {
    if !have("gcc") || !have("strace") || !testing_rivet() {
        eprintln!("skipped: needs gcc and strace");
        return;
    }
    let tmp = TempDir::new("io-changed");
    let a = compile(&tmp, "a", "int f(void) { return 1; }\n");
    let main = compile(&tmp, "main", "int f(void); int main(void) { return f(); }\n");
    let outdir = tmp.join("out");
    std::fs::create_dir_all(&outdir).unwrap();
    std::fs::write(outdir.join("prog"), b"old output").unwrap();
    let probe = Command::new("strace").args(["-o", "/dev/null", "true"]).status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: strace cannot trace here");
        return;
    }
    let child = Command::new("strace")
        .args(["-f", "-o", "/dev/null", "-e", "trace=fallocate", "-e", "inject=fallocate:delay_enter=3000000"])
        .arg(linker())
        // A new file: a reused output would be gone by the time the change is found.
        .args(["-static", "-e", "main", "--no-reuse-output", "-o"])
        .arg(outdir.join("prog"))
        .arg(&main)
        .arg(&a)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The temp output appears right before fallocate: the inputs have been read by then.
    let start = std::time::Instant::now();
    while files_in(&outdir).len() < 2 {
        assert!(start.elapsed() < Duration::from_secs(20), "the link never created its temp output");
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut bytes = std::fs::read(&a).unwrap();
    bytes.extend_from_slice(&[0; 64]);
    std::fs::write(&a, bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("a.o") && stderr.contains("changed"), "{stderr}");
    assert_eq!(files_in(&outdir), vec!["prog"]);
    assert_eq!(std::fs::read(outdir.join("prog")).unwrap(), b"old output");
    tmp.finish();
}

/// Inside a memory cgroup limited to half of the link's usual peak, the link completes (rivet
/// picks a lower-memory strategy and the kernel reclaims mapped input pages) or fails with a clear
/// message; it is never killed without a word.
#[test]
fn link_in_a_memory_cgroup_of_half_its_peak() {
    use std::os::unix::process::ExitStatusExt;
    if !have("g++") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("io-cgroup");
    let Some(group) = MemoryCgroup::new() else { return };
    let src = tmp.join("big.cpp");
    std::fs::write(
        &src,
        "#include <iostream>\n#include <map>\n#include <string>\n#include <regex>\n\
         int main() { std::map<std::string, int> m; std::regex r(\"a+b\"); m[\"x\"] = std::regex_match(\"aab\", r);\n\
         std::cout << m[\"x\"] << std::endl; return 0; }\n",
    )
    .unwrap();
    let obj = tmp.join("big.o");
    must(Command::new("g++").args(["-c", "-g"]).arg(&src).arg("-o").arg(&obj));
    // The usual peak: rivet's own report of a plain link.
    let free_exe = tmp.join("free");
    let out = must(gcc_link(&tmp, &[&obj], &free_exe, &["-static", "-Wl,--print-timing"]).arg("-lstdc++"));
    let report = String::from_utf8_lossy(&out.stderr).into_owned();
    let peak_kb: u64 = report
        .split("peak RSS ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS in the report:\n{report}"));
    let limit = peak_kb * 1024 / 2;
    // The automatic strategy at half the peak; forced write-behind (which dirties page cache through
    // write(), which a cgroup v1 limit does not throttle by itself) at three quarters: at half, this
    // small link's own pages leave it no room for the written output in flight.
    for (mode, limit) in [("", limit), ("-Wl,--no-mmap-output-file", peak_kb * 1024 * 3 / 4)] {
        group.limit(limit);
        let exe = tmp.join("limited");
        let script = format!(
            "exec g++ -B {} {} -static -lstdc++ {mode} -o {}",
            linker_dir(&tmp).display(),
            obj.display(),
            exe.display()
        );
        let out = group.run(&script);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.signal(), None, "{mode}: killed by a signal under a {limit}-byte limit: {stderr}");
        if out.status.success() {
            assert_eq!(std::fs::read(&exe).unwrap(), std::fs::read(&free_exe).unwrap(), "{mode}: a different output");
            assert_eq!(String::from_utf8_lossy(&must(&mut Command::new(&exe)).stdout), "1\n");
        } else {
            assert!(stderr.contains("rivet: error:") && stderr.contains("memory"), "{mode}: unclear failure: {stderr}");
        }
        eprintln!(
            "{mode}: peak {peak_kb} KiB unconstrained; under {limit} bytes: {}",
            if out.status.success() { "linked" } else { "refused" }
        );
    }
    tmp.finish();
}

/// A memory cgroup of this test process's own (v2, or v1's memory controller), removed when
/// dropped. None, with a note, where one cannot be made (not root, no memory controller).
struct MemoryCgroup {
    dir: std::path::PathBuf,
    limit_file: &'static str,
}

impl MemoryCgroup {
    fn new() -> Option<MemoryCgroup> {
        let v2 = std::path::Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
        let (root, limit_file) = match v2 {
            true => ("/sys/fs/cgroup", "memory.max"),
            false => ("/sys/fs/cgroup/memory", "memory.limit_in_bytes"),
        };
        // Unique per test, not only per process: the tests of one binary run in parallel.
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::path::Path::new(root).join(format!("rivet-test-{}-{n}", std::process::id()));
        if std::fs::create_dir(&dir).is_err() {
            eprintln!("skipped: cannot create a memory cgroup here");
            return None;
        }
        Some(MemoryCgroup { dir, limit_file })
    }

    fn limit(&self, bytes: u64) {
        std::fs::write(self.dir.join(self.limit_file), bytes.to_string()).unwrap();
    }

    /// Runs the shell `script` inside the cgroup.
    fn run(&self, script: &str) -> std::process::Output {
        let script = format!("echo $$ > {}/cgroup.procs && {script}", self.dir.display());
        Command::new("sh").arg("-c").arg(&script).output().unwrap()
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // Empty once its processes have exited; a killed one may take a moment to leave.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// An output larger than the memory cgroup the link runs in, with heap output forced
/// (`--no-mmap-output-file`) or chosen: it is written behind, window by window, and the link
/// completes with the bytes of an unconstrained link (a 96 MiB `.data` section used to be
/// relocated whole for every 2 MiB window, and the link was killed in a 64 MiB cgroup). Where it
/// must be held whole, rivet says so before it allocates: an output written in place (standard
/// output) is a clear error, never a kill; `-r` holds its object once (it held it twice: killed in
/// a cgroup of 1.5 times the output).
#[test]
fn heap_output_larger_than_the_memory_cgroup() {
    use std::os::unix::process::ExitStatusExt;
    if !have("gcc") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("io-heap-cgroup");
    let Some(group) = MemoryCgroup::new() else { return };
    let obj = compile(&tmp, "blob", "char blob[96 << 20] = {1};\nint main(void) { return blob[0] - 1; }\n");
    let free = tmp.join("free");
    must(&mut gcc_link(&tmp, &[&obj], &free, &["-static", "-Wl,--mmap-output-file"]));
    let free_r = tmp.join("free.o");
    must(Command::new(linker()).args(["-r", "-o"]).arg(&free_r).arg(&obj));
    group.limit(64 << 20);
    for mode in ["-Wl,--no-mmap-output-file", ""] {
        let exe = tmp.join("limited");
        let _ = std::fs::remove_file(&exe);
        let out = group.run(&format!(
            "exec gcc -B {} {} -static {mode} -o {}",
            linker_dir(&tmp).display(),
            obj.display(),
            exe.display()
        ));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.signal(), None, "{mode}: killed in a 64 MiB cgroup: {stderr}");
        assert!(out.status.success(), "{mode}: {stderr}");
        assert!(std::fs::read(&exe).unwrap() == std::fs::read(&free).unwrap(), "{mode}: a different output");
        assert_eq!(Command::new(&exe).status().unwrap().code(), Some(0));
    }
    // Standard output: held whole, so refused up front.
    let out = group.run(&format!(
        "exec {} -static -e main --no-mmap-output-file {} -o - > {}",
        linker().display(),
        obj.display(),
        tmp.join("stdout").display()
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), None, "-o -: killed: {stderr}");
    assert_eq!(out.status.code(), Some(1), "-o -: {stderr}");
    assert!(stderr.starts_with("rivet: error:") && stderr.contains("held in memory whole"), "{stderr}");
    assert!(stderr.contains("under the memory cgroup's limit"), "{stderr}");
    // -r in a cgroup of 1.5 times its output.
    group.limit(144 << 20);
    let r = tmp.join("limited.o");
    let out = group.run(&format!(
        "exec {} -r --no-mmap-output-file -o {} {}",
        linker().display(),
        r.display(),
        obj.display()
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), None, "-r: killed in a 144 MiB cgroup: {stderr}");
    assert!(out.status.success(), "-r: {stderr}");
    assert!(std::fs::read(&r).unwrap() == std::fs::read(&free_r).unwrap(), "-r: a different output");
    drop(group);
    tmp.finish();
}

fn inode(p: &std::path::Path) -> u64 {
    inode_of(&std::fs::metadata(p).unwrap())
}

fn inode_of(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.ino()
}

/// `--print-timing`'s I/O report line labelled `label` ("output file", "output mapping").
fn report_line(out: &std::process::Output, label: &str) -> String {
    let report = String::from_utf8_lossy(&out.stderr);
    report
        .lines()
        .find(|l| l.contains(&format!("{label} ")))
        .unwrap_or_else(|| panic!("no {label} line:\n{report}"))
        .into()
}

/// A mapped output asks for huge pages, a heap output has no mapping to ask for; `--populate-output`
/// pre-faults a mapped output for writing when it is created (the report says so, and how long it
/// took), a new file or a reused one; not by default, nor a heap output (no mapping) even when
/// asked. The bytes are the same either way, into a new file and over a reused one full of old
/// bytes.
#[test]
fn populated_output_mapping_gives_the_same_bytes() {
    if !have("gcc") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("io-populate");
    let obj = compile(
        &tmp,
        "p",
        "_Alignas(4096) char blob[300000] = {1};\nconst char *msg = \"populated\";\n\
         int main(void) { return blob[0] + msg[0] - 'p' + 5; }\n",
    );
    let garbage = [&b"\x7fELF"[..], &vec![0xa5u8; 1 << 20]].concat();
    let out = tmp.join("out");
    let mut outputs = Vec::new();
    // (flags, the report line's start: huge pages, then populate)
    let mapped = "huge pages advised (auto: fewer first-touch faults when writing through the mapping); ";
    let cases = [
        ("-Wl,--populate-output", mapped, "populated for writing in "),
        ("-Wl,--mmap-output-file,--populate-output", mapped, "populated for writing in "),
        ("-Wl,--build-id", mapped, "not populated: auto: off"),
        ("-Wl,--no-populate-output", mapped, "not populated: --no-populate-output"),
        (
            "-Wl,--no-mmap-output-file,--populate-output",
            "small pages: heap output: no mapping; ",
            "not populated: --populate-output, but heap output",
        ),
    ];
    for (flag, huge, want) in cases {
        for reused in [false, true] {
            if reused {
                std::fs::write(&out, &garbage).unwrap();
            } else {
                let _ = std::fs::remove_file(&out);
            }
            let link = must(gcc_link(&tmp, &[&obj], &out, &[flag, "-Wl,--build-id"]).arg("-Wl,--print-timing"));
            let line = report_line(&link, "output mapping");
            assert!(
                line.trim_start().starts_with(&format!("output mapping   {huge}{want}")),
                "{flag}, reused {reused}: {line}"
            );
            let file = report_line(&link, "output file");
            assert_eq!(file.contains("previous output reused in place"), reused, "{flag}: {file}");
            assert_eq!(Command::new(&out).status().unwrap().code(), Some(6), "{flag}, reused {reused}");
            outputs.push((flag, reused, std::fs::read(&out).unwrap()));
        }
    }
    let (_, _, first) = &outputs[0];
    for (flag, reused, bytes) in &outputs {
        assert!(bytes == first, "{flag}, reused {reused}: not the bytes of the first link");
    }
    tmp.finish();
}

/// A plain previous output is rewritten in place (same inode; the report says so), and what is
/// left is byte for byte what a new file gets, mapped or written, growing or shrinking.
#[test]
fn plain_previous_output_is_reused_with_identical_bytes() {
    if !have("gcc") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("io-reuse");
    let small = compile(&tmp, "small", "int main(void) { return 3; }\n");
    let big = compile(&tmp, "big", "char blob[1 << 20] = {1};\nint main(void) { return blob[0] + 2; }\n");
    let fresh = tmp.join("fresh");
    let out = tmp.join("out");
    for mode in ["-Wl,--mmap-output-file", "-Wl,--no-mmap-output-file"] {
        for (obj, other) in [(&small, &big), (&big, &small)] {
            let _ = std::fs::remove_file(&fresh);
            must(&mut gcc_link(&tmp, &[obj], &fresh, &[mode, "-Wl,--build-id"]));
            // The previous output: the other program (larger, then smaller).
            must(&mut gcc_link(&tmp, &[other], &out, &[mode, "-Wl,--build-id"]));
            let before = inode(&out);
            let link = must(&mut gcc_link(&tmp, &[obj], &out, &[mode, "-Wl,--build-id", "-Wl,--print-timing"]));
            let line = report_line(&link, "output file");
            assert!(line.contains("previous output reused in place: a regular file with one link"), "{mode}: {line}");
            assert_eq!(inode(&out), before, "{mode}: a new inode");
            assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&fresh).unwrap(), "{mode}: reused != fresh");
            assert_eq!(Command::new(&out).status().unwrap().code(), Command::new(&fresh).status().unwrap().code());
        }
    }
    let link = must(&mut gcc_link(&tmp, &[&small], &out, &["-Wl,--no-reuse-output", "-Wl,--print-timing"]));
    let line = report_line(&link, "output file");
    assert!(line.contains("new file: --no-reuse-output"), "{line}");
    let mut names = files_in(&tmp.path);
    names.retain(|n| n == "out" || n == "fresh" || n.contains("rivet-tmp"));
    assert_eq!(names, vec!["fresh", "out"], "temp files left");
    tmp.finish();
}

/// A previous output full of garbage (the ELF magic, then 4 MiB of 0xff) is rewritten in place with
/// the bytes of a link into a new file: the padding no section covers (before a 4096-aligned
/// variable, between `-z separate-code`'s segments) and the alignment padding between merged
/// strings (each keeps its 8-byte alignment) are zeroed, never left as the old bytes; mapped or
/// written, on one thread or two. The program runs.
#[test]
fn garbage_in_a_reused_output_never_shows_through() {
    if !have("gcc") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("io-reuse-garbage");
    let obj = compile(
        &tmp,
        "aligned",
        concat!(
            "_Alignas(4096) int page[3] = {1, 2, 3};\n",
            "_Alignas(64) const char tag[] = \"tag\";\n",
            "__asm__(\".section .rodata.str1.8,\\\"aMS\\\",@progbits,1\\n.p2align 3\\n",
            "short_str: .string \\\"abc\\\"\\n.p2align 3\\nlong_str: .string \\\"defghij\\\"\\n.text\");\n",
            "extern const char short_str[], long_str[];\n",
            "int main(void) { return page[2] + tag[0] - 't' + short_str[0] - long_str[0] + 3; }\n",
        ),
    );
    let garbage = [&b"\x7fELF"[..], &vec![0xffu8; 4 << 20]].concat();
    let (fresh, out) = (tmp.join("fresh"), tmp.join("out"));
    for mode in ["-Wl,--mmap-output-file", "-Wl,--no-mmap-output-file"] {
        for threads in ["-Wl,--threads=1", "-Wl,--threads=2"] {
            let args = [mode, threads, "-Wl,-z,separate-code", "-Wl,--build-id"];
            let _ = std::fs::remove_file(&fresh);
            must(&mut gcc_link(&tmp, &[&obj], &fresh, &args));
            std::fs::write(&out, &garbage).unwrap();
            let link = must(gcc_link(&tmp, &[&obj], &out, &args).arg("-Wl,--print-timing"));
            let line = report_line(&link, "output file");
            assert!(line.contains("previous output reused in place"), "{mode} {threads}: {line}");
            let (got, want) = (std::fs::read(&out).unwrap(), std::fs::read(&fresh).unwrap());
            assert_eq!(got.len(), want.len(), "{mode} {threads}");
            // The offsets that differ (the build-id, a hash of every byte, differs with any other).
            let diff: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
            if let (Some(first), Some(last)) = (diff.first(), diff.last()) {
                panic!("{mode} {threads}: reused != fresh in {} bytes, {first:#x} to {last:#x}", diff.len());
            }
            assert_eq!(Command::new(&out).status().unwrap().code(), Some(3), "{mode} {threads}");
        }
    }
    tmp.finish();
}

/// A hard-linked output is not rewritten in place: the other name keeps the old contents.
#[test]
fn hard_linked_output_is_not_reused() {
    if !have("gcc") {
        return;
    }
    let tmp = TempDir::new("io-reuse-hardlink");
    let v1 = compile(&tmp, "v1", "int main(void) { return 1; }\n");
    let v2 = compile(&tmp, "v2", "int main(void) { return 2; }\n");
    let exe = tmp.join("prog");
    must(&mut gcc_link(&tmp, &[&v1], &exe, &[]));
    std::fs::hard_link(&exe, tmp.join("prog-copy")).unwrap();
    let link = must(&mut gcc_link(&tmp, &[&v2], &exe, &["-Wl,--print-timing"]));
    if testing_rivet() {
        assert!(report_line(&link, "output file").contains("new file: the previous output has 2 links"));
    }
    assert_eq!(Command::new(&exe).status().unwrap().code(), Some(2));
    assert_eq!(Command::new(tmp.join("prog-copy")).status().unwrap().code(), Some(1), "the other name changed");
    tmp.finish();
}

/// On tmpfs: reused in place like anywhere else, with the same bytes.
#[test]
fn output_on_tmpfs_is_reused() {
    if !have("gcc") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("io-reuse-tmpfs");
    let obj = compile(&tmp, "p", "int main(void) { return 4; }\n");
    let Some(disk) = mount_tmpfs(&tmp, "64m") else { return };
    let exe = disk.join("prog");
    let first = gcc_link(&tmp, &[&obj], &exe, &[]).output().unwrap();
    let before = std::fs::metadata(&exe).map(|_| inode(&exe));
    let second = gcc_link(&tmp, &[&obj], &exe, &["-Wl,--print-timing"]).output().unwrap();
    let after = inode(&exe);
    let bytes = std::fs::read(&exe).unwrap();
    let status = Command::new(&exe).status().unwrap().code();
    let listing = files_in(&disk);
    let _ = Command::new("umount").arg(&disk).status();
    assert!(first.status.success() && second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    let report = String::from_utf8_lossy(&second.stderr);
    assert!(report.contains("output fs        tmpfs"), "{report}");
    assert!(report.contains("previous output reused in place"), "{report}");
    assert_eq!(before.unwrap(), after);
    let fresh = tmp.join("fresh");
    must(&mut gcc_link(&tmp, &[&obj], &fresh, &[]));
    assert_eq!(bytes, std::fs::read(&fresh).unwrap());
    assert_eq!(status, Some(4));
    assert_eq!(listing, vec!["prog"]);
    tmp.finish();
}

/// A full disk while growing a reused output: the new size is reserved on the old file before it
/// is renamed (its size, bytes and time unchanged), so the link fails with a clear error, the old
/// output intact at its path and no temp file, in both modes.
#[test]
fn full_disk_while_growing_a_reused_output() {
    if !have("gcc") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("io-reuse-full");
    let small = compile(&tmp, "small", "int main(void) { return 0; }\n");
    let big = compile(&tmp, "big", "char blob[4 << 20] = {1};\nint main(void) { return blob[0] - 1; }\n");
    let Some(disk) = mount_tmpfs(&tmp, "2m") else { return };
    let exe = disk.join("prog");
    let mut results = Vec::new();
    let first = gcc_link(&tmp, &[&small], &exe, &["-static"]).output().unwrap();
    let old = std::fs::read(&exe).unwrap_or_default();
    let mtime = std::fs::metadata(&exe).and_then(|m| m.modified()).ok();
    for mode in ["-Wl,--mmap-output-file", "-Wl,--no-mmap-output-file"] {
        let out = gcc_link(&tmp, &[&big], &exe, &["-static", mode]).output().unwrap();
        results.push((
            mode,
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            files_in(&disk),
            std::fs::read(&exe).ok(),
            std::fs::metadata(&exe).and_then(|m| m.modified()).ok(),
        ));
    }
    let _ = Command::new("umount").arg(&disk).status();
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    assert!(old.len() < (2 << 20), "the small program must fit: {} bytes", old.len());
    for (mode, code, stderr, listing, content, modified) in results {
        assert_eq!(code, Some(1), "{mode}: {stderr}");
        assert!(stderr.contains("rivet: error:") && stderr.contains("no space left"), "{mode}: {stderr}");
        assert!(stderr.contains("prog"), "{mode}: the message names the output: {stderr}");
        assert_eq!(listing, vec!["prog"], "{mode}: a temp file was left");
        assert_eq!(content.as_deref(), Some(&old[..]), "{mode}: the old output changed");
        assert_eq!(modified, mtime, "{mode}: the old output's time changed (make would think it new)");
    }
    tmp.finish();
}

/// A link that fails after the previous output was taken over (here a relocation that overflows,
/// found while writing) leaves no file at the path: the old bytes were being overwritten, and a
/// half-written file must never look like an output. No temp file either.
#[test]
fn failed_link_over_a_reused_output_leaves_no_file() {
    if !have("gcc") || !have("as") || !testing_rivet() {
        return;
    }
    let tmp = TempDir::new("io-reuse-fail");
    let good = compile(&tmp, "good", "int main(void) { return 0; }\n");
    let s = tmp.join("bad.s");
    std::fs::write(&s, ".text\n.globl main\nmain:\n  movl $far, %eax\n  ret\n").unwrap();
    let bad = tmp.join("bad.o");
    must(Command::new("as").arg(&s).arg("-o").arg(&bad));
    let outdir = tmp.join("out");
    std::fs::create_dir_all(&outdir).unwrap();
    let exe = outdir.join("prog");
    must(&mut gcc_link(&tmp, &[&good], &exe, &["-no-pie"]));
    let out = gcc_link(&tmp, &[&bad], &exe, &["-no-pie", "-Wl,--defsym,far=0x123456789"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("rivet: error:"), "{stderr}");
    assert_eq!(files_in(&outdir), Vec::<String>::new(), "{stderr}");
    // With --no-reuse-output the old output stays.
    must(&mut gcc_link(&tmp, &[&good], &exe, &["-no-pie"]));
    let old = std::fs::read(&exe).unwrap();
    let out = gcc_link(&tmp, &[&bad], &exe, &["-no-pie", "-Wl,--defsym,far=0x123456789", "-Wl,--no-reuse-output"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(files_in(&outdir), vec!["prog"]);
    assert_eq!(std::fs::read(&exe).unwrap(), old);
    tmp.finish();
}

/// A section larger than a write-behind window, full of relocations (absolute ones that a PIE
/// turns into RELATIVE dynamic relocations, and PC-relative ones): written behind, each window
/// relocates only its share of the section, and the output is byte for byte the mapped one; the
/// program finds every pointer right.
#[test]
fn section_with_relocations_across_write_behind_windows() {
    if !have("gcc") {
        return;
    }
    let tmp = TempDir::new("io-windows");
    // 9.6 MB of 16-byte records (the unpaced window is 8 MiB): a pointer and a 32-bit offset to
    // `target`, cut by a window boundary.
    let s = tmp.join("table.s");
    std::fs::write(
        &s,
        ".data\n.globl table, target\n.p2align 4\ntarget: .quad 0\n.p2align 4\ntable:\n\
         .rept 600000\n.quad target+8\n.long target-.\n.long 7\n.endr\n",
    )
    .unwrap();
    let table = tmp.join("table.o");
    must(Command::new("gcc").arg("-c").arg(&s).arg("-o").arg(&table));
    let main = compile(
        &tmp,
        "main",
        "extern char target[];\nextern struct { char *p; int off; int seven; } table[];\n\
         int main(void) {\n  for (long i = 0; i < 600000; i++)\n\
             if (table[i].p != target + 8 || (char *)&table[i].off + table[i].off != target || table[i].seven != 7)\n\
               return 1;\n  return 0;\n}\n",
    );
    mapped_and_written_behind(&tmp, &[&main, &table], &["-pie"], |exe, mode| {
        assert_eq!(Command::new(exe).status().unwrap().code(), Some(0), "{mode}: wrong pointers");
    });
    tmp.finish();
}

/// Links `objs` (with `extra`) with the output mapped and written behind; `check` looks at each
/// output, and the two must be the same bytes.
fn mapped_and_written_behind(
    tmp: &TempDir,
    objs: &[&std::path::Path],
    extra: &[&str],
    check: impl Fn(&std::path::Path, &str),
) {
    let mut outputs = Vec::new();
    for mode in ["-Wl,--mmap-output-file", "-Wl,--no-mmap-output-file"] {
        let exe = tmp.join(&format!("prog{}", outputs.len()));
        must(gcc_link(tmp, objs, &exe, extra).arg(mode));
        check(&exe, mode);
        outputs.push(std::fs::read(&exe).unwrap());
    }
    assert!(outputs[0] == outputs[1], "written behind != mapped");
}

/// A merged string section larger than a write-behind window: each window writes only the
/// strings that fall in it (the section used to be built whole for every window it crosses), the
/// output is byte for byte the mapped one, and the program finds its strings.
#[test]
fn merged_strings_across_write_behind_windows() {
    if !have("gcc") {
        return;
    }
    let tmp = TempDir::new("io-merged-windows");
    // 10.8 MB of 12-byte strings in one input section (the unpaced window is 8 MiB), with a
    // second file repeating some of them (merged away), and pointers to a few.
    const N: usize = 900_000;
    let strings = |from: usize, to: usize, label: &str| {
        let mut asm = String::from(".section .rodata.str1.1,\"aMS\",@progbits,1\n");
        for i in from..to {
            asm.push_str(&format!("{label}{i}: .string \"str-{i:07}\"\n"));
        }
        asm
    };
    let mut big = strings(0, N, ".Ls");
    big.push_str(".data\n.globl firsts\nfirsts: .quad .Ls0, .Ls123456, .Ls699999, .Ls899999\n");
    std::fs::write(tmp.join("big.s"), big).unwrap();
    let mut dup = strings(699_990, 700_010, ".Ld");
    dup.push_str(".data\n.globl seconds\nseconds: .quad .Ld699999, .Ld700009\n");
    std::fs::write(tmp.join("dup.s"), dup).unwrap();
    for f in ["big", "dup"] {
        must(Command::new("gcc").current_dir(&tmp.path).args(["-c", &format!("{f}.s")]));
    }
    let main = compile(
        &tmp,
        "main",
        "#include <string.h>\nextern const char *firsts[], *seconds[];\n\
         int main(void) {\n  return strcmp(firsts[0], \"str-0000000\") || strcmp(firsts[1], \"str-0123456\")\n\
             || strcmp(firsts[2], \"str-0699999\") || strcmp(firsts[3], \"str-0899999\")\n\
             || seconds[0] != firsts[2] || strcmp(seconds[1], \"str-0700009\");\n}\n",
    );
    let (big, dup) = (tmp.join("big.o"), tmp.join("dup.o"));
    mapped_and_written_behind(&tmp, &[&main, &big, &dup], &["-pie"], |exe, mode| {
        assert_eq!(Command::new(exe).status().unwrap().code(), Some(0), "{mode}: wrong strings");
    });
    tmp.finish();
}

/// A non-allocated section with relocations (as debug info is) larger than a write-behind window:
/// each window applies only the relocations that touch it, and every entry holds what it must:
/// the function's address and the string's offset in its merged section, as in GNU ld's output
/// of the same objects; the bytes are those of the mapped output.
#[test]
fn debug_like_relocations_across_write_behind_windows() {
    use object::{Object, ObjectSection, ObjectSymbol};
    if !have("gcc") {
        return;
    }
    let tmp = TempDir::new("io-nonalloc-windows");
    // 8.4 MB of 12-byte entries (the unpaced window is 8 MiB): a 64-bit address of `func` and a
    // 32-bit offset of a merged string.
    std::fs::write(
        tmp.join("table.s"),
        ".text\nfunc: ret\n.section .rivet.str,\"MS\",@progbits,1\n.Lfirst: .string \"first\"\n.Lname: .string \"name\"\n\
         .section .rivet.table,\"\",@progbits\n.rept 700000\n.quad func\n.long .Lname\n.endr\n",
    )
    .unwrap();
    let table = tmp.join("table.o");
    must(Command::new("gcc").arg("-c").arg(tmp.join("table.s")).arg("-o").arg(&table));
    let main = compile(&tmp, "main", "int main(void) { return 0; }\n");
    // (func's address, the string's offset): every entry must hold them.
    let check = |exe: &std::path::Path, what: &str| {
        let bytes = std::fs::read(exe).unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let func = file.symbols().find(|s| s.name() == Ok("func")).expect("func in .symtab").address();
        let strings = file.section_by_name(".rivet.str").unwrap().data().unwrap();
        let name = strings.windows(5).position(|w| w == b"name\0").expect("the string") as u32;
        let entries = file.section_by_name(".rivet.table").unwrap().data().unwrap();
        assert_eq!(entries.len(), 700_000 * 12, "{what}");
        for (i, e) in entries.chunks_exact(12).enumerate() {
            let (addr, off) =
                (u64::from_le_bytes(e[..8].try_into().unwrap()), u32::from_le_bytes(e[8..].try_into().unwrap()));
            assert_eq!((addr, off), (func, name), "{what}: entry {i}");
        }
    };
    let gnu = tmp.join("gnu");
    must(Command::new("gcc").arg(&main).arg(&table).arg("-o").arg(&gnu));
    check(&gnu, "GNU ld");
    mapped_and_written_behind(&tmp, &[&main, &table], &[], check);
    tmp.finish();
}

/// The children of process `pid` (Linux's `/proc/PID/task/PID/children`).
fn children(pid: u32) -> Vec<u32> {
    let list = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    list.split_whitespace().filter_map(|p| p.parse().ok()).collect()
}

/// `--fork` (the default, as mold's and wild's): the link runs in a child and the command returns
/// the link's own fate. The same output and exit status as `--no-fork`, the same errors; and when
/// the linking process is killed, the command dies of the same signal (a build system sees what
/// it would see without the fork). The link is held in `open()` on a FIFO to be killed.
#[test]
fn fork_returns_the_links_fate() {
    use std::os::unix::process::ExitStatusExt;
    if !testing_rivet() || !have("gcc") || !have("mkfifo") {
        return;
    }
    let tmp = TempDir::new("fork");
    let obj = compile(&tmp, "a", "int main(void) { return 0; }\n");
    let bad = compile(&tmp, "b", "int f(void); int main(void) { return f(); }\n");
    let run = |args: &[&str]| Command::new(linker()).current_dir(&tmp.path).args(args).output().unwrap();
    let o = obj.to_str().unwrap();
    let (forked, plain) =
        (run(&["-static", o, "-o", "fork.out"]), run(&["--no-fork", "-static", o, "-o", "plain.out"]));
    assert!(forked.status.success() && plain.status.success());
    assert!(std::fs::read(tmp.join("fork.out")).unwrap() == std::fs::read(tmp.join("plain.out")).unwrap());
    let b = bad.to_str().unwrap();
    let (forked, plain) = (run(&["-static", b, "-o", "x"]), run(&["--no-fork", "-static", b, "-o", "x"]));
    assert_eq!((forked.status.code(), plain.status.code()), (Some(1), Some(1)));
    assert_eq!(forked.stderr, plain.stderr);
    assert!(String::from_utf8_lossy(&forked.stderr).contains("undefined symbol: f"));
    must(Command::new("mkfifo").arg(tmp.join("fifo.o")));
    for fork in [true, false] {
        let mut cmd = Command::new(linker());
        cmd.current_dir(&tmp.path).args(["fifo.o", "-o", "fifo.out"]);
        if !fork {
            cmd.arg("--no-fork");
        }
        let mut child = cmd.spawn().unwrap();
        let pid = child.id();
        let mut linking = Vec::new();
        for _ in 0..if fork { 50 } else { 5 } {
            std::thread::sleep(Duration::from_millis(100));
            linking = children(pid);
            if !linking.is_empty() {
                break;
            }
        }
        if fork {
            assert_eq!(linking.len(), 1, "--fork: one linking child");
            // SAFETY: a plain system call on the child we found.
            unsafe { libc::kill(linking[0] as i32, libc::SIGKILL) };
            let status = child.wait().unwrap();
            assert_eq!(status.signal(), Some(libc::SIGKILL), "the command must die of the child's signal: {status:?}");
        } else {
            assert!(linking.is_empty(), "--no-fork: no child process");
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
    tmp.finish();
}
