//! The notes the linker writes: `.note.gnu.property` (the inputs' x86 features, merged) and
//! `.note.gnu.build-id`, whose descriptor is a hash of the rest of the output and so is filled in
//! last (`build_id`, over the chunk digests the writer collects).
use super::{Chunk, Header, Sizing, Writing};
use crate::args::BuildId as Style;
use crate::ctx::Ctx;
use crate::diag::{Context, Result};
use crate::synthetic::DynRel;
use object::elf::{self, NoteHeader64};
use object::{pod, LittleEndian as LE, U32};

const A: u64 = elf::SHF_ALLOC as u64;

/// `.note.gnu.property`.
pub struct GnuProperty;

impl Chunk for GnuProperty {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".note.gnu.property", sh_type: elf::SHT_NOTE, flags: A, align: 8, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let size = crate::synthetic::property::size(&s.plans.gnu_properties);
        (size > 0).then_some(size)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        crate::synthetic::property::write(&w.linked.plans.gnu_properties, buf);
        Ok(Vec::new())
    }
}

/// `.note.gnu.build-id` (`--build-id`): the header here; the descriptor is patched in by the
/// writer once every other byte of the output is final.
pub struct BuildId;

impl Chunk for BuildId {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".note.gnu.build-id", sh_type: elf::SHT_NOTE, flags: A, align: 4, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let style = &s.ctx.config.build_id;
        // A script's section may hold it instead (`Ctx::build_id_home`).
        (*style != Style::None && s.ctx.build_id_home.is_none()).then(|| 16 + build_id_len(style))
    }
    fn write(&self, _: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let desc = buf.len() as u32 - 16;
        let header = NoteHeader64 {
            n_namesz: U32::new(LE, 4),
            n_descsz: U32::new(LE, desc),
            n_type: U32::new(LE, elf::NT_GNU_BUILD_ID),
        };
        buf[0..12].copy_from_slice(pod::bytes_of(&header));
        buf[12..16].copy_from_slice(b"GNU\0");
        Ok(Vec::new())
    }
}

/// `.note.package` (`--package-metadata=JSON`, the Fedora/systemd package metadata note): owner
/// "FDO", type NT_FDO_PACKAGING_METADATA, the JSON as a NUL-terminated string, padded to 4.
pub struct PackageNote;

/// NT_FDO_PACKAGING_METADATA.
const NT_FDO_PACKAGING_METADATA: u32 = 0xcafe_1a7e;

impl Chunk for PackageNote {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".note.package", sh_type: elf::SHT_NOTE, flags: A, align: 4, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        let json = s.ctx.config.package_metadata.as_ref()?;
        Some(16 + (json.len() as u64 + 1).next_multiple_of(4))
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let json = w.linked.config.package_metadata.as_deref().unwrap_or_default();
        let header = NoteHeader64 {
            n_namesz: U32::new(LE, 4),
            n_descsz: U32::new(LE, json.len() as u32 + 1),
            n_type: U32::new(LE, NT_FDO_PACKAGING_METADATA),
        };
        buf[0..12].copy_from_slice(pod::bytes_of(&header));
        buf[12..16].copy_from_slice(b"FDO\0");
        buf[16..16 + json.len()].copy_from_slice(json);
        Ok(Vec::new())
    }
}

/// The descriptor's size for each `--build-id` style.
pub fn build_id_len(b: &Style) -> u64 {
    match b {
        Style::None => 0,
        Style::Default | Style::Sha1 => 20,
        Style::Sha256 => 32,
        Style::Md5 | Style::Uuid => 16,
        Style::Hex(h) => h.len() as u64,
    }
}

/// Build-ids hash the output in chunks of this size, then hash the chunk digests in order: the same
/// bytes give the same id whatever the thread count, and a window can be hashed (and freed) as soon
/// as it is final.
pub const BUILD_ID_CHUNK: usize = 1 << 20;

/// Whether `style` is computed from the output's bytes.
pub fn hashed(style: &Style) -> bool {
    matches!(style, Style::Default | Style::Sha1 | Style::Md5 | Style::Sha256)
}

/// The digests of consecutive chunks (`data` starts on a chunk boundary).
///
/// A build-id must be unique, not a particular digest: the tree of chunk digests is not the SHA-1
/// of the file in lld or here either. `sha1`, `md5` and `sha256` name the id's size (20, 16 and 32
/// bytes), as in lld since D121531, and hash each chunk with BLAKE3 (SHA-1 with the CPU's SHA
/// extensions was 7% of cxx-big's CPU, perf, 51 MB output; BLAKE3 hashes 8 blocks at once with
/// AVX2). `--build-id` without a style hashes each chunk with XXH3's 128 bits, as lld's default
/// (`fast`) uses XXH3: BLAKE3 was 9-10% of every corpus job's instructions (callgrind: 385M of
/// rust-big's 4,060M), XXH3 a tenth of that.
pub fn chunk_digests(style: &Style, data: &[u8]) -> Vec<[u8; 32]> {
    use rayon::prelude::*;
    if !hashed(style) {
        return Vec::new();
    }
    data.par_chunks(BUILD_ID_CHUNK).map(|c| ChunkHasher::new(style).update(c).finish()).collect()
}

/// One chunk's digest, by the style's hash.
enum ChunkHasher {
    Xxh3(Box<xxhash_rust::xxh3::Xxh3>),
    Blake3(Box<blake3::Hasher>),
}

