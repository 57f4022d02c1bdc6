use super::help::{accepted_options, z_keywords};
use super::*;

fn p(args: &[&str]) -> Result<Config> {
    parse(args.iter().map(OsString::from).collect())
}

#[test]
fn help_lists_what_parses_and_what_libtool_looks_for() {
    let help = usage();
    // libtool's test for a GNU linker that can build shared libraries.
    assert!(help.lines().any(|l| l.contains(": supported targets:") && l.contains(" elf")), "{help}");
    for probe in
        ["--version-script", "--as-needed", "--no-whole-archive", "--gc-sections", "--build-id", "--hash-style"]
    {
        assert!(help.contains(probe), "--help does not mention {probe}");
    }
    assert!(help.contains(" relro"), "-z relro");
    assert!(help.contains("--emit-relocs") && help.contains("--audit=VALUE"), "{help}");
    assert!(help.contains("-run COMMAND") && help.contains("--shuffle-sections[=VALUE]"), "{help}");
    // The ignored options, with their reason, and the -z keywords that take a value.
    assert!(help.contains("  -fuse-ld=NAME: a compiler driver's option"), "{help}");
    assert!(help.contains(" max-page-size=VALUE ") && help.contains(" x86-64-v4 "), "{help}");
}

/// A name declared by two entries would be read by the first only: each is declared once.
#[test]
fn each_name_declared_once() {
    let mut names: Vec<&str> = all().flat_map(|o| o.names.iter().copied()).collect();
    let all = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all, "an option name is declared twice");
    let mut z: Vec<&str> = z::Z_OPTIONS.iter().flat_map(|z| z.names.iter().copied()).collect();
    let all = z.len();
    z.sort_unstable();
    z.dedup();
    assert_eq!(z.len(), all, "a -z keyword is declared twice");
    assert_eq!(accepted_options().iter().filter(|o| *o == "-o VALUE" || *o == "--output=VALUE").count(), 2);
    assert!(z_keywords().iter().any(|k| k == "cet-report=VALUE"));
}

/// The spellings GNU ld accepts: one or two dashes, `=` or the next argument, a one-letter
/// option's value glued on, and a whole name never read as a letter and a glued value.
#[test]
fn one_option_every_spelling() {
    for args in [&["--soname=x"][..], &["-soname=x"], &["-soname", "x"], &["--soname", "x"], &["-hx"], &["-h", "x"]] {
        assert_eq!(p(args).unwrap().soname.as_deref(), Some("x"), "{args:?}");
    }
    for args in [&["-zrelro"][..], &["-z", "relro"], &["--z", "relro"], &["-z=relro"]] {
        assert!(p(args).unwrap().relro, "{args:?}");
    }
    assert_eq!(p(&["-L=/sys"]).unwrap().lib_paths, [PathBuf::from("=/sys")]);
    assert_eq!(p(&["--L=/sys"]).unwrap().lib_paths, [PathBuf::from("/sys")]);
    let c = p(&["-static", "-emit-relocs"]).unwrap();
    assert!(c.static_link && c.emit_relocs && c.strip == Strip::None && c.entry.is_none());
    assert_eq!(p(&["-e", "mit"]).unwrap().entry.as_deref(), Some("mit"));
    // A flag takes no value, and a name with a value never reads one.
    assert_eq!(p(&["--gc-sections=x"]).unwrap_err().to_string(), "unknown command line option: --gc-sections=x");
    assert_eq!(p(&["-Mfoo"]).unwrap_err().to_string(), "unknown command line option: -Mfoo");
    assert_eq!(p(&["--build-id", "md5"]).unwrap().build_id, BuildId::Default);
    assert_eq!(p(&["--build-id=md5"]).unwrap().build_id, BuildId::Md5);
    assert_eq!(p(&["--soname"]).unwrap_err().to_string(), "-soname: missing argument");
    assert_eq!(p(&["-zbogus"]).unwrap().warnings, ["unknown -z value: bogus (unknown command line option: -zbogus)"]);
    // What reproduce.rs asks: does the next argument belong to this one?
    assert!(takes_separate_value("-o") && takes_separate_value("--soname") && takes_separate_value("-dynamic-linker"));
    assert!(!takes_separate_value("--build-id") && !takes_separate_value("-lc") && !takes_separate_value("-o=x"));
    assert!(!takes_separate_value("-static") && !takes_separate_value("a.o"));
}

