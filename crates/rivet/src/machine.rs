//! The machines rivet links for, by name and number: what the command line, linker scripts and
//! input headers are checked against, before a target's `arch::Arch` implementation is chosen.
//! Plain data, with no dependency on the link, so that the argument parser and the input readers
//! can use it (each implementation's constants are these).

/// What names and numbers stand for a machine, and its defaults.
pub struct Names {
    /// How messages name it.
    pub name: &'static str,
    pub e_machine: u16,
    /// `-m` emulations.
    pub emulations: &'static [&'static str],
    /// `--oformat` names of its ELF.
    pub output_formats: &'static [&'static str],
    /// The linker-script `OUTPUT_FORMAT`/`TARGET` name (a prefix: `elf64-x86-64-freebsd` too).
    pub bfd_format: &'static str,
    /// The linker-script `OUTPUT_ARCH` name (a prefix).
    pub bfd_arch: &'static str,
    pub dynamic_linker: &'static str,
    /// The directories GNU ld searches after the `-L` ones.
    pub library_dirs: &'static [&'static str],
    pub max_page_size: u64,
    pub common_page_size: u64,
}

/// x86-64 as Debian's GNU ld knows it.
pub const X86_64: Names = Names {
    name: "x86-64",
    e_machine: object::elf::EM_X86_64,
    emulations: &["elf_x86_64"],
    output_formats: &["elf64-x86-64", "elf64-x86_64"],
    bfd_format: "elf64-x86-64",
    bfd_arch: "i386:x86-64",
    dynamic_linker: "/lib64/ld-linux-x86-64.so.2",
    library_dirs: &[
        "/usr/local/lib/x86_64-linux-gnu",
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/local/lib64",
        "/lib64",
        "/usr/lib64",
        "/usr/local/lib",
        "/lib",
        "/usr/lib",
    ],
    max_page_size: 4096,
    common_page_size: 4096,
};

/// AArch64 (little-endian, LP64) as Debian's cross GNU ld (`aarch64-linux-gnu-ld`) knows it: the
/// multiarch directories it searches, and its default page sizes (64 KiB maximum, as lld's, so
/// that an output runs on kernels with 64 KiB pages; 4 KiB common).
pub const AARCH64: Names = Names {
    name: "AArch64",
    e_machine: object::elf::EM_AARCH64,
    emulations: &["aarch64linux", "aarch64elf"],
    output_formats: &["elf64-littleaarch64"],
    bfd_format: "elf64-littleaarch64",
    bfd_arch: "aarch64",
    dynamic_linker: "/lib/ld-linux-aarch64.so.1",
    library_dirs: &[
        "/usr/local/lib/aarch64-linux-gnu",
        "/lib/aarch64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/local/lib",
        "/lib",
        "/usr/lib",
        "/usr/aarch64-linux-gnu/lib",
    ],
    max_page_size: 0x10000,
    common_page_size: 4096,
};

/// The machines rivet links, by `e_machine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Machine {
    X86_64,
    Aarch64,
}

/// Every machine, in the order messages list them.
const ALL: [Machine; 2] = [Machine::X86_64, Machine::Aarch64];

impl Machine {
    /// The target of a link that names no ELF input and no `-m` (only archives, or only IR).
    pub const DEFAULT: Machine = Machine::X86_64;

    /// Its names and defaults.
    pub fn names_of(self) -> &'static Names {
        match self {
            Machine::X86_64 => &X86_64,
            Machine::Aarch64 => &AARCH64,
        }
    }

    /// The target of an input whose `e_machine` is `machine`.
    pub fn for_machine(machine: u16) -> Option<Machine> {
        ALL.into_iter().find(|m| m.names_of().e_machine == machine)
    }

    /// The target a `-m` emulation names, or why it is refused.
    pub fn for_emulation(name: &str) -> std::result::Result<Machine, &'static str> {
        match name {
            e if X86_64.emulations.contains(&e) => Ok(Machine::X86_64),
            e if AARCH64.emulations.contains(&e) => Ok(Machine::Aarch64),
            "aarch64linuxb" | "aarch64elfb" | "aarch64linux32b" | "aarch64elf32b" => {
                Err("big-endian AArch64 is not supported")
            }
            "aarch64linux32" | "aarch64elf32" => Err("the ILP32 AArch64 target is not supported"),
            t if t.starts_with("arm") => Err("the 32-bit ARM target is not supported"),
            t if t.starts_with("elf_i386") => Err("the i386 target is not supported"),
            "elf32_x86_64" => Err("the x32 target is not supported"),
            _ => Err("unsupported emulation"),
        }
    }

    /// The target an `--oformat` name is the ELF of.
    pub fn for_output_format(name: &str) -> Option<Machine> {
        ALL.into_iter().find(|m| m.names_of().output_formats.contains(&name))
    }

    /// The target a linker script's `OUTPUT_FORMAT` or `TARGET` name is the ELF of.
    pub fn for_bfd_format(name: &str) -> Option<Machine> {
        ALL.into_iter().find(|m| name.starts_with(m.names_of().bfd_format))
    }

    /// The target a linker script's `OUTPUT_ARCH` names.
    pub fn for_bfd_arch(name: &str) -> Option<Machine> {
        ALL.into_iter().find(|m| name.starts_with(m.names_of().bfd_arch))
    }

    /// The `-m`, `--oformat` and script names of every target, for messages and `--help`:
    /// (emulations, `--oformat` names, the script format, the script architecture).
    pub fn names() -> (String, String, String, String) {
        let join = |f: fn(&Names) -> String| ALL.iter().map(|m| f(m.names_of())).collect::<Vec<_>>().join(" ");
        (
            join(|n| n.emulations.join(" ")),
            join(|n| n.output_formats[0].to_string()),
            join(|n| n.bfd_format.to_string()),
            join(|n| n.bfd_arch.to_string()),
        )
    }

    /// The target whose library directories `-l` searches: `-m`'s (`emulation`), else the default.
    pub fn for_search(emulation: Option<&str>) -> Machine {
        emulation.and_then(|e| Machine::for_emulation(e).ok()).unwrap_or(Machine::DEFAULT)
    }

    /// The directories GNU ld searches after the `-L` ones for this target.
    pub fn library_dirs(self) -> &'static [&'static str] {
        self.names_of().library_dirs
    }

    /// The default `-z max-page-size` and `-z common-page-size`. (The command line's defaults
    /// are the default target's: a second target needs them settled once the target is known.)
    pub fn page_sizes(self) -> (u64, u64) {
        (self.names_of().max_page_size, self.names_of().common_page_size)
    }
}
