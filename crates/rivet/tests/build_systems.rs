//! Real build systems driving the linker under test as gcc's `ld` (through `-B`), each with an `ld`
//! wrapper that logs every output it is asked for, so that a test knows the links were ours:
//! - an autotools project with libtool: libtool decides from `ld --help` and `ld -v` whether the
//!   linker is a GNU ld that can build shared libraries; a linker it does not recognise loses the
//!   project its shared library without a word;
//! - a CMake project with a chain of three shared libraries: CMake passes `-rpath-link` by itself.
mod common;

use common::*;
use std::process::Command;

const CONFIGURE_AC: &str = "AC_INIT([greet], [1.0])\nAM_INIT_AUTOMAKE([foreign])\nLT_INIT\nAC_PROG_CC\n\
    AC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n";
const MAKEFILE_AM: &str = "lib_LTLIBRARIES = libgreet.la\nlibgreet_la_SOURCES = greet.c\n\
    bin_PROGRAMS = hello\nhello_SOURCES = main.c\nhello_LDADD = libgreet.la\n";

#[test]
fn libtool_builds_a_shared_library_through_us() {
    if !have("autoreconf") || !have("libtoolize") || !have("make") || !have("gcc") {
        eprintln!("skipped: autoconf, libtool, make or gcc missing");
        return;
    }
    let tmp = TempDir::new("autotools");
    let src = tmp.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("configure.ac"), CONFIGURE_AC).unwrap();
    std::fs::write(src.join("Makefile.am"), MAKEFILE_AM).unwrap();
    std::fs::write(src.join("greet.c"), "int greet(void) { return 42; }\n").unwrap();
    std::fs::write(
        src.join("main.c"),
        "#include <stdio.h>\nint greet(void);\nint main(void) { printf(\"%d\\n\", greet()); return 0; }\n",
    )
    .unwrap();
    let (bin, log) = (tmp.join("bin"), tmp.join("links.log"));
    logging_ld(&bin, &log);
    must(Command::new("autoreconf").arg("-fi").current_dir(&src));
    must(Command::new("./configure").current_dir(&src).env("CC", format!("gcc -B{}", bin.display())));
    let libtool = std::fs::read_to_string(src.join("libtool")).unwrap();
    // The first tag section is the default (C) configuration.
    let shared = libtool.lines().find(|l| l.starts_with("build_libtool_libs="));
    assert_eq!(shared, Some("build_libtool_libs=yes"), "libtool will build no shared library");
    assert!(libtool.lines().any(|l| l == "with_gnu_ld=\"yes\""), "libtool did not take us for a GNU ld");
    // libtool's exported-symbol lists become version scripts only when it believes the linker
    // supports anonymous version nodes (it reads the version number from `ld -v`).
    assert!(
        libtool.lines().any(|l| l.starts_with("archive_expsym_cmds=\"echo")),
        "libtool will link shared libraries without version scripts (supports_anon_versioning=no)"
    );
    must(Command::new("make").current_dir(&src));
    let linked = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(linked.lines().any(|l| l.contains("libgreet.so")), "the shared library was not linked by us:\n{linked}");
    assert!(src.join(".libs/libgreet.so.0").exists());
    // libtool's wrapper script runs the program against the uninstalled library.
    let run = must(Command::new("./hello").current_dir(&src));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "42\n");
    tmp.finish();
}

#[test]
fn cmake_builds_a_chain_of_shared_libraries_through_us() {
    if !have("cmake") || !have("make") || !have("gcc") {
        eprintln!("skipped: cmake, make or gcc missing");
        return;
    }
    let tmp = TempDir::new("cmake");
    let src = tmp.join("src");
    std::fs::create_dir_all(&src).unwrap();
    // app -> libc_ (public) -> libb (private) -> liba: linking app needs libb's dependency found
    // through -rpath-link, which CMake adds itself.
    std::fs::write(
        src.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.13)\nproject(chain C)\nadd_library(a SHARED a.c)\n\
         add_library(b SHARED b.c)\ntarget_link_libraries(b PRIVATE a)\nadd_library(c_ SHARED c.c)\n\
         target_link_libraries(c_ PUBLIC b)\nadd_executable(app main.c)\ntarget_link_libraries(app PRIVATE c_)\n",
    )
    .unwrap();
    std::fs::write(src.join("a.c"), "int a(void) { return 1; }\n").unwrap();
    std::fs::write(src.join("b.c"), "int a(void);\nint b(void) { return a() + 10; }\n").unwrap();
    std::fs::write(src.join("c.c"), "int b(void);\nint c(void) { return b() + 100; }\n").unwrap();
    std::fs::write(
        src.join("main.c"),
        "#include <stdio.h>\nint c(void);\nint main(void) { printf(\"%d\\n\", c()); return 0; }\n",
    )
    .unwrap();
    let (bin, log) = (tmp.join("bin"), tmp.join("links.log"));
    logging_ld(&bin, &log);
    let build = tmp.join("build");
    std::fs::create_dir_all(&build).unwrap();
    must(
        Command::new("cmake")
            .current_dir(&build)
            .arg(&src)
            .arg(format!("-DCMAKE_C_FLAGS=-B{}", bin.display()))
            .env("CC", "gcc"),
    );
    let made = must(Command::new("make").arg("VERBOSE=1").current_dir(&build));
    let commands = String::from_utf8_lossy(&made.stdout);
    assert!(commands.contains("-rpath-link"), "CMake passed no -rpath-link this time:\n{commands}");
    let linked = std::fs::read_to_string(&log).unwrap_or_default();
    for out in ["liba.so", "libb.so", "libc_.so", "app"] {
        assert!(linked.lines().any(|l| l.ends_with(out)), "{out} was not linked by us:\n{linked}");
    }
    let run = must(&mut Command::new(build.join("app")));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "111\n");
    tmp.finish();
}
