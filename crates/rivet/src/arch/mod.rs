//! Target back ends. Everything that differs between machines lives behind `Arch`: the ELF
//! machine number and the names the command line and linker scripts use for it, page sizes, the
//! dynamic relocation types, the PLT's shape and bytes, the TLS variant, and the relocation scan
//! and apply. The link from its open inputs on is generic over it (`link::link_loaded::<A>`), so
//! every call is static. rivet has two implementations, `x86_64::X86_64` and `aarch64::Aarch64`;
//! `Machine` (from `-m`, the first ELF input's `e_machine`, `--oformat` and script names:
//! `crate::machine`, plain data the input readers can use) and `with_arch!` are the only places
//! that map a machine to one (`Arch::MACHINE` names the machine of one).

pub mod aarch64;
pub mod apply;
pub mod endbr;
pub mod scan;
pub mod thunks;
pub mod x86_64;

use crate::ctx::Ctx;
use crate::diag::Result;
use crate::ids::{FileId, SectionRef};
use crate::input::object::{ObjSection, Rela};
use crate::layout::Tls;
use crate::linked::Linked;
use crate::sections::output::Sizes;
use crate::synthetic::property::Properties;
use crate::synthetic::tables::{DynRel, PltGuard, Tables};

/// Relocation type 0, "no relocation" on every machine (`R_X86_64_NONE`, `R_AARCH64_NONE`, ...).
pub const R_NONE: u32 = 0;

