//! Shared by the link-level fuzz targets: write the fuzzed bytes to a scratch file and run a whole
//! link over them in-process. Any result is fine (most inputs are rejected); a panic, an abort or a
//! hang is the finding.
use std::ffi::OsString;
use std::path::PathBuf;

/// A per-process scratch directory on tmpfs when there is one (the link writes its output there).
pub fn scratch() -> PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    let dir = base.join(format!("rivet-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// A fuzzed file can ask for an output of many gigabytes (huge alignments, sizes): files are
/// limited to 256 MiB, so writing more fails with EFBIG (SIGXFSZ ignored) and rivet must report
/// it as an error, like a full disk.
fn limit_file_size() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let lim = libc::rlimit { rlim_cur: 256 << 20, rlim_max: 256 << 20 };
        // SAFETY: plain system calls on this process's own limits and signal disposition.
        unsafe {
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        }
    });
}

/// Links with `args` (paths already written); errors are expected and ignored.
pub fn link(args: &[OsString]) {
    limit_file_size();
    let Ok(mut config) = rivet::args::parse(args.to_vec()) else { return };
    config.free_memory = true;
    let timer = rivet::timing::Timer::new();
    let diag = rivet::diag::Diag::quiet();
    let _ = rivet::link::link(&config, &timer, &diag);
}

pub fn os(items: &[&str]) -> Vec<OsString> {
    items.iter().map(OsString::from).collect()
}
