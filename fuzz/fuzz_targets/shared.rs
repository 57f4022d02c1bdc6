//! A shared library linked against: its dynamic section, .dynsym/.dynstr, SONAME and DT_NEEDED,
//! symbol versions (.gnu.version, _d, _r) and hash tables are read, its symbols resolve a real
//! object's references (calls through the PLT, copy relocations, TLS, a weak reference), and the
//! output's dynamic sections are built from them.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

/// fixtures/uses_lib.c, compiled without and with -fpie.
const USER: &[u8] = include_bytes!("../fixtures/uses_lib.o");
const USER_PIC: &[u8] = include_bytes!("../fixtures/uses_lib-pic.o");

fuzz_target!(|data: &[u8]| {
    let dir = common::scratch();
    let (user, user_pic, lib, out) = (dir.join("user.o"), dir.join("user-pic.o"), dir.join("lib.so"), dir.join("out"));
    if !user.exists() {
        std::fs::write(&user, USER).unwrap();
        std::fs::write(&user_pic, USER_PIC).unwrap();
    }
    std::fs::write(&lib, data).unwrap();
    let [u, p, l, o] = [&user, &user_pic, &lib, &out].map(|p| p.to_str().unwrap());
    // A non-PIE executable (copy relocations, canonical PLT entries), a PIE, and a shared
    // library that depends on the fuzzed one only if it is used.
    common::link(&common::os(&["-e", "main", "-o", o, u, l]));
    common::link(&common::os(&["-pie", "-e", "main", "-z", "now", "-o", o, p, l]));
    common::link(&common::os(&["-shared", "--as-needed", "-o", o, p, l]));
});
