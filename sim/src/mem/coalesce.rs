//! The coalescer: one warp memory instruction's per-lane accesses → the transactions the
//! memory system sees. Pure functions over a slice of accesses and a caller-owned scratch
//! buffer (no allocation once the buffer has grown to a warp's worth).
//!
//! Rules (documented in ARCHITECTURE.md, `mem/coalesce`):
//! - Global, local, const and param accesses become the set of distinct aligned
//!   `l1.sector_bytes` sectors they touch, grouped into `l1.line_bytes` lines (Volta: 32 B
//!   sectors, 128 B lines, Jia et al. 2018; the L1 takes one line per cycle, the GPGPU-Sim /
//!   Accel-Sim L1 model, so the lines are what the ldst unit serialises on).
//! - Local memory is interleaved per lane: "consecutive 32-bit words are accessed by
//!   consecutive thread IDs" (CUDA C++ Programming Guide, Device Memory Accesses, Local
//!   Memory), so lane `l`'s word `a / 4` lies at `(a / 4 · warp_size + l) · 4`.
//! - Shared accesses: bank = (address / bank_bytes) mod banks; lanes reading the same word of a
//!   bank are served by one broadcast, distinct words in one bank are serialised (CUDA C++
//!   Programming Guide, Shared Memory, compute capability 5.x and later). An access wider than
//!   a bank word is split as hardware does: a warp's request of `size` bytes per lane is
//!   served `banks · bank_bytes / size` lanes at a time (64-bit: half-warps, 128-bit:
//!   quarter-warps, same source). Each lane group needs as many wavefronts as its worst bank
//!   has distinct words; the conflict degree is `1 + Σ_groups (wavefronts − 1)`, so it is the
//!   classic "max distinct words per bank" for accesses up to a bank word and counts only the
//!   replays beyond the unavoidable split for wider ones. The time is the wavefronts
//!   (`shared_wavefronts`): a wide request takes at least as many as the most distinct words
//!   any one bank delivers for the whole warp, since a bank delivers one word a cycle (`banks · bank_bytes` per cycle, 128 B
//!   on every shipped config; Luo et al. measured 127.4 B/clk per H800 SM): a conflict-free
//!   64-bit warp request is 2 wavefronts, a 128-bit one 4, a broadcast 1 — an H200 stores a
//!   GEMM's f32 accumulators with `st.shared.v2` at 8 wavefronts where the groups alone give 7
//!   (traces/microbench/gemm_phases.yaml).

/// One lane's access: the lane, the byte address in its space and the bytes it covers (a
/// vector access is one access of the vector's size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneAccess {
    pub lane: u32,
    pub addr: u64,
    pub size: u32,
}

/// Sectors and lines of a global-like request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transactions {
    pub sectors: u32,
    pub lines: u32,
}

/// The geometry the coalescer needs (from `l1.*` and `sm.shared_*`).
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub sector_bytes: u32,
    pub line_bytes: u32,
    pub banks: u32,
    pub bank_bytes: u32,
    pub warp_size: u32,
}

/// Most banks the conflict counter handles (validated in the config).
pub const MAX_BANKS: usize = 128;

/// Distinct sectors and lines touched by `accesses` (sector and line sizes are powers of two,
/// lines a multiple of sectors). `scratch` is reused and left holding the sorted sector ids.
pub fn sectors(accesses: &[LaneAccess], g: &Geometry, scratch: &mut Vec<u64>) -> Transactions {
    scratch.clear();
    let sb = g.sector_bytes as u64;
    for a in accesses {
        push_units(a, sb, scratch);
    }
    scratch.sort_unstable();
    scratch.dedup();
    let per_line = (g.line_bytes / g.sector_bytes).max(1) as u64;
    let mut lines = 0;
    let mut prev = u64::MAX;
    for s in scratch.iter() {
        if s / per_line != prev {
            prev = s / per_line;
            lines += 1;
        }
    }
    Transactions {
        sectors: scratch.len() as u32,
        lines,
    }
}

