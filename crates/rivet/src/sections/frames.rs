//! The `.eh_frame` pass: every live `.eh_frame` input section is split into records (CIEs and
//! FDEs) so that frames of dropped code go too. The records' data lives in `eh_frame`.
use crate::ctx::{EhFrames, Resolved};
use crate::diag::Result;
use crate::ids::SectionRef;
use crate::sections::eh_frame;

/// Splits every live `.eh_frame` input section into records, dropping FDEs of dropped code.
pub fn split_eh_frames(ctx: &mut Resolved) -> Result<EhFrames> {
    use rayon::prelude::*;
    // Objects in parallel (cxx-big: 1157 of them; its eh_frame phase took 10.5-15.3 ms on one
    // thread, 8.8-9.1 ms in parallel: `--print-timing`); results and errors are taken in file order.
    let ctx_ref = &*ctx;
    type Split = (SectionRef, Result<eh_frame::EhSection>);
    let split: Vec<Vec<Split>> = ctx_ref
        .file_order
        .par_iter()
        .with_max_len(4)
        .map(|&f| {
            let obj = &ctx_ref.objects[f];
            let mut out = Vec::new();
            for (si, sec) in obj.sections.iter().enumerate() {
                if !sec.live || sec.out.is_none() || !sec.is_eh_frame() {
                    continue;
                }
                let live = |rel: &crate::input::object::Rela| {
                    // A relocatable link (lld's, rivet's) turns the frame of a dropped COMDAT
                    // copy into R_NONE (type 0) against symbol 0: that code is gone.
                    let sym = rel.r_sym(object::LittleEndian, false);
                    if sym == 0 || rel.r_type(object::LittleEndian, false) == crate::arch::R_NONE {
                        return false;
                    }
                    let t = ctx_ref.target(f, sym);
                    match t {
                        crate::ctx::Target::Local(lf, ls) => {
                            let o = &ctx_ref.objects[lf];
                            o.sym_shndx(ls as usize).is_none_or(|s| o.sections[s as usize].live)
                        }
                        crate::ctx::Target::Global(_) => true,
                    }
                };
                out.push((SectionRef::new(f, si as u32), eh_frame::split(sec, &obj.name, live)));
            }
            out
        })
        .collect();
    let mut eh = rustc_hash::FxHashMap::default();
    for (key, r) in split.into_iter().flatten() {
        match r {
            Ok(e) => {
                eh.insert(key, e);
            }
            Err(e) => ctx.diag.error(e),
        }
    }
    // Records must follow each other with no gap: the unwinder that walks .eh_frame from
    // crtbeginT.o's __EH_FRAME_BEGIN__ (static executables) reads alignment padding as the zero
    // terminator and stops. Every record's length is a multiple of 4, so 4-byte alignment packs.
    for &r in eh.keys() {
        ctx.objects[r].align_log2 = 2;
    }
    ctx.diag.check()?;
    Ok(eh)
}
