//! Output sections: takes the live input sections of every object, in command-line order, and
//! gives the output sections they form (by GNU ld's default-script name rules), with
//! `.init_array.N`-style priorities sorted, and a rank that orders them into segments.
use crate::diag::{Context, Result};
use crate::ensure;
use crate::ids::{FileId, IdVec, OutputSectionId, SectionRef};
use crate::input::object::{ObjectFile, Objects};
use object::elf;
use rayon::prelude::*;

/// What an output section holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    /// Input sections (`members`).
    Inputs,
    BuildId,
    /// `.note.package` (`--package-metadata`).
    PackageNote,
    /// `.note.gnu.property`: the merged GNU properties.
    GnuProperty,
    /// IRELATIVE relocations for IFUNCs (`.rela.plt`, bracketed by `__rela_iplt_start/end`).
    RelaPlt,
    /// PLT stubs for IFUNCs.
    Plt,
    /// `.plt.sec`: the IBT PLT's entries (`endbr64; jmp *slot`).
    PltSec,
    Got,
    GotPlt,
    EhFrameHdr,
    Dynamic,
    Interp,
    Hash,
    GnuVersion,
    GnuVersionR,
    GnuVersionD,
    Dynsym,
    Dynstr,
    GnuHash,
    RelaDyn,
    /// `.relr.dyn`: packed RELATIVE relocations (`-z pack-relative-relocs`).
    RelrDyn,
    /// `.gdb_index` (`--gdb-index`).
    GdbIndex,
    /// `.gnu_debuglink` (`--separate-debug-file`).
    GnuDebuglink,
    /// A `.rela<name>` section of `--emit-relocs` (one per output section with relocations).
    EmittedRelocs,
    Symtab,
    Strtab,
    Shstrtab,
}

impl Content {
    /// How many kinds there are (`Inputs` and one per linker-made section).
    pub const COUNT: usize = Content::Shstrtab as usize + 1;
}

/// Where each linker-made section is, by its kind (None: this output has none). Filled when the
/// synthetic sections are created, before layout.
#[derive(Clone, Copy, Debug, Default)]
pub struct SyntheticIds([Option<OutputSectionId>; Content::COUNT]);

impl SyntheticIds {
    pub fn get(&self, c: Content) -> Option<OutputSectionId> {
        self.0[c as usize]
    }
    pub fn set(&mut self, c: Content, id: OutputSectionId) {
        self.0[c as usize] = Some(id);
    }
}

/// The output sections, by id. The table only grows: a section, once made, keeps its id.
pub type Sections = IdVec<OutputSectionId, OutputSection>;

/// Every output section's size in bytes, by id. The input-offsets stage makes it (the sizes of
/// the sections input sections fill, known once their members have offsets); the stages that add
/// sections after it (copies of shared-library variables, `--emit-relocs`, the linker's own
/// sections) add them through `add`, with their sizes; layout keeps it. An output section has no
/// size field, so no stage before input offsets can read one.
#[derive(Clone, Debug, Default)]
pub struct Sizes(IdVec<OutputSectionId, u64>);

impl Sizes {
    /// Every section of `sections` at size 0, for the stage that sizes them.
    pub fn zeroed(sections: &Sections) -> Sizes {
        Sizes(sections.iter().map(|_| 0).collect())
    }

    /// Adds `section`, of `size` bytes, to the table and to the sizes: the two stay in step.
    pub fn add(&mut self, sections: &mut Sections, section: OutputSection, size: u64) -> OutputSectionId {
        let id = sections.push(section);
        // Every section is added here once `Sizes` exists: a mismatch is a linker bug, and going
        // on would give sections each other's sizes.
        assert_eq!(self.0.push(size), id, "an output section was added without its size");
        id
    }
}

impl std::ops::Index<OutputSectionId> for Sizes {
    type Output = u64;
    #[inline]
    fn index(&self, id: OutputSectionId) -> &u64 {
        &self.0[id]
    }
}

impl std::ops::IndexMut<OutputSectionId> for Sizes {
    #[inline]
    fn index_mut(&mut self, id: OutputSectionId) -> &mut u64 {
        &mut self.0[id]
    }
}

