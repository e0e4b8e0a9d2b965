//! Uniformity of thread-index quotients: a value `floor(%tid.x / k)` is the same for every
//! thread of an aligned group of consecutive threads when the group lies inside one block of
//! `k` consecutive `%tid.x` values. This is what makes warp-specialised code analysable: its
//! roles branch on `%tid.x / 128` (the warpgroup) or `%tid.x >> 5` (the warp), and the
//! warpgroup instructions they guard (`wgmma.*`, `setmaxnreg`) need warpgroup uniformity.
//!
//! The rule (documented in docs/checking.md, "Warpgroup uniformity"). Threads are numbered
//! `x + X·(y + Y·z)` for a block of `X × Y × Z` (CUDA programming guide, "Thread Hierarchy"); a
//! warp is 32 consecutive numbers starting at a multiple of 32, a warpgroup 128 starting at a
//! multiple of 128 (PTX ISA, "warpgroup"). `floor(x / k)` is constant on every aligned group of
//! `W` threads exactly when
//! - `k ≥ 1024`: `%tid.x < 1024` (CUDA's limit), the quotient is 0 everywhere; or
//! - `W` divides `k`, and no group of `W` straddles two rows of `x`: the block is 1-D
//!   (`Y·Z = 1`), or `X` is a multiple of `W`, or `X ≤ k` (then the quotient is 0 in every row).
//!   A 2-D block of `X = 192` threads per row fails: the warpgroup of threads 128…255 holds
//!   `x = 128…191` of row 0 and `x = 0…63` of row 1.
//!
//! The block shape is known for a launch (`gpusim check` passes the manifest's). Without it
//! (`gpusim lint` on a PTX file) the rows are *assumed* aligned — the block is 1-D or `X` a
//! multiple of the group — unless the module reads `%tid.y`, `%tid.z`, `%ntid.y` or
//! `%ntid.z` (it runs multi-dimensional blocks, so no assumption is made); each assumption
//! that made a quotient uniform is reported with its line (`Assumption`), so the verdict says
//! what it rests on.

use super::effects::{Level, Levels};
use gpusim_isa::{ArithOp, Dim, Inst, Module, Op, Operand, SpecialReg, Type};

/// `%tid.x` is below this (CUDA: at most 1024 threads in x), so `floor(%tid.x / 1024)` is 0.
pub const TID_X_LIMIT: u32 = 1024;

/// What the analysis knows about the block shapes its kernels run with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Blocks {
    /// Every block shape `[x, y, z]` the kernels are launched with; `None` when unknown.
    pub shapes: Option<Vec<[u32; 3]>>,
}

impl Blocks {
    /// Launches with these block shapes.
    pub fn known(shapes: Vec<[u32; 3]>) -> Blocks {
        Blocks {
            shapes: Some(shapes),
        }
    }
}

/// A quotient taken as uniform because the rows were assumed aligned (unknown block shape).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assumption {
    pub file: String,
    pub function: String,
    /// `k` of `floor(%tid.x / k)`.
    pub k: u32,
    /// The largest level it is uniform at.
    pub level: Level,
    /// The lines of the instructions that read it.
    pub lines: Vec<u32>,
}

impl std::fmt::Display for Assumption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let g = self.level.threads().unwrap_or(0);
        let lines: Vec<String> = self.lines.iter().map(u32::to_string).collect();
        write!(
            f,
            "{}: in `{}`, %tid.x / {} (read at line {}) is taken as {}-uniform, assuming \
             %ntid.x is a multiple of {g} or a 1-D block (the block shape is not known here; \
             `gpusim check` uses the manifest's)",
            self.file,
            self.function,
            self.k,
            lines.join(", "),
            self.level.name()
        )
    }
}

/// Whether the module reads a y or z thread index or block size: it runs multi-dimensional
/// blocks, so rows are not assumed aligned.
pub(crate) fn multi_dimensional(m: &Module) -> bool {
    let yz = |o: &Operand| {
        matches!(
            o,
            Operand::Special(SpecialReg::Tid(Dim::Y | Dim::Z) | SpecialReg::Ntid(Dim::Y | Dim::Z))
        )
    };
    m.functions.iter().any(|f| {
        f.body.iter().any(|i| match &i.op {
            Op::Mov { a, .. } | Op::Cvt { a, .. } => yz(a),
            Op::Arith { a, b, c, .. } => yz(a) || yz(b) || yz(c),
            _ => false,
        })
    })
}

