//! `--gdb-index`: the `.gdb_index` section (version 7, as lld and mold write it), which lets gdb
//! find a compile unit by name or by address without reading all the DWARF at start-up.
//!
//! Everything but the addresses is known before layout, so the section's size is exact from the
//! start: the compile units come from the live `.debug_info` input sections (their offsets in the
//! output `.debug_info` are their sections' offsets plus their own), the names and their kinds from
//! `.debug_gnu_pubnames`/`.debug_gnu_pubtypes` (gcc and clang's `-ggnu-pubnames`; like lld and
//! mold, names are not gathered from the DIEs), and each unit's address ranges from its top DIE
//! (`DW_AT_low_pc`/`high_pc`, or `DW_AT_ranges` into `.debug_ranges` or `.debug_rnglists`, through
//! `.debug_addr` for DWARF 5 and split DWARF skeletons). The inputs' debug sections are not
//! relocated yet, so an address is kept as the relocation that will give it (its target and
//! addend); the writer turns it into the final address once symbol values exist. Ranges of code
//! the link dropped are left out.
use crate::ctx::{Ctx, Target};
use crate::diag::{Context, Result};
use crate::ids::{FileId, SectionRef};
use crate::input::object::{ObjectFile, Rela};
use crate::sections::offsets::InputOffsets;
use crate::{bail, ensure};
use object::LittleEndian as LE;

/// An address in the inputs' DWARF: a number, or what a relocation will make it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Addr {
    Literal(u64),
    Symbol(Target, i64),
}

impl Addr {
    fn add(self, n: u64) -> Addr {
        match self {
            Addr::Literal(v) => Addr::Literal(v.wrapping_add(n)),
            Addr::Symbol(t, a) => Addr::Symbol(t, a.wrapping_add(n as i64)),
        }
    }
}

/// What the index holds, all but final addresses.
#[derive(Default)]
pub struct GdbIndex {
    /// Compile units: (offset in the output .debug_info, length).
    units: Vec<(u64, u64)>,
    /// Address ranges: (start, end, unit index).
    ranges: Vec<(Addr, Addr, u32)>,
    /// The symbol hash table and constant pool, complete.
    table: Vec<u8>,
    constant_pool: Vec<u8>,
}

/// DWARF's two offset sizes.
#[derive(Clone, Copy)]
struct Format {
    offset_size: usize,
    address_size: usize,
    version: u16,
}

/// One input debug section with its relocations, read at offsets that relocations may cover.
struct Section<'a> {
    file: FileId,
    obj: &'a ObjectFile<'a>,
    data: &'a [u8],
    relas: &'a [Rela],
    /// The relocations are sorted by offset (as compilers write them): found by binary search.
    sorted: bool,
}

