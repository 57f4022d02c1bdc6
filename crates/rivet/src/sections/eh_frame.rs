//! `.eh_frame`: takes an input `.eh_frame` section and gives its records (CIEs, FDEs) as pieces.
//! FDEs that describe code in discarded sections (a COMDAT copy another file owns) are dropped, so
//! the unwinder never sees a frame for code that is not in the output; the surviving FDEs have
//! their CIE pointers rewritten at write time, and `.eh_frame_hdr` is built from them.
use crate::diag::{Context, Result};
use crate::fatal;
use crate::input::object::{ObjSection, Rela};
use object::LittleEndian as LE;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieceKind {
    Cie,
    /// An FDE and the input offset of its CIE.
    Fde {
        cie: u32,
    },
    /// A zero-length record (crtend.o's end marker).
    Terminator,
}

#[derive(Clone, Copy, Debug)]
pub struct Piece {
    pub in_off: u32,
    pub size: u32,
    pub kind: PieceKind,
    /// Offset within this input section's output bytes (None: the record is dropped).
    pub out_off: Option<u32>,
    /// Index into the section's relocations of the FDE's initial-location relocation.
    pub pc_rel: Option<u32>,
}

pub struct EhSection {
    pub pieces: Vec<Piece>,
    pub size: u64,
    pub fde_count: u32,
}

fn read_u32(data: &[u8], off: usize) -> Option<u32> {
    data.get(off..off + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap()))
}

/// Splits `sec` into records and decides which survive. `target_live(rela)` says whether the code
/// an FDE's initial-location relocation points at is in the output. `file` names the object in
/// errors.
pub fn split(sec: &ObjSection, file: &str, target_live: impl Fn(&Rela) -> bool) -> Result<EhSection> {
    split_records(sec, target_live).context(".eh_frame").context(file)
}

fn split_records(sec: &ObjSection, target_live: impl Fn(&Rela) -> bool) -> Result<EhSection> {
    let data = sec.data;
    let mut pieces = Vec::new();
    // The CIEs' offsets, ascending (records come in order): an FDE's CIE is found by a binary
    // search, where a scan of the records before it took 3% of rust-big's instructions.
    let mut cies: Vec<u32> = Vec::new();
    let mut off = 0usize;
    while off < data.len() {
        let bad = |what: &str| fatal!("{what} at offset {off:#x}");
        let len = read_u32(data, off).ok_or_else(|| bad("truncated record length"))? as usize;
        if len == 0 {
            pieces.push(Piece {
                in_off: off as u32,
                size: 4,
                kind: PieceKind::Terminator,
                out_off: None,
                pc_rel: None,
            });
            off += 4;
            continue;
        }
        if len == 0xffff_ffff {
            return Err(bad("64-bit DWARF records are not supported"));
        }
        let size = 4 + len;
        if off + size > data.len() || len < 4 {
            return Err(bad("record runs past the end of the section"));
        }
        let id = read_u32(data, off + 4).unwrap();
        let kind = if id == 0 {
            cies.push(off as u32);
            PieceKind::Cie
        } else {
            let cie =
                (off + 4).checked_sub(id as usize).ok_or_else(|| bad("FDE's CIE pointer points before the section"))?;
            if cies.binary_search(&(cie as u32)).is_err() {
                return Err(bad("FDE's CIE pointer does not point at a CIE"));
            }
            PieceKind::Fde { cie: cie as u32 }
        };
        pieces.push(Piece { in_off: off as u32, size: size as u32, kind, out_off: None, pc_rel: None });
        off += size;
    }
    // Kept until the output is written: grown by doubling, the list is cut to its length (in
    // cxx-templates the lists held 8.4 MB for 5.7 MB of records).
    pieces.shrink_to_fit();
    attach_pc_relocations(&mut pieces, sec.relas);
    let mut out = 0u32;
    let mut fde_count = 0;
    for p in &mut pieces {
        let live = match (p.kind, p.pc_rel) {
            (PieceKind::Fde { .. }, Some(r)) => target_live(&sec.relas[r as usize]),
            _ => true,
        };
        if live {
            p.out_off = Some(out);
            out += p.size;
            // Only FDEs whose code address is known can be indexed by .eh_frame_hdr.
            if matches!(p.kind, PieceKind::Fde { .. }) && p.pc_rel.is_some() {
                fde_count += 1;
            }
        } else {
            p.out_off = None;
        }
    }
    Ok(EhSection { pieces, size: out as u64, fde_count })
}

/// The relocation at FDE offset +8 gives the FDE's initial location (the code it describes).
fn attach_pc_relocations(pieces: &mut [Piece], relas: &[Rela]) {
    for (i, r) in relas.iter().enumerate() {
        let off = r.r_offset.get(LE);
        if let Some(p) = piece_at(pieces, off) {
            let p = &mut pieces[p];
            if matches!(p.kind, PieceKind::Fde { .. }) && off == p.in_off as u64 + 8 && p.pc_rel.is_none() {
                p.pc_rel = Some(i as u32);
            }
        }
    }
}

/// The index of the piece that contains input offset `off`.
pub fn piece_at(pieces: &[Piece], off: u64) -> Option<usize> {
    let i = pieces.partition_point(|p| p.in_off as u64 <= off);
    if i == 0 {
        return None;
    }
    let p = &pieces[i - 1];
    (off < p.in_off as u64 + p.size as u64).then_some(i - 1)
}

/// Maps an input offset to its output offset within this section's output bytes; None when the
/// piece holding it was dropped. An offset at the very end maps to the end.
pub fn map_offset(eh: &EhSection, off: u64) -> Option<u64> {
    match piece_at(&eh.pieces, off) {
        Some(i) => {
            let p = &eh.pieces[i];
            p.out_off.map(|o| o as u64 + (off - p.in_off as u64))
        }
        None => Some(eh.size),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: u32, body: usize) -> Vec<u8> {
        let mut v = ((4 + body) as u32).to_le_bytes().to_vec();
        v.extend(id.to_le_bytes());
        v.extend(std::iter::repeat_n(0u8, body));
        v
    }

    fn section(data: &[u8]) -> ObjSection<'_> {
        ObjSection {
            sh_type: object::elf::SHT_PROGBITS,
            flags: 2,
            align_log2: 3,
            size: data.len() as u64,
            data,
            relas: &[],
            live: true,
            out: None,
            merge_index: None,
            name_len: 0,
            marks: ObjSection::EH_FRAME,
        }
    }

    #[test]
    fn splits_cie_fde_terminator() {
        let mut data = record(0, 12); // CIE at 0, 20 bytes
        data.extend(record(24, 16)); // FDE at 20: pointer field at 24 → CIE at 0
        data.extend([0, 0, 0, 0]);
        let eh = split(&section(&data), "t.o", |_| true).unwrap();
        assert_eq!(eh.pieces.len(), 3);
        assert_eq!(eh.pieces[1].kind, PieceKind::Fde { cie: 0 });
        assert_eq!(eh.pieces[2].kind, PieceKind::Terminator);
        assert_eq!(eh.size, data.len() as u64);
        // No relocation gives the FDE's code address, so .eh_frame_hdr cannot index it.
        assert_eq!(eh.fde_count, 0);
        assert_eq!(map_offset(&eh, 21), Some(21));
    }

    #[test]
    fn rejects_bad_cie_pointer_and_truncation() {
        let mut data = record(0, 12);
        data.extend(record(8, 16)); // points into the middle of the CIE
        assert!(split(&section(&data), "t.o", |_| true).is_err());
        let data = record(0, 12);
        assert!(split(&section(&data[..10]), "t.o", |_| true).is_err());
    }
}
