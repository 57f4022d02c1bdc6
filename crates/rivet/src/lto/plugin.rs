//! The linker plugin interface of binutils (`include/plugin-api.h`), as gcc's `liblto_plugin.so`
//! and LLVM's `LLVMgold.so` expect a linker to drive it. All of rivet's `unsafe` for LTO is here:
//! the plugin is a C library, loaded with `dlopen`, that calls back into the linker through the
//! function pointers of a transfer vector. The API has no context pointer, so what the callbacks
//! see lives in process-wide state: one plugin per process, loaded by the first link that needs it
//! and kept; what a link offered it is forgotten when the link ends (`cleanup`), so that a caller
//! linking again in the same process (the fuzz targets) starts afresh.
//!
//! The safe functions at the bottom (`load`, `claim`, `set_resolutions`, `all_symbols_read`,
//! `cleanup`) are what the rest of rivet uses. No lock is held while the plugin runs, since it
//! calls back into functions that take the lock.
use crate::diag::{Error, Result};
use crate::fatal;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::os::fd::{AsRawFd, IntoRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

// Status codes (enum ld_plugin_status).
const LDPS_OK: c_int = 0;
const LDPS_NO_SYMS: c_int = 1;
const LDPS_BAD_HANDLE: c_int = 2;
const LDPS_ERR: c_int = 3;

// Transfer vector tags (enum ld_plugin_tag).
const LDPT_NULL: c_int = 0;
const LDPT_API_VERSION: c_int = 1;
const LDPT_LINKER_OUTPUT: c_int = 3;
const LDPT_OPTION: c_int = 4;
const LDPT_REGISTER_CLAIM_FILE_HOOK: c_int = 5;
const LDPT_REGISTER_ALL_SYMBOLS_READ_HOOK: c_int = 6;
const LDPT_REGISTER_CLEANUP_HOOK: c_int = 7;
const LDPT_ADD_SYMBOLS: c_int = 8;
const LDPT_GET_SYMBOLS: c_int = 9;
const LDPT_ADD_INPUT_FILE: c_int = 10;
const LDPT_MESSAGE: c_int = 11;
const LDPT_GET_INPUT_FILE: c_int = 12;
const LDPT_RELEASE_INPUT_FILE: c_int = 13;
const LDPT_ADD_INPUT_LIBRARY: c_int = 14;
const LDPT_OUTPUT_NAME: c_int = 15;
const LDPT_SET_EXTRA_LIBRARY_PATH: c_int = 16;
const LDPT_GET_VIEW: c_int = 18;
const LDPT_GET_INPUT_SECTION_COUNT: c_int = 19;
const LDPT_GET_INPUT_SECTION_TYPE: c_int = 20;
const LDPT_GET_INPUT_SECTION_NAME: c_int = 21;
const LDPT_GET_INPUT_SECTION_CONTENTS: c_int = 22;
const LDPT_UPDATE_SECTION_ORDER: c_int = 23;
const LDPT_ALLOW_SECTION_ORDERING: c_int = 24;
const LDPT_GET_SYMBOLS_V2: c_int = 25;
const LDPT_ALLOW_UNIQUE_SEGMENT_FOR_SECTIONS: c_int = 26;
const LDPT_UNIQUE_SEGMENT_FOR_SECTIONS: c_int = 27;
const LDPT_GET_SYMBOLS_V3: c_int = 28;
const LDPT_GET_INPUT_SECTION_ALIGNMENT: c_int = 29;
const LDPT_GET_INPUT_SECTION_SIZE: c_int = 30;
const LDPT_REGISTER_NEW_INPUT_HOOK: c_int = 31;
const LDPT_GET_WRAP_SYMBOLS: c_int = 32;
const LDPT_ADD_SYMBOLS_V2: c_int = 33;
const LDPT_GET_API_VERSION: c_int = 34;
const LDPT_REGISTER_CLAIM_FILE_HOOK_V2: c_int = 35;

// Message levels (enum ld_plugin_level).
const LDPL_INFO: c_int = 0;
const LDPL_WARNING: c_int = 1;
const LDPL_ERROR: c_int = 2;

/// The output the plugin generates code for (enum ld_plugin_output_file_type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputType {
    /// LDPO_REL: `-r`, the plugin's objects are combined into a relocatable object.
    Rel = 0,
    Exec = 1,
    Shared = 2,
    Pie = 3,
}

