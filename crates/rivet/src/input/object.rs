//! Relocatable objects (`.o`, archive members). Takes the bytes of an ELF64 x86-64 ET_REL file and
//! gives its sections, symbols, relocations and COMDAT groups, borrowed from the mapped input
//! (nothing is copied). Every offset, size and index the file claims is checked here or where it is
//! first used, so a lying file is a clear error, never a panic. `parse` names the file in its
//! errors (as their outermost context); the functions it calls name only the section.
use crate::diag::{Context, Result};
use crate::{bail, ensure, fatal};
use object::elf;
use object::read::elf::{FileHeader, SectionHeader, SectionTable};
use object::read::StringTable;
use object::LittleEndian as LE;

pub type Sym = elf::Sym64<LE>;
pub type Rela = elf::Rela64<LE>;
type Header = elf::FileHeader64<LE>;
use crate::ids::{FileId, IdVec, MergeId, OutputSectionId, SectionRef, SymbolId};

/// An input section as the link sees it: what its header says that later stages read on every
/// section, and the link's own state. It is kept small (64 bytes; a C++ link has half a million):
/// what is read rarely (the name, `sh_entsize`, `sh_link`, where identical code folding sent it)
/// is asked of its file (`ObjectFile::section_name`, `Headers`, `ObjectFile::folded_into`).
pub struct ObjSection<'a> {
    pub sh_type: u32,
    pub flags: u64,
    /// The alignment's base-2 logarithm (`align()`, a power of two).
    pub align_log2: u8,
    pub size: u64,
    /// The section's bytes (empty for SHT_NOBITS).
    pub data: &'a [u8],
    pub relas: &'a [Rela],
    /// False when the section contributes nothing to the output: metadata (symbol tables,
    /// relocations, groups) or a member of a COMDAT group whose signature another file owns.
    pub live: bool,
    /// Set by the output-sections stage: the output section (None: in none).
    pub out: Option<OutputSectionId>,
    /// Set by merging: this section's place in `Merges` (None: not merged).
    pub merge_index: Option<MergeId>,
    /// The name's length, or `u8::MAX` for that many bytes or more (`Headers::name`): the name
    /// is read again without looking for its end (a C++ link's median name has 69 bytes).
    pub name_len: u8,
    /// What the name (read when the file was) says of the section, which stages that see every
    /// section ask here rather than read the name again (`EH_FRAME`, `LINKONCE`, `GNU_STACK`,
    /// `GC_ROOT`, `C_IDENTIFIER`, `TOMBSTONE_ONE`), and `DECOMPRESSED` and `FOLDED`.
    pub marks: u8,
}

// Half a million of them in a large C++ link: a field added here costs memory on every job.
const _: () = assert!(std::mem::size_of::<ObjSection>() == 64);

impl ObjSection<'_> {
    /// `marks`: the section is named `.eh_frame`.
    pub const EH_FRAME: u8 = 1;
    /// `marks`: the bytes were decompressed into memory (not in the input file: no in-kernel copy).
    pub const DECOMPRESSED: u8 = 2;
    /// `marks`: identical code folding folded the section into another (it is not written;
    /// addresses in it are addresses in that one, which `ObjectFile::folded_into` gives).
    pub const FOLDED: u8 = 4;
    /// `marks`: the section is named `.gnu.linkonce.*` (resolution keeps the first of a name).
    pub const LINKONCE: u8 = 8;
    /// `marks`: the section is `.note.GNU-stack` (`ObjectFile::requests_exec_stack`).
    pub const GNU_STACK: u8 = 16;
    /// `marks`: `--gc-sections` keeps the section whatever refers to it (`is_gc_root`).
    pub const GC_ROOT: u8 = 32;
    /// `marks`: the name is a C identifier (`__start_NAME` and `__stop_NAME` refer to it).
    pub const C_IDENTIFIER: u8 = 64;
    /// `marks`: `.debug_loc` or `.debug_ranges`, whose relocations against dropped sections
    /// write 1 (0 would end a list; `Reloc::write_tombstone`).
    pub const TOMBSTONE_ONE: u8 = 128;

    /// `sh_addralign`, at least 1.
    #[inline]
    pub fn align(&self) -> u64 {
        1 << self.align_log2
    }

    /// `marks` has `mark` (one of `EH_FRAME` ... `TOMBSTONE_ONE`).
    #[inline]
    pub fn has(&self, mark: u8) -> bool {
        self.marks & mark != 0
    }

    /// The section is named `.eh_frame`.
    #[inline]
    pub fn is_eh_frame(&self) -> bool {
        self.has(Self::EH_FRAME)
    }

    /// The bytes were decompressed into memory.
    #[inline]
    pub fn decompressed(&self) -> bool {
        self.has(Self::DECOMPRESSED)
    }

    /// Identical code folding folded the section into another (`ObjectFile::folded_into`).
    #[inline]
    pub fn folded(&self) -> bool {
        self.has(Self::FOLDED)
    }
}

pub struct ComdatGroup<'a> {
    /// The group section's own index.
    pub section: u32,
    pub signature: &'a [u8],
    /// The index of the signature symbol in the symbol table (the group section's `sh_info`).
    pub signature_sym: u32,
    /// Section indices of the group's members (checked: each names a section other than 0).
    pub members: &'a [object::U32<LE>],
}

/// The objects of the link, by id.
pub type Objects<'a> = IdVec<FileId, ObjectFile<'a>>;

/// The objects' table indexed by an input section gives that section.
impl<'a> std::ops::Index<SectionRef> for IdVec<FileId, ObjectFile<'a>> {
    type Output = ObjSection<'a>;
    #[inline]
    fn index(&self, r: SectionRef) -> &ObjSection<'a> {
        &self[r.file].sections[r.index as usize]
    }
}

impl<'a> IdVec<FileId, ObjectFile<'a>> {
    /// An input section's name (`ObjectFile::section_name`).
    #[inline]
    pub fn section_name(&self, r: SectionRef) -> &'a [u8] {
        self[r.file].section_name(r.index as usize)
    }

    /// The section identical code folding folded an input section into (None: not folded).
    #[inline]
    pub fn folded_into(&self, r: SectionRef) -> Option<SectionRef> {
        self[r.file].folded_into(r.index as usize)
    }
}

impl<'a> std::ops::IndexMut<SectionRef> for IdVec<FileId, ObjectFile<'a>> {
    #[inline]
    fn index_mut(&mut self, r: SectionRef) -> &mut ObjSection<'a> {
        &mut self[r.file].sections[r.index as usize]
    }
}

pub struct ObjectFile<'a> {
    /// How the file is named in messages: `path` or `archive.a(member.o)`.
    pub name: String,
    /// For an archive member, the length of the archive's part of `name` (`lib.a` in
    /// `lib.a(m.o)`): lld's places say `m.o:(f) in archive lib.a`.
    pub archive_len: Option<usize>,
    /// Where the file stands in the command line: (input position, member index), the order of
    /// output section contents.
    pub order: (u32, u32),
    pub sections: Vec<ObjSection<'a>>,
    /// What the section headers say that `sections` does not keep: names, entry sizes, links.
    pub headers: Headers<'a>,
    /// The sections identical code folding folded (`ObjSection::folded()`), by index (ascending),
    /// each with the section it went into.
    pub folds: Vec<(u32, SectionRef)>,
    pub syms: &'a [Sym],
    pub strtab: StringTable<'a>,
    /// The symbol table (for extended section indices, SHT_SYMTAB_SHNDX).
    pub symtab: object::read::elf::SymbolTable<'a, Header>,
    pub first_global: usize,
    /// Emptied by resolution once it has claimed them, unless the output is relocatable (`-r`).
    pub comdats: Vec<ComdatGroup<'a>>,
    /// Global symbol ids, one per symbol from `first_global` on; filled by resolution.
    pub global_ids: Vec<SymbolId>,
    /// The object carries compiler IR for link-time optimisation (`.gnu.lto_*`, `.llvm.lto`).
    pub ir: Option<Ir>,
    /// For each `.ctors`/`.dtors` table (by section index, ascending): its bytes and relocations
    /// with the order of its 8-byte entries reversed, which it takes when it is placed in
    /// `.init_array`/`.fini_array` (those run forward, `.ctors` ran backward), as GNU ld does.
    /// Emptied once the output sections are known.
    pub reversed: Vec<(u32, &'a [u8], &'a [Rela])>,
    /// Its ELF `e_machine` (0 for the symbol stand-in of an LTO input), checked against the
    /// link's target (`arch::check_objects`).
    pub machine: u16,
}

