//! The output file. The linker gets a zeroed `&mut [u8]` of the final size (or, promising to write
//! every byte, one that may still hold a reused file's old bytes: `buf_unzeroed`), fills it, and
//! commits; the output is built under a temp name in the target's directory (so the final rename
//! is atomic) and a dropped `OutputFile` removes its temp file. Its space is reserved with
//! fallocate before any byte is written, so a full disk is an error at `create` and never a SIGBUS
//! in the middle of writing through a mapping (where the file system compresses and nothing is
//! reserved, a SIGBUS on the output mapping is turned into that error by a handler:
//! `guard_mapping`).
//!
//! The temp file is either new, or the previous output itself (`reuse`, mold's method): a regular
//! file with one link, owned by us, that opens for writing (not running: ETXTBSY) is renamed to the
//! temp name and rewritten in place, its pages already in the page cache and its blocks allocated.
//! Either way the output path holds the complete old file until `create` (and, without reuse, until
//! commit), then the complete new one; a link that fails after reusing leaves no file there.
//!
//! On request (`CreateOptions::populate`) the mapping is pre-faulted for writing at create, in one
//! `madvise(MADV_POPULATE_WRITE)`: a page the file system cannot back is then an error there, not
//! a SIGBUS later; a kernel without it only leaves the faults to the writes.
use crate::fsinfo;
use memmap2::MmapMut;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    /// Temp file, ftruncate + fallocate, mmap it, fill in place, unmap, rename over the target.
    Mmap,
    /// Fill an in-memory buffer, then write it sequentially into the temp file, rename.
    Heap,
}

enum Buffer {
    Map(MmapMut),
    Heap(Vec<u8>),
}

/// Takes the page-table entries of finished parts of a mapped output out (`madvise(MADV_DONTNEED)`),
/// from any thread, while the mapping lives (it borrows the output). The mapping is shared with the
/// file, so the bytes stay in the page cache and read back the same; what goes is only the entries,
/// which `munmap` at commit would otherwise take out on one thread with the mmap lock held alone
/// (rust-big's 150 MB output: 2.8 ms of the commit), where madvise holds it shared.
pub struct Unmapper<'a> {
    base: usize,
    len: usize,
    _map: std::marker::PhantomData<&'a mut [u8]>,
}

impl Unmapper<'_> {
    /// The whole pages of output bytes `start..end` (the last page too when `end` is the end).
    pub fn release(&self, start: u64, end: u64) {
        let page = crate::input::page_size();
        let start = (start as usize).min(self.len).next_multiple_of(page);
        let end = match end as usize >= self.len {
            true => self.len.next_multiple_of(page),
            false => end as usize / page * page,
        };
        if end > start {
            // SAFETY: a page-aligned range inside the live shared file mapping (borrowed for 'a):
            // dropping its entries changes no byte, a later access faults the page back in.
            unsafe { libc::madvise((self.base + start) as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
        }
    }
}

pub struct OutputFile {
    /// The output path as given. The output replaces whatever is there: a symbolic link at this
    /// path is replaced by the new file, never written through (as lld does, and GNU ld for a link to
    /// a non-empty file), so a link planted in a shared directory cannot aim the output at a file of
    /// the user's. Only a non-regular file (a device, a FIFO) is opened by the path, in place, where
    /// the kernel follows a link and applies its own checks (`fs.protected_symlinks`).
    target: PathBuf,
    /// The output path names something other than a regular file (`/dev/null`, a FIFO): written in
    /// place, since renaming over it would replace the device node with a file.
    in_place: bool,
    /// `-o -`: written to standard output.
    to_stdout: bool,
    temp: PathBuf,
    file: Option<File>,
    buffer: Buffer,
    mode: OutputMode,
    executable: bool,
    reserved: bool,
    note: Option<String>,
    committed: bool,
    /// Write-behind: everything but these (offset, len) ranges is already in the file.
    written_except: Option<Vec<(u64, u64)>>,
    /// The output's size in bytes.
    size: u64,
    /// Whether the mapping was pre-faulted for writing (`CreateOptions::populate`), and how long it took.
    populated: Populated,
    /// `CreateOptions::huge_pages` on a mapping: None not asked (or nothing mapped), else whether
    /// the kernel took the advice (its error when not).
    huge_pages: Option<Result<(), String>>,
    /// The process exits right after the link (the default): the replaced output's blocks are freed
    /// in a child process and the output buffer is never freed. False for callers that go on
    /// running (no child to reap, no leak).
    exiting: bool,
    /// Whether the previous output was reused in place, and why (or why not).
    reuse: ReuseOutcome,
    /// Reused: the leading bytes of the file that still hold the old file's. Mapped, they are
    /// zeroed by the first `buf` (0 once zeroed, or once `buf_unzeroed` has handed them to the
    /// caller); a heap buffer starts zeroed and is written whole.
    stale: u64,
}

/// How `create_opts` builds the output.
#[derive(Clone, Copy, Debug)]
pub struct CreateOptions {
    pub mode: OutputMode,
    /// The final file gets mode 0777 & !umask (else 0666 & !umask).
    pub executable: bool,
    /// Reserve the space with fallocate before writing.
    pub reserve_space: bool,
    /// Rewrite the previous output in place when that is safe (see `try_reuse`).
    pub reuse: bool,
    /// Mmap without a reservation is allowed: a SIGBUS on the mapping (the file system ran out of
    /// space at a page fault) becomes a clear error and exit instead of a crash.
    pub map_unreserved: bool,
    /// Pre-fault the whole mapping for writing once it is made (`MADV_POPULATE_WRITE`), instead of
    /// page by page as it is first written. Ignored without a mapping; where the kernel does not
    /// know it, the output goes on without (`populated` says so).
    pub populate: bool,
    /// Ask for the mapping to be backed by huge pages (`MADV_HUGEPAGE`) once it is made. Advice
    /// only: ignored without a mapping, and the kernel may map small pages all the same.
    pub huge_pages: bool,
}

impl CreateOptions {
    /// `mode`, `executable` and `reserve_space` as given, nothing else asked for: a new file, a
    /// guarded unreserved mapping refused, no populating, no huge pages.
    pub fn plain(mode: OutputMode, executable: bool, reserve_space: bool) -> CreateOptions {
        CreateOptions {
            mode,
            executable,
            reserve_space,
            reuse: false,
            map_unreserved: false,
            populate: false,
            huge_pages: false,
        }
    }
}

/// What became of `CreateOptions::populate`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Populated {
    /// Not asked for.
    #[default]
    NotAsked,
    /// Asked for, but the output is not mapped (heap output, or the mapping was refused at create).
    NotMapped,
    /// The whole mapping was faulted in for writing, in this time.
    Done(Duration),
    /// The kernel did not do it (it does not know `MADV_POPULATE_WRITE`, or refused it): the output
    /// is written without; why.
    Skipped(String),
}

/// What became of the previous output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReuseOutcome {
    pub reused: bool,
    pub reason: String,
}

/// The previous output, taken over: open for writing and renamed to `temp`.
struct Taken {
    file: File,
    temp: PathBuf,
    old_len: u64,
    reserved: bool,
}

/// Why the previous output was not taken over: a new file is made instead (`Fresh`), or the link
/// fails (`Fail`: the disk cannot hold the output either way).
enum NotTaken {
    Fresh(String),
    Fail(io::Error),
}

/// What commit did and how long it took.
#[derive(Debug, Clone, Default)]
pub struct CommitReport {
    pub bytes_written: u64,
    pub write_time: Duration,
    pub rename_time: Duration,
    /// The file committed (device, inode); None for standard output.
    pub file: Option<(u64, u64)>,
}

/// Heap mode writes in chunks this large: big enough to keep the disk streaming, small enough
/// that a slow device shows progress in /proc/self/io.
const WRITE_CHUNK: usize = 8 << 20;

fn umask() -> u32 {
    static UMASK: OnceLock<u32> = OnceLock::new();
    *UMASK.get_or_init(|| {
        // SAFETY: umask only swaps the process's file-creation mask; it is restored at once and
        // read once (before any thread of ours creates files concurrently).
        unsafe {
            let old = libc::umask(0o022);
            libc::umask(old);
            old as u32
        }
    })
}