impl<'a> Section<'a> {
    fn of(obj: &'a ObjectFile<'a>, file: FileId, index: usize) -> Section<'a> {
        let s = &obj.sections[index];
        let sorted = s.relas.is_sorted_by_key(|r| r.r_offset.get(LE));
        Section { file, obj, data: s.data, relas: s.relas, sorted }
    }
    fn named(ctx: &'a Ctx<'a>, file: FileId, name: &[u8]) -> Option<Section<'a>> {
        let obj = &ctx.objects[file];
        (0..obj.sections.len()).position(|i| obj.section_name(i) == name).map(|i| Section::of(obj, file, i))
    }
    fn bytes(&self, at: usize, n: usize) -> Result<&'a [u8]> {
        self.data.get(at..at.checked_add(n).context("offset overflows")?).with_context(|| {
            format!("offset {at:#x} + {n} is past the end of the section ({:#x} bytes)", self.data.len())
        })
    }
    fn literal(&self, at: usize, n: usize) -> Result<u64> {
        let b = self.bytes(at, n)?;
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(b);
        Ok(u64::from_le_bytes(v))
    }
    fn rela_at(&self, at: usize) -> Option<&'a Rela> {
        if !self.sorted {
            return self.relas.iter().find(|r| r.r_offset.get(LE) == at as u64);
        }
        let i = self.relas.partition_point(|r| r.r_offset.get(LE) < at as u64);
        self.relas.get(i).filter(|r| r.r_offset.get(LE) == at as u64)
    }
    /// An `n`-byte address at `at`.
    fn address(&self, ctx: &Ctx, at: usize, n: usize) -> Result<Addr> {
        let literal = self.literal(at, n)?;
        Ok(match self.rela_at(at) {
            Some(r) => {
                let target = ctx.target(self.file, r.r_sym(LE, false));
                Addr::Symbol(target, r.r_addend.get(LE).wrapping_add(literal as i64))
            }
            None => Addr::Literal(literal),
        })
    }
    /// An offset into another debug section of the same object: relocated against that section's
    /// symbol, so the addend (plus the symbol's value) is the offset.
    fn offset(&self, at: usize, n: usize) -> Result<u64> {
        let literal = self.literal(at, n)?;
        Ok(match self.rela_at(at) {
            Some(r) => {
                let sym = &self.obj.syms[r.r_sym(LE, false) as usize];
                (r.r_addend.get(LE) as u64).wrapping_add(sym.st_value.get(LE)).wrapping_add(literal)
            }
            None => literal,
        })
    }
}

fn uleb(data: &[u8], at: &mut usize) -> Result<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *data.get(*at).context("truncated LEB128 number")?;
        *at += 1;
        if shift < 64 {
            v |= u64::from(b & 0x7f) << shift;
        }
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
}

fn sleb(data: &[u8], at: &mut usize) -> Result<i64> {
    let mut v = 0i64;
    let mut shift = 0;
    loop {
        let b = *data.get(*at).context("truncated LEB128 number")?;
        *at += 1;
        if shift < 64 {
            v |= i64::from(b & 0x7f) << shift;
        }
        shift += 7;
        if b & 0x80 == 0 {
            if shift < 64 && b & 0x40 != 0 {
                v |= -1i64 << shift;
            }
            return Ok(v);
        }
    }
}

/// The attributes of a unit's top DIE that its address ranges depend on.
#[derive(Default)]
struct TopDie {
    low_pc: Option<Addr>,
    /// DW_FORM_addrx*: an index into .debug_addr.
    low_pc_index: Option<u64>,
    high_pc: Option<Addr>,
    high_pc_index: Option<u64>,
    /// DW_AT_high_pc as a length from low_pc.
    high_pc_len: Option<u64>,
    ranges: Option<u64>,
    /// DW_FORM_rnglistx: an index into the unit's range list offsets.
    ranges_index: Option<u64>,
    addr_base: Option<u64>,
    rnglists_base: Option<u64>,
    gnu_ranges_base: Option<u64>,
}

const DW_AT_LOW_PC: u64 = 0x11;
const DW_AT_HIGH_PC: u64 = 0x12;
const DW_AT_RANGES: u64 = 0x55;
const DW_AT_ADDR_BASE: u64 = 0x73;
const DW_AT_RNGLISTS_BASE: u64 = 0x74;
const DW_AT_GNU_RANGES_BASE: u64 = 0x2132;
const DW_AT_GNU_ADDR_BASE: u64 = 0x2133;

