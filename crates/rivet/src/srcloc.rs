//! Source locations for error messages, from an object's DWARF, as lld finds them (its
//! `getSrcMsg`): the line table row of a section offset (`undef.cpp:2`), else the declaration of
//! a global variable of that name, else the object's `STT_FILE` name. Read only when an error is
//! reported: a link without errors never parses DWARF.
//!
//! An object's debug sections are relocatable: addresses in `.debug_line` and string offsets in
//! `.debug_info` are relocations with the bytes left zero. They are applied here into a private
//! address space where a code address carries its input section's index (`index << 40 | offset`),
//! so the line rows of every section of an object (`-ffunction-sections`) stay apart.
use crate::ids::{FileId, IdVec};
use crate::input::object::ObjectFile;
use gimli::{AttributeValue, EndianSlice, LittleEndian, SectionId};
use object::elf;
use object::LittleEndian as LE;
use rustc_hash::FxHashMap;
use std::cell::RefCell;

/// A code address's input section sits above this bit in the relocated DWARF.
const SECTION_SHIFT: u32 = 40;

type Reader<'d> = EndianSlice<'d, LittleEndian>;

/// What an object's DWARF says about places and variables.
#[derive(Default)]
pub struct SourceInfo {
    /// Line table sequences, in the order of their units.
    sequences: Vec<Sequence>,
    /// File names as messages show them (an index in the rows).
    paths: Vec<String>,
    /// Global variables by linkage name (else name): (path index, declaration line). The first
    /// unit that declares one wins, as in lld.
    variables: FxHashMap<Vec<u8>, (u32, u64)>,
    /// The object's `STT_FILE` name, the last resort.
    source_file: Option<String>,
}

struct Sequence {
    section: u32,
    start: u64,
    end: u64,
    /// (offset, path index, line), by offset.
    rows: Vec<(u64, u32, u64)>,
}

impl SourceInfo {
    /// Reads `obj`'s line tables and variables; DWARF it cannot read gives no locations (the error
    /// being reported matters more than the debug information that would have decorated it).
    pub fn read(obj: &ObjectFile) -> SourceInfo {
        let mut info = SourceInfo { source_file: stt_file(obj), ..Default::default() };
        let sections = relocated_debug_sections(obj);
        if sections.contains_key(".debug_info") {
            let _ = info.read_dwarf(&sections);
        }
        info
    }

    fn read_dwarf(&mut self, sections: &FxHashMap<&'static str, Vec<u8>>) -> gimli::Result<()> {
        let load = |id: SectionId| -> gimli::Result<Reader> {
            Ok(EndianSlice::new(sections.get(id.name()).map_or(&[][..], |v| v.as_slice()), LittleEndian))
        };
        let dwarf = gimli::Dwarf::load(load)?;
        let mut units = dwarf.units();
        while let Some(header) = units.next()? {
            let unit = dwarf.unit(header)?;
            let Some(program) = unit.line_program.clone() else { continue };
            let files = self.file_paths(&dwarf, &unit, program.header());
            let mut rows = program.rows();
            let mut current: Option<Sequence> = None;
            while let Some((_, row)) = rows.next_row()? {
                let (section, offset) = split(row.address());
                if row.end_sequence() {
                    if let Some(mut seq) = current.take() {
                        seq.end = offset.max(seq.start);
                        self.sequences.push(seq);
                    }
                    continue;
                }
                let seq =
                    current.get_or_insert_with(|| Sequence { section, start: offset, end: offset, rows: Vec::new() });
                let line = row.line().map_or(0, |l| l.get());
                if let Some(&Some(path)) = files.get(&row.file_index()) {
                    seq.rows.push((offset, path, line));
                }
            }
            self.read_variables(&dwarf, &unit, &files)?;
        }
        for seq in &mut self.sequences {
            seq.rows.sort_by_key(|r| r.0);
        }
        Ok(())
    }

