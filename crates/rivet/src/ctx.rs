//! The link's shared state after resolution: the objects, the symbol table, the output sections and
//! the tables later stages fill (GOT, PLT, dynamic symbols). Stages borrow it; only the pipeline in
//! `link.rs` owns it. Also the answers every stage asks of a symbol that need no address: what it
//! is, which section it lives in. Addresses are layout's (`linked.rs`).
use crate::args::{Config, Symbolic};
use crate::diag::Diag;
use crate::input::object::{ObjectFile, Sym};
use crate::resolve::{Def, Symbol};
use crate::sections::eh_frame::EhSection;
use crate::sections::merged::Merges;
use crate::sections::output::OutputSection;
use object::elf;
use object::LittleEndian as LE;
// FxHash: keys are symbol names and small indices from the link's own inputs; SipHash's
// flooding resistance buys nothing here and cost ~8% of a warm rust-debug link in perf.
use rustc_hash::FxHashMap as HashMap;

pub use crate::ids::Target;
use crate::ids::{FileId, IdVec, MergeId, OutputSectionId, SectionRef, SharedId, SymbolId};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// `-static` without `-pie`: ET_EXEC at 0x400000, no dynamic section.
    Static,
    /// `-static -pie`: ET_DYN at 0, relocates itself with RELATIVE relocations.
    StaticPie,
    /// A dynamically linked executable at 0x400000 (`-no-pie`).
    Exec,
    /// A dynamically linked position-independent executable (gcc's default).
    Pie,
    /// A shared library (`-shared`).
    Shared,
    /// An object for a later link (`-r`): ET_REL, no addresses, relocations kept.
    Relocatable,
}

impl OutputKind {
    /// What `-shared`, `-static` and `-pie` ask for.
    pub fn from_config(config: &Config) -> crate::diag::Result<OutputKind> {
        if config.relocatable {
            // lld's words; GNU ld refuses the same pairs.
            for (given, what) in [
                (config.shared, "-shared"),
                (config.pie, "-pie"),
                (config.icf != crate::args::Icf::None, "--icf"),
                (config.export_dynamic, "--export-dynamic"),
                (config.gdb_index, "--gdb-index"),
            ] {
                crate::ensure!(!given, "-r and {what} may not be used together");
            }
            return Ok(OutputKind::Relocatable);
        }
        Ok(match (config.shared, config.static_link, config.pie) {
            (true, true, _) => return Err(crate::fatal!("-shared and -static cannot be combined")),
            (true, false, _) => OutputKind::Shared,
            (false, true, true) => OutputKind::StaticPie,
            (false, true, false) => OutputKind::Static,
            (false, false, true) => OutputKind::Pie,
            (false, false, false) => OutputKind::Exec,
        })
    }
    /// The kind once the inputs are known: a fixed-address executable that links no shared
    /// library and exports nothing needs no dynamic section, interpreter or dynamic symbols (GNU ld
    /// and lld make it static); a shared library cannot be part of a static output (GNU ld's
    /// words for each).
    pub fn for_inputs(
        self,
        config: &Config,
        loaded: &[crate::input::Loaded],
    ) -> std::result::Result<OutputKind, Vec<String>> {
        let shared = || loaded.iter().filter(|l| l.kind == crate::input::Kind::Shared);
        let kind = match self {
            // An interpreter named on the command line keeps it dynamic: lld and mold write the
            // `.interp` asked for (GNU ld drops it); with a dynamic section, unlike theirs, the
            // loader can run it.
            OutputKind::Exec
                if shared().next().is_none()
                    && !config.export_dynamic
                    && !config.has_dynamic_list()
                    && config.dynamic_linker.is_none() =>
            {
                OutputKind::Static
            }
            kind => kind,
        };
        let refused: Vec<String> = match kind.is_dynamic() {
            true => Vec::new(),
            false => shared().map(|l| format!("{}: attempted static link of a dynamic object", l.name)).collect(),
        };
        if refused.is_empty() {
            Ok(kind)
        } else {
            Err(refused)
        }
    }

