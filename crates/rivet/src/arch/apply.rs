//! Applying relocations, the target-independent part: which relocations of an input section are
//! applied (a whole section, a split `.eh_frame`'s surviving pieces, write-behind's windows),
//! the symbol values they use (merged sections, dropped sections' tombstones), fields written
//! with range checks, errors named by place. Each relocation's own computation is its target's
//! (`Arch::apply_one`, `Arch::write_nonalloc`).
use crate::arch::Arch;
use crate::ctx::Target;
use crate::diag::{Error, Result};
use crate::ids::FileId;
use crate::input::object::{ObjSection, Rela};
use crate::linked::{Linked, MergeTarget};
use crate::synthetic::DynRel;
use object::elf::*;
use object::LittleEndian as LE;
use std::cell::RefCell;
use std::marker::PhantomData;

pub fn is_alloc(sec: &ObjSection) -> bool {
    sec.flags & SHF_ALLOC as u64 != 0
}

/// The range a `width`-byte field holds, signed or not.
pub fn field_range(width: usize, signed: bool) -> (i128, i128) {
    let bits = width as u32 * 8;
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// Whether a field of `width` bytes holds `value` taken as a 64-bit two's-complement number,
/// signed or not: `field_range`'s test, in 64-bit arithmetic.
#[inline(always)]
pub fn fits(value: i128, width: usize, signed: bool) -> bool {
    let bits = width as u32 * 8;
    if signed {
        let high = (value as i64).checked_shr(bits - 1).unwrap_or(0);
        high == 0 || high == -1
    } else {
        (value as u64).checked_shr(bits).unwrap_or(0) == 0
    }
}

/// Patches the relocations of input section `si` of file `f`, whose bytes are already in `buf`
/// (for `.eh_frame`, the surviving pieces, rearranged). Returns the RELATIVE relocations a
/// static-PIE needs for this section.
pub fn apply<A: Arch>(ctx: &Linked, f: FileId, si: u32, buf: &mut [u8]) -> Vec<DynRel> {
    let obj = &ctx.objects[f];
    let sec = &obj.sections[si as usize];
    let base = ctx.section_addr(f, si).unwrap_or(0);
    let eh = ctx.split_eh_frame(f, si);
    let alloc = is_alloc(sec);
    let mut dynrels = Vec::new();
    let mut skip_next = false;
    let errors = RefCell::new(Vec::new());
    if !alloc && eh.is_none() {
        apply_nonalloc_section::<A, false>(ctx, f, si, buf, base, &errors, None);
        ctx.diag.report(errors.into_inner());
        return dynrels;
    }
    for rel in sec.relas {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        let in_off = rel.r_offset.get(LE);
        let off = match eh {
            Some(eh) => match crate::sections::eh_frame::map_offset(eh, in_off) {
                Some(o) => o,
                None => continue, // The FDE this relocation belongs to was dropped.
            },
            None => in_off,
        };
        let mut r = Reloc::<A>::new(ctx, f, si, rel, &mut *buf, off, 0, base.wrapping_add(off), &errors);
        skip_next = A::apply_one(&mut r, alloc, &mut dynrels);
    }
    if eh.is_none() {
        A::finish_section(ctx, f, si, buf, 0, 0..buf.len() as u64);
    }
    ctx.diag.report(errors.into_inner());
    dynrels
}

/// `apply` for bytes `owned` of an input section copied as it is (not a split `.eh_frame`), when
/// `buf` holds the section's bytes from offset `lo` on, and reaches `Arch::RELOC_REACH` beyond `owned`
/// on both sides (less at the section's ends). Every relocation that can change an owned byte is
/// applied; only those at an owned offset report their errors and dynamic relocations (the
/// neighbouring range reports the others). Write-behind relocates a large section window by
/// window through this, never holding the whole section.
pub fn apply_range<A: Arch>(
    ctx: &Linked,
    f: FileId,
    si: u32,
    buf: &mut [u8],
    lo: u64,
    owned: std::ops::Range<u64>,
) -> Vec<DynRel> {
    let sec = &ctx.objects[f].sections[si as usize];
    let base = ctx.section_addr(f, si).unwrap_or(0);
    let mut dynrels = Vec::new();
    let errors = RefCell::new(Vec::new());
    let ignored = RefCell::new(Vec::new());
    if !is_alloc(sec) {
        // Debug sections, through the per-symbol cache (no relaxation reaches past a field).
        apply_nonalloc_section::<A, true>(ctx, f, si, buf, base, &errors, Some((lo, owned, &ignored)));
        ctx.diag.report(errors.into_inner());
        return dynrels;
    }
    apply_alloc_range::<A>(ctx, f, si, buf, lo, &owned, (&errors, &mut dynrels), &ignored);
    A::finish_section(ctx, f, si, buf, lo, owned);
    ctx.diag.report(errors.into_inner());
    dynrels
}

/// Applies the relocations of allocated input section `si` of `f` that can change bytes `owned`
/// (those within `Arch::RELOC_REACH` of them) to `buf`, the section's bytes from offset `lo` on.
/// The relocations at owned offsets report to `mine` (errors, dynamic relocations); the others'
/// errors go to `ignored` and their dynamic relocations nowhere (a neighbouring range reports
/// them).
#[allow(clippy::too_many_arguments)]
fn apply_alloc_range<A: Arch>(
    ctx: &Linked,
    f: FileId,
    si: u32,
    buf: &mut [u8],
    lo: u64,
    owned: &std::ops::Range<u64>,
    mine: (&RefCell<Vec<Error>>, &mut Vec<DynRel>),
    ignored: &RefCell<Vec<Error>>,
) {
    let sec = &ctx.objects[f].sections[si as usize];
    let base = ctx.section_addr(f, si).unwrap_or(0);
    let (errors, dynrels) = mine;
    let mut skip_next = false;
    let reach = owned.start.saturating_sub(A::RELOC_REACH)..owned.end + A::RELOC_REACH;
    for rel in sec.relas {
        let in_off = rel.r_offset.get(LE);
        if !reach.contains(&in_off) {
            skip_next = false;
            continue;
        }
        if std::mem::take(&mut skip_next) {
            continue;
        }
        let owns = owned.contains(&in_off);
        let errors = if owns { errors } else { ignored };
        let mut theirs = Vec::new();
        let out = if owns { &mut *dynrels } else { &mut theirs };
        let mut r = Reloc::<A>::new(ctx, f, si, rel, &mut *buf, in_off - lo, lo, base.wrapping_add(in_off), errors);
        skip_next = A::apply_one(&mut r, true, out);
    }
}

/// The bytes of allocated input section `si` of `f` from `from` to `to` as its relocations make
/// them, before the target's `finish_section` rewrites: (the offset they start at, the bytes), with
/// up to `Arch::RELOC_REACH` more on both sides. Errors and dynamic relocations are left to the
/// section's own write; this only looks (the erratum 843419 scan, which must know the code before
/// layout is final).
pub fn relocated_window<A: Arch>(ctx: &Linked, f: FileId, si: u32, from: u64, to: u64) -> (u64, Vec<u8>) {
    let data = ctx.objects[f].sections[si as usize].data;
    let len = data.len() as u64;
    let lo = from.saturating_sub(A::RELOC_REACH).min(len);
    let hi = to.saturating_add(A::RELOC_REACH).min(len);
    let mut buf = data[lo as usize..hi as usize].to_vec();
    let ignored = RefCell::new(Vec::new());
    apply_alloc_range::<A>(ctx, f, si, &mut buf, lo, &(from..to), (&ignored, &mut Vec::new()), &ignored);
    (lo, buf)
}

/// What a relocation in a non-allocated section needs of a local symbol, the same for every
/// relocation against it.
#[derive(Clone, Copy)]
enum LocalTarget<'m> {
    /// In a section that is not in the output: gets the tombstone.
    Dropped,
    /// The section symbol of a merged section (`Ctx::merged_target`).
    Merged(MergeTarget<'m>, u64),
    /// Anything else: its value.
    Value(u64),
}

/// Write-behind's share of a section: where `buf` starts in it, the offsets this part owns, and
/// where the neighbours' relocations put their errors.
type Part<'e> = (u64, std::ops::Range<u64>, &'e RefCell<Vec<Error>>);

