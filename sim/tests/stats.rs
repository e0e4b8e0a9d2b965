//! The counters' contracts: every resident warp is in exactly one state per cycle (the
//! breakdown sums to resident warp-cycles), the SIMD histogram accounts for every issued
//! instruction and lane, and every scheduler is deterministic.

use gpusim::run_manifest;
use std::path::{Path, PathBuf};

fn trace(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../traces")
        .join(rel)
}

#[test]
fn stall_states_sum_to_resident_warp_cycles() {
    // One CTA of 96 threads (3 warps), resident from cycle 0 until it retires. Under the
    // issue-time memory model its last stores complete at issue, so it is resident to the
    // end; under the component system the kernel then waits for them (at most one trip to
    // DRAM and back) with no warp resident.
    let t12 = trace("semantics/t12_bar_sync/t12_bar_sync.yaml");
    let issue = [("memory_engine".to_string(), "issue".to_string())];
    let out = run_manifest(&t12, None, &issue).unwrap();
    let k = &out.stats.kernels[0];
    let total: u64 = k.counters.stalls.values().sum();
    assert_eq!(total, 3 * k.counters.cycles, "{:?}", k.counters.stalls);
    let comp = run_manifest(&t12, None, &[]).unwrap();
    let kc = &comp.stats.kernels[0];
    let resident: u64 = kc.counters.stalls.values().sum();
    let drain = gpusim::config::Config::tiny().dram.latency as u64;
    assert!(
        resident % 3 == 0
            && resident <= 3 * kc.counters.cycles
            && resident + 3 * drain >= 3 * kc.counters.cycles,
        "{resident} warp-cycles over {} cycles",
        kc.counters.cycles
    );
    assert_eq!(kc.counters.stalls["issued"], kc.counters.warp_instructions);
    let per_sm: u64 = k
        .sms
        .iter()
        .map(|s| s.counters.stalls.values().sum::<u64>())
        .sum();
    assert_eq!(per_sm, total);
    assert_eq!(k.counters.stalls["issued"], k.counters.warp_instructions);
}

#[test]
fn simd_histogram_accounts_for_every_instruction_and_lane() {
    for t in [
        "kernels/mandelbrot/mandelbrot.yaml",
        "kernels/bfs_step/bfs_step.yaml",
        "semantics/t11_6_partial_warp/t11_6_partial_warp.yaml",
    ] {
        let out = run_manifest(&trace(t), None, &[]).unwrap();
        let c = &out.stats.totals;
        assert_eq!(c.simd_lanes.iter().sum::<u64>(), c.warp_instructions, "{t}");
        let lanes: u64 = c
            .simd_lanes
            .iter()
            .enumerate()
            .map(|(k, n)| k as u64 * n)
            .sum();
        assert_eq!(lanes, c.thread_instructions, "{t}");
    }
}

#[test]
fn every_scheduler_is_deterministic() {
    for sched in ["lrr", "gto", "oldest", "random", "two-level"] {
        let sets = [("sm.scheduler".to_string(), sched.to_string())];
        let run = || {
            let out =
                run_manifest(&trace("kernels/histogram/histogram.yaml"), None, &sets).unwrap();
            let mut json = serde_json::to_value(&out.stats).unwrap();
            json.as_object_mut()
                .unwrap()
                .retain(|k, _| !k.contains("wall") && !k.contains("per_second"));
            for k in json["kernels"].as_array_mut().unwrap() {
                k.as_object_mut().unwrap().remove("wall_seconds");
            }
            (json, out.buffers)
        };
        let (a, b) = (run(), run());
        assert_eq!(a.0, b.0, "{sched}: stats differ between identical runs");
        assert_eq!(a.1, b.1, "{sched}: buffers differ between identical runs");
    }
}

