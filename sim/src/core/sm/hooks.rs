//! Observers of the SM's issue path (Akita's hooks): a trait called at the boundaries of the
//! stages (`sm::stages`) with a read-only view of the instruction, and the two observers the
//! simulator ships — the warp trace (`--trace-warps`, `RunOptions::trace_warps`) and the
//! asynchronous-synchronisation checker's recorder (`RunOptions::record_async`).
//!
//! Each SM holds its own list (`Sm::add_hook`), so the SM phase stays free of shared state.
//! An empty list costs one length test per boundary: no view is built, nothing is called.
//! Observers never change the run (same cycles, stats and results with them or without).

use super::super::exec::ExecEnv;
use super::super::program::Program;
use super::super::warp::Warp;
use crate::simt::Mask;
use crate::stats::WarpEvent;
use gpusim_isa::{FuncId, Inst};
use gpusim_models::async_sync::{AsyncEvent, EventKind, Interest};
use gpusim_models::shared_text::TextSequence;
use std::any::Any;
use std::sync::Arc;

/// The CTA of an observed instruction or event.
#[derive(Clone, Copy, Debug)]
pub struct CtaId {
    /// Linear CTA id in the grid.
    pub linear: u64,
    pub ctaid: [u32; 3],
}

/// One warp instruction at a stage boundary, as an observer sees it.
pub struct IssueView<'a> {
    pub cycle: u64,
    pub sm: u32,
    /// The warp's slot on its SM.
    pub slot: usize,
    /// The instruction's place in its SM's issue order within the cycle. Instructions that
    /// reach the memory system issue in the memory exchange, after the SM's others, but keep
    /// the place they were picked at: records sorted by (cycle, order) — stably, a record
    /// made earlier first — are in the order of issue (`InOrder`).
    pub order: u32,
    pub cta: CtaId,
    /// The warp: before the semantics at `execute`, after write-back at `retire`.
    pub warp: &'a Warp,
    pub prog: &'a Program,
    pub func: FuncId,
    pub pc: u32,
    pub inst: &'a Inst,
}

/// An mbarrier phase that completed (a landing's transactions or an arrival).
pub struct PhaseView {
    pub cycle: u64,
    pub sm: u32,
    /// As `IssueView::order`: the issuing instruction's place, 0 for a landing (landings come
    /// before any issue in a cycle).
    pub order: u32,
    pub cta: CtaId,
    /// The mbarrier's offset in the CTA's shared memory.
    pub mbar: u64,
}

/// An observer of the issue path. Every method has an empty default; an observer implements
/// the boundaries it needs. Called in the order the SM issues (see `IssueView::order` for the
/// instructions of the memory exchange).
pub trait IssueHook: Any + Send {
    /// Stages 1–3 done (fetched, operands ready, unit reserved); the semantics (stage 4) run
    /// next, in `env`. The warp's registers are those the instruction reads.
    fn execute(&mut self, _at: &IssueView, _env: &ExecEnv) {}

    /// Stage 6 done for the warp itself: scoreboard set, barrier arrival counted,
    /// reconvergence stepped (`at.warp` holds the state after). `exec`: the lanes that executed.
    /// Barrier releases, CTA-wide exits and the async units' effects follow.
    fn retire(&mut self, _at: &IssueView, _exec: Mask) {}

    /// An mbarrier phase completed.
    fn mbarrier_phase(&mut self, _at: &PhaseView) {}
}

/// An SM's observers.
#[derive(Default)]
pub struct Hooks {
    list: Vec<Box<dyn IssueHook>>,
}

impl Hooks {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn push(&mut self, h: Box<dyn IssueHook>) {
        self.list.push(h);
    }

    /// The first observer of type `H`.
    pub fn get_mut<H: IssueHook>(&mut self) -> Option<&mut H> {
        self.list
            .iter_mut()
            .find_map(|h| (h.as_mut() as &mut dyn Any).downcast_mut::<H>())
    }

    pub(super) fn execute(&mut self, at: &IssueView, env: &ExecEnv) {
        for h in &mut self.list {
            h.execute(at, env);
        }
    }

    pub(super) fn retire(&mut self, at: &IssueView, exec: Mask) {
        for h in &mut self.list {
            h.retire(at, exec);
        }
    }

    pub(super) fn mbarrier_phase(&mut self, at: &PhaseView) {
        for h in &mut self.list {
            h.mbarrier_phase(at);
        }
    }
}

/// Records kept in issue order although the memory exchange issues some instructions late:
/// each record carries its (cycle, order) and goes after every record with a key not above
/// its own (appended, in the common case).
pub struct InOrder<T> {
    keys: Vec<(u64, u32)>,
    items: Vec<T>,
}

impl<T> Default for InOrder<T> {
    fn default() -> Self {
        InOrder {
            keys: Vec::new(),
            items: Vec::new(),
        }
    }
}

