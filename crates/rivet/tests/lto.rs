//! Link-time optimisation through the linker plugin: programs compiled with `-flto` (gcc 12 with
//! its liblto_plugin, clang 19 with LLVMgold) are linked by the reference linker (GNU ld through
//! plain gcc, lld for clang) and by the linker under test (`gcc -B DIR`, `clang --ld-path`), both
//! are run and their output compared. That the output really came from link-time optimisation is
//! checked too: a function only another object calls is inlined across objects and gone from the
//! symbol table, which no link of the objects' own code (there is none in a slim object) can do.
//! Then the errors: a missing or unloadable plugin, a plugin that fails, IR with no plugin.
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const MAIN: &str = "#include <stdio.h>\n\
    int scale(int x);\n\
    int lib_first(int x);\n\
    int counter;\n\
    int main(void) {\n\
        int total = 0;\n\
        for (int i = 0; i < 10; i++) total += scale(i) + lib_first(i);\n\
        printf(\"total %d counter %d\\n\", total, counter);\n\
        return 0;\n\
    }\n";
/// `scale` is called only from main.c: with LTO it is inlined there and disappears.
const UTIL: &str = "extern int counter;\n\
    int scale(int x) { counter++; return x * 3 + 1; }\n";
const LIB1: &str = "int lib_second(int x);\n\
    int lib_first(int x) { return lib_second(x) + 1; }\n";
const LIB2: &str = "int lib_second(int x) { return x * x; }\n\
    int lib_unused(int x) { return x - 1; }\n";

const CXX_MAIN: &str = "#include <iostream>\n#include <memory>\n#include <stdexcept>\n#include <string>\n\
    #include \"shape.h\"\n\
    int main() {\n\
        std::unique_ptr<Shape> s = make_shape(\"square\", 3);\n\
        std::cout << s->name() << \" \" << s->area() << std::endl;\n\
        try { make_shape(\"hexagon\", 1); } catch (const std::invalid_argument &e) { std::cout << \"caught \" << e.what() << std::endl; }\n\
        return 0;\n\
    }\n";
const CXX_SHAPE_H: &str = "#include <memory>\n#include <string>\n\
    struct Shape { virtual ~Shape() = default; virtual std::string name() const = 0; virtual int area() const = 0; };\n\
    std::unique_ptr<Shape> make_shape(const std::string &kind, int side);\n";
const CXX_SHAPE: &str = "#include \"shape.h\"\n#include <stdexcept>\n\
    namespace { struct Square : Shape { int side; explicit Square(int s) : side(s) {}\n\
        std::string name() const override { return \"square\"; } int area() const override { return side * side; } }; }\n\
    std::unique_ptr<Shape> make_shape(const std::string &kind, int side) {\n\
        if (kind == \"square\") return std::make_unique<Square>(side);\n\
        throw std::invalid_argument(\"no shape \" + kind);\n\
    }\n";

fn setup(name: &str, tools: &[&str]) -> Option<TempDir> {
    if !tools.iter().all(|t| have(t)) || !testing_rivet() {
        eprintln!("skipped: {tools:?} missing, or not testing rivet");
        return None;
    }
    let tmp = TempDir::new(&format!("lto-{name}"));
    for (file, text) in [
        ("main.c", MAIN),
        ("util.c", UTIL),
        ("lib1.c", LIB1),
        ("lib2.c", LIB2),
        ("main.cpp", CXX_MAIN),
        ("shape.h", CXX_SHAPE_H),
        ("shape.cpp", CXX_SHAPE),
    ] {
        std::fs::write(tmp.join(file), text).unwrap();
    }
    Some(tmp)
}

fn run(cmd: &mut Command) -> String {
    String::from_utf8_lossy(&must(cmd).stdout).into_owned()
}

/// Compiles `sources` with `cc` and `flags` in the test directory.
fn compile(tmp: &TempDir, cc: &str, flags: &[&str], sources: &[&str]) {
    must(Command::new(cc).current_dir(&tmp.path).arg("-c").args(flags).args(sources));
}

