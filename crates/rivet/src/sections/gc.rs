//! `--gc-sections`: takes the resolved objects and marks every allocated input section reachable
//! from the roots through relocations; the rest are dropped. Roots, as GNU ld and lld keep them:
//! the entry point and `-u` symbols, init/fini arrays and `.init`/`.fini`, `.ctors`/`.dtors`, notes,
//! `SHF_GNU_RETAIN` sections. A section whose name is a C identifier is kept when live code refers
//! to its `__start_`/`__stop_` symbols (lld's `-z start-stop-gc`, GNU ld's default), not always.
//! `.eh_frame` is not a root: an FDE keeps its LSDA and personality alive only if the code it
//! describes is alive. A shared library's symbol that no live code or root refers to counts as
//! unreferenced afterwards (for `--as-needed` and `.dynsym`).
use crate::ctx::{Resolved, Target};
use crate::ids::{FileId, IdVec, SectionRef, SymbolId};
use crate::input::object::ObjSection;
use crate::resolve::Def;
use crate::sections::eh_frame::{self, PieceKind};
use object::elf;
use object::LittleEndian as LE;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::Relaxed};

/// One state per input section (`UNMARKED`, `MARKED`, `DISCARDED`), marked once when the section
/// is found reachable: marking runs on every thread (serial, the gc sections phase of a rust-debug
/// link took 19-23 ms on one core, in `--print-timing`). A byte per section that says also whether
/// the section could be marked at all, so that marking reads no section record: `ObjSection::live`
/// read first was 89% of `mark`'s samples in perf (a cache miss per relocation), at 64 bytes a record.
type Live = IdVec<FileId, Vec<AtomicU8>>;

/// Not reached (yet).
const UNMARKED: u8 = 0;
/// Reached: kept.
const MARKED: u8 = 1;
/// Not in the link before collection (a COMDAT copy another file owns): never marked.
const DISCARDED: u8 = 2;

struct Marker<'c, 'a> {
    ctx: &'c Resolved<'a>,
    live: Live,
    /// Per symbol: a shared library's symbol that live code or a root refers to.
    used_shared: IdVec<SymbolId, AtomicBool>,
    /// Sections whose names are C identifiers, by name: a reference to `__start_NAME` or
    /// `__stop_NAME` keeps them all.
    by_c_name: rustc_hash::FxHashMap<&'c [u8], Vec<SectionRef>>,
    fdes: Fdes,
}

/// Sections newly found reachable, whose relocations are still to be followed.
type Frontier = Vec<SectionRef>;

fn join(mut a: Frontier, mut b: Frontier) -> Frontier {
    a.append(&mut b);
    a
}

impl Marker<'_, '_> {
    /// Marks a section; the thread that marks it first queues it in `out`.
    fn mark(&self, r: SectionRef, out: &mut Frontier) {
        let state = &self.live[r.file][r.index as usize];
        if state.load(Relaxed) == UNMARKED && state.swap(MARKED, Relaxed) == UNMARKED {
            out.push(r);
        }
    }

    fn mark_target(&self, t: Target, out: &mut Frontier) {
        let (f, sym) = match t {
            Target::Local(f, s) => (f, s),
            Target::Global(id) => match self.ctx.symbols[id].def {
                Def::Defined { file, sym } => (file, sym),
                Def::Shared { .. } => {
                    self.used_shared[id].store(true, Relaxed);
                    return;
                }
                Def::Undefined | Def::Lazy { .. } => {
                    let name = self.ctx.symbols[id].name;
                    let section = crate::resolve::start_stop_section(name).map(|(s, _)| s);
                    for &r in section.and_then(|s| self.by_c_name.get(s)).into_iter().flatten() {
                        self.mark(r, out);
                    }
                    return;
                }
                _ => return,
            },
        };
        if let Some(sec) = self.ctx.objects[f].sym_shndx(sym as usize) {
            self.mark(SectionRef::new(f, sec), out);
        }
    }

    fn mark_relocations(&self, r: SectionRef, out: &mut Frontier) {
        for rel in self.ctx.objects[r].relas {
            self.mark_target(self.ctx.target(r.file, rel.r_sym(LE, false)), out);
        }
    }

    /// Follows relocations from `frontier` until nothing new is reached, one parallel pass per
    /// level (the live set is the reachable set whatever the order).
    fn drain(&self, mut frontier: Frontier) {
        while !frontier.is_empty() {
            frontier = frontier
                .par_iter()
                .with_max_len(16)
                .fold(Vec::new, |mut out, &r| {
                    self.mark_relocations(r, &mut out);
                    self.mark_fdes(r, &mut out);
                    out
                })
                .reduce(Vec::new, join);
        }
    }

