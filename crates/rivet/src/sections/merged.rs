//! What string merging (`sections::merge`) gives the later stages: each merged input section's
//! pieces and where they went, and the lookup from an input offset to its place in the output.
//! Merging returns two values: `Merges` (what each section writes and how large it is, which
//! sizing and writing read) and `MergePieces` (each piece's input offset and owner), which the
//! input-offsets stage consumes, once member offsets are known, into `MergePlaces`: each piece's
//! offset in its output section. A place cannot be asked for before it exists.
use crate::ids::{IdVec, MergeId, OutputSectionId, SectionRef};
use rayon::prelude::*;

/// Granularity of `Pieces::blocks`.
const BLOCK: u64 = 64;

/// Where a piece's bytes are: the candidate (index into `Merges::sections`) that owns them and
/// their offset within that section's output bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub owner: MergeId,
    pub out_off: u32,
}

/// A merged input section as sizing and writing see it: its output section, the pieces it
/// writes and the size of what it owns.
pub struct MergedSection {
    /// The output section all of this section's pieces are in.
    pub out: OutputSectionId,
    /// The pieces this section itself writes: (input offset, length, offset in its output bytes).
    pub owned: Vec<(u32, u32, u32)>,
    pub size: u64,
    /// The input section's size: a reference at or past it is outside the section (lld's
    /// "offset is outside the section").
    pub len: u64,
}

/// Every merged input section of the link.
#[derive(Default)]
pub struct Merges {
    /// Each merged input section; `Owner::owner` indexes this.
    pub sections: IdVec<MergeId, SectionRef>,
    pub merged: IdVec<MergeId, MergedSection>,
    /// Bytes of input merged away (for --stats and the closing report).
    pub saved: u64,
}

impl Merges {
    /// The merged section at `index` (an `ObjSection::merge_index`), if it is one.
    pub fn at(&self, index: Option<MergeId>) -> Option<&MergedSection> {
        self.merged.get(index?)
    }
}

/// A merged section's pieces as merging leaves them: sorted by input offset, each with its owner.
pub struct Pieces {
    /// The pieces' input offsets (4 bytes a piece stay in cache where 16-byte pieces would not;
    /// the search over whole pieces was 23% of a synth-1 link's samples in perf).
    pub starts: Vec<u32>,
    /// For each 64-byte block of the input, the piece holding its first byte: a lookup reads one
    /// entry and steps over the few pieces that start inside the block, instead of a binary search.
    pub blocks: Vec<u32>,
    /// Each piece's owner.
    pub owners: Vec<Owner>,
}

/// Every merged section's pieces, by `MergeId`: merging's second product, for the input-offsets
/// stage to place.
#[derive(Default)]
pub struct MergePieces(pub IdVec<MergeId, Pieces>);

/// Where each merged section's pieces went, by `MergeId`: made by `MergePieces::place`.
#[derive(Default)]
pub struct MergePlaces(IdVec<MergeId, PlacedPieces>);

/// One merged section's pieces with their offsets in the output section.
pub struct PlacedPieces {
    blocks: Vec<u32>,
    at: Offsets,
}

enum Offsets {
    /// Every piece's offset in the output section is within 4 GiB of the lowest (`base`): each
    /// piece's (input offset, output offset - `base`). A lookup finds the piece and its place in
    /// one cache line, where separate starts and places cost a miss each (finding a piece's place
    /// was 19% of a synth-1 link's samples in perf).
    Near { pieces: Vec<(u32, u32)>, base: u64 },
    /// The offsets span 4 GiB or more: the input offsets and the output offsets apart.
    Far { starts: Vec<u32>, placed: Vec<u64> },
}

impl MergePieces {
    /// Each piece's offset in its output section, given each merged section's offset there
    /// (`base`, by `MergeId`); consumes the owners.
    pub fn place(self, base: &IdVec<MergeId, u64>) -> MergePlaces {
        let placed = self.0.into_vec().into_par_iter().with_max_len(1).map(|p| p.place(base)).collect::<Vec<_>>();
        MergePlaces(placed.into())
    }
}

impl Pieces {
    fn place(self, base: &IdVec<MergeId, u64>) -> PlacedPieces {
        let placed: Vec<u64> = self.owners.iter().map(|o| base[o.owner] + o.out_off as u64).collect();
        drop(self.owners);
        let lowest = placed.iter().copied().min().unwrap_or(0);
        let at = if placed.iter().all(|&p| p - lowest <= u32::MAX as u64) {
            let pieces = self.starts.iter().zip(&placed).map(|(&s, &p)| (s, (p - lowest) as u32)).collect();
            Offsets::Near { pieces, base: lowest }
        } else {
            Offsets::Far { starts: self.starts, placed }
        };
        PlacedPieces { blocks: self.blocks, at }
    }
}

impl MergePlaces {
    /// Merged section `id`'s placed pieces: found once, then asked for many offsets.
    pub fn get(&self, id: MergeId) -> Option<&PlacedPieces> {
        self.0.get(id)
    }

    /// The offset in its output section of input offset `off` of merged section `id` (past the
    /// end: in the last piece).
    pub fn offset(&self, id: MergeId, off: u64) -> Option<u64> {
        self.get(id)?.offset(off)
    }
}

