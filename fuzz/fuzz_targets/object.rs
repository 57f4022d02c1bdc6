//! A relocatable object, linked statically on its own: header, section and symbol tables,
//! relocations, COMDAT groups, .eh_frame, layout and relocation application all see the bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let dir = common::scratch();
    let obj = dir.join("in.o");
    let out = dir.join("out");
    std::fs::write(&obj, data).unwrap();
    let (o, i) = (out.to_str().unwrap(), obj.to_str().unwrap());
    // Executable and shared-object outputs exercise different relocation and GOT/PLT paths.
    common::link(&common::os(&["-static", "--gc-sections", "-o", o, i]));
    common::link(&common::os(&["-shared", "--eh-frame-hdr", "-o", o, i]));
});
