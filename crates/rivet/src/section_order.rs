//! `--section-order=SPEC` (mold's option): the loaded sections in the order and at the addresses
//! the words of SPEC give, instead of the default layout. `EHDR` and `PHDR` place the ELF header
//! and the program header table (loaded only when named: the table then lies wherever its address
//! puts it in the file, `e_phoff`); `TEXT`, `RODATA`, `DATA`, `BSS` stand for the sections of that
//! kind no word names; `=ADDR` sets the address, `%ALIGN` aligns it, `!SYM` defines SYM there.
//! As in mold, sections of different permissions never share a page (`-z
//! separate-loadable-segments`) and there is no RELRO segment.
use crate::args::{SectionGroup, SectionOrderItem};
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::ids::{IdVec, OutputSectionId};
use crate::layout::{self, align_up, Layout, Phdr, Placement, TlsExtent, EHDR_SIZE, PHDR_SIZE};
use crate::sections::output::{Content, OutputSection, Sizes, SyntheticIds};
use crate::{bail, ensure};
use object::elf;

/// What the walk places: the ELF header, the program header table or an output section.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Chunk {
    Ehdr,
    Phdr,
    Section(OutputSectionId),
}

/// The kind of output section a group word stands for (mold's rule, but TLS bss goes with the
/// data: the TLS template is one block, `.tdata` then `.tbss`).
fn group_of(s: &OutputSection) -> SectionGroup {
    if s.is_nobits() && s.is_tls() {
        SectionGroup::Data
    } else if s.is_nobits() {
        SectionGroup::Bss
    } else if s.flags & elf::SHF_EXECINSTR as u64 != 0 {
        SectionGroup::Text
    } else if s.flags & elf::SHF_WRITE as u64 != 0 {
        SectionGroup::Data
    } else {
        SectionGroup::Rodata
    }
}

/// The segment flags a chunk needs (the headers are read-only data).
fn chunk_flags(ctx: &Ctx, c: Chunk) -> u32 {
    let Chunk::Section(i) = c else { return elf::PF_R };
    let f = ctx.sections[i].flags;
    if f & elf::SHF_EXECINSTR as u64 != 0 {
        return layout::code_flags(ctx.config);
    }
    elf::PF_R | if f & elf::SHF_WRITE as u64 != 0 { elf::PF_W } else { 0 }
}

/// Options whose layout cannot be combined with an ordered one.
pub fn check_options(config: &crate::args::Config, scripted: bool) -> Result<()> {
    let clash = [
        (!config.section_starts.is_empty(), "-Ttext/-Tdata/-Tbss/--section-start"),
        (scripted, "a linker script's SECTIONS"),
        (config.omagic || config.nmagic, "-N/-n"),
        (config.oformat_binary, "--oformat=binary"),
        (config.separate_debug_file.is_some(), "--separate-debug-file"),
    ];
    for (given, what) in clash {
        ensure!(!given, "--section-order may not be used with {what}");
    }
    Ok(())
}

/// The layout `--section-order` asks for. Errors: a loaded section no word covers, an address
/// that goes backward, an ELF header whose address is not on a page boundary (it is at file
/// offset 0).
pub fn assign_addresses(ctx: &Ctx, synthetic: &SyntheticIds, sizes: &mut Sizes) -> Result<Layout> {
    let items = &ctx.config.section_order;
    let page = ctx.config.max_page_size.max(4096);
    let named = |n: &str| items.iter().any(|i| matches!(i, SectionOrderItem::Section(s) if s == n));
    let (ehdr_loaded, phdr_loaded) = (named("EHDR"), named("PHDR"));
    let mut places: IdVec<OutputSectionId, Placement> = ctx.sections.iter().map(|_| Placement::default()).collect();
    let default_order = layout::sort_order(ctx, &mut places, &[]);
    // Each loaded section's word: the one naming it, else its group's.
    let mut rank: Vec<(usize, OutputSectionId)> = Vec::new();
    for &i in &default_order {
        let s = &ctx.sections[i];
        if !s.is_alloc() {
            continue;
        }
        let by_name = items.iter().position(|it| matches!(it, SectionOrderItem::Section(n) if *n == s.name));
        let group = group_of(s);
        let by_group = || items.iter().position(|it| *it == SectionOrderItem::Group(group));
        match by_name.or_else(by_group) {
            Some(k) => rank.push((k, i)),
            None => bail!("--section-order: missing section specification for {}", s.name),
        }
    }
    rank.sort_by_key(|&(k, _)| k); // stable: the default order within a word
    let has = |c: Content| synthetic.get(c).is_some();
    let has_interp = has(Content::Interp);
    let alloc_order: Vec<OutputSectionId> = rank.iter().map(|&(_, i)| i).collect();
    let note_runs = layout::note_runs(ctx, sizes, &alloc_order);
    let tls_secs: Vec<OutputSectionId> = alloc_order.iter().copied().filter(|&i| ctx.sections[i].is_tls()).collect();
    let others = layout::headers_around_loads_count(
        ctx,
        synthetic,
        has_interp && phdr_loaded,
        note_runs.len(),
        !tls_secs.is_empty(),
    ) + ctx.config.spare_program_headers;
    // The number of PT_LOADs decides the table's size, which may move what follows it: placed
    // again until the count holds.
    let mut nloads = 1;
    for _ in 0..8 {
        let walk = walk(ctx, items, &rank, sizes, (others + nloads) as u64 * PHDR_SIZE, page)?;
        let loads = plan_loads(ctx, &walk, page);
        if loads.len() != nloads {
            nloads = loads.len();
            continue;
        }
        let flags = (has_interp, phdr_loaded, ehdr_loaded);
        let planned = Planned { walk, loads, flags, note_runs, tls_secs: &tls_secs, nphdr: others + nloads };
        return finish(ctx, synthetic, sizes, places, planned);
    }
    bail!("--section-order: the number of program headers does not settle")
}