/// A fence holds the warp until its outstanding memory operations complete (the formal
/// model's `canBeScheduled`: no pending membar): the instruction after `membar.gl` issues no
/// earlier than the store before it plus the global latency, and the wait is counted as the
/// `membar` state. A reconvergence pop is counted as `reconvergence`.
#[test]
fn fences_wait_for_memory_and_are_counted() {
    let dir = std::env::temp_dir().join(format!("gpusim-fence-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("f.ptx"),
        ".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry f(.param .u64 out)\n{\n  .reg .b64 %o;\n  .reg .b32 %r<3>;\n  ld.param.u64 %o, [out];\n  cvta.to.global.u64 %o, %o;\n  st.global.u32 [%o], 7;\n  membar.gl;\n  add.u32 %r1, 1, 2;\n  exit;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("f.yaml"),
        "kernel: f.ptx\nlaunches:\n  - entry: f\n    grid: [1, 1, 1]\n    block: [32, 1, 1]\n    args: [out]\nbuffers:\n  out: { dtype: u32, shape: [1], init: zeros }\nchecks:\n  - buffer: out\n    values: [7]\n",
    )
    .unwrap();
    let opts = gpusim::RunOptions {
        trace_warps: true,
        ..Default::default()
    };
    let out = gpusim::run_manifest_with(&dir.join("f.yaml"), None, &[], &opts).unwrap();
    assert!(out.failures.is_empty());
    let at = |prefix: &str| {
        out.events
            .iter()
            .find(|e| e.text.starts_with(prefix))
            .unwrap()
            .cycle
    };
    // A store completes when L2 has it (`mem::cache`: write-through to L2).
    let global = gpusim::config::Config::tiny().l2.hit_latency as u64;
    assert!(
        at("add.u32") >= at("st.global") + global,
        "the fence let the warp go before the store completed"
    );
    assert!(
        out.stats.totals.stalls["membar"] >= global - 4,
        "{:?}",
        out.stats.totals.stalls
    );
    let _ = std::fs::remove_dir_all(dir);
    let div = run_manifest(&trace("kernels/mandelbrot/mandelbrot.yaml"), None, &[]).unwrap();
    assert!(
        div.stats.totals.stalls["reconvergence"] > 0,
        "divergent loops reconverge"
    );
}

/// The loaded-latency histogram and the per-component utilisation account for every load and
/// every byte: the idle DRAM chase sees the configured latency (less t_rcd on row hits), the
/// streaming kernel sees queueing on top, and the slices' and channels' bytes add up to the
/// L2 and DRAM totals.
#[test]
fn load_latency_and_component_utilisation_add_up() {
    let v100 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/volta-v100.yaml");
    let text = std::fs::read_to_string(&v100).unwrap();
    let cfg = gpusim::config::Config::from_yaml("volta-v100.yaml", &text, &[]).unwrap();
    let chase = run_manifest(&trace("microbench/chase_dram.yaml"), Some(&v100), &[]).unwrap();
    let m = &chase.stats.kernels[0].counters.memory;
    let hist: u64 = m.load_latency_histogram.iter().map(|b| b.2).sum();
    assert_eq!(hist, m.counters.loads_timed);
    assert!(m.counters.loads_timed >= 100, "{}", m.counters.loads_timed);
    // The component system's controllers take a request at their next clock edge and now
    // and then meet a refresh: under one per cent on an idle chase (docs/memory.md).
    let dram = cfg.dram.latency as f64 * 1.01;
    let hit = (cfg.dram.latency - cfg.dram_cycles_to_core(cfg.dram.t_rcd)) as f64;
    assert!(
        m.load_latency_mean >= hit && m.load_latency_mean <= dram,
        "idle chase mean {} outside [{hit}, {dram}]",
        m.load_latency_mean
    );

    let stream = run_manifest(&trace("microbench/stream_dram.yaml"), Some(&v100), &[]).unwrap();
    let k = &stream.stats.kernels[0];
    let m = &k.counters.memory;
    assert!(
        m.load_latency_mean > 1.5 * dram,
        "a saturating stream queues: mean {} vs idle {dram}",
        m.load_latency_mean
    );
    assert!(m.load_latency_p99 >= m.load_latency_p50);
    let cycles = k.counters.cycles as f64;
    let slice_rate = cfg.l2_bytes_per_core_cycle() / cfg.l2.slices as f64;
    let channel_rate = cfg.dram.bytes_per_cycle as f64 / cfg.dram.channels as f64;
    let c = &k.components;
    assert_eq!(c.l2_slice_utilisation.len(), cfg.l2.slices as usize);
    assert_eq!(c.dram_channel_utilisation.len(), cfg.dram.channels as usize);
    let slice_bytes: f64 = c.l2_slice_utilisation.iter().sum::<f64>() * cycles * slice_rate;
    let channel_bytes: f64 = c.dram_channel_utilisation.iter().sum::<f64>() * cycles * channel_rate;
    let close = |a: f64, b: u64| (a - b as f64).abs() <= 1e-6 * b as f64 + 1.0;
    assert!(
        close(slice_bytes, m.counters.l2_bytes),
        "{slice_bytes} vs {}",
        m.counters.l2_bytes
    );
    assert!(
        close(channel_bytes, m.counters.dram_bytes),
        "{channel_bytes} vs {}",
        m.counters.dram_bytes
    );
}

/// What the test observer saw: calls per stage boundary, and per retired instruction its
/// (cycle, SM, order) and what the trace shows of it (SM, CTA, warp, pc, executed lanes).
#[derive(Default)]
struct Seen {
    executed: u64,
    retired: u64,
    /// Retirements that came after a later place in their SM's cycle (the memory exchange).
    late: u64,
    last: std::collections::BTreeMap<u32, (u64, u32)>,
    records: Vec<(IssueKey, Shown)>,
}

/// (cycle, SM, place in the SM's issue order) and (SM, CTA, warp, pc, executed lanes).
type IssueKey = (u64, u32, u32);
type Shown = (u32, [u32; 3], u32, u32, gpusim::simt::Mask);

struct Observer(std::sync::Arc<std::sync::Mutex<Seen>>);

impl gpusim::core::sm::hooks::IssueHook for Observer {
    fn execute(
        &mut self,
        _at: &gpusim::core::sm::hooks::IssueView,
        _env: &gpusim::core::exec::ExecEnv,
    ) {
        self.0.lock().unwrap().executed += 1;
    }

    fn retire(&mut self, at: &gpusim::core::sm::hooks::IssueView, exec: gpusim::simt::Mask) {
        let mut s = self.0.lock().unwrap();
        s.retired += 1;
        let key = (at.cycle, at.sm, at.order);
        if s.last
            .get(&at.sm)
            .is_some_and(|&l| l > (at.cycle, at.order))
        {
            s.late += 1;
        }
        s.last.insert(at.sm, (at.cycle, at.order));
        let seen = (at.sm, at.cta.ctaid, at.warp.warp_in_cta, at.pc, exec);
        s.records.push((key, seen));
    }
}

/// The issue path's seam (`core::sm::hooks`): an observer installed on every SM sees each
/// instruction once at each boundary (as many as `warp_instructions`), and its records, put
/// in (cycle, SM, order) order, are the warp trace's events — the memory exchange issues
/// global accesses after the SM's other instructions, but they keep their place.
#[test]
fn issue_hooks_see_every_instruction_in_trace_order() {
    use gpusim::core::gpu::{run_launch_observed, LaunchSpec};
    use gpusim::core::sm::hooks::IssueHook;
    // Even warps load while odd ones compute, so a scheduler's load (issued in the memory
    // exchange) and another's add (issued in the step) share a cycle.
    const PTX: &str = ".version 7.0\n.target sm_70\n.address_size 64\n\
.visible .entry k(.param .u64 a, .param .u64 out)\n{\n\
  .reg .b64 %rd<6>;\n  .reg .b32 %r<16>;\n  .reg .pred %p<3>;\n\
  ld.param.u64 %rd1, [a];\n  ld.param.u64 %rd2, [out];\n\
  cvta.to.global.u64 %rd1, %rd1;\n  cvta.to.global.u64 %rd2, %rd2;\n\
  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n\
  mad.lo.u32 %r4, %r2, %r3, %r1;\n  mul.wide.u32 %rd3, %r4, 4;\n\
  add.u64 %rd4, %rd1, %rd3;\n  shr.u32 %r6, %r1, 5;\n  and.b32 %r6, %r6, 1;\n\
  setp.eq.u32 %p2, %r6, 1;\n  @%p2 bra ALU;\n\
  ld.global.u32 %r10, [%rd4];\n  ld.global.u32 %r11, [%rd4];\n\
  ld.global.u32 %r12, [%rd4];\n  ld.global.u32 %r13, [%rd4];\n  bra JOIN;\nALU:\n\
  add.u32 %r10, %r1, 1;\n  add.u32 %r11, %r1, 2;\n  add.u32 %r12, %r1, 3;\n\
  add.u32 %r13, %r1, 4;\n  add.u32 %r14, %r1, 5;\n  add.u32 %r15, %r1, 6;\nJOIN:\n\
  ld.global.u32 %r5, [%rd4];\n\
  and.b32 %r6, %r1, 1;\n  setp.eq.u32 %p1, %r6, 0;\n  @%p1 bra EVEN;\n\
  add.u32 %r5, %r5, 3;\nEVEN:\n  bar.sync 0;\n  add.u64 %rd5, %rd2, %rd3;\n\
  st.global.u32 [%rd5], %r5;\n  ret;\n}\n";
    let (ctas, threads) = (16u32, 128u32);
    let n = (ctas * threads) as usize;
    let volta = trace("../configs/volta-v100.yaml");
    for dual in ["false", "true"] {
        let set = [("sm.dual_issue".to_string(), dual.to_string())];
        let module = gpusim_isa::parse_module("k.ptx", PTX).unwrap();
        let cfg = gpusim::run::load_config(Some(&volta), &[], &set)
            .unwrap()
            .for_module(&module)
            .unwrap();
        let prog = gpusim::core::program::Program::prepare(module).unwrap();
        let mut global = gpusim::mem::GlobalMemory::default();
        let a: Vec<u8> = (0..n as u32).flat_map(|i| (i * 7).to_le_bytes()).collect();
        let a_at = global.alloc("a", &a);
        let out_at = global.alloc("out", &vec![0; 4 * n]);
        let mut l2 = gpusim::mem::engine::MemoryEngine::new(&cfg);
        let spec = LaunchSpec {
            entry: prog.module.find_function("k").unwrap(),
            grid: [ctas, 1, 1],
            block: [threads, 1, 1],
            dynamic_shared: 0,
            params: [a_at.to_le_bytes(), out_at.to_le_bytes()].concat(),
            trace: true,
            progress: false,
            skip_tensor_math: false,
            cluster: None,
            record_async: false,
            parallel: Default::default(),
            sample: None,
            lines: false,
        };
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Seen::default()));
        let mut observers =
            |_sm: u32| -> Vec<Box<dyn IssueHook>> { vec![Box::new(Observer(seen.clone()))] };
        let mut events = Vec::new();
        let o = run_launch_observed(
            &prog,
            &cfg,
            &mut global,
            &mut l2,
            &[],
            &spec,
            &mut events,
            &mut observers,
        );
        assert!(o.fault.is_none(), "{:?}", o.fault.map(|f| f.message));
        let got = global.slice(out_at, 4 * n as u64);
        for i in 0..n {
            let v = u32::from_le_bytes(got[4 * i..4 * i + 4].try_into().unwrap());
            let odd = if i % 2 == 1 { 3 } else { 0 };
            assert_eq!(v, i as u32 * 7 + odd, "out[{i}]");
        }
        let mut s = seen.lock().unwrap();
        let insts = o.stats.counters.warp_instructions;
        assert!(insts > 0);
        assert_eq!((s.executed, s.retired), (insts, insts), "dual issue {dual}");
        assert!(
            s.late > 0,
            "no instruction was issued in the memory exchange"
        );
        s.records.sort_by_key(|r| r.0);
        let traced: Vec<_> = events
            .iter()
            .map(|e| (e.sm, e.cta, e.warp, e.pc, e.exec))
            .collect();
        let observed: Vec<_> = s.records.iter().map(|r| r.1).collect();
        assert_eq!(observed.len(), traced.len());
        let first = observed.iter().zip(&traced).position(|(o, t)| o != t);
        assert_eq!(first, None, "dual issue {dual}: the first difference");
        // One CTA per SM, warp w on scheduler w: within a cycle, scheduler order.
        for p in events.windows(2) {
            let same = (p[0].cycle, p[0].sm) == (p[1].cycle, p[1].sm);
            assert!(!same || p[0].warp <= p[1].warp, "{}\n{}", p[0], p[1]);
        }
        let cycles: Vec<u64> = events.iter().map(|e| e.cycle).collect();
        let keys: Vec<u64> = s.records.iter().map(|r| r.0 .0).collect();
        assert_eq!(keys, cycles);
    }
}