/// Links with the reference linker (`ours` false) or the linker under test, runs the program and
/// gives its output.
fn link_and_run(tmp: &TempDir, cc: &str, ours: bool, args: &[&str], out: &str) -> String {
    let mut cmd = Command::new(cc);
    cmd.current_dir(&tmp.path);
    if ours {
        match cc {
            "gcc" | "g++" => cmd.arg("-B").arg(linker_dir(tmp)),
            _ => cmd.arg(format!("--ld-path={}", linker().display())),
        };
    } else if cc.starts_with("clang") {
        cmd.arg("-fuse-ld=lld");
    }
    must(cmd.args(args).arg("-o").arg(out));
    run(&mut Command::new(tmp.join(out)))
}

/// The defined symbols `nm` lists for a file.
fn defined(path: &Path) -> Vec<String> {
    let out = run(Command::new("nm").arg("--defined-only").arg(path));
    out.lines().filter_map(|l| l.split_whitespace().nth(2)).map(str::to_string).collect()
}

/// The C program (two objects and an archive of IR objects made with gcc-ar), linked by GNU ld and
/// by rivet with the same `flags`: both run alike, and rivet's output is LTO's.
fn gcc_program(name: &str, compile_flags: &[&str], flags: &[&str]) {
    let Some(tmp) = setup(name, &["gcc", "gcc-ar", "nm"]) else { return };
    compile(&tmp, "gcc", compile_flags, &["main.c", "util.c", "lib1.c", "lib2.c"]);
    must(Command::new("gcc-ar").current_dir(&tmp.path).args(["rcs", "libl.a", "lib1.o", "lib2.o"]));
    let args: Vec<&str> = compile_flags.iter().chain(flags).copied().chain(["main.o", "util.o", "libl.a"]).collect();
    let expected = link_and_run(&tmp, "gcc", false, &args, "ref");
    let got = link_and_run(&tmp, "gcc", true, &args, "ours");
    assert_eq!(got, expected);
    assert_eq!(got, "total 440 counter 10\n");
    let syms = defined(&tmp.join("ours"));
    assert!(syms.iter().any(|s| s == "main"), "{syms:?}");
    assert!(!syms.iter().any(|s| s == "scale"), "scale was not inlined across objects: {syms:?}");
    assert!(!syms.iter().any(|s| s == "lib_unused"), "an unused archive function was linked: {syms:?}");
    tmp.finish();
}

#[test]
fn gcc_c_objects_and_an_ir_archive() {
    gcc_program("c", &["-flto", "-O2"], &[]);
}

#[test]
fn gcc_flto_auto() {
    gcc_program("auto", &["-flto=auto", "-O2"], &[]);
}

#[test]
fn gcc_static() {
    gcc_program("static", &["-flto", "-O2"], &["-static"]);
}

#[test]
fn gcc_gc_sections() {
    gcc_program("gc", &["-flto", "-O2", "-ffunction-sections"], &["-Wl,--gc-sections"]);
}

#[test]
fn gcc_cxx() {
    let Some(tmp) = setup("cxx", &["g++", "nm"]) else { return };
    compile(&tmp, "g++", &["-flto", "-O2"], &["main.cpp", "shape.cpp"]);
    let args = ["-flto", "-O2", "main.o", "shape.o"];
    let expected = link_and_run(&tmp, "g++", false, &args, "ref");
    let got = link_and_run(&tmp, "g++", true, &args, "ours");
    assert_eq!(got, expected);
    assert_eq!(got, "square 9\ncaught no shape hexagon\n");
    tmp.finish();
}

