//! x86-64 relocations. `scan_relocations` takes every relocation of the live sections and gives
//! what they need from the linker (GOT entries, IFUNC PLT stubs, copies, RELATIVE relocations) as
//! the `Tables` it returns; `apply` takes an
//! input section's bytes copied into the output and patches every relocation. An executable's TLS
//! general-dynamic, local-dynamic and descriptor sequences are relaxed to local-exec (an executable
//! knows every thread-local offset of its own, and static glibc has no `__tls_get_addr`), those
//! for a shared library's variable to initial-exec; a shared object keeps them, with GOT entries,
//! and so does a dynamically linked executable its general-dynamic descriptors under `--no-relax`.
use crate::arch::apply::Reloc;
use crate::arch::scan::{abs64, keeps_tlsdesc, Abs64, Need};
use crate::ctx::{Ctx, Target};
use crate::diag::{Context, Result};
use crate::ids::SectionRef;
use crate::input::object::{ObjSection, Rela};
use crate::linked::Linked;
use crate::sections::output::Sizes;
use crate::synthetic::{DynRel, GotKind};
use object::elf::*;
use object::LittleEndian as LE;

pub mod plt;

/// x86-64 (AMD64) Linux: the psABI's relocations, TLS variant II, the lazy-binding PLT with its
/// IBT form (`.plt.sec`).
pub struct X86_64;

impl crate::arch::Arch for X86_64 {
    const NAMES: &'static crate::machine::Names = &crate::machine::X86_64;
    const MACHINE: crate::machine::Machine = crate::machine::Machine::X86_64;

    const R_ABS64: u32 = R_X86_64_64;
    const R_RELATIVE: u32 = R_X86_64_RELATIVE;
    const R_GLOB_DAT: u32 = R_X86_64_GLOB_DAT;
    const R_JUMP_SLOT: u32 = R_X86_64_JUMP_SLOT;
    const R_COPY: u32 = R_X86_64_COPY;
    const R_IRELATIVE: u32 = R_X86_64_IRELATIVE;
    const R_TPOFF64: u32 = R_X86_64_TPOFF64;
    const R_DTPMOD64: u32 = R_X86_64_DTPMOD64;
    const R_DTPOFF64: u32 = R_X86_64_DTPOFF64;
    const R_TLSDESC: u32 = R_X86_64_TLSDESC;
    const R_CALL: u32 = R_X86_64_PLT32;

    /// The lazy-binding header: `push GOT[1]; jmp *GOT[2]`.
    const PLT_HEADER_SIZE: u64 = 16;
    const PLT_ENTRY_SIZE: u64 = 16;
    /// `_DYNAMIC`, the link map, the resolver.
    const GOTPLT_RESERVED: u64 = 3;
    const PLT_ALIGN: u64 = 16;
    /// The entry size, as GNU ld writes it.
    const PLT_ENTSIZE: u64 = 16;
    /// DT_X86_64_PLT, DT_X86_64_PLTSZ, DT_X86_64_PLTENT.
    const GOT_BASE_IN_GOTPLT: bool = true;
    const STO_FLAGS: u8 = 0;
    const STO_VARIANT_PCS: u8 = 0;
    const DT_VARIANT_PCS: u32 = 0;
    const MARK_PLT_TAGS: [u32; 3] = [0x7000_0000, 0x7000_0001, 0x7000_0003];

    /// TLS relaxation rewrites the instructions around a field (general-dynamic → local-exec: 4
    /// bytes before to 12 after), a GOT load relaxation the opcode before it.
    const RELOC_REACH: u64 = 16;
    /// A call or jump reaches ±2 GiB, as far as any other PC-relative reference: no thunks.
    const BRANCH_REACH: u64 = 0;
    const THUNK_ENTRY_SIZE: u64 = 0;

    fn is_thunked_branch(_: u32) -> bool {
        false
    }
    fn write_thunk(_: u64, _: u64, _: &mut [u8]) -> std::result::Result<(), String> {
        Err("x86-64 has no range-extension thunks".into())
    }
    /// No erratum x86-64 works around needs patches.
    fn erratum_patch_sites(_: &Linked) -> Vec<(SectionRef, u64)> {
        Vec::new()
    }
    fn write_patches(_: &Linked, _: &crate::sections::thunks::PatchArea, _: &mut [u8]) {}

