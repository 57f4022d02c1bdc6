//! Inputs: takes the command line's input list and gives every file it names, opened (mapped) and
//! classified: relocatable objects, archives (thin members opened too), shared objects. Linker
//! scripts (`-T`, or any text input: Debian's `libc.so` stubs too) are parsed and the inputs they
//! name expanded in place, their other commands kept for later stages; `-l` is searched as GNU ld
//! searches it.
pub mod archive;
pub mod object;
pub mod script;
pub mod shared;
pub mod version_script;

use crate::args::{Config, InputArg, InputState};
use crate::diag::{Context, Error, Result};
use crate::fatal;
use rivet_io::{InputCache, InputFile};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Object,
    Archive,
    Shared,
}

/// One input file as the command line (or a script stub) names it.
pub struct Loaded {
    pub file: Arc<InputFile>,
    /// The path as it will appear in messages.
    pub name: String,
    pub kind: Kind,
    pub state: InputState,
    /// Members of a thin archive, opened from their own files, by member index.
    pub thin_members: Vec<Option<Arc<InputFile>>>,
    /// Decompressed sections of this file (and its members) live here.
    pub arena: rivet_io::ByteArena,
    /// Found by a `-l` search (rather than named by its path): a shared library without a
    /// DT_SONAME is then recorded in DT_NEEDED by its file name, else by the path as written, as
    /// GNU ld and lld do.
    pub searched: bool,
    /// lld's group number (for `--warn-backrefs`): each input outside a group has its own, in
    /// command-line order; the inputs of one `--start-group`/`--end-group` or script `GROUP`
    /// share one. A reference may fetch an archive member without a warning only from an input
    /// whose group is not later than the archive's: what GNU ld's single pass allows.
    pub group: u32,
}

struct Loader<'c> {
    config: &'c Config,
    timer: &'c crate::timing::Timer,
    cache: &'c InputCache,
    prefetch: Option<&'c rivet_io::Prefetcher>,
    out: Vec<Loaded>,
    errors: Vec<Error>,
    /// Script stubs being expanded, to refuse one that includes itself.
    script_stack: Vec<PathBuf>,
    /// The file being added was found by a `-l` search.
    searching: bool,
    /// The scripts read, in command-line order.
    scripts: Vec<script::ScriptFile>,
    /// The command-line input being expanded.
    at: usize,
    /// `SEARCH_DIR`s of the scripts read so far (searched after `-L`).
    script_dirs: Vec<PathBuf>,
    /// The group of the next input (`Loaded::group`), and how many groups are open.
    group: u32,
    group_depth: u32,
    /// The file-system questions asked so far, in order (kept with `--incremental` only).
    probes: std::cell::RefCell<Vec<Probe>>,
}

/// A question the loader asked of the file system while it looked for the inputs, and the
/// answer: with the command line and the bytes of the files it read, what decides which files it
/// opens. `--incremental` asks them again before it opens anything: the same answers and the same
/// files make the same inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    pub kind: ProbeKind,
    pub path: PathBuf,
    pub answer: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// Is it a regular file (1) or not (0)?
    IsFile,
    /// Does it exist (1) or not (0)?
    Exists,
    /// Its canonical path's XXH3-64 (`u64::MAX`: it has none).
    Canonical,
    /// The machine a library found by a `-l` search is for (`u64::MAX`: it does not say).
    Machine,
    /// Opened: the answer is the file's place among those opened (`InputCache::open_numbered`);
    /// the caller, who compares the files, asks again.
    Open,
}

impl ProbeKind {
    pub const ALL: [ProbeKind; 5] =
        [ProbeKind::IsFile, ProbeKind::Exists, ProbeKind::Canonical, ProbeKind::Machine, ProbeKind::Open];
}

/// How a `Canonical` probe keeps its answer.
fn canonical_hash(canonical: Option<&Path>) -> u64 {
    canonical.map_or(u64::MAX, |c| xxhash_rust::xxh3::xxh3_64(std::os::unix::ffi::OsStrExt::as_bytes(c.as_os_str())))
}

impl Probe {
    /// The answer the question gets now (None for `Open`).
    pub fn ask(kind: ProbeKind, path: &Path) -> Option<u64> {
        Some(match kind {
            ProbeKind::IsFile => path.is_file() as u64,
            ProbeKind::Exists => path.exists() as u64,
            ProbeKind::Canonical => canonical_hash(path.canonicalize().ok().as_deref()),
            ProbeKind::Machine => library_machine(path).map_or(u64::MAX, u64::from),
            ProbeKind::Open => return None,
        })
    }
}