/// `-ffat-lto-objects`: without the plugin (`-fno-use-linker-plugin`) the objects' machine code is
/// linked (scale is there); through the plugin, LTO's code (scale is inlined).
#[test]
fn gcc_fat_objects_with_and_without_the_plugin() {
    let Some(tmp) = setup("fat", &["gcc", "nm"]) else { return };
    compile(&tmp, "gcc", &["-flto", "-ffat-lto-objects", "-O2"], &["main.c", "util.c", "lib1.c", "lib2.c"]);
    let inputs = ["main.o", "util.o", "lib1.o", "lib2.o"];
    let plain: Vec<&str> = ["-fno-use-linker-plugin"].into_iter().chain(inputs).collect();
    let expected = link_and_run(&tmp, "gcc", false, &plain, "ref");
    assert_eq!(link_and_run(&tmp, "gcc", true, &plain, "code"), expected);
    assert!(defined(&tmp.join("code")).iter().any(|s| s == "scale"));
    let lto: Vec<&str> = ["-flto", "-O2"].into_iter().chain(inputs).collect();
    assert_eq!(link_and_run(&tmp, "gcc", true, &lto, "lto"), expected);
    assert!(!defined(&tmp.join("lto")).iter().any(|s| s == "scale"));
    // The same objects with no plugin at all, rivet called directly: the code links.
    let crt = |f: &str| run(Command::new("gcc").arg(format!("-print-file-name={f}"))).trim().to_string();
    let mut cmd = Command::new(linker());
    cmd.current_dir(&tmp.path).args(["-static", "-o", "direct"]).args([crt("crt1.o"), crt("crti.o")]);
    cmd.args(inputs).args(["--start-group", &crt("libc.a"), &crt("libgcc.a"), &crt("libgcc_eh.a"), "--end-group"]);
    must(cmd.arg(crt("crtn.o")));
    assert_eq!(run(&mut Command::new(tmp.join("direct"))), expected);
    tmp.finish();
}

/// A shared library built with LTO and a version script: what the script keeps is exported, the
/// rest is gone, and a program linked against it runs as against GNU ld's.
#[test]
fn gcc_shared_library_with_a_version_script() {
    let Some(tmp) = setup("shared", &["gcc", "nm"]) else { return };
    std::fs::write(
        tmp.join("api.c"),
        "static int twice(int x) { return 2 * x; }\nint internal_helper(int x) { return twice(x) + 1; }\n\
         int api(int x) { return internal_helper(x) * 10; }\n",
    )
    .unwrap();
    std::fs::write(
        tmp.join("app.c"),
        "#include <stdio.h>\nint api(int);\nint main(void) { printf(\"%d\\n\", api(4)); return 0; }\n",
    )
    .unwrap();
    std::fs::write(tmp.join("api.map"), "V1 { global: api; local: *; };\n").unwrap();
    compile(&tmp, "gcc", &["-flto", "-O2", "-fPIC"], &["api.c"]);
    compile(&tmp, "gcc", &["-O2"], &["app.c"]);
    for (ours, lib) in [(false, "libref.so"), (true, "libours.so")] {
        let mut cmd = Command::new("gcc");
        cmd.current_dir(&tmp.path);
        if ours {
            cmd.arg("-B").arg(linker_dir(&tmp));
        }
        must(cmd.args(["-shared", "-flto", "-O2", "api.o", "-Wl,--version-script=api.map", "-o", lib]));
        let dynamic = run(Command::new("nm").args(["-D", "--defined-only"]).arg(tmp.join(lib)));
        assert!(dynamic.contains(" api@@V1"), "{lib}: {dynamic}");
        assert!(!dynamic.contains("internal_helper"), "{lib}: {dynamic}");
        let exe = format!("app-{lib}");
        must(Command::new("gcc").current_dir(&tmp.path).args(["app.o", lib, "-o", &exe, "-Wl,-rpath,$ORIGIN"]));
        assert_eq!(run(&mut Command::new(tmp.join(&exe))), "90\n");
    }
    tmp.finish();
}

