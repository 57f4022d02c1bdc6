//! Symbol resolution. Takes the loaded inputs and gives the set of object files that take part in
//! the link (command-line objects plus the archive members they pull in) and one `Symbol` per global
//! name, resolved by the ELF rules: strong beats weak beats common-less undefined, the larger common
//! wins, the first COMDAT group of a signature is kept. Archives behave as in lld: every archive seen
//! so far can satisfy a reference, so `--start-group` needs no re-scanning and the result does not
//! depend on how often a library is repeated.
use crate::args::Config;
use crate::diag::{Context, Error, Result};
use crate::fatal;
use crate::id_table::{prefetch, IdTable};
use crate::ids::{FileId, IdVec, SharedId, SymbolId};
use crate::input::archive::{self, Archive};
use crate::input::object::{self, ObjSection, ObjectFile};
use crate::input::shared::{self, SharedFile};
use crate::input::{Kind, Loaded};
use ::object::elf;
use ::object::LittleEndian as LE;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Def {
    Undefined,
    /// Defined by symbol `sym` of object `file`.
    Defined {
        file: FileId,
        sym: u32,
    },
    /// A common symbol of object `file`; space is allocated in .bss by layout.
    Common {
        file: FileId,
        sym: u32,
    },
    /// Defined by a member of an archive that has not been loaded (yet).
    Lazy {
        archive: u32,
        member: u32,
    },
    /// Defined by the linker itself (`_end`, `__start_foo`, ...); its value comes from layout.
    Synthetic,
    /// An absolute value (`--defsym=SYM=NUMBER`).
    Absolute(u64),
    /// Assigned by a linker script: `ctx.script_syms[i]`, whose value comes after layout.
    Script(u32),
    /// Defined by dynamic symbol `sym` of shared library `file` (an index into `Resolution::shared`).
    Shared {
        file: SharedId,
        sym: u32,
    },
}

pub struct Symbol<'a> {
    pub name: &'a [u8],
    pub def: Def,
    /// The current definition is weak.
    pub weak: bool,
    /// Some object refers to the symbol with a non-weak reference.
    pub strong_ref: bool,
    /// Some object refers to it at all (weak or not).
    pub referenced: bool,
    /// An object's symbol table lists it as undefined and not weak, or the command line names it
    /// (`-e`, `-u`): a definition in a discarded section makes it `strong_ref` but not this.
    pub undefined_ref: bool,
    /// The most constraining visibility seen (STV_*).
    pub visibility: u8,
    /// `.symver foo, foo@@V`: the default version an object gives its definition; Some(b"") for
    /// `foo@@` or `foo@` (the base version: unversioned, and exported even past `local: *`).
    pub version: Option<&'a [u8]>,
    /// A shared library refers to it (not weakly): an archive member defining it is fetched, as
    /// by an object's reference, but leaving it undefined is no error (the library's users may
    /// define it, or the loader finds it elsewhere).
    pub shared_ref: bool,
    /// Made local by a version script's `local:` or by `--exclude-libs`: `visibility` then says
    /// hidden (it binds here and is not exported), and this keeps the visibility the inputs gave
    /// it, which `.symtab` shows (GNU ld and lld write such a symbol LOCAL DEFAULT).
    pub localized_from: Option<u8>,
    /// Named by `--dynamic-list` or `--export-dynamic-symbol(-list)` (`symbol_options::apply_dynamic_lists`).
    pub dynamic_list: bool,
}

impl<'a> Symbol<'a> {
    /// A name nothing has defined or referenced yet.
    pub fn undefined(name: &'a [u8]) -> Symbol<'a> {
        Symbol {
            name,
            def: Def::Undefined,
            weak: false,
            strong_ref: false,
            referenced: false,
            undefined_ref: false,
            shared_ref: false,
            localized_from: None,
            dynamic_list: false,
            visibility: elf::STV_DEFAULT,
            version: None,
        }
    }

    /// Hidden or internal: bound inside the output, never exported or imported.
    pub fn is_hidden(&self) -> bool {
        is_local_visibility(self.visibility)
    }

    /// A `__start_SEC` or `__stop_SEC` the linker defined: a symbol of output section SEC, with
    /// the visibility `-z start-stop-visibility` gives it (lld), unlike the other linker-defined
    /// names.
    pub fn is_start_stop(&self) -> bool {
        self.def == Def::Synthetic && start_stop_section(self.name).is_some()
    }

    pub fn display(&self) -> String {
        String::from_utf8_lossy(self.name).into_owned()
    }
}

pub struct Resolution<'a> {
    pub objects: IdVec<FileId, ObjectFile<'a>>,
    pub shared: IdVec<SharedId, SharedInput<'a>>,
    pub symbols: IdVec<SymbolId, Symbol<'a>>,
    pub by_name: SymbolIndex,
    /// Warnings resolution found (`--warn-common`), for the caller to report.
    pub warnings: Vec<String>,
    /// `-y`: what each input said of a traced symbol, in the order seen.
    pub trace: Vec<String>,
    /// `--why-extract`: (referrer, archive member, symbol) for each member fetched by a reference.
    pub why_extract: Vec<(String, String, &'a [u8])>,
}

/// Prints `-y`'s lines (stdout, lld's format) and writes `--why-extract`'s table (lld's TSV: a
/// header, then `referrer  member  symbol` per fetched member; `-` is stdout).
pub fn report_tracing(config: &Config, res: &Resolution) -> Result<(), Error> {
    for line in &res.trace {
        println!("{line}");
    }
    let Some(path) = &config.why_extract else { return Ok(()) };
    let mut text = String::from("reference\textracted\tsymbol\n");
    for (referrer, member, sym) in &res.why_extract {
        text.push_str(&format!("{referrer}\t{member}\t{}\n", crate::diag::symbol_name(sym)));
    }
    if path.as_os_str() == "-" {
        print!("{text}");
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| crate::fatal!("cannot open --why-extract= file {}: {e}", path.display()))
}

/// The section a `__start_SEC` or `__stop_SEC` name refers to (SEC) and whether it is its end.
pub fn start_stop_section(name: &[u8]) -> Option<(&[u8], bool)> {
    match name.strip_prefix(b"__start_") {
        Some(sec) => Some((sec, false)),
        None => name.strip_prefix(b"__stop_").map(|sec| (sec, true)),
    }
}

/// STV_HIDDEN or STV_INTERNAL: the symbol binds inside the output.
pub fn is_local_visibility(v: u8) -> bool {
    v == elf::STV_HIDDEN || v == elf::STV_INTERNAL
}

/// A versioned name `foo@V` or `foo@@V` (`.symver`) as (`foo`, `V`, whether it is the default
/// version); None for a plain name.
pub fn split_version(name: &[u8]) -> Option<(&[u8], &[u8], bool)> {
    let at = memchr::memchr(b'@', name).filter(|&at| at > 0)?;
    let rest = &name[at + 1..];
    Some(match rest.strip_prefix(b"@") {
        Some(version) => (&name[..at], version, true),
        None => (&name[..at], rest, false),
    })
}

impl<'a> Resolution<'a> {
    /// The id of `name`, entered as a new undefined symbol if nothing named it yet.
    pub fn intern(&mut self, name: &'a [u8]) -> SymbolId {
        self.by_name.intern_hashed(&mut self.symbols, name, crate::fx_hash(name))
    }
}

/// Global symbols' ids by name: an `IdTable` of symbol indexes, whose keys are the symbols' own
/// names (`Symbol::name`; the hash recomputed only to grow the table). Resolution prefetches the
/// slots, symbols and names that the names it adds next will probe (`prefetch_slot`,
/// `prefetch_symbol`): interning was two fifths of resolution's time at one thread, most of it
/// waiting for those three loads in turn (perf, rust-big).
#[derive(Default)]
pub struct SymbolIndex {
    table: IdTable,
}

/// The id of index `i` (as the table holds it).
fn symbol_id(i: u32) -> SymbolId {
    SymbolId::new(i as usize)
}

impl SymbolIndex {
    pub fn get(&self, symbols: &IdVec<SymbolId, Symbol>, name: &[u8]) -> Option<SymbolId> {
        self.get_hashed(symbols, name, crate::fx_hash(name))
    }

    /// The id of `name`, whose `fx_hash` is `hash`.
    #[inline]
    pub fn get_hashed(&self, symbols: &IdVec<SymbolId, Symbol>, name: &[u8], hash: u64) -> Option<SymbolId> {
        self.table.find(hash, |i| symbols[symbol_id(i)].name == name).map(symbol_id)
    }

    pub fn contains_key(&self, symbols: &IdVec<SymbolId, Symbol>, name: &[u8]) -> bool {
        self.get(symbols, name).is_some()
    }

