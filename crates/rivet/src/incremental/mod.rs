//! `--incremental`: what the next link needs to know of this one, kept in a state file beside the
//! output (`OUTPUT.rivet-incremental`), and the decision, before resolution, of what the link has
//! to do.
//!
//! The decision has three outcomes. The output is **up to date** when the state says that the
//! last link wrote it from the same command line (in the same directory, by the same rivet
//! binary), every file that link read has the same bytes (its size and mtime, else its contents'
//! XXH3-128), the same inputs were found in the same order, and the output is the file that link
//! wrote (its inode, size and mtime; or its second name, where the build removed it from its path):
//! the output a full link would write is then the one on disk, byte for byte (the link is
//! deterministic), so nothing is written. When all else is the same and only files' bytes
//! changed, in ways that leave their objects' headers, symbols and relocations as they were, the
//! output is **patched** in place (`patch`). Otherwise the link is a full one, and the I/O report
//! gives the first reason found. The names compilers give their temp files anew for every build
//! are masked (`temp_free`), the files behind them compared by their bytes.
//!
//! Safety: the state is removed before a full link replaces the output and written (to a temp
//! file renamed into place) only once the new output is, so a link killed at any point leaves
//! either no state (the next link is a full one) or a state that describes the output at the path.
//! A link the state cannot vouch for is never skipped: links that write other files (`-Map`,
//! `--dependency-file`, ...), that gave warnings (a full link would give them again), that ran
//! link-time optimisation (the compiler is an input the state does not see) or that asked for a
//! random build id.
use crate::args::{BuildId, Config};
use crate::diag::Result;
use rayon::prelude::*;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub mod patch;

const MAGIC: &[u8; 8] = b"RIVETINC";
/// Bumped whenever the layout of the state changes: an older state is then a full link's reason.
const FORMAT: u32 = 5;

/// A second name of the output the state describes, so that a build that removes the output
/// before every link (rustc does) finds it again when the link is up to date.
pub fn kept_path(output: &Path) -> PathBuf {
    beside(output, ".rivet-incremental-output")
}

/// The state file of output `output`.
pub fn state_path(output: &Path) -> PathBuf {
    beside(output, ".rivet-incremental")
}

/// `path` with `suffix` appended to its name.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    p.into()
}

/// A file the link read, as it was then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRecord {
    pub path: Vec<u8>,
    pub size: u64,
    pub mtime_ns: u64,
    /// The XXH3-128 of its bytes (`patch::file_hash` for a file objects were loaded from). None
    /// for a file no object was loaded from (a shared library, an archive none of whose members
    /// was), not racy and not of a compiler's temp name: it is compared by its size and mtime
    /// only, and a change in them is a change (hashing the C library and libgcc.a took a fifth
    /// of a small program's link).
    pub hash: Option<u128>,
    /// Its mtime was too close to the time it was hashed to tell a later write by (file systems
    /// stamp with a coarse clock: two writes a millisecond apart may get one mtime), so its bytes
    /// are compared whatever its mtime says (git's "racily clean" entries).
    pub racy: bool,
    /// What the next link needs to patch the output after an edit of this file (None: it may
    /// not; see `patch`).
    pub patch: Option<patch::FilePatch>,
}

/// How close to the hashing an mtime makes a file racy.
const RACY_NS: u64 = 2_000_000_000;

/// A file the link read as a record keys it: its path, size and mtime (`epoch_ns`).
fn stamp(f: &rivet_io::InputFile) -> (&[u8], u64, u64) {
    (f.path().as_os_str().as_bytes(), f.size(), f.mtime().map_or(0, epoch_ns))
}

/// A time as nanoseconds since the epoch (0 before it): how the state keeps mtimes.
fn epoch_ns(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

fn now_ns() -> u64 {
    epoch_ns(std::time::SystemTime::now())
}

/// A file of mtime `mtime_ns`, hashed at `now`, is racy (see `FileRecord::racy`).
fn is_racy(mtime_ns: u64, now: u64) -> bool {
    mtime_ns.saturating_add(RACY_NS) > now
}

/// The output file the link wrote, as it was once in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct OutputRecord {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: u64,
}

/// What a link leaves for the next one.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct State {
    /// Which rivet wrote it: its version and its executable's size and mtime.
    pub linker: Vec<u8>,
    pub cwd: Vec<u8>,
    /// The command line, response files expanded.
    pub args: Vec<Vec<u8>>,
    pub output: OutputRecord,
    /// The inputs the command line named or the search found, in order.
    pub inputs: Vec<Vec<u8>>,
    /// Every file the link read (inputs, archive members of thin archives, scripts, lists).
    pub files: Vec<FileRecord>,
    /// What patching the output needs besides the files' records.
    pub patching: patch::OutputPatch,
    /// The file-system questions the loader asked and their answers, in order (`input::Probe`):
    /// asked again, they let the next link decide before it opens any input. None when a path
    /// among them or the files is a compiler's temp name, which the next link does not know
    /// before its command line's inputs are found.
    pub probes: Option<Vec<crate::input::Probe>>,
}

impl State {
    pub fn encode(&self) -> Vec<u8> {
        // Sized for the records up front: a state of megabytes grown by doubling was copied (and
        // its fresh pages faulted in) several times.
        let members = |p: &patch::FilePatch| p.members.iter().map(|m| 64 + m.sections.bytes().len()).sum::<usize>();
        let files: usize = self.files.iter().map(|f| 64 + f.path.len() + f.patch.as_ref().map_or(0, members)).sum();
        let probes = self.probes.as_ref().map_or(0, |p| p.iter().map(|q| 17 + q.path.as_os_str().len()).sum());
        let mut w = Vec::with_capacity(4096 + files + probes + 32 * self.patching.digests.len());
        w.extend_from_slice(MAGIC);
        w.extend_from_slice(&FORMAT.to_le_bytes());
        let bytes = |w: &mut Vec<u8>, b: &[u8]| {
            w.extend_from_slice(&(b.len() as u64).to_le_bytes());
            w.extend_from_slice(b);
        };
        let list = |w: &mut Vec<u8>, l: &[Vec<u8>]| {
            w.extend_from_slice(&(l.len() as u64).to_le_bytes());
            for b in l {
                bytes(w, b);
            }
        };
        bytes(&mut w, &self.linker);
        bytes(&mut w, &self.cwd);
        list(&mut w, &self.args);
        for v in [self.output.dev, self.output.ino, self.output.size, self.output.mtime_ns] {
            w.extend_from_slice(&v.to_le_bytes());
        }
        list(&mut w, &self.inputs);
        w.extend_from_slice(&(self.files.len() as u64).to_le_bytes());
        for f in &self.files {
            bytes(&mut w, &f.path);
            w.extend_from_slice(&f.size.to_le_bytes());
            w.extend_from_slice(&f.mtime_ns.to_le_bytes());
            match f.hash {
                None => w.push(0),
                Some(h) => {
                    w.push(1);
                    w.extend_from_slice(&h.to_le_bytes());
                }
            }
            w.push(f.racy as u8);
            match &f.patch {
                None => w.push(0),
                Some(p) => {
                    w.push(1);
                    w.extend_from_slice(&p.rest.to_le_bytes());
                    w.extend_from_slice(&(p.members.len() as u64).to_le_bytes());
                    for m in &p.members {
                        w.extend_from_slice(&m.base.to_le_bytes());
                        w.extend_from_slice(&m.len.to_le_bytes());
                        w.extend_from_slice(&m.hash.to_le_bytes());
                        w.extend_from_slice(&m.shape.to_le_bytes());
                        w.extend_from_slice(&(m.sections.len() as u64).to_le_bytes());
                        w.extend_from_slice(m.sections.bytes());
                    }
                }
            }
        }
        let p = &self.patching;
        bytes(&mut w, &p.barrier);
        let (desc, len) = p.build_id.unwrap_or((u64::MAX, 0));
        w.extend_from_slice(&desc.to_le_bytes());
        w.extend_from_slice(&len.to_le_bytes());
        w.extend_from_slice(&(p.digests.len() as u64).to_le_bytes());
        p.digests.iter().for_each(|d| w.extend_from_slice(d));
        match &self.probes {
            None => w.push(0),
            Some(probes) => {
                w.push(1);
                w.extend_from_slice(&(probes.len() as u64).to_le_bytes());
                for q in probes {
                    w.push(crate::input::ProbeKind::ALL.iter().position(|&k| k == q.kind).unwrap() as u8);
                    bytes(&mut w, q.path.as_os_str().as_bytes());
                    w.extend_from_slice(&q.answer.to_le_bytes());
                }
            }
        }
        // The whole file's checksum last: a torn or edited state is refused, not trusted.
        let sum = xxhash_rust::xxh3::xxh3_64(&w);
        w.extend_from_slice(&sum.to_le_bytes());
        w
    }

