//! lld's "undefined symbol" messages: every place that refers to the symbol (its source line from
//! DWARF, then `file.o:(function)`), up to three, then how many more; for the first two, a
//! name one edit away that is defined (`did you mean: foo`; a name only an archive member not
//! loaded defines is not, as lld has made it undefined by then), or the same function declared
//! `extern "C"` on one side only, and where lld says it is defined (`defined in: lib.a(x.o)`);
//! and lld's hint for a missing vtable.
use crate::ctx::Resolved;
use crate::diag::symbol_name;
use crate::ids::{FileId, SymbolId};
use crate::resolve::{self, Def, Symbol};
use crate::srcloc::Places;
use object::elf;
use object::LittleEndian as LE;
use rustc_hash::{FxHashMap, FxHashSet};

/// A relocation that refers to an undefined symbol: (file, section, offset).
type Reference = (FileId, u32, u64);

/// The messages for the undefined, strongly referenced symbols that `report` accepts, in the
/// order lld gives them: by the first relocation that refers to each (files, sections and
/// relocations in order), then those no relocation uses (the command line's). Each message is
/// built only while `more()` says it would be printed (`--error-limit`: a message reads DWARF).
pub fn undefined_symbol_errors(
    ctx: &Resolved,
    report: &dyn Fn(&Symbol) -> bool,
    more: &dyn Fn() -> bool,
    emit: &mut dyn FnMut(SymbolId, String),
) {
    // Most links have none: then no relocation is read.
    let wanted: FxHashSet<SymbolId> = ctx
        .symbols
        .iter_enumerated()
        .filter(|(_, s)| s.def == Def::Undefined && s.strong_ref && report(s))
        .map(|(id, _)| id)
        .collect();
    if wanted.is_empty() {
        return;
    }
    // Every reference, grouped by symbol in the order of each symbol's first one; `first` is the
    // position of that first one among all references (lld suggests spellings for the symbols of
    // the first two).
    let mut refs: FxHashMap<SymbolId, (usize, Vec<Reference>)> = FxHashMap::default();
    let mut order = Vec::new();
    let mut seen = 0;
    for (f, obj) in ctx.objects.iter_enumerated() {
        for (si, sec) in obj.sections.iter().enumerate() {
            if !sec.live {
                continue;
            }
            for rel in sec.relas {
                let sym = rel.r_sym(LE, false) as usize;
                let Some(&id) = sym.checked_sub(obj.first_global).and_then(|g| obj.global_ids.get(g)) else { continue };
                if !wanted.contains(&id) {
                    continue;
                }
                let entry = refs.entry(id).or_insert_with(|| {
                    order.push(id);
                    (seen, Vec::new())
                });
                entry.1.push((f, si as u32, rel.r_offset.get(LE)));
                seen += 1;
            }
        }
    }
    // Symbols no relocation uses: an undefined entry in a symbol table only (`.globl foo` and no
    // use, uses in sections --gc-sections dropped) or a definition in a discarded COMDAT copy,
    // which GNU ld and lld link without a word; or a name the command line gave.
    let mut rest: Vec<SymbolId> = wanted.iter().copied().filter(|id| !refs.contains_key(id)).collect();
    rest.sort_unstable();
    for id in rest {
        if ctx.symbols[id].undefined_ref && !ctx.objects.iter().any(|o| o.global_ids.contains(&id)) {
            order.push(id);
        }
    }
    let owns = |f: FileId, i: usize| resolve::defines(&ctx.objects, &ctx.symbols, f, i);
    let places = Places::new(&ctx.objects, &owns);
    for id in order {
        if !more() {
            break;
        }
        // A symbol no relocation refers to has no references and no spelling suggestion.
        let (refs, spell) = match refs.get(&id) {
            Some((first, refs)) => (refs.as_slice(), *first < 2),
            None => (&[][..], false),
        };
        emit(id, message(ctx, &places, id, refs, spell));
    }
}