    fn reloc_name(ty: u32) -> String {
        reloc_name(ty)
    }
    fn is_unwind_section(sh_type: u32) -> bool {
        sh_type == SHT_X86_64_UNWIND
    }
    /// Variant II: the block ends at the thread pointer (`Tls::end`, the block's size rounded up
    /// to its alignment), so every offset is negative.
    fn tp_offset(tls: crate::layout::Tls, addr: u64) -> i64 {
        addr.wrapping_sub(tls.end) as i64
    }
    #[inline]
    fn classify(ctx: &Ctx, relax: bool, sec: &ObjSection, rel: &Rela, t: Target) -> Need {
        classify(ctx, relax, sec, rel, t)
    }
    #[inline]
    fn relaxes_got_loads(ctx: &Ctx, sizes: &Sizes) -> bool {
        relaxes_got_loads(ctx) && pc32_reaches_everything(ctx, sizes)
    }
    fn ibt_plt(ctx: &Ctx, features: u32) -> bool {
        ctx.config.ibt_plt || ctx.config.z_ibt || features & crate::synthetic::property::FEATURE_1_IBT != 0
    }
    fn apply_one(r: &mut Reloc<Self>, alloc: bool, dynrels: &mut Vec<DynRel>) -> bool {
        apply_one(r, alloc, dynrels)
    }
    #[inline]
    fn write_nonalloc(r: &mut Reloc<Self>, ty: u32, t: Target, a: i128, s: i128) {
        write_nonalloc(r, ty, t, a, s)
    }
    /// Nothing: x86-64's rewrites are its relocations' own.
    fn finish_section(_: &Linked, _: crate::ids::FileId, _: u32, _: &mut [u8], _: u64, _: std::ops::Range<u64>) {}
    fn tombstone_width(ty: u32) -> usize {
        match ty {
            R_X86_64_64 | R_X86_64_DTPOFF64 => 8,
            R_X86_64_32 | R_X86_64_32S | R_X86_64_DTPOFF32 => 4,
            _ => 0,
        }
    }
    /// A relaxed GOT load is `R_X86_64_PC32`, as GNU ld and mold write it.
    fn emitted_type(ctx: &Linked, r: SectionRef, rel: &Rela, t: Target) -> u32 {
        let r_type = rel.r_type(LE, false);
        let relaxed = matches!(r_type, R_X86_64_GOTPCRELX | R_X86_64_REX_GOTPCRELX) && got_load_relaxed(ctx, r, rel, t);
        if relaxed {
            R_X86_64_PC32
        } else {
            r_type
        }
    }
    fn write_plt(ctx: &Linked, plt_addr: u64, buf: &mut [u8]) -> Result<()> {
        plt::write_plt(ctx, plt_addr, buf)
    }
    fn write_plt_sec(ctx: &Linked, _addr: u64, buf: &mut [u8]) -> Result<()> {
        plt::write_plt_sec(ctx, buf)
    }
    fn plt_lazy_addr(_plt: u64, stub: u64, plt_sec: bool) -> u64 {
        plt::lazy_addr(stub, plt_sec)
    }
    /// After the `endbr64` of an IBT entry.
    fn plt_jump_offset(ibt: bool) -> u64 {
        if ibt {
            4
        } else {
            0
        }
    }
}

pub fn reloc_name(ty: u32) -> String {
    let name = match ty {
        R_X86_64_NONE => "R_X86_64_NONE",
        R_X86_64_64 => "R_X86_64_64",
        R_X86_64_PC32 => "R_X86_64_PC32",
        R_X86_64_GOT32 => "R_X86_64_GOT32",
        R_X86_64_PLT32 => "R_X86_64_PLT32",
        R_X86_64_GOTPCREL => "R_X86_64_GOTPCREL",
        R_X86_64_32 => "R_X86_64_32",
        R_X86_64_32S => "R_X86_64_32S",
        R_X86_64_16 => "R_X86_64_16",
        R_X86_64_PC16 => "R_X86_64_PC16",
        R_X86_64_8 => "R_X86_64_8",
        R_X86_64_PC8 => "R_X86_64_PC8",
        R_X86_64_DTPMOD64 => "R_X86_64_DTPMOD64",
        R_X86_64_DTPOFF64 => "R_X86_64_DTPOFF64",
        R_X86_64_TPOFF64 => "R_X86_64_TPOFF64",
        R_X86_64_TLSGD => "R_X86_64_TLSGD",
        R_X86_64_TLSLD => "R_X86_64_TLSLD",
        R_X86_64_DTPOFF32 => "R_X86_64_DTPOFF32",
        R_X86_64_GOTTPOFF => "R_X86_64_GOTTPOFF",
        R_X86_64_TPOFF32 => "R_X86_64_TPOFF32",
        R_X86_64_PC64 => "R_X86_64_PC64",
        R_X86_64_GOTOFF64 => "R_X86_64_GOTOFF64",
        R_X86_64_GOTPC32 => "R_X86_64_GOTPC32",
        R_X86_64_GOT64 => "R_X86_64_GOT64",
        R_X86_64_GOTPCREL64 => "R_X86_64_GOTPCREL64",
        R_X86_64_GOTPC64 => "R_X86_64_GOTPC64",
        R_X86_64_GOTPLT64 => "R_X86_64_GOTPLT64",
        R_X86_64_PLTOFF64 => "R_X86_64_PLTOFF64",
        R_X86_64_SIZE32 => "R_X86_64_SIZE32",
        R_X86_64_SIZE64 => "R_X86_64_SIZE64",
        R_X86_64_GOTPC32_TLSDESC => "R_X86_64_GOTPC32_TLSDESC",
        R_X86_64_TLSDESC_CALL => "R_X86_64_TLSDESC_CALL",
        R_X86_64_GOTPCRELX => "R_X86_64_GOTPCRELX",
        R_X86_64_REX_GOTPCRELX => "R_X86_64_REX_GOTPCRELX",
        _ => return format!("relocation type {ty}"),
    };
    name.to_string()
}

/// How a GOT-indirect instruction can be rewritten to reach the symbol directly.
#[derive(Clone, Copy, PartialEq, Eq)]
enum GotRelax {
    /// `mov foo@GOTPCREL(%rip), %reg` → `lea foo(%rip), %reg`
    MovToLea,
    /// `call *foo@GOTPCREL(%rip)` → `addr32 call foo`
    Call,
    /// `jmp *foo@GOTPCREL(%rip)` → `nop; jmp foo`
    Jmp,
}

/// Decides whether a GOTPCRELX relocation can skip the GOT (the psABI's linker relaxation). A static
/// PIE depends on it: `_start` calls `__libc_start_main` through such a reference before any
/// RELATIVE relocation has been applied. The instruction bytes are read from the input section, so
/// the scan and the write decide alike.
fn got_relaxation(ctx: &Ctx, relax: bool, data: &[u8], off: u64, ty: u32, t: Target) -> Option<GotRelax> {
    if ty != R_X86_64_GOTPCRELX && ty != R_X86_64_REX_GOTPCRELX {
        return None;
    }
    // IFUNCs keep their GOT entry (it holds the PLT stub); a PIE cannot reach an absolute or
    // undefined symbol PC-relatively.
    if !relax || ctx.is_ifunc(t) || ctx.is_undefined(t) || ctx.is_preemptible(t) || (ctx.is_pic() && ctx.is_absolute(t))
    {
        return None;
    }
    got_relax_kind(data, off as usize, ty)
}