// Symbol kinds (enum ld_plugin_symbol_kind; LDPK_DEF = 0).
pub const LDPK_WEAKDEF: u8 = 1;
pub const LDPK_UNDEF: u8 = 2;
pub const LDPK_WEAKUNDEF: u8 = 3;
pub const LDPK_COMMON: u8 = 4;
// Symbol types (add_symbols_v2).
pub const LDST_FUNCTION: u8 = 1;
pub const LDST_VARIABLE: u8 = 2;

/// How the link resolved an IR symbol (enum ld_plugin_symbol_resolution).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    Undef = 1,
    PrevailingDef = 2,
    PrevailingDefIronly = 3,
    PreemptedReg = 4,
    PreemptedIr = 5,
    ResolvedIr = 6,
    ResolvedExec = 7,
    ResolvedDyn = 8,
    PrevailingDefIronlyExp = 9,
}

/// struct ld_plugin_input_file.
#[repr(C)]
struct InputFile {
    name: *const c_char,
    fd: c_int,
    offset: i64,
    filesize: i64,
    handle: *mut c_void,
}

/// struct ld_plugin_symbol (the v2 layout: `def` shares its int with the symbol type and section
/// kind, little-endian; a v1 plugin leaves those bytes zero).
#[repr(C)]
struct Symbol {
    name: *const c_char,
    version: *const c_char,
    def: u8,
    symbol_type: u8,
    section_kind: u8,
    unused: u8,
    visibility: c_int,
    size: u64,
    comdat_key: *const c_char,
    resolution: c_int,
}

/// struct ld_plugin_section.
#[repr(C)]
#[derive(Clone, Copy)]
struct Section {
    handle: *const c_void,
    shndx: c_uint,
}

/// struct ld_plugin_tv: a tag and an int, string or function pointer.
#[repr(C)]
struct Tv {
    tag: c_int,
    value: TvValue,
}

#[repr(C)]
union TvValue {
    int: c_int,
    ptr: *const c_void,
}

type ClaimFile = unsafe extern "C" fn(*const InputFile, *mut c_int) -> c_int;
type ClaimFileV2 = unsafe extern "C" fn(*const InputFile, *mut c_int, c_int) -> c_int;
type NoArgs = unsafe extern "C" fn() -> c_int;
type NewInput = unsafe extern "C" fn(*const InputFile) -> c_int;
type Onload = unsafe extern "C" fn(*const Tv) -> c_int;

/// A symbol the plugin read from an IR file (add_symbols), owned.
#[derive(Clone, Debug)]
pub struct IrSymbol {
    pub name: Vec<u8>,
    /// LDPK_*.
    pub def: u8,
    /// LDST_* (0: unknown).
    pub symbol_type: u8,
    /// The ELF visibility (STV_*).
    pub visibility: u8,
    pub size: u64,
    /// The COMDAT group the definition belongs to.
    pub comdat_key: Option<Vec<u8>>,
}

/// A file offered to the plugin: what claim, get_input_file and get_view answer with.
struct File {
    name: CString,
    offset: u64,
    size: u64,
    /// The file's bytes in rivet's mapping (address, length): valid until the link ends, which
    /// is after the plugin's cleanup.
    view: (usize, usize),
    /// What add_symbols gave while the file was being claimed.
    symbols: Option<Vec<IrSymbol>>,
    /// Set before all_symbols_read, one per symbol; empty: not in the link.
    resolutions: Vec<Resolution>,
    /// Descriptors get_input_file opened, closed by release_input_file.
    fds: Vec<c_int>,
}

/// The hooks the plugin registered during onload.
#[derive(Clone, Copy, Default)]
struct Hooks {
    claim_file: Option<ClaimFile>,
    claim_file_v2: Option<ClaimFileV2>,
    all_symbols_read: Option<NoArgs>,
    cleanup: Option<NoArgs>,
    new_input: Option<NewInput>,
}

/// Everything the callbacks read or write.
#[derive(Default)]
struct State {
    hooks: Hooks,
    files: Vec<File>,
    messages: Vec<(c_int, String)>,
    added_files: Vec<PathBuf>,
    added_libraries: Vec<String>,
    library_paths: Vec<PathBuf>,
    /// `--wrap` names, as C strings, for get_wrap_symbols (the pointers stay valid: the strings
    /// are never dropped once loaded).
    wrap: Vec<CString>,
    wrap_ptrs: Vec<*const c_char>,
    /// The options and output name onload was given (their buffers never move or drop).
    kept: Vec<CString>,
    /// The plugin's path, for messages.
    plugin: String,
    loaded: bool,
}

// SAFETY: the raw pointers in State (`wrap_ptrs`) point into `wrap`'s CStrings, owned by the same
// State and only read; nothing in it is tied to a thread.
unsafe impl Send for State {}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Runs `f` on the state (created on first use). A poisoned lock is taken over: the state stays
/// consistent field by field, and a callback must never unwind into C.
fn with_state<T>(f: impl FnOnce(&mut State) -> T) -> T {
    let mut guard = STATE.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(State::default))
}

