//! Layout by a linker script's `SECTIONS`, with lld's rules where GNU ld and lld differ. Three
//! steps, each at the pipeline's usual place: `assign` (instead of the default name rules) puts each
//! live input section into the output section of the first description that matches it (orphans
//! keep the default rules); `size` walks each described section's commands (`. = ...`, `BYTE`...)
//! to give its members their offsets; `assign_addresses` (instead of the default layout) walks the
//! commands with the location counter, places orphans and linker-made sections, and makes the
//! program headers from the sections' order and flags. `kept` gives the `KEEP` sections before
//! garbage collection. Nothing here runs when no script has `SECTIONS`.
use crate::args::{OrphanHandling, SortSection};
use crate::ctx::{Ctx, Resolved};
use crate::diag::{Context, Result};
use crate::ids::{FileId, IdVec, OutputSectionId, SectionRef};
use crate::input::object::Objects;
use crate::input::script::{has_sections, script_name};
use crate::input::script::{
    Assert, Assign, Constraint, Expr, InputDesc, OutputCmd, OutputDesc, OutputType, PhdrCmd, Region, ScriptFile,
    SectionsCmd, Sort,
};
use crate::layout::{self, align_up, Layout, Phdr, Placement, EHDR_SIZE, PHDR_SIZE};
use crate::script::{self, SectionFacts, Value};
use crate::sections::merged::MergePieces;
use crate::sections::offsets::{Commons, InputOffsets, InputPlaces};
use crate::sections::output::Sizes;
use crate::sections::output::{self, Content, OutputSection, Sections, SyntheticIds};
use crate::{bail, ensure, fatal};
use object::elf;
use rustc_hash::FxHashMap;

/// The `SECTIONS` commands of every script, in order, with the output sections they made.
pub struct Scripted<'s> {
    pub steps: Vec<Step<'s>>,
    /// No script has `SECTIONS`, only blocks to `INSERT`: the default layout places everything,
    /// the described sections next to the section each block names (as GNU ld and lld do).
    pub default_layout: bool,
}

pub enum Step<'s> {
    /// An assignment between output sections (to `.` or to a symbol).
    Assign(&'s Assign),
    Assert(&'s Assert),
    Output(Described<'s>),
}

/// An output section description and what it holds.
pub struct Described<'s> {
    pub desc: &'s OutputDesc,
    /// The output section (None: nothing went in, nothing keeps it; a linker-made section of the
    /// same name may take its place).
    pub id: Option<OutputSectionId>,
    /// For each command of the description, where its members end in the section's `members`
    /// (members past the last are orphans that share the section's name).
    pub ends: Vec<usize>,
    /// The extent the commands give (set when sections are sized; copies of shared-library
    /// variables may be added to `.bss` after it).
    pub walked: u64,
    /// Without `SECTIONS`: the section its `INSERT AFTER|BEFORE` block names (true: after).
    pub insert: Option<(&'s str, bool)>,
}

/// The names of linker-made sections: a description of one of these names keeps no empty input
/// section of its own, so the linker's section takes its place.
const SYNTHETIC_NAMES: &[&str] = &[
    ".interp",
    ".note.gnu.build-id",
    ".note.gnu.property",
    ".note.package",
    ".hash",
    ".gnu.hash",
    ".dynsym",
    ".dynstr",
    ".gnu.version",
    ".gnu.version_d",
    ".gnu.version_r",
    ".rela.dyn",
    ".rela.plt",
    ".relr.dyn",
    ".plt",
    ".plt.sec",
    ".got",
    ".got.plt",
    ".eh_frame_hdr",
    ".dynamic",
    ".gdb_index",
    ".symtab",
    ".strtab",
    ".shstrtab",
];

/// The output sections: by the scripts' `SECTIONS` when there is one (its commands come back for
/// the later stages), else by the default rules (`layout::create_output_sections`).
/// `priority`: `--symbol-ordering-file`'s section priorities.
pub fn create_output_sections<'a, A: crate::arch::Arch>(
    ctx: &mut Resolved<'a>,
    priority: FxHashMap<SectionRef, i64>,
) -> Result<(Sections, Option<Scripted<'a>>)> {
    let scripts = ctx.script_files;
    discard_named::<A>(ctx)?;
    if ctx.config.zero_to_bss {
        zero_to_bss(&mut ctx.objects);
    }
    if !has_sections(scripts) && scripts.iter().all(|f| f.script.inserts.is_empty()) {
        return Ok((layout::create_output_sections(ctx, priority)?, None));
    }
    let config = ctx.config;
    if let Some(path) = &config.section_ordering_file {
        crate::bail!(
            "--section-ordering-file {}: not supported together with a linker script's SECTIONS or INSERT \
             (rivet applies it to the default layout only)",
            path.display()
        );
    }
    if let Some(pattern) = config.unique.first() {
        crate::bail!(
            "--unique={pattern}: not supported together with a linker script's SECTIONS or INSERT \
             (rivet applies it to the default layout only)"
        );
    }
    let order = crate::sections::order::Ordering {
        placements: Vec::new(),
        shuffles: &config.section_shuffles,
        priority,
        section_align: &config.section_align,
        unique: &config.unique,
    };
    // What `/DISCARD/` takes: the loaded sections live before and not after.
    let was_live: Vec<Vec<bool>> =
        ctx.objects.iter().map(|o| o.sections.iter().map(|s| s.live && is_loaded(s.flags)).collect()).collect();
    let (mut sections, scripted) = assign(&mut ctx.objects, &ctx.file_order, scripts, config, &order, ctx.diag)?;
    let taken: std::collections::HashSet<SectionRef> = ctx
        .objects
        .iter_enumerated()
        .flat_map(|(f, o)| {
            let was = &was_live[f.index()];
            o.sections
                .iter()
                .enumerate()
                .filter(move |(i, s)| was[*i] && !s.live)
                .map(move |(i, _)| SectionRef::new(f, i as u32))
        })
        .collect();
    refuse_references_into::<A>(ctx, &taken, "/DISCARD/")?;
    // rivet's `.comment` line, unless the script discards `.comment` (lld's own line is an input
    // section that `/DISCARD/` can take).
    let discarded = descriptions(&commands(scripts)?)
        .iter()
        .filter(|d| d.name == "/DISCARD/")
        .any(|d| d.cmds.iter().any(|c| matches!(c, OutputCmd::Input(i) if i.pattern_match("", b".comment").is_some())));
    if !discarded {
        output::stamp_comment(&mut sections);
    }
    for os in &mut sections {
        if let Some(&(_, align)) = order.section_align.iter().rev().find(|(name, _)| *name == os.name) {
            os.align = os.align.max(align);
        }
    }
    layout::define_reserved_symbols(ctx, &sections);
    ctx.build_id_home = build_id_home(config, &scripted);
    Ok((sections, Some(scripted)))
}

/// The linker's build-id note is an input section named `.note.gnu.build-id` to a script, as in
/// GNU ld and lld: the first description whose input pattern takes that name holds it (the kernel's
/// `.notes : { *(.note.*) }`, so that its `__start_notes`/`__stop_notes` and its PT_NOTE cover the
/// build-id). None: a description of that very name (the linker's section takes its place), a
/// `/DISCARD/` or no pattern takes it, or the description holds nothing else (it then has no
/// output section; the note stays a section of its own, placed as an orphan).
fn build_id_home(config: &crate::args::Config, scripted: &Scripted) -> Option<OutputSectionId> {
    if config.build_id == crate::args::BuildId::None {
        return None;
    }
    for step in &scripted.steps {
        let Step::Output(d) = step else { continue };
        if d.desc.name == ".note.gnu.build-id" {
            return None;
        }
        if d.desc.cmds.iter().any(takes_build_id) {
            return if d.desc.name == "/DISCARD/" { None } else { d.id };
        }
    }
    None
}

fn takes_build_id(cmd: &OutputCmd) -> bool {
    matches!(cmd, OutputCmd::Input(i) if i.pattern_match("", b".note.gnu.build-id").is_some())
}

/// `--zero-to-bss` (mold): a live data section that is written to (SHF_ALLOC | SHF_WRITE, not
/// code), has bytes that are all zero and no relocations becomes SHT_NOBITS, as if the compiler
/// had put it in `.bss`: an output section made only of such sections takes no room in the file
/// and is placed with the other NOBITS sections, at the end of the writable data. TLS data and
/// mergeable sections keep their type (their bytes are laid out by rules of their own).
fn zero_to_bss(objects: &mut Objects) {
    use rayon::prelude::*;
    let (alloc, write, exec) = (elf::SHF_ALLOC as u64, elf::SHF_WRITE as u64, elf::SHF_EXECINSTR as u64);
    let kept = (elf::SHF_TLS | elf::SHF_MERGE) as u64;
    objects.par_iter_mut().for_each(|obj| {
        for sec in &mut obj.sections {
            let data_section = sec.flags & (alloc | write | exec | kept) == alloc | write;
            if sec.live
                && data_section
                && sec.sh_type == elf::SHT_PROGBITS
                && sec.relas.is_empty()
                && sec.merge_index.is_none()
                && !sec.data.is_empty()
                && sec.data.iter().all(|&b| b == 0)
            {
                sec.sh_type = elf::SHT_NOBITS;
            }
        }
    });
}

/// `--discard-section=NAME` (mold): every input section of that name is left out, as `/DISCARD/`
/// would leave it (a reference to a symbol defined there is then an error).
fn discard_named<A: crate::arch::Arch>(ctx: &mut Resolved) -> Result<()> {
    let names = &ctx.config.discard_sections;
    if names.is_empty() {
        return Ok(());
    }
    let mut discarded = std::collections::HashSet::new();
    for (f, obj) in ctx.objects.iter_enumerated_mut() {
        for (i, sec) in obj.sections.iter_mut().enumerate() {
            if sec.live && names.iter().any(|n| n.as_bytes() == obj.headers.name(i, sec.name_len)) {
                sec.live = false;
                discarded.insert(SectionRef::new(f, i as u32));
            }
        }
    }
    refuse_references_into::<A>(ctx, &discarded, "--discard-section")
}

fn is_loaded(flags: u64) -> bool {
    flags & elf::SHF_ALLOC as u64 != 0
}

/// A loaded section that refers to a symbol defined in a section left out (`how`: `/DISCARD/` or
/// `--discard-section`) is an error, as in lld and GNU ld: the reference could only be left
/// pointing nowhere. `.eh_frame` records of discarded code are dropped with it, and debug
/// sections get tombstones.
fn refuse_references_into<A: crate::arch::Arch>(
    ctx: &Resolved,
    discarded: &std::collections::HashSet<SectionRef>,
    how: &str,
) -> Result<()> {
    if discarded.is_empty() {
        return Ok(());
    }
    let owns = |f: FileId, i: usize| crate::resolve::defines(&ctx.objects, &ctx.symbols, f, i);
    let places = crate::srcloc::Places::new(&ctx.objects, &owns);
    for (f, obj) in ctx.objects.iter_enumerated() {
        for (si, sec) in obj.sections.iter().enumerate() {
            if !sec.live || !is_loaded(sec.flags) || A::is_unwind_section(sec.sh_type) || sec.is_eh_frame() {
                continue;
            }
            for rel in sec.relas {
                let target = ctx.target(f, rel.r_sym(object::LittleEndian, false));
                let (df, index) = match target {
                    crate::ctx::Target::Local(f, s) => (f, s as usize),
                    crate::ctx::Target::Global(id) => match ctx.symbols[id].def {
                        crate::resolve::Def::Defined { file, sym } => (file, sym as usize),
                        _ => continue,
                    },
                };
                let Some(dsec) = ctx.objects[df].sym_shndx(index) else { continue };
                if !discarded.contains(&SectionRef::new(df, dsec)) {
                    continue;
                }
                let name = ctx.objects[df].display_sym(index);
                let at = places.describe_reference(
                    f,
                    si as u32,
                    rel.r_offset.get(object::LittleEndian),
                    name.as_bytes(),
                    14,
                );
                ctx.diag.error(format!(
                    "relocation refers to a symbol in a discarded section: {name}\n>>> defined in {} (section {}, \
                     {how})\n>>> referenced by {at}",
                    ctx.objects[df].name,
                    String::from_utf8_lossy(ctx.objects[df].section_name(dsec as usize)),
                ));
            }
        }
    }
    ctx.diag.check()
}

/// Input offsets and section sizes (`layout::assign_input_offsets`), then the described
/// sections' commands between their members. Returns where the inputs went: members, common
/// symbols and merged pieces (`pieces`, placed once their sections' offsets are known).
pub fn assign_input_offsets(
    ctx: &mut Ctx,
    pieces: MergePieces,
    scripted: Option<&mut Scripted>,
) -> Result<(InputPlaces, Sizes)> {
    let Some(s) = scripted else {
        return Ok(layout::assign_input_offsets(ctx, pieces));
    };
    let (mut offsets, mut commons, mut sizes) = layout::member_offsets(ctx);
    size(ctx, &mut Members { offsets: &mut offsets, commons: &mut commons, sizes: &mut sizes }, s)?;
    Ok((layout::place_merged(ctx, pieces, offsets, commons), sizes))
}

/// What walking a described section's commands sets: its members' offsets, where `*(COMMON)`
/// is, the common symbols' place, and (recorded by its caller) the section's size.
struct Members<'x> {
    offsets: &'x mut InputOffsets,
    commons: &'x mut Commons,
    sizes: &'x mut Sizes,
}

