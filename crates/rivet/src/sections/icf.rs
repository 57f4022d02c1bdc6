//! Identical code folding (`--icf=all|safe`): executable input sections and exception tables
//! (`.gcc_except_table*`) with the same bytes, flags and unwind records, and equivalent
//! relocations (same types, offsets and addends, targets that are the same symbol or sections that
//! are themselves folded together) become one; the others are dropped and every symbol they defined
//! resolves into the copy that is kept (the first in output order), which takes the largest
//! alignment of the sections folded into it.
//!
//! A function's `.eh_frame` FDE is part of what is compared: its CIE (bytes and relocations, so
//! the personality routine), its own bytes after the CIE pointer, and its relocations other than
//! the initial location, among them the pointer to its LSDA. Exception tables are candidates
//! themselves, so two functions whose tables are alike still fold, and two whose tables catch
//! different types do not (as in mold; lld instead never folds a function that has an LSDA).
//!
//! Equivalence is found by partition refinement: sections start in classes keyed by their bytes
//! and relocation shapes, then are split by the classes of their relocation targets until nothing
//! changes. A target that another module may interpose (a preemptible symbol of a shared library)
//! is compared by its symbol, not by where it is defined here, as lld does. `safe` leaves out code
//! whose address is taken (referenced other than by a call, `Arch::R_CALL`), so function pointers
//! of distinct functions stay distinct; sections defining symbols that the output exports are never
//! folded.
use crate::ctx::{Resolved, Target};
use crate::ids::{FileId, SectionRef, SymbolId};
use crate::input::object::{ObjSection, Rela};
use crate::resolve::Def;
use crate::sections::eh_frame::{self, PieceKind};
use object::elf;
use object::LittleEndian as LE;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

/// Where a relocation points: an input section (and offset), or something that cannot fold.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Place {
    Section(SectionRef, u64),
    Global(SymbolId),
    Other(FileId, u32),
}

fn place(ctx: &Resolved, f: FileId, sym: u32) -> Place {
    let (file, idx) = match ctx.target(f, sym) {
        Target::Local(lf, ls) => (lf, ls as usize),
        // Code calling a preemptible symbol may end up somewhere else at run time than code
        // calling another symbol defined at the same place: only the same symbol is the same.
        t @ Target::Global(id) if ctx.is_preemptible(t) => return Place::Global(id),
        Target::Global(id) => match ctx.symbols.get(id).map(|s| s.def) {
            Some(Def::Defined { file, sym }) => (file, sym as usize),
            _ => return Place::Global(id),
        },
    };
    let obj = &ctx.objects[file];
    match obj.sym_shndx(idx) {
        Some(sec) => Place::Section(SectionRef::new(file, sec), obj.syms[idx].st_value.get(LE)),
        None => Place::Other(file, idx as u32),
    }
}

/// A relocation target as refinement compares it: a candidate section by its class (and the
/// offset in it), anything else by where it is.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum TargetKey {
    Candidate(usize, u64),
    Place(Place),
}

/// A relocation as compared before its target is: offset (from the start of its section or
/// unwind record), type, addend.
type Shape = (u64, u32, i64);

fn shape(r: &Rela, base: u64) -> Shape {
    (r.r_offset.get(LE) - base, r.r_type(LE, false), r.r_addend.get(LE))
}

/// One FDE of a candidate section, as folding compares it.
struct Frame<'a> {
    /// The CIE record and its relocations (the personality routine).
    cie: &'a [u8],
    cie_relocs: Vec<Shape>,
    /// The FDE after its length and CIE pointer, and its relocations but the initial location's.
    fde: &'a [u8],
    fde_relocs: Vec<Shape>,
    /// Where in the section the FDE starts (its initial location: symbol value plus addend).
    start: (u32, i64),
    /// The targets of `cie_relocs` and then of `fde_relocs`.
    targets: Vec<Place>,
}

