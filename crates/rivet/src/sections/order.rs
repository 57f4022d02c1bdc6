//! The order of input sections inside their output sections when the command line asks for one:
//! `--symbol-ordering-file` (lld: the sections holding the listed symbols first, in the file's
//! order; `symbol_options::symbol_priorities` finds them), `--shuffle-sections` (mold's `[=SEED]` for every allocated
//! section, lld's `=GLOB=SEED` for the sections whose names match) and `--reverse-sections`
//! (mold). `output::build` applies them to each output section before the init/fini arrays are
//! sorted by priority, so constructors keep their priorities whatever the order asked for.
use crate::args::{SectionShuffle, ShuffleOrder};
use crate::ids::SectionRef;
use crate::input::object::Objects;
use crate::input::version_script::glob_match;
use rustc_hash::FxHashMap;

/// One input section description of `--section-ordering-file`: the sections it matches go to
/// output section `out`, first, in the file's order.
pub struct Placement {
    pub out: String,
    pub desc: crate::input::script::InputDesc,
}

/// Reads `--section-ordering-file` (GNU ld 2.43): the body of a `SECTIONS` command whose output
/// section descriptions only place input sections (`OUT : { FILE(PATTERNS) ... }`). Anything else
/// (addresses, assignments, `KEEP`, sorting) is refused, naming the file and the description.
pub fn read_section_ordering(path: &std::path::Path) -> crate::diag::Result<Vec<Placement>> {
    use crate::input::script::{OutputCmd, SectionsCmd, Sort};
    let name = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| crate::fatal!("cannot read --section-ordering-file {name}: {e}"))?;
    let script = crate::input::script::parse_with(&name, &format!("SECTIONS {{\n{text}\n}}"), &mut |inc: &str| {
        Err(crate::fatal!("{name}: INCLUDE {inc} is not allowed in a section ordering file"))
    })
    .map_err(|e| crate::fatal!("--section-ordering-file {name}: {e}"))?;
    let refuse = |what: &str, out: &str| {
        crate::fatal!("--section-ordering-file {name}: {what} in {out}: the file may only place input sections into output sections")
    };
    let mut placements = Vec::new();
    for cmd in &script.sections {
        let SectionsCmd::Output(o) = cmd else { return Err(refuse("an assignment or ASSERT", "SECTIONS")) };
        if o.addr.is_some() || o.ty.is_some() || o.lma.is_some() || o.align.is_some() || o.region.is_some() {
            return Err(refuse("an address, type, alignment or region", &o.name));
        }
        for c in &o.cmds {
            let OutputCmd::Input(desc) = c else {
                return Err(refuse("a command other than an input section description", &o.name));
            };
            if desc.keep || desc.sections.iter().any(|p| p.sort != (Sort::Unsorted, Sort::Unsorted)) {
                return Err(refuse("KEEP or SORT", &o.name));
            }
            placements.push(Placement { out: o.name.clone(), desc: desc.clone() });
        }
    }
    Ok(placements)
}

/// The first placement of `--section-ordering-file` that takes section `name` of file `file`
/// (named as scripts name it): its rank and output section.
pub fn placement<'p>(placements: &'p [Placement], file: &str, name: &[u8]) -> Option<(usize, &'p str)> {
    placements
        .iter()
        .enumerate()
        .find(|(_, p)| p.desc.pattern_match(file, name).is_some())
        .map(|(i, p)| (i, p.out.as_str()))
}

/// What `output::build` reorders members by.
#[derive(Default)]
pub struct Ordering<'c> {
    /// `--section-ordering-file`'s placements (empty without it).
    pub placements: Vec<Placement>,
    pub shuffles: &'c [SectionShuffle],
    /// `--symbol-ordering-file`: each listed section's priority (lower first; unlisted ones are 0
    /// and keep their order after the listed ones).
    pub priority: FxHashMap<SectionRef, i64>,
    /// `--section-align=NAME=ALIGN`: (output section name, alignment).
    pub section_align: &'c [(String, u64)],
    /// `--unique=PATTERN`: the globs whose input sections get output sections of their own.
    pub unique: &'c [String],
}

/// Output sections whose members' order is code, never reordered: `.init` and `.fini` are one
/// function cut across crti.o, the objects and crtn.o.
pub fn is_code_order(name: &str) -> bool {
    matches!(name, ".init" | ".fini")
}

/// The init/fini arrays and `.ctors`/`.dtors`: mold leaves them out of `--shuffle-sections`, and
/// reverses the arrays before their priority sort under `--reverse-sections`.
pub fn is_table(name: &str) -> bool {
    matches!(name, ".init_array" | ".fini_array" | ".preinit_array" | ".ctors" | ".dtors")
}

/// Reorders `os.members` as `order` asks: shuffles and reversals in command-line order, then the
/// symbol ordering file's priorities (a stable sort, so what is not listed keeps its order).
pub fn apply(os_name: &str, alloc: bool, members: &mut [SectionRef], objects: &Objects, order: &Ordering) {
    if is_code_order(os_name) {
        return;
    }
    for s in order.shuffles {
        match &s.glob {
            None if !alloc => {}
            None if is_table(os_name) => {
                if s.order == ShuffleOrder::Reverse && os_name != ".ctors" && os_name != ".dtors" {
                    members.reverse();
                }
            }
            None => permute(members, s.order, os_name),
            Some(glob) => {
                let picked: Vec<usize> = (0..members.len())
                    .filter(|&i| glob_match(glob.as_bytes(), objects.section_name(members[i])))
                    .collect();
                let mut chosen: Vec<SectionRef> = picked.iter().map(|&i| members[i]).collect();
                permute(&mut chosen, s.order, os_name);
                for (&i, r) in picked.iter().zip(chosen) {
                    members[i] = r;
                }
            }
        }
    }
    if !order.priority.is_empty() {
        members.sort_by_key(|r| order.priority.get(r).copied().unwrap_or(0));
    }
}

/// A generator of random numbers (splitmix64) seeded by `seed` and `key`, so that each key gets
/// its own sequence and a seed always the same one.
pub fn seeded(seed: u64, key: &str) -> impl FnMut() -> u64 {
    // FNV-1a of the key: stable across builds of rivet, unlike the hasher of the symbol table.
    let key_hash = key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    let mut state = seed ^ key_hash;
    move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Reverses `v`, or permutes it (Fisher-Yates) with a generator seeded by `seed` and the output
/// section's name, so that each section gets its own permutation and a seed always the same one.
fn permute<T>(v: &mut [T], order: ShuffleOrder, section: &str) {
    let seed = match order {
        ShuffleOrder::Reverse => return v.reverse(),
        ShuffleOrder::Seed(seed) => seed,
    };
    let mut next = seeded(seed, section);
    for i in (1..v.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_depend_on_the_seed_and_the_section() {
        let v: Vec<u32> = (0..100).collect();
        let shuffled = |seed, name| {
            let mut w = v.clone();
            permute(&mut w, ShuffleOrder::Seed(seed), name);
            w
        };
        assert_eq!(shuffled(42, ".text"), shuffled(42, ".text"));
        assert_ne!(shuffled(42, ".text"), v);
        assert_ne!(shuffled(42, ".text"), shuffled(5, ".text"));
        assert_ne!(shuffled(42, ".text"), shuffled(42, ".data"));
        let mut sorted = shuffled(7, ".text");
        sorted.sort();
        assert_eq!(sorted, v);
        let mut r = v.clone();
        permute(&mut r, ShuffleOrder::Reverse, ".text");
        assert_eq!(r.first(), Some(&99));
    }
}
