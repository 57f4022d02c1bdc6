//! `--separate-debug-file`: the output's `.gnu_debuglink` records a CRC-32 that the debug file
//! must have (gdb refuses a debug file whose CRC differs), but the debug file is written after the
//! output is in place, off the link's critical path. So the CRC is chosen first, deterministically
//! (mold's way): the CRC-32 of the build-id when the output has one, else of the output's bytes;
//! the debug file then ends with 4 bytes that give it that CRC (CRC-32 is linear: any CRC can be
//! reached by appending 4 chosen bytes).
use crate::diag::{Context, Result};
use crate::linked::Linked;
use crate::sections::output::Content;
use rivet_io::OutputFile;

/// The reflected CRC-32 polynomial (IEEE 802.3, zlib's and gdb's).
const POLY: u32 = 0xedb8_8320;

/// The CRC the output's `.gnu_debuglink` records: of the build-id, or of every output byte (the
/// CRC field itself still zero) when there is none.
pub fn chosen_crc(build_id: Option<&[u8]>, out: &mut OutputFile) -> Result<u32> {
    if let Some(id) = build_id {
        return Ok(crc32fast::hash(id));
    }
    let mut h = crc32fast::Hasher::new();
    out.read_back(|piece| h.update(piece)).context("cannot read the output back for .gnu_debuglink")?;
    Ok(h.finalize())
}

/// Writes `crc` into the output's `.gnu_debuglink` (its last 4 bytes).
pub fn stamp(ctx: &Linked, out: &mut OutputFile, crc: u32) -> Result<()> {
    let Some((offset, size)) = ctx.synthetic_file_range(Content::GnuDebuglink) else { return Ok(()) };
    out.patch(offset + size - 4, &crc.to_le_bytes()).context("cannot write .gnu_debuglink")?;
    Ok(())
}

/// The 4 bytes that, appended to data whose CRC-32 is `current`, make its CRC-32 `wanted`.
pub fn crc_trailer(current: u32, wanted: u32) -> [u8; 4] {
    // The register after the data is !current; appending the little-endian word X XORs it in and
    // shifts 32 times: !wanted = S(!current ^ X), with S the 32 steps (linear and invertible).
    let mut r = !wanted;
    for _ in 0..32 {
        r = if r & 0x8000_0000 != 0 { ((r ^ POLY) << 1) | 1 } else { r << 1 };
    }
    (r ^ !current).to_le_bytes()
}

/// Ends the written debug file (all of `out` but its last 4 bytes) with the trailer that gives it
/// CRC-32 `crc`.
pub fn seal(out: &mut OutputFile, size: u64, crc: u32) -> Result<()> {
    let body = size - 4;
    let mut h = crc32fast::Hasher::new();
    let mut at = 0u64;
    out.read_back(|piece| {
        let n = (body.saturating_sub(at)).min(piece.len() as u64) as usize;
        h.update(&piece[..n]);
        at += piece.len() as u64;
    })
    .context("cannot read the separate debug file back")?;
    out.patch(body, &crc_trailer(h.finalize(), crc)).context("cannot write the separate debug file")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trailer_gives_the_wanted_crc() {
        for (len, wanted) in [(0usize, 0u32), (1, 0xffff_ffff), (1000, 0x1234_5678), (4097, 0xdead_beef)] {
            let mut data: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
            let t = crc_trailer(crc32fast::hash(&data), wanted);
            data.extend_from_slice(&t);
            assert_eq!(crc32fast::hash(&data), wanted, "{len} bytes");
        }
    }
}
