//! AArch64 linker relaxation, as lld does it (`--relax`, the default): an `adrp` and the
//! instruction after it that complete one address are rewritten when the address is known at
//! link time and near.
//! - `adrp xN, :got:sym; ldr xN, [xN, :got_lo12:sym]` (a GOT load of a symbol that binds here,
//!   defined in an object, not an IFUNC, and not absolute in a position-independent output)
//!   becomes `adrp xN, sym; add xN, xN, :lo12:sym` (the GOT entry stays, unused, as in lld);
//! - `adrp xN, sym; add xN, xN, :lo12:sym` (and the pair a GOT load became) becomes
//!   `nop; adr xN, sym` when `sym` is within 1 MiB of the `adr`.
//!
//! Both relocations must be adjacent (the second 4 bytes after the first), against the same
//! symbol with addend 0, and the instructions must use one register throughout, so that no
//! other instruction can read what the first computed. The decision is a function of the input
//! and the layout, made alike for both relocations of a pair and for `--emit-relocs`.
use crate::ctx::Target;
use crate::ids::FileId;
use crate::input::object::Rela;
use crate::linked::Linked;
use object::elf::*;
use object::LittleEndian as LE;

/// What a relaxed pair becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `nop; adr xN, sym`.
    NopAdr,
    /// `adrp xN, sym; add xN, xN, :lo12:sym` (from a GOT load).
    AdrpAdd,
}

/// A relaxed pair, seen from one of its relocations.
#[derive(Clone, Copy, Debug)]
pub struct Relaxed {
    pub form: Form,
    /// This relocation is the pair's second (the `add` or `ldr`).
    pub second: bool,
    /// The register the pair computes into.
    pub reg: u32,
    /// The symbol's address.
    pub value: i128,
}

