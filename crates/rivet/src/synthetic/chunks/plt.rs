//! `.plt` and `.plt.sec` (the IBT PLT's entries).
use super::{Chunk, Header, Sizing, Writing};
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::synthetic::tables::PLT_ENTRY_SIZE;
use crate::synthetic::DynRel;
use object::elf;

const AX: u64 = (elf::SHF_ALLOC | elf::SHF_EXECINSTR) as u64;

/// `.plt`: in dynamic outputs a header (`push GOT[1]; jmp *GOT[2]`) and lazy stubs
/// (`jmp *slot; push index; jmp header`); in static ones only `jmp *slot` stubs for IFUNCs. With an
/// IBT PLT the lazy stubs are `endbr64; push index; jmp header` (the entries are in `.plt.sec`),
/// and a static output's stubs are `ibt_entry`s.
pub struct Plt;

impl Chunk for Plt {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".plt", sh_type: elf::SHT_PROGBITS, flags: AX, align: 16, entsize: PLT_ENTRY_SIZE }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let nplt = s.plans.got.plt.len() as u64;
        (nplt > 0).then(|| s.plans.got.plt_header + PLT_ENTRY_SIZE * nplt)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let ctx = w.linked;
        let plt_addr = w.place.addr;
        let gotplt = ctx.gotplt_addr();
        let header = ctx.plans.got.plt_header as usize;
        if header > 0 {
            buf[0..2].copy_from_slice(&[0xff, 0x35]);
            buf[2..6].copy_from_slice(&rel32(gotplt + 8, plt_addr + 6));
            buf[6..8].copy_from_slice(&[0xff, 0x25]);
            buf[8..12].copy_from_slice(&rel32(gotplt + 16, plt_addr + 12));
            buf[12..16].copy_from_slice(&[0x0f, 0x1f, 0x40, 0x00]);
        }
        for i in 0..ctx.plans.got.plt.len() {
            let stub = plt_addr + (header + 16 * i) as u64;
            let slot = ctx.gotplt_slot_addr(i as u32);
            let e = &mut buf[header + 16 * i..header + 16 * i + 16];
            if ctx.plans.got.ibt {
                if header > 0 {
                    e.copy_from_slice(&[0xf3, 0x0f, 0x1e, 0xfa, 0x68, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0, 0x66, 0x90]);
                    e[5..9].copy_from_slice(&(i as u32).to_le_bytes());
                    e[10..14].copy_from_slice(&rel32(plt_addr, stub + 14));
                } else {
                    ibt_entry(e, stub, slot);
                }
                continue;
            }
            e[0..2].copy_from_slice(&[0xff, 0x25]);
            e[2..6].copy_from_slice(&rel32(slot, stub + 6));
            if header > 0 {
                e[6] = 0x68;
                e[7..11].copy_from_slice(&(i as u32).to_le_bytes());
                e[11] = 0xe9;
                e[12..16].copy_from_slice(&rel32(plt_addr, stub + 16));
            } else {
                e[6..16].copy_from_slice(&[0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0]);
            }
        }
        Ok(Vec::new())
    }
}

/// `.plt.sec` (IBT PLT of a dynamic output, laid out as lld does): one `ibt_entry` per PLT entry,
/// the addresses symbols and calls use; `.plt` keeps the header and the lazy stubs.
pub struct PltSec;

impl Chunk for PltSec {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".plt.sec", sh_type: elf::SHT_PROGBITS, flags: AX, align: 16, entsize: PLT_ENTRY_SIZE }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let nplt = s.plans.got.plt.len() as u64;
        (nplt > 0 && s.plans.got.ibt && s.plans.got.plt_header > 0).then(|| PLT_ENTRY_SIZE * nplt)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let ctx = w.linked;
        for i in 0..ctx.plans.got.plt.len() {
            let entry = ctx.plt_entry_addr(i as u32);
            let slot = ctx.gotplt_slot_addr(i as u32);
            ibt_entry(&mut buf[16 * i..16 * i + 16], entry, slot);
        }
        Ok(Vec::new())
    }
}

/// An IBT PLT entry (`endbr64; jmp *slot; nop`), as lld writes it: the target of calls through the
/// PLT and of canonical function addresses.
fn ibt_entry(e: &mut [u8], entry: u64, slot: u64) {
    e.copy_from_slice(&[0xf3, 0x0f, 0x1e, 0xfa, 0xff, 0x25, 0, 0, 0, 0, 0x66, 0x0f, 0x1f, 0x44, 0, 0]);
    e[6..10].copy_from_slice(&rel32(slot, entry + 10));
}

/// The 32-bit displacement from the end of an instruction (`next_insn`) to `target`.
fn rel32(target: u64, next_insn: u64) -> [u8; 4] {
    ((target as i64 - next_insn as i64) as i32).to_le_bytes()
}
