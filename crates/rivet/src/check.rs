//! Checks between resolution and layout: undefined symbols (lld's message, with the references),
//! as `--unresolved-symbols`, `-z defs`/`undefs`, `--[no-]allow-shlib-undefined` and
//! `--warn-unresolved-symbols` ask, and `--require-defined`.
use crate::ctx::{OutputKind, Resolved};
use crate::diag::symbol_name;
use crate::resolve::{self, Def};
use object::elf::STV_DEFAULT;

/// Which undefined symbols are reported, and how (lld's policy).
struct Policy {
    /// Those the objects refer to (`-z defs`; by default, except in a shared library).
    objects: bool,
    /// Those of the shared libraries whose dependencies are all loaded too
    /// (`--no-allow-shlib-undefined`; by default, except in a shared library).
    shlibs: bool,
    /// As warnings (`--warn-unresolved-symbols`): the link goes on.
    warn: bool,
}

impl Policy {
    fn of(ctx: &Resolved) -> Policy {
        let shared = ctx.kind == OutputKind::Shared;
        Policy {
            objects: ctx.config.no_undefined.unwrap_or(!shared),
            // By default checked for executables only, as lld and GNU ld do.
            shlibs: ctx.config.allow_shlib_undefined.map_or(!shared, |allow| !allow),
            // --noinhibit-exec keeps the output too (lld and GNU ld: the undefined symbols warn).
            warn: ctx.config.warn_unresolved || ctx.config.noinhibit_exec,
        }
    }

    fn report(&self, ctx: &Resolved, msg: impl std::fmt::Display) {
        match self.warn {
            true => ctx.diag.warn(msg),
            false => ctx.diag.error(msg),
        }
    }
}

/// Undefined symbols (lld's message with references) and `--require-defined`.
pub fn check_symbols(ctx: &Resolved) -> crate::diag::Result<()> {
    let policy = Policy::of(ctx);
    undefined_in_objects(ctx, &policy);
    if policy.shlibs {
        undefined_in_shared_libraries(ctx, &policy);
    }
    symbol_type_mismatches(ctx);
    for name in &ctx.config.require_defined {
        let defined = ctx
            .by_name
            .get(&ctx.symbols, name.as_bytes())
            .is_some_and(|id| !matches!(ctx.symbols[id].def, Def::Undefined | Def::Lazy { .. }));
        if !defined {
            let msg = format!("undefined symbol: {name}\n>>> required by --require-defined");
            // --noinhibit-exec: GNU ld says so and writes the output.
            match ctx.config.noinhibit_exec {
                true => ctx.diag.warn(msg),
                false => ctx.diag.error(msg),
            }
        }
    }
    ctx.diag.check()
}

fn undefined_in_objects(ctx: &Resolved, policy: &Policy) {
    let undefined_ok: Vec<&[u8]> = ctx.config.undefined.iter().map(|s| s.as_bytes()).collect();
    let entry_default = ctx.config.entry.is_none();
    // A hidden, internal or protected symbol must be defined in the output whatever the options say
    // (lld's rule), so it is an error even when the others are ignored or warned about.
    let report = |s: &resolve::Symbol| {
        // `-u` names and a missing default entry are not errors (GNU ld warns about the entry).
        // `__tls_get_addr` is only called by general/local-dynamic TLS sequences, which an
        // executable relaxes away; a call outside such a sequence is an error when relocating.
        let name = s.name;
        let exempt = undefined_ok.contains(&name) || (entry_default && name == b"_start") || name == b"__tls_get_addr";
        !exempt && (policy.objects || s.visibility != STV_DEFAULT)
    };
    // Warnings are all printed; errors past --error-limit are not, and need no message.
    let more = || policy.warn || !ctx.diag.limit_reached();
    crate::undefined::undefined_symbol_errors(ctx, &report, &more, &mut |id, e| match ctx.symbols[id].visibility
        != STV_DEFAULT
    {
        true => ctx.diag.error(e),
        false => policy.report(ctx, e),
    });
}