/// clang's LTO through LLVMgold.so, full and thin, against lld's.
fn clang_program(name: &str, flto: &str) {
    let plugin = Path::new("/usr/lib/llvm-19/lib/LLVMgold.so");
    if !plugin.exists() || !have("ld.lld-19") && !have("ld.lld") {
        eprintln!("skipped: LLVMgold.so or lld missing");
        return;
    }
    let Some(tmp) = setup(name, &["clang-19", "nm", "llvm-ar-19"]) else { return };
    compile(&tmp, "clang-19", &[flto, "-O2"], &["main.c", "util.c", "lib1.c", "lib2.c"]);
    must(Command::new("llvm-ar-19").current_dir(&tmp.path).args(["rcs", "libl.a", "lib1.o", "lib2.o"]));
    let args = [flto, "-O2", "main.o", "util.o", "libl.a"];
    let expected = link_and_run(&tmp, "clang-19", false, &args, "ref");
    let got = link_and_run(&tmp, "clang-19", true, &args, "ours");
    assert_eq!(got, expected);
    assert_eq!(got, "total 440 counter 10\n");
    // The objects are bitcode, no machine code: linking them at all takes the plugin. Which
    // functions survive is LLVM's choice from the resolutions (full LTO inlines `scale` and drops
    // it, ThinLTO keeps it): the same as with lld.
    assert!(std::fs::read(tmp.join("util.o")).unwrap().starts_with(b"BC\xC0\xDE"));
    let pick = |f: &str| -> Vec<String> {
        defined(&tmp.join(f))
            .into_iter()
            .filter(|s| ["scale", "lib_first", "lib_unused", "main"].contains(&s.as_str()))
            .collect()
    };
    assert_eq!(pick("ours"), pick("ref"));
    if flto == "-flto" {
        assert!(!pick("ours").contains(&"scale".to_string()), "scale was not inlined across objects");
    }
    tmp.finish();
}

#[test]
fn clang_full_lto() {
    clang_program("clang", "-flto");
}

#[test]
fn clang_thin_lto() {
    clang_program("thin", "-flto=thin");
}

/// rivet called directly on gcc's IR object, with `plugin` args; the link must fail with exit 1,
/// naming `names`, and leave the old output as it was.
fn fails(tmp: &TempDir, plugin_args: &[&str], names: &[&str]) {
    let out: PathBuf = tmp.join("out");
    std::fs::write(&out, b"old output").unwrap();
    let mut cmd = Command::new(linker());
    cmd.current_dir(&tmp.path).args(plugin_args).args(["-static", "-e", "main", "-o"]).arg(&out).arg("util.o");
    let result = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{}: {stderr}", render(&cmd));
    for n in names {
        assert!(stderr.contains(n), "stderr does not name '{n}': {stderr}");
    }
    assert_eq!(std::fs::read(&out).unwrap(), b"old output");
}

#[test]
fn errors() {
    let Some(tmp) = setup("errors", &["gcc"]) else { return };
    compile(&tmp, "gcc", &["-flto", "-O2"], &["util.c"]);
    // IR with no plugin.
    fails(&tmp, &[], &["util.o", "LTO object", "-plugin"]);
    // A plugin that does not exist.
    fails(&tmp, &["-plugin", "/nonexistent/liblto_plugin.so"], &["/nonexistent/liblto_plugin.so", "no such file"]);
    // A file that is no library.
    std::fs::write(tmp.join("notaplugin.so"), "not a library\n").unwrap();
    fails(&tmp, &["-plugin", "notaplugin.so"], &["notaplugin.so", "cannot load LTO plugin"]);
    // The plugin fails: gcc's runs its first option as lto-wrapper, here a program that fails.
    let gcc_plugin = run(Command::new("gcc").arg("-print-file-name=liblto_plugin.so")).trim().to_string();
    if Path::new(&gcc_plugin).is_absolute() {
        fails(&tmp, &["-plugin", &gcc_plugin, "-plugin-opt=/bin/false"], &["liblto_plugin.so"]);
    }
    tmp.finish();
}