/// Reads the top DIE at `at` (its abbreviation from `abbrev`), keeping the attributes `TopDie`
/// wants and skipping the others by form.
fn read_top_die(ctx: &Ctx, info: &Section, mut at: usize, abbrev: &[u8], f: Format) -> Result<TopDie> {
    let code = uleb(info.data, &mut at)?;
    if code == 0 {
        return Ok(TopDie::default());
    }
    // Find the abbreviation with this code.
    let mut a = 0usize;
    let specs = loop {
        let c = uleb(abbrev, &mut a)?;
        ensure!(c != 0, "abbreviation {code} is not in .debug_abbrev");
        let _tag = uleb(abbrev, &mut a)?;
        a += 1; // children flag
        let start = a;
        loop {
            let (name, form) = (uleb(abbrev, &mut a)?, uleb(abbrev, &mut a)?);
            if form == 0x21 {
                sleb(abbrev, &mut a)?;
            }
            if name == 0 && form == 0 {
                break;
            }
        }
        if c == code {
            break &abbrev[start..a];
        }
    };
    let mut die = TopDie::default();
    let mut s = 0usize;
    loop {
        let (name, mut form) = (uleb(specs, &mut s)?, uleb(specs, &mut s)?);
        if name == 0 && form == 0 {
            break;
        }
        if form == 0x21 {
            sleb(specs, &mut s)?; // implicit_const: no bytes in the DIE
            continue;
        }
        if form == 0x16 {
            form = uleb(info.data, &mut at)?; // DW_FORM_indirect
        }
        let (os, asz) = (f.offset_size, f.address_size);
        let fixed = |n: usize, at: &mut usize| -> Result<usize> {
            let here = *at;
            *at += n;
            ensure!(*at <= info.data.len(), "attribute at {here:#x} runs past the end of .debug_info");
            Ok(here)
        };
        match form {
            0x01 => {
                let here = fixed(asz, &mut at)?;
                let v = info.address(ctx, here, asz)?;
                match name {
                    DW_AT_LOW_PC => die.low_pc = Some(v),
                    DW_AT_HIGH_PC => die.high_pc = Some(v),
                    _ => {}
                }
            }
            // DWARF 2 and 3 give DW_AT_ranges as data4/data8 (a relocated section offset).
            0x06 | 0x07 if name == DW_AT_RANGES => {
                let n = if form == 0x06 { 4 } else { 8 };
                die.ranges = Some(info.offset(fixed(n, &mut at)?, n)?);
            }
            // Constants: a high_pc length.
            0x05 | 0x06 | 0x07 | 0x0b | 0x0f | 0x0d => {
                let v = match form {
                    0x0b => info.literal(fixed(1, &mut at)?, 1)?,
                    0x05 => info.literal(fixed(2, &mut at)?, 2)?,
                    0x06 => info.literal(fixed(4, &mut at)?, 4)?,
                    0x07 => info.literal(fixed(8, &mut at)?, 8)?,
                    0x0f => uleb(info.data, &mut at)?,
                    _ => sleb(info.data, &mut at)? as u64,
                };
                if name == DW_AT_HIGH_PC {
                    die.high_pc_len = Some(v);
                }
            }
            // Section offsets.
            0x17 => {
                let v = info.offset(fixed(os, &mut at)?, os)?;
                match name {
                    DW_AT_RANGES => die.ranges = Some(v),
                    DW_AT_ADDR_BASE | DW_AT_GNU_ADDR_BASE => die.addr_base = Some(v),
                    DW_AT_RNGLISTS_BASE => die.rnglists_base = Some(v),
                    DW_AT_GNU_RANGES_BASE => die.gnu_ranges_base = Some(v),
                    _ => {}
                }
            }
            // addrx forms: indices into .debug_addr.
            0x1b | 0x1f01 | 0x29 | 0x2a | 0x2b | 0x2c => {
                let v = match form {
                    0x29 => info.literal(fixed(1, &mut at)?, 1)?,
                    0x2a => info.literal(fixed(2, &mut at)?, 2)?,
                    0x2b => info.literal(fixed(3, &mut at)?, 3)?,
                    0x2c => info.literal(fixed(4, &mut at)?, 4)?,
                    _ => uleb(info.data, &mut at)?,
                };
                match name {
                    DW_AT_LOW_PC => die.low_pc_index = Some(v),
                    DW_AT_HIGH_PC => die.high_pc_index = Some(v),
                    _ => {}
                }
            }
            0x23 => {
                let v = uleb(info.data, &mut at)?;
                if name == DW_AT_RANGES {
                    die.ranges_index = Some(v);
                }
            }
            _ => skip_form(info.data, &mut at, form, f)?,
        }
    }
    Ok(die)
}

