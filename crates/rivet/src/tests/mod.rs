//! Unit tests of single stages, driven through their Rust API. Each test compiles a few tiny C or
//! assembly files (`cc -c`, `ar rcs`, `cc -shared`) into a directory of its own, parses a command
//! line with `args::parse` and opens the inputs with `input::load`, as the linker does; then it
//! calls the stages in the order `link.rs` calls them, up to the one under test, and checks what
//! that stage gives. (The integration tests in `tests/` run the `rivet` binary instead.)
mod icf;
mod resolution;
mod symtab;

use crate::args::Config;
use crate::ctx::{Ctx, OutputKind, Resolved};
use crate::diag::Diag;
use crate::ids::{FileId, IdVec, SectionRef, SymbolId};
use crate::input::object::ObjectFile;
use crate::input::Loaded;
use crate::resolve::{Def, Resolution, Symbol, SymbolIndex};
use object::LittleEndian as LE;
use std::path::PathBuf;
use std::process::Command;

/// A directory for one test's files, removed when the test ends (also when it fails).
pub(crate) struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    pub fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("rivet-unit-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch { dir }
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// Compiles `source` (C for a `.c` name, assembly for `.s`) with `cc -c` and `flags`; gives the
    /// object's path.
    pub fn cc(&self, name: &str, source: &str, flags: &[&str]) -> String {
        let src = self.dir.join(name);
        std::fs::write(&src, source).unwrap();
        let obj = src.with_extension("o");
        run(Command::new("cc").arg("-c").args(flags).arg(&src).arg("-o").arg(&obj));
        obj.display().to_string()
    }

    /// `ar rcs NAME MEMBERS...` (members by path); gives the archive's path.
    pub fn ar(&self, name: &str, members: &[&str]) -> String {
        let out = self.path(name);
        run(Command::new("ar").arg("rcs").arg(&out).args(members));
        out
    }

    /// A shared library `name` built from C `source` (`cc -shared -fPIC`); gives its path.
    pub fn shared(&self, name: &str, source: &str) -> String {
        let src = self.dir.join(name).with_extension("c");
        std::fs::write(&src, source).unwrap();
        let out = self.path(name);
        run(Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&out).arg(&src));
        out
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// A command line parsed and its inputs opened: what `link::link` has before resolution.
pub(crate) struct Inputs {
    pub config: Config,
    pub loaded: Vec<Loaded>,
    pub diag: Diag,
    pub kind: OutputKind,
    roots: Vec<String>,
    renames: Vec<(String, String)>,
}

impl Inputs {
    /// `args` is the command line after the program name.
    pub fn new<S: AsRef<str>>(args: &[S]) -> Inputs {
        let args = args.iter().map(|a| a.as_ref().into()).collect();
        let config = crate::args::parse(args).expect("command line parses");
        let cache = rivet_io::InputCache::new();
        let timer = crate::timing::Timer::new();
        let (loaded, _, _) = crate::input::load(&config, &cache, None, &timer).expect("inputs load");
        // As link.rs: the output kind once the inputs are known, the names resolved even if no
        // object mentions them, and the --wrap renames.
        let kind = OutputKind::from_config(&config).expect("output kind");
        let kind = kind.for_inputs(&config, &loaded).expect("output kind for the inputs");
        let roots = crate::resolve::root_symbols(&config);
        let renames = crate::resolve::wrap_renames(&config);
        Inputs { config, loaded, diag: Diag::quiet(), kind, roots, renames }
    }

    /// Symbol resolution (`resolve::resolve`) over the inputs.
    pub fn resolve(&self) -> Result<Resolution<'_>, Vec<String>> {
        let timer = crate::timing::Timer::new();
        crate::resolve::resolve(&self.loaded, &self.roots, &self.renames, None, &timer, &self.config)
            .map_err(|errors| errors.iter().map(|e| e.to_string()).collect())
    }

    /// The link's state as identical code folding finds it: resolved, the command line's symbol
    /// options applied, and sections collected when `--gc-sections` asks.
    pub fn ctx(&self) -> Resolved<'_> {
        let mut res = self.resolve().unwrap_or_else(|e| panic!("resolution failed: {e:?}"));
        let defsym_offsets = crate::symbol_options::apply_defsyms(&self.config, &mut res).expect("--defsym");
        crate::symbol_options::exclude_libs(&self.config, &self.loaded, &mut res);
        let mut ctx = Resolved::new(&self.config, &self.diag, self.kind, res, defsym_offsets, &[], Vec::new());
        crate::symbol_options::apply_version_scripts(&mut ctx).expect("version scripts");
        crate::symbol_options::apply_dynamic_lists(&mut ctx).expect("dynamic lists");
        if self.config.gc_sections {
            let mut roots = self.roots.clone();
            if self.kind == OutputKind::Shared || self.config.export_dynamic {
                roots.extend(crate::symbol_options::exported_names(&ctx));
            } else if self.kind.is_dynamic() {
                roots.extend(crate::synthetic::dynamic::export_roots(&ctx));
            }
            crate::sections::gc::collect(&mut ctx, &roots, &[]);
        }
        ctx
    }

    /// `ctx` after output sections are formed (and, with `--icf`, identical code folded first),
    /// the linker-defined symbols defined: what the `.symtab` planner looks at.
    pub fn ctx_with_output_sections(&self) -> Ctx<'_> {
        let mut ctx = self.ctx();
        if self.config.icf != crate::args::Icf::None {
            crate::sections::icf::fold::<crate::arch::x86_64::X86_64>(
                &mut ctx,
                self.config.icf == crate::args::Icf::Safe,
            );
        }
        let strip_debug = self.config.strip != crate::args::Strip::None;
        let sections = crate::sections::output::build(
            &mut ctx.objects,
            &ctx.file_order,
            strip_debug,
            self.config.sort_section,
            false,
            &Default::default(),
        )
        .unwrap();
        crate::layout::define_reserved_symbols(&mut ctx, &sections);
        Ctx::new(ctx, sections, Default::default(), Default::default(), Default::default())
    }
}

