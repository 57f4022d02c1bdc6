//! Facts about the file system the output goes to (statfs and the mount table) and the memory
//! available (meminfo and the process's cgroup). Takes a directory, gives plain data the I/O policy
//! decides on.
use std::io;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default)]
pub struct FsInfo {
    /// The mount table's type name: "ext4", "btrfs", "tmpfs", "nfs", "fuse.sshfs", ...
    pub fs_type: String,
    pub magic: i64,
    pub block_size: u64,
    pub mount_point: PathBuf,
    /// Per-mount and super options joined with ','.
    pub mount_options: String,
    /// Files created in the directory are stored compressed (`compression` says why).
    pub compressed: bool,
    /// Why they are: "mount option compress-force=zstd", "chattr +c on the directory: FS_COMPR_FL", ...
    pub compression: Option<String>,
    /// NFS, CIFS/SMB, 9p, Ceph, sshfs and other file systems that live across a wire.
    pub network: bool,
    pub fuse: bool,
    pub tmpfs: bool,
    pub overlay: bool,
    pub free_bytes: u64,
}

const NETWORK_TYPES: &[&str] =
    &["nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs", "afs", "fuse.sshfs", "virtiofs", "vboxsf"];

/// Describes the file system holding `dir`.
pub fn for_path(dir: &Path) -> io::Result<FsInfo> {
    let canonical = dir.canonicalize()?;
    let mut info = statfs(&canonical)?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    if let Some((mount_point, fs_type, options)) = find_mount(&mountinfo, &canonical) {
        info.fs_type = fs_type;
        info.mount_point = mount_point;
        info.mount_options = options;
    }
    let t = info.fs_type.as_str();
    info.tmpfs = t == "tmpfs" || t == "ramfs";
    info.overlay = t == "overlay";
    info.fuse = t.starts_with("fuse");
    info.network = NETWORK_TYPES.contains(&t);
    info.compression = mount_compression(t, &info.mount_options).or_else(|| dir_compression(&canonical));
    info.compressed = info.compression.is_some();
    Ok(info)
}

/// FS_COMPR_FL (`chattr +c`): on a directory of btrfs or f2fs, new files in it are compressed.
const FS_COMPR_FL: libc::c_long = 0x4;

/// Compression that the mount table shows for a file system of type `fs_type` mounted with
/// `options`: btrfs `compress[=ALG]` / `compress-force[=ALG]` (not `=no`), bcachefs
/// `compression=` / `background_compression=` (not `none`). zfs keeps compression in a dataset
/// property that is not visible here (lz4 by default on current OpenZFS): assumed.
pub fn mount_compression(fs_type: &str, options: &str) -> Option<String> {
    let on = |v: &str| !matches!(v, "no" | "none" | "off");
    for o in options.split(',') {
        let (key, value) = o.split_once('=').unwrap_or((o, ""));
        let wanted = match fs_type {
            "btrfs" => matches!(key, "compress" | "compress-force") && (value.is_empty() || on(value)),
            "bcachefs" => matches!(key, "compression" | "background_compression") && on(value),
            _ => false,
        };
        if wanted {
            return Some(format!("mount option {o}"));
        }
    }
    (fs_type == "zfs").then(|| "zfs (its compression property is not visible here: assumed on)".to_string())
}

/// Compression asked for on the directory itself: FS_COMPR_FL (`chattr +c`, btrfs's
/// `compression` property, f2fs), or bcachefs's `bcachefs.compression` attribute; new files
/// inherit it.
fn dir_compression(dir: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::AsRawFd;
    let d = std::fs::File::open(dir).ok()?;
    let mut flags: libc::c_long = 0;
    // SAFETY: FS_IOC_GETFLAGS writes one long into `flags`; the descriptor is ours.
    if unsafe { libc::ioctl(d.as_raw_fd(), libc::FS_IOC_GETFLAGS, &mut flags) } == 0 && flags & FS_COMPR_FL != 0 {
        return Some("chattr +c on the directory: FS_COMPR_FL".into());
    }
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: a size query (null buffer, length 0) for a NUL-terminated path and attribute name.
    let n = unsafe { libc::getxattr(c.as_ptr(), c"bcachefs.compression".as_ptr(), std::ptr::null_mut(), 0) };
    (n > 0).then(|| "directory attribute bcachefs.compression".into())
}

fn statfs(path: &Path) -> io::Result<FsInfo> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: statfs fills the zeroed struct we pass for the NUL-terminated path `c`.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(FsInfo {
        magic: st.f_type as i64,
        block_size: st.f_bsize as u64,
        free_bytes: st.f_bavail as u64 * st.f_bsize as u64,
        ..Default::default()
    })
}