#[test]
fn gcc_default_link_line() {
    let c = p(&[
        "-plugin",
        "/usr/lib/gcc/x86_64-linux-gnu/12/liblto_plugin.so",
        "-plugin-opt=/usr/lib/gcc/x86_64-linux-gnu/12/lto-wrapper",
        "-plugin-opt=-pass-through=-lgcc",
        "--build-id",
        "--eh-frame-hdr",
        "-m",
        "elf_x86_64",
        "--hash-style=gnu",
        "--as-needed",
        "-dynamic-linker",
        "/lib64/ld-linux-x86-64.so.2",
        "-pie",
        "-o",
        "out",
        "Scrt1.o",
        "-L/usr/lib",
        "main.o",
        "-lgcc",
        "--push-state",
        "--as-needed",
        "-lgcc_s",
        "--pop-state",
        "-lc",
        "crtn.o",
    ])
    .unwrap();
    assert!(c.pie && !c.static_link && c.eh_frame_hdr);
    assert_eq!(c.build_id, BuildId::Default);
    assert_eq!(c.hash_style, HashStyle::Gnu);
    assert_eq!(c.output, PathBuf::from("out"));
    assert_eq!(c.dynamic_linker.as_deref(), Some("/lib64/ld-linux-x86-64.so.2"));
    assert_eq!(c.plugin_opts.len(), 2);
    assert_eq!(c.lib_paths, vec![PathBuf::from("/usr/lib")]);
    let as_needed = InputState { as_needed: true, ..Default::default() };
    assert_eq!(c.inputs[2], InputArg::Library { name: "gcc".into(), state: as_needed });
    assert_eq!(c.inputs[3], InputArg::Library { name: "gcc_s".into(), state: as_needed });
    assert_eq!(c.inputs[4], InputArg::Library { name: "c".into(), state: as_needed });
}

#[test]
fn static_and_static_pie() {
    let c =
        p(&["-static", "-pie", "--no-dynamic-linker", "-z", "text", "--start-group", "-lgcc", "-lc", "--end-group"])
            .unwrap();
    assert!(c.static_link && c.pie && c.no_dynamic_linker && c.textrel == TextRel::Error);
    assert_eq!(c.inputs[0], InputArg::GroupStart);
    assert!(matches!(&c.inputs[1], InputArg::Library { state, .. } if state.static_only));
    assert_eq!(c.inputs[3], InputArg::GroupEnd);
    let c = p(&["-Bstatic", "-lfoo", "-Bdynamic", "-lbar"]).unwrap();
    assert!(!c.static_link);
    assert!(p(&["--allow-multiple-definition"]).unwrap().allow_multiple_definition);
    let c = p(&["--export-dynamic-symbol=foo*", "--export-dynamic-symbol", "bar", "--export-dynamic-symbol-list=l"])
        .unwrap();
    assert_eq!(c.export_dynamic_symbols, ["foo*", "bar"]);
    assert_eq!(c.export_dynamic_symbol_lists, [PathBuf::from("l")]);
    assert!(p(&["-z", "muldefs"]).unwrap().allow_multiple_definition);
    assert!(!p(&["-z", "muldefs", "--no-allow-multiple-definition"]).unwrap().allow_multiple_definition);
    // -static inside --push-state/--pop-state only changes how -l searches there.
    let c = p(&["--push-state", "-static", "-lfoo", "--pop-state", "-lbar"]).unwrap();
    assert!(!c.static_link);
    assert!(matches!(&c.inputs[0], InputArg::Library { state, .. } if state.static_only));
    assert!(matches!(&c.inputs[1], InputArg::Library { state, .. } if !state.static_only));
    assert!(p(&["-static", "--push-state", "--pop-state"]).unwrap().static_link);
    assert!(matches!(&c.inputs[0], InputArg::Library { state, .. } if state.static_only));
    assert!(matches!(&c.inputs[1], InputArg::Library { state, .. } if !state.static_only));
}

