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
}

/// Sections newly found reachable, whose relocations are still to be followed.
type Frontier = Vec<SectionRef>;

/// A marking task's stack is split when it holds twice this many sections.
const STEAL_AT: usize = 32;

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

    /// Follows relocations from `frontier` until nothing new is reached (the live set is the
    /// reachable set whatever the order). Each task works through a stack of its own and hands
    /// half of it to an idle thread when it grows: no barrier per level of the reference graph
    /// (rust-big's has 105 levels, most of them a few hundred sections wide).
    fn drain(&self, frontier: Frontier) {
        rayon::scope(|s| {
            for chunk in frontier.chunks(STEAL_AT) {
                let work = chunk.to_vec();
                s.spawn(move |s| self.work_through(s, work));
            }
        });
    }

    fn work_through<'s>(&'s self, s: &rayon::Scope<'s>, mut work: Frontier) {
        while let Some(r) = work.pop() {
            self.mark_relocations(r, &mut work);
            if work.len() > 2 * STEAL_AT {
                let half = work.split_off(work.len() / 2);
                s.spawn(move |s| self.work_through(s, half));
            }
        }
    }

    /// Follows live FDEs (and their CIEs) to the LSDAs and personality routines they name.
    /// `eh` holds every `.eh_frame`, split once; each round is one pass over their relocations,
    /// each mapped to its record by binary search (scanning all relocations once per FDE made
    /// gc 17% of a warm rust-debug link's samples in perf). Returns what that made alive.
    fn follow_eh_frames(&self, eh: &[(SectionRef, eh_frame::EhSection)]) -> Frontier {
        let ctx = self.ctx;
        eh.par_iter()
            .with_max_len(4)
            .fold(Vec::new, |mut out, (r, split)| {
                let (f, relas) = (&r.file, ctx.objects[*r].relas);
                // Which records are reached: live FDEs and the CIEs they use.
                let mut reached = vec![false; split.pieces.len()];
                for (i, p) in split.pieces.iter().enumerate() {
                    let (PieceKind::Fde { cie }, Some(r)) = (p.kind, p.pc_rel) else { continue };
                    if self.target_live(ctx.target(*f, relas[r as usize].r_sym(LE, false))) {
                        reached[i] = true;
                        if let Some(c) = split.pieces.iter().position(|c| c.in_off == cie) {
                            reached[c] = true;
                        }
                    }
                }
                for rel in relas {
                    let Some(i) = eh_frame::piece_at(&split.pieces, rel.r_offset.get(LE)) else { continue };
                    if reached[i] {
                        self.mark_target(ctx.target(*f, rel.r_sym(LE, false)), &mut out);
                    }
                }
                out
            })
            .reduce(Vec::new, join)
    }

    fn target_live(&self, t: Target) -> bool {
        let (f, sym) = match t {
            Target::Local(f, s) => (f, s),
            Target::Global(id) => match self.ctx.symbols[id].def {
                Def::Defined { file, sym } => (file, sym),
                _ => return true,
            },
        };
        match self.ctx.objects[f].sym_shndx(sym as usize) {
            Some(sec) => self.live[f][sec as usize].load(Relaxed) == MARKED,
            None => true,
        }
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
    // collected, and their references keep nothing alive; .eh_frame is handled by
    // follow_eh_frames.
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
    let live: Live = live.into();
    let mut m = Marker { ctx, live, used_shared, by_c_name };
    let mut frontier: Frontier = roots_found.into_iter().flatten().collect();
    // Sections a linker script's KEEP names.
    for &r in kept {
        let state = m.live[r.file][r.index as usize].get_mut();
        if *state == UNMARKED {
            *state = MARKED;
            frontier.push(r);
        }
    }
    for name in roots {
        if let Some(id) = ctx.by_name.get(&ctx.symbols, name.as_bytes()) {
            m.mark_target(Target::Global(id), &mut frontier);
        }
    }
    let eh: Vec<(SectionRef, eh_frame::EhSection)> = ctx
        .objects
        .par_iter()
        .enumerate()
        .with_max_len(1)
        .flat_map_iter(|(f, obj)| {
            let f = FileId::new(f);
            obj.sections.iter().enumerate().filter(|(_, sec)| sec.live && sec.is_eh_frame()).filter_map(
                move |(s, sec)| {
                    eh_frame::split(sec, &obj.name, |_| true).ok().map(|e| (SectionRef::new(f, s as u32), e))
                },
            )
        })
        .collect();
    loop {
        m.drain(frontier);
        frontier = m.follow_eh_frames(&eh);
        if frontier.is_empty() {
            break;
        }
    }
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
