//! The interleaving semantics (paper §3.2, Fig. 4; digest §2): any thread that is not waiting
//! may take one step (THREAD_B); an error of one thread is the kernel's (THREAD_E); the kernel
//! terminates when every thread has (TERMINATION). Barriers carry the barrier variables β: the
//! barrier's id (its pc; `End` for the final barrier of the normal form) and one counter per
//! natural loop, incremented at each visit of the header and reset when the thread leaves the
//! loop. When no thread can step and every thread waits: equal β → BARRIER_S (all continue,
//! the race epoch ends); otherwise BARRIER_F (divergence).
//!
//! CTAs run one after another; each CTA is explored with the chosen `Schedule`.

use super::race::{Acc, Detector};
use super::{Arrival, Divergence, FinalMemory, Setup, Verdict};
use crate::ptx_exec::{Control, CtaMemory, Effect, GlobalMemory, Thread};
use gpusim_isa::ir::{Op, Pc, Space};

/// How the next thread is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Keep stepping the current thread until it waits or exits, then the lowest runnable one.
    RunToBarrier,
    /// One step of each runnable thread in turn.
    RoundRobin,
    /// A runnable thread chosen by a xorshift generator seeded with `seed`.
    Random { seed: u64 },
    /// Every interleaving of the steps that touch global or shared memory (steps on registers
    /// alone commute with every other thread's, so they are not interleaved), depth first, up
    /// to `max_runs` complete runs per CTA. Every run must be clean and all must agree on the
    /// final memory.
    Exhaustive { max_runs: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InterleavingOptions {
    pub schedule: Schedule,
    /// Thread steps allowed per CTA (per run when exhaustive) before `BoundExceeded`.
    pub max_steps: u64,
}

impl Default for InterleavingOptions {
    fn default() -> InterleavingOptions {
        InterleavingOptions {
            schedule: Schedule::RunToBarrier,
            max_steps: 50_000_000,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Wait {
    Run,
    /// At the barrier at `pc` with the loop counters it had on arrival.
    Barrier(Pc, Vec<u32>),
    /// At a `barrier.sync` without `.aligned` (at `pc`) of barrier id `.0`: it completes with
    /// every thread waiting at any non-aligned barrier of that id.
    ById(u64, Pc),
    /// Exited: waiting at the final barrier with all loops left.
    End,
}

/// One CTA mid-run: everything a schedule may need to copy to explore alternatives.
#[derive(Clone)]
struct State {
    threads: Vec<Thread>,
    wait: Vec<Wait>,
    counters: Vec<Vec<u32>>,
    mem: CtaMemory,
    epoch: Detector,
    cross: Detector,
    steps: u64,
    current: usize,
    rng: u64,
}

pub(super) fn run(
    s: &Setup,
    mut global: GlobalMemory,
    opts: &InterleavingOptions,
) -> Result<FinalMemory, Verdict> {
    global.load_module_globals(s.kernel.module);
    let mut cross = Detector::default();
    let tpc = s.launch.threads_per_cta();
    let nloops = s.flow.loops.loops.len();
    for cta in 0..s.launch.ctas() {
        let ctaid = s.launch.cta_index(cta);
        let st = State {
            threads: (0..tpc)
                .map(|t| s.kernel.thread(s.launch.thread_index(t), ctaid))
                .collect(),
            wait: vec![Wait::Run; tpc as usize],
            counters: vec![vec![0; nloops]; tpc as usize],
            mem: CtaMemory {
                global,
                shared: vec![0; s.kernel.shared_bytes(s.launch.dynamic_shared)],
                params: s.params.clone(),
            },
            epoch: Detector::default(),
            cross,
            steps: 0,
            current: 0,
            rng: match opts.schedule {
                Schedule::Random { seed } => seed ^ 0x9E37_79B9_7F4A_7C15 ^ u64::from(cta),
                _ => 0,
            } | 1,
        };
        let done = match opts.schedule {
            Schedule::Exhaustive { max_runs } => explore(s, cta, st, opts, max_runs)?,
            _ => run_cta(s, cta, st, opts)?,
        };
        global = done.mem.global;
        cross = done.cross;
    }
    Ok(global)
}

/// Run one CTA to the end under a single deterministic or random schedule.
fn run_cta(
    s: &Setup,
    cta: u32,
    mut st: State,
    opts: &InterleavingOptions,
) -> Result<State, Verdict> {
    loop {
        let runnable: Vec<usize> = (0..st.threads.len())
            .filter(|&t| st.wait[t] == Wait::Run)
            .collect();
        if runnable.is_empty() {
            if barrier(s, cta, &mut st)? {
                return Ok(st);
            }
            continue;
        }
        let t = match opts.schedule {
            Schedule::RunToBarrier => {
                if st.wait[st.current] == Wait::Run {
                    st.current
                } else {
                    runnable[0]
                }
            }
            Schedule::RoundRobin => *runnable
                .iter()
                .find(|&&t| t > st.current)
                .unwrap_or(&runnable[0]),
            Schedule::Random { .. } | Schedule::Exhaustive { .. } => {
                st.rng ^= st.rng << 13;
                st.rng ^= st.rng >> 7;
                st.rng ^= st.rng << 17;
                runnable[(st.rng % runnable.len() as u64) as usize]
            }
        };
        st.current = t;
        step(s, cta, &mut st, t, opts)?;
    }
}

/// Depth-first exploration of every order of shared-memory steps in one CTA.
fn explore(
    s: &Setup,
    cta: u32,
    start: State,
    opts: &InterleavingOptions,
    max_runs: u64,
) -> Result<State, Verdict> {
    let mut stack = vec![start];
    let mut runs = 0u64;
    let mut result: Option<State> = None;
    while let Some(mut st) = stack.pop() {
        let runnable: Vec<usize> = (0..st.threads.len())
            .filter(|&t| st.wait[t] == Wait::Run)
            .collect();
        if runnable.is_empty() {
            if barrier(s, cta, &mut st)? {
                runs += 1;
                if runs > max_runs {
                    return Err(Verdict::BoundExceeded { limit: max_runs });
                }
                match &result {
                    Some(r) if r.mem != st.mem => return Err(Verdict::Nondeterministic),
                    Some(_) => {}
                    None => result = Some(st),
                }
            } else {
                stack.push(st);
            }
            continue;
        }
        // Push in reverse so the lowest thread is explored first.
        for &t in runnable.iter().rev() {
            let mut next = st.clone();
            // Steps on private state commute with every other thread's, so a move is one
            // step followed by the private steps up to the next instruction that may touch
            // global or shared memory: only those points are interleaved.
            step(s, cta, &mut next, t, opts)?;
            while next.wait[t] == Wait::Run && !may_touch(s, next.threads[t].pc) {
                step(s, cta, &mut next, t, opts)?;
            }
            stack.push(next);
        }
    }
    result.ok_or(Verdict::BoundExceeded { limit: max_runs })
}

/// Whether the instruction at `pc` may access global or shared memory.
fn may_touch(s: &Setup, pc: Pc) -> bool {
    s.kernel
        .func
        .body
        .get(pc as usize)
        .is_some_and(|i| match &i.op {
            Op::Ld { space, .. } | Op::St { space, .. } | Op::Atom { space, .. } => {
                !matches!(space, Space::Local | Space::Param | Space::Const)
            }
            _ => false,
        })
}

/// One step of thread `t` (THREAD_B).
fn step(
    s: &Setup,
    cta: u32,
    st: &mut State,
    t: usize,
    opts: &InterleavingOptions,
) -> Result<(), Verdict> {
    st.steps += 1;
    if st.steps > opts.max_steps {
        return Err(Verdict::BoundExceeded {
            limit: opts.max_steps,
        });
    }
    let eff: Effect = s.kernel.step(&mut st.threads[t], &mut st.mem, &s.launch)?;
    for a in &eff.accesses {
        let acc = Acc {
            who: t as u32,
            tid: t as u32,
            cta,
            pc: eff.pc,
            kind: a.kind,
        };
        if let Some(c) = st.epoch.record(a, acc) {
            return Err(s.race(c));
        }
        if a.space == Space::Global {
            if let Some(c) = st.cross.record(a, Acc { who: cta, ..acc }) {
                return Err(s.race(c));
            }
        }
    }
    match eff.control {
        Control::Exit => {
            // Leaving the kernel leaves every loop (digest §2.6); the thread waits at `Fin`.
            st.counters[t].iter_mut().for_each(|c| *c = 0);
            st.wait[t] = Wait::End;
        }
        Control::Barrier { pc, by_id } => {
            st.wait[t] = match by_id {
                Some(id) => Wait::ById(id, pc),
                None => Wait::Barrier(pc, st.counters[t].clone()),
            };
            transition(s, &mut st.counters[t], eff.pc, st.threads[t].pc);
        }
        Control::Next | Control::Jump(_) => {
            transition(s, &mut st.counters[t], eff.pc, st.threads[t].pc)
        }
    }
    Ok(())
}

/// Update the loop counters when control passes from the block ending at `from` to the block
/// of `to` (the GOTO rule with the barrier variables of Fig. 4d).
fn transition(s: &Setup, counters: &mut [u32], from: Pc, to: Pc) {
    let cfg = &s.flow.cfg;
    let b = cfg.block_of(from);
    if cfg.blocks[b].last_pc() != from || to as usize >= s.kernel.func.body.len() {
        return;
    }
    let c = cfg.block_of(to);
    for (i, l) in s.flow.loops.loops.iter().enumerate() {
        let has = |x: usize| l.body.binary_search(&x).is_ok();
        if has(b) && !has(c) {
            counters[i] = 0;
        }
        if c == l.header {
            counters[i] += 1;
        }
    }
}

/// Whether two waiting threads wait for the same barrier: the same instance of one aligned
/// barrier (its pc and loop counters), or any non-aligned `barrier.sync` of one id.
fn same_barrier(a: &Wait, b: &Wait) -> bool {
    match (a, b) {
        (Wait::ById(x, _), Wait::ById(y, _)) => x == y,
        _ => a == b,
    }
}

/// No thread can step. BARRIER_S when all wait with one β, TERMINATION when all are at `End`
/// (returns true), BARRIER_F otherwise.
fn barrier(s: &Setup, cta: u32, st: &mut State) -> Result<bool, Verdict> {
    let first = &st.wait[0];
    if st.wait.iter().all(|w| same_barrier(w, first)) {
        if *first == Wait::End {
            return Ok(true);
        }
        st.epoch.clear();
        st.wait.iter_mut().for_each(|w| *w = Wait::Run);
        return Ok(false);
    }
    let mut arrivals: Vec<Arrival> = Vec::new();
    for (t, w) in st.wait.iter().enumerate() {
        let (at, ctrs) = match w {
            Wait::Barrier(pc, c) => (Some(s.site(*pc)), c.clone()),
            Wait::ById(_, pc) => (Some(s.site(*pc)), Vec::new()),
            _ => (None, vec![0; st.counters[t].len()]),
        };
        match arrivals
            .iter_mut()
            .find(|a| a.at == at && a.loop_counters == ctrs)
        {
            Some(a) => a.threads.push(t as u32),
            None => arrivals.push(Arrival {
                threads: vec![t as u32],
                at,
                loop_counters: ctrs,
            }),
        }
    }
    Err(Verdict::BarrierDivergence(Divergence {
        cta: s.launch.cta_index(cta),
        arrivals,
    }))
}