    /// Has a dynamic section, an interpreter (executables) and imports from shared libraries.
    pub fn is_dynamic(self) -> bool {
        matches!(self, OutputKind::Exec | OutputKind::Pie | OutputKind::Shared)
    }
    /// Loads at an address chosen at run time, so absolute addresses need RELATIVE relocations.
    pub fn is_pic(self) -> bool {
        matches!(self, OutputKind::StaticPie | OutputKind::Pie | OutputKind::Shared)
    }
    pub fn is_executable(self) -> bool {
        !matches!(self, OutputKind::Shared | OutputKind::Relocatable)
    }
}

/// A `--defsym` symbol whose value is another symbol's plus an addend, fixed once symbol values are
/// known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DefsymOffset {
    pub symbol: SymbolId,
    /// The symbol whose value SYM takes when the linker defines it (SYM is then synthetic too);
    /// None when SYM already carries OTHER's definition.
    pub linker_defined: Option<SymbolId>,
    pub addend: i64,
}

/// The link's state after resolution: the objects (their sections' liveness and output places
/// still to be decided by `--gc-sections`, ICF and the output-section pass), the symbol table and
/// what every stage asks of a symbol that needs no address. The passes up to the output sections
/// take it; `Ctx` wraps it once those exist.
pub struct Resolved<'a> {
    pub config: &'a Config,
    pub diag: &'a Diag,
    pub kind: OutputKind,
    pub objects: IdVec<FileId, ObjectFile<'a>>,
    pub shared: IdVec<SharedId, crate::resolve::SharedInput<'a>>,
    pub symbols: IdVec<SymbolId, Symbol<'a>>,
    pub by_name: crate::resolve::SymbolIndex,
    /// Objects in command-line order (the order of output section contents).
    pub file_order: Vec<FileId>,
    /// Every global symbol's type (STT_*) by id, computed with the `Resolved` (no pass after
    /// resolution changes a definition's type): the scan and the write ask for it per relocation,
    /// too often to find the defining symbol each time. Symbols added later (shared-library
    /// aliases) are looked up as before.
    pub global_types: IdVec<SymbolId, u8>,
    /// `__tls_get_addr`'s id, if an input names it: relocations against it are checked
    /// (`Arch::apply`), and comparing ids spares every other relocation a read of its symbol.
    pub tls_get_addr: Option<SymbolId>,
    /// `--defsym=SYM=OTHER+N` where OTHER is an object's symbol (SYM's definition is OTHER's) or one
    /// the linker defines (`_GLOBAL_OFFSET_TABLE_`, `_end`…): SYM's value is OTHER's plus N.
    pub defsym_offsets: Vec<DefsymOffset>,
    /// The linker scripts read (`-T`, or given as inputs), in command-line order.
    pub script_files: &'a [crate::input::script::ScriptFile],
    /// The symbols they assign: `Def::Script(i)` is entry i.
    pub script_syms: Vec<crate::input::script::ScriptSym>,
    /// The output's stack is executable (PT_GNU_STACK RWE): `-z execstack`, or
    /// `-z execstack-if-needed` with an object that asks for it.
    pub exec_stack: bool,
    /// A script's output section whose input patterns take `.note.gnu.build-id` (as the kernel's
    /// `.notes : { *(.note.*) }` does): the build-id note is written inside it, where that pattern
    /// stands, instead of as a section of its own (`script_layout::build_id_home`).
    pub build_id_home: Option<OutputSectionId>,
}