    /// Follows the FDEs that describe section `r` (now live) to what they and their CIEs refer to:
    /// LSDAs and personality routines.
    fn mark_fdes(&self, r: SectionRef, out: &mut Frontier) {
        let list = &self.fdes.by_section[r.file];
        let first = list.partition_point(|e| e.section < r.index);
        for e in list[first..].iter().take_while(|e| e.section == r.index) {
            self.mark_fde(e, out);
        }
    }

    fn mark_fde(&self, e: &Fde, out: &mut Frontier) {
        let relas = self.ctx.objects[e.eh].relas;
        for &i in &self.fdes.relocations[e.eh.file][e.start as usize..e.end as usize] {
            self.mark_target(self.ctx.target(e.eh.file, relas[i as usize].r_sym(LE, false)), out);
        }
    }
}

/// An FDE that describes a section (`Fdes::by_section`): the relocations of the FDE and of its
/// CIE, `start..end` in `Fdes::relocations` of the file that holds `.eh_frame` section `eh`.
#[derive(Clone, Copy)]
struct Fde {
    section: u32,
    eh: SectionRef,
    start: u32,
    end: u32,
}

/// Every `.eh_frame` record read once, before marking, and keyed by the code it describes: a
/// section found live follows its FDEs at once. (Rounds of marking and then a pass over all FDEs
/// for those whose code had become live took 3 passes of 7 ms each on one core for rust-big.)
struct Fdes {
    /// Per file, the FDEs describing its sections, in section order.
    by_section: IdVec<FileId, Vec<Fde>>,
    /// Per file, the indexes of its `.eh_frame` sections' relocations that FDEs and CIEs hold.
    relocations: IdVec<FileId, Vec<u32>>,
    /// FDEs whose code is not in a section of an object (an absolute address, a shared library's
    /// symbol): always followed.
    unplaced: Vec<Fde>,
}

/// One file's `.eh_frame` records as `Fdes::read` finds them: the FDEs of its own sections, those
/// of other files' sections (by file), those of code outside any section, and the relocations.
type FileFdes = (Vec<Fde>, Vec<(FileId, Fde)>, Vec<Fde>, Vec<u32>);