fn context(e: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()))
}

/// A fresh name for a temp file in `target`'s directory (so a rename onto `target` is atomic).
pub(crate) fn temp_path(target: &Path) -> PathBuf {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "a.out".into());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    dir.join(format!(".{name}.rivet-tmp.{}.{n}", std::process::id()))
}

/// Starts writeback of `len` bytes at `offset` of `file` without waiting for it (no durability is
/// promised or awaited: `SYNC_FILE_RANGE_WRITE` alone). Write-behind calls it after each window so
/// the dirty pages it leaves stay few: under a cgroup v1 memory limit, dirty page cache is not
/// throttled per group, and a link that dirtied its whole output was OOM-killed (synth-1, write-
/// behind, 76 MiB limit) where one that starts writeback per window completes.
pub fn start_writeback(file: &File, offset: u64, len: u64) {
    // SAFETY: sync_file_range on a descriptor we own; it only schedules I/O.
    unsafe {
        libc::sync_file_range(
            file.as_raw_fd(),
            offset as libc::off64_t,
            len as libc::off64_t,
            libc::SYNC_FILE_RANGE_WRITE,
        );
    }
}

/// Waits until the writeback of `len` bytes at `offset` (started by `start_writeback`) is done and
/// drops those pages from the page cache. Write-behind calls it for the window before the previous
/// one only when memory is tight (`paced`): it bounds the dirty and cached output to about two
/// windows, at the price of waiting for the device, which under a cgroup limit beats being killed
/// (synth-1 on compressed btrfs in a 73 MiB cgroup v1 was OOM-killed with only `start_writeback`).
/// This is not a durability flush: no fsync, no disk cache flush, no metadata.
pub fn settle_written(file: &File, offset: u64, len: u64) {
    let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    // SAFETY: sync_file_range and posix_fadvise on a descriptor we own; no memory is passed.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset as libc::off64_t, len as libc::off64_t, flags);
        libc::posix_fadvise(file.as_raw_fd(), offset as libc::off_t, len as libc::off_t, libc::POSIX_FADV_DONTNEED);
    }
}

/// Reserves `size` bytes. Ok(false): the file system cannot (EOPNOTSUPP), nothing is reserved.
fn reserve(file: &File, size: u64) -> io::Result<bool> {
    if size == 0 {
        return Ok(true);
    }
    // SAFETY: fallocate on an fd we own; no memory is passed.
    let r = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, size as libc::off_t) };
    if r == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EOPNOTSUPP) => Ok(false),
        _ => Err(e),
    }
}

fn no_space(target: &Path, size: u64, e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(libc::ENOSPC) {
        io::Error::new(
            e.kind(),
            format!("cannot write {}: no space left on device (needs {size} bytes)", target.display()),
        )
    } else {
        context(e, "reserve space for", target)
    }
}

/// Takes over the previous output at `target` when it is safe to rewrite it in place: a regular file
/// at the path itself (never a symbolic link's target) with one link (other names would see the
/// new bytes), owned by this user, an ELF file, that opens for writing (a running executable gives
/// ETXTBSY). With `reserve`, the space of the new size is reserved on
/// the old file while it is still at the output path (`FALLOC_FL_KEEP_SIZE`: neither its size, bytes nor
/// modification time change), so a full disk fails the link with the old output intact. Then it is
/// renamed to a temp name (the path is empty until commit) and sized.
fn try_reuse(target: &Path, size: u64, reserve: bool) -> Result<Taken, NotTaken> {
    use std::os::unix::fs::MetadataExt;
    let fresh = |why: String| Err(NotTaken::Fresh(why));
    let meta = match std::fs::symlink_metadata(target) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return fresh("no previous output".into()),
        Err(e) => return fresh(format!("cannot inspect the previous output: {e}")),
    };
    if meta.file_type().is_symlink() {
        return fresh("the output path is a symbolic link: replaced, never written through".into());
    }
    if !meta.file_type().is_file() {
        return fresh("the previous output is not a regular file".into());
    }
    if meta.nlink() != 1 {
        return fresh(format!("the previous output has {} links; the other names keep the old contents", meta.nlink()));
    }
    // SAFETY: geteuid has no failure mode and touches no memory.
    if meta.uid() != unsafe { libc::geteuid() } {
        return fresh("the previous output belongs to another user".into());
    }
    let file = match OpenOptions::new().read(true).write(true).custom_flags(libc::O_NOFOLLOW).open(target) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
            return fresh("the previous output is running (ETXTBSY): replaced, so it keeps running".into())
        }
        Err(e) => return fresh(format!("the previous output does not open for writing: {e}")),
    };
    // Only a previous linker output is worth it and safe to lose to a failed link: any other file
    // at the output path (a source file named by mistake, a placeholder) stays intact until commit.
    let mut magic = [0u8; 4];
    {
        use std::os::unix::fs::FileExt;
        if file.read_exact_at(&mut magic, 0).is_err() || &magic != b"\x7fELF" {
            return fresh("the previous output is not an ELF file: kept intact until commit".into());
        }
    }
    let same = |m: &std::fs::Metadata| m.dev() == meta.dev() && m.ino() == meta.ino() && m.nlink() == 1;
    if !file.metadata().is_ok_and(|m| same(&m)) {
        return fresh("the previous output changed while it was checked".into());
    }
    if !reserve && free_bytes(&file).map_or(true, |free| free.saturating_add(meta.len()) < size) {
        // Nothing can be reserved (a compressing file system): if the free space may not hold the
        // output, a new file keeps the old output intact when the disk fills.
        return fresh(
            "the free space may not hold the output (nothing reserved): the old output is kept until commit".into(),
        );
    }
    let mut reserved = false;
    if reserve && size > 0 {
        // SAFETY: fallocate on a descriptor we own; no memory is passed.
        let r = unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, 0, size as libc::off_t) };
        if r == 0 {
            reserved = true;
        } else {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::ENOSPC) => return Err(NotTaken::Fail(no_space(target, size, e))),
                Some(libc::EOPNOTSUPP) => {}
                _ => return fresh(format!("cannot reserve space in the previous output: {e}")),
            }
        }
    }
    let temp = temp_path(target);
    if let Err(e) = std::fs::rename(target, &temp) {
        return fresh(format!("cannot rename the previous output: {e}"));
    }
    // Another link may have replaced the output path between the checks and the rename: then the file moved
    // is not the one open here; put it back (unless yet another output is there by now).
    if !std::fs::symlink_metadata(&temp).is_ok_and(|m| same(&m)) {
        let _ = rename_noreplace(&temp, target);
        let _ = std::fs::remove_file(&temp);
        return fresh("the previous output was replaced while it was checked".into());
    }
    if let Err(e) = file.set_len(size) {
        let _ = rename_noreplace(&temp, target);
        return fresh(format!("cannot resize the previous output: {e}"));
    }
    Ok(Taken { file, temp, old_len: meta.len(), reserved })
}

