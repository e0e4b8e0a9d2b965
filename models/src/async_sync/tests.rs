//! The checker on hand-built event sequences: each rule reported with the right earlier
//! access, and the synchronised version of each sequence clean.

use super::machine::Place;
use super::*;

const PTX: &str = r#".version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
{
	.reg .f32 %d<4>;
	.reg .b64 %rd<3>;
	.reg .b32 %r<2>;
	mov.f32 %d0, 0f00000000;
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, %rd1, %rd2, 1, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	st.shared.f32 [%r1], %d0;
	ld.shared.f32 %d1, [%r1];
	st.shared.u32 [%r1], %r0;
	ld.shared.u32 %r0, [%r1];
	fence.proxy.async.shared::cta;
	bar.sync 0;
	ret;
}
"#;

fn module() -> Module {
    gpusim_isa::parse_module("t.ptx", PTX).expect("test PTX parses")
}

/// The pc of the instruction on `line` of `PTX`.
fn pc(m: &Module, line: u32) -> u32 {
    m.functions[0]
        .body
        .iter()
        .position(|i| i.span.line == line)
        .expect("an instruction on that line") as u32
}

const MOV: u32 = 9;
const FENCE: u32 = 10;
const WGMMA: u32 = 11;
const COMMIT: u32 = 12;
const WAIT: u32 = 13;
const ST_D: u32 = 14;
const LD_D: u32 = 15;
const ST: u32 = 16;
const LD: u32 = 17;
const PFENCE: u32 = 18;
const BAR: u32 = 19;

struct Seq {
    m: Module,
    ev: Vec<AsyncEvent>,
}

fn sh(start: u64, len: u64) -> Range {
    Range::new(MemSpace::Shared, start, len)
}

fn gl(start: u64, len: u64) -> Range {
    Range::new(MemSpace::Global, start, len)
}

impl Seq {
    fn new() -> Seq {
        Seq {
            m: module(),
            ev: Vec::new(),
        }
    }
    fn at(&mut self, cta: u32, warp: u32, line: u32, kind: EventKind) -> &mut Seq {
        let p = pc(&self.m, line);
        let cycle = self.ev.len() as u64;
        self.ev.push(AsyncEvent {
            cycle,
            sm: 0,
            cta,
            ctaid: [cta, 0, 0],
            warp,
            lanes: u32::MAX,
            at: Some((0, p)),
            kind,
        });
        self
    }
    fn w(&mut self, warp: u32, line: u32, kind: EventKind) -> &mut Seq {
        self.at(0, warp, line, kind)
    }
    fn phase(&mut self, mbar: u64) -> &mut Seq {
        self.ev.push(AsyncEvent {
            cycle: self.ev.len() as u64,
            sm: 0,
            cta: 0,
            ctaid: [0; 3],
            warp: 0,
            lanes: 0,
            at: None,
            kind: EventKind::MbarPhaseComplete { mbar },
        });
        self
    }
    fn run(&self) -> Report {
        check(&self.m, &self.ev)
    }
    /// The rule and the (line, earlier line) of the first violation.
    fn first(&self) -> Option<(Rule, u32, u32)> {
        self.run()
            .violations
            .first()
            .map(|(v, _)| (v.rule, v.line(&self.m), v.earlier_line(&self.m)))
    }
}

fn generic(reads: Vec<Range>, writes: Vec<Range>) -> EventKind {
    EventKind::Generic {
        reads,
        writes,
        atomic: false,
    }
}

fn wgmma(smem: Vec<Range>) -> EventKind {
    EventKind::WgmmaIssue {
        smem,
        accumulate: true,
    }
}

fn bar() -> EventKind {
    EventKind::CtaBarrier { id: 0, wait: true }
}

/// mov D; wgmma.fence; wgmma; commit — the issuing warp's prologue.
fn issue(s: &mut Seq, warp: u32, smem: Vec<Range>) {
    s.w(warp, MOV, generic(vec![], vec![]))
        .w(warp, FENCE, EventKind::WgmmaFence)
        .w(warp, WGMMA, wgmma(smem))
        .w(warp, COMMIT, EventKind::WgmmaCommit);
}