/// `--dependency-file` with LTO names the IR objects and archive the link read, not the plugin's
/// temporary objects (deleted after the link, they would break `make`).
#[test]
fn dependency_file_leaves_out_the_plugins_objects() {
    let Some(tmp) = setup("depfile", &["gcc", "gcc-ar"]) else { return };
    compile(&tmp, "gcc", &["-O2", "-flto"], &["main.c", "util.c", "lib1.c", "lib2.c"]);
    must(Command::new("gcc-ar").current_dir(&tmp.path).args(["rcs", "libl.a", "lib1.o", "lib2.o"]));
    let args = ["-O2", "-flto", "main.o", "util.o", "libl.a", "-Wl,--dependency-file=deps.d"];
    assert_eq!(link_and_run(&tmp, "gcc", true, &args, "ours"), "total 440 counter 10\n");
    let deps = std::fs::read_to_string(tmp.join("deps.d")).unwrap();
    let rule = deps.lines().next().unwrap();
    assert!(rule.starts_with("ours: ") && rule.contains(" main.o ") && rule.contains(" libl.a"), "{deps}");
    assert!(!deps.contains("ltrans"), "a temporary object of the plugin is listed:\n{deps}");
    for word in rule.split_whitespace().skip(1) {
        assert!(Path::new(word).exists() || tmp.join(word).exists(), "{word} does not exist after the link");
    }
    tmp.finish();
}

// The plugin's answers, from the fuzz target's plugin (fuzz/fixtures/fuzz_plugin.c): it claims a
// file of symbols and actions (its comment has the format) and adds fuzz/fixtures/lto_defs.o in
// place of compiled IR.

/// One record of the fuzz plugin's symbol list.
#[derive(Clone, Copy)]
struct IrSym<'a> {
    name: &'a str,
    /// LDPK_*.
    def: u8,
    size: u64,
    /// LDPV_*.
    vis: u8,
    comdat: Option<&'a str>,
}

const fn sym(name: &str, def: u8, size: u64) -> IrSym<'_> {
    IrSym { name, def, size, vis: 0, comdat: None }
}

/// An "IR" file for the fuzz plugin: claimed, `syms` handed to add_symbols, then `actions` once all
/// symbols are read (0: add lto_defs.o; 4: add libirdep.so, with its directory).
fn ir_file(syms: &[IrSym], actions: &[u8]) -> Vec<u8> {
    let mut out = b"BC\xC0\xDERIVETFUZZIR".to_vec();
    out.push(0); // flags: claim, the newest get_symbols
    out.extend_from_slice(&(syms.len() as u16).to_le_bytes());
    for s in syms {
        out.push(s.name.len() as u8);
        out.extend_from_slice(s.name.as_bytes());
        out.push(0xff); // no version
        out.extend_from_slice(&[s.def, 0, 0, s.vis, 0xff]); // kind, type, section kind, visibility
        out.extend_from_slice(&s.size.to_le_bytes());
        match s.comdat {
            Some(key) => {
                out.push(key.len() as u8);
                out.extend_from_slice(key.as_bytes());
            }
            None => out.push(0xff),
        }
    }
    out.extend_from_slice(actions);
    out
}

/// The fuzz plugin and its objects built in a new directory (`cc` is needed); the paths of the
/// plugin, the regular object and the plugin's `-plugin-opt`s.
fn answering_plugin(name: &str) -> Option<(TempDir, Vec<String>)> {
    if !have("cc") || !testing_rivet() {
        eprintln!("skipped: cc missing, or not testing rivet");
        return None;
    }
    let tmp = TempDir::new(&format!("lto-answers-{name}"));
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/fixtures");
    let src = |f: &str| fixtures.join(f);
    let flags = ["-c", "-O1", "-fPIC", "-fno-stack-protector", "-ftls-model=initial-exec", "-o"];
    must(
        Command::new("cc")
            .current_dir(&tmp.path)
            .args(["-shared", "-fPIC", "-o", "fuzz_plugin.so"])
            .arg(src("fuzz_plugin.c")),
    );
    must(Command::new("cc").current_dir(&tmp.path).args(flags).arg("lto_main.o").arg(src("lto_main.c")));
    must(Command::new("cc").current_dir(&tmp.path).args(flags).arg("lto_defs.o").arg(src("lto_defs.c")));
    must(
        Command::new("cc").current_dir(&tmp.path).args(["-shared", "-fPIC", "-o", "libirdep.so"]).arg(src("lto_dep.c")),
    );
    let dir = tmp.path.to_str().unwrap().to_string();
    let args = vec![
        "-plugin".to_string(),
        format!("{dir}/fuzz_plugin.so"),
        format!("-plugin-opt=obj={dir}/lto_defs.o"),
        format!("-plugin-opt=dir={dir}"),
    ];
    Some((tmp, args))
}

