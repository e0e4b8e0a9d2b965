//! Control-flow analysis and token insertion: golden CFG and tokenised listings, and a reference
//! executor of the formal model's warp branching rules (Habermaier §5.4) that checks, on every
//! test CFG and on random reducible CFGs, that each lane executes exactly the instructions it
//! executes alone, that every `sync`/`brk`/`call` is stack-consistent, and that the stack is
//! empty at the end.

use gpusim_isa::analysis::{describe_body, describe_cfg, insert_tokens, validate_tokens, DomTree};
use gpusim_isa::*;

mod warp {
    //! A single warp (up to 8 lanes) under the token-stack rules, and one lane run alone.

    use gpusim_isa::*;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Why {
        Enabled,
        Break,
        Return,
        Exit,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Kind {
        Sync,
        Diverge,
        Call,
        Break,
    }

    #[derive(Clone, Copy, Debug)]
    struct Tok {
        kind: Kind,
        mask: u32,
        pc: Pc,
    }

    /// What one lane did: the lines of the data instructions it executed (guard true), and its
    /// final registers.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Trace {
        pub lines: Vec<u32>,
        pub regs: Vec<u64>,
    }

    const STEP_LIMIT: usize = 200_000;

    fn val(f: &Function, regs: &[u64], lane: usize, o: &Operand) -> u64 {
        match o {
            Operand::Reg(r) => regs[r.0 as usize],
            Operand::NotReg(r) => (regs[r.0 as usize] == 0) as u64,
            Operand::Imm(v) => *v,
            Operand::Special(SpecialReg::Tid(Dim::X) | SpecialReg::LaneId) => lane as u64,
            Operand::Special(_) => 0,
            Operand::Symbol(_) | Operand::Func(_) => {
                panic!("{}: no addresses in the test executor", f.name)
            }
        }
    }

    fn guard(regs: &[u64], inst: &Inst) -> bool {
        inst.guard
            .is_none_or(|g| (regs[g.reg.0 as usize] != 0) != g.negated)
    }

    fn compare(cmp: Cmp, ty: Type, a: u64, b: u64) -> bool {
        let (sa, sb) = (a as u32 as i32, b as u32 as i32);
        let signed = ty.is_signed();
        match cmp {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt if signed => sa < sb,
            Cmp::Le if signed => sa <= sb,
            Cmp::Gt if signed => sa > sb,
            Cmp::Ge if signed => sa >= sb,
            Cmp::Lt | Cmp::Lo => a < b,
            Cmp::Le | Cmp::Ls => a <= b,
            Cmp::Gt | Cmp::Hi => a > b,
            Cmp::Ge | Cmp::Hs => a >= b,
            _ => panic!("comparison {cmp:?} not supported by the test executor"),
        }
    }

    fn arith(op: ArithOp, a: u64, b: u64, c: u64) -> u64 {
        let (a, b, c) = (a as u32, b as u32, c as u32);
        (match op {
            ArithOp::Add => a.wrapping_add(b),
            ArithOp::Sub => a.wrapping_sub(b),
            ArithOp::Mul => a.wrapping_mul(b),
            ArithOp::Mad => a.wrapping_mul(b).wrapping_add(c),
            ArithOp::Rem => a % b,
            ArithOp::Div => a / b,
            ArithOp::And => a & b,
            ArithOp::Or => a | b,
            ArithOp::Xor => a ^ b,
            ArithOp::Shr => a >> (b & 31),
            ArithOp::Shl => a << (b & 31),
            ArithOp::Min => a.min(b),
            ArithOp::Max => a.max(b),
            _ => panic!("{op:?} not supported by the test executor"),
        }) as u64
    }

    /// Execute a data instruction for one lane; whether it counts as an executed instruction
    /// (writes to the hidden `%__` registers of token insertion do not).
    fn data(f: &Function, regs: &mut [u64], lane: usize, inst: &Inst) -> bool {
        let v = |regs: &[u64], o: &Operand| val(f, regs, lane, o);
        let hidden = |r: &RegId| f.regs[r.0 as usize].name.starts_with("%__");
        match &inst.op {
            Op::Mov { ty, d, a } => {
                regs[d.0 as usize] = v(regs, a) & ty.mask();
                !hidden(d)
            }
            Op::Arith {
                op, ty, d, a, b, c, ..
            } => {
                regs[d.0 as usize] = arith(*op, v(regs, a), v(regs, b), v(regs, c)) & ty.mask();
                true
            }
            Op::Setp {
                cmp,
                ty,
                p,
                q,
                a,
                b,
                comb,
                ..
            } => {
                let mut r = compare(*cmp, *ty, v(regs, a), v(regs, b));
                if let Some((bop, c)) = comb {
                    let c = v(regs, c) != 0;
                    r = match bop {
                        BoolOp::And => r && c,
                        BoolOp::Or => r || c,
                        BoolOp::Xor => r ^ c,
                    };
                }
                regs[p.0 as usize] = r as u64;
                if let Some(q) = q {
                    regs[q.0 as usize] = !r as u64;
                }
                true
            }
            Op::St { .. } | Op::Call { .. } | Op::Nop | Op::Bar { .. } | Op::Fence { .. } => true,
            other => panic!("{other:?} not supported by the test executor"),
        }
    }

    /// One lane alone on the input function: per-thread semantics.
    pub fn run_alone(f: &Function, lane: usize) -> Trace {
        let mut regs = vec![0u64; f.regs.len()];
        let mut lines = Vec::new();
        let mut pc = 0usize;
        for _ in 0..STEP_LIMIT {
            let Some(inst) = f.body.get(pc) else {
                return Trace { lines, regs };
            };
            if !guard(&regs, inst) {
                pc += 1;
                continue;
            }
            match &inst.op {
                Op::Bra { target, .. } => pc = *target as usize,
                Op::BrxIdx { index, targets, .. } => {
                    pc = targets[val(f, &regs, lane, index) as usize] as usize
                }
                Op::Ret { .. } | Op::Exit | Op::Trap => return Trace { lines, regs },
                // branch_Θ: a lane steps over the token instructions (Habermaier §6.3).
                Op::Ssy { .. } | Op::PreBrk { .. } | Op::PreRet { .. } | Op::Sync => pc += 1,
                _ => {
                    if data(f, &mut regs, lane, inst) {
                        lines.push(inst.span.line);
                    }
                    pc += 1;
                }
            }
        }
        panic!("{}: lane {lane} does not terminate alone", f.name)
    }