/// What an x86-64 relocation needs from the linker (`arch::scan` decides what it gets).
#[inline]
fn classify(ctx: &Ctx, relax: bool, sec: &ObjSection, rel: &Rela, t: Target) -> Need {
    let ty = rel.r_type(LE, false);
    let exe = ctx.kind.is_executable();
    match ty {
        R_X86_64_GOTPCRELX | R_X86_64_REX_GOTPCRELX
            if got_relaxation(ctx, relax, sec.data, rel.r_offset.get(LE), ty, t).is_some() =>
        {
            Need::Nothing
        }
        R_X86_64_GOTPCREL | R_X86_64_GOTPCRELX | R_X86_64_REX_GOTPCRELX | R_X86_64_GOTPCREL64 => {
            Need::Got(GotKind::Addr, false)
        }
        R_X86_64_GOT32 | R_X86_64_GOT64 | R_X86_64_GOTPLT64 => Need::Got(GotKind::Addr, true),
        R_X86_64_GOTTPOFF => Need::Got(GotKind::TpOff, false),
        R_X86_64_TLSGD if exe => Need::TlsGdRelaxed,
        R_X86_64_TLSLD if exe => Need::TlsLdRelaxed,
        R_X86_64_TLSGD => Need::Got(GotKind::TlsGd, false),
        R_X86_64_TLSLD => Need::Got(GotKind::TlsLd, false),
        R_X86_64_GOTPC32_TLSDESC => Need::TlsDesc,
        R_X86_64_TPOFF32 | R_X86_64_TPOFF64 => Need::TlsLe,
        R_X86_64_GOTPC32 | R_X86_64_GOTPC64 | R_X86_64_GOTOFF64 => Need::GotBase,
        R_X86_64_PLTOFF64 => Need::PltOff,
        R_X86_64_PLT32 => Need::Call,
        R_X86_64_64 => Need::Abs64,
        R_X86_64_PC32 | R_X86_64_PC64 | R_X86_64_16 | R_X86_64_PC16 | R_X86_64_8 | R_X86_64_PC8 => {
            Need::Direct { absolute: false }
        }
        R_X86_64_32 | R_X86_64_32S => Need::Direct { absolute: true },
        _ => Need::Nothing,
    }
}

/// Whether GOT loads are relaxed: unless `--no-relax`, and always in a static PIE. There nothing
/// relocates the GOT before glibc's start-up code has run (`_start` calls `__libc_start_main`
/// through its GOT entry, and passes `main` from another), so an unrelaxed GOT load there jumps to
/// an unrelocated address; GNU ld 2.40's output crashes so, mold relaxes them whatever
/// `--no-relax` says.
fn relaxes_got_loads(ctx: &Ctx) -> bool {
    ctx.config.relax || ctx.kind == crate::ctx::OutputKind::StaticPie
}

/// Whether the GOT load `rel` of input section `r` was relaxed to reach `t` directly:
/// `--emit-relocs` then reports it as the PC-relative reference it became (`R_X86_64_PC32`, as
/// GNU ld and mold do), so that post-link tools read the code as it is.
pub fn got_load_relaxed(ctx: &Linked, r: SectionRef, rel: &Rela, t: Target) -> bool {
    let (off, ty) = (rel.r_offset.get(LE), rel.r_type(LE, false));
    got_relaxation(ctx, ctx.plans.got.relax_got_loads, ctx.objects[r].data, off, ty, t).is_some()
}

/// Whether every address of the output will be within reach of a signed 32-bit PC-relative field
/// of every other, judged before layout from the sizes of the loaded output sections (their
/// members are placed by then) with room for the synthetic sections and page padding. When not
/// (a multi-GiB `.bss`), GOT loads are not relaxed: a relaxed `lea` could not reach its target,
/// where the GOT entry holds the whole address. (lld relaxes per reference after layout; this is
/// the conservative form of the same rule.)
fn pc32_reaches_everything(ctx: &Ctx, sizes: &Sizes) -> bool {
    const SLACK: u64 = 256 << 20;
    let span: u64 =
        ctx.sections.iter_enumerated().filter(|(_, s)| s.is_alloc()).fold(0u64, |acc, (i, s)| {
            acc.saturating_add(sizes[i]).saturating_add(s.align.max(ctx.config.max_page_size))
        });
    span.saturating_add(SLACK) < 1 << 31
}

/// Decodes the instruction before a GOTPCRELX field (`off` is the field's offset in `data`).
fn got_relax_kind(data: &[u8], off: usize, ty: u32) -> Option<GotRelax> {
    let op = *data.get(off.checked_sub(2)?)?;
    let modrm = *data.get(off - 1)?;
    match (ty, op, modrm) {
        (R_X86_64_GOTPCRELX, 0x8b, _) => Some(GotRelax::MovToLea),
        // REX_GOTPCRELX: the REX prefix stands before the opcode.
        (R_X86_64_REX_GOTPCRELX, 0x8b, _) if off >= 3 => Some(GotRelax::MovToLea),
        (R_X86_64_GOTPCRELX, 0xff, 0x15) => Some(GotRelax::Call),
        (R_X86_64_GOTPCRELX, 0xff, 0x25) => Some(GotRelax::Jmp),
        _ => None,
    }
}

/// Rewrites the instruction before a GOTPCRELX field to reach the symbol directly.
fn rewrite_got_access(buf: &mut [u8], off: usize, how: GotRelax) {
    match how {
        GotRelax::MovToLea => buf[off - 2] = 0x8d,
        GotRelax::Call => buf[off - 2..off].copy_from_slice(&[0x67, 0xe8]),
        GotRelax::Jmp => buf[off - 2..off].copy_from_slice(&[0x90, 0xe9]),
    }
}

