//! Linker scripts in the link: what the parsed scripts (`input::script`) change. Before
//! resolution they add roots (`EXTERN`, `ENTRY`, the symbols expressions name) and set options
//! (`ENTRY`, `OUTPUT`); after it their symbol assignments define symbols (`Def::Script`), with
//! lld's rules for `PROVIDE`, `HIDDEN` and which section a value belongs to; once addresses are
//! known the expressions are evaluated (`eval`, over an `Env` that layout or the symbol values
//! provide) and `ASSERT`s checked. Nothing here costs anything when no script was given.
use crate::args::Config;
use crate::ctx::{Resolved, Target};
use crate::diag::{Context, Result};
use crate::ids::{OutputSectionId, SymbolId};
use crate::input::script::{Assign, BinOp, Expr, Loc, Script, ScriptFile, ScriptSym, SectionsCmd};
use crate::resolve::{Def, Resolution};
use crate::{bail, ensure, fatal};
use object::elf;

/// A value of an expression: an address in section `sec` (None: absolute) and its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value {
    pub sec: Option<OutputSectionId>,
    pub val: u64,
    pub ty: u8,
}

impl Value {
    pub fn abs(val: u64) -> Value {
        Value { sec: None, val, ty: elf::STT_NOTYPE }
    }
}

/// What an output section looks like to an expression.
#[derive(Clone, Copy, Debug)]
pub struct SectionFacts {
    pub id: OutputSectionId,
    pub addr: u64,
    pub lma: u64,
    pub size: u64,
    pub align: u64,
}

/// What expressions ask of the link.
pub trait Env {
    /// A symbol's value (None: not defined).
    fn symbol(&self, name: &str) -> Option<Value>;
    fn defined(&self, name: &str) -> bool;
    /// The location counter (None: `.` means nothing here).
    fn dot(&self) -> Option<Value>;
    fn section(&self, name: &str) -> Option<SectionFacts>;
    fn sizeof_headers(&self) -> u64;
    fn page_size(&self, max: bool) -> u64;
    /// A `MEMORY` region's (origin, length).
    fn region(&self, name: &str) -> Option<(u64, u64)>;
}

pub fn align_to(v: u64, align: u64) -> u64 {
    if align <= 1 {
        v
    } else {
        v.wrapping_add(align - 1) / align * align
    }
}