/// Skips an attribute value of a form `read_top_die` does not keep.
fn skip_form(data: &[u8], at: &mut usize, form: u64, f: Format) -> Result<()> {
    let n = match form {
        0x0c | 0x11 | 0x25 => 1,
        0x12 | 0x26 => 2,
        0x27 => 3,
        0x13 | 0x1c | 0x28 => 4,
        0x14 | 0x20 | 0x24 => 8,
        0x1e => 16,
        0x19 => 0,
        0x0e | 0x1d | 0x1f | 0x1f20 | 0x1f21 => f.offset_size,
        0x10 => {
            if f.version <= 2 {
                f.address_size
            } else {
                f.offset_size
            }
        }
        0x08 => {
            let end = memchr::memchr(0, data.get(*at..).unwrap_or(&[])).context("unterminated string")?;
            end + 1
        }
        0x15 | 0x1a | 0x22 | 0x1f02 => {
            uleb(data, at)?;
            0
        }
        0x03 | 0x04 | 0x09 | 0x0a | 0x18 => {
            let len = match form {
                0x0a => {
                    *at += 1;
                    u64::from(*data.get(*at - 1).context("truncated block")?)
                }
                0x03 => {
                    let v = u16::from_le_bytes(data.get(*at..*at + 2).context("truncated block")?.try_into().unwrap());
                    *at += 2;
                    u64::from(v)
                }
                0x04 => {
                    let v = u32::from_le_bytes(data.get(*at..*at + 4).context("truncated block")?.try_into().unwrap());
                    *at += 4;
                    u64::from(v)
                }
                _ => uleb(data, at)?,
            };
            usize::try_from(len).ok().context("block too large")?
        }
        other => bail!("unknown DWARF form {other:#x}"),
    };
    *at = at.checked_add(n).context("offset overflows")?;
    ensure!(*at <= data.len(), "attribute runs past the end of .debug_info");
    Ok(())
}

/// A compile unit's address ranges, in order.
fn unit_ranges(ctx: &Ctx, file: FileId, die: &TopDie, f: Format) -> Result<Vec<(Addr, Addr)>> {
    let addr_section = Section::named(ctx, file, b".debug_addr");
    let addr = |index: u64| -> Result<Addr> {
        let base = die.addr_base.unwrap_or(if f.version >= 5 { 8 } else { 0 });
        let sec = addr_section.as_ref().context("DW_FORM_addrx without .debug_addr")?;
        let at = usize::try_from(base + index * f.address_size as u64).ok().context("bad .debug_addr index")?;
        sec.address(ctx, at, f.address_size).context(".debug_addr")
    };
    let low = match (die.low_pc, die.low_pc_index) {
        (Some(a), _) => Some(a),
        (None, Some(i)) => Some(addr(i)?),
        _ => None,
    };
    if die.ranges.is_none() && die.ranges_index.is_none() {
        let Some(low) = low else { return Ok(Vec::new()) };
        let high = match (die.high_pc, die.high_pc_index, die.high_pc_len) {
            (Some(h), _, _) => h,
            (None, Some(i), _) => addr(i)?,
            (None, None, Some(len)) => low.add(len),
            _ => return Ok(Vec::new()),
        };
        return Ok(vec![(low, high)]);
    }
    let base = low.unwrap_or(Addr::Literal(0));
    if f.version < 5 {
        let sec = Section::named(ctx, file, b".debug_ranges").context("DW_AT_ranges without .debug_ranges")?;
        let start = die.ranges.unwrap_or(0) + die.gnu_ranges_base.unwrap_or(0);
        return read_ranges(ctx, &sec, start as usize, base, f).context(".debug_ranges");
    }
    let sec = Section::named(ctx, file, b".debug_rnglists").context("DW_AT_ranges without .debug_rnglists")?;
    let start = match (die.ranges, die.ranges_index) {
        (Some(off), _) => off,
        (None, Some(i)) => {
            let list_base = die.rnglists_base.unwrap_or(12);
            let os = f.offset_size as u64;
            list_base + sec.literal((list_base + i * os) as usize, f.offset_size).context(".debug_rnglists")?
        }
        _ => unreachable!(),
    };
    read_rnglist(ctx, &sec, start as usize, base, f, &addr).context(".debug_rnglists")
}

