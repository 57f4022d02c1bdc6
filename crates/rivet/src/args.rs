//! The GNU ld command line. Takes argv (with `@response` files expanded) and gives a `Config`: every
//! option rivet understands, in a plain structure the rest of the linker reads. Options are accepted
//! with one or two dashes and `--opt=value` / `--opt value` / `-ovalue` spellings as GNU ld accepts them.
use crate::diag::{Context, Result};
use crate::{bail, ensure, fatal};
use std::ffi::OsString;
use std::path::PathBuf;

/// Per-input state that `-Bstatic`, `--as-needed`, `--whole-archive` and `--push-state/--pop-state`
/// change as the command line is read left to right.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputState {
    pub as_needed: bool,
    pub whole_archive: bool,
    /// `-Bstatic` (also `-static`, `-dn`, `-non_shared`): `-l` finds only `lib*.a`.
    pub static_only: bool,
    /// Between `--start-lib` and `--end-lib`: an object is loaded only when it defines a symbol
    /// that is needed, as an archive member is.
    pub lazy: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputArg {
    /// A path named on the command line (object, archive, shared object or linker script).
    File { path: PathBuf, state: InputState },
    /// `-lNAME` (`name` = "NAME") or `-l:FILE` (`name` = ":FILE").
    Library { name: String, state: InputState },
    /// `--start-group` / `-(`; also `--start-lib`, whose objects lld counts as one group (for
    /// `--warn-backrefs`).
    GroupStart,
    /// `--end-group` / `-)`; also `--end-lib`.
    GroupEnd,
    /// `-T FILE` / `--script=FILE`: read as a linker script whatever it looks like.
    Script { path: PathBuf },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildId {
    None,
    Sha1,
    Md5,
    /// 32 bytes (`sha256`, and `fast` as mold makes it).
    Sha256,
    Uuid,
    Hex(Vec<u8>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashStyle {
    Sysv,
    Gnu,
    Both,
    /// mold's `none`: neither `.hash` nor `.gnu.hash` (an output nothing looks symbols up in).
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strip {
    None,
    Debug,
    All,
}

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
    /// `-z mark-plt` / `-z nomark-plt` (GNU ld 2.41, default off): DT_X86_64_PLT* tags and the
    /// PLT entries' addresses as the JUMP_SLOT relocations' addends.
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
    /// `-z separate-code` (default true on x86-64 Linux, as GNU ld) / `-z noseparate-code`.
    pub separate_code: bool,
    /// `-z max-page-size=N` (default 4096): segments' addresses are congruent to their file
    /// offsets modulo this, and PT_LOAD's alignment.
    pub max_page_size: u64,
    /// `-z common-page-size=N` (default 4096, at most the maximum page size): the page that file
    /// offsets of segments and the end of RELRO are rounded to.
    pub common_page_size: u64,
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
    /// `-z ibtplt`: an IBT-enabled PLT (`.plt` lazy stubs and `.plt.sec` entries with `endbr64`).
    pub ibt_plt: bool,
    /// `-z pack-relative-relocs` / `--pack-dyn-relocs=relr`: RELATIVE relocations go to `.relr.dyn`.
    pub pack_relative_relocs: bool,
    /// `--use-android-relr-tags`: DT_ANDROID_RELR* instead of DT_RELR*.
    pub android_relr_tags: bool,
    /// `-z cet-report=none|warning|error`: how objects missing IBT or SHSTK are reported.
    pub cet_report: CetReport,
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
    /// `-m EMULATION`: only elf_x86_64 is accepted (checked by the parser).
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
            max_page_size: 4096,
            common_page_size: 4096,
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
            z_shstk: false,
            ibt_plt: false,
            pack_relative_relocs: false,
            android_relr_tags: false,
            cet_report: Default::default(),
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

/// `--orphan-handling=MODE` (GNU ld, lld): what becomes of an input section that a linker
/// script's `SECTIONS` does not place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrphanHandling {
    /// Placed by the default rules (the default).
    Place,
    /// Placed, with a warning naming it.
    Warn,
    /// An error naming it.
    Error,
    /// Dropped from the output.
    Discard,
}

/// What a text relocation gets (the last of `-z text`, `-z notext`, `--warn-textrel` wins, as in
/// GNU ld).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextRel {
    /// `-z text`: an error.
    Error,
    /// `--warn-textrel` (`-warn-shared-textrel`), the default: linked, with a warning.
    Warn,
    /// `-z notext`: linked quietly.
    Allow,
}

/// Which of a shared library's own definitions bind inside it instead of staying preemptible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Symbolic {
    None,
    /// `-Bsymbolic`: every definition (and DF_SYMBOLIC is set).
    All,
    /// `-Bsymbolic-functions`: function definitions.
    Functions,
    /// `-Bsymbolic-non-weak`: non-weak definitions.
    NonWeak,
    /// `-Bsymbolic-non-weak-functions`: non-weak function definitions.
    NonWeakFunctions,
}

/// One `--shuffle-sections` / `--reverse-sections` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionShuffle {
    /// lld's `GLOB=SEED`: only input sections whose names match, in every output section but
    /// `.init` and `.fini`. None (mold's form): every input section of every allocated output
    /// section but the ones whose order is code (`.init`, `.fini`, `.ctors`, `.dtors`, and the
    /// init/fini arrays, which are reversed before their priority sort under `--reverse-sections`).
    pub glob: Option<String>,
    pub order: ShuffleOrder,
}

/// What a `SectionShuffle` does to the sections it selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShuffleOrder {
    /// Reverse them (`--reverse-sections`, lld's seed -1).
    Reverse,
    /// A pseudo-random permutation from this seed: the same seed gives the same output.
    Seed(u64),
}

/// How `-z cet-report` reports objects missing IBT or SHSTK.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CetReport {
    #[default]
    None,
    Warning,
    Error,
}

/// `--icf`: which identical sections are folded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Icf {
    None,
    All,
    /// Only sections whose address is never taken.
    Safe,
}

/// `--separate-debug-file`'s value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeparateDebugFile {
    /// No file named: the output's path with `.dbg` appended.
    Default,
    File(PathBuf),
}

impl Config {
    /// DT_RUNPATH's (DT_RPATH's) string: the `-rpath` directories joined with ':', a directory
    /// given again left out (GNU ld's rule: a value equal to a directory already in the list).
    pub fn runpath(&self) -> Option<String> {
        let mut dirs: Vec<&str> = Vec::new();
        for r in &self.rpath {
            if !dirs.iter().any(|d| d.split(':').any(|part| part == r)) {
                dirs.push(r);
            }
        }
        (!dirs.is_empty()).then(|| dirs.join(":"))
    }

    /// The separate debug file's path, when `--separate-debug-file` is in effect.
    pub fn debug_file_path(&self) -> Option<PathBuf> {
        Some(match self.separate_debug_file.as_ref()? {
            SeparateDebugFile::File(p) => p.clone(),
            SeparateDebugFile::Default => {
                let mut p = self.output.clone().into_os_string();
                p.push(".dbg");
                p.into()
            }
        })
    }

    /// Whether the separate debug file is written by a background process once the output is in
    /// place: `--detach`, unless a report on the link's own output (`--print-timing`, `--stats`,
    /// `--time-trace`) or `-o -` asks the link to finish first.
    pub fn detaches(&self) -> bool {
        self.separate_debug_file.is_some() && self.detach && self.may_fork()
    }

    /// Whether the link runs in a child process that releases the waiting command once the link
    /// is complete (`--fork`, or a detached separate debug file). Not when the link reports on
    /// itself after it ends (`--print-timing`, `--stats`, `--time-trace`), writes to standard
    /// output, or runs inside another program (`free_memory`).
    pub fn forks(&self) -> bool {
        (self.fork || (self.separate_debug_file.is_some() && self.detach)) && self.may_fork()
    }

    fn may_fork(&self) -> bool {
        !self.print_timing
            && !self.stats
            && self.time_trace.is_none()
            && !self.free_memory
            && self.output != std::path::Path::new("-")
    }
}

