//! Text relocations (dynamic relocations of read-only sections), as GNU ld links them: allowed by
//! default with a warning, quiet under `-z notext`, an error under `-z text` (the last of these and
//! `--warn-textrel` wins). The same objects are linked by GNU ld (plain gcc) and by the linker under
//! test (`gcc -B`); both programs run and print the same, and both outputs carry DT_TEXTREL and
//! DF_TEXTREL. Covered: a PIE's own symbols (RELATIVE), a shared library's exported one (symbolic),
//! a library's variable that the executable copies, and an IFUNC.
mod common;

use common::*;
use common::{link_with as link, stderr_text as stderr};
use std::path::Path;
use std::process::Command;

/// Hand-written code without `-fPIC`: an absolute address in `.text`, loaded and called.
const ASM: &str = "\
.globl fn1
fn1:
  sub $8, %rsp
  movabs ptr, %rax
  call *%rax
  add $8, %rsp
  ret
.globl main_addr
main_addr:
  movabs $main, %rax
  ret
.section .note.GNU-stack,\"\",@progbits
";

const MAIN: &str = "#include <stdio.h>\n\
    int fn1(void); void *main_addr(void);\n\
    int fn2(void) { return 3; }\n\
    void *ptr = fn2;\n\
    static void hello(void) { puts(\"hello from a pointer in .text\"); }\n\
    __attribute__((section(\".text\"))) void (*p)(void) = hello;\n\
    int main(void) { p(); printf(\"%d %d\\n\", fn1(), main_addr() == (void *)main); return 0; }\n";

fn setup(name: &str) -> Option<TempDir> {
    let tmp = gcc_readelf_tmp(name)?;
    std::fs::write(tmp.join("a.s"), ASM).unwrap();
    std::fs::write(tmp.join("main.c"), MAIN).unwrap();
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "a.s", "-o", "a.o"]));
    must(Command::new("gcc").current_dir(&tmp.path).args(["-c", "-fPIE", "main.c"]));
    Some(tmp)
}

fn run(exe: &Path) -> String {
    let out = must(Command::new(exe).current_dir(exe.parent().unwrap()));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether the output has DT_TEXTREL and DF_TEXTREL.
fn textrel_tags(file: &Path) -> (bool, bool) {
    let out = must(Command::new("readelf").arg("-dW").arg(file));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (text.contains("(TEXTREL)"), text.lines().any(|l| l.contains("(FLAGS)") && l.contains("TEXTREL")))
}

fn relocations(file: &Path) -> String {
    String::from_utf8_lossy(&must(Command::new("readelf").arg("-rW").arg(file)).stdout).into_owned()
}

/// The dynamic relocations at addresses inside `.text`: (offset, type, symbol) as readelf prints them.
fn text_relocs(file: &Path) -> Vec<String> {
    let sections = String::from_utf8_lossy(&must(Command::new("readelf").arg("-SW").arg(file)).stdout).into_owned();
    let text = sections.lines().find(|l| l.contains(" .text ")).expect("a .text section");
    let fields: Vec<&str> = text.split_whitespace().collect();
    let at = fields.iter().position(|f| *f == ".text").unwrap();
    let addr = u64::from_str_radix(fields[at + 2], 16).unwrap();
    let size = u64::from_str_radix(fields[at + 4], 16).unwrap();
    relocations(file)
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let off = u64::from_str_radix(w.first()?, 16).ok()?;
            (w.len() > 2 && (addr..addr + size).contains(&off)).then(|| format!("{} {}", w[2], w.get(4).unwrap_or(&"")))
        })
        .collect()
}

