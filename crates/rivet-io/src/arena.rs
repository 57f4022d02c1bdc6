//! Bytes made during the link that must live as long as the mapped inputs: decompressed debug
//! sections (`SHF_COMPRESSED`) are parsed, relocated and written exactly like mapped bytes, borrowed
//! for the lifetime of the arena that owns them.
use std::sync::Mutex;

#[derive(Default)]
pub struct ByteArena {
    chunks: Mutex<Vec<Box<[u8]>>>,
}

impl ByteArena {
    pub fn new() -> ByteArena {
        ByteArena::default()
    }

    /// Takes ownership of `bytes` and lends them out for as long as the arena lives.
    pub fn keep(&self, bytes: Vec<u8>) -> &[u8] {
        let boxed = bytes.into_boxed_slice();
        let (ptr, len) = (boxed.as_ptr(), boxed.len());
        self.chunks.lock().unwrap_or_else(|e| e.into_inner()).push(boxed);
        // SAFETY: the boxed slice's heap allocation never moves (moving the Box moves the pointer,
        // not the bytes) and is never removed or mutated before the arena is dropped; the returned
        // borrow is tied to `&self`, so it cannot outlive the arena.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }

    /// Total bytes held.
    pub fn bytes(&self) -> u64 {
        self.chunks.lock().unwrap_or_else(|e| e.into_inner()).iter().map(|c| c.len() as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_bytes_stay_put_while_more_are_added() {
        let arena = ByteArena::new();
        let first = arena.keep(vec![1, 2, 3]);
        let many: Vec<&[u8]> = (0..1000u32).map(|i| arena.keep(i.to_le_bytes().to_vec())).collect();
        assert_eq!(first, &[1, 2, 3]);
        assert_eq!(many[999], &999u32.to_le_bytes());
        assert_eq!(arena.bytes(), 3 + 4000);
    }
}