/// `--compress-debug-sections`' product: each compressed output section's final bytes (an
/// Elf64_Chdr, then the stream), which replace its members when writing. Such a section's header
/// says `SHF_COMPRESSED` and alignment 8 (the Chdr's; the section's own is inside it).
#[derive(Clone, Debug, Default)]
pub struct Compressed(rustc_hash::FxHashMap<OutputSectionId, Vec<u8>>);

impl Compressed {
    pub fn insert(&mut self, id: OutputSectionId, bytes: Vec<u8>) {
        self.0.insert(id, bytes);
    }
    /// Section `id`'s compressed bytes, if it was compressed.
    pub fn bytes(&self, id: OutputSectionId) -> Option<&[u8]> {
        self.0.get(&id).map(Vec::as_slice)
    }
    /// Section `id`'s (`s`'s) flags as its header gives them.
    pub fn flags(&self, id: OutputSectionId, s: &OutputSection) -> u64 {
        if self.0.contains_key(&id) {
            s.flags | elf::SHF_COMPRESSED as u64
        } else {
            s.flags
        }
    }
    /// Section `id`'s (`s`'s) alignment as its header gives it.
    pub fn align(&self, id: OutputSectionId, s: &OutputSection) -> u64 {
        if self.0.contains_key(&id) {
            8
        } else {
            s.align
        }
    }
}

pub struct OutputSection {
    pub name: String,
    pub sh_type: u32,
    pub flags: u64,
    pub align: u64,
    pub entsize: u64,
    pub content: Content,
    /// Input sections in output order.
    pub members: Vec<SectionRef>,
    /// Bytes the linker puts before the members: `.comment`'s line naming rivet (`stamp_comment`).
    pub head: Vec<u8>,
}

impl OutputSection {
    pub fn new(name: &str, sh_type: u32, flags: u64, align: u64, content: Content) -> OutputSection {
        OutputSection {
            name: name.to_string(),
            sh_type,
            flags,
            align,
            entsize: 0,
            content,
            members: Vec::new(),
            head: Vec::new(),
        }
    }
    pub fn is_alloc(&self) -> bool {
        self.flags & elf::SHF_ALLOC as u64 != 0
    }
    pub fn is_nobits(&self) -> bool {
        self.sh_type == elf::SHT_NOBITS
    }
    pub fn is_tls(&self) -> bool {
        self.flags & elf::SHF_TLS as u64 != 0
    }
}

/// Segment classes, in address order.
pub const CLASS_HEADERS: u8 = 0;
pub const CLASS_TEXT: u8 = 1;
pub const CLASS_RODATA: u8 = 2;
pub const CLASS_RELRO: u8 = 3;
pub const CLASS_DATA: u8 = 4;
pub const CLASS_BSS: u8 = 5;
pub const CLASS_NONALLOC: u8 = 6;

/// The text prefixes `-z keep-text-section-prefix` keeps as output sections of their own (lld's
/// list): `.text.hot` and `.text.hot.*` go to `.text.hot`, and so on.
const KEPT_TEXT_PREFIXES: &[&[u8]] =
    &[b".text.hot", b".text.unknown", b".text.unlikely", b".text.startup", b".text.exit", b".text.split"];

/// `output_name`, and with `keep_text_prefix` (`-z keep-text-section-prefix`) the names of
/// `KEPT_TEXT_PREFIXES` kept.
pub fn output_name_for(name: &[u8], keep_text_prefix: bool) -> &[u8] {
    if keep_text_prefix {
        for p in KEPT_TEXT_PREFIXES {
            if name == *p || (name.starts_with(p) && name.get(p.len()) == Some(&b'.')) {
                return p;
            }
        }
    }
    output_name(name)
}