/// `--compress-debug-sections`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebugCompression {
    None,
    Zlib,
    Zstd,
}

/// `--sort-section`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortSection {
    Name,
    /// Largest alignment first.
    Alignment,
}

/// Which local symbols `.symtab` keeps: `--discard-all` (`-x`), `--discard-locals` (`-X`, GNU ld's
/// default: not the assembler's `.L` labels), `--discard-none`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discard {
    All,
    Locals,
    None,
}

/// One word of `--section-order` (mold's syntax, words separated by blanks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SectionOrderItem {
    /// `TEXT`, `RODATA`, `DATA`, `BSS` (any case): the output sections of that kind not named
    /// elsewhere in the list.
    Group(SectionGroup),
    /// `EHDR`, `PHDR` (the ELF header, the program headers) or an output section's name.
    Section(String),
    /// `=ADDR`: the next item starts at this address.
    Addr(u64),
    /// `%ALIGN`: the next item starts at an address aligned to this.
    Align(u64),
    /// `!NAME`: defines the symbol NAME at the current address.
    Symbol(String),
}

/// The kinds of output sections `--section-order` names as groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SectionGroup {
    Text,
    Rodata,
    Data,
    Bss,
}

/// `--section-order`'s value: its words, each checked, with EHDR only as the first section
/// specifier (as mold requires).
fn parse_section_order(v: &str) -> Result<Vec<SectionOrderItem>> {
    let number = |t: &str| -> Option<u64> {
        match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => t.parse().ok(),
        }
    };
    let mut items = Vec::new();
    for tok in v.split([' ', '\t']).filter(|t| !t.is_empty()) {
        let item = match tok.to_ascii_uppercase().as_str() {
            "TEXT" => SectionOrderItem::Group(SectionGroup::Text),
            "RODATA" => SectionOrderItem::Group(SectionGroup::Rodata),
            "DATA" => SectionOrderItem::Group(SectionGroup::Data),
            "BSS" => SectionOrderItem::Group(SectionGroup::Bss),
            "EHDR" | "PHDR" => SectionOrderItem::Section(tok.to_ascii_uppercase()),
            _ => {
                let bad = || fatal!("--section-order: parse error at '{tok}' in '{v}'");
                if let Some(a) = tok.strip_prefix('=') {
                    SectionOrderItem::Addr(number(a).ok_or_else(bad)?)
                } else if let Some(a) = tok.strip_prefix('%') {
                    let a = number(a).filter(|a| a.is_power_of_two()).ok_or_else(bad)?;
                    SectionOrderItem::Align(a)
                } else if let Some(sym) = tok.strip_prefix('!') {
                    SectionOrderItem::Symbol(sym.to_string())
                } else if tok.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                    SectionOrderItem::Section(tok.to_string())
                } else {
                    return Err(bad());
                }
            }
        };
        items.push(item);
    }
    let sections: Vec<&String> =
        items.iter().filter_map(|i| if let SectionOrderItem::Section(s) = i { Some(s) } else { None }).collect();
    ensure!(
        !sections.iter().skip(1).any(|s| *s == "EHDR"),
        "--section-order: EHDR must be the first section specifier: {v}"
    );
    Ok(items)
}

/// Options rivet accepts and deliberately ignores, each because GNU ld gives it no effect for the
/// outputs rivet writes (the README lists them).
pub const IGNORED_OPTIONS: &[(&str, &str)] = &[
    ("--no-warn-mismatch", "rivet links only x86-64 ELF64 and rejects anything else whatever this flag says"),
    (
        "-rpath-link, --rpath-link",
        "GNU ld searches it for the libraries a shared library needs, to check their symbols; rivet, like lld, \
         loads only the libraries the command line names, so it has nothing to find there",
    ),
    (
        "--no-ld-generated-unwind-info",
        "rivet, like lld, writes no .eh_frame records for the code it generates (PLT entries), which is \
         what this option asks of GNU ld",
    ),
    ("--warn-once", "rivet reports each undefined symbol once already, with its first references (as lld does)"),
    (
        "-d, -dc, -dp, --define-common (without -r)",
        "a final link always allocates common symbols; with -r they allocate them in .bss, as GNU ld does",
    ),
    ("-nostdlib", "honoured: only -L directories are searched"),
    (
        "-fuse-ld=NAME",
        "a compiler driver's option that a build passed to the linker too: it chooses the linker, which is \
         already running (mold ignores it as well)",
    ),
];

/// Options whose value follows (`-o FILE`, `--opt=VALUE`, `--opt VALUE`).
const WITH_VALUE: &[&str] = &[
    "init",
    "fini",
    "o",
    "output",
    "l",
    "library",
    "L",
    "library-path",
    "e",
    "entry",
    "m",
    "z",
    "u",
    "undefined",
    "require-defined",
    "h",
    "soname",
    "rpath",
    "R",
    "rpath-link",
    "unresolved-symbols",
    "error-limit",
    "dynamic-linker",
    "I",
    "version-script",
    "dynamic-list",
    "export-dynamic-symbol",
    "export-dynamic-symbol-list",
    "plugin",
    "plugin-opt",
    "mllvm",
    "O",
    "Map",
    "sysroot",
    "reproduce",
    "wrap",
    "defsym",
    "exclude-libs",
    "icf",
    "compress-debug-sections",
    "separate-debug-file",
    "oformat",
    "image-base",
    "Ttext",
    "Tdata",
    "Tbss",
    "Ttext-segment",
    "section-start",
    "sort-section",
    "hash-style",
    "pack-dyn-relocs",
    "io-strategy",
    "copy-method",
    "threads",
    "thread-count",
    "retain-symbols-file",
    "why-extract",
    "dependency-file",
    "build-id",
    "package-metadata",
    "time-trace",
    "print-gc-sections",
    "why-live",
    "color-diagnostics",
    "T",
    "script",
    "y",
    "trace-symbol",
    "soname",
    "audit",
    "f",
    "F",
    "undefined-glob",
    "depaudit",
    "P",
    "shuffle-sections",
    "section-align",
    "symbol-ordering-file",
    "section-ordering-file",
    "orphan-handling",
    "randomize-section-padding",
    "warn-backrefs-exclude",
    "filter",
    "auxiliary",
    "fuse-ld",
    "discard-section",
    "no-discard-section",
    "filler",
    "spare-program-headers",
    "physical-image-base",
    "section-order",
];

/// Options that may carry a value only with `=` (`--build-id` alone means sha1).
const OPTIONAL_VALUE: &[&str] = &[
    "build-id",
    "time-trace",
    "color-diagnostics",
    "threads",
    "separate-debug-file",
    "shuffle-sections",
    "print-gc-sections",
    "unique",
];

/// One-letter options whose value may be glued on (`-lc`, `-L/usr/lib`, `-zrelro`).
const SHORT_GLUED: &[char] = &['o', 'l', 'L', 'e', 'm', 'z', 'u', 'h', 'R', 'I', 'O', 'T', 'y', 'f', 'F', 'P'];

/// True when `arg` is an option whose value is the next argument (`-o FILE`, `-dynamic-linker P`).
pub fn takes_separate_value(arg: &str) -> bool {
    if !arg.starts_with('-') || arg.contains('=') {
        return false;
    }
    let name = arg.strip_prefix("--").unwrap_or(&arg[1..]);
    WITH_VALUE.contains(&name) && !OPTIONAL_VALUE.contains(&name)
}

/// Parses `args` (argv without argv[0]). Response files (`@FILE`, nested, quoted as GNU ld/gcc write
/// them) are expanded first. Errors are complete sentences naming the option.
impl Config {
    /// Whether jumps and calls to a jump are retargeted to where that jump goes (lld's
    /// `--branch-to-branch`, on at `-O2` and above): not where the relocations are kept for a
    /// later tool (`-r`, `--emit-relocs`), which would then disagree with the code.
    pub fn branch_to_branch(&self) -> bool {
        self.branch_to_branch.unwrap_or(self.opt_level >= 2) && !self.relocatable && !self.emit_relocs
    }

