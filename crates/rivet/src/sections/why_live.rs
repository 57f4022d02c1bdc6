//! `--why-live=GLOB` (lld's option): for each global symbol whose name matches and that survived
//! `--gc-sections`, why: a chain of `>>> kept live by X` lines back to a root, on standard output.
//!
//! It runs after the collection, only when asked, so marking stays as fast as without it: one
//! sequential breadth-first walk from the same roots, in the same order (root sections in file
//! order, a script's KEEP, root symbols, then the relocations of each section reached, then
//! `.eh_frame`'s references from live code), records for each live section the first reference
//! that reached it. Each reference is named as lld names it: the symbol whose extent (value, size)
//! holds the referring place, else the referring section (`file:(section)`); a section reached
//! through a symbol other than the one asked about is named too, then that symbol.
use crate::ctx::{Resolved, Target};
use crate::ids::SectionRef;
use crate::input::object::ObjSection;
use crate::resolve::Def;
use crate::sections::eh_frame::{self, PieceKind};
use object::elf;
use object::LittleEndian as LE;
use std::collections::{HashMap, VecDeque};

/// Why a live section is live.
#[derive(Clone, Copy)]
enum Reason {
    /// A root by itself (an init array, a note, `SHF_GNU_RETAIN`, a script's KEEP, debug info).
    Root,
    /// Holds a root symbol (the entry point, `-u`, an export).
    RootSymbol(Target),
    /// Reached by a relocation at `off` of section `from`, against `via`.
    Reference { from: SectionRef, off: u64, via: Target },
}

/// What a chain line names.
#[derive(Clone, Copy, PartialEq)]
enum Item {
    Symbol(Target),
    Section(SectionRef),
}

struct Walk<'c, 'a> {
    ctx: &'c Resolved<'a>,
    reason: HashMap<SectionRef, Reason>,
    /// A shared library's symbol: the first live reference to it.
    shared: HashMap<crate::ids::SymbolId, (SectionRef, u64)>,
    queue: VecDeque<SectionRef>,
    by_c_name: rustc_hash::FxHashMap<&'c [u8], Vec<SectionRef>>,
}

impl<'c, 'a> Walk<'c, 'a> {
    fn reach(&mut self, r: SectionRef, why: Reason) {
        let sec = &self.ctx.objects[r];
        if sec.live && !self.reason.contains_key(&r) {
            self.reason.insert(r, why);
            if sec.flags & elf::SHF_ALLOC as u64 != 0 {
                self.queue.push_back(r);
            }
        }
    }

    /// The sections `t` keeps (as the collection's `mark_target` finds them).
    fn reach_target(&mut self, t: Target, why: impl Fn(Target) -> Reason, from: Option<(SectionRef, u64)>) {
        let (f, sym) = match t {
            Target::Local(f, s) => (f, s),
            Target::Global(id) => match self.ctx.symbols[id].def {
                Def::Defined { file, sym } => (file, sym),
                Def::Shared { .. } => {
                    if let Some(at) = from {
                        self.shared.entry(id).or_insert(at);
                    }
                    return;
                }
                Def::Undefined | Def::Lazy { .. } => {
                    let name = self.ctx.symbols[id].name;
                    let section = crate::resolve::start_stop_section(name).map(|(s, _)| s);
                    let targets = section.and_then(|s| self.by_c_name.get(s)).cloned().unwrap_or_default();
                    for r in targets {
                        self.reach(r, why(t));
                    }
                    return;
                }
                _ => return,
            },
        };
        if let Some(sec) = self.ctx.objects[f].sym_shndx(sym as usize) {
            self.reach(SectionRef::new(f, sec), why(t));
        }
    }

