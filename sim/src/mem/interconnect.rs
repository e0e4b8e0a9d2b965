//! The SM ↔ L2-slice crossbar as a timing model, and the address hash that picks an L2 slice.
//!
//! Owns: one output and one input port per SM and per slice, each a bandwidth calendar of
//! `port_bytes_per_cycle` (`mem::server`: a packet booked far ahead leaves the cycles before it
//! free), and the crossbar's fixed one-way latency. A packet waits for its source's
//! output port, flies `latency` cycles, then waits for its destination's input port; the
//! crossbar itself never blocks, so contention lives only at the endpoints (no switch
//! allocation or virtual channels). Requests are timed when issued, in issue order.
//!
//! Invariants: a lone packet arrives exactly `latency` cycles after it entered (the port
//! servers only delay a packet's start, never charge its own serialisation), so the unloaded
//! latencies the configs take from pointer chases stay exact; `new_launch` makes every port idle and keeps the counters.
//!
//! Slice hashing (`slice_of`, and `spread`, which the DRAM channel map shares): an address's
//! line is split into a low field (line mod n) and the bits above it; the slice is the low
//! field rotated by the XOR-fold of the high bits, mod n. Every run of n consecutive lines
//! with the same high bits covers all n slices once (so streams spread evenly for any n, not
//! only powers of two), while strides that are multiples of n lines still move from slice to
//! slice as the high bits change (a plain modulo would send them all to one slice: the
//! partition camping GPUs hash addresses to avoid).

use crate::mem::server::Server;

/// Crossbar counters (kept across launches).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IcntStats {
    pub packets: u64,
    pub bytes: u64,
    /// Summed over all ports: bytes / `port_bytes_per_cycle` for each port a packet crosses
    /// (two per packet).
    pub port_busy_cycles: u64,
    /// Total cycles packets waited for a busy port (output and input together).
    pub queue_cycles: u64,
}

/// The crossbar between `sms` SMs and `slices` L2 slices.
pub struct Interconnect {
    latency: u32,
    port_bytes_per_cycle: u32,
    /// The ports, each a calendar of its bandwidth (`mem::server`).
    sm_out: Vec<Server>,
    sm_in: Vec<Server>,
    slice_in: Vec<Server>,
    slice_out: Vec<Server>,
    /// Port occupancy in bytes; `stats.port_busy_cycles` is this over the port rate.
    busy_bytes: u64,
    pub stats: IcntStats,
}

impl Interconnect {
    /// Idle ports for `sms` SMs and `slices` slices (each at least 1), a one-way `latency` in
    /// cycles and `port_bytes_per_cycle` per port (at least 1).
    pub fn new(sms: u32, slices: u32, latency: u32, port_bytes_per_cycle: u32) -> Interconnect {
        let rate = port_bytes_per_cycle.max(1);
        let ports = |n: u32| vec![Server::new(rate); n.max(1) as usize];
        Interconnect {
            latency,
            port_bytes_per_cycle: port_bytes_per_cycle.max(1),
            sm_out: ports(sms),
            sm_in: ports(sms),
            slice_in: ports(slices),
            slice_out: ports(slices),
            busy_bytes: 0,
            stats: IcntStats::default(),
        }
    }

    /// The same crossbar with each slice's input port at `rate` bytes per cycle (at least 1;
    /// `interconnect.slice_input_bytes_per_cycle`): requests and write data into a slice.
    pub fn with_slice_input(mut self, rate: u32) -> Interconnect {
        let n = self.slice_in.len();
        self.slice_in = vec![Server::new(rate.max(1)); n];
        self
    }

    /// A packet of `bytes` from SM `sm` to slice `slice` entering at cycle `at`: the cycle it
    /// arrives at the slice.
    ///
    /// # Panics
    /// If `sm` or `slice` is out of range.
    pub fn to_slice(&mut self, sm: u32, slice: u32, bytes: u64, at: u64) -> u64 {
        let (src, dst) = (sm as usize, slice as usize);
        self.cross(Dir::ToSlice, src, dst, bytes, at)
    }

