//! rivet's library: the whole linker behind `main`, exposed so that the fuzz targets (`fuzz/`) and
//! benchmarks can drive the parsers and the link in-process. The `rivet` binary is `main.rs`.
pub mod arch;
pub mod args;
pub mod ctx;
pub mod defsym;
pub mod diag;
pub mod input;
pub mod layout;
pub mod link;
pub mod map;
pub mod reproduce;
pub mod resolve;
pub mod sections;
pub mod synthetic;
pub mod timing;
pub mod write;
