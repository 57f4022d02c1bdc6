//! Parsers of option values shared by several options (hex addresses, build-id styles, shuffle
//! seeds, a choice among fixed words).
use super::kinds::*;
use super::parse_number;
use crate::diag::Result;
use crate::{bail, ensure, fatal};

/// `--shuffle-sections=VALUE`: lld's `GLOB=SEED` (seed -1 reverses, 0 picks a seed for this link)
/// or mold's `SEED`.
pub(super) fn shuffle(v: &str) -> Result<SectionShuffle> {
    if let Some((glob, seed)) = v.rsplit_once('=') {
        let seed: i64 =
            seed.parse().map_err(|_| fatal!("--shuffle-sections=: expected an integer, but got '{seed}'"))?;
        let order = match seed {
            -1 => ShuffleOrder::Reverse,
            0 => ShuffleOrder::Seed(random_seed()),
            n => ShuffleOrder::Seed(n as u64),
        };
        return Ok(SectionShuffle { glob: Some(glob.to_string()), order });
    }
    let seed = parse_number(v).ok_or_else(|| fatal!("--shuffle-sections: bad seed '{v}'"))?;
    Ok(SectionShuffle { glob: None, order: ShuffleOrder::Seed(seed) })
}

/// A seed that differs from link to link (the clock and the process id, mixed), for a shuffle
/// given none.
pub(super) fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    h.finish()
}

pub(super) fn one_of<'v>(opt: &str, v: &'v str, allowed: &[&str]) -> Result<&'v str> {
    ensure!(allowed.contains(&v), "{opt}: unknown value '{v}' (expected one of: {})", allowed.join(", "));
    Ok(v)
}

/// Section addresses (`-Ttext`, `--section-start`) are hexadecimal with or without `0x`, as in
/// GNU ld and lld.
pub(super) fn hex(s: &str) -> Option<u64> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    u64::from_str_radix(h, 16).ok()
}

/// `--package-metadata`'s value with `%XX` escapes decoded, as lld does (so that build systems can
/// pass JSON through shells and make).
pub(super) fn percent_decoded(v: &str) -> Result<Vec<u8>> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let byte =
            b.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u8::from_str_radix(h, 16).ok());
        match byte {
            Some(byte) => out.push(byte),
            None => bail!("--package-metadata: invalid string: {v}"),
        }
        i += 3;
    }
    Ok(out)
}

pub(super) fn build_id(v: &str) -> Result<BuildId> {
    Ok(match v {
        "sha1" | "tree" => BuildId::Sha1,
        "md5" => BuildId::Md5,
        "sha256" | "fast" => BuildId::Sha256,
        "uuid" => BuildId::Uuid,
        "none" => BuildId::None,
        _ => {
            let hex = v
                .strip_prefix("0x")
                .or_else(|| v.strip_prefix("0X"))
                .ok_or_else(|| fatal!("--build-id: unknown style '{v}'"))?;
            ensure!(
                !hex.is_empty() && hex.len() % 2 == 0 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
                "--build-id: bad hex string '{v}'"
            );
            BuildId::Hex((0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect())
        }
    })
}
