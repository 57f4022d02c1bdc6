//! The link map (`-Map=FILE`, `-M`/`--print-map`), in lld's layout: one line per output section,
//! then its input sections (`file:(section)`) and the symbols each defines (demangled, with their
//! sizes), with addresses, sizes and alignments. Merged and folded input sections are marked; linker-made sections show
//! as `<internal>`.
use crate::diag::{symbol_name, Context, Result};
use crate::ids::{OutputSectionId, SectionRef};
use crate::linked::Linked;
use crate::sections::output::Content;
use crate::timing::Timer;
use std::fmt::Write;

/// (address, size, name) of the symbols each input section defines.
type Defined<'a> = rustc_hash::FxHashMap<SectionRef, Vec<(u64, u64, &'a [u8])>>;

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
    // The symbols each input section defines, as lld lists them: every file's own definitions,
    // locals (not section or file symbols) and the globals resolution chose, in address order
    // (files' and their tables' order among equals).
    let mut defined: Defined = Default::default();
    for (f, obj) in ctx.objects.iter_enumerated() {
        for (i, sym) in obj.syms.iter().enumerate().skip(1) {
            let kind = sym.st_info & 0xf;
            if kind == object::elf::STT_SECTION || kind == object::elf::STT_FILE {
                continue;
            }
            let Some(sec) = obj.sym_shndx(i) else { continue };
            let section = &obj.sections[sec as usize];
            // Pieces of merged sections are not where their input section would be: lld lists
            // no symbol there either.
            if !section.live || section.out.is_none() || section.merge_index.is_some() {
                continue;
            }
            let addr = match i.checked_sub(obj.first_global) {
                None => ctx.section_addr(f, sec).map(|a| a + sym.st_value.get(object::LittleEndian)),
                Some(g) if crate::resolve::defines(&ctx.objects, &ctx.symbols, f, i) => {
                    obj.global_ids.get(g).map(|&id| ctx.addr.global[id])
                }
                Some(_) => None,
            };
            let (Some(addr), Ok(name)) = (addr, obj.sym_name(sym)) else { continue };
            defined.entry(SectionRef::new(f, sec)).or_default().push((
                addr,
                sym.st_size.get(object::LittleEndian),
                name,
            ));
        }
    }
    for v in defined.values_mut() {
        v.sort_by_key(|&(addr, ..)| addr);
    }
    let mut out = String::new();
    let _ = writeln!(out, "{:>16} {:>16} {:>8} {:>5} Out     In      Symbol", "VMA", "LMA", "Size", "Align");
    let place = &ctx.layout.sections;
    let mut order: Vec<OutputSectionId> = ctx.sections.ids().filter(|&i| place[i].shndx != 0).collect();
    order.sort_by_key(|&i| (place[i].addr == 0, place[i].addr, place[i].offset));
    for i in order {
        let (os, addr, size) = (&ctx.sections[i], place[i].addr, ctx.layout.sizes[i]);
        let align = ctx.layout.compressed.align(i, os);
        let _ = writeln!(out, "{:>16x} {:>16x} {:>8x} {:>5} {}", addr, addr, size, align, os.name);
        if os.content != Content::Inputs {
            let _ =
                writeln!(out, "{:>16x} {:>16x} {:>8x} {:>5}         <internal>:({})", addr, addr, size, align, os.name);
            continue;
        }
        for &SectionRef { file: f, index: s } in &os.members {
            let obj = &ctx.objects[f];
            let sec = &obj.sections[s as usize];
            let size = ctx.member_size(f, s);
            let addr = place[i].addr + ctx.layout.inputs.offsets[SectionRef::new(f, s)];
            let note = if sec.merge_index.is_some() { " (merged)" } else { "" };
            let _ = writeln!(
                out,
                "{:>16x} {:>16x} {:>8x} {:>5}         {}:({}){note}",
                addr,
                addr,
                size,
                sec.align(),
                obj.name,
                String::from_utf8_lossy(obj.section_name(s as usize))
            );
            for &(a, size, name) in defined.get(&SectionRef::new(f, s)).map(|v| v.as_slice()).unwrap_or_default() {
                // lld: the symbol's size, alignment 1, the name demangled unless --no-demangle.
                let _ = writeln!(out, "{a:>16x} {a:>16x} {size:>8x} {:>5}                 {}", 1, symbol_name(name));
            }
        }
    }
    // Sections folded by --icf, after the layout they were folded out of.
    for obj in &ctx.objects {
        for &(i, into) in &obj.folds {
            let sec = &obj.sections[i as usize];
            let kept = &ctx.objects[into.file];
            let _ = writeln!(
                out,
                "{:>16} {:>16} {:>8x} {:>5} <folded> {}:({}) into {}:({})",
                "-",
                "-",
                sec.size,
                sec.align(),
                obj.name,
                String::from_utf8_lossy(obj.section_name(i as usize)),
                kept.name,
                String::from_utf8_lossy(ctx.objects.section_name(into))
            );
        }
    }
    out
}
