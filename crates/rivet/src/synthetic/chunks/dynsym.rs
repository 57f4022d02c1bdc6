//! The dynamic symbol table and its companions: `.dynsym`, `.dynstr`, `.hash`, `.gnu.hash`,
//! `.gnu.version`, `.gnu.version_r`, `.gnu.version_d`. Their contents are planned before layout
//! (`synthetic::dynamic`); `.dynsym`'s values are filled here once addresses are known.
use super::{has_dynamic, put32, shndx, Chunk, Header, Sizing, Writing};
use crate::args::HashStyle;
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::sections::output::Content;
use crate::synthetic::plans::Plans;
use crate::synthetic::DynRel;
use object::elf;

const A: u64 = elf::SHF_ALLOC as u64;

/// Entries of `.dynsym`, the null one included.
fn nsyms(plans: &Plans) -> u64 {
    plans.dynsym.symbols.len() as u64 + 1
}

pub struct Dynsym;

impl Chunk for Dynsym {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".dynsym", sh_type: elf::SHT_DYNSYM, flags: A, align: 8, entsize: 24 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        has_dynamic(s.ctx).then(|| 24 * nsyms(s.plans))
    }
    /// Every `.dynsym` entry after the null one is global.
    fn link_info(&self, w: &Writing) -> (u32, u32) {
        (shndx(w.linked, Content::Dynstr), 1)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        w.linked.plans.dynsym.write_dynsym(w.linked, buf);
        Ok(Vec::new())
    }
}

pub struct Dynstr;

impl Chunk for Dynstr {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".dynstr", sh_type: elf::SHT_STRTAB, flags: A, align: 1, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        has_dynamic(s.ctx).then_some(s.plans.dynsym.dynstr.len() as u64)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        buf.copy_from_slice(&w.linked.plans.dynsym.dynstr);
        Ok(Vec::new())
    }
}

/// `.hash` (SysV, `--hash-style=sysv|both`): one bucket per symbol, chains linking symbols that
/// share a bucket.
pub struct Hash;

impl Chunk for Hash {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".hash", sh_type: elf::SHT_HASH, flags: A, align: 8, entsize: 4 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let style = matches!(s.ctx.config.hash_style, HashStyle::Sysv | HashStyle::Both);
        (has_dynamic(s.ctx) && style && s.ctx.kind.is_dynamic()).then(|| 4 * (2 + 2 * nsyms(s.plans)))
    }
    fn link_info(&self, w: &Writing) -> (u32, u32) {
        (shndx(w.linked, Content::Dynsym), 0)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let ctx = w.linked;
        let n = ctx.plans.dynsym.symbols.len() + 1;
        let nbucket = n.max(1);
        put32(buf, 0, nbucket as u32);
        put32(buf, 4, n as u32);
        let mut buckets = vec![0u32; nbucket];
        let mut chains = vec![0u32; n];
        for (i, &id) in ctx.plans.dynsym.symbols.iter().enumerate() {
            let b = crate::synthetic::dynamic::elf_hash(ctx.symbols[id].name) as usize % nbucket;
            chains[i + 1] = buckets[b];
            buckets[b] = i as u32 + 1;
        }
        for (i, v) in buckets.iter().chain(chains.iter()).enumerate() {
            put32(buf, 8 + 4 * i, *v);
        }
        Ok(Vec::new())
    }
}

/// `.gnu.hash` (`--hash-style=gnu|both`, and in a static PIE's minimal dynamic section unless
/// `--hash-style=none`).
pub struct GnuHash;

impl Chunk for GnuHash {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".gnu.hash", sh_type: elf::SHT_GNU_HASH, flags: A, align: 8, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let style = match s.ctx.config.hash_style {
            HashStyle::Gnu | HashStyle::Both => true,
            HashStyle::None => false,
            HashStyle::Sysv => !s.ctx.kind.is_dynamic(),
        };
        (has_dynamic(s.ctx) && style).then_some(s.plans.dynsym.gnu_hash.len() as u64)
    }
    fn link_info(&self, w: &Writing) -> (u32, u32) {
        (shndx(w.linked, Content::Dynsym), 0)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        buf.copy_from_slice(&w.linked.plans.dynsym.gnu_hash);
        Ok(Vec::new())
    }
}

/// `.gnu.version`: each dynamic symbol's version index.
pub struct GnuVersion;

impl Chunk for GnuVersion {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".gnu.version", sh_type: elf::SHT_GNU_VERSYM, flags: A, align: 2, entsize: 2 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let d = &s.plans.dynsym;
        (has_dynamic(s.ctx) && (d.verneed_count > 0 || d.verdef_count > 0)).then(|| 2 * nsyms(s.plans))
    }
    fn link_info(&self, w: &Writing) -> (u32, u32) {
        (shndx(w.linked, Content::Dynsym), 0)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        for (i, v) in w.linked.plans.dynsym.versym.iter().enumerate() {
            buf[2 * i..2 * i + 2].copy_from_slice(&v.to_le_bytes());
        }
        Ok(Vec::new())
    }
}

/// `.gnu.version_d`: the versions this output defines (from `--version-script`).
pub struct GnuVersionD;

impl Chunk for GnuVersionD {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".gnu.version_d", sh_type: elf::SHT_GNU_VERDEF, flags: A, align: 8, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        (has_dynamic(s.ctx) && s.plans.dynsym.verdef_count > 0).then_some(s.plans.dynsym.verdef.len() as u64)
    }
    fn link_info(&self, w: &Writing) -> (u32, u32) {
        (shndx(w.linked, Content::Dynstr), w.linked.plans.dynsym.verdef_count)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        buf.copy_from_slice(&w.linked.plans.dynsym.verdef);
        Ok(Vec::new())
    }
}

/// `.gnu.version_r`: the library versions imports need.
pub struct GnuVersionR;

impl Chunk for GnuVersionR {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".gnu.version_r", sh_type: elf::SHT_GNU_VERNEED, flags: A, align: 8, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        (has_dynamic(s.ctx) && s.plans.dynsym.verneed_count > 0).then_some(s.plans.dynsym.verneed.len() as u64)
    }
    fn link_info(&self, w: &Writing) -> (u32, u32) {
        (shndx(w.linked, Content::Dynstr), w.linked.plans.dynsym.verneed_count)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        buf.copy_from_slice(&w.linked.plans.dynsym.verneed);
        Ok(Vec::new())
    }
}
