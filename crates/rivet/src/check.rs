//! Checks between resolution and layout: undefined symbols (lld's message, with the references)
//! and `--require-defined`.
use crate::ctx::{Ctx, OutputKind};
use crate::diag::{Error, Result};
use crate::resolve::{self, Def};

/// Undefined symbols (lld's message with references) and `--require-defined`.
pub fn check_symbols(ctx: &Ctx) -> Result<()> {
    ctx.diag.report(undefined_errors(ctx));
    for name in &ctx.config.require_defined {
        let defined = ctx
            .by_name
            .get(name.as_bytes())
            .is_some_and(|&id| !matches!(ctx.symbols[id].def, Def::Undefined | Def::Lazy { .. }));
        if !defined {
            ctx.diag.error(format!("required symbol '{name}' is not defined (--require-defined)"));
        }
    }
    ctx.diag.check()
}

fn undefined_errors(ctx: &Ctx) -> Vec<Error> {
    // A shared library may leave symbols for its users to define, unless -z defs.
    if ctx.kind == OutputKind::Shared && !ctx.config.no_undefined {
        return Vec::new();
    }
    let undefined_ok: Vec<&[u8]> = ctx.config.undefined.iter().map(|s| s.as_bytes()).collect();
    let entry_default = ctx.config.entry.is_none();
    // A view of the resolution for the message builder, borrowing the context's tables.
    resolve::undefined_symbol_errors_in(&ctx.objects, &ctx.symbols, &|name| {
        // `-u` names and a missing default entry are not errors (GNU ld warns about the entry).
        // `__tls_get_addr` is only called by general/local-dynamic TLS sequences, which an
        // executable relaxes away; a call outside such a sequence is an error when relocating.
        undefined_ok.contains(&name) || (entry_default && name == b"_start") || name == b"__tls_get_addr"
    })
}
