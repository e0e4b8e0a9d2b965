//! The abstract machine (Exo-GPU §5 / App. B, digest §2.2), over the simulator's events.
//!
//! Values are dropped; every tracked location — a byte range of a CTA's shared memory or of
//! global memory, or a wgmma register of a warp — holds its access history: the mutate and
//! read records since the last mutate. A record is the access's QualTL, the visibility each
//! agent has of it (`Vis`), the commit group it belongs to and the mbarrier phases that carry
//! it (the paper's `p`). Agents are warps (see the module doc of `async_sync` for why).

use super::event::{MemSpace, Range};
use super::timeline::*;
use std::collections::{BTreeMap, HashMap};

/// An agent: (CTA linear id, warp in the CTA).
pub type Agent = (u32, u32);

/// Where an access happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    pub cycle: u64,
    pub ctaid: [u32; 3],
    pub warp: u32,
    pub lanes: u32,
    pub func: u32,
    pub pc: u32,
}

/// How an access touches its location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Read,
    /// Overwrite only.
    Write,
    /// Read-modify-write (wgmma accumulation).
    Rmw,
    /// An atomic update (`atom`, `red`, TMA reduce): atomics do not conflict with each other.
    Atomic,
}

impl Role {
    pub fn verb(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Write => "write",
            Role::Rmw => "read-modify-write",
            Role::Atomic => "atomic update",
        }
    }
}

/// The commit-group mechanisms (digest §1.5 table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupKind {
    Wgmma,
    Bulk,
    CpAsync,
}

/// An mbarrier instance: (CTA, shared offset, initialisation count).
pub type MbarKey = (u32, u64, u64);

/// A sync object carrying a record: whoever observes `phase` of the barrier gets full
/// visibility on `full` and temporal on every timeline (digest §2.2 Arrive/Await).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Capture {
    bar: MbarKey,
    phase: u64,
    full: QualSet,
}

#[derive(Clone, Debug)]
pub struct Record {
    pub q: QualTl,
    pub role: Role,
    /// None: a register.
    pub space: Option<MemSpace>,
    pub issuer: Agent,
    pub site: Site,
    /// Timelines on which every agent has at least `atomic_only` (TMA reduce, `red`).
    atomic: QualSet,
    vis: Vec<(Agent, Vis)>,
    group: Option<(GroupKind, u64)>,
    caps: Vec<Capture>,
    refs: u32,
}

impl Record {
    fn vis(&self, a: Agent) -> Vis {
        self.vis
            .iter()
            .find(|(x, _)| *x == a)
            .map_or(Vis::default(), |v| v.1)
    }
    fn vis_mut(&mut self, a: Agent) -> &mut Vis {
        let i = match self.vis.iter().position(|(x, _)| *x == a) {
            Some(i) => i,
            None => {
                self.vis.push((a, Vis::default()));
                self.vis.len() - 1
            }
        };
        &mut self.vis[i].1
    }
    /// The level agent `a` has on `q`.
    pub fn level(&self, a: Agent, q: QualTl) -> Option<Level> {
        self.vis(a)
            .level(q)
            .or_else(|| self.atomic.has(q).then_some(Level::AtomicOnly))
    }
}

/// The records at one location since its last (non-atomic) mutate.
#[derive(Clone, Debug, Default)]
struct Loc {
    mutates: Vec<usize>,
    reads: Vec<usize>,
}

impl Loc {
    fn ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.mutates.iter().chain(&self.reads).copied()
    }
}

#[derive(Clone, Debug)]
struct Seg {
    end: u64,
    loc: Loc,
}

/// An access conflicting with an earlier record: the earlier record, the level needed and
/// the level the accessing agent had.
#[derive(Clone, Debug)]
pub struct Conflict {
    pub earlier: usize,
    pub needed: Level,
    pub had: Option<Level>,
    /// The location: a byte range or a register.
    pub place: Place,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Mem(MemSpace, u64, u64),
    Reg(u32),
}

/// A new access before it is recorded.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub agent: Agent,
    pub q: QualTl,
    pub role: Role,
    pub site: Site,
}