    /// The identity of the rivet that wrote the state `data` (`linker_identity`), if its header
    /// is whole: a rivet of the same format number may lay the rest out otherwise.
    fn writer(data: &[u8]) -> Option<Vec<u8>> {
        let body = data.get(..data.len().checked_sub(8)?)?;
        (data.get(..8)? == MAGIC).then_some(())?;
        Reader { data: body, at: 12 }.bytes().ok()
    }

    /// Reads a state; an error says what is wrong with it.
    pub fn decode(data: &[u8]) -> std::result::Result<State, String> {
        if data.len() < 20 || &data[..8] != MAGIC {
            return Err("not a rivet state file".into());
        }
        let (body, sum) = data.split_at(data.len() - 8);
        if xxhash_rust::xxh3::xxh3_64(body).to_le_bytes() != sum {
            return Err("its checksum does not match (a torn or edited file)".into());
        }
        let format = u32::from_le_bytes(body[8..12].try_into().unwrap());
        if format != FORMAT {
            return Err(format!("format {format}, where this rivet writes {FORMAT}"));
        }
        let mut r = Reader { data: body, at: 12 };
        let linker = r.bytes()?;
        let cwd = r.bytes()?;
        let args = r.list()?;
        let output = OutputRecord { dev: r.u64()?, ino: r.u64()?, size: r.u64()?, mtime_ns: r.u64()? };
        let inputs = r.list()?;
        let n = r.count(42)?;
        let mut files = Vec::with_capacity(n);
        for _ in 0..n {
            let path = r.bytes()?;
            let (size, mtime_ns) = (r.u64()?, r.u64()?);
            let hash = match r.take(1)?[0] {
                0 => None,
                1 => Some(u128::from_le_bytes(r.take(16)?.try_into().unwrap())),
                _ => return Err("a file record's hash flag is neither 0 nor 1".into()),
            };
            let racy = match r.take(1)?[0] {
                0 => false,
                1 => true,
                _ => return Err("a file record's flag is neither 0 nor 1".into()),
            };
            let patch = match r.take(1)?[0] {
                0 => None,
                1 => {
                    let rest = u128::from_le_bytes(r.take(16)?.try_into().unwrap());
                    let n = r.count(56)?;
                    let mut members = Vec::with_capacity(n);
                    for _ in 0..n {
                        let (base, len) = (r.u64()?, r.u64()?);
                        let hash = u128::from_le_bytes(r.take(16)?.try_into().unwrap());
                        let shape = u128::from_le_bytes(r.take(16)?.try_into().unwrap());
                        let k = r.count(patch::Sections::RECORD)?;
                        let sections = patch::Sections::from_bytes(r.take(k * patch::Sections::RECORD)?.to_vec())
                            .expect("whole records");
                        members.push(patch::Member { base, len, hash, shape, sections });
                    }
                    Some(patch::FilePatch { rest, members })
                }
                _ => return Err("a file record's patch flag is neither 0 nor 1".into()),
            };
            files.push(FileRecord { path, size, mtime_ns, hash, racy, patch });
        }
        let barrier = r.bytes()?;
        let (desc, len) = (r.u64()?, r.u64()?);
        let build_id = (desc != u64::MAX).then_some((desc, len));
        let n = r.count(32)?;
        let digests = (0..n).map(|_| r.take(32).map(|d| d.try_into().unwrap())).collect::<Result<_, _>>()?;
        let patching = patch::OutputPatch { barrier, build_id, digests };
        let probes = match r.take(1)?[0] {
            0 => None,
            1 => {
                let n = r.count(17)?;
                let mut probes = Vec::with_capacity(n);
                for _ in 0..n {
                    let kind = *crate::input::ProbeKind::ALL
                        .get(r.take(1)?[0] as usize)
                        .ok_or("a probe's kind is not one this rivet knows")?;
                    let path = PathBuf::from(std::ffi::OsString::from_vec(r.bytes()?));
                    probes.push(crate::input::Probe { kind, path, answer: r.u64()? });
                }
                Some(probes)
            }
            _ => return Err("the probes' flag is neither 0 nor 1".into()),
        };
        if r.at != body.len() {
            return Err("it has bytes after its last record".into());
        }
        Ok(State { linker, cwd, args, output, inputs, files, patching, probes })
    }
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len()).ok_or("it is truncated")?;
        let b = &self.data[self.at..end];
        self.at = end;
        Ok(b)
    }

    fn u64(&mut self) -> std::result::Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }

    /// A count of records at least `min` bytes each, checked against what is left.
    fn count(&mut self, min: usize) -> std::result::Result<usize, String> {
        let n = self.u64()?;
        if n > ((self.data.len() - self.at) / min) as u64 {
            return Err("it is truncated".into());
        }
        Ok(n as usize)
    }

    fn bytes(&mut self) -> std::result::Result<Vec<u8>, String> {
        let n = self.u64()?;
        let n = usize::try_from(n).map_err(|_| "it is truncated")?;
        Ok(self.take(n)?.to_vec())
    }

    fn list(&mut self) -> std::result::Result<Vec<Vec<u8>>, String> {
        let n = self.count(8)?;
        (0..n).map(|_| self.bytes()).collect()
    }
}

