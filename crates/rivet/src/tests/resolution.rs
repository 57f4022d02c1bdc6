//! Symbol resolution (`resolve::resolve`): which definition each name binds to, which archive
//! members are fetched, which COMDAT copies are kept, and what is an error. Each rule is the one
//! GNU ld follows.
use super::*;
use crate::ids::SharedId;
use object::elf;

#[test]
fn strong_definition_beats_weak_in_either_order() {
    let s = Scratch::new("strong-weak");
    let weak = s.cc("weak.c", "__attribute__((weak)) int pick(void) { return 1; }\n", &[]);
    let weak2 = s.cc("weak2.c", "__attribute__((weak)) int pick(void) { return 3; }\n", &[]);
    let strong = s.cc("strong.c", "int pick(void) { return 2; }\n", &[]);
    for order in [[&weak, &strong], [&strong, &weak]] {
        let inputs = Inputs::new(&[order[0], order[1]]);
        let res = inputs.resolve().unwrap();
        let pick = symbol(&res.symbols, &res.by_name, "pick");
        assert_eq!(pick.def, defined_in(&res.objects, "/strong.o", "pick"), "order {order:?}");
        assert!(!pick.weak);
    }
    // Of two weak definitions, the first stays.
    for (first, second, winner) in [(&weak, &weak2, "/weak.o"), (&weak2, &weak, "/weak2.o")] {
        let inputs = Inputs::new(&[first, second]);
        let res = inputs.resolve().unwrap();
        let pick = symbol(&res.symbols, &res.by_name, "pick");
        assert_eq!(pick.def, defined_in(&res.objects, winner, "pick"));
        assert!(pick.weak);
    }
}

#[test]
fn largest_common_wins_and_a_strong_definition_overrides_commons() {
    let s = Scratch::new("common");
    let small = s.cc("small.c", "char buf[16];\n", &["-fcommon"]);
    let big = s.cc("big.c", "char buf[64];\n", &["-fcommon"]);
    let def = s.cc("def.c", "char buf[8] = {1};\n", &[]);
    let weak_def = s.cc("weakdef.c", "__attribute__((weak)) char buf[8] = {1};\n", &[]);
    let common = |objects: &IdVec<FileId, ObjectFile>, suffix: &str| {
        let f = file(objects, suffix);
        let obj = &objects[f];
        assert_eq!(st_shndx(obj, "buf"), elf::SHN_COMMON, "{} must hold a common symbol", obj.name);
        Def::Common { file: f, sym: sym_index(obj, "buf") }
    };
    // The larger common wins whichever comes first; a weak definition does not override a
    // common symbol (in either order), a strong one does (in either order).
    let cases: [(&[&str], &str, bool); 6] = [
        (&[&small, &big], "/big.o", true),
        (&[&big, &small], "/big.o", true),
        (&[&small, &def, &big], "/def.o", false),
        (&[&big, &def], "/def.o", false),
        (&[&weak_def, &big], "/big.o", true),
        (&[&big, &weak_def], "/big.o", true),
    ];
    for (args, winner, is_common) in cases {
        let inputs = Inputs::new(args);
        let res = inputs.resolve().unwrap();
        let buf = symbol(&res.symbols, &res.by_name, "buf");
        let want = if is_common { common(&res.objects, winner) } else { defined_in(&res.objects, winner, "buf") };
        assert_eq!(buf.def, want, "inputs {:?}", names(&res.objects));
        assert!(!buf.weak);
    }
}

