//! `.got` and `.got.plt`.
use super::{put64, Chunk, Header, Sizing, Writing};
use crate::arch::Arch;
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::sections::output::Content;
use crate::synthetic::{got_entry, DynRel};
use object::elf;
use std::marker::PhantomData;

/// `.got`: each entry's words and the dynamic relocations that complete them (`got_entry`).
pub struct Got<A>(pub PhantomData<A>);

impl<A: Arch> Chunk for Got<A> {
    fn header(&self, _: &Ctx) -> Header {
        let flags = (elf::SHF_ALLOC | elf::SHF_WRITE) as u64;
        Header { name: ".got", sh_type: elf::SHT_PROGBITS, flags, align: 8, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        (!s.plans.got.got.is_empty()).then(|| 8 * s.plans.got.got_words as u64)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let ctx = w.linked;
        let base = w.place.addr;
        let mut rels = Vec::new();
        for &(key, word) in &ctx.plans.got.got {
            let (values, relocs) = got_entry::<A>(ctx, Some(ctx), key);
            let off = 8 * word as usize;
            for (i, v) in values.iter().take(key.kind().words() as usize).enumerate() {
                put64(buf, off + 8 * i, *v);
            }
            for (delta, ty, sym, addend) in relocs {
                if ty == A::R_RELATIVE && ctx.config.pack_relative_relocs {
                    continue; // In .relr.dyn.
                }
                rels.push(DynRel { offset: base + off as u64 + delta, ty, sym, addend });
            }
        }
        Ok(rels)
    }
}

/// `.got.plt`: `_DYNAMIC` in the first word, then one slot per PLT entry. An import's slot starts at
/// its stub's `push` (lazy binding: the first call goes to the resolver); an IFUNC's slot holds its
/// resolver until the IRELATIVE relocation replaces it. Also made when only
/// `_GLOBAL_OFFSET_TABLE_` or a GOT-relative relocation needs it.
pub struct GotPlt<A>(pub PhantomData<A>);

impl<A: Arch> Chunk for GotPlt<A> {
    fn header(&self, _: &Ctx) -> Header {
        let flags = (elf::SHF_ALLOC | elf::SHF_WRITE) as u64;
        Header { name: ".got.plt", sh_type: elf::SHT_PROGBITS, flags, align: 8, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let (ctx, got) = (s.ctx, &s.plans.got);
        let nplt = got.plt.len() as u64;
        let wanted =
            nplt > 0 || got.need_gotplt || ctx.by_name.contains_key(&ctx.symbols, &b"_GLOBAL_OFFSET_TABLE_"[..]);
        wanted.then(|| 8 * (A::GOTPLT_RESERVED + nplt))
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let ctx = w.linked;
        let dynamic = ctx.synthetic_addr(Content::Dynamic).unwrap_or(0);
        put64(buf, 0, dynamic);
        for (i, &t) in ctx.plans.got.plt.iter().enumerate() {
            let v =
                if ctx.is_preemptible(t) { crate::arch::plt_lazy_addr::<A>(ctx, i as u32) } else { ctx.raw_value(t) };
            put64(buf, 8 * (A::GOTPLT_RESERVED as usize + i), v);
        }
        Ok(Vec::new())
    }
}
