//! `.dynamic` and `.interp`.
use super::{has_dynamic, shndx, Chunk, Header, Sizing, Writing};
use crate::arch::Arch;
use crate::args::Symbolic;
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::ids::{OutputSectionId, SymbolId};
use crate::resolve::Def;
use crate::sections::output::{Content, Sizes, SyntheticIds};
use crate::synthetic::plans::Plans;
use crate::synthetic::DynRel;
use object::elf::{self, Dyn64};
use object::{pod, LittleEndian as LE, U64};
use std::marker::PhantomData;

// The RELR tags (gABI; the `object` crate has no names for them) and Android's older ones.
const DT_RELRSZ: u32 = 35;
const DT_RELR: u32 = 36;
const DT_RELRENT: u32 = 37;
const DT_ANDROID_RELR: u32 = 0x6fff_e000;
const DT_ANDROID_RELRSZ: u32 = 0x6fff_e001;
const DT_ANDROID_RELRENT: u32 = 0x6fff_e003;

/// A `.dynamic` entry's value, resolved when addresses are known.
#[derive(Clone, Copy, Debug)]
pub enum DynValue {
    Value(u64),
    SectionAddr(OutputSectionId),
    SectionSize(OutputSectionId),
    /// A global symbol's address (DT_INIT = `_init`).
    Symbol(SymbolId),
}

/// The interpreter an executable names in PT_INTERP.
pub fn interpreter<A: Arch>(ctx: &Ctx) -> Option<String> {
    if !ctx.kind.is_dynamic() || !ctx.kind.is_executable() || ctx.config.no_dynamic_linker {
        return None;
    }
    Some(ctx.config.dynamic_linker.clone().unwrap_or_else(|| A::NAMES.dynamic_linker.into()))
}

/// `.interp`: the dynamic loader's path, NUL-terminated.
pub struct Interp<A>(pub PhantomData<A>);

impl<A: Arch> Chunk for Interp<A> {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".interp", sh_type: elf::SHT_PROGBITS, flags: elf::SHF_ALLOC as u64, align: 1, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        has_dynamic(s.ctx).then(|| interpreter::<A>(s.ctx)).flatten().map(|i| i.len() as u64 + 1)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let interp = interpreter::<A>(w.linked).unwrap_or_default();
        buf[..interp.len()].copy_from_slice(interp.as_bytes());
        Ok(Vec::new())
    }
}

/// `.dynamic`: made last of the dynamic sections, since its entries name the others. A static PIE
/// gets a minimal one.
pub struct Dynamic;

