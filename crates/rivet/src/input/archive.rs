//! `ar` archives: GNU format (`!<arch>\n`) and thin archives (`!<thin>\n`). Takes the archive's
//! bytes, gives its members and its symbol table, zero-copy. Every header and size is checked
//! against the data; a lie is an error naming the byte offset, never a panic or an out-of-bounds read.
//! Errors do not name the archive: the caller gives them that context.
use crate::diag::{Context, Result};
use crate::{bail, ensure, fatal};

#[derive(Clone, Debug)]
pub struct Member<'a> {
    /// The member's name (long names resolved through the `//` table; trailing `/` removed).
    /// For a thin archive this is the path of the member relative to the archive's directory.
    pub name: &'a [u8],
    /// The member's bytes; None for members of a thin archive (they live in their own files).
    pub data: Option<&'a [u8]>,
    /// Offset of the member's header within the archive (what the symbol table refers to).
    pub header_offset: usize,
    /// The member's size as its header says.
    pub size: usize,
}

#[derive(Clone, Debug)]
pub struct Archive<'a> {
    pub thin: bool,
    /// Members in order (the symbol table `/`, `/SYM64/` and the long-name table `//` excluded).
    members: Members<'a>,
    /// The symbol table: (symbol name, member index), in the table's order. Empty if the archive
    /// has no symbol table.
    pub symbols: Vec<(&'a [u8], usize)>,
    pub has_symbol_table: bool,
}

#[derive(Clone, Debug)]
enum Members<'a> {
    /// Every member, its header read (`parse`).
    Read(Vec<Member<'a>>),
    /// The members the symbol table names, by header offset, in file order; a header is read when
    /// its member is asked for (`parse_lazily`).
    Lazy { data: &'a [u8], long_names: &'a [u8], offsets: Vec<usize> },
}

impl<'a> Archive<'a> {
    pub fn member_count(&self) -> usize {
        match &self.members {
            Members::Read(m) => m.len(),
            Members::Lazy { offsets, .. } => offsets.len(),
        }
    }

    /// Member `i` (< `member_count()`); for a lazily parsed archive, an error if its header or
    /// size is bad.
    pub fn member(&self, i: usize) -> Result<Member<'a>> {
        match &self.members {
            Members::Read(m) => Ok(m[i].clone()),
            &Members::Lazy { data, long_names, ref offsets } => {
                let off = offsets[i];
                let h = parse_header(data, off)?;
                ensure!(special(h.name).is_none(), "the symbol table points at offset {off}, which is not a member");
                let bytes = member_bytes(data, off, h.size)?;
                let name = member_name(h.name, long_names, off)?;
                Ok(Member { name, data: Some(bytes), header_offset: off, size: h.size })
            }
        }
    }
}

/// Whether the ELF object `data` defines the global `name` other than as a common symbol (what
/// makes GNU ld fetch an archive member for a symbol that is common so far). Not an ELF object
/// (a bitcode member, say), or one that does not read: false; a fetched member is checked in full.
pub fn defines_outside_common(data: &[u8], name: &[u8]) -> bool {
    use object::elf::{FileHeader64, SHN_COMMON, SHN_UNDEF, STB_LOCAL};
    use object::read::elf::{FileHeader as _, Sym as _};
    use object::LittleEndian as LE;
    let Ok(header) = FileHeader64::<LE>::parse(data) else { return false };
    let Ok(sections) = header.sections(LE, data) else { return false };
    let Ok(symtab) = sections.symbols(LE, data, object::elf::SHT_SYMTAB) else { return false };
    symtab.symbols().iter().any(|sym| {
        let shndx = sym.st_shndx(LE);
        sym.st_bind() != STB_LOCAL
            && shndx != SHN_UNDEF
            && shndx != SHN_COMMON
            && sym.name(LE, symtab.strings()).is_ok_and(|n| n == name)
    })
}