    /// A dynamic list is in force (`--dynamic-list`, `--dynamic-list-data`): in a shared library,
    /// only the symbols it names stay preemptible.
    pub fn has_dynamic_list(&self) -> bool {
        !self.dynamic_lists.is_empty() || self.dynamic_list_data
    }

    /// What the command line must hold as a whole before a link starts (GNU ld's and lld's
    /// checks and words): some input, and -F/-f only for a shared library.
    pub fn validate(&self) -> Result<()> {
        let named = |i: &InputArg| matches!(i, InputArg::File { .. } | InputArg::Library { .. });
        ensure!(self.inputs.iter().any(named), "no input files");
        ensure!(self.shared || self.filters.is_empty(), "-F/--filter may not be used without -shared");
        ensure!(self.shared || self.auxiliaries.is_empty(), "-f/--auxiliary may not be used without -shared");
        // lld's words: a relocatable output is read by a linker, which needs its section headers.
        ensure!(!(self.relocatable && self.no_section_headers), "-r and -z nosectionheader may not be used together");
        ensure!(
            !(self.no_section_headers && self.separate_debug_file.is_some()),
            "--separate-debug-file and -z nosectionheader may not be used together: the output's \
             .gnu_debuglink section is found through its section headers"
        );
        ensure!(
            !(self.oformat_binary && self.separate_debug_file.is_some()),
            "--separate-debug-file: a raw binary (--oformat=binary) has no debug sections to separate"
        );
        Ok(())
    }
}

pub fn parse(args: Vec<OsString>) -> Result<Config> {
    let args = expand_response_files(args, &mut Vec::new())?;
    let config = Config { raw_args: args.clone(), ..Config::default() };
    let mut p = ArgParser { args, pos: 0, config, state: InputState::default(), stack: Vec::new() };
    while p.pos < p.args.len() {
        let arg = p.args[p.pos].clone();
        p.pos += 1;
        p.one(&arg)?;
    }
    let mut config = p.config;
    // mold's -repro, or its MOLD_REPRO variable: the archive is named after the output.
    if std::env::var_os("MOLD_REPRO").is_some_and(|v| !v.is_empty()) {
        config.repro = true;
    }
    if config.repro && config.reproduce.is_none() {
        let mut tar = config.output.clone().into_os_string();
        tar.push(".repro.tar");
        config.reproduce = Some(tar.into());
    }
    Ok(config)
}

struct ArgParser {
    args: Vec<String>,
    pos: usize,
    config: Config,
    state: InputState,
    stack: Vec<(InputState, bool)>,
}

/// Splits an argument into (option name, attached value). `--opt=v`, `-opt=v`, `-lc`, `-zrelro`.
fn split_option(arg: &str) -> (String, Option<String>) {
    let body = arg.strip_prefix("--").unwrap_or_else(|| &arg[1..]);
    // `-L=DIR`: the `=` says DIR is under the sysroot; it stays part of the value.
    if let Some(dir) = body.strip_prefix("L=").filter(|_| !arg.starts_with("--")) {
        return ("L".to_string(), Some(format!("={dir}")));
    }
    if let Some((name, value)) = body.split_once('=') {
        if WITH_VALUE.contains(&name) || OPTIONAL_VALUE.contains(&name) {
            return (name.to_string(), Some(value.to_string()));
        }
    }
    if !arg.starts_with("--") && !KNOWN_FLAGS.contains(&body) && !WITH_VALUE.contains(&body) {
        if let Some(c) = body.chars().next() {
            if SHORT_GLUED.contains(&c) && body.len() > 1 {
                return (c.to_string(), Some(body[1..].to_string()));
            }
        }
    }
    (body.to_string(), None)
}

/// Flags (no value). Listed so that `-static` is never read as `-s tatic` and so on.
const KNOWN_FLAGS: &[&str] = &[
    "use-android-relr-tags",
    "no-use-android-relr-tags",
    "emit-relocs",
    "relocatable-merge-sections",
    "static",
    "Bstatic",
    "dn",
    "non_shared",
    "Bdynamic",
    "dy",
    "call_shared",
    "pie",
    "pic-executable",
    "no-pie",
    "no-pic-executable",
    "shared",
    "Bshareable",
    "no-dynamic-linker",
    "eh-frame-hdr",
    "no-eh-frame-hdr",
    "build-id",
    "E",
    "export-dynamic",
    "no-export-dynamic",
    "gc-sections",
    "no-gc-sections",
    "print-gc-sections",
    "no-print-gc-sections",
    "branch-to-branch",
    "no-branch-to-branch",
    "print-icf-sections",
    "no-print-icf-sections",
    "s",
    "strip-all",
    "S",
    "strip-debug",
    "print-timing",
    "time",
    "time-trace",
    "stats",
    "mmap-output-file",
    "no-mmap-output-file",
    "reuse-output",
    "no-reuse-output",
    "populate-output",
    "no-populate-output",
    "fsync",
    "no-fsync",
    "v",
    "verbose",
    "version",
    "V",
    "help",
    "no-threads",
    "as-needed",
    "no-as-needed",
    "whole-archive",
    "no-whole-archive",
    "push-state",
    "pop-state",
    "start-group",
    "end-group",
    "(",
    ")",
    "no-undefined",
    "allow-shlib-undefined",
    "no-allow-shlib-undefined",
    "warn-unresolved-symbols",
    "error-unresolved-symbols",
    "warn-once",
    "no-ld-generated-unwind-info",
    "demangle",
    "no-demangle",
    "no-undefined-version",
    "undefined-version",
    "Bsymbolic",
    "Bsymbolic-functions",
    "Bsymbolic-non-weak",
    "Bsymbolic-non-weak-functions",
    "Bno-symbolic",
    "relax",
    "no-relax",
    "allow-multiple-definition",
    "no-allow-multiple-definition",
    "enable-new-dtags",
    "disable-new-dtags",
    "fatal-warnings",
    "w",
    "no-warnings",
    "no-fatal-warnings",
    "color-diagnostics",
    "no-color-diagnostics",
    "no-warn-mismatch",
    "x",
    "X",
    "discard-all",
    "discard-locals",
    "discard-none",
    "M",
    "print-map",
    "t",
    "trace",
    "nostdlib",
    "prefetch-inputs",
    "no-prefetch-inputs",
    "threads",
    "rosegment",
    "no-rosegment",
    "N",
    "omagic",
    "no-omagic",
    "start-lib",
    "end-lib",
    "warn-common",
    "no-warn-common",
    "warn-textrel",
    "warn-shared-textrel",
    "noinhibit-exec",
    "execute-only",
    "default-symver",
    "r",
    "relocatable",
    "Ur",
    "gdb-index",
    "no-gdb-index",
    "no-build-id",
    "separate-debug-file",
    "no-separate-debug-file",
    "detach",
    "no-detach",
    "fork",
    "no-fork",
    "n",
    "nmagic",
    "no-nmagic",
    "d",
    "dc",
    "dp",
    "define-common",
    "no-define-common",
    "shuffle-sections",
    "reverse-sections",
    "warn-symbol-ordering",
    "no-warn-symbol-ordering",
    "print-dependencies",
    "dynamic-list-data",
    "warn-backrefs",
    "no-warn-backrefs",
    "warn-rwx-segments",
    "no-warn-rwx-segments",
    "zero-to-bss",
    "quick-exit",
    "no-quick-exit",
    "repro",
    "start-stop",
];

impl ArgParser {
    fn value(&mut self, name: &str, attached: Option<String>) -> Result<String> {
        if let Some(v) = attached {
            return Ok(v);
        }
        let v = self.args.get(self.pos).cloned().ok_or_else(|| fatal!("-{name}: missing argument"))?;
        self.pos += 1;
        Ok(v)
    }

    fn input(&mut self, path: &str) {
        self.config.inputs.push(InputArg::File { path: PathBuf::from(path), state: self.state });
    }