#[test]
fn accumulator_read_before_wait_is_rule_a() {
    let mut s = Seq::new();
    issue(&mut s, 0, vec![]);
    s.w(0, ST_D, generic(vec![], vec![sh(0, 4)]));
    assert_eq!(s.first(), Some((Rule::AccumulatorBeforeWait, ST_D, WGMMA)));
    let mut s = Seq::new();
    issue(&mut s, 0, vec![]);
    s.w(0, WAIT, EventKind::WgmmaWait { n: 0 })
        .w(0, ST_D, generic(vec![], vec![sh(0, 4)]));
    assert_eq!(s.first(), None);
}

#[test]
fn wait_group_one_leaves_the_newest_group_pending() {
    let mut s = Seq::new();
    issue(&mut s, 0, vec![]);
    s.w(0, WAIT, EventKind::WgmmaWait { n: 1 })
        .w(0, LD_D, generic(vec![sh(0, 4)], vec![]));
    assert_eq!(s.first(), Some((Rule::AccumulatorBeforeWait, LD_D, WGMMA)));
}

#[test]
fn register_write_before_wgmma_needs_wgmma_fence() {
    let mut s = Seq::new();
    s.w(0, MOV, generic(vec![], vec![]))
        .w(0, WGMMA, wgmma(vec![]));
    assert_eq!(s.first(), Some((Rule::MissingWgmmaFence, WGMMA, MOV)));
    // Chained wgmmas on the same D need no wait between them (wgD is in order).
    let mut s = Seq::new();
    issue(&mut s, 0, vec![]);
    s.w(0, WGMMA, wgmma(vec![]))
        .w(0, COMMIT, EventKind::WgmmaCommit);
    assert_eq!(s.first(), None);
}

#[test]
fn async_proxy_read_of_generic_store_needs_proxy_fence() {
    let tile = vec![sh(0, 256)];
    let mut s = Seq::new();
    s.w(1, ST, generic(vec![], tile.clone()))
        .w(1, BAR, bar())
        .w(0, BAR, bar());
    issue(&mut s, 0, tile.clone());
    assert_eq!(s.first(), Some((Rule::MissingProxyFence, WGMMA, ST)));
    // The writer's fence.proxy.async before the barrier publishes the store to the async
    // proxy of every thread past the barrier.
    let mut s = Seq::new();
    s.w(1, ST, generic(vec![], tile.clone()))
        .w(
            1,
            PFENCE,
            EventKind::FenceProxyAsync {
                space: Some(MemSpace::Shared),
            },
        )
        .w(1, BAR, bar())
        .w(0, BAR, bar());
    issue(&mut s, 0, tile);
    assert_eq!(s.first(), None);
}

#[test]
fn generic_read_without_barrier_is_unordered() {
    let mut s = Seq::new();
    s.w(1, ST, generic(vec![], vec![sh(16, 4)]))
        .w(0, LD, generic(vec![sh(0, 32)], vec![]));
    assert_eq!(s.first(), Some((Rule::UnorderedAccess, LD, ST)));
    let mut s = Seq::new();
    s.w(1, ST, generic(vec![], vec![sh(16, 4)]))
        .w(1, BAR, bar())
        .w(0, BAR, bar())
        .w(0, LD, generic(vec![sh(0, 32)], vec![]));
    assert_eq!(s.first(), None);
}