/// An object between `--start-lib` and `--end-lib` seen as an archive of one member, itself:
/// `symbols` are the names it defines, and a reference to one of them loads it.
pub fn single_member<'a>(name: &'a [u8], data: &'a [u8], symbols: Vec<&'a [u8]>) -> Archive<'a> {
    let member = Member { name, data: Some(data), header_offset: 0, size: data.len() };
    Archive {
        thin: false,
        members: Members::Read(vec![member]),
        symbols: symbols.into_iter().map(|s| (s, 0)).collect(),
        has_symbol_table: true,
    }
}

const HEADER_SIZE: usize = 60;

/// True when `data` starts with an archive magic.
pub fn is_archive(data: &[u8]) -> bool {
    data.starts_with(b"!<arch>\n") || data.starts_with(b"!<thin>\n")
}

struct RawHeader<'a> {
    name: &'a [u8],
    size: usize,
}

fn parse_header(data: &[u8], off: usize) -> Result<RawHeader<'_>> {
    let h = data.get(off..off + HEADER_SIZE).ok_or_else(|| fatal!("truncated member header at offset {off}"))?;
    ensure!(&h[58..60] == b"`\n", "bad member header at offset {off} (no end marker)");
    let size_text = std::str::from_utf8(&h[48..58]).map_err(|_| fatal!("bad member size at offset {off}"))?.trim_end();
    let size = size_text.parse::<usize>().map_err(|_| fatal!("bad member size '{size_text}' at offset {off}"))?;
    Ok(RawHeader { name: &h[..16], size })
}

/// The members that are not object files: the symbol table (`/`, or `/SYM64/` with 64-bit
/// offsets) and the long-name table (`//`).
#[derive(Clone, Copy)]
enum Special {
    SymbolTable { wide: bool },
    LongNames,
}

/// Which special member a header's name field names, if any.
fn special(name: &[u8]) -> Option<Special> {
    if name.starts_with(b"/ ") {
        Some(Special::SymbolTable { wide: false })
    } else if name.starts_with(b"/SYM64/") {
        Some(Special::SymbolTable { wide: true })
    } else if name.starts_with(b"// ") {
        Some(Special::LongNames)
    } else {
        None
    }
}

/// The `size` bytes after the header at `off`.
fn member_bytes(data: &[u8], off: usize, size: usize) -> Result<&[u8]> {
    let body = off + HEADER_SIZE;
    data.get(body..body.checked_add(size).context("member size overflows")?)
        .ok_or_else(|| fatal!("member at offset {off} claims {size} bytes but the archive ends at {}", data.len()))
}

/// Parses the symbol table and the long-name table of a regular archive, and no member header:
/// those are read when a member is fetched, as lld does. Walking every header first touched
/// every page of the file that holds one, on one thread per archive, before anything else could
/// start. Only the members the symbol table names can be fetched, so they are all it lists. A thin
/// archive, or one without a symbol table, is parsed whole (`parse`).
pub fn parse_lazily(data: &[u8]) -> Result<Archive<'_>> {
    if !data.starts_with(b"!<arch>\n") {
        return parse(data);
    }
    let mut off = 8;
    let mut symtab: Option<(&[u8], bool)> = None;
    let mut long_names: &[u8] = &[];
    // The special members come first.
    while off < data.len() && !(data.len() - off == 1 && data[off] == b'\n') {
        let h = parse_header(data, off)?;
        let bytes = member_bytes(data, off, h.size)?;
        match special(h.name) {
            Some(Special::SymbolTable { wide }) => symtab = Some((bytes, wide)),
            Some(Special::LongNames) => long_names = bytes,
            None => break,
        }
        off += HEADER_SIZE + h.size;
        off += off & 1;
    }
    let Some((table, wide)) = symtab else { return parse(data) };
    let mut offsets = symbol_table_offsets(table, wide, data.len())?;
    offsets.sort_unstable();
    offsets.dedup();
    let symbols = read_symbol_table(table, wide, |o| offsets.binary_search(&o).ok())?;
    Ok(Archive { thin: false, members: Members::Lazy { data, long_names, offsets }, symbols, has_symbol_table: true })
}