#[test]
fn only_a_strong_reference_fetches_an_archive_member() {
    let s = Scratch::new("lazy");
    let member = s.cc("member.c", "int member_fn(void) { return 3; }\nint member_other(void) { return 4; }\n", &[]);
    let lib = s.ar("libm.a", &[&member]);
    let weak_ref = s.cc(
        "weakref.c",
        "extern int member_fn(void) __attribute__((weak));\nint _start(void) { return member_fn ? member_fn() : 0; }\n",
        &[],
    );
    let strong_ref =
        s.cc("strongref.c", "extern int member_fn(void);\nint _start(void) { return member_fn(); }\n", &[]);

    let inputs = Inputs::new(&[&weak_ref, &lib]);
    let res = inputs.resolve().unwrap();
    assert_eq!(names(&res.objects), [weak_ref.as_str()], "a weak reference fetches nothing");
    let f = symbol(&res.symbols, &res.by_name, "member_fn");
    assert_eq!(f.def, Def::Lazy { archive: 1, member: 0 });
    assert!(f.referenced && !f.strong_ref);

    let inputs = Inputs::new(&[&strong_ref, &lib]);
    let res = inputs.resolve().unwrap();
    assert_eq!(names(&res.objects), [strong_ref.clone(), format!("{lib}(member.o)")]);
    let f = symbol(&res.symbols, &res.by_name, "member_fn");
    assert_eq!(f.def, defined_in(&res.objects, "(member.o)", "member_fn"));
    // The member comes whole: its other definitions too.
    let other = symbol(&res.symbols, &res.by_name, "member_other");
    assert_eq!(other.def, defined_in(&res.objects, "(member.o)", "member_other"));
}

#[test]
fn a_member_defining_an_already_defined_symbol_is_not_fetched() {
    let s = Scratch::new("defined");
    let member = s.cc("member.c", "int member_fn(void) { return 3; }\nint member_other(void) { return 4; }\n", &[]);
    let lib = s.ar("libm.a", &[&member]);
    let own = s.cc("own.c", "int member_fn(void) { return 9; }\nint _start(void) { return member_fn(); }\n", &[]);
    // The archive after the object (nothing is undefined when it is scanned) and before it (the
    // object's definition replaces the lazy one before any reference asks for it).
    for (args, archive_pos) in [([&own, &lib], 1), ([&lib, &own], 0)] {
        let inputs = Inputs::new(&args);
        let res = inputs.resolve().unwrap();
        assert_eq!(names(&res.objects), [own.as_str()]);
        let f = symbol(&res.symbols, &res.by_name, "member_fn");
        assert_eq!(f.def, defined_in(&res.objects, "/own.o", "member_fn"));
        let other = symbol(&res.symbols, &res.by_name, "member_other");
        assert_eq!(other.def, Def::Lazy { archive: archive_pos, member: 0 });
    }
}

/// Two copies of an inline function's COMDAT group (signed by the function, a global symbol) and
/// of a table's group (signed by a local symbol, which resolution finds by name).
fn comdat_source(value: u32, user: &str) -> String {
    format!(
        "    .section .text.inline_fn,\"axG\",@progbits,inline_fn,comdat
    .globl inline_fn
    .type inline_fn,@function
inline_fn:
    mov ${value}, %eax
    ret
    .section .rodata.table,\"aG\",@progbits,table_group,comdat
    .long {value}
    .text
    .globl {user}
{user}:
    call inline_fn
    ret
"
    )
}

#[test]
fn the_first_comdat_group_of_a_signature_is_kept() {
    let s = Scratch::new("comdat");
    let one = s.cc("one.s", &comdat_source(1, "user1"), &[]);
    let two = s.cc("two.s", &comdat_source(2, "user2"), &[]);
    for (args, kept, dropped) in [([&one, &two], "/one.o", "/two.o"), ([&two, &one], "/two.o", "/one.o")] {
        let inputs = Inputs::new(&args);
        let res = inputs.resolve().unwrap();
        let live = |suffix: &str, name: &str| res.objects[section_ref(&res.objects, suffix, name)].live;
        for group_member in [".text.inline_fn", ".rodata.table"] {
            assert!(live(kept, group_member), "{kept} {group_member}");
            assert!(!live(dropped, group_member), "{dropped} {group_member}");
        }
        // Only the group is dropped: the rest of the second file stays.
        assert!(live(dropped, ".text"));
        let f = symbol(&res.symbols, &res.by_name, "inline_fn");
        assert_eq!(f.def, defined_in(&res.objects, kept, "inline_fn"));
    }
}

