//! The GPU: CTA dispatch to SMs within occupancy limits and the cycle loop, which steps every
//! SM once per cycle and jumps over stretches in which no warp can issue.

use super::cta::{Cta, N_BARRIERS};
use super::exec::LaunchGeom;
use super::fault::{Fault, FaultKind};
use super::liveness::LiveTracker;
use super::program::Program;
use super::sm::{Shared, Sm};
use super::warp::{Frame, Warp, WarpState};
use crate::config::Config;
use crate::mem::GlobalMemory;
use crate::stats::{KernelStats, WarpEvent};
use gpusim_isa::FuncId;

pub struct LaunchSpec {
    pub entry: FuncId,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u32,
    pub params: Vec<u8>,
    /// Record a warp event per issued instruction.
    pub trace: bool,
    /// Show a progress line on stderr (only if it is a terminal and the run is long).
    pub progress: bool,
    /// Timing-only run: `mma.sync` and `wgmma` leave their accumulators unchanged (the
    /// multiply-adds are skipped; every cycle is the same).
    pub skip_tensor_math: bool,
    /// Thread-block cluster shape (None: the kernel's `.reqnctapercluster`, else clusters of
    /// one CTA).
    pub cluster: Option<[u32; 3]>,
    /// Record the asynchronous-synchronisation checker's events (`LaunchResult::async_events`).
    pub record_async: bool,
}

/// What a completed launch produced.
pub struct LaunchResult {
    pub stats: KernelStats,
    /// Warp events in cycle order (empty unless `LaunchSpec::trace`).
    pub events: Vec<WarpEvent>,
    /// The checker's events in issue order (empty unless `LaunchSpec::record_async`).
    pub async_events: Vec<gpusim_models::async_sync::AsyncEvent>,
}

