//! The GNU ld command line. Takes argv (with `@response` files expanded) and gives a `Config`: every
//! option rivet understands, in a plain structure the rest of the linker reads. Options are accepted
//! with one or two dashes and `--opt=value` / `--opt value` / `-ovalue` spellings as GNU ld accepts them.
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
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputArg {
    /// A path named on the command line (object, archive, shared object or linker script).
    File { path: PathBuf, state: InputState },
    /// `-lNAME` (`name` = "NAME") or `-l:FILE` (`name` = ":FILE").
    Library { name: String, state: InputState },
    /// `--start-group` / `-(`
    GroupStart,
    /// `--end-group` / `-)`
    GroupEnd,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildId {
    None,
    Sha1,
    Md5,
    Uuid,
    Hex(Vec<u8>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashStyle {
    Sysv,
    Gnu,
    Both,
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
    pub inputs: Vec<InputArg>,
    /// `-L DIR`, in command-line order.
    pub lib_paths: Vec<PathBuf>,
    /// `-static` / `-Bstatic` seen before any input with no later `-Bdynamic`... no: true iff `-static`
    /// (or `-Bstatic`/`-dn`/`-non_shared` given as `-static`) appeared anywhere: the output has no
    /// dynamic section unless `-pie` makes it static-pie.
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
    /// `--eh-frame-hdr` / `--no-eh-frame-hdr`.
    pub eh_frame_hdr: bool,
    /// `-z relro` (default true, as Debian's ld) / `-z norelro`.
    pub relro: bool,
    /// `-z now` / `-z lazy`.
    pub now: bool,
    /// `-z text` / `-z notext`: true when `-z text` given (default false: `-z notext` allowed).
    pub z_text: bool,
    /// `-z execstack` / `-z noexecstack` (default false).
    pub execstack: bool,
    /// `-z separate-code` (default true on x86-64 Linux, as GNU ld) / `-z noseparate-code`.
    pub separate_code: bool,
    /// `-z max-page-size=N` (default 4096).
    pub max_page_size: u64,
    /// `--hash-style=` (default Gnu... GNU ld's default is sysv; gcc passes gnu).
    pub hash_style: HashStyle,
    /// `-soname NAME` / `-h NAME` / `--soname=NAME`.
    pub soname: Option<String>,
    /// `-rpath DIR` / `-R DIR` (repeatable; joined with ':' in the output).
    pub rpath: Vec<String>,
    /// `-rpath-link DIR`.
    pub rpath_link: Vec<String>,
    /// `--enable-new-dtags` (default true on Debian: DT_RUNPATH) / `--disable-new-dtags`.
    pub new_dtags: bool,
    /// `-E` / `--export-dynamic` (false after `--no-export-dynamic`).
    pub export_dynamic: bool,
    /// `--gc-sections` / `--no-gc-sections`.
    pub gc_sections: bool,
    pub print_gc_sections: bool,
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
    /// `--fsync` (default false).
    pub fsync: bool,
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
    /// `--no-undefined` / `-z defs`.
    pub no_undefined: bool,
    /// `--allow-shlib-undefined` (Some(true)) / `--no-allow-shlib-undefined` (Some(false)).
    pub allow_shlib_undefined: Option<bool>,
    /// `--no-undefined-version` (true) / `--undefined-version` (false). Default false.
    pub no_undefined_version: bool,
    /// `-Bsymbolic`, `-Bsymbolic-functions`.
    pub bsymbolic: bool,
    pub bsymbolic_functions: bool,
    /// `-plugin PATH` and `-plugin-opt OPT` / `-plugin-opt=OPT`: recorded (LTO is not implemented; an
    /// LTO object given as input is an error).
    pub plugin: Option<String>,
    pub plugin_opts: Vec<String>,
    /// `-m EMULATION`: only elf_x86_64 is accepted (checked by the parser).
    pub emulation: Option<String>,
    /// `-O N` (0..=3; default 0... GNU ld default is -O0? record what is given, default 1).
    pub opt_level: u8,
    /// `-Map FILE` / `-Map=FILE` / `--Map=FILE`.
    pub map_file: Option<PathBuf>,
    /// `--fatal-warnings` / `--no-fatal-warnings`.
    pub fatal_warnings: bool,
    /// `--color-diagnostics[=auto|always|never]` / `--no-color-diagnostics`: Some(true|false), None=auto.
    pub color_diagnostics: Option<bool>,
    /// `--sysroot=DIR`.
    pub sysroot: Option<PathBuf>,
    /// `--reproduce=FILE`.
    pub reproduce: Option<PathBuf>,
    /// `--wrap=SYM` / `--wrap SYM`.
    pub wrap: Vec<String>,
    /// `--defsym=SYM=EXPR` (kept as the two strings).
    pub defsym: Vec<(String, String)>,
    /// `--exclude-libs=LIB,LIB` / `--exclude-libs LIBS`.
    pub exclude_libs: Vec<String>,
    /// `--icf=all|safe|none`.
    pub icf: Option<String>,
    /// `--compress-debug-sections=none|zlib|zstd`.
    pub compress_debug_sections: Option<String>,
    /// `--image-base=ADDR`.
    pub image_base: Option<u64>,
    /// `-Ttext=ADDR` etc. (section name without dot → address).
    pub section_starts: Vec<(String, u64)>,
    /// `--no-warn-mismatch`, `--warn-common`, ... flags that are checks only.
    pub no_warn_mismatch: bool,
    /// `--discard-all`/`-x`, `--discard-locals`/`-X`, `--discard-none`.
    pub discard: Option<String>,
    /// `--print-map` / `-M` to stdout.
    pub print_map: bool,
    /// `--trace` / `-t`: print each input file name as it is opened.
    pub trace: bool,
    /// `--io-strategy=auto|...`, `--prefetch-inputs`/`--no-prefetch-inputs`, `--copy-method=`:
    /// rivet's own I/O options (strings checked by the I/O layer).
    pub io_strategy: Option<String>,
    pub prefetch_inputs: Option<bool>,
    pub copy_method: Option<String>,
}

/// Parses `args` (argv without argv[0]). Response files (`@FILE`, nested, quoted as GNU ld/gcc write
/// them) are expanded first. Errors are complete sentences naming the option.
pub fn parse(args: Vec<OsString>) -> Result<Config, String> {
    let _ = args;
    todo!()
}

/// The `--help` text.
pub fn usage() -> String {
    String::from("Usage: rivet [options] file...\n")
}
