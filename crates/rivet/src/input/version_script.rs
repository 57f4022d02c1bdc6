//! Version scripts (`--version-script`): takes the script's text and gives its version nodes, each
//! with `global:` and `local:` patterns (globs, optionally `extern "C++"` demangled names) and the
//! node it inherits from; `Matcher` then answers, for a symbol name, which node claims it and whether
//! it stays global. Precedence follows GNU ld and lld: an exact name beats a wildcard, and among
//! wildcards `global` beats `local`.

use crate::diag::{Context, Result};
use crate::{bail, fatal};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub text: String,
    /// Inside `extern "C++" { ... }`: matched against the demangled name.
    pub cxx: bool,
}

impl Pattern {
    fn is_glob(&self) -> bool {
        self.text.contains(['*', '?', '[', '\\'])
    }

    /// The catch-all `*` (or `**`): it matches every name, so it ranks below every other pattern.
    fn is_catch_all(&self) -> bool {
        !self.text.is_empty() && self.text.bytes().all(|c| c == b'*')
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionNode {
    /// None for the anonymous node (`{ global: ...; local: *; };`).
    pub name: Option<String>,
    pub parent: Option<String>,
    pub global: Vec<Pattern>,
    pub local: Vec<Pattern>,
    /// Where the node was written (the version script's path, or a linker script's location), for
    /// diagnostics; empty for nodes made from the command line.
    pub origin: String,
}

#[derive(Debug, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Punct(char),
}

fn tokenize(text: &str) -> Result<Vec<Tok>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = text[i + 2..].find("*/").context("unterminated comment")?;
            i += end + 4;
        } else if matches!(c, b'{' | b'}' | b';' | b':') {
            out.push(Tok::Punct(c as char));
            i += 1;
        } else if c == b'"' {
            let end = text[i + 1..].find('"').context("unterminated string")?;
            out.push(Tok::Str(text[i + 1..i + 1 + end].to_string()));
            i += end + 2;
        } else {
            let start = i;
            while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'{' | b'}' | b';' | b'"') {
                // `global:` — the colon ends the word unless it is part of a C++ name (`ns::f`).
                if b[i] == b':' && b.get(i + 1) != Some(&b':') && (i == 0 || b[i - 1] != b':') {
                    break;
                }
                i += 1;
            }
            out.push(Tok::Word(text[start..i].to_string()));
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| match t {
            Tok::Word(w) => Tok::Word(w.clone()),
            Tok::Str(s) => Tok::Str(s.clone()),
            Tok::Punct(c) => Tok::Punct(*c),
        });
        self.pos += 1;
        t
    }
    fn expect(&mut self, c: char) -> Result<()> {
        match self.next() {
            Some(Tok::Punct(p)) if p == c => Ok(()),
            other => Err(fatal!("expected '{c}', found {}", describe(other.as_ref()))),
        }
    }

    /// `{ global: a; b; local: *; }` — the body of a node or of an `extern "C++"` block.
    fn body(&mut self, node: &mut VersionNode, cxx: bool) -> Result<()> {
        self.expect('{')?;
        let mut local = false;
        loop {
            match self.next() {
                Some(Tok::Punct('}')) => return Ok(()),
                Some(Tok::Word(w)) if (w == "global" || w == "local") && self.peek() == Some(&Tok::Punct(':')) => {
                    self.pos += 1;
                    local = w == "local";
                }
                Some(Tok::Word(w)) if w == "extern" => {
                    let lang = match self.next() {
                        Some(Tok::Str(s)) => s,
                        other => {
                            bail!("expected a language after extern, found {}", describe(other.as_ref()))
                        }
                    };
                    if lang != "C++" && lang != "C" {
                        bail!("unsupported language \"{lang}\" in extern");
                    }
                    let mut inner = VersionNode::default();
                    self.body(&mut inner, lang == "C++")?;
                    let target = if local { &mut node.local } else { &mut node.global };
                    target.extend(inner.global);
                    self.skip_semicolon();
                }
                Some(Tok::Word(w)) | Some(Tok::Str(w)) => {
                    check_pattern(&w)?;
                    let p = Pattern { text: w, cxx };
                    if local {
                        node.local.push(p);
                    } else {
                        node.global.push(p);
                    }
                    self.skip_semicolon();
                }
                Some(Tok::Punct(';')) => {}
                other => bail!("unexpected {} in version node", describe(other.as_ref())),
            }
        }
    }

    fn skip_semicolon(&mut self) {
        if self.peek() == Some(&Tok::Punct(';')) {
            self.pos += 1;
        }
    }
}

