//! A hash table of indexes into a list kept elsewhere (the symbols: `resolve::SymbolIndex`), for
//! lookups on a link's critical path whose keys are known some way ahead.
//!
//! Slots are 4 bytes, probed linearly from the slot the key's hash picks with its low bits. A slot
//! holds an index (plus one: 0 is an empty slot) in its low `id_bits` bits and the top bits of the
//! key's hash above them, so a probe asks the caller to compare keys (`eq`, which reads the list
//! and the key's bytes) only when those bits agree. The table has `2^id_bits` slots, is at most
//! 3/4 full and takes indexes below `2^id_bits`; it grows (every key placed again, with the hash
//! the caller recomputes: `rehash`) before it would break either rule.
//!
//! Where a key's probe starts follows from its hash alone, so a caller that knows the hashes of
//! the keys it will look up next can have their slots loaded ahead (`prefetch_slot`), then the
//! entries the slots most likely point to (`likely`), then what those entries point to: the loads
//! of several lookups overlap instead of each waiting for memory in turn (hashbrown's table,
//! which this replaced, gives no way to know a key's slot before probing). That pays where the
//! entries are cold: resolution's symbols. Merging's deduplication (sharded hashbrown tables)
//! was tried with it and lost: most of its pieces are copies of a few hot ones (synth-1: 864k
//! of 870k), which the prefetching's extra probes only slow down (merge phase 42 -> 59 ms; the
//! table without prefetching 43).

/// Indexes by hash, the keys kept by the caller.
#[derive(Default)]
pub struct IdTable {
    slots: Vec<u32>,
    /// log2 of the number of slots (0 with none): an index must be below `2^id_bits - 1`.
    id_bits: u32,
    /// Slots in use.
    len: usize,
}

/// Where a probe for a key ended: the slot that holds it, or the empty slot it would take.
enum Probe {
    Found(usize),
    Vacant(usize),
}