/// The file a handle stands for (handles are index + 1).
fn file_index(handle: *const c_void) -> Option<usize> {
    (handle as usize).checked_sub(1)
}

/// A C string from the plugin, copied (None for a null pointer).
///
/// # Safety
/// `p` is null or points to a NUL-terminated string.
unsafe fn c_bytes(p: *const c_char) -> Option<Vec<u8>> {
    // SAFETY: the caller guarantees a NUL-terminated string when not null.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes().to_vec())
}

// ---- The callbacks the transfer vector hands the plugin. ----

/// Formats the plugin's variadic `message` (in message.c) and calls this with the text.
#[no_mangle]
extern "C" fn rivet_lto_message_text(level: c_int, text: *const c_char) {
    // SAFETY: message.c passes its NUL-terminated buffer.
    let text = String::from_utf8_lossy(&unsafe { c_bytes(text) }.unwrap_or_default()).into_owned();
    if level >= 3 {
        // LDPL_FATAL: the plugin does not expect to continue (GNU ld exits here too). Nothing
        // has been written yet, so the old output stays as it was.
        let plugin = with_state(|s| s.plugin.clone());
        crate::diag::print_error(format!("{plugin}: {text}"));
        std::process::exit(1);
    }
    with_state(|s| s.messages.push((level, text)));
}

extern "C" {
    /// message.c: `int rivet_lto_message(int level, const char *format, ...)`.
    fn rivet_lto_message(level: c_int, format: *const c_char, ...) -> c_int;
}

extern "C" fn register_claim_file(hook: Option<ClaimFile>) -> c_int {
    with_state(|s| s.hooks.claim_file = hook);
    LDPS_OK
}

extern "C" fn register_claim_file_v2(hook: Option<ClaimFileV2>) -> c_int {
    with_state(|s| s.hooks.claim_file_v2 = hook);
    LDPS_OK
}

extern "C" fn register_all_symbols_read(hook: Option<NoArgs>) -> c_int {
    with_state(|s| s.hooks.all_symbols_read = hook);
    LDPS_OK
}

extern "C" fn register_cleanup(hook: Option<NoArgs>) -> c_int {
    with_state(|s| s.hooks.cleanup = hook);
    LDPS_OK
}

/// Recorded, never called: it only serves section ordering in plugin-made files (gold's
/// `--section-ordering-file` plugins), which rivet does not offer.
extern "C" fn register_new_input(hook: Option<NewInput>) -> c_int {
    with_state(|s| s.hooks.new_input = hook);
    LDPS_OK
}

/// add_symbols and add_symbols_v2 (the same layout; v1 plugins leave the v2 bytes zero).
extern "C" fn add_symbols(handle: *mut c_void, nsyms: c_int, syms: *const Symbol) -> c_int {
    let count = usize::try_from(nsyms).unwrap_or(0);
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: the plugin passes `nsyms` symbols at `syms`, valid during this call.
        let sym = unsafe { &*syms.add(i) };
        // SAFETY: name and comdat_key are null or NUL-terminated strings owned by the plugin.
        let (name, comdat_key) = unsafe { (c_bytes(sym.name), c_bytes(sym.comdat_key)) };
        let Some(name) = name else { return LDPS_ERR };
        // A kind or visibility the API does not define fails the list, as in GNU ld; the link
        // reports which symbol.
        let refuse = |what: &str, value: c_int| {
            let name = String::from_utf8_lossy(&name);
            let text = format!("add_symbols: symbol '{name}' has {what} {value}, which the plugin API does not define");
            with_state(|s| s.messages.push((LDPL_ERROR, text)));
            LDPS_ERR
        };
        let visibility = match sym.visibility {
            0 => object::elf::STV_DEFAULT,
            1 => object::elf::STV_PROTECTED,
            2 => object::elf::STV_INTERNAL,
            3 => object::elf::STV_HIDDEN,
            v => return refuse("visibility", v),
        };
        if sym.def > LDPK_COMMON {
            return refuse("kind", sym.def.into());
        }
        out.push(IrSymbol {
            name,
            def: sym.def,
            symbol_type: sym.symbol_type,
            visibility,
            size: sym.size,
            comdat_key: comdat_key.filter(|k| !k.is_empty()),
        });
    }
    with_state(|s| match file_index(handle).and_then(|i| s.files.get_mut(i)) {
        Some(f) => {
            f.symbols = Some(out);
            LDPS_OK
        }
        None => LDPS_BAD_HANDLE,
    })
}