/// mountinfo escapes space, tab, newline and backslash as octal (`\040`).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount whose mount point is the longest prefix of `path`: (mount point, type, options).
fn find_mount(mountinfo: &str, path: &Path) -> Option<(PathBuf, String, String)> {
    let mut best: Option<(PathBuf, String, String)> = None;
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let sep = fields.iter().position(|f| *f == "-")?;
        if fields.len() < sep + 3 || fields.len() < 6 {
            continue;
        }
        let mount_point = PathBuf::from(unescape(fields[4]));
        if !path.starts_with(&mount_point) {
            continue;
        }
        let longer = best.as_ref().is_none_or(|(b, _, _)| mount_point.as_os_str().len() >= b.as_os_str().len());
        if longer {
            let options = format!("{},{}", fields[5], fields.get(sep + 3).unwrap_or(&""));
            best = Some((mount_point, fields[sep + 1].to_string(), options));
        }
    }
    best
}

#[derive(Clone, Debug, Default)]
pub struct MemInfo {
    pub total: u64,
    /// MemAvailable.
    pub available: u64,
    /// The memory cgroup's limit (None: unlimited).
    pub cgroup_limit: Option<u64>,
    /// The cgroup's usage, not counting its file cache (which the kernel can take back).
    pub cgroup_usage: Option<u64>,
    /// The cgroup's file cache (active + inactive file pages, dirty ones included).
    pub cgroup_file_cache: u64,
}

impl MemInfo {
    /// What this process can still use: free memory, capped by the cgroup's headroom, counting
    /// the cgroup's file cache as reclaimable.
    pub fn effective_available(&self) -> u64 {
        match (self.cgroup_limit, self.cgroup_usage) {
            (Some(limit), usage) => self.available.min(limit.saturating_sub(usage.unwrap_or(0))),
            _ => self.available,
        }
    }

    /// The same, but counting the cgroup's file cache as taken: the safe figure for how many
    /// dirty pages a link may leave behind, since under cgroup v1 dirty pages are not throttled
    /// per group and only become reclaimable after writeback.
    pub fn available_without_cache(&self) -> u64 {
        self.effective_available().saturating_sub(self.cgroup_file_cache)
    }
}

/// Returns freed heap memory to the kernel: glibc keeps what worker threads freed in their arenas,
/// where it still counts against a memory cgroup.
pub fn release_free_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim takes no pointers; it only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

