//! The relocation scan's target-independent decisions, as lld's `RelocationScanner` makes them:
//! each target says what a relocation needs (`Need`, its `Arch::classify`), and this module
//! decides what the output gets for it: GOT entries, PLT entries (IFUNCs, calls to preemptible
//! functions, canonical entries), copies of imported data, dynamic relocations (RELATIVE or
//! symbolic, packed or not), text relocations, and the errors for references a position-
//! independent output cannot hold.
use crate::arch::Arch;
use crate::ctx::{Ctx, Target};
use crate::ids::{FileId, SectionRef, SymbolId};
use crate::input::object::ObjSection;
use crate::sections::output::Sizes;
use crate::synthetic::property::{self, Properties};
use crate::synthetic::{GotKey, GotKind, Tables};
use object::elf::*;
use object::LittleEndian as LE;

/// What a relocation needs from the linker, as its target classifies it (`Arch::classify`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Nothing: resolved at link time whatever the symbol (a relaxed GOT load, a symbol's size,
    /// a type the scan has no decision for).
    Nothing,
    /// A GOT entry of this kind; `true` when the reference is relative to `.got.plt` as well.
    Got(GotKind, bool),
    /// The GOT's base (`_GLOBAL_OFFSET_TABLE_`-relative), so `.got.plt` exists.
    GotBase,
    /// The large code model's GOT-relative call: `.got.plt`, and a PLT entry when the callee is
    /// preemptible.
    PltOff,
    /// A direct call or jump: through a PLT entry when the callee is preemptible.
    Call,
    /// A word-sized absolute address: written at link time, or left to a dynamic relocation
    /// (RELATIVE, symbolic) in position-independent outputs and for preemptible symbols.
    Abs64,
    /// An address needed at link time (PC-relative, or `absolute` and narrower than a word, which
    /// a position-independent output cannot hold): an imported symbol gets an address in the
    /// executable (a canonical PLT entry or a copy); a shared object cannot preempt.
    Direct { absolute: bool },
    /// A local-exec thread-pointer offset: only in an executable, for its own variables.
    TlsLe,
    /// A TLS descriptor sequence: kept with a descriptor in the GOT (`keeps_tlsdesc`), else
    /// relaxed, to initial-exec (a TPOFF GOT entry) for a preemptible variable, to local-exec.
    TlsDesc,
    /// An executable's general-dynamic sequence relaxed (with the call that follows it, which is
    /// skipped): to initial-exec for a preemptible variable, else to local-exec.
    TlsGdRelaxed,
    /// An executable's local-dynamic sequence relaxed to local-exec (the call after it skipped).
    TlsLdRelaxed,
}

/// Whether TLS descriptor sequences are kept for the dynamic loader to fill: in a shared object,
/// and in a dynamically linked executable under `--no-relax` (as mold keeps them; relaxing them
/// is an optimisation). A static executable has no loader to fill them: they are always relaxed,
/// also in a PIE without a dynamic linker (`-Bstatic -pie --no-dynamic-linker`, how the AArch64
/// cross gcc asks for `-static-pie`), which relocates itself before its TLS block exists. So is a
/// local-dynamic descriptor (against `_TLS_MODULE_BASE_`): an executable's `@dtpoff`
/// offsets are computed for the relaxed sequences (local-dynamic `__tls_get_addr` ones are
/// always relaxed), and a kept descriptor would need them relative to the module instead.
pub fn keeps_tlsdesc(ctx: &Ctx, t: Target) -> bool {
    let module_base = matches!(t, Target::Global(id) if ctx.symbols[id].name == b"_TLS_MODULE_BASE_");
    !ctx.kind.is_executable()
        || (!ctx.config.relax && ctx.kind.is_dynamic() && !ctx.config.no_dynamic_linker && !module_base)
}

fn is_alloc(sec: &ObjSection) -> bool {
    sec.flags & SHF_ALLOC as u64 != 0
}

/// What one file's relocations need; merged in file order so the tables are deterministic.
#[derive(Default)]
struct Needs {
    got: Vec<(Target, GotKind)>,
    plt: Vec<Target>,
    canonical: Vec<SymbolId>,
    copies: Vec<SymbolId>,
    dynrels: u64,
    relative: u64,
    relr: Vec<(SectionRef, u64)>,
    android: Vec<crate::synthetic::InputDynRel>,
    gotplt: bool,
    /// The file's first text relocation: its section and target.
    textrel: Option<(FileId, u32, Target)>,
}

