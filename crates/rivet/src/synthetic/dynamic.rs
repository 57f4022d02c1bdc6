//! The dynamic symbol table and its companions. Takes the resolved symbols and the relocation scan's
//! tables and gives `.dynsym` (imports first, then the hashed definitions in bucket order), `.dynstr`,
//! `.gnu.hash`, `.gnu.version`, `.gnu.version_r` and the DT_NEEDED list. Everything here depends only
//! on names, so it is built (and sized) before layout; addresses are filled in when writing.
use crate::ctx::{Ctx, OutputKind, Resolved, Target};
use crate::ids::{IdVec, SharedId, SymbolId};
use crate::linked::Linked;
use crate::resolve::Def;
use crate::synthetic::tables::Tables;
use object::elf::{self, Sym64, Verdaux, Verdef, Vernaux, Verneed};
use object::{pod, LittleEndian as LE, U16, U32, U64};
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

pub use super::dynamic_tables::{DynPlan, Versions};

/// The ELF SysV hash of a version name (`vna_hash`).
pub fn elf_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for &c in name {
        h = (h << 4).wrapping_add(c as u32);
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

pub fn gnu_hash(name: &[u8]) -> u32 {
    name.iter().fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(c as u32))
}

struct Strings {
    bytes: Vec<u8>,
    seen: HashMap<Vec<u8>, u32>,
}

impl Strings {
    fn add(&mut self, s: &[u8]) -> u32 {
        if let Some(&o) = self.seen.get(s) {
            return o;
        }
        let o = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s);
        self.bytes.push(0);
        self.seen.insert(s.to_vec(), o);
        o
    }
}

/// Shared libraries that must be DT_NEEDED: all but `--as-needed` ones nobody uses.
fn needed_libraries(ctx: &Resolved) -> IdVec<SharedId, bool> {
    let mut used: IdVec<SharedId, bool> = vec![false; ctx.shared.len()].into();
    for s in &ctx.symbols {
        if let Def::Shared { file, .. } = s.def {
            if s.referenced {
                used[file] = true;
            }
        }
    }
    let needed: IdVec<SharedId, bool> =
        ctx.shared.iter().zip(used.iter()).map(|(lib, &u)| u || !lib.as_needed).collect();
    if ctx.config.verbose {
        for (lib, &n) in ctx.shared.iter().zip(&needed) {
            if !n {
                eprintln!(
                    "rivet: {}: not recorded in DT_NEEDED (--as-needed and no symbol of it is used)",
                    lib.file.name
                );
            }
        }
    }
    needed
}

fn exported(ctx: &Resolved, id: SymbolId, wanted_by_libraries: &IdVec<SymbolId, bool>) -> bool {
    // Asked first: it settles most symbols of an executable without reading their definitions.
    let wanted = ctx.kind == OutputKind::Shared
        || ctx.config.export_dynamic
        || wanted_by_libraries[id]
        || ctx.symbols[id].dynamic_list;
    let s = &ctx.symbols[id];
    let definition = matches!(s.def, Def::Defined { .. } | Def::Common { .. } | Def::Absolute(_) | Def::Script(_));
    if !wanted || !(definition || s.is_start_stop()) || s.is_hidden() {
        return false;
    }
    match s.def {
        Def::Defined { file, sym } => {
            let obj = &ctx.objects[file];
            obj.sym_shndx(sym as usize).is_none_or(|sec| obj.sections[sec as usize].live)
        }
        _ => true,
    }
}

/// An executable exports what a shared library refers to, and also what a library defines too:
/// the library's own references then bind to the executable's definition (interposition).
/// By symbol id: the libraries' names are looked up once, in parallel, instead of hashing every
/// symbol's name into a set of them.
fn wanted_by_libraries(ctx: &Resolved) -> IdVec<SymbolId, bool> {
    let names: Vec<&[u8]> = ctx
        .shared
        .iter()
        .flat_map(|l| l.file.undefined.iter().map(|&(n, _)| n).chain(l.file.defined.iter().map(|d| d.name)))
        .collect();
    let ids: Vec<SymbolId> =
        names.par_iter().with_min_len(1024).filter_map(|&n| ctx.by_name.get(&ctx.symbols, n)).collect();
    let mut wanted: IdVec<SymbolId, bool> = vec![false; ctx.symbols.len()].into();
    for id in ids {
        wanted[id] = true;
    }
    wanted
}