/// What the fuzz seeds declare: lto_defs.c's symbols, and the regular object's function it calls.
const DEFS: &[IrSym] = &[
    sym("ir_func", 0, 0),
    sym("ir_data", 0, 4),
    sym("ir_weak", 1, 0),
    sym("ir_common", 4, 4),
    sym("ir_tls", 0, 4),
    IrSym { comdat: Some("ir_key"), ..sym("ir_key", 0, 0) },
    sym("main_helper", 2, 0),
];

/// A shared library the plugin adds (add_input_library) to an executable whose command line names
/// none: the output is a dynamic executable that needs it, as with GNU ld. rivet had decided on a
/// static output before the plugin ran and failed on the library's symbol ("needs a dynamic
/// relocation but is not in .dynsym").
#[test]
fn a_library_the_plugin_adds_makes_the_executable_dynamic() {
    let Some((tmp, plugin)) = answering_plugin("library") else { return };
    let syms: Vec<IrSym> = DEFS.iter().copied().chain([sym("ir_lib_func", 3, 0)]).collect();
    std::fs::write(tmp.join("ir.bc"), ir_file(&syms, &[0, 4])).unwrap();
    must(Command::new(linker()).current_dir(&tmp.path).args(&plugin).args([
        "-e",
        "main",
        "-o",
        "out",
        "lto_main.o",
        "ir.bc",
    ]));
    if have("readelf") {
        let dynamic = run(Command::new("readelf").current_dir(&tmp.path).args(["-dW", "out"]));
        assert!(dynamic.contains("(NEEDED)") && dynamic.contains("[libirdep.so]"), "{dynamic}");
        let dynsym = run(Command::new("readelf").current_dir(&tmp.path).args(["--dyn-syms", "-W", "out"]));
        assert!(dynsym.contains(" ir_lib_func"), "{dynsym}");
    }
    tmp.finish();
}

/// A list that names a symbol twice in one file, as two commons or as a common and a definition
/// (in either order): resolution compares the two without panicking (it looked the first up among
/// the files already added), also for `--warn-common`'s messages.
#[test]
fn a_common_named_twice_in_one_file() {
    let Some((tmp, plugin)) = answering_plugin("common-twice") else { return };
    let twice = [
        sym("two_commons", 4, 4),
        sym("two_commons", 4, 8),
        sym("common_then_def", 4, 4),
        sym("common_then_def", 0, 4),
        sym("def_then_common", 0, 4),
        sym("def_then_common", 4, 4),
    ];
    let syms: Vec<IrSym> = DEFS.iter().chain(&twice).copied().collect();
    std::fs::write(tmp.join("ir.bc"), ir_file(&syms, &[0])).unwrap();
    for warn in [&[][..], &["--warn-common"][..]] {
        let mut cmd = Command::new(linker());
        cmd.current_dir(&tmp.path).args(&plugin).args(warn).args(["-e", "main", "-o", "out", "lto_main.o", "ir.bc"]);
        must(&mut cmd);
    }
    tmp.finish();
}

