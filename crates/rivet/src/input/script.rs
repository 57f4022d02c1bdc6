//! Linker-script stubs, the kind Debian ships as `libc.so`:
//! `OUTPUT_FORMAT(elf64-x86-64) GROUP ( /lib/x86_64-linux-gnu/libc.so.6 libc_nonshared.a AS_NEEDED ( ... ) )`.
//! Takes the script's text, gives the inputs it names. Full linker scripts (SECTIONS, MEMORY, ...)
//! are not supported: they are a clear error.

use crate::diag::{Context, Result};
use crate::{bail, ensure, fatal};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptInput {
    /// A path (absolute or relative, as written) or, for `-lNAME` inside the script, `-lNAME`.
    pub name: String,
    /// Inside `AS_NEEDED ( ... )`.
    pub as_needed: bool,
    /// Named inside `GROUP ( ... )` (false: `INPUT ( ... )`).
    pub in_group: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScriptStub {
    pub inputs: Vec<ScriptInput>,
    pub output_format: Option<String>,
}

const COMMANDS: &[&str] =
    &["GROUP", "INPUT", "OUTPUT_FORMAT", "OUTPUT_ARCH", "AS_NEEDED", "SEARCH_DIR", "SECTIONS", "ENTRY"];

/// True when `data` looks like a linker script (text, starts with a comment or a known command),
/// so that the input loader can tell scripts from garbage.
pub fn looks_like_script(data: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(&data[..data.len().min(4096)]) else {
        return false;
    };
    let t = text.trim_start();
    t.starts_with("/*") || COMMANDS.iter().any(|c| t.starts_with(c))
}

#[derive(Debug, PartialEq)]
enum Token<'a> {
    Word(&'a str),
    Open,
    Close,
}

fn tokenize(text: &str) -> Result<Vec<Token<'_>>> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c if c.is_ascii_whitespace() || c == b',' || c == b';' => i += 1,
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").context("unterminated comment")?;
                i += 2 + end + 2;
            }
            b'(' => {
                out.push(Token::Open);
                i += 1;
            }
            b')' => {
                out.push(Token::Close);
                i += 1;
            }
            b'"' => {
                let end = text[i + 1..].find('"').context("unterminated quoted name")?;
                out.push(Token::Word(&text[i + 1..i + 1 + end]));
                i += end + 2;
            }
            _ => {
                let start = i;
                while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'(' | b')' | b',' | b';' | b'"') {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        break;
                    }
                    i += 1;
                }
                out.push(Token::Word(&text[start..i]));
            }
        }
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: Vec<Token<'a>>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn next(&mut self) -> Option<&Token<'a>> {
        let t = self.tokens.get(self.pos);
        self.pos += 1;
        t
    }

    fn expect_open(&mut self, after: &str) -> Result<()> {
        match self.next() {
            Some(Token::Open) => Ok(()),
            _ => Err(fatal!("expected '(' after {after}")),
        }
    }

    /// Words up to the matching ')'.
    fn words(&mut self, after: &str) -> Result<Vec<&'a str>> {
        self.expect_open(after)?;
        let mut out = Vec::new();
        loop {
            match self.next() {
                Some(Token::Word(w)) => out.push(*w),
                Some(Token::Close) => return Ok(out),
                Some(Token::Open) => bail!("unexpected '(' in {after}"),
                None => bail!("missing ')' after {after}"),
            }
        }
    }

    fn file_list(&mut self, cmd: &str, in_group: bool, as_needed: bool, out: &mut Vec<ScriptInput>) -> Result<()> {
        self.expect_open(cmd)?;
        loop {
            match self.next() {
                Some(Token::Word("AS_NEEDED")) => self.file_list("AS_NEEDED", in_group, true, out)?,
                Some(Token::Word(w)) => out.push(ScriptInput { name: w.to_string(), as_needed, in_group }),
                Some(Token::Close) => return Ok(()),
                Some(Token::Open) => bail!("unexpected '(' in {cmd}"),
                None => bail!("missing ')' after {cmd}"),
            }
        }
    }
}