/// Parses an archive. Supports the GNU 32-bit symbol table (`/`) and the 64-bit one (`/SYM64/`)
/// and the long-name table `//`.
pub fn parse(data: &[u8]) -> Result<Archive<'_>> {
    if !is_archive(data) {
        bail!("not an archive");
    }
    let thin = data.starts_with(b"!<thin>\n");
    let mut off = 8;
    let mut members = Vec::new();
    let mut symtab: Option<(&[u8], bool)> = None;
    let mut long_names: &[u8] = &[];
    while off < data.len() {
        if data.len() - off == 1 && data[off] == b'\n' {
            break; // final padding byte
        }
        let h = parse_header(data, off)?;
        let body = off + HEADER_SIZE;
        let kind = special(h.name);
        // Thin archives store only the symbol and name tables; members live in their own files.
        let stored = if thin && kind.is_none() { 0 } else { h.size };
        let bytes = data.get(body..body.checked_add(stored).context("member size overflows")?).ok_or_else(|| {
            fatal!("member at offset {off} claims {} bytes but the archive ends at {}", h.size, data.len())
        })?;
        match kind {
            Some(Special::SymbolTable { wide }) => symtab = Some((bytes, wide)),
            Some(Special::LongNames) => long_names = bytes,
            None => {
                let name = member_name(h.name, long_names, off)?;
                members.push(Member { name, data: (!thin).then_some(bytes), header_offset: off, size: h.size });
            }
        }
        off = body + stored;
        off += off & 1;
    }
    let symbols = match symtab {
        Some((table, wide)) => {
            read_symbol_table(table, wide, |o| members.binary_search_by_key(&o, |m| m.header_offset).ok())?
        }
        None => Vec::new(),
    };
    Ok(Archive { thin, members: Members::Read(members), symbols, has_symbol_table: symtab.is_some() })
}

fn member_name<'a>(raw: &'a [u8], long_names: &'a [u8], off: usize) -> Result<&'a [u8]> {
    if raw.starts_with(b"#1/") {
        bail!("BSD-style member name at offset {off} is not supported");
    }
    if raw[0] == b'/' && raw.get(1).is_some_and(|c| c.is_ascii_digit()) {
        // `/OFFSET` padded with spaces; what follows the first space is not part of the name, as
        // GNU ar's readers and lld's take it (GNU ar writes `/89            /` in some thin
        // archives, the kernel's among them).
        let digits = raw[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if !matches!(raw.get(1 + digits), None | Some(b' ')) {
            bail!("bad long-name reference at offset {off}");
        }
        let text = std::str::from_utf8(&raw[1..1 + digits]).unwrap_or("");
        let start: usize = text.parse().map_err(|_| fatal!("bad long-name reference at offset {off}"))?;
        let rest = long_names
            .get(start..)
            .ok_or_else(|| fatal!("long-name offset {start} at offset {off} is past the name table"))?;
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        let name = &rest[..end];
        return Ok(name.strip_suffix(b"/").unwrap_or(name));
    }
    let end = raw
        .iter()
        .position(|&c| c == b'/')
        .unwrap_or_else(|| raw.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1));
    Ok(&raw[..end])
}

/// The symbol table: a big-endian count, that many member-header offsets, then NUL-terminated names.
/// Gives the count and a reader of the i-th offset, once the count is checked against the size.
fn symbol_table_header(table: &[u8], wide: bool) -> Result<(usize, impl Fn(usize) -> usize + '_)> {
    let w = if wide { 8 } else { 4 };
    let read = move |pos: usize| -> usize {
        let b = &table[pos..pos + w];
        if wide {
            u64::from_be_bytes(b.try_into().unwrap()) as usize
        } else {
            u32::from_be_bytes(b.try_into().unwrap()) as usize
        }
    };
    ensure!(table.len() >= w, "symbol table is truncated");
    let count = read(0);
    count
        .checked_add(1)
        .and_then(|c| c.checked_mul(w))
        .filter(|&s| s <= table.len())
        .context("symbol table count is larger than the table")?;
    Ok((count, move |i: usize| read(w * (i + 1))))
}