/// Run one kernel launch to completion (or fault) on a fresh set of SMs.
pub fn run_launch(
    prog: &Program,
    cfg: &Config,
    global: &mut GlobalMemory,
    l2: &mut crate::mem::hierarchy::Backend,
    consts: &[u8],
    spec: &LaunchSpec,
) -> Result<LaunchResult, Fault> {
    let entry = prog.module.function(spec.entry);
    let ws = cfg.sm.warp_size;
    // Saturating, not overflowing: an absurd block or shared size is rejected by `check_fits`.
    let threads = spec.block.iter().fold(1u32, |a, &b| a.saturating_mul(b));
    let n_warps = threads.div_ceil(ws);
    let regs = regs_per_thread(prog, cfg, spec.entry)
        .saturating_mul(n_warps)
        .saturating_mul(ws);
    let static_shared = prog.module.shared_bytes as u32;
    let shared = static_shared.saturating_add(spec.dynamic_shared);
    let cluster =
        super::cluster::cluster_shape(spec.grid, spec.cluster, entry.req_cluster, cfg.sm.count)
            .map_err(|e| Fault::new(FaultKind::Launch, format!("kernel `{}`: {e}", entry.name)))?;
    let geom = LaunchGeom {
        grid: spec.grid,
        block: spec.block,
        static_shared,
        dynamic_shared: spec.dynamic_shared,
        kernel: entry.name.clone(),
        cluster,
        explicit_cluster: spec.cluster.is_some() || entry.req_cluster.is_some(),
    };
    let cluster_ctas: u32 = cluster.iter().product();
    check_fits(cfg, &geom, threads, n_warps, regs, shared)?;
    let interest = spec
        .record_async
        .then(|| gpusim_models::async_sync::Interest::new(&prog.module));
    let sh = Shared {
        prog,
        cfg,
        geom: &geom,
        params: &spec.params,
        consts,
        trace: spec.trace,
        programs: &crate::mem::hierarchy::ProgramTable::new(cfg),
        costs: crate::mem::hierarchy::Costs::of(cfg),
        skip_tensor_math: spec.skip_tensor_math,
        async_interest: interest.as_ref(),
    };
    let mut sms: Vec<Sm> = (0..cfg.sm.count).map(|i| Sm::new(i, cfg)).collect();
    if spec.record_async {
        sms.iter_mut().for_each(|s| s.async_log = Some(Vec::new()));
    }
    // L1s start cold at every launch (the formal `flush` at the grid boundary); the L2 keeps
    // its contents across the run's launches while ports, servers and banks restart idle.
    l2.new_launch();
    let n_ctas = spec
        .grid
        .iter()
        .fold(1u64, |a, &g| a.saturating_mul(g as u64));
    let mut next_cta = 0u64;
    let mut done_ctas = 0u64;
    let mut cycle = 0u64;
    let mut epoch = 0u64;
    let started = std::time::Instant::now();
    let mut progress = crate::progress::Progress::new(spec.progress);
    // Per-SM gating: an SM that issued nothing sleeps until its earliest wake-up (a warp's
    // ready time, a unit freeing, a copy landing) or a new CTA; nothing another SM does can
    // wake it sooner. `last[i]` is the last cycle SM i was stepped or accounted for.
    let mut wake = vec![0u64; sms.len()];
    let mut last: Vec<Option<u64>> = vec![None; sms.len()];
    let mut cluster_bars: std::collections::HashMap<u64, super::cluster::ClusterBarrier> =
        std::collections::HashMap::new();
    let mut outbox: Vec<super::cluster::Outgoing> = Vec::new();
    // Whatever the outcome, dirty data is written back for the host (`end_of_launch`).
    let outcome = (|| -> Result<(), Fault> {
        loop {
            if cycle & 0xFFF == 0 {
                progress.update(&geom.kernel, cycle, done_ctas, n_ctas);
            }
            // Clusters of several CTAs: whole clusters, each CTA on its own SM.
            while cluster_ctas > 1 && next_cta < n_ctas {
                let cl = next_cta / cluster_ctas as u64;
                let start = (next_cta as usize) % sms.len();
                let chosen: Vec<usize> = (0..sms.len())
                    .map(|k| (start + k) % sms.len())
                    .filter(|&i| sms[i].fits(cfg, threads, n_warps, regs, shared))
                    .take(cluster_ctas as usize)
                    .collect();
                if chosen.len() < cluster_ctas as usize {
                    break;
                }
                let mut peers = Vec::with_capacity(chosen.len());
                for (rank, &i) in chosen.iter().enumerate() {
                    let linear = super::cluster::cta_of(spec.grid, cluster, cl, rank as u32);
                    let (cta, warps) =
                        make_cta(prog, cfg, spec, linear, n_warps, threads, regs, shared);
                    let slot = sms[i].launch_cta(cta, warps);
                    peers.push((i as u32, slot, linear));
                    wake[i] = cycle;
                }
                for (rank, &(i, slot, _)) in peers.iter().enumerate() {
                    sms[i as usize].set_cluster(slot, cl, rank as u32, peers.clone());
                }
                cluster_bars.insert(
                    cl,
                    super::cluster::ClusterBarrier::new(threads * cluster_ctas),
                );
                next_cta += cluster_ctas as u64;
            }
            // Dispatch: CTAs in linear order, each to the next SM with room (round robin).
            let mut sm_i = (next_cta as usize) % sms.len();
            let mut tried = 0;
            while cluster_ctas == 1 && next_cta < n_ctas && tried < sms.len() {
                if sms[sm_i].fits(cfg, threads, n_warps, regs, shared) {
                    let (cta, warps) =
                        make_cta(prog, cfg, spec, next_cta, n_warps, threads, regs, shared);
                    sms[sm_i].launch_cta(cta, warps);
                    wake[sm_i] = cycle;
                    next_cta += 1;
                    tried = 0;
                } else {
                    tried += 1;
                }
                sm_i = (sm_i + 1) % sms.len();
            }
            if done_ctas == n_ctas {
                break;
            }
            let mut issued = 0;
            let mut next_ready: Option<u64> = None;
            let mut suspect = false;
            for (i, sm) in sms.iter_mut().enumerate() {
                if sm.is_idle() {
                    continue;
                }
                if wake[i] > cycle {
                    next_ready = Some(next_ready.map_or(wake[i], |n| n.min(wake[i])));
                    continue;
                }
                if let Some(l) = last[i] {
                    if l + 1 < cycle {
                        sm.account_idle(l + 1, cycle - l - 1);
                    }
                }
                let r = sm.step(cycle, &sh, global, l2, &mut epoch)?;
                last[i] = Some(cycle);
                if !sm.outbox.is_empty() {
                    outbox.append(&mut sm.outbox);
                }
                issued += r.issued;
                done_ctas += r.ctas_completed as u64;
                suspect |= r.spin_suspect;
                wake[i] = if r.issued > 0 || r.ctas_completed > 0 {
                    cycle + 1
                } else {
                    r.next_ready.map_or(u64::MAX, |t| t.max(cycle + 1))
                };
                if wake[i] != u64::MAX {
                    next_ready = Some(next_ready.map_or(wake[i], |n| n.min(wake[i])));
                }
            }
            deliver(&mut outbox, &mut sms, &mut wake, &mut cluster_bars, cycle);
            // Deliveries may have woken SMs stepped earlier in the cycle.
            next_ready = sms
                .iter()
                .enumerate()
                .filter(|(i, s)| !s.is_idle() && wake[*i] != u64::MAX)
                .map(|(i, _)| wake[i])
                .min();
            if suspect {
                check_livelock(&sms, prog, epoch)?;
            }
            if cycle > cfg.watchdog_cycles {
                let mut f = Fault::new(
                    FaultKind::Watchdog,
                    format!(
                        "kernel `{}` still running after {} cycles (watchdog_cycles)",
                        geom.kernel, cfg.watchdog_cycles
                    ),
                );
                f.details = sms.iter().flat_map(|s| s.describe_warps(prog)).collect();
                return Err(f);
            }
            if issued > 0 || done_ctas == n_ctas {
                cycle += 1;
                continue;
            }
            // (Skipped cycles are accounted per SM when it is next stepped.)
            match next_ready {
                Some(t) if t > cycle => cycle = t,
                Some(_) => cycle += 1,
                None => {
                    let mut f = Fault::new(FaultKind::Deadlock, format!("no warp of kernel `{}` can ever proceed (cycle {cycle}): each waits on a barrier that cannot complete", geom.kernel));
                    f.details = sms.iter().flat_map(|s| s.describe_warps(prog)).collect();
                    return Err(f);
                }
            }
        }
        Ok(())
    })();
    for sm in sms.iter_mut() {
        l2.write_back_sm(&mut sm.mem, sm.id, global, &mut sm.stats.memory);
    }
    l2.sync_host(global);
    outcome?;
    progress.finish();
    let wall = started.elapsed().as_secs_f64();
    let stats = KernelStats::collect(
        &geom.kernel,
        cycle,
        wall,
        ws,
        &sm_scope(cfg),
        sms.iter().map(|s| (s.id, &s.stats)),
    );
    let mut events: Vec<WarpEvent> = sms
        .iter_mut()
        .flat_map(|s| std::mem::take(&mut s.events))
        .collect();
    events.sort_by_key(|e| (e.cycle, e.sm));
    // Each SM's log is in its order; SMs step in id order within a cycle.
    let mut async_events: Vec<gpusim_models::async_sync::AsyncEvent> = sms
        .iter_mut()
        .flat_map(|s| s.async_log.take().unwrap_or_default())
        .collect();
    async_events.sort_by_key(|e| (e.cycle, e.sm));
    Ok(LaunchResult {
        stats,
        events,
        async_events,
    })
}

