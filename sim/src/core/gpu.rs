//! The GPU: CTA dispatch to SMs within occupancy limits and the cycle loop, which steps every
//! SM once per cycle and jumps over stretches in which no warp can issue.

use super::cta::{Cta, N_BARRIERS};
use super::exec::LaunchGeom;
use super::fault::{Fault, FaultKind};
use super::liveness::LiveTracker;
use super::program::Program;
use super::sm::hooks::{AsyncRecorder, IssueHook, TraceHook};
use super::sm::{Shared, Sm};
use super::warp::{Frame, Warp, WarpState};
use crate::config::Config;
use crate::mem::GlobalMemory;
use crate::stats::trace::TraceSink;
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
    /// Show progress on stderr (how: `progress::set_mode`; only once the launch is long).
    pub progress: bool,
    /// Timing-only run: `mma.sync` and `wgmma` leave their accumulators unchanged (the
    /// multiply-adds are skipped; every cycle is the same).
    pub skip_tensor_math: bool,
    /// Thread-block cluster shape (None: the kernel's `.reqnctapercluster`, else clusters of
    /// one CTA).
    pub cluster: Option<[u32; 3]>,
    /// Record the asynchronous-synchronisation checker's events (`LaunchResult::async_events`).
    pub record_async: bool,
    /// Threads for the SM phase (`core::crew`); the results do not depend on it.
    pub parallel: super::crew::Parallel,
    /// Sampled simulation (`core::sample`): skip steady-state waves, predict their cycles.
    pub sample: Option<super::sample::SampleSpec>,
    /// Count issues and stalls per instruction: the source view (`KernelStats::source`).
    pub lines: bool,
}

/// What a completed launch produced.
pub struct LaunchResult {
    pub stats: KernelStats,
    /// Warp events in cycle order (empty unless `LaunchSpec::trace`).
    pub events: Vec<WarpEvent>,
    /// The checker's events in issue order (empty unless `LaunchSpec::record_async`).
    pub async_events: Vec<gpusim_models::async_sync::AsyncEvent>,
}

/// What a launch produced, whether it completed or stopped at a fault.
pub struct LaunchOutcome {
    /// The counters of the cycles that ran (through the cycle of a fault; none for a launch
    /// refused before its first cycle).
    pub stats: KernelStats,
    /// The checker's events in issue order (empty unless `LaunchSpec::record_async`).
    pub async_events: Vec<gpusim_models::async_sync::AsyncEvent>,
    /// What stopped the launch, if it did not complete.
    pub fault: Option<Fault>,
}

impl LaunchOutcome {
    /// A launch refused before its first cycle.
    fn refused(kernel: &str, cfg: &Config, fault: Fault) -> LaunchOutcome {
        let none: [(u32, &crate::stats::SmStats); 0] = [];
        let mut stats = KernelStats::collect(
            kernel,
            0,
            0.0,
            cfg.sm.warp_size,
            &sm_scope(cfg),
            none.into_iter(),
        );
        stats.fault = Some(fault.kind.name());
        LaunchOutcome {
            stats,
            async_events: Vec::new(),
            fault: Some(fault),
        }
    }
}

/// Run one kernel launch to completion (or fault) on a fresh set of SMs, its warp events
/// (`LaunchSpec::trace`) kept in memory.
pub fn run_launch(
    prog: &Program,
    cfg: &Config,
    global: &mut GlobalMemory,
    mem: &mut crate::mem::engine::MemoryEngine,
    consts: &[u8],
    spec: &LaunchSpec,
) -> Result<LaunchResult, Fault> {
    let mut events = Vec::new();
    let o = run_launch_traced(prog, cfg, global, mem, consts, spec, &mut events);
    match o.fault {
        Some(f) => Err(f),
        None => Ok(LaunchResult {
            stats: o.stats,
            events,
            async_events: o.async_events,
        }),
    }
}

/// Run one kernel launch on a fresh set of SMs, handing its warp events (`LaunchSpec::trace`)
/// to `trace` as they are produced, in cycle and SM order. A fault stops the launch; what
/// ran until then is still counted, and dirty data is written back for the host either way.
pub fn run_launch_traced(
    prog: &Program,
    cfg: &Config,
    global: &mut GlobalMemory,
    mem: &mut crate::mem::engine::MemoryEngine,
    consts: &[u8],
    spec: &LaunchSpec,
    trace: &mut dyn TraceSink,
) -> LaunchOutcome {
    let mut none = |_| Vec::new();
    run_launch_observed(prog, cfg, global, mem, consts, spec, trace, &mut none)
}