impl Fdes {
    fn read(ctx: &Resolved) -> Fdes {
        let per_file: Vec<FileFdes> = par_objects(&ctx.objects)
            .map(|(f, obj)| {
                let (mut own, mut foreign, mut unplaced, mut relocations) =
                    (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                for (s, sec) in obj.sections.iter().enumerate().filter(|(_, sec)| sec.live && sec.is_eh_frame()) {
                    // A section that does not split is reported when `.eh_frame` is built.
                    let Ok(split) = eh_frame::split(sec, &obj.name, |_| true) else { continue };
                    let eh = SectionRef::new(f, s as u32);
                    // Each record's relocations, as (record, relocation) in record order (the
                    // relocations nearly always come in order of their offsets already).
                    let mut by_piece: Vec<(u32, u32)> = (sec.relas.iter().enumerate())
                        .filter_map(|(i, rel)| {
                            let p = eh_frame::piece_at(&split.pieces, rel.r_offset.get(LE))?;
                            Some((p as u32, i as u32))
                        })
                        .collect();
                    by_piece.sort_unstable();
                    let of_piece = |p: usize| {
                        let start = by_piece.partition_point(|&(q, _)| (q as usize) < p);
                        by_piece[start..].iter().take_while(move |&&(q, _)| q as usize == p).map(|&(_, i)| i)
                    };
                    for (i, piece) in split.pieces.iter().enumerate() {
                        let (PieceKind::Fde { cie }, Some(pc)) = (piece.kind, piece.pc_rel) else { continue };
                        let start = relocations.len() as u32;
                        relocations.extend(of_piece(i));
                        // Records come in order of their offsets.
                        if let Ok(c) = split.pieces.binary_search_by_key(&cie, |c| c.in_off) {
                            relocations.extend(of_piece(c));
                        }
                        let end = relocations.len() as u32;
                        let described = match ctx.target(f, sec.relas[pc as usize].r_sym(LE, false)) {
                            Target::Local(file, sym) => Some((file, sym)),
                            Target::Global(id) => match ctx.symbols[id].def {
                                Def::Defined { file, sym } => Some((file, sym)),
                                _ => None,
                            },
                        };
                        let described = described.and_then(|(file, sym)| {
                            Some(SectionRef::new(file, ctx.objects[file].sym_shndx(sym as usize)?))
                        });
                        match described {
                            Some(r) => {
                                let fde = Fde { section: r.index, eh, start, end };
                                match r.file == f {
                                    true => own.push(fde),
                                    false => foreign.push((r.file, fde)),
                                }
                            }
                            None => unplaced.push(Fde { section: 0, eh, start, end }),
                        }
                    }
                }
                (own, foreign, unplaced, relocations)
            })
            .collect();
        let mut by_section = IdVec::with_capacity(per_file.len());
        let mut relocations = IdVec::with_capacity(per_file.len());
        let (mut foreign, mut unplaced) = (Vec::new(), Vec::new());
        for (own, far, none, relas) in per_file {
            by_section.push(own);
            relocations.push(relas);
            foreign.extend(far);
            unplaced.extend(none);
        }
        for (file, fde) in foreign {
            by_section[file].push(fde);
        }
        by_section.par_iter_mut().with_min_len(16).for_each(|list| list.sort_by_key(|e| e.section));
        Fdes { by_section, relocations, unplaced }
    }
}

/// The objects with their ids, on every core (at least 16 objects a task: most are small).
fn par_objects<'c, 'a>(
    objects: &'c crate::input::object::Objects<'a>,
) -> impl IndexedParallelIterator<Item = (FileId, &'c crate::input::object::ObjectFile<'a>)> {
    objects.par_iter().with_min_len(16).enumerate().map(|(f, obj)| (FileId::new(f), obj))
}

/// The live allocated sections whose names are C identifiers, by name: what a reference to
/// `__start_NAME` or `__stop_NAME` keeps.
pub(crate) fn by_c_name<'c>(ctx: &'c Resolved) -> rustc_hash::FxHashMap<&'c [u8], Vec<SectionRef>> {
    // Found on every core (few sections have such names), gathered in object order.
    let found: Vec<Vec<(&[u8], SectionRef)>> = par_objects(&ctx.objects)
        .map(|(f, obj)| {
            obj.sections
                .iter()
                .enumerate()
                .filter(|(_, sec)| {
                    sec.live && sec.flags & elf::SHF_ALLOC as u64 != 0 && sec.has(ObjSection::C_IDENTIFIER)
                })
                .map(|(s, _)| (obj.section_name(s), SectionRef::new(f, s as u32)))
                .collect()
        })
        .collect();
    let mut by_c_name: rustc_hash::FxHashMap<&[u8], Vec<SectionRef>> = Default::default();
    for (name, r) in found.into_iter().flatten() {
        by_c_name.entry(name).or_default().push(r);
    }
    by_c_name
}