/// The relocations of a non-allocated section (debug info, mostly). Nearly all refer to a few
/// local symbols (the section symbols of `.debug_str`, `.debug_abbrev`, `.debug_line`, the code):
/// what each needs is looked up once per symbol, in a small cache, instead of through the symbol,
/// its section and its merged section on every relocation; only the piece of a merged section
/// is still found per relocation (synth-1's write phase went from 91 to 73 ms: medians of 11
/// alternated runs, a5484c2).
///
/// `PART` says whether `part` is given. With a `Part`, only the section's bytes from `lo` on are
/// in `buf` (write-behind's windows), and of the relocations that touch them, only those at
/// offsets the part owns report their errors (the neighbouring part reports the others).
fn apply_nonalloc_section<A: Arch, const PART: bool>(
    ctx: &Linked,
    f: FileId,
    si: u32,
    buf: &mut [u8],
    base: u64,
    errors: &RefCell<Vec<Error>>,
    part: Option<Part>,
) {
    let obj = &ctx.objects[f];
    const WAYS: usize = 16;
    let mut cache: [Option<(u32, LocalTarget)>; WAYS] = [None; WAYS];
    // A field is at most 8 bytes: those starting up to 7 bytes before the part reach into it.
    let (lo, reach) = match &part {
        Some((lo, owned, _)) => (*lo, owned.start.saturating_sub(7)..owned.end),
        None => (0, 0..u64::MAX),
    };
    for rel in obj.sections[si as usize].relas {
        let in_off = rel.r_offset.get(LE);
        // (PART: the checks compiled only into the copy for write-behind's parts, which a whole
        // section's millions of debug relocations do not pay for.)
        if PART && !reach.contains(&in_off) {
            continue;
        }
        let errors = match &part {
            Some((_, owned, ignored)) if PART && !owned.contains(&in_off) => *ignored,
            _ => errors,
        };
        let (off, place) = (in_off - lo, base.wrapping_add(in_off));
        let mut r = Reloc::<A>::new(ctx, f, si, rel, &mut *buf, off, lo, place, errors);
        let sym = rel.r_sym(LE, false);
        if sym as usize >= obj.first_global {
            A::apply_one(&mut r, false, &mut Vec::new());
            continue;
        }
        let slot = &mut cache[sym as usize % WAYS];
        let what = match *slot {
            Some((cached, what)) if cached == sym => what,
            _ => {
                let t = Target::Local(f, sym);
                let what = if r.target_dropped(t) {
                    LocalTarget::Dropped
                } else {
                    match ctx.merged_target(f, sym) {
                        Some((m, value)) => LocalTarget::Merged(m, value),
                        None => LocalTarget::Value(ctx.raw_value(t)),
                    }
                };
                *slot = Some((sym, what));
                what
            }
        };
        let ty = rel.r_type(LE, false);
        let t = Target::Local(f, sym);
        let a = rel.r_addend.get(LE) as i128;
        match what {
            LocalTarget::Dropped => r.write_tombstone(ty),
            LocalTarget::Merged(m, value) => match m.value(value, a as i64) {
                Ok(s) => A::write_nonalloc(&mut r, ty, t, a, s),
                Err(outside) => r.error(outside.error(ctx, &A::reloc_name(ty), f, sym)),
            },
            LocalTarget::Value(v) => A::write_nonalloc(&mut r, ty, t, a, v as i128),
        }
    }
}

