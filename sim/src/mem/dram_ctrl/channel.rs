//! `DramChannel`: one channel's controller — queues, banks, scheduler, write drain, refresh —
//! advanced by DRAM clock edges (module header of `dram_ctrl` for the rules).
//!
//! Time: `clk` is the next DRAM cycle not yet processed; `next_event` the earliest cycle at
//! which anything could change (a command becoming ready, a request becoming eligible, a
//! refresh falling due, a request starting to starve). `tick` processes only event cycles and
//! jumps over the rest, so an idle stretch costs one step per refresh, and a busy one a step
//! per cycle with a command.

use std::collections::VecDeque;

use super::act_window::ActWindow;
use super::address::{locate, AddressMap};
use super::bank::Bank;
use super::clock::Clocks;
use super::data_bus::DataBus;
use super::queue::{Entry, RequestQueue};
use super::refresh::Refresh;
use super::row_policy::{row_policy, RowPolicy};
use super::scheduler::{scheduler, Candidate, Command, Rank, Scheduler};
use super::stats::DramChannelStats;
use super::timing::Timing;
use super::{DramDone, DramRequest};

/// No event.
const NEVER: u64 = u64::MAX;

/// A request whose data is on (or headed for) the bus.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    id: u64,
    /// Core cycle its data ends (`DramDone::at`).
    at: u64,
    arrival: u64,
    write: bool,
}

/// Per-bank facts about the served queue, rebuilt each step (`stamp` marks the step that
/// wrote them, so the array need not be cleared).
#[derive(Clone, Copy, Debug, Default)]
struct BankFacts {
    stamp: u64,
    oldest: u64,
    has_hit: bool,
    starving: Option<u64>,
}

/// The best ready command of one command bus this step: (rank, queue index, command).
type Pick = Option<(Rank, usize, Command)>;

pub struct DramChannel {
    index: u32,
    map: AddressMap,
    t: Timing,
    clocks: Clocks,
    policy: Box<dyn RowPolicy>,
    sched: Box<dyn Scheduler>,
    banks: Vec<Bank>,
    facts: Vec<BankFacts>,
    step_stamp: u64,
    reads: RequestQueue,
    writes: RequestQueue,
    draining: bool,
    drain_high: usize,
    drain_low: usize,
    /// `dram.starvation_cap`: also the longest a write waits before it forces a drain.
    write_cap: u64,
    acts: ActWindow,
    bus: DataBus,
    refresh: Refresh,
    clk: u64,
    next_event: u64,
    seq: u64,
    in_flight: VecDeque<InFlight>,
    stats: DramChannelStats,
}

impl DramChannel {
    /// Channel `index` of the config's DRAM: idle, every bank precharged.
    ///
    /// # Panics
    /// On a config that did not pass validation (an unknown scheduler or row policy).
    pub fn new(cfg: &crate::config::Config, index: u32) -> DramChannel {
        let d = &cfg.dram;
        let t = Timing::from_config(d);
        let map = AddressMap::from_config(cfg);
        let banks = map.banks as usize;
        let (rq, wq) = (d.read_queue as usize, d.write_queue as usize);
        let refresh = Refresh::new(&t, &d.refresh, map.banks, index, map.channels);
        DramChannel {
            index,
            map,
            t,
            clocks: cfg.dram_clocks_at(cfg.start_mhz()),
            policy: row_policy(&d.row_policy).expect("validated dram.row_policy"),
            sched: scheduler(&d.scheduler, d.starvation_cap as u64)
                .expect("validated dram.scheduler"),
            banks: vec![Bank::default(); banks],
            facts: vec![BankFacts::default(); banks],
            step_stamp: 0,
            reads: RequestQueue::new(rq),
            writes: RequestQueue::new(wq),
            draining: false,
            drain_high: d.write_drain_high as usize,
            drain_low: d.write_drain_low as usize,
            write_cap: d.starvation_cap as u64,
            acts: ActWindow::default(),
            bus: DataBus::default(),
            refresh,
            clk: 0,
            next_event: refresh.due(),
            seq: 0,
            // Data in flight at once is bounded by the column commands of one CAS latency
            // and burst (one per `t_ccd`): sized so that it does not grow.
            in_flight: VecDeque::with_capacity(rq + wq + (t.t_cl + t.t_cwl).min(1024) as usize + 8),
            stats: DramChannelStats::default(),
        }
    }