#[test]
fn spellings() {
    let c = p(&[
        "--static",
        "-ofile",
        "-lc",
        "-l",
        "m",
        "-l:libz.a",
        "-zrelro",
        "-z",
        "now",
        "-melf_x86_64",
        "-e",
        "start",
        "--entry=go",
    ])
    .unwrap();
    assert!(c.static_link && c.now && c.relro);
    assert_eq!(c.output, PathBuf::from("file"));
    assert_eq!(c.entry.as_deref(), Some("go"));
    let libs: Vec<&str> = c
        .inputs
        .iter()
        .filter_map(|i| if let InputArg::Library { name, .. } = i { Some(name.as_str()) } else { None })
        .collect();
    assert_eq!(libs, ["c", "m", ":libz.a"]);
    let c = p(&["-shared", "-soname", "libx.so.1", "-rpath", "/opt", "-s", "-gc-sections", "--gc-sections"]).unwrap();
    assert!(c.shared && c.gc_sections);
    assert_eq!(c.soname.as_deref(), Some("libx.so.1"));
    assert_eq!(c.rpath, vec!["/opt"]);
    assert_eq!(c.strip, Strip::All);
    let c = p(&["--build-id=0xdeadBEEF", "--threads=3", "-O1", "-z", "max-page-size=0x200000"]).unwrap();
    assert_eq!(c.build_id, BuildId::Hex(vec![0xde, 0xad, 0xbe, 0xef]));
    assert_eq!((c.threads, c.opt_level, c.max_page_size), (Some(3), 1, 0x200000));
    let c = p(&["-icf=safe", "--print-icf-sections"]).unwrap();
    assert_eq!((c.icf, c.print_icf_sections), (Icf::Safe, true));
    let c = p(&["--icf", "all", "-print-icf-sections", "--no-print-icf-sections"]).unwrap();
    assert_eq!((c.icf, c.print_icf_sections), (Icf::All, false));
}

#[test]
fn last_of_shared_and_pie_and_runpath_and_z_keywords() {
    let c = p(&["-shared", "-pie"]).unwrap();
    assert!(c.pie && !c.shared);
    let c = p(&["-pie", "-shared"]).unwrap();
    assert!(c.shared && !c.pie);
    let c = p(&["-rpath", "/a:/b", "-R", "/b", "-rpath", "/c", "-rpath=/a", "-R/c"]).unwrap();
    assert_eq!(c.runpath().as_deref(), Some("/a:/b:/c"));
    assert_eq!(p(&[]).unwrap().runpath(), None);
    assert_eq!(p(&["-fuse-ld=mold", "-o", "x"]).unwrap().auxiliaries, Vec::<String>::new());
    assert_eq!(p(&["-f", "aux"]).unwrap().auxiliaries, ["aux"]);
    let c = p(&["-z", "x86-64-v4", "-z", "x86-64-v3", "-z", "nosectionheader", "-z", "rewrite-endbr"]).unwrap();
    assert_eq!((c.isa_level, c.no_section_headers, c.rewrite_endbr), (3, true, true));
    let c = p(&["-z", "execstack", "-z", "execstack-if-needed"]).unwrap();
    assert_eq!((c.execstack, c.execstack_if_needed), (false, true));
    assert_eq!(p(&[]).unwrap().hash_style, HashStyle::Both);
    assert_eq!(p(&["--hash-style=none"]).unwrap().hash_style, HashStyle::None);
    assert!(p(&["-Ttext-segment=0x400000"]).unwrap().ttext_segment);
    assert!(p(&["-r", "-z", "nosectionheader", "a.o"]).unwrap().validate().is_err());
}

