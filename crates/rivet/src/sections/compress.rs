//! `--compress-debug-sections=zlib|zstd`: after layout, each `.debug_*` output section is built in
//! memory (its input sections copied and relocated as the writer would), compressed, and given an
//! ELF compression header (`SHF_COMPRESSED`, an Elf64_Chdr then the stream), as GNU ld and lld do.
//! The non-alloc sections after it move up in the file; loaded sections do not move.
use crate::args::DebugCompression;
use crate::ctx::Ctx;
use crate::ids::{OutputSectionId, SectionRef};
use crate::layout::{self, Layout};
use crate::linked::{Addresses, Linked, Placed};
use crate::sections::output::{Compressed, Content};
use crate::synthetic::plans::Plans;
use crate::timing::Timer;
use object::elf;
use rayon::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Zlib,
    Zstd,
}

impl Format {
    /// The `--compress-debug-sections` value: `none` is no compression.
    pub fn from_option(v: DebugCompression) -> Option<Format> {
        match v {
            DebugCompression::Zlib => Some(Format::Zlib),
            DebugCompression::Zstd => Some(Format::Zstd),
            DebugCompression::None => None,
        }
    }
}

/// The size of an Elf64_Chdr.
const CHDR_SIZE: usize = size_of::<elf::CompressionHeader64<object::LittleEndian>>();

/// `--compress-debug-sections`, when given (`--verbose` says what it did).
pub fn compress_if_asked<A: crate::arch::Arch>(
    ctx: &Ctx,
    plans: &Plans,
    lay: &mut Layout,
    addresses: &Addresses,
    timer: &Timer,
) {
    let Some(format) = Format::from_option(ctx.config.compress_debug_sections) else { return };
    let (n, before, after) = timer.phase("compress debug", || compress::<A>(ctx, plans, lay, addresses, format));
    if ctx.config.verbose {
        eprintln!("rivet: --compress-debug-sections: {n} sections, {before} -> {after} bytes");
    }
}

/// Compresses every non-empty `.debug_*` output section that gets smaller (as GNU ld and lld do;
/// `zlib:0`, stored blocks, asks for the compression header whatever the size, as mold gives it),
/// then moves the non-alloc sections and the section header table up; the layout keeps the
/// compressed bytes (`Compressed`). Returns (sections compressed, bytes before, bytes after).
pub fn compress<A: crate::arch::Arch>(
    ctx: &Ctx,
    plans: &Plans,
    lay: &mut Layout,
    addresses: &Addresses,
    format: Format,
) -> (usize, u64, u64) {
    let candidates: Vec<OutputSectionId> = ctx
        .sections
        .ids()
        .filter(|&i| {
            let s = &ctx.sections[i];
            !s.is_alloc() && s.content == Content::Inputs && lay.sizes[i] > 0 && s.name.starts_with(".debug")
        })
        .collect();
    let level = match (format, ctx.config.compress_level) {
        (_, Some(l)) => l,
        (Format::Zlib, None) if ctx.config.opt_level >= 2 => 6,
        (_, None) => 1,
    };
    let always = format == Format::Zlib && level == 0;
    let done: Vec<(OutputSectionId, Option<Vec<u8>>)> = {
        let ctx = Linked::new(Placed::new(ctx, plans, lay), addresses);
        candidates
            .par_iter()
            .map(|&i| {
                let plain = render::<A>(&ctx, i);
                let packed = match pack(&plain, ctx.sections[i].align, format, level) {
                    Ok(p) => p,
                    Err(e) => {
                        ctx.diag.error(format!("cannot compress {}: {e}", ctx.sections[i].name));
                        return (i, None);
                    }
                };
                (i, (always || packed.len() < plain.len()).then_some(packed))
            })
            .collect()
    };
    let (mut count, mut before, mut after) = (0, 0, 0);
    let mut compressed = Compressed::default();
    for (i, packed) in done {
        let Some(packed) = packed else { continue };
        count += 1;
        before += lay.sizes[i];
        after += packed.len() as u64;
        lay.sizes[i] = packed.len() as u64;
        compressed.insert(i, packed);
    }
    if count > 0 {
        lay.compressed = std::sync::Arc::new(compressed);
        (lay.shoff, lay.file_size) =
            layout::place_non_alloc(ctx, &lay.sizes, &lay.compressed, &mut lay.sections, lay.alloc_end);
    }
    (count, before, after)
}

