//! The randomised knobs of `gpusim check`'s simulator runs: run 0 is the configuration as
//! given; every later run draws, from the check's seed and its index, a scheduler seed for the
//! random warp scheduler, the divergent-path order of the stack policies
//! (`sm.divergence_order`) and jitter on the L2, DRAM and interconnect latencies. Any such
//! machine is one the semantics allow, so a race-free kernel must end the same on all of them.
//! Litmus runs (`for_litmus_run`) also draw the convergence-barrier switch rule.

use crate::config::Config;
use crate::rng::splitmix64 as splitmix;

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
    let order = if splitmix(&mut s) % 2 == 0 {
        "taken-first"
    } else {
        "not-taken-first"
    };
    sets.extend([
        ("sm.scheduler".into(), "random".into()),
        ("sm.scheduler_seed".into(), sched_seed.to_string()),
        ("l2.hit_latency".into(), l2.to_string()),
        ("dram.latency".into(), dram.to_string()),
        ("interconnect.latency".into(), icnt.to_string()),
        ("sm.divergence_order".into(), order.into()),
    ]);
    let what = format!(
        "run {i}: random scheduler seed {sched_seed}, {order}, l2.hit_latency {l2}, dram.latency {dram}, interconnect.latency {icnt}"
    );
    (sets, what)
}

/// The knobs of run `i` of a SIMT-Step litmus manifest: those of [`for_run`] and, under
/// `convergence-barrier`, a drawn switch rule — `blocked`, `backward-branch`, or `quantum`
/// with a quantum of 1 to 16 instructions, short enough that a group yields inside the tests'
/// few-instruction arms. `blocked` is safe here although it livelocks spinning threads: a
/// test is judged only when the SIMT-Step enumerator terminates on it, i.e. when no schedule
/// of its threads spins forever. Litmus tests only: the switch rule changes which threads run
/// a merge block together, i.e. the outcomes that observe grouping, which is what a litmus
/// test judges (and what a race-free kernel's final memory must not depend on). A user's own
/// `sm.convergence_barrier` setting is kept.
pub fn for_litmus_run(
    base: &Config,
    user: &[(String, String)],
    policy: &str,
    seed: u64,
    i: u32,
) -> (Vec<(String, String)>, String) {
    let (mut sets, mut what) = for_run(base, user, policy, seed, i);
    let user_switch = user
        .iter()
        .any(|(k, _)| k.starts_with("sm.convergence_barrier"));
    if i == 0 || policy != "convergence-barrier" || user_switch {
        return (sets, what);
    }
    let mut s = seed ^ (i as u64).wrapping_mul(0x9FB2_1C65_1E98_DF25);
    let draw = splitmix(&mut s);
    // The whole section, inline: configs may leave it out, and `--set` only replaces keys
    // that exist.
    let section = match draw % 3 {
        0 => "{switch: blocked}".to_string(),
        1 => "{switch: backward-branch}".to_string(),
        _ => format!("{{switch: quantum, quantum: {}}}", 1 + (draw >> 2) % 16),
    };
    what.push_str(&format!(", sm.convergence_barrier {section}"));
    sets.push(("sm.convergence_barrier".into(), section));
    (sets, what)
}