    /// Maps symbol `id`'s name to it (replacing what the name mapped to before).
    pub fn insert(&mut self, symbols: &IdVec<SymbolId, Symbol>, id: SymbolId) {
        let name = symbols[id].name;
        let rehash = |i| crate::fx_hash(symbols[symbol_id(i)].name);
        self.table.set(crate::fx_hash(name), id.as_u32(), |i| symbols[symbol_id(i)].name == name, rehash);
    }

    /// The id of `name` (whose `fx_hash` is `hash`), a new undefined symbol if it had none.
    #[inline]
    pub fn intern_hashed<'a>(
        &mut self,
        symbols: &mut IdVec<SymbolId, Symbol<'a>>,
        name: &'a [u8],
        hash: u64,
    ) -> SymbolId {
        let next = symbols.next_id();
        let syms = &*symbols;
        let rehash = |i| crate::fx_hash(syms[symbol_id(i)].name);
        let (i, new) = self.table.find_or_insert(hash, next.as_u32(), |i| syms[symbol_id(i)].name == name, rehash);
        if new {
            symbols.push(Symbol::undefined(name));
        }
        symbol_id(i)
    }

    /// Room for `additional` more names without growing.
    pub fn reserve(&mut self, symbols: &IdVec<SymbolId, Symbol>, additional: usize) {
        let rehash = |i| crate::fx_hash(symbols[symbol_id(i)].name);
        self.table.reserve(additional, symbols.len() as u32, rehash);
    }

    /// Starts loading the slot where the probe for a name of hash `hash` begins.
    #[inline]
    pub fn prefetch_slot(&self, hash: u64) {
        self.table.prefetch_slot(hash);
    }

    /// Starts loading the symbol that a name of hash `hash` most likely is, or with `name_too`
    /// that symbol's name (which reads the symbol): for names some way ahead, after
    /// `prefetch_slot` and before the name is probed.
    #[inline]
    pub fn prefetch_symbol(&self, symbols: &IdVec<SymbolId, Symbol>, hash: u64, name_too: bool) {
        if let Some(s) = self.table.likely(hash).and_then(|i| symbols.get(symbol_id(i))) {
            match name_too {
                true => prefetch(s.name.as_ptr()),
                false => prefetch(s),
            }
        }
    }
}

/// COMDAT signatures that no global symbol names, to the files that own them (resolution).
/// Names come with their hash already computed: resolution hashes each object's names on the
/// thread that parsed it, so its serial part only probes.
#[derive(Default)]
struct SignatureMap<'a> {
    table: hashbrown::HashTable<(u64, &'a [u8], FileId)>,
}

impl<'a> SignatureMap<'a> {
    /// The file that owns `name`, whose `fx_hash` is `hash`.
    fn get_hashed(&self, name: &[u8], hash: u64) -> Option<&FileId> {
        self.table.find(hash, |e| e.0 == hash && e.1 == name).map(|e| &e.2)
    }

    /// The file that owns `name` (whose `fx_hash` is `hash`), which becomes `next` if none did.
    fn intern_hashed(&mut self, name: &'a [u8], hash: u64, next: FileId) -> FileId {
        use hashbrown::hash_table::Entry;
        match self.table.entry(hash, |e| e.0 == hash && e.1 == name, |e| e.0) {
            Entry::Occupied(o) => o.get().2,
            Entry::Vacant(v) => {
                v.insert((hash, name, next));
                next
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

/// A global symbol of an object as resolution sees it, prepared on the thread that parsed the
/// object: its name (`foo@@V` cut to `foo`, `--wrap` applied to references), the default version
/// an `@@` gives its definition, and the name's hash.
struct Prepared<'a> {
    name: &'a [u8],
    default_version: Option<&'a [u8]>,
    hash: u64,
}

/// How resolution finds a COMDAT group's signature.
#[derive(Clone, Copy)]
enum Signature {
    /// It is the name of global symbol `first_global + .0` of the same object (nearly always: a
    /// C++ inline function's group is signed by the function), so the symbol's id stands for it
    /// and claiming the group costs no lookup of its own.
    Global(u32),
    /// Any other signature (a local signature symbol, a renamed or versioned name), with its
    /// `fx_hash`.
    Named(u64),
}

/// An object with its global symbols prepared (an error for a symbol whose name is unreadable)
/// and how each of its COMDAT signatures is found.
type ParsedObject<'a> = (ObjectFile<'a>, Vec<Result<Prepared<'a>>>, Vec<Signature>);

/// An input as its parse leaves it: an object ready to join the link, or one holding compiler IR
/// that the link-time optimisation hook decides about when it joins.
enum Parsed<'a> {
    Object(ParsedObject<'a>),
    Ir(IrInput<'a>),
}

impl Parsed<'_> {
    /// How messages name the input.
    fn name(&self) -> &str {
        match self {
            Parsed::Object(p) => &p.0.name,
            Parsed::Ir(ir) => &ir.name,
        }
    }
}

/// An object holding compiler IR (LLVM bitcode, or an ELF object with `.gnu.lto_*` / `.llvm.lto`
/// sections) met by a link that has an LTO hook.
pub struct IrInput<'a> {
    pub loaded: &'a Loaded,
    /// The file's (or archive member's) bytes.
    pub data: &'a [u8],
    /// How messages name it: `path` or `archive.a(member.o)`.
    pub name: String,
    /// Its place on the command line (the `order` of an object).
    pub order: (u32, u32),
    /// An archive member (rather than a file named on the command line).
    pub member: bool,
    /// The object as ELF, when it is one (bitcode is not): a fat object links with its code.
    pub elf: Option<ObjectFile<'a>>,
}

/// What link-time optimisation makes of an IR input, decided when it joins the link (serially,
/// in the order inputs join, so the plugin sees the same order every run): an object to add (the
/// symbols the plugin read, or a fat object's own code), or nothing.
pub type IrHook<'a, 'h> = &'h dyn Fn(IrInput<'a>) -> Result<Option<ObjectFile<'a>>>;

/// Where `foo@@V` splits: the first "@@".
fn default_version_at(name: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'@', name).find(|&at| name.get(at + 1) == Some(&b'@'))
}

fn prepare<'a>(obj: ObjectFile<'a>, renames: &HashMap<&'a [u8], &'a [u8]>) -> ParsedObject<'a> {
    let globals: Vec<Result<Prepared>> = (obj.first_global..obj.syms.len())
        .map(|i| {
            let sym = &obj.syms[i];
            let name = obj.sym_name(sym)?;
            let shndx = sym.st_shndx.get(LE);
            // `foo@@V` (from `.symver`) defines `foo` at its default version V; `foo@V` stays a
            // symbol of its own, a non-default version only a reference naming it can bind to.
            // `foo@` and `foo@@` (an empty version name) define `foo` in the base version: plain
            // and exported whatever a version script says (GNU ld's reading; the version is Some("")).
            let (name, default_version) = match default_version_at(name) {
                Some(at) if shndx != elf::SHN_UNDEF => (&name[..at], Some(&name[at + 2..])),
                None if shndx != elf::SHN_UNDEF && name.len() > 1 && name.ends_with(b"@") => {
                    (&name[..name.len() - 1], Some(&b""[..]))
                }
                _ => (name, None),
            };
            // --wrap renames undefined references only, as GNU ld does: a definition keeps its name.
            let name = match renames.get(name) {
                Some(&to) if shndx == elf::SHN_UNDEF => to,
                _ => name,
            };
            Ok(Prepared { name, default_version, hash: crate::fx_hash(name) })
        })
        .collect();
    let comdats = obj
        .comdats
        .iter()
        .map(|g| {
            // The very bytes of the symbol's prepared name: not cut at `@@`, not renamed by --wrap.
            let global = (g.signature_sym as usize).checked_sub(obj.first_global).filter(|&gi| match globals.get(gi) {
                Some(Ok(p)) => std::ptr::eq(p.name, g.signature),
                _ => false,
            });
            match global {
                Some(gi) => Signature::Global(gi as u32),
                None => Signature::Named(crate::fx_hash(g.signature)),
            }
        })
        .collect();
    (obj, globals, comdats)
}

/// A shared library in the link and whether the output needs it (DT_NEEDED).
pub struct SharedInput<'a> {
    pub file: SharedFile<'a>,
    /// `--as-needed` was in force when it was named: needed only if it defines a referenced symbol.
    pub as_needed: bool,
}

/// A parsed archive member (None: not ELF, skipped), or why it could not be parsed.
type Member<'a> = Result<Option<Parsed<'a>>>;

