//! Linker scripts: takes a script's text (and, through a callback, the text of the files it
//! `INCLUDE`s) and gives a `Script`: the inputs it names (`INPUT`, `GROUP`, `AS_NEEDED`), the
//! options it sets (`OUTPUT`, `ENTRY`, `SEARCH_DIR`, `EXTERN`...), its symbol assignments and
//! `ASSERT`s, `VERSION` nodes, and the `SECTIONS`, `MEMORY` and `PHDRS` commands, parsed into
//! plain data. Nothing here knows about sections or addresses: `crate::script` evaluates the
//! expressions. Errors name the file and line (`script.ld:3: unclosed comment in a linker script`),
//! as lld words them. Tokens follow lld: a bare word may hold `-`, `/`, `*` (file names, patterns),
//! while inside expressions operators split words (`a+b` is three tokens).

use crate::diag::{Error, Result};
use crate::fatal;
use crate::input::version_script::{self, VersionNode};
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptInput {
    /// A path (absolute or relative, as written; a leading `=` means the sysroot) or, for
    /// `-lNAME` inside the script, `-lNAME`.
    pub name: String,
    /// Inside `AS_NEEDED ( ... )`.
    pub as_needed: bool,
    /// Named inside `GROUP ( ... )` (false: `INPUT ( ... )`).
    pub in_group: bool,
}

/// A script read in the link: from `-T`, or given (or found) as an input file.
pub struct ScriptFile {
    pub script: Script,
    /// How it is named in messages.
    pub name: String,
    /// The command-line input it came from (its position among `Config::inputs`).
    pub at: usize,
}

/// A symbol a script defines: `Def::Script(i)` is `ctx.script_syms[i]`.
#[derive(Clone, Debug)]
pub struct ScriptSym {
    pub id: crate::ids::SymbolId,
    pub assign: Assign,
    /// Inside `SECTIONS`: evaluated as layout places sections.
    pub in_sections: bool,
    /// Outside `SECTIONS`: (the script's index, the command's index in its `commands`).
    pub place: Option<(usize, usize)>,
    /// (the script's index, the assignment's index in `script::assignments`): which assignment
    /// this is, for layout to find its value.
    pub slot: (usize, usize),
    /// Its value does not move with the load address (numbers, sizes, `ABSOLUTE`): decided from
    /// the expression before layout, for the relocation scan.
    pub absolute: bool,
    /// STT_*: a plain copy of a symbol (`bar = foo`) takes its type, as in lld.
    pub ty: u8,
}