#[derive(Default)]
pub struct Machine {
    recs: Vec<Option<Record>>,
    free: Vec<usize>,
    /// Memory: (CTA or `u32::MAX` for global, space) → segments by start.
    mem: HashMap<(u32, MemSpace), BTreeMap<u64, Seg>>,
    /// Registers: agent → register → records.
    regs: HashMap<Agent, HashMap<u32, Loc>>,
    /// Each agent's open group number per mechanism, and the records of its groups not yet
    /// waited for.
    open: HashMap<(Agent, GroupKind), u64>,
    pending: HashMap<(Agent, GroupKind), Vec<(u64, usize)>>,
    /// mbarriers: (CTA, offset) → (initialisations, completed phases).
    mbars: HashMap<(u32, u64), (u64, u64)>,
    /// Suspended `try_wait`s: (agent, barrier, parity).
    parks: Vec<(Agent, MbarKey, u64)>,
    /// CTA barriers: each agent's arrivals per (CTA, id); the arrivals of each generation
    /// (agent, waits); generations completed; the generation an agent waits in.
    bar_count: HashMap<(Agent, u32), u64>,
    bar_gen: HashMap<(u32, u32, u64), Vec<(Agent, bool)>>,
    bar_waiting: HashMap<Agent, (u32, u32, u64)>,
    /// Cluster barriers: each agent's `barrier.cluster.arrive`s so far, and the phases an
    /// agent waits for (resolved at its next event, when the simulator released it).
    cluster_arrived: HashMap<Agent, u64>,
    cluster_waiting: HashMap<Agent, (u32, u64)>,
}

/// The offset under which a cluster's barrier is kept with the mbarriers (as the "mbarrier"
/// of its rank-0 CTA; no shared offset is this large).
const CLUSTER_BARRIER: u64 = u64::MAX;

/// Where a range lives: (CTA, Shared) for shared memory, the own CTA's or a peer's (a peer
/// CTA's bytes are the same locations as that CTA's own accesses name), or global.
fn space_key(cta: u32, s: MemSpace) -> (u32, MemSpace) {
    match s {
        MemSpace::Shared => (cta, s),
        MemSpace::PeerShared(peer) => (peer, MemSpace::Shared),
        MemSpace::Global => (u32::MAX, s),
    }
}

impl Machine {
    pub fn record(&self, id: usize) -> &Record {
        self.recs[id].as_ref().expect("live record")
    }

    /// Live records.
    #[cfg(test)]
    pub fn live(&self) -> usize {
        self.recs.iter().filter(|r| r.is_some()).count()
    }

    fn new_record(&mut self, a: &Access, space: Option<MemSpace>, vis: Vis) -> usize {
        let r = Record {
            q: a.q,
            role: a.role,
            space,
            issuer: a.agent,
            site: a.site,
            atomic: if a.role == Role::Atomic {
                QualSet::one(a.q)
            } else {
                QualSet::EMPTY
            },
            vis: vec![(a.agent, vis)],
            group: None,
            caps: Vec::new(),
            refs: 0,
        };
        match self.free.pop() {
            Some(i) => {
                self.recs[i] = Some(r);
                i
            }
            None => {
                self.recs.push(Some(r));
                self.recs.len() - 1
            }
        }
    }

    fn retain(&mut self, id: usize) {
        if let Some(r) = self.recs[id].as_mut() {
            r.refs += 1;
        }
    }

    fn release(&mut self, id: usize) {
        let r = self.recs[id].as_mut().expect("live record");
        r.refs -= 1;
        if r.refs == 0 {
            self.recs[id] = None;
            self.free.push(id);
        }
    }

    // ----- checks (digest §2.2 "Checks before each access") -----

