//! Version scripts and dynamic lists: the parser, then the matcher (globs, `extern "C++"`) on a few
//! names, the first line of the input among them so that glob matching sees hostile text too.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rivet::input::version_script::{glob_match, parse, Matcher};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let _ = glob_match(first.as_bytes(), rest.as_bytes());
    if let Ok(nodes) = parse(text) {
        let m = Matcher { nodes };
        for name in [first.as_bytes(), b"main", b"_ZN3foo3barEv", b"_ZNSt6vectorIiSaIiEE9push_backERKi"] {
            let _ = m.verdict(name);
        }
        let _ = m.exact_names().count();
    }
});
