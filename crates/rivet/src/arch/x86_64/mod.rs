//! x86-64 relocations. `scan_relocations` takes every relocation of the live sections and gives
//! what they need from the linker (GOT entries, IFUNC PLT stubs, copies, RELATIVE relocations) as
//! the `Tables` it returns; `apply` takes an
//! input section's bytes copied into the output and patches every relocation. An executable's TLS
//! general-dynamic, local-dynamic and descriptor sequences are relaxed to local-exec (an executable
//! knows every thread-local offset of its own, and static glibc has no `__tls_get_addr`), those
//! for a shared library's variable to initial-exec; a shared object keeps them, with GOT entries,
//! and so does a dynamically linked executable its general-dynamic descriptors under `--no-relax`.
use crate::arch::Arch;
use crate::ctx::{Ctx, Target};
use crate::diag::{Context, Error, Result};
use crate::ids::{FileId, SectionRef, SymbolId};
use crate::input::object::{ObjSection, Rela};
use crate::linked::{Linked, MergeTarget};
use crate::sections::output::Sizes;
use crate::synthetic::plans::output_features;
use crate::synthetic::property::Properties;
use crate::synthetic::{DynRel, GotKind, Tables};
use object::elf::*;
use object::LittleEndian as LE;
use std::cell::RefCell;

pub mod plt;

/// x86-64 (AMD64) Linux: the psABI's relocations, TLS variant II, the lazy-binding PLT with its
/// IBT form (`.plt.sec`).
pub struct X86_64;

impl crate::arch::Arch for X86_64 {
    const NAMES: &'static crate::machine::Names = &crate::machine::X86_64;

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
    /// DT_X86_64_PLT, DT_X86_64_PLTSZ, DT_X86_64_PLTENT.
    const MARK_PLT_TAGS: [u32; 3] = [0x7000_0000, 0x7000_0001, 0x7000_0003];