    /// The level an access of `role` needs of an earlier record: a read needs every prior
    /// mutate fully ordered (RAW); an overwrite needs prior mutates and reads temporally
    /// ordered (WAW, WAR); a read-modify-write needs mutates fully ordered; an atomic needs
    /// prior mutates only at `atomic_only`.
    fn needed(role: Role, earlier_mutates: bool) -> Option<Level> {
        match (role, earlier_mutates) {
            (Role::Read, true) => Some(Level::Full),
            (Role::Read, false) => None,
            (Role::Write, _) => Some(Level::Temporal),
            (Role::Rmw, true) => Some(Level::Full),
            (Role::Rmw, false) => Some(Level::Temporal),
            (Role::Atomic, true) => Some(Level::AtomicOnly),
            (Role::Atomic, false) => Some(Level::Temporal),
        }
    }

    fn check_loc(&self, loc: &Loc, a: &Access, place: Place, out: &mut Vec<Conflict>) {
        let mut one = |id: usize, mutates: bool| {
            let Some(need) = Self::needed(a.role, mutates) else {
                return;
            };
            let r = self.record(id);
            let had = r.level(a.agent, a.q);
            if had.is_none_or(|h| h < need) {
                out.push(Conflict {
                    earlier: id,
                    needed: need,
                    had,
                    place,
                });
            }
        };
        for &m in &loc.mutates {
            one(m, true);
        }
        for &r in &loc.reads {
            one(r, false);
        }
    }

    /// Conflicts of an access to `ranges` of `cta`'s memory.
    pub fn check_mem(&self, cta: u32, ranges: &[Range], a: &Access, out: &mut Vec<Conflict>) {
        for r in ranges {
            let Some(map) = self.mem.get(&space_key(cta, r.space)) else {
                continue;
            };
            for (&s, seg) in map.range(..r.end()).rev() {
                if seg.end <= r.start {
                    break;
                }
                // Name the CTA whose bytes these are when they are not the accessor's.
                let space = match r.space {
                    MemSpace::Shared if cta != a.agent.0 => MemSpace::PeerShared(cta),
                    sp => sp,
                };
                let place = Place::Mem(space, s.max(r.start), seg.end.min(r.end()));
                self.check_loc(&seg.loc, a, place, out);
            }
        }
    }

    pub fn check_regs(&self, regs: &[u32], a: &Access, out: &mut Vec<Conflict>) {
        let Some(m) = self.regs.get(&a.agent) else {
            return;
        };
        for r in regs {
            if let Some(loc) = m.get(r) {
                self.check_loc(loc, a, Place::Reg(*r), out);
            }
        }
    }

    // ----- recording -----

    /// Record an access to memory; returns the record (None when there was nothing).
    /// In-order accesses are fully ordered for their agent, asynchronous ones unordered
    /// (digest §2.2 "Recording an access").
    pub fn record_mem(
        &mut self,
        cta: u32,
        ranges: &[Range],
        a: &Access,
        vis: Vis,
        group: Option<GroupKind>,
    ) -> Option<usize> {
        if ranges.is_empty() {
            return None;
        }
        let space = ranges[0].space;
        let id = self.new_record(a, Some(space), vis);
        self.join_group(id, a.agent, group);
        for r in ranges {
            let key = space_key(cta, r.space);
            let starts = self.cover(key, r.start, r.end());
            for s in starts {
                let mut loc = std::mem::take(
                    &mut self
                        .mem
                        .get_mut(&key)
                        .expect("covered")
                        .get_mut(&s)
                        .expect("covered")
                        .loc,
                );
                self.put(&mut loc, id, a);
                self.mem
                    .get_mut(&key)
                    .expect("covered")
                    .get_mut(&s)
                    .expect("covered")
                    .loc = loc;
            }
        }
        self.drop_if_unused(id);
        Some(id)
    }

    pub fn record_regs(
        &mut self,
        regs: &[u32],
        a: &Access,
        vis: Vis,
        group: Option<GroupKind>,
    ) -> Option<usize> {
        if regs.is_empty() {
            return None;
        }
        let id = self.new_record(a, None, vis);
        self.join_group(id, a.agent, group);
        for r in regs {
            let mut loc = self
                .regs
                .entry(a.agent)
                .or_default()
                .remove(r)
                .unwrap_or_default();
            self.put(&mut loc, id, a);
            self.regs.entry(a.agent).or_default().insert(*r, loc);
        }
        self.drop_if_unused(id);
        Some(id)
    }