#[test]
fn section_addresses_are_hex() {
    let c = p(&["-Ttext=401000", "-Tdata", "0x600000", "--section-start=.rodata=0x500000", "-Ttext-segment=1000000"])
        .unwrap();
    assert_eq!(
        c.section_starts,
        [(".text".to_string(), 0x401000), (".data".to_string(), 0x600000), (".rodata".to_string(), 0x500000)]
    );
    assert_eq!(c.image_base, Some(0x1000000));
    assert!(p(&["-Tbss=zz"]).unwrap_err().to_string().contains("zz"));
    assert!(p(&["--section-start=.text"]).unwrap_err().to_string().contains("SECTION=ADDRESS"));
    assert_eq!(p(&["--sort-section=alignment"]).unwrap().sort_section, Some(SortSection::Alignment));
    assert!(p(&["--sort-section=size"]).unwrap_err().to_string().contains("size"));
}

#[test]
fn ordering_and_audit_options() {
    let c = p(&["--audit=a", "--audit", "b", "-P", "c", "--depaudit=d", "-Pe"]).unwrap();
    assert_eq!(
        (c.audit, c.depaudit),
        (vec!["a".to_string(), "b".into()], vec!["c".to_string(), "d".into(), "e".into()])
    );
    let c = p(&["--shuffle-sections=42", "--shuffle-sections=.text.*=-1", "--reverse-sections"]).unwrap();
    assert_eq!(
        c.section_shuffles,
        [
            SectionShuffle { glob: None, order: ShuffleOrder::Seed(42) },
            SectionShuffle { glob: Some(".text.*".into()), order: ShuffleOrder::Reverse },
            SectionShuffle { glob: None, order: ShuffleOrder::Reverse },
        ]
    );
    assert!(matches!(p(&["-shuffle-sections"]).unwrap().section_shuffles[0].order, ShuffleOrder::Seed(_)));
    assert!(p(&["--shuffle-sections=*=x"]).unwrap_err().to_string().contains("'x'"));
    assert_eq!(p(&["--section-align=.foo=0x2000"]).unwrap().section_align, [(".foo".to_string(), 0x2000)]);
    assert!(p(&["--section-align=.foo=3"]).unwrap_err().to_string().contains("must be a power of 2"));
    assert!(p(&["--section-align=.foo"]).is_err());
    let c = p(&["--symbol-ordering-file", "o.txt", "--no-warn-symbol-ordering", "--warn-backrefs"]).unwrap();
    assert_eq!(c.symbol_ordering_file, Some(PathBuf::from("o.txt")));
    assert!(!c.warn_symbol_ordering && c.warn_backrefs);
}

#[test]
fn errors_name_the_option() {
    assert_eq!(p(&["--frobnicate"]).unwrap_err().to_string(), "unknown command line option: --frobnicate");
    assert_eq!(p(&["-o"]).unwrap_err().to_string(), "-o: missing argument");
    assert!(p(&["-m", "elf_i386"]).unwrap_err().to_string().contains("elf_i386"));
    // An unknown -z keyword is a warning (as in GNU ld and lld), not an error.
    assert_eq!(
        p(&["-z", "bogus"]).unwrap().warnings,
        ["unknown -z value: bogus (unknown command line option: -z bogus)"]
    );
    assert_eq!(p(&["-z", "start-stop-visibility=hidden"]).unwrap().start_stop_visibility, object::elf::STV_HIDDEN);
    assert_eq!(p(&[]).unwrap().start_stop_visibility, object::elf::STV_PROTECTED);
    assert!(!p(&[]).unwrap().export_start_stop, "protected by default, but not asked for");
    assert!(p(&["-z", "start-stop-visibility=protected"]).unwrap().export_start_stop);
    assert_eq!(
        p(&["-z", "start-stop-visibility=local"]).unwrap_err().to_string(),
        "unknown -z start-stop-visibility= value: local"
    );
    assert!(p(&["--pop-state"]).unwrap_err().to_string().contains("--push-state"));
    assert!(p(&["--build-id=0xabc"]).is_err());
    assert_eq!(p(&["-T", "script.ld"]).unwrap().inputs, [InputArg::Script { path: "script.ld".into() }]);
}