fn describe(t: Option<&Tok>) -> String {
    match t {
        None => "end of file".into(),
        Some(Tok::Word(w)) => format!("'{w}'"),
        Some(Tok::Str(s)) => format!("\"{s}\""),
        Some(Tok::Punct(c)) => format!("'{c}'"),
    }
}

pub fn parse(text: &str) -> Result<Vec<VersionNode>> {
    let mut p = Parser { toks: tokenize(text)?, pos: 0 };
    let mut nodes = Vec::new();
    while p.peek().is_some() {
        let mut node = VersionNode::default();
        if let Some(Tok::Word(name)) = p.peek() {
            node.name = Some(name.clone());
            p.pos += 1;
        }
        p.body(&mut node, false)?;
        if let Some(Tok::Word(parent)) = p.peek() {
            node.parent = Some(parent.clone());
            p.pos += 1;
        }
        p.expect(';')?;
        nodes.push(node);
    }
    if nodes.iter().filter(|n| n.name.is_none()).count() > 0 && nodes.len() > 1 {
        bail!("an anonymous version node must be the only node");
    }
    for n in &nodes {
        if let Some(parent) = &n.parent {
            if !nodes.iter().any(|m| m.name.as_ref() == Some(parent)) {
                bail!("version node {} inherits from undefined version {parent}", n.name.as_deref().unwrap_or(""));
            }
        }
    }
    Ok(nodes)
}

/// Shell-style glob: `*`, `?`, `[abc]`, `[a-z]`, `[!x]`, and `\c` for a literal `c`.
pub fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    // The last `*` seen and where in the text it started matching (None: no `*` yet).
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    star = Some((p, t));
                    p += 1;
                    continue;
                }
                b'?' => {
                    p += 1;
                    t += 1;
                    continue;
                }
                b'\\' if pattern.get(p + 1) == Some(&text[t]) => {
                    p += 2;
                    t += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, len)) = class_match(&pattern[p..], text[t]) {
                        if matched {
                            p += len;
                            t += 1;
                            continue;
                        }
                    } else if text[t] == b'[' {
                        p += 1;
                        t += 1;
                        continue;
                    }
                }
                c if c == text[t] => {
                    p += 1;
                    t += 1;
                    continue;
                }
                _ => {}
            }
        }
        // Backtrack: the last `*` takes one more character.
        let Some((star_p, star_t)) = star.as_mut() else { return false };
        *star_t += 1;
        p = *star_p + 1;
        t = *star_t;
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// Matches `[...]` at the start of `pat` against `c`: (matched, length of the class); None when
/// the class is never closed. `[!x]` and `[^x]` negate; a `]` right after the opening (or after
/// the negation) is a member, as is any character escaped with `\\` (`[^\\]a-z]`); `a-z` is a range.
fn class_match(pat: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(pat.get(i), Some(b'!') | Some(b'^'));
    if negate {
        i += 1;
    }
    let first = i;
    let mut hit = false;
    // One member character at `i` (escaped or not): (the character, where the next one starts).
    let member = |i: usize| -> Option<(u8, usize)> {
        match *pat.get(i)? {
            b'\\' => Some((*pat.get(i + 1)?, i + 2)),
            ch => Some((ch, i + 1)),
        }
    };
    loop {
        let ch = *pat.get(i)?;
        if ch == b']' && i > first {
            return Some((hit != negate, i + 1));
        }
        let (lo, next) = member(i)?;
        if pat.get(next) == Some(&b'-') && pat.get(next + 1).is_some_and(|&x| x != b']') {
            let (hi, after) = member(next + 1)?;
            hit |= lo <= c && c <= hi;
            i = after;
        } else {
            hit |= lo == c;
            i = next;
        }
    }
}

