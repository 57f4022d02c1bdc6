//! Patching the output in place after an edit that changed only code and data bytes.
//!
//! An object (or archive member) the last link copied sections of verbatim, edited so that its
//! section headers, symbols, relocations and the bytes around each relocation are what they were,
//! gives the same resolution, the same layout and the same relocated values: a full link of the
//! edited inputs differs from the output on disk only in those sections' other bytes. The patch
//! writes those of them that differ from the output's at the file offsets the state recorded,
//! and the build-id again (from the digests of the 1 MiB chunks the state keeps, only the chunks
//! written hashed again). Only the objects of a file whose bytes changed are patched.
//!
//! **The shape** of an object is what must not change for that to hold: the hash of its bytes with
//! the *patchable* bytes left out (and where they lie put in). A section's bytes are patchable when
//! the link copies them verbatim (`SHT_PROGBITS`, not merged, compressed, `.eh_frame`, a note or
//! another section the link reads or rearranges) and no relocation of the section may read or
//! write them (`window`: the field, and for the relocations a relaxation rewrites, the
//! instructions around it). Equal shapes mean that every other byte is equal, the headers and
//! relocations included, and therefore that the patchable ranges are the same too.
//!
//! What decides that no output may be patched (`barrier`) is what reads section bytes to lay out
//! or relocate: identical code folding, `-z rewrite-endbr`, branch to branch jumps,
//! `--zero-to-bss`, `--gdb-index`, compressed debug sections, a linker script's layout. The
//! Cortex-A53 erratum scan (`--fix-cortex-a53-843419`, the default of Debian's AArch64 gcc) reads
//! code only at the last two words of each 4 KiB page and the three after them: a patch that
//! changes none of those bytes leaves its findings as they were (`erratum_reach`).
use super::FileRecord;
use crate::args::{Config, DebugCompression, Icf};
use crate::ids::{FileId, SectionRef};
use crate::linked::Linked;
use crate::sections::output::Content;
use object::elf;
use object::read::elf::{FileHeader, SectionHeader};
use object::LittleEndian as LE;
use rayon::prelude::*;
use std::os::unix::fs::FileExt;

/// The sections of one file the next link may patch: per object loaded from it (an archive has
/// several), what it was and where its patchable sections went; and the hash of the file's other
/// bytes (an archive's headers and symbol table, the members not loaded), with each object's
/// place and length hashed where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePatch {
    pub rest: u128,
    pub members: Vec<Member>,
}

/// An object of a file: where it starts and how long it is (its headers' extent), the XXH3-128 of
/// its bytes, its shape, and where each of its patchable sections is in the output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub base: u64,
    pub len: u64,
    pub hash: u128,
    pub shape: u128,
    pub sections: Sections,
}

/// Where an object's sections that may be patchable are in the output: per section, its index,
/// its output file offset (`u64::MAX`: there otherwise than verbatim) and its address, by
/// ascending index; sections the output does not hold are not listed. Packed as the state keeps
/// them (20 bytes each, little-endian), so that a state is read and written without a step per
/// section (a C++ object of templates has thousands).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Sections(Vec<u8>);

impl Sections {
    pub const RECORD: usize = 20;

    /// Packed records, as `bytes` gives them; None when they are not whole records.
    pub fn from_bytes(bytes: Vec<u8>) -> Option<Sections> {
        bytes.len().is_multiple_of(Self::RECORD).then_some(Sections(bytes))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len() / Self::RECORD
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds section `index` (above every index so far) at output offset `at`, address `addr`.
    pub fn push(&mut self, index: u32, at: u64, addr: u64) {
        self.0.extend_from_slice(&index.to_le_bytes());
        self.0.extend_from_slice(&at.to_le_bytes());
        self.0.extend_from_slice(&addr.to_le_bytes());
    }

    fn records(&self) -> &[[u8; Self::RECORD]] {
        self.0.as_chunks().0
    }

    /// A record's fields.
    fn fields(r: &[u8; Self::RECORD]) -> (u32, u64, u64) {
        let u64_at = |k: usize| u64::from_le_bytes(r[k..k + 8].try_into().unwrap());
        (u32::from_le_bytes(r[..4].try_into().unwrap()), u64_at(4), u64_at(12))
    }

    /// The `i`-th record.
    pub fn get(&self, i: usize) -> (u32, u64, u64) {
        Self::fields(&self.records()[i])
    }

    /// Section `index`'s output offset and address, if it is listed.
    pub fn find(&self, index: u32) -> Option<(u64, u64)> {
        let records = self.records();
        let k = records.binary_search_by_key(&index, |r| Self::fields(r).0).ok()?;
        let (_, at, addr) = Self::fields(&records[k]);
        Some((at, addr))
    }
}

/// What patching needs of the output: why it may not be patched (empty: it may), and where its
/// build-id is (the descriptor's file offset and length) with the digests of its chunks, computed
/// with the descriptor zeroed (`synthetic::chunks::build_id`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OutputPatch {
    pub barrier: Vec<u8>,
    pub build_id: Option<(u64, u64)>,
    pub digests: Vec<[u8; 32]>,
}

