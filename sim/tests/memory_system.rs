//! The component memory system (`mem::system`) driven directly: unloaded latencies along each
//! path, values, MSHR merges, bandwidth, backpressure, DRAM schedulers, determinism, and
//! random mixes of loads, stores and atomics from several SMs.

use gpusim::config::Config;
use gpusim::mem::cache::Mask;
use gpusim::mem::dram_ctrl::{locate, unloaded_read_cycles, AddressMap};
use gpusim::mem::hierarchy::{program_id, AtomicArgs, ProgramTable, SmMemory, Target, Txn};
use gpusim::mem::system::{MemCompletion, MemRequest, MemorySystem, SmSide};
use gpusim::mem::GlobalMemory;
use gpusim::rng::splitmix64;
use gpusim::stats::MemCounters;
use gpusim_isa::{AtomOp, Type};
use std::path::Path;

/// A seeded stream of numbers (`gpusim::rng`).
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }
}

fn config(name: &str, set: &[(&str, &str)]) -> Config {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../configs/{name}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap();
    let set: Vec<(String, String)> = set
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_yaml(name, &text, &set).unwrap_or_else(|e| panic!("{e}"))
}

/// A memory system with its SMs' L1s, a global buffer and the clock.
struct Bench {
    cfg: Config,
    sys: MemorySystem,
    mems: Vec<SmMemory>,
    counters: Vec<MemCounters>,
    global: GlobalMemory,
    programs: ProgramTable,
    base: u64,
    now: u64,
    done: Vec<MemCompletion>,
    tag: u64,
}

const BUFFER: usize = 1 << 22;

fn pattern(i: usize) -> u8 {
    (i * 7 + i / 251) as u8
}

impl Bench {
    fn new(cfg: Config) -> Bench {
        let mut global = GlobalMemory::default();
        let data: Vec<u8> = (0..BUFFER).map(pattern).collect();
        let base = global.alloc("buf", &data);
        Bench {
            sys: MemorySystem::new(&cfg),
            mems: (0..cfg.sm.count).map(|_| SmMemory::new(&cfg)).collect(),
            counters: vec![MemCounters::default(); cfg.sm.count as usize],
            programs: ProgramTable::new(&cfg),
            global,
            base,
            now: 0,
            done: Vec::new(),
            tag: 0,
            cfg,
        }
    }

    fn line(&self, k: u64) -> u64 {
        self.base + k * self.cfg.l1.line_bytes as u64
    }

    /// Submit `txn` running `prog` from SM `sm` at the current cycle; returns its tag.
    fn submit(&mut self, sm: u32, prog: &str, txn: Txn) -> u64 {
        self.tag += 1;
        let req = MemRequest {
            sm,
            tag: self.tag,
            prog: program_id(prog),
            txn,
        };
        self.sys.submit(req, self.now);
        self.tag
    }

    fn load(&mut self, sm: u32, prog: &str, line: u64, bytes: Mask) -> u64 {
        self.submit(sm, prog, Txn::new(Target::Global, line, bytes))
    }

    /// Tick through cycle `t` and make it the current cycle.
    fn tick_to(&mut self, t: u64) {
        let mut sides: Vec<SmSide> = self
            .mems
            .iter_mut()
            .zip(self.counters.iter_mut())
            .map(|(mem, counters)| SmSide { mem, counters })
            .collect();
        self.sys
            .tick(
                t,
                &mut sides,
                &mut self.global,
                &self.programs,
                &mut self.done,
            )
            .unwrap_or_else(|f| panic!("fault: {f:?}"));
        self.now = t;
    }

    /// Tick by `next_wake` until nothing is in flight.
    fn drain(&mut self) {
        let mut guard = 0;
        while let Some(t) = self.sys.next_wake() {
            self.tick_to(t.max(self.now));
            guard += 1;
            assert!(guard < 10_000_000, "the memory system does not drain");
        }
        assert_eq!(self.sys.in_flight(), 0);
        self.now += 1;
    }

