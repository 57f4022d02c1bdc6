//! The link, as a pipeline: one call per stage, each timed, each handing the next a plain data
//! structure. Errors stop the pipeline before the output file is created, so a failed link never
//! touches an existing output.
use crate::args::{Config, Icf, Strip};
use crate::ctx::{Ctx, DefsymOffset, OutputKind};
use crate::diag::{Diag, Result};
use crate::input::{self, object::NO_OUTPUT};
use crate::resolve::{self, Def};
use crate::sections::{compress, eh_frame, output};
use crate::synthetic::symtab;
use crate::timing::Timer;
use crate::{arch, fatal, layout, write};
use rivet_io::{InputCache, OutputFile, OutputMode};

/// What the link did, for the reports.
pub struct LinkReport {
    pub output_size: u64,
    pub mode: OutputMode,
    pub mode_reason: String,
    pub copy_method: rivet_io::CopyMethod,
    pub copy_reason: String,
    /// What the in-kernel copies did (zero with memcpy).
    pub copy: write::CopyStats,
    pub prefetch_reason: String,
    pub prefetch: Option<rivet_io::PrefetchStats>,
    /// The output directory's file system, as the report shows it.
    pub output_fs: String,
    /// (bytes of all inputs, bytes of them mapped).
    pub input_bytes: (u64, u64),
    /// I/O counters over the whole link.
    pub io: rivet_io::stats::IoSnapshot,
    pub commit: rivet_io::CommitReport,
    pub inputs: usize,
    pub objects: usize,
    /// `--stats`: (what, count) pairs.
    pub stats: Vec<(&'static str, u64)>,
}

fn output_kind(config: &Config) -> Result<OutputKind> {
    Ok(match (config.shared, config.static_link, config.pie) {
        (true, true, _) => return Err(fatal!("-shared and -static cannot be combined")),
        (true, false, _) => OutputKind::Shared,
        (false, true, true) => OutputKind::StaticPie,
        (false, true, false) => OutputKind::Static,
        (false, false, true) => OutputKind::Pie,
        (false, false, false) => OutputKind::Exec,
    })
}

/// Names that must be resolved even if no object mentions them: the entry point, `-u`,
/// `--require-defined`.
fn root_symbols(config: &Config) -> Vec<String> {
    let mut roots = Vec::new();
    // A shared library has no entry point unless -e names one.
    let entry = config.entry.clone().or_else(|| (!config.shared).then(|| "_start".into()));
    if let Some(entry) = entry.filter(|e| crate::args::parse_number(e).is_none()) {
        roots.push(entry);
    }
    roots.extend(config.undefined.iter().cloned());
    // A --defsym alias needs its target: archive members defining it are loaded.
    roots.extend(config.defsym.iter().filter_map(|(_, e)| crate::defsym::parse(e).ok()?.symbol.map(str::to_string)));
    roots.extend(config.require_defined.iter().cloned());
    roots
}

fn report_all(diag: &Diag, errors: Vec<String>) -> crate::diag::LinkError {
    for e in errors {
        diag.error(e);
    }
    match diag.check() {
        Err(e) => e,
        Ok(()) => fatal!("link failed"),
    }
}

/// Options the command line accepts (they have a meaning rivet will implement) but this version
/// does not implement yet: refusing them is honest; ignoring them would link something else than
/// the user asked for.
fn reject_unimplemented(config: &Config) -> Result<()> {
    let mut missing: Vec<&str> = Vec::new();
    let mut check = |set: bool, name: &'static str| {
        if set {
            missing.push(name);
        }
    };
    // Both need the libraries' own dependencies loaded, which rivet does not do yet.
    check(!config.rpath_link.is_empty(), "-rpath-link");
    check(config.allow_shlib_undefined == Some(false), "--no-allow-shlib-undefined");
    match missing.as_slice() {
        [] => Ok(()),
        list => Err(fatal!("not supported yet: {}", list.join(", "))),
    }
}