struct Resolver<'a, 'x> {
    loaded: &'a [Loaded],
    shared: IdVec<SharedId, SharedInput<'a>>,
    archives: &'x [Option<Archive<'a>>],
    objects: IdVec<FileId, ObjectFile<'a>>,
    symbols: IdVec<SymbolId, Symbol<'a>>,
    by_name: SymbolIndex,
    /// Each archive's symbol table hashes (`fx_hash`), by input position.
    archive_hashes: &'x [Vec<u64>],
    /// Which members of each archive (by input position) are queued.
    fetched: Vec<Vec<bool>>,
    /// The file that owns each COMDAT signature, by the id of the symbol of the same name
    /// (None: unclaimed; shorter than `symbols` until a claim needs it longer)...
    comdat_owner: IdVec<SymbolId, Option<FileId>>,
    /// ... or by name, for a signature no symbol had when it was first claimed.
    comdat_named: SignatureMap<'a>,
    /// `.gnu.linkonce.*` sections (COMDAT's predecessor): the file that kept each name.
    linkonce: rustc_hash::FxHashMap<&'a [u8], FileId>,
    /// The queued members (archive, member), numbered in the order they are queued and added in
    /// that order: `added` is how many have been; the rest wait.
    queue: Vec<(u32, u32)>,
    added: u64,
    /// Where the members are parsed, by the pool and by this thread while it would wait.
    parsing: &'x Parsing<'a, 'x>,
    errors: Vec<Error>,
    /// Duplicate definitions, reported once each: (symbol, the file that defines it, the file
    /// that defines it again and its symbol index there).
    duplicates: Vec<(SymbolId, FileId, FileId, u32)>,
    /// `--allow-multiple-definition` / `-z muldefs`: the first definition wins, silently.
    allow_multiple_definition: bool,
    /// `-r`: the objects keep their COMDAT groups (`ObjectFile::comdats`), which the output
    /// lists again.
    keep_groups: bool,
    /// `--trace`: each object is printed as it joins the link.
    trace: bool,
    /// Common symbols that fetched an archive member defining them (see `add_archive`).
    common_fetched: rustc_hash::FxHashSet<SymbolId>,
    /// `--warn-common`: the warnings, in GNU ld's words.
    warn_common: bool,
    warnings: Vec<String>,
    /// `-y`/`--trace-symbol`: the names traced, and what was seen of them (lld's lines).
    traced: rustc_hash::FxHashSet<Vec<u8>>,
    trace_lines: Vec<String>,
    /// `--why-extract`: who first referred to each symbol, and why each queued member was fetched
    /// (by queue number: referrer and symbol); empty unless asked.
    why: Option<Why<'a>>,
    /// Link-time optimisation's say over IR inputs (None: IR objects are refused, fat ones link
    /// with their code).
    ir_hook: Option<IrHook<'a, 'x>>,
    renames: &'x HashMap<&'a [u8], &'a [u8]>,
    /// `--warn-backrefs`: the backward references found (None: not asked).
    backrefs: Option<Backrefs>,
}

/// `--warn-backrefs`' record, as lld keeps it: for each symbol whose archive member (or
/// `--start-lib` object) was fetched by a reference from a later group, the referrer's name and
/// the member (input position, member index), in the order they were found. A later archive
/// offering the symbol again while it is defined cancels the warning (lld's "linking sandwich":
/// GNU ld would have fetched that one).
#[derive(Default)]
struct Backrefs {
    found: Vec<(SymbolId, String, u32, u32)>,
    at: HashMap<SymbolId, usize>,
    cancelled: rustc_hash::FxHashSet<SymbolId>,
    /// `--warn-backrefs-exclude`: members whose names match are not reported.
    exclude: Vec<String>,
}

/// `--why-extract`'s record.
#[derive(Default)]
struct Why<'a> {
    first_referrer: HashMap<SymbolId, String>,
    by_seq: HashMap<u64, (String, &'a [u8])>,
    /// (referrer, member, symbol), in extraction order.
    rows: Vec<(String, String, &'a [u8])>,
}

/// Resolves all symbols. `roots` are names that must be looked up even if no object refers to them
/// (the entry point, `-u`). From `config`: `--allow-multiple-definition`, `--trace`,
/// `--undefined-glob`, `--warn-common`.
pub fn resolve<'a>(
    loaded: &'a [Loaded],
    roots: &'a [String],
    renames: &'a [(String, String)],
    prefetch: Option<&rivet_io::Prefetcher>,
    timer: &crate::timing::Timer,
    config: &Config,
) -> Result<Resolution<'a>, Vec<Error>> {
    resolve_with(loaded, roots, renames, prefetch, timer, config, None)
}

/// `resolve`, IR inputs handed to `ir_hook` (link-time optimisation) as they join the link.
pub fn resolve_with<'a>(
    loaded: &'a [Loaded],
    roots: &'a [String],
    renames: &'a [(String, String)],
    prefetch: Option<&rivet_io::Prefetcher>,
    timer: &crate::timing::Timer,
    config: &Config,
    ir_hook: Option<IrHook<'a, '_>>,
) -> Result<Resolution<'a>, Vec<Error>> {
    let (archives, errors) = parse_archives(loaded);
    if !errors.is_empty() {
        return Err(errors);
    }
    // The archives' symbol names, hashed in parallel.
    let archive_hashes: Vec<Vec<u64>> = archives
        .par_iter()
        .with_max_len(1)
        .map(|a| a.as_ref().map_or_else(Vec::new, |a| a.symbols.iter().map(|&(n, _)| crate::fx_hash(n)).collect()))
        .collect();
    // `--wrap`: undefined references to a name bind to another (`foo` → `__wrap_foo`,
    // `__real_foo` → `foo`).
    let renames: HashMap<&'a [u8], &'a [u8]> =
        renames.iter().map(|(from, to)| (from.as_bytes(), to.as_bytes())).collect();
    let renames = &renames;
    let with_ir = ir_hook.is_some();
    // Objects and archive members are parsed while this thread goes on adding earlier ones:
    // parsing was 9.5% of a cxx-big link's CPU time (perf, DWARF call graphs) and sat on the
    // serial path. See `Parsing` for who parses what; inputs are still added in command-line
    // and queue order, so the result does not depend on which parse finishes first.
    let archives = &archives;
    // One core stays with this thread, which parses too whenever it would wait.
    let loops = rayon::current_num_threads().saturating_sub(1);
    let parsing = Parsing::new(loaded, archives, &archive_hashes, renames, prefetch, timer, with_ir);
    let parsing = &parsing;
    rayon::in_place_scope(|scope| {
        for worker in 0..loops {
            scope.spawn(move |_| parsing.work(worker == 0));
        }
        // The scope waits for the parsing loops: they must end however resolution does.
        // Resolution runs on a pool thread (the link is `install`ed): until it stops the loops,
        // it must not wait inside rayon (a parallel iterator, a join), where it could pick up a
        // loop not yet started and run it until a stop that only it can give.
        let _stop = StopParsing(parsing);
        let r = Resolver {
            loaded,
            archives,
            objects: IdVec::new(),
            shared: IdVec::new(),
            symbols: IdVec::new(),
            by_name: SymbolIndex::default(),
            archive_hashes: &archive_hashes,
            fetched: archives.iter().map(|a| vec![false; a.as_ref().map_or(0, |a| a.member_count())]).collect(),
            comdat_owner: IdVec::new(),
            comdat_named: SignatureMap::default(),
            linkonce: Default::default(),
            queue: Vec::new(),
            added: 0,
            parsing,
            errors: Vec::new(),
            duplicates: Vec::new(),
            allow_multiple_definition: config.allow_multiple_definition,
            keep_groups: config.relocatable,
            trace: config.trace,
            common_fetched: Default::default(),
            warn_common: config.warn_common,
            warnings: Vec::new(),
            traced: config.trace_symbols.iter().map(|s| s.as_bytes().to_vec()).collect(),
            trace_lines: Vec::new(),
            why: config.why_extract.is_some().then(Why::default),
            ir_hook,
            renames,
            backrefs: config
                .warn_backrefs
                .then(|| Backrefs { exclude: config.warn_backrefs_exclude.clone(), ..Default::default() }),
        };
        r.run(roots, &config.undefined_globs)
    })
}

/// Ends the parsing loops when dropped.
struct StopParsing<'p, 'a, 'x>(&'p Parsing<'a, 'x>);