/// `run_launch_traced` with more observers on each SM's issue path: `observers(sm)` gives
/// SM `sm`'s (`sm::hooks`; they see the launch's instructions and never change its results).
#[allow(clippy::too_many_arguments)]
pub fn run_launch_observed(
    prog: &Program,
    cfg: &Config,
    global: &mut GlobalMemory,
    mem: &mut crate::mem::engine::MemoryEngine,
    consts: &[u8],
    spec: &LaunchSpec,
    trace: &mut dyn TraceSink,
    observers: &mut dyn FnMut(u32) -> Vec<Box<dyn IssueHook>>,
) -> LaunchOutcome {
    let entry = prog.module.function(spec.entry);
    let ws = cfg.sm.warp_size;
    // Saturating, not overflowing: an absurd block or shared size is rejected by
    // `limits::check_launch`.
    let threads = spec.block.iter().fold(1u32, |a, &b| a.saturating_mul(b));
    let n_warps = threads.div_ceil(ws);
    let regs_per_warp = regs_per_thread(prog, cfg, spec.entry).saturating_mul(ws);
    let regs = regs_per_warp.saturating_mul(n_warps);
    // In u64: a static segment of 4 GiB or more must not wrap to a small one. It fits u32
    // once `check_fits` has compared it with `sm.shared_bytes`. The dynamic window follows the
    // static data at its declared alignment.
    let layout = prog.shared_layout(spec.entry);
    let window = layout.dynamic_offset;
    let shared_needed = window + u64::from(spec.dynamic_shared);
    // `l1.carveout: driver`: this launch's L1/shared split, applied to the config every SM
    // and occupancy check of the launch reads.
    let split = super::carveout::split(cfg, threads, regs_per_warp, shared_needed);
    let split_cfg;
    let cfg = match split {
        Some(s) => {
            split_cfg = super::carveout::apply(cfg, s);
            &split_cfg
        }
        None => cfg,
    };
    let cluster = match super::cluster::cluster_shape(
        spec.grid,
        spec.cluster,
        entry.req_cluster,
        cfg.sm.count,
    ) {
        Ok(c) => c,
        Err(e) => {
            let f = Fault::new(FaultKind::Launch, format!("kernel `{}`: {e}", entry.name));
            return LaunchOutcome::refused(&entry.name, cfg, f);
        }
    };
    // `Config::for_module` refuses these before a run; a launch built by hand is checked too.
    if let Some(m) = cfg.missing_unit(&prog.module) {
        return LaunchOutcome::refused(&entry.name, cfg, Fault::new(FaultKind::Launch, m));
    }
    if let Err(m) = cfg.check_cluster_launch(cluster) {
        let f = Fault::new(FaultKind::Launch, format!("kernel `{}`: {m}", entry.name));
        return LaunchOutcome::refused(&entry.name, cfg, f);
    }
    // `run::run_manifest_with` and `gemm` check every launch before simulating any (exit 2);
    // here the same check guards every other caller.
    let shape = super::limits::LaunchShape {
        grid: spec.grid,
        block: spec.block,
        cluster: spec.cluster,
        non_portable_cluster: true,
        dynamic_shared: spec.dynamic_shared,
    };
    if let Err(e) = super::limits::check_launch(prog, cfg, spec.entry, &shape) {
        let f = Fault::new(
            FaultKind::Launch,
            format!("launch of kernel `{}`: {e}", entry.name),
        );
        return LaunchOutcome::refused(&entry.name, cfg, f);
    }
    let shared = shared_needed as u32;
    let static_shared = window as u32;
    let geom = LaunchGeom {
        grid: spec.grid,
        block: spec.block,
        static_shared,
        shared: layout.clone(),
        dynamic_shared: spec.dynamic_shared,
        kernel: entry.name.clone(),
        cluster,
        explicit_cluster: spec.cluster.is_some() || entry.req_cluster.is_some(),
        multi_cta_cluster: cluster != [1, 1, 1],
    };
    let cluster_ctas: u32 = cluster.iter().product();
    let interest = spec
        .record_async
        .then(|| std::sync::Arc::new(gpusim_models::async_sync::Interest::new(&prog.module)));
    let sh = Shared {
        prog,
        cfg,
        geom: &geom,
        params: &spec.params,
        consts,
        programs: &crate::mem::hierarchy::ProgramTable::new(cfg),
        costs: crate::mem::hierarchy::Costs::of(cfg),
        skip_tensor_math: spec.skip_tensor_math,
    };
    let mut sms: Vec<Sm> = (0..cfg.sm.count).map(|i| Sm::new(i, cfg)).collect();
    if spec.lines {
        for sm in &mut sms {
            sm.collect_lines(prog.inst_count(), cfg.sm.warp_size);
        }
    }
    for sm in &mut sms {
        if spec.trace {
            sm.add_hook(Box::<TraceHook>::default());
        }
        if let Some(i) = &interest {
            sm.add_hook(Box::new(AsyncRecorder::new(i.clone())));
        }
        for h in observers(sm.id) {
            sm.add_hook(h);
        }
    }
    // L1s start cold at every launch (the formal `flush` at the grid boundary); the L2 keeps
    // its contents across the run's launches while ports, servers and banks restart idle.
    mem.new_launch();
    let n_ctas = spec
        .grid
        .iter()
        .fold(1u64, |a, &g| a.saturating_mul(g as u64));
    let mut next_cta = 0u64;
    let mut done_ctas = 0u64;
    // Whether an SM may have room for the next CTA: at the start, and after a retirement.
    let mut room = true;
    let mut cycle = 0u64;
    let mut epoch = 0u64;
    let started = std::time::Instant::now();
    let mut progress = crate::progress::Progress::new(spec.progress);
    let mut next_poll = 0u64;
    // Per-SM gating: an SM that issued nothing sleeps until its earliest wake-up (a warp's
    // ready time, a unit freeing, a copy landing) or a new CTA; nothing another SM does can
    // wake it sooner. `last[i]` is the last cycle SM i was stepped or accounted for.
    let mut wake = vec![0u64; sms.len()];
    let mut last: Vec<Option<u64>> = vec![None; sms.len()];
    let mut cluster_bars: std::collections::HashMap<u64, super::cluster::ClusterBarrier> =
        std::collections::HashMap::new();
    let mut outbox: Vec<super::cluster::Outgoing> = Vec::new();
    let mut order: Vec<usize> = (0..sms.len()).collect();
    fill_step_order(&cfg.debug, 0, &mut order);
    // The SMs stepped this cycle that left work for the exchange or messages.
    let mut touched: Vec<usize> = Vec::with_capacity(sms.len());
    // Under the component memory system the launch ends with every L1 written back to L2
    // (`flush_at_end`), timed.
    let mut flushed = false;
    let mut arrivals: Vec<crate::mem::system::MemCompletion> = Vec::new();
    // The SMs awake in a cycle, with their `last`.
    let mut awake: Vec<(usize, Option<u64>)> = Vec::with_capacity(sms.len());
    let mut steps: Vec<super::crew::Stepped> = Vec::with_capacity(sms.len());
    // The core clock and the power model's intervals (`power::governor`).
    // (The DRAM channels start at `Config::start_mhz`: `DramChannel::new`.)
    let mut governor = crate::power::Governor::new(cfg);
    let mut timeline = trace.timeline().map(|t| {
        let mhz = f64::from(governor.mhz());
        super::timeline_tap::TimelineTap::begin(t, &mut sms, cfg, &geom.kernel, mhz)
    });
    // Made after the first dispatch, which fills every slot the launch can use: one wave.
    let mut sampler: Option<super::sample::Sampler> = None;
    // Whatever the outcome, dirty data is written back for the host (`end_of_launch`).
    let outcome = crossbeam::thread::scope(|scope| {
        let mut crew = super::crew::Crew::new(scope, spec.parallel, sms.len(), &sh);
        (|| -> Result<(), Fault> {
            loop {
                // Polled every 4096 cycles (the loop may jump over cycles, so by distance).
                if cycle >= next_poll {
                    next_poll = cycle + 4096;
                    if progress.active() {
                        let state = crate::progress::LaunchState {
                            cycle,
                            warp_instructions: sms.iter().map(|s| s.stats.warp_instructions).sum(),
                            ctas_done: done_ctas,
                            ctas: n_ctas,
                            watchdog: cfg.watchdog_cycles,
                        };
                        progress.update(&geom.kernel, state);
                    }
                }
                // Dispatch only when an SM may have room: at the start, and after a CTA
                // retired (nothing else frees an SM's slots, warps, registers or shared memory).
                if room {
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
                            let linear =
                                super::cluster::cta_of(spec.grid, cluster, cl, rank as u32);
                            let spare = &mut sms[i].spare_warps;
                            let (cta, warps) = make_cta(
                                prog, cfg, spec, linear, n_warps, threads, regs, shared, spare,
                            );
                            let slot = sms[i].launch_cta(cta, warps, cycle);
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
                    // CTAs in linear order, each to the next SM with room (round robin).
                    let mut sm_i = (next_cta as usize) % sms.len();
                    let mut tried = 0;
                    while cluster_ctas == 1 && next_cta < n_ctas && tried < sms.len() {
                        if sms[sm_i].fits(cfg, threads, n_warps, regs, shared) {
                            let spare = &mut sms[sm_i].spare_warps;
                            let (cta, warps) = make_cta(
                                prog, cfg, spec, next_cta, n_warps, threads, regs, shared, spare,
                            );
                            sms[sm_i].launch_cta(cta, warps, cycle);
                            wake[sm_i] = cycle;
                            next_cta += 1;
                            tried = 0;
                        } else {
                            tried += 1;
                        }
                        sm_i = (sm_i + 1) % sms.len();
                    }
                    // Every SM is full or every CTA dispatched, until a CTA retires.
                    room = false;
                    // The first dispatch filled every slot the launch can use: one wave.
                    if let (None, Some(sample)) = (&sampler, spec.sample) {
                        sampler = Some(super::sample::Sampler::new(
                            sample,
                            n_ctas,
                            cluster_ctas.into(),
                            next_cta,
                            spec.grid[0].into(),
                            cfg.l2_geometry().lines(),
                        ));
                    }
                }
                // The component memory system runs through this cycle first: what reaches an SM by
                // now is applied before it issues (`Sm::apply_completions`).
                if let Some(ms) = mem.system() {
                    if ms.next_wake().is_some_and(|t| t <= cycle) {
                        let at = (prog, geom.kernel.as_str());
                        tick_memory(ms, cycle, &mut sms, global, sh.programs, &mut arrivals, at)?;
                        // Ordered by SM: each SM takes its run of completions; it wakes now if
                        // one finished an instruction.
                        let mut due = arrivals.drain(..).peekable();
                        while let Some(i) = due.peek().map(|c| c.sm as usize) {
                            let run = std::iter::from_fn(|| due.next_if(|c| c.sm as usize == i));
                            if sms[i].apply_completions(run, cycle, &sh, &mut epoch) {
                                wake[i] = wake[i].min(cycle);
                            }
                        }
                    }
                }
                let in_flight = mem.system().is_some_and(|m| m.in_flight() > 0);
                if done_ctas == n_ctas && !in_flight {
                    let Some(ms) = mem.system() else { break };
                    if !flushed {
                        flush_at_end(ms, &mut sms, global, cycle);
                        flushed = true;
                    }
                    if !ms.writing_back() {
                        break;
                    }
                }
                let mut issued = 0;
                let mut suspect = false;
                // The SM phase: each SM touches only its own state, so the order they step in
                // (`debug.step_order`) cannot matter. An SM reads the livelock epoch as it was
                // when the cycle began (plus its own progress); the progress of all is summed.
                if cfg.debug.step_order == crate::config::StepOrder::Shuffled {
                    fill_step_order(&cfg.debug, cycle, &mut order);
                }
                touched.clear();
                let epoch_start = epoch;
                let mut progress = 0;
                let mut step_fault: Option<(usize, Fault)> = None;
                awake.clear();
                for &i in &order {
                    // `wake` first: it is compact, an SM is not (most SMs sleep most cycles).
                    if wake[i] > cycle || sms[i].is_idle() {
                        continue;
                    }
                    awake.push((i, last[i]));
                    last[i] = Some(cycle);
                }
                // On this thread or several (`core::crew`): the steps come back in `awake`'s order.
                crew.step(&mut sms, &awake, cycle, epoch_start, &sh, &mut steps);
                for (&(i, _), s) in awake.iter().zip(steps.drain(..)) {
                    progress += s.progress;
                    if s.touched {
                        touched.push(i);
                    }
                    let r = match s.result {
                        Ok(r) => r,
                        Err(f) => {
                            // Of several SMs faulting in one cycle, the lowest id's fault is reported.
                            if step_fault.as_ref().is_none_or(|(j, _)| i < *j) {
                                step_fault = Some((i, f));
                            }
                            continue;
                        }
                    };
                    issued += r.issued;
                    done_ctas += r.ctas_completed as u64;
                    room |= r.ctas_completed > 0;
                    suspect |= r.spin_suspect;
                    wake[i] = if r.issued > 0 || r.ctas_completed > 0 {
                        cycle + 1
                    } else {
                        r.next_ready.map_or(u64::MAX, |t| t.max(cycle + 1))
                    };
                }
                epoch += progress;
                if let Some((_, f)) = step_fault {
                    return Err(f);
                }
                // The memory exchange: the instructions that reach the memory system, SM by SM in
                // id order, whatever the order the SMs stepped in; then their messages, in the
                // same order.
                touched.sort_unstable();
                for &i in &touched {
                    let sm = &mut sms[i];
                    if sm.has_deferred() {
                        let r = sm.exchange(cycle, &sh, global, mem, &mut epoch)?;
                        issued += r.issued;
                        done_ctas += r.ctas_completed as u64;
                        room |= r.ctas_completed > 0;
                        suspect |= r.spin_suspect;
                        wake[i] = cycle + 1;
                    }
                    outbox.append(&mut sm.outbox);
                }
                // Sampling: once the measured waves ended, whole waves of the CTAs not yet
                // dispatched are counted complete instead of simulated (`core::sample`).
                if let Some(s) = sampler.as_mut().filter(|s| s.watching()) {
                    let counts = || {
                        let mut c = super::sample::Counts::default();
                        for s in &sms {
                            c.retired_warp_instructions += s.retired_warp_instructions;
                            c.l2_misses += s.stats.memory.l2_misses;
                            c.l2_evictions += s.stats.memory.l2_evictions;
                        }
                        c
                    };
                    if let Some(skip) = s.observe(cycle, done_ctas, next_cta, counts) {
                        next_cta += skip.ctas;
                        done_ctas += skip.ctas;
                        governor.skip(cycle, &activity(&sms, mem), skip.cycles, skip.measured);
                    }
                }
                // Every SM was stepped at most once this cycle: their events, taken in id order,
                // are in (cycle, SM) order.
                drain_events(&mut sms, trace);
                if let (Some(tap), Some(sink)) = (timeline.as_mut(), trace.timeline()) {
                    let clock = super::timeline_tap::Clock::of(&governor);
                    tap.after_cycle(sink, &mut sms, cycle, clock);
                }
                deliver(
                    &mut outbox,
                    &mut sms,
                    &mut wake,
                    &mut cluster_bars,
                    cycle,
                    prog,
                );
                if suspect {
                    check_livelock(&sms, prog, epoch)?;
                }
                if governor.due(cycle) {
                    let now = activity(&sms, mem);
                    if let Some(mhz) = governor.control(cycle, &now) {
                        if let Some(ms) = mem.system() {
                            ms.set_core_clock(mhz, cycle);
                        }
                    }
                }
                if cycle > cfg.watchdog_cycles {
                    let (details, waits) = warps_report(&sms, prog);
                    let mut f = Fault::new(
                        FaultKind::Watchdog,
                        format!(
                            "kernel `{}` still running after {} cycles (watchdog_cycles): {waits}",
                            geom.kernel, cfg.watchdog_cycles
                        ),
                    );
                    f.details = details;
                    return Err(f);
                }
                if issued > 0 || (done_ctas == n_ctas && !in_flight) {
                    cycle += 1;
                    continue;
                }
                // Nothing issued: jump to the earliest wake-up. Deliveries may have woken SMs
                // stepped earlier in the cycle; the memory system wakes the loop for its own
                // events. (Skipped cycles are accounted per SM when it is next stepped.)
                let next_ready = wake
                    .iter()
                    .enumerate()
                    .filter(|&(i, &w)| w != u64::MAX && !sms[i].is_idle())
                    .map(|(_, &w)| w)
                    .chain(mem.system().and_then(|m| m.next_wake()))
                    .min();
                match next_ready {
                    Some(t) if t > cycle => cycle = t,
                    Some(_) => cycle += 1,
                    None => {
                        let (details, waits) = warps_report(&sms, prog);
                        let mut f = Fault::new(
                            FaultKind::Deadlock,
                            format!(
                                "no warp of kernel `{}` can ever proceed (cycle {cycle}): {waits}",
                                geom.kernel
                            ),
                        );
                        f.details = details;
                        return Err(f);
                    }
                }
            }
            Ok(())
        })()
    })
    .unwrap_or_else(|p| std::panic::resume_unwind(p));
    if outcome.is_err() {
        if let Some(ms) = mem.system() {
            let at = (prog, geom.kernel.as_str());
            drain_memory(ms, &mut sms, global, sh.programs, at);
        }
    }
    let l2 = mem.backend();
    for sm in sms.iter_mut() {
        l2.write_back_sm(&mut sm.mem, sm.id, global, &mut sm.stats.memory);
    }
    l2.sync_host(global);
    let now = activity(&sms, mem);
    let l2 = mem.backend();
    progress.finish();
    // A fault stops the launch within `cycle`: the SMs stepped before it in that cycle left
    // their events, and the cycles that ran are counted, each sleeping SM's up to the fault.
    drain_events(&mut sms, trace);
    let (cycles, fault) = match outcome {
        Ok(()) => (cycle, None),
        Err(f) => {
            for (i, sm) in sms.iter_mut().enumerate() {
                match last[i] {
                    Some(l) if l < cycle && !sm.is_idle() => {
                        sm.account_idle(l + 1, cycle - l, prog)
                    }
                    _ => {}
                }
            }
            (cycle + 1, Some(f))
        }
    };
    if let (Some(tap), Some(sink)) = (timeline.as_mut(), trace.timeline()) {
        if let Some(f) = &fault {
            sink.fault(cycles.saturating_sub(1), f.kind.name());
        }
        tap.end(
            sink,
            &mut sms,
            cycles,
            super::timeline_tap::Clock::of(&governor),
        );
    };
    let wall = started.elapsed().as_secs_f64();
    let mut stats = KernelStats::collect(
        &geom.kernel,
        cycles,
        wall,
        ws,
        &sm_scope(cfg),
        sms.iter().map(|s| (s.id, &s.stats)),
    );
    stats.fault = fault.as_ref().map(|f| f.kind.name());
    stats.l1_split = split;
    stats.source = sum_line_counters(&mut sms)
        .map(|c| crate::stats::source::SourceView::build(prog, spec.entry, &c));
    // A sampled launch's cycles are the prediction; its other counters cover what ran.
    if let Some(s) = &sampler {
        let report = s.report(cycles, stats.counters.warp_instructions);
        stats.counters.cycles = report.predicted_cycles;
        stats.sample = Some(report);
    }
    (stats.clock, stats.power) = governor.finish(cycles, &now);
    // A slice's capacity per core cycle at the launch's starting clock (`clock.l2_mhz`).
    stats.components = crate::stats::ComponentReport::new(
        cycles,
        &l2.slice_bytes,
        (cfg.l2_bytes_per_core_cycle() / cfg.l2.slices.max(1) as f64).max(1.0),
        &l2.channel_bytes,
        cfg.dram.bytes_per_cycle as f64 / cfg.dram.channels.max(1) as f64,
    );
    stats.memory_system = mem
        .system()
        .map(|m| crate::stats::MemorySystemReport::new(&m.stats()));
    // Each SM's log is in its order; SMs step in id order within a cycle.
    let mut async_events: Vec<gpusim_models::async_sync::AsyncEvent> = sms
        .iter_mut()
        .flat_map(|s| s.hook_mut().map(AsyncRecorder::take).unwrap_or_default())
        .collect();
    async_events.sort_by_key(|e| (e.cycle, e.sm));
    LaunchOutcome {
        stats,
        async_events,
        fault,
    }
}

