//! Layout: takes the output sections with their sizes and gives every section an address and a file
//! offset, every segment its program header, and every global symbol its final value. Sizes are
//! exact here, so the writer only fills slices that layout has measured.
use crate::ctx::{Ctx, OutputKind, Resolved};
use crate::ids::{IdVec, OutputSectionId, SectionRef, SharedId, SymbolId};
use crate::resolve::Def;
use crate::sections::merged::MergePieces;
use crate::sections::offsets::{CommonArea, Commons, InputOffsets, InputPlaces};
use crate::sections::output::{Compressed, Content, OutputSection, Sizes, *};
use crate::synthetic::tables::Tables;
use object::elf;
use object::LittleEndian as LE;

pub const EHDR_SIZE: u64 = 64;
pub const PHDR_SIZE: u64 = 56;
pub const SHDR_SIZE: u64 = 64;

#[derive(Clone, Copy, Debug, Default)]
pub struct Phdr {
    pub p_type: u32,
    pub flags: u32,
    pub offset: u64,
    pub vaddr: u64,
    /// The load address (`AT` in a linker script); None: the same as `vaddr`.
    pub paddr: Option<u64>,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

/// Where layout put one output section. Only layout makes these: an output section has no address,
/// file offset or section header index before there is a `Layout` to hold them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The address (0 for sections that are not loaded).
    pub addr: u64,
    /// The file offset.
    pub offset: u64,
    /// The index in the section header table (0: not emitted, as ELF's SHN_UNDEF).
    pub shndx: u32,
    /// (segment class, rank within it, first appearance): the sort key of output sections.
    /// The fourth field places a script's `INSERT`ed section before (< 0) or after (> 0) the
    /// section it was inserted at, whose first three it takes.
    pub key: (u8, u8, u32, i32),
    /// Listed in this file's section headers as SHT_NOBITS, with no bytes in it: the separate
    /// debug file's view of the sections that are in the main output.
    pub stub: bool,
}

#[derive(Clone)]
pub struct Layout {
    /// Every output section's placement, by id.
    pub sections: IdVec<OutputSectionId, Placement>,
    /// The address the output is linked at (0 for position-independent outputs).
    pub base: u64,
    pub tls: Tls,
    pub phdrs: Vec<Phdr>,
    /// The program header table's file offset (right after the ELF header, unless
    /// `--section-order` places it).
    pub phoff: u64,
    pub shoff: u64,
    pub file_size: u64,
    /// Where the loaded sections' file bytes end (the non-alloc sections come after).
    pub alloc_end: u64,
    pub shstrtab: Vec<u8>,
    /// Name offsets in `.shstrtab`, by output section index.
    pub sh_name: Vec<u32>,
    /// `--oformat=binary`: the file is the loaded sections' image, without ELF or section headers.
    pub raw: bool,
    /// `-z nosectionheader`: no section header table (`drop_section_headers`).
    pub no_section_headers: bool,
    /// Values of the linker-script symbols assigned inside `SECTIONS` (by script symbol index;
    /// None: assigned outside, evaluated once addresses are known).
    pub script_values: Vec<Option<crate::script::Value>>,
    /// A linker script's data commands (`BYTE`, `SHORT`, `LONG`, `QUAD`): (output section,
    /// offset in it, size, value).
    pub script_data: Vec<(OutputSectionId, u64, u8, u64)>,
    /// The build-id note inside a script's output section (`Ctx::build_id_home`): (section,
    /// offset, size); None: it is a section of its own, or there is none.
    pub build_id_in: Option<(OutputSectionId, u64, u64)>,
    /// A linker script's fill patterns (`=0x90909090`, `FILL(...)`): (output section, the
    /// pattern as a big-endian 4-byte number) for the gaps between its contents.
    pub script_fills: Vec<(OutputSectionId, u32)>,
    /// Where the linker's own sections are (`chunks::create_sections`).
    pub synthetic: SyntheticIds,
    /// `--section-order`'s `!SYMBOL` words: each symbol's address.
    pub order_symbols: Vec<(String, u64)>,
    /// Where the inputs are inside their output sections (`assign_input_offsets`; a script's
    /// commands walked at their addresses may move members and commons). Shared with the
    /// separate debug file's layout, which places the same inputs.
    pub inputs: std::sync::Arc<InputPlaces>,
    /// Every output section's size (`.shstrtab`'s set by layout; compressed debug sections'
    /// replaced after it).
    pub sizes: Sizes,
    /// The debug sections `--compress-debug-sections` compressed after layout (shared with the
    /// separate debug file's layout).
    pub compressed: std::sync::Arc<Compressed>,
    /// The range-extension thunks between the members of executable sections
    /// (`arch::thunks`; none on most links), placed.
    pub thunks: std::sync::Arc<crate::sections::thunks::Thunks>,
}

/// The TLS segment: `start` is its address, `end` the start plus the size rounded up to the
/// alignment `align` (where a variant II thread pointer points). Thread-pointer offsets are the
/// target's (`Arch::tp_offset`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tls {
    pub start: u64,
    pub end: u64,
    pub align: u64,
}

impl Layout {
    /// The layout a layout engine arrived at; the script's values and data, `--section-order`'s
    /// symbols and the input places are filled in by their owners afterwards.
    pub fn sealed(s: Sealed) -> Layout {
        Layout {
            sections: s.places,
            base: s.base,
            tls: TlsExtent::block(s.tls),
            phdrs: s.phdrs,
            phoff: s.phoff,
            shoff: s.tail.shoff,
            file_size: s.tail.file_size,
            alloc_end: s.alloc_end,
            shstrtab: s.tail.shstrtab,
            sh_name: s.tail.sh_name,
            raw: false,
            no_section_headers: false,
            script_values: Vec::new(),
            script_data: Vec::new(),
            build_id_in: None,
            script_fills: Vec::new(),
            synthetic: s.synthetic,
            order_symbols: Vec::new(),
            inputs: Default::default(),
            sizes: Sizes::default(),
            compressed: Default::default(),
            thunks: Default::default(),
        }
    }

    /// Output section `id`'s address.
    pub fn addr(&self, id: OutputSectionId) -> u64 {
        self.sections[id].addr
    }
    /// Output section `id`'s index in the section header table (0: not emitted).
    pub fn shndx(&self, id: OutputSectionId) -> u32 {
        self.sections[id].shndx
    }
    /// How many sections the section header table lists (without the null entry).
    pub fn emitted_count(&self) -> usize {
        self.sections.iter().filter(|p| p.shndx != 0).count()
    }
}

pub fn align_up(v: u64, align: u64) -> u64 {
    if align <= 1 {
        v
    } else {
        v.div_ceil(align) * align
    }
}

/// Groups the live input sections into output sections by name, then makes the reserved names
/// (`_end`, `__start_foo`...) that are referenced but not defined linker-defined symbols.
/// `priority`: `--symbol-ordering-file`'s section priorities (`symbol_options::symbol_priorities`).
pub fn create_output_sections(
    ctx: &mut Resolved,
    priority: rustc_hash::FxHashMap<SectionRef, i64>,
) -> crate::diag::Result<IdVec<OutputSectionId, OutputSection>> {
    let config = ctx.config;
    let strip_debug = config.strip != crate::args::Strip::None;
    let keep_prefix = config.keep_text_section_prefix;
    let placements = match &config.section_ordering_file {
        Some(path) => crate::sections::order::read_section_ordering(path)?,
        None => Vec::new(),
    };
    let order = crate::sections::order::Ordering {
        placements,
        shuffles: &config.section_shuffles,
        priority,
        section_align: &config.section_align,
        unique: &config.unique,
    };
    let mut sections = build(&mut ctx.objects, &ctx.file_order, strip_debug, config.sort_section, keep_prefix, &order)?;
    stamp_comment(&mut sections);
    define_reserved_symbols(ctx, &sections);
    define_image_bounds(ctx);
    Ok(sections)
}