/// get_symbols v1-v3: fills in each symbol's resolution. v1 knows no PREVAILING_DEF_IRONLY_EXP;
/// v3 may be told a file is not in the link (LDPS_NO_SYMS), which never happens here: only the
/// files resolution loads are offered.
fn get_symbols(handle: *const c_void, nsyms: c_int, syms: *mut Symbol, version: u32) -> c_int {
    let resolutions = with_state(|s| file_index(handle).and_then(|i| s.files.get(i)).map(|f| f.resolutions.clone()));
    let Some(resolutions) = resolutions else { return LDPS_BAD_HANDLE };
    if resolutions.is_empty() && version >= 3 {
        return LDPS_NO_SYMS;
    }
    for i in 0..usize::try_from(nsyms).unwrap_or(0) {
        let r = match resolutions.get(i).copied() {
            Some(Resolution::PrevailingDefIronlyExp) if version == 1 => Resolution::PrevailingDef,
            Some(r) => r,
            None => Resolution::Undef,
        };
        // SAFETY: the plugin passes `nsyms` symbols at `syms`, writable during this call.
        unsafe { (*syms.add(i)).resolution = r as c_int };
    }
    LDPS_OK
}

extern "C" fn get_symbols_v1(handle: *const c_void, nsyms: c_int, syms: *mut Symbol) -> c_int {
    get_symbols(handle, nsyms, syms, 1)
}

extern "C" fn get_symbols_v2(handle: *const c_void, nsyms: c_int, syms: *mut Symbol) -> c_int {
    get_symbols(handle, nsyms, syms, 2)
}

extern "C" fn get_symbols_v3(handle: *const c_void, nsyms: c_int, syms: *mut Symbol) -> c_int {
    get_symbols(handle, nsyms, syms, 3)
}

extern "C" fn add_input_file(path: *const c_char) -> c_int {
    // SAFETY: the plugin passes a NUL-terminated path.
    let Some(path) = (unsafe { c_bytes(path) }) else { return LDPS_ERR };
    with_state(|s| s.added_files.push(PathBuf::from(std::ffi::OsStr::from_bytes(&path))));
    LDPS_OK
}

extern "C" fn add_input_library(name: *const c_char) -> c_int {
    // SAFETY: the plugin passes a NUL-terminated name.
    let Some(name) = (unsafe { c_bytes(name) }) else { return LDPS_ERR };
    with_state(|s| s.added_libraries.push(String::from_utf8_lossy(&name).into_owned()));
    LDPS_OK
}

extern "C" fn set_extra_library_path(path: *const c_char) -> c_int {
    // SAFETY: the plugin passes a NUL-terminated path.
    let Some(path) = (unsafe { c_bytes(path) }) else { return LDPS_ERR };
    with_state(|s| s.library_paths.push(PathBuf::from(std::ffi::OsStr::from_bytes(&path))));
    LDPS_OK
}

/// A claimed file again, with a descriptor of its own (closed by release_input_file).
extern "C" fn get_input_file(handle: *const c_void, out: *mut InputFile) -> c_int {
    with_state(|s| {
        let Some(f) = file_index(handle).and_then(|i| s.files.get_mut(i)) else { return LDPS_BAD_HANDLE };
        let path = Path::new(std::ffi::OsStr::from_bytes(f.name.as_bytes()));
        let Ok(file) = std::fs::File::open(path) else { return LDPS_ERR };
        let fd = file.into_raw_fd();
        f.fds.push(fd);
        let info = InputFile {
            name: f.name.as_ptr(),
            fd,
            offset: f.offset as i64,
            filesize: f.size as i64,
            handle: handle as *mut c_void,
        };
        // SAFETY: the plugin passes a struct to fill; `name` stays valid as long as the state.
        unsafe { out.write(info) };
        LDPS_OK
    })
}

extern "C" fn release_input_file(handle: *const c_void) -> c_int {
    with_state(|s| {
        let Some(f) = file_index(handle).and_then(|i| s.files.get_mut(i)) else { return LDPS_BAD_HANDLE };
        for fd in f.fds.drain(..) {
            // SAFETY: get_input_file opened this descriptor and nothing else owns it.
            unsafe { libc::close(fd) };
        }
        LDPS_OK
    })
}

/// The file's bytes, from rivet's own mapping.
extern "C" fn get_view(handle: *const c_void, view: *mut *const c_void) -> c_int {
    with_state(|s| {
        let Some(f) = file_index(handle).and_then(|i| s.files.get(i)) else { return LDPS_BAD_HANDLE };
        // SAFETY: the plugin passes a pointer to fill.
        unsafe { view.write(f.view.0 as *const c_void) };
        LDPS_OK
    })
}

