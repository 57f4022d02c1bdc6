//! The kinds of value the configuration holds: inputs and their per-input state, and the enums
//! of the options that choose among a few behaviours.
use crate::diag::Result;
use crate::{ensure, fatal};
use std::path::PathBuf;

/// Per-input state that `-Bstatic`, `--as-needed`, `--whole-archive` and `--push-state/--pop-state`
/// change as the command line is read left to right.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputState {
    pub as_needed: bool,
    pub whole_archive: bool,
    /// `-Bstatic` (also `-static`, `-dn`, `-non_shared`): `-l` finds only `lib*.a`.
    pub static_only: bool,
    /// Between `--start-lib` and `--end-lib`: an object is loaded only when it defines a symbol
    /// that is needed, as an archive member is.
    pub lazy: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputArg {
    /// A path named on the command line (object, archive, shared object or linker script).
    File { path: PathBuf, state: InputState },
    /// `-lNAME` (`name` = "NAME") or `-l:FILE` (`name` = ":FILE").
    Library { name: String, state: InputState },
    /// `--start-group` / `-(`; also `--start-lib`, whose objects lld counts as one group (for
    /// `--warn-backrefs`).
    GroupStart,
    /// `--end-group` / `-)`; also `--end-lib`.
    GroupEnd,
    /// `-T FILE` / `--script=FILE`: read as a linker script whatever it looks like.
    Script { path: PathBuf },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildId {
    None,
    /// `--build-id` without a style: 20 bytes, the size of GNU ld's default (SHA-1), hashed as
    /// lld's default (`fast`) is, with XXH3 (`synthetic::chunks::notes::chunk_digests`).
    Default,
    Sha1,
    Md5,
    /// 32 bytes (`sha256`, and `fast` as mold makes it).
    Sha256,
    Uuid,
    Hex(Vec<u8>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashStyle {
    Sysv,
    Gnu,
    Both,
    /// mold's `none`: neither `.hash` nor `.gnu.hash` (an output nothing looks symbols up in).
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strip {
    None,
    Debug,
    All,
}

/// `--orphan-handling=MODE` (GNU ld, lld): what becomes of an input section that a linker
/// script's `SECTIONS` does not place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrphanHandling {
    /// Placed by the default rules (the default).
    Place,
    /// Placed, with a warning naming it.
    Warn,
    /// An error naming it.
    Error,
    /// Dropped from the output.
    Discard,
}

/// What a text relocation gets (the last of `-z text`, `-z notext`, `--warn-textrel` wins, as in
/// GNU ld).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextRel {
    /// `-z text`: an error.
    Error,
    /// `--warn-textrel` (`-warn-shared-textrel`), the default: linked, with a warning.
    Warn,
    /// `-z notext`: linked quietly.
    Allow,
}

/// Which of a shared library's own definitions bind inside it instead of staying preemptible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Symbolic {
    None,
    /// `-Bsymbolic`: every definition (and DF_SYMBOLIC is set).
    All,
    /// `-Bsymbolic-functions`: function definitions.
    Functions,
    /// `-Bsymbolic-non-weak`: non-weak definitions.
    NonWeak,
    /// `-Bsymbolic-non-weak-functions`: non-weak function definitions.
    NonWeakFunctions,
}

/// One `--shuffle-sections` / `--reverse-sections` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionShuffle {
    /// lld's `GLOB=SEED`: only input sections whose names match, in every output section but
    /// `.init` and `.fini`. None (mold's form): every input section of every allocated output
    /// section but the ones whose order is code (`.init`, `.fini`, `.ctors`, `.dtors`, and the
    /// init/fini arrays, which are reversed before their priority sort under `--reverse-sections`).
    pub glob: Option<String>,
    pub order: ShuffleOrder,
}

/// What a `SectionShuffle` does to the sections it selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShuffleOrder {
    /// Reverse them (`--reverse-sections`, lld's seed -1).
    Reverse,
    /// A pseudo-random permutation from this seed: the same seed gives the same output.
    Seed(u64),
}