/// The image bounds an executable's `.symtab` shows whether referenced or not (unless an input
/// or a library defines the name): GNU ld's default script defines `__bss_start`, `_edata` and
/// `_end` always, mold these and `edata`, `end`, `_etext`, `etext` too. The unreferenced ones are
/// hidden, so local: tools (nm, debuggers, `-nmagic`'s users) find the image's end, and nothing
/// is exported that a program did not ask for. Not under a SECTIONS script: there the script
/// says which of them exist.
fn define_image_bounds(ctx: &mut Resolved) {
    if !ctx.kind.is_executable() || ctx.config.oformat_binary {
        return;
    }
    for name in [&b"__bss_start"[..], b"_edata", b"edata", b"_end", b"end", b"_etext", b"etext"] {
        define_synthetic(ctx, name, elf::STV_HIDDEN);
    }
}

/// Every input section's offset in its output section, and the output sections' sizes: common
/// symbols at the end of `.bss`, then the members in order, then the merged pieces' places.
pub fn assign_input_offsets(ctx: &mut Ctx, pieces: MergePieces) -> (InputPlaces, Sizes) {
    let (offsets, commons, sizes) = member_offsets(ctx);
    (place_merged(ctx, pieces, offsets, commons), sizes)
}

/// The members' offsets, where the common symbols go (at the end of `.bss`, made if needed) and
/// every output section's size, before a script's commands are walked between the members.
pub fn member_offsets(ctx: &mut Ctx) -> (InputOffsets, Commons, Sizes) {
    let mut sizes = Sizes::zeroed(&ctx.sections);
    let mut commons = allocate_commons(ctx, &mut sizes);
    let offsets = assign_member_offsets(ctx, &mut commons, &mut sizes);
    (offsets, commons, sizes)
}

/// The input places, once members and commons have their offsets: each merged piece's offset
/// (its owner's offset plus its place in the owner's bytes).
pub fn place_merged(ctx: &Ctx, pieces: MergePieces, offsets: InputOffsets, commons: Commons) -> InputPlaces {
    let base = ctx.merges.sections.iter().map(|&r| offsets[r]).collect();
    InputPlaces { merged: pieces.place(&base), offsets, commons }
}

/// Places common symbols in output sections of their own, `.common` and, for thread-local ones,
/// `.tls_common` (mold's names; GNU ld's default script puts them at the end of `.bss` / `.tbss`,
/// which a `SECTIONS` script still gets here: where its `*(COMMON)` is). Largest alignment first
/// so padding stays small; ties keep symbol order, so the result is deterministic. Where they
/// start in their section is known once its members have offsets.
fn allocate_commons(ctx: &mut Ctx, sizes: &mut Sizes) -> Commons {
    let mut found: [Vec<(SymbolId, u64, u64)>; 2] = Default::default();
    for (id, s) in ctx.symbols.iter_enumerated() {
        if let Def::Common { file, sym } = s.def {
            let sym = &ctx.objects[file].syms[sym as usize];
            let tls = sym.st_info & 0xf == elf::STT_TLS;
            // A common symbol's st_value is its alignment.
            found[tls as usize].push((id, sym.st_size.get(LE), sym.st_value.get(LE).max(1)));
        }
    }
    let scripted = crate::input::script::has_sections(ctx.script_files);
    let mut commons = Commons::default();
    for (tls, mut list) in found.into_iter().enumerate() {
        if list.is_empty() {
            continue;
        }
        list.sort_by_key(|&(_, _, align)| std::cmp::Reverse(align));
        let tls = tls == 1;
        let sec = match (scripted, tls) {
            (true, false) => ensure_bss(ctx, sizes),
            (true, true) => ensure_nobits(ctx, sizes, ".tbss", true),
            (false, false) => ensure_nobits(ctx, sizes, ".common", false),
            (false, true) => ensure_nobits(ctx, sizes, ".tls_common", true),
        };
        let area = commons.areas.len();
        let mut off = 0;
        for (id, size, align) in list {
            off = align_up(off, align);
            commons.at.insert(id, (area, off));
            off += size;
            ctx.sections[sec].align = ctx.sections[sec].align.max(align.min(4096));
        }
        commons.areas.push(CommonArea { section: sec, base: 0, size: off });
    }
    commons
}

/// `--randomize-section-padding`: whether the members of output section `os` may get padding
/// before them. Not where the bytes between members mean something: code cut across files
/// (`.init`, `.fini`), tables read entry by entry (init/fini arrays, `.ctors`, notes,
/// `.eh_frame`), or a section whose name is a C identifier (read from `__start_` to `__stop_`).
fn paddable(os: &OutputSection) -> bool {
    os.is_alloc()
        && !crate::sections::order::is_code_order(&os.name)
        && !crate::sections::order::is_table(&os.name)
        && os.sh_type != object::elf::SHT_NOTE
        && os.name != ".eh_frame"
        && !crate::input::object::is_c_identifier(os.name.as_bytes())
}

/// Offsets of input sections within their output sections, and where the commons start. Each
/// output section's members are walked on a thread of their own (the walk reads every member's
/// header: cxx-big's 85k took 3.5 ms on one), then their offsets put in the table.
fn assign_member_offsets(ctx: &Ctx, commons: &mut Commons, sizes: &mut Sizes) -> InputOffsets {
    use rayon::prelude::*;
    let walked: Vec<Option<(Vec<u64>, u64)>> = ctx
        .sections
        .par_iter()
        .with_max_len(1)
        .map(|os| {
            if os.content != Content::Inputs {
                return None;
            }
            let mut off = os.head.len() as u64;
            // `--randomize-section-padding`: up to 15 times a member's alignment before it.
            let mut pad = ctx
                .config
                .randomize_padding
                .filter(|_| paddable(os))
                .map(|seed| crate::sections::order::seeded(seed, &os.name));
            let at = os
                .members
                .iter()
                .map(|&r| {
                    let align = ctx.objects[r].align().max(1);
                    if let Some(next) = pad.as_mut() {
                        off += next() % 16 * align;
                    }
                    off = align_up(off, align);
                    let at = off;
                    off += ctx.member_size(r.file, r.index);
                    at
                })
                .collect();
            Some((at, off))
        })
        .collect();
    let mut offsets = InputOffsets::new(&ctx.objects);
    for ((si, os), walked) in ctx.sections.iter_enumerated().zip(walked) {
        let Some((at, mut off)) = walked else { continue };
        for (&r, at) in os.members.iter().zip(at) {
            offsets[r] = at;
        }
        if let Some(area) = commons.area_in(si) {
            off = align_up(off, os.align);
            area.base = off;
            off += area.size;
        }
        sizes[si] = off;
    }
    offsets
}

