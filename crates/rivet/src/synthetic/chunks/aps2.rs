//! `.rela.dyn` in Android's packed format (`--pack-dyn-relocs=android`, `android+relr`): the
//! relocations as a stream of SLEB128 numbers after the magic `APS2`: their count, a starting
//! offset, then groups. A group's header holds its size and flags and, for what the flags say
//! the group shares, the shared r_info or addend; each relocation then adds its offset delta and,
//! unless shared, its r_info and addend delta. Bionic's loader and llvm-readelf read it
//! (DT_ANDROID_RELA, SHT_ANDROID_RELA).
//!
//! The section is sized before layout, so the encoding is planned from what is known then: each
//! relocation's output section and offset in it, its type, symbol and, for a relocation naming a
//! symbol, its addend. Every number that layout decides (the offset delta into another output
//! section, the addend of a relocation without a symbol, which is an address or a TLS offset) is
//! written in a fixed ten bytes; every other number depends on nothing layout does and takes its
//! shortest form. The size is then exact whatever addresses the sections get, and the writer,
//! which has the final values, fills the same plan.
use crate::arch::Arch;
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::ids::{OutputSectionId, SymbolId};
use crate::linked::Linked;
use crate::sections::offsets::InputOffsets;
use crate::sections::output::{Content, SyntheticIds};
use crate::synthetic::plans::Plans;
use crate::synthetic::{got_entry, DynRel};

/// Android's section type and dynamic tags for packed RELA relocations.
pub const SHT_ANDROID_RELA: u32 = 0x6000_0002;
pub const DT_ANDROID_RELA: u32 = 0x6000_0011;
pub const DT_ANDROID_RELASZ: u32 = 0x6000_0012;

/// Group flags (bionic's `RELOCATION_GROUPED_BY_*`).
const BY_INFO: u64 = 1;
const BY_OFFSET_DELTA: u64 = 2;
const BY_ADDEND: u64 = 4;
const HAS_ADDEND: u64 = 8;
/// The width of a number layout decides: the longest SLEB128 of a 64-bit value.
const FIXED: usize = 10;
/// Relocations sharing r_info and addend are grouped from this many on: a group header costs
/// three numbers and saves one or two per relocation.
const MIN_GROUP: usize = 3;

/// One relocation of `.rela.dyn` as known before layout.
#[derive(Clone, Copy, Debug)]
struct Planned {
    sec: OutputSectionId,
    /// Offset in `sec`.
    off: u64,
    ty: u32,
    sym: Option<SymbolId>,
    /// Known before layout only when the relocation names a symbol.
    addend: i64,
}

impl Planned {
    fn fixed_addend(&self) -> bool {
        self.sym.is_none()
    }
}

enum Shape {
    /// One r_info and addend 0 (the loader resets the addend): offset deltas only.
    InfoNoAddend(u64),
    /// One r_info and one addend: offset deltas only.
    InfoAndAddend(u64, i64),
    /// One r_info: offset and addend deltas.
    Info(u64),
    /// Offset delta, r_info and addend delta each.
    Each,
}

struct Group {
    shape: Shape,
    /// Indices into the planned relocations, in stream order.
    rels: Vec<usize>,
}

/// The packed section's plan: every relocation and the groups they are written in.
struct Plan {
    rels: Vec<Planned>,
    /// Each relocation's r_info.
    infos: Vec<u64>,
    groups: Vec<Group>,
}

/// The size of the packed `.rela.dyn` (the section exists only when it has relocations).
pub fn size<A: Arch>(ctx: &Ctx, offsets: &InputOffsets, plans: &Plans, synthetic: &SyntheticIds) -> Result<u64> {
    let plan = plan::<A>(ctx, offsets, plans, synthetic)?;
    let mut out = Vec::new();
    encode(&plan, |i| (plan.rels[i].off, plan.rels[i].addend), &mut out);
    Ok(out.len() as u64)
}

