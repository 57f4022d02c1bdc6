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
use crate::ids::{FileId, IdVec, SectionRef};
use crate::input::object::ObjectFile;
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct Patchable {
    index: u32,
    offset: u64,
    size: u64,
    exec: bool,
}

/// Names of `SHT_PROGBITS` sections the link reads or rearranges (or, `.debug_info`, whose
/// units' format decides the debug sections' order).
const READ_BY_THE_LINK: &[&[u8]] =
    &[b".eh_frame", b".ctors", b".dtors", b".note", b".gnu.warning", b".gnu.lto", b".llvm", b".debug_info"];

/// A patchable section and the ranges of it its relocations cover (each list sorted and disjoint).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct Found {
    p: Patchable,
    /// Every relocation's window: no patch writes these bytes (`patch_ranges`). Read only when
    /// `parse` is asked for them.
    windows: Vec<(u64, u64)>,
    /// The windows of the relocations whose applying reads the bytes there (`window`): the
    /// shape holds these bytes.
    reads: Vec<(u64, u64)>,
}

/// The object at `base` of `data`: its patchable sections (ascending index), each with the
/// windows of its relocations (`Found`; every window only when `windows` is true, else only those
/// a relocation reads), and its extent (the end of its last header or section).
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
            found.push(Found { p: Patchable { index: i as u32, offset, size, exec }, ..Default::default() });
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
    // Per section, whether a list came out of order (compilers sort a section's relocations by
    // offset; then each window is merged as it comes).
    let mut unsorted = vec![(false, false); found.len()];
    for sh in shdrs {
        let ty = sh.sh_type(LE);
        if ty != elf::SHT_RELA && ty != elf::SHT_REL {
            continue;
        }
        let target = sh.sh_info(LE);
        let Ok(k) = found.binary_search_by_key(&target, |f| f.p.index) else { continue };
        if ty == elf::SHT_REL {
            return Err("SHT_REL relocations".into());
        }
        let relas: &[elf::Rela64<LE>] = sh.data_as_array(LE, member).map_err(|e| e.to_string())?;
        let alloc = shdrs[target as usize].sh_flags(LE) & elf::SHF_ALLOC as u64 != 0;
        let f = &mut found[k];
        let size = f.p.size;
        if windows {
            f.windows.reserve(relas.len());
        }
        for r in relas {
            let (before, after, reads) = window(machine, r.r_type(LE, false), alloc);
            let at = r.r_offset.get(LE);
            if at >= size {
                return Err("a relocation past its section's end".into());
            }
            let (s, e) = (at.saturating_sub(before), (at + after).min(size));
            if windows && !push_window(&mut f.windows, s, e) {
                unsorted[k].0 = true;
            }
            if reads && !push_window(&mut f.reads, s, e) {
                unsorted[k].1 = true;
            }
        }
    }
    for (f, (w, r)) in found.iter_mut().zip(unsorted) {
        if w {
            merge_windows(&mut f.windows);
        }
        if r {
            merge_windows(&mut f.reads);
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

/// The bytes around a relocation at its offset that applying it may read or write, (before,
/// after), and whether applying it reads them (`alloc`: in an allocated section). A plain
/// relocation writes its field. x86-64 rewrites the instructions of the GOT and TLS accesses it
/// relaxes (the longest, the large code model's TLS call, 22 bytes from 3 before the field).
/// AArch64 rewrites the instruction of a relocation (and reads the next one's, which has a
/// relocation of its own, for an ADRP's pair); its TLS sequences take the instructions around
/// them too. Unknown types take the widest.
///
/// What a relocation only writes, whatever the object holds there, does not reach the output:
/// those bytes need not be the same for a patch (x86-64's plain fields, but `R_X86_64_64` in an
/// allocated section, whose field stays as it is under a symbolic dynamic relocation, and the
/// non-allocated types whose tombstone writes nothing). An AArch64 field is bits of an
/// instruction: its other bits are read.
fn window(machine: u16, r_type: u32, alloc: bool) -> (u64, u64, bool) {
    if machine == elf::EM_AARCH64 {
        return match r_type {
            elf::R_AARCH64_ABS64 | elf::R_AARCH64_PREL64 => (0, 8, true),
            // TLS: R_AARCH64_TLSGD_ADR_PREL21 up to R_AARCH64_TLSDESC_CALL.
            512..=573 => (4, 12, true),
            _ => (0, 4, true),
        };
    }
    match r_type {
        elf::R_X86_64_64 => (0, 8, alloc),
        elf::R_X86_64_DTPOFF64 => (0, 8, false),
        elf::R_X86_64_32 | elf::R_X86_64_32S | elf::R_X86_64_DTPOFF32 => (0, 4, false),
        elf::R_X86_64_PC64 | elf::R_X86_64_GOTOFF64 | elf::R_X86_64_SIZE64 | elf::R_X86_64_TPOFF64 => (0, 8, !alloc),
        elf::R_X86_64_DTPMOD64 => (0, 8, true),
        elf::R_X86_64_PC32
        | elf::R_X86_64_PLT32
        | elf::R_X86_64_GOTPC32
        | elf::R_X86_64_SIZE32
        | elf::R_X86_64_TPOFF32 => (0, 4, !alloc),
        elf::R_X86_64_16 | elf::R_X86_64_PC16 => (0, 2, !alloc),
        elf::R_X86_64_8 | elf::R_X86_64_PC8 => (0, 1, !alloc),
        _ => (4, 24, true),
    }
}

/// The ranges of `data` (absolute) a patch writes: each patchable section's bytes outside its
/// windows.
fn patch_ranges(base: u64, found: &[Found]) -> impl Iterator<Item = (u32, u64, u64)> + '_ {
    found.iter().flat_map(move |Found { p, windows, .. }| {
        let mut at = 0;
        windows.iter().copied().chain([(p.size, p.size)]).filter_map(move |(s, e)| {
            let range = (s > at).then_some((p.index, base + p.offset + at, base + p.offset + s));
            at = at.max(e);
            range
        })
    })
}

/// The shape of the object at `base` of `data`, `len` bytes long (see the module's comment):
/// XXH3-128 of its bytes outside its patchable sections `found` (in file order), then each
/// patchable section's index, offset and size, then the bytes its relocations read (`reads`).
/// Where the other windows are follows from the relocations, which are among the bytes hashed;
/// what is in them does not reach the output.
fn shape(data: &[u8], base: u64, len: u64, found: &[Found]) -> u128 {
    let object = &data[base as usize..(base + len) as usize];
    let mut h = Stream::default();
    let mut extents: Vec<(u64, u64)> = found.iter().map(|f| (f.p.offset, f.p.offset + f.p.size)).collect();
    if !extents.is_sorted() {
        extents.sort_unstable();
    }
    let mut at = 0;
    for (s, e) in extents {
        h.put(&object[at as usize..s as usize]);
        at = e;
    }
    h.put(&object[at as usize..]);
    for Found { p, .. } in found {
        h.put(&p.index.to_le_bytes());
        h.put(&p.offset.to_le_bytes());
        h.put(&p.size.to_le_bytes());
    }
    for Found { p, reads, .. } in found {
        for &(s, e) in reads {
            h.put(&object[(p.offset + s) as usize..(p.offset + e) as usize]);
        }
    }
    h.digest()
}

/// XXH3-128 of the bytes put, in order: small pieces gathered and hashed in blocks (the streaming
/// hasher fed a few bytes at a time costs several times more per byte), big ones hashed where
/// they are.
struct Stream {
    hasher: xxhash_rust::xxh3::Xxh3,
    gathered: Vec<u8>,
}

impl Default for Stream {
    fn default() -> Self {
        Stream { hasher: xxhash_rust::xxh3::Xxh3::new(), gathered: Vec::with_capacity(Self::BLOCK) }
    }
}

impl Stream {
    const BLOCK: usize = 16 << 10;

    fn put(&mut self, bytes: &[u8]) {
        let big = bytes.len() >= Self::BLOCK / 4;
        if big || self.gathered.len() + bytes.len() > Self::BLOCK {
            self.hasher.update(&self.gathered);
            self.gathered.clear();
        }
        match big {
            true => self.hasher.update(bytes),
            false => self.gathered.extend_from_slice(bytes),
        }
    }

    fn digest(mut self) -> u128 {
        self.hasher.update(&self.gathered);
        self.hasher.digest128()
    }
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

/// Per file of `read`, the objects of `objects` read from it: (base, object), or (u64::MAX, None)
/// for one that is not where its headers say (the file is then not patchable).
pub fn objects_per_file(
    objects: &IdVec<FileId, ObjectFile<'_>>,
    read: &[std::sync::Arc<rivet_io::InputFile>],
) -> Vec<Vec<(u64, Option<FileId>)>> {
    // The files by where their bytes are mapped, to find the file each object was read from.
    let mut spans: Vec<(usize, usize, usize)> = read
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.data().is_empty())
        .map(|(i, f)| (f.data().as_ptr() as usize, f.data().as_ptr() as usize + f.data().len(), i))
        .collect();
    spans.sort_unstable();
    let mut per_file: Vec<Vec<(u64, Option<FileId>)>> = vec![Vec::new(); read.len()];
    for (f, obj) in objects.iter_enumerated() {
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
    per_file
}

/// What the state's record takes: per file of `read`, what patching needs of it (`placements`),
/// and of the output; per file, whether an object was loaded from it; and what
/// `Early` worked out; and the file this link committed (device, inode).
#[derive(Default)]
pub struct Recording {
    pub placements: Vec<Option<FilePatch>>,
    pub output: OutputPatch,
    pub loaded_from: Vec<bool>,
    pub early: Vec<EarlyFile>,
    pub written: Option<(u64, u64)>,
}

/// An object's extent, hash and shape.
type ObjectRecord = (u64, u128, u128);

/// An object's extent, hash and shape, or None when it cannot be patched (`parse` refuses it).
fn object_record(data: &[u8], base: u64) -> Option<ObjectRecord> {
    let (found, len) = parse(data, base, false).ok()?;
    let bytes = data.get(base as usize..(base + len) as usize)?;
    Some((len, xxhash_rust::xxh3::xxh3_128(bytes), shape(data, base, len, &found)))
}

/// What the state needs of a file that no stage after resolution changes, worked out early.
#[derive(Default)]
pub struct EarlyFile {
    /// Where the file's bytes were mapped (the file it was worked out for).
    at: usize,
    /// A file objects were loaded from, none of them patchable (a `barrier`): the XXH3-128 of its
    /// bytes.
    whole: Option<u128>,
    /// Per object done, by ascending base: `object_record`'s.
    objects: Vec<(u64, Option<ObjectRecord>)>,
    /// Once every object is done: `rest` of them.
    rest: Option<u128>,
}

impl EarlyFile {
    fn of(&self, f: &rivet_io::InputFile) -> Option<&EarlyFile> {
        (self.at == f.data().as_ptr() as usize).then_some(self)
    }

    /// The object at `base`, if it is done.
    fn object(&self, base: u64) -> Option<Option<ObjectRecord>> {
        let k = self.objects.binary_search_by_key(&base, |o| o.0).ok()?;
        Some(self.objects[k].1)
    }
}

/// The files' hashes and their objects' shapes, worked out on a thread of its own at idle
/// priority (it runs on a core the link leaves idle: in its serial stages, and while the pool
/// waits) from resolution, which decides the objects loaded, to the state's record, which takes
/// what is done (`finish`) and works out the rest itself. Files the last link read as they are
/// now (`known`) are left out: the state has their hashes.
pub struct Early {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<Vec<EarlyFile>>>,
}

impl Early {
    /// `objects`: the ones resolution loaded; `patchable`: objects' shapes are wanted (no
    /// `barrier`), else only whole files' hashes.
    pub fn start(
        objects: &IdVec<FileId, ObjectFile<'_>>,
        read: Vec<std::sync::Arc<rivet_io::InputFile>>,
        known: &[FileRecord],
        patchable: bool,
    ) -> Early {
        let per_file = objects_per_file(objects, &read);
        let known: std::collections::HashSet<(&[u8], u64, u64)> =
            known.iter().filter(|k| !k.racy).map(|k| (&k.path[..], k.size, k.mtime_ns)).collect();
        let skip: Vec<bool> = read.iter().map(|f| known.contains(&super::stamp(f))).collect();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let work = move || {
            // SCHED_IDLE: only where no other thread of the system wants the core.
            let idle = libc::sched_param { sched_priority: 0 };
            // SAFETY: plain system call on this thread with a valid parameter.
            unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &idle) };
            let stop = || stopped.load(std::sync::atomic::Ordering::Relaxed);
            let mut done = Vec::with_capacity(read.len());
            for ((file, objects), skip) in read.iter().zip(per_file).zip(skip) {
                let data = file.data();
                let mut early = EarlyFile { at: data.as_ptr() as usize, ..Default::default() };
                if stop() {
                    break;
                }
                // A file no object was loaded from is compared by its stamp (`FileRecord::hash`).
                if skip || objects.is_empty() {
                } else if !patchable {
                    early.whole = Some(xxhash_rust::xxh3::xxh3_128(data));
                } else if objects.iter().all(|o| o.1.is_some()) {
                    // Each object once (one named twice is one), by ascending base.
                    let mut bases: Vec<u64> = objects.iter().map(|o| o.0).collect();
                    bases.sort_unstable();
                    bases.dedup();
                    for &base in &bases {
                        if stop() {
                            break;
                        }
                        early.objects.push((base, object_record(data, base)));
                    }
                    let spans: Option<Vec<(u64, u64)>> =
                        early.objects.iter().map(|&(base, r)| r.map(|(len, _, _)| (base, len))).collect();
                    if let Some(spans) = spans.filter(|_| early.objects.len() == bases.len()) {
                        early.rest = rest(data, &spans).ok();
                    }
                }
                done.push(early);
            }
            done
        };
        let thread = std::thread::Builder::new().name("rivet-record".into()).spawn(work).ok();
        Early { stop, thread }
    }

    /// What is done, once the thread has stopped (after the object or file it is at).
    pub fn finish(mut self) -> Vec<EarlyFile> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default()
    }
}