#[test]
fn a_duplicate_strong_definition_is_an_error_naming_both_files() {
    let s = Scratch::new("duplicate");
    let a = s.cc("dup1.c", "int twice(void) { return 1; }\n", &[]);
    let b = s.cc("dup2.c", "int twice(void) { return 2; }\n", &[]);
    let inputs = Inputs::new(&[&a, &b]);
    let errors = inputs.resolve().err().expect("two strong definitions must fail");
    // lld's places: the source file (no DWARF here: the STT_FILE name), then the object, the
    // first definition named by its symbol, the second by its offset (lld's getObjMsg looks for
    // the file's own definitions only).
    let place = |src: &str, obj: &str| format!("{src}\n>>>            {obj}");
    let expected = format!(
        "duplicate symbol: twice\n>>> defined at {}\n>>> defined at {}",
        place("dup1.c", &format!("{a}:(twice)")),
        place("dup2.c", &format!("{b}:(.text+0x0)"))
    );
    assert_eq!(errors, [expected]);
    // --allow-multiple-definition (and its -z spelling) keeps the first, silently.
    for option in ["--allow-multiple-definition", "-zmuldefs"] {
        for (first, second, winner) in [(&a, &b, "/dup1.o"), (&b, &a, "/dup2.o")] {
            let inputs = Inputs::new(&[option, first, second]);
            let res = inputs.resolve().unwrap_or_else(|e| panic!("{option}: {e:?}"));
            let twice = symbol(&res.symbols, &res.by_name, "twice");
            assert_eq!(twice.def, defined_in(&res.objects, winner, "twice"), "{option}");
        }
    }
}

#[test]
fn wrap_binds_references_to_the_wrapper_and_real_to_the_original() {
    let s = Scratch::new("wrap");
    let main = s.cc("main.c", "int foo(void);\nint _start(void) { return foo(); }\n", &[]);
    let wrap = s.cc("wrap.c", "int __real_foo(void);\nint __wrap_foo(void) { return __real_foo() + 1; }\n", &[]);
    let foo = s.cc("foo.c", "int foo(void) { return 41; }\n", &[]);
    let inputs = Inputs::new(&["--wrap=foo", &main, &wrap, &foo]);
    let res = inputs.resolve().unwrap();
    // main.o's undefined `foo` is `__wrap_foo`, defined by wrap.o.
    let called = bound_to(&res.objects, "/main.o", "foo");
    assert_eq!(res.symbols[called].name, b"__wrap_foo");
    assert_eq!(res.symbols[called].def, defined_in(&res.objects, "/wrap.o", "__wrap_foo"));
    // wrap.o's undefined `__real_foo` is `foo`, defined by foo.o, whose definition keeps its name.
    let real = bound_to(&res.objects, "/wrap.o", "__real_foo");
    assert_eq!(real, id(&res.symbols, &res.by_name, "foo"));
    assert_eq!(res.symbols[real].def, defined_in(&res.objects, "/foo.o", "foo"));
    assert!(res.by_name.get(&res.symbols, b"__real_foo").is_none(), "no symbol is named __real_foo");
    // Without --wrap, main.o calls foo itself.
    let inputs = Inputs::new(&[&main, &wrap, &foo]);
    let res = inputs.resolve().unwrap();
    assert_eq!(bound_to(&res.objects, "/main.o", "foo"), id(&res.symbols, &res.by_name, "foo"));
}

