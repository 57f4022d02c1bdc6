//! The option table's shape: each option is declared once, as an `Opt` (its names, what it does,
//! and whether it takes a value, which follows from what it does). The parser, `--help` and
//! `takes_separate_value` all read the tables (`inputs::OPTIONS`, `outputs::OPTIONS`,
//! `process::OPTIONS`, through `args::all`), so that adding an option is adding one entry.
use super::config::Config;
use super::kinds::InputState;
use super::ArgParser;
use crate::diag::Result;

/// What an option does with what follows its name.
pub(super) enum Apply {
    /// A flag that only sets the configuration.
    Set(fn(&mut Config)),
    /// A flag that changes the per-input state the next inputs are read with.
    State(fn(&mut InputState)),
    /// A flag that needs both the parser's state and the configuration, or may fail.
    Flag(fn(&mut ArgParser) -> Result<()>),
    /// An option with a value (`-o FILE`, `--opt=VALUE`, `--opt VALUE`, `-oFILE` for one letter),
    /// taken as it is.
    Value(fn(&mut Config, String)),
    /// An option with a value that is checked, or that needs the name it was spelled with (its
    /// second argument) or the parser's state.
    Parse(fn(&mut ArgParser, &str, String) -> Result<()>),
    /// A flag that may carry a value after `=` (`--build-id`, `--build-id=md5`), never a separate
    /// one.
    Optional(fn(&mut Config, Option<String>) -> Result<()>),
}

/// How an option takes its value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Arity {
    Flag,
    /// The value follows: attached with `=`, glued to a one-letter name, or the next argument.
    Value,
    /// Only with `=`.
    OptionalValue,
}

pub(super) struct Opt {
    /// Every spelling, without dashes (each accepted with one dash or two).
    pub names: &'static [&'static str],
    pub apply: Apply,
    /// Accepted though it has no effect on the outputs rivet writes: how `--help` (and the
    /// README's table) shows it, and why it has none.
    pub ignored: Option<(&'static str, &'static str)>,
}

impl Opt {
    pub(super) fn arity(&self) -> Arity {
        match self.apply {
            Apply::Set(_) | Apply::State(_) | Apply::Flag(_) => Arity::Flag,
            Apply::Value(_) | Apply::Parse(..) => Arity::Value,
            Apply::Optional(_) => Arity::OptionalValue,
        }
    }
}

pub(super) const fn opt(names: &'static [&'static str], apply: Apply) -> Opt {
    Opt { names, apply, ignored: None }
}

/// An option accepted with no effect on rivet's outputs; `shown` is how `--help` names it, `why`
/// the reason.
pub(super) const fn ignored(
    names: &'static [&'static str],
    apply: Apply,
    shown: &'static str,
    why: &'static str,
) -> Opt {
    Opt { names, apply, ignored: Some((shown, why)) }
}