/// What `load` gives: the inputs, the linker scripts read, the file-system questions asked.
pub type Opened = (Vec<Loaded>, Vec<script::ScriptFile>, Vec<Probe>);

/// Opens every input in command-line order. Errors (missing files, unknown formats) are all
/// collected so the user sees each one, not only the first.
/// `prefetch`: objects and shared libraries are read ahead as soon as they are opened (archive
/// members later, when resolution picks them). Gives the files, the linker scripts read and the
/// file-system questions asked (`Probe`; with `--incremental`, which keeps them).
pub fn load(
    config: &Config,
    cache: &InputCache,
    prefetch: Option<&rivet_io::Prefetcher>,
    timer: &crate::timing::Timer,
) -> Result<Opened, Vec<Error>> {
    let mut loader = Loader {
        config,
        timer,
        cache,
        prefetch,
        out: Vec::new(),
        errors: Vec::new(),
        script_stack: Vec::new(),
        searching: false,
        scripts: Vec::new(),
        at: 0,
        script_dirs: Vec::new(),
        group: 0,
        group_depth: 0,
        probes: Default::default(),
    };
    let mut state = InputState::default();
    for (at, arg) in config.inputs.iter().enumerate() {
        loader.at = at;
        match arg {
            InputArg::File { path, state: s } => {
                state = *s;
                loader.add_path(path, *s)
            }
            InputArg::Library { name, state: s } => {
                state = *s;
                loader.add_library(name, *s)
            }
            InputArg::Script { path } => loader.add_script_file(path, state),
            // rivet resolves archives like lld: a symbol is looked up in every archive seen so far,
            // so groups need no re-scanning and the group markers carry no meaning of their own.
            // They only number the inputs' groups for --warn-backrefs.
            InputArg::GroupStart => loader.group_depth += 1,
            InputArg::GroupEnd => loader.end_group(),
        }
    }
    if loader.errors.is_empty() {
        Ok((loader.out, loader.scripts, loader.probes.into_inner()))
    } else {
        Err(loader.errors)
    }
}

