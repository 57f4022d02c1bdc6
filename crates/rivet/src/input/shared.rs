//! Shared libraries (ET_DYN inputs). Takes a `.so`'s bytes and gives what linking against it needs:
//! its DT_SONAME and DT_NEEDED, its dynamic symbols with their versions, and the names it leaves
//! undefined (an executable exports its own definitions of those, so the library binds to them at
//! run time).
use crate::bail;
use crate::diag::{Context, Result};
use object::elf;
use object::read::elf::{Dyn as _, FileHeader, SectionHeader as _, Sym as _};
use object::LittleEndian as LE;

type Header = elf::FileHeader64<LE>;

#[derive(Clone, Debug)]
pub struct DynSym<'a> {
    pub name: &'a [u8],
    /// The version name (`GLIBC_2.2.5`), None for unversioned symbols.
    pub version: Option<&'a [u8]>,
    /// A non-default version (`foo@V`, not `foo@@V`): only a reference naming that version binds.
    pub hidden: bool,
    pub value: u64,
    pub size: u64,
    pub sym_type: u8,
    pub weak: bool,
    /// It lies in memory the library never writes after relocation (a PT_LOAD without PF_W, or
    /// PT_GNU_RELRO): a copy of it belongs in the executable's RELRO, not in writable `.bss`.
    pub read_only: bool,
    /// STV_PROTECTED: the library binds its own references to it, so it cannot be copied.
    pub protected: bool,
    /// Its `st_other` above the visibility: processor-specific flags (AArch64's
    /// STO_AARCH64_VARIANT_PCS).
    pub other_flags: u8,
    /// The alignment of the section it is in (0: unknown, a special section index): with its
    /// address's, the most a copy of it needs.
    pub section_align: u64,
}

pub struct SharedFile<'a> {
    /// The path or name as given, for messages.
    pub name: String,
    /// What DT_NEEDED records: DT_SONAME, or the file name when there is none.
    pub needed_name: String,
    /// Defined dynamic symbols.
    pub defined: Vec<DynSym<'a>>,
    /// Names the library refers to but does not define, each with whether the reference is weak.
    pub undefined: Vec<(&'a [u8], bool)>,
    /// Its DT_NEEDED entries: the libraries it depends on.
    pub needed: Vec<&'a [u8]>,
    /// Its DT_AUDIT value (audit libraries joined with ':'), which GNU ld adds to the DT_DEPAUDIT
    /// of an output linked against it.
    pub audit: Option<&'a [u8]>,
}

/// Parses a shared library; `name` names it in messages (and in its errors), `base_name` is what
/// DT_NEEDED records when it has no DT_SONAME.
pub fn parse<'a>(data: &'a [u8], name: String, base_name: &str) -> Result<SharedFile<'a>> {
    match read(data, base_name) {
        Ok(file) => Ok(SharedFile { name, ..file }),
        Err(e) => Err(e.context(name)),
    }
}

/// How many dynamic symbols a shared library has, read from its section headers alone (0 if they
/// cannot be read: `parse` reports that): resolution sizes its name table with it.
pub fn dynamic_symbol_count(data: &[u8]) -> usize {
    let Ok(header) = Header::parse(data) else { return 0 };
    let Ok(sections) = header.sections(LE, data) else { return 0 };
    sections
        .iter()
        .find(|s| s.sh_type(LE) == elf::SHT_DYNSYM)
        .map_or(0, |s| (s.sh_size(LE) / size_of::<elf::Sym64<LE>>() as u64) as usize)
}