/// The relocation scan as the pipeline runs it: decides whether GOT loads relax, walks every
/// relocation (`scan`), places the copies of imported data (`layout::allocate_copies`: they add
/// `.bss` space, to `sizes`, and may add symbols), and counts the dynamic relocations the GOT and
/// the copies need. Gives the tables the synthetic sections are sized and written from.
pub fn scan_relocations<A: Arch>(ctx: &mut Ctx, properties: &Properties, sizes: &mut Sizes) -> Tables {
    let relax = A::relaxes_got_loads(ctx, sizes);
    let mut tables = scan::<A>(ctx, relax, property::features(properties, A::MACHINE));
    crate::layout::allocate_copies(ctx, &mut tables, sizes);
    let (all, relative, packed) = table_relocations::<A>(ctx, &tables);
    tables.dynrel_count += all;
    tables.variant_pcs =
        A::STO_VARIANT_PCS != 0 && tables.plt.iter().any(|&t| other_flags(ctx, t) & A::STO_VARIANT_PCS != 0);
    tables.relative_count += relative;
    tables.relr_got = packed;
    tables
}

/// The processor-specific `st_other` flags of `t`'s definition, in an object or a shared library.
pub fn other_flags(ctx: &Ctx, t: Target) -> u8 {
    match (ctx.definition(t), ctx.shared_def(t)) {
        (Some((_, sym)), _) => sym.st_other & !3,
        (None, Some(d)) => d.other_flags,
        (None, None) => 0,
    }
}

/// Walks every relocation of every live allocated section and sizes the GOT, PLT, copy relocations
/// and dynamic relocations. Errors (a 32-bit absolute relocation in a PIE, a non-PIC reference in a
/// shared object, an unknown type) go to `ctx.diag`.
fn scan<A: Arch>(ctx: &Ctx, relax: bool, features: u32) -> Tables {
    use rayon::prelude::*;
    let per_file: Vec<Needs> = ctx
        .file_order
        .par_iter()
        .with_max_len(1)
        .map(|&f| {
            let mut needs = Needs::default();
            for (si, sec) in ctx.objects[f].sections.iter().enumerate() {
                if sec.live && is_alloc(sec) && !sec.relas.is_empty() {
                    scan_section::<A>(ctx, relax, f, si as u32, sec, &mut needs);
                }
            }
            needs
        })
        .collect();
    let mut tables = Tables::default();
    tables.relax_got_loads = relax;
    tables.plt_header = if ctx.kind.is_dynamic() { A::PLT_HEADER_SIZE } else { 0 };
    tables.gotplt_reserved = A::GOTPLT_RESERVED;
    tables.mark_plt_tags = A::MARK_PLT_TAGS;
    tables.got_base_in_gotplt = A::GOT_BASE_IN_GOTPLT;
    tables.sto_flags = A::STO_FLAGS;
    tables.dt_variant_pcs = A::DT_VARIANT_PCS;
    tables.ibt = A::ibt_plt(ctx, features);
    tables.guard = A::plt_guard(ctx, features);
    tables.plt_entry = A::plt_entry_size(tables.guard);
    tables.guarded_plt_tags = A::GUARDED_PLT_TAGS;
    for n in per_file {
        for (t, k) in n.got {
            tables.add_got(t, k);
        }
        for t in n.plt {
            tables.add_plt(t);
        }
        for id in n.canonical {
            tables.add_plt(Target::Global(id));
            tables.canonical.insert(id);
        }
        for id in n.copies {
            if !tables.copies.contains(&id) {
                refuse_copy(ctx, id);
                tables.copies.push(id);
            }
        }
        tables.dynrel_count += n.dynrels;
        tables.relative_count += n.relative;
        tables.relr.extend(n.relr);
        tables.android.extend(n.android);
        tables.need_gotplt |= n.gotplt;
        if let (None, Some(first)) = (tables.textrel, n.textrel) {
            warn_text_relocations(ctx, first);
            tables.textrel = Some(first);
        }
    }
    tables
}

