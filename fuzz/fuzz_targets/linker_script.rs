//! Linker scripts: stubs as Debian's libc.so (`GROUP ( ... )`, `INPUT`, `AS_NEEDED`), commands,
//! expressions, SECTIONS.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = rivet::input::script::looks_like_script(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = rivet::input::script::parse(text);
    }
});