pub fn link(config: &Config, timer: &Timer, diag: &Diag) -> Result<LinkReport> {
    reject_unimplemented(config)?;
    let kind = output_kind(config)?;
    let io_start = rivet_io::stats::snapshot();
    let memory = rivet_io::fsinfo::memory();
    let cache = InputCache::new();
    // Ask the kernel to read inputs ahead from a background thread as soon as they are known.
    let prefetch_choice = rivet_io::policy::choose_prefetch(config.prefetch_inputs, &memory);
    let prefetcher = prefetch_choice.enabled.then(|| rivet_io::Prefetcher::start(prefetch_choice.budget));
    // Open and map every input named on the command line (and in linker-script stubs).
    let loaded = timer
        .phase("open inputs", || input::load(config, &cache, prefetcher.as_ref(), timer))
        .map_err(|e| report_all(diag, e))?;
    if let Some(p) = &prefetcher {
        p.flush();
    }
    refuse_output_as_input(config, &cache)?;
    // A fixed-address executable that links no shared library and exports nothing needs no
    // dynamic section, interpreter or dynamic symbols: GNU ld and lld make it static.
    let kind = match kind {
        OutputKind::Exec
            if !loaded.iter().any(|l| l.kind == input::Kind::Shared)
                && !config.export_dynamic
                && config.dynamic_lists.is_empty() =>
        {
            OutputKind::Static
        }
        kind => kind,
    };
    if !kind.is_dynamic() {
        // As GNU ld: a shared library cannot be part of a static output.
        let shared: Vec<String> = loaded
            .iter()
            .filter(|l| l.kind == input::Kind::Shared)
            .map(|l| format!("attempted static link of dynamic object {}", l.name))
            .collect();
        if !shared.is_empty() {
            return Err(report_all(diag, shared));
        }
    }
    // Like lld, write the reproduce archive before linking, so a failing link can be replayed too.
    if config.reproduce.is_some() {
        let files: Vec<_> = cache.files();
        let inputs: Vec<_> = files.iter().map(|f| (f.path().to_path_buf(), f.data())).collect();
        timer
            .phase("reproduce", || crate::reproduce::write(config, &inputs))
            .map_err(|e| fatal!("cannot write {}: {e}", config.reproduce.as_ref().unwrap().display()))?;
    }
    // Resolve symbols, pulling archive members in as references need them.
    let roots = root_symbols(config);
    let renames: Vec<(String, String)> = config
        .wrap
        .iter()
        .flat_map(|w| [(w.clone(), format!("__wrap_{w}")), (format!("__real_{w}"), w.clone())])
        .collect();
    let res = timer
        .phase("resolve symbols", || {
            resolve::resolve(&loaded, &roots, &renames, prefetcher.as_ref(), timer, config.allow_multiple_definition)
        })
        .map_err(|e| report_all(diag, e))?;
    // The archive members resolution picked are read again when writing.
    if let Some(p) = &prefetcher {
        p.flush();
    }
    let mut res = res;
    let defsym_offsets = apply_defsyms(config, &mut res)?;
    exclude_libs(config, &loaded, &mut res);
    let mut ctx = new_ctx(config, diag, kind, res);
    ctx.defsym_offsets = defsym_offsets;
    // Version scripts decide what is exported and at which version, before anything depends on it.
    timer.phase("version scripts", || apply_version_scripts(&mut ctx).and_then(|()| apply_dynamic_lists(&mut ctx)))?;
    // Drop sections nothing reaches (--gc-sections), before anything is sized. What a shared
    // library or an -E executable exports is reachable from outside.
    let mut roots = roots.clone();
    if kind == OutputKind::Shared || config.export_dynamic {
        roots.extend(exported_names(&ctx));
    } else if kind.is_dynamic() {
        roots.extend(crate::synthetic::dynamic::export_roots(&ctx));
    }
    if config.gc_sections {
        let dropped = timer.phase("gc sections", || crate::sections::gc::collect(&mut ctx, &roots));
        if config.print_gc_sections {
            for (f, s) in dropped {
                let obj = &ctx.objects[f as usize];
                eprintln!(
                    "rivet: removing unused section '{}' in file '{}'",
                    String::from_utf8_lossy(obj.sections[s as usize].name),
                    obj.name
                );
            }
        }
    }
    // Fold identical code (--icf=all|safe) before anything is laid out or split.
    if config.icf != Icf::None {
        let folds = timer.phase("icf", || crate::sections::icf::fold(&mut ctx, config.icf == Icf::Safe));
        // On stderr, as --print-gc-sections (lld writes both to stdout).
        if config.print_icf_sections {
            eprint!("{}", crate::sections::icf::report(&ctx, &folds));
        }
        if config.verbose {
            let n: usize = folds.iter().map(|g| g.removed.len()).sum();
            eprintln!("rivet: --icf={}: {n} sections folded", format!("{:?}", config.icf).to_lowercase());
        }
    }
    // Group live input sections into output sections by name.
    timer.phase("output sections", || {
        let strip_debug = config.strip != Strip::None;
        ctx.sections = output::build(&mut ctx.objects, &ctx.file_order, strip_debug, config.sort_section);
        layout::define_reserved_symbols(&mut ctx);
    });
    timer.phase("check symbols", || check_symbols(&ctx))?;
    // Split .eh_frame so frames of dropped COMDAT code go too; allocate common symbols.
    timer.phase("eh_frame", || split_eh_frames(&mut ctx))?;
    // Deduplicate SHF_MERGE strings and constants (not with -O0).
    timer.phase("merge sections", || crate::sections::merge::merge(&mut ctx));
    // Merging's working set (pieces, hashes, shard tables: 38 of 52 MB on synth-1) is freed by now
    // but stays in the worker threads' malloc arenas; when memory is tight, hand it back before the
    // output's pages are dirtied. Under a memory cgroup that is what keeps the link from waiting
    // for the disk: on a 30 MB/s disk in a 73 MiB cgroup, synth-1's write phase took 1.1-1.6 s
    // while reclaim waited for writeback of its own output. (It costs 6 ms on synth-1, 1 ms on
    // rust-debug, so not when memory is plentiful.)
    if memory.effective_available() < cache.totals().0.saturating_mul(2) {
        timer.phase("release memory", rivet_io::fsinfo::release_free_memory);
    }
    timer.phase("input offsets", || {
        layout::allocate_commons(&mut ctx);
        layout::assign_member_offsets(&mut ctx);
        ctx.merges.finalize(&ctx.objects);
    });
    // The inputs' GNU property notes (CET bits): they decide the PLT's layout.
    ctx.gnu_properties = crate::synthetic::property::merge(config, &ctx.objects, &ctx.file_order, diag);
    diag.check()?;
    // Size the GOT, IFUNC PLT and RELATIVE relocations from what relocations need.
    timer.phase("scan relocations", || {
        ctx.global_types = ctx.compute_global_types();
        ctx.relax_got_loads = config.relax && arch::x86_64::pc32_reaches_everything(&ctx);
        ctx.got = arch::x86_64::scan(&ctx);
        layout::allocate_copies(&mut ctx);
        let mut tables = std::mem::take(&mut ctx.got);
        arch::x86_64::count_table_relocations(&ctx, &mut tables);
        ctx.got = tables;
    });
    diag.check()?;
    // Imports, exports, versions and DT_NEEDED: all decided by name, so sized before layout.
    ctx.dynsym = timer.phase("dynamic symbols", || {
        if ctx.kind.is_dynamic() || ctx.kind == OutputKind::StaticPie {
            crate::synthetic::dynamic::plan(&ctx)
        } else {
            Default::default()
        }
    });
    let plan = timer.phase("plan symbol table", || (config.strip != Strip::All).then(|| symtab::plan(&ctx)));
    let mut lay = timer.phase("layout", || {
        let sizes = plan.as_ref().map(|p| (p.symtab_size(), p.strtab_size));
        let dynamic = layout::create_synthetic_sections(&mut ctx, sizes);
        let mut lay = layout::assign_addresses(&mut ctx, dynamic);
        layout::compute_symbol_values(&mut ctx);
        ctx.entry = layout::entry_address(&ctx);
        lay.symtab_first_global = plan.as_ref().map_or(0, |p| p.first_global);
        lay
    });
    diag.check()?;
    if let Some(format) = compress::Format::from_option(config.compress_debug_sections) {
        let (n, before, after) = timer.phase("compress debug", || compress::compress(&mut ctx, &mut lay, format));
        if config.verbose {
            eprintln!("rivet: --compress-debug-sections: {n} sections, {before} -> {after} bytes");
        }
        diag.check()?;
    }
    // Mmap or a buffer written sequentially: decided from the output's file system and memory.
    let output_dir = match config.output.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let fs = rivet_io::fsinfo::for_path(&output_dir).ok();
    // Memory again, now that the link's own working set is allocated (it counts against a cgroup).
    let memory_now = rivet_io::fsinfo::memory();
    let choice = rivet_io::policy::choose_output(config.mmap_output, fs.as_ref(), &memory, &memory_now, lay.file_size);
    if config.verbose {
        eprintln!("rivet: output mode {:?}: {}", choice.mode, choice.reason);
        eprintln!("rivet: prefetch: {}", prefetch_choice.reason);
    }
    let (mode, mut mode_reason) = (choice.mode, choice.reason);
    let mut out = timer
        .phase("create output", || OutputFile::create_with(&config.output, lay.file_size, mode, true, choice.reserve))
        .map_err(|e| fatal!("{e}"))?;
    if config.free_memory {
        out.caller_keeps_running();
    }
    let actual_mode = out.mode();
    if let Some(note) = out.mode_note() {
        mode_reason = format!("{mode_reason}; {note}");
    }
    // Write-behind paces itself to the device (waits for old windows' writeback and drops them from
    // the cache) only when the output could not sit in memory twice over: under a cgroup limit that
    // is what keeps dirty pages from getting the link killed. The cgroup's file cache counts as
    // taken here (its dirty part is not reclaimable before writeback): counted as free, cxx-big
    // (51 MB output) wrote unpaced in a 112 MiB cgroup on a 30 MB/s disk and was OOM-killed.
    let paced = lay.file_size.saturating_mul(2) > memory.available_without_cache();
    // Sections that reach the output unchanged may be copied file to file by the kernel.
    let copy_choice = rivet_io::policy::choose_copy(config.copy_method, fs.as_ref());
    if config.verbose {
        eprintln!("rivet: copy method {}: {}", copy_choice.method.name(), copy_choice.reason);
    }
    let kernel = (copy_choice.method != rivet_io::CopyMethod::Memcpy)
        .then(|| write::KernelCopy::new(copy_choice.method, cache.files()));
    let copy_stats = timer
        .phase("write", || write::write(&ctx, &lay, plan.as_ref(), &mut out, kernel.as_ref(), paced))
        .map_err(|e| fatal!("{e}"))?;
    // Relocation errors were collected while writing; the temp file goes away with `out`.
    diag.check()?;
    // An input rewritten while we read it (a parallel build step) gives an output built from torn
    // bytes: refuse to commit it, as wild does.
    timer.phase("check inputs", || inputs_unchanged(&cache))?;
    let commit = timer
        .phase("commit", || out.commit(config.fsync))
        .map_err(|e| fatal!("cannot write {}: {e}", config.output.display()))?;
    // The link map, once the output exists (lld writes it too when asked, at the end).
    if config.map_file.is_some() || config.print_map {
        let text = timer.phase("map", || crate::map::render(&ctx));
        if let Some(p) = &config.map_file {
            std::fs::write(p, &text).map_err(|e| fatal!("cannot write map file {}: {e}", p.display()))?;
        }
        if config.print_map {
            print!("{text}");
        }
    }
    let report = LinkReport {
        output_size: lay.file_size,
        mode: actual_mode,
        mode_reason,
        copy_method: copy_choice.method,
        copy_reason: copy_choice.reason,
        copy: copy_stats,
        prefetch_reason: prefetch_choice.reason,
        prefetch: prefetcher.as_ref().map(|p| p.stats()),
        output_fs: fs.map_or_else(|| "unknown".into(), |f| describe_fs(&f)),
        input_bytes: cache.totals(),
        io: rivet_io::stats::snapshot().delta(&io_start),
        commit,
        inputs: loaded.len(),
        objects: ctx.objects.len(),
        stats: if config.stats { link_stats(&ctx) } else { Vec::new() },
    };
    // The process is about to exit: freeing the symbol table and unmapping inputs only costs time.
    lay.shstrtab = Vec::new();
    if !config.free_memory {
        std::mem::forget(ctx);
        std::mem::forget(plan);
        std::mem::forget(loaded);
        std::mem::forget(cache);
    }
    Ok(report)
}

