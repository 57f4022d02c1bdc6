//! Read-ahead for mapped inputs. The linker names byte ranges as soon as it knows it will read
//! them; a background thread asks the kernel to start reading them (`posix_fadvise(WILLNEED)`), so
//! disk reads overlap parsing instead of happening one page fault at a time.
//!
//! Measured on this kind of machine (docs/ARCHITECTURE.md, I/O facts): cold reads of 2 GB over 2000 files took 3.5–7.7 s
//! touching pages in order, 1.7–2.1 s with WILLNEED issued from a background thread, 2.4–3.6 s with
//! readahead(2) from a background thread, and 3.2–3.6 s with all WILLNEEDs issued from the main thread
//! (the madvise calls themselves block): hence a thread of its own. Here, though, madvise and
//! mincore contend with the linker's own mmap calls and page faults for the mmap lock (warm synth-1:
//! 0.092 s without prefetch, 0.163 s with madvise prefetch, bench/run.py medians for 44b9d1b), so the
//! hint goes through the file descriptor instead, which touches only the page cache.
use crate::input::InputFile;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// What the prefetcher did, for the I/O report.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrefetchStats {
    pub requests: u64,
    pub bytes_advised: u64,
}

struct Request {
    file: Arc<InputFile>,
    offset: u64,
    len: u64,
}

pub struct Prefetcher {
    tx: std::sync::Mutex<Option<Sender<Vec<Request>>>>,
    /// Requests wait here until `flush`: one wake-up of the worker per batch, not per file (waking
    /// it for each of 1000 small objects made opening them 13 ms -> 46-59 ms on 2 cores: synth-1's
    /// open inputs phase, warm, measured for 44b9d1b).
    pending: std::sync::Mutex<Vec<Request>>,
    worker: std::sync::Mutex<Option<JoinHandle<()>>>,
    stats: Arc<[AtomicU64; 2]>,
    /// Requests stop once this many bytes were asked for.
    budget: u64,
    requested: AtomicU64,
    /// Dropping waits for the thread to end (`join_on_drop`).
    join_on_drop: bool,
}

impl Prefetcher {
    /// Prepares a prefetcher; at most `budget` bytes will be requested. The background thread
    /// starts at the first `flush`: while the linker opens and maps its inputs the process stays
    /// single-threaded (an idle second thread alone made opening 1000 small objects 13 ms -> 37 ms:
    /// synth-1's open inputs phase, warm, measured for 44b9d1b).
    pub fn start(budget: u64) -> Prefetcher {
        Prefetcher {
            tx: Default::default(),
            pending: Default::default(),
            worker: Default::default(),
            stats: Arc::new(Default::default()),
            budget,
            requested: AtomicU64::new(0),
            join_on_drop: false,
        }
    }

    /// Dropping the prefetcher waits for its thread to drain its queue and end, for a caller that
    /// keeps running after the link (the fuzz targets): no thread of the link outlives it, holding
    /// input mappings and its thread-local state (LeakSanitizer reported that state as leaked
    /// when a fuzzed link returned before the thread had ended).
    pub fn join_on_drop(&mut self) {
        self.join_on_drop = true;
    }

    fn sender(&self) -> Option<Sender<Vec<Request>>> {
        let mut tx = self.tx.lock().unwrap();
        if tx.is_none() {
            let (sender, rx) = channel::<Vec<Request>>();
            let s = self.stats.clone();
            let worker = std::thread::Builder::new().name("rivet-prefetch".into()).spawn(move || {
                for batch in rx {
                    for r in batch {
                        s[0].fetch_add(1, Ordering::Relaxed);
                        r.file.advise_willneed(r.offset, r.len);
                        s[1].fetch_add(r.len, Ordering::Relaxed);
                    }
                }
            });
            if let Ok(w) = worker {
                *self.worker.lock().unwrap() = Some(w);
                *tx = Some(sender);
            }
        }
        tx.clone()
    }

    /// Asks for `len` bytes at `offset` of `file` to be read ahead (whole file: `0, file.size()`).
    pub fn request(&self, file: &Arc<InputFile>, offset: u64, len: u64) {
        if !file.is_mapped() || len == 0 {
            return; // read() inputs are already in memory
        }
        if self.requested.fetch_add(len, Ordering::Relaxed).saturating_add(len) > self.budget {
            return;
        }
        self.pending.lock().unwrap().push(Request { file: file.clone(), offset, len });
    }

    /// Hands the requests collected so far to the background thread.
    pub fn flush(&self) {
        let batch = std::mem::take(&mut *self.pending.lock().unwrap());
        if batch.is_empty() {
            return;
        }
        if let Some(tx) = self.sender() {
            let _ = tx.send(batch);
        }
    }

    pub fn stats(&self) -> PrefetchStats {
        PrefetchStats {
            requests: self.stats[0].load(Ordering::Relaxed),
            bytes_advised: self.stats[1].load(Ordering::Relaxed),
        }
    }

    /// Stops accepting requests and waits for the queue to drain (for tests and reports; the
    /// linker itself never waits for read-ahead).
    pub fn finish(self) -> PrefetchStats {
        self.flush();
        self.tx.lock().unwrap().take();
        if let Some(w) = self.worker.lock().unwrap().take() {
            let _ = w.join();
        }
        self.stats()
    }
}

impl Drop for Prefetcher {
    fn drop(&mut self) {
        // Dropping the sender ends the thread once its queue is empty; nobody waits for it,
        // unless asked to.
        self.tx.lock().unwrap().take();
        if self.join_on_drop {
            if let Some(w) = self.worker.lock().unwrap().take() {
                let _ = w.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advises_and_respects_the_budget() {
        let dir = std::env::temp_dir().join(format!("rivet-prefetch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        std::fs::write(&path, vec![3u8; 256 << 10]).unwrap();
        let f = Arc::new(InputFile::open(&path).unwrap());
        let p = Prefetcher::start(300 << 10);
        p.request(&f, 0, 256 << 10);
        p.request(&f, 0, 256 << 10); // over budget: dropped
        let stats = p.finish();
        assert_eq!(stats.requests, 1);
        assert_eq!(stats.bytes_advised, 256 << 10);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn join_on_drop_leaves_no_thread_behind() {
        let dir = std::env::temp_dir().join(format!("rivet-prefetch-join-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        std::fs::write(&path, vec![3u8; 64 << 10]).unwrap();
        let f = Arc::new(InputFile::open(&path).unwrap());
        let mut p = Prefetcher::start(1 << 20);
        p.join_on_drop();
        p.request(&f, 0, 64 << 10);
        p.flush();
        drop(p);
        // The thread has ended: the request it was handed, and with it the file, are released.
        assert_eq!(Arc::strong_count(&f), 1, "the prefetch thread still holds the input");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