/// A caller that links in-process again and again (as the fuzz targets do) gets each link's
/// plugin answers only: the plugin stays loaded, its cleanup runs and rivet forgets the files at
/// the end of every link. Before, the cleanup ran once per process, and a third link saw the plugin
/// answer for the second's file as well (adding its object twice). A second plugin is refused
/// (the messages go to the caller's `Diag`, quiet here).
#[test]
fn links_in_process_with_the_plugin_again_and_again() {
    let Some((tmp, plugin)) = answering_plugin("in-process") else { return };
    std::fs::write(tmp.join("ir.bc"), ir_file(DEFS, &[0])).unwrap();
    let dir = tmp.path.to_str().unwrap();
    let link = |plugin: &[String]| {
        let mut args: Vec<std::ffi::OsString> = plugin.iter().map(Into::into).collect();
        for a in ["-e", "main", "-o", &format!("{dir}/out"), &format!("{dir}/lto_main.o"), &format!("{dir}/ir.bc")] {
            args.push(a.into());
        }
        let mut config = rivet::args::parse(args).expect("arguments parse");
        config.free_memory = true;
        rivet::link::link(&config, &rivet::timing::Timer::new(), &rivet::diag::Diag::quiet()).map(|_| ())
    };
    for round in 0..3 {
        if let Err(e) = link(&plugin) {
            panic!("in-process link {round}: {e}");
        }
        assert!(tmp.join("out").exists());
    }
    std::fs::copy(tmp.join("fuzz_plugin.so"), tmp.join("other_plugin.so")).unwrap();
    let other: Vec<String> = ["-plugin".to_string(), format!("{dir}/other_plugin.so")]
        .into_iter()
        .chain(plugin[2..].iter().cloned())
        .collect();
    // The same code under another path: only the path makes it a second plugin.
    assert!(link(&other).is_err(), "a second plugin was loaded in the same process");
    tmp.finish();
}

/// A symbol kind or visibility the plugin API does not define fails the link, as GNU ld refuses
/// it, naming the symbol (rivet took a bad kind for a definition and a bad visibility for the
/// default).
#[test]
fn the_plugins_symbol_kinds_and_visibilities_are_checked() {
    let Some((tmp, plugin)) = answering_plugin("bad-kinds") else { return };
    for (bad, said) in [
        (sym("odd_kind", 7, 0), "symbol 'odd_kind' has kind 7"),
        (IrSym { vis: 9, ..sym("odd_visibility", 0, 0) }, "symbol 'odd_visibility' has visibility 9"),
        (IrSym { vis: 0xfe, ..sym("negative_visibility", 2, 0) }, "symbol 'negative_visibility' has visibility -2"),
    ] {
        let syms: Vec<IrSym> = DEFS.iter().copied().chain([bad]).collect();
        std::fs::write(tmp.join("ir.bc"), ir_file(&syms, &[0])).unwrap();
        let mut cmd = Command::new(linker());
        cmd.current_dir(&tmp.path).args(&plugin).args(["-e", "main", "-o", "out", "lto_main.o", "ir.bc"]);
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(said) && stderr.contains("ir.bc") && stderr.contains("fuzz_plugin.so"), "{stderr}");
    }
    tmp.finish();
}

/// Each COMDAT key of a plugin's list stands as a section of the file's object: past the ordinary
/// section indices a key's symbols became absolute, common or undefined ones; now the link fails.
#[test]
fn more_comdat_keys_than_an_object_holds() {
    let Some((tmp, plugin)) = answering_plugin("comdat-keys") else { return };
    let names: Vec<String> = (0..65278).map(|i| format!("k{i}")).collect();
    // With DEFS's ir_key: 65278 keys (section indices 2..=0xfeff), then one more.
    for (n, ok) in [(65277, true), (65278, false)] {
        let keyed = names[..n].iter().map(|k| IrSym { comdat: Some(k), ..sym(k, 0, 0) });
        let syms: Vec<IrSym> = DEFS.iter().copied().chain(keyed).collect();
        std::fs::write(tmp.join("ir.bc"), ir_file(&syms, &[0])).unwrap();
        let mut cmd = Command::new(linker());
        cmd.current_dir(&tmp.path).args(&plugin).args(["-e", "main", "-o", "out", "lto_main.o", "ir.bc"]);
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.success(), ok, "{n} keys: {stderr}");
        if !ok {
            assert!(
                stderr.contains("ir.bc") && stderr.contains("more COMDAT groups than an object can hold"),
                "{stderr}"
            );
        }
    }
    tmp.finish();
}
