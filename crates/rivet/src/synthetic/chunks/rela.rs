//! `.rela.plt` and `.rela.dyn`: the relocations the dynamic loader applies.
use super::{aps2, shndx, Chunk, Header, Sizing, Writing};
use crate::arch::Arch;
use crate::ctx::{Ctx, Target};
use crate::diag::Result;
use crate::linked::Linked;
use crate::sections::output::Content;
use crate::synthetic::DynRel;
use object::elf::{self, Rela64};
use object::{pod, LittleEndian as LE, I64, U64};
use std::marker::PhantomData;

/// The size of an Elf64_Rela.
const RELA_SIZE: usize = size_of::<Rela64<LE>>();

/// `.rela.plt`: JUMP_SLOT for imports, IRELATIVE (the resolver as addend) for IFUNCs (in a static
/// executable, bracketed by `__rela_iplt_start/end`).
pub struct RelaPlt<A>(pub PhantomData<A>);

impl<A: Arch> Chunk for RelaPlt<A> {
    fn header(&self, _: &Ctx) -> Header {
        let flags = (elf::SHF_ALLOC | elf::SHF_INFO_LINK) as u64;
        Header { name: ".rela.plt", sh_type: elf::SHT_RELA, flags, align: 8, entsize: RELA_SIZE as u64 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let nplt = s.plans.got.plt.len();
        (nplt > 0).then_some((RELA_SIZE * nplt) as u64)
    }
    fn link_info(&self, w: &Writing) -> (u32, u32) {
        (shndx(w.linked, Content::Dynsym), shndx(w.linked, Content::GotPlt))
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let ctx = w.linked;
        let entries = relas(buf, ctx.plans.got.plt.len());
        for (i, (e, &t)) in entries.iter_mut().zip(&ctx.plans.got.plt).enumerate() {
            let slot = ctx.gotplt_slot_addr(i as u32);
            let r = match t {
                Target::Global(id) if ctx.is_preemptible(t) => {
                    // `-z mark-plt`: the addend is where the entry's indirect jump is (after the
                    // `endbr64` of an IBT entry), the instruction a loader may rewrite.
                    let addend = match ctx.config.mark_plt {
                        true => ctx.plt_entry_addr(i as u32) + A::plt_jump_offset(ctx.plans.got.ibt),
                        false => 0,
                    };
                    DynRel { offset: slot, ty: A::R_JUMP_SLOT, sym: Some(id), addend: addend as i64 }
                }
                _ => DynRel { offset: slot, ty: A::R_IRELATIVE, sym: None, addend: ctx.raw_value(t) as i64 },
            };
            *e = rela(r.offset, info(ctx, &r)?, r.addend);
        }
        Ok(Vec::new())
    }
}

/// `.rela.dyn`: sized from the relocation scan's count (packed: from its plan, `aps2`); its
/// contents are every other section's dynamic relocations, so the writer fills it last
/// (`write_rela_dyn`).
pub struct RelaDyn<A>(pub PhantomData<A>);

impl<A: Arch> Chunk for RelaDyn<A> {
    fn header(&self, ctx: &Ctx) -> Header {
        // A packed section is a byte stream, as lld marks it (entry size 1).
        let (sh_type, entsize) = match ctx.config.pack_android_relocs {
            true => (aps2::SHT_ANDROID_RELA, 1),
            false => (elf::SHT_RELA, RELA_SIZE as u64),
        };
        Header { name: ".rela.dyn", sh_type, flags: elf::SHF_ALLOC as u64, align: 8, entsize }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let n = s.plans.got.dynrel_count;
        if !super::has_dynamic(s.ctx) || n == 0 {
            return None;
        }
        if !s.ctx.config.pack_android_relocs {
            return Some(RELA_SIZE as u64 * n);
        }
        match aps2::size::<A>(s.ctx, s.offsets, s.plans, s.synthetic) {
            Ok(size) => Some(size),
            Err(e) => {
                s.ctx.diag.error(e.to_string());
                None
            }
        }
    }
    fn link_info(&self, w: &Writing) -> (u32, u32) {
        (shndx(w.linked, Content::Dynsym), 0)
    }
    fn write(&self, _: &Writing, _: &mut [u8]) -> Result<Vec<DynRel>> {
        Ok(Vec::new())
    }
}

/// Writes `.rela.dyn`: RELATIVE relocations first (DT_RELACOUNT lets the loader apply them in a
/// tight loop), each group sorted by address: deterministic whatever the thread count.
pub fn write_rela_dyn<A: Arch>(ctx: &Linked, mut rels: Vec<DynRel>, buf: &mut [u8]) -> Result<()> {
    use rayon::prelude::*;
    if ctx.config.pack_android_relocs {
        return aps2::write::<A>(ctx, rels, buf);
    }
    // Sorted and written on every thread (cxx-big has 104k relocations).
    rels.par_sort_unstable_by_key(|r| (r.ty != A::R_RELATIVE, r.offset, r.ty, r.sym));
    if rels.len() * RELA_SIZE != buf.len() {
        crate::bail!(
            "internal error: {} dynamic relocations were written but {} were counted",
            rels.len(),
            buf.len() / RELA_SIZE
        );
    }
    const PER_TASK: usize = 8192;
    buf.par_chunks_mut(RELA_SIZE * PER_TASK).zip(rels.par_chunks(PER_TASK)).try_for_each(|(out, rels)| {
        for (e, r) in relas(out, rels.len()).iter_mut().zip(rels) {
            *e = rela(r.offset, info(ctx, r)?, r.addend);
        }
        Ok(())
    })
}

/// An Elf64_Rela.
fn rela(offset: u64, info: u64, addend: i64) -> Rela64<LE> {
    Rela64 { r_offset: U64::new(LE, offset), r_info: U64::new(LE, info), r_addend: I64::new(LE, addend) }
}

/// `buf` as `n` Elf64_Rela entries (a bug if it is shorter; the `unaligned` feature of `object`
/// makes its ELF types byte-aligned, so any offset will do).
fn relas(buf: &mut [u8], n: usize) -> &mut [Rela64<LE>] {
    pod::slice_from_bytes_mut(buf, n).expect("room for the relocations").0
}

fn info(ctx: &Linked, r: &DynRel) -> Result<u64> {
    super::r_info(ctx, ctx.plans, r.ty, r.sym)
}
