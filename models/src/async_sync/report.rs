//! Violations: which rule, where, and the earlier access it conflicts with.

use super::event::MemSpace;
use super::machine::{Place, Record, Role, Site};
use super::timeline::{Level, QualTl};
use gpusim_isa::{print, FuncId, Module};
use std::fmt;

/// The rule an access breaks (brief rules (a)–(d); `docs/checking.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// (a) A non-wgmma instruction reads or writes a wgmma register (D, or A in registers)
    /// before a `wgmma.wait_group` covering that wgmma (digest §2.3 bug 2).
    AccumulatorBeforeWait,
    /// (a) wgmma reads or writes registers an ordinary instruction accessed, without
    /// `wgmma.fence` in between (digest §1.5, wgmma_fence_1/2).
    MissingWgmmaFence,
    /// (b) The async proxy (wgmma operands, TMA) accesses bytes written by the generic proxy
    /// with no `fence.proxy.async` by the writer in between (carried by `bar.sync`).
    MissingProxyFence,
    /// (b) Bytes written asynchronously (TMA store, `cp.async`, ...) are read before the wait
    /// that completes the write.
    AsyncWriteUnsynchronised,
    /// (c) A TMA-loaded tile is read before the reader observed the mbarrier phase the load
    /// completes on.
    EarlyTmaConsumption,
    /// (d) Bytes are overwritten while an earlier read or write of them is not temporally
    /// ordered before (e.g. a TMA load into a stage wgmma may still be reading: the WAR
    /// "empty" barrier; digest §2.3 bug 3).
    BufferOverwrite,
    /// Two generic accesses of different warps with no synchronisation between them.
    UnorderedAccess,
}

impl Rule {
    pub const ALL: [Rule; 7] = [
        Rule::AccumulatorBeforeWait,
        Rule::MissingWgmmaFence,
        Rule::MissingProxyFence,
        Rule::AsyncWriteUnsynchronised,
        Rule::EarlyTmaConsumption,
        Rule::BufferOverwrite,
        Rule::UnorderedAccess,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rule::AccumulatorBeforeWait => "accumulator-before-wait",
            Rule::MissingWgmmaFence => "missing-wgmma-fence",
            Rule::MissingProxyFence => "missing-proxy-fence",
            Rule::AsyncWriteUnsynchronised => "async-write-unsynchronised",
            Rule::EarlyTmaConsumption => "early-tma-consumption",
            Rule::BufferOverwrite => "buffer-overwrite",
            Rule::UnorderedAccess => "unordered-access",
        }
    }

    pub fn from_name(s: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == s)
    }

    /// Which rule a conflict between `earlier` and a new access (`q`, `role`) breaks.
    pub(super) fn classify(earlier: &Record, q: QualTl, role: Role) -> Rule {
        let generic = |t: QualTl| matches!(t, QualTl::Cuda2);
        if earlier.space.is_none() {
            return match (earlier.q, q) {
                (QualTl::WgD | QualTl::WgA, QualTl::Cuda1) => Rule::AccumulatorBeforeWait,
                (QualTl::Cuda1, QualTl::WgD | QualTl::WgA) => Rule::MissingWgmmaFence,
                _ => Rule::UnorderedAccess,
            };
        }
        let earlier_mutates = earlier.role != Role::Read;
        if generic(earlier.q) && q.is_async_proxy() && (earlier_mutates || role == Role::Read) {
            return Rule::MissingProxyFence;
        }
        if role == Role::Read || (role == Role::Rmw && earlier_mutates) {
            return match earlier.q {
                QualTl::TmaS => Rule::EarlyTmaConsumption,
                QualTl::Cuda2 => Rule::UnorderedAccess,
                _ => Rule::AsyncWriteUnsynchronised,
            };
        }
        if generic(earlier.q) && generic(q) {
            return Rule::UnorderedAccess;
        }
        Rule::BufferOverwrite
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One violation: the access, the earlier access and the visibility that was missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub rule: Rule,
    pub at: Site,
    pub q: QualTl,
    pub role: Role,
    pub place: Place,
    pub earlier: Site,
    pub earlier_q: QualTl,
    pub earlier_role: Role,
    pub needed: Level,
    pub had: Option<Level>,
}

impl Violation {
    pub(super) fn key(&self) -> (Rule, (u32, u32), (u32, u32)) {
        (
            self.rule,
            (self.at.func, self.at.pc),
            (self.earlier.func, self.earlier.pc),
        )
    }

    /// The PTX line of the access.
    pub fn line(&self, module: &Module) -> u32 {
        line_of(module, &self.at)
    }

    pub fn earlier_line(&self, module: &Module) -> u32 {
        line_of(module, &self.earlier)
    }

    /// The report: file:line, the instruction, the CTA, warp and lanes, the location, and the
    /// earlier access with its line.
    pub fn describe(&self, module: &Module) -> String {
        let place = match self.place {
            Place::Mem(s, lo, hi) => match s {
                MemSpace::PeerShared(c) => {
                    format!("shared bytes [{lo:#x}, {hi:#x}) of CTA {c} (linear id)")
                }
                _ => format!("{} bytes [{lo:#x}, {hi:#x})", s.name()),
            },
            Place::Reg(r) => format!("register {}", reg_name(module, self.at.func, r)),
        };
        format!(
            "{}: {}:{} `{}` (CTA ({}, {}, {}), warp {}, lanes {:#x}, cycle {}) {} {place} as {}; it conflicts with the earlier {} as {} at {}:{} `{}` (warp {}, cycle {}), which is {} for this warp on {} where {} is needed",
            self.rule,
            module.file,
            self.line(module),
            inst_text(module, &self.at),
            self.at.ctaid[0],
            self.at.ctaid[1],
            self.at.ctaid[2],
            self.at.warp,
            self.at.lanes,
            self.at.cycle,
            self.role.verb(),
            self.q.name(),
            self.earlier_role.verb(),
            self.earlier_q.name(),
            module.file,
            self.earlier_line(module),
            inst_text(module, &self.earlier),
            self.earlier.warp,
            self.earlier.cycle,
            self.had.map_or("invisible", Level::name),
            self.q.name(),
            self.needed.name(),
        )
    }
}

fn line_of(module: &Module, s: &Site) -> u32 {
    module.functions[s.func as usize]
        .body
        .get(s.pc as usize)
        .map_or(0, |i| i.span.line)
}

fn inst_text(module: &Module, s: &Site) -> String {
    let f = module.function(FuncId(s.func));
    f.body
        .get(s.pc as usize)
        .map(|i| print::inst_to_ptx(module, f, i))
        .unwrap_or_default()
}

fn reg_name(module: &Module, func: u32, r: u32) -> String {
    let f = module.function(FuncId(func));
    f.regs
        .get(r as usize)
        .map_or_else(|| format!("#{r}"), |x| x.name.clone())
}