/// rename(2) that fails with EEXIST instead of replacing `to`.
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let f = std::ffi::CString::new(from.as_os_str().as_bytes())?;
    let t = std::ffi::CString::new(to.as_os_str().as_bytes())?;
    // SAFETY: renameat2 reads two NUL-terminated paths that live across the call.
    let r = unsafe { libc::renameat2(libc::AT_FDCWD, f.as_ptr(), libc::AT_FDCWD, t.as_ptr(), libc::RENAME_NOREPLACE) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The bytes free for an unprivileged user on the file system holding `file`.
fn free_bytes(file: &File) -> io::Result<u64> {
    // SAFETY: fstatvfs fills the zeroed struct for a descriptor we own.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatvfs(file.as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// The output mapping written without a reservation (`guard_mapping`): its address range, and the
/// temp file and message the SIGBUS handler uses (leaked C strings, set before the range).
static GUARD_START: AtomicUsize = AtomicUsize::new(0);
static GUARD_LEN: AtomicUsize = AtomicUsize::new(0);
static GUARD_TEMP: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
static GUARD_MSG: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

/// Where nothing is reserved (a compressing file system, where preallocated extents are stored
/// uncompressed), a page fault of the output mapping on a full disk raises SIGBUS. This handler
/// makes that the error a reservation would have given: it prints it, removes the temp file and
/// exits with status 1 (async-signal-safe calls only). A SIGBUS elsewhere (an input truncated while
/// mapped) keeps its default action.
fn guard_mapping(map: &MmapMut, temp: &Path, target: &Path) {
    use std::os::unix::ffi::OsStrExt;
    static INSTALLED: OnceLock<()> = OnceLock::new();
    let Ok(t) = std::ffi::CString::new(temp.as_os_str().as_bytes()) else { return };
    let msg = format!(
        "rivet: error: cannot write {}: no space left on device (the file system ran out of space while the output was written through a mapping)\n",
        target.display()
    );
    let Ok(m) = std::ffi::CString::new(msg) else { return };
    GUARD_LEN.store(0, Ordering::SeqCst);
    GUARD_TEMP.store(t.into_raw(), Ordering::SeqCst);
    GUARD_MSG.store(m.into_raw(), Ordering::SeqCst);
    GUARD_START.store(map.as_ptr() as usize, Ordering::SeqCst);
    GUARD_LEN.store(map.len(), Ordering::SeqCst);
    INSTALLED.get_or_init(|| {
        // SAFETY: installs a handler that only reads atomics and calls async-signal-safe functions.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
        }
    });
}

/// The mapping is gone (committed or dropped): a SIGBUS is no longer ours.
fn unguard_mapping() {
    GUARD_LEN.store(0, Ordering::SeqCst);
}

extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo; the strings were leaked and are never freed; only
    // async-signal-safe calls (strlen, write, unlink, signal, _exit).
    unsafe {
        let addr = (*info).si_addr() as usize;
        let (start, len) = (GUARD_START.load(Ordering::SeqCst), GUARD_LEN.load(Ordering::SeqCst));
        if len != 0 && addr >= start && addr < start + len {
            let msg = GUARD_MSG.load(Ordering::SeqCst);
            libc::write(2, msg as *const libc::c_void, libc::strlen(msg));
            libc::unlink(GUARD_TEMP.load(Ordering::SeqCst));
            libc::_exit(1);
        }
        // Not the output: the faulting access runs again and the default action applies.
        libc::signal(libc::SIGBUS, libc::SIG_DFL);
    }
}