/// GNU ld's default script maps `.text.foo` into `.text`, `.rodata.str1.1` into `.rodata`, and so on;
/// any other name is an orphan section that keeps its name.
pub fn output_name(name: &[u8]) -> &[u8] {
    const PREFIXES: &[&[u8]] = &[
        b".text",
        b".rodata",
        b".data.rel.ro",
        b".data",
        b".bss",
        b".tdata",
        b".tbss",
        b".init_array",
        b".fini_array",
        b".preinit_array",
        b".gcc_except_table",
        b".ldata",
        b".lrodata",
        b".lbss",
    ];
    for p in PREFIXES {
        if name == *p || (name.starts_with(p) && name.get(p.len()) == Some(&b'.')) {
            return p;
        }
    }
    // `.gnu.linkonce.*` (COMDAT's predecessor) by their type letters, as GNU ld's default script
    // places them.
    if let Some(rest) = name.strip_prefix(b".gnu.linkonce.") {
        const LINKONCE: &[(&[u8], &[u8])] = &[
            (b"t.", b".text"),
            (b"r.", b".rodata"),
            (b"d.rel.ro.", b".data.rel.ro"),
            (b"d.", b".data"),
            (b"b.", b".bss"),
            (b"td.", b".tdata"),
            (b"tb.", b".tbss"),
            (b"lr.", b".lrodata"),
            (b"l.", b".ldata"),
            (b"lb.", b".lbss"),
            (b"wi.", b".debug_info"),
        ];
        if let Some(&(_, out)) = LINKONCE.iter().find(|(p, _)| rest.starts_with(p)) {
            return out;
        }
    }
    // Common TLS symbols' section goes with the TLS bss, as in GNU ld's default script.
    if name == b".tcommon" {
        return b".tbss";
    }
    // `.data.rel.local` and `.data.rel` are plain writable data.
    if name.starts_with(b".data.rel") {
        return b".data";
    }
    name
}

fn is_relro(name: &str, flags: u64, sh_type: u32) -> bool {
    flags & elf::SHF_TLS as u64 != 0
        || matches!(sh_type, elf::SHT_INIT_ARRAY | elf::SHT_FINI_ARRAY | elf::SHT_PREINIT_ARRAY)
        || matches!(
            name,
            ".data.rel.ro"
                | ".bss.rel.ro"
                | ".copyrel.rel.ro"
                | ".dynamic"
                | ".got"
                | ".init_array"
                | ".fini_array"
                | ".preinit_array"
        )
}

/// The (class, rank) of an output section: the class picks the segment, the rank the place in it,
/// following GNU ld's default linker script.
pub fn class_rank(name: &str, flags: u64, sh_type: u32) -> (u8, u8) {
    let alloc = flags & elf::SHF_ALLOC as u64 != 0;
    if !alloc {
        let rank = match name {
            ".comment" => 0,
            n if n.starts_with(".debug") => 1,
            ".symtab" => 3,
            ".strtab" => 4,
            ".shstrtab" => 5,
            _ => 2,
        };
        return (CLASS_NONALLOC, rank);
    }
    if sh_type == elf::SHT_NOTE {
        // The property note first, as GNU ld places it.
        return (CLASS_HEADERS, if name == ".note.gnu.property" { 1 } else { 2 });
    }
    // Code that is also writable ("awx") goes with the writable data, as GNU ld and lld place it:
    // its segment is then executable too (`plan_loads`), never a read-only one it would fault in.
    if flags & elf::SHF_EXECINSTR as u64 != 0 && flags & elf::SHF_WRITE as u64 == 0 {
        let rank = match name {
            ".init" => 0,
            ".plt" => 1,
            ".plt.sec" => 2,
            ".text" => 3,
            ".fini" => 5,
            _ => 4,
        };
        return (CLASS_TEXT, rank);
    }
    if flags & elf::SHF_WRITE as u64 == 0 {
        return match name {
            ".interp" => (CLASS_HEADERS, 0),
            ".hash" => (CLASS_HEADERS, 3),
            ".gnu.hash" => (CLASS_HEADERS, 3),
            ".gnu.version" => (CLASS_HEADERS, 6),
            ".gnu.version_d" => (CLASS_HEADERS, 7),
            ".gnu.version_r" => (CLASS_HEADERS, 7),
            ".dynsym" => (CLASS_HEADERS, 4),
            ".dynstr" => (CLASS_HEADERS, 5),
            ".rela.dyn" => (CLASS_HEADERS, 8),
            ".relr.dyn" => (CLASS_HEADERS, 8),
            ".rela.plt" => (CLASS_HEADERS, 9),
            ".rodata" => (CLASS_RODATA, 0),
            ".eh_frame_hdr" => (CLASS_RODATA, 2),
            ".eh_frame" => (CLASS_RODATA, 3),
            ".gcc_except_table" => (CLASS_RODATA, 4),
            _ => (CLASS_RODATA, 1),
        };
    }
    if is_relro(name, flags, sh_type) {
        let rank = match name {
            ".tdata" => 0,
            ".tbss" => 1,
            ".preinit_array" => 2,
            ".init_array" => 3,
            ".fini_array" => 4,
            ".data.rel.ro" => 5,
            ".dynamic" => 6,
            ".got" => 7,
            // Copies of read-only variables, zero in the file: last, as in lld.
            ".bss.rel.ro" | ".copyrel.rel.ro" => 8,
            _ if flags & elf::SHF_TLS as u64 != 0 && sh_type == elf::SHT_NOBITS => 1,
            _ if flags & elf::SHF_TLS as u64 != 0 => 0,
            _ => 5,
        };
        return (CLASS_RELRO, rank);
    }
    if sh_type == elf::SHT_NOBITS {
        return (CLASS_BSS, if name == ".bss" { 0 } else { 1 });
    }
    let rank = match name {
        ".got.plt" => 0,
        ".data" => 1,
        _ => 2,
    };
    (CLASS_DATA, rank)
}