    fn completion(&self, tag: u64) -> &MemCompletion {
        self.done
            .iter()
            .find(|c| c.tag == tag)
            .unwrap_or_else(|| panic!("operation {tag} did not complete"))
    }

    fn buffer(&self, addr: u64, n: usize) -> Vec<u8> {
        let i = (addr - self.base) as usize;
        (i..i + n).map(pattern).collect()
    }

    fn dram_reads(&self) -> u64 {
        self.sys.stats().channels.iter().map(|c| c.rd).sum()
    }

    /// The first cycle ≥ `t` from which a request reaches its channel on a DRAM clock edge.
    fn aligned(&self, t: u64) -> u64 {
        let [l1, icnt, _, to_dram, _] = self.sys.latencies();
        let clocks = self.cfg.dram_clocks();
        (t..)
            .find(|&c| {
                let arrive = c + l1 + icnt + to_dram;
                arrive == 0 || clocks.edge_time(clocks.last_edge(arrive)) == arrive
            })
            .unwrap()
    }
}

fn word(off: u32) -> Mask {
    0xF << off
}

fn all(cfg: &Config) -> Mask {
    if cfg.l1.line_bytes >= 128 {
        Mask::MAX
    } else {
        (1 << cfg.l1.line_bytes) - 1
    }
}

/// Every unloaded path takes its configured latency exactly, and values travel with it.
fn unloaded_latencies(cfg: Config) {
    let (l1, l2, dram) = (
        cfg.l1.hit_latency as u64,
        cfg.l2.hit_latency as u64,
        cfg.dram.latency as u64,
    );
    let mut b = Bench::new(cfg);
    // Cold: DRAM.
    b.now = b.aligned(1000);
    let line = b.line(3);
    let t0 = b.now;
    let cold = b.load(0, "ld.global.ca", line, word(8));
    b.drain();
    let c = b.completion(cold).clone();
    assert_eq!(c.at - t0, dram, "cold DRAM read");
    assert!(c.txn.wrote_regs);
    assert_eq!(c.txn.data[8..12], b.buffer(line + 8, 4)[..]);
    assert_eq!(b.dram_reads(), 1);
    // L1 hit, same SM.
    let t1 = b.now;
    let hit = b.load(0, "ld.global.ca", line, word(8));
    b.drain();
    assert_eq!(b.completion(hit).at - t1, l1, "L1 hit");
    // L2 hit from another SM.
    let t2 = b.now;
    let l2hit = b.load(1, "ld.global.ca", line, word(16));
    b.drain();
    let c = b.completion(l2hit).clone();
    assert_eq!(c.at - t2, l2, "L2 hit");
    assert_eq!(c.txn.data[16..20], b.buffer(line + 16, 4)[..]);
    assert_eq!(b.dram_reads(), 1);
    // A lone store costs an L2 round trip and lands in L2, then DRAM after the host sync.
    let t3 = b.now;
    let mut st = Txn::new(Target::Global, line, word(24));
    st.data[24..28].copy_from_slice(&[1, 2, 3, 4]);
    let store = b.submit(0, "st.global.wb", st);
    b.drain();
    assert_eq!(b.completion(store).at - t3, l2, "lone store");
    let t4 = b.now;
    let after = b.load(1, "ld.global.cg", line, word(24));
    b.drain();
    let c = b.completion(after).clone();
    assert_eq!(c.at - t4, l2, "ld.cg hit in L2");
    assert_eq!(c.txn.data[24..28], [1, 2, 3, 4]);
    assert_ne!(b.global.bytes(line + 24, 4).unwrap(), [1, 2, 3, 4]);
    b.sys.backend().sync_host(&mut b.global);
    assert_eq!(b.global.bytes(line + 24, 4).unwrap(), [1, 2, 3, 4]);
    // An atomic returns the old value and leaves the new one in L2.
    let mut at = Txn::new(Target::Global, line, word(24));
    at.atomic = Some(AtomicArgs {
        offset: 24,
        size: 4,
        op: AtomOp::Add,
        ty: Type::U32,
        b: 5,
        c: 0,
        old: 0,
    });
    let atom = b.submit(2 % b.cfg.sm.count, "atom.global", at);
    b.drain();
    let old = u32::from_le_bytes([1, 2, 3, 4]);
    assert_eq!(b.completion(atom).txn.atomic.unwrap().old, old as u64);
    let again = b.load(0, "ld.global.cg", line, word(24));
    b.drain();
    assert_eq!(
        b.completion(again).txn.data[24..28],
        (old + 5).to_le_bytes()
    );
}

