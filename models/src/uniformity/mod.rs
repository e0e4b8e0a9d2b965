//! Uniformity analysis of PTX (Lee-Jones, Wickerson and Donaldson, "Uniformity Analysis in the
//! WebGPU Shading Language", PLDI 2026; digest `shared/notes/uniformity.md`), adapted from
//! TinyWGSL's structured statements to the PTX control-flow graph: every barrier and every warp
//! collective that may run under non-uniform control flow is reported with the chain of
//! dependences that makes it so. `gpusim lint` prints these findings.
//!
//! How the paper's rules map onto PTX:
//! - **Uniformity graph (§4.1).** Nodes are register definitions (reaching definitions, so a
//!   register written twice is two nodes, like the paper's `M[x ↦ v]`), decision points,
//!   `.param` variables, call results and sources. An edge `a → b` reads "a is uniform only if
//!   b is"; a requirement is violated when it reaches a source (`MustBeUnif →* MayBeNonUnif`).
//! - **Sources (`MayBeNonUnif`, Fig. 9).** `%tid`, `%laneid`, the clocks, lane masks and
//!   `%smid`; loads from shared, global, local and generic memory (the paper's "any shared
//!   read"); atomics; `shfl`, `match.any`, `mma` and `activemask` results; registers read before
//!   any write. Uniform: `%ctaid`, `%ntid`, `%nctaid`, kernel parameters, `ld.const`, constants.
//!   `vote` (all/any/uni/ballot), `redux` and `match.all` give every participating lane of a warp
//!   the same result, so they are warp-uniform but may differ between warps; `%warpid` likewise.
//!   `bar.red` results are CTA-uniform.
//! - **Three levels.** `bar.sync`, `barrier.sync`, `bar.red` and `bar.arrive` without a thread
//!   count need CTA-uniform control flow; the warpgroup instructions (`wgmma.*`, `setmaxnreg`,
//!   `.sync.aligned` over four warps) warpgroup-uniform control flow; with a count (whole warps
//!   take part) and the warp collectives (`shfl.sync`, `vote.sync`, `match.sync`, `redux.sync`,
//!   `bar.warp.sync`, `mma.sync`) warp-uniform control flow. A barrier's id and count must be
//!   uniform too.
//! - **Control flow (`cf`, §4.4 `if`/`loop`).** A decision (a guarded `bra`, `brx.idx`, a guarded
//!   `ret`/`exit`, a call into a function that may `exit`) controls the instructions between it
//!   and its immediate post-dominator. Everything written there depends on the decision (the
//!   paper's literal rule `literal → cf` and the merge nodes `M_after`). A loop exit's
//!   post-dominator lies outside the loop, so a non-uniform exit taints the whole loop body
//!   through the back edge: the paper's iteration edges `cf_head → cf_ac`, which is also the
//!   soundness fix for `break if` (gpuweb #5277, Fig. 10a).
//! - **Precision fixes (§5).** Unreachable code is not analysed, which is what the fixed
//!   behaviour rules achieve for Figs 10b and 10d (#5100, #5364); the back edge only matters
//!   when the loop can iterate, as in the fix for Fig. 10c, because an inner loop that leaves
//!   only by `ret` post-dominates nothing outside it.
//! - **Calls (§4.5).** Each function gets a summary: the strictest uniformity its requirements
//!   ask of the call site (`callSiteUnif`), which parameters they depend on (`reqUnif`), which
//!   parameters the returned value depends on (`affectsRet`), whether it is non-uniform by
//!   itself (`retNonUnif`), and — PTX's addition — whether the callee may `exit` the thread and
//!   on what that depends. Summaries are computed to a fixpoint, so recursion is covered.
//!
//! - **Deliberate choices.** `bra.uni` is the compiler's claim, not evidence: it is checked
//!   like any branch. Registers follow reaching definitions, but a `.param` variable is one
//!   node for all its stores (flow-insensitive, hence conservative). Like the paper, the
//!   analysis is value-insensitive, with one exception for warp-specialised code: a value that
//!   is exactly `floor(%tid.x / k)` is the same in aligned groups of threads (`groups`: a
//!   warpgroup for `k = 128`, given the block's shape or the assumption it states).
//! - **Scale.** Control dependences instead of materialised regions, and values joined where
//!   paths merge instead of reaching-definition bitsets (`flow`): near-linear in the size of a
//!   function (`GraphSize`).
//!
//! Where the CFG cannot follow the paper: TinyWGSL's barrier divergence follows SPIR-V's
//! "same dynamic instance" rule, under which threads that take different `continue`s diverge
//! until the loop exits (Fig. 1c, P3). Lowered to PTX, Fig. 1c's body is the same CFG as the
//! accepted Fig. 1a, and `bar.sync` follows CUDA's rule (the digest's seed 003: all threads reach
//! the barrier the same number of times), so this analysis accepts it.

