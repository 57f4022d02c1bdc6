//! `.plt` and `.plt.sec` (the IBT PLT's entries): sized and placed here, their bytes written by
//! the target (`Arch::write_plt`, `Arch::write_plt_sec`).
use super::{Chunk, Header, Sizing, Writing};
use crate::arch::Arch;
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::synthetic::DynRel;
use object::elf;
use std::marker::PhantomData;

const AX: u64 = (elf::SHF_ALLOC | elf::SHF_EXECINSTR) as u64;

/// `.plt`: in dynamic outputs a header and lazy stubs, in static ones only stubs for IFUNCs.
pub struct Plt<A>(pub PhantomData<A>);

impl<A: Arch> Chunk for Plt<A> {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".plt", sh_type: elf::SHT_PROGBITS, flags: AX, align: A::PLT_ALIGN, entsize: A::PLT_ENTSIZE }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let nplt = s.plans.got.plt.len() as u64;
        (nplt > 0).then(|| s.plans.got.plt_header + s.plans.got.plt_entry * nplt)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        A::write_plt(w.linked, w.place.addr, buf)?;
        Ok(Vec::new())
    }
}

/// `.plt.sec` (IBT PLT of a dynamic output, laid out as lld does): the entries symbols and calls
/// use; `.plt` keeps the header and the lazy stubs.
pub struct PltSec<A>(pub PhantomData<A>);

impl<A: Arch> Chunk for PltSec<A> {
    fn header(&self, _: &Ctx) -> Header {
        Header {
            name: ".plt.sec",
            sh_type: elf::SHT_PROGBITS,
            flags: AX,
            align: A::PLT_ALIGN,
            entsize: A::PLT_ENTRY_SIZE,
        }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let nplt = s.plans.got.plt.len() as u64;
        (nplt > 0 && s.plans.got.ibt && s.plans.got.plt_header > 0).then(|| s.plans.got.plt_entry * nplt)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        A::write_plt_sec(w.linked, w.place.addr, buf)?;
        Ok(Vec::new())
    }
}