fn message(ctx: &Resolved, places: &Places, id: SymbolId, refs: &[Reference], spell: bool) -> String {
    let s = &ctx.symbols[id];
    // lld names a visibility other than the default (such a symbol must be defined here).
    let visibility = match s.visibility {
        _ if s.localized_from.is_some() => "",
        elf::STV_HIDDEN => "hidden ",
        elf::STV_PROTECTED => "protected ",
        elf::STV_INTERNAL => "internal ",
        _ => "",
    };
    // A shared library defines it, but a reference of that visibility must bind in the output.
    let shared = (!visibility.is_empty())
        .then(|| ctx.shared.iter().find(|l| l.file.defined.iter().any(|d| d.name == s.name && !d.hidden)))
        .flatten();
    let mut msg = match shared {
        Some(lib) => format!(
            "undefined symbol: {}\n>>> the reference is {visibility}and must bind in the output: the definition in {} cannot satisfy it",
            symbol_name(s.name),
            lib.file.name
        ),
        None => format!("undefined {visibility}symbol: {}", symbol_name(s.name)),
    };
    for &(f, sec, off) in refs.iter().take(3) {
        msg.push_str(&format!("\n>>> referenced by {}", places.describe_reference(f, sec, off, s.name, 14)));
    }
    if refs.len() > 3 {
        msg.push_str(&format!("\n>>> referenced {} more times", refs.len() - 3));
    }
    if refs.is_empty() {
        msg.push_str("\n>>> referenced by the command line (-e / -u / --require-defined)");
    }
    if let Some(&(file, ..)) = refs.first().filter(|_| spell) {
        if let Some((before, found, after)) = alternative_spelling(ctx, s.name, file) {
            msg.push_str(&format!("\n>>> did you mean{before}{}{after}", symbol_name(found.name)));
            msg.push_str(&format!("\n>>> defined in: {}", found.file));
        }
    }
    if s.name.starts_with(b"_ZTV") {
        msg.push_str(
            "\n>>> the vtable symbol may be undefined because the class is missing its key function \
             (see https://lld.llvm.org/missingkeyfunction)",
        );
    }
    msg
}

/// A symbol offered in place of an undefined one, and the file that defines it.
struct Found<'a> {
    name: &'a [u8],
    file: String,
}

