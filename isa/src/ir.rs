//! The PTX intermediate representation: what the parser produces and every later stage reads.
//!
//! **API boundary.** The simulator, the analyses and the semantic models all consume this IR.
//! Design rules:
//! - Names are resolved: registers are `RegId`s into their function's register table, branch
//!   targets are instruction indices (`Pc`), variables are `SymbolId`s, callees are `FuncId`s.
//! - Immediates are already converted to the bit pattern of the instruction's type.
//! - Every instruction carries the `Span` of its source text so that any later error can name
//!   the file, line and column.

use crate::span::Span;

/// Index of an instruction inside its function's body.
pub type Pc = u32;

/// Index into `Function::regs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegId(pub u32);

/// Index into `Module::symbols`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SymbolId(pub u32);

/// Index into `Module::functions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(pub u32);

/// PTX fundamental types (PTX ISA §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    Bf16,
    Bf16x2,
    /// Two packed 16-bit integers (`min`/`max`, sm_90); element 0 in the low half.
    U16x2,
    S16x2,
    F32,
    F64,
    Pred,
}

impl Type {
    /// Size in bytes (a predicate is stored as one byte).
    pub fn size(self) -> u32 {
        use Type::*;
        match self {
            B8 | U8 | S8 | Pred => 1,
            B16 | U16 | S16 | F16 | Bf16 => 2,
            B32 | U32 | S32 | F32 | F16x2 | Bf16x2 | U16x2 | S16x2 => 4,
            B64 | U64 | S64 | F64 => 8,
            B128 => 16,
        }
    }
    pub fn bits(self) -> u32 {
        self.size() * 8
    }
    pub fn is_signed(self) -> bool {
        matches!(self, Type::S8 | Type::S16 | Type::S32 | Type::S64)
    }
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Type::F16 | Type::F16x2 | Type::Bf16 | Type::Bf16x2 | Type::F32 | Type::F64
        )
    }
    /// Mask selecting the value bits of this type in a 64-bit register slot.
    pub fn mask(self) -> u64 {
        match self.bits() {
            64 | 128 => u64::MAX,
            8 if self == Type::Pred => 1,
            b => (1u64 << b) - 1,
        }
    }
    pub fn name(self) -> &'static str {
        use Type::*;
        match self {
            B8 => "b8",
            B16 => "b16",
            B32 => "b32",
            B64 => "b64",
            B128 => "b128",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            F16 => "f16",
            F16x2 => "f16x2",
            Bf16 => "bf16",
            Bf16x2 => "bf16x2",
            U16x2 => "u16x2",
            S16x2 => "s16x2",
            F32 => "f32",
            F64 => "f64",
            Pred => "pred",
        }
    }
    pub fn from_name(s: &str) -> Option<Type> {
        use Type::*;
        Some(match s {
            "b8" => B8,
            "b16" => B16,
            "b32" => B32,
            "b64" => B64,
            "b128" => B128,
            "u8" => U8,
            "u16" => U16,
            "u32" => U32,
            "u64" => U64,
            "s8" => S8,
            "s16" => S16,
            "s32" => S32,
            "s64" => S64,
            "f16" => F16,
            "f16x2" => F16x2,
            "bf16" => Bf16,
            "bf16x2" => Bf16x2,
            "u16x2" => U16x2,
            "s16x2" => S16x2,
            "f32" => F32,
            "f64" => F64,
            "pred" => Pred,
            _ => return None,
        })
    }
}

/// State spaces (PTX ISA §5.1). `Generic` is an address without a space qualifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Generic,
    Global,
    Shared,
    Local,
    Const,
    Param,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Generic => "generic",
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param => "param",
        }
    }
}

/// Cache operators of ld/st (PTX ISA §9.7.9.1). `None` in the IR means the default (.ca / .wb).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CacheOp {
    Ca,
    Cg,
    Cs,
    Lu,
    Cv,
    Wb,
    Wt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    X,
    Y,
    Z,
}

/// Special registers (PTX ISA §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialReg {
    Tid(Dim),
    Ntid(Dim),
    Ctaid(Dim),
    Nctaid(Dim),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    GridId,
    Clock,
    Clock64,
    LanemaskEq,
    LanemaskLe,
    LanemaskLt,
    LanemaskGe,
    LanemaskGt,
    DynamicSmemSize,
    TotalSmemSize,
    GlobalTimer,
    /// `%clock_hi`: the upper 32 bits of `%clock64`.
    ClockHi,
    /// `%globaltimer_lo` / `%globaltimer_hi`: the halves of `%globaltimer`.
    GlobalTimerLo,
    GlobalTimerHi,
    /// `WARP_SZ`, the run-time constant warp size (an immediate operand in PTX syntax).
    WarpSz,
    /// Thread-block clusters (PTX ISA 9.0 §10.x): the CTA's rank in its cluster and the
    /// cluster's CTA count, the cluster's index in the grid and the grid's cluster counts, the
    /// CTA's index in its cluster and the cluster's shape, and whether the launch named one.
    ClusterCtarank,
    ClusterNctarank,
    ClusterId(Dim),
    NClusterId(Dim),
    ClusterCtaid(Dim),
    ClusterNctaid(Dim),
    IsExplicitCluster,
}

/// Floating-point / integer rounding modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Round {
    /// IEEE round to nearest even (`.rn`).
    Rn,
    /// toward zero (`.rz`)
    Rz,
    /// toward -inf (`.rm`)
    Rm,
    /// toward +inf (`.rp`)
    Rp,
    /// integer rounding: nearest even (`.rni`)
    Rni,
    /// integer rounding: toward zero (`.rzi`)
    Rzi,
    /// integer rounding: toward -inf (`.rmi`)
    Rmi,
    /// integer rounding: toward +inf (`.rpi`)
    Rpi,
    /// `.rna`, nearest with ties away from zero (cvt to tf32 only)
    Rna,
}

