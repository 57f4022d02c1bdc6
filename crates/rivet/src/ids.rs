//! Identifiers shared by every stage. They are plain data and import nothing of the stages, so
//! any module may name them without tying itself to another stage.

/// A symbol as a relocation names it: global (by id) or local to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Global(u32),
    Local(u32, u32),
}