    /// A warp running a tokenised function.
    pub struct Warp<'f> {
        f: &'f Function,
        n: usize,
        pc: Pc,
        active: u32,
        why: Vec<Why>,
        stack: Vec<Tok>,
        regs: Vec<Vec<u64>>,
        lines: Vec<Vec<u32>>,
        done: bool,
        /// brx.idx with several targets: serve the highest lane first instead of the lowest.
        pick_high: bool,
        max_depth: usize,
    }

    impl<'f> Warp<'f> {
        pub fn new(f: &'f Function, n: usize, pick_high: bool) -> Warp<'f> {
            let all = (1u32 << n) - 1;
            // A .func starts under the caller's call token, resuming past the end.
            let stack = match f.kind {
                FuncKind::Func => vec![Tok {
                    kind: Kind::Call,
                    mask: all,
                    pc: f.body.len() as Pc,
                }],
                FuncKind::Entry => vec![],
            };
            Warp {
                f,
                n,
                pc: 0,
                active: all,
                why: vec![Why::Enabled; n],
                stack,
                regs: vec![vec![0; f.regs.len()]; n],
                lines: vec![Vec::new(); n],
                done: false,
                pick_high,
                max_depth: 0,
            }
        }

        fn lanes(&self, mask: u32) -> impl Iterator<Item = usize> {
            (0..self.n).filter(move |l| mask & (1 << l) != 0)
        }

        fn enabled(&self, why: &[Why]) -> u32 {
            (0..self.n)
                .filter(|&l| why[l] == Why::Enabled)
                .fold(0, |m, l| m | 1 << l)
        }

        fn fail(&self, msg: String) -> ! {
            panic!(
                "{}: pc {} active {:0w$b}: {msg}\nstack {:?}",
                self.f.name,
                self.pc,
                self.active,
                self.stack,
                w = self.n
            )
        }

        /// Run to completion: each lane's trace and the deepest stack seen.
        pub fn run(mut self) -> (Vec<Trace>, usize) {
            for _ in 0..STEP_LIMIT {
                if self.done {
                    if !self.stack.is_empty() {
                        self.fail("stack not empty at the end".into());
                    }
                    let traces = (0..self.n)
                        .map(|l| Trace {
                            lines: self.lines[l].clone(),
                            regs: self.regs[l].clone(),
                        })
                        .collect();
                    return (traces, self.max_depth);
                }
                self.step();
                self.max_depth = self.max_depth.max(self.stack.len());
            }
            self.fail("the warp does not terminate".into())
        }

        fn step(&mut self) {
            let f = self.f;
            let Some(inst) = f.body.get(self.pc as usize) else {
                self.fail("ran off the end of the body".into())
            };
            let taken = self
                .lanes(self.active)
                .filter(|&l| guard(&self.regs[l], inst))
                .fold(0u32, |m, l| m | 1 << l);
            let pc = self.pc;
            match &inst.op {
                Op::Ssy { target } => self.push(Kind::Sync, taken, *target),
                Op::PreBrk { target } => self.push(Kind::Break, taken, *target),
                Op::PreRet { target } => self.push(Kind::Call, taken, *target),
                Op::Sync => {
                    self.check_sync(inst);
                    self.unwind();
                }
                Op::Brk => {
                    if taken != 0 && !self.stack.iter().any(|t| t.kind == Kind::Break) {
                        self.fail("brk without a break token (condition 1)".into());
                    }
                    self.disable(taken, Why::Break);
                }
                Op::Ret { .. } => {
                    if taken != 0 && !self.stack.iter().any(|t| t.kind == Kind::Call) {
                        self.fail("ret without a call token (condition 2)".into());
                    }
                    let why = if f.kind == FuncKind::Entry {
                        Why::Exit
                    } else {
                        Why::Return
                    };
                    self.disable(taken, why);
                }
                Op::Exit | Op::Trap => self.disable(taken, Why::Exit),
                Op::Bra { target, .. } => self.branch(taken, |_| *target),
                Op::BrxIdx { index, targets, .. } => {
                    let regs = self.regs.clone();
                    self.branch(taken, |l| targets[val(f, &regs[l], l, index) as usize]);
                }
                Op::Call { .. } => self.call(taken, inst),
                _ => {
                    for l in self.lanes(taken).collect::<Vec<_>>() {
                        if data(f, &mut self.regs[l], l, inst) {
                            self.lines[l].push(inst.span.line);
                        }
                    }
                    self.pc = pc + 1;
                }
            }
        }

        /// ssy / preBrk / preRet: push (kind, α, target) when some lane's guard holds.
        fn push(&mut self, kind: Kind, taken: u32, target: Pc) {
            if taken != 0 {
                self.stack.push(Tok {
                    kind,
                    mask: self.active,
                    pc: target,
                });
            }
            self.pc += 1;
        }

        /// Stack consistency conditions 3–5 (Habermaier §6).
        fn check_sync(&self, inst: &Inst) {
            if inst.guard.is_some() {
                self.fail("guarded sync".into());
            }
            let next = self.pc + 1;
            let n = self.stack.len();
            match self.stack.last() {
                Some(t) if t.kind == Kind::Sync && t.pc != next => {
                    self.fail(format!("sync token for pc {}", t.pc))
                }
                Some(t) if t.kind == Kind::Sync => {}
                Some(t) if t.kind == Kind::Diverge => {
                    let second = n.checked_sub(2).map(|i| self.stack[i]);
                    match second {
                        Some(s)
                            if s.kind == Kind::Sync
                                && s.pc == next
                                && (t.mask | self.active) & !s.mask == 0 => {}
                        _ => self.fail(
                            "diverge token not above the sync token of this pad (condition 4)"
                                .into(),
                        ),
                    }
                }
                _ => self.fail("sync without a sync or diverge token on top (condition 3)".into()),
            }
        }

        /// brk / ret / exit: the lanes stop; if none is left, unwind.
        fn disable(&mut self, taken: u32, why: Why) {
            if taken == 0 {
                self.pc += 1;
                return;
            }
            let uniform = taken == self.active;
            for l in self.lanes(taken).collect::<Vec<_>>() {
                self.why[l] = why;
            }
            self.active &= !taken;
            if uniform {
                self.unwind();
            } else {
                self.pc += 1;
            }
        }

        /// bra / brx.idx: the taken lanes of one target run first; the others wait in a diverge
        /// token (at the next pc, or at this pc to pick another brx target later).
        fn branch(&mut self, taken: u32, target_of: impl Fn(usize) -> Pc) {
            if taken == 0 {
                self.pc += 1;
                return;
            }
            let lanes: Vec<usize> = self.lanes(taken).collect();
            let first = if self.pick_high {
                *lanes.last().unwrap()
            } else {
                lanes[0]
            };
            let t = target_of(first);
            let go = lanes
                .iter()
                .filter(|&&l| target_of(l) == t)
                .fold(0u32, |m, l| m | 1 << l);
            if go == taken && taken == self.active {
                self.pc = t;
                return;
            }
            let resume = if go == taken { self.pc + 1 } else { self.pc };
            self.stack.push(Tok {
                kind: Kind::Diverge,
                mask: self.active & !go,
                pc: resume,
            });
            self.active = go;
            self.pc = t;
        }

        /// The callee runs the calling lanes and returns uniformly: its unwind pops the call
        /// token pushed by preRet (condition 6: that token is on top, for pc + 1).
        fn call(&mut self, taken: u32, inst: &Inst) {
            if taken == 0 {
                self.pc += 1;
                return;
            }
            match self.stack.last() {
                Some(t) if t.kind == Kind::Call && t.pc == self.pc + 1 => {}
                _ => self.fail("call without its call token on top (condition 6)".into()),
            }
            for l in self.lanes(taken).collect::<Vec<_>>() {
                self.lines[l].push(inst.span.line);
                self.why[l] = Why::Return;
            }
            self.active = 0;
            self.unwind();
        }

        /// Pop tokens until one activates a lane (a call or break token first re-enables the
        /// lanes it waits for); an empty stack completes the warp if every lane has exited.
        fn unwind(&mut self) {
            while let Some(tok) = self.stack.pop() {
                let mut why = self.why.clone();
                let wake = match tok.kind {
                    Kind::Call => Some(Why::Return),
                    Kind::Break => Some(Why::Break),
                    _ => None,
                };
                for l in self.lanes(tok.mask).collect::<Vec<_>>() {
                    if Some(why[l]) == wake {
                        why[l] = Why::Enabled;
                    }
                }
                let a = tok.mask & self.enabled(&why);
                if a != 0 {
                    self.why = why;
                    self.active = a;
                    self.pc = tok.pc;
                    if self.f.kind == FuncKind::Func && tok.pc as usize == self.f.body.len() {
                        self.done = true;
                    }
                    return;
                }
            }
            if self.why.iter().any(|&w| w != Why::Exit) {
                self.fail(format!("stack empty while lanes wait: {:?}", self.why));
            }
            self.done = true;
        }
    }
}