/// Modifiers shared by the arithmetic instructions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Mods {
    pub rnd: Option<Round>,
    pub ftz: bool,
    pub sat: bool,
    /// `.approx` (or `.full` for div, which we treat the same way: correctly rounded is allowed).
    pub approx: bool,
    /// `.NaN` on float `min`/`max`: a NaN operand gives the canonical NaN.
    pub nan: bool,
    /// `.xorsign.abs` on float `min`/`max`: compare magnitudes, sign = XOR of the input signs.
    pub xorsign_abs: bool,
    /// `.relu`: a negative result becomes +0.0 (`fma`/`cvt` to f16/bf16) or 0 (`max`/`min`
    /// on s32/s16x2).
    pub relu: bool,
}

/// Arithmetic, logic and special-function operations that read up to three operands and write
/// one register. The lane-level semantics are `semantics::arith`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArithOp {
    Add,
    Sub,
    /// `mul.lo` (and float `mul`)
    Mul,
    MulHi,
    /// `mul.wide`: the destination is twice the width of `ty`
    MulWide,
    /// `mad.lo` (and float `mad`, which is fma)
    Mad,
    MadHi,
    /// `mad.wide`: c and d are twice the width of `ty`
    MadWide,
    Mul24Lo,
    Mul24Hi,
    Mad24Lo,
    Mad24Hi,
    Div,
    Rem,
    Abs,
    Neg,
    Min,
    Max,
    And,
    Or,
    Xor,
    Not,
    Cnot,
    Shl,
    Shr,
    /// `bfe d, a, pos, len`
    Bfe,
    Brev,
    Popc,
    Clz,
    /// `prmt.b32{.mode} d, a, b, c`
    Prmt(PrmtMode),
    Fma,
    Rcp,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Lg2,
    Ex2,
    Tanh,
    Copysign,
    /// `sad d, a, b, c` = |a-b| + c
    Sad,
    /// `bmsk.{clamp,wrap}.b32 d, a, b`: a mask of `b` bits starting at bit `a`
    Bmsk {
        clamp: bool,
    },
    /// `szext.{clamp,wrap}.{u32,s32} d, a, b`: zero/sign-extend the low `b` bits of `a`
    Szext {
        clamp: bool,
    },
    /// `fns.b32 d, mask, base, offset`: the position of the n-th set bit
    Fns,
}

impl ArithOp {
    /// Number of source operands.
    pub fn arity(self) -> usize {
        use ArithOp::*;
        match self {
            Abs | Neg | Not | Cnot | Brev | Popc | Clz | Rcp | Sqrt | Rsqrt | Sin | Cos | Lg2
            | Ex2 | Tanh => 1,
            Mad | MadHi | MadWide | Mad24Lo | Mad24Hi | Bfe | Prmt(_) | Fma | Sad | Fns => 3,
            _ => 2,
        }
    }
}

/// Extended-precision ops that read and write the carry flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CarryOp {
    Add,
    Sub,
    MadLo,
    MadHi,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrmtMode {
    Default,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

/// Comparison operators of setp/set (PTX ISA §9.7.3.1): the ordered and unordered float ones
/// and the unsigned integer aliases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// Atomic and reduction operations (PTX ISA §9.7.12.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomOp {
    And,
    Or,
    Xor,
    Cas,
    Exch,
    Add,
    Inc,
    Dec,
    Min,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatchMode {
    Any,
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarRed {
    Popc,
    And,
    Or,
}

/// What a `bar`/`barrier` instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarKind {
    /// `bar.sync` / `barrier.sync` / `bar.cta.sync`: arrive and wait
    Sync,
    /// `bar.arrive`: arrive, do not wait
    Arrive,
    /// `bar.red.{popc,and,or}`: arrive, wait, reduce a predicate
    Red(BarRed),
}

/// Direction of a non-tensor bulk copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BulkDir {
    /// `.shared::cluster.global` / `.shared::cta.global`, completing on an mbarrier.
    GlobalToShared,
    /// `.global.shared::cta.bulk_group`.
    SharedToGlobal,
    /// `.shared::cluster.shared::cta`, completing on the destination CTA's mbarrier.
    SharedToCluster,
}

/// Direction of a tensor (TMA) copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorDir {
    /// global → shared::cluster, completing on an mbarrier (`.tile` mode).
    Load,
    /// shared::cta → global, in a bulk group.
    Store,
    /// `cp.reduce.async.bulk.tensor`: shared::cta combined into global, in a bulk group.
    Reduce(TmaReduce),
}

/// The reductions `cp.reduce.async.bulk.tensor` performs (§9.7.9.25.5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TmaReduce {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
}

impl TmaReduce {
    pub const ALL: [TmaReduce; 8] = [
        TmaReduce::Add,
        TmaReduce::Min,
        TmaReduce::Max,
        TmaReduce::Inc,
        TmaReduce::Dec,
        TmaReduce::And,
        TmaReduce::Or,
        TmaReduce::Xor,
    ];
    pub fn name(self) -> &'static str {
        match self {
            TmaReduce::Add => "add",
            TmaReduce::Min => "min",
            TmaReduce::Max => "max",
            TmaReduce::Inc => "inc",
            TmaReduce::Dec => "dec",
            TmaReduce::And => "and",
            TmaReduce::Or => "or",
            TmaReduce::Xor => "xor",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FenceLevel {
    Cta,
    Gpu,
    Sys,
}

/// The two dot-product instructions (PTX ISA 8.x §9.7.1.23 `dp4a`, §9.7.1.24 `dp2a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DotKind {
    /// `dp4a`: four byte products
    Dp4a,
    /// `dp2a.lo`: two halfwords of a times bytes 0 and 1 of b
    Dp2aLo,
    /// `dp2a.hi`: two halfwords of a times bytes 2 and 3 of b
    Dp2aHi,
}

/// `redux.sync` operations (PTX ISA, parallel synchronization: `redux.sync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// `testp` properties (PTX ISA 8.x §9.7.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TestpOp {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// Shapes of `mma.sync` (PTX ISA 9.0 §9.7.14.5.14 `mma`): M×N×K of D = A·B + C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaShape {
    /// `.m16n8k8`
    M16n8k8,
    /// `.m16n8k16`
    M16n8k16,
}