/// Linking an input over itself would destroy the input on success: refuse, naming it.
fn refuse_output_as_input(config: &Config, cache: &InputCache) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(out) = std::fs::metadata(&config.output) else { return Ok(()) };
    for path in cache.paths() {
        if let Ok(m) = std::fs::metadata(&path) {
            if (m.dev(), m.ino()) == (out.dev(), out.ino()) {
                return Err(fatal!(
                    "output file {} is also an input ({}); refusing to overwrite it",
                    config.output.display(),
                    path.display()
                ));
            }
        }
    }
    Ok(())
}

fn inputs_unchanged(cache: &InputCache) -> Result<()> {
    for f in cache.files() {
        if f.changed_since_open().unwrap_or(true) {
            return Err(fatal!("{} changed while it was being linked; output not written", f.path().display()));
        }
    }
    Ok(())
}

/// Parses version scripts or dynamic lists (the same syntax) into one matcher.
/// A relative path that does not exist is looked for in the `-L` directories too, as GNU ld and
/// lld do.
fn read_version_nodes(
    paths: &[std::path::PathBuf],
    lib_paths: &[std::path::PathBuf],
    what: &str,
) -> Result<crate::input::version_script::Matcher> {
    let mut nodes = Vec::new();
    for path in paths {
        let found = (!path.exists() && path.is_relative())
            .then(|| lib_paths.iter().map(|d| d.join(path)).find(|p| p.is_file()))
            .flatten();
        let path = found.as_ref().unwrap_or(path);
        let text = std::fs::read_to_string(path).map_err(|e| fatal!("cannot read {what} {}: {e}", path.display()))?;
        nodes.extend(crate::input::version_script::parse(&text).map_err(|e| fatal!("{}: {e}", path.display()))?);
    }
    Ok(crate::input::version_script::Matcher { nodes })
}

