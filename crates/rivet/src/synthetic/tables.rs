//! The GOT and PLT tables the relocation scan fills and layout and the writers read: which entries
//! exist, in which order, and where they are once sections have addresses. Plain data over
//! `Target`s; the passes that fill and write them are in `synthetic` and `arch`.
use crate::ids::{IdVec, OutputSectionId, SectionRef, SymbolId, Target};

/// What a `.got` entry is for: a symbol's entry of some kind, or the one local-dynamic TLS entry
/// of the module (module id and 0), which every local-dynamic sequence shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GotKey {
    Symbol(Target, GotKind),
    TlsModule,
}

impl GotKey {
    pub fn new(t: Target, kind: GotKind) -> GotKey {
        match kind {
            GotKind::TlsLd => GotKey::TlsModule,
            _ => GotKey::Symbol(t, kind),
        }
    }
    pub fn kind(self) -> GotKind {
        match self {
            GotKey::Symbol(_, kind) => kind,
            GotKey::TlsModule => GotKind::TlsLd,
        }
    }
}

use rustc_hash::FxHashMap as HashMap;

/// What a `.got` entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GotKind {
    /// The symbol's address.
    Addr,
    /// The symbol's offset from the thread pointer (initial-exec TLS).
    TpOff,
    /// Module id and offset (general-dynamic TLS): two words.
    TlsGd,
    /// This module's id and 0 (local-dynamic TLS): two words, one per output.
    TlsLd,
    /// A TLS descriptor (`-mtls-dialect=gnu2` in a shared object): two words, the resolver
    /// function and its argument, both filled by the dynamic loader's TLSDESC relocation (`Arch::R_TLSDESC`).
    TlsDesc,
}

impl GotKind {
    pub fn words(self) -> u64 {
        match self {
            GotKind::TlsGd | GotKind::TlsLd | GotKind::TlsDesc => 2,
            _ => 1,
        }
    }
}

/// An input section's dynamic relocation as the scan sees it: the section, the offset in it, and
/// the symbol and addend of a symbolic one (None: RELATIVE).
pub type InputDynRel = (SectionRef, u64, Option<(SymbolId, i64)>);

/// A relocation for the dynamic loader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DynRel {
    pub offset: u64,
    pub ty: u32,
    /// The global symbol it names (None: no symbol).
    pub sym: Option<SymbolId>,
    pub addend: i64,
}

/// The PLT's protection on AArch64 (lld's `AArch64BtiPac` PLT), none on other machines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PltGuard {
    /// The output is marked BTI: the lazy-binding header, which the entries reach by `br x17`,
    /// starts with `bti c`, and so does every entry an indirect branch may reach (a canonical
    /// entry, a non-preemptible IFUNC's).
    pub bti: bool,
    /// `-z pac-plt`: each entry authenticates the address it loaded from `.got.plt`, signed by
    /// the dynamic loader with the slot's address as modifier (`autia1716` before `br x17`).
    pub pac: bool,
}