/// A PIE with text relocations links as GNU ld links it: it runs the same, has DT_TEXTREL and
/// DF_TEXTREL, its RELATIVE relocations of `.text` stay in `.rela.dyn` even with
/// `-z pack-relative-relocs`, and both linkers warn naming the symbol and the section.
#[test]
fn pie_with_text_relocations_runs_as_gnu_ld_builds_it() {
    let Some(tmp) = setup("textrel-pie") else { return };
    let inputs = ["-pie", "a.o", "main.o"];
    let gnu = link(&tmp, false, &inputs, "gnu");
    let ours = link(&tmp, true, &inputs, "ours");
    assert!(gnu.status.success(), "{}", stderr(&gnu));
    assert!(ours.status.success(), "{}", stderr(&ours));
    assert!(stderr(&gnu).contains("creating DT_TEXTREL in a PIE"), "{}", stderr(&gnu));
    if testing_rivet() {
        let e = stderr(&ours);
        assert!(e.contains("warning: a.o: relocation against symbol `ptr' in read-only section `.text'"), "{e}");
        assert!(e.contains("warning: creating a DT_TEXTREL in an output file (a PIE)"), "{e}");
    }
    let (g, o) = (tmp.join("gnu"), tmp.join("ours"));
    assert_eq!(run(&o), run(&g));
    assert_eq!(run(&o), "hello from a pointer in .text\n3 1\n");
    assert_eq!(textrel_tags(&g), (true, true));
    assert_eq!(textrel_tags(&o), (true, true));
    // ptr, main, and p's pointer in .text: three RELATIVE relocations, as GNU ld makes.
    let want = vec!["R_X86_64_RELATIVE ".to_string(); 3];
    assert_eq!(text_relocs(&g), want);
    assert_eq!(text_relocs(&o), want);
    // RELR packs only relocations of writable sections (mold's rule; GNU ld packs text ones too).
    if !testing_rivet() {
        return tmp.finish();
    }
    let packed = link(&tmp, true, &["-pie", "a.o", "main.o", "-Wl,-z,pack-relative-relocs"], "packed");
    assert!(packed.status.success(), "{}", stderr(&packed));
    assert!(relocations(&tmp.join("packed")).contains(".relr.dyn"));
    assert_eq!(text_relocs(&tmp.join("packed")), want);
    assert_eq!(run(&tmp.join("packed")), run(&g));
    tmp.finish();
}

/// `-z notext` links quietly, `-z text` refuses (lld's words, naming the symbol, where it is
/// defined and where it is used, with no output left), and the last of `-z text`, `-z notext`
/// and `--warn-textrel` (`-warn-shared-textrel`) wins, in GNU ld as here.
#[test]
fn z_text_z_notext_and_warn_textrel() {
    let Some(tmp) = setup("textrel-z") else { return };
    for (flags, outcome) in [
        (&["-Wl,-z,notext"][..], "quiet"),
        (&["-Wl,-z,text"][..], "error"),
        (&["-Wl,-z,text", "-Wl,-z,notext"][..], "quiet"),
        (&["-Wl,-z,notext", "-Wl,-z,text"][..], "error"),
        (&["-Wl,-z,notext", "-Wl,--warn-textrel"][..], "warn"),
        (&["-Wl,-z,text", "-Wl,-warn-shared-textrel"][..], "warn"),
    ] {
        let mut args = vec!["-pie", "a.o", "main.o"];
        args.extend(flags);
        for ours in [false, true] {
            let name = if ours { "ours" } else { "gnu" };
            let _ = std::fs::remove_file(tmp.join(name));
            let out = link(&tmp, ours, &args, name);
            let e = stderr(&out);
            let what = format!("{name} {flags:?}");
            assert_eq!(out.status.success(), outcome != "error", "{what}: {e}");
            assert_eq!(e.contains("DT_TEXTREL"), outcome == "warn", "{what}: {e}");
            if outcome == "error" {
                assert!(!tmp.join(name).exists(), "{what}: an output was left");
                if ours && testing_rivet() {
                    assert!(
                        e.contains(
                            "error: can't create dynamic relocation R_X86_64_64 against symbol: ptr in readonly segment; \
                             recompile object files with -fPIC or pass '-Wl,-z,notext' to allow text relocations in the output\n\
                             >>> defined in main.o\n>>> referenced by a.o:(.text+0x6)"
                        ),
                        "{what}: {e}"
                    );
                }
            } else {
                assert_eq!(textrel_tags(&tmp.join(name)), (true, true), "{what}");
                assert_eq!(run(&tmp.join(name)), "hello from a pointer in .text\n3 1\n", "{what}");
            }
        }
    }
    tmp.finish();
}

