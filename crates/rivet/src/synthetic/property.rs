//! GNU property notes (`.note.gnu.property`, NT_GNU_PROPERTY_TYPE_0): reads each input object's
//! properties of the link's machine, merges them over the link, and writes the output's single note
//! (covered by PT_GNU_PROPERTY, which the loader and kernel read to enable CET or BTI). Property
//! types from 0xc0000000 up are the processor's: one number means another property on each
//! machine, so only the target's types are read.
//!
//! x86-64: merging follows lld for the CET bits and GNU ld for the rest, which lld drops:
//! - `X86_FEATURE_1_AND` (IBT, SHSTK) is ANDed: an object without the property clears it;
//!   `-z ibt` / `-z shstk` force the bits on.
//! - `X86_ISA_1_NEEDED` and the other "OR" properties (0xc0008000..0xc000ffff) are ORed over the
//!   objects that have them.
//! - `X86_ISA_1_USED`, `X86_FEATURE_2_USED` and the other "OR_AND" properties
//!   (0xc0010000..0xc0017fff) are ORed, but dropped when some object lacks them.
//! - `-z x86-64-baseline|v2|v3|v4` adds its level's bit to `X86_ISA_1_NEEDED`, as GNU ld does (the
//!   inputs' bits stay: gcc's start files say baseline).
//!
//! AArch64, as lld 19 merges it: `AARCH64_FEATURE_1_AND` (BTI, PAC, GCS, and any bit a later ABI
//! adds) is ANDed over the objects. `-z force-bti` and `-z pac-plt` set BTI and PAC in each object
//! that lacks them, with a warning naming it (`-z force-bti`'s only when `-z bti-report` does not
//! report the object already); `-z gcs=always|never` then sets or clears GCS; `-z bti-report` and
//! `-z gcs-report` warn about (or refuse) each object without BTI or GCS. The PAuth ABI's property
//! (`AARCH64_FEATURE_PAUTH`) is not read.
//!
//! Other property types are ignored. Shared libraries' notes do not take part (neither linker reads
//! them).
use crate::args::{Config, FeatureReport, GcsPolicy};
use crate::diag::{Context, Diag, Result};
use crate::ensure;
use crate::ids::FileId;
use crate::input::object::{ObjectFile, Objects};
use crate::machine::Machine;
use object::elf;

pub const FEATURE_1_AND: u32 = 0xc000_0002;
pub const FEATURE_1_IBT: u32 = 0x1;
pub const FEATURE_1_SHSTK: u32 = 0x2;
/// GNU_PROPERTY_X86_ISA_1_NEEDED, where `-z x86-64-v2`... add their level's bit.
pub const ISA_1_NEEDED: u32 = 0xc000_8002;
const OR_LO: u32 = 0xc000_8000;
const OR_HI: u32 = 0xc000_ffff;
const OR_AND_LO: u32 = 0xc001_0000;
const OR_AND_HI: u32 = 0xc001_7fff;

/// GNU_PROPERTY_AARCH64_FEATURE_1_AND and its bits: Branch Target Identification, Pointer
/// Authentication, Guarded Control Stack.
pub const AARCH64_FEATURE_1_AND: u32 = 0xc000_0000;
pub const AARCH64_FEATURE_1_BTI: u32 = 0x1;
pub const AARCH64_FEATURE_1_PAC: u32 = 0x2;
pub const AARCH64_FEATURE_1_GCS: u32 = 0x4;

/// An object's properties: (type, value), sorted by type, each type once.
pub type Properties = Vec<(u32, u32)>;

/// Whether `machine`'s merge keeps properties of type `ty`.
fn kept(machine: Machine, ty: u32) -> bool {
    match machine {
        Machine::X86_64 => {
            ty == FEATURE_1_AND || (OR_LO..=OR_HI).contains(&ty) || (OR_AND_LO..=OR_AND_HI).contains(&ty)
        }
        Machine::Aarch64 => ty == AARCH64_FEATURE_1_AND,
    }
}