/// The names a dynamic executable will export (for libraries and `--dynamic-list`): roots of
/// `--gc-sections`, since code reaches them from outside, as GNU ld keeps them.
pub fn export_roots(ctx: &Resolved) -> Vec<String> {
    let wanted = wanted_by_libraries(ctx);
    (0..ctx.symbols.len())
        .into_par_iter()
        .with_min_len(4096)
        .map(SymbolId::new)
        .filter(|&id| exported(ctx, id, &wanted))
        .map(|id| ctx.symbols[id].display())
        .collect()
}

/// The dynamic symbol plan of an output that has a dynamic section (a static PIE's is minimal);
/// an empty one for the others.
pub fn plan_for_output(ctx: &Ctx, got: &Tables) -> DynPlan {
    if ctx.kind.is_dynamic() || ctx.kind == crate::ctx::OutputKind::StaticPie {
        plan(ctx, got)
    } else {
        DynPlan::default()
    }
}

/// The dynamic symbol plan; `got`: the relocation scan's tables (which imports have an address
/// in this output, whether RELATIVE relocations are packed).
pub fn plan(ctx: &Ctx, got: &Tables) -> DynPlan {
    let mut strings = Strings { bytes: vec![0], seen: HashMap::default() };
    let mut p = DynPlan::default();
    let needed = needed_libraries(ctx);
    for (i, lib) in ctx.shared.iter_enumerated() {
        let off = strings.add(lib.file.needed_name.as_bytes());
        if needed[i] && !p.needed.contains(&off) {
            p.needed.push(off);
        }
    }
    if let Some(so) = &ctx.config.soname {
        p.soname = Some(strings.add(so.as_bytes()));
    }
    if let Some(runpath) = ctx.config.runpath() {
        p.runpath = Some(strings.add(runpath.as_bytes()));
    }
    p.filters = ctx.config.filters.iter().map(|f| strings.add(f.as_bytes())).collect();
    p.auxiliaries = ctx.config.auxiliaries.iter().map(|f| strings.add(f.as_bytes())).collect();
    // GNU ld's rule: the audit libraries of the shared libraries linked against audit this
    // output's dependencies, after the command line's.
    let depaudit: Vec<String> = (ctx.config.depaudit.iter().cloned())
        .chain(ctx.shared.iter().filter_map(|lib| lib.file.audit).map(|a| String::from_utf8_lossy(a).into_owned()))
        .collect();
    let joined = |list: &[String]| (!list.is_empty()).then(|| list.join(":"));
    p.audit = joined(&ctx.config.audit).map(|a| strings.add(a.as_bytes()));
    p.depaudit = joined(&depaudit).map(|a| strings.add(a.as_bytes()));
    let wanted = wanted_by_libraries(ctx);
    // Which symbols go in .dynsym, decided on every thread: Some(true) hashed, Some(false)
    // unhashed (imports without an address of their own).
    let class: Vec<Option<bool>> = (0..ctx.symbols.len())
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| {
            let id = SymbolId::new(i);
            let s = &ctx.symbols[id];
            let has_address = got.canonical.contains(&id) || got.copy_offset.contains_key(&id);
            match s.def {
                Def::Shared { .. } if s.referenced || has_address => Some(has_address),
                // An undefined symbol the loader is to look up (`Resolved::is_preemptible`: a shared
                // library's, or an undefined weak one under -z dynamic-undefined-weak); a hidden
                // one resolves to 0 here and is never imported.
                Def::Undefined | Def::Lazy { .. } if s.referenced && ctx.is_preemptible(Target::Global(id)) => {
                    Some(false)
                }
                _ if exported(ctx, id, &wanted) => Some(true),
                _ => None,
            }
        })
        .collect();
    let mut unhashed = Vec::new();
    let mut hashed = Vec::new();
    for (id, c) in ctx.symbols.ids().zip(class) {
        match c {
            Some(true) => hashed.push(id),
            Some(false) => unhashed.push(id),
            None => {}
        }
    }
    let nbuckets = (hashed.len() as u32 / 4).max(1);
    // Each name hashed once (a sort by a computed key hashed both names of every comparison:
    // 11% of shared-big's instructions).
    let mut hashed: Vec<(u32, SymbolId)> =
        hashed.into_iter().map(|id| (gnu_hash(dynamic_name(ctx.symbols[id].name)), id)).collect();
    hashed.sort_unstable_by_key(|&(h, id)| (h % nbuckets, id));
    p.first_hashed = 1 + unhashed.len() as u32;
    p.symbols = unhashed.into_iter().chain(hashed.iter().map(|&(_, id)| id)).collect();
    let hashes: Vec<u32> = hashed.into_iter().map(|(h, _)| h).collect();
    for (i, &id) in p.symbols.iter().enumerate() {
        p.index.insert(id, i as u32 + 1);
        p.name_off.push(strings.add(dynamic_name(ctx.symbols[id].name)));
    }
    build_versions(ctx, got, &mut p, &mut strings);
    p.gnu_hash = build_gnu_hash(&p, &hashes, nbuckets);
    p.dynstr = strings.bytes;
    p
}

