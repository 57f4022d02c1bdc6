//! Range-extension thunks, decided. A target whose direct branches reach only so far
//! (`Arch::BRANCH_REACH`: AArch64's `B`/`BL`, ±128 MiB) gets thunks where a layout without
//! them has a branch that does not reach its destination. mold's method, in three steps:
//! - `plan`: each executable output section is walked in batches of members; after each batch
//!   (as far on as the batch's branches still reach) goes a group with an entry for every
//!   destination a branch of the batch may not reach, pessimistically: every destination outside
//!   the section or in a PLT, and those inside it that are too far with the groups so far. A
//!   destination already in a group the batch reaches gets no new entry. This cannot fail: each
//!   branch reaches a group, and a group reaches any address within ±4 GiB.
//! - `prune`, once that layout has addresses: only the entries some branch needs stay; groups
//!   without entries take no room. Distances inside a section only shrink.
//! - `all_reach`, on the pruned layout: every branch reaches its destination or an entry for it.
//!   Where one does not (a section that moved away from a fixed address), the pessimistic plan
//!   is kept.
use crate::arch::Arch;
use crate::diag::Result;
use crate::ids::{OutputSectionId, SectionRef, Target};
use crate::input::object::Rela;
use crate::layout::align_up;
use crate::linked::Linked;
use crate::resolve::Def;
use crate::sections::output::Content;
use crate::sections::thunks::{Group, Key, Thunks, GROUP_ALIGN};
use object::elf;
use object::LittleEndian as LE;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// The executable output sections of input sections (those with members).
pub fn code_sections(ctx: &Linked) -> Vec<OutputSectionId> {
    ctx.sections
        .iter_enumerated()
        .filter(|(_, os)| {
            os.content == Content::Inputs
                && os.is_alloc()
                && !os.is_nobits()
                && os.flags & elf::SHF_EXECINSTR as u64 != 0
                && !os.members.is_empty()
        })
        .map(|(id, _)| id)
        .collect()
}

/// The branches of member `r` that may go through a thunk.
fn branches<'c, A: Arch>(ctx: &'c Linked, r: SectionRef) -> impl Iterator<Item = &'c Rela> + 'c {
    ctx.objects[r].relas.iter().filter(|rel| A::is_thunked_branch(rel.r_type(LE, false)))
}

/// A branch's destination key, None where it goes nowhere (an undefined weak function: the
/// branch goes to the next instruction).
fn key_of(ctx: &Linked, r: SectionRef, rel: &Rela) -> Option<Key> {
    let target = ctx.target(r.file, rel.r_sym(LE, false));
    if ctx.is_undefined(target) && !ctx.is_preemptible(target) {
        return None;
    }
    Some(Key { target, addend: rel.r_addend.get(LE) })
}

/// The address a branch to `key` goes to directly.
fn destination(ctx: &Linked, key: Key) -> i128 {
    ctx.value(key.target) as i128 + key.addend as i128
}

/// Whether a direct branch reaches `v` bytes away.
pub fn reaches<A: Arch>(v: i128) -> bool {
    let reach = A::BRANCH_REACH as i128;
    -reach <= v && v < reach
}

/// Calls `f` with every branch of every member of the code sections whose destination is not
/// reached directly: (its section, its offset there, its key). Members in parallel.
fn far_branches<A: Arch>(ctx: &Linked, f: impl Fn(OutputSectionId, u64, Key) + Sync) {
    let sections = code_sections(ctx);
    sections.par_iter().for_each(|&s| {
        let addr = ctx.layout.addr(s);
        ctx.sections[s].members.par_iter().with_min_len(64).for_each(|&r| {
            let base = ctx.layout.inputs.offsets[r];
            for rel in branches::<A>(ctx, r) {
                let Some(key) = key_of(ctx, r, rel) else { continue };
                let at = base + rel.r_offset.get(LE);
                if !reaches::<A>(destination(ctx, key) - (addr + at) as i128) {
                    f(s, at, key);
                }
            }
        });
    });
}

/// Whether a branch of the laid-out output does not reach its destination directly.
pub fn needed<A: Arch>(ctx: &Linked) -> bool {
    if A::BRANCH_REACH == 0 {
        return false;
    }
    let found = std::sync::atomic::AtomicBool::new(false);
    far_branches::<A>(ctx, |_, _, _| found.store(true, std::sync::atomic::Ordering::Relaxed));
    found.into_inner()
}