/// The type of `machine`'s FEATURE_1_AND property (`X86_FEATURE_1_AND`, `AARCH64_FEATURE_1_AND`).
pub fn feature_1_and(machine: Machine) -> u32 {
    match machine {
        Machine::X86_64 => FEATURE_1_AND,
        Machine::Aarch64 => AARCH64_FEATURE_1_AND,
    }
}

/// The bits of `machine`'s FEATURE_1_AND property in `props` (0: none).
pub fn features(props: &Properties, machine: Machine) -> u32 {
    let ty = feature_1_and(machine);
    props.iter().find(|p| p.0 == ty).map_or(0, |p| p.1)
}

fn u32_at(d: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(d[off..off + 4].try_into().unwrap())
}

/// The properties of `machine` in one `.note.gnu.property` section's bytes. Several notes and
/// several entries of one type are ORed together (as lld does). `what` names the file in errors.
pub fn parse(data: &[u8], what: &str, machine: Machine) -> Result<Properties> {
    read_notes(data, machine).context(".note.gnu.property").context(what)
}

fn read_notes(data: &[u8], machine: Machine) -> Result<Properties> {
    let mut props: Properties = Vec::new();
    let mut at = 0usize;
    while at < data.len() {
        let rest = &data[at..];
        ensure!(rest.len() >= 16, "note header is truncated");
        let (namesz, descsz, ty) = (u32_at(rest, 0) as usize, u32_at(rest, 4) as usize, u32_at(rest, 8));
        // The name is padded to 4 bytes, the descriptor of a property note starts 8-aligned.
        let desc_off = (12 + namesz.div_ceil(4) * 4).next_multiple_of(8);
        let end = desc_off.checked_add(descsz).filter(|&e| e <= rest.len()).context("note is truncated")?;
        let name = &rest[12..(12 + namesz).min(rest.len())];
        if ty == elf::NT_GNU_PROPERTY_TYPE_0 && name == b"GNU\0" {
            let mut desc = &rest[desc_off..end];
            while !desc.is_empty() {
                ensure!(desc.len() >= 8, "property is truncated");
                let (pty, size) = (u32_at(desc, 0), u32_at(desc, 4) as usize);
                ensure!(size <= desc.len() - 8, "property {pty:#x} is larger than its note");
                if kept(machine, pty) {
                    ensure!(size == 4, "property {pty:#x} has {size} bytes of data, not 4");
                    let v = u32_at(desc, 8);
                    match props.iter_mut().find(|p| p.0 == pty) {
                        Some(p) => p.1 |= v,
                        None => props.push((pty, v)),
                    }
                }
                let step = 8 + size.next_multiple_of(8);
                desc = &desc[step.min(desc.len())..];
            }
        }
        // The next note starts 8-aligned.
        at += end.next_multiple_of(8);
    }
    props.sort_unstable();
    Ok(props)
}

/// The output's properties for `machine`, merged over the input objects in `file_order` (errors
/// for malformed notes, and the `-z cet-report`, `-z bti-report`... diagnostics, go to `diag`).
pub fn merge(config: &Config, objects: &Objects, file_order: &[FileId], diag: &Diag, machine: Machine) -> Properties {
    match machine {
        Machine::X86_64 => merge_x86(config, objects, file_order, diag),
        Machine::Aarch64 => merge_aarch64(config, objects, file_order, diag),
    }
}

/// The properties of `machine` in `obj`'s `.note.gnu.property` sections, ORed together.
fn object_properties(obj: &ObjectFile, machine: Machine, diag: &Diag) -> Properties {
    let mut props = Properties::new();
    let notes = (obj.sections.iter().enumerate())
        .filter(|&(i, s)| s.sh_type == elf::SHT_NOTE && obj.section_name(i) == b".note.gnu.property");
    for (_, s) in notes {
        match parse(s.data, &obj.name, machine) {
            Ok(p) => {
                for (ty, v) in p {
                    match props.iter_mut().find(|q| q.0 == ty) {
                        Some(q) => q.1 |= v,
                        None => props.push((ty, v)),
                    }
                }
            }
            Err(e) => diag.error(e),
        }
    }
    props
}