/// DWARF 2-4 range list: address pairs, (0, 0) ends it, (-1, base) changes the base.
fn read_ranges(ctx: &Ctx, sec: &Section, mut at: usize, mut base: Addr, f: Format) -> Result<Vec<(Addr, Addr)>> {
    let n = f.address_size;
    let all_ones = if n == 8 { u64::MAX } else { u32::MAX as u64 };
    let mut out = Vec::new();
    loop {
        let (begin, end) = (sec.address(ctx, at, n)?, sec.address(ctx, at + n, n)?);
        at += 2 * n;
        match (begin, end) {
            (Addr::Literal(0), Addr::Literal(0)) => return Ok(out),
            (Addr::Literal(b), e) if b == all_ones => base = e,
            (Addr::Literal(b), Addr::Literal(e)) => out.push((base.add(b), base.add(e))),
            (b, e) => out.push((b, e)),
        }
    }
}

/// DWARF 5 range list entries (DW_RLE_*).
fn read_rnglist(
    ctx: &Ctx,
    sec: &Section,
    mut at: usize,
    mut base: Addr,
    f: Format,
    addr: &dyn Fn(u64) -> Result<Addr>,
) -> Result<Vec<(Addr, Addr)>> {
    let n = f.address_size;
    let mut out = Vec::new();
    loop {
        let kind = *sec.data.get(at).context("truncated range list")?;
        at += 1;
        match kind {
            0 => return Ok(out),
            1 => base = addr(uleb(sec.data, &mut at)?)?,
            2 => {
                let (b, e) = (uleb(sec.data, &mut at)?, uleb(sec.data, &mut at)?);
                out.push((addr(b)?, addr(e)?));
            }
            3 => {
                let b = addr(uleb(sec.data, &mut at)?)?;
                out.push((b, b.add(uleb(sec.data, &mut at)?)));
            }
            4 => {
                let (b, e) = (uleb(sec.data, &mut at)?, uleb(sec.data, &mut at)?);
                out.push((base.add(b), base.add(e)));
            }
            5 => {
                base = sec.address(ctx, at, n)?;
                at += n;
            }
            6 => {
                out.push((sec.address(ctx, at, n)?, sec.address(ctx, at + n, n)?));
                at += 2 * n;
            }
            7 => {
                let b = sec.address(ctx, at, n)?;
                at += n;
                out.push((b, b.add(uleb(sec.data, &mut at)?)));
            }
            other => bail!("unknown range list entry kind {other}"),
        }
    }
}

/// The units of one input `.debug_info` section: (offset in the section, length with header,
/// ranges).
type Units = Vec<(u64, u64, Vec<(Addr, Addr)>)>;

