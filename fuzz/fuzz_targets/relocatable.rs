//! A relocatable link (`-r`) over a fuzzed object: sections concatenated by name and flags,
//! COMDAT groups kept apart, the symbol table rebuilt, relocations re-pointed. The object is
//! linked alone and beside itself (every COMDAT group a duplicate), and an `-r` output rivet
//! wrote is then linked into an executable: what `-r` writes must be an object rivet can read.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let dir = common::scratch();
    let (obj, rel, out) = (dir.join("in.o"), dir.join("r.o"), dir.join("out"));
    std::fs::write(&obj, data).unwrap();
    let _ = std::fs::remove_file(&rel);
    let [i, r, o] = [&obj, &rel, &out].map(|p| p.to_str().unwrap());
    common::link(&common::os(&["-r", "-d", "-o", o, i, i]));
    common::link(&common::os(&["-r", "--build-id", "-o", r, i]));
    if rel.exists() {
        common::link(&common::os(&["-static", "--gc-sections", "--unresolved-symbols=ignore-all", "-o", o, r]));
    }
});
