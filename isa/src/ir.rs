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

/// Up to four registers, for vector loads and stores (`.v2`, `.v4`) and `mov` (un)packing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegVec {
    pub regs: [RegId; 4],
    pub len: u8,
}

impl RegVec {
    pub fn one(r: RegId) -> RegVec {
        RegVec {
            regs: [r; 4],
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
    /// `.maxntid`, `.reqntid` etc. are accepted and recorded here when present.
    pub max_ntid: Option<[u32; 3]>,
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
    /// For module `.shared`: offset in the CTA's static shared segment.
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

#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub file: String,
    pub version: (u32, u32),
    pub target: String,
    pub address_size: u32,
    pub symbols: Vec<Symbol>,
    pub functions: Vec<Function>,
    /// Bytes of module-scope static `.shared`, `.global` and `.const` data.
    pub shared_bytes: u64,
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
