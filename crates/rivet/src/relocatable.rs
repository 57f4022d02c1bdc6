//! Relocatable output (`-r`): the objects of the link combined into one ET_REL object that a later
//! link takes as input. Input sections of the same name, type and flags are concatenated (each at
//! its alignment) into one output section; members of COMDAT groups stay sections of their own
//! and keep their group, so the final link can still drop duplicates. Relocations are rewritten
//! against the combined sections (a section symbol's addend gains the input section's offset) and
//! the symbol table is rebuilt: the null symbol, one section symbol per output section, every
//! object's local symbols, then each global once, as resolution decided it (defined, common,
//! undefined). Archives' members are pulled as in a final link.
//!
//! As in lld, a relocation against a section that the link discarded (the losing copy of a COMDAT
//! group, seen from `.eh_frame` or debug information) becomes `R_NONE` (type 0) against symbol 0;
//! the final link drops the frame description it belonged to.
use crate::arch::Arch;
use crate::ctx::{Resolved, Target};
use crate::diag::{Context, Result};
use crate::ids::{FileId, SectionRef, SymbolId};
use crate::input::object::{Rela, Sym};
use crate::resolve::Def;
use crate::{bail, ensure};
use object::elf;
use object::LittleEndian as LE;
use rustc_hash::FxHashMap as HashMap;

/// Section indices from here on do not fit `st_shndx`/`e_shnum` (ELF's extended numbering).
const SHN_LORESERVE: u32 = elf::SHN_LORESERVE as u32;

/// What an output section of the relocatable output holds.
enum Body {
    /// Input sections at their offsets.
    Inputs(Vec<(SectionRef, u64)>),
    /// A COMDAT group of object `file`: its `comdats` entry.
    Group(FileId, usize),
    /// The relocations of content section `.0` (an index into `Plan::sections`).
    Rela(usize),
    /// `.note.GNU-stack`, `.note.gnu.property`, the symbol and string tables: bytes made here.
    Bytes(Vec<u8>),
}

struct OutSection<'a> {
    name: std::borrow::Cow<'a, [u8]>,
    sh_type: u32,
    flags: u64,
    align: u64,
    entsize: u64,
    size: u64,
    body: Body,
    /// `SHF_LINK_ORDER`: the input section this one's `sh_link` names.
    link_order: Option<SectionRef>,
}

impl<'a> OutSection<'a> {
    fn new(name: &'a [u8], sh_type: u32, flags: u64, entsize: u64, body: Body) -> OutSection<'a> {
        OutSection {
            name: std::borrow::Cow::Borrowed(name),
            sh_type,
            flags,
            align: 1,
            entsize,
            size: 0,
            body,
            link_order: None,
        }
    }
}

/// Where the input sections went: by file, by section index, (output section, offset in it).
type Placement = Vec<Vec<Option<(usize, u64)>>>;

/// The sections of the output, in order (section header index = position + 1), and where each
/// input section landed.
struct Plan<'a> {
    sections: Vec<OutSection<'a>>,
    placement: Placement,
    /// `-d`: where each common symbol was allocated (output section, offset).
    commons: HashMap<SymbolId, (usize, u64)>,
}

fn is_debug(name: &[u8], flags: u64) -> bool {
    flags & elf::SHF_ALLOC as u64 == 0 && name.starts_with(b".debug")
}

