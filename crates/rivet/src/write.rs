//! Writing: takes the finished layout and fills the output buffer. The buffer is cut into disjoint
//! slices, one per input section or linker-made section, which are filled and relocated in
//! parallel without locks; what depends on everything else (`.rela.dyn`, the build-id) comes last.
//! Every byte of the output is written: a slice's job also zeroes the padding after it where a
//! reused output file still holds its old bytes, so that file is never zeroed in a pass of its own.
use crate::arch::endbr::EndbrRewrites;
use crate::arch::Arch;
use crate::ctx::{Ctx, OutputKind};
use crate::diag::{Context, Result};
use crate::fatal;
use crate::ids::{FileId, OutputSectionId, SectionRef};
use crate::layout::{Layout, EHDR_SIZE, PHDR_SIZE, SHDR_SIZE};
use crate::linked::Linked;
use crate::sections::eh_frame::PieceKind;
use crate::sections::output::Content;
use crate::synthetic::chunks::{self, Writing};
use crate::synthetic::{symtab, DynRel};
use object::elf;
use rayon::prelude::*;
use rivet_io::CopyMethod;

#[derive(Clone, Copy)]
enum Job {
    Input(FileId, u32),
    /// Bytes `from..from + piece size` of input section (f, s) (its output size, which
    /// `write_input_part` asks of `Ctx::member_size`, is not kept here, so that a piece takes 40
    /// bytes, not 48): an input section cut at a write-behind window boundary. Each part relocates
    /// the whole section into a scratch buffer and keeps its share (the first part also reports
    /// its dynamic relocations).
    Part(FileId, u32, u64),
    /// An input section that reaches the output unchanged, copied from its file by the kernel
    /// (`--copy-method`): the fill leaves its bytes alone. The piece covers the section's bytes from
    /// the third field on (write-behind splits a large section at window boundaries).
    Kernel(FileId, u32, u64),
    Synthetic(OutputSectionId),
    /// A group of range-extension thunks (its index in `Layout::thunks`).
    Thunk(u32),
    /// An area of erratum patches (its index in `Layout::thunks.patches`).
    Patch(u32),
    /// The bytes an output section of input sections starts with (`OutputSection::head`).
    Head(OutputSectionId),
    /// A linker script's data command: the value's low bytes (the piece's size).
    Bytes(u64),
    /// A gap of a section with a fill pattern: the 4-byte big-endian pattern and where in it the
    /// gap starts (its offset in the section modulo 4).
    Fill(u32, u8),
    /// The ELF header, and the program headers when they follow it.
    FileHeader,
    /// The program headers, where `--section-order` put them.
    ProgramHeaders,
    /// The section header table.
    SectionHeaders,
}

/// A piece of the output to fill: (file offset, size, what fills it).
type Piece = (u64, u64, Job);

// One for each input section of the output, held until the output is written.
const _: () = assert!(std::mem::size_of::<Piece>() == 40);
/// A write-behind window: (start, end, its pieces).
type Window = (u64, u64, Vec<Piece>);

/// Write-behind hands the writer thread windows of at least this many bytes: large sequential
/// writes, while the next window is being relocated.
const WINDOW: u64 = 8 << 20;
/// The window size when memory is tight (`paced`): fewer bytes in flight (about three windows
/// are alive at once: being filled, queued, being written).
const PACED_WINDOW: u64 = 2 << 20;
/// Windows end on build-id chunk boundaries (1 MiB, a multiple of every file-system block size),
/// so each window's chunks can be hashed on their own and every write but the last is aligned.
const BLOCK: u64 = chunks::BUILD_ID_CHUNK as u64;

/// Fills the output. Mmap mode: the whole mapping is filled in parallel and the kernel writes it
/// back. Heap mode (write-behind): the output is filled window by window in file order, each window
/// in a buffer of its own that a writer thread writes and frees while the next window is relocated;
/// memory stays bounded by a few windows whatever the output size, and every byte reaches the file
/// once, in order. Errors found while relocating are reported to `ctx.diag`; the caller checks it
/// before committing.
///
/// `build_id`: the build-id to write instead of hashing this file (the separate debug file takes
/// the output's). Returns what the copies did and the build-id written.
pub fn write<A: Arch>(
    ctx: &Linked,
    plan: Option<&symtab::Plan>,
    out: &mut rivet_io::OutputFile,
    kernel: Option<&KernelCopy>,
    paced: bool,
    build_id: Option<&[u8]>,
) -> Result<Written> {
    let kernel = kernel.filter(|k| k.method != CopyMethod::Memcpy && out.file().is_some());
    let jobs = collect_jobs(ctx, ctx.layout, &ctx.plans.endbr, kernel.is_some());
    let mut stats = CopyStats::default();
    if let Some(file) = out.heap_file() {
        let written = write_behind::<A>(ctx, plan, jobs, file, kernel, paced, build_id)?;
        out.set_written_except(Vec::new());
        return Ok(written);
    }
    // A reused output's old bytes are not zeroed first: the fill writes every one of them.
    if kernel.is_none() && build_id.is_none() && chunks::hashed(&ctx.config.build_id) {
        let (buf, stale, unmapper) = out.buf_unzeroed_releasable();
        let (buf, stale) = filled(ctx, (buf, stale));
        let digests = fill_hashing::<A>(ctx, plan, jobs, buf, stale, unmapper.as_ref())?;
        let build_id = patch_build_id(ctx, &digests, buf, 0, None)?;
        return Ok(Written { copy: stats, build_id, digests });
    }
    let copies: Vec<(u64, &[u8])> = jobs.iter().filter_map(|p| kernel_piece(ctx, p)).collect();
    let (buf, stale) = filled(ctx, out.buf_unzeroed());
    let dynrels = fill_parallel::<A>(ctx, plan, jobs.into_vec(), buf, stale, true)?;
    if let (Some(k), Some(file)) = (kernel, out.file()) {
        // The mapping and the file share the page cache: what the kernel copies shows in `buf`.
        k.run(&copies, file, &mut stats)?;
    }
    let buf = out.buf();
    finish_window::<A>(ctx, with_copies::<A>(ctx, dynrels), buf, 0)?;
    let digests = if build_id.is_some() { Vec::new() } else { chunks::chunk_digests(&ctx.config.build_id, buf) };
    let build_id = patch_build_id(ctx, &digests, buf, 0, build_id)?;
    Ok(Written { copy: stats, build_id, digests })
}

