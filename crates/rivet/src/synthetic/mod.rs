//! Linker-made sections: one `Chunk` per kind (`chunks`: header, size, links and bytes), and the
//! plans they are made from: the GOT and PLT (`Tables`, sized by the relocation scan), the dynamic
//! symbol table and its companions (`dynamic`), `.symtab` (`symtab`) and the GNU property note
//! (`property`).
pub mod chunks;
pub mod debug_file;
pub mod dynamic;
pub mod dynamic_tables;
pub mod emit_relocs;
pub mod gdb_index;
mod got_entries;
pub mod plans;
pub mod property;
pub mod symtab;
pub mod tables;

pub use got_entries::{got_entry, GotReloc};
pub use tables::*;