/// Places copies of imported data (COPY relocations), aligned as the library aligned them (the
/// lowest set bit of their address, at most a page and at most its section's alignment), in
/// sections of their own, named as mold names them: `.copyrel.rel.ro` (RELRO) for read-only
/// variables, `.copyrel` (after `.bss`) for the others; under a SECTIONS script, the writable
/// ones go at the end of `.bss`, where GNU ld's scripts put `.dynbss`.
pub fn allocate_copies(ctx: &mut Ctx, tables: &mut Tables, sizes: &mut Sizes) {
    if tables.copies.is_empty() {
        return;
    }
    let read_only =
        |ctx: &Ctx, id: SymbolId| ctx.shared_def(crate::ctx::Target::Global(id)).is_some_and(|d| d.read_only);
    // A read-only variable's copy must become read-only too once relocated (-z relro), or the
    // executable could write what the library's code treats as constant.
    let relro = ctx.config.relro && tables.copies.iter().any(|&id| read_only(ctx, id));
    let relro_sec = relro.then(|| {
        let flags = (elf::SHF_ALLOC | elf::SHF_WRITE) as u64;
        sizes.add(
            &mut ctx.sections,
            OutputSection::new(".copyrel.rel.ro", elf::SHT_NOBITS, flags, 1, Content::Inputs),
            0,
        )
    });
    let scripted = ctx.script_files.iter().any(|f| f.script.has_sections);
    let bss = tables.copies.iter().any(|&id| !(relro && read_only(ctx, id))).then(|| match scripted {
        true => ensure_bss(ctx, sizes),
        false => {
            let flags = (elf::SHF_ALLOC | elf::SHF_WRITE) as u64;
            sizes.add(&mut ctx.sections, OutputSection::new(".copyrel", elf::SHT_NOBITS, flags, 1, Content::Inputs), 0)
        }
    });
    for i in 0..tables.copies.len() {
        let id = tables.copies[i];
        let sec = match relro_sec {
            Some(s) if read_only(ctx, id) => s,
            _ => bss.expect("a writable copy has .bss"),
        };
        let d = ctx.shared_def(crate::ctx::Target::Global(id)).expect("copies are imports");
        let (value, size) = (d.value, d.size);
        // The address's alignment, no more than the library's section asks (lld's rule: a
        // variable at a page boundary by chance needs no page-aligned copy).
        let by_value = if value == 0 { 16 } else { (1u64 << value.trailing_zeros()).min(4096) };
        let align = match d.section_align {
            0 => by_value,
            s => by_value.min(s.max(1)),
        };
        let off = align_up(sizes[sec], align);
        tables.copy_offset.insert(id, (sec, off));
        // Other names the library gives the same variable (`environ`, `__environ`) must resolve
        // to the copy too, or the library keeps using its own stale original under those names.
        for alias in aliases_of(ctx, id) {
            tables.copy_offset.insert(alias, (sec, off));
        }
        sizes[sec] = off + size.max(1);
        ctx.sections[sec].align = ctx.sections[sec].align.max(align);
    }
}

/// Symbols of the same library defined at the same address as `id`, added to the symbol table.
fn aliases_of(ctx: &mut Ctx, id: SymbolId) -> Vec<SymbolId> {
    let Def::Shared { file, sym } = ctx.symbols[id].def else { return Vec::new() };
    let lib = &ctx.shared[file].file;
    let value = lib.defined[sym as usize].value;
    let others: Vec<(u32, &[u8])> = lib
        .defined
        .iter()
        .enumerate()
        .filter(|(i, d)| *i as u32 != sym && d.value == value && !d.hidden && d.sym_type == elf::STT_OBJECT)
        .map(|(i, d)| (i as u32, d.name))
        .collect();
    let mut ids = Vec::new();
    for (i, name) in others {
        let alias = match ctx.by_name.get(&ctx.symbols, name) {
            Some(a) => a,
            None => {
                let weak = lib_weak(ctx, file, i);
                let a = ctx.symbols.push(crate::resolve::Symbol {
                    def: Def::Shared { file, sym: i },
                    weak,
                    ..crate::resolve::Symbol::undefined(name)
                });
                let r: &mut Resolved = ctx;
                r.by_name.insert(&r.symbols, a);
                a
            }
        };
        if ctx.symbols[alias].def == (Def::Shared { file, sym: i }) && alias != id {
            ids.push(alias);
        }
    }
    ids
}

fn lib_weak(ctx: &Ctx, file: SharedId, sym: u32) -> bool {
    ctx.shared[file].file.defined[sym as usize].weak
}

/// The first `.bss` output section, made if there is none (common symbols and copies of
/// shared-library variables go at its end).
fn ensure_bss(ctx: &mut Ctx, sizes: &mut Sizes) -> OutputSectionId {
    ensure_nobits(ctx, sizes, ".bss", false)
}

/// The writable zero-filled output section `name` (thread-local with `tls`), made if needed.
fn ensure_nobits(ctx: &mut Ctx, sizes: &mut Sizes, name: &str, tls: bool) -> OutputSectionId {
    match ctx.sections.position(|s| s.name == name) {
        Some(i) => i,
        None => {
            let tls = if tls { elf::SHF_TLS } else { 0 };
            let flags = (elf::SHF_ALLOC | elf::SHF_WRITE | tls) as u64;
            sizes.add(&mut ctx.sections, OutputSection::new(name, elf::SHT_NOBITS, flags, 1, Content::Inputs), 0)
        }
    }
}

/// The class of the sections that `--separate-debug-file` moves: after every other section, so
/// that the sections both files list have the same index in both.
const CLASS_DEBUG_FILE: u8 = u8::MAX;

/// Whether `--separate-debug-file` moves output section `i` to the debug file: the non-loaded
/// `.debug_*` sections, `.gdb_index` and the symbol table (what mold moves), and `--emit-relocs`'
/// relocation sections, which refer to that symbol table.
pub fn to_debug_file(ctx: &Ctx, i: OutputSectionId) -> bool {
    let s = &ctx.sections[i];
    let moved = matches!(s.content, Content::GdbIndex | Content::Symtab | Content::Strtab | Content::EmittedRelocs);
    ctx.config.separate_debug_file.is_some() && !s.is_alloc() && (s.name.starts_with(".debug_") || moved)
}

/// Sorts sections into segment order: by class, then rank, then first appearance.
pub(crate) fn sort_order(
    ctx: &Ctx,
    places: &mut IdVec<OutputSectionId, Placement>,
    inserted: &[(OutputSectionId, OutputSectionId, i32)],
) -> Vec<OutputSectionId> {
    for (i, s) in ctx.sections.iter_enumerated() {
        let (class, rank) = class_rank(&s.name, s.flags, s.sh_type);
        let (class, rank) = match () {
            _ if to_debug_file(ctx, i) => (CLASS_DEBUG_FILE, rank),
            // Last: only the output has it, the debug file lists every other section.
            _ if s.content == Content::GnuDebuglink => (CLASS_DEBUG_FILE, u8::MAX),
            _ => (class, rank),
        };
        places[i].key = (class, rank, i.as_u32(), 0);
    }
    for &(id, at, rel) in inserted {
        let k = places[at].key;
        places[id].key = (k.0, k.1, k.2, rel);
    }
    // Sections given an address (`-Ttext`, `--section-start`...) go first, by address, and the
    // others follow the last of them (lld's order: the ELF headers then have a PT_LOAD of their
    // own at the image base). The key keeps each section's class, which decides its segment.
    let mut order: Vec<OutputSectionId> = ctx.sections.ids().collect();
    order.sort_by_key(|&i| (start_address(ctx, i).map_or((1, 0), |a| (0, a)), places[i].key));
    order
}

/// The address `-Ttext`/`-Tdata`/`-Tbss`/`--section-start` gives output section `i` (the last one
/// given wins, as in GNU ld).
fn start_address(ctx: &Ctx, i: OutputSectionId) -> Option<u64> {
    let s = &ctx.sections[i];
    if !s.is_alloc() {
        return None;
    }
    ctx.config.section_starts.iter().rev().find(|(name, _)| *name == s.name).map(|&(_, a)| a)
}

/// The TLS sections' extent while they are placed: addresses (start, end of memory), the largest
/// alignment, and where their file bytes end.
#[derive(Clone, Copy)]
pub struct TlsExtent {
    pub start: u64,
    pub end: u64,
    pub align: u64,
    pub file_end: u64,
}

impl TlsExtent {
    /// Grows `t` by a TLS section placed at `addr` (`size` bytes, aligned to `align`); `file_end`:
    /// where its file bytes end, None for TLS bss. Every layout engine places TLS sections this way.
    pub fn grow(t: &mut Option<TlsExtent>, addr: u64, size: u64, align: u64, file_end: Option<u64>) {
        let t = t.get_or_insert(TlsExtent { start: addr, end: addr, align: 1, file_end: 0 });
        t.start = t.start.min(addr);
        t.end = t.end.max(addr + size);
        t.align = t.align.max(align);
        if let Some(e) = file_end {
            t.file_end = t.file_end.max(e);
        }
    }

