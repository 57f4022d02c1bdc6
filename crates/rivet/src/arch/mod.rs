//! Architecture back ends. rivet targets x86-64 only.
pub mod endbr;
pub mod x86_64;
