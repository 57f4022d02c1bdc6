//! `--fix-cortex-a53-843419`: the code sequences that trigger Cortex-A53 erratum 843419 (ARM's
//! errata notice ARM-EPM-048406) are found once addresses are final, with the conditions lld and
//! GNU ld check, and made harmless. The sequence: an `adrp` at an address whose low 12 bits are
//! 0xff8 or 0xffc; a load or store that does not write the `adrp`'s register; optionally one
//! instruction that is not a branch; a load or store (unsigned immediate offset) based on the
//! `adrp`'s register. The `adrp` is rewritten as the `adr` of the same address (GNU ld's ADR
//! workaround), which removes the first condition without moving any code. Where the page is
//! more than 1 MiB away, which an `adr` cannot reach, the sequence's last load or store moves to
//! a patch at the end of its output section, followed by a branch back, and is replaced by a
//! branch to it (lld's patches, GNU ld's veneers): `patch_sites` finds these once the output is
//! laid out, and the output is laid out again with room for them (`link.rs`).
//! Only code is scanned: data in a code section (between a `$d` and the next `$x` mapping
//! symbol) is left as it is.
use crate::ids::{FileId, SectionRef};
use crate::linked::Linked;
use crate::sections::thunks::PatchArea;
use object::LittleEndian as LE;

fn is_adrp(i: u32) -> bool {
    i & 0x9f00_0000 == 0x9000_0000
}

/// Rt, the transfer (or destination) register, bits 0-4.
fn rt(i: u32) -> u32 {
    i & 0x1f
}

/// Rn, the base register of a load or store, bits 5-9.
fn rn(i: u32) -> u32 {
    (i >> 5) & 0x1f
}

/// The "loads and stores" encoding group (op0 bit 27 set, bit 25 clear).
fn is_load_store(i: u32) -> bool {
    i & 0x0a00_0000 == 0x0800_0000
}

fn is_exclusive(i: u32) -> bool {
    i & 0x3f00_0000 == 0x0800_0000
}

fn is_load_exclusive(i: u32) -> bool {
    i & 0x3f40_0000 == 0x0840_0000
}

fn is_literal_load(i: u32) -> bool {
    i & 0x3b00_0000 == 0x1800_0000
}

/// Load/store pair: no-allocate (`stnp`/`ldnp`), post-indexed, signed offset, pre-indexed.
fn pair_kind(i: u32) -> Option<u32> {
    match i & 0x3bc0_0000 {
        k @ (0x2800_0000 | 0x2880_0000 | 0x2900_0000 | 0x2980_0000) => Some(k),
        _ => None,
    }
}

/// The single-register forms: unscaled, post-indexed, unprivileged, pre-indexed, register
/// offset, unsigned immediate offset.
fn is_single_register(i: u32) -> bool {
    matches!(i & 0x3b00_0c00, 0x3800_0000)
        || matches!(i & 0x3b20_0c00, 0x3800_0400 | 0x3800_0800 | 0x3800_0c00 | 0x3820_0800)
        || is_unsigned_offset(i)
}

fn is_unsigned_offset(i: u32) -> bool {
    i & 0x3b00_0000 == 0x3900_0000
}

/// Advanced SIMD `st1` (multiple or single structures), and whether it writes back its base.
fn st1(i: u32) -> Option<bool> {
    let multiple_op = matches!(i & 0xf000, 0x2000 | 0x6000 | 0x7000 | 0xa000);
    let single_op = matches!(i & 0x0040_e000, 0x0000 | 0x4000 | 0x8000);
    match (i & 0xbfff_0000, i & 0xbfe0_0000) {
        (0x0c00_0000, _) if multiple_op => Some(false),
        (_, 0x0c80_0000) if multiple_op => Some(true),
        (0x0d00_0000, _) if single_op => Some(false),
        (_, 0x0d80_0000) if single_op => Some(true),
        _ => None,
    }
}

/// A load that writes its Rt (v8.0 non-structure loads): exclusive, literal, and the
/// single-register forms whose opc is not a store's or a prefetch's.
fn is_load(i: u32) -> bool {
    if is_load_exclusive(i) || is_literal_load(i) {
        return true;
    }
    let (size, v, opc) = ((i >> 30) & 3, (i >> 26) & 1, (i >> 22) & 3);
    is_single_register(i) && opc != 0 && !(size == 0 && v == 1 && opc == 2) && !(size == 3 && v == 0 && opc == 2)
}

/// Whether the load or store writes its base register back.
fn writes_back(i: u32) -> bool {
    matches!(i & 0x3b20_0c00, 0x3800_0400 | 0x3800_0c00)
        || matches!(pair_kind(i), Some(0x2880_0000 | 0x2980_0000))
        || st1(i) == Some(true)
}