/// The shape of a general- or local-dynamic sequence: the `lea x@tlsgd(%rip),%rdi` (or
/// `x@tlsld`) whose field is at `off`, and the call to `__tls_get_addr` after it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum TlsCall {
    /// `call __tls_get_addr@PLT` (GD: with its data16/rex64 padding).
    Direct,
    /// `call *__tls_get_addr@GOTPCREL(%rip)` (-fno-plt).
    ThroughGot,
    /// The large code model: `movabs $__tls_get_addr@PLTOFF,%rax; add %reg,%rax; call *%rax`.
    Large,
}

/// Whether the large code model's call sequence starts at `at`: `movabs $imm64,%rax` (48 b8),
/// `add %reg,%rax` (REX.W, optionally REX.R; 01 with ModRM mod=11 rm=rax), `call *%rax` (ff d0).
fn is_large_tls_call(buf: &[u8], at: usize) -> bool {
    match at.checked_add(15).and_then(|end| buf.get(at..end)) {
        Some(b) => {
            b[..2] == [0x48, 0xb8]
                && b[10] & 0xfb == 0x48
                && b[11] == 0x01
                && b[12] & 0xc7 == 0xc0
                && b[13..] == [0xff, 0xd0]
        }
        None => false,
    }
}

/// Recognises a general-dynamic sequence whose field is at `off`: `data16 lea x@tlsgd(%rip),%rdi`
/// then `data16 data16 rex64 call __tls_get_addr@PLT` or `data16 rex64 call
/// *__tls_get_addr@GOTPCREL(%rip)` (16 bytes from `off - 4`), or, in the large code model,
/// `lea x@tlsgd(%rip),%rdi` then the movabs/add/call sequence (22 bytes from `off - 3`).
fn gd_sequence(buf: &[u8], off: usize) -> Option<TlsCall> {
    let at =
        |lo: usize, len: usize| off.checked_add(lo).and_then(|s| s.checked_sub(4)).and_then(|s| buf.get(s..s + len));
    if off >= 4 && at(0, 4) == Some(&[0x66, 0x48, 0x8d, 0x3d]) {
        return match at(8, 8)? {
            [0x66, 0x66, 0x48, 0xe8, ..] => Some(TlsCall::Direct),
            [0x66, 0x48, 0xff, 0x15, ..] => Some(TlsCall::ThroughGot),
            _ => None,
        };
    }
    let large = off >= 3 && buf.get(off - 3..off) == Some(&[0x48, 0x8d, 0x3d]) && is_large_tls_call(buf, off + 4);
    large.then_some(TlsCall::Large)
}

/// `mov %fs:0,%rax` (9 bytes).
const MOV_FS0_RAX: [u8; 9] = [0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0];
/// `nopw 0(%rax,%rax,1)` (6 bytes).
const NOP6: [u8; 6] = [0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00];

/// General-dynamic → local-exec: the sequence (`gd_sequence`) becomes `mov %fs:0,%rax; lea
/// tpoff(%rax),%rax`, padded with a 6-byte nop in the large code model.
pub fn relax_gd_to_le(buf: &mut [u8], off: usize, tpoff: i64) -> Result<()> {
    let imm = i32::try_from(tpoff).ok().context("TLS offset does not fit in 32 bits")?;
    let mut lea = [0x48, 0x8d, 0x80, 0, 0, 0, 0];
    lea[3..].copy_from_slice(&imm.to_le_bytes());
    rewrite_gd(buf, off, &lea, "local-exec")
}

/// General-dynamic → initial-exec (an executable using a shared library's variable): the
/// sequence becomes `mov %fs:0,%rax; add x@gottpoff(%rip),%rax`; `got_rel` is the GOT entry's
/// address minus the place (the field at `off`).
pub fn relax_gd_to_ie(buf: &mut [u8], off: usize, got_rel: i64) -> Result<()> {
    // The add ends 12 bytes after the field in the 16-byte forms, 13 in the large one.
    let end = if gd_sequence(buf, off) == Some(TlsCall::Large) { 13 } else { 12 };
    let disp = i32::try_from(got_rel.wrapping_sub(end)).ok().context("GOT entry out of reach")?;
    let mut add = [0x48, 0x03, 0x05, 0, 0, 0, 0];
    add[3..].copy_from_slice(&disp.to_le_bytes());
    rewrite_gd(buf, off, &add, "initial-exec")
}

/// Writes `mov %fs:0,%rax; second` over the general-dynamic sequence at `off`.
fn rewrite_gd(buf: &mut [u8], off: usize, second: &[u8; 7], model: &str) -> Result<()> {
    let Some(call) = gd_sequence(buf, off) else {
        return Err(format!("unrecognised general-dynamic TLS sequence; cannot relax it to {model}").into());
    };
    let start = if call == TlsCall::Large { off - 3 } else { off - 4 };
    buf[start..start + 9].copy_from_slice(&MOV_FS0_RAX);
    buf[start + 9..start + 16].copy_from_slice(second);
    if call == TlsCall::Large {
        buf[start + 16..start + 22].copy_from_slice(&NOP6);
    }
    Ok(())
}

/// Local-dynamic → local-exec: `lea x@tlsld(%rip),%rdi` (field at `off`) and the call to
/// `__tls_get_addr` (`call rel32`, 12 bytes in all; `call *…@GOTPCREL(%rip)`, 13; the large code
/// model's movabs/add/call, 22) become `mov %fs:0,%rax`, with prefixes and nops to fill; the
/// `x@dtpoff(%rax)` uses that follow become thread-pointer offsets.
pub fn relax_ld_to_le(buf: &mut [u8], off: usize) -> Result<()> {
    let lea = off >= 3 && buf.get(off - 3..off) == Some(&[0x48, 0x8d, 0x3d]);
    let call = match off.checked_add(4).and_then(|at| buf.get(at..)) {
        _ if !lea => None,
        Some([0xe8, _, _, _, _, ..]) => Some(TlsCall::Direct),
        Some([0xff, 0x15, _, _, _, _, ..]) => Some(TlsCall::ThroughGot),
        Some(_) if is_large_tls_call(buf, off + 4) => Some(TlsCall::Large),
        _ => None,
    };
    let Some(call) = call else {
        return Err("unrecognised local-dynamic TLS sequence; cannot relax it to local-exec".into());
    };
    let start = off - 3;
    buf[start..start + 3].copy_from_slice(&[0x66, 0x66, 0x66]);
    buf[start + 3..start + 12].copy_from_slice(&MOV_FS0_RAX);
    match call {
        TlsCall::Direct => {}
        TlsCall::ThroughGot => buf[start + 12] = 0x90,
        // nopw %cs:0(%rax,%rax,1)
        TlsCall::Large => buf[start + 12..start + 22].copy_from_slice(&[0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0]),
    }
    Ok(())
}

