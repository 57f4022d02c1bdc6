//! The command line's say over symbols, applied right after resolution and before anything depends
//! on it: `--defsym`, `--exclude-libs`, `--version-script`, `--dynamic-list` and
//! `--export-dynamic-symbol`, and the names a shared library or an `-E` executable keeps reachable.
use crate::args::Config;
use crate::ctx::DefsymOffset;
use crate::ctx::{OutputKind, Resolved};
use crate::diag::{Context, Error, Result};
use crate::ids::{FileId, SectionRef, SymbolId};
use crate::layout;
use crate::resolve::{self, Def, Symbol};
use crate::synthetic::dynamic_tables::Versions;
use crate::{bail, fatal};

/// Parses version scripts or dynamic lists (the same syntax) into one matcher.
/// A relative path that does not exist is looked for in the `-L` directories too, as GNU ld and
/// lld do.
pub(crate) fn read_version_nodes(
    paths: &[std::path::PathBuf],
    lib_paths: &[std::path::PathBuf],
    what: &str,
) -> Result<crate::input::version_script::Matcher> {
    let mut nodes = Vec::new();
    for path in paths {
        let path = &find_list_file(path, lib_paths);
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {what} {}", path.display()))?;
        let mut parsed = crate::input::version_script::parse(&text).with_context(|| path.display())?;
        for n in &mut parsed {
            n.origin = path.display().to_string();
        }
        nodes.extend(parsed);
    }
    Ok(crate::input::version_script::Matcher { nodes })
}

/// Where a version script or dynamic list named `path` is: the path itself, or for a relative path
/// that does not exist, the first `-L` directory holding it (as GNU ld and lld look).
pub(crate) fn find_list_file<'p>(
    path: &'p std::path::Path,
    lib_paths: &[std::path::PathBuf],
) -> std::borrow::Cow<'p, std::path::Path> {
    let found = (!path.exists() && path.is_relative())
        .then(|| lib_paths.iter().map(|d| d.join(path)).find(|p| p.is_file()))
        .flatten();
    found.map_or(std::borrow::Cow::Borrowed(path), std::borrow::Cow::Owned)
}

/// The nodes of every `--version-script`, then those of the linker scripts' `VERSION` blocks in
/// command-line order (versions are numbered in that order, as GNU ld and lld number them).
fn version_nodes(ctx: &Resolved) -> Result<crate::input::version_script::Matcher> {
    let config = ctx.config;
    let mut m = read_version_nodes(&config.version_scripts, &config.lib_paths, "version script")?;
    m.nodes.extend(ctx.script_files.iter().flat_map(|f| f.script.versions.iter().cloned()));
    Ok(m)
}