/// The member-header offsets the symbol table lists, in its order; each must leave room for a
/// member header inside the archive (`len` bytes).
fn symbol_table_offsets(table: &[u8], wide: bool, len: usize) -> Result<Vec<usize>> {
    let (count, offset) = symbol_table_header(table, wide)?;
    let offsets: Vec<usize> = (0..count).map(offset).collect();
    if let Some((i, o)) = offsets.iter().enumerate().find(|&(_, &o)| o.saturating_add(HEADER_SIZE) > len) {
        bail!("symbol table entry {i} points at offset {o}, past the end of the archive ({len} bytes)");
    }
    Ok(offsets)
}

/// The symbol table's (name, member index) pairs; `member_at` gives the index of the member whose
/// header is at an offset (None: no member starts there).
fn read_symbol_table(
    table: &[u8],
    wide: bool,
    member_at: impl Fn(usize) -> Option<usize>,
) -> Result<Vec<(&[u8], usize)>> {
    let (count, offset_of) = symbol_table_header(table, wide)?;
    let w = if wide { 8 } else { 4 };
    let mut names = &table[(count + 1) * w..];
    let mut out = Vec::with_capacity(count);
    let mut last: Option<(usize, usize)> = None;
    for i in 0..count {
        let offset = offset_of(i);
        let member = match last {
            Some((o, m)) if o == offset => m,
            _ => member_at(offset)
                .ok_or_else(|| fatal!("symbol table entry {i} points at offset {offset}, where no member starts"))?,
        };
        last = Some((offset, member));
        let end = memchr::memchr(0, names).context("symbol table names are truncated")?;
        out.push((&names[..end], member));
        names = &names[end + 1..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn tool(name: &str) -> bool {
        Command::new(name).arg("--version").output().is_ok()
    }

    fn build(dir: &std::path::Path, thin: bool) -> Option<Vec<u8>> {
        if !tool("cc") || !tool("ar") {
            eprintln!("skipped: cc or ar missing");
            return None;
        }
        std::fs::write(dir.join("a.c"), "int alpha(void){return 1;}\nint shared_name;\n").unwrap();
        std::fs::write(dir.join("a_member_with_a_long_name.c"), "int beta(void){return 2;}\n").unwrap();
        for f in ["a.c", "a_member_with_a_long_name.c"] {
            assert!(Command::new("cc").args(["-c", f]).current_dir(dir).status().unwrap().success());
        }
        let flags = if thin { "rcsT" } else { "rcs" };
        let out = if thin { "libt.a" } else { "libx.a" };
        assert!(Command::new("ar")
            .args([flags, out, "a.o", "a_member_with_a_long_name.o"])
            .current_dir(dir)
            .status()
            .unwrap()
            .success());
        Some(std::fs::read(dir.join(out)).unwrap())
    }

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("rivet-ar-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn reads_regular_and_thin_archives() {
        let d = tmp("build");
        for thin in [false, true] {
            let Some(bytes) = build(&d, thin) else { return };
            let ar = parse(&bytes).unwrap();
            assert_eq!(ar.thin, thin);
            let names: Vec<&[u8]> = (0..ar.member_count()).map(|i| ar.member(i).unwrap().name).collect();
            assert_eq!(names, vec![&b"a.o"[..], b"a_member_with_a_long_name.o"]);
            assert_eq!(ar.member(0).unwrap().data.is_some(), !thin);
            let find = |s: &[u8]| ar.symbols.iter().find(|(n, _)| *n == s).map(|&(_, m)| m);
            assert_eq!(find(b"alpha"), Some(0));
            assert_eq!(find(b"beta"), Some(1));
            if !thin {
                assert!(ar.member(0).unwrap().data.unwrap().starts_with(b"\x7fELF"));
            }
        }
        std::fs::remove_dir_all(d).unwrap();
    }

    /// A long-name reference with something after its padding (`/NN            /`) names the same
    /// member; one with something glued to its digits is still an error.
    #[test]
    fn long_name_reference_with_trailing_text() {
        let d = tmp("longname");
        let Some(good) = build(&d, true) else { return };
        let ar = parse(&good).unwrap();
        let at = ar.member(1).unwrap().header_offset;
        assert_eq!(good[at], b'/', "the second member has a long name");
        let digits = good[at + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let mut slashed = good.clone();
        slashed[at + 15] = b'/';
        assert!(digits < 14);
        let ar = parse(&slashed).unwrap();
        assert_eq!(ar.member(1).unwrap().name, b"a_member_with_a_long_name.o");
        let mut glued = good.clone();
        glued[at + 1 + digits] = b'x';
        assert!(parse(&glued).unwrap_err().to_string().contains("bad long-name reference"));
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn reads_libc() {
        let Ok(bytes) = std::fs::read("/usr/lib/x86_64-linux-gnu/libc.a") else {
            eprintln!("skipped: no libc.a");
            return;
        };
        let ar = parse(&bytes).unwrap();
        for sym in [&b"printf"[..], b"malloc"] {
            let &(_, m) = ar.symbols.iter().find(|(n, _)| *n == sym).unwrap();
            assert!(ar.member(m).unwrap().name.ends_with(b".o"));
        }
        // Parsed lazily, every symbol names the member the whole parse gives it.
        let lazy = parse_lazily(&bytes).unwrap();
        assert_eq!(lazy.symbols.len(), ar.symbols.len());
        assert!(lazy.member_count() <= ar.member_count());
        for (&(name, m), &(lazy_name, lm)) in ar.symbols.iter().zip(&lazy.symbols) {
            let (a, b) = (ar.member(m).unwrap(), lazy.member(lm).unwrap());
            assert_eq!((name, a.name, a.header_offset, a.data), (lazy_name, b.name, b.header_offset, b.data));
        }
    }

    #[test]
    fn corrupt_headers_are_errors() {
        let d = tmp("corrupt");
        let Some(good) = build(&d, false) else { return };
        let mut bad_size = good.clone();
        bad_size[8 + 48..8 + 58].copy_from_slice(b"12x4567890");
        assert!(parse(&bad_size).unwrap_err().to_string().contains("bad member size"));
        let mut huge = good.clone();
        huge[8 + 48..8 + 58].copy_from_slice(b"9999999999");
        assert!(parse(&huge).unwrap_err().to_string().contains("claims"));
        let mut no_magic = good.clone();
        no_magic[8 + 58] = b'X';
        assert!(parse(&no_magic).unwrap_err().to_string().contains("end marker"));
        assert!(parse(&good[..good.len() - 30]).is_err());
        // Parsed lazily, a bad member header is an error when the member is read.
        let lazy = parse_lazily(&good).unwrap();
        let second = lazy.member(1).unwrap().header_offset;
        let mut bad = good.clone();
        bad[second + 58] = b'X';
        let lazy = parse_lazily(&bad).unwrap();
        assert!(lazy.member(0).is_ok());
        assert!(lazy.member(1).unwrap_err().to_string().contains("end marker"));
        let mut huge = good.clone();
        huge[second + 48..second + 58].copy_from_slice(b"9999999999");
        assert!(parse_lazily(&huge).unwrap().member(1).unwrap_err().to_string().contains("claims"));
        std::fs::remove_dir_all(d).unwrap();
    }

    /// Truncations and bit flips of a real archive must give Ok or Err, never a panic.
    #[test]
    fn never_panics_on_mutations() {
        let d = tmp("fuzz");
        let Some(good) = build(&d, false) else { return };
        let mut seed = 0x2545f4914f6cdd1du64;
        for i in 0..3000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut m = good.clone();
            if i % 3 == 0 {
                m.truncate((seed as usize) % good.len());
            } else {
                let pos = (seed as usize) % m.len();
                m[pos] ^= 1 << ((seed >> 60) as u8 % 8);
            }
            let _ = parse(&m);
            if let Ok(a) = parse_lazily(&m) {
                for i in 0..a.member_count() {
                    let _ = a.member(i);
                }
            }
        }
        std::fs::remove_dir_all(d).unwrap();
    }
}
