//! `ar` archives: GNU format (`!<arch>\n`) and thin archives (`!<thin>\n`). Takes the archive's
//! bytes, gives its members and its symbol table, zero-copy. Every header and size is checked
//! against the data; a lie is an error naming the byte offset, never a panic or an out-of-bounds read.

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
    pub members: Vec<Member<'a>>,
    /// The symbol table: (symbol name, index into `members`), in the table's order. Empty if the
    /// archive has no symbol table.
    pub symbols: Vec<(&'a [u8], usize)>,
    pub has_symbol_table: bool,
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

fn parse_header(data: &[u8], off: usize) -> Result<RawHeader<'_>, String> {
    let h = data.get(off..off + HEADER_SIZE).ok_or_else(|| format!("truncated member header at offset {off}"))?;
    if &h[58..60] != b"`\n" {
        return Err(format!("bad member header at offset {off} (no end marker)"));
    }
    let size_text = std::str::from_utf8(&h[48..58]).map_err(|_| format!("bad member size at offset {off}"))?.trim_end();
    let size = size_text.parse::<usize>().map_err(|_| format!("bad member size '{size_text}' at offset {off}"))?;
    Ok(RawHeader { name: &h[..16], size })
}

/// Parses an archive. Supports the GNU 32-bit symbol table (`/`) and the 64-bit one (`/SYM64/`)
/// and the long-name table `//`.
pub fn parse(data: &[u8]) -> Result<Archive<'_>, String> {
    if !is_archive(data) {
        return Err("not an archive".into());
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
        let special = h.name.starts_with(b"/ ") || h.name.starts_with(b"// ") || h.name.starts_with(b"/SYM64/");
        // Thin archives store only the symbol and name tables; members live in their own files.
        let stored = if thin && !special { 0 } else { h.size };
        let bytes = data.get(body..body.checked_add(stored).ok_or("member size overflows")?).ok_or_else(|| {
            format!("member at offset {off} claims {} bytes but the archive ends at {}", h.size, data.len())
        })?;
        if h.name.starts_with(b"/ ") {
            symtab = Some((bytes, false));
        } else if h.name.starts_with(b"/SYM64/") {
            symtab = Some((bytes, true));
        } else if h.name.starts_with(b"// ") {
            long_names = bytes;
        } else {
            let name = member_name(h.name, long_names, off)?;
            members.push(Member { name, data: (!thin).then_some(bytes), header_offset: off, size: h.size });
        }
        off = body + stored;
        off += off & 1;
    }
    let symbols = match symtab {
        Some((table, wide)) => read_symbol_table(table, wide, &members)?,
        None => Vec::new(),
    };
    Ok(Archive { thin, members, symbols, has_symbol_table: symtab.is_some() })
}

fn member_name<'a>(raw: &'a [u8], long_names: &'a [u8], off: usize) -> Result<&'a [u8], String> {
    if raw.starts_with(b"#1/") {
        return Err(format!("BSD-style member name at offset {off} is not supported"));
    }
    if raw[0] == b'/' && raw.get(1).is_some_and(|c| c.is_ascii_digit()) {
        let text = std::str::from_utf8(&raw[1..]).unwrap_or("").trim_end();
        let start: usize = text.parse().map_err(|_| format!("bad long-name reference at offset {off}"))?;
        let rest = long_names
            .get(start..)
            .ok_or_else(|| format!("long-name offset {start} at offset {off} is past the name table"))?;
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
fn read_symbol_table<'a>(table: &'a [u8], wide: bool, members: &[Member]) -> Result<Vec<(&'a [u8], usize)>, String> {
    let w = if wide { 8 } else { 4 };
    let read = |pos: usize| -> Result<usize, String> {
        let b = table.get(pos..pos + w).ok_or("symbol table is truncated")?;
        Ok(if wide {
            u64::from_be_bytes(b.try_into().unwrap()) as usize
        } else {
            u32::from_be_bytes(b.try_into().unwrap()) as usize
        })
    };
    let count = read(0)?;
    let names_start = count
        .checked_add(1)
        .and_then(|c| c.checked_mul(w))
        .filter(|&s| s <= table.len())
        .ok_or("symbol table count is larger than the table")?;
    let mut names = &table[names_start..];
    let mut out = Vec::with_capacity(count);
    let mut last: Option<(usize, usize)> = None;
    for i in 0..count {
        let offset = read(w * (i + 1))?;
        let member = match last {
            Some((o, m)) if o == offset => m,
            _ => members
                .binary_search_by_key(&offset, |m| m.header_offset)
                .map_err(|_| format!("symbol table entry {i} points at offset {offset}, where no member starts"))?,
        };
        last = Some((offset, member));
        let end = memchr::memchr(0, names).ok_or("symbol table names are truncated")?;
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
            let names: Vec<&[u8]> = ar.members.iter().map(|m| m.name).collect();
            assert_eq!(names, vec![&b"a.o"[..], b"a_member_with_a_long_name.o"]);
            assert_eq!(ar.members[0].data.is_some(), !thin);
            let find = |s: &[u8]| ar.symbols.iter().find(|(n, _)| *n == s).map(|&(_, m)| m);
            assert_eq!(find(b"alpha"), Some(0));
            assert_eq!(find(b"beta"), Some(1));
            if !thin {
                assert!(ar.members[0].data.unwrap().starts_with(b"\x7fELF"));
            }
        }
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
            assert!(ar.members[m].name.ends_with(b".o"));
        }
    }

    #[test]
    fn corrupt_headers_are_errors() {
        let d = tmp("corrupt");
        let Some(good) = build(&d, false) else { return };
        let mut bad_size = good.clone();
        bad_size[8 + 48..8 + 58].copy_from_slice(b"12x4567890");
        assert!(parse(&bad_size).unwrap_err().contains("bad member size"));
        let mut huge = good.clone();
        huge[8 + 48..8 + 58].copy_from_slice(b"9999999999");
        assert!(parse(&huge).unwrap_err().contains("claims"));
        let mut no_magic = good.clone();
        no_magic[8 + 58] = b'X';
        assert!(parse(&no_magic).unwrap_err().contains("end marker"));
        assert!(parse(&good[..good.len() - 30]).is_err());
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
        }
        std::fs::remove_dir_all(d).unwrap();
    }
}