/// Reads `--version-script` files: symbols they make local become hidden; exported ones get the
/// version of the node that names them; `foo@V` / `foo@@V` names from `.symver` get V. Returns
/// the output's versions and which symbol has which.
pub fn apply_version_scripts(ctx: &mut Resolved) -> Result<Versions> {
    use crate::input::version_script::{self, Verdict};
    let matcher = version_nodes(ctx)?;
    let nodes = matcher.nodes.iter().filter_map(|n| Some((n.name.clone()?, n.parent.clone()))).collect();
    let mut versions = Versions { nodes, ..Default::default() };
    let named = |i: usize| matcher.nodes[i].name.is_some();
    // The symbols whose plain name a `foo@V` (non-default) symbol of the same object also gives
    // to the same place (only a script can make such a name `foo@@V` too).
    let place = |file: FileId, sym: u32| {
        let obj = &ctx.objects[file];
        (file, obj.sym_shndx(sym as usize), obj.syms[sym as usize].st_value.get(object::LittleEndian))
    };
    let hidden_version_aliases: rustc_hash::FxHashSet<SymbolId> = match matcher.nodes.is_empty() {
        true => Default::default(),
        false => ctx
            .symbols
            .iter()
            .filter(|s| s.version.is_none())
            .filter_map(|s| {
                let Def::Defined { file, sym } = s.def else { return None };
                let (plain, _, false) = resolve::split_version(s.name)? else { return None };
                let id = ctx.by_name.get(&ctx.symbols, plain)?;
                let Def::Defined { file: pf, sym: ps } = ctx.symbols[id].def else { return None };
                (place(pf, ps) == place(file, sym)).then_some(id)
            })
            .collect(),
    };
    let mut errors: Vec<Error> = Vec::new();
    for id in ctx.symbols.ids() {
        let s = &ctx.symbols[id];
        // A linker script's and --defsym's symbols and the linker's own are defined here too:
        // `local: *` hides them as GNU ld and lld do (the vDSO's script-assigned `vvar_page`).
        if !matches!(
            s.def,
            Def::Defined { .. } | Def::Common { .. } | Def::Script(_) | Def::Absolute(_) | Def::Synthetic
        ) {
            continue;
        }
        // `foo@@` / `foo@`: the base version, named on purpose; no script hides or versions it.
        if s.version == Some(&b""[..]) {
            continue;
        }
        // `foo@V` beside `foo@@V`: a reference to `foo@V` may mean either, so two definitions
        // are one too many (lld reports the same), unless they are one place under two names.
        if let (Def::Defined { file, sym }, None, Some((plain, v, false))) =
            (s.def, s.version, resolve::split_version(s.name))
        {
            let twin = ctx.by_name.get(&ctx.symbols, plain).map(|t| &ctx.symbols[t]);
            if let Some(&Symbol { def: Def::Defined { file: tf, sym: ts }, version: Some(tv), .. }) = twin {
                if tv == v && place(tf, ts) != place(file, sym) {
                    let name = String::from_utf8_lossy(s.name);
                    let (v, plain) = (String::from_utf8_lossy(v), String::from_utf8_lossy(plain));
                    errors.push(fatal!(
                        "duplicate symbol: {}: {name}\n>>> defined as {name} in {}\n>>> and as {plain}@@{v} in {}, \
                         which {name} also names",
                        ctx.objects[file].name,
                        ctx.objects[file].name,
                        ctx.objects[tf].name
                    ));
                }
            }
        }
        let explicit = match (s.version, memchr::memchr(b'@', s.name)) {
            (Some(v), _) => Some((v, false)),
            (None, Some(at)) => Some((&s.name[at + 1..], true)),
            (None, None) => None,
        };
        if let Some((v, hidden)) = explicit {
            match versions.index_of(v) {
                Some(ix) => {
                    versions.of_symbol.insert(id, if hidden { ix | object::elf::VERSYM_HIDDEN } else { ix });
                }
                // An executable defines no versions: a `.symver`ed name there only names the
                // symbol (lld links it; mold suite arch-x86_64-comdat-signatures).
                None if ctx.kind != OutputKind::Shared => {}
                None => {
                    errors.push(fatal!("symbol {} has undefined version {}", s.display(), String::from_utf8_lossy(v)))
                }
            }
            continue;
        }
        if matcher.nodes.is_empty() {
            continue;
        }
        // `.symver foo, foo@V` keeps the plain `foo` beside the non-default version: the script
        // must not make it `foo@@V` too; GNU ld and lld export only `foo@V` (mold suite
        // symbol-version2).
        if hidden_version_aliases.contains(&id) {
            localize(&mut ctx.symbols[id]);
            continue;
        }
        match matcher.verdict(s.name) {
            Verdict::Local => localize(&mut ctx.symbols[id]),
            Verdict::Global(n) if named(n) => {
                let name = matcher.nodes[n].name.as_ref().unwrap();
                let ix = versions.index_of(name.as_bytes()).unwrap();
                versions.of_symbol.insert(id, ix);
            }
            Verdict::Global(_) | Verdict::Unmentioned => {}
        }
    }
    if ctx.config.no_undefined_version != Some(false) {
        for (p, node) in matcher.exact_names().filter(|(_, n)| !n.origin.is_empty()) {
            let defined = ctx.symbols.iter().any(|s| {
                matches!(s.def, Def::Defined { .. } | Def::Common { .. } | Def::Script(_) | Def::Absolute(_))
                    && if p.cxx { version_script::demangle(s.name) == p.text } else { s.name == p.text.as_bytes() }
            });
            if !defined {
                // lld's "version script assignment of 'V' to symbol 'S' failed: symbol not
                // defined" in the words mold uses, naming the script.
                let msg = format!(
                    "{}: cannot assign version `{}` to symbol `{}`: symbol not found",
                    node.origin,
                    node.name.as_deref().unwrap_or("global"),
                    p.text
                );
                match ctx.config.no_undefined_version {
                    Some(true) => errors.push(fatal!("{msg}")),
                    _ => ctx.diag.warn(msg),
                }
            }
        }
    }
    default_symver(ctx, &mut versions);
    ctx.diag.report(errors);
    ctx.diag.check()?;
    Ok(versions)
}