/// `--filler=BYTE`: the output buffer holds BYTE everywhere before it is filled, and all of it
/// counts as stale, so the jobs zero every byte of padding as they do a reused file's old bytes.
/// The output is then the same whatever BYTE is: a byte no job wrote would show as BYTE.
fn filled<'b>(ctx: &Linked, (buf, stale): (&'b mut [u8], usize)) -> (&'b mut [u8], usize) {
    match ctx.config.filler {
        Some(byte) => {
            buf.par_chunks_mut(1 << 20).for_each(|c| c.fill(byte));
            let n = buf.len();
            (buf, n)
        }
        None => (buf, stale),
    }
}

/// What `write` did: the in-kernel copies, and the build-id it wrote (if the output has one).
#[derive(Default)]
pub struct Written {
    pub copy: CopyStats,
    pub build_id: Option<Vec<u8>>,
    /// The digests of the output's build-id chunks, taken with the descriptor zeroed (empty when
    /// the build-id is not a hash of the file): `--incremental` keeps them to hash only the chunks
    /// a patch writes.
    pub digests: Vec<[u8; 32]>,
}

/// The output offset and input bytes of a `Job::Kernel` piece.
fn kernel_piece<'a>(ctx: &Ctx<'a>, piece: &Piece) -> Option<(u64, &'a [u8])> {
    match piece.2 {
        Job::Kernel(f, s, from) => {
            let data: &'a [u8] = ctx.objects[SectionRef::new(f, s)].data;
            Some((piece.0, &data[from as usize..(from + piece.1) as usize]))
        }
        _ => None,
    }
}

/// Input sections smaller than this are copied with memcpy whatever the method: a system call costs
/// about what copying 64 KiB through the cache does.
const MIN_KERNEL_COPY: u64 = 64 << 10;

/// The copies from one input file: (output offset, input offset, bytes).
type Batch<'a> = Vec<(u64, u64, &'a [u8])>;

/// In-kernel copies of input sections that reach the output unchanged (`--copy-method`).
pub struct KernelCopy {
    pub method: CopyMethod,
    /// Every input file by the address range of its bytes, to find where a section's bytes live.
    files: Vec<(usize, usize, std::sync::Arc<rivet_io::InputFile>)>,
}

/// What the in-kernel copies did, for the I/O report.
#[derive(Default, Debug, Clone)]
pub struct CopyStats {
    pub sections: u64,
    pub bytes: u64,
    /// Set when the kernel refused (another file system, an old kernel) and rivet wrote the bytes.
    pub fallback: Option<String>,
}

impl KernelCopy {
    pub fn new(method: CopyMethod, files: Vec<std::sync::Arc<rivet_io::InputFile>>) -> KernelCopy {
        let mut files: Vec<_> = files.into_iter().map(|f| (f.data().as_ptr() as usize, f.data().len(), f)).collect();
        files.sort_by_key(|f| f.0);
        KernelCopy { method, files }
    }

    /// The input file holding `data` and its offset there.
    fn source(&self, data: &[u8]) -> Option<(&rivet_io::InputFile, u64)> {
        let p = data.as_ptr() as usize;
        let i = self.files.partition_point(|f| f.0 <= p).checked_sub(1)?;
        let (start, len, file) = &self.files[i];
        (p + data.len() <= start + len).then(|| (&**file, (p - start) as u64))
    }

    /// Copies each (output offset, file, section) from its input file into `dst`; the sections of
    /// one input go in one batch (one open), batches in parallel for copy_file_range.
    fn run(&self, copies: &[(u64, &[u8])], dst: &std::fs::File, stats: &mut CopyStats) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let mut by_file: rustc_hash::FxHashMap<usize, Batch> = Default::default();
        for &(out_off, data) in copies {
            let Some((file, in_off)) = self.source(data) else {
                crate::bail!("internal error: bytes to copy at output offset {out_off:#x} are in no input file");
            };
            by_file.entry(file as *const _ as usize).or_default().push((out_off, in_off, data));
        }
        let batches: Vec<(&rivet_io::InputFile, Batch)> =
            by_file.into_values().map(|v| (self.source(v[0].2).unwrap().0, v)).collect();
        let one = |(file, list): &(&rivet_io::InputFile, Batch)| -> Result<(u64, Option<String>)> {
            let write_all = |why: Option<String>| -> Result<(u64, Option<String>)> {
                for (out_off, _, data) in list {
                    dst.write_all_at(data, *out_off).context("cannot write the output")?;
                }
                Ok((0, why))
            };
            let src = match std::fs::File::open(file.path()) {
                Ok(f) => f,
                Err(e) => return write_all(Some(format!("cannot reopen {}: {e}", file.path().display()))),
            };
            let mut done = 0;
            for (i, (out_off, in_off, data)) in list.iter().enumerate() {
                match rivet_io::copy::copy_range(self.method, &src, *in_off, dst, *out_off, data.len() as u64) {
                    Ok(()) => done += data.len() as u64,
                    Err(e) if rivet_io::copy::unsupported(&e) => {
                        for (out_off, _, data) in &list[i..] {
                            dst.write_all_at(data, *out_off).context("cannot write the output")?;
                        }
                        return Ok((
                            done,
                            Some(format!("{} refused ({e}); the bytes were written instead", self.method.name())),
                        ));
                    }
                    Err(e) => {
                        return Err(e).with_context(|| format!("cannot copy {} into the output", file.path().display()))
                    }
                }
            }
            Ok((done, None))
        };
        let results: Vec<_> = if self.method == CopyMethod::CopyFileRange {
            batches.par_iter().map(one).collect()
        } else {
            batches.iter().map(one).collect() // sendfile moves the output's file position
        };
        stats.sections += copies.len() as u64;
        for r in results {
            let (bytes, why) = r?;
            stats.bytes += bytes;
            if stats.fallback.is_none() {
                stats.fallback = why;
            }
        }
        Ok(())
    }
}

/// Ranges that are final only when everything else is: `.rela.dyn` (its entries come from every
/// section) and the build-id note (a hash of all other bytes).
fn late_ranges(ctx: &Linked) -> Vec<(u64, u64)> {
    [Content::RelaDyn, Content::BuildId].into_iter().filter_map(|c| ctx.synthetic_file_range(c)).collect()
}

/// The loader fills each copy relocation's space with the library's initial bytes.
fn with_copies<A: Arch>(ctx: &Linked, mut dynrels: Vec<DynRel>) -> Vec<DynRel> {
    for &id in &ctx.plans.got.copies {
        let offset = ctx.addr.global[id];
        dynrels.push(DynRel { offset, ty: A::R_COPY, sym: Some(id), addend: 0 });
    }
    dynrels
}