/// What an object holding compiler IR carries besides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ir {
    /// Machine code too (`-ffat-lto-objects`): linkable without the plugin.
    Fat,
    /// IR only (gcc's default `-flto` object, which defines `__gnu_lto_slim`).
    Slim,
}

/// The message for an IR object that reaches a link without the LTO plugin.
pub const NEEDS_PLUGIN: &str = "unable to handle this LTO object file (GCC/LLVM intermediate code) without the \
                                LTO plugin: link with -flto through the compiler driver (it passes -plugin), or \
                                rebuild without -flto";

/// True when `data` is LLVM bitcode: raw (`BC\xC0\xDE`) or in its wrapper header (`0x0B17C0DE`).
pub fn is_bitcode(data: &[u8]) -> bool {
    data.starts_with(b"BC\xC0\xDE") || data.starts_with(&[0xDE, 0xC0, 0x17, 0x0B])
}

/// True when `data` is an ELF file of any kind (checked further by `parse`).
pub fn is_elf(data: &[u8]) -> bool {
    data.starts_with(&elf::ELFMAG)
}

/// The ELF type (ET_REL, ET_DYN, ...) after checking that the file is ELF64 little-endian x86-64.
/// Errors do not name the file: the caller gives them that context.
pub fn check_header(data: &[u8]) -> Result<u16> {
    ensure!(data.len() >= 64, "file is too short to be an ELF object ({} bytes)", data.len());
    ensure!(data[4] == elf::ELFCLASS64, "is a 32-bit ELF file; rivet links 64-bit targets (x86-64, AArch64) only");
    ensure!(data[5] == elf::ELFDATA2LSB, "is a big-endian ELF file; rivet links little-endian targets only");
    let header = Header::parse(data).context("bad ELF header")?;
    let machine = header.e_machine(LE);
    ensure!(
        crate::machine::Machine::for_machine(machine).is_some(),
        "is for machine {} ({machine}), not one rivet links (x86-64, AArch64)",
        machine_name(machine)
    );
    Ok(header.e_type(LE))
}

fn machine_name(m: u16) -> &'static str {
    match m {
        elf::EM_386 => "i386",
        elf::EM_AARCH64 => "AArch64",
        elf::EM_ARM => "ARM",
        elf::EM_RISCV => "RISC-V",
        elf::EM_PPC64 => "PowerPC64",
        elf::EM_S390 => "s390",
        _ => "unknown",
    }
}

/// Parses a relocatable object. `order` places it on the command line; `name` names it in
/// messages (and in its errors).
/// `arena` keeps the decompressed bytes of `SHF_COMPRESSED` (and `.zdebug_*`) sections.
pub fn parse<'a>(
    data: &'a [u8],
    name: String,
    order: (u32, u32),
    arena: &'a rivet_io::ByteArena,
) -> Result<ObjectFile<'a>> {
    match read(data, order, arena) {
        Ok(file) => Ok(ObjectFile { name, ..file }),
        Err(e) => Err(e.context(name)),
    }
}

/// The names a relocatable object defines globally (`foo@@V` cut to `foo`), as an archive's symbol
/// table would list them: what makes an object between `--start-lib` and `--end-lib` loaded.
pub fn defined_globals(data: &[u8]) -> Result<Vec<&[u8]>> {
    use object::read::elf::Sym as _;
    let kind = check_header(data)?;
    ensure!(kind == elf::ET_REL, "not a relocatable object (ELF type {kind})");
    let header = Header::parse(data).context("bad ELF header")?;
    let table = header.sections(LE, data).context("bad section header table")?;
    let symtab = table.symbols(LE, data, elf::SHT_SYMTAB).context("bad symbol table")?;
    let mut names = Vec::new();
    for sym in symtab.symbols() {
        if sym.st_info >> 4 == elf::STB_LOCAL || sym.st_shndx.get(LE) == elf::SHN_UNDEF {
            continue;
        }
        let name = sym.name(LE, symtab.strings()).map_err(|_| fatal!("bad symbol name offset"))?;
        let cut = memchr::memmem::find(name, b"@@").unwrap_or(name.len());
        names.push(&name[..cut]);
    }
    Ok(names)
}

/// How many global symbols a relocatable object's symbol table holds, read from its section
/// headers alone (the symbol table is looked for from the last header back: compilers put it
/// near the end); 0 for anything unreadable, which `parse` then reports. For sizing tables.
pub fn global_count(data: &[u8]) -> usize {
    let count = || -> Option<usize> {
        let header = Header::parse(data).ok()?;
        let table = header.section_headers(LE, data).ok()?;
        let sh = table.iter().rev().find(|s| s.sh_type(LE) == elf::SHT_SYMTAB)?;
        // Bounded by the file: a size past its end says nothing.
        let entries = sh.data(LE, data).ok()?.len() / std::mem::size_of::<Sym>();
        Some(entries.saturating_sub(sh.sh_info(LE) as usize))
    };
    count().unwrap_or(0)
}

/// `parse`, the file not yet named.
fn read<'a>(data: &'a [u8], order: (u32, u32), arena: &'a rivet_io::ByteArena) -> Result<ObjectFile<'a>> {
    let kind = check_header(data)?;
    ensure!(kind == elf::ET_REL, "not a relocatable object (ELF type {kind})");
    let header = Header::parse(data).context("bad ELF header")?;
    let table = header.sections(LE, data).context("bad section header table")?;
    let section_names = check_section_name_table(header, &table, data)?;
    let read = read_sections(&table, section_names, data, arena)?;
    let (mut sections, names, renamed) = (read.sections, read.names, read.renamed);
    let symtab = table.symbols(LE, data, elf::SHT_SYMTAB).context("bad symbol table")?;
    let first_global = match table.iter().find(|s| s.sh_type(LE) == elf::SHT_SYMTAB) {
        Some(s) => s.sh_info(LE) as usize,
        None => 0,
    };
    let syms = symtab.symbols();
    ensure!(first_global <= syms.len(), "symbol table's first global index {first_global} is past its end");
    // Symbol 0 (the null symbol) is always local, so a symbol table says at least 1 here.
    ensure!(first_global != 0 || syms.is_empty(), "symbol table's first global index is 0 (symbol 0 must be local)");
    let strtab_size = match syms.is_empty() {
        true => 0,
        false => check_symbol_tables(&table, data, &symtab, syms.len())?,
    };
    attach_relocations(&table, data, arena, &mut sections, &names, syms.len())?;
    let reversed = (sections.iter().enumerate())
        .filter(|&(i, sec)| sec.live && is_ctors_table(names[i]) && sec.sh_type == elf::SHT_PROGBITS)
        .filter_map(|(i, sec)| reverse_entries(sec, arena).map(|(data, relas)| (i as u32, data, relas)))
        .collect();
    let mut file = ObjectFile {
        name: String::new(),
        archive_len: None,
        order,
        sections,
        headers: Headers { headers: table.iter().as_slice(), names: section_names, renamed },
        folds: Vec::new(),
        syms,
        strtab: symtab.strings(),
        symtab,
        first_global,
        comdats: Vec::new(),
        global_ids: Vec::new(),
        ir: None,
        reversed,
        machine: header.e_machine(LE),
    };
    file.comdats = read_groups(&table, data, &file)?;
    check_symbols(&file, strtab_size)?;
    if read.has_ir {
        file.ir = Some(ir_kind(&file));
    }
    Ok(file)
}