    fn one(&mut self, arg: &str) -> Result<()> {
        if !arg.starts_with('-') || arg == "-" {
            self.input(arg);
            return Ok(());
        }
        let (name, attached) = split_option(arg);
        if attached.is_some() || WITH_VALUE.contains(&name.as_str()) && !OPTIONAL_VALUE.contains(&name.as_str()) {
            // How a `-z` keyword was written, for the warning about an unknown one.
            let glued = attached.is_some();
            let value = self.value(&name, attached)?;
            if name == "z" {
                let spelled = if glued { arg.to_string() } else { format!("{arg} {value}") };
                return self.z_option(&value, &spelled);
            }
            return self.with_value(&name, value);
        }
        self.flag(&name, arg)
    }

    fn flag(&mut self, name: &str, arg: &str) -> Result<()> {
        let c = &mut self.config;
        match name {
            "static" => {
                c.static_link = true;
                self.state.static_only = true;
            }
            "Bstatic" | "dn" | "non_shared" => self.state.static_only = true,
            "Bdynamic" | "dy" | "call_shared" => self.state.static_only = false,
            // The last of -shared and -pie decides, as in GNU ld: `-shared -pie` is a position-
            // independent executable (one that may also be loaded as a library).
            "pie" | "pic-executable" => {
                c.pie = true;
                c.shared = false;
            }
            "no-pie" | "no-pic-executable" => c.pie = false,
            "shared" | "Bshareable" => {
                c.shared = true;
                c.pie = false;
            }
            "no-dynamic-linker" => c.no_dynamic_linker = true,
            // Listed so that `-emit-relocs` is not read as `-e mit-relocs`.
            "emit-relocs" | "q" => c.emit_relocs = true,
            "branch-to-branch" => c.branch_to_branch = Some(true),
            "no-branch-to-branch" => c.branch_to_branch = Some(false),
            "relocatable-merge-sections" => c.relocatable_merge_sections = true,
            "eh-frame-hdr" => c.eh_frame_hdr = true,
            "no-eh-frame-hdr" => c.eh_frame_hdr = false,
            "build-id" => c.build_id = BuildId::Sha1,
            "no-build-id" => c.build_id = BuildId::None,
            "E" | "export-dynamic" => c.export_dynamic = true,
            "no-export-dynamic" => c.export_dynamic = false,
            "gc-sections" => c.gc_sections = true,
            "no-gc-sections" => c.gc_sections = false,
            "print-gc-sections" => c.print_gc_sections = Some(None),
            // GNU ld's bare `--unique`: every orphan section apart. Which sections are orphans
            // depends on GNU ld's default script, which rivet has no copy of.
            "unique" => {
                bail!("--unique without a pattern (every orphan section apart) is not supported; give --unique=PATTERN")
            }
            "no-print-gc-sections" => c.print_gc_sections = None,
            "print-icf-sections" => c.print_icf_sections = true,
            "no-print-icf-sections" => c.print_icf_sections = false,
            "s" | "strip-all" => c.strip = Strip::All,
            "S" | "strip-debug" => {
                if c.strip != Strip::All {
                    c.strip = Strip::Debug
                }
            }
            "print-timing" | "time" => c.print_timing = true,
            "time-trace" => c.time_trace = Some(None),
            "stats" => c.stats = true,
            "mmap-output-file" => c.mmap_output = Some(true),
            "no-mmap-output-file" => c.mmap_output = Some(false),
            "reuse-output" => c.reuse_output = Some(true),
            "no-reuse-output" => c.reuse_output = Some(false),
            "populate-output" => c.populate_output = Some(true),
            "no-populate-output" => c.populate_output = Some(false),
            "fsync" => c.fsync = true,
            "no-fsync" => c.fsync = false,
            "v" | "verbose" => c.verbose = true,
            "version" | "V" => c.print_version = true,
            "help" => c.print_help = true,
            "no-threads" => c.threads = Some(1),
            "threads" => c.threads = None,
            "as-needed" => self.state.as_needed = true,
            "no-as-needed" => self.state.as_needed = false,
            "whole-archive" => self.state.whole_archive = true,
            "no-whole-archive" => self.state.whole_archive = false,
            // `-static` between them is undone too: it chose only how `-l` searched there.
            "push-state" => self.stack.push((self.state, c.static_link)),
            "pop-state" => {
                (self.state, c.static_link) = self.stack.pop().context("--pop-state without a matching --push-state")?
            }
            "start-group" | "(" => c.inputs.push(InputArg::GroupStart),
            "end-group" | ")" => c.inputs.push(InputArg::GroupEnd),
            "no-undefined" => c.no_undefined = Some(true),
            "allow-shlib-undefined" => c.allow_shlib_undefined = Some(true),
            "no-allow-shlib-undefined" => c.allow_shlib_undefined = Some(false),
            "warn-unresolved-symbols" => c.warn_unresolved = true,
            "error-unresolved-symbols" => c.warn_unresolved = false,
            // Accepted and ignored (IGNORED_OPTIONS says why).
            "warn-once" | "no-ld-generated-unwind-info" => {}
            "demangle" => c.demangle = true,
            "no-demangle" => c.demangle = false,
            "no-undefined-version" => c.no_undefined_version = Some(true),
            "undefined-version" => c.no_undefined_version = Some(false),
            "Bsymbolic" => c.symbolic = Symbolic::All,
            "Bsymbolic-functions" => c.symbolic = Symbolic::Functions,
            "Bsymbolic-non-weak" => c.symbolic = Symbolic::NonWeak,
            "Bsymbolic-non-weak-functions" => c.symbolic = Symbolic::NonWeakFunctions,
            "Bno-symbolic" => c.symbolic = Symbolic::None,
            "allow-multiple-definition" => c.allow_multiple_definition = true,
            "no-allow-multiple-definition" => c.allow_multiple_definition = false,
            "relax" => c.relax = true,
            "use-android-relr-tags" => c.android_relr_tags = true,
            "no-use-android-relr-tags" => c.android_relr_tags = false,
            "no-relax" => c.relax = false,
            "enable-new-dtags" => c.new_dtags = true,
            "disable-new-dtags" => c.new_dtags = false,
            "fatal-warnings" => c.fatal_warnings = true,
            "no-fatal-warnings" => c.fatal_warnings = false,
            "w" | "no-warnings" => c.no_warnings = true,
            "color-diagnostics" => c.color_diagnostics = Some(true),
            "no-color-diagnostics" => c.color_diagnostics = Some(false),
            "no-warn-mismatch" => c.no_warn_mismatch = true,
            "x" | "discard-all" => c.discard = Discard::All,
            "X" | "discard-locals" => c.discard = Discard::Locals,
            "discard-none" => c.discard = Discard::None,
            "M" | "print-map" => c.print_map = true,
            "t" | "trace" => c.trace = true,
            "nostdlib" => c.nostdlib = true,
            "prefetch-inputs" => c.prefetch_inputs = Some(true),
            "no-prefetch-inputs" => c.prefetch_inputs = Some(false),
            "rosegment" => c.rosegment = Some(true),
            // Also links against static libraries from here on, as lld does (-Bstatic).
            "N" | "omagic" => {
                c.omagic = true;
                self.state.static_only = true;
            }
            "no-omagic" => c.omagic = false,
            // lld's -n: sections and segments are not page-aligned, each segment keeps its own
            // protection; static libraries only from here on, as with -N.
            "n" | "nmagic" => {
                c.nmagic = true;
                self.state.static_only = true;
            }
            "no-nmagic" => c.nmagic = false,
            "separate-debug-file" => c.separate_debug_file = Some(SeparateDebugFile::Default),
            "no-separate-debug-file" => c.separate_debug_file = None,
            "detach" => c.detach = true,
            "no-detach" => c.detach = false,
            "fork" => c.fork = true,
            "no-fork" => c.fork = false,
            // -Ur also resolves C++ constructor tables in GNU ld, which ELF's .init_array makes moot.
            "r" | "relocatable" | "Ur" => c.relocatable = true,
            "noinhibit-exec" => c.noinhibit_exec = true,
            "default-symver" => c.default_symver = true,
            "execute-only" => c.execute_only = true,
            // Final links always allocate common symbols; with -r these allocate them too.
            "d" | "dc" | "dp" | "define-common" => c.define_common = true,
            "no-define-common" => c.define_common = false,
            "gdb-index" => c.gdb_index = true,
            "no-gdb-index" => c.gdb_index = false,
            "no-rosegment" => c.rosegment = Some(false),
            "start-lib" => {
                ensure!(!self.state.lazy, "nested --start-lib");
                self.state.lazy = true;
                c.inputs.push(InputArg::GroupStart);
            }
            "end-lib" => {
                ensure!(self.state.lazy, "stray --end-lib");
                self.state.lazy = false;
                c.inputs.push(InputArg::GroupEnd);
            }
            "warn-common" => c.warn_common = true,
            "warn-textrel" | "warn-shared-textrel" => c.textrel = TextRel::Warn,
            "no-warn-common" => c.warn_common = false,
            // mold: a seed of its own for every link.
            "shuffle-sections" => {
                c.section_shuffles.push(SectionShuffle { glob: None, order: ShuffleOrder::Seed(random_seed()) })
            }
            "reverse-sections" => c.section_shuffles.push(SectionShuffle { glob: None, order: ShuffleOrder::Reverse }),
            "warn-symbol-ordering" => c.warn_symbol_ordering = true,
            "no-warn-symbol-ordering" => c.warn_symbol_ordering = false,
            "print-dependencies" => c.print_dependencies = true,
            "dynamic-list-data" => c.dynamic_list_data = true,
            "warn-backrefs" => c.warn_backrefs = true,
            "no-warn-backrefs" => c.warn_backrefs = false,
            "warn-rwx-segments" => c.warn_rwx_segments = true,
            "no-warn-rwx-segments" => c.warn_rwx_segments = false,
            "zero-to-bss" => c.zero_to_bss = true,
            "quick-exit" => c.free_memory = false,
            "no-quick-exit" => c.free_memory = true,
            "repro" => c.repro = true,
            "start-stop" => c.start_stop = true,
            _ => bail!("unknown command line option: {arg}"),
        }
        Ok(())
    }