    fn run(&mut self, roots: &[String], kept: &[SectionRef]) {
        let ctx = self.ctx;
        for (f, obj) in ctx.objects.iter_enumerated() {
            for (s, sec) in obj.sections.iter().enumerate() {
                let alloc = sec.flags & elf::SHF_ALLOC as u64 != 0;
                if sec.live && !sec.is_eh_frame() && (!alloc || sec.has(ObjSection::GC_ROOT)) {
                    self.reach(SectionRef::new(f, s as u32), Reason::Root);
                }
            }
        }
        for &r in kept {
            self.reach(r, Reason::Root);
        }
        for name in roots {
            if let Some(id) = ctx.by_name.get(&ctx.symbols, name.as_bytes()) {
                self.reach_target(Target::Global(id), Reason::RootSymbol, None);
            }
        }
        let eh: Vec<(SectionRef, eh_frame::EhSection)> = ctx
            .objects
            .iter_enumerated()
            .flat_map(|(f, obj)| {
                obj.sections.iter().enumerate().filter(|(_, sec)| sec.live && sec.is_eh_frame()).filter_map(
                    move |(s, sec)| {
                        eh_frame::split(sec, &obj.name, |_| true).ok().map(|e| (SectionRef::new(f, s as u32), e))
                    },
                )
            })
            .collect();
        loop {
            while let Some(r) = self.queue.pop_front() {
                for rel in ctx.objects[r].relas {
                    let off = rel.r_offset.get(LE);
                    let t = ctx.target(r.file, rel.r_sym(LE, false));
                    // A reference to a place in a section (through its section symbol) is to the
                    // symbol whose extent holds that place, where there is one (lld's rule).
                    let named = self.named(t).then_some(t).or_else(|| {
                        let Target::Local(f, s) = t else { return None };
                        let target = self.section_of(t)?;
                        let at = self.ctx.objects[f].syms[s as usize].st_value.get(LE) as i64 + rel.r_addend.get(LE);
                        self.enclosing(target, at.max(0) as u64)
                    });
                    let via = named.unwrap_or(t);
                    self.reach_target(t, |_| Reason::Reference { from: r, off, via }, Some((r, off)));
                }
            }
            // What live code's FDEs name (LSDAs, personality routines): reached from that code.
            for (r, split) in &eh {
                let relas = ctx.objects[*r].relas;
                for (i, p) in split.pieces.iter().enumerate() {
                    let (PieceKind::Fde { .. }, Some(pc)) = (p.kind, p.pc_rel) else { continue };
                    let Some(code) = self.section_of(ctx.target(r.file, relas[pc as usize].r_sym(LE, false))) else {
                        continue;
                    };
                    if !self.reason.contains_key(&code) {
                        continue;
                    }
                    for rel in relas {
                        if eh_frame::piece_at(&split.pieces, rel.r_offset.get(LE)) == Some(i) {
                            let t = ctx.target(r.file, rel.r_sym(LE, false));
                            self.reach_target(t, |via| Reason::Reference { from: code, off: 0, via }, Some((code, 0)));
                        }
                    }
                }
            }
            if self.queue.is_empty() {
                break;
            }
        }
    }

    fn section_of(&self, t: Target) -> Option<SectionRef> {
        let (f, sym) = match t {
            Target::Local(f, s) => (f, s),
            Target::Global(id) => match self.ctx.symbols[id].def {
                Def::Defined { file, sym } => (file, sym),
                _ => return None,
            },
        };
        self.ctx.objects[f].sym_shndx(sym as usize).map(|s| SectionRef::new(f, s))
    }

    /// The symbol whose extent holds `off` in section `r` (a global one preferred), if any.
    fn enclosing(&self, r: SectionRef, off: u64) -> Option<Target> {
        let obj = &self.ctx.objects[r.file];
        let mut found = None;
        for (i, sym) in obj.syms.iter().enumerate() {
            let (value, size) = (sym.st_value.get(LE), sym.st_size.get(LE));
            let kind = sym.st_info & 0xf;
            if size == 0 || kind == elf::STT_SECTION || kind == elf::STT_FILE || obj.sym_shndx(i) != Some(r.index) {
                continue;
            }
            if (value..value.saturating_add(size)).contains(&off) {
                let t = self.ctx.target(r.file, i as u32);
                if matches!(t, Target::Global(_)) {
                    return Some(t);
                }
                found.get_or_insert(t);
            }
        }
        found
    }

