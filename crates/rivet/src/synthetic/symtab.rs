//! `.symtab`/`.strtab`: planned right after resolution (which symbols, their names: exact sizes for
//! layout) and written after layout (values, section indices). Locals of every object come first,
//! then globals; hidden globals become locals, as GNU ld makes them in an executable.
use crate::args::Discard;
use crate::ctx::Ctx;
use crate::diag::{Context, Result};
use crate::ensure;
use crate::ids::{FileId, OutputSectionId, SymbolId};
use crate::linked::Linked;
use crate::resolve::Def;
use crate::sections::output::Content;
use object::elf::{self, Sym64};
use object::LittleEndian as LE;
use object::{pod, U16, U32, U64};

/// The size of an Elf64_Sym.
const SYM_SIZE: usize = size_of::<Sym64<LE>>();

#[derive(Clone, Copy)]
pub enum Source {
    Local {
        file: FileId,
        sym: u32,
    },
    Global {
        id: SymbolId,
        local: bool,
    },
    /// `NAME$plt`: PLT entry `index` (mold's names for the stubs, so that profilers and
    /// disassemblers attribute the stub's bytes to the function it jumps to).
    Plt {
        index: u32,
    },
    /// A range-extension thunk's symbol: `Plan::thunks[index]`.
    Thunk {
        index: u32,
    },
}

/// A range-extension thunk group's symbols: `$x` (AArch64's mapping symbol for code) at the
/// group's start (`entry` None), then `NAME$thunkN` over each entry (mold's names: N numbers the
/// group).
#[derive(Clone, Copy)]
struct ThunkSym {
    group: u32,
    entry: Option<u32>,
}

/// What `.strtab` adds after a PLT entry's symbol name.
const PLT_SUFFIX: &[u8] = b"$plt";

#[derive(Clone)]
pub struct Plan {
    /// An STT_SECTION symbol per output section of input sections (`--emit-relocs`' relocations
    /// name them), right after the null symbol; their names are empty (readelf shows the
    /// section's).
    pub sections: Vec<OutputSectionId>,
    /// Each entry's symbol and the offset of its name in `.strtab`; entry k is symbol
    /// `1 + sections.len() + k`.
    pub entries: Vec<(Source, u32)>,
    pub first_global: u32,
    pub strtab_size: u64,
    /// The PLT's targets, in entry order (what `Source::Plt` names).
    plt: Vec<crate::ctx::Target>,
    /// The thunks' symbols and their names (what `Source::Thunk` names).
    thunks: Vec<(ThunkSym, Vec<u8>)>,
}

/// Local symbols in .symtab: all but section symbols and those of dropped sections; `.L` temporaries
/// only with `--discard-none` (GNU ld's default is `-X`, `--discard-locals`); none with `-x`.
fn keep_local(ctx: &Ctx, file: FileId, i: usize) -> bool {
    let discard = ctx.config.discard;
    if discard == Discard::All {
        return false;
    }
    let obj = &ctx.objects[file];
    let sym = &obj.syms[i];
    let ty = sym.st_info & 0xf;
    if ty == elf::STT_SECTION || sym.st_name.get(LE) == 0 {
        return false;
    }
    if let Some(sec) = obj.sym_shndx(i) {
        let s = &obj.sections[sec as usize];
        if !s.live || s.out.is_none() {
            return false;
        }
    }
    discard == Discard::None || !matches!(obj.sym_name(sym), Ok(n) if n.starts_with(b".L"))
}

/// The names `--retain-symbols-file FILE` lists, one a line (blanks around a name ignored).
fn retained_names(path: &std::path::Path) -> Result<rustc_hash::FxHashSet<Vec<u8>>> {
    let text = std::fs::read(path).with_context(|| format!("cannot read --retain-symbols-file {}", path.display()))?;
    Ok(text.split(|&b| b == b'\n').map(|l| l.trim_ascii()).filter(|l| !l.is_empty()).map(<[u8]>::to_vec).collect())
}