/// `.gnu.version` and `.gnu.version_r`: every import that its library versions names that version
/// (`printf@GLIBC_2.2.5`), so the loader binds the version the program was linked against.
fn build_versions(ctx: &Ctx, got: &Tables, p: &mut DynPlan, strings: &mut Strings) {
    p.versym = vec![elf::VER_NDX_LOCAL; p.symbols.len() + 1];
    // (library, version name) → index, in first-use order per library.
    let mut per_lib: IdVec<SharedId, Vec<(&[u8], u16)>> = vec![Vec::new(); ctx.shared.len()].into();
    // Indices 2.. belong to this output's own version definitions; imported versions follow.
    let mut next: u16 = 2 + ctx.versions.nodes.len() as u16;
    for (i, &id) in p.symbols.iter().enumerate() {
        let s = &ctx.symbols[id];
        p.versym[i + 1] = ctx.versions.of_symbol.get(&id).copied().unwrap_or(elf::VER_NDX_GLOBAL);
        let Def::Shared { file, sym } = s.def else { continue };
        let Some(ver) = ctx.shared[file].file.defined[sym as usize].version else { continue };
        let list = &mut per_lib[file];
        let index = match list.iter().find(|(n, _)| *n == ver) {
            Some(&(_, ix)) => ix,
            None => {
                list.push((ver, next));
                next += 1;
                next - 1
            }
        };
        p.versym[i + 1] = index;
    }
    // Packed relative relocations: a glibc that cannot apply DT_RELR must refuse the program
    // rather than run it unrelocated, so it depends on glibc's GLIBC_ABI_DT_RELR version, added
    // to libc's entry when the program needs some GLIBC_2.* version of it (GNU ld and lld do so
    // for -z pack-relative-relocs; glibc refuses to load a DT_RELR object without it, so
    // --pack-dyn-relocs=relr gets it too).
    let packs = !got.relr.is_empty() || got.relr_got > 0;
    if packs && ctx.kind.is_dynamic() {
        for l in ctx.shared.ids() {
            let is_libc = ctx.shared[l].file.needed_name.starts_with("libc.so.");
            if is_libc && per_lib[l].iter().any(|(n, _)| n.starts_with(b"GLIBC_2.")) {
                per_lib[l].push((b"GLIBC_ABI_DT_RELR", next));
                next += 1;
            }
        }
    }
    let libs: Vec<SharedId> = ctx.shared.ids().filter(|&l| !per_lib[l].is_empty()).collect();
    for (n, &l) in libs.iter().enumerate() {
        let versions = &per_lib[l];
        let file = strings.add(ctx.shared[l].file.needed_name.as_bytes());
        let last = n + 1 == libs.len();
        const NEED: u32 = size_of::<Verneed<LE>>() as u32;
        const AUX: u32 = size_of::<Vernaux<LE>>() as u32;
        let next_off = if last { 0 } else { NEED + AUX * versions.len() as u32 };
        let need = Verneed {
            vn_version: U16::new(LE, elf::VER_NEED_CURRENT),
            vn_cnt: U16::new(LE, versions.len() as u16),
            vn_file: U32::new(LE, file),
            vn_aux: U32::new(LE, NEED),
            vn_next: U32::new(LE, next_off),
        };
        p.verneed.extend_from_slice(pod::bytes_of(&need));
        for (k, &(name, index)) in versions.iter().enumerate() {
            let aux = Vernaux {
                vna_hash: U32::new(LE, elf_hash(name)),
                vna_flags: U16::new(LE, 0),
                // The version index the .gnu.version entries of its symbols hold.
                vna_other: U16::new(LE, index),
                vna_name: U32::new(LE, strings.add(name)),
                vna_next: U32::new(LE, if k + 1 == versions.len() { 0 } else { AUX }),
            };
            p.verneed.extend_from_slice(pod::bytes_of(&aux));
        }
    }
    p.verneed_count = libs.len() as u32;
    build_verdefs(ctx, p, strings);
}