/// The state once the output sections exist, made of the values the passes between resolution
/// and the relocation scan return: the output sections (`script_layout::create_output_sections`),
/// the split `.eh_frame`s (`frames::split_eh_frames`), the merged sections (`merge::merge`) and
/// the symbol versions (`symbol_options::apply_version_scripts`). It derefs to the `Resolved`
/// state. Later passes append the sections they make to `sections` (copies of shared-library
/// variables, the linker's own sections) and return their ids.
pub struct Ctx<'a> {
    pub resolved: Resolved<'a>,
    pub sections: IdVec<OutputSectionId, OutputSection>,
    /// Split `.eh_frame` input sections.
    pub eh: EhFrames,
    /// Merged `SHF_MERGE` input sections.
    pub merges: Merges,
    /// The output's own symbol versions.
    pub versions: crate::synthetic::dynamic_tables::Versions,
}

/// The split `.eh_frame` input sections, by section.
pub type EhFrames = HashMap<SectionRef, EhSection>;

impl<'a> std::ops::Deref for Ctx<'a> {
    type Target = Resolved<'a>;
    fn deref(&self) -> &Resolved<'a> {
        &self.resolved
    }
}

impl<'a> std::ops::DerefMut for Ctx<'a> {
    fn deref_mut(&mut self) -> &mut Resolved<'a> {
        &mut self.resolved
    }
}