impl MmaShape {
    pub fn name(self) -> &'static str {
        match self {
            MmaShape::M16n8k8 => "m16n8k8",
            MmaShape::M16n8k16 => "m16n8k16",
        }
    }
    /// The reduction dimension K (M = 16 and N = 8 for every supported shape).
    pub fn k(self) -> usize {
        match self {
            MmaShape::M16n8k8 => 8,
            MmaShape::M16n8k16 => 16,
        }
    }
}

/// Element type of the multiplicands A and B of `mma` (both the same here); the accumulators
/// C and D are `.f32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaType {
    /// `.f16`: two per `.b32` register (`.f16x2`), element 0 in the low half
    F16,
    /// `.bf16`: two per `.b32` register, element 0 in the low half
    Bf16,
    /// `.tf32`: one per `.b32` register, laid out as an f32 (PTX ISA: alternate floating-point
    /// data formats)
    Tf32,
}

impl MmaType {
    pub fn name(self) -> &'static str {
        match self {
            MmaType::F16 => "f16",
            MmaType::Bf16 => "bf16",
            MmaType::Tf32 => "tf32",
        }
    }
}

/// Shape of integer `mma` (`.s8`/`.u8` multiplicands, `.s32` accumulators; PTX ISA 9.0
/// §9.7.14.5.14). Kept apart from `MmaShape` because the integer shapes have their own
/// fragment layouts (§9.7.14.5.6, .5.9, .5.10) even where the name (m16n8k16) is shared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaIntShape {
    /// `.m8n8k16`
    M8n8k16,
    /// `.m16n8k16`
    M16n8k16,
    /// `.m16n8k32`
    M16n8k32,
}

impl MmaIntShape {
    pub fn name(self) -> &'static str {
        match self {
            MmaIntShape::M8n8k16 => "m8n8k16",
            MmaIntShape::M16n8k16 => "m16n8k16",
            MmaIntShape::M16n8k32 => "m16n8k32",
        }
    }
    /// Rows M of A, C and D (N = 8 for every shape).
    pub fn m(self) -> usize {
        match self {
            MmaIntShape::M8n8k16 => 8,
            MmaIntShape::M16n8k16 | MmaIntShape::M16n8k32 => 16,
        }
    }
    /// The reduction dimension K.
    pub fn k(self) -> usize {
        match self {
            MmaIntShape::M8n8k16 | MmaIntShape::M16n8k16 => 16,
            MmaIntShape::M16n8k32 => 32,
        }
    }
}

/// Element type of an integer `mma` multiplicand (A and B may differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaIntType {
    /// `.s8`: four per `.b32` register, element 0 in the low byte
    S8,
    /// `.u8`: four per `.b32` register, element 0 in the low byte
    U8,
}

impl MmaIntType {
    pub fn name(self) -> &'static str {
        match self {
            MmaIntType::S8 => "s8",
            MmaIntType::U8 => "u8",
        }
    }
}

/// Element type of a `wgmma.mma_async` multiplicand (PTX ISA 9.0 §9.7.15.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WgmmaType {
    /// `.f16` (K = 16)
    F16,
    /// `.bf16` (K = 16)
    Bf16,
    /// `.tf32` (K = 8), laid out as an f32
    Tf32,
    /// `.e4m3` fp8 (K = 32)
    E4m3,
    /// `.e5m2` fp8 (K = 32)
    E5m2,
}

impl WgmmaType {
    pub fn name(self) -> &'static str {
        match self {
            WgmmaType::F16 => "f16",
            WgmmaType::Bf16 => "bf16",
            WgmmaType::Tf32 => "tf32",
            WgmmaType::E4m3 => "e4m3",
            WgmmaType::E5m2 => "e5m2",
        }
    }
    pub fn from_name(s: &str) -> Option<WgmmaType> {
        Some(match s {
            "f16" => WgmmaType::F16,
            "bf16" => WgmmaType::Bf16,
            "tf32" => WgmmaType::Tf32,
            "e4m3" => WgmmaType::E4m3,
            "e5m2" => WgmmaType::E5m2,
            _ => return None,
        })
    }
    /// Bytes per element.
    pub fn size(self) -> u32 {
        match self {
            WgmmaType::F16 | WgmmaType::Bf16 => 2,
            WgmmaType::Tf32 => 4,
            WgmmaType::E4m3 | WgmmaType::E5m2 => 1,
        }
    }
    /// The K of `m64nNkK` for this type: 32 bytes of K per row (k16, k8, k32).
    pub fn k(self) -> usize {
        32 / self.size() as usize
    }
}

/// A register list of any length (the accumulators of `wgmma`: up to 128 registers).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegList(pub Box<[RegId]>);