    fn with_value(&mut self, name: &str, v: String) -> Result<()> {
        let c = &mut self.config;
        match name {
            "o" | "output" => {
                c.output = PathBuf::from(v);
                c.output_given = true;
            }
            "l" | "library" => c.inputs.push(InputArg::Library { name: v, state: self.state }),
            "L" | "library-path" => c.lib_paths.push(PathBuf::from(v)),
            "e" | "entry" => c.entry = Some(v),
            "init" => c.init = v,
            "fini" => c.fini = v,
            "m" => {
                let target = match v.as_str() {
                    "elf_x86_64" => "",
                    t if t.starts_with("elf_i386") => "the i386 target is not supported",
                    "elf32_x86_64" => "the x32 target is not supported",
                    _ => "unsupported emulation",
                };
                ensure!(target.is_empty(), "-m {v}: {target} (rivet links x86-64 ELF64 only: emulation elf_x86_64)");
                c.emulation = Some(v);
            }
            "u" | "undefined" => c.undefined.push(v),
            "require-defined" => c.require_defined.push(v),
            "h" | "soname" => c.soname = Some(v),
            "rpath" | "R" => c.rpath.push(v),
            // A compiler driver's option that reached the linker (a build passing its flags to both):
            // it names the linker to run, which is this one already (mold ignores it too).
            "fuse-ld" => {}
            "rpath-link" => c.rpath_link.push(v),
            // lld's meaning: whether the objects' and the shared libraries' undefined symbols are
            // reported.
            "unresolved-symbols" => {
                let (objects, shlibs) = match v.as_str() {
                    "ignore-all" => (false, false),
                    "ignore-in-object-files" => (false, true),
                    "ignore-in-shared-libs" => (true, false),
                    "report-all" => (true, true),
                    _ => bail!(
                        "unknown --unresolved-symbols value: {v} (ignore-all, ignore-in-object-files, \
                         ignore-in-shared-libs or report-all)"
                    ),
                };
                c.no_undefined = Some(objects);
                c.allow_shlib_undefined = Some(!shlibs);
            }
            "error-limit" => {
                c.error_limit = crate::expr::parse_number(&v)
                    .and_then(|n| usize::try_from(n).ok())
                    .with_context(|| format!("--error-limit: '{v}' is not a number"))?
            }
            "dynamic-linker" | "I" => c.dynamic_linker = Some(v),
            "version-script" => c.version_scripts.push(PathBuf::from(v)),
            "dynamic-list" => c.dynamic_lists.push(PathBuf::from(v)),
            "export-dynamic-symbol-list" => c.export_dynamic_symbol_lists.push(PathBuf::from(v)),
            "export-dynamic-symbol" => c.export_dynamic_symbols.push(v),
            "plugin" => c.plugin = Some(v),
            "plugin-opt" | "mllvm" => c.plugin_opts.push(v),
            "O" => {
                c.opt_level =
                    v.parse().ok().filter(|&n| n <= 3).ok_or_else(|| fatal!("-O: bad optimisation level '{v}'"))?
            }
            "Map" => c.map_file = Some(PathBuf::from(v)),
            "sysroot" => c.sysroot = Some(PathBuf::from(v)),
            "reproduce" => c.reproduce = Some(PathBuf::from(v)),
            "wrap" => c.wrap.push(v),
            "defsym" => {
                let (sym, text) =
                    v.split_once('=').ok_or_else(|| fatal!("--defsym: expected SYMBOL=EXPRESSION, got '{v}'"))?;
                let expr = crate::expr::parse(text).with_context(|| format!("--defsym={v}"))?;
                c.defsym.push(crate::expr::Defsym {
                    name: sym.to_string(),
                    text: text.to_string(),
                    symbol: expr.symbol.map(str::to_string),
                    addend: expr.addend,
                });
            }
            "exclude-libs" => c.exclude_libs.extend(v.split([',', ':']).map(str::to_string)),
            "icf" => {
                c.icf = match one_of("--icf", &v, &["all", "safe", "none"])? {
                    "all" => Icf::All,
                    "safe" => Icf::Safe,
                    _ => Icf::None,
                }
            }
            "compress-debug-sections" => {
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
                    }
            }
            "image-base" => {
                c.image_base = Some(parse_number(&v).ok_or_else(|| fatal!("--image-base: bad address '{v}'"))?)
            }
            "Ttext" | "Tdata" | "Tbss" => {
                let addr = hex(&v).ok_or_else(|| fatal!("-{name}: bad address '{v}'"))?;
                c.section_starts.push((format!(".{}", &name[1..]), addr));
            }
            // GNU ld: the start of the text segment, i.e. the image base (as lld treats it).
            "Ttext-segment" => {
                c.image_base = Some(hex(&v).ok_or_else(|| fatal!("-{name}: bad address '{v}'"))?);
                c.ttext_segment = true;
            }
            "section-start" => {
                let (sec, addr) = v
                    .split_once('=')
                    .and_then(|(s, a)| Some((s, hex(a)?)))
                    .ok_or_else(|| fatal!("--section-start: expected SECTION=ADDRESS, got '{v}'"))?;
                c.section_starts.push((sec.to_string(), addr));
            }
            "sort-section" => {
                c.sort_section = Some(match one_of("--sort-section", &v, &["name", "alignment"])? {
                    "name" => SortSection::Name,
                    _ => SortSection::Alignment,
                })
            }
            "pack-dyn-relocs" => match v.as_str() {
                "relr" => c.pack_relative_relocs = true,
                "none" => c.pack_relative_relocs = false,
                "android" | "android+relr" => {
                    bail!("--pack-dyn-relocs={v}: Android's packed relocation format is not supported (relr is)")
                }
                _ => bail!("--pack-dyn-relocs: unknown format '{v}' (relr or none)"),
            },
            "hash-style" => {
                c.hash_style = match v.as_str() {
                    "sysv" => HashStyle::Sysv,
                    "gnu" => HashStyle::Gnu,
                    "both" => HashStyle::Both,
                    "none" => HashStyle::None,
                    _ => bail!("--hash-style: unknown style '{v}' (sysv, gnu, both or none)"),
                }
            }
            // Only the automatic choice exists: the mode, prefetch and copy method each have
            // their own option to force them.
            "io-strategy" if v == "auto" => {}
            "io-strategy" => bail!("--io-strategy={v}: not supported yet (only auto)"),
            "copy-method" => {
                use rivet_io::CopyMethod;
                c.copy_method = match one_of("--copy-method", &v, &["memcpy", "copy-file-range", "sendfile", "auto"])? {
                    "memcpy" => Some(CopyMethod::Memcpy),
                    "copy-file-range" => Some(CopyMethod::CopyFileRange),
                    "sendfile" => Some(CopyMethod::Sendfile),
                    _ => None,
                }
            }
            "threads" => {
                c.threads = Some(
                    v.parse()
                        .ok()
                        .filter(|&n: &usize| n > 0)
                        .ok_or_else(|| fatal!("--threads: expected a positive number, got '{v}'"))?,
                )
            }
            "build-id" => c.build_id = build_id(&v)?,
            "separate-debug-file" => {
                ensure!(!v.is_empty(), "--separate-debug-file=: the file name is empty");
                c.separate_debug_file = Some(SeparateDebugFile::File(PathBuf::from(v)));
            }
            // GNU ld's BFD names for x86-64 ELF, and lld's raw binary.
            "oformat" => {
                c.oformat_binary = match v.as_str() {
                    "binary" => true,
                    "elf64-x86-64" | "elf64-x86_64" => false,
                    _ => bail!("--oformat: unknown format '{v}' (elf64-x86-64 or binary)"),
                }
            }
            "package-metadata" => c.package_metadata = Some(percent_decoded(&v)?),
            "time-trace" => c.time_trace = Some(Some(PathBuf::from(v))),
            "print-gc-sections" => c.print_gc_sections = Some(Some(PathBuf::from(v))),
            "why-live" => c.why_live.push(v),
            "color-diagnostics" => {
                c.color_diagnostics = match one_of("--color-diagnostics", &v, &["auto", "always", "never"])? {
                    "always" => Some(true),
                    "never" => Some(false),
                    _ => None,
                }
            }
            "T" | "script" => c.inputs.push(InputArg::Script { path: PathBuf::from(v) }),
            "y" | "trace-symbol" => c.trace_symbols.push(v),
            "why-extract" => c.why_extract = Some(PathBuf::from(v)),
            "retain-symbols-file" => c.retain_symbols_file = Some(PathBuf::from(v)),
            "dependency-file" => c.dependency_file = Some(PathBuf::from(v)),
            "thread-count" => {
                let n: usize = v.parse().map_err(|_| fatal!("--thread-count: expected a number, got '{v}'"))?;
                ensure!(n > 0, "--thread-count: expected a positive number, got '{v}'");
                c.threads = Some(n);
            }
            "audit" => c.audit.push(v),
            "depaudit" | "P" => c.depaudit.push(v),
            "shuffle-sections" => c.section_shuffles.push(shuffle(&v)?),
            "randomize-section-padding" => {
                let seed = parse_number(&v)
                    .ok_or_else(|| fatal!("--randomize-section-padding: expected a number (the seed), got '{v}'"))?;
                c.randomize_padding = Some(seed);
            }
            "unique" => {
                ensure!(!v.is_empty(), "--unique=: the section pattern is empty");
                c.unique.push(v);
            }
            "section-align" => {
                let (sec, align) = v
                    .split_once('=')
                    .and_then(|(s, a)| Some((s, parse_number(a)?)))
                    .filter(|(s, _)| !s.is_empty())
                    .ok_or_else(|| fatal!("--section-align: expected SECTION=ALIGNMENT, got '{v}'"))?;
                ensure!(align.is_power_of_two(), "--section-align={v}: the alignment must be a power of 2");
                c.section_align.push((sec.to_string(), align));
            }
            "symbol-ordering-file" => c.symbol_ordering_file = Some(PathBuf::from(v)),
            "section-ordering-file" => c.section_ordering_file = Some(PathBuf::from(v)),
            "orphan-handling" => {
                c.orphan_handling = match one_of("--orphan-handling", &v, &["place", "warn", "error", "discard"])? {
                    "warn" => OrphanHandling::Warn,
                    "error" => OrphanHandling::Error,
                    "discard" => OrphanHandling::Discard,
                    _ => OrphanHandling::Place,
                }
            }
            "warn-backrefs-exclude" => c.warn_backrefs_exclude.push(v),
            "F" | "filter" => c.filters.push(v),
            "f" | "auxiliary" => c.auxiliaries.push(v),
            "undefined-glob" => c.undefined_globs.push(v),
            "discard-section" => {
                if !c.discard_sections.contains(&v) {
                    c.discard_sections.push(v)
                }
            }
            "no-discard-section" => c.discard_sections.retain(|s| *s != v),
            "filler" => {
                c.filler = Some(
                    hex(&v)
                        .and_then(|b| u8::try_from(b).ok())
                        .ok_or_else(|| fatal!("--filler: expected a byte in hexadecimal (0x00 to 0xff), got '{v}'"))?,
                )
            }
            "spare-program-headers" => {
                c.spare_program_headers = parse_number(&v)
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|&n| n <= 0xff00)
                    .ok_or_else(|| fatal!("--spare-program-headers: expected a number of headers, got '{v}'"))?
            }
            "physical-image-base" => {
                c.physical_image_base =
                    Some(parse_number(&v).ok_or_else(|| fatal!("--physical-image-base: bad address '{v}'"))?)
            }
            "section-order" => c.section_order = parse_section_order(&v)?,
            _ => bail!("unknown command line option: -{name}"),
        }
        Ok(())
    }

    /// One `-z` keyword; `spelled`: the option as the command line wrote it (`-zfoo`, `-z foo`).
    fn z_option(&mut self, key: &str, spelled: &str) -> Result<()> {
        let c = &mut self.config;
        match key {
            "relro" => c.relro = true,
            "norelro" => c.relro = false,
            "now" => c.now = true,
            "lazy" => c.now = false,
            "text" => c.textrel = TextRel::Error,
            "notext" | "textoff" => c.textrel = TextRel::Allow,
            "execstack" => {
                c.execstack = true;
                c.execstack_if_needed = false;
            }
            "noexecstack" => {
                c.execstack = false;
                c.execstack_if_needed = false;
            }
            "execstack-if-needed" => {
                c.execstack = false;
                c.execstack_if_needed = true;
            }
            "x86-64-baseline" => c.isa_level = 1,
            "x86-64-v2" => c.isa_level = 2,
            "x86-64-v3" => c.isa_level = 3,
            "x86-64-v4" => c.isa_level = 4,
            "sectionheader" => c.no_section_headers = false,
            "nosectionheader" => c.no_section_headers = true,
            "rewrite-endbr" => c.rewrite_endbr = true,
            "norewrite-endbr" => c.rewrite_endbr = false,
            "mark-plt" => c.mark_plt = true,
            "nomark-plt" => c.mark_plt = false,
            "gnustack" => c.gnustack = true,
            "nognustack" => c.gnustack = false,
            "separate-code" => c.separate_code = true,
            "noseparate-code" => {
                c.separate_code = false;
                c.separate_loadable_segments = false;
            }
            "separate-loadable-segments" => {
                c.separate_code = true;
                c.separate_loadable_segments = true;
            }
            "defs" => c.no_undefined = Some(true),
            "nodefs" | "undefs" => c.no_undefined = Some(false),
            "initfirst" => c.dt_flags_1 |= object::elf::DF_1_INITFIRST,
            "interpose" => c.dt_flags_1 |= object::elf::DF_1_INTERPOSE,
            "nodefaultlib" => c.dt_flags_1 |= object::elf::DF_1_NODEFLIB,
            "nodump" => c.dt_flags_1 |= object::elf::DF_1_NODUMP,
            "origin" => c.dt_flags_1 |= object::elf::DF_1_ORIGIN,
            "nodelete" => c.dt_flags_1 |= object::elf::DF_1_NODELETE,
            "nodlopen" => c.dt_flags_1 |= object::elf::DF_1_NOOPEN,
            "global" => c.dt_flags_1 |= object::elf::DF_1_GLOBAL,
            "rodynamic" => c.rodynamic = true,
            "muldefs" => c.allow_multiple_definition = true,
            "copyreloc" => c.copy_relocations = true,
            "nocopyreloc" => c.copy_relocations = false,
            "ibt" | "force-ibt" => c.z_ibt = true,
            "shstk" => c.z_shstk = true,
            "ibtplt" => c.ibt_plt = true,
            "pack-relative-relocs" => c.pack_relative_relocs = true,
            "nopack-relative-relocs" => c.pack_relative_relocs = false,
            "keep-text-section-prefix" => c.keep_text_section_prefix = true,
            "dynamic-undefined-weak" => c.dynamic_undefined_weak = Some(true),
            "nodynamic-undefined-weak" => c.dynamic_undefined_weak = Some(false),
            "nokeep-text-section-prefix" => c.keep_text_section_prefix = false,
            _ => {
                if let Some(v) = key.strip_prefix("max-page-size=") {
                    let n = parse_number(v)
                        .filter(|n| n.is_power_of_two())
                        .ok_or_else(|| fatal!("-z max-page-size: bad size '{v}'"))?;
                    c.max_page_size = n;
                } else if let Some(v) = key.strip_prefix("stack-size=") {
                    c.stack_size = parse_number(v).ok_or_else(|| fatal!("-z stack-size: bad size '{v}'"))?;
                } else if let Some(v) = key.strip_prefix("cet-report=") {
                    c.cet_report = match one_of("-z cet-report", v, &["none", "warning", "error"])? {
                        "none" => CetReport::None,
                        "warning" => CetReport::Warning,
                        _ => CetReport::Error,
                    };
                } else if let Some(v) = key.strip_prefix("start-stop-visibility=") {
                    c.start_stop_visibility = match v {
                        "default" => object::elf::STV_DEFAULT,
                        "internal" => object::elf::STV_INTERNAL,
                        "hidden" => object::elf::STV_HIDDEN,
                        "protected" => object::elf::STV_PROTECTED,
                        _ => bail!("unknown -z start-stop-visibility= value: {v}"),
                    };
                    c.export_start_stop = v == "protected";
                } else if let Some(v) = key.strip_prefix("common-page-size=") {
                    c.common_page_size = parse_number(v)
                        .filter(|n| n.is_power_of_two())
                        .ok_or_else(|| fatal!("-z common-page-size: bad size '{v}'"))?;
                } else {
                    // lld's words, and mold's.
                    c.warnings.push(format!("unknown -z value: {key} (unknown command line option: {spelled})"));
                }
            }
        }
        Ok(())
    }
}