impl Drop for Early {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The hash a record keeps of file `f` (of `read`) with no objects patchable: its bytes'
/// XXH3-128, as `early` has it or worked out now.
pub fn whole_hash(f: &rivet_io::InputFile, early: Option<&EarlyFile>) -> u128 {
    early.and_then(|e| e.of(f)).and_then(|e| e.whole).unwrap_or_else(|| xxhash_rust::xxh3::xxh3_128(f.data()))
}

/// For each file the link read (`read`), what the next link needs to patch the output after an
/// edit of it, or None where it may not: a file no object was loaded from (a shared library, a
/// script, an archive none of whose members was), or one with an object whose patchable sections
/// did not reach the output verbatim. `known`: the last state's files, whose shapes are taken
/// over where a file's path, size and mtime are the same; `per_file`: `objects_per_file`'s;
/// `early`: what `Early` worked out.
pub fn placements(
    linked: &Linked,
    read: &[std::sync::Arc<rivet_io::InputFile>],
    per_file: &[Vec<(u64, Option<FileId>)>],
    known: &[FileRecord],
    early: &[EarlyFile],
) -> Vec<Option<FilePatch>> {
    let known: std::collections::HashMap<(&[u8], u64), &FileRecord> =
        known.iter().filter(|k| !k.racy).map(|k| ((&k.path[..], k.size), k)).collect();
    read.par_iter()
        .zip(per_file)
        .enumerate()
        .map(|(i, (file, objects))| {
            if objects.is_empty() || objects.iter().any(|o| o.1.is_none()) {
                return None;
            }
            let data = file.data();
            let early = early.get(i).and_then(|e| e.of(file));
            let (path, size, mtime) = super::stamp(file);
            // The same file as the last link's: its objects' hashes and shapes are taken over.
            let before = known.get(&(path, size)).filter(|k| k.mtime_ns == mtime).and_then(|k| k.patch.as_ref());
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
                        None => match early.and_then(|e| e.object(base)) {
                            Some(done) => done?,
                            None => object_record(data, base)?,
                        },
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
            let spans = object_spans(&members);
            let rest = match (before, early.and_then(|e| e.rest)) {
                (Some(p), _) if object_spans(&p.members) == spans => p.rest,
                (_, Some(done)) => done,
                _ => rest(data, &spans).ok()?,
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
        for Found { p, .. } in &found {
            let index = p.index;
            // Recorded: in the output (verbatim, or otherwise); not recorded: not in the output.
            let Some((out, addr)) = m.sections.find(index) else { continue };
            if out == u64::MAX {
                return Err(format!("{path} changed in a section the output holds otherwise than verbatim"));
            }
            let start = m.base + p.offset;
            sections += 1;
            // The section's ranges (in section order, as `patch_ranges` gives them).
            let first = ranges.partition_point(|r| r.0 < index);
            for &(_, s, e) in ranges[first..].iter().take_while(|r| r.0 == index) {
                let at = out + (s - start);
                if erratum && p.exec {
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
    fn windows_cover_what_relaxations_rewrite_and_say_what_is_read() {
        // A TLS GD sequence starts 4 bytes before its field and may run to 19 after it; the
        // rewrite reads the instructions.
        assert_eq!(window(elf::EM_X86_64, elf::R_X86_64_TLSGD, true), (4, 24, true));
        assert_eq!(window(elf::EM_X86_64, elf::R_X86_64_REX_GOTPCRELX, true), (4, 24, true));
        // A plain field is written whatever it held; in a debug section, where a tombstone of
        // its type writes nothing, it is read.
        assert_eq!(window(elf::EM_X86_64, elf::R_X86_64_PLT32, true), (0, 4, false));
        assert_eq!(window(elf::EM_X86_64, elf::R_X86_64_PC32, false), (0, 4, true));
        assert_eq!(window(elf::EM_X86_64, elf::R_X86_64_32, false), (0, 4, false));
        // A symbolic dynamic relocation leaves an allocated 64-bit field as the object has it.
        assert_eq!(window(elf::EM_X86_64, elf::R_X86_64_64, true), (0, 8, true));
        assert_eq!(window(elf::EM_X86_64, elf::R_X86_64_64, false), (0, 8, false));
        assert_eq!(window(elf::EM_X86_64, 0xffff, true), (4, 24, true));
        assert_eq!(window(elf::EM_AARCH64, elf::R_AARCH64_ADR_PREL_PG_HI21, true), (0, 4, true));
        assert_eq!(window(elf::EM_AARCH64, elf::R_AARCH64_TLSDESC_CALL, true), (4, 12, true));
    }

    fn found(index: u32, offset: u64, size: u64, windows: Vec<(u64, u64)>, reads: Vec<(u64, u64)>) -> Found {
        Found { p: Patchable { index, offset, size, exec: true }, windows, reads }
    }

    #[test]
    fn a_shape_hashes_the_bytes_outside_the_patchable_sections_their_places_and_what_relocations_read() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
        // Listed by index, laid out the other way round.
        let found = vec![
            found(1, 160, 50, vec![(0, 4), (10, 34), (45, 50)], vec![(10, 34)]),
            found(2, 100, 20, vec![], vec![]),
        ];
        let object = &data[8..8 + 250];
        let mut expect = Vec::new();
        expect.extend_from_slice(&object[..100]);
        expect.extend_from_slice(&object[120..160]);
        expect.extend_from_slice(&object[210..]);
        for (index, offset, size) in [(1u32, 160u64, 50u64), (2, 100, 20)] {
            expect.extend_from_slice(&index.to_le_bytes());
            expect.extend_from_slice(&offset.to_le_bytes());
            expect.extend_from_slice(&size.to_le_bytes());
        }
        expect.extend_from_slice(&object[170..194]);
        assert_eq!(shape(&data, 8, 250, &found), xxhash_rust::xxh3::xxh3_128(&expect));
        // A patchable byte changed, or one a relocation only writes: the same shape; a byte
        // outside, or one a relocation reads: another.
        let same = shape(&data, 8, 250, &found);
        for (at, kept) in
            [(8 + 160 + 40, true), (8 + 160 + 2, true), (8 + 100, true), (8 + 160 + 20, false), (8 + 99, false)]
        {
            let mut changed = data.clone();
            changed[at] ^= 1;
            assert_eq!(shape(&changed, 8, 250, &found) == same, kept, "byte {at}");
        }
        // Big pieces are hashed where they are, small ones gathered: the same hash as one pass.
        let big: Vec<u8> = (0..100_000u32).map(|i| ((i * 13) >> 3) as u8).collect();
        let mut s = Stream::default();
        let mut at = 0;
        for len in [3, 5000, 1, 20_000, 4095, 4096, 9, 16_384, 7] {
            s.put(&big[at..at + len]);
            at += len;
        }
        assert_eq!(s.digest(), xxhash_rust::xxh3::xxh3_128(&big[..at]));
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
        let r: Vec<_> = patch_ranges(1000, &[found(3, 100, 50, vec![(0, 4), (10, 20), (45, 50)], vec![])]).collect();
        assert_eq!(r, vec![(3, 1104, 1110), (3, 1120, 1145)]);
        assert_eq!(patch_ranges(0, &[found(3, 100, 50, vec![], vec![])]).collect::<Vec<_>>(), vec![(3, 100, 150)]);
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
