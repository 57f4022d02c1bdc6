//! Diagnostics: errors and warnings are collected from every stage (and thread), printed as
//! `rivet: error: …` like lld's, and counted into the exit code. A stage that finds errors lets the
//! pipeline stop before anything is written, so a failed link never touches the output.
//!
//! Every fallible function returns `Result<T>` with the one `Error` type (a message and its
//! context: `.context()` names the file, member or section, `fatal!`, `bail!` and `ensure!` build
//! one). A pass that finds many errors (input loading, resolution) returns them all
//! (`Result<T, Vec<Error>>`); `Diag::report` prints them at the pass boundary. This module is a
//! leaf: it imports no stage.
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

static COLOR: AtomicBool = AtomicBool::new(false);
static DEMANGLE: AtomicBool = AtomicBool::new(true);

/// `--demangle` (the default) / `--no-demangle`: whether `symbol_name` demangles.
pub fn set_demangle(on: bool) {
    DEMANGLE.store(on, Ordering::Relaxed);
}

/// A symbol's name as messages print it: a C++ (Itanium) or Rust (v0) name demangled, as lld
/// prints it (`foo(int, int)`, `<core::slice::Iter<u8>>::len`), unless `--no-demangle`; a version suffix (`@V`, `@@V`) follows unchanged.
/// A name that does not demangle is printed as it is.
pub fn symbol_name(name: &[u8]) -> String {
    let (base, version) = match name.iter().position(|&b| b == b'@') {
        Some(at) => name.split_at(at),
        None => (name, &[][..]),
    };
    let plain = || String::from_utf8_lossy(name).into_owned();
    if !DEMANGLE.load(Ordering::Relaxed) {
        return plain();
    }
    // Rust's own mangling (v0, `_R`), printed without crate hashes as lld prints it.
    if base.starts_with(b"_R") {
        return match std::str::from_utf8(base).ok().and_then(|b| rustc_demangle::try_demangle(b).ok()) {
            Some(d) => format!("{d:#}{}", String::from_utf8_lossy(version)),
            None => plain(),
        };
    }
    if !base.starts_with(b"_Z") {
        return plain();
    }
    match demangle_itanium(base) {
        Some(d) => format!("{}{}", llvm_spelling(&d), String::from_utf8_lossy(version)),
        None => plain(),
    }
}

/// A name demangled in GNU's spelling (cpp_demangle's, c++filt's) rewritten in LLVM's, which lld
/// prints: `>>` closes nested templates, `operator<<<T>` has no space, literals are `1l`, a clone is `f() (.cold)` rather than `f() [clone .cold]`,
/// a lambda `'lambda'()`, `'lambda0'(int)` rather than `{lambda()#1}`, `{lambda(int)#2}`. (An
/// unnamed type stays `{unnamed type#N}`: cpp_demangle numbers `Ut_` and `Ut0_` alike.)
fn llvm_spelling(gnu: &str) -> String {
    let mut out = String::with_capacity(gnu.len());
    let mut rest = gnu;
    // `#N` as LLVM numbers them: the first has no number, the second 0, and so on.
    let number = |n: &str| match n.parse::<u64>() {
        Ok(1) | Err(_) => String::new(),
        Ok(n) => (n - 2).to_string(),
    };
    while let Some(at) = rest.find(['{', '[', '>']) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("{lambda(") {
            // The parameters may hold parentheses of their own.
            let mut depth = 1;
            let close = after.char_indices().find(|&(_, c)| {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                depth == 0
            });
            if let Some((close, _)) = close {
                let tail = &after[close + 1..];
                if let Some((n, more)) = tail.strip_prefix('#').and_then(|t| t.split_once('}')) {
                    out.push_str(&format!("'lambda{}'({})", number(n), llvm_spelling(&after[..close])));
                    rest = more;
                    continue;
                }
            }
        } else if let Some((suffix, more)) = rest.strip_prefix("[clone ").and_then(|t| t.split_once(']')) {
            out.push_str(&format!("({suffix})"));
            rest = more;
            continue;
        } else if rest.starts_with("> >") {
            out.push('>');
            rest = &rest[2..];
            continue;
        }
        out.push_str(&rest[..1]);
        rest = &rest[1..];
    }
    out.push_str(rest);
    // No space between an operator's name and its template arguments: `operator<<<char>`.
    let mut out = out.replace("operator<< <", "operator<<<").replace("operator< <", "operator<<");
    // Integer literals with their type as a suffix: `ratio<1l, 1000l>`, not `ratio<(long)1, ...>`.
    for (cast, suffix) in [
        ("(unsigned long long)", "ull"),
        ("(long long)", "ll"),
        ("(unsigned long)", "ul"),
        ("(unsigned int)", "u"),
        ("(long)", "l"),
    ] {
        while let Some(at) = out.find(cast) {
            let number = &out[at + cast.len()..];
            let digits = number.char_indices().take_while(|&(i, c)| c.is_ascii_digit() || (i == 0 && c == '-')).count();
            if digits == 0 || number.starts_with("-") && digits == 1 {
                break;
            }
            let literal = format!("{}{suffix}", &number[..digits]);
            out.replace_range(at..at + cast.len() + digits, &literal);
        }
    }
    out
}

