//! The link, as a pipeline: one call per stage, each timed, each handing the next a plain data
//! structure. Errors stop the pipeline before the output file is created, so a failed link never
//! touches an existing output. What each stage does lives next to its data; this file is the
//! table of contents.
use crate::arch::Arch;
use crate::args::{Config, Icf};
use crate::ctx::{Ctx, OutputKind, Resolved};
use crate::diag::{Diag, Result};
use crate::link_io::{self, Inputs, Output};
use crate::linked::{Addresses, Linked, Placed};
pub use crate::report::LinkReport;
use crate::sections::{compress, frames, gc, icf, merge, output};
use crate::synthetic::plans::Plans;
use crate::synthetic::{chunks, debug_file, dynamic, emit_relocs, gdb_index, property, symtab};
use crate::timing::Timer;
use crate::{
    arch, check, dependencies, incremental, input, layout, lto, map, relocatable, report, reproduce, resolve, script,
    script_layout, symbol_options, write,
};
use object::elf;
use rayon::prelude::*;

pub fn link(config: &Config, timer: &Timer, diag: &Diag) -> Result<LinkReport> {
    link_detaching(config, timer, diag, None)
}

/// `link`; with `detach`, the process waiting for this one exits with success once the link is
/// complete (`--fork`), or once the output is in place, before the separate debug file is written
/// (a detached `--separate-debug-file`).
pub fn link_detaching(
    config: &Config,
    timer: &Timer,
    diag: &Diag,
    detach: Option<rivet_io::detach::Detached>,
) -> Result<LinkReport> {
    // The command line's warnings come first, also when it is refused as a whole (lld's order).
    for w in &config.warnings {
        diag.warn(w);
    }
    config.validate()?;
    let requested = OutputKind::from_config(config)?;
    // Memory as the link finds it, the input cache and the prefetch thread, before any input opens.
    let inputs = Inputs::start(config);
    // --incremental: nothing to open when the state says the output is up to date, or can be
    // patched in place, from the file-system questions the last link's search asked.
    let before = match config.incremental {
        true => timer.phase("incremental check", || incremental::plan_before_opening(config)),
        false => incremental::Before::Undecided(None),
    };
    let before = match before {
        incremental::Before::Decided { plan, inputs: n } if !matches!(plan, incremental::Plan::Full { .. }) => {
            return Ok(done(config, detach, &inputs, n, &plan))
        }
        b => b,
    };
    // Open and map every input named on the command line (and in linker-script stubs).
    let (loaded, script_files, probes) = timer
        .phase("open inputs", || input::load(config, &inputs.cache, inputs.prefetcher.as_ref(), timer))
        .map_err(|e| diag.fail(e))?;
    // The target: `-m`'s, else the first ELF input's machine; the rest of the link is generic
    // over it.
    let machine = arch::machine_for_link(config, &loaded);
    arch::check_machines(config, machine, &loaded)?;
    arch::check_target_options(config, machine)?;
    arch::check_scripts(machine, &script_files)?;
    // The defaults the command line left to the target (page sizes, -z separate-code).
    let targeted = config.for_target(machine);
    let config = targeted.as_ref().unwrap_or(config);
    let opened = (loaded, script_files, probes);
    crate::with_arch!(machine, link_loaded(config, timer, diag, detach, requested, inputs, opened, before))
}

/// The report of a link `--incremental` found done (`plan`: up to date or patched; `n`: its
/// inputs).
fn done(
    config: &Config,
    detach: Option<rivet_io::detach::Detached>,
    inputs: &Inputs,
    n: usize,
    plan: &incremental::Plan,
) -> LinkReport {
    if let Some(d) = detach {
        d.release(0);
    }
    let patched = matches!(plan, incremental::Plan::Patched { .. });
    link_io::up_to_date_report(inputs, &config.output, n, plan.line(), patched)
}