impl RegList {
    pub fn as_slice(&self) -> &[RegId] {
        &self.0
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Operand A of `wgmma.mma_async`: a 64-bit shared-memory matrix descriptor, or the fragment
/// in four `.b32` registers per thread.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum WgmmaA {
    Desc(Operand),
    Regs(RegList),
}

/// `wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype d, a, b-desc, scale-d, imm-scale-a,
/// imm-scale-b{, imm-trans-a}{, imm-trans-b}` (PTX ISA 9.0 §9.7.15.5.2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Wgmma {
    /// N: 8..=256, a multiple of 8 (M = 64; K from the type).
    pub n: u16,
    /// Accumulator type: `F32` or `F16` (f16 accumulators packed two per register).
    pub dty: Type,
    pub aty: WgmmaType,
    pub bty: WgmmaType,
    pub d: RegList,
    pub a: WgmmaA,
    pub b: Operand,
    /// `scale-d`: a predicate (register, negated register) or immediate 0/1; false ignores D.
    pub scale_d: Operand,
    /// `imm-scale-a` / `imm-scale-b` = -1: the operand is negated.
    pub neg_a: bool,
    pub neg_b: bool,
    /// `imm-trans-a` / `imm-trans-b` = 1: the shared-memory operand is MN-major.
    pub trans_a: bool,
    pub trans_b: bool,
}

/// Storage layout of a matrix operand: `.row` (row-major) or `.col` (column-major), for
/// `mma.m8n8k4` multiplicands and every `wmma` operand (PTX ISA 9.0 §9.7.14.4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatLayout {
    Row,
    Col,
}

impl MatLayout {
    pub fn name(self) -> &'static str {
        match self {
            MatLayout::Row => "row",
            MatLayout::Col => "col",
        }
    }
}

/// Accumulator type of `mma.m8n8k4` (C and D independently): `.f16` (four `.f16x2`
/// registers) or `.f32` (eight), PTX ISA 9.0 §9.7.14.5.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccType {
    F16,
    F32,
}

impl AccType {
    pub fn name(self) -> &'static str {
        match self {
            AccType::F16 => "f16",
            AccType::F32 => "f32",
        }
    }
}

/// Shapes of `wmma` (PTX ISA 9.0 §9.7.14.4): M×N×K of D = A·B + C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WmmaShape {
    /// `.m16n16k16` (f16, bf16, s8, u8)
    M16n16k16,
    /// `.m32n8k16` (f16, bf16, s8, u8)
    M32n8k16,
    /// `.m8n32k16` (f16, bf16, s8, u8)
    M8n32k16,
    /// `.m16n16k8` (tf32)
    M16n16k8,
}

impl WmmaShape {
    pub fn name(self) -> &'static str {
        match self {
            WmmaShape::M16n16k16 => "m16n16k16",
            WmmaShape::M32n8k16 => "m32n8k16",
            WmmaShape::M8n32k16 => "m8n32k16",
            WmmaShape::M16n16k8 => "m16n16k8",
        }
    }
    /// (M, N, K).
    pub fn mnk(self) -> (usize, usize, usize) {
        match self {
            WmmaShape::M16n16k16 => (16, 16, 16),
            WmmaShape::M32n8k16 => (32, 8, 16),
            WmmaShape::M8n32k16 => (8, 32, 16),
            WmmaShape::M16n16k8 => (16, 16, 8),
        }
    }
}

/// Which matrix a `wmma.load` fills (`.a`, `.b`, `.c`); `wmma.store` always stores `.d`,
/// which has C's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WmmaFrag {
    A,
    B,
    C,
}

impl WmmaFrag {
    pub fn name(self) -> &'static str {
        match self {
            WmmaFrag::A => "a",
            WmmaFrag::B => "b",
            WmmaFrag::C => "c",
        }
    }
}

/// Element type of a `wmma` matrix: the multiplicands `.f16`, `.bf16`, `.tf32`, `.s8`, `.u8`
/// and the accumulators `.f16`, `.f32`, `.s32` (PTX ISA 9.0 §9.7.14.4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WmmaType {
    F16,
    Bf16,
    Tf32,
    S8,
    U8,
    F32,
    S32,
}

impl WmmaType {
    pub fn name(self) -> &'static str {
        match self {
            WmmaType::F16 => "f16",
            WmmaType::Bf16 => "bf16",
            WmmaType::Tf32 => "tf32",
            WmmaType::S8 => "s8",
            WmmaType::U8 => "u8",
            WmmaType::F32 => "f32",
            WmmaType::S32 => "s32",
        }
    }
    /// Bytes of one element in memory.
    pub fn size(self) -> u32 {
        match self {
            WmmaType::S8 | WmmaType::U8 => 1,
            WmmaType::F16 | WmmaType::Bf16 => 2,
            WmmaType::Tf32 | WmmaType::F32 | WmmaType::S32 => 4,
        }
    }
}

/// A source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    Reg(RegId),
    /// A predicate register read negated (`!%p`), for setp/selp/vote combinations.
    NotReg(RegId),
    /// Bits of the immediate in the instruction's operand type.
    Imm(u64),
    Special(SpecialReg),
    /// The address of a variable (in its own space), e.g. `mov.u64 %rd, shared_array;`.
    Symbol(SymbolId),
    /// The address of a function, for indirect calls.
    Func(FuncId),
}

/// The base of an address expression `[base+offset]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddrBase {
    Reg(RegId),
    Symbol(SymbolId),
    /// An absolute address `[1024]`.
    Abs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Address {
    pub base: AddrBase,
    pub offset: i64,
}

/// Up to eight registers: vector loads and stores (`.v2`, `.v4`), `mov` (un)packing, and the
/// tensor fragments (`mma`, `wmma`: up to 8 registers per operand).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegVec {
    pub regs: [RegId; RegVec::MAX],
    pub len: u8,
}

impl RegVec {
    /// The most registers one `RegVec` holds.
    pub const MAX: usize = 8;
    pub fn one(r: RegId) -> RegVec {
        RegVec {
            regs: [r; RegVec::MAX],
            len: 1,
        }
    }
    pub fn as_slice(&self) -> &[RegId] {
        &self.regs[..self.len as usize]
    }
}

/// Up to four source operands for a vector store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OpVec {
    pub ops: [Operand; 4],
    pub len: u8,
}

