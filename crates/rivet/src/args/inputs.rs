//! Options about what is linked and how symbols resolve: the output kind (`-shared`, `-pie`,
//! `-r`), the inputs and their per-input state (`-l`, `-Bstatic`, `--as-needed`, groups), search
//! paths, symbols (`-u`, `--defsym`, `--wrap`, `-Bsymbolic`, version scripts, dynamic lists) and
//! the dynamic section's names (`-soname`, `-rpath`, `-dynamic-linker`, `--audit`).
use super::kinds::{InputArg, Symbolic};
use super::options::Apply::{Flag, Parse, Set, State, Value};
use super::options::{ignored, opt, Opt};
use crate::diag::Context;
use crate::{bail, ensure, fatal};
use std::path::PathBuf;

pub(super) static OPTIONS: &[Opt] = &[
    // The output's kind. The last of -shared and -pie decides, as in GNU ld: `-shared -pie` is a
    // position-independent executable (one that may also be loaded as a library).
    opt(
        &["static"],
        Flag(|p| {
            p.config.static_link = true;
            p.state.static_only = true;
            Ok(())
        }),
    ),
    opt(&["pie", "pic-executable"], Set(|c| (c.pie, c.shared) = (true, false))),
    opt(&["no-pie", "no-pic-executable"], Set(|c| c.pie = false)),
    opt(&["shared", "Bshareable"], Set(|c| (c.shared, c.pie) = (true, false))),
    // -Ur also resolves C++ constructor tables in GNU ld, which ELF's .init_array makes moot.
    opt(&["r", "relocatable", "Ur"], Set(|c| c.relocatable = true)),
    // Listed so that `-emit-relocs` is not read as `-e mit-relocs`.
    opt(&["emit-relocs", "q"], Set(|c| c.emit_relocs = true)),
    opt(&["no-dynamic-linker"], Set(|c| c.no_dynamic_linker = true)),
    opt(&["dynamic-linker", "I"], Value(|c, v| c.dynamic_linker = Some(v))),
    opt(
        &["m"],
        Parse(|p, _, v| {
            if let Err(why) = crate::machine::Machine::for_emulation(&v) {
                let known = crate::machine::Machine::names().0;
                bail!("-m {v}: {why} (rivet's emulations: {known})");
            }
            p.config.emulation = Some(v);
            Ok(())
        }),
    ),
    opt(
        &["o", "output"],
        Value(|c, v| {
            c.output = PathBuf::from(v);
            c.output_given = true;
        }),
    ),
    opt(&["e", "entry"], Value(|c, v| c.entry = Some(v))),
    opt(&["init"], Value(|c, v| c.init = v)),
    opt(&["fini"], Value(|c, v| c.fini = v)),
    // Inputs, and the state each is read with.
    opt(
        &["l", "library"],
        Parse(|p, _, v| {
            p.config.inputs.push(InputArg::Library { name: v, state: p.state });
            Ok(())
        }),
    ),
    opt(&["T", "script"], Value(|c, v| c.inputs.push(InputArg::Script { path: PathBuf::from(v) }))),
    opt(&["L", "library-path"], Value(|c, v| c.lib_paths.push(PathBuf::from(v)))),
    opt(&["sysroot"], Value(|c, v| c.sysroot = Some(PathBuf::from(v)))),
    ignored(&["nostdlib"], Set(|c| c.nostdlib = true), "-nostdlib", "honoured: only -L directories are searched"),
    ignored(
        &["rpath-link"],
        Value(|c, v| c.rpath_link.push(v)),
        "-rpath-link, --rpath-link",
        "GNU ld searches it for the libraries a shared library needs, to check their symbols; rivet, like lld, \
         loads only the libraries the command line names, so it has nothing to find there",
    ),
    opt(&["Bstatic", "dn", "non_shared"], State(|s| s.static_only = true)),
    opt(&["Bdynamic", "dy", "call_shared"], State(|s| s.static_only = false)),
    opt(&["as-needed"], State(|s| s.as_needed = true)),
    opt(&["no-as-needed"], State(|s| s.as_needed = false)),
    opt(&["whole-archive"], State(|s| s.whole_archive = true)),
    opt(&["no-whole-archive"], State(|s| s.whole_archive = false)),
    // `-static` between them is undone too: it chose only how `-l` searched there.
    opt(
        &["push-state"],
        Flag(|p| {
            p.stack.push((p.state, p.config.static_link));
            Ok(())
        }),
    ),
    opt(
        &["pop-state"],
        Flag(|p| {
            (p.state, p.config.static_link) = p.stack.pop().context("--pop-state without a matching --push-state")?;
            Ok(())
        }),
    ),
    opt(&["start-group", "("], Set(|c| c.inputs.push(InputArg::GroupStart))),
    opt(&["end-group", ")"], Set(|c| c.inputs.push(InputArg::GroupEnd))),
    opt(
        &["start-lib"],
        Flag(|p| {
            ensure!(!p.state.lazy, "nested --start-lib");
            p.state.lazy = true;
            p.config.inputs.push(InputArg::GroupStart);
            Ok(())
        }),
    ),
    opt(
        &["end-lib"],
        Flag(|p| {
            ensure!(p.state.lazy, "stray --end-lib");
            p.state.lazy = false;
            p.config.inputs.push(InputArg::GroupEnd);
            Ok(())
        }),
    ),
    opt(&["warn-backrefs"], Set(|c| c.warn_backrefs = true)),
    opt(&["no-warn-backrefs"], Set(|c| c.warn_backrefs = false)),
    opt(&["warn-backrefs-exclude"], Value(|c, v| c.warn_backrefs_exclude.push(v))),
    opt(&["exclude-libs"], Value(|c, v| c.exclude_libs.extend(v.split([',', ':']).map(str::to_string)))),
    opt(&["plugin"], Value(|c, v| c.plugin = Some(v))),
    opt(&["plugin-opt", "mllvm"], Value(|c, v| c.plugin_opts.push(v))),
    // `-z KEYWORD` (the keywords are in z.rs).
    opt(&["z"], Parse(|p, _, v| p.z_option(&v))),
    // Symbols.
    opt(&["u", "undefined"], Value(|c, v| c.undefined.push(v))),
    opt(&["undefined-glob"], Value(|c, v| c.undefined_globs.push(v))),
    opt(&["require-defined"], Value(|c, v| c.require_defined.push(v))),
    opt(&["wrap"], Value(|c, v| c.wrap.push(v))),
    opt(
        &["defsym"],
        Parse(|p, _, v| {
            let (sym, text) =
                v.split_once('=').ok_or_else(|| fatal!("--defsym: expected SYMBOL=EXPRESSION, got '{v}'"))?;
            let expr = crate::expr::parse(text).with_context(|| format!("--defsym={v}"))?;
            p.config.defsym.push(crate::expr::Defsym {
                name: sym.to_string(),
                text: text.to_string(),
                symbol: expr.symbol.map(str::to_string),
                addend: expr.addend,
            });
            Ok(())
        }),
    ),
    opt(&["y", "trace-symbol"], Value(|c, v| c.trace_symbols.push(v))),
    opt(&["no-undefined"], Set(|c| c.no_undefined = Some(true))),
    opt(&["allow-shlib-undefined"], Set(|c| c.allow_shlib_undefined = Some(true))),
    opt(&["no-allow-shlib-undefined"], Set(|c| c.allow_shlib_undefined = Some(false))),
    // lld's meaning: whether the objects' and the shared libraries' undefined symbols are reported.
    opt(
        &["unresolved-symbols"],
        Parse(|p, _, v| {
            let (objects, shlibs) = match v.as_str() {
                "ignore-all" => (false, false),
                "ignore-in-object-files" => (false, true),
                "ignore-in-shared-libs" => (true, false),
                "report-all" => (true, true),
                _ => bail!(
                    "unknown --unresolved-symbols value: {v} (ignore-all, ignore-in-object-files, \
                     ignore-in-shared-libs or report-all)"
                ),
            };
            p.config.no_undefined = Some(objects);
            p.config.allow_shlib_undefined = Some(!shlibs);
            Ok(())
        }),
    ),
    opt(&["warn-unresolved-symbols"], Set(|c| c.warn_unresolved = true)),
    opt(&["error-unresolved-symbols"], Set(|c| c.warn_unresolved = false)),
    opt(&["allow-multiple-definition"], Set(|c| c.allow_multiple_definition = true)),
    opt(&["no-allow-multiple-definition"], Set(|c| c.allow_multiple_definition = false)),
    // Final links always allocate common symbols; with -r these allocate them too.
    ignored(
        &["d", "dc", "dp", "define-common"],
        Set(|c| c.define_common = true),
        "-d, -dc, -dp, --define-common (without -r)",
        "a final link always allocates common symbols; with -r they allocate them in .bss, as GNU ld does",
    ),
    opt(&["no-define-common"], Set(|c| c.define_common = false)),
    opt(&["warn-common"], Set(|c| c.warn_common = true)),
    opt(&["no-warn-common"], Set(|c| c.warn_common = false)),
    opt(&["start-stop"], Set(|c| c.start_stop = true)),
    opt(&["E", "export-dynamic"], Set(|c| c.export_dynamic = true)),
    opt(&["no-export-dynamic"], Set(|c| c.export_dynamic = false)),
    opt(&["export-dynamic-symbol"], Value(|c, v| c.export_dynamic_symbols.push(v))),
    opt(&["export-dynamic-symbol-list"], Value(|c, v| c.export_dynamic_symbol_lists.push(PathBuf::from(v)))),
    opt(&["dynamic-list"], Value(|c, v| c.dynamic_lists.push(PathBuf::from(v)))),
    opt(&["dynamic-list-data"], Set(|c| c.dynamic_list_data = true)),
    opt(&["version-script"], Value(|c, v| c.version_scripts.push(PathBuf::from(v)))),
    opt(&["default-symver"], Set(|c| c.default_symver = true)),
    opt(&["no-undefined-version"], Set(|c| c.no_undefined_version = Some(true))),
    opt(&["undefined-version"], Set(|c| c.no_undefined_version = Some(false))),
    opt(&["Bsymbolic"], Set(|c| c.symbolic = Symbolic::All)),
    opt(&["Bsymbolic-functions"], Set(|c| c.symbolic = Symbolic::Functions)),
    opt(&["Bsymbolic-non-weak"], Set(|c| c.symbolic = Symbolic::NonWeak)),
    opt(&["Bsymbolic-non-weak-functions"], Set(|c| c.symbolic = Symbolic::NonWeakFunctions)),
    opt(&["Bno-symbolic"], Set(|c| c.symbolic = Symbolic::None)),
    opt(&["retain-symbols-file"], Value(|c, v| c.retain_symbols_file = Some(PathBuf::from(v)))),
    // The dynamic section's names.
    opt(&["h", "soname"], Value(|c, v| c.soname = Some(v))),
    opt(&["rpath", "R"], Value(|c, v| c.rpath.push(v))),
    opt(&["enable-new-dtags"], Set(|c| c.new_dtags = true)),
    opt(&["disable-new-dtags"], Set(|c| c.new_dtags = false)),
    opt(&["audit"], Value(|c, v| c.audit.push(v))),
    opt(&["depaudit", "P"], Value(|c, v| c.depaudit.push(v))),
    opt(&["F", "filter"], Value(|c, v| c.filters.push(v))),
    opt(&["f", "auxiliary"], Value(|c, v| c.auxiliaries.push(v))),
];
