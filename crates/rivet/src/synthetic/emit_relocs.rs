//! `--emit-relocs` (`-q`): the inputs' relocations kept in the final output, one `.rela<name>`
//! section per output section that has any, as lld and GNU ld write them for post-link tools (BOLT,
//! profilers): the offset is the place's address (its offset in the section for a non-allocated
//! one), the symbol is the output's `.symtab` entry, and a section symbol's addend is re-based on
//! the output section's symbol. The relocation type is the input's, except that a GOT load the
//! linker relaxed to a direct reference becomes that reference's type (`Arch::emitted_type`; TLS
//! sequences keep their type as a marker, as in GNU ld). Relocations of dropped code (`.eh_frame` records of discarded
//! functions, sections that ICF folded) are not kept; one against a symbol the link dropped
//! becomes `R_NONE`.
use crate::arch::Arch;
use crate::ctx::{Ctx, Target};
use crate::ids::{OutputSectionId, SectionRef};
use crate::input::object::Rela;
use crate::linked::Linked;
use crate::sections::output::{Content, OutputSection, Sizes};
use crate::synthetic::symtab::{Plan, Source};
use object::elf;
use object::LittleEndian as LE;

pub use crate::synthetic::plans::EmitRelocs;
use crate::synthetic::plans::SymtabIndices;

/// The relocations of input section `r` that reach the output, with the offset each lands at
/// within the input section's contribution (`.eh_frame` records move; others keep theirs).
fn kept<'a>(ctx: &'a Ctx, r: SectionRef) -> impl Iterator<Item = (&'a Rela, u64)> + 'a {
    let sec = &ctx.objects[r];
    // Merged (SHF_MERGE) input sections are cut into pieces: their own relocations are not kept.
    let live = sec.live && !sec.folded() && sec.merge_index.is_none();
    let eh = ctx.eh.get(&r);
    sec.relas.iter().filter(move |_| live).filter_map(move |rel| {
        let off = rel.r_offset.get(LE);
        match eh {
            Some(eh) => crate::sections::eh_frame::map_offset(eh, off).map(|o| (rel, o)),
            None => Some((rel, off)),
        }
    })
}

/// `--emit-relocs`: a `.rela` output section for every output section of input sections with
/// relocations. Needs the input offsets and the `.eh_frame` split.
pub fn create_if_asked(ctx: &mut Ctx, sizes: &mut Sizes) -> Option<EmitRelocs> {
    if !ctx.config.emit_relocs {
        return None;
    }
    let mut made = EmitRelocs::default();
    let targets: Vec<(OutputSectionId, u64)> = ctx
        .sections
        .iter_enumerated()
        .filter(|(_, s)| s.content == Content::Inputs)
        .map(|(id, s)| (id, s.members.iter().map(|&r| kept(ctx, r).count() as u64).sum::<u64>()))
        .filter(|&(_, n)| n > 0)
        .collect();
    for (target, n) in targets {
        let t = &ctx.sections[target];
        let name = format!(".rela{}", t.name);
        let flags = elf::SHF_INFO_LINK as u64 | (t.flags & elf::SHF_ALLOC as u64);
        // A non-allocated .rela section: the loader never sees these.
        let mut s =
            OutputSection::new(&name, elf::SHT_RELA, flags & !(elf::SHF_ALLOC as u64), 8, Content::EmittedRelocs);
        s.entsize = 24;
        let id = sizes.add(&mut ctx.sections, s, n * 24);
        made.sections.push((id, target));
    }
    Some(made)
}

fn indices(plan: &Plan) -> SymtabIndices {
    let mut ix = SymtabIndices::default();
    for (k, &id) in plan.sections.iter().enumerate() {
        ix.sections.insert(id, k as u32 + 1);
    }
    let first = 1 + plan.sections.len() as u32;
    for (k, &(src, _)) in plan.entries.iter().enumerate() {
        let n = first + k as u32;
        match src {
            Source::Local { file, sym } => {
                ix.locals.insert((file, sym), n);
            }
            Source::Global { id, .. } => {
                ix.globals.insert(id, n);
            }
            Source::Plt { .. } | Source::Thunk { .. } => {}
        }
    }
    ix
}

/// Writes the relocations of `target` into `buf`.
pub fn write<A: Arch>(linked: &Linked, plan: Option<&Plan>, target: OutputSectionId, buf: &mut [u8]) {
    let (Some(plan), Some(made)) = (plan, linked.plans.emit_relocs.as_ref()) else { return };
    let ix = made.indices.get_or_init(|| indices(plan));
    let t = &linked.sections[target];
    let base = linked.layout.sections[target].addr;
    let section_sym = |out: Option<OutputSectionId>| out.and_then(|o| ix.sections.get(&o).copied());
    let mut at = 0usize;
    for &r in &t.members {
        let member_addr = base + linked.layout.inputs.offsets[r];
        let obj = &linked.objects[r.file];
        for (rel, off) in kept(linked, r) {
            let r_sym = rel.r_sym(LE, false);
            let addend = rel.r_addend.get(LE);
            let (sym, r_type, addend) = match linked.target(r.file, r_sym) {
                _ if r_sym == 0 => (0, rel.r_type(LE, false), addend),
                Target::Global(id) => match ix.globals.get(&id) {
                    Some(&n) => (n, rel.r_type(LE, false), addend),
                    None => (0, crate::arch::R_NONE, 0),
                },
                t @ Target::Local(f, i) => {
                    let esym = &obj.syms[i as usize];
                    let kept_local = (esym.st_info & 0xf != elf::STT_SECTION).then(|| ix.locals.get(&(f, i))).flatten();
                    match (kept_local, obj.sym_shndx(i as usize)) {
                        (Some(&n), _) => (n, rel.r_type(LE, false), addend),
                        // A section symbol, or a local .symtab leaves out (`.L` names): the
                        // output section's symbol, the addend re-based on it.
                        (None, Some(sec)) if obj.sections[sec as usize].live => {
                            let s = &obj.sections[sec as usize];
                            let out = obj.folded_into(sec as usize).map_or(s.out, |k| linked.objects[k].out);
                            match section_sym(out) {
                                Some(n) => {
                                    // An addend outside a merged section fails the link
                                    // where the relocation itself is applied.
                                    let value = linked
                                        .merged_section_value(t, addend)
                                        .and_then(Result::ok)
                                        .unwrap_or_else(|| linked.raw_value(t) as i128);
                                    let out_addr = linked.layout.sections[out.unwrap()].addr as i128;
                                    (n, rel.r_type(LE, false), (value + addend as i128 - out_addr) as i64)
                                }
                                None => (0, crate::arch::R_NONE, 0),
                            }
                        }
                        // An absolute local: its value goes into the addend.
                        (None, None) => (0, rel.r_type(LE, false), (linked.raw_value(t) as i64).wrapping_add(addend)),
                        _ => (0, crate::arch::R_NONE, 0),
                    }
                }
            };
            // What relaxation made of the input's relocation, unless it was dropped to R_NONE.
            let r_type = match r_type == rel.r_type(LE, false) {
                true => A::emitted_type(linked, r, rel, linked.target(r.file, r_sym)),
                false => r_type,
            };
            let out = Rela {
                r_offset: object::U64::new(LE, member_addr + off),
                r_info: object::U64::new(LE, (u64::from(sym) << 32) | u64::from(r_type)),
                r_addend: object::I64::new(LE, addend),
            };
            buf[at..at + 24].copy_from_slice(object::bytes_of(&out));
            at += 24;
        }
    }
}
