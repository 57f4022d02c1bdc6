//! `-z rewrite-endbr` (mold's option): under Intel CET's indirect branch tracking an indirect jump
//! or call must land on an `endbr64`. Compilers put one at the start of every global function,
//! since they cannot know whether another file takes its address; the linker sees every file, so
//! the landing pads of functions that are only ever called or jumped to directly become 4-byte
//! nops, and a hijacked indirect branch has fewer places to land.
//!
//! Which function starts lose their `endbr64` (mold's rule, plus a function's aliases):
//! - a global `STT_FUNC` definition in a loaded executable section, whose bytes there are
//!   `endbr64` (local functions never get one unless their address is taken);
//! - unless some relocation of a loaded section other than `.eh_frame` that is not a direct call
//!   (`R_X86_64_PLT32`, `R_X86_64_PLTOFF64`) refers to that place: through a symbol there (any
//!   symbol, local or global, at that offset), or through the section's symbol with an addend
//!   reaching it (`sec + off`, or `sec + off - 4` as a PC-relative reference writes it);
//! - unless it is the entry point, `-init`/`-fini`'s function, or exported (in `.dynsym`):
//!   the loader or another module may call those indirectly.
//!
//! The nops are written over the relocated bytes as each input section is written (`patch`).
use crate::ctx::Ctx;
use crate::ids::{FileId, SectionRef, Target};
use crate::resolve::Def;
use crate::synthetic::dynamic_tables::DynPlan;
use object::elf;
use object::LittleEndian as LE;
use rustc_hash::{FxHashMap, FxHashSet};

pub const ENDBR64: [u8; 4] = [0xf3, 0x0f, 0x1e, 0xfa];
/// `nopl 0x0(%rax)`: the 4-byte nop that takes the place of an `endbr64`.
pub const NOP4: [u8; 4] = [0x0f, 0x1f, 0x40, 0x00];

/// The `endbr64`s that become nops: their offsets in each input section, sorted.
#[derive(Default, Debug)]
pub struct EndbrRewrites(FxHashMap<SectionRef, Vec<u64>>);

impl EndbrRewrites {
    /// Input section `r` has an `endbr64` to rewrite (so it is not copied verbatim).
    pub fn touches(&self, r: SectionRef) -> bool {
        self.0.contains_key(&r)
    }

    /// How many `endbr64`s become nops.
    pub fn len(&self) -> usize {
        self.0.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Writes the nops of input section `r` that fall in `buf`, which holds its bytes from offset
    /// `from` on.
    pub fn patch(&self, r: SectionRef, buf: &mut [u8], from: u64) {
        let Some(offsets) = self.0.get(&r) else { return };
        let end = from + buf.len() as u64;
        for &off in offsets.iter().filter(|&&o| o >= from && o + 4 <= end) {
            let at = (off - from) as usize;
            buf[at..at + 4].copy_from_slice(&NOP4);
        }
    }
}

/// The place an input section's offset is written at: the section itself, or the one identical
/// code folding kept in its stead. None: not in the output.
fn place(ctx: &Ctx, r: SectionRef, off: u64) -> Option<(SectionRef, u64)> {
    if let Some(kept) = ctx.objects.folded_into(r) {
        return Some((kept, off));
    }
    ctx.objects[r].live.then_some((r, off))
}

/// Where symbol `idx` of object `file` is: its section and offset (None for symbols outside a
/// section).
fn sym_place(ctx: &Ctx, file: FileId, idx: u32) -> Option<(SectionRef, u64)> {
    let obj = &ctx.objects[file];
    let sec = obj.sym_shndx(idx as usize)?;
    place(ctx, SectionRef::new(file, sec), obj.syms[idx as usize].st_value.get(LE))
}

/// The definition in an object of a global symbol, if it has one there.
fn defined(def: Def) -> Option<(FileId, u32)> {
    match def {
        Def::Defined { file, sym } => Some((file, sym)),
        _ => None,
    }
}

/// Decides which `endbr64`s `-z rewrite-endbr` turns into nops (empty without the option).
pub fn plan(ctx: &Ctx, dynsym: &DynPlan) -> EndbrRewrites {
    if !ctx.config.rewrite_endbr {
        return EndbrRewrites::default();
    }
    // Global function starts that hold an endbr64.
    let mut candidates: FxHashSet<(SectionRef, u64)> = FxHashSet::default();
    for s in ctx.symbols.iter() {
        let Some((file, sym)) = defined(s.def) else { continue };
        if ctx.objects[file].syms[sym as usize].st_type() != elf::STT_FUNC {
            continue;
        }
        let Some((r, off)) = sym_place(ctx, file, sym) else { continue };
        let sec = &ctx.objects[r];
        let code = sec.flags & elf::SHF_EXECINSTR as u64 != 0 && sec.flags & elf::SHF_ALLOC as u64 != 0;
        if code && sec.merge_index.is_none() && sec.data.get(off as usize..off as usize + 4) == Some(&ENDBR64[..]) {
            candidates.insert((r, off));
        }
    }
    if candidates.is_empty() {
        return EndbrRewrites::default();
    }
    // The places something may branch to indirectly keep their landing pad.
    let mut keep = |at: Option<(SectionRef, u64)>| {
        if let Some(at) = at {
            candidates.remove(&at);
        }
    };
    for (f, obj) in ctx.objects.iter_enumerated() {
        for sec in &obj.sections {
            if !sec.live || sec.flags & elf::SHF_ALLOC as u64 == 0 || sec.is_eh_frame() {
                continue;
            }
            for rel in sec.relas {
                let ty = rel.r_type(LE, false);
                if matches!(ty, elf::R_X86_64_NONE | elf::R_X86_64_PLT32 | elf::R_X86_64_PLTOFF64) {
                    continue;
                }
                match ctx.target(f, rel.r_sym(LE, false)) {
                    Target::Global(id) => {
                        keep(defined(ctx.symbols[id].def).and_then(|(df, ds)| sym_place(ctx, df, ds)))
                    }
                    Target::Local(lf, ls) => {
                        let local = &obj.syms[ls as usize];
                        if local.st_type() == elf::STT_SECTION {
                            let Some(sec) = obj.sym_shndx(ls as usize) else { continue };
                            let addend = rel.r_addend.get(LE);
                            for a in [addend, addend.wrapping_add(4)] {
                                if let Ok(off) = u64::try_from(a) {
                                    keep(place(ctx, SectionRef::new(lf, sec), off));
                                }
                            }
                        } else {
                            keep(sym_place(ctx, lf, ls));
                        }
                    }
                }
            }
        }
    }
    let by_name = |name: &[u8]| ctx.by_name.get(&ctx.symbols, name).and_then(|id| defined(ctx.symbols[id].def));
    let entry = ctx.config.entry.clone().unwrap_or_else(|| "_start".to_string());
    for name in [entry.as_str(), ctx.config.init.as_str(), ctx.config.fini.as_str()] {
        keep(by_name(name.as_bytes()).and_then(|(f, s)| sym_place(ctx, f, s)));
    }
    for &id in &dynsym.symbols {
        keep(defined(ctx.symbols[id].def).and_then(|(f, s)| sym_place(ctx, f, s)));
    }
    let mut out: FxHashMap<SectionRef, Vec<u64>> = FxHashMap::default();
    for (r, off) in candidates {
        out.entry(r).or_default().push(off);
    }
    for offsets in out.values_mut() {
        offsets.sort_unstable();
    }
    EndbrRewrites(out)
}
