//! An L2 slice: its request queue (bounded: `l2.request_queue` plus the crossbar's output
//! buffer of `interconnect.buffer_packets`), the operations returning from
//! DRAM, its bandwidth (`l2.bytes_per_cycle / l2.slices` bytes read or written per cycle),
//! the reply pipeline (`s` cycles) into its output link to the SMs, and the requests waiting
//! for their DRAM link.
//!
//! Each cycle the slice first sends what is due, then runs operations — DRAM returns first
//! (they hold lines other operations wait for, and must never wait behind new requests),
//! then requests in arrival order — while it has bandwidth left in the cycle and nothing it
//! must send is held by a full link. An operation runs all its consecutive L2 (and
//! placeless) steps in one visit. One whose next step is at memory goes to its channel's
//! link at once, in order; one that ended or goes back to L1 leaves `s` cycles later, its
//! packet carrying the bytes read at L2.

use std::collections::VecDeque;

use super::blocked::Blocked;
use super::channel::DramPacket;
use super::link::{Link, Port};
use super::{Env, Here, MemFault, MemorySystem, Next, Rotation, HEADER};
use crate::config::Config;
use crate::mem::dram_ctrl::locate;
use crate::mem::program::Place;

/// A message on a slice's link to the SMs: an operation going back, `bytes` of packet.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reply {
    pub id: u32,
    /// The operation's SM (read at every delivery attempt: kept here, not looked up).
    pub sm: u32,
    pub bytes: u64,
    pub sent: u64,
}

pub(super) struct SliceStage {
    /// Operations delivered and not yet run.
    pub input: VecDeque<u32>,
    cap: usize,
    /// Operations back from DRAM: (cycle they arrive, id), by arrival.
    pub returns: VecDeque<(u64, u32)>,
    /// Operations blocked here.
    pub blocked: Blocked,
    /// Bandwidth: bytes read and written.
    pub bw: Port,
    /// The reply pipeline: (cycle the reply leaves, id).
    pub to_sm: VecDeque<(u64, u32)>,
    /// DRAM requests and write-backs waiting for their channel's link: (channel, packet).
    pub to_dram: VecDeque<(u32, DramPacket)>,
    pub link: Link<Reply>,
    /// Requests arriving from the SMs.
    pub in_port: Port,
}

impl SliceStage {
    pub fn new(cfg: &Config) -> SliceStage {
        let (num, den) = cfg.l2_rate(cfg.start_mhz());
        let port = cfg.interconnect.port_bytes_per_cycle as u64 * num;
        let input = cfg.interconnect.slice_input_bytes_per_cycle() as u64 * num;
        // The crossbar's output buffer in front of the slice (GPGPU-Sim's
        // -icnt_out_buffer_limit, `interconnect.buffer_packets`) and the slice's own request
        // queue (-gpgpu_dram_partition_queues' icnt→L2 part, `l2.request_queue`).
        let cap = (cfg.l2.request_queue + cfg.interconnect.buffer_packets) as usize;
        SliceStage {
            input: VecDeque::with_capacity(cap),
            cap,
            returns: VecDeque::new(),
            blocked: Blocked::new(),
            bw: Port::new(
                cfg.l2.bytes_per_cycle as u64 * num,
                cfg.l2.slices.max(1) as u64 * den,
            ),
            to_sm: VecDeque::new(),
            to_dram: VecDeque::new(),
            link: Link::new(
                cfg.interconnect.buffer_packets as usize,
                cfg.interconnect.latency as u64,
                port,
                den,
            ),
            in_port: Port::new(input, den),
        }
    }

    /// The core clock is now `core_mhz` and the L2 keeps its own (`clock.l2_mhz`): the
    /// slice's bandwidth and its crossbar ports, per core cycle, follow the ratio.
    pub fn retime(&mut self, cfg: &Config, core_mhz: u32) {
        let (num, den) = cfg.l2_rate(Some(core_mhz));
        let port = cfg.interconnect.port_bytes_per_cycle as u64 * num;
        let input = cfg.interconnect.slice_input_bytes_per_cycle() as u64 * num;
        self.bw.retime(
            cfg.l2.bytes_per_cycle as u64 * num,
            cfg.l2.slices.max(1) as u64 * den,
        );
        self.link.retime_port(port, den);
        self.in_port.retime(input, den);
    }

