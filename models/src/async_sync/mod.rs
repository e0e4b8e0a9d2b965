//! Asynchronous-synchronisation checker: the Exo-GPU abstract machine (digest
//! `shared/notes/exo-gpu.md` §1.5–1.8, §2.2) run over the events of a simulated launch, for
//! Hopper's asynchronous units — wgmma, TMA (bulk and tensor copies), `cp.async` — and their
//! synchronisation: commit groups, mbarrier phases, `bar.sync`, `fence.proxy.async`,
//! `wgmma.fence`.
//!
//! The simulator computes values at issue, so a missing wait or fence never shows up as a
//! wrong value; this checker finds it from the order of events instead. Its verdict does not
//! depend on timing: an access must be ordered after the earlier one *by synchronisation*,
//! whether or not the earlier one had completed when the simulator issued it.
//!
//! Rules reported (`Rule`): (a) a non-wgmma instruction touches a wgmma accumulator before a
//! `wgmma.wait_group` covering the wgmma; wgmma reading registers written by ordinary
//! instructions without `wgmma.fence`; (b) async-proxy reads (wgmma operands, TMA store
//! sources) of bytes written by generic stores without `fence.proxy.async` (carried by
//! `bar.sync` from the writer), and reads of bytes written asynchronously without the
//! matching wait; (c) reads of a TMA-loaded tile before observing the mbarrier phase it
//! completes on; (d) overwrites of bytes still being read or written by an access that is
//! not temporally ordered before (a TMA load into a stage wgmma may still read: the WAR
//! "empty" barrier); atomic updates (TMA reduce-add, `red`) do not conflict with each other.
//!
//! Choices where the paper's AM is finer or the PTX differs, each documented in
//! docs/checking.md:
//! - agents are warps: a sync by any lane of a warp counts for its whole warp (the async
//!   units are warp collectives or issued by an elected lane);
//! - registers are tracked only where wgmma names them (`registers::Interest`);
//! - global memory keeps mutates only: reads of global memory are checked against earlier
//!   writes but not recorded (no WAR on global memory);
//! - mbarrier phases are the simulator's (`MbarPhaseComplete`); a successful wait observes
//!   every completed phase; a TMA load is carried by the phase current at its issue;
//! - `bar.sync` forwards, besides cuda_in_order's full set, every memory timeline a
//!   participant already had fully ordered (PTX causality order is transitive), which is
//!   how `fence.proxy.async; bar.sync` publishes shared-memory stores to a TMA store issued
//!   by another thread;
//! - clusters: a location in a peer CTA's shared memory (DSMEM `ld`/`st`, a copy landing
//!   there, TMA multicast) is that CTA's location (`MemSpace::PeerShared` is keyed by the
//!   peer); a remote `mbarrier.arrive` captures on the peer's barrier; a multicast's
//!   `complete_tx` publishes each destination's bytes on that CTA's barrier, to whoever
//!   observes its phase current at the issue; `barrier.cluster.arrive`/`.wait` is a split
//!   transitive cuda_in_order barrier over the cluster's warps (digest §2.4), forwarding what
//!   each warp witnessed at its arrive.

mod event;
mod machine;
mod registers;
mod report;
#[cfg(test)]
mod tests;
pub mod timeline;

pub use event::{merge_ranges, AsyncEvent, EventKind, MemSpace, Range};
pub use machine::{Role, Site};
pub use registers::{is_async, Interest};
pub use report::{Rule, Violation};

use gpusim_isa::{FuncKind, Module, Op, Operand, WgmmaA};
use machine::{Access, Conflict, GroupKind, Machine};
use timeline::*;

/// What the checker found in one launch.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub events: usize,
    /// Distinct violations (rule, instruction, earlier instruction), in order of first
    /// occurrence, each with how often it happened.
    pub violations: Vec<(Violation, usize)>,
}

/// Distinct violations kept per launch.
const MAX_DISTINCT: usize = 64;

