//! Options about the link as a process rather than its output: reports (`--Map`, `--trace`,
//! `--print-timing`, `--why-live`), diagnostics (`--fatal-warnings`, `--error-limit`), how the
//! output is written (`--mmap-output-file`, `--threads`, `--fork`), reproduction (`--reproduce`),
//! and the options that only ask for information (`--help`, `--version`).
use super::options::Apply::{Optional, Parse, Set, Value};
use super::options::{ignored, opt, Opt};
use super::values::one_of;
use crate::diag::Context;
use crate::{ensure, fatal};
use std::path::PathBuf;

pub(super) static OPTIONS: &[Opt] = &[
    opt(&["v", "verbose"], Set(|c| c.verbose = true)),
    opt(&["version", "V"], Set(|c| c.print_version = true)),
    opt(&["help"], Set(|c| c.print_help = true)),
    // Reports.
    opt(&["Map"], Value(|c, v| c.map_file = Some(PathBuf::from(v)))),
    opt(&["M", "print-map"], Set(|c| c.print_map = true)),
    opt(&["t", "trace"], Set(|c| c.trace = true)),
    opt(&["print-timing", "time"], Set(|c| c.print_timing = true)),
    opt(
        &["time-trace"],
        Optional(|c, v| {
            c.time_trace = Some(v.map(PathBuf::from));
            Ok(())
        }),
    ),
    opt(&["stats"], Set(|c| c.stats = true)),
    opt(&["print-dependencies"], Set(|c| c.print_dependencies = true)),
    opt(&["why-extract"], Value(|c, v| c.why_extract = Some(PathBuf::from(v)))),
    opt(&["why-live"], Value(|c, v| c.why_live.push(v))),
    opt(&["dependency-file"], Value(|c, v| c.dependency_file = Some(PathBuf::from(v)))),
    opt(&["reproduce"], Value(|c, v| c.reproduce = Some(PathBuf::from(v)))),
    opt(&["repro"], Set(|c| c.repro = true)),
    // Diagnostics.
    opt(&["fatal-warnings"], Set(|c| c.fatal_warnings = true)),
    opt(&["no-fatal-warnings"], Set(|c| c.fatal_warnings = false)),
    opt(&["w", "no-warnings"], Set(|c| c.no_warnings = true)),
    opt(
        &["error-limit"],
        Parse(|p, _, v| {
            p.config.error_limit = crate::expr::parse_number(&v)
                .and_then(|n| usize::try_from(n).ok())
                .with_context(|| format!("--error-limit: '{v}' is not a number"))?;
            Ok(())
        }),
    ),
    opt(
        &["color-diagnostics"],
        Optional(|c, v| {
            c.color_diagnostics = match v {
                None => Some(true),
                Some(v) => match one_of("--color-diagnostics", &v, &["auto", "always", "never"])? {
                    "always" => Some(true),
                    "never" => Some(false),
                    _ => None,
                },
            };
            Ok(())
        }),
    ),
    opt(&["no-color-diagnostics"], Set(|c| c.color_diagnostics = Some(false))),
    opt(&["demangle"], Set(|c| c.demangle = true)),
    opt(&["no-demangle"], Set(|c| c.demangle = false)),
    ignored(
        &["warn-once"],
        Set(|_| {}),
        "--warn-once",
        "rivet reports each undefined symbol once already, with its first references (as lld does)",
    ),
    ignored(
        &["no-ld-generated-unwind-info"],
        Set(|_| {}),
        "--no-ld-generated-unwind-info",
        "rivet, like lld, writes no .eh_frame records for the code it generates (PLT entries), which is \
         what this option asks of GNU ld",
    ),
    opt(&["warn-rwx-segments"], Set(|c| c.warn_rwx_segments = true)),
    opt(&["no-warn-rwx-segments"], Set(|c| c.warn_rwx_segments = false)),
    ignored(
        &["no-warn-mismatch"],
        Set(|c| c.no_warn_mismatch = true),
        "--no-warn-mismatch",
        "rivet links only ELF64 of the link's machine (x86-64 or AArch64) and rejects anything else whatever this flag says",
    ),
    // A compiler driver's option that reached the linker (a build passing its flags to both): it
    // names the linker to run, which is this one already (mold ignores it too).
    ignored(
        &["fuse-ld"],
        Value(|_, _| {}),
        "-fuse-ld=NAME",
        "a compiler driver's option that a build passed to the linker too: it chooses the linker, which is \
         already running (mold ignores it as well)",
    ),
    // How the output is written, and by how many threads.
    opt(&["mmap-output-file"], Set(|c| c.mmap_output = Some(true))),
    opt(&["no-mmap-output-file"], Set(|c| c.mmap_output = Some(false))),
    opt(&["reuse-output"], Set(|c| c.reuse_output = Some(true))),
    opt(&["no-reuse-output"], Set(|c| c.reuse_output = Some(false))),
    opt(&["populate-output"], Set(|c| c.populate_output = Some(true))),
    opt(&["no-populate-output"], Set(|c| c.populate_output = Some(false))),
    opt(&["prefetch-inputs"], Set(|c| c.prefetch_inputs = Some(true))),
    opt(&["no-prefetch-inputs"], Set(|c| c.prefetch_inputs = Some(false))),
    opt(&["fsync"], Set(|c| c.fsync = true)),
    opt(&["no-fsync"], Set(|c| c.fsync = false)),
    opt(&["incremental"], Set(|c| c.incremental = true)),
    opt(&["no-incremental"], Set(|c| c.incremental = false)),
    // Only the automatic choice exists: the mode, prefetch and copy method each have their own
    // option to force them.
    opt(
        &["io-strategy"],
        Parse(|_, _, v| {
            ensure!(v == "auto", "--io-strategy={v}: not supported yet (only auto)");
            Ok(())
        }),
    ),
    opt(
        &["copy-method"],
        Parse(|p, _, v| {
            use rivet_io::CopyMethod;
            p.config.copy_method =
                match one_of("--copy-method", &v, &["memcpy", "copy-file-range", "sendfile", "auto"])? {
                    "memcpy" => Some(CopyMethod::Memcpy),
                    "copy-file-range" => Some(CopyMethod::CopyFileRange),
                    "sendfile" => Some(CopyMethod::Sendfile),
                    _ => None,
                };
            Ok(())
        }),
    ),
    opt(
        &["threads"],
        Optional(|c, v| {
            c.threads = match v {
                None => None,
                Some(v) => Some(
                    v.parse()
                        .ok()
                        .filter(|&n: &usize| n > 0)
                        .ok_or_else(|| fatal!("--threads: expected a positive number, got '{v}'"))?,
                ),
            };
            Ok(())
        }),
    ),
    opt(&["no-threads"], Set(|c| c.threads = Some(1))),
    opt(
        &["thread-count"],
        Parse(|p, _, v| {
            let n: usize = v.parse().map_err(|_| fatal!("--thread-count: expected a number, got '{v}'"))?;
            ensure!(n > 0, "--thread-count: expected a positive number, got '{v}'");
            p.config.threads = Some(n);
            Ok(())
        }),
    ),
    opt(&["detach"], Set(|c| c.detach = true)),
    opt(&["no-detach"], Set(|c| c.detach = false)),
    opt(&["fork"], Set(|c| c.fork = true)),
    opt(&["no-fork"], Set(|c| c.fork = false)),
    opt(&["quick-exit"], Set(|c| c.free_memory = false)),
    opt(&["no-quick-exit"], Set(|c| c.free_memory = true)),
];
