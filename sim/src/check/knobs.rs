//! The randomised knobs of `gpusim check`'s simulator runs: run 0 is the configuration as
//! given; every later run draws, from the check's seed and its index, a scheduler seed for the
//! random warp scheduler and jitter on the L2, DRAM and interconnect latencies. Any such
//! machine is one the semantics allow, so a race-free kernel must end the same on all of them.

use crate::config::Config;

/// SplitMix64: a small, well-distributed generator whose whole state is the seed.
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The `--set` overrides of run `i` and a description of its knobs.
pub fn for_run(
    base: &Config,
    user: &[(String, String)],
    policy: &str,
    seed: u64,
    i: u32,
) -> (Vec<(String, String)>, String) {
    let mut sets = user.to_vec();
    sets.push(("sm.reconvergence".into(), policy.into()));
    if i == 0 {
        return (sets, "run 0: as configured".into());
    }
    let mut s = seed ^ (i as u64).wrapping_mul(0xA24B_AED4_963E_E407);
    let sched_seed = splitmix(&mut s);
    // Jitter keeps the latencies ordered (L1 < L2 < DRAM) and positive.
    let l2 = base.l2.hit_latency + (splitmix(&mut s) % 32) as u32;
    let dram = base.dram.latency.max(l2 + 1) + (splitmix(&mut s) % 64) as u32;
    let icnt = base.interconnect.latency + (splitmix(&mut s) % 8) as u32;
    sets.extend([
        ("sm.scheduler".into(), "random".into()),
        ("sm.scheduler_seed".into(), sched_seed.to_string()),
        ("l2.hit_latency".into(), l2.to_string()),
        ("dram.latency".into(), dram.to_string()),
        ("interconnect.latency".into(), icnt.to_string()),
    ]);
    let what = format!(
        "run {i}: random scheduler seed {sched_seed}, l2.hit_latency {l2}, dram.latency {dram}, interconnect.latency {icnt}"
    );
    (sets, what)
}