/// `--default-symver` (GNU ld): in a shared library, every defined symbol without a version gets
/// one named after the library (its soname, else the output file's name).
fn default_symver(ctx: &Resolved, versions: &mut Versions) {
    if !ctx.config.default_symver || ctx.kind != OutputKind::Shared {
        return;
    }
    let name = match &ctx.config.soname {
        Some(so) => so.clone(),
        None => ctx.config.output.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
    };
    let ix = match versions.index_of(name.as_bytes()) {
        Some(ix) => ix,
        None => {
            versions.nodes.push((name, None));
            versions.nodes.len() as u16 + 1
        }
    };
    for id in ctx.symbols.ids() {
        let s = &ctx.symbols[id];
        if matches!(s.def, Def::Defined { .. } | Def::Common { .. }) && s.localized_from.is_none() {
            versions.of_symbol.entry(id).or_insert(ix);
        }
    }
}

/// `--dynamic-list`: an executable exports the listed symbols; in a shared library only the listed
/// ones stay preemptible (the rest bind inside the library, as with -Bsymbolic). Marks them
/// (`Symbol::dynamic_list`).
pub fn apply_dynamic_lists(ctx: &mut Resolved) -> Result<()> {
    use crate::input::version_script::Verdict;
    let config = ctx.config;
    if !config.has_dynamic_list()
        && config.export_dynamic_symbol_lists.is_empty()
        && config.export_dynamic_symbols.is_empty()
    {
        return Ok(());
    }
    let mut matcher = read_version_nodes(&config.dynamic_lists, &config.lib_paths, "dynamic list")?;
    let exports = read_version_nodes(&config.export_dynamic_symbol_lists, &config.lib_paths, "dynamic list")?;
    matcher.nodes.extend(exports.nodes);
    let pattern = |text: &String| crate::input::version_script::Pattern { text: text.clone(), cxx: false };
    matcher.nodes.push(crate::input::version_script::VersionNode {
        global: config.export_dynamic_symbols.iter().map(pattern).collect(),
        ..Default::default()
    });
    for id in ctx.symbols.ids() {
        let s = &ctx.symbols[id];
        if !matches!(s.def, Def::Defined { .. } | Def::Common { .. }) {
            continue;
        }
        // --dynamic-list-data: data, as GNU ld counts it (objects and commons, not TLS).
        let data = || {
            matches!(
                ctx.sym_type(crate::ctx::Target::Global(id)),
                ::object::elf::STT_OBJECT | ::object::elf::STT_COMMON
            ) || matches!(s.def, Def::Common { .. })
        };
        if matches!(matcher.verdict(s.name), Verdict::Global(_)) || (config.dynamic_list_data && data()) {
            ctx.symbols[id].dynamic_list = true;
        }
    }
    Ok(())
}

/// What `--gc-sections` keeps from the start: the root symbols (`roots`), and what is reachable
/// from outside: what a shared library or an `-E` executable exports, or in another dynamic
/// output what the shared libraries reference.
pub fn gc_roots(ctx: &Resolved, roots: &[String]) -> Vec<String> {
    let mut roots = roots.to_vec();
    // `--undefined-glob`: what the patterns match is kept as `-u`'s names are (mold's rule).
    let globs = &ctx.config.undefined_globs;
    if !globs.is_empty() {
        let matches = |name: &[u8]| globs.iter().any(|g| crate::input::version_script::glob_match(g.as_bytes(), name));
        roots.extend(
            ctx.symbols.iter().filter(|s| matches!(s.def, Def::Defined { .. }) && matches(s.name)).map(|s| s.display()),
        );
    }
    if ctx.kind == OutputKind::Shared || ctx.config.export_dynamic {
        roots.extend(exported_names(ctx));
    } else if ctx.kind.is_dynamic() {
        roots.extend(crate::synthetic::dynamic::export_roots(ctx));
    }
    roots
}

/// Default-visibility definitions: what a shared library (or an -E executable) exports.
pub fn exported_names(ctx: &Resolved) -> Vec<String> {
    ctx.symbols
        .iter()
        .filter(|s| matches!(s.def, Def::Defined { .. }) && matches!(s.visibility, 0 | 3))
        .map(|s| s.display())
        .collect()
}

