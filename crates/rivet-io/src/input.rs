//! Input files: mapped read-only (or read into memory when tiny or not a regular file), one open per
//! file even when it is named twice.
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Files smaller than this are read() rather than mapped: a mapping costs more than a copy for them.
pub const MAP_THRESHOLD: u64 = 16 * 1024;

/// One input file's bytes. The file descriptor stays open so later stages (copy_file_range) can use it.
pub struct InputFile {
    // (fields are the implementation's)
}

impl InputFile {
    /// Opens and maps (or reads) `path`.
    pub fn open(path: &Path) -> io::Result<InputFile> {
        todo!()
    }
    pub fn path(&self) -> &Path {
        todo!()
    }
    pub fn data(&self) -> &[u8] {
        todo!()
    }
    /// The open file, if it is a regular file (None for data read from a pipe).
    pub fn file(&self) -> Option<&std::fs::File> {
        todo!()
    }
    /// True when the bytes are a mapping of the file (false: read into memory).
    pub fn is_mapped(&self) -> bool {
        todo!()
    }
}

/// Opens every file once: a second `open` of the same file (same device and inode, whatever the path
/// spelling) returns the first `Arc`. Safe to share between threads.
#[derive(Default)]
pub struct InputCache {}

impl InputCache {
    pub fn new() -> InputCache {
        todo!()
    }
    pub fn open(&self, path: &Path) -> io::Result<Arc<InputFile>> {
        todo!()
    }
    /// Total bytes of all files opened so far, and of those mapped.
    pub fn totals(&self) -> (u64, u64) {
        todo!()
    }
    pub fn paths(&self) -> Vec<PathBuf> {
        todo!()
    }
}
