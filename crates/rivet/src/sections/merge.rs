//! `SHF_MERGE` sections: strings (`.rodata.str1.1`, `.debug_str`, `.debug_line_str`, `.comment`)
//! and fixed-size constants (`.rodata.cst8`, `.rodata.cst16`) are cut into pieces, and a piece
//! whose bytes (and output section and entry size) another piece already has is not written again:
//! references to it go to the first copy, in command-line order, so the output is the same whatever
//! the thread count. `-O0` turns merging off, as in lld; `-O2` adds tail merging (`tail_merge`).
//!
//! Each input section keeps its place in its output section but holds only the pieces it owns (the
//! first copies), like `.eh_frame` holds only its live pieces; the pieces (`MergePieces`) are
//! placed once member offsets are known, and `MergePlaces::offset` turns an input offset into the
//! offset within the output section.
//!
//! Work is parallel: pieces are cut and hashed per section, deduplicated in 64 shards (by hash),
//! each shard visiting sections in output order, and the owned pieces laid out per section.
use crate::ctx::{EhFrames, Resolved};
use crate::ids::{IdVec, MergeId, OutputSectionId, SectionRef};
use crate::sections::merged::{MergePieces, MergedSection, Merges, Owner, Pieces};
use crate::sections::output::OutputSection;
use object::elf;
use rayon::prelude::*;

const SHARDS: usize = 64;
use crate::sections::merged::blocks_of;

/// A piece by (candidate, index among its pieces).
type PieceRef = (u32, u32);

/// Where piece `pi` of a section of `len` bytes whose pieces start at `starts` ends: pieces are
/// contiguous, so where the next starts, or at the section's end.
fn piece_end(starts: &[u32], pi: usize, len: u64) -> u32 {
    starts.get(pi + 1).copied().unwrap_or(len as u32)
}

/// One distinct piece in its shard: its hash (computed when it was cut, so the bytes are hashed
/// once), its bytes and its owner so far, the least (candidate, piece) holding it. Pieces are the
/// same when their bytes are and their candidates are of one class (output section, entry size,
/// and the alignment of the section they came from, as in lld: one merged section per name,
/// flags, entry size and alignment; a constant of a 16-aligned `.rodata.cst16`, which its code may
/// load with `movaps`, must not be sent to an equal copy in an 8-aligned one).
struct Distinct<'a> {
    hash: u64,
    bytes: &'a [u8],
    owner: PieceRef,
}

/// One shard of the deduplication table: the distinct pieces, and a table of their indexes by
/// hash. 32 bytes and 4 of table per distinct piece, where a map from (hash, bytes, class) keys to
/// indexes and a list of owners took 40 in the table and 8 (cxx-templates: 21 MB of tables at the
/// merge's peak, the table's growth included).
#[derive(Default)]
struct Shard<'a> {
    index: hashbrown::HashTable<u32>,
    distinct: Vec<Distinct<'a>>,
}

/// Where the pieces of a mergeable section start (each ends where the next starts, the last at the
/// section's end: `piece_end`), or None when it cannot be merged (a string without its terminator,
/// a size that is not a whole number of entries).
pub fn split(data: &[u8], entsize: usize, strings: bool) -> Option<Vec<u32>> {
    if entsize == 0 || !data.len().is_multiple_of(entsize) || data.len() > u32::MAX as usize {
        return None;
    }
    if !strings {
        return Some((0..data.len() / entsize).map(|i| (i * entsize) as u32).collect());
    }
    let mut start = 0;
    if entsize == 1 {
        // Byte strings (nearly all of them): memchr finds each terminator with SIMD. The list is
        // kept through the phase: grown by doubling, it is cut to its length (it held up to twice
        // its pieces).
        let mut out = Vec::new();
        for end in memchr::memchr_iter(0, data) {
            out.push(start as u32);
            start = end + 1;
        }
        out.shrink_to_fit();
        return (start == data.len()).then_some(out);
    }
    let mut out = Vec::new();
    while start < data.len() {
        let mut end = start;
        loop {
            let unit = data.get(end..end + entsize)?; // no terminator: not mergeable
            end += entsize;
            if unit.iter().all(|&b| b == 0) {
                break;
            }
        }
        out.push(start as u32);
        start = end;
    }
    Some(out)
}

