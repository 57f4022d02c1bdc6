//! AArch64 (little-endian, LP64) Linux: the psABI's static relocations as gcc, clang and rustc
//! emit them, TLS variant I (the thread pointer, then a 16-byte control block, then the
//! executable's TLS block), the lazy-binding PLT (a 32-byte header and 16-byte
//! `adrp/ldr/add/br` entries, as GNU ld and lld write them; 24-byte entries with BTI landing pads
//! or PAC, as lld writes them: `plt`). An executable's TLS descriptor
//! sequences are relaxed as lld relaxes them: to local-exec (`movz/movk` of the offset) for its
//! own variables, to initial-exec (a GOT load of the offset) for a shared library's; so are its
//! initial-exec GOT loads of its own variables. A shared object keeps its descriptors. GOT
//! loads and `adrp`+`add` pairs of nearby symbols are relaxed as lld relaxes them (`relax`).
//! General-dynamic `__tls_get_addr` sequences are kept everywhere (gcc emits them only under
//! `-mtls-dialect=trad`).
use crate::arch::apply::Reloc;
use crate::arch::scan::{abs64, keeps_tlsdesc, Abs64, Need};
use crate::ctx::{Ctx, Target};
use crate::diag::Result;
use crate::input::object::{ObjSection, Rela};
use crate::linked::Linked;
use crate::sections::output::Sizes;
use crate::synthetic::property::AARCH64_FEATURE_1_BTI;
use crate::synthetic::{DynRel, GotKind, PltGuard};
use object::elf::*;
use object::LittleEndian as LE;

pub mod erratum;
pub mod plt;
pub mod relax;

/// AArch64 Linux.
pub struct Aarch64;

/// `st_other`'s flag of a function following a variant procedure-call standard.
const STO_AARCH64_VARIANT_PCS: u8 = 0x80;
/// The dynamic tag that says a PLT entry's function has it (DT_LOPROC + 5).
const DT_AARCH64_VARIANT_PCS: u32 = 0x7000_0005;
/// The dynamic tags of a PLT with BTI landing pads (DT_LOPROC + 1) and with PAC-authenticated
/// entries (DT_LOPROC + 3).
const DT_AARCH64_BTI_PLT: u32 = 0x7000_0001;
const DT_AARCH64_PAC_PLT: u32 = 0x7000_0003;

impl crate::arch::Arch for Aarch64 {
    const NAMES: &'static crate::machine::Names = &crate::machine::AARCH64;
    const MACHINE: crate::machine::Machine = crate::machine::Machine::Aarch64;

    const R_ABS64: u32 = R_AARCH64_ABS64;
    const R_RELATIVE: u32 = R_AARCH64_RELATIVE;
    const R_GLOB_DAT: u32 = R_AARCH64_GLOB_DAT;
    const R_JUMP_SLOT: u32 = R_AARCH64_JUMP_SLOT;
    const R_COPY: u32 = R_AARCH64_COPY;
    const R_IRELATIVE: u32 = R_AARCH64_IRELATIVE;
    const R_TPOFF64: u32 = R_AARCH64_TLS_TPREL;
    const R_DTPMOD64: u32 = R_AARCH64_TLS_DTPMOD;
    const R_DTPOFF64: u32 = R_AARCH64_TLS_DTPREL;
    const R_TLSDESC: u32 = R_AARCH64_TLSDESC;
    const R_CALL: u32 = R_AARCH64_CALL26;

    /// `stp x16, x30, [sp, #-16]!; adrp/ldr/add` of `.got.plt[2]`; `br x17`; three nops.
    const PLT_HEADER_SIZE: u64 = 32;
    /// `adrp x16, slot; ldr x17, [x16, :lo12:slot]; add x16, x16, :lo12:slot; br x17` (24 bytes
    /// in a guarded PLT: `plt_entry_size`).
    const PLT_ENTRY_SIZE: u64 = 16;
    /// The dynamic section (unused by glibc), the link map, the resolver.
    const GOTPLT_RESERVED: u64 = 3;
    const PLT_ALIGN: u64 = 16;
    /// 0, as GNU ld and lld write it: the header and the entries differ in size.
    const PLT_ENTSIZE: u64 = 0;
    const GUARDED_PLT_TAGS: [u32; 2] = [DT_AARCH64_BTI_PLT, DT_AARCH64_PAC_PLT];
    /// `-z mark-plt` is x86-64's: AArch64 has no such tags (refused before they are needed).
    const GOT_BASE_IN_GOTPLT: bool = false;
    const STO_FLAGS: u8 = STO_AARCH64_VARIANT_PCS;
    const STO_VARIANT_PCS: u8 = STO_AARCH64_VARIANT_PCS;
    const DT_VARIANT_PCS: u32 = DT_AARCH64_VARIANT_PCS;
    const MARK_PLT_TAGS: [u32; 3] = [0, 0, 0];

    /// Every relocation writes its own 4- or 8-byte field; the erratum 843419 scan reads the
    /// three instructions after an `adrp`.
    const RELOC_REACH: u64 = 16;
    /// `B` and `BL` reach ±128 MiB; a thunk entry is `adrp x16` + `add x16` + `br x16` (mold's),
    /// which reaches ±4 GiB.
    const BRANCH_REACH: u64 = 1 << 27;
    const THUNK_ENTRY_SIZE: u64 = 12;

    fn is_thunked_branch(ty: u32) -> bool {
        matches!(ty, R_AARCH64_CALL26 | R_AARCH64_JUMP26)
    }
    fn write_thunk(at: u64, to: u64, buf: &mut [u8]) -> std::result::Result<(), String> {
        let pages = (page(to as i128) - page(at as i128)) >> 12;
        if !(-(1 << 20)..1 << 20).contains(&pages) {
            return Err("it is more than 4 GiB away, out of an adrp's reach".into());
        }
        let insns = [set_adr_imm(ADRP_X16, pages as i64), set_imm12(ADD_X16_X16, to & 0xfff), BR_X16];
        for (k, insn) in insns.into_iter().enumerate() {
            buf[4 * k..4 * k + 4].copy_from_slice(&insn.to_le_bytes());
        }
        Ok(())
    }
    fn erratum_patch_sites(ctx: &Linked) -> Vec<(crate::ids::SectionRef, u64)> {
        if !ctx.config.fix_cortex_a53_843419 {
            return Vec::new();
        }
        erratum::patch_sites(ctx)
    }
    fn write_patches(ctx: &Linked, area: &crate::sections::thunks::PatchArea, buf: &mut [u8]) {
        erratum::write_patches(ctx, area, buf)
    }

