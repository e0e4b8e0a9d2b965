//! The DRAM clock domain: DRAM command-clock edges against core cycles, in exact integer
//! arithmetic.
//!
//! DRAM edge `k` (edge 0 at core cycle 0) falls at core time `k × core / dram`; the controller
//! acts on an edge in the first core cycle at or after it, ⌈k × core / dram⌉, and a core cycle
//! `t` has seen every edge `k ≤ ⌊t × dram / core⌋`. The two clock rates are kept as a reduced
//! fraction, products in `u128`, so no rounding drifts over a long run and no float is used.
//!
//! When the core clock changes (the power governor, `power::governor`) the mapping is rebased
//! at the cycle of the change: the edge last seen then is placed at that cycle and later edges
//! follow at the new ratio. The phase within one DRAM cycle is lost at each change (at most
//! one DRAM cycle early), which is exact enough for changes thousands of cycles apart.

/// The ratio of the core clock to the DRAM command clock, from a base point on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clocks {
    /// Core MHz and DRAM MHz divided by their greatest common divisor.
    core: u64,
    dram: u64,
    /// The core cycle and the DRAM edge the current ratio counts from (0, 0 until a change).
    base_core: u64,
    base_edge: u64,
}

impl Clocks {
    /// Both rates in MHz (each at least 1).
    pub fn new(core_mhz: u32, dram_mhz: u32) -> Clocks {
        let (core, dram) = reduced(core_mhz, dram_mhz);
        Clocks {
            core,
            dram,
            base_core: 0,
            base_edge: 0,
        }
    }

    /// The core clock changed to `core_mhz` at core cycle `now`: later edges follow the new
    /// ratio from the edge last seen at `now`.
    pub fn rebased(&self, core_mhz: u32, dram_mhz: u32, now: u64) -> Clocks {
        let (core, dram) = reduced(core_mhz, dram_mhz);
        Clocks {
            core,
            dram,
            base_core: now,
            base_edge: self.last_edge(now),
        }
    }

    /// The core cycle in which DRAM edge `k` is acted on: ⌈k × core / dram⌉ from the base (an
    /// edge before the base counts as at the base).
    pub fn edge_time(&self, k: u64) -> u64 {
        let since = k.saturating_sub(self.base_edge);
        self.base_core.saturating_add(ceil_div(
            since as u128 * self.core as u128,
            self.dram as u128,
        ))
    }

    /// The last DRAM edge at or before core cycle `t`: ⌊t × dram / core⌋ from the base.
    pub fn last_edge(&self, t: u64) -> u64 {
        let since = t.saturating_sub(self.base_core);
        self.base_edge.saturating_add(saturate(
            since as u128 * self.dram as u128 / self.core as u128,
        ))
    }

    /// A span of `n` DRAM cycles in core cycles at the current ratio, rounded up (a
    /// constraint of n DRAM cycles cannot be met in fewer core cycles).
    pub fn to_core(&self, n: u64) -> u64 {
        ceil_div(n as u128 * self.core as u128, self.dram as u128)
    }
}

fn reduced(core_mhz: u32, dram_mhz: u32) -> (u64, u64) {
    let (core, dram) = (core_mhz.max(1) as u64, dram_mhz.max(1) as u64);
    let g = gcd(core, dram);
    (core / g, dram / g)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

fn ceil_div(n: u128, d: u128) -> u64 {
    saturate(n.div_ceil(d))
}

fn saturate(x: u128) -> u64 {
    u64::try_from(x).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clock change keeps the edges continuous: none is seen twice or skipped at the change,
    /// and the edges after it come at the new ratio.
    #[test]
    fn a_rebase_continues_the_edges_at_the_new_ratio() {
        let c = Clocks::new(1980, 1310);
        let now = 100_003;
        let seen = c.last_edge(now);
        let r = c.rebased(1440, 1310, now);
        assert_eq!(r.last_edge(now), seen);
        for t in now..now + 5000 {
            assert!(r.last_edge(t + 1) - r.last_edge(t) <= 1);
        }
        // 1310 edges per 1440 core cycles from the change on.
        assert_eq!(r.edge_time(seen + 1310 * 7), now + 1440 * 7);
        assert_eq!(r.to_core(131), 144);
        for k in seen + 1..seen + 3000 {
            let t = r.edge_time(k);
            assert!(
                r.last_edge(t) >= k && r.last_edge(t - 1) < k,
                "edge {k} at {t}"
            );
        }
    }

    /// V100: core 1530 MHz, HBM2 877 MHz. An edge is acted on in exactly the core cycles that
    /// have seen it, and edges never bunch or skip (each core cycle sees at most one, since the
    /// core clock is the faster).
    #[test]
    fn edges_and_core_cycles_agree() {
        let c = Clocks::new(1530, 877);
        for k in 0..5000u64 {
            let t = c.edge_time(k);
            assert!(c.last_edge(t) >= k, "edge {k} at {t}");
            assert!(t == 0 || c.last_edge(t - 1) < k, "edge {k} seen before {t}");
        }
        for t in 0..5000u64 {
            assert!(c.last_edge(t + 1) - c.last_edge(t) <= 1);
        }
        // 877 edges per 1530 core cycles exactly: no drift over a long run.
        assert_eq!(c.edge_time(877 * 1_000_000), 1530 * 1_000_000);
        assert_eq!(c.to_core(13), 23); // 13 × 1530 / 877 = 22.68
    }

    #[test]
    fn same_clock_is_identity_and_ratios_reduce() {
        let c = Clocks::new(1400, 1400);
        assert_eq!((c.edge_time(7), c.last_edge(7)), (7, 7));
        assert_eq!(Clocks::new(1400, 700), Clocks::new(2, 1));
        assert_eq!(Clocks::new(2, 1).to_core(9), 18);
        // A DRAM clock faster than the core: several edges per core cycle.
        let f = Clocks::new(1000, 3000);
        assert_eq!((f.last_edge(1), f.edge_time(4)), (3, 2));
        assert_eq!(Clocks::new(1, 1).edge_time(u64::MAX), u64::MAX);
    }
}