/// The section headers of a claimed ELF file (the get_input_section_* queries).
fn with_section<T>(
    section: Section,
    f: impl FnOnce(&[u8], &object::elf::SectionHeader64<object::LittleEndian>) -> T,
) -> Option<T> {
    use object::read::elf::FileHeader;
    let (addr, len) = with_state(|s| file_index(section.handle).and_then(|i| s.files.get(i)).map(|f| f.view))?;
    // SAFETY: the view is rivet's mapping of the file, alive until the link ends.
    let data = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
    let header = object::elf::FileHeader64::<object::LittleEndian>::parse(data).ok()?;
    let table = header.sections(object::LittleEndian, data).ok()?;
    let sh = table.section(object::SectionIndex(section.shndx as usize)).ok()?;
    let name = table.section_name(object::LittleEndian, sh).ok()?;
    Some(f(name, sh))
}

extern "C" fn get_input_section_count(handle: *const c_void, count: *mut c_uint) -> c_int {
    use object::read::elf::FileHeader;
    let Some((addr, len)) = with_state(|s| file_index(handle).and_then(|i| s.files.get(i)).map(|f| f.view)) else {
        return LDPS_BAD_HANDLE;
    };
    // SAFETY: the view is rivet's mapping of the file, alive until the link ends.
    let data = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
    let n = object::elf::FileHeader64::<object::LittleEndian>::parse(data)
        .and_then(|h| h.sections(object::LittleEndian, data))
        .map(|t| t.len());
    match n {
        // SAFETY: the plugin passes a pointer to fill.
        Ok(n) => unsafe { count.write(n as c_uint) },
        Err(_) => return LDPS_ERR,
    }
    LDPS_OK
}

extern "C" fn get_input_section_type(section: Section, out: *mut c_uint) -> c_int {
    use object::read::elf::SectionHeader as _;
    match with_section(section, |_, sh| sh.sh_type(object::LittleEndian)) {
        // SAFETY: the plugin passes a pointer to fill.
        Some(t) => unsafe { out.write(t) },
        None => return LDPS_BAD_HANDLE,
    }
    LDPS_OK
}

extern "C" fn get_input_section_name(section: Section, out: *mut *mut c_char) -> c_int {
    let Some(name) = with_section(section, |name, _| name.to_vec()) else { return LDPS_BAD_HANDLE };
    let Ok(name) = CString::new(name) else { return LDPS_ERR };
    // SAFETY: the API hands the plugin a malloc'ed copy, which the plugin frees.
    unsafe { out.write(libc::strdup(name.as_ptr())) };
    LDPS_OK
}

extern "C" fn get_input_section_contents(section: Section, out: *mut *const u8, len: *mut usize) -> c_int {
    use object::read::elf::SectionHeader as _;
    let got = with_section(section, |_, sh| {
        let (offset, size) = (sh.sh_offset(object::LittleEndian) as usize, sh.sh_size(object::LittleEndian) as usize);
        (offset, size)
    });
    let Some((offset, size)) = got else { return LDPS_BAD_HANDLE };
    let Some((addr, total)) = with_state(|s| file_index(section.handle).and_then(|i| s.files.get(i)).map(|f| f.view))
    else {
        return LDPS_BAD_HANDLE;
    };
    if offset.checked_add(size).is_none_or(|end| end > total) {
        return LDPS_ERR;
    }
    // SAFETY: the range was checked against the mapping; the plugin passes pointers to fill.
    unsafe {
        out.write((addr as *const u8).add(offset));
        len.write(size);
    }
    LDPS_OK
}

extern "C" fn get_input_section_alignment(section: Section, out: *mut c_uint) -> c_int {
    use object::read::elf::SectionHeader as _;
    match with_section(section, |_, sh| sh.sh_addralign(object::LittleEndian)) {
        // SAFETY: the plugin passes a pointer to fill.
        Some(a) => unsafe { out.write(a as c_uint) },
        None => return LDPS_BAD_HANDLE,
    }
    LDPS_OK
}

extern "C" fn get_input_section_size(section: Section, out: *mut u64) -> c_int {
    use object::read::elf::SectionHeader as _;
    match with_section(section, |_, sh| sh.sh_size(object::LittleEndian)) {
        // SAFETY: the plugin passes a pointer to fill.
        Some(n) => unsafe { out.write(n) },
        None => return LDPS_BAD_HANDLE,
    }
    LDPS_OK
}