impl<'a> Resolved<'a> {
    /// The state right after resolution (and the command line's and scripts' symbol options).
    pub fn new(
        config: &'a Config,
        diag: &'a Diag,
        kind: OutputKind,
        res: crate::resolve::Resolution<'a>,
        defsym_offsets: Vec<DefsymOffset>,
        script_files: &'a [crate::input::script::ScriptFile],
        script_syms: Vec<crate::input::script::ScriptSym>,
    ) -> Resolved<'a> {
        let mut file_order: Vec<FileId> = res.objects.ids().collect();
        file_order.sort_by_key(|&f| res.objects[f].order);
        let tls_get_addr = res.by_name.get(&res.symbols, b"__tls_get_addr");
        let mut r = Resolved {
            config,
            diag,
            kind,
            objects: res.objects,
            shared: res.shared,
            symbols: res.symbols,
            by_name: res.by_name,
            file_order,
            global_types: IdVec::new(),
            tls_get_addr,
            defsym_offsets,
            script_files,
            script_syms,
            exec_stack: config.execstack,
            build_id_home: None,
        };
        r.exec_stack |= config.execstack_if_needed && r.objects.iter().any(|o| o.requests_exec_stack());
        r.global_types = r.compute_global_types();
        r
    }

    pub fn target(&self, file: FileId, sym: u32) -> Target {
        let obj = &self.objects[file];
        let sym = sym as usize;
        if sym >= obj.first_global {
            Target::Global(obj.global_ids[sym - obj.first_global])
        } else {
            Target::Local(file, sym as u32)
        }
    }

    /// The ELF symbol that defines a target, with its file.
    pub fn definition(&self, t: Target) -> Option<(FileId, &Sym)> {
        match t {
            Target::Local(f, s) => Some((f, &self.objects[f].syms[s as usize])),
            Target::Global(id) => match self.symbols[id].def {
                Def::Defined { file, sym } | Def::Common { file, sym } => {
                    Some((file, &self.objects[file].syms[sym as usize]))
                }
                _ => None,
            },
        }
    }

    /// The dynamic symbol of a shared library that a target resolves to.
    pub fn shared_def(&self, t: Target) -> Option<&crate::input::shared::DynSym<'a>> {
        match t {
            Target::Global(id) => match self.symbols[id].def {
                Def::Shared { file, sym } => Some(&self.shared[file].file.defined[sym as usize]),
                _ => None,
            },
            Target::Local(..) => None,
        }
    }

    pub fn sym_type(&self, t: Target) -> u8 {
        if let Target::Global(id) = t {
            if let Some(&ty) = self.global_types.get(id) {
                return ty;
            }
        }
        self.find_sym_type(t)
    }

    /// `global_types`, in parallel.
    fn compute_global_types(&self) -> IdVec<SymbolId, u8> {
        use rayon::prelude::*;
        let types: Vec<u8> = (0..self.symbols.len())
            .into_par_iter()
            .with_min_len(4096)
            .map(|i| self.find_sym_type(Target::Global(SymbolId::new(i))))
            .collect();
        types.into()
    }

    fn find_sym_type(&self, t: Target) -> u8 {
        if let Some(d) = self.shared_def(t) {
            return d.sym_type;
        }
        self.definition(t).map_or(elf::STT_NOTYPE, |(_, s)| s.st_info & 0xf)
    }

    /// Defined by a shared library: the dynamic loader supplies the address.
    pub fn is_imported(&self, t: Target) -> bool {
        self.shared_def(t).is_some()
    }

    /// The address is only known at run time: imported symbols, and in a shared library its own
    /// default-visibility definitions (another module may interpose them) and undefined weak ones.
    pub fn is_preemptible(&self, t: Target) -> bool {
        let Target::Global(id) = t else { return false };
        let s = &self.symbols[id];
        match s.def {
            Def::Shared { .. } => true,
            // An undefined symbol of a shared library is looked up at load time; an undefined weak
            // one too unless `-z nodynamic-undefined-weak`, and in a dynamic executable only with
            // `-z dynamic-undefined-weak` (otherwise it is 0), as mold does.
            Def::Undefined | Def::Lazy { .. } if s.is_hidden() => false,
            Def::Undefined | Def::Lazy { .. } if !s.strong_ref => match self.kind {
                OutputKind::Shared => self.config.dynamic_undefined_weak != Some(false),
                OutputKind::Pie | OutputKind::Exec => self.config.dynamic_undefined_weak == Some(true),
                _ => false,
            },
            Def::Undefined | Def::Lazy { .. } => self.kind == OutputKind::Shared,
            // `__start_SEC`/`__stop_SEC` are symbols of their section, interposable when
            // `-z start-stop-visibility=default` leaves them so (lld).
            Def::Synthetic if !s.is_start_stop() => false,
            Def::Absolute(_) | Def::Script(_) => false,
            Def::Defined { .. } | Def::Common { .. } | Def::Synthetic => {
                self.kind == OutputKind::Shared
                    && s.visibility == elf::STV_DEFAULT
                    && (!self.config.has_dynamic_list() || s.dynamic_list)
                    && !self.binds_symbolically(t, s.weak)
            }
        }
    }

    /// A shared library's definition that `-Bsymbolic` and its variants bind inside the library.
    fn binds_symbolically(&self, t: Target, weak: bool) -> bool {
        let function = || matches!(self.sym_type(t), elf::STT_FUNC | elf::STT_GNU_IFUNC);
        match self.config.symbolic {
            Symbolic::None => false,
            Symbolic::All => true,
            Symbolic::Functions => function(),
            Symbolic::NonWeak => !weak,
            Symbolic::NonWeakFunctions => !weak && function(),
        }
    }

    pub fn is_ifunc(&self, t: Target) -> bool {
        self.sym_type(t) == elf::STT_GNU_IFUNC
    }

    /// Undefined (weak) globals resolve to 0 in an executable without shared libraries.
    pub fn is_undefined(&self, t: Target) -> bool {
        if self.is_imported(t) {
            return false;
        }
        match t {
            Target::Global(id) => matches!(self.symbols[id].def, Def::Undefined | Def::Lazy { .. }),
            Target::Local(f, s) => self.objects[f].syms[s as usize].st_shndx.get(LE) == elf::SHN_UNDEF,
        }
    }

    /// An absolute symbol's value does not move with the load address.
    pub fn is_absolute(&self, t: Target) -> bool {
        if self.is_undefined(t) {
            return true;
        }
        if self.is_imported(t) {
            return false;
        }
        if let Target::Global(id) = t {
            match self.symbols[id].def {
                Def::Absolute(_) => return true,
                Def::Script(i) => return self.script_syms[i as usize].absolute,
                _ => {}
            }
        }
        match self.definition(t) {
            Some((_, s)) => s.st_shndx.get(LE) == elf::SHN_ABS,
            None => false,
        }
    }

    pub fn name_of(&self, t: Target) -> String {
        match t {
            Target::Global(id) => crate::diag::symbol_name(self.symbols[id].name),
            Target::Local(f, s) => self.objects[f].display_sym(s as usize),
        }
    }

    pub fn is_pic(&self) -> bool {
        self.kind.is_pic()
    }
}