/// `.gnu.version_d`: the base version (the library's own name) and one entry per version-script
/// node, each naming its parent.
fn build_verdefs(ctx: &Ctx, p: &mut DynPlan, strings: &mut Strings) {
    if ctx.versions.nodes.is_empty() {
        return;
    }
    let base = match &ctx.config.soname {
        Some(s) => s.clone(),
        None => ctx.config.output.file_name().map_or_else(|| "a.out".into(), |n| n.to_string_lossy().into_owned()),
    };
    let mut defs: Vec<(u16, u16, Vec<&str>)> = vec![(elf::VER_FLG_BASE, 1, vec![base.as_str()])];
    for (i, (name, parent)) in ctx.versions.nodes.iter().enumerate() {
        let mut names = vec![name.as_str()];
        names.extend(parent.as_deref());
        defs.push((0, i as u16 + 2, names));
    }
    for (n, (flags, index, names)) in defs.iter().enumerate() {
        let last = n + 1 == defs.len();
        const DEF: u32 = size_of::<Verdef<LE>>() as u32;
        const AUX: u32 = size_of::<Verdaux<LE>>() as u32;
        let def = Verdef {
            vd_version: U16::new(LE, elf::VER_DEF_CURRENT),
            vd_flags: U16::new(LE, *flags),
            vd_ndx: U16::new(LE, *index),
            vd_cnt: U16::new(LE, names.len() as u16),
            vd_hash: U32::new(LE, elf_hash(names[0].as_bytes())),
            vd_aux: U32::new(LE, DEF),
            vd_next: U32::new(LE, if last { 0 } else { DEF + AUX * names.len() as u32 }),
        };
        p.verdef.extend_from_slice(pod::bytes_of(&def));
        for (k, name) in names.iter().enumerate() {
            let aux = Verdaux {
                vda_name: U32::new(LE, strings.add(name.as_bytes())),
                vda_next: U32::new(LE, if k + 1 == names.len() { 0 } else { AUX }),
            };
            p.verdef.extend_from_slice(pod::bytes_of(&aux));
        }
    }
    p.verdef_count = defs.len() as u32;
}