/// One SM's units of each kind (all sub-partitions) and warp slots.
fn sm_scope(cfg: &Config) -> crate::stats::Scope {
    crate::stats::Scope {
        units: super::program::Unit::ALL
            .map(|u| u.shape(&cfg.sm.units).0 as u64 * cfg.sm.schedulers as u64),
        warp_slots: cfg.sm.max_warps as u64,
        l2_bytes_per_cycle: cfg.l2.bytes_per_cycle as u64,
        dram_bytes_per_cycle: cfg.dram.bytes_per_cycle as u64,
        icnt_bytes_per_cycle: 2 * cfg.interconnect.port_bytes_per_cycle as u64,
    }
}

fn check_fits(
    cfg: &Config,
    geom: &LaunchGeom,
    threads: u32,
    n_warps: u32,
    regs: u32,
    shared: u32,
) -> Result<(), Fault> {
    let sm = &cfg.sm;
    // On an empty SM the CTA's warps spread round robin over the sub-partitions, whose
    // register files hold sm.registers / sm.schedulers each.
    let parts = sm.schedulers.max(1);
    let per_part = n_warps
        .div_ceil(parts)
        .saturating_mul(regs / n_warps.max(1));
    let problem = if threads > sm.max_threads || n_warps > sm.max_warps {
        Some(format!("{threads} threads ({n_warps} warps); an SM holds {} threads and {} warps (sm.max_threads, sm.max_warps)", sm.max_threads, sm.max_warps))
    } else if regs > sm.registers || per_part > sm.registers / parts {
        Some(format!(
            "{regs} registers ({per_part} in one sub-partition); an SM has {} in {parts} sub-partition register files (sm.registers)",
            sm.registers
        ))
    } else if shared > sm.shared_bytes {
        Some(format!(
            "{shared} bytes of shared memory; an SM has {} (sm.shared_bytes)",
            sm.shared_bytes
        ))
    } else {
        None
    };
    match problem {
        Some(p) => Err(Fault::new(
            FaultKind::Launch,
            format!("a CTA of kernel `{}` needs {p}", geom.kernel),
        )),
        None => Ok(()),
    }
}