    /// The reply direction: slice `slice`'s output port, the flight, then SM `sm`'s input
    /// port; the cycle the packet arrives at the SM.
    ///
    /// # Panics
    /// If `sm` or `slice` is out of range.
    pub fn to_sm(&mut self, slice: u32, sm: u32, bytes: u64, at: u64) -> u64 {
        let (src, dst) = (slice as usize, sm as usize);
        self.cross(Dir::ToSm, src, dst, bytes, at)
    }

    fn cross(&mut self, dir: Dir, src: usize, dst: usize, bytes: u64, at: u64) -> u64 {
        let (out, inp) = match dir {
            Dir::ToSlice => (&mut self.sm_out[src], &mut self.slice_in[dst]),
            Dir::ToSm => (&mut self.slice_out[src], &mut self.sm_in[dst]),
        };
        let left = out.serve(at, bytes);
        let landed = left.saturating_add(self.latency as u64);
        let arrived = inp.serve(landed, bytes);
        let rate = self.port_bytes_per_cycle as u64;
        self.busy_bytes += 2 * bytes;
        let s = &mut self.stats;
        s.packets += 1;
        s.bytes += bytes;
        s.port_busy_cycles = self.busy_bytes / rate;
        s.queue_cycles += arrived - at - self.latency as u64;
        arrived
    }

    /// The one-way latency in cycles.
    pub fn latency(&self) -> u32 {
        self.latency
    }

    /// A new launch restarts the cycle count at 0: every port becomes idle; counters stay.
    pub fn new_launch(&mut self) {
        for ports in [
            &mut self.sm_out,
            &mut self.sm_in,
            &mut self.slice_in,
            &mut self.slice_out,
        ] {
            ports.iter_mut().for_each(Server::reset);
        }
    }
}

#[derive(Clone, Copy)]
enum Dir {
    ToSlice,
    ToSm,
}

/// Which L2 slice holds an address. Where every DRAM channel has the same number of slices
/// in front of it (`l2.slices` a multiple of `dram.channels`) and an L2 line never straddles
/// two channels (`dram.interleave_bytes` a multiple of `l2.line_bytes`), a slice serves one
/// channel, as an L2 sub-partition sits in front of one memory controller in GPGPU-Sim and
/// in NVIDIA's GPUs: the line goes to one of its channel's slices (`spread` over them). Else
/// the line is hashed across all slices (`slice_of`).
#[derive(Clone, Copy, Debug)]
pub struct SliceMap {
    line_bytes: u32,
    slices: u32,
    /// The DRAM map and slices per channel, when slices belong to channels.
    channels: Option<(crate::mem::dram_ctrl::AddressMap, u32)>,
}

impl SliceMap {
    pub fn new(cfg: &crate::config::Config) -> SliceMap {
        let map = crate::mem::dram_ctrl::AddressMap::from_config(cfg);
        let slices = cfg.l2.slices.max(1);
        let line = cfg.l2.line_bytes.max(1);
        let per_channel = slices % map.channels == 0 && map.interleave_bytes % line == 0;
        SliceMap {
            line_bytes: line,
            slices,
            channels: per_channel.then_some((map, slices / map.channels)),
        }
    }

    /// The slice of `addr`.
    pub fn slice_of(&self, addr: u64) -> u32 {
        match self.channels {
            Some((map, per)) => {
                let channel = crate::mem::dram_ctrl::locate(&map, addr).0;
                channel * per + spread(addr / self.line_bytes as u64, per)
            }
            None => slice_of(addr, self.line_bytes, self.slices),
        }
    }

    /// Slices belong to DRAM channels (slice `s` serves channel `s / (slices / channels)`).
    pub fn per_channel(&self) -> bool {
        self.channels.is_some()
    }
}

/// The L2 slice of `addr`: its `line_bytes` line hashed across `slices` (module header).
/// 0 for one slice (or none).
pub fn slice_of(addr: u64, line_bytes: u32, slices: u32) -> u32 {
    spread(addr / line_bytes.max(1) as u64, slices)
}