/// Writes `.rela.dyn` into `buf` if the section lies in it (`buf` starts at file offset `base`).
fn finish_window<A: Arch>(ctx: &Linked, dynrels: Vec<DynRel>, buf: &mut [u8], base: u64) -> Result<()> {
    match ctx.synthetic_file_range(Content::RelaDyn) {
        Some((offset, size)) => {
            let Some(start) = offset.checked_sub(base).filter(|&o| o + size <= buf.len() as u64) else {
                return Ok(());
            };
            chunks::write_rela_dyn::<A>(ctx, dynrels, &mut buf[start as usize..(start + size) as usize])
        }
        // The section is a stub in this file (the separate debug file): its entries are the output's.
        None if dynrels.is_empty() || ctx.layout.synthetic.get(Content::RelaDyn).is_some() => Ok(()),
        None => Err("internal error: dynamic relocations produced without a .rela.dyn section".into()),
    }
}

/// Puts the build-id (`fixed`, or made from every chunk's digest) into the note if it lies in
/// `buf`; returns it.
fn patch_build_id(
    ctx: &Linked,
    digests: &[[u8; 32]],
    buf: &mut [u8],
    base: u64,
    fixed: Option<&[u8]>,
) -> Result<Option<Vec<u8>>> {
    let Some((offset, size)) = ctx.synthetic_file_range(Content::BuildId) else { return Ok(None) };
    let Some(start) = offset.checked_sub(base).filter(|&o| o + size <= buf.len() as u64) else { return Ok(None) };
    let len = size as usize - 16;
    let desc = match fixed {
        Some(id) if id.len() == len => id.to_vec(),
        Some(id) => crate::bail!("internal error: a {}-byte build-id for a {len}-byte note", id.len()),
        None => chunks::build_id(&ctx.config.build_id, digests)?[..len].to_vec(),
    };
    let at = start as usize + 16;
    buf[at..at + len].copy_from_slice(&desc);
    Ok(Some(desc))
}

/// Splits the jobs into windows that tile the file: each at least WINDOW bytes, ending on a BLOCK
/// boundary. Input sections and in-kernel copies that cross the boundary are cut there (without
/// that, a run of contiguous sections crossing every boundary made one window of the whole file:
/// synth-1's write-behind held its whole 45 MB output, in massif); a linker-made section that
/// crosses it stays whole and the window grows to the next boundary after it.
///
/// A window also ends at the first boundary after each of the `late` ranges (`.rela.dyn`, the
/// build-id note), so the windows held back until the end are small.
///
/// The windows are cut as they are asked for, from pieces read as they are needed: the windows of
/// the whole file, cut up front, held a second copy of every piece (cxx-templates: 8.7 MB beside
/// the pieces' 12.7 MB, at the heap's peak).
fn windows<'a>(
    jobs: impl IntoIterator<Item = Piece> + 'a,
    file_size: u64,
    late: &'a [(u64, u64)],
    window: u64,
) -> impl Iterator<Item = Window> + 'a {
    let align = move |x: u64| (x.div_ceil(BLOCK) * BLOCK).min(file_size);
    let mut rest = jobs.into_iter();
    // The next piece: the rest of one cut at the last boundary, or the next of `rest`.
    let mut next = rest.next();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= file_size {
            return None;
        }
        let cut = late.iter().map(|&(o, n)| align(o + n)).filter(|&b| b > start).min();
        let mut end = align(start + window).min(cut.unwrap_or(u64::MAX));
        let mut mine = Vec::new();
        while let Some((off, size, job)) = next.filter(|j| j.0 < end) {
            let mut cut = None;
            if off + size <= end {
                mine.push((off, size, job));
            } else if let Job::Kernel(f, s, from) = job {
                mine.push((off, end - off, Job::Kernel(f, s, from)));
                cut = Some((end, off + size - end, Job::Kernel(f, s, from + (end - off))));
            } else if let Job::Input(f, s) | Job::Part(f, s, _) = job {
                let from = match job {
                    Job::Part(_, _, from) => from,
                    _ => 0,
                };
                mine.push((off, end - off, Job::Part(f, s, from)));
                cut = Some((end, off + size - end, Job::Part(f, s, from + (end - off))));
            } else {
                end = align(off + size);
                mine.push((off, size, job));
            }
            next = cut.or_else(|| rest.next());
        }
        let w = (start, end, mine);
        start = end;
        Some(w)
    })
}

fn overlaps(start: u64, end: u64, ranges: &[(u64, u64)]) -> bool {
    ranges.iter().any(|&(o, n)| o < end && o + n > start)
}

