//! What a link did, for the reports `main` prints (`--print-timing`'s I/O block, `--stats`).
use crate::write;
use rivet_io::OutputMode;

/// What the link did, for the reports.
pub struct LinkReport {
    pub output_size: u64,
    pub mode: OutputMode,
    pub mode_reason: String,
    pub copy_method: rivet_io::CopyMethod,
    pub copy_reason: String,
    /// What the in-kernel copies did (zero with memcpy).
    pub copy: write::CopyStats,
    pub prefetch_reason: String,
    pub prefetch: Option<rivet_io::PrefetchStats>,
    /// The output directory's file system, as the report shows it.
    pub output_fs: String,
    /// (bytes of all inputs, bytes of them mapped).
    pub input_bytes: (u64, u64),
    /// I/O counters over the whole link.
    pub io: rivet_io::stats::IoSnapshot,
    pub commit: rivet_io::CommitReport,
    pub inputs: usize,
    pub objects: usize,
    /// `--stats`: (what, count) pairs.
    pub stats: Vec<(&'static str, u64)>,
}