/// The lines `accesses` touch, as (aligned line address, byte mask) sorted by address: one
/// memory operation each (the formal translator's coalescing, digest §2.7). `out` is reused.
/// Lines are at most `mem::cache::MAX_LINE_BYTES` (checked by the config).
pub fn line_masks(
    accesses: &[LaneAccess],
    line_bytes: u32,
    out: &mut Vec<(u64, crate::mem::cache::Mask)>,
) {
    out.clear();
    let lb = line_bytes as u64;
    for a in accesses {
        let mut at = a.addr;
        let end = a.addr + a.size.max(1) as u64;
        while at < end {
            let line = at - at % lb;
            let hi = end.min(line + lb);
            let n = (hi - at) as u32;
            let ones: crate::mem::cache::Mask = if n >= 128 { u128::MAX } else { (1 << n) - 1 };
            out.push((line, ones << (at - line)));
            at = hi;
        }
    }
    out.sort_unstable_by_key(|&(l, _)| l);
    out.dedup_by(|b, a| {
        if a.0 == b.0 {
            a.1 |= b.1;
            true
        } else {
            false
        }
    });
}

/// The interleaved address of lane `lane`'s local-memory byte `addr` (see the module doc).
pub fn local_interleave(addr: u64, lane: u32, warp_size: u32) -> u64 {
    ((addr / 4) * warp_size as u64 + lane as u64) * 4 + addr % 4
}

/// The shared-memory conflict degree of `accesses` (1 = conflict-free; see the module doc).
/// `scratch` is reused.
pub fn conflict_degree(accesses: &[LaneAccess], g: &Geometry, scratch: &mut Vec<u64>) -> u32 {
    let bb = g.bank_bytes.max(1);
    let banks = (g.banks as usize).clamp(1, MAX_BANKS);
    let widest = accesses.iter().map(|a| a.size).max().unwrap_or(0);
    // lanes per group: a group's request spans at most all banks once
    let group = if widest > bb {
        ((banks as u32 * bb) / widest).max(1)
    } else {
        g.warp_size.max(1)
    };
    let mut degree = 1;
    let mut start = 0;
    while start < g.warp_size.max(1) {
        let end = start + group;
        let in_group = |a: &&LaneAccess| a.lane >= start && a.lane < end;
        if !one_word_per_bank(accesses.iter().filter(in_group), bb as u64, banks) {
            scratch.clear();
            for a in accesses.iter().filter(in_group) {
                push_units(a, bb as u64, scratch);
            }
            degree += worst_bank_words(scratch, banks) - 1;
        }
        start = end;
    }
    degree
}

/// The wavefronts shared memory takes to serve `accesses` whose conflict degree is `degree`:
/// the degree, and for accesses wider than a bank word at least the most distinct words any
/// one bank delivers over the whole warp (a bank delivers one word a cycle; see the module
/// doc). `scratch` is reused.
pub fn shared_wavefronts(
    accesses: &[LaneAccess],
    g: &Geometry,
    degree: u32,
    scratch: &mut Vec<u64>,
) -> u32 {
    let bb = g.bank_bytes.max(1);
    if accesses.iter().all(|a| a.size <= bb) {
        return degree;
    }
    let banks = (g.banks as usize).clamp(1, MAX_BANKS);
    scratch.clear();
    for a in accesses {
        push_units(a, bb as u64, scratch);
    }
    degree.max(worst_bank_words(scratch, banks))
}

/// Push the ids of the `unit`-byte units `a` touches (sectors, bank words) onto `out`.
fn push_units(a: &LaneAccess, unit: u64, out: &mut Vec<u64>) {
    let first = a.addr / unit;
    let last = (a.addr + a.size.max(1) as u64 - 1) / unit;
    out.push(first);
    for w in first + 1..=last {
        out.push(w);
    }
}

/// Whether every one of `banks` banks sees at most one distinct `bank_bytes` word among
/// `accesses`: the common conflict-free and broadcast cases, settled in one pass.
fn one_word_per_bank<'a>(
    accesses: impl Iterator<Item = &'a LaneAccess>,
    bank_bytes: u64,
    banks: usize,
) -> bool {
    let mut held = [u64::MAX; MAX_BANKS];
    let pow2 = banks.is_power_of_two();
    for a in accesses {
        let first = a.addr / bank_bytes;
        let last = (a.addr + a.size.max(1) as u64 - 1) / bank_bytes;
        for w in first..=last {
            let bank = if pow2 {
                w as usize & (banks - 1)
            } else {
                (w % banks as u64) as usize
            };
            if held[bank] == u64::MAX {
                held[bank] = w;
            } else if held[bank] != w {
                return false;
            }
        }
    }
    true
}

