//! `--print-dependencies` (mold's option): after resolution, which input section needs which other
//! one (or which shared library) for which symbol, one tab-separated line each on stdout, in mold's
//! format: `<section1> <section2> <u|w> <symbol>`, `u` for a strong reference and `w` for a weak
//! one. A section is `file:(name)`; a definition outside any section is named by its file.
use crate::ctx::Resolved;
use crate::diag::symbol_name;
use crate::ids::{FileId, SymbolId};
use crate::resolve::Def;
use object::elf;
use object::LittleEndian as LE;
use std::fmt::Write;

const HEADER: &str = "\
# The output of rivet's --print-dependencies option (mold's format).
#
# Each line has 4 fields separated by tabs: <section1>, <section2>, <symbol-type> and <symbol>.
# It says that <section1> needs <section2> for <symbol>. <symbol-type> is \"u\" for a regular
# undefined symbol and \"w\" for a weak undefined one.
#
# For one line per function, compile with -ffunction-sections.
";

/// Where symbol `id` is defined, as a line names it (None: nowhere, or in `referrer` itself).
fn definition(ctx: &Resolved, id: SymbolId, referrer: Option<FileId>) -> Option<String> {
    match ctx.symbols[id].def {
        Def::Defined { file, sym } | Def::Common { file, sym } => {
            if Some(file) == referrer {
                return None;
            }
            let obj = &ctx.objects[file];
            Some(match obj.sym_shndx(sym as usize) {
                Some(sec) => format!("{}:({})", obj.name, String::from_utf8_lossy(obj.section_name(sec as usize))),
                None => obj.name.clone(),
            })
        }
        Def::Shared { file, .. } => Some(ctx.shared[file].file.name.clone()),
        _ => None,
    }
}

/// Prints the dependency lines if `--print-dependencies` asked for them.
pub fn print_if_asked(ctx: &Resolved) {
    if !ctx.config.print_dependencies {
        return;
    }
    let mut out = String::from(HEADER);
    for &f in &ctx.file_order {
        let obj = &ctx.objects[f];
        for (si, sec) in obj.sections.iter().enumerate().filter(|(_, s)| s.live) {
            let mut seen: rustc_hash::FxHashSet<SymbolId> = Default::default();
            for rel in sec.relas {
                let r_sym = rel.r_sym(LE, false) as usize;
                if rel.r_type(LE, false) == crate::arch::R_NONE || r_sym < obj.first_global || r_sym >= obj.syms.len() {
                    continue;
                }
                let esym = &obj.syms[r_sym];
                let Some(&id) = obj.global_ids.get(r_sym - obj.first_global) else { continue };
                if esym.st_shndx.get(LE) != elf::SHN_UNDEF || !seen.insert(id) {
                    continue;
                }
                let Some(to) = definition(ctx, id, Some(f)) else { continue };
                let kind = if esym.st_info >> 4 == elf::STB_WEAK { 'w' } else { 'u' };
                let _ = writeln!(
                    out,
                    "{}:({})\t{to}\t{kind}\t{}",
                    obj.name,
                    String::from_utf8_lossy(obj.section_name(si)),
                    symbol_name(ctx.symbols[id].name)
                );
            }
        }
    }
    for lib in &ctx.shared {
        for &(name, weak) in &lib.file.undefined {
            let Some(id) = ctx.by_name.get(&ctx.symbols, name) else { continue };
            if matches!(ctx.symbols[id].def, Def::Shared { file, .. } if ctx.shared[file].file.name == lib.file.name) {
                continue;
            }
            let Some(to) = definition(ctx, id, None) else { continue };
            let kind = if weak { 'w' } else { 'u' };
            let _ = writeln!(out, "{}\t{to}\t{kind}\t{}", lib.file.name, symbol_name(name));
        }
    }
    print!("{out}");
}