/// Checks a version-script pattern: every `[` opens a class that is closed, and no `\\` ends it.
/// (A pattern is a glob; a class left open is a mistake, not a literal `[`, as lld has it.)
fn check_pattern(text: &str) -> Result<()> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if i + 1 == b.len() => bail!("invalid version pattern '{text}': it ends with '\\'"),
            b'\\' => i += 2,
            b'[' => match class_match(&b[i..], 0) {
                Some((_, len)) => i += len,
                None => bail!("invalid version pattern '{text}': '[' at offset {i} is never closed by ']'"),
            },
            _ => i += 1,
        }
    }
    Ok(())
}

/// What a version script says about one symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not mentioned: global, unversioned.
    Unmentioned,
    /// Global in node `n` (an index into the nodes).
    Global(usize),
    /// Made local (not exported).
    Local,
}

pub struct Matcher {
    pub nodes: Vec<VersionNode>,
}

impl Matcher {
    pub fn verdict(&self, name: &[u8]) -> Verdict {
        let demangled = std::cell::OnceCell::new();
        let text = |p: &Pattern| -> Vec<u8> {
            if p.cxx {
                demangled.get_or_init(|| demangle(name)).clone().into_bytes()
            } else {
                name.to_vec()
            }
        };
        let exact = |p: &Pattern| !p.is_glob() && text(p) == p.text.as_bytes();
        // Wildcards other than a lone `*` first, then `*`: `{ global: *; local: b*; }` hides
        // `bar` (lld's order: exact names, then wildcards, then the catch-all).
        let wild = |p: &Pattern| p.is_glob() && !p.is_catch_all() && glob_match(p.text.as_bytes(), &text(p));
        let all = |p: &Pattern| p.is_catch_all();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.global.iter().any(exact) {
                return Verdict::Global(i);
            }
        }
        if self.nodes.iter().any(|n| n.local.iter().any(exact)) {
            return Verdict::Local;
        }
        for (i, n) in self.nodes.iter().enumerate().rev() {
            if n.global.iter().any(wild) {
                return Verdict::Global(i);
            }
        }
        if self.nodes.iter().any(|n| n.local.iter().any(wild)) {
            return Verdict::Local;
        }
        for (i, n) in self.nodes.iter().enumerate().rev() {
            if n.global.iter().any(all) {
                return Verdict::Global(i);
            }
        }
        if self.nodes.iter().any(|n| n.local.iter().any(all)) {
            return Verdict::Local;
        }
        Verdict::Unmentioned
    }

    /// Exact (non-wildcard) global names, for `--no-undefined-version`.
    pub fn exact_names(&self) -> impl Iterator<Item = (&Pattern, &VersionNode)> {
        self.nodes.iter().flat_map(|n| n.global.iter().filter(|p| !p.is_glob()).map(move |p| (p, n)))
    }
}