/// Reads `--version-script` files: symbols they make local become hidden; exported ones get the
/// version of the node that names them; `foo@V` / `foo@@V` names from `.symver` get V.
fn apply_version_scripts(ctx: &mut Ctx) -> Result<()> {
    use crate::input::version_script::{self, Verdict};
    let matcher = read_version_nodes(&ctx.config.version_scripts, &ctx.config.lib_paths, "version script")?;
    ctx.versions.nodes = matcher.nodes.iter().filter_map(|n| Some((n.name.clone()?, n.parent.clone()))).collect();
    let named = |i: usize| matcher.nodes[i].name.is_some();
    // The symbols whose plain name a `foo@V` (non-default) symbol of the same object also gives
    // to the same place (only a script can make such a name `foo@@V` too).
    let place = |file: u32, sym: u32| {
        let obj = &ctx.objects[file as usize];
        (file, obj.sym_shndx(sym as usize), obj.syms[sym as usize].st_value.get(object::LittleEndian))
    };
    let hidden_version_aliases: rustc_hash::FxHashSet<u32> = match matcher.nodes.is_empty() {
        true => Default::default(),
        false => ctx
            .symbols
            .iter()
            .filter(|s| s.version.is_none())
            .filter_map(|s| {
                let Def::Defined { file, sym } = s.def else { return None };
                let (plain, _, false) = resolve::split_version(s.name)? else { return None };
                let &id = ctx.by_name.get(plain)?;
                let Def::Defined { file: pf, sym: ps } = ctx.symbols[id as usize].def else { return None };
                (place(pf, ps) == place(file, sym)).then_some(id)
            })
            .collect(),
    };
    let mut errors = Vec::new();
    for id in 0..ctx.symbols.len() {
        let s = &ctx.symbols[id];
        if !matches!(s.def, Def::Defined { .. } | Def::Common { .. }) {
            continue;
        }
        let explicit = match (s.version, memchr::memchr(b'@', s.name)) {
            (Some(v), _) => Some((v, false)),
            (None, Some(at)) => Some((&s.name[at + 1..], true)),
            (None, None) => None,
        };
        if let Some((v, hidden)) = explicit {
            match ctx.versions.index_of(v) {
                Some(ix) => {
                    ctx.versions.of_symbol.insert(id as u32, if hidden { ix | object::elf::VERSYM_HIDDEN } else { ix });
                }
                // An executable defines no versions: a `.symver`ed name there only names the
                // symbol (lld links it; mold suite arch-x86_64-comdat-signatures).
                None if ctx.kind != OutputKind::Shared => {}
                None => {
                    errors.push(format!("symbol {} has undefined version {}", s.display(), String::from_utf8_lossy(v)))
                }
            }
            continue;
        }
        if matcher.nodes.is_empty() {
            continue;
        }
        // `.symver foo, foo@V` keeps the plain `foo` beside the non-default version: the script
        // must not make it `foo@@V` too; GNU ld and lld export only `foo@V` (mold suite
        // symbol-version2).
        if hidden_version_aliases.contains(&(id as u32)) {
            localize(&mut ctx.symbols[id]);
            continue;
        }
        match matcher.verdict(s.name) {
            Verdict::Local => localize(&mut ctx.symbols[id]),
            Verdict::Global(n) if named(n) => {
                let name = matcher.nodes[n].name.as_ref().unwrap();
                let ix = ctx.versions.index_of(name.as_bytes()).unwrap();
                ctx.versions.of_symbol.insert(id as u32, ix);
            }
            Verdict::Global(_) | Verdict::Unmentioned => {}
        }
    }
    if ctx.config.no_undefined_version {
        for (p, node) in matcher.exact_names() {
            let defined = ctx.symbols.iter().any(|s| {
                matches!(s.def, Def::Defined { .. } | Def::Common { .. })
                    && if p.cxx { version_script::demangle(s.name) == p.text } else { s.name == p.text.as_bytes() }
            });
            if !defined {
                errors.push(format!(
                    "version script assignment of '{}' to symbol '{}' failed: symbol not defined",
                    node.name.as_deref().unwrap_or("global"),
                    p.text
                ));
            }
        }
    }
    for e in errors {
        ctx.diag.error(e);
    }
    ctx.diag.check()
}