/// Run the abstract machine over one launch's events (in the simulator's issue order).
pub fn check(module: &Module, events: &[AsyncEvent]) -> Report {
    let mut c = Checker {
        module,
        interest: Interest::new(module),
        m: Machine::default(),
        report: Report {
            events: events.len(),
            ..Report::default()
        },
    };
    for e in events {
        c.event(e);
    }
    c.report
}

struct Checker<'a> {
    module: &'a Module,
    interest: Interest,
    m: Machine,
    report: Report,
}

impl Checker<'_> {
    fn event(&mut self, e: &AsyncEvent) {
        let agent = (e.cta, e.warp);
        let Some((func, pc)) = e.at else {
            if let EventKind::MbarPhaseComplete { mbar } = e.kind {
                self.m.mbar_complete(e.cta, mbar);
            }
            return;
        };
        self.m.bar_resolve(agent);
        self.m.cluster_resolve(agent);
        let site = Site {
            cycle: e.cycle,
            ctaid: e.ctaid,
            warp: e.warp,
            lanes: e.lanes,
            func,
            pc,
        };
        let acc = |q: QualTl, role: Role| Access {
            agent,
            q,
            role,
            site,
        };
        let in_order = |q: QualTl| Vis::full(QualSet::one(q));
        let unordered = |q: QualTl| Vis::unordered(QualSet::one(q));
        match &e.kind {
            EventKind::Generic {
                reads,
                writes,
                atomic,
            } => {
                let (rr, rw) = self.ordinary_regs(func, pc);
                let wrole = if *atomic { Role::Atomic } else { Role::Write };
                let mut conflicts = Vec::new();
                let racc = acc(QualTl::Cuda1, Role::Read);
                let wacc = acc(QualTl::Cuda1, Role::Write);
                self.m.check_regs(&rr, &racc, &mut conflicts);
                self.flush(&racc, &mut conflicts);
                self.m.check_regs(&rw, &wacc, &mut conflicts);
                self.flush(&wacc, &mut conflicts);
                let mr = acc(QualTl::Cuda2, Role::Read);
                let mw = acc(QualTl::Cuda2, wrole);
                self.m.check_mem(e.cta, reads, &mr, &mut conflicts);
                self.flush(&mr, &mut conflicts);
                self.m.check_mem(e.cta, writes, &mw, &mut conflicts);
                self.flush(&mw, &mut conflicts);
                self.m
                    .record_regs(&rr, &racc, in_order(QualTl::Cuda1), None);
                self.m
                    .record_regs(&rw, &wacc, in_order(QualTl::Cuda1), None);
                // One record per space (a peer's shared memory is its own space), so that each
                // record names where it is.
                let mut spaces: Vec<MemSpace> = reads
                    .iter()
                    .filter(|r| r.space.is_shared())
                    .chain(writes)
                    .map(|r| r.space)
                    .collect();
                spaces.sort_unstable();
                spaces.dedup();
                for sp in spaces {
                    let of = |v: &[Range]| -> Vec<Range> {
                        v.iter().filter(|r| r.space == sp).copied().collect()
                    };
                    if sp.is_shared() {
                        self.m
                            .record_mem(e.cta, &of(reads), &mr, in_order(QualTl::Cuda2), None);
                    }
                    self.m
                        .record_mem(e.cta, &of(writes), &mw, in_order(QualTl::Cuda2), None);
                }
            }
            EventKind::WgmmaIssue { smem, accumulate } => {
                let (d, a_regs) = self.wgmma_regs(func, pc);
                let drole = if *accumulate { Role::Rmw } else { Role::Write };
                let dacc = acc(QualTl::WgD, drole);
                let aacc = acc(QualTl::WgA, Role::Read);
                let sacc = acc(QualTl::WgS, Role::Read);
                let mut conflicts = Vec::new();
                self.m.check_regs(&a_regs, &aacc, &mut conflicts);
                self.flush(&aacc, &mut conflicts);
                self.m.check_regs(&d, &dacc, &mut conflicts);
                self.flush(&dacc, &mut conflicts);
                self.m.check_mem(e.cta, smem, &sacc, &mut conflicts);
                self.flush(&sacc, &mut conflicts);
                let g = Some(GroupKind::Wgmma);
                self.m
                    .record_regs(&a_regs, &aacc, unordered(QualTl::WgA), g);
                // D is in order with later wgmmas on it (wgD) and unordered for the rest.
                self.m.record_regs(&d, &dacc, in_order(QualTl::WgD), g);
                self.m
                    .record_mem(e.cta, smem, &sacc, unordered(QualTl::WgS), g);
            }
            EventKind::WgmmaFence => self.m.wgmma_fence(agent),
            EventKind::WgmmaCommit => self.m.commit(agent, GroupKind::Wgmma),
            EventKind::WgmmaWait { n } => self.m.await_groups(
                agent,
                GroupKind::Wgmma,
                *n as u64,
                GENERIC_AND_ASYNC_FULL,
                false,
            ),
            EventKind::TmaLoad { smem, mbar } => {
                let w = acc(QualTl::TmaS, Role::Write);
                let mut conflicts = Vec::new();
                self.m.check_mem(e.cta, smem, &w, &mut conflicts);
                self.flush(&w, &mut conflicts);
                if let Some(id) = self
                    .m
                    .record_mem(e.cta, smem, &w, unordered(QualTl::TmaS), None)
                {
                    self.m.capture_tma(id, e.cta, *mbar);
                }
            }
            EventKind::TmaLoadCluster { smem, mbar, ctas } => {
                // One record per destination CTA, published on that CTA's barrier.
                let w = acc(QualTl::TmaS, Role::Write);
                let mut conflicts = Vec::new();
                for &cta in ctas {
                    self.m.check_mem(cta, smem, &w, &mut conflicts);
                    self.flush(&w, &mut conflicts);
                }
                for &cta in ctas {
                    if let Some(id) =
                        self.m
                            .record_mem(cta, smem, &w, unordered(QualTl::TmaS), None)
                    {
                        self.m.capture_tma(id, cta, *mbar);
                    }
                }
            }
            EventKind::BulkStore {
                smem,
                global,
                reduce,
            } => {
                let r = acc(QualTl::TmaG, Role::Read);
                let role = if *reduce { Role::Atomic } else { Role::Write };
                let w = acc(QualTl::TmaG, role);
                let mut conflicts = Vec::new();
                self.m.check_mem(e.cta, smem, &r, &mut conflicts);
                self.flush(&r, &mut conflicts);
                self.m.check_mem(e.cta, global, &w, &mut conflicts);
                self.flush(&w, &mut conflicts);
                let g = Some(GroupKind::Bulk);
                self.m
                    .record_mem(e.cta, smem, &r, unordered(QualTl::TmaG), g);
                self.m
                    .record_mem(e.cta, global, &w, unordered(QualTl::TmaG), g);
            }
            EventKind::BulkCommit => self.m.commit(agent, GroupKind::Bulk),
            EventKind::BulkWait { n, read } => self.m.await_groups(
                agent,
                GroupKind::Bulk,
                *n as u64,
                GENERIC_AND_ASYNC_FULL,
                *read,
            ),
            EventKind::CpAsync { smem, global } => {
                let r = acc(QualTl::Sm80, Role::Read);
                let w = acc(QualTl::Sm80, Role::Write);
                let mut conflicts = Vec::new();
                self.m.check_mem(e.cta, global, &r, &mut conflicts);
                self.flush(&r, &mut conflicts);
                self.m.check_mem(e.cta, smem, &w, &mut conflicts);
                self.flush(&w, &mut conflicts);
                self.m.record_mem(
                    e.cta,
                    smem,
                    &w,
                    unordered(QualTl::Sm80),
                    Some(GroupKind::CpAsync),
                );
            }
            EventKind::CpAsyncCommit => self.m.commit(agent, GroupKind::CpAsync),
            EventKind::CpAsyncWait { n } => {
                if n.is_none() {
                    self.m.commit(agent, GroupKind::CpAsync);
                }
                let n = n.unwrap_or(0) as u64;
                self.m
                    .await_groups(agent, GroupKind::CpAsync, n, SM80_GENERIC_FULL, false)
            }
            EventKind::CpAsyncMbarArrive { mbar } => self.m.cp_async_arrive(agent, *mbar),
            EventKind::MbarInit { mbar } => self.m.mbar_init(e.cta, *mbar),
            EventKind::MbarArrive { mbar } => self.m.mbar_arrive(agent, *mbar),
            EventKind::MbarArriveCluster { targets } => {
                for &(cta, mbar) in targets {
                    self.m.mbar_arrive_in(agent, cta, mbar);
                }
            }
            EventKind::MbarWaitDone { mbar } => self.m.mbar_observe(agent, *mbar),
            EventKind::MbarWaitPark { mbar, parity } => self.m.mbar_park(agent, *mbar, *parity),
            EventKind::MbarPhaseComplete { mbar } => self.m.mbar_complete(e.cta, *mbar),
            EventKind::FenceProxyAsync { space } => self.m.proxy_fence(agent, *space),
            EventKind::CtaBarrier { id, wait } => self.m.bar_arrive(agent, *id, *wait),
            EventKind::ClusterBarrier { cluster, wait } => {
                if *wait {
                    self.m.cluster_wait(agent, *cluster);
                } else {
                    self.m.cluster_arrive(agent, *cluster);
                }
            }
        }
    }

    /// Report the conflicts of `a` (one violation per distinct pair of instructions).
    fn flush(&mut self, a: &Access, conflicts: &mut Vec<Conflict>) {
        for c in conflicts.drain(..) {
            let earlier = self.m.record(c.earlier);
            let rule = Rule::classify(earlier, a.q, a.role);
            let key = (
                rule,
                (a.site.func, a.site.pc),
                (earlier.site.func, earlier.site.pc),
            );
            if let Some(v) = self
                .report
                .violations
                .iter_mut()
                .find(|(v, _)| v.key() == key)
            {
                v.1 += 1;
                continue;
            }
            if self.report.violations.len() >= MAX_DISTINCT {
                continue;
            }
            let v = Violation {
                rule,
                at: a.site,
                q: a.q,
                role: a.role,
                place: c.place,
                earlier: earlier.site,
                earlier_q: earlier.q,
                earlier_role: earlier.role,
                needed: c.needed,
                had: c.had,
            };
            self.report.violations.push((v, 1));
        }
    }

    /// The tracked registers an ordinary instruction reads and writes.
    fn ordinary_regs(&self, func: u32, pc: u32) -> (Vec<u32>, Vec<u32>) {
        let f = &self.module.functions[func as usize];
        let Some(inst) = f.body.get(pc as usize) else {
            return (Vec::new(), Vec::new());
        };
        let (r, w) = registers::ordinary_regs(inst, f.kind == FuncKind::Entry);
        let keep = |v: Vec<u32>| -> Vec<u32> {
            let mut v: Vec<u32> = v
                .into_iter()
                .filter(|x| self.interest.tracked(func, *x))
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        (keep(r), keep(w))
    }

    /// A wgmma's D registers and A registers (empty for A from a descriptor).
    fn wgmma_regs(&self, func: u32, pc: u32) -> (Vec<u32>, Vec<u32>) {
        let f = &self.module.functions[func as usize];
        match f.body.get(pc as usize).map(|i| &i.op) {
            Some(Op::Wgmma(w)) => {
                let d = w.d.as_slice().iter().map(|r| r.0).collect();
                let a = match &w.a {
                    WgmmaA::Regs(l) => l.as_slice().iter().map(|r| r.0).collect(),
                    WgmmaA::Desc(Operand::Reg(_)) | WgmmaA::Desc(_) => Vec::new(),
                };
                (d, a)
            }
            _ => (Vec::new(), Vec::new()),
        }
    }
}