/// `.ctors`, `.ctors.N`, `.dtors`, `.dtors.N`: tables of pointers run backward by old crtbegin.o
/// code, which GNU ld moves into `.init_array`/`.fini_array`.
pub fn is_ctors_table(name: &[u8]) -> bool {
    [&b".ctors"[..], b".dtors"].iter().any(|p| name == *p || (name.starts_with(p) && name.get(p.len()) == Some(&b'.')))
}

/// `sec`'s bytes and relocations with its 8-byte entries in reverse order (a relocation at offset
/// `o` of an entry moves with it), kept in `arena`; None when the section is not a whole number
/// of entries (it is then linked as it is).
fn reverse_entries<'a>(sec: &ObjSection<'a>, arena: &'a rivet_io::ByteArena) -> Option<(&'a [u8], &'a [Rela])> {
    const ENTRY: u64 = 8;
    let size = sec.size;
    if size == 0 || !size.is_multiple_of(ENTRY) || sec.data.len() as u64 != size {
        return None;
    }
    let moved = |off: u64| size - ENTRY - (off - off % ENTRY) + off % ENTRY;
    if sec.relas.iter().any(|r| r.r_offset.get(LE) >= size) {
        return None;
    }
    let data: Vec<u8> = sec.data.chunks_exact(ENTRY as usize).rev().flatten().copied().collect();
    let mut relas: Vec<u8> = Vec::with_capacity(std::mem::size_of_val(sec.relas));
    for r in sec.relas.iter().rev() {
        let mut moved_rela = *r;
        moved_rela.r_offset.set(LE, moved(r.r_offset.get(LE)));
        relas.extend_from_slice(object::pod::bytes_of(&moved_rela));
    }
    let relas = object::pod::slice_from_all_bytes::<Rela>(arena.keep(relas)).ok()?;
    Some((arena.keep(data), relas))
}

/// gcc's slim objects define `__gnu_lto_slim`; an IR object without it has machine code too.
fn ir_kind(file: &ObjectFile) -> Ir {
    let slim = (file.first_global..file.syms.len())
        .any(|i| file.sym_name(&file.syms[i]).is_ok_and(|n| n == b"__gnu_lto_slim"));
    let code = file.sections.iter().any(|s| s.flags & elf::SHF_EXECINSTR as u64 != 0 && s.size > 0);
    if slim || !code {
        Ir::Slim
    } else {
        Ir::Fat
    }
}

/// A file's section headers, for what is read of them rarely (`ObjSection` keeps the rest).
pub struct Headers<'a> {
    /// The headers as the file has them (none for the stand-in of an LTO input).
    pub headers: &'a [elf::SectionHeader64<LE>],
    /// The section name table's bytes (checked when the file was read: every header's name in it
    /// ends with a NUL).
    pub names: &'a [u8],
    /// Sections named otherwise than by their header, by index (ascending): a `.zdebug_*` section,
    /// once decompressed, is `.debug_*`; the stand-in of an LTO input has no headers.
    pub renamed: Vec<(u32, &'a [u8])>,
}

impl<'a> Headers<'a> {
    /// Section `i`'s name (`.zdebug_*` decompressed is `.debug_*`); empty past the last section.
    /// `known` is its `ObjSection::name_len`.
    #[inline]
    pub fn name(&self, i: usize, known: u8) -> &'a [u8] {
        if !self.renamed.is_empty() {
            if let Ok(k) = self.renamed.binary_search_by_key(&(i as u32), |&(at, _)| at) {
                return self.renamed[k].1;
            }
        }
        let Some(sh) = self.headers.get(i) else { return &[] };
        // Checked when the file was read: the name is in the table and ends with a NUL.
        let rest = self.names.get(sh.sh_name.get(LE) as usize..).unwrap_or(&[]);
        let n = known as usize;
        match known {
            // That many bytes or more: the rest is looked for.
            u8::MAX => rest.get(n..).map_or(rest, |long| &rest[..n + up_to_nul(long).len()]),
            _ => rest.get(..n).unwrap_or(rest),
        }
    }

    /// Section `i`'s `sh_entsize` (checked when the file was read: less than 4 GiB); 0 when it has
    /// no header.
    pub fn entsize(&self, i: usize) -> u32 {
        self.headers.get(i).map_or(0, |sh| sh.sh_entsize.get(LE) as u32)
    }

    /// Section `i`'s `sh_link`: for `SHF_LINK_ORDER` sections, the section its order follows.
    pub fn link(&self, i: usize) -> u32 {
        self.headers.get(i).map_or(0, |sh| sh.sh_link.get(LE))
    }
}

/// `bytes` up to its first NUL (all of it without one). Section names are short (tens of bytes):
/// eight bytes a step, where `memchr`'s set-up for such lengths cost more than the search (it
/// took 7% of a C++ link's instructions when names were looked up again after parsing).
fn up_to_nul(bytes: &[u8]) -> &[u8] {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let mut at = 0;
    while let Some(word) = bytes.get(at..at + 8) {
        let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        // The lowest byte flagged is the first zero byte (a borrow only flags bytes above one).
        let zero = w.wrapping_sub(ONES) & !w & HIGHS;
        if zero != 0 {
            return &bytes[..at + zero.trailing_zeros() as usize / 8];
        }
        at += 8;
    }
    let tail = bytes[at..].iter().position(|&b| b == 0).map_or(bytes.len(), |p| at + p);
    &bytes[..tail]
}

/// What `read_sections` gives.
struct Sections<'a> {
    sections: Vec<ObjSection<'a>>,
    /// Each section's name, for the rest of the parse (the file keeps none: `section_name`).
    names: Vec<&'a [u8]>,
    /// `Headers::renamed`.
    renamed: Vec<(u32, &'a [u8])>,
    /// Some sections hold compiler IR (`.gnu.lto_*`, `.llvm.lto`: never linked, as lld ignores
    /// them; a fat object links with its machine code).
    has_ir: bool,
}

