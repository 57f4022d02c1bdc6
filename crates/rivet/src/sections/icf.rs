//! Identical code folding (`--icf=all|safe`): executable input sections with the same bytes and
//! equivalent relocations (same types, offsets and addends, targets that are the same symbol or
//! sections that are themselves folded together) become one; the others are dropped and every
//! symbol they defined resolves into the copy that is kept (the first in output order).
//!
//! Equivalence is found by partition refinement: sections start in classes keyed by their bytes
//! and relocation shapes, then are split by the classes of their relocation targets until nothing
//! changes. `safe` leaves out sections whose address is taken (referenced other than by a call,
//! `R_X86_64_PLT32`), so function pointers of distinct functions stay distinct; sections defining
//! symbols that the output exports are never folded.
use crate::ctx::{Ctx, Target};
use crate::resolve::Def;
use object::elf;
use object::LittleEndian as LE;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

/// Where a relocation points: an input section (and offset), or something that cannot fold.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Place {
    Section(u32, u32, u64),
    Global(u32),
    Other(u32, u32),
}

fn place(ctx: &Ctx, f: u32, sym: u32) -> Place {
    let (file, idx) = match ctx.target(f, sym) {
        Target::Local(lf, ls) => (lf, ls as usize),
        Target::Global(id) => match ctx.symbols.get(id as usize).map(|s| s.def) {
            Some(Def::Defined { file, sym }) => (file, sym as usize),
            _ => return Place::Global(id),
        },
    };
    let obj = &ctx.objects[file as usize];
    match obj.sym_shndx(idx) {
        Some(sec) => Place::Section(file, sec, obj.syms[idx].st_value.get(LE)),
        None => Place::Other(file, idx as u32),
    }
}

/// Folds identical sections; returns how many were folded away.
pub fn fold(ctx: &mut Ctx, safe: bool) -> usize {
    let exported = |ctx: &Ctx, f: u32, s: u32| {
        let obj = &ctx.objects[f as usize];
        obj.global_ids.iter().enumerate().any(|(i, &id)| {
            let Some(sym) = ctx.symbols.get(id as usize) else { return false };
            sym.def == (Def::Defined { file: f, sym: (obj.first_global + i) as u32 })
                && obj.sym_shndx(obj.first_global + i) == Some(s)
                && (ctx.kind == crate::ctx::OutputKind::Shared || ctx.config.export_dynamic)
                && sym.visibility == elf::STV_DEFAULT
        })
    };
    // Candidates: live, allocated, executable, read-only, not .init/.fini.
    let mut cands: Vec<(u32, u32)> = Vec::new();
    for &f in &ctx.file_order {
        for (s, sec) in ctx.objects[f as usize].sections.iter().enumerate() {
            let x = sec.flags & elf::SHF_EXECINSTR as u64 != 0 && sec.flags & elf::SHF_ALLOC as u64 != 0;
            let ok = sec.live
                && x
                && sec.flags & elf::SHF_WRITE as u64 == 0
                && sec.sh_type == elf::SHT_PROGBITS
                && sec.size > 0
                && sec.name != b".init"
                && sec.name != b".fini";
            if ok && !exported(ctx, f, s as u32) {
                cands.push((f, s as u32));
            }
        }
    }
    if safe {
        // Address-taken sections: referenced by anything but a call from a live allocated section.
        let mut taken = std::collections::HashSet::new();
        for (f, obj) in ctx.objects.iter().enumerate() {
            for sec in obj.sections.iter().filter(|s| s.live && s.flags & elf::SHF_ALLOC as u64 != 0) {
                if sec.name == b".eh_frame" {
                    continue;
                }
                for r in sec.relas {
                    if r.r_type(LE, false) != elf::R_X86_64_PLT32 {
                        if let Place::Section(tf, ts, _) = place(ctx, f as u32, r.r_sym(LE, false)) {
                            taken.insert((tf, ts));
                        }
                    }
                }
            }
        }
        cands.retain(|c| !taken.contains(c));
    }
    let index: HashMap<(u32, u32), usize> = cands.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    // Relocation targets, once.
    let targets: Vec<Vec<Place>> = cands
        .par_iter()
        .map(|&(f, s)| {
            let sec = &ctx.objects[f as usize].sections[s as usize];
            sec.relas.iter().map(|r| place(ctx, f, r.r_sym(LE, false))).collect()
        })
        .collect();
    // Initial classes: bytes and relocation shapes.
    let shape = |i: usize| {
        let (f, s) = cands[i];
        let sec = &ctx.objects[f as usize].sections[s as usize];
        let relocs: Vec<(u64, u32, i64)> =
            sec.relas.iter().map(|r| (r.r_offset.get(LE), r.r_type(LE, false), r.r_addend.get(LE))).collect();
        (sec.data, sec.align, sec.flags, relocs)
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
        let key = |i: usize| -> (usize, Vec<(Option<usize>, Place)>) {
            let t = targets[i]
                .iter()
                .map(|p| match *p {
                    Place::Section(tf, ts, off) => match index.get(&(tf, ts)) {
                        Some(&j) => (Some(class[j]), Place::Section(0, 0, off)),
                        None => (None, *p),
                    },
                    other => (None, other),
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
    let mut keeper: HashMap<usize, (u32, u32)> = HashMap::default();
    let mut folded = 0;
    for (i, &(f, s)) in cands.iter().enumerate() {
        match keeper.get(&class[i]) {
            None => {
                keeper.insert(class[i], (f, s));
            }
            Some(&kept) => {
                let sec = &mut ctx.objects[f as usize].sections[s as usize];
                sec.live = false;
                sec.folded_into = Some(kept);
                folded += 1;
            }
        }
    }
    folded
}