/// Groups the live input sections into output sections, in the order they first appear.
fn plan_sections<'a>(
    ctx: &Resolved<'a>,
    strip_debug: bool,
    properties: &crate::synthetic::property::Properties,
) -> Plan<'a> {
    let mut sections: Vec<OutSection<'a>> = Vec::new();
    let mut placement: Placement = ctx.objects.iter().map(|o| vec![None; o.sections.len()]).collect();
    let mut by_key: HashMap<(&'a [u8], u32, u64, u64), usize> = HashMap::default();
    // `.note.GNU-stack`: kept when every object has one (an object without says "executable
    // stack" by its silence, which the final link must still hear); executable when one says so.
    let (mut stack_notes, mut exec_stack) = (0, ctx.exec_stack);
    for &f in &ctx.file_order {
        let obj = &ctx.objects[f];
        let mut group_of: Vec<Option<usize>> = vec![None; obj.sections.len()];
        for (g, group) in obj.comdats.iter().enumerate() {
            for m in group.members {
                group_of[m.get(LE) as usize] = Some(g);
            }
        }
        let mut group_emitted = vec![false; obj.comdats.len()];
        for (i, sec) in obj.sections.iter().enumerate() {
            let (name, entsize) = (obj.section_name(i), u64::from(obj.headers.entsize(i)));
            if i != 0 && name == b".note.GNU-stack" {
                stack_notes += 1;
                exec_stack |= sec.flags & elf::SHF_EXECINSTR as u64 != 0;
                continue;
            }
            if !sec.live || (strip_debug && is_debug(name, sec.flags)) {
                continue;
            }
            let group = group_of[i];
            let mut flags = sec.flags;
            if group.is_none() {
                // A non-COMDAT group only tied sections together in its object.
                flags &= !(elf::SHF_GROUP as u64);
            }
            let at = if let Some(g) = group {
                if !group_emitted[g] {
                    group_emitted[g] = true;
                    let mut s = OutSection::new(b".group", elf::SHT_GROUP, 0, 4, Body::Group(f, g));
                    s.align = 4;
                    sections.push(s);
                    // Assemblers define the signature as a local symbol in the group section.
                    placement[f.index()][obj.comdats[g].section as usize] = Some((sections.len() - 1, 0));
                }
                flags |= elf::SHF_GROUP as u64;
                sections.push(OutSection::new(name, sec.sh_type, flags, entsize, Body::Inputs(Vec::new())));
                sections.len() - 1
            } else if flags & elf::SHF_LINK_ORDER as u64 != 0 {
                let mut s = OutSection::new(name, sec.sh_type, flags, entsize, Body::Inputs(Vec::new()));
                s.link_order = Some(SectionRef::new(f, obj.headers.link(i)));
                sections.push(s);
                sections.len() - 1
            } else {
                // `.eh_frame` is PROGBITS from gcc and may have the target's unwind type from other assemblers:
                // one section either way, as GNU ld makes.
                let sh_type = if sec.is_eh_frame() { 0 } else { sec.sh_type };
                let name = if ctx.config.relocatable_merge_sections {
                    crate::sections::output::output_name(name)
                } else {
                    name
                };
                *by_key.entry((name, sh_type, flags, entsize)).or_insert_with(|| {
                    sections.push(OutSection::new(name, sec.sh_type, flags, entsize, Body::Inputs(Vec::new())));
                    sections.len() - 1
                })
            };
            let out = &mut sections[at];
            let offset = out.size.next_multiple_of(sec.align());
            out.size = offset + sec.size;
            out.align = out.align.max(sec.align());
            if let Body::Inputs(members) = &mut out.body {
                members.push((SectionRef::new(f, i as u32), offset));
            }
            placement[f.index()][i] = Some((at, offset));
        }
    }
    let mut commons = HashMap::default();
    if ctx.config.define_common {
        allocate_commons(ctx, &mut sections, &mut commons);
    }
    if stack_notes == ctx.objects.len() && stack_notes > 0 {
        let flags = if exec_stack { elf::SHF_EXECINSTR as u64 } else { 0 };
        sections.push(OutSection::new(b".note.GNU-stack", elf::SHT_PROGBITS, flags, 0, Body::Bytes(Vec::new())));
    }
    if !properties.is_empty() {
        let mut bytes = vec![0; crate::synthetic::property::size(properties) as usize];
        crate::synthetic::property::write(properties, &mut bytes);
        let mut s =
            OutSection::new(b".note.gnu.property", elf::SHT_NOTE, elf::SHF_ALLOC as u64, 0, Body::Bytes(Vec::new()));
        s.align = 8;
        s.size = bytes.len() as u64;
        s.body = Body::Bytes(bytes);
        // GNU ld and lld put it first, where the loader's reader of notes looks.
        sections.insert(0, s);
        for p in placement.iter_mut().flatten().flatten().chain(commons.values_mut()) {
            p.0 += 1;
        }
    }
    // Each content section with relocations is followed by its `.rela` section.
    let mut ordered: Vec<OutSection<'a>> = Vec::with_capacity(sections.len() * 2);
    let mut new_index = vec![0; sections.len()];
    for (i, s) in sections.into_iter().enumerate() {
        let has_relas = match &s.body {
            Body::Inputs(m) => m.iter().any(|&(r, _)| !ctx.objects[r].relas.is_empty()),
            _ => false,
        };
        let (name, flags) = (s.name.clone(), s.flags);
        new_index[i] = ordered.len();
        ordered.push(s);
        if has_relas {
            let mut rela_name = b".rela".to_vec();
            rela_name.extend_from_slice(&name);
            let mut r = OutSection::new(b"", elf::SHT_RELA, 0, 24, Body::Rela(ordered.len() - 1));
            r.name = std::borrow::Cow::Owned(rela_name);
            r.flags = elf::SHF_INFO_LINK as u64 | (flags & elf::SHF_GROUP as u64);
            r.align = 8;
            ordered.push(r);
        }
    }
    for p in placement.iter_mut().flatten().flatten().chain(commons.values_mut()) {
        p.0 = new_index[p.0];
    }
    Plan { sections: ordered, placement, commons }
}