#[allow(clippy::too_many_arguments)]
fn make_cta(
    prog: &Program,
    cfg: &Config,
    spec: &LaunchSpec,
    linear: u64,
    n_warps: u32,
    threads: u32,
    regs: u32,
    shared: u32,
) -> (Cta, Vec<Warp>) {
    let g = spec.grid;
    let ctaid = [
        (linear % g[0] as u64) as u32,
        ((linear / g[0] as u64) % g[1] as u64) as u32,
        (linear / (g[0] as u64 * g[1] as u64)) as u32,
    ];
    let ws = cfg.sm.warp_size;
    let entry = prog.module.function(spec.entry);
    let n_regs = entry.regs.len().max(1);
    let b = spec.block;
    let mut warps = Vec::new();
    for wi in 0..n_warps {
        let first = wi * ws;
        let n = ws.min(threads - first);
        let valid = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        // Warp k holds linear thread ids 32k..32k+31 in ascending lane order (Habermaier §5.6).
        let tid = (0..ws)
            .map(|l| {
                let t = (first + l).min(threads - 1);
                [t % b[0], (t / b[0]) % b[1], t / (b[0] * b[1])]
            })
            .collect();
        warps.push(Warp {
            cta: 0,
            warp_in_cta: wi,
            age: 0,
            warp_size: ws,
            valid,
            tid,
            regs: vec![0; n_regs * ws as usize],
            ready: vec![0; n_regs],
            ready_long: vec![false; n_regs],
            frames: vec![Frame {
                func: spec.entry,
                reg_base: 0,
                local_base: 0,
                ret_dst: Vec::new(),
            }],
            local: (0..ws).map(|_| Vec::new()).collect(),
            simt: crate::simt::make(&cfg.sm, valid, ws),
            state: WarpState::Active,
            live: LiveTracker::default(),
            instructions: 0,
            next_ready: 0,
            wait_long: false,
            next_unit: None,
            fetch_ready: 0,
            fetch_reason: crate::stats::Stall::NoInstruction,
            mem_done: 0,
            mem_accesses: Vec::with_capacity(64),
            mem_keys: Vec::with_capacity(256),
            mem_lanes: Vec::with_capacity(64),
            mem_global: Vec::with_capacity(64),
            mem_lines: Vec::with_capacity(64),
            mem_txns: Vec::new(),
            mem_values: Vec::new(),
            async_copies: Vec::new(),
            async_group: 0,
            hopper: Default::default(),
            wgmma: Default::default(),
            trace_states: Default::default(),
        });
    }
    let cta = Cta {
        ctaid,
        shared: vec![0; shared as usize],
        barriers: std::array::from_fn::<_, N_BARRIERS, _>(|_| None),
        warps: Vec::new(),
        n_warps,
        completed_warps: 0,
        threads,
        regs,
        shared_bytes: shared,
        thread_arrivals: warps.first().is_some_and(|w| w.simt.independent_threads()),
        exited_threads: 0,
        mbar_waiters: Vec::new(),
        linear,
        cluster: Default::default(),
        wgmma_log: Default::default(),
    };
    for w in &mut warps {
        w.refresh_ready(prog);
    }
    (cta, warps)
}