impl<T> InOrder<T> {
    pub fn push(&mut self, key: (u64, u32), item: T) {
        if self.keys.last().is_none_or(|k| *k <= key) {
            self.keys.push(key);
            self.items.push(item);
        } else {
            let i = self.keys.partition_point(|k| *k <= key);
            self.keys.insert(i, key);
            self.items.insert(i, item);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The records in order, leaving none.
    pub fn drain(&mut self) -> std::vec::Drain<'_, T> {
        self.keys.clear();
        self.items.drain(..)
    }

    /// The records in order, leaving none.
    pub fn take(&mut self) -> Vec<T> {
        self.keys.clear();
        std::mem::take(&mut self.items)
    }
}

/// The warp trace: a `WarpEvent` per issued instruction, with the reconvergence state after
/// it. The GPU drains each SM's events every cycle (`gpu::drain_events`), in SM order.
#[derive(Default)]
pub struct TraceHook {
    events: InOrder<WarpEvent>,
    /// Per warp slot, the states traced so far and the age of the warp they belong to (a new
    /// warp in the slot starts a new sequence): each shares its tail with the one before.
    states: Vec<(u64, TextSequence)>,
}

impl TraceHook {
    /// This cycle's events, in issue order.
    pub fn drain(&mut self) -> std::vec::Drain<'_, WarpEvent> {
        self.events.drain()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    fn states_of(&mut self, slot: usize, age: u64) -> &mut TextSequence {
        if self.states.len() <= slot {
            self.states
                .resize_with(slot + 1, || (u64::MAX, TextSequence::default()));
        }
        let s = &mut self.states[slot];
        if s.0 != age {
            *s = (age, TextSequence::default());
        }
        &mut s.1
    }
}

impl IssueHook for TraceHook {
    fn retire(&mut self, at: &IssueView, exec: Mask) {
        let w = at.warp;
        let after = w.simt.paper_state(w.warp_size);
        let after = self.states_of(at.slot, w.age).push(after);
        let func = at.prog.module.function(at.func);
        let event = WarpEvent {
            // `run` numbers the launches.
            launch: 0,
            cycle: at.cycle,
            sm: at.sm,
            cta: at.cta.ctaid,
            warp: w.warp_in_cta,
            func: func.name.clone(),
            pc: at.pc,
            line: at.inst.span.line,
            text: gpusim_isa::print::inst_to_ptx(&at.prog.module, func, at.inst),
            exec,
            after,
        };
        self.events.push((at.cycle, at.order), event);
    }
}

/// The asynchronous-synchronisation checker's recorder: the event of every instruction the
/// checker needs, computed from the registers before it executes (`ExecEnv::async_event`),
/// and every mbarrier phase completion.
pub struct AsyncRecorder {
    interest: Arc<Interest>,
    log: InOrder<AsyncEvent>,
}

impl AsyncRecorder {
    pub fn new(interest: Arc<Interest>) -> AsyncRecorder {
        AsyncRecorder {
            interest,
            log: InOrder::default(),
        }
    }

    /// The SM's events in issue order, leaving none.
    pub fn take(&mut self) -> Vec<AsyncEvent> {
        self.log.take()
    }
}

impl IssueHook for AsyncRecorder {
    fn execute(&mut self, at: &IssueView, env: &ExecEnv) {
        let Some((kind, lanes)) = env.async_event(at.warp, at.inst, &self.interest) else {
            return;
        };
        let event = AsyncEvent {
            cycle: at.cycle,
            sm: at.sm,
            cta: at.cta.linear as u32,
            ctaid: at.cta.ctaid,
            warp: at.warp.warp_in_cta,
            lanes: lanes as u32,
            at: Some((at.func.0, at.pc)),
            kind,
        };
        self.log.push((at.cycle, at.order), event);
    }

    fn mbarrier_phase(&mut self, at: &PhaseView) {
        let event = AsyncEvent {
            cycle: at.cycle,
            sm: at.sm,
            cta: at.cta.linear as u32,
            ctaid: at.cta.ctaid,
            warp: 0,
            lanes: 0,
            at: None,
            kind: EventKind::MbarPhaseComplete { mbar: at.mbar },
        };
        self.log.push((at.cycle, at.order), event);
    }
}

#[cfg(test)]
mod tests {
    use super::InOrder;

    #[test]
    fn late_records_take_their_place() {
        let mut r = InOrder::default();
        r.push((5, 0), "landing");
        r.push((5, 2), "b");
        r.push((5, 3), "b second");
        // Issued in the exchange: picked first (order 0), second of it (1).
        r.push((5, 0), "a");
        r.push((5, 1), "a second");
        r.push((6, 0), "next cycle");
        assert_eq!(
            r.take(),
            ["landing", "a", "a second", "b", "b second", "next cycle"]
        );
        assert!(r.is_empty());
    }
}