/// One target machine. Associated constants and functions only: an implementation is a unit type
/// named as a type parameter, never a value.
pub trait Arch: Send + Sync + 'static {
    /// Its ELF `e_machine`, the names `-m`, `--oformat` and linker scripts use for it, its
    /// dynamic linker, library directories and page sizes (`crate::machine`).
    const NAMES: &'static crate::machine::Names;
    /// The machine this is (what `with_arch!` maps to it).
    const MACHINE: Machine;

    /// Relocation types: the dynamic ones the linker writes (type 0 is `R_NONE` on every machine).
    const R_ABS64: u32;
    const R_RELATIVE: u32;
    const R_GLOB_DAT: u32;
    const R_JUMP_SLOT: u32;
    const R_COPY: u32;
    const R_IRELATIVE: u32;
    const R_TPOFF64: u32;
    const R_DTPMOD64: u32;
    const R_DTPOFF64: u32;
    const R_TLSDESC: u32;
    /// The relocation of a direct call, which does not take the callee's address (identical code
    /// folding may merge a function referenced only so).
    const R_CALL: u32;

    /// The PLT: the lazy-binding header of dynamic outputs, the size of each entry (unguarded:
    /// `plt_entry_size`), and the words `.got.plt` reserves for the dynamic loader before the
    /// slots.
    const PLT_HEADER_SIZE: u64;
    const PLT_ENTRY_SIZE: u64;
    const GOTPLT_RESERVED: u64;
    /// The PLT section's alignment.
    const PLT_ALIGN: u64;
    /// `.plt`'s `sh_entsize`.
    const PLT_ENTSIZE: u64;
    /// The dynamic tags a guarded PLT (`PltGuard`'s `bti`, `pac`) is announced by (0: none).
    const GUARDED_PLT_TAGS: [u32; 2] = [0, 0];
    /// The processor-specific `st_other` flags a symbol keeps in `.dynsym`, and the one that
    /// marks a function of a variant procedure-call standard (0: none), whose PLT entries need
    /// the dynamic tag `DT_VARIANT_PCS`.
    const STO_FLAGS: u8;
    const STO_VARIANT_PCS: u8;
    const DT_VARIANT_PCS: u32;
    /// Whether `_GLOBAL_OFFSET_TABLE_` is the start of `.got.plt` (else of `.got`).
    const GOT_BASE_IN_GOTPLT: bool;
    /// `-z mark-plt`'s dynamic tags: the PLT's address, its size, its entry size.
    const MARK_PLT_TAGS: [u32; 3];

    /// How far before and after a relocation's offset applying it may read or write (its
    /// relaxations rewrite instructions around it).
    const RELOC_REACH: u64;

    /// Range-extension thunks (`thunks`): how far a direct branch reaches, either way (0: every
    /// branch reaches every address, and there are no thunks), and the size of a thunk entry.
    const BRANCH_REACH: u64;
    const THUNK_ENTRY_SIZE: u64;

    /// Whether a relocation of type `ty` is a direct branch that may go through a thunk.
    fn is_thunked_branch(ty: u32) -> bool;

    /// Writes a thunk entry at address `at` that jumps to `to` into `buf` (`THUNK_ENTRY_SIZE`
    /// bytes); Err says why it cannot.
    fn write_thunk(at: u64, to: u64, buf: &mut [u8]) -> std::result::Result<(), String>;

    /// The code sequences that need a patch to work around a processor erratum (AArch64's
    /// Cortex-A53 843419 with `--fix-cortex-a53-843419`, where the cheaper rewrite does not
    /// reach), in the output as laid out: each one's input section and the offset there of the
    /// instruction its patch takes over, sorted.
    fn erratum_patch_sites(ctx: &Linked) -> Vec<(SectionRef, u64)>;

    /// Writes the bytes of erratum patch area `area` (`sections::thunks::PatchArea`).
    fn write_patches(ctx: &Linked, area: &crate::sections::thunks::PatchArea, buf: &mut [u8]);

    /// Whether `sh_type` is the machine's own type for unwind tables (read like `.eh_frame`).
    fn is_unwind_section(sh_type: u32) -> bool;

    /// A relocation type's name, for messages.
    fn reloc_name(ty: u32) -> String;

    /// The thread-pointer offset of the TLS address `addr` in this module's TLS block `tls`
    /// (its start, aligned end and alignment): variant I places the block after the thread
    /// pointer and its control block, variant II before it.
    fn tp_offset(tls: Tls, addr: u64) -> i64;

    /// What relocation `rel` of live allocated section `sec` against `t` needs from the linker
    /// (`scan` decides what it gets); `relax`: GOT loads may be relaxed (`relaxes_got_loads`).
    fn classify(ctx: &Ctx, relax: bool, sec: &ObjSection, rel: &Rela, t: crate::ctx::Target) -> scan::Need;

    /// Whether the scan may relax GOT loads to direct references, judged before layout from the
    /// output sections' sizes.
    fn relaxes_got_loads(ctx: &Ctx, sizes: &Sizes) -> bool;

    /// Whether the PLT is the IBT form (`.plt.sec`), given the output's GNU property features.
    fn ibt_plt(ctx: &Ctx, features: u32) -> bool;

    /// The PLT's landing pads and pointer authentication (AArch64's BTI and PAC PLT), given the
    /// output's GNU property features: none unless the machine has them.
    fn plt_guard(_ctx: &Ctx, _features: u32) -> PltGuard {
        PltGuard::default()
    }

    /// The size of a PLT entry with `guard`.
    fn plt_entry_size(_guard: PltGuard) -> u64 {
        Self::PLT_ENTRY_SIZE
    }

    /// Applies the relocation `r` (in an allocated section or not); gives the dynamic relocations
    /// it needs to `dynrels`. True when the next relocation belongs to a rewritten sequence and
    /// must be skipped.
    fn apply_one(r: &mut apply::Reloc<Self>, alloc: bool, dynrels: &mut Vec<DynRel>) -> bool
    where
        Self: Sized;

    /// Applies relocation `r` of type `ty` in a non-allocated section, its symbol's value `s`.
    fn write_nonalloc(r: &mut apply::Reloc<Self>, ty: u32, t: crate::ctx::Target, a: i128, s: i128)
    where
        Self: Sized;

    /// The width of the field a tombstone fills for a relocation of type `ty` in a non-allocated
    /// section against a dropped section (0: none).
    fn tombstone_width(ty: u32) -> usize;

    /// Rewrites what the target must in an allocated input section once its relocations are
    /// applied (AArch64's Cortex-A53 erratum 843419 sequences): the bytes `owned` of section `si`
    /// of `f`, whose bytes from offset `lo` on are in `buf` (with `RELOC_REACH` to spare after).
    fn finish_section(ctx: &Linked, f: FileId, si: u32, buf: &mut [u8], lo: u64, owned: std::ops::Range<u64>);

    /// Walks every relocation of the live sections and gives what they need from the linker (GOT
    /// entries, PLT entries, copies, dynamic relocations), sized.
    fn scan_relocations(ctx: &mut Ctx, properties: &Properties, sizes: &mut Sizes) -> Tables
    where
        Self: Sized,
    {
        scan::scan_relocations::<Self>(ctx, properties, sizes)
    }

    /// Patches the relocations of input section `si` of `f`, whose bytes are in `buf`; gives the
    /// dynamic relocations it needs.
    fn apply(ctx: &Linked, f: FileId, si: u32, buf: &mut [u8]) -> Vec<DynRel>
    where
        Self: Sized,
    {
        apply::apply::<Self>(ctx, f, si, buf)
    }

    /// `apply` for bytes `owned` of a section of which `buf` holds the bytes from `lo` on, with
    /// `RELOC_REACH` to spare on both sides.
    fn apply_range(
        ctx: &Linked,
        f: FileId,
        si: u32,
        buf: &mut [u8],
        lo: u64,
        owned: std::ops::Range<u64>,
    ) -> Vec<DynRel>
    where
        Self: Sized,
    {
        apply::apply_range::<Self>(ctx, f, si, buf, lo, owned)
    }

    /// The type `--emit-relocs` reports for relocation `rel` of input section `r` against `t`:
    /// its own, or what the linker's relaxation made of it (a GOT load relaxed to a direct
    /// reference is reported as that reference, so that post-link tools read the code as it is).
    fn emitted_type(ctx: &Linked, r: SectionRef, rel: &Rela, t: crate::ctx::Target) -> u32;

    /// Writes `.plt` (the header when `ctx.plans.got.plt_header` is not 0, then one stub per
    /// entry) at address `plt_addr`.
    fn write_plt(ctx: &Linked, plt_addr: u64, buf: &mut [u8]) -> Result<()>;
    /// Writes `.plt.sec` (the IBT PLT's entries) at address `addr`.
    fn write_plt_sec(ctx: &Linked, addr: u64, buf: &mut [u8]) -> Result<()>;
    /// Where an import's `.got.plt` slot points before it is bound, from the PLT's address
    /// `plt` and the import's stub in `.plt` at `stub` (`sec` when the PLT has a `.plt.sec`).
    fn plt_lazy_addr(plt: u64, stub: u64, sec: bool) -> u64;
    /// The offset in a PLT entry of its indirect jump (`-z mark-plt`'s JUMP_SLOT addend), in an
    /// IBT PLT or not.
    fn plt_jump_offset(ibt: bool) -> u64;
}