impl Drop for StopParsing<'_, '_, '_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Inputs parsed for resolution, each once: the objects named on the command line, all asked
/// for in order before anything is added, and archive members. Resolution's thread adds the
/// objects as they are parsed, so adding overlaps parsing (cxx-templates, 32 objects with 178k
/// COMDAT groups, parsed by both cores and then added on one: resolution 75.8 -> 55.5 ms, synth-1
/// 8.0 -> 5.6, medians of 5 `--time-trace` runs). It asks for a member when
/// it queues it; a parsed input asks for the members its non-weak undefined references are
/// likely to fetch: those the first archive offering the name holds, found by the name's hash in
/// a table of every archive symbol (a collision or a name defined elsewhere first only costs a
/// parse whose result is dropped). So the pool walks the archives' dependency graph ahead of
/// resolution instead of waiting for it to add each member. The pool runs one parsing loop
/// fewer than it has threads, and resolution's thread parses the member it needs next (or any
/// other asked for) instead of waiting: the machine's cores are never shared by more parsers
/// and the thread on the critical path. On cxx-big the guesses are the 1151 members the link
/// needs and no other. Against a parse task per member on every pool thread, no guessing
/// (`--print-timing`, 15 alternated runs, 2 cores): resolution 61.1 -> 55.9 ms on cxx-big, 18.6
/// -> 16.4 on rust-debug, 12.4 -> 12.9 on c-debug (many small members: one parser fewer beside
/// this thread costs more than the guesses win). Guessing with a loop on every pool thread
/// too was no faster on cxx-big (59.4 ms): the three threads shared two cores.
struct Parsing<'a, 'x> {
    loaded: &'a [Loaded],
    archives: &'x [Option<Archive<'a>>],
    renames: &'x HashMap<&'a [u8], &'a [u8]>,
    prefetch: Option<&'x rivet_io::Prefetcher>,
    /// Each command-line object's parse is a span of the trace.
    timer: &'x crate::timing::Timer,
    with_ir: bool,
    /// The archives' symbol hashes, by input position, from which the first parsing loop
    /// builds `by_hash`.
    hashes: &'x [Vec<u64>],
    /// An archive symbol's `fx_hash` to the first (archive, member) offering a name of that
    /// hash, built by the first parsing loop; a parse waits for it, so what is guessed does not
    /// depend on timing. Without parsing loops (one thread) nothing is guessed.
    by_hash: std::sync::OnceLock<HashMap<u64, (u32, u32)>>,
    /// A parsing loop builds `by_hash`.
    guessing: bool,
    /// Each input's (by input position) first entry in `ParseState::stage`: an archive has one
    /// per member, an object named on the command line one (as member 0), any other input none.
    first: Vec<usize>,
    state: std::sync::Mutex<ParseState<'a>>,
    changed: std::sync::Condvar,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    NotAsked,
    Asked,
    /// Being parsed, or parsed (the result is in `ParseState::parsed` until taken).
    Started,
}

struct ParseState<'a> {
    stage: Vec<Stage>,
    /// Members asked for, in the order asked (an entry whose stage moved on is skipped).
    asked: std::collections::VecDeque<(u32, u32)>,
    /// Parsed members not yet taken by resolution.
    parsed: HashMap<(u32, u32), Member<'a>>,
    /// Resolution is over: the parsing loops end.
    stop: bool,
    /// Threads waiting on `Parsing::changed` (no wake-up call when there are none).
    waiting: u32,
}

/// Member `member` of archive `pos`'s place in `ParseState::stage` (`first`: each archive's first).
fn slot(first: &[usize], pos: u32, member: u32) -> usize {
    first[pos as usize] + member as usize
}

impl<'a> ParseState<'a> {
    /// The next member asked for and not started, now marked started.
    fn next_asked(&mut self, first: &[usize]) -> Option<(u32, u32)> {
        while let Some((pos, member)) = self.asked.pop_front() {
            let stage = &mut self.stage[slot(first, pos, member)];
            if *stage == Stage::Asked {
                *stage = Stage::Started;
                return Some((pos, member));
            }
        }
        None
    }

    /// Asks for a member not asked for before; false if it was.
    fn ask(&mut self, first: &[usize], pos: u32, member: u32) -> bool {
        let stage = &mut self.stage[slot(first, pos, member)];
        if *stage != Stage::NotAsked {
            return false;
        }
        *stage = Stage::Asked;
        self.asked.push_back((pos, member));
        true
    }
}

impl<'a, 'x> Parsing<'a, 'x> {
    fn new(
        loaded: &'a [Loaded],
        archives: &'x [Option<Archive<'a>>],
        hashes: &'x [Vec<u64>],
        renames: &'x HashMap<&'a [u8], &'a [u8]>,
        prefetch: Option<&'x rivet_io::Prefetcher>,
        timer: &'x crate::timing::Timer,
        with_ir: bool,
    ) -> Self {
        let mut first = Vec::with_capacity(archives.len());
        let mut total = 0;
        for (a, l) in archives.iter().zip(loaded) {
            first.push(total);
            total += match a {
                Some(a) => a.member_count(),
                None => is_direct(l) as usize,
            };
        }
        let state = ParseState {
            stage: vec![Stage::NotAsked; total],
            asked: Default::default(),
            parsed: HashMap::default(),
            stop: false,
            waiting: 0,
        };
        Parsing {
            loaded,
            archives,
            renames,
            prefetch,
            timer,
            with_ir,
            hashes,
            by_hash: Default::default(),
            // Guessed by the parsing loops, which resolution's thread runs beside when the pool
            // has more than one.
            guessing: rayon::current_num_threads() > 1,
            first,
            state: std::sync::Mutex::new(state),
            changed: Default::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ParseState<'a>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Asks for member `member` of archive `pos` (resolution has queued it).
    fn ask(&self, pos: u32, member: u32) {
        let mut state = self.lock();
        if state.ask(&self.first, pos, member) {
            self.notify(state);
        }
    }

    /// Wakes the threads waiting for a change, if any (a futex call per member otherwise).
    fn notify(&self, state: std::sync::MutexGuard<'_, ParseState<'a>>) {
        let waiting = state.waiting > 0;
        drop(state);
        if waiting {
            self.changed.notify_all();
        }
    }

    /// Waits for a change.
    fn wait<'g>(
        &self,
        mut state: std::sync::MutexGuard<'g, ParseState<'a>>,
    ) -> std::sync::MutexGuard<'g, ParseState<'a>> {
        state.waiting += 1;
        let mut state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        state.waiting -= 1;
        state
    }

    /// Parses a member marked started, keeps the result and asks for the members its
    /// references are likely to fetch.
    fn parse(&self, pos: u32, member: u32) {
        // A parse that panics (a bug) must still leave a result, or resolution would wait for it
        // forever: it becomes this member's error.
        let direct = is_direct(&self.loaded[pos as usize]);
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match direct {
            true => self.parse_direct(pos),
            false => load_member(self.loaded, self.archives, self.renames, self.prefetch, pos, member, self.with_ir),
        }))
        .unwrap_or_else(|_| {
            let what = if direct { "the object".to_string() } else { format!("archive member {member}") };
            Err(fatal!("internal error: parsing {what} panicked").context(&self.loaded[pos as usize].name))
        });
        let mut wanted = Vec::new();
        // A command-line object guesses only once the table is there: it is parsed while the
        // table is built, and what is guessed costs or saves time but changes no result.
        let by_hash = match direct {
            true => self.by_hash.get(),
            false => self.guessing.then(|| self.by_hash.wait()),
        };
        if let (Some(by_hash), Ok(Some(Parsed::Object((obj, globals, _))))) = (by_hash, &parsed) {
            for (sym, p) in obj.syms[obj.first_global..].iter().zip(globals) {
                let Ok(p) = p else { continue };
                if sym.st_shndx.get(LE) == elf::SHN_UNDEF && sym.st_info >> 4 != elf::STB_WEAK {
                    wanted.extend(by_hash.get(&p.hash).copied());
                }
            }
        }
        let mut state = self.lock();
        state.parsed.insert((pos, member), parsed);
        for (pos, member) in wanted {
            state.ask(&self.first, pos, member);
        }
        self.notify(state);
    }

    /// The object named at input position `pos` on the command line (with a span in the trace).
    fn parse_direct(&self, pos: u32) -> Member<'a> {
        let l = &self.loaded[pos as usize];
        let start = self.timer.origin_elapsed();
        let parsed = parse_input(l, l.file.data(), l.name.clone(), (pos, 0), false, self.renames, self.with_ir)
            .and_then(|p| p.ok_or_else(|| fatal!("not an ELF object").context(&l.name)));
        // One trace span per input file (depth 2: in --time-trace, not in the table).
        self.timer.record(&format!("parse {}", l.name), 2, start, self.timer.origin_elapsed() - start);
        parsed.map(Some)
    }

    /// A parsing loop on the pool: members asked for, until resolution is over. The first one
    /// builds the hash table the parses' guesses need.
    fn work(&self, build_table: bool) {
        if build_table {
            let mut by_hash = HashMap::default();
            by_hash.reserve(self.hashes.iter().map(|h| h.len()).sum());
            for (pos, (a, hashes)) in self.archives.iter().zip(self.hashes).enumerate() {
                // A --whole-archive's members are all queued at once.
                let Some(a) = a.as_ref().filter(|_| !self.loaded[pos].state.whole_archive) else { continue };
                for (&(_, member), &hash) in a.symbols.iter().zip(hashes) {
                    by_hash.entry(hash).or_insert((pos as u32, member as u32));
                }
            }
            let _ = self.by_hash.set(by_hash);
        }
        let mut state = self.lock();
        while !state.stop {
            match state.next_asked(&self.first) {
                Some((pos, member)) => {
                    drop(state);
                    self.parse(pos, member);
                    state = self.lock();
                }
                None => state = self.wait(state),
            }
        }
    }

    /// Member `member` of archive `pos`, which resolution asked for, once parsed: parsed here if
    /// no one has started it; while another thread parses it, this one parses other members
    /// asked for, or waits.
    fn take(&self, pos: u32, member: u32) -> Member<'a> {
        let index = slot(&self.first, pos, member);
        let mut state = self.lock();
        loop {
            if let Some(m) = state.parsed.remove(&(pos, member)) {
                return m;
            }
            let next = match state.stage[index] {
                Stage::Asked => {
                    state.stage[index] = Stage::Started;
                    Some((pos, member))
                }
                _ => state.next_asked(&self.first),
            };
            match next {
                Some((p, m)) => {
                    drop(state);
                    self.parse(p, m);
                    state = self.lock();
                }
                None => state = self.wait(state),
            }
        }
    }

    /// Resolution is over: the parsing loops end (what they parse from now on is dropped).
    fn stop(&self) {
        let mut state = self.lock();
        state.stop = true;
        self.notify(state);
    }
}