pub(crate) mod effects;
mod flow;
mod graph;
mod groups;

use gpusim_isa::{Module, Span};
use std::fmt;

pub use effects::Level;
pub use graph::{GraphSize, Summary};
pub use groups::{Assumption, Blocks, TID_X_LIMIT};

/// One step in the chain of dependences from a flagged instruction to a source of
/// non-uniformity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The instruction runs in the region of a decision: a guarded `bra` (`what` = "branch"),
    /// `brx.idx`, a guarded `ret`/`exit`, or a call into a function that may exit.
    Branch {
        what: String,
        span: Span,
        /// The register that decides.
        on: Option<String>,
    },
    /// The instruction's own guard, defined at `span`.
    Guard {
        reg: String,
        span: Span,
    },
    /// A register value defined at `span`.
    Value {
        reg: String,
        span: Span,
    },
    /// The contents of a `.param` variable (a call's argument or result).
    Param {
        name: String,
    },
    /// The value a call returned.
    CallResult {
        callee: String,
        span: Span,
    },
    Source(Source),
}

/// Where non-uniformity comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A special register such as `%tid.x`.
    Special(String),
    Load {
        space: &'static str,
        span: Span,
    },
    Atomic {
        span: Span,
    },
    Collective {
        what: &'static str,
        span: Span,
    },
    /// `ld.param` through a register address in a `.func`.
    IndirectParam {
        span: Span,
    },
    /// A register read before any write: its value is undefined, per thread.
    Undefined {
        reg: String,
    },
    /// A callee's returned value or exit condition is non-uniform by itself; `chain` is the
    /// callee's own chain.
    Callee {
        callee: String,
        span: Span,
        exit: bool,
        chain: Vec<Step>,
    },
    /// A call whose callee has no body here, or an indirect call with no candidates.
    Opaque {
        callee: String,
        span: Span,
    },
    /// `floor(%tid.x / k)`, the same within aligned groups of `k` threads but not across
    /// them (`groups`).
    Quotient {
        k: u32,
    },
}