impl PlacedPieces {
    /// The offset in the output section of input offset `off` (past the end: in the last piece).
    pub fn offset(&self, off: u64) -> Option<u64> {
        match &self.at {
            Offsets::Near { pieces, base } => {
                let i = piece(&self.blocks, pieces, |p| p.0, off)?;
                let (start, placed) = pieces[i];
                Some(base + placed as u64 + (off - start as u64))
            }
            Offsets::Far { starts, placed } => {
                let i = piece(&self.blocks, starts, |&s| s, off)?;
                Some(placed[i] + (off - starts[i] as u64))
            }
        }
    }
}

/// `Pieces::blocks` for pieces starting at `starts` in `len` bytes of input: for each 64-byte
/// block, the piece holding its first byte (at least one block, for an empty section).
pub fn blocks_of(starts: &[u32], len: u64) -> Vec<u32> {
    let count = len.div_ceil(BLOCK).max(1);
    let mut blocks = Vec::with_capacity(count as usize);
    let mut i = 0usize;
    for b in 0..count {
        while i + 1 < starts.len() && starts[i + 1] as u64 <= b * BLOCK {
            i += 1;
        }
        blocks.push(i as u32);
    }
    blocks
}

/// The piece holding input offset `off` (past the end: the last piece), among pieces whose input
/// offsets `start` gives, found through `blocks`.
#[inline]
fn piece<T>(blocks: &[u32], pieces: &[T], start: impl Fn(&T) -> u32, off: u64) -> Option<usize> {
    let b = ((off / BLOCK) as usize).min(blocks.len().checked_sub(1)?);
    let mut at = *blocks.get(b)? as usize;
    // The block's first piece starts at or before the block, so at or before `off`; the pieces
    // starting after it inside the block (a few: debug strings are tens of bytes) are stepped
    // over one by one, which costs less than setting up a binary search over them (3 million
    // lookups, 7.7% of rust-big's instructions, with `partition_point`).
    if start(pieces.get(at)?) as u64 > off {
        return None;
    }
    while pieces.get(at + 1).is_some_and(|p| start(p) as u64 <= off) {
        at += 1;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn place_finds_the_piece_holding_an_offset() {
        let id = MergeId::new(0);
        let base = |a: u64, b: u64| -> IdVec<MergeId, u64> { vec![a, b].into() };
        // Two pieces at input offsets 0 and 4; the first owned by section 0 at its offset 0, the
        // second by section 1 at its offset 10.
        let pieces = || {
            let owners =
                vec![Owner { owner: MergeId::new(0), out_off: 0 }, Owner { owner: MergeId::new(1), out_off: 10 }];
            MergePieces(vec![Pieces { starts: vec![0, 4], blocks: vec![0], owners }].into())
        };
        // Section 0 sits at offset 100 of its output section, section 1 at 200: the places are
        // kept as offsets from 100 beside the input offsets.
        let places = pieces().place(&base(100, 200));
        assert!(matches!(&places.0[id].at, Offsets::Near { pieces, base: 100 } if pieces == &[(0, 0), (4, 110)]));
        assert_eq!(places.offset(id, 0), Some(100));
        assert_eq!(places.offset(id, 3), Some(103));
        assert_eq!(places.offset(id, 5), Some(211));
        assert_eq!(places.offset(id, 10), Some(216), "one past the end");
        assert_eq!(places.offset(MergeId::new(1), 0), None, "no such merged section");
        // Section 1 5 GiB further on: the places do not fit 32 bits and stay whole.
        let far = 100 + (5 << 30);
        let places = pieces().place(&base(100, far));
        assert!(matches!(&places.0[id].at, Offsets::Far { placed, .. } if placed == &[100, far + 10]));
        assert_eq!(places.offset(id, 3), Some(103));
        assert_eq!(places.offset(id, 5), Some(far + 11));
        // No pieces at all: nothing to place.
        let empty = MergePieces(vec![Pieces { starts: Vec::new(), blocks: vec![0], owners: Vec::new() }].into());
        assert_eq!(empty.place(&base(100, 200)).offset(id, 0), None);
    }

    #[test]
    fn piece_is_the_last_starting_at_or_before_the_offset() {
        // Pieces of 1 to 37 bytes over 600 bytes: many start inside one 64-byte block, some
        // span a block's start, and offsets past the end fall in the last piece.
        let mut starts = vec![0u32];
        while *starts.last().unwrap() < 600 {
            let next = starts.last().unwrap() + 1 + (starts.len() as u32 * 7) % 37;
            starts.push(next);
        }
        let len = u64::from(*starts.last().unwrap()) + 5;
        let blocks = blocks_of(&starts, len);
        for off in 0..len + 70 {
            let plain = starts.iter().rposition(|&s| u64::from(s) <= off);
            assert_eq!(piece(&blocks, &starts, |&s| s, off), plain, "offset {off}");
        }
        // A block whose first piece starts after the offset asked for (not one merging builds):
        // no piece, rather than the wrong one.
        assert_eq!(piece(&[0], &[4u32, 9], |&s| s, 2), None);
    }
}
