//! Diagnostics: errors and warnings are collected from every stage (and thread), printed as
//! `rivet: error: …` like lld's, and counted into the exit code. A stage that finds errors lets the
//! pipeline stop before anything is written, so a failed link never touches the output.
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

static COLOR: AtomicBool = AtomicBool::new(false);

/// `--color-diagnostics[=always|never|auto]`: `Some` forces colours on or off; `None` (auto, lld's
/// default) colours when stderr is a terminal.
pub fn set_color(setting: Option<bool>) {
    use std::io::IsTerminal;
    COLOR.store(setting.unwrap_or_else(|| std::io::stderr().is_terminal()), Ordering::Relaxed);
}

/// `rivet: error: ` or `rivet: warning: `, the kind in bold red or magenta when colours are on
/// (lld's scheme).
pub fn prefix(kind: &str) -> String {
    if !COLOR.load(Ordering::Relaxed) {
        return format!("rivet: {kind}: ");
    }
    let colour = if kind == "error" { "31" } else { "35" };
    format!("rivet: \x1b[0;1;{colour}m{kind}: \x1b[0m")
}

/// Prints an error that stops the link outside the collected diagnostics (bad arguments, a fatal
/// error, a report that cannot be written).
pub fn print_error(msg: impl fmt::Display) {
    eprintln!("{}{msg}", prefix("error"));
}

/// A fatal condition that stops the link at once (after the messages already collected are printed).
#[derive(Debug)]
pub struct LinkError(pub String);

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub type Result<T> = std::result::Result<T, LinkError>;

/// Builds a `LinkError` with `format!` syntax.
#[macro_export]
macro_rules! fatal {
    ($($arg:tt)*) => { $crate::diag::LinkError(format!($($arg)*)) };
}

/// Collected diagnostics. Errors are printed as they arrive (a long link shows progress) and counted.
pub struct Diag {
    errors: AtomicUsize,
    warnings: AtomicUsize,
    fatal_warnings: bool,
    /// Serialises printing so lines from different threads do not interleave.
    out: Mutex<()>,
    /// Stop printing after this many errors (lld's --error-limit default is 20).
    error_limit: usize,
    /// Count without printing (in-process callers such as the fuzz targets).
    silent: bool,
}

impl Diag {
    pub fn new(fatal_warnings: bool) -> Diag {
        Diag {
            errors: AtomicUsize::new(0),
            warnings: AtomicUsize::new(0),
            fatal_warnings,
            out: Mutex::new(()),
            error_limit: 20,
            silent: false,
        }
    }

    /// Counts errors and warnings without printing them.
    pub fn quiet() -> Diag {
        Diag { silent: true, ..Diag::new(false) }
    }

    pub fn error(&self, msg: impl fmt::Display) {
        let n = self.errors.fetch_add(1, Ordering::Relaxed);
        if self.silent {
            return;
        }
        let _guard = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if n < self.error_limit {
            eprintln!("{}{msg}", prefix("error"));
        } else if n == self.error_limit {
            eprintln!("{}too many errors emitted, stopping now", prefix("error"));
        }
    }

    pub fn warn(&self, msg: impl fmt::Display) {
        if self.fatal_warnings {
            return self.error(msg);
        }
        self.warnings.fetch_add(1, Ordering::Relaxed);
        if self.silent {
            return;
        }
        let _guard = self.out.lock().unwrap_or_else(|e| e.into_inner());
        eprintln!("{}{msg}", prefix("warning"));
    }

    pub fn error_count(&self) -> usize {
        self.errors.load(Ordering::Relaxed)
    }

    /// Turns collected errors into a stop: the caller returns before writing anything.
    pub fn check(&self) -> Result<()> {
        match self.error_count() {
            0 => Ok(()),
            n => Err(LinkError(format!("{n} error{} found; no output written", if n == 1 { "" } else { "s" }))),
        }
    }
}
