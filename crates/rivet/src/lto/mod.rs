//! Link-time optimisation through the linker plugin (`-plugin`, as gcc and clang pass it).
//!
//! Takes the loaded inputs and gives the resolution the rest of the link works on. Without a
//! plugin, or with one and no compiler IR among the inputs that resolution loads, that is the
//! plain resolution (the plugin is not even loaded). Otherwise, as mold does:
//!
//! 1. Resolution runs with a hook: every object or archive member it loads that holds IR (LLVM
//!    bitcode, an ELF object with `.gnu.lto_*` / `.llvm.lto` sections) is offered to the plugin
//!    (`claim_file`), serially and in the order files join the link. A claimed file joins the link
//!    as an object made of the symbols the plugin read (definitions, references, weak, common,
//!    COMDAT keys, visibility), so it pulls archive members in as any object does. An unclaimed
//!    fat object links with its machine code; an unclaimed archive member is left out.
//! 2. Each claimed file's symbols get their resolution (`LDPR_*`, reported through get_symbols)
//!    and the plugin compiles the IR (`all_symbols_read`: the "lto" phase), adding the objects it
//!    made and the libraries they need.
//! 3. Resolution runs again over the inputs with the objects the plugin made in place of the IR
//!    files (GNU ld's place: right after the first claimed file) and its libraries at the end.
//!
//! The plugin's `cleanup` (which removes its temporary objects) runs when the returned `PluginCleanup`
//! is dropped, at the end of the link, once the output is committed or the link has failed.
mod plugin;

use crate::args::{Config, InputArg, InputState};
use crate::ctx::OutputKind;
use crate::diag::{Diag, Error, Result};
use crate::fatal;
use crate::ids::FileId;
use crate::input::object::{ComdatGroup, Headers, Ir, ObjSection, ObjectFile};
use crate::input::version_script::{Matcher, Verdict};
use crate::input::Loaded;
use crate::resolve::{self, Def, IrInput, Resolution};
use crate::timing::Timer;
use object::elf;
use object::LittleEndian as LE;
use plugin::Resolution as R;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// The plugin's life in this link: its cleanup runs when this is dropped.
#[derive(Default)]
pub struct PluginCleanup {
    active: bool,
}

impl Drop for PluginCleanup {
    fn drop(&mut self) {
        if self.active {
            plugin::cleanup();
        }
    }
}

/// A file the plugin claimed in the first resolution.
struct Claimed {
    handle: usize,
    /// Its bytes' address: the same mapping in both resolutions, so it names the file there.
    data: usize,
    /// The address of the symbol table made for it: which object of the resolution it is.
    syms: usize,
    /// Its position on the command line.
    pos: u32,
}

/// The first resolution's hook: loads the plugin at the first IR input and offers it each one.
struct Claims<'c> {
    config: &'c Config,
    kind: OutputKind,
    loaded: std::cell::Cell<bool>,
    claimed: RefCell<Vec<Claimed>>,
    warnings: RefCell<Vec<String>>,
}

/// Resolves symbols, through the LTO plugin when `-plugin` names one and IR is among the inputs
/// (see the module's comment). Gives the inputs the resolution is over (`loaded`, or the second
/// resolution's list, kept in `relinked`), the resolution, and the guard that runs the plugin's cleanup.
#[allow(clippy::too_many_arguments)]
pub fn resolve<'a>(
    config: &'a Config,
    kind: OutputKind,
    loaded: &'a [Loaded],
    relinked: &'a mut Option<Vec<Loaded>>,
    roots: &'a [String],
    renames: &'a [(String, String)],
    prefetch: Option<&rivet_io::Prefetcher>,
    cache: &rivet_io::InputCache,
    timer: &Timer,
    diag: &Diag,
) -> Result<(&'a [Loaded], Resolution<'a>, PluginCleanup)> {
    let Some(path) = config.plugin.as_deref() else {
        let res = timer
            .phase("resolve symbols", || resolve::resolve(loaded, roots, renames, prefetch, timer, config))
            .map_err(|e| diag.fail(e))?;
        return Ok((loaded, res, PluginCleanup::default()));
    };
    // Checked now; loaded only when an input needs it (most links have no IR).
    if !Path::new(path).is_file() {
        return Err(fatal!("cannot load LTO plugin: no such file").context(path));
    }
    let claims =
        Claims { config, kind, loaded: Default::default(), claimed: Default::default(), warnings: Default::default() };
    let hook = |ir: IrInput<'a>| claims.claim(ir);
    let res = timer
        .phase("resolve symbols", || {
            resolve::resolve_with(loaded, roots, renames, prefetch, timer, config, Some(&hook))
        })
        .map_err(|e| diag.fail(e));
    for w in claims.warnings.take() {
        diag.warn(w);
    }
    let cleanup = PluginCleanup { active: claims.loaded.get() };
    let res = res?;
    let claimed = claims.claimed.take();
    if claimed.is_empty() {
        return Ok((loaded, res, cleanup));
    }
    let mut warnings = Vec::new();
    let added = timer.phase("lto", || {
        report_resolutions(config, kind, &res, &claimed, roots);
        drop(res);
        plugin::all_symbols_read(&mut warnings)
    });
    for w in warnings {
        diag.warn(w);
    }
    let added = added?;
    let inputs = relink_inputs(config, loaded, &claimed, added, cache, prefetch, timer).map_err(|e| diag.fail(e))?;
    let inputs: &'a [Loaded] = relinked.insert(inputs);
    // The second resolution leaves the claimed files out: the plugin's objects replace them.
    let skip: HashSet<usize> = claimed.iter().map(|c| c.data).collect();
    let hook = |ir: IrInput<'a>| match skip.contains(&(ir.data.as_ptr() as usize)) {
        true => Ok(None),
        false => unclaimed(ir),
    };
    let res = timer
        .phase("resolve after lto", || {
            resolve::resolve_with(inputs, roots, renames, prefetch, timer, config, Some(&hook))
        })
        .map_err(|e| diag.fail(e))?;
    Ok((inputs, res, cleanup))
}