/// Every unfinished warp either spins without any memory change or waits on a barrier: the
/// kernel can never finish (liveness violation of the token stack, Habermaier §6.5).
fn check_livelock(sms: &[Sm], prog: &Program, epoch: u64) -> Result<(), Fault> {
    let mut any_spinning = false;
    for w in sms.iter().flat_map(|s| s.warps.iter().flatten()) {
        match w.state {
            WarpState::Completed | WarpState::Barrier(_) => {}
            WarpState::Active if w.live.is_spinning(epoch) => any_spinning = true,
            WarpState::Active => return Ok(()),
        }
    }
    if !any_spinning {
        return Ok(());
    }
    let mut f = Fault::new(
        FaultKind::Liveness,
        "liveness violation: every unfinished warp repeats the same state with no memory change; diverged lanes wait on the token stack for lanes that can only proceed after them (Habermaier 2011 §6.5)",
    );
    f.details = sms.iter().flat_map(|s| s.describe_warps(prog)).collect();
    Err(f)
}

/// Registers per thread of `entry`: gpusim's liveness estimate, capped as ptxas caps them for a
/// kernel with `.maxntid` (`__launch_bounds__`): a CTA of that many threads must fit the
/// register file of each sub-partition, in multiples of 8 (what the compiler would spill is
/// not modelled).
pub fn regs_per_thread(prog: &Program, cfg: &Config, entry: gpusim_isa::FuncId) -> u32 {
    let est = prog.funcs[entry.0 as usize].regs_per_thread;
    let Some(ntid) = prog.module.function(entry).max_ntid else {
        return est;
    };
    let ws = cfg.sm.warp_size.max(1);
    let parts = cfg.sm.schedulers.max(1);
    let warps = ntid.iter().product::<u32>().div_ceil(ws).max(1);
    let per_part = warps.div_ceil(parts);
    let cap = (cfg.sm.registers / parts / (per_part * ws).max(1)) / 8 * 8;
    est.min(cap.max(8))
}

/// Hand every message of this cycle to its receiver: copies and arrivals to the target CTA's
/// SM (dropped if that CTA has retired), cluster-barrier arrivals and waits to the cluster's
/// barrier, releasing the warps whose phase completed on the next cycle.
fn deliver(
    outbox: &mut Vec<super::cluster::Outgoing>,
    sms: &mut [Sm],
    wake: &mut [u64],
    bars: &mut std::collections::HashMap<u64, super::cluster::ClusterBarrier>,
    cycle: u64,
) {
    use super::cluster::Outgoing;
    for msg in outbox.drain(..) {
        let released = match msg {
            Outgoing::Land {
                sm,
                slot,
                cta,
                landing,
            } => {
                let ready = landing.ready.max(cycle + 1);
                if sms[sm as usize].accept_landing(slot, cta, landing, ready) {
                    wake[sm as usize] = wake[sm as usize].min(ready);
                }
                continue;
            }
            Outgoing::ClusterArrive {
                cluster,
                threads,
                at,
            } => {
                let Some(b) = bars.get_mut(&cluster) else {
                    continue;
                };
                b.arrive(threads, false, at);
                b.released()
            }
            Outgoing::ClusterExit { cluster, threads } => {
                let Some(b) = bars.get_mut(&cluster) else {
                    continue;
                };
                b.arrive(threads, true, 0);
                b.released()
            }
            Outgoing::ClusterWait {
                cluster,
                sm,
                slot,
                phases,
            } => {
                let Some(b) = bars.get_mut(&cluster) else {
                    continue;
                };
                b.waiters.push((sm, slot, phases));
                b.released()
            }
        };
        for (sm, slot, visible) in released {
            let t = visible.max(cycle + 1);
            sms[sm as usize].release_cluster_wait(slot, t);
            wake[sm as usize] = wake[sm as usize].min(t);
        }
    }
}