    /// The TLS block: the extent rounded up to its alignment (none without TLS sections).
    pub fn block(t: Option<TlsExtent>) -> Tls {
        t.map_or(Tls::default(), |t| Tls {
            start: t.start,
            end: t.start + align_up(t.end - t.start, t.align),
            align: t.align,
        })
    }
}

/// The ELF file's frame around the loaded sections: the address the image is linked at, the size
/// of the ELF and program headers, whether a PT_PHDR describes the table (a program that names
/// an interpreter, with its headers loaded), and the TLS extent with its first section's file
/// offset.
#[derive(Clone, Copy)]
pub struct Frame {
    pub base: u64,
    pub headers: u64,
    pub phdr: bool,
    pub tls: Option<(TlsExtent, u64)>,
}

impl Frame {
    /// PT_PHDR: the program header table, right after the ELF header.
    pub fn table_phdr(&self) -> Phdr {
        Phdr {
            p_type: elf::PT_PHDR,
            flags: elf::PF_R,
            offset: EHDR_SIZE,
            vaddr: self.base + EHDR_SIZE,
            paddr: None,
            filesz: self.headers - EHDR_SIZE,
            memsz: self.headers - EHDR_SIZE,
            align: 8,
        }
    }
}

/// What follows the loaded sections in the file: the section names and where the section header
/// table and the file end.
pub struct Tail {
    pub shstrtab: Vec<u8>,
    pub sh_name: Vec<u32>,
    pub shoff: u64,
    pub file_size: u64,
}

/// After the loaded sections (`alloc_end`), for every layout engine: the section indices in
/// `order`, and so `.shstrtab`'s size; then the non-alloc sections, `.shstrtab` among them, and the
/// section header table.
pub fn place_tail(
    ctx: &Ctx,
    synthetic: &SyntheticIds,
    sizes: &mut Sizes,
    places: &mut IdVec<OutputSectionId, Placement>,
    order: &[OutputSectionId],
    alloc_end: u64,
) -> Tail {
    let (shstrtab, sh_name) = assign_section_indices(ctx, sizes, places, order);
    let shstr = synthetic.get(Content::Shstrtab).expect(".shstrtab is always made");
    sizes[shstr] = shstrtab.len() as u64;
    let (shoff, file_size) = place_non_alloc(ctx, sizes, &Compressed::default(), places, alloc_end);
    Tail { shstrtab, sh_name, shoff, file_size }
}

/// PT_GNU_RELRO over `[vaddr, end)` at file `offset`, its file bytes ending at `file_end`. Its
/// memory reaches to the end of the last common-size page (`common`) when nothing else starts on
/// that page (`next`: the next loaded section's address), so that the loader, which protects
/// whole pages, can make that whole tail read-only; never past it: past the RELRO segment's last
/// page nothing may be mapped.
pub fn relro_phdr(offset: u64, vaddr: u64, end: u64, file_end: u64, next: Option<u64>, common: u64) -> Phdr {
    let rounded = align_up(end, common);
    let end = if next.is_none_or(|n| n >= rounded) { rounded } else { end };
    let memsz = end - vaddr;
    Phdr {
        p_type: elf::PT_GNU_RELRO,
        flags: elf::PF_R,
        offset,
        vaddr,
        paddr: None,
        filesz: (file_end - offset).min(memsz),
        memsz,
        align: 1,
    }
}

/// What each layout engine ends with, from which `Layout::sealed` makes the one `Layout` value.
pub struct Sealed {
    pub places: IdVec<OutputSectionId, Placement>,
    pub base: u64,
    pub tls: Option<TlsExtent>,
    pub phdrs: Vec<Phdr>,
    pub phoff: u64,
    pub alloc_end: u64,
    pub tail: Tail,
    pub synthetic: SyntheticIds,
}

struct LoadPlan {
    sections: Vec<OutputSectionId>,
    flags: u32,
    relro: bool,
}

/// Groups sorted alloc sections into PT_LOADs: headers+notes (R), code (RX), read-only data (R),
/// RELRO data (RW), other data and bss (RW). Without `-z separate-code` the first three share one
/// RX segment, as GNU ld does; `--rosegment` keeps them apart all the same and `--no-rosegment`
/// puts them together all the same (lld's single RX segment).
fn plan_loads(ctx: &Ctx, places: &IdVec<OutputSectionId, Placement>, order: &[OutputSectionId]) -> Vec<LoadPlan> {
    // --execute-only: code in a segment of its own, which nothing else may need to read.
    let separate = ctx.config.execute_only || ctx.config.rosegment.unwrap_or(ctx.config.separate_code);
    let code = code_flags(ctx.config);
    // --oformat=binary has no segments: its sections follow each other as in one -N segment.
    let omagic = ctx.config.omagic || ctx.config.oformat_binary;
    let relro = ctx.config.relro && !omagic && !ctx.config.nmagic;
    let mut loads: Vec<LoadPlan> = Vec::new();
    let segment_of = |class: u8| -> (u8, u32, bool) {
        match class {
            // -N: everything in one segment that can be read, written and executed.
            _ if omagic => (0, elf::PF_R | elf::PF_W | elf::PF_X, false),
            CLASS_HEADERS if !separate => (0, elf::PF_R | elf::PF_X, false),
            CLASS_TEXT if !separate => (0, elf::PF_R | elf::PF_X, false),
            CLASS_RODATA if !separate => (0, elf::PF_R | elf::PF_X, false),
            CLASS_HEADERS => (0, elf::PF_R, false),
            CLASS_TEXT => (1, code, false),
            CLASS_RODATA => (2, elf::PF_R, false),
            CLASS_RELRO if relro => (3, elf::PF_R | elf::PF_W, true),
            _ => (4, elf::PF_R | elf::PF_W, false),
        }
    };
    let mut current: Option<u8> = None;
    loads.push(LoadPlan { sections: Vec::new(), flags: segment_of(CLASS_HEADERS).1, relro: false });
    current.replace(0);
    for &i in order {
        let s = &ctx.sections[i];
        if !s.is_alloc() {
            continue;
        }
        let (seg, mut flags, is_relro) = segment_of(places[i].key.0);
        // Writable code (an "awx" section, placed with the data) makes a segment of its own that
        // can also be executed, as lld splits segments where the flags change.
        if s.flags & elf::SHF_EXECINSTR as u64 != 0 && flags & elf::PF_W != 0 {
            flags |= elf::PF_X;
        }
        // A section placed by -Ttext/--section-start starts a PT_LOAD of its own (with the flags
        // of the one it splits; a split RELRO segment keeps its protection on the first part).
        let placed = start_address(ctx, i).is_some();
        if current != Some(seg) || placed || loads.last().is_some_and(|l| l.flags != flags) {
            loads.push(LoadPlan { sections: Vec::new(), flags, relro: is_relro && current != Some(seg) });
            current = Some(seg);
        }
        loads.last_mut().unwrap().sections.push(i);
    }
    loads
}

/// The flags of a segment of code: PF_R | PF_X, or PF_X alone with `--execute-only` (mold's
/// meaning on x86-64, where the processor reads such pages all the same but the loader maps them
/// without PROT_READ, which a kernel with execute-only memory keeps).
pub fn code_flags(config: &crate::args::Config) -> u32 {
    if config.execute_only {
        elf::PF_X
    } else {
        elf::PF_R | elf::PF_X
    }
}

/// `--spare-program-headers=N`: the N PT_NULL entries that end the program headers.
pub fn spare_phdrs(config: &crate::args::Config) -> impl Iterator<Item = Phdr> {
    std::iter::repeat_n(Phdr { p_type: elf::PT_NULL, ..Default::default() }, config.spare_program_headers)
}