/// What the plugin is told it generates code for.
fn output_type(kind: OutputKind) -> plugin::OutputType {
    match kind {
        OutputKind::Shared => plugin::OutputType::Shared,
        OutputKind::Pie | OutputKind::StaticPie => plugin::OutputType::Pie,
        OutputKind::Exec | OutputKind::Static => plugin::OutputType::Exec,
        OutputKind::Relocatable => plugin::OutputType::Rel,
    }
}

/// An IR input the plugin did not claim: a fat object links with its machine code, an archive
/// member is left out (as in mold: another compiler's IR nothing needs), anything else is an error.
fn unclaimed(ir: IrInput) -> Result<Option<ObjectFile>> {
    match ir.elf {
        Some(obj) if obj.ir == Some(Ir::Fat) => Ok(Some(obj)),
        _ if ir.member => Ok(None),
        _ => Err(fatal!(
            "not claimed by the LTO plugin: compiler IR the plugin cannot read (made by another compiler, or \
             another version of it?)"
        )
        .context(ir.name)),
    }
}

impl Claims<'_> {
    fn claim<'a>(&self, ir: IrInput<'a>) -> Result<Option<ObjectFile<'a>>> {
        let config = self.config;
        let mut warnings = self.warnings.borrow_mut();
        if !self.loaded.get() {
            let path = config.plugin.as_deref().expect("a plugin is named");
            let kind = output_type(self.kind);
            plugin::load(path, &config.plugin_opts, kind, &config.output, &config.wrap, &mut warnings)?;
            self.loaded.set(true);
        }
        let (path, offset) = where_is(ir.loaded, ir.data);
        let Some(claimed) = plugin::claim(&path, offset, ir.data, &mut warnings).map_err(|e| e.context(&ir.name))?
        else {
            return unclaimed(ir);
        };
        let obj = ir_object(&ir, &claimed.symbols).map_err(|e| e.context(&ir.name))?;
        self.claimed.borrow_mut().push(Claimed {
            handle: claimed.handle,
            data: ir.data.as_ptr() as usize,
            syms: obj.syms.as_ptr() as usize,
            pos: ir.order.0,
        });
        Ok(Some(obj))
    }
}

/// The file the plugin is to read for `data` and where in it: the archive and the member's offset
/// for an archive member, the member's own file for a thin archive's.
fn where_is(l: &Loaded, data: &[u8]) -> (PathBuf, u64) {
    let whole = l.file.data();
    let start = whole.as_ptr() as usize;
    let at = data.as_ptr() as usize;
    if at >= start && at + data.len() <= start + whole.len() {
        return (l.file.path().to_path_buf(), (at - start) as u64);
    }
    match l.thin_members.iter().flatten().find(|f| f.data().as_ptr() == data.as_ptr()) {
        Some(f) => (f.path().to_path_buf(), 0),
        None => (l.file.path().to_path_buf(), 0),
    }
}