/// The link once its inputs are open and its target `A` is known.
#[allow(clippy::too_many_arguments)]
fn link_loaded<A: Arch>(
    config: &Config,
    timer: &Timer,
    diag: &Diag,
    mut detach: Option<rivet_io::detach::Detached>,
    requested: OutputKind,
    mut inputs: Inputs,
    (loaded, script_files, probes): input::Opened,
    before: incremental::Before,
) -> Result<LinkReport> {
    // A linker script's ENTRY, OUTPUT and SEARCH_DIR, where the command line said nothing.
    script::refuse_unsupported(&script_files)?;
    let scripted = script::configure(config, &script_files);
    let config = scripted.as_ref().unwrap_or(config);
    inputs.cache.refuse_as_output(&config.output)?;
    // --incremental: nothing to do when the output is what this link would write.
    let input_paths: Vec<&std::path::Path> = loaded.iter().map(|l| l.file.path()).collect();
    let option_files = config.incremental.then(|| incremental::OptionFiles::snapshot(config));
    let plan = config.incremental.then(|| match before {
        incremental::Before::Decided { plan, .. } => plan,
        incremental::Before::Undecided(state) => {
            timer.phase("incremental check", || incremental::plan(config, &input_paths, &inputs.cache.files(), state))
        }
    });
    let full_reason = match plan {
        Some(incremental::Plan::Full { why, record, known }) => Some((why, record, known)),
        // Up to date, or patched in place: the link is done.
        Some(plan) => {
            let report = done(config, detach, &inputs, loaded.len(), &plan);
            // The process exits now: its mappings go with it, where unmapping each input here
            // took longer than the check (3 ms of a 16 ms relink on synth-1's 265 inputs).
            if !config.free_memory {
                std::mem::forget((loaded, inputs.cache));
            }
            return Ok(report);
        }
        None => None,
    };
    // The read-ahead of the inputs, and the allocator's settings, for a link that reads them all
    // (a link `--incremental` ends above reads few of their bytes).
    inputs.flush_prefetch();
    inputs.tune_allocator();
    let kind = requested.for_inputs(config, &loaded).map_err(|e| diag.fail(e))?;
    reproduce::write_if_asked(config, &inputs.cache, timer)?;
    // Resolve symbols, pulling archive members in as references need them. With -plugin and
    // compiler IR among the inputs, link-time optimisation runs here: resolution over the IR's
    // symbols, the plugin's code generation, resolution again over the objects it made. The
    // returned guard runs the plugin's cleanup when the link ends.
    let command_line_roots = resolve::root_symbols(config);
    let mut roots = command_line_roots.clone();
    roots.extend(script::roots(&script_files));
    let renames = resolve::wrap_renames(config);
    let mut relinked = None;
    let (linked_inputs, mut res, _lto_cleanup) = lto::resolve(
        config,
        kind,
        &loaded,
        &mut relinked,
        &roots,
        &renames,
        inputs.prefetcher.as_ref(),
        &inputs.cache,
        timer,
        diag,
    )?;
    // Link-time optimisation ran: the plugin's objects replaced the IR inputs.
    let lto_ran = !std::ptr::eq(linked_inputs, &loaded[..]);
    // --incremental: the state's hashes and shapes of the loaded objects, worked out beside the
    // rest of the link (a link after LTO keeps no state).
    let early = match &full_reason {
        Some((_, true, known)) if !lto_ran => {
            let patchable = incremental::patch::barrier(config, scripted.is_some(), false).is_none();
            Some(incremental::patch::Early::start(&res.objects, inputs.cache.files(), known, patchable))
        }
        _ => None,
    };
    // The LTO plugin may have added shared libraries (add_input_library): an executable that
    // links none on the command line is dynamic after all.
    let kind = requested.for_inputs(config, linked_inputs).map_err(|e| diag.fail(e))?;
    for w in &res.warnings {
        diag.warn(w);
    }
    resolve::report_tracing(config, &res)?;
    // The archive members resolution picked are read again when writing.
    inputs.flush_prefetch();
    let defsym_offsets = symbol_options::apply_defsyms(config, &mut res)?;
    // Scripts' symbol assignments define their symbols; the values come after layout.
    let script_syms = script::declare_symbols(&script_files, &command_line_roots, &mut res)?;
    symbol_options::exclude_libs(config, linked_inputs, &mut res);
    // Archive members (and objects LTO made) of another machine.
    arch::check_objects(A::NAMES, &res.objects)?;
    let mut resolved = Resolved::new(config, diag, kind, res, defsym_offsets, &script_files, script_syms);
    script::classify(&mut resolved);
    dependencies::print_if_asked(&resolved);
    // -r ends here: the objects combined into one for a later link.
    if kind == OutputKind::Relocatable {
        if config.separate_debug_file.is_some() || config.oformat_binary {
            crate::bail!("-r: --separate-debug-file and --oformat=binary are for final links");
        }
        if let Some(what) = script::refused_with_relocatable(&script_files) {
            crate::bail!("-r: {what} are not supported with a relocatable output");
        }
        let generated = lto::generated(&loaded, linked_inputs);
        incremental::forget_state(config)?;
        let mut report = relocatable::link::<A>(&resolved, &inputs, linked_inputs.len(), &generated, timer)?;
        report.incremental = full_reason.map(|(why, _, _)| format!("full link: {why}"));
        return Ok(report);
    }
    warn_exec_stack_requests(&resolved);
    // Version scripts decide what is exported and at which version, before anything depends on it.
    let versions = timer.phase("version scripts", || {
        let versions = symbol_options::apply_version_scripts(&mut resolved)?;
        symbol_options::apply_dynamic_lists(&mut resolved).map(|()| versions)
    })?;
    // Drop sections nothing reaches (--gc-sections), before anything is sized.
    if config.gc_sections {
        let roots = symbol_options::gc_roots(&resolved, &roots);
        let kept = script_layout::kept(&resolved.objects, &script_files);
        let dropped = timer.phase("gc sections", || gc::collect(&mut resolved, &roots, &kept));
        gc::print_dropped(&resolved, &dropped)?;
        if let Some(report) = crate::sections::why_live::explain(&resolved, &roots, &kept) {
            print!("{report}");
        }
    } else if !config.why_live.is_empty() {
        resolved.diag.warn("--why-live has no effect without --gc-sections: every section is kept");
    }
    // Fold identical code (--icf=all|safe) before anything is laid out or split.
    if config.icf != Icf::None {
        let folds = timer.phase("icf", || icf::fold::<A>(&mut resolved, config.icf == Icf::Safe));
        icf::print(&resolved, &folds);
    }
    // --symbol-ordering-file: which sections go first, and lld's warnings about the others.
    let priority = symbol_options::symbol_priorities(&resolved)?;
    let (sections, mut scripted) =
        timer.phase("output sections", || script_layout::create_output_sections::<A>(&mut resolved, priority))?;
    output::reverse_ctors_in_arrays(&mut resolved.objects, &sections);
    timer.phase("check symbols", || check::check_symbols(&resolved))?;
    if let Err(errors) = script_layout::check_nocrossrefs(&resolved, &sections) {
        diag.report(errors);
    }
    // Split .eh_frame so frames of dropped COMDAT code go too.
    let eh = timer.phase("eh_frame", || frames::split_eh_frames(&mut resolved))?;
    // Deduplicate SHF_MERGE strings and constants (not with -O0).
    let (merges, pieces) = timer.phase("merge sections", || merge::merge(&mut resolved, &sections, &eh));
    let mut ctx = Ctx::new(resolved, sections, eh, merges, versions);
    inputs.release_memory_before_output(timer);
    // Where every input section, common symbol and merged piece sits in its output section, and
    // how large the output sections are.
    let (places, mut sizes) =
        timer.phase("input offsets", || script_layout::assign_input_offsets(&mut ctx, pieces, scripted.as_mut()))?;
    // --gdb-index: units, names and ranges from the inputs' DWARF, now that input offsets are known.
    let gdb_index = gdb_index::plan_if_asked(&ctx, &places.offsets, timer)?;
    // The inputs' GNU property notes (x86's CET bits, AArch64's BTI/PAC/GCS): they decide the
    // PLT's layout.
    let gnu_properties = property::merge(config, &ctx.objects, &ctx.file_order, diag, A::MACHINE);
    diag.check()?;
    // Size the GOT, PLT, copies and dynamic relocations from what relocations need.
    let got = timer.phase("scan relocations", || A::scan_relocations(&mut ctx, &gnu_properties, &mut sizes));
    diag.check()?;
    // Imports, exports, versions and DT_NEEDED: all decided by name, so sized before layout.
    let dynsym = timer.phase("dynamic symbols", || dynamic::plan_for_output(&ctx, &got));
    // --emit-relocs: a .rela section per output section with relocations, sized now.
    let emit_relocs = emit_relocs::create_if_asked(&mut ctx, &mut sizes);
    // -z rewrite-endbr: the landing pads no indirect branch needs.
    let endbr = arch::endbr::plan(&ctx, &dynsym);
    let plans = Plans { gnu_properties, got, dynsym, gdb_index, emit_relocs, endbr };
    let mut plan = timer
        .phase("plan symbol table", || symtab::wanted(config).then(|| symtab::plan(&ctx, &plans.got)).transpose())?;
    let (mut lay, addresses) = timer.phase("layout", || -> Result<_> {
        let synthetic = chunks::create_sections::<A>(&mut ctx, &places.offsets, &mut sizes, &plans, plan.as_ref());
        // The sizes without thunks, should the output need them (laid out again then).
        let unthunked = (A::BRANCH_REACH != 0).then(|| sizes.clone());
        let lay = script_layout::assign_addresses(&mut ctx, scripted.as_ref(), &synthetic, places, sizes)?;
        let (lay, addresses) = match unthunked {
            Some(sizes) => {
                lay_out_with_thunks::<A>(&mut ctx, &plans, scripted.is_some(), &synthetic, lay, sizes, &mut plan)?
            }
            None => {
                let addresses = Addresses::compute(Placed::new(&ctx, &plans, &lay));
                (lay, addresses)
            }
        };
        // e_shnum, e_shstrndx and st_shndx are 16 bits, with 0xff00 up reserved: more sections
        // need ELF's extended numbering (counts in section 0, SHT_SYMTAB_SHNDX), which rivet
        // does not write, and which .dynsym cannot have for the dynamic loader anyway.
        let shnum = 1 + lay.emitted_count();
        crate::ensure!(
            lay.no_section_headers || shnum < object::elf::SHN_LORESERVE as usize,
            "{}: too many output sections: {shnum} requested, but ELF allows at most {} without \
             extended section numbering, which rivet does not write",
            config.output.display(),
            object::elf::SHN_LORESERVE - 1
        );
        Ok((lay, addresses))
    })?;
    diag.check()?;
    compress::compress_if_asked::<A>(&ctx, &plans, &mut lay, &addresses, timer);
    diag.check()?;
    if config.warn_rwx_segments && !config.oformat_binary {
        warn_rwx_segments(&config.output, &lay.phdrs, diag);
    }
    // --separate-debug-file: the debug sections leave the output for a file of their own.
    let debug_layout = config.separate_debug_file.is_some().then(|| layout::split_debug_file(&ctx, &mut lay));
    // --oformat=binary: the file is the loaded image alone.
    if config.oformat_binary {
        layout::make_binary_image(&ctx, &mut lay);
    } else if config.no_section_headers {
        layout::drop_section_headers(&ctx, &mut lay);
    }
    // No state describes the output from here on (see `forget_state`).
    incremental::forget_state(config)?;
    // The output's I/O plan and the file, now that its size is known.
    let mut out = Output::create(config, &inputs, lay.file_size, timer)?;
    let kernel = out.kernel_copy(&inputs);
    let linked = Linked::new(Placed::new(&ctx, &plans, &lay), &addresses);
    let paced = out.io.paced;
    let written = timer
        .phase("write", || write::write::<A>(&linked, plan.as_ref(), &mut out.file, kernel.as_ref(), paced, None))?;
    // Relocation errors were collected while writing; the temp file goes away with `out`.
    diag.check()?;
    // An input rewritten while we read it (a parallel build step) gives an output built from torn
    // bytes: refuse to commit it, as wild does.
    timer.phase("check inputs", || inputs.cache.check_unchanged())?;
    // The CRC the debug file will be given, recorded in .gnu_debuglink.
    let debug_crc = match &debug_layout {
        Some(_) => Some(timer.phase("gnu_debuglink", || {
            let crc = debug_file::chosen_crc(written.build_id.as_deref(), &mut out.file)?;
            debug_file::stamp(&linked, &mut out.file, crc).map(|()| crc)
        })?),
        None => None,
    };
    let committed = out.commit(config, timer)?;
    let committed_file = committed.file();
    map::write_if_asked(&linked, timer)?;
    link_io::write_dependency_file(config, &inputs, &lto::generated(&loaded, linked_inputs))?;
    if let (Some(dbg), Some(crc)) = (&debug_layout, debug_crc) {
        let linked = Linked::new(Placed::new(&ctx, &plans, dbg), &addresses);
        let id = written.build_id.as_deref();
        let detach = if config.detaches() { detach.take() } else { None };
        link_io::write_debug_file::<A>(config, &linked, plan.as_ref(), &inputs, id, crc, detach, timer)?;
    }
    let (copy, digests) = (written.copy, written.digests);
    let stats = if config.stats { report::link_stats(&linked) } else { Vec::new() };
    let counts = (linked_inputs.len(), ctx.objects.len(), stats);
    // The link is complete: with --fork the command returns now, and this process exits on its own.
    if let Some(d) = detach {
        d.release(0);
    }
    // --incremental: the state for the next link, once the output is in place (with --fork, after
    // the command has returned).
    let recorded = full_reason.map(|(why, record, known)| {
        if !record {
            // The reason given says why no state would ever be used.
            return format!("full link: {why}");
        }
        let kept = match incremental::not_recorded(diag.warning_count(), lto_ran, &inputs.cache.files()) {
            Some(not) => format!("no state kept: {not}"),
            None => match timer.phase("incremental state", || {
                let options = option_files.as_ref().expect("taken with --incremental");
                let early = early.map_or_else(Vec::new, incremental::patch::Early::finish);
                let files = inputs.cache.files();
                let home = ctx.build_id_home.is_some();
                let per_file = incremental::patch::objects_per_file(&linked.objects, &files);
                let (placements, output) = match incremental::patch::barrier(config, scripted.is_some(), home) {
                    Some(why) => {
                        (Vec::new(), incremental::patch::OutputPatch { barrier: why.into(), ..Default::default() })
                    }
                    None => {
                        let build_id = linked
                            .synthetic_file_range(crate::sections::output::Content::BuildId)
                            .map(|(offset, size)| (offset + 16, size - 16));
                        let placed = incremental::patch::placements(&linked, &files, &per_file, &known, &early);
                        (placed, incremental::patch::OutputPatch { barrier: Vec::new(), build_id, digests })
                    }
                };
                let loaded_from = per_file.iter().map(|o| !o.is_empty()).collect();
                let patching =
                    incremental::patch::Recording { placements, output, loaded_from, early, written: committed_file };
                incremental::record(config, &input_paths, &files, options, &known, patching, &probes)
            }) {
                Ok(()) => "state kept for the next link".to_string(),
                Err(e) => {
                    diag.warn(format_args!("--incremental: {e}"));
                    format!("no state kept: {e}")
                }
            },
        };
        format!("full link: {why}; {kept}")
    });
    let mut report = link_io::report(&inputs, committed, lay.file_size, copy, counts);
    report.incremental = recorded;
    // The process is about to exit: freeing the symbol table and unmapping inputs only costs time.
    // But the kernel then takes the inputs' pages out of the page tables on one thread, after the
    // last thread exits (rust-big: 22 ms between exit_group and the process's end, where wild's
    // exit took 3 ms: it unmaps its inputs while it shuts down). The pool's threads drop them
    // first, side by side: madvise takes the mmap lock shared, where munmap takes it alone.
    lay.shstrtab = Vec::new();
    if !config.free_memory {
        timer.phase("release inputs", || {
            inputs.cache.files().par_iter().with_max_len(1).for_each(|f| f.release_pages());
        });
        std::mem::forget((ctx, plans, plan));
        std::mem::forget((relinked, loaded, inputs.cache));
    }
    Ok(report)
}