/// One relocation being applied: the field it writes and where its errors go.
pub struct Reloc<'r, 'a, A> {
    pub ctx: &'r Linked<'r, 'a>,
    pub f: FileId,
    pub si: u32,
    pub rel: &'r Rela,
    pub buf: &'r mut [u8],
    /// Where the relocated field is in `buf`.
    pub off: u64,
    /// The section offset `buf` starts at (`apply_range`; else 0): `off + lo` is the field's
    /// offset in the section.
    pub lo: u64,
    /// The field's address.
    pub place: u64,
    errors: &'r RefCell<Vec<Error>>,
    arch: PhantomData<A>,
}

impl<'r, 'a, A: Arch> Reloc<'r, 'a, A> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        ctx: &'r Linked<'r, 'a>,
        f: FileId,
        si: u32,
        rel: &'r Rela,
        buf: &'r mut [u8],
        off: u64,
        lo: u64,
        place: u64,
        errors: &'r RefCell<Vec<Error>>,
    ) -> Self {
        Reloc { ctx, f, si, rel, buf, off, lo, place, errors, arch: PhantomData }
    }

    pub fn error(&self, e: impl Into<Error>) {
        let place = crate::arch::scan::place_name(self.ctx, self.f, self.si, self.rel.r_offset.get(LE));
        self.errors.borrow_mut().push(e.into().context(place));
    }

    pub fn target(&self) -> Target {
        self.ctx.target(self.f, self.rel.r_sym(LE, false))
    }

    /// Symbols in sections that are not in the output (a dropped COMDAT copy): references from
    /// debug info get a tombstone instead of a bogus address.
    #[inline]
    pub fn target_dropped(&self, t: Target) -> bool {
        match t {
            Target::Local(f, s) => {
                let obj = &self.ctx.objects[f];
                match obj.sym_shndx(s as usize) {
                    Some(sec) => !obj.sections[sec as usize].live && !obj.sections[sec as usize].folded(),
                    None => false,
                }
            }
            Target::Global(_) => false,
        }
    }

    #[inline(always)]
    pub fn write(&mut self, width: usize, value: u64) {
        let off = self.off as usize;
        match off.checked_add(width).and_then(|end| self.buf.get_mut(off..end)) {
            // A fixed-size copy per width, whatever is inlined where: a copy of a variable
            // length is a call to memcpy per relocation (it took 8% more instructions on synth-1
            // when an unrelated change left this function outside the relocation loops).
            Some(dst) => {
                let bytes = value.to_le_bytes();
                match width {
                    8 => dst.copy_from_slice(&bytes),
                    4 => dst.copy_from_slice(&bytes[..4]),
                    2 => dst.copy_from_slice(&bytes[..2]),
                    1 => dst.copy_from_slice(&bytes[..1]),
                    _ => dst.copy_from_slice(&bytes[..width]),
                }
            }
            None => self.error(format!(
                "relocation at offset {:#x} is past the end of the section",
                self.off.wrapping_add(self.lo)
            )),
        }
    }

    #[inline(always)]
    pub fn write_checked(&mut self, ty: u32, width: usize, value: i128, signed: bool) {
        // The psABI computes in 64-bit two's complement: an address below the image (a script's
        // `vvar_page = . - 4 * 4096`) is a negative number, not a huge unsigned one. The field
        // then holds it if it fits as the field's kind of number.
        // (In 64-bit arithmetic: every relocation applied takes this test, and i128's was 4% of a
        // debug link's instructions.)
        if !fits(value, width, signed) {
            let value = if signed { value as i64 as i128 } else { value as u64 as i128 };
            let (lo, hi) = field_range(width, signed);
            self.out_of_range(ty, value, lo, hi);
            return;
        }
        self.write(width, value as u64);
    }

    /// Reports relocation type `ty` out of range: `value` is not in `[lo, hi]`.
    pub fn out_of_range(&self, ty: u32, value: i128, lo: i128, hi: i128) {
        let t = self.target();
        self.error(format!(
            "relocation {} against {} out of range: {value} is not in [{lo}, {hi}]",
            A::reloc_name(ty),
            self.ctx.name_of(t)
        ));
    }

    pub fn sym_size(&self, t: Target) -> i128 {
        self.ctx.definition(t).map_or(0, |(_, s)| s.st_size.get(LE) as i128)
    }

    /// Debug and other non-allocated sections: absolute values, no dynamic relocations.
    pub fn apply_nonalloc(&mut self, ty: u32, t: Target, a: i128) -> bool {
        let ctx = self.ctx;
        if self.target_dropped(t) {
            self.write_tombstone(ty);
            return false;
        }
        let Some(s) = self.merged_or(t, ty, a, |t| ctx.raw_value(t)) else { return false };
        A::write_nonalloc(self, ty, t, a, s);
        false
    }

    /// The value to add `a` to: through the merged section when `t` is a merged section's symbol,
    /// else `value(t)`. None (the error reported) when the addend points outside that section.
    #[inline]
    pub fn merged_or(&self, t: Target, ty: u32, a: i128, value: impl Fn(Target) -> u64) -> Option<i128> {
        match self.ctx.merged_section_value(t, a as i64) {
            None => Some(value(t) as i128),
            Some(Ok(s)) => Some(s),
            Some(Err(outside)) => {
                let Target::Local(f, sym) = t else { unreachable!("merged targets are section symbols") };
                self.error(outside.error(self.ctx, &A::reloc_name(ty), f, sym));
                None
            }
        }
    }

    /// A relocation in a non-allocated section against a symbol in a dropped section.
    pub fn write_tombstone(&mut self, ty: u32) {
        // lld's convention: .debug_loc/.debug_ranges use 1 (0 would end the list), others 0.
        let tomb = u64::from(self.ctx.objects[self.f].sections[self.si as usize].has(ObjSection::TOMBSTONE_ONE));
        match A::tombstone_width(ty) {
            0 => {}
            width => self.write(width, tomb),
        }
    }

    /// Reports a failed rewrite; true (skip the `__tls_get_addr` call's relocation) on success.
    pub fn relaxed(&self, r: Result<()>) -> bool {
        match r {
            Ok(()) => true,
            Err(e) => {
                self.error(e);
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_agrees_with_the_field_range() {
        let edges = [0i128, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32769, 65535, 65536];
        let wide = [
            i32::MAX as i128,
            i32::MAX as i128 + 1,
            i32::MIN as i128,
            i32::MIN as i128 - 1,
            u32::MAX as i128,
            u32::MAX as i128 + 1,
            i64::MAX as i128,
            i64::MIN as i128,
            u64::MAX as i128,
            u64::MAX as i128 + 1,
            -(u64::MAX as i128),
        ];
        for value in edges.into_iter().chain(wide) {
            for width in [1, 2, 4, 8] {
                for signed in [false, true] {
                    let (lo, hi) = field_range(width, signed);
                    let v = if signed { value as i64 as i128 } else { value as u64 as i128 };
                    assert_eq!(
                        fits(value, width, signed),
                        lo <= v && v <= hi,
                        "{value} in {width} bytes, signed {signed}"
                    );
                }
            }
        }
    }

    #[test]
    fn ranges() {
        assert_eq!(field_range(4, true), (i32::MIN as i128, i32::MAX as i128));
        assert_eq!(field_range(4, false), (0, u32::MAX as i128));
        assert_eq!(field_range(1, true), (-128, 127));
        assert_eq!(field_range(2, false), (0, 65535));
    }
}
