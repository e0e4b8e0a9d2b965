//! The L1 stage of one SM: its request queue (bounded, `l1.request_queue`), the L1 pipeline
//! (`l1.hit_latency` from the cycle an operation is taken to the cycle it completes or
//! leaves), its output link to the slices and its input port for replies.
//!
//! The L1 takes one operation per cycle, in submission order (the LD/ST unit already models
//! one line per issue interval), and runs its L1 steps. An operation that must wait for
//! another (a line in flight: an MSHR merge; every MSHR or way reserved) waits in the L1,
//! keeping its request-queue entry, and is retried when some operation progresses. An
//! operation bound for L2 leaves in order when its L1 latency is over; if the link is full
//! the L1 stops taking operations (head-of-line backpressure).

use std::collections::VecDeque;

use super::blocked::Blocked;
use super::link::{Link, Port};
use super::tma::TmaStage;
use super::{Env, Here, MemFault, MemorySystem, Next, Rotation, HEADER};
use crate::config::Config;
use crate::mem::hierarchy::Target;
use crate::mem::program::{OpExp, Place};

/// A message on an SM's link to the slices.
#[derive(Clone, Copy, Debug)]
pub(super) enum Packet {
    /// An operation going to its slice (kept here: the crossbar reads it at every delivery
    /// attempt); `bytes` of packet, sent at cycle `sent`.
    Op {
        id: u32,
        slice: u32,
        bytes: u64,
        sent: u64,
    },
    /// A silent write-back's dirty bytes for `slice`.
    WriteBack { slice: u32, bytes: u32, sent: u64 },
}

pub(super) struct L1Stage {
    /// Operations submitted and not yet taken: (cycle submitted, id).
    pub queue: VecDeque<(u64, u32)>,
    /// Operations blocked in the L1.
    pub blocked: Blocked,
    /// Blocked operations still holding a request-queue entry.
    pub held: usize,
    /// Operations leaving for L2: (cycle their L1 latency is over, id).
    pub out: VecDeque<(u64, u32)>,
    pub link: Link<Packet>,
    /// Replies arriving from the slices.
    pub in_port: Port,
    /// The last cycle the L1 took an operation (+1; 0: never).
    taken: u64,
    /// `l1.request_queue`.
    capacity: usize,
    /// The SM's TMA engine, feeding the request queue (`tma`).
    pub tma: TmaStage,
}

impl L1Stage {
    pub fn new(cfg: &Config) -> L1Stage {
        let (num, den) = cfg.l2_rate(cfg.start_mhz());
        let port = cfg.interconnect.port_bytes_per_cycle as u64 * num;
        L1Stage {
            queue: VecDeque::with_capacity(cfg.l1.request_queue as usize),
            blocked: Blocked::new(),
            held: 0,
            out: VecDeque::new(),
            link: Link::new(
                cfg.interconnect.buffer_packets as usize,
                cfg.interconnect.latency as u64,
                port,
                den,
            ),
            in_port: Port::new(port, den),
            taken: 0,
            capacity: cfg.l1.request_queue as usize,
            tma: TmaStage::new(
                cfg.sm.tma.as_ref().map_or(0, |t| t.bytes_per_cycle),
                cfg.sm.tma.as_ref().map_or(0, |t| t.store_bytes_per_cycle()),
                cfg.l1.line_bytes as u64,
                cfg.sm
                    .tma
                    .as_ref()
                    .map_or(1, |t| t.queue_lines(cfg.sm.shared_bytes)) as usize,
            ),
        }
    }

    /// Request-queue entries in use.
    /// The core clock is now `core_mhz` and the crossbar keeps the L2's clock
    /// (`clock.l2_mhz`): the SM's crossbar ports, per core cycle, follow the ratio.
    pub fn retime(&mut self, cfg: &Config, core_mhz: u32) {
        let (num, den) = cfg.l2_rate(Some(core_mhz));
        let port = cfg.interconnect.port_bytes_per_cycle as u64 * num;
        self.link.retime_port(port, den);
        self.in_port.retime(port, den);
    }

    pub fn occupancy(&self) -> usize {
        self.queue.len() + self.held
    }

    /// Whether the operation at the head of `out` is due by `now` (the L1 is held while it
    /// cannot leave).
    fn stuck(&self, now: u64) -> bool {
        self.out.front().is_some_and(|&(at, _)| at <= now)
    }

    /// Nothing queued (here or at the TMA engine), blocked, leaving or on the link.
    pub fn is_idle(&self) -> bool {
        self.tma.is_empty()
            && self.queue.is_empty()
            && self.blocked.is_empty()
            && self.out.is_empty()
            && self.link.len() == 0
    }

    pub fn next_wake(&self) -> u64 {
        let mut t = self.link.due().unwrap_or(u64::MAX);
        if let Some(&(at, _)) = self.out.front() {
            t = t.min(at);
        }
        if let Some(&(submitted, _)) = self.queue.front() {
            t = t.min(self.taken.max(submitted));
        }
        t.min(self.tma.next_wake(self.occupancy() < self.capacity))
    }
}