fn keep_global(ctx: &Ctx, id: SymbolId, retained: Option<&rustc_hash::FxHashSet<Vec<u8>>>) -> bool {
    let s = &ctx.symbols[id];
    if retained.is_some_and(|names| !names.contains(s.name)) {
        return false;
    }
    match s.def {
        Def::Defined { file, sym } => {
            let obj = &ctx.objects[file];
            obj.sym_shndx(sym as usize)
                .is_none_or(|sec| obj.sections[sec as usize].live || obj.sections[sec as usize].folded())
        }
        Def::Common { .. } | Def::Synthetic | Def::Absolute(_) | Def::Script(_) => true,
        Def::Undefined | Def::Lazy { .. } | Def::Shared { .. } => s.referenced,
    }
}

/// The name a table entry has in `.strtab` (a PLT entry's: before `PLT_SUFFIX`).
fn entry_name<'a>(ctx: &Ctx<'a>, plt: &[crate::ctx::Target], src: Source) -> &'a [u8] {
    let target_name = |t: crate::ctx::Target| match t {
        crate::ctx::Target::Global(id) => ctx.symbols[id].name,
        crate::ctx::Target::Local(file, sym) => {
            let obj = &ctx.objects[file];
            obj.sym_name(&obj.syms[sym as usize]).unwrap_or(b"")
        }
    };
    match src {
        Source::Local { file, sym } => target_name(crate::ctx::Target::Local(file, sym)),
        Source::Global { id, .. } => ctx.symbols[id].name,
        Source::Plt { index } => target_name(plt[index as usize]),
        Source::Thunk { .. } => b"",
    }
}

/// The length of an entry's name in `.strtab`, without its terminator.
fn entry_name_len(ctx: &Ctx, plt: &[crate::ctx::Target], src: Source) -> usize {
    entry_name(ctx, plt, src).len() + if matches!(src, Source::Plt { .. }) { PLT_SUFFIX.len() } else { 0 }
}

/// Whether the output has a symbol table: not with `-s`, nor in a raw binary image.
pub fn wanted(config: &crate::args::Config) -> bool {
    config.strip != crate::args::Strip::All && !config.oformat_binary
}

/// Which symbols go in the table, decided in parallel (objects' locals, blocks of globals) with
/// the size of each one's name, and where the names go in `.strtab` (one pass in order); the
/// names are copied when `.strtab` is written, in parallel too. Decided on one thread, with the
/// string table built here, the plan phase of a cxx-big link took 20.1 ms, against 8.5 ms in
/// parallel (medians of 9 alternated runs, 016f7e8) and 5.6 ms with the names' sizes found in the
/// same pass and the offsets' bound checked once (41635ca).
pub fn plan(ctx: &Ctx, tables: &crate::synthetic::tables::Tables) -> Result<Plan> {
    use rayon::prelude::*;
    const BLOCK: usize = 4096;
    let plt = &tables.plt;
    let sized = |src: Source| (src, entry_name_len(ctx, plt, src) as u64 + 1);
    // `--retain-symbols-file`: only the globals it lists, and no local symbol (mold's choice;
    // GNU ld keeps the locals it lists too). `.dynsym` is not affected (GNU ld's documentation).
    let retained = ctx.config.retain_symbols_file.as_deref().map(retained_names).transpose()?;
    let locals: Vec<Vec<(Source, u64)>> = ctx
        .file_order
        .par_iter()
        .with_max_len(8)
        .map(|&f| {
            let obj = &ctx.objects[f];
            (1..obj.first_global)
                .filter(|&i| retained.is_none() && keep_local(ctx, f, i))
                .map(|i| sized(Source::Local { file: f, sym: i as u32 }))
                .collect()
        })
        .collect();
    // Hidden globals become locals, so they come before the visible ones: each block of symbols
    // splits its kept ones in two.
    type Sized = Vec<(Source, u64)>;
    let globals: Vec<(Sized, Sized)> = (0..ctx.symbols.len().div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let (mut hidden, mut visible) = (Vec::new(), Vec::new());
            for i in b * BLOCK..((b + 1) * BLOCK).min(ctx.symbols.len()) {
                let id = SymbolId::new(i);
                if !keep_global(ctx, id, retained.as_ref()) {
                    continue;
                }
                let s = &ctx.symbols[id];
                match s.is_hidden() && s.def != Def::Undefined {
                    true => hidden.push(sized(Source::Global { id, local: true })),
                    false => visible.push(sized(Source::Global { id, local: false })),
                }
            }
            (hidden, visible)
        })
        .collect();
    // Each output section of input sections has its section symbol first (--emit-relocs'
    // relocations name them; mold and GNU ld before 2.37 list them in every output), unless
    // `--retain-symbols-file` keeps no local symbol (as GNU ld drops them there).
    let sections: Vec<OutputSectionId> = match retained.is_some() && !ctx.config.emit_relocs {
        true => Vec::new(),
        false => {
            ctx.sections.iter_enumerated().filter(|(_, s)| s.content == Content::Inputs).map(|(id, _)| id).collect()
        }
    };
    // The PLT entries' names, local: after the objects' locals (none under `-x`, nor with
    // `--retain-symbols-file`, which keeps no local name).
    let plt_names: Sized = match ctx.config.discard {
        _ if retained.is_some() => Vec::new(),
        Discard::All => Vec::new(),
        _ => (0..plt.len() as u32).map(|index| sized(Source::Plt { index })).collect(),
    };
    let parts: Vec<&Sized> = locals
        .iter()
        .chain(std::iter::once(&plt_names))
        .chain(globals.iter().map(|(hidden, _)| hidden))
        .chain(globals.iter().map(|(_, visible)| visible))
        .collect();
    let count = parts.iter().map(|p| p.len()).sum::<usize>();
    let visible = globals.iter().map(|(_, v)| v.len()).sum::<usize>();
    let first_global = 1 + (sections.len() + count - visible) as u32;
    let strtab_size = strtab_end(parts.iter().flat_map(|p| p.iter()).map(|&(_, size)| size), count)?;
    // Every name starts below the table's end, which fits in 32 bits.
    let mut next = 1u32;
    let mut entries = Vec::with_capacity(count);
    for &(src, size) in parts.iter().flat_map(|p| p.iter()) {
        entries.push((src, next));
        next = next.wrapping_add(size as u32);
    }
    Ok(Plan { sections, entries, first_global, strtab_size, plt: plt.clone(), thunks: Vec::new() })
}