/// The object a claimed file stands as in resolution: its symbols as an ELF symbol table (kept in
/// the input's arena), definitions in a section of their own, or in one section per COMDAT key
/// (so that a key another file brought first turns them into references, as in an object).
fn ir_object<'a>(ir: &IrInput<'a>, symbols: &[plugin::IrSymbol]) -> Result<ObjectFile<'a>> {
    use object::{U16, U32, U64};
    let arena = &ir.loaded.arena;
    let mut strtab = vec![0u8];
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut syms = vec![elf::Sym64::<LE> {
        st_name: U32::new(LE, 0),
        st_info: 0,
        st_other: 0,
        st_shndx: U16::new(LE, 0),
        st_value: U64::new(LE, 0),
        st_size: U64::new(LE, 0),
    }];
    for s in symbols {
        let name = strtab.len() as u32;
        strtab.extend_from_slice(&s.name);
        strtab.push(0);
        let shndx = match s.def {
            plugin::LDPK_UNDEF | plugin::LDPK_WEAKUNDEF => elf::SHN_UNDEF,
            plugin::LDPK_COMMON => elf::SHN_COMMON,
            _ => match &s.comdat_key {
                Some(key) => {
                    let k = keys.iter().position(|k| *k == key.as_slice()).unwrap_or_else(|| {
                        keys.push(key);
                        keys.len() - 1
                    });
                    // Past the ordinary section indices (SHN_LORESERVE on), an index means
                    // something else (SHN_ABS, SHN_COMMON, ...).
                    if k + 2 >= elf::SHN_LORESERVE as usize {
                        return Err(fatal!(
                            "the LTO plugin's symbols name more COMDAT groups than an object can hold ({})",
                            elf::SHN_LORESERVE - 2
                        ));
                    }
                    (k + 2) as u16
                }
                None => 1,
            },
        };
        let bind = match s.def {
            plugin::LDPK_WEAKDEF | plugin::LDPK_WEAKUNDEF => elf::STB_WEAK,
            _ => elf::STB_GLOBAL,
        };
        let kind = match s.symbol_type {
            plugin::LDST_FUNCTION => elf::STT_FUNC,
            plugin::LDST_VARIABLE => elf::STT_OBJECT,
            _ if s.def == plugin::LDPK_COMMON => elf::STT_OBJECT,
            _ => elf::STT_NOTYPE,
        };
        syms.push(elf::Sym64 {
            st_name: U32::new(LE, name),
            st_info: (bind << 4) | kind,
            st_other: s.visibility,
            st_shndx: U16::new(LE, shndx),
            st_value: U64::new(LE, if s.def == plugin::LDPK_COMMON { 1 } else { 0 }),
            st_size: U64::new(LE, s.size),
        });
    }
    let syms_bytes = arena.keep(object::pod::bytes_of_slice(&syms).to_vec());
    let syms: &'a [elf::Sym64<LE>] =
        object::pod::slice_from_all_bytes(syms_bytes).expect("symbols are unaligned plain data");
    let strtab = arena.keep(strtab);
    // The stand-in has no section headers: every section's name is in `renamed`.
    let section = || ObjSection {
        sh_type: elf::SHT_PROGBITS,
        flags: 0,
        align_log2: 0,
        size: 0,
        data: &[],
        relas: &[],
        live: true,
        out: None,
        merge_index: None,
        name_len: 0,
        marks: 0,
    };
    let mut sections = vec![section(), section()];
    let mut renamed: Vec<(u32, &'a [u8])> = vec![(0, b""), (1, b".lto.ir")];
    sections[0].live = false;
    let mut comdats = Vec::with_capacity(keys.len());
    for (k, key) in keys.iter().enumerate() {
        renamed.push((sections.len() as u32, b".lto.ir.comdat"));
        sections.push(section());
        let member = arena.keep(((k + 2) as u32).to_le_bytes().to_vec());
        let members: &'a [U32<LE>] = object::pod::slice_from_all_bytes(member).expect("plain data");
        // The IR object has no group sections: the key stands for the group.
        comdats.push(ComdatGroup { section: 0, signature: arena.keep(key.to_vec()), signature_sym: 0, members });
    }
    Ok(ObjectFile {
        name: ir.name.clone(),
        archive_len: None,
        order: ir.order,
        sections,
        headers: Headers { headers: &[], names: &[], renamed },
        folds: Vec::new(),
        syms,
        strtab: object::read::StringTable::new(strtab, 0, strtab.len() as u64),
        symtab: Default::default(),
        first_global: 1,
        comdats,
        global_ids: Vec::new(),
        ir: None,
        reversed: Vec::new(),
        machine: 0,
    })
}

