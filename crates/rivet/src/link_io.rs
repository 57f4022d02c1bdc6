//! The link's I/O around the pipeline, with rivet-io's policy calls in one place: the input side
//! (cache, prefetch thread, the memory plan) decided before any input is opened, the output file
//! decided once its size is known, and the report of what both did.
use crate::args::Config;
use crate::diag::{Context, Result};
use crate::report::LinkReport;
use crate::timing::Timer;
use crate::write::{CopyStats, KernelCopy};
use rivet_io::output::{CreateOptions, Populated};
use rivet_io::policy::{InputPlan, IoPlan, OutputRequest};
use rivet_io::{CommitReport, InputCache, OutputFile, OutputMode, Prefetcher};

/// The input side: the I/O counters at the start, the input plan, the opened inputs and the
/// prefetch thread.
pub struct Inputs {
    start: rivet_io::stats::IoSnapshot,
    pub plan: InputPlan,
    /// How the allocator is set up, decided once the inputs are open.
    pub allocator: rivet_io::policy::AllocatorChoice,
    pub cache: InputCache,
    pub prefetcher: Option<Prefetcher>,
}

impl Inputs {
    /// Memory as the link finds it, and whether to prefetch: decided before any input is opened.
    /// The prefetch thread asks the kernel to read inputs ahead as soon as they are known.
    pub fn start(config: &Config) -> Inputs {
        let start = rivet_io::stats::snapshot();
        let plan = rivet_io::policy::plan_inputs(config.prefetch_inputs);
        let prefetch = &plan.prefetch;
        let mut prefetcher = prefetch.enabled.then(|| Prefetcher::start(prefetch.budget));
        // A caller that keeps running gets no thread of the link left behind.
        if let Some(p) = prefetcher.as_mut().filter(|_| config.free_memory) {
            p.join_on_drop();
        }
        Inputs { start, plan, allocator: Default::default(), cache: InputCache::new(), prefetcher }
    }

    /// Sets the allocator up for the rest of the link, from the memory available and the bytes
    /// of the inputs now open (before resolution, where most of the link's memory is allocated).
    pub fn tune_allocator(&mut self) {
        self.allocator = rivet_io::policy::choose_allocator(&self.plan.memory, self.cache.totals().0);
        if self.allocator.tuned && !rivet_io::memory::tune_allocator() {
            self.allocator = rivet_io::policy::AllocatorChoice {
                tuned: false,
                reason: "defaults (some at least): mallopt did not take every setting, or the C library is not glibc"
                    .into(),
            };
        }
    }

    /// Sends the prefetch thread what it has been told so far.
    pub fn flush_prefetch(&self) {
        if let Some(p) = &self.prefetcher {
            p.flush();
        }
    }

    /// Merging's working set is freed by now but stays in the threads' malloc arenas: given back
    /// when memory is short for the output.
    pub fn release_memory_before_output(&self, timer: &Timer) {
        if self.plan.release_memory_before_output(self.cache.totals().0) {
            timer.phase("release memory", rivet_io::fsinfo::release_free_memory);
        }
    }
}

/// The output side: the plan (mode, pacing, copy method) and the file, created at its final size.
pub struct Output {
    pub io: IoPlan,
    pub file: OutputFile,
    /// The mode the file got, and why (the plan's reason and what creating it found).
    mode: OutputMode,
    mode_reason: String,
    /// Whether the previous output was rewritten in place, and why or why not.
    reuse: (bool, String),
    /// What became of huge pages and pre-faulting for the mapping, for the report (`huge_pages_line`, `populate_line`).
    mapping: String,
}

impl Output {
    /// Mmap or a buffer written sequentially, paced or not, and how unchanged sections are copied:
    /// decided from the output's file system and memory, now that its size is known; then the
    /// file (a temp file beside the target). `--verbose` says what was chosen and why.
    pub fn create(config: &Config, inputs: &Inputs, size: u64, timer: &Timer) -> Result<Output> {
        Output::create_at(config, &config.output, inputs, size, timer, false)
    }

