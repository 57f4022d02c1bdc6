//! x86-64's `.plt` and `.plt.sec` bytes.
use crate::diag::Result;
use crate::linked::Linked;

/// `.plt`: in dynamic outputs a header (`push GOT[1]; jmp *GOT[2]`) and lazy stubs
/// (`jmp *slot; push index; jmp header`); in static ones only `jmp *slot` stubs for IFUNCs. With an
/// IBT PLT the lazy stubs are `endbr64; push index; jmp header` (the entries are in `.plt.sec`),
/// and a static output's stubs are `ibt_entry`s.
pub fn write_plt(ctx: &Linked, plt_addr: u64, buf: &mut [u8]) -> Result<()> {
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
    Ok(())
}

/// `.plt.sec` (IBT PLT of a dynamic output, laid out as lld does): one `ibt_entry` per PLT entry,
/// the addresses symbols and calls use; `.plt` keeps the header and the lazy stubs.
pub fn write_plt_sec(ctx: &Linked, buf: &mut [u8]) -> Result<()> {
    for i in 0..ctx.plans.got.plt.len() {
        let entry = ctx.plt_entry_addr(i as u32);
        let slot = ctx.gotplt_slot_addr(i as u32);
        ibt_entry(&mut buf[16 * i..16 * i + 16], entry, slot);
    }
    Ok(())
}

/// Where an import's `.got.plt` slot points before it is bound: its lazy stub's `push` (the
/// `endbr64` before it in an IBT PLT, which the indirect jump must land on).
pub fn lazy_addr(stub: u64, plt_sec: bool) -> u64 {
    if plt_sec {
        stub
    } else {
        stub + 6
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