/// The sections. `names` is the section name table's bytes (`check_section_name_table`).
fn read_sections<'a>(
    table: &SectionTable<'a, Header>,
    names: &'a [u8],
    data: &'a [u8],
    arena: &'a rivet_io::ByteArena,
) -> Result<Sections<'a>> {
    let mut out: Vec<ObjSection<'a>> = Vec::with_capacity(table.len());
    let mut sec_names: Vec<&'a [u8]> = Vec::with_capacity(table.len());
    let mut renamed = Vec::new();
    let mut has_ir = false;
    for (i, sh) in table.iter().enumerate() {
        let sec_name = match shared_name(&sec_names, sh, names) {
            Some(name) => name,
            None => table.section_name(LE, sh).with_context(|| format!("section {i}: bad name"))?,
        };
        let section = || format!("section {}", String::from_utf8_lossy(sec_name));
        let sh_type = sh.sh_type(LE);
        let bytes: &[u8] = if sh_type == elf::SHT_NOBITS {
            &[]
        } else {
            sh.data(LE, data).map_err(|_| {
                fatal!(
                    "offset {:#x} + size {:#x} is past the end of the file ({:#x} bytes)",
                    sh.sh_offset(LE),
                    sh.sh_size(LE),
                    data.len()
                )
                .context(format!("{} ({i})", section()))
            })?
        };
        check_kind(sh, sh_type).with_context(section_at(sec_name, i))?;
        let align = sh.sh_addralign(LE).max(1);
        // lld's limit too: larger alignments only pad the output to absurd sizes.
        if align > 1 << 32 {
            return Err(fatal!("alignment {align:#x} is too large (more than 4 GiB)").context(section()));
        }
        if !align.is_power_of_two() {
            return Err(fatal!("alignment {align} is not a power of two").context(section()));
        }
        let ir = sec_name.starts_with(b".gnu.lto_") || sec_name == b".llvm.lto";
        has_ir |= ir;
        let mut flags = sh.sh_flags(LE);
        let (mut sec_name, mut bytes, mut align, mut size) = (sec_name, bytes, align, sh.sh_size(LE));
        let gnu_style = sec_name.starts_with(b".zdebug") && bytes.starts_with(b"ZLIB");
        let decompressed = flags & elf::SHF_COMPRESSED as u64 != 0 || gnu_style;
        if decompressed {
            let (plain, plain_align) = decompress(bytes, gnu_style, &section())?;
            if gnu_style {
                // .zdebug_info holds what .debug_info would have.
                sec_name = table.section_name(LE, sh).ok().and_then(|n| n.get(2..)).map_or(sec_name, |rest| {
                    let mut full = b".".to_vec();
                    full.extend_from_slice(rest);
                    arena.keep(full)
                });
                renamed.push((i as u32, sec_name));
            } else {
                align = plain_align.max(1);
            }
            flags &= !(elf::SHF_COMPRESSED as u64);
            size = plain.len() as u64;
            bytes = arena.keep(plain);
        }
        check_merge(sh_type, flags, sh.sh_entsize(LE), size, bytes).with_context(section_at(sec_name, i))?;
        // `Headers::entsize` reads it from the header again.
        u32::try_from(sh.sh_entsize(LE))
            .map_err(|_| fatal!("invalid sh_entsize {:#x}: 4 GiB or more", sh.sh_entsize(LE)).context(section()))?;
        sec_names.push(sec_name);
        out.push(ObjSection {
            sh_type,
            flags,
            align_log2: align.trailing_zeros() as u8,
            size,
            data: bytes,
            relas: &[],
            live: i != 0 && !ir && is_content(sh_type, flags, sec_name),
            out: None,
            merge_index: None,
            name_len: u8::try_from(sec_name.len()).unwrap_or(u8::MAX),
            marks: marks(sec_name, sh_type, flags) | (u8::from(decompressed) * ObjSection::DECOMPRESSED),
        });
    }
    check_overlaps(table, &sec_names)?;
    Ok(Sections { sections: out, names: sec_names, renamed, has_ir })
}

/// Whether `--gc-sections` keeps a section whatever refers to it, by its name, type and flags
/// (computed when the file is read: `ObjSection::GC_ROOT`).
#[inline]
pub fn is_gc_root(name: &[u8], sh_type: u32, flags: u64) -> bool {
    const KEEP: &[&[u8]] = &[b".init", b".fini", b".ctors", b".dtors", b".jcr"];
    // Every name kept starts with a dot and one of these: most names are passed over at that.
    let by_name = || {
        let prefix_root = [&b".init_array"[..], b".fini_array", b".preinit_array", b".ctors.", b".dtors."]
            .iter()
            .any(|p| name.starts_with(p));
        KEEP.contains(&name) || prefix_root
    };
    matches!(sh_type, elf::SHT_NOTE | elf::SHT_INIT_ARRAY | elf::SHT_FINI_ARRAY | elf::SHT_PREINIT_ARRAY)
        || flags & elf::SHF_GNU_RETAIN as u64 != 0
        || (name.first() == Some(&b'.')
            && matches!(name.get(1), Some(b'i' | b'f' | b'p' | b'c' | b'd' | b'j'))
            && by_name())
}

#[inline]
pub fn is_c_identifier(name: &[u8]) -> bool {
    !name.is_empty() && !name[0].is_ascii_digit() && name.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

/// `ObjSection::marks` from what the header says (but `DECOMPRESSED`).
fn marks(name: &[u8], sh_type: u32, flags: u64) -> u8 {
    let says = [
        (name == b".eh_frame", ObjSection::EH_FRAME),
        (name.starts_with(b".gnu.linkonce."), ObjSection::LINKONCE),
        (name == b".note.GNU-stack", ObjSection::GNU_STACK),
        (is_gc_root(name, sh_type, flags), ObjSection::GC_ROOT),
        (is_c_identifier(name), ObjSection::C_IDENTIFIER),
        (matches!(name, b".debug_loc" | b".debug_ranges"), ObjSection::TOMBSTONE_ONE),
    ];
    says.iter().fold(0, |marks, &(yes, mark)| if yes { marks | mark } else { marks })
}

/// A relocation section's name when the string table shares its end with its target's, as
/// assemblers and LLVM write them (`.rela.text.foo` ends in `.text.foo`, whose offset is 5 bytes
/// further): the bytes from its offset to the end of the target's name, found without reading
/// them again (objects with a section per function have a long name per section). None when the
/// names are not laid out so (the name is then looked up as any other); `names` is the section
/// name table's bytes.
fn shared_name<'a>(earlier: &[&'a [u8]], sh: &elf::SectionHeader64<LE>, names: &'a [u8]) -> Option<&'a [u8]> {
    if !matches!(sh.sh_type(LE), elf::SHT_RELA | elf::SHT_REL | SHT_CREL) {
        return None;
    }
    let target = *earlier.get(sh.sh_info(LE) as usize)?;
    // The target's name must be bytes of the same table (not a decompressed section's name kept
    // elsewhere), at most 5 bytes (`.rela`) after this one's offset, with no NUL between.
    let at = (target.as_ptr() as usize).checked_sub(names.as_ptr() as usize).filter(|&at| at < names.len())?;
    let from = sh.sh_name(LE) as usize;
    names.get(from..at).filter(|p| !p.is_empty() && p.len() <= 5 && !p.contains(&0))?;
    names.get(from..at + target.len())
}

/// How a section is named in errors: `section .text (4)`.
fn section_at(name: &[u8], index: usize) -> impl FnOnce() -> String + '_ {
    move || format!("section {} ({index})", String::from_utf8_lossy(name))
}

/// The entry size a table section must declare (lld and GNU ld refuse any other).
fn table_entsize(sh_type: u32) -> Option<u64> {
    match sh_type {
        elf::SHT_SYMTAB | elf::SHT_RELA => Some(24),
        elf::SHT_GROUP | elf::SHT_SYMTAB_SHNDX => Some(4),
        _ => None,
    }
}