/// The instruction inside a callee that needs uniform control flow (for call-site findings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Need {
    pub level: Level,
    pub what: &'static str,
    pub function: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FindingKind {
    /// `bar.sync`, `barrier.sync`, `bar.red`, `bar.arrive`.
    Barrier(&'static str),
    /// `shfl.sync`, `vote.sync`, `match.*.sync`, `redux.sync`, `bar.warp.sync`, `mma.sync`.
    Collective(&'static str),
    /// A call into a function whose requirements need a uniform call site.
    Call { callee: String, need: Need },
    /// A call argument that a callee's requirement depends on.
    Argument {
        callee: String,
        index: usize,
        need: Need,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub file: String,
    pub function: String,
    pub kind: FindingKind,
    /// The flagged instruction.
    pub span: Span,
    /// The uniformity it needs.
    pub level: Level,
    pub chain: Vec<Step>,
}

/// The analysis of one function: its findings and the summary its callers use.
#[derive(Clone, Debug)]
pub struct FunctionResult {
    pub name: String,
    pub findings: Vec<Finding>,
    pub summary: Summary,
    /// Quotients of `%tid.x` taken as uniform by assuming aligned rows (unknown block shape).
    pub assumptions: Vec<Assumption>,
    /// The size of its uniformity graph.
    pub size: GraphSize,
}

/// Analyse every function of `module`, in module order, for launches of unknown block shape.
pub fn analyze_functions(module: &Module) -> Vec<FunctionResult> {
    analyze_functions_for(module, &Blocks::default())
}

/// Analyse every function of `module`, in module order, for launches with `blocks`.
pub fn analyze_functions_for(module: &Module, blocks: &Blocks) -> Vec<FunctionResult> {
    let n = module.functions.len();
    let assume_rows = !groups::multi_dimensional(module);
    let mut summaries: Vec<Summary> = module.functions.iter().map(Summary::initial).collect();
    // Summaries only grow (more requirements, more dependences), so this reaches a fixpoint;
    // in a module without recursion the callee-first order needs two rounds at most.
    let order = graph::callee_first_order(module);
    let mut results: Vec<Option<FunctionResult>> = vec![None; n];
    loop {
        let mut changed = false;
        for &fi in &order {
            let f = &module.functions[fi];
            let a = graph::analyze_function(module, fi, &summaries, blocks, assume_rows);
            if !a.summary.same_shape(&summaries[fi]) {
                changed = true;
            }
            summaries[fi] = a.summary.clone();
            results[fi] = Some(FunctionResult {
                name: f.name.clone(),
                findings: a.findings,
                summary: a.summary,
                assumptions: a.assumptions,
                size: a.size,
            });
        }
        if !changed {
            break;
        }
    }
    results.into_iter().flatten().collect()
}

/// Every finding of `module`: kernels and device functions, in module order.
pub fn analyze(module: &Module) -> Vec<Finding> {
    analyze_for(module, &Blocks::default())
}

/// Every finding of `module` for launches with `blocks`.
pub fn analyze_for(module: &Module, blocks: &Blocks) -> Vec<Finding> {
    analyze_functions_for(module, blocks)
        .into_iter()
        .flat_map(|r| r.findings)
        .collect()
}

fn loc(file: &str, s: Span) -> String {
    format!("{file}:{}:{}", s.line, s.col)
}

impl Step {
    fn relation(&self) -> &'static str {
        match self {
            Step::Branch { .. } => "is controlled by",
            Step::Guard { .. } => "is guarded by",
            _ => "depends on",
        }
    }

    /// The step as text; `file` names the PTX file for locations.
    pub fn render(&self, file: &str) -> String {
        match self {
            Step::Branch { what, span, on } => match on {
                Some(r) => format!("the {what} at {} on {r}", loc(file, *span)),
                None => format!("the {what} at {}", loc(file, *span)),
            },
            Step::Guard { reg, span } | Step::Value { reg, span } => {
                format!("{reg} ({file}:{})", span.line)
            }
            Step::Param { name } => format!("the .param variable `{name}`"),
            Step::CallResult { callee, span } => {
                format!("the value returned by `{callee}` at {}", loc(file, *span))
            }
            Step::Source(s) => s.render(file),
        }
    }
}

impl Source {
    pub fn render(&self, file: &str) -> String {
        match self {
            Source::Special(name) => name.clone(),
            Source::Load { space, span } => {
                format!(
                    "the {space} load at {} (memory may differ per thread)",
                    loc(file, *span)
                )
            }
            Source::Atomic { span } => format!("the atomic at {}", loc(file, *span)),
            Source::Collective { what, span } => {
                format!("the result of {what} at {}", loc(file, *span))
            }
            Source::IndirectParam { span } => {
                format!("the ld.param through a register at {}", loc(file, *span))
            }
            Source::Undefined { reg } => format!("{reg} read before any write (undefined)"),
            Source::Callee {
                callee,
                span,
                exit,
                chain,
            } => {
                let what = if *exit {
                    format!("whether `{callee}` (called at {}) exits", loc(file, *span))
                } else {
                    format!(
                        "the value `{callee}` (called at {}) returns",
                        loc(file, *span)
                    )
                };
                format!("{what}, which in `{callee}`{}", render_chain(chain, file))
            }
            Source::Opaque { callee, span } => {
                format!(
                    "the call to `{callee}` at {} (not analysable)",
                    loc(file, *span)
                )
            }
            Source::Quotient { k } => format!("%tid.x / {k}"),
        }
    }
}

/// " is controlled by X, which depends on Y, …"
fn render_chain(chain: &[Step], file: &str) -> String {
    let mut out = String::new();
    for (i, s) in chain.iter().enumerate() {
        match s {
            // The step before names the call (its result or the decision it takes), so the
            // callee's own chain continues the sentence.
            Step::Source(Source::Callee {
                callee,
                chain,
                exit,
                ..
            }) if i > 0 => {
                let lead = if *exit { "whose exit" } else { "which" };
                let inner = render_chain(chain, file);
                out.push_str(&format!(", {lead} inside `{callee}`{inner}"));
            }
            _ => {
                let sep = if i == 0 { " " } else { ", which " };
                out.push_str(&format!("{sep}{} {}", s.relation(), s.render(file)));
            }
        }
    }
    out
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = &self.file;
        let here = loc(file, self.span);
        match &self.kind {
            FindingKind::Barrier(what) | FindingKind::Collective(what) => {
                write!(f, "{what} at {here}")?
            }
            FindingKind::Call { callee, need } => write!(
                f,
                "call to `{callee}` at {here} (its {} at {} needs {}-uniform control flow)",
                need.what,
                loc(file, need.span),
                need.level.name()
            )?,
            FindingKind::Argument {
                callee,
                index,
                need,
            } => write!(
                f,
                "argument {index} of the call to `{callee}` at {here} (the {} at {} in `{}` \
                 depends on it)",
                need.what,
                loc(file, need.span),
                need.function
            )?,
        }
        write!(f, "{}", render_chain(&self.chain, file))
    }
}
