//! The channel's timing constraints in DRAM command-clock cycles, as the datasheets and the
//! Ramulator 2 / DRAMsim3 tables give them (`dram.t_*`), and the data-bus occupancy of one
//! request.
//!
//! Meaning of each constraint (JEDEC JESD79/JESD235 definitions unless said otherwise):
//! - `t_rcd` ACT → RD/WR of the same bank; `t_rp` PRE → ACT of the same bank; `t_ras`
//!   ACT → PRE of the same bank;
//! - `t_cl` RD → first read data; `t_cwl` WR → first write data;
//! - `t_ccd` column command → column command (no bank groups: one value);
//! - `t_rrd` ACT → ACT of different banks; `t_faw` at most four ACTs in any window of that
//!   many cycles (per channel);
//! - `t_wtr` end of write data → next RD command; `t_rtw` end of read data → start of write
//!   data (the bus turnaround: GPGPU-Sim's and Ramulator 2's RD→WR spacing
//!   CL + BL + 2 − CWL is `t_rtw` = 2);
//! - `t_wr` end of write data → PRE; `t_rtp` RD → PRE;
//! - `t_refi` refresh interval (0: no refresh), `t_rfc` an all-bank refresh's duration,
//!   `t_rfc_pb` a per-bank refresh's (`dram.refresh: per-bank`).

use crate::config::DramConfig;

/// Every constraint in DRAM cycles, and the data bus's bytes per DRAM cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    pub t_rcd: u64,
    pub t_rp: u64,
    pub t_ras: u64,
    pub t_cl: u64,
    pub t_cwl: u64,
    pub t_ccd: u64,
    pub t_rrd: u64,
    pub t_faw: u64,
    pub t_wtr: u64,
    pub t_rtw: u64,
    pub t_wr: u64,
    pub t_rtp: u64,
    pub t_refi: u64,
    pub t_rfc: u64,
    pub t_rfc_pb: u64,
    /// `bus_bytes × data_rate`: what the channel's data bus moves per DRAM cycle.
    pub bytes_per_clock: u64,
}

impl Timing {
    pub fn from_config(d: &DramConfig) -> Timing {
        Timing {
            t_rcd: d.t_rcd as u64,
            t_rp: d.t_rp as u64,
            t_ras: d.t_ras as u64,
            t_cl: d.t_cl as u64,
            t_cwl: d.t_cwl as u64,
            t_ccd: d.t_ccd as u64,
            t_rrd: d.t_rrd as u64,
            t_faw: d.t_faw as u64,
            t_wtr: d.t_wtr as u64,
            t_rtw: d.t_rtw as u64,
            t_wr: d.t_wr as u64,
            t_rtp: d.t_rtp as u64,
            t_refi: d.t_refi as u64,
            t_rfc: d.t_rfc as u64,
            t_rfc_pb: d.t_rfc_pb as u64,
            bytes_per_clock: (d.bus_bytes as u64 * d.data_rate as u64).max(1),
        }
    }

    /// DRAM cycles the data bus carries a request of `bytes` (the burst; at least one).
    pub fn burst(&self, bytes: u32) -> u64 {
        (bytes as u64).div_ceil(self.bytes_per_clock).max(1)
    }

    /// DRAM cycles from a read arriving at a precharged bank to the end of its data:
    /// ACT, `t_rcd`, RD, `t_cl`, the burst.
    pub fn unloaded_read(&self, bytes: u32) -> u64 {
        self.t_rcd + self.t_cl + self.burst(bytes)
    }
}