/// `-d`: common symbols get space at the end of `.bss` (made if no input has one), each at its
/// alignment, the most aligned first as GNU ld packs them.
fn allocate_commons(ctx: &Resolved, sections: &mut Vec<OutSection>, at: &mut HashMap<SymbolId, (usize, u64)>) {
    let bss_flags = (elf::SHF_ALLOC | elf::SHF_WRITE) as u64;
    let mut bss = None;
    let mut commons: Vec<(SymbolId, &Sym)> = (ctx.symbols.iter_enumerated())
        .filter_map(|(id, s)| match s.def {
            Def::Common { file, sym } => Some((id, &ctx.objects[file].syms[sym as usize])),
            _ => None,
        })
        .collect();
    commons.sort_by_key(|(_, raw)| std::cmp::Reverse(raw.st_value.get(LE)));
    for (id, raw) in commons {
        let out = *bss.get_or_insert_with(|| {
            let existing = sections
                .iter()
                .position(|o| o.name.as_ref() == b".bss" && o.sh_type == elf::SHT_NOBITS && o.flags == bss_flags);
            existing.unwrap_or_else(|| {
                sections.push(OutSection::new(b".bss", elf::SHT_NOBITS, bss_flags, 0, Body::Inputs(Vec::new())));
                sections.len() - 1
            })
        });
        let o = &mut sections[out];
        // A common symbol's value is its alignment.
        let align = raw.st_value.get(LE).max(1);
        let offset = o.size.next_multiple_of(align);
        o.size = offset + raw.st_size.get(LE);
        o.align = o.align.max(align);
        at.insert(id, (out, offset));
    }
}

/// A symbol's section: an output section's header index, or a reserved index (`SHN_UNDEF`,
/// `SHN_ABS`, `SHN_COMMON`). Indices past `SHN_LORESERVE` go to `.symtab_shndx` when written.
#[derive(Clone, Copy)]
enum Shndx {
    Section(u32),
    Reserved(u16),
}

/// The rebuilt symbol table.
struct Symbols {
    syms: Vec<(Sym, Shndx)>,
    names: Vec<u8>,
    /// Locals come first: the symbol table's `sh_info`.
    first_global: u32,
    /// By output section: its section symbol (0: none).
    section_sym: Vec<u32>,
    /// By file and input symbol index: the local's new index (0: dropped with its section).
    locals: Vec<Vec<u32>>,
    /// By global symbol: its new index (0: not in the output).
    globals: Vec<u32>,
}

impl Symbols {
    fn push(&mut self, name: &[u8], info: u8, other: u8, shndx: Shndx, value: u64, size: u64) -> u32 {
        let st_name = if name.is_empty() {
            0
        } else {
            self.names.extend_from_slice(name);
            self.names.push(0);
            (self.names.len() - name.len() - 1) as u32
        };
        let sym = Sym {
            st_name: object::U32::new(LE, st_name),
            st_info: info,
            st_other: other,
            st_shndx: object::U16::new(LE, 0),
            st_value: object::U64::new(LE, value),
            st_size: object::U64::new(LE, size),
        };
        self.syms.push((sym, shndx));
        self.syms.len() as u32 - 1
    }
}

