//! Linker-script stubs, the kind Debian ships as `libc.so`:
//! `OUTPUT_FORMAT(elf64-x86-64) GROUP ( /lib/x86_64-linux-gnu/libc.so.6 libc_nonshared.a AS_NEEDED ( ... ) )`.
//! Takes the script's text, gives the inputs it names. Full linker scripts (SECTIONS, MEMORY, ...)
//! are not supported: they are a clear error.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptInput {
    /// A path (absolute or relative, as written) or, for `-lNAME` inside the script, `-lNAME`.
    pub name: String,
    /// Inside `AS_NEEDED ( ... )`.
    pub as_needed: bool,
    /// Named inside `GROUP ( ... )` (false: `INPUT ( ... )`).
    pub in_group: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScriptStub {
    pub inputs: Vec<ScriptInput>,
    pub output_format: Option<String>,
}

/// True when `data` looks like a linker script (text, starts with a comment or a known command),
/// so that the input loader can tell scripts from garbage.
pub fn looks_like_script(data: &[u8]) -> bool {
    let _ = data;
    todo!()
}

/// Parses a script stub. Supports comments `/* */`, `GROUP`, `INPUT`, `AS_NEEDED`, `OUTPUT_FORMAT`
/// (1 or 3 args), `OUTPUT_ARCH`, `SEARCH_DIR` (error: not supported), commas or spaces between names.
pub fn parse(text: &str) -> Result<ScriptStub, String> {
    let _ = text;
    todo!()
}
