//! Identical code folding (`sections::icf::fold`): which functions fold into which, on code gcc
//! compiled a section per function (with its unwind records, which folding compares too).
use super::*;
use crate::arch::x86_64::X86_64;
use crate::sections::icf::{fold, Folded};

/// A section per function, in source order; gcc neither folds nor inlines them itself.
const FLAGS: &[&str] = &["-O2", "-ffunction-sections", "-fno-toplevel-reorder", "-fno-ipa-icf"];

/// Functions gcc compiles as written, each called, never inlined or cloned.
const PRELUDE: &str = "#define F __attribute__((noipa))\n";

/// The folds as (kept, removed) pairs of section names.
fn folds_by_name(ctx: &Resolved, folds: &[Folded]) -> Vec<(String, Vec<String>)> {
    let name = |r: SectionRef| String::from_utf8_lossy(ctx.objects.section_name(r)).into_owned();
    folds.iter().map(|g| (name(g.kept), g.removed.iter().map(|&r| name(r)).collect())).collect()
}

/// `removed` was folded into `kept`: not live, and redirected there; `kept` stays as it was.
fn assert_folded_into(ctx: &Resolved, suffix: &str, removed: &str, kept: &str) {
    let (r, k) = (section_ref(&ctx.objects, suffix, removed), section_ref(&ctx.objects, suffix, kept));
    assert!(!ctx.objects[r].live, "{removed} must be dropped");
    assert_eq!(ctx.objects.folded_into(r), Some(k), "{removed} must fold into {kept}");
    assert!(ctx.objects[k].live, "{kept} stays");
    assert_eq!(ctx.objects.folded_into(k), None);
}

fn assert_not_folded(ctx: &Resolved, suffix: &str, section: &str) {
    let r = section_ref(&ctx.objects, suffix, section);
    assert!(ctx.objects[r].live, "{section} must stay");
    assert_eq!(ctx.objects.folded_into(r), None, "{section} must not fold");
}

/// The bytes of two sections are the same (what makes a test about their relocations meaningful).
fn assert_same_bytes(ctx: &Resolved, suffix: &str, a: &str, b: &str) {
    let (a, b) = (section_ref(&ctx.objects, suffix, a), section_ref(&ctx.objects, suffix, b));
    assert_eq!(ctx.objects[a].data, ctx.objects[b].data);
    assert!(!ctx.objects[a].data.is_empty());
}

const SAME: &str = "F int g(int x) { return x ^ 0x55; }
F int first(int x) { return g(x) * 3 + 1; }
F int second(int x) { return g(x) * 3 + 1; }
";

#[test]
fn identical_functions_with_identical_relocations_fold() {
    let s = Scratch::new("icf-same");
    let obj = s.cc("same.c", &format!("{PRELUDE}{SAME}int _start(void) {{ return first(1) + second(2); }}\n"), FLAGS);
    for safe in [false, true] {
        let inputs = Inputs::new(&[&obj]);
        let mut ctx = inputs.ctx();
        let folds = fold::<X86_64>(&mut ctx, safe);
        assert_eq!(folds_by_name(&ctx, &folds), [(".text.first".into(), vec![".text.second".into()])], "safe {safe}");
        assert_folded_into(&ctx, "/same.o", ".text.second", ".text.first");
        assert_not_folded(&ctx, "/same.o", ".text.g");
    }
}

#[test]
fn functions_differing_in_one_relocation_target_do_not_fold() {
    let s = Scratch::new("icf-target");
    let source = format!(
        "{PRELUDE}F int g(int x) {{ return x ^ 0x55; }}
F int h(int x) {{ return x ^ 0x66; }}
F int first(int x) {{ return g(x) * 3 + 1; }}
F int second(int x) {{ return h(x) * 3 + 1; }}
int _start(void) {{ return first(1) + second(2); }}
"
    );
    let obj = s.cc("target.c", &source, FLAGS);
    let inputs = Inputs::new(&[&obj]);
    let mut ctx = inputs.ctx();
    assert_same_bytes(&ctx, "/target.o", ".text.first", ".text.second");
    let folds = fold::<X86_64>(&mut ctx, false);
    assert_eq!(folds_by_name(&ctx, &folds), []);
    for f in [".text.first", ".text.second", ".text.g", ".text.h"] {
        assert_not_folded(&ctx, "/target.o", f);
    }
}

