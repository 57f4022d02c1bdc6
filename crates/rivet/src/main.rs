//! rivet: an x86-64 ELF linker. `main` parses the command line, runs the link, prints the reports
//! asked for and exits (without freeing what the link built: the kernel does that faster).
use rivet::diag::Context;
use rivet::{args, diag, link, timing};

use std::process::exit;

/// `-v`/`--version`. "GNU ld" makes libtool take rivet for one (`with_gnu_ld`); the `v` keeps the
/// number from reading as a GNU ld older than 2.11 to libtool's `*\ [01].*` pattern, which would
/// make it link shared libraries without their version scripts (`supports_anon_versioning=no`).
const VERSION: &str = concat!("rivet v", env!("CARGO_PKG_VERSION"), " (compatible with GNU ld)");

/// The I/O block of `--print-timing`: what rivet chose and why, and what the link cost in I/O. A
/// link `--incremental` found up to date wrote nothing: its block has no output lines.
fn io_report(r: &link::LinkReport) -> String {
    use rivet_io::units::human;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    let mode = if r.mode == rivet_io::OutputMode::Mmap { "mmap" } else { "heap (sequential write)" };
    let mut s = String::from("I/O\n");
    if let Some(line) = &r.incremental {
        s.push_str(&format!("  incremental      {line}\n"));
    }
    if !r.up_to_date {
        s.push_str(&format!("  output mode      {mode}: {}\n", r.mode_reason));
        s.push_str(&format!("  output file      {}\n", rivet::link_io::reuse_line(r.reused, &r.reuse_reason)));
        s.push_str(&format!("  output mapping   {}\n", r.mapping));
        s.push_str(&format!("  output fs        {}\n", r.output_fs));
        s.push_str(&format!("  copy method      {}: {}\n", r.copy_method.name(), r.copy_reason));
        if r.copy_method != rivet_io::CopyMethod::Memcpy {
            s.push_str(&format!(
                "                   {} sections, {} copied in the kernel\n",
                r.copy.sections,
                human(r.copy.bytes)
            ));
            if let Some(why) = &r.copy.fallback {
                s.push_str(&format!("                   {why}\n"));
            }
        }
        s.push_str(&format!("  allocator        {}\n", r.allocator_reason));
        s.push_str(&format!("  prefetch         {}\n", r.prefetch_reason));
        if let Some(p) = r.prefetch {
            s.push_str(&format!("                   {} requests, {} advised\n", p.requests, human(p.bytes_advised)));
        }
    }
    let linked = if r.up_to_date { String::new() } else { format!(", {} objects linked", r.objects) };
    if r.up_to_date && r.input_bytes.0 == 0 && r.inputs > 0 {
        // `--incremental` decided from the inputs' sizes and mtimes alone (the changed ones read).
        s.push_str(&format!("  inputs           {} files, none opened to find them\n", r.inputs));
    } else {
        s.push_str(&format!(
            "  inputs           {} ({} mapped), {} files{linked}\n",
            human(r.input_bytes.0),
            human(r.input_bytes.1),
            r.inputs,
        ));
    }
    s.push_str(&format!("  read from disk   {}\n", human(r.io.read_bytes)));
    s.push_str(&format!("  page faults      {} minor, {} major\n", r.io.minor_faults, r.io.major_faults));
    if !r.up_to_date {
        s.push_str(&format!(
            "  output           {}, {} written, commit {:.3} ms (write {:.3} ms, rename {:.3} ms)\n",
            human(r.output_size),
            human(r.commit.bytes_written),
            ms(r.commit.write_time) + ms(r.commit.rename_time),
            ms(r.commit.write_time),
            ms(r.commit.rename_time)
        ));
    }
    s.push_str(&format!(
        "  cpu              user {:.3} ms, sys {:.3} ms, peak RSS {} KiB\n",
        ms(r.io.user_time),
        ms(r.io.sys_time),
        r.io.max_rss_kb
    ));
    s
}

fn main() {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    // `rivet -run COMMAND ARGS...`: the command runs with rivet as its linker.
    if rivet::run::is_run(&argv) {
        match rivet::run::run(&argv) {
            Ok(code) => exit(code),
            Err(e) => {
                diag::print_error(e);
                exit(1);
            }
        }
    }
    let config = match args::parse(argv) {
        Ok(c) => c,
        Err(e) => {
            diag::set_color(None);
            diag::print_error(e);
            exit(1);
        }
    };
    diag::set_color(config.color_diagnostics);
    diag::set_demangle(config.demangle);
    if config.print_help {
        print!("{}", args::usage());
        exit(0);
    }
    if config.print_version || config.verbose {
        println!("{VERSION}");
        if config.print_version || config.inputs.is_empty() {
            exit(0);
        }
    }
    // --fork (and a detached --separate-debug-file): the command waits for this process only until
    // the link is complete (the output, or with the debug file the output alone, in place); the
    // teardown of the link's memory and mappings happens after it has returned. Before any
    // thread exists; a failed fork links without forking.
    let detach = if config.forks() { rivet_io::detach::fork_and_wait().ok() } else { None };
    let timer = timing::Timer::new();
    let diag = diag::Diag::new(config.fatal_warnings)
        .with_error_limit(config.error_limit)
        .without_warnings(config.no_warnings);
    // The link runs on a thread of the pool (`install`), not beside it: a parallel stage's first
    // share of the work starts at once on the thread that asked for it, while the others wake up
    // to take the rest. From outside the pool, each parallel stage waited for a sleeping thread to
    // wake, and then for its own wake-up: milliseconds each on this project's 2-core VM, where
    // an idle core is slow to wake. Pool threads get the main thread's stack size (8 MiB), since
    // the link's own recursion (scripts, expressions, demangling) now runs on one.
    let pool =
        rayon::ThreadPoolBuilder::new().num_threads(config.threads.map_or(0, |n| n.max(1))).stack_size(8 << 20).build();
    let link = || timer.phase("link", || link::link_detaching(&config, &timer, &diag, detach));
    let result = match &pool {
        Ok(pool) => pool.install(link),
        // No threads could be started: the link runs here, in rayon's default pool.
        Err(_) => link(),
    };
    let total = timer.total();
    match result {
        Ok(report) => {
            if config.print_timing {
                eprint!("{}", timer.report(total));
                eprint!("{}", io_report(&report));
            }
            for (what, n) in &report.stats {
                eprintln!("{what:>24}: {n}");
            }
            if let Some(trace) = &config.time_trace {
                let path = trace.clone().unwrap_or_else(|| {
                    let mut p = config.output.clone().into_os_string();
                    p.push(".time-trace.json");
                    p.into()
                });
                if let Err(e) = timer.write_trace(&path).with_context(|| format!("cannot write {}", path.display())) {
                    diag::print_error(e);
                    exit(1);
                }
            }
            exit(0);
        }
        Err(e) => {
            if diag.error_count() == 0 {
                diag::print_error(e);
            }
            exit(1);
        }
    }
}