/// Works out each claimed file's `LDPR_*` resolutions from the first resolution and hands them to
/// the plugin. A definition prevails or was preempted (by an IR or a regular file); a prevailing
/// one is IR-only unless a regular object, a shared library or the command line (`-e`, `-u`,
/// `--defsym`, `--wrap`) refers to it, or it is exported (a shared library's, `-E`, dynamic lists,
/// `--export-dynamic-symbol`, a name a shared library defines too), which the plugin must keep.
fn report_resolutions(config: &Config, kind: OutputKind, res: &Resolution, claimed: &[Claimed], roots: &[String]) {
    let by_syms: HashMap<usize, usize> = claimed.iter().enumerate().map(|(i, c)| (c.syms, i)).collect();
    let ir_file: Vec<Option<usize>> =
        res.objects.iter().map(|o| by_syms.get(&(o.syms.as_ptr() as usize)).copied()).collect();
    let is_ir = |f: FileId| ir_file[f.index()].is_some();
    // Symbols a regular object names (defines or refers to).
    let mut regular = vec![false; res.symbols.len()];
    for (f, o) in res.objects.iter_enumerated() {
        if !is_ir(f) {
            for id in &o.global_ids {
                regular[id.index()] = true;
            }
        }
    }
    let wrapped = config.wrap.iter().flat_map(|w| [w.clone(), format!("__wrap_{w}"), format!("__real_{w}")]);
    let defsyms = config.defsym.iter().map(|d| d.name.clone());
    let named: Vec<String> = roots.iter().cloned().chain(wrapped).chain(defsyms).collect();
    for name in &named {
        if let Some(id) = res.by_name.get(&res.symbols, name.as_bytes()) {
            regular[id.index()] = true;
        }
    }
    for (id, s) in res.symbols.iter_enumerated() {
        // A shared library's reference keeps a definition it can see (not a hidden one).
        if s.shared_ref && !s.is_hidden() {
            regular[id.index()] = true;
        }
    }
    let exports = Exports::new(config, kind, res);
    let defsym_names: HashSet<&[u8]> = config.defsym.iter().map(|d| d.name.as_bytes()).collect();
    for (f, o) in res.objects.iter_enumerated() {
        let Some(c) = ir_file[f.index()] else { continue };
        let mut out = Vec::with_capacity(o.global_ids.len());
        for (i, &id) in o.global_ids.iter().enumerate() {
            let sym = &o.syms[i + 1];
            let s = &res.symbols[id];
            let r = if sym.st_shndx.get(LE) != elf::SHN_UNDEF {
                match s.def {
                    Def::Defined { file, sym } | Def::Common { file, sym } if file == f && sym as usize == i + 1 => {
                        match (regular[id.index()], exports.exported(s)) {
                            (true, _) => R::PrevailingDef,
                            (false, true) => R::PrevailingDefIronlyExp,
                            (false, false) => R::PrevailingDefIronly,
                        }
                    }
                    Def::Defined { file, .. } | Def::Common { file, .. } if is_ir(file) => R::PreemptedIr,
                    _ => R::PreemptedReg,
                }
            } else {
                // A reference --wrap renamed binds to the wrapper, which is no IR symbol of its name.
                let renamed = o.sym_name(sym).is_ok_and(|n| n != s.name);
                match s.def {
                    Def::Undefined | Def::Lazy { .. } if defsym_names.contains(s.name) => R::ResolvedExec,
                    Def::Undefined | Def::Lazy { .. } => R::Undef,
                    Def::Defined { file, .. } | Def::Common { file, .. } if is_ir(file) && !renamed => R::ResolvedIr,
                    Def::Defined { .. } | Def::Common { .. } | Def::Synthetic | Def::Absolute(_) | Def::Script(_) => {
                        R::ResolvedExec
                    }
                    Def::Shared { .. } => R::ResolvedDyn,
                }
            };
            out.push(r);
        }
        plugin::set_resolutions(claimed[c].handle, out);
    }
}

/// Which prevailing IR definitions the output exports (the plugin must keep them, though no
/// regular object refers to them).
struct Exports<'r> {
    kind: OutputKind,
    export_dynamic: bool,
    /// Version scripts (what they make local is not exported).
    scripts: Matcher,
    /// Dynamic lists and --export-dynamic-symbol(-list).
    lists: Matcher,
    /// `--dynamic-list-data`: which IR symbols are data is not known here, so none is internalized.
    list_data: bool,
    /// Names shared libraries define: an executable exports its own definition of one.
    shared: HashSet<&'r [u8]>,
}

