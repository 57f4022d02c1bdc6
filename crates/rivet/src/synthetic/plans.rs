//! What the linker-made sections are made from, decided before layout by the passes after the
//! output sections exist, and handed on as one value: to the synthetic sections' sizing
//! (`chunks::create_sections`) and, through `Placed` and `Linked`, to everything after layout. No
//! pass fills these in a shared context: each is the return value of the pass that decides it.
use crate::ids::OutputSectionId;
use crate::synthetic::dynamic_tables::DynPlan;
use crate::synthetic::gdb_index::GdbIndex;
use crate::synthetic::property::Properties;
use crate::synthetic::tables::Tables;

pub struct Plans {
    /// The inputs' GNU properties, merged (`property::merge`): `.note.gnu.property`, and the
    /// PLT's form (x86's IBT PLT, AArch64's BTI PLT).
    pub gnu_properties: Properties,
    /// What the relocation scan sized (`Arch::scan_relocations`): GOT, PLT, copies,
    /// dynamic relocation counts, RELR.
    pub got: Tables,
    /// Imports, exports, versions and DT_NEEDED (`synthetic::dynamic::plan`).
    pub dynsym: DynPlan,
    /// `--gdb-index`: the index, all but its addresses (`synthetic::gdb_index::plan_if_asked`).
    pub gdb_index: Option<GdbIndex>,
    /// `--emit-relocs`: the `.rela` sections made and what each holds
    /// (`synthetic::emit_relocs::create_if_asked`).
    pub emit_relocs: Option<EmitRelocs>,
    /// `-z rewrite-endbr`: the `endbr64`s written as nops (`arch::endbr::plan`).
    pub endbr: crate::arch::endbr::EndbrRewrites,
}

/// `--emit-relocs`: the `.rela` sections made, each with the output section whose relocations it
/// holds (`synthetic::emit_relocs` makes and writes them).
#[derive(Default)]
pub struct EmitRelocs {
    pub sections: Vec<(OutputSectionId, OutputSectionId)>,
    /// Where `.symtab` puts each symbol a relocation may name: built once, by the first `.rela`
    /// section written, for all of them.
    pub indices: std::sync::OnceLock<SymtabIndices>,
}

/// `.symtab` indices by what they stand for (`--emit-relocs`).
#[derive(Default)]
pub struct SymtabIndices {
    pub sections: rustc_hash::FxHashMap<OutputSectionId, u32>,
    pub locals: rustc_hash::FxHashMap<(crate::ids::FileId, u32), u32>,
    pub globals: rustc_hash::FxHashMap<crate::ids::SymbolId, u32>,
}

impl EmitRelocs {
    /// The section `rela` holds the relocations of.
    pub fn target_of(&self, rela: OutputSectionId) -> Option<OutputSectionId> {
        self.sections.iter().find(|&&(r, _)| r == rela).map(|&(_, t)| t)
    }
}