/// `--dynamic-list`: an executable exports the listed symbols; in a shared library only the listed
/// ones stay preemptible (the rest bind inside the library, as with -Bsymbolic).
fn apply_dynamic_lists(ctx: &mut Ctx) -> Result<()> {
    use crate::input::version_script::Verdict;
    let config = ctx.config;
    if config.dynamic_lists.is_empty()
        && config.export_dynamic_symbol_lists.is_empty()
        && config.export_dynamic_symbols.is_empty()
    {
        return Ok(());
    }
    let mut matcher = read_version_nodes(&config.dynamic_lists, &config.lib_paths, "dynamic list")?;
    let exports = read_version_nodes(&config.export_dynamic_symbol_lists, &config.lib_paths, "dynamic list")?;
    matcher.nodes.extend(exports.nodes);
    let pattern = |text: &String| crate::input::version_script::Pattern { text: text.clone(), cxx: false };
    matcher.nodes.push(crate::input::version_script::VersionNode {
        global: config.export_dynamic_symbols.iter().map(pattern).collect(),
        ..Default::default()
    });
    for id in 0..ctx.symbols.len() as u32 {
        let s = &ctx.symbols[id as usize];
        if matches!(s.def, Def::Defined { .. } | Def::Common { .. })
            && matches!(matcher.verdict(s.name), Verdict::Global(_))
        {
            ctx.dynamic_list.insert(id);
        }
    }
    Ok(())
}

