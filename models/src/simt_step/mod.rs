//! SIMT-Step (Chen, Rehman, Martínez, Sorensen, PLDI 2026; digest
//! `shared/notes/simt-step.md`): an executable version of the operational semantics of GPU
//! subgroup behaviour, its litmus-test language, and an exhaustive enumerator of the
//! outcomes each variant allows. Owns the `simt_step` API used by `gpusim check`.
//!
//! # Model
//!
//! * **Dynamic blocks** (paper §3): each subgroup has its own DEG; a DB records its block,
//!   how it was created (root, branch child, or merge DB of a header instance), its merge
//!   stack, its present and entered threads, its synchronous-arrival flags (`sis`) and, for
//!   Spec, whether a speculative SG op sealed it. `get_child` implements maximal
//!   reconvergence (merge labels on the stack return the header instance's one merge DB),
//!   Branching (one child per label), and Non-repeating (each loop iteration gets fresh DBs;
//!   a loop's merge entry is pushed once, by its first header instance).
//! * **Unknown sets** (§4.3) are computed from the DEG rather than stored: thread `t` is
//!   unknown to `db` when it has not entered it and, at the deepest DB on `db`'s creation
//!   path that `t` entered, it either has not branched yet or the link is a merge link of a
//!   construct `t` has not left (its merge entry is still on `t`'s stack). This realises the
//!   TLA+'s present / not-executed / unknown bookkeeping and its "leaving a construct" rule
//!   without four sets per DB.
//! * **Variants** (`Variant`, Tab. 1): CM, SM, SCF, SSO and Spec, each a choice of mode per
//!   instruction class (digest §1.6). **Symb is not implemented**: its SG ops return fresh
//!   symbols constrained after the fact (§4.4), so its outcome sets are not finite value sets
//!   (Fig. 11 allows `g[0]` to be *any* value); this enumerator produces finite sets of
//!   concrete outcomes only. Its expectations are recorded as comments in the data files.
//! * **Strength order** used by [`strongest_consistent`]: CM ⊂ SM ⊂ SCF ⊂ SSO ⊂ Spec
//!   (⊂ Symb), strongest first — the order of paper Tab. 1, whose caption names the first the
//!   strongest and the last the weakest, and §1.2 ("ordered from stronger (more
//!   synchronization) to weaker (more independence)"). The test suite checks that the
//!   computed sets nest in this order on every test.
//! * **Memory** is sequentially consistent; loads and stores are SC atomics (Fig. 6). A
//!   collective store lets any of the same-address writers win (digest §1.5.4).
//!
//! # Bounds
//!
//! Enumeration is exhaustive up to [`Bounds`]: at most `max_steps` steps along any execution
//! (default 10 000) and `max_states` distinct states (default 2 000 000). A test that needs
//! more (e.g. a spin loop, which SIMT-Step's non-repeating DBs turn into an infinite state
//! space) yields [`EnumError::StepBound`] or [`EnumError::StateBound`], never a partial set.
//! A state where live threads can take no step (e.g. an SG op whose participants never
//! align) yields [`EnumError::Deadlock`].
//!
//! # Litmus format
//!
//! Line-oriented; `#` starts a comment. A header of directives, then basic blocks (the
//! first is the entry block). Each block is `Label; N*; Merge?; Term` as in paper Fig. 6.
//!
//! ```text
//! test NAME
//! threads N                  # total threads (≤ 64); tid = 0..N
//! subgroup S                 # subgroup size (default N); lane = tid % S, sg = tid / S
//! init ARRAY[K] = V          # initial memory; everything else is 0
//! observe ARRAY[K], ...      # the outcome: these locations' final values, in order
//! expect VARIANT: (v, ...) (v, ...)   # committed allowed set (CM, SM, SCF, SSO, Spec);
//!                                     # several lines for one variant are united
//! block LABEL:
//!   REG = EXPR               # Local (T-LOCAL)
//!   REG = load ARRAY[EXPR]   # Load
//!   store ARRAY[EXPR], EXPR  # Store
//!   REG = sg_add(EXPR)       # SG ops: sg_add, sg_all_equal, sg_all, sg_any,
//!   REG = ballot(EXPR)       #   ballot (mask of participating lanes with EXPR ≠ 0),
//!   REG = sg_broadcast(EXPR, LANE)   # sg_broadcast (LANE must participate)
//!   sg_barrier               # SG op with no computation
//!   selection_merge LABEL    # merge instructions: directly before the terminator
//!   loop_merge MERGE, CONTINUE
//!   branch LABEL             # terminators
//!   branch_cond EXPR, TRUE_LABEL, FALSE_LABEL
//!   return
//! ```
//!
//! Expressions: integers, registers (any other identifier; all start at 0), `tid`, `lane`,
//! `sg`, parentheses, unary `!` `-`, and C's binary operators `* / % + - < <= > >= == != & ^ |
//! && ||` with C precedence. `ARRAY` alone means `ARRAY[0]`. Errors carry `line:column`.

