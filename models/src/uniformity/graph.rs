//! The uniformity graph of one function (the paper's UG_func, §4.5): building it from the
//! instructions' effects, the control regions and reaching definitions; finding the
//! requirements that reach a source (`MustBeUnif →* MayBeNonUnif`) with the shortest chain of
//! dependences; and reading the function's summary off the graph for its callers.

use super::effects::{effect, special_is_uniform, Effect, Level, Levels, SourceKind, ValueOrigin};
use super::flow::{Flow, Reaching};
use super::{Finding, FindingKind, Need, Source, Step};
use gpusim_isa::{
    Callee, Dim, FuncKind, Function, Module, Op, Operand, Pc, RegId, SpecialReg, SymbolId,
};
use std::collections::{HashMap, VecDeque};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Node {
    /// A register definition (index into `Reaching::defs`).
    Def(usize),
    /// The control flow an instruction runs under (the paper's `cf`).
    Cf(Pc),
    /// The instruction's guard predicate.
    Guard(Pc),
    /// The decision an instruction takes when it has two or more successors.
    Decision(Pc),
    Special(SpecialReg),
    /// A source at an instruction: 0 its own value, 1 a callee's returned value, 2 whether a
    /// callee exits.
    Src(Pc, u8),
    /// The contents of a `.param` variable.
    Var(SymbolId),
    CallRet(Pc),
    /// The paper's `ValueReturn`.
    Ret,
    /// Whether the function ends the thread (`exit`/`trap`): PTX's addition to the summary.
    ExitCond,
}

#[derive(Default)]
struct Graph {
    ids: HashMap<Node, usize>,
    nodes: Vec<Node>,
    succ: Vec<Vec<usize>>,
}

impl Graph {
    fn id(&mut self, n: Node) -> usize {
        if let Some(&i) = self.ids.get(&n) {
            return i;
        }
        self.ids.insert(n, self.nodes.len());
        self.nodes.push(n);
        self.succ.push(Vec::new());
        self.nodes.len() - 1
    }
    fn edge(&mut self, a: Node, b: Node) {
        let (a, b) = (self.id(a), self.id(b));
        self.succ[a].push(b);
    }
    fn edges(&mut self, a: Node, bs: &[Node]) {
        for &b in bs {
            self.edge(a, b);
        }
    }
    /// Nodes reachable from `start` (all of them, tainted or not).
    fn forward(&self, start: &[Node]) -> Vec<bool> {
        let mut seen = vec![false; self.nodes.len()];
        let mut work: Vec<usize> = start
            .iter()
            .filter_map(|n| self.ids.get(n).copied())
            .collect();
        while let Some(x) = work.pop() {
            if !seen[x] {
                seen[x] = true;
                work.extend(self.succ[x].iter().copied());
            }
        }
        seen
    }
}

/// What a function's callers need to know about it (§4.5's summary, plus exits).
#[derive(Clone, Debug)]
pub struct Summary {
    pub name: String,
    pub has_body: bool,
    /// The strictest requirement of uniform control flow at its call sites (`callSiteUnif`).
    pub call_site: Option<Need>,
    /// Per parameter: the strictest requirement that depends on it (`reqUnif`).
    pub params: Vec<Option<Need>>,
    /// Per parameter: whether the returned value depends on it (`affectsRet`).
    pub ret_params: Vec<bool>,
    /// Per level (warp, CTA): why the returned value may be non-uniform by itself
    /// (`retNonUnif`), as a chain inside the function.
    pub ret_nonuniform: [Option<Vec<Step>>; 2],
    /// Whether a call may end the thread (`exit`, `trap`).
    pub exits: bool,
    pub exit_params: Vec<bool>,
    pub exit_nonuniform: [Option<Vec<Step>>; 2],
}

impl Summary {
    /// The starting point of the fixpoint: nothing required, nothing non-uniform.
    pub fn initial(f: &Function) -> Summary {
        Summary {
            name: f.name.clone(),
            has_body: !f.body.is_empty(),
            call_site: None,
            params: vec![None; f.params.len()],
            ret_params: vec![false; f.params.len()],
            ret_nonuniform: [None, None],
            exits: false,
            exit_params: vec![false; f.params.len()],
            exit_nonuniform: [None, None],
        }
    }