/// Where a command was written: `file:line`, for messages.
pub type Loc = Arc<str>;

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Num(u64),
    Sym(String),
    Dot,
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Complement(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `ALIGN(a)` (the location counter aligned) or `ALIGN(e, a)`.
    Align(Option<Box<Expr>>, Box<Expr>),
    Absolute(Box<Expr>),
    Addr(String),
    LoadAddr(String),
    SizeOf(String),
    AlignOf(String),
    SizeOfHeaders,
    Defined(String),
    Max(Box<Expr>, Box<Expr>),
    Min(Box<Expr>, Box<Expr>),
    Log2Ceil(Box<Expr>),
    /// `CONSTANT(MAXPAGESIZE)` (true) or `CONSTANT(COMMONPAGESIZE)` (false).
    PageSize(bool),
    Origin(String),
    Length(String),
    /// `DATA_SEGMENT_ALIGN(maxpagesize, commonpagesize)`.
    DataSegmentAlign(Box<Expr>, Box<Expr>),
    /// `DATA_SEGMENT_RELRO_END(offset, e)`, `DATA_SEGMENT_END(e)`: the value of e (lld).
    DataSegmentRelroEnd(Box<Expr>, Box<Expr>),
    DataSegmentEnd(Box<Expr>),
    /// `SEGMENT_START("name", default)`: the default (lld, without -T<segment> options).
    SegmentStart(String, Box<Expr>),
    /// `ASSERT(e, "message")` used as an expression: e's value.
    Assert(Box<Expr>, String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Mul,
    Div,
    Mod,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Xor,
    Or,
    AndAnd,
    OrOr,
}

impl BinOp {
    fn of(op: &str) -> Option<(BinOp, u8)> {
        Some(match op {
            "*" => (BinOp::Mul, 11),
            "/" => (BinOp::Div, 11),
            "%" => (BinOp::Mod, 11),
            "+" => (BinOp::Add, 10),
            "-" => (BinOp::Sub, 10),
            "<<" => (BinOp::Shl, 9),
            ">>" => (BinOp::Shr, 9),
            "<" => (BinOp::Lt, 8),
            "<=" => (BinOp::Le, 8),
            ">" => (BinOp::Gt, 8),
            ">=" => (BinOp::Ge, 8),
            "==" => (BinOp::Eq, 7),
            "!=" => (BinOp::Ne, 7),
            "&" => (BinOp::And, 6),
            "^" => (BinOp::Xor, 5),
            "|" => (BinOp::Or, 4),
            "&&" => (BinOp::AndAnd, 3),
            "||" => (BinOp::OrOr, 2),
            _ => return None,
        })
    }
}

/// `NAME = EXPR;` (also `+=` and the other compound forms, as `NAME = NAME op EXPR`), possibly
/// inside `PROVIDE`, `PROVIDE_HIDDEN` or `HIDDEN`. NAME `.` is the location counter.
#[derive(Clone, Debug, PartialEq)]
pub struct Assign {
    pub name: String,
    pub expr: Expr,
    pub provide: bool,
    pub hidden: bool,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Assert {
    pub expr: Expr,
    pub message: String,
    pub loc: Loc,
}

/// How the sections a pattern matched are sorted (`SORT_BY_NAME(...)` and friends).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Sort {
    #[default]
    Unsorted,
    /// `SORT_NONE`: not even by `--sort-section`.
    None,
    Name,
    Alignment,
    InitPriority,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionPattern {
    /// `EXCLUDE_FILE(...)` before the pattern: files whose sections it does not take.
    pub exclude_files: Vec<String>,
    pub pattern: String,
    pub sort: (Sort, Sort),
}

/// `[KEEP(] FILE-PATTERN ( SECTION-PATTERNS ) [)]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputDesc {
    /// A glob over the file's name; `archive:member` globs over an archive member.
    pub file: String,
    pub exclude_files: Vec<String>,
    /// Empty: every section of the file.
    pub sections: Vec<SectionPattern>,
    pub keep: bool,
    pub loc: Loc,
}

impl InputDesc {
    /// Whether this description takes sections of `file` (named as `script_name` names it).
    fn file_matches(&self, file: &str) -> bool {
        use crate::input::version_script::glob_match;
        let f = file.as_bytes();
        glob_match(self.file.as_bytes(), f) && !self.exclude_files.iter().any(|x| glob_match(x.as_bytes(), f))
    }

    /// The index of the section pattern that takes section `name` of `file` (`COMMON` is matched
    /// by the common symbols, not by a section).
    pub fn pattern_match(&self, file: &str, name: &[u8]) -> Option<usize> {
        use crate::input::version_script::glob_match;
        if !self.file_matches(file) {
            return None;
        }
        if self.sections.is_empty() {
            return Some(0);
        }
        self.sections.iter().position(|p| {
            glob_match(p.pattern.as_bytes(), name)
                && !p.exclude_files.iter().any(|x| glob_match(x.as_bytes(), file.as_bytes()))
        })
    }
}

/// The name a file pattern is matched against: the path, or `archive:member` (as lld does).
pub fn script_name(name: &str) -> String {
    match name.strip_suffix(')').and_then(|n| n.split_once('(')) {
        Some((archive, member)) => format!("{archive}:{member}"),
        None => name.to_string(),
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum OutputCmd {
    Input(InputDesc),
    Assign(Assign),
    Assert(Assert),
    /// `BYTE`, `SHORT`, `LONG`, `QUAD` (size 1, 2, 4, 8).
    Data(u8, Expr),
    Fill(Expr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputType {
    Progbits,
    NoLoad,
    /// `COPY`, `INFO`, `OVERLAY`: not loaded, not allocated.
    NotAlloc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Constraint {
    ReadOnly,
    ReadWrite,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OutputDesc {
    pub name: String,
    pub addr: Option<Expr>,
    pub ty: Option<OutputType>,
    pub lma: Option<Expr>,
    pub align: Option<Expr>,
    pub subalign: Option<Expr>,
    pub constraint: Option<Constraint>,
    pub cmds: Vec<OutputCmd>,
    pub region: Option<String>,
    pub lma_region: Option<String>,
    pub phdrs: Vec<String>,
    pub fill: Option<Expr>,
    pub loc: Loc,
}

impl OutputDesc {
    /// A description named `name` with nothing said yet.
    pub fn new(name: String, loc: Loc) -> OutputDesc {
        OutputDesc {
            name,
            addr: None,
            ty: None,
            lma: None,
            align: None,
            subalign: None,
            constraint: None,
            cmds: Vec::new(),
            region: None,
            lma_region: None,
            phdrs: Vec::new(),
            fill: None,
            loc,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum SectionsCmd {
    Assign(Assign),
    Assert(Assert),
    Output(Box<OutputDesc>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    pub name: String,
    pub attrs: String,
    pub origin: Expr,
    pub length: Expr,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PhdrCmd {
    pub name: String,
    pub p_type: u32,
    pub filehdr: bool,
    pub phdrs: bool,
    pub at: Option<Expr>,
    pub flags: Option<Expr>,
    pub loc: Loc,
}

/// A `SECTIONS` block followed by `INSERT AFTER|BEFORE name`: its commands go next to that
/// output section of the other script (or the default layout) rather than replacing it.
#[derive(Clone, Debug, PartialEq)]
pub struct Insert {
    pub after: bool,
    pub name: String,
    pub cmds: Vec<SectionsCmd>,
}

/// Everything a script (with the files it includes) says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Script {
    pub inputs: Vec<ScriptInput>,
    pub search_dirs: Vec<String>,
    pub output: Option<String>,
    pub output_format: Option<String>,
    /// The machines its OUTPUT_FORMAT, OUTPUT_ARCH and TARGET name: (machine, where, the
    /// command as written), checked against the link's target (`arch::check_scripts`).
    pub machines: Vec<(crate::machine::Machine, Loc, String)>,
    pub entry: Option<String>,
    pub externs: Vec<String>,
    /// Assignments and asserts outside `SECTIONS`, in order.
    pub commands: Vec<SectionsCmd>,
    /// The `SECTIONS` commands (not inserted ones); `has_sections` when a block was seen.
    pub sections: Vec<SectionsCmd>,
    pub has_sections: bool,
    pub inserts: Vec<Insert>,
    pub memory: Vec<Region>,
    pub phdrs: Vec<PhdrCmd>,
    pub has_phdrs: bool,
    pub versions: Vec<VersionNode>,
    /// `NOCROSSREFS(a b c)`: (names, true for `NOCROSSREFS_TO`, where only the first is checked).
    pub nocrossrefs: Vec<(Vec<String>, bool, Loc)>,
    /// `REGION_ALIAS(alias, region)`.
    pub region_aliases: Vec<(String, String)>,
}

const COMMANDS: &[&str] = &[
    "GROUP",
    "INPUT",
    "OUTPUT_FORMAT",
    "OUTPUT_ARCH",
    "OUTPUT",
    "AS_NEEDED",
    "SEARCH_DIR",
    "SECTIONS",
    "ENTRY",
    "INCLUDE",
    "MEMORY",
    "PHDRS",
    "VERSION",
    "PROVIDE",
    "EXTERN",
    "TARGET",
];

/// True when `data` looks like a linker script (text, starts with a comment or a known command),
/// so that the input loader can tell scripts from garbage.
pub fn looks_like_script(data: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(&data[..data.len().min(4096)]) else {
        return false;
    };
    let t = text.trim_start();
    t.starts_with("/*") || COMMANDS.iter().any(|c| t.starts_with(c))
}

/// Plain text (no NUL bytes, UTF-8): what may be read as a linker script at all.
pub fn is_text(data: &[u8]) -> bool {
    // An empty file is no script (it would link as one naming nothing): it is an unknown type.
    !data.is_empty() && !data.contains(&0) && std::str::from_utf8(data).is_ok()
}

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Clone)]
struct Frame {
    file: Arc<str>,
    text: Arc<str>,
    pos: usize,
}

#[derive(Clone, Debug, PartialEq)]
struct Tok {
    text: String,
    quoted: bool,
}

/// Reads an `INCLUDE`d file: given its name as written, gives (the name to show, its text).
pub type Includer<'i> = &'i mut dyn FnMut(&str) -> Result<(String, String)>;

struct Lexer<'i> {
    frames: Vec<Frame>,
    include: Includer<'i>,
}

const OPS3: &[&str] = &["<<=", ">>="];
const OPS2: &[&str] = &["*=", "/=", "+=", "-=", "<=", ">=", "&=", "^=", "|=", "<<", ">>", "&&", "||", "==", "!="];

impl Lexer<'_> {
    fn frame(&self) -> &Frame {
        self.frames.last().expect("the lexer always has a frame")
    }

    /// `file:line` of the current position.
    fn loc(&self) -> Loc {
        let f = self.frame();
        let line = f.text[..f.pos.min(f.text.len())].bytes().filter(|&c| c == b'\n').count() + 1;
        format!("{}:{line}", f.file).into()
    }

    fn err(&self, msg: impl Into<String>) -> Error {
        Error::new(msg.into()).context(self.loc())
    }

    /// Skips blanks and comments; at the end of an included file, goes back to the includer.
    fn skip_blank(&mut self) -> Result<()> {
        loop {
            let f = self.frames.last_mut().unwrap();
            let b = f.text.as_bytes();
            while f.pos < b.len() {
                if b[f.pos].is_ascii_whitespace() {
                    f.pos += 1;
                } else if b[f.pos] == b'/' && b.get(f.pos + 1) == Some(&b'*') {
                    match f.text[f.pos + 2..].find("*/") {
                        Some(end) => f.pos += 2 + end + 2,
                        None => return Err(self.err("unclosed comment in a linker script")),
                    }
                } else {
                    return Ok(());
                }
            }
            if self.frames.len() == 1 {
                return Ok(());
            }
            self.frames.pop();
        }
    }

    /// The next token; `expr`: inside an expression, where operators split words.
    fn next(&mut self, expr: bool) -> Result<Option<Tok>> {
        self.skip_blank()?;
        let f = self.frames.last_mut().unwrap();
        let text = f.text.clone();
        let rest = &text[f.pos..];
        if rest.is_empty() {
            return Ok(None);
        }
        if let Some(q) = rest.strip_prefix('"') {
            let Some(end) = q.find('"') else { return Err(self.err("unclosed quote")) };
            f.pos += end + 2;
            return Ok(Some(Tok { text: q[..end].to_string(), quoted: true }));
        }
        let op = OPS3.iter().chain(OPS2).find(|o| rest.starts_with(**o));
        let len = if let Some(op) = op {
            op.len()
        } else {
            let word = |c: char| {
                c.is_ascii_alphanumeric() || if expr { "_.$".contains(c) } else { "_.$/\\~=+[]*?-!^:".contains(c) }
            };
            match rest.find(|c: char| !word(c)) {
                Some(0) => rest.chars().next().unwrap().len_utf8(),
                Some(n) => n,
                None => rest.len(),
            }
        };
        f.pos += len;
        Ok(Some(Tok { text: rest[..len].to_string(), quoted: false }))
    }

    fn peek(&mut self, expr: bool) -> Result<Option<Tok>> {
        let saved = self.frames.clone();
        let t = self.next(expr);
        self.frames = saved;
        t
    }

    fn peek_is(&mut self, s: &str) -> Result<bool> {
        Ok(self.peek(false)?.is_some_and(|t| !t.quoted && t.text == s))
    }

    fn consume(&mut self, s: &str) -> Result<bool> {
        if self.peek_is(s)? {
            self.next(false)?;
            return Ok(true);
        }
        Ok(false)
    }

    fn expect(&mut self, s: &str) -> Result<()> {
        match self.next(false)? {
            Some(t) if !t.quoted && t.text == s => Ok(()),
            Some(t) => Err(self.err(format!("{s} expected, but got {}", t.text))),
            None => Err(self.err(format!("{s} expected, but got end of file"))),
        }
    }

    fn expect_expr(&mut self, s: &str) -> Result<()> {
        match self.next(true)? {
            Some(t) if !t.quoted && t.text == s => Ok(()),
            Some(t) => Err(self.err(format!("{s} expected, but got {}", t.text))),
            None => Err(self.err(format!("{s} expected, but got end of file"))),
        }
    }

    /// A name or other word (quoted or not).
    fn word(&mut self, what: &str) -> Result<String> {
        match self.next(false)? {
            Some(t) if t.quoted || !matches!(t.text.as_str(), "(" | ")" | "{" | "}" | ";" | ",") => Ok(t.text),
            Some(t) => Err(self.err(format!("{what} expected, but got {}", t.text))),
            None => Err(self.err(format!("{what} expected, but got end of file"))),
        }
    }

    /// The raw text of a `{ ... }` block, the opening brace already read (a `VERSION` block is a
    /// version script and is parsed as one).
    fn raw_block(&mut self) -> Result<String> {
        let f = self.frames.last_mut().unwrap();
        let text = f.text.clone();
        let b = text.as_bytes();
        let start = f.pos;
        let mut depth = 1;
        let mut i = start;
        while i < b.len() {
            match b[i] {
                b'/' if b.get(i + 1) == Some(&b'*') => match text[i + 2..].find("*/") {
                    Some(end) => i += 2 + end + 2,
                    None => {
                        f.pos = i;
                        return Err(self.err("unclosed comment in a linker script"));
                    }
                },
                b'"' => match text[i + 1..].find('"') {
                    Some(end) => i += end + 2,
                    None => {
                        f.pos = i;
                        return Err(self.err("unclosed quote"));
                    }
                },
                b'{' => {
                    depth += 1;
                    i += 1;
                }
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        f.pos = i + 1;
                        return Ok(text[start..i].to_string());
                    }
                    i += 1;
                }
                _ => i += 1,
            }
        }
        f.pos = start;
        Err(self.err("unclosed '{'"))
    }

    fn include(&mut self) -> Result<()> {
        let name = self.word("file name")?;
        if self.frames.len() > 32 {
            return Err(self.err(format!("there is a cycle in linker script INCLUDEs ({name})")));
        }
        let (file, text) = (self.include)(&name).map_err(|e| e.context(self.loc()))?;
        self.frames.push(Frame { file: file.into(), text: text.into(), pos: 0 });
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Parser

struct Parser<'i> {
    lex: Lexer<'i>,
    script: Script,
    /// How deeply the expression being read nests (parentheses, prefix operators, `?:`).
    depth: u32,
}

/// The deepest nesting of one expression rivet reads: far beyond any real script, and a bound on
/// the recursion of reading, evaluating and dropping it (`((((...` in a hostile file must be an
/// error, not a stack overflow; GNU ld stops with "memory exhausted").
const MAX_EXPR_DEPTH: u32 = 256;

const ASSIGN_OPS: &[&str] = &["=", "+=", "-=", "*=", "/=", "<<=", ">>=", "&=", "|=", "^="];

/// Parses a linker script. `file` names it in messages; `include` reads the files it `INCLUDE`s.
pub fn parse_with(file: &str, text: &str, include: Includer) -> Result<Script> {
    let frame = Frame { file: file.into(), text: text.into(), pos: 0 };
    let mut p = Parser { lex: Lexer { frames: vec![frame], include }, script: Script::default(), depth: 0 };
    p.top()?;
    Ok(p.script)
}

/// Parses a script that includes nothing (an `INCLUDE` is an error).
pub fn parse(text: &str) -> Result<Script> {
    parse_with("<script>", text, &mut |name: &str| Err(fatal!("cannot find linker script {name}")))
}

impl Parser<'_> {
    fn top(&mut self) -> Result<()> {
        loop {
            let Some(tok) = self.lex.peek(false)? else { return Ok(()) };
            if tok.quoted {
                return Err(self.lex.err(format!("unknown directive: \"{}\"", tok.text)));
            }
            if let Some(a) = self.try_assignment()? {
                self.script.commands.push(SectionsCmd::Assign(a));
                continue;
            }
            self.lex.next(false)?;
            match tok.text.as_str() {
                ";" => {}
                "ENTRY" => {
                    self.lex.expect("(")?;
                    self.script.entry = Some(self.lex.word("symbol name")?);
                    self.lex.expect(")")?;
                }
                "EXTERN" => {
                    self.lex.expect("(")?;
                    while !self.lex.consume(")")? {
                        if !self.lex.consume(",")? {
                            let w = self.lex.word("symbol name")?;
                            self.script.externs.push(w);
                        }
                    }
                }
                "GROUP" => self.file_list(true, false)?,
                "INPUT" | "STARTUP" => self.file_list(false, false)?,
                "INCLUDE" => self.lex.include()?,
                "OUTPUT" => {
                    self.lex.expect("(")?;
                    self.script.output = Some(self.lex.word("file name")?);
                    self.lex.expect(")")?;
                }
                "OUTPUT_FORMAT" => {
                    let names = self.names("OUTPUT_FORMAT")?;
                    if names.len() != 1 && names.len() != 3 {
                        return Err(self.lex.err("OUTPUT_FORMAT takes 1 or 3 names"));
                    }
                    // The format of this output is the default (first) one; -EB/-EL pick among
                    // the three otherwise, and all three name the same format in practice.
                    let Some(m) = crate::machine::Machine::for_bfd_format(&names[0]) else {
                        let known = crate::machine::Machine::names().2;
                        return Err(self
                            .lex
                            .err(format!("unsupported output format '{}' (rivet links {known} only)", names[0])));
                    };
                    self.script.machines.push((m, self.lex.loc(), format!("OUTPUT_FORMAT({})", names[0])));
                    self.script.output_format = Some(names[0].clone());
                }
                "OUTPUT_ARCH" => {
                    let names = self.names("OUTPUT_ARCH")?;
                    if let Some(a) = names.first() {
                        let Some(m) = crate::machine::Machine::for_bfd_arch(a) else {
                            let known = crate::machine::Machine::names().3;
                            return Err(self
                                .lex
                                .err(format!("unsupported architecture '{}' (rivet links {known} only)", names[0])));
                        };
                        self.script.machines.push((m, self.lex.loc(), format!("OUTPUT_ARCH({a})")));
                    }
                }
                "TARGET" => {
                    let names = self.names("TARGET")?;
                    if let Some(a) = names.first().filter(|a| *a != "binary") {
                        let Some(m) = crate::machine::Machine::for_bfd_format(a) else {
                            return Err(self.lex.err(format!("unsupported target '{}'", names[0])));
                        };
                        self.script.machines.push((m, self.lex.loc(), format!("TARGET({a})")));
                    }
                }
                "SEARCH_DIR" => {
                    self.lex.expect("(")?;
                    self.script.search_dirs.push(self.lex.word("directory")?);
                    self.lex.expect(")")?;
                }
                "ASSERT" => {
                    let a = self.assert()?;
                    self.script.commands.push(SectionsCmd::Assert(a));
                }
                "PROVIDE" | "PROVIDE_HIDDEN" | "HIDDEN" => {
                    let a = self.wrapped_assignment(&tok.text)?;
                    self.script.commands.push(SectionsCmd::Assign(a));
                }
                "VERSION" => {
                    self.lex.expect("{")?;
                    let loc = self.lex.loc();
                    let text = self.lex.raw_block()?;
                    let mut nodes = version_script::parse(&text).map_err(|e| e.context(&loc))?;
                    for n in &mut nodes {
                        n.origin = loc.to_string();
                    }
                    self.script.versions.extend(nodes);
                }
                "NOCROSSREFS" | "NOCROSSREFS_TO" => {
                    let loc = self.lex.loc();
                    let names = self.names(&tok.text)?;
                    self.script.nocrossrefs.push((names, tok.text == "NOCROSSREFS_TO", loc));
                }
                "REGION_ALIAS" => {
                    let names = self.names("REGION_ALIAS")?;
                    if names.len() != 2 {
                        return Err(self.lex.err("REGION_ALIAS takes an alias and a region"));
                    }
                    self.script.region_aliases.push((names[0].clone(), names[1].clone()));
                }
                "MEMORY" => self.memory()?,
                "PHDRS" => self.phdrs()?,
                "SECTIONS" => self.sections()?,
                // Accepted and meaningless here: commons are always allocated.
                "FORCE_COMMON_ALLOCATION" | "INHIBIT_COMMON_ALLOCATION" => {}
                other => return Err(self.lex.err(format!("unknown directive: {other}"))),
            }
        }
    }

    /// `( a b, c )`: names separated by blanks or commas.
    fn names(&mut self, cmd: &str) -> Result<Vec<String>> {
        self.lex.expect("(").map_err(|e| e.context(cmd))?;
        let mut out = Vec::new();
        while !self.lex.consume(")")? {
            if !self.lex.consume(",")? {
                out.push(self.lex.word("name")?);
            }
        }
        Ok(out)
    }

    fn file_list(&mut self, in_group: bool, as_needed: bool) -> Result<()> {
        self.lex.expect("(")?;
        loop {
            let Some(t) = self.lex.next(false)? else { return Err(self.lex.err(") expected, but got end of file")) };
            match t.text.as_str() {
                _ if t.quoted => self.script.inputs.push(ScriptInput { name: t.text, as_needed, in_group }),
                ")" => return Ok(()),
                "," => {}
                "AS_NEEDED" => self.file_list(in_group, true)?,
                "(" | "{" | "}" | ";" => return Err(self.lex.err(format!("unexpected {} in a file list", t.text))),
                _ => self.script.inputs.push(ScriptInput { name: t.text, as_needed, in_group }),
            }
        }
    }

    /// `NAME op EXPR [;]` if the next tokens are one; otherwise nothing is consumed.
    fn try_assignment(&mut self) -> Result<Option<Assign>> {
        self.lex.skip_blank()?;
        let saved = self.lex.frames.clone();
        let loc = self.lex.loc();
        let name = match self.lex.next(true)? {
            Some(t) if t.quoted || is_symbol_word(&t.text) => t.text,
            _ => {
                self.lex.frames = saved;
                return Ok(None);
            }
        };
        let op = match self.lex.next(true)? {
            Some(t) if !t.quoted && ASSIGN_OPS.contains(&t.text.as_str()) => t.text,
            _ => {
                self.lex.frames = saved;
                return Ok(None);
            }
        };
        let value = self.expr()?;
        let expr = match op.as_str() {
            "=" => value,
            compound => {
                let (bin, _) = BinOp::of(&compound[..compound.len() - 1]).expect("compound assignment operators");
                let target = if name == "." { Expr::Dot } else { Expr::Sym(name.clone()) };
                Expr::Binary(bin, Box::new(target), Box::new(value))
            }
        };
        self.lex.consume(";")?;
        Ok(Some(Assign { name, expr, provide: false, hidden: false, loc }))
    }

    /// `PROVIDE(a = b)`, `PROVIDE_HIDDEN(a = b)`, `HIDDEN(a = b)`: the keyword already read.
    fn wrapped_assignment(&mut self, keyword: &str) -> Result<Assign> {
        self.lex.expect("(")?;
        let Some(mut a) = self.try_assignment_no_semicolon()? else {
            return Err(self.lex.err(format!("expected a symbol assignment inside {keyword}")));
        };
        self.lex.expect_expr(")")?;
        self.lex.consume(";")?;
        if a.name == "." {
            return Err(self.lex.err(format!("{keyword} cannot assign the location counter")));
        }
        a.provide = keyword.starts_with("PROVIDE");
        a.hidden = keyword != "PROVIDE";
        Ok(a)
    }

    fn try_assignment_no_semicolon(&mut self) -> Result<Option<Assign>> {
        self.lex.skip_blank()?;
        let loc = self.lex.loc();
        let name = match self.lex.next(true)? {
            Some(t) if t.quoted || is_symbol_word(&t.text) => t.text,
            _ => return Ok(None),
        };
        self.lex.expect_expr("=")?;
        let expr = self.expr()?;
        Ok(Some(Assign { name, expr, provide: false, hidden: false, loc }))
    }

    /// `ASSERT(expr, "message")`, the keyword already read.
    fn assert(&mut self) -> Result<Assert> {
        let loc = self.lex.loc();
        self.lex.expect_expr("(")?;
        let expr = self.expr()?;
        self.lex.expect_expr(",")?;
        let message = self.lex.word("message")?;
        self.lex.expect_expr(")")?;
        self.lex.consume(";")?;
        Ok(Assert { expr, message, loc })
    }

    // -- expressions --------------------------------------------------------------------------

    pub fn expr(&mut self) -> Result<Expr> {
        self.nested(|p| {
            let lhs = p.unary()?;
            p.binary(lhs, 0)
        })
    }

    /// Runs `f` one nesting level deeper, refusing to go past `MAX_EXPR_DEPTH`.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_EXPR_DEPTH {
            return Err(self.lex.err(format!("expression nested more than {MAX_EXPR_DEPTH} levels deep")));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// Precedence climbing over lld's table; `?:` binds loosest and to the right.
    fn binary(&mut self, mut lhs: Expr, min: u8) -> Result<Expr> {
        loop {
            let Some(t) = self.lex.peek(true)? else { return Ok(lhs) };
            if t.quoted {
                return Ok(lhs);
            }
            if t.text == "?" && min <= 1 {
                self.lex.next(true)?;
                let yes = self.expr()?;
                self.lex.expect_expr(":")?;
                let no = self.expr()?;
                lhs = Expr::Cond(Box::new(lhs), Box::new(yes), Box::new(no));
                continue;
            }
            let Some((op, prec)) = BinOp::of(&t.text) else { return Ok(lhs) };
            if prec < min {
                return Ok(lhs);
            }
            self.lex.next(true)?;
            let mut rhs = self.unary()?;
            while let Some(n) = self.lex.peek(true)? {
                match BinOp::of(&n.text) {
                    Some((_, p)) if !n.quoted && p > prec => rhs = self.binary(rhs, p)?,
                    _ => break,
                }
            }
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
    }

    fn unary(&mut self) -> Result<Expr> {
        self.nested(Self::unary_inner)
    }

    fn unary_inner(&mut self) -> Result<Expr> {
        match self.lex.peek(true)? {
            Some(t) if !t.quoted && t.text == "-" => {
                self.lex.next(true)?;
                Ok(Expr::Neg(Box::new(self.unary()?)))
            }
            Some(t) if !t.quoted && t.text == "+" => {
                self.lex.next(true)?;
                self.unary()
            }
            Some(t) if !t.quoted && t.text == "~" => {
                self.lex.next(true)?;
                Ok(Expr::Complement(Box::new(self.unary()?)))
            }
            Some(t) if !t.quoted && t.text == "!" => {
                self.lex.next(true)?;
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            _ => self.primary(),
        }
    }

    fn paren_name(&mut self) -> Result<String> {
        self.lex.expect_expr("(")?;
        let name = match self.lex.next(false)? {
            Some(t) if t.quoted || !matches!(t.text.as_str(), "(" | ")") => t.text,
            _ => return Err(self.lex.err("name expected")),
        };
        self.lex.expect_expr(")")?;
        Ok(name)
    }

    fn paren_expr(&mut self) -> Result<Expr> {
        self.lex.expect_expr("(")?;
        let e = self.expr()?;
        self.lex.expect_expr(")")?;
        Ok(e)
    }

    fn two_args(&mut self) -> Result<(Box<Expr>, Box<Expr>)> {
        self.lex.expect_expr("(")?;
        let a = self.expr()?;
        self.lex.expect_expr(",")?;
        let b = self.expr()?;
        self.lex.expect_expr(")")?;
        Ok((Box::new(a), Box::new(b)))
    }

    fn primary(&mut self) -> Result<Expr> {
        let Some(t) = self.lex.next(true)? else { return Err(self.lex.err("unexpected EOF")) };
        if t.quoted {
            return Ok(Expr::Sym(t.text));
        }
        let e = match t.text.as_str() {
            "(" => {
                let e = self.expr()?;
                self.lex.expect_expr(")")?;
                e
            }
            "." => Expr::Dot,
            "ABSOLUTE" => Expr::Absolute(Box::new(self.paren_expr()?)),
            "ADDR" => Expr::Addr(self.paren_name()?),
            "LOADADDR" => Expr::LoadAddr(self.paren_name()?),
            "SIZEOF" => Expr::SizeOf(self.paren_name()?),
            "ALIGNOF" => Expr::AlignOf(self.paren_name()?),
            "DEFINED" => Expr::Defined(self.paren_name()?),
            "ORIGIN" | "org" | "o" if self.lex.peek_is("(")? => Expr::Origin(self.paren_name()?),
            "LENGTH" | "len" | "l" if self.lex.peek_is("(")? => Expr::Length(self.paren_name()?),
            "SIZEOF_HEADERS" => Expr::SizeOfHeaders,
            "ALIGN" => {
                self.lex.expect_expr("(")?;
                let a = self.expr()?;
                let e = if self.lex.consume(",")? {
                    let b = self.expr()?;
                    Expr::Align(Some(Box::new(a)), Box::new(b))
                } else {
                    Expr::Align(None, Box::new(a))
                };
                self.lex.expect_expr(")")?;
                e
            }
            "MAX" => {
                let (a, b) = self.two_args()?;
                Expr::Max(a, b)
            }
            "MIN" => {
                let (a, b) = self.two_args()?;
                Expr::Min(a, b)
            }
            "LOG2CEIL" => Expr::Log2Ceil(Box::new(self.paren_expr()?)),
            "CONSTANT" => match self.paren_name()?.as_str() {
                "MAXPAGESIZE" => Expr::PageSize(true),
                "COMMONPAGESIZE" => Expr::PageSize(false),
                other => return Err(self.lex.err(format!("unknown constant: {other}"))),
            },
            "DATA_SEGMENT_ALIGN" => {
                let (a, b) = self.two_args()?;
                Expr::DataSegmentAlign(a, b)
            }
            "DATA_SEGMENT_RELRO_END" => {
                let (a, b) = self.two_args()?;
                Expr::DataSegmentRelroEnd(a, b)
            }
            "DATA_SEGMENT_END" => Expr::DataSegmentEnd(Box::new(self.paren_expr()?)),
            "SEGMENT_START" => {
                self.lex.expect_expr("(")?;
                let name = self.lex.word("segment name")?;
                self.lex.expect_expr(",")?;
                let e = self.expr()?;
                self.lex.expect_expr(")")?;
                Expr::SegmentStart(name, Box::new(e))
            }
            "NEXT" => Expr::Align(None, Box::new(self.paren_expr()?)),
            "ASSERT" => {
                let a = self.assert_expr()?;
                Expr::Assert(Box::new(a.expr), a.message)
            }
            w if w.as_bytes()[0].is_ascii_digit() => match parse_integer(w) {
                Some(n) => Expr::Num(n),
                None => return Err(self.lex.err(format!("malformed number: {w}"))),
            },
            w if is_symbol_word(w) => Expr::Sym(w.to_string()),
            w => return Err(self.lex.err(format!("unexpected '{w}' in an expression"))),
        };
        Ok(e)
    }

    fn assert_expr(&mut self) -> Result<Assert> {
        let loc = self.lex.loc();
        self.lex.expect_expr("(")?;
        let expr = self.expr()?;
        self.lex.expect_expr(",")?;
        let message = self.lex.word("message")?;
        self.lex.expect_expr(")")?;
        Ok(Assert { expr, message, loc })
    }

    // -- MEMORY and PHDRS ---------------------------------------------------------------------

    fn memory(&mut self) -> Result<()> {
        self.lex.expect("{")?;
        loop {
            let Some(t) = self.lex.next(true)? else { return Err(self.lex.err("} expected, but got end of file")) };
            if t.text == "}" && !t.quoted {
                return Ok(());
            }
            if t.text == "INCLUDE" && !t.quoted {
                self.lex.include()?;
                continue;
            }
            let loc = self.lex.loc();
            let mut attrs = String::new();
            if self.lex.consume("(")? {
                while !self.lex.consume(")")? {
                    attrs.push_str(&self.lex.word("attribute")?);
                }
            }
            self.lex.expect_expr(":")?;
            let mut origin = None;
            let mut length = None;
            for _ in 0..2 {
                let Some(k) = self.lex.next(true)? else { break };
                let slot = match k.text.as_str() {
                    "ORIGIN" | "org" | "o" => &mut origin,
                    "LENGTH" | "len" | "l" => &mut length,
                    other => return Err(self.lex.err(format!("expected ORIGIN or LENGTH, but got {other}"))),
                };
                self.lex.expect_expr("=")?;
                *slot = Some(self.expr()?);
                self.lex.consume(",")?;
            }
            let (Some(origin), Some(length)) = (origin, length) else {
                return Err(self.lex.err(format!("memory region {} needs ORIGIN and LENGTH", t.text)));
            };
            self.script.memory.push(Region { name: t.text, attrs, origin, length, loc });
        }
    }

    fn phdrs(&mut self) -> Result<()> {
        self.script.has_phdrs = true;
        self.lex.expect("{")?;
        loop {
            let Some(t) = self.lex.next(false)? else { return Err(self.lex.err("} expected, but got end of file")) };
            if t.text == "}" && !t.quoted {
                return Ok(());
            }
            let loc = self.lex.loc();
            let ty = self.lex.word("program header type")?;
            let p_type = match phdr_type(&ty) {
                Some(v) => v,
                None => return Err(self.lex.err(format!("invalid program header type: {ty}"))),
            };
            let mut ph = PhdrCmd { name: t.text, p_type, filehdr: false, phdrs: false, at: None, flags: None, loc };
            loop {
                let Some(k) = self.lex.next(false)? else { return Err(self.lex.err("; expected")) };
                match k.text.as_str() {
                    ";" => break,
                    "FILEHDR" => ph.filehdr = true,
                    "PHDRS" => ph.phdrs = true,
                    "AT" => ph.at = Some(self.paren_expr()?),
                    "FLAGS" => ph.flags = Some(self.paren_expr()?),
                    other => return Err(self.lex.err(format!("unexpected {other} in PHDRS"))),
                }
            }
            self.script.phdrs.push(ph);
        }
    }

    // -- SECTIONS -----------------------------------------------------------------------------

    fn sections(&mut self) -> Result<()> {
        self.lex.expect("{")?;
        let mut cmds = Vec::new();
        loop {
            if let Some(a) = self.try_assignment()? {
                cmds.push(SectionsCmd::Assign(a));
                continue;
            }
            let Some(t) = self.lex.next(false)? else { return Err(self.lex.err("} expected, but got end of file")) };
            if t.quoted {
                cmds.push(SectionsCmd::Output(Box::new(self.output_desc(t.text)?)));
                continue;
            }
            match t.text.as_str() {
                "}" => break,
                ";" => {}
                "INCLUDE" => self.lex.include()?,
                "ENTRY" => {
                    self.lex.expect("(")?;
                    self.script.entry = Some(self.lex.word("symbol name")?);
                    self.lex.expect(")")?;
                }
                "ASSERT" => cmds.push(SectionsCmd::Assert(self.assert()?)),
                "PROVIDE" | "PROVIDE_HIDDEN" | "HIDDEN" => {
                    cmds.push(SectionsCmd::Assign(self.wrapped_assignment(&t.text)?))
                }
                "OVERLAY" => self.overlay(&mut cmds)?,
                "{" | "(" | ")" | "," => return Err(self.lex.err(format!("unexpected {}", t.text))),
                _ => cmds.push(SectionsCmd::Output(Box::new(self.output_desc(t.text)?))),
            }
        }
        if self.lex.consume("INSERT")? {
            let after = match self.lex.word("AFTER or BEFORE")?.as_str() {
                "AFTER" => true,
                "BEFORE" => false,
                other => return Err(self.lex.err(format!("expected AFTER/BEFORE, but got {other}"))),
            };
            let name = self.lex.word("section name")?;
            self.script.inserts.push(Insert { after, name, cmds });
        } else {
            self.script.has_sections = true;
            self.script.sections.extend(cmds);
        }
        Ok(())
    }

    /// `OVERLAY [start] : [NOCROSSREFS] [AT(lma)] { name { ... } ... } [>region] [:phdr] [=fill]`,
    /// as lld reads it: every section at the same address (the first at `start`, default `.`),
    /// loaded one after the other from `lma` (default: that address), then `.` past the largest.
    fn overlay(&mut self, cmds: &mut Vec<SectionsCmd>) -> Result<()> {
        let loc = self.lex.loc();
        let start = if self.lex.consume(":")? {
            None
        } else {
            let e = self.expr()?;
            self.lex.expect_expr(":")?;
            Some(e)
        };
        if self.lex.consume("NOCROSSREFS")? {
            return Err(self.lex.err("OVERLAY's NOCROSSREFS is not supported"));
        }
        let lma = if self.lex.consume("AT")? { Some(self.paren_expr()?) } else { None };
        self.lex.expect("{")?;
        let mut members: Vec<OutputDesc> = Vec::new();
        loop {
            let Some(t) = self.lex.next(false)? else { return Err(self.lex.err("} expected, but got end of file")) };
            if t.text == "}" && !t.quoted {
                break;
            }
            let mut d = OutputDesc::new(t.text, loc.clone());
            self.lex.expect("{")?;
            self.section_body(&mut d)?;
            match members.first() {
                None => {
                    d.addr = start.clone();
                    d.lma = Some(lma.clone().unwrap_or(Expr::Dot));
                }
                Some(first) => {
                    let prev = &members.last().unwrap().name;
                    d.addr = Some(Expr::Addr(first.name.clone()));
                    d.lma = Some(Expr::Binary(
                        BinOp::Add,
                        Box::new(Expr::LoadAddr(prev.clone())),
                        Box::new(Expr::SizeOf(prev.clone())),
                    ));
                }
            }
            members.push(d);
        }
        let Some(first) = members.first() else { return Err(self.lex.err("OVERLAY without sections")) };
        // What follows the overlay applies to every section of it.
        let mut tail = OutputDesc { cmds: Vec::new(), ..first.clone() };
        tail.region = None;
        tail.phdrs = Vec::new();
        tail.fill = None;
        self.section_trailer(&mut tail)?;
        let largest = members
            .iter()
            .map(|m| Expr::SizeOf(m.name.clone()))
            .reduce(|a, b| Expr::Max(Box::new(a), Box::new(b)))
            .expect("one section at least");
        let dot = Expr::Binary(BinOp::Add, Box::new(Expr::Addr(first.name.clone())), Box::new(largest));
        for mut m in members {
            if tail.region.is_some() {
                m.region = tail.region.clone();
            }
            m.phdrs.extend(tail.phdrs.iter().cloned());
            if m.fill.is_none() {
                m.fill = tail.fill.clone();
            }
            cmds.push(SectionsCmd::Output(Box::new(m)));
        }
        cmds.push(SectionsCmd::Assign(Assign { name: ".".into(), expr: dot, provide: false, hidden: false, loc }));
        Ok(())
    }

    fn output_desc(&mut self, name: String) -> Result<OutputDesc> {
        let loc = self.lex.loc();
        let mut d = OutputDesc::new(name, loc);
        // [address] [(type)] :
        if !self.lex.peek_is(":")? && !self.type_follows()? {
            d.addr = Some(self.expr()?);
        }
        if self.type_follows()? {
            self.lex.expect("(")?;
            let ty = self.lex.word("section type")?;
            d.ty = Some(match ty.as_str() {
                "NOLOAD" => OutputType::NoLoad,
                "COPY" | "INFO" | "OVERLAY" | "DSECT" => OutputType::NotAlloc,
                other => return Err(self.lex.err(format!("unknown section type {other}"))),
            });
            self.lex.expect(")")?;
        }
        self.lex.expect_expr(":")?;
        loop {
            let Some(t) = self.lex.peek(false)? else { return Err(self.lex.err("{ expected")) };
            match t.text.as_str() {
                "AT" => {
                    self.lex.next(false)?;
                    d.lma = Some(self.paren_expr()?);
                }
                "ALIGN" => {
                    self.lex.next(false)?;
                    d.align = Some(self.paren_expr()?);
                }
                "SUBALIGN" => {
                    self.lex.next(false)?;
                    d.subalign = Some(self.paren_expr()?);
                }
                "ALIGN_WITH_INPUT" => return Err(self.lex.err("ALIGN_WITH_INPUT is not supported")),
                "ONLY_IF_RO" => {
                    self.lex.next(false)?;
                    d.constraint = Some(Constraint::ReadOnly);
                }
                "ONLY_IF_RW" => {
                    self.lex.next(false)?;
                    d.constraint = Some(Constraint::ReadWrite);
                }
                "{" => {
                    self.lex.next(false)?;
                    break;
                }
                other => return Err(self.lex.err(format!("{{ expected, but got {other}"))),
            }
        }
        self.section_body(&mut d)?;
        Ok(d)
    }

    /// An output section description's contents after its `{`, and what may follow its `}`.
    fn section_body(&mut self, d: &mut OutputDesc) -> Result<()> {
        loop {
            if let Some(a) = self.try_assignment()? {
                d.cmds.push(OutputCmd::Assign(a));
                continue;
            }
            let Some(t) = self.lex.peek(false)? else { return Err(self.lex.err("} expected, but got end of file")) };
            let kw = if t.quoted { "" } else { t.text.as_str() };
            match kw {
                "}" => {
                    self.lex.next(false)?;
                    break;
                }
                ";" | "CONSTRUCTORS" => {
                    self.lex.next(false)?;
                }
                "INCLUDE" => {
                    self.lex.next(false)?;
                    self.lex.include()?;
                }
                "ASSERT" => {
                    self.lex.next(false)?;
                    d.cmds.push(OutputCmd::Assert(self.assert()?));
                }
                "PROVIDE" | "PROVIDE_HIDDEN" | "HIDDEN" => {
                    self.lex.next(false)?;
                    d.cmds.push(OutputCmd::Assign(self.wrapped_assignment(kw)?));
                }
                "BYTE" | "SHORT" | "LONG" | "QUAD" | "SQUAD" => {
                    self.lex.next(false)?;
                    let size = match kw {
                        "BYTE" => 1,
                        "SHORT" => 2,
                        "LONG" => 4,
                        _ => 8,
                    };
                    d.cmds.push(OutputCmd::Data(size, self.paren_expr()?));
                    self.lex.consume(";")?;
                }
                "FILL" => {
                    self.lex.next(false)?;
                    d.cmds.push(OutputCmd::Fill(self.paren_expr()?));
                    self.lex.consume(";")?;
                }
                "KEEP" => {
                    self.lex.next(false)?;
                    self.lex.expect("(")?;
                    let mut desc = self.input_desc()?;
                    desc.keep = true;
                    self.lex.expect(")")?;
                    d.cmds.push(OutputCmd::Input(desc));
                }
                "INPUT_SECTION_FLAGS" => return Err(self.lex.err("INPUT_SECTION_FLAGS is not supported")),
                _ => {
                    let desc = self.input_desc()?;
                    d.cmds.push(OutputCmd::Input(desc));
                }
            }
        }
        self.section_trailer(d)
    }

    /// What may follow a section description's `}`: `[>region] [AT>region] [:phdr ...] [=fill] [,]`.
    fn section_trailer(&mut self, d: &mut OutputDesc) -> Result<()> {
        while let Some(t) = self.lex.peek(false)? {
            if t.quoted {
                break;
            }
            if let Some(r) = t.text.strip_prefix('>').filter(|r| !r.is_empty()) {
                self.lex.next(false)?;
                d.region = Some(r.to_string());
            } else if t.text == ">" {
                self.lex.next(false)?;
                d.region = Some(self.lex.word("memory region")?);
            } else if t.text == "AT" {
                self.lex.next(false)?;
                let r = self.lex.word("memory region")?;
                let r = match r.strip_prefix('>') {
                    Some("") => self.lex.word("memory region")?,
                    Some(r) => r.to_string(),
                    None => return Err(self.lex.err("> expected after AT")),
                };
                d.lma_region = Some(r);
            } else if t.text == "AT>" {
                self.lex.next(false)?;
                d.lma_region = Some(self.lex.word("memory region")?);
            } else if let Some(p) = t.text.strip_prefix(':') {
                // `:phdr` (also `:phdr` right after `}` with no blank: one word here).
                self.lex.next(false)?;
                let p = if p.is_empty() { self.lex.word("program header name")? } else { p.to_string() };
                d.phdrs.push(p);
            } else if let Some(f) = t.text.strip_prefix('=') {
                self.lex.next(false)?;
                d.fill = Some(if f.is_empty() {
                    self.expr()?
                } else {
                    match parse_integer(f) {
                        Some(n) => Expr::Num(n),
                        None => return Err(self.lex.err(format!("malformed number: {f}"))),
                    }
                });
            } else if t.text == "," {
                self.lex.next(false)?;
            } else {
                break;
            }
        }
        Ok(())
    }

    /// Whether `( NOLOAD )` (or another section type) comes next.
    fn type_follows(&mut self) -> Result<bool> {
        let saved = self.lex.frames.clone();
        let mut yes = false;
        if self.lex.consume("(")? {
            yes = self
                .lex
                .next(false)?
                .is_some_and(|t| matches!(t.text.as_str(), "NOLOAD" | "COPY" | "INFO" | "OVERLAY" | "DSECT"))
                && self.lex.peek_is(")")?;
        }
        self.lex.frames = saved;
        Ok(yes)
    }

    /// `FILE-PATTERN [( SECTION-PATTERNS )]`, `EXCLUDE_FILE(...) FILE-PATTERN (...)`.
    fn input_desc(&mut self) -> Result<InputDesc> {
        let loc = self.lex.loc();
        let mut exclude_files = Vec::new();
        if self.lex.consume("EXCLUDE_FILE")? {
            exclude_files = self.names("EXCLUDE_FILE")?;
        }
        let file = self.lex.word("file pattern")?;
        // A bare word with the section list glued on: `*(.text)` is one token in normal mode only
        // when written without blanks before '(', which the lexer already splits.
        let mut desc = InputDesc { file, exclude_files, sections: Vec::new(), keep: false, loc };
        if desc.file == "SORT" || desc.file == "SORT_BY_NAME" {
            // `SORT(*)(.ctors)`: files sorted by name (sections keep the order below).
            self.lex.expect("(")?;
            desc.file = self.lex.word("file pattern")?;
            self.lex.expect(")")?;
        }
        if self.lex.consume("(")? {
            self.section_patterns(&mut desc.sections, Vec::new(), (Sort::Unsorted, Sort::Unsorted), 0)?;
        }
        Ok(desc)
    }

    /// Patterns up to the closing ')' (read): plain globs, `EXCLUDE_FILE(...)` before them, and
    /// `SORT*( ... )` around them.
    fn section_patterns(
        &mut self,
        out: &mut Vec<SectionPattern>,
        mut exclude: Vec<String>,
        sort: (Sort, Sort),
        depth: u32,
    ) -> Result<()> {
        loop {
            let Some(t) = self.lex.next(false)? else { return Err(self.lex.err(") expected, but got end of file")) };
            if t.quoted {
                out.push(SectionPattern { exclude_files: exclude.clone(), pattern: t.text, sort });
                continue;
            }
            let kind = match t.text.as_str() {
                ")" => return Ok(()),
                "," => continue,
                "EXCLUDE_FILE" => {
                    exclude = self.names("EXCLUDE_FILE")?;
                    continue;
                }
                "SORT" | "SORT_BY_NAME" => Some(Sort::Name),
                "SORT_BY_ALIGNMENT" => Some(Sort::Alignment),
                "SORT_BY_INIT_PRIORITY" => Some(Sort::InitPriority),
                "SORT_NONE" => Some(Sort::None),
                "(" | "{" | "}" | ";" => return Err(self.lex.err(format!("unexpected {} in a section list", t.text))),
                _ => None,
            };
            match kind {
                Some(k) if self.lex.peek_is("(")? => {
                    if depth >= 2 {
                        return Err(self.lex.err("SORT nested too deeply"));
                    }
                    self.lex.next(false)?;
                    let s = if sort.0 == Sort::Unsorted { (k, Sort::Unsorted) } else { (sort.0, k) };
                    self.section_patterns(out, exclude.clone(), s, depth + 1)?;
                }
                _ => out.push(SectionPattern { exclude_files: exclude.clone(), pattern: t.text, sort }),
            }
        }
    }
}

/// A word that can name a symbol or be `.` in an expression.
fn is_symbol_word(w: &str) -> bool {
    let b = w.as_bytes();
    !b.is_empty() && (b[0].is_ascii_alphabetic() || b"_.$".contains(&b[0]))
}

/// lld's integers: decimal, `0x` hex, `h` suffix hex, `K`/`M` suffixes (x1024, x1024²).
pub fn parse_integer(w: &str) -> Option<u64> {
    let lower = w.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0x") {
        return u64::from_str_radix(h, 16).ok();
    }
    if let Some(h) = lower.strip_suffix('h') {
        return u64::from_str_radix(h, 16).ok();
    }
    let (digits, scale) = match lower.as_bytes().last() {
        Some(b'k') => (&lower[..lower.len() - 1], 1u64 << 10),
        Some(b'm') => (&lower[..lower.len() - 1], 1u64 << 20),
        _ => (lower.as_str(), 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

fn phdr_type(t: &str) -> Option<u32> {
    use object::elf;
    Some(match t {
        "PT_NULL" => elf::PT_NULL,
        "PT_LOAD" => elf::PT_LOAD,
        "PT_DYNAMIC" => elf::PT_DYNAMIC,
        "PT_INTERP" => elf::PT_INTERP,
        "PT_NOTE" => elf::PT_NOTE,
        "PT_SHLIB" => elf::PT_SHLIB,
        "PT_PHDR" => elf::PT_PHDR,
        "PT_TLS" => elf::PT_TLS,
        "PT_GNU_EH_FRAME" => elf::PT_GNU_EH_FRAME,
        "PT_GNU_STACK" => elf::PT_GNU_STACK,
        "PT_GNU_RELRO" => elf::PT_GNU_RELRO,
        "PT_GNU_PROPERTY" => elf::PT_GNU_PROPERTY,
        n => return parse_integer(n).and_then(|v| u32::try_from(v).ok()),
    })
}

/// Whether any script has `SECTIONS`.
pub fn has_sections(scripts: &[ScriptFile]) -> bool {
    scripts.iter().any(|f| f.script.has_sections)
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
        let err = |t: &str| parse(t).unwrap_err().to_string();
        assert!(err("/* open").contains("unclosed comment"));
        assert!(err("\n\nVERSION { ver_x /*").contains("<script>:3: unclosed comment"), "{}", err("VERSION { x /*"));
        assert!(err("GROUP a.o").contains("( expected"));
        assert!(err("GROUP ( a.o").contains(") expected"));
        assert!(err("OUTPUT_FORMAT(elf32-i386)").contains("unsupported output format"));
        assert!(err("FOO(x)").contains("unknown directive: FOO"));
        assert!(parse("OUTPUT_FORMAT(\"elf64-x86-64\", \"elf64-x86-64\", \"elf64-x86-64\")").is_ok());
        assert!(!looks_like_script(b"\x7fELF\x02"));
        assert!(looks_like_script(b"  GROUP ( x )"));
    }

    #[test]
    fn commands_and_assignments() {
        let s = parse(
            "ENTRY(go) SEARCH_DIR(/x) EXTERN(a b, c) OUTPUT(out) TARGET(elf64-x86-64)\n\
             bar = foo; baz=foo+0x10*2; PROVIDE(p = 1K); HIDDEN(h = ~0 & 0xff);\n\
             ASSERT(bar != 0, \"bar is zero\")\nVERSION { v1 { global: foo; local: *; }; }\n\
             NOCROSSREFS(.text .data)",
        )
        .unwrap();
        assert_eq!(s.entry.as_deref(), Some("go"));
        assert_eq!(s.search_dirs, ["/x"]);
        assert_eq!(s.externs, ["a", "b", "c"]);
        assert_eq!(s.output.as_deref(), Some("out"));
        assert_eq!(s.commands.len(), 5);
        let SectionsCmd::Assign(a) = &s.commands[1] else { panic!() };
        assert_eq!(a.name, "baz");
        assert_eq!(
            a.expr,
            Expr::Binary(
                BinOp::Add,
                Box::new(Expr::Sym("foo".into())),
                Box::new(Expr::Binary(BinOp::Mul, Box::new(Expr::Num(16)), Box::new(Expr::Num(2))))
            )
        );
        let SectionsCmd::Assign(p) = &s.commands[2] else { panic!() };
        assert!(p.provide && !p.hidden && p.expr == Expr::Num(1024));
        assert_eq!(s.versions.len(), 1);
        assert_eq!(s.nocrossrefs[0].0, [".text", ".data"]);
        assert_eq!(parse_integer("0x10"), Some(16));
        assert_eq!(parse_integer("10h"), Some(16));
        assert_eq!(parse_integer("2M"), Some(2 << 20));
    }

    #[test]
    fn sections_memory_phdrs() {
        let s = parse(
            "MEMORY { rom (rx) : ORIGIN = 0x1000, LENGTH = 64K\n ram (rwx) : org = 0x20000, l = 1M }\n\
             PHDRS { text PT_LOAD FILEHDR PHDRS; data PT_LOAD FLAGS(6); }\n\
             SECTIONS {\n . = 0x400000 + SIZEOF_HEADERS;\n\
             .text ALIGN(16) : AT(0x1000) { KEEP(*(.init)) *(.text .text.*) *(EXCLUDE_FILE(*b.o) .x) } >rom AT>ram :text =0x90\n\
             .data : { __d = .; *(SORT_BY_ALIGNMENT(SORT_BY_NAME(.data*))) BYTE(1) . += 4; } > ram :data\n\
             .bss (NOLOAD) : { libc.a:*(.bss) *(COMMON) }\n /DISCARD/ : { *(.comment) }\n}\n\
             SECTIONS { .extra : { *(.extra) } } INSERT AFTER .text",
        )
        .unwrap();
        assert_eq!(s.memory.len(), 2);
        assert_eq!(s.memory[1].origin, Expr::Num(0x20000));
        assert_eq!(s.phdrs.len(), 2);
        assert!(s.phdrs[0].filehdr && s.phdrs[0].phdrs);
        assert_eq!(s.sections.len(), 5);
        let SectionsCmd::Output(text) = &s.sections[1] else { panic!() };
        assert_eq!(text.name, ".text");
        assert!(text.addr.is_some() && text.lma.is_some());
        assert_eq!(text.region.as_deref(), Some("rom"));
        assert_eq!(text.lma_region.as_deref(), Some("ram"));
        assert_eq!(text.phdrs, ["text"]);
        assert_eq!(text.fill, Some(Expr::Num(0x90)));
        assert_eq!(text.cmds.len(), 3);
        let OutputCmd::Input(keep) = &text.cmds[0] else { panic!() };
        assert!(keep.keep && keep.sections[0].pattern == ".init");
        let OutputCmd::Input(ex) = &text.cmds[2] else { panic!() };
        assert_eq!(ex.sections[0].exclude_files, ["*b.o"]);
        let SectionsCmd::Output(data) = &s.sections[2] else { panic!() };
        assert_eq!(data.cmds.len(), 4);
        let OutputCmd::Input(sorted) = &data.cmds[1] else { panic!() };
        assert_eq!(sorted.sections[0].sort, (Sort::Alignment, Sort::Name));
        let SectionsCmd::Output(bss) = &s.sections[3] else { panic!() };
        assert_eq!(bss.ty, Some(OutputType::NoLoad));
        let OutputCmd::Input(member) = &bss.cmds[0] else { panic!() };
        assert_eq!(member.file, "libc.a:*");
        assert_eq!(s.inserts.len(), 1);
        assert!(s.inserts[0].after && s.inserts[0].name == ".text");
    }

    #[test]
    fn includes_are_read_through_the_callback() {
        let mut calls = 0;
        let mut inc = |name: &str| {
            calls += 1;
            assert_eq!(name, "more.ld");
            Ok(("more.ld".to_string(), "bar = 2;\n/* open".to_string()))
        };
        let e = parse_with("main.ld", "foo = 1;\nINCLUDE more.ld\nbaz = 3;", &mut inc).unwrap_err();
        assert!(e.to_string().contains("more.ld:2: unclosed comment"), "{e}");
        let mut inc = |_: &str| Ok(("more.ld".to_string(), "bar = 2;".to_string()));
        let s = parse_with("main.ld", "foo = 1;\nINCLUDE more.ld\nbaz = 3;", &mut inc).unwrap();
        assert_eq!(s.commands.len(), 3);
    }

    #[test]
    fn never_panics_on_mutations() {
        let base = b"/* c */ OUTPUT_FORMAT(elf64-x86-64) GROUP ( a.so b.a AS_NEEDED ( c.so ) ) SECTIONS { .t 0x10 : AT(4) { *(.t*) KEEP(*(SORT(.x))) LONG(a ? 1 : 2) } >r :p =0 } a = b + (c - 1);".to_vec();
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
                m[pos] = b"()/*\" ,AZ{};=:>"[(seed >> 59) as usize % 15];
            }
            if let Ok(t) = std::str::from_utf8(&m) {
                let _ = parse(t);
            }
        }
    }
}