/// Heap mode: windows filled in their own buffers and handed to a writer thread that writes and
/// frees them (at most one queued), their build-id chunks hashed first. Windows holding `.rela.dyn`
/// or the build-id note wait until everything else is known.
fn write_behind<A: Arch>(
    ctx: &Linked,
    plan: Option<&symtab::Plan>,
    jobs: Jobs,
    file: &std::fs::File,
    kernel: Option<&KernelCopy>,
    paced: bool,
    fixed_build_id: Option<&[u8]>,
) -> Result<Written> {
    use std::os::unix::fs::FileExt;
    let mut stats = CopyStats::default();
    let file_size = ctx.layout.file_size;
    let late = late_ranges(ctx);
    let mut digests: Vec<[u8; 32]> = vec![[0; 32]; file_size.div_ceil(BLOCK) as usize];
    let mut kept: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut dynrels = Vec::new();
    let style = &ctx.config.build_id;
    std::thread::scope(|scope| -> Result<()> {
        // (window start, its bytes, its in-kernel copies as (output offset, file, section)).
        type Sent<'b> = (u64, Vec<u8>, Vec<(u64, &'b [u8])>);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Sent>(1);
        let writer = scope.spawn(move || -> Result<CopyStats> {
            let mut stats = CopyStats::default();
            // The last two windows written: (start, len).
            let mut recent: std::collections::VecDeque<(u64, u64)> = Default::default();
            for (start, bytes, copies) in rx {
                // The window's bytes around its copies, then the copies.
                let mut at = 0;
                for &(off, data) in &copies {
                    let rel = (off - start) as usize;
                    file.write_all_at(&bytes[at..rel], start + at as u64).context("cannot write the output")?;
                    at = rel + data.len();
                }
                file.write_all_at(&bytes[at..], start + at as u64).context("cannot write the output")?;
                if let Some(k) = kernel.filter(|_| !copies.is_empty()) {
                    k.run(&copies, file, &mut stats)?;
                }
                rivet_io::output::start_writeback(file, start, bytes.len() as u64);
                recent.push_back((start, bytes.len() as u64));
                if recent.len() > 2 {
                    let (old, len) = recent.pop_front().unwrap();
                    if paced {
                        rivet_io::output::settle_written(file, old, len);
                    }
                }
            }
            Ok(stats)
        });
        let window = if paced { PACED_WINDOW } else { WINDOW };
        for (start, end, jobs) in windows(jobs.into_pieces(), file_size, &late, window) {
            let mut buf = vec![ctx.config.filler.unwrap_or(0); (end - start) as usize];
            // --filler: every byte of the window is the filler's until written or zeroed.
            let stale = if ctx.config.filler.is_some() { buf.len() } else { 0 };
            // Windows written last (they hold .rela.dyn or the build-id) copy with memcpy.
            let late_window = overlaps(start, end, &late);
            let copies: Vec<(u64, &[u8])> =
                if late_window { Vec::new() } else { jobs.iter().filter_map(|p| kernel_piece(ctx, p)).collect() };
            let shifted = jobs.into_iter().map(|(off, size, job)| (off - start, size, job)).collect();
            dynrels.extend(fill_parallel::<A>(ctx, plan, shifted, &mut buf, stale, !late_window)?);
            if late_window {
                kept.push((start, buf));
                continue;
            }
            let patches: Vec<(u64, &[u8])> = copies.iter().map(|&(off, data)| (off - start, data)).collect();
            put_digests(&mut digests, start, chunks::chunk_digests_patched(style, &buf, &patches));
            if tx.send((start, buf, copies)).is_err() {
                break; // the writer failed; its error is reported below
            }
        }
        drop(tx);
        stats = writer.join().map_err(|_| fatal!("the output writer thread panicked"))??;
        Ok(())
    })?;
    let dynrels = with_copies::<A>(ctx, dynrels);
    let mut dynrels = Some(dynrels);
    for (start, buf) in &mut kept {
        let reladyn = ctx.synthetic_file_range(Content::RelaDyn);
        let holds_reladyn =
            reladyn.is_some_and(|(offset, size)| offset >= *start && offset + size <= *start + buf.len() as u64);
        if holds_reladyn || reladyn.is_none() {
            finish_window::<A>(ctx, dynrels.take().unwrap_or_default(), buf, *start)?;
        }
    }
    if ctx.synthetic_file_range(Content::RelaDyn).is_some() && dynrels.is_some_and(|d| !d.is_empty()) {
        return Err("internal error: no window holds .rela.dyn".into());
    }
    for (start, buf) in &kept {
        put_digests(&mut digests, *start, chunks::chunk_digests(style, buf));
    }
    let mut build_id = None;
    for (start, buf) in &mut kept {
        if let Some(id) = patch_build_id(ctx, &digests, buf, *start, fixed_build_id)? {
            build_id = Some(id);
        }
        file.write_all_at(buf, *start).context("cannot write the output")?;
    }
    let digests = if fixed_build_id.is_some() { Vec::new() } else { digests };
    Ok(Written { copy: stats, build_id, digests })
}

/// Every piece of the output with file bytes, sorted by file offset.
/// `kernel`: sections that reach the output unchanged and are large enough become `Job::Kernel`.
fn collect_jobs(ctx: &Ctx, layout: &Layout, endbr: &EndbrRewrites, kernel: bool) -> Jobs {
    let mut headers = Vec::new();
    if !layout.raw {
        let table = PHDR_SIZE * layout.phdrs.len() as u64;
        if layout.phoff == EHDR_SIZE {
            headers.push((0, EHDR_SIZE + table, Job::FileHeader));
        } else {
            // --section-order placed the table elsewhere.
            headers.push((0, EHDR_SIZE, Job::FileHeader));
            headers.push((layout.phoff, table, Job::ProgramHeaders));
        }
    }
    if !layout.raw && !layout.no_section_headers {
        let nsh = 1 + layout.emitted_count() as u64;
        headers.push((layout.shoff, SHDR_SIZE * nsh, Job::SectionHeaders));
    }
    // Output sections in parallel (cxx-big has 85k input sections), each one's pieces in file
    // order.
    let per_section: Vec<Vec<Piece>> = ctx
        .sections
        .par_iter()
        .enumerate()
        .with_max_len(1)
        .map(|(i, os)| {
            let i = OutputSectionId::new(i);
            let place = layout.sections[i];
            let mut jobs = Vec::new();
            if os.is_nobits() || place.shndx == 0 || place.stub {
                return jobs;
            }
            if os.content != Content::Inputs || layout.compressed.bytes(i).is_some() {
                if layout.sizes[i] > 0 {
                    jobs.push((place.offset, layout.sizes[i], Job::Synthetic(i)));
                }
                return jobs;
            }
            if !os.head.is_empty() {
                jobs.push((place.offset, os.head.len() as u64, Job::Head(i)));
            }
            // Range-extension thunk groups go between the members, in place order.
            let thunks = &layout.thunks;
            let first = thunks.groups.partition_point(|g| g.section < i);
            let mut groups = thunks.groups[first..].iter().take_while(|g| g.section == i).enumerate().peekable();
            for (k, &r) in os.members.iter().enumerate() {
                while let Some((n, g)) = groups.next_if(|(_, g)| g.before as usize <= k) {
                    jobs.push((place.offset + g.offset, thunks.group_size(g), Job::Thunk((first + n) as u32)));
                }
                let SectionRef { file: f, index: s } = r;
                let sec = &ctx.objects[r];
                if sec.sh_type == elf::SHT_NOBITS {
                    continue;
                }
                let at = place.offset + layout.inputs.offsets[r];
                let size = ctx.member_size(f, s);
                let verbatim = sec.relas.is_empty()
                    && sec.merge_index.is_none()
                    && !sec.decompressed()
                    && ctx.split_eh_frame(f, s).is_none()
                    && !endbr.touches(r)
                    && size == sec.data.len() as u64;
                if kernel && verbatim && size >= MIN_KERNEL_COPY {
                    jobs.push((at, size, Job::Kernel(f, s, 0)));
                } else if size > 0 {
                    jobs.push((at, size, Job::Input(f, s)));
                }
            }
            for (n, g) in groups {
                jobs.push((place.offset + g.offset, thunks.group_size(g), Job::Thunk((first + n) as u32)));
            }
            for (n, area) in thunks.patches.iter().enumerate().filter(|(_, a)| a.section == i) {
                jobs.push((place.offset + area.offset, area.capacity, Job::Patch(n as u32)));
            }
            jobs
        })
        .collect();
    // Sections do not overlap: in the order of their first pieces, their pieces are in file
    // order, with no sort of the whole list (80k pieces in cxx-big; sorting them took 1.6-3 ms)
    // unless a script's pieces come after.
    let mut groups: Vec<Vec<Piece>> = headers.into_iter().map(|h| vec![h]).collect();
    groups.extend(per_section.into_iter().filter(|p| !p.is_empty()));
    groups.sort_by_key(|p| p[0].0);
    let mut scripted = Vec::new();
    for &(i, off, size, value) in &layout.script_data {
        let (os, place) = (&ctx.sections[i], layout.sections[i]);
        if !os.is_nobits() && place.shndx != 0 {
            scripted.push((place.offset + off, size as u64, Job::Bytes(value)));
        }
    }
    for &(i, pattern) in &layout.script_fills {
        let (os, place) = (&ctx.sections[i], layout.sections[i]);
        if os.is_nobits() || place.shndx == 0 {
            continue;
        }
        // As lld fills: the space before the first member and after each member up to the
        // next (or the section's end), the pattern starting afresh in each; data commands are
        // written over it.
        let mut members: Vec<(u64, u64)> = os
            .members
            .iter()
            .map(|&r| {
                let start = layout.inputs.offsets[r];
                (start, start + ctx.member_size(r.file, r.index))
            })
            .collect();
        members.sort_unstable();
        let mut data: Vec<(u64, u64)> =
            layout.script_data.iter().filter(|d| d.0 == i).map(|d| (d.1, d.1 + d.2 as u64)).collect();
        data.sort_unstable();
        let mut regions = Vec::new();
        let mut at = os.head.len() as u64;
        let size = layout.sizes[i];
        for &(start, end) in members.iter().chain([&(size, size)]) {
            if start > at {
                regions.push((at, start));
            }
            at = at.max(end);
        }
        for (start, end) in regions {
            let mut pos = start;
            for &(ds, de) in data.iter().filter(|d| d.0 < end && d.1 > start).chain([&(end, end)]) {
                if ds > pos {
                    scripted.push((place.offset + pos, ds - pos, Job::Fill(pattern, ((pos - start) % 4) as u8)));
                }
                pos = pos.max(de);
            }
        }
    }
    // A script's data and fills fall between members: then the pieces are sorted as one run.
    if scripted.is_empty() && groups.iter().flatten().is_sorted_by_key(|j| j.0) {
        return Jobs(groups);
    }
    let mut all: Vec<Piece> = groups.into_iter().flatten().chain(scripted).collect();
    if !all.is_sorted_by_key(|j| j.0) {
        all.par_sort_by_key(|j| j.0);
    }
    Jobs(vec![all])
}

