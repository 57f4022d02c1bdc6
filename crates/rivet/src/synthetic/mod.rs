//! Linker-made sections: the GOT and the IFUNC PLT (`Tables`, sized by the relocation scan), and
//! the writers of every synthetic section's bytes (`write`): `.got`, `.got.plt`, `.plt`,
//! `.rela.plt`, `.rela.dyn`, `.dynamic`, `.eh_frame_hdr`, build-id note, `.symtab`.
pub mod symtab;
pub mod write;

use crate::ctx::Target;
use crate::sections::output::OutputSection;
use std::collections::HashMap;

pub const NONE: u32 = u32::MAX;
/// `.got.plt` starts with three words the dynamic loader owns (`_DYNAMIC`, link map, resolver).
pub const GOTPLT_RESERVED: u64 = 3;
pub const PLT_ENTRY_SIZE: u64 = 16;

/// What a `.got` entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GotKind {
    /// The symbol's address.
    Addr,
    /// The symbol's offset from the thread pointer (initial-exec TLS).
    TpOff,
}

#[derive(Default)]
pub struct Tables {
    /// `.got` entries in order.
    pub got: Vec<(Target, GotKind)>,
    /// IFUNCs that have a PLT stub and a `.got.plt` slot, in order.
    pub plt: Vec<Target>,
    global_got: Vec<u32>,
    global_gottp: Vec<u32>,
    global_plt: Vec<u32>,
    local: HashMap<(Target, u8), u32>,
    pub got_sec: Option<usize>,
    pub gotplt_sec: Option<usize>,
    pub plt_sec: Option<usize>,
    pub relaplt_sec: Option<usize>,
    pub reladyn_sec: Option<usize>,
    pub dynamic_sec: Option<usize>,
    /// Static-PIE: R_X86_64_RELATIVE relocations counted by the scan (sections and GOT).
    pub relative_count: u64,
    /// `_GLOBAL_OFFSET_TABLE_` or GOT-relative relocations need `.got.plt` even without IFUNCs.
    pub need_gotplt: bool,
}

const KIND_GOT: u8 = 0;
const KIND_GOTTP: u8 = 1;
const KIND_PLT: u8 = 2;

impl Tables {
    pub fn new(nsyms: usize) -> Tables {
        Tables {
            global_got: vec![NONE; nsyms],
            global_gottp: vec![NONE; nsyms],
            global_plt: vec![NONE; nsyms],
            ..Default::default()
        }
    }

    fn slot(&self, t: Target, kind: u8) -> Option<u32> {
        let v = match t {
            Target::Global(id) => match kind {
                KIND_GOT => self.global_got[id as usize],
                KIND_GOTTP => self.global_gottp[id as usize],
                _ => self.global_plt[id as usize],
            },
            Target::Local(..) => *self.local.get(&(t, kind))?,
        };
        (v != NONE).then_some(v)
    }

    fn set_slot(&mut self, t: Target, kind: u8, v: u32) {
        match t {
            Target::Global(id) => {
                let table = match kind {
                    KIND_GOT => &mut self.global_got,
                    KIND_GOTTP => &mut self.global_gottp,
                    _ => &mut self.global_plt,
                };
                table[id as usize] = v;
            }
            Target::Local(..) => {
                self.local.insert((t, kind), v);
            }
        }
    }

    /// Adds a `.got` entry unless the target has one of that kind already.
    pub fn add_got(&mut self, t: Target, kind: GotKind) {
        let k = if kind == GotKind::Addr {
            KIND_GOT
        } else {
            KIND_GOTTP
        };
        if self.slot(t, k).is_none() {
            self.set_slot(t, k, self.got.len() as u32);
            self.got.push((t, kind));
        }
    }

    pub fn add_plt(&mut self, t: Target) {
        if self.slot(t, KIND_PLT).is_none() {
            self.set_slot(t, KIND_PLT, self.plt.len() as u32);
            self.plt.push(t);
        }
    }

    pub fn plt_index(&self, t: Target) -> Option<u32> {
        self.slot(t, KIND_PLT)
    }

    pub fn plt_entry_addr(&self, sections: &[OutputSection], i: u32) -> u64 {
        sections[self
            .plt_sec
            .expect("PLT section exists when PLT entries do")]
        .addr
            + PLT_ENTRY_SIZE * i as u64
    }

    pub fn gotplt_slot_addr(&self, sections: &[OutputSection], i: u32) -> u64 {
        self.gotplt_addr(sections) + 8 * (GOTPLT_RESERVED + i as u64)
    }

    /// `_GLOBAL_OFFSET_TABLE_`: the start of `.got.plt` (of `.got` when there is no `.got.plt`).
    pub fn gotplt_addr(&self, sections: &[OutputSection]) -> u64 {
        match (self.gotplt_sec, self.got_sec) {
            (Some(s), _) | (None, Some(s)) => sections[s].addr,
            (None, None) => 0,
        }
    }

    pub fn got_entry_addr(
        &self,
        sections: &[OutputSection],
        t: Target,
        kind: GotKind,
    ) -> Option<u64> {
        let k = if kind == GotKind::Addr {
            KIND_GOT
        } else {
            KIND_GOTTP
        };
        let i = self.slot(t, k)?;
        Some(sections[self.got_sec?].addr + 8 * i as u64)
    }
}