/// The size of `.strtab` (a leading NUL, then the names, terminators included, of `count`
/// symbols). A symbol's `st_name` is 32 bits: a table past 4 GiB cannot be written, and is an
/// error rather than offsets that wrap.
fn strtab_end(sizes: impl Iterator<Item = u64>, count: usize) -> Result<u64> {
    let end = 1 + sizes.sum::<u64>();
    ensure!(
        end <= 1 << 32,
        "the output's .strtab would be larger than 4 GiB ({end} bytes, {count} symbols; st_name is a 32-bit \
         offset): leave symbols out with --strip-all or --discard-all"
    );
    Ok(end)
}

impl Plan {
    /// The plan with the range-extension thunks' symbols added, local, after the other locals.
    pub fn with_thunks(mut self, ctx: &Ctx, thunks: &crate::sections::thunks::Thunks) -> Result<Plan> {
        if ctx.config.discard == crate::args::Discard::All || thunks.is_empty() {
            return Ok(self);
        }
        let mut syms = Vec::new();
        for (g, group) in thunks.groups.iter().enumerate() {
            syms.push((ThunkSym { group: g as u32, entry: None }, b"$x".to_vec()));
            for (k, key) in group.entries.iter().enumerate() {
                let mut name = match key.target {
                    crate::ctx::Target::Global(id) => ctx.symbols[id].name.to_vec(),
                    t => ctx.name_of(t).into_bytes(),
                };
                name.extend_from_slice(format!("$thunk{g}").as_bytes());
                syms.push((ThunkSym { group: g as u32, entry: Some(k as u32) }, name));
            }
        }
        let at = (self.first_global as usize - 1 - self.sections.len()).min(self.entries.len());
        let added: u64 = syms.iter().map(|(_, n)| n.len() as u64 + 1).sum();
        self.strtab_size = strtab_end([self.strtab_size - 1, added].into_iter(), self.entries.len() + syms.len())?;
        let mut next = self.entries.get(at).map_or(self.strtab_size - added, |e| e.1 as u64) as u32;
        let new: Vec<(Source, u32)> = (0..syms.len())
            .map(|k| {
                let name = next;
                next += syms[k].1.len() as u32 + 1;
                (Source::Thunk { index: k as u32 }, name)
            })
            .collect();
        for e in &mut self.entries[at..] {
            e.1 += added as u32;
        }
        self.entries.splice(at..at, new);
        self.first_global += syms.len() as u32;
        self.thunks = syms;
        Ok(self)
    }

