//! `Activity`: every count the power model prices, GPU-wide, at one moment. The governor
//! takes the difference of two (an interval's work); the report the whole launch's.

use super::events::EnergyEvents;
use crate::stats::SmStats;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Activity {
    pub events: EnergyEvents,
    pub warp_instructions: u64,
    /// Shared-memory bank wavefronts: requests plus conflict replays.
    pub shared_wavefronts: u64,
    /// L1 lookups (hits and misses) and L2 lookups.
    pub l1_accesses: u64,
    pub l2_accesses: u64,
    pub icnt_bytes: u64,
    pub dram_bytes: u64,
    pub dram_activates: u64,
    /// Banks refreshed (an all-bank refresh counts each bank).
    pub dram_refreshes: u64,
}

impl Activity {
    /// The SMs' counters summed, with the DRAM command counts (activates, refreshes) of the
    /// component memory system's channels when there is one; without it activates are the
    /// row misses and conflicts the issue engine counted.
    pub fn gather<'a>(
        sms: impl Iterator<Item = &'a SmStats>,
        dram_commands: Option<(u64, u64)>,
    ) -> Activity {
        let mut a = Activity::default();
        let mut row_opens = 0;
        for s in sms {
            a.events.add(&s.energy);
            a.warp_instructions += s.warp_instructions;
            let m = &s.memory;
            a.shared_wavefronts += m.shared_requests + m.shared_replays;
            a.l1_accesses += m.l1_hits + m.l1_misses;
            a.l2_accesses += m.l2_hits + m.l2_misses;
            a.icnt_bytes += m.icnt_bytes;
            a.dram_bytes += m.dram_bytes;
            row_opens += m.dram_row_misses + m.dram_row_conflicts;
        }
        (a.dram_activates, a.dram_refreshes) = dram_commands.unwrap_or((row_opens, 0));
        a
    }

    /// The work done between `earlier` and `self` (counters only grow within a launch).
    pub fn since(&self, earlier: &Activity) -> Activity {
        let e = &self.events;
        let o = &earlier.events;
        let mut events = EnergyEvents {
            register_accesses: e.register_accesses - o.register_accesses,
            tensor_set_bits: e.tensor_set_bits - o.tensor_set_bits,
            tensor_bits: e.tensor_bits - o.tensor_bits,
            active_cycles: e.active_cycles - o.active_cycles,
            ..EnergyEvents::default()
        };
        for (i, v) in events.lane_ops.iter_mut().enumerate() {
            *v = e.lane_ops[i] - o.lane_ops[i];
        }
        for (i, v) in events.tensor_fmas.iter_mut().enumerate() {
            *v = e.tensor_fmas[i] - o.tensor_fmas[i];
        }
        Activity {
            events,
            warp_instructions: self.warp_instructions - earlier.warp_instructions,
            shared_wavefronts: self.shared_wavefronts - earlier.shared_wavefronts,
            l1_accesses: self.l1_accesses - earlier.l1_accesses,
            l2_accesses: self.l2_accesses - earlier.l2_accesses,
            icnt_bytes: self.icnt_bytes - earlier.icnt_bytes,
            dram_bytes: self.dram_bytes - earlier.dram_bytes,
            dram_activates: self.dram_activates - earlier.dram_activates,
            dram_refreshes: self.dram_refreshes - earlier.dram_refreshes,
        }
    }
}