impl OpVec {
    pub fn as_slice(&self) -> &[Operand] {
        &self.ops[..self.len as usize]
    }
}

/// The instruction proper. Exhaustive matches over `Op` list every place a new instruction
/// touches (see `docs/adding-an-instruction.md`).
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `mov d, a`; with `pack`/`unpack` it moves between a wide register and a vector of
    /// narrow ones (`mov.b64 %rd, {%r1,%r2}` / `mov.b64 {%r1,%r2}, %rd`).
    Mov {
        ty: Type,
        d: RegId,
        a: Operand,
    },
    MovPack {
        ty: Type,
        d: RegId,
        parts: OpVec,
    },
    MovUnpack {
        ty: Type,
        d: RegVec,
        a: Operand,
    },
    Arith {
        op: ArithOp,
        ty: Type,
        mods: Mods,
        d: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    /// `add.cc`, `addc{.cc}`, `sub.cc`, `subc{.cc}`, `mad{.lo,.hi}.cc`, `madc{.lo,.hi}{.cc}`;
    /// `cc` is the hidden per-thread carry-flag register.
    Carry {
        op: CarryOp,
        ty: Type,
        cc_in: bool,
        cc_out: bool,
        cc: RegId,
        d: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    /// `bfind{.shiftamt}.ty d, a`
    Bfind {
        ty: Type,
        shiftamt: bool,
        d: RegId,
        a: Operand,
    },
    /// `shf.{l,r}.{clamp,wrap}.b32 d, a, b, c`
    Shf {
        left: bool,
        clamp: bool,
        d: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    /// `bfi d, a, b, pos, len`
    Bfi {
        ty: Type,
        d: RegId,
        a: Operand,
        b: Operand,
        pos: Operand,
        len: Operand,
    },
    /// `setp.cmp{.bop}.ty p[|q], a, b{, {!}c}`
    Setp {
        cmp: Cmp,
        ty: Type,
        ftz: bool,
        p: RegId,
        q: Option<RegId>,
        a: Operand,
        b: Operand,
        comb: Option<(BoolOp, Operand)>,
    },
    /// `set.cmp{.bop}.dty.sty d, a, b{, {!}c}`: d is all ones (or 1.0f) when true
    Set {
        cmp: Cmp,
        dty: Type,
        sty: Type,
        ftz: bool,
        d: RegId,
        a: Operand,
        b: Operand,
        comb: Option<(BoolOp, Operand)>,
    },
    /// `selp.ty d, a, b, c`: c ? a : b
    Selp {
        ty: Type,
        d: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    /// `slct.dty.cty d, a, b, c`: c >= 0 ? a : b
    Slct {
        dty: Type,
        cty: Type,
        ftz: bool,
        d: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    Cvt {
        dty: Type,
        sty: Type,
        mods: Mods,
        d: RegId,
        a: Operand,
    },
    /// `cvta{.to}.space.size d, a`
    Cvta {
        to_space: bool,
        space: Space,
        ty: Type,
        d: RegId,
        a: Operand,
    },
    Ld {
        space: Space,
        cop: Option<CacheOp>,
        volatile: bool,
        ty: Type,
        d: RegVec,
        addr: Address,
    },
    St {
        space: Space,
        cop: Option<CacheOp>,
        volatile: bool,
        ty: Type,
        addr: Address,
        src: OpVec,
    },
    /// `atom` (d is Some) and `red` (d is None).
    Atom {
        space: Space,
        op: AtomOp,
        ty: Type,
        d: Option<RegId>,
        addr: Address,
        b: Operand,
        c: Option<Operand>,
    },
    Bar {
        kind: BarKind,
        id: Operand,
        count: Option<Operand>,
        red: Option<(RegId, Operand)>,
        aligned: bool,
    },
    /// `bar.warp.sync mask`
    WarpSync {
        mask: Operand,
    },
    Fence {
        level: FenceLevel,
    },
    /// `shfl.sync.mode.b32 d[|p], a, b, c, membermask`
    Shfl {
        mode: ShflMode,
        d: RegId,
        p: Option<RegId>,
        a: Operand,
        b: Operand,
        c: Operand,
        mask: Operand,
    },
    /// `vote.sync.mode.{pred,b32} d, {!}a, membermask`
    Vote {
        mode: VoteMode,
        d: RegId,
        a: Operand,
        mask: Operand,
    },
    /// `match.{any,all}.sync.b32/b64 d[|p], a, membermask`
    Match {
        mode: MatchMode,
        ty: Type,
        d: RegId,
        p: Option<RegId>,
        a: Operand,
        mask: Operand,
    },
    /// `activemask.b32 d`
    ActiveMask {
        d: RegId,
    },
    /// `redux.sync.op.ty d, a, membermask`: a reduction over the member lanes that execute it.
    Redux {
        op: ReduxOp,
        ty: Type,
        d: RegId,
        a: Operand,
        mask: Operand,
    },
    /// `lop3.b32 d, a, b, c, immLut` and `lop3.{or,and}.b32 d|p, a, b, c, immLut, q`
    /// (`pred` = (operation, p, q)).
    Lop3 {
        lut: u8,
        d: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
        pred: Option<(BoolOp, RegId, Operand)>,
    },
    /// `dp4a.atype.btype d, a, b, c` and `dp2a.{lo,hi}.atype.btype d, a, b, c`.
    Dot {
        kind: DotKind,
        a_signed: bool,
        b_signed: bool,
        d: RegId,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    /// `testp.op.ty p, a`
    Testp {
        op: TestpOp,
        ty: Type,
        p: RegId,
        a: Operand,
    },
    /// `isspacep.space p, a`: whether the generic address a lies in the space's window.
    Isspacep {
        space: Space,
        p: RegId,
        a: Operand,
    },
    /// `nanosleep.u32 t`: no value; the warp sleeps (see the simulator's timing).
    Nanosleep {
        t: Operand,
    },
    /// `mma.sync.aligned.shape.row.col.f32.ty.ty.f32 d, a, b, c`: a warp-wide D = A·B + C on
    /// fragments spread over the 32 lanes (PTX ISA 9.0 §9.7.14.5). d and c are 4 `.f32`
    /// registers; a and b hold `ty` elements (see `semantics::mma_regs` for their counts).
    Mma {
        shape: MmaShape,
        ty: MmaType,
        d: RegVec,
        a: RegVec,
        b: RegVec,
        c: RegVec,
    },
    /// `mma.sync.aligned.shape.row.col{.satfinite}.s32.aty.bty.s32 d, a, b, c`: the integer
    /// warp-wide D = A·B + C (PTX ISA 9.0 §9.7.14.5.14); `semantics::mma_int_regs` gives the
    /// register counts of a, b and c/d. Without `satfinite` D wraps modulo 2^32; with it D
    /// is clamped to the s32 range.
    MmaInt {
        shape: MmaIntShape,
        aty: MmaIntType,
        bty: MmaIntType,
        satfinite: bool,
        d: RegVec,
        a: RegVec,
        b: RegVec,
        c: RegVec,
    },
    /// `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 d, [addr]`: a warp
    /// collective loading `num` 8×8 matrices of 16-bit elements from shared memory (lanes
    /// 8i..8i+7 give the row addresses of matrix i); d holds one register per matrix
    /// (`semantics::ldmatrix` gives the layout, PTX ISA 9.0 §9.7.14.5.15). `space` is Shared
    /// or Generic (a generic address must point into shared memory).
    Ldmatrix {
        num: u8,
        trans: bool,
        space: Space,
        d: RegVec,
        addr: Address,
    },
    /// `stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 [addr], src`: the
    /// inverse of `Ldmatrix` (PTX ISA 9.0 §9.7.14.5.16).
    Stmatrix {
        num: u8,
        trans: bool,
        space: Space,
        addr: Address,
        src: RegVec,
    },
    /// `mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype d, a, b, c`: the Volta
    /// quad-pair shape, four independent 8×8×4 products per warp (PTX ISA 9.0 §9.7.14.5.1,
    /// §9.7.14.5.14). a and b are two `.f16x2` registers; c and d four `.f16x2` or eight
    /// `.f32` registers (`semantics::mma_m884_regs`).
    MmaM884 {
        alayout: MatLayout,
        blayout: MatLayout,
        dty: AccType,
        cty: AccType,
        d: RegVec,
        a: RegVec,
        b: RegVec,
        c: RegVec,
    },
    /// `wmma.load.{a,b,c}.sync.aligned.layout.shape{.global,.shared{::cta}}.ty r, [p]{, stride}`:
    /// a warp collective loading one matrix fragment (PTX ISA 9.0 §9.7.14.4.3); `stride` is in
    /// elements, the leading dimension when absent (`semantics::wmma_default_stride`).
    WmmaLoad {
        frag: WmmaFrag,
        layout: MatLayout,
        shape: WmmaShape,
        space: Space,
        ty: WmmaType,
        d: RegVec,
        addr: Address,
        stride: Option<Operand>,
    },
    /// `wmma.store.d.sync.aligned.layout.shape{.global,.shared{::cta}}.ty [p], r{, stride}`
    /// (PTX ISA 9.0 §9.7.14.4.4): the inverse of a `.c` load.
    WmmaStore {
        layout: MatLayout,
        shape: WmmaShape,
        space: Space,
        ty: WmmaType,
        addr: Address,
        src: RegVec,
        stride: Option<Operand>,
    },
    /// `wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype d, a, b, c` (`.f16`
    /// multiplicands), `….f32.{bf16,tf32}.{bf16,tf32}.f32` and
    /// `….s32.{s8,u8}.{s8,u8}.s32{.satfinite}` (PTX ISA 9.0 §9.7.14.4.5): a warp-wide
    /// D = A·B + C on `wmma` fragments; `ab` is the multiplicand type.
    WmmaMma {
        alayout: MatLayout,
        blayout: MatLayout,
        shape: WmmaShape,
        ab: WmmaType,
        dty: WmmaType,
        cty: WmmaType,
        satfinite: bool,
        d: RegVec,
        a: RegVec,
        b: RegVec,
        c: RegVec,
    },
    /// `cp.async.{ca,cg}.shared{::cta}.global [dst], [src], size{, src_size}`: a per-thread
    /// asynchronous copy of `size` (4, 8 or 16) bytes from global to shared memory; the bytes
    /// past `src_size` are zero-filled (PTX ISA 9.0 §9.7.9.25.3.1).
    CpAsync {
        cop: CacheOp,
        size: u8,
        dst: Address,
        src: Address,
        src_size: Option<Operand>,
    },
    /// `cp.async.commit_group`: closes the thread's current group of copies.
    CpAsyncCommit,
    /// `cp.async.wait_group n` (`Some(n)`): wait until at most n of the most recent groups are
    /// pending; `cp.async.wait_all` (`None`): commit, then wait for every group.
    CpAsyncWait {
        n: Option<u32>,
    },
    /// `wgmma.mma_async`: a warpgroup's D = A·B (+ D), asynchronous (PTX ISA 9.0 §9.7.15.5.2).
    Wgmma(Box<Wgmma>),
    /// `wgmma.fence.sync.aligned`: orders the warp's register accesses before later wgmmas.
    WgmmaFence,
    /// `wgmma.commit_group.sync.aligned`: closes the warp's open wgmma group.
    WgmmaCommit,
    /// `wgmma.wait_group.sync.aligned n`: wait until at most n of the most recent groups are
    /// pending.
    WgmmaWait {
        n: u32,
    },
    /// `mbarrier.init{.shared{::cta}}.b64 [addr], count` (PTX ISA 9.0 §9.7.13.15.9); the
    /// object's word is `semantics::mbarrier`'s. `space` is Shared or Generic.
    MbarInit {
        space: Space,
        addr: Address,
        count: Operand,
    },
    /// `mbarrier.inval{.shared{::cta}}.b64 [addr]` (§9.7.13.15.10).
    MbarInval {
        space: Space,
        addr: Address,
    },
    /// `mbarrier.arrive{.expect_tx}{.noComplete}` and `mbarrier.arrive_drop{...}`
    /// (§9.7.13.15.13–14): `state` None is the sink `_`; `cluster` marks `.shared::cluster`.
    /// `fence` is the fence its semantics put before it: `.release.cluster` is a GPU-scope
    /// fence (ptxas lowers it to MEMBAR.ALL.GPU before SYNCS.ARRIVE on sm_90); the default
    /// `.release.cta` and `.relaxed` need none.
    MbarArrive {
        space: Space,
        cluster: bool,
        fence: Option<FenceLevel>,
        addr: Address,
        state: Option<RegId>,
        count: Option<Operand>,
        expect_tx: Option<Operand>,
        drop: bool,
        no_complete: bool,
    },
    /// `mbarrier.expect_tx` (`complete` false) or `mbarrier.complete_tx` (§9.7.13.15.11–12).
    MbarTx {
        complete: bool,
        space: Space,
        cluster: bool,
        addr: Address,
        bytes: Operand,
    },
    /// `mbarrier.{test_wait,try_wait}{.parity}.b64 done, [addr], phase{, hint}`
    /// (§9.7.13.15.16): `phase` is the state an arrive returned, or the parity with `.parity`.
    /// `try_wait` (`blocking`) suspends the thread until the phase completes.
    MbarWait {
        blocking: bool,
        parity: bool,
        done: RegId,
        space: Space,
        addr: Address,
        phase: Operand,
        hint: Option<Operand>,
    },
    /// `mbarrier.pending_count.b64 d, state` (§9.7.13.15.17).
    MbarPendingCount {
        d: RegId,
        state: Operand,
    },
    /// `cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]` (§9.7.9.25.3.4): an arrive
    /// when the thread's earlier cp.async copies have landed.
    CpAsyncMbarArrive {
        noinc: bool,
        space: Space,
        addr: Address,
    },
    /// `fence.proxy.async{.global, .shared::cta, .shared::cluster}` (None: every state space)
    /// and `fence.mbarrier_init.release.cluster` (`mbarrier_init`) (§9.7.13.4).
    FenceProxyAsync {
        space: Option<Space>,
        mbarrier_init: bool,
    },
    /// `elect.sync d|p, membermask` (§9.7.13.x): one leader lane of the mask; d (None for `_`)
    /// receives its lane id, p whether this lane is it.
    ElectSync {
        d: Option<RegId>,
        p: RegId,
        mask: Operand,
    },
    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 count` (§9.7.17.x): the warpgroup's per-thread
    /// register budget.
    Setmaxnreg {
        inc: bool,
        count: u32,
    },
    /// `cp.async.bulk.dst.src.completion [dst], [src], size{, [mbar]}{, ctaMask}`
    /// (§9.7.9.25.4.1): a contiguous copy of `size` bytes (a multiple of 16).
    CpAsyncBulk {
        dir: BulkDir,
        dst: Address,
        src: Address,
        size: Operand,
        mbar: Option<Address>,
        multicast: Option<Operand>,
    },
    /// `cp{.reduce}.async.bulk.tensor.Nd...` (§9.7.9.25.5.1–2): a tile of a tensor map between
    /// global memory and shared memory. `tmap` addresses the 128-byte map (generic, param or
    /// global); `coords[..rank]` are the box's start coordinates (innermost first).
    CpAsyncBulkTensor {
        dir: TensorDir,
        rank: u8,
        smem: Address,
        tmap: Address,
        coords: [Operand; 5],
        mbar: Option<Address>,
        multicast: Option<Operand>,
    },
    /// `barrier.cluster.arrive{.release,.relaxed}{.aligned}` (`wait` false) and
    /// `barrier.cluster.wait{.acquire}{.aligned}` (§9.7.13.3): the split barrier of every
    /// thread of the cluster.
    BarrierCluster {
        wait: bool,
    },
    /// `mapa{.shared::cluster}.{u32,u64} d, a, rank` (§9.7.9.x): the address in CTA `rank` of
    /// the cluster that corresponds to shared address `a` (`generic`: generic addresses).
    Mapa {
        generic: bool,
        d: RegId,
        a: Operand,
        rank: Operand,
    },
    /// `cp.async.bulk.commit_group` (§9.7.9.25.4.3): closes the thread's bulk group.
    CpAsyncBulkCommit,
    /// `cp.async.bulk.wait_group{.read} n` (§9.7.9.25.4.4): wait until at most n bulk groups
    /// are pending (`.read`: until their source reads are done).
    CpAsyncBulkWait {
        n: u32,
        read: bool,
    },
    /// `cvt.frnd{.relu}.{f16x2,bf16x2}.f32 d, a, b`: a converted into the upper half, b into
    /// the lower half.
    CvtPack {
        dty: Type,
        mods: Mods,
        d: RegId,
        a: Operand,
        b: Operand,
    },
    Bra {
        target: Pc,
        uni: bool,
    },
    /// `brx.idx index, table`: the table's labels, resolved.
    BrxIdx {
        index: Operand,
        targets: Vec<Pc>,
        uni: bool,
    },
    /// `call (rets), func, (args)`; `targets` lists the possible callees of an indirect call
    /// (`call ..., %r, (args), prototype_or_table`).
    Call {
        callee: Callee,
        rets: Vec<SymbolId>,
        args: Vec<Operand>,
        uni: bool,
    },
    Ret {
        uni: bool,
    },
    Exit,
    Trap,
    /// Formal-model token instructions (Habermaier 2011, §5.4).
    Ssy {
        target: Pc,
    },
    Sync,
    PreBrk {
        target: Pc,
    },
    Brk,
    PreRet {
        target: Pc,
    },
    Nop,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Callee {
    Direct(FuncId),
    Indirect { reg: RegId, targets: Vec<FuncId> },
}

/// `@p` or `@!p`
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    pub reg: RegId,
    pub negated: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub guard: Option<Guard>,
    pub op: Op,
    pub span: Span,
}

/// One register of a function's register table (a `.reg` declaration, expanded).
#[derive(Clone, Debug, PartialEq)]
pub struct RegInfo {
    pub name: String,
    pub ty: Type,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncKind {
    /// `.entry`: a kernel
    Entry,
    /// `.func`: a device function
    Func,
}

/// A `.param` of an entry or function (or a return parameter of a function).
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub symbol: SymbolId,
    pub ty: Type,
    /// Number of elements for array params (`.param .align 8 .b8 p[16]`), else 1.
    pub count: u32,
    pub align: u32,
}

impl Param {
    pub fn size(&self) -> u32 {
        self.ty.size() * self.count
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub kind: FuncKind,
    pub params: Vec<Param>,
    pub rets: Vec<Param>,
    pub regs: Vec<RegInfo>,
    pub body: Vec<Inst>,
    /// Label name → pc, for printing and for tools. Labels of inner `{}` scopes are renamed
    /// `name%N` so names stay unique.
    pub labels: Vec<(String, Pc)>,
    /// `.local` and `.param` variables declared in the body (per-thread, per activation).
    pub frame_vars: Vec<SymbolId>,
    /// Bytes of per-thread frame memory for `frame_vars` (params first, see `Symbol::offset`).
    pub frame_bytes: u32,
    /// The module-scope variables the body names, each once in declaration order, and the
    /// functions it calls or takes the address of: what `Module::shared_layout` walks to find a
    /// kernel's own `.shared` variables.
    pub uses: Vec<SymbolId>,
    pub callees: Vec<FuncId>,
    /// `.maxntid`, `.reqntid` etc. are accepted and recorded here when present.
    pub max_ntid: Option<[u32; 3]>,
    /// `.reqnctapercluster x, y, z` (`__cluster_dims__`): the cluster shape it requires.
    pub req_cluster: Option<[u32; 3]>,
    /// True when the body was written with explicit token instructions, or had them inserted.
    pub has_tokens: bool,
    pub span: Span,
}

impl Function {
    pub fn label_at(&self, pc: Pc) -> Option<&str> {
        self.labels
            .iter()
            .find(|(_, p)| *p == pc)
            .map(|(n, _)| n.as_str())
    }
}

/// Module- or function-scope variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Symbol {
    pub name: String,
    pub space: Space,
    pub ty: Type,
    /// Element count (1 for a scalar; 0 for an unsized `extern .shared` array).
    pub count: u32,
    pub align: u32,
    /// Initial bytes for `.global`/`.const` with initialisers (little-endian), else empty.
    pub init: Vec<u8>,
    pub is_extern: bool,
    /// For frame variables (function `.param`/`.local`): byte offset in the frame.
    /// Module `.shared` variables have none here: each kernel places the ones it names
    /// (`Module::shared_layout`).
    /// For module `.global`/`.const`: offset in the module's segment of that space.
    pub offset: u64,
    /// Function that owns a frame variable or parameter.
    pub owner: Option<FuncId>,
    pub span: Span,
}

impl Symbol {
    pub fn size(&self) -> u64 {
        self.ty.size() as u64 * self.count as u64
    }
}

/// The architecture of a module's `.target` directive (PTX ISA §11.1.2): `sm_90a` is
/// `TargetArch { sm: 90, suffix: Some('a'), compute: false }`. The parser accepts only the
/// architectures the PTX ISA defines, each with a `.version` that knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TargetArch {
    /// The SM number: 52 for `sm_52`, 90 for `sm_90a`, 100 for `compute_100f`.
    pub sm: u32,
    /// `a` (architecture-specific features) or `f` (family-specific features), when named.
    pub suffix: Option<char>,
    /// Written `compute_NN` rather than `sm_NN` (the same feature set).
    pub compute: bool,
}

impl std::fmt::Display for TargetArch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let prefix = if self.compute { "compute" } else { "sm" };
        write!(f, "{prefix}_{}", self.sm)?;
        match self.suffix {
            Some(c) => write!(f, "{c}"),
            None => Ok(()),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub file: String,
    /// The `.version` directive: PTX ISA (major, minor), a version the PTX ISA defines.
    pub version: (u32, u32),
    /// The `.target` architecture as written (`sm_90a`); `arch` is its structured form.
    pub target: String,
    pub arch: TargetArch,
    pub address_size: u32,
    pub symbols: Vec<Symbol>,
    pub functions: Vec<Function>,
    /// Bytes of module-scope `.global` and `.const` data (`.shared`: `Module::shared_layout`).
    pub global_bytes: u64,
    pub const_bytes: u64,
}

impl Module {
    pub fn function(&self, id: FuncId) -> &Function {
        &self.functions[id.0 as usize]
    }
    pub fn symbol(&self, id: SymbolId) -> &Symbol {
        &self.symbols[id.0 as usize]
    }
    pub fn find_function(&self, name: &str) -> Option<FuncId> {
        self.functions
            .iter()
            .position(|f| f.name == name)
            .map(|i| FuncId(i as u32))
    }
    pub fn entries(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(|f| f.kind == FuncKind::Entry)
    }
}