mod enumerate;
mod machine;
mod parse;
mod syntax;
mod variant;

pub use enumerate::{enumerate, enumerate_participation, Bounds, Participation};
pub use parse::{parse, ParseError, MAX_BLOCK_INSTS, MAX_THREADS};
pub use syntax::{
    ArrayId, BinOp, Block, BlockId, Env, Expr, Inst, InstKind, Litmus, Location, Merge, Outcome,
    OutcomeSet, Pos, RegId, SgOp, Term, TermKind, UnOp,
};
pub use variant::{Mode, SgMode, Variant};

use std::collections::BTreeSet;

use thiserror::Error;

/// Why a test's outcome set could not be computed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EnumError {
    #[error(
        "{variant}: an execution exceeded {limit} steps (non-terminating test or bound too low)"
    )]
    StepBound { variant: Variant, limit: usize },
    #[error("{variant}: more than {limit} states (bound too low for this test)")]
    StateBound { variant: Variant, limit: usize },
    #[error("{variant}: deadlock, no thread can step: {waiting}")]
    Deadlock { variant: Variant, waiting: String },
    #[error("{pos}: undefined behaviour: {msg}")]
    Undefined { pos: Pos, msg: String },
}

/// The outcomes `variant` allows for `test`, with the default [`Bounds`]. A `Result`
/// because enumeration is bounded (see the module documentation).
pub fn allowed(test: &Litmus, variant: Variant) -> Result<OutcomeSet, EnumError> {
    enumerate(test, variant, Bounds::default())
}

/// The participant sets of the subgroup operations under `variant`, with the default
/// [`Bounds`]: one [`Participation`] per distinct complete execution — per thread (index =
/// thread id), the mask of the threads (bit `t` = thread `t`) that executed each subgroup
/// operation with it, in that thread's program order. A participant set is its dynamic
/// block's present threads when the operation fires (G-COLLECTIVE-SUBGROUP).
///
/// Under CM, control flow and subgroup operations are collective and wait for `U = ∅`, so in
/// a structured test the threads of each dynamic block instance are fixed by the threads'
/// own paths, and the set usually has one element; it has several where those paths depend
/// on memory that other subgroups write (none of the suite's 19 tests does, which
/// `models/tests/simt_step.rs` checks).
/// A simulator that claims CM must run each subgroup operation with exactly one of these
/// participations (`gpusim check`'s subgroup-mask invariant).
pub fn participation(
    test: &Litmus,
    variant: Variant,
) -> Result<BTreeSet<Participation>, EnumError> {
    enumerate_participation(test, variant, Bounds::default())
}

/// Whether `outcome` is in `set`.
pub fn contains(set: &OutcomeSet, outcome: &Outcome) -> bool {
    set.contains(outcome)
}

/// The strongest variant, in the order [`Variant::ALL`] (CM, SM, SCF, SSO, Spec), whose
/// allowed set contains every observed outcome; `None` when even Spec excludes one (the
/// observation is outside the executable SIMT-Step variants: Symb or no SIMT-Step model).
pub fn strongest_consistent(
    test: &Litmus,
    observed: &[Outcome],
) -> Result<Option<Variant>, EnumError> {
    for v in Variant::ALL {
        let set = allowed(test, v)?;
        if observed.iter().all(|o| contains(&set, o)) {
            return Ok(Some(v));
        }
    }
    Ok(None)
}