/// Makes a symbol local to the output (not exported, bound here) and remembers the visibility it
/// had for `.symtab`.
fn localize(s: &mut resolve::Symbol) {
    if !s.is_hidden() {
        s.localized_from.get_or_insert(s.visibility);
        s.visibility = ::object::elf::STV_HIDDEN;
    }
}

/// `--exclude-libs=LIB,...|ALL`: symbols defined by members of those archives (matched by file
/// name, `libfoo.a`) are not exported: they become hidden, as lld and GNU ld make them local.
pub fn exclude_libs(config: &Config, loaded: &[crate::input::Loaded], res: &mut resolve::Resolution) {
    if config.exclude_libs.is_empty() {
        return;
    }
    let all = config.exclude_libs.iter().any(|l| l == "ALL");
    let excluded = |pos: u32| {
        let l = &loaded[pos as usize];
        let base = std::path::Path::new(&l.name).file_name().map(|n| n.to_string_lossy().into_owned());
        l.kind == crate::input::Kind::Archive && (all || base.is_some_and(|b| config.exclude_libs.contains(&b)))
    };
    for s in &mut res.symbols {
        if let resolve::Def::Defined { file, .. } | resolve::Def::Common { file, .. } = s.def {
            if excluded(res.objects[file].order.0) {
                localize(s);
            }
        }
    }
}

/// `--defsym=SYM=NUMBER` makes SYM absolute; `--defsym=SYM=OTHER` makes SYM an alias of OTHER's
/// definition, and `--defsym=SYM=OTHER+N` the same moved by N (see `defsym`). Returns the symbols
/// that carry such an offset, which `layout::compute_symbol_values` adds.
pub fn apply_defsyms<'a>(config: &'a Config, res: &mut resolve::Resolution<'a>) -> Result<Vec<DefsymOffset>> {
    use resolve::Def;
    let mut offsets: Vec<DefsymOffset> = Vec::new();
    for crate::expr::Defsym { name, text, symbol, addend } in &config.defsym {
        let expr = crate::expr::Expr { symbol: symbol.as_deref(), addend: *addend };
        let mut linker_defined = None;
        let (def, addend) = match expr.symbol {
            None => (Def::Absolute(expr.addend as u64), 0),
            Some(target) => match res.by_name.get(&res.symbols, target.as_bytes()).map(|id| res.symbols[id].def) {
                Some(Def::Absolute(v)) => (Def::Absolute(v.wrapping_add(expr.addend as u64)), 0),
                Some(d @ (Def::Defined { .. } | Def::Common { .. })) => (d, expr.addend),
                // A name the linker defines (`_GLOBAL_OFFSET_TABLE_`, `_end`…): referenced here so
                // that layout defines it, and SYM takes its value.
                Some(Def::Undefined | Def::Lazy { .. } | Def::Synthetic) | None
                    if layout::is_reserved(target.as_bytes(), &[]) =>
                {
                    let id = res.intern(target.as_bytes());
                    res.symbols[id].referenced = true;
                    linker_defined = Some(id);
                    (Def::Synthetic, expr.addend)
                }
                Some(Def::Shared { .. }) => bail!(
                    "--defsym={name}={text}: {target} is defined in a shared library; rivet (like lld) cannot define \
                     a symbol from it"
                ),
                _ => bail!("--defsym={name}={text}: undefined symbol: {target} (no object defines it)"),
            },
        };
        let id = res.intern(name.as_bytes());
        let s = &mut res.symbols[id];
        s.def = def;
        s.weak = false;
        offsets.retain(|d| d.symbol != id);
        if addend != 0 || linker_defined.is_some() {
            offsets.push(DefsymOffset { symbol: id, linker_defined, addend });
        }
    }
    Ok(offsets)
}