/// An output name a file's sections go to, as `plan_file` found it: the name, the type of the
/// first section that asks for it (an output section made for it takes that type), and whether
/// it is a `--unique` section's own.
struct PlannedName<'a> {
    name: &'a [u8],
    sh_type: u32,
    unique: bool,
}

/// A live input section and where it goes: its index, its output name (an index into the file's
/// `names`), the type it gives the output section, its entry size, flags and alignment (copied,
/// so that the pass in command-line order reads no section record again: cxx-big's do not fit in
/// the caches).
struct Member {
    index: u32,
    name: u32,
    sh_type: u32,
    entsize: u32,
    flags: u64,
    align_log2: u8,
}

/// One file's sections, named: its output names in the order its sections first ask for them,
/// its live sections in order and the ranks `--section-ordering-file` gives them.
struct FilePlan<'a> {
    names: Vec<PlannedName<'a>>,
    members: Vec<Member>,
    ranks: Vec<(u32, usize)>,
    /// The file is in the 64-bit DWARF format only: every unit of a `.debug_info` of it starts
    /// with the 64-bit unit length escape (0xffffffff). `build` puts its debug sections after
    /// those of the other objects (a stable partition, as mold orders them): a 32-bit unit's
    /// offsets into `.debug_str`, `.debug_line` and the like must stay below 4 GiB, which the
    /// 64-bit units' sections, however large, then cannot push them past. An object with both (a
    /// `-r` output) counts as 32-bit, since its 32-bit units need the low offsets.
    dwarf64: bool,
}

/// Where each live section of `obj` goes (its debug sections dropped when `strip_debug`), read
/// on the file's own thread.
fn plan_file<'n, 'a: 'n>(
    obj: &mut ObjectFile<'a>,
    strip_debug: bool,
    keep_text_prefix: bool,
    order: &'n crate::sections::order::Ordering,
) -> FilePlan<'n> {
    // Fresh pages are costly (a page fault each): no more room than the live sections need.
    let members = Vec::with_capacity(obj.sections.iter().filter(|s| s.live).count());
    let mut plan = FilePlan { names: Vec::new(), members, ranks: Vec::new(), dwarf64: false };
    let file_name = (!order.placements.is_empty()).then(|| crate::input::script::script_name(&obj.name));
    let crt = is_crt_frame_object(&obj.name);
    for (si, sec) in obj.sections.iter_mut().enumerate() {
        let non_alloc = sec.flags & elf::SHF_ALLOC as u64 == 0;
        if non_alloc && sec.name_len == 11 && !plan.dwarf64 && obj.headers.name(si, 11) == b".debug_info" {
            plan.dwarf64 = only_dwarf64_units(sec.data);
        }
        if !sec.live {
            continue;
        }
        let sec_name = obj.headers.name(si, sec.name_len);
        if strip_debug && non_alloc && sec_name.starts_with(b".debug") {
            sec.live = false;
            continue;
        }
        let placed =
            file_name.as_deref().and_then(|file| crate::sections::order::placement(&order.placements, file, sec_name));
        if let Some((rank, _)) = placed {
            plan.ranks.push((si as u32, rank));
        }
        // GNU ld's default script puts `.ctors` tables in `.init_array` and `.dtors` ones in
        // `.fini_array` (all but crtbegin.o's and crtend.o's, whose code runs `.ctors` itself),
        // so that a program's old-style constructors run with a C library that runs only the
        // arrays. lld keeps them in `.ctors`, where nothing runs them today.
        let into_array = placed.is_none() && obj.reversed.binary_search_by_key(&(si as u32), |r| r.0).is_ok() && !crt;
        let (name, sh_type) = match (placed, into_array) {
            (Some((_, out)), _) => (out.as_bytes(), sec.sh_type),
            (None, true) if sec_name.starts_with(b".ctors") => (&b".init_array"[..], elf::SHT_INIT_ARRAY),
            (None, true) => (&b".fini_array"[..], elf::SHT_FINI_ARRAY),
            (None, false) => (output_name_for(sec_name, keep_text_prefix), sec.sh_type),
        };
        // `--unique=PATTERN`: a matching input section is an output section by itself, under
        // its own name (GNU ld; two of one name from two files are two output sections).
        let unique = placed.is_none()
            && !into_array
            && order.unique.iter().any(|p| crate::input::version_script::glob_match(p.as_bytes(), sec_name));
        // A file's sections go to a few names (rust-big: 946 files, 300k sections), so a scan
        // of the names already found is short.
        let found = match unique {
            true => None,
            // Most names are the default script's own (`output_name`'s constants): the same
            // bytes at the same address.
            false => plan.names.iter().position(|n| !n.unique && (std::ptr::eq(n.name, name) || n.name == name)),
        };
        let at = found.unwrap_or_else(|| {
            let name = if unique { sec_name } else { name };
            plan.names.push(PlannedName { name, sh_type, unique });
            plan.names.len() - 1
        });
        // A moved table is one of 8-byte entries, as the arrays' own sections say.
        let entsize = if into_array { 8 } else { obj.headers.entsize(si) };
        let (flags, align_log2) = (sec.flags, sec.align_log2);
        plan.members.push(Member { index: si as u32, name: at as u32, sh_type, entsize, flags, align_log2 });
    }
    plan
}