/// TLS descriptor → local-exec: `lea x@tlsdesc(%rip),%reg` becomes `mov $tpoff,%reg`.
pub fn relax_tlsdesc_to_le(buf: &mut [u8], off: usize, tpoff: i64) -> Result<()> {
    check_tlsdesc_lea(buf, off)?;
    let (rex, modrm) = (buf[off - 3], buf[off - 1]);
    let imm = i32::try_from(tpoff).ok().context("TLS offset does not fit in 32 bits")?;
    let reg = (modrm >> 3) & 7;
    // The destination moves from ModRM.reg (REX.R) to ModRM.rm (REX.B).
    buf[off - 3..off].copy_from_slice(&[0x48 | ((rex >> 2) & 1), 0xc7, 0xc0 | reg]);
    buf[off..off + 4].copy_from_slice(&imm.to_le_bytes());
    Ok(())
}

/// TLS descriptor → initial-exec (an executable using a shared library's variable):
/// `lea x@tlsdesc(%rip),%reg` becomes `mov x@gottpoff(%rip),%reg`; `got_rel` is the GOT entry's
/// address minus the place plus the addend.
pub fn relax_tlsdesc_to_ie(buf: &mut [u8], off: usize, got_rel: i64) -> Result<()> {
    check_tlsdesc_lea(buf, off)?;
    let disp = i32::try_from(got_rel).ok().context("GOT entry out of reach")?;
    buf[off - 2] = 0x8b;
    buf[off..off + 4].copy_from_slice(&disp.to_le_bytes());
    Ok(())
}

/// Checks for `lea x@tlsdesc(%rip),%reg` (REX.W, optionally REX.R) before the field at `off`.
fn check_tlsdesc_lea(buf: &[u8], off: usize) -> Result<()> {
    match off.checked_sub(3).zip(off.checked_add(4)).and_then(|(s, e)| buf.get(s..e)) {
        Some(&[rex, 0x8d, modrm, ..]) if modrm & 0xc7 == 0x05 && rex & 0xfb == 0x48 => Ok(()),
        _ => Err("unrecognised TLS descriptor sequence".into()),
    }
}

/// `--branch-to-branch` (lld 21): a `jmp`, `call` or conditional jump whose target is itself a
/// `jmp rel32` to a symbol that binds here goes straight to that jump's target, followed
/// through a few such jumps. Only what the input says is followed: the target's own bytes and
/// relocation (`R_X86_64_PC32`/`PLT32`, addend -4, at the jump's field), in a live section.
fn final_branch_target(r: &Reloc<X86_64>, mut t: Target, mut a: i128) -> (Target, i128) {
    let ctx = r.ctx;
    let off = r.off as usize;
    let branch = match (off.checked_sub(2).map(|i| r.buf[i]), off.checked_sub(1).map(|i| r.buf[i])) {
        (_, Some(0xe8 | 0xe9)) => true,
        (Some(0x0f), Some(op)) => (0x80..=0x8f).contains(&op),
        _ => false,
    };
    if !branch || a != -4 {
        return (t, a);
    }
    if ctx.is_preemptible(t) || ctx.is_ifunc(t) {
        return (t, a);
    }
    for _ in 0..8 {
        let Some((file, sym)) = ctx.definition(t) else { break };
        let index = match t {
            Target::Local(_, s) => s as usize,
            Target::Global(id) => match ctx.symbols[id].def {
                crate::resolve::Def::Defined { sym, .. } => sym as usize,
                _ => break,
            },
        };
        let Some(si) = ctx.objects[file].sym_shndx(index) else { break };
        let sec = &ctx.objects[file].sections[si as usize];
        let at = sym.st_value.get(LE);
        if !sec.live || sec.flags & SHF_EXECINSTR as u64 == 0 || sec.data.get(at as usize) != Some(&0xe9) {
            break;
        }
        let field = at + 1;
        let i = sec.relas.partition_point(|r| r.r_offset.get(LE) < field);
        let Some(next) = sec.relas.get(i).filter(|r| r.r_offset.get(LE) == field) else { break };
        if !matches!(next.r_type(LE, false), R_X86_64_PC32 | R_X86_64_PLT32) || next.r_addend.get(LE) != -4 {
            break;
        }
        let to = ctx.target(file, next.r_sym(LE, false));
        // Only to a place of the output: not through the PLT, not to a jump to itself.
        if to == t || ctx.is_preemptible(to) || ctx.is_ifunc(to) || ctx.definition(to).is_none() {
            break;
        }
        (t, a) = (to, -4);
    }
    (t, a)
}