    fn drop_if_unused(&mut self, id: usize) {
        if self.recs[id].as_ref().is_some_and(|r| r.refs == 0) {
            self.recs[id] = None;
            self.free.push(id);
        }
    }

    /// Tag a record with its agent's open commit group (the paper's `Arrive >> cg` captures
    /// it at the commit; tagging at issue is the same set).
    fn join_group(&mut self, id: usize, agent: Agent, group: Option<GroupKind>) {
        if let Some(k) = group {
            let g = *self.open.get(&(agent, k)).unwrap_or(&0);
            self.recs[id].as_mut().expect("new").group = Some((k, g));
            self.retain(id);
            self.pending.entry((agent, k)).or_default().push((g, id));
        }
    }

    /// Add record `id` to a location: a mutate clears the history (an atomic keeps the other
    /// atomics); a read joins the reads. A newer record of the same agent and timeline
    /// replaces an older one: whatever orders the newer (program order, groups retiring in
    /// order, phases observed in order) orders the older.
    fn put(&mut self, loc: &mut Loc, id: usize, a: &Access) {
        let same = |m: &Machine, x: usize| {
            let r = m.record(x);
            r.issuer == a.agent && r.q == a.q && r.role == a.role
        };
        let mut drop = Vec::new();
        match a.role {
            Role::Read => {
                loc.reads.retain(|&x| {
                    let s = same(self, x);
                    if s {
                        drop.push(x);
                    }
                    !s
                });
                loc.reads.push(id);
            }
            Role::Atomic => {
                loc.mutates.retain(|&x| {
                    let keep = self.record(x).role == Role::Atomic && !same(self, x);
                    if !keep {
                        drop.push(x);
                    }
                    keep
                });
                loc.mutates.push(id);
            }
            Role::Write | Role::Rmw => {
                drop.extend(loc.ids());
                loc.mutates = vec![id];
                loc.reads.clear();
            }
        }
        self.retain(id);
        for x in drop {
            self.release(x);
        }
    }

    /// Split segments so that `[lo, hi)` is covered exactly; returns the starts inside.
    fn cover(&mut self, key: (u32, MemSpace), lo: u64, hi: u64) -> Vec<u64> {
        self.split(key, lo);
        self.split(key, hi);
        let map = self.mem.entry(key).or_default();
        let existing: Vec<(u64, u64)> = map.range(lo..hi).map(|(s, g)| (*s, g.end)).collect();
        let mut starts = Vec::with_capacity(existing.len() + 1);
        let mut x = lo;
        for (s, e) in existing {
            if s > x {
                map.insert(
                    x,
                    Seg {
                        end: s,
                        loc: Loc::default(),
                    },
                );
                starts.push(x);
            }
            starts.push(s);
            x = e;
        }
        if x < hi {
            map.insert(
                x,
                Seg {
                    end: hi,
                    loc: Loc::default(),
                },
            );
            starts.push(x);
        }
        starts
    }

    fn split(&mut self, key: (u32, MemSpace), x: u64) {
        let map = self.mem.entry(key).or_default();
        let Some((_, seg)) = map.range_mut(..x).next_back() else {
            return;
        };
        if seg.end <= x {
            return;
        }
        let tail = Seg {
            end: seg.end,
            loc: seg.loc.clone(),
        };
        seg.end = x;
        let ids: Vec<usize> = tail.loc.ids().collect();
        map.insert(x, tail);
        for id in ids {
            self.retain(id);
        }
    }

    // ----- synchronisation (digest §2.2 "Sync statements") -----

    pub fn open_group(&self, agent: Agent, k: GroupKind) -> u64 {
        *self.open.get(&(agent, k)).unwrap_or(&0)
    }

    /// `Arrive(…) >> cg`: close the agent's open group.
    pub fn commit(&mut self, agent: Agent, k: GroupKind) {
        *self.open.entry((agent, k)).or_default() += 1;
    }

