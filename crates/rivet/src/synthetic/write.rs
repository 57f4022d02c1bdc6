//! The bytes of linker-made sections. Each writer takes the finished layout and fills the slice
//! layout sized for it; anything that does not fit is a bug caught by a length check.
use crate::ctx::{Ctx, Target};
use crate::ids::SectionRef;
use crate::layout::DynValue;
use crate::linked::Linked;
use crate::sections::output::Content;
use crate::synthetic::{got_entry, DynRel, GOTPLT_RESERVED};
use object::elf::{self, Dyn64, NoteHeader64, Rela64};
use object::{pod, LittleEndian as LE, I64, U32, U64};

/// The size of an Elf64_Rela.
const RELA_SIZE: usize = size_of::<Rela64<LE>>();

fn put64(buf: &mut [u8], off: usize, v: u64) {
    buf[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

fn put32(buf: &mut [u8], off: usize, v: u32) {
    buf[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

/// `.got`: each entry's words and the dynamic relocations that complete them (`got_entry`).
pub fn got(ctx: &Linked, buf: &mut [u8]) -> Vec<DynRel> {
    let base = ctx.sections[ctx.got.got_sec.unwrap()].addr;
    let mut rels = Vec::new();
    for &(key, word) in &ctx.got.got {
        let (values, relocs) = got_entry(ctx, Some(ctx), key);
        let off = 8 * word as usize;
        for (i, v) in values.iter().take(key.kind().words() as usize).enumerate() {
            put64(buf, off + 8 * i, *v);
        }
        for (delta, ty, sym, addend) in relocs {
            rels.push(DynRel { offset: base + off as u64 + delta, ty, sym, addend });
        }
    }
    rels
}

/// `.got.plt`: `_DYNAMIC` in the first word, then one slot per PLT entry. An import's slot starts at
/// its stub's `push` (lazy binding: the first call goes to the resolver); an IFUNC's slot holds its
/// resolver until the IRELATIVE relocation replaces it.
pub fn got_plt(ctx: &Linked, buf: &mut [u8]) {
    let dynamic = ctx.got.dynamic_sec.map_or(0, |d| ctx.sections[d].addr);
    put64(buf, 0, dynamic);
    for (i, &t) in ctx.got.plt.iter().enumerate() {
        let v = if ctx.is_preemptible(t) { ctx.got.plt_lazy_addr(&ctx.sections, i as u32) } else { ctx.raw_value(t) };
        put64(buf, 8 * (GOTPLT_RESERVED as usize + i), v);
    }
}

/// An IBT PLT entry (`endbr64; jmp *slot; nop`), as lld writes it: the target of calls through the
/// PLT and of canonical function addresses.
fn ibt_entry(e: &mut [u8], entry: u64, slot: u64) {
    e.copy_from_slice(&[0xf3, 0x0f, 0x1e, 0xfa, 0xff, 0x25, 0, 0, 0, 0, 0x66, 0x0f, 0x1f, 0x44, 0, 0]);
    e[6..10].copy_from_slice(&rel32(slot, entry + 10));
}

/// The 32-bit displacement from the end of an instruction (`next_insn`) to `target`.
fn rel32(target: u64, next_insn: u64) -> [u8; 4] {
    ((target as i64 - next_insn as i64) as i32).to_le_bytes()
}

/// `.plt.sec` (IBT PLT of a dynamic output): one `ibt_entry` per PLT entry.
pub fn plt_sec(ctx: &Ctx, buf: &mut [u8]) {
    for i in 0..ctx.got.plt.len() {
        let entry = ctx.got.plt_entry_addr(&ctx.sections, i as u32);
        let slot = ctx.got.gotplt_slot_addr(&ctx.sections, i as u32);
        ibt_entry(&mut buf[16 * i..16 * i + 16], entry, slot);
    }
}

/// `.plt`: in dynamic outputs a header (`push GOT[1]; jmp *GOT[2]`) and lazy stubs
/// (`jmp *slot; push index; jmp header`); in static ones only `jmp *slot` stubs for IFUNCs. With an
/// IBT PLT the lazy stubs are `endbr64; push index; jmp header` (the entries are in `.plt.sec`),
/// and a static output's stubs are `ibt_entry`s.
pub fn plt(ctx: &Ctx, buf: &mut [u8]) {
    let plt_addr = ctx.sections[ctx.got.plt_sec.unwrap()].addr;
    let gotplt = ctx.got.gotplt_addr(&ctx.sections);
    let header = ctx.got.plt_header as usize;
    if header > 0 {
        buf[0..2].copy_from_slice(&[0xff, 0x35]);
        buf[2..6].copy_from_slice(&rel32(gotplt + 8, plt_addr + 6));
        buf[6..8].copy_from_slice(&[0xff, 0x25]);
        buf[8..12].copy_from_slice(&rel32(gotplt + 16, plt_addr + 12));
        buf[12..16].copy_from_slice(&[0x0f, 0x1f, 0x40, 0x00]);
    }
    for i in 0..ctx.got.plt.len() {
        let stub = plt_addr + (header + 16 * i) as u64;
        let slot = ctx.got.gotplt_slot_addr(&ctx.sections, i as u32);
        let e = &mut buf[header + 16 * i..header + 16 * i + 16];
        if ctx.got.ibt {
            if header > 0 {
                e.copy_from_slice(&[0xf3, 0x0f, 0x1e, 0xfa, 0x68, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0, 0x66, 0x90]);
                e[5..9].copy_from_slice(&(i as u32).to_le_bytes());
                e[10..14].copy_from_slice(&rel32(plt_addr, stub + 14));
            } else {
                ibt_entry(e, stub, slot);
            }
            continue;
        }
        e[0..2].copy_from_slice(&[0xff, 0x25]);
        e[2..6].copy_from_slice(&rel32(slot, stub + 6));
        if header > 0 {
            e[6] = 0x68;
            e[7..11].copy_from_slice(&(i as u32).to_le_bytes());
            e[11] = 0xe9;
            e[12..16].copy_from_slice(&rel32(plt_addr, stub + 16));
        } else {
            e[6..16].copy_from_slice(&[0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0]);
        }
    }
}

/// An Elf64_Rela.
fn rela(offset: u64, info: u64, addend: i64) -> Rela64<LE> {
    Rela64 { r_offset: U64::new(LE, offset), r_info: U64::new(LE, info), r_addend: I64::new(LE, addend) }
}

/// `buf` as `n` Elf64_Rela entries (a bug if it is shorter; the `unaligned` feature of `object`
/// makes its ELF types byte-aligned, so any offset will do).
fn relas(buf: &mut [u8], n: usize) -> &mut [Rela64<LE>] {
    pod::slice_from_bytes_mut(buf, n).expect("room for the relocations").0
}

fn info(ctx: &Ctx, r: &DynRel) -> Result<u64, String> {
    let Some(sym) = r.sym else {
        return Ok(r.ty as u64);
    };
    match ctx.dynsym.index.get(&sym) {
        Some(&i) => Ok(((i as u64) << 32) | r.ty as u64),
        None => Err(format!(
            "internal error: '{}' needs a dynamic relocation but is not in .dynsym",
            ctx.symbols[sym].display()
        )),
    }
}

/// `.rela.plt`: JUMP_SLOT for imports, IRELATIVE (the resolver as addend) for IFUNCs.
pub fn rela_plt(ctx: &Linked, buf: &mut [u8]) -> Result<(), String> {
    let entries = relas(buf, ctx.got.plt.len());
    for (i, (e, &t)) in entries.iter_mut().zip(&ctx.got.plt).enumerate() {
        let slot = ctx.got.gotplt_slot_addr(&ctx.sections, i as u32);
        let r = match t {
            Target::Global(id) if ctx.is_preemptible(t) => {
                DynRel { offset: slot, ty: elf::R_X86_64_JUMP_SLOT, sym: Some(id), addend: 0 }
            }
            _ => DynRel { offset: slot, ty: elf::R_X86_64_IRELATIVE, sym: None, addend: ctx.raw_value(t) as i64 },
        };
        *e = rela(r.offset, info(ctx, &r)?, r.addend);
    }
    Ok(())
}

/// `.rela.dyn`: RELATIVE relocations first (DT_RELACOUNT lets the loader apply them in a tight
/// loop), each group sorted by address: deterministic whatever the thread count.
pub fn rela_dyn(ctx: &Ctx, mut rels: Vec<DynRel>, buf: &mut [u8]) -> Result<(), String> {
    use rayon::prelude::*;
    // Sorted and written on every thread (cxx-big: 104k relocations, 11 ms on one).
    rels.par_sort_unstable_by_key(|r| (r.ty != elf::R_X86_64_RELATIVE, r.offset, r.ty, r.sym));
    if rels.len() * RELA_SIZE != buf.len() {
        return Err(format!(
            "internal error: {} dynamic relocations were written but {} were counted",
            rels.len(),
            buf.len() / RELA_SIZE
        ));
    }
    const PER_TASK: usize = 8192;
    buf.par_chunks_mut(RELA_SIZE * PER_TASK).zip(rels.par_chunks(PER_TASK)).try_for_each(|(out, rels)| {
        for (e, r) in relas(out, rels.len()).iter_mut().zip(rels) {
            *e = rela(r.offset, info(ctx, r)?, r.addend);
        }
        Ok(())
    })
}

pub fn dynamic(ctx: &Linked, buf: &mut [u8]) {
    let layout = ctx.layout;
    let (entries, _) = pod::slice_from_bytes_mut::<Dyn64<LE>>(buf, layout.dynamic.len()).expect("room for .dynamic");
    for (e, &(tag, v)) in entries.iter_mut().zip(&layout.dynamic) {
        let value = match v {
            DynValue::Value(v) => v,
            DynValue::SectionAddr(s) => ctx.sections[s].addr,
            DynValue::SectionSize(s) => ctx.sections[s].size,
            DynValue::Symbol(id) => ctx.addr.global[id],
        };
        *e = Dyn64 { d_tag: U64::new(LE, tag as u64), d_val: U64::new(LE, value) };
    }
}

/// `.hash` (SysV): one bucket per symbol, chains linking symbols that share a bucket.
pub fn sysv_hash(ctx: &Ctx, buf: &mut [u8]) {
    let n = ctx.dynsym.symbols.len() + 1;
    let nbucket = n.max(1);
    put32(buf, 0, nbucket as u32);
    put32(buf, 4, n as u32);
    let mut buckets = vec![0u32; nbucket];
    let mut chains = vec![0u32; n];
    for (i, &id) in ctx.dynsym.symbols.iter().enumerate() {
        let b = crate::synthetic::dynamic::elf_hash(ctx.symbols[id].name) as usize % nbucket;
        chains[i + 1] = buckets[b];
        buckets[b] = i as u32 + 1;
    }
    for (i, v) in buckets.iter().chain(chains.iter()).enumerate() {
        put32(buf, 8 + 4 * i, *v);
    }
}

/// `.eh_frame_hdr`: a pointer to `.eh_frame` and a table of (code address, FDE address) sorted by
/// code address, both relative to the header, for the unwinder's binary search.
pub fn eh_frame_hdr(ctx: &Linked, hdr_addr: u64, buf: &mut [u8]) -> Result<(), String> {
    let eh_frame = ctx.sections.iter().find(|s| s.name == ".eh_frame" && s.content == Content::Inputs);
    let eh_addr = eh_frame.map_or(0, |s| s.addr);
    let mut table: Vec<(i64, i64)> = Vec::new();
    if let Some(os) = eh_frame {
        for &SectionRef { file: f, index: s } in &os.members {
            let (Some(eh), Some(sec_addr)) = (ctx.split_eh_frame(f, s), ctx.section_addr(f, s)) else {
                continue;
            };
            let relas = ctx.objects[f].sections[s as usize].relas;
            for p in &eh.pieces {
                let (Some(r), Some(out_off)) = (p.pc_rel, p.out_off) else {
                    continue;
                };
                if !matches!(p.kind, crate::sections::eh_frame::PieceKind::Fde { .. }) {
                    continue;
                }
                let rel = &relas[r as usize];
                let t: Target = ctx.target(f, rel.r_sym(object::LittleEndian, false));
                let pc = ctx.value(t) as i64 + rel.r_addend.get(object::LittleEndian);
                table.push((pc - hdr_addr as i64, (sec_addr + out_off as u64) as i64 - hdr_addr as i64));
            }
        }
    }
    if 12 + 8 * table.len() != buf.len() {
        return Err(format!(
            "internal error: .eh_frame_hdr has {} entries but room for {}",
            table.len(),
            (buf.len() - 12) / 8
        ));
    }
    table.sort_unstable();
    buf[0..4].copy_from_slice(&[1, 0x1b, 0x03, 0x3b]);
    put32(buf, 4, (eh_addr as i64 - (hdr_addr as i64 + 4)) as u32);
    put32(buf, 8, table.len() as u32);
    for (i, &(pc, fde)) in table.iter().enumerate() {
        put32(buf, 12 + 8 * i, pc as u32);
        put32(buf, 16 + 8 * i, fde as u32);
    }
    Ok(())
}

/// The build-id note's header; the descriptor is filled by `fill_build_id` once every other byte
/// of the output is final.
pub fn build_id_header(buf: &mut [u8]) {
    let desc = buf.len() as u32 - 16;
    let header = NoteHeader64 {
        n_namesz: U32::new(LE, 4),
        n_descsz: U32::new(LE, desc),
        n_type: U32::new(LE, elf::NT_GNU_BUILD_ID),
    };
    buf[0..12].copy_from_slice(pod::bytes_of(&header));
    buf[12..16].copy_from_slice(b"GNU\0");
}

/// Build-ids hash the output in chunks of this size, then hash the chunk digests in order: the same
/// bytes give the same id whatever the thread count, and a window can be hashed (and freed) as soon
/// as it is final.
pub const BUILD_ID_CHUNK: usize = 1 << 20;

/// Whether `style` is computed from the output's bytes.
fn hashed(style: &crate::args::BuildId) -> bool {
    matches!(style, crate::args::BuildId::Sha1 | crate::args::BuildId::Md5)
}

/// The digests of consecutive chunks (`data` starts on a chunk boundary).
///
/// `sha1` and `md5` name the id's size (20 and 16 bytes), as in lld since D121531, which computes
/// both with BLAKE3 truncated to that size: a build-id must be unique, not a particular digest (the
/// tree of chunk digests is not the SHA-1 of the file in lld or here either). SHA-1 with the CPU's
/// SHA extensions was 7% of cxx-big's CPU (perf, 51 MB output); BLAKE3 hashes 8 blocks at once
/// with AVX2.
pub fn chunk_digests(style: &crate::args::BuildId, data: &[u8]) -> Vec<[u8; 32]> {
    use rayon::prelude::*;
    if !hashed(style) {
        return Vec::new();
    }
    data.par_chunks(BUILD_ID_CHUNK).map(|c| *blake3::hash(c).as_bytes()).collect()
}

/// `chunk_digests` of `data` with the `patches` (offset, bytes) in place of what `data` holds there
/// (sections the kernel copies into the file, absent from the buffer). Patches are sorted and
/// disjoint.
pub fn chunk_digests_patched(style: &crate::args::BuildId, data: &[u8], patches: &[(u64, &[u8])]) -> Vec<[u8; 32]> {
    use rayon::prelude::*;
    if patches.is_empty() || !hashed(style) {
        return chunk_digests(style, data);
    }
    let chunks = data.len().div_ceil(BUILD_ID_CHUNK);
    (0..chunks)
        .into_par_iter()
        .map(|c| {
            let (start, end) = (c * BUILD_ID_CHUNK, ((c + 1) * BUILD_ID_CHUNK).min(data.len()));
            let mut h = blake3::Hasher::new();
            let mut at = start;
            for &(off, bytes) in patches {
                let (p_start, p_end) = (off as usize, off as usize + bytes.len());
                if p_end <= start || p_start >= end {
                    continue;
                }
                let (from, to) = (p_start.max(start), p_end.min(end));
                h.update(&data[at..from]);
                h.update(&bytes[from - p_start..to - p_start]);
                at = to;
            }
            h.update(&data[at..end]);
            *h.finalize().as_bytes()
        })
        .collect()
}

/// The build-id descriptor from the chunk digests of the whole file (in order).
pub fn build_id(style: &crate::args::BuildId, digests: &[[u8; 32]]) -> Result<Vec<u8>, String> {
    use crate::args::BuildId;
    Ok(match style {
        BuildId::None => Vec::new(),
        BuildId::Hex(h) => h.clone(),
        BuildId::Uuid => {
            let mut b = [0u8; 16];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b))
                .map_err(|e| format!("cannot read /dev/urandom for --build-id=uuid: {e}"))?;
            b[6] = (b[6] & 0x0f) | 0x40;
            b[8] = (b[8] & 0x3f) | 0x80;
            b.to_vec()
        }
        BuildId::Sha1 | BuildId::Md5 => {
            let mut h = blake3::Hasher::new();
            digests.iter().for_each(|d| {
                h.update(d);
            });
            h.finalize().as_bytes()[..crate::layout::build_id_len(style) as usize].to_vec()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::BuildId;

    #[test]
    fn build_id_sizes_and_sensitivity() {
        let data: Vec<u8> = (0..3 * BUILD_ID_CHUNK + 100).map(|i| (i * 7 % 251) as u8).collect();
        let d = chunk_digests(&BuildId::Sha1, &data);
        assert_eq!(d.len(), 4, "one digest per started chunk");
        let sha1 = build_id(&BuildId::Sha1, &d).unwrap();
        let md5 = build_id(&BuildId::Md5, &d).unwrap();
        assert_eq!((sha1.len(), md5.len()), (20, 16));
        // One byte changed in the last, short chunk changes the id.
        let mut other = data.clone();
        *other.last_mut().unwrap() ^= 1;
        assert_ne!(build_id(&BuildId::Sha1, &chunk_digests(&BuildId::Sha1, &other)).unwrap(), sha1);
        assert!(chunk_digests(&BuildId::Uuid, &data).is_empty());
    }

    #[test]
    fn patched_digests_equal_digests_of_the_patched_bytes() {
        let data: Vec<u8> = (0..2 * BUILD_ID_CHUNK + 10).map(|i| (i % 253) as u8).collect();
        // A patch straddling the first chunk boundary and one inside the last chunk.
        let (a, b) = (vec![0xaa; 64], vec![0x55; 5]);
        let patches: Vec<(u64, &[u8])> = vec![(BUILD_ID_CHUNK as u64 - 32, &a), (2 * BUILD_ID_CHUNK as u64 + 2, &b)];
        let mut expect = data.clone();
        for &(off, bytes) in &patches {
            expect[off as usize..off as usize + bytes.len()].copy_from_slice(bytes);
        }
        assert_eq!(chunk_digests_patched(&BuildId::Sha1, &data, &patches), chunk_digests(&BuildId::Sha1, &expect));
    }
}