    fn reloc_name(ty: u32) -> String {
        reloc_name(ty)
    }
    fn is_unwind_section(_sh_type: u32) -> bool {
        false
    }
    /// Variant I: the thread pointer, a 16-byte gap (the TCB), padding that makes the block's
    /// start congruent to its address modulo its alignment, then the block (lld's rule, and
    /// glibc's placement of the executable's block).
    fn tp_offset(tls: crate::layout::Tls, addr: u64) -> i64 {
        let align = tls.align.max(1);
        let gap = 16u64;
        (addr.wrapping_sub(tls.start).wrapping_add(gap).wrapping_add(tls.start.wrapping_sub(gap) & (align - 1))) as i64
    }
    fn classify(ctx: &Ctx, _relax: bool, _sec: &ObjSection, rel: &Rela, t: Target) -> Need {
        classify(ctx, rel.r_type(LE, false), t)
    }
    /// GOT loads (`adrp`+`ldr`) are not relaxed to `adrp`+`add`.
    fn relaxes_got_loads(_ctx: &Ctx, _sizes: &Sizes) -> bool {
        false
    }
    /// AArch64's PLT has no IBT form (its BTI form is `plt_guard`'s).
    fn ibt_plt(_ctx: &Ctx, _features: u32) -> bool {
        false
    }
    /// lld's rules: `bti c` landing pads when the output is marked BTI, `autia1716` with
    /// `-z pac-plt`.
    fn plt_guard(ctx: &Ctx, features: u32) -> PltGuard {
        PltGuard { bti: features & AARCH64_FEATURE_1_BTI != 0, pac: ctx.config.z_pac_plt }
    }
    /// 24 bytes in a guarded PLT, as lld lays it out: room for `bti c` and `autia1716` (nops
    /// where an entry has neither).
    fn plt_entry_size(guard: PltGuard) -> u64 {
        if guard.bti || guard.pac {
            24
        } else {
            16
        }
    }
    fn apply_one(r: &mut Reloc<Self>, alloc: bool, dynrels: &mut Vec<DynRel>) -> bool {
        apply_one(r, alloc, dynrels);
        false
    }
    fn write_nonalloc(r: &mut Reloc<Self>, ty: u32, t: Target, a: i128, s: i128) {
        write_nonalloc(r, ty, t, a, s)
    }
    fn finish_section(
        ctx: &Linked,
        f: crate::ids::FileId,
        si: u32,
        buf: &mut [u8],
        lo: u64,
        owned: std::ops::Range<u64>,
    ) {
        if ctx.config.fix_cortex_a53_843419 {
            erratum::fix_843419(ctx, f, si, buf, lo, owned);
        }
    }
    fn tombstone_width(ty: u32) -> usize {
        match ty {
            R_AARCH64_ABS64 | R_AARCH64_TLS_DTPREL => 8,
            R_AARCH64_ABS32 => 4,
            _ => 0,
        }
    }
    /// A relaxed TLS sequence is reported as what its instructions became (as mold reports it):
    /// a descriptor's `adrp` and `ldr` as the local-exec `movz`/`movk` or the initial-exec GOT
    /// load, its `add` and `blr` (now `nop`s) as `R_AARCH64_NONE`; a relaxed initial-exec load
    /// as the local-exec `movz`/`movk`.
    fn emitted_type(ctx: &Linked, r: crate::ids::SectionRef, rel: &Rela, t: Target) -> u32 {
        let ty = rel.r_type(LE, false);
        let base = ctx.section_addr(r.file, r.index).unwrap_or(0);
        if let Some(pair) = relax::relaxed(ctx, r.file, r.index, rel, base) {
            return relax::emitted_type(pair);
        }
        let exe = ctx.kind.is_executable();
        let pre = ctx.is_preemptible(t);
        match ty {
            R_AARCH64_TLSDESC_ADR_PAGE21
            | R_AARCH64_TLSDESC_LD64_LO12
            | R_AARCH64_TLSDESC_ADD_LO12
            | R_AARCH64_TLSDESC_CALL
                if keeps_tlsdesc(ctx, t) =>
            {
                ty
            }
            R_AARCH64_TLSDESC_ADR_PAGE21 if pre => R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21,
            R_AARCH64_TLSDESC_LD64_LO12 if pre => R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC,
            R_AARCH64_TLSDESC_ADR_PAGE21 => R_AARCH64_TLSLE_MOVW_TPREL_G1,
            R_AARCH64_TLSDESC_LD64_LO12 => R_AARCH64_TLSLE_MOVW_TPREL_G0_NC,
            R_AARCH64_TLSDESC_ADD_LO12 | R_AARCH64_TLSDESC_CALL => R_AARCH64_NONE,
            R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21 if exe && !pre => R_AARCH64_TLSLE_MOVW_TPREL_G1,
            R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC if exe && !pre => R_AARCH64_TLSLE_MOVW_TPREL_G0_NC,
            _ => ty,
        }
    }
    fn write_plt(ctx: &Linked, plt_addr: u64, buf: &mut [u8]) -> Result<()> {
        plt::write_plt(ctx, plt_addr, buf)
    }
    fn write_plt_sec(_ctx: &Linked, _addr: u64, _buf: &mut [u8]) -> Result<()> {
        Err("internal error: AArch64 has no .plt.sec".into())
    }
    /// Every lazy slot points at the PLT's header, which finds the import from the slot's
    /// address (`x16`).
    fn plt_lazy_addr(plt: u64, _stub: u64, _sec: bool) -> u64 {
        plt
    }
    fn plt_jump_offset(_ibt: bool) -> u64 {
        12
    }
}

