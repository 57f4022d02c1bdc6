//! Phase timers. Every pipeline stage runs inside `Timer::phase`, so the `--print-timing` table
//! and the `--time-trace` Chrome trace cover the whole link without extra bookkeeping.
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct Span {
    pub name: String,
    /// Nesting depth: 0 for pipeline phases, 1 for their parts.
    pub depth: usize,
    pub start: Duration,
    pub duration: Duration,
    /// CPU time (user + system, all threads) spent during a pipeline phase, which against
    /// `duration` says how parallel the phase was; None for spans recorded from elsewhere.
    pub cpu: Option<Duration>,
}

/// User + system time of the whole process so far (getrusage).
fn process_cpu() -> Duration {
    // SAFETY: getrusage fills the zeroed struct; RUSAGE_SELF is always valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

pub struct Timer {
    origin: Instant,
    spans: Mutex<Vec<Span>>,
    depth: Mutex<usize>,
}

impl Default for Timer {
    fn default() -> Timer {
        Timer::new()
    }
}

impl Timer {
    pub fn new() -> Timer {
        Timer { origin: Instant::now(), spans: Mutex::new(Vec::new()), depth: Mutex::new(0) }
    }

    /// Runs `f` as a named phase and records how long it took.
    pub fn phase<T>(&self, name: &str, f: impl FnOnce() -> T) -> T {
        let depth = {
            let mut d = self.depth.lock().unwrap();
            *d += 1;
            *d - 1
        };
        let cpu_start = process_cpu();
        let start = Instant::now();
        let result = f();
        let duration = start.elapsed();
        let cpu = process_cpu().saturating_sub(cpu_start);
        *self.depth.lock().unwrap() -= 1;
        let span = Span { name: name.to_string(), depth, start: start - self.origin, duration, cpu: Some(cpu) };
        self.spans.lock().unwrap().push(span);
        result
    }

    /// Records a span measured elsewhere (a file loaded on a worker thread, the commit).
    pub fn record(&self, name: &str, depth: usize, start: Duration, duration: Duration) {
        self.spans.lock().unwrap().push(Span { name: name.to_string(), depth, start, duration, cpu: None });
    }

    /// Time since the timer started (the start of a span recorded with `record`).
    pub fn origin_elapsed(&self) -> Duration {
        self.origin.elapsed()
    }

    pub fn total(&self) -> Duration {
        self.origin.elapsed()
    }

    /// The `--print-timing` table: phases in the order they started, with ms, share of total, and
    /// the CPU time of all threads during the phase (CPU / wall = the cores it kept busy).
    pub fn report(&self, total: Duration) -> String {
        let mut spans = self.spans.lock().unwrap();
        spans.sort_by_key(|s| (s.start, s.depth));
        let mut out = String::new();
        out.push_str(&format!("{:<36} {:>10} {:>7} {:>10} {:>6}\n", "phase", "ms", "%", "cpu ms", "cores"));
        let total_ms = total.as_secs_f64() * 1000.0;
        for s in spans.iter().filter(|s| s.depth <= 1) {
            let ms = s.duration.as_secs_f64() * 1000.0;
            let pct = if total_ms > 0.0 { 100.0 * ms / total_ms } else { 0.0 };
            let name = format!("{}{}", "  ".repeat(s.depth), s.name);
            out.push_str(&format!("{name:<36} {ms:>10.3} {pct:>6.1}%"));
            if let Some(cpu) = s.cpu {
                let cpu_ms = cpu.as_secs_f64() * 1000.0;
                // getrusage ticks are coarse: a phase under a millisecond says nothing about cores.
                let cores = if ms >= 1.0 { format!("{:>6.2}", cpu_ms / ms) } else { format!("{:>6}", "-") };
                out.push_str(&format!(" {cpu_ms:>10.3} {cores}"));
            }
            out.push('\n');
        }
        out.push_str(&format!("{:<36} {:>10.3} {:>6.1}%\n", "total", total_ms, 100.0));
        out
    }

    /// Writes every span as a Chrome trace ("X" complete events), viewable in Perfetto.
    pub fn write_trace(&self, path: &Path) -> std::io::Result<()> {
        let spans = self.spans.lock().unwrap();
        let mut out = String::from("{\"traceEvents\":[\n");
        for (i, s) in spans.iter().enumerate() {
            if i > 0 {
                out.push_str(",\n");
            }
            out.push_str(&format!(
                "{{\"name\":{},\"ph\":\"X\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{}}}",
                json_string(&s.name),
                s.depth + 1,
                s.start.as_micros(),
                s.duration.as_micros()
            ));
        }
        out.push_str("\n],\"displayTimeUnit\":\"ms\"}\n");
        std::fs::File::create(path)?.write_all(out.as_bytes())
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_nest_and_report() {
        let t = Timer::new();
        t.phase("outer", || t.phase("inner", || std::thread::sleep(Duration::from_millis(2))));
        let r = t.report(t.total());
        let outer = r.lines().position(|l| l.starts_with("outer")).unwrap();
        let inner = r.lines().position(|l| l.starts_with("  inner")).unwrap();
        assert!(outer < inner, "{r}");
        assert!(r.lines().last().unwrap().starts_with("total"));
        // The phase spins until this thread has used 20 ms of CPU time (however long that takes
        // on a loaded machine): its CPU column is no less than ~that.
        let thread_cpu = || {
            let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: clock_gettime fills `ts`; CLOCK_THREAD_CPUTIME_ID is always valid.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
        };
        let t = Timer::new();
        t.phase("spin", || {
            let end = thread_cpu() + Duration::from_millis(20);
            while thread_cpu() < end {
                std::hint::spin_loop();
            }
        });
        let r = t.report(t.total());
        let line = r.lines().find(|l| l.starts_with("spin")).unwrap();
        let cpu: f64 = line.split_whitespace().nth(3).unwrap().parse().unwrap();
        assert!(cpu >= 15.0, "{r}");
    }

    #[test]
    fn json_escapes() {
        assert_eq!(json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
