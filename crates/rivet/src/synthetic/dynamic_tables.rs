//! What the dynamic-symbol planner (`synthetic::dynamic`) gives the later stages: the `.dynsym`
//! order and the bytes of `.dynstr`, `.gnu.hash` and the version sections, and the version
//! definitions of this output. Plain data; it is built and written by `synthetic::dynamic`.
use crate::ids::SymbolId;
use rustc_hash::FxHashMap as HashMap;

#[derive(Default)]
pub struct DynPlan {
    /// Global symbol ids in `.dynsym` order (entry `i + 1`).
    pub symbols: Vec<SymbolId>,
    pub index: HashMap<SymbolId, u32>,
    /// The first symbol `.gnu.hash` covers (imports without an address come before it).
    pub first_hashed: u32,
    pub dynstr: Vec<u8>,
    pub name_off: Vec<u32>,
    /// DT_NEEDED names (offsets in `.dynstr`), in command-line order.
    pub needed: Vec<u32>,
    pub soname: Option<u32>,
    pub runpath: Option<u32>,
    /// `--filter` / `--auxiliary` names (DT_FILTER / DT_AUXILIARY), in command-line order.
    pub filters: Vec<u32>,
    pub auxiliaries: Vec<u32>,
    /// DT_AUDIT (`--audit`) and DT_DEPAUDIT (`--depaudit`/`-P`, then the shared libraries'
    /// DT_AUDIT values), each list joined with ':'.
    pub audit: Option<u32>,
    pub depaudit: Option<u32>,
    pub versym: Vec<u16>,
    pub verneed: Vec<u8>,
    pub verneed_count: u32,
    pub verdef: Vec<u8>,
    pub verdef_count: u32,
    pub gnu_hash: Vec<u8>,
}

/// Version definitions of this output (from `--version-script`): node names, parents, and the
/// version each exported symbol carries.
#[derive(Default)]
pub struct Versions {
    /// Named nodes in script order: (name, parent); node `i` is version index `i + 2`.
    pub nodes: Vec<(String, Option<String>)>,
    /// Symbol id → version index (VERSYM_HIDDEN set for `foo@V` non-default versions).
    pub of_symbol: HashMap<SymbolId, u16>,
}

impl Versions {
    pub fn index_of(&self, name: &[u8]) -> Option<u16> {
        self.nodes.iter().position(|(n, _)| n.as_bytes() == name).map(|i| i as u16 + 2)
    }
}