/// The dynamic relocations the GOT and the copies need (once the tables are final): (all of
/// those in `.rela.dyn`, how many of them are RELATIVE, how many RELATIVE ones are packed into
/// `.relr.dyn` instead).
///
/// The entries are counted on every core: rust-big's 47k took 5.5 ms on one.
fn table_relocations<A: Arch>(ctx: &Ctx, tables: &Tables) -> (u64, u64, u64) {
    use rayon::prelude::*;
    let count = |&(key, _): &(GotKey, _)| {
        let (mut all, mut relative, mut packed) = (0, 0, 0);
        for (_, ty, _, _) in crate::synthetic::got_entry::<A>(ctx, None, key).1 {
            if ty == A::R_RELATIVE && ctx.config.pack_relative_relocs {
                packed += 1; // The GOT is 8-aligned: always packed.
                continue;
            }
            all += 1;
            relative += (ty == A::R_RELATIVE) as u64;
        }
        (all, relative, packed)
    };
    let sum = |a: (u64, u64, u64), b: (u64, u64, u64)| (a.0 + b.0, a.1 + b.1, a.2 + b.2);
    let (all, relative, packed) = tables.got.par_iter().with_min_len(1024).map(count).reduce(|| (0, 0, 0), sum);
    (tables.copies.len() as u64 + all, relative, packed)
}

fn scan_section<A: Arch>(ctx: &Ctx, relax: bool, f: FileId, si: u32, sec: &ObjSection, needs: &mut Needs) {
    let obj = &ctx.objects[f];
    let writable = sec.flags & SHF_WRITE as u64 != 0;
    let exe = ctx.kind.is_executable();
    let mut skip_next = false;
    for rel in sec.relas {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        let ty = rel.r_type(LE, false);
        let t = ctx.target(f, rel.r_sym(LE, false));
        let pre = ctx.is_preemptible(t);
        let place = || place_name(ctx, f, si, rel.r_offset.get(LE));
        if ctx.is_ifunc(t) && !pre {
            needs.plt.push(t);
        }
        match A::classify(ctx, relax, sec, rel, t) {
            Need::Nothing => {}
            Need::Got(kind, gotplt) => {
                needs.got.push((t, kind));
                needs.gotplt |= gotplt;
            }
            Need::TlsGdRelaxed => {
                skip_next = true;
                if pre {
                    needs.got.push((t, GotKind::TpOff)); // general-dynamic becomes initial-exec
                }
            }
            Need::TlsLdRelaxed => skip_next = true,
            // TLS descriptors, as lld handles them: a shared object gets a descriptor in the GOT;
            // an executable relaxes the sequence, to initial-exec for a shared library's
            // variable (a TPOFF GOT entry), to local-exec for its own (nothing needed).
            Need::TlsDesc if keeps_tlsdesc(ctx, t) => needs.got.push((t, GotKind::TlsDesc)),
            Need::TlsDesc if pre => needs.got.push((t, GotKind::TpOff)),
            Need::TlsDesc => {}
            Need::TlsLe if !exe || pre => ctx.diag.error(format!(
                "{}: local-exec TLS relocation {} against `{}` can not be used {}; recompile with -fPIC",
                place(),
                A::reloc_name(ty),
                ctx.name_of(t),
                if exe { "for a variable of a shared library" } else { "when making a shared object" }
            )),
            Need::TlsLe => {}
            Need::GotBase => needs.gotplt = true,
            // The large code model's calls: the PLT entry (the symbol itself when it binds
            // locally) relative to the GOT.
            Need::PltOff => {
                needs.gotplt = true;
                if pre {
                    needs.plt.push(t);
                }
            }
            Need::Call if pre => needs.plt.push(t),
            Need::Call => {}
            Need::Abs64 => {
                let how = abs64(ctx, t, writable);
                if !writable && matches!(how, Abs64::Symbolic | Abs64::Relative) {
                    text_relocation::<A>(ctx, f, si, rel.r_offset.get(LE), t, needs);
                }
                let android = ctx.config.pack_android_relocs;
                match how {
                    Abs64::Symbolic => {
                        needs.dynrels += 1;
                        if let (true, Target::Global(id)) = (android, t) {
                            let named = Some((id, rel.r_addend.get(LE)));
                            needs.android.push((SectionRef::new(f, si), rel.r_offset.get(LE), named));
                        }
                    }
                    Abs64::AddressInExecutable => address_in_executable(ctx, t, needs),
                    Abs64::Relative if ctx.packs_relative(sec, rel.r_offset.get(LE)) => {
                        needs.relr.push((SectionRef::new(f, si), rel.r_offset.get(LE)))
                    }
                    Abs64::Relative => {
                        needs.dynrels += 1;
                        needs.relative += 1;
                        if android {
                            needs.android.push((SectionRef::new(f, si), rel.r_offset.get(LE), None));
                        }
                    }
                    Abs64::Static => {}
                }
            }
            Need::Direct { absolute } => {
                if pre && exe && !ctx.is_imported(t) {
                    // Preemptible but imported from no library: an undefined weak symbol that
                    // `-z dynamic-undefined-weak` leaves for the loader. Code that is not
                    // position-independent holds its address itself, which the loader cannot
                    // fill (mold's words; GNU ld writes 0 and the option's promise is lost).
                    ctx.diag.error(format!(
                        "cannot create a copy relocation for {}: it is an undefined weak symbol left for the \
                         dynamic loader (-z dynamic-undefined-weak), and {} needs its address at link time; \
                         recompile with -fPIE or -fPIC\n>>> referenced by {}",
                        ctx.name_of(t),
                        A::reloc_name(ty),
                        referenced_by(ctx, f, si, rel.r_offset.get(LE), t)
                    ));
                } else if pre && exe {
                    address_in_executable(ctx, t, needs);
                } else if pre {
                    ctx.diag.error(format!(
                        "relocation {} against symbol '{}' can not be used when making a shared object; recompile with -fPIC\n>>> referenced by {}",
                        A::reloc_name(ty),
                        ctx.name_of(t),
                        referenced_by(ctx, f, si, rel.r_offset.get(LE), t)
                    ));
                } else if absolute && ctx.is_pic() && !ctx.is_absolute(t) {
                    ctx.diag.error(format!(
                        "relocation {} cannot be used against symbol '{}'; recompile with -fPIC\n>>> defined in {}\n>>> referenced by {}",
                        A::reloc_name(ty),
                        ctx.name_of(t),
                        obj.name,
                        referenced_by(ctx, f, si, rel.r_offset.get(LE), t)
                    ));
                }
            }
        }
    }
}

