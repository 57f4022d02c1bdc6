//! The link once layout has placed everything: `Addresses` (every symbol's value and the entry
//! point), computed from the `Ctx` and the `Layout`, and `Linked`, the view the writers take. The
//! questions that need an address (`value`, `tpoff`, ...) are answered here and only here: before
//! layout there is no `Linked`, so no stage can read an address that does not exist yet.
use crate::ctx::{Ctx, OutputKind, Target};
use crate::ids::{FileId, IdVec, SymbolId};
use crate::layout::Layout;
use crate::resolve::Def;
use crate::sections::merged::MergedSection;
use crate::sections::output::Content;
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

/// Every address the writers need, fixed once layout is done.
pub struct Addresses {
    /// Each global symbol's value.
    pub global: IdVec<SymbolId, u64>,
    /// Every object's local symbols' values: relocations read them instead of finding the address
    /// through the section, merge and `.eh_frame` tables each time (those lookups were 17% of a
    /// cxx-big write's CPU time).
    pub locals: IdVec<FileId, LocalValues>,
    pub entry: u64,
}

impl Addresses {
    /// The values of every symbol and the entry point, from the sections' addresses.
    pub fn compute(ctx: &Ctx, layout: &Layout) -> Addresses {
        let global = global_values(ctx, layout);
        let locals = local_values(ctx);
        let entry = entry_address(ctx, &global);
        Addresses { global, locals, entry }
    }
}

/// The link after layout: the context, the layout and the addresses. It derefs to the `Ctx`.
#[derive(Clone, Copy)]
pub struct Linked<'l, 'a> {
    pub ctx: &'l Ctx<'a>,
    pub layout: &'l Layout,
    pub addr: &'l Addresses,
}

impl<'a> std::ops::Deref for Linked<'_, 'a> {
    type Target = Ctx<'a>;
    fn deref(&self) -> &Ctx<'a> {
        self.ctx
    }
}

impl<'l, 'a> Linked<'l, 'a> {
    pub fn new(ctx: &'l Ctx<'a>, layout: &'l Layout, addr: &'l Addresses) -> Linked<'l, 'a> {
        Linked { ctx, layout, addr }
    }

    /// A relocation against the section symbol of a merged section refers to the piece at
    /// (symbol value + addend), which may have moved independently of its neighbours: the value to
    /// use with the addend is that piece's address minus the addend (lld's rule). None for other
    /// targets.
    pub fn merged_section_value(&self, t: Target, addend: i64) -> Option<i128> {
        let Target::Local(f, s) = t else { return None };
        let (m, value) = self.merged_target(f, s)?;
        self.merged_value(m, value, addend)
    }

    /// For local symbol `sym` of `file`, when `merged_section_value` works through it: the merged
    /// section whose section symbol it is (live, and the symbol has no value of its own) and the
    /// symbol's value.
    pub fn merged_target(&self, file: FileId, sym: u32) -> Option<(&'l MergedSection, u64)> {
        if self.local_value(file, sym).is_some() {
            return None;
        }
        let ctx: &'l Ctx<'a> = self.ctx;
        let sec = ctx.merged_section_of(file, sym)?;
        let obj = &ctx.objects[file];
        let section = &obj.sections[sec as usize];
        if !section.live {
            return None;
        }
        Some((ctx.merges.at(section.merge_index)?, obj.syms[sym as usize].st_value.get(LE)))
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
        match self.got.plt_index(t) {
            Some(i) => self.plt_entry_addr(i),
            None => self.raw_value(t),
        }
    }

    /// The thread-pointer offset of a TLS symbol (negative: TLS sits below the thread pointer).
    pub fn tpoff(&self, t: Target) -> i64 {
        // `_TLS_MODULE_BASE_@tpoff` is 0, as in lld: a local-dynamic TLS-descriptor sequence
        // relaxed in an executable leaves 0 in %rax, and the `x@dtpoff` added to it (relaxed to
        // x's thread-pointer offset, as after the classic local-dynamic sequence) is the whole
        // offset; the block's own offset must not count twice.
        if let Target::Global(id) = t {
            if self.symbols[id].name == b"_TLS_MODULE_BASE_" {
                return 0;
            }
        }
        self.raw_value(t).wrapping_sub(self.layout.tls.end) as i64
    }
}