/// Code the linker inserts, on a target that needs it: range-extension thunks (`arch::thunks`)
/// when a branch of `lay` (laid out from `sizes`, without them) does not reach its destination,
/// and erratum patches (`Arch::erratum_patch_sites`). With thunks, the output is laid out again
/// with the pessimistic plan, then with the pruned one, kept if every branch still reaches;
/// `.symtab` names the entries. With patches, room for them at the end of their sections (whole
/// 4 KiB pages, so that the code after them keeps its place in the page, which decides where the
/// erratum's sequences are), laid out again until the sequences that need one fit. Gives the
/// layout and its addresses.
#[allow(clippy::too_many_arguments)]
fn lay_out_with_thunks<A: Arch>(
    ctx: &mut Ctx,
    plans: &Plans,
    scripted: bool,
    synthetic: &crate::sections::output::SyntheticIds,
    mut lay: layout::Layout,
    sizes: crate::sections::output::Sizes,
    symtab: &mut Option<symtab::Plan>,
) -> Result<(layout::Layout, Addresses)> {
    use crate::sections::output::Content;
    use crate::sections::thunks::{self, PatchArea, Thunks, PATCH_SIZE};
    let addresses = Addresses::compute(Placed::new(ctx, plans, &lay));
    let (full, mut sites) = {
        let linked = Linked::new(Placed::new(ctx, plans, &lay), &addresses);
        let far = arch::thunks::needed::<A>(&linked);
        let sites = A::erratum_patch_sites(&linked);
        if !far && sites.is_empty() {
            return Ok((lay, addresses));
        }
        // A script's commands are walked again at their addresses, placing the members anew.
        crate::ensure!(
            !scripted,
            "{}: {}, which is not supported with a linker script's SECTIONS or INSERT commands",
            ctx.config.output.display(),
            if far {
                "a branch does not reach its destination and needs range-extension thunks"
            } else {
                "a Cortex-A53 erratum 843419 sequence needs a patch (--fix-cortex-a53-843419)"
            }
        );
        let full = if far { Some(arch::thunks::plan::<A>(&linked)?) } else { None };
        (full, sites)
    };
    let unthunked = lay.inputs.offsets.clone();
    let base_symtab = symtab.clone();
    // Layout with `t`'s groups and patch areas, from the input places `prev` holds (taken from
    // it): members moved, `.symtab` with their names.
    let mut lay_out = |ctx: &mut Ctx, prev: &mut layout::Layout, t: &Thunks| -> Result<(layout::Layout, Addresses)> {
        let mut inputs = std::sync::Arc::try_unwrap(std::mem::take(&mut prev.inputs))
            .map_err(|_| crate::diag::Error::new("internal error: the input places are shared during layout"))?;
        let mut t = t.clone();
        let mut sizes = sizes.clone();
        inputs.offsets = unthunked.clone();
        thunks::place(ctx, &mut t, &mut inputs, &mut sizes)?;
        *symtab = base_symtab.clone().map(|p| p.with_thunks(ctx, &t)).transpose()?;
        if let (Some(p), Some(s), Some(st)) =
            (symtab.as_ref(), synthetic.get(Content::Symtab), synthetic.get(Content::Strtab))
        {
            sizes[s] = p.symtab_size();
            sizes[st] = p.strtab_size;
        }
        let mut lay = script_layout::assign_addresses(ctx, None, synthetic, inputs, sizes)?;
        lay.thunks = std::sync::Arc::new(t);
        let addresses = Addresses::compute(Placed::new(ctx, plans, &lay));
        Ok((lay, addresses))
    };
    let mut addresses = addresses;
    let mut chosen = Thunks { entry_size: A::THUNK_ENTRY_SIZE, ..Thunks::default() };
    if let Some(full) = full {
        let (mut full_lay, full_addresses) = lay_out(ctx, &mut lay, &full)?;
        let pruned = arch::thunks::prune::<A>(&Linked::new(Placed::new(ctx, plans, &full_lay), &full_addresses), &full);
        let entries = |t: &Thunks| t.groups.iter().map(|g| g.entries.len()).sum::<usize>();
        (lay, addresses, chosen) = if entries(&pruned) == entries(&full) {
            (full_lay, full_addresses, full)
        } else {
            let (mut pruned_lay, pruned_addresses) = lay_out(ctx, &mut full_lay, &pruned)?;
            if arch::thunks::all_reach::<A>(&Linked::new(Placed::new(ctx, plans, &pruned_lay), &pruned_addresses)) {
                (pruned_lay, pruned_addresses, pruned)
            } else {
                let (full_lay, full_addresses) = lay_out(ctx, &mut pruned_lay, &full)?;
                (full_lay, full_addresses, full)
            }
        };
        sites = A::erratum_patch_sites(&Linked::new(Placed::new(ctx, plans, &lay), &addresses));
        if sites.is_empty() {
            return Ok((lay, addresses));
        }
    }
    // Erratum patches: room at the end of each section with sites, until the sites fit.
    let mut capacity: std::collections::BTreeMap<crate::ids::OutputSectionId, u64> = Default::default();
    for _ in 0..4 {
        let mut per: std::collections::BTreeMap<crate::ids::OutputSectionId, Vec<_>> = Default::default();
        for &(r, at) in &sites {
            let s = ctx.objects[r].out.expect("a patched section is in the output");
            per.entry(s).or_default().push((r, at));
        }
        let fits = per.iter().all(|(s, v)| v.len() as u64 * PATCH_SIZE <= capacity.get(s).copied().unwrap_or(0));
        if fits && !capacity.is_empty() {
            let mut t = (*lay.thunks).clone();
            for area in &mut t.patches {
                area.sites = per.remove(&area.section).unwrap_or_default();
            }
            lay.thunks = std::sync::Arc::new(t);
            return Ok((lay, addresses));
        }
        for (s, v) in &per {
            let need = (v.len() as u64 * PATCH_SIZE).next_multiple_of(4096);
            let c = capacity.entry(*s).or_default();
            *c = (*c).max(need);
        }
        let mut t = chosen.clone();
        t.patches = capacity
            .iter()
            .map(|(&section, &capacity)| PatchArea { section, capacity, offset: 0, sites: Vec::new() })
            .collect();
        (lay, addresses) = lay_out(ctx, &mut lay, &t)?;
        sites = A::erratum_patch_sites(&Linked::new(Placed::new(ctx, plans, &lay), &addresses));
    }
    crate::bail!(
        "{}: the Cortex-A53 erratum 843419 sequences that need patches did not settle after four layouts",
        ctx.config.output.display()
    )
}