/// Where an input symbol's section went: its output section and the offset to add, or None when
/// the link dropped the section.
fn placed(plan: &Plan, f: FileId, sec: u32) -> Option<(usize, u64)> {
    plan.placement[f.index()].get(sec as usize).copied().flatten()
}

/// Builds the symbol table: what each input symbol becomes.
fn plan_symbols(ctx: &Resolved, plan: &Plan) -> Result<Symbols> {
    let mut t = Symbols {
        syms: Vec::new(),
        names: vec![0],
        first_global: 0,
        section_sym: vec![0; plan.sections.len()],
        locals: ctx.objects.iter().map(|_| Vec::new()).collect(),
        globals: vec![0; ctx.symbols.len()],
    };
    t.push(b"", 0, 0, Shndx::Reserved(elf::SHN_UNDEF), 0, 0);
    for (i, s) in plan.sections.iter().enumerate() {
        if matches!(s.body, Body::Inputs(_)) {
            t.section_sym[i] = t.push(b"", elf::STT_SECTION, 0, Shndx::Section(i as u32 + 1), 0, 0);
        }
    }
    for &f in &ctx.file_order {
        let obj = &ctx.objects[f];
        let mut map = vec![0u32; obj.first_global];
        for (i, sym) in obj.syms.iter().enumerate().take(obj.first_global).skip(1) {
            if sym.st_info & 0xf == elf::STT_SECTION {
                continue; // replaced by the output section's symbol
            }
            let name = obj.sym_name(sym)?;
            let (shndx, value) = match obj.sym_shndx(i) {
                Some(s) => match placed(plan, f, s) {
                    Some((out, off)) => (Shndx::Section(out as u32 + 1), sym.st_value.get(LE) + off),
                    None => continue, // in a section the link dropped
                },
                None => match sym.st_shndx.get(LE) {
                    elf::SHN_UNDEF if sym.st_info & 0xf != elf::STT_FILE => continue,
                    s => (Shndx::Reserved(s), sym.st_value.get(LE)),
                },
            };
            map[i] = t.push(name, sym.st_info, sym.st_other, shndx, value, sym.st_size.get(LE));
        }
        t.locals[f.index()] = map;
    }
    t.first_global = t.syms.len() as u32;
    // Each global once, in the order the objects name them.
    for &f in &ctx.file_order {
        let obj = &ctx.objects[f];
        for (k, &id) in obj.global_ids.iter().enumerate() {
            if t.globals[id.index()] == 0 {
                t.globals[id.index()] = push_global(ctx, plan, &mut t, id, &obj.syms[obj.first_global + k])?;
            }
        }
    }
    Ok(t)
}

/// One global symbol, as resolution left it. `first_seen` is the first object's entry for it.
fn push_global(ctx: &Resolved, plan: &Plan, t: &mut Symbols, id: SymbolId, first_seen: &Sym) -> Result<u32> {
    let s = &ctx.symbols[id];
    let other = s.visibility;
    Ok(match s.def {
        Def::Defined { file, sym } => {
            let obj = &ctx.objects[file];
            let raw = &obj.syms[sym as usize];
            // The defining object's own name keeps a `.symver` default version (`foo@@V`).
            let name = obj.sym_name(raw)?;
            let bind = if s.weak { elf::STB_WEAK } else { elf::STB_GLOBAL };
            let info = (bind << 4) | (raw.st_info & 0xf);
            let (value, size) = (raw.st_value.get(LE), raw.st_size.get(LE));
            match obj.sym_shndx(sym as usize) {
                Some(sec) => {
                    let (out, off) = placed(plan, file, sec).with_context(|| {
                        format!(
                            "{}: symbol {} is defined in section {}, which the output does not keep",
                            obj.name,
                            crate::diag::symbol_name(name),
                            String::from_utf8_lossy(obj.section_name(sec as usize))
                        )
                    })?;
                    t.push(name, info, other, Shndx::Section(out as u32 + 1), value + off, size)
                }
                None => t.push(name, info, other, Shndx::Reserved(raw.st_shndx.get(LE)), value, size),
            }
        }
        // Kept common (GNU ld and lld do without `-d`): the final link allocates it.
        Def::Common { file, sym } => {
            let raw = &ctx.objects[file].syms[sym as usize];
            let info = (elf::STB_GLOBAL << 4) | elf::STT_OBJECT;
            let size = raw.st_size.get(LE);
            match plan.commons.get(&id) {
                Some(&(out, off)) => t.push(s.name, info, other, Shndx::Section(out as u32 + 1), off, size),
                None => t.push(s.name, info, other, Shndx::Reserved(elf::SHN_COMMON), raw.st_value.get(LE), size),
            }
        }
        Def::Absolute(v) => t.push(s.name, elf::STB_GLOBAL << 4, other, Shndx::Reserved(elf::SHN_ABS), v, 0),
        // Linker-defined names (`_end`, `__start_foo`) are the final link's to define.
        Def::Undefined | Def::Lazy { .. } | Def::Synthetic | Def::Script(_) => {
            let weak = !s.strong_ref && first_seen.st_info >> 4 == elf::STB_WEAK;
            let bind = if weak { elf::STB_WEAK } else { elf::STB_GLOBAL };
            t.push(s.name, (bind << 4) | (first_seen.st_info & 0xf), other, Shndx::Reserved(elf::SHN_UNDEF), 0, 0)
        }
        Def::Shared { .. } => {
            bail!("{}: a relocatable output cannot refer to a shared library", crate::diag::symbol_name(s.name))
        }
    })
}