/// An Itanium name demangled in GNU's spelling (c++filt's, which `extern "C++"` patterns of
/// version scripts are written in): cpp_demangle writes a few special names its own way
/// (`{vtable(K)}`, `{virtual override thunk(...)}`), which are put back as `vtable for K`,
/// `VTT for K` and `non-virtual thunk to K::f()`. Messages use `llvm_spelling` of it.
pub fn demangle_itanium(name: &[u8]) -> Option<String> {
    let thunk = |kind: &str, offsets: &[u8], rest: &[u8]| -> Option<String> {
        // Each call offset: `h` NUMBER `_`, or `v` NUMBER `_` NUMBER `_` (a number may start with `n`).
        let mut rest = rest;
        for &kind in offsets {
            let numbers = match kind {
                b'h' => 1,
                b'v' => 2,
                _ => match rest.first()? {
                    b'h' => {
                        rest = &rest[1..];
                        1
                    }
                    b'v' => {
                        rest = &rest[1..];
                        2
                    }
                    _ => return None,
                },
            };
            for _ in 0..numbers {
                let digits = rest.iter().position(|&b| b == b'_')?;
                let number = rest[..digits].strip_prefix(b"n").unwrap_or(&rest[..digits]);
                if number.is_empty() || !number.iter().all(u8::is_ascii_digit) {
                    return None;
                }
                rest = &rest[digits + 1..];
            }
        }
        let target = demangle_itanium(&[b"_Z", rest].concat())?;
        Some(format!("{kind}{target}"))
    };
    if let Some(rest) = name.strip_prefix(b"_ZTh") {
        return thunk("non-virtual thunk to ", b"h", rest);
    }
    if let Some(rest) = name.strip_prefix(b"_ZTv") {
        return thunk("virtual thunk to ", b"v", rest);
    }
    if let Some(rest) = name.strip_prefix(b"_ZTc") {
        return thunk("covariant return thunk to ", b"??", rest);
    }
    let d = cpp_demangle::Symbol::new(name).ok()?.demangle().ok()?;
    for (theirs, ours) in [("{vtable(", "vtable for "), ("{vtt(", "VTT for ")] {
        if let Some(inner) = d.strip_prefix(theirs).and_then(|r| r.strip_suffix(")}")) {
            return Some(format!("{ours}{inner}"));
        }
    }
    Some(d)
}

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

/// Prints a diagnostic, after an empty line when the one before had several lines (lld's
/// separator: a message with `>>>` lines stands apart from the next).
fn print_separated(last_multiline: &mut bool, prefix: &str, msg: &str) {
    let sep = if *last_multiline { "\n" } else { "" };
    eprintln!("{sep}{prefix}{msg}");
    *last_multiline = msg.contains('\n');
}

/// rivet's one error type: a message and the context it was found in (a file, an archive member,
/// a section, an option), innermost first. It prints as the context, outermost first, then the
/// message, joined by ": " (`lib.a(x.o): section .text: alignment 3 is not a power of two`). A
/// function that fails returns one (`?` adds no text; `.context()` adds a frame); a pass that finds
/// several at once (input loading, resolution) returns them all, and `Diag::report` prints each.
pub struct Error(Box<Frames>);

struct Frames {
    message: String,
    /// Context frames, innermost (added first) to outermost.
    context: Vec<String>,
}

impl Error {
    pub fn new(message: impl Into<String>) -> Error {
        Error(Box::new(Frames { message: message.into(), context: Vec::new() }))
    }

    /// Adds a frame around what the error says so far.
    pub fn context(mut self, frame: impl fmt::Display) -> Error {
        self.0.context.push(frame.to_string());
        self
    }

    /// What went wrong, without its context.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The outermost context frame, if any (what a pass's caller named last).
    pub fn outermost(&self) -> Option<&str> {
        self.0.context.last().map(String::as_str)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for frame in self.0.context.iter().rev() {
            write!(f, "{frame}: ")?;
        }
        f.write_str(&self.0.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_string())
    }
}