    /// Each file index of a line table, as a path: its directory joined to its name, and no
    /// compilation directory added (lld's choice: a DWARF 4 name in the compilation directory
    /// stays relative, a DWARF 5 one has directory 0, the compilation directory, spelled out).
    fn file_paths(
        &mut self,
        dwarf: &gimli::Dwarf<Reader>,
        unit: &gimli::Unit<Reader>,
        header: &gimli::LineProgramHeader<Reader>,
    ) -> FxHashMap<u64, Option<u32>> {
        let text = |v: AttributeValue<Reader>| {
            dwarf.attr_string(unit, v).ok().map(|s| String::from_utf8_lossy(s.slice()).into_owned())
        };
        let v5 = header.version() >= 5;
        let dirs = header.include_directories();
        let first = if v5 { 0 } else { 1 };
        let mut out = FxHashMap::default();
        for (i, file) in header.file_names().iter().enumerate() {
            let index = i as u64 + first;
            let path = text(file.path_name()).map(|name| {
                if name.starts_with('/') {
                    return name;
                }
                let d = file.directory_index();
                let dir = match v5 {
                    true => dirs.get(d as usize),
                    false if d > 0 => dirs.get(d as usize - 1),
                    false => None,
                };
                match dir.cloned().and_then(text).filter(|d| !d.is_empty()) {
                    Some(d) if d.ends_with('/') => format!("{d}{name}"),
                    Some(d) => format!("{d}/{name}"),
                    None => name,
                }
            });
            let id = path.map(|p| {
                self.paths.push(p);
                (self.paths.len() - 1) as u32
            });
            out.insert(index, id);
        }
        out
    }

    /// lld's variable index: `DW_TAG_variable` entries with `DW_AT_external`, by linkage name or
    /// name, with their declaration's file and line.
    fn read_variables(
        &mut self,
        dwarf: &gimli::Dwarf<Reader>,
        unit: &gimli::Unit<Reader>,
        files: &FxHashMap<u64, Option<u32>>,
    ) -> gimli::Result<()> {
        let mut entries = unit.entries();
        while let Some((_, entry)) = entries.next_dfs()? {
            if entry.tag() != gimli::DW_TAG_variable {
                continue;
            }
            if !matches!(entry.attr_value(gimli::DW_AT_external)?, Some(AttributeValue::Flag(true))) {
                continue;
            }
            let number = |v: Option<AttributeValue<Reader>>| match v {
                Some(AttributeValue::FileIndex(n)) | Some(AttributeValue::Udata(n)) => Some(n),
                Some(AttributeValue::Data1(n)) => Some(n as u64),
                Some(AttributeValue::Data2(n)) => Some(n as u64),
                Some(AttributeValue::Data4(n)) => Some(n as u64),
                Some(AttributeValue::Data8(n)) => Some(n),
                Some(AttributeValue::Sdata(n)) => u64::try_from(n).ok(),
                _ => None,
            };
            let file = number(entry.attr_value(gimli::DW_AT_decl_file)?).unwrap_or(0);
            let Some(&Some(path)) = files.get(&file) else { continue };
            let line = number(entry.attr_value(gimli::DW_AT_decl_line)?).unwrap_or(0);
            let name = match entry.attr_value(gimli::DW_AT_linkage_name)? {
                Some(v) => dwarf.attr_string(unit, v).ok(),
                None => match entry.attr_value(gimli::DW_AT_name)? {
                    Some(v) => dwarf.attr_string(unit, v).ok(),
                    None => None,
                },
            };
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                self.variables.entry(name.slice().to_vec()).or_insert((path, line));
            }
        }
        Ok(())
    }

    /// The file and line of offset `offset` in input section `section`.
    pub fn line(&self, section: u32, offset: u64) -> Option<(&str, u64)> {
        let seq = self.sequences.iter().find(|s| s.section == section && s.start <= offset && offset < s.end)?;
        let i = seq.rows.partition_point(|r| r.0 <= offset).checked_sub(1)?;
        let (_, path, line) = seq.rows[i];
        Some((&self.paths[path as usize], line))
    }

    /// Where a global variable is declared.
    pub fn variable(&self, name: &[u8]) -> Option<(&str, u64)> {
        self.variables.get(name).map(|&(path, line)| (self.paths[path as usize].as_str(), line))
    }

    /// lld's source part of a place: `file.c:3 (/dir/file.c:3)` from the line table, else from
    /// the declaration of a variable called `symbol`, else the `STT_FILE` name; None when the
    /// object has none of them.
    pub fn describe(&self, section: u32, offset: u64, symbol: &[u8]) -> Option<String> {
        if let Some((path, line)) = self.line(section, offset).or_else(|| self.variable(symbol)) {
            return Some(file_line(path, line));
        }
        self.source_file.clone().filter(|s| !s.is_empty())
    }
}