/// A piece's shard: the hash's top bits. The shard's table indexes buckets with the low bits; when
/// the shard came from the low bits too (`hash % 64`), every key of a shard had the same six low
/// bits and reached only 1/64 of its table's buckets as first probes.
fn shard_of(hash: u64) -> usize {
    (hash >> (64 - SHARDS.trailing_zeros())) as usize
}

/// A piece's hash as its shard's table sees it: the bits that chose the shard, the same for every
/// piece in it, shifted out of the top (the table tells entries apart by their top seven bits
/// before it compares them) while the low bits, where the table starts its probe, stay as they
/// are.
fn in_shard(hash: u64) -> u64 {
    (hash << SHARDS.trailing_zeros()) | (hash & (SHARDS as u64 - 1))
}

/// Cuts, deduplicates and lays out every mergeable input section of the output `sections` (split
/// `.eh_frame`s, `eh`, are not); returns them. Sections with relocations of their own, or that
/// cannot be cut, are left as they are.
pub fn merge(
    ctx: &mut Resolved,
    sections: &IdVec<OutputSectionId, OutputSection>,
    eh: &EhFrames,
) -> (Merges, MergePieces) {
    if ctx.config.opt_level == 0 {
        return Default::default();
    }
    // Candidates in output order: (input section, output section, entsize).
    // (The output section is the same for every piece of a candidate: merging never crosses
    // output sections.)
    let mut cands: Vec<(SectionRef, OutputSectionId, u64)> = Vec::new();
    for (si, os) in sections.iter_enumerated() {
        for &r in &os.members {
            let sec = &ctx.objects[r];
            let entsize = ctx.objects[r.file].headers.entsize(r.index as usize);
            let mergeable = sec.flags & elf::SHF_MERGE as u64 != 0
                && sec.sh_type == elf::SHT_PROGBITS
                && entsize > 0
                && sec.relas.is_empty()
                && sec.live
                && sec.out.is_some()
                && !eh.contains_key(&r);
            if mergeable {
                cands.push((r, si, u64::from(entsize)));
            }
        }
    }
    let objects = &ctx.objects;
    // Each candidate's bytes, and its class: candidates of one class (output section, entry size,
    // alignment) share pieces.
    let data: Vec<&[u8]> = cands.iter().map(|&(r, _, _)| objects[r].data).collect();
    let class: Vec<u32> = {
        let mut classes: rustc_hash::FxHashMap<(OutputSectionId, u64, u64), u32> = Default::default();
        (cands.iter())
            .map(|&(r, out, entsize)| {
                let next = classes.len() as u32;
                *classes.entry((out, entsize, objects[r].align())).or_insert(next)
            })
            .collect()
    };
    // Cut, hash and deduplicate each section's pieces (None: leave the section alone), batches of
    // sections in parallel. A piece is looked up in its shard's table right after its batch (at
    // most 64 KiB, or one larger section) is hashed, while its bytes are still in the cache:
    // deduplicating in a later pass, shard by shard, re-read every
    // piece from memory (synth-1: 870k pieces, 864k of them duplicates; that pass took 80-100 ms
    // of a 110-140 ms merge phase, as measured for f19e2d5). Each distinct piece's owner is the
    // least (candidate, piece) that has it, i.e. the first copy in output order, whichever thread
    // gets there first.
    // Each piece's input offset, and where its deduplication slot is: its shard and its index in
    // the shard's `distinct` list. The hashes are kept only while their batch is deduplicated (a
    // piece's 16 bytes of offset, length and hash for the whole phase made synth-1's heap peak:
    // 870k pieces, 17 MB; these are 9 bytes a piece).
    type Cut = (Vec<u32>, Vec<u32>, Vec<u8>);
    let shards: Vec<std::sync::Mutex<Shard>> = (0..SHARDS).map(|_| Default::default()).collect();
    // Sections are taken in batches of about CHUNK_BYTES, and a batch takes each shard's lock
    // once for all its pieces: with one lock per shard and section, c-debug's 4550 sections of 64
    // pieces on average took a lock for every piece or two.
    const CHUNK_BYTES: usize = 64 << 10;
    let mut chunks: Vec<std::ops::Range<usize>> = Vec::new();
    let mut bytes = 0;
    for (c, d) in data.iter().enumerate() {
        if chunks.last().is_none_or(|r| bytes >= CHUNK_BYTES || r.len() >= SHARDS) {
            chunks.push(c..c);
            bytes = 0;
        }
        chunks.last_mut().expect("pushed above").end = c + 1;
        bytes += d.len();
    }
    let cut: Vec<Option<Cut>> = chunks
        .par_iter()
        .with_max_len(1)
        .flat_map_iter(|range| {
            // Each section's pieces as (input offset, hash of its bytes).
            let hashed: Vec<Option<(Vec<u32>, Vec<u64>)>> = cands[range.clone()]
                .iter()
                .zip(&data[range.clone()])
                .map(|(&(r, _, entsize), &data)| {
                    let strings = objects[r].flags & elf::SHF_STRINGS as u64 != 0;
                    let starts = split(data, entsize as usize, strings)?;
                    let hashes = (0..starts.len())
                        .map(|pi| {
                            crate::fx_hash(
                                &data[starts[pi] as usize..piece_end(&starts, pi, data.len() as u64) as usize],
                            )
                        })
                        .collect();
                    Some((starts, hashes))
                })
                .collect();
            // The batch's pieces grouped by shard: `by_shard[starts[k]..starts[k + 1]]` are
            // shard k's, as (section within the batch, piece).
            let mut starts = [0u32; SHARDS + 1];
            for (_, hashes) in hashed.iter().flatten() {
                for &h in hashes {
                    starts[shard_of(h) + 1] += 1;
                }
            }
            for k in 0..SHARDS {
                starts[k + 1] += starts[k];
            }
            let mut fill = starts;
            let mut by_shard = vec![(0u32, 0u32); starts[SHARDS] as usize];
            for (i, (_, hashes)) in hashed.iter().enumerate().filter_map(|(i, c)| Some((i, c.as_ref()?))) {
                for (pi, &h) in hashes.iter().enumerate() {
                    let k = shard_of(h);
                    by_shard[fill[k] as usize] = (i as u32, pi as u32);
                    fill[k] += 1;
                }
            }
            let mut slots: Vec<Vec<u32>> =
                hashed.iter().map(|h| h.as_ref().map_or(Vec::new(), |(_, hashes)| vec![0; hashes.len()])).collect();
            // Batches start at different shards so that the threads do not walk the locks in step.
            for k in (0..SHARDS).map(|k| (k + range.start) % SHARDS) {
                let mine = &by_shard[starts[k] as usize..starts[k + 1] as usize];
                if mine.is_empty() {
                    continue;
                }
                let mut guard = shards[k].lock().unwrap_or_else(|e| e.into_inner());
                let shard = &mut *guard;
                // A shard's entries come section by section.
                for run in mine.chunk_by(|a, b| a.0 == b.0) {
                    let i = run[0].0 as usize;
                    let c = range.start + i;
                    let (offs, hashes) = hashed[i].as_ref().expect("grouped pieces were cut");
                    let slot = &mut slots[i];
                    for &(_, pi) in run {
                        let pi = pi as usize;
                        let bytes = &data[c][offs[pi] as usize..piece_end(offs, pi, data[c].len() as u64) as usize];
                        let hash = hashes[pi];
                        let same = |&i: &u32| {
                            let d = &shard.distinct[i as usize];
                            d.hash == hash && d.bytes == bytes && class[d.owner.0 as usize] == class[c]
                        };
                        let me = (c as u32, pi as u32);
                        let idx = match shard.index.find(in_shard(hash), same) {
                            Some(&idx) => {
                                let d = &mut shard.distinct[idx as usize];
                                d.owner = d.owner.min(me);
                                idx
                            }
                            None => {
                                let idx = shard.distinct.len() as u32;
                                let distinct = &shard.distinct;
                                shard
                                    .index
                                    .insert_unique(in_shard(hash), idx, |&i| in_shard(distinct[i as usize].hash));
                                shard.distinct.push(Distinct { hash, bytes, owner: me });
                                idx
                            }
                        };
                        slot[pi] = idx;
                    }
                }
            }
            hashed.into_iter().zip(slots).map(|(h, slot)| {
                let (offs, hashes) = h?;
                Some((offs, slot, hashes.iter().map(|&h| shard_of(h) as u8).collect()))
            })
        })
        .collect();
    let shards: Vec<Shard> = shards.into_iter().map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner())).collect();
    // Candidates that could not be cut are dropped; the rest are renumbered.
    let mut renumber: Vec<Option<u32>> = vec![None; cands.len()];
    let keep: Vec<usize> = (0..cands.len()).filter(|&i| cut[i].is_some()).collect();
    for (new, &old) in keep.iter().enumerate() {
        renumber[old] = Some(new as u32);
    }
    let cands: Vec<(SectionRef, OutputSectionId, u64)> = keep.iter().map(|&i| cands[i]).collect();
    let data: Vec<&[u8]> = keep.iter().map(|&i| data[i]).collect();
    drop(class);
    if cands.is_empty() {
        return Default::default();
    }
    // Each piece's input offset, and its owner (candidate, piece): itself unless an earlier copy
    // exists. The cut pieces and the shards' tables go once these are known (pieces are
    // contiguous: a piece ends where the next starts, the last at its section's end).
    let (starts, owner_of): (Vec<Vec<u32>>, Vec<Vec<PieceRef>>) = cut
        .into_par_iter()
        .with_max_len(8)
        .flatten()
        .map(|(starts, slots, shard)| {
            let owners = (slots.iter().zip(&shard))
                .map(|(&slot, &k)| {
                    let (c, pi) = shards[k as usize].distinct[slot as usize].owner;
                    (renumber[c as usize].expect("an owner's section was cut"), pi)
                })
                .collect();
            (starts, owners)
        })
        .unzip();
    drop(shards);
    let end_of = |c: usize, pi: usize| piece_end(&starts[c], pi, data[c].len() as u64);
    let data_of = |c: usize, pi: usize| -> &[u8] { &data[c][starts[c][pi] as usize..end_of(c, pi) as usize] };
    let natural = |c: usize, start: u32| -> u64 {
        let align = objects[cands[c].0].align();
        if start == 0 {
            align
        } else {
            (1u64 << start.trailing_zeros()).min(align)
        }
    };
    // -O2: a string that ends another string is not written either (tail merging, as lld does at
    // -O2; it costs a sort of every distinct string).
    let tails = if ctx.config.opt_level >= 2 {
        let strings: Vec<bool> =
            cands.iter().map(|&(r, _, _)| objects[r].flags & elf::SHF_STRINGS as u64 != 0).collect();
        tail_merge(&starts, &owner_of, &strings, |c, pi| {
            let (_, out, entsize) = cands[c as usize];
            (out, entsize, data_of(c as usize, pi as usize), natural(c as usize, starts[c as usize][pi as usize]))
        })
    } else {
        Default::default()
    };
    // Lay out each section's owned pieces, each keeping the alignment its input offset had.
    let layouts: Vec<Laid> = starts
        .par_iter()
        .with_max_len(8)
        .enumerate()
        .map(|(c, starts)| {
            let mut laid =
                Laid { offs: Vec::new(), owned: vec![0; starts.len().div_ceil(8)], before: Vec::new(), size: 0 };
            for (pi, &start) in starts.iter().enumerate() {
                if owner_of[c][pi] != (c as u32, pi as u32) || tails.contains_key(&(c as u32, pi as u32)) {
                    continue;
                }
                let natural = natural(c, start);
                laid.size = laid.size.div_ceil(natural) * natural;
                laid.owned[pi / 8] |= 1 << (pi % 8);
                laid.offs.push(laid.size as u32);
                laid.size += (end_of(c, pi) - start) as u64;
            }
            laid.before = Laid::count_before(&laid.owned);
            laid
        })
        .collect();
    let built: Vec<(MergedSection, Pieces, u64)> = starts
        .into_par_iter()
        .zip(owner_of.into_par_iter())
        .with_max_len(8)
        .enumerate()
        .map(|(c, (starts, owner_of))| {
            let (r, out, _) = cands[c];
            let len = objects[r].size;
            // In place: each piece's (candidate, piece) becomes its Owner (8 bytes both).
            let owners: Vec<Owner> = owner_of
                .into_iter()
                .map(|(oc, op)| match tails.get(&(oc, op)) {
                    Some(&(hc, hp, delta)) => {
                        Owner { owner: MergeId::new(hc as usize), out_off: layouts[hc as usize].offset(hp) + delta }
                    }
                    None => Owner { owner: MergeId::new(oc as usize), out_off: layouts[oc as usize].offset(op) },
                })
                .collect();
            let me = MergeId::new(c);
            let owned: Vec<(u32, u32, u32)> = (starts.iter().enumerate())
                .filter(|&(pi, _)| owners[pi].owner == me)
                .map(|(pi, &start)| (start, piece_end(&starts, pi, len) - start, owners[pi].out_off))
                .collect();
            let size = layouts[c].size;
            let saved = len.saturating_sub(size);
            let blocks = blocks_of(&starts, len);
            (MergedSection { out, owned, size, len }, Pieces { starts, blocks, owners }, saved)
        })
        .collect();
    let mut merges = Merges::default();
    let mut pieces = MergePieces::default();
    for (c, (m, p, saved)) in built.into_iter().enumerate() {
        let id = merges.sections.push(cands[c].0);
        ctx.objects[cands[c].0].merge_index = Some(id);
        merges.merged.push(m);
        pieces.0.push(p);
        merges.saved += saved;
    }
    (merges, pieces)
}