/// Parses a script stub. Supports comments `/* */`, `GROUP`, `INPUT`, `AS_NEEDED`, `OUTPUT_FORMAT`
/// (1 or 3 args), `OUTPUT_ARCH`; commas or spaces between names.
pub fn parse(text: &str) -> Result<ScriptStub> {
    let mut p = Parser { tokens: tokenize(text)?, pos: 0 };
    let mut stub = ScriptStub::default();
    while let Some(tok) = p.next() {
        match tok {
            Token::Word("GROUP") => p.file_list("GROUP", true, false, &mut stub.inputs)?,
            Token::Word("INPUT") => p.file_list("INPUT", false, false, &mut stub.inputs)?,
            Token::Word("OUTPUT_FORMAT") => {
                let w = p.words("OUTPUT_FORMAT")?;
                ensure!(w.len() == 1 || w.len() == 3, "OUTPUT_FORMAT takes 1 or 3 names");
                ensure!(
                    w[0].starts_with("elf64-x86-64"),
                    "unsupported output format '{}' (rivet links elf64-x86-64)",
                    w[0]
                );
                stub.output_format = Some(w[0].to_string());
            }
            Token::Word("OUTPUT_ARCH") => {
                let w = p.words("OUTPUT_ARCH")?;
                if w.first().is_some_and(|a| !a.starts_with("i386:x86-64")) {
                    bail!("unsupported architecture '{}'", w[0]);
                }
            }
            Token::Word(w) => {
                bail!("unsupported linker script command '{w}' (rivet reads only GROUP/INPUT stubs)")
            }
            Token::Open | Token::Close => bail!("unexpected parenthesis"),
        }
    }
    Ok(stub)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debian_libc_stub() {
        let text = "/* GNU ld script\n   Use the shared library */\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc_nonshared.a  AS_NEEDED ( /lib64/ld-linux-x86-64.so.2 ) )\n";
        let s = parse(text).unwrap();
        assert_eq!(s.output_format.as_deref(), Some("elf64-x86-64"));
        assert_eq!(s.inputs.len(), 3);
        assert!(!s.inputs[0].as_needed && s.inputs[0].in_group);
        assert_eq!(
            s.inputs[2],
            ScriptInput { name: "/lib64/ld-linux-x86-64.so.2".into(), as_needed: true, in_group: true }
        );
    }

    #[test]
    fn every_installed_stub_parses() {
        let Ok(dir) = std::fs::read_dir("/usr/lib/x86_64-linux-gnu") else {
            return;
        };
        let mut seen = 0;
        for e in dir.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "so") && p.metadata().is_ok_and(|m| m.len() < 4096) {
                let Ok(data) = std::fs::read(&p) else {
                    continue;
                };
                if looks_like_script(&data) {
                    let s =
                        parse(std::str::from_utf8(&data).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                    assert!(!s.inputs.is_empty(), "{}", p.display());
                    seen += 1;
                }
            }
        }
        assert!(seen > 0, "no linker-script stubs found");
    }

    #[test]
    fn inputs_libraries_quotes_and_errors() {
        let s = parse("INPUT(-lfoo, \"my file.o\" bar.a)").unwrap();
        let names: Vec<&str> = s.inputs.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["-lfoo", "my file.o", "bar.a"]);
        assert!(!s.inputs[0].in_group);
        assert!(parse("SECTIONS { .text : { *(.text) } }").unwrap_err().to_string().contains("SECTIONS"));
        assert!(parse("/* open").unwrap_err().to_string().contains("unterminated comment"));
        assert!(parse("GROUP a.o").unwrap_err().to_string().contains("expected '('"));
        assert!(parse("GROUP ( a.o").unwrap_err().to_string().contains("missing ')'"));
        assert!(parse("OUTPUT_FORMAT(elf32-i386)").is_err());
        assert!(!looks_like_script(b"\x7fELF\x02"));
        assert!(looks_like_script(b"  GROUP ( x )"));
    }

    #[test]
    fn never_panics_on_mutations() {
        let base = b"/* c */ OUTPUT_FORMAT(elf64-x86-64) GROUP ( a.so b.a AS_NEEDED ( c.so ) )".to_vec();
        let mut seed = 0x9e3779b97f4a7c15u64;
        for i in 0..5000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut m = base.clone();
            if i % 2 == 0 {
                m.truncate(seed as usize % base.len());
            } else {
                let pos = seed as usize % m.len();
                m[pos] = b"()/*\" ,AZ"[(seed >> 59) as usize % 9];
            }
            if let Ok(t) = std::str::from_utf8(&m) {
                let _ = parse(t);
            }
        }
    }
}