/// Assigns addresses and offsets and builds the program headers and section header indices.
/// `synthetic`: where the linker's own sections are; the layout keeps it. `sizes`: every
/// section's size (`.shstrtab`'s is set here, once section names are known).
pub fn assign_addresses(ctx: &Ctx, synthetic: &SyntheticIds, sizes: &mut Sizes) -> Layout {
    assign_addresses_with(ctx, synthetic, sizes, &[])
}

/// `assign_addresses`, with sections a script `INSERT`s next to others of the default layout:
/// (section, the section it goes next to, its place there: < 0 before, > 0 after).
pub fn assign_addresses_with(
    ctx: &Ctx,
    synthetic: &SyntheticIds,
    sizes: &mut Sizes,
    inserted: &[(OutputSectionId, OutputSectionId, i32)],
) -> Layout {
    let mut places: IdVec<OutputSectionId, Placement> = ctx.sections.iter().map(|_| Placement::default()).collect();
    let order = sort_order(ctx, &mut places, inserted);
    let loads = plan_loads(ctx, &places, &order);
    // -N: sections are not page-aligned (its one segment keeps its most aligned section's
    // alignment; loaded at a page-aligned base, its offsets stay congruent to its addresses).
    // -N, -n and raw binaries have no page alignment (lld's page size of 1).
    let unpaged = ctx.config.omagic || ctx.config.nmagic || ctx.config.oformat_binary;
    let page = if unpaged { 1 } else { ctx.config.max_page_size.max(4096) };
    let common = if page == 1 { 1 } else { ctx.config.common_page_size.clamp(4096, page) };
    let has = |c: Content| synthetic.get(c).is_some();
    let tls_secs: Vec<OutputSectionId> =
        order.iter().copied().filter(|&i| ctx.sections[i].is_alloc() && ctx.sections[i].is_tls()).collect();
    let note_runs = note_runs(ctx, sizes, &order);
    let pie = ctx.kind.is_pic();
    let has_interp = has(Content::Interp);
    let nphdr = loads.len()
        + headers_around_loads_count(ctx, synthetic, has_interp, note_runs.len(), !tls_secs.is_empty())
        + loads.iter().any(|l| l.relro && !l.sections.is_empty()) as usize
        + ctx.config.spare_program_headers;
    let base = match ctx.config.image_base {
        Some(b) => b,
        None if pie => 0,
        None => 0x400000,
    };
    // --oformat=binary: the headers are not loaded (there are none), as in lld.
    let headers = if ctx.config.oformat_binary { 0 } else { EHDR_SIZE + PHDR_SIZE * nphdr as u64 };
    let mut va = base + headers;
    let mut off = headers;
    let mut phdrs = Vec::new();
    let mut tls: Option<TlsExtent> = None;
    let mut relro_range: Option<(u64, u64, u64)> = None;
    // Whether a section with file bytes has been placed yet.
    let mut placed_bytes = false;
    for (li, load) in loads.iter().enumerate() {
        let mut seg_va = base;
        let mut placed = None;
        if li > 0 {
            if load.sections.is_empty() {
                continue;
            }
            let prev_end = va;
            placed = start_address(ctx, load.sections[0]);
            // A segment's address is congruent to its file offset modulo the maximum page size,
            // and it starts on a page of its own in memory; in the file it only starts a new
            // common-size page (as GNU ld and lld do: `-z max-page-size=2M` must not pad the file
            // by megabytes). Executable segments under `-z separate-code`, every segment under
            // `-z separate-loadable-segments`, and segments placed at an address start a
            // maximum-size page in the file too.
            let exec_edge =
                ctx.config.separate_code && (load.flags & elf::PF_X != 0 || loads[li - 1].flags & elf::PF_X != 0);
            if placed.is_some() || exec_edge || ctx.config.separate_loadable_segments {
                off = align_up(off, page);
            } else {
                off = align_up(off, common);
            }
            // A section aligned beyond the page (`aligned(16384)`) makes its whole segment so
            // aligned, so that a PIE loaded at any multiple of p_align keeps it aligned.
            let seg_align = segment_align(ctx, load, page);
            va = align_up(va, seg_align) + off % seg_align;
            seg_va = va;
            // `--randomize-section-padding`: the segment's sections start up to 15 times 64
            // bytes into it (lld pads segment starts too).
            if let (Some(seed), None) = (ctx.config.randomize_padding, placed) {
                va += crate::sections::order::seeded(seed, &format!("segment {li}"))() % 16 * 64;
            }
            if let Some(a) = placed {
                // The segment starts on the page holding the address; that page must come after
                // the previous segment's last one, which it would otherwise replace when mapped.
                let name = &ctx.sections[load.sections[0]].name;
                // A raw binary has no segments: the first section with bytes may lie anywhere.
                let first_bytes = ctx.config.oformat_binary && !placed_bytes;
                if a & !(page - 1) < va && !first_bytes {
                    ctx.diag.error(format!(
                        "-T/--section-start: section {name} cannot start at {a:#x}: the sections before \
                         it end at {prev_end:#x} and it starts a segment of its own, so its page must \
                         come after theirs (the lowest such address is {va:#x})"
                    ));
                } else {
                    let align = ctx.sections[load.sections[0]].align;
                    if a % align != 0 {
                        ctx.diag.warn(format!(
                            "address {a:#x} of section {name} is not a multiple of its alignment ({align})"
                        ));
                    }
                    seg_va = a & !(page - 1);
                    va = a;
                }
            }
        }
        let seg_off = if li == 0 { 0 } else { off };
        let mut file_end = off;
        // Where the next TLS-bss section may start: TLS bss takes no address space outside the
        // TLS template, but several such sections must not overlap inside it.
        let mut tbss_end = 0u64;
        for (k, &i) in load.sections.iter().enumerate() {
            let (s, size) = (&ctx.sections[i], sizes[i]);
            let tbss = s.is_tls() && s.is_nobits();
            if k > 0 || placed.is_none() {
                va = align_up(va, s.align);
            }
            off = seg_off + (va - seg_va);
            let at = if tbss { align_up(va.max(tbss_end), s.align) } else { va };
            places[i].addr = at;
            places[i].offset = off;
            if tbss {
                tbss_end = at + size;
            }
            if s.is_tls() {
                TlsExtent::grow(&mut tls, at, size, s.align, (!tbss).then_some(off + size));
            }
            if tbss {
                continue; // .tbss occupies no address space outside the TLS template.
            }
            placed_bytes |= !s.is_nobits() && size > 0;
            va += size;
            if !s.is_nobits() {
                off += size;
                file_end = off;
            }
        }
        if load.relro {
            // The RELRO segment reaches to the end of its last common-size page, which PT_GNU_RELRO
            // protects: memory the loader mprotects must be mapped (with `-z common-page-size`
            // above the system's page, the page rounding of the mapping alone would not cover it).
            va = align_up(va, common);
        }
        let filesz = file_end - seg_off;
        phdrs.push(Phdr {
            p_type: elf::PT_LOAD,
            flags: load.flags,
            offset: seg_off,
            vaddr: seg_va,
            paddr: None,
            filesz,
            memsz: va - seg_va,
            align: segment_align(ctx, load, page),
        });
        off = file_end;
        if load.relro {
            relro_range = Some((seg_off, seg_va, va - seg_va));
        }
    }
    let alloc_end = off;
    let tail = place_tail(ctx, synthetic, sizes, &mut places, &order, alloc_end);
    let tls_phdr = tls.map(|t| (t, places[tls_secs[0]].offset));
    let frame = Frame { base, headers, phdr: has_interp, tls: tls_phdr };
    let mut all = headers_around_loads(ctx, synthetic, sizes, &places, &frame, phdrs, &note_runs);
    if let Some((offset, vaddr, memsz)) = relro_range {
        // The next segment starts on a page of its own: the RELRO one is rounded up to the
        // common page.
        let file_end = offset + relro_file_size(ctx, sizes, &places, &loads);
        all.push(relro_phdr(offset, vaddr, vaddr + memsz, file_end, None, common));
    }
    all.extend(spare_phdrs(ctx.config));
    debug_assert_eq!(all.len(), nphdr);
    Layout::sealed(Sealed { places, base, tls, phdrs: all, phoff: EHDR_SIZE, alloc_end, tail, synthetic: *synthetic })
}