/// Why no output of this link may be patched, if that is so: a stage reads section bytes to lay
/// out or relocate, so a change in them may change more than themselves.
pub fn barrier(config: &Config, scripted: bool, build_id_home: bool) -> Option<&'static str> {
    let reasons = [
        (config.icf != Icf::None, "--icf folds sections by their bytes"),
        (config.rewrite_endbr, "-z rewrite-endbr rewrites code by its bytes"),
        (config.branch_to_branch(), "branch-to-branch follows jumps by their bytes"),
        (config.zero_to_bss, "--zero-to-bss lays out data by its bytes"),
        (config.gdb_index, "--gdb-index is built from the debug sections' bytes"),
        (config.compress_debug_sections != DebugCompression::None, "--compress-debug-sections"),
        (config.oformat_binary, "--oformat=binary"),
        (scripted || build_id_home, "a linker script lays the output out"),
    ];
    reasons.iter().find(|(on, _)| *on).map(|(_, why)| *why)
}

/// A section whose bytes may be patched: its index, offset in its object and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Patchable {
    index: u32,
    offset: u64,
    size: u64,
    exec: bool,
    /// Its windows came out of order while they were read (`parse` sorts them then).
    unsorted: bool,
}

/// Names of `SHT_PROGBITS` sections the link reads or rearranges (or, `.debug_info`, whose
/// units' format decides the debug sections' order).
const READ_BY_THE_LINK: &[&[u8]] =
    &[b".eh_frame", b".ctors", b".dtors", b".note", b".gnu.warning", b".gnu.lto", b".llvm", b".debug_info"];

/// A patchable section and its windows.
type Found = (Patchable, Vec<(u64, u64)>);

/// The object at `base` of `data`: its patchable sections (ascending index) and, per section, its
/// windows (ranges of it no patch may write, sorted and disjoint), and its extent (the end of its
/// last header or section). With `windows` false, the windows are not read (empty).
fn parse(data: &[u8], base: u64, windows: bool) -> Result<(Vec<Found>, u64), String> {
    let member = usize::try_from(base).ok().and_then(|b| data.get(b..)).ok_or("an object past the file's end")?;
    let h = elf::FileHeader64::<LE>::parse(member).map_err(|e| e.to_string())?;
    if h.e_type(LE) != elf::ET_REL {
        return Err("not a relocatable object".into());
    }
    let machine = h.e_machine(LE);
    if !matches!(machine, elf::EM_X86_64 | elf::EM_AARCH64) {
        return Err(format!("machine {machine}"));
    }
    let table = h.sections(LE, member).map_err(|e| e.to_string())?;
    let shdrs = table.iter().as_slice();
    // Every range of the object with bytes, (start, end, patchable), for the overlap check.
    let shoff = h.e_shoff(LE);
    // Assemblers put the relocation sections (and the section headers) after the others, each
    // kind in index order: two lists, each sorted as it comes, then merged (sorting the whole
    // was most of the time the record spent here).
    let mut ranges = vec![(0, std::mem::size_of::<elf::FileHeader64<LE>>() as u64, false)];
    let mut tail = Vec::new();
    let mut found = Vec::new();
    for (i, sh) in shdrs.iter().enumerate() {
        let (offset, size, ty) = (sh.sh_offset(LE), sh.sh_size(LE), sh.sh_type(LE));
        if ty == elf::SHT_NOBITS || size == 0 {
            continue;
        }
        let end = offset.checked_add(size).filter(|&e| e <= member.len() as u64).ok_or("a section past the end")?;
        let flags = sh.sh_flags(LE);
        let patchable = ty == elf::SHT_PROGBITS && flags & (elf::SHF_MERGE | elf::SHF_COMPRESSED) as u64 == 0 && {
            let name = table.section_name(LE, sh).map_err(|e| e.to_string())?;
            (flags & elf::SHF_ALLOC as u64 != 0 || name.starts_with(b".debug_"))
                && !READ_BY_THE_LINK.iter().any(|p| name.starts_with(p))
        };
        match ty {
            elf::SHT_RELA | elf::SHT_REL => tail.push((offset, end, false)),
            _ => ranges.push((offset, end, patchable)),
        }
        if patchable {
            let exec = flags & elf::SHF_EXECINSTR as u64 != 0;
            found.push((Patchable { index: i as u32, offset, size, exec, unsorted: false }, Vec::new()));
        }
    }
    tail.push((shoff, shoff + std::mem::size_of_val(shdrs) as u64, false));
    let ranges = merge_sorted(ranges, tail);
    let extent = ranges.iter().map(|r| r.1).max().unwrap_or(0);
    let (mut max_end, mut max_patchable_end) = (0, 0);
    for &(start, end, patchable) in &ranges {
        if (patchable && start < max_end) || start < max_patchable_end {
            return Err("its sections overlap".into());
        }
        max_end = max_end.max(end);
        if patchable {
            max_patchable_end = max_patchable_end.max(end);
        }
    }
    if windows {
        for sh in shdrs {
            let ty = sh.sh_type(LE);
            if ty != elf::SHT_RELA && ty != elf::SHT_REL {
                continue;
            }
            let target = sh.sh_info(LE);
            let Ok(k) = found.binary_search_by_key(&target, |(p, _)| p.index) else { continue };
            if ty == elf::SHT_REL {
                return Err("SHT_REL relocations".into());
            }
            let relas: &[elf::Rela64<LE>] = sh.data_as_array(LE, member).map_err(|e| e.to_string())?;
            let (p, w) = &mut found[k];
            w.reserve(relas.len());
            for r in relas {
                let (before, after) = window(machine, r.r_type(LE, false));
                let at = r.r_offset.get(LE);
                if at >= p.size {
                    return Err("a relocation past its section's end".into());
                }
                if !push_window(w, at.saturating_sub(before), (at + after).min(p.size)) {
                    p.unsorted = true;
                }
            }
        }
        for (p, w) in &mut found {
            if std::mem::take(&mut p.unsorted) {
                merge_windows(w);
            }
        }
    }
    Ok((found, extent))
}

