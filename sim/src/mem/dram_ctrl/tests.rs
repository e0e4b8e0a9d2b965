//! Unit tests of the DRAM channel controller, each worked out by hand from the timing rules
//! (module header) on `tiny` — its DRAM clock is half the core clock, so DRAM cycle k is core
//! cycle 2k, and a request pushed at core cycle 2k is taken at DRAM cycle k + 1 — or on the
//! shipped configs.

use super::*;
use crate::config::{Config, TINY_YAML};

fn shipped(name: &str, sets: &[(&str, &str)]) -> Config {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if name == "tiny" {
        return Config::from_yaml("tiny", TINY_YAML, &sets).unwrap();
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../configs")
        .join(format!("{name}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap();
    Config::from_yaml(name, &text, &sets).unwrap()
}

/// `tiny` without refresh (unless a test is about it).
fn tiny(sets: &[(&str, &str)]) -> Config {
    let mut all = vec![("dram.t_refi", "0")];
    all.extend_from_slice(sets);
    shipped("tiny", &all)
}

const CONFIGS: [&str; 5] = [
    "tiny",
    "fermi-gtx480",
    "volta-v100",
    "ampere-a100",
    "hopper-h100",
];

/// The first address of `channel`, `bank`, `row` (offset `column` bytes into its chunk).
fn addr(cfg: &Config, channel: u32, bank: u32, row: u64) -> u64 {
    let map = AddressMap::from_config(cfg);
    let step = map.interleave_bytes as u64;
    let limit = (row + 2) * map.row_bytes as u64 * map.banks as u64 * map.channels as u64;
    (0..limit / step)
        .map(|k| k * step)
        .find(|&a| locate(&map, a) == (channel, bank, row))
        .expect("address in range")
}

/// The `row_bytes / 32` sectors of one row of one bank, in address order (a row spans several
/// `interleave_bytes` chunks, which other channels' chunks separate).
fn sectors(cfg: &Config, channel: u32, bank: u32, row: u64) -> Vec<u64> {
    let map = AddressMap::from_config(cfg);
    let step = map.interleave_bytes as u64;
    let limit = (row + 2) * map.row_bytes as u64 * map.banks as u64 * map.channels as u64;
    let v: Vec<u64> = (0..limit / step)
        .map(|k| k * step)
        .filter(|&a| locate(&map, a) == (channel, bank, row))
        .flat_map(|a| (0..step / 32).map(move |i| a + 32 * i))
        .collect();
    assert_eq!(v.len() as u64, map.row_bytes as u64 / 32);
    v
}

fn read(id: u64, addr: u64, bytes: u32) -> DramRequest {
    DramRequest {
        id,
        addr,
        bytes,
        write: false,
    }
}

fn write(id: u64, addr: u64, bytes: u32) -> DramRequest {
    DramRequest {
        id,
        addr,
        bytes,
        write: true,
    }
}

/// Tick from wake to wake up to core cycle `until`.
fn run(ch: &mut DramChannel, until: u64, out: &mut Vec<DramDone>) {
    while let Some(w) = ch.next_wake().filter(|&w| w <= until) {
        ch.tick(w, out);
    }
    ch.tick(until, out);
}

/// Push `reqs` at core cycle `at` into a fresh or given channel, run until they are done;
/// the completion core cycle of each, by id.
fn finish(ch: &mut DramChannel, at: u64, reqs: &[DramRequest]) -> Vec<DramDone> {
    let mut out = Vec::new();
    run(ch, at, &mut out);
    for r in reqs {
        ch.push(*r, at);
    }
    let ids: Vec<u64> = reqs.iter().map(|r| r.id).collect();
    let mut done = Vec::new();
    while ids
        .iter()
        .any(|id| !done.iter().any(|d: &DramDone| d.id == *id))
    {
        let now = ch.next_wake().expect("work pending wakes the channel");
        ch.tick(now, &mut done);
        assert!(now < at + 1_000_000, "requests {ids:?} never completed");
    }
    done
}

fn done_at(done: &[DramDone], id: u64) -> u64 {
    done.iter().find(|d| d.id == id).unwrap().at
}

/// A lone read of one L2 sector arriving at cycle 0 at a precharged bank takes exactly
/// `unloaded_read_cycles` on every shipped config; at other phases of the two clocks, no less
/// and at most one DRAM cycle (in core cycles, rounded up) more.
#[test]
fn unloaded_read_latency_is_unloaded_read_cycles() {
    let mut report = Vec::new();
    for name in CONFIGS {
        let cfg = shipped(name, &[]);
        let u = unloaded_read_cycles(&cfg);
        let a = addr(&cfg, 0, 3, 5);
        let sector = cfg.l2.sector_bytes;
        let mut ch = DramChannel::new(&cfg, 0);
        let done = finish(&mut ch, 0, &[read(1, a, sector)]);
        assert_eq!(done, vec![DramDone { id: 1, at: u }], "{name}");
        report.push(format!("{name}: {u}"));
        let slack = cfg.dram_clocks().to_core(1);
        for t in 1..64 {
            let mut ch = DramChannel::new(&cfg, 0);
            let at = done_at(&finish(&mut ch, t, &[read(1, a, sector)]), 1);
            assert!(
                (at - t).abs_diff(u) <= slack,
                "{name}: pushed at {t}, done at {at}; unloaded {u} + up to {slack}"
            );
        }
        let s = ch.stats();
        assert_eq!((s.act, s.rd, s.row_misses), (1, 1, 1), "{name}: {s:?}");
    }
    eprintln!("unloaded_read_cycles: {report:?}");
}

/// The values, by hand: (1 + t_rcd + t_cl + ⌈32 / (bus_bytes × data_rate)⌉) DRAM cycles ×
/// core MHz / DRAM MHz, rounded up (the 1: the edge that takes the request).
#[test]
fn unloaded_read_cycles_by_hand() {
    for (name, want) in [
        ("tiny", 42),         // (1 + 9 + 9 + 2) × 1400 / 700
        ("fermi-gtx480", 40), // (1 + 12 + 12 + 1) × 1401 / 924 = 39.4
        ("volta-v100", 49),   // (1 + 13 + 13 + 1) × 1530 / 877 = 48.8
        ("ampere-a100", 45),  // (1 + 18 + 18 + 1) × 1410 / 1215 = 44.1
        ("hopper-h100", 61),  // (1 + 19 + 19 + 1) × 1980 / 1310 = 60.5
    ] {
        assert_eq!(unloaded_read_cycles(&shipped(name, &[])), want, "{name}");
    }
    // A whole 128 B line on V100: a burst of 4, (1 + 13 + 13 + 4) × 1530 / 877 = 54.1.
    assert_eq!(
        unloaded_read_cycles_for(&shipped("volta-v100", &[]), 128),
        55
    );
}

/// Hit, miss, conflict on tiny (t_rcd 9, t_rp 9, t_cl 9, 32 B burst 2): after the edge that
/// takes it, a hit costs t_cl + burst = 11 DRAM cycles, a miss t_rcd more (20), a conflict t_rp
/// more again (29).
#[test]
fn row_hit_miss_conflict_latencies() {
    let cfg = tiny(&[]);
    let mut ch = DramChannel::new(&cfg, 0);
    let row5 = addr(&cfg, 0, 2, 5);
    let row9 = addr(&cfg, 0, 2, 9);
    let miss = done_at(&finish(&mut ch, 0, &[read(1, row5, 32)]), 1);
    let hit = done_at(&finish(&mut ch, 1000, &[read(2, row5 + 64, 32)]), 2) - 1000;
    let conflict = done_at(&finish(&mut ch, 2000, &[read(3, row9, 32)]), 3) - 2000;
    assert_eq!((hit, miss, conflict), (24, 42, 60));
    let s = ch.stats();
    assert_eq!((s.row_hits, s.row_misses, s.row_conflicts), (1, 1, 1));
    assert_eq!((s.act, s.pre, s.rd), (2, 1, 3));
}

/// Four ACTs to four banks go t_rrd (5) apart; the fifth waits for the four-activate window
/// (t_faw 40 here) after the first: ACTs at 1, 6, 11, 16, 41 (21 without the window). Each
/// read ends t_rcd + t_cl + burst = 20 DRAM cycles after its ACT.
#[test]
fn faw_delays_the_fifth_activation() {
    for (faw, fifth_act) in [(40u64, 41u64), (0, 21)] {
        let cfg = tiny(&[("dram.t_faw", &faw.to_string())]);
        let mut ch = DramChannel::new(&cfg, 0);
        let reqs: Vec<DramRequest> = (0..5)
            .map(|b| read(b as u64, addr(&cfg, 0, b, 1), 32))
            .collect();
        let done = finish(&mut ch, 0, &reqs);
        let acts = [1, 6, 11, 16, fifth_act];
        for (id, act) in acts.iter().enumerate() {
            assert_eq!(done_at(&done, id as u64), (act + 20) * 2, "t_faw {faw}");
        }
    }
}

/// Two ACTs to different banks are t_rrd apart (the first at 1; its burst 19..21 leaves the
/// bus free for the second's).
#[test]
fn rrd_spaces_activations() {
    for rrd in [5u64, 12] {
        let cfg = tiny(&[("dram.t_rrd", &rrd.to_string())]);
        let mut ch = DramChannel::new(&cfg, 0);
        let done = finish(
            &mut ch,
            0,
            &[
                read(1, addr(&cfg, 0, 0, 1), 32),
                read(2, addr(&cfg, 0, 1, 1), 32),
            ],
        );
        assert_eq!(done_at(&done, 1), 42);
        assert_eq!(done_at(&done, 2), (1 + rrd + 20) * 2);
    }
}

/// Turnaround, by hand, with every write drained at once (high watermark 1). Row 1 of bank 0
/// is opened by a read (data 19..21); a write and a read hitting it are taken at DRAM cycle
/// 101. The write goes first (draining): WR at 101, data 104..106. The read's RD waits for the
/// write data's end plus t_wtr: 106 + 4 = 110 (without it: 103, the t_ccd after the WR), data
/// 119..121: 7 turnaround cycles. Then a read taken at 201 (RD 201, data 210..212) and a write
/// taken at 202: its data may start t_rtw after the read data, 214, so WR at 211 instead of
/// 209 (bus free 212 − t_cwl 3): 2 more.
#[test]
fn write_to_read_and_read_to_write_turnaround() {
    let cfg = tiny(&[
        ("dram.write_drain_high", "1"),
        ("dram.write_drain_low", "0"),
    ]);
    let mut ch = DramChannel::new(&cfg, 0);
    let a = addr(&cfg, 0, 0, 1);
    finish(&mut ch, 0, &[read(1, a, 32)]);
    let done = finish(&mut ch, 200, &[write(2, a + 32, 32), read(3, a + 64, 32)]);
    assert_eq!((done_at(&done, 2), done_at(&done, 3)), (212, 242));
    assert_eq!(ch.stats().turnaround_cycles, 7);
    let mut out = Vec::new();
    run(&mut ch, 400, &mut out);
    ch.push(read(4, a + 96, 32), 400);
    run(&mut ch, 402, &mut out);
    let done = finish(&mut ch, 402, &[write(5, a + 128, 32)]);
    assert_eq!(done_at(&done, 4), 424);
    assert_eq!(done_at(&done, 5), 432);
    assert_eq!(ch.stats().turnaround_cycles, 9);
}

/// A stream of alternating reads and writes (row hits along a few rows of one bank) with the
/// default write drain: every return from draining to reading waits for the write data, then
/// t_wtr, before the RD, and the bus idles for that and t_cl; the same requests as reads only
/// never pay it. A larger t_wtr makes the mixed stream slower still.
#[test]
fn mixed_stream_pays_turnaround() {
    let stream = |writes: bool, t_wtr: &str| {
        let cfg = tiny(&[("dram.t_wtr", t_wtr)]);
        let mut ch = DramChannel::new(&cfg, 0);
        let row = sectors(&cfg, 0, 0, 1);
        let mut out = Vec::new();
        let mut now = 0;
        for i in 0..2000u64 {
            let r = DramRequest {
                id: i,
                addr: row[i as usize % 64],
                bytes: 32,
                write: writes && i % 2 == 1,
            };
            while !ch.can_accept(r.write) {
                now = ch.next_wake().unwrap();
                ch.tick(now, &mut out);
            }
            ch.push(r, now);
        }
        run(&mut ch, now + 100_000, &mut out);
        (out.iter().map(|d| d.at).max().unwrap(), *ch.stats())
    };
    let (reads_end, reads) = stream(false, "4");
    let (mixed_end, mixed) = stream(true, "4");
    let (slow_end, slow) = stream(true, "12");
    assert_eq!((reads.turnaround_cycles, reads.write_drains), (0, 0));
    assert!(mixed.write_drains > 10, "{mixed:?}");
    // Each return to reads waits at least t_cwl + burst + t_wtr − t_ccd = 3 + 2 + 4 − 2 after
    // the last WR.
    assert!(
        mixed.turnaround_cycles >= 7 * (mixed.write_drains - 1),
        "{mixed:?}"
    );
    assert!(mixed_end > reads_end, "{mixed_end} vs {reads_end}");
    assert!(slow_end > mixed_end && slow.turnaround_cycles > mixed.turnaround_cycles);
    assert_eq!((mixed.rd, mixed.wr), (1000, 1000));
    eprintln!(
        "mixed stream: {} turnaround cycles over {} drains; {reads_end} (reads only), {mixed_end}, {slow_end} (t_wtr 12) core cycles",
        mixed.turnaround_cycles, mixed.write_drains
    );
}

/// Refresh on tiny (t_refi 5462, t_rfc 46): channel 0 refreshes at 5462, 10924, ...; a read
/// arriving as one falls due waits t_rfc before it can activate: 46 + 20 DRAM cycles.
#[test]
fn refresh_blocks_the_channel_every_trefi() {
    let cfg = shipped("tiny", &[]);
    let (refi, rfc) = (5462u64, 46u64);
    let mut ch = DramChannel::new(&cfg, 0);
    assert_eq!(ch.next_wake(), Some(refi * 2), "idle: the next refresh");
    let done = finish(&mut ch, refi * 2, &[read(1, addr(&cfg, 0, 4, 2), 32)]);
    assert_eq!(done_at(&done, 1), (refi + rfc + 20) * 2);
    let mut out = Vec::new();
    run(&mut ch, 10 * refi * 2, &mut out);
    let s = ch.stats();
    assert_eq!(s.refresh, 10, "{s:?}");
    assert_eq!(s.refresh_cycles, 10 * rfc);
    // The open row was closed for the second refresh.
    assert_eq!(s.pre, 1);
    // Channel 1 is staggered by half an interval.
    let mut other = DramChannel::new(&cfg, 1);
    assert_eq!(other.next_wake(), Some((refi + refi / 2) * 2));
    other.tick(10 * refi * 2, &mut out);
    assert_eq!(other.stats().refresh, 9);
}

/// Per-bank refresh on tiny (t_refi 5462 over 16 banks: one bank every 341 DRAM cycles,
/// `t_rfc_pb` 20): bank 0's refresh falls due at 341. Reads to bank 0 and bank 5 are taken at
/// 341 too. The REF to bank 0 takes the row command bus at 341; bank 5 activates at 342 and
/// its data ends 20 cycles later (362); bank 0 activates once its refresh is over (361), data
/// at 381. Under all-bank refresh both would wait out `t_rfc`.
#[test]
fn per_bank_refresh_holds_one_bank_while_the_others_serve() {
    let cfg = shipped(
        "tiny",
        &[("dram.t_rfc_pb", "20"), ("dram.refresh", "per-bank")],
    );
    let mut ch = DramChannel::new(&cfg, 0);
    assert_eq!(ch.next_wake(), Some(341 * 2), "idle: bank 0's refresh");
    let done = finish(
        &mut ch,
        340 * 2,
        &[
            read(1, addr(&cfg, 0, 0, 2), 32),
            read(2, addr(&cfg, 0, 5, 2), 32),
        ],
    );
    assert_eq!(done_at(&done, 2), 362 * 2);
    assert_eq!(done_at(&done, 1), 381 * 2);
    // Then one bank every 341 cycles, each once per t_refi.
    let mut out = Vec::new();
    run(&mut ch, 341 * 2 * 32, &mut out);
    let s = ch.stats();
    assert_eq!(s.refresh, 32, "{s:?}");
    assert_eq!(s.refresh_cycles, 32 * 20);
}

/// Idle stretches under per-bank refresh are computed too, and agree with ticking finely.
#[test]
fn per_bank_idle_jumps_agree_with_fine_ticks() {
    let cfg = shipped(
        "volta-v100",
        &[("dram.t_rfc_pb", "141"), ("dram.refresh", "per-bank")],
    );
    let arrivals = [(1u64, 100u64), (2, 30_000), (3, 60_001), (4, 60_002)];
    let fine = fine_and_coarse_agree(&cfg, 3, &arrivals, 7);
    assert!(fine.stats().refresh > 100, "{:?}", fine.stats());
}

/// Reads to one bank of `channel` arriving at the given core cycles, each followed by 29,000
/// idle cycles, give the same completions and statistics ticked every `step` cycles as in one
/// jump; the finely ticked channel.
fn fine_and_coarse_agree(
    cfg: &Config,
    channel: u32,
    arrivals: &[(u64, u64)],
    step: u64,
) -> DramChannel {
    let mut fine = DramChannel::new(cfg, channel);
    let mut coarse = DramChannel::new(cfg, channel);
    let a = addr(cfg, channel, 7, 3);
    for &(i, t) in arrivals {
        fine.push(read(i, a + i * 64, 32), t);
        coarse.push(read(i, a + i * 64, 32), t);
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let mut now = t;
        while now < t + 29_000 {
            fine.tick(now, &mut x);
            now += step;
        }
        coarse.tick(t + 29_000, &mut y);
        fine.tick(t + 29_000, &mut x);
        assert_eq!(x, y);
        assert_eq!(fine.stats(), coarse.stats());
    }
    fine
}

/// Idle refreshes are computed, not stepped: a jump of 10^12 core cycles is immediate and
/// counts the same refreshes as ticking every few cycles.
#[test]
fn idle_jumps_cost_nothing_per_cycle() {
    let cfg = shipped("tiny", &[]);
    let refi = 5462u64;
    let mut ch = DramChannel::new(&cfg, 0);
    let mut out = Vec::new();
    ch.tick(1_000_000_000_000, &mut out);
    assert_eq!(ch.stats().refresh, 500_000_000_000 / refi);
    let fine = fine_and_coarse_agree(&cfg, 0, &[(1, 100), (2, 30_000), (3, 60_001)], 3);
    // 89,001 core cycles = 44,500 DRAM cycles: refreshes at 5462, 10924, ..., 43696.
    assert_eq!(fine.stats().refresh, 8);
}

/// Bank 2 has row 1 open. An older request to row 6 of that bank (a conflict) and four
/// younger hits to row 1 arrive together. FR-FCFS serves the hits first and the conflict last;
/// FCFS serves the conflict first, which turns the next request into a conflict too.
#[test]
fn fr_fcfs_serves_hits_before_an_older_miss_fcfs_does_not() {
    let order = |sched: &str| {
        let cfg = tiny(&[("dram.scheduler", sched)]);
        let mut ch = DramChannel::new(&cfg, 0);
        let open = addr(&cfg, 0, 2, 1);
        finish(&mut ch, 0, &[read(100, open, 32)]);
        let mut reqs = vec![read(0, addr(&cfg, 0, 2, 6), 32)];
        reqs.extend((1..5).map(|i| read(i, open + 32 * i, 32)));
        let mut done = finish(&mut ch, 1000, &reqs);
        done.sort_by_key(|d| d.at);
        let ids: Vec<u64> = done.iter().map(|d| d.id).collect();
        let s = ch.stats();
        (ids, s.row_hits, s.row_conflicts)
    };
    assert_eq!(order("fr-fcfs"), (vec![1, 2, 3, 4, 0], 4, 1));
    assert_eq!(order("fcfs"), (vec![0, 1, 2, 3, 4], 3, 2));
}

/// A conflicting request among an endless stream of row hits: without a cap it waits until
/// the hits stop; with a cap of 200 DRAM cycles it is served soon after starving (its PRE waits
/// for t_rtp after the last hit, then PRE, ACT, RD: a few dozen cycles).
#[test]
fn starvation_cap_bounds_the_wait() {
    let wait = |cap: &str| {
        let cfg = tiny(&[("dram.starvation_cap", cap)]);
        let mut ch = DramChannel::new(&cfg, 0);
        let open = sectors(&cfg, 0, 2, 1);
        let mut out = Vec::new();
        finish(&mut ch, 0, &[read(1000, open[0], 32)]);
        let mut now = 1000;
        ch.push(read(0, addr(&cfg, 0, 2, 6), 32), now);
        let mut id = 1;
        while now < 40_000 && !out.iter().any(|d: &DramDone| d.id == 0) {
            while ch.can_accept(false) {
                ch.push(read(id, open[id as usize % 64], 32), now);
                id += 1;
            }
            now += 1;
            ch.tick(now, &mut out);
        }
        run(&mut ch, now + 100_000, &mut out);
        (done_at(&out, 0) - 1000) / 2
    };
    let capped = wait("200");
    assert!((200..200 + 60).contains(&capped), "{capped}");
    assert!(wait("1000000") > 19_000);
}

/// tiny's write queue (32, drain from 28 down to 16): while reads keep coming, 27 writes stay
/// queued; the 28th starts a drain that writes 12 of them and returns to the reads. (The
/// starvation cap, which would drain old writes too, is set out of the way.)
#[test]
fn write_drain_follows_the_watermarks() {
    let cfg = tiny(&[("dram.starvation_cap", "1000000")]);
    let mut ch = DramChannel::new(&cfg, 0);
    let mut out = Vec::new();
    let reads_at = sectors(&cfg, 0, 1, 1);
    let writes_at = sectors(&cfg, 0, 9, 4);
    let mut now = 0;
    let mut id = 0;
    let mut feed = |ch: &mut DramChannel, until: u64, now: &mut u64, out: &mut Vec<DramDone>| {
        while *now < until {
            while ch.can_accept(false) {
                ch.push(read(id, reads_at[id as usize % 64], 32), *now);
                id += 1;
            }
            *now += 1;
            ch.tick(*now, out);
        }
    };
    for w in 0..27u64 {
        ch.push(write(1_000_000 + w, writes_at[w as usize], 32), now);
    }
    feed(&mut ch, 3000, &mut now, &mut out);
    assert_eq!((ch.stats().wr, ch.stats().write_drains), (0, 0));
    assert!(ch.stats().rd > 100);
    ch.push(write(1_000_027, writes_at[27], 32), now);
    feed(&mut ch, 6000, &mut now, &mut out);
    let s = ch.stats();
    assert_eq!(
        (s.wr, s.write_drains, s.write_queue_max),
        (12, 1, 28),
        "{s:?}"
    );
    // With no reads left the rest drain too.
    run(&mut ch, now + 100_000, &mut out);
    assert_eq!(ch.stats().wr, 28);
}

/// A lone write completes when its data burst ends (ACT 1, WR 10, data 13..15), not when it
/// is queued.
#[test]
fn writes_complete_when_their_data_is_written() {
    let cfg = tiny(&[]);
    let mut ch = DramChannel::new(&cfg, 0);
    let done = finish(&mut ch, 0, &[write(7, addr(&cfg, 0, 0, 0), 32)]);
    assert_eq!(done, vec![DramDone { id: 7, at: 30 }]);
    assert_eq!(ch.stats().read_latency.count, 0);
}

/// Under the closed policy every access activates and precharges: no hits, no conflicts,
/// even along one row.
#[test]
fn closed_policy_never_hits() {
    let cfg = tiny(&[("dram.row_policy", "closed")]);
    let mut ch = DramChannel::new(&cfg, 0);
    let row = sectors(&cfg, 0, 5, 2);
    let reqs: Vec<DramRequest> = (0..20).map(|i| read(i, row[i as usize], 32)).collect();
    finish(&mut ch, 0, &reqs);
    let s = ch.stats();
    assert_eq!((s.row_hits, s.row_conflicts, s.row_misses), (0, 0, 20));
    assert_eq!((s.act, s.pre), (20, 20));
    // One bank: each access is ACT, RD after t_rcd, auto-precharge t_ras after the ACT, ACT
    // again t_rp later: one every t_ras + t_rp = 30 DRAM cycles from the first at 1.
    let last = ch.stats().read_latency.max;
    assert_eq!(last, (1 + 19 * 30 + 20) * 2);
}

/// A full read queue refuses more reads (not writes) until a request leaves it.
#[test]
fn queues_are_bounded() {
    let cfg = tiny(&[]);
    let mut ch = DramChannel::new(&cfg, 0);
    let row = sectors(&cfg, 0, 0, 0);
    for i in 0..cfg.dram.read_queue as u64 {
        assert!(ch.can_accept(false));
        ch.push(read(i, row[i as usize % 64], 32), 0);
    }
    assert!(!ch.can_accept(false));
    assert!(ch.can_accept(true));
    let mut out = Vec::new();
    // The first read's RD issues at DRAM cycle 10 (core 20) and frees its entry.
    ch.tick(19, &mut out);
    assert!(!ch.can_accept(false));
    ch.tick(20, &mut out);
    assert!(ch.can_accept(false));
    assert_eq!(ch.stats().read_queue_max, cfg.dram.read_queue);
}

/// A request pushed into a full queue is a caller bug, reported as such.
#[test]
#[should_panic(expected = "check can_accept before push")]
fn push_into_a_full_queue_panics() {
    let cfg = tiny(&[("dram.read_queue", "1")]);
    let mut ch = DramChannel::new(&cfg, 0);
    ch.push(read(1, 0, 32), 0);
    ch.push(read(2, 64, 32), 0);
}

/// A pseudo-random mix of reads and writes over all banks, run twice: identical completions
/// and statistics; completions in order, ties by id; every request completes once.
#[test]
fn same_input_same_output() {
    let cfg = shipped("volta-v100", &[]);
    let run_once = || {
        let mut ch = DramChannel::new(&cfg, 3);
        let map = AddressMap::from_config(&cfg);
        let mut out = Vec::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut now = 0;
        let mut id = 0;
        while id < 4000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = (x >> 8) % (1 << 28) / 32 * 32;
            if locate(&map, a).0 != 3 {
                continue;
            }
            let w = x % 5 == 0;
            if ch.can_accept(w) {
                ch.push(
                    DramRequest {
                        id,
                        addr: a,
                        bytes: 32 << (x % 3),
                        write: w,
                    },
                    now,
                );
                id += 1;
            }
            now += x % 4;
            ch.tick(now, &mut out);
        }
        run(&mut ch, now + 1_000_000, &mut out);
        (out, *ch.stats())
    };
    let (a, sa) = run_once();
    let (b, sb) = run_once();
    assert_eq!(a, b);
    assert_eq!(sa, sb);
    assert_eq!(a.len(), 4000);
    assert!(a
        .windows(2)
        .all(|w| (w[0].at, w[0].id) < (w[1].at, w[1].id)));
    let mut ids: Vec<u64> = a.iter().map(|d| d.id).collect();
    ids.sort_unstable();
    assert!(ids.iter().enumerate().all(|(i, &id)| i as u64 == id));
    assert!(sa.busy_cycles <= sa.cycles);
    assert_eq!(sa.rd + sa.wr, 4000);
    assert_eq!(sa.row_hits + sa.row_misses + sa.row_conflicts, 4000);
}

/// Sequential 128 B reads keeping one channel's read queue full reach close to its peak
/// (`bus_bytes × data_rate` per DRAM cycle); what is missing is all-bank refresh (`t_rfc /
/// t_refi`) and row switches. Measured over 400,000 core cycles (dozens of refreshes).
#[test]
fn saturating_stream_reaches_near_peak_bandwidth() {
    let mut report = Vec::new();
    for name in CONFIGS {
        let cfg = shipped(name, &[]);
        let map = AddressMap::from_config(&cfg);
        let t = Timing::from_config(&cfg.dram);
        let mut ch = DramChannel::new(&cfg, 0);
        let mut out = Vec::new();
        let (mut now, mut next, mut id) = (0u64, 0u64, 0u64);
        let end = 400_000;
        while now < end {
            while ch.can_accept(false) {
                while locate(&map, next).0 != 0 {
                    next += 128;
                }
                ch.push(read(id, next, 128), now);
                next += 128;
                id += 1;
            }
            now = ch.next_wake().unwrap().min(end);
            ch.tick(now, &mut out);
        }
        let s = ch.stats();
        let fraction = s.read_bytes as f64 / (s.cycles * t.bytes_per_clock) as f64;
        // All-bank refresh stops the channel; per-bank refresh holds one bank at a time,
        // which the other banks' requests hide.
        let refresh = if cfg.dram.refresh == "all-bank" {
            t.t_rfc as f64 / t.t_refi as f64
        } else {
            0.0
        };
        report.push(format!(
            "{name}: {:.1} % of peak (refresh {:.1} %), hits {} of {}",
            100.0 * fraction,
            100.0 * refresh,
            s.row_hits,
            s.rd
        ));
        assert!(s.busy_cycles <= s.cycles);
        assert!(s.refresh >= 20, "{name}: {s:?}");
        assert!(fraction < 1.0 - refresh + 0.005, "{report:#?}");
        assert!(fraction > 0.97 * (1.0 - refresh), "{report:#?}");
    }
    eprintln!("{report:#?}");
}

/// Closed policy: a write opens its row while draining (no reads yet); a read to another row
/// of that bank arrives and ends the drain. The read must not wait for the write's access (it
/// would wait forever: writes drain only when the reads are gone). It precharges the write's
/// row once t_ras allows (ACT 1 + 21 = 22), activates its own (31), reads (RD 40, data
/// 49..51); its auto-precharge at 52 (t_ras) lets the write activate again at 61 (WR 70, data
/// 73..75).
#[test]
fn a_row_opened_for_the_other_queue_does_not_block() {
    let cfg = tiny(&[("dram.row_policy", "closed")]);
    let mut ch = DramChannel::new(&cfg, 0);
    ch.push(write(1, addr(&cfg, 0, 6, 1), 32), 0);
    let mut out = Vec::new();
    ch.tick(2, &mut out);
    let done = finish(&mut ch, 2, &[read(2, addr(&cfg, 0, 6, 2), 32)]);
    assert_eq!(done_at(&done, 2), 102);
    let done = finish(&mut ch, 103, &[]);
    let mut out = done;
    run(&mut ch, 1000, &mut out);
    assert_eq!(done_at(&out, 1), 150);
    let s = ch.stats();
    assert_eq!((s.act, s.pre, s.row_hits), (3, 3, 0), "{s:?}");
}

/// A steady read stream cannot hold a lone write forever: once it has waited the starvation
/// cap (300 DRAM cycles here) it forces a drain and completes soon after.
#[test]
fn a_starving_write_forces_a_drain() {
    let cfg = tiny(&[("dram.starvation_cap", "300")]);
    let mut ch = DramChannel::new(&cfg, 0);
    let row = sectors(&cfg, 0, 1, 1);
    let mut out = Vec::new();
    let (mut now, mut id) = (0, 0);
    ch.push(write(u64::MAX, addr(&cfg, 0, 9, 4), 32), 0);
    ch.push(read(id, row[0], 32), 0);
    while now < 20_000 {
        while ch.can_accept(false) {
            id += 1;
            ch.push(read(id, row[id as usize % 64], 32), now);
        }
        now += 1;
        ch.tick(now, &mut out);
    }
    let at = done_at(&out, u64::MAX);
    // Taken at 1, starving after 301; then ACT, WR, data: about 20 more DRAM cycles.
    assert!((600..700).contains(&at), "{at}");
    assert_eq!(ch.stats().write_drains, 1);
    assert!(ch.stats().rd > 1000);
}

/// The same requests pushed before or after the tick of their arrival cycle give the same
/// completions and statistics (a request is taken at the first DRAM edge after its arrival).
#[test]
fn push_before_or_after_tick_is_the_same() {
    // Queues large enough never to refuse: the same requests go in either way.
    let cfg = shipped(
        "volta-v100",
        &[("dram.read_queue", "4096"), ("dram.write_queue", "4096")],
    );
    let map = AddressMap::from_config(&cfg);
    let go = |push_first: bool| {
        let mut ch = DramChannel::new(&cfg, 0);
        let mut out = Vec::new();
        let mut x = 7u64;
        let mut id = 0;
        for now in 0..100_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let a = (x >> 20) % (1 << 26) / 64 * 64;
            let r = DramRequest {
                id,
                addr: a,
                bytes: 64,
                write: x % 3 == 0,
            };
            let mine = locate(&map, a).0 == 0 && x % 2 == 0;
            if !push_first {
                ch.tick(now, &mut out);
            }
            if mine {
                assert!(ch.can_accept(r.write));
                ch.push(r, now);
                id += 1;
            }
            if push_first {
                ch.tick(now, &mut out);
            }
        }
        run(&mut ch, 300_000, &mut out);
        (out, *ch.stats())
    };
    let (a, sa) = go(true);
    let (b, sb) = go(false);
    assert!(a.len() > 1000, "{}", a.len());
    assert!(a == b, "completions differ");
    assert_eq!(sa, sb);
}