pub fn reloc_name(ty: u32) -> String {
    let name = match ty {
        R_AARCH64_NONE => "R_AARCH64_NONE",
        R_AARCH64_ABS64 => "R_AARCH64_ABS64",
        R_AARCH64_ABS32 => "R_AARCH64_ABS32",
        R_AARCH64_ABS16 => "R_AARCH64_ABS16",
        R_AARCH64_PREL64 => "R_AARCH64_PREL64",
        R_AARCH64_PREL32 => "R_AARCH64_PREL32",
        R_AARCH64_PREL16 => "R_AARCH64_PREL16",
        R_AARCH64_MOVW_UABS_G0 => "R_AARCH64_MOVW_UABS_G0",
        R_AARCH64_MOVW_UABS_G0_NC => "R_AARCH64_MOVW_UABS_G0_NC",
        R_AARCH64_MOVW_UABS_G1 => "R_AARCH64_MOVW_UABS_G1",
        R_AARCH64_MOVW_UABS_G1_NC => "R_AARCH64_MOVW_UABS_G1_NC",
        R_AARCH64_MOVW_UABS_G2 => "R_AARCH64_MOVW_UABS_G2",
        R_AARCH64_MOVW_UABS_G2_NC => "R_AARCH64_MOVW_UABS_G2_NC",
        R_AARCH64_MOVW_UABS_G3 => "R_AARCH64_MOVW_UABS_G3",
        R_AARCH64_MOVW_SABS_G0 => "R_AARCH64_MOVW_SABS_G0",
        R_AARCH64_MOVW_SABS_G1 => "R_AARCH64_MOVW_SABS_G1",
        R_AARCH64_MOVW_SABS_G2 => "R_AARCH64_MOVW_SABS_G2",
        R_AARCH64_LD_PREL_LO19 => "R_AARCH64_LD_PREL_LO19",
        R_AARCH64_ADR_PREL_LO21 => "R_AARCH64_ADR_PREL_LO21",
        R_AARCH64_ADR_PREL_PG_HI21 => "R_AARCH64_ADR_PREL_PG_HI21",
        R_AARCH64_ADR_PREL_PG_HI21_NC => "R_AARCH64_ADR_PREL_PG_HI21_NC",
        R_AARCH64_ADD_ABS_LO12_NC => "R_AARCH64_ADD_ABS_LO12_NC",
        R_AARCH64_LDST8_ABS_LO12_NC => "R_AARCH64_LDST8_ABS_LO12_NC",
        R_AARCH64_TSTBR14 => "R_AARCH64_TSTBR14",
        R_AARCH64_CONDBR19 => "R_AARCH64_CONDBR19",
        R_AARCH64_JUMP26 => "R_AARCH64_JUMP26",
        R_AARCH64_CALL26 => "R_AARCH64_CALL26",
        R_AARCH64_LDST16_ABS_LO12_NC => "R_AARCH64_LDST16_ABS_LO12_NC",
        R_AARCH64_LDST32_ABS_LO12_NC => "R_AARCH64_LDST32_ABS_LO12_NC",
        R_AARCH64_LDST64_ABS_LO12_NC => "R_AARCH64_LDST64_ABS_LO12_NC",
        R_AARCH64_MOVW_PREL_G0 => "R_AARCH64_MOVW_PREL_G0",
        R_AARCH64_MOVW_PREL_G0_NC => "R_AARCH64_MOVW_PREL_G0_NC",
        R_AARCH64_MOVW_PREL_G1 => "R_AARCH64_MOVW_PREL_G1",
        R_AARCH64_MOVW_PREL_G1_NC => "R_AARCH64_MOVW_PREL_G1_NC",
        R_AARCH64_MOVW_PREL_G2 => "R_AARCH64_MOVW_PREL_G2",
        R_AARCH64_MOVW_PREL_G2_NC => "R_AARCH64_MOVW_PREL_G2_NC",
        R_AARCH64_MOVW_PREL_G3 => "R_AARCH64_MOVW_PREL_G3",
        R_AARCH64_LDST128_ABS_LO12_NC => "R_AARCH64_LDST128_ABS_LO12_NC",
        R_AARCH64_GOTREL64 => "R_AARCH64_GOTREL64",
        R_AARCH64_GOTREL32 => "R_AARCH64_GOTREL32",
        R_AARCH64_GOT_LD_PREL19 => "R_AARCH64_GOT_LD_PREL19",
        R_AARCH64_LD64_GOTOFF_LO15 => "R_AARCH64_LD64_GOTOFF_LO15",
        R_AARCH64_ADR_GOT_PAGE => "R_AARCH64_ADR_GOT_PAGE",
        R_AARCH64_LD64_GOT_LO12_NC => "R_AARCH64_LD64_GOT_LO12_NC",
        R_AARCH64_LD64_GOTPAGE_LO15 => "R_AARCH64_LD64_GOTPAGE_LO15",
        R_AARCH64_TLSGD_ADR_PREL21 => "R_AARCH64_TLSGD_ADR_PREL21",
        R_AARCH64_TLSGD_ADR_PAGE21 => "R_AARCH64_TLSGD_ADR_PAGE21",
        R_AARCH64_TLSGD_ADD_LO12_NC => "R_AARCH64_TLSGD_ADD_LO12_NC",
        R_AARCH64_TLSLD_ADR_PAGE21 => "R_AARCH64_TLSLD_ADR_PAGE21",
        R_AARCH64_TLSLD_ADD_LO12_NC => "R_AARCH64_TLSLD_ADD_LO12_NC",
        R_AARCH64_TLSIE_MOVW_GOTTPREL_G1 => "R_AARCH64_TLSIE_MOVW_GOTTPREL_G1",
        R_AARCH64_TLSIE_MOVW_GOTTPREL_G0_NC => "R_AARCH64_TLSIE_MOVW_GOTTPREL_G0_NC",
        R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21 => "R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21",
        R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC => "R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC",
        R_AARCH64_TLSIE_LD_GOTTPREL_PREL19 => "R_AARCH64_TLSIE_LD_GOTTPREL_PREL19",
        R_AARCH64_TLSLE_MOVW_TPREL_G2 => "R_AARCH64_TLSLE_MOVW_TPREL_G2",
        R_AARCH64_TLSLE_MOVW_TPREL_G1 => "R_AARCH64_TLSLE_MOVW_TPREL_G1",
        R_AARCH64_TLSLE_MOVW_TPREL_G1_NC => "R_AARCH64_TLSLE_MOVW_TPREL_G1_NC",
        R_AARCH64_TLSLE_MOVW_TPREL_G0 => "R_AARCH64_TLSLE_MOVW_TPREL_G0",
        R_AARCH64_TLSLE_MOVW_TPREL_G0_NC => "R_AARCH64_TLSLE_MOVW_TPREL_G0_NC",
        R_AARCH64_TLSLE_ADD_TPREL_HI12 => "R_AARCH64_TLSLE_ADD_TPREL_HI12",
        R_AARCH64_TLSLE_ADD_TPREL_LO12 => "R_AARCH64_TLSLE_ADD_TPREL_LO12",
        R_AARCH64_TLSLE_ADD_TPREL_LO12_NC => "R_AARCH64_TLSLE_ADD_TPREL_LO12_NC",
        R_AARCH64_TLSLE_LDST8_TPREL_LO12 => "R_AARCH64_TLSLE_LDST8_TPREL_LO12",
        R_AARCH64_TLSLE_LDST8_TPREL_LO12_NC => "R_AARCH64_TLSLE_LDST8_TPREL_LO12_NC",
        R_AARCH64_TLSLE_LDST16_TPREL_LO12 => "R_AARCH64_TLSLE_LDST16_TPREL_LO12",
        R_AARCH64_TLSLE_LDST16_TPREL_LO12_NC => "R_AARCH64_TLSLE_LDST16_TPREL_LO12_NC",
        R_AARCH64_TLSLE_LDST32_TPREL_LO12 => "R_AARCH64_TLSLE_LDST32_TPREL_LO12",
        R_AARCH64_TLSLE_LDST32_TPREL_LO12_NC => "R_AARCH64_TLSLE_LDST32_TPREL_LO12_NC",
        R_AARCH64_TLSLE_LDST64_TPREL_LO12 => "R_AARCH64_TLSLE_LDST64_TPREL_LO12",
        R_AARCH64_TLSLE_LDST64_TPREL_LO12_NC => "R_AARCH64_TLSLE_LDST64_TPREL_LO12_NC",
        R_AARCH64_TLSDESC_ADR_PAGE21 => "R_AARCH64_TLSDESC_ADR_PAGE21",
        R_AARCH64_TLSDESC_LD64_LO12 => "R_AARCH64_TLSDESC_LD64_LO12",
        R_AARCH64_TLSDESC_ADD_LO12 => "R_AARCH64_TLSDESC_ADD_LO12",
        R_AARCH64_TLSDESC_CALL => "R_AARCH64_TLSDESC_CALL",
        R_AARCH64_COPY => "R_AARCH64_COPY",
        R_AARCH64_GLOB_DAT => "R_AARCH64_GLOB_DAT",
        R_AARCH64_JUMP_SLOT => "R_AARCH64_JUMP_SLOT",
        R_AARCH64_RELATIVE => "R_AARCH64_RELATIVE",
        R_AARCH64_TLS_DTPMOD => "R_AARCH64_TLS_DTPMOD64",
        R_AARCH64_TLS_DTPREL => "R_AARCH64_TLS_DTPREL64",
        R_AARCH64_TLS_TPREL => "R_AARCH64_TLS_TPREL64",
        R_AARCH64_TLSDESC => "R_AARCH64_TLSDESC",
        R_AARCH64_IRELATIVE => "R_AARCH64_IRELATIVE",
        R_GOTPCREL32 => "R_AARCH64_GOTPCREL32",
        _ => return format!("relocation type {ty}"),
    };
    name.to_string()
}

