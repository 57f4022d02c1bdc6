//! What the configuration means taken as a whole: derived answers (the runpath, where the debug
//! file goes, whether the link forks) and the checks a command line must pass before a link starts.
use super::config::Config;
use super::kinds::*;
use crate::diag::Result;
use crate::ensure;
use std::path::PathBuf;

impl Config {
    /// DT_RUNPATH's (DT_RPATH's) string: the `-rpath` directories joined with ':', a directory
    /// given again left out (GNU ld's rule: a value equal to a directory already in the list).
    pub fn runpath(&self) -> Option<String> {
        let mut dirs: Vec<&str> = Vec::new();
        for r in &self.rpath {
            if !dirs.iter().any(|d| d.split(':').any(|part| part == r)) {
                dirs.push(r);
            }
        }
        (!dirs.is_empty()).then(|| dirs.join(":"))
    }

    /// The separate debug file's path, when `--separate-debug-file` is in effect.
    pub fn debug_file_path(&self) -> Option<PathBuf> {
        Some(match self.separate_debug_file.as_ref()? {
            SeparateDebugFile::File(p) => p.clone(),
            SeparateDebugFile::Default => {
                let mut p = self.output.clone().into_os_string();
                p.push(".dbg");
                p.into()
            }
        })
    }

    /// Whether the separate debug file is written by a background process once the output is in
    /// place: `--detach`, unless a report on the link's own output (`--print-timing`, `--stats`,
    /// `--time-trace`) or `-o -` asks the link to finish first.
    pub fn detaches(&self) -> bool {
        self.separate_debug_file.is_some() && self.detach && self.may_fork()
    }

    /// Whether the link runs in a child process that releases the waiting command once the link
    /// is complete (`--fork`, or a detached separate debug file). Not when the link reports on
    /// itself after it ends (`--print-timing`, `--stats`, `--time-trace`), writes to standard
    /// output, or runs inside another program (`free_memory`).
    pub fn forks(&self) -> bool {
        (self.fork || (self.separate_debug_file.is_some() && self.detach)) && self.may_fork()
    }

    fn may_fork(&self) -> bool {
        !self.print_timing
            && !self.stats
            && self.time_trace.is_none()
            && !self.free_memory
            && self.output != std::path::Path::new("-")
    }
}

impl Config {
    /// Whether jumps and calls to a jump are retargeted to where that jump goes (lld's
    /// `--branch-to-branch`, on at `-O2` and above): not where the relocations are kept for a
    /// later tool (`-r`, `--emit-relocs`), which would then disagree with the code.
    pub fn branch_to_branch(&self) -> bool {
        self.branch_to_branch.unwrap_or(self.opt_level >= 2) && !self.relocatable && !self.emit_relocs
    }

    /// A dynamic list is in force (`--dynamic-list`, `--dynamic-list-data`): in a shared library,
    /// only the symbols it names stay preemptible.
    pub fn has_dynamic_list(&self) -> bool {
        !self.dynamic_lists.is_empty() || self.dynamic_list_data
    }

    /// What the command line must hold as a whole before a link starts (GNU ld's and lld's
    /// checks and words): some input, and -F/-f only for a shared library.
    pub fn validate(&self) -> Result<()> {
        let named = |i: &InputArg| matches!(i, InputArg::File { .. } | InputArg::Library { .. });
        ensure!(self.inputs.iter().any(named), "no input files");
        ensure!(self.shared || self.filters.is_empty(), "-F/--filter may not be used without -shared");
        ensure!(self.shared || self.auxiliaries.is_empty(), "-f/--auxiliary may not be used without -shared");
        // lld's words: a relocatable output is read by a linker, which needs its section headers.
        ensure!(!(self.relocatable && self.no_section_headers), "-r and -z nosectionheader may not be used together");
        ensure!(
            !(self.no_section_headers && self.separate_debug_file.is_some()),
            "--separate-debug-file and -z nosectionheader may not be used together: the output's \
             .gnu_debuglink section is found through its section headers"
        );
        ensure!(
            !(self.oformat_binary && self.separate_debug_file.is_some()),
            "--separate-debug-file: a raw binary (--oformat=binary) has no debug sections to separate"
        );
        Ok(())
    }
}