fn is_branch(i: u32) -> bool {
    matches!(i & 0xfe00_0000, 0xd600_0000 | 0x5400_0000) || matches!(i & 0x7c00_0000, 0x1400_0000 | 0x3400_0000)
}

/// Whether `adrp`, `second` and `last` (the instruction after `second`, or the one after that)
/// are the erratum's sequence.
fn is_sequence(adrp: u32, second: u32, last: u32) -> bool {
    if !is_adrp(adrp) {
        return false;
    }
    let reg = rt(adrp);
    let second_kind = is_exclusive(second)
        || is_literal_load(second)
        || is_single_register(second)
        || pair_kind(second).is_some()
        || st1(second).is_some();
    let writes_reg = (is_load(second) && rt(second) == reg) || (writes_back(second) && rn(second) == reg);
    is_load_store(second) && second_kind && !writes_reg && is_unsigned_offset(last) && rn(last) == reg
}

/// Whether an erratum sequence starts at `at`, where `insns` are the words from there on (three
/// or four of them, as the code goes on): the index of its last instruction (2 or 3).
fn sequence_end(insns: &[u32]) -> Option<usize> {
    match insns {
        [a, b, c, rest @ ..] if is_sequence(*a, *b, *c) => Some(2),
        [a, b, c, d, ..] if !is_branch(*c) && is_sequence(*a, *b, *d) => Some(3),
        _ => None,
    }
}

#[cfg(test)]
fn starts_sequence(insns: &[u32]) -> bool {
    sequence_end(insns).is_some()
}

/// The `adr` that computes what the `adrp` at `place` computes, or None if the page is out of
/// its ±1 MiB reach.
fn adr_for(adrp: u32, place: u64) -> Option<u32> {
    let immlo = (adrp >> 29) & 3;
    let immhi = (adrp >> 5) & 0x7ffff;
    let pages = (((immhi << 2 | immlo) << 11) as i32 >> 11) as i64;
    let target = ((place & !0xfff) as i64).wrapping_add(pages << 12);
    let delta = target.wrapping_sub(place as i64);
    (-(1 << 20)..1 << 20).contains(&delta).then(|| super::set_adr_imm(adrp & 0x1f | 0x1000_0000, delta))
}

/// The ranges of section `si` of `f` that hold data (`$d` mapping symbol to the next `$x`).
fn data_ranges(ctx: &Linked, f: FileId, si: u32, len: u64) -> Vec<(u64, u64)> {
    let obj = &ctx.objects[f];
    let mut marks: Vec<(u64, bool)> = obj.syms[..obj.first_global]
        .iter()
        .enumerate()
        .filter(|(i, _)| obj.sym_shndx(*i) == Some(si))
        .filter_map(|(_, s)| {
            let name = obj.sym_name(s).ok()?;
            let data = name == b"$d" || name.starts_with(b"$d.");
            let code = name == b"$x" || name.starts_with(b"$x.");
            (data || code).then_some((s.st_value.get(LE), data))
        })
        .collect();
    marks.sort();
    let mut ranges = Vec::new();
    for (i, &(at, data)) in marks.iter().enumerate() {
        if data {
            let end = marks[i + 1..].iter().find(|(_, d)| !d).map_or(len, |(e, _)| *e);
            ranges.push((at, end));
        }
    }
    ranges
}