#[test]
fn response_files() {
    let d = std::env::temp_dir().join(format!("rivet-args-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let inner = d.join("inner.rsp");
    std::fs::write(&inner, "-lm 'a b.o' \"c\\\"d.o\"").unwrap();
    let outer = d.join("outer.rsp");
    std::fs::write(&outer, format!("-o out\n@{}\n x.o", inner.display())).unwrap();
    let c = p(&[&format!("@{}", outer.display())]).unwrap();
    assert_eq!(c.output, PathBuf::from("out"));
    let files: Vec<String> = c
        .inputs
        .iter()
        .filter_map(|i| if let InputArg::File { path, .. } = i { Some(path.display().to_string()) } else { None })
        .collect();
    assert_eq!(files, ["a b.o", "c\"d.o", "x.o"]);
    let looping = d.join("loop.rsp");
    std::fs::write(&looping, format!("@{}", looping.display())).unwrap();
    assert!(p(&[&format!("@{}", looping.display())]).unwrap_err().to_string().contains("includes itself"));
    assert!(p(&["@/nonexistent.rsp"]).unwrap_err().to_string().contains("cannot open response file"));
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn output_form_options() {
    let c = p(&["-o", "out/prog", "--separate-debug-file", "a.o"]).unwrap();
    assert_eq!(c.debug_file_path(), Some(PathBuf::from("out/prog.dbg")));
    assert!(c.detaches());
    let c = p(&["--separate-debug-file=x.debug", "--no-detach", "a.o"]).unwrap();
    assert_eq!((c.debug_file_path(), c.detaches()), (Some(PathBuf::from("x.debug")), false));
    // Reports on the link itself keep it in the foreground.
    assert!(!p(&["--separate-debug-file", "--print-timing", "a.o"]).unwrap().detaches());
    // --fork (the default) forks whatever the debug file; --no-fork only for a detached one.
    assert!(p(&["a.o"]).unwrap().forks() && !p(&["--no-fork", "a.o"]).unwrap().forks());
    assert!(p(&["--no-fork", "--separate-debug-file", "a.o"]).unwrap().forks());
    assert!(!p(&["--print-timing", "a.o"]).unwrap().forks() && !p(&["-o", "-", "a.o"]).unwrap().forks());
    let c = p(&["--separate-debug-file", "--no-separate-debug-file", "a.o"]).unwrap();
    assert_eq!(c.debug_file_path(), None);
    assert!(p(&["--separate-debug-file=", "a.o"]).is_err());
    assert!(p(&["--oformat=binary", "a.o"]).unwrap().oformat_binary);
    assert!(!p(&["--oformat", "elf64-x86-64", "a.o"]).unwrap().oformat_binary);
    assert!(p(&["--oformat=srec", "a.o"]).unwrap_err().to_string().contains("unknown format 'srec'"));
    let both = p(&["--oformat=binary", "--separate-debug-file", "a.o"]).unwrap();
    assert!(both.validate().is_err());
    for flag in ["-n", "--nmagic", "-nmagic"] {
        assert!(p(&[flag, "a.o"]).unwrap().nmagic, "{flag}");
    }
    assert!(!p(&["-n", "--no-nmagic", "a.o"]).unwrap().nmagic);
    let level = |v: &str| p(&[&format!("--compress-debug-sections={v}"), "a.o"]).map(|c| c.compress_level);
    assert_eq!(level("zstd:22").unwrap(), Some(22));
    assert_eq!(level("zlib:0").unwrap(), Some(0));
    assert_eq!(level("zstd").unwrap(), None);
    for bad in ["zstd:0", "zstd:23", "zlib:10", "zlib:-1", "none:3"] {
        assert!(level(bad).is_err(), "{bad}");
    }
}

#[test]
fn response_text_never_panics() {
    let mut seed = 0x1234_5678_9abc_def1u64;
    for _ in 0..3000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let s: String = (0..(seed % 24)).map(|i| b"a '\"\\ \n-"[((seed >> (i * 2)) % 8) as usize] as char).collect();
        let _ = split_response_text(&s);
    }
}
