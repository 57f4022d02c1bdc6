//! `.gdb_index` (`--gdb-index`): planned before layout by `synthetic::gdb_index`, its addresses
//! written once symbol values exist.
use super::{Chunk, Header, Sizing, Writing};
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::synthetic::DynRel;
use object::elf;

pub struct GdbIndex;

impl Chunk for GdbIndex {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".gdb_index", sh_type: elf::SHT_PROGBITS, flags: 0, align: 4, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        s.plans.gdb_index.as_ref().map(|g| g.size())
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let index = w.linked.plans.gdb_index.as_ref().expect("a .gdb_index section has a plan");
        index.write(|t| w.linked.raw_value(t), buf);
        Ok(Vec::new())
    }
}