/// Places in input sections as lld's messages name them: the object part (`a.o:(main)`,
/// `m.o:(.text+0x10) in archive lib.a`) and the source part (`a.c:3`), each object's DWARF read
/// the first time one of its places is asked for.
pub struct Places<'x, 'a> {
    objects: &'x IdVec<FileId, ObjectFile<'a>>,
    /// Whether global symbol `index` of a file is defined by that file (resolution chose it).
    owns: &'x dyn Fn(FileId, usize) -> bool,
    sources: RefCell<FxHashMap<FileId, std::rc::Rc<SourceInfo>>>,
}

impl<'x, 'a> Places<'x, 'a> {
    pub fn new(objects: &'x IdVec<FileId, ObjectFile<'a>>, owns: &'x dyn Fn(FileId, usize) -> bool) -> Self {
        Places { objects, owns, sources: RefCell::default() }
    }

    /// The first symbol of the file's table (its own definitions only) whose extent holds the
    /// offset (lld's `getEnclosingSymbol`).
    pub fn enclosing(&self, file: FileId, section: u32, offset: u64) -> Option<usize> {
        let obj = &self.objects[file];
        (1..obj.syms.len()).find(|&i| {
            let s = &obj.syms[i];
            let (value, size) = (s.st_value.get(LE), s.st_size.get(LE));
            s.st_info & 0xf != elf::STT_SECTION
                && obj.sym_shndx(i) == Some(section)
                && value <= offset
                && offset < value.saturating_add(size)
                && (i < obj.first_global || (self.owns)(file, i))
        })
    }

    /// `file:(symbol)` for the symbol that encloses the offset, else `file:(section+0xOFF)`; an
    /// archive member's says ` in archive lib.a` after it (lld's `getObjMsg`).
    pub fn object_part(&self, file: FileId, section: u32, offset: u64) -> String {
        let obj = &self.objects[file];
        let (member, archive) = match obj.archive_len {
            Some(n) if obj.name.len() > n + 1 => (&obj.name[n + 1..obj.name.len() - 1], Some(&obj.name[..n])),
            _ => (obj.name.as_str(), None),
        };
        let what = match self.enclosing(file, section, offset) {
            Some(i) => crate::diag::symbol_name(obj.sym_name(&obj.syms[i]).unwrap_or_default()),
            // lld writes the offset in upper-case hexadecimal here.
            None => format!("{}+0x{offset:X}", String::from_utf8_lossy(obj.section_name(section as usize))),
        };
        match archive {
            Some(a) => format!("{member}:({what}) in archive {a}"),
            None => format!("{member}:({what})"),
        }
    }

    /// A reference's place: as `describe`, the variable looked up being the symbol that encloses
    /// the reference (`p` in `int *p = &undefined;`), else the symbol referred to.
    pub fn describe_reference(&self, file: FileId, section: u32, offset: u64, symbol: &[u8], indent: usize) -> String {
        let obj = &self.objects[file];
        let enclosing = self.enclosing(file, section, offset).and_then(|i| obj.sym_name(&obj.syms[i]).ok());
        self.describe(file, section, offset, enclosing.unwrap_or(symbol), indent)
    }

    /// The source part of a place (`SourceInfo::describe`), for a message about `symbol`.
    pub fn source_part(&self, file: FileId, section: u32, offset: u64, symbol: &[u8]) -> Option<String> {
        let info = self
            .sources
            .borrow_mut()
            .entry(file)
            .or_insert_with(|| SourceInfo::read(&self.objects[file]).into())
            .clone();
        info.describe(section, offset, symbol)
    }