/// Unit `unit` (a line, an interleave chunk) hashed over `n` targets: the low field
/// `unit mod n` rotated by the XOR-fold of `unit / n`, mod n (module header). For a fixed
/// `unit / n` this is a permutation of the low field, hence exactly even over aligned runs.
pub fn spread(unit: u64, n: u32) -> u32 {
    if n <= 1 {
        return 0;
    }
    let n64 = n as u64;
    let (low, high) = (unit % n64, unit / n64);
    // Fold in groups as wide as the target field so that every high bit reaches it.
    let width = u64::BITS - (n64 - 1).leading_zeros();
    let fold = xor_fold(high, width);
    // Rotation rather than XOR with the low field: XOR is a permutation of 0..n only when n
    // is a power of two, and an addition mod n is one for every n.
    ((low + fold) % n64) as u32
}

/// The XOR of `x`'s `width`-bit groups (from bit 0 up), by halving the number of groups each
/// round (pairing group i with group i + half, whose shift is a multiple of `width`): a few
/// rounds instead of one per group — `spread` runs on every L2 access.
fn xor_fold(mut x: u64, width: u32) -> u64 {
    let mut groups = u64::BITS.div_ceil(width);
    while groups > 1 {
        let half = groups.div_ceil(2);
        let shift = width * half;
        x = (x & ((1u64 << shift) - 1)) ^ (x >> shift);
        groups = half;
    }
    x & ((1u64 << width) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xor_fold_is_the_xor_of_every_group() {
        let mut state = 7u64;
        for width in 1..=16 {
            for _ in 0..200 {
                let x = crate::rng::splitmix64(&mut state);
                let (mut want, mut rest) = (0u64, x);
                while rest != 0 {
                    want ^= rest & ((1u64 << width) - 1);
                    rest >>= width;
                }
                assert_eq!(xor_fold(x, width), want, "{x:#x} in groups of {width}");
            }
        }
    }

    /// Where slices divide evenly over channels, every line of a slice is in the slice's
    /// channel and a channel's lines spread evenly over its slices; else lines are hashed.
    #[test]
    fn slices_belong_to_their_dram_channel() {
        use crate::mem::dram_ctrl::{locate, AddressMap};
        let text = include_str!("../../../configs/hopper-h100.yaml");
        let cfg = crate::config::Config::from_yaml("hopper-h100.yaml", text, &[]).unwrap();
        let map = SliceMap::new(&cfg);
        assert!(map.per_channel());
        let dram = AddressMap::from_config(&cfg);
        let per = cfg.l2.slices / cfg.dram.channels;
        let mut count = vec![0u32; cfg.l2.slices as usize];
        for line in 0..80 * 1024u64 {
            let addr = line * 128 + 17;
            let s = map.slice_of(addr);
            assert_eq!(s / per, locate(&dram, addr).0, "line {line}");
            count[s as usize] += 1;
        }
        assert!(count.iter().all(|&c| c == 1024), "{count:?}");

        let mut odd = cfg.clone();
        odd.l2.slices = 60;
        let map = SliceMap::new(&odd);
        assert!(!map.per_channel());
        assert_eq!(map.slice_of(0x1234_5680), slice_of(0x1234_5680, 128, 60));
    }

    #[test]
    fn lone_packet_costs_exactly_the_latency() {
        let mut x = Interconnect::new(4, 8, 25, 32);
        assert_eq!(x.to_slice(1, 3, 128, 100), 125);
        assert_eq!(x.to_sm(3, 1, 128, 500), 525);
        assert_eq!(x.latency(), 25);
        assert_eq!(x.stats.queue_cycles, 0);
        assert_eq!(x.stats.packets, 2);
        // Two ports of 128 B at 32 B/cycle per packet.
        assert_eq!(x.stats.port_busy_cycles, 2 * 2 * 4);
    }

    /// Many packets from one SM at once leave one port at its rate, and arrive at that rate.
    #[test]
    fn saturated_port_delivers_its_bandwidth() {
        let mut x = Interconnect::new(1, 16, 10, 32);
        let n = 1000u64;
        let mut last = 0;
        for i in 0..n {
            last = x.to_slice(0, (i % 16) as u32, 128, 0);
        }
        // The last packet leaves after n - 1 transfers of 4 cycles each.
        assert_eq!(last, (n - 1) * 4 + 10);
        let rate = (n * 128) as f64 / (last - 10 + 4) as f64;
        assert!((rate - 32.0).abs() < 1e-9, "{rate}");
        assert!(x.stats.queue_cycles > 0);
    }

    /// A fractional rate stays exact: 48 B packets at 32 B/cycle leave every 1.5 cycles, each
    /// reported at the first cycle it moves in (a packet starting mid-cycle shares that cycle
    /// with the one before); the input port keeps the same pace and adds nothing more.
    #[test]
    fn fractional_port_time_is_exact() {
        let mut x = Interconnect::new(1, 1, 0, 32);
        let starts: Vec<u64> = (0..5).map(|_| x.to_slice(0, 0, 48, 0)).collect();
        assert_eq!(starts, [0, 1, 3, 4, 6]);
        assert_eq!(x.stats.queue_cycles, 1 + 3 + 4 + 6);
    }

    #[test]
    fn disjoint_pairs_do_not_queue() {
        let mut x = Interconnect::new(2, 2, 20, 32);
        for _ in 0..10 {
            x.to_slice(0, 0, 128, 0);
        }
        assert_eq!(x.to_slice(1, 1, 128, 0), 20);
        // The reply direction uses other ports than the requests.
        assert_eq!(x.to_sm(1, 1, 128, 0), 20);
        assert_eq!(x.to_sm(0, 0, 128, 0), 20);
    }

    #[test]
    fn two_sms_into_one_slice_share_its_input_port() {
        let mut x = Interconnect::new(2, 1, 20, 32);
        assert_eq!(x.to_slice(0, 0, 128, 0), 20);
        assert_eq!(x.to_slice(1, 0, 128, 0), 24);
        assert_eq!(x.stats.queue_cycles, 4);
    }

    /// A slice's input port at its own rate (`with_slice_input`): two 136-byte writes into one
    /// slice at 34 B/cycle arrive 4 cycles apart, where the 128 B/cycle ports of the SMs and the
    /// reply direction keep theirs.
    #[test]
    fn a_slower_slice_input_paces_writes_into_a_slice() {
        let mut x = Interconnect::new(2, 1, 20, 128).with_slice_input(34);
        assert_eq!(x.to_slice(0, 0, 136, 0), 20);
        assert_eq!(x.to_slice(1, 0, 136, 0), 24);
        // Replies leave slice 0's output port at 128 B/cycle: the second one cycle later.
        assert_eq!(x.to_sm(0, 0, 136, 0), 20);
        assert_eq!(x.to_sm(0, 1, 136, 0), 21);
    }

    #[test]
    fn new_launch_idles_the_ports_and_keeps_counters() {
        let mut x = Interconnect::new(1, 1, 5, 8);
        for _ in 0..10 {
            x.to_slice(0, 0, 128, 0);
        }
        let stats = x.stats;
        x.new_launch();
        assert_eq!(x.stats, stats);
        assert_eq!(x.to_slice(0, 0, 128, 0), 5);
    }

    #[test]
    fn slices_are_spread_evenly() {
        for slices in [1u32, 2, 3, 4, 16, 24, 32, 40, 64] {
            let mut count = vec![0u32; slices as usize];
            for line in 0..4096u64 {
                let s = slice_of(line * 128 + 5, 128, slices);
                assert!(s < slices);
                count[s as usize] += 1;
            }
            let mean = 4096.0 / slices as f64;
            for (s, &c) in count.iter().enumerate() {
                assert!(
                    (c as f64 - mean).abs() <= 0.1 * mean,
                    "{slices} slices: slice {s} holds {c} lines, mean {mean}"
                );
            }
        }
        assert_eq!(slice_of(0xdead_beef, 128, 1), 0);
    }

    /// A stride of a whole number of slice rounds still visits every slice.
    #[test]
    fn strides_do_not_camp_on_one_slice() {
        for slices in [4u32, 12, 40, 64] {
            let mut seen = vec![false; slices as usize];
            for i in 0..4096u64 {
                seen[slice_of(i * slices as u64 * 128, 128, slices) as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "{slices}");
        }
    }

    #[test]
    fn slice_hash_is_deterministic_and_line_granular() {
        for a in [0u64, 77, 4096, 1 << 40] {
            assert_eq!(slice_of(a, 128, 24), slice_of(a, 128, 24));
            assert_eq!(slice_of(a, 128, 24), slice_of(a / 128 * 128 + 127, 128, 24));
        }
    }
}