/// Section ordering and unique segments (gold's) are accepted and have no effect.
extern "C" fn ignore_request() -> c_int {
    LDPS_OK
}

extern "C" fn ignore_section_list(_: *const Section, _: c_uint) -> c_int {
    LDPS_OK
}

extern "C" fn ignore_unique_segment(_: *const c_char, _: u64, _: u64, _: *const Section, _: c_uint) -> c_int {
    LDPS_OK
}

extern "C" fn get_wrap_symbols(count: *mut u64, list: *mut *const *const c_char) -> c_int {
    with_state(|s| {
        // SAFETY: the plugin passes pointers to fill; the list lives as long as the state.
        unsafe {
            count.write(s.wrap_ptrs.len() as u64);
            list.write(s.wrap_ptrs.as_ptr());
        }
    });
    LDPS_OK
}

/// The linker API version handshake (gcc 12): rivet offers LAPI_V1 (get_symbols_v3,
/// add_symbols_v2; it claims files from one thread at a time anyway).
extern "C" fn get_api_version(
    _plugin: *const c_char,
    _plugin_version: c_uint,
    _minimal: c_int,
    maximal: c_int,
    linker: *mut *const c_char,
    linker_version: *mut *const c_char,
) -> c_int {
    static NAME: &CStr = c"rivet";
    static VERSION: &CStr = c"0.1.0";
    // SAFETY: the plugin passes pointers to fill; the strings are static.
    unsafe {
        linker.write(NAME.as_ptr());
        linker_version.write(VERSION.as_ptr());
    }
    maximal.min(1)
}

// ---- What the rest of rivet calls. ----

/// What the plugin said besides its results: warnings to report, and errors, which fail the
/// link (their texts, already prefixed with the plugin's path).
fn take_messages() -> (Vec<String>, Vec<String>) {
    let (plugin, messages) = with_state(|s| (s.plugin.clone(), std::mem::take(&mut s.messages)));
    let (mut warnings, mut errors) = (Vec::new(), Vec::new());
    for (level, text) in messages {
        let text = format!("{plugin}: {text}");
        match level {
            LDPL_INFO => eprintln!("rivet: {text}"),
            LDPL_WARNING => warnings.push(text),
            LDPL_ERROR.. => errors.push(text),
            _ => warnings.push(text),
        }
    }
    (warnings, errors)
}

/// Turns the plugin's errors into one error, or passes its warnings on.
fn check_messages(warnings: &mut Vec<String>) -> Result<()> {
    let (w, errors) = take_messages();
    warnings.extend(w);
    match errors.is_empty() {
        true => Ok(()),
        false => Err(Error::new(errors.join("\n"))),
    }
}