#[test]
fn tma_tile_read_before_the_phase_is_rule_c() {
    let tile = vec![sh(1024, 512)];
    let load = EventKind::TmaLoad {
        smem: tile.clone(),
        mbar: 8,
    };
    let mut s = Seq::new();
    s.w(0, ST, EventKind::MbarArrive { mbar: 8 })
        .w(0, ST, load.clone())
        .w(1, LD, generic(vec![sh(1100, 4)], vec![]));
    assert_eq!(s.first(), Some((Rule::EarlyTmaConsumption, LD, ST)));
    // A wait that observed the completed phase, and one suspended until it completes.
    for parked in [false, true] {
        let mut s = Seq::new();
        s.w(0, ST, EventKind::MbarArrive { mbar: 8 })
            .w(0, ST, load.clone());
        if parked {
            s.w(1, LD, EventKind::MbarWaitPark { mbar: 8, parity: 0 })
                .phase(8);
        } else {
            s.phase(8).w(1, LD, EventKind::MbarWaitDone { mbar: 8 });
        }
        s.w(1, LD, generic(vec![sh(1100, 4)], vec![]));
        issue(&mut s, 1, tile.clone());
        assert_eq!(s.first(), None, "parked: {parked}");
    }
    // Observing an earlier phase does not publish a load of the next one.
    let mut s = Seq::new();
    s.phase(8)
        .w(0, ST, load)
        .w(1, LD, EventKind::MbarWaitDone { mbar: 8 })
        .w(1, LD, generic(vec![sh(1100, 4)], vec![]));
    assert_eq!(s.first(), Some((Rule::EarlyTmaConsumption, LD, ST)));
}

/// Digest §2.3 bug 3: the warps read B with wgmma, arrive on a barrier, and only then wait
/// for their groups; the TMA that overwrites B after the barrier races with warps 1–3's
/// reads. Waiting before the barrier fixes it.
#[test]
fn wait_after_the_barrier_does_not_cover_wgmma_reads() {
    let b = vec![sh(0, 4096)];
    for fixed in [false, true] {
        let mut s = Seq::new();
        for w in 0..4 {
            issue(&mut s, w, b.clone());
        }
        for w in 0..4 {
            if fixed {
                s.w(w, WAIT, EventKind::WgmmaWait { n: 0 });
            }
            s.w(w, BAR, bar());
        }
        for w in 0..4 {
            s.w(w, WAIT, EventKind::WgmmaWait { n: 0 });
        }
        s.w(
            0,
            ST,
            EventKind::TmaLoad {
                smem: b.clone(),
                mbar: 8,
            },
        );
        let r = s.run();
        if fixed {
            assert!(r.violations.is_empty(), "{:?}", r.violations);
        } else {
            let (v, _) = &r.violations[0];
            assert_eq!(v.rule, Rule::BufferOverwrite);
            assert_eq!(v.earlier.warp, 1);
            assert_eq!(v.earlier_line(&s.m), WGMMA);
            // Warps 1, 2 and 3: one distinct violation (same instructions), three times
            // per segment at least.
            assert!(r.violations[0].1 >= 3);
        }
    }
}

/// The producer's WAR: consumers read a stage with wgmma, wait, arrive on the empty
/// barrier; the producer overwrites the stage only after observing that phase.
#[test]
fn empty_barrier_orders_the_stage_overwrite() {
    let stage = vec![sh(0, 2048)];
    for skip_wait in [false, true] {
        let mut s = Seq::new();
        issue(&mut s, 0, stage.clone());
        s.w(0, WAIT, EventKind::WgmmaWait { n: 0 })
            .w(0, ST, EventKind::MbarArrive { mbar: 40 })
            .phase(40);
        if !skip_wait {
            s.w(4, LD, EventKind::MbarWaitDone { mbar: 40 });
        }
        s.w(
            4,
            ST,
            EventKind::TmaLoad {
                smem: stage.clone(),
                mbar: 8,
            },
        );
        let expected = skip_wait.then_some((Rule::BufferOverwrite, ST, WGMMA));
        assert_eq!(s.first(), expected);
    }
}