/// Section types a relocatable object may hold: the standard ones rivet reads or copies, and
/// anything in the OS-specific (unless `SHF_OS_NONCONFORMING`), processor-specific or (not
/// allocated) user ranges. Anything else (`0xf7`, `0x650001`, `SHT_HASH` in an object) is an
/// unknown type, as lld and GNU ld say.
fn known_type(sh_type: u32, flags: u64) -> bool {
    match sh_type {
        elf::SHT_NULL
        | elf::SHT_PROGBITS
        | elf::SHT_SYMTAB
        | elf::SHT_STRTAB
        | elf::SHT_RELA
        | elf::SHT_NOTE
        | elf::SHT_NOBITS
        | elf::SHT_REL
        | elf::SHT_INIT_ARRAY
        | elf::SHT_FINI_ARRAY
        | elf::SHT_PREINIT_ARRAY
        | elf::SHT_GROUP
        | elf::SHT_SYMTAB_SHNDX
        | SHT_CREL => true,
        elf::SHT_LOOS..=elf::SHT_HIOS => flags & elf::SHF_OS_NONCONFORMING as u64 == 0,
        elf::SHT_LOPROC..=elf::SHT_HIPROC => true,
        elf::SHT_LOUSER..=elf::SHT_HIUSER => flags & elf::SHF_ALLOC as u64 == 0,
        _ => false,
    }
}

/// What a section header says about its kind, checked before its bytes are used: a known type,
/// a size some address space can hold, and the entry size of a table.
fn check_kind(sh: &elf::SectionHeader64<LE>, sh_type: u32) -> Result<()> {
    let flags = sh.sh_flags(LE);
    ensure!(known_type(sh_type, flags), "unsupported section type: {sh_type:#x}");
    let size = sh.sh_size(LE);
    // No address space holds more (a NOBITS size is not bounded by the file).
    ensure!(size < 1 << 48, "size {size:#x} is larger than the address space");
    let entsize = sh.sh_entsize(LE);
    if let Some(want) = table_entsize(sh_type) {
        ensure!(entsize == want, "invalid sh_entsize: expected {want}, but got {entsize}");
    }
    Ok(())
}

/// A mergeable section is a whole number of entries, not writable, and (strings) ends with a
/// terminator, so every string in it is terminated: lld's rule for what it merges (SHF_MERGE, a
/// size and an entry size). `bytes` and `size` are the section's contents once decompressed.
fn check_merge(sh_type: u32, flags: u64, entsize: u64, size: u64, bytes: &[u8]) -> Result<()> {
    if flags & elf::SHF_MERGE as u64 == 0 || size == 0 || entsize == 0 {
        return Ok(());
    }
    ensure!(
        size.is_multiple_of(entsize),
        "SHF_MERGE section size ({size}) must be a multiple of sh_entsize ({entsize})"
    );
    ensure!(flags & elf::SHF_WRITE as u64 == 0, "writable SHF_MERGE section is not supported");
    if flags & elf::SHF_STRINGS as u64 != 0 && sh_type != elf::SHT_NOBITS {
        let last = bytes.len().saturating_sub(entsize as usize);
        ensure!(bytes[last..].iter().all(|&b| b == 0), "string is not null terminated");
    }
    Ok(())
}

/// `e_shstrndx` names an existing string table (lld: "section header string table index N does
/// not exist"); gives its bytes (none when the file has no sections, or when they are past the
/// end of the file, which the section name lookups then report).
fn check_section_name_table<'a>(header: &Header, table: &SectionTable<'a, Header>, data: &'a [u8]) -> Result<&'a [u8]> {
    if table.is_empty() {
        let index = header.e_shstrndx(LE);
        ensure!(index == 0, "section header string table index {index} does not exist (the file has no sections)");
        return Ok(&[]);
    }
    let index = header.shstrndx(LE, data).context("bad section header string table index")? as usize;
    let sh = table.section(object::SectionIndex(index)).map_err(|_| {
        fatal!("section header string table index {index} does not exist (the file has {} sections)", table.len())
    })?;
    let ty = sh.sh_type(LE);
    ensure!(ty == elf::SHT_STRTAB, "section header string table (section {index}) has type {ty:#x}, not SHT_STRTAB");
    Ok(sh.data(LE, data).unwrap_or(&[]))
}

/// The symbol table's string table is a non-empty, NUL-terminated SHT_STRTAB (its size is
/// returned), and every SHT_SYMTAB_SHNDX section is the symbol table's and has one entry per symbol.
fn check_symbol_tables(
    table: &SectionTable<'_, Header>,
    data: &[u8],
    symtab: &object::read::elf::SymbolTable<'_, Header>,
    nsyms: usize,
) -> Result<u64> {
    let strings = symtab.string_section();
    let bytes = table.section(strings).and_then(|sh| sh.data(LE, data)).context("bad symbol table")?;
    let what = || format!("string table (section {})", strings.0);
    ensure!(!bytes.is_empty(), "{} is empty", what());
    ensure!(bytes.last() == Some(&0), "{} does not end with a NUL", what());
    for (i, sh) in table.iter().enumerate() {
        if sh.sh_type(LE) != elf::SHT_SYMTAB_SHNDX {
            continue;
        }
        let link = sh.sh_link(LE) as usize;
        ensure!(
            link == symtab.section().0,
            "SHT_SYMTAB_SHNDX section {i} belongs to section {link}, not to the symbol table (section {})",
            symtab.section().0
        );
        let entries = sh.sh_size(LE) / 4;
        ensure!(
            entries == nsyms as u64,
            "SHT_SYMTAB_SHNDX section {i} has {entries} entries, but the symbol table has {nsyms}"
        );
    }
    Ok(bytes.len() as u64)
}

/// Decompressed sizes above this are refused (a lying header must not exhaust memory).
const MAX_DECOMPRESSED: u64 = 4 << 30;

/// The contents of a compressed section and the alignment its header gives: ELF `SHF_COMPRESSED`
/// (an Elf64_Chdr then a zlib or zstd stream, gcc `-gz=zlib|zstd`) or the older GNU `.zdebug_*`
/// form ("ZLIB", a big-endian 64-bit size, a zlib stream; gcc `-gz=zlib-gnu`). `what` names the
/// section in errors.
pub(crate) fn decompress(bytes: &[u8], gnu_style: bool, what: &str) -> Result<(Vec<u8>, u64)> {
    inflate(bytes, gnu_style).context(what)
}

fn inflate(bytes: &[u8], gnu_style: bool) -> Result<(Vec<u8>, u64)> {
    let (kind, size, align, payload) = if gnu_style {
        let size = bytes.get(4..12).map(|b| u64::from_be_bytes(b.try_into().unwrap()));
        let size = size.context("truncated .zdebug header")?;
        (elf::ELFCOMPRESS_ZLIB, size, 1, &bytes[12..])
    } else {
        let h = bytes.get(..24).context("compressed section is too small for its header")?;
        let word = |at: usize| u64::from_le_bytes(h[at..at + 8].try_into().unwrap());
        (u32::from_le_bytes(h[0..4].try_into().unwrap()), word(8), word(16), &bytes[24..])
    };
    ensure!(size <= MAX_DECOMPRESSED, "claims {size} bytes uncompressed (more than 4 GiB)");
    let plain = match kind {
        elf::ELFCOMPRESS_ZLIB => miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(payload, size as usize)
            .map_err(|e| fatal!("corrupt zlib data ({:?})", e.status))?,
        // libzstd reads every frame (rivet's own output has one per MiB); more bytes than the
        // header says is an error, not a larger buffer.
        elf::ELFCOMPRESS_ZSTD => {
            zstd::bulk::decompress(payload, size as usize).map_err(|e| fatal!("corrupt zstd data ({e})"))?
        }
        other => bail!("unknown compression type {other}"),
    };
    ensure!(plain.len() as u64 == size, "decompressed to {} bytes but the header says {size}", plain.len());
    ensure!(align == 0 || align.is_power_of_two(), "alignment {align} in the compression header is not a power of two");
    Ok((plain, align))
}