/// What an input relocation's symbol becomes: (new symbol, addend to add), or None when it
/// points into a section the link dropped.
fn map_symbol(ctx: &Resolved, plan: &Plan, t: &Symbols, f: FileId, r_sym: u32) -> Option<(u32, i64)> {
    if r_sym == 0 {
        return Some((0, 0));
    }
    match ctx.target(f, r_sym) {
        Target::Global(id) => Some((t.globals[id.index()], 0)),
        Target::Local(_, i) => {
            let obj = &ctx.objects[f];
            if obj.syms[i as usize].st_info & 0xf == elf::STT_SECTION {
                let (out, off) = placed(plan, f, obj.sym_shndx(i as usize)?)?;
                Some((t.section_sym[out], off as i64))
            } else {
                Some((t.locals[f.index()][i as usize], 0)).filter(|&(n, _)| n != 0)
            }
        }
    }
}

/// The `.rela` section of content section `target`.
fn relocations(ctx: &Resolved, plan: &Plan, t: &Symbols, target: usize) -> Vec<u8> {
    let Body::Inputs(members) = &plan.sections[target].body else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &(r, base) in members {
        let (obj, sec) = (&ctx.objects[r.file], &ctx.objects[r]);
        for (k, rela) in sec.relas.iter().enumerate() {
            // A relocation must lie in its section: past it, the output's would point into the
            // next member (a final link refuses it when it applies it; -r only copies it).
            let at = rela.r_offset.get(LE);
            if at >= sec.size {
                ctx.diag.error(format!(
                    "{}: relocation {k} in section {} is at offset {at:#x}, past the end of the section ({:#x} bytes)",
                    obj.name,
                    String::from_utf8_lossy(ctx.objects.section_name(r)),
                    sec.size
                ));
                continue;
            }
            let r_sym = rela.r_sym(LE, false);
            let (sym, r_type, addend) = match map_symbol(ctx, plan, t, r.file, r_sym) {
                Some((sym, extra)) => (sym, rela.r_type(LE, false), rela.r_addend.get(LE).wrapping_add(extra)),
                None => {
                    // Frames and debug information of dropped COMDAT copies are expected; code
                    // or data that refers to one is worth a warning (lld's words).
                    let expected = sec.flags & elf::SHF_ALLOC as u64 == 0
                        || matches!(ctx.objects.section_name(r), b".eh_frame" | b".gcc_except_table");
                    if !expected {
                        ctx.diag.warn(format!(
                            "{}: relocation in section {} refers to a discarded section: {}",
                            obj.name,
                            String::from_utf8_lossy(ctx.objects.section_name(r)),
                            obj.display_sym(r_sym as usize)
                        ));
                    }
                    (0, crate::arch::R_NONE, 0)
                }
            };
            let rela = Rela {
                r_offset: object::U64::new(LE, base + rela.r_offset.get(LE)),
                r_info: object::U64::new(LE, (u64::from(sym) << 32) | u64::from(r_type)),
                r_addend: object::I64::new(LE, addend),
            };
            out.extend_from_slice(object::bytes_of(&rela));
        }
    }
    out
}