/// An executable that takes the address of an imported symbol without the GOT must give it an
/// address of its own: a canonical PLT stub for a function, a copy (`Arch::R_COPY`) for data.
fn address_in_executable(ctx: &Ctx, t: Target, needs: &mut Needs) {
    let Target::Global(id) = t else { return };
    if !ctx.is_imported(t) {
        return;
    }
    match ctx.sym_type(t) {
        STT_FUNC | STT_GNU_IFUNC => needs.canonical.push(id),
        _ => needs.copies.push(id),
    }
}

/// A copy relocation moves a library's variable into the executable: not for a protected one (the
/// library's own code keeps using its original), nor under `-z nocopyreloc`.
fn refuse_copy(ctx: &Ctx, id: SymbolId) {
    let t = Target::Global(id);
    let lib = match ctx.symbols[id].def {
        crate::resolve::Def::Shared { file, .. } => ctx.shared[file].file.name.as_str(),
        _ => "a shared library",
    };
    if ctx.shared_def(t).is_some_and(|d| d.protected) {
        ctx.diag.error(format!(
            "cannot create a copy relocation for protected symbol '{}' defined in {lib}; recompile with -fPIC",
            ctx.name_of(t)
        ));
    } else if !ctx.config.copy_relocations {
        ctx.diag.error(format!(
            "cannot create a copy relocation for '{}' defined in {lib} (-z nocopyreloc); recompile with -fPIC",
            ctx.name_of(t)
        ));
    }
}

/// How a word-sized absolute relocation (`Arch::R_ABS64`) is resolved; the scan and the write
/// decide alike.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Abs64 {
    /// Written at link time.
    Static,
    /// A RELATIVE dynamic relocation (position-independent output, a non-preemptible target).
    Relative,
    /// A symbolic `Arch::R_ABS64` dynamic relocation (a preemptible target).
    Symbolic,
    /// A position-dependent executable's read-only reference to an imported symbol: the symbol
    /// gets a fixed address in the executable (a canonical PLT entry, a copy) and the bytes are
    /// written at link time. (A PIE's address is not fixed: a symbolic text relocation, which
    /// finds the copy where the executable has one, as GNU ld's does.)
    AddressInExecutable,
}