    /// Whether the read (or write) queue has room for one more request.
    pub fn can_accept(&self, write: bool) -> bool {
        self.queue(write).has_room()
    }

    /// Enqueue a request arriving at core cycle `now` (the caller checked `can_accept`). The
    /// controller takes it at the first DRAM edge after core cycle `now` (an arrival is
    /// registered by the next clock edge), so whether `push` comes before or after
    /// `tick(now)` makes no difference.
    ///
    /// # Panics
    /// When its queue is full.
    pub fn push(&mut self, req: DramRequest, now: u64) {
        let (channel, bank, row) = locate(&self.map, req.addr);
        debug_assert_eq!(channel, self.index, "request {req:?} for another channel");
        let eligible = (self.clocks.last_edge(now) + 1).max(self.clk);
        self.seq += 1;
        let e = Entry {
            id: req.id,
            bank,
            row,
            bytes: req.bytes,
            write: req.write,
            arrival: now,
            eligible,
            seq: self.seq,
            activated: false,
            precharged: false,
        };
        self.queue_mut(req.write).push(e);
        self.next_event = self.next_event.min(eligible);
    }

    /// Advance through every DRAM clock edge at or before core cycle `now`; requests whose
    /// data has ended by `now` are appended to `out`, in order of completion (ties by id).
    pub fn tick(&mut self, now: u64, out: &mut Vec<DramDone>) {
        let last = self.clocks.last_edge(now);
        while self.clk <= last {
            if self.next_event <= self.clk {
                if let Some(until) = self.idle_refreshes(last) {
                    self.refresh_while_idle(until);
                    continue;
                }
                let next = self.step(self.clk);
                debug_assert!(next > self.clk, "step at {} returned {next}", self.clk);
                // Time never stands still, whatever a step reports.
                self.next_event = next.max(self.clk + 1);
            }
            let until = self.next_event.min(last + 1);
            self.account(until - self.clk);
            self.clk = until;
        }
        self.complete(now, out);
    }