/// Loads the plugin at `path` and calls its `onload` with rivet's transfer vector: the options in
/// command-line order, the output's type and name, and every callback.
pub fn load(
    path: &str,
    options: &[String],
    output: OutputType,
    output_name: &Path,
    wrap: &[String],
    warnings: &mut Vec<String>,
) -> Result<()> {
    // A later link in the same process uses the plugin (and the options) the first one loaded.
    if let Some(first) = with_state(|s| s.loaded.then(|| s.plugin.clone())) {
        if first != path {
            return Err(fatal!("cannot load a second LTO plugin in one process ({first} is loaded)").context(path));
        }
        return Ok(());
    }
    let c = |s: &[u8]| CString::new(s).map_err(|_| fatal!("{path}: a plugin option contains a NUL byte"));
    let opts: Vec<CString> = options.iter().map(|o| c(o.as_bytes())).collect::<Result<_>>()?;
    let out_name = c(output_name.as_os_str().as_bytes())?;
    let wrap: Vec<CString> = wrap.iter().map(|w| c(w.as_bytes())).collect::<Result<_>>()?;
    // SAFETY: loading a library runs its initialisers; the plugin is a library made to be loaded
    // into a linker, named by the command line, as GNU ld loads it. RTLD_NOW reports a missing
    // dependency here rather than at the first call.
    let lib = unsafe {
        libloading::os::unix::Library::open(
            Some(path),
            libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
        )
    }
    .map_err(|e| fatal!("cannot load LTO plugin: {e}").context(path))?;
    // SAFETY: `onload` has this type in every plugin (plugin-api.h's ld_plugin_onload).
    let onload: Onload = *unsafe { lib.get::<Onload>(b"onload\0") }
        .map_err(|e| fatal!("not an LTO plugin (no onload function): {e}").context(path))?;
    // The plugin stays loaded until the process exits: its threads and atexit handlers may run
    // until then.
    std::mem::forget(lib);
    with_state(|s| {
        s.plugin = path.to_string();
        s.wrap_ptrs = wrap.iter().map(|w| w.as_ptr()).collect();
        s.wrap = wrap;
        s.loaded = true;
    });
    let int = |tag: c_int, v: c_int| Tv { tag, value: TvValue { int: v } };
    let ptr = |tag: c_int, p: *const c_void| Tv { tag, value: TvValue { ptr: p } };
    let mut tv = vec![
        ptr(LDPT_MESSAGE, rivet_lto_message as *const c_void),
        int(LDPT_API_VERSION, 1),
        int(LDPT_LINKER_OUTPUT, output as c_int),
        ptr(LDPT_OUTPUT_NAME, out_name.as_ptr() as *const c_void),
    ];
    tv.extend(opts.iter().map(|o| ptr(LDPT_OPTION, o.as_ptr() as *const c_void)));
    let callbacks: &[(c_int, *const c_void)] = &[
        (LDPT_REGISTER_CLAIM_FILE_HOOK, register_claim_file as *const c_void),
        (LDPT_REGISTER_CLAIM_FILE_HOOK_V2, register_claim_file_v2 as *const c_void),
        (LDPT_REGISTER_ALL_SYMBOLS_READ_HOOK, register_all_symbols_read as *const c_void),
        (LDPT_REGISTER_CLEANUP_HOOK, register_cleanup as *const c_void),
        (LDPT_REGISTER_NEW_INPUT_HOOK, register_new_input as *const c_void),
        (LDPT_ADD_SYMBOLS, add_symbols as *const c_void),
        (LDPT_ADD_SYMBOLS_V2, add_symbols as *const c_void),
        (LDPT_GET_SYMBOLS, get_symbols_v1 as *const c_void),
        (LDPT_GET_SYMBOLS_V2, get_symbols_v2 as *const c_void),
        (LDPT_GET_SYMBOLS_V3, get_symbols_v3 as *const c_void),
        (LDPT_ADD_INPUT_FILE, add_input_file as *const c_void),
        (LDPT_ADD_INPUT_LIBRARY, add_input_library as *const c_void),
        (LDPT_SET_EXTRA_LIBRARY_PATH, set_extra_library_path as *const c_void),
        (LDPT_GET_INPUT_FILE, get_input_file as *const c_void),
        (LDPT_RELEASE_INPUT_FILE, release_input_file as *const c_void),
        (LDPT_GET_VIEW, get_view as *const c_void),
        (LDPT_GET_INPUT_SECTION_COUNT, get_input_section_count as *const c_void),
        (LDPT_GET_INPUT_SECTION_TYPE, get_input_section_type as *const c_void),
        (LDPT_GET_INPUT_SECTION_NAME, get_input_section_name as *const c_void),
        (LDPT_GET_INPUT_SECTION_CONTENTS, get_input_section_contents as *const c_void),
        (LDPT_GET_INPUT_SECTION_ALIGNMENT, get_input_section_alignment as *const c_void),
        (LDPT_GET_INPUT_SECTION_SIZE, get_input_section_size as *const c_void),
        (LDPT_UPDATE_SECTION_ORDER, ignore_section_list as *const c_void),
        (LDPT_ALLOW_SECTION_ORDERING, ignore_request as *const c_void),
        (LDPT_ALLOW_UNIQUE_SEGMENT_FOR_SECTIONS, ignore_request as *const c_void),
        (LDPT_UNIQUE_SEGMENT_FOR_SECTIONS, ignore_unique_segment as *const c_void),
        (LDPT_GET_WRAP_SYMBOLS, get_wrap_symbols as *const c_void),
        (LDPT_GET_API_VERSION, get_api_version as *const c_void),
    ];
    tv.extend(callbacks.iter().map(|&(tag, p)| ptr(tag, p)));
    tv.push(int(LDPT_NULL, 0));
    // SAFETY: the transfer vector is NULL-terminated and every entry has the type its tag
    // promises; the strings it points to (`opts`, `out_name`) are kept in the state below, for
    // the rest of the process, since plugins keep the pointers (gcc's keeps the options).
    let status = unsafe { onload(tv.as_ptr()) };
    with_state(|s| s.kept.extend(opts.into_iter().chain([out_name])));
    check_messages(warnings)?;
    if status != LDPS_OK {
        return Err(fatal!("the LTO plugin's onload failed (status {status})").context(path));
    }
    if with_state(|s| s.hooks.claim_file.is_none() && s.hooks.claim_file_v2.is_none()) {
        return Err(fatal!("the LTO plugin registered no claim_file handler").context(path));
    }
    Ok(())
}

