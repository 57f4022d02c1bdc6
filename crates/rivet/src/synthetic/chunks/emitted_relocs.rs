//! The `.rela<name>` sections of `--emit-relocs`: made (and sized) by `synthetic::emit_relocs`
//! before layout, not through `ORDER`; written here once addresses and `.symtab` are known.
use super::{shndx, Chunk, Header, Sizing, Writing};
use crate::arch::Arch;
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::sections::output::Content;
use crate::synthetic::DynRel;
use object::elf;
use std::marker::PhantomData;

pub struct EmittedRelocs<A>(pub PhantomData<A>);

impl<A: Arch> Chunk for EmittedRelocs<A> {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".rela", sh_type: elf::SHT_RELA, flags: elf::SHF_INFO_LINK as u64, align: 8, entsize: 24 }
    }
    /// Sized when made (one per target section), so never asked here.
    fn size(&self, _: &Sizing) -> Option<u64> {
        None
    }
    /// `sh_link`: `.symtab`; `sh_info`: the section the relocations apply to.
    fn link_info(&self, w: &Writing) -> (u32, u32) {
        let target = w.linked.plans.emit_relocs.as_ref().and_then(|e| e.target_of(w.id));
        (shndx(w.linked, Content::Symtab), target.map_or(0, |t| w.linked.layout.shndx(t)))
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        if let Some(target) = w.linked.plans.emit_relocs.as_ref().and_then(|e| e.target_of(w.id)) {
            crate::synthetic::emit_relocs::write::<A>(w.linked, w.symtab, target, buf);
        }
        Ok(Vec::new())
    }
}