const HEADER: &str = ".version 7.0\n.target sm_52\n.address_size 64\n";

fn parse(src: &str) -> Module {
    parse_module("test.ptx", &format!("{HEADER}{src}")).unwrap_or_else(|e| panic!("{e}"))
}

/// Run every lane count from 1 to 8 (and both brx target orders) on the tokenised function and
/// compare each lane with the input function run by that lane alone; the deepest stack seen.
fn check_lanes(input: &Function, tokenised: &Function) -> usize {
    let mut depth = 0;
    for n in 1..=8 {
        for pick_high in [false, true] {
            let (traces, d) = warp::Warp::new(tokenised, n, pick_high).run();
            depth = depth.max(d);
            for (lane, t) in traces.iter().enumerate() {
                let alone = warp::run_alone(input, lane);
                let name = &input.name;
                assert_eq!(
                    t.lines, alone.lines,
                    "{name}: lane {lane} of {n} executes other instructions"
                );
                let visible = input.regs.len();
                assert_eq!(
                    t.regs[..visible],
                    alone.regs[..],
                    "{name}: lane {lane} of {n} ends with other registers"
                );
            }
        }
    }
    depth
}

/// The PTX of every function of `m`, with `t` in place of the function of the same name.
fn reprint(m: &Module, t: &Function) -> String {
    let mut text = HEADER.to_string();
    for f in &m.functions {
        let f = if f.name == t.name { t } else { f };
        text.push_str(&print::function_to_ptx(m, f));
    }
    text
}

fn ops(f: &Function) -> Vec<(Option<Guard>, Op)> {
    f.body.iter().map(|i| (i.guard, i.op.clone())).collect()
}

fn has_token_ops(f: &Function) -> bool {
    f.body.iter().any(|i| {
        matches!(
            i.op,
            Op::Ssy { .. } | Op::Sync | Op::PreBrk { .. } | Op::Brk | Op::PreRet { .. }
        )
    })
}

/// Tokenise function `name` of `src`: compare the listing with `expected` (after its first
/// newline), run every lane count against per-thread execution, re-parse the printed PTX, and
/// check that a tokenised function is left as it is.
fn check(src: &str, name: &str, expected: &str) -> Function {
    let m = parse(src);
    let f = m.functions.iter().find(|f| f.name == name).unwrap();
    let t = insert_tokens(f).unwrap_or_else(|e| panic!("{e}"));
    let actual = describe_body(&t);
    let expected = expected.strip_prefix('\n').unwrap_or(expected);
    assert!(
        actual == expected,
        "tokenised `{name}`:\n{actual}\nexpected:\n{expected}"
    );
    check_lanes(f, &t);
    let again = parse_module("reprint.ptx", &reprint(&m, &t)).unwrap_or_else(|e| panic!("{e}"));
    let back = again.functions.iter().find(|f| f.name == name).unwrap();
    assert_eq!(
        ops(back),
        ops(&t),
        "the printed tokenised `{name}` parses to another body"
    );
    assert_eq!(back.has_tokens, has_token_ops(&t));
    assert_eq!(insert_tokens(&t).unwrap(), t);
    t
}

const IF_ELSE: &str = "
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<5>;
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 2;
    @%p1 bra ELSE;
    sub.u32 %r2, %r1, 1;
    bra JOIN;
ELSE:
    mul.lo.u32 %r2, %r1, 3;
JOIN:
    add.u32 %r3, %r2, 1;
    ret;
}
";

/// Habermaier Listing 5.5: `ssy` before the branch names JOIN, the instruction after the pad's
/// `sync`; both arms enter the pad (the taken arm falls into it, the other jumps to it).
#[test]
fn if_else() {
    check(
        IF_ELSE,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: setp.lt.u32 %p1, %r1, 2
   2: ssy 8
   3: @%p1 bra 6
   4: sub.u32 %r2, %r1, 1
   5: bra 7
ELSE:
   6: mul.lo.u32 %r2, %r1, 3
$__sync_pad_0:
   7: sync
JOIN:
   8: add.u32 %r3, %r2, 1
   9: exit
",
    );
}

/// The taken edge skips the then-block and goes straight to the pad before SKIP.
#[test]
fn if_without_else() {
    let src = "
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<5>;
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 3;
    @%p1 bra SKIP;
    add.u32 %r2, %r1, 10;
SKIP:
    add.u32 %r3, %r2, 1;
    ret;
}
";
    check(
        src,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: setp.lt.u32 %p1, %r1, 3
   2: ssy 6
   3: @%p1 bra 5
   4: add.u32 %r2, %r1, 10
$__sync_pad_0:
   5: sync
SKIP:
   6: add.u32 %r3, %r2, 1
   7: exit
",
    );
}