/// How many program headers `headers_around_loads` writes around the loads: PT_PHDR when `phdr`,
/// PT_INTERP, PT_DYNAMIC, one PT_NOTE per run of `notes`, PT_TLS when `tls`, PT_GNU_PROPERTY,
/// PT_GNU_EH_FRAME and PT_GNU_STACK, each when the output has what it describes.
pub fn headers_around_loads_count(ctx: &Ctx, synthetic: &SyntheticIds, phdr: bool, notes: usize, tls: bool) -> usize {
    let has = |c: Content| synthetic.get(c).is_some() as usize;
    phdr as usize
        + has(Content::Interp)
        + has(Content::Dynamic)
        + notes
        + tls as usize
        + has(Content::GnuProperty)
        + has(Content::EhFrameHdr)
        + ctx.config.gnustack as usize
}

/// The program headers around the PT_LOADs, in GNU ld's order: PT_PHDR (when `frame.phdr`: a
/// program that names an interpreter, and the headers are loaded), PT_INTERP, the loads, PT_DYNAMIC, a
/// PT_NOTE per run of notes, PT_TLS (`frame.tls`),
/// PT_GNU_PROPERTY, PT_GNU_EH_FRAME, PT_GNU_STACK. PT_GNU_RELRO (`relro_phdr`) is the caller's,
/// which knows the RELRO sections.
pub fn headers_around_loads(
    ctx: &Ctx,
    synthetic: &SyntheticIds,
    sizes: &Sizes,
    places: &IdVec<OutputSectionId, Placement>,
    frame: &Frame,
    loads: Vec<Phdr>,
    note_runs: &[Vec<OutputSectionId>],
) -> Vec<Phdr> {
    let mut all = Vec::new();
    // PT_PHDR is for the dynamic loader, which reads it in programs that name an interpreter
    // (GNU ld writes it only then; a static PIE or a shared library has none).
    if frame.phdr {
        all.push(frame.table_phdr());
    }
    let section_phdr = |c: Content, p_type: u32, flags: u32| {
        let id = synthetic.get(c)?;
        let p = &places[id];
        Some(Phdr {
            p_type,
            flags,
            offset: p.offset,
            vaddr: p.addr,
            paddr: None,
            filesz: sizes[id],
            memsz: sizes[id],
            align: ctx.sections[id].align,
        })
    };
    all.extend(section_phdr(Content::Interp, elf::PT_INTERP, elf::PF_R));
    all.extend(loads);
    let dynamic_flags = if ctx.config.rodynamic { elf::PF_R } else { elf::PF_R | elf::PF_W };
    all.extend(section_phdr(Content::Dynamic, elf::PT_DYNAMIC, dynamic_flags));
    for run in note_runs {
        let (first, last) = (run[0], *run.last().unwrap());
        let size = places[last].addr + sizes[last] - places[first].addr;
        all.push(Phdr {
            p_type: elf::PT_NOTE,
            flags: elf::PF_R,
            offset: places[first].offset,
            vaddr: places[first].addr,
            paddr: None,
            filesz: size,
            memsz: size,
            align: ctx.sections[first].align,
        });
    }
    if let Some((tls, first_offset)) = frame.tls {
        all.push(Phdr {
            p_type: elf::PT_TLS,
            flags: elf::PF_R,
            offset: first_offset,
            vaddr: tls.start,
            paddr: None,
            filesz: tls.file_end.saturating_sub(first_offset),
            memsz: tls.end - tls.start,
            align: tls.align,
        });
    }
    all.extend(section_phdr(Content::GnuProperty, elf::PT_GNU_PROPERTY, elf::PF_R));
    all.extend(section_phdr(Content::EhFrameHdr, elf::PT_GNU_EH_FRAME, elf::PF_R));
    let stack_flags = if ctx.exec_stack { elf::PF_R | elf::PF_W | elf::PF_X } else { elf::PF_R | elf::PF_W };
    let stack = ctx.config.stack_size;
    if ctx.config.gnustack {
        all.push(Phdr { p_type: elf::PT_GNU_STACK, flags: stack_flags, align: 16, memsz: stack, ..Default::default() });
    }
    all
}

/// A PT_LOAD's alignment: the page, or its most aligned section's alignment when that is larger.
fn segment_align(ctx: &Ctx, load: &LoadPlan, page: u64) -> u64 {
    load.sections.iter().map(|&i| ctx.sections[i].align).fold(page, u64::max)
}

/// File offsets of the non-alloc sections, in section order from `from` (the end of the loaded
/// ones), then the section header table: gives (its offset, the file size). Run again when
/// non-alloc sizes change after layout (`--compress-debug-sections`).
pub fn place_non_alloc(
    ctx: &Ctx,
    sizes: &Sizes,
    compressed: &Compressed,
    placed: &mut IdVec<OutputSectionId, Placement>,
    from: u64,
) -> (u64, u64) {
    // With --separate-debug-file the main output has no debug sections (`split_debug_file`).
    let mut order: Vec<OutputSectionId> = ctx
        .sections
        .ids()
        .filter(|&i| {
            let moved = to_debug_file(ctx, i) && placed[i].shndx == 0;
            !ctx.sections[i].is_alloc() && !moved
        })
        .collect();
    order.sort_by_key(|&i| placed[i].key);
    let mut off = from;
    for i in order {
        off = align_up(off, compressed.align(i, &ctx.sections[i]));
        placed[i].addr = 0;
        placed[i].offset = off;
        off += sizes[i];
    }
    let shoff = align_up(off, 8);
    let nsh = 1 + placed.iter().filter(|p| p.shndx != 0).count() as u64;
    (shoff, shoff + nsh * SHDR_SIZE)
}

/// `--separate-debug-file`: `lay` (every section, the debug ones indexed last) becomes the main
/// output's layout, without the debug sections; the returned layout is the debug file's, as
/// `objcopy --only-keep-debug` would make it from the whole output: the same section headers
/// (same indices and addresses), the loaded sections as SHT_NOBITS except the notes (the build-id
/// identifies the file), `.shstrtab`, then the debug sections; the program headers of the output,
/// with no file bytes but the headers' and the notes'. Its last 4 bytes are left for the CRC
/// trailer (`synthetic::debug_file`).
pub fn split_debug_file(ctx: &Ctx, lay: &mut Layout) -> Layout {
    let mut dbg = lay.clone();
    let debuglink = lay.synthetic.get(Content::GnuDebuglink);
    if let Some(link) = debuglink {
        dbg.sections[link].shndx = 0;
    }
    let headers = EHDR_SIZE + PHDR_SIZE * lay.phdrs.len() as u64;
    // The debug file: headers, the notes where they are in the output, then the rest in order.
    let mut order: Vec<OutputSectionId> = ctx.sections.ids().filter(|&i| dbg.sections[i].shndx != 0).collect();
    order.sort_by_key(|&i| dbg.sections[i].shndx);
    let mut off = headers;
    let mut notes_end = headers;
    for &i in &order {
        let (s, size) = (&ctx.sections[i], lay.sizes[i]);
        let p = &mut dbg.sections[i];
        if s.is_alloc() && s.sh_type == elf::SHT_NOTE {
            notes_end = notes_end.max(p.offset + size);
            off = off.max(notes_end);
        } else if to_debug_file(ctx, i) || s.content == Content::Shstrtab {
            off = align_up(off, lay.compressed.align(i, s));
            p.offset = off;
            off += size;
        } else {
            p.stub = true;
            p.offset = off;
        }
    }
    dbg.shoff = align_up(off, 8);
    dbg.file_size = dbg.shoff + (1 + order.len() as u64) * SHDR_SIZE + 4;
    for ph in &mut dbg.phdrs {
        ph.filesz = match ph.p_type {
            elf::PT_PHDR | elf::PT_NOTE | elf::PT_GNU_PROPERTY => ph.filesz,
            elf::PT_LOAD if ph.offset == 0 => ph.filesz.min(notes_end),
            _ => 0,
        };
    }
    // The main output: the debug sections are not in it; `.gnu_debuglink` follows the others.
    for i in ctx.sections.ids() {
        if to_debug_file(ctx, i) {
            lay.sections[i].shndx = 0;
        }
    }
    if let Some(link) = debuglink {
        lay.sections[link].shndx = 0;
        lay.sections[link].shndx = 1 + lay.emitted_count() as u32;
    }
    (lay.shoff, lay.file_size) = place_non_alloc(ctx, &lay.sizes, &lay.compressed, &mut lay.sections, lay.alloc_end);
    dbg
}