/// What this link does, decided before resolution.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// Nothing to write: the output is what a full link would write. `rehashed`: files whose mtime
    /// changed but whose bytes did not (the state is rewritten with their new mtimes); `restored`:
    /// the output had been removed from its path and was put back from its other name.
    UpToDate { files: usize, rehashed: usize, restored: bool },
    /// Files changed, and only in bytes the output holds verbatim: the output was patched in
    /// place (`patch`). `kept`: why no state was written after it, if none was.
    Patched { patched: patch::Patched, rehashed: usize, restored: bool, kept: Option<String> },
    /// A full link: why; whether it may leave a state (not when `never_skipped` says no link with
    /// this command line ever is); and the files the last link read (from its state, if there was
    /// a usable one), whose hashes the new state takes over where a file's path, size and mtime
    /// are the same.
    Full { why: String, record: bool, known: Vec<FileRecord> },
}

impl Plan {
    /// What the I/O report's `incremental` line says of a link that is done (up to date or
    /// patched); a full link's line is made once it is (`link.rs`).
    pub fn line(&self) -> String {
        let touched = |n: usize, more: &str| match n {
            0 => String::new(),
            n => format!("; {n}{more} had a new mtime and the same bytes"),
        };
        let back =
            |restored: bool| if restored { "; the output, removed from its path, given its name back" } else { "" };
        let plural = |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        match self {
            Plan::UpToDate { files, rehashed, restored } => format!(
                "up to date: nothing written ({files} files the last link read are unchanged{}{})",
                touched(*rehashed, ""),
                back(*restored)
            ),
            Plan::Patched { patched, rehashed, restored, kept } => format!(
                "patched in place: {}, {}, {} written{}{}{}",
                plural(patched.files as u64, "changed file"),
                plural(patched.sections as u64, "section"),
                plural(patched.bytes, "byte"),
                touched(*rehashed, " more"),
                back(*restored),
                kept.as_ref().map_or(String::new(), |why| format!("; no state kept: {why}"))
            ),
            Plan::Full { why, .. } => format!("full link: {why}"),
        }
    }
}

/// Why no link with `config` may ever be skipped (its state is then not written), if that is so.
fn never_skipped(config: &Config) -> Option<String> {
    let side = [
        (config.map_file.is_some() || config.print_map, "-Map"),
        (config.dependency_file.is_some(), "--dependency-file"),
        (config.reproduce.is_some(), "--reproduce"),
        (config.why_extract.is_some(), "--why-extract"),
        (config.separate_debug_file.is_some(), "--separate-debug-file"),
        (config.print_gc_sections.is_some(), "--print-gc-sections"),
        (config.print_icf_sections, "--print-icf-sections"),
        (!config.why_live.is_empty(), "--why-live"),
        (config.trace || !config.trace_symbols.is_empty(), "--trace"),
        (config.stats, "--stats"),
    ];
    if let Some((_, what)) = side.iter().find(|(on, _)| *on) {
        return Some(format!("{what} asks for what only a full link prints or writes"));
    }
    if config.relocatable {
        return Some("a relocatable output (-r)".into());
    }
    if config.build_id == BuildId::Uuid {
        return Some("--build-id=uuid gives every link a new id".into());
    }
    if config.output.as_os_str() == "-" {
        return Some("the output is standard output".into());
    }
    if std::fs::metadata(&config.output).is_ok_and(|m| !m.is_file()) {
        return Some("the output is not a regular file".into());
    }
    None
}

/// The rivet that runs: its version, and its executable's size and mtime (a rebuilt rivet of the
/// same version may link differently).
fn linker_identity() -> Vec<u8> {
    let mut id = concat!("rivet ", env!("CARGO_PKG_VERSION")).as_bytes().to_vec();
    if let Some(m) = std::env::current_exe().ok().and_then(|p| std::fs::metadata(p).ok()) {
        id.extend_from_slice(format!(" {} {}", m.size(), mtime_ns(&m)).as_bytes());
    }
    id
}

fn mtime_ns(m: &std::fs::Metadata) -> u64 {
    m.modified().map_or(0, epoch_ns)
}

fn cwd() -> Vec<u8> {
    std::env::current_dir().map(|d| d.as_os_str().as_bytes().to_vec()).unwrap_or_default()
}

fn hash(data: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(data)
}

/// The output as it is at its path now (None: not a regular file there).
fn output_record(path: &Path) -> Option<OutputRecord> {
    let m = std::fs::symlink_metadata(path).ok().filter(|m| m.is_file())?;
    Some(OutputRecord { dev: m.dev(), ino: m.ino(), size: m.size(), mtime_ns: mtime_ns(&m) })
}

/// The files a link read besides its inputs: the lists and orderings named on the command line,
/// where the link found them.
pub fn option_files(config: &Config) -> Vec<PathBuf> {
    let lists = config.version_scripts.iter().chain(&config.dynamic_lists).chain(&config.export_dynamic_symbol_lists);
    let mut files: Vec<PathBuf> =
        lists.map(|p| crate::symbol_options::find_list_file(p, &config.lib_paths).to_path_buf()).collect();
    files.extend(
        [&config.retain_symbols_file, &config.symbol_ordering_file, &config.section_ordering_file]
            .into_iter()
            .flatten()
            .cloned(),
    );
    files
}

/// What the check before any input is opened (`plan_before_opening`) decided.
pub enum Before {
    /// The plan, and how many inputs the last link had (which the report counts).
    Decided { plan: Plan, inputs: usize },
    /// Only a link that has opened its inputs can tell (`plan`); the state, if one was read.
    Undecided(Option<Box<State>>),
}

/// Decides what a link with `config` does before it opens any input, where the state allows:
/// the loader's questions (`State::probes`) get the answers they got, so the same files would be
/// opened as the same inputs, and each of those files is compared by its path. Opening and
/// mapping a few hundred inputs cost more than the rest of a relink (8 of synth-1's 16 ms).
pub fn plan_before_opening(config: &Config) -> Before {
    // Without `-o`, a linker script's `OUTPUT` may name the output (and so where its state is):
    // only the link that has read its scripts knows.
    if !config.output_given {
        return Before::Undecided(None);
    }
    let (path, state) = match read_state(config) {
        Ok(s) => s,
        Err(plan) => return Before::Decided { plan, inputs: 0 },
    };
    // A full link's plan, with the files the state knows (their hashes taken over).
    let full = |why: String, state: State| Before::Decided {
        inputs: state.inputs.len(),
        plan: Plan::Full { why, record: true, known: state.files },
    };
    let restore = match compare_run(config, &state) {
        Ok(r) => r,
        Err(why) => return full(why, state),
    };
    let Some(probes) = &state.probes else { return Before::Undecided(Some(Box::new(state))) };
    let asked_again =
        probes.par_iter().all(|q| crate::input::Probe::ask(q.kind, &q.path).is_none_or(|a| a == q.answer));
    // The files opened, by their place (an `Open` probe's answer), and those options named after them.
    let opened = probes.iter().filter(|q| q.kind == crate::input::ProbeKind::Open).map(|q| q.answer as usize + 1).max();
    let opened = opened.unwrap_or(0);
    let named = option_files(config);
    if !asked_again || opened + named.len() != state.files.len() {
        return Before::Undecided(Some(Box::new(state)));
    }
    let c = match compare_files(&named, &state, None, &[]) {
        Ok(c) => c,
        Err(why) => return full(why, state),
    };
    // Each file opened is the file it was: a name it was opened by (a second name of a file
    // opened before it) still names it, and no two of them are now one file (the loader would
    // take the second for the first). A file gone is the loader's error to give.
    let ids = &c.ids;
    let same_files = probes.iter().filter(|q| q.kind == crate::input::ProbeKind::Open).all(|q| {
        let i = q.answer as usize;
        ids[i].is_some() && (q.path.as_os_str().as_bytes() == &state.files[i].path[..] || identity(&q.path) == ids[i])
    });
    let mut seen = std::collections::HashSet::new();
    if !same_files || !ids[..opened].iter().all(|id| seen.insert(*id)) {
        return Before::Undecided(Some(Box::new(state)));
    }
    let inputs = state.inputs.len();
    Before::Decided { plan: decide(config, &path, state, Compared { restore, ..c }), inputs }
}