/// Addresses, offsets and program headers: by the script (`assign_addresses_scripted`) or by
/// the default rules (`layout::assign_addresses`). `synthetic`: the linker's own sections;
/// `inputs`: where the inputs are inside their output sections (a script's commands, walked
/// again at their addresses, may move members and commons). The layout keeps both.
pub fn assign_addresses(
    ctx: &mut Ctx,
    scripted: Option<&Scripted>,
    synthetic: &SyntheticIds,
    mut inputs: InputPlaces,
    mut sizes: Sizes,
) -> Result<Layout> {
    let mut members = Members { offsets: &mut inputs.offsets, commons: &mut inputs.commons, sizes: &mut sizes };
    if !ctx.config.section_order.is_empty() {
        crate::section_order::check_options(ctx.config, scripted.is_some())?;
    }
    let mut lay = match scripted {
        Some(s) if s.default_layout => assign_addresses_inserted(ctx, s, synthetic, &mut members)?,
        Some(s) => assign_addresses_scripted(ctx, s, synthetic, &mut members)?,
        None if !ctx.config.section_order.is_empty() => {
            crate::section_order::assign_addresses(ctx, synthetic, members.sizes)?
        }
        None => layout::assign_addresses(ctx, synthetic, members.sizes),
    };
    if let Some(base) = ctx.config.physical_image_base {
        layout::set_physical_addresses(&mut lay.phdrs, base, ctx.config.max_page_size.max(4096));
    }
    lay.inputs = std::sync::Arc::new(inputs);
    lay.sizes = sizes;
    Ok(lay)
}

/// The assignments inside SECTIONS (and INSERT blocks) that define their symbol, by the
/// assignment's identity: its script symbol's index.
fn defining_map(ctx: &Ctx) -> FxHashMap<*const Assign, usize> {
    let by_slot: FxHashMap<(usize, usize), usize> =
        ctx.script_syms.iter().enumerate().map(|(i, s)| (s.slot, i)).collect();
    let mut m = FxHashMap::default();
    for (fi, f) in ctx.script_files.iter().enumerate() {
        for (k, (a, _)) in script::assignments(&f.script).enumerate() {
            if let Some(&i) = by_slot.get(&(fi, k)) {
                m.insert(a as *const Assign, i);
            }
        }
    }
    m
}

/// What was added to each described section after it was sized (copies of shared-library
/// variables at the end of `.bss`).
fn added_after_sizing(ctx: &Ctx, sizes: &Sizes, scripted: &Scripted) -> IdVec<OutputSectionId, u64> {
    let mut added: IdVec<OutputSectionId, u64> = ctx.sections.iter().map(|_| 0).collect();
    for step in &scripted.steps {
        if let Step::Output(Described { id: Some(id), walked, .. }) = step {
            added[*id] = sizes[*id] - walked;
        }
    }
    added
}

/// Every description of every script's `SECTIONS`, in order (`/DISCARD/` among them).
fn descriptions<'s>(cmds: &[&'s SectionsCmd]) -> Vec<&'s OutputDesc> {
    cmds.iter()
        .filter_map(|c| match c {
            SectionsCmd::Output(o) => Some(&**o),
            _ => None,
        })
        .collect()
}

/// The `SECTIONS` commands of every script in order, with the blocks that end in `INSERT AFTER|
/// BEFORE name` put after or before that output section's description (lld: an error when no
/// description has that name).
pub fn commands(scripts: &[ScriptFile]) -> Result<Vec<&SectionsCmd>> {
    Ok(anchored_commands(scripts)?.into_iter().map(|(c, _)| c).collect())
}

/// `commands`, each with the section its INSERT block names when no script has SECTIONS (the
/// blocks then go into the default layout, in order).
/// A SECTIONS command, and the section its INSERT block names (true: after) when it goes into the
/// default layout.
type Anchored<'s> = (&'s SectionsCmd, Option<(&'s str, bool)>);

fn anchored_commands(scripts: &[ScriptFile]) -> Result<Vec<Anchored<'_>>> {
    if !has_sections(scripts) {
        let inserts = scripts.iter().flat_map(|f| &f.script.inserts);
        return Ok(inserts.flat_map(|i| i.cmds.iter().map(move |c| (c, Some((i.name.as_str(), i.after))))).collect());
    }
    let mut cmds: Vec<&SectionsCmd> = scripts.iter().flat_map(|f| &f.script.sections).collect();
    for f in scripts {
        for ins in &f.script.inserts {
            let at = cmds.iter().position(|c| matches!(c, SectionsCmd::Output(o) if o.name == ins.name));
            let Some(at) = at else {
                bail!(
                    "{}: unable to insert {} {} {}: no output section description has that name",
                    f.name,
                    ins.cmds
                        .iter()
                        .find_map(|c| match c {
                            SectionsCmd::Output(o) => Some(o.name.as_str()),
                            _ => None,
                        })
                        .unwrap_or("commands"),
                    if ins.after { "after" } else { "before" },
                    ins.name
                );
            };
            let at = if ins.after { at + 1 } else { at };
            cmds.splice(at..at, ins.cmds.iter());
        }
    }
    Ok(cmds.into_iter().map(|c| (c, None)).collect())
}

