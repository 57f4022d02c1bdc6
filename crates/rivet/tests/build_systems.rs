//! Real build systems driving the linker under test as gcc's `ld` (through `-B`), each with an `ld`
//! wrapper that logs every output it is asked for, so that a test knows the links were ours:
//! - an autotools project with libtool: libtool decides from `ld --help` and `ld -v` whether the
//!   linker is a GNU ld that can build shared libraries; a linker it does not recognise loses the
//!   project its shared library without a word;
//! - a CMake project with a chain of three shared libraries: CMake passes `-rpath-link` by itself;
//!   once with the linker in `CMAKE_C_FLAGS`, once in `CMAKE_EXE_LINKER_FLAGS` and
//!   `CMAKE_SHARED_LINKER_FLAGS`;
//! - the compiler drivers' routes: `gcc -B DIR`, `gcc -fuse-ld=mold -B DIR` with `DIR/ld.mold`,
//!   `clang --ld-path=`, and cargo through `.cargo/config.toml`.
//!
//! Where no wrapper logs the links, each output's `.comment` says which linker made it.
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

/// True when `file`'s `.comment` names rivet as its linker.
fn linked_by_rivet(file: &std::path::Path) -> bool {
    let o = must(Command::new("readelf").args(["-p", ".comment"]).arg(file));
    String::from_utf8_lossy(&o.stdout).contains("Linker: rivet ")
}

#[test]
fn cmake_linker_flags_reach_every_link() {
    if !testing_rivet() || !have("cmake") || !have("make") || !have("gcc") || !have("readelf") {
        eprintln!("skipped: cmake, make, gcc or readelf missing");
        return;
    }
    let tmp = TempDir::new("cmake-flags");
    let src = tmp.join("src");
    std::fs::create_dir_all(&src).unwrap();
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
    let dir = linker_dir(&tmp);
    let build = tmp.join("build");
    std::fs::create_dir_all(&build).unwrap();
    must(
        Command::new("cmake")
            .current_dir(&build)
            .arg(&src)
            .arg(format!("-DCMAKE_EXE_LINKER_FLAGS=-B{}", dir.display()))
            .arg(format!("-DCMAKE_SHARED_LINKER_FLAGS=-B{}", dir.display()))
            .env("CC", "gcc"),
    );
    must(Command::new("make").current_dir(&build));
    for out in ["liba.so", "libb.so", "libc_.so", "app"] {
        assert!(linked_by_rivet(&build.join(out)), "{out} was not linked by rivet");
    }
    let run = must(&mut Command::new(build.join("app")));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "111\n");
    tmp.finish();
}

#[test]
fn compiler_driver_routes() {
    if !testing_rivet() || !have("gcc") || !have("readelf") {
        eprintln!("skipped: gcc or readelf missing");
        return;
    }
    let tmp = TempDir::new("driver-routes");
    std::fs::write(tmp.join("hello.c"), "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n").unwrap();
    // -fuse-ld=mold: collect2 runs DIR/ld.mold, and DIR holds no `ld`.
    let mold_dir = tmp.join("mold-bin");
    std::fs::create_dir_all(&mold_dir).unwrap();
    std::os::unix::fs::symlink(linker(), mold_dir.join("ld.mold")).unwrap();
    let b = format!("-B{}", linker_dir(&tmp).display());
    let mold_b = format!("-B{}", mold_dir.display());
    let ld_path = format!("--ld-path={}", linker().display());
    let mut routes: Vec<(&str, Vec<&str>)> =
        vec![("gcc", vec![b.as_str()]), ("gcc", vec!["-fuse-ld=mold", mold_b.as_str()])];
    if have("clang-19") {
        routes.push(("clang-19", vec![ld_path.as_str()]));
    }
    for (i, (cc, args)) in routes.iter().enumerate() {
        let out = tmp.join(&format!("hello{i}"));
        must(Command::new(cc).current_dir(&tmp.path).args(args).arg("hello.c").arg("-o").arg(&out));
        assert!(linked_by_rivet(&out), "{cc} {args:?} did not link with rivet");
        assert_eq!(String::from_utf8_lossy(&must(&mut Command::new(&out)).stdout), "hello\n");
    }
    tmp.finish();
}

#[test]
fn cargo_config_toml_selects_rivet() {
    if !testing_rivet() || !have("cargo") || !have("cc") || !have("readelf") {
        eprintln!("skipped: cargo, cc or readelf missing");
        return;
    }
    let tmp = TempDir::new("cargo-config");
    let proj = tmp.join("hello");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::create_dir_all(proj.join(".cargo")).unwrap();
    std::fs::write(proj.join("Cargo.toml"), "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
        .unwrap();
    std::fs::write(proj.join("src/main.rs"), "fn main() { println!(\"hello from rust\"); }\n").unwrap();
    let dir = linker_dir(&tmp);
    std::fs::write(
        proj.join(".cargo/config.toml"),
        format!(
            "[target.x86_64-unknown-linux-gnu]\nrustflags = [\"-C\", \"linker-features=-lld\", \"-C\", \"link-arg=-B{}\"]\n",
            dir.display()
        ),
    )
    .unwrap();
    let target = tmp.join("target");
    must(
        Command::new("cargo")
            .current_dir(&proj)
            .args(["build", "--offline", "--quiet", "--target", "x86_64-unknown-linux-gnu", "--target-dir"])
            .arg(&target)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_RUSTFLAGS"),
    );
    let exe = target.join("x86_64-unknown-linux-gnu/debug/hello");
    assert!(linked_by_rivet(&exe), "cargo did not link with rivet");
    assert_eq!(String::from_utf8_lossy(&must(&mut Command::new(&exe)).stdout), "hello from rust\n");
    tmp.finish();
}