    /// Equal in everything callers use except the explanatory chains.
    pub fn same_shape(&self, o: &Summary) -> bool {
        let lv = |n: &Option<Need>| n.as_ref().map(|n| n.level);
        lv(&self.call_site) == lv(&o.call_site)
            && self.params.iter().map(lv).eq(o.params.iter().map(lv))
            && self.ret_params == o.ret_params
            && self
                .ret_nonuniform
                .iter()
                .map(Option::is_some)
                .eq(o.ret_nonuniform.iter().map(Option::is_some))
            && self.exits == o.exits
            && self.exit_params == o.exit_params
            && self
                .exit_nonuniform
                .iter()
                .map(Option::is_some)
                .eq(o.exit_nonuniform.iter().map(Option::is_some))
    }
}

/// Functions with callees before callers (call-graph postorder from each function in module
/// order); cycles are broken arbitrarily and settled by the fixpoint.
pub(crate) fn callee_first_order(m: &Module) -> Vec<usize> {
    fn visit(m: &Module, f: usize, seen: &mut [bool], out: &mut Vec<usize>) {
        if seen[f] {
            return;
        }
        seen[f] = true;
        for inst in &m.functions[f].body {
            if let Op::Call { callee, .. } = &inst.op {
                for c in candidates(m, callee) {
                    visit(m, c, seen, out);
                }
            }
        }
        out.push(f);
    }
    let mut seen = vec![false; m.functions.len()];
    let mut out = Vec::new();
    for f in 0..m.functions.len() {
        visit(m, f, &mut seen, &mut out);
    }
    out
}

/// The possible callees; an indirect call without a target list may reach any device function.
fn candidates(m: &Module, c: &Callee) -> Vec<usize> {
    match c {
        Callee::Direct(id) => vec![id.0 as usize],
        Callee::Indirect { targets, .. } if !targets.is_empty() => {
            targets.iter().map(|t| t.0 as usize).collect()
        }
        Callee::Indirect { .. } => (0..m.functions.len())
            .filter(|&i| m.functions[i].kind == FuncKind::Func)
            .collect(),
    }
}

fn callee_name(m: &Module, f: &Function, c: &Callee) -> String {
    match c {
        Callee::Direct(id) => m.function(*id).name.clone(),
        Callee::Indirect { reg, .. } => f.regs[reg.0 as usize].name.clone(),
    }
}

fn dim(d: Dim) -> &'static str {
    match d {
        Dim::X => "x",
        Dim::Y => "y",
        Dim::Z => "z",
    }
}

fn special_name(s: SpecialReg) -> String {
    use SpecialReg::*;
    match s {
        Tid(d) => format!("%tid.{}", dim(d)),
        Ntid(d) => format!("%ntid.{}", dim(d)),
        Ctaid(d) => format!("%ctaid.{}", dim(d)),
        Nctaid(d) => format!("%nctaid.{}", dim(d)),
        LaneId => "%laneid".into(),
        WarpId => "%warpid".into(),
        NWarpId => "%nwarpid".into(),
        SmId => "%smid".into(),
        NSmId => "%nsmid".into(),
        GridId => "%gridid".into(),
        Clock => "%clock".into(),
        Clock64 => "%clock64".into(),
        ClockHi => "%clock_hi".into(),
        LanemaskEq => "%lanemask_eq".into(),
        LanemaskLe => "%lanemask_le".into(),
        LanemaskLt => "%lanemask_lt".into(),
        LanemaskGe => "%lanemask_ge".into(),
        LanemaskGt => "%lanemask_gt".into(),
        DynamicSmemSize => "%dynamic_smem_size".into(),
        TotalSmemSize => "%total_smem_size".into(),
        ClusterCtarank => "%cluster_ctarank".into(),
        ClusterNctarank => "%cluster_nctarank".into(),
        ClusterId(d) => format!("%clusterid.{}", dim(d)),
        NClusterId(d) => format!("%nclusterid.{}", dim(d)),
        ClusterCtaid(d) => format!("%cluster_ctaid.{}", dim(d)),
        ClusterNctaid(d) => format!("%cluster_nctaid.{}", dim(d)),
        IsExplicitCluster => "%is_explicit_cluster".into(),
        GlobalTimer => "%globaltimer".into(),
        GlobalTimerLo => "%globaltimer_lo".into(),
        GlobalTimerHi => "%globaltimer_hi".into(),
        WarpSz => "WARP_SZ".into(),
    }
}

