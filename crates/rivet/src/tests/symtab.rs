//! The `.symtab` planner (`synthetic::symtab::plan`): which symbols the table lists, in which
//! order, and where their names go in `.strtab`.
use super::*;
use crate::synthetic::symtab::{plan, Plan, Source};
use object::elf;

const A: &str = "    .file \"a.s\"
    .text
    .type a_local,@function
a_local:
    ret
    .globl a_hidden
    .hidden a_hidden
    .type a_hidden,@function
a_hidden:
    call a_local
    ret
    .globl _start
    .type _start,@function
_start:
    call a_hidden
    call b_visible
    ret
    .data
    .quad a_local
";

const B: &str = "    .file \"b.s\"
    .text
    .type b_local,@function
b_local:
    ret
    .globl b_visible
    .type b_visible,@function
b_visible:
    call b_local
    ret
    .globl b_hidden
    .hidden b_hidden
b_hidden:
    ret
    .section .text.unused,\"ax\",@progbits
    .type dead_local,@function
dead_local:
    ret
    .globl dead_global
dead_global:
    call dead_local
    ret
";

/// An entry's name, found independently of the planner.
fn name(ctx: &Ctx, src: Source) -> String {
    let bytes = match src {
        Source::Local { file, sym } => {
            let obj = &ctx.objects[file];
            obj.sym_name(&obj.syms[sym as usize]).unwrap()
        }
        Source::Global { id, .. } => ctx.symbols[id].name,
        Source::Plt { .. } => panic!("these objects call nothing through a PLT"),
        Source::Thunk { .. } => panic!("x86-64 has no range-extension thunks"),
    };
    String::from_utf8_lossy(bytes).into_owned()
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

fn names(ctx: &Ctx, table: &Plan) -> Vec<String> {
    table.entries.iter().map(|&(src, _)| name(ctx, src)).collect()
}

/// Where each entry comes from: an object's local ('l'), a global made local ('h') or a global
/// ('g').
fn kinds(table: &Plan) -> String {
    table
        .entries
        .iter()
        .map(|&(src, _)| match src {
            Source::Local { .. } => 'l',
            Source::Global { local: true, .. } => 'h',
            Source::Global { local: false, .. } => 'g',
            Source::Plt { .. } => 'p',
            Source::Thunk { .. } => 't',
        })
        .collect()
}

/// The table of A and B without `--gc-sections`: locals file by file, then hidden globals made
/// local, then the visible ones, globals in the order resolution met them (`_start` first).
const ORDER: [&str; 10] =
    ["a.s", "a_local", "b.s", "b_local", "dead_local", "a_hidden", "b_hidden", "_start", "b_visible", "dead_global"];

#[test]
fn locals_then_hidden_globals_then_visible_globals() {
    let s = Scratch::new("symtab-order");
    let a = s.cc("a.s", A, &[]);
    let b = s.cc("b.s", B, &[]);
    let inputs = Inputs::new(&[&a, &b]);
    let ctx = inputs.ctx_with_output_sections();
    let table = plan(&ctx, &Default::default()).unwrap();
    // Every object's locals in command-line order, then the hidden globals (made local), then the
    // visible ones, globals in the order resolution met them (`_start` first: the entry point).
    assert_eq!(names(&ctx, &table), ORDER);
    assert_eq!(kinds(&table), "lllllhhggg");
    // The index of `_start` in `.symtab` (after the null entry).
    assert_eq!(table.first_global - table.sections.len() as u32, 8);
    assert_eq!(table.symtab_size(), 24 * (11 + table.sections.len() as u64));
    // (The output sections' STT_SECTION symbols come first: `table.sections`.) No input's section
    // symbol, although a.o has one (its .data refers to a_local through it).
    let fa = file(&ctx.objects, "/a.o");
    let has_section_symbol = |f: FileId| {
        let obj = &ctx.objects[f];
        (1..obj.first_global).any(|i| obj.syms[i].st_info & 0xf == elf::STT_SECTION)
    };
    assert!(has_section_symbol(fa));
    for &(src, _) in &table.entries {
        if let Source::Local { file, sym } = src {
            assert_ne!(ctx.objects[file].syms[sym as usize].st_info & 0xf, elf::STT_SECTION);
        }
    }
}

#[test]
fn symbols_of_dropped_sections_are_absent() {
    let s = Scratch::new("symtab-dropped");
    let a = s.cc("a.s", A, &[]);
    let b = s.cc("b.s", B, &[]);
    let inputs = Inputs::new(&["--gc-sections", &a, &b]);
    let ctx = inputs.ctx_with_output_sections();
    assert!(!ctx.objects[section_ref(&ctx.objects, "/b.o", ".text.unused")].live);
    let table = plan(&ctx, &Default::default()).unwrap();
    // dead_local and dead_global lived in .text.unused, which nothing reaches.
    assert_eq!(
        names(&ctx, &table),
        ["a.s", "a_local", "b.s", "b_local", "a_hidden", "b_hidden", "_start", "b_visible"]
    );
    assert_eq!(kinds(&table), "llllhhgg");
    assert_eq!(table.first_global - table.sections.len() as u32, 7);

    // A COMDAT group another file brought first is dropped with its symbols, local or global.
    let group = |user: &str| {
        format!(
            "    .section .text.inline_fn,\"axG\",@progbits,inline_fn,comdat
    .globl inline_fn
inline_fn:
    ret
    .type {user}_in_group,@function
{user}_in_group:
    ret
    .text
    .globl {user}
{user}:
    call inline_fn
    ret
"
        )
    };
    let one = s.cc("one.s", &group("one"), &[]);
    let two = s.cc("two.s", &group("two"), &[]);
    let inputs = Inputs::new(&["-e", "one", &one, &two]);
    let ctx = inputs.ctx_with_output_sections();
    let table = plan(&ctx, &Default::default()).unwrap();
    assert_eq!(names(&ctx, &table), ["one_in_group", "one", "inline_fn", "two"]);
    assert_eq!(table.first_global - table.sections.len() as u32, 2);
    let Source::Global { id, .. } = table.entries[2].0 else { panic!("inline_fn is global") };
    assert_eq!(ctx.symbols[id].def, defined_in(&ctx.objects, "/one.o", "inline_fn"));
}

const TEMPORARIES: &str = "    .file \"c.s\"
    .text
    .globl _start
_start:
    lea .Lstr(%rip), %rax
.Ltemp:
    ret
    .hidden c_hidden
    .globl c_hidden
c_hidden:
    ret
    .section .rodata.str1.1,\"aMS\",@progbits,1
.Lstr:
    .string \"hi\"
";

#[test]
fn discard_modes_decide_which_locals_stay() {
    let s = Scratch::new("symtab-discard");
    // -L keeps the assembler's `.L` labels in the object's symbol table.
    let c = s.cc("c.s", TEMPORARIES, &["-Wa,-L"]);
    let plan_for = |options: &[&str]| {
        let inputs = Inputs::new(&[options, &[c.as_str()]].concat());
        let ctx = inputs.ctx_with_output_sections();
        let table = plan(&ctx, &Default::default()).unwrap();
        (names(&ctx, &table), table.first_global - table.sections.len() as u32)
    };
    // --discard-none: every local with a name.
    assert_eq!(plan_for(&["--discard-none"]), (strings(&["c.s", ".Lstr", ".Ltemp", "c_hidden", "_start"]), 5));
    // -X / --discard-locals: no `.L` label.
    for option in ["-X", "--discard-locals"] {
        assert_eq!(plan_for(&[option]), (strings(&["c.s", "c_hidden", "_start"]), 3), "{option}");
    }
    // The default: no `.L` label in a SHF_MERGE section (.Lstr), as GNU ld and lld. (Outside
    // such sections GNU ld and lld keep `.L` labels by default and rivet does not; `.Ltemp` is
    // left out of this comparison.)
    let (names, first_global) = plan_for(&[]);
    let without_temp: Vec<&str> = names.iter().map(String::as_str).filter(|&n| n != ".Ltemp").collect();
    assert_eq!(without_temp, ["c.s", "c_hidden", "_start"]);
    assert_eq!(first_global as usize, names.len());
    // -x / --discard-all: no local of any object; a hidden global made local stays (GNU ld too).
    for option in ["-x", "--discard-all"] {
        assert_eq!(plan_for(&[option]), (strings(&["c_hidden", "_start"]), 2), "{option}");
    }
}

/// `.strtab` as the plan says it is: a NUL, then each entry's name and a NUL, in entry order.
fn check_strtab(ctx: &Ctx, table: &Plan, expected: &[String]) {
    assert_eq!(names(ctx, table), expected);
    let size = 1 + expected.iter().map(|n| n.len() + 1).sum::<usize>();
    assert_eq!(table.strtab_size, size as u64);
    let mut strtab = vec![0xaa; size];
    table.write_strtab(ctx, &mut strtab);
    let mut want = vec![0u8];
    for n in expected {
        want.extend_from_slice(n.as_bytes());
        want.push(0);
    }
    assert!(strtab == want, "strtab differs from the names in entry order");
    for (&(_, off), n) in table.entries.iter().zip(expected) {
        let at = off as usize;
        assert_eq!(&strtab[at..at + n.len()], n.as_bytes(), "name offset of {n}");
        assert_eq!(strtab[at + n.len()], 0, "{n} ends with a NUL");
    }
}

#[test]
fn strtab_holds_each_name_at_its_offset() {
    let s = Scratch::new("symtab-strtab");
    let a = s.cc("a.s", A, &[]);
    let b = s.cc("b.s", B, &[]);
    let inputs = Inputs::new(&[&a, &b]);
    let ctx = inputs.ctx_with_output_sections();
    let expected = strings(&ORDER);
    check_strtab(&ctx, &plan(&ctx, &Default::default()).unwrap(), &expected);
}

#[test]
fn strtab_of_more_entries_than_one_write_block() {
    // `write_strtab` writes blocks of 4096 entries in parallel: 10,000 locals make three blocks.
    let s = Scratch::new("symtab-blocks");
    let mut source = String::from("    .file \"many.s\"\n    .text\n    .globl _start\n_start:\n");
    for i in 0..10_000 {
        // Names of different lengths, so that block boundaries fall at irregular offsets.
        source.push_str(&format!("local_{}_{i}:\n    nop\n", "x".repeat(i % 7)));
    }
    let many = s.cc("many.s", &source, &[]);
    let inputs = Inputs::new(&[&many]);
    let ctx = inputs.ctx_with_output_sections();
    let table = plan(&ctx, &Default::default()).unwrap();
    let mut expected = vec!["many.s".to_string()];
    expected.extend((0..10_000).map(|i| format!("local_{}_{i}", "x".repeat(i % 7))));
    expected.push("_start".into());
    assert_eq!(table.first_global - table.sections.len() as u32, 10_002);
    check_strtab(&ctx, &table, &expected);
}
