//! I/O counters of this process: page faults and CPU time (getrusage), bytes really read from and
//! written to storage (/proc/self/io). Take a snapshot before and after a phase; the delta says what
//! the phase cost.
use std::time::Duration;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoSnapshot {
    pub minor_faults: u64,
    pub major_faults: u64,
    /// Bytes this process caused to be fetched from storage (page-cache misses).
    pub read_bytes: u64,
    /// Bytes this process caused to be sent to storage.
    pub write_bytes: u64,
    /// Bytes passed to read()/write() and friends, cached or not.
    pub rchar: u64,
    pub wchar: u64,
    pub user_time: Duration,
    pub sys_time: Duration,
    pub max_rss_kb: u64,
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000)
}

pub fn snapshot() -> IoSnapshot {
    // SAFETY: getrusage fills the zeroed struct; RUSAGE_SELF is always valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    let field = |name: &str| -> u64 {
        io.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
    };
    IoSnapshot {
        minor_faults: ru.ru_minflt as u64,
        major_faults: ru.ru_majflt as u64,
        read_bytes: field("read_bytes:"),
        write_bytes: field("write_bytes:"),
        rchar: field("rchar:"),
        wchar: field("wchar:"),
        user_time: timeval(ru.ru_utime),
        sys_time: timeval(ru.ru_stime),
        max_rss_kb: ru.ru_maxrss as u64,
    }
}

impl IoSnapshot {
    /// What happened between `earlier` and `self` (peak RSS is kept as the later value).
    pub fn delta(&self, earlier: &IoSnapshot) -> IoSnapshot {
        IoSnapshot {
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            rchar: self.rchar.saturating_sub(earlier.rchar),
            wchar: self.wchar.saturating_sub(earlier.wchar),
            user_time: self.user_time.saturating_sub(earlier.user_time),
            sys_time: self.sys_time.saturating_sub(earlier.sys_time),
            max_rss_kb: self.max_rss_kb,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_faults_and_writes() {
        let before = snapshot();
        let mut v = vec![0u8; 8 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        let path = std::env::temp_dir().join(format!("rivet-stats-{}", std::process::id()));
        std::fs::write(&path, &v).unwrap();
        let d = snapshot().delta(&before);
        std::fs::remove_file(&path).unwrap();
        assert!(d.minor_faults >= 1000, "{d:?}");
        if std::path::Path::new("/proc/self/io").exists() {
            assert!(d.wchar >= 8 << 20, "{d:?}");
        }
        assert!(d.max_rss_kb > 0);
    }
}