/// The input sections `KEEP` names: roots of garbage collection (any `KEEP` pattern that matches,
/// as in lld, whichever description finally takes the section).
pub fn kept(objects: &Objects, scripts: &[ScriptFile]) -> Vec<SectionRef> {
    let cmds = commands(scripts).unwrap_or_default();
    let keeps: Vec<&InputDesc> = descriptions(&cmds)
        .into_iter()
        .filter(|d| d.name != "/DISCARD/")
        .flat_map(|d| &d.cmds)
        .filter_map(|c| match c {
            OutputCmd::Input(i) if i.keep => Some(i),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    if keeps.is_empty() {
        return out;
    }
    for (f, obj) in objects.iter_enumerated() {
        let name = script_name(&obj.name);
        for (s, sec) in obj.sections.iter().enumerate() {
            if sec.live && keeps.iter().any(|k| k.pattern_match(&name, obj.section_name(s)).is_some()) {
                out.push(SectionRef::new(f, s as u32));
            }
        }
    }
    out
}

/// Which description (and command, and pattern) takes each live input section: the first that
/// matches, skipping the descriptions in `dropped` (an `ONLY_IF_RO`/`ONLY_IF_RW` whose sections
/// do not all qualify).
type Claim = Option<(u32, u32, u32)>;

fn claims(
    objects: &Objects,
    names: &IdVec<FileId, String>,
    descs: &[&OutputDesc],
    dropped: &[bool],
) -> IdVec<FileId, Vec<Claim>> {
    use rayon::prelude::*;
    let per_file: Vec<Vec<Claim>> = objects
        .par_iter()
        .enumerate()
        .map(|(f, obj)| {
            let name = &names[FileId::new(f)];
            obj.sections
                .iter()
                .enumerate()
                .map(|(si, sec)| {
                    if !sec.live {
                        return None;
                    }
                    let sec_name = obj.section_name(si);
                    descs.iter().enumerate().filter(|(d, _)| !dropped[*d]).find_map(|(d, desc)| {
                        desc.cmds.iter().enumerate().find_map(|(c, cmd)| match cmd {
                            OutputCmd::Input(i) => {
                                i.pattern_match(name, sec_name).map(|p| (d as u32, c as u32, p as u32))
                            }
                            _ => None,
                        })
                    })
                })
                .collect()
        })
        .collect();
    per_file.into()
}

/// The output sections of a link with `SECTIONS`: the described ones in script order, then the
/// orphans by the default name rules (joining a described section of their name, as in lld).
/// Sections `/DISCARD/` takes are dropped.
pub fn assign<'s>(
    objects: &mut Objects,
    file_order: &[FileId],
    scripts: &'s [ScriptFile],
    config: &crate::args::Config,
    order: &crate::sections::order::Ordering,
    diag: &crate::diag::Diag,
) -> Result<(Sections, Scripted<'s>)> {
    let strip_debug = config.strip != crate::args::Strip::None;
    let (sort, keep_prefix) = (config.sort_section, config.keep_text_section_prefix);
    let anchored = anchored_commands(scripts)?;
    let all: Vec<&SectionsCmd> = anchored.iter().map(|&(c, _)| c).collect();
    let descs: Vec<&OutputDesc> = descriptions(&all);
    let names: IdVec<FileId, String> = objects.iter().map(|o| script_name(&o.name)).collect();
    if strip_debug {
        for obj in objects.iter_mut() {
            for (i, sec) in obj.sections.iter_mut().enumerate() {
                if sec.flags & elf::SHF_ALLOC as u64 == 0 && obj.headers.name(i, sec.name_len).starts_with(b".debug") {
                    sec.live = false;
                }
            }
        }
    }
    // ONLY_IF_RO / ONLY_IF_RW: a description whose sections do not all qualify is dropped, and its
    // sections go to the descriptions after it (repeated until no more drop).
    let mut dropped = vec![false; descs.len()];
    let claim = loop {
        let claim = claims(objects, &names, &descs, &dropped);
        let mut changed = false;
        for (d, desc) in descs.iter().enumerate() {
            let Some(c) = desc.constraint else { continue };
            if dropped[d] {
                continue;
            }
            let fails = objects.iter_enumerated().any(|(f, obj)| {
                obj.sections.iter().zip(&claim[f]).any(|(sec, cl)| {
                    cl.is_some_and(|(cd, _, _)| cd as usize == d)
                        && (sec.flags & elf::SHF_WRITE as u64 != 0) == (c == Constraint::ReadOnly)
                })
            });
            if fails {
                dropped[d] = true;
                changed = true;
            }
        }
        if !changed {
            break claim;
        }
    };
    // Members of each (description, command), in command-line order, with their pattern.
    let mut members: Vec<Vec<Vec<(u32, SectionRef)>>> = descs.iter().map(|d| vec![Vec::new(); d.cmds.len()]).collect();
    let mut orphans: Vec<SectionRef> = Vec::new();
    for &f in file_order {
        for (s, cl) in claim[f].iter().enumerate() {
            let r = SectionRef::new(f, s as u32);
            match cl {
                Some((d, c, p)) => members[*d as usize][*c as usize].push((*p, r)),
                None if objects[f].sections[s].live => orphans.push(r),
                None => {}
            }
        }
    }
    let mut out = Sections::new();
    let mut by_name: FxHashMap<String, OutputSectionId> = FxHashMap::default();
    let mut steps = Vec::new();
    let mut d = 0;
    {
        for &(cmd, insert) in &anchored {
            let desc = match cmd {
                SectionsCmd::Assign(a) => {
                    steps.push(Step::Assign(a));
                    continue;
                }
                SectionsCmd::Assert(a) => {
                    steps.push(Step::Assert(a));
                    continue;
                }
                SectionsCmd::Output(o) => &**o,
            };
            let di = d;
            d += 1;
            if dropped[di] {
                continue;
            }
            if !desc.phdrs.is_empty() && scripts.iter().all(|f| f.script.phdrs.is_empty()) {
                bail!("{}: section {} names a program header, but no script has PHDRS", desc.loc, desc.name);
            }
            let mut cmd_members = std::mem::take(&mut members[di]);
            if desc.name == "/DISCARD/" {
                for r in cmd_members.into_iter().flatten() {
                    objects[r.1].live = false;
                }
                continue;
            }
            let reordered = !order.shuffles.is_empty() || !order.priority.is_empty();
            for (c, m) in cmd_members.iter_mut().enumerate() {
                let OutputCmd::Input(i) = &desc.cmds[c] else { continue };
                let sorted = i.sections.iter().any(|p| p.sort.0 != Sort::Unsorted);
                if reordered && !sorted {
                    // --shuffle-sections, --symbol-ordering-file: within each command.
                    let mut refs: Vec<SectionRef> = m.iter().map(|&(_, r)| r).collect();
                    let alloc = refs.first().is_some_and(|&r| objects[r].flags & elf::SHF_ALLOC as u64 != 0);
                    crate::sections::order::apply(&desc.name, alloc, &mut refs, objects, order);
                    for (slot, r) in m.iter_mut().zip(refs) {
                        slot.1 = r;
                    }
                } else {
                    sort_members(m, &i.sections, objects, sort);
                }
            }
            let count: usize = cmd_members.iter().map(Vec::len).sum();
            let has_data = desc.cmds.iter().any(|c| matches!(c, OutputCmd::Data(..)));
            let has_symbols = desc.cmds.iter().any(|c| matches!(c, OutputCmd::Assign(a) if a.name != "."));
            let synthetic_name = SYNTHETIC_NAMES.contains(&desc.name.as_str());
            let id = if count > 0 || ((has_data || has_symbols) && !synthetic_name) {
                let mut os = OutputSection::new(&desc.name, elf::SHT_PROGBITS, 0, 1, Content::Inputs);
                let mut ends = Vec::new();
                for r in cmd_members.iter().flatten().map(|&(_, r)| r) {
                    add_member(&mut os, objects, r)?;
                }
                let mut n = 0;
                for m in &cmd_members {
                    n += m.len();
                    ends.push(n);
                }
                if count == 0 {
                    // lld: an output section holding only data or symbols takes its neighbours'
                    // flags when layout places it; loaded unless the description says otherwise.
                    os.flags = elf::SHF_ALLOC as u64;
                }
                if desc.ty == Some(OutputType::NoLoad) {
                    os.sh_type = elf::SHT_NOBITS;
                }
                if desc.ty == Some(OutputType::NotAlloc) {
                    os.flags &= !(elf::SHF_ALLOC as u64);
                }
                if let Some(a) = &desc.align {
                    let a = script::eval(a, &SizingEnv { dot: Value::abs(0) }).with_context(|| &desc.loc)?.val;
                    ensure!(a.is_power_of_two(), "{}: alignment must be a power of 2", desc.loc);
                    os.align = os.align.max(a);
                }
                let id = out.push(os);
                for r in cmd_members.iter().flatten() {
                    objects[r.1].out = Some(id);
                }
                by_name.entry(desc.name.clone()).or_insert(id);
                steps.push(Step::Output(Described { desc, id: Some(id), ends, walked: 0, insert }));
                continue;
            } else {
                None
            };
            steps.push(Step::Output(Described { desc, id, ends: vec![0; desc.cmds.len()], walked: 0, insert }));
        }
    }
    // `--orphan-handling` (GNU ld, lld): what becomes of a section `SECTIONS` does not place.
    let with_sections = has_sections(scripts);
    for r in orphans {
        let name = String::from_utf8_lossy(output::output_name_for(objects.section_name(r), keep_prefix)).into_owned();
        if with_sections && config.orphan_handling != OrphanHandling::Place {
            let what = || {
                format!(
                    "{}:({}) is being placed in '{name}'",
                    objects[r.file].name,
                    String::from_utf8_lossy(objects.section_name(r))
                )
            };
            match config.orphan_handling {
                OrphanHandling::Warn => diag.warn(what()),
                OrphanHandling::Error => diag.error(what()),
                OrphanHandling::Discard => {
                    objects[r].live = false;
                    continue;
                }
                OrphanHandling::Place => {}
            }
        }
        let id = *by_name.entry(name.clone()).or_insert_with(|| {
            let s = &objects[r];
            out.push(OutputSection::new(&name, s.sh_type, 0, 1, Content::Inputs))
        });
        add_member(&mut out[id], objects, r)?;
        objects[r].out = Some(id);
    }
    let described: Vec<OutputSectionId> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Output(Described { id: Some(id), .. }) => Some(*id),
            _ => None,
        })
        .collect();
    for (id, os) in out.iter_enumerated_mut() {
        if os.entsize == 0 {
            os.flags &= !((elf::SHF_MERGE | elf::SHF_STRINGS) as u64);
        }
        if !described.contains(&id) && (!order.shuffles.is_empty() || !order.priority.is_empty()) {
            let alloc = os.is_alloc();
            crate::sections::order::apply(&os.name, alloc, &mut os.members, objects, order);
        }
    }
    Ok((out, Scripted { steps, default_layout: !has_sections(scripts) }))
}

fn add_member(os: &mut OutputSection, objects: &mut Objects, r: SectionRef) -> Result<()> {
    let obj_name = &objects[r.file].name;
    let sec = &objects[r];
    if !os.members.is_empty() {
        output::check_compatible(os, sec.sh_type, sec.flags)
            .with_context(|| format!("{obj_name}:({})", String::from_utf8_lossy(objects.section_name(r))))?;
    }
    output::merge_kind(os, sec.sh_type, sec.flags);
    os.align = os.align.max(sec.align());
    let entsize = u64::from(objects[r.file].headers.entsize(r.index as usize));
    if os.members.is_empty() {
        os.entsize = entsize;
    } else if os.entsize != entsize {
        os.entsize = 0;
    }
    os.members.push(r);
    Ok(())
}

/// Sorts one command's members as its patterns ask (`SORT_BY_NAME`...; `--sort-section` for
/// patterns that say nothing; `SORT_NONE` not at all). Stable: ties keep command-line order.
fn sort_members(
    m: &mut [(u32, SectionRef)],
    patterns: &[crate::input::script::SectionPattern],
    objects: &Objects,
    default: Option<SortSection>,
) {
    let sort_of = |p: u32| -> (Sort, Sort) {
        let s = patterns.get(p as usize).map_or((Sort::Unsorted, Sort::Unsorted), |p| p.sort);
        match (s.0, default) {
            (Sort::Unsorted, Some(SortSection::Name)) => (Sort::Name, Sort::Unsorted),
            (Sort::Unsorted, Some(SortSection::Alignment)) => (Sort::Alignment, Sort::Unsorted),
            _ => s,
        }
    };
    if m.iter().all(|&(p, _)| matches!(sort_of(p).0, Sort::Unsorted | Sort::None)) {
        return;
    }
    let key = |sort: Sort, r: SectionRef| -> (u64, Vec<u8>) {
        match sort {
            Sort::Name => (0, objects.section_name(r).to_vec()),
            Sort::Alignment => (u64::MAX - objects[r].align(), Vec::new()),
            Sort::InitPriority => (init_priority(objects.section_name(r)), Vec::new()),
            Sort::Unsorted | Sort::None => (0, Vec::new()),
        }
    };
    // Sections of different patterns keep the order in which their patterns' runs begin; each
    // pattern's sections are sorted among themselves.
    let mut groups: Vec<u32> = Vec::new();
    for &(p, _) in m.iter() {
        if !groups.contains(&p) {
            groups.push(p);
        }
    }
    let mut sorted: Vec<(u32, SectionRef)> = Vec::with_capacity(m.len());
    for g in groups {
        let mut part: Vec<(u32, SectionRef)> = m.iter().copied().filter(|&(p, _)| p == g).collect();
        let (outer, inner) = sort_of(g);
        part.sort_by(|a, b| {
            let (sa, sb) = (a.1, b.1);
            key(outer, sa).cmp(&key(outer, sb)).then_with(|| key(inner, sa).cmp(&key(inner, sb)))
        });
        sorted.extend(part);
    }
    m.copy_from_slice(&sorted);
}