#[test]
fn tma_store_needs_proxy_fence_and_reduce_adds_do_not_conflict() {
    let tile = vec![sh(0, 1024)];
    let out = vec![gl(0x1000, 1024)];
    let store = |reduce| EventKind::BulkStore {
        smem: tile.clone(),
        global: out.clone(),
        reduce,
    };
    let mut s = Seq::new();
    s.w(0, ST, generic(vec![], tile.clone()))
        .w(0, LD, store(false));
    assert_eq!(s.first(), Some((Rule::MissingProxyFence, LD, ST)));
    // Two CTAs reduce-adding the same global tile (split-K) do not conflict.
    let mut s = Seq::new();
    for cta in 0..2 {
        s.at(cta, 0, ST, generic(vec![], tile.clone()))
            .at(cta, 0, PFENCE, EventKind::FenceProxyAsync { space: None })
            .at(cta, 0, LD, store(true))
            .at(cta, 0, COMMIT, EventKind::BulkCommit)
            .at(cta, 0, WAIT, EventKind::BulkWait { n: 0, read: false });
    }
    assert_eq!(s.first(), None);
    // A plain TMA store after another CTA's reduce conflicts (WAW, not atomic).
    let mut s = Seq::new();
    s.at(0, 0, PFENCE, store(true)).at(1, 0, LD, store(false));
    assert_eq!(s.first(), Some((Rule::BufferOverwrite, LD, PFENCE)));
}

#[test]
fn bulk_wait_read_publishes_only_the_source_reads() {
    let tile = vec![sh(0, 512)];
    let out = vec![gl(0x2000, 512)];
    let mut s = Seq::new();
    s.w(0, ST, generic(vec![], tile.clone()))
        .w(0, PFENCE, EventKind::FenceProxyAsync { space: None })
        .w(
            0,
            LD,
            EventKind::BulkStore {
                smem: tile.clone(),
                global: out.clone(),
                reduce: false,
            },
        )
        .w(0, COMMIT, EventKind::BulkCommit)
        .w(0, WAIT, EventKind::BulkWait { n: 0, read: true })
        // The source may be overwritten now ...
        .w(0, ST, generic(vec![], tile.clone()))
        // ... but the global bytes are not yet written.
        .w(0, LD, generic(vec![out[0]], vec![]));
    assert_eq!(s.first(), Some((Rule::AsyncWriteUnsynchronised, LD, LD)));
}

#[test]
fn records_are_freed_when_overwritten() {
    let mut s = Seq::new();
    for i in 0..100 {
        s.w(i % 4, ST, generic(vec![], vec![sh(0, 64)]));
        s.w(i % 4, BAR, bar());
        for w in 0..4 {
            if w != i % 4 {
                s.w(w, BAR, bar());
            }
        }
    }
    let r = s.run();
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    let mut c = Checker {
        module: &s.m,
        interest: Interest::new(&s.m),
        m: Machine::default(),
        report: Report::default(),
    };
    for e in &s.ev {
        c.event(e);
    }
    assert_eq!(c.m.live(), 1);
}

fn cluster_bar(wait: bool) -> EventKind {
    EventKind::ClusterBarrier { cluster: 0, wait }
}

fn multicast(smem: Vec<Range>) -> EventKind {
    EventKind::TmaLoadCluster {
        smem,
        mbar: 8,
        ctas: vec![0, 1],
    }
}

/// Digest §2.3 bug 3 across a cluster: both CTAs' warps read B with wgmma, arrive on the
/// cluster barrier, then wait for their groups, then wait on the barrier; CTA 0's multicast
/// then overwrites B in both CTAs. The arrive forwards only what was witnessed at it, so
/// CTA 1's wgmma reads race with the multicast; waiting before the arrive fixes it.
#[test]
fn cluster_arrive_does_not_cover_later_wgmma_waits() {
    let b = vec![sh(0, 256)];
    for fixed in [false, true] {
        let mut s = Seq::new();
        for cta in 0..2 {
            s.at(cta, 0, MOV, generic(vec![], vec![]))
                .at(cta, 0, FENCE, EventKind::WgmmaFence)
                .at(cta, 0, WGMMA, wgmma(b.clone()))
                .at(cta, 0, COMMIT, EventKind::WgmmaCommit);
        }
        for cta in 0..2 {
            if fixed {
                s.at(cta, 0, WAIT, EventKind::WgmmaWait { n: 0 });
            }
            s.at(cta, 0, BAR, cluster_bar(false));
            s.at(cta, 0, WAIT, EventKind::WgmmaWait { n: 0 });
            s.at(cta, 0, BAR, cluster_bar(true));
        }
        s.at(0, 0, ST, multicast(b.clone()));
        let r = s.run();
        if fixed {
            assert!(r.violations.is_empty(), "{:?}", r.violations);
        } else {
            let (v, _) = &r.violations[0];
            assert_eq!(v.rule, Rule::BufferOverwrite);
            assert_eq!(v.at.ctaid, [0, 0, 0]);
            assert_eq!(v.earlier.ctaid, [1, 0, 0]);
            assert_eq!(v.earlier_line(&s.m), WGMMA);
            // The location is named as CTA 1's.
            assert_eq!(v.place, Place::Mem(MemSpace::PeerShared(1), 0, 256));
        }
    }
}