/// Two sections whose bytes share part of the file mean a corrupt (or crafted) object: the same
/// bytes would reach the output twice or be read as two different things.
fn check_overlaps(table: &SectionTable<'_, Header>, names: &[&[u8]]) -> Result<()> {
    // Compilers write the relocation sections after the rest (clang, gcc with many sections) while
    // their headers are interleaved: each kind alone is in file order. Put end to end, they are two
    // sorted runs, which the stable sort merges without partitioning (ranges are distinct, so it
    // orders them as any sort would).
    let (mut ranges, mut relocations): (Vec<(u64, u64, usize)>, Vec<_>) = (Vec::new(), Vec::new());
    for (i, sh) in table.iter().enumerate() {
        // Section 0 holds no bytes: with more than 65279 sections its sh_size is the real count.
        let (ty, size) = (sh.sh_type(LE), sh.sh_size(LE));
        if matches!(ty, elf::SHT_NOBITS | elf::SHT_NULL) || size == 0 {
            continue;
        }
        let range = (sh.sh_offset(LE), sh.sh_offset(LE) + size, i);
        if ty == elf::SHT_RELA || ty == SHT_CREL {
            relocations.push(range);
        } else {
            ranges.push(range);
        }
    }
    ranges.append(&mut relocations);
    ranges.sort();
    for w in ranges.windows(2) {
        let ((_, end_a, a), (start_b, _, b)) = (w[0], w[1]);
        ensure!(
            start_b >= end_a,
            "section {} ({b}) overlaps section {} ({a}) in the file",
            String::from_utf8_lossy(names[b]),
            String::from_utf8_lossy(names[a])
        );
    }
    Ok(())
}

/// Sections that carry bytes into the output (everything else is metadata the linker consumes).
fn is_content(sh_type: u32, flags: u64, name: &[u8]) -> bool {
    let metadata = matches!(
        sh_type,
        elf::SHT_NULL
            | elf::SHT_SYMTAB
            | elf::SHT_STRTAB
            | elf::SHT_RELA
            | elf::SHT_REL
            | SHT_CREL
            | elf::SHT_GROUP
            | elf::SHT_SYMTAB_SHNDX
    );
    // .note.GNU-stack only says "no executable stack"; .note.gnu.property notes are merged into one
    // output note (`synthetic::property`), never concatenated.
    let dropped = name == b".note.GNU-stack" || name == b".note.gnu.property" || flags & elf::SHF_EXCLUDE as u64 != 0;
    !metadata && !dropped
}

fn attach_relocations<'a>(
    table: &SectionTable<'a, Header>,
    data: &'a [u8],
    arena: &'a rivet_io::ByteArena,
    sections: &mut [ObjSection<'a>],
    names: &[&[u8]],
    nsyms: usize,
) -> Result<()> {
    for (i, sh) in table.iter().enumerate() {
        let crel = match sh.sh_type(LE) {
            elf::SHT_REL => {
                return Err(fatal!("SHT_REL relocations are not used on x86-64").context(format!("section {i}")))
            }
            elf::SHT_RELA => false,
            SHT_CREL => true,
            _ => continue,
        };
        let target = sh.sh_info(LE) as usize;
        ensure!(
            target != 0 && target < sections.len(),
            "relocation section {i} applies to section {target}, which does not exist"
        );
        // Only a section with contents can be relocated (lld: "has invalid sh_info").
        let target_type = sections[target].sh_type;
        ensure!(
            !matches!(
                target_type,
                elf::SHT_NULL
                    | elf::SHT_SYMTAB
                    | elf::SHT_STRTAB
                    | elf::SHT_RELA
                    | elf::SHT_REL
                    | SHT_CREL
                    | elf::SHT_SYMTAB_SHNDX
            ),
            "relocation section {i} applies to section {} ({target}) of type {target_type:#x}, which holds no contents",
            String::from_utf8_lossy(names[target])
        );
        let relas: &[Rela] = if crel {
            let bytes = sh.data(LE, data).map_err(|_| fatal!("relocation section {i}: bad offset or size"))?;
            let decoded = decode_crel(bytes).with_context(|| format!("CREL relocation section {i}"))?;
            let bytes = arena.keep(object::pod::bytes_of_slice(&decoded).to_vec());
            object::pod::slice_from_all_bytes(bytes).map_err(|()| fatal!("CREL relocation section {i}: not decoded"))?
        } else {
            sh.data_as_array(LE, data).with_context(|| format!("relocation section {i}"))?
        };
        // One pass the compiler vectorises over every relocation of the link (the debug sections'
        // are most of them); the first bad one is looked for only when there is one.
        let most = relas.iter().map(|r| r.r_info.get(LE) >> 32).fold(0, u64::max);
        let first_bad = (most >= nsyms as u64)
            .then(|| relas.iter().enumerate().find(|(_, r)| r.r_sym(LE, false) as usize >= nsyms))
            .flatten();
        if let Some((k, bad)) = first_bad {
            bail!(
                "relocation {k} in section {} refers to symbol {}, but the file has {nsyms}",
                String::from_utf8_lossy(names[target]),
                bad.r_sym(LE, false)
            );
        }
        ensure!(
            sections[target].relas.is_empty(),
            "section {} ({target}) has more than one relocation section (the second is section {i})",
            String::from_utf8_lossy(names[target])
        );
        sections[target].relas = relas;
    }
    Ok(())
}

/// `SHT_CREL`: compact relocations (clang `-Wa,--crel`), the deltas of RELA's fields in LEB128.
pub const SHT_CREL: u32 = 0x4000_0014;

/// Decodes a CREL section into RELA entries. The header, a ULEB128, is `count * 8 | addend_flag
/// (4) | shift`; each entry starts with a byte whose low 2 bits (3 with addends) say which of the
/// symbol index, type and addend change (each a SLEB128 delta), and whose other bits with a
/// ULEB128 continuation when its top bit is set are the offset's delta (in units of `1 << shift`).
/// The deltas add in wrapping arithmetic, as the format defines them.
pub fn decode_crel(bytes: &[u8]) -> Result<Vec<Rela>> {
    let mut r = LebReader { bytes, pos: 0 };
    let hdr = r.uleb()?;
    let count = hdr >> 3;
    let with_addend = hdr & 4 != 0;
    let flag_bits = if with_addend { 3 } else { 2 };
    let shift = (hdr & 3) as u32;
    // Each entry takes at least a byte: a count the bytes cannot hold is refused before allocating.
    ensure!(count <= bytes.len() as u64, "header says {count} relocations, but the section has {} bytes", bytes.len());
    let mut out = Vec::with_capacity(count as usize);
    let (mut offset, mut sym, mut ty, mut addend) = (0u64, 0u64, 0u64, 0u64);
    for k in 0..count {
        let b = r.byte().with_context(|| format!("relocation {k}"))?;
        offset = offset.wrapping_add(u64::from(b) >> flag_bits);
        if b & 0x80 != 0 {
            let more = r.uleb().with_context(|| format!("relocation {k}"))?;
            offset = offset.wrapping_add(more.wrapping_shl(7 - flag_bits)).wrapping_sub(0x80 >> flag_bits);
        }
        if b & 1 != 0 {
            sym = sym.wrapping_add(r.sleb().with_context(|| format!("relocation {k}"))? as u64);
        }
        if b & 2 != 0 {
            ty = ty.wrapping_add(r.sleb().with_context(|| format!("relocation {k}"))? as u64);
        }
        if with_addend && b & 4 != 0 {
            addend = addend.wrapping_add(r.sleb().with_context(|| format!("relocation {k}"))? as u64);
        }
        let (sym32, ty32) = (sym as u32, ty as u32);
        ensure!(u64::from(sym32) == sym && u64::from(ty32) == ty, "relocation {k}: symbol index or type out of range");
        let mut rela = Rela { r_offset: Default::default(), r_info: Default::default(), r_addend: Default::default() };
        rela.r_offset.set(LE, offset.wrapping_shl(shift));
        rela.r_info.set(LE, (u64::from(sym32) << 32) | u64::from(ty32));
        rela.r_addend.set(LE, addend as i64);
        out.push(rela);
    }
    ensure!(r.pos == bytes.len(), "{} bytes follow the last relocation", bytes.len() - r.pos);
    Ok(out)
}