    /// Writes `.strtab` (`out` is `strtab_size` bytes): blocks of entries in parallel, each into
    /// the part of `out` its names occupy.
    pub fn write_strtab(&self, ctx: &Ctx, out: &mut [u8]) {
        use rayon::prelude::*;
        const BLOCK: usize = 4096;
        out[0] = 0;
        let mut parts = Vec::new();
        let mut rest = &mut out[1..];
        let mut at = 1usize;
        for (k, block) in self.entries.chunks(BLOCK).enumerate() {
            let end = self.entries.get((k + 1) * BLOCK).map_or(self.strtab_size as usize, |e| e.1 as usize);
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(end - at);
            parts.push((block, mine));
            rest = tail;
            at = end;
        }
        parts.into_par_iter().for_each(|(block, buf)| {
            let base = block[0].1 as usize;
            for &(src, off) in block {
                let name = match src {
                    Source::Thunk { index } => &self.thunks[index as usize].1[..],
                    _ => entry_name(ctx, &self.plt, src),
                };
                let mut at = off as usize - base;
                buf[at..at + name.len()].copy_from_slice(name);
                at += name.len();
                if matches!(src, Source::Plt { .. }) {
                    buf[at..at + PLT_SUFFIX.len()].copy_from_slice(PLT_SUFFIX);
                    at += PLT_SUFFIX.len();
                }
                buf[at] = 0;
            }
        });
    }

    pub fn symtab_size(&self) -> u64 {
        (SYM_SIZE * (1 + self.sections.len() + self.entries.len())) as u64
    }

    /// Writes the `.symtab` entries (after the null one) into `out`, blocks of entries in
    /// parallel (one job, it was the last 15 ms of cxx-big's write on one thread; 8.6 ms in
    /// blocks, as measured for 4509b8b).
    pub fn write(&self, ctx: &Linked, out: &mut [u8]) {
        use rayon::prelude::*;
        const BLOCK: usize = 4096;
        let first = 1 + self.sections.len();
        for (k, &id) in self.sections.iter().enumerate() {
            let p = ctx.layout.sections[id];
            let shndx = if p.shndx == 0 { elf::SHN_ABS } else { p.shndx as u16 };
            let sym = Sym64 {
                st_name: U32::new(LE, 0),
                st_info: elf::STT_SECTION,
                st_other: 0,
                st_shndx: U16::new(LE, shndx),
                st_value: U64::new(LE, p.addr),
                st_size: U64::new(LE, 0),
            };
            out[(1 + k) * SYM_SIZE..(2 + k) * SYM_SIZE].copy_from_slice(pod::bytes_of(&sym));
        }
        let end = SYM_SIZE * (first + self.entries.len());
        let out = &mut out[SYM_SIZE * first..end];
        out.par_chunks_mut(SYM_SIZE * BLOCK).zip(self.entries.par_chunks(BLOCK)).for_each(|(out, entries)| {
            // Byte-aligned (`object`'s `unaligned` feature): only the length can fail, and it fits.
            let (syms, _) = pod::slice_from_bytes_mut::<Sym64<LE>>(out, entries.len()).unwrap();
            for (e, &(src, name)) in syms.iter_mut().zip(entries) {
                let (info, other, shndx, value, size) = match src {
                    Source::Local { file, sym } => local_entry(ctx, file, sym as usize),
                    Source::Global { id, local } => global_entry(ctx, id, local),
                    Source::Plt { index } => plt_entry(ctx, index),
                    Source::Thunk { index } => thunk_entry(ctx, self.thunks[index as usize].0),
                };
                *e = Sym64 {
                    st_name: U32::new(LE, name),
                    st_info: info,
                    st_other: other,
                    st_shndx: U16::new(LE, shndx),
                    st_value: U64::new(LE, value),
                    st_size: U64::new(LE, size),
                };
            }
        });
    }
}