impl<'a> Resolver<'a, '_> {
    fn run(mut self, roots: &'a [String], globs: &[String]) -> Result<Resolution<'a>, Vec<Error>> {
        let r = &mut self;
        let loaded = r.loaded;
        // The command-line objects are parsed in order, ahead of this thread, from the start.
        for (pos, l) in loaded.iter().enumerate() {
            if is_direct(l) {
                r.parsing.ask(pos as u32, 0);
            }
        }
        // The archives' symbol tables and the objects' global symbols bound the table's size: reserving
        // it up front saves rehashing while interning (6.4% of a cxx-big link in perf).
        let expected = r.archives.iter().flatten().map(|a| a.symbols.len()).sum::<usize>()
            + loaded.iter().filter(|l| is_direct(l)).map(|l| object::global_count(l.file.data())).sum::<usize>()
            + loaded
                .iter()
                .filter(|l| l.kind == Kind::Shared)
                .map(|l| shared::dynamic_symbol_count(l.file.data()))
                .sum::<usize>();
        r.by_name.reserve(&r.symbols, expected);
        r.symbols.reserve(expected);
        for name in roots {
            let id = r.intern(name.as_bytes());
            if let Some(why) = &mut r.why {
                why.first_referrer.entry(id).or_insert_with(|| "<internal>".to_string());
            }
            let s = &mut r.symbols[id];
            s.strong_ref = true;
            s.referenced = true;
            s.undefined_ref = true;
        }
        // An object named on the command line that cannot be parsed fails the link with what the
        // others say of themselves, and nothing else: the inputs after it are only parsed.
        let mut unparsed = Vec::new();
        for (pos, l) in loaded.iter().enumerate() {
            if is_direct(l) {
                match r.parsing.take(pos as u32, 0) {
                    Ok(Some(parsed)) if unparsed.is_empty() => r.add_parsed(parsed),
                    Ok(_) => {}
                    Err(e) => unparsed.push(e),
                }
            }
            if !unparsed.is_empty() {
                continue;
            }
            match l.kind {
                Kind::Object if l.state.lazy => r.add_archive(pos as u32),
                Kind::Object => {}
                Kind::Archive => r.add_archive(pos as u32),
                Kind::Shared => r.add_shared(pos as u32),
            }
            r.drain_queue();
        }
        if !unparsed.is_empty() {
            r.parsing.stop();
            return Err(unparsed);
        }
        r.undefined_globs(globs);
        // No member is queued from here on: the parsing loops give their pool threads back
        // before the parallel passes below.
        r.parsing.stop();
        r.unlazy_fetched();
        r.bind_versioned_references();
        r.unbind_hidden_from_shared();
        r.report_duplicates();
        r.report_backrefs();
        if !r.errors.is_empty() {
            return Err(std::mem::take(&mut r.errors));
        }
        let r = self;
        let (objects, shared, symbols, by_name, warnings) = (r.objects, r.shared, r.symbols, r.by_name, r.warnings);
        let why_extract = r.why.map_or_else(Vec::new, |w| w.rows);
        Ok(Resolution { objects, shared, symbols, by_name, warnings, trace: r.trace_lines, why_extract })
    }
}

/// Parses every archive's member headers and symbol table, archives in parallel (5.5% of a
/// cxx-big link's CPU time in perf).
fn parse_archives(loaded: &[Loaded]) -> (Vec<Option<Archive<'_>>>, Vec<Error>) {
    let parsed: Vec<Option<Result<Archive>>> = loaded
        .par_iter()
        .with_max_len(1)
        .map(|l| {
            // --whole-archive takes every member, also those the symbol table does not name.
            let parse = if l.state.whole_archive { archive::parse } else { archive::parse_lazily };
            match l.kind {
                Kind::Archive => Some(parse(l.file.data())),
                Kind::Object if l.state.lazy => Some(lazy_object(l)),
                _ => None,
            }
        })
        .collect();
    let mut errors = Vec::new();
    let archives = parsed
        .into_iter()
        .zip(loaded)
        .map(|(p, l)| match p? {
            Ok(a) => {
                if !a.has_symbol_table && a.member_count() > 0 && !l.state.whole_archive {
                    errors.push(fatal!("archive has no symbol table (run ranlib on it)").context(&l.name));
                }
                Some(a)
            }
            Err(e) => {
                errors.push(e.context(&l.name));
                None
            }
        })
        .collect();
    (archives, errors)
}

/// An object between `--start-lib` and `--end-lib`, as an archive whose one member is itself.
fn lazy_object(l: &Loaded) -> Result<Archive<'_>> {
    let data = l.file.data();
    Ok(archive::single_member(l.name.as_bytes(), data, object::defined_globals(data)?))
}

/// An object named on the command line (not between `--start-lib` and `--end-lib`): always in
/// the link.
fn is_direct(l: &Loaded) -> bool {
    l.kind == Kind::Object && !l.state.lazy
}

/// Parses member `member` of archive `pos`. Non-ELF members (an rlib's `lib.rmeta`) are skipped.
fn load_member<'a>(
    loaded: &'a [Loaded],
    archives: &[Option<Archive<'a>>],
    renames: &HashMap<&'a [u8], &'a [u8]>,
    prefetch: Option<&rivet_io::Prefetcher>,
    pos: u32,
    member: u32,
    with_ir: bool,
) -> Member<'a> {
    let l = &loaded[pos as usize];
    let ar = archives[pos as usize].as_ref().expect("archive parsed");
    let m = ar.member(member as usize).context(&l.name)?;
    let member_name = String::from_utf8_lossy(m.name);
    // A `--start-lib` object is named as itself, at its own place on the command line.
    let (name, order) = match l.kind {
        Kind::Object => (l.name.clone(), (pos, 0)),
        _ => (format!("{}({})", l.name, member_name), (pos, member + 1)),
    };
    let data: &'a [u8] = match m.data {
        Some(d) => {
            // The member's sections are read again when writing: start reading them now.
            if let Some(p) = prefetch {
                let offset = d.as_ptr() as u64 - l.file.data().as_ptr() as u64;
                p.request(&l.file, offset, d.len() as u64);
            }
            d
        }
        None => match l.thin_members.get(member as usize).and_then(|f| f.as_ref()) {
            Some(f) if f.data().len() == m.size => f.data(),
            Some(f) => {
                let size = f.data().len();
                return Err(fatal!("member file is {size} bytes but the archive says {}; was it changed?", m.size)
                    .context(name));
            }
            None => return Err(fatal!("thin archive member was not opened").context(name)),
        },
    };
    parse_input(l, data, name, order, l.kind == Kind::Archive, renames, with_ir)
}

/// Parses an object (a file or an archive member) for resolution; non-ELF archive members (an
/// rlib's `lib.rmeta`) give None. An object holding compiler IR goes to the LTO hook when there
/// is one (`with_ir`); without one, a fat object links with its code and any other is an error.
fn parse_input<'a>(
    l: &'a Loaded,
    data: &'a [u8],
    name: String,
    order: (u32, u32),
    member: bool,
    renames: &HashMap<&'a [u8], &'a [u8]>,
    with_ir: bool,
) -> Result<Option<Parsed<'a>>> {
    if object::is_bitcode(data) {
        if !with_ir {
            return Err(fatal!("{}", object::NEEDS_PLUGIN).context(name));
        }
        return Ok(Some(Parsed::Ir(IrInput { loaded: l, data, name, order, member, elf: None })));
    }
    if !object::is_elf(data) {
        return Ok(None);
    }
    // An archive member is named `lib.a(m.o)`; a `--start-lib` object by its own path.
    let archive_len = (member && name.len() > l.name.len() && name.starts_with(&l.name)).then_some(l.name.len());
    let obj = object::ObjectFile { archive_len, ..object::parse(data, name, order, &l.arena)? };
    Ok(Some(match obj.ir {
        None => Parsed::Object(prepare(obj, renames)),
        Some(_) if with_ir => {
            let name = obj.name.clone();
            Parsed::Ir(IrInput { loaded: l, data, name, order, member, elf: Some(obj) })
        }
        Some(object::Ir::Fat) => Parsed::Object(prepare(obj, renames)),
        Some(object::Ir::Slim) => return Err(fatal!("{}", object::NEEDS_PLUGIN).context(obj.name)),
    }))
}