/// Builds the output sections from the live input sections. `file_order` lists object indices in
/// command-line order. Non-alloc sections are dropped when `strip_debug` and named `.debug*`.
/// `sort` is `--sort-section`: `name` or `alignment`; `keep_text_prefix` is
/// `-z keep-text-section-prefix`; `order` the command line's reordering (`order::apply`, which
/// overrides `--sort-section`, as in lld) and `--section-align`.
pub fn build(
    objects: &mut Objects,
    file_order: &[FileId],
    strip_debug: bool,
    sort: Option<crate::args::SortSection>,
    keep_text_prefix: bool,
    order: &crate::sections::order::Ordering,
) -> Result<Sections> {
    // Each file's live sections are named and given their file's output names on every core (the
    // names are read from the inputs' section headers: a serial pass over rust-big's sections
    // took 18 ms); then one pass in command-line order gives each name its output section.
    let plans: Vec<FilePlan> = objects
        .par_iter_mut()
        .with_min_len(8)
        .map(|obj| plan_file(obj, strip_debug, keep_text_prefix, order))
        .collect();
    let mut out = Sections::new();
    // Keyed by the name's bytes in the input (no copy per input section: cxx-big has 85k).
    let mut by_name: rustc_hash::FxHashMap<&[u8], OutputSectionId> = Default::default();
    // `--section-ordering-file`: each placed section's rank (placed ones go first, in rank order).
    let mut ranks: rustc_hash::FxHashMap<SectionRef, usize> = Default::default();
    // Per file, the output section of each name its plan lists.
    let mut ids: Vec<Vec<OutputSectionId>> = vec![Vec::new(); plans.len()];
    for &f in file_order {
        let (plan, obj) = (&plans[f.index()], &objects[f]);
        let ids = &mut ids[f.index()];
        ids.extend(plan.names.iter().map(|n| {
            let new = |out: &mut Sections| {
                let name = String::from_utf8_lossy(n.name).into_owned();
                out.push(OutputSection::new(&name, n.sh_type, 0, 1, Content::Inputs))
            };
            // `--unique=PATTERN`: a matching input section is an output section by itself.
            match n.unique {
                true => new(&mut out),
                false => *by_name.entry(n.name).or_insert_with(|| new(&mut out)),
            }
        }));
        ranks.extend(plan.ranks.iter().map(|&(si, rank)| (SectionRef::new(f, si), rank)));
        for m in &plan.members {
            let os = &mut out[ids[m.name as usize]];
            if !os.members.is_empty() {
                check_compatible(os, m.sh_type, m.flags).with_context(|| {
                    let name = obj.section_name(m.index as usize);
                    format!("{}:({})", obj.name, String::from_utf8_lossy(name))
                })?;
            }
            merge_kind(os, m.sh_type, m.flags);
            os.align = os.align.max(1 << m.align_log2);
            if os.members.is_empty() {
                os.entsize = m.entsize.into();
            } else if os.entsize != u64::from(m.entsize) {
                os.entsize = 0;
            }
            os.members.push(SectionRef::new(f, m.index));
        }
    }
    objects.par_iter_mut().zip(&plans).zip(&ids).with_min_len(8).for_each(|((obj, plan), ids)| {
        for m in &plan.members {
            obj.sections[m.index as usize].out = Some(ids[m.name as usize]);
        }
    });
    for os in &mut out {
        // Members with different entry sizes: the output is not one table of mergeable entries.
        if os.entsize == 0 {
            os.flags &= !((elf::SHF_MERGE | elf::SHF_STRINGS) as u64);
        }
        let reordered = !order.shuffles.is_empty() || !order.priority.is_empty() || !ranks.is_empty();
        if reordered {
            let alloc = os.is_alloc();
            crate::sections::order::apply(&os.name, alloc, &mut os.members, objects, order);
            if !ranks.is_empty() {
                os.members.sort_by_key(|r| ranks.get(r).copied().unwrap_or(usize::MAX));
            }
        }
        if os.name.starts_with(".debug_") && !os.is_alloc() {
            let dwarf64 = |r: &SectionRef| plans[r.file.index()].dwarf64;
            if os.members.iter().any(dwarf64) {
                os.members.sort_by_key(dwarf64);
            }
        }
        if matches!(os.name.as_str(), ".init_array" | ".fini_array" | ".preinit_array") {
            sort_by_priority(os, objects);
        } else if let Some(how) = sort.filter(|_| !reordered) {
            sort_members(os, objects, how);
        }
        // `--section-align` (mold): never below what the members need.
        if let Some(&(_, align)) = order.section_align.iter().rev().find(|(name, _)| *name == os.name) {
            os.align = os.align.max(align);
        }
    }
    Ok(out)
}

