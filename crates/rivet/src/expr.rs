//! The expression and number syntax of the command line. `--defsym=SYMBOL=EXPRESSION`: the
//! expressions real builds pass. A number makes an absolute
//! symbol; a symbol, plus or minus numbers, makes a symbol in the same place as that symbol, moved
//! by the sum (`foo=bar+16`, `foo=(bar - 0x10) + 4`). Numbers are decimal, `0x` hexadecimal or
//! with a `K`/`M` suffix, as in linker scripts. Anything that needs addresses combined (`a-b`,
//! `a*2`, `ALIGN(...)`) is refused with a message rather than guessed.

/// `--defsym=NAME=TEXT`, parsed once when the command line is read: `symbol + addend`, or the
/// absolute `addend` when there is no symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Defsym {
    pub name: String,
    /// The expression as written, for messages.
    pub text: String,
    pub symbol: Option<String>,
    pub addend: i64,
}

/// The one number syntax of the command line, `--defsym` and scripts: decimal, or hexadecimal with
/// `0x`.
pub fn parse_number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

use crate::diag::Result;
use crate::{bail, ensure, fatal};

/// A parsed expression: `symbol + addend`, or the absolute `addend` when there is no symbol.
#[derive(Debug, PartialEq, Eq)]
pub struct Expr<'a> {
    pub symbol: Option<&'a str>,
    pub addend: i64,
}

pub fn parse(text: &str) -> Result<Expr<'_>> {
    let tokens = tokenize(text)?;
    let mut p = Parser { tokens, at: 0, symbols: Vec::new(), depth: 0 };
    let constant = p.sum(1)?;
    if let Some(t) = p.tokens.get(p.at) {
        bail!("unexpected '{}' in expression '{text}'", t.text());
    }
    // The symbols with the sign each ends up with; a symbol may appear once, positively.
    let mut symbol = None;
    for (name, sign) in p.symbols {
        ensure!(
            sign >= 0 && symbol.is_none(),
            "expression '{text}' combines symbol addresses; only NUMBER, SYMBOL and SYMBOL plus or minus numbers \
             are supported"
        );
        symbol = Some(name);
    }
    Ok(Expr { symbol, addend: constant })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token<'a> {
    Number(i64),
    Symbol(&'a str),
    Op(u8),
}

impl Token<'_> {
    fn text(&self) -> String {
        match self {
            Token::Number(n) => n.to_string(),
            Token::Symbol(s) => s.to_string(),
            Token::Op(c) => (*c as char).to_string(),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token<'_>>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let word = |c: u8| c.is_ascii_alphanumeric() || b"_.$@".contains(&c);
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if b"+-()".contains(&c) {
            out.push(Token::Op(c));
            i += 1;
        } else if word(c) {
            let start = i;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            let w = &text[start..i];
            out.push(if c.is_ascii_digit() {
                Token::Number(number(w).ok_or_else(|| fatal!("bad number '{w}' in expression '{text}'"))?)
            } else {
                Token::Symbol(w)
            });
        } else {
            bail!("unsupported character '{}' in expression '{text}' (only +, - and parentheses)", c as char);
        }
    }
    ensure!(!out.is_empty(), "empty expression");
    Ok(out)
}

fn number(w: &str) -> Option<i64> {
    let (digits, scale) = match w.as_bytes()[w.len() - 1] {
        b'K' | b'k' if !w.starts_with("0x") => (&w[..w.len() - 1], 1 << 10),
        b'M' | b'm' if !w.starts_with("0x") => (&w[..w.len() - 1], 1 << 20),
        _ => (w, 1),
    };
    let v = parse_number(digits)?;
    i64::try_from(v).ok()?.checked_mul(scale)
}

struct Parser<'a> {
    tokens: Vec<Token<'a>>,
    at: usize,
    /// Each symbol seen, with its sign in the whole expression.
    symbols: Vec<(&'a str, i64)>,
    /// How deeply the term being read nests (parentheses, signs).
    depth: u32,
}

/// The deepest nesting read (as for linker scripts): `((((...` from a response file must be an
/// error, not a stack overflow.
const MAX_DEPTH: u32 = 256;

impl<'a> Parser<'a> {
    /// sum := term (('+' | '-') term)*; `sign` is the sign this sum has in the whole expression.
    fn sum(&mut self, sign: i64) -> Result<i64> {
        let mut total = self.term(sign)?;
        while let Some(&Token::Op(op @ (b'+' | b'-'))) = self.tokens.get(self.at) {
            self.at += 1;
            let s = if op == b'+' { 1 } else { -1 };
            total = total.wrapping_add(s * self.term(sign * s)?);
        }
        Ok(total)
    }

    /// term := NUMBER | SYMBOL | '(' sum ')' | ('-' | '+') term; gives the constant part.
    fn term(&mut self, sign: i64) -> Result<i64> {
        ensure!(self.depth < MAX_DEPTH, "expression nested more than {MAX_DEPTH} levels deep");
        self.depth += 1;
        let r = self.term_inner(sign);
        self.depth -= 1;
        r
    }

    fn term_inner(&mut self, sign: i64) -> Result<i64> {
        let t = self.tokens.get(self.at).copied();
        self.at += 1;
        match t {
            Some(Token::Number(n)) => Ok(n),
            Some(Token::Symbol(s)) => {
                self.symbols.push((s, sign));
                Ok(0)
            }
            Some(Token::Op(b'(')) => {
                let v = self.sum(sign)?;
                match self.tokens.get(self.at) {
                    Some(Token::Op(b')')) => {
                        self.at += 1;
                        Ok(v)
                    }
                    _ => bail!("missing ')'"),
                }
            }
            Some(Token::Op(b'-')) => Ok(-self.term(-sign)?),
            Some(Token::Op(b'+')) => self.term(sign),
            Some(other) => bail!("unexpected '{}'", other.text()),
            None => bail!("expression ends too early"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> (Option<&str>, i64) {
        let e = parse(text).unwrap();
        (e.symbol, e.addend)
    }

    #[test]
    fn numbers_symbols_and_offsets() {
        assert_eq!(ok("0x2a"), (None, 42));
        assert_eq!(ok("4K"), (None, 4096));
        assert_eq!(ok("2M + 1"), (None, (2 << 20) + 1));
        assert_eq!(ok("main"), (Some("main"), 0));
        assert_eq!(ok("foo+16"), (Some("foo"), 16));
        assert_eq!(ok("16 + foo - 0x4"), (Some("foo"), 12));
        assert_eq!(ok("(foo - 0x10) + 4"), (Some("foo"), -12));
        assert_eq!(ok("-(4 - foo)"), (Some("foo"), -4));
        assert_eq!(ok("__x.y$z@V"), (Some("__x.y$z@V"), 0));
    }

    #[test]
    fn what_needs_addresses_combined_is_refused() {
        for bad in ["a-b", "a+b", "-a", "4-(a)", "a*2", "ALIGN(8)", "", "a+", "(a", "0xzz", "a)"] {
            assert!(parse(bad).is_err(), "{bad} should be refused");
        }
        assert!(parse("a-b").unwrap_err().to_string().contains("combines symbol addresses"));
        assert!(parse("a*2").unwrap_err().to_string().contains("'*'"));
    }
}