/// The (device, inode) of `path`, if it is there.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The state beside the output, or the plan of a link that has none it may use.
fn read_state(config: &Config) -> std::result::Result<(PathBuf, State), Plan> {
    if let Some(why) = never_skipped(config) {
        return Err(Plan::Full { why, record: false, known: Vec::new() });
    }
    let full = |why: String| Plan::Full { why, record: true, known: Vec::new() };
    let path = state_path(&config.output);
    // Mapped: a state of megabytes read into a fresh buffer cost a page fault for every 4 KiB.
    let data = match rivet_io::InputFile::open(&path) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(full(format!("no state from an earlier link ({})", path.display())))
        }
        Err(e) => return Err(full(e.to_string())),
    };
    match State::decode(data.data()) {
        Ok(s) => Ok((path, s)),
        // Another build of rivet (its layout may differ under the same format number).
        Err(_) if State::writer(data.data()).is_some_and(|w| w != linker_identity()) => {
            Err(full("the state was written by another rivet build".into()))
        }
        Err(why) => Err(full(format!("{} is unusable: {why}", path.display()))),
    }
}

/// Decides what a link with `config` does, from the state beside its output (`prior`: as the
/// check before opening read it). `inputs`: the inputs as loaded, in order; `read`: every file
/// read so far, with its bytes.
pub fn plan(
    config: &Config,
    inputs: &[&Path],
    read: &[std::sync::Arc<rivet_io::InputFile>],
    prior: Option<Box<State>>,
) -> Plan {
    let (path, state) = match prior {
        Some(s) => (state_path(&config.output), *s),
        None => match read_state(config) {
            Ok(s) => s,
            Err(plan) => return plan,
        },
    };
    let full = |why: String, known: Vec<FileRecord>| Plan::Full { why, record: true, known };
    let restore = match compare_run(config, &state) {
        Ok(r) => r,
        Err(why) => return full(why, state.files),
    };
    match compare_files(&option_files(config), &state, Some(inputs), read) {
        Ok(c) => decide(config, &path, state, Compared { restore, ..c }),
        Err(why) => full(why, state.files),
    }
}

/// What a link does once its files compare as `c` with `state` (at `path`) and all else is the
/// same: nothing, a patch, or a full link.
fn decide(config: &Config, path: &Path, state: State, c: Compared) -> Plan {
    let full = |why: String, known: Vec<FileRecord>| Plan::Full { why, record: true, known };
    // Edited files: patched in place where the state allows it, else a full link.
    let edits = match c.changed.is_empty() {
        true => Vec::new(),
        false => match patch_edits(config, &state, &c.changed) {
            Ok(e) => e,
            Err(why) => return full(why, state.files),
        },
    };
    // The output's other name back at the output's path (rustc removed it).
    if c.restore {
        if let Err(e) = std::fs::hard_link(kept_path(&config.output), &config.output) {
            return full(format!("cannot give {} back its name: {e}", config.output.display()), state.files);
        }
    }
    // The touched files' new mtimes (as seen before their bytes were hashed), so that the next
    // check need not hash them again.
    let mut state = state;
    let now = now_ns();
    for &(i, mtime) in &c.touched {
        state.files[i].mtime_ns = mtime;
        state.files[i].racy = is_racy(mtime, now);
    }
    if edits.is_empty() {
        if !c.touched.is_empty() {
            let _ = write_state(path, &state);
        }
        return Plan::UpToDate { files: state.files.len(), rehashed: c.touched.len(), restored: c.restore };
    }
    match apply_patch(config, path, &mut state, &edits, &c.changed) {
        Ok((patched, kept)) => Plan::Patched { patched, rehashed: c.touched.len(), restored: c.restore, kept },
        Err(why) => full(why, state.files),
    }
}

/// What to write for each changed file (`changed`: index in the state, where it is now), or why
/// the output cannot be patched.
fn patch_edits<'a>(
    config: &Config,
    state: &State,
    changed: &'a [Changed],
) -> std::result::Result<Vec<patch::FileEdit<'a>>, String> {
    if !state.patching.barrier.is_empty() {
        return Err(format!(
            "{} changed, and no output of this command line is patched: {}",
            changed[0].path.display(),
            String::from_utf8_lossy(&state.patching.barrier)
        ));
    }
    changed
        .par_iter()
        .map(|c| {
            // The file as the comparison opened and hashed it; the mtime is the one seen before
            // its bytes were read, so a later write is seen next time.
            if state.files[c.index].hash.is_none() {
                return Err(format!(
                    "{} changed (its size or mtime; no object was loaded from it, so its bytes are not compared)",
                    c.path.display()
                ));
            }
            let (Some(open), Some(now)) = (&c.open, &c.hash) else {
                return Err(format!("{}: cannot be read", c.path.display()));
            };
            patch::edit(
                c.index,
                &state.files[c.index],
                open.data().into(),
                (**now).clone(),
                c.mtime_ns,
                config.fix_cortex_a53_843419,
            )
        })
        .collect()
}