/// Faults every page of the output mapping in for writing, in one call: the page-cache pages are
/// found or allocated (a new file's read as zeros, a reused one's old bytes kept), the file system
/// is told they will be dirtied (`page_mkwrite`) and the page tables filled, as the first write to
/// each page would do one fault at a time. No byte of the mapping changes.
fn populate_write(map: &mut MmapMut) -> io::Result<()> {
    // SAFETY: madvise over exactly the range of a live mapping we own (memmap2 maps the file from
    // offset 0, so its start is page-aligned). MADV_POPULATE_WRITE reads or writes no byte of it
    // from user space and changes none; a page that would raise SIGBUS on access (the file system
    // cannot back it: a full disk) makes it fail with EFAULT instead of delivering the signal.
    let r = unsafe { libc::madvise(map.as_mut_ptr().cast(), map.len(), libc::MADV_POPULATE_WRITE) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// What `populate_write`'s result means for the link: Ok(None) populated; Ok(Some(why)) not (or
/// not all of it), and the output is written without it, the pages faulting in as they are
/// written; Err: a page of the output cannot be backed (EFAULT: it would have raised SIGBUS, which
/// on our own file, sized and not truncated, is the file system running out of space).
fn populate_outcome(r: io::Result<()>) -> io::Result<Option<String>> {
    let Err(e) = r else { return Ok(None) };
    Ok(Some(match e.raw_os_error() {
        // Before Linux 5.14 the advice is unknown; later, mappings it cannot populate.
        Some(libc::EINVAL) => "the kernel does not know MADV_POPULATE_WRITE (EINVAL; Linux 5.14+)".into(),
        Some(libc::EFAULT) => return Err(e),
        // ENOMEM (the memory ran out first), EINTR, EHWPOISON: what was populated stays.
        _ => format!("MADV_POPULATE_WRITE failed: {e}"),
    }))
}

/// The error for a mapping that `populate_write` found the file system cannot back: the one a
/// reservation gives on a full disk, and what the SIGBUS guard reports when a write finds it.
fn no_space_at_populate(target: &Path, size: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::StorageFull,
        format!(
            "cannot write {}: no space left on device (needs {size} bytes: the file system could not back \
             every page of the output's mapping when it was populated)",
            target.display()
        ),
    )
}

/// Zeroes `buf` on every core: a reused file's old bytes, for a caller that expects zeros.
fn zero_parallel(buf: &mut [u8]) {
    const MIN: usize = 4 << 20;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(buf.len() / MIN).max(1);
    if threads == 1 {
        buf.fill(0);
        return;
    }
    let chunk = buf.len().div_ceil(threads);
    std::thread::scope(|s| {
        for part in buf.chunks_mut(chunk) {
            s.spawn(move || part.fill(0));
        }
    });
}

impl OutputFile {
    /// Creates a temp file beside `target` (same directory, so rename is atomic), reserves `size`
    /// bytes with fallocate (a full disk fails here, before any byte is written), and prepares the
    /// buffer for `mode`. `executable`: the final file gets mode 0777 & !umask, else 0666 & !umask.
    pub fn create(target: &Path, size: u64, mode: OutputMode, executable: bool) -> io::Result<OutputFile> {
        OutputFile::create_with(target, size, mode, executable, true)
    }

    /// `create`, choosing whether to reserve the space first. Without the reservation the output
    /// is written with write() (Heap), whose ENOSPC is an error, never a SIGBUS.
    pub fn create_with(
        target: &Path,
        size: u64,
        mode: OutputMode,
        executable: bool,
        reserve_space: bool,
    ) -> io::Result<OutputFile> {
        OutputFile::create_opts(target, size, &CreateOptions::plain(mode, executable, reserve_space))
    }

    /// `create` with every choice given: reservation, reuse of the previous output, and whether a
    /// mapping may go without a reservation (guarded against SIGBUS).
    pub fn create_opts(target: &Path, size: u64, opts: &CreateOptions) -> io::Result<OutputFile> {
        // `-o -`: the output goes to standard output, written in place like a device.
        let to_stdout = target == Path::new("-");
        if target.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("output path {} is a directory", target.display()),
            ));
        }
        // `metadata` follows a link: a link to a device is written through by the kernel's open (as
        // lld does); a link to a regular file, or a dangling one, is replaced by the rename.
        let in_place = to_stdout || std::fs::metadata(target).is_ok_and(|m| !m.is_file() && !m.is_dir());
        let mut reuse = ReuseOutcome::default();
        let mut taken = None;
        if in_place {
            reuse.reason = "the output is not a regular file".into();
        } else if opts.reuse {
            match try_reuse(target, size, opts.reserve_space) {
                Ok(t) => taken = Some(t),
                Err(NotTaken::Fresh(why)) => reuse.reason = why,
                Err(NotTaken::Fail(e)) => return Err(e),
            }
        }
        let mut stale = 0;
        let mut pre_reserved = None;
        let (temp, file) = if let Some(t) = taken {
            reuse = ReuseOutcome { reused: true, reason: "a regular file with one link, ours, not running".into() };
            stale = t.old_len.min(size);
            pre_reserved = Some(t.reserved);
            (t.temp, Some(t.file))
        } else if in_place {
            (PathBuf::new(), None)
        } else {
            let temp = temp_path(target);
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temp)
                .map_err(|e| context(e, "create output file", target))?;
            (temp, Some(f))
        };
        let mut out = OutputFile {
            target: target.to_path_buf(),
            in_place,
            to_stdout,
            temp,
            file,
            buffer: Buffer::Heap(Vec::new()),
            mode: opts.mode,
            executable: opts.executable,
            reserved: false,
            note: None,
            committed: false,
            written_except: None,
            size,
            populated: Populated::NotAsked,
            huge_pages: None,
            exiting: true,
            reuse,
            stale,
        };
        // From here on, an error drops `out`, which removes the temp file.
        out.prepare(size, opts, pre_reserved)?;
        Ok(out)
    }

    /// Sizes and reserves the temp file (`pre_reserved`: a reused file, already sized, and whether
    /// its space was reserved) and prepares the buffer.
    fn prepare(&mut self, size: u64, opts: &CreateOptions, pre_reserved: Option<bool>) -> io::Result<()> {
        // Until a mapping is made and populated below (not for an output written in place, nor a
        // heap buffer).
        self.populated = if opts.populate { Populated::NotMapped } else { Populated::NotAsked };
        if self.in_place {
            // Written in place (a device, a pipe, standard output): there is no file to write
            // behind into (a pipe cannot be written out of order), so the whole output is built
            // in memory and written at commit. When it cannot fit in the memory left (a cgroup's
            // limit included), allocating it would get the link killed: refused before it is.
            let mem = fsinfo::memory();
            if size > mem.effective_available() {
                return Err(io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    format!(
                        "{}: the output ({}) is written in place (not a regular file), so it is held in memory \
                         whole, but only {} of memory are available{}",
                        self.target.display(),
                        crate::units::human(size),
                        crate::units::human(mem.effective_available()),
                        if mem.cgroup_limit.is_some() { " under the memory cgroup's limit" } else { "" }
                    ),
                ));
            }
            self.mode = OutputMode::Heap;
            self.note = Some("the output is not a regular file: written in place".into());
            self.buffer = Buffer::Heap(Vec::new());
            self.committed = true; // nothing to remove on failure
            return Ok(());
        }
        let file = self.file.as_ref().unwrap();
        if pre_reserved.is_none() {
            file.set_len(size).map_err(|e| context(e, "size output file", &self.target))?;
        }
        let unreserved_map = !opts.reserve_space && opts.map_unreserved && self.mode == OutputMode::Mmap;
        if !opts.reserve_space && !unreserved_map {
            self.mode = OutputMode::Heap;
            self.buffer = Buffer::Heap(Vec::new());
            return Ok(());
        }
        if unreserved_map {
            // Nothing reserved: the file system's free space must at least hold the output, or a
            // page fault would be the first to learn that it does not (write() says ENOSPC).
            let free = free_bytes(file).unwrap_or(0).saturating_add(self.stale);
            if free < size {
                self.mode = OutputMode::Heap;
                self.note = Some(format!("mmap refused: {free} bytes free for a {size}-byte output"));
            }
        } else {
            self.reserved = match pre_reserved {
                Some(r) => r,
                None => reserve(file, size).map_err(|e| no_space(&self.target, size, e))?,
            };
            if self.mode == OutputMode::Mmap && !self.reserved {
                // Writing through a mapping into space that was never reserved turns a full disk into
                // SIGBUS; a buffer written with write() turns it into an error.
                self.mode = OutputMode::Heap;
                self.note = Some("mmap refused: the file system cannot reserve space (fallocate unsupported)".into());
            }
        }
        if self.mode == OutputMode::Mmap && size == 0 {
            self.mode = OutputMode::Heap;
            self.note = Some("empty output: nothing to map".into());
        }
        self.buffer = match self.mode {
            OutputMode::Mmap => {
                // SAFETY: the temp file is ours alone (created with O_EXCL, or the previous output
                // renamed to our temp name); its size is set and either reserved, so page faults
                // cannot hit ENOSPC, or guarded below. Nobody truncates it while mapped.
                let m = unsafe { MmapMut::map_mut(file) }.map_err(|e| context(e, "map output file", &self.target))?;
                if unreserved_map {
                    guard_mapping(&m, &self.temp, &self.target);
                }
                // A reused file still holds its old bytes (`stale`): zeroed by the first `buf`, or
                // overwritten by the caller of `buf_unzeroed`; not here, as a pass of its own.
                Buffer::Map(m)
            }
            // Allocated by the first `buf()`: write-behind never needs the whole output in memory.
            // Every byte is written (the buffer, or write-behind's windows that tile the file), so a
            // reused file's old bytes need no zeroing.
            OutputMode::Heap => Buffer::Heap(Vec::new()),
        };
        if let (true, Buffer::Map(m)) = (opts.huge_pages, &self.buffer) {
            // Before populating: the pages it faults in come as large folios then too.
            self.huge_pages = Some(m.advise(memmap2::Advice::HugePage).map_err(|e| e.to_string()));
        }
        if let (true, Buffer::Map(m)) = (opts.populate, &mut self.buffer) {
            // After the mapping is in `self.buffer`: an error drops `self`, which unguards it.
            let start = Instant::now();
            self.populated = match populate_outcome(populate_write(m)) {
                Ok(None) => Populated::Done(start.elapsed()),
                Ok(Some(why)) => Populated::Skipped(why),
                Err(_) => return Err(no_space_at_populate(&self.target, size)),
            };
        }
        Ok(())
    }

    /// Whether the mapping was pre-faulted for writing at create, and how long that took.
    pub fn populated(&self) -> &Populated {
        &self.populated
    }

    /// Whether the mapping was advised to use huge pages (None: not asked, or nothing mapped) and
    /// whether the kernel took the advice.
    pub fn huge_pages(&self) -> Option<&Result<(), String>> {
        self.huge_pages.as_ref()
    }

    /// Whether the previous output was rewritten in place, and why or why not ("" when reuse was
    /// not asked for).
    pub fn reuse(&self) -> &ReuseOutcome {
        &self.reuse
    }

    /// For callers that link many times in one process: `commit` frees the output buffer and the
    /// replaced output itself instead of leaving them to process exit (and to a child process that
    /// such a caller would never reap).
    pub fn caller_keeps_running(&mut self) {
        self.exiting = false;
    }

    pub fn mode(&self) -> OutputMode {
        self.mode
    }

    /// Why the mode differs from the one asked for, if it does.
    pub fn mode_note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// True when fallocate reserved the space.
    pub fn space_reserved(&self) -> bool {
        self.reserved
    }

    /// The temp file the output is being built in (None when written in place).
    pub fn file(&self) -> Option<&File> {
        self.file.as_ref()
    }

    /// The whole output, zero-filled at first (in Heap mode, allocated by the first call; a reused
    /// file's old bytes in the mapping are zeroed by the first call, unless `buf_unzeroed` handed
    /// them out before).
    pub fn buf(&mut self) -> &mut [u8] {
        let (buf, stale) = self.buf_unzeroed();
        zero_parallel(&mut buf[..stale]);
        buf
    }

    /// The whole output as `buf` gives it, but without zeroing a reused file's old bytes: returns
    /// how many leading bytes still hold them (0 unless a reused file is mapped). The caller takes
    /// them over and must write every one of them (a linker that writes every byte of its output
    /// anyway saves a pass over the file); later calls of `buf` and this return 0 and zero nothing.
    pub fn buf_unzeroed(&mut self) -> (&mut [u8], usize) {
        let (buf, stale, _) = self.buf_unzeroed_releasable();
        (buf, stale)
    }

    /// `buf_unzeroed`, and for a mapped output (Mmap mode) what can take the page-table entries of
    /// its finished parts out while the rest is filled (`Unmapper`).
    pub fn buf_unzeroed_releasable(&mut self) -> (&mut [u8], usize, Option<Unmapper<'_>>) {
        let stale = std::mem::take(&mut self.stale) as usize;
        match &mut self.buffer {
            Buffer::Map(m) => {
                let unmapper = Unmapper { base: m.as_ptr() as usize, len: m.len(), _map: std::marker::PhantomData };
                (&mut m[..], stale, Some(unmapper))
            }
            Buffer::Heap(v) => {
                if v.len() as u64 != self.size {
                    *v = vec![0u8; self.size as usize];
                }
                (&mut v[..], 0, None)
            }
        }
    }

    /// Heap mode: the file, so finished regions can be written (`pwrite`) while later ones are still
    /// being filled in buffers of the caller's (write-behind); the whole-output buffer is then never
    /// allocated. None in Mmap mode and for outputs written in place.
    pub fn heap_file(&self) -> Option<&File> {
        match (&self.buffer, &self.file) {
            (Buffer::Heap(_), Some(f)) => Some(f),
            _ => None,
        }
    }

    /// Overwrites `bytes` at `offset` of the finished output, before `commit`: in the mapping or
    /// buffer, or in the file when write-behind has written the bytes already.
    pub fn patch(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        let end = offset as usize + bytes.len();
        match (&self.buffer, &self.file, &self.written_except) {
            (Buffer::Heap(_), Some(f), Some(_)) => {
                f.write_all_at(bytes, offset).map_err(|e| context(e, "write", &self.target))?
            }
            _ => self.buf()[offset as usize..end].copy_from_slice(bytes),
        }
        Ok(())
    }

    /// Hands `f` the finished output's bytes in order, in pieces (read back from the file when
    /// write-behind has written them already, else from the mapping or buffer).
    pub fn read_back(&mut self, mut f: impl FnMut(&[u8])) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        if let (Buffer::Heap(_), Some(file), Some(_)) = (&self.buffer, &self.file, &self.written_except) {
            let mut piece = vec![0u8; WRITE_CHUNK];
            let mut at = 0;
            while at < self.size {
                let n = (self.size - at).min(WRITE_CHUNK as u64) as usize;
                file.read_exact_at(&mut piece[..n], at).map_err(|e| context(e, "read back", &self.target))?;
                f(&piece[..n]);
                at += n as u64;
            }
            return Ok(());
        }
        f(self.buf());
        Ok(())
    }

    /// Declares that every byte except the `pending` ranges was already written through
    /// `heap_file`; commit then writes only those ranges.
    pub fn set_written_except(&mut self, pending: Vec<(u64, u64)>) {
        self.written_except = Some(pending);
    }

    /// Writes (Heap) or unmaps (Mmap) the data, sets permissions and renames the temp file over the
    /// target. No fsync unless `fsync` is true.
    pub fn commit(mut self, fsync: bool) -> io::Result<CommitReport> {
        let mut report = CommitReport::default();
        let start = Instant::now();
        let buffer = std::mem::replace(&mut self.buffer, Buffer::Heap(Vec::new()));
        if self.in_place {
            let Buffer::Heap(v) = buffer else { unreachable!("in-place outputs are always Heap") };
            if self.to_stdout {
                let mut out = io::stdout().lock();
                out.write_all(&v).and_then(|()| out.flush()).map_err(|e| context(e, "write", &self.target))?;
            } else {
                let mut f =
                    OpenOptions::new().write(true).open(&self.target).map_err(|e| context(e, "open", &self.target))?;
                f.write_all(&v).map_err(|e| context(e, "write", &self.target))?;
                report.file = identity(&f);
            }
            report.bytes_written = v.len() as u64;
            report.write_time = start.elapsed();
            return Ok(report);
        }
        let mut file = self.file.take().unwrap();
        match buffer {
            Buffer::Map(m) => {
                report.bytes_written = m.len() as u64;
                unguard_mapping();
                drop(m); // munmap: the page cache holds the data; no msync, nobody asked for durability
            }
            Buffer::Heap(v) => {
                match self.written_except.take() {
                    Some(pending) => {
                        use std::os::unix::fs::FileExt;
                        for (off, len) in pending {
                            let range = &v[off as usize..(off + len) as usize];
                            file.write_all_at(range, off).map_err(|e| context(e, "write", &self.target))?;
                        }
                    }
                    None => {
                        for chunk in v.chunks(WRITE_CHUNK) {
                            file.write_all(chunk).map_err(|e| context(e, "write", &self.target))?;
                        }
                    }
                }
                report.bytes_written = v.len() as u64;
                if self.exiting {
                    std::mem::forget(v); // the process exits soon; freeing a big buffer only costs time
                }
            }
        }
        if fsync {
            file.sync_all().map_err(|e| context(e, "fsync", &self.target))?;
        }
        let mode = if self.executable { 0o777 } else { 0o666 } & !umask();
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| context(e, "set permissions of", &self.target))?;
        report.file = identity(&file);
        // Closed before the rename: the child that releases the replaced output copies our file
        // table, and must not hold the new output open for writing (exec would fail with ETXTBSY).
        drop(file);
        report.write_time = start.elapsed();
        let start = Instant::now();
        let old = hold_old_target(&self.target);
        // The path itself is replaced atomically: a symbolic link there gives way to the new file
        // and the file it pointed to is untouched. A hard-linked output gets a new inode at this
        // path; the other names keep the old contents (GNU ld unlinks the path and does the same).
        std::fs::rename(&self.temp, &self.target).map_err(|e| context(e, "rename output to", &self.target))?;
        self.committed = true;
        if let Some(old) = old {
            if self.exiting {
                release_in_background(old);
            }
        }
        report.rename_time = start.elapsed();
        Ok(report)
    }
}