/// Default-visibility definitions: what a shared library (or an -E executable) exports.
fn exported_names(ctx: &Ctx) -> Vec<String> {
    ctx.symbols
        .iter()
        .filter(|s| matches!(s.def, Def::Defined { .. }) && matches!(s.visibility, 0 | 3))
        .map(|s| s.display())
        .collect()
}

/// Counts for `--stats`.
fn link_stats(ctx: &Ctx) -> Vec<(&'static str, u64)> {
    let live = |o: &crate::input::object::ObjectFile| o.sections.iter().filter(|s| s.live).count() as u64;
    let relocs = |o: &crate::input::object::ObjectFile| {
        o.sections.iter().filter(|s| s.live).map(|s| s.relas.len() as u64).sum::<u64>()
    };
    vec![
        ("object files", ctx.objects.len() as u64),
        ("input sections kept", ctx.objects.iter().map(live).sum()),
        ("output sections", ctx.sections.iter().filter(|s| s.shndx != 0).count() as u64),
        ("global symbols", ctx.symbols.len() as u64),
        ("local symbols", ctx.objects.iter().map(|o| o.first_global as u64).sum()),
        ("relocations", ctx.objects.iter().map(relocs).sum()),
        ("GOT entries", ctx.got.got.len() as u64),
        ("IFUNC PLT entries", ctx.got.plt.len() as u64),
        ("RELATIVE relocations", ctx.got.relative_count),
        ("merged input sections", ctx.merges.sections.len() as u64),
        (
            "sections folded (ICF)",
            ctx.objects.iter().flat_map(|o| &o.sections).filter(|s| s.folded_into.is_some()).count() as u64,
        ),
        ("bytes merged away", ctx.merges.saved),
    ]
}

/// Makes a symbol local to the output (not exported, bound here) and remembers the visibility it
/// had for `.symtab`.
fn localize(s: &mut resolve::Symbol) {
    if !s.is_hidden() {
        s.localized_from.get_or_insert(s.visibility);
        s.visibility = ::object::elf::STV_HIDDEN;
    }
}