    /// A place as lld's two-line form: the source part, then the object part under it indented by
    /// `indent` (the width of the words before the place), or the object part alone.
    pub fn describe(&self, file: FileId, section: u32, offset: u64, symbol: &[u8], indent: usize) -> String {
        let object = self.object_part(file, section, offset);
        match self.source_part(file, section, offset, symbol) {
            Some(src) => format!("{src}\n>>> {:indent$}{object}", ""),
            None => object,
        }
    }
}

/// `name:line`, followed by the full path in parentheses when it is more than the name.
fn file_line(path: &str, line: u64) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name == path {
        true => format!("{name}:{line}"),
        false => format!("{name}:{line} ({path}:{line})"),
    }
}

/// A relocated code address as (input section index, offset in it).
fn split(address: u64) -> (u32, u64) {
    ((address >> SECTION_SHIFT) as u32, address & ((1 << SECTION_SHIFT) - 1))
}

/// The name of the object's last `STT_FILE` symbol (lld keeps the last one it reads).
fn stt_file(obj: &ObjectFile) -> Option<String> {
    let file =
        obj.syms[..obj.first_global.min(obj.syms.len())].iter().rev().find(|s| s.st_info & 0xf == elf::STT_FILE)?;
    obj.sym_name(file).ok().map(|n| String::from_utf8_lossy(n).into_owned())
}

/// The debug sections gimli reads, with their relocations applied: an absolute relocation against
/// a symbol in a loaded (SHF_ALLOC) section gives `index << 40 | offset`, against a debug section
/// its offset there.
fn relocated_debug_sections(obj: &ObjectFile) -> FxHashMap<&'static str, Vec<u8>> {
    const NAMES: [&str; 9] = [
        ".debug_abbrev",
        ".debug_info",
        ".debug_line",
        ".debug_str",
        ".debug_line_str",
        ".debug_str_offsets",
        ".debug_addr",
        ".debug_rnglists",
        ".debug_ranges",
    ];
    let mut out = FxHashMap::default();
    for (i, sec) in obj.sections.iter().enumerate() {
        let sec_name = obj.section_name(i);
        let Some(&name) = NAMES.iter().find(|n| n.as_bytes() == sec_name) else { continue };
        if out.contains_key(name) {
            continue; // a second .debug_info is a group's (-fdebug-types-section); lld reads one too
        }
        let mut bytes = sec.data.to_vec();
        for rel in sec.relas {
            let sym = rel.r_sym(LE, false) as usize;
            let Some(s) = obj.syms.get(sym) else { continue };
            let target = obj.sym_shndx(sym).and_then(|i| Some((i, obj.sections.get(i as usize)?)));
            let base = match target {
                Some((i, t)) if t.flags & elf::SHF_ALLOC as u64 != 0 => (i as u64) << SECTION_SHIFT,
                _ => 0,
            };
            let value = base.wrapping_add(s.st_value.get(LE)).wrapping_add(rel.r_addend.get(LE) as u64);
            let at = rel.r_offset.get(LE) as usize;
            // The absolute types of every machine rivet links: their numbers do not overlap
            // (x86-64's are below 64, AArch64's from 257 on), so the object's machine need not
            // be known here.
            let (width, bytes_of) = match rel.r_type(LE, false) {
                elf::R_X86_64_64 | elf::R_AARCH64_ABS64 => (8, value.to_le_bytes()),
                elf::R_X86_64_32 | elf::R_X86_64_32S | elf::R_AARCH64_ABS32 => (4, value.to_le_bytes()),
                _ => continue,
            };
            // A relocation past the section (or at an offset near 2^64) changes nothing here; the
            // input checks report it where it matters.
            if let Some(dst) = at.checked_add(width).and_then(|end| bytes.get_mut(at..end)) {
                dst.copy_from_slice(&bytes_of[..width]);
            }
        }
        out.insert(name, bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_line_shows_the_full_path_only_when_it_is_more_than_the_name() {
        assert_eq!(file_line("a.c", 3), "a.c:3");
        assert_eq!(file_line("/src/a.c", 3), "a.c:3 (/src/a.c:3)");
        assert_eq!(file_line("sub/a.c", 12), "a.c:12 (sub/a.c:12)");
        assert_eq!(split((7 << SECTION_SHIFT) | 0x40), (7, 0x40));
    }
}