/// Two branches with the same post-dominator: the inner pad (8) pops the inner token and falls
/// into the outer pad (9); the inner `ssy` names 9, the outer one JOIN. The outer branch
/// enters the outer pad directly, the inner one and the fall-through enter the inner pad.
#[test]
fn nested_ifs_share_a_join() {
    let src = "
.visible .entry k()
{
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 4;
    @%p1 bra JOIN;
    setp.lt.u32 %p2, %r1, 6;
    @%p2 bra JOIN;
    add.u32 %r2, %r1, 1;
JOIN:
    add.u32 %r3, %r2, 1;
    ret;
}
";
    check(
        src,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: setp.lt.u32 %p1, %r1, 4
   2: ssy 10
   3: @%p1 bra 9
   4: setp.lt.u32 %p2, %r1, 6
   5: ssy 9
   6: @%p2 bra 8
   7: add.u32 %r2, %r1, 1
$__sync_pad_0:
   8: sync
$__sync_pad_1:
   9: sync
JOIN:
  10: add.u32 %r3, %r2, 1
  11: exit
",
    );
}

/// `if (a || b) BODY`: BODY lies in the region of the second branch but is also entered from the
/// first. The short-circuit edge pushes the second branch's token too (`ssy 11` at 8), so BODY
/// is always reached with both tokens and its pad chain 10 → 11 → END is consistent.
#[test]
fn or_condition_pushes_the_inner_token_on_the_short_circuit_edge() {
    let src = "
.visible .entry k()
{
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 2;
    @%p1 bra BODY;
    setp.gt.u32 %p2, %r1, 5;
    @!%p2 bra END;
BODY:
    add.u32 %r2, %r1, 7;
END:
    add.u32 %r3, %r2, 1;
    ret;
}
";
    check(
        src,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: setp.lt.u32 %p1, %r1, 2
   2: ssy 12
   3: @%p1 bra 8
   4: setp.gt.u32 %p2, %r1, 5
   5: ssy 11
   6: @!%p2 bra 10
   7: bra 9
$__ssy_push_0:
   8: ssy 11
BODY:
   9: add.u32 %r2, %r1, 7
$__sync_pad_0:
  10: sync
$__sync_pad_1:
  11: sync
END:
  12: add.u32 %r3, %r2, 1
  13: exit
",
    );
}

/// Lane 0 skips the loop; the others iterate tid times. The loop's break target DONE is the
/// skip branch's post-dominator, so `preBrk` names the pad (10), not DONE; the conditional
/// back edge becomes `@!p2 brk` and a latch.
#[test]
fn while_loop_with_divergent_trip_count() {
    let src = "
.visible .entry k()
{
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra DONE;
LOOP:
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p2, %r2, %r1;
    @%p2 bra LOOP;
DONE:
    add.u32 %r3, %r2, 1;
    ret;
}
";
    check(
        src,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: mov.u32 %r2, 0
   2: setp.eq.u32 %p1, %r1, 0
   3: ssy 11
   4: @%p1 bra 10
$__preheader_0:
   5: preBrk 10
LOOP:
   6: add.u32 %r2, %r2, 1
   7: setp.lt.u32 %p2, %r2, %r1
   8: @!%p2 brk
$__latch_0:
   9: bra 6
$__sync_pad_0:
  10: sync
DONE:
  11: add.u32 %r3, %r2, 1
  12: exit
",
    );
}

/// Both exits go to DONE: `@p1 bra DONE` becomes `@p1 brk`, the fall-through exit `@!p2 brk`.
#[test]
fn loop_with_break_to_the_exit_block() {
    let src = "
.visible .entry k()
{
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
LOOP:
    setp.eq.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p2, %r2, 5;
    @%p2 bra LOOP;
DONE:
    add.u32 %r3, %r2, 1;
    ret;
}
";
    check(
        src,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: mov.u32 %r2, 0
$__preheader_0:
   2: preBrk 9
LOOP:
   3: setp.eq.u32 %p1, %r2, %r1
   4: @%p1 brk
   5: add.u32 %r2, %r2, 1
   6: setp.lt.u32 %p2, %r2, 5
   7: @!%p2 brk
$__latch_0:
   8: bra 3
DONE:
   9: add.u32 %r3, %r2, 1
  10: exit
",
    );
}

/// A `break` inside an `if`: the block that breaks cannot reach the latch, so it is not in
/// the natural loop. Its lanes `brk` at the branch (sel 0) and run it after the loop, from the
/// dispatch; the normal exit (sel 1) enters DONE through the dispatch's pad.
#[test]
fn break_path_lies_outside_the_loop() {
    let src = "
.visible .entry k()
{
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
LOOP:
    setp.ne.u32 %p1, %r2, %r1;
    @%p1 bra NEXT;
    add.u32 %r3, %r2, 100;
    bra DONE;
NEXT:
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p2, %r2, 4;
    @%p2 bra LOOP;
DONE:
    add.u32 %r4, %r2, 1;
    ret;
}
";
    check(
        src,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: mov.u32 %r2, 0
$__preheader_0:
   2: preBrk 14
LOOP:
   3: setp.ne.u32 %p1, %r2, %r1
   4: @!%p1 mov.u32 %__brk_sel0, 0
   5: @!%p1 brk
   6: bra 9
$__L0:
   7: add.u32 %r3, %r2, 100
   8: bra 16
NEXT:
   9: add.u32 %r2, %r2, 1
  10: setp.lt.u32 %p2, %r2, 4
  11: @!%p2 mov.u32 %__brk_sel0, 1
  12: @!%p2 brk
$__latch_0:
  13: bra 3
$__brk_dispatch_0:
  14: ssy 17
  15: brx.idx %__brk_sel0, [7, 16]
$__sync_pad_0:
  16: sync
DONE:
  17: add.u32 %r4, %r2, 1
  18: exit
",
    );
}

/// A switch in a loop whose third case breaks: that slot goes to a `brk` stub, a path that
/// ends, so the switch reconverges at NEXT (its post-dominator among the paths that reach the
/// latch) within the iteration instead of holding the breaking lanes' diverge token.
#[test]
fn switch_case_that_breaks_reconverges_within_the_iteration() {
    let src = "
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    mov.u32 %r4, 0;
LOOP:
    add.u32 %r3, %r2, %r1;
    rem.u32 %r3, %r3, 3;
ts: .branchtargets C0, C1, DONE;
    brx.idx %r3, ts;
C0:
    add.u32 %r4, %r4, 1;
    bra NEXT;
C1:
    add.u32 %r4, %r4, 2;
NEXT:
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, 4;
    @%p1 bra LOOP;
DONE:
    add.u32 %r5, %r4, 1;
    ret;
}
";
    check(
        src,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: mov.u32 %r2, 0
   2: mov.u32 %r4, 0
$__preheader_0:
   3: preBrk 17
LOOP:
   4: add.u32 %r3, %r2, %r1
   5: rem.u32 %r3, %r3, 3
   6: ssy 12
   7: brx.idx %r3, [8, 10, 16]
C0:
   8: add.u32 %r4, %r4, 1
   9: bra 11
C1:
  10: add.u32 %r4, %r4, 2
$__sync_pad_0:
  11: sync
NEXT:
  12: add.u32 %r2, %r2, 1
  13: setp.lt.u32 %p1, %r2, 4
  14: @!%p1 brk
$__latch_0:
  15: bra 4
$__brk_stub_0:
  16: brk
DONE:
  17: add.u32 %r5, %r4, 1
  18: exit
",
    );
}