/// Patches the output with `edits` and records it in `state` (the state at `path`). The state is
/// removed before the first byte is written and written again once the last one is: a patch cut
/// short leaves no state, and the next link is a full one. Gives what was patched and, if the
/// new state could not be written, why (the output is complete then, only no state describes
/// it). An error (nothing written, or the state removed) is a full link's reason.
fn apply_patch(
    config: &Config,
    path: &Path,
    state: &mut State,
    edits: &[patch::FileEdit],
    changed: &[Changed],
) -> std::result::Result<(patch::Patched, Option<String>), String> {
    let output = &config.output;
    let file = std::fs::OpenOptions::new().read(true).write(true).open(output).map_err(|e| match e.raw_os_error() {
        Some(libc::ETXTBSY) => format!("{} is running and cannot be written (text file busy)", output.display()),
        _ => format!("cannot open {} to patch it: {e}", output.display()),
    })?;
    let view = patch::view(&file).map_err(|e| format!("cannot map {} to patch it: {e}", output.display()))?;
    patch::erratum_unchanged(&view, edits)?;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("cannot remove the incremental state {}: {e}", path.display()))
        }
        _ => {}
    }
    let patched = patch::write(config, &file, &view, edits, &mut state.patching)
        .map_err(|e| format!("patching {} failed: {e}", output.display()))?;
    drop((view, file));
    // The bytes written came from the link's mappings: a file rewritten meanwhile (a parallel build
    // step) may have torn them, and then no state may vouch for the output.
    if let Some(c) = changed.iter().find(|c| c.open.as_ref().is_some_and(|o| o.changed_since_open().unwrap_or(true))) {
        return Ok((patched, Some(format!("{} changed while the link read it", c.path.display()))));
    }
    let now = now_ns();
    for e in edits {
        let f = &mut state.files[e.index];
        (f.size, f.mtime_ns, f.hash, f.racy) =
            (e.data.len() as u64, e.mtime_ns, Some(e.whole), is_racy(e.mtime_ns, now));
        if let Some(p) = &mut f.patch {
            e.update(p);
        }
    }
    let kept = match output_record(output) {
        Some(o) => {
            state.output = o;
            write_state(path, state)
                .err()
                .map(|e| format!("cannot write the incremental state {}: {e}", path.display()))
        }
        None => Some(format!("{} is not a regular file once patched", output.display())),
    };
    Ok((patched, kept))
}

/// How this link's files compare with the state's, when all else is the same.
struct Compared {
    /// Files (index in the state, mtime) whose mtime changed and whose bytes did not.
    touched: Vec<(usize, u64)>,
    /// The output is gone from its path but still there under its other name (`kept_path`).
    restore: bool,
    /// Files whose bytes changed.
    changed: Vec<Changed>,
    /// Each file's (device, inode) now (None: it is not there).
    ids: Vec<Option<(u64, u64)>>,
}

/// A file whose bytes changed: its index in the state, where it is now, the file opened (the
/// link's mapping of it, if the link opened it) and its hashes (`patch::hashes`), and the mtime
/// seen before it was hashed. No file and no hashes: it cannot be opened.
struct Changed {
    index: usize,
    path: PathBuf,
    open: Option<std::sync::Arc<rivet_io::InputFile>>,
    hash: Option<Box<patch::Hashes>>,
    mtime_ns: u64,
}

/// The first difference between the state's link and this one other than in its files: the
/// rivet, the directory, the command line, the output. Gives whether the output is to be given
/// its name back from its other one.
fn compare_run(config: &Config, state: &State) -> std::result::Result<bool, String> {
    if state.linker != linker_identity() {
        return Err("the state was written by another rivet build".into());
    }
    if state.cwd != cwd() {
        return Err("the working directory is not the last link's".into());
    }
    let args = compared_args(&config.raw_args);
    if state.args.len() != args.len() || state.args.iter().zip(&args).any(|(a, b)| *a != **b) {
        return Err("the command line changed".into());
    }
    match output_record(&config.output) {
        Some(o) if o == state.output => Ok(false),
        Some(_) => Err(format!("{} changed since the last link wrote it", config.output.display())),
        None if output_record(&kept_path(&config.output)) == Some(state.output) => Ok(true),
        None => Err(format!("{} is not there", config.output.display())),
    }
}

/// How the files compare (`restore` is left false), or the first difference in the inputs found.
/// `named`: the files options name (`option_files`); `inputs`: the inputs as loaded, in order
/// (None: not loaded; the caller vouches for them); `read`: the files this link opened, with
/// their bytes.
fn compare_files(
    named: &[PathBuf],
    state: &State,
    inputs: Option<&[&Path]>,
    read: &[std::sync::Arc<rivet_io::InputFile>],
) -> std::result::Result<Compared, String> {
    if let Some(inputs) = inputs {
        let now: Vec<std::borrow::Cow<[u8]>> = inputs.iter().map(|p| temp_free(p.as_os_str().as_bytes())).collect();
        if let Some(i) = (0..now.len().max(state.inputs.len()))
            .find(|&i| now.get(i).map(|v| &v[..]) != state.inputs.get(i).map(|v| &v[..]))
        {
            let show = |b: Option<&[u8]>| b.map_or("nothing".to_string(), |b| String::from_utf8_lossy(b).into_owned());
            return Err(format!(
                "the inputs changed: input {} is {}, was {}",
                i + 1,
                show(now.get(i).map(|v| &v[..])),
                show(state.inputs.get(i).map(|v| &v[..]))
            ));
        }
    }
    // The files options name (the state's last ones), found where the last link found them.
    let recorded = state.files.len().checked_sub(named.len()).map_or(&[][..], |k| &state.files[k..]);
    if let Some(p) = named.iter().zip(recorded).find(|(p, f)| p.as_os_str().as_bytes() != f.path).map(|(p, _)| p) {
        return Err(format!("{} is found elsewhere than the last link found it", p.display()));
    }
    if named.len() != recorded.len() {
        return Err("the files options name are not the last link's".into());
    }
    // The files this link has read, by their paths with compiler temp names masked: the n-th
    // file of a masked path in the state is the n-th one here.
    let mut by_path: std::collections::HashMap<std::borrow::Cow<[u8]>, Vec<&std::sync::Arc<rivet_io::InputFile>>> =
        Default::default();
    for f in read {
        by_path.entry(temp_free(f.path().as_os_str().as_bytes())).or_default().push(f);
    }
    let mut seen: std::collections::HashMap<std::borrow::Cow<[u8]>, usize> = Default::default();
    let current: Vec<Option<&std::sync::Arc<rivet_io::InputFile>>> = state
        .files
        .iter()
        .map(|f| {
            let key = temp_free(&f.path);
            let n = seen.entry(key.clone()).or_default();
            *n += 1;
            by_path.get(&key).and_then(|v| v.get(*n - 1)).copied()
        })
        .collect();
    // Each file: the same size and mtime, or else the same bytes.
    type Verdict = std::result::Result<Option<u64>, Changed>;
    let verdicts: Vec<(Verdict, Option<(u64, u64)>)> = state
        .files
        .par_iter()
        .zip(&current)
        .map(|(f, open)| {
            // A file this link has open is found under its path now (a temp name may differ).
            let path = open.map_or(Path::new(std::ffi::OsStr::from_bytes(&f.path)), |o| o.path());
            let gone = || Changed { index: 0, path: path.to_path_buf(), open: None, hash: None, mtime_ns: 0 };
            let Ok(meta) = std::fs::metadata(path) else { return (Err(gone()), None) };
            let id = Some((meta.dev(), meta.ino()));
            let same_stamp = meta.size() == f.size && mtime_ns(&meta) == f.mtime_ns;
            if same_stamp && !f.racy {
                return (Ok(None), id);
            }
            // Compared by its stamp only: it changed.
            if f.hash.is_none() {
                return (Err(Changed { mtime_ns: mtime_ns(&meta), ..gone() }), id);
            }
            // The link's mapping, else the file opened (mapped) here.
            let file = open.cloned().or_else(|| rivet_io::InputFile::open(path).ok().map(std::sync::Arc::new));
            let now = file.as_ref().map(|o| Box::new(patch::hashes(o.data(), f.patch.as_ref())));
            if meta.size() == f.size && now.as_ref().is_some_and(|n| f.hash == Some(n.whole)) {
                // A racy file with its recorded stamp is unchanged, and stays racy.
                (Ok((!same_stamp).then(|| mtime_ns(&meta))), id)
            } else {
                (Err(Changed { open: file, hash: now, mtime_ns: mtime_ns(&meta), ..gone() }), id)
            }
        })
        .collect();
    let mut changed = Vec::new();
    let mut touched = Vec::new();
    let mut ids = Vec::with_capacity(verdicts.len());
    for (i, (v, id)) in verdicts.into_iter().enumerate() {
        ids.push(id);
        match v {
            Ok(Some(mtime)) => touched.push((i, mtime)),
            Ok(None) => {}
            Err(c) => changed.push(Changed { index: i, ..c }),
        }
    }
    Ok(Compared { touched, restore: false, changed, ids })
}