/// The pieces of the output in file order, as runs (an output section's, a header's) one after
/// another: not copied into one list, which for the windows of write-behind and build-id hashing
/// held every piece twice (265k pieces of 48 bytes in cxx-templates).
struct Jobs(Vec<Vec<Piece>>);

impl Jobs {
    fn iter(&self) -> impl Iterator<Item = &Piece> {
        self.0.iter().flatten()
    }

    /// The pieces in order, each run freed once it has been read.
    fn into_pieces(self) -> impl Iterator<Item = Piece> {
        self.0.into_iter().flatten()
    }

    /// The pieces in one list.
    fn into_vec(self) -> Vec<Piece> {
        match <[_; 1]>::try_from(self.0) {
            Ok([one]) => one,
            Err(runs) => runs.into_iter().flatten().collect(),
        }
    }
}

/// One piece of the output to fill: its offset in the buffer, its bytes, and the bytes after it
/// up to the next piece (or the buffer's end), which no job writes.
struct Slot<'b> {
    off: u64,
    piece: &'b mut [u8],
    gap: &'b mut [u8],
    job: Job,
}

/// Cuts `out` into one slot per piece (`jobs` sorted by offset); returns them and the bytes before
/// the first piece.
fn slots(jobs: Vec<Piece>, out: &mut [u8]) -> Result<(&mut [u8], Vec<Slot<'_>>)> {
    let first = jobs.first().map_or(out.len() as u64, |j| j.0);
    let ends: Vec<u64> = jobs.iter().skip(1).map(|j| j.0).chain([out.len() as u64]).collect();
    let (head, mut rest) = out.split_at_mut(first as usize);
    let mut slots = Vec::with_capacity(jobs.len());
    for ((off, size, job), end) in jobs.into_iter().zip(ends) {
        if off + size > end {
            crate::bail!("internal error: output pieces overlap at offset {end:#x}");
        }
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut((end - off) as usize);
        let (piece, gap) = piece.split_at_mut(size as usize);
        slots.push(Slot { off, piece, gap, job });
        rest = tail;
    }
    Ok((head, slots))
}

/// Zeroes the bytes of `buf` (at offset `off` of the output buffer) that are among its first
/// `stale` bytes, those a reused output file still holds its old bytes in.
fn zero_stale(buf: &mut [u8], off: u64, stale: usize) {
    let n = stale.saturating_sub(off as usize).min(buf.len());
    buf[..n].fill(0);
}

/// Whether filling `job` may leave bytes of its piece as they were: the writers of linker-made
/// sections skip bytes that are zero (the null section header, padding), where every other job
/// writes all of its piece (or the kernel copies it).
fn may_skip_bytes(ctx: &Linked, job: Job) -> bool {
    match job {
        Job::Synthetic(i) => ctx.layout.compressed.bytes(i).is_none(),
        Job::SectionHeaders => true,
        _ => false,
    }
}

/// `fill_parallel` for an output whose build-id hashes its bytes: the file is filled by build-id
/// chunk (1 MiB windows, in parallel), and each chunk is hashed as soon as it is filled, while its
/// bytes are still in the cache, rather than in a pass over the whole output afterwards. The
/// windows holding `.rela.dyn` or the build-id note are hashed last, once `.rela.dyn` is written.
/// Returns the digest of every chunk.
fn fill_hashing<A: Arch>(
    ctx: &Linked,
    plan: Option<&symtab::Plan>,
    jobs: Jobs,
    out: &mut [u8],
    stale: usize,
    unmapper: Option<&rivet_io::Unmapper>,
) -> Result<Vec<[u8; 32]>> {
    let late = late_ranges(ctx);
    let style = &ctx.config.build_id;
    // Each window with its bytes, cut as the pool's threads ask for the next.
    let mut rest = &mut *out;
    let cut = windows(jobs.into_pieces(), rest.len() as u64, &late, BLOCK).map(|(start, end, jobs)| {
        let (buf, tail) = std::mem::take(&mut rest).split_at_mut((end - start) as usize);
        rest = tail;
        (start, end, jobs, buf)
    });
    // Each window: where it is, its dynamic relocations and its digests (None: held back).
    type Done = ((u64, u64), Vec<DynRel>, Option<Vec<[u8; 32]>>);
    let mut done: Vec<Result<Done>> = cut
        .par_bridge()
        .map(|(start, end, jobs, buf)| {
            let shifted = jobs.into_iter().map(|(off, size, job)| (off - start, size, job)).collect();
            let dynrels = fill_parallel::<A>(ctx, plan, shifted, buf, stale.saturating_sub(start as usize), true)?;
            let digests = (!overlaps(start, end, &late)).then(|| chunks::chunk_digests(style, buf));
            // A window written and hashed is final: a mapped output's page-table entries for it
            // go now, on this thread, rather than all in the commit's munmap on one.
            if let (Some(u), Some(_)) = (unmapper, &digests) {
                u.release(start, end);
            }
            Ok(((start, end), dynrels, digests))
        })
        .collect();
    // In file order (the dynamic relocations are gathered in it).
    done.sort_by_key(|r| r.as_ref().map_or(0, |d| d.0 .0));
    let mut digests = vec![[0; 32]; out.len().div_ceil(BLOCK as usize)];
    let (mut dynrels, mut held) = (Vec::new(), Vec::new());
    for r in done {
        let ((start, end), d, found) = r?;
        dynrels.extend(d);
        match found {
            Some(found) => put_digests(&mut digests, start, found),
            None => held.push((start, end)),
        }
    }
    finish_window::<A>(ctx, with_copies::<A>(ctx, dynrels), out, 0)?;
    for (start, end) in held {
        put_digests(&mut digests, start, chunks::chunk_digests(style, &out[start as usize..end as usize]));
    }
    Ok(digests)
}

