//! The link once layout has placed everything. `Placed` is the `Ctx` with the `Layout`: it answers
//! where a section, an input byte, a GOT or PLT entry is. `Addresses` (every symbol's value and the
//! entry point) are computed from it, and `Linked`, the view the writers take, adds them. The
//! questions that need an address (`input_addr`, `value`, `tpoff`, ...) are answered here and only
//! here: before layout there is no `Layout`, so no stage can read an address that does not exist
//! yet (an `OutputSection` has none; layout's `Placement` of it has).
use crate::ctx::{Ctx, OutputKind, Target};
use crate::ids::{FileId, IdVec, OutputSectionId, SectionRef, SymbolId};
use crate::layout::Layout;
use crate::resolve::Def;
use crate::script;
use crate::sections::eh_frame;
use crate::sections::merged::PlacedPieces;
use crate::sections::output::Content;
use crate::synthetic::plans::Plans;
use crate::synthetic::tables::GotKind;
use object::elf;
use object::LittleEndian as LE;

/// One object's local symbol values. The section symbol of a merged section has none of its own:
/// what it refers to depends on the addend (`Linked::merged_section_value`).
pub struct LocalValues {
    values: Vec<u64>,
    /// One bit per symbol: its value depends on the addend.
    by_addend: Vec<u64>,
}

impl LocalValues {
    fn get(&self, sym: u32) -> Option<u64> {
        let i = sym as usize;
        let value = *self.values.get(i)?;
        (self.by_addend[i / 64] & (1 << (i % 64)) == 0).then_some(value)
    }
}

/// A merged input section as relocations refer to it, looked up once: where its pieces went, its
/// output section's address and its input size.
#[derive(Clone, Copy)]
pub struct MergeTarget<'l> {
    pieces: &'l PlacedPieces,
    section_addr: u64,
    len: u64,
}

impl MergeTarget<'_> {
    /// `Linked::merged_section_value` for a target whose section symbol has `value`. Err: the
    /// offset referred to (value + addend) is not inside the section.
    pub fn value(&self, value: u64, addend: i64) -> Result<i128, OutsideMerged> {
        let offset = value.wrapping_add(addend as u64);
        let outside = OutsideMerged { offset, len: self.len };
        if offset >= self.len {
            return Err(outside);
        }
        let o = self.pieces.offset(offset).ok_or(outside)?;
        Ok((self.section_addr + o) as i128 - addend as i128)
    }
}

/// A reference through a merged section's section symbol to an offset (symbol value + addend) at
/// or past the end of the section: the piece it means does not exist. lld stops with "offset is
/// outside the section"; so does rivet, naming the relocation (`OutsideMerged::error`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutsideMerged {
    pub offset: u64,
    pub len: u64,
}

impl OutsideMerged {
    /// The error for a relocation of type `ty` (its name) against section symbol `sym` of `file`.
    pub fn error(self, ctx: &Ctx, ty: &str, file: FileId, sym: u32) -> crate::diag::Error {
        let obj = &ctx.objects[file];
        let sec = obj
            .sym_shndx(sym as usize)
            .map_or(std::borrow::Cow::Borrowed("?"), |s| String::from_utf8_lossy(obj.section_name(s as usize)));
        let addend = self.offset.wrapping_sub(obj.syms[sym as usize].st_value.get(LE)) as i64;
        let sign = if addend < 0 { '-' } else { '+' };
        crate::diag::Error::new(format!(
            "relocation {ty} against {sec}{sign}{:#x}: {}:({sec}): offset is outside the section \
             (offset {:#x}, section size {:#x})",
            addend.unsigned_abs(),
            obj.name,
            self.offset,
            self.len
        ))
    }
}

/// Every address the writers need, fixed once layout is done.
pub struct Addresses {
    /// Each global symbol's value.
    pub global: IdVec<SymbolId, u64>,
    /// Every object's local symbols' values: relocations read them instead of finding the address
    /// through the section, merge and `.eh_frame` tables each time.
    pub locals: IdVec<FileId, LocalValues>,
    pub entry: u64,
    /// The section each linker-script symbol (`Def::Script(i)`) belongs to (None: absolute).
    pub script_secs: Vec<Option<OutputSectionId>>,
}

impl Addresses {
    /// The values of every symbol and the entry point, from the sections' addresses.
    pub fn compute(placed: Placed) -> Addresses {
        let (global, script_secs) = global_values(placed);
        let locals = local_values(placed);
        let entry = entry_address(placed, &global);
        Addresses { global, locals, entry, script_secs }
    }
}

