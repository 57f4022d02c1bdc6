//! rivet-io: the I/O layer of the rivet linker. It knows files, memory and file systems, and nothing
//! about ELF. The linker asks it for input bytes (`input`), for an output buffer that becomes a file
//! atomically (`output`), for facts about where the output goes (`fsinfo`), for the choices made
//! from them (`policy`: one plan before inputs are opened, one once the output's size is known) and
//! for counters that say what the link cost in I/O (`stats`).

pub mod arena;
pub mod copy;
pub mod detach;
pub mod fsinfo;
pub mod input;
pub mod memory;
pub mod output;
pub mod policy;
pub mod prefetch;
pub mod stats;
pub mod units;

pub use arena::ByteArena;
pub use copy::CopyMethod;
pub use input::{InputCache, InputFile};
pub use output::{CommitReport, OutputFile, OutputMode, Unmapper};
pub use prefetch::{PrefetchStats, Prefetcher};