    const RELOC_REACH: u64 = RELOC_REACH;

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
    fn scan_relocations(ctx: &mut Ctx, properties: &Properties, sizes: &mut Sizes) -> Tables {
        scan_relocations(ctx, properties, sizes)
    }
    fn apply(ctx: &Linked, f: FileId, si: u32, buf: &mut [u8]) -> Vec<DynRel> {
        apply(ctx, f, si, buf)
    }
    fn apply_range(
        ctx: &Linked,
        f: FileId,
        si: u32,
        buf: &mut [u8],
        lo: u64,
        owned: std::ops::Range<u64>,
    ) -> Vec<DynRel> {
        apply_range(ctx, f, si, buf, lo, owned)
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
    fn plt_lazy_addr(stub: u64, plt_sec: bool) -> u64 {
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

fn is_alloc(sec: &ObjSection) -> bool {
    sec.flags & SHF_ALLOC as u64 != 0
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

/// Whether TLS descriptor sequences are kept for the dynamic loader to fill: in a shared object,
/// and in a dynamically linked executable under `--no-relax` (as mold keeps them; relaxing them
/// is an optimisation). A static executable has no loader to fill them: they are always relaxed.
/// So is a local-dynamic descriptor (against `_TLS_MODULE_BASE_`): an executable's `@dtpoff`
/// offsets are computed for the relaxed sequences (local-dynamic `__tls_get_addr` ones are
/// always relaxed), and a kept descriptor would need them relative to the module instead.
fn keeps_tlsdesc(ctx: &Ctx, t: Target) -> bool {
    let module_base = matches!(t, Target::Global(id) if ctx.symbols[id].name == b"_TLS_MODULE_BASE_");
    !ctx.kind.is_executable() || (!ctx.config.relax && ctx.kind.is_dynamic() && !module_base)
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
pub fn pc32_reaches_everything(ctx: &Ctx, sizes: &Sizes) -> bool {
    const SLACK: u64 = 256 << 20;
    let span: u64 =
        ctx.sections.iter_enumerated().filter(|(_, s)| s.is_alloc()).fold(0u64, |acc, (i, s)| {
            acc.saturating_add(sizes[i]).saturating_add(s.align.max(ctx.config.max_page_size))
        });
    span.saturating_add(SLACK) < 1 << 31
}

/// The range a `width`-byte field holds, signed or not.
pub fn field_range(width: usize, signed: bool) -> (i128, i128) {
    let bits = width as u32 * 8;
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
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
pub fn scan_relocations(ctx: &mut Ctx, properties: &Properties, sizes: &mut Sizes) -> Tables {
    let relax = relaxes_got_loads(ctx) && pc32_reaches_everything(ctx, sizes);
    let mut tables = scan(ctx, relax, output_features(properties));
    crate::layout::allocate_copies(ctx, &mut tables, sizes);
    let (all, relative, packed) = table_relocations(ctx, &tables);
    tables.dynrel_count += all;
    tables.relative_count += relative;
    tables.relr_got = packed;
    tables
}

/// Walks every relocation of every live allocated section and sizes the GOT, PLT, copy relocations
/// and dynamic relocations. Errors (a 32-bit absolute relocation in a PIE, a non-PIC reference in a
/// shared object, an unknown type) go to `ctx.diag`.
fn scan(ctx: &Ctx, relax: bool, features: u32) -> Tables {
    use rayon::prelude::*;
    let per_file: Vec<Needs> = ctx
        .file_order
        .par_iter()
        .with_max_len(1)
        .map(|&f| {
            let mut needs = Needs::default();
            for (si, sec) in ctx.objects[f].sections.iter().enumerate() {
                if sec.live && is_alloc(sec) && !sec.relas.is_empty() {
                    scan_section(ctx, relax, f, si as u32, sec, &mut needs);
                }
            }
            needs
        })
        .collect();
    let mut tables = Tables::default();
    tables.relax_got_loads = relax;
    tables.plt_header = if ctx.kind.is_dynamic() { X86_64::PLT_HEADER_SIZE } else { 0 };
    tables.plt_entry = X86_64::PLT_ENTRY_SIZE;
    tables.gotplt_reserved = X86_64::GOTPLT_RESERVED;
    tables.mark_plt_tags = X86_64::MARK_PLT_TAGS;
    tables.ibt = ctx.config.ibt_plt || ctx.config.z_ibt || features & crate::synthetic::property::FEATURE_1_IBT != 0;
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
fn table_relocations(ctx: &Ctx, tables: &Tables) -> (u64, u64, u64) {
    let (mut all, mut relative, mut packed) = (tables.copies.len() as u64, 0, 0);
    for &(key, _) in &tables.got {
        for (_, ty, _, _) in crate::synthetic::got_entry::<X86_64>(ctx, None, key).1 {
            if ty == R_X86_64_RELATIVE && ctx.config.pack_relative_relocs {
                packed += 1; // The GOT is 8-aligned: always packed.
                continue;
            }
            all += 1;
            relative += (ty == R_X86_64_RELATIVE) as u64;
        }
    }
    (all, relative, packed)
}

fn scan_section(ctx: &Ctx, relax: bool, f: FileId, si: u32, sec: &ObjSection, needs: &mut Needs) {
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
        match ty {
            R_X86_64_GOTPCRELX | R_X86_64_REX_GOTPCRELX
                if got_relaxation(ctx, relax, sec.data, rel.r_offset.get(LE), ty, t).is_some() => {}
            R_X86_64_GOTPCREL
            | R_X86_64_GOTPCRELX
            | R_X86_64_REX_GOTPCRELX
            | R_X86_64_GOT32
            | R_X86_64_GOT64
            | R_X86_64_GOTPCREL64
            | R_X86_64_GOTPLT64 => {
                needs.got.push((t, GotKind::Addr));
                needs.gotplt |= matches!(ty, R_X86_64_GOT32 | R_X86_64_GOT64 | R_X86_64_GOTPLT64);
            }
            R_X86_64_GOTTPOFF => needs.got.push((t, GotKind::TpOff)),
            R_X86_64_TLSGD if exe => {
                skip_next = true;
                if pre {
                    needs.got.push((t, GotKind::TpOff)); // general-dynamic becomes initial-exec
                }
            }
            R_X86_64_TLSLD if exe => skip_next = true,
            R_X86_64_TLSGD => needs.got.push((t, GotKind::TlsGd)),
            R_X86_64_TLSLD => needs.got.push((t, GotKind::TlsLd)),
            // TLS descriptors, as lld handles them: a shared object gets a descriptor in the GOT;
            // an executable relaxes the sequence, to initial-exec for a shared library's
            // variable (a TPOFF64 GOT entry), to local-exec for its own (nothing needed).
            R_X86_64_GOTPC32_TLSDESC if keeps_tlsdesc(ctx, t) => needs.got.push((t, GotKind::TlsDesc)),
            R_X86_64_GOTPC32_TLSDESC if pre => needs.got.push((t, GotKind::TpOff)),
            R_X86_64_TPOFF32 | R_X86_64_TPOFF64 if !exe || pre => ctx.diag.error(format!(
                "{}: local-exec TLS relocation {} against `{}` can not be used {}; recompile with -fPIC",
                place(),
                reloc_name(ty),
                ctx.name_of(t),
                if exe { "for a variable of a shared library" } else { "when making a shared object" }
            )),
            R_X86_64_GOTPC32 | R_X86_64_GOTPC64 | R_X86_64_GOTOFF64 => needs.gotplt = true,
            // The large code model's calls: the PLT entry (the symbol itself when it binds
            // locally) relative to the GOT.
            R_X86_64_PLTOFF64 => {
                needs.gotplt = true;
                if pre {
                    needs.plt.push(t);
                }
            }
            R_X86_64_PLT32 if pre => needs.plt.push(t),
            R_X86_64_64 => {
                let how = abs64(ctx, t, writable);
                if !writable && matches!(how, Abs64::Symbolic | Abs64::Relative) {
                    text_relocation(ctx, f, si, rel.r_offset.get(LE), t, needs);
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
            R_X86_64_PC32 | R_X86_64_32 | R_X86_64_32S | R_X86_64_PC64 | R_X86_64_16 | R_X86_64_PC16 | R_X86_64_8
            | R_X86_64_PC8 | R_X86_64_SIZE32 | R_X86_64_SIZE64 => {
                if matches!(ty, R_X86_64_SIZE32 | R_X86_64_SIZE64) {
                    continue;
                }
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
                        reloc_name(ty),
                        referenced_by(ctx, f, si, rel.r_offset.get(LE), t)
                    ));
                } else if pre && exe {
                    address_in_executable(ctx, t, needs);
                } else if pre {
                    ctx.diag.error(format!(
                        "relocation {} against symbol '{}' can not be used when making a shared object; recompile with -fPIC\n>>> referenced by {}",
                        reloc_name(ty),
                        ctx.name_of(t),
                        referenced_by(ctx, f, si, rel.r_offset.get(LE), t)
                    ));
                } else if matches!(ty, R_X86_64_32 | R_X86_64_32S) && ctx.is_pic() && !ctx.is_absolute(t) {
                    ctx.diag.error(format!(
                        "relocation {} cannot be used against symbol '{}'; recompile with -fPIC\n>>> defined in {}\n>>> referenced by {}",
                        reloc_name(ty),
                        ctx.name_of(t),
                        obj.name,
                        referenced_by(ctx, f, si, rel.r_offset.get(LE), t)
                    ));
                }
            }
            _ => {}
        }
    }
}

/// An executable that takes the address of an imported symbol without the GOT must give it an
/// address of its own: a canonical PLT stub for a function, a copy (R_X86_64_COPY) for data.
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

/// How an `R_X86_64_64` is resolved; the scan and the write decide alike.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Abs64 {
    /// Written at link time.
    Static,
    /// A RELATIVE dynamic relocation (position-independent output, a non-preemptible target).
    Relative,
    /// A symbolic `R_X86_64_64` dynamic relocation (a preemptible target).
    Symbolic,
    /// A position-dependent executable's read-only reference to an imported symbol: the symbol
    /// gets a fixed address in the executable (a canonical PLT entry, a copy) and the bytes are
    /// written at link time. (A PIE's address is not fixed: a symbolic text relocation, which
    /// finds the copy where the executable has one, as GNU ld's does.)
    AddressInExecutable,
}

fn abs64(ctx: &Ctx, t: Target, writable: bool) -> Abs64 {
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
fn text_relocation(ctx: &Ctx, f: FileId, si: u32, off: u64, t: Target, needs: &mut Needs) {
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
            "can't create dynamic relocation R_X86_64_64 against {against} in readonly segment; recompile object files \
             with -fPIC or pass '-Wl,-z,notext' to allow text relocations in the output\n>>> defined in {defined}\n\
             >>> referenced by {}",
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
        String::from_utf8_lossy(obj.sections[si as usize].name)
    ));
    let what = if ctx.kind.is_executable() { "a PIE" } else { "a shared object" };
    ctx.diag.warn(format!("creating a DT_TEXTREL in an output file ({what})"));
}

/// A relocation's place in lld's words: `file.o:(function)`, `m.o:(.text+0x1A) in archive lib.a`.
fn place_name(ctx: &Ctx, f: FileId, si: u32, off: u64) -> String {
    let owns = |file: FileId, i: usize| crate::resolve::defines(&ctx.objects, &ctx.symbols, file, i);
    crate::srcloc::Places::new(&ctx.objects, &owns).object_part(f, si, off)
}

/// A relocation's place after lld's `>>> referenced by `: its source line (from DWARF) above the
/// object part when the object has one; only the object part past `--error-limit` (not printed).
fn referenced_by(ctx: &Ctx, f: FileId, si: u32, off: u64, t: Target) -> String {
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

/// Patches the relocations of input section `si` of file `f`, whose bytes are already in `buf`
/// (for `.eh_frame`, the surviving pieces, rearranged). Returns the RELATIVE relocations a
/// static-PIE needs for this section.
pub fn apply(ctx: &Linked, f: FileId, si: u32, buf: &mut [u8]) -> Vec<DynRel> {
    let obj = &ctx.objects[f];
    let sec = &obj.sections[si as usize];
    let base = ctx.section_addr(f, si).unwrap_or(0);
    let eh = ctx.split_eh_frame(f, si);
    let alloc = is_alloc(sec);
    let mut dynrels = Vec::new();
    let mut skip_next = false;
    let errors = RefCell::new(Vec::new());
    if !alloc && eh.is_none() {
        apply_nonalloc_section::<false>(ctx, f, si, buf, base, &errors, None);
        ctx.diag.report(errors.into_inner());
        return dynrels;
    }
    for rel in sec.relas {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        let in_off = rel.r_offset.get(LE);
        let off = match eh {
            Some(eh) => match crate::sections::eh_frame::map_offset(eh, in_off) {
                Some(o) => o,
                None => continue, // The FDE this relocation belongs to was dropped.
            },
            None => in_off,
        };
        let mut r =
            Reloc { ctx, f, si, rel, buf: &mut *buf, off, lo: 0, place: base.wrapping_add(off), errors: &errors };
        skip_next = r.apply_one(alloc, &mut dynrels);
    }
    ctx.diag.report(errors.into_inner());
    dynrels
}

/// How far before and after a relocation's offset applying it may read or write: TLS relaxation
/// rewrites the instructions around it (general-dynamic → local-exec: 4 bytes before to 12 after),
/// a GOT load relaxation the opcode before it.
pub const RELOC_REACH: u64 = 16;

/// `apply` for bytes `owned` of an input section copied as it is (not a split `.eh_frame`), when
/// `buf` holds the section's bytes from offset `lo` on, and reaches `RELOC_REACH` beyond `owned`
/// on both sides (less at the section's ends). Every relocation that can change an owned byte is
/// applied; only those at an owned offset report their errors and dynamic relocations (the
/// neighbouring range reports the others). Write-behind relocates a large section window by
/// window through this, never holding the whole section.
pub fn apply_range(
    ctx: &Linked,
    f: FileId,
    si: u32,
    buf: &mut [u8],
    lo: u64,
    owned: std::ops::Range<u64>,
) -> Vec<DynRel> {
    let sec = &ctx.objects[f].sections[si as usize];
    let base = ctx.section_addr(f, si).unwrap_or(0);
    let alloc = is_alloc(sec);
    let mut dynrels = Vec::new();
    let mut skip_next = false;
    let errors = RefCell::new(Vec::new());
    let ignored = RefCell::new(Vec::new());
    if !alloc {
        // Debug sections, through the per-symbol cache (no relaxation reaches past a field).
        apply_nonalloc_section::<true>(ctx, f, si, buf, base, &errors, Some((lo, owned, &ignored)));
        ctx.diag.report(errors.into_inner());
        return dynrels;
    }
    let reach = owned.start.saturating_sub(RELOC_REACH)..owned.end + RELOC_REACH;
    for rel in sec.relas {
        let in_off = rel.r_offset.get(LE);
        if !reach.contains(&in_off) {
            skip_next = false;
            continue;
        }
        if std::mem::take(&mut skip_next) {
            continue;
        }
        let mine = owned.contains(&in_off);
        let errors = if mine { &errors } else { &ignored };
        let mut theirs = Vec::new();
        let out = if mine { &mut dynrels } else { &mut theirs };
        let mut r =
            Reloc { ctx, f, si, rel, buf: &mut *buf, off: in_off - lo, lo, place: base.wrapping_add(in_off), errors };
        skip_next = r.apply_one(alloc, out);
    }
    ctx.diag.report(errors.into_inner());
    dynrels
}

/// What a relocation in a non-allocated section needs of a local symbol, the same for every
/// relocation against it.
#[derive(Clone, Copy)]
enum LocalTarget<'m> {
    /// In a section that is not in the output: gets the tombstone.
    Dropped,
    /// The section symbol of a merged section (`Ctx::merged_target`).
    Merged(MergeTarget<'m>, u64),
    /// Anything else: its value.
    Value(u64),
}

/// Write-behind's share of a section: where `buf` starts in it, the offsets this part owns, and
/// where the neighbours' relocations put their errors.
type Part<'e> = (u64, std::ops::Range<u64>, &'e RefCell<Vec<Error>>);

/// The relocations of a non-allocated section (debug info, mostly). Nearly all refer to a few
/// local symbols (the section symbols of `.debug_str`, `.debug_abbrev`, `.debug_line`, the code):
/// what each needs is looked up once per symbol, in a small cache, instead of through the symbol,
/// its section and its merged section on every relocation; only the piece of a merged section
/// is still found per relocation (synth-1's write phase went from 91 to 73 ms: medians of 11
/// alternated runs, a5484c2).
///
/// `PART` says whether `part` is given. With a `Part`, only the section's bytes from `lo` on are
/// in `buf` (write-behind's windows), and of the relocations that touch them, only those at
/// offsets the part owns report their errors (the neighbouring part reports the others).
fn apply_nonalloc_section<const PART: bool>(
    ctx: &Linked,
    f: FileId,
    si: u32,
    buf: &mut [u8],
    base: u64,
    errors: &RefCell<Vec<Error>>,
    part: Option<Part>,
) {
    let obj = &ctx.objects[f];
    const WAYS: usize = 16;
    let mut cache: [Option<(u32, LocalTarget)>; WAYS] = [None; WAYS];
    // A field is at most 8 bytes: those starting up to 7 bytes before the part reach into it.
    let (lo, reach) = match &part {
        Some((lo, owned, _)) => (*lo, owned.start.saturating_sub(7)..owned.end),
        None => (0, 0..u64::MAX),
    };
    for rel in obj.sections[si as usize].relas {
        let in_off = rel.r_offset.get(LE);
        // (PART: the checks compiled only into the copy for write-behind's parts, which a whole
        // section's millions of debug relocations do not pay for.)
        if PART && !reach.contains(&in_off) {
            continue;
        }
        let errors = match &part {
            Some((_, owned, ignored)) if PART && !owned.contains(&in_off) => *ignored,
            _ => errors,
        };
        let (off, place) = (in_off - lo, base.wrapping_add(in_off));
        let mut r = Reloc { ctx, f, si, rel, buf: &mut *buf, off, lo, place, errors };
        let sym = rel.r_sym(LE, false);
        if sym as usize >= obj.first_global {
            r.apply_one(false, &mut Vec::new());
            continue;
        }
        let slot = &mut cache[sym as usize % WAYS];
        let what = match *slot {
            Some((cached, what)) if cached == sym => what,
            _ => {
                let t = Target::Local(f, sym);
                let what = if r.target_dropped(t) {
                    LocalTarget::Dropped
                } else {
                    match ctx.merged_target(f, sym) {
                        Some((m, value)) => LocalTarget::Merged(m, value),
                        None => LocalTarget::Value(ctx.raw_value(t)),
                    }
                };
                *slot = Some((sym, what));
                what
            }
        };
        let ty = rel.r_type(LE, false);
        let t = Target::Local(f, sym);
        let a = rel.r_addend.get(LE) as i128;
        match what {
            LocalTarget::Dropped => r.write_tombstone(ty),
            LocalTarget::Merged(m, value) => match m.value(value, a as i64) {
                Ok(s) => r.write_nonalloc(ty, t, a, s),
                Err(outside) => r.error(outside.error(ctx, &reloc_name(ty), f, sym)),
            },
            LocalTarget::Value(v) => r.write_nonalloc(ty, t, a, v as i128),
        }
    }
}

struct Reloc<'r, 'a> {
    ctx: &'r Linked<'r, 'a>,
    f: FileId,
    si: u32,
    rel: &'r Rela,
    buf: &'r mut [u8],
    /// Where the relocated field is in `buf`.
    off: u64,
    /// The section offset `buf` starts at (`apply_range`; else 0): `off + lo` is the field's
    /// offset in the section.
    lo: u64,
    place: u64,
    errors: &'r RefCell<Vec<Error>>,
}

impl Reloc<'_, '_> {
    fn error(&self, e: impl Into<Error>) {
        let place = place_name(self.ctx, self.f, self.si, self.rel.r_offset.get(LE));
        self.errors.borrow_mut().push(e.into().context(place));
    }

    fn target(&self) -> Target {
        self.ctx.target(self.f, self.rel.r_sym(LE, false))
    }

    /// `--branch-to-branch` (lld 21): a `jmp`, `call` or conditional jump whose target is itself a
    /// `jmp rel32` to a symbol that binds here goes straight to that jump's target, followed
    /// through a few such jumps. Only what the input says is followed: the target's own bytes and
    /// relocation (`R_X86_64_PC32`/`PLT32`, addend -4, at the jump's field), in a live section.
    fn final_branch_target(&self, mut t: Target, mut a: i128) -> (Target, i128) {
        let ctx = self.ctx;
        let off = self.off as usize;
        let branch = match (off.checked_sub(2).map(|i| self.buf[i]), off.checked_sub(1).map(|i| self.buf[i])) {
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

    /// Symbols in sections that are not in the output (a dropped COMDAT copy): references from
    /// debug info get a tombstone instead of a bogus address.
    fn target_dropped(&self, t: Target) -> bool {
        match t {
            Target::Local(f, s) => {
                let obj = &self.ctx.objects[f];
                match obj.sym_shndx(s as usize) {
                    Some(sec) => !obj.sections[sec as usize].live && obj.sections[sec as usize].folded_into.is_none(),
                    None => false,
                }
            }
            Target::Global(_) => false,
        }
    }

    fn write(&mut self, width: usize, value: u64) {
        let off = self.off as usize;
        match off.checked_add(width).and_then(|end| self.buf.get_mut(off..end)) {
            Some(dst) => dst.copy_from_slice(&value.to_le_bytes()[..width]),
            None => self.error(format!(
                "relocation at offset {:#x} is past the end of the section",
                self.off.wrapping_add(self.lo)
            )),
        }
    }

    fn write_checked(&mut self, ty: u32, width: usize, value: i128, signed: bool) {
        // The psABI computes in 64-bit two's complement: an address below the image (a script's
        // `vvar_page = . - 4 * 4096`) is a negative number, not a huge unsigned one. The field
        // then holds it if it fits as the field's kind of number.
        let value = if signed { value as i64 as i128 } else { value as u64 as i128 };
        let (lo, hi) = field_range(width, signed);
        if value < lo || value > hi {
            let t = self.target();
            self.error(format!(
                "relocation {} against {} out of range: {value} is not in [{lo}, {hi}]",
                reloc_name(ty),
                self.ctx.name_of(t)
            ));
            return;
        }
        self.write(width, value as u64);
    }

    /// Applies one relocation; returns true when the next one belongs to a rewritten TLS
    /// sequence (the call to `__tls_get_addr`) and must be skipped.
    fn apply_one(&mut self, alloc: bool, dynrels: &mut Vec<DynRel>) -> bool {
        let ctx = self.ctx;
        let ty = self.rel.r_type(LE, false);
        let (t, a) = (self.target(), self.rel.r_addend.get(LE) as i128);
        let (t, a) = match ty {
            R_X86_64_PC32 | R_X86_64_PLT32 if alloc && ctx.config.branch_to_branch() => self.final_branch_target(t, a),
            _ => (t, a),
        };
        let p = self.place as i128;
        if let Target::Global(id) = t {
            // Undefined in a shared library, it is the loader's to find (GNU ld and lld link it).
            if Some(id) == ctx.tls_get_addr && ctx.is_undefined(t) && !ctx.is_preemptible(t) {
                self.error(
                    "undefined symbol: __tls_get_addr (called outside a general- or local-dynamic TLS sequence)",
                );
                return false;
            }
        }
        if !alloc {
            return self.apply_nonalloc(ty, t, a);
        }
        let Some(s) = self.merged_or(t, ty, a, |t| ctx.value(t)) else { return false };
        let got = |kind| ctx.got_entry_addr(t, kind).unwrap_or(0) as i128;
        let gotplt = ctx.gotplt_addr() as i128;
        let exe = ctx.kind.is_executable();
        // None at once unless `ty` is a relaxable GOT load.
        let relax = self.relaxation(ty, t);
        match ty {
            R_X86_64_NONE => {}
            R_X86_64_64 => {
                let sec = &ctx.objects[self.f].sections[self.si as usize];
                let how = abs64(ctx, t, sec.flags & SHF_WRITE as u64 != 0);
                if how == Abs64::Symbolic {
                    let Target::Global(id) = t else { unreachable!("only globals are preemptible") };
                    dynrels.push(DynRel { offset: self.place, ty: R_X86_64_64, sym: Some(id), addend: a as i64 });
                } else {
                    self.write(8, (s + a) as u64);
                    if how == Abs64::Relative && !ctx.packs_relative(sec, self.off.wrapping_add(self.lo)) {
                        dynrels.push(DynRel {
                            offset: self.place,
                            ty: R_X86_64_RELATIVE,
                            sym: None,
                            addend: (s + a) as i64,
                        });
                    }
                }
            }
            R_X86_64_PC32 | R_X86_64_PLT32 => self.write_checked(ty, 4, s + a - p, true),
            R_X86_64_PC64 => self.write(8, (s + a - p) as u64),
            R_X86_64_32 => self.write_checked(ty, 4, s + a, false),
            R_X86_64_32S => self.write_checked(ty, 4, s + a, true),
            R_X86_64_16 => self.write_checked(ty, 2, s + a, false),
            R_X86_64_PC16 => self.write_checked(ty, 2, s + a - p, true),
            R_X86_64_8 => self.write_checked(ty, 1, s + a, false),
            R_X86_64_PC8 => self.write_checked(ty, 1, s + a - p, true),
            R_X86_64_GOTPCRELX | R_X86_64_REX_GOTPCRELX if relax.is_some() => {
                rewrite_got_access(self.buf, self.off as usize, relax.unwrap());
                self.write_checked(ty, 4, s + a - p, true)
            }
            R_X86_64_GOTPCREL | R_X86_64_GOTPCRELX | R_X86_64_REX_GOTPCRELX => {
                self.write_checked(ty, 4, got(GotKind::Addr) + a - p, true)
            }
            R_X86_64_GOTPCREL64 => self.write(8, (got(GotKind::Addr) + a - p) as u64),
            R_X86_64_GOT32 => self.write_checked(ty, 4, got(GotKind::Addr) - gotplt + a, true),
            R_X86_64_GOT64 | R_X86_64_GOTPLT64 => self.write(8, (got(GotKind::Addr) - gotplt + a) as u64),
            R_X86_64_GOTPC32 => self.write_checked(ty, 4, gotplt + a - p, true),
            R_X86_64_GOTPC64 => self.write(8, (gotplt + a - p) as u64),
            R_X86_64_GOTOFF64 | R_X86_64_PLTOFF64 => self.write(8, (s + a - gotplt) as u64),
            R_X86_64_SIZE32 => self.write_checked(ty, 4, self.sym_size(t) + a, false),
            R_X86_64_SIZE64 => self.write(8, (self.sym_size(t) + a) as u64),
            R_X86_64_TPOFF32 => self.write_checked(ty, 4, super::tpoff::<X86_64>(ctx, t) as i128 + a, true),
            R_X86_64_TPOFF64 => self.write(8, (super::tpoff::<X86_64>(ctx, t) as i128 + a) as u64),
            R_X86_64_GOTTPOFF => self.write_checked(ty, 4, got(GotKind::TpOff) + a - p, true),
            // In an executable local-dynamic is relaxed: %rax holds the thread pointer, so the
            // offsets added to it are thread-pointer offsets. A shared object keeps the offsets
            // within its TLS block.
            R_X86_64_DTPOFF32 if exe => self.write_checked(ty, 4, super::tpoff::<X86_64>(ctx, t) as i128 + a, true),
            R_X86_64_DTPOFF64 if exe => self.write(8, (super::tpoff::<X86_64>(ctx, t) as i128 + a) as u64),
            R_X86_64_DTPOFF32 => self.write_checked(ty, 4, ctx.dtpoff(t) as i128 + a, true),
            R_X86_64_DTPOFF64 => self.write(8, (ctx.dtpoff(t) as i128 + a) as u64),
            R_X86_64_TLSGD if exe && ctx.is_preemptible(t) => {
                // general-dynamic → initial-exec: the GOT entry holds the offset (TPOFF64).
                let got_rel = (got(GotKind::TpOff) - p) as i64;
                let r = relax_gd_to_ie(self.buf, self.off as usize, got_rel);
                return self.relaxed(r);
            }
            R_X86_64_TLSGD if exe => {
                let tpoff = super::tpoff::<X86_64>(ctx, t) + self.rel.r_addend.get(LE) + 4;
                let r = relax_gd_to_le(self.buf, self.off as usize, tpoff);
                return self.relaxed(r);
            }
            R_X86_64_TLSLD if exe => {
                let r = relax_ld_to_le(self.buf, self.off as usize);
                return self.relaxed(r);
            }
            R_X86_64_TLSGD => self.write_checked(ty, 4, got(GotKind::TlsGd) + a - p, true),
            R_X86_64_TLSLD => self.write_checked(ty, 4, got(GotKind::TlsLd) + a - p, true),
            // A shared object keeps the sequence: the field reaches the descriptor, and the
            // `call *(%rax)` calls its resolver.
            R_X86_64_GOTPC32_TLSDESC if keeps_tlsdesc(ctx, t) => {
                self.write_checked(ty, 4, got(GotKind::TlsDesc) + a - p, true)
            }
            R_X86_64_TLSDESC_CALL if keeps_tlsdesc(ctx, t) => {}
            R_X86_64_GOTPC32_TLSDESC if ctx.is_preemptible(t) => {
                let got_ie = got(GotKind::TpOff) + a - p;
                let r = relax_tlsdesc_to_ie(self.buf, self.off as usize, got_ie as i64);
                self.relaxed(r);
            }
            R_X86_64_GOTPC32_TLSDESC => {
                let tpoff = super::tpoff::<X86_64>(ctx, t) + self.rel.r_addend.get(LE) + 4;
                let r = relax_tlsdesc_to_le(self.buf, self.off as usize, tpoff);
                self.relaxed(r);
            }
            R_X86_64_TLSDESC_CALL => self.relax_tlsdesc_call(),
            _ => self.error(format!("unsupported relocation {} against '{}'", reloc_name(ty), ctx.name_of(t))),
        }
        false
    }

    fn relaxation(&self, ty: u32, t: Target) -> Option<GotRelax> {
        let data = self.ctx.objects[self.f].sections[self.si as usize].data;
        got_relaxation(self.ctx, self.ctx.plans.got.relax_got_loads, data, self.rel.r_offset.get(LE), ty, t)
    }

    fn sym_size(&self, t: Target) -> i128 {
        self.ctx.definition(t).map_or(0, |(_, s)| s.st_size.get(LE) as i128)
    }

    /// Debug and other non-allocated sections: absolute values, no dynamic relocations.
    fn apply_nonalloc(&mut self, ty: u32, t: Target, a: i128) -> bool {
        let ctx = self.ctx;
        if self.target_dropped(t) {
            self.write_tombstone(ty);
            return false;
        }
        let Some(s) = self.merged_or(t, ty, a, |t| ctx.raw_value(t)) else { return false };
        self.write_nonalloc(ty, t, a, s);
        false
    }

    /// The value to add `a` to: through the merged section when `t` is a merged section's symbol,
    /// else `value(t)`. None (the error reported) when the addend points outside that section.
    fn merged_or(&self, t: Target, ty: u32, a: i128, value: impl Fn(Target) -> u64) -> Option<i128> {
        match self.ctx.merged_section_value(t, a as i64) {
            None => Some(value(t) as i128),
            Some(Ok(s)) => Some(s),
            Some(Err(outside)) => {
                let Target::Local(f, sym) = t else { unreachable!("merged targets are section symbols") };
                self.error(outside.error(self.ctx, &reloc_name(ty), f, sym));
                None
            }
        }
    }

    /// A relocation in a non-allocated section against a symbol in a dropped section.
    fn write_tombstone(&mut self, ty: u32) {
        // lld's convention: .debug_loc/.debug_ranges use 1 (0 would end the list), others 0.
        let name = self.ctx.objects[self.f].sections[self.si as usize].name;
        let tomb = if name == b".debug_loc" || name == b".debug_ranges" { 1 } else { 0 };
        match ty {
            R_X86_64_64 | R_X86_64_DTPOFF64 => self.write(8, tomb),
            R_X86_64_32 | R_X86_64_32S | R_X86_64_DTPOFF32 => self.write(4, tomb),
            _ => {}
        }
    }

    /// A relocation in a non-allocated section, given its symbol's value `s`.
    fn write_nonalloc(&mut self, ty: u32, t: Target, a: i128, s: i128) {
        let ctx = self.ctx;
        match ty {
            R_X86_64_NONE => {}
            R_X86_64_64 => self.write(8, (s + a) as u64),
            R_X86_64_32 => self.write_checked(ty, 4, s + a, false),
            R_X86_64_32S => self.write_checked(ty, 4, s + a, true),
            R_X86_64_DTPOFF32 => self.write_checked(ty, 4, s - ctx.layout.tls.start as i128 + a, true),
            R_X86_64_DTPOFF64 => self.write(8, (s - ctx.layout.tls.start as i128 + a) as u64),
            R_X86_64_PC32 => self.write_checked(ty, 4, s + a - self.place as i128, true),
            R_X86_64_PC64 => self.write(8, (s + a - self.place as i128) as u64),
            R_X86_64_SIZE32 => self.write_checked(ty, 4, self.sym_size(t) + a, false),
            R_X86_64_SIZE64 => self.write(8, (self.sym_size(t) + a) as u64),
            _ => self.error(format!("unsupported relocation {} in a non-allocated section", reloc_name(ty))),
        }
    }

    /// Reports a failed rewrite; true (skip the `__tls_get_addr` call's relocation) on success.
    fn relaxed(&self, r: Result<()>) -> bool {
        match r {
            Ok(()) => true,
            Err(e) => {
                self.error(e);
                false
            }
        }
    }

    /// `call *x@tlsdesc(%rax)` becomes a two-byte nop.
    fn relax_tlsdesc_call(&mut self) {
        let start = self.off as usize;
        match start.checked_add(2).and_then(|end| self.buf.get_mut(start..end)) {
            Some(b) if b == [0xff, 0x10] => b.copy_from_slice(&[0x66, 0x90]),
            _ => self.error("unrecognised TLS descriptor call".to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(field_range(4, true), (i32::MIN as i128, i32::MAX as i128));
        assert_eq!(field_range(4, false), (0, u32::MAX as i128));
        assert_eq!(field_range(1, true), (-128, 127));
        assert_eq!(field_range(2, false), (0, 65535));
    }

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