/// `NAME$plt`: a local function symbol over PLT entry `index` (in `.plt.sec` when there is
/// one), the entry's size.
fn plt_entry(ctx: &Linked, index: u32) -> (u8, u8, u16, u64, u64) {
    let sec = [Content::PltSec, Content::Plt].into_iter().find_map(|c| ctx.layout.synthetic.get(c));
    let shndx = sec.map_or(elf::SHN_ABS, |s| ctx.layout.shndx(s) as u16);
    let info = (elf::STB_LOCAL << 4) | elf::STT_FUNC;
    (info, elf::STV_DEFAULT, shndx, ctx.plt_entry_addr(index), ctx.plans.got.plt_entry)
}

/// A thunk group's `$x` (no type, no size) or one of its entries (a local function).
fn thunk_entry(ctx: &Linked, t: ThunkSym) -> (u8, u8, u16, u64, u64) {
    let thunks = &ctx.layout.thunks;
    let g = &thunks.groups[t.group as usize];
    let shndx = ctx.layout.shndx(g.section) as u16;
    let at = ctx.layout.addr(g.section) + g.offset;
    match t.entry {
        None => (elf::STB_LOCAL << 4, elf::STV_DEFAULT, shndx, at, 0),
        Some(k) => {
            let info = (elf::STB_LOCAL << 4) | elf::STT_FUNC;
            (info, elf::STV_DEFAULT, shndx, at + k as u64 * thunks.entry_size, thunks.entry_size)
        }
    }
}

/// The output section index for a symbol defined in input section `sec` of `file`.
fn out_shndx(ctx: &Linked, file: FileId, sec: u32) -> u16 {
    let s = &ctx.objects[file].sections[sec as usize];
    match s.out.and_then(|o| ctx.layout.sections.get(o)) {
        Some(p) if p.shndx != 0 => p.shndx as u16,
        _ => elf::SHN_ABS,
    }
}

fn local_entry(ctx: &Linked, file: FileId, i: usize) -> (u8, u8, u16, u64, u64) {
    let obj = &ctx.objects[file];
    let sym = &obj.syms[i];
    let shndx = match obj.sym_shndx(i) {
        Some(sec) => out_shndx(ctx, file, sec),
        None => elf::SHN_ABS,
    };
    let value = match sym.st_info & 0xf {
        elf::STT_FILE => 0,
        elf::STT_TLS => ctx.symbol_table_value(crate::ctx::Target::Local(file, i as u32)),
        _ => ctx.raw_value(crate::ctx::Target::Local(file, i as u32)),
    };
    (sym.st_info, sym.st_other, shndx, value, sym.st_size.get(LE))
}

/// The section index `.symtab` gives a linker-defined address: the first loaded section (by
/// address, TLS templates aside) that holds it or ends at it, else the first after it (the ELF
/// header's `__ehdr_start`); absolute below the image's base (0 for something a non-PIE output
/// lacks) or past its last section.
fn section_of_address(ctx: &Linked, value: u64) -> u16 {
    let loaded =
        ctx.sections.iter_enumerated().filter(|(i, s)| s.is_alloc() && !s.is_tls() && ctx.layout.shndx(*i) != 0);
    let mut best: Option<(u64, OutputSectionId)> = None;
    for (i, _) in loaded {
        let (addr, end) = (ctx.layout.addr(i), ctx.layout.addr(i) + ctx.layout.sizes[i]);
        if addr <= value && value <= end {
            // Holding it: the lowest such section wins over any that only follows it.
            if best.is_none_or(|(a, _)| a > value || addr < a) {
                best = Some((addr, i));
            }
        } else if addr > value && best.is_none_or(|(a, _)| a > value && addr < a) {
            best = Some((addr, i));
        }
    }
    match best {
        Some((_, i)) if value >= ctx.layout.base => ctx.layout.shndx(i) as u16,
        _ => elf::SHN_ABS,
    }
}