/// Habermaier Listing 5.5 as written, with its tokens: validated, returned unchanged, and run.
#[test]
fn hand_written_tokens_are_validated_and_kept() {
    let src = "
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<5>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 1;
    setp.eq.u32 %p1, %r1, %r2;
    ssy SYNCED;
    @%p1 bra DIVERGE;
    sub.u32 %r3, %r1, %r2;
    bra SYNC;
DIVERGE:
    mul.lo.u32 %r3, %r1, %r2;
SYNC:
    sync;
SYNCED:
    div.u32 %r4, %r3, 2;
    exit;
}
";
    let m = parse(src);
    let f = &m.functions[0];
    assert!(f.has_tokens);
    let t = insert_tokens(f).unwrap();
    assert_eq!(&t, f);
    check_lanes(f, &t);
}

/// Habermaier Listing 6.2 (the spin lock): stack-consistent, though not live.
#[test]
fn spin_lock_listing_is_stack_consistent() {
    let src = "
.global .u32 lock = 1;
.visible .entry kernel()
{
    .reg .u32 %r;
    .reg .pred %p;
    preBrk ENDLOOP;
BEGINLOOP:
    atom.global.cas.b32 %r, [lock], 1, 0;
    setp.eq.u32 %p, %r, 1;
    @%p brk;
    bra BEGINLOOP;
ENDLOOP:
    st.global.cg.u32 [lock], 1;
    exit;
}
";
    validate_tokens(&parse(src).functions[0]).unwrap();
}

/// Inconsistent token code is rejected at the offending instruction.
#[test]
fn inconsistent_tokens_are_rejected() {
    let wrap = |body: &str| format!(".visible .entry k()\n{{\n    .reg .pred %p<2>;\n{body}}}\n");
    let sync_far = "    ssy L;\n    sync;\n    exit;\nL:\n    exit;\n";
    let e = insert_tokens(&parse(&wrap(sync_far)).functions[0]).unwrap_err();
    assert_eq!(e.span.line, 8);
    assert!(
        e.message
            .contains("`sync` pops a sync token for pc 3, not for pc 2"),
        "{e}"
    );
    let lone_brk = "    brk;\n    exit;\n";
    let e = validate_tokens(&parse(&wrap(lone_brk)).functions[0]).unwrap_err();
    assert!(e.message.contains("`brk` with no break token"), "{e}");
    let guarded_sync = "    ssy L;\n    @%p1 sync;\nL:\n    exit;\n";
    let e = validate_tokens(&parse(&wrap(guarded_sync)).functions[0]).unwrap_err();
    assert!(e.message.contains("must not be guarded"), "{e}");
}

/// Exits to FOUND and to the fall-through block: each `brk` first sets `%__brk_sel0` (0 for
/// FOUND, 1 for the other, in order of appearance), and the break token resumes at a dispatch
/// `brx.idx`, itself a divergent branch that reconverges at END.
#[test]
fn loop_exits_to_two_blocks_through_a_dispatch() {
    let src = "
.visible .entry k()
{
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
LOOP:
    setp.eq.u32 %p1, %r2, %r1;
    @%p1 bra FOUND;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p2, %r2, 4;
    @%p2 bra LOOP;
    mov.u32 %r3, 100;
    bra END;
FOUND:
    mov.u32 %r3, 200;
END:
    add.u32 %r4, %r3, %r2;
    ret;
}
";
    check(
        src,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: mov.u32 %r2, 0
$__preheader_0:
   2: preBrk 11
LOOP:
   3: setp.eq.u32 %p1, %r2, %r1
   4: @%p1 mov.u32 %__brk_sel0, 0
   5: @%p1 brk
   6: add.u32 %r2, %r2, 1
   7: setp.lt.u32 %p2, %r2, 4
   8: @!%p2 mov.u32 %__brk_sel0, 1
   9: @!%p2 brk
$__latch_0:
  10: bra 3
$__brk_dispatch_0:
  11: ssy 17
  12: brx.idx %__brk_sel0, [15, 13]
$__L0:
  13: mov.u32 %r3, 100
  14: bra 16
FOUND:
  15: mov.u32 %r3, 200
$__sync_pad_0:
  16: sync
END:
  17: add.u32 %r4, %r3, %r2
  18: exit
",
    );
}

/// A function leaving a loop by two `ret`s: the dispatch needs no `ssy`, since its arms never
/// meet again (only the virtual exit post-dominates it); `ret` unwinds to the caller's token.
#[test]
fn loop_returning_from_two_places() {
    let src = "
.visible .func f()
{
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
LOOP:
    setp.eq.u32 %p1, %r2, %r1;
    @%p1 bra FOUND;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p2, %r2, 4;
    @%p2 bra LOOP;
    mov.u32 %r3, 100;
    ret;
FOUND:
    mov.u32 %r3, 200;
    ret;
}
";
    check(
        src,
        "f",
        r"
   0: mov.u32 %r1, %tid.x
   1: mov.u32 %r2, 0
$__preheader_0:
   2: preBrk 11
LOOP:
   3: setp.eq.u32 %p1, %r2, %r1
   4: @%p1 mov.u32 %__brk_sel0, 0
   5: @%p1 brk
   6: add.u32 %r2, %r2, 1
   7: setp.lt.u32 %p2, %r2, 4
   8: @!%p2 mov.u32 %__brk_sel0, 1
   9: @!%p2 brk
$__latch_0:
  10: bra 3
$__brk_dispatch_0:
  11: brx.idx %__brk_sel0, [14, 12]
$__L0:
  12: mov.u32 %r3, 100
  13: ret
FOUND:
  14: mov.u32 %r3, 200
  15: ret
",
    );
}

/// A rotated loop (the condition after the body, entered by a jump): the back edge is BODY's
/// fall-through into COND, which now needs a `bra` since the preheader sits before COND.
#[test]
fn rotated_loop() {
    let src = "
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    bra.uni COND;
BODY:
    add.u32 %r2, %r2, 1;
COND:
    setp.lt.u32 %p1, %r2, %r1;
    @%p1 bra BODY;
    add.u32 %r3, %r2, 1;
    ret;
}
";
    check(
        src,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: mov.u32 %r2, 0
   2: bra.uni 5
BODY:
   3: add.u32 %r2, %r2, 1
   4: bra 6
$__preheader_0:
   5: preBrk 9
COND:
   6: setp.lt.u32 %p1, %r2, %r1
   7: @!%p1 brk
   8: bra 3
$__break_0:
   9: add.u32 %r3, %r2, 1
  10: exit
",
    );
}

