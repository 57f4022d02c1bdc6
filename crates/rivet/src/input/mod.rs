//! Inputs: objects, archives, shared libraries and linker-script stubs.
pub mod archive;
pub mod script;
