//! Exhaustive, bounded enumeration of the outcomes a litmus test allows under one variant:
//! depth-first search over the step relation of `machine.rs` with a visited set and a
//! partial-order reduction. Deterministic: successors are explored in a fixed order and
//! outcomes collected in an ordered set.
//!
//! **Reduction.** The TLA+ artifact keeps running one thread until its next instruction is a
//! memory operation or it blocks (digest §1.6). We use the sound form of that idea: when
//! some enabled step is *safe* we take only the first such step; otherwise we branch on all
//! enabled steps. A step is safe when it touches no memory and is independent of every
//! other step that is or can become enabled before it — thread-local steps (T-LOCAL,
//! termination), and under the collective-control variants the group steps for labels,
//! branches and SG ops (their participants are frozen at the aligned pc and U = ∅, so no
//! other step reads or writes their state). Such steps only ever *enable* others (they
//! move a thread towards alignment or out of an unknown set), never disable them, so the
//! singleton is a persistent set; the state graph is acyclic (every step advances a pc or
//! creates a DB), so no cycle proviso is needed. Under Spec, independent branches are not
//! safe (entering a DB can prune, or prevent, a speculative SG op), nor is the speculative
//! SG op itself.

use std::collections::{BTreeSet, HashSet};

use super::machine::{mask_iter, Machine, State, Step};
use super::syntax::{Litmus, Outcome, OutcomeSet};
use super::variant::Variant;
use super::EnumError;

/// Limits that keep enumeration finite on tests that do not terminate (spin loops) or whose
/// state space is too large. Hitting one is an error, never a silently truncated set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Longest execution explored, in steps (a group step counts once).
    pub max_steps: usize,
    /// Most distinct states visited.
    pub max_states: usize,
    /// Apply the partial-order reduction (default). Off explores every interleaving; the
    /// test suite uses it to check the reduction loses no outcome.
    pub reduce: bool,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_steps: 10_000,
            max_states: 2_000_000,
            reduce: true,
        }
    }
}

/// The set of outcomes of every complete (all threads terminated, not pruned) execution.
pub fn enumerate(test: &Litmus, variant: Variant, bounds: Bounds) -> Result<OutcomeSet, EnumError> {
    // Without recording, every history is empty, so the search visits exactly the states of
    // the plain state graph.
    let runs = explore(test, variant, bounds, false)?;
    Ok(runs.into_iter().map(|(o, _)| o).collect())
}

/// The participation of every complete execution: per execution, per thread (by id), the
/// participant masks of the subgroup operations it executed, in its program order.
///
/// The reduction stays sound with the history in the state: a thread's own sequence of
/// participant masks is unchanged by swapping two adjacent independent steps, so every
/// Mazurkiewicz trace the persistent-set search keeps a representative of has the same
/// per-thread history as every other interleaving of it.
pub fn enumerate_participation(
    test: &Litmus,
    variant: Variant,
    bounds: Bounds,
) -> Result<BTreeSet<Participation>, EnumError> {
    let runs = explore(test, variant, bounds, true)?;
    Ok(runs.into_iter().map(|(_, p)| p).collect())
}

/// Per thread (index = thread id), the participant mask (bit `t` = thread `t`) of each
/// subgroup operation it executed, in its program order.
pub type Participation = Vec<Vec<u64>>;

/// The bounded depth-first search shared by [`enumerate`] and [`enumerate_participation`]:
/// the outcome and (when `record`) the participation of every complete execution. The
/// history is part of the visited key, so two paths to one state with different
/// participations are both kept.
fn explore(
    test: &Litmus,
    variant: Variant,
    bounds: Bounds,
    record: bool,
) -> Result<BTreeSet<(Outcome, Participation)>, EnumError> {
    let m = Machine { test, variant };
    let mut visited: HashSet<(State, Participation)> = HashSet::new();
    let empty: Participation = vec![Vec::new(); test.threads];
    let mut stack: Vec<(State, Participation, usize)> = vec![(m.initial(), empty, 0)];
    let mut out = BTreeSet::new();
    while let Some((s, hist, depth)) = stack.pop() {
        let key = (s, hist);
        if visited.contains(&key) {
            continue;
        }
        let (s, hist) = key;
        if depth > bounds.max_steps {
            return Err(EnumError::StepBound {
                variant,
                limit: bounds.max_steps,
            });
        }
        if visited.len() >= bounds.max_states {
            return Err(EnumError::StateBound {
                variant,
                limit: bounds.max_states,
            });
        }
        if s.threads.iter().all(|t| t.done) {
            if let Some((pos, msg)) = &s.pending_ub {
                return Err(EnumError::Undefined {
                    pos: *pos,
                    msg: msg.clone(),
                });
            }
            out.insert((m.outcome(&s), hist.clone()));
            visited.insert((s, hist));
            continue;
        }
        let enabled = m.enabled(&s);
        if enabled.is_empty() {
            let waiting = (0..s.threads.len())
                .filter(|&t| !s.threads[t].done)
                .map(|t| format!("thread {t} at {}", m.pos_of(&s, t)))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(EnumError::Deadlock { variant, waiting });
        }
        let first_safe = enabled.iter().find(|(_, safe)| *safe && bounds.reduce);
        let chosen: Vec<Step> = match first_safe {
            Some((step, _)) => vec![*step],
            None => enabled.iter().map(|(step, _)| *step).collect(),
        };
        let mut next = Vec::new();
        for step in chosen {
            let mut h = hist.clone();
            if record {
                if let Some(mask) = m.sg_participants(&s, step) {
                    for t in mask_iter(mask) {
                        h[t].push(mask);
                    }
                }
            }
            next.extend(m.apply(&s, step)?.into_iter().map(|n| (n, h.clone())));
        }
        visited.insert((s, hist));
        // Reversed so the first enabled step is explored first.
        for (n, h) in next.into_iter().rev() {
            stack.push((n, h, depth + 1));
        }
    }
    Ok(out)
}
