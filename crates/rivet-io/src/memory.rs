//! How the process's allocator hands out memory. A link allocates and frees many buffers of a few
//! megabytes (each object's sections, the symbol table, the write jobs, the dynamic relocations),
//! most of them on the thread pool. glibc's defaults suit long-running programs: an allocation of
//! 128 KiB or more (raised as such blocks are freed) is a fresh `mmap`, so every one is zero-filled
//! by the kernel page by page and unmapped again when freed, and each thread's heap grows a page
//! at a time with an `mprotect` call. A linker lives for a fraction of a second, so it keeps what
//! it frees for its next buffers and grows its heaps in large steps.

/// Blocks smaller than this come from the heaps (and are reused once freed) rather than from a
/// `mmap` of their own. Larger ones are mapped and given back when freed: kept in a heap, a large
/// block freed by one of the pool's threads was reused only by the allocations of the thread whose
/// heap it came from, so the memory held depended on which thread freed what (cxx-templates'
/// RssAnon peak: 94-104 MB between runs of one binary with 32 MiB here, 90-97 with 2 MiB; 1 and
/// 4 MiB did no better). Wall time and CPU were within the runs' noise on seven corpus jobs
/// (`bench/abbin.py` and rusage, medians of 11-15 rounds); minor faults up to 8% more on cxx-big.
pub(crate) const MMAP_THRESHOLD: i32 = 2 << 20;
/// How much more than asked a heap grows by each time it grows (address space: untouched pages
/// cost nothing).
pub(crate) const TOP_PAD: i32 = 32 << 20;
/// Freed memory at a heap's top is kept, not given back, below this.
const TRIM_THRESHOLD: i32 = 1 << 30;

/// Sets the allocator up for a short-lived, allocation-heavy process (glibc's `mallopt`; other C
/// libraries keep their defaults), as `policy::choose_allocator` decides: memory kept for reuse is
/// never given back. Returns whether glibc took every setting.
pub fn tune_allocator() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        [(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD), (libc::M_TOP_PAD, TOP_PAD), (libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD)]
            .into_iter()
            // SAFETY: mallopt only changes glibc's allocation parameters (under its own lock);
            // it is given documented parameters and values in their ranges, and no memory is
            // read or written through pointers.
            .all(|(param, value)| unsafe { libc::mallopt(param, value) } == 1)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

#[cfg(test)]
mod tests {
    /// glibc takes every setting (mallopt returns 1 for each it takes, 0 for one it refuses).
    #[test]
    fn glibc_takes_the_settings() {
        assert!(super::tune_allocator(), "mallopt refused a setting");
    }
}