pub fn abs64(ctx: &Ctx, t: Target, writable: bool) -> Abs64 {
    if ctx.is_preemptible(t) {
        if !writable && ctx.kind.is_executable() && !ctx.is_pic() && ctx.is_imported(t) {
            Abs64::AddressInExecutable
        } else {
            Abs64::Symbolic
        }
    } else if ctx.is_pic() && !ctx.is_absolute(t) {
        Abs64::Relative
    } else {
        Abs64::Static
    }
}

/// A dynamic relocation of a read-only section (a text relocation): an error under `-z text` (in
/// lld's words), else linked as GNU ld links it, with DT_TEXTREL, and the first one is kept for
/// GNU ld's warning (unless `-z notext`).
fn text_relocation<A: Arch>(ctx: &Ctx, f: FileId, si: u32, off: u64, t: Target, needs: &mut Needs) {
    if ctx.config.textrel == crate::args::TextRel::Error {
        let against = match t {
            Target::Global(_) => format!("symbol: {}", ctx.name_of(t)),
            Target::Local(..) => "local symbol".to_string(),
        };
        use crate::resolve::Def;
        let defined = match t {
            Target::Local(file, _) => ctx.objects[file].name.to_string(),
            Target::Global(id) => match ctx.symbols[id].def {
                Def::Defined { file, .. } | Def::Common { file, .. } => ctx.objects[file].name.to_string(),
                Def::Shared { file, .. } => ctx.shared[file].file.name.to_string(),
                _ => "the linker".to_string(),
            },
        };
        ctx.diag.error(format!(
            "can't create dynamic relocation {} against {against} in readonly segment; recompile object files \
             with -fPIC or pass '-Wl,-z,notext' to allow text relocations in the output\n>>> defined in {defined}\n\
             >>> referenced by {}",
            A::reloc_name(A::R_ABS64),
            referenced_by(ctx, f, si, off, t)
        ));
    }
    needs.textrel.get_or_insert((f, si, t));
}

/// GNU ld's warnings for the first text relocation (in file order) of an output that has any:
/// which symbol, in which read-only section, and that the output gets DT_TEXTREL.
fn warn_text_relocations(ctx: &Ctx, first: (FileId, u32, Target)) {
    if ctx.config.textrel != crate::args::TextRel::Warn {
        return;
    }
    let (f, si, t) = first;
    let obj = &ctx.objects[f];
    let against = match t {
        Target::Global(_) => format!("symbol `{}'", ctx.name_of(t)),
        Target::Local(..) => "a local symbol".to_string(),
    };
    ctx.diag.warn(format!(
        "{}: relocation against {against} in read-only section `{}'",
        obj.name,
        String::from_utf8_lossy(obj.section_name(si as usize))
    ));
    let what = if ctx.kind.is_executable() { "a PIE" } else { "a shared object" };
    ctx.diag.warn(format!("creating a DT_TEXTREL in an output file ({what})"));
}

/// A relocation's place in lld's words: `file.o:(function)`, `m.o:(.text+0x1A) in archive lib.a`.
pub fn place_name(ctx: &Ctx, f: FileId, si: u32, off: u64) -> String {
    let owns = |file: FileId, i: usize| crate::resolve::defines(&ctx.objects, &ctx.symbols, file, i);
    crate::srcloc::Places::new(&ctx.objects, &owns).object_part(f, si, off)
}

/// A relocation's place after lld's `>>> referenced by `: its source line (from DWARF) above the
/// object part when the object has one; only the object part past `--error-limit` (not printed).
pub fn referenced_by(ctx: &Ctx, f: FileId, si: u32, off: u64, t: Target) -> String {
    let owns = |file: FileId, i: usize| crate::resolve::defines(&ctx.objects, &ctx.symbols, file, i);
    let places = crate::srcloc::Places::new(&ctx.objects, &owns);
    if ctx.diag.limit_reached() {
        return places.object_part(f, si, off);
    }
    let name = match t {
        Target::Global(id) => ctx.symbols[id].name,
        Target::Local(file, s) => ctx.objects[file].sym_name(&ctx.objects[file].syms[s as usize]).unwrap_or_default(),
    };
    places.describe_reference(f, si, off, name, 14)
}