/// lld's `getAlternativeSpelling`: a defined symbol (a local of the file that refers, or a global)
/// one edit away from `name` (a character inserted, replaced or deleted, two swapped), then one that
/// differs only in case, then the same C++ function with or without `extern "C"`. Gives the words
/// before and after the name.
fn alternative_spelling<'c>(
    ctx: &'c Resolved,
    name: &[u8],
    file: FileId,
) -> Option<(&'static str, Found<'c>, &'static str)> {
    let obj = &ctx.objects[file];
    let mut locals: Vec<(&[u8], usize)> = Vec::new();
    for i in 1..obj.first_global.min(obj.syms.len()) {
        let kind = obj.syms[i].st_info & 0xf;
        if kind == elf::STT_SECTION || kind == elf::STT_FILE || obj.syms[i].st_shndx.get(LE) == elf::SHN_UNDEF {
            continue;
        }
        match obj.sym_name(&obj.syms[i]) {
            Ok(n) if !n.is_empty() && !locals.iter().any(|l| l.0 == n) => locals.push((n, i)),
            _ => {}
        }
    }
    let local = |n: &'c [u8]| Found { name: n, file: obj.name.clone() };
    let global = |id: SymbolId| Found { name: ctx.symbols[id].name, file: defined_in(ctx, id) };
    // lld has turned the symbols of archive members never loaded back into undefined ones.
    let defined = |id: SymbolId| !matches!(ctx.symbols[id].def, Def::Undefined | Def::Lazy { .. });
    let suggest = |candidate: &[u8]| -> Option<Found<'c>> {
        if let Some(&(n, _)) = locals.iter().find(|l| l.0 == candidate) {
            return Some(local(n));
        }
        let id = ctx.by_name.get(&ctx.symbols, candidate)?;
        defined(id).then(|| global(id))
    };
    // Every string one edit away, in lld's order.
    for i in 0..=name.len() {
        let mut inserted = [&name[..i], b"0", &name[i..]].concat();
        for c in b'0'..=b'z' {
            inserted[i] = c;
            if let Some(f) = suggest(&inserted) {
                return Some((": ", f, ""));
            }
        }
        if i == name.len() {
            break;
        }
        let mut replaced = name.to_vec();
        for c in b'0'..=b'z' {
            replaced[i] = c;
            if let Some(f) = suggest(&replaced) {
                return Some((": ", f, ""));
            }
        }
        if i + 1 < name.len() {
            let mut swapped = name.to_vec();
            swapped.swap(i, i + 1);
            if let Some(f) = suggest(&swapped) {
                return Some((": ", f, ""));
            }
        }
        let deleted = [&name[..i], &name[i + 1..]].concat();
        if let Some(f) = suggest(&deleted) {
            return Some((": ", f, ""));
        }
    }
    // The same name in another case.
    if let Some(&(n, _)) = locals.iter().find(|l| l.0.eq_ignore_ascii_case(name)) {
        return Some((": ", local(n), ""));
    }
    if let Some((id, _)) =
        ctx.symbols.iter_enumerated().find(|&(id, s)| defined(id) && s.name.eq_ignore_ascii_case(name))
    {
        return Some((": ", global(id), ""));
    }
    // A C++ reference to a C definition: the definition's name is the function's.
    if name.starts_with(b"_Z") {
        let f = function_name(name).and_then(|f| suggest(f.as_bytes()))?;
        return Some((": extern \"C\" ", f, ""));
    }
    // A C reference to a C++ definition of the function.
    let named = |n: &[u8]| function_name(n).is_some_and(|f| f.as_bytes() == name);
    if let Some(&(n, _)) = locals.iter().find(|l| named(l.0)) {
        return Some((" to declare ", local(n), " as extern \"C\"?"));
    }
    // Here an undefined symbol too (lld's rule), with the file lld names for it.
    let (id, _) = ctx.symbols.iter_enumerated().find(|(_, s)| named(s.name))?;
    Some((" to declare ", global(id), " as extern \"C\"?"))
}

/// The file lld's `defined in:` line names for a global symbol: the object or library that
/// defines it, `--defsym`, the script and line that assign it, `<internal>` for a name the linker
/// defines and for one of an archive member never loaded (lld has made it undefined, its file its
/// own); for an undefined symbol, the first object that refers to it.
fn defined_in(ctx: &Resolved, id: SymbolId) -> String {
    let s = &ctx.symbols[id];
    if ctx.config.defsym.iter().any(|d| d.name.as_bytes() == s.name) {
        return "--defsym".to_string();
    }
    match s.def {
        Def::Defined { file, .. } | Def::Common { file, .. } => ctx.objects[file].name.clone(),
        Def::Shared { file, .. } => ctx.shared[file].file.name.clone(),
        Def::Script(i) => ctx.script_syms[i as usize].assign.loc.to_string(),
        Def::Undefined => ctx
            .objects
            .iter()
            .find(|o| o.global_ids.contains(&id))
            .map_or_else(|| "<internal>".to_string(), |o| o.name.clone()),
        Def::Lazy { .. } | Def::Synthetic | Def::Absolute(_) => "<internal>".to_string(),
    }
}

/// The name of the function a C++ mangled name stands for, without its parameters (`ns::f` for
/// `_ZN2ns1fEi`); None for a name that is not a function's.
fn function_name(mangled: &[u8]) -> Option<String> {
    use cpp_demangle::{DemangleOptions, Symbol};
    let sym = Symbol::new(mangled).ok()?;
    let bare = sym.demangle_with_options(&DemangleOptions::new().no_params().no_return_type()).ok()?;
    let full = sym.demangle().ok()?;
    (bare != full).then_some(bare)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_names_drop_the_parameters_and_refuse_variables() {
        assert_eq!(function_name(b"_Z4bar2i").as_deref(), Some("bar2"));
        assert_eq!(function_name(b"_ZN2ns3fooEv").as_deref(), Some("ns::foo"));
        assert_eq!(function_name(b"_ZN2ns3varE"), None);
        assert_eq!(function_name(b"bar2"), None);
    }
}