/// `--shuffle-sections=VALUE`: lld's `GLOB=SEED` (seed -1 reverses, 0 picks a seed for this link)
/// or mold's `SEED`.
fn shuffle(v: &str) -> Result<SectionShuffle> {
    if let Some((glob, seed)) = v.rsplit_once('=') {
        let seed: i64 =
            seed.parse().map_err(|_| fatal!("--shuffle-sections=: expected an integer, but got '{seed}'"))?;
        let order = match seed {
            -1 => ShuffleOrder::Reverse,
            0 => ShuffleOrder::Seed(random_seed()),
            n => ShuffleOrder::Seed(n as u64),
        };
        return Ok(SectionShuffle { glob: Some(glob.to_string()), order });
    }
    let seed = parse_number(v).ok_or_else(|| fatal!("--shuffle-sections: bad seed '{v}'"))?;
    Ok(SectionShuffle { glob: None, order: ShuffleOrder::Seed(seed) })
}

/// A seed that differs from link to link (the clock and the process id, mixed), for a shuffle
/// given none.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    h.finish()
}

fn one_of<'v>(opt: &str, v: &'v str, allowed: &[&str]) -> Result<&'v str> {
    ensure!(allowed.contains(&v), "{opt}: unknown value '{v}' (expected one of: {})", allowed.join(", "));
    Ok(v)
}