/// Writes the packed `.rela.dyn` from the relocations every section produced (`rels`), which
/// must be the planned ones.
pub fn write<A: Arch>(ctx: &Linked, mut rels: Vec<DynRel>, buf: &mut [u8]) -> Result<()> {
    let plan = plan::<A>(ctx, &ctx.layout.inputs.offsets, ctx.plans, &ctx.layout.synthetic)?;
    let addr = |p: &Planned| ctx.layout.addr(p.sec) + p.off;
    if rels.len() != plan.rels.len() {
        crate::bail!(
            "internal error: {} dynamic relocations were written but {} were planned for the packed .rela.dyn",
            rels.len(),
            plan.rels.len()
        );
    }
    // Match each planned relocation with the one written at its address.
    let key = |offset: u64, ty: u32, sym: Option<SymbolId>| (offset, ty, sym.map(|s| s.index()));
    rels.sort_unstable_by_key(|r| key(r.offset, r.ty, r.sym));
    let mut order: Vec<usize> = (0..plan.rels.len()).collect();
    order.sort_unstable_by_key(|&i| {
        let p = &plan.rels[i];
        key(addr(p), p.ty, p.sym)
    });
    let mut addend = vec![0i64; plan.rels.len()];
    for (&i, r) in order.iter().zip(&rels) {
        let p = &plan.rels[i];
        if key(addr(p), p.ty, p.sym) != key(r.offset, r.ty, r.sym) || (!p.fixed_addend() && p.addend != r.addend) {
            crate::bail!(
                "internal error: the dynamic relocation at {:#x} (type {}) is not the one planned for the packed .rela.dyn",
                r.offset,
                r.ty
            );
        }
        addend[i] = r.addend;
    }
    let mut out = Vec::with_capacity(buf.len());
    encode(&plan, |i| (addr(&plan.rels[i]), addend[i]), &mut out);
    if out.len() != buf.len() {
        crate::bail!("internal error: the packed .rela.dyn holds {} bytes but was sized for {}", out.len(), buf.len());
    }
    buf.copy_from_slice(&out);
    Ok(())
}

/// Every relocation `.rela.dyn` gets, from the input sections' records (kept by the relocation
/// scan for this format), the GOT and the copies, and the groups to write them in: those naming a
/// symbol first (the addends they carry are known now), sorted by r_info and addend so that runs
/// share a group header; then the RELATIVE ones, in one group by section and offset; then the
/// other relocations without a symbol, IRELATIVE last (its resolver may read relocated data).
fn plan<A: Arch>(ctx: &Ctx, inputs: &InputOffsets, plans: &Plans, synthetic: &SyntheticIds) -> Result<Plan> {
    let mut rels = Vec::new();
    for &(r, off, named) in &plans.got.android {
        let Some(sec) = ctx.objects[r].out else { continue };
        let (ty, sym, addend) = match named {
            Some((id, addend)) => (A::R_ABS64, Some(id), addend),
            None => (A::R_RELATIVE, None, 0),
        };
        rels.push(Planned { sec, off: inputs[r] + off, ty, sym, addend });
    }
    if let Some(got) = synthetic.get(Content::Got) {
        for &(key, word) in &plans.got.got {
            for (delta, ty, sym, addend) in got_entry::<A>(ctx, None, key).1 {
                if ty == A::R_RELATIVE && ctx.config.pack_relative_relocs {
                    continue; // In .relr.dyn.
                }
                let addend = if sym.is_some() { addend } else { 0 };
                rels.push(Planned { sec: got, off: 8 * word as u64 + delta, ty, sym, addend });
            }
        }
    }
    for &id in &plans.got.copies {
        let (sec, off) = plans.got.copy_offset[&id];
        rels.push(Planned { sec, off, ty: A::R_COPY, sym: Some(id), addend: 0 });
    }
    let infos = rels.iter().map(|p| super::r_info(ctx, plans, p.ty, p.sym)).collect::<Result<Vec<u64>>>()?;
    let place = |i: usize| (rels[i].sec.index(), rels[i].off);
    let mut groups = Vec::new();
    // Relocations naming a symbol: runs of one r_info and addend share a group.
    let mut named: Vec<usize> = (0..rels.len()).filter(|&i| rels[i].sym.is_some()).collect();
    named.sort_unstable_by_key(|&i| (infos[i], rels[i].addend, place(i)));
    let mut single = Vec::new();
    for run in named.chunk_by(|&a, &b| (infos[a], rels[a].addend) == (infos[b], rels[b].addend)) {
        if run.len() < MIN_GROUP {
            single.extend_from_slice(run);
            continue;
        }
        let shape = match rels[run[0]].addend {
            0 => Shape::InfoNoAddend(infos[run[0]]),
            a => Shape::InfoAndAddend(infos[run[0]], a),
        };
        groups.push(Group { shape, rels: run.to_vec() });
    }
    single.sort_unstable_by_key(|&i| place(i));
    if !single.is_empty() {
        groups.push(Group { shape: Shape::Each, rels: single });
    }
    // RELATIVE relocations, then the others without a symbol.
    let mut relative: Vec<usize> =
        (0..rels.len()).filter(|&i| rels[i].sym.is_none() && rels[i].ty == A::R_RELATIVE).collect();
    relative.sort_unstable_by_key(|&i| place(i));
    if !relative.is_empty() {
        groups.push(Group { shape: Shape::Info(A::R_RELATIVE as u64), rels: relative });
    }
    let mut other: Vec<usize> =
        (0..rels.len()).filter(|&i| rels[i].sym.is_none() && rels[i].ty != A::R_RELATIVE).collect();
    other.sort_unstable_by_key(|&i| (rels[i].ty == A::R_IRELATIVE, place(i)));
    if !other.is_empty() {
        groups.push(Group { shape: Shape::Each, rels: other });
    }
    Ok(Plan { rels, infos, groups })
}