/// `.init_array.00101` → 101; a name without a numeric suffix sorts last (65536), as in GNU ld.
/// `.ctors.N` and `.dtors.N` count down (65535 - N), as GNU ld orders them.
fn init_priority(name: &[u8]) -> u64 {
    let dot = name.iter().rposition(|&c| c == b'.');
    let suffix = dot.map(|p| &name[p + 1..]).unwrap_or(b"");
    match std::str::from_utf8(suffix).ok().and_then(|s| s.parse::<u64>().ok()) {
        Some(p) if name.starts_with(b".ctors") || name.starts_with(b".dtors") => 65535u64.saturating_sub(p),
        Some(p) => p,
        None => 65536,
    }
}

/// Offsets of the members of described sections, walking their commands from offset 0 (the
/// section's start; `. = ALIGN(n)` inside a section aligns relative to it, which is exact since
/// the section is at least that aligned — checked again at layout); data commands take their
/// bytes; common symbols go where `*(COMMON)` is (else at the end, after the members).
fn size(ctx: &Ctx, members: &mut Members, scripted: &mut Scripted) -> Result<()> {
    for step in &mut scripted.steps {
        let Step::Output(d) = step else { continue };
        let Some(id) = d.id else { continue };
        let size = walk_section(ctx, members, None, d, id, 0, &FxHashMap::default())?;
        members.sizes[id] = size;
        d.walked = size;
    }
    Ok(())
}

/// Walks a described section's commands from address `start`, setting its members' offsets,
/// and gives its size. During layout (`walk`: the layout so far) its symbol assignments are
/// evaluated and recorded, with `.` at its place; before layout only `.` has a value.
fn walk_section(
    ctx: &Ctx,
    members: &mut Members,
    mut walk: Option<&mut Walk>,
    d: &Described,
    id: OutputSectionId,
    start: u64,
    defining: &FxHashMap<*const Assign, usize>,
) -> Result<u64> {
    let inputs = &ctx.sections[id].members;
    let commons_here = members.commons.area_in(id).is_some();
    let mut placed_commons = false;
    let mut off = ctx.sections[id].head.len() as u64;
    let mut from = 0;
    let subalign = match &d.desc.subalign {
        Some(e) => Some(script::eval(e, &SizingEnv { dot: Value::abs(0) }).with_context(|| &d.desc.loc)?.val),
        None => None,
    };
    let saved_dot = walk.as_ref().map(|w| w.dot);
    let mut build_id_here = ctx.build_id_home == Some(id);
    let result = (|| -> Result<()> {
        for (c, cmd) in d.desc.cmds.iter().enumerate() {
            let end = d.ends.get(c).copied().unwrap_or(from);
            for &r in &inputs[from..end] {
                off = align_up(off, subalign.unwrap_or(ctx.objects[r].align()));
                members.offsets[r] = off;
                off += ctx.member_size(r.file, r.index);
            }
            from = end;
            let dot = Value { sec: Some(id), val: start + off, ty: elf::STT_NOTYPE };
            match cmd {
                OutputCmd::Input(i) if commons_here && !placed_commons && is_common_pattern(i) => {
                    off = align_up(off, ctx.sections[id].align);
                    if let Some(area) = members.commons.area_in(id) {
                        area.base = off;
                        off += area.size;
                    }
                    placed_commons = true;
                }
                // The build-id note where its pattern stands, after the inputs it took (lld's order).
                OutputCmd::Input(_) if build_id_here && takes_build_id(cmd) => {
                    off = align_up(off, 4);
                    let size = 16 + crate::synthetic::chunks::build_id_len(&ctx.config.build_id);
                    if let Some(w) = walk.as_deref_mut() {
                        w.build_id = Some((id, off, size));
                        // The note's header and a zero descriptor, as data (a fill leaves them
                        // alone); the writer puts the digest in last.
                        let header = [4 | (size - 16) << 32, elf::NT_GNU_BUILD_ID as u64 | (0x0055_4e47 << 32)];
                        w.data.extend(header.iter().enumerate().map(|(k, &v)| (id, off + 8 * k as u64, 8, v)));
                        let mut at = 16;
                        while at < size {
                            let n = [8, 4, 2, 1].into_iter().find(|&n| at + n <= size).unwrap();
                            w.data.push((id, off + at, n as u8, 0));
                            at += n;
                        }
                    }
                    off += size;
                    build_id_here = false;
                }
                OutputCmd::Assign(a) => {
                    let v = match walk.as_deref_mut() {
                        Some(w) => {
                            w.dot = dot;
                            eval(ctx, w, members, &a.expr)
                        }
                        None => script::eval(&a.expr, &SizingEnv { dot }),
                    }
                    .with_context(|| &a.loc)?;
                    if a.name == "." {
                        // Inside a section an absolute value is an offset from its start (GNU ld).
                        let to = if v.sec.is_some() { v.val.wrapping_sub(start) } else { v.val };
                        ensure!(to >= off, "{}: unable to move location counter backward for: {}", a.loc, d.desc.name);
                        off = to;
                    } else if let (Some(w), Some(&i)) = (walk.as_deref_mut(), defining.get(&(a as *const Assign))) {
                        w.values[i] = Some(v);
                    }
                }
                OutputCmd::Assert(a) => {
                    if let Some(w) = walk.as_deref_mut() {
                        w.dot = dot;
                        script::check_assert(&a.expr, &a.message, &a.loc, &Scope { ctx, w, m: members })?;
                    }
                }
                OutputCmd::Data(size, e) => {
                    if let Some(w) = walk.as_deref_mut() {
                        w.dot = dot;
                        let v = eval(ctx, w, members, e).with_context(|| &d.desc.loc)?;
                        w.data.push((id, off, *size, v.val));
                    }
                    off += *size as u64;
                }
                OutputCmd::Input(_) | OutputCmd::Fill(_) => {}
            }
        }
        for &r in &inputs[from..] {
            off = align_up(off, subalign.unwrap_or(ctx.objects[r].align()));
            members.offsets[r] = off;
            off += ctx.member_size(r.file, r.index);
        }
        if let Some(area) = members.commons.area_in(id).filter(|_| !placed_commons) {
            off = align_up(off, ctx.sections[id].align);
            area.base = off;
            off += area.size;
        }
        // The fill pattern: `FILL(expr)` or `=expr`, the last one given (lld: for the whole
        // section's gaps).
        let fill = d.desc.cmds.iter().rev().find_map(|c| match c {
            OutputCmd::Fill(e) => Some(e),
            _ => None,
        });
        if let (Some(e), Some(w)) = (fill.or(d.desc.fill.as_ref()), walk.as_deref_mut()) {
            let v = eval(ctx, w, members, e).with_context(|| &d.desc.loc)?.val;
            w.fills.push((id, v as u32));
        }
        Ok(())
    })();
    if let (Some(w), Some(dot)) = (walk, saved_dot) {
        w.dot = dot;
    }
    result.map(|()| off)
}

/// `*(COMMON)`, or `*(.tcommon)` where GNU ld's scripts put thread-local common symbols.
fn is_common_pattern(i: &InputDesc) -> bool {
    i.sections.iter().any(|p| p.pattern == "COMMON" || p.pattern == ".tcommon")
}

/// The environment of expressions while sections are sized: only `.` has a value.
struct SizingEnv {
    dot: Value,
}

impl script::Env for SizingEnv {
    fn symbol(&self, _: &str) -> Option<Value> {
        Some(Value::abs(0))
    }
    fn defined(&self, _: &str) -> bool {
        true
    }
    fn dot(&self) -> Option<Value> {
        Some(self.dot)
    }
    fn section(&self, _: &str) -> Option<SectionFacts> {
        None
    }
    fn sizeof_headers(&self) -> u64 {
        0
    }
    fn page_size(&self, _: bool) -> u64 {
        4096
    }
    fn region(&self, _: &str) -> Option<(u64, u64)> {
        Some((0, 0))
    }
}