impl<'a> Ctx<'a> {
    /// The state once the output sections, the split `.eh_frame`s, the merged sections and the
    /// symbol versions are known.
    pub fn new(
        resolved: Resolved<'a>,
        sections: IdVec<OutputSectionId, OutputSection>,
        eh: EhFrames,
        merges: Merges,
        versions: crate::synthetic::dynamic_tables::Versions,
    ) -> Ctx<'a> {
        Ctx { resolved, sections, eh, merges, versions }
    }

    /// The section of local symbol `sym` of `file` and its merged section, if the symbol is the
    /// section symbol of a merged section (what it refers to then depends on the addend).
    #[inline]
    pub fn merged_section_of(&self, file: FileId, sym: u32) -> Option<(u32, MergeId)> {
        let obj = &self.objects[file];
        if obj.syms[sym as usize].st_info & 0xf != elf::STT_SECTION {
            return None;
        }
        let sec = obj.sym_shndx(sym as usize)?;
        // Merging sets merge_index, only to ids of its own table.
        obj.sections[sec as usize].merge_index.map(|id| (sec, id))
    }

    /// The pieces of input section `sec` of `file` if it is a split `.eh_frame`. Only sections of
    /// that name are looked up: this runs for every relocation and every input section, and the
    /// name test spares nearly all of them a hash lookup.
    pub fn split_eh_frame(&self, file: FileId, sec: u32) -> Option<&EhSection> {
        let s = &self.objects[file].sections[sec as usize];
        if !s.is_eh_frame() {
            return None;
        }
        self.eh.get(&SectionRef::new(file, sec))
    }

    /// How many bytes input section `sec` of `file` takes in its output section: its live
    /// `.eh_frame` pieces, the string pieces it owns after merging, or its whole size.
    pub fn member_size(&self, file: FileId, sec: u32) -> u64 {
        let s = &self.objects[file].sections[sec as usize];
        match (self.split_eh_frame(file, sec), self.merges.at(s.merge_index)) {
            (Some(eh), _) => eh.size,
            (None, Some(m)) => m.size,
            (None, None) => s.size,
        }
    }

    /// Whether a RELATIVE relocation at `offset` in input section `sec` goes to `.relr.dyn`
    /// (`-z pack-relative-relocs`): as in lld, when the section is at least 2-aligned and the
    /// offset even (a RELR entry is an even address or a bitmap of words), unless
    /// `--section-start` puts its output section at an odd address. Split `.eh_frame` sections
    /// move their bytes, so they keep their relocations in `.rela.dyn`.
    pub fn packs_relative(&self, sec: &crate::input::object::ObjSection, offset: u64) -> bool {
        let odd_start = || {
            let Some(out) = sec.out else { return false };
            let name = &self.sections[out].name;
            self.config.section_starts.iter().rev().find(|(n, _)| n == name).is_some_and(|&(_, a)| a % 2 != 0)
        };
        // Never a text relocation (in a read-only section): those stay in `.rela.dyn`, which the
        // loader applies with the segment made writable, as mold keeps them.
        self.config.pack_relative_relocs
            && sec.flags & object::elf::SHF_WRITE as u64 != 0
            && sec.align() >= 2
            && offset.is_multiple_of(2)
            && !sec.is_eh_frame()
            && (self.config.section_starts.is_empty() || !odd_start())
    }
}