/// `--exclude-libs=LIB,...|ALL`: symbols defined by members of those archives (matched by file
/// name, `libfoo.a`) are not exported: they become hidden, as lld and GNU ld make them local.
fn exclude_libs(config: &Config, loaded: &[crate::input::Loaded], res: &mut resolve::Resolution) {
    if config.exclude_libs.is_empty() {
        return;
    }
    let all = config.exclude_libs.iter().any(|l| l == "ALL");
    let excluded = |pos: u32| {
        let l = &loaded[pos as usize];
        let base = std::path::Path::new(&l.name).file_name().map(|n| n.to_string_lossy().into_owned());
        l.kind == crate::input::Kind::Archive && (all || base.is_some_and(|b| config.exclude_libs.contains(&b)))
    };
    for s in &mut res.symbols {
        if let resolve::Def::Defined { file, .. } | resolve::Def::Common { file, .. } = s.def {
            if excluded(res.objects[file as usize].order.0) {
                localize(s);
            }
        }
    }
}

/// `--defsym=SYM=NUMBER` makes SYM absolute; `--defsym=SYM=OTHER` makes SYM an alias of OTHER's
/// definition, and `--defsym=SYM=OTHER+N` the same moved by N (see `defsym`). Returns the symbols
/// that carry such an offset, which `layout::compute_symbol_values` adds.
fn apply_defsyms<'a>(config: &'a Config, res: &mut resolve::Resolution<'a>) -> Result<Vec<DefsymOffset>> {
    use resolve::Def;
    let mut offsets: Vec<DefsymOffset> = Vec::new();
    for (name, text) in &config.defsym {
        let expr = crate::defsym::parse(text).map_err(|e| fatal!("--defsym={name}={text}: {e}"))?;
        let mut linker_defined = None;
        let (def, addend) = match expr.symbol {
            None => (Def::Absolute(expr.addend as u64), 0),
            Some(target) => match res.by_name.get(target.as_bytes()).map(|&id| res.symbols[id as usize].def) {
                Some(Def::Absolute(v)) => (Def::Absolute(v.wrapping_add(expr.addend as u64)), 0),
                Some(d @ (Def::Defined { .. } | Def::Common { .. })) => (d, expr.addend),
                // A name the linker defines (`_GLOBAL_OFFSET_TABLE_`, `_end`…): referenced here so
                // that layout defines it, and SYM takes its value.
                Some(Def::Undefined | Def::Lazy { .. } | Def::Synthetic) | None
                    if layout::is_reserved(target.as_bytes(), &[]) =>
                {
                    let id = res.intern(target.as_bytes());
                    res.symbols[id as usize].referenced = true;
                    linker_defined = Some(id);
                    (Def::Synthetic, expr.addend)
                }
                Some(Def::Shared { .. }) => {
                    return Err(fatal!(
                        "--defsym={name}={text}: {target} is defined in a shared library; rivet (like lld) cannot \
                         define a symbol from it"
                    ))
                }
                _ => return Err(fatal!("--defsym={name}={text}: undefined symbol: {target} (no object defines it)")),
            },
        };
        let id = res.intern(name.as_bytes());
        let s = &mut res.symbols[id as usize];
        s.def = def;
        s.weak = false;
        offsets.retain(|d| d.symbol != id);
        if addend != 0 || linker_defined.is_some() {
            offsets.push(DefsymOffset { symbol: id, linker_defined, addend });
        }
    }
    Ok(offsets)
}

fn new_ctx<'a>(config: &'a Config, diag: &'a Diag, kind: OutputKind, res: resolve::Resolution<'a>) -> Ctx<'a> {
    let mut file_order: Vec<u32> = (0..res.objects.len() as u32).collect();
    file_order.sort_by_key(|&f| res.objects[f as usize].order);
    Ctx {
        config,
        diag,
        kind,
        objects: res.objects,
        shared: res.shared,
        symbols: res.symbols,
        by_name: res.by_name,
        file_order,
        sections: Vec::new(),
        eh: Default::default(),
        merges: Default::default(),
        commons: Vec::new(),
        commons_section: None,
        commons_base: 0,
        global_addr: Vec::new(),
        local_values: Vec::new(),
        global_types: Vec::new(),
        defsym_offsets: Vec::new(),
        got: Default::default(),
        dynsym: Default::default(),
        versions: Default::default(),
        dynamic_list: Default::default(),
        tls: Default::default(),
        relax_got_loads: false,
        gnu_properties: Vec::new(),
        base: 0,
        entry: 0,
    }
}