const NESTED_LOOPS: &str = "
.visible .entry k()
{
    .reg .pred %p<3>;
    .reg .b32 %r<6>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    mov.u32 %r4, 0;
OUTER:
    mov.u32 %r3, 0;
INNER:
    add.u32 %r4, %r4, %r3;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p1, %r3, %r1;
    @%p1 bra INNER;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p2, %r2, 3;
    @%p2 bra OUTER;
    add.u32 %r5, %r4, 1;
    ret;
}
";

/// Each loop has its own preheader (`preBrk` of the inner loop runs once per outer iteration)
/// and latch; the inner loop's break target 11 is the rest of the outer body.
#[test]
fn nested_loops() {
    check(
        NESTED_LOOPS,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: mov.u32 %r2, 0
   2: mov.u32 %r4, 0
$__preheader_0:
   3: preBrk 15
OUTER:
   4: mov.u32 %r3, 0
$__preheader_1:
   5: preBrk 11
INNER:
   6: add.u32 %r4, %r4, %r3
   7: add.u32 %r3, %r3, 1
   8: setp.lt.u32 %p1, %r3, %r1
   9: @!%p1 brk
$__latch_0:
  10: bra 6
$__break_1:
  11: add.u32 %r2, %r2, 1
  12: setp.lt.u32 %p2, %r2, 3
  13: @!%p2 brk
$__latch_1:
  14: bra 4
$__break_0:
  15: add.u32 %r5, %r4, 1
  16: exit
",
    );
}

/// Habermaier Listing 5.6: one `ssy` before the switch; the lanes of each target run in turn
/// (the `brx.idx` is re-executed for the waiting ones) and all meet at the pad before END.
#[test]
fn brx_switch() {
    let src = "
.visible .entry k()
{
    .reg .b32 %r<6>;
    mov.u32 %r1, %tid.x;
    rem.u32 %r2, %r1, 3;
ts: .branchtargets C0, C1, C2;
    brx.idx %r2, ts;
C0:
    mov.u32 %r3, 10;
    bra END;
C1:
    mov.u32 %r3, 20;
    bra END;
C2:
    mov.u32 %r3, 30;
END:
    add.u32 %r4, %r3, 1;
    ret;
}
";
    check(
        src,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: rem.u32 %r2, %r1, 3
   2: ssy 10
   3: brx.idx %r2, [4, 6, 8]
C0:
   4: mov.u32 %r3, 10
   5: bra 9
C1:
   6: mov.u32 %r3, 20
   7: bra 9
C2:
   8: mov.u32 %r3, 30
$__sync_pad_0:
   9: sync
END:
  10: add.u32 %r4, %r3, 1
  11: exit
",
    );
}

/// Habermaier T6/T11.7: `@p preRet L; @p call g` with the same guard, L the instruction after
/// the call; the lanes with p false wait in the call token and resume at L with the callers.
#[test]
fn guarded_call_gets_a_guarded_pre_ret() {
    let src = "
.func g()
{
    ret;
}
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 3;
    @%p1 call g;
    add.u32 %r2, %r1, 1;
    ret;
}
";
    check(
        src,
        "k",
        r"
   0: mov.u32 %r1, %tid.x
   1: setp.lt.u32 %p1, %r1, 3
   2: @%p1 preRet 4
   3: @%p1 call func0
$__call_return_0:
   4: add.u32 %r2, %r1, 1
   5: exit
",
    );
}

/// In an entry `ret` (guarded or not) is `exit`; a function keeps its `ret`s.
#[test]
fn entry_ret_becomes_exit_and_func_ret_stays() {
    let body = "
{
    .reg .pred %p<2>;
    .reg .b32 %r<2>;
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 1;
    @%p1 ret;
    add.u32 %r1, %r1, 1;
    ret;
}
";
    let src = format!(".func g(){body}.visible .entry k(){body}");
    let listing = |ret: &str| {
        format!(
            "
   0: mov.u32 %r1, %tid.x
   1: setp.eq.u32 %p1, %r1, 1
   2: @%p1 {ret}
   3: add.u32 %r1, %r1, 1
   4: {ret}
"
        )
    };
    check(&src, "g", &listing("ret"));
    check(&src, "k", &listing("exit"));
}

/// Two entries into the cycle A ↔ B (from the entry block to both): rejected, naming the
/// function and the line of `bra B`, whose target does not dominate it.
#[test]
fn irreducible_cfg_is_an_error_at_the_branch() {
    let src = "
.visible .entry k()
{
    .reg .pred %p<3>;
    .reg .b32 %r<3>;
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 3;
    @%p1 bra B;
A:
    add.u32 %r2, %r2, 1;
    bra B;
B:
    add.u32 %r2, %r2, 2;
    setp.lt.u32 %p2, %r2, 10;
    @%p2 bra A;
    ret;
}
";
    let m = parse(src);
    let e = insert_tokens(&m.functions[0]).unwrap_err();
    assert_eq!(e.function, "k");
    assert_eq!(
        e.span.line, 14,
        "the line of `bra B` (3 header lines, then the source)"
    );
    assert_eq!(
        e.to_string(),
        "in `k` at line 14, column 5: irreducible control flow: this edge to `B` (pc 5) closes a \
         cycle that can also be entered elsewhere (its target does not dominate it)"
    );
    let cfg = describe_cfg(&m.functions[0]);
    assert!(
        cfg.ends_with("  irreducible: edge b1 -> b2 (line 14)\n"),
        "{cfg}"
    );
}

#[test]
fn cfg_listing_of_if_else() {
    let m = parse(IF_ELSE);
    assert_eq!(
        describe_cfg(&m.functions[0]),
        "\
cfg k (entry)
  b0 [0..3) -> b2 b1 ; ipdom b3
  b1 [3..5) -> b3 ; ipdom b3
  b2 [5..6) ELSE -> b3 ; ipdom b3
  b3 [6..8) JOIN -> exit ; ipdom exit
  no loops
"
    );
}

#[test]
fn cfg_listing_of_nested_loops() {
    let m = parse(NESTED_LOOPS);
    assert_eq!(
        describe_cfg(&m.functions[0]),
        "\
cfg k (entry)
  b0 [0..3) -> b1 ; ipdom b1
  b1 [3..4) OUTER -> b2 ; ipdom b2
  b2 [4..8) INNER -> b2 b3 ; ipdom b3
  b3 [8..11) -> b1 b4 ; ipdom b4
  b4 [11..13) -> exit ; ipdom exit
  loop L0 header b1 depth 1 parent - body b1 b2 b3 latches b3 exits b3->b4
  loop L1 header b2 depth 2 parent L0 body b2 latches b2 exits b2->b3
"
    );
}