/// `.gnu.hash`: buckets, a Bloom filter and hash chains over the symbols from `first_hashed` on.
fn build_gnu_hash(p: &DynPlan, hashed: &[u32], nbuckets: u32) -> Vec<u8> {
    const SHIFT: u32 = 26;
    let bloom_words = ((hashed.len() / 8).max(1)).next_power_of_two();
    let mut bloom = vec![0u64; bloom_words];
    for &h in hashed {
        let w = (h as usize / 64) % bloom_words;
        bloom[w] |= (1 << (h % 64)) | (1 << ((h >> SHIFT) % 64));
    }
    let mut buckets = vec![0u32; nbuckets as usize];
    let mut chains = vec![0u32; hashed.len()];
    for (i, &h) in hashed.iter().enumerate() {
        let b = (h % nbuckets) as usize;
        if buckets[b] == 0 {
            buckets[b] = p.first_hashed + i as u32;
        }
        let last = hashed.get(i + 1).is_none_or(|&n| n % nbuckets != h % nbuckets);
        chains[i] = (h & !1) | last as u32;
    }
    let mut out = Vec::new();
    for v in [nbuckets, p.first_hashed, bloom_words as u32, SHIFT] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for w in bloom {
        out.extend_from_slice(&w.to_le_bytes());
    }
    for v in buckets.into_iter().chain(chains) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

impl DynPlan {
    /// Fills `.dynsym` (after layout): addresses of definitions, copies and canonical PLT stubs.
    pub fn write_dynsym(&self, ctx: &Linked, out: &mut [u8]) {
        // The null symbol, then one entry per dynamic symbol.
        let (entries, _) =
            pod::slice_from_bytes_mut::<Sym64<LE>>(out, self.symbols.len() + 1).expect("room for .dynsym");
        for (i, (e, &id)) in entries[1..].iter_mut().zip(&self.symbols).enumerate() {
            let s = &ctx.symbols[id];
            let t = Target::Global(id);
            // A reference-only symbol is weak when every reference to it is weak (crti.o's
            // `__gmon_start__`), so the loader does not insist on finding it.
            let weak = match s.def {
                Def::Undefined | Def::Lazy { .. } => !s.strong_ref,
                Def::Shared { .. }
                    if !ctx.plans.got.copy_offset.contains_key(&id) && !ctx.plans.got.canonical.contains(&id) =>
                {
                    !s.strong_ref
                }
                _ => s.weak,
            };
            let bind = if weak { elf::STB_WEAK } else { elf::STB_GLOBAL };
            let mut ty = ctx.sym_type(t);
            if ty == elf::STT_COMMON {
                ty = elf::STT_OBJECT;
            }
            let (shndx, mut value, size) = dynsym_place(ctx, id);
            // An executable's IFUNC that other modules see is its PLT entry, a plain function
            // (whose address every module then agrees on); an imported IFUNC is a function to
            // this executable too. Left as STT_GNU_IFUNC, the loader would call the PLT entry as
            // a resolver (mold suite: ifunc-dlopen crashed). Shared objects export their IFUNCs
            // as they are.
            if ty == elf::STT_GNU_IFUNC && ctx.kind.is_executable() {
                ty = elf::STT_FUNC;
                if matches!(s.def, Def::Defined { .. }) {
                    if let Some(i) = ctx.plans.got.plt_index(t) {
                        value = ctx.plt_entry_addr(i);
                    }
                }
            }
            *e = Sym64 {
                st_name: U32::new(LE, self.name_off[i]),
                st_info: (bind << 4) | ty,
                st_other: (if s.visibility == elf::STV_PROTECTED { elf::STV_PROTECTED } else { elf::STV_DEFAULT })
                    | (crate::arch::scan::other_flags(ctx, t) & ctx.plans.got.sto_flags),
                st_shndx: U16::new(LE, shndx),
                st_value: U64::new(LE, value),
                st_size: U64::new(LE, size),
            };
        }
    }
}

/// (section index, value, size) of a dynamic symbol.
fn dynsym_place(ctx: &Linked, id: SymbolId) -> (u16, u64, u64) {
    let t = Target::Global(id);
    let s = &ctx.symbols[id];
    match s.def {
        Def::Shared { .. } => {
            let size = ctx.shared_def(t).map_or(0, |d| d.size);
            if let Some(&(sec, _)) = ctx.plans.got.copy_offset.get(&id) {
                (ctx.layout.shndx(sec) as u16, ctx.raw_value(t), size)
            } else if ctx.plans.got.canonical.contains(&id) {
                (elf::SHN_UNDEF, ctx.value(t), 0)
            } else {
                (elf::SHN_UNDEF, 0, 0)
            }
        }
        Def::Defined { file, sym } | Def::Common { file, sym } => {
            let obj = &ctx.objects[file];
            let size = obj.syms[sym as usize].st_size.get(object::LittleEndian);
            let shndx = match (s.def, obj.sym_shndx(sym as usize)) {
                (Def::Common { .. }, _) => {
                    ctx.layout.inputs.commons.section_of(id).map_or(elf::SHN_ABS, |c| ctx.layout.shndx(c) as u16)
                }
                (_, Some(sec)) => {
                    let out = obj.sections[sec as usize].out;
                    out.and_then(|o| ctx.layout.sections.get(o)).map_or(elf::SHN_ABS, |o| o.shndx as u16)
                }
                _ => elf::SHN_ABS,
            };
            (shndx, ctx.symbol_table_value(t), size)
        }
        Def::Absolute(v) => (elf::SHN_ABS, v, 0),
        Def::Synthetic => match crate::linked::start_stop(ctx.placed, s.name) {
            Some((sec, value)) => (ctx.layout.shndx(sec) as u16, value, 0),
            None => (elf::SHN_ABS, ctx.addr.global[id], 0),
        },
        Def::Script(i) => {
            let sec = ctx.addr.script_secs.get(i as usize).copied().flatten();
            (sec.map_or(elf::SHN_ABS, |sec| ctx.layout.shndx(sec) as u16), ctx.raw_value(t), 0)
        }
        _ => (elf::SHN_UNDEF, 0, 0),
    }
}

/// The name a symbol has in `.dynsym`: `foo@V1` is exported as `foo` (its version says V1).
pub fn dynamic_name(name: &[u8]) -> &[u8] {
    crate::resolve::split_version(name).map_or(name, |(base, _, _)| base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_the_specs() {
        // Values from the gABI and the GNU hash description.
        assert_eq!(elf_hash(b"GLIBC_2.2.5"), 0x09691a75);
        assert_eq!(gnu_hash(b""), 5381);
        assert_eq!(gnu_hash(b"printf"), 0x156b2bb8);
    }
}