/// `parse`, the file not yet named.
fn read<'a>(data: &'a [u8], base_name: &str) -> Result<SharedFile<'a>> {
    let header = Header::parse(data).context("bad ELF header")?;
    let sections = header.sections(LE, data).context("bad section headers")?;
    let symtab = sections.symbols(LE, data, elf::SHT_DYNSYM).context("bad dynamic symbol table")?;
    let versions = sections.versions(LE, data).context("bad symbol versions")?;
    // The address ranges that are read-only once the library is relocated.
    let read_only: Vec<(u64, u64)> = header
        .program_headers(LE, data)
        .context("bad program headers")?
        .iter()
        .filter(|p| {
            let ty = p.p_type.get(LE);
            (ty == elf::PT_LOAD && p.p_flags.get(LE) & elf::PF_W == 0) || ty == elf::PT_GNU_RELRO
        })
        .map(|p| (p.p_vaddr.get(LE), p.p_vaddr.get(LE).saturating_add(p.p_memsz.get(LE))))
        .collect();
    let mut soname = None;
    let mut needed = Vec::new();
    let mut audit = None;
    if let Some((dyns, link)) = sections.dynamic(LE, data).context("bad dynamic section")? {
        let strings = sections.strings(LE, data, link).context("bad dynamic strings")?;
        for d in dyns {
            if d.d_tag(LE) == elf::DT_SONAME as u64 {
                soname = d.string(LE, strings).ok();
            } else if d.d_tag(LE) == elf::DT_NEEDED as u64 {
                needed.push(d.string(LE, strings).ok().context("DT_NEEDED is past the string table")?);
            } else if d.d_tag(LE) == elf::DT_AUDIT as u64 {
                audit = Some(d.string(LE, strings).ok().context("DT_AUDIT is past the string table")?);
            }
        }
    }
    let strings = symtab.strings();
    let mut defined = Vec::new();
    let mut undefined = Vec::new();
    for (i, sym) in symtab.symbols().iter().enumerate().skip(1) {
        let bind = sym.st_bind();
        if bind == elf::STB_LOCAL {
            continue;
        }
        let sym_name = sym.name(LE, strings).ok().context("dynamic symbol name is past the string table")?;
        if sym.st_shndx(LE) == elf::SHN_UNDEF {
            undefined.push((sym_name, bind == elf::STB_WEAK));
            continue;
        }
        let (version, hidden) = match &versions {
            Some(v) => {
                let idx = v.version_index(LE, object::SymbolIndex(i));
                // Index 0 (VER_NDX_LOCAL) on a definition the library exports is ill-formed: no
                // linker writes it, and reading it as "not exported" would turn into a confusing
                // undefined symbol later.
                if idx.index() == elf::VER_NDX_LOCAL {
                    bail!("invalid version index 0 for defined symbol {}", String::from_utf8_lossy(sym_name));
                }
                let ver = v.version(idx).with_context(|| format!("symbol {}", String::from_utf8_lossy(sym_name)))?;
                (ver.map(|v| v.name()), idx.is_hidden())
            }
            None => (None, false),
        };
        defined.push(DynSym {
            name: sym_name,
            version,
            hidden,
            value: sym.st_value(LE),
            size: sym.st_size(LE),
            sym_type: sym.st_type(),
            weak: bind == elf::STB_WEAK,
            read_only: read_only.iter().any(|&(lo, hi)| (lo..hi).contains(&sym.st_value(LE))),
            protected: sym.st_other & 3 == elf::STV_PROTECTED,
            other_flags: sym.st_other & !3,
            section_align: match sym.st_shndx(LE) {
                n if n < elf::SHN_LORESERVE => {
                    sections.section(object::SectionIndex(n as usize)).map_or(0, |s| s.sh_addralign.get(LE))
                }
                _ => 0,
            },
        });
    }
    let needed_name = match soname {
        Some(s) => String::from_utf8_lossy(s).into_owned(),
        None => base_name.to_string(),
    };
    Ok(SharedFile { name: String::new(), needed_name, defined, undefined, needed, audit })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_libc() {
        let Ok(data) = std::fs::read("/lib/x86_64-linux-gnu/libc.so.6") else {
            eprintln!("skipped: no libc.so.6");
            return;
        };
        let so = parse(&data, "libc.so.6".into(), "libc.so.6").unwrap();
        assert_eq!(so.needed_name, "libc.so.6");
        let printf = so.defined.iter().find(|s| s.name == b"printf" && !s.hidden).unwrap();
        assert_eq!(printf.version, Some(&b"GLIBC_2.2.5"[..]));
        assert_eq!(printf.sym_type, elf::STT_FUNC);
        // memcpy has an old hidden version and a newer default one.
        let memcpys: Vec<_> = so.defined.iter().filter(|s| s.name == b"memcpy").collect();
        assert!(memcpys.iter().any(|s| s.hidden) && memcpys.iter().any(|s| !s.hidden), "{memcpys:?}");
        assert!(so.undefined.iter().any(|(n, _)| n.starts_with(b"_dl_")), "libc imports from ld.so");
        assert!(so.needed.iter().any(|n| n.starts_with(b"ld-linux-x86-64.so")), "{:?}", so.needed);
    }
}