/// A remote arrive (`mbarrier.arrive.shared::cluster` on the peer's barrier) releases the
/// peer's reads to the producer observing that barrier (the clustered GEMM's empty barrier);
/// the multicast's bytes in CTA 1 are published on CTA 1's own barrier.
#[test]
fn remote_arrive_orders_a_multicast_into_the_peer() {
    let b = vec![sh(0, 256)];
    for arrive in [false, true] {
        let mut s = Seq::new();
        s.at(1, 0, LD, generic(b.clone(), vec![]));
        if arrive {
            s.at(
                1,
                0,
                ST,
                EventKind::MbarArriveCluster {
                    targets: vec![(0, 40)],
                },
            );
        }
        // CTA 0's barrier at 40 completes (its own consumer's arrive stands in for the
        // expected count), and CTA 0's producer observes it.
        s.at(0, 1, ST, EventKind::MbarArrive { mbar: 40 });
        s.ev.push(AsyncEvent {
            cycle: s.ev.len() as u64,
            sm: 0,
            cta: 0,
            ctaid: [0; 3],
            warp: 0,
            lanes: 0,
            at: None,
            kind: EventKind::MbarPhaseComplete { mbar: 40 },
        });
        s.at(0, 0, LD, EventKind::MbarWaitDone { mbar: 40 })
            .at(0, 0, ST, multicast(b.clone()));
        let expected = (!arrive).then_some((Rule::BufferOverwrite, ST, LD));
        assert_eq!(s.first(), expected, "arrive: {arrive}");
        if !arrive {
            continue;
        }
        // CTA 1 reads the new bytes only after observing its barrier's phase.
        let mut early = Seq {
            m: module(),
            ev: s.ev.clone(),
        };
        early.at(1, 0, LD, generic(b.clone(), vec![]));
        assert_eq!(early.first(), Some((Rule::EarlyTmaConsumption, LD, ST)));
        s.ev.push(AsyncEvent {
            cycle: s.ev.len() as u64,
            sm: 1,
            cta: 1,
            ctaid: [1, 0, 0],
            warp: 0,
            lanes: 0,
            at: None,
            kind: EventKind::MbarPhaseComplete { mbar: 8 },
        });
        s.at(1, 0, LD, EventKind::MbarWaitDone { mbar: 8 }).at(
            1,
            0,
            LD,
            generic(b.clone(), vec![]),
        );
        assert_eq!(s.first(), None);
    }
}

/// A DSMEM store into CTA 1 is CTA 1's location, not CTA 0's at the same offset; CTA 1 may
/// read it only after a cluster barrier (split arrive/wait) both took part in.
#[test]
fn peer_shared_locations_are_keyed_by_their_cta() {
    let peer = vec![Range::new(MemSpace::PeerShared(1), 64, 4)];
    let own = vec![sh(64, 4)];
    for sync in [false, true] {
        let mut s = Seq::new();
        s.at(0, 0, ST, generic(vec![], peer.clone()))
            // CTA 0's own bytes at the same offset are another location.
            .at(0, 1, LD, generic(own.clone(), vec![]));
        if sync {
            s.at(0, 0, BAR, cluster_bar(false))
                .at(1, 0, BAR, cluster_bar(false))
                .at(1, 0, BAR, cluster_bar(true))
                .at(0, 0, BAR, cluster_bar(true));
        }
        s.at(1, 0, LD, generic(own.clone(), vec![]));
        let expected = (!sync).then_some((Rule::UnorderedAccess, LD, ST));
        assert_eq!(s.first(), expected, "sync: {sync}");
    }
}