impl Chunk for Dynamic {
    fn header(&self, ctx: &Ctx) -> Header {
        // `-z rodynamic`: read-only, so it goes with the read-only data.
        let flags = if ctx.config.rodynamic { elf::SHF_ALLOC } else { elf::SHF_ALLOC | elf::SHF_WRITE };
        Header { name: ".dynamic", sh_type: elf::SHT_DYNAMIC, flags: flags as u64, align: 8, entsize: 16 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        has_dynamic(s.ctx).then(|| 16 * entries(s.ctx, s.sizes, s.plans, s.synthetic).len() as u64)
    }
    fn link_info(&self, w: &Writing) -> (u32, u32) {
        (shndx(w.linked, Content::Dynstr), 0)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let ctx = w.linked;
        let list = entries(ctx, &ctx.layout.sizes, ctx.plans, &ctx.layout.synthetic);
        let (out, _) = pod::slice_from_bytes_mut::<Dyn64<LE>>(buf, list.len()).expect("room for .dynamic");
        for (e, &(tag, v)) in out.iter_mut().zip(&list) {
            let value = match v {
                DynValue::Value(v) => v,
                DynValue::SectionAddr(s) => ctx.layout.addr(s),
                DynValue::SectionSize(s) => ctx.layout.sizes[s],
                DynValue::Symbol(id) => ctx.addr.global[id],
            };
            *e = Dyn64 { d_tag: U64::new(LE, tag as u64), d_val: U64::new(LE, value) };
        }
        Ok(Vec::new())
    }
}

/// The `.dynamic` entries, in GNU ld's order, once every other synthetic section exists.
pub fn entries(ctx: &Ctx, sizes: &Sizes, plans: &Plans, synthetic: &SyntheticIds) -> Vec<(i64, DynValue)> {
    use elf::*;
    let exe = ctx.kind.is_executable();
    let dynamic_output = ctx.kind.is_dynamic();
    let id = |c: Content| synthetic.get(c);
    let mut dynamic: Vec<(i64, DynValue)> = Vec::new();
    let mut push = |tag: u32, v: DynValue| dynamic.push((tag as i64, v));
    for &n in &plans.dynsym.needed {
        push(DT_NEEDED, DynValue::Value(n as u64));
    }
    if let Some(so) = plans.dynsym.soname {
        push(DT_SONAME, DynValue::Value(so as u64));
    }
    if let Some(rp) = plans.dynsym.runpath {
        let tag = if ctx.config.new_dtags { DT_RUNPATH } else { DT_RPATH };
        push(tag, DynValue::Value(rp as u64));
    }
    // After DT_RUNPATH, as GNU ld places them; every one given, as lld keeps them.
    for &f in &plans.dynsym.filters {
        push(DT_FILTER, DynValue::Value(f as u64));
    }
    for &a in &plans.dynsym.auxiliaries {
        push(DT_AUXILIARY, DynValue::Value(a as u64));
    }
    if let Some(a) = plans.dynsym.audit {
        push(DT_AUDIT, DynValue::Value(a as u64));
    }
    if let Some(a) = plans.dynsym.depaudit {
        push(DT_DEPAUDIT, DynValue::Value(a as u64));
    }
    if dynamic_output {
        for (name, tag) in [(ctx.config.init.as_bytes(), DT_INIT), (ctx.config.fini.as_bytes(), DT_FINI)] {
            if let Some(sym) = ctx.by_name.get(&ctx.symbols, name) {
                if matches!(ctx.symbols[sym].def, Def::Defined { .. }) {
                    push(tag, DynValue::Symbol(sym));
                }
            }
        }
        for (name, addr, size) in [
            (".preinit_array", DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ),
            (".init_array", DT_INIT_ARRAY, DT_INIT_ARRAYSZ),
            (".fini_array", DT_FINI_ARRAY, DT_FINI_ARRAYSZ),
        ] {
            if name == ".preinit_array" && !exe {
                continue;
            }
            if let Some(i) =
                ctx.sections.iter_enumerated().find(|(i, s)| s.name == name && sizes[*i] > 0).map(|(i, _)| i)
            {
                push(addr, DynValue::SectionAddr(i));
                push(size, DynValue::SectionSize(i));
            }
        }
    }
    if let Some(h) = id(Content::Hash) {
        push(DT_HASH, DynValue::SectionAddr(h));
    }
    if let Some(h) = id(Content::GnuHash) {
        push(DT_GNU_HASH, DynValue::SectionAddr(h));
    }
    if let (Some(dynsym), Some(dynstr)) = (id(Content::Dynsym), id(Content::Dynstr)) {
        push(DT_STRTAB, DynValue::SectionAddr(dynstr));
        push(DT_SYMTAB, DynValue::SectionAddr(dynsym));
        push(DT_STRSZ, DynValue::SectionSize(dynstr));
        push(DT_SYMENT, DynValue::Value(24));
    }
    // The loader writes DT_DEBUG's value, which a read-only `.dynamic` cannot take (lld leaves it
    // out too).
    if exe && !ctx.config.rodynamic {
        push(DT_DEBUG, DynValue::Value(0));
    }
    if let Some(relaplt) = id(Content::RelaPlt) {
        let gotplt = id(Content::GotPlt).expect(".got.plt exists when .rela.plt does");
        push(DT_PLTGOT, DynValue::SectionAddr(gotplt));
        push(DT_PLTRELSZ, DynValue::Value(24 * plans.got.plt.len() as u64));
        push(DT_PLTREL, DynValue::Value(DT_RELA as u64));
        push(DT_JMPREL, DynValue::SectionAddr(relaplt));
    }
    // `-z mark-plt` (GNU ld 2.41): where the PLT entries are, so that a loader binding at start-up
    // can turn their indirect jumps into direct ones (glibc 2.39's PLT rewrite).
    if ctx.config.mark_plt && id(Content::RelaPlt).is_some() {
        let plt = id(Content::PltSec).or(id(Content::Plt)).expect("a PLT exists when .rela.plt does");
        let [dt_plt, dt_pltsz, dt_pltent] = plans.got.mark_plt_tags;
        push(dt_plt, DynValue::SectionAddr(plt));
        push(dt_pltsz, DynValue::SectionSize(plt));
        push(dt_pltent, DynValue::Value(plans.got.plt_entry));
    }
    // A PLT entry of a function with a variant procedure-call standard (AArch64 SVE/SIMD
    // functions): the loader must not bind it lazily, through a resolver that clobbers the
    // registers those functions keep.
    if plans.got.variant_pcs && id(Content::RelaPlt).is_some() {
        push(plans.got.dt_variant_pcs, DynValue::Value(0));
    }
    // A guarded PLT (AArch64's BTI landing pads, PAC-authenticated entries), said in every
    // dynamic output whose PLT would be one, as lld says it (GNU ld: only with a PLT), where
    // GNU ld puts it.
    let [bti_plt, pac_plt] = plans.got.guarded_plt_tags;
    if plans.got.guard.bti {
        push(bti_plt, DynValue::Value(0));
    }
    if plans.got.guard.pac {
        push(pac_plt, DynValue::Value(0));
    }
    if let Some(rela) = id(Content::RelaDyn) {
        // Packed (APS2), it is found by Android's tags; DT_RELAENT still gives the size of the
        // entries it decodes to (lld writes it too).
        let (addr, size) = match ctx.config.pack_android_relocs {
            true => (super::aps2::DT_ANDROID_RELA, super::aps2::DT_ANDROID_RELASZ),
            false => (DT_RELA, DT_RELASZ),
        };
        push(addr, DynValue::SectionAddr(rela));
        push(size, DynValue::SectionSize(rela));
        push(DT_RELAENT, DynValue::Value(24));
    }
    if let Some(relr) = id(Content::RelrDyn) {
        let (addr, size, ent) = match ctx.config.android_relr_tags {
            true => (DT_ANDROID_RELR, DT_ANDROID_RELRSZ, DT_ANDROID_RELRENT),
            false => (DT_RELR, DT_RELRSZ, DT_RELRENT),
        };
        push(addr, DynValue::SectionAddr(relr));
        push(size, DynValue::SectionSize(relr));
        push(ent, DynValue::Value(8));
    }
    let (flags, flags_1) = dt_flags(ctx, plans);
    if plans.got.textrel.is_some() {
        push(DT_TEXTREL, DynValue::Value(0));
    }
    if flags != 0 {
        push(DT_FLAGS, DynValue::Value(flags as u64));
    }
    if flags_1 != 0 {
        push(DT_FLAGS_1, DynValue::Value(flags_1 as u64));
    }
    if let Some(vs) = id(Content::GnuVersion) {
        push(DT_VERSYM, DynValue::SectionAddr(vs));
    }
    if let Some(vd) = id(Content::GnuVersionD) {
        push(DT_VERDEF, DynValue::SectionAddr(vd));
        push(DT_VERDEFNUM, DynValue::Value(plans.dynsym.verdef_count as u64));
    }
    if let Some(vr) = id(Content::GnuVersionR) {
        push(DT_VERNEED, DynValue::SectionAddr(vr));
        push(DT_VERNEEDNUM, DynValue::Value(plans.dynsym.verneed_count as u64));
    }
    // DT_RELACOUNT counts the RELATIVE entries at the start of a plain `.rela.dyn`.
    if plans.got.relative_count > 0 && !ctx.config.pack_android_relocs {
        push(DT_RELACOUNT, DynValue::Value(plans.got.relative_count));
    }
    push(DT_NULL, DynValue::Value(0));
    dynamic
}

/// DT_FLAGS and DT_FLAGS_1.
fn dt_flags(ctx: &Ctx, plans: &Plans) -> (u32, u32) {
    use elf::*;
    let exe = ctx.kind.is_executable();
    let mut flags = 0;
    let mut flags_1 = ctx.config.dt_flags_1;
    if exe {
        // Only a shared object can be initialised first, kept loaded or refused to dlopen: GNU ld
        // drops these bits from executables.
        flags_1 &= !(DF_1_INITFIRST | DF_1_NODELETE | DF_1_NOOPEN);
    }
    if flags_1 & DF_1_ORIGIN != 0 {
        flags |= DF_ORIGIN;
    }
    if ctx.config.symbolic == Symbolic::All && !exe {
        flags |= DF_SYMBOLIC;
    }
    // A shared object with initial-exec TLS needs its block in the static TLS area: the loader
    // refuses to dlopen it when that is full instead of failing later (GNU ld and lld set it).
    if !exe && plans.got.got.iter().any(|&(key, _)| key.kind() == crate::synthetic::tables::GotKind::TpOff) {
        flags |= DF_STATIC_TLS;
    }
    // The loader makes read-only segments writable while it relocates them.
    if plans.got.textrel.is_some() {
        flags |= DF_TEXTREL;
    }
    if ctx.config.now {
        flags |= DF_BIND_NOW;
        flags_1 |= DF_1_NOW;
    }
    if ctx.kind.is_pic() && exe {
        flags_1 |= DF_1_PIE;
    }
    (flags, flags_1)
}