/// The final address of every global symbol, in parallel.
fn global_values(ctx: &Ctx, layout: &Layout) -> IdVec<SymbolId, u64> {
    use rayon::prelude::*;
    let values: Vec<u64> = ctx
        .symbols
        .par_iter()
        .enumerate()
        .with_min_len(4096)
        .map(|(id, s)| match s.def {
            Def::Defined { file, sym } | Def::Common { file, sym } => ctx.object_sym_value(file, sym as usize),
            Def::Synthetic => synthetic_value(ctx, layout, s.name),
            Def::Absolute(v) => v,
            Def::Shared { .. } => match ctx.got.copy_offset.get(&SymbolId::new(id)) {
                Some(&(sec, off)) => ctx.sections[sec].addr + off,
                None => 0,
            },
            Def::Undefined | Def::Lazy { .. } => 0,
        })
        .collect();
    let mut values: IdVec<SymbolId, u64> = values.into();
    for d in &ctx.defsym_offsets {
        let base = values[d.linker_defined.unwrap_or(d.symbol)];
        values[d.symbol] = base.wrapping_add(d.addend as u64);
    }
    values
}

/// Every object's local symbol values, objects in parallel.
fn local_values(ctx: &Ctx) -> IdVec<FileId, LocalValues> {
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

fn section_range(ctx: &Ctx, name: &str) -> Option<(u64, u64)> {
    ctx.sections.iter().find(|s| s.name == name && s.is_alloc()).map(|s| (s.addr, s.addr + s.size))
}

/// The value of a symbol the linker defines (`_end`, `__start_foo`, `_GLOBAL_OFFSET_TABLE_`...).
fn synthetic_value(ctx: &Ctx, layout: &Layout, name: &[u8]) -> u64 {
    let base = layout.base;
    let alloc = || ctx.sections.iter().filter(|s| s.is_alloc());
    let start_or_base = |n: &str| section_range(ctx, n).map_or(base, |r| r.0);
    let end_or_base = |n: &str| section_range(ctx, n).map_or(base, |r| r.1);
    match name {
        b"__ehdr_start" | b"__executable_start" => base,
        b"_GLOBAL_OFFSET_TABLE_" => ctx.gotplt_addr(),
        b"_DYNAMIC" => ctx.synthetic_section(Content::Dynamic).map_or(0, |d| d.addr),
        b"__rela_iplt_start" => ctx.synthetic_section(Content::RelaPlt).map_or(base, |s| s.addr),
        b"__rela_iplt_end" => ctx.synthetic_section(Content::RelaPlt).map_or(base, |s| s.addr + s.size),
        b"__init_array_start" => start_or_base(".init_array"),
        b"__init_array_end" => end_or_base(".init_array"),
        b"__fini_array_start" => start_or_base(".fini_array"),
        b"__fini_array_end" => end_or_base(".fini_array"),
        b"__preinit_array_start" => start_or_base(".preinit_array"),
        b"__preinit_array_end" => end_or_base(".preinit_array"),
        b"_end" | b"end" => alloc().filter(|s| !s.is_tls()).map(|s| s.addr + s.size).max().unwrap_or(base),
        b"_edata" | b"edata" => alloc().filter(|s| !s.is_nobits()).map(|s| s.addr + s.size).max().unwrap_or(base),
        b"__bss_start" => alloc()
            .filter(|s| s.is_nobits() && !s.is_tls())
            .map(|s| s.addr)
            .min()
            .unwrap_or_else(|| synthetic_value(ctx, layout, b"_edata")),
        b"_etext" | b"etext" | b"__etext" => {
            alloc().filter(|s| s.flags & elf::SHF_EXECINSTR as u64 != 0).map(|s| s.addr + s.size).max().unwrap_or(base)
        }
        b"__GNU_EH_FRAME_HDR" => ctx.synthetic_section(Content::EhFrameHdr).map_or(0, |s| s.addr),
        b"_TLS_MODULE_BASE_" => layout.tls.start,
        _ => {
            let (start, sec) = match name.strip_prefix(b"__start_") {
                Some(sec) => (true, sec),
                None => (false, name.strip_prefix(b"__stop_").unwrap_or(name)),
            };
            let sec = String::from_utf8_lossy(sec);
            match section_range(ctx, &sec) {
                Some((s, e)) => {
                    if start {
                        s
                    } else {
                        e
                    }
                }
                None => 0,
            }
        }
    }
}

/// The entry point: `-e` (a symbol or a number), else `_start`; GNU ld warns and uses the start of
/// `.text` when the symbol is missing.
fn entry_address(ctx: &Ctx, global: &IdVec<SymbolId, u64>) -> u64 {
    let name = ctx.config.entry.clone().unwrap_or_else(|| "_start".to_string());
    if let Some(&id) = ctx.by_name.get(name.as_bytes()) {
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
