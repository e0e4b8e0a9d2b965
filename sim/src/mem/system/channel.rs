//! The DRAM side of one channel: the link from the slices (`⌊d/2⌋` cycles, bounded by
//! `l2.request_queue`) into the channel controller (`dram_ctrl::DramChannel`: its own read
//! and write queues, banks, scheduler, refresh, clock), and the way back (`⌈d/2⌉` cycles, to
//! the operation's slice).
//!
//! An operation at the head of the link runs its memory step when the channel has room for
//! the requests that step makes (the controller is timing only: the step reads or writes
//! `GlobalMemory` then, and the request carries its bytes); it waits in the link, holding
//! those behind it, while the channel's queue is full. When all its requests are done it
//! travels back to its slice. Silent write-backs enter the write queue the same way.

use std::collections::VecDeque;

use super::link::Link;
use super::{Env, Here, MemFault, MemorySystem, Next, WRITE_BACK_ID};
use crate::config::Config;
use crate::mem::dram_ctrl::{DramChannel, DramRequest};
use crate::mem::program::OpExp;

/// A message on a DRAM link.
#[derive(Clone, Copy, Debug)]
pub(super) enum DramPacket {
    /// An operation whose next step is at memory.
    Op(u32),
    /// A silent `wb_L2`: a write with no operation waiting for it.
    WriteBack { id: u64, addr: u64, bytes: u32 },
}

pub(super) struct ChannelStage {
    pub link: Link<DramPacket>,
    pub chan: DramChannel,
    /// Requests a step made beyond the room it found (a step with several memory accesses).
    backlog: VecDeque<DramRequest>,
    /// Requests pushed and not done.
    outstanding: usize,
}

impl ChannelStage {
    pub fn new(cfg: &Config, index: u32, latency: u64) -> ChannelStage {
        ChannelStage {
            // The link's own bandwidth is not a limit: the channel's bus is.
            link: Link::new(cfg.l2.request_queue as usize, latency, u64::MAX >> 20, 1),
            chan: DramChannel::new(cfg, index),
            backlog: VecDeque::new(),
            outstanding: 0,
        }
    }

    /// A request made by a step (or a write-back) at cycle `now`.
    pub fn push(&mut self, id: u64, addr: u64, bytes: u32, write: bool, now: u64) {
        let req = DramRequest {
            id,
            addr,
            bytes: bytes.max(1),
            write,
        };
        self.outstanding += 1;
        if self.backlog.is_empty() && self.chan.can_accept(write) {
            self.chan.push(req, now);
        } else {
            self.backlog.push_back(req);
        }
    }

    /// Nothing on the link and no request outstanding (a backlog counts as outstanding).
    pub fn is_idle(&self) -> bool {
        self.link.len() == 0 && self.outstanding == 0
    }

    pub fn next_wake(&self) -> u64 {
        let mut t = self.link.due().unwrap_or(u64::MAX);
        if self.outstanding > 0 {
            t = t.min(self.chan.next_wake().unwrap_or(u64::MAX));
        }
        t
    }
}

impl MemorySystem {
    /// Channel `ch` in cycle `c`: requests that arrived enter it (their memory steps run),
    /// then it advances; operations whose requests are all done start back to their slice.
    pub(super) fn channel_cycle(
        &mut self,
        ch: usize,
        c: u64,
        env: &mut Env,
    ) -> Result<(), MemFault> {
        self.channel_backlog(ch, c);
        while let Some(&p) = self.channels[ch].link.front(c) {
            let stage = &mut self.channels[ch];
            if !stage.backlog.is_empty() {
                self.stats.dram_link_held_cycles += 1;
                break;
            }
            match p {
                DramPacket::WriteBack { id, addr, bytes } => {
                    if !stage.chan.can_accept(true) {
                        self.stats.dram_link_held_cycles += 1;
                        break;
                    }
                    stage.link.pop();
                    stage.push(id, addr, bytes, true, c);
                    self.back.channel_bytes[ch] += bytes as u64;
                }
                DramPacket::Op(id) => {
                    let (reads, writes) = self.memory_step_kinds(id, env);
                    let stage = &mut self.channels[ch];
                    if (reads && !stage.chan.can_accept(false))
                        || (writes && !stage.chan.can_accept(true))
                    {
                        self.stats.dram_link_held_cycles += 1;
                        break;
                    }
                    stage.link.pop();
                    let next = self.run_at(id, Here::Mem, c, env)?;
                    if next == Next::Blocked {
                        let op = self.ops.get(id);
                        return Err(MemFault {
                            sm: op.sm,
                            tag: op.tag,
                            prog: op.prog,
                            line: op.txn.line,
                            error: crate::mem::hierarchy::ProgramError(
                                "a step at memory waits for another operation (only shared-memory locks do, and they never reach DRAM)".into(),
                            ),
                        });
                    }
                    if self.ops.get(id).dram_wait == 0 {
                        // A memory step without a DRAM access: straight back.
                        let s = self.ops.get(id).slice as usize;
                        let at = c + self.lat.from_dram;
                        self.slices[s].push_return(at, id);
                        self.slice_on.set(s);
                        self.again |= at <= c;
                    }
                }
            }
        }
        let stage = &mut self.channels[ch];
        if stage.outstanding == 0 {
            return Ok(());
        }
        stage.chan.tick(c, &mut self.done);
        for k in 0..self.done.len() {
            let d = self.done[k];
            self.channels[ch].outstanding -= 1;
            if d.id & WRITE_BACK_ID != 0 {
                continue;
            }
            let id = d.id as u32;
            let op = self.ops.get_mut(id);
            op.dram_wait -= 1;
            if op.dram_wait == 0 {
                let s = op.slice as usize;
                let at = d.at + self.lat.from_dram;
                self.slices[s].push_return(at, id);
                self.slice_on.set(s);
                self.again |= at <= c;
            }
        }
        self.done.clear();
        self.channel_backlog(ch, c);
        Ok(())
    }

    /// Requests beyond the room their step found enter as room frees, in order.
    fn channel_backlog(&mut self, ch: usize, c: u64) {
        let stage = &mut self.channels[ch];
        while let Some(&req) = stage.backlog.front() {
            if !stage.chan.can_accept(req.write) {
                break;
            }
            stage.backlog.pop_front();
            stage.chan.push(req, c);
        }
    }

    /// Whether the memory step operation `id` is at reads and writes DRAM.
    fn memory_step_kinds(&self, id: u32, env: &Env) -> (bool, bool) {
        let op = self.ops.get(id);
        let prog = env.programs.get(op.prog);
        let pc = op.st.pc();
        (
            super::op::step_has(prog, pc, |o| o == OpExp::ReadMem),
            super::op::step_has(prog, pc, |o| o == OpExp::WriteMem),
        )
    }
}