/// The power model's counts now, GPU-wide (`power::Activity`).
fn activity(sms: &[Sm], mem: &mut crate::mem::engine::MemoryEngine) -> crate::power::Activity {
    let dram = mem.system().map(|m| m.dram_commands());
    crate::power::Activity::gather(sms.iter().map(|s| &s.stats), dram)
}

/// The component memory system through `cycle`, lending it every SM's L1 and counters; its
/// completions go to `out`; a program it finds stuck is a fault.
fn tick_memory(
    ms: &mut crate::mem::system::MemorySystem,
    cycle: u64,
    sms: &mut [Sm],
    global: &mut GlobalMemory,
    programs: &crate::mem::hierarchy::ProgramTable,
    out: &mut Vec<crate::mem::system::MemCompletion>,
    (prog, kernel): (&Program, &str),
) -> Result<(), Fault> {
    /// Each SM's L1 and counters, lent as the memory system asks (nothing built per tick).
    struct Sides<'s>(&'s mut [Sm]);
    impl crate::mem::system::SmSides for Sides<'_> {
        fn side(&mut self, sm: usize) -> crate::mem::system::SmSide<'_> {
            let s = &mut self.0[sm];
            crate::mem::system::SmSide {
                mem: &mut s.mem,
                counters: &mut s.stats.memory,
            }
        }
    }
    ms.tick(cycle, &mut Sides(sms), global, programs, out)
        .map_err(|f| {
            let name = f.prog.name();
            let at = sms[f.sm as usize]
                .locate_op(f.tag, prog, kernel)
                .unwrap_or_else(|| format!("in kernel `{kernel}`"));
            Fault::new(
                FaultKind::MemoryProgram,
                format!(
                    "memory program `{name}` (config key memory_programs.{}) on the line at {:#x} (SM {}): {}, {at}",
                    name.replace('.', "_"),
                    f.line,
                    f.sm,
                    f.error
                ),
            )
        })
}