pub use crate::expr::parse_number;

/// Section addresses (`-Ttext`, `--section-start`) are hexadecimal with or without `0x`, as in
/// GNU ld and lld.
fn hex(s: &str) -> Option<u64> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    u64::from_str_radix(h, 16).ok()
}

/// `--package-metadata`'s value with `%XX` escapes decoded, as lld does (so that build systems can
/// pass JSON through shells and make).
fn percent_decoded(v: &str) -> Result<Vec<u8>> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let byte =
            b.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u8::from_str_radix(h, 16).ok());
        match byte {
            Some(byte) => out.push(byte),
            None => bail!("--package-metadata: invalid string: {v}"),
        }
        i += 3;
    }
    Ok(out)
}

fn build_id(v: &str) -> Result<BuildId> {
    Ok(match v {
        "sha1" | "tree" => BuildId::Sha1,
        "md5" => BuildId::Md5,
        "sha256" | "fast" => BuildId::Sha256,
        "uuid" => BuildId::Uuid,
        "none" => BuildId::None,
        _ => {
            let hex = v
                .strip_prefix("0x")
                .or_else(|| v.strip_prefix("0X"))
                .ok_or_else(|| fatal!("--build-id: unknown style '{v}'"))?;
            ensure!(
                !hex.is_empty() && hex.len() % 2 == 0 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
                "--build-id: bad hex string '{v}'"
            );
            BuildId::Hex((0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect())
        }
    })
}

/// Expands `@FILE` arguments in place, recursively; `active` holds the files being expanded so one
/// that includes itself is an error instead of an endless loop.
fn expand_response_files(args: Vec<OsString>, active: &mut Vec<PathBuf>) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for a in args {
        let a = a.into_string().map_err(|a| fatal!("argument is not valid UTF-8: {}", a.to_string_lossy()))?;
        let Some(file) = a.strip_prefix('@') else {
            out.push(a);
            continue;
        };
        let path = PathBuf::from(file);
        let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
        ensure!(!active.contains(&canonical), "response file {file} includes itself");
        let text = std::fs::read_to_string(&path).with_context(|| format!("cannot open response file {file}"))?;
        active.push(canonical);
        let words = split_response_text(&text).with_context(|| format!("response file {file}"))?;
        out.extend(expand_response_files(words.into_iter().map(OsString::from).collect(), active)?);
        active.pop();
    }
    Ok(out)
}