/// Expressions of linker scripts evaluated once every section has its address: symbols read
/// the values computed so far (and those the script assigns as it goes).
struct ScriptEnv<'l, 'a> {
    ctx: Placed<'l, 'a>,
    values: std::cell::RefCell<IdVec<SymbolId, u64>>,
    secs: std::cell::RefCell<Vec<Option<OutputSectionId>>>,
}

impl script::Env for ScriptEnv<'_, '_> {
    fn symbol(&self, name: &str) -> Option<script::Value> {
        let ctx = self.ctx;
        let id = ctx.by_name.get(&ctx.symbols, name.as_bytes())?;
        let sec = match ctx.symbols[id].def {
            Def::Undefined | Def::Lazy { .. } => return None,
            Def::Defined { file, sym } => {
                let obj = &ctx.objects[file];
                obj.sym_shndx(sym as usize).and_then(|i| obj.sections[i as usize].out)
            }
            Def::Common { .. } => ctx.layout.inputs.commons.section_of(id),
            Def::Script(i) => self.secs.borrow()[i as usize],
            Def::Synthetic | Def::Absolute(_) | Def::Shared { .. } => None,
        };
        let ty = ctx.sym_type(Target::Global(id));
        Some(script::Value { sec, val: self.values.borrow()[id], ty })
    }
    fn defined(&self, name: &str) -> bool {
        self.symbol(name).is_some()
    }
    fn dot(&self) -> Option<script::Value> {
        None
    }
    fn section(&self, name: &str) -> Option<script::SectionFacts> {
        let ctx = self.ctx;
        let id = ctx
            .sections
            .position(|s| s.name == name && s.is_alloc())
            .or_else(|| ctx.sections.position(|s| s.name == name))?;
        let addr = ctx.layout.addr(id);
        let (size, align) = (ctx.layout.sizes[id], ctx.sections[id].align);
        Some(script::SectionFacts { id, addr, lma: addr, size, align })
    }
    fn sizeof_headers(&self) -> u64 {
        crate::layout::EHDR_SIZE + crate::layout::PHDR_SIZE * self.ctx.layout.phdrs.len() as u64
    }
    fn page_size(&self, max: bool) -> u64 {
        let c = self.ctx.config;
        if max {
            c.max_page_size
        } else {
            c.common_page_size
        }
    }
    fn region(&self, name: &str) -> Option<(u64, u64)> {
        let files = self.ctx.script_files;
        let alias = files.iter().flat_map(|f| &f.script.region_aliases).find(|(a, _)| a == name);
        let name = alias.map_or(name, |(_, r)| r.as_str());
        let r = files.iter().flat_map(|f| &f.script.memory).find(|r| r.name == name)?;
        Some((script::eval(&r.origin, self).ok()?.val, script::eval(&r.length, self).ok()?.val))
    }
}

/// The link once layout has placed the output sections: the context, the plans the synthetic
/// sections were made from and the layout. It derefs to the `Ctx`.
#[derive(Clone, Copy)]
pub struct Placed<'l, 'a> {
    pub ctx: &'l Ctx<'a>,
    pub plans: &'l Plans,
    pub layout: &'l Layout,
}

impl<'a> std::ops::Deref for Placed<'_, 'a> {
    type Target = Ctx<'a>;
    fn deref(&self) -> &Ctx<'a> {
        self.ctx
    }
}

impl<'l, 'a> Placed<'l, 'a> {
    pub fn new(ctx: &'l Ctx<'a>, plans: &'l Plans, layout: &'l Layout) -> Placed<'l, 'a> {
        Placed { ctx, plans, layout }
    }

    /// The address of the linker-made section of kind `c`, if this output has one.
    pub fn synthetic_addr(&self, c: Content) -> Option<u64> {
        self.layout.synthetic.get(c).map(|id| self.layout.addr(id))
    }

    /// The file bytes of the linker-made section of kind `c`: (offset, size).
    pub fn synthetic_file_range(&self, c: Content) -> Option<(u64, u64)> {
        // The build-id note inside a script's output section.
        if let (Content::BuildId, Some((id, off, size))) = (c, self.layout.build_id_in) {
            let place = &self.layout.sections[id];
            return (!place.stub && !self.sections[id].is_nobits()).then_some((place.offset + off, size));
        }
        // A stub (the separate debug file's view of a loaded section) has no bytes in this file.
        let id = self.layout.synthetic.get(c).filter(|&id| !self.layout.sections[id].stub)?;
        Some((self.layout.sections[id].offset, self.layout.sizes[id]))
    }