/// A COMDAT group's section: its flag word and its members' new indices (each member's `.rela`
/// section too), and its signature symbol's new index (the group's `sh_info`).
fn group(ctx: &Resolved, plan: &Plan, t: &Symbols, f: FileId, g: usize) -> Result<(Vec<u8>, u32)> {
    let obj = &ctx.objects[f];
    let group = &obj.comdats[g];
    let mut words = vec![elf::GRP_COMDAT];
    for m in group.members {
        if let Some((out, _)) = placed(plan, f, m.get(LE)) {
            words.push(out as u32 + 1);
            if plan.sections.get(out + 1).is_some_and(|s| matches!(s.body, Body::Rela(o) if o == out)) {
                words.push(out as u32 + 2);
            }
        }
    }
    let signature = map_symbol(ctx, plan, t, f, group.signature_sym).map_or(0, |(s, _)| s);
    ensure!(
        signature != 0,
        "{}: the signature symbol of COMDAT group {} is in a section the output does not keep",
        obj.name,
        String::from_utf8_lossy(group.signature)
    );
    Ok((words.iter().flat_map(|w| w.to_le_bytes()).collect(), signature))
}

/// The relocatable output's bytes.
pub fn build<A: Arch>(ctx: &Resolved, properties: &crate::synthetic::property::Properties) -> Result<Vec<u8>> {
    let strip_debug = ctx.config.strip != crate::args::Strip::None;
    let plan = plan_sections(ctx, strip_debug, properties);
    let symbols = plan_symbols(ctx, &plan)?;
    let symtab_index = plan.sections.len() as u32 + 1;
    // Relocations and groups, now that every index is known: (bytes, sh_link, sh_info).
    let mut made: Vec<(Vec<u8>, u32, u32)> = Vec::with_capacity(plan.sections.len());
    for s in &plan.sections {
        made.push(match &s.body {
            Body::Rela(target) => (relocations(ctx, &plan, &symbols, *target), symtab_index, *target as u32 + 1),
            Body::Group(f, g) => {
                let (bytes, signature) = group(ctx, &plan, &symbols, *f, *g)?;
                (bytes, symtab_index, signature)
            }
            Body::Bytes(b) => (b.clone(), 0, 0),
            Body::Inputs(_) => {
                let link = s.link_order.and_then(|r| placed(&plan, r.file, r.index)).map_or(0, |(o, _)| o as u32 + 1);
                (Vec::new(), link, 0)
            }
        });
    }
    ctx.diag.check()?;
    Ok(write_file::<A>(ctx, &plan, &symbols, &made))
}