#[test]
fn unloaded_latencies_are_exact_on_tiny() {
    unloaded_latencies(Config::tiny());
}

#[test]
fn unloaded_latencies_are_exact_on_volta() {
    // Unloaded: no refresh either (V100 refreshes one bank every 213 DRAM cycles).
    unloaded_latencies(config("volta-v100", &[("dram.t_refi", "0")]));
}

/// The split of the path adds up: the slice's reply pipeline and the DRAM links.
#[test]
fn latency_split_adds_up() {
    for name in [
        "tiny",
        "volta-v100",
        "ampere-a100",
        "hopper-h100",
        "fermi-gtx480",
    ] {
        let cfg = config(name, &[]);
        let sys = MemorySystem::new(&cfg);
        let [l1, i, s, to, from] = sys.latencies();
        assert_eq!(l1 + 2 * i + s, cfg.l2.hit_latency as u64, "{name}");
        assert!(from == to || from == to + 1, "{name}");
        assert_eq!(
            cfg.l2.hit_latency as u64 + to + from + unloaded_read_cycles(&cfg),
            cfg.dram.latency as u64,
            "{name}"
        );
    }
}

/// A config whose latencies cannot be split is refused naming the keys.
#[test]
fn negative_splits_are_refused_with_their_keys() {
    let text = gpusim::config::TINY_YAML;
    let e = Config::from_yaml("t", text, &[("interconnect.latency".into(), "95".into())])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("interconnect.latency") && e.contains("l2.hit_latency"),
        "{e}"
    );
    let e = Config::from_yaml("t", text, &[("dram.latency".into(), "210".into())])
        .unwrap_err()
        .to_string();
    assert!(e.contains("dram.latency"), "{e}");
    let e = Config::from_yaml("t", text, &[("l1.request_queue".into(), "8".into())])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("l1.request_queue") && e.contains("sm.warp_size"),
        "{e}"
    );
}

/// Two loads of one cold line from one SM: one DRAM read; the second waits for the first's
/// fill and completes with it, not before.
#[test]
fn mshr_merge_reads_dram_once() {
    let mut b = Bench::new(Config::tiny());
    let line = b.line(5);
    // Words 0 and 16 share the first 32-byte sector.
    let first = b.load(0, "ld.global.ca", line, word(0));
    let second = b.load(0, "ld.global.ca", line, word(16));
    b.drain();
    assert_eq!(b.dram_reads(), 1);
    assert_eq!(b.counters[0].dram_reads, 1);
    assert_eq!(b.counters[0].mshr_merges, 1);
    let (a, c) = (b.completion(first).clone(), b.completion(second).clone());
    assert!(c.at >= a.at, "{} < {}", c.at, a.at);
    assert_eq!(c.at, a.at, "the merged load completes with the fill");
    assert_eq!(c.txn.data[16..20], b.buffer(line + 16, 4)[..]);
    // No line stays reserved.
    assert!(b.mems[0]
        .l1
        .used()
        .all(|i| b.mems[0].l1.line(i).ready != u64::MAX));
    // A load of another sector of a line in flight waits for the fill, then misses on its
    // own sector (the L1 is sectored): a second DRAM read, completing after the first.
    let line = b.line(9);
    let first = b.load(0, "ld.global.ca", line, word(0));
    let other = b.load(0, "ld.global.ca", line, word(64));
    b.drain();
    assert_eq!(b.dram_reads(), 3);
    let (a, c) = (b.completion(first).clone(), b.completion(other).clone());
    assert!(c.at > a.at);
    assert_eq!(c.txn.data[64..68], b.buffer(line + 64, 4)[..]);
}