/// Where the walk put everything: each chunk with its address, in placing order, and the symbols.
struct Walk {
    chunks: Vec<(Chunk, u64, u64)>,
    symbols: Vec<(String, u64)>,
}

/// Walks the words: places the chunks each one covers and follows the address words.
fn walk(
    ctx: &Ctx,
    items: &[SectionOrderItem],
    rank: &[(usize, OutputSectionId)],
    sizes: &Sizes,
    phdr_size: u64,
    page: u64,
) -> Result<Walk> {
    let base = match ctx.config.image_base {
        Some(b) => b,
        None if ctx.kind.is_pic() => 0,
        None => 0x400000,
    };
    let mut addr = base;
    let mut out = Walk { chunks: Vec::new(), symbols: Vec::new() };
    let mut prev_flags: Option<u32> = None;
    // Places a chunk at the next address its alignment allows, a new page when the permissions
    // change.
    let mut place = |out: &mut Walk, c: Chunk, size: u64, align: u64, addr: &mut u64, tbss: bool| {
        let flags = chunk_flags(ctx, c);
        if prev_flags.is_some_and(|p| p != flags) {
            *addr = align_up(*addr, page);
        }
        prev_flags = Some(flags);
        *addr = align_up(*addr, align);
        out.chunks.push((c, *addr, size));
        if !tbss {
            *addr += size;
        }
    };
    let mut next = 0;
    for (k, item) in items.iter().enumerate() {
        match item {
            SectionOrderItem::Section(n) if n == "EHDR" => {
                // It is at the start of the file, so at the start of the first segment.
                if let Some(&(Chunk::Section(i), ..)) = out.chunks.first() {
                    bail!(
                        "--section-order: EHDR must come before every section, but {} is placed first",
                        ctx.sections[i].name
                    );
                }
                place(&mut out, Chunk::Ehdr, EHDR_SIZE, 8, &mut addr, false)
            }
            SectionOrderItem::Section(n) if n == "PHDR" => place(&mut out, Chunk::Phdr, phdr_size, 8, &mut addr, false),
            SectionOrderItem::Section(_) | SectionOrderItem::Group(_) => {
                while next < rank.len() && rank[next].0 == k {
                    let i = rank[next].1;
                    let s = &ctx.sections[i];
                    place(&mut out, Chunk::Section(i), sizes[i], s.align, &mut addr, s.is_tls() && s.is_nobits());
                    next += 1;
                }
            }
            SectionOrderItem::Addr(a) => {
                if addr != base && *a < addr {
                    bail!(
                        "--section-order: address goes backward: requested {a:#x} < current {addr:#x} (at token \
                         '={a:#x}')"
                    );
                }
                addr = *a;
            }
            SectionOrderItem::Align(a) => addr = align_up(addr, *a),
            SectionOrderItem::Symbol(name) => out.symbols.push((name.clone(), addr)),
        }
    }
    Ok(out)
}

struct Load {
    /// Indices into the walk's chunks.
    first: usize,
    last: usize,
    flags: u32,
}

/// Groups the placed chunks into PT_LOADs: a new one where the permissions change or the next
/// chunk starts a page or more past the previous one's end (or before it).
fn plan_loads(ctx: &Ctx, walk: &Walk, page: u64) -> Vec<Load> {
    let mut loads: Vec<Load> = Vec::new();
    let mut end = 0;
    for (k, &(c, addr, size)) in walk.chunks.iter().enumerate() {
        let flags = chunk_flags(ctx, c);
        match loads.last_mut() {
            Some(l) if l.flags == flags && addr >= end && addr - end < page => {
                l.last = k;
                end = end.max(addr + size);
            }
            _ => {
                loads.push(Load { first: k, last: k, flags });
                end = addr + size;
            }
        }
    }
    loads
}