struct LebReader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl LebReader<'_> {
    fn byte(&mut self) -> Result<u8> {
        let b = *self.bytes.get(self.pos).with_context(|| "the section ends inside a relocation".to_string())?;
        self.pos += 1;
        Ok(b)
    }

    /// An unsigned LEB128 of at most 64 bits (bits past the 64th are refused).
    fn uleb(&mut self) -> Result<u64> {
        let (mut value, mut shift) = (0u64, 0u32);
        loop {
            let b = self.byte()?;
            ensure!(shift < 64 && (shift < 63 || b & 0x7e == 0), "a LEB128 number has more than 64 bits");
            value |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
    }

    /// A signed LEB128 of at most 64 bits.
    fn sleb(&mut self) -> Result<i64> {
        let (mut value, mut shift) = (0u64, 0u32);
        loop {
            let b = self.byte()?;
            ensure!(shift < 64, "a LEB128 number has more than 64 bits");
            value |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    value |= u64::MAX << shift;
                }
                return Ok(value as i64);
            }
        }
    }
}

fn read_groups<'a>(
    table: &SectionTable<'a, Header>,
    data: &'a [u8],
    file: &ObjectFile<'a>,
) -> Result<Vec<ComdatGroup<'a>>> {
    let mut groups = Vec::new();
    for (i, sh) in table.iter().enumerate() {
        if sh.sh_type(LE) != elf::SHT_GROUP {
            continue;
        }
        let words: &[object::U32<LE>] = sh.data_as_array(LE, data).with_context(|| format!("group section {i}"))?;
        let (flags, members) = words.split_first().with_context(|| format!("group section {i} is empty"))?;
        let flags = flags.get(LE);
        ensure!(flags & !elf::GRP_COMDAT == 0, "group section {i} has unknown flags {flags:#x}");
        if let Some((k, bad)) = members
            .iter()
            .map(|m| m.get(LE))
            .enumerate()
            .find(|&(_, idx)| idx as usize >= file.sections.len() || idx == 0)
        {
            bail!("group section {i}: member {k} names section {bad}, which does not exist");
        }
        let sym_index = sh.sh_info(LE) as usize;
        let sym = file.syms.get(sym_index).ok_or_else(|| {
            fatal!("signature symbol {sym_index} does not exist").context(format!("group section {i}"))
        })?;
        if flags & elf::GRP_COMDAT == 0 {
            continue; // A non-COMDAT group only ties sections together; nothing to deduplicate.
        }
        let signature = symbol_name(file.strtab, sym)?;
        groups.push(ComdatGroup { section: i as u32, signature, signature_sym: sym_index as u32, members });
    }
    Ok(groups)
}

/// Every symbol is checked once, whether or not anything looks it up: its name is in the string
/// table, its binding fits its place (locals before `sh_info`, then global, weak or unique), its
/// section exists, an offset into a mergeable section is inside it, and a TLS symbol is defined in
/// a TLS section. A relocation of allocated contents may not name an undefined local symbol.
fn check_symbols(file: &ObjectFile, strtab_size: u64) -> Result<()> {
    // What each section needs checked of the symbols in it, one byte per section (the sections
    // themselves are large structs, too large to read once per symbol).
    const MERGED: u8 = 1;
    const TLS: u8 = 2;
    let kinds: Vec<u8> = file
        .sections
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let merged = s.flags & elf::SHF_MERGE as u64 != 0 && s.size != 0 && file.headers.entsize(i) != 0;
            (merged as u8 * MERGED) | ((s.flags & elf::SHF_TLS as u64 != 0) as u8 * TLS)
        })
        .collect();
    let mut undefined_local = false;
    for i in 0..file.syms.len() {
        let sym = &file.syms[i];
        let name = sym.st_name.get(LE) as u64;
        ensure!(
            name < strtab_size,
            "symbol {i}: name offset {name:#x} is past the end of the string table ({strtab_size:#x} bytes)"
        );
        let bind = sym.st_info >> 4;
        if i < file.first_global {
            ensure!(
                bind == elf::STB_LOCAL,
                "symbol {i} is not local (binding {bind}) but comes before the first global (.symtab's sh_info, {})",
                file.first_global
            );
        } else {
            ensure!(
                matches!(bind, elf::STB_GLOBAL | elf::STB_WEAK | elf::STB_GNU_UNIQUE),
                "symbol {i} has invalid binding {bind}"
            );
        }
        let raw = sym.st_shndx.get(LE);
        ensure!(
            raw != elf::SHN_XINDEX || file.symtab.shndx(LE, object::SymbolIndex(i)).is_some(),
            "symbol {i} has an extended section index but the file has no SHT_SYMTAB_SHNDX entry for it"
        );
        undefined_local |= raw == elf::SHN_UNDEF && i != 0 && i < file.first_global;
        let Some(sec) = file.sym_shndx(i) else { continue };
        let kind = *kinds
            .get(sec as usize)
            .with_context(|| format!("symbol {i} is in section {sec}, which does not exist"))?;
        let tls_symbol = sym.st_info & 0xf == elf::STT_TLS;
        if kind & MERGED == 0 && (!tls_symbol || kind & TLS != 0) {
            continue;
        }
        let s = &file.sections[sec as usize];
        let value = sym.st_value.get(LE);
        ensure!(
            kind & MERGED == 0 || value < s.size,
            "symbol {i}: offset {value:#x} is outside its section {} ({sec}, {:#x} bytes)",
            String::from_utf8_lossy(file.section_name(sec as usize)),
            s.size
        );
        ensure!(
            !tls_symbol || kind & TLS != 0,
            "symbol {i} is a TLS symbol but its section {} ({sec}) is not SHF_TLS",
            String::from_utf8_lossy(file.section_name(sec as usize))
        );
    }
    // Rare (no compiler emits one): the relocations are read only when the file has one.
    if undefined_local {
        for (t, sec) in file.sections.iter().enumerate() {
            if sec.flags & elf::SHF_ALLOC as u64 == 0 {
                continue;
            }
            for (k, r) in sec.relas.iter().enumerate() {
                let s = r.r_sym(LE, false) as usize;
                ensure!(
                    s == 0 || s >= file.first_global || file.syms[s].st_shndx.get(LE) != elf::SHN_UNDEF,
                    "relocation {k} of section {} ({t}) refers to local symbol {s}, which is undefined",
                    String::from_utf8_lossy(file.section_name(t))
                );
            }
        }
    }
    Ok(())
}

/// A symbol's name from the string table (the error names no file).
fn symbol_name<'a>(strtab: StringTable<'a>, sym: &Sym) -> Result<&'a [u8]> {
    use object::read::elf::Sym as _;
    sym.name(LE, strtab).map_err(|_| fatal!("symbol name offset {:#x} is past the string table", sym.st_name.get(LE)))
}

impl<'a> ObjectFile<'a> {
    /// The object asks for an executable stack: its `.note.GNU-stack` section is SHF_EXECINSTR.
    /// (GNU ld also takes a missing note as that request; lld, mold and rivet do not.)
    pub fn requests_exec_stack(&self) -> bool {
        (self.sections.iter().skip(1)).any(|s| s.has(ObjSection::GNU_STACK) && s.flags & elf::SHF_EXECINSTR as u64 != 0)
    }