impl std::error::Error for Error {}

impl From<String> for Error {
    fn from(message: String) -> Error {
        Error::new(message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Error {
        Error::new(message)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::new(e.to_string())
    }
}

impl From<object::read::Error> for Error {
    fn from(e: object::read::Error) -> Error {
        Error::new(e.to_string())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Context for a failure: `.context(frame)` on a `Result` whose error converts into `Error` adds
/// a frame; on an `Option`, `None` becomes an error whose message is `frame`.
pub trait Context<T> {
    fn context(self, frame: impl fmt::Display) -> Result<T>;
    /// `context`, with the frame built only on failure.
    fn with_context<D: fmt::Display>(self, frame: impl FnOnce() -> D) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, frame: impl fmt::Display) -> Result<T> {
        self.map_err(|e| e.into().context(frame))
    }

    fn with_context<D: fmt::Display>(self, frame: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| e.into().context(frame()))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, message: impl fmt::Display) -> Result<T> {
        self.ok_or_else(|| Error::new(message.to_string()))
    }

    fn with_context<D: fmt::Display>(self, message: impl FnOnce() -> D) -> Result<T> {
        self.ok_or_else(|| Error::new(message().to_string()))
    }
}

/// Builds an `Error` with `format!` syntax.
#[macro_export]
macro_rules! fatal {
    ($($arg:tt)*) => { $crate::diag::Error::new(format!($($arg)*)) };
}

/// Returns an `Error` built with `format!` syntax.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => { return ::core::result::Result::Err($crate::fatal!($($arg)*)) };
}

/// Returns an `Error` built with `format!` syntax unless the condition holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            $crate::bail!($($arg)*);
        }
    };
}

/// Collected diagnostics. Errors are printed as they arrive (a long link shows progress) and counted.
pub struct Diag {
    errors: AtomicUsize,
    warnings: AtomicUsize,
    fatal_warnings: bool,
    /// Serialises printing so lines from different threads do not interleave; holds whether the
    /// last message had several lines (lld then leaves an empty line before the next one).
    out: Mutex<bool>,
    /// Stop printing after this many errors (`--error-limit`, lld's default 20; None: no limit).
    error_limit: Option<usize>,
    /// Count without printing (in-process callers such as the fuzz targets).
    silent: bool,
    /// `-w` / `--no-warnings`: warnings are dropped (neither printed, counted nor made errors).
    no_warnings: bool,
}

impl Diag {
    pub fn new(fatal_warnings: bool) -> Diag {
        Diag {
            errors: AtomicUsize::new(0),
            warnings: AtomicUsize::new(0),
            fatal_warnings,
            out: Mutex::new(false),
            error_limit: Some(20),
            silent: false,
            no_warnings: false,
        }
    }

    /// `-w` / `--no-warnings`: drop every warning, even under `--fatal-warnings`.
    pub fn without_warnings(self, on: bool) -> Diag {
        Diag { no_warnings: on, ..self }
    }

    /// `--error-limit=N`: print at most `n` errors (0: all of them).
    pub fn with_error_limit(self, n: usize) -> Diag {
        Diag { error_limit: (n != 0).then_some(n), ..self }
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
        let mut last = self.out.lock().unwrap_or_else(|e| e.into_inner());
        match self.error_limit {
            Some(limit) if n > limit => {}
            Some(limit) if n == limit => {
                let stop = "too many errors emitted, stopping now (use --error-limit=0 to see all errors)";
                print_separated(&mut last, &prefix("error"), stop);
            }
            _ => print_separated(&mut last, &prefix("error"), &msg.to_string()),
        }
    }

    pub fn warn(&self, msg: impl fmt::Display) {
        if self.no_warnings {
            return;
        }
        if self.fatal_warnings {
            return self.error(msg);
        }
        self.warnings.fetch_add(1, Ordering::Relaxed);
        if self.silent {
            return;
        }
        let mut last = self.out.lock().unwrap_or_else(|e| e.into_inner());
        print_separated(&mut last, &prefix("warning"), &msg.to_string());
    }

    /// Reports each of a pass's errors (input loading and resolution return them all at once).
    pub fn report<E: fmt::Display>(&self, errors: impl IntoIterator<Item = E>) {
        for e in errors {
            self.error(e);
        }
    }

    /// Reports a pass's errors and gives the error that stops the link.
    pub fn fail<E: fmt::Display>(&self, errors: impl IntoIterator<Item = E>) -> Error {
        self.report(errors);
        self.check().err().unwrap_or_else(|| Error::new("link failed"))
    }