/// Puts the digests of the chunks of a window that starts at file offset `start` (on a chunk
/// boundary) in their places in the file's table.
fn put_digests(digests: &mut [[u8; 32]], start: u64, found: Vec<[u8; 32]>) {
    let first = (start / BLOCK) as usize;
    digests[first..first + found.len()].copy_from_slice(&found);
}

/// Fills `out` (file offsets in `jobs` are relative to its start), each piece by the job that owns
/// it, in parallel. `stale`: how many leading bytes of `out` still hold a reused output file's old
/// bytes (0 for a buffer that starts zeroed): each job zeroes those in the gap after its piece (the
/// padding no job writes, zeroed by the thread that writes the bytes beside it, with no pass over
/// the whole output), and first in its piece if its writer may skip some. `kernel_copies`: the
/// kernel copies the `Job::Kernel` pieces afterwards.
fn fill_parallel<A: Arch>(
    ctx: &Linked,
    plan: Option<&symtab::Plan>,
    jobs: Vec<Piece>,
    out: &mut [u8],
    stale: usize,
    kernel_copies: bool,
) -> Result<Vec<DynRel>> {
    let (head, slots) = slots(jobs, out)?;
    zero_stale(head, 0, stale);
    // Leaves of at most 64 pieces: rayon otherwise stops splitting after a few levels unless work
    // is stolen, and the leaf holding the .debug_* sections of the big objects ran on one worker
    // while the other slept (rust-debug, per-thread sums: 88 ms of pieces on one thread, 15 ms on
    // the other; fill 95 -> 73 ms with the cap, as measured for 180afa6).
    let results: Vec<Result<Vec<DynRel>>> = slots
        .into_par_iter()
        .with_max_len(64)
        .map(|Slot { off, piece, gap, job }| {
            if may_skip_bytes(ctx, job) {
                zero_stale(piece, off, stale);
            }
            let dynrels = fill_piece::<A>(ctx, plan, job, piece, kernel_copies);
            zero_stale(gap, off + piece.len() as u64, stale);
            dynrels
        })
        .collect();
    let mut dynrels = Vec::new();
    for r in results {
        dynrels.extend(r?);
    }
    Ok(dynrels)
}

/// Fills one piece of the output (`buf`) with what `job` says goes there.
fn fill_piece<A: Arch>(
    ctx: &Linked,
    plan: Option<&symtab::Plan>,
    job: Job,
    buf: &mut [u8],
    kernel_copies: bool,
) -> Result<Vec<DynRel>> {
    match job {
        Job::Input(f, s) => Ok(write_input::<A>(ctx, f, s, buf)),
        Job::Part(f, s, from) => Ok(write_input_part::<A>(ctx, f, s, from, buf)),
        Job::Kernel(..) if kernel_copies => Ok(Vec::new()),
        Job::Kernel(f, s, from) => {
            let data = ctx.objects[SectionRef::new(f, s)].data;
            buf.copy_from_slice(&data[from as usize..from as usize + buf.len()]);
            Ok(Vec::new())
        }
        Job::Synthetic(i) => write_synthetic::<A>(ctx, plan, i, buf),
        Job::Patch(n) => {
            A::write_patches(ctx, &ctx.layout.thunks.patches[n as usize], buf);
            Ok(Vec::new())
        }
        Job::Thunk(g) => {
            crate::arch::thunks::write_group::<A>(ctx, &ctx.layout.thunks.groups[g as usize], buf)?;
            Ok(Vec::new())
        }
        Job::Head(i) => {
            buf.copy_from_slice(&ctx.sections[i].head);
            Ok(Vec::new())
        }
        Job::Bytes(v) => {
            buf.copy_from_slice(&v.to_le_bytes()[..buf.len()]);
            Ok(Vec::new())
        }
        Job::Fill(pattern, phase) => {
            let p = pattern.to_be_bytes();
            for (k, b) in buf.iter_mut().enumerate() {
                *b = p[(phase as usize + k) % 4];
            }
            Ok(Vec::new())
        }
        Job::FileHeader => {
            write_file_header::<A>(ctx, ctx.layout, ctx.addr.entry, buf);
            Ok(Vec::new())
        }
        Job::ProgramHeaders => {
            write_program_headers(ctx.layout, buf);
            Ok(Vec::new())
        }
        Job::SectionHeaders => {
            write_section_headers::<A>(ctx, plan, buf);
            Ok(Vec::new())
        }
    }
}

pub(crate) fn write_input<A: Arch>(ctx: &Linked, f: FileId, s: u32, buf: &mut [u8]) -> Vec<DynRel> {
    let sec = &ctx.objects[SectionRef::new(f, s)];
    if let Some(m) = ctx.merges.at(sec.merge_index) {
        // Only the pieces this section owns, and zeros in the alignment padding between them (a
        // reused output's old bytes may be there): each byte before the furthest piece end so far
        // is written or zeroed, whatever order the pieces come in. Merged sections have no
        // relocations of their own.
        let mut end = 0;
        for &(src, len, dst) in &m.owned {
            let (src, dst, len) = (src as usize, dst as usize, len as usize);
            if dst > end {
                buf[end..dst].fill(0);
            }
            buf[dst..dst + len].copy_from_slice(&sec.data[src..src + len]);
            end = end.max(dst + len);
        }
        buf[end..].fill(0);
        return Vec::new();
    }
    match ctx.split_eh_frame(f, s) {
        Some(eh) => {
            for p in &eh.pieces {
                let Some(out_off) = p.out_off else { continue };
                let (src, dst) = (p.in_off as usize, out_off as usize);
                buf[dst..dst + p.size as usize].copy_from_slice(&sec.data[src..src + p.size as usize]);
                if let PieceKind::Fde { cie } = p.kind {
                    let cie_out = eh.pieces.iter().find(|c| c.in_off == cie).and_then(|c| c.out_off).unwrap_or(0);
                    let ptr = (dst as u32 + 4).wrapping_sub(cie_out);
                    buf[dst + 4..dst + 8].copy_from_slice(&ptr.to_le_bytes());
                }
            }
        }
        None => buf.copy_from_slice(&sec.data[..buf.len()]),
    }
    let dynrels = A::apply(ctx, f, s, buf);
    ctx.plans.endbr.patch(SectionRef::new(f, s), buf, 0);
    dynrels
}

