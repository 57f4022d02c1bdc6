//! AArch64's `.plt` bytes, as lld writes them (GNU ld's unguarded PLT is the same).
use crate::ctx::Target;
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

/// `bti c`: a landing pad for calls (`blr`) and for `br x16`/`br x17`.
const BTI_C: u32 = 0xd503_245f;
/// `autia1716`: authenticates `x17` with the modifier `x16`.
const AUTIA1716: u32 = 0xd503_219f;

/// `.plt`: in dynamic outputs a header that saves `x16` (the slot's address) and the return
/// address and jumps to the resolver in `.got.plt[2]`; then one entry per import (or IFUNC in a
/// static output) that loads its `.got.plt` slot into `x17`, its address into `x16`, and jumps.
///
/// A guarded PLT (`PltGuard`) is laid out as lld lays it out: the header starts with `bti c` (the
/// entries reach it by `br x17`; one nop fewer at its end) when the output is marked BTI; each
/// entry is 24 bytes, `bti c` first in those an indirect branch may reach (`landing_pad`),
/// `autia1716` before the `br` under `-z pac-plt`, nops after.
pub fn write_plt(ctx: &Linked, plt_addr: u64, buf: &mut [u8]) -> Result<()> {
    let got = &ctx.plans.got;
    let header = got.plt_header;
    if header > 0 {
        let resolver = ctx.gotplt_addr() + 16;
        let body = [STP_X16_X30, ADRP_X16, LDR_X17_X16, ADD_X16_X16, BR_X17, NOP, NOP];
        let at = match got.guard.bti {
            true => {
                put(buf, 0, &[BTI_C]);
                4
            }
            false => {
                put(buf, 28, &[NOP]);
                0
            }
        };
        put(buf, at, &body);
        slot_reference(buf, at + 4, plt_addr + at as u64 + 4, resolver)?;
    }
    for (i, &t) in got.plt.iter().enumerate() {
        let start = (header + got.plt_entry * i as u64) as usize;
        let entry = &mut buf[start..start + got.plt_entry as usize];
        entry.chunks_exact_mut(4).for_each(|w| w.copy_from_slice(&NOP.to_le_bytes()));
        let at = match got.guard.bti && landing_pad(ctx, t) {
            true => {
                put(entry, 0, &[BTI_C]);
                4
            }
            false => 0,
        };
        put(entry, at, &[ADRP_X16, LDR_X17_X16, ADD_X16_X16]);
        put(entry, at + 12, if got.guard.pac { &[AUTIA1716, BR_X17][..] } else { &[BR_X17] });
        slot_reference(entry, at, plt_addr + (start + at) as u64, ctx.gotplt_slot_addr(i as u32))?;
    }
    Ok(())
}

/// Whether an indirect branch may land on `t`'s PLT entry, which then needs `bti c` in a BTI
/// output (lld's rule): a canonical entry (an executable's address of an imported function, which
/// every module uses) or a non-preemptible IFUNC's (the entry is its address). Calls reach the
/// others by `bl`.
fn landing_pad(ctx: &Linked, t: Target) -> bool {
    !ctx.is_preemptible(t) || matches!(t, Target::Global(id) if ctx.plans.got.canonical.contains(&id))
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