/// GNU ld's `--warn-rwx-segments` (its default): a loaded segment with memory in it that is
/// readable, writable and executable at once, or an executable TLS segment, is named once per kind
/// (a linker script's PHDRS FLAGS(7), -N, or an input section flagged "awx" make one).
fn warn_rwx_segments(output: &std::path::Path, phdrs: &[crate::layout::Phdr], diag: &Diag) {
    let rwx = elf::PF_R | elf::PF_W | elf::PF_X;
    if phdrs.iter().any(|p| p.p_type == elf::PT_LOAD && p.memsz > 0 && p.flags & rwx == rwx) {
        diag.warn(format_args!("{} has a LOAD segment with RWX permissions", output.display()));
    }
    if phdrs.iter().any(|p| p.p_type == elf::PT_TLS && p.memsz > 0 && p.flags & elf::PF_X != 0) {
        diag.warn(format_args!("{} has a TLS segment with execute permission", output.display()));
    }
}

/// An object whose `.note.GNU-stack` asks for an executable stack does not get one unless
/// `-z execstack` or `-z execstack-if-needed` says so (lld's and mold's rule; GNU ld grants it):
/// each such object is named, in GNU ld's words and with mold's warning, since code that needs it
/// (a nested function's trampoline) then faults.
fn warn_exec_stack_requests(ctx: &Resolved) {
    if ctx.exec_stack {
        return;
    }
    for &f in &ctx.file_order {
        let obj = &ctx.objects[f];
        if obj.requests_exec_stack() {
            ctx.diag.warn(format!(
                "{}: requires executable stack (because the .note.GNU-stack section is executable), but the \
                 output's stack is not executable: this file may cause a segmentation fault; link with \
                 -z execstack or -z execstack-if-needed to give it one",
                obj.name
            ));
        }
    }
}
