//! Relocation rules of x86-64 that need care: the general- and local-dynamic TLS sequences of
//! the large code model and of `-fno-plt`, relaxed in an executable as GNU ld relaxes them, and the
//! range checks of every relocation width. Each program is linked by GNU ld (plain gcc) and by the
//! linker under test (`gcc -B`); both run and must print the same.
mod common;

use common::*;
use common::{link_with as link, stderr_text as stderr};
use std::process::Command;

fn compile(tmp: &TempDir, name: &str, src: &str, args: &[&str]) {
    let path = tmp.join(name);
    std::fs::write(&path, src).unwrap();
    let obj = path.with_extension("o");
    must(Command::new("gcc").current_dir(&tmp.path).arg("-c").args(args).arg(&path).arg("-o").arg(obj));
}

fn run(tmp: &TempDir, exe: &str) -> String {
    let out = must(Command::new(tmp.join(exe)).current_dir(&tmp.path).env("LD_LIBRARY_PATH", &tmp.path));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Links with both linkers, runs both programs and checks they print `want`.
fn both_print(tmp: &TempDir, args: &[&str], want: &str) {
    for (ours, exe) in [(false, "ref"), (true, "exe")] {
        let o = link(tmp, ours, args, exe);
        assert!(o.status.success(), "link {exe} {args:?} failed:\n{}", stderr(&o));
        assert_eq!(run(tmp, exe), want, "{exe} {args:?}");
    }
}

const TLS_MAIN: &str = "#include <stdio.h>\n\
    extern _Thread_local int foo;\n\
    static _Thread_local int bar;\n\
    int *get_foo_addr(void) { return &foo; }\n\
    int *get_bar_addr(void) { return &bar; }\n\
    int get_lib(void);\n\
    int main(void) {\n\
      bar = 5;\n\
      printf(\"%d %d %d %d %d\\n\", *get_foo_addr(), *get_bar_addr(), foo, bar, get_lib());\n\
      return 0;\n\
    }\n";
const TLS_FOO: &str = "_Thread_local int foo = 3;\n";
const TLS_LIB: &str =
    "_Thread_local int in_lib = 7;\nint get_lib(void) { extern _Thread_local int in_lib; return in_lib; }\n";

/// General- and local-dynamic sequences of the large code model (`movabs $__tls_get_addr@PLTOFF,
/// %rax; add %rbx,%rax; call *%rax`) and of `-fno-plt` (`call *__tls_get_addr@GOTPCREL(%rip)`):
/// an executable relaxes them to local-exec, or general-dynamic to initial-exec for a shared
/// library's variable; a shared library keeps them. Both with and without --no-relax.
#[test]
fn tls_sequences_of_every_code_model() {
    let Some(tmp) = gcc_readelf_tmp("reloc-tls") else { return };
    for (flags, tag) in [
        (&["-mcmodel=large"][..], "large"),
        (&["-fno-plt"][..], "noplt"),
        (&["-mcmodel=large", "-fno-plt"][..], "largenoplt"),
    ] {
        for model in ["global-dynamic", "local-dynamic"] {
            let mut args = vec!["-fPIC", "-O1", "-mtls-dialect=gnu"];
            args.extend(flags);
            let tls = format!("-ftls-model={model}");
            args.push(&tls);
            compile(&tmp, "main.c", TLS_MAIN, &args);
            compile(&tmp, "foo.c", TLS_FOO, &args);
            compile(&tmp, "lib.c", TLS_LIB, &args);
            // The library is linked by the linker under test too: its sequences are kept.
            let o = link(&tmp, true, &["-shared", "lib.o", "-mcmodel=large"], "libt.so");
            assert!(o.status.success(), "{tag} {model}: {}", stderr(&o));
            for extra in [&[][..], &["-Wl,--no-relax"][..]] {
                let mut link_args = vec!["main.o", "foo.o", "-L.", "-lt", "-Wl,-rpath,$ORIGIN"];
                link_args.extend(extra);
                both_print(&tmp, &link_args, "3 5 3 5 7\n");
            }
            // The executable keeps no call to __tls_get_addr: every sequence was rewritten.
            let dis = must(Command::new("objdump").arg("-d").arg(tmp.join("exe")));
            let dis = String::from_utf8_lossy(&dis.stdout);
            let main_code: String = dis.lines().skip_while(|l| !l.contains("<get_foo_addr>:")).take(40).collect();
            assert!(!main_code.contains("tls_get_addr"), "{tag} {model}:\n{main_code}");
        }
    }
    tmp.finish();
}

/// CREL relocations (clang `-Wa,--crel`, section type 0x40000014) are read wherever RELA ones
/// are: the same source compiled with CREL and with RELA links to programs that print the same,
/// and the debug info relocated through CREL names `main`.
#[test]
fn crel_objects_link_as_rela_ones() {
    let Some(tmp) = gcc_readelf_tmp("reloc-crel") else { return };
    if !have("clang") {
        eprintln!("skipped: clang missing");
        return;
    }
    let src = "#include <stdio.h>\nstatic int data[4] = {1, 2, 3, 4};\nint *p = &data[2];\n\
        int main(void) { printf(\"%d %d\\n\", *p, data[1]); return 0; }\n";
    std::fs::write(tmp.join("a.c"), src).unwrap();
    let crel = Command::new("clang")
        .current_dir(&tmp.path)
        .args(["-c", "-g", "-fPIE", "-Wa,--crel,--allow-experimental-crel", "a.c", "-o", "crel.o"])
        .output()
        .unwrap();
    if !crel.status.success() {
        eprintln!("skipped: clang cannot write CREL");
        return;
    }
    let sections = must(Command::new("readelf").arg("-SW").arg(tmp.join("crel.o")));
    assert!(String::from_utf8_lossy(&sections.stdout).contains(".crel.text"), "no CREL section");
    must(Command::new("clang").current_dir(&tmp.path).args(["-c", "-g", "-fPIE", "a.c", "-o", "rela.o"]));
    for obj in ["crel.o", "rela.o"] {
        let o = link(&tmp, true, &[obj], "exe");
        assert!(o.status.success(), "{obj}: {}", stderr(&o));
        assert_eq!(run(&tmp, "exe"), "3 2\n", "{obj}");
        let info = must(Command::new("readelf").arg("--debug-dump=info").arg(tmp.join("exe")));
        assert!(String::from_utf8_lossy(&info.stdout)
            .lines()
            .any(|l| l.contains("DW_AT_name") && l.ends_with(": main")));
    }
    tmp.finish();
}

/// TLS descriptors (`-mtls-dialect=gnu2`): an executable relaxes them, except that under
/// `--no-relax` a dynamically linked one keeps the general-dynamic ones for the loader to fill
/// (R_X86_64_TLSDESC, as mold does); local-dynamic ones (against `_TLS_MODULE_BASE_`) and static
/// executables are always relaxed. Every variant prints what GNU ld's build prints.
#[test]
fn tls_descriptors_kept_under_no_relax() {
    let Some(tmp) = gcc_readelf_tmp("reloc-tlsdesc") else { return };
    for model in ["global-dynamic", "local-dynamic"] {
        let tls = format!("-ftls-model={model}");
        let args = ["-fPIC", "-O1", "-mtls-dialect=gnu2", tls.as_str()];
        compile(&tmp, "main.c", TLS_MAIN, &args);
        compile(&tmp, "foo.c", TLS_FOO, &args);
        compile(&tmp, "lib.c", TLS_LIB, &args);
        let o = link(&tmp, true, &["-shared", "lib.o"], "libt.so");
        assert!(o.status.success(), "{model}: {}", stderr(&o));
        let dynrel = |exe: &str| {
            let o = must(Command::new("readelf").args(["-rW"]).arg(tmp.join(exe)));
            String::from_utf8_lossy(&o.stdout).contains("R_X86_64_TLSDESC")
        };
        for extra in [&[][..], &["-Wl,--no-relax"][..]] {
            let mut link_args = vec!["main.o", "foo.o", "-L.", "-lt", "-Wl,-rpath,$ORIGIN"];
            link_args.extend(extra);
            both_print(&tmp, &link_args, "3 5 3 5 7\n");
            // `foo` is defined in another object, so both models reach it through a
            // general-dynamic descriptor; `bar`'s local-dynamic one is relaxed.
            let kept = !extra.is_empty();
            assert_eq!(dynrel("exe"), kept && testing_rivet(), "{model} {extra:?}");
        }
        // Static: no loader, always relaxed.
        both_print(&tmp, &["-static", "main.o", "foo.o", "lib.o", "-Wl,--no-relax"], "3 5 3 5 7\n");
    }
    tmp.finish();
}

/// `-z dynamic-undefined-weak` leaves an undefined weak symbol to the loader; a non-PIC
/// executable that holds its address in its own code could not get it filled in, so rivet refuses
/// (as mold does) where GNU ld writes 0 and drops the option's promise. Without the option both
/// link it to 0 and print the same.
#[test]
fn dynamic_undefined_weak_in_non_pic_code() {
    let Some(tmp) = gcc_readelf_tmp("reloc-dynweak") else { return };
    let src = "#include <stdio.h>\n__attribute__((weak)) extern int foo;\nint main(void) { printf(\"%p\\n\", (void *)&foo); return 0; }\n";
    compile(&tmp, "w.c", src, &["-fno-PIE"]);
    both_print(&tmp, &["w.o", "-no-pie"], "(nil)\n");
    let o = link(&tmp, true, &["w.o", "-no-pie", "-Wl,-z,dynamic-undefined-weak"], "dw");
    assert!(!o.status.success() && !tmp.join("dw").exists());
    if testing_rivet() {
        let e = stderr(&o);
        assert!(e.contains("cannot create a copy relocation for foo") && e.contains("w.o:(main)"), "{e}");
    }
    // Position-independent code reaches it through the GOT: linked, and the loader fills it.
    compile(&tmp, "p.c", src, &["-fPIE"]);
    both_print(&tmp, &["p.o", "-pie", "-Wl,-z,dynamic-undefined-weak"], "(nil)\n");
    tmp.finish();
}
