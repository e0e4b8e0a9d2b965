//! One SM's timeline recorder: per warp slot the state it is in since when, closed into a
//! `Record::State` when the state changes, and per CTA slot its CTA since when. The SM tells
//! it each state it classifies (the same points that count the stall breakdown), so a parked
//! warp's interval simply stays open until the warp is classified again.

use super::{Record, Track};
use crate::stats::Stall;

#[derive(Clone, Debug, Default)]
pub struct SmTimeline {
    warp: Vec<Option<(Stall, u64)>>,
    cta: Vec<Option<([u32; 3], u64)>>,
    out: Vec<Record>,
    /// Record memory requests (`--timeline-memory`).
    memory: bool,
}

impl SmTimeline {
    pub fn new(warp_slots: usize, cta_slots: usize) -> SmTimeline {
        SmTimeline {
            warp: vec![None; warp_slots],
            cta: vec![None; cta_slots],
            out: Vec::new(),
            memory: false,
        }
    }

    pub fn set_memory(&mut self, on: bool) {
        self.memory = on;
    }

    /// Whether memory requests are recorded.
    #[inline]
    pub fn memory(&self) -> bool {
        self.memory
    }

    /// Memory request `id` of warp slot `slot` was in flight over `[start, end)`.
    pub fn request(&mut self, slot: usize, id: u64, name: String, start: u64, end: u64) {
        self.out.push(Record::Request {
            slot: slot as u32,
            id,
            name,
            start,
            end,
        });
    }

    /// Warp `slot` is in `state` from `cycle` on.
    #[inline]
    pub fn observe(&mut self, slot: usize, state: Stall, cycle: u64) {
        match self.warp[slot] {
            Some((s, _)) if s == state => {}
            _ => {
                self.close(slot, cycle);
                self.warp[slot] = Some((state, cycle));
            }
        }
    }

    /// Warp `slot`'s state in `cycle` turned out to be `state` after all (an instruction
    /// picked in it did not issue: `SmStats::unissue`).
    pub fn amend(&mut self, slot: usize, state: Stall, cycle: u64) {
        if let Some((_, since)) = self.warp[slot] {
            if since == cycle {
                self.warp[slot] = Some((state, cycle));
                return;
            }
        }
        self.observe(slot, state, cycle);
        // The amended cycle only: the next classification decides what follows.
    }

    /// Warp slot `slot` is freed at `cycle`.
    pub fn close(&mut self, slot: usize, cycle: u64) {
        if let Some((state, start)) = self.warp[slot].take() {
            if cycle > start {
                self.out.push(Record::State {
                    slot: slot as u32,
                    state,
                    start,
                    end: cycle,
                });
            }
        }
    }

    pub fn cta_start(&mut self, cslot: usize, ctaid: [u32; 3], cycle: u64) {
        self.cta[cslot] = Some((ctaid, cycle));
    }

    pub fn cta_end(&mut self, cslot: usize, cycle: u64) {
        if let Some((ctaid, start)) = self.cta[cslot].take() {
            self.out.push(Record::Cta {
                cslot: cslot as u32,
                ctaid,
                start,
                end: cycle.max(start + 1),
            });
        }
    }

    pub fn instant(&mut self, track: Track, name: String, cycle: u64) {
        self.out.push(Record::Instant { track, name, cycle });
    }

    /// The launch ended (or faulted) at `cycle`: close whatever is open.
    pub fn finish(&mut self, cycle: u64) {
        for slot in 0..self.warp.len() {
            self.close(slot, cycle);
        }
        for cslot in 0..self.cta.len() {
            self.cta_end(cslot, cycle);
        }
    }

    /// The records since the last drain, in the order they were made.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Record> {
        self.out.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_become_intervals_when_they_change() {
        let mut t = SmTimeline::new(2, 1);
        t.cta_start(0, [1, 0, 0], 0);
        t.observe(0, Stall::Issued, 0);
        t.observe(0, Stall::Issued, 1);
        t.observe(0, Stall::ScoreboardLong, 2);
        t.observe(1, Stall::Issued, 2);
        t.amend(1, Stall::MemoryBackpressure, 2);
        t.observe(0, Stall::Issued, 40);
        t.finish(41);
        let got: Vec<Record> = t.drain().collect();
        let st = |slot, state, start, end| Record::State {
            slot,
            state,
            start,
            end,
        };
        assert_eq!(
            got,
            vec![
                st(0, Stall::Issued, 0, 2),
                st(0, Stall::ScoreboardLong, 2, 40),
                st(0, Stall::Issued, 40, 41),
                st(1, Stall::MemoryBackpressure, 2, 41),
                Record::Cta {
                    cslot: 0,
                    ctaid: [1, 0, 0],
                    start: 0,
                    end: 41
                },
            ]
        );
    }
}
