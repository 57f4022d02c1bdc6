//! Input files: mapped read-only (or read into memory when tiny or not a regular file), one open per
//! file even when it is named twice. Takes paths, gives byte slices that live as long as the file.
use memmap2::Mmap;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// Files smaller than this are read() rather than mapped: a mapping costs more than a copy for them.
pub const MAP_THRESHOLD: u64 = 16 * 1024;

enum Bytes {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

/// One input file's bytes. The descriptor is closed once the bytes are mapped or read: a mapping
/// outlives it, and a link of thousands of objects must not need thousands of descriptors (with
/// `ulimit -n 64`, keeping them failed at the 57th of 1000 objects).
pub struct InputFile {
    path: PathBuf,
    bytes: Bytes,
    size: u64,
    mtime: Option<SystemTime>,
    /// A regular file (false: a pipe or device, read once).
    regular: bool,
}

fn with_path(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("cannot open {}: {}", path.display(), e))
}

impl InputFile {
    /// Opens and maps (or reads) `path`.
    pub fn open(path: &Path) -> io::Result<InputFile> {
        let file = File::open(path).map_err(|e| with_path(e, path))?;
        let meta = file.metadata().map_err(|e| with_path(e, path))?;
        InputFile::from_open(path, file, &meta)
    }

    /// Maps (or reads) `file`, opened from `path`, whose metadata is `meta`: one `statx` for the
    /// whole open (the length is given to the mapping, which would ask again).
    fn from_open(path: &Path, mut file: File, meta: &std::fs::Metadata) -> io::Result<InputFile> {
        if meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cannot open {}: is a directory", path.display()),
            ));
        }
        let regular = meta.is_file();
        let bytes = if regular && meta.len() >= MAP_THRESHOLD {
            // SAFETY: the mapping is read-only and private to this process. A file truncated by
            // another process while we link would raise SIGBUS on access; linkers accept that risk
            // for inputs (lld and mold map inputs the same way), and `changed_since_open` lets the
            // linker detect a change after the fact.
            let len = usize::try_from(meta.len()).map_err(|_| with_path(io::ErrorKind::FileTooLarge.into(), path))?;
            Bytes::Mapped(unsafe { memmap2::MmapOptions::new().len(len).map(&file) }.map_err(|e| with_path(e, path))?)
        } else {
            let mut v = Vec::with_capacity(meta.len() as usize);
            file.read_to_end(&mut v).map_err(|e| with_path(e, path))?;
            Bytes::Owned(v)
        };
        let size = match &bytes {
            Bytes::Mapped(m) => m.len() as u64,
            Bytes::Owned(v) => v.len() as u64,
        };
        Ok(InputFile { path: path.to_path_buf(), bytes, regular, size, mtime: meta.modified().ok() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn data(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }

    /// True for a regular file (false for data read from a pipe or device).
    pub fn is_regular(&self) -> bool {
        self.regular
    }

    /// True when the bytes are a mapping of the file (false: read into memory).
    pub fn is_mapped(&self) -> bool {
        matches!(self.bytes, Bytes::Mapped(_))
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The page-aligned part of the mapping covering `offset..offset+len` (None if not mapped).
    fn mapped_range(&self, offset: u64, len: u64) -> Option<(*const u8, usize)> {
        let Bytes::Mapped(m) = &self.bytes else { return None };
        let page = page_size() as u64;
        let start = (offset / page) * page;
        let end = (offset + len).min(m.len() as u64);
        if start >= end {
            return None;
        }
        // SAFETY: start < end <= map length, so the pointer stays inside the mapping.
        Some((unsafe { m.as_ptr().add(start as usize) }, (end - start) as usize))
    }

    /// Tells the kernel these bytes will be needed soon: read-ahead into the page cache starts in
    /// the background. Through the file descriptor (`posix_fadvise`), not the mapping: madvise and
    /// mincore take the process's mmap lock, which the linker's own mmap calls and page faults then
    /// wait for (prefetching through madvise made warm synth-1 links 0.092 s -> 0.163 s: bench/run.py
    /// medians for 44b9d1b).
    pub fn advise_willneed(&self, offset: u64, len: u64) {
        if !self.is_mapped() {
            return;
        }
        // The prefetch thread opens the file for the hint alone; no descriptor is kept per input.
        if let Ok(f) = File::open(&self.path) {
            // SAFETY: fadvise on an fd we own; it only schedules reads into the page cache.
            unsafe {
                libc::posix_fadvise(f.as_raw_fd(), offset as libc::off_t, len as libc::off_t, libc::POSIX_FADV_WILLNEED)
            };
        }
    }

    /// Drops the mapping's pages from the process's page tables (the file's pages stay in the page
    /// cache).
    pub fn release_pages(&self) {
        let Some((ptr, n)) = self.mapped_range(0, self.size()) else { return };
        // SAFETY: (ptr, n) is a page-aligned range of a live mapping; nothing reads it afterwards.
        unsafe { libc::madvise(ptr as *mut libc::c_void, n, libc::MADV_DONTNEED) };
    }

    /// The fraction of the range's pages already in the page cache (1.0 for read() inputs).
    pub fn resident_fraction(&self, offset: u64, len: u64) -> f64 {
        let Some((ptr, n)) = self.mapped_range(offset, len) else { return 1.0 };
        let pages = n.div_ceil(page_size());
        let mut vec = vec![0u8; pages];
        // SAFETY: (ptr, n) is a page-aligned range of a live mapping; `vec` has one byte per page.
        let r = unsafe { libc::mincore(ptr as *mut libc::c_void, n, vec.as_mut_ptr()) };
        if r != 0 {
            return 0.0;
        }
        vec.iter().filter(|&&b| b & 1 != 0).count() as f64 / pages as f64
    }

    pub fn mtime(&self) -> Option<SystemTime> {
        self.mtime
    }

    /// Re-reads the file's size and modification time: true when another process changed the file
    /// after it was opened (the linker then refuses to write an output built from torn input).
    pub fn changed_since_open(&self) -> io::Result<bool> {
        if !self.regular {
            return Ok(false);
        }
        let meta = std::fs::metadata(&self.path)?;
        Ok(meta.len() != self.size || meta.modified().ok() != self.mtime)
    }
}

pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// A file opened, and its place among those opened.
type Numbered = (Arc<InputFile>, usize);

/// Opens every file once: a second `open` of the same file (same device and inode, whatever the path
/// spelling) returns the first `Arc`. Safe to share between threads.
#[derive(Default)]
pub struct InputCache {
    /// Each file by its identity (device, inode), with its place in `order`.
    files: Mutex<HashMap<(u64, u64), Numbered>>,
    order: Mutex<Vec<Arc<InputFile>>>,
}

impl InputCache {
    pub fn new() -> InputCache {
        InputCache::default()
    }

    pub fn open(&self, path: &Path) -> io::Result<Arc<InputFile>> {
        self.open_numbered(path).map(|(f, _)| f)
    }

    /// `open`, and the file's place among those opened (`files`): a second name of a file opened
    /// before gives that file's.
    pub fn open_numbered(&self, path: &Path) -> io::Result<(Arc<InputFile>, usize)> {
        // Opened first and asked for its identity through the descriptor: three system calls a
        // file (open, statx, mmap), where a `stat` of the path before them made five with the
        // mapping's own.
        let file = File::open(path).map_err(|e| with_path(e, path))?;
        let meta = file.metadata().map_err(|e| with_path(e, path))?;
        let key = (meta.dev(), meta.ino());
        if let Some(f) = self.files.lock().unwrap().get(&key) {
            return Ok(f.clone());
        }
        let f = Arc::new(InputFile::from_open(path, file, &meta)?);
        let mut files = self.files.lock().unwrap();
        let entry = files.entry(key).or_insert_with(|| {
            let mut order = self.order.lock().unwrap();
            order.push(f);
            (order[order.len() - 1].clone(), order.len() - 1)
        });
        Ok(entry.clone())
    }

    /// Total bytes of all files opened so far, and of those mapped.
    pub fn totals(&self) -> (u64, u64) {
        let order = self.order.lock().unwrap();
        let total = order.iter().map(|f| f.size).sum();
        let mapped = order.iter().filter(|f| f.is_mapped()).map(|f| f.size).sum();
        (total, mapped)
    }

    pub fn paths(&self) -> Vec<PathBuf> {
        self.order.lock().unwrap().iter().map(|f| f.path.clone()).collect()
    }

    /// Every file opened, in the order first opened.
    pub fn files(&self) -> Vec<Arc<InputFile>> {
        self.order.lock().unwrap().clone()
    }

    /// Linking an input over itself would destroy the input on success: an error naming the input
    /// when `output` is the same file (device and inode) as one of the files opened.
    pub fn refuse_as_output(&self, output: &Path) -> io::Result<()> {
        let Ok(out) = std::fs::metadata(output) else { return Ok(()) };
        for path in self.paths() {
            if let Ok(m) = std::fs::metadata(&path) {
                if (m.dev(), m.ino()) == (out.dev(), out.ino()) {
                    return Err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        format!(
                            "output file {} is also an input ({}); refusing to overwrite it",
                            output.display(),
                            path.display()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// An error naming the first file another process changed since it was opened (or that can no
    /// longer be read): an output built from torn bytes must not be committed.
    pub fn check_unchanged(&self) -> io::Result<()> {
        for f in self.files() {
            if f.changed_since_open().unwrap_or(true) {
                return Err(io::Error::other(format!(
                    "{} changed while it was being linked; output not written",
                    f.path().display()
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn residency_and_advice() {
        let d = tmpdir("resident");
        std::fs::write(d.join("f"), vec![1u8; 1 << 20]).unwrap();
        let f = InputFile::open(&d.join("f")).unwrap();
        let _touch: u64 = f.data().iter().step_by(4096).map(|&b| b as u64).sum();
        assert!(f.resident_fraction(0, 1 << 20) > 0.99, "pages just read are resident");
        f.advise_willneed(100, 5000); // unaligned ranges are fine
        let small = d.join("small");
        std::fs::write(&small, b"tiny").unwrap();
        assert_eq!(InputFile::open(&small).unwrap().resident_fraction(0, 4), 1.0);
        std::fs::remove_dir_all(d).unwrap();
    }

    /// Resident kB of the mapping that starts at `addr` (/proc/self/smaps).
    pub(crate) fn mapping_rss_kb(addr: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut lines = smaps.lines();
        while let Some(l) = lines.next() {
            let start = l.split('-').next().and_then(|a| usize::from_str_radix(a, 16).ok());
            if start == Some(addr) && l.contains(' ') {
                for l in lines.by_ref() {
                    if let Some(kb) = l.strip_prefix("Rss:") {
                        return kb.trim().trim_end_matches(" kB").parse().unwrap();
                    }
                }
            }
        }
        panic!("no mapping at {addr:#x}")
    }

    #[test]
    fn released_pages_leave_the_mapping_and_read_back_the_same() {
        let d = tmpdir("release");
        let bytes: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
        std::fs::write(d.join("f"), &bytes).unwrap();
        let f = InputFile::open(&d.join("f")).unwrap();
        assert!(f.is_mapped());
        let addr = f.data().as_ptr() as usize;
        assert_eq!(f.data(), &bytes[..]);
        assert!(mapping_rss_kb(addr) >= 1024, "every page was read");
        f.release_pages();
        assert_eq!(mapping_rss_kb(addr), 0, "no page is left in the page tables");
        assert_eq!(f.data(), &bytes[..], "the file's bytes are read again");
        std::fs::remove_dir_all(d).unwrap();
    }

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rivet-io-input-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn small_files_are_read_large_are_mapped() {
        let d = tmpdir("thresholds");
        std::fs::write(d.join("small"), b"0123456789").unwrap();
        std::fs::write(d.join("large"), vec![7u8; 100 * 1024]).unwrap();
        let small = InputFile::open(&d.join("small")).unwrap();
        let large = InputFile::open(&d.join("large")).unwrap();
        assert!(!small.is_mapped());
        assert!(large.is_mapped());
        assert_eq!(small.data(), b"0123456789");
        assert_eq!(large.data().len(), 100 * 1024);
        assert!(!large.changed_since_open().unwrap());
        drop(large);
        let large = InputFile::open(&d.join("large")).unwrap();
        std::fs::write(d.join("large"), vec![7u8; 10]).unwrap();
        assert!(large.changed_since_open().unwrap());
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn same_file_opens_once_whatever_the_spelling() {
        let d = tmpdir("once");
        std::fs::write(d.join("f"), b"data").unwrap();
        std::os::unix::fs::symlink(d.join("f"), d.join("link")).unwrap();
        let cache = InputCache::new();
        let a = cache.open(&d.join("f")).unwrap();
        let b = cache.open(&d.join(".").join("f")).unwrap();
        let c = cache.open(&d.join("link")).unwrap();
        assert!(Arc::ptr_eq(&a, &b) && Arc::ptr_eq(&a, &c));
        assert_eq!(cache.paths().len(), 1);
        assert_eq!(cache.totals(), (4, 0));
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn output_over_an_input_is_refused() {
        let d = tmpdir("refuse");
        std::fs::write(d.join("a.o"), b"input").unwrap();
        std::fs::hard_link(d.join("a.o"), d.join("other-name")).unwrap();
        let cache = InputCache::new();
        cache.open(&d.join("a.o")).unwrap();
        cache.refuse_as_output(&d.join("missing")).unwrap();
        std::fs::write(d.join("b.out"), b"old output").unwrap();
        cache.refuse_as_output(&d.join("b.out")).unwrap();
        let e = cache.refuse_as_output(&d.join("other-name")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "output file {} is also an input ({}); refusing to overwrite it",
                d.join("other-name").display(),
                d.join("a.o").display()
            )
        );
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn changed_inputs_are_named() {
        let d = tmpdir("changed");
        std::fs::write(d.join("a.o"), b"aaaa").unwrap();
        std::fs::write(d.join("b.o"), b"bbbb").unwrap();
        let cache = InputCache::new();
        cache.open(&d.join("a.o")).unwrap();
        cache.open(&d.join("b.o")).unwrap();
        cache.check_unchanged().unwrap();
        std::fs::write(d.join("b.o"), b"a longer b").unwrap();
        let e = cache.check_unchanged().unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{} changed while it was being linked; output not written", d.join("b.o").display())
        );
        std::fs::remove_file(d.join("b.o")).unwrap();
        assert!(cache.check_unchanged().is_err(), "a file gone counts as changed");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn pipes_are_read() {
        let d = tmpdir("fifo");
        let fifo = d.join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let writer_path = fifo.clone();
        let writer = std::thread::spawn(move || std::fs::write(writer_path, b"through a pipe").unwrap());
        let f = InputFile::open(&fifo).unwrap();
        writer.join().unwrap();
        assert!(!f.is_mapped());
        assert!(!f.is_regular());
        assert_eq!(f.data(), b"through a pipe");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn many_inputs_need_no_descriptor_each() {
        let d = tmpdir("fds");
        let cache = InputCache::new();
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit fills the struct.
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
        let n = (limit.rlim_cur as usize).min(4096) + 10;
        for i in 0..n {
            let p = d.join(format!("f{i}"));
            std::fs::write(&p, vec![i as u8; 20 << 10]).unwrap();
            cache.open(&p).unwrap();
        }
        assert_eq!(cache.paths().len(), n);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn errors_name_the_path() {
        let e = InputFile::open(Path::new("/nonexistent/rivet-input")).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("/nonexistent/rivet-input"));
        let e = InputFile::open(Path::new("/tmp")).err().unwrap();
        assert!(e.to_string().contains("is a directory"));
    }
}