/// `--no-allow-shlib-undefined`, lld's check: a shared library's symbol that nothing defines, or
/// that the output defines but does not export, will fail to bind at run time. Checked only when
/// every library on the command line has its DT_NEEDED libraries loaded too: rivet, like lld, does
/// not load dependencies, and a missing symbol may be in one of them, where the loader finds it
/// (lld skips only the libraries whose own dependencies are missing, and so rejects links that GNU
/// ld, which loads them, accepts: `-lbar -lbaz` where libbar.so needs libfoo.so and libbaz.so uses
/// a symbol of libfoo.so).
fn undefined_in_shared_libraries(ctx: &Resolved, policy: &Policy) {
    let loaded: Vec<&[u8]> = ctx.shared.iter().map(|l| l.file.needed_name.as_bytes()).collect();
    if !ctx.shared.iter().all(|lib| lib.file.needed.iter().all(|n| loaded.contains(n))) {
        return;
    }
    for lib in ctx.shared.iter() {
        for &(name, weak) in &lib.file.undefined {
            let Some(id) = ctx.by_name.get(&ctx.symbols, name) else { continue };
            let s = &ctx.symbols[id];
            if weak || matches!(s.def, Def::Shared { .. }) {
                continue;
            }
            // A library may define it in a version that only versioned references bind to.
            let in_a_library = || ctx.shared.iter().any(|l| l.file.defined.iter().any(|d| d.name == name));
            match s.def {
                Def::Undefined | Def::Lazy { .. } if !in_a_library() => policy.report(
                    ctx,
                    format!(
                        "{}: --no-allow-shlib-undefined: undefined symbol: {}\n>>> nothing in the link defines it",
                        lib.file.name,
                        symbol_name(name),
                    ),
                ),
                Def::Defined { file, .. } | Def::Common { file, .. } if s.is_hidden() && !in_a_library() => policy
                    .report(
                        ctx,
                        format!(
                            "{}: --no-allow-shlib-undefined: undefined symbol: {}\n>>> defined in {} but not exported (hidden)",
                            lib.file.name,
                            symbol_name(name),
                            ctx.objects[file].name,
                        ),
                    ),
                _ => {}
            }
        }
    }
}

/// mold's warning: an object defines as data a name that a shared library defines as a function,
/// or the other way round (`int times;` beside the C library's `times()`). The object's definition
/// wins, so the library's own callers of the function reach the data (or the reverse).
fn symbol_type_mismatches(ctx: &Resolved) {
    use object::elf::{STT_COMMON, STT_FUNC, STT_GNU_IFUNC, STT_OBJECT};
    let kind = |t: u8| match t {
        STT_FUNC | STT_GNU_IFUNC => Some("a function"),
        STT_OBJECT | STT_COMMON => Some("data"),
        _ => None,
    };
    let mut warned = std::collections::HashSet::new();
    for lib in ctx.shared.iter() {
        for d in lib.file.defined.iter().filter(|d| !d.hidden) {
            let Some(theirs) = kind(d.sym_type) else { continue };
            let Some(id) = ctx.by_name.get(&ctx.symbols, d.name) else { continue };
            let (file, ours) = match ctx.symbols[id].def {
                Def::Defined { file, sym } => (file, kind(ctx.objects[file].syms[sym as usize].st_type())),
                Def::Common { file, .. } => (file, Some("data")),
                _ => continue,
            };
            if ours.is_some_and(|ours| ours != theirs) && warned.insert(id) {
                ctx.diag.warn(format!(
                    "symbol type mismatch: {}\n>>> defined as {} in {}\n>>> defined as {theirs} in {}",
                    symbol_name(d.name),
                    ours.unwrap_or_default(),
                    ctx.objects[file].name,
                    lib.file.name
                ));
            }
        }
    }
}