/// `a` and `b` sorted, merged into one sorted list.
fn merge_sorted<T: Ord + Copy>(mut a: Vec<T>, mut b: Vec<T>) -> Vec<T> {
    for v in [&mut a, &mut b] {
        if !v.is_sorted() {
            v.sort_unstable();
        }
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if b[j] < a[i] {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Adds window `s..e` to `w` (sorted and disjoint so far), merged with the last one where they
/// meet: compilers sort a section's relocations by offset, so a window starts at or after the last
/// one's start. False when it does not (then it is pushed as it is, and `merge_windows` must run).
fn push_window(w: &mut Vec<(u64, u64)>, s: u64, e: u64) -> bool {
    match w.last_mut() {
        Some(last) if s >= last.0 && s <= last.1 => last.1 = last.1.max(e),
        Some(last) if s < last.0 => {
            w.push((s, e));
            return false;
        }
        _ => w.push((s, e)),
    }
    true
}

/// `w` sorted, and the windows that overlap or meet merged.
fn merge_windows(w: &mut Vec<(u64, u64)>) {
    w.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(w.len());
    for &(s, e) in w.iter() {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    *w = merged;
}

/// The bytes around a relocation at its offset that applying it may read or write: (before, after).
/// A plain relocation writes its field. x86-64 rewrites the instructions of the GOT and TLS
/// accesses it relaxes (the longest, the large code model's TLS call, 22 bytes from 3 before the
/// field). AArch64 rewrites the instruction of a relocation (and reads the next one's, which has
/// a relocation of its own, for an ADRP's pair); its TLS sequences take the instructions around
/// them too. Unknown types take the widest.
fn window(machine: u16, r_type: u32) -> (u64, u64) {
    if machine == elf::EM_AARCH64 {
        return match r_type {
            elf::R_AARCH64_ABS64 | elf::R_AARCH64_PREL64 => (0, 8),
            // TLS: R_AARCH64_TLSGD_ADR_PREL21 up to R_AARCH64_TLSDESC_CALL.
            512..=573 => (4, 12),
            _ => (0, 4),
        };
    }
    match r_type {
        elf::R_X86_64_64
        | elf::R_X86_64_PC64
        | elf::R_X86_64_GOTOFF64
        | elf::R_X86_64_SIZE64
        | elf::R_X86_64_DTPMOD64
        | elf::R_X86_64_DTPOFF64
        | elf::R_X86_64_TPOFF64 => (0, 8),
        elf::R_X86_64_PC32
        | elf::R_X86_64_PLT32
        | elf::R_X86_64_32
        | elf::R_X86_64_32S
        | elf::R_X86_64_GOTPC32
        | elf::R_X86_64_SIZE32
        | elf::R_X86_64_DTPOFF32
        | elf::R_X86_64_TPOFF32 => (0, 4),
        elf::R_X86_64_16 | elf::R_X86_64_PC16 => (0, 2),
        elf::R_X86_64_8 | elf::R_X86_64_PC8 => (0, 1),
        _ => (4, 24),
    }
}

/// The ranges of `data` (absolute) a patch writes: each patchable section's bytes outside its
/// windows.
fn patch_ranges(base: u64, found: &[Found]) -> impl Iterator<Item = (u32, u64, u64)> + '_ {
    found.iter().flat_map(move |(p, w)| {
        let mut at = 0;
        w.iter().copied().chain([(p.size, p.size)]).filter_map(move |(s, e)| {
            let range = (s > at).then_some((p.index, base + p.offset + at, base + p.offset + s));
            at = at.max(e);
            range
        })
    })
}

/// The shape of the object at `base` of `data`, `len` bytes long (see the module's comment):
/// XXH3-128 of its bytes outside the patchable ranges of `found`, each range's place and length
/// hashed where it is.
fn shape(data: &[u8], base: u64, len: u64, found: &[Found]) -> u128 {
    // The bytes gathered in one buffer (a thread's, reused) and hashed at once: the streaming
    // hasher fed the pieces between a code section's relocations (a few bytes each) cost twice
    // as many instructions.
    thread_local!(static GATHERED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) });
    GATHERED.with_borrow_mut(|buf| {
        buf.clear();
        buf.reserve(len as usize);
        let mut at = base;
        for (_, s, e) in patch_ranges(base, found) {
            buf.extend_from_slice(&data[at as usize..s as usize]);
            buf.extend_from_slice(&(s - base).to_le_bytes());
            buf.extend_from_slice(&(e - s).to_le_bytes());
            at = e;
        }
        buf.extend_from_slice(&data[at as usize..(base + len) as usize]);
        let h = xxhash_rust::xxh3::xxh3_128(buf);
        // A big object's buffer is not kept for the thread's next one.
        if buf.capacity() > 64 << 20 {
            *buf = Vec::new();
        }
        h
    })
}

/// XXH3-128 of `data` outside the objects at `spans` ((base, len), sorted, without repeats), each
/// object's place and length hashed where it is; an error when they overlap or run past the end.
fn rest(data: &[u8], spans: &[(u64, u64)]) -> Result<u128, String> {
    // The gaps between the objects (an archive's members not loaded are most of it), hashed in
    // parallel, then their hashes with the objects' places.
    let mut gaps = Vec::with_capacity(spans.len() + 1);
    let mut at = 0;
    for &(base, len) in spans {
        let end = base.checked_add(len).filter(|&e| e <= data.len() as u64).ok_or("an object past the file's end")?;
        if base < at {
            return Err("objects of the file overlap".into());
        }
        gaps.push(at as usize..base as usize);
        at = end;
    }
    gaps.push(at as usize..data.len());
    let hashes: Vec<u128> = gaps.into_par_iter().map(|g| xxhash_rust::xxh3::xxh3_128(&data[g])).collect();
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for (gap, &(base, len)) in hashes.iter().zip(spans) {
        h.update(&gap.to_le_bytes());
        h.update(&base.to_le_bytes());
        h.update(&len.to_le_bytes());
    }
    h.update(&hashes[spans.len()].to_le_bytes());
    Ok(h.digest128())
}

/// The hash a file's record keeps of a file objects were loaded from: one of its other bytes'
/// hash and its objects' (so that a changed archive is compared, and its changed members found,
/// in one pass over its members, in parallel).
pub fn combine(rest: u128, members: &[u128]) -> u128 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&rest.to_le_bytes());
    members.iter().for_each(|m| h.update(&m.to_le_bytes()));
    h.digest128()
}