    /// The lines after `live symbol: NAME`.
    fn chain(&self, start: Target, out: &mut String) {
        let line = |out: &mut String, item: Item| {
            let text = match item {
                Item::Symbol(t) => self.ctx.name_of(t),
                Item::Section(r) => {
                    format!(
                        "{}:({})",
                        self.ctx.objects[r.file].name,
                        String::from_utf8_lossy(self.ctx.objects.section_name(r))
                    )
                }
            };
            out.push_str(&format!(">>> kept live by {text}\n"));
        };
        if let Target::Global(id) = start {
            if let Some(&(from, off)) = self.shared.get(&id) {
                let next = self.enclosing(from, off).map_or(Item::Section(from), Item::Symbol);
                line(out, next);
                return self.follow(next, out, &line);
            }
        }
        self.follow(Item::Symbol(start), out, &line)
    }

    /// From an item already named (or the symbol asked about), the reasons back to a root.
    fn follow(&self, mut item: Item, out: &mut String, line: &dyn Fn(&mut String, Item)) {
        for _ in 0..10_000 {
            let (sec, asked) = match item {
                Item::Symbol(t) => match self.section_of(t) {
                    Some(s) => (s, Some(t)),
                    None => return,
                },
                Item::Section(s) => (s, None),
            };
            let Some(&why) = self.reason.get(&sec) else { return };
            let via = match why {
                Reason::Root => None,
                Reason::RootSymbol(t) | Reason::Reference { via: t, .. } => Some(t),
            };
            // Reached through the symbol itself: its section needs no line of its own.
            let through_itself = asked.is_some() && via == asked;
            if asked.is_some() && !through_itself {
                line(out, Item::Section(sec));
            }
            if let Some(v) = via.filter(|&v| !through_itself && self.named(v)) {
                line(out, Item::Symbol(v));
            }
            match why {
                Reason::Root | Reason::RootSymbol(_) => return,
                Reason::Reference { from, off, .. } => {
                    item = self.enclosing(from, off).map_or(Item::Section(from), Item::Symbol);
                    line(out, item);
                }
            }
        }
    }

    /// A symbol worth naming in a chain: not a section symbol.
    fn named(&self, t: Target) -> bool {
        match t {
            Target::Global(_) => true,
            Target::Local(f, s) => self.ctx.objects[f].syms[s as usize].st_info & 0xf != elf::STT_SECTION,
        }
    }
}

/// `--why-live`: the report, or None when not asked.
pub fn explain(ctx: &Resolved, roots: &[String], kept: &[SectionRef]) -> Option<String> {
    let globs = &ctx.config.why_live;
    if globs.is_empty() {
        return None;
    }
    let by_c_name = super::gc::by_c_name(ctx);
    let mut walk = Walk { ctx, reason: HashMap::new(), shared: HashMap::new(), queue: VecDeque::new(), by_c_name };
    walk.run(roots, kept);
    let mut out = String::new();
    for (id, s) in ctx.symbols.iter_enumerated() {
        if !globs.iter().any(|g| crate::input::version_script::glob_match(g.as_bytes(), s.name)) {
            continue;
        }
        let live = match s.def {
            Def::Defined { file, sym } => match ctx.objects[file].sym_shndx(sym as usize) {
                Some(sec) => ctx.objects[file].sections[sec as usize].live,
                None => true, // absolute
            },
            Def::Shared { .. } => s.referenced,
            Def::Lazy { .. } => false,
            _ => true, // undefined, common, linker-defined: not in a section that could be dropped
        };
        if live {
            out.push_str(&format!("live symbol: {}\n", ctx.name_of(Target::Global(id))));
            if matches!(s.def, Def::Defined { .. } | Def::Shared { .. }) {
                walk.chain(Target::Global(id), &mut out);
            }
        }
    }
    Some(out)
}