/// Where a section's owned pieces go in its merged copy: only the pieces it keeps (neither another
/// section's copy nor the tail of a longer string) get an offset, in piece order, and a bitmap with
/// a count per byte finds a piece's among them (synth-1: 870k pieces, 6k of them kept; an offset
/// for every piece took 3.5 MB at the phase's peak). Counts per byte, not per 64-bit word: the
/// bits below a piece's are counted with a table, where a word's took a software population count
/// (the baseline x86-64 has no `popcnt`) that cost 3.5% more instructions on synth-1.
struct Laid {
    /// The kept pieces' offsets in the merged copy.
    offs: Vec<u32>,
    /// Bit `pi % 8` of byte `pi / 8` is set when piece `pi` is kept.
    owned: Vec<u8>,
    /// Per byte of `owned`, how many pieces the bytes before it keep.
    before: Vec<u32>,
    /// The merged copy's size.
    size: u64,
}

/// The number of set bits of each byte.
const ONES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = (i as u8).count_ones() as u8;
        i += 1;
    }
    t
};

impl Laid {
    /// Per byte of `owned`, how many pieces the bytes before it keep.
    fn count_before(owned: &[u8]) -> Vec<u32> {
        let mut count = 0;
        (owned.iter())
            .map(|&byte| {
                let before = count;
                count += u32::from(ONES[byte as usize]);
                before
            })
            .collect()
    }