/// Options left out of the compared command line: they change no byte of the output or the state
/// (the timing report on standard error; whether the command returns before the state is written).
const UNCOMPARED: [&str; 4] = ["print-timing", "time", "fork", "no-fork"];

/// The command line as the state records it: without the LTO plugin and its options, which name
/// a temp file of the compiler driver's that differs from link to link (`-fresolution=`). They
/// change no output unless link-time optimisation runs, and a link where it ran is not recorded.
/// Nor with the options `UNCOMPARED` names.
///
/// An input's path and a `-L` directory have the compiler's temp names masked (`temp_free`):
/// `gcc a.c -o a` links `/tmp/ccXXXXXX.o`, and rustc adds `rustcXXXXXX/symbols.o` and
/// `-L.../rustcXXXXXX/raw-dylibs` to every link, each named anew. The files behind them are
/// compared by their bytes. An option's value is never masked (a `-rpath` of such a name would
/// change the output).
fn compared_args(args: &[String]) -> Vec<std::borrow::Cow<'_, [u8]>> {
    let mut out = Vec::with_capacity(args.len());
    let mut skip_next = false;
    let mut value_next = false;
    let mut dir_next = false;
    for a in args {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if std::mem::take(&mut value_next) {
            let dir = std::mem::take(&mut dir_next);
            out.push(if dir { temp_free(a.as_bytes()) } else { std::borrow::Cow::Borrowed(a.as_bytes()) });
            continue;
        }
        let name = a.strip_prefix("--").or_else(|| a.strip_prefix('-')).unwrap_or("");
        if name == "plugin" || name == "plugin-opt" {
            skip_next = true;
            continue;
        }
        if name.starts_with("plugin=") || name.starts_with("plugin-opt=") {
            continue;
        }
        // Options that change nothing the link writes: adding `--print-timing` to see why a
        // relink was a full one must not make it one.
        if UNCOMPARED.contains(&name) {
            continue;
        }
        if !a.starts_with('-') || a.starts_with("-L") && a.len() > 2 {
            out.push(temp_free(a.as_bytes()));
            continue;
        }
        if crate::args::takes_separate_value(a) {
            value_next = true;
            dir_next = a == "-L" || a == "--library-path";
        }
        out.push(std::borrow::Cow::Borrowed(a.as_bytes()));
    }
    out
}

/// `path` with the compiler's per-build names masked with `?`: a component `rustc` + 6 letters
/// or digits (a rustc temp directory: the 6), `cc` + 6 and `.o` (a gcc temp object: the 6), and
/// in a rustc codegen unit's object `CRATE-HASH.UNIT.SESSION.rcgu.o`, the incremental session.
pub fn temp_free(path: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let alnum = |b: &[u8]| b.iter().all(u8::is_ascii_alphanumeric);
    // The range of component `c` to mask.
    let masked = |c: &[u8]| -> Option<std::ops::Range<usize>> {
        if c.len() == 11 && c.starts_with(b"rustc") && alnum(&c[5..]) {
            return Some(5..11);
        }
        if c.len() == 10 && c.starts_with(b"cc") && c.ends_with(b".o") && alnum(&c[2..8]) {
            return Some(2..8);
        }
        let unit = c.strip_suffix(b".rcgu.o")?;
        let dot = unit.iter().rposition(|&b| b == b'.')?;
        let session = &unit[dot + 1..];
        (unit[..dot].contains(&b'.') && (1..=16).contains(&session.len()) && alnum(session))
            .then_some(dot + 1..unit.len())
    };
    let mut out: Option<Vec<u8>> = None;
    let mut start = 0;
    for end in path.iter().enumerate().filter(|(_, &b)| b == b'/').map(|(i, _)| i).chain([path.len()]) {
        if let Some(r) = masked(&path[start..end]) {
            let o = out.get_or_insert_with(|| path.to_vec());
            o[start + r.start..start + r.end].fill(b'?');
        }
        start = end + 1;
    }
    out.map_or(std::borrow::Cow::Borrowed(path), std::borrow::Cow::Owned)
}

/// Why a link that ran to the end leaves no state for the next one to skip on, if it does not:
/// it gave warnings (a skipped link would not), ran link-time optimisation, or read a pipe or a
/// device (`read`: every file it read), whose bytes the next link cannot compare.
pub fn not_recorded(warnings: usize, lto: bool, read: &[std::sync::Arc<rivet_io::InputFile>]) -> Option<String> {
    if warnings > 0 {
        return Some("the link gave warnings, which only a full link gives again".into());
    }
    if lto {
        return Some("link-time optimisation ran (the compiler is an input the state does not record)".into());
    }
    let stream = read.iter().find(|f| !f.is_regular())?;
    Some(format!("{} is not a regular file: its bytes cannot be compared next time", stream.path().display()))
}

/// Before a link creates its output: with `--incremental`, no state may describe the output from
/// here until the new one is in place (an error if it cannot be removed); without it, a state an
/// earlier link left is stale from here on, and its second name of the old output would keep that
/// file's blocks, so both go (a failure to remove them is no error then).
pub fn forget_state(config: &Config) -> Result<()> {
    match config.incremental {
        true => remove_state(&config.output),
        false => {
            let _ = remove_state(&config.output);
            Ok(())
        }
    }
}