fn merge_x86(config: &Config, objects: &Objects, file_order: &[FileId], diag: &Diag) -> Properties {
    let forced = (if config.z_ibt { FEATURE_1_IBT } else { 0 }) | (if config.z_shstk { FEATURE_1_SHSTK } else { 0 });
    let mut out: Option<Properties> = None;
    let mut and = FEATURE_1_IBT | FEATURE_1_SHSTK;
    for &f in file_order {
        let obj = &objects[f];
        let props = object_properties(obj, Machine::X86_64, diag);
        let features = props.iter().find(|p| p.0 == FEATURE_1_AND).map_or(0, |p| p.1);
        if config.cet_report != FeatureReport::None {
            for (bit, name) in [(FEATURE_1_IBT, "IBT"), (FEATURE_1_SHSTK, "SHSTK")] {
                if features & bit == 0 {
                    let level = if config.cet_report == FeatureReport::Error { "error" } else { "warning" };
                    let msg = format!(
                        "{}: -cet-report={level}: missing GNU_PROPERTY_X86_FEATURE_1_{name} property",
                        obj.name
                    );
                    if config.cet_report == FeatureReport::Error {
                        diag.error(msg);
                    } else {
                        diag.warn(msg);
                    }
                }
            }
        }
        and &= features | forced;
        out = Some(match out {
            None => props.into_iter().filter(|p| p.0 != FEATURE_1_AND).collect(),
            Some(prev) => {
                let mut merged = Properties::new();
                for &(ty, v) in &prev {
                    let other = props.iter().find(|p| p.0 == ty).map(|p| p.1);
                    match other {
                        Some(w) => merged.push((ty, v | w)),
                        None if (OR_LO..=OR_HI).contains(&ty) => merged.push((ty, v)),
                        None => {}
                    }
                }
                for &(ty, v) in &props {
                    if (OR_LO..=OR_HI).contains(&ty) && !prev.iter().any(|p| p.0 == ty) {
                        merged.push((ty, v));
                    }
                }
                merged
            }
        });
    }
    let mut out = match out {
        Some(p) => p,
        None => {
            and = 0;
            Vec::new()
        }
    };
    and |= forced;
    if and != 0 {
        out.push((FEATURE_1_AND, and));
    }
    if config.isa_level != 0 {
        // The baseline is bit 0, v2 bit 1, v3 bit 2, v4 bit 3.
        let bit = 1u32 << (config.isa_level - 1);
        match out.iter_mut().find(|p| p.0 == ISA_1_NEEDED) {
            Some(p) => p.1 |= bit,
            None => out.push((ISA_1_NEEDED, bit)),
        }
    }
    out.sort_unstable();
    out
}

/// AArch64's merge (lld 19's): the objects' `AARCH64_FEATURE_1_AND` bits ANDed, each object's
/// first completed by `-z force-bti` and `-z pac-plt` (with their warnings), then `-z gcs`.
fn merge_aarch64(config: &Config, objects: &Objects, file_order: &[FileId], diag: &Diag) -> Properties {
    let forced = (if config.z_force_bti { AARCH64_FEATURE_1_BTI } else { 0 })
        | (if config.z_pac_plt { AARCH64_FEATURE_1_PAC } else { 0 });
    let mut and: Option<u32> = None;
    for &f in file_order {
        let obj = &objects[f];
        let mut features = features(&object_properties(obj, Machine::Aarch64, diag), Machine::Aarch64);
        // lld's words: the file, the option, the property it lacks.
        let missing = |bit: u32, option: &str| {
            let name = match bit {
                AARCH64_FEATURE_1_BTI => "BTI",
                AARCH64_FEATURE_1_PAC => "PAC",
                _ => "GCS",
            };
            format!("{}: {option}: file does not have GNU_PROPERTY_AARCH64_FEATURE_1_{name} property", obj.name)
        };
        for (report, bit, option) in [
            (config.bti_report, AARCH64_FEATURE_1_BTI, "-z bti-report"),
            (config.gcs_report, AARCH64_FEATURE_1_GCS, "-z gcs-report"),
        ] {
            if features & bit == 0 {
                match report {
                    FeatureReport::None => {}
                    FeatureReport::Warning => diag.warn(missing(bit, option)),
                    FeatureReport::Error => diag.error(missing(bit, option)),
                }
            }
        }
        if config.z_force_bti && features & AARCH64_FEATURE_1_BTI == 0 && config.bti_report == FeatureReport::None {
            diag.warn(missing(AARCH64_FEATURE_1_BTI, "-z force-bti"));
        }
        if config.z_pac_plt && features & AARCH64_FEATURE_1_PAC == 0 {
            diag.warn(missing(AARCH64_FEATURE_1_PAC, "-z pac-plt"));
        }
        features |= forced;
        and = Some(and.map_or(features, |a| a & features));
    }
    // No object at all: only what the options force.
    let mut and = and.unwrap_or(forced);
    match config.z_gcs {
        GcsPolicy::Implicit => {}
        GcsPolicy::Always => and |= AARCH64_FEATURE_1_GCS,
        GcsPolicy::Never => and &= !AARCH64_FEATURE_1_GCS,
    }
    if and == 0 {
        Vec::new()
    } else {
        vec![(AARCH64_FEATURE_1_AND, and)]
    }
}