impl ChunkHasher {
    fn new(style: &Style) -> ChunkHasher {
        match style {
            Style::Default => ChunkHasher::Xxh3(Box::default()),
            _ => ChunkHasher::Blake3(Box::default()),
        }
    }

    fn update(mut self, bytes: &[u8]) -> ChunkHasher {
        match &mut self {
            ChunkHasher::Xxh3(h) => h.update(bytes),
            ChunkHasher::Blake3(h) => {
                h.update(bytes);
            }
        }
        self
    }

    fn finish(self) -> [u8; 32] {
        match self {
            ChunkHasher::Xxh3(h) => {
                let mut d = [0u8; 32];
                d[..16].copy_from_slice(&h.digest128().to_le_bytes());
                d
            }
            ChunkHasher::Blake3(h) => *h.finalize().as_bytes(),
        }
    }
}

/// `chunk_digests` of `data` with the `patches` (offset, bytes) in place of what `data` holds there
/// (sections the kernel copies into the file, absent from the buffer). Patches are sorted and
/// disjoint.
pub fn chunk_digests_patched(style: &Style, data: &[u8], patches: &[(u64, &[u8])]) -> Vec<[u8; 32]> {
    use rayon::prelude::*;
    if patches.is_empty() || !hashed(style) {
        return chunk_digests(style, data);
    }
    let chunks = data.len().div_ceil(BUILD_ID_CHUNK);
    (0..chunks)
        .into_par_iter()
        .map(|c| {
            let (start, end) = (c * BUILD_ID_CHUNK, ((c + 1) * BUILD_ID_CHUNK).min(data.len()));
            let mut h = ChunkHasher::new(style);
            let mut at = start;
            for &(off, bytes) in patches {
                let (p_start, p_end) = (off as usize, off as usize + bytes.len());
                if p_end <= start || p_start >= end {
                    continue;
                }
                let (from, to) = (p_start.max(start), p_end.min(end));
                h = h.update(&data[at..from]).update(&bytes[from - p_start..to - p_start]);
                at = to;
            }
            h.update(&data[at..end]).finish()
        })
        .collect()
}

/// The build-id descriptor from the chunk digests of the whole file (in order).
pub fn build_id(style: &Style, digests: &[[u8; 32]]) -> Result<Vec<u8>> {
    Ok(match style {
        Style::None => Vec::new(),
        Style::Hex(h) => h.clone(),
        Style::Uuid => {
            let mut b = [0u8; 16];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b))
                .context("cannot read /dev/urandom for --build-id=uuid")?;
            b[6] = (b[6] & 0x0f) | 0x40;
            b[8] = (b[8] & 0x3f) | 0x80;
            b.to_vec()
        }
        Style::Default | Style::Sha1 | Style::Md5 | Style::Sha256 => {
            let mut h = blake3::Hasher::new();
            digests.iter().for_each(|d| {
                h.update(d);
            });
            h.finalize().as_bytes()[..build_id_len(style) as usize].to_vec()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_id_sizes_and_sensitivity() {
        let data: Vec<u8> = (0..3 * BUILD_ID_CHUNK + 100).map(|i| (i * 7 % 251) as u8).collect();
        let d = chunk_digests(&Style::Sha1, &data);
        assert_eq!(d.len(), 4, "one digest per started chunk");
        let sha1 = build_id(&Style::Sha1, &d).unwrap();
        let md5 = build_id(&Style::Md5, &d).unwrap();
        assert_eq!(build_id(&Style::Sha256, &d).unwrap().len(), 32);
        assert_eq!((sha1.len(), md5.len()), (20, 16));
        // One byte changed in the last, short chunk changes the id.
        let mut other = data.clone();
        *other.last_mut().unwrap() ^= 1;
        assert_ne!(build_id(&Style::Sha1, &chunk_digests(&Style::Sha1, &other)).unwrap(), sha1);
        assert!(chunk_digests(&Style::Uuid, &data).is_empty());
        // The default style: 20 bytes from XXH3 chunk digests, as sensitive to each byte.
        let default = build_id(&Style::Default, &chunk_digests(&Style::Default, &data)).unwrap();
        assert_eq!(default.len(), 20);
        assert_ne!(default, sha1);
        assert_eq!(build_id(&Style::Default, &chunk_digests(&Style::Default, &data)).unwrap(), default);
        for at in [0, BUILD_ID_CHUNK + 5, data.len() - 1] {
            let mut other = data.clone();
            other[at] ^= 0x80;
            assert_ne!(build_id(&Style::Default, &chunk_digests(&Style::Default, &other)).unwrap(), default);
        }
    }

    #[test]
    fn patched_digests_equal_digests_of_the_patched_bytes() {
        let data: Vec<u8> = (0..2 * BUILD_ID_CHUNK + 10).map(|i| (i % 253) as u8).collect();
        // A patch straddling the first chunk boundary and one inside the last chunk.
        let (a, b) = (vec![0xaa; 64], vec![0x55; 5]);
        let patches: Vec<(u64, &[u8])> = vec![(BUILD_ID_CHUNK as u64 - 32, &a), (2 * BUILD_ID_CHUNK as u64 + 2, &b)];
        let mut expect = data.clone();
        for &(off, bytes) in &patches {
            expect[off as usize..off as usize + bytes.len()].copy_from_slice(bytes);
        }
        for style in [Style::Sha1, Style::Default] {
            assert_eq!(chunk_digests_patched(&style, &data, &patches), chunk_digests(&style, &expect));
        }
    }
}