/// `combine` of what the state recorded.
pub fn file_hash(p: &FilePatch) -> u128 {
    combine(p.rest, &p.members.iter().map(|m| m.hash).collect::<Vec<_>>())
}

/// A file's bytes as its record hashes them.
#[derive(Clone)]
pub struct Hashes {
    /// The hash the record keeps (`FileRecord::hash`).
    pub whole: u128,
    /// The hash of its bytes outside its objects, or why the objects the record names no longer
    /// fit in it.
    rest: Result<u128, String>,
    /// Its objects' hashes, in the record's order (empty when they no longer fit).
    members: Vec<u128>,
}

/// `data`'s hashes for a record with patch data `p`: for a file objects were loaded from,
/// `whole` is `file_hash`'s (from its objects' hashes, found in one parallel pass); otherwise, or
/// when the objects no longer fit in it (then it changed), the XXH3-128 of the bytes.
pub fn hashes(data: &[u8], p: Option<&FilePatch>) -> Hashes {
    let flat = |rest| Hashes { whole: xxhash_rust::xxh3::xxh3_128(data), rest, members: Vec::new() };
    let Some(p) = p else { return flat(Err("no objects were loaded from it".into())) };
    match rest(data, &object_spans(&p.members)) {
        Ok(rest) => {
            let members: Vec<u128> = p
                .members
                .par_iter()
                .map(|m| xxhash_rust::xxh3::xxh3_128(&data[m.base as usize..(m.base + m.len) as usize]))
                .collect();
            Hashes { whole: combine(rest, &members), rest: Ok(rest), members }
        }
        Err(why) => flat(Err(why)),
    }
}

