//! What each resident warp of an SM waits for, for fault reports (deadlock, livelock,
//! watchdog): one line per unfinished warp, with what it waits on named precisely, and the
//! number of finished warps (listed by nobody: they wait for nothing).

use super::{hopper, Sm};
use crate::core::program::Program;
use crate::core::warp::{Warp, WarpState};

/// What an unfinished warp waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Wait {
    /// At CTA barriers (`bar.sync`, `bar.red`; under independent thread scheduling, some of
    /// its threads).
    CtaBarrier,
    /// At `barrier.cluster.wait`.
    ClusterBarrier,
    /// Suspended in `mbarrier.try_wait`.
    Mbarrier,
    /// For registers that no pending operation will ever write (their producer, a memory
    /// operation, never completes).
    Registers,
    /// Repeating its state at a backward branch with no memory change.
    Spinning,
    /// Ready, or waiting for something with a known end (a register, a unit, a fetch).
    Running,
}

impl Wait {
    /// The headline phrase for `n` warps in this state.
    pub fn phrase(self, n: usize) -> String {
        let (one, many) = match self {
            Wait::CtaBarrier => (
                "waits at a CTA barrier that cannot complete",
                "wait at CTA barriers that cannot complete",
            ),
            Wait::ClusterBarrier => (
                "waits at a cluster barrier that cannot complete",
                "wait at cluster barriers that cannot complete",
            ),
            Wait::Mbarrier => (
                "waits in mbarrier.try_wait for a phase that cannot complete",
                "wait in mbarrier.try_wait for phases that cannot complete",
            ),
            Wait::Registers => (
                "waits for registers that no pending operation will ever write",
                "wait for registers that no pending operation will ever write",
            ),
            Wait::Spinning => (
                "spins without changing any state",
                "spin without changing any state",
            ),
            Wait::Running => ("can still run", "can still run"),
        };
        match n {
            1 => format!("1 warp {one}"),
            _ => format!("{n} warps {many}"),
        }
    }
}

impl Sm {
    /// One line per unfinished resident warp — where it is, what it waits on, its
    /// reconvergence state (long stacks summarised) — with that wait, and the number of
    /// finished warps still resident (their CTA has not retired).
    pub fn report_warps(&self, prog: &Program) -> (Vec<(Wait, String)>, usize) {
        let mut out = Vec::new();
        let mut finished = 0;
        for (slot, w) in self.warps.iter().enumerate() {
            let Some(w) = w else { continue };
            if w.state == WarpState::Completed {
                finished += 1;
                continue;
            }
            let cta = self.ctas[w.cta]
                .as_ref()
                .map(|c| c.ctaid)
                .unwrap_or_default();
            let f = prog.module.function(w.func());
            let line = f
                .body
                .get(w.pc() as usize)
                .map(|i| i.span.line)
                .unwrap_or(0);
            let (wait, what) = self.wait_of(slot, w, prog);
            out.push((
                wait,
                format!(
                    "SM {} warp slot {slot} (CTA {:?} warp {}): {what} at {}:{line} in `{}`; {}",
                    self.id,
                    cta,
                    w.warp_in_cta,
                    prog.module.file,
                    f.name,
                    crate::core::fault::summarise_state(&w.simt.describe())
                ),
            ));
        }
        (out, finished)
    }

    /// What the unfinished warp in `slot` waits for, in words.
    fn wait_of(&self, slot: usize, w: &Warp, prog: &Program) -> (Wait, String) {
        if let WarpState::Barrier(b) = w.state {
            // Lanes of an independently scheduled warp park at `barrier.cluster` under its
            // pseudo id (`simt::CLUSTER_BARRIER`).
            let kind = if b == 1 << crate::simt::CLUSTER_BARRIER {
                Wait::ClusterBarrier
            } else {
                Wait::CtaBarrier
            };
            return (kind, describe_barriers(b));
        }
        let parked = self.ctas[w.cta].as_ref().and_then(|c| {
            c.mbar_waiters
                .iter()
                .find(|x| x.slot == slot)
                .map(|x| (c, x))
        });
        if let Some((c, x)) = parked {
            return (Wait::Mbarrier, hopper::describe_park(c, &x.park));
        }
        if w.fetch_ready == u64::MAX {
            return (Wait::ClusterBarrier, "waiting at barrier.cluster".into());
        }
        if w.live.spinning {
            return (Wait::Spinning, "spinning without progress".into());
        }
        if w.next_ready == u64::MAX {
            let regs = never_ready_registers(w, prog);
            return (
                Wait::Registers,
                format!("waiting for {regs}, which no pending operation will ever write (its producer, a memory operation, never completes)"),
            );
        }
        (
            Wait::Running,
            "running (ready, or waiting for a register, a unit or a fetch that will complete)"
                .into(),
        )
    }
}

/// The registers of the warp's next instruction that will never be ready, by name.
fn never_ready_registers(w: &Warp, prog: &Program) -> String {
    let f = w.func();
    let func = prog.module.function(f);
    let Some((reads, writes)) = prog.funcs[f.0 as usize].deps.get(w.pc() as usize) else {
        return "registers".into();
    };
    let base = w.frame().reg_base;
    let names: Vec<&str> = reads
        .iter()
        .chain(writes)
        .filter(|&&r| w.ready[(base + r) as usize] == u64::MAX)
        .map(|&r| func.regs[r as usize].name.as_str())
        .collect();
    match names.as_slice() {
        [] => "registers".into(),
        [one] => format!("register {one}"),
        many => format!("registers {}", many.join(", ")),
    }
}

/// The barriers a blocked warp waits at, by name.
fn describe_barriers(bits: u32) -> String {
    let names: Vec<String> = (0..32)
        .filter(|b| bits >> b & 1 == 1)
        .map(|b| match b {
            crate::simt::CLUSTER_BARRIER => "barrier.cluster".to_string(),
            _ => format!("bar.sync {b}"),
        })
        .collect();
    format!("waiting at {}", names.join(" and "))
}