/// A shared library whose hand-written code takes the address of its own exported (so
/// preemptible) variable: a symbolic R_X86_64_64 in `.text`, as GNU ld writes it, which the
/// loader binds to the executable's copy of the variable. Also: a position-independent executable
/// reading a library's variable through such code gets the copy too, and an IFUNC's address
/// taken in `.text` is the one C code sees.
#[test]
fn shared_library_copy_relocation_and_ifunc() {
    let Some(tmp) = setup("textrel-shared") else { return };
    let sh = |args: &[&str]| must(Command::new("gcc").current_dir(&tmp.path).args(args));
    std::fs::write(
        tmp.join("lib.s"),
        ".globl counter_addr\ncounter_addr:\n  movabs $counter, %rax\n  ret\n.section .note.GNU-stack,\"\",@progbits\n",
    )
    .unwrap();
    std::fs::write(tmp.join("libc.c"), "int counter = 41;\nint bump(void) { return ++counter; }\n").unwrap();
    std::fs::write(
        tmp.join("app.c"),
        "#include <stdio.h>\nextern int counter; int *counter_addr(void); int bump(void);\n\
         int main(void) { counter += 100; int b = bump(); printf(\"%d %d %d\\n\", b, *counter_addr(), counter_addr() == &counter); return 0; }\n",
    )
    .unwrap();
    sh(&["-c", "lib.s", "-o", "lib.o"]);
    sh(&["-c", "-fPIC", "libc.c", "-o", "libc.o"]);
    sh(&["-c", "-fPIE", "app.c"]);
    for ours in [false, true] {
        let dir = if ours { "ours" } else { "gnu" };
        std::fs::create_dir_all(tmp.join(dir)).unwrap();
        let lib = format!("{dir}/libt.so");
        let out = link(&tmp, ours, &["-shared", "lib.o", "libc.o"], &lib);
        assert!(out.status.success(), "{dir}: {}", stderr(&out));
        assert!(stderr(&out).contains("DT_TEXTREL in a"), "{dir}: {}", stderr(&out));
        assert_eq!(textrel_tags(&tmp.join(&lib)), (true, true), "{dir}");
        assert_eq!(text_relocs(&tmp.join(&lib)), vec!["R_X86_64_64 counter".to_string()], "{dir}");
        let exe = format!("{dir}/app");
        let rpath = format!("-Wl,-rpath,{}", tmp.join(dir).display());
        let out = link(&tmp, ours, &["-pie", "app.o", &format!("-L{dir}"), "-lt", &rpath], &exe);
        assert!(out.status.success(), "{dir}: {}", stderr(&out));
        assert_eq!(run(&tmp.join(&exe)), "142 142 1\n", "{dir}");
        assert!(relocations(&tmp.join(&exe)).contains("R_X86_64_COPY"), "{dir}: the variable is copied");
    }
    // The executable's own text relocation against the library's variable: symbolic, bound to
    // the copy (GNU ld and rivet alike), run against the same library.
    std::fs::write(
        tmp.join("get.s"),
        ".globl get\nget:\n  movabs $counter, %rax\n  movl (%rax), %eax\n  ret\n.section .note.GNU-stack,\"\",@progbits\n",
    )
    .unwrap();
    std::fs::write(
        tmp.join("use.c"),
        "#include <stdio.h>\nextern int counter; int get(void);\n\
         int main(void) { counter = 7; printf(\"%d\\n\", get()); return 0; }\n",
    )
    .unwrap();
    sh(&["-c", "get.s", "-o", "get.o"]);
    sh(&["-c", "-fPIE", "use.c"]);
    let rpath = format!("-Wl,-rpath,{}", tmp.join("gnu").display());
    for ours in [false, true] {
        let name = if ours { "ours-use" } else { "gnu-use" };
        let out = link(&tmp, ours, &["-pie", "use.o", "get.o", "-Lgnu", "-lt", &rpath], name);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(run(&tmp.join(name)), "7\n", "{name}");
        assert_eq!(text_relocs(&tmp.join(name)), vec!["R_X86_64_64 counter".to_string()], "{name}");
        assert!(relocations(&tmp.join(name)).contains("R_X86_64_COPY"), "{name}");
    }
    // An IFUNC's address in `.text`: GNU ld writes an IRELATIVE there (and warns that it may
    // crash); rivet points a RELATIVE at the IFUNC's canonical PLT entry, the address C code
    // compares with. Both programs call it and agree.
    std::fs::write(
        tmp.join("ifn.c"),
        "static int impl(void) { return 5; }\nstatic void *res(void) { return impl; }\n\
         int f(void) __attribute__((ifunc(\"res\")));\n",
    )
    .unwrap();
    std::fs::write(
        tmp.join("getf.s"),
        ".globl getf\ngetf:\n  movabs $f, %rax\n  ret\n.section .note.GNU-stack,\"\",@progbits\n",
    )
    .unwrap();
    std::fs::write(
        tmp.join("ifmain.c"),
        "#include <stdio.h>\nint f(void); void *getf(void);\n\
         int main(void) { printf(\"%d %d\\n\", ((int (*)(void))getf())(), getf() == (void *)f); return 0; }\n",
    )
    .unwrap();
    sh(&["-c", "-fPIE", "ifn.c", "ifmain.c"]);
    sh(&["-c", "getf.s", "-o", "getf.o"]);
    for ours in [false, true] {
        let name = if ours { "ours-ifunc" } else { "gnu-ifunc" };
        let out = link(&tmp, ours, &["-pie", "ifn.o", "getf.o", "ifmain.o"], name);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(run(&tmp.join(name)), "5 1\n", "{name}");
        assert_eq!(textrel_tags(&tmp.join(name)), (true, true), "{name}");
    }
    if testing_rivet() {
        assert_eq!(text_relocs(&tmp.join("ours-ifunc")), vec!["R_X86_64_RELATIVE ".to_string()]);
    }
    tmp.finish();
}