    /// The output address of input section `sec` of `file` (None: not in the output).
    pub fn section_addr(&self, file: FileId, sec: u32) -> Option<u64> {
        let s = &self.objects[file].sections[sec as usize];
        if let Some(kept) = self.objects[file].folded_into(sec as usize) {
            return self.section_addr(kept.file, kept.index);
        }
        if !s.live {
            return None;
        }
        Some(self.layout.addr(s.out?) + self.layout.inputs.offsets[SectionRef::new(file, sec)])
    }

    /// Address of byte `off` of input section `sec` (through `.eh_frame` piece mapping, and for
    /// merged sections to the copy of the piece that was kept).
    pub fn input_addr(&self, file: FileId, sec: u32, off: u64) -> Option<u64> {
        let s = &self.objects[file].sections[sec as usize];
        if let (Some(id), Some(m)) = (s.merge_index, self.merges.at(s.merge_index)) {
            if !s.live {
                return None;
            }
            return Some(self.layout.addr(m.out) + self.layout.inputs.merged.offset(id, off)?);
        }
        let base = self.section_addr(file, sec)?;
        // An offset is the file's word (a symbol's value may be anything): addresses wrap, as in lld.
        match self.split_eh_frame(file, sec) {
            Some(eh) => eh_frame::map_offset(eh, off).map(|o| base.wrapping_add(o)),
            None => Some(base.wrapping_add(off)),
        }
    }

    /// The value of a symbol defined in an object (not through PLT redirection).
    pub fn object_sym_value(&self, file: FileId, idx: usize) -> u64 {
        let obj = &self.objects[file];
        let sym = &obj.syms[idx];
        let value = sym.st_value.get(LE);
        match sym.st_shndx.get(LE) {
            elf::SHN_ABS => value,
            elf::SHN_UNDEF => 0,
            elf::SHN_COMMON => self.common_addr(file, idx as u32),
            _ => match obj.sym_shndx(idx) {
                Some(sec) => self.input_addr(file, sec, value).unwrap_or(0),
                None => value,
            },
        }
    }

    fn common_addr(&self, file: FileId, sym: u32) -> u64 {
        // The symbol that this common definition is (a common that lost to another is no
        // symbol's definition, and has no place).
        let obj = &self.objects[file];
        let Some(&id) = (sym as usize).checked_sub(obj.first_global).and_then(|g| obj.global_ids.get(g)) else {
            return 0;
        };
        if self.symbols[id].def != (Def::Common { file, sym }) {
            return 0;
        }
        match self.layout.inputs.commons.place_of(id) {
            Some((sec, off)) => self.layout.addr(sec) + off,
            None => 0,
        }
    }

    /// The address of PLT entry `i`: where calls and canonical addresses go (in `.plt.sec` when
    /// there is one).
    pub fn plt_entry_addr(&self, i: u32) -> u64 {
        if let Some(sec) = self.synthetic_addr(Content::PltSec) {
            return sec + self.plans.got.plt_entry * i as u64;
        }
        let plt = self.synthetic_addr(Content::Plt).expect("PLT section exists when PLT entries do");
        plt + self.plans.got.plt_header + self.plans.got.plt_entry * i as u64
    }

    pub fn gotplt_slot_addr(&self, i: u32) -> u64 {
        self.gotplt_addr() + 8 * (self.plans.got.gotplt_reserved + i as u64)
    }

    /// `_GLOBAL_OFFSET_TABLE_`: the start of `.got.plt` (of `.got` when there is no `.got.plt`).
    pub fn gotplt_addr(&self) -> u64 {
        let gotplt = self.synthetic_addr(Content::GotPlt).or_else(|| self.synthetic_addr(Content::Got));
        gotplt.unwrap_or(0)
    }

    /// `_GLOBAL_OFFSET_TABLE_`: the start of `.got.plt` on x86-64 (`gotplt_addr`), of `.got` on
    /// AArch64 (as GNU ld and lld define it there; `.got.plt` when there is no `.got`).
    pub fn got_base(&self) -> u64 {
        match self.plans.got.got_base_in_gotplt {
            true => self.gotplt_addr(),
            false => self.synthetic_addr(Content::Got).unwrap_or_else(|| self.gotplt_addr()),
        }
    }

