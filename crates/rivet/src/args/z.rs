//! The `-z KEYWORD` table: each keyword declared once, those taking a value as `KEY=VALUE`. The
//! parser and `--help` both read it.
use super::config::Config;
use super::kinds::{FeatureReport, GcsPolicy, TextRel};
use super::parse_number;
use super::values::one_of;
use super::ArgParser;
use crate::diag::Result;
use crate::{bail, fatal};
use object::elf;

/// What a `-z` keyword does.
pub(super) enum ZApply {
    /// A keyword alone (`-z relro`).
    Set(fn(&mut Config)),
    /// `KEY=VALUE` (`-z max-page-size=0x1000`): the value is checked.
    Value(fn(&mut Config, &str) -> Result<()>),
}

pub(super) struct ZOpt {
    pub names: &'static [&'static str],
    pub apply: ZApply,
}

const fn z(names: &'static [&'static str], apply: fn(&mut Config)) -> ZOpt {
    ZOpt { names, apply: ZApply::Set(apply) }
}

const fn z_value(name: &'static [&'static str], apply: fn(&mut Config, &str) -> Result<()>) -> ZOpt {
    ZOpt { names: name, apply: ZApply::Value(apply) }
}

pub(super) static Z_OPTIONS: &[ZOpt] = &[
    z(&["relro"], |c| c.relro = true),
    z(&["norelro"], |c| c.relro = false),
    z(&["now"], |c| c.now = true),
    z(&["lazy"], |c| c.now = false),
    z(&["text"], |c| c.textrel = TextRel::Error),
    z(&["notext", "textoff"], |c| c.textrel = TextRel::Allow),
    z(&["execstack"], |c| (c.execstack, c.execstack_if_needed) = (true, false)),
    z(&["noexecstack"], |c| (c.execstack, c.execstack_if_needed) = (false, false)),
    z(&["execstack-if-needed"], |c| (c.execstack, c.execstack_if_needed) = (false, true)),
    z(&["x86-64-baseline"], |c| c.isa_level = 1),
    z(&["x86-64-v2"], |c| c.isa_level = 2),
    z(&["x86-64-v3"], |c| c.isa_level = 3),
    z(&["x86-64-v4"], |c| c.isa_level = 4),
    z(&["sectionheader"], |c| c.no_section_headers = false),
    z(&["nosectionheader"], |c| c.no_section_headers = true),
    z(&["rewrite-endbr"], |c| c.rewrite_endbr = true),
    z(&["norewrite-endbr"], |c| c.rewrite_endbr = false),
    z(&["gnustack"], |c| c.gnustack = true),
    z(&["nognustack"], |c| c.gnustack = false),
    z(&["mark-plt"], |c| c.mark_plt = true),
    z(&["nomark-plt"], |c| c.mark_plt = false),
    z(&["separate-code"], |c| (c.separate_code, c.target_defaults_given.separate_code) = (true, true)),
    z(&["noseparate-code"], |c| {
        (c.separate_code, c.separate_loadable_segments, c.target_defaults_given.separate_code) = (false, false, true)
    }),
    z(&["separate-loadable-segments"], |c| {
        (c.separate_code, c.separate_loadable_segments, c.target_defaults_given.separate_code) = (true, true, true)
    }),
    z(&["defs"], |c| c.no_undefined = Some(true)),
    z(&["nodefs", "undefs"], |c| c.no_undefined = Some(false)),
    z(&["initfirst"], |c| c.dt_flags_1 |= elf::DF_1_INITFIRST),
    z(&["interpose"], |c| c.dt_flags_1 |= elf::DF_1_INTERPOSE),
    z(&["nodefaultlib"], |c| c.dt_flags_1 |= elf::DF_1_NODEFLIB),
    z(&["nodump"], |c| c.dt_flags_1 |= elf::DF_1_NODUMP),
    z(&["origin"], |c| c.dt_flags_1 |= elf::DF_1_ORIGIN),
    z(&["nodelete"], |c| c.dt_flags_1 |= elf::DF_1_NODELETE),
    z(&["nodlopen"], |c| c.dt_flags_1 |= elf::DF_1_NOOPEN),
    z(&["global"], |c| c.dt_flags_1 |= elf::DF_1_GLOBAL),
    z(&["rodynamic"], |c| c.rodynamic = true),
    z(&["muldefs"], |c| c.allow_multiple_definition = true),
    z(&["copyreloc"], |c| c.copy_relocations = true),
    z(&["nocopyreloc"], |c| c.copy_relocations = false),
    z(&["ibt", "force-ibt"], |c| c.z_ibt = true),
    z(&["shstk"], |c| c.z_shstk = true),
    z(&["ibtplt"], |c| c.ibt_plt = true),
    z(&["force-bti"], |c| c.z_force_bti = true),
    z(&["pac-plt"], |c| c.z_pac_plt = true),
    z(&["pack-relative-relocs"], |c| c.pack_relative_relocs = true),
    z(&["nopack-relative-relocs"], |c| c.pack_relative_relocs = false),
    z(&["keep-text-section-prefix"], |c| c.keep_text_section_prefix = true),
    z(&["dynamic-undefined-weak"], |c| c.dynamic_undefined_weak = Some(true)),
    z(&["nodynamic-undefined-weak"], |c| c.dynamic_undefined_weak = Some(false)),
    z(&["nokeep-text-section-prefix"], |c| c.keep_text_section_prefix = false),
    z_value(&["max-page-size"], |c, v| {
        c.target_defaults_given.max_page_size = true;
        c.max_page_size = parse_number(v)
            .filter(|n| n.is_power_of_two())
            .ok_or_else(|| fatal!("-z max-page-size: bad size '{v}'"))?;
        Ok(())
    }),
    z_value(&["common-page-size"], |c, v| {
        c.target_defaults_given.common_page_size = true;
        c.common_page_size = parse_number(v)
            .filter(|n| n.is_power_of_two())
            .ok_or_else(|| fatal!("-z common-page-size: bad size '{v}'"))?;
        Ok(())
    }),
    z_value(&["stack-size"], |c, v| {
        c.stack_size = parse_number(v).ok_or_else(|| fatal!("-z stack-size: bad size '{v}'"))?;
        Ok(())
    }),
    z_value(&["cet-report"], |c, v| {
        c.cet_report = report("-z cet-report", v)?;
        Ok(())
    }),
    z_value(&["bti-report"], |c, v| {
        c.bti_report = report("-z bti-report", v)?;
        Ok(())
    }),
    z_value(&["gcs-report"], |c, v| {
        c.gcs_report = report("-z gcs-report", v)?;
        Ok(())
    }),
    z_value(&["gcs"], |c, v| {
        c.z_gcs = match one_of("-z gcs", v, &["implicit", "always", "never"])? {
            "implicit" => GcsPolicy::Implicit,
            "always" => GcsPolicy::Always,
            _ => GcsPolicy::Never,
        };
        Ok(())
    }),
    z_value(&["start-stop-visibility"], |c, v| {
        c.start_stop_visibility = match v {
            "default" => elf::STV_DEFAULT,
            "internal" => elf::STV_INTERNAL,
            "hidden" => elf::STV_HIDDEN,
            "protected" => elf::STV_PROTECTED,
            _ => bail!("unknown -z start-stop-visibility= value: {v}"),
        };
        c.export_start_stop = v == "protected";
        Ok(())
    }),
];