/// One entry of the final order: an output section (with its description, if any) or a command
/// between sections.
enum Item<'d, 's> {
    Section(OutputSectionId, Option<&'d Described<'s>>),
    Assign(&'s Assign),
    Assert(&'s Assert),
}

/// A described section that holds only symbols or data: its flags come from its neighbours.
fn is_placeholder(s: &OutputSection) -> bool {
    s.content == Content::Inputs && s.members.is_empty() && s.flags == elf::SHF_ALLOC as u64
}

/// The rank by which orphans find their place (lld's order of section kinds): read-only data,
/// code, TLS, RELRO, data, bss; then non-loaded sections.
fn orphan_rank(s: &OutputSection) -> u8 {
    if !s.is_alloc() {
        return 100;
    }
    let (class, _) = output::class_rank(&s.name, s.flags, s.sh_type);
    let w = s.flags & elf::SHF_WRITE as u64 != 0;
    let x = s.flags & elf::SHF_EXECINSTR as u64 != 0;
    match (w, x) {
        (false, false) => 10,
        (false, true) => 20,
        (true, _) if s.is_tls() => 30,
        (true, _) if class == output::CLASS_RELRO => 31,
        (true, _) if s.is_nobits() => 33,
        (true, _) => 32,
    }
}

fn order<'d, 's>(ctx: &Ctx, scripted: &'d Scripted<'s>) -> Vec<Item<'d, 's>> {
    let mut items: Vec<Item> = Vec::new();
    let mut used = vec![false; ctx.sections.len()];
    let synthetic: Vec<OutputSectionId> =
        ctx.sections.iter_enumerated().filter(|(_, s)| s.content != Content::Inputs).map(|(i, _)| i).collect();
    for step in &scripted.steps {
        match step {
            Step::Assign(a) => items.push(Item::Assign(a)),
            Step::Assert(a) => items.push(Item::Assert(a)),
            Step::Output(d) => {
                let syn = synthetic.iter().copied().find(|&i| !used[i.index()] && ctx.sections[i].name == d.desc.name);
                match (d.id, syn) {
                    (Some(id), syn) => {
                        used[id.index()] = true;
                        items.push(Item::Section(id, Some(d)));
                        if let Some(s) = syn {
                            used[s.index()] = true;
                            items.push(Item::Section(s, None));
                        }
                    }
                    (None, Some(s)) => {
                        used[s.index()] = true;
                        items.push(Item::Section(s, Some(d)));
                    }
                    (None, None) => {}
                }
            }
        }
    }
    // Orphans, in section order: after the last section of their rank; else before the first
    // section of a higher rank; else at the end.
    for (id, s) in ctx.sections.iter_enumerated() {
        if used[id.index()] {
            continue;
        }
        let rank = orphan_rank(s);
        // A described section with nothing in it yet takes its neighbours' flags later: it
        // says nothing about where an orphan goes.
        let rank_at = |item: &Item| match item {
            Item::Section(i, _) if !is_placeholder(&ctx.sections[*i]) => Some(orphan_rank(&ctx.sections[*i])),
            _ => None,
        };
        let pos = if rank == 100 {
            items.len()
        } else if let Some(p) = items.iter().rposition(|it| rank_at(it) == Some(rank)) {
            p + 1
        } else if let Some(p) = items.iter().position(|it| rank_at(it).is_some_and(|r| r > rank)) {
            p
        } else {
            items.iter().rposition(|it| rank_at(it).is_some_and(|r| r < 100)).map_or(items.len(), |p| p + 1)
        };
        items.insert(pos, Item::Section(id, None));
    }
    items
}

/// What the layout walk knows: section facts so far, script symbol values, region cursors.
struct Walk {
    places: IdVec<OutputSectionId, Placement>,
    lmas: IdVec<OutputSectionId, u64>,
    dot: Value,
    /// Values of script symbols assigned in SECTIONS, by script symbol index.
    values: Vec<Option<Value>>,
    /// The previous pass's values (a forward reference reads them).
    previous: Vec<Option<Value>>,
    /// (name, origin, length, the next free address).
    regions: Vec<(String, u64, u64, u64)>,
    sizeof_headers: u64,
    placed: Vec<bool>,
    /// The previous pass's placement (a forward reference reads it).
    prev_places: Option<IdVec<OutputSectionId, Placement>>,
    /// What was added to each section after it was sized (copies of shared-library variables
    /// at the end of `.bss`).
    added: IdVec<OutputSectionId, u64>,
    /// Data commands: (section, offset, size, value).
    data: Vec<(OutputSectionId, u64, u8, u64)>,
    /// Fill patterns: (section, pattern).
    fills: Vec<(OutputSectionId, u32)>,
    /// The build-id note inside a described section: (section, offset, size).
    build_id: Option<(OutputSectionId, u64, u64)>,
}

impl Walk {
    /// Section `id`'s address as far as this pass knows it.
    fn addr(&self, id: OutputSectionId) -> u64 {
        match &self.prev_places {
            _ if self.placed[id.index()] => self.places[id].addr,
            Some(p) => p[id].addr,
            None => 0,
        }
    }
}

/// Expressions during layout see the walk so far.
struct Scope<'x, 'm, 'a> {
    ctx: &'x Ctx<'a>,
    w: &'x Walk,
    m: &'x Members<'m>,
}

fn eval(ctx: &Ctx, w: &Walk, m: &Members, e: &Expr) -> Result<Value> {
    script::eval(e, &Scope { ctx, w, m })
}

impl script::Env for Scope<'_, '_, '_> {
    fn symbol(&self, name: &str) -> Option<Value> {
        let (ctx, w, offsets) = (self.ctx, self.w, &self.m.offsets);
        let id = ctx.by_name.get(&ctx.symbols, name.as_bytes())?;
        use crate::resolve::Def;
        Some(match ctx.symbols[id].def {
            Def::Undefined | Def::Lazy { .. } => return None,
            Def::Script(i) => w.values[i as usize].or(w.previous[i as usize]).unwrap_or(Value::abs(0)),
            Def::Absolute(v) => Value::abs(v),
            Def::Defined { file, sym } => {
                let obj = &ctx.objects[file];
                let s = &obj.syms[sym as usize];
                let st_value = s.st_value.get(object::LittleEndian);
                match obj.sym_shndx(sym as usize) {
                    Some(i) => {
                        let r = SectionRef::new(file, i);
                        match ctx.objects[r].out {
                            Some(out) => {
                                Value { sec: Some(out), val: w.addr(out) + offsets[r] + st_value, ty: s.st_type() }
                            }
                            None => Value::abs(0),
                        }
                    }
                    None => Value::abs(st_value),
                }
            }
            _ => Value::abs(0),
        })
    }
    fn defined(&self, name: &str) -> bool {
        self.symbol(name).is_some()
    }
    fn dot(&self) -> Option<Value> {
        Some(self.w.dot)
    }
    fn section(&self, name: &str) -> Option<SectionFacts> {
        let ctx = self.ctx;
        let id = ctx.sections.position(|s| s.name == name)?;
        let (size, align) = (self.m.sizes[id], ctx.sections[id].align);
        Some(SectionFacts { id, addr: self.w.addr(id), lma: self.w.lmas[id], size, align })
    }
    fn sizeof_headers(&self) -> u64 {
        self.w.sizeof_headers
    }
    fn page_size(&self, max: bool) -> u64 {
        if max {
            self.ctx.config.max_page_size
        } else {
            self.ctx.config.common_page_size
        }
    }
    fn region(&self, name: &str) -> Option<(u64, u64)> {
        self.w.regions.iter().find(|r| r.0 == name).map(|r| (r.1, r.2))
    }
}

/// lld's memory region attributes: `w`, `x`, `a` ask for the flag, `r` for a read-only section;
/// after `!` they exclude.
fn region_takes(attrs: &str, flags: u64) -> bool {
    let (mut want, mut want_not, mut neg, mut neg_not) = (0u64, 0u64, 0u64, 0u64);
    let mut negate = false;
    for c in attrs.chars() {
        let (bit, inverted) = match c.to_ascii_lowercase() {
            '!' => {
                negate = true;
                continue;
            }
            'w' => (elf::SHF_WRITE as u64, false),
            'x' => (elf::SHF_EXECINSTR as u64, false),
            'a' => (elf::SHF_ALLOC as u64, false),
            'r' => (elf::SHF_WRITE as u64, true),
            _ => continue,
        };
        match (negate, inverted) {
            (false, false) => want |= bit,
            (false, true) => want_not |= bit,
            (true, false) => neg |= bit,
            (true, true) => neg_not |= bit,
        }
    }
    let positive = (want & flags) != 0 || (want_not & !flags) != 0;
    positive && (neg & flags) == 0 && (neg_not & !flags) == 0
}

fn regions(scripts: &[ScriptFile]) -> Vec<&Region> {
    scripts.iter().flat_map(|f| &f.script.memory).collect()
}

fn region_name<'r>(scripts: &'r [ScriptFile], name: &'r str) -> &'r str {
    let alias = scripts.iter().flat_map(|f| &f.script.region_aliases).find(|(a, _)| a == name);
    alias.map_or(name, |(_, r)| r.as_str())
}

/// Addresses, file offsets and program headers for a link with `SECTIONS` (lld's rules: the
/// location counter starts at 0; a new PT_LOAD where the flags, the memory region or an
/// explicit load address change; the ELF and program headers are loaded only when they fit
/// below the first section on its page).
fn assign_addresses_scripted(
    ctx: &mut Ctx,
    scripted: &Scripted,
    synthetic: &SyntheticIds,
    members: &mut Members,
) -> Result<Layout> {
    let items = order(ctx, scripted);
    // Flags of empty described sections: their neighbours' (lld), so they split no segment.
    let mut prev_flags = elf::SHF_ALLOC as u64;
    for it in &items {
        let Item::Section(id, _) = *it else { continue };
        let s = &mut ctx.sections[id];
        if is_placeholder(s) {
            s.flags = prev_flags;
        } else if s.is_alloc() {
            prev_flags = s.flags & (elf::SHF_ALLOC | elf::SHF_WRITE | elf::SHF_EXECINSTR) as u64;
        }
    }
    let order: Vec<OutputSectionId> = items
        .iter()
        .filter_map(|it| match it {
            Item::Section(i, _) => Some(*i),
            _ => None,
        })
        .collect();
    let loads_estimate = count_loads(ctx, &items);
    let note_runs = layout::note_runs(ctx, members.sizes, &order);
    let has = |c: Content| synthetic.get(c).is_some();
    let tls_secs: Vec<OutputSectionId> =
        order.iter().copied().filter(|&i| ctx.sections[i].is_alloc() && ctx.sections[i].is_tls()).collect();
    let relro_secs: Vec<OutputSectionId> = order
        .iter()
        .copied()
        .filter(|&i| {
            let s = &ctx.sections[i];
            ctx.config.relro && s.is_alloc() && output::class_rank(&s.name, s.flags, s.sh_type).0 == output::CLASS_RELRO
        })
        .collect();
    let has_interp = has(Content::Interp);
    // PT_PHDR counted whenever there is an interpreter: whether the headers are loaded is only
    // known once addresses are.
    let nphdr = loads_estimate
        + layout::headers_around_loads_count(ctx, synthetic, has_interp, note_runs.len(), !tls_secs.is_empty())
        + (!relro_secs.is_empty()) as usize;
    let explicit = phdr_cmds(ctx);
    let nphdr = if explicit.is_empty() { nphdr } else { explicit.len() } + ctx.config.spare_program_headers;
    let headers = EHDR_SIZE + PHDR_SIZE * nphdr as u64;
    let script_regions = regions(ctx.script_files);
    // Assignments inside SECTIONS that define their symbol, by the assignment's identity.
    let defining = defining_map(ctx);
    let added = added_after_sizing(ctx, members.sizes, scripted);
    let mut previous: Vec<Option<Value>> = vec![None; ctx.script_syms.len()];
    let mut last: Option<IdVec<OutputSectionId, Placement>> = None;
    let mut pass = 0;
    let walk = loop {
        let mut w = Walk {
            places: ctx.sections.iter().map(|_| Placement::default()).collect(),
            lmas: ctx.sections.iter().map(|_| 0).collect(),
            dot: Value::abs(0),
            values: vec![None; ctx.script_syms.len()],
            previous: previous.clone(),
            regions: Vec::new(),
            sizeof_headers: headers,
            placed: vec![false; ctx.sections.len()],
            prev_places: last.clone(),
            added: added.clone(),
            data: Vec::new(),
            fills: Vec::new(),
            build_id: None,
        };
        for r in &script_regions {
            let origin = eval(ctx, &w, members, &r.origin).with_context(|| &r.loc)?.val;
            let length = eval(ctx, &w, members, &r.length).with_context(|| &r.loc)?.val;
            w.regions.push((r.name.clone(), origin, length, origin));
        }
        walk_addresses(ctx, members, &mut w, &items, &defining)?;
        pass += 1;
        let same = last.as_ref().is_some_and(|l| l == &w.places) && w.values == previous;
        if same || pass == 4 {
            break w;
        }
        previous = w.values.clone();
        last = Some(w.places.clone());
    };
    let Walk { places, lmas, values, data, fills, build_id, .. } = walk;
    let walked = Walked {
        places,
        lmas,
        values,
        items: &items,
        order: &order,
        note_runs: &note_runs,
        tls_secs: &tls_secs,
        relro_secs: &relro_secs,
        headers,
        nphdr,
    };
    let mut lay = finish(ctx, synthetic, members.sizes, walked)?;
    lay.script_data = data;
    lay.script_fills = fills;
    lay.build_id_in = build_id;
    Ok(lay)
}

