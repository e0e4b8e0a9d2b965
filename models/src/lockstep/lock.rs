//! The lock-step semantics (paper §4, Tables 1–3; digest §3.4): the interleaving semantics of
//! φ(P) with one thread, interpreted directly on the CFG. One program counter walks the blocks
//! in sort order; a thread is enabled in block B iff its `v_active` is B; after B each enabled
//! thread's `v_active` becomes its successor (`End` after `ret`/`exit`); at the last block of a
//! loop, control goes back to the header while any thread's `v_active` is that header
//! (B_back), else on (B_exit). Inside a block every instruction runs for all enabled threads
//! before the next (the vector assignment; a plain store by several threads is the ψ
//! assignment, and the last writer's value stays, which only matters when there is a race,
//! which is reported).
//!
//! Barriers: `barrier (v_active = B)` becomes `sync (∨_t en_t) ⇒ (∧_t en_t)`: if any thread is
//! at the barrier, all must be, else divergence. A sync nobody reaches is vacuous and does not
//! end the race epoch (digest §3.4, the correction to Def. 4.1). The final barrier of the
//! normal form is reached by all threads once every `v_active` is `End`.

use super::order::sort_order;
use super::race::{Acc, Detector};
use super::{Arrival, Divergence, FinalMemory, Setup, Verdict};
use crate::ptx_exec::{Control, CtaMemory, GlobalMemory};
use gpusim_isa::ir::Space;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockstepOptions {
    /// Thread-instruction steps allowed per CTA before `BoundExceeded`.
    pub max_steps: u64,
}

impl Default for LockstepOptions {
    fn default() -> LockstepOptions {
        LockstepOptions {
            max_steps: 50_000_000,
        }
    }
}

pub(super) fn run(
    s: &Setup,
    mut global: GlobalMemory,
    opts: &LockstepOptions,
) -> Result<FinalMemory, Verdict> {
    global.load_module_globals(s.kernel.module);
    let order = sort_order(&s.flow);
    let nblocks = s.flow.cfg.blocks.len();
    let mut pos = vec![usize::MAX; nblocks];
    for (i, &b) in order.iter().enumerate() {
        pos[b] = i;
    }
    // For each block, the headers of the loops it closes in sort order, innermost first.
    let mut lasts: Vec<Vec<(u32, usize)>> = vec![Vec::new(); nblocks];
    for l in &s.flow.loops.loops {
        let last = *l.body.iter().max_by_key(|&&b| pos[b]).unwrap_or(&l.header);
        lasts[last].push((l.depth, l.header));
    }
    for v in &mut lasts {
        v.sort_by_key(|&(depth, _)| std::cmp::Reverse(depth));
    }
    let tpc = s.launch.threads_per_cta() as usize;
    let mut cross = Detector::default();
    for cta in 0..s.launch.ctas() {
        let ctaid = s.launch.cta_index(cta);
        let mut threads: Vec<_> = (0..tpc as u32)
            .map(|t| s.kernel.thread(s.launch.thread_index(t), ctaid))
            .collect();
        let mut mem = CtaMemory {
            global,
            shared: vec![0; s.kernel.shared_bytes(s.launch.dynamic_shared)],
            params: s.params.clone(),
        };
        let mut epoch = Detector::default();
        // v_active: Some(block) or None for End.
        let mut active: Vec<Option<usize>> = vec![Some(s.flow.cfg.entry()); tpc];
        let mut steps = 0u64;
        let mut i = 0;
        while i < order.len() {
            let b = order[i];
            let en: Vec<usize> = (0..tpc).filter(|&t| active[t] == Some(b)).collect();
            let blk = &s.flow.cfg.blocks[b];
            if !en.is_empty() {
                for pc in blk.start..blk.end {
                    let mut arrived = Vec::new();
                    let mut non_aligned = false;
                    for &t in &en {
                        steps += 1;
                        if steps > opts.max_steps {
                            return Err(Verdict::BoundExceeded {
                                limit: opts.max_steps,
                            });
                        }
                        debug_assert_eq!(threads[t].pc, pc);
                        let eff = s.kernel.step(&mut threads[t], &mut mem, &s.launch)?;
                        for a in &eff.accesses {
                            let acc = Acc {
                                who: t as u32,
                                tid: t as u32,
                                cta,
                                pc,
                                kind: a.kind,
                            };
                            if let Some(c) = epoch.record(a, acc) {
                                return Err(s.race(c));
                            }
                            if a.space == Space::Global {
                                if let Some(c) = cross.record(a, Acc { who: cta, ..acc }) {
                                    return Err(s.race(c));
                                }
                            }
                        }
                        if let Control::Barrier { by_id, .. } = eff.control {
                            arrived.push(t);
                            non_aligned |= by_id.is_some();
                        }
                    }
                    if !arrived.is_empty() {
                        if arrived.len() < tpc && non_aligned {
                            // SYNC is one barrier instruction; threads completing a
                            // non-aligned `barrier.sync` from different instructions have no
                            // rule here (the interleaving semantics has one).
                            return Err(Verdict::Unsupported(format!(
                                "barrier.sync without .aligned at line {} reached by {} of {tpc} threads: the lock-step semantics has no rule for threads meeting at different barrier instructions",
                                s.kernel.line(pc),
                                arrived.len()
                            )));
                        }
                        if arrived.len() < tpc {
                            return Err(divergence(s, cta, pc, &arrived, &active, &threads));
                        }
                        epoch.clear();
                    }
                }
                for &t in &en {
                    active[t] = if threads[t].done {
                        None
                    } else {
                        Some(s.flow.cfg.block_of(threads[t].pc))
                    };
                }
            }
            i = match lasts[b].iter().find(|(_, h)| active.contains(&Some(*h))) {
                Some(&(_, h)) => pos[h],
                None => i + 1,
            };
        }
        if let Some(t) = active.iter().position(Option::is_some) {
            return Err(Verdict::Unsupported(format!(
                "sort order violated: thread {t} still has to run the block at line {} after the \
                 last block",
                s.kernel.line(threads[t].pc)
            )));
        }
        global = mem.global;
    }
    Ok(global)
}

/// A failed SYNC: `arrived` reached the barrier at `pc`; the others are grouped by the block
/// they will run next (or `End`).
fn divergence(
    s: &Setup,
    cta: u32,
    pc: u32,
    arrived: &[usize],
    active: &[Option<usize>],
    threads: &[crate::ptx_exec::Thread],
) -> Verdict {
    let mut arrivals = vec![Arrival {
        threads: arrived.iter().map(|&t| t as u32).collect(),
        at: Some(s.site(pc)),
        loop_counters: vec![],
    }];
    for (t, a) in active.iter().enumerate() {
        if arrived.contains(&t) {
            continue;
        }
        let at = a.map(|_| s.site(threads[t].pc));
        match arrivals.iter_mut().skip(1).find(|x| x.at == at) {
            Some(x) => x.threads.push(t as u32),
            None => arrivals.push(Arrival {
                threads: vec![t as u32],
                at,
                loop_counters: vec![],
            }),
        }
    }
    if arrived[0] != 0 {
        let z = arrivals
            .iter()
            .position(|a| a.threads.contains(&0))
            .unwrap_or(0);
        arrivals.swap(0, z);
    }
    Verdict::BarrierDivergence(Divergence {
        cta: s.launch.cta_index(cta),
        arrivals,
    })
}