/// A file the plugin claimed: its handle and the symbols it read.
pub struct Claimed {
    pub handle: usize,
    pub symbols: Vec<IrSymbol>,
}

/// Offers a file (or an archive member: `path` is the archive's, `offset` the member's) to the
/// plugin. `view` is the bytes, which must stay mapped until the link ends. `warnings` collects
/// the plugin's warnings.
pub fn claim(path: &Path, offset: u64, view: &[u8], warnings: &mut Vec<String>) -> Result<Option<Claimed>> {
    let name = CString::new(path.as_os_str().as_bytes()).map_err(|_| fatal!("path contains a NUL byte"))?;
    let file = std::fs::File::open(path).map_err(|e| fatal!("cannot open for the LTO plugin: {e}"))?;
    let (hooks, index) = with_state(|s| {
        s.files.push(File {
            name,
            offset,
            size: view.len() as u64,
            view: (view.as_ptr() as usize, view.len()),
            symbols: None,
            resolutions: Vec::new(),
            fds: Vec::new(),
        });
        (s.hooks, s.files.len() - 1)
    });
    let name_ptr = with_state(|s| s.files[index].name.as_ptr());
    let input = InputFile {
        name: name_ptr,
        fd: file.as_raw_fd(),
        offset: offset as i64,
        filesize: view.len() as i64,
        handle: (index + 1) as *mut c_void,
    };
    let mut claimed: c_int = 0;
    // SAFETY: `input` and `claimed` outlive the call; the name it points to is owned by the
    // state's File, whose CString buffer never moves; the descriptor is open until `file` drops.
    let status = unsafe {
        match (hooks.claim_file_v2, hooks.claim_file) {
            (Some(v2), _) => v2(&input, &mut claimed, 1),
            (None, Some(v1)) => v1(&input, &mut claimed),
            (None, None) => return Ok(None),
        }
    };
    drop(file);
    check_messages(warnings)?;
    if status != LDPS_OK {
        return Err(fatal!("the LTO plugin failed to read this file (status {status})"));
    }
    if claimed == 0 {
        return Ok(None);
    }
    let symbols = with_state(|s| s.files[index].symbols.take()).unwrap_or_default();
    Ok(Some(Claimed { handle: index + 1, symbols }))
}

/// The resolutions get_symbols reports for a claimed file, one per symbol in add_symbols order.
pub fn set_resolutions(handle: usize, resolutions: Vec<Resolution>) {
    with_state(|s| {
        if let Some(f) = file_index(handle as *const c_void).and_then(|i| s.files.get_mut(i)) {
            f.resolutions = resolutions;
        }
    });
}

/// What the plugin adds to the link once it has compiled the IR.
#[derive(Default, Debug)]
pub struct Added {
    pub files: Vec<PathBuf>,
    pub libraries: Vec<String>,
    pub library_paths: Vec<PathBuf>,
}

/// Runs the plugin's all_symbols_read handler: link-time optimisation and code generation. The
/// plugin reads the resolutions (get_symbols) and adds the objects it made (add_input_file) and
/// the libraries they need (add_input_library).
pub fn all_symbols_read(warnings: &mut Vec<String>) -> Result<Added> {
    let (hook, plugin) = with_state(|s| (s.hooks.all_symbols_read, s.plugin.clone()));
    let status = match hook {
        // SAFETY: the plugin registered this handler; it takes no arguments.
        Some(f) => unsafe { f() },
        None => LDPS_OK,
    };
    check_messages(warnings)?;
    if status != LDPS_OK {
        return Err(fatal!("the LTO plugin failed (all_symbols_read returned {status})").context(plugin));
    }
    Ok(with_state(|s| Added {
        files: std::mem::take(&mut s.added_files),
        libraries: std::mem::take(&mut s.added_libraries),
        library_paths: std::mem::take(&mut s.library_paths),
    }))
}

/// Ends the link for the plugin: runs its cleanup handler (it removes its temporary files), then
/// forgets the files the link offered it, with their descriptors, and whatever it said or added
/// that the link did not take.
pub fn cleanup() {
    let hook = with_state(|s| s.hooks.cleanup.filter(|_| s.loaded));
    if let Some(f) = hook {
        // SAFETY: the plugin registered this handler; it takes no arguments.
        unsafe { f() };
    }
    with_state(|s| {
        for f in s.files.drain(..) {
            for fd in f.fds {
                // SAFETY: get_input_file opened this descriptor and the plugin did not release it.
                unsafe { libc::close(fd) };
            }
        }
        s.messages.clear();
        s.added_files.clear();
        s.added_libraries.clear();
        s.library_paths.clear();
    });
}