/// Encodes `plan` with each relocation's (offset or address, addend) from `value`. A number layout
/// decides is written in `FIXED` bytes: an offset delta from a relocation of another output
/// section (or from the stream's start), and an addend delta where either addend is one layout
/// decides.
fn encode(plan: &Plan, value: impl Fn(usize) -> (u64, i64), out: &mut Vec<u8>) {
    out.extend_from_slice(b"APS2");
    sleb(out, plan.rels.len() as i64, false);
    sleb(out, 0, false);
    // The decoder's running offset and addend, and what they were last set from.
    let (mut offset, mut addend) = (0u64, 0i64);
    let mut last_sec: Option<OutputSectionId> = None;
    let mut addend_fixed = false;
    for g in &plan.groups {
        sleb(out, g.rels.len() as i64, false);
        let flags = match g.shape {
            Shape::InfoNoAddend(_) => BY_INFO,
            Shape::InfoAndAddend(..) => BY_INFO | BY_ADDEND | HAS_ADDEND,
            Shape::Info(_) => BY_INFO | HAS_ADDEND,
            Shape::Each => HAS_ADDEND,
        };
        debug_assert_eq!(flags & BY_OFFSET_DELTA, 0);
        sleb(out, flags as i64, false);
        match g.shape {
            Shape::InfoNoAddend(info) | Shape::Info(info) => sleb(out, info as i64, false),
            Shape::InfoAndAddend(info, a) => {
                sleb(out, info as i64, false);
                sleb(out, a.wrapping_sub(addend), addend_fixed);
                (addend, addend_fixed) = (a, false);
            }
            Shape::Each => {}
        }
        if let Shape::InfoNoAddend(_) = g.shape {
            (addend, addend_fixed) = (0, false);
        }
        for &i in &g.rels {
            let p = &plan.rels[i];
            let (at, a) = value(i);
            sleb(out, at.wrapping_sub(offset) as i64, last_sec != Some(p.sec));
            (offset, last_sec) = (at, Some(p.sec));
            if let Shape::Each = g.shape {
                sleb(out, plan.infos[i] as i64, false);
            }
            if let Shape::Info(_) | Shape::Each = g.shape {
                sleb(out, a.wrapping_sub(addend), addend_fixed || p.fixed_addend());
                (addend, addend_fixed) = (a, p.fixed_addend());
            }
        }
    }
}

