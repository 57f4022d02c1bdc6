//! The LTO plugin's answers: a plugin built for the harness (`fixtures/fuzz_plugin.c`) claims an
//! "IR" file made of the fuzzed bytes and answers with what they say: the symbols it hands rivet
//! through add_symbols (kinds, visibilities, sizes, COMDAT keys, garbage ones included), whether it
//! claims the file at all or fails, which get_symbols it asks, and the files, libraries, library
//! directories and messages it gives once all symbols are read (the object it "compiled",
//! `fixtures/lto_defs.c`, the claimed file again, made-up paths). rivet turns the list into the
//! object resolution sees, reports the resolutions (the plugin aborts on one that does not fit its
//! symbol), and links again with what the plugin added: an executable with the IR file given
//! directly, and a shared library with it as an archive member (`--whole-archive`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

#[path = "common.rs"]
mod common;

/// What the plugin claims: LLVM's bitcode magic (rivet offers the plugin only compiler IR), then
/// the plugin's own.
const MAGIC: &[u8] = b"BC\xC0\xDERIVETFUZZIR";

const PLUGIN: &str = include_str!("../fixtures/fuzz_plugin.c");
const MAIN: &str = include_str!("../fixtures/lto_main.c");
const DEFS: &str = include_str!("../fixtures/lto_defs.c");
const DEP: &str = include_str!("../fixtures/lto_dep.c");

/// The plugin, the regular object and the plugin's object, built once per process in the scratch
/// directory.
struct Built {
    dir: PathBuf,
    plugin: PathBuf,
    main: PathBuf,
    defs: PathBuf,
}

fn cc(dir: &Path, args: &[&str]) {
    let status = Command::new("cc")
        .current_dir(dir)
        .args(args)
        .status()
        .unwrap_or_else(|e| panic!("lto_plugin: cannot run cc (the target builds its plugin with it): {e}"));
    assert!(status.success(), "lto_plugin: cc {args:?} failed");
}

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = common::scratch();
        for (name, text) in [("fuzz_plugin.c", PLUGIN), ("lto_main.c", MAIN), ("lto_defs.c", DEFS), ("lto_dep.c", DEP)]
        {
            std::fs::write(dir.join(name), text).unwrap();
        }
        cc(&dir, &["-shared", "-fPIC", "-O1", "-o", "fuzz_plugin.so", "fuzz_plugin.c"]);
        // Initial-exec TLS: a general-dynamic access calls __tls_get_addr, which no input here
        // defines.
        let flags = ["-c", "-O1", "-fPIC", "-fno-stack-protector", "-ftls-model=initial-exec"];
        cc(&dir, &[&flags[..], &["-o", "lto_main.o", "lto_main.c"]].concat());
        cc(&dir, &[&flags[..], &["-o", "lto_defs.o", "lto_defs.c"]].concat());
        cc(&dir, &["-shared", "-fPIC", "-O1", "-o", "libirdep.so", "lto_dep.c"]);
        Built { plugin: dir.join("fuzz_plugin.so"), main: dir.join("lto_main.o"), defs: dir.join("lto_defs.o"), dir }
    })
}

/// A GNU `ar` archive holding `data` as its one member (no symbol index: it is linked whole).
fn archive(data: &[u8]) -> Vec<u8> {
    let mut out = b"!<arch>\n".to_vec();
    out.extend_from_slice(
        format!("{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", "ir.bc/", 0, 0, 0, 644, data.len()).as_bytes(),
    );
    out.extend_from_slice(data);
    if data.len() % 2 == 1 {
        out.push(b'\n');
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let b = built();
    let ir_data = [MAGIC, data].concat();
    let (ir, ar, out) = (b.dir.join("ir.bc"), b.dir.join("ir.a"), b.dir.join("out"));
    std::fs::write(&ir, &ir_data).unwrap();
    std::fs::write(&ar, archive(&ir_data)).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (plugin, obj, dir) =
        (s(&b.plugin), format!("-plugin-opt=obj={}", s(&b.defs)), format!("-plugin-opt=dir={}", s(&b.dir)));
    let (main, ir, ar, out) = (s(&b.main), s(&ir), s(&ar), s(&out));
    let with_plugin = |rest: &[&str]| common::os(&[&["-plugin", &plugin, &obj, &dir][..], rest].concat());
    common::link(&with_plugin(&["--gc-sections", "-e", "main", "-o", &out, &main, &ir]));
    common::link(&with_plugin(&["-shared", "-o", &out, &main, "--whole-archive", &ar, "--no-whole-archive"]));
});
