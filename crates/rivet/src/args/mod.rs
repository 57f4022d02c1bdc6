//! The GNU ld command line. Takes argv (with `@response` files expanded) and gives a `Config`: every
//! option rivet understands, in a plain structure the rest of the linker reads. Options are accepted
//! with one or two dashes and `--opt=value` / `--opt value` / `-ovalue` spellings as GNU ld accepts them.
//!
//! Each option is declared once, in a table (`inputs`, `outputs`, `process`; `-z` keywords in
//! `z`): its names, what it does, whether it takes a value. This file splits an argument into a
//! name and a value by those tables, `help` lists them.
use crate::diag::{Context, Result};
use crate::{bail, ensure, fatal};
use options::{Apply, Arity};
use std::ffi::OsString;
use std::path::PathBuf;

mod config;
mod help;
mod inputs;
mod kinds;
mod options;
mod outputs;
mod process;
#[cfg(test)]
mod tests;
mod validate;
mod values;
mod z;

pub use crate::expr::parse_number;
pub use config::Config;
pub use help::usage;
pub use kinds::*;

/// True when `arg` is an option whose value is the next argument (`-o FILE`, `-dynamic-linker P`).
pub fn takes_separate_value(arg: &str) -> bool {
    if !arg.starts_with('-') || arg.contains('=') {
        return false;
    }
    let name = arg.strip_prefix("--").unwrap_or(&arg[1..]);
    arity(name) == Some(Arity::Value)
}

/// Every option, in the order the tables declare them.
fn all() -> impl Iterator<Item = &'static options::Opt> {
    inputs::OPTIONS.iter().chain(outputs::OPTIONS).chain(process::OPTIONS)
}

/// The option spelled `name` (without dashes).
fn find(name: &str) -> Option<&'static options::Opt> {
    all().find(|o| o.names.contains(&name))
}

/// The arity of the option spelled `name`, if there is one.
fn arity(name: &str) -> Option<Arity> {
    find(name).map(options::Opt::arity)
}

/// Parses `args` (argv without argv[0]). Response files (`@FILE`, nested, quoted as GNU ld/gcc write
/// them) are expanded first. Errors are complete sentences naming the option.
pub fn parse(args: Vec<OsString>) -> Result<Config> {
    let args = expand_response_files(args, &mut Vec::new())?;
    let config = Config { raw_args: args.clone(), ..Config::default() };
    let mut p =
        ArgParser { args, pos: 0, config, state: InputState::default(), stack: Vec::new(), spelled: String::new() };
    while p.pos < p.args.len() {
        let arg = p.args[p.pos].clone();
        p.pos += 1;
        p.one(&arg)?;
    }
    let mut config = p.config;
    // mold's -repro, or its MOLD_REPRO variable: the archive is named after the output.
    if std::env::var_os("MOLD_REPRO").is_some_and(|v| !v.is_empty()) {
        config.repro = true;
    }
    if config.repro && config.reproduce.is_none() {
        let mut tar = config.output.clone().into_os_string();
        tar.push(".repro.tar");
        config.reproduce = Some(tar.into());
    }
    Ok(config)
}

struct ArgParser {
    args: Vec<String>,
    pos: usize,
    config: Config,
    state: InputState,
    stack: Vec<(InputState, bool)>,
    /// The option being applied as the command line wrote it (`-zfoo`, `-z foo`).
    spelled: String,
}

/// Splits an argument into (option name, attached value). `--opt=v`, `-opt=v`, `-lc`, `-zrelro`.
fn split_option(arg: &str) -> (String, Option<String>) {
    let body = arg.strip_prefix("--").unwrap_or_else(|| &arg[1..]);
    // `-L=DIR`: the `=` says DIR is under the sysroot; it stays part of the value.
    if let Some(dir) = body.strip_prefix("L=").filter(|_| !arg.starts_with("--")) {
        return ("L".to_string(), Some(format!("={dir}")));
    }
    if let Some((name, value)) = body.split_once('=') {
        if arity(name).is_some_and(|a| a != Arity::Flag) {
            return (name.to_string(), Some(value.to_string()));
        }
    }
    // A one-letter option that takes a value may have it glued on (`-lc`), unless the whole is an
    // option's name (`-static` is never `-s tatic`, `-emit-relocs` never `-e mit-relocs`).
    if !arg.starts_with("--") && find(body).is_none() {
        if let Some(c) = body.chars().next() {
            let glued = arity(c.encode_utf8(&mut [0; 4])) == Some(Arity::Value);
            if glued && body.len() > 1 {
                return (c.to_string(), Some(body[c.len_utf8()..].to_string()));
            }
        }
    }
    (body.to_string(), None)
}

impl ArgParser {
    fn value(&mut self, name: &str, attached: Option<String>) -> Result<String> {
        if let Some(v) = attached {
            return Ok(v);
        }
        let v = self.args.get(self.pos).cloned().ok_or_else(|| fatal!("-{name}: missing argument"))?;
        self.pos += 1;
        Ok(v)
    }

    fn input(&mut self, path: &str) {
        self.config.inputs.push(InputArg::File { path: PathBuf::from(path), state: self.state });
    }

    fn one(&mut self, arg: &str) -> Result<()> {
        if !arg.starts_with('-') || arg == "-" {
            self.input(arg);
            return Ok(());
        }
        let (name, attached) = split_option(arg);
        let Some(opt) = find(&name) else { bail!("unknown command line option: {arg}") };
        match (&opt.apply, attached) {
            (Apply::Set(f), None) => f(&mut self.config),
            (Apply::State(f), None) => f(&mut self.state),
            (Apply::Flag(f), None) => f(self)?,
            (Apply::Optional(f), v) => f(&mut self.config, v)?,
            (Apply::Value(_) | Apply::Parse(_), attached) => {
                let glued = attached.is_some();
                let value = self.value(&name, attached)?;
                self.spelled = if glued { arg.to_string() } else { format!("{arg} {value}") };
                match opt.apply {
                    Apply::Value(f) => f(&mut self.config, value),
                    Apply::Parse(f) => f(self, &name, value)?,
                    _ => unreachable!(),
                }
            }
            // split_option attaches a value only to an option that takes one.
            (_, Some(_)) => bail!("unknown command line option: {arg}"),
        }
        Ok(())
    }
}

/// Expands `@FILE` arguments in place, recursively; `active` holds the files being expanded so one
/// that includes itself is an error instead of an endless loop.
fn expand_response_files(args: Vec<OsString>, active: &mut Vec<PathBuf>) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for a in args {
        let a = a.into_string().map_err(|a| fatal!("argument is not valid UTF-8: {}", a.to_string_lossy()))?;
        let Some(file) = a.strip_prefix('@') else {
            out.push(a);
            continue;
        };
        let path = PathBuf::from(file);
        let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
        ensure!(!active.contains(&canonical), "response file {file} includes itself");
        let text = std::fs::read_to_string(&path).with_context(|| format!("cannot open response file {file}"))?;
        active.push(canonical);
        let words = split_response_text(&text).with_context(|| format!("response file {file}"))?;
        out.extend(expand_response_files(words.into_iter().map(OsString::from).collect(), active)?);
        active.pop();
    }
    Ok(out)
}

/// gcc/GNU ld response-file quoting: whitespace separates; single and double quotes group;
/// a backslash escapes the next character.
pub fn split_response_text(text: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(ch) = chars.next() {
        match (quote, ch) {
            (_, '\\') => {
                cur.push(chars.next().context("ends with a backslash")?);
                in_word = true;
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    ensure!(quote.is_none(), "unterminated quote");
    if in_word {
        words.push(cur);
    }
    Ok(words)
}