/// xorshift64*: deterministic pseudo-random numbers for the random CFGs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// How a random block ends; block indices.
#[derive(Clone, Debug)]
enum End {
    Fall,
    Goto(usize),
    Cond(usize, u64),
    Switch(Vec<usize>),
    /// A conditional back edge, limited by a per-lane fuel counter.
    Back(usize, u64),
    GuardedExit(u64),
    Call,
    Exit,
}

/// Registers of the random functions.
const H: RegId = RegId(0);
const T: RegId = RegId(1);
const FUEL: RegId = RegId(2);
const X: RegId = RegId(3);
const P: RegId = RegId(4);
const Q: RegId = RegId(5);
const I: RegId = RegId(6);

fn inst(guard: Option<Guard>, op: Op) -> Inst {
    Inst {
        guard,
        op,
        span: Span::default(),
    }
}

fn mov(d: RegId, a: Operand) -> Inst {
    inst(
        None,
        Op::Mov {
            ty: Type::U32,
            d,
            a,
        },
    )
}

fn arith(op: ArithOp, d: RegId, a: Operand, b: Operand, c: Operand) -> Inst {
    inst(
        None,
        Op::Arith {
            op,
            ty: Type::U32,
            mods: Mods::default(),
            d,
            a,
            b,
            c,
        },
    )
}

fn setp(p: RegId, a: RegId, b: u64, and: Option<RegId>) -> Inst {
    let comb = and.map(|q| (BoolOp::And, Operand::Reg(q)));
    inst(
        None,
        Op::Setp {
            cmp: Cmp::Lt,
            ty: Type::U32,
            ftz: false,
            p,
            q: None,
            a: Operand::Reg(a),
            b: Operand::Imm(b),
            comb,
        },
    )
}

/// `%t = next pseudo-random value of this lane, in 0..100`.
fn roll() -> Vec<Inst> {
    let imm = Operand::Imm;
    vec![
        arith(
            ArithOp::Mad,
            H,
            Operand::Reg(H),
            imm(1103515245),
            imm(12345),
        ),
        arith(ArithOp::Shr, T, Operand::Reg(H), imm(16), imm(0)),
        arith(ArithOp::Rem, T, Operand::Reg(T), imm(100), imm(0)),
    ]
}

/// The forward structure of a random function: n blocks, each ending as chosen.
fn random_ends(rng: &mut Rng, n: usize) -> Vec<End> {
    let mut ends = Vec::new();
    // Block 0 sets the lane up; nothing jumps back to it.
    ends.push(End::Fall);
    for i in 1..n - 1 {
        let fwd = |rng: &mut Rng| i + 1 + rng.below(n - i - 1);
        let end = match rng.below(16) {
            0..=2 => End::Fall,
            3..=4 => End::Goto(fwd(rng)),
            5..=9 => End::Cond(fwd(rng), 10 + rng.below(80) as u64),
            10..=11 => End::Switch((0..2 + rng.below(3)).map(|_| fwd(rng)).collect()),
            12..=13 => End::Back(i, 30 + rng.below(60) as u64),
            14 => End::GuardedExit(rng.below(30) as u64),
            _ if rng.below(3) == 0 => End::Exit,
            _ => End::Call,
        };
        ends.push(end);
    }
    ends.push(End::Exit);
    // Back edges go to a dominator of their block in the forward graph: reducible.
    let succ: Vec<Vec<usize>> = ends
        .iter()
        .enumerate()
        .map(|(i, e)| match e {
            End::Fall | End::Back(..) | End::GuardedExit(_) | End::Call => vec![i + 1],
            End::Goto(t) => vec![*t],
            End::Cond(t, _) => vec![*t, i + 1],
            End::Switch(ts) => ts.clone(),
            End::Exit => vec![],
        })
        .collect();
    let dom = DomTree::dominators(&succ, 0);
    for (i, end) in ends.iter_mut().enumerate() {
        if let End::Back(_, thr) = *end {
            let doms: Vec<usize> = (1..=i).filter(|&h| dom.dominates(h, i)).collect();
            *end = if doms.is_empty() {
                End::Fall
            } else {
                End::Back(doms[rng.below(doms.len())], thr)
            };
        }
    }
    ends
}

/// Put the blocks in a random order half of the time (block 0 first), adding a `bra` where a
/// block no longer falls into its successor, and turn block indices into pcs.
fn lay_out(rng: &mut Rng, mut blocks: Vec<Vec<Inst>>, ends: &[End]) -> Vec<Inst> {
    let n = blocks.len();
    let mut order: Vec<usize> = (0..n).collect();
    if rng.below(2) == 0 {
        for i in (2..n).rev() {
            let j = 1 + rng.below(i);
            order.swap(i, j);
        }
    }
    for (pos, &b) in order.iter().enumerate() {
        let falls = !matches!(ends[b], End::Goto(_) | End::Switch(_) | End::Exit);
        if falls && order.get(pos + 1) != Some(&(b + 1)) {
            blocks[b].push(inst(
                None,
                Op::Bra {
                    target: (b + 1) as Pc,
                    uni: false,
                },
            ));
        }
    }
    let mut start = vec![0 as Pc; n];
    let mut pc = 0;
    for &b in &order {
        start[b] = pc;
        pc += blocks[b].len() as Pc;
    }
    let mut body = Vec::new();
    for &b in &order {
        for mut i in std::mem::take(&mut blocks[b]) {
            match &mut i.op {
                Op::Bra { target, .. } => *target = start[*target as usize],
                Op::BrxIdx { targets, .. } => {
                    targets.iter_mut().for_each(|t| *t = start[*t as usize])
                }
                _ => {}
            }
            body.push(i);
        }
    }
    body
}