/// Bytes per cycle of a stream of full-line loads of distinct lines from every SM, over
/// `lines` lines, each SM keeping its request queue full; with `cg`, L1 is bypassed.
fn stream(b: &mut Bench, prog: &str, first: u64, lines: u64) -> f64 {
    let sms = b.cfg.sm.count as u64;
    let full = all(&b.cfg);
    let mut next = 0;
    // Consecutive lines go to consecutive SMs (as a grid-stride loop spreads them), each
    // SM's queue kept full.
    while next < lines {
        let mut room = true;
        while room && next < lines {
            room = false;
            for sm in 0..sms as u32 {
                if next < lines && b.sys.can_accept(sm, 1) {
                    let line = b.line(first + next);
                    b.load(sm, prog, line, full);
                    next += 1;
                    room = true;
                }
            }
        }
        let t = b.now + 1;
        b.tick_to(t);
    }
    b.drain();
    // The steady state: the lines completed between the first and the last quarter of the
    // completions, over that time (the start pays one latency; the end waits for the
    // busiest channel).
    let mut at: Vec<u64> = b.done.iter().map(|c| c.at).collect();
    assert_eq!(at.len() as u64, lines);
    at.sort_unstable();
    let (lo, hi) = (at.len() / 4, at.len() * 3 / 4);
    ((hi - lo) as u64 * b.cfg.l1.line_bytes as u64) as f64 / (at[hi] - at[lo]) as f64
}

/// A stream of distinct lines reaches the configured DRAM bandwidth within 5 %, not more;
/// L2 hits reach the L2's.
fn bandwidth(cfg: Config, lines: u64, l2_lines: u64) {
    let dram_peak = cfg.dram.bytes_per_cycle as f64;
    let l2_peak = cfg.l2.bytes_per_cycle as f64;
    let mut b = Bench::new(cfg);
    let dram = stream(&mut b, "ld.global.cg", 0, lines);
    b.done.clear();
    let l2 = stream(&mut b, "ld.global.cg", lines - l2_lines, l2_lines);
    assert!(
        l2 <= l2_peak * 1.01 && l2 >= 0.95 * l2_peak,
        "L2 stream {l2:.2} B/cycle against {l2_peak}"
    );
    eprintln!("DRAM {dram:.2} of {dram_peak}, L2 {l2:.2} of {l2_peak} B/cycle");
}

#[test]
fn streams_reach_the_configured_bandwidth_on_tiny() {
    bandwidth(Config::tiny(), 4096, 1024);
}

#[test]
fn streams_reach_the_configured_bandwidth_on_volta() {
    bandwidth(config("volta-v100", &[]), 24 * 1024, 8 * 1024);
}

/// A full L1 request queue refuses operations until the L1 has taken some.
#[test]
fn a_full_request_queue_refuses_and_recovers() {
    let mut b = Bench::new(Config::tiny());
    let cap = b.cfg.l1.request_queue as usize;
    assert!(b.sys.can_accept(0, cap));
    assert!(!b.sys.can_accept(0, cap + 1));
    for k in 0..cap as u64 {
        let line = b.line(100 + k);
        b.load(0, "ld.global.ca", line, word(0));
    }
    assert!(!b.sys.can_accept(0, 1));
    assert!(b.sys.can_accept(1, cap), "another SM's queue is its own");
    let t = b.now;
    b.tick_to(t);
    assert!(
        !b.sys.can_accept(0, 1),
        "operations reach the L1 the cycle after their submission"
    );
    b.tick_to(t + 1);
    assert!(
        b.sys.can_accept(0, 1),
        "the L1 took one in the cycle after the submission"
    );
    b.drain();
    assert!(b.sys.can_accept(0, cap));
    assert!(b.sys.stats().l1_queue.max >= cap as u64);
}