/// crtbegin.o, crtend.o and their variants (crtbeginS.o, crtendS.o, ...): GNU ld's default script
/// leaves their `.ctors`/`.dtors` out of the init/fini arrays (`EXCLUDE_FILE`), since their code
/// walks those tables itself. `name` is a path or `archive(member)`.
fn is_crt_frame_object(name: &str) -> bool {
    let base = name.trim_end_matches(')').rsplit(['/', '(']).next().unwrap_or(name);
    let Some(stem) = base.strip_suffix(".o") else { return false };
    ["crtbegin", "crtend"].iter().any(|p| stem.strip_prefix(p).is_some_and(|rest| rest.chars().count() <= 1))
}

/// Swaps in the reversed bytes and relocations of every `.ctors`/`.dtors` table that sits in an
/// init/fini array (by the default rules or a script's), as GNU ld does: `.ctors` ran from its end
/// to its start, the arrays run from start to end, so the entries keep their running order.
pub fn reverse_ctors_in_arrays(objects: &mut Objects, sections: &Sections) {
    for obj in objects.iter_mut() {
        for (si, data, relas) in std::mem::take(&mut obj.reversed) {
            let sec = &mut obj.sections[si as usize];
            let in_array = sec
                .out
                .is_some_and(|o| matches!(sections[o].name.as_str(), ".init_array" | ".fini_array" | ".preinit_array"));
            if sec.live && in_array {
                sec.data = data;
                sec.relas = relas;
            }
        }
    }
}

/// What every linked output's `.comment` says about the linker that made it (as lld writes
/// "Linker: LLD 19.1.7" and mold "mold 2.x"), so that `readelf -p .comment` tells.
pub const COMMENT_STAMP: &str = concat!("Linker: rivet ", env!("CARGO_PKG_VERSION"));

/// Puts `COMMENT_STAMP` first in `.comment` (making the section when no input has one), before the
/// inputs' strings, where lld puts its own.
pub fn stamp_comment(out: &mut Sections) {
    let merge_strings = (elf::SHF_MERGE | elf::SHF_STRINGS) as u64;
    let id = match out.iter().position(|os| os.name == ".comment") {
        Some(i) => OutputSectionId::new(i),
        None => {
            let mut os = OutputSection::new(".comment", elf::SHT_PROGBITS, merge_strings, 1, Content::Inputs);
            os.entsize = 1;
            out.push(os)
        }
    };
    let mut head = COMMENT_STAMP.as_bytes().to_vec();
    head.push(0);
    out[id].head = head;
}