/// Applies one relocation; returns true when the next one belongs to a rewritten TLS
/// sequence (the call to `__tls_get_addr`) and must be skipped.
fn apply_one(r: &mut Reloc<X86_64>, alloc: bool, dynrels: &mut Vec<DynRel>) -> bool {
    let ctx = r.ctx;
    let ty = r.rel.r_type(LE, false);
    let (t, a) = (r.target(), r.rel.r_addend.get(LE) as i128);
    let (t, a) = match ty {
        R_X86_64_PC32 | R_X86_64_PLT32 if alloc && ctx.config.branch_to_branch() => final_branch_target(r, t, a),
        _ => (t, a),
    };
    let p = r.place as i128;
    if let Target::Global(id) = t {
        // Undefined in a shared library, it is the loader's to find (GNU ld and lld link it).
        if Some(id) == ctx.tls_get_addr && ctx.is_undefined(t) && !ctx.is_preemptible(t) {
            r.error("undefined symbol: __tls_get_addr (called outside a general- or local-dynamic TLS sequence)");
            return false;
        }
    }
    if !alloc {
        return r.apply_nonalloc(ty, t, a);
    }
    let Some(s) = r.merged_or(t, ty, a, |t| ctx.value(t)) else { return false };
    let got = |kind| ctx.got_entry_addr(t, kind).unwrap_or(0) as i128;
    let gotplt = ctx.gotplt_addr() as i128;
    let exe = ctx.kind.is_executable();
    // None at once unless `ty` is a relaxable GOT load.
    let relax = relaxation(r, ty, t);
    match ty {
        R_X86_64_NONE => {}
        R_X86_64_64 => {
            let sec = &ctx.objects[r.f].sections[r.si as usize];
            let how = abs64(ctx, t, sec.flags & SHF_WRITE as u64 != 0);
            if how == Abs64::Symbolic {
                let Target::Global(id) = t else { unreachable!("only globals are preemptible") };
                dynrels.push(DynRel { offset: r.place, ty: R_X86_64_64, sym: Some(id), addend: a as i64 });
            } else {
                r.write(8, (s + a) as u64);
                if how == Abs64::Relative && !ctx.packs_relative(sec, r.off.wrapping_add(r.lo)) {
                    dynrels.push(DynRel { offset: r.place, ty: R_X86_64_RELATIVE, sym: None, addend: (s + a) as i64 });
                }
            }
        }
        R_X86_64_PC32 | R_X86_64_PLT32 => r.write_checked(ty, 4, s + a - p, true),
        R_X86_64_PC64 => r.write(8, (s + a - p) as u64),
        R_X86_64_32 => r.write_checked(ty, 4, s + a, false),
        R_X86_64_32S => r.write_checked(ty, 4, s + a, true),
        R_X86_64_16 => r.write_checked(ty, 2, s + a, false),
        R_X86_64_PC16 => r.write_checked(ty, 2, s + a - p, true),
        R_X86_64_8 => r.write_checked(ty, 1, s + a, false),
        R_X86_64_PC8 => r.write_checked(ty, 1, s + a - p, true),
        R_X86_64_GOTPCRELX | R_X86_64_REX_GOTPCRELX if relax.is_some() => {
            rewrite_got_access(r.buf, r.off as usize, relax.unwrap());
            r.write_checked(ty, 4, s + a - p, true)
        }
        R_X86_64_GOTPCREL | R_X86_64_GOTPCRELX | R_X86_64_REX_GOTPCRELX => {
            r.write_checked(ty, 4, got(GotKind::Addr) + a - p, true)
        }
        R_X86_64_GOTPCREL64 => r.write(8, (got(GotKind::Addr) + a - p) as u64),
        R_X86_64_GOT32 => r.write_checked(ty, 4, got(GotKind::Addr) - gotplt + a, true),
        R_X86_64_GOT64 | R_X86_64_GOTPLT64 => r.write(8, (got(GotKind::Addr) - gotplt + a) as u64),
        R_X86_64_GOTPC32 => r.write_checked(ty, 4, gotplt + a - p, true),
        R_X86_64_GOTPC64 => r.write(8, (gotplt + a - p) as u64),
        R_X86_64_GOTOFF64 | R_X86_64_PLTOFF64 => r.write(8, (s + a - gotplt) as u64),
        R_X86_64_SIZE32 => r.write_checked(ty, 4, r.sym_size(t) + a, false),
        R_X86_64_SIZE64 => r.write(8, (r.sym_size(t) + a) as u64),
        R_X86_64_TPOFF32 => r.write_checked(ty, 4, super::tpoff::<X86_64>(ctx, t) as i128 + a, true),
        R_X86_64_TPOFF64 => r.write(8, (super::tpoff::<X86_64>(ctx, t) as i128 + a) as u64),
        R_X86_64_GOTTPOFF => r.write_checked(ty, 4, got(GotKind::TpOff) + a - p, true),
        // In an executable local-dynamic is relaxed: %rax holds the thread pointer, so the
        // offsets added to it are thread-pointer offsets. A shared object keeps the offsets
        // within its TLS block.
        R_X86_64_DTPOFF32 if exe => r.write_checked(ty, 4, super::tpoff::<X86_64>(ctx, t) as i128 + a, true),
        R_X86_64_DTPOFF64 if exe => r.write(8, (super::tpoff::<X86_64>(ctx, t) as i128 + a) as u64),
        R_X86_64_DTPOFF32 => r.write_checked(ty, 4, ctx.dtpoff(t) as i128 + a, true),
        R_X86_64_DTPOFF64 => r.write(8, (ctx.dtpoff(t) as i128 + a) as u64),
        R_X86_64_TLSGD if exe && ctx.is_preemptible(t) => {
            // general-dynamic → initial-exec: the GOT entry holds the offset (TPOFF64).
            let got_rel = (got(GotKind::TpOff) - p) as i64;
            let res = relax_gd_to_ie(r.buf, r.off as usize, got_rel);
            return r.relaxed(res);
        }
        R_X86_64_TLSGD if exe => {
            let tpoff = super::tpoff::<X86_64>(ctx, t) + r.rel.r_addend.get(LE) + 4;
            let res = relax_gd_to_le(r.buf, r.off as usize, tpoff);
            return r.relaxed(res);
        }
        R_X86_64_TLSLD if exe => {
            let res = relax_ld_to_le(r.buf, r.off as usize);
            return r.relaxed(res);
        }
        R_X86_64_TLSGD => r.write_checked(ty, 4, got(GotKind::TlsGd) + a - p, true),
        R_X86_64_TLSLD => r.write_checked(ty, 4, got(GotKind::TlsLd) + a - p, true),
        // A shared object keeps the sequence: the field reaches the descriptor, and the
        // `call *(%rax)` calls its resolver.
        R_X86_64_GOTPC32_TLSDESC if keeps_tlsdesc(ctx, t) => {
            r.write_checked(ty, 4, got(GotKind::TlsDesc) + a - p, true)
        }
        R_X86_64_TLSDESC_CALL if keeps_tlsdesc(ctx, t) => {}
        R_X86_64_GOTPC32_TLSDESC if ctx.is_preemptible(t) => {
            let got_ie = got(GotKind::TpOff) + a - p;
            let res = relax_tlsdesc_to_ie(r.buf, r.off as usize, got_ie as i64);
            r.relaxed(res);
        }
        R_X86_64_GOTPC32_TLSDESC => {
            let tpoff = super::tpoff::<X86_64>(ctx, t) + r.rel.r_addend.get(LE) + 4;
            let res = relax_tlsdesc_to_le(r.buf, r.off as usize, tpoff);
            r.relaxed(res);
        }
        R_X86_64_TLSDESC_CALL => relax_tlsdesc_call(r),
        _ => r.error(format!("unsupported relocation {} against '{}'", reloc_name(ty), ctx.name_of(t))),
    }
    false
}