type Placements = IdVec<OutputSectionId, Placement>;

/// Where the program headers rivet makes start a PT_LOAD: each loaded section (TLS bss aside),
/// and whether a new PT_LOAD starts at it: where the flags, the memory region (`>`) or an explicit
/// load address (`AT`, `AT>`) change, or bytes follow bss. `lmas`: the load addresses once they are
/// known (a change of the load offset splits too); without them (the estimate behind
/// SIZEOF_HEADERS) a section after an `AT>` one splits, as its load offset ends there.
fn load_starts(
    ctx: &Ctx,
    items: &[Item],
    lmas: Option<(&IdVec<OutputSectionId, u64>, &Placements)>,
) -> Vec<(OutputSectionId, bool)> {
    let mut out = Vec::new();
    // (flags, region, bss, after an `AT>` section, load offset)
    let mut prev: Option<(u64, Option<&str>, bool, bool, i128)> = None;
    for it in items {
        let Item::Section(id, d) = *it else { continue };
        let s = &ctx.sections[id];
        if !s.is_alloc() || (s.is_tls() && s.is_nobits()) {
            continue;
        }
        let flags = s.flags & (elf::SHF_WRITE | elf::SHF_EXECINSTR) as u64;
        let region = d.and_then(|d| d.desc.region.as_deref());
        let explicit_lma = d.is_some_and(|d| d.desc.lma.is_some() || d.desc.lma_region.is_some());
        let delta = lmas.map_or(0, |(lmas, places)| lmas[id] as i128 - places[id].addr as i128);
        let split = match prev {
            None => true,
            Some((f, r, nobits, after_lma_region, dl)) => {
                f != flags
                    || r != region
                    || explicit_lma
                    || (nobits && !s.is_nobits())
                    || (lmas.is_none() && after_lma_region)
                    || dl != delta
            }
        };
        out.push((id, split));
        let lma_region = d.is_some_and(|d| d.desc.lma_region.is_some());
        prev = Some((flags, region, s.is_nobits(), lma_region, delta));
    }
    out
}

/// How many PT_LOADs `load_starts` will make, before addresses are known.
fn count_loads(ctx: &Ctx, items: &[Item]) -> usize {
    load_starts(ctx, items, None).iter().filter(|&&(_, split)| split).count().max(1)
}

fn walk_addresses(
    ctx: &Ctx,
    members: &mut Members,
    w: &mut Walk,
    items: &[Item],
    defining: &FxHashMap<*const Assign, usize>,
) -> Result<()> {
    let mut lma_offset: i128 = 0;
    let mut prev_region: Option<String> = None;
    // Whether the previous section was loaded where it runs (no `AT>`): only then does an `AT()`
    // offset carry on to the sections after it (lld).
    let mut prev_lma_default = true;
    let mut last_alloc: Option<OutputSectionId> = None;
    let mut tbss_end = 0u64;
    for it in items {
        match *it {
            Item::Assign(a) => {
                let mut v = eval(ctx, w, members, &a.expr).with_context(|| &a.loc)?;
                if a.name == "." {
                    w.dot = Value { sec: None, ..v };
                } else if let Some(&i) = defining.get(&(a as *const Assign)) {
                    // `.` between sections counts in the section before it (lld), so PIE code
                    // relocates it.
                    if v.sec.is_none() && script::contains_dot(&a.expr) {
                        v.sec = last_alloc;
                    }
                    w.values[i] = Some(v);
                }
            }
            Item::Assert(a) => script::check_assert(&a.expr, &a.message, &a.loc, &Scope { ctx, w, m: members })?,
            Item::Section(id, d) => {
                let s = &ctx.sections[id];
                let desc = d.map(|d| d.desc);
                let (name, flags, align, content) = (s.name.clone(), s.flags, s.align, s.content);
                let (alloc, tls, nobits) = (s.is_alloc(), s.is_tls(), s.is_nobits());
                if !alloc {
                    // Not loaded: address 0; its symbol assignments see `.` as the offset.
                    if let (Some(d), Content::Inputs) = (d, content) {
                        let size = walk_section(ctx, members, Some(w), d, id, 0, defining)?;
                        set_size(ctx, members.sizes, w, d, id, size)?;
                    }
                    w.placed[id.index()] = true;
                    continue;
                }
                let region = desc
                    .and_then(|d| d.region.as_deref())
                    .map(|r| region_name(ctx.script_files, r).to_string())
                    .or_else(|| {
                        if w.regions.is_empty() {
                            return None;
                        }
                        let rs = regions(ctx.script_files);
                        rs.iter().find(|r| region_takes(&r.attrs, flags)).map(|r| r.name.clone())
                    });
                let explicit = desc.and_then(|d| d.addr.as_ref());
                if !w.regions.is_empty() && region.is_none() && explicit.is_none() {
                    bail!("no memory region specified for section '{name}'");
                }
                let region_idx = match &region {
                    Some(r) => Some(
                        w.regions
                            .iter()
                            .position(|x| &x.0 == r)
                            .ok_or_else(|| fatal!("memory region '{r}' not declared (section {name})"))?,
                    ),
                    None => None,
                };
                let start_given = ctx.config.section_starts.iter().rev().find(|(n, _)| *n == name).map(|&(_, a)| a);
                let mut addr = if let Some(a) = start_given {
                    a
                } else if let Some(e) = explicit {
                    let v = eval(ctx, w, members, e).with_context(|| &desc.unwrap().loc)?.val;
                    if v % align != 0 {
                        ctx.diag.warn(format!(
                            "address (0x{v:x}) of section {name} is not a multiple of alignment ({align})"
                        ));
                    }
                    v
                } else if let Some(r) = region_idx {
                    align_up(w.regions[r].3, align)
                } else {
                    align_up(w.dot.val, align)
                };
                let tbss = tls && nobits;
                if tbss {
                    addr = align_up(addr.max(tbss_end), align);
                }
                w.places[id].addr = addr;
                w.placed[id.index()] = true;
                // The section's commands and members, now that its address is known.
                let size = match (d, content) {
                    (Some(d), Content::Inputs) => {
                        let size = walk_section(ctx, members, Some(w), d, id, addr, defining)?;
                        set_size(ctx, members.sizes, w, d, id, size)?
                    }
                    (Some(d), _) => {
                        // A linker-made section in a description's place: its symbols see its start.
                        let saved = w.dot;
                        w.dot = Value { sec: Some(id), val: addr, ty: elf::STT_NOTYPE };
                        for c in &d.desc.cmds {
                            if let OutputCmd::Assign(a) = c {
                                if let Some(&i) = defining.get(&(a as *const Assign)) {
                                    w.values[i] = Some(eval(ctx, w, members, &a.expr).with_context(|| &a.loc)?);
                                }
                            }
                        }
                        w.dot = saved;
                        members.sizes[id]
                    }
                    (None, _) => members.sizes[id],
                };
                // The load address: AT(), AT>, or the offset the last one set (in one region).
                if let Some(e) = desc.and_then(|d| d.lma.as_ref()) {
                    let l = eval(ctx, w, members, e).with_context(|| &desc.unwrap().loc)?.val;
                    lma_offset = l as i128 - addr as i128;
                } else if let Some(r) = desc.and_then(|d| d.lma_region.as_deref()) {
                    let r = region_name(ctx.script_files, r);
                    let ri = w
                        .regions
                        .iter()
                        .position(|x| x.0 == r)
                        .ok_or_else(|| fatal!("memory region '{r}' not declared (section {name})"))?;
                    let l = align_up(w.regions[ri].3, align);
                    lma_offset = l as i128 - addr as i128;
                    w.regions[ri].3 = l + if nobits { 0 } else { size };
                    check_region(&w.regions[ri], &name)?;
                } else if region != prev_region || !prev_lma_default {
                    lma_offset = 0;
                }
                prev_region = region.clone();
                prev_lma_default = desc.is_none_or(|d| d.lma_region.is_none());
                w.lmas[id] = (addr as i128 + lma_offset) as u64;
                let mut end = addr + size;
                if tbss {
                    // TLS bss takes no address space outside the TLS template.
                    tbss_end = end;
                    end = w.dot.val.max(addr);
                } else {
                    tbss_end = 0;
                }
                if let (Some(r), None) = (region_idx, explicit) {
                    w.regions[r].3 = w.regions[r].3.max(end);
                    check_region(&w.regions[r], &name)?;
                }
                ensure!(
                    tbss || end >= w.dot.val || start_given.is_some() || explicit.is_some(),
                    "unable to move location counter backward for: {name}"
                );
                w.dot = Value { sec: None, val: end, ty: elf::STT_NOTYPE };
                last_alloc = Some(id);
            }
        }
    }
    Ok(())
}

/// Records a described section's size from its walk; what was added after the sizing walk
/// (copies of shared-library variables at the end of `.bss`) stays, but then the walk must not
/// have changed.
fn set_size(ctx: &Ctx, sizes: &mut Sizes, w: &Walk, d: &Described, id: OutputSectionId, size: u64) -> Result<u64> {
    let added = w.added[id];
    ensure!(
        added == 0 || size == d.walked,
        "{}: the size of {} depends on its address, and copies of shared-library variables follow it: not supported",
        d.desc.loc,
        ctx.sections[id].name
    );
    sizes[id] = size + added;
    Ok(sizes[id])
}

fn check_region(r: &(String, u64, u64, u64), section: &str) -> Result<()> {
    let (name, origin, length, cur) = r;
    let end = origin.saturating_add(*length);
    ensure!(*cur <= end, "section '{section}' will not fit in region '{name}': overflowed by {} bytes", cur - end);
    Ok(())
}

