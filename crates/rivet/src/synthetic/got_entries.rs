//! A GOT entry's words and the dynamic relocations that complete them.
use super::tables::{GotKey, GotKind};
use crate::arch::Arch;
use crate::ctx::{Ctx, Target};
use crate::ids::SymbolId;
use crate::linked::Linked;

/// The words of one GOT entry and the dynamic relocations that complete them. Used both to count
/// `.rela.dyn` before layout (no `linked`: values are left 0) and to write it, so the two
/// cannot disagree.
/// A GOT entry's dynamic relocation: (byte offset in the entry, type, the symbol it names if any,
/// addend).
pub type GotReloc = (u64, u32, Option<SymbolId>, i64);

pub fn got_entry<A: Arch>(ctx: &Ctx, linked: Option<&Linked>, key: GotKey) -> ([u64; 2], Vec<GotReloc>) {
    let shared_output = ctx.kind == crate::ctx::OutputKind::Shared;
    let (t, kind) = match key {
        GotKey::Symbol(t, kind) => (t, kind),
        // This module's id and 0: every local-dynamic sequence shares the entry.
        GotKey::TlsModule if shared_output => return ([0, 0], vec![(0, A::R_DTPMOD64, None, 0)]),
        // An executable is module 1.
        GotKey::TlsModule => return ([1, 0], vec![]),
    };
    let value = |t| linked.map_or(0, |l| l.value(t));
    let tpoff = |t| linked.map_or(0, |l| crate::arch::tpoff::<A>(l, t));
    let dtpoff = |t| linked.map_or(0, |l| l.dtpoff(t));
    let sym = |t: Target| match t {
        Target::Global(id) => Some(id),
        Target::Local(..) => None,
    };
    match kind {
        GotKind::Addr => {
            if ctx.is_preemptible(t) {
                ([0, 0], vec![(0, A::R_GLOB_DAT, sym(t), 0)])
            } else if ctx.is_pic() && !ctx.is_absolute(t) {
                let v = value(t);
                ([v, 0], vec![(0, A::R_RELATIVE, None, v as i64)])
            } else {
                ([value(t), 0], vec![])
            }
        }
        GotKind::TpOff => {
            if ctx.is_preemptible(t) {
                ([0, 0], vec![(0, A::R_TPOFF64, sym(t), 0)])
            } else if shared_output {
                // The module's TLS offset is only known at load time.
                ([0, 0], vec![(0, A::R_TPOFF64, None, dtpoff(t))])
            } else {
                ([tpoff(t) as u64, 0], vec![])
            }
        }
        GotKind::TlsGd => {
            if ctx.is_preemptible(t) {
                ([0, 0], vec![(0, A::R_DTPMOD64, sym(t), 0), (8, A::R_DTPOFF64, sym(t), 0)])
            } else if shared_output {
                ([0, dtpoff(t) as u64], vec![(0, A::R_DTPMOD64, None, 0)])
            } else {
                // An executable is module 1.
                ([1, dtpoff(t) as u64], vec![])
            }
        }
        GotKind::TlsLd => unreachable!("GotKey::new makes every local-dynamic entry TlsModule"),
        // As lld does: in `.got` with the relocation in `.rela.dyn` (resolved at load time, so
        // no DT_TLSDESC_PLT/DT_TLSDESC_GOT for lazy descriptors). A variable of this module is
        // named by its offset in the module's TLS block, as the addend of symbol 0.
        GotKind::TlsDesc => {
            if ctx.is_preemptible(t) {
                ([0, 0], vec![(0, A::R_TLSDESC, sym(t), 0)])
            } else {
                ([0, 0], vec![(0, A::R_TLSDESC, None, dtpoff(t))])
            }
        }
    }
}
