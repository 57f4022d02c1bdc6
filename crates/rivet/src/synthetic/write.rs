//! The bytes of linker-made sections. Each writer takes the finished layout and fills the slice
//! layout sized for it; anything that does not fit is a bug caught by a length check.
use crate::ctx::{Ctx, Target};
use crate::layout::{DynValue, Layout};
use crate::sections::output::Content;
use crate::synthetic::{GotKind, GOTPLT_RESERVED};
use object::elf;

fn put64(buf: &mut [u8], off: usize, v: u64) {
    buf[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

fn put32(buf: &mut [u8], off: usize, v: u32) {
    buf[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

/// `.got`: addresses (IFUNCs: their PLT stub, the canonical address) or thread-pointer offsets.
/// Returns the RELATIVE relocations a static PIE needs for address entries.
pub fn got(ctx: &Ctx, buf: &mut [u8]) -> Vec<(u64, u64)> {
    let base = ctx.sections[ctx.got.got_sec.unwrap()].addr;
    let mut rels = Vec::new();
    for (i, &(t, kind)) in ctx.got.got.iter().enumerate() {
        let v = match kind {
            GotKind::Addr => ctx.value(t),
            GotKind::TpOff => ctx.tpoff(t) as u64,
        };
        put64(buf, 8 * i, v);
        if kind == GotKind::Addr && ctx.is_pie() && !ctx.is_absolute(t) {
            rels.push((base + 8 * i as u64, v));
        }
    }
    rels
}

/// `.got.plt`: `_DYNAMIC` in the first word, then one slot per IFUNC holding its resolver until
/// the IRELATIVE relocation replaces it with the chosen implementation.
pub fn got_plt(ctx: &Ctx, buf: &mut [u8]) {
    let dynamic = ctx.got.dynamic_sec.map_or(0, |d| ctx.sections[d].addr);
    put64(buf, 0, dynamic);
    for (i, &t) in ctx.got.plt.iter().enumerate() {
        put64(buf, 8 * (GOTPLT_RESERVED as usize + i), ctx.raw_value(t));
    }
}

/// `.plt` for IFUNCs: `jmp *slot(%rip)` padded with a multi-byte nop to 16 bytes.
pub fn plt(ctx: &Ctx, buf: &mut [u8]) {
    for i in 0..ctx.got.plt.len() {
        let stub = ctx.got.plt_entry_addr(&ctx.sections, i as u32);
        let slot = ctx.got.gotplt_slot_addr(&ctx.sections, i as u32);
        let rel = (slot as i64 - (stub as i64 + 6)) as i32;
        let e = &mut buf[16 * i..16 * i + 16];
        e[0..2].copy_from_slice(&[0xff, 0x25]);
        e[2..6].copy_from_slice(&rel.to_le_bytes());
        e[6..16].copy_from_slice(&[0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0]);
    }
}

fn rela(buf: &mut [u8], i: usize, offset: u64, ty: u32, addend: u64) {
    put64(buf, 24 * i, offset);
    put64(buf, 24 * i + 8, ty as u64);
    put64(buf, 24 * i + 16, addend);
}

/// `.rela.plt`: one IRELATIVE per IFUNC slot, the resolver's address as addend.
pub fn rela_plt(ctx: &Ctx, buf: &mut [u8]) {
    for (i, &t) in ctx.got.plt.iter().enumerate() {
        let slot = ctx.got.gotplt_slot_addr(&ctx.sections, i as u32);
        rela(buf, i, slot, elf::R_X86_64_IRELATIVE, ctx.raw_value(t));
    }
}

/// `.rela.dyn`: RELATIVE relocations sorted by address (deterministic whatever the thread count,
/// and the order glibc's DT_RELACOUNT fast path expects).
pub fn rela_dyn(mut rels: Vec<(u64, u64)>, buf: &mut [u8]) -> Result<(), String> {
    rels.sort_unstable();
    if rels.len() * 24 != buf.len() {
        return Err(format!(
            "internal error: {} RELATIVE relocations were written but {} were counted",
            rels.len(),
            buf.len() / 24
        ));
    }
    for (i, &(off, addend)) in rels.iter().enumerate() {
        rela(buf, i, off, elf::R_X86_64_RELATIVE, addend);
    }
    Ok(())
}

pub fn dynamic(ctx: &Ctx, layout: &Layout, buf: &mut [u8]) {
    for (i, &(tag, v)) in layout.dynamic.iter().enumerate() {
        let value = match v {
            DynValue::Value(v) => v,
            DynValue::SectionAddr(s) => ctx.sections[s].addr,
            DynValue::SectionSize(s) => ctx.sections[s].size,
        };
        put64(buf, 16 * i, tag as u64);
        put64(buf, 16 * i + 8, value);
    }
}

/// An empty GNU hash table: one bucket, no symbols (symoffset 1 skips the null symbol).
pub fn gnu_hash(buf: &mut [u8]) {
    put32(buf, 0, 1); // nbuckets
    put32(buf, 4, 1); // symoffset
    put32(buf, 8, 1); // bloom size
    put32(buf, 12, 6); // bloom shift
}

/// `.eh_frame_hdr`: a pointer to `.eh_frame` and a table of (code address, FDE address) sorted by
/// code address, both relative to the header, for the unwinder's binary search.
pub fn eh_frame_hdr(ctx: &Ctx, hdr_addr: u64, buf: &mut [u8]) -> Result<(), String> {
    let eh_frame = ctx
        .sections
        .iter()
        .find(|s| s.name == ".eh_frame" && s.content == Content::Inputs);
    let eh_addr = eh_frame.map_or(0, |s| s.addr);
    let mut table: Vec<(i64, i64)> = Vec::new();
    if let Some(os) = eh_frame {
        for &(f, s) in &os.members {
            let (Some(eh), Some(sec_addr)) = (ctx.eh.get(&(f, s)), ctx.section_addr(f, s)) else {
                continue;
            };
            let relas = ctx.objects[f as usize].sections[s as usize].relas;
            for p in &eh.pieces {
                let (Some(r), true) = (p.pc_rel, p.out_off != crate::sections::eh_frame::DROPPED)
                else {
                    continue;
                };
                if !matches!(p.kind, crate::sections::eh_frame::PieceKind::Fde { .. }) {
                    continue;
                }
                let rel = &relas[r as usize];
                let t: Target = ctx.target(f, rel.r_sym(object::LittleEndian, false));
                let pc = ctx.value(t) as i64 + rel.r_addend.get(object::LittleEndian);
                table.push((
                    pc - hdr_addr as i64,
                    (sec_addr + p.out_off as u64) as i64 - hdr_addr as i64,
                ));
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
    put32(buf, 0, 4);
    put32(buf, 4, desc);
    put32(buf, 8, elf::NT_GNU_BUILD_ID);
    buf[12..16].copy_from_slice(b"GNU\0");
}

/// Hashes the output in 1 MiB chunks in parallel and then hashes the chunk digests: the same
/// bytes give the same id whatever the thread count.
pub fn fill_build_id(
    style: &crate::args::BuildId,
    out: &mut [u8],
    desc_off: usize,
    desc_len: usize,
) -> Result<(), String> {
    use crate::args::BuildId;
    use rayon::prelude::*;
    let desc: Vec<u8> = match style {
        BuildId::None => return Ok(()),
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
        BuildId::Sha1 => {
            use sha1::Digest;
            let digests: Vec<_> = out.par_chunks(1 << 20).map(sha1::Sha1::digest).collect();
            let mut h = sha1::Sha1::new();
            for d in digests {
                h.update(d);
            }
            h.finalize().to_vec()
        }
        BuildId::Md5 => {
            use md5::Digest;
            let digests: Vec<_> = out.par_chunks(1 << 20).map(md5::Md5::digest).collect();
            let mut h = md5::Md5::new();
            for d in digests {
                h.update(d);
            }
            h.finalize().to_vec()
        }
    };
    out[desc_off..desc_off + desc_len].copy_from_slice(&desc[..desc_len]);
    Ok(())
}