/// The objects of a file, (base, len), sorted, without repeats (an object named twice).
fn object_spans(members: &[Member]) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = members.iter().map(|m| (m.base, m.len)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// For each file the link read (`read`), what the next link needs to patch the output after an
/// edit of it, or None where it may not: a file no object was loaded from (a shared library, a
/// script, an archive none of whose members was), or one with an object whose patchable sections
/// did not reach the output verbatim. `known`: the last state's files, whose shapes are taken
/// over where a file's path, size and mtime are the same.
pub fn placements(
    linked: &Linked,
    read: &[std::sync::Arc<rivet_io::InputFile>],
    known: &[FileRecord],
) -> Vec<Option<FilePatch>> {
    // The files by where their bytes are mapped, to find the file each object was read from.
    let mut spans: Vec<(usize, usize, usize)> = read
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.data().is_empty())
        .map(|(i, f)| (f.data().as_ptr() as usize, f.data().as_ptr() as usize + f.data().len(), i))
        .collect();
    spans.sort_unstable();
    // Per file, the objects read from it: (base, object).
    let mut per_file: Vec<Vec<(u64, Option<FileId>)>> = vec![Vec::new(); read.len()];
    for (f, obj) in linked.objects.iter_enumerated() {
        if obj.syms.is_empty() {
            continue;
        }
        let sym_section = obj.symtab.section().0;
        let at = obj.syms.as_ptr() as usize;
        let k = spans.partition_point(|s| s.0 <= at);
        let Some(&(start, end, i)) = k.checked_sub(1).map(|k| &spans[k]) else { continue };
        if at >= end {
            continue;
        }
        let sh_offset = obj.headers.headers.get(sym_section).map_or(u64::MAX, |h| h.sh_offset.get(LE));
        match ((at - start) as u64).checked_sub(sh_offset) {
            Some(base) => per_file[i].push((base, Some(f))),
            // Not where its headers say: the file is not patchable.
            None => per_file[i].push((u64::MAX, None)),
        }
    }
    let known: std::collections::HashMap<(&[u8], u64), &FileRecord> =
        known.iter().filter(|k| !k.racy).map(|k| ((&k.path[..], k.size), k)).collect();
    read.par_iter()
        .zip(per_file)
        .map(|(file, objects)| {
            if objects.is_empty() || objects.iter().any(|o| o.1.is_none()) {
                return None;
            }
            let data = file.data();
            let path = std::os::unix::ffi::OsStrExt::as_bytes(file.path().as_os_str());
            let mtime = file.mtime().map_or(0, super::epoch_ns);
            // The same file as the last link's: its objects' hashes and shapes are taken over.
            let before = known.get(&(path, file.size())).filter(|k| k.mtime_ns == mtime).and_then(|k| k.patch.as_ref());
            let old: std::collections::HashMap<u64, &Member> =
                before.map(|p| p.members.iter().map(|m| (m.base, m)).collect()).unwrap_or_default();
            // The objects of an archive in parallel (cxx-big's LLVM archives: thousands of members).
            let members: Vec<Member> = objects
                .par_iter()
                .map(|&(base, f)| {
                    let f = f?;
                    let old = old.get(&base);
                    // An object as the last link had it keeps its extent, hash and shape; a new one
                    // is read for them.
                    let (len, hash, shape) = match old {
                        Some(m) => (m.len, m.hash, m.shape),
                        None => {
                            let (found, len) = parse(data, base, true).ok()?;
                            let bytes = data.get(base as usize..(base + len) as usize)?;
                            (len, xxhash_rust::xxh3::xxh3_128(bytes), shape(data, base, len, &found))
                        }
                    };
                    // Every section that may be patchable (by its type and flags; its name is
                    // read when it is patched) and is in the output: where, or that it is there
                    // otherwise than verbatim (u64::MAX).
                    let obj = &linked.objects[f];
                    let mut sections = Sections::default();
                    for (i, sec) in obj.sections.iter().enumerate() {
                        let candidate = sec.sh_type == elf::SHT_PROGBITS
                            && sec.flags & (elf::SHF_MERGE | elf::SHF_COMPRESSED) as u64 == 0
                            && sec.size > 0;
                        if !candidate {
                            continue;
                        }
                        match verbatim_at(linked, f, i as u32, data, base) {
                            Placed::Not => {}
                            Placed::Verbatim(at) => {
                                sections.push(i as u32, at, linked.section_addr(f, i as u32).unwrap_or(0))
                            }
                            Placed::Otherwise => sections.push(i as u32, u64::MAX, 0),
                        }
                    }
                    Some(Member { base, len, hash, shape, sections })
                })
                .collect::<Option<_>>()?;
            let rest = match before {
                Some(p) if object_spans(&p.members) == object_spans(&members) => p.rest,
                _ => rest(data, &object_spans(&members)).ok()?,
            };
            Some(FilePatch { rest, members })
        })
        .collect()
}

/// How a section is in the output.
enum Placed {
    Not,
    /// Its bytes, verbatim (then relocated), at this file offset.
    Verbatim(u64),
    /// Otherwise (rearranged, decompressed, folded, rewritten): it cannot be patched.
    Otherwise,
}

/// How section `index` of object `f` (at `base` of `data`) is in the output.
fn verbatim_at(linked: &Linked, f: FileId, index: u32, data: &[u8], base: u64) -> Placed {
    let obj = &linked.objects[f];
    let (Some(sec), Some(h)) = (obj.sections.get(index as usize), obj.headers.headers.get(index as usize)) else {
        return Placed::Otherwise;
    };
    let Some(os) = sec.out.filter(|_| sec.live) else { return Placed::Not };
    let place = linked.layout.sections[os];
    let r = SectionRef::new(f, index);
    let (offset, size) = (h.sh_offset.get(LE), h.sh_size.get(LE));
    let from_file = data.get((base + offset) as usize..).map(|d| d.as_ptr()) == Some(sec.data.as_ptr());
    let verbatim = from_file
        && sec.data.len() as u64 == size
        && linked.sections[os].content == Content::Inputs
        && linked.layout.compressed.bytes(os).is_none()
        && place.shndx != 0
        && !place.stub
        && sec.merge_index.is_none()
        && linked.split_eh_frame(f, index).is_none()
        && !sec.decompressed()
        && !sec.folded()
        && !linked.plans.endbr.touches(r)
        && linked.member_size(f, index) == size;
    match verbatim {
        true => Placed::Verbatim(place.offset + linked.layout.inputs.offsets[r]),
        false => Placed::Otherwise,
    }
}

/// What a patch did.
#[derive(Debug, PartialEq, Eq)]
pub struct Patched {
    pub files: usize,
    pub sections: usize,
    pub bytes: u64,
}

/// A changed file's new bytes and what to write of them: (output offset, bytes).
pub struct FileEdit<'a> {
    pub index: usize,
    path: String,
    pub data: std::borrow::Cow<'a, [u8]>,
    /// The XXH3-128 of `data`.
    pub whole: u128,
    pub mtime_ns: u64,
    writes: Vec<(u64, std::ops::Range<usize>)>,
    /// The parts of `writes` the Cortex-A53 erratum scan reads (with `--fix-cortex-a53-843419`).
    erratum_reads: Vec<(u64, std::ops::Range<usize>)>,
    sections: usize,
    /// The objects that changed: (base, the XXH3-128 of their bytes now).
    hashes: Vec<(u64, u128)>,
}

impl FileEdit<'_> {
    /// The file's record once the edit is written: its changed objects' new hashes.
    pub fn update(&self, patch: &mut FilePatch) {
        for m in &mut patch.members {
            if let Some(&(_, h)) = self.hashes.iter().find(|(b, _)| *b == m.base) {
                m.hash = h;
            }
        }
    }
}

