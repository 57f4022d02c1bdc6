//! The link, as a pipeline: one call per stage, each timed, each handing the next a plain data
//! structure. Errors stop the pipeline before the output file is created, so a failed link never
//! touches an existing output.
use crate::args::{Config, Icf, Strip};
use crate::ctx::{Ctx, OutputKind};
use crate::diag::{Context, Diag, Result};
use crate::input;
use crate::linked::{Addresses, Linked};
pub use crate::report::LinkReport;
use crate::resolve;
use crate::sections::{compress, frames, output};
use crate::synthetic::symtab;
use crate::timing::Timer;
use crate::{arch, check, layout, symbol_options, write};
use rivet_io::{InputCache, OutputFile};

pub fn link(config: &Config, timer: &Timer, diag: &Diag) -> Result<LinkReport> {
    config.validate()?;
    let kind = OutputKind::from_config(config)?;
    let io_start = rivet_io::stats::snapshot();
    // Memory as the link finds it, and whether to prefetch: decided before any input is opened.
    let io_inputs = rivet_io::policy::plan_inputs(config.prefetch_inputs);
    let cache = InputCache::new();
    // Ask the kernel to read inputs ahead from a background thread as soon as they are known.
    let prefetch = &io_inputs.prefetch;
    let prefetcher = prefetch.enabled.then(|| rivet_io::Prefetcher::start(prefetch.budget));
    // Open and map every input named on the command line (and in linker-script stubs).
    let loaded = timer
        .phase("open inputs", || input::load(config, &cache, prefetcher.as_ref(), timer))
        .map_err(|e| diag.fail(e))?;
    if let Some(p) = &prefetcher {
        p.flush();
    }
    cache.refuse_as_output(&config.output)?;
    let kind = kind.for_inputs(config, &loaded).map_err(|e| diag.fail(e))?;
    // Like lld, write the reproduce archive before linking, so a failing link can be replayed too.
    if config.reproduce.is_some() {
        let files: Vec<_> = cache.files();
        let inputs: Vec<_> = files.iter().map(|f| (f.path().to_path_buf(), f.data())).collect();
        timer
            .phase("reproduce", || crate::reproduce::write(config, &inputs))
            .with_context(|| format!("cannot write {}", config.reproduce.as_ref().unwrap().display()))?;
    }
    // Resolve symbols, pulling archive members in as references need them.
    let roots = resolve::root_symbols(config);
    let renames = resolve::wrap_renames(config);
    let res = timer
        .phase("resolve symbols", || resolve::resolve(&loaded, &roots, &renames, prefetcher.as_ref(), timer, config))
        .map_err(|e| diag.fail(e))?;
    for w in &res.warnings {
        diag.warn(w);
    }
    // The archive members resolution picked are read again when writing.
    if let Some(p) = &prefetcher {
        p.flush();
    }
    let mut res = res;
    let defsym_offsets = symbol_options::apply_defsyms(config, &mut res)?;
    symbol_options::exclude_libs(config, &loaded, &mut res);
    let mut ctx = Ctx::new(config, diag, kind, res, defsym_offsets);
    // Version scripts decide what is exported and at which version, before anything depends on it.
    timer.phase("version scripts", || {
        symbol_options::apply_version_scripts(&mut ctx).and_then(|()| symbol_options::apply_dynamic_lists(&mut ctx))
    })?;
    // Drop sections nothing reaches (--gc-sections), before anything is sized. What a shared
    // library or an -E executable exports is reachable from outside.
    let mut roots = roots.clone();
    if kind == OutputKind::Shared || config.export_dynamic {
        roots.extend(symbol_options::exported_names(&ctx));
    } else if kind.is_dynamic() {
        roots.extend(crate::synthetic::dynamic::export_roots(&ctx));
    }
    if config.gc_sections {
        let dropped = timer.phase("gc sections", || crate::sections::gc::collect(&mut ctx, &roots));
        if config.print_gc_sections {
            crate::sections::gc::print_dropped(&ctx, &dropped);
        }
    }
    // Fold identical code (--icf=all|safe) before anything is laid out or split.
    if config.icf != Icf::None {
        let folds = timer.phase("icf", || crate::sections::icf::fold(&mut ctx, config.icf == Icf::Safe));
        crate::sections::icf::print(&ctx, &folds);
    }
    // Group live input sections into output sections by name.
    timer.phase("output sections", || -> crate::diag::Result<()> {
        let strip_debug = config.strip != Strip::None;
        let keep_prefix = config.keep_text_section_prefix;
        ctx.sections = output::build(&mut ctx.objects, &ctx.file_order, strip_debug, config.sort_section, keep_prefix)?;
        layout::define_reserved_symbols(&mut ctx);
        Ok(())
    })?;
    timer.phase("check symbols", || check::check_symbols(&ctx))?;
    // Split .eh_frame so frames of dropped COMDAT code go too; allocate common symbols.
    timer.phase("eh_frame", || frames::split_eh_frames(&mut ctx))?;
    // Deduplicate SHF_MERGE strings and constants (not with -O0).
    timer.phase("merge sections", || crate::sections::merge::merge(&mut ctx));
    // Merging's working set is freed by now but stays in the threads' malloc arenas.
    if io_inputs.release_memory_before_output(cache.totals().0) {
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
        let (all, relative, packed) = arch::x86_64::table_relocations(&ctx);
        ctx.got.dynrel_count += all;
        ctx.got.relative_count += relative;
        ctx.got.relr_got = packed;
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
    let plan =
        timer.phase("plan symbol table", || (config.strip != Strip::All).then(|| symtab::plan(&ctx)).transpose())?;
    let (mut lay, addresses) = timer.phase("layout", || {
        crate::synthetic::chunks::create_sections(&mut ctx, plan.as_ref());
        let lay = layout::assign_addresses(&mut ctx);
        let addresses = Addresses::compute(&ctx, &lay);
        (lay, addresses)
    });
    diag.check()?;
    if let Some(format) = compress::Format::from_option(config.compress_debug_sections) {
        let (n, before, after) =
            timer.phase("compress debug", || compress::compress(&mut ctx, &mut lay, &addresses, format));
        if config.verbose {
            eprintln!("rivet: --compress-debug-sections: {n} sections, {before} -> {after} bytes");
        }
        diag.check()?;
    }
    // Mmap or a buffer written sequentially, paced or not, and how unchanged sections are copied:
    // decided from the output's file system and memory, now that the output's size is known.
    let io = rivet_io::policy::plan_output(
        &io_inputs,
        &config.output,
        config.mmap_output,
        config.copy_method,
        lay.file_size,
    );
    if config.verbose {
        eprintln!("rivet: output mode {:?}: {}", io.output.mode, io.output.reason);
        eprintln!("rivet: prefetch: {}", prefetch.reason);
    }
    let mut out = timer.phase("create output", || {
        OutputFile::create_with(&config.output, lay.file_size, io.output.mode, true, io.output.reserve)
    })?;
    if config.free_memory {
        out.caller_keeps_running();
    }
    let actual_mode = out.mode();
    let mode_reason = match out.mode_note() {
        Some(note) => format!("{}; {note}", io.output.reason),
        None => io.output.reason.clone(),
    };
    if config.verbose {
        eprintln!("rivet: copy method {}: {}", io.copy.method.name(), io.copy.reason);
    }
    // Sections that reach the output unchanged may be copied file to file by the kernel.
    let kernel =
        (io.copy.method != rivet_io::CopyMethod::Memcpy).then(|| write::KernelCopy::new(io.copy.method, cache.files()));
    let linked = Linked::new(&ctx, &lay, &addresses);
    let copy_stats =
        timer.phase("write", || write::write(&linked, plan.as_ref(), &mut out, kernel.as_ref(), io.paced))?;
    // Relocation errors were collected while writing; the temp file goes away with `out`.
    diag.check()?;
    // An input rewritten while we read it (a parallel build step) gives an output built from torn
    // bytes: refuse to commit it, as wild does.
    timer.phase("check inputs", || cache.check_unchanged())?;
    let commit = timer
        .phase("commit", || out.commit(config.fsync))
        .with_context(|| format!("cannot write {}", config.output.display()))?;
    // The link map, once the output exists (lld writes it too when asked, at the end).
    if config.map_file.is_some() || config.print_map {
        let text = timer.phase("map", || crate::map::render(&linked));
        if let Some(p) = &config.map_file {
            std::fs::write(p, &text).with_context(|| format!("cannot write map file {}", p.display()))?;
        }
        if config.print_map {
            print!("{text}");
        }
    }
    let report = LinkReport {
        output_size: lay.file_size,
        mode: actual_mode,
        mode_reason,
        copy_method: io.copy.method,
        copy_reason: io.copy.reason,
        copy: copy_stats,
        prefetch_reason: io_inputs.prefetch.reason,
        prefetch: prefetcher.as_ref().map(|p| p.stats()),
        output_fs: io.output_fs,
        input_bytes: cache.totals(),
        io: rivet_io::stats::snapshot().delta(&io_start),
        commit,
        inputs: loaded.len(),
        objects: ctx.objects.len(),
        stats: if config.stats { ctx.stats() } else { Vec::new() },
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
