//! The link map (`-Map=FILE`, `-M`/`--print-map`), in lld's layout: one line per output section,
//! then its input sections (`file:(section)`) and the global symbols each defines, with addresses,
//! sizes and alignments. Merged and folded input sections are marked; linker-made sections show
//! as `<internal>`.
use crate::diag::{Context, Result};
use crate::ids::{OutputSectionId, SectionRef};
use crate::linked::Linked;
use crate::resolve::Def;
use crate::sections::output::Content;
use crate::timing::Timer;
use std::fmt::Write;

/// (address, name) of the global symbols an input section defines.
type Defined<'a> = rustc_hash::FxHashMap<SectionRef, Vec<(u64, &'a [u8])>>;

/// The link map, once the output exists (lld writes it too when asked, at the end): to
/// `-Map=FILE`, and with `-M` to stdout.
pub fn write_if_asked(linked: &Linked, timer: &Timer) -> Result<()> {
    let config = linked.config;
    if config.map_file.is_none() && !config.print_map {
        return Ok(());
    }
    let text = timer.phase("map", || render(linked));
    if let Some(p) = &config.map_file {
        std::fs::write(p, &text).with_context(|| format!("cannot write map file {}", p.display()))?;
    }
    if config.print_map {
        print!("{text}");
    }
    Ok(())
}

pub fn render(ctx: &Linked) -> String {
    // Global symbols by the input section that defines them, in address order.
    let mut defined: Defined = Default::default();
    for (id, s) in ctx.symbols.iter_enumerated() {
        if let Def::Defined { file, sym } = s.def {
            if let Some(sec) = ctx.objects[file].sym_shndx(sym as usize) {
                defined.entry(SectionRef::new(file, sec)).or_default().push((ctx.addr.global[id], s.name));
            }
        }
    }
    for v in defined.values_mut() {
        v.sort();
    }
    let mut out = String::new();
    let _ = writeln!(out, "{:>16} {:>16} {:>8} {:>5} Out     In      Symbol", "VMA", "LMA", "Size", "Align");
    let place = &ctx.layout.sections;
    let mut order: Vec<OutputSectionId> = ctx.sections.ids().filter(|&i| place[i].shndx != 0).collect();
    order.sort_by_key(|&i| (place[i].addr == 0, place[i].addr, place[i].offset));
    for i in order {
        let (os, addr) = (&ctx.sections[i], place[i].addr);
        let _ = writeln!(out, "{:>16x} {:>16x} {:>8x} {:>5} {}", addr, addr, os.size, os.align, os.name);
        if os.content != Content::Inputs {
            let _ = writeln!(
                out,
                "{:>16x} {:>16x} {:>8x} {:>5}         <internal>:({})",
                addr, addr, os.size, os.align, os.name
            );
            continue;
        }
        for &SectionRef { file: f, index: s } in &os.members {
            let obj = &ctx.objects[f];
            let sec = &obj.sections[s as usize];
            let size = ctx.member_size(f, s);
            let addr = place[i].addr + sec.offset;
            let note = if sec.merge_index.is_some() { " (merged)" } else { "" };
            let _ = writeln!(
                out,
                "{:>16x} {:>16x} {:>8x} {:>5}         {}:({}){note}",
                addr,
                addr,
                size,
                sec.align,
                obj.name,
                String::from_utf8_lossy(sec.name)
            );
            for (a, name) in defined.get(&SectionRef::new(f, s)).map(|v| v.as_slice()).unwrap_or_default() {
                let _ = writeln!(
                    out,
                    "{:>16x} {:>16x} {:>8} {:>5}                 {}",
                    a,
                    a,
                    0,
                    0,
                    String::from_utf8_lossy(name)
                );
            }
        }
    }
    // Sections folded by --icf, after the layout they were folded out of.
    for obj in &ctx.objects {
        for sec in obj.sections.iter().filter(|s| s.folded_into.is_some()) {
            let into = sec.folded_into.expect("filtered on folded_into");
            let kept = &ctx.objects[into.file];
            let _ = writeln!(
                out,
                "{:>16} {:>16} {:>8x} {:>5} <folded> {}:({}) into {}:({})",
                "-",
                "-",
                sec.size,
                sec.align,
                obj.name,
                String::from_utf8_lossy(sec.name),
                kept.name,
                String::from_utf8_lossy(ctx.objects[into].name)
            );
        }
    }
    out
}