/// Checks that changed file `index` of the state (`record`), now `data`, may be patched: its
/// shape is the recorded one. Gives what to write, or why it cannot be patched.
/// `erratum`: `--fix-cortex-a53-843419` is on.
/// `now`: its hashes (`hashes`).
pub fn edit<'a>(
    index: usize,
    record: &FileRecord,
    data: std::borrow::Cow<'a, [u8]>,
    now: Hashes,
    mtime_ns: u64,
    erratum: bool,
) -> Result<FileEdit<'a>, String> {
    let path = String::from_utf8_lossy(&record.path);
    let Some(p) = &record.patch else {
        return Err(format!(
            "{path} changed, and it is not an object or archive whose sections the last link copied verbatim"
        ));
    };
    let beyond = |why: String| format!("{path} changed beyond its code and data bytes ({why})");
    let differ = || beyond("its symbols, relocations, section headers or the bytes a relocation covers differ".into());
    let Hashes { whole, rest, members } = now;
    match rest {
        Ok(r) if r == p.rest => {}
        Ok(_) => {
            return Err(beyond("the bytes around its objects differ (an archive's headers or symbol table)".into()))
        }
        Err(why) => return Err(beyond(why)),
    }
    let mut writes = Vec::new();
    let mut erratum_reads = Vec::new();
    let mut sections = 0;
    // Only the objects whose bytes changed (an archive's other members are as they were).
    let mut hashes: Vec<(u64, u128)> = Vec::new();
    for (m, &now) in p.members.iter().zip(&members) {
        if now == m.hash {
            continue;
        }
        if !hashes.iter().any(|(b, _)| *b == m.base) {
            hashes.push((m.base, now));
        }
        let (found, len) = parse(&data, m.base, true).map_err(beyond)?;
        if len != m.len || shape(&data, m.base, len, &found) != m.shape {
            return Err(differ());
        }
        let ranges: Vec<_> = patch_ranges(m.base, &found).collect();
        for (k, (p, _)) in found.iter().enumerate() {
            let index = p.index;
            // Recorded: in the output (verbatim, or otherwise); not recorded: not in the output.
            let Some((out, addr)) = m.sections.find(index) else { continue };
            if out == u64::MAX {
                return Err(format!("{path} changed in a section the output holds otherwise than verbatim"));
            }
            let start = m.base + found[k].0.offset;
            sections += 1;
            // The section's ranges (in section order, as `patch_ranges` gives them).
            let first = ranges.partition_point(|r| r.0 < index);
            for &(_, s, e) in ranges[first..].iter().take_while(|r| r.0 == index) {
                let at = out + (s - start);
                if erratum && found[k].0.exec {
                    let lo = addr + (s - start);
                    for (a, b) in erratum_reach(lo, lo + (e - s)) {
                        erratum_reads.push((at + a, (s + a) as usize..(s + b) as usize));
                    }
                }
                writes.push((at, s as usize..e as usize));
            }
        }
    }
    let path = path.into_owned();
    Ok(FileEdit { index, path, data, whole, mtime_ns, writes, erratum_reads, sections, hashes })
}

/// The parts of addresses `lo..hi` the Cortex-A53 erratum scan reads (a sequence starts at one of
/// a page's last two words and runs up to four instructions: 0xff8..0x100c of each page), as
/// offsets from `lo`.
fn erratum_reach(lo: u64, hi: u64) -> Vec<(u64, u64)> {
    ((lo >> 12).saturating_sub(1)..=(hi >> 12))
        .map(|p| ((p << 12) + 0xff8, (p << 12) + 0x100c))
        .filter(|&(s, e)| s < hi && lo < e)
        .map(|(s, e)| (s.max(lo) - lo, e.min(hi) - lo))
        .collect()
}

/// Whether every byte of `edits` that the Cortex-A53 erratum scan reads is what the output holds
/// already (then the scan finds what it found); otherwise why not.
pub fn erratum_unchanged(output: &[u8], edits: &[FileEdit]) -> Result<(), String> {
    for e in edits {
        for (at, range) in &e.erratum_reads {
            let old = usize::try_from(*at).ok().and_then(|a| output.get(a..a + range.len()));
            let old = old.ok_or("the output is shorter than the state says")?;
            if old != &e.data[range.clone()] {
                return Err(format!(
                    "{} changed in code the Cortex-A53 erratum scan reads (--fix-cortex-a53-843419: the last \
                     words of a page)",
                    e.path
                ));
            }
        }
    }
    Ok(())
}

/// Of `writes` ((output offset, bytes)), the runs of bytes that differ from what `output` (the
/// output's bytes) holds, in the writes' order, runs closer than 64 bytes joined.
fn differing_runs(output: &[u8], writes: &[(u64, &[u8])]) -> std::io::Result<Vec<(u64, Vec<u8>)>> {
    let mut runs: Vec<(u64, Vec<u8>)> = Vec::new();
    for &(at, new) in writes {
        let have = usize::try_from(at).ok().and_then(|a| output.get(a..a + new.len()));
        let have = have.ok_or_else(|| std::io::Error::other("the output is shorter than the state says"))?;
        let mut k = 0;
        while k < new.len() {
            if have[k] == new[k] {
                k += 1;
                continue;
            }
            let from = k;
            let mut to = k + 1;
            // The run goes on while differing bytes come within 64 bytes of each other.
            let mut last = k;
            while to < new.len() && to - last <= 64 {
                if have[to] != new[to] {
                    last = to;
                }
                to += 1;
            }
            let run_at = at + from as u64;
            let bytes = &new[from..=last];
            match runs.last_mut() {
                Some((r_at, r)) if *r_at + r.len() as u64 == run_at => r.extend_from_slice(bytes),
                _ => runs.push((run_at, bytes.to_vec())),
            }
            k = last + 1;
        }
    }
    Ok(runs)
}