/// A random reducible function: every block adds its index to `%x`, then ends as chosen.
fn random_function(rng: &mut Rng, kind: FuncKind) -> Function {
    let n = 3 + rng.below(14);
    let ends = random_ends(rng, n);
    let imm = Operand::Imm;
    let mut blocks: Vec<Vec<Inst>> = Vec::new();
    for (i, end) in ends.iter().enumerate() {
        let mut b = Vec::new();
        if i == 0 {
            b.push(mov(H, Operand::Special(SpecialReg::Tid(Dim::X))));
            b.push(arith(
                ArithOp::Mad,
                H,
                Operand::Reg(H),
                imm(2654435761),
                imm(rng.next() % 1000),
            ));
            b.push(mov(FUEL, imm(0)));
        }
        b.push(arith(
            ArithOp::Add,
            X,
            Operand::Reg(X),
            imm(i as u64),
            imm(0),
        ));
        let g = Some(Guard {
            reg: P,
            negated: false,
        });
        // Targets are block indices until the blocks are laid out.
        match end {
            End::Fall => {}
            End::Goto(t) => b.push(inst(
                None,
                Op::Bra {
                    target: *t as Pc,
                    uni: false,
                },
            )),
            End::Cond(t, thr) => {
                b.extend(roll());
                b.push(setp(P, T, *thr, None));
                b.push(inst(
                    g,
                    Op::Bra {
                        target: *t as Pc,
                        uni: false,
                    },
                ));
            }
            End::Switch(ts) => {
                b.extend(roll());
                b.push(arith(
                    ArithOp::Rem,
                    I,
                    Operand::Reg(T),
                    imm(ts.len() as u64),
                    imm(0),
                ));
                b.push(inst(
                    None,
                    Op::BrxIdx {
                        index: Operand::Reg(I),
                        targets: ts.iter().map(|&t| t as Pc).collect(),
                        uni: false,
                    },
                ));
            }
            End::Back(t, thr) => {
                b.push(arith(
                    ArithOp::Add,
                    FUEL,
                    Operand::Reg(FUEL),
                    imm(1),
                    imm(0),
                ));
                b.push(setp(Q, FUEL, 12, None));
                b.extend(roll());
                b.push(setp(P, T, *thr, Some(Q)));
                b.push(inst(
                    g,
                    Op::Bra {
                        target: *t as Pc,
                        uni: false,
                    },
                ));
            }
            End::GuardedExit(thr) => {
                b.extend(roll());
                b.push(setp(P, T, *thr, None));
                b.push(inst(
                    g,
                    if kind == FuncKind::Entry {
                        Op::Exit
                    } else {
                        Op::Ret { uni: false }
                    },
                ));
            }
            End::Call => {
                let call = Op::Call {
                    callee: Callee::Direct(FuncId(0)),
                    rets: vec![],
                    args: vec![],
                    uni: false,
                };
                b.push(inst(g, call));
            }
            End::Exit => b.push(inst(
                None,
                if kind == FuncKind::Entry {
                    Op::Exit
                } else {
                    Op::Ret { uni: false }
                },
            )),
        }
        blocks.push(b);
    }
    let mut body = lay_out(rng, blocks, &ends);
    for (pc, i) in body.iter_mut().enumerate() {
        i.span = Span {
            line: pc as u32 + 1,
            col: 1,
            start: 0,
            end: 0,
        };
    }
    let reg = |name: &str, ty| RegInfo {
        name: name.into(),
        ty,
    };
    Function {
        name: "random".into(),
        kind,
        params: vec![],
        rets: vec![],
        regs: vec![
            reg("%h", Type::U32),
            reg("%t", Type::U32),
            reg("%fuel", Type::U32),
            reg("%x", Type::U32),
            reg("%p", Type::Pred),
            reg("%q", Type::Pred),
            reg("%i", Type::U32),
        ],
        body,
        labels: vec![],
        frame_vars: vec![],
        frame_bytes: 0,
        uses: vec![],
        callees: vec![],
        max_ntid: None,
        req_cluster: None,
        has_tokens: false,
        span: Span::default(),
    }
}

#[test]
fn random_reducible_cfgs_run_per_thread() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut deepest = 0;
    let mut stats = [0usize; 4];
    for case in 0..3000 {
        let kind = if case % 3 == 0 {
            FuncKind::Func
        } else {
            FuncKind::Entry
        };
        let f = random_function(&mut rng, kind);
        let t = match insert_tokens(&f) {
            Ok(t) => t,
            Err(e) => panic!("case {case}: {e}\n{}", describe_body(&f)),
        };
        validate_tokens(&t).unwrap();
        let depth = std::panic::catch_unwind(|| check_lanes(&f, &t)).unwrap_or_else(|_| {
            panic!(
                "case {case}\ninput:\n{}\n{}\ntokenised:\n{}",
                describe_body(&f),
                describe_cfg(&f),
                describe_body(&t)
            )
        });
        deepest = deepest.max(depth);
        let count = |pred: fn(&Op) -> bool| t.body.iter().filter(|i| pred(&i.op)).count();
        stats[0] += count(|o| matches!(o, Op::Ssy { .. }));
        stats[1] += count(|o| matches!(o, Op::PreBrk { .. }));
        stats[2] += t
            .labels
            .iter()
            .filter(|(l, _)| l.starts_with("$__ssy_push"))
            .count();
        stats[3] += t
            .labels
            .iter()
            .filter(|(l, _)| l.starts_with("$__brk_dispatch"))
            .count();
    }
    println!(
        "ssy {} preBrk {} pushes {} dispatches {} deepest stack {deepest}",
        stats[0], stats[1], stats[2], stats[3]
    );
    assert!(deepest >= 3, "the random CFGs nest tokens ({deepest})");
}

/// Issue 11 item 8: the token walk's bounds were fixed sizes (200,000 states, 256 tokens), so a
/// long kernel or a deeply nested one was refused as "the token stack grows without bound".
/// A straight-line kernel of 250,000 instructions and 300 nested divergent ifs (a stack 300
/// tokens deep) are valid; a push inside a loop that never pops is still refused.
#[test]
fn token_validation_bounds_are_structural() {
    let mut long =
        String::from(".visible .entry k()\n{\n    .reg .b32 %r<2>;\n    mov.u32 %r0, %tid.x;\n");
    for _ in 0..250_000 {
        long.push_str("    add.u32 %r1, %r1, %r0;\n");
    }
    long.push_str("    exit;\n}\n");
    let t = insert_tokens(&parse(&long).functions[0]).unwrap_or_else(|e| panic!("{e}"));
    validate_tokens(&t).unwrap();

    let depth = 300;
    let mut nested = String::from(
        ".visible .entry k()\n{\n    .reg .b32 %r<2>;\n    .reg .pred %p;\n    mov.u32 %r0, %tid.x;\n",
    );
    for i in 0..depth {
        nested.push_str(&format!(
            "    setp.eq.u32 %p, %r0, {i};\n    @%p bra END{i};\n"
        ));
    }
    nested.push_str("    add.u32 %r1, %r1, 1;\n");
    for i in (0..depth).rev() {
        nested.push_str(&format!("END{i}:\n    add.u32 %r1, %r1, {i};\n"));
    }
    nested.push_str("    exit;\n}\n");
    let t = insert_tokens(&parse(&nested).functions[0]).unwrap_or_else(|e| panic!("{e}"));
    let pushes = t
        .body
        .iter()
        .filter(|i| matches!(i.op, Op::Ssy { .. }))
        .count();
    assert!(pushes >= depth, "{pushes} sync tokens");
    validate_tokens(&t).unwrap();

    let growing = ".visible .entry k()\n{\nL:\n    ssy X;\n    bra L;\nX:\n    exit;\n}\n";
    let f = &parse(growing).functions[0];
    let e = validate_tokens(f).unwrap_err();
    assert!(e.message.contains("grows without bound"), "{e}");
    assert_eq!(e.span.line, f.body[0].span.line, "at the `ssy`: {e}");
}