/// The erratum sequences of section `si` of `f` (its bytes from `lo` on in `buf`, relocated)
/// that start at offsets in `from..to`: (the `adrp`'s offset, its last instruction's, the words).
fn sequences(ctx: &Linked, f: FileId, si: u32, buf: &[u8], lo: u64, from: u64, to: u64) -> Vec<(u64, u64, u32)> {
    let sec = &ctx.objects[f].sections[si as usize];
    let Some(base) = ctx.section_addr(f, si) else { return Vec::new() };
    let len = sec.data.len() as u64;
    // Where the data is (mapping symbols), looked up only once a sequence is found: most
    // sections have none, and an object's symbols are many.
    let data = std::cell::OnceCell::new();
    let is_code = |o: u64| !data.get_or_init(|| data_ranges(ctx, f, si, len)).iter().any(|&(s, e)| (s..e).contains(&o));
    let word = |o: u64| {
        let i = o.checked_sub(lo)? as usize;
        buf.get(i..i + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut found = Vec::new();
    for at in candidates(base, from, to.min(len.saturating_sub(8))) {
        let words: Vec<u32> = (0..4).map_while(|k| word(at + 4 * k).filter(|_| at + 4 * k + 4 <= len)).collect();
        if sequence_end(&words).is_none() {
            continue;
        }
        // The same, over code only.
        let code = words.iter().enumerate().take_while(|(k, _)| is_code(at + 4 * *k as u64)).count();
        if let Some(k) = sequence_end(&words[..code]) {
            found.push((at, at + 4 * k as u64, words[0]));
        }
    }
    found
}

/// The offsets from `from` to `to` (exclusive) of a section at `base` where a sequence can
/// start: whose address ends in 0xff8 or 0xffc, found by skipping to them.
fn candidates(base: u64, from: u64, to: u64) -> impl Iterator<Item = u64> {
    let mut o = from + ((4 - (base + from) % 4) % 4);
    std::iter::from_fn(move || {
        while o < to {
            let in_page = (base + o) & 0xfff;
            if in_page < 0xff8 {
                o += 0xff8 - in_page;
                continue;
            }
            o += 4;
            return Some(o - 4);
        }
        None
    })
}

/// A `b` at `from` to `to`, if it reaches.
fn branch(from: u64, to: u64) -> Option<u32> {
    let v = to.wrapping_sub(from) as i64;
    crate::arch::thunks::reaches::<super::Aarch64>(v as i128).then_some(0x1400_0000 | ((v >> 2) as u32 & 0x03ff_ffff))
}

/// Rewrites the erratum sequences in bytes `owned` of input section `si` of `f` (relocated; its
/// bytes from offset `lo` on are in `buf`): the `adrp` of each that starts there becomes an
/// `adr`, or where the page is out of an `adr`'s reach, the last instruction, where it is
/// `owned`, becomes a branch to its patch (`patch_sites` planned one for it).
pub fn fix_843419(ctx: &Linked, f: FileId, si: u32, buf: &mut [u8], lo: u64, owned: std::ops::Range<u64>) {
    let sec = &ctx.objects[f].sections[si as usize];
    if sec.flags & object::elf::SHF_EXECINSTR as u64 == 0 {
        return;
    }
    let Some(base) = ctx.section_addr(f, si) else { return };
    // Sequences that start up to three instructions before the owned bytes end in them.
    let from = owned.start.saturating_sub(12).max(lo);
    for (at, last, adrp) in sequences(ctx, f, si, buf, lo, from, owned.end) {
        let place = base + at;
        if let Some(adr) = adr_for(adrp, place) {
            if owned.contains(&at) {
                let i = (at - lo) as usize;
                buf[i..i + 4].copy_from_slice(&adr.to_le_bytes());
            }
            continue;
        }
        let patch = sec.out.and_then(|s| {
            let off = ctx.layout.thunks.patch_for(s, SectionRef::new(f, si), last)?;
            Some(ctx.layout.addr(s) + off)
        });
        match patch.and_then(|p| branch(base + last, p)) {
            Some(b) if owned.contains(&last) => {
                let i = (last - lo) as usize;
                buf[i..i + 4].copy_from_slice(&b.to_le_bytes());
            }
            Some(_) => {}
            None if owned.contains(&at) => ctx.diag.error(format!(
                "{}: cannot fix the Cortex-A53 erratum 843419 sequence at {place:#x} \
                 (--fix-cortex-a53-843419): the adrp's page is more than 1 MiB away, out of an adr's reach, \
                 and its patch is out of a branch's reach; link with gcc's -mno-fix-cortex-a53-843419 \
                 if the output need not run on affected Cortex-A53 cores",
                crate::arch::scan::place_name(ctx, f, si, at)
            )),
            None => {}
        }
    }
}

/// The sequences of the laid-out output whose `adrp` cannot become an `adr`: each one's input
/// section and the offset of its last instruction, which a patch takes over. Only offsets that
/// can start a sequence are read (two words per 4 KiB page), relocated only where the unrelocated
/// words are an `adrp` and a load or store.
pub fn patch_sites(ctx: &Linked) -> Vec<(SectionRef, u64)> {
    use rayon::prelude::*;
    let members: Vec<SectionRef> = crate::arch::thunks::code_sections(ctx)
        .into_iter()
        .flat_map(|s| ctx.sections[s].members.iter().copied())
        .collect();
    let mut sites: Vec<(SectionRef, u64)> = members
        .par_iter()
        .with_min_len(64)
        .flat_map_iter(|&r| {
            let sec = &ctx.objects[r];
            let mut found = Vec::new();
            let Some(base) = ctx.section_addr(r.file, r.index) else { return found };
            if sec.flags & object::elf::SHF_EXECINSTR as u64 == 0 || sec.sh_type == object::elf::SHT_NOBITS {
                return found;
            }
            let raw =
                |o: u64| sec.data.get(o as usize..o as usize + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            let len = sec.data.len() as u64;
            for at in candidates(base, 0, len.saturating_sub(8)) {
                if !raw(at).is_some_and(is_adrp) || !raw(at + 4).is_some_and(is_load_store) {
                    continue;
                }
                let (lo, buf) =
                    crate::arch::apply::relocated_window::<super::Aarch64>(ctx, r.file, r.index, at, at + 16);
                for (at, last, adrp) in sequences(ctx, r.file, r.index, &buf, lo, at, at + 4) {
                    if adr_for(adrp, base + at).is_none() {
                        found.push((r, last));
                    }
                }
            }
            found
        })
        .collect();
    sites.sort_unstable();
    sites
}

/// Writes the patches of `area`: for each site, its last instruction as relocated, then a branch
/// back to the instruction after it; the room not used is zeros.
pub fn write_patches(ctx: &Linked, area: &PatchArea, buf: &mut [u8]) {
    buf.fill(0);
    let start = ctx.layout.addr(area.section) + area.offset;
    for (k, &(r, last)) in area.sites.iter().enumerate() {
        let (lo, words) = crate::arch::apply::relocated_window::<super::Aarch64>(ctx, r.file, r.index, last, last + 4);
        let i = (last - lo) as usize;
        let at = 8 * k;
        buf[at..at + 4].copy_from_slice(&words[i..i + 4]);
        let patch = start + at as u64;
        let back = ctx.section_addr(r.file, r.index).unwrap_or(0) + last + 4;
        match branch(patch + 4, back) {
            Some(b) => buf[at + 4..at + 8].copy_from_slice(&b.to_le_bytes()),
            None => ctx.diag.error(format!(
                "{}: the Cortex-A53 erratum 843419 patch at {patch:#x} cannot branch back to {back:#x}: out of a branch's reach",
                crate::arch::scan::place_name(ctx, r.file, r.index, last)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // adrp x0, #0x1000; ldr x1, [x1]; ldr x0, [x0, #8]
    const ADRP_X0: u32 = 0xb000_0000;
    const LDR_X1_X1: u32 = 0xf940_0021;
    const LDR_X0_X0_8: u32 = 0xf940_0400;

    #[test]
    fn recognises_the_sequence() {
        assert!(starts_sequence(&[ADRP_X0, LDR_X1_X1, LDR_X0_X0_8]));
        // With an optional instruction (add x2, x2, #1) before the last one.
        assert!(starts_sequence(&[ADRP_X0, LDR_X1_X1, 0x9100_0442, LDR_X0_X0_8]));
        // A branch as the optional instruction breaks it.
        assert!(!starts_sequence(&[ADRP_X0, LDR_X1_X1, 0x1400_0001, LDR_X0_X0_8]));
        // The second instruction loads into x0, the adrp's register: no sequence.
        assert!(!starts_sequence(&[ADRP_X0, 0xf940_0020, LDR_X0_X0_8]));
        // The last one is based on another register.
        assert!(!starts_sequence(&[ADRP_X0, LDR_X1_X1, 0xf940_0421]));
        // stp x1, x2, [sp, #16] as the second instruction.
        assert!(starts_sequence(&[ADRP_X0, 0xa901_0be1, LDR_X0_X0_8]));
        // Not an adrp (adr).
        assert!(!starts_sequence(&[0x1000_0000, LDR_X1_X1, LDR_X0_X0_8]));
        assert!(!starts_sequence(&[ADRP_X0, LDR_X1_X1]));
    }

    #[test]
    fn candidates_are_the_last_two_words_of_each_page() {
        let all = |base, from, to| candidates(base, from, to).collect::<Vec<u64>>();
        // A section at 0x10000: offsets 0xff8 and 0xffc of each page.
        assert_eq!(all(0x10000, 0, 0x2000), [0xff8, 0xffc, 0x1ff8, 0x1ffc]);
        // At 0x10ff4: its offset 4 is address 0x10ff8.
        assert_eq!(all(0x10ff4, 0, 0x1010), [4, 8, 0x1004, 0x1008]);
        // From the middle of a page, up to (not including) `to`.
        assert_eq!(all(0x10000, 0xffc, 0x1ffc), [0xffc, 0x1ff8]);
        assert!(all(0x10000, 0, 0xff8).is_empty());
    }

    #[test]
    fn rewrites_adrp_as_adr() {
        // At 0x10ff8, adrp x0 of the next page (0x11000): adr x0, #8.
        assert_eq!(adr_for(ADRP_X0, 0x10ff8), Some(0x1000_0040));
        // adrp x3 of the page 0x200 pages back: -0x200ff8 is out of reach.
        assert_eq!(adr_for(super::super::set_adr_imm(0x9000_0003, -0x200), 0x10ff8), None);
        // Same page, register kept: adr x5, #-0xff8.
        assert_eq!(adr_for(0x9000_0005, 0x10ff8), Some(super::super::set_adr_imm(0x1000_0005, -0xff8)));
    }
}
