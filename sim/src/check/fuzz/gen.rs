//! The random kernel generator of `gpusim fuzz`: from a seed, a small structured PTX kernel
//! (an AST, so the shrinker can delete and flatten statements) and its manifest.
//!
//! Every kernel is well formed by construction, and the generator knows what the semantics
//! must say about it (`Kind`):
//! - *uniform context*: every enclosing condition and loop trip count depends only on kernel
//!   parameters, `%ctaid`, `%ntid` or counters of such loops, and no enclosing loop may be left
//!   early by only some threads. Barriers (`bar.sync 0`) go only there, so they are reached by
//!   all threads of a CTA the same number of times;
//! - shared memory: each thread writes its own slot, a barrier, reads a neighbour's slot, a
//!   barrier (the second one keeps the next write out of the reads' barrier interval). Outside
//!   uniform context a thread touches only its own slot;
//! - global memory: `in` is only read, `out` holds each thread's own slots;
//! - the two planted bugs are placed at the top level of the body, which every thread reaches:
//!   a neighbour exchange without its first barrier (`Kind::Race`), or a barrier under a
//!   condition on `%tid.x` that splits every CTA (`Kind::DivergentBarrier`).
//!
//! Loops run at most four times and nest at most three deep, so a case takes milliseconds.
//! Only instructions the reference models run (`models::ptx_exec`) are emitted.

use std::fmt::Write;

/// SplitMix64: a small, well-distributed generator whose whole state is the seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        crate::rng::splitmix64(&mut self.0)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u32) -> u32 {
        (self.next() % n as u64) as u32
    }
    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u32) -> bool {
        self.below(100) < pct
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u32) as usize]
    }
}

/// What the generator planted, and so what the semantics must find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Race-free and divergence-free.
    Clean,
    /// One data race on shared memory, nothing else wrong.
    Race,
    /// One barrier that splits every CTA, nothing else wrong.
    DivergentBarrier,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Clean => "clean",
            Kind::Race => "race",
            Kind::DivergentBarrier => "divergent-barrier",
        }
    }
}

