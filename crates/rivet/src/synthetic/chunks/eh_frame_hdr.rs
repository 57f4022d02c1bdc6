//! `.eh_frame_hdr` (`--eh-frame-hdr`): a pointer to `.eh_frame` and a table of (code address, FDE
//! address) sorted by code address, both relative to the header, for the unwinder's binary search.
use super::{put32, Chunk, Header, Sizing, Writing};
use crate::ctx::{Ctx, Target};
use crate::diag::Result;
use crate::ids::SectionRef;
use crate::sections::eh_frame::PieceKind;
use crate::sections::output::Content;
use crate::synthetic::DynRel;
use object::elf;
use object::LittleEndian as LE;

pub struct EhFrameHdr;

impl Chunk for EhFrameHdr {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".eh_frame_hdr", sh_type: elf::SHT_PROGBITS, flags: elf::SHF_ALLOC as u64, align: 4, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let ctx = s.ctx;
        if !ctx.config.eh_frame_hdr || !ctx.sections.iter().any(|s| s.name == ".eh_frame") {
            return None;
        }
        let fdes: u64 = ctx.eh.values().map(|e| e.fde_count as u64).sum();
        Some(12 + 8 * fdes)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let ctx = w.linked;
        let hdr_addr = w.place.addr;
        let eh_frame = ctx.sections.position(|s| s.name == ".eh_frame" && s.content == Content::Inputs);
        let eh_addr = eh_frame.map_or(0, |s| ctx.layout.addr(s));
        let eh_frame = eh_frame.map(|s| &ctx.sections[s]);
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
                    if !matches!(p.kind, PieceKind::Fde { .. }) {
                        continue;
                    }
                    let rel = &relas[r as usize];
                    let t: Target = ctx.target(f, rel.r_sym(LE, false));
                    let pc = (ctx.value(t) as i64).wrapping_add(rel.r_addend.get(LE));
                    let pc_rel = pc.wrapping_sub(hdr_addr as i64);
                    // The table holds 32-bit offsets from itself (lld's check and words).
                    crate::ensure!(
                        i32::try_from(pc_rel).is_ok(),
                        "{}:(.eh_frame): PC offset is too large: {pc_rel:#x}",
                        ctx.objects[f].name
                    );
                    table.push((pc_rel, (sec_addr + out_off as u64) as i64 - hdr_addr as i64));
                }
            }
        }
        if 12 + 8 * table.len() != buf.len() {
            crate::bail!(
                "internal error: .eh_frame_hdr has {} entries but room for {}",
                table.len(),
                (buf.len() - 12) / 8
            );
        }
        // FDEs come in runs already sorted (each object's, each output section's): the stable sort
        // merges runs instead of partitioning. Entries are distinct, so it sorts as unstable would.
        table.sort();
        buf[0..4].copy_from_slice(&[1, 0x1b, 0x03, 0x3b]);
        put32(buf, 4, (eh_addr as i64 - (hdr_addr as i64 + 4)) as u32);
        put32(buf, 8, table.len() as u32);
        for (i, &(pc, fde)) in table.iter().enumerate() {
            put32(buf, 12 + 8 * i, pc as u32);
            put32(buf, 16 + 8 * i, fde as u32);
        }
        Ok(Vec::new())
    }
}