    /// Kept piece `pi`'s offset in the merged copy.
    fn offset(&self, pi: u32) -> u32 {
        let (b, bit) = (pi as usize / 8, pi % 8);
        debug_assert!(self.owned[b] & (1 << bit) != 0, "piece {pi} is not kept");
        self.offs[(self.before[b] + u32::from(ONES[(self.owned[b] & ((1 << bit) - 1)) as usize])) as usize]
    }
}

/// A piece's (output section, entry size, bytes, required alignment).
type PieceInfo<'a> = (OutputSectionId, u64, &'a [u8], u64);

/// Tail merging: among the distinct strings of one output section and entry size, each one that
/// is the end of a longer one (terminator included) is found there instead: gives, for such a
/// piece (candidate, piece), its host piece and the offset in it. Sorting the strings by their
/// reversed bytes puts every string right before the strings it ends, so one pass finds them; a
/// string whose alignment its place in the host would break keeps its own copy.
fn tail_merge<'a>(
    starts: &[Vec<u32>],
    owner_of: &[Vec<PieceRef>],
    strings: &[bool],
    info: impl Fn(u32, u32) -> PieceInfo<'a> + Sync,
) -> std::collections::HashMap<(u32, u32), (u32, u32, u32)> {
    let mut groups: std::collections::HashMap<(OutputSectionId, u64), Vec<(u32, u32)>> = Default::default();
    for (c, starts) in starts.iter().enumerate() {
        if !strings[c] {
            continue;
        }
        for pi in 0..starts.len() as u32 {
            if owner_of[c][pi as usize] == (c as u32, pi) {
                let (out, entsize, _, _) = info(c as u32, pi);
                groups.entry((out, entsize)).or_default().push((c as u32, pi));
            }
        }
    }
    let mut groups: Vec<Vec<(u32, u32)>> = groups.into_values().collect();
    groups
        .par_iter_mut()
        .flat_map_iter(|g| {
            g.sort_unstable_by(|&a, &b| info(a.0, a.1).2.iter().rev().cmp(info(b.0, b.1).2.iter().rev()));
            let mut found = Vec::new();
            let mut host: Option<(u32, u32)> = None;
            for &(c, pi) in g.iter().rev() {
                let (_, _, bytes, align) = info(c, pi);
                if let Some((hc, hp)) = host {
                    let (_, _, hbytes, halign) = info(hc, hp);
                    // (A string that ends the host is not longer than it.)
                    let delta = hbytes.len().wrapping_sub(bytes.len()) as u64;
                    if hbytes.ends_with(bytes) && delta.is_multiple_of(align) && halign.is_multiple_of(align) {
                        found.push(((c, pi), (hc, hp, delta as u32)));
                        continue;
                    }
                }
                host = Some((c, pi));
            }
            found
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_constants_split() {
        // (input offset, length) of each piece.
        let pieces = |data: &[u8], entsize, strings| {
            let starts = split(data, entsize, strings)?;
            Some(
                (0..starts.len())
                    .map(|i| (starts[i], piece_end(&starts, i, data.len() as u64) - starts[i]))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(pieces(b"ab\0\0c\0", 1, true), Some(vec![(0, 3), (3, 1), (4, 2)]));
        assert_eq!(pieces(b"ab\0cd", 1, true), None, "the last string has no terminator");
        // Two-byte characters: the terminator is a whole zero unit on a unit boundary.
        assert_eq!(pieces(&[b'a', 0, 0, 0, b'b', 0, 0, 0], 2, true), Some(vec![(0, 4), (4, 4)]));
        assert_eq!(
            pieces(&[b'a', 0, 0, b'b', 0, 0], 2, true),
            Some(vec![(0, 6)]),
            "a zero byte inside a unit is not a terminator"
        );
        assert_eq!(pieces(&[1, 2, 3, 4, 5, 6, 7, 8], 4, false), Some(vec![(0, 4), (4, 4)]));
        assert_eq!(pieces(&[1, 2, 3], 4, false), None);
        assert_eq!(pieces(b"", 1, true), Some(vec![]));
    }

    #[test]
    fn kept_pieces_are_found_by_their_count() {
        // Pieces 0, 3, 7, 8, 9 and 17 of 20 are kept, at offsets 0, 10, ..., 50.
        let kept = [0u32, 3, 7, 8, 9, 17];
        let mut owned = vec![0u8; 20usize.div_ceil(8)];
        for &pi in &kept {
            owned[pi as usize / 8] |= 1 << (pi % 8);
        }
        let before = Laid::count_before(&owned);
        assert_eq!(before, vec![0, 3, 5]);
        let laid = Laid { offs: (0..kept.len() as u32).map(|i| i * 10).collect(), owned, before, size: 60 };
        for (i, &pi) in kept.iter().enumerate() {
            assert_eq!(laid.offset(pi), i as u32 * 10, "piece {pi}");
        }
        assert!(ONES.iter().enumerate().all(|(b, &n)| u32::from(n) == (b as u8).count_ones()));
    }

    #[test]
    fn tail_merging_finds_strings_at_the_end_of_others() {
        // Candidate 0: "xlong\0" (alignment 2), "long\0", "g\0", "other\0"; candidate 1 (same output section):
        // "ong\0", whose required alignment (2) its place in "xlong\0" (offset 2) keeps, and
        // "her\0" with alignment 4, which offset 2 of "other\0" would break.
        let data: [&[&[u8]]; 2] = [&[b"xlong\0", b"long\0", b"g\0", b"other\0"], &[b"ong\0", b"her\0"]];
        let aligns = [[2u64, 1, 1, 1], [2, 4, 0, 0]];
        let starts: Vec<Vec<u32>> = data.iter().map(|c| vec![0; c.len()]).collect();
        let owner_of: Vec<Vec<(u32, u32)>> =
            starts.iter().enumerate().map(|(c, ps)| (0..ps.len() as u32).map(|p| (c as u32, p)).collect()).collect();
        let info = |c: u32, p: u32| {
            (OutputSectionId::new(7), 1u64, data[c as usize][p as usize], aligns[c as usize][p as usize])
        };
        let tails = tail_merge(&starts, &owner_of, &[true, true], info);
        let mut found: Vec<_> = tails.into_iter().collect();
        found.sort();
        assert_eq!(found, vec![((0, 1), (0, 0, 1)), ((0, 2), (0, 0, 4)), ((1, 0), (0, 0, 2))]);
        // Not strings: nothing is tail-merged.
        assert!(tail_merge(&starts, &owner_of, &[false, false], info).is_empty());
    }
}