impl MemorySystem {
    /// SM `sm`'s L1 in cycle `c`: send what is due, let the TMA engine issue, then take one
    /// operation.
    pub(super) fn l1_cycle(&mut self, sm: usize, c: u64, env: &mut Env) -> Result<(), MemFault> {
        self.l1_send(sm, c, env);
        self.tma_cycle(sm, c);
        let l1 = &self.l1s[sm];
        if l1.stuck(c) {
            self.stats.l1_held_cycles += 1;
            return Ok(());
        }
        let Some(&(submitted, id)) = l1.queue.front() else {
            return Ok(());
        };
        if l1.taken > c || submitted > c {
            return Ok(());
        }
        self.l1s[sm].queue.pop_front();
        self.l1s[sm].taken = c + 1;
        let latency = self.visit_latency(id);
        self.ops.get_mut(id).l1_exit = c + latency;
        let next = self.run_at(id, Here::L1, c, env)?;
        self.l1_route(id, next, c);
        // An operation that leaves at once (a zero L1 latency) goes now.
        self.l1_send(sm, c, env);
        Ok(())
    }

    /// The L1 latency of an operation's first visit: the L1's, or the round trip of the SM's
    /// own memory for shared, constant and parameter operations (which never leave it).
    fn visit_latency(&self, id: u32) -> u64 {
        match self.ops.get(id).txn.target {
            Target::Global | Target::Local => self.lat.l1,
            Target::Shared => self.costs.shared as u64,
            Target::Const => self.costs.constant as u64,
            Target::Param => self.costs.param as u64,
        }
    }

    /// Where an operation goes after its steps at its L1.
    pub(super) fn l1_route(&mut self, id: u32, next: Next, c: u64) {
        let op = self.ops.get_mut(id);
        let sm = op.sm as usize;
        self.l1_on.set(sm);
        if next == Next::Blocked {
            if op.first_visit && !op.held {
                op.held = true;
                self.l1s[sm].held += 1;
            }
            let e = op.blocked;
            self.l1s[sm].blocked.push(e);
            return;
        }
        if op.held {
            op.held = false;
            self.l1s[sm].held -= 1;
        }
        op.first_visit = false;
        let at = op.l1_exit.max(c);
        match next {
            Next::Ended => self.complete(id, at),
            Next::Go(Place::L2) | Next::Go(Place::Mem) => {
                self.l1s[sm].out.push_back((at, id));
            }
            Next::Go(p) => unreachable!("an operation at its L1 goes on to {p:?}"),
            Next::Blocked => unreachable!("handled above"),
        }
    }

    /// Send the operations whose L1 latency is over, in order, while the link has room.
    fn l1_send(&mut self, sm: usize, c: u64, env: &mut Env) {
        while let Some(&(at, id)) = self.l1s[sm].out.front() {
            if at > c || !self.l1s[sm].link.has_room() {
                break;
            }
            self.l1s[sm].out.pop_front();
            let bytes = HEADER + self.request_payload(id, env);
            env.sms.side(sm).counters.icnt_bytes += bytes;
            let slice = self.ops.get(id).slice;
            let packet = Packet::Op {
                id,
                slice,
                bytes,
                sent: c,
            };
            let sent = self.l1s[sm].link.send(c, packet, bytes);
            self.again |= sent <= c;
        }
    }

    /// The bytes a request carries: the operation's bytes when its next step writes them
    /// (a store, an atomic's operands), else none.
    fn request_payload(&self, id: u32, env: &Env) -> u64 {
        let op = self.ops.get(id);
        let prog = env.programs.get(op.prog);
        let writes = super::op::step_has(prog, op.st.pc(), |o| {
            matches!(o, OpExp::Write(_) | OpExp::WriteMem | OpExp::AtomOp)
        });
        if writes {
            op.txn.bytes.count_ones() as u64
        } else {
            0
        }
    }

    /// Replies due at the SMs in cycle `c`: each slice link's packets, the links in a
    /// rotating order, each into its SM's input port while that has capacity (looking past a
    /// packet whose port is busy as `deliver_to_slices` does); an operation that ended
    /// completes on arrival, one that did not runs its next L1 steps.
    pub(super) fn deliver_to_sms(&mut self, c: u64, env: &mut Env) -> Result<(), MemFault> {
        let mut turn = Rotation::from(c as usize % self.slices.len());
        while let Some(s) = turn.next(&self.slice_on) {
            let (mut i, mut seen) = (0, 0);
            while let Some(&super::slice::Reply {
                id,
                sm,
                bytes,
                sent,
            }) = self.slices[s].link.get(i, c)
            {
                if seen == super::LOOKAHEAD {
                    break;
                }
                seen += 1;
                let sm = sm as usize;
                if !self.l1s[sm].in_port.free_in(c) {
                    i += 1;
                    continue;
                }
                self.slices[s].link.take(i);
                self.l1s[sm].in_port.transfer(c, bytes);
                let counters = env.sms.side(sm).counters;
                counters.icnt_queue_cycles += c - sent - self.lat.icnt.min(c - sent);
                if self.ops.get(id).ended {
                    self.complete(id, c);
                    self.progressed = true;
                } else {
                    let next = self.run_at(id, Here::L1, c, env)?;
                    self.l1_route(id, next, c);
                }
            }
        }
        Ok(())
    }
}