/// A `-z *-report=none|warning|error` value.
fn report(opt: &str, v: &str) -> Result<FeatureReport> {
    Ok(match one_of(opt, v, &["none", "warning", "error"])? {
        "none" => FeatureReport::None,
        "warning" => FeatureReport::Warning,
        _ => FeatureReport::Error,
    })
}

impl ArgParser {
    /// One `-z` keyword; `self.spelled` is the option as the command line wrote it (`-zfoo`,
    /// `-z foo`), for the warning about an unknown keyword.
    pub(super) fn z_option(&mut self, key: &str) -> Result<()> {
        let set = Z_OPTIONS.iter().find_map(|z| match z.apply {
            ZApply::Set(f) if z.names.contains(&key) => Some(f),
            _ => None,
        });
        if let Some(f) = set {
            f(&mut self.config);
            return Ok(());
        }
        let with_value = key.split_once('=').and_then(|(name, v)| {
            Z_OPTIONS.iter().find_map(|z| match z.apply {
                ZApply::Value(f) if z.names.contains(&name) => Some((f, v)),
                _ => None,
            })
        });
        match with_value {
            Some((f, v)) => f(&mut self.config, v),
            None => {
                // lld's words, and mold's.
                let spelled = &self.spelled;
                self.config.warnings.push(format!("unknown -z value: {key} (unknown command line option: {spelled})"));
                Ok(())
            }
        }
    }
}
