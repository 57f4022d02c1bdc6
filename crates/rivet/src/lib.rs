//! rivet's library: the whole linker behind `main`, exposed so that the fuzz targets (`fuzz/`) and
//! benchmarks can drive the parsers and the link in-process. The `rivet` binary is `main.rs`.
pub mod arch;
pub mod args;
pub mod check;
pub mod ctx;
pub mod dependencies;
pub mod diag;
pub mod expr;
pub mod id_table;
pub mod ids;
pub mod incremental;
pub mod input;
pub mod layout;
pub mod link;
pub mod link_io;
pub mod linked;
pub mod lto;
pub mod machine;
pub mod map;
pub mod relocatable;
pub mod report;
pub mod reproduce;
pub mod resolve;
pub mod run;
pub mod script;
pub mod script_layout;
pub mod section_order;
pub mod sections;
pub mod srcloc;
pub mod symbol_options;
pub mod synthetic;
pub mod timing;
pub mod undefined;
pub mod write;

#[cfg(test)]
mod tests;

/// FxHash of a byte string: what string merging and the symbol table file bytes under.
pub(crate) fn fx_hash(bytes: &[u8]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    h.write(bytes);
    h.finish()
}