/// `--oformat=binary`: the file becomes the memory image of the loaded sections that have bytes,
/// from the lowest address to the end of the highest (lld's and GNU ld's raw binary): each such
/// section at its address minus the lowest; everything else (headers, non-loaded sections) is
/// left out.
pub fn make_binary_image(ctx: &Ctx, lay: &mut Layout) {
    let has_bytes: Vec<bool> = ctx
        .sections
        .iter_enumerated()
        .map(|(i, s)| s.is_alloc() && !s.is_nobits() && lay.sizes[i] > 0 && lay.sections[i].shndx != 0)
        .collect();
    let min = ctx.sections.ids().filter(|i| has_bytes[i.index()]).map(|i| lay.sections[i].addr).min().unwrap_or(0);
    let mut end = 0;
    for i in ctx.sections.ids() {
        let p = &mut lay.sections[i];
        if !ctx.sections[i].is_alloc() {
            p.shndx = 0;
        } else if has_bytes[i.index()] {
            p.offset = p.addr - min;
            end = end.max(p.offset + lay.sizes[i]);
        } else {
            p.stub = true;
        }
    }
    lay.raw = true;
    lay.shoff = 0;
    lay.file_size = end;
}

/// `-z nosectionheader`: the file ends with the loaded sections. With no section header table
/// nothing can find a section that is not loaded (`.symtab`, `.strtab`, `.shstrtab`, `.comment`,
/// debug information), so those are left out, as lld leaves them out; the loaded sections keep
/// their indices (the dynamic symbols' `st_shndx` only needs to say "defined").
pub fn drop_section_headers(ctx: &Ctx, lay: &mut Layout) {
    for i in ctx.sections.ids() {
        if !ctx.sections[i].is_alloc() {
            lay.sections[i].shndx = 0;
        }
    }
    lay.no_section_headers = true;
    lay.shoff = 0;
    lay.file_size = lay.alloc_end;
}

fn relro_file_size(ctx: &Ctx, sizes: &Sizes, placed: &IdVec<OutputSectionId, Placement>, loads: &[LoadPlan]) -> u64 {
    let Some(l) = loads.iter().find(|l| l.relro && !l.sections.is_empty()) else {
        return 0;
    };
    let first = placed[l.sections[0]].offset;
    let end = l
        .sections
        .iter()
        .filter(|&&i| !ctx.sections[i].is_nobits())
        .map(|&i| placed[i].offset + sizes[i])
        .max()
        .unwrap_or(first);
    align_up(end, 4096) - first
}

/// Consecutive note sections with the same alignment share one PT_NOTE (as GNU ld does).
pub fn note_runs(ctx: &Ctx, sizes: &Sizes, order: &[OutputSectionId]) -> Vec<Vec<OutputSectionId>> {
    let mut runs: Vec<Vec<OutputSectionId>> = Vec::new();
    let mut last_align = 0;
    let mut prev_was_note = false;
    for &i in order {
        let s = &ctx.sections[i];
        let is_note = s.is_alloc() && s.sh_type == elf::SHT_NOTE && sizes[i] > 0;
        if is_note {
            if prev_was_note && s.align == last_align {
                runs.last_mut().unwrap().push(i);
            } else {
                runs.push(vec![i]);
            }
            last_align = s.align;
        }
        prev_was_note = is_note;
    }
    runs
}

/// Section header indices (in file order) and the `.shstrtab` bytes. Empty linker-made sections
/// are left out; empty input-made sections stay (symbols may point into them).
pub fn assign_section_indices(
    ctx: &Ctx,
    sizes: &Sizes,
    placed: &mut IdVec<OutputSectionId, Placement>,
    order: &[OutputSectionId],
) -> (Vec<u8>, Vec<u32>) {
    let mut shstrtab = vec![0u8];
    let mut sh_name = vec![0u32; ctx.sections.len()];
    let mut next = 1;
    for &i in order {
        let s = &ctx.sections[i];
        let keep = s.content == Content::Inputs || sizes[i] > 0 || s.content == Content::Shstrtab;
        if !keep {
            continue;
        }
        placed[i].shndx = next;
        next += 1;
        sh_name[i.index()] = shstrtab.len() as u32;
        shstrtab.extend_from_slice(s.name.as_bytes());
        shstrtab.push(0);
    }
    (shstrtab, sh_name)
}

/// Names the linker defines when they are referenced but not defined by any input.
pub fn is_reserved(name: &[u8], output_names: &[&str]) -> bool {
    const FIXED: &[&[u8]] = &[
        b"__ehdr_start",
        b"__executable_start",
        b"_GLOBAL_OFFSET_TABLE_",
        b"_DYNAMIC",
        b"__rela_iplt_start",
        b"__rela_iplt_end",
        b"__init_array_start",
        b"__init_array_end",
        b"__fini_array_start",
        b"__fini_array_end",
        b"__preinit_array_start",
        b"__preinit_array_end",
        b"_end",
        b"end",
        b"_edata",
        b"edata",
        b"__bss_start",
        b"_etext",
        b"etext",
        b"__etext",
        b"__GNU_EH_FRAME_HDR",
        b"_TLS_MODULE_BASE_",
    ];
    if FIXED.contains(&name) {
        return true;
    }
    is_start_stop_of(name, output_names)
}

/// `__start_SEC` or `__stop_SEC` for one of the output sections named.
fn is_start_stop_of(name: &[u8], output_names: &[&str]) -> bool {
    let section = crate::resolve::start_stop_section(name);
    section.is_some_and(|(s, _)| output_names.iter().any(|n| n.as_bytes() == s))
}

/// Turns referenced-but-undefined reserved names into linker-defined symbols. A `__start_SEC` or
/// `__stop_SEC` takes `-z start-stop-visibility` (protected unless asked), or the references' if
/// more constraining, as lld's do: a shared library exports it unless that makes it hidden. It is
/// defined even where a shared library defines the name (lld and GNU ld): the output's own section
/// is what its code means, and a library's protected one could only be reached by a copy.
pub fn define_reserved_symbols(ctx: &mut Resolved, sections: &IdVec<OutputSectionId, OutputSection>) {
    let names: Vec<&str> = sections.iter().map(|s| s.name.as_str()).collect();
    let static_pie = ctx.kind == OutputKind::StaticPie;
    let dynamic = ctx.kind.is_dynamic();
    let start_stop_visibility = ctx.config.start_stop_visibility;
    for s in &mut ctx.symbols {
        let imported_start_stop = matches!(s.def, Def::Shared { .. }) && is_start_stop_of(s.name, &names);
        if !(matches!(s.def, Def::Undefined | Def::Lazy { .. }) || imported_start_stop) || !s.referenced {
            continue;
        }
        // GNU ld defines the IRELATIVE bounds only for non-PIE static executables; a static PIE
        // applies its IRELATIVEs through DT_JMPREL, and libc must not apply them twice.
        if (static_pie || dynamic) && s.name.starts_with(b"__rela_iplt_") {
            continue;
        }
        if (static_pie || dynamic) && s.name == b"_DYNAMIC" || is_reserved(s.name, &names) {
            s.def = Def::Synthetic;
            s.weak = false;
            if s.is_start_stop() {
                s.visibility = crate::resolve::merge_visibility(s.visibility, start_stop_visibility);
            }
        }
    }
    if ctx.config.start_stop || ctx.config.export_start_stop {
        define_all_start_stop(ctx, sections);
    }
    if ctx.config.physical_image_base.is_some() {
        define_physical_start_stop(ctx, sections);
    }
    // --section-order's `!SYMBOL` words, and `__ehdr_start` where it places the ELF header
    // (mold defines it whether referenced or not: the symbol says where the layout put it).
    for item in &ctx.config.section_order {
        match item {
            crate::args::SectionOrderItem::Symbol(name) => {
                define_synthetic(ctx, intern(name.as_bytes().to_vec()), elf::STV_DEFAULT)
            }
            crate::args::SectionOrderItem::Section(s) if s == "EHDR" => {
                define_synthetic(ctx, b"__ehdr_start", elf::STV_HIDDEN)
            }
            _ => {}
        }
    }
}

