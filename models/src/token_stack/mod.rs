//! The warp-level branching reference of the formal CUDA semantics (Habermaier 2011, §5.4–5.5
//! and §6; digest `shared/notes/cuda-formal-semantics.md` §3.5, §3.6, §4): warps of threads
//! running PTX whose reconvergence tokens `gpusim_isa::analysis::insert_tokens` inserted (or
//! that were written with tokens), under the per-warp control reconvergence stack (CRS).
//!
//! This module owns the warp and CTA levels: the execution state ς = (pc, α, δ, stack)
//! (`state`), the CRS rules for every flow action, votes and barriers (the `comm` rule and
//! `updBar`/`endBar`), the warp schedule, the consistency checks after every step, the
//! liveness check, and the per-step trace. Data and memory instructions of each active lane
//! go through `crate::ptx_exec` (`Kernel::step`).
//!
//! Choices the paper leaves to the scheduler, and how they are fixed here:
//! - warps of a CTA step round-robin, one instruction per schedulable warp per round (a block
//!   step whose warp schedule is one warp, which `(exec)` allows);
//! - CTAs run one after another, each with its own shared memory and barriers, on one global
//!   memory (no trace needs two CTAs resident at once: `t5_spinlock_ctas` releases the lock
//!   before each CTA exits);
//! - memory is sequentially consistent and instantaneous, one of the behaviours the memory
//!   model allows (§4.6), so `membar` and the fences of `bar.sync` never hold a warp;
//! - an indirect branch's next target (`bra_target`'s oracle) is the lowest of the targets
//!   (by pc) that its active lanes take;
//! - tokens carry a function with their pc: the paper's program addresses are global.
//!
//! Liveness (§6.5: every non-empty stack must later shrink) is checked with a bound: a warp
//! that runs `Options::liveness_bound` steps with a non-empty stack that never got smaller,
//! or a CTA whose warps all wait at barriers that cannot complete, is `Error::Liveness`.

mod state;

pub use state::{Addr, Disable, ExecState, Token, TokenKind, Unwound};

use crate::ptx_exec::{Control, CtaMemory, ExecError, GlobalMemory, Kernel, Launch, Thread};
use crate::shared_text::{SharedText, TextSequence};
use gpusim_isa::ir::{
    BarKind, BarRed, Callee, FuncId, FuncKind, Inst, Module, Op, Operand, Pc, RegId, Space,
    SymbolId, VoteMode,
};
use std::collections::BTreeMap;
use std::fmt;
use thiserror::Error;

/// How to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Lanes per warp (1..=64); the formal report's examples use 2, 3, 4 and 32.
    pub warp_size: u32,
    /// Steps a warp may take with a non-empty stack that never shrinks before the run is a
    /// liveness violation.
    pub liveness_bound: u64,
    /// Instructions a warp may execute before the run stops with `Error::StepBound` (a kernel
    /// that loops forever with an empty stack is live but never ends).
    pub max_warp_steps: u64,
    /// Record a `Step` per warp instruction.
    pub trace: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            warp_size: 32,
            liveness_bound: 100_000,
            max_warp_steps: 10_000_000,
            trace: true,
        }
    }
}

/// One warp instruction and the warp's state after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The function the instruction belongs to.
    pub func: String,
    /// Its index in the function body after token insertion.
    pub pc: Pc,
    /// Its PTX text.
    pub text: String,
    /// `ExecState`'s `Display` after the step: `α=… δ=… stack=…` (sharing its tail with the
    /// previous step's, so a deep stack is not copied at every step).
    pub state: SharedText,
}

/// A completed launch.
#[derive(Clone, Debug)]
pub struct Run {
    pub memory: GlobalMemory,
    /// One list per warp, CTA-major: warp `w` of CTA `c` is `c * warps_per_cta + w`.
    pub traces: Vec<Vec<Step>>,
}

