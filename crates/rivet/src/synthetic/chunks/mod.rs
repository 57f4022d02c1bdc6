//! One abstraction per linker-made output section (mold's `Chunk`): each kind of synthetic section
//! says, in one place, what its section header holds, whether this output has one and how large,
//! its `sh_link`/`sh_info`, and its bytes. `chunk` maps a section's `Content` to its
//! implementation and `ORDER` says in which order they are created (which breaks ties between
//! sections of the same segment class, so it is part of the output's layout).
//!
//! Adding a synthetic section: a `Content` variant, an implementation of `Chunk` in a file of this
//! directory, and its line in `ORDER` and `chunk`.
use crate::arch::Arch;
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::ids::OutputSectionId;
use crate::layout::Placement;
use crate::linked::Linked;
use crate::sections::offsets::InputOffsets;
use crate::sections::output::{Content, OutputSection, Sizes, SyntheticIds};
use crate::synthetic::plans::Plans;
use crate::synthetic::symtab::Plan;
use crate::synthetic::DynRel;
use std::marker::PhantomData;

mod aps2;
mod debuglink;
mod dynamic;
mod dynsym;
mod eh_frame_hdr;
mod emitted_relocs;
mod gdb_index;
mod got;
mod notes;
mod plt;
mod rela;
mod relr;
mod symtab;

pub use notes::{build_id, build_id_len, chunk_digests, chunk_digests_patched, hashed, BUILD_ID_CHUNK};
pub use rela::write_rela_dyn;

/// The fixed part of a synthetic section's header.
pub struct Header {
    pub name: &'static str,
    pub sh_type: u32,
    pub flags: u64,
    pub align: u64,
    pub entsize: u64,
}

/// What sizing a synthetic section may look at: the link before layout, the input sections'
/// offsets in their output sections and the output sections' sizes, the plans (GOT and PLT tables, dynamic symbols, GNU
/// properties) and the `.symtab` plan (None with `-s`).
pub struct Sizing<'s, 'a> {
    pub ctx: &'s Ctx<'a>,
    pub offsets: &'s InputOffsets,
    /// The sizes of the sections made so far.
    pub sizes: &'s Sizes,
    pub plans: &'s Plans,
    pub symtab: Option<&'s Plan>,
    /// The linker's sections made so far (in `ORDER`: a section's size may depend on which
    /// of the earlier ones exist).
    pub synthetic: &'s SyntheticIds,
}

/// What writing a synthetic section may look at: the link after layout, the `.symtab` plan, the
/// section itself (its header) and where layout put it (its address; the buffer is its size).
pub struct Writing<'w, 'l, 'a> {
    pub linked: &'w Linked<'l, 'a>,
    pub symtab: Option<&'w Plan>,
    pub id: OutputSectionId,
    pub section: &'w OutputSection,
    pub place: Placement,
}

pub trait Chunk: Sync {
    /// Name, type, flags, alignment and entry size.
    fn header(&self, ctx: &Ctx) -> Header;
    /// The section's size, or None when this output has no such section. Asked once, before
    /// layout, in `ORDER`: a chunk may look at the ids of the chunks created before it.
    fn size(&self, s: &Sizing) -> Option<u64>;
    /// `sh_link` and `sh_info` (section indices are known by then).
    fn link_info(&self, _w: &Writing) -> (u32, u32) {
        (0, 0)
    }
    /// Fills the section's bytes (`buf` is exactly `size` bytes, zeroed: what is zero may be
    /// skipped); returns the dynamic relocations its contents need.
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>>;
}

/// The order synthetic sections are created in.
pub const ORDER: [Content; 25] = [
    Content::GnuProperty,
    Content::BuildId,
    Content::PackageNote,
    Content::Got,
    Content::GotPlt,
    Content::Plt,
    Content::PltSec,
    Content::RelaPlt,
    Content::EhFrameHdr,
    Content::Interp,
    Content::Hash,
    Content::GnuHash,
    Content::Dynsym,
    Content::Dynstr,
    Content::RelaDyn,
    Content::RelrDyn,
    Content::GnuVersion,
    Content::GnuVersionD,
    Content::GnuVersionR,
    Content::Dynamic,
    Content::GdbIndex,
    Content::GnuDebuglink,
    Content::Symtab,
    Content::Strtab,
    Content::Shstrtab,
];

