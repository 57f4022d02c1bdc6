//! rivet: an x86-64 ELF linker. `main` parses the command line, runs the link, prints the reports
//! asked for and exits (without freeing what the link built: the kernel does that faster).
mod arch;
mod args;
mod ctx;
mod diag;
mod input;
mod layout;
mod link;
mod resolve;
mod sections;
mod synthetic;
mod timing;
mod write;

use std::process::exit;

const VERSION: &str = concat!("rivet ", env!("CARGO_PKG_VERSION"), " (compatible with GNU ld)");

fn main() {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let config = match args::parse(argv) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rivet: error: {e}");
            exit(1);
        }
    };
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
    if let Some(n) = config.threads {
        // Only fails if a pool exists already, which cannot happen this early.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global();
    }
    let timer = timing::Timer::new();
    let diag = diag::Diag::new(config.fatal_warnings);
    let result = timer.phase("link", || link::link(&config, &timer, &diag));
    let total = timer.total();
    match result {
        Ok(report) => {
            if config.print_timing {
                eprint!("{}", timer.report(total));
                eprintln!(
                    "output: {} bytes, {} mode ({}), {} inputs, {} objects",
                    report.output_size,
                    if report.mode == rivet_io::OutputMode::Mmap { "mmap" } else { "heap" },
                    report.mode_reason,
                    report.inputs,
                    report.objects
                );
                eprintln!(
                    "commit: {} bytes written in {:.3} ms, rename {:.3} ms",
                    report.commit.bytes_written,
                    report.commit.write_time.as_secs_f64() * 1000.0,
                    report.commit.rename_time.as_secs_f64() * 1000.0
                );
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
                if let Err(e) = timer.write_trace(&path) {
                    eprintln!("rivet: error: cannot write {}: {e}", path.display());
                    exit(1);
                }
            }
            exit(0);
        }
        Err(e) => {
            if diag.error_count() == 0 {
                eprintln!("rivet: error: {e}");
            }
            exit(1);
        }
    }
}