/// `R_AARCH64_GOTPCREL32` (clang's 32-bit PC-relative reference to a GOT entry, in data).
const R_GOTPCREL32: u32 = 315;

/// What an AArch64 relocation needs from the linker (`arch::scan` decides what it gets).
fn classify(ctx: &Ctx, ty: u32, t: Target) -> Need {
    let exe = ctx.kind.is_executable();
    match ty {
        R_AARCH64_ABS64 => Need::Abs64,
        R_AARCH64_CALL26 | R_AARCH64_JUMP26 => Need::Call,
        R_AARCH64_PREL64
        | R_AARCH64_PREL32
        | R_AARCH64_PREL16
        | R_AARCH64_ADR_PREL_PG_HI21
        | R_AARCH64_ADR_PREL_PG_HI21_NC
        | R_AARCH64_ADR_PREL_LO21
        | R_AARCH64_LD_PREL_LO19
        | R_AARCH64_CONDBR19
        | R_AARCH64_TSTBR14
        | R_AARCH64_MOVW_PREL_G0
        | R_AARCH64_MOVW_PREL_G0_NC
        | R_AARCH64_MOVW_PREL_G1
        | R_AARCH64_MOVW_PREL_G1_NC
        | R_AARCH64_MOVW_PREL_G2
        | R_AARCH64_MOVW_PREL_G2_NC
        | R_AARCH64_MOVW_PREL_G3
        // The low 12 bits of an address complete an `adrp`, whose page is PC-relative: a
        // position-independent output holds them (lld's `usesOnlyLowPageBits`).
        | R_AARCH64_ADD_ABS_LO12_NC
        | R_AARCH64_LDST8_ABS_LO12_NC
        | R_AARCH64_LDST16_ABS_LO12_NC
        | R_AARCH64_LDST32_ABS_LO12_NC
        | R_AARCH64_LDST64_ABS_LO12_NC
        | R_AARCH64_LDST128_ABS_LO12_NC => Need::Direct { absolute: false },
        R_AARCH64_ABS32
        | R_AARCH64_ABS16
        | R_AARCH64_MOVW_UABS_G0
        | R_AARCH64_MOVW_UABS_G0_NC
        | R_AARCH64_MOVW_UABS_G1
        | R_AARCH64_MOVW_UABS_G1_NC
        | R_AARCH64_MOVW_UABS_G2
        | R_AARCH64_MOVW_UABS_G2_NC
        | R_AARCH64_MOVW_UABS_G3 => Need::Direct { absolute: true },
        R_AARCH64_ADR_GOT_PAGE | R_AARCH64_LD64_GOT_LO12_NC | R_AARCH64_GOT_LD_PREL19 | R_GOTPCREL32 => {
            Need::Got(GotKind::Addr, false)
        }
        // Relative to the page of `_GLOBAL_OFFSET_TABLE_` (gcc -fpic).
        R_AARCH64_LD64_GOTPAGE_LO15 => Need::Got(GotKind::Addr, true),
        // Initial-exec: an executable's own variable is relaxed to local-exec.
        R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21 | R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC
            if exe && !ctx.is_preemptible(t) =>
        {
            Need::TlsLe
        }
        R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21 | R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC => Need::Got(GotKind::TpOff, false),
        R_AARCH64_TLSGD_ADR_PAGE21 | R_AARCH64_TLSGD_ADD_LO12_NC => Need::Got(GotKind::TlsGd, false),
        R_AARCH64_TLSDESC_ADR_PAGE21 | R_AARCH64_TLSDESC_LD64_LO12 | R_AARCH64_TLSDESC_ADD_LO12 => Need::TlsDesc,
        R_AARCH64_TLSLE_MOVW_TPREL_G2
        | R_AARCH64_TLSLE_MOVW_TPREL_G1
        | R_AARCH64_TLSLE_MOVW_TPREL_G1_NC
        | R_AARCH64_TLSLE_MOVW_TPREL_G0
        | R_AARCH64_TLSLE_MOVW_TPREL_G0_NC
        | R_AARCH64_TLSLE_ADD_TPREL_HI12
        | R_AARCH64_TLSLE_ADD_TPREL_LO12
        | R_AARCH64_TLSLE_ADD_TPREL_LO12_NC
        | R_AARCH64_TLSLE_LDST8_TPREL_LO12
        | R_AARCH64_TLSLE_LDST8_TPREL_LO12_NC
        | R_AARCH64_TLSLE_LDST16_TPREL_LO12
        | R_AARCH64_TLSLE_LDST16_TPREL_LO12_NC
        | R_AARCH64_TLSLE_LDST32_TPREL_LO12
        | R_AARCH64_TLSLE_LDST32_TPREL_LO12_NC
        | R_AARCH64_TLSLE_LDST64_TPREL_LO12
        | R_AARCH64_TLSLE_LDST64_TPREL_LO12_NC => Need::TlsLe,
        _ => Need::Nothing,
    }
}