/// The bytes of the output's note: one NT_GNU_PROPERTY_TYPE_0 note, 8-byte aligned entries.
pub fn size(props: &Properties) -> u64 {
    if props.is_empty() {
        0
    } else {
        16 + 16 * props.len() as u64
    }
}

pub fn write(props: &Properties, buf: &mut [u8]) {
    buf[0..4].copy_from_slice(&4u32.to_le_bytes());
    buf[4..8].copy_from_slice(&(16 * props.len() as u32).to_le_bytes());
    buf[8..12].copy_from_slice(&elf::NT_GNU_PROPERTY_TYPE_0.to_le_bytes());
    buf[12..16].copy_from_slice(b"GNU\0");
    for (i, &(ty, v)) in props.iter().enumerate() {
        let e = &mut buf[16 + 16 * i..32 + 16 * i];
        e[0..4].copy_from_slice(&ty.to_le_bytes());
        e[4..8].copy_from_slice(&4u32.to_le_bytes());
        e[8..12].copy_from_slice(&v.to_le_bytes());
        e[12..16].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let props = vec![(FEATURE_1_AND, 3), (0xc000_8002, 1)];
        let mut buf = vec![0u8; size(&props) as usize];
        write(&props, &mut buf);
        assert_eq!(parse(&buf, "a.o", Machine::X86_64).unwrap(), props);
        // Two notes in one section are ORed.
        let mut two = buf.clone();
        two.extend_from_slice(&buf);
        assert_eq!(parse(&two, "a.o", Machine::X86_64).unwrap(), props);
        assert!(parse(&buf[..20], "a.o", Machine::X86_64).unwrap_err().to_string().contains("a.o"));
        let mut long = buf.clone();
        long[20..24].copy_from_slice(&100u32.to_le_bytes());
        assert!(parse(&long, "a.o", Machine::X86_64).is_err());
    }

    /// Processor-specific types are read as the link's machine's only: AArch64's FEATURE_1_AND
    /// (0xc0000000) is nothing to x86-64, and x86's types nothing to AArch64.
    #[test]
    fn types_are_the_machines_own() {
        let props = vec![(AARCH64_FEATURE_1_AND, 3), (FEATURE_1_AND, 1), (0xc000_8002, 1)];
        let mut buf = vec![0u8; size(&props) as usize];
        write(&props, &mut buf);
        assert_eq!(parse(&buf, "a.o", Machine::Aarch64).unwrap(), [(AARCH64_FEATURE_1_AND, 3)]);
        assert_eq!(parse(&buf, "a.o", Machine::X86_64).unwrap(), [(FEATURE_1_AND, 1), (0xc000_8002, 1)]);
        let out = parse(&buf, "a.o", Machine::Aarch64).unwrap();
        assert_eq!(features(&out, Machine::Aarch64), 3);
        assert_eq!(features(&out, Machine::X86_64), 0);
    }
}