    /// The address of `t`'s `.got` entry of `kind`.
    pub fn got_entry_addr(&self, t: Target, kind: GotKind) -> Option<u64> {
        let word = self.plans.got.got_word(t, kind)?;
        Some(self.synthetic_addr(Content::Got)? + 8 * word as u64)
    }
}

/// The link after layout: the context, the layout and the addresses. It derefs to `Placed` (and
/// so to the `Ctx`).
#[derive(Clone, Copy)]
pub struct Linked<'l, 'a> {
    pub placed: Placed<'l, 'a>,
    pub addr: &'l Addresses,
}

impl<'l, 'a> std::ops::Deref for Linked<'l, 'a> {
    type Target = Placed<'l, 'a>;
    fn deref(&self) -> &Placed<'l, 'a> {
        &self.placed
    }
}

impl<'l, 'a> Linked<'l, 'a> {
    pub fn new(placed: Placed<'l, 'a>, addr: &'l Addresses) -> Linked<'l, 'a> {
        Linked { placed, addr }
    }

    /// A relocation against the section symbol of a merged section refers to the piece at
    /// (symbol value + addend), which may have moved independently of its neighbours: the value to
    /// use with the addend is that piece's address minus the addend (lld's rule). None for other
    /// targets.
    /// Some(Err): the addend points outside the section, an error (the caller names the relocation).
    pub fn merged_section_value(&self, t: Target, addend: i64) -> Option<Result<i128, OutsideMerged>> {
        let Target::Local(f, s) = t else { return None };
        let (target, value) = self.merged_target(f, s)?;
        Some(target.value(value, addend))
    }