/// Where something went wrong: the warp, its instruction and its state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub cta: u32,
    pub warp: u32,
    pub func: String,
    pub pc: Pc,
    pub line: u32,
    pub text: String,
    pub state: String,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CTA {} warp {} in `{}` pc {} (line {}: `{}`), {}",
            self.cta, self.warp, self.func, self.pc, self.line, self.text, self.state
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Error {
    /// The module, entry or launch cannot be run at all (token insertion failed, bad shape).
    #[error("setup: {0}")]
    Setup(String),
    #[error("unsupported instruction at {at}: {why}")]
    Unsupported { at: Site, why: String },
    /// A memory fault or `trap` of one lane (from `ptx_exec`).
    #[error("fault at {at}: {why}")]
    Fault { at: Site, why: String },
    /// The semantics is stuck (⊥): a rule's side condition fails.
    #[error("stuck (⊥) at {at}: {why}")]
    Stuck { at: Site, why: String },
    /// A stack-consistency condition (§6.2) or the safety invariant (§6.4) is violated.
    #[error("consistency violation at {at}: {why}")]
    Consistency { at: Site, why: String },
    /// A warp that can never proceed (§6.5).
    #[error("liveness violation at {at}: {why}")]
    Liveness { at: Site, why: String },
    /// A warp ran `Options::max_warp_steps` instructions without finishing.
    #[error("step bound of {limit} instructions reached at {at}")]
    StepBound { at: Site, limit: u64 },
}

/// One activation of a function for one lane (the paper's κ entry; the function is the
/// warp's) with, for the caller's
/// `call (rets)`, where the callee's return parameters go.
struct Frame {
    thread: Thread,
    rets: Vec<(SymbolId, SymbolId)>,
}

struct Warp {
    id: u32,
    /// Per lane its call stack, top last; empty for a padding lane.
    lanes: Vec<Vec<Frame>>,
    st: ExecState,
    /// Per lane the next instruction of the single-warp semantics (§6.3, `pc_θ`).
    refs: Vec<Option<Addr>>,
    completed: bool,
    waiting: Vec<u64>,
    /// Steps since the stack last shrank or was empty.
    since_shrink: u64,
    /// Instructions executed.
    steps: u64,
    trace: Vec<Step>,
    states: TextSequence,
}

/// A barrier of χ: thread count, arrival count, reduction, and the reduction's thread
/// actions (warp, lane, destination, predicate).
struct Barrier {
    tc: u64,
    ac: u64,
    kind: BarKind,
    tacts: Vec<(usize, usize, RegId, bool)>,
}

/// Run `entry` of `module` for `launch` on `memory` (whose buffers the launch's arguments
/// point into) under the token-stack semantics.
pub fn run(
    module: &Module,
    entry: &str,
    launch: &Launch,
    mut memory: GlobalMemory,
    opts: &Options,
) -> Result<Run, Error> {
    if !(1..=64).contains(&opts.warp_size) {
        return Err(Error::Setup(format!(
            "warp size {} outside 1..=64",
            opts.warp_size
        )));
    }
    let mut module = module.clone();
    for f in module.functions.iter_mut().filter(|f| !f.body.is_empty()) {
        *f = gpusim_isa::analysis::insert_tokens(f).map_err(|e| {
            Error::Setup(format!(
                "token insertion in `{}` (line {}): {}",
                e.function, e.span.line, e.message
            ))
        })?;
    }
    let base = Kernel::new(&module, entry)
        .map_err(|e| Error::Setup(e.to_string()))?
        .with_warp_size(opts.warp_size);
    let kernels: Vec<Kernel> = (0..module.functions.len())
        .map(|i| base.callee(FuncId(i as u32)))
        .collect();
    let params = base
        .param_block(&launch.args)
        .map_err(|e| Error::Setup(e.to_string()))?;
    let entry_id = module
        .find_function(entry)
        .ok_or_else(|| Error::Setup(format!("no function `{entry}`")))?;
    memory.load_module_globals(&module);
    let mut traces = Vec::new();
    for cta in 0..launch.ctas() {
        let mut m = Machine {
            module: &module,
            kernels: &kernels,
            launch,
            opts,
            entry: entry_id,
            cta,
            mem: CtaMemory {
                global: memory,
                shared: vec![0; base.shared_bytes(launch.dynamic_shared)],
                params: params.clone(),
            },
            warps: Vec::new(),
            barriers: BTreeMap::new(),
        };
        m.spawn();
        m.run()?;
        traces.extend(m.warps.into_iter().map(|w| w.trace));
        memory = m.mem.global;
    }
    Ok(Run { memory, traces })
}

