//! Where the inputs went inside their output sections: the input-offsets stage's product
//! (`script_layout::assign_input_offsets`), `InputPlaces`: each input section's offset, where the
//! common symbols are, and each merged piece's offset. No stage before that one has it, so none
//! can read an offset that is not known yet; layout takes it over (a linker script's commands,
//! walked again at their addresses, may move members and commons) and keeps it in the `Layout`.
use crate::ids::{FileId, IdVec, OutputSectionId, SectionRef, SymbolId};
use crate::input::object::Objects;
use crate::sections::merged::MergePlaces;

/// What the input-offsets stage gives.
#[derive(Default)]
pub struct InputPlaces {
    pub offsets: InputOffsets,
    pub commons: Commons,
    pub merged: MergePlaces,
}

/// Where the common symbols are: the plain ones in one area, the thread-local ones (`STT_TLS`
/// with `SHN_COMMON`, as `.tls_common` makes them) in another, each in an output section of its
/// own (`.common`, `.tls_common`, as mold names them) or, under a `SECTIONS` script, in `.bss` /
/// `.tbss` where `*(COMMON)` is.
#[derive(Clone, Debug, Default)]
pub struct Commons {
    pub areas: Vec<CommonArea>,
    /// Each common symbol's area (an index into `areas`) and offset from that area's `base`.
    pub at: rustc_hash::FxHashMap<SymbolId, (usize, u64)>,
}

/// One area of common symbols: in output section `section`, from `base`, `size` bytes.
#[derive(Clone, Debug)]
pub struct CommonArea {
    pub section: OutputSectionId,
    /// Where they start in `section`: after its input members (`layout::assign_member_offsets`).
    pub base: u64,
    /// The bytes they take, from `base`.
    pub size: u64,
}

impl Commons {
    /// The output section that holds common symbol `id`.
    pub fn section_of(&self, id: SymbolId) -> Option<OutputSectionId> {
        self.at.get(&id).map(|&(a, _)| self.areas[a].section)
    }

    /// Common symbol `id`'s output section and offset in it.
    pub fn place_of(&self, id: SymbolId) -> Option<(OutputSectionId, u64)> {
        self.at.get(&id).map(|&(a, off)| (self.areas[a].section, self.areas[a].base + off))
    }

    /// The area of common symbols in output section `sec`, if it holds any.
    pub fn area_in(&mut self, sec: OutputSectionId) -> Option<&mut CommonArea> {
        self.areas.iter_mut().find(|a| a.section == sec)
    }
}

/// One offset per section of every object, in one allocation: object `f`'s section `i` is at
/// `first[f] + i`. A section that is in no output section keeps 0.
#[derive(Clone, Debug, Default)]
pub struct InputOffsets {
    first: IdVec<FileId, usize>,
    offsets: Vec<u64>,
}

impl InputOffsets {
    /// A table for `objects`' sections, every offset 0 until the stage sets it.
    pub fn new(objects: &Objects) -> InputOffsets {
        InputOffsets::for_counts(objects.iter().map(|obj| obj.sections.len()))
    }

    /// A table for objects with `counts` sections each, in id order.
    fn for_counts(counts: impl ExactSizeIterator<Item = usize>) -> InputOffsets {
        let mut first = IdVec::with_capacity(counts.len());
        let mut total = 0;
        for n in counts {
            first.push(total);
            total += n;
        }
        InputOffsets { first, offsets: vec![0; total] }
    }

    fn slot(&self, r: SectionRef) -> usize {
        self.first[r.file] + r.index as usize
    }
}

impl std::ops::Index<SectionRef> for InputOffsets {
    type Output = u64;
    #[inline]
    fn index(&self, r: SectionRef) -> &u64 {
        &self.offsets[self.slot(r)]
    }
}

impl std::ops::IndexMut<SectionRef> for InputOffsets {
    #[inline]
    fn index_mut(&mut self, r: SectionRef) -> &mut u64 {
        let i = self.slot(r);
        &mut self.offsets[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_section_has_a_slot_of_its_own() {
        let at = |f: usize, i: u32| SectionRef::new(FileId::new(f), i);
        // Three objects: three sections, none, two.
        let mut t = InputOffsets::for_counts([3, 0, 2].into_iter());
        t[at(0, 2)] = 10;
        t[at(2, 0)] = 20;
        t[at(2, 1)] = 30;
        assert_eq!([t[at(0, 0)], t[at(0, 1)], t[at(0, 2)], t[at(2, 0)], t[at(2, 1)]], [0, 0, 10, 20, 30]);
    }
}