/// The levels at which `floor(%tid.x / k)` may differ between threads (`[warp, warpgroup,
/// cta]`), and the largest level made uniform only by assuming aligned rows.
pub(crate) fn quotient_levels(
    k: u32,
    blocks: &Blocks,
    assume_rows: bool,
) -> (Levels, Option<Level>) {
    if k >= TID_X_LIMIT {
        return ([false; 3], None);
    }
    let mut levels = [true; 3];
    let mut assumed = None;
    for l in [Level::Warp, Level::Warpgroup] {
        let w = l.threads().expect("warp and warpgroup have sizes");
        if k % w != 0 {
            continue;
        }
        let rows_aligned = match &blocks.shapes {
            Some(shapes) => shapes
                .iter()
                .all(|&[x, y, z]| y * z == 1 || x % w == 0 || x <= k),
            None => {
                if assume_rows {
                    assumed = Some(l);
                }
                assume_rows
            }
        };
        levels[l.index()] = !rows_aligned;
    }
    if let Some(shapes) = &blocks.shapes {
        // Every x below k: the quotient is 0 in every thread.
        if !shapes.is_empty() && shapes.iter().all(|&[x, _, _]| x <= k) {
            return ([false; 3], None);
        }
    }
    (levels, assumed)
}

fn imm(o: &Operand) -> Option<u64> {
    match o {
        Operand::Imm(v) => Some(*v),
        _ => None,
    }
}

fn integer(t: Type) -> bool {
    !t.is_float() && t != Type::Pred && t.bits() >= 16 && t.bits() <= 64
}

/// The exact quotient `k` such that `inst` writes `floor(%tid.x / k)`, given the quotient each
/// register operand holds (`q`; `%tid.x` itself is `k = 1`). `mov`, integer `cvt` to 16 bits or
/// more (`%tid.x < 1024`), `div` by a positive constant, `shr` by a constant.
pub(crate) fn quotient_written(
    inst: &Inst,
    mut q: impl FnMut(&Operand) -> Option<u32>,
) -> Option<u32> {
    let mut of = |o: &Operand| match o {
        Operand::Special(SpecialReg::Tid(Dim::X)) => Some(1),
        o => q(o),
    };
    let k = match &inst.op {
        Op::Mov { ty, a, .. } if integer(*ty) => of(a)?,
        Op::Cvt { dty, sty, a, .. } if integer(*dty) && integer(*sty) => of(a)?,
        Op::Arith {
            op: ArithOp::Div,
            ty,
            a,
            b,
            ..
        } if integer(*ty) => {
            let c = imm(b).filter(|&c| c > 0 && c < (1 << 31))?;
            (of(a)? as u64 * c).min(TID_X_LIMIT as u64) as u32
        }
        Op::Arith {
            op: ArithOp::Shr,
            ty,
            a,
            b,
            ..
        } if integer(*ty) => {
            let s = imm(b).filter(|&s| s < 32)?;
            ((of(a)? as u64) << s).min(TID_X_LIMIT as u64) as u32
        }
        _ => return None,
    };
    Some(k)
}

/// The group a read of a quotient `k` by `inst` depends on: `k`, or for `and` with a constant
/// mask whose low `t` bits are clear, `k · 2^t` (the result keeps only the quotient's bits from
/// `t` up, a function of `floor(%tid.x / (k · 2^t))`).
pub(crate) fn group_read(inst: &Inst, k: u32) -> u32 {
    match &inst.op {
        Op::Arith {
            op: ArithOp::And,
            a,
            b,
            ..
        } => {
            let mask = imm(a).or(imm(b)).unwrap_or(0);
            if mask == 0 {
                return k;
            }
            let t = mask.trailing_zeros().min(31);
            ((k as u64) << t).min(TID_X_LIMIT as u64) as u32
        }
        _ => k,
    }
}