impl<'r> Exports<'r> {
    fn new(config: &Config, kind: OutputKind, res: &'r Resolution) -> Exports<'r> {
        // Unreadable scripts are reported when the link applies them; here they only say less.
        let read = |paths: &[PathBuf]| {
            crate::symbol_options::read_version_nodes(paths, &config.lib_paths, "version script")
                .unwrap_or(Matcher { nodes: Vec::new() })
        };
        let mut lists = read(&config.dynamic_lists);
        lists.nodes.extend(read(&config.export_dynamic_symbol_lists).nodes);
        let pattern = |text: &String| crate::input::version_script::Pattern { text: text.clone(), cxx: false };
        lists.nodes.push(crate::input::version_script::VersionNode {
            global: config.export_dynamic_symbols.iter().map(pattern).collect(),
            ..Default::default()
        });
        let shared = match kind.is_dynamic() {
            true => {
                res.shared.iter().flat_map(|l| l.file.defined.iter().filter(|d| !d.hidden).map(|d| d.name)).collect()
            }
            false => HashSet::default(),
        };
        let (export_dynamic, list_data) = (config.export_dynamic, config.dynamic_list_data);
        Exports { kind, export_dynamic, scripts: read(&config.version_scripts), lists, list_data, shared }
    }

    fn exported(&self, s: &resolve::Symbol) -> bool {
        if s.is_hidden() || !self.kind.is_dynamic() {
            return false;
        }
        match self.kind {
            OutputKind::Shared => !matches!(self.scripts.verdict(s.name), Verdict::Local),
            _ => {
                self.export_dynamic
                    || self.list_data
                    || matches!(self.lists.verdict(s.name), Verdict::Global(_))
                    || self.shared.contains(s.name)
            }
        }
    }
}

/// The second resolution's inputs: the command line's, the plugin's objects right after the first
/// claimed file (where GNU ld puts them), then the libraries the plugin asked for that the command
/// line did not already bring.
fn relink_inputs(
    config: &Config,
    loaded: &[Loaded],
    claimed: &[Claimed],
    added: plugin::Added,
    cache: &rivet_io::InputCache,
    prefetch: Option<&rivet_io::Prefetcher>,
    timer: &Timer,
) -> Result<Vec<Loaded>, Vec<Error>> {
    let first = claimed.iter().map(|c| c.pos).min().unwrap_or(0) as usize;
    let mut objects = config.clone();
    objects.inputs =
        added.files.into_iter().map(|path| InputArg::File { path, state: InputState::default() }).collect();
    // The plugin names object files and libraries, never linker scripts: only the inputs count.
    let (mut objects, _, _) = crate::input::load(&objects, cache, prefetch, timer)?;
    let mut libraries = config.clone();
    libraries.lib_paths.extend(added.library_paths);
    let state = InputState { static_only: config.static_link, ..Default::default() };
    libraries.inputs = added.libraries.into_iter().map(|name| InputArg::Library { name, state }).collect();
    let (libraries, _, _) = crate::input::load(&libraries, cache, prefetch, timer)?;
    let mut out = Vec::with_capacity(loaded.len() + objects.len() + libraries.len());
    for (pos, l) in loaded.iter().enumerate() {
        out.push(Loaded {
            file: l.file.clone(),
            name: l.name.clone(),
            kind: l.kind,
            state: l.state,
            thin_members: l.thin_members.clone(),
            arena: Default::default(),
            searched: l.searched,
            group: l.group,
        });
        if pos == first {
            // The plugin's objects stand where the first IR input stood.
            for o in &mut objects {
                o.group = l.group;
            }
            out.append(&mut objects);
        }
    }
    // The libraries the plugin adds come after every input, in a group after every group.
    let after_all = out.iter().map(|o| o.group).max().map_or(0, |g| g + 1);
    for mut l in libraries {
        l.group = after_all;
        if !out.iter().any(|o| std::sync::Arc::ptr_eq(&o.file, &l.file)) {
            out.push(l);
        }
    }
    Ok(out)
}

/// The objects the plugin made (in the second resolution's inputs but not among the command
/// line's): temporary files, no dependency of the output.
pub fn generated<'a>(loaded: &[Loaded], linked: &'a [Loaded]) -> Vec<&'a std::path::Path> {
    linked
        .iter()
        .filter(|l| l.kind == crate::input::Kind::Object)
        .filter(|l| !loaded.iter().any(|o| std::sync::Arc::ptr_eq(&o.file, &l.file)))
        .map(|l| l.file.path())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_types() {
        assert_eq!(output_type(OutputKind::Shared), plugin::OutputType::Shared);
        assert_eq!(output_type(OutputKind::StaticPie), plugin::OutputType::Pie);
        assert_eq!(output_type(OutputKind::Static), plugin::OutputType::Exec);
    }
}