    /// `--error-limit` errors and the line that says so were printed: more errors would only be
    /// counted, so a pass may stop building their messages (lld stops the link there).
    pub fn limit_reached(&self) -> bool {
        self.error_limit.is_some_and(|limit| self.error_count() > limit)
    }

    pub fn error_count(&self) -> usize {
        self.errors.load(Ordering::Relaxed)
    }

    /// Warnings given so far (printed or not; none under `-w`).
    pub fn warning_count(&self) -> usize {
        self.warnings.load(Ordering::Relaxed)
    }

    /// Turns collected errors into a stop: the caller returns before writing anything.
    pub fn check(&self) -> Result<()> {
        match self.error_count() {
            0 => Ok(()),
            n => bail!("{n} error{} found; no output written", if n == 1 { "" } else { "s" }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_names_are_demangled_like_lld() {
        assert_eq!(symbol_name(b"_Z3fooii"), "foo(int, int)");
        assert_eq!(symbol_name(b"_ZN2ns7versionEv@@V1"), "ns::version()@@V1");
        // Not mangled, or not a valid mangling: as it is.
        assert_eq!(symbol_name(b"Pi"), "Pi");
        // Special names as LLVM's demangler (and so lld) spells them.
        assert_eq!(symbol_name(b"_ZTV1K"), "vtable for K");
        assert_eq!(symbol_name(b"_ZTTN2ns1KE"), "VTT for ns::K");
        assert_eq!(symbol_name(b"_ZTI1K"), "typeinfo for K");
        assert_eq!(symbol_name(b"_ZThn8_N1C1fEv"), "non-virtual thunk to C::f()");
        assert_eq!(symbol_name(b"_ZTv0_n24_N1C1fEv"), "virtual thunk to C::f()");
        assert_eq!(symbol_name(b"_ZTch0_h16_N1C1gEv"), "covariant return thunk to C::g()");
        assert_eq!(symbol_name(b"_ZThn8_"), "_ZThn8_");
        // LLVM's spelling (lld's), where it differs from GNU's.
        assert_eq!(symbol_name(b"_ZNSt6vectorIS_IiSaIiEESaIS1_EE5clearEv"), "std::vector<std::vector<int, std::allocator<int>>, std::allocator<std::vector<int, std::allocator<int>>>>::clear()");
        assert_eq!(
            symbol_name(b"_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc"),
            "std::basic_ostream<char, std::char_traits<char>>& std::operator<<<std::char_traits<char>>(std::basic_ostream<char, std::char_traits<char>>&, char const*)"
        );
        assert_eq!(
            symbol_name(b"_ZNSt6chrono8durationIlSt5ratioILl1ELl1000EEEC1Ev"),
            "std::chrono::duration<long, std::ratio<1l, 1000l>>::duration()"
        );
        assert_eq!(symbol_name(b"_Z1fILm18446744073709551615EEvv"), "void f<18446744073709551615ul>()");
        assert_eq!(symbol_name(b"_Z4callPKcPFivE.cold"), "call(char const*, int (*)()) (.cold)");
        assert_eq!(symbol_name(b"_ZZ4mainENKUlvE_clEv"), "main::'lambda'()::operator()() const");
        assert_eq!(symbol_name(b"_ZZ4mainENKUliE0_clEi"), "main::'lambda0'(int)::operator()(int) const");
        assert_eq!(demangle_itanium(b"_ZNSt6vectorIS_IiSaIiEESaIS1_EE5clearEv").unwrap(), "std::vector<std::vector<int, std::allocator<int> >, std::allocator<std::vector<int, std::allocator<int> > > >::clear()");
        assert_eq!(symbol_name(b"_Zunknown"), "_Zunknown");
        // Rust v0 names (mold's demangle-rust case), without crate disambiguators.
        assert_eq!(
            symbol_name(
                b"_RNCINkXs25_NgCsbmNqQUJIY6D_4core5sliceINyB9_4IterhENuNgNoBb_4iter8iterator8Iterator9rpositionNCNgNpB9_6memchr7memrchrs_0E0Bb_"
            ),
            "<core::slice::Iter<u8> as core::iter::iterator::Iterator>::rposition::<core::slice::memchr::memrchr::{closure#1}>::{closure#0}"
        );
        assert_eq!(symbol_name(b"_RNvCs1234_7mycrate3foo@V2"), "mycrate::foo@V2");
        assert_eq!(symbol_name(b"_Rbogus"), "_Rbogus");
    }

    fn open(path: &str) -> Result<String> {
        Ok(std::fs::read_to_string(path)?)
    }

    fn parse_number(text: &str) -> Result<u32> {
        text.parse::<u32>().map_err(|e| e.to_string())?;
        ensure!(text != "0", "zero is not allowed here");
        if text.len() > 3 {
            bail!("'{text}' has {} digits, at most 3", text.len());
        }
        Ok(text.parse().unwrap())
    }

    #[test]
    fn context_prints_outermost_first() {
        let e: Result<()> = Err(fatal!("bad header at offset {}", 8));
        let e = e.context("member x.o").with_context(|| format!("lib{}.a", "foo")).unwrap_err();
        assert_eq!(e.to_string(), "libfoo.a: member x.o: bad header at offset 8");
        assert_eq!(e.message(), "bad header at offset 8");
        assert_eq!(e.outermost(), Some("libfoo.a"));
        assert_eq!(format!("{e:?}"), "\"libfoo.a: member x.o: bad header at offset 8\"");
        let plain = Error::new("no context");
        assert_eq!((plain.to_string(), plain.outermost()), ("no context".to_string(), None));
        // Built by hand or framed by `context`, the same text.
        assert_eq!(Error::new("e").context("b").context("a").to_string(), format!("{}: {}: {}", "a", "b", "e"));
    }

    #[test]
    fn bail_and_ensure_return_formatted_errors() {
        assert_eq!(parse_number("42").unwrap(), 42);
        assert_eq!(parse_number("0").unwrap_err().to_string(), "zero is not allowed here");
        assert_eq!(parse_number("1234").unwrap_err().to_string(), "'1234' has 4 digits, at most 3");
        // A String error converts through `?`.
        assert_eq!(parse_number("x").unwrap_err().to_string(), "invalid digit found in string");
    }

    #[test]
    fn question_mark_and_context_convert_strings_and_io_errors() {
        let io = open("/nonexistent/rivet-diag-test").unwrap_err();
        let expected = std::fs::read_to_string("/nonexistent/rivet-diag-test").unwrap_err().to_string();
        assert_eq!(io.to_string(), expected);
        let framed = std::fs::read("/nonexistent/x").context("cannot read x").unwrap_err();
        assert_eq!(framed.to_string(), format!("cannot read x: {expected}"));
        let s = Err::<(), _>(String::from("plain text"));
        assert_eq!(s.context("a.o").unwrap_err().to_string(), "a.o: plain text");
        let r: std::result::Result<(), &str> = Err("static text");
        assert_eq!(r.with_context(|| "b.o").unwrap_err().to_string(), "b.o: static text");
    }

    #[test]
    fn option_context_is_the_message() {
        assert_eq!(Some(3).context("missing").unwrap(), 3);
        let e = None::<u8>.context("symbol table is truncated").unwrap_err();
        assert_eq!((e.message(), e.outermost()), ("symbol table is truncated", None));
        let e = None::<u8>.with_context(|| format!("member {} is absent", 2)).context("lib.a").unwrap_err();
        assert_eq!(e.to_string(), "lib.a: member 2 is absent");
    }

    #[test]
    fn reported_errors_are_counted() {
        let diag = Diag::quiet();
        assert!(diag.check().is_ok());
        diag.report(Vec::<Error>::new());
        assert_eq!(diag.error_count(), 0);
        diag.report(vec![Error::new("one"), fatal!("two").context("a.o")]);
        diag.error("three");
        assert_eq!(diag.error_count(), 3);
        assert_eq!(diag.check().unwrap_err().to_string(), "3 errors found; no output written");
        // A pass's errors stop the link with the count; warnings are not errors.
        let diag = Diag::quiet();
        diag.warn("only a warning");
        assert!(diag.check().is_ok());
        let stop = diag.fail(vec!["x".to_string()]);
        assert_eq!((stop.to_string(), diag.error_count()), ("1 error found; no output written".to_string(), 1));
        // --fatal-warnings: a warning counts as an error.
        let strict = Diag { silent: true, ..Diag::new(true) };
        strict.warn("now an error");
        assert_eq!(strict.error_count(), 1);
        // --error-limit=0 means no limit.
        assert_eq!(Diag::quiet().with_error_limit(0).error_limit, None);
        assert_eq!(Diag::quiet().with_error_limit(3).error_limit, Some(3));
        let limited = Diag::quiet().with_error_limit(2);
        for reached in [false, false, true] {
            limited.error("e");
            assert_eq!(limited.limit_reached(), reached);
        }
        // Nothing reported but the pass failed: still an error that stops the link.
        assert_eq!(Diag::quiet().fail(Vec::<Error>::new()).to_string(), "link failed");
    }
}
