//! Thread-block clusters (PTX ISA 9.0 §2.2.2, §9.7.13.3): a cluster's CTAs are dispatched
//! together, each to its own SM; they reach each other's shared memory through
//! `.shared::cluster` addresses (`mapa`), remote mbarrier arrives and multicast copies, and
//! synchronise with `barrier.cluster`.
//!
//! Everything one SM does to another travels as an explicit message (`Outgoing`) that the GPU
//! delivers after the sending SM's cycle, timed to land no earlier than the next cycle: the
//! receiving SM applies it as a `Landing` at its ready cycle, so SMs never reach into each
//! other's state during a step and the order is deterministic (SM order within a cycle).
//!
//! Shared addresses carry the CTA's rank in its cluster, as on sm_90: a program sees
//! `rank · CLUSTER_RANK_STRIDE + offset` for its own variables (ptxas: `S2UR SR_CgaCtaId;
//! ULEA …, 0x18`) and `mapa` gives CTA r's byte at offset o the address `r · STRIDE + o`
//! (`arch_addr`). A kernel that puts such an address into a wgmma descriptor without masking
//! it to 18 bits therefore reads elsewhere in a CTA of rank ≥ 1, on the GPU and here.
//! Inside the simulator an access is resolved to an *internal* address (`internal_addr`): the
//! executing CTA's bytes as plain offsets below `CLUSTER_RANK_STRIDE`, a peer's as
//! `(r + 1) · STRIDE + o` (`cluster_addr`, `split_cluster_addr`).

use super::landing::Landing;

/// Bytes of cluster address space per rank (more than any CTA's shared memory).
pub const CLUSTER_RANK_STRIDE: u64 = 1 << 24;
/// The largest cluster (PTX ISA: 8 portable, 16 with the non-portable attribute).
pub const MAX_CLUSTER_CTAS: u32 = 16;

/// The address a program sees for CTA `rank`'s shared byte at `offset`.
pub fn arch_addr(rank: u32, offset: u64) -> u64 {
    (rank as u64) * CLUSTER_RANK_STRIDE + offset % CLUSTER_RANK_STRIDE
}

/// The offset part of a program's shared address, whatever CTA it names.
pub fn arch_offset(addr: u64) -> u64 {
    addr % CLUSTER_RANK_STRIDE
}

/// A program's shared address as the simulator resolves it in the CTA of rank `own`: its own
/// bytes as offsets, a peer's as `cluster_addr`.
pub fn internal_addr(addr: u64, own: u32) -> u64 {
    let rank = addr / CLUSTER_RANK_STRIDE;
    if rank == u64::from(own) {
        arch_offset(addr)
    } else {
        // A rank past the cluster stays one here, for check_rank to report.
        cluster_addr(rank.min(u64::from(u32::MAX - 1)) as u32, arch_offset(addr))
    }
}

/// An internal shared::cluster address as (rank, offset); rank None is the executing CTA.
pub fn split_cluster_addr(addr: u64) -> (Option<u32>, u64) {
    if addr < CLUSTER_RANK_STRIDE {
        (None, addr)
    } else {
        (
            Some((addr / CLUSTER_RANK_STRIDE - 1) as u32),
            addr % CLUSTER_RANK_STRIDE,
        )
    }
}

/// CTA `rank`'s shared offset `offset` as an internal address.
pub fn cluster_addr(rank: u32, offset: u64) -> u64 {
    (rank as u64 + 1) * CLUSTER_RANK_STRIDE + offset % CLUSTER_RANK_STRIDE
}

/// Where a CTA's cluster peers live: `peers[r]` = (SM, CTA slot, linear CTA id) of rank r.
#[derive(Clone, Debug, Default)]
pub struct ClusterLink {
    pub id: u64,
    pub rank: u32,
    pub peers: Vec<(u32, usize, u64)>,
}

/// A message from one SM to another (or to the GPU).
#[derive(Clone, Debug)]
pub enum Outgoing {
    /// Bytes, transaction completions or arrivals for CTA `cta` (linear id) on SM `sm`, slot
    /// `slot` (dropped if that CTA has retired).
    Land {
        sm: u32,
        slot: usize,
        cta: u64,
        landing: Landing,
    },
    /// `threads` threads of cluster `cluster` arrived at its barrier; their earlier stores to
    /// peers are visible from cycle `at` (`.release`: the phase completes no earlier).
    ClusterArrive { cluster: u64, threads: u32, at: u64 },
    /// Warp `slot` of SM `sm` waits until cluster `cluster`'s barrier has completed `phases`
    /// phases.
    ClusterWait {
        cluster: u64,
        sm: u32,
        slot: usize,
        phases: u32,
        /// The waiting lanes (all of a warp-synchronous warp's).
        lanes: u64,
    },
    /// `threads` threads of the cluster exited: they count as arrived from now on.
    ClusterExit { cluster: u64, threads: u32 },
}

/// One cluster's split barrier (`barrier.cluster.arrive` / `.wait`).
#[derive(Clone, Debug, Default)]
pub struct ClusterBarrier {
    pub threads: u32,
    pub arrived: u32,
    pub exited: u32,
    pub completed: u32,
    /// (SM, warp slot, phases waited for, lanes).
    pub waiters: Vec<(u32, usize, u32, u64)>,
    /// The cycle from which the current phase's arrivals are all visible, and when each
    /// completed phase was (phase k completed at `done_at[k - 1]`).
    pub visible_at: u64,
    pub done_at: Vec<u64>,
}

impl ClusterBarrier {
    pub fn new(threads: u32) -> ClusterBarrier {
        ClusterBarrier {
            threads,
            ..Default::default()
        }
    }