#[test]
fn a_shared_library_defines_what_no_object_does() {
    let s = Scratch::new("shared");
    let lib = s.shared("libdep.so", "int lib_only(void) { return 7; }\nint both(void) { return 8; }\n");
    let main =
        s.cc("main.c", "int lib_only(void);\nint both(void);\nint _start(void) { return lib_only() + both(); }\n", &[]);
    let own = s.cc("both.c", "int both(void) { return 1; }\n", &[]);
    let in_lib = |res: &Resolution, name: &str| {
        let sym = res.shared[SharedId::new(0)].file.defined.iter().position(|d| d.name == name.as_bytes());
        Def::Shared { file: SharedId::new(0), sym: sym.expect("the library defines it") as u32 }
    };

    let inputs = Inputs::new(&[&main, &lib]);
    let res = inputs.resolve().unwrap();
    assert_eq!(res.shared.len(), 1);
    assert_eq!(symbol(&res.symbols, &res.by_name, "lib_only").def, in_lib(&res, "lib_only"));
    assert_eq!(symbol(&res.symbols, &res.by_name, "both").def, in_lib(&res, "both"));

    // An object's definition wins over the library's, before it or after it.
    for args in [[&main, &lib, &own], [&main, &own, &lib]] {
        let inputs = Inputs::new(&args);
        let res = inputs.resolve().unwrap();
        assert_eq!(symbol(&res.symbols, &res.by_name, "both").def, defined_in(&res.objects, "/both.o", "both"));
        assert_eq!(symbol(&res.symbols, &res.by_name, "lib_only").def, in_lib(&res, "lib_only"));
    }
}

/// The name table against a plain map: names interned in order get the next id the first time
/// and the same id after, through every growth of the table; hashes that agree in the bits a slot
/// keeps still tell names apart; `insert` remaps a name, and takes ids past any the table held
/// (symbols that were never interned), growing for them; prefetching changes nothing.
#[test]
fn symbol_index_matches_a_plain_map() {
    let names: Vec<Vec<u8>> = (0..20_000u32).map(|i| format!("name{}", i % 7_919).into_bytes()).collect();
    let mut symbols: IdVec<SymbolId, Symbol> = IdVec::new();
    let mut index = SymbolIndex::default();
    let mut plain: std::collections::HashMap<&[u8], SymbolId> = Default::default();
    for (k, name) in names.iter().enumerate() {
        let hash = crate::fx_hash(name);
        // Prefetching first, which must change nothing.
        index.prefetch_slot(hash);
        index.prefetch_symbol(&symbols, hash, k % 2 == 0);
        let id = index.intern_hashed(&mut symbols, name, hash);
        let want = *plain.entry(name).or_insert(id);
        assert_eq!(id, want, "{}", String::from_utf8_lossy(name));
        assert_eq!(symbols[id].name, &name[..]);
        // A probe with the right hash and a wrong name finds nothing.
        assert_eq!(index.get_hashed(&symbols, b"other", hash), None);
    }
    assert_eq!(symbols.len(), 7_919);
    for (name, &id) in &plain {
        assert_eq!(index.get(&symbols, name), Some(id));
    }
    assert!(!index.contains_key(&symbols, b"name7919"));
    // A second symbol of an existing name replaces it; a symbol far past the table's ids joins.
    for _ in 0..100_000 {
        symbols.push(Symbol::undefined(b"unindexed"));
    }
    let twin = symbols.push(Symbol::undefined(b"name5"));
    index.insert(&symbols, twin);
    assert_eq!(index.get(&symbols, b"name5"), Some(twin));
    let last = symbols.push(Symbol::undefined(b"last"));
    index.insert(&symbols, last);
    assert_eq!(index.get(&symbols, b"last"), Some(last));
    assert_eq!(index.get(&symbols, b"name6"), plain.get(&b"name6"[..]).copied());
    assert_eq!(index.get(&symbols, b"unindexed"), None);
    // Reserving keeps every name.
    index.reserve(&symbols, 1_000_000);
    assert_eq!(index.get(&symbols, b"name7918"), plain.get(&b"name7918"[..]).copied());
}