fn global_entry(ctx: &Linked, id: SymbolId, local: bool) -> (u8, u8, u16, u64, u64) {
    let s = &ctx.symbols[id];
    let value = if matches!(s.def, Def::Defined { .. } | Def::Common { .. }) {
        ctx.symbol_table_value(crate::ctx::Target::Global(id))
    } else {
        ctx.addr.global[id]
    };
    // What `.symtab` shows: the inputs' visibility, also for a symbol a version script made local.
    let visibility = s.localized_from.unwrap_or(s.visibility);
    let bind = |weak: bool| {
        if local {
            elf::STB_LOCAL
        } else if weak {
            elf::STB_WEAK
        } else {
            elf::STB_GLOBAL
        }
    };
    match s.def {
        Def::Defined { file, sym } | Def::Common { file, sym } => {
            let obj = &ctx.objects[file];
            let esym = &obj.syms[sym as usize];
            let shndx = match (s.def, obj.sym_shndx(sym as usize)) {
                (Def::Common { .. }, _) => {
                    ctx.layout.inputs.commons.section_of(id).map_or(elf::SHN_ABS, |c| ctx.layout.shndx(c) as u16)
                }
                (_, Some(sec)) => out_shndx(ctx, file, sec),
                _ => elf::SHN_ABS,
            };
            let ty = esym.st_info & 0xf;
            let ty = if ty == elf::STT_COMMON { elf::STT_OBJECT } else { ty };
            ((bind(s.weak) << 4) | ty, visibility, shndx, value, esym.st_size.get(LE))
        }
        // `__start_SEC`/`__stop_SEC` are in SEC (lld); the other linker-defined addresses in the
        // section that holds them, so that tools relocate them with a PIE's load address.
        Def::Synthetic => {
            let sec = crate::linked::start_stop(ctx.placed, s.name).filter(|_| s.is_start_stop());
            let shndx = match sec {
                Some((sec, _)) => ctx.layout.shndx(sec) as u16,
                None if s.name == b"_TLS_MODULE_BASE_" => elf::SHN_ABS,
                None => section_of_address(ctx, value),
            };
            ((bind(false) << 4) | elf::STT_NOTYPE, visibility, shndx, value, 0)
        }
        Def::Absolute(_) => ((bind(false) << 4) | elf::STT_NOTYPE, visibility, elf::SHN_ABS, value, 0),
        // A script's symbol: in the section its value belongs to (lld), with no size.
        Def::Script(i) => {
            let shndx = ctx
                .addr
                .script_secs
                .get(i as usize)
                .copied()
                .flatten()
                .map_or(elf::SHN_ABS, |sec| ctx.layout.shndx(sec) as u16);
            ((bind(false) << 4) | ctx.script_syms[i as usize].ty, visibility, shndx, value, 0)
        }
        // An undefined or imported symbol is weak only when every reference to it is (GNU ld
        // and lld); the library's own binding of its definition does not matter here.
        Def::Undefined | Def::Lazy { .. } => {
            ((bind(!s.strong_ref) << 4) | elf::STT_NOTYPE, visibility, elf::SHN_UNDEF, 0, 0)
        }
        Def::Shared { .. } => {
            let ty = match ctx.sym_type(crate::ctx::Target::Global(id)) {
                elf::STT_GNU_IFUNC => elf::STT_FUNC,
                ty => ty,
            };
            ((bind(!s.strong_ref) << 4) | ty, 0, elf::SHN_UNDEF, 0, 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtab_past_4_gib_is_an_error() {
        let end = |sizes: &[u64]| strtab_end(sizes.iter().copied(), sizes.len());
        assert_eq!(end(&[4, 6, 2]).unwrap(), 13);
        // Exactly 4 GiB fits: the last name starts below 2^32 and the table ends at 2^32.
        assert_eq!(end(&[(1 << 32) - 11, 10]).unwrap(), 1 << 32);
        // One byte more does not.
        let e = end(&[(1 << 32) - 11, 11]).unwrap_err().to_string();
        assert!(e.contains("larger than 4 GiB"), "{e}");
        // Names that start past 4 GiB (they would have wrapped to small offsets).
        let e = end(&[3 << 30, 2 << 30, 8]).unwrap_err().to_string();
        assert!(e.contains("larger than 4 GiB"), "{e}");
    }
}