/// An FDE's bytes after its CIE pointer without the `DW_CFA_nop`s (zero bytes) that pad it to its
/// alignment: the assembler pads the last FDE of a file differently from the others, and the
/// padding says nothing. The initial location and the address range (the first 8 bytes) are kept
/// whole; what follows them (augmentation data, then instructions) only loses trailing zeros, which
/// in a well-formed record are nops. FDEs are compared only when their CIEs are equal, so both
/// sides have the same fields.
fn without_nop_padding(fde: &[u8]) -> &[u8] {
    let fixed = fde.len().min(8);
    let end = fde[fixed..].iter().rposition(|&b| b != 0).map_or(fixed, |i| fixed + i + 1);
    &fde[..end]
}

fn is_exception_table(name: &[u8]) -> bool {
    name == b".gcc_except_table" || name.starts_with(b".gcc_except_table.")
}

/// The FDEs that describe candidate sections (`index`: candidate → position), each with the
/// position of its candidate, in `.eh_frame` order. A `.eh_frame` that does not parse is skipped
/// here; splitting it later reports the error.
fn frames<'a>(ctx: &Resolved<'a>, index: &HashMap<SectionRef, usize>) -> Vec<(usize, Frame<'a>)> {
    let per_file: Vec<Vec<(usize, Frame<'a>)>> = ctx
        .file_order
        .par_iter()
        .map(|&f| {
            let obj = &ctx.objects[f];
            let mut out = Vec::new();
            for sec in obj.sections.iter().filter(|s| s.live && s.is_eh_frame()) {
                let Ok(eh) = eh_frame::split(sec, &obj.name, |_| true) else { continue };
                let mut relocs: Vec<Vec<usize>> = vec![Vec::new(); eh.pieces.len()];
                for (i, r) in sec.relas.iter().enumerate() {
                    if let Some(p) = eh_frame::piece_at(&eh.pieces, r.r_offset.get(LE)) {
                        relocs[p].push(i);
                    }
                }
                let bytes = |p: &eh_frame::Piece| &sec.data[p.in_off as usize..(p.in_off + p.size) as usize];
                for (pi, p) in eh.pieces.iter().enumerate() {
                    let (PieceKind::Fde { cie }, Some(pc)) = (p.kind, p.pc_rel) else { continue };
                    let pc_rela = &sec.relas[pc as usize];
                    let Place::Section(target, value) = place(ctx, f, pc_rela.r_sym(LE, false)) else { continue };
                    let Some(&cand) = index.get(&target) else { continue };
                    let ci = eh_frame::piece_at(&eh.pieces, cie as u64).expect("split checked the CIE pointer");
                    let cie_piece = &eh.pieces[ci];
                    let rels = |piece: usize, base: u32| {
                        relocs[piece]
                            .iter()
                            .filter(|&&r| r != pc as usize)
                            .map(|&r| (shape(&sec.relas[r], base as u64), place(ctx, f, sec.relas[r].r_sym(LE, false))))
                            .collect::<Vec<_>>()
                    };
                    let (cie_relocs, mut targets): (Vec<_>, Vec<_>) = rels(ci, cie_piece.in_off).into_iter().unzip();
                    let (fde_relocs, fde_targets): (Vec<_>, Vec<_>) = rels(pi, p.in_off).into_iter().unzip();
                    targets.extend(fde_targets);
                    let frame = Frame {
                        cie: bytes(cie_piece),
                        cie_relocs,
                        fde: without_nop_padding(&bytes(p)[8..]),
                        fde_relocs,
                        start: (pc_rela.r_type(LE, false), (value as i64).wrapping_add(pc_rela.r_addend.get(LE))),
                        targets,
                    };
                    out.push((cand, frame));
                }
            }
            out
        })
        .collect();
    per_file.into_iter().flatten().collect()
}

/// A class of identical sections: the one kept and the ones folded into it, in output order.
pub struct Folded {
    pub kept: SectionRef,
    pub removed: Vec<SectionRef>,
}

/// `--print-icf-sections`: each class as lld prints it, `selected section FILE:(NAME)` and then
/// `  removing identical section FILE:(NAME)` for each folded copy.
/// What `--print-icf-sections` and `--verbose` ask to be told, on stderr (as --print-gc-sections;
/// lld writes both to stdout).
pub fn print(ctx: &Resolved, folds: &[Folded]) {
    if ctx.config.print_icf_sections {
        eprint!("{}", report(ctx, folds));
    }
    if ctx.config.verbose {
        let n: usize = folds.iter().map(|g| g.removed.len()).sum();
        eprintln!("rivet: --icf={}: {n} sections folded", format!("{:?}", ctx.config.icf).to_lowercase());
    }
}

pub fn report(ctx: &Resolved, folds: &[Folded]) -> String {
    let name = |r: SectionRef| {
        format!("{}:({})", ctx.objects[r.file].name, String::from_utf8_lossy(ctx.objects.section_name(r)))
    };
    let mut out = String::new();
    for g in folds {
        out.push_str(&format!("selected section {}\n", name(g.kept)));
        for &r in &g.removed {
            out.push_str(&format!("  removing identical section {}\n", name(r)));
        }
    }
    out
}

/// Folds identical sections; returns the classes that had more than one member.
pub fn fold<A: crate::arch::Arch>(ctx: &mut Resolved, safe: bool) -> Vec<Folded> {
    let exported = |ctx: &Resolved, f: FileId, s: u32| {
        let obj = &ctx.objects[f];
        obj.global_ids.iter().enumerate().any(|(i, &id)| {
            let Some(sym) = ctx.symbols.get(id) else { return false };
            sym.def == (Def::Defined { file: f, sym: (obj.first_global + i) as u32 })
                && obj.sym_shndx(obj.first_global + i) == Some(s)
                && (ctx.kind == crate::ctx::OutputKind::Shared || ctx.config.export_dynamic)
                && sym.visibility == elf::STV_DEFAULT
        })
    };
    // Candidates: live, allocated, read-only executable code but .init/.fini, and exception tables
    // (only the unwinder reads them, so their addresses never matter).
    let mut cands: Vec<SectionRef> = Vec::new();
    for &f in &ctx.file_order {
        let obj = &ctx.objects[f];
        for (s, sec) in obj.sections.iter().enumerate() {
            let alloc = sec.flags & elf::SHF_ALLOC as u64 != 0;
            let name = obj.section_name(s);
            let code = sec.flags & elf::SHF_EXECINSTR as u64 != 0
                && sec.flags & elf::SHF_WRITE as u64 == 0
                && name != b".init"
                && name != b".fini";
            let ok = sec.live
                && alloc
                && (code || is_exception_table(name))
                && sec.sh_type == elf::SHT_PROGBITS
                && sec.size > 0;
            if ok && !exported(ctx, f, s as u32) {
                cands.push(SectionRef::new(f, s as u32));
            }
        }
    }
    if safe {
        // Address-taken code: referenced by anything but a call from a live allocated section
        // (unwind records do not count).
        let mut taken = std::collections::HashSet::new();
        for (f, obj) in ctx.objects.iter_enumerated() {
            for sec in obj.sections.iter().filter(|s| s.live && s.flags & elf::SHF_ALLOC as u64 != 0) {
                if sec.is_eh_frame() {
                    continue;
                }
                for r in sec.relas {
                    if r.r_type(LE, false) != A::R_CALL {
                        if let Place::Section(target, _) = place(ctx, f, r.r_sym(LE, false)) {
                            taken.insert(target);
                        }
                    }
                }
            }
        }
        cands.retain(|&r| !taken.contains(&r) || is_exception_table(ctx.objects.section_name(r)));
    }
    let index: HashMap<SectionRef, usize> = cands.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let mut unwind: Vec<Vec<Frame>> = (0..cands.len()).map(|_| Vec::new()).collect();
    for (i, frame) in frames(ctx, &index) {
        unwind[i].push(frame);
    }
    // Relocation targets, once: the section's, then those of its FDEs.
    let targets: Vec<Vec<Place>> = cands
        .par_iter()
        .zip(&unwind)
        .map(|(&c, frames)| {
            let own = ctx.objects[c].relas.iter().map(|r| place(ctx, c.file, r.r_sym(LE, false)));
            own.chain(frames.iter().flat_map(|fr| fr.targets.iter().copied())).collect()
        })
        .collect();
    // Initial classes: bytes, flags, relocation shapes and unwind records.
    let shape = |i: usize| {
        let sec = &ctx.objects[cands[i]];
        let relocs: Vec<Shape> = sec.relas.iter().map(|r| shape(r, 0)).collect();
        let frames: Vec<_> =
            unwind[i].iter().map(|fr| (fr.cie, &fr.cie_relocs, fr.fde, &fr.fde_relocs, fr.start)).collect();
        (sec.data, sec.flags, relocs, frames)
    };
    let mut class: Vec<usize> = {
        let mut ids: HashMap<_, usize> = HashMap::default();
        (0..cands.len())
            .map(|i| {
                let n = ids.len();
                *ids.entry(shape(i)).or_insert(n)
            })
            .collect()
    };
    // Refine by the targets' classes until the number of classes stops growing.
    let mut count = class.iter().max().map_or(0, |m| m + 1);
    loop {
        let key = |i: usize| -> (usize, Vec<TargetKey>) {
            let t = targets[i]
                .iter()
                .map(|p| match *p {
                    Place::Section(target, off) => match index.get(&target) {
                        Some(&j) => TargetKey::Candidate(class[j], off),
                        None => TargetKey::Place(*p),
                    },
                    other => TargetKey::Place(other),
                })
                .collect();
            (class[i], t)
        };
        let keys: Vec<_> = (0..cands.len()).into_par_iter().map(key).collect();
        let mut ids: HashMap<_, usize> = HashMap::default();
        let next: Vec<usize> = keys
            .into_iter()
            .map(|k| {
                let n = ids.len();
                *ids.entry(k).or_insert(n)
            })
            .collect();
        let n = ids.len();
        class = next;
        if n == count {
            break;
        }
        count = n;
    }
    // Keep the first section of each class; fold the rest into it.
    let mut groups: Vec<Folded> = Vec::new();
    let mut group_of: HashMap<usize, usize> = HashMap::default();
    for (i, &c) in cands.iter().enumerate() {
        match group_of.get(&class[i]) {
            None => {
                group_of.insert(class[i], groups.len());
                groups.push(Folded { kept: c, removed: Vec::new() });
            }
            Some(&g) => groups[g].removed.push(c),
        }
    }
    groups.retain(|g| !g.removed.is_empty());
    for g in &groups {
        let mut align = 1;
        for &r in &g.removed {
            let sec = &mut ctx.objects[r];
            sec.live = false;
            sec.marks |= ObjSection::FOLDED;
            align = align.max(sec.align());
            ctx.objects[r.file].folds.push((r.index, g.kept));
        }
        // The copy kept stands for all of them: it must satisfy the strictest alignment (code may
        // rely on it, e.g. C++ member function pointers need an even address).
        let kept = &mut ctx.objects[g.kept];
        kept.align_log2 = kept.align_log2.max(align.trailing_zeros() as u8);
    }
    for obj in ctx.objects.iter_mut() {
        obj.folds.sort_unstable_by_key(|&(i, _)| i);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fde_padding_is_not_compared() {
        let a = [1, 0, 0, 0, 0x10, 0, 0, 0, 0, 0x0e, 0x10];
        let b = [1, 0, 0, 0, 0x10, 0, 0, 0, 0, 0x0e, 0x10, 0, 0, 0];
        assert_eq!(without_nop_padding(&a), without_nop_padding(&b));
        // The address range keeps its zero bytes; an instruction that differs still differs.
        assert_eq!(without_nop_padding(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0]), &[1, 0, 0, 0, 0, 0, 0, 0][..]);
        assert_ne!(without_nop_padding(&a), without_nop_padding(&[1, 0, 0, 0, 0x10, 0, 0, 0, 0, 0x0e, 0x20]));
    }
}