    pub fn has_room(&self) -> bool {
        self.input.len() < self.cap
    }

    /// Nothing queued, returning, blocked, leaving or on the link.
    pub fn is_idle(&self) -> bool {
        self.input.is_empty()
            && self.returns.is_empty()
            && self.blocked.is_empty()
            && self.to_sm.is_empty()
            && self.to_dram.is_empty()
            && self.link.len() == 0
    }

    pub fn next_wake(&self) -> u64 {
        let mut t = self.link.due().unwrap_or(u64::MAX);
        if let Some(&(at, _)) = self.to_sm.front() {
            t = t.min(at);
        }
        if let Some(&(at, _)) = self.returns.front() {
            t = t.min(at.max(self.bw.free_from()));
        }
        if !self.input.is_empty() {
            t = t.min(self.bw.free_from());
        }
        t
    }

    /// Whether a visit in cycle `c` could change anything: a DRAM request waiting for its
    /// link, a reply or a DRAM return due, or a request queued. Without any, `slice_cycle`
    /// sends nothing, runs nothing and counts nothing, so the cycle skips the slice (most
    /// busy slices only hold replies in their pipeline or returns on their way).
    pub fn has_work_at(&self, c: u64) -> bool {
        !self.to_dram.is_empty()
            || !self.input.is_empty()
            || self.to_sm.front().is_some_and(|&(at, _)| at <= c)
            || self.returns.front().is_some_and(|&(at, _)| at <= c)
    }

    /// An operation back from DRAM at cycle `at`, kept in arrival order.
    pub fn push_return(&mut self, at: u64, id: u32) {
        let i = self.returns.partition_point(|&(a, _)| a <= at);
        self.returns.insert(i, (at, id));
    }
}

impl MemorySystem {
    /// Slice `s` in cycle `c`.
    pub(super) fn slice_cycle(&mut self, s: usize, c: u64, env: &mut Env) -> Result<(), MemFault> {
        self.slice_drain(s, c, env);
        loop {
            let sl = &self.slices[s];
            if !sl.bw.free_in(c) {
                break;
            }
            // A reply held by a full link holds the slice; a DRAM request held by a full
            // DRAM link holds only the requests behind it (returns must get through, or the
            // slice would wait for DRAM to drain the very queue it blocks).
            let reply_held = sl.to_sm.front().is_some_and(|&(at, _)| at <= c);
            let dram_held = !sl.to_dram.is_empty();
            let ret = sl.returns.front().filter(|&&(at, _)| at <= c).copied();
            let id = match ret {
                Some((_, id)) if !reply_held => {
                    self.slices[s].returns.pop_front();
                    id
                }
                _ if !reply_held && !dram_held && !sl.input.is_empty() => {
                    self.slices[s].input.pop_front().expect("not empty")
                }
                _ => {
                    if ret.is_some() || !sl.input.is_empty() {
                        self.stats.slice_held_cycles += 1;
                    }
                    break;
                }
            };
            let next = if self.ops.get(id).ended {
                self.progressed = true;
                Next::Ended
            } else {
                self.run_at(id, Here::Slice, c, env)?
            };
            self.slice_route(s, id, next, c, env);
            self.slice_drain(s, c, env);
        }
        Ok(())
    }

    /// Where an operation goes after its steps at slice `s`.
    pub(super) fn slice_route(&mut self, s: usize, id: u32, next: Next, c: u64, env: &mut Env) {
        self.slice_on.set(s);
        match next {
            Next::Blocked => {
                // A list of slice waits is scanned on L2 changes only (`retry_blocked`).
                debug_assert!(matches!(
                    self.ops.get(id).st.wait(),
                    crate::mem::hierarchy::Wait::L2Set { .. }
                ));
                let e = self.ops.get(id).blocked;
                self.slices[s].blocked.push(e)
            }
            Next::Ended | Next::Go(Place::L1) => {
                let at = c + self.lat.slice + self.partition_delay(s, id, c, env);
                self.slices[s].to_sm.push_back((at, id));
            }
            Next::Go(Place::Mem) => {
                let ch = locate(&self.map, self.ops.get(id).txn.line).0;
                self.slices[s].to_dram.push_back((ch, DramPacket::Op(id)));
            }
            Next::Go(p) => unreachable!("an operation at L2 goes on to {p:?}"),
        }
    }