/// With every MSHR in flight, misses wait in the L1 and keep their queue entries: the queue
/// stays full until fills free MSHRs.
#[test]
fn misses_without_mshrs_hold_the_queue() {
    let mut b = Bench::new(config("tiny", &[("l1.mshrs", "2")]));
    let cap = b.cfg.l1.request_queue as u64;
    for k in 0..cap {
        let line = b.line(200 + k);
        b.load(0, "ld.global.ca", line, word(0));
    }
    let t = b.now + 100;
    b.tick_to(t);
    // Two misses hold the MSHRs; the others wait in the L1, keeping their entries.
    assert!(b.sys.can_accept(0, 2));
    assert!(
        !b.sys.can_accept(0, 3),
        "misses blocked on MSHRs keep their entries"
    );
    b.drain();
    assert_eq!(b.done.len() as u64, cap);
    assert!(b.sys.can_accept(0, cap as usize));
}

/// Lines of one bank, alternating between two rows: FR-FCFS serves the row hits first.
fn row_locality(scheduler: &str) -> (u64, u64, f64) {
    let mut b = Bench::new(config("tiny", &[("dram.scheduler", scheduler)]));
    let map = AddressMap::from_config(&b.cfg);
    let line_bytes = b.cfg.l1.line_bytes as u64;
    let (ch0, bank0, row0) = locate(&map, b.line(0));
    let mut rows: Vec<Vec<u64>> = vec![Vec::new(), Vec::new()];
    let mut k = 0;
    while rows[1].len() < 16 {
        let a = b.line(k);
        let (ch, bank, row) = locate(&map, a);
        if ch == ch0 && bank == bank0 {
            if row == row0 && rows[0].len() < 16 {
                rows[0].push(a);
            } else if row != row0
                && rows[1].len() < 16
                && (rows[1].is_empty() || {
                    let (_, _, r) = locate(&map, rows[1][0]);
                    r == row
                })
            {
                rows[1].push(a);
            }
        }
        k += 1;
        assert!(
            (k * line_bytes) < BUFFER as u64,
            "no second row in the buffer"
        );
    }
    let full = all(&b.cfg);
    let start = b.now;
    for i in 0..16 {
        for row in &rows {
            let sm = (i % b.cfg.sm.count as usize) as u32;
            b.load(sm, "ld.global.cg", row[i], full);
        }
    }
    b.drain();
    let end = b.done.iter().map(|c| c.at).max().unwrap();
    let st = b.sys.stats();
    let hits = st.channels.iter().map(|c| c.row_hits).sum();
    let misses: u64 = st
        .channels
        .iter()
        .map(|c| c.row_misses + c.row_conflicts)
        .sum();
    (
        hits,
        misses,
        (32 * line_bytes) as f64 / (end - start) as f64,
    )
}

#[test]
fn fr_fcfs_finds_more_row_hits_than_fcfs() {
    let (fr_hits, fr_misses, fr_bw) = row_locality("fr-fcfs");
    let (fc_hits, fc_misses, fc_bw) = row_locality("fcfs");
    eprintln!("fr-fcfs {fr_hits} hits {fr_misses} misses {fr_bw:.2} B/c; fcfs {fc_hits} hits {fc_misses} misses {fc_bw:.2} B/c");
    assert!(fr_hits > fc_hits, "{fr_hits} vs {fc_hits}");
    assert!(fr_bw > fc_bw, "{fr_bw} vs {fc_bw}");
}

