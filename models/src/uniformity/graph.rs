//! The uniformity graph of one function (the paper's UG_func, §4.5): building it from the
//! instructions' effects, the control regions and reaching definitions; finding the
//! requirements that reach a source (`MustBeUnif →* MayBeNonUnif`) with the shortest chain of
//! dependences; and reading the function's summary off the graph for its callers.

use super::effects::{effect, special_is_uniform, Effect, Level, Levels, SourceKind, ValueOrigin};
use super::flow::{CfDep, Flow, Val, Values};
use super::groups::{self, Assumption, Blocks};
use super::{Finding, FindingKind, Need, Source, Step};
use gpusim_isa::{
    Callee, Dim, FuncKind, Function, Module, Op, Operand, Pc, RegId, SpecialReg, SymbolId,
};
use std::collections::{HashMap, VecDeque};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Node {
    /// A register definition (index into `Values::defs`).
    Def(usize),
    /// A join of register values where control flow merges (index into `Values::joins`): it
    /// stands for the definitions that reach there, and is skipped in chains.
    Join(usize),
    /// `floor(%tid.x / k)`: a source, non-uniform at the levels `groups::quotient_levels`
    /// gives.
    Quotient(u32),
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
    edges: usize,
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
        self.edges += 1;
    }
    fn edges(&mut self, a: Node, bs: &[Node]) {
        for &b in bs {
            self.edge(a, b);
        }
    }
    /// Each node's predecessors.
    fn preds(&self) -> Vec<Vec<usize>> {
        let mut pred = vec![Vec::new(); self.nodes.len()];
        for (a, ss) in self.succ.iter().enumerate() {
            for &b in ss {
                pred[b].push(a);
            }
        }
        pred
    }

    /// The nodes from which `target` is reachable.
    fn reaching(&self, pred: &[Vec<usize>], target: Node) -> Vec<bool> {
        let mut seen = vec![false; self.nodes.len()];
        let mut work: Vec<usize> = self.ids.get(&target).copied().into_iter().collect();
        while let Some(x) = work.pop() {
            if !seen[x] {
                seen[x] = true;
                work.extend(pred[x].iter().copied());
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
    /// Per level (warp, warpgroup, CTA): why the returned value may be non-uniform by itself
    /// (`retNonUnif`), as a chain inside the function.
    pub ret_nonuniform: [Option<Vec<Step>>; 3],
    /// Whether a call may end the thread (`exit`, `trap`).
    pub exits: bool,
    pub exit_params: Vec<bool>,
    pub exit_nonuniform: [Option<Vec<Step>>; 3],
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
            ret_nonuniform: [None, None, None],
            exits: false,
            exit_params: vec![false; f.params.len()],
            exit_nonuniform: [None, None, None],
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
    vals: Values,
    /// `Some(k)` where a value is exactly `floor(%tid.x / k)` (`groups`), per definition and
    /// per join.
    def_quotient: Vec<Option<u32>>,
    join_quotient: Vec<Option<u32>>,
    blocks: &'a Blocks,
    assume_rows: bool,
    assumptions: Vec<Assumption>,
    g: Graph,
    sources: HashMap<Node, (Levels, Source)>,
    reqs: Vec<Req>,
}

impl Builder<'_> {
    fn operand(&mut self, pc: usize, op: Operand) -> Vec<Node> {
        match op {
            Operand::Reg(r) | Operand::NotReg(r) => {
                let v = self
                    .vals
                    .value(pc, r)
                    .expect("every register an instruction reads has a value");
                if let Some(k) = self.quotient(v) {
                    let g = groups::group_read(&self.f.body[pc], k);
                    if g >= 2 {
                        return vec![self.quotient_source(pc, g)];
                    }
                }
                vec![match v {
                    Val::Def(d) => Node::Def(d),
                    Val::Join(j) => Node::Join(j),
                }]
            }
            Operand::Special(s) if !special_is_uniform(s) => vec![Node::Special(s)],
            Operand::Special(_) | Operand::Imm(_) | Operand::Symbol(_) | Operand::Func(_) => {
                vec![]
            }
        }
    }

    fn quotient(&self, v: Val) -> Option<u32> {
        match v {
            Val::Def(d) => self.def_quotient[d],
            Val::Join(j) => self.join_quotient[j],
        }
    }

    /// The source node of `floor(%tid.x / k)` read at `pc`, with its levels.
    fn quotient_source(&mut self, pc: usize, k: u32) -> Node {
        let (levels, assumed) = groups::quotient_levels(k, self.blocks, self.assume_rows);
        if let Some(level) = assumed {
            let line = self.f.body[pc].span.line;
            match self
                .assumptions
                .iter_mut()
                .find(|a| a.k == k && a.level == level)
            {
                Some(a) if a.lines.contains(&line) => {}
                Some(a) => a.lines.push(line),
                None => self.assumptions.push(Assumption {
                    file: self.m.file.clone(),
                    function: self.f.name.clone(),
                    k,
                    level,
                    lines: vec![line],
                }),
            }
        }
        let n = Node::Quotient(k);
        self.add_source(n, levels, Source::Quotient { k });
        n
    }

    /// A call argument: a `.param` variable's contents or a register.
    fn argument(&mut self, pc: usize, op: Operand) -> Vec<Node> {
        match op {
            Operand::Symbol(s) => vec![Node::Var(s)],
            other => self.operand(pc, other),
        }
    }

    fn add_source(&mut self, n: Node, levels: Levels, s: Source) {
        let e = self.sources.entry(n).or_insert((levels, s));
        for (a, b) in e.0.iter_mut().zip(levels) {
            *a |= b;
        }
    }

    fn instruction(&mut self, pc: usize, e: &Effect, summaries: &[Summary]) {
        let f = self.f;
        let inst = &f.body[pc];
        let p = pc as Pc;
        for k in 0..self.flow.deps[pc].len() {
            let to = match self.flow.deps[pc][k] {
                CfDep::Decision(x) => Node::Decision(x),
                CfDep::Cf(z) => Node::Cf(z),
            };
            self.g.edge(Node::Cf(p), to);
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
        let mut reads: Vec<Node> = Vec::new();
        for &o in &e.reads {
            let nodes = self.operand(pc, o);
            reads.extend(nodes);
        }
        for &r in &e.writes {
            let d = Node::Def(self.vals.def_at[&(p, r)]);
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
                let nodes = self.operand(pc, o);
                start.extend(nodes);
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
            let args_of = |b: &mut Builder, i: usize| -> Vec<Node> {
                args.get(i).map_or(vec![], |&a| b.argument(pc, a))
            };
            if !sm.has_body {
                let src = Source::Opaque {
                    callee: sm.name.clone(),
                    span,
                };
                self.add_source(Node::Src(p, 1), [true; 3], src);
                self.g.edge(ret, Node::Src(p, 1));
                continue;
            }
            for (i, _) in sm.ret_params.iter().enumerate().filter(|(_, &b)| b) {
                let a = args_of(self, i);
                self.g.edges(ret, &a);
            }
            let levels = sm.ret_nonuniform.each_ref().map(Option::is_some);
            if let Some(chain) = sm.ret_nonuniform.iter().rev().flatten().next() {
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
                let levels = sm.exit_nonuniform.each_ref().map(Option::is_some);
                if let Some(chain) = sm.exit_nonuniform.iter().rev().flatten().next() {
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
            self.add_source(Node::Src(p, 1), [true; 3], src);
            self.g.edge(ret, Node::Src(p, 1));
        }
    }

    /// Each node's distance to the nearest source non-uniform at `level` along the edges (a
    /// 0-1 search backwards from the sources: entering a join costs nothing, as it only stands
    /// for the definitions it joins); `u32::MAX` where no source is reachable, i.e. the node
    /// may be taken as uniform.
    fn distances(&self, pred: &[Vec<usize>], level: Level) -> Vec<u32> {
        let n = self.g.nodes.len();
        let mut dist = vec![u32::MAX; n];
        let mut q = VecDeque::new();
        for i in (0..n).filter(|&i| self.is_source(i, level)) {
            dist[i] = 0;
            q.push_back(i);
        }
        while let Some(b) = q.pop_front() {
            let cost = self.cost(b);
            let d = dist[b] + cost;
            for &a in &pred[b] {
                if d < dist[a] {
                    dist[a] = d;
                    if cost == 0 {
                        q.push_front(a);
                    } else {
                        q.push_back(a);
                    }
                }
            }
        }
        dist
    }

    /// The length a node adds to a chain: joins are transparent.
    fn cost(&self, i: usize) -> u32 {
        u32::from(!matches!(self.g.nodes[i], Node::Join(_)))
    }

    fn is_source(&self, i: usize, level: Level) -> bool {
        let node = self.g.nodes[i];
        match node {
            Node::Def(d) => self.vals.defs[d].pc.is_none(),
            Node::Special(s) => SourceKind::Special(s).levels()[level.index()],
            _ => self
                .sources
                .get(&node)
                .is_some_and(|(l, _)| l[level.index()]),
        }
    }

    /// The shortest chain from `start` to a source (`dist` from `distances` at `level`): the
    /// start nearest to a source, then at each step the first successor one step nearer.
    fn chain(&self, start: &[Node], level: Level, dist: &[u32]) -> Option<Vec<Step>> {
        // A start node that is a join stands for its definitions, which all start the search.
        let eff = |i: usize| dist[i].saturating_sub(1 - self.cost(i));
        let first = start
            .iter()
            .filter_map(|n| self.g.ids.get(n).copied())
            .filter(|&i| dist[i] != u32::MAX)
            .min_by_key(|&i| eff(i))?;
        let mut path = vec![first];
        let mut x = first;
        while !self.is_source(x, level) {
            // dist[x] = min over successors of cost + dist: one of them attains it.
            let next = self.g.succ[x]
                .iter()
                .copied()
                .find(|&y| dist[y] != u32::MAX && dist[y] + self.cost(y) == dist[x])?;
            path.push(next);
            x = next;
        }
        Some(self.steps(&path))
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
                Node::Cf(_) | Node::Join(_) | Node::Ret | Node::ExitCond => {}
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
                    let def = self.vals.defs[d];
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
                Node::Src(..) | Node::Quotient(_) => {
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

/// The size of what the analysis of one function builds, for complexity checks: every pass
/// (control dependences, values, the graph, the searches over it) is linear in these.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphSize {
    pub instructions: usize,
    /// Control dependences (`flow::CfDep`s).
    pub control: usize,
    /// Definitions, joins and join inputs.
    pub values: usize,
    pub nodes: usize,
    pub edges: usize,
}

impl GraphSize {
    pub fn total(&self) -> usize {
        self.control + self.values + self.nodes + self.edges
    }
}

/// What analysing one function gives.
pub(crate) struct FunctionAnalysis {
    pub summary: Summary,
    pub findings: Vec<Finding>,
    pub assumptions: Vec<Assumption>,
    pub size: GraphSize,
}

/// The registers instruction `inst` (with its effect `e`) reads: its guard, its operands, the
/// operands a requirement needs uniform, and a call's arguments.
fn read_regs(inst: &gpusim_isa::Inst, e: &Effect) -> Vec<RegId> {
    let mut out = Vec::new();
    let mut add = |o: &Operand| {
        if let Operand::Reg(r) | Operand::NotReg(r) = o {
            if !out.contains(r) {
                out.push(*r);
            }
        }
    };
    if let Some(g) = inst.guard {
        add(&Operand::Reg(g.reg));
    }
    e.reads
        .iter()
        .chain(&e.required_operands)
        .for_each(&mut add);
    if let Op::Call { args, callee, .. } = &inst.op {
        args.iter().for_each(&mut add);
        if let Callee::Indirect { reg, .. } = callee {
            add(&Operand::Reg(*reg));
        }
    }
    out
}

/// Which values are exactly `floor(%tid.x / k)` (`groups::quotient_written`), per definition
/// and per join: an optimistic fixpoint over the values (unknown until an input is known, as
/// in sparse conditional constant propagation), so a loop that carries a quotient around
/// unchanged keeps it. A join is a quotient when all its inputs are the same one; what is still
/// unknown at the end (a cycle with no quotient entering it) is not one.
fn quotients(
    f: &Function,
    flow: &Flow,
    vals: &Values,
    writes: &[Vec<RegId>],
) -> (Vec<Option<u32>>, Vec<Option<u32>>) {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Q {
        Unknown,
        Exact(u32),
        Not,
    }
    let nd = vals.defs.len();
    let index = |v: Val| match v {
        Val::Def(d) => d,
        Val::Join(j) => nd + j,
    };
    let mut q = vec![Q::Unknown; nd + vals.joins.len()];
    // Undefined registers on entry are no quotient.
    for (x, def) in q.iter_mut().zip(&vals.defs) {
        if def.pc.is_none() {
            *x = Q::Not;
        }
    }
    // Who reads each value: the instruction (its definitions) or a join.
    #[derive(Clone, Copy)]
    enum User {
        Inst(usize),
        Join(usize),
    }
    let mut users: Vec<Vec<User>> = vec![Vec::new(); q.len()];
    for &pc in &flow.rpo {
        for (_, v) in vals.uses_at(pc) {
            users[index(*v)].push(User::Inst(pc));
        }
    }
    for (j, inputs) in vals.joins.iter().enumerate() {
        for &v in inputs {
            users[index(v)].push(User::Join(j));
        }
    }
    let mut work: Vec<User> = flow.rpo.iter().map(|&pc| User::Inst(pc)).collect();
    work.reverse();
    work.extend((0..vals.joins.len()).map(User::Join));
    while let Some(u) = work.pop() {
        let (targets, new): (Vec<usize>, Q) = match u {
            User::Inst(pc) => {
                let inst = &f.body[pc];
                let mut unknown = false;
                let mut of = |o: &Operand| match o {
                    Operand::Reg(r) => match q[index(vals.value(pc, *r)?)] {
                        Q::Exact(k) => Some(k),
                        Q::Unknown => {
                            unknown = true;
                            None
                        }
                        Q::Not => None,
                    },
                    _ => None,
                };
                let k = groups::quotient_written(inst, &mut of);
                let new = match (k, unknown) {
                    (Some(k), _) => Q::Exact(k),
                    (None, true) => Q::Unknown,
                    (None, false) => Q::Not,
                };
                let t = writes[pc]
                    .iter()
                    .map(|r| vals.def_at[&(pc as Pc, *r)])
                    .collect();
                (t, new)
            }
            User::Join(j) => {
                let mut acc = Q::Unknown;
                for &v in &vals.joins[j] {
                    acc = match (acc, q[index(v)]) {
                        (a, Q::Unknown) => a,
                        (Q::Unknown, b) => b,
                        (Q::Exact(a), Q::Exact(b)) if a == b => Q::Exact(a),
                        _ => Q::Not,
                    };
                }
                (vec![nd + j], acc)
            }
        };
        for t in targets {
            // Values only fall: unknown → a quotient → not one.
            let merged = match (q[t], new) {
                (Q::Not, _) | (_, Q::Not) => Q::Not,
                (Q::Exact(a), Q::Exact(b)) if a != b => Q::Not,
                (Q::Exact(a), _) => Q::Exact(a),
                (Q::Unknown, b) => b,
            };
            if merged != q[t] {
                q[t] = merged;
                work.extend(users[t].iter().copied());
            }
        }
    }
    let known = |x: &Q| match x {
        Q::Exact(k) => Some(*k),
        _ => None,
    };
    (
        q[..nd].iter().map(known).collect(),
        q[nd..].iter().map(known).collect(),
    )
}

/// Analyse function `fi` with the current summaries of its callees.
pub(crate) fn analyze_function(
    m: &Module,
    fi: usize,
    summaries: &[Summary],
    blocks: &Blocks,
    assume_rows: bool,
) -> FunctionAnalysis {
    let f = &m.functions[fi];
    let mut summary = Summary::initial(f);
    if f.body.is_empty() {
        return FunctionAnalysis {
            summary,
            findings: Vec::new(),
            assumptions: Vec::new(),
            size: GraphSize::default(),
        };
    }
    let in_entry = f.kind == FuncKind::Entry;
    let effects: Vec<Effect> = f.body.iter().map(|i| effect(i, in_entry)).collect();
    let may_exit = |pc: Pc| match &f.body[pc as usize].op {
        Op::Call { callee, .. } => candidates(m, callee).iter().any(|&c| summaries[c].exits),
        _ => false,
    };
    let flow = Flow::build(f, may_exit);
    let writes: Vec<Vec<RegId>> = effects.iter().map(|e| e.writes.clone()).collect();
    let reads: Vec<Vec<RegId>> = f
        .body
        .iter()
        .zip(&effects)
        .map(|(i, e)| read_regs(i, e))
        .collect();
    let vals = Values::compute(f, &flow, &writes, &reads);
    let (def_quotient, join_quotient) = quotients(f, &flow, &vals, &writes);
    let mut b = Builder {
        m,
        f,
        flow,
        vals,
        def_quotient,
        join_quotient,
        blocks,
        assume_rows,
        assumptions: Vec::new(),
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
    for j in 0..b.vals.joins.len() {
        for k in 0..b.vals.joins[j].len() {
            let to = match b.vals.joins[j][k] {
                Val::Def(d) => Node::Def(d),
                Val::Join(i) => Node::Join(i),
            };
            b.g.edge(Node::Join(j), to);
        }
    }
    let pred = b.g.preds();
    let dist = Level::ALL.map(|l| b.distances(&pred, l));

    let mut findings = Vec::new();
    for r in &b.reqs {
        if let Some(chain) = b.chain(&r.start, r.level, &dist[r.level.index()]) {
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
    // need the reachability searches: one backward search per parameter.
    if f.kind == FuncKind::Func {
        let param_nodes: Vec<Node> = f.params.iter().map(|p| Node::Var(p.symbol)).collect();
        let reach_param: Vec<Vec<bool>> = param_nodes
            .iter()
            .map(|&n| b.g.reaching(&pred, n))
            .collect();
        let hits = |start: &[Node]| -> Vec<bool> {
            reach_param
                .iter()
                .map(|seen| {
                    start
                        .iter()
                        .any(|n| b.g.ids.get(n).is_some_and(|&i| seen[i]))
                })
                .collect()
        };
        for r in &b.reqs {
            if matches!(r.kind, FindingKind::Argument { .. }) {
                // An argument requirement constrains a value, not the call site's control.
            } else if summary.call_site.as_ref().is_none_or(|n| n.level < r.level) {
                summary.call_site = Some(r.need.clone());
            }
            for (i, hit) in hits(&r.start).into_iter().enumerate() {
                let slot = &mut summary.params[i];
                if hit && slot.as_ref().is_none_or(|n| n.level < r.level) {
                    *slot = Some(r.need.clone());
                }
            }
        }
        summary.ret_params = hits(&[Node::Ret]);
        summary.exit_params = hits(&[Node::ExitCond]);
        for l in Level::ALL {
            summary.ret_nonuniform[l.index()] = b.chain(&[Node::Ret], l, &dist[l.index()]);
            summary.exit_nonuniform[l.index()] = b.chain(&[Node::ExitCond], l, &dist[l.index()]);
        }
    }
    let size = GraphSize {
        instructions: f.body.len(),
        control: b.flow.deps.iter().map(Vec::len).sum(),
        values: b.vals.size(),
        nodes: b.g.nodes.len(),
        edges: b.g.edges,
    };
    FunctionAnalysis {
        summary,
        findings,
        assumptions: b.assumptions,
        size,
    }
}