/// A requirement at one instruction and the nodes that must be uniform for it.
struct Req {
    level: Level,
    span: gpusim_isa::Span,
    kind: FindingKind,
    /// The innermost instruction that needs uniformity (for summaries).
    need: Need,
    start: Vec<Node>,
}

struct Builder<'a> {
    m: &'a Module,
    f: &'a Function,
    flow: Flow,
    reach: Reaching,
    def_at: HashMap<(Pc, RegId), usize>,
    g: Graph,
    sources: HashMap<Node, (Levels, Source)>,
    reqs: Vec<Req>,
}

impl Builder<'_> {
    fn operand(&self, pc: usize, op: Operand) -> Vec<Node> {
        match op {
            Operand::Reg(r) | Operand::NotReg(r) => {
                self.reach.reaching(pc, r).map(Node::Def).collect()
            }
            Operand::Special(s) if !special_is_uniform(s) => vec![Node::Special(s)],
            Operand::Special(_) | Operand::Imm(_) | Operand::Symbol(_) | Operand::Func(_) => {
                vec![]
            }
        }
    }

    /// A call argument: a `.param` variable's contents or a register.
    fn argument(&self, pc: usize, op: Operand) -> Vec<Node> {
        match op {
            Operand::Symbol(s) => vec![Node::Var(s)],
            other => self.operand(pc, other),
        }
    }

    fn add_source(&mut self, n: Node, levels: Levels, s: Source) {
        let e = self.sources.entry(n).or_insert((levels, s));
        e.0 = [e.0[0] || levels[0], e.0[1] || levels[1]];
    }

    fn instruction(&mut self, pc: usize, e: &Effect, summaries: &[Summary]) {
        let f = self.f;
        let inst = &f.body[pc];
        let p = pc as Pc;
        for &x in &self.flow.controllers[pc].clone() {
            self.g.edge(Node::Cf(p), Node::Decision(x));
        }
        let mut ctl = vec![Node::Cf(p)];
        if let Some(gd) = inst.guard {
            let defs = self.operand(pc, Operand::Reg(gd.reg));
            self.g.edges(Node::Guard(p), &defs);
            ctl.push(Node::Guard(p));
        }
        if self.flow.succ[pc].len() >= 2 {
            self.g.edges(Node::Decision(p), &ctl);
            if let Op::BrxIdx { index, .. } = &inst.op {
                let idx = self.operand(pc, *index);
                self.g.edges(Node::Decision(p), &idx);
            }
        }
        let reads: Vec<Node> = e.reads.iter().flat_map(|&o| self.operand(pc, o)).collect();
        for &r in &e.writes {
            let d = Node::Def(self.def_at[&(p, r)]);
            self.g.edges(d, &ctl);
            match &e.origin {
                None => self.g.edges(d, &reads),
                Some(ValueOrigin::Source(k)) => {
                    let s = match k {
                        SourceKind::Special(s) => Source::Special(special_name(*s)),
                        SourceKind::Load(space) => Source::Load {
                            space: space.name(),
                            span: inst.span,
                        },
                        SourceKind::Atomic => Source::Atomic { span: inst.span },
                        SourceKind::Collective(what) => Source::Collective {
                            what,
                            span: inst.span,
                        },
                        SourceKind::IndirectParam => Source::IndirectParam { span: inst.span },
                    };
                    self.add_source(Node::Src(p, 0), k.levels(), s);
                    self.g.edge(d, Node::Src(p, 0));
                }
                Some(ValueOrigin::CtaReduction) => {}
                Some(ValueOrigin::ParamVar(s)) => self.g.edge(d, Node::Var(*s)),
            }
        }
        if let Some(s) = e.param_store {
            self.g.edges(Node::Var(s), &ctl);
            self.g.edges(Node::Var(s), &reads);
        }
        if let Some(rq) = &e.requirement {
            let mut start = ctl.clone();
            for &o in &e.required_operands {
                start.extend(self.operand(pc, o));
            }
            let kind = if rq.what.starts_with("bar") && rq.what != "bar.warp.sync" {
                FindingKind::Barrier(rq.what)
            } else {
                FindingKind::Collective(rq.what)
            };
            let need = Need {
                level: rq.level,
                what: rq.what,
                function: f.name.clone(),
                span: inst.span,
            };
            self.reqs.push(Req {
                level: rq.level,
                span: inst.span,
                kind,
                need,
                start,
            });
        }
        match &inst.op {
            Op::Exit | Op::Trap => self.g.edges(Node::ExitCond, &ctl),
            Op::Call {
                callee, rets, args, ..
            } => self.call(pc, callee, rets, args, &ctl, summaries),
            _ => {}
        }
    }

    fn call(
        &mut self,
        pc: usize,
        callee: &Callee,
        rets: &[SymbolId],
        args: &[Operand],
        ctl: &[Node],
        summaries: &[Summary],
    ) {
        let (m, f) = (self.m, self.f);
        let p = pc as Pc;
        let span = f.body[pc].span;
        let name = callee_name(m, f, callee);
        let ret = Node::CallRet(p);
        self.g.edges(ret, ctl);
        for &s in rets {
            self.g.edge(Node::Var(s), ret);
        }
        let cands = candidates(m, callee);
        for &c in &cands {
            let sm = &summaries[c];
            let args_of = |b: &Builder, i: usize| -> Vec<Node> {
                args.get(i).map_or(vec![], |&a| b.argument(pc, a))
            };
            if !sm.has_body {
                let src = Source::Opaque {
                    callee: sm.name.clone(),
                    span,
                };
                self.add_source(Node::Src(p, 1), [true, true], src);
                self.g.edge(ret, Node::Src(p, 1));
                continue;
            }
            for (i, _) in sm.ret_params.iter().enumerate().filter(|(_, &b)| b) {
                let a = args_of(self, i);
                self.g.edges(ret, &a);
            }
            let levels = [
                sm.ret_nonuniform[0].is_some(),
                sm.ret_nonuniform[1].is_some(),
            ];
            if let Some(chain) = sm.ret_nonuniform[1]
                .as_ref()
                .or(sm.ret_nonuniform[0].as_ref())
            {
                let src = Source::Callee {
                    callee: sm.name.clone(),
                    span,
                    exit: false,
                    chain: chain.clone(),
                };
                self.add_source(Node::Src(p, 1), levels, src);
                self.g.edge(ret, Node::Src(p, 1));
            }
            if sm.exits {
                let dec = Node::Decision(p);
                self.g.edges(dec, ctl);
                self.g.edge(Node::ExitCond, dec);
                for (i, _) in sm.exit_params.iter().enumerate().filter(|(_, &b)| b) {
                    let a = args_of(self, i);
                    self.g.edges(dec, &a);
                }
                let levels = [
                    sm.exit_nonuniform[0].is_some(),
                    sm.exit_nonuniform[1].is_some(),
                ];
                if let Some(chain) = sm.exit_nonuniform[1]
                    .as_ref()
                    .or(sm.exit_nonuniform[0].as_ref())
                {
                    let src = Source::Callee {
                        callee: sm.name.clone(),
                        span,
                        exit: true,
                        chain: chain.clone(),
                    };
                    self.add_source(Node::Src(p, 2), levels, src);
                    self.g.edge(dec, Node::Src(p, 2));
                }
            }
            if let Some(need) = &sm.call_site {
                self.reqs.push(Req {
                    level: need.level,
                    span,
                    kind: FindingKind::Call {
                        callee: sm.name.clone(),
                        need: need.clone(),
                    },
                    need: need.clone(),
                    start: ctl.to_vec(),
                });
            }
            for (i, need) in sm.params.iter().enumerate() {
                if let Some(need) = need {
                    let start = args_of(self, i);
                    self.reqs.push(Req {
                        level: need.level,
                        span,
                        kind: FindingKind::Argument {
                            callee: sm.name.clone(),
                            index: i,
                            need: need.clone(),
                        },
                        need: need.clone(),
                        start,
                    });
                }
            }
        }
        if cands.is_empty() {
            let src = Source::Opaque { callee: name, span };
            self.add_source(Node::Src(p, 1), [true, true], src);
            self.g.edge(ret, Node::Src(p, 1));
        }
    }

    /// The nodes that reach a source non-uniform at `level` (reverse search from the sources).
    fn tainted(&self, level: Level) -> Vec<bool> {
        let n = self.g.nodes.len();
        let mut pred = vec![Vec::new(); n];
        for (a, ss) in self.g.succ.iter().enumerate() {
            for &b in ss {
                pred[b].push(a);
            }
        }
        let mut t = vec![false; n];
        let mut work: Vec<usize> = (0..n).filter(|&i| self.is_source(i, level)).collect();
        while let Some(x) = work.pop() {
            if !t[x] {
                t[x] = true;
                work.extend(pred[x].iter().copied());
            }
        }
        t
    }

    fn is_source(&self, i: usize, level: Level) -> bool {
        let node = self.g.nodes[i];
        match node {
            Node::Def(d) => self.reach.defs[d].pc.is_none(),
            Node::Special(s) => SourceKind::Special(s).levels()[level.index()],
            _ => self
                .sources
                .get(&node)
                .is_some_and(|(l, _)| l[level.index()]),
        }
    }

    /// The shortest chain from `start` to a source through tainted nodes.
    fn chain(&self, start: &[Node], level: Level, tainted: &[bool]) -> Option<Vec<Step>> {
        let mut parent: HashMap<usize, Option<usize>> = HashMap::new();
        let mut q = VecDeque::new();
        for n in start {
            if let Some(&i) = self.g.ids.get(n) {
                if tainted[i] && !parent.contains_key(&i) {
                    parent.insert(i, None);
                    q.push_back(i);
                }
            }
        }
        while let Some(x) = q.pop_front() {
            if self.is_source(x, level) {
                let mut path = vec![x];
                let mut c = x;
                while let Some(Some(pp)) = parent.get(&c) {
                    path.push(*pp);
                    c = *pp;
                }
                path.reverse();
                return Some(self.steps(&path));
            }
            for &y in &self.g.succ[x] {
                if tainted[y] && !parent.contains_key(&y) {
                    parent.insert(y, Some(x));
                    q.push_back(y);
                }
            }
        }
        None
    }

    fn reg_name(&self, r: RegId) -> String {
        self.f.regs[r.0 as usize].name.clone()
    }

    fn steps(&self, path: &[usize]) -> Vec<Step> {
        let f = self.f;
        let mut out = Vec::new();
        let mut guarded = false;
        for &i in path {
            let node = self.g.nodes[i];
            match node {
                Node::Cf(_) | Node::Ret | Node::ExitCond => {}
                Node::Guard(_) => {
                    // Only the flagged instruction's own guard reads "is guarded by"; a
                    // decision's guard is the value it branches on.
                    guarded = out.is_empty();
                    continue;
                }
                Node::Decision(pc) => {
                    let inst = &f.body[pc as usize];
                    let guard = inst.guard.map(|g| self.reg_name(g.reg));
                    let (what, on) = match &inst.op {
                        Op::Bra { .. } => ("branch".to_string(), guard),
                        Op::BrxIdx { index, .. } => {
                            let on = match index {
                                Operand::Reg(r) => Some(self.reg_name(*r)),
                                _ => guard,
                            };
                            ("brx.idx".to_string(), on)
                        }
                        Op::Ret { .. } => ("return".to_string(), guard),
                        Op::Exit => ("exit".to_string(), guard),
                        Op::Trap => ("trap".to_string(), guard),
                        Op::Call { callee, .. } => (
                            format!(
                                "call to `{}` (which may exit)",
                                callee_name(self.m, f, callee)
                            ),
                            guard,
                        ),
                        _ => ("branch".to_string(), guard),
                    };
                    out.push(Step::Branch {
                        what,
                        span: inst.span,
                        on,
                    });
                }
                Node::Def(d) => {
                    let def = self.reach.defs[d];
                    let reg = self.reg_name(def.reg);
                    out.push(match def.pc {
                        None => Step::Source(Source::Undefined { reg }),
                        Some(pc) => {
                            let span = f.body[pc as usize].span;
                            if guarded {
                                Step::Guard { reg, span }
                            } else {
                                Step::Value { reg, span }
                            }
                        }
                    });
                }
                Node::Special(s) => out.push(Step::Source(Source::Special(special_name(s)))),
                Node::Src(..) => {
                    if let Some((_, s)) = self.sources.get(&node) {
                        out.push(Step::Source(s.clone()));
                    }
                }
                Node::Var(s) => out.push(Step::Param {
                    name: self.m.symbol(s).name.clone(),
                }),
                Node::CallRet(pc) => {
                    let inst = &f.body[pc as usize];
                    let callee = match &inst.op {
                        Op::Call { callee, .. } => callee_name(self.m, f, callee),
                        _ => String::new(),
                    };
                    out.push(Step::CallResult {
                        callee,
                        span: inst.span,
                    });
                }
            }
            guarded = false;
        }
        out
    }
}