/// Bytes `from..from + buf.len()` of input section (f, s) (whose output is `Ctx::member_size`
/// bytes): a part of a section cut at a write-behind window boundary. A section copied as it is is relocated
/// over the part alone (and the reach of its neighbours' relocations), so memory is bounded by
/// the window, not the section: a 96 MiB `.data` cut into 2 MiB windows took a 96 MiB scratch
/// buffer per window, and a link that survived a 64 MiB cgroup mapped was killed written.
/// A merged section writes the pieces in the part (it has no relocations); `.eh_frame`
/// (rearranged pieces, small) is built whole.
fn write_input_part<A: Arch>(ctx: &Linked, f: FileId, s: u32, from: u64, buf: &mut [u8]) -> Vec<DynRel> {
    let sec = &ctx.objects[SectionRef::new(f, s)];
    let whole = ctx.member_size(f, s);
    let len = buf.len() as u64;
    if let Some(m) = ctx.merges.at(sec.merge_index) {
        // Only the pieces that fall in the part: a 5.5 MiB `.debug_str` cut into 1 MiB windows
        // was built whole for each of its six parts.
        buf.fill(0);
        for &(src, n, dst) in &m.owned {
            let (start, end) = ((dst as u64).max(from), (dst as u64 + n as u64).min(from + len));
            if start < end {
                let at = (src as u64 + start - dst as u64) as usize;
                buf[(start - from) as usize..(end - from) as usize]
                    .copy_from_slice(&sec.data[at..at + (end - start) as usize]);
            }
        }
        return Vec::new();
    }
    if ctx.split_eh_frame(f, s).is_some() || whole != sec.data.len() as u64 {
        let mut scratch = vec![0u8; whole as usize];
        let dynrels = write_input::<A>(ctx, f, s, &mut scratch);
        buf.copy_from_slice(&scratch[from as usize..(from + len) as usize]);
        return if from == 0 { dynrels } else { Vec::new() };
    }
    let reach = 2 * A::RELOC_REACH;
    let (lo, hi) = (from.saturating_sub(reach), (from + len + reach).min(whole));
    let mut scratch = sec.data[lo as usize..hi as usize].to_vec();
    let dynrels = A::apply_range(ctx, f, s, &mut scratch, lo, from..from + len);
    ctx.plans.endbr.patch(SectionRef::new(f, s), &mut scratch, lo);
    buf.copy_from_slice(&scratch[(from - lo) as usize..(from - lo + len) as usize]);
    dynrels
}

fn write_synthetic<A: Arch>(
    ctx: &Linked,
    plan: Option<&symtab::Plan>,
    i: OutputSectionId,
    buf: &mut [u8],
) -> Result<Vec<DynRel>> {
    let sec = &ctx.sections[i];
    if let Some(bytes) = ctx.layout.compressed.bytes(i) {
        buf.copy_from_slice(bytes);
        return Ok(Vec::new());
    }
    match chunks::chunk::<A>(sec.content) {
        Some(chunk) => {
            chunk.write(&Writing { linked: ctx, symtab: plan, id: i, section: sec, place: ctx.layout.sections[i] }, buf)
        }
        None => Ok(Vec::new()),
    }
}

/// `e_ident` of every file rivet writes: ELF64, little-endian, current version, System V ABI.
pub fn elf_ident() -> object::elf::Ident {
    object::elf::Ident {
        magic: elf::ELFMAG,
        class: elf::ELFCLASS64,
        data: elf::ELFDATA2LSB,
        version: elf::EV_CURRENT,
        os_abi: elf::ELFOSABI_NONE,
        abi_version: 0,
        padding: [0; 7],
    }
}

/// The ELF header, and the program headers when they follow it (`out` starts at file offset 0).
fn write_file_header<A: Arch>(ctx: &Ctx, layout: &Layout, entry: u64, out: &mut [u8]) {
    use object::elf::{FileHeader64, ProgramHeader64};
    use object::{pod, LittleEndian as LE, U16, U32, U64};
    const _: () = assert!(size_of::<FileHeader64<LE>>() == EHDR_SIZE as usize);
    const _: () = assert!(size_of::<ProgramHeader64<LE>>() == PHDR_SIZE as usize);
    // -z nosectionheader: no table, and so no entry size either (as mold writes it; lld keeps 64).
    let section_headers = !layout.no_section_headers;
    let shnum = if section_headers { 1 + layout.emitted_count() } else { 0 };
    let shstrndx = layout.synthetic.get(Content::Shstrtab).filter(|_| section_headers).map_or(0, |s| layout.shndx(s));
    // A position-independent executable placed with -Ttext-segment is ET_EXEC, so that the kernel
    // loads it at that address (GNU ld's rule; mold's also at 0, where GNU ld keeps ET_DYN); it
    // stays relocatable (DF_1_PIE, RELATIVE relocations).
    let fixed_pie = ctx.config.ttext_segment && matches!(ctx.kind, OutputKind::Pie | OutputKind::StaticPie);
    let e_type = if ctx.kind.is_pic() && !fixed_pie { elf::ET_DYN } else { elf::ET_EXEC };
    let header = FileHeader64::<LE> {
        e_ident: elf_ident(),
        e_type: U16::new(LE, e_type),
        e_machine: U16::new(LE, A::NAMES.e_machine),
        e_version: U32::new(LE, elf::EV_CURRENT as u32),
        e_entry: U64::new(LE, entry),
        e_phoff: U64::new(LE, layout.phoff),
        e_shoff: U64::new(LE, layout.shoff),
        e_flags: U32::new(LE, 0),
        e_ehsize: U16::new(LE, EHDR_SIZE as u16),
        e_phentsize: U16::new(LE, PHDR_SIZE as u16),
        e_phnum: U16::new(LE, layout.phdrs.len() as u16),
        e_shentsize: U16::new(LE, if section_headers { SHDR_SIZE as u16 } else { 0 }),
        e_shnum: U16::new(LE, shnum as u16),
        e_shstrndx: U16::new(LE, shstrndx as u16),
    };
    let (h, rest) = out.split_at_mut(EHDR_SIZE as usize);
    h.copy_from_slice(pod::bytes_of(&header));
    if layout.phoff == EHDR_SIZE {
        write_program_headers(layout, rest);
    }
}