/// Undefined symbols (lld's message with references) and `--require-defined`.
fn check_symbols(ctx: &Ctx) -> Result<()> {
    for e in undefined_errors(ctx) {
        ctx.diag.error(e);
    }
    for name in &ctx.config.require_defined {
        let defined = ctx
            .by_name
            .get(name.as_bytes())
            .is_some_and(|&id| !matches!(ctx.symbols[id as usize].def, Def::Undefined | Def::Lazy { .. }));
        if !defined {
            ctx.diag.error(format!("required symbol '{name}' is not defined (--require-defined)"));
        }
    }
    ctx.diag.check()
}

fn undefined_errors(ctx: &Ctx) -> Vec<String> {
    // A shared library may leave symbols for its users to define, unless -z defs.
    if ctx.kind == OutputKind::Shared && !ctx.config.no_undefined {
        return Vec::new();
    }
    let undefined_ok: Vec<&[u8]> = ctx.config.undefined.iter().map(|s| s.as_bytes()).collect();
    let entry_default = ctx.config.entry.is_none();
    // A view of the resolution for the message builder, borrowing the context's tables.
    resolve::undefined_symbol_errors_in(&ctx.objects, &ctx.symbols, &|name| {
        // `-u` names and a missing default entry are not errors (GNU ld warns about the entry).
        // `__tls_get_addr` is only called by general/local-dynamic TLS sequences, which an
        // executable relaxes away; a call outside such a sequence is an error when relocating.
        undefined_ok.contains(&name) || (entry_default && name == b"_start") || name == b"__tls_get_addr"
    })
}

/// Splits every live `.eh_frame` input section into records, dropping FDEs of dropped code.
fn split_eh_frames(ctx: &mut Ctx) -> Result<()> {
    use rayon::prelude::*;
    // Objects in parallel (cxx-big: 1157 of them, 11-16 ms on one thread); results and errors
    // are taken in file order.
    let ctx_ref = &*ctx;
    type Split = ((u32, u32), std::result::Result<eh_frame::EhSection, String>);
    let split: Vec<Vec<Split>> = ctx_ref
        .file_order
        .par_iter()
        .with_max_len(4)
        .map(|&f| {
            let obj = &ctx_ref.objects[f as usize];
            let mut out = Vec::new();
            for (si, sec) in obj.sections.iter().enumerate() {
                if !sec.live || sec.out == NO_OUTPUT || sec.name != b".eh_frame" {
                    continue;
                }
                let live = |rel: &crate::input::object::Rela| {
                    let t = ctx_ref.target(f, rel.r_sym(object::LittleEndian, false));
                    match t {
                        crate::ctx::Target::Local(lf, ls) => {
                            let o = &ctx_ref.objects[lf as usize];
                            o.sym_shndx(ls as usize).is_none_or(|s| o.sections[s as usize].live)
                        }
                        crate::ctx::Target::Global(_) => true,
                    }
                };
                out.push(((f, si as u32), eh_frame::split(sec, &obj.name, live)));
            }
            out
        })
        .collect();
    let mut eh = rustc_hash::FxHashMap::default();
    for (key, r) in split.into_iter().flatten() {
        match r {
            Ok(e) => {
                eh.insert(key, e);
            }
            Err(e) => ctx.diag.error(e),
        }
    }
    // Records must follow each other with no gap: the unwinder that walks .eh_frame from
    // crtbeginT.o's __EH_FRAME_BEGIN__ (static executables) reads alignment padding as the zero
    // terminator and stops. Every record's length is a multiple of 4, so 4-byte alignment packs.
    for &(f, s) in eh.keys() {
        ctx.objects[f as usize].sections[s as usize].align = 4;
    }
    ctx.eh = eh;
    ctx.diag.check()
}

fn describe_fs(f: &rivet_io::fsinfo::FsInfo) -> String {
    let mut s = format!("{} at {}", f.fs_type, f.mount_point.display());
    if f.compressed {
        s.push_str(", compressed");
    }
    s.push_str(&format!(", {} free", rivet_io::policy::human(f.free_bytes)));
    s
}