/// The 4 KiB page of an address (`Page()` of the psABI).
fn page(x: i128) -> i128 {
    x & !0xfff
}

/// A thunk entry's instructions, before their immediates: `adrp x16, 0`, `add x16, x16, #0`,
/// `br x16`.
const ADRP_X16: u32 = 0x9000_0010;
const ADD_X16_X16: u32 = 0x9100_0210;
const BR_X16: u32 = 0xd61f_0200;

/// Writes the immediate of an `adr`/`adrp` (21 bits: immlo at bit 29, immhi at bit 5).
fn set_adr_imm(insn: u32, imm: i64) -> u32 {
    let imm = imm as u32;
    (insn & 0x9f00_001f) | ((imm & 3) << 29) | (((imm >> 2) & 0x7ffff) << 5)
}

/// Writes the 12-bit immediate of an `add` or a scaled load/store (bits 10-21).
fn set_imm12(insn: u32, imm: u64) -> u32 {
    (insn & !(0xfff << 10)) | (((imm as u32) & 0xfff) << 10)
}

/// Writes the 16-bit immediate of a `movz`/`movk`/`movn` (bits 5-20).
fn set_imm16(insn: u32, imm: u64) -> u32 {
    (insn & !(0xffff << 5)) | (((imm as u32) & 0xffff) << 5)
}

/// A `movz`/`movn` whose group of a signed value is checked (`MOVW_*_G{0,1,2}` without `_NC`):
/// a negative value is written as `movn` of its complement, as lld writes it.
fn set_signed_mov(insn: u32, value: i64, shift: u32) -> u32 {
    const MOVN: u32 = 0;
    const MOVZ: u32 = 2 << 29;
    let opc = insn & !(3 << 29);
    if value < 0 {
        set_imm16(opc | MOVN, (!value as u64) >> shift)
    } else {
        set_imm16(opc | MOVZ, (value as u64) >> shift)
    }
}

/// The scaled offset of an `ldst` of `1 << scale` bytes.
fn lo12_scaled(v: i128, scale: u32) -> u64 {
    ((v as u64) & 0xfff) >> scale
}

