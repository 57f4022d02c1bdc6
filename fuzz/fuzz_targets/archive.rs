//! An `ar` archive: the member headers, the long-name table and the symbol table are parsed;
//! members are pulled in through the symbol table (`-u`) and all at once (`--whole-archive`).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let _ = rivet::input::archive::parse(data);
    if let Ok(a) = rivet::input::archive::parse_lazily(data) {
        for i in 0..a.member_count() {
            let _ = a.member(i);
        }
    }
    let dir = common::scratch();
    let ar = dir.join("lib.a");
    let out = dir.join("out");
    std::fs::write(&ar, data).unwrap();
    let (o, a) = (out.to_str().unwrap(), ar.to_str().unwrap());
    common::link(&common::os(&["-static", "-u", "main", "-u", "f", "-o", o, a]));
    common::link(&common::os(&["-static", "-o", o, "--whole-archive", a]));
});