/// A scripted mix from several SMs; returns every completion (sm, tag, at, data, old).
fn scripted(reverse: bool) -> Vec<(u32, u64, u64, Vec<u8>, u64)> {
    let mut b = Bench::new(config("tiny", &[("sm.count", "4")]));
    let mut rng = Rng(7);
    let mut script = Vec::new();
    for _ in 0..300 {
        let sm = (rng.next_u64() % 4) as u32;
        let line = b.line(rng.next_u64() % 6);
        let off = (rng.next_u64() % 32) as u32 * 4;
        let kind = rng.next_u64() % 3;
        let gap = rng.next_u64() % 3;
        script.push((sm, line, off, kind, gap));
    }
    let mut i = 0;
    while i < script.len() {
        // One cycle's submissions, per SM in the scripted order; SMs in either order.
        let mut batch: Vec<usize> = Vec::new();
        while i < script.len() {
            batch.push(i);
            i += 1;
            if script[i - 1].4 == 0 {
                break;
            }
        }
        let mut sms: Vec<u32> = (0..4).collect();
        if reverse {
            sms.reverse();
        }
        for sm in sms {
            for &j in &batch {
                let (s, line, off, kind, _) = script[j];
                if s != sm || !b.sys.can_accept(s, 1) {
                    continue;
                }
                let mut txn = Txn::new(Target::Global, line, word(off));
                let prog = match kind {
                    0 => "ld.global.ca",
                    1 => {
                        txn.data[off as usize..off as usize + 4]
                            .copy_from_slice(&(j as u32).to_le_bytes());
                        "st.global.wb"
                    }
                    _ => {
                        txn.atomic = Some(AtomicArgs {
                            offset: off as usize,
                            size: 4,
                            op: AtomOp::Add,
                            ty: Type::U32,
                            b: 1,
                            c: 0,
                            old: 0,
                        });
                        "atom.global"
                    }
                };
                b.tag = j as u64;
                b.submit(s, prog, txn);
            }
        }
        let t = b.now + 1;
        b.tick_to(t);
    }
    b.drain();
    b.done
        .iter()
        .map(|c| {
            (
                c.sm,
                c.tag,
                c.at,
                c.txn.data.to_vec(),
                c.txn.atomic.map_or(0, |a| a.old),
            )
        })
        .collect()
}

/// The same submissions give the same completions, in the same order, whatever order the
/// SMs submitted in within a cycle.
#[test]
fn results_are_deterministic_and_independent_of_submission_order_across_sms() {
    let a = scripted(false);
    assert_eq!(a, scripted(false));
    assert_eq!(a, scripted(true));
    assert!(a.len() > 150, "{}", a.len());
}

/// Random mixes of loads, stores and atomics on a few words from several SMs: every
/// operation completes, no line stays reserved, and the atomics' results are those of some
/// serial order (each `old` a distinct count, the final value their number).
#[test]
fn random_mixes_complete_and_serialise() {
    for seed in 0..20 {
        let cfg = config("tiny", &[("sm.count", "4"), ("l1.mshrs", "4")]);
        let mut b = Bench::new(cfg);
        let mut rng = Rng(seed);
        let words: Vec<(u64, u32)> = (0..3)
            .map(|k| (b.line(k * 7), (k as u32 * 12) % 128))
            .collect();
        // The atomic word starts at 0.
        let (aline, aoff) = words[0];
        let mut zero = Txn::new(Target::Global, aline, word(aoff));
        zero.data[aoff as usize..aoff as usize + 4].copy_from_slice(&[0; 4]);
        b.submit(0, "st.global.wb", zero);
        b.drain();
        let mut atomics = 0u64;
        let mut submitted = 1;
        for _ in 0..200 {
            let sm = (rng.next_u64() % 4) as u32;
            if b.sys.can_accept(sm, 1) {
                let k = (rng.next_u64() % 3) as usize;
                let (line, off) = words[k];
                let mut txn = Txn::new(Target::Global, line, word(off));
                let prog = if k == 0 {
                    atomics += 1;
                    txn.atomic = Some(AtomicArgs {
                        offset: off as usize,
                        size: 4,
                        op: AtomOp::Add,
                        ty: Type::U32,
                        b: 1,
                        c: 0,
                        old: 0,
                    });
                    "atom.global"
                } else {
                    match rng.next_u64() % 4 {
                        0 => {
                            txn.data[off as usize..off as usize + 4]
                                .copy_from_slice(&(sm + 100).to_le_bytes());
                            "st.global.wb"
                        }
                        1 => "ld.global.cg",
                        2 => "ld.global.cv",
                        _ => "ld.global.ca",
                    }
                };
                b.submit(sm, prog, txn);
                submitted += 1;
            }
            if rng.next_u64() % 2 == 0 {
                let t = b.now + 1 + rng.next_u64() % 40;
                b.tick_to(t);
            }
        }
        b.drain();
        assert_eq!(b.done.len(), submitted, "seed {seed}");
        let mut olds: Vec<u64> = b
            .done
            .iter()
            .filter_map(|c| c.txn.atomic.map(|a| a.old))
            .collect();
        olds.sort_unstable();
        assert_eq!(olds, (0..atomics).collect::<Vec<_>>(), "seed {seed}");
        for m in &b.mems {
            assert!(m.l1.used().all(|i| m.l1.line(i).ready != u64::MAX));
        }
        for s in &b.sys.backend().slices {
            assert!(s
                .used()
                .all(|i| s.line(i).ready != u64::MAX && s.line(i).pins == 0));
        }
        // Loads of the stored words read a stored value or the buffer's.
        for c in &b.done {
            if c.txn.atomic.is_none() && c.txn.wrote_regs {
                let (line, off) = (c.txn.line, c.txn.bytes.trailing_zeros() as usize);
                let v = u32::from_le_bytes(c.txn.data[off..off + 4].try_into().unwrap());
                let orig = u32::from_le_bytes(b.buffer(line + off as u64, 4).try_into().unwrap());
                assert!(v == orig || (100..104).contains(&v), "seed {seed}: {v}");
            }
        }
    }
}

