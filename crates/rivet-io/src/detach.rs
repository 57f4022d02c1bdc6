//! Finishing work after the process has "exited": mold's `--detach`. Before any thread exists, the
//! process forks; the original process only waits. The child does the link and, once the output
//! the build waits for is in place, tells the waiting process the exit status to leave with, then
//! goes on with what is left (the separate debug file, or only its exit with `--fork`) on its own. A
//! child that dies before saying anything leaves its own exit status (or the signal that killed it)
//! to the waiting process, so an error or a crash in the link is never hidden.
//!
//! Also here: `DebugFileLock`, an exclusive `flock` on a path held while a file is being replaced,
//! so that `flock PATH true` waits until the new file is in place (mold holds the same lock).
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

/// The child's end of the pipe the waiting process reads its exit status from.
pub struct Detached {
    pipe: OwnedFd,
}

impl Detached {
    /// Lets the waiting process exit with `status` now; this process carries on alone.
    pub fn release(self, status: u8) {
        let b = [status];
        // SAFETY: writing one byte from a live buffer to a descriptor we own.
        unsafe { libc::write(self.pipe.as_raw_fd(), b.as_ptr() as *const libc::c_void, 1) };
        drop(self.pipe);
    }
}

/// Forks. In the original process this never returns: it waits for the child's status (a byte on
/// the pipe, or the child's own exit) and exits with it. In the child it returns the handle that
/// releases the waiting process. Must be called before the process starts any thread (a forked
/// child has only the thread that forked). Errors: the fork itself failed (the caller then links
/// without detaching).
pub fn fork_and_wait() -> io::Result<Detached> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills the two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here alone.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: the caller guarantees no other thread exists, so the child's copy of the process is
    // complete (no lock held by a thread that does not exist in it).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        drop(read);
        return Ok(Detached { pipe: write });
    }
    drop(write);
    let mut b = [0u8; 1];
    let n = loop {
        // SAFETY: reading at most one byte into a live buffer from a descriptor we own.
        let n = unsafe { libc::read(read.as_raw_fd(), b.as_mut_ptr() as *mut libc::c_void, 1) };
        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        break n;
    };
    if n == 1 {
        // SAFETY: _exit ends this process at once; it has no thread and nothing buffered to flush
        // (it printed nothing since the fork).
        unsafe { libc::_exit(b[0] as i32) };
    }
    // The child ended without releasing us: its status is ours.
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child, status into a live integer.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        if r < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            // SAFETY: as above.
            unsafe { libc::_exit(1) };
        }
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        // Killed (by the OOM killer, a crash, the user): die of the same signal, so that whoever
        // runs the linker sees what it would see without the fork. The shell's 128 + signal if
        // the signal does not end this process (it is blocked or ignored here).
        let sig = libc::WTERMSIG(status);
        // SAFETY: restoring a signal's default action and sending it to this process, which has
        // no other thread.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(sig);
        }
        128 + sig
    } else {
        1
    };
    // SAFETY: as above.
    unsafe { libc::_exit(code) }
}

/// An exclusive `flock` on the file at a path (created empty if there is none), held until
/// dropped. A symbolic link at the path is not followed: it is replaced by a new empty file, as the
/// debug file will replace it (like a link at the output path), so the file it points to is never
/// opened nor created, and the lock is still there to wait on.
pub struct DebugFileLock {
    _file: File,
    created: bool,
}

impl DebugFileLock {
    /// Opens (or creates) `path` without truncating it and takes an exclusive lock on it, waiting
    /// for another holder.
    pub fn take(path: &Path) -> io::Result<DebugFileLock> {
        use std::os::unix::fs::OpenOptionsExt;
        let open = |p: &Path, new: bool| {
            OpenOptions::new().read(true).write(true).create_new(new).custom_flags(libc::O_NOFOLLOW).mode(0o666).open(p)
        };
        let (file, created) = match open(path, true) {
            Ok(f) => (f, true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match open(path, false) {
                Ok(f) => (f, false),
                Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                    // A link: an empty file of ours takes its place (in a sticky directory, another
                    // user's link cannot be replaced and this fails).
                    let temp = crate::output::temp_path(path);
                    let f = open(&temp, true)?;
                    if let Err(e) = std::fs::rename(&temp, path) {
                        let _ = std::fs::remove_file(&temp);
                        return Err(e);
                    }
                    (f, true)
                }
                Err(e) => return Err(e),
            },
            Err(e) => return Err(e),
        };
        loop {
            // SAFETY: flock on a descriptor we own.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                break;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        Ok(DebugFileLock { _file: file, created })
    }

    /// Whether there was no file at the path and taking the lock created an empty one.
    pub fn created(&self) -> bool {
        self.created
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_for_the_first() {
        let dir = std::env::temp_dir().join(format!("rivet-io-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.dbg");
        let first = DebugFileLock::take(&path).unwrap();
        let other = File::open(&path).unwrap();
        // SAFETY: flock on a descriptor we own.
        let busy = unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_eq!(busy, -1, "the lock is held");
        drop(first);
        // SAFETY: as above.
        let free = unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_eq!(free, 0, "the lock is released on drop");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A symbolic link at the debug file's path, dangling or not, is neither followed nor created
    /// through: the file it points to is not opened, nor made.
    #[test]
    fn a_link_at_the_path_is_not_followed() {
        let dir = std::env::temp_dir().join(format!("rivet-io-lock-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink("missing", dir.join("dangling.dbg")).unwrap();
        let lock = DebugFileLock::take(&dir.join("dangling.dbg")).unwrap();
        assert!(lock.created());
        assert!(!dir.join("missing").exists(), "the dangling link's target was created");
        std::fs::write(dir.join("notes"), "mine").unwrap();
        std::os::unix::fs::symlink("notes", dir.join("x.dbg")).unwrap();
        let lock2 = DebugFileLock::take(&dir.join("x.dbg")).unwrap();
        assert!(lock2.created());
        for name in ["dangling.dbg", "x.dbg"] {
            let meta = std::fs::symlink_metadata(dir.join(name)).unwrap();
            assert!(meta.file_type().is_file() && meta.len() == 0, "{name}: the link was not replaced");
            // The lock is on the file now at the path.
            let other = File::open(dir.join(name)).unwrap();
            // SAFETY: flock on a descriptor we own.
            let busy = unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            assert_eq!(busy, -1, "{name}: the lock is not held on the file at the path");
        }
        assert_eq!(std::fs::read_to_string(dir.join("notes")).unwrap(), "mine");
        let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, ["dangling.dbg", "notes", "x.dbg"], "temp files left");
        drop((lock, lock2));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