/// Applies one AArch64 relocation.
fn apply_one(r: &mut Reloc<Aarch64>, alloc: bool, dynrels: &mut Vec<DynRel>) {
    let ctx = r.ctx;
    let ty = r.rel.r_type(LE, false);
    let (t, a) = (r.target(), r.rel.r_addend.get(LE) as i128);
    if !alloc {
        r.apply_nonalloc(ty, t, a);
        return;
    }
    let Some(s) = r.merged_or(t, ty, a, |t| ctx.value(t)) else { return };
    let p = r.place as i128;
    let got = |kind| ctx.got_entry_addr(t, kind).unwrap_or(0) as i128;
    let exe = ctx.kind.is_executable();
    // An undefined weak symbol that binds here: a branch to it goes to the next instruction
    // (lld's rule, so that a call to a missing weak function is skipped), other references get 0;
    // an undefined weak thread-local variable's offset is 0 (static glibc's `_nl_current_LC_*`).
    let undef_weak = ctx.is_undefined(t) && !ctx.is_preemptible(t);
    // A GOT entry holds a symbol's own address: a reference through it cannot add an offset
    // (the assembler refers to a local symbol as its section plus an addend).
    let got_ref = matches!(
        ty,
        R_AARCH64_ADR_GOT_PAGE | R_AARCH64_LD64_GOT_LO12_NC | R_AARCH64_LD64_GOTPAGE_LO15 | R_AARCH64_GOT_LD_PREL19
    );
    if got_ref && a != 0 {
        r.error(format!(
            "relocation {} against {} has addend {a}: a GOT entry holds the symbol's own address, so a reference \
             through the GOT cannot add an offset (is it a local symbol the assembler wrote as its section plus \
             an offset? make it global)",
            reloc_name(ty),
            ctx.name_of(t)
        ));
        return;
    }
    // A pair of instructions relaxed to reach the symbol directly (`relax`).
    let base = r.place.wrapping_sub(r.rel.r_offset.get(LE));
    if let Some(pair) = relax::relaxed(ctx, r.f, r.si, r.rel, base) {
        let place = r.place;
        r.rewrite(|_| relax::instruction(pair, place));
        return;
    }
    let tpoff = || if undef_weak { a } else { crate::arch::tpoff::<Aarch64>(ctx, t) as i128 + a };
    match ty {
        R_AARCH64_NONE => {}
        R_AARCH64_ABS64 => {
            let sec = &ctx.objects[r.f].sections[r.si as usize];
            let how = abs64(ctx, t, sec.flags & SHF_WRITE as u64 != 0);
            if how == Abs64::Symbolic {
                let Target::Global(id) = t else { unreachable!("only globals are preemptible") };
                dynrels.push(DynRel { offset: r.place, ty: R_AARCH64_ABS64, sym: Some(id), addend: a as i64 });
            } else {
                r.write(8, (s + a) as u64);
                if how == Abs64::Relative && !ctx.packs_relative(sec, r.off.wrapping_add(r.lo)) {
                    dynrels.push(DynRel { offset: r.place, ty: R_AARCH64_RELATIVE, sym: None, addend: (s + a) as i64 });
                }
            }
        }
        R_AARCH64_ABS32 => r.write_either(ty, 4, s + a),
        R_AARCH64_ABS16 => r.write_either(ty, 2, s + a),
        R_AARCH64_PREL64 => r.write(8, (s + a - p) as u64),
        R_AARCH64_PREL32 => r.write_either(ty, 4, s + a - p),
        R_AARCH64_PREL16 => r.write_either(ty, 2, s + a - p),
        R_AARCH64_CALL26 | R_AARCH64_JUMP26 => {
            let mut v = if undef_weak { 4 + a } else { s + a - p };
            // Out of reach: through the nearest range-extension thunk for the destination.
            if !undef_weak && !crate::arch::thunks::reaches::<Aarch64>(v) && !ctx.layout.thunks.is_empty() {
                let out = ctx.objects[r.f].sections[r.si as usize].out;
                let key = crate::sections::thunks::Key { target: t, addend: a as i64 };
                if let Some(entry) = out.and_then(|out| {
                    let at = r.place.wrapping_sub(ctx.layout.addr(out));
                    crate::arch::thunks::entry_for::<Aarch64>(ctx, out, at, key)
                }) {
                    v = entry as i128 - p;
                }
            }
            r.branch(ty, v, 26, 0);
        }
        R_AARCH64_CONDBR19 => {
            let v = if undef_weak { 4 + a } else { s + a - p };
            r.branch(ty, v, 19, 5);
        }
        R_AARCH64_TSTBR14 => {
            let v = if undef_weak { 4 + a } else { s + a - p };
            r.branch(ty, v, 14, 5);
        }
        R_AARCH64_LD_PREL_LO19 => r.branch(ty, s + a - p, 19, 5),
        R_AARCH64_ADR_PREL_LO21 => r.adr(ty, s + a - p, true),
        R_AARCH64_ADR_PREL_PG_HI21 => r.adr(ty, page(s + a) - page(p), false),
        R_AARCH64_ADR_PREL_PG_HI21_NC => r.adr_nc(page(s + a) - page(p)),
        R_AARCH64_ADD_ABS_LO12_NC => r.imm12(ty, s + a, 0),
        R_AARCH64_LDST8_ABS_LO12_NC => r.imm12(ty, s + a, 0),
        R_AARCH64_LDST16_ABS_LO12_NC => r.imm12(ty, s + a, 1),
        R_AARCH64_LDST32_ABS_LO12_NC => r.imm12(ty, s + a, 2),
        R_AARCH64_LDST64_ABS_LO12_NC => r.imm12(ty, s + a, 3),
        R_AARCH64_LDST128_ABS_LO12_NC => r.imm12(ty, s + a, 4),
        R_AARCH64_MOVW_UABS_G0 => r.movw(ty, s + a, 0, Some(false)),
        R_AARCH64_MOVW_UABS_G1 => r.movw(ty, s + a, 16, Some(false)),
        R_AARCH64_MOVW_UABS_G2 => r.movw(ty, s + a, 32, Some(false)),
        R_AARCH64_MOVW_UABS_G0_NC => r.movw(ty, s + a, 0, None),
        R_AARCH64_MOVW_UABS_G1_NC => r.movw(ty, s + a, 16, None),
        R_AARCH64_MOVW_UABS_G2_NC => r.movw(ty, s + a, 32, None),
        R_AARCH64_MOVW_UABS_G3 => r.movw(ty, s + a, 48, None),
        R_AARCH64_MOVW_PREL_G0 => r.movw(ty, s + a - p, 0, Some(true)),
        R_AARCH64_MOVW_PREL_G1 => r.movw(ty, s + a - p, 16, Some(true)),
        R_AARCH64_MOVW_PREL_G2 => r.movw(ty, s + a - p, 32, Some(true)),
        R_AARCH64_MOVW_PREL_G0_NC => r.movw(ty, s + a - p, 0, None),
        R_AARCH64_MOVW_PREL_G1_NC => r.movw(ty, s + a - p, 16, None),
        R_AARCH64_MOVW_PREL_G2_NC => r.movw(ty, s + a - p, 32, None),
        R_AARCH64_MOVW_PREL_G3 => r.movw(ty, s + a - p, 48, None),
        R_AARCH64_ADR_GOT_PAGE => r.adr(ty, page(got(GotKind::Addr) + a) - page(p), false),
        R_AARCH64_LD64_GOT_LO12_NC => r.imm12(ty, got(GotKind::Addr) + a, 3),
        R_AARCH64_GOT_LD_PREL19 => r.branch(ty, got(GotKind::Addr) + a - p, 19, 5),
        R_GOTPCREL32 => r.write_checked(ty, 4, got(GotKind::Addr) + a - p, true),
        // `ldr xN, [xM, #:gotpage_lo15:x]` after `adrp xM, _GLOBAL_OFFSET_TABLE_`: the entry's
        // offset from the GOT's page, 8-aligned, below 32 KiB.
        R_AARCH64_LD64_GOTPAGE_LO15 => {
            let v = got(GotKind::Addr) + a - page(ctx.got_base() as i128);
            if r.in_range(ty, v, 0, 0x7ff8) {
                r.rewrite(|insn| set_imm12(insn, (v >> 3) as u64));
            }
        }
        // Initial-exec relaxed to local-exec: `adrp xN, :gottprel:x` → `movz xN, #hi16, lsl #16`,
        // `ldr xN, [xN, :gottprel_lo12:x]` → `movk xN, #lo16` (lld's rewrite).
        R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21 if exe && !ctx.is_preemptible(t) => {
            if let Some(v) = r.tls_offset32(ty, tpoff()) {
                r.rewrite(|insn| 0xd2a0_0000 | (insn & 0x1f) | (((v >> 16) & 0xffff) << 5));
            }
        }
        R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC if exe && !ctx.is_preemptible(t) => {
            if let Some(v) = r.tls_offset32(ty, tpoff()) {
                r.rewrite(|insn| 0xf280_0000 | (insn & 0x1f) | ((v & 0xffff) << 5));
            }
        }
        R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21 => r.adr(ty, page(got(GotKind::TpOff) + a) - page(p), false),
        R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC => r.imm12(ty, got(GotKind::TpOff) + a, 3),
        R_AARCH64_TLSGD_ADR_PAGE21 => r.adr(ty, page(got(GotKind::TlsGd) + a) - page(p), false),
        R_AARCH64_TLSGD_ADD_LO12_NC => r.imm12(ty, got(GotKind::TlsGd) + a, 0),
        // A kept descriptor sequence: `adrp x0, desc; ldr x1, [x0, :lo12:desc]; add x0, x0,
        // :lo12:desc; blr x1`.
        R_AARCH64_TLSDESC_ADR_PAGE21 if keeps_tlsdesc(ctx, t) => {
            r.adr(ty, page(got(GotKind::TlsDesc) + a) - page(p), false)
        }
        R_AARCH64_TLSDESC_LD64_LO12 if keeps_tlsdesc(ctx, t) => r.imm12(ty, got(GotKind::TlsDesc) + a, 3),
        R_AARCH64_TLSDESC_ADD_LO12 if keeps_tlsdesc(ctx, t) => r.imm12(ty, got(GotKind::TlsDesc) + a, 0),
        R_AARCH64_TLSDESC_CALL if keeps_tlsdesc(ctx, t) => {}
        // Descriptor → initial-exec: `adrp x0, :gottprel:x; ldr x0, [x0, :gottprel_lo12:x]; nop;
        // nop`.
        R_AARCH64_TLSDESC_ADR_PAGE21 if ctx.is_preemptible(t) => {
            let v = page(got(GotKind::TpOff) + a) - page(p);
            r.rewrite(|_| 0x9000_0000);
            r.adr(ty, v, false);
        }
        R_AARCH64_TLSDESC_LD64_LO12 if ctx.is_preemptible(t) => {
            r.rewrite(|_| 0xf940_0000);
            r.imm12(ty, got(GotKind::TpOff) + a, 3);
        }
        // Descriptor → local-exec: `movz x0, #hi16, lsl #16; movk x0, #lo16; nop; nop`.
        R_AARCH64_TLSDESC_ADR_PAGE21 => {
            if let Some(v) = r.tls_offset32(ty, tpoff()) {
                r.rewrite(|_| 0xd2a0_0000 | (((v >> 16) & 0xffff) << 5));
            }
        }
        R_AARCH64_TLSDESC_LD64_LO12 => {
            if let Some(v) = r.tls_offset32(ty, tpoff()) {
                r.rewrite(|_| 0xf280_0000 | ((v & 0xffff) << 5));
            }
        }
        R_AARCH64_TLSDESC_ADD_LO12 | R_AARCH64_TLSDESC_CALL => r.rewrite(|_| NOP),
        R_AARCH64_TLSLE_MOVW_TPREL_G2 => r.movw(ty, tpoff(), 32, Some(true)),
        R_AARCH64_TLSLE_MOVW_TPREL_G1 => r.movw(ty, tpoff(), 16, Some(true)),
        R_AARCH64_TLSLE_MOVW_TPREL_G1_NC => r.movw(ty, tpoff(), 16, None),
        R_AARCH64_TLSLE_MOVW_TPREL_G0 => r.movw(ty, tpoff(), 0, Some(true)),
        R_AARCH64_TLSLE_MOVW_TPREL_G0_NC => r.movw(ty, tpoff(), 0, None),
        R_AARCH64_TLSLE_ADD_TPREL_HI12 => {
            let v = tpoff();
            if r.in_range(ty, v, 0, (1 << 24) - 1) {
                r.rewrite(|insn| set_imm12(insn, (v >> 12) as u64));
            }
        }
        R_AARCH64_TLSLE_ADD_TPREL_LO12 => {
            let v = tpoff();
            if r.in_range(ty, v, 0, (1 << 12) - 1) {
                r.imm12(ty, v, 0);
            }
        }
        R_AARCH64_TLSLE_ADD_TPREL_LO12_NC => r.imm12(ty, tpoff(), 0),
        R_AARCH64_TLSLE_LDST8_TPREL_LO12 | R_AARCH64_TLSLE_LDST8_TPREL_LO12_NC => r.imm12(ty, tpoff(), 0),
        R_AARCH64_TLSLE_LDST16_TPREL_LO12 | R_AARCH64_TLSLE_LDST16_TPREL_LO12_NC => r.imm12(ty, tpoff(), 1),
        R_AARCH64_TLSLE_LDST32_TPREL_LO12 | R_AARCH64_TLSLE_LDST32_TPREL_LO12_NC => r.imm12(ty, tpoff(), 2),
        R_AARCH64_TLSLE_LDST64_TPREL_LO12 | R_AARCH64_TLSLE_LDST64_TPREL_LO12_NC => r.imm12(ty, tpoff(), 3),
        _ => r.error(format!("unsupported relocation {} against '{}'", reloc_name(ty), ctx.name_of(t))),
    }
}