/// The `e_machine` of a library found by a `-l` search: a shared library's or ELF object's, an
/// archive's first ELF member's. None when the file says nothing about its machine (a linker
/// script, a thin or empty archive, IR) or cannot be read.
fn library_machine(path: &Path) -> Option<u16> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path).ok()?;
    // The first bytes of the file at `at`: an ELF header's machine is at 18, a member header is
    // 60 bytes. Only these are read, not the archive's symbol table before its first member
    // (libgcc.a's is most of a megabyte, read for each of gcc's `-lgcc`).
    let read = |at: u64, len: usize| -> Option<Vec<u8>> {
        let mut buf = vec![0; len];
        let mut got = 0;
        while got < len {
            match file.read_at(&mut buf[got..], at + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        buf.truncate(got);
        Some(buf)
    };
    let machine = |d: &[u8]| (d.len() >= 20 && d.starts_with(b"\x7fELF")).then(|| u16::from_le_bytes([d[18], d[19]]));
    let head = read(0, 68)?;
    if !head.starts_with(b"!<arch>\n") {
        return machine(&head);
    }
    // Regular archive members: a 60-byte header (name, ..., size at 48..58), data padded to 2.
    // The symbol tables and the long-name table come first; the first other member is an object.
    let mut at = 8u64;
    loop {
        let h = read(at, 80)?;
        let size: u64 = std::str::from_utf8(h.get(48..58)?).ok()?.trim().parse().ok()?;
        if !h.starts_with(b"/ ") && !h.starts_with(b"// ") && !h.starts_with(b"/SYM64/") {
            return machine(h.get(60..)?);
        }
        at += 60 + size + (size & 1);
    }
}

impl Loader<'_> {
    /// Keeps a question and its answer, for `--incremental` (the only reader of them).
    fn note(&self, kind: ProbeKind, path: &Path, answer: u64) -> u64 {
        if self.config.incremental {
            self.probes.borrow_mut().push(Probe { kind, path: path.to_path_buf(), answer });
        }
        answer
    }

    /// Asks `kind` of `path`, keeping the question and the answer.
    fn ask(&self, kind: ProbeKind, path: &Path) -> u64 {
        self.note(kind, path, Probe::ask(kind, path).expect("asked here"))
    }

    fn is_file(&self, path: &Path) -> bool {
        self.ask(ProbeKind::IsFile, path) == 1
    }

    fn exists(&self, path: &Path) -> bool {
        self.ask(ProbeKind::Exists, path) == 1
    }

    fn canonical(&self, path: &Path) -> Option<PathBuf> {
        let c = path.canonicalize().ok();
        self.note(ProbeKind::Canonical, path, canonical_hash(c.as_deref()));
        c
    }

    /// The machine of a library a `-l` search found (`library_machine`).
    fn machine(&self, path: &Path) -> Option<u16> {
        let m = library_machine(path);
        self.note(ProbeKind::Machine, path, m.map_or(u64::MAX, u64::from));
        m
    }

    /// Opens `path` through the cache, keeping the question.
    fn open(&self, path: &Path) -> std::io::Result<Arc<InputFile>> {
        let (file, at) = self.cache.open_numbered(path)?;
        self.note(ProbeKind::Open, path, at as u64);
        Ok(file)
    }

    fn search_dirs(&self) -> impl Iterator<Item = PathBuf> + '_ {
        let sysroot = self.config.sysroot.clone();
        // GNU ld's built-in SEARCH_DIRs after the `-L` ones: its emulation's (`-m`'s, else the
        // default target's: the inputs that would name another are not read yet).
        let defaults = match self.config.nostdlib {
            true => &[][..],
            false => crate::machine::Machine::for_search(self.config.emulation.as_deref()).library_dirs(),
        };
        let given = self.config.lib_paths.iter().chain(&self.script_dirs).map(|d| self.in_sysroot(d));
        given.chain(defaults.iter().map(move |d| match &sysroot {
            Some(root) => root.join(d.trim_start_matches('/')),
            None => PathBuf::from(d),
        }))
    }

    /// A directory or file name that starts with `=` or `$SYSROOT` is under the sysroot (GNU
    /// ld's rule for `-L` and for names in scripts); without a sysroot the prefix is dropped.
    fn in_sysroot(&self, p: &Path) -> PathBuf {
        let s = p.to_string_lossy();
        let rest = s.strip_prefix('=').or_else(|| s.strip_prefix("$SYSROOT"));
        match (rest, &self.config.sysroot) {
            (Some(rest), Some(root)) => root.join(rest.trim_start_matches('/')),
            (Some(rest), None) => PathBuf::from(rest),
            (None, _) => p.to_path_buf(),
        }
    }

    fn add_library(&mut self, name: &str, state: InputState) {
        match self.find_library(name, state) {
            Some(path) => {
                let outer = std::mem::replace(&mut self.searching, true);
                self.add_path(&path, state);
                self.searching = outer;
            }
            None => self.errors.push(fatal!("unable to find library -l{name}")),
        }
    }

    /// GNU ld's rule: in each directory in turn, `libNAME.so` (unless -Bstatic) then `libNAME.a`;
    /// `-l:FILE` looks for FILE itself.
    fn find_library(&self, name: &str, state: InputState) -> Option<PathBuf> {
        let candidates: Vec<String> = match name.strip_prefix(':') {
            Some(exact) => vec![exact.to_string()],
            None if state.static_only => vec![format!("lib{name}.a")],
            None => vec![format!("lib{name}.so"), format!("lib{name}.a")],
        };
        let machine = crate::machine::Machine::for_search(self.config.emulation.as_deref()).names_of().e_machine;
        for dir in self.search_dirs() {
            for c in &candidates {
                let p = dir.join(c);
                // A library for another machine (an x86-64 `/usr/lib/libz.so` in a cross link's
                // search) is skipped, as GNU ld skips it ("incompatible"); `-t` says so, in GNU
                // ld's words.
                if !self.is_file(&p) {
                    continue;
                }
                if self.machine(&p).is_none_or(|m| m == machine) {
                    return Some(p);
                }
                if self.config.trace {
                    eprintln!("rivet: skipping incompatible {} when searching for -l{name}", p.display());
                }
            }
        }
        None
    }

    /// One more input, as found by the current search (`-l` or a path).
    fn push(
        &mut self,
        file: Arc<InputFile>,
        name: String,
        kind: Kind,
        state: InputState,
        thin_members: Vec<Option<Arc<InputFile>>>,
    ) {
        let arena = Default::default();
        let group = self.group;
        self.out.push(Loaded { file, name, kind, state, thin_members, arena, searched: self.searching, group });
        if self.group_depth == 0 {
            self.group += 1;
        }
    }

    /// The end of a group: the inputs after it are in later groups.
    fn end_group(&mut self) {
        self.group_depth = self.group_depth.saturating_sub(1);
        if self.group_depth == 0 {
            self.group += 1;
        }
    }

    fn add_path(&mut self, path: &Path, state: InputState) {
        let start = self.timer.origin_elapsed();
        self.add_path_untimed(path, state);
        self.timer.record(&format!("open {}", path.display()), 2, start, self.timer.origin_elapsed() - start);
    }

    fn add_path_untimed(&mut self, path: &Path, state: InputState) {
        let file = match self.open(path) {
            Ok(f) => f,
            Err(e) => {
                return self.errors.push(
                    Error::new(strip_path(&e.to_string(), path)).context(format!("cannot open {}", path.display())),
                )
            }
        };
        let name = path.display().to_string();
        let data = file.data();
        if archive::is_archive(data) {
            let thin_members = match self.open_thin_members(&file, path) {
                Ok(m) => m,
                Err(e) => return self.errors.push(e),
            };
            self.push(file, name, Kind::Archive, state, thin_members);
        } else if object::is_elf(data) {
            if let Some(p) = self.prefetch {
                p.request(&file, 0, file.size());
            }
            match object::check_header(data) {
                Ok(::object::elf::ET_REL) => self.push(file, name, Kind::Object, state, vec![]),
                // GNU ld's and lld's rule: under -Bstatic (-static, -dn, -N, -n) a shared library
                // cannot be linked, not even named by its path (mold's words).
                Ok(::object::elf::ET_DYN) if state.static_only => self.errors.push(
                    fatal!("attempted static link of a dynamic object\n>>> -static or -Bstatic is in force where it is named")
                        .context(name),
                ),
                Ok(::object::elf::ET_DYN) => self.push(file, name, Kind::Shared, state, vec![]),
                Ok(t) => self.errors.push(
                    fatal!("cannot link an ELF file of type {t} (not an object or shared library)").context(name),
                ),
                Err(e) => self.errors.push(e.context(name)),
            }
        } else if object::is_bitcode(data) {
            // LLVM bitcode (clang -flto): an object only the LTO plugin can read (resolution asks it).
            self.push(file, name, Kind::Object, state, vec![]);
        } else if script::looks_like_script(data) || script::is_text(data) {
            // Any text is read as a script, as lld reads it; one that does not start like one and
            // does not parse is most likely not meant as a script at all.
            let guess = !script::looks_like_script(data);
            self.add_script(path, &file, state, guess);
        } else {
            self.errors.push(
                fatal!("unknown file type (not an ELF object, archive, shared library or linker script)").context(name),
            );
        }
    }

    /// `-T FILE`: read as a script whatever it looks like, found in the current directory or
    /// the library search path (as GNU ld and lld look for it).
    fn add_script_file(&mut self, path: &Path, state: InputState) {
        let found = if self.exists(path) || path.is_absolute() {
            path.to_path_buf()
        } else {
            self.search_dirs().map(|d| d.join(path)).find(|c| self.is_file(c)).unwrap_or_else(|| path.to_path_buf())
        };
        let file = match self.open(&found) {
            Ok(f) => f,
            Err(e) => {
                return self.errors.push(
                    Error::new(strip_path(&e.to_string(), &found))
                        .context(format!("cannot open linker script {}", found.display())),
                )
            }
        };
        self.add_script(&found, &file, state, false);
    }

    /// Parses a script, reads what it `INCLUDE`s, adds the inputs it names and keeps the rest.
    /// `guess`: the file did not look like a script; if it does not parse, say it is of no
    /// known type.
    fn add_script(&mut self, path: &Path, file: &InputFile, state: InputState, guess: bool) {
        let shown = path.display().to_string();
        let canonical = self.canonical(path).unwrap_or_else(|| path.to_path_buf());
        if self.script_stack.contains(&canonical) {
            return self.errors.push(fatal!("linker script includes itself").context(shown));
        }
        let text = match std::str::from_utf8(file.data()) {
            Ok(t) => t,
            Err(_) => return self.errors.push(fatal!("linker script is not valid UTF-8").context(shown)),
        };
        let mut include = |name: &str| -> crate::diag::Result<(String, String)> {
            let p = self.find_include(name, path).ok_or_else(|| fatal!("cannot find linker script {name}"))?;
            // Read through the cache, so that the file is among those the link read (checked for
            // changes at the end, recorded by `--incremental`).
            let file = self.open(&p).map_err(|e| fatal!("{e}"))?;
            let text = String::from_utf8(file.data().to_vec())
                .map_err(|_| fatal!("linker script is not valid UTF-8").context(p.display().to_string()))?;
            Ok((p.display().to_string(), text))
        };
        let stub = match script::parse_with(&shown, text, &mut include) {
            Ok(s) => s,
            Err(e) if guess => {
                return self.errors.push(
                    fatal!("unknown file type (not an ELF object, archive, shared library or linker script: {e})")
                        .context(shown),
                )
            }
            Err(e) => return self.errors.push(e),
        };
        let dirs: Vec<PathBuf> = stub.search_dirs.iter().map(|d| self.in_sysroot(Path::new(d))).collect();
        self.script_dirs.extend(dirs);
        self.script_stack.push(canonical);
        let first_error = self.errors.len();
        let mut grouped = false;
        for input in &stub.inputs {
            if input.in_group && !grouped {
                grouped = true;
                self.group_depth += 1;
            }
            let st = InputState { as_needed: state.as_needed || input.as_needed, ..state };
            if let Some(lib) = input.name.strip_prefix("-l") {
                self.add_library(lib, st);
            } else {
                match self.find_script_input(&input.name, path) {
                    Some(p) => {
                        let outer = std::mem::replace(&mut self.searching, false);
                        self.add_path(&p, st);
                        self.searching = outer;
                    }
                    None => self.errors.push(fatal!("cannot find {}", input.name).context(&shown)),
                }
            }
        }
        if grouped {
            self.end_group();
        }
        self.script_stack.pop();
        self.scripts.push(script::ScriptFile { script: stub, name: shown.clone(), at: self.at });
        // Say which script named the inputs that failed (nested scripts add their own names).
        let failed = self.errors.split_off(first_error);
        self.errors.extend(failed.into_iter().map(|e| match e.outermost() == Some(shown.as_str()) {
            true => e,
            false => e.context(&shown),
        }));
    }

    /// An `INCLUDE`d script: as named, then in the including script's directory, then in the
    /// library search path.
    fn find_include(&self, name: &str, script: &Path) -> Option<PathBuf> {
        let p = self.in_sysroot(Path::new(name));
        if self.is_file(&p) {
            return Some(p);
        }
        if let Some(dir) = script.parent().filter(|_| p.is_relative()) {
            if self.is_file(&dir.join(&p)) {
                return Some(dir.join(&p));
            }
        }
        self.search_dirs().map(|d| d.join(&p)).find(|c| self.is_file(c))
    }

    /// A name in a script: `=/path` is under the sysroot; an absolute name is under the sysroot
    /// if the script is; else relative to the current directory, then the script's own
    /// directory, then the library search path.
    fn find_script_input(&self, name: &str, script: &Path) -> Option<PathBuf> {
        if name.starts_with('=') || name.starts_with("$SYSROOT") {
            return Some(self.in_sysroot(Path::new(name)));
        }
        let p = Path::new(name);
        if p.is_absolute() {
            if let Some(root) = &self.config.sysroot {
                let in_root = root.join(name.trim_start_matches('/'));
                let under = |r: &Path| {
                    let (Some(r), Some(s)) = (self.canonical(r), self.canonical(script)) else { return false };
                    s.starts_with(r)
                };
                if self.exists(&in_root) && under(root) {
                    return Some(in_root);
                }
            }
            return Some(p.to_path_buf());
        }
        if self.exists(p) {
            return Some(p.to_path_buf());
        }
        if let Some(dir) = script.parent() {
            if self.exists(&dir.join(p)) {
                return Some(dir.join(p));
            }
        }
        self.search_dirs().map(|d| d.join(p)).find(|c| self.exists(c))
    }

    /// Opens the member files of a thin archive (paths relative to the archive's directory).
    fn open_thin_members(&self, file: &InputFile, path: &Path) -> Result<Vec<Option<Arc<InputFile>>>> {
        // Regular archives are parsed once, by resolution (in parallel); parsing each one here as
        // well only to learn it is not thin, serially, made cxx-big's open inputs phase 16-43 ms
        // instead of 1.8-2.1 (`--print-timing`).
        if !file.data().starts_with(b"!<thin>\n") {
            return Ok(Vec::new());
        }
        let parsed = archive::parse(file.data()).with_context(|| path.display())?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut members = Vec::with_capacity(parsed.member_count());
        for i in 0..parsed.member_count() {
            let m = parsed.member(i).with_context(|| path.display())?;
            let rel = String::from_utf8_lossy(m.name).into_owned();
            let member_path = dir.join(&rel);
            let f = self
                .open(&member_path)
                .with_context(|| format!("cannot open thin archive member {}", member_path.display()))
                .with_context(|| path.display())?;
            if let Some(p) = self.prefetch {
                p.request(&f, 0, f.size());
            }
            members.push(Some(f));
        }
        Ok(members)
    }
}

/// io errors from rivet-io already name the path; avoid saying it twice.
fn strip_path(msg: &str, path: &Path) -> String {
    let p = path.display().to_string();
    msg.replace(&format!("cannot open {p}: "), "").replace(&format!("{p}: "), "")
}