pub use crate::machine::Machine;

/// The target of a link: `-m`'s (the parser accepts only emulations `Machine::for_emulation`
/// knows), else the machine of the first ELF object or shared library named (every input's header
/// was checked against `Machine::for_machine`), else the default.
pub fn machine_for_link(config: &crate::args::Config, loaded: &[crate::input::Loaded]) -> Machine {
    if let Some(m) = config.emulation.as_deref().and_then(|e| Machine::for_emulation(e).ok()) {
        return m;
    }
    loaded
        .iter()
        .filter(|l| matches!(l.kind, crate::input::Kind::Object | crate::input::Kind::Shared))
        .map(|l| l.file.data())
        .find(|d| crate::input::object::is_elf(d) && d.len() >= 20)
        .and_then(|d| Machine::for_machine(u16::from_le_bytes([d[18], d[19]])))
        .unwrap_or(Machine::DEFAULT)
}

/// Refuses the link when an ELF object or shared library named on the command line is for
/// another machine than `machine`, the link's target (GNU ld's "file in wrong format").
pub fn check_machines(config: &crate::args::Config, machine: Machine, loaded: &[crate::input::Loaded]) -> Result<()> {
    let names = machine.names_of();
    for l in loaded.iter().filter(|l| matches!(l.kind, crate::input::Kind::Object | crate::input::Kind::Shared)) {
        let d = l.file.data();
        if !crate::input::object::is_elf(d) || d.len() < 20 {
            continue;
        }
        let m = u16::from_le_bytes([d[18], d[19]]);
        if m != names.e_machine {
            let theirs = Machine::for_machine(m).map_or("another machine", |m| m.names_of().name);
            let why = if config.emulation.is_some() { "the -m emulation's" } else { "the first ELF input's" };
            crate::bail!(
                "{}: is for machine {theirs} ({m}), not {} ({why} machine, the link's target)",
                l.name,
                names.name
            );
        }
    }
    Ok(())
}

/// Refuses the link when an object in it (an archive member, an object resolution or LTO added)
/// is for another machine than the link's target, named by `names`.
pub fn check_objects(
    names: &crate::machine::Names,
    objects: &crate::ids::IdVec<FileId, crate::input::object::ObjectFile>,
) -> Result<()> {
    match objects.iter().find(|o| o.machine != 0 && o.machine != names.e_machine) {
        Some(obj) => {
            let theirs = Machine::for_machine(obj.machine).map_or("another machine", |m| m.names_of().name);
            crate::bail!(
                "{}: is for machine {theirs} ({}), not {}, the link's target",
                obj.name,
                obj.machine,
                names.name
            )
        }
        None => Ok(()),
    }
}