/// Evaluates an expression with lld's rules for what stays relative to a section: a sum keeps
/// its relative operand's section, the difference of two relative values is absolute, and every
/// other operator gives an absolute number.
pub fn eval(e: &Expr, env: &dyn Env) -> Result<Value> {
    let abs = Value::abs;
    Ok(match e {
        Expr::Num(n) => abs(*n),
        Expr::Sym(name) => env.symbol(name).ok_or_else(|| fatal!("symbol not found: {name}"))?,
        Expr::Dot => env.dot().ok_or_else(|| fatal!("unable to get location counter value ('.' outside SECTIONS)"))?,
        Expr::Neg(a) => abs(eval(a, env)?.val.wrapping_neg()),
        Expr::Complement(a) => abs(!eval(a, env)?.val),
        Expr::Not(a) => abs((eval(a, env)?.val == 0) as u64),
        Expr::Binary(op, a, b) => binary(*op, eval(a, env)?, eval(b, env)?)?,
        Expr::Cond(c, y, n) => {
            if eval(c, env)?.val != 0 {
                eval(y, env)?
            } else {
                eval(n, env)?
            }
        }
        Expr::Align(None, a) => {
            let dot = env.dot().ok_or_else(|| fatal!("ALIGN(n) needs the location counter: use it inside SECTIONS"))?;
            let a = eval(a, env)?.val;
            Value { val: align_to(dot.val, a), ty: elf::STT_NOTYPE, ..dot }
        }
        Expr::Align(Some(v), a) => {
            let v = eval(v, env)?;
            Value { val: align_to(v.val, eval(a, env)?.val), ty: elf::STT_NOTYPE, ..v }
        }
        Expr::Absolute(a) => abs(eval(a, env)?.val),
        Expr::Addr(name) => {
            let s = env.section(name).ok_or_else(|| fatal!("undefined section {name}"))?;
            Value { sec: Some(s.id), val: s.addr, ty: elf::STT_NOTYPE }
        }
        Expr::LoadAddr(name) => abs(env.section(name).ok_or_else(|| fatal!("undefined section {name}"))?.lma),
        Expr::SizeOf(name) => abs(env.section(name).map_or(0, |s| s.size)),
        Expr::AlignOf(name) => abs(env.section(name).map_or(1, |s| s.align)),
        Expr::SizeOfHeaders => abs(env.sizeof_headers()),
        Expr::Defined(name) => abs(env.defined(name) as u64),
        Expr::Max(a, b) => abs(eval(a, env)?.val.max(eval(b, env)?.val)),
        Expr::Min(a, b) => abs(eval(a, env)?.val.min(eval(b, env)?.val)),
        Expr::Log2Ceil(a) => {
            let v = eval(a, env)?.val;
            abs(if v <= 1 { 0 } else { 64 - (v - 1).leading_zeros() as u64 })
        }
        Expr::PageSize(max) => abs(env.page_size(*max)),
        Expr::Origin(r) => abs(env.region(r).ok_or_else(|| fatal!("memory region not defined: {r}"))?.0),
        Expr::Length(r) => abs(env.region(r).ok_or_else(|| fatal!("memory region not defined: {r}"))?.1),
        // lld's simplification: the data segment starts on the next maximum page.
        Expr::DataSegmentAlign(max, _) => {
            let dot = env.dot().ok_or_else(|| fatal!("DATA_SEGMENT_ALIGN needs the location counter"))?;
            abs(align_to(dot.val, eval(max, env)?.val.max(1)))
        }
        Expr::DataSegmentRelroEnd(_, _) => {
            let dot = env.dot().ok_or_else(|| fatal!("DATA_SEGMENT_RELRO_END needs the location counter"))?;
            abs(align_to(dot.val, env.page_size(false)))
        }
        Expr::DataSegmentEnd(e) => eval(e, env)?,
        Expr::SegmentStart(_, default) => eval(default, env)?,
        Expr::Assert(e, message) => {
            let v = eval(e, env)?;
            ensure!(v.val != 0, "{message}");
            v
        }
    })
}

fn binary(op: BinOp, a: Value, b: Value) -> Result<Value> {
    let abs = Value::abs;
    let (x, y) = (a.val, b.val);
    // The relative operand's section (the left one's when both are relative).
    let rel = a.sec.or(b.sec);
    Ok(match op {
        BinOp::Add => Value { sec: rel, val: x.wrapping_add(y), ty: elf::STT_NOTYPE },
        BinOp::Sub => match (a.sec, b.sec) {
            (Some(_), Some(_)) | (None, _) => abs(x.wrapping_sub(y)),
            (Some(s), None) => Value { sec: Some(s), val: x.wrapping_sub(y), ty: elf::STT_NOTYPE },
        },
        BinOp::And => Value { sec: rel, val: x & y, ty: elf::STT_NOTYPE },
        BinOp::Or => Value { sec: rel, val: x | y, ty: elf::STT_NOTYPE },
        BinOp::Mul => abs(x.wrapping_mul(y)),
        BinOp::Div => {
            ensure!(y != 0, "division by zero");
            abs(x / y)
        }
        BinOp::Mod => {
            ensure!(y != 0, "modulo by zero");
            abs(x % y)
        }
        BinOp::Shl => abs(x.checked_shl(y as u32).unwrap_or(0)),
        BinOp::Shr => abs(x.checked_shr(y as u32).unwrap_or(0)),
        BinOp::Xor => abs(x ^ y),
        BinOp::Lt => abs((x < y) as u64),
        BinOp::Le => abs((x <= y) as u64),
        BinOp::Gt => abs((x > y) as u64),
        BinOp::Ge => abs((x >= y) as u64),
        BinOp::Eq => abs((x == y) as u64),
        BinOp::Ne => abs((x != y) as u64),
        BinOp::AndAnd => abs((x != 0 && y != 0) as u64),
        BinOp::OrOr => abs((x != 0 || y != 0) as u64),
    })
}