#[test]
fn mutually_recursive_copies_fold_together() {
    let s = Scratch::new("icf-cycle");
    // even1/odd1 and even2/odd2 call each other: each pair's calls go to the other pair's copies
    // only through the cycle. even3 is even1's bytes, but its odd3 returns 2 where odd1 returns
    // 0: refinement must split even3 from even1 through its call.
    let pair = |n: u32, odd_zero: u32| {
        format!(
            "F unsigned odd{n}(unsigned n);
F unsigned even{n}(unsigned n) {{ return n == 0 ? 1 : odd{n}(n - 1); }}
F unsigned odd{n}(unsigned n) {{ return n == 0 ? {odd_zero} : even{n}(n - 1); }}
"
        )
    };
    let source = format!(
        "{PRELUDE}{}{}{}unsigned _start(void) {{ return even1(5) + even2(6) + even3(7); }}\n",
        pair(1, 0),
        pair(2, 0),
        pair(3, 2)
    );
    let obj = s.cc("cycle.c", &source, FLAGS);
    let inputs = Inputs::new(&[&obj]);
    let mut ctx = inputs.ctx();
    assert_same_bytes(&ctx, "/cycle.o", ".text.even1", ".text.even3");
    let folds = fold::<X86_64>(&mut ctx, false);
    assert_eq!(
        folds_by_name(&ctx, &folds),
        [(".text.even1".into(), vec![".text.even2".into()]), (".text.odd1".into(), vec![".text.odd2".into()])]
    );
    assert_folded_into(&ctx, "/cycle.o", ".text.even2", ".text.even1");
    assert_folded_into(&ctx, "/cycle.o", ".text.odd2", ".text.odd1");
    assert_not_folded(&ctx, "/cycle.o", ".text.even3");
    assert_not_folded(&ctx, "/cycle.o", ".text.odd3");
}

#[test]
fn a_difference_two_calls_away_keeps_callers_apart() {
    let s = Scratch::new("icf-chain");
    // a1 → b1 → c1 and a2 → b2 → c2: only the c's differ, so the first round splits b1 from b2
    // and only the second splits a1 from a2.
    let source = format!(
        "{PRELUDE}F int c1(int x) {{ return x + 1; }}
F int c2(int x) {{ return x + 2; }}
F int b1(int x) {{ return c1(x) * 5; }}
F int b2(int x) {{ return c2(x) * 5; }}
F int a1(int x) {{ return b1(x) * 7; }}
F int a2(int x) {{ return b2(x) * 7; }}
int _start(void) {{ return a1(1) + a2(2); }}
"
    );
    let obj = s.cc("chain.c", &source, FLAGS);
    let inputs = Inputs::new(&[&obj]);
    let mut ctx = inputs.ctx();
    assert_same_bytes(&ctx, "/chain.o", ".text.a1", ".text.a2");
    assert_same_bytes(&ctx, "/chain.o", ".text.b1", ".text.b2");
    let folds = fold::<X86_64>(&mut ctx, false);
    assert_eq!(folds_by_name(&ctx, &folds), []);
    for f in ["a1", "a2", "b1", "b2", "c1", "c2"] {
        assert_not_folded(&ctx, "/chain.o", &format!(".text.{f}"));
    }
}