/// After a fault the SMs stop but the memory system finishes what was issued before it (its
/// stores reach memory, as on the hardware); its completions are dropped and a further
/// fault ends the drain.
/// The end of a launch under the component memory system: every SM whose L1 holds dirty
/// global lines flushes it as a fence does (values at once, packets over the SM's link); the
/// launch lasts until they have reached their slices (`MemorySystem::writing_back`). With the
/// library's programs global data never stays in L1, so this costs nothing; a write-back L1
/// (a `st.global.wb` program that writes L1) pays for its dirty lines here.
fn flush_at_end(
    ms: &mut crate::mem::system::MemorySystem,
    sms: &mut [Sm],
    global: &mut GlobalMemory,
    cycle: u64,
) {
    for sm in sms.iter_mut() {
        if !crate::mem::hierarchy::has_dirty_global(&sm.mem) {
            continue;
        }
        let side = crate::mem::system::SmSide {
            mem: &mut sm.mem,
            counters: &mut sm.stats.memory,
        };
        ms.flush_l1(sm.id, side, global, cycle);
    }
}

fn drain_memory(
    ms: &mut crate::mem::system::MemorySystem,
    sms: &mut [Sm],
    global: &mut GlobalMemory,
    programs: &crate::mem::hierarchy::ProgramTable,
    (prog, kernel): (&Program, &str),
) {
    let mut out = Vec::new();
    while let Some(t) = ms.next_wake() {
        if tick_memory(ms, t, sms, global, programs, &mut out, (prog, kernel)).is_err() {
            return;
        }
        out.clear();
    }
}