/// Marks and sweeps. Returns the dropped sections for `--print-gc-sections`.
pub fn collect(ctx: &mut Resolved, roots: &[String], kept: &[SectionRef]) -> Vec<SectionRef> {
    // Each object's marks and roots, on every core: non-allocated sections (debug info) are never
    // collected, and their references keep nothing alive; .eh_frame's are followed from the
    // code each FDE describes (`Fdes`).
    let (live, roots_found): (Vec<Vec<AtomicU8>>, Vec<Vec<SectionRef>>) = par_objects(&ctx.objects)
        .map(|(f, obj)| {
            let mut found = Vec::new();
            let marks = obj
                .sections
                .iter()
                .enumerate()
                .map(|(s, sec)| {
                    let alloc = sec.flags & elf::SHF_ALLOC as u64 != 0;
                    let root = sec.live && !sec.is_eh_frame() && (!alloc || sec.has(ObjSection::GC_ROOT));
                    if root && alloc {
                        found.push(SectionRef::new(f, s as u32));
                    }
                    AtomicU8::new(match (root, sec.live) {
                        (true, _) => MARKED,
                        (false, true) => UNMARKED,
                        (false, false) => DISCARDED,
                    })
                })
                .collect();
            (marks, found)
        })
        .unzip();
    let used_shared = (0..ctx.symbols.len()).map(|_| AtomicBool::new(false)).collect();
    let by_c_name = by_c_name(ctx);
    let fdes = Fdes::read(ctx);
    let live: Live = live.into();
    let mut m = Marker { ctx, live, used_shared, by_c_name, fdes };
    let mut frontier: Frontier = roots_found.into_iter().flatten().collect();
    // The FDEs of non-allocated roots (the allocated ones are followed from the frontier) and
    // those of code outside any section.
    let non_alloc_roots: Vec<Frontier> = m
        .fdes
        .by_section
        .par_iter()
        .enumerate()
        .with_min_len(16)
        .map(|(f, list)| {
            let (f, mut out) = (FileId::new(f), Vec::new());
            for e in list {
                let r = SectionRef::new(f, e.section);
                let alloc = ctx.objects[r].flags & elf::SHF_ALLOC as u64 != 0;
                if !alloc && m.live[f][e.section as usize].load(Relaxed) == MARKED {
                    m.mark_fde(e, &mut out);
                }
            }
            out
        })
        .collect();
    frontier.extend(non_alloc_roots.into_iter().flatten());
    for e in &m.fdes.unplaced {
        m.mark_fde(e, &mut frontier);
    }
    // Sections a linker script's KEEP names.
    for &r in kept {
        let state = m.live[r.file][r.index as usize].get_mut();
        if *state == UNMARKED {
            *state = MARKED;
            frontier.push(r);
        }
    }
    for name in roots {
        if let Some(&id) = ctx.by_name.get(&ctx.symbols, name.as_bytes()) {
            m.mark_target(Target::Global(id), &mut frontier);
        }
    }
    m.drain(frontier);
    let (live, used_shared) = (m.live, m.used_shared);
    // A library's symbol that only collected code refers to is not a reference any more: an
    // --as-needed library used only by such code is not needed (lld's rule), and the symbol needs
    // no .dynsym entry.
    ctx.symbols.par_iter_mut().zip(used_shared.par_iter()).with_min_len(4096).for_each(|(s, used)| {
        if matches!(s.def, Def::Shared { .. }) && !used.load(Relaxed) {
            s.referenced = false;
        }
    });
    let dropped: Vec<Vec<SectionRef>> = ctx
        .objects
        .par_iter_mut()
        .zip(live.par_iter())
        .with_min_len(16)
        .enumerate()
        .map(|(f, (obj, live))| {
            let f = FileId::new(f);
            let mut dropped = Vec::new();
            for (s, sec) in obj.sections.iter_mut().enumerate() {
                if live[s].load(Relaxed) == UNMARKED && !sec.is_eh_frame() {
                    sec.live = false;
                    dropped.push(SectionRef::new(f, s as u32));
                }
            }
            dropped
        })
        .collect();
    dropped.into_iter().flatten().collect()
}

/// `--print-gc-sections`: each dropped section that is not empty, in GNU ld's words, on stderr, or with
/// `--print-gc-sections=FILE` (lld's form) into FILE (`-`: standard output).
pub fn print_dropped(ctx: &Resolved, dropped: &[SectionRef]) -> crate::diag::Result<()> {
    use std::io::Write;
    let Some(to) = &ctx.config.print_gc_sections else { return Ok(()) };
    let mut text = String::new();
    // GNU ld names only sections with contents.
    for &r in dropped.iter().filter(|&&r| ctx.objects[r].size > 0) {
        let obj = &ctx.objects[r.file];
        text.push_str(&format!(
            "rivet: removing unused section '{}' in file '{}'\n",
            String::from_utf8_lossy(ctx.objects.section_name(r)),
            obj.name
        ));
    }
    let written = match to {
        None => std::io::stderr().write_all(text.as_bytes()),
        Some(p) if p.as_os_str() == "-" => std::io::stdout().write_all(text.as_bytes()),
        Some(p) => std::fs::write(p, text),
    };
    written.map_err(|e| {
        let to = to.as_ref().map_or("standard error".into(), |p| p.display().to_string());
        crate::fatal!("cannot write --print-gc-sections output to {to}: {e}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots() {
        assert!(crate::input::object::is_gc_root(b".init_array.00101", elf::SHT_INIT_ARRAY, 3));
        assert!(
            !crate::input::object::is_gc_root(b"my_section", elf::SHT_PROGBITS, 2),
            "kept only through __start_/__stop_"
        );
        assert!(crate::input::object::is_gc_root(b".note.ABI-tag", elf::SHT_NOTE, 2));
        assert!(!crate::input::object::is_gc_root(b".text.unused", elf::SHT_PROGBITS, 6));
        assert!(crate::input::object::is_gc_root(b".text.kept", elf::SHT_PROGBITS, 6 | elf::SHF_GNU_RETAIN as u64));
        assert!(!crate::input::object::is_c_identifier(b".data"));
        assert!(!crate::input::object::is_c_identifier(b"1abc"));
    }
}