/// How `-z cet-report`, `-z bti-report` and `-z gcs-report` report objects whose GNU property
/// note lacks a feature (x86's IBT or SHSTK, AArch64's BTI or GCS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FeatureReport {
    #[default]
    None,
    Warning,
    Error,
}

/// `-z gcs=implicit|always|never` (AArch64, lld's): whether the output is marked for the Guarded
/// Control Stack: when every object is (the default), always, or never.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GcsPolicy {
    #[default]
    Implicit,
    Always,
    Never,
}

/// `--icf`: which identical sections are folded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Icf {
    None,
    All,
    /// Only sections whose address is never taken.
    Safe,
}

/// `--separate-debug-file`'s value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeparateDebugFile {
    /// No file named: the output's path with `.dbg` appended.
    Default,
    File(PathBuf),
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebugCompression {
    None,
    Zlib,
    Zstd,
}

/// `--sort-section`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortSection {
    Name,
    /// Largest alignment first.
    Alignment,
}

/// Which local symbols `.symtab` keeps: `--discard-all` (`-x`), `--discard-locals` (`-X`, GNU ld's
/// default: not the assembler's `.L` labels), `--discard-none`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discard {
    All,
    Locals,
    None,
}

/// One word of `--section-order` (mold's syntax, words separated by blanks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SectionOrderItem {
    /// `TEXT`, `RODATA`, `DATA`, `BSS` (any case): the output sections of that kind not named
    /// elsewhere in the list.
    Group(SectionGroup),
    /// `EHDR`, `PHDR` (the ELF header, the program headers) or an output section's name.
    Section(String),
    /// `=ADDR`: the next item starts at this address.
    Addr(u64),
    /// `%ALIGN`: the next item starts at an address aligned to this.
    Align(u64),
    /// `!NAME`: defines the symbol NAME at the current address.
    Symbol(String),
}

/// The kinds of output sections `--section-order` names as groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SectionGroup {
    Text,
    Rodata,
    Data,
    Bss,
}

/// `--section-order`'s value: its words, each checked, with EHDR only as the first section
/// specifier (as mold requires).
pub(super) fn parse_section_order(v: &str) -> Result<Vec<SectionOrderItem>> {
    let number = |t: &str| -> Option<u64> {
        match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => t.parse().ok(),
        }
    };
    let mut items = Vec::new();
    for tok in v.split([' ', '\t']).filter(|t| !t.is_empty()) {
        let item = match tok.to_ascii_uppercase().as_str() {
            "TEXT" => SectionOrderItem::Group(SectionGroup::Text),
            "RODATA" => SectionOrderItem::Group(SectionGroup::Rodata),
            "DATA" => SectionOrderItem::Group(SectionGroup::Data),
            "BSS" => SectionOrderItem::Group(SectionGroup::Bss),
            "EHDR" | "PHDR" => SectionOrderItem::Section(tok.to_ascii_uppercase()),
            _ => {
                let bad = || fatal!("--section-order: parse error at '{tok}' in '{v}'");
                if let Some(a) = tok.strip_prefix('=') {
                    SectionOrderItem::Addr(number(a).ok_or_else(bad)?)
                } else if let Some(a) = tok.strip_prefix('%') {
                    let a = number(a).filter(|a| a.is_power_of_two()).ok_or_else(bad)?;
                    SectionOrderItem::Align(a)
                } else if let Some(sym) = tok.strip_prefix('!') {
                    SectionOrderItem::Symbol(sym.to_string())
                } else if tok.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                    SectionOrderItem::Section(tok.to_string())
                } else {
                    return Err(bad());
                }
            }
        };
        items.push(item);
    }
    let sections: Vec<&String> =
        items.iter().filter_map(|i| if let SectionOrderItem::Section(s) = i { Some(s) } else { None }).collect();
    ensure!(
        !sections.iter().skip(1).any(|s| *s == "EHDR"),
        "--section-order: EHDR must be the first section specifier: {v}"
    );
    Ok(items)
}