/// The output's bytes as they are on disk: mapped shared, so that what is written to the file
/// shows in it. (Read into fresh buffers instead, each 1 MiB chunk hashed again cost 1.5 ms of
/// page faults.)
pub fn view(output: &std::fs::File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: read-only; the output is this link's, which another process truncating while it is
    // patched would make fail (SIGBUS), as with the inputs' mappings.
    unsafe { memmap2::Mmap::map(output) }
}

/// Writes `edits` into `output` (opened for writing) and the build-id again; updates `patching`'s
/// digests. The caller has removed the state first: a patch cut short leaves no state that
/// trusts the output.
/// `view`: the output's bytes (`view`).
pub fn write(
    config: &Config,
    output: &std::fs::File,
    view: &[u8],
    edits: &[FileEdit],
    patching: &mut OutputPatch,
) -> std::io::Result<Patched> {
    const CHUNK: u64 = crate::synthetic::chunks::BUILD_ID_CHUNK as u64;
    // Only the bytes that differ from the output's are written: an edit changes a few bytes of
    // an object, whose other bytes (and the output's chunks they fall in) stay as they were.
    let mut all: Vec<(u64, &[u8])> =
        edits.iter().flat_map(|e| e.writes.iter().map(|(at, r)| (*at, &e.data[r.clone()]))).collect();
    all.sort_unstable_by_key(|w| w.0);
    let runs = differing_runs(view, &all)?;
    let mut bytes = 0;
    let mut chunks = std::collections::BTreeSet::new();
    for (at, data) in &runs {
        output.write_all_at(data, *at)?;
        bytes += data.len() as u64;
        chunks.extend(at / CHUNK..=(at + data.len() as u64 - 1) / CHUNK);
    }
    if let Some((desc, len)) = patching.build_id {
        if crate::synthetic::chunks::hashed(&config.build_id) {
            let size = view.len() as u64;
            let fresh: Vec<(u64, [u8; 32])> = chunks
                .into_par_iter()
                .map(|c| -> std::io::Result<(u64, [u8; 32])> {
                    let start = c * CHUNK;
                    let chunk = view
                        .get(start as usize..size.min(start + CHUNK) as usize)
                        .ok_or_else(|| std::io::Error::other("the output is shorter than the state says"))?;
                    let digest = |b: &[u8]| crate::synthetic::chunks::chunk_digests(&config.build_id, b)[0];
                    // The descriptor was zero when the chunk was hashed.
                    let (s, e) = (desc.max(start), (desc + len).min(start + chunk.len() as u64));
                    if s < e {
                        let mut buf = chunk.to_vec();
                        buf[(s - start) as usize..(e - start) as usize].fill(0);
                        return Ok((c, digest(&buf)));
                    }
                    Ok((c, digest(chunk)))
                })
                .collect::<std::io::Result<_>>()?;
            for (c, d) in fresh {
                let slot = patching
                    .digests
                    .get_mut(c as usize)
                    .ok_or_else(|| std::io::Error::other("the state's build-id digests do not cover the output"))?;
                *slot = d;
            }
            let id = crate::synthetic::chunks::build_id(&config.build_id, &patching.digests)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            output.write_all_at(&id[..len as usize], desc)?;
        }
    }
    Ok(Patched { files: edits.len(), sections: edits.iter().map(|e| e.sections).sum(), bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cover_what_relaxations_rewrite() {
        // A TLS GD sequence starts 4 bytes before its field and may run to 19 after it.
        assert_eq!(window(elf::EM_X86_64, elf::R_X86_64_TLSGD), (4, 24));
        assert_eq!(window(elf::EM_X86_64, elf::R_X86_64_REX_GOTPCRELX), (4, 24));
        assert_eq!(window(elf::EM_X86_64, elf::R_X86_64_PLT32), (0, 4));
        assert_eq!(window(elf::EM_X86_64, elf::R_X86_64_64), (0, 8));
        assert_eq!(window(elf::EM_X86_64, 0xffff), (4, 24));
        assert_eq!(window(elf::EM_AARCH64, elf::R_AARCH64_ADR_PREL_PG_HI21), (0, 4));
        assert_eq!(window(elf::EM_AARCH64, elf::R_AARCH64_TLSDESC_CALL), (4, 12));
    }

    #[test]
    fn a_shape_hashes_the_bytes_around_the_patch_ranges_and_their_places() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
        let a = Patchable { index: 1, offset: 100, size: 50, exec: true, unsorted: false };
        let b = Patchable { index: 2, offset: 160, size: 20, exec: false, unsorted: false };
        let found = vec![(a, vec![(0, 4), (10, 20), (45, 50)]), (b, vec![])];
        // What `patch_ranges` gives, each range's place and length in place of its bytes.
        let mut expect = Vec::new();
        let mut at = 8;
        for (_, s, e) in patch_ranges(8, &found) {
            expect.extend_from_slice(&data[at as usize..s as usize]);
            expect.extend_from_slice(&(s - 8).to_le_bytes());
            expect.extend_from_slice(&(e - s).to_le_bytes());
            at = e;
        }
        expect.extend_from_slice(&data[at as usize..8 + 250]);
        assert_eq!(shape(&data, 8, 250, &found), xxhash_rust::xxh3::xxh3_128(&expect));
        // A patchable byte changed: the same shape; another byte: another.
        let mut patched = data.clone();
        patched[8 + 100 + 30] ^= 1;
        assert_eq!(shape(&patched, 8, 250, &found), shape(&data, 8, 250, &found));
        patched[8 + 100 + 2] ^= 1;
        assert_ne!(shape(&patched, 8, 250, &found), shape(&data, 8, 250, &found));
    }

    #[test]
    fn packed_sections_are_found_by_index() {
        let mut s = Sections::default();
        for (i, at, addr) in [(1, 64, 0x401000), (4, u64::MAX, 0), (9, 4096, 7)] {
            s.push(i, at, addr);
        }
        assert_eq!((s.len(), s.get(1)), (3, (4, u64::MAX, 0)));
        assert_eq!(s.find(9), Some((4096, 7)));
        assert_eq!(s.find(1), Some((64, 0x401000)));
        assert_eq!(s.find(2), None);
        assert_eq!(Sections::from_bytes(s.bytes().to_vec()), Some(s.clone()));
        assert_eq!(Sections::from_bytes(vec![0; 21]), None);
    }

    #[test]
    fn two_lists_merge_sorted_whatever_their_order() {
        assert_eq!(merge_sorted(vec![1, 4, 9], vec![2, 3, 10]), vec![1, 2, 3, 4, 9, 10]);
        assert_eq!(merge_sorted(vec![9, 1, 4], vec![3]), vec![1, 3, 4, 9]);
        assert_eq!(merge_sorted(Vec::<u8>::new(), vec![2, 1]), vec![1, 2]);
    }

    #[test]
    fn windows_merge_as_they_come_or_once_sorted() {
        let windows = [(0, 4), (4, 8), (10, 12), (20, 44), (30, 34), (50, 54)];
        let mut w = Vec::new();
        assert!(windows.iter().all(|&(s, e)| push_window(&mut w, s, e)));
        assert_eq!(w, vec![(0, 8), (10, 12), (20, 44), (50, 54)]);
        // Out of order: pushed as they are, then sorted and merged, to the same windows.
        let mut v = Vec::new();
        let results: Vec<bool> = [(50, 54), (20, 44), (0, 4), (10, 12), (4, 8), (30, 34)]
            .iter()
            .map(|&(s, e)| push_window(&mut v, s, e))
            .collect();
        assert_eq!(results, vec![true, false, false, true, false, true]);
        merge_windows(&mut v);
        assert_eq!(v, w);
    }

    #[test]
    fn patch_ranges_are_the_bytes_between_windows() {
        let p = Patchable { index: 3, offset: 100, size: 50, exec: true, unsorted: false };
        let r: Vec<_> = patch_ranges(1000, &[(p, vec![(0, 4), (10, 20), (45, 50)])]).collect();
        assert_eq!(r, vec![(3, 1104, 1110), (3, 1120, 1145)]);
        assert_eq!(patch_ranges(0, &[(p, vec![])]).collect::<Vec<_>>(), vec![(3, 100, 150)]);
    }

    #[test]
    fn the_erratum_scan_reads_the_end_of_each_page() {
        assert_eq!(erratum_reach(0x1000, 0x1ff0), vec![(0, 0xc)]);
        assert_eq!(erratum_reach(0x1100, 0x1ff0), Vec::<(u64, u64)>::new());
        assert_eq!(erratum_reach(0x1100, 0x2004), vec![(0xef8, 0xf04)]);
        assert_eq!(erratum_reach(0x1ffc, 0x3000), vec![(0, 0x10), (0xffc, 0x1004)]);
    }

    #[test]
    fn only_the_bytes_that_differ_are_written() {
        let path = std::env::temp_dir().join(format!("rivet-patch-runs-{}", std::process::id()));
        let mut old = vec![7u8; 10_000];
        std::fs::write(&path, &old).unwrap();
        let f = view(&std::fs::File::open(&path).unwrap()).unwrap();
        let mut a = old[100..300].to_vec();
        a[10] = 1;
        a[50] = 2; // within 64 bytes of the first: one run
        a[199] = 3;
        let b = old[5000..5010].to_vec(); // the same bytes: nothing
        let mut c = old[9000..9100].to_vec();
        c[0] = 4;
        let runs = differing_runs(&f, &[(100, &a), (5000, &b), (9000, &c)]).unwrap();
        assert_eq!(runs, vec![(110, a[10..=50].to_vec()), (299, vec![3]), (9000, vec![4])]);
        // Applied, they give the new bytes.
        for (at, r) in &runs {
            old[*at as usize..*at as usize + r.len()].copy_from_slice(r);
        }
        assert_eq!(&old[100..300], &a[..]);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn garbage_is_not_an_object() {
        assert!(parse(b"not an object", 0, true).is_err());
        assert!(parse(b"", 5, true).is_err());
        assert!(rest(b"abc", &[(2, 5)]).is_err());
        assert!(rest(b"abcdef", &[(0, 3), (2, 2)]).is_err());
        assert_ne!(rest(b"abcdef", &[(0, 3)]), rest(b"abcdef", &[(0, 2)]));
    }
}