    /// `create` for the file at `path`; `debug_file`: the separate debug file (not executable,
    /// never rewritten in place: its old inode holds the lock waiters wait on).
    fn create_at(
        config: &Config,
        path: &std::path::Path,
        inputs: &Inputs,
        size: u64,
        timer: &Timer,
        debug_file: bool,
    ) -> Result<Output> {
        let req = OutputRequest {
            mmap: config.mmap_output,
            copy: config.copy_method,
            reuse: if debug_file { Some(false) } else { config.reuse_output },
            populate: config.populate_output,
            shared: config.shared,
        };
        let io = rivet_io::policy::plan_output(&inputs.plan, path, &req, size);
        if config.verbose {
            eprintln!("rivet: output mode {:?}: {}", io.output.mode, io.output.reason);
            eprintln!("rivet: prefetch: {}", inputs.plan.prefetch.reason);
        }
        let opts = CreateOptions {
            mode: io.output.mode,
            // A relocatable object is not a program: no execute bits (GNU ld's mode too); nor is a
            // debug file.
            executable: !config.relocatable && !debug_file,
            reserve_space: io.output.reserve,
            reuse: io.reuse.allowed,
            // Unreserved only where the file system compresses; the mapping is then guarded.
            map_unreserved: !io.output.reserve,
            populate: io.populate.enabled,
            huge_pages: io.huge_pages.enabled,
        };
        let mut file = timer.phase("create output", || OutputFile::create_opts(path, size, &opts))?;
        if config.free_memory {
            file.caller_keeps_running();
        }
        let mode_reason = match file.mode_note() {
            Some(note) => format!("{}; {note}", io.output.reason),
            None => io.output.reason.clone(),
        };
        let outcome = file.reuse();
        let reuse = match (io.reuse.allowed, outcome.reused) {
            (true, true) => (true, format!("{} ({})", outcome.reason, io.reuse.reason)),
            (true, false) => (false, outcome.reason.clone()),
            (false, _) => (false, io.reuse.reason.clone()),
        };
        let mapping = format!(
            "{}; {}",
            huge_pages_line(file.huge_pages(), &io.huge_pages.reason),
            populate_line(file.populated(), &io.populate.reason)
        );
        if config.verbose {
            eprintln!("rivet: copy method {}: {}", io.copy.method.name(), io.copy.reason);
            eprintln!("rivet: output file {}", reuse_line(reuse.0, &reuse.1));
            eprintln!("rivet: output mapping {mapping}");
        }
        Ok(Output { mode: file.mode(), mode_reason, io, file, reuse, mapping })
    }

    /// Sections that reach the output unchanged may be copied file to file by the kernel.
    pub fn kernel_copy(&self, inputs: &Inputs) -> Option<KernelCopy> {
        let method = self.io.copy.method;
        (method != rivet_io::CopyMethod::Memcpy).then(|| KernelCopy::new(method, inputs.cache.files()))
    }

    /// Renames the finished file into place.
    pub fn commit(self, config: &Config, timer: &Timer) -> Result<Committed> {
        let Output { io, file, mode, mode_reason, reuse, mapping } = self;
        let commit = timer
            .phase("commit", || file.commit(config.fsync))
            .with_context(|| format!("cannot write {}", config.output.display()))?;
        Ok(Committed { io, mode, mode_reason, reuse, mapping, commit })
    }
}

/// `--separate-debug-file`: the debug file (`linked` is the link seen through its layout), once the
/// output is in place. Its path is locked (`flock`) until it is complete, and its space reserved;
/// then, with `detach`, the waiting parent process exits with success and this process writes the
/// file alone (a failure after that point is reported on standard error, and no partial debug file
/// is left: the temp file goes, and so does the empty file the lock created). `build_id`: the
/// output's; `crc`: the CRC its `.gnu_debuglink` records.
#[allow(clippy::too_many_arguments)]
pub fn write_debug_file<A: crate::arch::Arch>(
    config: &Config,
    linked: &crate::linked::Linked,
    plan: Option<&crate::synthetic::symtab::Plan>,
    inputs: &Inputs,
    build_id: Option<&[u8]>,
    crc: u32,
    detach: Option<rivet_io::detach::Detached>,
    timer: &Timer,
) -> Result<()> {
    let path = config.debug_file_path().expect("called for --separate-debug-file");
    let size = linked.layout.file_size;
    let lock = rivet_io::detach::DebugFileLock::take(&path)
        .with_context(|| format!("cannot create separate debug file {}", path.display()))?;
    let result = (|| -> Result<()> {
        let mut out = Output::create_at(config, &path, inputs, size, timer, true)?;
        // The output is in place and the debug file's space is reserved: the build can go on.
        if let Some(d) = detach {
            d.release(0);
        }
        let paced = out.io.paced;
        timer.phase("write debug file", || {
            crate::write::write::<A>(linked, plan, &mut out.file, None, paced, build_id)
        })?;
        linked.diag.check()?;
        crate::synthetic::debug_file::seal(&mut out.file, size, crc)?;
        timer
            .phase("commit debug file", || out.file.commit(config.fsync))
            .with_context(|| format!("cannot write separate debug file {}", path.display()))?;
        Ok(())
    })();
    if result.is_err() && lock.created() {
        let _ = std::fs::remove_file(&path);
    }
    result
}

/// "reused in place: WHY" or "new file: WHY", for `--verbose` and the I/O report.
pub fn reuse_line(reused: bool, why: &str) -> String {
    format!("{}: {why}", if reused { "previous output reused in place" } else { "new file" })
}

/// "huge pages advised (WHY)" or "small pages: WHY", for `--verbose` and the I/O report: what
/// creating the output did with the policy's choice (`why`).
pub fn huge_pages_line(done: Option<&Result<(), String>>, why: &str) -> String {
    match done {
        Some(Ok(())) => format!("huge pages advised ({why})"),
        Some(Err(e)) => format!("small pages: the kernel refused MADV_HUGEPAGE: {e} ({why})"),
        None => format!("small pages: {why}"),
    }
}