/// Appends `v` as SLEB128: its shortest form, or `FIXED` bytes when `fixed`.
fn sleb(out: &mut Vec<u8>, v: i64, fixed: bool) {
    if fixed {
        for i in 0..FIXED - 1 {
            out.push(((v >> (7 * i)) & 0x7f) as u8 | 0x80);
        }
        out.push(((v >> 63) & 0x7f) as u8);
        return;
    }
    let mut v = v;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        let done = (v == 0 && byte & 0x40 == 0) || (v == -1 && byte & 0x40 != 0);
        out.push(if done { byte } else { byte | 0x80 });
        if done {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::Id;
    use object::elf;

    /// Reads one SLEB128 as bionic's and llvm-readelf's decoders do.
    fn read(bytes: &[u8], at: &mut usize) -> i64 {
        let (mut v, mut shift) = (0i64, 0);
        loop {
            let b = bytes[*at];
            *at += 1;
            if shift < 64 {
                v |= ((b & 0x7f) as i64) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    v |= -1i64 << shift;
                }
                return v;
            }
        }
    }

    /// The relocations (offset, info, addend) a packed stream holds, decoded as the loader does.
    fn decode(bytes: &[u8]) -> Vec<(u64, u64, i64)> {
        assert_eq!(&bytes[..4], b"APS2");
        let mut at = 4;
        let count = read(bytes, &mut at) as usize;
        let (mut offset, mut info, mut addend) = (read(bytes, &mut at) as u64, 0u64, 0i64);
        let mut out = Vec::new();
        while out.len() < count {
            let size = read(bytes, &mut at) as usize;
            let flags = read(bytes, &mut at) as u64;
            let delta = if flags & BY_OFFSET_DELTA != 0 { read(bytes, &mut at) } else { 0 };
            if flags & BY_INFO != 0 {
                info = read(bytes, &mut at) as u64;
            }
            if flags & HAS_ADDEND != 0 && flags & BY_ADDEND != 0 {
                addend = addend.wrapping_add(read(bytes, &mut at));
            } else if flags & HAS_ADDEND == 0 {
                addend = 0;
            }
            for _ in 0..size {
                offset =
                    offset.wrapping_add(if flags & BY_OFFSET_DELTA != 0 { delta } else { read(bytes, &mut at) } as u64);
                if flags & BY_INFO == 0 {
                    info = read(bytes, &mut at) as u64;
                }
                if flags & HAS_ADDEND != 0 && flags & BY_ADDEND == 0 {
                    addend = addend.wrapping_add(read(bytes, &mut at));
                }
                out.push((offset, info, addend));
            }
        }
        assert_eq!(at, bytes.len(), "bytes after the last relocation");
        out
    }

    #[test]
    fn sleb_forms_decode_to_their_value() {
        for v in [0, 1, -1, 63, 64, -64, -65, 8191, -8192, i64::MAX, i64::MIN, 0x1234_5678_9abc, -0x1234_5678_9abc] {
            for fixed in [false, true] {
                let mut out = Vec::new();
                sleb(&mut out, v, fixed);
                if fixed {
                    assert_eq!(out.len(), FIXED);
                    assert!(matches!(out[FIXED - 1], 0 | 0x7f), "{v}: {out:x?}");
                }
                let mut at = 0;
                assert_eq!(read(&out, &mut at), v, "{v} fixed {fixed}: {out:x?}");
                assert_eq!(at, out.len());
            }
        }
        let mut out = Vec::new();
        sleb(&mut out, 63, false);
        sleb(&mut out, -64, false);
        sleb(&mut out, 64, false);
        assert_eq!(out, [0x3f, 0x40, 0xc0, 0x00]);
    }

    /// A plan of every group shape over three output sections, encoded with the offsets in their
    /// sections and the addends known before layout, then with final addresses and addends: the
    /// same size, and the final stream decodes to exactly the final relocations.
    #[test]
    fn the_size_before_layout_is_the_size_after() {
        let sec = |i: usize| OutputSectionId::from_index(i);
        let sym = |i: usize| Some(SymbolId::from_index(i));
        let rel = |s, off, ty, sym, addend| Planned { sec: sec(s), off, ty, sym, addend };
        let rels = vec![
            rel(1, 0x10, elf::R_X86_64_GLOB_DAT, sym(7), 0),
            rel(1, 0x18, elf::R_X86_64_GLOB_DAT, sym(7), 0),
            rel(2, 0x00, elf::R_X86_64_GLOB_DAT, sym(7), 0),
            rel(2, 0x40, elf::R_X86_64_64, sym(9), -8),
            rel(2, 0x48, elf::R_X86_64_64, sym(9), -8),
            rel(2, 0x50, elf::R_X86_64_64, sym(9), -8),
            rel(2, 0x58, elf::R_X86_64_64, sym(3), 1 << 40),
            rel(3, 0x08, elf::R_X86_64_RELATIVE, None, 0),
            rel(3, 0x00, elf::R_X86_64_RELATIVE, None, 0),
            rel(1, 0x08, elf::R_X86_64_RELATIVE, None, 0),
            rel(1, 0x30, elf::R_X86_64_TPOFF64, None, 0),
            rel(1, 0x20, elf::R_X86_64_DTPMOD64, None, 0),
        ];
        let infos: Vec<u64> =
            rels.iter().map(|p| p.sym.map_or(0, |s| (s.index() as u64 + 1) << 32) | p.ty as u64).collect();
        let groups = vec![
            Group { shape: Shape::InfoNoAddend(infos[0]), rels: vec![0, 1, 2] },
            Group { shape: Shape::InfoAndAddend(infos[3], -8), rels: vec![3, 4, 5] },
            Group { shape: Shape::Each, rels: vec![6] },
            Group { shape: Shape::Info(elf::R_X86_64_RELATIVE as u64), rels: vec![8, 7, 9] },
            Group { shape: Shape::Each, rels: vec![11, 10] },
        ];
        let plan = Plan { rels: rels.clone(), infos: infos.clone(), groups };
        let mut before = Vec::new();
        encode(&plan, |i| (rels[i].off, rels[i].addend), &mut before);
        // Final addresses far apart (section 3 below section 1), final addends of the
        // relocations without a symbol.
        let base = [0, 0x7fff_0000_1000u64, 0x7fff_0000_9000, 0x40_0000];
        let addr = |i: usize| base[rels[i].sec.index()] + rels[i].off;
        let addend = |i: usize| if rels[i].sym.is_some() { rels[i].addend } else { -(addr(i) as i64) * 3 + i as i64 };
        let mut after = Vec::new();
        encode(&plan, |i| (addr(i), addend(i)), &mut after);
        assert_eq!(before.len(), after.len());
        let mut want: Vec<(u64, u64, i64)> = (0..rels.len()).map(|i| (addr(i), infos[i], addend(i))).collect();
        let mut got = decode(&after);
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want);
    }
}
