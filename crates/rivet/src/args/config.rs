//! The configuration the command line gives: every option rivet understands, in a plain structure
//! the rest of the linker reads.
use super::kinds::*;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// `-o` (default `a.out`).
    pub output: PathBuf,
    /// `-o` was given (a script's `OUTPUT` does not replace it).
    pub output_given: bool,
    pub inputs: Vec<InputArg>,
    /// `-L DIR`, in command-line order.
    pub lib_paths: Vec<PathBuf>,
    /// `-static` appeared: the output is a static executable (static-PIE with `-pie`). `-Bstatic`
    /// alone only changes how `-l` searches, as rustc uses it.
    pub static_link: bool,
    /// `-pie` / `--pic-executable` (false after `-no-pie` / `--no-pic-executable`).
    pub pie: bool,
    /// `-shared` / `-Bshareable`.
    pub shared: bool,
    /// `-dynamic-linker PATH` / `--dynamic-linker=PATH` / `-I PATH`.
    pub dynamic_linker: Option<String>,
    /// `--no-dynamic-linker`.
    pub no_dynamic_linker: bool,
    /// `-e SYM` / `--entry=SYM`.
    pub entry: Option<String>,
    /// `--build-id` (= sha1), `--build-id=STYLE`; None when not given.
    pub build_id: BuildId,
    /// `--package-metadata=JSON` (`%XX` escapes decoded): the `.note.package` descriptor.
    pub package_metadata: Option<Vec<u8>>,
    /// `--eh-frame-hdr` / `--no-eh-frame-hdr`.
    pub eh_frame_hdr: bool,
    /// `-z relro` (default true, as Debian's ld) / `-z norelro`.
    pub relro: bool,
    /// `-z now` / `-z lazy`.
    pub now: bool,
    /// What a text relocation (a dynamic relocation of a read-only section) gets: `-z text` makes
    /// it an error, `-z notext` allows it quietly, `--warn-textrel` (GNU ld's default) warns.
    pub textrel: TextRel,
    /// `--orphan-handling=place|warn|error|discard`.
    pub orphan_handling: OrphanHandling,
    /// `-z mark-plt` / `-z nomark-plt` (GNU ld 2.41, default off): the target's PLT tags
    /// (`Arch::MARK_PLT_TAGS`) and the PLT entries' addresses as the JUMP_SLOT relocations'
    /// addends.
    pub mark_plt: bool,
    /// `-z execstack` / `-z noexecstack` (default false).
    pub execstack: bool,
    /// `-z execstack-if-needed` (mold's): the stack is executable when an input object asks for
    /// it with an executable `.note.GNU-stack` (which the link otherwise ignores, as lld does).
    /// `-z execstack` and `-z noexecstack` after it undo it.
    pub execstack_if_needed: bool,
    /// `-z gnustack` (the default) / `-z nognustack`: whether the output has a PT_GNU_STACK
    /// program header (without one, the kernel's default for the stack applies; lld's option).
    pub gnustack: bool,
    /// `-z separate-code` (default true on x86-64 Linux, false on AArch64, as GNU ld) /
    /// `-z noseparate-code`.
    pub separate_code: bool,
    /// `-z max-page-size=N` (default 4096): segments' addresses are congruent to their file
    /// offsets modulo this, and PT_LOAD's alignment.
    pub max_page_size: u64,
    /// `-z common-page-size=N` (default 4096, at most the maximum page size): the page that file
    /// offsets of segments and the end of RELRO are rounded to.
    pub common_page_size: u64,
    /// Which of the target's defaults the command line overrode (`-z max-page-size`, `-z
    /// common-page-size`, `-z [no]separate-code`): the others are the link's target's, settled
    /// once the target is known (`Config::for_target`).
    pub target_defaults_given: TargetDefaultsGiven,
    /// `-z separate-loadable-segments`: every PT_LOAD starts on a maximum-size page in the file too.
    pub separate_loadable_segments: bool,
    /// `--hash-style=` (default both, as Debian's GNU ld and lld; gcc passes gnu).
    pub hash_style: HashStyle,
    /// `-soname NAME` / `-h NAME` / `--soname=NAME`.
    pub soname: Option<String>,
    /// `-rpath DIR` / `-R DIR` (repeatable; joined with ':' in the output, each directory once:
    /// `runpath()`).
    pub rpath: Vec<String>,
    /// `-rpath-link DIR`.
    pub rpath_link: Vec<String>,
    /// `--enable-new-dtags` (default true on Debian: DT_RUNPATH) / `--disable-new-dtags`.
    pub new_dtags: bool,
    /// `-E` / `--export-dynamic` (false after `--no-export-dynamic`).
    pub export_dynamic: bool,
    /// `--gc-sections` / `--no-gc-sections`.
    pub gc_sections: bool,
    /// `--print-gc-sections` (Some(None): on stderr) / `--print-gc-sections=FILE` (lld's form: into
    /// FILE, `-` for standard output) / `--no-print-gc-sections`.
    pub print_gc_sections: Option<Option<PathBuf>>,
    /// `--why-live=GLOB` (lld's option, repeatable): why the matching symbols survived
    /// `--gc-sections`, on standard output.
    pub why_live: Vec<String>,
    /// `--print-icf-sections`: each class of folded sections, in lld's words.
    pub print_icf_sections: bool,
    /// `-s`/`--strip-all`, `-S`/`--strip-debug`.
    pub strip: Strip,
    /// `--print-timing` (also `--time`): the per-phase table.
    pub print_timing: bool,
    /// `--time-trace` (None: off; Some(None): default file OUTPUT.time-trace.json; Some(Some(f))).
    pub time_trace: Option<Option<PathBuf>>,
    /// `--stats`.
    pub stats: bool,
    /// `--mmap-output-file` (Some(true)) / `--no-mmap-output-file` (Some(false)); None: automatic.
    pub mmap_output: Option<bool>,
    /// `--reuse-output` (Some(true): also for `-shared`) / `--no-reuse-output` (Some(false));
    /// None: the previous output is rewritten in place when that is safe, not for `-shared`.
    pub reuse_output: Option<bool>,
    /// `--populate-output` (Some(true)) / `--no-populate-output` (Some(false)); None: the I/O
    /// policy's choice (off). Even when asked, not where the policy says it must not be done.
    pub populate_output: Option<bool>,
    /// `--fsync` (default false).
    pub fsync: bool,
    /// `--incremental`: the link keeps a state beside the output and is skipped when nothing
    /// changed since the last (`incremental.rs`).
    pub incremental: bool,
    /// `-nostdlib`: only `-L` directories are searched for `-l`.
    pub nostdlib: bool,
    /// `-v`/`--verbose` (print version and continue, and explain choices).
    pub verbose: bool,
    /// `--version` / `-V`: print version and exit 0 (with no inputs).
    pub print_version: bool,
    /// `--help`: print usage and exit 0.
    pub print_help: bool,
    /// `--threads=N` / `--threads N`; `--no-threads` = 1.
    pub threads: Option<usize>,
    /// `-u SYM` / `--undefined=SYM`.
    pub undefined: Vec<String>,
    /// `--require-defined=SYM`.
    pub require_defined: Vec<String>,
    /// `--version-script=FILE` / `--version-script FILE`.
    pub version_scripts: Vec<PathBuf>,
    /// `--dynamic-list=FILE`.
    pub dynamic_lists: Vec<PathBuf>,
    /// `--dynamic-list-data` (GNU ld): every defined data symbol is in the dynamic list, as if a
    /// `--dynamic-list` named each one.
    pub dynamic_list_data: bool,
    /// `--export-dynamic-symbol-list=FILE` (dynamic-list syntax) and `--export-dynamic-symbol=GLOB`:
    /// matching definitions are exported, without making the others bind locally as a
    /// `--dynamic-list` does in a shared library (lld's semantics).
    pub export_dynamic_symbol_lists: Vec<PathBuf>,
    pub export_dynamic_symbols: Vec<String>,
    /// Whether undefined symbols referenced by the objects are reported, the last of these options
    /// deciding (as in lld): Some(true) for `--no-undefined`, `-z defs`,
    /// `--unresolved-symbols=report-all|ignore-in-shared-libs`; Some(false) for `-z undefs`,
    /// `--unresolved-symbols=ignore-all|ignore-in-object-files`; None: reported unless `-shared`.
    pub no_undefined: Option<bool>,
    /// `--allow-shlib-undefined` (Some(true)) / `--no-allow-shlib-undefined` (Some(false)); the
    /// `--unresolved-symbols=` values set it too (the last option deciding, as in lld).
    pub allow_shlib_undefined: Option<bool>,
    /// `--warn-unresolved-symbols` (true) / `--error-unresolved-symbols` (false): the undefined
    /// symbols that are reported are warnings, and the link goes on.
    pub warn_unresolved: bool,
    /// `--error-limit=N`: errors printed before stopping (0: all). lld's default, 20.
    pub error_limit: usize,
    /// `--demangle` (default) / `--no-demangle`: C++ names in diagnostics are demangled.
    pub demangle: bool,
    /// A version script's exact name that no definition has: `--no-undefined-version` makes it
    /// an error (Some(true)), `--undefined-version` says nothing (Some(false)); by default (None)
    /// it is a warning (lld errs, GNU ld is silent; a name that exports nothing is worth a word).
    pub no_undefined_version: Option<bool>,
    /// `-Bsymbolic`, `-Bsymbolic-functions`, `-Bsymbolic-non-weak(-functions)`, `-Bno-symbolic`
    /// (the last given wins, as in lld).
    pub symbolic: Symbolic,
    /// DT_FLAGS_1 bits asked for with `-z` (`initfirst`, `interpose`, `nodefaultlib`, `origin`,
    /// `nodelete`, `nodlopen`, `global`).
    pub dt_flags_1: u32,
    /// `-z stack-size=N`: PT_GNU_STACK's size (the main thread's stack size to ask for).
    pub stack_size: u64,
    /// `-z rodynamic`: `.dynamic` read-only (the loader then does not write DT_DEBUG).
    pub rodynamic: bool,
    /// `-z copyreloc` (default) / `-z nocopyreloc`: whether an executable may copy a library's
    /// variable into itself.
    pub copy_relocations: bool,
    /// `-z ibt` (`-z force-ibt`), `-z shstk`: mark the output IBT / SHSTK-compatible whatever the
    /// inputs say. `-z ibt` also makes the PLT IBT-enabled.
    pub z_ibt: bool,
    pub z_shstk: bool,
    /// `--fix-cortex-a53-843419` (AArch64): code sequences that trigger Cortex-A53 erratum
    /// 843419 are rewritten.
    pub fix_cortex_a53_843419: bool,
    /// `-z ibtplt`: an IBT-enabled PLT (`.plt` lazy stubs and `.plt.sec` entries with `endbr64`).
    pub ibt_plt: bool,
    /// `-z pack-relative-relocs` / `--pack-dyn-relocs=relr`: RELATIVE relocations go to `.relr.dyn`.
    pub pack_relative_relocs: bool,
    /// `--pack-dyn-relocs=android` / `android+relr`: `.rela.dyn` in Android's packed format (APS2).
    pub pack_android_relocs: bool,
    /// `--use-android-relr-tags`: DT_ANDROID_RELR* instead of DT_RELR*.
    pub android_relr_tags: bool,
    /// `-z cet-report=none|warning|error`: how objects missing IBT or SHSTK are reported.
    pub cet_report: FeatureReport,
    /// `-z force-bti` (AArch64): mark the output BTI-compatible whatever the inputs say, warning
    /// about each object that is not (unless `-z bti-report` reports them).
    pub z_force_bti: bool,
    /// `-z bti-report=none|warning|error` (AArch64): how objects missing BTI are reported.
    pub bti_report: FeatureReport,
    /// `-z pac-plt` (AArch64): PLT entries authenticate the address they load (`autia1716`), and
    /// the output is marked PAC (lld's rule).
    pub z_pac_plt: bool,
    /// `-z gcs=implicit|always|never` (AArch64): the output's Guarded Control Stack bit.
    pub z_gcs: GcsPolicy,
    /// `-z gcs-report=none|warning|error` (AArch64): how objects missing GCS are reported.
    pub gcs_report: FeatureReport,
    /// `--allow-multiple-definition` / `-z muldefs`: a second strong definition of a symbol is not
    /// an error; the first one (in command-line order) is used, as in GNU ld and lld.
    pub allow_multiple_definition: bool,
    /// `--relax` (default) / `--no-relax`: GOTPCRELX loads may be rewritten to skip the GOT.
    /// (TLS sequences are relaxed in executables whatever it says, as in lld.)
    pub relax: bool,
    /// `-init SYM` / `-fini SYM`: DT_INIT / DT_FINI (default `_init` / `_fini`), set only when the
    /// output defines the symbol.
    pub init: String,
    pub fini: String,
    /// `-plugin PATH`: the LTO plugin (gcc's liblto_plugin.so, LLVMgold.so), loaded when an input
    /// holds compiler IR (`lto/`); `-plugin-opt OPT` / `-plugin-opt=OPT` (and `-mllvm OPT`, lld's
    /// spelling for LLVM's options) are its options, in command-line order.
    pub plugin: Option<String>,
    pub plugin_opts: Vec<String>,
    /// `-m EMULATION`: one `machine::Machine::for_emulation` knows (checked by the parser); it picks
    /// the target.
    pub emulation: Option<String>,
    /// `-O N` (0..=3, default 1 as in lld): 0 turns off merging of SHF_MERGE sections.
    pub opt_level: u8,
    /// `-Map FILE` / `-Map=FILE` / `--Map=FILE`.
    pub map_file: Option<PathBuf>,
    /// `--fatal-warnings` / `--no-fatal-warnings`.
    pub fatal_warnings: bool,
    /// `-w` / `--no-warnings`: print no warnings, and never make one an error (it cancels
    /// `--fatal-warnings`, as in GNU ld and lld).
    pub no_warnings: bool,
    /// Warnings about the command line, printed when the link starts: an unknown `-z` keyword
    /// (GNU ld and lld warn and go on).
    pub warnings: Vec<String>,
    /// `--color-diagnostics[=auto|always|never]` / `--no-color-diagnostics`: Some(true|false), None=auto.
    pub color_diagnostics: Option<bool>,
    /// `--sysroot=DIR`.
    pub sysroot: Option<PathBuf>,
    /// `--reproduce=FILE`.
    pub reproduce: Option<PathBuf>,
    /// `--wrap=SYM` / `--wrap SYM`.
    pub wrap: Vec<String>,
    /// `--defsym=SYM=EXPR`, parsed.
    pub defsym: Vec<crate::expr::Defsym>,
    /// `--exclude-libs=LIB,LIB` / `--exclude-libs LIBS`.
    pub exclude_libs: Vec<String>,
    /// `--icf=all|safe|none`.
    pub icf: Icf,
    /// `--compress-debug-sections=none|zlib|zstd`.
    pub compress_debug_sections: DebugCompression,
    /// `--compress-debug-sections=FORMAT:N`: the compression level (zlib 0-9, default 1, 6 with
    /// -O2; zstd 1-22, default 1).
    pub compress_level: Option<u8>,
    /// `--separate-debug-file[=FILE]`: the debug sections go to FILE (OUTPUT.dbg when no FILE is
    /// given), the output gets a `.gnu_debuglink` naming it. None: `--no-separate-debug-file`.
    pub separate_debug_file: Option<SeparateDebugFile>,
    /// `--detach` (default) / `--no-detach`: the separate debug file is written after the link has
    /// returned, by a process of its own.
    pub detach: bool,
    /// `--fork` (default) / `--no-fork` (mold's and wild's options): the link runs in a child
    /// process and the command returns as soon as the link is complete, without waiting for the
    /// process to tear down its memory and mappings.
    pub fork: bool,
    /// `--oformat=binary`: the raw image of the loaded sections, no ELF headers.
    pub oformat_binary: bool,
    /// `-n`/`--nmagic`: sections not page-aligned, segments not aligned in the file (lld's meaning).
    pub nmagic: bool,
    /// `--image-base=ADDR`, and `-Ttext-segment=ADDR`.
    pub image_base: Option<u64>,
    /// `-Ttext-segment=ADDR` was given (`image_base` holds it): a position-independent executable
    /// is then written as ET_EXEC, so that the kernel loads it at that address (an ET_DYN is
    /// placed wherever the kernel likes): GNU ld's rule, and mold's at address 0 too, where GNU ld
    /// keeps ET_DYN.
    pub ttext_segment: bool,
    /// `-Ttext=ADDR`, `-Tdata`, `-Tbss`, `--section-start=.NAME=ADDR`: output section name
    /// (with its dot) → address.
    pub section_starts: Vec<(String, u64)>,
    /// `--sort-section=name|alignment`.
    pub sort_section: Option<SortSection>,
    /// `--no-warn-mismatch`, `--warn-common`, ... flags that are checks only.
    pub no_warn_mismatch: bool,
    /// `--discard-all`/`-x`, `--discard-locals`/`-X`, `--discard-none`.
    pub discard: Discard,
    /// `--print-map` / `-M` to stdout.
    pub print_map: bool,
    /// `--trace` / `-t`: print each file that takes part in the link (objects, archive members as
    /// `archive.a(member.o)`, shared libraries) on stdout, as lld does.
    pub trace: bool,
    /// `--undefined-glob=PATTERN`: every symbol matching it that an archive member (or a
    /// `--start-lib` object) defines loads that member, as `-u` would.
    pub undefined_globs: Vec<String>,
    /// `--filter=NAME` / `-F NAME`, `--auxiliary=NAME` / `-f NAME`: DT_FILTER / DT_AUXILIARY.
    pub filters: Vec<String>,
    pub auxiliaries: Vec<String>,
    /// `--rosegment` (Some(true)): read-only data in a segment of its own, also under
    /// `-z noseparate-code`; `--no-rosegment` (Some(false)): read-only data shares the executable
    /// segment (lld's single RX segment). None: as `-z separate-code` decides (GNU ld's rule).
    pub rosegment: Option<bool>,
    /// `-N`/`--omagic`: one read-write-execute segment, sections not page-aligned, no RELRO
    /// (lld's and GNU ld's meaning).
    pub omagic: bool,
    /// `-r`/`--relocatable`: the output is an object for a later link (ET_REL).
    pub relocatable: bool,
    /// `-d`/`--define-common`: a relocatable output allocates common symbols in `.bss`.
    pub define_common: bool,
    /// `--gdb-index`: write a `.gdb_index` section from the inputs' DWARF.
    pub gdb_index: bool,
    /// `--noinhibit-exec`: unresolved symbols are warnings and the output is written.
    pub noinhibit_exec: bool,
    /// `--emit-relocs`/`-q`: keep the inputs' relocations in `.rela<name>` sections of the output.
    pub emit_relocs: bool,
    /// `--branch-to-branch` / `--no-branch-to-branch` (lld 21; None: on at `-O2` and above).
    pub branch_to_branch: Option<bool>,
    /// `--relocatable-merge-sections` (mold): with `-r`, input sections go into sections named as a
    /// final link names them (`.text.foo` into `.text`) rather than keeping their names.
    pub relocatable_merge_sections: bool,
    /// `--default-symver`: a shared library's unversioned definitions get its soname as version.
    pub default_symver: bool,
    /// `--retain-symbols-file=FILE`: `.symtab` lists only the global symbols named in FILE (one a
    /// line) and no local one; `.dynsym` is unchanged.
    pub retain_symbols_file: Option<PathBuf>,
    /// `-z [no]dynamic-undefined-weak`: whether undefined weak symbols are left to the dynamic
    /// loader (None: yes in shared libraries, no in executables).
    pub dynamic_undefined_weak: Option<bool>,
    /// `-z start-stop-visibility=V` (lld's default: protected): the visibility (STV_*) of the
    /// `__start_SEC`/`__stop_SEC` symbols the linker defines.
    pub start_stop_visibility: u8,
    /// `-z start-stop-visibility=protected` given (mold's meaning of asking for it): the
    /// `__start_SEC`/`__stop_SEC` pairs of every loaded section that has them are defined
    /// whether referenced or not, and exported, so that other modules can find the sections.
    pub export_start_stop: bool,
    /// `-z x86-64-baseline|v2|v3|v4` (GNU ld's; the last one given counts): the level, 1 for the
    /// baseline to 4 for v4, whose bit (GNU_PROPERTY_X86_ISA_1_*) is added to the output's
    /// GNU_PROPERTY_X86_ISA_1_NEEDED; 0: none.
    pub isa_level: u8,
    /// `-z nosectionheader` (lld's and mold's; `-z sectionheader` undoes it): the output has no
    /// section header table, and so neither `.shstrtab`, the symbol table nor any other section
    /// that is not loaded (nothing could find them).
    pub no_section_headers: bool,
    /// `-z rewrite-endbr` (mold's): the `endbr64` at the start of a global function whose address
    /// is never taken (only called or jumped to directly, not exported, not the entry point, init
    /// or fini) becomes a 4-byte nop, so that an indirect branch cannot land there under IBT.
    pub rewrite_endbr: bool,
    /// `-y SYM`/`--trace-symbol=SYM`: print each file's reference to or definition of SYM.
    pub trace_symbols: Vec<String>,
    /// `--why-extract=FILE`: why each archive member was fetched (`-`: stdout).
    pub why_extract: Option<PathBuf>,
    /// `--dependency-file=FILE`: a Makefile rule listing the inputs the link read.
    pub dependency_file: Option<PathBuf>,
    /// `--warn-common` / `--no-warn-common`: warn when a common symbol meets another common or a
    /// definition, in GNU ld's words.
    pub warn_common: bool,
    /// `-z keep-text-section-prefix`: `.text.hot.*`, `.text.unknown.*`, `.text.unlikely.*`,
    /// `.text.startup.*`, `.text.exit.*`, `.text.split.*` go to output sections of those names.
    pub keep_text_section_prefix: bool,
    /// `--audit=LIB` (DT_AUDIT) and `--depaudit=LIB` / `-P LIB` (DT_DEPAUDIT), in command-line
    /// order; each list is joined with ':' in the output, as GNU ld writes them.
    pub audit: Vec<String>,
    pub depaudit: Vec<String>,
    /// `--shuffle-sections[=SEED]` (mold), `--shuffle-sections=GLOB=SEED` (lld) and
    /// `--reverse-sections` (mold): how input sections are reordered within their output sections.
    pub section_shuffles: Vec<SectionShuffle>,
    /// `--randomize-section-padding=SEED` (lld 20): random padding before input sections and at
    /// the start of segments, the same for the same seed.
    pub randomize_padding: Option<u64>,
    /// `--section-align=NAME=ALIGN` (mold): the output section's alignment (a power of two).
    pub section_align: Vec<(String, u64)>,
    /// `--unique=PATTERN` (GNU ld, also `-unique=`): each input section whose name matches a glob
    /// gets an output section of its own, named as the input section.
    pub unique: Vec<String>,
    /// `--symbol-ordering-file=FILE`: input sections holding the listed symbols come first in
    /// their output sections, in the file's order (lld).
    pub symbol_ordering_file: Option<PathBuf>,
    /// `--section-ordering-file FILE` (GNU ld 2.43): output section descriptions whose input
    /// section patterns place the sections they match first in those output sections, in order.
    pub section_ordering_file: Option<PathBuf>,
    /// `--warn-symbol-ordering` (default) / `--no-warn-symbol-ordering`: warn about listed symbols
    /// that cannot order a section (lld's warnings).
    pub warn_symbol_ordering: bool,
    /// `--print-dependencies` (mold): which input section needs which other one for which symbol,
    /// on stdout.
    pub print_dependencies: bool,
    /// `--warn-backrefs` (lld): warn when an archive member is fetched by a reference from a file
    /// that comes after the archive (GNU ld would not fetch it); `--warn-backrefs-exclude=GLOB`
    /// silences it for the members (or `--start-lib` objects) whose names match.
    pub warn_backrefs: bool,
    /// `--warn-rwx-segments` (GNU ld's default) / `--no-warn-rwx-segments`: warn when a final
    /// link writes a PT_LOAD segment that is readable, writable and executable, or a PT_TLS
    /// segment that is executable.
    pub warn_rwx_segments: bool,
    pub warn_backrefs_exclude: Vec<String>,
    /// `--prefetch-inputs`/`--no-prefetch-inputs` and `--copy-method=` (None: the I/O layer's
    /// automatic choice, which `--io-strategy=auto` also names).
    pub prefetch_inputs: Option<bool>,
    pub copy_method: Option<rivet_io::CopyMethod>,
    /// Free the link's tables and mappings when `link` returns. The `rivet` binary leaves them to
    /// the kernel at exit (faster, mold's `--quick-exit`, the default); `--no-quick-exit` sets it,
    /// so that the process tears down what it built before it exits (what a leak checker run on
    /// the linker expects), and so do in-process callers that link many times (the fuzz targets).
    pub free_memory: bool,
    /// `--zero-to-bss` (mold): writable data input sections whose bytes are all zero and that
    /// have no relocations become SHT_NOBITS, taking no room in the file.
    pub zero_to_bss: bool,
    /// `--discard-section=NAME` (mold): input sections of that name are left out of the output;
    /// `--no-discard-section=NAME` takes NAME off the list again.
    pub discard_sections: Vec<String>,
    /// `--filler=BYTE` (mold): the output buffer is filled with BYTE before anything is written.
    /// Every byte of the output is written by rivet (padding is zeroed), so the output is the same
    /// whatever BYTE is; a byte left unwritten would show as BYTE.
    pub filler: Option<u8>,
    /// `--spare-program-headers=N` (mold): N PT_NULL entries after the program headers, for
    /// post-link tools to turn into segments.
    pub spare_program_headers: usize,
    /// `--start-stop` (mold): `__start_NAME` / `__stop_NAME` for every loaded output section,
    /// NAME being the section's name without its leading dot and with every character that is not
    /// a letter or digit made `_` (`.text` gives `__start_text`).
    pub start_stop: bool,
    /// `--execute-only` (mold's x86-64 meaning): executable segments are PF_X, without PF_R.
    pub execute_only: bool,
    /// `--physical-image-base=ADDR` (mold): the loaded segments' physical addresses (p_paddr)
    /// start there, and `__phys_start_NAME` / `__phys_stop_NAME` give each section's.
    pub physical_image_base: Option<u64>,
    /// `--section-order=SPEC` (mold): the order and addresses of the output sections.
    pub section_order: Vec<SectionOrderItem>,
    /// `-repro` / `--repro` (mold; also `MOLD_REPRO` set to a non-empty string): `--reproduce`
    /// into OUTPUT.repro.tar, whose entries are under `OUTPUT.repro/`.
    pub repro: bool,
    /// The command line after response-file expansion (for `--reproduce`).
    pub raw_args: Vec<String>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            output: PathBuf::from("a.out"),
            output_given: false,
            inputs: Vec::new(),
            lib_paths: Vec::new(),
            static_link: false,
            pie: false,
            shared: false,
            dynamic_linker: None,
            no_dynamic_linker: false,
            entry: None,
            build_id: BuildId::None,
            package_metadata: None,
            eh_frame_hdr: false,
            relro: true,
            now: false,
            textrel: TextRel::Warn,
            orphan_handling: OrphanHandling::Place,
            mark_plt: false,
            execstack: false,
            execstack_if_needed: false,
            gnustack: true,
            separate_code: true,
            max_page_size: crate::machine::Machine::DEFAULT.page_sizes().0,
            common_page_size: crate::machine::Machine::DEFAULT.page_sizes().1,
            target_defaults_given: TargetDefaultsGiven::default(),
            separate_loadable_segments: false,
            hash_style: HashStyle::Both,
            soname: None,
            rpath: Vec::new(),
            rpath_link: Vec::new(),
            new_dtags: true,
            export_dynamic: false,
            gc_sections: false,
            print_gc_sections: None,
            why_live: Vec::new(),
            print_icf_sections: false,
            strip: Strip::None,
            print_timing: false,
            time_trace: None,
            stats: false,
            mmap_output: None,
            reuse_output: None,
            populate_output: None,
            fsync: false,
            incremental: false,
            nostdlib: false,
            verbose: false,
            print_version: false,
            print_help: false,
            threads: None,
            undefined: Vec::new(),
            require_defined: Vec::new(),
            version_scripts: Vec::new(),
            dynamic_lists: Vec::new(),
            dynamic_list_data: false,
            export_dynamic_symbol_lists: Vec::new(),
            export_dynamic_symbols: Vec::new(),
            no_undefined: None,
            allow_shlib_undefined: None,
            warn_unresolved: false,
            error_limit: 20,
            demangle: true,
            no_undefined_version: None,
            symbolic: Symbolic::None,
            dt_flags_1: 0,
            stack_size: 0,
            rodynamic: false,
            relax: true,
            allow_multiple_definition: false,
            copy_relocations: true,
            z_ibt: false,
            fix_cortex_a53_843419: false,
            z_shstk: false,
            ibt_plt: false,
            pack_relative_relocs: false,
            android_relr_tags: false,
            pack_android_relocs: false,
            cet_report: Default::default(),
            z_force_bti: false,
            bti_report: Default::default(),
            z_pac_plt: false,
            z_gcs: Default::default(),
            gcs_report: Default::default(),
            init: "_init".to_string(),
            fini: "_fini".to_string(),
            plugin: None,
            plugin_opts: Vec::new(),
            emulation: None,
            opt_level: 1,
            map_file: None,
            fatal_warnings: false,
            no_warnings: false,
            warnings: Vec::new(),
            color_diagnostics: None,
            sysroot: None,
            reproduce: None,
            wrap: Vec::new(),
            defsym: Vec::new(),
            exclude_libs: Vec::new(),
            icf: Icf::None,
            compress_debug_sections: DebugCompression::None,
            compress_level: None,
            separate_debug_file: None,
            detach: true,
            fork: true,
            oformat_binary: false,
            nmagic: false,
            image_base: None,
            ttext_segment: false,
            section_starts: Vec::new(),
            sort_section: None,
            no_warn_mismatch: false,
            discard: Discard::Locals,
            print_map: false,
            trace: false,
            undefined_globs: Vec::new(),
            filters: Vec::new(),
            auxiliaries: Vec::new(),
            rosegment: None,
            omagic: false,
            relocatable: false,
            define_common: false,
            gdb_index: false,
            noinhibit_exec: false,
            emit_relocs: false,
            branch_to_branch: None,
            relocatable_merge_sections: false,
            default_symver: false,
            retain_symbols_file: None,
            dynamic_undefined_weak: None,
            start_stop_visibility: object::elf::STV_PROTECTED,
            export_start_stop: false,
            isa_level: 0,
            no_section_headers: false,
            rewrite_endbr: false,
            trace_symbols: Vec::new(),
            why_extract: None,
            dependency_file: None,
            warn_common: false,
            keep_text_section_prefix: false,
            audit: Vec::new(),
            depaudit: Vec::new(),
            section_shuffles: Vec::new(),
            randomize_padding: None,
            section_align: Vec::new(),
            unique: Vec::new(),
            symbol_ordering_file: None,
            section_ordering_file: None,
            warn_symbol_ordering: true,
            print_dependencies: false,
            warn_backrefs: false,
            warn_rwx_segments: true,
            warn_backrefs_exclude: Vec::new(),
            prefetch_inputs: None,
            copy_method: None,
            raw_args: Vec::new(),
            free_memory: false,
            zero_to_bss: false,
            discard_sections: Vec::new(),
            filler: None,
            spare_program_headers: 0,
            start_stop: false,
            execute_only: false,
            physical_image_base: None,
            section_order: Vec::new(),
            repro: false,
        }
    }
}