/// Whether an expression's value is absolute, decided before layout (as `binary` decides it
/// after): `rel` says whether a symbol name is relative.
fn is_absolute(e: &Expr, rel: &dyn Fn(&str) -> bool, dot_relative: bool) -> bool {
    let abs = |e: &Expr| is_absolute(e, rel, dot_relative);
    match e {
        Expr::Sym(n) => !rel(n),
        Expr::Dot | Expr::Align(None, _) => !dot_relative,
        Expr::Addr(_) => false,
        Expr::Align(Some(v), _) | Expr::Assert(v, _) | Expr::DataSegmentEnd(v) | Expr::SegmentStart(_, v) => abs(v),
        Expr::Binary(BinOp::Add | BinOp::And | BinOp::Or, a, b) => abs(a) && abs(b),
        Expr::Binary(BinOp::Sub, a, b) => abs(a) || !abs(b),
        Expr::Cond(_, y, n) => abs(y) && abs(n),
        _ => true,
    }
}

/// Symbols the scripts' expressions name, and their `EXTERN`s: resolved as roots (archive
/// members defining them are loaded), as lld does.
pub fn roots(scripts: &[ScriptFile]) -> Vec<String> {
    let mut out = Vec::new();
    for f in scripts {
        out.extend(f.script.externs.iter().cloned());
        for (a, _) in assignments(&f.script) {
            if !a.provide {
                symbols_in(&a.expr, &mut out);
            }
        }
    }
    out
}

fn symbols_in(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Sym(n) => out.push(n.clone()),
        Expr::Neg(a) | Expr::Not(a) | Expr::Complement(a) | Expr::Absolute(a) | Expr::Log2Ceil(a) => symbols_in(a, out),
        Expr::Binary(_, a, b) | Expr::Max(a, b) | Expr::Min(a, b) => {
            symbols_in(a, out);
            symbols_in(b, out);
        }
        Expr::Cond(c, y, n) => {
            symbols_in(c, out);
            symbols_in(y, out);
            symbols_in(n, out);
        }
        Expr::Align(v, a) => {
            if let Some(v) = v {
                symbols_in(v, out);
            }
            symbols_in(a, out);
        }
        Expr::Assert(v, _) | Expr::DataSegmentEnd(v) | Expr::SegmentStart(_, v) => symbols_in(v, out),
        _ => {}
    }
}

/// Every symbol assignment of a script, in order, with its command's index when it is outside
/// `SECTIONS`.
pub fn assignments(script: &Script) -> impl Iterator<Item = (&Assign, Option<usize>)> {
    use crate::input::script::OutputCmd;
    let top = script.commands.iter().enumerate().filter_map(|(i, c)| match c {
        SectionsCmd::Assign(a) => Some((a, Some(i))),
        _ => None,
    });
    let inserted = script.inserts.iter().flat_map(|i| i.cmds.iter());
    let sections = script.sections.iter().chain(inserted).flat_map(|c| -> Vec<(&Assign, Option<usize>)> {
        match c {
            SectionsCmd::Assign(a) => vec![(a, None)],
            SectionsCmd::Output(o) => o
                .cmds
                .iter()
                .filter_map(|c| match c {
                    OutputCmd::Assign(a) => Some((a, None)),
                    _ => None,
                })
                .collect(),
            SectionsCmd::Assert(_) => vec![],
        }
    });
    top.chain(sections).filter(|(a, _)| a.name != ".")
}