/// The pessimistic plan (see the module's comment), from a layout without thunks.
pub fn plan<A: Arch>(ctx: &Linked) -> Result<Thunks> {
    let per_section: Vec<Result<Vec<Group>>> =
        code_sections(ctx).par_iter().map(|&s| plan_section::<A>(ctx, s)).collect();
    let mut groups = Vec::new();
    for g in per_section {
        groups.extend(g?);
    }
    Ok(Thunks { groups, entry_size: A::THUNK_ENTRY_SIZE, patches: Vec::new() })
}

fn plan_section<A: Arch>(ctx: &Linked, s: OutputSectionId) -> Result<Vec<Group>> {
    let reach = A::BRANCH_REACH;
    // Branches of a batch of this many bytes go to the group after it; a group is at most
    // half of that (mold's sizes for AArch64).
    let batch = reach / 4;
    let max_group = batch / 2;
    let os = &ctx.sections[s];
    let m = &os.members;
    let n = m.len();
    let unit = os.align.max(1);
    let old = |k: usize| ctx.layout.inputs.offsets[m[k]];
    let size = |k: usize| ctx.member_size(m[k].file, m[k].index);
    let index: FxHashMap<SectionRef, usize> = m.iter().enumerate().map(|(k, &r)| (r, k)).collect();
    // Members' offsets with the groups so far, for those before `d`.
    let mut new = vec![0u64; n];
    let mut shift = 0u64;
    let (mut a, mut b, mut d, mut t) = (0usize, 0usize, 0usize, 0usize);
    let mut groups: Vec<Group> = Vec::new();
    // The destinations with an entry in a group the current batch reaches: (key, group).
    let mut marked: FxHashMap<Key, usize> = FxHashMap::default();
    while b < n {
        // As far on as a group can go that the batch's first member still reaches.
        while d < n && (b == d || align_up(old(d) + shift + size(d), GROUP_ALIGN) + max_group <= new[b] + reach) {
            new[d] = old(d) + shift;
            d += 1;
        }
        // The batch: from b, members ending within `batch` bytes (at least one).
        let mut c = b + 1;
        while c < d && new[c] + size(c) < new[b] + batch {
            c += 1;
        }
        let c_off = if c == d { new[d - 1] + size(d - 1) } else { new[c] };
        // The first member the batch's end still reaches; groups before it are out of reach.
        while a < b && new[a] + reach < c_off {
            a += 1;
        }
        while t < groups.len() && groups[t].offset < new[a] {
            for key in &groups[t].entries {
                if marked.get(key) == Some(&t) {
                    marked.remove(key);
                }
            }
            t += 1;
        }
        let at = align_up(new[d - 1] + size(d - 1), GROUP_ALIGN);
        let mut entries = Vec::new();
        for k in b..c {
            for rel in branches::<A>(ctx, m[k]) {
                let Some(key) = key_of(ctx, m[k], rel) else { continue };
                if marked.contains_key(&key) {
                    continue;
                }
                let from = new[k] + rel.r_offset.get(LE);
                if may_not_reach::<A>(ctx, s, &index, &new, d, from, key) {
                    marked.insert(key, groups.len());
                    entries.push(key);
                }
            }
        }
        entries.sort_unstable();
        let bytes = entries.len() as u64 * A::THUNK_ENTRY_SIZE;
        crate::ensure!(
            bytes <= max_group,
            "{}: section {}: {} range-extension thunks needed in one place, more than fit there",
            ctx.config.output.display(),
            os.name,
            entries.len()
        );
        if d < n && old(d) + shift < at + bytes {
            shift += (at + bytes - (old(d) + shift)).div_ceil(unit) * unit;
        }
        if !entries.is_empty() {
            groups.push(Group { section: s, before: d as u32, offset: at, entries });
        }
        b = c;
    }
    Ok(groups)
}