/// What the walk of a script's commands settled on, for `finish`: the sections' addresses and
/// load addresses, the symbols' values, and the facts counted before (the sections in order, the
/// note runs, the TLS and RELRO sections, the headers' size and how many program headers fit).
struct Walked<'w> {
    places: IdVec<OutputSectionId, Placement>,
    lmas: IdVec<OutputSectionId, u64>,
    values: Vec<Option<Value>>,
    items: &'w [Item<'w, 'w>],
    order: &'w [OutputSectionId],
    note_runs: &'w [Vec<OutputSectionId>],
    tls_secs: &'w [OutputSectionId],
    relro_secs: &'w [OutputSectionId],
    headers: u64,
    nphdr: usize,
}

/// The file offsets and program headers of a script's layout, from the addresses its walk gave.
fn finish(ctx: &Ctx, synthetic: &SyntheticIds, sizes: &mut Sizes, walked: Walked) -> Result<Layout> {
    let Walked { mut places, lmas, values, items, order, note_runs, tls_secs, relro_secs, headers, nphdr } = walked;
    let page = ctx.config.max_page_size.max(1);
    for (k, &i) in order.iter().enumerate() {
        places[i].key = (0, 0, k as u32, 0);
    }
    let explicit = phdr_cmds(ctx);
    // The headers are loaded when they fit below the first section on its page; with PHDRS,
    // when a PT_LOAD says FILEHDR or PHDRS (placed right below the first section, page-aligned
    // down, as lld does).
    let first_addr = order.iter().filter(|&&i| ctx.sections[i].is_alloc()).map(|&i| places[i].addr).min();
    let wants_headers = explicit.iter().any(|p| p.p_type == elf::PT_LOAD && (p.filehdr || p.phdrs));
    let headers_loaded =
        if explicit.is_empty() { first_addr.is_some_and(|a| a - a / page * page >= headers) } else { wants_headers };
    let base = match first_addr {
        Some(a) if headers_loaded && explicit.is_empty() => a / page * page,
        Some(a) if headers_loaded => {
            ensure!(a >= headers, "no room for the ELF and program headers below the first section at {a:#x}");
            (a - headers) / page * page
        }
        _ => 0,
    };
    struct Load {
        first: OutputSectionId,
        last: OutputSectionId,
        flags: u32,
        /// The ELF and program headers start it.
        headers: bool,
        /// PHDRS: which command made it.
        cmd: Option<usize>,
    }
    let mut loads: Vec<Load> = Vec::new();
    // PHDRS: the sections of each program header, by `:name` (a section without one goes where
    // the one before it went; `:NONE` in none).
    let mut members: Vec<Vec<OutputSectionId>> = vec![Vec::new(); explicit.len()];
    if !explicit.is_empty() {
        let mut current: Vec<usize> = Vec::new();
        for it in items {
            let Item::Section(id, d) = *it else { continue };
            if !ctx.sections[id].is_alloc() {
                continue;
            }
            if let Some(names) = d.map(|d| &d.desc.phdrs).filter(|n| !n.is_empty()) {
                current.clear();
                for n in names {
                    if n == "NONE" {
                        continue;
                    }
                    let k = explicit.iter().position(|p| &p.name == n).ok_or_else(|| {
                        fatal!("{}: program header '{n}' is not listed in PHDRS", d.unwrap().desc.loc)
                    })?;
                    current.push(k);
                }
            } else if current.is_empty() && loads.is_empty() {
                current.extend(explicit.iter().position(|p| p.p_type == elf::PT_LOAD));
            }
            for &k in &current {
                members[k].push(id);
            }
        }
    }
    for (k, p) in explicit.iter().enumerate().filter(|(_, p)| p.p_type == elf::PT_LOAD) {
        let secs = &members[k];
        let (Some(&first), Some(&last)) = (secs.first(), secs.last()) else {
            bail!("{}: PT_LOAD '{}' holds no section: not supported", p.loc, p.name);
        };
        loads.push(Load { first, last, flags: 0, headers: p.filehdr || p.phdrs, cmd: Some(k) });
    }
    // PT_LOADs, unless PHDRS lists them.
    let starts = if explicit.is_empty() { load_starts(ctx, items, Some((&lmas, &places))) } else { Vec::new() };
    for (id, split) in starts {
        let flags = ctx.sections[id].flags;
        let pf = if flags & elf::SHF_EXECINSTR as u64 != 0 && ctx.config.execute_only {
            elf::PF_X
        } else {
            elf::PF_R
                | if flags & elf::SHF_WRITE as u64 != 0 { elf::PF_W } else { 0 }
                | if flags & elf::SHF_EXECINSTR as u64 != 0 { elf::PF_X } else { 0 }
        };
        if split {
            let headers = loads.is_empty() && headers_loaded;
            loads.push(Load { first: id, last: id, flags: pf, headers, cmd: None });
        } else {
            loads.last_mut().unwrap().last = id;
        }
    }
    // File offsets: a segment's first section at the next offset congruent to its address modulo
    // the page; the rest at their distance from it. TLS bss takes no file bytes.
    let mut off = headers;
    let mut phdrs: Vec<Phdr> = Vec::new();
    let position: FxHashMap<OutputSectionId, usize> = order.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let mut tls: Option<layout::TlsExtent> = None;
    for l in &loads {
        let (a, b) = (position[&l.first], position[&l.last]);
        let first_addr = places[l.first].addr;
        let start_off = if l.headers {
            first_addr - base
        } else {
            let want = first_addr % page;
            let mut o = off / page * page + want;
            if o < off {
                o += page;
            }
            o
        };
        let mut file_end = start_off;
        let mut mem_end = first_addr;
        for &i in &order[a..=b] {
            let (s, size) = (&ctx.sections[i], sizes[i]);
            if !s.is_alloc() {
                continue;
            }
            ensure!(
                places[i].addr >= first_addr,
                "section {} at {:#x} is below the start of its segment ({} at {first_addr:#x}): not supported",
                s.name,
                places[i].addr,
                ctx.sections[l.first].name
            );
            let o = start_off + (places[i].addr - first_addr);
            places[i].offset = o;
            if s.is_tls() {
                layout::TlsExtent::grow(&mut tls, places[i].addr, size, s.align, (!s.is_nobits()).then_some(o + size));
            }
            if s.is_tls() && s.is_nobits() {
                continue;
            }
            if !s.is_nobits() {
                file_end = file_end.max(o + size);
            }
            mem_end = mem_end.max(places[i].addr + size);
        }
        let (vaddr, offset) = if l.headers { (base, 0) } else { (first_addr, start_off) };
        let align = order[a..=b].iter().map(|&i| ctx.sections[i].align).fold(page, u64::max);
        let flags = match l.cmd {
            Some(k) => phdr_flags(ctx, explicit[k], &order[a..=b])?,
            None => l.flags,
        };
        phdrs.push(Phdr {
            p_type: elf::PT_LOAD,
            flags,
            offset,
            vaddr,
            paddr: Some(lmas[l.first].wrapping_sub(first_addr - vaddr)),
            filesz: file_end - offset,
            memsz: mem_end - vaddr,
            align,
        });
        off = file_end.max(off);
    }
    // TLS bss sections outside any load (their addresses only matter inside the TLS template).
    for &i in tls_secs {
        let s = &ctx.sections[i];
        if s.is_nobits() && places[i].offset == 0 {
            places[i].offset = off;
            layout::TlsExtent::grow(&mut tls, places[i].addr, sizes[i], s.align, None);
        }
    }
    let alloc_end = off;
    let tail = layout::place_tail(ctx, synthetic, sizes, &mut places, order, alloc_end);
    let phdrs_of_loads = phdrs.clone();
    let phdr = synthetic.get(Content::Interp).is_some() && headers_loaded;
    let tls_phdr = tls.map(|t| (t, places[tls_secs[0]].offset));
    let frame = layout::Frame { base, headers, phdr, tls: tls_phdr };
    let mut all = layout::headers_around_loads(ctx, synthetic, sizes, &places, &frame, phdrs, note_runs);
    let relro_range = (relro_secs.first(), relro_secs.last());
    if let (true, (Some(&first), Some(&last))) = (explicit.is_empty(), relro_range) {
        // The RELRO sections must be contiguous (lld's error otherwise).
        let (a, b) = (position[&first], position[&last]);
        if let Some(&bad) = order[a..=b].iter().find(|&&i| ctx.sections[i].is_alloc() && !relro_secs.contains(&i)) {
            bail!("section: {} is not contiguous with other relro sections", ctx.sections[bad].name);
        }
        let end = places[last].addr + sizes[last];
        let next = order[b + 1..].iter().find(|&&i| ctx.sections[i].is_alloc()).map(|&i| places[i].addr);
        let file_end = relro_secs
            .iter()
            .filter(|&&i| !ctx.sections[i].is_nobits())
            .map(|&i| places[i].offset + sizes[i])
            .fold(places[first].offset, u64::max);
        let common = ctx.config.common_page_size.max(1);
        all.push(layout::relro_phdr(places[first].offset, places[first].addr, end, file_end, next, common));
    }
    if !explicit.is_empty() {
        let frame = layout::Frame { phdr: false, ..frame };
        all = explicit_phdrs(ctx, sizes, &explicit, &members, (&places, &lmas), phdrs_of_loads, &frame)?;
    }
    all.extend(layout::spare_phdrs(ctx.config));
    // SIZEOF_HEADERS counted them before addresses were known: more would overwrite the first
    // section.
    ensure!(all.len() <= nphdr, "internal error: {} program headers, room for {nphdr}", all.len());
    let mut lay = Layout::sealed(layout::Sealed {
        places,
        base,
        tls,
        phdrs: all,
        phoff: EHDR_SIZE,
        alloc_end,
        tail,
        synthetic: *synthetic,
    });
    lay.script_values = values;
    Ok(lay)
}