    /// The cycles an operation leaving home slice `s` for its SM adds for the L2's partitions
    /// (`partition::Partitions::access`; 0 with one partition), counted in its SM's
    /// `l2_far_accesses` / `l2_copy_hits`.
    fn partition_delay(&mut self, s: usize, id: u32, c: u64, env: &mut Env) -> u64 {
        let Some(parts) = &self.partitions else {
            return 0;
        };
        let op = self.ops.get(id);
        let (sm, prog) = (op.sm, op.prog.index());
        let line = self.back.slices[s].line_addr(op.txn.line);
        let reach = parts.access(&mut self.back.slices, sm, s as u32, line, prog, c);
        let counters = env.sms.side(sm as usize).counters;
        match reach {
            super::partition::Reach::Near => 0,
            super::partition::Reach::Copy => {
                counters.l2_copy_hits += 1;
                0
            }
            super::partition::Reach::Far => {
                counters.l2_far_accesses += 1;
                parts.far_latency()
            }
        }
    }

    /// Send the replies that are due and the DRAM requests, in order, while their links have
    /// room (a silent write-back always goes).
    pub(super) fn slice_drain(&mut self, s: usize, c: u64, env: &mut Env) {
        while let Some(&(ch, p)) = self.slices[s].to_dram.front() {
            let link = &mut self.channels[ch as usize].link;
            if matches!(p, DramPacket::Op(_)) && !link.has_room() {
                break;
            }
            self.slices[s].to_dram.pop_front();
            let at = link.send(c, p, 0);
            self.ch_on.set(ch as usize);
            self.again |= at <= c;
        }
        while let Some(&(at, id)) = self.slices[s].to_sm.front() {
            if at > c || !self.slices[s].link.has_room() {
                break;
            }
            self.slices[s].to_sm.pop_front();
            let op = self.ops.get_mut(id);
            let bytes = HEADER + std::mem::take(&mut op.reply_bytes);
            let sm = op.sm;
            env.sms.side(sm as usize).counters.icnt_bytes += bytes;
            let reply = Reply {
                id,
                sm,
                bytes,
                sent: c,
            };
            let due = self.slices[s].link.send(c, reply, bytes);
            self.again |= due <= c;
        }
    }

    /// Requests due at the slices in cycle `c`: each SM link's packets, the links in a
    /// rotating order, into their slice's input port and queue while those have room. A
    /// packet whose slice is full waits; the crossbar looks past it at the next
    /// `LOOKAHEAD` packets of the link (virtual output queues), so packets for one slice stay
    /// in order.
    pub(super) fn deliver_to_slices(&mut self, c: u64, env: &mut Env) {
        let mut turn = Rotation::from(c as usize % self.l1s.len());
        while let Some(sm) = turn.next(&self.l1_on) {
            let (mut i, mut seen, mut held) = (0, 0, false);
            while let Some(&p) = self.l1s[sm].link.get(i, c) {
                if seen == super::LOOKAHEAD {
                    break;
                }
                seen += 1;
                let (s, bytes, sent) = match p {
                    super::l1::Packet::Op {
                        slice, bytes, sent, ..
                    } => (slice as usize, bytes, sent),
                    super::l1::Packet::WriteBack { slice, bytes, sent } => {
                        (slice as usize, HEADER + bytes as u64, sent)
                    }
                };
                let sl = &self.slices[s];
                let is_op = matches!(p, super::l1::Packet::Op { .. });
                if !sl.in_port.free_in(c) || (is_op && !sl.has_room()) {
                    held = true;
                    i += 1;
                    continue;
                }
                self.l1s[sm].link.take(i);
                let counters = env.sms.side(sm).counters;
                counters.icnt_queue_cycles += c - sent - self.lat.icnt.min(c - sent);
                let sl = &mut self.slices[s];
                sl.in_port.transfer(c, bytes);
                match p {
                    super::l1::Packet::Op { id, .. } => {
                        sl.input.push_back(id);
                        self.slice_on.set(s);
                    }
                    super::l1::Packet::WriteBack { bytes, .. } => {
                        // The dirty bytes are written at the slice: its bandwidth.
                        sl.bw.transfer(c, bytes as u64);
                        self.back.slice_bytes[s] += bytes as u64;
                        counters.l2_bytes += bytes as u64;
                    }
                }
            }
            if held {
                self.stats.sm_link_held_cycles += 1;
            }
        }
    }
}