    /// For local symbol `sym` of `file`, when `merged_section_value` works through it: the merged
    /// section whose section symbol it is (live, and the symbol has no value of its own) and the
    /// symbol's value.
    pub fn merged_target(&self, file: FileId, sym: u32) -> Option<(MergeTarget<'l>, u64)> {
        if self.local_value(file, sym).is_some() {
            return None;
        }
        let (ctx, layout): (&'l Ctx<'a>, &'l Layout) = (self.ctx, self.layout);
        let obj = &ctx.objects[file];
        let (sec, id) = ctx.merged_section_of(file, sym)?;
        if !obj.sections[sec as usize].live {
            return None;
        }
        let m = &ctx.merges.merged[id];
        let target =
            MergeTarget { pieces: layout.inputs.merged.get(id)?, section_addr: layout.addr(m.out), len: m.len };
        Some((target, obj.syms[sym as usize].st_value.get(LE)))
    }

    /// A local symbol's value (None: it depends on the addend).
    fn local_value(&self, file: FileId, sym: u32) -> Option<u64> {
        self.addr.locals.get(file)?.get(sym)
    }

    /// The address a target resolves to, before any PLT redirection (imported symbols: their copy
    /// in this output, if they were copied, else 0: the loader fills in the address).
    pub fn raw_value(&self, t: Target) -> u64 {
        match t {
            Target::Local(f, s) => self.local_value(f, s).unwrap_or_else(|| self.object_sym_value(f, s as usize)),
            Target::Global(id) => self.addr.global[id],
        }
    }

    /// A symbol's value as symbol tables record it: TLS symbols by their offset in the TLS block.
    pub fn symbol_table_value(&self, t: Target) -> u64 {
        if self.sym_type(t) == elf::STT_TLS {
            self.dtpoff(t) as u64
        } else {
            self.raw_value(t)
        }
    }

    /// The offset of a TLS symbol within this module's TLS block.
    pub fn dtpoff(&self, t: Target) -> i64 {
        self.raw_value(t).wrapping_sub(self.layout.tls.start) as i64
    }

    /// The address code and data see: IFUNCs are represented by their PLT stub (the canonical
    /// address, so function pointers compare equal everywhere).
    pub fn value(&self, t: Target) -> u64 {
        match self.plans.got.plt_index(t) {
            Some(i) => self.plt_entry_addr(i),
            None => self.raw_value(t),
        }
    }
}

/// The final address of every global symbol, in parallel; then the linker scripts' assignments
/// outside SECTIONS, in order (with the section each script symbol belongs to).
fn global_values(ctx: Placed) -> (IdVec<SymbolId, u64>, Vec<Option<OutputSectionId>>) {
    use rayon::prelude::*;
    let values: Vec<u64> = ctx
        .symbols
        .par_iter()
        .enumerate()
        .with_min_len(4096)
        .map(|(id, s)| match s.def {
            Def::Defined { file, sym } | Def::Common { file, sym } => ctx.object_sym_value(file, sym as usize),
            Def::Synthetic => synthetic_value(ctx, s.name),
            Def::Absolute(v) => v,
            Def::Shared { .. } => match ctx.plans.got.copy_offset.get(&SymbolId::new(id)) {
                Some(&(sec, off)) => ctx.layout.addr(sec) + off,
                None => 0,
            },
            Def::Undefined | Def::Lazy { .. } | Def::Script(_) => 0,
        })
        .collect();
    let mut values: IdVec<SymbolId, u64> = values.into();
    for d in &ctx.defsym_offsets {
        let base = values[d.linker_defined.unwrap_or(d.symbol)];
        values[d.symbol] = base.wrapping_add(d.addend as u64);
    }
    if ctx.script_syms.is_empty() && ctx.script_files.iter().all(|f| f.script.commands.is_empty()) {
        return (values, Vec::new());
    }
    let env = ScriptEnv {
        ctx,
        values: std::cell::RefCell::new(values),
        secs: std::cell::RefCell::new(vec![None; ctx.script_syms.len()]),
    };
    let mut set = |id: SymbolId, v: script::Value| {
        env.values.borrow_mut()[id] = v.val;
        if let Def::Script(i) = ctx.symbols[id].def {
            env.secs.borrow_mut()[i as usize] = v.sec;
        }
    };
    // The assignments inside SECTIONS were evaluated by layout, with the location counter.
    for (i, v) in ctx.layout.script_values.iter().enumerate() {
        if let Some(v) = *v {
            set(ctx.script_syms[i].id, v);
        }
    }
    if let Err(e) = script::eval_top_level(ctx.ctx, &env, &mut set) {
        ctx.diag.error(e);
    }
    (env.values.into_inner(), env.secs.into_inner())
}

/// Every object's local symbol values, objects in parallel.
fn local_values(ctx: Placed) -> IdVec<FileId, LocalValues> {
    use rayon::prelude::*;
    let values: Vec<LocalValues> = ctx
        .objects
        .par_iter()
        .enumerate()
        .with_max_len(8)
        .map(|(f, obj)| {
            let f = FileId::new(f);
            let mut by_addend = vec![0u64; obj.first_global.div_ceil(64)];
            let values = (0..obj.first_global)
                .map(|s| match ctx.merged_section_of(f, s as u32) {
                    Some(_) => {
                        by_addend[s / 64] |= 1 << (s % 64);
                        0
                    }
                    None => ctx.object_sym_value(f, s),
                })
                .collect();
            LocalValues { values, by_addend }
        })
        .collect();
    values.into()
}

fn section_range(ctx: Placed, name: &str) -> Option<(u64, u64)> {
    let id = ctx.sections.position(|s| s.name == name && s.is_alloc())?;
    let addr = ctx.layout.addr(id);
    Some((addr, addr + ctx.layout.sizes[id]))
}

/// The value of a symbol the linker defines (`_end`, `__start_foo`, `_GLOBAL_OFFSET_TABLE_`...).
fn synthetic_value(ctx: Placed, name: &[u8]) -> u64 {
    let layout = ctx.layout;
    let base = layout.base;
    // (address, end address, output section) of every loaded section.
    let alloc = || {
        let loaded = ctx.sections.iter_enumerated().filter(|(_, s)| s.is_alloc());
        loaded.map(|(i, s)| (layout.addr(i), layout.addr(i) + layout.sizes[i], s))
    };
    let span = |c: Content| layout.synthetic.get(c).map(|id| (layout.addr(id), layout.sizes[id]));
    let start_or_base = |n: &str| section_range(ctx, n).map_or(base, |r| r.0);
    let end_or_base = |n: &str| section_range(ctx, n).map_or(base, |r| r.1);
    // --section-order's `!SYMBOL` words (a name given twice: its last place).
    if let Some((_, addr)) = layout.order_symbols.iter().rev().find(|(n, _)| n.as_bytes() == name) {
        return *addr;
    }
    match name {
        b"__ehdr_start" | b"__executable_start" => base,
        b"_GLOBAL_OFFSET_TABLE_" => ctx.got_base(),
        b"_DYNAMIC" => ctx.synthetic_addr(Content::Dynamic).unwrap_or(0),
        b"__rela_iplt_start" => span(Content::RelaPlt).map_or(base, |(addr, _)| addr),
        b"__rela_iplt_end" => span(Content::RelaPlt).map_or(base, |(addr, size)| addr + size),
        b"__init_array_start" => start_or_base(".init_array"),
        b"__init_array_end" => end_or_base(".init_array"),
        b"__fini_array_start" => start_or_base(".fini_array"),
        b"__fini_array_end" => end_or_base(".fini_array"),
        b"__preinit_array_start" => start_or_base(".preinit_array"),
        b"__preinit_array_end" => end_or_base(".preinit_array"),
        b"_end" | b"end" => alloc().filter(|(.., s)| !s.is_tls()).map(|(_, end, _)| end).max().unwrap_or(base),
        b"_edata" | b"edata" => alloc().filter(|(.., s)| !s.is_nobits()).map(|(_, end, _)| end).max().unwrap_or(base),
        b"__bss_start" => alloc()
            .filter(|(.., s)| s.is_nobits() && !s.is_tls())
            .map(|(a, ..)| a)
            .min()
            .unwrap_or_else(|| synthetic_value(ctx, b"_edata")),
        b"_etext" | b"etext" | b"__etext" => alloc()
            .filter(|(.., s)| s.flags & elf::SHF_EXECINSTR as u64 != 0)
            .map(|(_, end, _)| end)
            .max()
            .unwrap_or(base),
        b"__GNU_EH_FRAME_HDR" => ctx.synthetic_addr(Content::EhFrameHdr).unwrap_or(0),
        b"_TLS_MODULE_BASE_" => layout.tls.start,
        _ => match physical_start_stop(name) {
            // --physical-image-base: a section's physical start or end.
            Some((section, stop)) if ctx.config.physical_image_base.is_some() => {
                let start = start_stop(ctx, &[b"__start_", section].concat());
                start.map_or(0, |(id, addr)| {
                    crate::layout::to_paddr(&layout.phdrs, addr) + if stop { layout.sizes[id] } else { 0 }
                })
            }
            _ => start_stop(ctx, name).map_or(0, |(_, value)| value),
        },
    }
}

/// The section a `__phys_start_SEC` or `__phys_stop_SEC` name refers to (SEC) and whether it is
/// its end.
fn physical_start_stop(name: &[u8]) -> Option<(&[u8], bool)> {
    match name.strip_prefix(b"__phys_start_") {
        Some(sec) => Some((sec, false)),
        None => name.strip_prefix(b"__phys_stop_").map(|sec| (sec, true)),
    }
}

/// The output section of a `__start_SEC`/`__stop_SEC` symbol (the first loaded one named SEC)
/// and the symbol's value: the section's start or end.
pub fn start_stop(ctx: Placed, name: &[u8]) -> Option<(OutputSectionId, u64)> {
    let (sec, stop) = crate::resolve::start_stop_section(name)?;
    let id = crate::layout::start_stop_target(ctx.config, &ctx.sections, sec)?;
    let addr = ctx.layout.addr(id);
    Some((id, if stop { addr + ctx.layout.sizes[id] } else { addr }))
}

/// The entry point: `-e` (a symbol or a number), else `_start`; GNU ld warns and uses the start of
/// `.text` when the symbol is missing.
fn entry_address(ctx: Placed, global: &IdVec<SymbolId, u64>) -> u64 {
    let name = ctx.config.entry.clone().unwrap_or_else(|| "_start".to_string());
    if let Some(id) = ctx.by_name.get(&ctx.symbols, name.as_bytes()) {
        if !matches!(ctx.symbols[id].def, Def::Undefined | Def::Lazy { .. }) {
            return global[id];
        }
    }
    if let Some(v) = crate::args::parse_number(&name) {
        return v;
    }
    // A shared library needs no entry point unless one was asked for.
    if ctx.kind == OutputKind::Shared && ctx.config.entry.is_none() {
        return 0;
    }
    let text = section_range(ctx, ".text").map_or(0, |r| r.0);
    ctx.diag.warn(format!("cannot find entry symbol {name}; defaulting to {text:#x}"));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_marked_by_addend_has_no_value_of_its_own() {
        let mut by_addend = vec![0u64; 2];
        by_addend[1] |= 1 << (70 - 64);
        let locals = LocalValues { values: (0..80).collect(), by_addend };
        assert_eq!(locals.get(3), Some(3));
        assert_eq!(locals.get(69), Some(69));
        assert_eq!(locals.get(70), None, "bit 70 is set: the value depends on the addend");
        assert_eq!(locals.get(80 + 64), None, "past the table: no value");
    }
}