/// Removes the state beside `output` before a full link replaces the output: from here until the
/// new state is in place, no state describes a file that may be half replaced.
/// The output's other name goes too: the output then has one link again, and may be rewritten in
/// place.
fn remove_state(output: &Path) -> Result<()> {
    for path in [state_path(output), kept_path(output)] {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(crate::fatal!("cannot remove the incremental state {}: {e}", path.display()))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The files `option_files` names, with their size and mtime before the link reads them.
pub struct OptionFiles(Vec<(PathBuf, Option<(u64, u64)>)>);

impl OptionFiles {
    pub fn snapshot(config: &Config) -> OptionFiles {
        OptionFiles(option_files(config).into_iter().map(|p| (p.clone(), stat(&p))).collect())
    }
}

fn stat(p: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(p).ok().map(|m| (m.size(), mtime_ns(&m)))
}

/// Records the link that has just put its output in place. `inputs`: the inputs as loaded;
/// `read`: every file the link read; `options`: the files options named, as they were before the
/// link read them; `patching`: what patching needs of the files and of the output, and what the
/// record takes over (`patch::Recording`); `probes`: the loader's questions. A file that
/// changed since the link read it is refused (its bytes now are not the ones the output was made
/// from): no state then.
pub fn record(
    config: &Config,
    inputs: &[&Path],
    read: &[std::sync::Arc<rivet_io::InputFile>],
    options: &OptionFiles,
    known: &[FileRecord],
    patching: patch::Recording,
    probes: &[crate::input::Probe],
) -> Result<()> {
    // A file the last link read as it is now keeps its hash: after an edit, only the edited
    // files are read again.
    let known: std::collections::HashMap<(&[u8], u64, u64), Option<u128>> =
        known.iter().filter(|f| !f.racy).map(|f| ((&f.path[..], f.size, f.mtime_ns), f.hash)).collect();
    let now = now_ns();
    let path = state_path(&config.output);
    let output = output_record(&config.output)
        .ok_or_else(|| crate::fatal!("{}: not a regular file once written", config.output.display()))?;
    let patch::Recording { mut placements, output: patching, loaded_from, early, written } = patching;
    // The file at the path must be the one this link wrote: another link of the same output
    // (begun once this one's command had returned, with `--fork`) may have replaced it, and a
    // state of this link's inputs would then vouch for that link's output.
    if written.is_some_and(|w| w != (output.dev, output.ino)) {
        return Err(crate::fatal!("{} was replaced since this link wrote it", config.output.display()));
    }
    let masked = |p: &[u8]| matches!(temp_free(p), std::borrow::Cow::Owned(_));
    placements.resize(read.len(), None);
    let mut files: Vec<FileRecord> = read
        .par_iter()
        .zip(placements)
        .enumerate()
        .map(|(i, (f, patch))| {
            let (path, size, mtime_ns) = stamp(f);
            let racy = is_racy(mtime_ns, now);
            let known = known.get(&(path, size, mtime_ns)).copied().filter(|_| !racy);
            // A file objects were loaded from: from its objects' hashes (`patch::combine`).
            let stamped = !racy && !loaded_from.get(i).copied().unwrap_or(true) && !masked(path);
            let hash = match (&patch, known) {
                (Some(p), _) => Some(patch::file_hash(p)),
                (None, Some(known)) => known,
                (None, None) if stamped => None,
                (None, None) => Some(patch::whole_hash(f, early.get(i))),
            };
            FileRecord { path: path.to_vec(), size, mtime_ns, hash, racy, patch }
        })
        .collect();
    let changed = |p: &Path| crate::fatal!("{} changed since the link read it", p.display());
    for (p, before) in &options.0 {
        let Some((size, mtime_ns)) = *before else { return Err(changed(p)) };
        let data = std::fs::read(p).map_err(|e| crate::fatal!("cannot read {}: {e}", p.display()))?;
        if stat(p) != Some((size, mtime_ns)) || data.len() as u64 != size {
            return Err(changed(p));
        }
        let racy = is_racy(mtime_ns, now);
        let path = p.as_os_str().as_bytes().to_vec();
        files.push(FileRecord { path, size, mtime_ns, hash: Some(hash(&data)), racy, patch: None });
    }
    // The inputs' bytes were hashed from their mappings: each must still be the file it was.
    if let Some(f) = read.iter().find(|f| f.changed_since_open().unwrap_or(true)) {
        return Err(changed(f.path()));
    }
    // A compiler's temp name is masked in the comparisons: the next link knows its files only
    // once it has found its inputs.
    let temp_named =
        files.iter().any(|f| masked(&f.path)) || probes.iter().any(|q| masked(q.path.as_os_str().as_bytes()));
    let state = State {
        linker: linker_identity(),
        cwd: cwd(),
        args: compared_args(&config.raw_args).into_iter().map(|a| a.into_owned()).collect(),
        output,
        inputs: inputs.iter().map(|p| temp_free(p.as_os_str().as_bytes()).into_owned()).collect(),
        files,
        patching,
        probes: (!temp_named).then(|| probes.to_vec()),
    };
    // The output's other name, before the state that trusts it (a file system without hard links
    // only loses the restoring).
    let kept = kept_path(&config.output);
    let _ = std::fs::remove_file(&kept);
    let _ = std::fs::hard_link(&config.output, &kept);
    write_state(&path, &state).map_err(|e| crate::fatal!("cannot write the incremental state {}: {e}", path.display()))
}

/// Writes `state` to a temp file beside `path` and renames it into place.
fn write_state(path: &Path, state: &State) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, state.encode())?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> State {
        State {
            linker: b"rivet 1 2 3".to_vec(),
            cwd: b"/src".to_vec(),
            args: vec![b"-o".to_vec(), b"a.out".to_vec(), b"--incremental".to_vec()],
            output: OutputRecord { dev: 1, ino: 2, size: 3, mtime_ns: 4 },
            inputs: vec![b"a.o".to_vec(), b"/usr/lib/libc.so".to_vec()],
            files: vec![
                FileRecord {
                    path: b"a.o".to_vec(),
                    size: 10,
                    mtime_ns: 11,
                    hash: Some(u128::MAX - 5),
                    racy: false,
                    patch: None,
                },
                FileRecord {
                    path: b"b.o".to_vec(),
                    size: 0,
                    mtime_ns: 12,
                    hash: None,
                    racy: true,
                    patch: Some(patch::FilePatch {
                        rest: 9,
                        members: vec![
                            patch::Member {
                                base: 0,
                                len: 60,
                                hash: 1 << 100,
                                shape: 3,
                                sections: {
                                    let mut s = patch::Sections::default();
                                    s.push(1, 64, 0x401000);
                                    s.push(4, 4096, 0);
                                    s
                                },
                            },
                            patch::Member { base: 68, len: 1, hash: 5, shape: 6, sections: Default::default() },
                        ],
                    }),
                },
            ],
            patching: patch::OutputPatch {
                barrier: Vec::new(),
                build_id: Some((600, 20)),
                digests: vec![[1; 32], [2; 32]],
            },
            probes: Some(vec![
                crate::input::Probe {
                    kind: crate::input::ProbeKind::IsFile,
                    path: "/usr/lib/libc.so".into(),
                    answer: 1,
                },
                crate::input::Probe {
                    kind: crate::input::ProbeKind::Machine,
                    path: "/l/libz.a".into(),
                    answer: u64::MAX,
                },
                crate::input::Probe { kind: crate::input::ProbeKind::Open, path: "a.o".into(), answer: 0 },
            ]),
        }
    }

    #[test]
    fn the_lto_plugin_and_its_options_and_the_timing_report_are_not_compared() {
        let args: Vec<String> = [
            "-plugin",
            "/usr/lib/liblto_plugin.so",
            "-plugin-opt=-fresolution=/tmp/cc1.res",
            "--plugin-opt",
            "x",
            "--plugin=p.so",
            "--print-timing",
            "-no-fork",
            "-o",
            "a.out",
            "a.o",
            "-pluginx",
        ]
        .map(String::from)
        .into();
        let kept: Vec<&[u8]> = vec![b"-o", b"a.out", b"a.o", b"-pluginx"];
        assert_eq!(compared_args(&args), kept);
    }

    #[test]
    fn compiler_temp_names_are_masked_in_inputs_and_search_dirs_only() {
        let args: Vec<String> = [
            "/tmp/ccAb12Cd.o",
            "-L/t/deps/rustcXy12Zw/raw-dylibs",
            "-L",
            "/t/rustcXy12Zw",
            "/t/deps/rustcXy12Zw/symbols.o",
            "-rpath",
            "/opt/rustcXy12Zw",
            "--rpath=/opt/ccAb12Cd.o",
            "/src/ccache1/x.o",
            "/src/ccAb12Cd.c.o",
        ]
        .map(String::from)
        .into();
        let kept: Vec<&[u8]> = vec![
            b"/tmp/cc??????.o",
            b"-L/t/deps/rustc??????/raw-dylibs",
            b"-L",
            b"/t/rustc??????",
            b"/t/deps/rustc??????/symbols.o",
            b"-rpath",
            b"/opt/rustcXy12Zw",
            b"--rpath=/opt/ccAb12Cd.o",
            b"/src/ccache1/x.o",
            b"/src/ccAb12Cd.c.o",
        ];
        assert_eq!(compared_args(&args), kept);
        assert_eq!(temp_free(b"rustcABCDEF"), &b"rustc??????"[..]);
        assert_eq!(temp_free(b"ccABCDEF.o/rustcABCDEFG/x"), &b"cc??????.o/rustcABCDEFG/x"[..]);
        assert_eq!(temp_free(b"d/hello-11b0.1bpip7.0lm42yd.rcgu.o"), &b"d/hello-11b0.1bpip7.???????.rcgu.o"[..]);
        assert_eq!(temp_free(b"d/x.rcgu.o"), &b"d/x.rcgu.o"[..]);
    }

    #[test]
    fn a_file_changed_after_the_link_read_it_leaves_no_state() {
        let dir = std::env::temp_dir().join(format!("rivet-incremental-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (out, script) = (dir.join("a.out"), dir.join("v.map"));
        std::fs::write(&out, b"the output").unwrap();
        std::fs::write(&script, b"{ global: main; local: *; };").unwrap();
        let config = Config { output: out.clone(), version_scripts: vec![script.clone()], ..Config::default() };
        // Unchanged: recorded, with the script's bytes.
        let before = OptionFiles::snapshot(&config);
        record(&config, &[], &[], &before, &[], Default::default(), &[]).unwrap();
        let state = State::decode(&std::fs::read(state_path(&out)).unwrap()).unwrap();
        assert_eq!(state.files.len(), 1);
        assert_eq!(state.files[0].hash, Some(hash(b"{ global: main; local: *; };")));
        // Written just now: its bytes, not its mtime, will say whether it changed.
        assert!(state.files[0].racy);
        assert_eq!(state.output, output_record(&out).unwrap());
        // Rewritten between the snapshot (before the link read it) and the record: refused.
        let before = OptionFiles::snapshot(&config);
        std::fs::write(&script, b"{ global: main; f; local: *; };").unwrap();
        let e = record(&config, &[], &[], &before, &[], Default::default(), &[]).unwrap_err().to_string();
        assert!(e.contains("v.map changed since the link read it"), "{e}");
        // Removed: the same.
        let before = OptionFiles::snapshot(&config);
        std::fs::remove_file(&script).unwrap();
        assert!(record(&config, &[], &[], &before, &[], Default::default(), &[]).is_err());
        // The output at the path is not the file the link committed (another link of it replaced
        // it): no state; the file it committed: a state.
        std::fs::write(&script, b"{ global: main; local: *; };").unwrap();
        let before = OptionFiles::snapshot(&config);
        let other = patch::Recording { written: Some((u64::MAX, u64::MAX)), ..Default::default() };
        let e = record(&config, &[], &[], &before, &[], other, &[]).unwrap_err().to_string();
        assert!(e.contains("a.out was replaced since this link wrote it"), "{e}");
        let o = output_record(&out).unwrap();
        let this = patch::Recording { written: Some((o.dev, o.ino)), ..Default::default() };
        record(&config, &[], &[], &before, &[], this, &[]).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_state_reads_back_as_written() {
        let s = sample();
        assert_eq!(State::decode(&s.encode()), Ok(s.clone()));
        assert_eq!(State::decode(&State::default().encode()), Ok(State::default()));
    }

    #[test]
    fn a_damaged_state_is_refused_with_its_reason() {
        let good = sample().encode();
        // Every truncation, and every single flipped bit in a few places.
        for n in 0..good.len() {
            assert!(State::decode(&good[..n]).is_err(), "truncated to {n} bytes");
        }
        for at in [0, 9, 20, good.len() / 2, good.len() - 9, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            assert!(State::decode(&bad).is_err(), "bit flipped at {at}");
        }
        assert_eq!(State::decode(b"!<arch>\nsomething else"), Err("not a rivet state file".to_string()));
        // A state of another format, its checksum right.
        let mut other = good[..good.len() - 8].to_vec();
        other[8..12].copy_from_slice(&(FORMAT + 1).to_le_bytes());
        let sum = xxhash_rust::xxh3::xxh3_64(&other);
        other.extend_from_slice(&sum.to_le_bytes());
        assert_eq!(State::decode(&other), Err(format!("format {}, where this rivet writes {FORMAT}", FORMAT + 1)));
        // Its writer is still read (a state another rivet build wrote is said to be one).
        assert_eq!(State::writer(&other), Some(sample().linker));
        assert_eq!(State::writer(&good[..good.len() / 2]), Some(sample().linker));
        assert_eq!(State::writer(b"!<arch>\nsomething else"), None);
        assert_eq!(State::writer(&good[..20]), None);
    }

    #[test]
    fn a_huge_count_is_refused_without_allocating_it() {
        let mut w = Vec::new();
        w.extend_from_slice(MAGIC);
        w.extend_from_slice(&FORMAT.to_le_bytes());
        w.extend_from_slice(&0u64.to_le_bytes()); // linker
        w.extend_from_slice(&0u64.to_le_bytes()); // cwd
        w.extend_from_slice(&u64::MAX.to_le_bytes()); // args: a count no file holds
        let sum = xxhash_rust::xxh3::xxh3_64(&w);
        w.extend_from_slice(&sum.to_le_bytes());
        assert_eq!(State::decode(&w), Err("it is truncated".to_string()));
    }
}