fn relaxation(r: &Reloc<X86_64>, ty: u32, t: Target) -> Option<GotRelax> {
    let data = r.ctx.objects[r.f].sections[r.si as usize].data;
    got_relaxation(r.ctx, r.ctx.plans.got.relax_got_loads, data, r.rel.r_offset.get(LE), ty, t)
}

/// A relocation in a non-allocated section, given its symbol's value `s`.
fn write_nonalloc(r: &mut Reloc<X86_64>, ty: u32, t: Target, a: i128, s: i128) {
    let ctx = r.ctx;
    match ty {
        R_X86_64_NONE => {}
        R_X86_64_64 => r.write(8, (s + a) as u64),
        R_X86_64_32 => r.write_checked(ty, 4, s + a, false),
        R_X86_64_32S => r.write_checked(ty, 4, s + a, true),
        R_X86_64_DTPOFF32 => r.write_checked(ty, 4, s - ctx.layout.tls.start as i128 + a, true),
        R_X86_64_DTPOFF64 => r.write(8, (s - ctx.layout.tls.start as i128 + a) as u64),
        R_X86_64_PC32 => r.write_checked(ty, 4, s + a - r.place as i128, true),
        R_X86_64_PC64 => r.write(8, (s + a - r.place as i128) as u64),
        R_X86_64_SIZE32 => r.write_checked(ty, 4, r.sym_size(t) + a, false),
        R_X86_64_SIZE64 => r.write(8, (r.sym_size(t) + a) as u64),
        _ => r.error(format!("unsupported relocation {} in a non-allocated section", reloc_name(ty))),
    }
}