/// A file's device and inode.
fn identity(f: &File) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    f.metadata().ok().map(|m| (m.dev(), m.ino()))
}

/// An existing output that the rename will replace, held open so that the rename does not free
/// its blocks on the spot: renaming over a 1 GiB file took 235 ms on this machine's ext4 (the inode
/// is evicted inside rename), 0.03 ms with the old file held open (a standalone test, 228bb48);
/// docs/ARCHITECTURE.md records 11.7–14.8 s for a fragmented 2 GB file on compressed btrfs. Only a
/// plain file with one link qualifies.
fn hold_old_target(target: &Path) -> Option<File> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(target).ok()?;
    if !meta.file_type().is_file() || meta.nlink() != 1 {
        return None;
    }
    File::open(target).ok()
}

/// Drops the last reference to the replaced output in a child process, so freeing its blocks
/// happens there while this process exits. The child shares our memory (`CLONE_VM`: no page tables
/// to copy, which a plain fork of a process holding a 478 MB output buffer paid ~28 ms for, as
/// much as the rename: `--print-timing` of a `gcc -static` link, 228bb48) but has its own copy of
/// the file table. It waits until we have closed our copies (its pipe reaches EOF), so its close
/// of the old file is the last one.
fn release_in_background(old: File) {
    const STACK: usize = 64 * 1024;
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills the two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return drop(old);
    }
    let args = Box::leak(Box::new([old.as_raw_fd(), fds[0], fds[1]]));
    // The child's stack: leaked, since the child may outlive every frame of ours.
    let stack = Box::leak(vec![0u8; STACK].into_boxed_slice());
    // SAFETY: the stack top is 16-byte aligned inside a leaked allocation; the child runs only
    // `release_child`, which calls async-signal-safe functions on copies of file descriptors and
    // never returns into Rust code of ours.
    let pid = unsafe {
        let top = stack.as_mut_ptr().add(STACK - 64) as usize & !15;
        libc::clone(
            release_child,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::SIGCHLD,
            args.as_mut_ptr() as *mut libc::c_void,
        )
    };
    // With the child running this is not the last reference; if clone failed, the old file's
    // blocks are freed here, synchronously, as a plain rename would have done.
    drop(old);
    if pid < 0 {
        // SAFETY: no child exists; close both pipe ends ourselves.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        return;
    }
    // SAFETY: closing the pipe ends we own; the child then sees EOF and closes the old file.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
}