/// The command line's overrides of a target's defaults (`Config::target_defaults_given`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TargetDefaultsGiven {
    pub max_page_size: bool,
    pub common_page_size: bool,
    pub separate_code: bool,
}

impl Config {
    /// The configuration for a link whose target is `machine`: the defaults the command line did
    /// not override are that target's (the parser set the default target's): page sizes,
    /// `-z separate-code` (GNU ld's default: on for x86-64, off for AArch64) and, on AArch64,
    /// `--rosegment` (lld's layout). None when nothing changes.
    pub fn for_target(&self, machine: crate::machine::Machine) -> Option<Config> {
        let names = machine.names_of();
        let given = self.target_defaults_given;
        let separate_code = machine == crate::machine::Machine::X86_64;
        let mut c = self.clone();
        if !given.max_page_size {
            c.max_page_size = names.max_page_size;
        }
        if !given.common_page_size {
            c.common_page_size = names.common_page_size;
        }
        if !given.separate_code {
            c.separate_code = separate_code;
        }
        // AArch64 as lld lays it out: code and read-only data share pages in the file, but
        // read-only data is not executable (a segment of its own), unless `--no-rosegment`.
        if machine == crate::machine::Machine::Aarch64 && c.rosegment.is_none() {
            c.rosegment = Some(true);
        }
        (c != *self).then_some(c)
    }
}