fn read_units(ctx: &Ctx, file: FileId, index: usize) -> Result<Units> {
    let obj = &ctx.objects[file];
    let info = Section::of(obj, file, index);
    let abbrev_sec = Section::named(ctx, file, b".debug_abbrev").context("no .debug_abbrev")?;
    let mut units = Vec::new();
    let mut at = 0usize;
    while at < info.data.len() {
        let start = at;
        let mut len = info.literal(at, 4)?;
        let mut offset_size = 4;
        at += 4;
        if len == 0xffff_ffff {
            len = info.literal(at, 8)?;
            offset_size = 8;
            at += 8;
        }
        let end = at.checked_add(usize::try_from(len).ok().context("bad unit length")?).context("bad unit length")?;
        ensure!(end <= info.data.len(), "unit at {start:#x} is longer than the section");
        let version = info.literal(at, 2)? as u16;
        at += 2;
        ensure!((2..=5).contains(&version), "unit at {start:#x} has DWARF version {version}");
        let (unit_type, address_size, abbrev_offset);
        if version >= 5 {
            unit_type = info.literal(at, 1)? as u8;
            address_size = info.literal(at + 1, 1)? as usize;
            abbrev_offset = info.offset(at + 2, offset_size)?;
            at += 2 + offset_size;
            // DW_UT_skeleton and DW_UT_split_compile carry a dwo id; type units a signature and offset.
            at += match unit_type {
                0x04 | 0x05 => 8,
                0x02 | 0x06 => 8 + offset_size,
                _ => 0,
            };
        } else {
            unit_type = 0x01;
            abbrev_offset = info.offset(at, offset_size)?;
            address_size = info.literal(at + offset_size, 1)? as usize;
            at += offset_size + 1;
        }
        ensure!(address_size == 8 || address_size == 4, "unit at {start:#x}: address size {address_size}");
        // Type units are not compile units: gdb's index lists only the latter.
        if !matches!(unit_type, 0x02 | 0x06) {
            let f = Format { offset_size, address_size, version };
            let abbrev =
                abbrev_sec.data.get(abbrev_offset as usize..).context("abbreviation offset past .debug_abbrev")?;
            let die = read_top_die(ctx, &info, at, abbrev, f).with_context(|| format!("unit at {start:#x}"))?;
            let ranges = unit_ranges(ctx, file, &die, f).with_context(|| format!("unit at {start:#x}"))?;
            units.push((start as u64, (end - start) as u64, ranges));
        }
        at = end;
    }
    Ok(units)
}

/// Names from one `.debug_gnu_pubnames`/`pubtypes` section: (unit offset in the object's
/// `.debug_info` section, flags byte, name).
fn read_pubnames<'a>(sec: &Section<'a>) -> Result<Vec<(u64, u8, &'a [u8])>> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < sec.data.len() {
        let mut len = sec.literal(at, 4)?;
        let mut os = 4;
        at += 4;
        if len == 0xffff_ffff {
            len = sec.literal(at, 8)?;
            os = 8;
            at += 8;
        }
        let end = at + usize::try_from(len).ok().context("bad set length")?;
        ensure!(end <= sec.data.len(), "name set longer than the section");
        let unit = sec.offset(at + 2, os)?;
        at += 2 + 2 * os;
        while at < end {
            let die = sec.literal(at, os)?;
            at += os;
            if die == 0 {
                break;
            }
            let flags = sec.literal(at, 1)? as u8;
            at += 1;
            let n = memchr::memchr(0, &sec.data[at..end]).context("unterminated name")?;
            out.push((unit, flags, &sec.data[at..at + n]));
            at += n + 1;
        }
        at = end;
    }
    Ok(out)
}

/// gdb's name hash (`mapped_index_string_hash`, version 5 and later: case-folded).
fn hash(name: &[u8]) -> u32 {
    name.iter().fold(0u32, |r, &c| r.wrapping_mul(67).wrapping_add(u32::from(c.to_ascii_lowercase())).wrapping_sub(113))
}

/// Whether the code an address points at is in the output, in a section of its own.
fn live(ctx: &Ctx, a: Addr) -> bool {
    match a {
        Addr::Literal(_) => false,
        Addr::Symbol(Target::Local(f, s), _) => {
            let obj = &ctx.objects[f];
            obj.sym_shndx(s as usize).is_some_and(|sec| kept(&obj.sections[sec as usize]))
        }
        Addr::Symbol(Target::Global(id), _) => match ctx.symbols[id].def {
            crate::resolve::Def::Defined { file, sym } => {
                let obj = &ctx.objects[file];
                obj.sym_shndx(sym as usize).is_some_and(|sec| kept(&obj.sections[sec as usize]))
            }
            _ => false,
        },
    }
}