/// Types that may share an output section (it becomes SHT_PROGBITS, or stays SHT_NOBITS), as in
/// lld; any other pair of different types in one output section is an error.
fn mixes_with_progbits(sh_type: u32) -> bool {
    matches!(
        sh_type,
        elf::SHT_PROGBITS
            | elf::SHT_NOBITS
            | elf::SHT_NOTE
            | elf::SHT_INIT_ARRAY
            | elf::SHT_FINI_ARRAY
            | elf::SHT_PREINIT_ARRAY
    )
}

/// An input section may join output section `os` (lld's "section type mismatch" and
/// "incompatible section flags": TLS and non-TLS bytes cannot share a section). `.eh_frame` is
/// exempt from the type rule: it is rebuilt from its records, whatever the inputs' types.
pub fn check_compatible(os: &OutputSection, sh_type: u32, flags: u64) -> Result<()> {
    let tls = elf::SHF_TLS as u64;
    ensure!(
        (os.flags ^ flags) & tls == 0,
        "incompatible section flags for {}: {flags:#x}, but the output section's are {:#x}",
        os.name,
        os.flags
    );
    let mixable = mixes_with_progbits(os.sh_type) && mixes_with_progbits(sh_type);
    ensure!(
        os.sh_type == sh_type || mixable || os.name == ".eh_frame",
        "section type mismatch for {}: {sh_type:#x}, but the output section's type is {:#x}",
        os.name,
        os.sh_type
    );
    Ok(())
}

/// Flags that describe an input section but must not be copied to the output section.
const INPUT_ONLY_FLAGS: u64 = (elf::SHF_GROUP | elf::SHF_COMPRESSED) as u64;

pub fn merge_kind(os: &mut OutputSection, sh_type: u32, flags: u64) {
    if os.members.is_empty() {
        os.sh_type = sh_type;
        os.flags = flags & !INPUT_ONLY_FLAGS;
        return;
    }
    // Mixing NOBITS with PROGBITS makes the whole section PROGBITS (the zeros become file bytes).
    if os.sh_type == elf::SHT_NOBITS && sh_type != elf::SHT_NOBITS {
        os.sh_type = sh_type;
    }
    // SHF_MERGE/SHF_STRINGS only hold if every member has them (with the same entry size).
    let keep_merge = os.flags & flags & (elf::SHF_MERGE | elf::SHF_STRINGS) as u64;
    os.flags = ((os.flags | flags) & !((elf::SHF_MERGE | elf::SHF_STRINGS) as u64) | keep_merge) & !INPUT_ONLY_FLAGS;
}

/// `--sort-section=name|alignment`: GNU ld wraps every wildcard pattern of its default script in
/// `SORT_BY_NAME`/`SORT_BY_ALIGNMENT` (largest alignment first). The sorts are stable, so sections
/// of one name (`.init` from crti.o, the objects and crtn.o; `.ctors` from crtbegin.o ... crtend.o)
/// keep their command-line order, which is what makes their code and tables work.
fn sort_members(os: &mut OutputSection, objects: &Objects, how: crate::args::SortSection) {
    match how {
        crate::args::SortSection::Alignment => os.members.sort_by_key(|&m| std::cmp::Reverse(objects[m].align())),
        crate::args::SortSection::Name => {
            os.members.sort_by(|&a, &b| objects.section_name(a).cmp(objects.section_name(b)))
        }
    }
}

/// `.debug_info` holds at least one unit and each is in the 64-bit format (a unit length that
/// runs past the section ends the walk: the section is read as it is elsewhere).
fn only_dwarf64_units(mut data: &[u8]) -> bool {
    let mut units = 0;
    while data.len() >= 12 {
        let (escape, length) = data.split_at(4);
        if escape != [0xff; 4] {
            return false;
        }
        let length = u64::from_le_bytes(length[..8].try_into().unwrap());
        units += 1;
        match usize::try_from(length).ok().and_then(|l| l.checked_add(12)) {
            Some(end) if end <= data.len() => data = &data[end..],
            _ => break,
        }
    }
    units > 0
}