/// Silent write-backs travel: dirty L2 victims become DRAM writes on their channels, dirty
/// local L1 victims packets to their slices; the values reach DRAM.
#[test]
fn write_backs_travel_through_the_components() {
    let mut b = Bench::new(config("tiny", &[("l2.size_kib", "16")]));
    // 512 lines of stores through a 16 KiB L2 (128 lines): most become dirty victims.
    let lines = 512;
    for k in 0..lines {
        let sm = (k % 2) as u32;
        while !b.sys.can_accept(sm, 1) {
            let t = b.now + 1;
            b.tick_to(t);
        }
        let mut st = Txn::new(Target::Global, b.line(k), word(0));
        st.data[0..4].copy_from_slice(&(k as u32 + 1000).to_le_bytes());
        b.submit(sm, "st.global.wb", st);
    }
    b.drain();
    let st = b.sys.stats();
    let writes: u64 = st.channels.iter().map(|c| c.wr).sum();
    assert!(writes >= lines - 128, "{writes} DRAM writes");
    let wb: u64 = b.counters.iter().map(|c| c.l2_writebacks).sum();
    assert_eq!(writes, wb, "one DRAM write per L2 write-back");
    assert!(b.counters.iter().map(|c| c.dram_write_bytes).sum::<u64>() >= 4 * writes);
    b.sys.backend().sync_host(&mut b.global);
    for k in 0..lines {
        let v = b.global.bytes(b.line(k), 4).unwrap();
        assert_eq!(v, (k as u32 + 1000).to_le_bytes(), "line {k}");
    }
    // Local stores stay dirty in L1 (`st.local.wb`); their victims go to L2 as packets.
    let before = st.slice_bytes.iter().sum::<u64>();
    let l1_lines = (b.cfg.l1.size_kib * 1024 / b.cfg.l1.line_bytes) as u64;
    for k in 0..2 * l1_lines {
        while !b.sys.can_accept(0, 1) {
            let t = b.now + 1;
            b.tick_to(t);
        }
        let tag = gpusim::mem::hierarchy::local_tag(0, k * b.cfg.l1.line_bytes as u64);
        b.submit(0, "st.local.wb", Txn::new(Target::Local, tag, word(0)));
    }
    b.drain();
    let wb = b.counters[0].l1_writebacks;
    assert!(wb >= l1_lines, "{wb} L1 write-backs");
    let after: u64 = b.sys.stats().slice_bytes.iter().sum();
    assert_eq!(
        after - before,
        4 * wb,
        "each write-back's 4 dirty bytes reach a slice"
    );
}