/// `nop`.
pub const NOP: u32 = 0xd503_201f;

/// A relocation in a non-allocated section (debug information), given its symbol's value `s`.
fn write_nonalloc(r: &mut Reloc<Aarch64>, ty: u32, _t: Target, a: i128, s: i128) {
    match ty {
        R_AARCH64_NONE => {}
        R_AARCH64_ABS64 => r.write(8, (s + a) as u64),
        R_AARCH64_ABS32 => r.write_either(ty, 4, s + a),
        R_AARCH64_ABS16 => r.write_either(ty, 2, s + a),
        R_AARCH64_PREL64 => r.write(8, (s + a - r.place as i128) as u64),
        R_AARCH64_PREL32 => r.write_either(ty, 4, s + a - r.place as i128),
        R_AARCH64_TLS_DTPREL => r.write(8, (s - r.ctx.layout.tls.start as i128 + a) as u64),
        _ => r.error(format!("unsupported relocation {} in a non-allocated section", reloc_name(ty))),
    }
}

/// The instruction-field writers, each with its range check.
impl Reloc<'_, '_, Aarch64> {
    fn insn(&self) -> Option<u32> {
        let off = self.off as usize;
        let b = self.buf.get(off..off.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Rewrites the instruction at the field with `f` of it.
    fn rewrite(&mut self, f: impl FnOnce(u32) -> u32) {
        match self.insn() {
            Some(insn) => self.write(4, f(insn) as u64),
            None => self.write(4, 0), // Reports the field past the section's end.
        }
    }

    /// Whether `v` is within `[lo, hi]`; reports the relocation out of range if not.
    fn in_range(&self, ty: u32, v: i128, lo: i128, hi: i128) -> bool {
        if v < lo || v > hi {
            self.out_of_range(ty, v, lo, hi);
            return false;
        }
        true
    }

    /// A data field that holds `v` as a signed or an unsigned number (lld's `checkIntUInt`).
    fn write_either(&mut self, ty: u32, width: usize, v: i128) {
        let bits = width as u32 * 8;
        let v = v as i64 as i128;
        if self.in_range(ty, v, -(1 << (bits - 1)), (1 << bits) - 1) {
            self.write(width, v as u64);
        }
    }

    /// A PC-relative branch or literal load: `v` (a multiple of 4) shifted right by 2 into `bits`
    /// bits at bit `at`.
    fn branch(&mut self, ty: u32, v: i128, bits: u32, at: u32) {
        let v = v as i64 as i128;
        let span = 1i128 << (bits + 1);
        if !self.in_range(ty, v, -span, span - 4) {
            return;
        }
        if v & 3 != 0 {
            let t = self.target();
            self.error(format!(
                "relocation {} against {}: {v} is not a multiple of 4",
                reloc_name(ty),
                self.ctx.name_of(t)
            ));
            return;
        }
        let mask = ((1u32 << bits) - 1) << at;
        self.rewrite(|insn| (insn & !mask) | ((((v >> 2) as u32) << at) & mask));
    }

    /// `adr`/`adrp`: `v` (a byte offset for `adr`, a page offset for `adrp`) in 21 bits.
    fn adr(&mut self, ty: u32, v: i128, bytes: bool) {
        let v = v as i64 as i128;
        let (imm, scale) = if bytes { (v, 0) } else { (v >> 12, 12) };
        if self.in_range(ty, v, -(1 << (20 + scale)), (1 << (20 + scale)) - 1) {
            self.rewrite(|insn| set_adr_imm(insn, imm as i64));
        }
    }

    /// `adrp` without a range check (`_NC`).
    fn adr_nc(&mut self, v: i128) {
        self.rewrite(|insn| set_adr_imm(insn, (v >> 12) as i64));
    }

    /// The low 12 bits of `v`, scaled by the access size `1 << scale`, into an `add` or `ldst`
    /// (whose address must then be aligned to the access size, as lld checks).
    fn imm12(&mut self, ty: u32, v: i128, scale: u32) {
        if v & ((1 << scale) - 1) != 0 {
            let t = self.target();
            self.error(format!(
                "improper alignment for relocation {} against {}: {:#x} is not aligned to {} bytes",
                reloc_name(ty),
                self.ctx.name_of(t),
                v as u64,
                1 << scale
            ));
            return;
        }
        self.rewrite(|insn| set_imm12(insn, lo12_scaled(v, scale)));
    }

    /// A `movz`/`movk`/`movn` of bits `shift..shift + 16` of `v`: checked (`Some(signed)`) that
    /// `v` fits the group's bits, a signed check also choosing `movz` or `movn`; unchecked (`None`,
    /// `_NC` and the top group).
    fn movw(&mut self, ty: u32, v: i128, shift: u32, checked: Option<bool>) {
        let v = v as i64 as i128;
        match checked {
            None => self.rewrite(|insn| set_imm16(insn, (v as u64) >> shift)),
            Some(false) => {
                if self.in_range(ty, v, 0, (1i128 << (shift + 16)) - 1) {
                    self.rewrite(|insn| set_imm16(insn, (v as u64) >> shift));
                }
            }
            Some(true) => {
                let span = 1i128 << (shift + 16);
                if self.in_range(ty, v, -span, span - 1) {
                    self.rewrite(|insn| set_signed_mov(insn, v as i64, shift));
                }
            }
        }
    }

    /// A thread-pointer offset that a relaxed sequence's `movz`/`movk` pair holds (32 bits).
    fn tls_offset32(&self, ty: u32, v: i128) -> Option<u32> {
        self.in_range(ty, v, 0, u32::MAX as i128).then_some(v as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adrp_immediate() {
        // adrp x0, #0x1000 (one page): immlo = 1, immhi = 0.
        assert_eq!(set_adr_imm(0x9000_0000, 1), 0xb000_0000);
        // -1 page: every immediate bit set.
        assert_eq!(set_adr_imm(0x9000_0000, -1), 0xf0ff_ffe0);
    }

    #[test]
    fn immediates() {
        // add x0, x0, #0: the low 12 bits go to bits 10-21.
        assert_eq!(set_imm12(0x9100_0000, 0x123), 0x9104_8c00);
        // ldr x0, [x0, #8]: 64-bit accesses scale by 8.
        assert_eq!(lo12_scaled(0x10008, 3), 1);
        // movz x0, #0x1234
        assert_eq!(set_imm16(0xd280_0000, 0x1234), 0xd282_4680);
        // A negative group becomes movn of the complement.
        assert_eq!(set_signed_mov(0xd280_0000, -1, 0), 0x9280_0000);
        assert_eq!(set_signed_mov(0x9280_0000, 5, 0), 0xd280_00a0);
    }

    #[test]
    fn variant_one_offsets() {
        let tls = crate::layout::Tls { start: 0x11000, end: 0x11010, align: 8 };
        assert_eq!(<Aarch64 as crate::arch::Arch>::tp_offset(tls, 0x11000), 16);
        let tls = crate::layout::Tls { start: 0x11000, end: 0x11040, align: 64 };
        assert_eq!(<Aarch64 as crate::arch::Arch>::tp_offset(tls, 0x11008), 72);
    }

    #[test]
    fn names() {
        assert_eq!(reloc_name(R_AARCH64_CALL26), "R_AARCH64_CALL26");
        assert_eq!(reloc_name(9999), "relocation type 9999");
    }
}