/// What `finish` places: the walk of the words and its PT_LOADs, whether the interpreter is named
/// and the ELF header and the program header table are placed, the runs of notes, the TLS
/// sections and the number of program headers.
struct Planned<'t> {
    walk: Walk,
    loads: Vec<Load>,
    flags: (bool, bool, bool),
    note_runs: Vec<Vec<OutputSectionId>>,
    tls_secs: &'t [OutputSectionId],
    nphdr: usize,
}

fn finish(
    ctx: &Ctx,
    synthetic: &SyntheticIds,
    sizes: &mut Sizes,
    mut places: IdVec<OutputSectionId, Placement>,
    planned: Planned,
) -> Result<Layout> {
    let Planned { walk, loads, flags: (has_interp, phdr_loaded, ehdr_loaded), note_runs, tls_secs, nphdr } = planned;
    let page = ctx.config.max_page_size.max(4096);
    let table = nphdr as u64 * PHDR_SIZE;
    if has_interp && !phdr_loaded {
        ctx.diag.warn(
            "--section-order: PHDR is not placed, so the program headers are not loaded, and the dynamic \
             loader this program names needs them: it will not start",
        );
    }
    // The file starts with the ELF header; the table follows it unless it is placed.
    let mut off = if phdr_loaded { EHDR_SIZE } else { EHDR_SIZE + table };
    let (mut phoff, mut ehdr_addr, mut phdr_addr) = (EHDR_SIZE, None, None);
    let mut phdrs = Vec::new();
    let mut tls: Option<TlsExtent> = None;
    let mut alloc_end = off;
    for load in &loads {
        let chunks = &walk.chunks[load.first..=load.last];
        let seg_va = chunks[0].1;
        // The ELF header is at offset 0: its segment starts there.
        let seg_off = if chunks[0].0 == Chunk::Ehdr {
            ensure!(
                seg_va.is_multiple_of(page),
                "--section-order: EHDR at {seg_va:#x}: its address must be page-aligned"
            );
            0
        } else {
            off + (seg_va.wrapping_sub(off) & (page - 1))
        };
        let mut file_end = seg_off;
        let mut mem_end = seg_va;
        for &(c, addr, size) in chunks {
            let at = seg_off + (addr - seg_va);
            match c {
                Chunk::Ehdr => ehdr_addr = Some(addr),
                Chunk::Phdr => {
                    phoff = at;
                    phdr_addr = Some(addr);
                }
                Chunk::Section(i) => {
                    places[i].addr = addr;
                    places[i].offset = at;
                    let s = &ctx.sections[i];
                    if s.is_tls() {
                        TlsExtent::grow(&mut tls, addr, size, s.align, (!s.is_nobits()).then_some(at + size));
                    }
                    if s.is_tls() && s.is_nobits() {
                        continue;
                    }
                }
            }
            let bytes = !matches!(c, Chunk::Section(i) if ctx.sections[i].is_nobits());
            if bytes {
                file_end = file_end.max(at + size);
            }
            mem_end = mem_end.max(addr + size);
        }
        phdrs.push(Phdr {
            p_type: elf::PT_LOAD,
            flags: load.flags,
            offset: seg_off,
            vaddr: seg_va,
            paddr: None,
            filesz: file_end - seg_off,
            memsz: mem_end - seg_va,
            align: page,
        });
        off = file_end.max(seg_off);
        alloc_end = alloc_end.max(off);
    }
    let order: Vec<OutputSectionId> = walk
        .chunks
        .iter()
        .filter_map(|&(c, ..)| if let Chunk::Section(i) = c { Some(i) } else { None })
        .chain(ctx.sections.ids().filter(|&i| !ctx.sections[i].is_alloc()))
        .collect();
    let mut tail = layout::place_tail(ctx, synthetic, sizes, &mut places, &order, alloc_end);
    // A loaded ELF header without a loaded table: the table goes at the end of the file.
    if ehdr_loaded && !phdr_loaded {
        phoff = align_up(tail.file_size, 8);
        tail.file_size = phoff + table;
    }
    let tls_phdr = tls.map(|t| (t, places[tls_secs[0]].offset));
    let base = ehdr_addr.unwrap_or(walk.chunks.first().map_or(0, |c| c.1) & !(page - 1));
    let frame = layout::Frame { base, headers: EHDR_SIZE + table, phdr: has_interp && phdr_loaded, tls: tls_phdr };
    let mut all = layout::headers_around_loads(ctx, synthetic, sizes, &places, &frame, phdrs, &note_runs);
    // PT_PHDR covers the table where it was placed.
    if let (Some(p), Some(addr)) = (all.iter_mut().find(|p| p.p_type == elf::PT_PHDR), phdr_addr) {
        (p.offset, p.vaddr) = (phoff, addr);
    }
    all.extend(layout::spare_phdrs(ctx.config));
    debug_assert_eq!(all.len(), nphdr);
    let mut lay =
        Layout::sealed(layout::Sealed { places, base, tls, phdrs: all, phoff, alloc_end, tail, synthetic: *synthetic });
    lay.order_symbols = walk.symbols;
    Ok(lay)
}