/// Code of its own in the output: live, and not folded into another copy by ICF (whose unit
/// already covers the address).
fn kept(s: &crate::input::object::ObjSection) -> bool {
    s.live && !s.folded()
}

/// The index `--gdb-index` asks for (None without it, with `-s`/`-S`, or with no debug
/// information: lld and mold write no section then).
pub fn plan_if_asked(ctx: &Ctx, offsets: &InputOffsets, timer: &crate::timing::Timer) -> Result<Option<GdbIndex>> {
    if !ctx.config.gdb_index || ctx.config.strip != crate::args::Strip::None {
        return Ok(None);
    }
    let index = timer.phase("gdb index", || GdbIndex::plan(ctx, offsets))?;
    Ok((!index.is_empty()).then_some(index))
}

impl GdbIndex {
    /// Reads the inputs' DWARF (units in output order) and builds everything but the addresses.
    /// Needs each input section's offset in its output section.
    pub fn plan(ctx: &Ctx, offsets: &InputOffsets) -> Result<GdbIndex> {
        use rayon::prelude::*;
        type PerFile<'a> = Result<Vec<(SectionRef, Units, Vec<(u64, u8, &'a [u8])>)>>;
        let per_file: Vec<PerFile> =
            ctx.file_order
                .par_iter()
                .map(|&f| {
                    let obj = &ctx.objects[f];
                    let mut out = Vec::new();
                    let mut names = Vec::new();
                    for (i, s) in obj.sections.iter().enumerate() {
                        let name = || obj.section_name(i);
                        if s.live && matches!(name(), b".debug_gnu_pubnames" | b".debug_gnu_pubtypes") {
                            let sec = Section::of(obj, f, i);
                            names.extend(read_pubnames(&sec).with_context(|| {
                                format!("{}: section {}", obj.name, String::from_utf8_lossy(name()))
                            })?);
                        }
                    }
                    for (i, s) in obj.sections.iter().enumerate() {
                        if s.live && s.out.is_some() && obj.section_name(i) == b".debug_info" {
                            let units =
                                read_units(ctx, f, i).with_context(|| format!("{}: section .debug_info", obj.name))?;
                            out.push((SectionRef::new(f, i as u32), units, std::mem::take(&mut names)));
                        }
                    }
                    Ok(out)
                })
                .collect();
        let mut index = GdbIndex::default();
        // name → (hash, unit vector); kept in first-seen order for a deterministic table.
        let mut by_name: rustc_hash::FxHashMap<&[u8], usize> = Default::default();
        let mut names: Vec<(&[u8], Vec<u32>)> = Vec::new();
        for file in per_file {
            for (sec_ref, units, pubnames) in file? {
                let base = offsets[sec_ref];
                let first = index.units.len() as u32;
                for (k, (off, len, ranges)) in units.iter().enumerate() {
                    let cu = first + k as u32;
                    index.units.push((base + off, *len));
                    for &(b, e) in ranges {
                        if b != e && live(ctx, b) {
                            index.ranges.push((b, e, cu));
                        }
                    }
                }
                for (unit_off, flags, name) in pubnames {
                    let Some(k) = units.iter().position(|u| u.0 == unit_off) else { continue };
                    let entry = (first + k as u32) | (u32::from(flags) << 24);
                    let slot = *by_name.entry(name).or_insert_with(|| {
                        names.push((name, Vec::new()));
                        names.len() - 1
                    });
                    if !names[slot].1.contains(&entry) {
                        names[slot].1.push(entry);
                    }
                }
            }
        }
        index.build_table(&names);
        Ok(index)
    }

    /// Whether the inputs had any compile unit (no debug information: no section, as lld and mold).
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// The hash table and constant pool (unit vectors, then names).
    fn build_table(&mut self, names: &[(&[u8], Vec<u32>)]) {
        // lld's size: the next power of two above 4/3 of the names, so a free slot always ends a probe.
        let slots = (names.len() * 4 / 3 + 1).next_power_of_two();
        let mask = slots - 1;
        let mut table = vec![(0u32, 0u32); slots];
        let mut pool = Vec::new();
        let mut vec_off = Vec::with_capacity(names.len());
        for (_, v) in names {
            vec_off.push(pool.len() as u32);
            pool.extend_from_slice(&(v.len() as u32).to_le_bytes());
            for e in v {
                pool.extend_from_slice(&e.to_le_bytes());
            }
        }
        for (k, (name, _)) in names.iter().enumerate() {
            let name_off = pool.len() as u32;
            pool.extend_from_slice(name);
            pool.push(0);
            let h = hash(name) as usize;
            let step = ((h.wrapping_mul(17)) & mask) | 1;
            let mut i = h & mask;
            while table[i] != (0, 0) {
                i = (i + step) & mask;
            }
            table[i] = (name_off, vec_off[k]);
        }
        self.table = table.iter().flat_map(|&(n, v)| n.to_le_bytes().into_iter().chain(v.to_le_bytes())).collect();
        self.constant_pool = pool;
    }

    pub fn size(&self) -> u64 {
        (24 + self.units.len() * 16 + self.ranges.len() * 20 + self.table.len() + self.constant_pool.len()) as u64
    }

    /// The section's bytes; `symbol_value` gives a relocation target's final address.
    pub fn write(&self, symbol_value: impl Fn(Target) -> u64, buf: &mut [u8]) {
        let value = |a: Addr| match a {
            Addr::Literal(v) => v,
            Addr::Symbol(t, addend) => symbol_value(t).wrapping_add(addend as u64),
        };
        let cu_list = 24usize;
        let addr_area = cu_list + self.units.len() * 16;
        let symtab = addr_area + self.ranges.len() * 20;
        let pool = symtab + self.table.len();
        for (k, v) in [7u32, cu_list as u32, addr_area as u32, addr_area as u32, symtab as u32, pool as u32]
            .into_iter()
            .enumerate()
        {
            buf[k * 4..k * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        let mut at = cu_list;
        for &(off, len) in &self.units {
            buf[at..at + 8].copy_from_slice(&off.to_le_bytes());
            buf[at + 8..at + 16].copy_from_slice(&len.to_le_bytes());
            at += 16;
        }
        for &(b, e, cu) in &self.ranges {
            buf[at..at + 8].copy_from_slice(&value(b).to_le_bytes());
            buf[at + 8..at + 16].copy_from_slice(&value(e).to_le_bytes());
            buf[at + 16..at + 20].copy_from_slice(&cu.to_le_bytes());
            at += 20;
        }
        buf[symtab..pool].copy_from_slice(&self.table);
        buf[pool..pool + self.constant_pool.len()].copy_from_slice(&self.constant_pool);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gdb_hash_matches_gdbs() {
        // gdb's mapped_index_string_hash (version >= 5) on a few names, computed by hand:
        // r = r * 67 + tolower(c) - 113.
        assert_eq!(hash(b""), 0);
        assert_eq!(hash(b"a"), 97u32.wrapping_sub(113));
        assert_eq!(hash(b"Ab"), hash(b"ab"));
        assert_eq!(hash(b"ab"), (97u32.wrapping_sub(113)).wrapping_mul(67).wrapping_add(98).wrapping_sub(113));
    }

    #[test]
    fn leb128() {
        let mut at = 0;
        assert_eq!(uleb(&[0xe5, 0x8e, 0x26], &mut at).unwrap(), 624485);
        at = 0;
        assert_eq!(sleb(&[0xc0, 0xbb, 0x78], &mut at).unwrap(), -123456);
        at = 0;
        assert!(uleb(&[0x80], &mut at).is_err());
    }
}