/// "populated for writing in 1.234 ms (WHY)" or "not populated: WHY", for `--verbose` and the I/O
/// report: what creating the output did with the policy's choice (`why`).
pub fn populate_line(done: &Populated, why: &str) -> String {
    match done {
        Populated::Done(t) => format!("populated for writing in {:.3} ms ({why})", t.as_secs_f64() * 1000.0),
        Populated::NotAsked => format!("not populated: {why}"),
        Populated::NotMapped => format!("not populated: the output is not mapped ({why})"),
        Populated::Skipped(kernel) => format!("not populated: {kernel} ({why})"),
    }
}

/// The output once committed: what the report says of it.
pub struct Committed {
    io: IoPlan,
    mode: OutputMode,
    mode_reason: String,
    reuse: (bool, String),
    mapping: String,
    commit: CommitReport,
}

impl Committed {
    /// The file committed (device, inode); None for standard output.
    pub fn file(&self) -> Option<(u64, u64)> {
        self.commit.file
    }
}

/// What the link did, for the reports: the output's I/O and the inputs'. `counts`: (inputs
/// loaded, objects, `--stats` counts).
pub fn report(
    inputs: &Inputs,
    out: Committed,
    output_size: u64,
    copy: CopyStats,
    counts: (usize, usize, Vec<(&'static str, u64)>),
) -> LinkReport {
    let (n_inputs, objects, stats) = counts;
    LinkReport {
        output_size,
        mode: out.mode,
        mode_reason: out.mode_reason,
        reused: out.reuse.0,
        reuse_reason: out.reuse.1,
        mapping: out.mapping,
        copy_method: out.io.copy.method,
        copy_reason: out.io.copy.reason,
        copy,
        allocator_reason: inputs.allocator.reason.clone(),
        prefetch_reason: inputs.plan.prefetch.reason.clone(),
        prefetch: inputs.prefetcher.as_ref().map(|p| p.stats()),
        output_fs: out.io.output_fs,
        input_bytes: inputs.cache.totals(),
        io: rivet_io::stats::snapshot().delta(&inputs.start),
        commit: out.commit,
        inputs: n_inputs,
        objects,
        stats,
        incremental: None,
        up_to_date: false,
    }
}

/// What a link that did not write its output anew (`--incremental` found it up to date, or
/// `patched` it in place) did: it read its inputs' metadata, and some of their bytes. The
/// output's fields say so (the report prints none of them); the `incremental` line says what was
/// written.
pub fn up_to_date_report(
    inputs: &Inputs,
    output: &std::path::Path,
    n_inputs: usize,
    line: String,
    patched: bool,
) -> LinkReport {
    let size = std::fs::metadata(output).map_or(0, |m| m.len());
    let nothing = || match patched {
        true => "patched in place: the output was not written anew".to_string(),
        false => "nothing written: the output is up to date".to_string(),
    };
    LinkReport {
        output_size: size,
        mode: OutputMode::Heap,
        mode_reason: nothing(),
        reused: true,
        reuse_reason: nothing(),
        mapping: nothing(),
        copy_method: rivet_io::CopyMethod::Memcpy,
        copy_reason: nothing(),
        copy: Default::default(),
        allocator_reason: inputs.allocator.reason.clone(),
        prefetch_reason: inputs.plan.prefetch.reason.clone(),
        prefetch: inputs.prefetcher.as_ref().map(|p| p.stats()),
        output_fs: nothing(),
        input_bytes: inputs.cache.totals(),
        io: rivet_io::stats::snapshot().delta(&inputs.start),
        commit: Default::default(),
        inputs: n_inputs,
        objects: 0,
        stats: Vec::new(),
        incremental: Some(line),
        up_to_date: true,
    }
}

/// `--dependency-file=FILE`: a Makefile rule making the output depend on every file the link
/// read, and an empty rule per input so that a deleted input does not break `make` (the rule of
/// lld's file, written on one line as mold writes it; spaces and `#` escaped with `\\`, `$`
/// doubled).
/// `generated`: objects the link made itself (the LTO plugin's temporary outputs), which are no
/// dependency of the output.
pub fn write_dependency_file(config: &Config, inputs: &Inputs, generated: &[&std::path::Path]) -> Result<()> {
    let Some(path) = &config.dependency_file else { return Ok(()) };
    let quote = |p: &std::path::Path| {
        let mut out = String::new();
        for c in p.to_string_lossy().chars() {
            match c {
                ' ' | '#' => {
                    out.push('\\');
                    out.push(c);
                }
                '$' => out.push_str("$$"),
                c => out.push(c),
            }
        }
        out
    };
    let files: Vec<String> =
        inputs.cache.files().iter().filter(|f| !generated.contains(&f.path())).map(|f| quote(f.path())).collect();
    let mut text = format!("{}:", quote(&config.output));
    for f in &files {
        text.push(' ');
        text.push_str(f);
    }
    text.push('\n');
    for f in &files {
        text.push_str(&format!("\n{f}:\n"));
    }
    std::fs::write(path, text).with_context(|| format!("cannot write dependency file {}", path.display()))
}