/// The order the SMs step in during `cycle` (`debug.step_order`): a test of the invariant that
/// no result depends on it. `shuffled` draws a fresh permutation every cycle from the seed and
/// the cycle (Fisher–Yates over a SplitMix64 stream), so a run is still reproducible.
fn fill_step_order(d: &crate::config::DebugConfig, cycle: u64, order: &mut [usize]) {
    use crate::config::StepOrder;
    for (k, o) in order.iter_mut().enumerate() {
        *o = k;
    }
    match d.step_order {
        StepOrder::Ascending => {}
        StepOrder::Descending => order.reverse(),
        StepOrder::Shuffled => {
            let mut state = d.step_seed ^ cycle.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            for k in (1..order.len()).rev() {
                let j = (crate::rng::splitmix64(&mut state) % (k as u64 + 1)) as usize;
                order.swap(k, j);
            }
        }
    }
}

/// Hand every SM's warp events to `trace`, SM by SM.
fn drain_events(sms: &mut [Sm], trace: &mut dyn TraceSink) {
    for sm in sms.iter_mut() {
        if let Some(t) = sm.hook_mut::<TraceHook>() {
            for e in t.drain() {
                trace.event(e);
            }
        }
    }
}

/// One SM's units of each kind (all sub-partitions) and warp slots.
fn sm_scope(cfg: &Config) -> crate::stats::Scope {
    let l2 = cfg.l2_bytes_per_core_cycle();
    let ports = l2 / cfg.l2.bytes_per_cycle.max(1) as f64;
    crate::stats::Scope {
        units: super::program::Unit::ALL
            .map(|u| u.shape(&cfg.sm.units).0 as u64 * cfg.sm.schedulers as u64),
        warp_slots: cfg.sm.max_warps as u64,
        // Per core cycle at the starting clock (`clock.l2_mhz` keeps the L2's own).
        l2_bytes_per_cycle: (l2 as u64).max(1),
        dram_bytes_per_cycle: cfg.dram.bytes_per_cycle as u64,
        // The ports keep the L2's clock too.
        icnt_bytes_per_cycle: ((2 * cfg.interconnect.port_bytes_per_cycle) as f64 * ports).max(1.0)
            as u64,
    }
}

