//! The SIMT-Step machine state `⟨M, Σ, D⟩` (paper §3, digest §1.4) and its step rules: dynamic
//! blocks with their merge stacks and unknown sets, `get_child`, `Align`, and the
//! independent (T-*), synchronous (Arrive/Execute) and collective (G-COLLECTIVE-*) rules.
//! Which rule an instruction uses comes from the `Variant`; choosing among enabled steps is
//! the enumerator's job (`enumerate.rs`).

use std::collections::BTreeMap;

use super::syntax::{ArrayId, BlockId, Env, Expr, InstKind, Litmus, Outcome, Pos, SgOp, TermKind};
use super::variant::{Mode, SgMode, Variant};
use super::EnumError;

pub(crate) type DbId = u32;
pub(crate) type Mask = u64;

fn bit(t: usize) -> Mask {
    1 << t
}

/// How a dynamic block came to exist; the unknown-set computation walks these links.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Origin {
    /// Initial rule: the entry DB of a subgroup.
    Root,
    /// Created by a branch out of `parent` (get_child steps 3–4): a thread reaches it only by
    /// choosing its label there.
    Child { parent: DbId },
    /// The merge DB of the header instance `header` (get_child steps 1–2): every thread of
    /// the header reaches it unless it leaves the construct or terminates.
    Merge { header: DbId },
}

/// A dynamic block (paper §3, digest §1.3). Thread sets are masks over global thread ids;
/// every DB belongs to one subgroup (the paper splits DB thread sets per subgroup).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Db {
    /// The subgroup whose threads this DB may hold.
    pub sg: u32,
    pub block: BlockId,
    pub origin: Origin,
    /// `db.ms`: `(merge label, merge DB)` entries of the enclosing constructs.
    pub ms: Vec<(BlockId, DbId)>,
    /// The stack this DB's children inherit: `ms` plus this header instance's own merge
    /// entries. Built on the first branch out, so a header pushes once per instance.
    pub child_ms: Option<Vec<(BlockId, DbId)>>,
    /// `db.C` for non-merge children, by label (Branching rule).
    pub children: Vec<(BlockId, DbId)>,
    /// Threads currently in the DB (`currentThreadSet` in the TLA+).
    pub present: Mask,
    /// Threads that ever entered it; at the end of a run this is `db.T`.
    pub entered: Mask,
    /// `db.sis`: program counters whose synchronous arrival has happened.
    pub synced: u64,
    /// Spec: an SG op fired speculatively here, so any later entry prunes the run.
    pub sealed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Thread {
    pub block: BlockId,
    /// 0 is the block's label, `1..=insts.len()` its instructions, then the terminator.
    pub pc: u32,
    pub db: DbId,
    pub regs: Vec<i64>,
    pub done: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct State {
    pub threads: Vec<Thread>,
    pub dbs: Vec<Db>,
    /// Locations never written and not initialised read as 0.
    pub mem: BTreeMap<(ArrayId, i64), i64>,
    /// Spec: undefined behaviour met by a speculative SG op. It is real only if the
    /// speculation is confirmed, so it is reported when the run completes unpruned.
    pub pending_ub: Option<(Pos, String)>,
}

/// What sits at a thread's program counter.
pub(crate) enum At<'a> {
    Label,
    Inst(&'a InstKind, Pos),
    Term(&'a TermKind, Pos),
}

/// A step the enumerator may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// One thread, one T-* (or synchronous Execute) rule.
    Thread(usize),
    /// One G-COLLECTIVE-* rule for every present thread of the DB.
    Group(DbId),
}

pub(crate) struct Machine<'a> {
    pub test: &'a Litmus,
    pub variant: Variant,
}

