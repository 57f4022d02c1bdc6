//! `.gnu_debuglink` (`--separate-debug-file`): the separate debug file's name (without its
//! directory), NUL-terminated and padded to 4 bytes, then the CRC-32 of that file, as
//! `objcopy --add-gnu-debuglink` writes it. The CRC is written as zero here and patched in once the
//! rest of the output is final (`synthetic::debug_file::debuglink_crc`): the debug file is made to
//! have that CRC afterwards.
use super::{Chunk, Header, Sizing, Writing};
use crate::ctx::Ctx;
use crate::diag::Result;
use crate::synthetic::DynRel;
use object::elf;

pub struct GnuDebuglink;

/// The name recorded: the debug file's file name.
pub fn debuglink_name(ctx: &Ctx) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let path = ctx.config.debug_file_path()?;
    Some(path.file_name().map_or_else(Vec::new, |n| n.as_bytes().to_vec()))
}

impl Chunk for GnuDebuglink {
    fn header(&self, _: &Ctx) -> Header {
        Header { name: ".gnu_debuglink", sh_type: elf::SHT_PROGBITS, flags: 0, align: 4, entsize: 0 }
    }
    fn size(&self, s: &Sizing) -> Option<u64> {
        if s.ctx.config.oformat_binary {
            return None;
        }
        let name = debuglink_name(s.ctx)?;
        Some((name.len() as u64 + 1).next_multiple_of(4) + 4)
    }
    fn write(&self, w: &Writing, buf: &mut [u8]) -> Result<Vec<DynRel>> {
        let name = debuglink_name(w.linked).unwrap_or_default();
        buf.fill(0);
        buf[..name.len()].copy_from_slice(&name);
        Ok(Vec::new())
    }
}
