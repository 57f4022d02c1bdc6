//! AArch64's `.plt` bytes, as GNU ld and lld write them.
use crate::diag::Result;
use crate::linked::Linked;

/// `stp x16, x30, [sp, #-16]!`
const STP_X16_X30: u32 = 0xa9bf_7bf0;
/// `adrp x16, 0`
const ADRP_X16: u32 = 0x9000_0010;
/// `ldr x17, [x16, #0]`
const LDR_X17_X16: u32 = 0xf940_0211;
/// `add x16, x16, #0`
const ADD_X16_X16: u32 = 0x9100_0210;
/// `br x17`
const BR_X17: u32 = 0xd61f_0220;
/// `nop`
const NOP: u32 = 0xd503_201f;

/// `.plt`: in dynamic outputs a header that saves `x16` (the slot's address) and the return
/// address and jumps to the resolver in `.got.plt[2]`; then one entry per import (or IFUNC in a
/// static output) that loads its `.got.plt` slot into `x17`, its address into `x16`, and jumps.
pub fn write_plt(ctx: &Linked, plt_addr: u64, buf: &mut [u8]) -> Result<()> {
    let header = ctx.plans.got.plt_header;
    if header > 0 {
        let resolver = ctx.gotplt_addr() + 16;
        let words = [STP_X16_X30, ADRP_X16, LDR_X17_X16, ADD_X16_X16, BR_X17, NOP, NOP, NOP];
        put(buf, 0, &words);
        slot_reference(buf, 4, plt_addr + 4, resolver)?;
    }
    for i in 0..ctx.plans.got.plt.len() {
        let at = (header + 16 * i as u64) as usize;
        let entry = plt_addr + at as u64;
        put(buf, at, &[ADRP_X16, LDR_X17_X16, ADD_X16_X16, BR_X17]);
        slot_reference(buf, at, entry, ctx.gotplt_slot_addr(i as u32))?;
    }
    Ok(())
}

fn put(buf: &mut [u8], at: usize, words: &[u32]) {
    for (i, w) in words.iter().enumerate() {
        buf[at + 4 * i..at + 4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
}

fn word(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

/// Completes the `adrp x16` at `at` (address `addr`) and the `ldr` and `add` after it to reach
/// `slot`.
fn slot_reference(buf: &mut [u8], at: usize, addr: u64, slot: u64) -> Result<()> {
    let pages = ((slot & !0xfff) as i64).wrapping_sub((addr & !0xfff) as i64) >> 12;
    if !(-(1 << 20)..1 << 20).contains(&pages) {
        return Err(
            format!("PLT entry at {addr:#x} cannot reach its .got.plt slot at {slot:#x} (more than 4 GiB)").into()
        );
    }
    let lo = (slot & 0xfff) as u32;
    let adrp = super::set_adr_imm(word(buf, at), pages);
    let ldr = word(buf, at + 4) | ((lo >> 3) << 10);
    let add = word(buf, at + 8) | (lo << 10);
    put(buf, at, &[adrp, ldr, add]);
    Ok(())
}