/// A C++ symbol's demangled name as lld matches `extern "C++"` patterns against it (LLVM's
/// spelling: `vtable for K`); the name itself when it does not demangle.
pub fn demangle(name: &[u8]) -> String {
    crate::diag::demangle_itanium(name).unwrap_or_else(|| String::from_utf8_lossy(name).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nodes_inheritance_and_cxx() {
        let text = "# comment\nV1 { global: foo; bar*; extern \"C++\" { ns::f*; \"ns::g(int)\"; }; local: *; };\nV2 { global: foo2; } V1;\n";
        let nodes = parse(text).unwrap();
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[0].name.as_deref(), Some("V1"));
        assert_eq!(nodes[0].global.len(), 4);
        assert!(nodes[0].global[2].cxx && nodes[0].global[2].text == "ns::f*");
        assert_eq!(nodes[0].local, vec![Pattern { text: "*".into(), cxx: false }]);
        assert_eq!(nodes[1].parent.as_deref(), Some("V1"));
        let anon = parse("{ global: api_*; local: *; };").unwrap();
        assert_eq!(anon[0].name, None);
    }

    #[test]
    fn errors() {
        assert!(parse("V1 { global: foo; } NOPE;").unwrap_err().to_string().contains("NOPE"));
        assert!(parse("V1 { global: foo;").is_err());
        assert!(parse("V1 { global: foo; }").unwrap_err().to_string().contains("expected ';'"));
        assert!(parse("/* open").is_err());
    }

    #[test]
    fn verdicts_follow_precedence() {
        let m = Matcher {
            nodes: parse("V1 { global: foo; api_*; local: *; }; V2 { global: bar; local: api_internal; } V1;").unwrap(),
        };
        assert_eq!(m.verdict(b"foo"), Verdict::Global(0));
        assert_eq!(m.verdict(b"bar"), Verdict::Global(1));
        assert_eq!(m.verdict(b"api_open"), Verdict::Global(0));
        assert_eq!(m.verdict(b"api_internal"), Verdict::Local, "exact local beats a global wildcard");
        assert_eq!(m.verdict(b"other"), Verdict::Local);
        let cxx = Matcher { nodes: parse("V { global: extern \"C++\" { ns::*; }; local: *; };").unwrap() };
        assert_eq!(cxx.verdict(b"_ZN2ns3fooEv"), Verdict::Global(0));
        assert_eq!(cxx.verdict(b"_Z3barv"), Verdict::Local);
        let star = Matcher { nodes: parse("V { global: *; local: b*; };").unwrap() };
        assert_eq!(star.verdict(b"bar"), Verdict::Local, "a wildcard beats the catch-all");
        assert_eq!(star.verdict(b"foo"), Verdict::Global(0));
        let open = Matcher { nodes: parse("{ global: x; };").unwrap() };
        assert_eq!(open.verdict(b"y"), Verdict::Unmentioned);
    }

    #[test]
    fn globs() {
        assert!(glob_match(b"foo*", b"foobar"));
        assert!(glob_match(b"*", b""));
        assert!(glob_match(b"f?o", b"fao"));
        assert!(!glob_match(b"f?o", b"fo"));
        assert!(glob_match(b"[a-c]x", b"bx"));
        assert!(!glob_match(b"[!a-c]x", b"bx"));
        assert!(glob_match(b"*_v[0-9]", b"lib_v3"));
        assert!(glob_match(b"foo\\?", b"foo?"), "an escaped ? is a literal");
        assert!(!glob_match(b"foo\\?", b"foox"));
        assert!(glob_match(b"*foo\\bar*", b"xfoobarx"), "an escaped letter is that letter");
        assert!(glob_match(b"**", b"anything"));
        assert!(glob_match(b"[abc][^abc][^\\]a-zABC]", b"azZ"));
        assert!(!glob_match(b"[abc][^abc][^\\]a-zABC]", b"azC"));
        assert!(!glob_match(b"[abc][^abc][^\\]a-zABC]", b"aaZ"));
        assert!(!glob_match(b"[abc][^abc][^\\]a-zABC]", b"az]"));
        assert!(glob_match(b"[]x]", b"]"), "a ] right after [ is a member");
        assert!(glob_match(b"[!]x]", b"a"));
    }

    #[test]
    fn open_class_is_an_error() {
        let e = parse("VER1 { foo[12; };").unwrap_err().to_string();
        assert!(e.contains("invalid version pattern 'foo[12'"), "{e}");
        assert!(parse("VER1 { foo[12]; };").is_ok());
    }
}