/// Lays the file out (ELF header, sections in order, section header table last) and writes it.
fn write_file<A: Arch>(ctx: &Resolved, plan: &Plan, t: &Symbols, made: &[(Vec<u8>, u32, u32)]) -> Vec<u8> {
    let n = plan.sections.len();
    // .symtab, [.symtab_shndx], .strtab, .shstrtab follow the sections of the plan.
    let need_ext = t.syms.iter().any(|(_, s)| matches!(s, Shndx::Section(i) if *i >= SHN_LORESERVE));
    let symtab = n as u32 + 1;
    let strtab = symtab + 1 + u32::from(need_ext);
    let shstrtab = strtab + 1;
    let count = shstrtab as usize + 1;
    let mut syms = Vec::with_capacity(t.syms.len() * 24);
    let mut ext = Vec::new();
    for (sym, shndx) in &t.syms {
        let mut sym = *sym;
        let (stored, extended) = match *shndx {
            Shndx::Reserved(r) => (r, 0),
            Shndx::Section(i) if i >= SHN_LORESERVE => (elf::SHN_XINDEX, i),
            Shndx::Section(i) => (i as u16, 0),
        };
        sym.st_shndx = object::U16::new(LE, stored);
        syms.extend_from_slice(object::bytes_of(&sym));
        if need_ext {
            ext.extend_from_slice(&extended.to_le_bytes());
        }
    }
    let mut shstr = vec![0u8];
    // Each name once (a `-r` of many objects repeats `.text`, `.group`, `.rela.text`...).
    let mut name_at: HashMap<Vec<u8>, u32> = HashMap::default();
    let mut name = |n: &[u8], shstr: &mut Vec<u8>| -> u32 {
        *name_at.entry(n.to_vec()).or_insert_with(|| {
            shstr.extend_from_slice(n);
            shstr.push(0);
            (shstr.len() - n.len() - 1) as u32
        })
    };
    struct Header {
        name: u32,
        sh_type: u32,
        flags: u64,
        size: u64,
        link: u32,
        info: u32,
        align: u64,
        entsize: u64,
    }
    let mut headers: Vec<Header> = Vec::with_capacity(count);
    for (s, (bytes, link, info)) in plan.sections.iter().zip(made) {
        let size = if matches!(s.body, Body::Inputs(_)) { s.size } else { bytes.len() as u64 };
        let nm = name(&s.name, &mut shstr);
        headers.push(Header {
            name: nm,
            sh_type: s.sh_type,
            flags: s.flags,
            size,
            link: *link,
            info: *info,
            align: s.align,
            entsize: s.entsize,
        });
    }
    let table = |nm, sh_type, size, link, info, align, entsize| Header {
        name: nm,
        sh_type,
        flags: 0,
        size,
        link,
        info,
        align,
        entsize,
    };
    let nm = name(b".symtab", &mut shstr);
    headers.push(table(nm, elf::SHT_SYMTAB, syms.len() as u64, strtab, t.first_global, 8, 24));
    if need_ext {
        let nm = name(b".symtab_shndx", &mut shstr);
        headers.push(table(nm, elf::SHT_SYMTAB_SHNDX, ext.len() as u64, symtab, 0, 4, 4));
    }
    let nm = name(b".strtab", &mut shstr);
    headers.push(table(nm, elf::SHT_STRTAB, t.names.len() as u64, 0, 0, 1, 0));
    let nm = name(b".shstrtab", &mut shstr);
    headers.push(table(nm, elf::SHT_STRTAB, shstr.len() as u64, 0, 0, 1, 0));
    // File offsets.
    let mut offsets = Vec::with_capacity(headers.len());
    let mut at = 64u64;
    for h in &headers {
        if h.sh_type != elf::SHT_NOBITS {
            at = at.next_multiple_of(h.align.max(1));
        }
        offsets.push(at);
        if h.sh_type != elf::SHT_NOBITS {
            at += h.size;
        }
    }
    let shoff = at.next_multiple_of(8);
    let total = shoff + 64 * (headers.len() as u64 + 1);
    let mut buf = vec![0u8; total as usize];
    // Contents.
    for (i, s) in plan.sections.iter().enumerate() {
        let base = offsets[i] as usize;
        match &s.body {
            Body::Inputs(members) if s.sh_type != elf::SHT_NOBITS => {
                for &(r, off) in members {
                    let data = ctx.objects[r].data;
                    buf[base + off as usize..][..data.len()].copy_from_slice(data);
                }
            }
            Body::Inputs(_) => {}
            _ => buf[base..][..made[i].0.len()].copy_from_slice(&made[i].0),
        }
    }
    let tail: Vec<&[u8]> = if need_ext { vec![&syms, &ext, &t.names, &shstr] } else { vec![&syms, &t.names, &shstr] };
    for (k, bytes) in tail.into_iter().enumerate() {
        let base = offsets[n + k] as usize;
        buf[base..][..bytes.len()].copy_from_slice(bytes);
    }
    // The ELF header; counts that do not fit go to section 0 (ELF's extended numbering).
    let shnum = headers.len() as u32 + 1;
    let header = elf::FileHeader64::<LE> {
        e_ident: crate::write::elf_ident(),
        e_type: object::U16::new(LE, elf::ET_REL),
        e_machine: object::U16::new(LE, A::NAMES.e_machine),
        e_version: object::U32::new(LE, u32::from(elf::EV_CURRENT)),
        e_entry: object::U64::new(LE, 0),
        e_phoff: object::U64::new(LE, 0),
        e_shoff: object::U64::new(LE, shoff),
        e_flags: object::U32::new(LE, 0),
        e_ehsize: object::U16::new(LE, 64),
        e_phentsize: object::U16::new(LE, 0),
        e_phnum: object::U16::new(LE, 0),
        e_shentsize: object::U16::new(LE, 64),
        e_shnum: object::U16::new(LE, if shnum >= SHN_LORESERVE { 0 } else { shnum as u16 }),
        e_shstrndx: object::U16::new(LE, if shstrtab >= SHN_LORESERVE { elf::SHN_XINDEX } else { shstrtab as u16 }),
    };
    buf[..64].copy_from_slice(object::bytes_of(&header));
    let section0 = Header {
        name: 0,
        sh_type: elf::SHT_NULL,
        flags: 0,
        size: if shnum >= SHN_LORESERVE { u64::from(shnum) } else { 0 },
        link: if shstrtab >= SHN_LORESERVE { shstrtab } else { 0 },
        info: 0,
        align: 0,
        entsize: 0,
    };
    let mut at = shoff as usize;
    for (h, off) in std::iter::once((&section0, 0)).chain(headers.iter().zip(offsets)) {
        let sh = elf::SectionHeader64::<LE> {
            sh_name: object::U32::new(LE, h.name),
            sh_type: object::U32::new(LE, h.sh_type),
            sh_flags: object::U64::new(LE, h.flags),
            sh_addr: object::U64::new(LE, 0),
            sh_offset: object::U64::new(LE, off),
            sh_size: object::U64::new(LE, h.size),
            sh_link: object::U32::new(LE, h.link),
            sh_info: object::U32::new(LE, h.info),
            sh_addralign: object::U64::new(LE, h.align),
            sh_entsize: object::U64::new(LE, h.entsize),
        };
        buf[at..at + 64].copy_from_slice(object::bytes_of(&sh));
        at += 64;
    }
    buf
}