/// Refuses a linker script whose OUTPUT_FORMAT, OUTPUT_ARCH or TARGET names another machine than
/// `machine`, the link's target.
pub fn check_scripts(machine: Machine, scripts: &[crate::input::script::ScriptFile]) -> Result<()> {
    for f in scripts {
        if let Some((m, loc, what)) = f.script.machines.iter().find(|(m, ..)| *m != machine) {
            crate::bail!(
                "{loc}: {what} names {}, not {}, the link's target (-m, or the first ELF input's machine)",
                m.names_of().name,
                machine.names_of().name
            );
        }
    }
    Ok(())
}

/// Refuses the options that are another target's than `machine`'s: x86-64's CET and PLT
/// marking options in an AArch64 link, AArch64's erratum workaround and BTI, PAC and GCS options
/// in an x86-64 one (as lld refuses them).
pub fn check_target_options(config: &crate::args::Config, machine: Machine) -> Result<()> {
    use crate::args::{FeatureReport, GcsPolicy};
    let name = machine.names_of().name;
    let x86_only = [
        (config.mark_plt, "-z mark-plt"),
        (config.z_ibt, "-z ibt"),
        (config.z_shstk, "-z shstk"),
        (config.ibt_plt, "-z ibtplt"),
        (config.rewrite_endbr, "-z rewrite-endbr"),
        (config.cet_report != FeatureReport::None, "-z cet-report"),
    ];
    let aarch64_only = [
        (config.fix_cortex_a53_843419, "--fix-cortex-a53-843419"),
        (config.z_force_bti, "-z force-bti"),
        (config.bti_report != FeatureReport::None, "-z bti-report"),
        (config.z_pac_plt, "-z pac-plt"),
        (config.z_gcs != GcsPolicy::Implicit, "-z gcs"),
        (config.gcs_report != FeatureReport::None, "-z gcs-report"),
    ];
    let others = match machine {
        Machine::X86_64 => &aarch64_only[..],
        Machine::Aarch64 => &x86_only[..],
    };
    if let Some((_, option)) = others.iter().find(|(given, _)| *given) {
        crate::bail!("{option} is not an option for {name} (the link's target)");
    }
    Ok(())
}

/// Where an import's `.got.plt` slot points before it is bound (`Arch::plt_lazy_addr`): its PLT
/// entry `i`'s lazy-binding stub.
pub fn plt_lazy_addr<A: Arch>(ctx: &Linked, i: u32) -> u64 {
    use crate::sections::output::Content;
    let plt = ctx.synthetic_addr(Content::Plt).expect("PLT section exists when PLT entries do");
    let stub = plt + ctx.plans.got.plt_header + ctx.plans.got.plt_entry * i as u64;
    A::plt_lazy_addr(plt, stub, ctx.layout.synthetic.get(Content::PltSec).is_some())
}

/// The thread-pointer offset of a TLS symbol (negative below the thread pointer, as on x86-64).
pub fn tpoff<A: Arch>(ctx: &Linked, t: crate::ctx::Target) -> i64 {
    // `_TLS_MODULE_BASE_@tpoff` is 0, as in lld: a local-dynamic TLS-descriptor sequence
    // relaxed in an executable leaves 0 in %rax, and the `x@dtpoff` added to it (relaxed to
    // x's thread-pointer offset, as after the classic local-dynamic sequence) is the whole
    // offset; the block's own offset must not count twice.
    if let crate::ctx::Target::Global(id) = t {
        if ctx.symbols[id].name == b"_TLS_MODULE_BASE_" {
            return 0;
        }
    }
    A::tp_offset(ctx.layout.tls, ctx.raw_value(t))
}

/// Calls `$f::<A>($args)` with `A` the implementation of `machine` (a `Machine`).
#[macro_export]
macro_rules! with_arch {
    ($machine:expr, $f:ident ( $($arg:expr),* $(,)? )) => {
        match $machine {
            $crate::arch::Machine::X86_64 => $f::<$crate::arch::x86_64::X86_64>($($arg),*),
            $crate::arch::Machine::Aarch64 => $f::<$crate::arch::aarch64::Aarch64>($($arg),*),
        }
    };
}