fn word(data: &[u8], off: u64) -> Option<u32> {
    let at = usize::try_from(off).ok()?;
    let b = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The index of `rel` among the relocations of section `si` of `f`.
pub fn index_of(ctx: &Linked, f: FileId, si: u32, rel: &Rela) -> Option<usize> {
    let relas = ctx.objects[f].sections[si as usize].relas;
    let size = std::mem::size_of::<Rela>();
    let at = (rel as *const Rela as usize).checked_sub(relas.as_ptr() as usize)?;
    (at % size == 0 && at / size < relas.len()).then_some(at / size)
}

/// The relaxation of the pair whose first relocation is number `j` of section `si` of `f`, at
/// address `base` in the output.
fn pair(ctx: &Linked, f: FileId, si: u32, j: usize, base: u64) -> Option<(Form, u32, i128)> {
    if !ctx.config.relax {
        return None;
    }
    let sec = &ctx.objects[f].sections[si as usize];
    let (a, b) = (sec.relas.get(j)?, sec.relas.get(j + 1)?);
    let got = match (a.r_type(LE, false), b.r_type(LE, false)) {
        (R_AARCH64_ADR_PREL_PG_HI21, R_AARCH64_ADD_ABS_LO12_NC) => false,
        (R_AARCH64_ADR_GOT_PAGE, R_AARCH64_LD64_GOT_LO12_NC) => true,
        _ => return None,
    };
    let off = a.r_offset.get(LE);
    if b.r_offset.get(LE) != off + 4
        || a.r_sym(LE, false) != b.r_sym(LE, false)
        || a.r_addend.get(LE) != 0
        || b.r_addend.get(LE) != 0
    {
        return None;
    }
    let (adrp, second) = (word(sec.data, off)?, word(sec.data, off + 4)?);
    let reg = adrp & 0x1f;
    if adrp & 0x9f00_0000 != 0x9000_0000 || second & 0x1f != reg || (second >> 5) & 0x1f != reg {
        return None;
    }
    let t = ctx.target(f, a.r_sym(LE, false));
    if got {
        // A 64-bit `ldr xN, [xN, #imm]` of a symbol defined here.
        let defined = matches!(t, Target::Local(..)) || ctx.definition(t).is_some();
        if second & 0x3b00_0000 != 0x3900_0000
            || second >> 31 == 0
            || !defined
            || ctx.is_undefined(t)
            || ctx.is_preemptible(t)
            || ctx.is_ifunc(t)
            || (ctx.is_pic() && ctx.is_absolute(t))
        {
            return None;
        }
    } else if second & 0xffc0_0000 != 0x9100_0000 {
        return None;
    }
    let value = match ctx.merged_section_value(t, 0) {
        None => ctx.value(t) as i128,
        Some(Ok(v)) => v,
        Some(Err(_)) => return None,
    };
    let adr_place = (base + off + 4) as i128;
    if (-(1 << 20)..1 << 20).contains(&(value - adr_place)) {
        return Some((Form::NopAdr, reg, value));
    }
    let pages = (value & !0xfff) - ((base + off) as i128 & !0xfff);
    (got && (-(1i128 << 32)..1i128 << 32).contains(&pages)).then_some((Form::AdrpAdd, reg, value))
}

/// The relaxation relocation `rel` (of section `si` of `f`, at address `base`) takes part in.
pub fn relaxed(ctx: &Linked, f: FileId, si: u32, rel: &Rela, base: u64) -> Option<Relaxed> {
    if !matches!(
        rel.r_type(LE, false),
        R_AARCH64_ADR_PREL_PG_HI21 | R_AARCH64_ADD_ABS_LO12_NC | R_AARCH64_ADR_GOT_PAGE | R_AARCH64_LD64_GOT_LO12_NC
    ) {
        return None;
    }
    let i = index_of(ctx, f, si, rel)?;
    let as_first = pair(ctx, f, si, i, base).map(|p| (p, false));
    let as_second = || i.checked_sub(1).and_then(|j| pair(ctx, f, si, j, base)).map(|p| (p, true));
    let ((form, reg, value), second) = as_first.or_else(as_second)?;
    Some(Relaxed { form, second, reg, value })
}

/// The type `--emit-relocs` reports for a relocation of a relaxed pair: what its instruction
/// became.
pub fn emitted_type(r: Relaxed) -> u32 {
    match (r.form, r.second) {
        (Form::NopAdr, false) => R_AARCH64_NONE,
        (Form::NopAdr, true) => R_AARCH64_ADR_PREL_LO21,
        (Form::AdrpAdd, false) => R_AARCH64_ADR_PREL_PG_HI21,
        (Form::AdrpAdd, true) => R_AARCH64_ADD_ABS_LO12_NC,
    }
}

/// The instruction that replaces the one at `place` in the relaxed pair.
pub fn instruction(r: Relaxed, place: u64) -> u32 {
    let place = place as i128;
    match (r.form, r.second) {
        (Form::NopAdr, false) => super::NOP,
        (Form::NopAdr, true) => super::set_adr_imm(0x1000_0000 | r.reg, (r.value - place) as i64),
        (Form::AdrpAdd, false) => {
            super::set_adr_imm(0x9000_0000 | r.reg, (((r.value & !0xfff) - (place & !0xfff)) >> 12) as i64)
        }
        (Form::AdrpAdd, true) => super::set_imm12(0x9100_0000 | r.reg | (r.reg << 5), (r.value & 0xfff) as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions() {
        let r = Relaxed { form: Form::NopAdr, second: true, reg: 1, value: 0x2_0008 };
        // adr x1, #8 from 0x20000.
        assert_eq!(instruction(r, 0x2_0000), 0x1000_0041);
        assert_eq!(instruction(Relaxed { second: false, ..r }, 0x1_fffc), super::super::NOP);
        let g = Relaxed { form: Form::AdrpAdd, second: false, reg: 0, value: 0x40_1234 };
        // adrp x0 of the page 0x400 pages on; add x0, x0, #0x234.
        assert_eq!(instruction(g, 0x1000), super::super::set_adr_imm(0x9000_0000, 0x400));
        assert_eq!(instruction(Relaxed { second: true, ..g }, 0x1004), 0x9108_d000);
        assert_eq!(emitted_type(g), R_AARCH64_ADR_PREL_PG_HI21);
        assert_eq!(emitted_type(Relaxed { second: true, ..r }), R_AARCH64_ADR_PREL_LO21);
    }
}
