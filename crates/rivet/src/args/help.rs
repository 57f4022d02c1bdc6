//! `--help`: prose for the common and rivet's own options, then what the option tables declare:
//! the options accepted and ignored (with the reason), every accepted option, every `-z` keyword.
use super::options::Arity;
use super::z::{ZApply, Z_OPTIONS};

/// Every option the command line accepts and implements, as `--help` lists it: long names with
/// `--`, one-letter ones with `-`, `=VALUE` where a value follows.
pub(super) fn accepted_options() -> Vec<String> {
    let mut opts: Vec<(&str, Arity)> =
        super::all().flat_map(|o| o.names.iter().map(move |&n| (n, o.arity()))).collect();
    opts.sort_unstable_by_key(|&(n, _)| n);
    opts.into_iter()
        .filter(|(n, _)| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .map(|(n, arity)| {
            let dash = if n.len() == 1 { "-" } else { "--" };
            let value = match arity {
                Arity::Flag => "",
                Arity::OptionalValue => "[=VALUE]",
                Arity::Value if n.len() == 1 => " VALUE",
                Arity::Value => "=VALUE",
            };
            format!("{dash}{n}{value}")
        })
        .collect()
}

/// The `-z` keywords as `--help` lists them, `KEY=VALUE` for those that take a value.
pub(super) fn z_keywords() -> Vec<String> {
    let mut out = Vec::new();
    for z in Z_OPTIONS {
        for n in z.names {
            out.push(match z.apply {
                ZApply::Set(_) => n.to_string(),
                ZApply::Value(_) => format!("{n}=VALUE"),
            });
        }
    }
    out
}

/// The `--help` text.
pub fn usage() -> String {
    let mut s = String::from(
        "Usage: rivet [options] file...\n\
         An ELF linker for x86-64 and AArch64, a drop-in replacement for GNU ld (use it through gcc -B DIR, DIR/ld -> rivet).\n\n\
         Common options:\n  -o FILE, -l LIB, -L DIR, -static, -pie, -no-pie, -e SYM, -u SYM, -z KEY, --start-group/--end-group,\n  \
         --whole-archive, --push-state/--pop-state, --gc-sections, --build-id[=STYLE], --eh-frame-hdr, -s, -S, @FILE\n\n\
         rivet's own:\n  --print-timing            per-phase timing table on stderr\n  \
         --time-trace[=FILE]       Chrome trace of the link\n  \
         --mmap-output-file        build the output in a mapping of the file\n  \
         --no-mmap-output-file     build the output in memory and write it sequentially\n  \
         --reuse-output            rewrite the previous output in place, -shared outputs too\n  \
         --no-reuse-output         always build a new file and rename it over the previous output\n  \
         --populate-output         pre-fault the output mapping for writing when it is created (not where nothing\n                            \
         is reserved or memory is tight)\n  \
         --no-populate-output      let the output mapping's pages fault in as they are first written\n  \
         --fsync                   flush the output to disk before exiting (off by default)\n  \
         --incremental             keep a state beside the output (OUTPUT.rivet-incremental) and write nothing\n                            \
         when no input, option or the output changed since the last link\n  \
         --no-incremental          always link in full (the default)\n  \
         --threads=N               worker threads\n  \
         -run COMMAND ARGS...      run COMMAND with rivet as its linker under every name (ld, ld.bfd, ld.gold,\n                            \
         ld.lld, ld.mold): links to rivet first in PATH and COMPILER_PATH\n\n\
         Output forms:\n  \
         --separate-debug-file[=FILE]  debug sections, .gdb_index and .symtab to FILE (OUTPUT.dbg),\n                                \
         .gnu_debuglink in the output; written after the output is in place\n  \
         --no-separate-debug-file      keep them in the output\n  \
         --detach, --no-detach         write the separate debug file in the background (default) or not\n  \
         --fork, --no-fork             return once the link is complete, leaving the process teardown to a child (default) or not\n  \
         --oformat=binary              the raw memory image of the loaded sections (lld's)\n  \
         --oformat=elf64-x86-64, --oformat=elf64-littleaarch64\n                                \
         an ELF file of that machine (the default: the inputs')\n  \
         -n, --nmagic                  no page alignment, segments keep their permissions (lld's)\n  \
         -N, --omagic                  no page alignment, one read-write-execute segment\n  \
         -z separate-loadable-segments every segment starts a page in the file\n  \
         -z noseparate-code            read-only data and code share one segment\n  \
         --compress-debug-sections=zlib[:0-9]|zstd[:1-22]|none\n\n\
         Accepted and ignored:\n",
    );
    for (opt, why) in super::all().filter_map(|o| o.ignored) {
        s.push_str(&format!("  {opt}: {why}\n"));
    }
    // The whole accepted command line, so that configure scripts grepping for an option (libtool,
    // autoconf, gnulib look for --version-script, --as-needed, --gc-sections, -z relro...) get a
    // true answer.
    s.push_str("\nAll options (GNU ld syntax; a long option may also be written with one dash):\n");
    let mut line = String::from(" ");
    for opt in accepted_options() {
        if line.len() + opt.len() > 98 {
            s.push_str(&line);
            s.push('\n');
            line = String::from(" ");
        }
        line.push(' ');
        line.push_str(&opt);
    }
    s.push_str(&line);
    s.push_str("\n\n-z keywords:\n ");
    for k in z_keywords() {
        s.push(' ');
        s.push_str(&k);
    }
    // libtool builds shared libraries only when this line names an ELF target (it greps
    // ': supported targets:.* elf'), as GNU ld and lld print it.
    let (emulations, format, _, _) = crate::machine::Machine::names();
    s.push_str(&format!("\n\nrivet: supported targets: {format}\nrivet: supported emulations: {emulations}\n"));
    s
}