/// `--symbol-ordering-file`: reads the file (one symbol a line, `#` starts a comment, blank lines
/// skipped) and gives the priority of every section holding a listed symbol: the symbol's place in
/// the file, the earliest one where a section holds several. Warns as lld does (unless
/// `--no-warn-symbol-ordering`) about a name listed twice, a listed symbol that is undefined,
/// shared, absolute, made by the linker or in a discarded section, and one nothing has.
pub fn symbol_priorities(ctx: &Resolved) -> Result<rustc_hash::FxHashMap<SectionRef, i64>> {
    let Some(path) = &ctx.config.symbol_ordering_file else { return Ok(Default::default()) };
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot open {}", path.display()))?;
    let warn = ctx.config.warn_symbol_ordering;
    let names: Vec<&str> = text
        .lines()
        .map(|l| l.split_once('#').map_or(l, |(before, _)| before).trim())
        .filter(|l| !l.is_empty())
        .collect();
    // name → (priority, seen); the first line of a name counts.
    let mut listed: rustc_hash::FxHashMap<&[u8], (i64, bool)> = Default::default();
    let count = names.len() as i64;
    for (i, name) in names.iter().enumerate() {
        if listed.contains_key(name.as_bytes()) {
            if warn {
                ctx.diag.warn(format!("{}: duplicate ordered symbol: {name}", path.display()));
            }
            continue;
        }
        listed.insert(name.as_bytes(), (i as i64 - count, false));
    }
    let mut priority: rustc_hash::FxHashMap<SectionRef, i64> = Default::default();
    let mut place = |r: SectionRef, p: i64| {
        let e = priority.entry(r).or_insert(p);
        *e = (*e).min(p);
    };
    // Global symbols once each, in the order they were first seen.
    for (id, s) in ctx.symbols.iter_enumerated() {
        let Some(entry) = listed.get_mut(s.name) else { continue };
        entry.1 = true;
        let p = entry.0;
        let name = String::from_utf8_lossy(s.name);
        let unorderable = |what: &str, file: &str| {
            if warn {
                ctx.diag.warn(format!("{file}: unable to order {what} symbol: {name}"));
            }
        };
        match s.def {
            Def::Defined { file, sym } => {
                let obj = &ctx.objects[file];
                match obj.sym_shndx(sym as usize) {
                    Some(sec) if obj.sections[sec as usize].live => place(SectionRef::new(file, sec), p),
                    Some(_) => unorderable("discarded", &obj.name),
                    None => unorderable("absolute", &obj.name),
                }
            }
            Def::Undefined | Def::Lazy { .. } => {
                // lld's policy: nothing is said of undefined symbols that are not reported.
                if ctx.config.no_undefined == Some(false) {
                    continue;
                }
                let file = ctx
                    .file_order
                    .iter()
                    .find(|&&f| ctx.objects[f].global_ids.contains(&id))
                    .map_or("<internal>", |&f| ctx.objects[f].name.as_str());
                unorderable("undefined", file);
            }
            Def::Shared { file, .. } => unorderable("shared", &ctx.shared[file].file.name),
            Def::Absolute(_) | Def::Script(_) => unorderable("absolute", "<internal>"),
            Def::Synthetic => unorderable("synthetic", "<internal>"),
            // Common symbols are placed in .bss after this; their sections are the linker's.
            Def::Common { .. } => {}
        }
    }
    // Local symbols, file by file.
    for &f in &ctx.file_order {
        let obj = &ctx.objects[f];
        for i in 1..obj.first_global.min(obj.syms.len()) {
            let sym = &obj.syms[i];
            let kind = sym.st_info & 0xf;
            if matches!(kind, object::elf::STT_SECTION | object::elf::STT_FILE)
                || sym.st_name.get(object::LittleEndian) == 0
            {
                continue;
            }
            let Ok(name) = obj.sym_name(sym) else { continue };
            let Some(entry) = listed.get_mut(name) else { continue };
            entry.1 = true;
            let p = entry.0;
            match obj.sym_shndx(i) {
                Some(sec) if obj.sections[sec as usize].live => place(SectionRef::new(f, sec), p),
                Some(_) if warn => ctx.diag.warn(format!(
                    "{}: unable to order discarded symbol: {}",
                    obj.name,
                    String::from_utf8_lossy(name)
                )),
                None if warn => ctx.diag.warn(format!(
                    "{}: unable to order absolute symbol: {}",
                    obj.name,
                    String::from_utf8_lossy(name)
                )),
                _ => {}
            }
        }
    }
    if warn {
        for name in &names {
            // Each missing name once (a duplicate line was reported above).
            if let Some(e) = listed.get_mut(name.as_bytes()).filter(|e| !e.1) {
                e.1 = true;
                ctx.diag.warn(format!("symbol ordering file: no such symbol: {name}"));
            }
        }
    }
    Ok(priority)
}
