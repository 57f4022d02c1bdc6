//! What a link did, for the reports `main` prints (`--print-timing`'s I/O block, `--stats`).
use crate::input::object::ObjectFile;
use crate::linked::Linked;
use crate::write;
use rivet_io::OutputMode;

/// What the link did, for the reports.
pub struct LinkReport {
    pub output_size: u64,
    pub mode: OutputMode,
    pub mode_reason: String,
    /// The previous output was rewritten in place (else a new file replaced it), and why.
    pub reused: bool,
    pub reuse_reason: String,
    /// What became of the output mapping: huge pages advised or not, pre-faulted for writing or
    /// not (and how long it took), each with why (`link_io::huge_pages_line`, `populate_line`).
    pub mapping: String,
    pub copy_method: rivet_io::CopyMethod,
    pub copy_reason: String,
    /// What the in-kernel copies did (zero with memcpy).
    pub copy: write::CopyStats,
    /// How the allocator was set up, and why.
    pub allocator_reason: String,
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
    /// `--incremental`: what the link did (up to date, or a full link and why) and whether it
    /// left a state for the next one.
    pub incremental: Option<String>,
    /// Nothing was written: `--incremental` found the output up to date.
    pub up_to_date: bool,
}

/// Counts for `--stats`, once the output is written.
pub fn link_stats(linked: &Linked) -> Vec<(&'static str, u64)> {
    let ctx = linked;
    let live = |o: &ObjectFile| o.sections.iter().filter(|s| s.live).count() as u64;
    let relocs = |o: &ObjectFile| o.sections.iter().filter(|s| s.live).map(|s| s.relas.len() as u64).sum::<u64>();
    vec![
        ("object files", ctx.objects.len() as u64),
        ("input sections kept", ctx.objects.iter().map(live).sum()),
        ("output sections", ctx.layout.emitted_count() as u64),
        ("global symbols", ctx.symbols.len() as u64),
        ("local symbols", ctx.objects.iter().map(|o| o.first_global as u64).sum()),
        ("relocations", ctx.objects.iter().map(relocs).sum()),
        ("GOT entries", ctx.plans.got.got.len() as u64),
        ("IFUNC PLT entries", ctx.plans.got.plt.len() as u64),
        ("RELATIVE relocations", ctx.plans.got.relative_count),
        ("merged input sections", ctx.merges.sections.len() as u64),
        ("sections folded (ICF)", ctx.objects.iter().flat_map(|o| &o.sections).filter(|s| s.folded()).count() as u64),
        ("bytes merged away", ctx.merges.saved),
    ]
}