/// The source view (`KernelStats::source`, `gpusim annotate`) accounts for every issue, lane
/// and warp-cycle: its lines sum to the kernel's counters, it is the same whether stalled
/// warps are parked (`sm::parked`, settled per interval) or classified every cycle, and
/// collecting it changes nothing else.
#[test]
fn the_source_view_accounts_for_every_issue_and_warp_cycle() {
    let cases = [
        ("semantics/t12_bar_sync/t12_bar_sync.yaml", "tiny"),
        ("kernels/sgemm_tiled/sgemm_tiled.yaml", "volta-v100"),
        ("kernels/recursive/recursive.yaml", "volta-v100"),
        ("kernels/saxpy/saxpy.yaml", "volta-v100"),
        (
            "policies/its_divergent_barriers/its_divergent_barriers.yaml",
            "volta-v100",
        ),
        ("tensor/ws_gemm_nvrtc/ws_gemm_nvrtc.yaml", "hopper-h100"),
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let with_lines = gpusim::run::RunOptions {
        lines: true,
        ..Default::default()
    };
    for (rel, cfg) in cases {
        let cfg = root.join(format!("configs/{cfg}.yaml"));
        let run = |opts: &gpusim::run::RunOptions, classify: &str| {
            let set = [("debug.classify".to_string(), classify.to_string())];
            gpusim::run::run_manifest_with(&trace(rel), Some(&cfg), &set, opts)
                .unwrap_or_else(|e| panic!("{rel}: {e}"))
        };
        let plain = run(&Default::default(), "parked");
        let parked = run(&with_lines, "parked");
        // Recording a timeline (every SM, memory requests too) changes nothing either.
        let mut sink = Recorded::default();
        let set = [("debug.classify".to_string(), "parked".to_string())];
        let (timed, _) = gpusim::run::run_manifest_traced(
            &trace(rel),
            Some(&cfg),
            &set,
            &Default::default(),
            &mut sink,
        )
        .unwrap();
        assert!(sink.records > 0, "{rel}: no timeline records");
        for (a, b) in timed.stats.kernels.iter().zip(&plain.stats.kernels) {
            assert_eq!(
                (
                    a.counters.cycles,
                    &a.counters.stalls,
                    a.counters.warp_instructions
                ),
                (
                    b.counters.cycles,
                    &b.counters.stalls,
                    b.counters.warp_instructions
                ),
                "{rel}: recording the timeline changed the run"
            );
        }
        assert_eq!(timed.buffers, plain.buffers, "{rel}");
        let every = run(&with_lines, "every-cycle");
        for (i, k) in parked.stats.kernels.iter().enumerate() {
            let p = &plain.stats.kernels[i];
            assert_eq!(
                (
                    k.counters.cycles,
                    &k.counters.stalls,
                    &k.counters.simd_lanes
                ),
                (
                    p.counters.cycles,
                    &p.counters.stalls,
                    &p.counters.simd_lanes
                ),
                "{rel}: collecting the source view changed the run"
            );
            assert!(p.source.is_none());
            let v = k.source.as_ref().expect("collected");
            let issued: u64 = v.lines.iter().map(|l| l.issued).sum();
            let threads: u64 = v.lines.iter().map(|l| l.thread_instructions).sum();
            assert_eq!(issued, k.counters.warp_instructions, "{rel}");
            assert_eq!(threads, k.counters.thread_instructions, "{rel}");
            let mut stalls = k.counters.stalls.clone();
            stalls.retain(|_, v| *v > 0);
            assert_eq!(
                v.stall_totals(),
                stalls,
                "{rel}: stalls per line vs the breakdown"
            );
            let e = every.stats.kernels[i].source.as_ref().unwrap();
            assert_eq!(v, e, "{rel}: parked and every-cycle attribution differ");
            assert!(v.lines.iter().all(|l| l.line > 0 && !l.text.is_empty()));
        }
    }
}

/// A trace sink that counts timeline records (all SMs, memory requests included).
#[derive(Default)]
struct Recorded {
    records: usize,
}

impl gpusim::stats::trace::TraceSink for Recorded {
    fn event(&mut self, _: gpusim::stats::WarpEvent) {}

    fn timeline(&mut self) -> Option<&mut dyn gpusim::timeline::TimelineSink> {
        Some(self)
    }
}

impl gpusim::timeline::TimelineSink for Recorded {
    fn records_sm(&self, _: u32) -> bool {
        true
    }
    fn records_memory(&self) -> bool {
        true
    }
    fn counter_interval(&self) -> u64 {
        100
    }
    fn launch_begin(&mut self, _: &gpusim::timeline::LaunchShape) {}
    fn record(&mut self, _: u32, _: gpusim::timeline::Record) {
        self.records += 1;
    }
    fn counters(&mut self, _: &gpusim::timeline::CounterSample) {}
    fn fault(&mut self, _: u64, _: &str) {}
    fn launch_end(&mut self, _: u64) {}
}