/// The options a script sets where the command line did not: `ENTRY` (`-e` wins), `OUTPUT`
/// (`-o` wins), `SEARCH_DIR` (after the `-L` directories). None when no script changes anything.
pub fn configure(config: &Config, scripts: &[ScriptFile]) -> Option<Config> {
    let entry = scripts.iter().find_map(|f| f.script.entry.clone());
    let output = scripts.iter().find_map(|f| f.script.output.clone());
    let dirs: Vec<&String> = scripts.iter().flat_map(|f| &f.script.search_dirs).collect();
    // An INSERTed output section whose address is a number is placed there, as GNU ld places
    // it: as if by --section-start, which the command line's own --section-start overrides.
    let starts: Vec<(String, u64)> = scripts
        .iter()
        .flat_map(|f| &f.script.inserts)
        .flat_map(|i| &i.cmds)
        .filter_map(|cmd| match cmd {
            SectionsCmd::Output(d) => match d.addr {
                Some(Expr::Num(n)) => Some((d.name.clone(), n)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    if entry.is_none() && output.is_none() && dirs.is_empty() && starts.is_empty() {
        return None;
    }
    let mut c = config.clone();
    c.section_starts.splice(0..0, starts);
    if c.entry.is_none() {
        c.entry = entry;
    }
    if let (false, Some(o)) = (config.output_given, output) {
        c.output = o.into();
    }
    c.lib_paths.extend(dirs.into_iter().map(std::path::PathBuf::from));
    Some(c)
}

/// Defines the symbols the scripts assign (`Def::Script`), after resolution: a plain assignment
/// replaces any definition; `PROVIDE` only defines a name something references and nothing
/// defines (lld: undefined, lazy or from a shared library); `HIDDEN`/`PROVIDE_HIDDEN` make it
/// hidden.
/// `command_line_roots`: the command line's own roots (`-e`, `-u`...); the names only scripts
/// made roots are no error when nothing defines them (an expression that needs one says so
/// when it is evaluated; an `EXTERN` name may stay undefined, as in lld).
pub fn declare_symbols<'a>(
    scripts: &'a [ScriptFile],
    command_line_roots: &[String],
    res: &mut Resolution<'a>,
) -> Result<Vec<ScriptSym>> {
    for name in roots(scripts) {
        if command_line_roots.contains(&name) {
            continue;
        }
        if let Some(id) = res.by_name.get(&res.symbols, name.as_bytes()) {
            res.symbols[id].undefined_ref = false;
        }
    }
    let mut syms: Vec<ScriptSym> = Vec::new();
    for (fi, f) in scripts.iter().enumerate() {
        for (k, (a, place)) in assignments(&f.script).enumerate() {
            let in_sections = place.is_none();
            if !in_sections && contains_dot(&a.expr) {
                bail!("{}: unable to get location counter value ('.' outside SECTIONS)", a.loc);
            }
            // The IRELATIVE bounds are where the linker put its `.rela.plt`, whatever the
            // script's `PROVIDE_HIDDEN(__rela_iplt_start = .)` says (GNU ld's default script
            // brackets its own `.rela.iplt` input, which rivet makes as a section of its own).
            if a.provide && matches!(a.name.as_str(), "__rela_iplt_start" | "__rela_iplt_end") {
                continue;
            }
            let id = if a.provide {
                let Some(id) = res.by_name.get(&res.symbols, a.name.as_bytes()) else { continue };
                let s = &res.symbols[id];
                let provided_here = matches!(s.def, Def::Script(i) if syms[i as usize].assign.provide);
                if !matches!(s.def, Def::Undefined | Def::Lazy { .. } | Def::Shared { .. }) && !provided_here {
                    continue;
                }
                id
            } else {
                res.intern(a.name.as_bytes())
            };
            let s = &mut res.symbols[id];
            s.def = Def::Script(syms.len() as u32);
            s.weak = false;
            if a.hidden {
                s.visibility = elf::STV_HIDDEN;
            }
            let place = place.map(|ci| (fi, ci));
            syms.push(ScriptSym {
                id,
                assign: a.clone(),
                in_sections,
                place,
                slot: (fi, k),
                absolute: false,
                ty: elf::STT_NOTYPE,
            });
        }
    }
    Ok(syms)
}

pub fn contains_dot(e: &Expr) -> bool {
    match e {
        Expr::Dot | Expr::Align(None, _) | Expr::DataSegmentAlign(..) | Expr::DataSegmentRelroEnd(..) => true,
        Expr::Neg(a) | Expr::Not(a) | Expr::Complement(a) | Expr::Absolute(a) | Expr::Log2Ceil(a) => contains_dot(a),
        Expr::Binary(_, a, b) | Expr::Max(a, b) | Expr::Min(a, b) => contains_dot(a) || contains_dot(b),
        Expr::Cond(c, y, n) => contains_dot(c) || contains_dot(y) || contains_dot(n),
        Expr::Align(Some(v), a) => contains_dot(v) || contains_dot(a),
        Expr::Assert(v, _) | Expr::DataSegmentEnd(v) | Expr::SegmentStart(_, v) => contains_dot(v),
        _ => false,
    }
}

/// Each script symbol's type and whether it is absolute, now that every symbol's definition is
/// known (before the relocation scan asks).
pub fn classify(ctx: &mut Resolved) {
    for i in 0..ctx.script_syms.len() {
        let rel = |name: &str| -> bool {
            let Some(id) = ctx.by_name.get(&ctx.symbols, name.as_bytes()) else { return false };
            match ctx.symbols[id].def {
                Def::Absolute(_) | Def::Undefined | Def::Lazy { .. } => false,
                Def::Script(j) => (j as usize) < i && !ctx.script_syms[j as usize].absolute,
                Def::Defined { file, sym } => {
                    ctx.objects[file].syms[sym as usize].st_shndx.get(object::LittleEndian) != elf::SHN_ABS
                }
                _ => true,
            }
        };
        let s = &ctx.script_syms[i];
        let absolute = is_absolute(&s.assign.expr, &rel, s.in_sections);
        let ty = match &s.assign.expr {
            Expr::Sym(n) => {
                ctx.by_name.get(&ctx.symbols, n.as_bytes()).map_or(elf::STT_NOTYPE, |id| match ctx.symbols[id].def {
                    Def::Script(j) if j as usize >= i => elf::STT_NOTYPE,
                    _ => ctx.sym_type(Target::Global(id)),
                })
            }
            _ => elf::STT_NOTYPE,
        };
        let id = s.id;
        ctx.script_syms[i].absolute = absolute;
        ctx.script_syms[i].ty = ty;
        if let Some(t) = ctx.global_types.get_mut(id) {
            *t = ty;
        }
    }
}

/// Evaluates the assignments and asserts outside `SECTIONS`, in script order, once every
/// section has its address; `set` records a symbol's new value (the environment sees it).
pub fn eval_top_level(ctx: &Resolved, env: &dyn Env, set: &mut dyn FnMut(SymbolId, Value)) -> Result<()> {
    // Only the assignments that defined their symbol (a PROVIDE may not have).
    let defining: rustc_hash::FxHashMap<(usize, usize), usize> =
        ctx.script_syms.iter().enumerate().filter_map(|(i, s)| Some((s.place?, i))).collect();
    for (fi, f) in ctx.script_files.iter().enumerate() {
        for (ci, c) in f.script.commands.iter().enumerate() {
            match c {
                SectionsCmd::Assign(a) => {
                    let Some(&i) = defining.get(&(fi, ci)) else { continue };
                    let s = &ctx.script_syms[i];
                    let mut v = eval(&a.expr, env).with_context(|| &a.loc)?;
                    if matches!(a.expr, Expr::Sym(_)) {
                        v.ty = s.ty;
                    }
                    set(s.id, v);
                }
                SectionsCmd::Assert(a) => check_assert(&a.expr, &a.message, &a.loc, env)?,
                SectionsCmd::Output(_) => {}
            }
        }
    }
    Ok(())
}

pub fn check_assert(e: &Expr, message: &str, loc: &Loc, env: &dyn Env) -> Result<()> {
    let v = eval(e, env).with_context(|| loc)?;
    if v.val == 0 {
        return Err(fatal!("{message}").context(loc));
    }
    Ok(())
}

/// The script commands rivet does not carry out yet: an error naming the script.
pub fn refuse_unsupported(scripts: &[ScriptFile]) -> Result<()> {
    for f in scripts {
        let s = &f.script;
        if s.has_phdrs && !s.has_sections {
            bail!("{}: PHDRS without SECTIONS is not supported yet", f.name);
        }
    }
    Ok(())
}

/// What a relocatable (`-r`) link cannot do with a script.
pub fn refused_with_relocatable(scripts: &[ScriptFile]) -> Option<&'static str> {
    scripts.iter().find_map(|f| {
        let s = &f.script;
        if s.has_sections || !s.inserts.is_empty() {
            Some("a linker script's SECTIONS")
        } else if !s.commands.is_empty() {
            Some("a linker script's symbol assignments and ASSERTs")
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::script::parse;

    struct TestEnv;
    impl Env for TestEnv {
        fn symbol(&self, name: &str) -> Option<Value> {
            match name {
                "foo" => Some(Value { sec: Some(OutputSectionId::new(1)), val: 0x1010, ty: elf::STT_FUNC }),
                "bar" => Some(Value { sec: Some(OutputSectionId::new(1)), val: 0x1030, ty: elf::STT_FUNC }),
                "abs" => Some(Value::abs(7)),
                _ => None,
            }
        }
        fn defined(&self, name: &str) -> bool {
            self.symbol(name).is_some()
        }
        fn dot(&self) -> Option<Value> {
            None
        }
        fn section(&self, name: &str) -> Option<SectionFacts> {
            (name == ".text").then_some(SectionFacts {
                id: OutputSectionId::new(1),
                addr: 0x1000,
                lma: 0x1000,
                size: 0x40,
                align: 16,
            })
        }
        fn sizeof_headers(&self) -> u64 {
            0x120
        }
        fn page_size(&self, _: bool) -> u64 {
            0x1000
        }
        fn region(&self, _: &str) -> Option<(u64, u64)> {
            None
        }
    }

    fn ev(text: &str) -> Value {
        let s = parse(&format!("x = {text};")).unwrap();
        let SectionsCmd::Assign(a) = &s.commands[0] else { panic!() };
        eval(&a.expr, &TestEnv).unwrap()
    }

    #[test]
    fn values_and_sections() {
        let text = Some(OutputSectionId::new(1));
        assert_eq!(ev("1 + 2 * 3"), Value::abs(7));
        assert_eq!(ev("(1 + 2) * 3 - 1"), Value::abs(8));
        assert_eq!(ev("1 << 4 | 1"), Value::abs(17));
        assert_eq!(ev("~0 & 0xff"), Value::abs(0xff));
        assert_eq!(ev("4K / 2 % 1000"), Value::abs(48));
        assert_eq!(ev("1 < 2 && 3 >= 3 ? 10 : 20"), Value::abs(10));
        assert_eq!(ev("!1 || 0"), Value::abs(0));
        assert_eq!(ev("foo"), Value { sec: text, val: 0x1010, ty: elf::STT_FUNC });
        assert_eq!(ev("foo + 1"), Value { sec: text, val: 0x1011, ty: 0 });
        assert_eq!(ev("1 + foo"), Value { sec: text, val: 0x1011, ty: 0 });
        assert_eq!(ev("bar - foo"), Value::abs(0x20));
        assert_eq!(ev("ADDR(.text) + SIZEOF(.text)"), Value { sec: text, val: 0x1040, ty: 0 });
        assert_eq!(ev("ABSOLUTE(foo)"), Value::abs(0x1010));
        assert_eq!(ev("ALIGN(foo, 0x100)"), Value { sec: text, val: 0x1100, ty: 0 });
        assert_eq!(ev("MAX(3, abs) + MIN(1, 2) + ALIGNOF(.text)"), Value::abs(24));
        assert_eq!(ev("DEFINED(foo) + DEFINED(nope)"), Value::abs(1));
        assert_eq!(ev("LOG2CEIL(17) + SIZEOF_HEADERS + CONSTANT(MAXPAGESIZE)"), Value::abs(5 + 0x120 + 0x1000));
        assert_eq!(ev("SIZEOF(.missing)"), Value::abs(0));
        let err = |t: &str| {
            let s = parse(&format!("x = {t};")).unwrap();
            let SectionsCmd::Assign(a) = &s.commands[0] else { panic!() };
            eval(&a.expr, &TestEnv).unwrap_err().to_string()
        };
        assert!(err("nope + 1").contains("symbol not found: nope"));
        assert!(err("1 / 0").contains("division by zero"));
        assert!(err("ADDR(.none)").contains("undefined section .none"));
        assert!(err("ASSERT(0, \"boom\")").contains("boom"));
    }

    #[test]
    fn absoluteness_before_layout() {
        let rel = |n: &str| n == "foo" || n == "bar";
        let abs = |t: &str| {
            let s = parse(&format!("x = {t};")).unwrap();
            let SectionsCmd::Assign(a) = &s.commands[0] else { panic!() };
            is_absolute(&a.expr, &rel, false)
        };
        assert!(abs("1 + 2"));
        assert!(!abs("foo"));
        assert!(!abs("foo + 4"));
        assert!(abs("bar - foo"));
        assert!(abs("SIZEOF(.text)"));
        assert!(!abs("ADDR(.text)"));
        assert!(abs("ABSOLUTE(foo)"));
        assert!(abs("foo * 2"));
    }
}