#[derive(Default)]
pub struct Tables {
    /// `.got` entries in order, with their first word's index.
    pub got: Vec<(GotKey, u32)>,
    pub got_words: u32,
    index: HashMap<GotKey, u32>,
    /// Symbols with a PLT stub and a `.got.plt` slot, in order.
    pub plt: Vec<Target>,
    /// PLT entry of each global symbol by id; of a local (a local IFUNC) by target.
    plt_of_global: IdVec<SymbolId, Option<u32>>,
    plt_of_local: HashMap<Target, u32>,
    /// Imported functions whose PLT stub is their address in this executable (the address was taken
    /// with a non-GOT relocation, so every module must agree on it).
    pub canonical: rustc_hash::FxHashSet<SymbolId>,
    /// Imported data objects copied into this executable's .bss (COPY relocations, `Arch::R_COPY`).
    pub copies: Vec<SymbolId>,
    /// Where each copy is: (output section, offset in it). Copies of read-only variables go to
    /// `.copyrel.rel.ro` (made read-only after relocation, as lld's `.bss.rel.ro`), the others
    /// to `.copyrel` (`.bss` under a SECTIONS script).
    pub copy_offset: HashMap<SymbolId, (OutputSectionId, u64)>,
    /// Entries of `.rela.dyn` (sections, GOT, copies), and how many of them are RELATIVE.
    pub dynrel_count: u64,
    pub relative_count: u64,
    /// RELATIVE relocations packed into `.relr.dyn` (`-z pack-relative-relocs`): input section
    /// and offset in it (the GOT's are found from `got`).
    pub relr: Vec<(SectionRef, u64)>,
    /// `--pack-dyn-relocs=android`: the input sections' dynamic relocations (section, offset in
    /// it, and the symbol and addend of a symbolic one; None: RELATIVE), which the packed
    /// `.rela.dyn` is planned from before layout. Empty in every other format.
    pub android: Vec<InputDynRel>,
    /// How many of the GOT's RELATIVE relocations are packed into `.relr.dyn`.
    pub relr_got: u64,
    /// GOTPCRELX loads may skip the GOT: every address of the output is within reach of a 32-bit
    /// PC-relative field (and `--no-relax` was not given). Decided before the scan, which sizes
    /// the GOT by it; the write relaxes by it.
    pub relax_got_loads: bool,
    /// `_GLOBAL_OFFSET_TABLE_` or GOT-relative relocations need `.got.plt` even without a PLT.
    pub need_gotplt: bool,
    /// A dynamic output's PLT starts with the lazy-binding header.
    pub plt_header: u64,
    /// The size of a PLT entry (`Arch::plt_entry_size`).
    pub plt_entry: u64,
    /// The words `.got.plt` reserves for the dynamic loader before the slots
    /// (`Arch::GOTPLT_RESERVED`).
    pub gotplt_reserved: u64,
    /// `-z mark-plt`'s dynamic tags: the PLT's address, size and entry size
    /// (`Arch::MARK_PLT_TAGS`).
    pub mark_plt_tags: [u32; 3],
    /// `_GLOBAL_OFFSET_TABLE_` is the start of `.got.plt` (x86-64), not of `.got` (AArch64)
    /// (`Arch::GOT_BASE_IN_GOTPLT`).
    pub got_base_in_gotplt: bool,
    /// The `st_other` flags `.dynsym` keeps of its symbols (`Arch::STO_FLAGS`).
    pub sto_flags: u8,
    /// A PLT entry's symbol follows a variant procedure-call standard (AArch64's
    /// STO_AARCH64_VARIANT_PCS: its PLT entry must not clobber more than the call does), so the
    /// output gets DT_AARCH64_VARIANT_PCS and the loader binds those entries at start-up.
    pub variant_pcs: bool,
    /// That tag (`Arch::DT_VARIANT_PCS`).
    pub dt_variant_pcs: u32,
    /// An IBT-enabled PLT (`-z ibtplt`, or the output is marked IBT): every entry starts with
    /// `endbr64`. In dynamic outputs `.plt` holds the header and the lazy stubs (`endbr64; push;
    /// jmp header`) and `.plt.sec` the entries symbols point at (`endbr64; jmp *slot`), as lld lays
    /// them out; in static ones `.plt` holds only the latter.
    pub ibt: bool,
    /// AArch64's guarded PLT (`Arch::plt_guard`): `bti c` landing pads, `autia1716` before each
    /// entry's branch; either makes the entries `Arch::plt_entry_size`.
    pub guard: PltGuard,
    /// The dynamic tags that say so (`Arch::GUARDED_PLT_TAGS`): DT_AARCH64_BTI_PLT and
    /// DT_AARCH64_PAC_PLT.
    pub guarded_plt_tags: [u32; 2],
    /// The first text relocation (a dynamic relocation of a read-only section: its file, section
    /// and target), if any: the output gets DT_TEXTREL and DF_TEXTREL.
    pub textrel: Option<(crate::ids::FileId, u32, crate::ctx::Target)>,
}

impl Tables {
    /// Adds a `.got` entry unless the target has one of that kind already.
    pub fn add_got(&mut self, t: Target, kind: GotKind) {
        let key = GotKey::new(t, kind);
        if !self.index.contains_key(&key) {
            self.index.insert(key, self.got.len() as u32);
            self.got.push((key, self.got_words));
            self.got_words += kind.words() as u32;
        }
    }

    pub fn add_plt(&mut self, t: Target) {
        if self.plt_index(t).is_some() {
            return;
        }
        let index = self.plt.len() as u32;
        match t {
            Target::Global(id) => {
                if id.index() >= self.plt_of_global.len() {
                    self.plt_of_global.resize(id.index() + 1, None);
                }
                self.plt_of_global[id] = Some(index);
            }
            Target::Local(..) => {
                self.plt_of_local.insert(t, index);
            }
        }
        self.plt.push(t);
    }

    /// Looked up for every relocation: a vector for globals, not a hash map.
    pub fn plt_index(&self, t: Target) -> Option<u32> {
        match t {
            Target::Global(id) => self.plt_of_global.get(id).copied().flatten(),
            Target::Local(..) => self.plt_of_local.get(&t).copied(),
        }
    }

    /// The index of the first word of `t`'s `.got` entry of `kind`.
    pub fn got_word(&self, t: Target, kind: GotKind) -> Option<u32> {
        let i = *self.index.get(&GotKey::new(t, kind))?;
        Some(self.got[i as usize].1)
    }
}
