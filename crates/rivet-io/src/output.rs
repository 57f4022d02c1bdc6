//! The output file. The linker gets a zeroed `&mut [u8]` of the final size, fills it, and commits;
//! until commit the target path is untouched, and a dropped `OutputFile` removes its temp file.
use std::io;
use std::path::Path;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    /// Temp file, ftruncate + fallocate, mmap it, fill in place, unmap, rename over the target.
    Mmap,
    /// Fill an in-memory buffer, then write it sequentially into the temp file, rename.
    Heap,
}

pub struct OutputFile {}

/// What commit did and how long it took.
#[derive(Debug, Clone, Default)]
pub struct CommitReport {
    pub bytes_written: u64,
    pub write_time: Duration,
    pub rename_time: Duration,
}

impl OutputFile {
    /// Creates a temp file beside `target` (same directory, so rename is atomic), reserves `size`
    /// bytes with fallocate (a full disk fails here, before any byte is written), and prepares the
    /// buffer for `mode`. `executable`: the final file gets mode 0777 & !umask, else 0666 & !umask.
    pub fn create(target: &Path, size: u64, mode: OutputMode, executable: bool) -> io::Result<OutputFile> {
        todo!()
    }
    pub fn mode(&self) -> OutputMode {
        todo!()
    }
    /// The whole output, zero-filled at first.
    pub fn buf(&mut self) -> &mut [u8] {
        todo!()
    }
    /// Writes (Heap) or unmaps (Mmap) the data, sets permissions and renames the temp file over the
    /// target. No fsync unless `fsync` is true.
    pub fn commit(self, fsync: bool) -> io::Result<CommitReport> {
        todo!()
    }
}