/// The TMA engine issues its line requests at `sm.tma.bytes_per_cycle`: lines that hit L2
/// complete that far apart, with their bytes; its queue is reported, and a copy that only occupies the engine completes when its bytes are through.
#[test]
fn the_tma_engine_issues_lines_at_its_rate() {
    let spread = |rate: &str| {
        let mut b = Bench::new(config("tiny", &[("sm.tma.bytes_per_cycle", rate)]));
        let full = all(&b.cfg);
        // Warm L2 with the lines, so each request costs one L2 hit.
        for k in 0..16 {
            let line = b.line(300 + k);
            b.load(1, "ld.global.cg", line, full);
        }
        b.drain();
        b.done.clear();
        for k in 0..16 {
            b.tag += 1;
            let req = MemRequest {
                sm: 0,
                tag: b.tag,
                prog: program_id("ld.global.cg"),
                txn: Txn::new(Target::Global, b.line(300 + k), full),
            };
            b.sys.submit_tma(req, None, b.now);
        }
        b.drain();
        let mut at: Vec<u64> = b.done.iter().map(|c| c.at).collect();
        at.sort_unstable();
        assert_eq!(at.len(), 16);
        for c in &b.done {
            let want = b.buffer(c.txn.line, 128);
            assert_eq!(
                &c.txn.data[..],
                &want[..],
                "the bytes of line {:#x}",
                c.txn.line
            );
        }
        assert!(
            b.sys.stats().tma_queue.max >= 14,
            "the copies waited in the engine"
        );
        at[15] - at[0]
    };
    // 128 B lines at 32 B/cycle: one every 4 cycles; at 16, every 8 (below tiny's L2 and
    // crossbar rates, which bind at the engine's default 128 B/cycle).
    assert_eq!(spread("32"), 15 * 4);
    assert_eq!(spread("16"), 15 * 8);

    let mut b = Bench::new(config("tiny", &[("sm.tma.bytes_per_cycle", "16")]));
    let req = MemRequest {
        sm: 0,
        tag: 7,
        prog: program_id("ld.global.cg"),
        txn: Txn::new(Target::Shared, 0, 0),
    };
    let t0 = b.now;
    b.sys.submit_tma(req, Some(1000), t0);
    b.drain();
    assert_eq!(
        b.completion(7).at,
        t0 + 1 + 63,
        "from the cycle after its submission, 1000 bytes at 16 B/cycle: 62.5 cycles"
    );
}

/// A fence's `flush` under the component system: the SM's dirty global L1 lines (a config
/// whose `st.global.wb` writes L1) reach L2 at once in value, and their write-backs travel
/// the SM's link to their slices as packets.
#[test]
fn a_flush_sends_its_write_backs_through_the_links() {
    let cfg = config(
        "tiny",
        &[(
            "memory_programs.st_global_wb",
            "writeL1; yield; releaseRegs; end;",
        )],
    );
    let mut b = Bench::new(cfg);
    for k in 0..4 {
        let mut st = Txn::new(Target::Global, b.line(k), word(0));
        st.data[0..4].copy_from_slice(&(k as u32 + 77).to_le_bytes());
        b.submit(0, "st.global.wb", st);
    }
    b.drain();
    assert_eq!(
        b.sys.stats().slice_bytes.iter().sum::<u64>(),
        0,
        "the lines stay in L1"
    );
    let icnt = b.counters[0].icnt_bytes;
    let side = SmSide {
        mem: &mut b.mems[0],
        counters: &mut b.counters[0],
    };
    b.sys.flush_l1(0, side, &mut b.global, b.now);
    assert!(
        b.sys.in_flight() == 0 && b.sys.next_wake().is_some(),
        "packets in flight"
    );
    b.drain();
    assert_eq!(b.counters[0].l1_writebacks, 4);
    assert_eq!(b.counters[0].l1_flushed, 4);
    assert_eq!(
        b.counters[0].icnt_bytes - icnt,
        4 * (8 + 4),
        "header and 4 bytes each"
    );
    assert_eq!(b.sys.stats().slice_bytes.iter().sum::<u64>(), 16);
    b.sys.backend().sync_host(&mut b.global);
    for k in 0..4 {
        let v = b.global.bytes(b.line(k), 4).unwrap();
        assert_eq!(v, (k as u32 + 77).to_le_bytes(), "line {k}");
    }
}