pub fn memory() -> MemInfo {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| -> u64 {
        meminfo
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    let (cgroup_limit, cgroup_usage, cgroup_file_cache) = cgroup_memory();
    MemInfo {
        total: field("MemTotal:"),
        available: field("MemAvailable:"),
        cgroup_limit,
        cgroup_usage,
        cgroup_file_cache,
    }
}

fn read_number(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The file pages a memory cgroup's `memory.stat` counts (its page cache, dirty or not; not tmpfs,
/// which sits on the anonymous lists): the kernel takes them back under pressure, clean ones at
/// once, dirty ones after writeback, so they do not count as used. (The previous output of a link
/// repeated in a cgroup sits there, often still dirty: counting it as used made rivet pick paced
/// heap output, which waits for the disk, also for that old output's writeback, and was slower
/// there than mmap output.)
fn file_cache(stat: &str, file: [&str; 2]) -> u64 {
    let field = |name: &str| -> u64 {
        stat.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    file.iter().map(|n| field(n)).sum()
}

/// cgroup v2 (`memory.max`, "max" = none) or v1 (`memory.limit_in_bytes`, huge = none), and the
/// usage that is not file cache, and that file cache.
fn cgroup_memory() -> (Option<u64>, Option<u64>, u64) {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    for line in cgroups.lines() {
        if let Some(path) = line.strip_prefix("0::") {
            // A v2 entry exists on hybrid systems too, where the v2 hierarchy has no memory
            // controller (this machine kind: the limit is in the v1 memory hierarchy below).
            let base = format!("/sys/fs/cgroup{path}");
            if let Ok(max) = std::fs::read_to_string(format!("{base}/memory.max")) {
                let usage = read_number(&format!("{base}/memory.current"));
                let stat = std::fs::read_to_string(format!("{base}/memory.stat")).unwrap_or_default();
                let cache = file_cache(&stat, ["inactive_file", "active_file"]);
                return (max.trim().parse().ok(), usage.map(|u| u.saturating_sub(cache)), cache);
            }
        }
    }
    for line in cgroups.lines() {
        let parts: Vec<&str> = line.splitn(3, ':').collect();
        if parts.len() == 3 && parts[1].split(',').any(|c| c == "memory") {
            let base = format!("/sys/fs/cgroup/memory{}", parts[2]);
            let limit = read_number(&format!("{base}/memory.limit_in_bytes")).filter(|&l| l < (1 << 60));
            let usage = read_number(&format!("{base}/memory.usage_in_bytes"));
            let stat = std::fs::read_to_string(format!("{base}/memory.stat")).unwrap_or_default();
            let cache = file_cache(&stat, ["total_inactive_file", "total_active_file"]);
            return (limit, usage.map(|u| u.saturating_sub(cache)), cache);
        }
    }
    (None, None, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_real_file_systems() {
        let root = for_path(Path::new("/")).unwrap();
        assert!(!root.fs_type.is_empty(), "{root:?}");
        assert!(root.block_size > 0);
        let proc_ = for_path(Path::new("/proc")).unwrap();
        assert_eq!(proc_.fs_type, "proc");
        assert_eq!(proc_.mount_point, PathBuf::from("/proc"));
    }

    #[test]
    fn file_cache_is_free_for_the_mode_but_not_for_dirty_pages() {
        let m = MemInfo {
            total: 1 << 34,
            available: 1 << 33,
            cgroup_limit: Some(100 << 20),
            cgroup_usage: Some(20 << 20),
            cgroup_file_cache: 50 << 20,
        };
        assert_eq!(m.effective_available(), 80 << 20);
        assert_eq!(m.available_without_cache(), 30 << 20);
        let roomy = MemInfo { cgroup_limit: None, cgroup_usage: None, cgroup_file_cache: 0, ..m };
        assert_eq!((roomy.effective_available(), roomy.available_without_cache()), (1 << 33, 1 << 33));
    }

    #[test]
    fn file_cache_counts_both_file_lists() {
        let v1 = "cache 100\ntotal_inactive_file 4096\ntotal_active_file 8192\ntotal_dirty 1024\ninactive_file 1\n";
        assert_eq!(file_cache(v1, ["total_inactive_file", "total_active_file"]), 4096 + 8192);
        let v2 = "anon 5\nfile 9\nactive_file 300\ninactive_file 200\nfile_dirty 600\n";
        assert_eq!(file_cache(v2, ["inactive_file", "active_file"]), 500);
        assert_eq!(file_cache("", ["a", "b"]), 0);
    }

    #[test]
    fn parses_mountinfo_lines() {
        let table = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
                     40 22 0:35 / /mnt/my\\040disk rw - btrfs /dev/sdb rw,compress=zstd:3\n";
        let (mp, t, o) = find_mount(table, Path::new("/mnt/my disk/out")).unwrap();
        assert_eq!(mp, PathBuf::from("/mnt/my disk"));
        assert_eq!(t, "btrfs");
        assert!(o.contains("compress=zstd"));
        let (mp, t, _) = find_mount(table, Path::new("/home/x")).unwrap();
        assert_eq!((mp, t.as_str()), (PathBuf::from("/"), "ext4"));
    }

    #[test]
    fn compression_from_mount_options() {
        // Sample lines of /proc/self/mountinfo (a compressed btrfs, and ones that are not).
        let table = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
                     41 22 7:0 / /mnt/rivet-bench rw,relatime shared:30 - btrfs /dev/loop0 rw,compress-force=zstd:3,space_cache=v2,subvolid=5,subvol=/\n\
                     42 22 7:1 / /mnt/plain rw,relatime - btrfs /dev/loop1 rw,space_cache=v2,subvolid=5,subvol=/\n\
                     43 22 7:2 / /mnt/lzo rw - btrfs /dev/loop2 rw,compress=lzo,ssd\n\
                     44 22 7:3 / /mnt/no rw - btrfs /dev/loop3 rw,compress=no\n\
                     45 22 7:4 / /mnt/bc rw - bcachefs /dev/vdb rw,background_compression=zstd\n\
                     46 22 0:50 / /tank rw - zfs tank/home rw,xattr,noacl\n";
        let at = |p: &str| {
            let (_, t, o) = find_mount(table, Path::new(p)).unwrap();
            mount_compression(&t, &o)
        };
        assert_eq!(at("/mnt/rivet-bench/x").as_deref(), Some("mount option compress-force=zstd:3"));
        assert_eq!(at("/mnt/lzo/x").as_deref(), Some("mount option compress=lzo"));
        assert_eq!(at("/mnt/plain/x"), None);
        assert_eq!(at("/mnt/no/x"), None, "compress=no");
        assert_eq!(at("/home/x"), None);
        assert_eq!(at("/mnt/bc/x").as_deref(), Some("mount option background_compression=zstd"));
        assert!(at("/tank/x").is_some_and(|w| w.starts_with("zfs")));
        assert_eq!(mount_compression("btrfs", "rw,compress"), Some("mount option compress".into()));
        assert_eq!(mount_compression("bcachefs", "rw,compression=none"), None);
        assert_eq!(mount_compression("ext4", "rw,compress=zstd"), None, "only file systems that compress");
    }

    #[test]
    fn plain_directories_are_not_compressed() {
        let d = std::env::temp_dir();
        let info = for_path(&d).unwrap();
        if info.fs_type != "btrfs" {
            assert_eq!(dir_compression(&d), None);
        }
    }

    #[test]
    fn memory_is_known() {
        let m = memory();
        assert!(m.total > 0 && m.available > 0);
        assert!(m.effective_available() <= m.available);
    }
}
