//! Response files (`@FILE`): gcc's quoting and escapes, then the command-line parser on the words.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(words) = rivet::args::split_response_text(text) {
        let _ = rivet::args::parse(words.into_iter().map(Into::into).collect());
    }
});