/// `.init_array.00101` runs before `.init_array.00200`, and both before plain `.init_array`
/// (which counts as priority 65536); the sort is stable so command-line order breaks ties.
fn sort_by_priority(os: &mut OutputSection, objects: &Objects) {
    let priority = |&r: &SectionRef| -> u32 {
        let name = objects.section_name(r);
        let suffix = name.iter().rposition(|&c| c == b'.').map(|p| &name[p + 1..]).unwrap_or(b"");
        match std::str::from_utf8(suffix).ok().and_then(|s| s.parse::<u32>().ok()) {
            // `.ctors.N` counts down: `.ctors.65435` runs as `.init_array.00100` does.
            Some(p) if crate::input::object::is_ctors_table(name) => 65535u32.saturating_sub(p),
            Some(p) if name != os.name.as_bytes() => p,
            _ => 65536,
        }
    };
    os.members.sort_by_key(priority);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_stay_in_step_with_the_sections() {
        let section = |name| OutputSection::new(name, elf::SHT_PROGBITS, elf::SHF_ALLOC as u64, 1, Content::Inputs);
        let mut sections: Sections = IdVec::new();
        let text = sections.push(section(".text"));
        let mut sizes = Sizes::zeroed(&sections);
        sizes[text] = 5;
        let bss = sizes.add(&mut sections, section(".bss"), 7);
        assert_eq!((bss, sections.len()), (OutputSectionId::new(1), 2));
        assert_eq!((sizes[text], sizes[bss]), (5, 7));
    }

    #[test]
    #[should_panic(expected = "without its size")]
    fn a_section_added_without_its_size_is_caught() {
        let section = || OutputSection::new(".data", elf::SHT_PROGBITS, elf::SHF_ALLOC as u64, 1, Content::Inputs);
        let mut sections: Sections = IdVec::new();
        let mut sizes = Sizes::zeroed(&sections);
        sections.push(section());
        sizes.add(&mut sections, section(), 1);
    }

    #[test]
    fn names_map_like_gnu_ld() {
        assert_eq!(output_name(b".text.startup"), b".text");
        assert_eq!(output_name(b".text"), b".text");
        assert_eq!(output_name(b".textual"), b".textual");
        assert_eq!(output_name(b".rodata.str1.1"), b".rodata");
        assert_eq!(output_name(b".data.rel.ro.local"), b".data.rel.ro");
        assert_eq!(output_name(b".data.rel.local"), b".data");
        assert_eq!(output_name(b".init_array.00101"), b".init_array");
        assert_eq!(output_name(b"my_section"), b"my_section");
        assert_eq!(output_name(b".tbss.x"), b".tbss");
        assert_eq!(output_name(b".tcommon"), b".tbss");
        assert_eq!(output_name_for(b".text.hot.f", true), b".text.hot");
        assert_eq!(output_name_for(b".text.unlikely", true), b".text.unlikely");
        assert_eq!(output_name_for(b".text.hotter", true), b".text");
        assert_eq!(output_name_for(b".text.hot.f", false), b".text");
    }

    #[test]
    fn classes_order_segments() {
        let a = elf::SHF_ALLOC as u64;
        let w = elf::SHF_WRITE as u64;
        let x = elf::SHF_EXECINSTR as u64;
        let t = elf::SHF_TLS as u64;
        assert_eq!(class_rank(".text", a | x, elf::SHT_PROGBITS).0, CLASS_TEXT);
        assert_eq!(class_rank(".rodata", a, elf::SHT_PROGBITS).0, CLASS_RODATA);
        assert_eq!(class_rank(".tbss", a | w | t, elf::SHT_NOBITS), (CLASS_RELRO, 1));
        assert_eq!(class_rank(".init_array", a | w, elf::SHT_INIT_ARRAY), (CLASS_RELRO, 3));
        assert_eq!(class_rank(".data", a | w, elf::SHT_PROGBITS), (CLASS_DATA, 1));
        assert_eq!(class_rank(".bss", a | w, elf::SHT_NOBITS), (CLASS_BSS, 0));
        assert_eq!(class_rank(".debug_info", 0, elf::SHT_PROGBITS).0, CLASS_NONALLOC);
        assert_eq!(class_rank(".note.ABI-tag", a, elf::SHT_NOTE).0, CLASS_HEADERS);
    }
}