/// The object whose name ends with `suffix` (`b.o`, `libx.a(m.o)`); exactly one must.
pub(crate) fn file(objects: &IdVec<FileId, ObjectFile>, suffix: &str) -> FileId {
    let found: Vec<FileId> = objects.ids().filter(|&f| objects[f].name.ends_with(suffix)).collect();
    assert_eq!(found.len(), 1, "objects named *{suffix} among {:?}", names(objects));
    found[0]
}

pub(crate) fn names(objects: &IdVec<FileId, ObjectFile>) -> Vec<String> {
    objects.iter().map(|o| o.name.clone()).collect()
}

/// The index in `obj`'s symbol table of its symbol `name` (the first, locals included).
pub(crate) fn sym_index(obj: &ObjectFile, name: &str) -> u32 {
    (0..obj.syms.len())
        .find(|&i| obj.sym_name(&obj.syms[i]).ok() == Some(name.as_bytes()))
        .unwrap_or_else(|| panic!("{} has no symbol {name}", obj.name)) as u32
}

/// The index of `obj`'s section `name`.
pub(crate) fn section(obj: &ObjectFile, name: &str) -> u32 {
    (0..obj.sections.len())
        .position(|i| obj.section_name(i) == name.as_bytes())
        .unwrap_or_else(|| panic!("{} has no section {name}", obj.name)) as u32
}

/// Section `name` of the object whose name ends with `suffix`.
pub(crate) fn section_ref(objects: &IdVec<FileId, ObjectFile>, suffix: &str, name: &str) -> SectionRef {
    let f = file(objects, suffix);
    SectionRef::new(f, section(&objects[f], name))
}

/// The definition resolution must give `name` when object `*suffix` defines it.
pub(crate) fn defined_in(objects: &IdVec<FileId, ObjectFile>, suffix: &str, name: &str) -> Def {
    let f = file(objects, suffix);
    Def::Defined { file: f, sym: sym_index(&objects[f], name) }
}

/// The global symbol `name`.
pub(crate) fn id(symbols: &IdVec<SymbolId, Symbol>, by_name: &SymbolIndex, name: &str) -> SymbolId {
    by_name.get(symbols, name.as_bytes()).unwrap_or_else(|| panic!("no global symbol {name}"))
}

pub(crate) fn symbol<'s, 'a>(
    symbols: &'s IdVec<SymbolId, Symbol<'a>>,
    by_name: &SymbolIndex,
    name: &str,
) -> &'s Symbol<'a> {
    &symbols[id(symbols, by_name, name)]
}

/// The global symbol that object `*suffix`'s own symbol `name` (a reference or a definition)
/// was bound to.
pub(crate) fn bound_to(objects: &IdVec<FileId, ObjectFile>, suffix: &str, name: &str) -> SymbolId {
    let obj = &objects[file(objects, suffix)];
    let i = sym_index(obj, name) as usize;
    assert!(i >= obj.first_global, "{name} is local in {}", obj.name);
    obj.global_ids[i - obj.first_global]
}

/// The `st_shndx` of `obj`'s symbol `name` (`SHN_COMMON` for a common symbol).
pub(crate) fn st_shndx(obj: &ObjectFile, name: &str) -> u16 {
    obj.syms[sym_index(obj, name) as usize].st_shndx.get(LE)
}
