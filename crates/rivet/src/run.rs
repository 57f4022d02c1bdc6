//! `rivet -run COMMAND ARGS...` (mold's `-run`): runs a command, typically a build, with rivet as
//! the linker whatever name the build asks for. A fresh directory holds symbolic links to rivet
//! under every linker name (`ld`, `ld.bfd`, `ld.gold`, `ld.lld`, `ld.mold` and the
//! target-prefixed ones) and goes first in `PATH` and in `COMPILER_PATH`:
//!
//! - gcc's collect2 looks for `ld` (or `ld.<name>` under `-fuse-ld=<name>`) in `COMPILER_PATH`, the
//!   `-B` directories and gcc's own directories, then in `PATH`; gcc 12's own directories hold no
//!   linker, so both routes find the links;
//! - clang takes `COMPILER_PATH` as it takes `-B`, ahead of its own directory (where `ld.lld`
//!   is): `clang -fuse-ld=lld` finds the link too;
//! - a build that runs `ld` itself finds it first in `PATH`.
//!
//! A linker named by an absolute path (`/usr/bin/ld`) is not replaced: that would need an
//! `LD_PRELOAD` shim intercepting `exec`, which none of these routes needs. The directory is
//! removed when the command ends; rivet exits with the command's status.
use crate::diag::{Context, Result};
use std::path::{Path, PathBuf};

/// The names the links get: every linker name gcc, clang and build systems run.
pub const LINKER_NAMES: &[&str] = &[
    "ld",
    "ld.bfd",
    "ld.gold",
    "ld.lld",
    "ld.mold",
    "ld.rivet",
    "x86_64-linux-gnu-ld",
    "x86_64-linux-gnu-ld.bfd",
    "x86_64-linux-gnu-ld.gold",
];

/// True when `args` (argv without argv[0]) asks for `-run` (or `--run`).
pub fn is_run(args: &[std::ffi::OsString]) -> bool {
    args.first().is_some_and(|a| a == "-run" || a == "--run")
}

/// A directory of links to `rivet` under `LINKER_NAMES`, removed when dropped.
pub struct LinkerDir {
    pub path: PathBuf,
}

impl LinkerDir {
    /// Makes the directory under `parent` (a name of its own: this process's id and a counter).
    pub fn create(parent: &Path, rivet: &Path) -> Result<LinkerDir> {
        let mut n = 0u32;
        let path = loop {
            let p = parent.join(format!("rivet-run-{}-{n}", std::process::id()));
            match std::fs::create_dir(&p) {
                Ok(()) => break p,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => return Err(e).with_context(|| format!("-run: cannot create {}", p.display())),
            }
        };
        let dir = LinkerDir { path };
        for name in LINKER_NAMES {
            let link = dir.path.join(name);
            std::os::unix::fs::symlink(rivet, &link)
                .with_context(|| format!("-run: cannot create {}", link.display()))?;
        }
        Ok(dir)
    }

    /// `var`'s value with this directory first (`PATH`, `COMPILER_PATH`).
    fn prepended(&self, var: &str) -> std::ffi::OsString {
        let mut dirs = vec![self.path.clone()];
        if let Some(old) = std::env::var_os(var) {
            dirs.extend(std::env::split_paths(&old));
        }
        std::env::join_paths(dirs).unwrap_or_else(|_| self.path.clone().into_os_string())
    }
}

impl Drop for LinkerDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Runs `args[1..]` (after `-run`) with rivet as every linker it may start; gives the exit code
/// to leave with (the command's, or 128 + the signal that ended it, as a shell reports it).
pub fn run(args: &[std::ffi::OsString]) -> Result<i32> {
    use std::os::unix::process::ExitStatusExt;
    let Some((program, rest)) = args.get(1..).and_then(|a| a.split_first()) else {
        crate::bail!("-run: expected a command to run");
    };
    let rivet = std::env::current_exe().context("-run: cannot find rivet's own path")?;
    let dir = LinkerDir::create(&std::env::temp_dir(), &rivet)?;
    let status = std::process::Command::new(program)
        .args(rest)
        .env("PATH", dir.prepended("PATH"))
        .env("COMPILER_PATH", dir.prepended("COMPILER_PATH"))
        .status()
        .with_context(|| format!("-run: cannot run {}", program.to_string_lossy()))?;
    Ok(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}