/// File `f` of the resolution: `obj` when it is the one being added (`file`, not yet among
/// `objects`: an object may name a symbol twice, as a common and again).
fn object_of<'o, 'a>(
    objects: &'o IdVec<FileId, ObjectFile<'a>>,
    obj: &'o ObjectFile<'a>,
    file: FileId,
    f: FileId,
) -> &'o ObjectFile<'a> {
    if f == file {
        obj
    } else {
        &objects[f]
    }
}

/// The more constraining of two visibilities (STV_*): internal, hidden, protected, default.
pub fn merge_visibility(a: u8, b: u8) -> u8 {
    match (a, b) {
        (0, v) | (v, 0) => v,
        (a, b) => a.min(b),
    }
}

impl<'a> Resolver<'a, '_> {
    /// Queues member `member` of archive `pos` (once) and starts parsing it.
    fn enqueue(&mut self, pos: u32, member: u32) {
        self.enqueue_for(pos, member, None);
    }

    /// Queues a member, fetched because of symbol `why` (for `--why-extract`).
    fn enqueue_for(&mut self, pos: u32, member: u32, why: Option<SymbolId>) {
        let fetched = &mut self.fetched[pos as usize][member as usize];
        if !std::mem::replace(fetched, true) {
            let seq = self.queue.len() as u64;
            if let (Some(w), Some(id)) = (&mut self.why, why) {
                let referrer = w.first_referrer.get(&id).cloned().unwrap_or_else(|| "<internal>".to_string());
                w.by_seq.insert(seq, (referrer, self.symbols[id].name));
            }
            self.queue.push((pos, member));
            self.parsing.ask(pos, member);
        }
    }

    fn intern(&mut self, name: &'a [u8]) -> SymbolId {
        self.intern_hashed(name, crate::fx_hash(name))
    }

    fn intern_hashed(&mut self, name: &'a [u8], hash: u64) -> SymbolId {
        self.by_name.intern_hashed(&mut self.symbols, name, hash)
    }

    /// Prefetches what interning the `k`th of names hashed `hashes` and those after it will
    /// probe: the slots of the name 16 ahead, the symbol of the one 8 ahead, the name of the one
    /// 4 ahead. The probes' loads then overlap instead of each waiting for memory.
    #[inline]
    fn prefetch_interning(&self, hashes: &[u64], k: usize) {
        if let Some(&h) = hashes.get(k + 16) {
            self.by_name.prefetch_slot(h);
        }
        if let Some(&h) = hashes.get(k + 8) {
            self.by_name.prefetch_symbol(&self.symbols, h, false);
        }
        if let Some(&h) = hashes.get(k + 4) {
            self.by_name.prefetch_symbol(&self.symbols, h, true);
        }
    }

    fn add_archive(&mut self, pos: u32) {
        let Some(ar) = &self.archives[pos as usize] else {
            return;
        };
        if self.loaded[pos as usize].state.whole_archive && self.loaded[pos as usize].kind == Kind::Archive {
            for m in 0..ar.member_count() as u32 {
                self.enqueue(pos, m);
            }
            return;
        }
        let hashes = &self.archive_hashes[pos as usize];
        for (k, (&(name, member), &hash)) in ar.symbols.iter().zip(hashes).enumerate() {
            self.prefetch_interning(hashes, k);
            let id = self.intern_hashed(name, hash);
            let s = &mut self.symbols[id];
            if matches!(s.def, Def::Defined { .. }) {
                if let Some(b) = &mut self.backrefs {
                    b.cancelled.insert(id);
                }
            }
            // A common symbol fetches a member that defines the name for real (not as another
            // common), as GNU ld does: `int foo;` in one file and `int foo = 5;` in a library
            // mean the library's foo. Once per symbol: the definition is then on its way.
            if let Def::Common { .. } = s.def {
                if !self.common_fetched.contains(&id)
                    && ar
                        .member(member)
                        .is_ok_and(|m| m.data.is_some_and(|d| crate::input::archive::defines_outside_common(d, name)))
                {
                    self.common_fetched.insert(id);
                    self.enqueue_for(pos, member as u32, Some(id));
                }
                continue;
            }
            if s.def == Def::Undefined {
                // Lazy from now on, also when the member is fetched at once: its definition is on
                // its way, so a later index entry (this archive's or another's) for the same name
                // must not fetch a second member, as GNU ld and lld, which add a member as soon as
                // they fetch it, never do.
                s.def = Def::Lazy { archive: pos, member: member as u32 };
                if s.strong_ref || s.shared_ref {
                    self.enqueue_for(pos, member as u32, Some(id));
                }
            }
        }
    }

    /// `--warn-backrefs`: a reference from input `from` (named `referrer`) fetches `member` of
    /// the archive at `archive`; recorded when the archive's group comes before the referrer's
    /// (the first such reference to each symbol, as lld keeps it).
    fn note_backref(&mut self, id: SymbolId, from: u32, referrer: &str, archive: u32, member: u32) {
        let Some(b) = &mut self.backrefs else { return };
        let group = |pos: u32| self.loaded.get(pos as usize).map_or(0, |l| l.group);
        if group(archive) >= group(from) || b.at.contains_key(&id) || self.fetched[archive as usize][member as usize] {
            return;
        }
        b.at.insert(id, b.found.len());
        b.found.push((id, referrer.to_string(), archive, member));
    }

    /// lld's warnings for the backward references that stand: `backward reference detected: foo in
    /// b.o refers to liba.a(a.o)`, unless the member's name matches `--warn-backrefs-exclude`.
    fn report_backrefs(&mut self) {
        let Some(b) = self.backrefs.take() else { return };
        for (id, referrer, archive, member) in b.found {
            if b.cancelled.contains(&id) {
                continue;
            }
            let l = &self.loaded[archive as usize];
            let to = match (l.kind, &self.archives[archive as usize]) {
                (Kind::Archive, Some(ar)) => match ar.member(member as usize) {
                    Ok(m) => format!("{}({})", l.name, String::from_utf8_lossy(m.name)),
                    Err(_) => l.name.clone(),
                },
                _ => l.name.clone(),
            };
            if b.exclude.iter().any(|g| crate::input::version_script::glob_match(g.as_bytes(), to.as_bytes())) {
                continue;
            }
            let name = String::from_utf8_lossy(self.symbols[id].name);
            self.warnings.push(format!("backward reference detected: {name} in {referrer} refers to {to}"));
        }
    }

    /// An object's reference to a named version (`.symver foo, foo@V` on an undefined symbol: the
    /// name is `foo@V`) binds to the shared library definition of `foo` at version V, default or
    /// not, wherever the library stands on the command line (GNU ld and lld).
    fn bind_versioned_references(&mut self) {
        for s in &mut self.symbols {
            if s.def != Def::Undefined || !s.referenced {
                continue;
            }
            let Some((name, version, _)) = split_version(s.name) else { continue };
            let found = self.shared.iter_enumerated().find_map(|(file, lib)| {
                let sym = lib.file.defined.iter().position(|d| d.name == name && d.version == Some(version))?;
                Some((file, sym as u32, lib.file.defined[sym].weak))
            });
            if let Some((file, sym, weak)) = found {
                s.def = Def::Shared { file, sym };
                s.weak = weak;
            }
        }
    }

    /// A shared library's default-version definitions satisfy references that no object defines.
    /// Objects always win over shared libraries, and an archive symbol seen earlier stays lazy.
    fn add_shared(&mut self, pos: u32) {
        let l = &self.loaded[pos as usize];
        // Without a DT_SONAME, DT_NEEDED holds the name the library was found by: its file name
        // after a `-l` search, the path as written otherwise (`cc main.o out/b.so` needs `out/b.so`).
        let base = match l.searched {
            true => {
                std::path::Path::new(&l.name).file_name().map_or(l.name.clone(), |n| n.to_string_lossy().into_owned())
            }
            false => l.name.clone(),
        };
        let file = match shared::parse(l.file.data(), l.name.clone(), &base) {
            Ok(f) => f,
            Err(e) => return self.errors.push(e),
        };
        let index = self.shared.next_id();
        for (i, sym) in file.defined.iter().enumerate() {
            if sym.hidden {
                continue;
            }
            let id = self.intern(sym.name);
            if !self.traced.is_empty() && self.traced.contains(sym.name) {
                self.trace_lines.push(format!(
                    "{}: shared definition of {}",
                    l.name,
                    String::from_utf8_lossy(sym.name)
                ));
            }
            let s = &mut self.symbols[id];
            if s.def == Def::Undefined && s.visibility == elf::STV_DEFAULT {
                s.def = Def::Shared { file: index, sym: i as u32 };
                s.weak = sym.weak;
            }
        }
        for &(name, weak) in &file.undefined {
            if weak {
                continue;
            }
            let id = self.intern(name);
            if let Some(w) = &mut self.why {
                w.first_referrer.entry(id).or_insert_with(|| l.name.clone());
            }
            let s = &mut self.symbols[id];
            s.shared_ref = true;
            if let Def::Lazy { archive, member } = s.def {
                self.note_backref(id, pos, &l.name, archive, member);
                self.enqueue_for(archive, member, Some(id));
            }
        }
        if self.trace {
            println!("{}", l.name);
        }
        self.shared.push(SharedInput { file, as_needed: l.state.as_needed });
    }

    /// Adds the queued archive members in queue order, waiting for each one's parse; what they
    /// pull in joins the queue behind them.
    fn drain_queue(&mut self) {
        while self.added < self.queue.len() as u64 {
            let seq = self.added;
            self.added += 1;
            let (pos, member) = self.queue[seq as usize];
            let member = self.parsing.take(pos, member);
            match member {
                Ok(Some(parsed)) => {
                    if let Some(w) = &mut self.why {
                        if let Some((referrer, sym)) = w.by_seq.remove(&seq) {
                            w.rows.push((referrer, parsed.name().to_string(), sym));
                        }
                    }
                    self.add_parsed(parsed)
                }
                Ok(None) => {}
                Err(e) => self.errors.push(e),
            }
        }
    }

    fn add_parsed(&mut self, parsed: Parsed<'a>) {
        match parsed {
            Parsed::Object(p) => self.add_object(p),
            Parsed::Ir(ir) => {
                let hook = self.ir_hook.expect("IR inputs are kept only for a hook");
                match hook(ir) {
                    Ok(Some(obj)) => {
                        let p = prepare(obj, self.renames);
                        self.add_object(p)
                    }
                    Ok(None) => {}
                    Err(e) => self.errors.push(e),
                }
            }
        }
    }

    fn add_object(&mut self, (mut obj, globals, comdats): ParsedObject<'a>) {
        if self.trace {
            println!("{}", obj.name);
        }
        let file = self.objects.next_id();
        // Every global gets its id first, so that a group signed by one of them is claimed by the
        // id; then the groups, since a symbol in a dropped group is only a reference; then the
        // definitions and references.
        let mut ids = Vec::with_capacity(globals.len());
        // The names' hashes, for the groups they sign.
        let hashes: Vec<u64> = globals.iter().map(|p| p.as_ref().map_or(0, |p| p.hash)).collect();
        for (k, (i, p)) in (obj.first_global..obj.syms.len()).zip(globals).enumerate() {
            self.prefetch_interning(&hashes, k);
            match p.and_then(|p| self.intern_global(&obj, i, p)) {
                Ok((id, version)) => {
                    if version.is_some() {
                        self.symbols[id].version = version;
                    }
                    ids.push(Some(id));
                }
                Err(e) => {
                    self.errors.push(e);
                    ids.push(None);
                }
            }
        }
        self.claim_comdats(&mut obj, &comdats, &ids, &hashes, file);
        // Only `-r` writes the groups out again: a final link has no use for them once claimed
        // (178k of them in cxx-templates, 10 MB at the heap's peak).
        if !self.keep_groups {
            obj.comdats = Vec::new();
        }
        self.claim_linkonce(&mut obj, file);
        for (i, &id) in (obj.first_global..obj.syms.len()).zip(&ids) {
            if let Some(id) = id {
                self.add_symbol(&obj, file, i, id);
            }
        }
        // An object with a symbol that could not be read has failed the link: its ids are not
        // needed (the errors are reported instead).
        obj.global_ids = ids.into_iter().collect::<Option<Vec<_>>>().unwrap_or_default();
        self.objects.push(obj);
    }

    /// The first file to bring a COMDAT signature owns it; later copies are dropped whole.
    /// A signature is found through the id of the global symbol it names (`Signature::Global`:
    /// no lookup) or, failing that, by name.
    fn claim_comdats(
        &mut self,
        obj: &mut ObjectFile<'a>,
        signatures: &[Signature],
        ids: &[Option<SymbolId>],
        hashes: &[u64],
        file: FileId,
    ) {
        for (g, &how) in obj.comdats.iter().zip(signatures) {
            let owner = match how {
                Signature::Global(gi) if ids[gi as usize].is_some() => {
                    self.claim_by_id(ids[gi as usize].unwrap(), g.signature, hashes[gi as usize], file)
                }
                Signature::Global(_) => self.claim_by_name(g.signature, crate::fx_hash(g.signature), file),
                Signature::Named(hash) => self.claim_by_name(g.signature, hash, file),
            };
            if owner != file {
                for m in g.members {
                    obj.sections[m.get(LE) as usize].live = false;
                }
            }
        }
    }

    /// `.gnu.linkonce.NAME` sections: the first of each name is kept, later ones dropped (GNU
    /// ld). glibc < 2.32's i386 crti.o defines `__x86.get_pc_thunk.bx` in such a section, beside
    /// the COMDAT copies that other objects carry under another signature: as lld and mold do,
    /// that section (and its `__i686` spelling) is dropped outright, so that a COMDAT copy defines
    /// the symbol.
    fn claim_linkonce(&mut self, obj: &mut ObjectFile<'a>, file: FileId) {
        for i in 0..obj.sections.len() {
            if !obj.sections[i].live || !obj.sections[i].has(ObjSection::LINKONCE) {
                continue;
            }
            let name = obj.section_name(i);
            let thunk =
                matches!(name, b".gnu.linkonce.t.__x86.get_pc_thunk.bx" | b".gnu.linkonce.t.__i686.get_pc_thunk.bx");
            if thunk || *self.linkonce.entry(name).or_insert(file) != file {
                obj.sections[i].live = false;
            }
        }
    }

    /// The owner of the signature named by symbol `id` (`file` if it had none); `hash` is the
    /// name's `fx_hash`.
    fn claim_by_id(&mut self, id: SymbolId, signature: &'a [u8], hash: u64, file: FileId) -> FileId {
        // A signature first claimed before any symbol had its name is owned by name.
        if !self.comdat_named.is_empty() {
            if let Some(&owner) = self.comdat_named.get_hashed(signature, hash) {
                return owner;
            }
        }
        self.owner_by_id(id, file)
    }

    /// The owner kept by symbol id `id` (`file` if it had none).
    fn owner_by_id(&mut self, id: SymbolId, file: FileId) -> FileId {
        if self.comdat_owner.len() <= id.index() {
            self.comdat_owner.resize(self.symbols.len().max(id.index() + 1), None);
        }
        *self.comdat_owner[id].get_or_insert(file)
    }

    fn claim_by_name(&mut self, signature: &'a [u8], hash: u64, file: FileId) -> FileId {
        if let Some(&owner) = self.comdat_named.get_hashed(signature, hash) {
            return owner;
        }
        match self.by_name.get_hashed(&self.symbols, signature, hash) {
            Some(id) => self.owner_by_id(id, file),
            None => self.comdat_named.intern_hashed(signature, hash, file),
        }
    }

    /// Global symbol `i` of `obj`: its id (a new symbol if the name is new) and the default
    /// version an `@@` gives it.
    fn intern_global(
        &mut self,
        obj: &ObjectFile<'a>,
        i: usize,
        p: Prepared<'a>,
    ) -> Result<(SymbolId, Option<&'a [u8]>)> {
        let sym = &obj.syms[i];
        if sym.st_info >> 4 == elf::STB_LOCAL {
            let name = String::from_utf8_lossy(obj.sym_name(sym)?);
            return Err(fatal!("local symbol {name} appears among the global symbols").context(&obj.name));
        }
        Ok((self.intern_hashed(p.name, p.hash), p.default_version))
    }

    /// What global symbol `i` of `obj` (whose id is `id`) says of its symbol: a reference or a
    /// definition, resolved against what the symbol has so far.
    fn add_symbol(&mut self, obj: &ObjectFile<'a>, file: FileId, i: usize, id: SymbolId) {
        let sym = &obj.syms[i];
        let bind = sym.st_info >> 4;
        let shndx = sym.st_shndx.get(LE);
        let weak = bind == elf::STB_WEAK;
        let in_dropped_section = obj.sym_shndx(i).is_some_and(|sec| !obj.sections[sec as usize].live);
        let reference = shndx == elf::SHN_UNDEF || in_dropped_section;
        if !self.traced.is_empty() && self.traced.contains(self.symbols[id].name) {
            let what = match shndx {
                _ if reference => "reference to",
                elf::SHN_COMMON => "common definition of",
                _ => "definition of",
            };
            self.trace_lines.push(format!("{}: {what} {}", obj.name, String::from_utf8_lossy(self.symbols[id].name)));
        }
        if reference {
            if let Some(w) = &mut self.why {
                w.first_referrer.entry(id).or_insert_with(|| obj.name.clone());
            }
        }
        let s = &mut self.symbols[id];
        s.visibility = merge_visibility(s.visibility, sym.st_other & 3);
        // A shared library's definition cannot satisfy a hidden, internal or protected
        // reference: the name stays open for an object or archive member after it.
        if s.visibility != elf::STV_DEFAULT && matches!(s.def, Def::Shared { .. }) {
            s.def = Def::Undefined;
            s.weak = false;
        }
        if reference {
            s.referenced = true;
            if !weak {
                s.strong_ref = true;
                s.undefined_ref |= shndx == elf::SHN_UNDEF;
                if let Def::Lazy { archive, member } = s.def {
                    self.note_backref(id, obj.order.0, &obj.name, archive, member);
                    self.enqueue_for(archive, member, Some(id));
                }
            }
            return;
        }
        let new = if shndx == elf::SHN_COMMON {
            Def::Common { file, sym: i as u32 }
        } else {
            Def::Defined { file, sym: i as u32 }
        };
        match s.def {
            Def::Undefined | Def::Lazy { .. } | Def::Synthetic | Def::Shared { .. } => {
                s.def = new;
                s.weak = weak;
            }
            // --defsym and scripts are applied after resolution; nothing is absolute yet.
            Def::Absolute(_) | Def::Script(_) => {}
            Def::Common { file: cf, sym: cs } => match new {
                Def::Common { .. } => {
                    let old_size = object_of(&self.objects, obj, file, cf).syms[cs as usize].st_size.get(LE);
                    let new_size = sym.st_size.get(LE);
                    if new_size > old_size {
                        s.def = new;
                    }
                    if self.warn_common {
                        let (old, name) =
                            (&object_of(&self.objects, obj, file, cf).name, crate::diag::symbol_name(s.name));
                        self.warnings.push(match new_size.cmp(&old_size) {
                            std::cmp::Ordering::Greater => {
                                format!("{}: common of `{name}' overriding smaller common from {old}", obj.name)
                            }
                            std::cmp::Ordering::Less => {
                                format!("{}: common of `{name}' overridden by larger common from {old}", obj.name)
                            }
                            std::cmp::Ordering::Equal => {
                                format!("{} and {old}: multiple common symbols of `{name}'", obj.name)
                            }
                        });
                    }
                }
                // A strong definition overrides a common symbol (GNU ld and lld agree); a weak one does not.
                _ if !weak => {
                    s.def = new;
                    s.weak = false;
                    if self.warn_common {
                        let (old, name) =
                            (&object_of(&self.objects, obj, file, cf).name, crate::diag::symbol_name(s.name));
                        self.warnings
                            .push(format!("{}: definition of `{name}' overriding common from {old}", obj.name));
                    }
                }
                _ => {}
            },
            // `.symver foo, foo@@V` beside `foo` itself: one definition under two names that both
            // mean `foo` (GNU ld and lld link it; the default version stays V).
            Def::Defined { file: other, sym: prev }
                if other == file
                    && !matches!(new, Def::Common { .. })
                    && obj.sym_shndx(prev as usize) == obj.sym_shndx(i)
                    && obj.syms[prev as usize].st_value.get(LE) == sym.st_value.get(LE) => {}
            Def::Defined { file: other, .. } => {
                if self.warn_common && !s.weak && matches!(new, Def::Common { .. }) {
                    let (old, name) =
                        (&object_of(&self.objects, obj, file, other).name, crate::diag::symbol_name(s.name));
                    self.warnings.push(format!("{}: common of `{name}' overridden by definition from {old}", obj.name));
                }
                if s.weak && !weak {
                    s.def = new;
                    s.weak = false;
                } else if !s.weak && !weak && !matches!(new, Def::Common { .. }) {
                    self.duplicates.push((id, other, file, i as u32));
                }
            }
        }
    }

    /// `--undefined-glob`: every lazy symbol matching a pattern loads its member, as `-u` would
    /// (lld's rule; the archives' and `--start-lib` objects' symbols, after every input is read).
    fn undefined_globs(&mut self, globs: &[String]) {
        if globs.is_empty() {
            return;
        }
        let matches = |name: &[u8]| globs.iter().any(|g| crate::input::version_script::glob_match(g.as_bytes(), name));
        let fetch: Vec<(u32, u32)> = self
            .symbols
            .iter()
            .filter_map(|s| match s.def {
                Def::Lazy { archive, member } if matches(s.name) => Some((archive, member)),
                _ => None,
            })
            .collect();
        for (archive, member) in fetch {
            self.enqueue(archive, member);
        }
        self.drain_queue();
    }

    /// A symbol still lazy whose member was fetched was not defined by it (the archive's symbol
    /// table said otherwise): it is undefined, and reported as such when referenced.
    fn unlazy_fetched(&mut self) {
        let fetched = &self.fetched;
        self.symbols.par_iter_mut().with_min_len(4096).for_each(|s| {
            if let Def::Lazy { archive, member } = s.def {
                if fetched[archive as usize][member as usize] {
                    s.def = Def::Undefined;
                }
            }
        });
    }

    /// A hidden, internal or protected reference must bind inside the output: a shared library's
    /// definition cannot satisfy it, and the symbol stays undefined (GNU ld and lld refuse the
    /// link; a weak one resolves to zero).
    fn unbind_hidden_from_shared(&mut self) {
        self.symbols.par_iter_mut().with_min_len(4096).for_each(|s| {
            if matches!(s.def, Def::Shared { .. }) && s.visibility != elf::STV_DEFAULT {
                s.def = Def::Undefined;
                s.weak = false;
            }
        });
    }

    /// lld's message: each definition's place in the source (from DWARF, when the object has
    /// it) and in its object, the one that came first first.
    fn report_duplicates(&mut self) {
        if self.allow_multiple_definition || self.duplicates.is_empty() {
            return;
        }
        let (objects, symbols) = (&self.objects, &self.symbols);
        let owns = |f: FileId, i: usize| defines(objects, symbols, f, i);
        let places = crate::srcloc::Places::new(objects, &owns);
        for &(id, first, second, second_sym) in &self.duplicates {
            let s = &symbols[id];
            let name = crate::diag::symbol_name(s.name);
            // The first definition is the one resolution kept.
            let first_sym = match s.def {
                Def::Defined { file, sym } if file == first => sym as usize,
                _ => continue,
            };
            let at = |f: FileId, i: usize| {
                let obj = &objects[f];
                let sym = &obj.syms[i];
                obj.sym_shndx(i).map(|sec| places.describe(f, sec, sym.st_value.get(LE), s.name, 11))
            };
            let msg = match (at(first, first_sym), at(second, second_sym as usize)) {
                (Some(a), Some(b)) => format!("duplicate symbol: {name}\n>>> defined at {a}\n>>> defined at {b}"),
                // An absolute definition has no place in a section.
                _ => format!(
                    "duplicate symbol: {name}\n>>> defined in {}\n>>> defined in {}",
                    objects[first].name, objects[second].name
                ),
            };
            self.errors.push(Error::new(msg));
        }
    }
}