/// `NOCROSSREFS(a b ...)`: no relocation in one of the named output sections may refer to a
/// symbol defined in another; `NOCROSSREFS_TO(to from ...)`: none in the `from` sections to one
/// in `to`. Every violation is an error naming the place, the symbol and both sections, in lld's
/// words. Runs once input sections have their output sections.
pub fn check_nocrossrefs(ctx: &Resolved, sections: &Sections) -> std::result::Result<(), Vec<crate::diag::Error>> {
    let rules: Vec<(&Vec<String>, bool)> =
        ctx.script_files.iter().flat_map(|f| &f.script.nocrossrefs).map(|(n, to, _)| (n, *to)).collect();
    if rules.is_empty() {
        return Ok(());
    }
    let name_of = |out: Option<OutputSectionId>| out.map(|o| sections[o].name.as_str());
    let mut errors = Vec::new();
    let owns = |file: FileId, i: usize| crate::resolve::defines(&ctx.objects, &ctx.symbols, file, i);
    let places = crate::srcloc::Places::new(&ctx.objects, &owns);
    for (f, obj) in ctx.objects.iter_enumerated() {
        for (si, sec) in obj.sections.iter().enumerate() {
            let Some(from) = name_of(sec.out).filter(|_| sec.live) else { continue };
            for rel in sec.relas {
                let r_sym = rel.r_sym(object::LittleEndian, false) as usize;
                if r_sym == 0 {
                    continue;
                }
                let (target, sym_name) = if r_sym < obj.first_global {
                    let out = obj.sym_shndx(r_sym).and_then(|i| obj.sections.get(i as usize)).and_then(|s| s.out);
                    (out, obj.display_sym(r_sym))
                } else {
                    let Some(&id) = obj.global_ids.get(r_sym - obj.first_global) else { continue };
                    let s = &ctx.symbols[id];
                    let out = match s.def {
                        crate::resolve::Def::Defined { file, sym } => {
                            let o = &ctx.objects[file];
                            o.sym_shndx(sym as usize).and_then(|i| o.sections.get(i as usize)).and_then(|s| s.out)
                        }
                        _ => None,
                    };
                    (out, String::from_utf8_lossy(s.name).into_owned())
                };
                let Some(to) = name_of(target) else { continue };
                if to == from {
                    continue;
                }
                let prohibited = rules.iter().any(|(names, to_only)| {
                    if *to_only {
                        names.first().is_some_and(|t| t == to) && names[1..].iter().any(|n| n == from)
                    } else {
                        names.iter().any(|n| n == from) && names.iter().any(|n| n == to)
                    }
                });
                if prohibited {
                    let at = rel.r_offset.get(object::LittleEndian);
                    let place = format!("{}+0x{at:x}", String::from_utf8_lossy(obj.section_name(si)));
                    // lld's getLocation: the function around the place, when there is one.
                    let around = places.enclosing(f, si as u32, at).map(|i| obj.display_sym(i));
                    let place = match around {
                        Some(name) => format!("function {name}: {place}"),
                        None => place,
                    };
                    errors.push(fatal!(
                        "{}:({place}): prohibited cross reference from '{from}' to '{sym_name}' in '{to}'",
                        obj.name
                    ));
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The scripts' `PHDRS` commands, in order (empty: rivet makes the program headers).
fn phdr_cmds<'a>(ctx: &Ctx<'a>) -> Vec<&'a PhdrCmd> {
    let files: &'a [ScriptFile] = ctx.script_files;
    files.iter().flat_map(|f| &f.script.phdrs).collect()
}

/// A program header's flags: `FLAGS(n)`, else those of its sections (readable at least).
fn phdr_flags(ctx: &Ctx, cmd: &PhdrCmd, secs: &[OutputSectionId]) -> Result<u32> {
    if let Some(e) = &cmd.flags {
        return Ok(script::eval(e, &SizingEnv { dot: Value::abs(0) }).with_context(|| &cmd.loc)?.val as u32);
    }
    let mut flags = elf::PF_R;
    for &i in secs {
        let f = ctx.sections[i].flags;
        if f & elf::SHF_WRITE as u64 != 0 {
            flags |= elf::PF_W;
        }
        if f & elf::SHF_EXECINSTR as u64 != 0 {
            flags |= elf::PF_X;
        }
    }
    // --execute-only: a segment of code alone is not readable.
    let all_code = !secs.is_empty() && secs.iter().all(|&i| ctx.sections[i].flags & elf::SHF_EXECINSTR as u64 != 0);
    if ctx.config.execute_only && all_code {
        flags = elf::PF_X;
    }
    Ok(flags)
}

/// The program headers `PHDRS` lists, in its order: the PT_LOADs as placed, `PT_PHDR` over the
/// header table, the others over the sections assigned to them (`PT_TLS` over the TLS
/// template); `FLAGS` and `AT` as given.
fn explicit_phdrs(
    ctx: &Ctx,
    sizes: &Sizes,
    cmds: &[&PhdrCmd],
    members: &[Vec<OutputSectionId>],
    (places, lmas): (&IdVec<OutputSectionId, Placement>, &IdVec<OutputSectionId, u64>),
    loads: Vec<Phdr>,
    frame: &layout::Frame,
) -> Result<Vec<Phdr>> {
    let tls = frame.tls.map(|(t, _)| t);
    let mut loads = loads.into_iter();
    let mut out = Vec::new();
    for (k, cmd) in cmds.iter().enumerate() {
        let secs = &members[k];
        let mut ph = match cmd.p_type {
            elf::PT_LOAD => loads.next().expect("one placed PT_LOAD per PHDRS entry"),
            elf::PT_PHDR => frame.table_phdr(),
            elf::PT_TLS if tls.is_some() && !secs.is_empty() => {
                let t = tls.unwrap();
                let first = places[secs[0]].offset;
                Phdr {
                    p_type: elf::PT_TLS,
                    flags: 0,
                    offset: first,
                    vaddr: t.start,
                    // Every segment's physical address is its first section's load address (AT),
                    // as GNU ld and lld give it, not only a PT_LOAD's.
                    paddr: Some(lmas[secs[0]].wrapping_sub(places[secs[0]].addr.wrapping_sub(t.start))),
                    filesz: t.file_end.saturating_sub(first),
                    memsz: t.end - t.start,
                    align: t.align,
                }
            }
            t if !secs.is_empty() => {
                let (first, last) = (secs[0], *secs.last().unwrap());
                let file_end = secs
                    .iter()
                    .filter(|&&i| !ctx.sections[i].is_nobits())
                    .map(|&i| places[i].offset + sizes[i])
                    .fold(places[first].offset, u64::max);
                Phdr {
                    p_type: t,
                    flags: 0,
                    offset: places[first].offset,
                    vaddr: places[first].addr,
                    paddr: Some(lmas[first]),
                    filesz: file_end - places[first].offset,
                    memsz: places[last].addr + sizes[last] - places[first].addr,
                    align: secs.iter().map(|&i| ctx.sections[i].align).max().unwrap_or(1),
                }
            }
            elf::PT_GNU_STACK => Phdr {
                p_type: elf::PT_GNU_STACK,
                flags: 0,
                align: 0,
                memsz: ctx.config.stack_size,
                ..Default::default()
            },
            t => Phdr { p_type: t, ..Default::default() },
        };
        if cmd.p_type != elf::PT_LOAD || cmd.flags.is_some() {
            ph.flags = match (cmd.p_type, &cmd.flags) {
                (elf::PT_GNU_STACK, None) if ctx.exec_stack => elf::PF_R | elf::PF_W | elf::PF_X,
                (elf::PT_GNU_STACK, None) => elf::PF_R | elf::PF_W,
                _ => phdr_flags(ctx, cmd, secs)?,
            };
        }
        if let Some(e) = &cmd.at {
            ph.paddr = Some(script::eval(e, &SizingEnv { dot: Value::abs(0) }).with_context(|| &cmd.loc)?.val);
        }
        out.push(ph);
    }
    Ok(out)
}

/// INSERT blocks without SECTIONS: the default layout, each described section placed next to the
/// section its block names (in block order), then the blocks' commands walked at the addresses
/// the layout gave (symbols, data, fill; `.` may not be assigned outside a section here).
fn assign_addresses_inserted(
    ctx: &Ctx,
    scripted: &Scripted,
    synthetic: &SyntheticIds,
    members: &mut Members,
) -> Result<Layout> {
    let mut inserted: Vec<(OutputSectionId, OutputSectionId, i32)> = Vec::new();
    let mut count: FxHashMap<(OutputSectionId, bool), i32> = FxHashMap::default();
    let descs: Vec<&Described> = scripted
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Output(d) => Some(d),
            _ => None,
        })
        .collect();
    for d in &descs {
        let (Some(id), Some((name, after))) = (d.id, d.insert) else { continue };
        let at = ctx.sections.position(|s| s.name == name).filter(|&at| at != id).ok_or_else(|| {
            fatal!(
                "{}: unable to insert {} {} {name}: no such output section",
                d.desc.loc,
                d.desc.name,
                if after { "after" } else { "before" }
            )
        })?;
        let k = count.entry((at, after)).or_insert(0);
        *k += 1;
        inserted.push((id, at, if after { *k } else { *k - 1_000_000 }));
    }
    let mut lay = layout::assign_addresses_with(ctx, synthetic, members.sizes, &inserted);
    let defining = defining_map(ctx);
    let mut w = Walk {
        places: lay.sections.clone(),
        lmas: lay.sections.iter().map(|p| p.addr).collect(),
        dot: Value::abs(0),
        values: vec![None; ctx.script_syms.len()],
        previous: vec![None; ctx.script_syms.len()],
        regions: Vec::new(),
        sizeof_headers: EHDR_SIZE + PHDR_SIZE * lay.phdrs.len() as u64,
        placed: vec![true; ctx.sections.len()],
        prev_places: None,
        added: added_after_sizing(ctx, members.sizes, scripted),
        data: Vec::new(),
        fills: Vec::new(),
        build_id: None,
    };
    let mut last: Option<OutputSectionId> = None;
    for step in &scripted.steps {
        match step {
            Step::Output(d) => {
                let Some(id) = d.id else { continue };
                let addr = lay.sections[id].addr;
                let size = walk_section(ctx, members, Some(&mut w), d, id, addr, &defining)?;
                ensure!(
                    size == d.walked,
                    "{}: the size of {} depends on its address: not supported with INSERT",
                    d.desc.loc,
                    d.desc.name
                );
                last = Some(id);
            }
            Step::Assign(a) if a.name == "." => {
                bail!("{}: assigning to '.' between INSERTed sections is not supported without SECTIONS", a.loc)
            }
            Step::Assign(a) => {
                let Some(&i) = defining.get(&(*a as *const Assign)) else { continue };
                w.dot = match last {
                    Some(id) => {
                        Value { sec: Some(id), val: lay.sections[id].addr + members.sizes[id], ty: elf::STT_NOTYPE }
                    }
                    None => Value::abs(0),
                };
                w.values[i] = Some(eval(ctx, &w, members, &a.expr).with_context(|| &a.loc)?);
            }
            Step::Assert(a) => script::check_assert(&a.expr, &a.message, &a.loc, &Scope { ctx, w: &w, m: members })?,
        }
    }
    lay.script_values = w.values;
    lay.script_data = w.data;
    lay.script_fills = w.fills;
    lay.build_id_in = w.build_id;
    Ok(lay)
}