impl<'a> Machine<'a> {
    /// Initial state (digest §1.4): one entry DB per subgroup holding all its threads.
    pub fn initial(&self) -> State {
        let t = self.test;
        let groups = t.threads / t.subgroup;
        let mut dbs = Vec::new();
        for g in 0..groups {
            let all: Mask = (0..t.subgroup).fold(0, |m, l| m | bit(g * t.subgroup + l));
            dbs.push(Db {
                sg: g as u32,
                block: 0,
                origin: Origin::Root,
                ms: Vec::new(),
                child_ms: None,
                children: Vec::new(),
                present: all,
                entered: all,
                synced: 0,
                sealed: false,
            });
        }
        let threads = (0..t.threads)
            .map(|tid| Thread {
                block: 0,
                pc: self.entry_pc(),
                db: (tid / t.subgroup) as DbId,
                regs: vec![0; t.registers.len()],
                done: false,
            })
            .collect();
        State {
            threads,
            dbs,
            mem: t.init.clone(),
            pending_ub: None,
        }
    }

    /// Independent labels are no-ops, so a thread entering a block starts past the label;
    /// collective labels must be stepped over as a group (the "collective label" rule).
    fn entry_pc(&self) -> u32 {
        match self.variant.control() {
            Mode::Collective => 0,
            _ => 1,
        }
    }