/// Puts the built object into the output: written straight from `image` when the output is
/// written (heap mode), so the object is never held in memory twice (`buf()` would allocate a
/// second whole copy: a `--no-mmap-output-file -r` link needed twice its output's size); copied
/// into the mapping otherwise, over a reused file's old bytes (every byte is written: no zeroing
/// first).
fn write_image(out: &mut rivet_io::OutputFile, image: &[u8]) -> Result<()> {
    use std::os::unix::fs::FileExt;
    if let Some(file) = out.heap_file() {
        file.write_all_at(image, 0).context("cannot write the output")?;
        out.set_written_except(Vec::new());
    } else {
        out.buf_unzeroed().0.copy_from_slice(image);
    }
    Ok(())
}

/// The `-r` pipeline after resolution: refuse what it cannot do, build the object, write it.
/// `inputs_loaded` counts the inputs for the report.
/// `generated`: the LTO plugin's objects, which the dependency file leaves out.
pub fn link<A: Arch>(
    ctx: &Resolved,
    inputs: &crate::link_io::Inputs,
    inputs_loaded: usize,
    generated: &[&std::path::Path],
    timer: &crate::timing::Timer,
) -> Result<crate::report::LinkReport> {
    let config = ctx.config;
    for (given, what) in [
        (config.gc_sections, "--gc-sections"),
        (!config.version_scripts.is_empty(), "--version-script"),
        (config.compress_debug_sections != crate::args::DebugCompression::None, "--compress-debug-sections"),
        (config.build_id != crate::args::BuildId::None, "--build-id"),
        (config.strip == crate::args::Strip::All, "--strip-all"),
        (!ctx.defsym_offsets.is_empty(), "--defsym of a symbol's address"),
    ] {
        ensure!(!given, "-r: {what} is not supported with relocatable output");
    }
    let properties = crate::synthetic::property::merge(config, &ctx.objects, &ctx.file_order, ctx.diag, A::MACHINE);
    ctx.diag.check()?;
    let image = timer.phase("relocatable output", || build::<A>(ctx, &properties))?;
    let size = image.len() as u64;
    let mut out = crate::link_io::Output::create(config, inputs, size, timer)?;
    timer.phase("write", || write_image(&mut out.file, &image))?;
    timer.phase("check inputs", || inputs.cache.check_unchanged())?;
    let committed = out.commit(config, timer)?;
    crate::link_io::write_dependency_file(config, inputs, generated)?;
    let counts = (inputs_loaded, ctx.objects.len(), Vec::new());
    Ok(crate::link_io::report(inputs, committed, size, Default::default(), counts))
}