extern "C" fn release_child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points at the leaked [old fd, pipe read end, pipe write end] array; the
    // descriptors are this child's own copies.
    unsafe {
        let fds = &*(arg as *const [i32; 3]);
        libc::close(fds[2]);
        let mut b = 0u8;
        libc::read(fds[1], &mut b as *mut u8 as *mut libc::c_void, 1);
        libc::close(fds[0]);
        libc::_exit(0)
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if !self.committed {
            if matches!(self.buffer, Buffer::Map(_)) {
                unguard_mapping();
            }
            self.buffer = Buffer::Heap(Vec::new());
            self.file = None;
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rivet-io-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    fn write_with(mode: OutputMode, path: &Path, data: &[u8], exe: bool) -> OutputMode {
        let mut out = OutputFile::create(path, data.len() as u64, mode, exe).unwrap();
        assert!(out.buf().iter().all(|&b| b == 0));
        out.buf().copy_from_slice(data);
        let m = out.mode();
        let r = out.commit(false).unwrap();
        assert_eq!(r.bytes_written, data.len() as u64);
        m
    }

    #[test]
    fn released_output_pages_leave_the_mapping_and_the_bytes_stay() {
        let d = tmpdir("unmapper");
        let data: Vec<u8> = (0..(1u32 << 20) + 100).map(|i| (i * 7 % 251) as u8).collect();
        let mut out = OutputFile::create(&d.join("o"), data.len() as u64, OutputMode::Mmap, false).unwrap();
        assert_eq!(out.mode(), OutputMode::Mmap);
        let (buf, _, unmapper) = out.buf_unzeroed_releasable();
        let unmapper = unmapper.expect("a mapped output can release its pages");
        buf.copy_from_slice(&data);
        let addr = buf.as_ptr() as usize;
        assert!(crate::input::tests::mapping_rss_kb(addr) >= 1024, "every page was written");
        // Two windows, the second to the end: every page goes, the last partial one too.
        unmapper.release(0, 1 << 19);
        unmapper.release(1 << 19, data.len() as u64);
        assert_eq!(crate::input::tests::mapping_rss_kb(addr), 0, "no page is left in the page tables");
        assert_eq!(&buf[..], &data[..], "the written bytes read back from the page cache");
        out.commit(false).unwrap();
        assert_eq!(std::fs::read(d.join("o")).unwrap(), data);
        let mut heap = OutputFile::create(&d.join("h"), 10, OutputMode::Heap, false).unwrap();
        assert!(heap.buf_unzeroed_releasable().2.is_none(), "a heap buffer's pages are never dropped");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn mmap_and_heap_write_the_same_bytes() {
        let d = tmpdir("same");
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        write_with(OutputMode::Mmap, &d.join("a"), &data, true);
        write_with(OutputMode::Heap, &d.join("b"), &data, true);
        assert_eq!(std::fs::read(d.join("a")).unwrap(), data);
        assert_eq!(std::fs::read(d.join("b")).unwrap(), data);
        assert_eq!(entries(&d), vec!["a", "b"]);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn replacing_a_large_output_keeps_nothing_behind() {
        let d = tmpdir("replace");
        std::fs::write(d.join("out"), vec![9u8; 32 << 20]).unwrap();
        std::fs::hard_link(d.join("out"), d.join("second-name")).unwrap();
        write_with(OutputMode::Heap, &d.join("out"), b"new", true);
        assert_eq!(std::fs::read(d.join("out")).unwrap(), b"new");
        assert_eq!(std::fs::read(d.join("second-name")).unwrap().len(), 32 << 20, "the other link keeps the old file");
        std::fs::write(d.join("single"), vec![9u8; 32 << 20]).unwrap();
        write_with(OutputMode::Mmap, &d.join("single"), b"newer", true);
        assert_eq!(std::fs::read(d.join("single")).unwrap(), b"newer");
        assert_eq!(entries(&d), vec!["out", "second-name", "single"]);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn write_behind_then_pending_ranges() {
        use std::os::unix::fs::FileExt;
        let d = tmpdir("behind");
        let mut out = OutputFile::create(&d.join("o"), 100, OutputMode::Heap, false).unwrap();
        let file = out.heap_file().unwrap();
        file.write_all_at(&[1u8; 50], 0).unwrap();
        file.write_all_at(&[1u8; 40], 60).unwrap();
        out.buf()[50..60].fill(2); // finished last: written at commit
        out.set_written_except(vec![(50, 10)]);
        out.commit(false).unwrap();
        let got = std::fs::read(d.join("o")).unwrap();
        assert_eq!(&got[..50], &[1u8; 50][..]);
        assert_eq!(&got[50..60], &[2u8; 10][..]);
        assert_eq!(&got[60..], &[1u8; 40][..]);
        let m = OutputFile::create(&d.join("m"), 10, OutputMode::Mmap, false).unwrap();
        assert!(m.heap_file().is_none());
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn permissions_follow_umask() {
        let d = tmpdir("perm");
        write_with(OutputMode::Heap, &d.join("exe"), b"x", true);
        write_with(OutputMode::Heap, &d.join("data"), b"x", false);
        let mode = |p: &str| std::fs::metadata(d.join(p)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode("exe"), 0o777 & !umask());
        assert_eq!(mode("data"), 0o666 & !umask());
        assert_eq!(mode("data") & 0o111, 0);
        std::fs::remove_dir_all(d).unwrap();
    }

    /// A symbolic link at the output path is replaced by the output and the file it points to is
    /// left alone, whatever the link (relative, absolute, a chain, dangling), the mode, and whether
    /// the previous output may be reused. Writing through the link would let anyone who can plant
    /// a link in a shared directory (`/tmp/a.out -> ~/notes`) have a link overwrite a file of the
    /// user's, and a dangling one create a file where it points; GNU ld and lld replace the link.
    #[test]
    fn symlinked_output_replaces_the_link_and_leaves_its_target() {
        use std::os::unix::fs::symlink;
        for mode in [OutputMode::Heap, OutputMode::Mmap] {
            for reuse in [false, true] {
                for kind in ["relative", "absolute", "chain", "dangling"] {
                    let what = format!("{mode:?}, reuse {reuse}, {kind} link");
                    let d = tmpdir(&format!("symlink-{mode:?}-{reuse}-{kind}"));
                    std::fs::create_dir_all(d.join("real")).unwrap();
                    // The previous output, an ELF file that reuse would rewrite in place.
                    std::fs::write(d.join("real/prog"), b"\x7fELF old").unwrap();
                    let before = ino(&d.join("real/prog"));
                    match kind {
                        "relative" => symlink("real/prog", d.join("out")).unwrap(),
                        "absolute" => symlink(d.join("real/prog"), d.join("out")).unwrap(),
                        "chain" => {
                            symlink("real/prog", d.join("middle")).unwrap();
                            symlink(d.join("middle"), d.join("out")).unwrap();
                        }
                        _ => symlink("real/fresh", d.join("out")).unwrap(),
                    }
                    let opts = CreateOptions { reuse, ..CreateOptions::plain(mode, true, true) };
                    let mut out = OutputFile::create_opts(&d.join("out"), 3, &opts).unwrap();
                    assert!(!out.reuse().reused, "{what}: a link's target was taken over");
                    out.buf().copy_from_slice(b"new");
                    out.commit(false).unwrap();
                    let meta = std::fs::symlink_metadata(d.join("out")).unwrap();
                    assert!(meta.file_type().is_file(), "{what}: the link is still there");
                    assert_eq!(std::fs::read(d.join("out")).unwrap(), b"new", "{what}");
                    assert_eq!(std::fs::read(d.join("real/prog")).unwrap(), b"\x7fELF old", "{what}: target written");
                    assert_eq!(ino(&d.join("real/prog")), before, "{what}: target replaced");
                    assert_eq!(entries(&d.join("real")), vec!["prog"], "{what}: a file was created beside the target");
                    let mut expected = vec!["out", "real"];
                    if kind == "chain" {
                        assert!(std::fs::symlink_metadata(d.join("middle")).unwrap().file_type().is_symlink());
                        expected.insert(0, "middle");
                    }
                    assert_eq!(entries(&d), expected, "{what}: temp files left");
                    std::fs::remove_dir_all(d).unwrap();
                }
            }
        }
    }

    #[test]
    fn hard_linked_output_gets_a_new_inode() {
        let d = tmpdir("hardlink");
        std::fs::write(d.join("out"), b"old").unwrap();
        std::fs::hard_link(d.join("out"), d.join("other")).unwrap();
        let mut out = OutputFile::create(&d.join("out"), 3, OutputMode::Mmap, true).unwrap();
        out.buf().copy_from_slice(b"new");
        out.commit(false).unwrap();
        assert_eq!(std::fs::read(d.join("out")).unwrap(), b"new");
        assert_eq!(std::fs::read(d.join("other")).unwrap(), b"old");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn device_output_is_written_in_place() {
        use std::os::unix::fs::FileTypeExt;
        let null = Path::new("/dev/null");
        if !std::fs::metadata(null).is_ok_and(|m| m.file_type().is_char_device()) {
            return;
        }
        let mut out = OutputFile::create(null, 4096, OutputMode::Mmap, true).unwrap();
        assert_eq!(out.mode(), OutputMode::Heap);
        out.buf()[0] = 1;
        out.commit(false).unwrap();
        assert!(std::fs::metadata(null).unwrap().file_type().is_char_device(), "/dev/null was replaced");
    }

    #[test]
    fn drop_without_commit_leaves_target_and_no_temp() {
        let d = tmpdir("drop");
        std::fs::write(d.join("out"), b"old contents").unwrap();
        let mut out = OutputFile::create(&d.join("out"), 5, OutputMode::Mmap, true).unwrap();
        out.buf().copy_from_slice(b"new!!");
        assert_eq!(entries(&d).len(), 2); // target + temp
        drop(out);
        assert_eq!(entries(&d), vec!["out"]);
        assert_eq!(std::fs::read(d.join("out")).unwrap(), b"old contents");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn bad_targets_are_errors_and_create_nothing() {
        let d = tmpdir("bad");
        let e = OutputFile::create(&d.join("missing/out"), 5, OutputMode::Heap, true).err().unwrap();
        assert!(e.to_string().contains("missing/out"), "{e}");
        std::fs::create_dir(d.join("dir")).unwrap();
        let e = OutputFile::create(&d.join("dir"), 5, OutputMode::Heap, true).err().unwrap();
        assert!(e.to_string().contains("is a directory"), "{e}");
        assert_eq!(entries(&d), vec!["dir"]);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn empty_output_works() {
        let d = tmpdir("empty");
        assert_eq!(write_with(OutputMode::Mmap, &d.join("e"), b"", false), OutputMode::Heap);
        assert_eq!(std::fs::read(d.join("e")).unwrap(), b"");
        std::fs::remove_dir_all(d).unwrap();
    }

    fn reusing(mode: OutputMode) -> CreateOptions {
        CreateOptions { reuse: true, ..CreateOptions::plain(mode, true, true) }
    }

    fn ino(p: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).unwrap().ino()
    }

    /// The previous output is rewritten in place (same inode), its old bytes never show through,
    /// and the result is what a new file gets, shrinking or growing, mapped or written.
    #[test]
    fn reused_output_is_the_same_file_with_new_bytes() {
        let d = tmpdir("reuse");
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for mode in [OutputMode::Mmap, OutputMode::Heap] {
            for old_len in [1_000_000usize, 996] {
                let p = d.join("out");
                std::fs::write(&p, [&b"\x7fELF"[..], &vec![0xeeu8; old_len]].concat()).unwrap();
                let before = ino(&p);
                let mut out = OutputFile::create_opts(&p, data.len() as u64, &reusing(mode)).unwrap();
                assert!(out.reuse().reused, "{:?}", out.reuse());
                assert!(!p.exists(), "the old file is under the temp name while the output is built");
                let buf = out.buf();
                assert!(buf.iter().all(|&b| b == 0), "{mode:?}: old bytes show through");
                buf[..1000].copy_from_slice(&data[..1000]); // the rest stays zero, as gaps do
                if mode == OutputMode::Heap {
                    buf.copy_from_slice(&data);
                }
                out.commit(false).unwrap();
                let got = std::fs::read(&p).unwrap();
                assert_eq!(got.len(), data.len());
                assert_eq!(ino(&p), before, "{mode:?} from {old_len}: not reused");
                if mode == OutputMode::Heap {
                    assert_eq!(got, data);
                } else {
                    assert_eq!(&got[..1000], &data[..1000]);
                    assert!(got[1000..].iter().all(|&b| b == 0));
                }
                assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o777 & !umask());
            }
        }
        assert_eq!(entries(&d), vec!["out"]);
        std::fs::remove_dir_all(d).unwrap();
    }

    /// `buf_unzeroed` hands a reused mapping's old bytes to the caller, who writes them all, instead
    /// of zeroing them (only those: the part a grown file gained is zero); a heap buffer has none.
    /// `buf` zeroes nothing after it.
    #[test]
    fn unzeroed_buffer_hands_over_the_old_bytes() {
        let d = tmpdir("unzeroed");
        let p = d.join("out");
        for (mode, old_len, stale) in
            [(OutputMode::Mmap, 9_996, 4_000), (OutputMode::Mmap, 996, 1_000), (OutputMode::Heap, 9_996, 0)]
        {
            let old = [&b"\x7fELF"[..], &vec![0xeeu8; old_len]].concat();
            std::fs::write(&p, &old).unwrap();
            let mut out = OutputFile::create_opts(&p, 4_000, &reusing(mode)).unwrap();
            assert!(out.reuse().reused, "{:?}", out.reuse());
            let (buf, n) = out.buf_unzeroed();
            assert_eq!(n, stale, "{mode:?} from {old_len}");
            assert_eq!(buf[..n], old[..n], "{mode:?}: the old bytes are handed over");
            assert!(buf[n..].iter().all(|&b| b == 0), "{mode:?}: the rest is zero");
            buf[..n].fill(7);
            assert!(out.buf()[..n].iter().all(|&b| b == 7), "{mode:?}: zeroed after they were handed over");
            assert_eq!(out.buf_unzeroed().1, 0);
            out.commit(false).unwrap();
            let got = std::fs::read(&p).unwrap();
            assert_eq!(got.len(), 4_000);
            assert!(got[..stale].iter().all(|&b| b == 7) && got[stale..].iter().all(|&b| b == 0), "{mode:?}");
        }
        std::fs::remove_dir_all(d).unwrap();
    }

    /// Files that must not be rewritten in place get a new file, and the report says why.
    #[test]
    fn unsafe_outputs_are_not_reused() {
        let d = tmpdir("noreuse");
        let opts = reusing(OutputMode::Mmap);
        std::fs::write(d.join("out"), b"old").unwrap();
        std::fs::hard_link(d.join("out"), d.join("other")).unwrap();
        let mut out = OutputFile::create_opts(&d.join("out"), 3, &opts).unwrap();
        assert!(!out.reuse().reused);
        assert!(out.reuse().reason.contains("2 links"), "{:?}", out.reuse());
        out.buf().copy_from_slice(b"new");
        out.commit(false).unwrap();
        assert_eq!(std::fs::read(d.join("other")).unwrap(), b"old", "the other name keeps the old contents");
        let out = OutputFile::create_opts(&d.join("fresh"), 3, &opts).unwrap();
        assert_eq!(out.reuse().reason, "no previous output");
        drop(out);
        std::fs::write(d.join("source.c"), b"int main;").unwrap();
        let out = OutputFile::create_opts(&d.join("source.c"), 3, &opts).unwrap();
        assert!(out.reuse().reason.contains("not an ELF file"), "{:?}", out.reuse());
        drop(out);
        assert_eq!(std::fs::read(d.join("source.c")).unwrap(), b"int main;", "kept when the link fails");
        std::fs::remove_file(d.join("source.c")).unwrap();
        let off = CreateOptions { reuse: false, ..opts };
        let out = OutputFile::create_opts(&d.join("out"), 3, &off).unwrap();
        assert_eq!(out.reuse(), &ReuseOutcome::default());
        drop(out);
        assert_eq!(std::fs::read(d.join("out")).unwrap(), b"new");
        assert_eq!(entries(&d), vec!["other", "out"]);
        std::fs::remove_dir_all(d).unwrap();
    }

    /// A link that fails after taking over the previous output leaves nothing at the path (the old
    /// bytes are being overwritten; a half-written file must not look like an output).
    #[test]
    fn failed_link_after_reuse_leaves_no_file() {
        let d = tmpdir("reusefail");
        std::fs::write(d.join("out"), b"\x7fELF old contents").unwrap();
        let mut out = OutputFile::create_opts(&d.join("out"), 5, &reusing(OutputMode::Mmap)).unwrap();
        assert!(out.reuse().reused);
        out.buf().copy_from_slice(b"half!");
        drop(out);
        assert_eq!(entries(&d), Vec::<String>::new());
        std::fs::remove_dir_all(d).unwrap();
    }

    /// A symbolic link at the path is never a previous output to reuse, even one to an ELF file of
    /// ours: reusing it would write through the link. The link is replaced and its target kept.
    #[test]
    fn symlinked_output_is_never_reused() {
        let d = tmpdir("reuselink");
        std::fs::create_dir_all(d.join("real")).unwrap();
        std::fs::write(d.join("real/prog"), b"\x7fELF old").unwrap();
        std::os::unix::fs::symlink("real/prog", d.join("prog")).unwrap();
        let before = ino(&d.join("real/prog"));
        let mut out = OutputFile::create_opts(&d.join("prog"), 3, &reusing(OutputMode::Mmap)).unwrap();
        assert!(!out.reuse().reused);
        assert!(out.reuse().reason.contains("symbolic link"), "{}", out.reuse().reason);
        out.buf().copy_from_slice(b"new");
        out.commit(false).unwrap();
        assert!(std::fs::symlink_metadata(d.join("prog")).unwrap().file_type().is_file());
        assert_eq!(std::fs::read(d.join("prog")).unwrap(), b"new");
        assert_eq!(std::fs::read(d.join("real/prog")).unwrap(), b"\x7fELF old");
        assert_eq!(ino(&d.join("real/prog")), before);
        std::fs::remove_dir_all(d).unwrap();
    }

    /// Where nothing may be reserved (a compressing file system), a mapping is still allowed when
    /// the free space holds the output, else it falls back to write().
    #[test]
    fn unreserved_mapping_checks_free_space() {
        let d = tmpdir("unreserved");
        let opts = CreateOptions { map_unreserved: true, ..CreateOptions::plain(OutputMode::Mmap, false, false) };
        let mut out = OutputFile::create_opts(&d.join("o"), 4096, &opts).unwrap();
        assert_eq!(out.mode(), OutputMode::Mmap);
        assert!(!out.space_reserved());
        out.buf()[0] = 1;
        out.commit(false).unwrap();
        let free = free_bytes(&File::open(&d).unwrap()).unwrap();
        let out = OutputFile::create_opts(&d.join("huge"), free + (1 << 30), &opts).unwrap();
        assert_eq!(out.mode(), OutputMode::Heap, "more than the disk holds: written, not mapped");
        assert!(out.mode_note().unwrap().contains("bytes free"), "{:?}", out.mode_note());
        drop(out);
        assert_eq!(entries(&d), vec!["o"]);
        std::fs::remove_dir_all(d).unwrap();
    }

    /// Mounts a 1 MiB tmpfs at `d`, for the full-disk tests; false (the test skipped, said on
    /// stderr) where mounting is not allowed.
    fn mount_small_tmpfs(d: &Path) -> bool {
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(d)
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("skipped: cannot mount a small tmpfs here (not root?)");
        }
        mounted
    }

    /// A full disk is found at create (fallocate), not by SIGBUS while writing.
    #[test]
    fn full_disk_fails_at_create() {
        let d = tmpdir("full");
        if !mount_small_tmpfs(&d) {
            return;
        }
        std::fs::write(d.join("out"), b"old").unwrap();
        let r = OutputFile::create(&d.join("out"), 4 << 20, OutputMode::Mmap, true);
        let listing = entries(&d);
        let old = std::fs::read(d.join("out")).unwrap();
        let _ = std::process::Command::new("umount").arg(&d).status();
        let e = r.err().expect("a 4 MiB output cannot fit in 1 MiB");
        assert!(e.to_string().contains("no space left"), "{e}");
        assert_eq!(listing, vec!["out"]);
        assert_eq!(old, b"old");
        std::fs::remove_dir_all(d).unwrap();
    }

    fn populating(mode: OutputMode, reuse: bool) -> CreateOptions {
        CreateOptions { populate: true, reuse, ..reusing(mode) }
    }

    /// A populated mapping holds what an unpopulated one does: zeros in a new file, the old bytes
    /// in a reused one (handed over by `buf_unzeroed`), and the file gets what is written; a heap
    /// output has nothing to populate.
    #[test]
    fn populated_mapping_keeps_its_bytes() {
        let d = tmpdir("populate");
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut out =
            OutputFile::create_opts(&d.join("new"), data.len() as u64, &populating(OutputMode::Mmap, false)).unwrap();
        assert!(matches!(out.populated(), Populated::Done(_)), "{:?}", out.populated());
        assert!(out.buf().iter().all(|&b| b == 0));
        out.buf().copy_from_slice(&data);
        out.commit(false).unwrap();
        assert_eq!(std::fs::read(d.join("new")).unwrap(), data);
        let old = [&b"\x7fELF"[..], &vec![0xeeu8; 99_996]].concat();
        std::fs::write(d.join("old"), &old).unwrap();
        let mut out =
            OutputFile::create_opts(&d.join("old"), data.len() as u64, &populating(OutputMode::Mmap, true)).unwrap();
        assert!(out.reuse().reused && matches!(out.populated(), Populated::Done(_)), "{:?}", out.populated());
        let (buf, stale) = out.buf_unzeroed();
        assert_eq!((stale, &buf[..stale]), (old.len(), &old[..]), "populating changed the old bytes");
        assert!(buf[stale..].iter().all(|&b| b == 0));
        buf.copy_from_slice(&data);
        out.commit(false).unwrap();
        assert_eq!(std::fs::read(d.join("old")).unwrap(), data);
        let out = OutputFile::create_opts(&d.join("heap"), 10, &populating(OutputMode::Heap, false)).unwrap();
        assert_eq!(out.populated(), &Populated::NotMapped);
        let null = OutputFile::create_opts(Path::new("/dev/null"), 10, &populating(OutputMode::Mmap, false)).unwrap();
        assert_eq!((null.mode(), null.populated()), (OutputMode::Heap, &Populated::NotMapped), "written in place");
        let out = OutputFile::create_opts(&d.join("plain"), 10, &reusing(OutputMode::Mmap)).unwrap();
        assert_eq!(out.populated(), &Populated::NotAsked);

        std::fs::remove_dir_all(d).unwrap();
    }

    /// A kernel without MADV_POPULATE_WRITE (EINVAL) or one that gives up (ENOMEM) only costs the
    /// link the faults; EFAULT, a page the file system cannot back, is an error.
    #[test]
    fn populate_errors() {
        let err = |n| Err(io::Error::from_raw_os_error(n));
        assert_eq!(populate_outcome(Ok(())).unwrap(), None);
        assert!(populate_outcome(err(libc::EINVAL)).unwrap().unwrap().contains("does not know MADV_POPULATE_WRITE"));
        assert!(populate_outcome(err(libc::ENOMEM)).unwrap().is_some());
        assert!(populate_outcome(err(libc::EFAULT)).is_err());
    }

    /// Where nothing is reserved, populating finds a full disk at create: a clear error (no
    /// SIGBUS), no file left. The free-space check is passed by a sparse previous output (its
    /// length counts as space it holds, its holes do not), on a 1 MiB tmpfs.
    #[test]
    fn full_disk_found_by_populating_an_unreserved_mapping() {
        let d = tmpdir("populatefull");
        if !mount_small_tmpfs(&d) {
            return;
        }
        let old = File::create(d.join("out")).unwrap();
        old.set_len(4 << 20).unwrap();
        (&old).write_all(b"\x7fELF").unwrap();
        drop(old);
        let opts = CreateOptions { reserve_space: false, map_unreserved: true, ..populating(OutputMode::Mmap, true) };
        let r = OutputFile::create_opts(&d.join("out"), 4 << 20, &opts).map(|o| (o.mode(), o.populated().clone()));
        let listing = entries(&d);
        let _ = std::process::Command::new("umount").arg(&d).status();
        let e = r.expect_err("4 MiB of pages cannot be backed by a 1 MiB tmpfs");
        assert!(e.to_string().contains("no space left on device"), "{e}");
        assert!(e.to_string().contains("/out"), "{e}");
        assert_eq!(listing, Vec::<String>::new(), "the taken-over output is gone, and no temp file is left");
        std::fs::remove_dir_all(d).unwrap();
    }
}