/// `call *x@tlsdesc(%rax)` becomes a two-byte nop.
fn relax_tlsdesc_call(r: &mut Reloc<X86_64>) {
    let start = r.off as usize;
    match start.checked_add(2).and_then(|end| r.buf.get_mut(start..end)) {
        Some(b) if b == [0xff, 0x10] => b.copy_from_slice(&[0x66, 0x90]),
        _ => r.error("unrecognised TLS descriptor call".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn got_relaxation_decodes_instructions() {
        // mov foo@GOTPCREL(%rip),%rax = 48 8b 05 <disp>
        let mov = [0x48, 0x8b, 0x05, 0, 0, 0, 0];
        assert!(got_relax_kind(&mov, 3, R_X86_64_REX_GOTPCRELX) == Some(GotRelax::MovToLea));
        // call *foo@GOTPCREL(%rip) = ff 15 <disp>; jmp * = ff 25
        assert!(got_relax_kind(&[0xff, 0x15, 0, 0, 0, 0], 2, R_X86_64_GOTPCRELX) == Some(GotRelax::Call));
        assert!(got_relax_kind(&[0xff, 0x25, 0, 0, 0, 0], 2, R_X86_64_GOTPCRELX) == Some(GotRelax::Jmp));
        // add foo@GOTPCREL(%rip),%rax = 48 03 05: not relaxed
        assert!(got_relax_kind(&[0x48, 0x03, 0x05, 0, 0, 0, 0], 3, R_X86_64_REX_GOTPCRELX).is_none());
        assert!(got_relax_kind(&[0x15, 0, 0, 0, 0], 1, R_X86_64_GOTPCRELX).is_none());
        let mut b = mov;
        rewrite_got_access(&mut b, 3, GotRelax::MovToLea);
        assert_eq!(b[..3], [0x48, 0x8d, 0x05]);
        let mut c = [0xff, 0x15, 0, 0, 0, 0];
        rewrite_got_access(&mut c, 2, GotRelax::Call);
        assert_eq!(c[..2], [0x67, 0xe8]);
    }

    #[test]
    fn gd_relaxes_to_le() {
        // data16 lea x@tlsgd(%rip),%rdi; data16 data16 rex64 call __tls_get_addr@PLT
        let mut b = vec![0x66, 0x48, 0x8d, 0x3d, 1, 2, 3, 4, 0x66, 0x66, 0x48, 0xe8, 5, 6, 7, 8];
        relax_gd_to_le(&mut b, 4, -16).unwrap();
        assert_eq!(b, [0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0, 0x48, 0x8d, 0x80, 0xf0, 0xff, 0xff, 0xff]);
        let mut wrong = vec![0x90; 16];
        assert!(relax_gd_to_le(&mut wrong, 4, 0).is_err());
        assert!(relax_gd_to_le(&mut b.clone(), 2, 0).is_err());
    }

    #[test]
    fn ld_relaxes_to_le() {
        // lea x@tlsld(%rip),%rdi; call __tls_get_addr@PLT
        let mut b = vec![0x48, 0x8d, 0x3d, 1, 2, 3, 4, 0xe8, 5, 6, 7, 8];
        relax_ld_to_le(&mut b, 3).unwrap();
        assert_eq!(b, [0x66, 0x66, 0x66, 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0]);
        assert!(relax_ld_to_le(&mut [0u8; 12], 3).is_err());
    }

    /// `lea x@tls{gd,ld}(%rip),%rdi; movabs $__tls_get_addr@PLTOFF,%rax; add %rbx,%rax; call *%rax`
    fn large_sequence() -> Vec<u8> {
        let mut b = vec![0x48, 0x8d, 0x3d, 1, 2, 3, 4, 0x48, 0xb8];
        b.extend([9; 8]);
        b.extend([0x48, 0x01, 0xd8, 0xff, 0xd0]);
        b
    }

    #[test]
    fn large_model_gd_relaxes() {
        let mut b = large_sequence();
        relax_gd_to_le(&mut b, 3, -16).unwrap();
        let mut want = MOV_FS0_RAX.to_vec();
        want.extend([0x48, 0x8d, 0x80, 0xf0, 0xff, 0xff, 0xff]);
        want.extend(NOP6);
        assert_eq!(b, want);
        // To initial-exec: the displacement is from the end of the add, 13 bytes past the field.
        let mut b = large_sequence();
        relax_gd_to_ie(&mut b, 3, 0x10d).unwrap();
        assert_eq!(b[9..16], [0x48, 0x03, 0x05, 0, 1, 0, 0]);
        // With %r15 as the GOT base (add %r15,%rax = 4c 01 f8).
        let mut r15 = large_sequence();
        r15[17..20].copy_from_slice(&[0x4c, 0x01, 0xf8]);
        assert!(relax_gd_to_le(&mut r15, 3, 0).is_ok());
        // A call through another register is not the sequence.
        let mut other = large_sequence();
        other[21] = 0xd1;
        assert!(relax_gd_to_le(&mut other, 3, 0).is_err());
        // Cut short at the section's end.
        assert!(relax_gd_to_le(&mut large_sequence()[..21], 3, 0).is_err());
    }

    #[test]
    fn small_gd_through_got_relaxes_to_ie() {
        // data16 lea x@tlsgd(%rip),%rdi; data16 rex64 call *__tls_get_addr@GOTPCREL(%rip)
        let mut b = vec![0x66, 0x48, 0x8d, 0x3d, 1, 2, 3, 4, 0x66, 0x48, 0xff, 0x15, 5, 6, 7, 8];
        relax_gd_to_ie(&mut b, 4, 0x10c).unwrap();
        assert_eq!(b[9..], [0x48, 0x03, 0x05, 0, 1, 0, 0]);
    }

    #[test]
    fn ld_relaxes_in_every_code_model() {
        let mov = [0x66, 0x66, 0x66, 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0];
        // -fno-plt: call *__tls_get_addr@GOTPCREL(%rip)
        let mut b = vec![0x48, 0x8d, 0x3d, 1, 2, 3, 4, 0xff, 0x15, 5, 6, 7, 8];
        relax_ld_to_le(&mut b, 3).unwrap();
        assert_eq!(b[..12], mov);
        assert_eq!(b[12], 0x90);
        let mut b = large_sequence();
        relax_ld_to_le(&mut b, 3).unwrap();
        assert_eq!(b[..12], mov);
        assert_eq!(b[12..], [0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0]);
        assert!(relax_ld_to_le(&mut large_sequence()[..20], 3).is_err());
    }

    #[test]
    fn tlsdesc_relaxes_to_le() {
        // lea x@tlsdesc(%rip),%rax = 48 8d 05; with %r9 (REX.R): 4c 8d 0d
        let mut b = vec![0x48, 0x8d, 0x05, 0, 0, 0, 0];
        relax_tlsdesc_to_le(&mut b, 3, -8).unwrap();
        assert_eq!(b, [0x48, 0xc7, 0xc0, 0xf8, 0xff, 0xff, 0xff]);
        let mut r9 = vec![0x4c, 0x8d, 0x0d, 0, 0, 0, 0];
        relax_tlsdesc_to_le(&mut r9, 3, 16).unwrap();
        assert_eq!(r9, [0x49, 0xc7, 0xc1, 16, 0, 0, 0]);
    }

    #[test]
    fn tlsdesc_relaxes_to_ie() {
        // lea x@tlsdesc(%rip),%rax → mov x@gottpoff(%rip),%rax
        let mut b = vec![0x48, 0x8d, 0x05, 0, 0, 0, 0];
        relax_tlsdesc_to_ie(&mut b, 3, 0x100).unwrap();
        assert_eq!(b, [0x48, 0x8b, 0x05, 0, 1, 0, 0]);
        let mut r9 = vec![0x4c, 0x8d, 0x0d, 0, 0, 0, 0];
        relax_tlsdesc_to_ie(&mut r9, 3, -4).unwrap();
        assert_eq!(r9, [0x4c, 0x8b, 0x0d, 0xfc, 0xff, 0xff, 0xff]);
        // Not a RIP-relative lea: refused.
        assert!(relax_tlsdesc_to_ie(&mut [0x48, 0x8b, 0x05, 0, 0, 0, 0], 3, 0).is_err());
        assert!(relax_tlsdesc_to_ie(&mut [0x48, 0x8d, 0x04, 0, 0, 0, 0], 3, 0).is_err());
    }

    #[test]
    fn names() {
        assert_eq!(reloc_name(R_X86_64_PC32), "R_X86_64_PC32");
        assert_eq!(reloc_name(9999), "relocation type 9999");
    }
}