    pub fn at(&self, s: &State, t: usize) -> At<'a> {
        let th = &s.threads[t];
        let b = &self.test.blocks[th.block as usize];
        let pc = th.pc as usize;
        if pc == 0 {
            At::Label
        } else if pc <= b.insts.len() {
            At::Inst(&b.insts[pc - 1].kind, b.insts[pc - 1].pos)
        } else {
            At::Term(&b.term.kind, b.term.pos)
        }
    }

    pub fn pos_of(&self, s: &State, t: usize) -> Pos {
        match self.at(s, t) {
            At::Label => self.test.blocks[s.threads[t].block as usize].pos,
            At::Inst(_, p) | At::Term(_, p) => p,
        }
    }

    fn eval(&self, s: &State, t: usize, e: &Expr, pos: Pos) -> Result<i64, EnumError> {
        let sgsize = self.test.subgroup;
        let env = Env {
            regs: &s.threads[t].regs,
            tid: t as i64,
            lane: (t % sgsize) as i64,
            sg: (t / sgsize) as i64,
        };
        e.eval(&env).ok_or_else(|| EnumError::Undefined {
            pos,
            msg: format!("thread {t}: division by zero"),
        })
    }

    fn subgroup_threads(&self, db: &Db) -> std::ops::Range<usize> {
        let g = db.sg as usize;
        g * self.test.subgroup..(g + 1) * self.test.subgroup
    }

    /// `db.U` (paper §4.3 "Unknown Thread Sets"): live threads of the subgroup that have not
    /// entered `d` and may still do so.
    pub fn unknown(&self, s: &State, d: DbId) -> Mask {
        let db = &s.dbs[d as usize];
        let mut u = 0;
        for t in self.subgroup_threads(db) {
            if !s.threads[t].done && db.entered & bit(t) == 0 && self.may_reach(s, t, d) {
                u |= bit(t);
            }
        }
        u
    }

    /// Whether thread `t` (not in `d`) can still enter `d`. Walk `d`'s creation links up to
    /// the deepest DB `t` entered: if `t` is still there it has not yet chosen; if it has
    /// moved on, it can only still arrive through a merge link whose construct it has not
    /// left (leaving a construct pops the merge entry from its stack: the TLA+'s
    /// "leaving a construct" rule, digest §1.5.6).
    fn may_reach(&self, s: &State, t: usize, d: DbId) -> bool {
        let mut child = d;
        loop {
            let (up, merge_link) = match s.dbs[child as usize].origin {
                Origin::Root => return false,
                Origin::Child { parent } => (parent, false),
                Origin::Merge { header } => (header, true),
            };
            let updb = &s.dbs[up as usize];
            if updb.entered & bit(t) != 0 {
                if updb.present & bit(t) != 0 {
                    return true;
                }
                let here = &s.dbs[s.threads[t].db as usize];
                return merge_link && here.ms.iter().any(|&(_, m)| m == child);
            }
            child = up;
        }
    }

    /// `Align(db, pc)` (paper Fig. 7, extended in §4.3): every present thread is at `pc` and
    /// no unknown thread may still join.
    pub fn align(&self, s: &State, d: DbId, pc: u32) -> bool {
        self.all_present_at(s, d, pc) && self.unknown(s, d) == 0
    }

    /// The Spec relaxation of `Align`: only the threads present now (paper §4.4).
    fn all_present_at(&self, s: &State, d: DbId, pc: u32) -> bool {
        let db = &s.dbs[d as usize];
        mask_iter(db.present).all(|t| s.threads[t].pc == pc)
    }

    /// The steps enabled in `s`, each tagged safe (commutes with, and cannot be disabled by,
    /// every other step — see `enumerate.rs`) or not.
    pub fn enabled(&self, s: &State) -> Vec<(Step, bool)> {
        let v = self.variant;
        let mut out: Vec<(Step, bool)> = Vec::new();
        let group = |out: &mut Vec<(Step, bool)>, d: DbId, safe: bool| {
            if !out.iter().any(|(st, _)| *st == Step::Group(d)) {
                out.push((Step::Group(d), safe));
            }
        };
        for t in 0..s.threads.len() {
            let th = &s.threads[t];
            if th.done {
                continue;
            }
            let (d, pc) = (th.db, th.pc);
            match self.at(s, t) {
                // Collective label: only reached with collective control flow.
                At::Label => {
                    if self.align(s, d, 0) {
                        group(&mut out, d, true);
                    }
                }
                At::Inst(InstKind::Local { .. }, _) => out.push((Step::Thread(t), true)),
                At::Inst(InstKind::Load { .. } | InstKind::Store { .. }, _) => match v.memory() {
                    Mode::Independent => out.push((Step::Thread(t), false)),
                    // Arrive (sets sis) and Execute merged: the first executor performs the
                    // arrival, which is enabled exactly when Align holds.
                    Mode::Synchronous => {
                        if s.dbs[d as usize].synced & (1 << pc) != 0 || self.align(s, d, pc) {
                            out.push((Step::Thread(t), false));
                        }
                    }
                    Mode::Collective => {
                        if self.align(s, d, pc) {
                            group(&mut out, d, false);
                        }
                    }
                },
                At::Inst(InstKind::Sg { .. }, _) => match v.subgroup() {
                    SgMode::Collective => {
                        if self.align(s, d, pc) {
                            group(&mut out, d, true);
                        }
                    }
                    SgMode::Speculative => {
                        if self.all_present_at(s, d, pc) {
                            group(&mut out, d, false);
                        }
                    }
                },
                At::Term(kind, _) => match v.control() {
                    Mode::Collective => {
                        if self.align(s, d, pc) {
                            group(&mut out, d, true);
                        }
                    }
                    _ => {
                        // Under Spec, entering a DB can be pruned by (or prevent) a
                        // speculative SG op, so branches are interleaving points there.
                        let safe =
                            matches!(kind, TermKind::Return) || v.subgroup() != SgMode::Speculative;
                        out.push((Step::Thread(t), safe));
                    }
                },
            }
        }
        out
    }

    /// The participants of `step` when it is a subgroup operation (a group step whose threads
    /// are at an SG op): the DB's present threads, as G-COLLECTIVE-SUBGROUP takes them.
    pub fn sg_participants(&self, s: &State, step: Step) -> Option<Mask> {
        let Step::Group(d) = step else { return None };
        let present = s.dbs[d as usize].present;
        let first = mask_iter(present).next()?;
        match self.at(s, first) {
            At::Inst(InstKind::Sg { .. }, _) => Some(present),
            _ => None,
        }
    }

    /// Applies one step; returns every successor (collective stores may have several, a
    /// pruned Spec run none).
    pub fn apply(&self, s: &State, step: Step) -> Result<Vec<State>, EnumError> {
        match step {
            Step::Thread(t) => self.thread_step(s, t),
            Step::Group(d) => self.group_step(s, d),
        }
    }

    fn thread_step(&self, s: &State, t: usize) -> Result<Vec<State>, EnumError> {
        let mut n = s.clone();
        let (d, pc) = (s.threads[t].db, s.threads[t].pc);
        match self.at(s, t) {
            At::Label => unreachable_label(),
            At::Inst(kind, pos) => {
                match kind {
                    // T-LOCAL
                    InstKind::Local { dst, value } => {
                        n.threads[t].regs[*dst as usize] = self.eval(s, t, value, pos)?;
                    }
                    // T-LOAD
                    InstKind::Load { dst, array, index } => {
                        let a = (*array, self.eval(s, t, index, pos)?);
                        n.threads[t].regs[*dst as usize] = *s.mem.get(&a).unwrap_or(&0);
                    }
                    // T-STORE
                    InstKind::Store {
                        array,
                        index,
                        value,
                    } => {
                        let a = (*array, self.eval(s, t, index, pos)?);
                        let v = self.eval(s, t, value, pos)?;
                        n.mem.insert(a, v);
                    }
                    InstKind::Sg { .. } => unreachable_sg(),
                }
                if self.variant.memory() == Mode::Synchronous
                    && matches!(kind, InstKind::Load { .. } | InstKind::Store { .. })
                {
                    // Synchronous Arrive: sis[I] := true; it stays set because no thread
                    // revisits this DB (Non-repeating) and no new thread can join (U = ∅).
                    n.dbs[d as usize].synced |= 1 << pc;
                }
                n.threads[t].pc += 1;
                Ok(vec![n])
            }
            At::Term(kind, pos) => {
                // T-UBRANCH / T-CBRANCH / termination.
                let target = match kind {
                    TermKind::Return => {
                        n.dbs[d as usize].present &= !bit(t);
                        n.threads[t].done = true;
                        return Ok(vec![n]);
                    }
                    TermKind::Branch(l) => *l,
                    TermKind::BranchCond(c, lt, lf) => {
                        if self.eval(s, t, c, pos)? != 0 {
                            *lt
                        } else {
                            *lf
                        }
                    }
                };
                n.dbs[d as usize].present &= !bit(t);
                let c = self.get_child(&mut n, d, target);
                Ok(if self.enter(&mut n, t, c) {
                    vec![n]
                } else {
                    vec![]
                })
            }
        }
    }

    fn group_step(&self, s: &State, d: DbId) -> Result<Vec<State>, EnumError> {
        let members: Vec<usize> = mask_iter(s.dbs[d as usize].present).collect();
        let first = members[0];
        let mut n = s.clone();
        match self.at(s, first) {
            // Collective label: the group steps past the label together.
            At::Label => {
                for &t in &members {
                    n.threads[t].pc = 1;
                }
                Ok(vec![n])
            }
            At::Inst(kind, pos) => match kind {
                // G-COLLECTIVE-MEM, load: one snapshot for all.
                InstKind::Load { dst, array, index } => {
                    for &t in &members {
                        let a = (*array, self.eval(s, t, index, pos)?);
                        n.threads[t].regs[*dst as usize] = *s.mem.get(&a).unwrap_or(&0);
                        n.threads[t].pc += 1;
                    }
                    Ok(vec![n])
                }
                // G-COLLECTIVE-MEM, store: ExecMem returns a set; among same-address writers
                // any one may win (digest §1.5.4: "allow any writer to win").
                InstKind::Store {
                    array,
                    index,
                    value,
                } => {
                    let mut writes: BTreeMap<(ArrayId, i64), Vec<i64>> = BTreeMap::new();
                    for &t in &members {
                        let a = (*array, self.eval(s, t, index, pos)?);
                        let v = self.eval(s, t, value, pos)?;
                        let vs = writes.entry(a).or_default();
                        if !vs.contains(&v) {
                            vs.push(v);
                        }
                        n.threads[t].pc += 1;
                    }
                    let mut outs = vec![n];
                    for (a, vs) in writes {
                        outs = outs
                            .into_iter()
                            .flat_map(|m| {
                                vs.iter().map(move |v| {
                                    let mut m = m.clone();
                                    m.mem.insert(a, *v);
                                    m
                                })
                            })
                            .collect();
                    }
                    Ok(outs)
                }
                // G-COLLECTIVE-SUBGROUP (participants = the DB's present threads).
                InstKind::Sg { dst, op } => {
                    let speculative = self.variant.subgroup() == SgMode::Speculative;
                    let results = match self.exec_sg(s, &members, op, pos) {
                        Ok(r) => r,
                        Err(EnumError::Undefined { pos, msg })
                            if speculative && self.unknown(s, d) != 0 =>
                        {
                            n.pending_ub.get_or_insert((pos, msg));
                            vec![0; members.len()]
                        }
                        Err(e) => return Err(e),
                    };
                    for (&t, r) in members.iter().zip(results) {
                        if let Some(dst) = dst {
                            n.threads[t].regs[*dst as usize] = r;
                        }
                        n.threads[t].pc += 1;
                    }
                    if speculative {
                        // Spec obligation: no thread unknown at this point may ever enter.
                        n.dbs[d as usize].sealed = true;
                    }
                    Ok(vec![n])
                }
                InstKind::Local { .. } => unreachable_local(),
            },
            // G-COLLECTIVE-CBRANCH (and its one-target and termination forms): split T by
            // condition, every part moves to its child in one step.
            At::Term(kind, pos) => {
                let mut targets = Vec::new();
                for &t in &members {
                    targets.push(match kind {
                        TermKind::Return => None,
                        TermKind::Branch(l) => Some(*l),
                        TermKind::BranchCond(c, lt, lf) => Some(if self.eval(s, t, c, pos)? != 0 {
                            *lt
                        } else {
                            *lf
                        }),
                    });
                }
                n.dbs[d as usize].present = 0;
                let mut ok = true;
                for (&t, target) in members.iter().zip(targets) {
                    match target {
                        None => n.threads[t].done = true,
                        Some(l) => {
                            let c = self.get_child(&mut n, d, l);
                            ok &= self.enter(&mut n, t, c);
                        }
                    }
                }
                Ok(if ok { vec![n] } else { vec![] })
            }
        }
    }

    /// ExecSG: one result per participant, in `members` order.
    fn exec_sg(
        &self,
        s: &State,
        members: &[usize],
        op: &SgOp,
        pos: Pos,
    ) -> Result<Vec<i64>, EnumError> {
        let arg = |e: &Expr| -> Result<Vec<i64>, EnumError> {
            members.iter().map(|&t| self.eval(s, t, e, pos)).collect()
        };
        let k = members.len();
        let all = |v: i64| vec![v; k];
        Ok(match op {
            SgOp::Add(e) => all(arg(e)?.iter().fold(0i64, |a, b| a.wrapping_add(*b))),
            SgOp::AllEqual(e) => {
                let v = arg(e)?;
                all(i64::from(v.iter().all(|x| *x == v[0])))
            }
            SgOp::All(e) => all(i64::from(arg(e)?.iter().all(|x| *x != 0))),
            SgOp::Any(e) => all(i64::from(arg(e)?.iter().any(|x| *x != 0))),
            SgOp::Ballot(e) => {
                let v = arg(e)?;
                let sgsize = self.test.subgroup;
                all(members
                    .iter()
                    .zip(v)
                    .filter(|(_, x)| *x != 0)
                    .fold(0i64, |m, (&t, _)| m | (1 << (t % sgsize))))
            }
            SgOp::Broadcast(e, lane) => {
                let v = arg(e)?;
                let lanes = arg(lane)?;
                let sgsize = self.test.subgroup as i64;
                let l = lanes[0];
                if lanes.iter().any(|x| *x != l) {
                    return Err(EnumError::Undefined {
                        pos,
                        msg: "broadcast lane is not uniform across participants".into(),
                    });
                }
                match members.iter().position(|&t| t as i64 % sgsize == l) {
                    Some(i) => all(v[i]),
                    None => {
                        return Err(EnumError::Undefined {
                            pos,
                            msg: format!("broadcast from lane {l}, which does not participate"),
                        })
                    }
                }
            }
            SgOp::Barrier => all(0),
        })
    }

    /// `get_child(db, ℓ)` (digest §1.5.5): the merge DB if `ℓ` is on the merge stack the
    /// children inherit (maximal reconvergence), else the existing child for `ℓ`
    /// (Branching rule), else a fresh DB (Non-repeating: back edges land here too).
    pub fn get_child(&self, s: &mut State, p: DbId, target: BlockId) -> DbId {
        let stack = self.child_stack(s, p);
        if let Some(&(_, m)) = stack.iter().find(|(l, _)| *l == target) {
            return m;
        }
        if let Some(&(_, c)) = s.dbs[p as usize]
            .children
            .iter()
            .find(|(l, _)| *l == target)
        {
            return c;
        }
        let id = s.dbs.len() as DbId;
        let sg = s.dbs[p as usize].sg;
        s.dbs
            .push(new_db(sg, target, Origin::Child { parent: p }, stack));
        s.dbs[p as usize].children.push((target, id));
        id
    }

    /// Step 1 of get_child: a header instance pushes `(merge label, fresh merge DB)` for
    /// each of its merge labels not already on the stack — a loop's later iterations find
    /// the loop merge there and share the one merge DB of the first iteration.
    fn child_stack(&self, s: &mut State, p: DbId) -> Vec<(BlockId, DbId)> {
        if let Some(st) = &s.dbs[p as usize].child_ms {
            return st.clone();
        }
        let mut st = s.dbs[p as usize].ms.clone();
        let block = s.dbs[p as usize].block as usize;
        let sg = s.dbs[p as usize].sg;
        for label in self.test.blocks[block].merge.labels() {
            if !st.iter().any(|(l, _)| *l == label) {
                let id = s.dbs.len() as DbId;
                // The merge DB's own stack is the stack below its entry.
                s.dbs
                    .push(new_db(sg, label, Origin::Merge { header: p }, st.clone()));
                st.push((label, id));
            }
        }
        s.dbs[p as usize].child_ms = Some(st.clone());
        st
    }

    /// A thread enters DB `c`. Returns false when this prunes the run (Spec: `c` holds a
    /// speculative SG op that assumed this thread would never come).
    fn enter(&self, s: &mut State, t: usize, c: DbId) -> bool {
        let db = &mut s.dbs[c as usize];
        if db.sealed {
            return false;
        }
        db.present |= bit(t);
        db.entered |= bit(t);
        let block = db.block;
        let th = &mut s.threads[t];
        th.db = c;
        th.block = block;
        th.pc = self.entry_pc();
        true
    }

    pub fn outcome(&self, s: &State) -> Outcome {
        Outcome(
            self.test
                .observe_ids
                .iter()
                .map(|a| *s.mem.get(a).unwrap_or(&0))
                .collect(),
        )
    }
}

fn new_db(sg: u32, block: BlockId, origin: Origin, ms: Vec<(BlockId, DbId)>) -> Db {
    Db {
        sg,
        block,
        origin,
        ms,
        child_ms: None,
        children: Vec::new(),
        present: 0,
        entered: 0,
        synced: 0,
        sealed: false,
    }
}

pub(crate) fn mask_iter(m: Mask) -> impl Iterator<Item = usize> {
    (0..64).filter(move |t| m & (1 << t) != 0)
}

// `enabled` never offers these combinations; reaching one is a bug in this module.
fn unreachable_label() -> ! {
    unreachable!("a label is only stepped over collectively")
}
fn unreachable_sg() -> ! {
    unreachable!("subgroup operations only run as group steps")
}
fn unreachable_local() -> ! {
    unreachable!("local instructions only run as thread steps")
}