/// The SMs' per-instruction counters summed (None: not collected).
fn sum_line_counters(sms: &mut [Sm]) -> Option<crate::stats::lines::LineCounters> {
    let mut it = sms.iter_mut().filter_map(|s| s.line_counters());
    let mut total = it.next()?;
    for c in it {
        total.add(&c);
    }
    Some(total)
}

/// Each kernel's static `.shared` variables must fit an SM's shared memory
/// (`sm.shared_bytes`): every CTA of the kernel holds them, so one that cannot fit is bad input
/// (exit 2, at its declaration), not a fault of a running kernel. ptxas refuses such an entry
/// ("Entry function uses too much shared data").
pub fn check_static_shared(prog: &Program, cfg: &Config) -> Result<(), gpusim_isa::PtxError> {
    let limit = u64::from(cfg.sm.shared_bytes);
    let m = &prog.module;
    for entry in (0..m.functions.len() as u32).map(FuncId) {
        let layout = prog.shared_layout(entry);
        if layout.static_bytes <= limit {
            continue;
        }
        let over = m
            .symbols
            .iter()
            .enumerate()
            .filter(|(_, s)| s.space == gpusim_isa::Space::Shared && !s.is_extern)
            .filter_map(|(i, s)| Some((s, layout.offset(gpusim_isa::SymbolId(i as u32))?)))
            .filter(|(s, at)| at + s.size() > limit)
            .min_by_key(|&(_, at)| at);
        let kernel = &m.function(entry).name;
        let (line, col, what) = match over {
            Some((s, at)) => (
                s.span.line,
                s.span.col,
                format!(
                    "`.shared` variable `{}` ({} bytes at offset {at} in kernel `{kernel}`)",
                    s.name,
                    s.size(),
                ),
            ),
            None => (0, 0, format!("kernel `{kernel}`'s `.shared` variables")),
        };
        return Err(gpusim_isa::PtxError {
            file: m.file.clone(),
            line,
            col,
            text: String::new(),
            message: format!(
                "{what} does not fit in shared memory: the kernel's static shared data takes {} bytes, an SM has {limit} (sm.shared_bytes)",
                layout.static_bytes
            ),
        });
    }
    Ok(())
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
    spare: &mut Vec<Warp>,
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
    let mut warps = Vec::with_capacity(n_warps as usize);
    for wi in 0..n_warps {
        let first = wi * ws;
        let n = ws.min(threads - first);
        let valid = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        // The buffers of a warp that finished on this SM, emptied: a fresh warp's contents
        // without its allocations (a short kernel's warps issue a few dozen instructions).
        // A first warp's lane scratch starts at a warp's width: growing it from empty
        // reallocates each vector four or five times in the warp's first memory instruction.
        let mut old = spare
            .pop()
            .map(Buffers::take)
            .unwrap_or_else(|| Buffers::for_lanes(ws as usize));
        // Warp k holds linear thread ids 32k..32k+31 in ascending lane order (Habermaier §5.6).
        old.tid.extend((0..ws).map(|l| {
            let t = (first + l).min(threads - 1);
            [t % b[0], (t / b[0]) % b[1], t / (b[0] * b[1])]
        }));
        old.regs.resize(n_regs * ws as usize, 0);
        old.ready.resize(n_regs, 0);
        old.ready_long.resize(n_regs, false);
        old.frames.push(Frame {
            func: spec.entry,
            reg_base: 0,
            local_base: 0,
            ret_dst: Vec::new(),
        });
        old.local.resize_with(ws as usize, Vec::new);
        warps.push(Warp {
            cta: 0,
            warp_in_cta: wi,
            age: 0,
            warp_size: ws,
            valid,
            tid: old.tid,
            regs: old.regs,
            ready: old.ready,
            ready_long: old.ready_long,
            frames: old.frames,
            local: old.local,
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
            mem_in_flight: 0,
            fence_from: None,
            mem_accesses: old.mem_accesses,
            mem_keys: old.mem_keys,
            mem_lanes: old.mem_lanes,
            mem_global: old.mem_global,
            mem_lines: old.mem_lines,
            mem_txns: old.mem_txns,
            mem_values: old.mem_values,
            async_copies: old.async_copies,
            async_group: 0,
            async_in_flight: old.async_in_flight,
            hopper: Default::default(),
            wgmma: Default::default(),
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

/// The buffers a new warp takes from a finished one, every one emptied (capacities kept).
#[derive(Default)]
struct Buffers {
    tid: Vec<[u32; 3]>,
    regs: Vec<u64>,
    ready: Vec<u64>,
    ready_long: Vec<bool>,
    frames: Vec<Frame>,
    local: Vec<Vec<u8>>,
    mem_accesses: Vec<crate::mem::coalesce::LaneAccess>,
    mem_keys: Vec<u64>,
    mem_lanes: Vec<(u32, gpusim_isa::Space, u64, u32)>,
    mem_global: Vec<crate::mem::coalesce::LaneAccess>,
    mem_lines: Vec<(u64, crate::mem::cache::Mask)>,
    mem_txns: Vec<crate::mem::hierarchy::Txn>,
    mem_values: Vec<(u64, u32, u64)>,
    async_copies: Vec<super::warp::AsyncCopy>,
    async_in_flight: Vec<u64>,
}

impl Buffers {
    /// Fresh buffers whose per-lane scratch holds a warp's lanes without growing.
    fn for_lanes(lanes: usize) -> Buffers {
        Buffers {
            mem_accesses: Vec::with_capacity(lanes),
            mem_keys: Vec::with_capacity(lanes),
            mem_lanes: Vec::with_capacity(lanes),
            mem_global: Vec::with_capacity(lanes),
            mem_lines: Vec::with_capacity(lanes),
            // An operation is 224 bytes and a coalesced access makes one to four.
            mem_txns: Vec::with_capacity(4),
            mem_values: Vec::with_capacity(lanes),
            ..Buffers::default()
        }
    }

    fn take(w: Warp) -> Buffers {
        fn empty<T>(mut v: Vec<T>) -> Vec<T> {
            v.clear();
            v
        }
        let mut local = w.local;
        for l in &mut local {
            l.clear();
        }
        Buffers {
            tid: empty(w.tid),
            regs: empty(w.regs),
            ready: empty(w.ready),
            ready_long: empty(w.ready_long),
            frames: empty(w.frames),
            local,
            mem_accesses: empty(w.mem_accesses),
            mem_keys: empty(w.mem_keys),
            mem_lanes: empty(w.mem_lanes),
            mem_global: empty(w.mem_global),
            mem_lines: empty(w.mem_lines),
            mem_txns: empty(w.mem_txns),
            mem_values: empty(w.mem_values),
            async_copies: empty(w.async_copies),
            async_in_flight: empty(w.async_in_flight),
        }
    }
}

/// Every unfinished warp either spins without any memory change or waits on a barrier: the
/// kernel can never finish. The report says why the spinning warps cannot leave their loop:
/// diverged lanes that wait for lanes which only proceed after them (the token stack's
/// liveness violation, Habermaier §6.5), or a converged path that loops for ever.
fn check_livelock(sms: &[Sm], prog: &Program, epoch: u64) -> Result<(), Fault> {
    let (mut diverged, mut converged) = (0, 0);
    for w in sms.iter().flat_map(|s| s.warps.iter().flatten()) {
        match w.state {
            WarpState::Completed | WarpState::Barrier(_) => {}
            WarpState::Active if w.live.is_spinning(epoch) => {
                let live = w.valid & !w.simt.exited_mask();
                if w.simt.active_mask() == live {
                    converged += 1;
                } else {
                    diverged += 1;
                }
            }
            WarpState::Active => return Ok(()),
        }
    }
    if diverged + converged == 0 {
        return Ok(());
    }
    let (details, waits) = warps_report(sms, prog);
    let why = if diverged > 0 {
        format!("in {diverged} of the spinning warps diverged lanes wait on the reconvergence state (token stack or equivalent) for lanes that can only proceed after them (Habermaier 2011 §6.5)")
    } else {
        "every spinning warp runs converged (all its live lanes active) around a loop that changes no register, reconvergence state or memory: an infinite loop".to_string()
    };
    let mut f = Fault::new(
        FaultKind::Liveness,
        format!("liveness violation: no unfinished warp can ever make progress ({waits}); {why}"),
    );
    f.details = details;
    Err(f)
}

/// The unfinished warps of every SM for a fault's details (finished ones counted, the list
/// and each long stack bounded), and what they wait for, grouped: "2 warps wait at CTA
/// barriers that cannot complete; 1 warp spins ...".
fn warps_report(sms: &[Sm], prog: &Program) -> (Vec<String>, String) {
    let (mut lines, mut waits, mut finished) = (Vec::new(), Vec::new(), 0);
    for sm in sms {
        let (warps, done) = sm.report_warps(prog);
        finished += done;
        for (wait, line) in warps {
            waits.push(wait);
            lines.push(line);
        }
    }
    waits.sort();
    let mut groups: Vec<String> = Vec::new();
    let mut i = 0;
    while i < waits.len() {
        let n = waits[i..].iter().take_while(|&&w| w == waits[i]).count();
        groups.push(waits[i].phrase(n));
        i += n;
    }
    if groups.is_empty() {
        groups.push("no warp is unfinished".into());
    }
    (
        super::fault::warp_details(lines, finished),
        groups.join("; "),
    )
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
    prog: &Program,
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
                lanes,
            } => {
                let Some(b) = bars.get_mut(&cluster) else {
                    continue;
                };
                b.waiters.push((sm, slot, phases, lanes));
                b.released()
            }
        };
        for (sm, slot, visible, lanes) in released {
            let t = visible.max(cycle + 1);
            sms[sm as usize].release_cluster_wait(slot, t, lanes, prog);
            wake[sm as usize] = wake[sm as usize].min(t);
        }
    }
}
