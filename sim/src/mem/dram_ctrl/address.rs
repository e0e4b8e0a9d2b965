//! The address map: which channel, bank and row a global address falls in.
//!
//! The address is cut into `interleave_bytes` chunks; chunk k goes to channel
//! `interconnect::spread(k, channels)`: k mod channels rotated by the XOR-fold of k / channels.
//! Consecutive chunks thus land on distinct channels, and a stride of a whole number of channel
//! rounds still moves across channels as its higher bits change (a plain modulo would camp on
//! one channel). Inside its channel, the chunk is the channel's local chunk k / channels, so
//! the channel sees the local address `(k / channels) × interleave_bytes + addr mod
//! interleave_bytes`; its `row_bytes` page p = local / row_bytes goes to bank
//! `spread(p, banks)`, row p / banks. So row = addr / (row_bytes × banks × channels) up to the
//! hash, and a sequential stream fills a whole row of one bank before moving to the next bank.
//! Banks are hashed like channels (permutation-based interleaving, Zhang et al., MICRO 2000):
//! strides of a multiple of `banks` pages would otherwise all conflict in one bank.

use crate::mem::interconnect::spread;

/// The DRAM's organisation as the address map sees it (all fields at least 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressMap {
    pub channels: u32,
    /// Banks per channel.
    pub banks: u32,
    /// Bytes of one row (page) of one bank, as its channel sees it.
    pub row_bytes: u32,
    /// Consecutive bytes mapped to one channel before the next.
    pub interleave_bytes: u32,
}

impl AddressMap {
    /// The map of `dram.*` (`channels`, `banks`, `row_bytes`, `interleave_bytes`).
    pub fn from_config(cfg: &crate::config::Config) -> AddressMap {
        let d = &cfg.dram;
        AddressMap {
            channels: d.channels.max(1),
            banks: d.banks.max(1),
            row_bytes: d.row_bytes.max(1),
            interleave_bytes: d.interleave_bytes.max(1),
        }
    }
}

/// The channel, bank and row of `addr` (module header).
pub fn locate(map: &AddressMap, addr: u64) -> (u32, u32, u64) {
    let interleave = map.interleave_bytes as u64;
    let channels = map.channels as u64;
    let chunk = addr / interleave;
    let channel = spread(chunk, map.channels);
    let local = chunk / channels * interleave + addr % interleave;
    let page = local / map.row_bytes as u64;
    (channel, spread(page, map.banks), page / map.banks as u64)
}