/// Analyse function `fi` with the current summaries of its callees.
pub(crate) fn analyze_function(
    m: &Module,
    fi: usize,
    summaries: &[Summary],
) -> (Summary, Vec<Finding>) {
    let f = &m.functions[fi];
    let mut summary = Summary::initial(f);
    if f.body.is_empty() {
        return (summary, Vec::new());
    }
    let in_entry = f.kind == FuncKind::Entry;
    let effects: Vec<Effect> = f.body.iter().map(|i| effect(i, in_entry)).collect();
    let may_exit = |pc: Pc| match &f.body[pc as usize].op {
        Op::Call { callee, .. } => candidates(m, callee).iter().any(|&c| summaries[c].exits),
        _ => false,
    };
    let flow = Flow::build(f, may_exit);
    let writes: Vec<Vec<RegId>> = effects.iter().map(|e| e.writes.clone()).collect();
    let reach = Reaching::compute(f, &flow, &writes);
    let def_at = reach
        .defs
        .iter()
        .enumerate()
        .filter_map(|(i, d)| d.pc.map(|pc| ((pc, d.reg), i)))
        .collect();
    let mut b = Builder {
        m,
        f,
        flow,
        reach,
        def_at,
        g: Graph::default(),
        sources: HashMap::new(),
        reqs: Vec::new(),
    };
    for (pc, e) in effects.iter().enumerate() {
        if b.flow.reachable[pc] {
            b.instruction(pc, e, summaries);
            summary.exits |= matches!(f.body[pc].op, Op::Exit | Op::Trap) || may_exit(pc as Pc);
        }
    }
    for r in &f.rets {
        b.g.edge(Node::Ret, Node::Var(r.symbol));
    }
    let tainted = [b.tainted(Level::Warp), b.tainted(Level::Cta)];

    let mut findings = Vec::new();
    for r in &b.reqs {
        if let Some(chain) = b.chain(&r.start, r.level, &tainted[r.level.index()]) {
            findings.push(Finding {
                file: m.file.clone(),
                function: f.name.clone(),
                kind: r.kind.clone(),
                span: r.span,
                level: r.level,
                chain,
            });
        }
    }

    // Summary (§4.5), read off the graph. Kernels cannot be called, so only device functions
    // need the reachability searches.
    if f.kind == FuncKind::Func {
        let param_nodes: Vec<Node> = f.params.iter().map(|p| Node::Var(p.symbol)).collect();
        let reaches = |seen: &[bool]| -> Vec<bool> {
            param_nodes
                .iter()
                .map(|n| b.g.ids.get(n).is_some_and(|&i| seen[i]))
                .collect()
        };
        for r in &b.reqs {
            if matches!(r.kind, FindingKind::Argument { .. }) {
                // An argument requirement constrains a value, not the call site's control.
            } else if summary.call_site.as_ref().is_none_or(|n| n.level < r.level) {
                summary.call_site = Some(r.need.clone());
            }
            for (i, hit) in reaches(&b.g.forward(&r.start)).into_iter().enumerate() {
                let slot = &mut summary.params[i];
                if hit && slot.as_ref().is_none_or(|n| n.level < r.level) {
                    *slot = Some(r.need.clone());
                }
            }
        }
        summary.ret_params = reaches(&b.g.forward(&[Node::Ret]));
        summary.exit_params = reaches(&b.g.forward(&[Node::ExitCond]));
        for l in Level::ALL {
            summary.ret_nonuniform[l.index()] = b.chain(&[Node::Ret], l, &tainted[l.index()]);
            summary.exit_nonuniform[l.index()] = b.chain(&[Node::ExitCond], l, &tainted[l.index()]);
        }
    }
    (summary, findings)
}