/// The implementation of a synthetic section's kind (None for input sections).
pub fn chunk<A: Arch>(c: Content) -> Option<&'static dyn Chunk> {
    Some(match c {
        Content::Inputs => return None,
        Content::GnuProperty => &notes::GnuProperty,
        Content::BuildId => &notes::BuildId,
        Content::PackageNote => &notes::PackageNote,
        Content::Got => &got::Got::<A>(PhantomData),
        Content::GotPlt => &got::GotPlt::<A>(PhantomData),
        Content::Plt => &plt::Plt::<A>(PhantomData),
        Content::PltSec => &plt::PltSec::<A>(PhantomData),
        Content::RelaPlt => &rela::RelaPlt::<A>(PhantomData),
        Content::EhFrameHdr => &eh_frame_hdr::EhFrameHdr,
        Content::Interp => &dynamic::Interp::<A>(PhantomData),
        Content::Hash => &dynsym::Hash,
        Content::GnuHash => &dynsym::GnuHash,
        Content::Dynsym => &dynsym::Dynsym,
        Content::Dynstr => &dynsym::Dynstr,
        Content::RelaDyn => &rela::RelaDyn::<A>(PhantomData),
        Content::RelrDyn => &relr::RelrDyn::<A>(PhantomData),
        Content::GnuVersion => &dynsym::GnuVersion,
        Content::GnuVersionD => &dynsym::GnuVersionD,
        Content::GnuVersionR => &dynsym::GnuVersionR,
        Content::Dynamic => &dynamic::Dynamic,
        Content::GdbIndex => &gdb_index::GdbIndex,
        Content::GnuDebuglink => &debuglink::GnuDebuglink,
        Content::EmittedRelocs => &emitted_relocs::EmittedRelocs::<A>(PhantomData),
        Content::Symtab => &symtab::Symtab,
        Content::Strtab => &symtab::Strtab,
        Content::Shstrtab => &symtab::Shstrtab,
    })
}

/// Creates every synthetic section this output has, with its exact size (`.shstrtab`'s is set by
/// layout once section names are known); returns where each is.
pub fn create_sections<A: Arch>(
    ctx: &mut Ctx,
    offsets: &InputOffsets,
    sizes: &mut Sizes,
    plans: &Plans,
    symtab: Option<&Plan>,
) -> SyntheticIds {
    let mut synthetic = SyntheticIds::default();
    for c in ORDER {
        let Some(chunk) = chunk::<A>(c) else { continue };
        let sizing = Sizing { ctx, offsets, sizes, plans, symtab, synthetic: &synthetic };
        let Some(size) = chunk.size(&sizing) else { continue };
        let h = chunk.header(ctx);
        let mut s = OutputSection::new(h.name, h.sh_type, h.flags, h.align, c);
        s.entsize = h.entsize;
        let id = sizes.add(&mut ctx.sections, s, size);
        synthetic.set(c, id);
    }
    synthetic
}

/// The section header index of the synthetic section of kind `c` (0: none).
fn shndx(ctx: &Linked, c: Content) -> u32 {
    ctx.layout.synthetic.get(c).map_or(0, |s| ctx.layout.shndx(s))
}

/// Whether the output has a dynamic section and its companions (a static PIE has a minimal one, so
/// that glibc's `_dl_relocate_static_pie` finds its relocations).
fn has_dynamic(ctx: &Ctx) -> bool {
    ctx.kind.is_dynamic() || ctx.kind == crate::ctx::OutputKind::StaticPie
}

fn put32(buf: &mut [u8], off: usize, v: u32) {
    buf[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(buf: &mut [u8], off: usize, v: u64) {
    buf[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

/// A dynamic relocation's r_info: its `.dynsym` index (0 without a symbol) and type.
fn r_info(ctx: &Ctx, plans: &Plans, ty: u32, sym: Option<crate::ids::SymbolId>) -> Result<u64> {
    let Some(sym) = sym else {
        return Ok(ty as u64);
    };
    match plans.dynsym.index.get(&sym) {
        Some(&i) => Ok(((i as u64) << 32) | ty as u64),
        None => Err(crate::fatal!(
            "internal error: '{}' needs a dynamic relocation but is not in .dynsym",
            crate::diag::symbol_name(ctx.symbols[sym].name)
        )),
    }
}
