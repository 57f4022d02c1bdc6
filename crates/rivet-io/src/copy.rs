//! Copying input bytes to the output inside the kernel (`--copy-method`): sections that reach the
//! output unchanged (no relocations, nothing merged) can go from the input file to the output file
//! with `copy_file_range(2)` or `sendfile(2)` instead of a `memcpy` into the output buffer and a
//! write (or a page fault) from it. `policy::choose_copy` records how they compare with it here.
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyMethod {
    /// Copy through the output buffer (user space).
    Memcpy,
    /// `copy_file_range(2)`: explicit offsets on both sides, safe from several threads at once;
    /// may share extents (reflink) on btrfs and XFS.
    CopyFileRange,
    /// `sendfile(2)`: writes at the output descriptor's file position, so one copy at a time.
    Sendfile,
}

impl CopyMethod {
    pub fn name(self) -> &'static str {
        match self {
            CopyMethod::Memcpy => "memcpy",
            CopyMethod::CopyFileRange => "copy-file-range",
            CopyMethod::Sendfile => "sendfile",
        }
    }
}

/// True for the errors that mean "this kernel or file system pair cannot do it" (the caller then
/// writes the bytes itself), as opposed to real I/O errors (a full disk).
pub fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EXDEV | libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL | libc::EBADF))
}

/// Copies `len` bytes at `src_off` of `src` to `dst_off` of `dst` with `method` (not Memcpy).
/// Sendfile moves `dst`'s file position: callers must not share `dst` between threads for it.
pub fn copy_range(method: CopyMethod, src: &File, src_off: u64, dst: &File, dst_off: u64, len: u64) -> io::Result<()> {
    let (mut s, mut d, mut left) = (src_off as libc::loff_t, dst_off as libc::loff_t, len as usize);
    if method == CopyMethod::Sendfile {
        // SAFETY: lseek on a descriptor we hold.
        if unsafe { libc::lseek(dst.as_raw_fd(), d, libc::SEEK_SET) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    while left > 0 {
        // SAFETY: both descriptors are open; the offset pointers are valid locals the kernel updates.
        let n = unsafe {
            match method {
                CopyMethod::CopyFileRange => {
                    libc::copy_file_range(src.as_raw_fd(), &mut s, dst.as_raw_fd(), &mut d, left, 0) as i64
                }
                CopyMethod::Sendfile => libc::sendfile(dst.as_raw_fd(), src.as_raw_fd(), &mut s, left) as i64,
                CopyMethod::Memcpy => return Err(io::Error::from_raw_os_error(libc::EINVAL)),
            }
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "input ended before the copy did"));
        }
        left -= n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};

    fn roundtrip(method: CopyMethod) {
        let d = std::env::temp_dir().join(format!("rivet-copy-{}-{}", method.name(), std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(d.join("in"), &data).unwrap();
        let src = File::open(d.join("in")).unwrap();
        let mut dst =
            std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(d.join("out")).unwrap();
        dst.write_all(&[0xaa; 200_000]).unwrap();
        copy_range(method, &src, 1000, &dst, 5000, 150_000).unwrap();
        copy_range(method, &src, 0, &dst, 190_000, 20_000).unwrap(); // extends the file
        let mut got = Vec::new();
        dst.rewind().unwrap();
        dst.read_to_end(&mut got).unwrap();
        assert_eq!(got.len(), 210_000);
        assert!(got[..5000].iter().all(|&b| b == 0xaa));
        assert_eq!(&got[5000..155_000], &data[1000..151_000]);
        assert!(got[155_000..190_000].iter().all(|&b| b == 0xaa));
        assert_eq!(&got[190_000..], &data[..20_000]);
        let e = copy_range(method, &src, 299_000, &dst, 0, 5000).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn copy_file_range_copies_at_both_offsets() {
        roundtrip(CopyMethod::CopyFileRange);
    }

    #[test]
    fn sendfile_copies_at_both_offsets() {
        roundtrip(CopyMethod::Sendfile);
    }
}