/// Starts loading the cache line at `p` into the cache (a hint: it never faults, whatever the
/// address).
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` only loads a line into the cache; it reads no value and does not fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `prfm` only loads a line into the cache; it reads no value and does not fault.
    unsafe {
        std::arch::asm!("prfm pldl1keep, [{0}]", in(reg) p, options(nostack, readonly, preserves_flags))
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}

impl IdTable {
    /// The index whose key is the one looked for (`eq` says of an index whether its key is), of
    /// hash `hash`.
    #[inline]
    pub fn find(&self, hash: u64, eq: impl FnMut(u32) -> bool) -> Option<u32> {
        match self.probe(hash, eq) {
            Probe::Found(at) => Some(self.index_at(at)),
            Probe::Vacant(_) => None,
        }
    }

    /// The index of the key looked for (as `find`), or `new` if none has it, which the table then
    /// holds for the key (the bool says so). `rehash` gives an index's hash, should the table grow.
    #[inline]
    pub fn find_or_insert(
        &mut self,
        hash: u64,
        new: u32,
        eq: impl FnMut(u32) -> bool,
        rehash: impl Fn(u32) -> u64,
    ) -> (u32, bool) {
        if self.needs_room(new) {
            self.grow(self.wanted(new), rehash);
        }
        match self.probe(hash, eq) {
            Probe::Found(at) => (self.index_at(at), false),
            Probe::Vacant(at) => {
                self.slots[at] = self.slot_value(hash, new);
                self.len += 1;
                (new, true)
            }
        }
    }

    /// Maps the key looked for (as `find`) to `index`, replacing the index it had.
    pub fn set(&mut self, hash: u64, index: u32, eq: impl FnMut(u32) -> bool, rehash: impl Fn(u32) -> u64) {
        if self.needs_room(index) {
            self.grow(self.wanted(index), rehash);
        }
        let at = match self.probe(hash, eq) {
            Probe::Found(at) => at,
            Probe::Vacant(at) => {
                self.len += 1;
                at
            }
        };
        self.slots[at] = self.slot_value(hash, index);
    }

    /// Room for `additional` more keys, and indexes up to `last`, without growing.
    pub fn reserve(&mut self, additional: usize, last: u32, rehash: impl Fn(u32) -> u64) {
        let want = (self.len + additional).max(last as usize + 2);
        if want > self.capacity() {
            self.grow(want, rehash);
        }
    }

    /// Starts loading the slot where the probe for a key of hash `hash` begins.
    #[inline]
    pub fn prefetch_slot(&self, hash: u64) {
        if !self.slots.is_empty() {
            prefetch(&self.slots[self.home(hash)]);
        }
    }

    /// The index that a key of hash `hash` most likely has: the first of its probe's slots (of
    /// the first four) with the same hash bits. For prefetching what a lookup will read: the
    /// answer may be wrong, or missing when the key is there.
    #[inline]
    pub fn likely(&self, hash: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let (tag, mask) = (self.tag(hash), self.slots.len() - 1);
        let mut at = self.home(hash);
        for _ in 0..4 {
            let e = self.slots[at];
            if e == 0 {
                return None;
            }
            if self.tag_of(e) == tag {
                return Some(self.index_at(at));
            }
            at = (at + 1) & mask;
        }
        None
    }

    /// Keys the table holds before it grows.
    fn capacity(&self) -> usize {
        self.slots.len() / 4 * 3
    }

    fn home(&self, hash: u64) -> usize {
        hash as usize & (self.slots.len() - 1)
    }

    /// The hash bits that slot value `e` keeps above its index.
    fn tag_of(&self, e: u32) -> u32 {
        (u64::from(e) >> self.id_bits) as u32
    }

    /// The hash bits a slot keeps above its index: the hash's top `32 - id_bits`.
    fn tag(&self, hash: u64) -> u32 {
        match self.id_bits {
            32.. => 0,
            bits => (hash >> (32 + bits)) as u32,
        }
    }

    fn slot_value(&self, hash: u64, index: u32) -> u32 {
        ((u64::from(self.tag(hash)) << self.id_bits) | (u64::from(index) + 1)) as u32
    }

    fn index_at(&self, at: usize) -> u32 {
        ((u64::from(self.slots[at]) & ((1u64 << self.id_bits) - 1)) - 1) as u32
    }

    /// The table must grow before it takes `index` as one more key.
    #[inline]
    fn needs_room(&self, index: u32) -> bool {
        self.len + 1 > self.capacity() || u64::from(index) + 1 >= 1u64 << self.id_bits
    }

    /// How many keys to grow for before taking `index`.
    fn wanted(&self, index: u32) -> usize {
        (self.len + 1).max(index as usize + 2).max(self.capacity() * 2)
    }

    /// Regrows the table to hold `keys` keys (and indexes below that), every key placed again.
    #[cold]
    fn grow(&mut self, keys: usize, rehash: impl Fn(u32) -> u64) {
        let slots = (keys.max(12) * 4).div_ceil(3).next_power_of_two();
        let old = std::mem::replace(self, IdTable { slots: vec![0; slots], id_bits: slots.trailing_zeros(), len: 0 });
        for at in 0..old.slots.len() {
            if old.slots[at] != 0 {
                let index = old.index_at(at);
                let hash = rehash(index);
                let mut to = self.home(hash);
                while self.slots[to] != 0 {
                    to = (to + 1) & (slots - 1);
                }
                self.slots[to] = self.slot_value(hash, index);
                self.len += 1;
            }
        }
    }

    /// The slot holding the key looked for, or the empty one where it would go.
    #[inline]
    fn probe(&self, hash: u64, mut eq: impl FnMut(u32) -> bool) -> Probe {
        if self.slots.is_empty() {
            return Probe::Vacant(0);
        }
        let (tag, mask) = (self.tag(hash), self.slots.len() - 1);
        let mut at = self.home(hash);
        loop {
            let e = self.slots[at];
            if e == 0 {
                return Probe::Vacant(at);
            }
            if self.tag_of(e) == tag && eq(self.index_at(at)) {
                return Probe::Found(at);
            }
            at = (at + 1) & mask;
        }
    }
}