/// Data variables (`%v0..`); the first `OBSERVED` are stored to `out` at the end.
const VARS: u8 = 6;
const OBSERVED: u8 = 4;
/// Per-thread `out` slots: the body stores to `0..BODY_SLOTS`, the epilogue to the rest.
const BODY_SLOTS: u8 = 4;
pub const SLOTS: u32 = (BODY_SLOTS + OBSERVED) as u32;
/// Words of the read-only `in` buffer (a power of two: indices are masked).
pub const IN_LEN: u32 = 64;
/// The reconvergence policies a case may run under.
pub const POLICIES: [&str; 5] = [
    "token-stack",
    "pdom-stack",
    "convergence-barrier",
    "multi-path",
    "thread-frontiers",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opnd {
    Var(u8),
    Tid,
    /// 0: parameter `a`, 1: parameter `b`, 2: `%ctaid.x`, 3: `%ntid.x`.
    Uni(u8),
    /// The iteration counter of loop `id` (only inside that loop).
    Counter(u16),
    Imm(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cond {
    pub cmp: Cmp,
    pub signed: bool,
    pub a: Opnd,
    pub b: Opnd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Xor,
    And,
    Or,
    Shl,
    Shr,
    Min,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expr {
    Bin {
        op: BinOp,
        signed: bool,
        a: Opnd,
        b: Opnd,
    },
    Select {
        cond: Cond,
        a: Opnd,
        b: Opnd,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitKind {
    Break,
    Continue,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// `dst = expr`, under a predicate guard when `guard` is set.
    Assign {
        guard: Option<(Cond, bool)>,
        dst: u8,
        expr: Expr,
    },
    /// `out[me][slot] = src`.
    Store {
        guard: Option<(Cond, bool)>,
        slot: u8,
        src: u8,
    },
    /// `dst = in[idx & (IN_LEN - 1)]`.
    LoadIn {
        dst: u8,
        idx: u8,
    },
    /// `dst = out[me][slot]`.
    LoadOwn {
        dst: u8,
        slot: u8,
    },
    /// `sh[tid] = src; [bar;] dst = sh[(tid + dist) % ntid]; bar;` — without the first barrier
    /// it races (the planted race).
    Exchange {
        src: u8,
        dst: u8,
        dist: u32,
        first_barrier: bool,
    },
    /// `sh[tid] = src; dst = sh[tid];`
    SharedOwn {
        src: u8,
        dst: u8,
    },
    Barrier,
    If {
        cond: Cond,
        /// Branch on the negated predicate (`@!%p`) rather than a negated comparison.
        negated_guard: bool,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
        /// The planted divergent barrier's `if` (kept by the shrinker).
        bug: bool,
    },
    /// `for (c = 0; c < (trip & mask) + 1; c++) body`, top- or bottom-tested.
    Loop {
        id: u16,
        bottom_tested: bool,
        trip: Opnd,
        mask: u32,
        body: Vec<Stmt>,
    },
    /// `if (cond) break/continue` of loop `target`.
    Exit {
        kind: ExitKind,
        target: u16,
        cond: Cond,
    },
}

/// One generated case: the kernel body and how it is launched.
#[derive(Clone, Debug)]
pub struct Case {
    pub seed: u64,
    pub kind: Kind,
    pub policy: &'static str,
    pub warp_size: u32,
    pub grid: u32,
    pub block: u32,
    pub a: u32,
    pub b: u32,
    pub body: Vec<Stmt>,
}

#[derive(Clone, Copy)]
struct LoopCtx {
    id: u16,
    /// Every thread of the CTA runs every iteration together: the counter is uniform.
    uniform_body: bool,
    /// Only some threads may leave it early (a thread-dependent break or continue).
    nonuniform_exits: bool,
}

#[derive(Clone)]
struct Ctx {
    uniform: bool,
    loops: Vec<LoopCtx>,
    depth: u32,
}

struct Gen {
    rng: Rng,
    budget: u32,
    next_loop: u16,
}

/// Generate case `seed`.
pub fn generate(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    // Most cases are clean: those are the ones whose final memory is compared.
    let kind = match rng.below(10) {
        0 | 1 => Kind::Race,
        2 | 3 => Kind::DivergentBarrier,
        _ => Kind::Clean,
    };
    let policy = rng.pick(&POLICIES);
    let warp_size = rng.pick(&[32, 32, 32, 16, 8, 4]);
    let grid = rng.pick(&[1, 2]);
    let block = rng.pick(&[32, 48, 64, 96, 128]);
    let (a, b) = (rng.below(16), rng.below(16));
    let budget = 10 + rng.below(40);
    let mut g = Gen {
        rng,
        budget,
        next_loop: 0,
    };
    let top = Ctx {
        uniform: true,
        loops: Vec::new(),
        depth: 0,
    };
    let want = 3 + g.rng.below(8);
    let mut body = g.block(&top, want);
    let bug = match kind {
        Kind::Clean => None,
        Kind::Race => Some(Stmt::Exchange {
            src: g.rng.below(VARS as u32) as u8,
            dst: g.rng.below(VARS as u32) as u8,
            dist: 1 + g.rng.below(block - 1),
            first_barrier: false,
        }),
        Kind::DivergentBarrier => {
            let mut then = Vec::new();
            if g.rng.chance(50) {
                then.push(Stmt::SharedOwn {
                    src: g.rng.below(VARS as u32) as u8,
                    dst: g.rng.below(VARS as u32) as u8,
                });
            }
            then.push(Stmt::Barrier);
            Some(Stmt::If {
                cond: Cond {
                    cmp: g.rng.pick(&[Cmp::Lt, Cmp::Ge]),
                    signed: false,
                    a: Opnd::Tid,
                    // Splits every CTA: 1 <= K < ntid.
                    b: Opnd::Imm(1 + g.rng.below(block - 1)),
                },
                negated_guard: g.rng.chance(50),
                then,
                els: Vec::new(),
                bug: true,
            })
        }
    };
    if let Some(s) = bug {
        let at = g.rng.below(body.len() as u32 + 1) as usize;
        body.insert(at, s);
    }
    Case {
        seed,
        kind,
        policy,
        warp_size,
        grid,
        block,
        a,
        b,
        body,
    }
}

impl Gen {
    fn var(&mut self) -> u8 {
        self.rng.below(VARS as u32) as u8
    }

    /// A value operand for data: any register or a small immediate.
    fn operand(&mut self, ctx: &Ctx, imm: bool) -> Opnd {
        match self.rng.below(if imm { 10 } else { 8 }) {
            0..=3 => Opnd::Var(self.var()),
            4 => Opnd::Tid,
            5 => Opnd::Uni(self.rng.below(4) as u8),
            6 | 7 => match ctx.loops.last() {
                Some(l) if self.rng.chance(60) => Opnd::Counter(l.id),
                _ => Opnd::Var(self.var()),
            },
            _ => Opnd::Imm(self.rng.below(40)),
        }
    }

    /// An operand equal in every thread of the CTA (in uniform context).
    fn uniform_operand(&mut self, ctx: &Ctx) -> Opnd {
        let counters: Vec<u16> = ctx
            .loops
            .iter()
            .filter(|l| l.uniform_body)
            .map(|l| l.id)
            .collect();
        if !counters.is_empty() && self.rng.chance(40) {
            Opnd::Counter(self.rng.pick(&counters))
        } else {
            Opnd::Uni(self.rng.below(4) as u8)
        }
    }

    fn cmp(&mut self) -> Cmp {
        self.rng
            .pick(&[Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne])
    }

    fn uniform_cond(&mut self, ctx: &Ctx) -> Cond {
        let a = self.uniform_operand(ctx);
        let b = if self.rng.chance(70) {
            Opnd::Imm(self.rng.below(8))
        } else {
            self.uniform_operand(ctx)
        };
        Cond {
            cmp: self.cmp(),
            signed: self.rng.chance(30),
            a,
            b,
        }
    }

    fn thread_cond(&mut self, ctx: &Ctx) -> Cond {
        let a = if self.rng.chance(50) {
            Opnd::Tid
        } else {
            Opnd::Var(self.var())
        };
        let b = if self.rng.chance(60) {
            Opnd::Imm(self.rng.below(64))
        } else {
            self.operand(ctx, false)
        };
        Cond {
            cmp: self.cmp(),
            signed: self.rng.chance(30),
            a,
            b,
        }
    }

    fn any_cond(&mut self, ctx: &Ctx) -> Cond {
        if self.rng.chance(30) {
            self.uniform_cond(ctx)
        } else {
            self.thread_cond(ctx)
        }
    }

    fn expr(&mut self, ctx: &Ctx) -> Expr {
        if self.rng.chance(15) {
            let cond = self.any_cond(ctx);
            return Expr::Select {
                cond,
                a: self.operand(ctx, false),
                b: self.operand(ctx, true),
            };
        }
        let op = self.rng.pick(&[
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::Xor,
            BinOp::And,
            BinOp::Or,
            BinOp::Shl,
            BinOp::Shr,
            BinOp::Min,
            BinOp::Max,
        ]);
        let b = match op {
            BinOp::Shl | BinOp::Shr if self.rng.chance(70) => Opnd::Imm(self.rng.below(32)),
            _ => self.operand(ctx, true),
        };
        Expr::Bin {
            op,
            signed: self.rng.chance(30),
            a: self.operand(ctx, false),
            b,
        }
    }

    fn guard(&mut self, ctx: &Ctx) -> Option<(Cond, bool)> {
        if self.rng.chance(15) {
            let c = self.any_cond(ctx);
            Some((c, self.rng.chance(50)))
        } else {
            None
        }
    }

    fn block(&mut self, ctx: &Ctx, want: u32) -> Vec<Stmt> {
        let mut out = Vec::new();
        for _ in 0..want {
            if self.budget == 0 {
                break;
            }
            self.budget -= 1;
            if let Some(s) = self.stmt(ctx) {
                out.push(s);
            }
        }
        out
    }

    fn stmt(&mut self, ctx: &Ctx) -> Option<Stmt> {
        let nest = ctx.depth < 3;
        Some(match self.rng.below(100) {
            0..=29 => Stmt::Assign {
                guard: self.guard(ctx),
                dst: self.var(),
                expr: self.expr(ctx),
            },
            30..=39 => Stmt::Store {
                guard: self.guard(ctx),
                slot: self.rng.below(BODY_SLOTS as u32) as u8,
                src: self.var(),
            },
            40..=46 => Stmt::LoadIn {
                dst: self.var(),
                idx: self.var(),
            },
            47..=49 => Stmt::LoadOwn {
                dst: self.var(),
                slot: self.rng.below(BODY_SLOTS as u32) as u8,
            },
            50..=59 if ctx.uniform => Stmt::Exchange {
                src: self.var(),
                dst: self.var(),
                dist: 1 + self.rng.below(127),
                first_barrier: true,
            },
            50..=59 => Stmt::SharedOwn {
                src: self.var(),
                dst: self.var(),
            },
            60..=62 if ctx.uniform => Stmt::Barrier,
            63..=77 if nest => self.if_stmt(ctx),
            78..=89 if nest => self.loop_stmt(ctx),
            90..=99 if !ctx.loops.is_empty() => return self.exit_stmt(ctx),
            _ => Stmt::Assign {
                guard: None,
                dst: self.var(),
                expr: self.expr(ctx),
            },
        })
    }

    fn if_stmt(&mut self, ctx: &Ctx) -> Stmt {
        let uniform_cond = self.rng.chance(40);
        let cond = if uniform_cond {
            self.uniform_cond(ctx)
        } else {
            self.thread_cond(ctx)
        };
        let inner = Ctx {
            uniform: ctx.uniform && uniform_cond,
            loops: ctx.loops.clone(),
            depth: ctx.depth + 1,
        };
        let want = 1 + self.rng.below(3);
        let then = self.block(&inner, want);
        let els = if self.rng.chance(40) {
            let want = 1 + self.rng.below(3);
            self.block(&inner, want)
        } else {
            Vec::new()
        };
        Stmt::If {
            cond,
            negated_guard: self.rng.chance(50),
            then,
            els,
            bug: false,
        }
    }

    fn loop_stmt(&mut self, ctx: &Ctx) -> Stmt {
        let id = self.next_loop;
        self.next_loop += 1;
        let uniform_trip = self.rng.chance(50);
        let trip = if uniform_trip {
            self.uniform_operand(ctx)
        } else if self.rng.chance(50) {
            Opnd::Tid
        } else {
            Opnd::Var(self.var())
        };
        // A loop some threads may leave early has a non-uniform body from its first iteration
        // on (the threads that stay start the next iteration without the others).
        let nonuniform_exits = !(ctx.uniform && uniform_trip) || self.rng.chance(30);
        let uniform_body = ctx.uniform && uniform_trip && !nonuniform_exits;
        let mut loops = ctx.loops.clone();
        loops.push(LoopCtx {
            id,
            uniform_body,
            nonuniform_exits,
        });
        let inner = Ctx {
            uniform: uniform_body,
            loops,
            depth: ctx.depth + 1,
        };
        let want = 1 + self.rng.below(4);
        let body = self.block(&inner, want);
        Stmt::Loop {
            id,
            bottom_tested: self.rng.chance(50),
            trip,
            mask: self.rng.pick(&[1, 3]),
            body,
        }
    }

    fn exit_stmt(&mut self, ctx: &Ctx) -> Option<Stmt> {
        let n = ctx.loops.len();
        // Mostly the innermost loop; sometimes an outer one (a multi-level exit).
        let k = if n > 1 && self.rng.chance(20) {
            self.rng.below(n as u32) as usize
        } else {
            n - 1
        };
        let target = ctx.loops[k].id;
        // Only threads that leave together keep the loops they leave uniform.
        let thread_ok = ctx.loops[k..].iter().all(|l| l.nonuniform_exits);
        let cond = if thread_ok && (!ctx.uniform || self.rng.chance(70)) {
            self.thread_cond(ctx)
        } else if ctx.uniform {
            self.uniform_cond(ctx)
        } else {
            return None;
        };
        Some(Stmt::Exit {
            kind: if self.rng.chance(50) {
                ExitKind::Break
            } else {
                ExitKind::Continue
            },
            target,
            cond,
        })
    }
}

/// Whether the planted bug is still in `body` (the shrinker keeps it).
pub fn has_bug(body: &[Stmt], kind: Kind) -> bool {
    body.iter().any(|s| match (kind, s) {
        (
            Kind::Race,
            Stmt::Exchange {
                first_barrier: false,
                ..
            },
        ) => true,
        (
            Kind::DivergentBarrier,
            Stmt::If {
                bug: true, then, ..
            },
        ) => then.contains(&Stmt::Barrier),
        _ => false,
    }) || kind == Kind::Clean
}

/// Every body one step smaller than `body`: a statement deleted, an `if` replaced by one of
/// its branches or without its `else`, or the same inside a compound statement.
pub fn shrink_steps(body: &[Stmt]) -> Vec<Vec<Stmt>> {
    let mut out = Vec::new();
    for (i, s) in body.iter().enumerate() {
        let splice = |with: &[Stmt]| {
            let mut v = body[..i].to_vec();
            v.extend_from_slice(with);
            v.extend_from_slice(&body[i + 1..]);
            v
        };
        out.push(splice(&[]));
        match s {
            Stmt::If {
                cond,
                negated_guard,
                then,
                els,
                bug,
            } => {
                out.push(splice(then));
                if !els.is_empty() {
                    out.push(splice(els));
                }
                let rebuild = |then: Vec<Stmt>, els: Vec<Stmt>| {
                    splice(&[Stmt::If {
                        cond: *cond,
                        negated_guard: *negated_guard,
                        then,
                        els,
                        bug: *bug,
                    }])
                };
                if !els.is_empty() {
                    out.push(rebuild(then.clone(), Vec::new()));
                }
                for t in shrink_steps(then) {
                    out.push(rebuild(t, els.clone()));
                }
                for e in shrink_steps(els) {
                    out.push(rebuild(then.clone(), e));
                }
            }
            Stmt::Loop {
                id,
                bottom_tested,
                trip,
                mask,
                body: inner,
            } => {
                for b in shrink_steps(inner) {
                    out.push(splice(&[Stmt::Loop {
                        id: *id,
                        bottom_tested: *bottom_tested,
                        trip: *trip,
                        mask: *mask,
                        body: b,
                    }]));
                }
            }
            _ => {}
        }
    }
    out
}

/// Statements in `body`, compound ones counted with their contents.
pub fn size(body: &[Stmt]) -> usize {
    body.iter()
        .map(|s| match s {
            Stmt::If { then, els, .. } => 1 + size(then) + size(els),
            Stmt::Loop { body, .. } => 1 + size(body),
            _ => 1,
        })
        .sum()
}

struct Render {
    out: String,
    temps: u32,
    preds: u32,
    addrs: u32,
    labels: u32,
    loops: u16,
}

/// The kernel's PTX text.
pub fn ptx(case: &Case) -> String {
    let mut r = Render {
        out: String::new(),
        temps: 0,
        preds: 0,
        addrs: 0,
        labels: 0,
        loops: 0,
    };
    r.stmts(&case.body);
    // Make every data variable observable.
    for v in 0..OBSERVED {
        r.line(format!(
            "st.global.u32 [%rd2+{}], %v{v};",
            (BODY_SLOTS + v) as u32 * 4
        ));
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// Generated by `gpusim fuzz`, case seed {} ({}).",
        case.seed,
        case.kind.name()
    );
    s.push_str(".version 7.0\n.target sm_52\n.address_size 64\n\n");
    s.push_str(".visible .entry fuzz(\n    .param .u64 fuzz_param_0,\n    .param .u64 fuzz_param_1,\n    .param .u32 fuzz_param_2,\n    .param .u32 fuzz_param_3\n)\n{\n");
    let _ = writeln!(s, "    .shared .align 4 .b8 sh[{}];", 128 * 4);
    let _ = writeln!(s, "    .reg .pred %p<{}>;", r.preds.max(1));
    let _ = writeln!(s, "    .reg .b32 %v<{VARS}>;");
    s.push_str("    .reg .b32 %s<2>;\n    .reg .b32 %u<4>;\n");
    let _ = writeln!(s, "    .reg .b32 %c<{}>;", r.loops.max(1));
    let _ = writeln!(s, "    .reg .b32 %n<{}>;", r.loops.max(1));
    let _ = writeln!(s, "    .reg .b32 %t<{}>;", r.temps.max(1));
    let _ = writeln!(s, "    .reg .b64 %rd<{}>;\n", 6 + r.addrs);
    // %rd0 in, %rd1 out, %rd2 this thread's out slots, %rd3 sh, %rd4 this thread's sh slot,
    // %rd5 the first load's address; statements' addresses follow.
    let prologue = [
        "ld.param.u64 %rd0, [fuzz_param_0];".to_string(),
        "ld.param.u64 %rd1, [fuzz_param_1];".into(),
        "ld.param.u32 %u0, [fuzz_param_2];".into(),
        "ld.param.u32 %u1, [fuzz_param_3];".into(),
        "cvta.to.global.u64 %rd0, %rd0;".into(),
        "cvta.to.global.u64 %rd1, %rd1;".into(),
        "mov.u32 %s0, %tid.x;".into(),
        "mov.u32 %u2, %ctaid.x;".into(),
        "mov.u32 %u3, %ntid.x;".into(),
        "mad.lo.s32 %s1, %u2, %u3, %s0;".into(),
        format!("mul.wide.u32 %rd2, %s1, {};", SLOTS * 4),
        "add.s64 %rd2, %rd1, %rd2;".into(),
        "mov.u64 %rd3, sh;".into(),
        "mul.wide.u32 %rd4, %s0, 4;".into(),
        "add.s64 %rd4, %rd3, %rd4;".into(),
        // Every data variable starts defined, some from memory, some per thread.
        "mov.u32 %v0, %s0;".into(),
        "mov.u32 %v1, %s1;".into(),
        format!("and.b32 %v2, %s1, {};", IN_LEN - 1),
        "mul.wide.u32 %rd5, %v2, 4;".into(),
        "add.s64 %rd5, %rd0, %rd5;".into(),
        "ld.global.u32 %v2, [%rd5];".into(),
        "xor.b32 %v3, %s0, %u0;".into(),
        "mad.lo.s32 %v4, %s0, %u1, 7;".into(),
        "sub.s32 %v5, %u2, %s0;".into(),
    ];
    for l in prologue {
        let _ = writeln!(s, "    {l}");
    }
    s.push_str(&r.out);
    s.push_str("    ret;\n}\n");
    s
}

fn opnd(o: Opnd) -> String {
    match o {
        Opnd::Var(v) => format!("%v{v}"),
        Opnd::Tid => "%s0".into(),
        Opnd::Uni(u) => format!("%u{u}"),
        Opnd::Counter(c) => format!("%c{c}"),
        Opnd::Imm(x) => x.to_string(),
    }
}

impl Render {
    fn line(&mut self, l: String) {
        let _ = writeln!(self.out, "    {l}");
    }
    fn label(&mut self, l: &str) {
        let _ = writeln!(self.out, "{l}:");
    }
    fn temp(&mut self) -> String {
        self.temps += 1;
        format!("%t{}", self.temps - 1)
    }
    fn addr(&mut self) -> String {
        self.addrs += 1;
        format!("%rd{}", 5 + self.addrs)
    }
    fn fresh_label(&mut self, what: &str) -> String {
        self.labels += 1;
        format!("$L_{what}_{}", self.labels)
    }

    /// `setp` into a fresh predicate; returns it.
    fn cond(&mut self, c: &Cond) -> String {
        self.preds += 1;
        let p = format!("%p{}", self.preds - 1);
        let cmp = match c.cmp {
            Cmp::Lt => "lt",
            Cmp::Le => "le",
            Cmp::Gt => "gt",
            Cmp::Ge => "ge",
            Cmp::Eq => "eq",
            Cmp::Ne => "ne",
        };
        let ty = if c.signed { "s32" } else { "u32" };
        let a = self.reg(c.a);
        self.line(format!("setp.{cmp}.{ty} {p}, {a}, {};", opnd(c.b)));
        p
    }

    /// `o` as a register (an immediate is moved into a temporary first).
    fn reg(&mut self, o: Opnd) -> String {
        match o {
            Opnd::Imm(_) => {
                let t = self.temp();
                self.line(format!("mov.u32 {t}, {};", opnd(o)));
                t
            }
            _ => opnd(o),
        }
    }

    fn guard(&mut self, g: &Option<(Cond, bool)>) -> String {
        match g {
            Some((c, neg)) => {
                let p = self.cond(c);
                format!("@{}{p} ", if *neg { "!" } else { "" })
            }
            None => String::new(),
        }
    }

    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign { guard, dst, expr } => {
                let (text, g) = match expr {
                    Expr::Bin { op, signed, a, b } => {
                        let a = self.reg(*a);
                        let (s, u) = (if *signed { "s32" } else { "u32" }, "b32");
                        let name = match op {
                            BinOp::Add => format!("add.{s}"),
                            BinOp::Sub => format!("sub.{s}"),
                            BinOp::Mul => format!("mul.lo.{s}"),
                            BinOp::Xor => format!("xor.{u}"),
                            BinOp::And => format!("and.{u}"),
                            BinOp::Or => format!("or.{u}"),
                            BinOp::Shl => format!("shl.{u}"),
                            BinOp::Shr => format!("shr.{s}"),
                            BinOp::Min => format!("min.{s}"),
                            BinOp::Max => format!("max.{s}"),
                        };
                        let g = self.guard(guard);
                        (format!("{name} %v{dst}, {a}, {};", opnd(*b)), g)
                    }
                    Expr::Select { cond, a, b } => {
                        let a = self.reg(*a);
                        let p = self.cond(cond);
                        let g = self.guard(guard);
                        (format!("selp.b32 %v{dst}, {a}, {}, {p};", opnd(*b)), g)
                    }
                };
                self.line(format!("{g}{text}"));
            }
            Stmt::Store { guard, slot, src } => {
                let g = self.guard(guard);
                self.line(format!(
                    "{g}st.global.u32 [%rd2+{}], %v{src};",
                    *slot as u32 * 4
                ));
            }
            Stmt::LoadIn { dst, idx } => {
                let t = self.temp();
                let a = self.addr();
                self.line(format!("and.b32 {t}, %v{idx}, {};", IN_LEN - 1));
                self.line(format!("mul.wide.u32 {a}, {t}, 4;"));
                self.line(format!("add.s64 {a}, %rd0, {a};"));
                self.line(format!("ld.global.u32 %v{dst}, [{a}];"));
            }
            Stmt::LoadOwn { dst, slot } => {
                self.line(format!(
                    "ld.global.u32 %v{dst}, [%rd2+{}];",
                    *slot as u32 * 4
                ));
            }
            Stmt::Exchange {
                src,
                dst,
                dist,
                first_barrier,
            } => {
                self.line(format!("st.shared.u32 [%rd4], %v{src};"));
                if *first_barrier {
                    self.line("bar.sync 0;".into());
                }
                let t = self.temp();
                let a = self.addr();
                self.line(format!("add.s32 {t}, %s0, {dist};"));
                self.line(format!("rem.u32 {t}, {t}, %u3;"));
                self.line(format!("mul.wide.u32 {a}, {t}, 4;"));
                self.line(format!("add.s64 {a}, %rd3, {a};"));
                self.line(format!("ld.shared.u32 %v{dst}, [{a}];"));
                self.line("bar.sync 0;".into());
            }
            Stmt::SharedOwn { src, dst } => {
                self.line(format!("st.shared.u32 [%rd4], %v{src};"));
                self.line(format!("ld.shared.u32 %v{dst}, [%rd4];"));
            }
            Stmt::Barrier => self.line("bar.sync 0;".into()),
            Stmt::If {
                cond,
                negated_guard,
                then,
                els,
                ..
            } => {
                // Branch around `then` when the condition is false: either on the negated
                // predicate or on the complementary comparison.
                let skip = if *negated_guard {
                    let p = self.cond(cond);
                    format!("@!{p}")
                } else {
                    let p = self.cond(&negate(cond));
                    format!("@{p}")
                };
                let l_else = self.fresh_label("else");
                let l_end = self.fresh_label("endif");
                let first = if els.is_empty() { &l_end } else { &l_else };
                self.line(format!("{skip} bra {first};"));
                self.stmts(then);
                if !els.is_empty() {
                    self.line(format!("bra {l_end};"));
                    self.label(&l_else);
                    self.stmts(els);
                }
                self.label(&l_end);
            }
            Stmt::Loop {
                id,
                bottom_tested,
                trip,
                mask,
                body,
            } => {
                self.loops = self.loops.max(id + 1);
                let (c, n) = (format!("%c{id}"), format!("%n{id}"));
                let t = self.reg(*trip);
                self.line(format!("and.b32 {n}, {t}, {mask};"));
                self.line(format!("add.s32 {n}, {n}, 1;"));
                self.line(format!("mov.u32 {c}, 0;"));
                let (head, cont, exit) = (
                    format!("$L_head_{id}"),
                    format!("$L_cont_{id}"),
                    format!("$L_exit_{id}"),
                );
                self.label(&head);
                if !bottom_tested {
                    self.preds += 1;
                    let p = format!("%p{}", self.preds - 1);
                    self.line(format!("setp.ge.u32 {p}, {c}, {n};"));
                    self.line(format!("@{p} bra {exit};"));
                }
                self.stmts(body);
                self.label(&cont);
                self.line(format!("add.s32 {c}, {c}, 1;"));
                if *bottom_tested {
                    self.preds += 1;
                    let p = format!("%p{}", self.preds - 1);
                    self.line(format!("setp.lt.u32 {p}, {c}, {n};"));
                    self.line(format!("@{p} bra {head};"));
                } else {
                    self.line(format!("bra {head};"));
                }
                self.label(&exit);
            }
            Stmt::Exit { kind, target, cond } => {
                let p = self.cond(cond);
                let to = match kind {
                    ExitKind::Break => format!("$L_exit_{target}"),
                    ExitKind::Continue => format!("$L_cont_{target}"),
                };
                self.line(format!("@{p} bra {to};"));
            }
        }
    }
}

fn negate(c: &Cond) -> Cond {
    let cmp = match c.cmp {
        Cmp::Lt => Cmp::Ge,
        Cmp::Le => Cmp::Gt,
        Cmp::Gt => Cmp::Le,
        Cmp::Ge => Cmp::Lt,
        Cmp::Eq => Cmp::Ne,
        Cmp::Ne => Cmp::Eq,
    };
    Cond { cmp, ..*c }
}

/// The manifest: `in` random, `out` zeros, one launch, no value checks. `header` lines become
/// comments at the top (what the case is, how to reproduce it, what disagreed).
pub fn manifest(case: &Case, header: &[String]) -> String {
    let mut s = String::new();
    for h in header {
        for l in h.lines() {
            let _ = writeln!(s, "# {l}");
        }
    }
    let _ = writeln!(
        s,
        "description: \"gpusim fuzz case seed {} ({}, policy {}, warp size {})\"",
        case.seed,
        case.kind.name(),
        case.policy,
        case.warp_size
    );
    s.push_str("kernel: kernel.ptx\n");
    let _ = writeln!(s, "set:\n  sm.reconvergence: {}", case.policy);
    if case.warp_size != 32 {
        let _ = writeln!(s, "  sm.warp_size: {}", case.warp_size);
    }
    s.push_str("launches:\n  - entry: fuzz\n");
    let _ = writeln!(s, "    grid: [{}, 1, 1]", case.grid);
    let _ = writeln!(s, "    block: [{}, 1, 1]", case.block);
    let _ = writeln!(s, "    args: [in, out, {}, {}]", case.a, case.b);
    s.push_str("buffers:\n");
    let _ = writeln!(
        s,
        "  in: {{ dtype: u32, shape: [{IN_LEN}], init: {{ random: {{ seed: {}, low: 0, high: 1000 }} }} }}",
        case.seed % 1_000_000
    );
    let _ = writeln!(
        s,
        "  out: {{ dtype: u32, shape: [{}], init: zeros }}",
        case.grid * case.block * SLOTS
    );
    s
}