/// The most distinct words any one of `banks` banks holds among `words` (sorted here).
fn worst_bank_words(words: &mut Vec<u64>, banks: usize) -> u32 {
    words.sort_unstable();
    words.dedup();
    let mut per_bank = [0u32; MAX_BANKS];
    for w in words.iter() {
        per_bank[(w % banks as u64) as usize] += 1;
    }
    per_bank[..banks].iter().copied().max().unwrap_or(1).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_masks_merge_lanes_of_one_line() {
        let acc = |lane, addr, size| LaneAccess { lane, addr, size };
        let mut out = Vec::new();
        line_masks(
            &[acc(0, 256 + 4, 4), acc(1, 256, 4), acc(2, 128 + 126, 4)],
            128,
            &mut out,
        );
        assert_eq!(out, vec![(128, 0b11 << 126), (256, 0xFF)]);
    }

    const G: Geometry = Geometry {
        sector_bytes: 32,
        line_bytes: 128,
        banks: 32,
        bank_bytes: 4,
        warp_size: 32,
    };

    /// Lane `l` at `base + l · stride` bytes, `size` bytes each.
    fn strided(base: u64, stride: u64, size: u32) -> Vec<LaneAccess> {
        (0..32)
            .map(|l| LaneAccess {
                lane: l,
                addr: base + l as u64 * stride,
                size,
            })
            .collect()
    }

    fn tx(a: &[LaneAccess]) -> (u32, u32) {
        let t = sectors(a, &G, &mut Vec::new());
        (t.sectors, t.lines)
    }

    fn deg(a: &[LaneAccess]) -> u32 {
        conflict_degree(a, &G, &mut Vec::new())
    }

    #[test]
    fn unit_stride_words_are_four_sectors_in_one_line() {
        assert_eq!(tx(&strided(0x1000, 4, 4)), (4, 1));
    }

    #[test]
    fn stride_two_words_is_eight_sectors_in_two_lines() {
        assert_eq!(tx(&strided(0x1000, 8, 4)), (8, 2));
    }

    #[test]
    fn one_address_is_one_sector() {
        assert_eq!(tx(&strided(0x1004, 0, 4)), (1, 1));
    }

    #[test]
    fn large_strides_touch_a_sector_and_a_line_per_lane() {
        assert_eq!(tx(&strided(0, 128, 4)), (32, 32));
        assert_eq!(tx(&strided(0, 32, 4)), (32, 8));
        // unaligned start: 128 contiguous bytes from 0x10 cross into a second line
        assert_eq!(tx(&strided(0x10, 4, 4)), (5, 2));
        // 8-byte unit stride: 256 bytes, 8 sectors, 2 lines
        assert_eq!(tx(&strided(0, 8, 8)), (8, 2));
        assert_eq!(tx(&[]), (0, 0));
    }

    #[test]
    fn shared_strides_give_the_classic_degrees() {
        assert_eq!(deg(&strided(0, 4, 4)), 1);
        assert_eq!(deg(&strided(0, 8, 4)), 2);
        assert_eq!(deg(&strided(0, 16, 4)), 4);
        assert_eq!(deg(&strided(0, 32 * 4, 4)), 32);
        assert_eq!(deg(&strided(0, 12, 4)), 1, "odd strides are conflict-free");
    }

    #[test]
    fn same_word_is_a_broadcast() {
        assert_eq!(deg(&strided(64, 0, 4)), 1);
        // bytes of one word: still one word per bank
        let bytes: Vec<LaneAccess> = (0..32)
            .map(|l| LaneAccess {
                lane: l,
                addr: (l / 8) as u64,
                size: 1,
            })
            .collect();
        assert_eq!(deg(&bytes), 1);
    }

    #[test]
    fn wide_accesses_are_split_into_lane_groups() {
        // 64-bit unit stride: two conflict-free half-warps
        assert_eq!(deg(&strided(0, 8, 8)), 1);
        // 64-bit stride 2: each half-warp has 2 words per bank → one replay each
        assert_eq!(deg(&strided(0, 16, 8)), 3);
        // 128-bit unit stride: four conflict-free quarter-warps
        assert_eq!(deg(&strided(0, 16, 16)), 1);
    }

    fn waves(a: &[LaneAccess]) -> u32 {
        shared_wavefronts(a, &G, deg(a), &mut Vec::new())
    }

    #[test]
    fn wide_accesses_take_the_banks_time() {
        // 64-bit unit stride: 256 B at 128 B a wavefront
        assert_eq!(waves(&strided(0, 8, 8)), 2);
        // 64-bit stride 2: every bank holds 4 of the warp's words (the degree says 3)
        assert_eq!(waves(&strided(0, 16, 8)), 4);
        // 128-bit unit stride: 512 B
        assert_eq!(waves(&strided(0, 16, 16)), 4);
        // a 128-bit broadcast: one word per bank
        assert_eq!(waves(&strided(32, 0, 16)), 1);
        // up to a bank word the wavefronts are the degree
        assert_eq!(waves(&strided(0, 8, 4)), 2);
        assert_eq!(waves(&strided(0, 4, 4)), 1);
        // gemm_phases' epilogue: lane l stores 8 bytes at row l / 4 (1 KiB apart), column
        // l % 4 — 8 rows in the same 8 banks: 8 wavefronts (the half-warps alone give 1 + 3 + 3)
        let epilogue: Vec<LaneAccess> = (0..32)
            .map(|l| LaneAccess {
                lane: l,
                addr: (l / 4) as u64 * 1024 + (l % 4) as u64 * 8,
                size: 8,
            })
            .collect();
        assert_eq!(deg(&epilogue), 7);
        assert_eq!(waves(&epilogue), 8);
    }

    /// The conflict degree by definition: per lane group, sort every touched word and count
    /// the distinct words of the busiest bank.
    fn reference_degree(a: &[LaneAccess], g: &Geometry) -> u32 {
        let (bb, banks) = (g.bank_bytes as u64, g.banks as u64);
        let widest = a.iter().map(|x| x.size).max().unwrap_or(0);
        let group = if widest > g.bank_bytes {
            (g.banks * g.bank_bytes / widest).max(1)
        } else {
            g.warp_size
        };
        let mut degree = 1;
        for start in (0..g.warp_size).step_by(group as usize) {
            let mut words: Vec<u64> = a
                .iter()
                .filter(|x| x.lane >= start && x.lane < start + group)
                .flat_map(|x| x.addr / bb..=(x.addr + x.size as u64 - 1) / bb)
                .collect();
            words.sort_unstable();
            words.dedup();
            let worst = (0..banks)
                .map(|b| words.iter().filter(|&&w| w % banks == b).count() as u32)
                .max()
                .unwrap_or(0);
            degree += worst.max(1) - 1;
        }
        degree
    }

    #[test]
    fn conflict_degree_agrees_with_its_definition() {
        // A small linear congruential generator: deterministic patterns with repeats,
        // broadcasts and conflicts, on power-of-two and other bank counts.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        for banks in [32, 24, 16, 7] {
            let g = Geometry { banks, ..G };
            for _ in 0..300 {
                let size = [1, 2, 4, 8, 16][next(5) as usize];
                let span = 1 + next(512);
                let mut a = Vec::new();
                for lane in 0..32 {
                    if next(8) != 0 {
                        let addr = next(span) / size as u64 * size as u64;
                        a.push(LaneAccess { lane, addr, size });
                    }
                }
                assert_eq!(
                    conflict_degree(&a, &g, &mut Vec::new()),
                    reference_degree(&a, &g),
                    "{banks} banks, {size}-byte accesses {a:?}"
                );
            }
        }
    }

    #[test]
    fn inactive_lanes_do_not_count() {
        let a: Vec<LaneAccess> = strided(0, 128, 4).into_iter().take(4).collect();
        assert_eq!(deg(&a), 4);
        assert_eq!(tx(&a), (4, 4));
    }

    #[test]
    fn local_words_interleave_across_lanes() {
        let a: Vec<LaneAccess> = (0..32)
            .map(|l| LaneAccess {
                lane: l,
                addr: local_interleave(8, l, 32),
                size: 4,
            })
            .collect();
        assert_eq!(tx(&a), (4, 1));
        assert_eq!(local_interleave(1, 3, 32), 13);
    }
}