    /// The earliest core cycle at which `tick` could do something: the next event or the next
    /// completion. `None` only when idle with refresh disabled.
    pub fn next_wake(&self) -> Option<u64> {
        let event = (self.next_event != NEVER).then(|| self.clocks.edge_time(self.next_event));
        let done = self.in_flight.front().map(|f| f.at);
        match (event, done) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The core clock changed to `core_mhz` at core cycle `now` (the power governor): the
    /// DRAM edges still to come follow the new ratio; timings counted in DRAM cycles stand.
    pub fn set_core_clock(&mut self, core_mhz: u32, dram_mhz: u32, now: u64) {
        self.clocks = self.clocks.rebased(core_mhz, dram_mhz, now);
    }

    pub fn stats(&self) -> &DramChannelStats {
        &self.stats
    }

    fn queue(&self, write: bool) -> &RequestQueue {
        if write {
            &self.writes
        } else {
            &self.reads
        }
    }

    fn queue_mut(&mut self, write: bool) -> &mut RequestQueue {
        if write {
            &mut self.writes
        } else {
            &mut self.reads
        }
    }

    /// Occupancy and elapsed time over the `cycles` cycles from `clk`, in which nothing
    /// changed. A request counts from the edge that takes it, so the figures do not depend on
    /// whether it was pushed before or after the tick of its arrival cycle.
    fn account(&mut self, cycles: u64) {
        if cycles == 0 {
            return;
        }
        let (r, w) = (
            self.reads.taken_by(self.clk),
            self.writes.taken_by(self.clk),
        );
        let s = &mut self.stats;
        s.cycles += cycles;
        s.read_queue_sum += r as u64 * cycles;
        s.write_queue_sum += w as u64 * cycles;
        s.read_queue_max = s.read_queue_max.max(r as u32);
        s.write_queue_max = s.write_queue_max.max(w as u32);
    }

    /// When a refresh is due now and the channel is idle — no request taken, every bank
    /// precharged and ready, so REF issues at once as `step` would issue it — the last cycle
    /// through which it stays so (`last`, or just before the next queued request is taken).
    fn idle_refreshes(&self, last: u64) -> Option<u64> {
        let next_request = self.next_taken();
        // Per bank: each bank is ready by its turn (its last refresh is over by then).
        let first = self.refresh.bank().unwrap_or(0);
        let n = self.banks.len();
        let turn = |j: usize| match self.refresh.bank() {
            Some(_) => ((j + n - first) % n) as u64 * self.refresh.interval(),
            None => 0,
        };
        let idle = self.refresh.pending(self.clk)
            && next_request > self.clk
            && self
                .banks
                .iter()
                .enumerate()
                .all(|(j, b)| b.open.is_none() && b.next_act <= self.clk + turn(j));
        idle.then(|| last.min(next_request - 1))
    }

    /// Every refresh due from now through DRAM cycle `last`, at once: each issues REF at its
    /// due cycle, exactly as `step` would one by one, in O(1) rather than O(refreshes).
    fn refresh_while_idle(&mut self, last: u64) {
        let first = self.clk;
        let (interval, duration) = (self.refresh.interval(), self.refresh.duration());
        let n = (last - first) / interval + 1;
        let final_ref = first + (n - 1) * interval;
        match self.refresh.bank() {
            None => self
                .banks
                .iter_mut()
                .for_each(|b| b.refresh(final_ref, duration)),
            Some(b0) => {
                // Only the last refresh of each bank decides when it can activate.
                let banks = self.banks.len() as u64;
                for m in n.saturating_sub(banks)..n {
                    let b = ((b0 as u64 + m) % banks) as usize;
                    self.banks[b].refresh(first + m * interval, duration);
                }
            }
        }
        self.refresh.skip(n);
        self.stats.refresh += n;
        self.stats.refresh_cycles += n * duration;
        self.account(final_ref + 1 - first);
        self.clk = final_ref + 1;
        self.next_event = self.refresh.due().min(self.next_taken());
    }

    /// The DRAM cycle the oldest queued request is (or was) taken at (`NEVER` when none).
    fn next_taken(&self) -> u64 {
        [&self.reads, &self.writes]
            .iter()
            .filter_map(|q| q.entries().first().map(|e| e.eligible))
            .min()
            .unwrap_or(NEVER)
    }

    /// Hand over the requests whose data ended by core cycle `now`.
    fn complete(&mut self, now: u64, out: &mut Vec<DramDone>) {
        let first = out.len();
        while let Some(f) = self.in_flight.front().copied() {
            if f.at > now {
                break;
            }
            self.in_flight.pop_front();
            if !f.write {
                self.stats.read_latency.record(f.at - f.arrival);
            }
            out.push(DramDone { id: f.id, at: f.at });
        }
        // Bursts end in bus order; two ends in one core cycle go by id.
        out[first..].sort_unstable_by_key(|d| (d.at, d.id));
    }

    /// Everything the controller does at DRAM cycle `k`; returns the next event cycle (> k).
    fn step(&mut self, k: u64) -> u64 {
        self.update_drain(k);
        // A per-bank refresh holds its bank (and, when it issues, the row command bus).
        let (mut refreshing, mut row_bus_used, mut next_refresh) = (None, false, NEVER);
        if self.refresh.pending(k) {
            let Some(b) = self.refresh.bank() else {
                return self.step_refresh(k);
            };
            refreshing = Some(b);
            match self.step_bank_refresh(k, b) {
                Ok(()) => row_bus_used = true,
                Err(ready) => next_refresh = ready,
            }
        }
        let (col, row, mut next) = self.pick(k, refreshing);
        next = next.min(next_refresh);
        let row = if row_bus_used { None } else { row };
        if self.issue(k, col, row) || row_bus_used {
            return k + 1;
        }
        let starves = self.write_starves_at();
        if starves > k {
            next = next.min(starves);
        }
        // A request of either queue being taken can change the drain mode. A refresh that
        // is due but waits for its bank (`step_bank_refresh`) is looked at again next cycle.
        next.min(self.refresh.due().max(k + 1))
            .min(self.next_arrival(k))
    }

    /// The first cycle after `k` at which a queued request is taken (`NEVER` when none).
    fn next_arrival(&self, k: u64) -> u64 {
        [&self.reads, &self.writes]
            .iter()
            .filter_map(|q| q.entries().get(q.taken_by(k)).map(|e| e.eligible))
            .min()
            .unwrap_or(NEVER)
    }

    /// Write drain: start when the write queue reaches the high watermark, when there is no
    /// read to serve, or when the oldest write has waited longer than the starvation cap (so a
    /// steady read stream cannot hold a few writes forever); stop when the queue is down to the
    /// low watermark with reads waiting and no write starving, or empty.
    fn update_drain(&mut self, k: u64) {
        let (w, r) = (self.writes.taken_by(k), self.reads.taken_by(k));
        let starving = self.write_starves_at() <= k;
        if !self.draining {
            if w >= self.drain_high || (r == 0 && w > 0) || starving {
                self.draining = true;
                self.stats.write_drains += 1;
            }
        } else if w == 0 || (w <= self.drain_low && r > 0 && !starving) {
            self.draining = false;
        }
    }

    /// The cycle the oldest queued write starts starving (`NEVER` without writes).
    fn write_starves_at(&self) -> u64 {
        self.writes
            .entries()
            .first()
            .map_or(NEVER, |e| e.eligible + self.write_cap + 1)
    }

    /// The best ready column and row command of the served queue at `k`, and the earliest
    /// later cycle something could become ready.
    fn pick(&mut self, k: u64, refreshing: Option<usize>) -> (Pick, Pick, u64) {
        self.gather_facts(k);
        let keep_open = self.policy.keep_open();
        let served = if self.draining {
            &self.writes
        } else {
            &self.reads
        };
        let (mut col, mut row): (Pick, Pick) = (None, None);
        let mut next = NEVER;
        for (i, e) in served.entries().iter().enumerate() {
            if e.eligible > k {
                next = next.min(e.eligible);
                continue;
            }
            if refreshing == Some(e.bank as usize) {
                // Its bank waits for its refresh (whose readiness `step` adds to `next`).
                continue;
            }
            let bank = &self.banks[e.bank as usize];
            let command = needed(bank, e, keep_open);
            let f = &self.facts[e.bank as usize];
            let c = Candidate {
                seq: e.seq,
                waited: k - e.eligible,
                command,
                oldest_in_bank: f.oldest == e.seq,
                bank_has_hit: f.has_hit,
                bank_starving: f.starving,
            };
            let Some(rank) = self.sched.rank(&c) else {
                // Held back; starving later may change that.
                if let Some(cap) = self.sched.starvation_cap() {
                    if c.waited <= cap {
                        next = next.min(e.eligible + cap + 1);
                    }
                }
                continue;
            };
            let at = self.earliest(command, e, bank);
            if at > k {
                next = next.min(at);
                continue;
            }
            let slot = if command == Command::Column {
                &mut col
            } else {
                &mut row
            };
            if slot.is_none_or(|(r, _, _)| rank < r) {
                *slot = Some((rank, i, command));
            }
        }
        (col, row, next)
    }

    /// Per bank of the served queue: its oldest request, whether one hits the open row, the
    /// oldest starving one.
    fn gather_facts(&mut self, k: u64) {
        self.step_stamp += 1;
        let stamp = self.step_stamp;
        let keep_open = self.policy.keep_open();
        let served = if self.draining {
            &self.writes
        } else {
            &self.reads
        };
        for e in served.entries().iter().filter(|e| e.eligible <= k) {
            let f = &mut self.facts[e.bank as usize];
            if f.stamp != stamp {
                // Entries are in age order: the first seen is the bank's oldest.
                *f = BankFacts {
                    stamp,
                    oldest: e.seq,
                    has_hit: false,
                    starving: None,
                };
            }
            let bank = &self.banks[e.bank as usize];
            f.has_hit |= needed(bank, e, keep_open) == Command::Column;
            if f.starving.is_none() && self.sched.starving(k - e.eligible) {
                f.starving = Some(e.seq);
            }
        }
    }

    /// The earliest cycle `command` may issue for `e`.
    fn earliest(&self, command: Command, e: &Entry, bank: &Bank) -> u64 {
        match command {
            Command::Activate => bank.next_act.max(self.acts.earliest(&self.t)),
            Command::Precharge => bank.next_pre,
            Command::Column => bank.next_col.max(self.bus.bound(e.write, &self.t).at()),
        }
    }

    /// Issue the picked commands (one per command bus; only the better one when both want the
    /// same bank). Returns whether anything issued.
    fn issue(&mut self, k: u64, col: Pick, row: Pick) -> bool {
        let (col, row) = match (col, row) {
            (Some(c), Some(r)) if self.same_bank(c.1, r.1) => {
                if c.0 <= r.0 {
                    (Some(c), None)
                } else {
                    (None, Some(r))
                }
            }
            other => other,
        };
        // Row first: the column command's removal shifts queue indices.
        if let Some((_, i, command)) = row {
            self.issue_row(k, i, command);
        }
        if let Some((_, i, _)) = col {
            self.issue_column(k, i);
        }
        col.is_some() || row.is_some()
    }

    fn same_bank(&self, i: usize, j: usize) -> bool {
        let q = self.queue(self.draining).entries();
        q[i].bank == q[j].bank
    }

    fn issue_row(&mut self, k: u64, i: usize, command: Command) {
        let t = self.t;
        let draining = self.draining;
        let e = self.queue_mut(draining).get_mut(i);
        let (b, row) = (e.bank as usize, e.row);
        match command {
            Command::Activate => {
                e.activated = true;
                self.banks[b].activate(k, row, &t);
                self.acts.record(k);
                self.stats.act += 1;
            }
            Command::Precharge => {
                e.precharged = true;
                self.banks[b].precharge(k, &t);
                self.stats.pre += 1;
            }
            Command::Column => unreachable!("a column command on the row bus"),
        }
    }

    fn issue_column(&mut self, k: u64, i: usize) {
        let t = self.t;
        let draining = self.draining;
        let e = self.queue_mut(draining).remove(i);
        let bound = self.bus.bound(e.write, &t);
        // When it could have issued but for the turnaround.
        let plain = bound
            .plain
            .max(self.banks[e.bank as usize].next_col)
            .max(e.eligible);
        let burst = t.burst(e.bytes);
        let end = self.bus.issue(k, e.write, burst, &t);
        let bank = &mut self.banks[e.bank as usize];
        bank.column(k, e.write, end, &t);
        let s = &mut self.stats;
        s.turnaround_cycles += bound.turnaround.saturating_sub(plain);
        s.busy_cycles += burst;
        if e.write {
            s.wr += 1;
            s.write_bytes += e.bytes as u64;
        } else {
            s.rd += 1;
            s.read_bytes += e.bytes as u64;
        }
        match (e.precharged, e.activated) {
            (true, _) => s.row_conflicts += 1,
            (false, true) => s.row_misses += 1,
            (false, false) => s.row_hits += 1,
        }
        if !self.policy.keep_open() {
            // Auto-precharge: closes as soon as t_ras, t_rtp / t_wr allow.
            let at = bank.next_pre;
            bank.precharge(at, &t);
            s.pre += 1;
        }
        self.in_flight.push_back(InFlight {
            id: e.id,
            at: self.clocks.edge_time(end),
            arrival: e.arrival,
            write: e.write,
        });
    }

    /// A refresh is due: precharge the open banks one per cycle, then REF once every bank
    /// has been precharged for `t_rp`.
    fn step_refresh(&mut self, k: u64) -> u64 {
        let t = self.t;
        let mut next = NEVER;
        for b in self.banks.iter_mut().filter(|b| b.open.is_some()) {
            if b.next_pre <= k {
                b.precharge(k, &t);
                self.stats.pre += 1;
                return k + 1;
            }
            next = next.min(b.next_pre);
        }
        if next != NEVER {
            return next;
        }
        let ready = self.banks.iter().map(|b| b.next_act).max().unwrap_or(0);
        if ready > k {
            return ready;
        }
        self.banks.iter_mut().for_each(|b| b.refresh(k, t.t_rfc));
        self.stats.refresh += 1;
        self.stats.refresh_cycles += t.t_rfc;
        self.refresh.done();
        k + 1
    }

    /// A per-bank refresh of bank `b` is due: precharge it if open, then REF once it may
    /// activate; `Err` with the cycle that can next happen when neither can issue at `k`
    /// (the other banks are served meanwhile; requests to `b` wait).
    fn step_bank_refresh(&mut self, k: u64, b: usize) -> Result<(), u64> {
        let t = self.t;
        let duration = self.refresh.duration();
        let bank = &mut self.banks[b];
        if bank.open.is_some() {
            if bank.next_pre > k {
                return Err(bank.next_pre);
            }
            bank.precharge(k, &t);
            self.stats.pre += 1;
            return Ok(());
        }
        if bank.next_act > k {
            return Err(bank.next_act);
        }
        bank.refresh(k, duration);
        self.stats.refresh += 1;
        self.stats.refresh_cycles += duration;
        self.refresh.done();
        Ok(())
    }
}

/// The command `e` needs next. Under the closed policy a row opened for one request serves
/// that request alone, so any other request finds it in the way, as if another row were open
/// (the schedulers hold that PRE back while the row's own access is pending, unless starving).
fn needed(bank: &Bank, e: &Entry, keep_open: bool) -> Command {
    match bank.open {
        None => Command::Activate,
        Some(r) if r == e.row && (keep_open || e.activated) => Command::Column,
        Some(_) => Command::Precharge,
    }
}