struct Machine<'a, 'm> {
    module: &'m Module,
    kernels: &'a [Kernel<'m>],
    launch: &'a Launch,
    opts: &'a Options,
    entry: FuncId,
    cta: u32,
    mem: CtaMemory,
    warps: Vec<Warp>,
    barriers: BTreeMap<u64, Barrier>,
}

/// What a warp step did to the warp as a whole.
enum Outcome {
    Active,
    Completed,
}

impl<'m> Machine<'_, 'm> {
    fn ws(&self) -> usize {
        self.opts.warp_size as usize
    }

    /// `issueBlocks`: warp `k` holds linear threads `ws·k ..`; padding lanes of a partial
    /// last warp start inactive with δ = exit (§5.4.1).
    fn spawn(&mut self) {
        let ws = self.ws();
        let n = self.launch.threads_per_cta() as usize;
        let ctaid = self.launch.cta_index(self.cta);
        let kernel = &self.kernels[self.entry.0 as usize];
        for k in 0..n.div_ceil(ws) {
            let mut lanes = Vec::new();
            let mut alpha = 0u64;
            let mut delta = Vec::new();
            let mut refs = Vec::new();
            for l in 0..ws {
                let t = k * ws + l;
                if t < n {
                    let thread = kernel.thread(self.launch.thread_index(t as u32), ctaid);
                    lanes.push(vec![Frame {
                        thread,
                        rets: vec![],
                    }]);
                    alpha |= 1 << l;
                    delta.push(Disable::Enabled);
                    refs.push(Some((self.entry, 0)));
                } else {
                    lanes.push(vec![]);
                    delta.push(Disable::Exit);
                    refs.push(None);
                }
            }
            self.warps.push(Warp {
                id: k as u32,
                lanes,
                st: ExecState {
                    func: self.entry,
                    pc: 0,
                    alpha,
                    delta,
                    stack: vec![],
                },
                refs,
                completed: false,
                waiting: vec![],
                since_shrink: 0,
                steps: 0,
                trace: vec![],
                states: TextSequence::default(),
            });
        }
    }

    fn site(&self, w: usize) -> Site {
        let warp = &self.warps[w];
        let f = self.module.function(warp.st.func);
        let k = &self.kernels[warp.st.func.0 as usize];
        Site {
            cta: self.cta,
            warp: warp.id,
            func: f.name.clone(),
            pc: warp.st.pc,
            line: k.line(warp.st.pc),
            text: k.text(warp.st.pc),
            state: warp.st.to_string(),
        }
    }

    /// `canBeScheduled`: active and not waiting at a barrier (memory is instantaneous, so no
    /// register is ever blocked and no `membar` pending).
    fn schedulable(&self, w: usize) -> bool {
        !self.warps[w].completed && self.warps[w].waiting.is_empty()
    }

    fn run(&mut self) -> Result<(), Error> {
        loop {
            if self.warps.iter().all(|w| w.completed) {
                return Ok(());
            }
            let ready: Vec<usize> = (0..self.warps.len())
                .filter(|&w| self.schedulable(w))
                .collect();
            if ready.is_empty() {
                let w = (0..self.warps.len())
                    .find(|&w| !self.warps[w].completed)
                    .unwrap_or(0);
                let ids: Vec<u64> = self.barriers.keys().copied().collect();
                return Err(Error::Liveness {
                    at: self.site(w),
                    why: format!(
                        "every unfinished warp waits at a barrier that cannot complete \
                         (open barriers {ids:?}); the formal model does not count exited \
                         warps as arrived"
                    ),
                });
            }
            for w in ready {
                if self.schedulable(w) {
                    self.warp_step(w)?;
                }
            }
        }
    }

    /// One →Ω step of warp `w` followed by the block-level barrier bookkeeping, the checks
    /// and the trace.
    fn warp_step(&mut self, w: usize) -> Result<(), Error> {
        let (func, pc) = (self.warps[w].st.func, self.warps[w].st.pc);
        let module: &'m Module = self.module;
        let f = module.function(func);
        let Some(inst) = f.body.get(pc as usize) else {
            return Err(Error::Stuck {
                at: self.site(w),
                why: "the warp's pc ran off the function body".into(),
            });
        };
        let ret_is_exit = f.kind == FuncKind::Entry;
        // The conditions constrain instructions that act. Where every active lane's guard is
        // false the step is (bra) without actions and touches no token (T11.7's `@q preRet;
        // @q call` with q false everywhere pushes and needs no call token).
        let acts = self.lanes(w).into_iter().any(|l| self.guard(w, l, inst));
        let checked = if acts {
            self.warps[w]
                .st
                .check_stack_consistency(&inst.op, ret_is_exit)
        } else {
            Ok(())
        };
        if let Err(why) = checked {
            return Err(Error::Consistency {
                at: self.site(w),
                why,
            });
        }
        let depth = self.warps[w].st.stack.len();
        let outcome = self.exec(w, inst, ret_is_exit)?;
        self.end_barriers();
        let warp = &mut self.warps[w];
        if matches!(outcome, Outcome::Completed) {
            warp.completed = true;
        }
        if let Err(why) = warp.st.check_safety(&warp.refs) {
            let mut at = self.site(w);
            at.pc = pc;
            return Err(Error::Consistency { at, why });
        }
        let warp = &mut self.warps[w];
        if warp.st.stack.is_empty() || warp.st.stack.len() < depth {
            warp.since_shrink = 0;
        } else {
            warp.since_shrink += 1;
        }
        if self.opts.trace {
            let k = &self.kernels[func.0 as usize];
            let state = self.warps[w].st.to_string();
            let state = self.warps[w].states.push(state);
            let step = Step {
                func: f.name.clone(),
                pc,
                text: k.text(pc),
                state,
            };
            self.warps[w].trace.push(step);
        }
        self.warps[w].steps += 1;
        if self.warps[w].steps > self.opts.max_warp_steps {
            return Err(Error::StepBound {
                at: self.site(w),
                limit: self.opts.max_warp_steps,
            });
        }
        if self.warps[w].since_shrink > self.opts.liveness_bound {
            return Err(Error::Liveness {
                at: self.site(w),
                why: format!(
                    "{} steps with a non-empty token stack that never shrank (§6.5): a lane \
                     waits on a token that only the other lanes' progress could pop",
                    self.warps[w].since_shrink
                ),
            });
        }
        Ok(())
    }

    fn lanes(&self, w: usize) -> Vec<usize> {
        let a = self.warps[w].st.alpha;
        (0..self.ws()).filter(|l| a >> l & 1 == 1).collect()
    }

    fn thread(&self, w: usize, l: usize) -> &Thread {
        &self.warps[w].lanes[l]
            .last()
            .expect("an active lane has a frame")
            .thread
    }

    /// `Exec_tt` vs `Exec_ff`: the guard of `inst` for lane `l`.
    fn guard(&self, w: usize, l: usize, inst: &Inst) -> bool {
        inst.guard
            .is_none_or(|g| (self.thread(w, l).regs[g.reg.0 as usize] & 1 == 1) != g.negated)
    }

    /// `E[e]` for the operands warp-level instructions take.
    fn value(&self, w: usize, l: usize, o: Operand) -> Result<u64, Error> {
        let regs = &self.thread(w, l).regs;
        match o {
            Operand::Reg(r) => Ok(regs[r.0 as usize]),
            Operand::NotReg(r) => Ok(u64::from(regs[r.0 as usize] & 1 == 0)),
            Operand::Imm(v) => Ok(v),
            _ => Err(Error::Unsupported {
                at: self.site(w),
                why: "only register and immediate operands on warp-level instructions".into(),
            }),
        }
    }

    fn stuck(&self, w: usize, why: impl Into<String>) -> Error {
        Error::Stuck {
            at: self.site(w),
            why: why.into(),
        }
    }

    /// Advance the reference pc of every active lane not handled otherwise (`Exec_ff1`, and
    /// `Exec_tt` for the actions whose `branch_Θ` is pc+1).
    fn refs_next(&mut self, w: usize, skip: u64) {
        let warp = &mut self.warps[w];
        let (func, pc, alpha) = (warp.st.func, warp.st.pc, warp.st.alpha);
        for (l, r) in warp.refs.iter_mut().enumerate() {
            if alpha >> l & 1 == 1 && skip >> l & 1 == 0 {
                *r = Some((func, pc + 1));
            }
        }
    }

    /// The instruction's thread actions, collected into the warp's rule: (bra) for flow
    /// actions or none at all, (comm) for votes and barriers, (mem) for the rest.
    fn exec(&mut self, w: usize, inst: &Inst, ret_is_exit: bool) -> Result<Outcome, Error> {
        let lanes = self.lanes(w);
        let taking: Vec<usize> = lanes
            .iter()
            .copied()
            .filter(|&l| self.guard(w, l, inst))
            .collect();
        let tmask = taking.iter().fold(0u64, |m, l| m | 1 << l);
        // (bra) with no actions at all: every guard false (this covers every instruction).
        let no_actions = taking.is_empty();
        match &inst.op {
            Op::Ssy { target } | Op::PreBrk { target } | Op::PreRet { target } => {
                if !no_actions {
                    // (ssy) / (preBrk) / (preRet): the token takes the whole α, guard-false
                    // lanes included, so that a guarded call's other lanes wait on it.
                    let kind = match inst.op {
                        Op::Ssy { .. } => TokenKind::Sync,
                        Op::PreBrk { .. } => TokenKind::Break,
                        _ => TokenKind::Call,
                    };
                    let st = &mut self.warps[w].st;
                    st.stack.push(Token {
                        kind,
                        mask: st.alpha,
                        func: st.func,
                        pc: *target,
                    });
                }
                self.next(w)
            }
            Op::Sync if !no_actions => {
                // (sync): no uniformity check (digest §7.8).
                self.refs_next(w, 0);
                self.unwind(w)
            }
            Op::Brk | Op::Ret { .. } | Op::Exit if !no_actions => {
                let (reason, resume) = match inst.op {
                    Op::Brk => (Disable::Break, self.topmost(w, TokenKind::Break)),
                    Op::Ret { .. } if !ret_is_exit => {
                        (Disable::Return, self.topmost(w, TokenKind::Call))
                    }
                    _ => (Disable::Exit, None),
                };
                self.refs_next(w, tmask);
                for &l in &taking {
                    if reason == Disable::Return {
                        self.pop_frame(w, l)?;
                    }
                    if reason == Disable::Exit {
                        self.warps[w].lanes[l].clear();
                    }
                    let warp = &mut self.warps[w];
                    warp.refs[l] = resume;
                    warp.st.delta[l] = reason;
                }
                let warp = &mut self.warps[w];
                // δ is set even when the action is uniform (the paper's fix of the patent).
                let uniform = warp.st.alpha & !tmask == 0;
                warp.st.alpha &= !tmask;
                if uniform {
                    // (brk_uni) / (ret_uni) / (exit_uni)
                    self.unwind(w)
                } else {
                    // (brk_div) / (ret_div) / (exit_div)
                    self.warps[w].st.pc += 1;
                    Ok(Outcome::Active)
                }
            }
            Op::Bra { target, .. } if !no_actions => {
                let pairs: Vec<(usize, Pc)> = taking.iter().map(|&l| (l, *target)).collect();
                self.branch(w, &pairs)
            }
            Op::BrxIdx { index, targets, .. } if !no_actions => {
                let mut pairs = Vec::new();
                for &l in &taking {
                    let i = self.value(w, l, *index)? & 0xFFFF_FFFF;
                    let t = *targets.get(i as usize).ok_or_else(|| Error::Fault {
                        at: self.site(w),
                        why: format!("brx.idx index {i} outside its table (lane {l})"),
                    })?;
                    pairs.push((l, t));
                }
                self.branch(w, &pairs)
            }
            Op::Call {
                callee, rets, args, ..
            } if !no_actions => {
                let Callee::Direct(callee) = callee else {
                    return Err(Error::Unsupported {
                        at: self.site(w),
                        why: "indirect calls (call_target) are not modelled".into(),
                    });
                };
                self.call(w, &taking, *callee, rets, args)
            }
            Op::Vote { mode, d, a, .. } if !no_actions => {
                // (comm) vote: only active guard-true lanes vote; .ballot counts every other
                // lane as false.
                let mut preds = Vec::new();
                for &l in &taking {
                    preds.push((l, self.value(w, l, *a)? & 1 == 1));
                }
                let r = match mode {
                    VoteMode::All => u64::from(preds.iter().all(|p| p.1)),
                    VoteMode::Any => u64::from(preds.iter().any(|p| p.1)),
                    VoteMode::Uni => u64::from(preds.iter().all(|p| p.1 == preds[0].1)),
                    VoteMode::Ballot => preds.iter().filter(|p| p.1).fold(0, |m, p| m | 1 << p.0),
                };
                for &(l, _) in &preds {
                    self.frame(w, l).thread.regs[d.0 as usize] = r;
                }
                self.next(w)
            }
            Op::Bar {
                kind,
                id,
                count,
                red,
                ..
            } if !no_actions => self.barrier(w, &taking, *kind, *id, *count, *red),
            Op::Sync
            | Op::Brk
            | Op::Ret { .. }
            | Op::Exit
            | Op::Bra { .. }
            | Op::BrxIdx { .. }
            | Op::Call { .. }
            | Op::Vote { .. }
            | Op::Bar { .. } => self.next(w),
            _ => {
                // (mem) / data: every active lane runs the instruction through ptx_exec,
                // which skips guard-false lanes itself.
                let k = &self.kernels[self.warps[w].st.func.0 as usize];
                let pc = self.warps[w].st.pc;
                for &l in &lanes {
                    let frame = self.warps[w].lanes[l]
                        .last_mut()
                        .expect("an active lane has a frame");
                    frame.thread.pc = pc;
                    match k.step(&mut frame.thread, &mut self.mem, self.launch) {
                        Ok(e) if e.control == Control::Next => {}
                        Ok(e) => {
                            return Err(Error::Unsupported {
                                at: self.site(w),
                                why: format!(
                                    "ptx_exec reported control {:?} for a data instruction",
                                    e.control
                                ),
                            })
                        }
                        Err(ExecError::Unsupported { why, .. }) => {
                            return Err(Error::Unsupported {
                                at: self.site(w),
                                why: format!("lane {l}: {why}"),
                            })
                        }
                        Err(e) => {
                            return Err(Error::Fault {
                                at: self.site(w),
                                why: format!("lane {l}: {e}"),
                            })
                        }
                    }
                }
                self.next(w)
            }
        }
    }

    fn frame(&mut self, w: usize, l: usize) -> &mut Frame {
        self.warps[w].lanes[l]
            .last_mut()
            .expect("an active lane has a frame")
    }

    /// (next): pc+1 for the warp and its active lanes.
    fn next(&mut self, w: usize) -> Result<Outcome, Error> {
        self.refs_next(w, 0);
        self.warps[w].st.pc += 1;
        Ok(Outcome::Active)
    }

    fn topmost(&self, w: usize, kind: TokenKind) -> Option<Addr> {
        self.warps[w]
            .st
            .stack
            .iter()
            .rev()
            .find(|t| t.kind == kind)
            .map(|t| (t.func, t.pc))
    }

    fn unwind(&mut self, w: usize) -> Result<Outcome, Error> {
        match self.warps[w].st.unwind() {
            Ok(Unwound::Active) => Ok(Outcome::Active),
            Ok(Unwound::Completed) => Ok(Outcome::Completed),
            Err(why) => Err(self.stuck(w, why)),
        }
    }

    /// (bra_uni), (bra_guard) and (bra_target) for the (lane, target) pairs of the lanes
    /// whose guard holds.
    fn branch(&mut self, w: usize, pairs: &[(usize, Pc)]) -> Result<Outcome, Error> {
        let st = &self.warps[w].st;
        let (func, pc, alpha) = (st.func, st.pc, st.alpha);
        // (bra_target)'s oracle: the lowest target first, a deterministic choice the rule
        // allows (and the one gpusim's token-stack policy makes, so traces compare).
        let t = pairs.iter().map(|p| p.1).min().unwrap_or(pairs[0].1);
        let taken = pairs
            .iter()
            .filter(|p| p.1 == t)
            .fold(0u64, |m, p| m | 1 << p.0);
        let all_equal = pairs.iter().all(|p| p.1 == t);
        self.refs_next(w, taken);
        for l in 0..self.ws() {
            if taken >> l & 1 == 1 {
                self.warps[w].refs[l] = Some((func, t));
            }
        }
        let warp = &mut self.warps[w];
        if all_equal && alpha & !taken == 0 {
            // (bra_uni)
        } else if all_equal {
            // (bra_guard): the taken path runs first; the not-taken lanes resume at pc+1.
            warp.st.stack.push(Token {
                kind: TokenKind::Diverge,
                mask: alpha & !taken,
                func,
                pc: pc + 1,
            });
            warp.st.alpha = taken;
        } else {
            // (bra_target): the rest re-execute this branch; `reset` puts their pc_θ back on
            // it.
            warp.st.stack.push(Token {
                kind: TokenKind::Diverge,
                mask: alpha & !taken,
                func,
                pc,
            });
            warp.st.alpha = taken;
            let rest = alpha & !taken;
            for l in 0..self.opts.warp_size as usize {
                if rest >> l & 1 == 1 {
                    warp.refs[l] = Some((func, pc));
                }
            }
        }
        warp.st.pc = t;
        Ok(Outcome::Active)
    }

    /// (call_uni) / (call_guard): never pushes a token (the `preRet` before it did). The
    /// calling lanes push κ: a fresh frame of the callee, its parameters copied from the
    /// caller's arguments.
    fn call(
        &mut self,
        w: usize,
        taking: &[usize],
        callee: FuncId,
        rets: &[SymbolId],
        args: &[Operand],
    ) -> Result<Outcome, Error> {
        let cf = self.module.function(callee);
        if cf.body.is_empty() {
            return Err(Error::Unsupported {
                at: self.site(w),
                why: format!("call of `{}`, which has no body", cf.name),
            });
        }
        if args.len() != cf.params.len() || rets.len() != cf.rets.len() {
            return Err(self.stuck(w, "call arguments do not match the callee's parameters"));
        }
        let k = &self.kernels[callee.0 as usize];
        for &l in taking {
            let caller = self.warps[w].lanes[l]
                .last()
                .expect("an active lane has a frame");
            let mut thread = k.thread(caller.thread.tid, caller.thread.ctaid);
            for (p, a) in cf.params.iter().zip(args) {
                let sym = self.module.symbol(p.symbol);
                let n = p.size() as usize;
                let bytes = match *a {
                    Operand::Symbol(s) if self.module.symbol(s).space == Space::Param => {
                        let o = self.module.symbol(s).offset as usize;
                        caller.thread.local.get(o..o + n).map(<[u8]>::to_vec)
                    }
                    Operand::Reg(r) => {
                        Some(caller.thread.regs[r.0 as usize].to_le_bytes()[..n.min(8)].to_vec())
                    }
                    Operand::Imm(v) => Some(v.to_le_bytes()[..n.min(8)].to_vec()),
                    _ => None,
                };
                let o = sym.offset as usize;
                match bytes {
                    Some(b) if o + b.len() <= thread.local.len() => {
                        thread.local[o..o + b.len()].copy_from_slice(&b);
                    }
                    _ => {
                        return Err(Error::Unsupported {
                            at: self.site(w),
                            why: "call argument that is not a `.param` variable, register or \
                                  immediate of the parameter's size"
                                .into(),
                        })
                    }
                }
            }
            let rets = rets
                .iter()
                .zip(&cf.rets)
                .map(|(&c, p)| (c, p.symbol))
                .collect();
            self.warps[w].lanes[l].push(Frame { thread, rets });
        }
        let tmask = taking.iter().fold(0u64, |m, l| m | 1 << l);
        self.refs_next(w, tmask);
        let warp = &mut self.warps[w];
        for &l in taking {
            warp.refs[l] = Some((callee, 0));
        }
        // (call_uni) keeps α; (call_guard) narrows it to the callers.
        warp.st.alpha = tmask;
        warp.st.func = callee;
        warp.st.pc = 0;
        Ok(Outcome::Active)
    }

    /// `ret` pops κ; the callee's return parameters land in the caller's `call (rets)`.
    fn pop_frame(&mut self, w: usize, l: usize) -> Result<(), Error> {
        let lane = &mut self.warps[w].lanes[l];
        if lane.len() < 2 {
            return Err(self.stuck(w, format!("lane {l} returns from the kernel entry")));
        }
        let done = lane.pop().expect("checked above");
        let caller = lane.last_mut().expect("checked above");
        for (c, r) in done.rets {
            let (cs, rs) = (self.module.symbol(c), self.module.symbol(r));
            let n = rs.size().min(cs.size()) as usize;
            let (co, ro) = (cs.offset as usize, rs.offset as usize);
            if co + n > caller.thread.local.len() || ro + n > done.thread.local.len() {
                return Err(self.stuck(w, "return parameter outside the frames"));
            }
            caller.thread.local[co..co + n].copy_from_slice(&done.thread.local[ro..ro + n]);
        }
        Ok(())
    }

    /// (comm) for `bar.sync` / `bar.arrive` / `bar.red`: `updBar` = barInfo, prepBar,
    /// updAct, updArrCnt; the warp waits on the barrier unless it only arrives.
    fn barrier(
        &mut self,
        w: usize,
        taking: &[usize],
        kind: BarKind,
        id: Operand,
        count: Option<Operand>,
        red: Option<(RegId, Operand)>,
    ) -> Result<Outcome, Error> {
        // barInfo: one (barid, tc?, kind) per warp action; lanes disagreeing is ⊥.
        let mut info = None;
        let mut tacts = Vec::new();
        for &l in taking {
            let b = self.value(w, l, id)?;
            let c = match count {
                Some(c) => Some(self.value(w, l, c)?),
                None => None,
            };
            if info.is_some_and(|i| i != (b, c)) {
                return Err(self.stuck(w, "lanes of one warp name different barriers or counts"));
            }
            info = Some((b, c));
            if let Some((d, p)) = red {
                tacts.push((w, l, d, self.value(w, l, p)? & 1 == 1));
            }
        }
        let (bid, tc) = info.expect("at least one lane acts");
        let ws = self.opts.warp_size as u64;
        let tc_default = self.warps.iter().filter(|w| !w.completed).count() as u64 * ws;
        // prepBar: a given count must agree; a reduction barrier is joined only by the same
        // `bar.red` (mixing is undefined, hence ⊥).
        if let Some(bar) = self.barriers.get(&bid) {
            let red_mix = matches!(bar.kind, BarKind::Red(_)) || matches!(kind, BarKind::Red(_));
            if tc.is_some_and(|tc| tc != bar.tc) || (red_mix && bar.kind != kind) {
                return Err(self.stuck(
                    w,
                    format!("barrier {bid} used with a different count or kind"),
                ));
            }
        }
        let bar = self.barriers.entry(bid).or_insert_with(|| Barrier {
            tc: tc.unwrap_or(tc_default),
            ac: 0,
            kind,
            tacts: vec![],
        });
        bar.tacts.extend(tacts);
        // updArrCnt: one arriving lane counts its whole warp.
        bar.ac += ws;
        if kind != BarKind::Arrive {
            self.warps[w].waiting = vec![bid];
        }
        self.next(w)
    }

    /// (endBar), repeated: every barrier whose arrivals reached its count is removed from χ
    /// and from every waiting list; a reduction writes its result to every participant.
    fn end_barriers(&mut self) {
        let done: Vec<u64> = self
            .barriers
            .iter()
            .filter(|(_, b)| b.ac >= b.tc)
            .map(|(&id, _)| id)
            .collect();
        for id in done {
            let bar = self.barriers.remove(&id).expect("listed above");
            for warp in &mut self.warps {
                warp.waiting.retain(|&b| b != id);
            }
            if let BarKind::Red(op) = bar.kind {
                let preds = bar.tacts.iter().map(|t| t.3);
                let r = match op {
                    BarRed::Popc => preds.filter(|&p| p).count() as u64,
                    BarRed::And => u64::from({ preds }.all(|p| p)),
                    BarRed::Or => u64::from({ preds }.any(|p| p)),
                };
                for &(w, l, d, _) in &bar.tacts {
                    if let Some(f) = self.warps[w].lanes[l].last_mut() {
                        f.thread.regs[d.0 as usize] = r;
                    }
                }
            }
        }
    }
}