#[test]
fn safe_keeps_a_function_whose_address_is_taken_and_all_folds_it() {
    let s = Scratch::new("icf-address");
    let source = format!(
        "{PRELUDE}{SAME}int (*take(void))(int) {{ return second; }}
int _start(void) {{ return first(1) + take()(2); }}
"
    );
    let obj = s.cc("address.c", &source, FLAGS);
    let inputs = Inputs::new(&[&obj]);
    let mut ctx = inputs.ctx();
    // `take` loads second's address: a relocation other than a call (PLT32) names it.
    let f = file(&ctx.objects, "/address.o");
    let second = sym_index(&ctx.objects[f], "second");
    let take = section_ref(&ctx.objects, "/address.o", ".text.take");
    assert!(ctx.objects[take]
        .relas
        .iter()
        .any(|r| r.r_sym(LE, false) == second && r.r_type(LE, false) != object::elf::R_X86_64_PLT32));
    let folds = fold::<X86_64>(&mut ctx, true);
    assert_eq!(folds_by_name(&ctx, &folds), []);
    assert_not_folded(&ctx, "/address.o", ".text.second");

    let mut ctx = inputs.ctx();
    let folds = fold::<X86_64>(&mut ctx, false);
    assert_eq!(folds_by_name(&ctx, &folds), [(".text.first".into(), vec![".text.second".into()])]);
    assert_folded_into(&ctx, "/address.o", ".text.second", ".text.first");
}

#[test]
fn an_exported_function_of_a_shared_output_never_folds() {
    let s = Scratch::new("icf-exported");
    let pic = [FLAGS, &["-fPIC"]].concat();
    // `last` keeps `second` from being the file's last function, whose FDE the assembler pads to
    // the section's alignment with DW_CFA_nops: FDE bytes differing so, the two would not fold.
    let source = format!("{SAME}F int last(int x) {{ return x; }}\n");
    let exported = s.cc("exported.c", &format!("{PRELUDE}{source}"), &pic);
    let hidden = s.cc(
        "hidden.c",
        &format!("{PRELUDE}#pragma GCC visibility push(hidden)\n{source}#pragma GCC visibility pop\n"),
        &pic,
    );
    // first and second are exported by a shared library, and by an executable with -E.
    for args in [&["-shared", &exported][..], &["--export-dynamic", "-pie", &exported]] {
        let inputs = Inputs::new(args);
        let mut ctx = inputs.ctx();
        assert_same_bytes(&ctx, "/exported.o", ".text.first", ".text.second");
        let folds = fold::<X86_64>(&mut ctx, false);
        assert_eq!(folds_by_name(&ctx, &folds), [], "{args:?}");
        assert_not_folded(&ctx, "/exported.o", ".text.first");
        assert_not_folded(&ctx, "/exported.o", ".text.second");
    }
    // Hidden, they are not exported: they fold.
    let inputs = Inputs::new(&["-shared", &hidden]);
    let mut ctx = inputs.ctx();
    let folds = fold::<X86_64>(&mut ctx, false);
    assert_eq!(folds_by_name(&ctx, &folds), [(".text.first".into(), vec![".text.second".into()])]);
    assert_folded_into(&ctx, "/hidden.o", ".text.second", ".text.first");
}

#[test]
fn the_last_function_of_a_file_folds_too() {
    // `second` is the file's last function: the assembler pads its FDE to the section's alignment
    // with DW_CFA_nops, so its FDE bytes differ from `first`'s by trailing zeros only.
    let s = Scratch::new("icf-last");
    let pic = [FLAGS, &["-fPIC", "-fasynchronous-unwind-tables"]].concat();
    let source = format!("{PRELUDE}#pragma GCC visibility push(hidden)\n{SAME}#pragma GCC visibility pop\n");
    let obj = s.cc("last.c", &source, &pic);
    let inputs = Inputs::new(&["-shared", &obj]);
    let mut ctx = inputs.ctx();
    let folds = fold::<X86_64>(&mut ctx, false);
    assert_eq!(folds_by_name(&ctx, &folds), [(".text.first".into(), vec![".text.second".into()])]);
    assert_folded_into(&ctx, "/last.o", ".text.second", ".text.first");
}