    /// Section `i`'s name (`Headers::name`).
    #[inline]
    pub fn section_name(&self, i: usize) -> &'a [u8] {
        self.headers.name(i, self.sections.get(i).map_or(0, |s| s.name_len))
    }

    /// The section identical code folding folded section `i` into (None: not folded).
    pub fn folded_into(&self, i: usize) -> Option<SectionRef> {
        if !self.sections[i].folded() {
            return None;
        }
        let k = self.folds.binary_search_by_key(&(i as u32), |&(at, _)| at).ok()?;
        Some(self.folds[k].1)
    }

    /// A symbol's name; the error names the file.
    pub fn sym_name(&self, sym: &Sym) -> Result<&'a [u8]> {
        symbol_name(self.strtab, sym).context(&self.name)
    }

    /// The section index a symbol is defined in: None for undefined, absolute and common symbols.
    pub fn sym_shndx(&self, index: usize) -> Option<u32> {
        let sym = &self.syms[index];
        let shndx = sym.st_shndx.get(LE);
        match shndx {
            elf::SHN_UNDEF | elf::SHN_ABS | elf::SHN_COMMON => None,
            elf::SHN_XINDEX => self.symtab.shndx(LE, object::SymbolIndex(index)),
            s if s >= elf::SHN_LORESERVE => None,
            s => Some(s as u32),
        }
    }

    /// Name of a symbol for messages (a section symbol is named by its section; a C++ or Rust name
    /// demangled unless `--no-demangle`).
    pub fn display_sym(&self, index: usize) -> String {
        let sym = &self.syms[index];
        if sym.st_info & 0xf == elf::STT_SECTION {
            if let Some(s) = self.sym_shndx(index) {
                return String::from_utf8_lossy(self.section_name(s as usize)).into_owned();
            }
        }
        match self.sym_name(sym) {
            Ok(n) => crate::diag::symbol_name(n),
            Err(_) => format!("<symbol {index}>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chdr(kind: u32, size: u64, align: u64) -> Vec<u8> {
        let mut h = kind.to_le_bytes().to_vec();
        h.extend_from_slice(&[0; 4]);
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&align.to_le_bytes());
        h
    }

    #[test]
    fn compressed_sections_decompress_and_lies_are_errors() {
        let plain: Vec<u8> = (0..5000u32).map(|i| (i % 13) as u8).collect();
        let z = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
        let mut gabi = chdr(elf::ELFCOMPRESS_ZLIB, plain.len() as u64, 8);
        gabi.extend_from_slice(&z);
        assert_eq!(decompress(&gabi, false, "x").unwrap(), (plain.clone(), 8));
        let mut gnu = b"ZLIB".to_vec();
        gnu.extend_from_slice(&(plain.len() as u64).to_be_bytes());
        gnu.extend_from_slice(&z);
        assert_eq!(decompress(&gnu, true, "x").unwrap().0, plain);
        // The header lies about the size, either way.
        let mut short = chdr(elf::ELFCOMPRESS_ZLIB, 100, 1);
        short.extend_from_slice(&z);
        assert!(decompress(&short, false, "f.o: section .debug_info")
            .unwrap_err()
            .to_string()
            .contains("f.o: section .debug_info"));
        let mut long = chdr(elf::ELFCOMPRESS_ZLIB, 9000, 1);
        long.extend_from_slice(&z);
        assert!(decompress(&long, false, "x").unwrap_err().to_string().contains("header says 9000"));
        let mut huge = chdr(elf::ELFCOMPRESS_ZLIB, 1 << 40, 1);
        huge.extend_from_slice(&z);
        assert!(decompress(&huge, false, "x").unwrap_err().to_string().contains("more than 4 GiB"));
        let mut unknown = chdr(7, 10, 1);
        unknown.extend_from_slice(&z);
        assert!(decompress(&unknown, false, "x").unwrap_err().to_string().contains("unknown compression type 7"));
        assert!(decompress(&[1, 0, 0], false, "x").unwrap_err().to_string().contains("too small"));
        let mut garbage = chdr(elf::ELFCOMPRESS_ZSTD, 10, 1);
        garbage.extend_from_slice(b"not zstd at all");
        assert!(decompress(&garbage, false, "x").unwrap_err().to_string().contains("corrupt zstd"));
    }

    /// Every section's name is the one its header names, also where a relocation section's is
    /// taken from its target's (`shared_name`): for gcc's and clang's objects with a section per
    /// function, and for compressed debug sections, whose names rivet rewrites.
    #[test]
    fn names_end_at_the_first_nul() {
        for len in 0..40 {
            for tail in [&b""[..], b"\0", b"\0\0x", b"\0abcdefghij\0"] {
                let mut bytes = vec![b'n'; len];
                // A byte of 0x01 or 0x80 next to the NUL must not be taken for one.
                if len > 2 {
                    bytes[len - 1] = 0x01;
                    bytes[len - 2] = 0x80;
                }
                bytes.extend_from_slice(tail);
                assert_eq!(up_to_nul(&bytes), &bytes[..len], "{len} bytes then {tail:?}");
            }
        }
        assert_eq!(up_to_nul(b"\x01\x00\x80"), b"\x01");
    }

    #[test]
    fn relocation_section_names_are_the_headers_own() {
        let s = crate::tests::Scratch::new("section-names");
        let source = "static int twice(int x) { return 2 * x; }\nint f(int x) { return twice(x) + 1; }\n\
                      int g(int x) { return f(x) * 3; }\nint h(void) { return g(1); }\n";
        let mut objects = vec![s.cc("gcc.c", source, &["-ffunction-sections", "-g", "-O0"])];
        objects.push(s.cc("zdebug.c", source, &["-ffunction-sections", "-g", "-gz=zlib-gnu"]));
        if std::process::Command::new("clang-19").arg("--version").output().is_ok_and(|o| o.status.success()) {
            let clang = s.path("clang.o");
            let src = s.path("gcc.c");
            let ok = std::process::Command::new("clang-19")
                .args(["-c", "-ffunction-sections", "-g", &src, "-o", &clang])
                .status()
                .is_ok_and(|st| st.success());
            assert!(ok, "clang-19 -c failed");
            objects.push(clang);
        }
        let mut shared = 0;
        for path in &objects {
            let data = std::fs::read(path).unwrap();
            let arena = rivet_io::ByteArena::new();
            let file = parse(&data, path.clone(), (0, 0), &arena).unwrap();
            let header = Header::parse(&*data).unwrap();
            let table = header.sections(LE, &*data).unwrap();
            let names = check_section_name_table(header, &table, &data).unwrap();
            // The names the parse used (relocation sections' found from their targets') and the
            // ones the file gives later (looked up again).
            let parsed = read_sections(&table, names, &data, &arena).unwrap().names;
            for (i, sh) in table.iter().enumerate() {
                let name = table.section_name(LE, sh).unwrap();
                let ours = parsed[i];
                assert_eq!(ours, file.section_name(i), "{path}: section {i}");
                match name.strip_prefix(b".zdebug") {
                    // Read as the `.debug` section it holds.
                    Some(rest) if !file.sections[i].data.is_empty() && ours != name => {
                        assert_eq!(ours, [&b".debug"[..], rest].concat(), "{path}: section {i}")
                    }
                    _ => assert_eq!(ours, name, "{path}: section {i}"),
                }
                if sh.sh_type(LE) == elf::SHT_RELA && ours.ends_with(parsed[sh.sh_info(LE) as usize]) {
                    shared += 1;
                }
            }
        }
        assert!(shared > 6, "the relocation sections' names end with their targets' ({shared})");
    }
}