/// Whether global symbol `index` of object `file` is the definition resolution chose.
pub fn defines(
    objects: &IdVec<FileId, ObjectFile>,
    symbols: &IdVec<SymbolId, Symbol>,
    file: FileId,
    index: usize,
) -> bool {
    let obj = &objects[file];
    let Some(&id) = index.checked_sub(obj.first_global).and_then(|g| obj.global_ids.get(g)) else { return false };
    matches!(symbols[id].def, Def::Defined { file: f, sym } if f == file && sym as usize == index)
}

/// Names that must be resolved even if no object mentions them: the entry point, `-u`,
/// `--require-defined`.
pub fn root_symbols(config: &Config) -> Vec<String> {
    let mut roots = Vec::new();
    // A shared library has no entry point unless -e names one.
    let entry = config.entry.clone().or_else(|| (!config.shared).then(|| "_start".into()));
    if let Some(entry) = entry.filter(|e| crate::args::parse_number(e).is_none()) {
        roots.push(entry);
    }
    roots.extend(config.undefined.iter().cloned());
    // A --defsym alias needs its target: archive members defining it are loaded.
    roots.extend(config.defsym.iter().filter_map(|d| d.symbol.clone()));
    roots.extend(config.require_defined.iter().cloned());
    roots
}

/// `--wrap=SYM`'s renames of undefined references: `SYM` → `__wrap_SYM`, `__real_SYM` → `SYM`.
pub fn wrap_renames(config: &Config) -> Vec<(String, String)> {
    config.wrap.iter().flat_map(|w| [(w.clone(), format!("__wrap_{w}")), (format!("__real_{w}"), w.clone())]).collect()
}
