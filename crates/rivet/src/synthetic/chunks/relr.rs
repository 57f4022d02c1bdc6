//! `.relr.dyn` (`-z pack-relative-relocs`, `--pack-dyn-relocs=relr`): RELATIVE relocations packed
//! as RELR entries: an even entry is an address to relocate, an odd one a bitmap of the 63 words
//! after the last address or bitmap. The addend is the word already in place (the writers store
//! it there for every RELATIVE relocation).
//!
//! The section is sized before layout, when only offsets within output sections are known. The
//! encoding of a set of offsets depends only on their differences, so each output section's
//! relocations are encoded on their own, starting with an address entry: the size is exact
//! whatever addresses layout gives the sections.
use super::{has_dynamic, Chunk, Header, Sizing, Writing};
use crate::arch::Arch;
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::ids::{IdVec, OutputSectionId};
use crate::sections::offsets::InputOffsets;
use crate::sections::output::{Content, SyntheticIds};
use crate::synthetic::plans::Plans;
use crate::synthetic::{got_entry, DynRel};
use object::elf;
use std::marker::PhantomData;

/// Android's section type for RELR (`--use-android-relr-tags`).
const SHT_ANDROID_RELR: u32 = 0x6fff_ff00;

/// Words a bitmap entry covers.
const BITS: u64 = 63;

pub struct RelrDyn<A>(pub PhantomData<A>);

impl<A: Arch> Chunk for RelrDyn<A> {
    fn header(&self, ctx: &Ctx) -> Header {
        let sh_type = if ctx.config.android_relr_tags { SHT_ANDROID_RELR } else { elf::SHT_RELR };
        Header { name: ".relr.dyn", sh_type, flags: elf::SHF_ALLOC as u64, align: 8, entsize: 8 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        if !has_dynamic(s.ctx) || !s.ctx.config.pack_relative_relocs {
            return None;
        }
        let entries: usize =
            offsets::<A>(s.ctx, s.offsets, s.plans, s.synthetic).iter().map(|(_, offs)| encode(offs, |_| {})).sum();
        (entries > 0).then_some(8 * entries as u64)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let ctx = w.linked;
        let mut at = 0;
        // Sections in address order, so the entries ascend as readers expect.
        let mut groups = offsets::<A>(ctx, &ctx.layout.inputs.offsets, ctx.plans, &ctx.layout.synthetic);
        groups.sort_by_key(|(sec, _)| ctx.layout.addr(*sec));
        for (sec, offs) in groups {
            let base = ctx.layout.addr(sec);
            let addrs: Vec<u64> = offs.iter().map(|o| base + o).collect();
            let mut overflow = false;
            encode(&addrs, |e| match buf.get_mut(at..at + 8) {
                Some(slot) => {
                    slot.copy_from_slice(&e.to_le_bytes());
                    at += 8;
                }
                None => overflow = true,
            });
            if overflow {
                crate::bail!("internal error: .relr.dyn has more entries than it was sized for");
            }
        }
        if at != buf.len() {
            crate::bail!("internal error: .relr.dyn holds {} bytes of {}", at, buf.len());
        }
        Ok(Vec::new())
    }
}

/// Each output section's packed relocations: offsets within it, sorted, in section order.
fn offsets<A: Arch>(
    ctx: &Ctx,
    inputs: &InputOffsets,
    plans: &Plans,
    synthetic: &SyntheticIds,
) -> Vec<(OutputSectionId, Vec<u64>)> {
    let mut by_section: IdVec<OutputSectionId, Vec<u64>> = vec![Vec::new(); ctx.sections.len()].into();
    for &(r, off) in &plans.got.relr {
        if let Some(out) = ctx.objects[r].out {
            by_section[out].push(inputs[r] + off);
        }
    }
    if let Some(got) = synthetic.get(Content::Got) {
        for &(key, word) in &plans.got.got {
            for (delta, ty, _, _) in got_entry::<A>(ctx, None, key).1 {
                if ty == A::R_RELATIVE {
                    by_section[got].push(8 * word as u64 + delta);
                }
            }
        }
    }
    let ids = by_section.ids();
    ids.zip(by_section.into_vec())
        .filter(|(_, offs)| !offs.is_empty())
        .map(|(id, mut offs)| {
            offs.sort_unstable();
            offs.dedup();
            (id, offs)
        })
        .collect()
}

/// RELR-encodes sorted, even `addrs`, handing each entry to `emit`; returns how many there are.
fn encode(addrs: &[u64], mut emit: impl FnMut(u64)) -> usize {
    let mut count = 0;
    let mut i = 0;
    while i < addrs.len() {
        emit(addrs[i]);
        count += 1;
        let mut next = addrs[i] + 8;
        i += 1;
        loop {
            let mut bitmap = 0u64;
            while i < addrs.len() {
                // An address before the window (one not word-aligned with it) or past it starts
                // a new address entry.
                let Some(delta) = addrs[i].checked_sub(next).filter(|d| d % 8 == 0 && *d < BITS * 8) else {
                    break;
                };
                bitmap |= 1 << (delta / 8);
                i += 1;
            }
            if bitmap == 0 {
                break;
            }
            emit((bitmap << 1) | 1);
            count += 1;
            next += BITS * 8;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(addrs: &[u64]) -> Vec<u64> {
        let mut out = Vec::new();
        let n = encode(addrs, |e| out.push(e));
        assert_eq!(n, out.len());
        out
    }

    /// What glibc's loader does with the entries: the addresses it relocates.
    fn decode(entries: &[u64]) -> Vec<u64> {
        let mut out = Vec::new();
        let mut next = 0;
        for &e in entries {
            if e & 1 == 0 {
                out.push(e);
                next = e + 8;
            } else {
                for bit in 0..BITS {
                    if e >> (bit + 1) & 1 == 1 {
                        out.push(next + 8 * bit);
                    }
                }
                next += 8 * BITS;
            }
        }
        out
    }

    #[test]
    fn encoding_round_trips_and_packs_runs() {
        let run: Vec<u64> = (0..100).map(|i| 0x1000 + 8 * i).collect();
        let e = entries(&run);
        assert_eq!(e.len(), 3, "an address and two bitmaps for 100 consecutive words: {e:x?}");
        assert_eq!(e[0], 0x1000);
        assert_eq!(decode(&e), run);
        // Gaps, an odd word alignment and a far address each restart with an address entry.
        let scattered = vec![0x2000, 0x2010, 0x2014, 0x2018, 0x9000];
        let e = entries(&scattered);
        assert_eq!(decode(&e), scattered);
        // 0x2000 with a bitmap for 0x2010; 0x2014 is not word-aligned with that window, and after
        // it 0x2018 lies before the next window: each starts an entry, as in lld.
        assert_eq!(e, [0x2000, 0b101, 0x2014, 0x2018, 0x9000]);
    }

    #[test]
    fn the_size_does_not_depend_on_where_the_section_lands() {
        let offs: Vec<u64> = vec![0, 8, 24, 520, 528, 4096, 4100, 4104];
        let n = encode(&offs, |_| {});
        for base in [0x1000u64, 0x3008, 0x40_0000, 0x7ff8] {
            let moved: Vec<u64> = offs.iter().map(|o| base + o).collect();
            assert_eq!(encode(&moved, |_| {}), n, "at {base:#x}");
            assert_eq!(decode(&entries(&moved)), moved);
        }
    }
}