/// Whether a branch at offset `from` of section `s` may not reach `key` directly, judged before
/// the section's members from `d` on have their places: yes for a destination in a PLT, in
/// another section or not placed yet; else by the distance.
fn may_not_reach<A: Arch>(
    ctx: &Linked,
    s: OutputSectionId,
    index: &FxHashMap<SectionRef, usize>,
    new: &[u64],
    d: usize,
    from: u64,
    key: Key,
) -> bool {
    if ctx.plans.got.plt_index(key.target).is_some() {
        return true;
    }
    let (file, i) = match key.target {
        Target::Local(file, i) => (file, i),
        Target::Global(id) => match ctx.symbols[id].def {
            Def::Defined { file, sym } => (file, sym),
            _ => return true,
        },
    };
    let obj = &ctx.objects[file];
    let sym = &obj.syms[i as usize];
    let Some(shndx) = obj.sym_shndx(i as usize) else { return true };
    let mut r = SectionRef::new(file, shndx);
    if let Some(kept) = ctx.objects.folded_into(r) {
        r = kept;
    }
    if ctx.objects[r].out != Some(s) {
        return true;
    }
    match index.get(&r) {
        Some(&j) if j < d => {
            let to = new[j] as i128 + sym.st_value.get(LE) as i128 + key.addend as i128;
            !reaches::<A>(to - from as i128)
        }
        _ => true,
    }
}

/// The plan with only the entries the branches of `ctx` (laid out with `thunks`) go through:
/// for each branch that does not reach its destination, the nearest entry it reaches.
pub fn prune<A: Arch>(ctx: &Linked, thunks: &Thunks) -> Thunks {
    let used = std::sync::Mutex::new(rustc_hash::FxHashSet::default());
    far_branches::<A>(ctx, |s, at, key| {
        if let Some((g, _)) = entry_in::<A>(ctx, thunks, s, at, key) {
            used.lock().unwrap().insert((g, key));
        }
    });
    let used = used.into_inner().unwrap();
    let mut pruned = thunks.clone();
    for (g, group) in pruned.groups.iter_mut().enumerate() {
        group.entries.retain(|&k| used.contains(&(g, k)));
    }
    pruned.groups.retain(|g| !g.entries.is_empty());
    pruned
}

/// Whether every branch of `ctx` reaches its destination directly or through an entry for it.
pub fn all_reach<A: Arch>(ctx: &Linked) -> bool {
    let lost = std::sync::atomic::AtomicBool::new(false);
    far_branches::<A>(ctx, |s, at, key| {
        if entry_for::<A>(ctx, s, at, key).is_none() {
            lost.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    });
    !lost.into_inner()
}

/// The address of the thunk entry for `key` that a branch at offset `at` of section `s` reaches.
pub fn entry_for<A: Arch>(ctx: &Linked, s: OutputSectionId, at: u64, key: Key) -> Option<u64> {
    entry_in::<A>(ctx, &ctx.layout.thunks, s, at, key).map(|(_, off)| ctx.layout.addr(s) + off)
}

/// The group and offset of the entry of `thunks` for `key` nearest to a branch at offset `at`
/// of section `s` that it reaches.
fn entry_in<A: Arch>(ctx: &Linked, thunks: &Thunks, s: OutputSectionId, at: u64, key: Key) -> Option<(usize, u64)> {
    let addr = ctx.layout.addr(s);
    let from = (addr + at) as i128;
    thunks.entry_near(s, key, at, |off| reaches::<A>((addr + off) as i128 - from))
}

/// Writes group `g`'s entries into `buf`, its bytes.
pub fn write_group<A: Arch>(ctx: &Linked, g: &Group, buf: &mut [u8]) -> Result<()> {
    let size = A::THUNK_ENTRY_SIZE as usize;
    let base = ctx.layout.addr(g.section) + g.offset;
    for (k, &key) in g.entries.iter().enumerate() {
        let at = base + (k * size) as u64;
        let to = destination(ctx, key) as u64;
        A::write_thunk(at, to, &mut buf[k * size..(k + 1) * size]).map_err(|why| {
            crate::diag::Error::new(format!(
                "{}: section {}: the range-extension thunk at {at:#x} for {} cannot reach {to:#x}: {why}",
                ctx.config.output.display(),
                ctx.sections[g.section].name,
                ctx.name_of(key.target)
            ))
        })?;
    }
    Ok(())
}
