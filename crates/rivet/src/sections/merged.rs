//! What string merging (`sections::merge`) gives the later stages: each merged input section's
//! pieces and where they went, and the lookup from an input offset to its place in the output.
//! Plain data over the inputs; layout calls `finalize` once member offsets are known.
use crate::ids::{FileId, IdVec, MergeId, OutputSectionId, SectionRef};
use rayon::prelude::*;

/// Granularity of `MergedSection::blocks`.
pub const BLOCK: u64 = 64;

/// Where a piece's bytes are: the candidate (index into `Merges::sections`) that owns them and
/// their offset within that section's output bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub owner: MergeId,
    pub out_off: u32,
}

/// A merged input section: its pieces, sorted by input offset, and the size of what it owns.
pub struct MergedSection {
    /// The pieces' input offsets alone, until `finalize` moves them into `near` (kept only when the
    /// places are too far apart for it): a relocation into the section searches them there (4 bytes
    /// a piece stay in cache where 16-byte pieces would not; 23% of a synth-1 link was this search
    /// over `pieces`).
    pub starts: Vec<u32>,
    /// For each 64-byte block of the input, the piece holding its first byte: a lookup reads one
    /// entry and steps over the few pieces that start inside the block, instead of a binary search.
    pub blocks: Vec<u32>,
    /// Each piece's offset within the output section (filled by `finalize` once member offsets are
    /// known): an address is the output section's address plus this. Only when the offsets span
    /// 4 GiB or more; otherwise `near` holds them.
    pub placed: Vec<u64>,
    /// After `finalize`, when every piece's offset in the output section is within 4 GiB of the
    /// lowest (`near_base`): each piece's (input offset, output offset - `near_base`), and
    /// `starts` is dropped. A lookup then finds the piece and its place in one cache line, where
    /// `starts` and `placed` cost a miss each (finding a piece's place was 19% of synth-1's samples).
    pub near: Vec<(u32, u32)>,
    pub near_base: u64,
    /// The output section all of this section's pieces are in.
    pub out: OutputSectionId,
    /// Each piece's owner, until `finalize` turns them into `placed` (then empty: 8 bytes a piece
    /// less for the rest of the link).
    pub owners: Vec<Owner>,
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

    /// The piece holding input offset `off` (past the end: the last piece), among pieces whose
    /// input offsets `start` gives, found through `blocks`.
    fn piece<T>(blocks: &[u32], pieces: &[T], start: impl Fn(&T) -> u32, off: u64) -> Option<usize> {
        let b = ((off / BLOCK) as usize).min(blocks.len().checked_sub(1)?);
        let first = blocks[b] as usize;
        // Pieces starting inside this block end at the next block's first piece.
        let end = blocks.get(b + 1).map_or(pieces.len(), |&e| e as usize + 1).min(pieces.len());
        let after = pieces.get(first..end)?.partition_point(|p| start(p) as u64 <= off);
        (after > 0).then(|| first + after - 1)
    }

    /// (output section, offset in it) of input offset `off` of `m`; needs `finalize`.
    pub fn place(&self, m: &MergedSection, off: u64) -> Option<(OutputSectionId, u64)> {
        if !m.near.is_empty() {
            let i = Self::piece(&m.blocks, &m.near, |p| p.0, off)?;
            let (start, placed) = m.near[i];
            return Some((m.out, m.near_base + placed as u64 + (off - start as u64)));
        }
        let i = Self::piece(&m.blocks, &m.starts, |&s| s, off)?;
        Some((m.out, m.placed[i] + (off - m.starts[i] as u64)))
    }

    /// Once every input section has its offset in its output section: each piece's offset there.
    pub fn finalize(&mut self, objects: &IdVec<FileId, crate::input::object::ObjectFile>) {
        let base: IdVec<MergeId, u64> =
            self.sections.iter().map(|r| objects[r.file].sections[r.index as usize].offset).collect();
        self.merged.par_iter_mut().with_max_len(1).for_each(|m| m.place_pieces(&base));
    }
}

impl MergedSection {
    /// `placed` from the owners, given each merged section's offset in its output section (`base`,
    /// by `Merges::sections` index); the owners are dropped.
    fn place_pieces(&mut self, base: &IdVec<MergeId, u64>) {
        let placed: Vec<u64> = self.owners.iter().map(|o| base[o.owner] + o.out_off as u64).collect();
        self.owners = Vec::new();
        let lowest = placed.iter().copied().min().unwrap_or(0);
        if placed.iter().all(|&p| p - lowest <= u32::MAX as u64) {
            self.near = self.starts.iter().zip(&placed).map(|(&s, &p)| (s, (p - lowest) as u32)).collect();
            self.near_base = lowest;
            self.starts = Vec::new();
        } else {
            self.placed = placed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn place_finds_the_piece_holding_an_offset() {
        let at = |f: usize, s: u32| SectionRef::new(FileId::new(f), s);
        let merges = Merges { sections: vec![at(0, 1), at(2, 3)].into(), ..Default::default() };
        let out = OutputSectionId::new(7);
        let base = |a: u64, b: u64| -> IdVec<MergeId, u64> { vec![a, b].into() };
        let section = || MergedSection {
            starts: vec![0, 4],
            blocks: vec![0],
            placed: Vec::new(),
            near: Vec::new(),
            near_base: 0,
            out,
            owners: vec![Owner { owner: MergeId::new(0), out_off: 0 }, Owner { owner: MergeId::new(1), out_off: 10 }],
            owned: vec![(0, 4, 0)],
            size: 4,
            len: 10,
        };
        // Section 0 sits at offset 100 of output section 7, section 1 at 200: the places are
        // kept as offsets from 100 beside the input offsets.
        let mut m = section();
        m.place_pieces(&base(100, 200));
        assert!(m.owners.is_empty());
        assert_eq!((m.near.as_slice(), m.near_base, m.starts.len()), (&[(0, 0), (4, 110)][..], 100, 0));
        assert_eq!(merges.place(&m, 0), Some((out, 100)));
        assert_eq!(merges.place(&m, 3), Some((out, 103)));
        assert_eq!(merges.place(&m, 5), Some((out, 211)));
        assert_eq!(merges.place(&m, 10), Some((out, 216)), "one past the end");
        // Section 1 5 GiB further on: the places do not fit 32 bits and stay whole.
        let far = 100 + (5 << 30);
        let mut m = section();
        m.place_pieces(&base(100, far));
        assert!(m.near.is_empty());
        assert_eq!(m.placed, vec![100, far + 10]);
        assert_eq!(merges.place(&m, 3), Some((out, 103)));
        assert_eq!(merges.place(&m, 5), Some((out, far + 11)));
        // No pieces at all: nothing to place.
        let mut m =
            MergedSection { starts: Vec::new(), owners: Vec::new(), owned: Vec::new(), size: 0, len: 0, ..section() };
        m.place_pieces(&base(100, 200));
        assert_eq!(merges.place(&m, 0), None);
    }
}