/// The name `--start-stop` gives a loaded output section in `__start_NAME` / `__stop_NAME`
/// (mold's rule): a C identifier as it is; otherwise without its leading dot, every character
/// that is not an ASCII letter or digit made `_` (`.text` gives `text`, `.data.rel.ro`
/// `data_rel_ro`).
pub fn start_stop_name(section: &str) -> String {
    if crate::input::object::is_c_identifier(section.as_bytes()) {
        return section.to_string();
    }
    let s = section.strip_prefix('.').unwrap_or(section);
    s.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// The output section that `__start_NAME` / `__stop_NAME` (`sec` = NAME) refer to: the first
/// loaded one named NAME, else with `--start-stop` the first whose `start_stop_name` is NAME.
pub fn start_stop_target(
    config: &crate::args::Config,
    sections: &IdVec<OutputSectionId, OutputSection>,
    sec: &[u8],
) -> Option<OutputSectionId> {
    sections.position(|s| s.name.as_bytes() == sec && s.is_alloc()).or_else(|| {
        let mangled = |s: &OutputSection| start_stop_name(&s.name).as_bytes() == sec;
        sections.position(|s| config.start_stop && s.is_alloc() && !s.name.is_empty() && mangled(s))
    })
}

/// `--physical-image-base=BASE` (mold's rule): the first PT_LOAD's physical address is BASE, and
/// each later one's is its virtual address as long as the segments so far have been in step
/// (physical = virtual) and it starts less than two pages after the previous one ends; once
/// that fails, every later segment is packed after the previous one's physical end, so that a
/// ROM image holds them without gaps.
pub fn set_physical_addresses(phdrs: &mut [Phdr], base: u64, page: u64) {
    let mut addr = base;
    let mut in_sync = None;
    for p in phdrs.iter_mut().filter(|p| p.p_type == elf::PT_LOAD) {
        let sync = match in_sync {
            None => p.vaddr == base,
            Some(sync) => sync && addr <= p.vaddr && p.vaddr < addr + 2 * page,
        };
        if in_sync.is_some() && sync {
            addr = p.vaddr;
        }
        p.paddr = Some(addr);
        addr += p.memsz;
        in_sync = Some(sync);
    }
}

/// The physical address of virtual address `vaddr` (0 when no PT_LOAD holds it).
pub fn to_paddr(phdrs: &[Phdr], vaddr: u64) -> u64 {
    phdrs
        .iter()
        .find(|p| p.p_type == elf::PT_LOAD && p.vaddr <= vaddr && vaddr < p.vaddr + p.memsz)
        .map_or(0, |p| p.paddr.unwrap_or(p.vaddr) + (vaddr - p.vaddr))
}

/// `--physical-image-base`: `__phys_start_NAME` / `__phys_stop_NAME` for the output sections that
/// have `__start_NAME` names (C identifiers, or all with `--start-stop`), whether referenced or
/// not (as mold defines them), unless an input defines the name.
fn define_physical_start_stop(ctx: &mut Resolved, sections: &IdVec<OutputSectionId, OutputSection>) {
    for os in sections.iter().filter(|s| s.is_alloc() && !s.name.is_empty()) {
        let c_name = crate::input::object::is_c_identifier(os.name.as_bytes());
        if !c_name && !ctx.config.start_stop {
            continue;
        }
        let name = start_stop_name(&os.name);
        for prefix in ["__phys_start_", "__phys_stop_"] {
            define_synthetic(ctx, intern(format!("{prefix}{name}").into_bytes()), elf::STV_DEFAULT);
        }
    }
}

/// Makes `name` a linker-defined symbol (adding it if no input names it), unless an input defines
/// it.
fn define_synthetic(ctx: &mut Resolved, name: &'static [u8], visibility: u8) {
    let id = match ctx.by_name.get(&ctx.symbols, name) {
        Some(id) => id,
        None => {
            let id = ctx.symbols.push(crate::resolve::Symbol::undefined(name));
            ctx.by_name.insert(&ctx.symbols, id);
            id
        }
    };
    let s = &mut ctx.symbols[id];
    if matches!(s.def, Def::Undefined | Def::Lazy { .. }) {
        s.def = Def::Synthetic;
        s.weak = false;
        s.visibility = crate::resolve::merge_visibility(s.visibility, visibility);
    }
}

/// `--start-stop`: `__start_NAME` and `__stop_NAME` for every loaded output section, referenced or
/// not, unless an input defines the name. Their names are interned for the process (a bounded set:
/// one pair per distinct section name). An explicit `-z start-stop-visibility=protected` (mold's
/// rule) defines them so for the sections whose names are C identifiers, and exports every one
/// the linker defines (as if `--export-dynamic-symbol` named it).
fn define_all_start_stop(ctx: &mut Resolved, sections: &IdVec<OutputSectionId, OutputSection>) {
    let visibility = ctx.config.start_stop_visibility;
    let all = ctx.config.start_stop;
    for os in sections.iter().filter(|s| s.is_alloc() && !s.name.is_empty()) {
        if !all && !crate::input::object::is_c_identifier(os.name.as_bytes()) {
            continue;
        }
        let name = start_stop_name(&os.name);
        for prefix in ["__start_", "__stop_"] {
            define_synthetic(ctx, intern(format!("{prefix}{name}").into_bytes()), visibility);
        }
    }
    if ctx.config.export_start_stop {
        for s in &mut ctx.symbols {
            if s.def == Def::Synthetic && s.is_start_stop() && !s.is_hidden() {
                s.dynamic_list = true;
            }
        }
    }
}

/// A name kept for the rest of the process, each distinct one stored once.
fn intern(name: Vec<u8>) -> &'static [u8] {
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<std::collections::HashSet<&'static [u8]>>> = OnceLock::new();
    let mut names = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&n) = names.get(name.as_slice()) {
        return n;
    }
    let kept: &'static [u8] = Box::leak(name.into_boxed_slice());
    names.insert(kept);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn align() {
        assert_eq!(align_up(0, 8), 0);
        assert_eq!(align_up(1, 8), 8);
        assert_eq!(align_up(8, 8), 8);
        assert_eq!(align_up(5, 0), 5);
    }

    #[test]
    fn reserved_names() {
        assert!(is_reserved(b"_end", &[]));
        assert!(is_reserved(b"__start_mysec", &["mysec"]));
        assert!(!is_reserved(b"__start_other", &["mysec"]));
        assert!(!is_reserved(b"main", &[]));
    }

    #[test]
    fn numbers() {
        use crate::args::parse_number;
        assert_eq!(parse_number("0x401000"), Some(0x401000));
        assert_eq!(parse_number("0X10"), Some(16));
        assert_eq!(parse_number("42"), Some(42));
        assert_eq!(parse_number("main"), None);
    }
}