/// gcc/GNU ld response-file quoting: whitespace separates; single and double quotes group;
/// a backslash escapes the next character.
pub fn split_response_text(text: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(ch) = chars.next() {
        match (quote, ch) {
            (_, '\\') => {
                cur.push(chars.next().context("ends with a backslash")?);
                in_word = true;
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    ensure!(quote.is_none(), "unterminated quote");
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Options the parser knows but refuses for now ("not supported yet"): `--help` leaves them out, so
/// that a configure probe grepping it does not take them for supported.
const REFUSED: &[&str] = &[];

/// The `-z` keywords `z_option` accepts (`=` ends those that take a value), for `--help`.
const Z_KEYWORDS: &[&str] = &[
    "relro",
    "norelro",
    "now",
    "lazy",
    "text",
    "notext",
    "textoff",
    "execstack",
    "noexecstack",
    "execstack-if-needed",
    "x86-64-baseline",
    "x86-64-v2",
    "x86-64-v3",
    "x86-64-v4",
    "sectionheader",
    "nosectionheader",
    "rewrite-endbr",
    "norewrite-endbr",
    "gnustack",
    "nognustack",
    "mark-plt",
    "nomark-plt",
    "separate-code",
    "noseparate-code",
    "separate-loadable-segments",
    "defs",
    "nodefs",
    "undefs",
    "initfirst",
    "interpose",
    "nodefaultlib",
    "nodump",
    "origin",
    "nodelete",
    "nodlopen",
    "global",
    "rodynamic",
    "muldefs",
    "copyreloc",
    "nocopyreloc",
    "ibt",
    "force-ibt",
    "shstk",
    "ibtplt",
    "pack-relative-relocs",
    "nopack-relative-relocs",
    "keep-text-section-prefix",
    "dynamic-undefined-weak",
    "nodynamic-undefined-weak",
    "nokeep-text-section-prefix",
    "max-page-size=",
    "common-page-size=",
    "stack-size=",
    "cet-report=",
    "start-stop-visibility=",
];

/// Every option the command line accepts and implements, as `--help` lists it: long names with
/// `--`, one-letter ones with `-`, `=VALUE` where a value follows.
fn accepted_options() -> Vec<String> {
    let mut names: Vec<&str> = WITH_VALUE.iter().chain(KNOWN_FLAGS).copied().filter(|n| !REFUSED.contains(n)).collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .map(|n| {
            let dash = if n.len() == 1 { "-" } else { "--" };
            let value = if !WITH_VALUE.contains(&n) {
                ""
            } else if OPTIONAL_VALUE.contains(&n) {
                "[=VALUE]"
            } else if n.len() == 1 {
                " VALUE"
            } else {
                "=VALUE"
            };
            format!("{dash}{n}{value}")
        })
        .collect()
}

/// The `--help` text.
pub fn usage() -> String {
    let mut s = String::from(
        "Usage: rivet [options] file...\n\
         An x86-64 ELF linker, a drop-in replacement for GNU ld (use it through gcc -B DIR, DIR/ld -> rivet).\n\n\
         Common options:\n  -o FILE, -l LIB, -L DIR, -static, -pie, -no-pie, -e SYM, -u SYM, -z KEY, --start-group/--end-group,\n  \
         --whole-archive, --push-state/--pop-state, --gc-sections, --build-id[=STYLE], --eh-frame-hdr, -s, -S, @FILE\n\n\
         rivet's own:\n  --print-timing            per-phase timing table on stderr\n  \
         --time-trace[=FILE]       Chrome trace of the link\n  \
         --mmap-output-file        build the output in a mapping of the file\n  \
         --no-mmap-output-file     build the output in memory and write it sequentially\n  \
         --reuse-output            rewrite the previous output in place, -shared outputs too\n  \
         --no-reuse-output         always build a new file and rename it over the previous output\n  \
         --populate-output         pre-fault the output mapping for writing when it is created (not where nothing\n                            \
         is reserved or memory is tight)\n  \
         --no-populate-output      let the output mapping's pages fault in as they are first written\n  \
         --fsync                   flush the output to disk before exiting (off by default)\n  \
         --threads=N               worker threads\n  \
         -run COMMAND ARGS...      run COMMAND with rivet as its linker under every name (ld, ld.bfd, ld.gold,\n                            \
         ld.lld, ld.mold): links to rivet first in PATH and COMPILER_PATH\n\n\
         Output forms:\n  \
         --separate-debug-file[=FILE]  debug sections, .gdb_index and .symtab to FILE (OUTPUT.dbg),\n                                \
         .gnu_debuglink in the output; written after the output is in place\n  \
         --no-separate-debug-file      keep them in the output\n  \
         --detach, --no-detach         write the separate debug file in the background (default) or not\n  \
         --fork, --no-fork             return once the link is complete, leaving the process teardown to a child (default) or not\n  \
         --oformat=binary              the raw memory image of the loaded sections (lld's)\n  \
         --oformat=elf64-x86-64        an ELF file (the default)\n  \
         -n, --nmagic                  no page alignment, segments keep their permissions (lld's)\n  \
         -N, --omagic                  no page alignment, one read-write-execute segment\n  \
         -z separate-loadable-segments every segment starts a page in the file\n  \
         -z noseparate-code            read-only data and code share one segment\n  \
         --compress-debug-sections=zlib[:0-9]|zstd[:1-22]|none\n\n\
         Accepted and ignored:\n",
    );
    for (opt, why) in IGNORED_OPTIONS {
        s.push_str(&format!("  {opt}: {why}\n"));
    }
    // The whole accepted command line, so that configure scripts grepping for an option (libtool,
    // autoconf, gnulib look for --version-script, --as-needed, --gc-sections, -z relro...) get a
    // true answer; options rivet refuses are not listed.
    s.push_str("\nAll options (GNU ld syntax; a long option may also be written with one dash):\n");
    let mut line = String::from(" ");
    for opt in accepted_options() {
        if line.len() + opt.len() > 98 {
            s.push_str(&line);
            s.push('\n');
            line = String::from(" ");
        }
        line.push(' ');
        line.push_str(&opt);
    }
    s.push_str(&line);
    s.push_str("\n\n-z keywords:\n ");
    for k in Z_KEYWORDS {
        s.push(' ');
        s.push_str(k);
        if k.ends_with('=') {
            s.push_str("VALUE");
        }
    }
    // libtool builds shared libraries only when this line names an ELF target (it greps
    // ': supported targets:.* elf'), as GNU ld and lld print it.
    s.push_str("\n\nrivet: supported targets: elf64-x86-64\nrivet: supported emulations: elf_x86_64\n");
    s
}

#[cfg(test)]
mod tests {
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
        // Every -z keyword listed parses.
        for k in Z_KEYWORDS {
            let key = match k.strip_suffix('=') {
                Some("cet-report") => "cet-report=warning".to_string(),
                Some("start-stop-visibility") => "start-stop-visibility=hidden".to_string(),
                Some(name) => format!("{name}=0x1000"),
                None => k.to_string(),
            };
            assert!(p(&["-z", &key]).is_ok(), "-z {key} is listed but does not parse");
        }
        // Every listed option parses (with a value where it takes one).
        for opt in accepted_options() {
            let name = opt.split(['=', ' ', '[']).next().unwrap();
            if ["-v", "--version", "--help", "-V"].contains(&name) {
                continue;
            }
            // Known means: some spelling parses, or is refused for its value, not as unknown.
            let tries = [p(&[name]), p(&[name, "1"]), p(&[&format!("{name}=1")])];
            assert!(
                tries.iter().any(|r| r
                    .as_ref()
                    .map_or_else(|e| !e.to_string().contains("unknown command line option"), |_| true)),
                "{opt} is listed but unknown"
            );
        }
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
        assert_eq!(c.build_id, BuildId::Sha1);
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
        let c = p(&[
            "-static",
            "-pie",
            "--no-dynamic-linker",
            "-z",
            "text",
            "--start-group",
            "-lgcc",
            "-lc",
            "--end-group",
        ])
        .unwrap();
        assert!(c.static_link && c.pie && c.no_dynamic_linker && c.textrel == TextRel::Error);
        assert_eq!(c.inputs[0], InputArg::GroupStart);
        assert!(matches!(&c.inputs[1], InputArg::Library { state, .. } if state.static_only));
        assert_eq!(c.inputs[3], InputArg::GroupEnd);
        let c = p(&["-Bstatic", "-lfoo", "-Bdynamic", "-lbar"]).unwrap();
        assert!(!c.static_link);
        assert!(p(&["--allow-multiple-definition"]).unwrap().allow_multiple_definition);
        let c =
            p(&["--export-dynamic-symbol=foo*", "--export-dynamic-symbol", "bar", "--export-dynamic-symbol-list=l"])
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
        let c =
            p(&["-shared", "-soname", "libx.so.1", "-rpath", "/opt", "-s", "-gc-sections", "--gc-sections"]).unwrap();
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
        let c =
            p(&["-Ttext=401000", "-Tdata", "0x600000", "--section-start=.rodata=0x500000", "-Ttext-segment=1000000"])
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
            let s: String =
                (0..(seed % 24)).map(|i| b"a '\"\\ \n-"[((seed >> (i * 2)) % 8) as usize] as char).collect();
            let _ = split_response_text(&s);
        }
    }
}