    /// Count arrivals (or exits); returns whether a phase completed. Exited threads count as
    /// arrived in every later phase, as exited threads do at CTA barriers on hardware.
    pub fn arrive(&mut self, threads: u32, exited: bool, at: u64) -> bool {
        self.visible_at = self.visible_at.max(at);
        if exited {
            self.exited += threads;
        } else {
            self.arrived += threads;
        }
        if self.arrived > 0 && self.arrived + self.exited >= self.threads {
            self.arrived = 0;
            self.completed += 1;
            self.done_at.push(self.visible_at);
            return true;
        }
        false
    }

    /// The waiters whose phase has completed, removed: (SM, warp slot, the cycle its
    /// phase's writes are visible, lanes).
    pub fn released(&mut self) -> Vec<(u32, usize, u64, u64)> {
        let done = self.completed;
        let mut out = Vec::new();
        let at = &self.done_at;
        self.waiters.retain(|&(sm, slot, p, lanes)| {
            if p <= done {
                let t = if p == 0 { 0 } else { at[p as usize - 1] };
                out.push((sm, slot, t, lanes));
                false
            } else {
                true
            }
        });
        out
    }
}

/// The launch's cluster shape: the manifest's, else the kernel's `.reqnctapercluster`, else
/// clusters of one; checked against the grid and the machine.
pub fn cluster_shape(
    grid: [u32; 3],
    given: Option<[u32; 3]>,
    required: Option<[u32; 3]>,
    sms: u32,
) -> Result<[u32; 3], String> {
    if let (Some(g), Some(r)) = (given, required) {
        if g != r {
            return Err(format!(
                "the launch's cluster {g:?} differs from the kernel's .reqnctapercluster {r:?}"
            ));
        }
    }
    let c = given.or(required).unwrap_or([1, 1, 1]);
    let n: u32 = c.iter().product();
    if c.contains(&0) || n > MAX_CLUSTER_CTAS {
        return Err(format!(
            "cluster {c:?} must have 1 to {MAX_CLUSTER_CTAS} CTAs"
        ));
    }
    for k in 0..3 {
        if grid[k] % c[k] != 0 {
            return Err(format!(
                "grid {grid:?} is not a whole number of clusters {c:?} (dimension {k})"
            ));
        }
    }
    if n > sms {
        return Err(format!(
            "a cluster of {n} CTAs needs {n} SMs (each CTA of a cluster runs on its own SM); the config has {sms}"
        ));
    }
    Ok(c)
}

/// The linear CTA id (x fastest) of rank `rank` of cluster `cluster` (clusters numbered x
/// fastest over the grid of clusters).
pub fn cta_of(grid: [u32; 3], c: [u32; 3], cluster: u64, rank: u32) -> u64 {
    let cg = [grid[0] / c[0], grid[1] / c[1]];
    let (cx, cy, cz) = (
        cluster % cg[0] as u64,
        (cluster / cg[0] as u64) % cg[1] as u64,
        cluster / (cg[0] as u64 * cg[1] as u64),
    );
    let r = rank as u64;
    let (rx, ry, rz) = (
        r % c[0] as u64,
        (r / c[0] as u64) % c[1] as u64,
        r / (c[0] as u64 * c[1] as u64),
    );
    let (x, y, z) = (
        cx * c[0] as u64 + rx,
        cy * c[1] as u64 + ry,
        cz * c[2] as u64 + rz,
    );
    x + grid[0] as u64 * (y + grid[1] as u64 * z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_addresses_round_trip() {
        assert_eq!(split_cluster_addr(0x40), (None, 0x40));
        let a = cluster_addr(3, 0x1230);
        assert_eq!(split_cluster_addr(a), (Some(3), 0x1230));
        assert_eq!(split_cluster_addr(cluster_addr(0, 8)), (Some(0), 8));
    }

    #[test]
    fn clusters_cover_the_grid_once() {
        let grid = [4, 6, 2];
        let c = [2, 3, 1];
        let mut seen = std::collections::BTreeSet::new();
        for cl in 0..8 {
            for r in 0..6 {
                assert!(seen.insert(cta_of(grid, c, cl, r)));
            }
        }
        assert_eq!(seen.len(), 48);
        assert_eq!(*seen.iter().max().unwrap(), 47);
    }

    #[test]
    fn shapes_are_checked() {
        assert_eq!(cluster_shape([4, 1, 1], None, None, 8), Ok([1, 1, 1]));
        assert_eq!(
            cluster_shape([4, 1, 1], Some([2, 1, 1]), None, 8),
            Ok([2, 1, 1])
        );
        assert!(cluster_shape([3, 1, 1], Some([2, 1, 1]), None, 8).is_err());
        assert!(cluster_shape([4, 1, 1], Some([4, 1, 1]), None, 2).is_err());
        assert!(cluster_shape([4, 1, 1], Some([2, 1, 1]), Some([4, 1, 1]), 8).is_err());
        assert!(cluster_shape([32, 1, 1], Some([32, 1, 1]), None, 132).is_err());
    }

    #[test]
    fn the_barrier_completes_when_every_live_thread_arrived() {
        let mut b = ClusterBarrier::new(256);
        b.waiters.push((0, 1, 1, 0b11));
        assert!(!b.arrive(128, false, 10));
        assert!(b.released().is_empty());
        assert!(b.arrive(128, false, 5));
        assert_eq!(b.released(), vec![(0, 1, 10, 0b11)]);
        // 64 threads exit: the next phase needs the other 192.
        assert!(!b.arrive(64, true, 0));
        assert!(b.arrive(192, false, 0));
        assert_eq!(b.completed, 2);
    }
}
