//! The automatic I/O choices (`--io-strategy=auto`, the default): how to build the output and
//! whether to read inputs ahead, from what the file system and memory look like. Explicit flags
//! always win. Each rule names the measurement that justifies it; the reason string goes into the
//! I/O report so a user can see why a link behaved as it did.
//!
//! The linker asks twice: `plan_inputs` before any input is opened (prefetch, and the memory as the
//! link found it), `plan_output` once the output's size is known (everything about the output).
use crate::copy::CopyMethod;
use crate::fsinfo::{self, FsInfo, MemInfo};
use crate::output::OutputMode;
use crate::units::human;
use std::path::Path;

/// The choices made before inputs are opened.
#[derive(Clone, Debug)]
pub struct InputPlan {
    pub prefetch: PrefetchChoice,
    /// The memory as the link found it, before its own working set was allocated.
    pub memory: MemInfo,
}

impl InputPlan {
    /// Whether to hand freed memory back to the system before the output's pages are dirtied,
    /// given the bytes of all inputs. The link's working set before the output (most of it string
    /// merging's pieces, hashes and shard tables) is freed by then but stays in the worker threads'
    /// malloc arenas. Under a memory cgroup that is what keeps the link from waiting for the
    /// disk: on a 30 MB/s disk in a 73 MiB cgroup, synth-1's write phase took 1.1-1.6 s while
    /// reclaim waited for writeback of its own output (bench/run.py, slow-disk scenario). It takes
    /// time of its own, so only when memory is tight: less than twice the inputs.
    pub fn release_memory_before_output(&self, input_bytes: u64) -> bool {
        self.memory.effective_available() < input_bytes.saturating_mul(2)
    }
}

/// Reads the memory and decides on prefetching (`explicit`: `--[no-]prefetch-inputs`).
pub fn plan_inputs(explicit: Option<bool>) -> InputPlan {
    let memory = fsinfo::memory();
    InputPlan { prefetch: choose_prefetch(explicit, &memory), memory }
}

/// Everything decided about the output, with the reasons the I/O report prints.
#[derive(Clone, Debug)]
pub struct IoPlan {
    /// Mmap or Heap, why, and whether to reserve the space first.
    pub output: OutputChoice,
    /// Write-behind paces itself to the device (waits for old windows' writeback and drops them
    /// from the cache).
    pub paced: bool,
    /// How sections that reach the output unchanged are copied, and why.
    pub copy: CopyChoice,
    /// Whether the previous output may be rewritten in place, and why.
    pub reuse: ReuseChoice,
    /// Whether the output mapping is pre-faulted for writing when it is created, and why.
    pub populate: PopulateChoice,
    /// Whether the output mapping asks for huge pages, and why.
    pub huge_pages: HugePagesChoice,
    /// The output directory's file system, as the report shows it ("unknown" when statfs failed).
    pub output_fs: String,
}

/// What the command line asks of the output: `--[no-]mmap-output-file` (`mmap`), `--copy-method`
/// (`copy`; None: auto), `--[no-]reuse-output` (`reuse`), `--[no-]populate-output` (`populate`),
/// and whether the output is a shared object (`shared`: running processes may have it mapped).
#[derive(Clone, Copy, Debug, Default)]
pub struct OutputRequest {
    pub mmap: Option<bool>,
    pub copy: Option<CopyMethod>,
    pub reuse: Option<bool>,
    pub populate: Option<bool>,
    pub shared: bool,
}

/// Decides how the output of `size` bytes at `output` is built: reads the file system of its
/// directory and the memory as it is now (with the link's own working set allocated, which counts
/// against a cgroup).
pub fn plan_output(inputs: &InputPlan, output: &Path, req: &OutputRequest, size: u64) -> IoPlan {
    let dir = match output.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let fs = fsinfo::for_path(dir).ok();
    let now = fsinfo::memory();
    decide_output(req, fs.as_ref(), &inputs.memory, &now, size)
}