/// The program header table (`out` starts at `layout.phoff`).
fn write_program_headers(layout: &Layout, out: &mut [u8]) {
    use object::elf::ProgramHeader64;
    use object::{pod, LittleEndian as LE, U32, U64};
    let (phdrs, _) = pod::slice_from_bytes_mut::<ProgramHeader64<LE>>(out, layout.phdrs.len()).unwrap();
    for (e, p) in phdrs.iter_mut().zip(&layout.phdrs) {
        *e = ProgramHeader64 {
            p_type: U32::new(LE, p.p_type),
            p_flags: U32::new(LE, p.flags),
            p_offset: U64::new(LE, p.offset),
            p_vaddr: U64::new(LE, p.vaddr),
            p_paddr: U64::new(LE, p.paddr.unwrap_or(p.vaddr)),
            p_filesz: U64::new(LE, p.filesz),
            p_memsz: U64::new(LE, p.memsz),
            p_align: U64::new(LE, p.align),
        };
    }
}

/// The section header table (`out` starts at `layout.shoff`).
fn write_section_headers<A: Arch>(ctx: &Linked, plan: Option<&symtab::Plan>, out: &mut [u8]) {
    use object::elf::SectionHeader64;
    use object::{pod, LittleEndian as LE, U32, U64};
    const _: () = assert!(size_of::<SectionHeader64<LE>>() == SHDR_SIZE as usize);
    let (headers, _) = pod::slice_from_bytes_mut::<SectionHeader64<LE>>(out, out.len() / SHDR_SIZE as usize).unwrap();
    for (i, s) in ctx.sections.iter_enumerated() {
        let place = ctx.layout.sections[i];
        if place.shndx == 0 {
            continue;
        }
        let writing = Writing { linked: ctx, symtab: plan, id: i, section: s, place };
        let (link, info) = chunks::chunk::<A>(s.content).map_or((0, 0), |c| c.link_info(&writing));
        headers[place.shndx as usize] = SectionHeader64 {
            sh_name: U32::new(LE, ctx.layout.sh_name[i.index()]),
            sh_type: U32::new(LE, if place.stub { elf::SHT_NOBITS } else { s.sh_type }),
            sh_flags: U64::new(LE, ctx.layout.compressed.flags(i, s)),
            sh_addr: U64::new(LE, place.addr),
            sh_offset: U64::new(LE, place.offset),
            sh_size: U64::new(LE, ctx.layout.sizes[i]),
            sh_link: U32::new(LE, link),
            sh_info: U32::new(LE, info),
            sh_addralign: U64::new(LE, ctx.layout.compressed.align(i, s)),
            sh_entsize: U64::new(LE, s.entsize),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_of_ranges() {
        assert!(overlaps(0, 100, &[(50, 10)]));
        assert!(!overlaps(0, 100, &[(100, 10)]));
        assert!(overlaps(90, 110, &[(0, 95)]));
        assert!(!overlaps(0, 100, &[]));
    }

    #[test]
    fn windows_tile_the_file_without_cutting_jobs() {
        let jobs = vec![
            (0, 10, Job::Synthetic(OutputSectionId::new(0))),
            (WINDOW - 5, 20, Job::Synthetic(OutputSectionId::new(1))),
            (WINDOW + 100, 10, Job::Synthetic(OutputSectionId::new(2))),
        ];
        let w = windows(jobs, 3 * WINDOW, &[], WINDOW).collect::<Vec<_>>();
        assert_eq!(w[0].0, 0);
        assert_eq!(w[0].1, WINDOW + BLOCK, "the job crossing the boundary stays whole; the window ends on a block");
        assert_eq!(w[0].2.len(), 3, "the job starting in the padding joins the window");
        assert_eq!(w[1].0, WINDOW + BLOCK);
        assert_eq!(w.last().unwrap().1, 3 * WINDOW);
        for pair in w.windows(2) {
            assert_eq!(pair[0].1, pair[1].0);
            assert_eq!(pair[0].1 % BLOCK, 0);
        }
    }

    #[test]
    fn contiguous_input_sections_are_cut_at_window_boundaries() {
        let jobs: Vec<Piece> =
            (0..40).map(|i| (i * 1_000_000, 1_000_000, Job::Input(FileId::new(i as usize), 1))).collect();
        let w = windows(jobs, 40_000_000, &[], WINDOW).collect::<Vec<_>>();
        assert!(w.len() >= 4, "{} windows for 40 MB", w.len());
        let mut covered = 0;
        for (start, end, pieces) in &w {
            assert!(end - start <= WINDOW + BLOCK, "a window of {} bytes", end - start);
            for (off, size, job) in pieces {
                assert_eq!(*off, covered);
                let f = match job {
                    Job::Input(f, _) => f.index() as u64 * 1_000_000,
                    Job::Part(f, _, from) => f.index() as u64 * 1_000_000 + from,
                    _ => unreachable!(),
                };
                assert_eq!(*off, f);
                covered += size;
            }
        }
        assert_eq!(covered, 40_000_000);
    }

    #[test]
    fn kernel_copies_are_cut_at_window_boundaries_and_late_ranges_end_windows() {
        // Contiguous 1,000,000-byte in-kernel copies: every boundary falls inside one.
        let jobs: Vec<Piece> =
            (0..40).map(|i| (i * 1_000_000, 1_000_000, Job::Kernel(FileId::new(i as usize), 1, 0))).collect();
        let w = windows(jobs, 40_000_000, &[(100, 24)], WINDOW).collect::<Vec<_>>();
        assert_eq!((w[0].0, w[0].1), (0, BLOCK), "the window holding a late range ends at the next boundary");
        assert_eq!(w[1].1, BLOCK + WINDOW);
        assert!(w.len() >= 3);
        let mut covered = 0;
        for (start, end, pieces) in &w {
            for (off, size, job) in pieces {
                assert!(*off >= *start && off + size <= *end);
                assert_eq!(*off, covered, "pieces tile the input");
                let Job::Kernel(f, _, from) = job else { unreachable!() };
                assert_eq!(*off, f.index() as u64 * 1_000_000 + from);
                covered += size;
            }
        }
        assert_eq!(covered, 40_000_000);
    }
}