/// Output section `i`'s bytes as the writer would produce them (relocation errors go to the
/// diagnostics, as when writing).
fn render<A: crate::arch::Arch>(ctx: &Linked, i: OutputSectionId) -> Vec<u8> {
    let os = &ctx.sections[i];
    let mut buf = vec![0u8; ctx.layout.sizes[i] as usize];
    for &r in &os.members {
        let SectionRef { file: f, index: s } = r;
        if ctx.objects[r].sh_type == elf::SHT_NOBITS {
            continue;
        }
        let size = ctx.member_size(f, s) as usize;
        let at = ctx.layout.inputs.offsets[r] as usize;
        if size > 0 {
            crate::write::write_input::<A>(ctx, f, s, &mut buf[at..at + size]);
        }
    }
    buf
}

/// zstd compresses a section in independent frames of this many bytes, in parallel: a fixed size,
/// so the bytes do not depend on the thread count (zstd decoders, gdb's and lld's among them, read
/// concatenated frames as one stream).
pub const ZSTD_FRAME: usize = 1 << 20;

/// An Elf64_Chdr (type, reserved, uncompressed size, alignment) and the compressed stream.
/// `level`: zlib's 0-9 or zstd's 1-22.
pub fn pack(plain: &[u8], align: u64, format: Format, level: u8) -> std::io::Result<Vec<u8>> {
    let (kind, stream) = match format {
        Format::Zlib => (elf::ELFCOMPRESS_ZLIB, miniz_oxide::deflate::compress_to_vec_zlib(plain, level)),
        Format::Zstd => {
            let frames: Vec<Vec<u8>> = plain
                .par_chunks(ZSTD_FRAME)
                .map(|c| zstd::bulk::compress(c, level as i32))
                .collect::<Result<_, _>>()?;
            (elf::ELFCOMPRESS_ZSTD, frames.concat())
        }
    };
    use object::{LittleEndian as LE, U32, U64};
    let header = elf::CompressionHeader64::<LE> {
        ch_type: U32::new(LE, kind),
        ch_reserved: U32::new(LE, 0),
        ch_size: U64::new(LE, plain.len() as u64),
        ch_addralign: U64::new(LE, align),
    };
    let mut out = Vec::with_capacity(CHDR_SIZE + stream.len());
    out.extend_from_slice(object::pod::bytes_of(&header));
    out.extend_from_slice(&stream);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        (0..200_000u32).flat_map(|i| format!("name_{}\0", i % 977).into_bytes()).collect()
    }

    #[test]
    fn packed_sections_round_trip_through_the_input_reader() {
        let plain = sample();
        for format in [Format::Zlib, Format::Zstd] {
            let packed = pack(&plain, 1, format, 1).unwrap();
            assert!(packed.len() < plain.len() / 4, "{format:?}: {} bytes", packed.len());
            let kind = u32::from_le_bytes(packed[0..4].try_into().unwrap());
            assert_eq!(kind, if format == Format::Zlib { elf::ELFCOMPRESS_ZLIB } else { elf::ELFCOMPRESS_ZSTD });
            let (back, align) = crate::input::object::decompress(&packed, false, "test").unwrap();
            assert_eq!((back == plain, align), (true, 1));
        }
    }

    #[test]
    fn option_values() {
        assert_eq!(Format::from_option(DebugCompression::Zlib), Some(Format::Zlib));
        assert_eq!(Format::from_option(DebugCompression::Zstd), Some(Format::Zstd));
        assert_eq!(Format::from_option(DebugCompression::None), None);
    }
}