/// `plan_output` once the facts are read: `mem` is the memory as the link found it, `now` as it is
/// when the output is created.
fn decide_output(req: &OutputRequest, fs: Option<&FsInfo>, mem: &MemInfo, now: &MemInfo, size: u64) -> IoPlan {
    let output = choose_output(req.mmap, fs, mem, now, size);
    IoPlan {
        populate: choose_populate(req.populate, &output, now, size),
        huge_pages: choose_huge_pages(&output),
        output,
        // Only when the output could not sit in memory twice over: under a cgroup limit that is
        // what keeps dirty pages from getting the link killed. The cgroup's file cache counts as
        // taken here (its dirty part is not reclaimable before writeback): counted as free, cxx-big
        // (51 MB output) wrote unpaced in a 112 MiB cgroup on a 30 MB/s disk and was OOM-killed.
        paced: size.saturating_mul(2) > mem.available_without_cache(),
        copy: choose_copy(req.copy, fs),
        reuse: choose_reuse(req.reuse, req.shared, fs),
        output_fs: fs.map_or_else(|| "unknown".into(), describe_fs),
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReuseChoice {
    /// Try to rewrite the previous output in place (the output file checks that it is safe).
    pub allowed: bool,
    pub reason: String,
}

/// Whether to rewrite the previous output in place (mold's method) rather than build a new file
/// and rename it over the old one. Writing into a new file costs 2.4-4x overwriting a cached one
/// in place (docs/ARCHITECTURE.md, I/O facts): the new file's pages are allocated and zeroed, its
/// blocks allocated, the old file's freed. The output file itself refuses a file that is not ours,
/// has other links or is running; here: a shared object may be mapped by running processes, which
/// would see it change under them (no ETXTBSY protects a mapped library), so only when asked; and
/// not on network file systems, where a program running on another machine gets no ETXTBSY here.
pub fn choose_reuse(explicit: Option<bool>, shared: bool, fs: Option<&FsInfo>) -> ReuseChoice {
    let pick = |allowed, reason: &str| ReuseChoice { allowed, reason: reason.to_string() };
    match explicit {
        Some(false) => pick(false, "--no-reuse-output"),
        Some(true) => pick(true, "--reuse-output"),
        None if shared => pick(false, "a shared object may be mapped by running processes (--reuse-output to allow)"),
        None if fs.is_some_and(|f| f.network || f.fuse) => {
            pick(false, "network/FUSE file system: a process running it elsewhere gets no ETXTBSY here")
        }
        None => pick(true, "auto"),
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HugePagesChoice {
    /// Advise the output mapping to be backed by huge pages (`MADV_HUGEPAGE`) once it is made.
    pub enabled: bool,
    pub reason: String,
}

/// Whether to ask for huge pages on the output mapping (`MADV_HUGEPAGE`): where the file system's
/// page cache can hold large folios (ext4, xfs, tmpfs with `huge=advise` on Linux 6.x), the write
/// jobs' first touches fault in 2 MiB at a time instead of 4 KiB, and the first-touch faults are
/// most of what writing through a mapping costs over the copying itself. `create output` +
/// `write`, with it over without (`python3 bench/phases.py 11 c-debug,rust-debug,cxx-big BASE NEW`,
/// medians, two runs for the commit that added this rule, on ext4): a reused output 0.71-0.77
/// (c-debug), 0.72-0.73 (rust-debug), 0.92-0.95 (cxx-big); a new file 0.68-0.70, 0.80-0.81,
/// 0.90-0.97; the whole link 0.89-0.90, 0.88-0.89, 0.94-0.97 reused. wild measured -8 to -36%
/// with the same advice on ext4. Advice only: a kernel or file
/// system that cannot do it maps small pages as before, and the bytes are the same either way.
/// Always on a mapping; a heap output has none.
pub fn choose_huge_pages(output: &OutputChoice) -> HugePagesChoice {
    if output.mode != OutputMode::Mmap {
        return HugePagesChoice { enabled: false, reason: "heap output: no mapping".into() };
    }
    HugePagesChoice { enabled: true, reason: "auto: fewer first-touch faults when writing through the mapping".into() }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PopulateChoice {
    /// Pre-fault the whole output mapping for writing (`MADV_POPULATE_WRITE`) when it is created;
    /// the output file goes on without where the kernel does not know it.
    pub enabled: bool,
    pub reason: String,
}

/// Whether to pre-fault the output mapping for writing in one call when it is created, rather
/// than page by page as the write jobs first touch it (most of what the `write` phase costs over
/// the zeroing pass it replaced is those first-touch faults). Off unless `--populate-output` asks:
/// it moves those faults into `create output`, onto one core, and was no faster here. `create
/// output` + `write` with it, over without (`python3 bench/phases.py 17
/// c-debug,rust-debug,cxx-big BASE "NEW --populate-output"`, medians; four runs of 15-17 rounds on
/// this shared 2-core machine, for the commit that added this rule): on a reused output 0.93-0.95
/// (c-debug), 0.86-0.95 (rust-debug), 0.99-1.07 (cxx-big); on a new file, whose pages populate
/// allocates and zeroes one after another where the write jobs do it on both cores, 1.00-1.08,
/// 0.96-1.04, 1.03-1.10. Whole links (`python3 bench/abbin.py 11
/// c-debug,rust-debug,cxx-big,synth-1 BASE NEW`): 0.92-1.03 with it, 0.90-1.09 for a binary doing
/// the very same work, so within the noise. Populating only reused outputs did not pay either
/// (1.00-1.14 after a first link that had not populated): populating a reused c-debug output took
/// 6.3 ms when its pages had been cached by the write jobs' faults, 4.6 ms by a populate, 1.2 ms
/// by `write()` (the page cache's folio sizes, presumably, fixed when the pages were cached).
///
/// Even when asked, not where it must not be done. It dirties every page of the output at once,
/// before the linker has written a byte of it, so not:
/// - without a mapping (heap output, write-behind): nothing to populate;
/// - where nothing was reserved (a compressing file system, `!output.reserve`): every page
///   faulted for writing at once makes the file system reserve delayed-allocation space for the
///   whole output, uncompressed, before writeback has compressed any of it; and that mapping is
///   only chosen there when memory is short (`choose_output`), where pages dirtied ahead of their
///   bytes get written back twice (a copy-on-write file system compressing both);
/// - when memory is tight: the output twice over (the threshold `paced` applies to write-behind)
///   does not fit in the memory left now, counting the file cache as taken. Dirty pages are not
///   reclaimable before writeback (and under cgroup v1 not throttled per group), so a whole
///   output dirtied at once could get the link killed, or be written back early, old bytes or
///   zeros first, then faulted again for its real ones.
pub fn choose_populate(explicit: Option<bool>, output: &OutputChoice, now: &MemInfo, size: u64) -> PopulateChoice {
    let pick = |enabled, reason: String| PopulateChoice { enabled, reason };
    let asked = match explicit {
        Some(false) => return pick(false, "--no-populate-output".into()),
        Some(true) => "--populate-output, but ",
        None => "",
    };
    if output.mode != OutputMode::Mmap {
        return pick(false, format!("{asked}heap output: no mapping to populate"));
    }
    if !output.reserve {
        return pick(
            false,
            format!("{asked}nothing reserved (compressing file system): pages are allocated as they are written"),
        );
    }
    let left = now.available_without_cache();
    if size.saturating_mul(2) > left {
        return pick(
            false,
            format!(
                "{asked}memory is tight: the output ({}) twice over does not fit in the {} left without the file cache",
                human(size),
                human(left)
            ),
        );
    }
    if explicit == Some(true) {
        return pick(true, "--populate-output".into());
    }
    pick(
        false,
        "auto: off (one populating call did not beat the write jobs' own faults on every core; \
         --populate-output to force)"
            .into(),
    )
}

/// "ext4 at /, 12.3 GiB free", "btrfs at /mnt, compressed, 1.0 GiB free".
pub fn describe_fs(f: &FsInfo) -> String {
    let mut s = format!("{} at {}", f.fs_type, f.mount_point.display());
    if let Some(why) = &f.compression {
        s.push_str(&format!(", compressed ({why})"));
    } else if f.compressed {
        s.push_str(", compressed");
    }
    s.push_str(&format!(", {} free", human(f.free_bytes)));
    s
}

#[derive(Clone, Debug)]
pub struct OutputChoice {
    pub mode: OutputMode,
    pub reason: String,
    /// Reserve the space with fallocate before writing (false only where preallocation hurts).
    pub reserve: bool,
}

/// Chooses Mmap or Heap for an output of `size` bytes going to the file system `fs`. `mem` is the
/// memory as the link found it; `now` as it is when the output is created, with the link's own
/// working set (symbols, layout) taken from it.
///
/// Where the file system compresses, nothing is preallocated, whatever the mode: btrfs stores
/// fallocated extents uncompressed (on compress-force=zstd, cxx-big's output took 100% of its size
/// on disk through either forced mode, which reserved, against 30% for lld's output:
/// docs/ARCHITECTURE.md, I/O facts). A full disk is then ENOSPC from write(), or, through a
/// mapping, a SIGBUS the output file turns into the same error (after checking the free space
/// first).
pub fn choose_output(
    explicit: Option<bool>,
    fs: Option<&FsInfo>,
    mem: &MemInfo,
    now: &MemInfo,
    size: u64,
) -> OutputChoice {
    let mut choice = choose_output_mode(explicit, fs, mem, now, size);
    if fs.is_some_and(|f| f.compressed) && choice.reserve {
        choice.reserve = false;
        choice.reason.push_str("; not preallocated, so the file system compresses it");
    }
    choice
}

fn choose_output_mode(
    explicit: Option<bool>,
    fs: Option<&FsInfo>,
    mem: &MemInfo,
    now: &MemInfo,
    size: u64,
) -> OutputChoice {
    let pick = |mode, reason: &str| OutputChoice { mode, reason: reason.to_string(), reserve: true };
    match explicit {
        Some(true) => return pick(OutputMode::Mmap, "--mmap-output-file"),
        Some(false) => return pick(OutputMode::Heap, "--no-mmap-output-file"),
        None => {}
    }
    let Some(fs) = fs else {
        return pick(OutputMode::Mmap, "file system unknown; mmap as lld and mold do by default");
    };
    if fs.network || fs.fuse {
        // mmapped outputs on NFS, VirtualBox shared folders and 9p/WSL have given SIGBUS,
        // zero-filled binaries or very slow links (lld, mold, wild issue trackers).
        return OutputChoice {
            mode: OutputMode::Heap,
            reason: format!("{} is a network/FUSE file system: write sequentially", fs.fs_type),
            reserve: true,
        };
    }
    let available = mem.effective_available();
    if size > available {
        // Measured on this machine kind (docs/ARCHITECTURE.md, I/O facts): a 2 GB output on compressed btrfs in a 1 GB memory cgroup took
        // 270-336 s through mmap (pages dirtied in random order, written back under pressure) and
        // 12-14 s as a buffer written once, sequentially (141 s vs 5-12 s on ext4). When the output
        // fits, mmap wins even on compressed btrfs: synth-2 (120 MB output, 166 MB cgroup,
        // compress-force=zstd) took 1.74 s with mmap and 4.6 s with write-behind (bench/run.py
        // --scenario compressed, 2026-11-22 16:58 at 064bfdf, in docs/benchmarks/history.jsonl).
        return OutputChoice {
            mode: OutputMode::Heap,
            reason: format!(
                "output ({}) is larger than the memory available ({}): write once, in order, with bounded memory",
                human(size),
                human(available)
            ),
            reserve: !fs.compressed,
        };
    }
    if fs.compressed && available >= size.saturating_mul(4) {
        // btrfs stores preallocated (fallocate) extents uncompressed: on compress-force=zstd,
        // synth-1's 45 MB output put 52 MB on the device through fallocate + mmap (lld, which
        // does not preallocate, 24 MB; bench/run.py --scenario compressed, 2026-11-23 01:59 at 33b6c12, in docs/benchmarks/history.jsonl). Written
        // with write() into unreserved space it compresses (c-debug 12 MB instead of 26, cxx-big
        // 22 instead of 55: bench/run.py --scenario compressed, 02:34 at 6a56642), and a full disk is a write error.
        // Only with memory to spare: without the reservation nothing paces the writes (an
        // unreserved write-behind in a cgroup of half the inputs + output was OOM-killed on
        // synth-1 while the policy still misread the cgroup limit); tight memory takes the
        // reserved, paced write-behind below.
        return OutputChoice {
            mode: OutputMode::Heap,
            reason: format!(
                "compressed {}: written with write() and no preallocation, so it is stored compressed",
                fs.fs_type
            ),
            reserve: false,
        };
    }
    let left = now.effective_available();
    if fs.compressed && size.saturating_add(size / 8) <= left {
        // Compressed btrfs, little memory to spare, but the output still fits beside what the link
        // holds now, with an eighth to spare for what the write allocates itself (cxx-big: 4 MiB
        // left over at this point were not enough, its mmap link hit the cgroup's limit and took
        // 0.70-0.78 s against 0.58-0.60 s written behind; synth-1 with 12 MiB over peaked at 60 of
        // 73 MiB: links in that cgroup at ae468ad, peaks from its `memory.max_usage_in_bytes`, as
        // recorded with 3251e8f): mmap. In a cgroup of half the inputs + output (2026-11-23,
        // bench/ab.py on compressed btrfs at ae468ad and 3251e8f, paired medians; docs/benchmarks/history.jsonl) mmap beat reserved
        // write-behind by 16% on synth-1, 15% on c-debug and 11% on rust-debug. It did not when
        // this rule was first measured (bench/run.py --scenario compressed, 02:40 at 4bdfafc: synth-1 write-behind 0.291
        // s vs mmap 0.479), before merging's freed memory went back to the kernel: synth-1 then
        // held 52 MB after merging, now 14, so its dirty output no longer had to be written back
        // (and compressed) under the cgroup's pressure.
        return OutputChoice {
            mode: OutputMode::Mmap,
            reason: format!(
                "compressed {}: the output ({}) fits in what is left now ({}): mmap",
                fs.fs_type,
                human(size),
                human(left)
            ),
            reserve: true,
        };
    }
    if fs.compressed {
        // Compressed btrfs and an output larger than what the link leaves: write-behind
        // (paced; unreserved since `choose_output` preallocates nothing where files are compressed). cxx-big in a 112 MiB cgroup (51 MB output, the link holding most of
        // the rest): write-behind 15% faster than mmap (bench/ab.py at 3251e8f);
        // earlier, synth-1 0.291 s vs 0.479 while it still held 52 MB (the 02:40 run).
        return OutputChoice {
            mode: OutputMode::Heap,
            reason: format!(
                "compressed {}: the output ({}) does not fit in what is left now ({}) with room for the write: write once, in order",
                fs.fs_type,
                human(size),
                human(left)
            ),
            reserve: true,
        };
    }
    if fs.tmpfs {
        return OutputChoice {
            mode: OutputMode::Mmap,
            reason: "tmpfs: the output lives in memory anyway; mmap avoids a copy".into(),
            reserve: true,
        };
    }
    // lld's --no-mmap-output-file cost +50% on ext4 for a 1.2 GB output (docs/ARCHITECTURE.md, I/O facts); here, warm
    // synth-8 (530 MB output) took 0.90 s with mmap and 1.08 s with write-behind (bench/run.py
    // --scenario scale, 2026-11-22 16:54 at 064bfdf, in docs/benchmarks/history.jsonl).
    let what = if fs.compressed { format!("compressed {}", fs.fs_type) } else { fs.fs_type.clone() };
    OutputChoice {
        mode: OutputMode::Mmap,
        reason: format!("{what}, output fits in memory ({} available): mmap", human(available)),
        reserve: true,
    }
}

#[derive(Clone, Debug)]
pub struct PrefetchChoice {
    pub enabled: bool,
    /// Stop asking for read-ahead once this many bytes were requested.
    pub budget: u64,
    pub reason: String,
}

/// Prefetching starts as soon as inputs are known; on cached ranges posix_fadvise only walks the
/// page cache, so warm links pay almost nothing. Inputs beyond half the available memory are not
/// prefetched: lld measured a slowdown when prefetched inputs do not fit in RAM.
pub fn choose_prefetch(explicit: Option<bool>, mem: &MemInfo) -> PrefetchChoice {
    let budget = mem.effective_available() / 2;
    match explicit {
        Some(true) => PrefetchChoice { enabled: true, budget: u64::MAX, reason: "--prefetch-inputs".into() },
        Some(false) => PrefetchChoice { enabled: false, budget: 0, reason: "--no-prefetch-inputs".into() },
        None => PrefetchChoice {
            enabled: true,
            budget,
            reason: format!("auto: posix_fadvise from a background thread once inputs are mapped, up to {} (half the available memory)", human(budget)),
        },
    }
}

/// Whether the allocator is set up for a short link (`memory::tune_allocator`), and why.
#[derive(Clone, Debug, Default)]
pub struct AllocatorChoice {
    pub tuned: bool,
    pub reason: String,
}

/// Tuned, glibc keeps the blocks a link frees for its next ones instead of a fresh zero-filled
/// `mmap` per large block: `bench/abbin.py` against the defaults, warm, 2 cores (2026-11-26):
/// c-debug 0.84-0.92x, cxx-big 0.93-0.97x, rust-debug 0.99x, synth-1 1.00x. What it keeps is
/// never given back, and that memory cannot be reclaimed: in the compressed scenario's memory
/// cgroup (half the inputs and output: 112 MiB for cxx-big's 176 MiB of inputs) the tuned link
/// of cxx-big was killed by the limit where the defaults link it. So only with memory to spare:
/// at least four times the inputs available (`input_bytes`, once they are open).
pub fn choose_allocator(mem: &MemInfo, input_bytes: u64) -> AllocatorChoice {
    let available = mem.effective_available();
    let needed = input_bytes.saturating_mul(4);
    if available < needed {
        return AllocatorChoice {
            tuned: false,
            reason: format!(
                "glibc defaults: {} available, under 4x the inputs ({}): freed blocks go back to the system",
                human(available),
                human(needed)
            ),
        };
    }
    AllocatorChoice {
        tuned: true,
        reason: format!(
            "tuned for a short link: freed blocks under {} MiB kept for reuse, heaps grown {} MiB at a time ({} available, at least 4x the inputs)",
            crate::memory::MMAP_THRESHOLD >> 20,
            crate::memory::TOP_PAD >> 20,
            human(available)
        ),
    }
}

#[derive(Clone, Debug)]
pub struct CopyChoice {
    pub method: CopyMethod,
    pub reason: String,
}

/// How sections that reach the output unchanged are copied. `explicit` is `--copy-method`'s value
/// (`auto` or absent: decide here).
pub fn choose_copy(explicit: Option<CopyMethod>, fs: Option<&FsInfo>) -> CopyChoice {
    use CopyMethod::*;
    let pick = |method, reason: &str| CopyChoice { method, reason: reason.to_string() };
    if let Some(method) = explicit {
        return pick(method, &format!("--copy-method={}", method.name()));
    }
    if fs.is_some_and(|f| f.network || f.fuse) {
        return pick(Memcpy, "auto: network/FUSE output: no in-kernel copies");
    }
    // Measured with the benchmark tool (docs/benchmarks, 2026-11-23, medians, 2 cores): warm, the
    // three methods are within noise of each other on synth-1, c-debug, rust-debug and cxx-big
    // (0.271-0.292 s on cxx-big, 0.080-0.091 s on c-debug); on the I/O-bound scenarios in-kernel
    // copies lose badly: synth-2 on compressed btrfs in a 143 MiB cgroup took 0.59 s with memcpy,
    // 0.67 s with sendfile, 0.84 s with copy_file_range; on the 30 MB/s slow disk 0.60 s, 3.6 s
    // and 2.9 s (the copies dirty page-cache pages the writeback throttle then waits on).
    pick(Memcpy, "auto: memcpy (in-kernel copies were no faster warm and up to 6x slower on slow or compressed disks)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs(t: &str) -> FsInfo {
        FsInfo { fs_type: t.into(), tmpfs: t == "tmpfs", network: t == "nfs", ..Default::default() }
    }

    fn req(mmap: Option<bool>, copy: Option<CopyMethod>) -> OutputRequest {
        OutputRequest { mmap, copy, ..Default::default() }
    }

    fn mem(gib: u64) -> MemInfo {
        MemInfo { total: gib << 30, available: gib << 30, cgroup_limit: None, cgroup_usage: None, cgroup_file_cache: 0 }
    }

    #[test]
    fn explicit_flags_win() {
        let c = choose_output(Some(true), Some(&fs("nfs")), &mem(16), &mem(16), 1 << 20);
        assert_eq!(c.mode, OutputMode::Mmap);
        let c = choose_output(Some(false), Some(&fs("tmpfs")), &mem(16), &mem(16), 1 << 20);
        assert_eq!(c.mode, OutputMode::Heap);
        assert!(!choose_prefetch(Some(false), &mem(16)).enabled);
    }

    #[test]
    fn the_allocator_is_tuned_only_with_memory_to_spare() {
        // 176 MiB of inputs (cxx-big): tuned with 16 GiB, not in a 112 MiB cgroup.
        let inputs = 176 << 20;
        let c = choose_allocator(&mem(16), inputs);
        assert!(c.tuned, "{}", c.reason);
        let cgroup = MemInfo { cgroup_limit: Some(112 << 20), cgroup_usage: Some(0), ..mem(16) };
        let c = choose_allocator(&cgroup, inputs);
        assert!(!c.tuned && c.reason.contains("under 4x the inputs"), "{}", c.reason);
        // The line is four times the inputs.
        let edge = MemInfo { available: 4 * inputs, ..mem(16) };
        assert!(choose_allocator(&edge, inputs).tuned);
        assert!(!choose_allocator(&MemInfo { available: 4 * inputs - 1, ..edge }, inputs).tuned);
    }

    #[test]
    fn file_system_rules() {
        assert_eq!(choose_output(None, Some(&fs("nfs")), &mem(16), &mem(16), 1 << 20).mode, OutputMode::Heap);
        let btrfs =
            FsInfo { compressed: true, compression: Some("mount option compress-force=zstd".into()), ..fs("btrfs") };
        let tight = MemInfo { cgroup_limit: Some(100 << 20), cgroup_usage: Some(0), ..mem(16) };
        let c = choose_output(None, Some(&btrfs), &tight, &tight, 45 << 20);
        assert_eq!(c.mode, OutputMode::Mmap, "tight memory, but the output fits beside the link: {}", c.reason);
        assert!(!c.reserve, "compressed: never preallocated");
        let held = MemInfo { cgroup_usage: Some(80 << 20), ..tight.clone() };
        let c = choose_output(None, Some(&btrfs), &tight, &held, 45 << 20);
        assert_eq!(
            (c.mode, c.reserve),
            (OutputMode::Heap, false),
            "the link holds most of the cgroup: reserved write-behind: {}",
            c.reason
        );
        let c = choose_output(None, Some(&fs("ext4")), &tight, &held, 45 << 20);
        assert_eq!(c.mode, OutputMode::Mmap, "only compressed file systems look at what is left now");
        let c = choose_output(None, Some(&btrfs), &mem(16), &mem(16), 1 << 20);
        assert_eq!(c.mode, OutputMode::Heap, "compressed btrfs: written, not mapped");
        assert!(!c.reserve, "no preallocation: preallocated extents are stored uncompressed");
        assert!(c.reason.contains("compressed btrfs"), "{}", c.reason);
        for forced in [Some(true), Some(false)] {
            let c = choose_output(forced, Some(&btrfs), &mem(16), &mem(16), 1 << 20);
            assert!(!c.reserve, "a forced mode is not preallocated either where the file system compresses");
            assert!(c.reason.ends_with("so the file system compresses it"), "{}", c.reason);
        }
        let big = choose_output(None, Some(&btrfs), &tight, &held, 1 << 30);
        assert_eq!((big.mode, big.reserve), (OutputMode::Heap, false), "{}", big.reason);
        assert!(choose_output(None, Some(&fs("ext4")), &mem(16), &mem(16), 1 << 20).reserve);
        assert_eq!(choose_output(None, Some(&fs("ext4")), &mem(16), &mem(16), 1 << 20).mode, OutputMode::Mmap);
        assert_eq!(choose_output(None, Some(&fs("tmpfs")), &mem(16), &mem(16), 1 << 20).mode, OutputMode::Mmap);
    }

    #[test]
    fn memory_pressure_means_sequential_writes() {
        let limited = MemInfo { cgroup_limit: Some(1 << 30), cgroup_usage: Some(0), ..mem(16) };
        assert_eq!(choose_output(None, Some(&fs("ext4")), &limited, &limited, 800 << 20).mode, OutputMode::Mmap);
        let c = choose_output(None, Some(&fs("ext4")), &limited, &limited, 2 << 30);
        assert_eq!(c.mode, OutputMode::Heap);
        assert!(c.reason.contains("larger than the memory available"), "{}", c.reason);
        assert_eq!(choose_prefetch(None, &limited).budget, 512 << 20);
    }

    #[test]
    fn plan_output_explicit_flags_win() {
        let p =
            decide_output(&req(Some(true), Some(CopyMethod::Sendfile)), Some(&fs("nfs")), &mem(16), &mem(16), 1 << 20);
        assert_eq!((p.output.mode, p.output.reason.as_str()), (OutputMode::Mmap, "--mmap-output-file"));
        assert_eq!((p.copy.method, p.copy.reason.as_str()), (CopyMethod::Sendfile, "--copy-method=sendfile"));
        let tmpfs = fs("tmpfs");
        let p = decide_output(
            &req(Some(false), Some(CopyMethod::CopyFileRange)),
            Some(&tmpfs),
            &mem(16),
            &mem(16),
            1 << 20,
        );
        assert_eq!((p.output.mode, p.output.reason.as_str()), (OutputMode::Heap, "--no-mmap-output-file"));
        assert_eq!(p.copy.reason, "--copy-method=copy-file-range");
        let p = decide_output(&req(None, None), Some(&tmpfs), &mem(16), &mem(16), 1 << 20);
        assert_eq!((p.output.mode, p.copy.method), (OutputMode::Mmap, CopyMethod::Memcpy));
    }

    #[test]
    fn plan_output_network_file_system_is_written_sequentially() {
        let nfs = FsInfo { mount_point: "/net/home".into(), free_bytes: 3 << 30, ..fs("nfs") };
        let p = decide_output(&req(None, None), Some(&nfs), &mem(16), &mem(16), 1 << 20);
        assert_eq!(p.output.mode, OutputMode::Heap);
        assert_eq!(p.output.reason, "nfs is a network/FUSE file system: write sequentially");
        assert!(p.output.reserve);
        assert_eq!(p.copy.method, CopyMethod::Memcpy);
        assert_eq!(p.copy.reason, "auto: network/FUSE output: no in-kernel copies");
        assert!(!p.paced);
        assert_eq!(p.output_fs, "nfs at /net/home, 3.0 GiB free");
    }

    #[test]
    fn plan_output_paces_when_the_output_twice_over_exceeds_memory_without_cache() {
        // 80 MiB free in the cgroup, 30 MiB of it not file cache.
        let m = MemInfo {
            cgroup_limit: Some(100 << 20),
            cgroup_usage: Some(20 << 20),
            cgroup_file_cache: 50 << 20,
            ..mem(16)
        };
        let ext4 = fs("ext4");
        assert!(!decide_output(&req(None, None), Some(&ext4), &m, &m, 15 << 20).paced, "30 MiB twice over fits");
        let p = decide_output(&req(None, None), Some(&ext4), &m, &m, (15 << 20) + 1);
        assert!(p.paced);
        assert_eq!(p.output.mode, OutputMode::Mmap, "the mode counts the file cache as free: {}", p.output.reason);
        assert!(decide_output(&req(Some(false), None), Some(&ext4), &m, &m, 40 << 20).paced, "explicit modes pace too");
        // Pacing looks at the memory as the link found it, not at what is left now.
        assert!(!decide_output(&req(None, None), Some(&ext4), &mem(16), &m, 40 << 20).paced);
        assert!(decide_output(&req(None, None), Some(&ext4), &m, &mem(16), 40 << 20).paced);
    }

    #[test]
    fn plan_output_without_file_system_facts() {
        let p = decide_output(&req(None, None), None, &mem(16), &mem(16), 1 << 20);
        assert_eq!(p.output.mode, OutputMode::Mmap);
        assert_eq!(p.output.reason, "file system unknown; mmap as lld and mold do by default");
        assert_eq!(p.output_fs, "unknown");
        assert_eq!(p.copy.method, CopyMethod::Memcpy);
        assert!(p.copy.reason.starts_with("auto: memcpy"), "{}", p.copy.reason);
    }

    #[test]
    fn describes_file_systems() {
        let btrfs = FsInfo { compressed: true, mount_point: "/mnt/b".into(), free_bytes: 1536, ..fs("btrfs") };
        assert_eq!(describe_fs(&btrfs), "btrfs at /mnt/b, compressed, 1.5 KiB free");
        let why = FsInfo { compression: Some("mount option compress=zstd".into()), ..btrfs };
        assert_eq!(describe_fs(&why), "btrfs at /mnt/b, compressed (mount option compress=zstd), 1.5 KiB free");
        let ext4 = FsInfo { mount_point: "/".into(), free_bytes: 100, ..fs("ext4") };
        assert_eq!(describe_fs(&ext4), "ext4 at /, 100 B free");
    }

    #[test]
    fn plans_read_the_machine() {
        let inputs = plan_inputs(Some(false));
        assert!(!inputs.prefetch.enabled);
        assert!(inputs.memory.total > 0);
        assert!(plan_inputs(None).prefetch.enabled);
        // A bare file name goes to the current directory, which exists.
        let p = plan_output(&inputs, Path::new("a.out"), &req(Some(false), None), 4096);
        assert_eq!(p.output.mode, OutputMode::Heap);
        assert_ne!(p.output_fs, "unknown");
        let p = plan_output(&inputs, Path::new("/proc/a.out"), &req(None, None), 4096);
        assert!(p.output_fs.starts_with("proc at /proc, "), "{}", p.output_fs);
        let p = plan_output(&inputs, Path::new("/nonexistent-rivet-dir/a.out"), &req(None, None), 4096);
        assert_eq!(p.output_fs, "unknown");
        assert_eq!(p.output.mode, OutputMode::Mmap);
    }

    #[test]
    fn reuse_rules() {
        let ext4 = fs("ext4");
        assert_eq!(choose_reuse(None, false, Some(&ext4)), ReuseChoice { allowed: true, reason: "auto".into() });
        assert!(!choose_reuse(None, true, Some(&ext4)).allowed, "a shared object may be mapped");
        assert!(choose_reuse(Some(true), true, Some(&ext4)).allowed, "unless the user asks");
        assert!(!choose_reuse(Some(false), false, Some(&ext4)).allowed);
        assert!(!choose_reuse(None, false, Some(&fs("nfs"))).allowed);
        assert!(choose_reuse(None, false, None).allowed);
        let p = decide_output(&OutputRequest { shared: true, ..req(None, None) }, Some(&ext4), &mem(16), &mem(16), 1);
        assert!(p.reuse.reason.contains("shared object"), "{}", p.reuse.reason);
    }

    #[test]
    fn huge_pages_on_every_mapping() {
        let ext4 = fs("ext4");
        let out = choose_output(None, Some(&ext4), &mem(16), &mem(16), 50 << 20);
        assert_eq!(out.mode, OutputMode::Mmap);
        assert!(choose_huge_pages(&out).enabled);
        let heap = choose_output(Some(false), Some(&ext4), &mem(16), &mem(16), 1 << 20);
        let c = choose_huge_pages(&heap);
        assert!(!c.enabled && c.reason.contains("no mapping"), "{c:?}");
        let plan = decide_output(&req(Some(false), None), Some(&ext4), &mem(16), &mem(16), 1 << 20);
        assert!(!plan.huge_pages.enabled, "decide_output asks for them only on a mapping");
        assert!(decide_output(&req(None, None), Some(&ext4), &mem(16), &mem(16), 50 << 20).huge_pages.enabled);
    }

    #[test]
    fn populate_rules() {
        let ext4 = fs("ext4");
        let btrfs = FsInfo { compressed: true, compression: Some("mount option compress=zstd".into()), ..fs("btrfs") };
        let mapped = |fs: &FsInfo, m: &MemInfo, size| choose_output(None, Some(fs), m, m, size);
        // Normal: a mapped output on ext4 with memory to spare. Off unless asked (measured), on
        // when asked.
        let out = mapped(&ext4, &mem(16), 50 << 20);
        assert_eq!(out.mode, OutputMode::Mmap);
        let c = choose_populate(None, &out, &mem(16), 50 << 20);
        assert!(!c.enabled && c.reason.starts_with("auto: off"), "{c:?}");
        let c = choose_populate(Some(true), &out, &mem(16), 50 << 20);
        assert_eq!(c, PopulateChoice { enabled: true, reason: "--populate-output".into() });
        // Compressed btrfs: mapped only when memory is short, and then unreserved: not populated,
        // even when asked.
        let short = MemInfo { cgroup_limit: Some(100 << 20), cgroup_usage: Some(0), ..mem(16) };
        let out = mapped(&btrfs, &short, 45 << 20);
        assert_eq!((out.mode, out.reserve), (OutputMode::Mmap, false), "{}", out.reason);
        for explicit in [None, Some(true)] {
            let c = choose_populate(explicit, &out, &mem(16), 45 << 20);
            assert!(!c.enabled && c.reason.contains("nothing reserved"), "{c:?}");
        }
        // Memory tight: the output twice over does not fit in what is left without the cache.
        let out = mapped(&ext4, &mem(16), 45 << 20);
        let tight = MemInfo {
            cgroup_limit: Some(200 << 20),
            cgroup_usage: Some(60 << 20),
            cgroup_file_cache: 60 << 20,
            ..mem(16)
        };
        let c = choose_populate(Some(true), &out, &tight, 45 << 20);
        assert!(!c.enabled && c.reason.starts_with("--populate-output, but memory is tight"), "{c:?}");
        assert!(choose_populate(Some(true), &out, &tight, 40 << 20).enabled, "80 MiB fit in 80 MiB");
        // Heap output: no mapping, whatever is asked.
        let heap = choose_output(Some(false), Some(&ext4), &mem(16), &mem(16), 1 << 20);
        for explicit in [None, Some(true)] {
            let c = choose_populate(explicit, &heap, &mem(16), 1 << 20);
            assert!(!c.enabled && c.reason.contains("no mapping"), "{c:?}");
        }
        assert_eq!(choose_populate(Some(false), &out, &mem(16), 1 << 20).reason, "--no-populate-output");
        // decide_output passes the request on and judges by the memory now, not as the link found it.
        let on = OutputRequest { populate: Some(true), ..req(None, None) };
        assert!(decide_output(&on, Some(&ext4), &mem(16), &mem(16), 45 << 20).populate.enabled);
        assert!(!decide_output(&on, Some(&ext4), &mem(16), &tight, 45 << 20).populate.enabled);
        assert!(!decide_output(&req(None, None), Some(&ext4), &mem(16), &mem(16), 45 << 20).populate.enabled);
    }
}
