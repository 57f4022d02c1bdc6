//! Range-extension thunks, as data: groups of small stubs the linker places between the members
//! of an executable output section, each entry jumping to one destination (a symbol's address,
//! or its PLT entry, plus an addend) that a direct branch near it cannot reach. Which groups and
//! entries a link needs is decided after a first layout (`arch::thunks`); this module says where
//! they go: `place` inserts them into the input offsets and sizes that layout computed without
//! them, and `Thunks::entry_near` finds, for a branch, the entry it may go through.
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::ids::{OutputSectionId, SectionRef, Target};
use crate::sections::offsets::{InputOffsets, InputPlaces};
use crate::sections::output::Sizes;

/// Groups start on a 16-byte boundary, as processors prefer for branch targets (mold's choice).
pub const GROUP_ALIGN: u64 = 16;

/// What a thunk entry jumps to: `target`'s address (its PLT entry where calls go there) plus
/// `addend`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    pub target: Target,
    pub addend: i64,
}

/// One group of entries, in output section `section` before its member number `before` (the
/// member count: after the last member).
#[derive(Clone, Debug)]
pub struct Group {
    pub section: OutputSectionId,
    pub before: u32,
    /// Its offset in the section (`place`).
    pub offset: u64,
    /// The entries' destinations, sorted: entry k is at `offset + k * entry_size`.
    pub entries: Vec<Key>,
}

/// The bytes of one erratum patch: the instruction it replaces, then a branch back.
pub const PATCH_SIZE: u64 = 8;

/// Room at the end of output section `section` (after its members and groups) for patches of
/// the Cortex-A53 erratum 843419 (`arch::aarch64::erratum`): `capacity` bytes, of which the
/// first hold one patch per site, in site order.
#[derive(Clone, Debug)]
pub struct PatchArea {
    pub section: OutputSectionId,
    pub capacity: u64,
    /// Its offset in the section (`place`).
    pub offset: u64,
    /// Each patched sequence's section and the offset in it of the load or store the patch
    /// takes over, sorted.
    pub sites: Vec<(SectionRef, u64)>,
}

/// Every group of the output, ordered by section, then by place; the erratum patch areas,
/// ordered by section.
#[derive(Clone, Debug, Default)]
pub struct Thunks {
    pub groups: Vec<Group>,
    /// The size of one entry (the target's).
    pub entry_size: u64,
    pub patches: Vec<PatchArea>,
}

impl Thunks {
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The groups of output section `s`, in offset order, and the index of the first.
    pub fn in_section(&self, s: OutputSectionId) -> (usize, &[Group]) {
        let from = self.groups.partition_point(|g| g.section < s);
        let to = from + self.groups[from..].partition_point(|g| g.section == s);
        (from, &self.groups[from..to])
    }

    /// The entry for `key` in output section `s` nearest to offset `at` among those `reaches`
    /// accepts (given an entry's offset), looking outwards from `at`: its group's index and its
    /// offset.
    pub fn entry_near(
        &self,
        s: OutputSectionId,
        key: Key,
        at: u64,
        reaches: impl Fn(u64) -> bool,
    ) -> Option<(usize, u64)> {
        let (first, groups) = self.in_section(s);
        let split = groups.partition_point(|g| g.offset <= at);
        let entry = |k: usize| {
            let g = &groups[k];
            let off = g.offset + g.entries.binary_search(&key).ok()? as u64 * self.entry_size;
            reaches(off).then_some((first + k, off))
        };
        let (mut before, mut after) = ((0..split).rev(), split..groups.len());
        loop {
            let (b, a) = (before.next(), after.next());
            if b.is_none() && a.is_none() {
                return None;
            }
            if let Some(found) = b.and_then(entry).or_else(|| a.and_then(entry)) {
                return Some(found);
            }
        }
    }

    /// The offset in its output section `s` of the patch for the load or store at offset `at`
    /// of input section `r`.
    pub fn patch_for(&self, s: OutputSectionId, r: SectionRef, at: u64) -> Option<u64> {
        let area = self.patches.iter().find(|a| a.section == s)?;
        let k = area.sites.binary_search(&(r, at)).ok()?;
        Some(area.offset + k as u64 * PATCH_SIZE)
    }

    /// The bytes group `g` takes.
    pub fn group_size(&self, g: &Group) -> u64 {
        g.entries.len() as u64 * self.entry_size
    }
}

