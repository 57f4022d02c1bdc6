//! `.symtab`, `.strtab` (planned before layout by `synthetic::symtab`, absent with `-s`) and
//! `.shstrtab` (its size is set by layout once the sections that are kept have their names).
use super::{shndx, Chunk, Header, Sizing, Writing};
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::sections::output::Content;
use crate::synthetic::DynRel;
use object::elf;

pub struct Symtab;

impl Chunk for Symtab {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".symtab", sh_type: elf::SHT_SYMTAB, flags: 0, align: 8, entsize: 24 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        s.symtab.map(|p| p.symtab_size())
    }
    /// `sh_info`: the index of the first global symbol.
    fn link_info(&self, w: &Writing) -> (u32, u32) {
        (shndx(w.linked, Content::Strtab), w.symtab.map_or(0, |p| p.first_global))
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        w.symtab.expect("a .symtab section has a plan").write(w.linked, buf);
        Ok(Vec::new())
    }
}

pub struct Strtab;

impl Chunk for Strtab {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".strtab", sh_type: elf::SHT_STRTAB, flags: 0, align: 1, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        s.symtab.map(|p| p.strtab_size)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        w.symtab.expect("a .strtab section has a plan").write_strtab(w.linked, buf);
        Ok(Vec::new())
    }
}

pub struct Shstrtab;

impl Chunk for Shstrtab {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".shstrtab", sh_type: elf::SHT_STRTAB, flags: 0, align: 1, entsize: 0 }
    }
    fn size(&self, _: &Sizing) -> Option<u64> {
        Some(0)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        buf.copy_from_slice(&w.linked.layout.shstrtab);
        Ok(Vec::new())
    }
}
