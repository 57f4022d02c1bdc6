//! Options about the output's contents and layout: sections kept, merged, ordered and placed
//! (`--gc-sections`, `--icf`, `-Ttext`, `--section-start`, `--shuffle-sections`), what is
//! stripped or added (`-s`, `--build-id`, `--eh-frame-hdr`, `--hash-style`), the output's form
//! (`--oformat`, `-N`, `-n`, `--separate-debug-file`, `--compress-debug-sections`).
use super::kinds::parse_section_order;
use super::kinds::*;
use super::options::Apply::{Flag, Optional, Parse, Set, Value};
use super::options::{ignored, opt, Opt};
use super::parse_number;
use super::values::{build_id, hex, one_of, percent_decoded, random_seed, shuffle};
use crate::{bail, ensure, fatal};
use std::path::PathBuf;

pub(super) static OPTIONS: &[Opt] = &[
    opt(
        &["O"],
        Parse(|p, _, v| {
            p.config.opt_level =
                v.parse().ok().filter(|&n| n <= 3).ok_or_else(|| fatal!("-O: bad optimisation level '{v}'"))?;
            Ok(())
        }),
    ),
    opt(&["gc-sections"], Set(|c| c.gc_sections = true)),
    opt(&["no-gc-sections"], Set(|c| c.gc_sections = false)),
    opt(
        &["print-gc-sections"],
        Optional(|c, v| {
            c.print_gc_sections = Some(v.map(PathBuf::from));
            Ok(())
        }),
    ),
    opt(&["no-print-gc-sections"], Set(|c| c.print_gc_sections = None)),
    opt(
        &["icf"],
        Parse(|p, _, v| {
            p.config.icf = match one_of("--icf", &v, &["all", "safe", "none"])? {
                "all" => Icf::All,
                "safe" => Icf::Safe,
                _ => Icf::None,
            };
            Ok(())
        }),
    ),
    // GNU ld's bare `--unique`: every orphan section apart. Which sections are orphans depends
    // on GNU ld's default script, which rivet has no copy of.
    opt(
        &["unique"],
        Optional(|c, v| {
            let Some(v) = v else {
                bail!("--unique without a pattern (every orphan section apart) is not supported; give --unique=PATTERN")
            };
            ensure!(!v.is_empty(), "--unique=: the section pattern is empty");
            c.unique.push(v);
            Ok(())
        }),
    ),
    opt(&["print-icf-sections"], Set(|c| c.print_icf_sections = true)),
    opt(&["no-print-icf-sections"], Set(|c| c.print_icf_sections = false)),
    opt(&["branch-to-branch"], Set(|c| c.branch_to_branch = Some(true))),
    opt(&["no-branch-to-branch"], Set(|c| c.branch_to_branch = Some(false))),
    opt(&["relax"], Set(|c| c.relax = true)),
    opt(&["no-relax"], Set(|c| c.relax = false)),
    opt(&["relocatable-merge-sections"], Set(|c| c.relocatable_merge_sections = true)),
    opt(&["zero-to-bss"], Set(|c| c.zero_to_bss = true)),
    opt(
        &["discard-section"],
        Value(|c, v| {
            if !c.discard_sections.contains(&v) {
                c.discard_sections.push(v)
            }
        }),
    ),
    opt(&["no-discard-section"], Value(|c, v| c.discard_sections.retain(|s| *s != v))),
    // What is kept of the symbol table and the debug information.
    opt(&["s", "strip-all"], Set(|c| c.strip = Strip::All)),
    opt(
        &["S", "strip-debug"],
        Set(|c| {
            if c.strip != Strip::All {
                c.strip = Strip::Debug
            }
        }),
    ),
    opt(&["x", "discard-all"], Set(|c| c.discard = Discard::All)),
    opt(&["X", "discard-locals"], Set(|c| c.discard = Discard::Locals)),
    opt(&["discard-none"], Set(|c| c.discard = Discard::None)),
    // Sections and tables the linker adds.
    opt(&["eh-frame-hdr"], Set(|c| c.eh_frame_hdr = true)),
    opt(&["no-eh-frame-hdr"], Set(|c| c.eh_frame_hdr = false)),
    opt(
        &["build-id"],
        Optional(|c, v| {
            c.build_id = match v {
                None => BuildId::Default,
                Some(v) => build_id(&v)?,
            };
            Ok(())
        }),
    ),
    opt(&["no-build-id"], Set(|c| c.build_id = BuildId::None)),
    opt(
        &["package-metadata"],
        Parse(|p, _, v| {
            p.config.package_metadata = Some(percent_decoded(&v)?);
            Ok(())
        }),
    ),
    opt(
        &["hash-style"],
        Parse(|p, _, v| {
            p.config.hash_style = match v.as_str() {
                "sysv" => HashStyle::Sysv,
                "gnu" => HashStyle::Gnu,
                "both" => HashStyle::Both,
                "none" => HashStyle::None,
                _ => bail!("--hash-style: unknown style '{v}' (sysv, gnu, both or none)"),
            };
            Ok(())
        }),
    ),
    opt(
        &["pack-dyn-relocs"],
        Parse(|p, _, v| {
            // Each value says both: RELATIVE relocations in `.relr.dyn` or not, `.rela.dyn`
            // packed (APS2) or not.
            (p.config.pack_relative_relocs, p.config.pack_android_relocs) = match v.as_str() {
                "none" => (false, false),
                "relr" => (true, false),
                "android" => (false, true),
                "android+relr" => (true, true),
                _ => bail!("--pack-dyn-relocs: unknown format '{v}' (none, relr, android or android+relr)"),
            };
            Ok(())
        }),
    ),
    opt(&["use-android-relr-tags"], Set(|c| c.android_relr_tags = true)),
    opt(&["no-use-android-relr-tags"], Set(|c| c.android_relr_tags = false)),
    opt(&["gdb-index"], Set(|c| c.gdb_index = true)),
    opt(&["no-gdb-index"], Set(|c| c.gdb_index = false)),
    opt(
        &["compress-debug-sections"],
        Parse(|p, _, v| {
            let c = &mut p.config;
            // `FORMAT:LEVEL`, as mold takes it.
            let (v, level) = match v.split_once(':') {
                Some((format, level)) => (format.to_string(), Some(level)),
                None => (v.clone(), None),
            };
            c.compress_level = match (v.as_str(), level) {
                (_, None) => None,
                ("zlib" | "zlib-gabi", Some(l)) => match l.parse::<u8>() {
                    Ok(n) if n <= 9 => Some(n),
                    _ => bail!("--compress-debug-sections: zlib level must be between 0 and 9, not '{l}'"),
                },
                ("zstd", Some(l)) => match l.parse::<u8>() {
                    Ok(n) if (1..=22).contains(&n) => Some(n),
                    _ => bail!("--compress-debug-sections: zstd level must be between 1 and 22, not '{l}'"),
                },
                (other, Some(_)) => bail!("--compress-debug-sections={other}: takes no level"),
            };
            c.compress_debug_sections =
                match one_of("--compress-debug-sections", &v, &["none", "zlib", "zstd", "zlib-gabi"])? {
                    "zlib" | "zlib-gabi" => DebugCompression::Zlib,
                    "zstd" => DebugCompression::Zstd,
                    _ => DebugCompression::None,
                };
            Ok(())
        }),
    ),
    // Addresses and placement.
    opt(
        &["image-base"],
        Parse(|p, _, v| {
            p.config.image_base = Some(parse_number(&v).ok_or_else(|| fatal!("--image-base: bad address '{v}'"))?);
            Ok(())
        }),
    ),
    opt(
        &["physical-image-base"],
        Parse(|p, _, v| {
            p.config.physical_image_base =
                Some(parse_number(&v).ok_or_else(|| fatal!("--physical-image-base: bad address '{v}'"))?);
            Ok(())
        }),
    ),
    opt(
        &["Ttext", "Tdata", "Tbss"],
        Parse(|p, name, v| {
            let addr = hex(&v).ok_or_else(|| fatal!("-{name}: bad address '{v}'"))?;
            p.config.section_starts.push((format!(".{}", &name[1..]), addr));
            Ok(())
        }),
    ),
    // GNU ld: the start of the text segment, i.e. the image base (as lld treats it).
    opt(
        &["Ttext-segment"],
        Parse(|p, name, v| {
            p.config.image_base = Some(hex(&v).ok_or_else(|| fatal!("-{name}: bad address '{v}'"))?);
            p.config.ttext_segment = true;
            Ok(())
        }),
    ),
    opt(
        &["section-start"],
        Parse(|p, _, v| {
            let (sec, addr) = v
                .split_once('=')
                .and_then(|(s, a)| Some((s, hex(a)?)))
                .ok_or_else(|| fatal!("--section-start: expected SECTION=ADDRESS, got '{v}'"))?;
            p.config.section_starts.push((sec.to_string(), addr));
            Ok(())
        }),
    ),
    opt(
        &["section-align"],
        Parse(|p, _, v| {
            let (sec, align) = v
                .split_once('=')
                .and_then(|(s, a)| Some((s, parse_number(a)?)))
                .filter(|(s, _)| !s.is_empty())
                .ok_or_else(|| fatal!("--section-align: expected SECTION=ALIGNMENT, got '{v}'"))?;
            ensure!(align.is_power_of_two(), "--section-align={v}: the alignment must be a power of 2");
            p.config.section_align.push((sec.to_string(), align));
            Ok(())
        }),
    ),
    opt(
        &["section-order"],
        Parse(|p, _, v| {
            p.config.section_order = parse_section_order(&v)?;
            Ok(())
        }),
    ),
    opt(
        &["sort-section"],
        Parse(|p, _, v| {
            p.config.sort_section = Some(match one_of("--sort-section", &v, &["name", "alignment"])? {
                "name" => SortSection::Name,
                _ => SortSection::Alignment,
            });
            Ok(())
        }),
    ),
    opt(&["symbol-ordering-file"], Value(|c, v| c.symbol_ordering_file = Some(PathBuf::from(v)))),
    opt(&["section-ordering-file"], Value(|c, v| c.section_ordering_file = Some(PathBuf::from(v)))),
    opt(&["warn-symbol-ordering"], Set(|c| c.warn_symbol_ordering = true)),
    opt(&["no-warn-symbol-ordering"], Set(|c| c.warn_symbol_ordering = false)),
    // mold: without a value, a seed of its own for every link.
    opt(
        &["shuffle-sections"],
        Optional(|c, v| {
            c.section_shuffles.push(match v {
                None => SectionShuffle { glob: None, order: ShuffleOrder::Seed(random_seed()) },
                Some(v) => shuffle(&v)?,
            });
            Ok(())
        }),
    ),
    opt(
        &["reverse-sections"],
        Set(|c| c.section_shuffles.push(SectionShuffle { glob: None, order: ShuffleOrder::Reverse })),
    ),
    opt(
        &["randomize-section-padding"],
        Parse(|p, _, v| {
            let seed = parse_number(&v)
                .ok_or_else(|| fatal!("--randomize-section-padding: expected a number (the seed), got '{v}'"))?;
            p.config.randomize_padding = Some(seed);
            Ok(())
        }),
    ),
    opt(
        &["orphan-handling"],
        Parse(|p, _, v| {
            p.config.orphan_handling = match one_of("--orphan-handling", &v, &["place", "warn", "error", "discard"])? {
                "warn" => OrphanHandling::Warn,
                "error" => OrphanHandling::Error,
                "discard" => OrphanHandling::Discard,
                _ => OrphanHandling::Place,
            };
            Ok(())
        }),
    ),
    opt(&["rosegment"], Set(|c| c.rosegment = Some(true))),
    opt(&["no-rosegment"], Set(|c| c.rosegment = Some(false))),
    opt(
        &["filler"],
        Parse(|p, _, v| {
            p.config.filler = Some(
                hex(&v)
                    .and_then(|b| u8::try_from(b).ok())
                    .ok_or_else(|| fatal!("--filler: expected a byte in hexadecimal (0x00 to 0xff), got '{v}'"))?,
            );
            Ok(())
        }),
    ),
    opt(
        &["spare-program-headers"],
        Parse(|p, _, v| {
            p.config.spare_program_headers = parse_number(&v)
                .and_then(|n| usize::try_from(n).ok())
                .filter(|&n| n <= 0xff00)
                .ok_or_else(|| fatal!("--spare-program-headers: expected a number of headers, got '{v}'"))?;
            Ok(())
        }),
    ),
    // The output's form. -N also links against static libraries from here on, as lld does
    // (-Bstatic).
    opt(
        &["N", "omagic"],
        Flag(|p| {
            p.config.omagic = true;
            p.state.static_only = true;
            Ok(())
        }),
    ),
    opt(&["no-omagic"], Set(|c| c.omagic = false)),
    // lld's -n: sections and segments are not page-aligned, each segment keeps its own
    // protection; static libraries only from here on, as with -N.
    opt(
        &["n", "nmagic"],
        Flag(|p| {
            p.config.nmagic = true;
            p.state.static_only = true;
            Ok(())
        }),
    ),
    opt(&["no-nmagic"], Set(|c| c.nmagic = false)),
    // GNU ld's BFD names for the targets' ELF (`Arch::OUTPUT_FORMATS`), and lld's raw binary.
    opt(
        &["oformat"],
        Parse(|p, _, v| {
            p.config.oformat_binary = match v.as_str() {
                "binary" => true,
                f if crate::machine::Machine::for_output_format(f).is_some() => false,
                _ => bail!("--oformat: unknown format '{v}' ({} or binary)", crate::machine::Machine::names().1),
            };
            Ok(())
        }),
    ),
    // Byte order: rivet's targets are little-endian.
    ignored(&["EL"], Set(|_| {}), "-EL", "asks for little-endian output, the only byte order rivet writes"),
    opt(&["EB"], Flag(|_| bail!("-EB: big-endian output is not supported (rivet links little-endian targets only)"))),
    // AArch64's Cortex-A53 erratum 843419 workaround (`arch::aarch64::erratum`).
    opt(&["fix-cortex-a53-843419"], Set(|c| c.fix_cortex_a53_843419 = true)),
    opt(
        &["separate-debug-file"],
        Optional(|c, v| {
            c.separate_debug_file = Some(match v {
                None => SeparateDebugFile::Default,
                Some(v) => {
                    ensure!(!v.is_empty(), "--separate-debug-file=: the file name is empty");
                    SeparateDebugFile::File(PathBuf::from(v))
                }
            });
            Ok(())
        }),
    ),
    opt(&["no-separate-debug-file"], Set(|c| c.separate_debug_file = None)),
    opt(&["noinhibit-exec"], Set(|c| c.noinhibit_exec = true)),
    opt(&["execute-only"], Set(|c| c.execute_only = true)),
    opt(&["warn-textrel", "warn-shared-textrel"], Set(|c| c.textrel = TextRel::Warn)),
];