/// Inserts the groups (sorted by section and member) into offsets and sizes laid out without
/// them: each group goes after the member before it, on a `GROUP_ALIGN` boundary, and the
/// members after it move down by a multiple of their section's alignment, which keeps every
/// member's alignment and the bytes between them. Groups without entries take no room. A merged
/// or common area that would move is refused: their places are fixed before this step.
pub fn place(ctx: &Ctx, thunks: &mut Thunks, inputs: &mut InputPlaces, sizes: &mut Sizes) -> Result<()> {
    let offsets = &mut inputs.offsets;
    let entry_size = thunks.entry_size;
    let mut sections: Vec<OutputSectionId> =
        thunks.groups.iter().map(|g| g.section).chain(thunks.patches.iter().map(|a| a.section)).collect();
    sections.sort_unstable();
    sections.dedup();
    let mut k = 0;
    for s in sections {
        let os = &ctx.sections[s];
        let unit = os.align.max(1);
        let n = os.members.len() as u32;
        let mut delta = 0u64;
        // Where the bytes before the next group end, in the new offsets.
        let mut end = os.head.len() as u64;
        let mut next = 0u32;
        let shift = |r: SectionRef, delta: u64, offsets: &mut InputOffsets| -> Result<()> {
            if delta != 0 && ctx.objects[r].merge_index.is_some() {
                crate::bail!(
                    "{}: section {} holds merged input sections ({}), which range-extension thunks cannot move",
                    ctx.config.output.display(),
                    os.name,
                    ctx.objects[r.file].name
                );
            }
            offsets[r] += delta;
            Ok(())
        };
        while k < thunks.groups.len() && thunks.groups[k].section == s {
            let before = thunks.groups[k].before.min(n);
            for &r in &os.members[next as usize..before as usize] {
                shift(r, delta, offsets)?;
                end = end.max(offsets[r] + ctx.member_size(r.file, r.index));
            }
            next = before;
            let size = thunks.groups[k].entries.len() as u64 * entry_size;
            let at = if size == 0 { end } else { end.next_multiple_of(GROUP_ALIGN) };
            thunks.groups[k].offset = at;
            end = at + size;
            if let Some(&r) = os.members.get(before as usize) {
                let place = offsets[r] + delta;
                if place < end {
                    delta += (end - place).div_ceil(unit) * unit;
                }
            }
            k += 1;
        }
        for &r in &os.members[next as usize..] {
            shift(r, delta, offsets)?;
            end = end.max(offsets[r] + ctx.member_size(r.file, r.index));
        }
        crate::ensure!(
            delta == 0 || inputs.commons.areas.iter().all(|a| a.section != s),
            "{}: section {} holds common symbols, which range-extension thunks cannot move",
            ctx.config.output.display(),
            os.name
        );
        let mut size = (sizes[s] + delta).max(end);
        for area in thunks.patches.iter_mut().filter(|a| a.section == s) {
            area.offset = size.next_multiple_of(GROUP_ALIGN);
            size = area.offset + area.capacity;
        }
        sizes[s] = size;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FileId, SymbolId};

    #[test]
    fn a_branch_goes_to_the_nearest_entry_it_reaches() {
        let s = OutputSectionId::new(1);
        let other = OutputSectionId::new(2);
        let key = |n: usize| Key { target: Target::Global(SymbolId::new(n)), addend: 0 };
        let local = Key { target: Target::Local(FileId::new(1), 3), addend: 8 };
        let group = |section, offset, entries: Vec<Key>| Group { section, before: 0, offset, entries };
        let t = Thunks {
            groups: vec![
                group(s, 100, vec![key(1), key(2)]),
                group(s, 1000, vec![key(2), local]),
                group(s, 5000, vec![key(1)]),
                group(other, 0, vec![key(3)]),
            ],
            entry_size: 12,
            patches: Vec::new(),
        };
        let any = |_| true;
        assert_eq!(t.entry_near(s, key(1), 900, any), Some((0, 100)));
        assert_eq!(t.entry_near(s, key(1), 4000, any), Some((2, 5000)));
        // Entry 1 of the group at 100, and the one at 1000 is nearer to 1200.
        assert_eq!(t.entry_near(s, key(2), 50, any), Some((0, 112)));
        assert_eq!(t.entry_near(s, key(2), 1200, any), Some((1, 1000)));
        assert_eq!(t.entry_near(s, local, 0, any), Some((1, 1012)));
        // Only entries the branch reaches count; none in another section.
        assert_eq!(t.entry_near(s, key(1), 900, |off| off > 2000), Some((2, 5000)));
        assert_eq!(t.entry_near(s, key(1), 900, |_| false), None);
        assert_eq!(t.entry_near(s, key(3), 0, any), None);
        assert_eq!(t.entry_near(other, key(3), 0, any), Some((3, 0)));
        assert_eq!(t.in_section(other).0, 3);
    }
}
