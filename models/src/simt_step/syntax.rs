//! The litmus-test language of SIMT-Step (paper Fig. 6) as data: a test is a list of basic
//! blocks `Label; N*; Merge?; Term` run by `threads` threads split into subgroups, plus the
//! observed memory locations and the committed expectations. Owns the AST and expression
//! evaluation; parsing is in `parse.rs`, execution in `machine.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::variant::Variant;

/// A source position (1-based), carried by every instruction so run-time errors can point
/// at the line that caused them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

pub type BlockId = u32;
pub type RegId = u32;
pub type ArrayId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Not,
    Neg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    BitOr,
    BitXor,
    BitAnd,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// Thread-local expressions: everything a T-LOCAL step may compute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Const(i64),
    Reg(RegId),
    /// Global thread id.
    Tid,
    /// Subgroup invocation id (`tid % subgroup`).
    Lane,
    /// Subgroup id (`tid / subgroup`).
    Sg,
    Un(UnOp, Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

/// The register context an expression is evaluated in.
pub struct Env<'a> {
    pub regs: &'a [i64],
    pub tid: i64,
    pub lane: i64,
    pub sg: i64,
}

impl Expr {
    /// `None` on division by zero: the test is then undefined, reported by the caller.
    pub fn eval(&self, env: &Env<'_>) -> Option<i64> {
        Some(match self {
            Expr::Const(c) => *c,
            Expr::Reg(r) => env.regs[*r as usize],
            Expr::Tid => env.tid,
            Expr::Lane => env.lane,
            Expr::Sg => env.sg,
            Expr::Un(UnOp::Not, e) => i64::from(e.eval(env)? == 0),
            Expr::Un(UnOp::Neg, e) => e.eval(env)?.wrapping_neg(),
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(env)?, b.eval(env)?);
                match op {
                    BinOp::Or => i64::from(a != 0 || b != 0),
                    BinOp::And => i64::from(a != 0 && b != 0),
                    BinOp::BitOr => a | b,
                    BinOp::BitXor => a ^ b,
                    BinOp::BitAnd => a & b,
                    BinOp::Eq => i64::from(a == b),
                    BinOp::Ne => i64::from(a != b),
                    BinOp::Lt => i64::from(a < b),
                    BinOp::Le => i64::from(a <= b),
                    BinOp::Gt => i64::from(a > b),
                    BinOp::Ge => i64::from(a >= b),
                    BinOp::Add => a.wrapping_add(b),
                    BinOp::Sub => a.wrapping_sub(b),
                    BinOp::Mul => a.wrapping_mul(b),
                    BinOp::Div => a.checked_div(b)?,
                    BinOp::Rem => a.checked_rem(b)?,
                }
            }
        })
    }
}

/// Subgroup operations (paper: OpGroupAdd, OpGroupAllEqual, OpGroupBroadcast; the TLA+ adds
/// All/Any and the subgroup barrier, an SG op with no computation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SgOp {
    Add(Expr),
    AllEqual(Expr),
    All(Expr),
    Any(Expr),
    /// Bit `lane` set for every participant whose argument is non-zero; makes participation
    /// observable in memory (digest §2.0).
    Ballot(Expr),
    /// `(value, lane)`: the value of the participant with that lane; a lane outside the
    /// participants is undefined behaviour.
    Broadcast(Expr, Expr),
    Barrier,
}

/// Normal instructions N of Fig. 6.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstKind {
    Local {
        dst: RegId,
        value: Expr,
    },
    Load {
        dst: RegId,
        array: ArrayId,
        index: Expr,
    },
    Store {
        array: ArrayId,
        index: Expr,
        value: Expr,
    },
    Sg {
        dst: Option<RegId>,
        op: SgOp,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inst {
    pub kind: InstKind,
    pub pos: Pos,
}

/// Terminators of Fig. 6, plus `return` (thread termination).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TermKind {
    Branch(BlockId),
    BranchCond(Expr, BlockId, BlockId),
    Return,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    pub kind: TermKind,
    pub pos: Pos,
}

/// The merge instruction of a construct header (`selectionMerge`; the TLA+'s loop merge
/// also names the continue target).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merge {
    None,
    Selection(BlockId),
    Loop { merge: BlockId, cont: BlockId },
}

impl Merge {
    /// Labels a header instance pushes onto its children's merge stack, outermost first, so
    /// the continue target sits above the loop merge (it lies inside the loop).
    pub fn labels(self) -> Vec<BlockId> {
        match self {
            Merge::None => vec![],
            Merge::Selection(m) => vec![m],
            Merge::Loop { merge, cont } => vec![merge, cont],
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub label: String,
    pub pos: Pos,
    pub insts: Vec<Inst>,
    pub merge: Merge,
    pub term: Term,
}

/// A memory location with a constant index (used by `init` and `observe`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    pub array: String,
    pub index: i64,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.array, self.index)
    }
}

/// One final state as the test observes it: the values of the `observe` locations, in
/// their declared order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Outcome(pub Vec<i64>);

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "(")?;
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{v}")?;
        }
        write!(f, ")")
    }
}

pub type OutcomeSet = BTreeSet<Outcome>;

/// A parsed litmus test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Litmus {
    pub name: String,
    pub threads: usize,
    pub subgroup: usize,
    pub arrays: Vec<String>,
    pub registers: Vec<String>,
    /// Initial memory; every other location starts at 0.
    pub init: BTreeMap<(ArrayId, i64), i64>,
    pub observe: Vec<Location>,
    /// `observe` resolved to array ids.
    pub observe_ids: Vec<(ArrayId, i64)>,
    /// Committed expectations per variant (data files only; may be empty).
    pub expect: BTreeMap<Variant, OutcomeSet>,
    /// Block 0 is the entry block.
    pub blocks: Vec<Block>,
}