    /// `Await(cg, post, N)`: the agent's records in groups older than the N most recent
    /// become fully ordered for it on `full`, temporally on every timeline. With `reads_only`
    /// (`cp.async.bulk.wait_group.read`) only the groups' reads are published.
    pub fn await_groups(
        &mut self,
        agent: Agent,
        k: GroupKind,
        n: u64,
        full: QualSet,
        reads_only: bool,
    ) {
        let limit = self.open_group(agent, k).saturating_sub(n);
        let Some(list) = self.pending.get_mut(&(agent, k)) else {
            return;
        };
        let mut done = Vec::new();
        list.retain(|&(g, id)| {
            let take = g < limit
                && (!reads_only || self.recs[id].as_ref().is_some_and(|r| r.role == Role::Read));
            if take {
                done.push(id);
            }
            !take
        });
        for id in done {
            if let Some(r) = self.recs[id].as_mut() {
                r.vis_mut(agent).raise(full, QualSet::ALL);
            }
            self.release(id);
        }
    }

    /// `wgmma.fence` = Fence(wgmma_fence_1, wgmma_fence_2), non-transitive: the agent's
    /// register records whose own timeline is in fence_1 and that it sees become fully
    /// ordered on wgA and wgD.
    pub fn wgmma_fence(&mut self, agent: Agent) {
        let Some(m) = self.regs.get(&agent) else {
            return;
        };
        let mut ids: Vec<usize> = m.values().flat_map(|l| l.ids()).collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let r = self.recs[id].as_mut().expect("live record");
            if WGMMA_FENCE_1.has(r.q) && r.vis(agent).unordered.has(r.q) {
                r.vis_mut(agent).raise(WGMMA_FENCE_2, QualSet::EMPTY);
            }
        }
    }

    /// `fence.proxy.async`: the agent's fully ordered generic-proxy records (in `space`)
    /// become fully ordered on the async-proxy timelines, and its fully ordered async-proxy
    /// records on the generic one (the lowering of a Fence whose second TL has async-proxy
    /// timelines, digest §1.5 "Fence lowering").
    pub fn proxy_fence(&mut self, agent: Agent, space: Option<MemSpace>) {
        for r in self.recs.iter_mut().flatten() {
            let Some(s) = r.space else { continue };
            let in_space = |x: MemSpace| x == s || x.is_shared() && s.is_shared();
            if space.is_some_and(|x| !in_space(x)) || r.issuer.0 != agent.0 && s == MemSpace::Shared
            {
                continue;
            }
            let v = r.vis(agent);
            let generic = QualSet::of(&[QualTl::Cuda2, QualTl::Sm80]);
            if !v.full.inter(generic).is_empty() {
                r.vis_mut(agent).raise(ASYNC_PROXY, QualSet::EMPTY);
            }
            if !v.full.inter(ASYNC_PROXY).is_empty() {
                r.vis_mut(agent).raise(generic, QualSet::EMPTY);
            }
        }
    }

    /// The full set a transitive `cuda_in_order` Arrive forwards for a record an arriving
    /// agent sees: None when the agent is no witness (it has nothing on cuda1/cuda2, e.g.
    /// wgmma reads still in flight: the §2.3 bug 3). Besides cuda_in_order's own full set it
    /// forwards the memory timelines the agent already has fully ordered — PTX causality
    /// order is transitive, so a `fence.proxy.async` before the arrive reaches the waiter
    /// (Exo's lowering of Fence(cuda_in_order, cuda_generic_and_async_proxy)).
    fn forwarded(r: &Record, agent: Agent) -> Option<QualSet> {
        let v = r.vis(agent);
        if v.unordered.inter(CUDA_IN_ORDER_FULL).is_empty() {
            return None;
        }
        Some(CUDA_IN_ORDER_FULL.union(v.full.minus(REGISTER_TLS)))
    }

    fn mbar(&mut self, cta: u32, at: u64) -> MbarKey {
        let (epoch, _) = *self.mbars.entry((cta, at)).or_default();
        (cta, at, epoch)
    }

    /// The phase the barrier is in (the number of phases completed).
    pub fn mbar_phase(&mut self, cta: u32, at: u64) -> u64 {
        self.mbars.entry((cta, at)).or_default().1
    }

    pub fn mbar_init(&mut self, cta: u32, at: u64) {
        let e = self.mbars.entry((cta, at)).or_default();
        *e = (e.0 + 1, 0);
    }

    fn add_capture(r: &mut Record, c: Capture) {
        // A waiter that observes a later phase also observes an earlier one.
        if r.caps
            .iter()
            .any(|x| x.bar == c.bar && x.phase <= c.phase && c.full.subset_of(x.full))
        {
            return;
        }
        r.caps
            .retain(|x| !(x.bar == c.bar && x.phase >= c.phase && x.full.subset_of(c.full)));
        r.caps.push(c);
    }

    /// `mbarrier.arrive` (`Arrive(cuda_in_order)`, transitive): every memory record the agent
    /// witnesses is carried by the barrier's current phase.
    pub fn mbar_arrive(&mut self, agent: Agent, at: u64) {
        self.mbar_arrive_in(agent, agent.0, at);
    }

    /// An arrive on CTA `cta`'s barrier at `at`: the own CTA's or, through a
    /// `.shared::cluster` address, a peer's (a remote arrive: the peer's waiters observe what
    /// the arriving warp witnessed; digest §2.4 "`mbarrier.arrive` (local or remote)").
    pub fn mbar_arrive_in(&mut self, agent: Agent, cta: u32, at: u64) {
        let bar = self.mbar(cta, at);
        let phase = self.mbar_phase(cta, at);
        for r in self.recs.iter_mut().flatten() {
            if r.space.is_none() {
                continue;
            }
            if let Some(full) = Self::forwarded(r, agent) {
                Self::add_capture(r, Capture { bar, phase, full });
            }
        }
    }

    /// `cp.async.mbarrier.arrive`: the agent's `cp.async` copies are carried by the current
    /// phase (Arrive(Sm80_cp_async)), then an ordinary arrive.
    pub fn cp_async_arrive(&mut self, agent: Agent, at: u64) {
        let bar = self.mbar(agent.0, at);
        let phase = self.mbar_phase(agent.0, at);
        for r in self.recs.iter_mut().flatten() {
            if r.issuer == agent && r.q == QualTl::Sm80 {
                let full = SM80_GENERIC_FULL;
                Self::add_capture(r, Capture { bar, phase, full });
            }
        }
        self.mbar_arrive(agent, at);
    }

    /// A TMA's trailing barrier (`>> raw`, `complete_tx`): record `id` is published, fully
    /// ordered on cuda_generic_and_async_proxy, to whoever observes the current phase.
    pub fn capture_tma(&mut self, id: usize, cta: u32, at: u64) {
        let bar = self.mbar(cta, at);
        let phase = self.mbar_phase(cta, at);
        if let Some(r) = self.recs[id].as_mut() {
            Self::add_capture(
                r,
                Capture {
                    bar,
                    phase,
                    full: GENERIC_AND_ASYNC_FULL,
                },
            );
        }
    }

    /// A successful wait: the agent observed every completed phase (Await on the barrier).
    pub fn mbar_observe(&mut self, agent: Agent, at: u64) {
        let bar = self.mbar(agent.0, at);
        let done = self.mbar_phase(agent.0, at);
        for r in self.recs.iter_mut().flatten() {
            let mut full = None;
            for c in &r.caps {
                if c.bar == bar && c.phase < done {
                    full = Some(full.unwrap_or(QualSet::EMPTY).union(c.full));
                }
            }
            if let Some(f) = full {
                r.vis_mut(agent).raise(f, QualSet::ALL);
            }
        }
    }

    pub fn mbar_park(&mut self, agent: Agent, at: u64, parity: u64) {
        let bar = self.mbar(agent.0, at);
        self.parks.push((agent, bar, parity));
    }

    /// A phase completed: suspended waiters on its parity observe it.
    pub fn mbar_complete(&mut self, cta: u32, at: u64) {
        let bar = self.mbar(cta, at);
        let e = self.mbars.entry((cta, at)).or_default();
        e.1 += 1;
        let parity = (e.1 - 1) & 1;
        let mut woken = Vec::new();
        self.parks.retain(|&(a, b, p)| {
            let wake = b == bar && p == parity;
            if wake {
                woken.push(a);
            }
            !wake
        });
        for a in woken {
            self.mbar_observe(a, at);
        }
    }

    /// A CTA barrier arrival (`bar.sync`: arrive and wait; `bar.arrive`: arrive).
    pub fn bar_arrive(&mut self, agent: Agent, id: u32, wait: bool) {
        let n = self.bar_count.entry((agent, id)).or_default();
        let gen = (agent.0, id, *n);
        *n += 1;
        self.bar_gen.entry(gen).or_default().push((agent, wait));
        if wait {
            self.bar_waiting.insert(agent, gen);
        }
    }

    /// Before an agent's next event: the generation it waited in has completed (every
    /// arrival happened before its release). `bar.sync` is Fence(cuda_in_order) over the
    /// participants, transitive: what any participant witnesses is forwarded to every
    /// waiting participant.
    pub fn bar_resolve(&mut self, agent: Agent) {
        let Some(gen) = self.bar_waiting.remove(&agent) else {
            return;
        };
        let Some(parts) = self.bar_gen.remove(&gen) else {
            return;
        };
        for r in self.recs.iter_mut().flatten() {
            if r.space.is_none() {
                continue;
            }
            let mut full = None;
            for (p, _) in &parts {
                if let Some(f) = Self::forwarded(r, *p) {
                    full = Some(full.unwrap_or(QualSet::EMPTY).union(f));
                }
            }
            if let Some(f) = full {
                for (p, wait) in &parts {
                    if *wait {
                        r.vis_mut(*p).raise(f, QualSet::ALL);
                    }
                }
            }
        }
        for (p, _) in &parts {
            if self.bar_waiting.get(p) == Some(&gen) {
                self.bar_waiting.remove(p);
            }
        }
    }

    /// `barrier.cluster.arrive` (`Arrive(cuda_in_order)`, transitive, digest §1.6, §2.4):
    /// what the warp witnesses *now* is carried by the cluster barrier's phase it arrives in
    /// — a later `wgmma.wait_group` before `barrier.cluster.wait` does not add to it (§2.3
    /// bug 3). The phase is the warp's own count of arrivals (every thread of the cluster
    /// arrives once per phase).
    pub fn cluster_arrive(&mut self, agent: Agent, cluster: u32) {
        let n = self.cluster_arrived.entry(agent).or_default();
        let phase = *n;
        *n += 1;
        let bar = (cluster, CLUSTER_BARRIER, 0);
        for r in self.recs.iter_mut().flatten() {
            if r.space.is_none() {
                continue;
            }
            if let Some(full) = Self::forwarded(r, agent) {
                Self::add_capture(r, Capture { bar, phase, full });
            }
        }
    }

    /// `barrier.cluster.wait`: the warp will observe every phase it arrived in; resolved at
    /// its next event, when every arrival of those phases has happened (the simulator
    /// released it).
    pub fn cluster_wait(&mut self, agent: Agent, cluster: u32) {
        let phases = self.cluster_arrived.get(&agent).copied().unwrap_or(0);
        self.cluster_waiting.insert(agent, (cluster, phases));
    }

    /// Before an agent's next event: a completed `barrier.cluster.wait` (Await on the
    /// cluster barrier): full visibility on what the arrivals forwarded, temporal on all.
    pub fn cluster_resolve(&mut self, agent: Agent) {
        let Some((cluster, phases)) = self.cluster_waiting.remove(&agent) else {
            return;
        };
        let bar = (cluster, CLUSTER_BARRIER, 0);
        for r in self.recs.iter_mut().flatten() {
            let mut full = None;
            for c in &r.caps {
                if c.bar == bar && c.phase < phases {
                    full = Some(full.unwrap_or(QualSet::EMPTY).union(c.full));
                }
            }
            if let Some(f) = full {
                r.vis_mut(agent).raise(f, QualSet::ALL);
            }
        }
    }
}
