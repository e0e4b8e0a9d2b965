//! Clocks and power (docs/power.md) on whole runs: a power limit lowers the clock and
//! lengthens the run while the results stay right, a locked clock turns the same work into
//! longer time, zero operands cost less tensor energy than random ones, and configs without a
//! power model report no power and run exactly as before.

mod common;

use common::{config_path, root, temp_dir};

use gpusim::run_manifest;
use gpusim::stats::KernelStats;

const GEMM: &str = "traces/gemm/hopper_ws_bf16_cluster2/hopper_ws_bf16_cluster2.yaml";

fn set(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The single launch of the clustered bf16 GEMM trace on the H100 with `sets`; its checks
/// must pass.
fn gemm(sets: &[(&str, &str)]) -> KernelStats {
    let out = run_manifest(
        &root().join(GEMM),
        Some(&config_path("hopper-h100")),
        &set(sets),
    )
    .unwrap();
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    out.stats.kernels.into_iter().next().unwrap()
}

/// Control every microsecond (the trace lasts 7 µs) and decide on the last interval only.
const FAST: [(&str, &str); 2] = [("clock.control_interval_us", "1"), ("clock.window_us", "1")];

#[test]
fn a_power_limit_lowers_the_clock_and_lengthens_the_run() {
    let free = gemm(&[FAST[0], FAST[1], ("power.limit_watts", "5000")]);
    assert_eq!(free.clock.changes, 0, "{:?}", free.clock);
    assert_eq!(free.clock.min_mhz, 1980);
    let p = free.power.as_ref().unwrap();
    // Eight CTAs on 132 SMs: most of the power is static; the tensor part is real.
    assert!(p.joules.tensor > 0.0 && p.joules.static_ > p.joules.tensor);
    let limit = 0.9 * p.average_watts;
    let capped = gemm(&[FAST[0], FAST[1], ("power.limit_watts", &format!("{limit}"))]);
    let c = &capped.clock;
    assert!(c.changes > 0 && c.min_mhz < 1980, "{c:?}");
    assert!(
        c.seconds > free.clock.seconds,
        "{} vs {}",
        c.seconds,
        free.clock.seconds
    );
    let q = capped.power.as_ref().unwrap();
    assert!(q.average_watts < p.average_watts, "{q:?}");
    // The timeline covers every cycle, each interval at the clock it ran at.
    let cycles: u64 = c.timeline.iter().map(|i| i.cycles).sum();
    assert_eq!(cycles, capped.counters.cycles);
    let secs: f64 = c
        .timeline
        .iter()
        .map(|i| i.cycles as f64 / (i.mhz as f64 * 1e6))
        .sum();
    assert!((secs - c.seconds).abs() < 1e-12, "{secs} vs {}", c.seconds);
    // The same limit gives the same run.
    let again = gemm(&[FAST[0], FAST[1], ("power.limit_watts", &format!("{limit}"))]);
    assert_eq!(again.counters.cycles, capped.counters.cycles);
    assert_eq!(again.clock, capped.clock);
}

/// `clock.fixed_mhz` (nvidia-smi -lgc): no governor; every cycle lasts 1 / the locked clock.
/// The core-domain work takes the same cycles, DRAM (its own clock) fewer of them.
#[test]
fn a_locked_clock_turns_cycles_into_longer_time() {
    let boost = gemm(&[]);
    let locked = gemm(&[("clock.fixed_mhz", "990")]);
    let c = &locked.clock;
    assert!(!c.governed && c.changes == 0 && c.min_mhz == 990 && c.max_mhz == 990);
    let cycles = locked.counters.cycles;
    assert!((c.seconds - cycles as f64 / 990e6).abs() < 1e-15);
    assert!(
        cycles <= boost.counters.cycles,
        "{cycles} vs {}",
        boost.counters.cycles
    );
    assert!(c.seconds > boost.clock.seconds);
}

/// Where values are computed, a tensor multiply-add's energy follows its operands' bit
/// density (power.tensor_data_share): all-zero A and B cost the data-independent share only.
#[test]
fn zero_operands_cost_less_tensor_energy_than_random_ones() {
    let dir = temp_dir("power-zeros");
    let src = root().join("traces/gemm/hopper_ws_bf16_cluster2");
    std::fs::copy(
        src.join("hopper_ws_bf16_cluster2.ptx"),
        dir.join("hopper_ws_bf16_cluster2.ptx"),
    )
    .unwrap();
    let text = std::fs::read_to_string(root().join(GEMM)).unwrap();
    let zeros = text
        .replace("init: { npy: A.npy }", "init: zeros")
        .replace("init: { npy: B.npy }", "init: zeros");
    let zeros = zeros.split("\nchecks:").next().unwrap().to_string() + "\n";
    assert!(!zeros.contains("npy"), "{zeros}");
    std::fs::write(dir.join("zeros.yaml"), zeros).unwrap();
    let out = run_manifest(
        &dir.join("zeros.yaml"),
        Some(&config_path("hopper-h100")),
        &[],
    )
    .unwrap();
    let z = out.stats.kernels[0].power.clone().unwrap();
    let r = gemm(&[]).power.unwrap();
    assert_eq!(z.tensor_operand_density, Some(0.0));
    let density = r.tensor_operand_density.unwrap();
    assert!(density > 0.3 && density < 0.7, "{density}");
    assert_eq!(z.tensor_flops, r.tensor_flops);
    // share 0.61: zeros cost 0.39 of the reference density's energy per multiply-add.
    let expected = (1.0 - 0.61) / (1.0 - 0.61 + 0.61 * density / 0.607);
    let ratio = z.joules.tensor / r.joules.tensor;
    assert!((ratio - expected).abs() < 0.02, "{ratio} vs {expected}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A config without a `power` section reports the clock only, and a power key cannot be set
/// on it; its cycles are those of a run with no clock section at all.
#[test]
fn configs_without_a_power_model_report_only_the_clock() {
    let out = run_manifest(&root().join("traces/kernels/vecadd/vecadd.yaml"), None, &[]).unwrap();
    let k = &out.stats.kernels[0];
    assert!(k.power.is_none());
    assert_eq!(k.clock.timeline.len(), 1);
    assert_eq!(k.clock.max_mhz, 1400);
    assert!((k.clock.seconds - k.counters.cycles as f64 / 1400e6).abs() < 1e-15);
    let e = run_manifest(
        &root().join("traces/kernels/vecadd/vecadd.yaml"),
        None,
        &set(&[("power.limit_watts", "100")]),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("power"), "{e}");
}

/// `gemm --stats-json` writes each size's launch statistics, with the clock and power, and
/// `plot power` draws them; the table has the clock and power columns.
#[test]
fn gemm_writes_power_stats_that_plot_draws() {
    let dir = temp_dir("power-gemm");
    let json = dir.join("g.json");
    let bin = env!("CARGO_BIN_EXE_gpusim");
    let out = std::process::Command::new(bin)
        .current_dir(root())
        .args([
            "gemm",
            "traces/gemm/hopper_ws_bf16/gemm.yaml",
            "--config",
            "configs/hopper-h100.yaml",
            "--sizes",
            "512x512x512",
            "--verify-up-to",
            "512",
            "--progress",
            "none",
            "--stats-json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("power-limited to 700 W") && stdout.contains("pJ/FLOP"),
        "{stdout}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let k = &doc["kernels"][0];
    assert_eq!(k["size"], "512x512x512");
    assert!(k["power"]["energy_joules"].as_f64().unwrap() > 0.0, "{k}");
    // Random inputs were multiplied: their operands' bit density is reported.
    assert!(k["power"]["tensor_operand_density"].as_f64().unwrap() > 0.3);
    let svg = dir.join("p.svg");
    let plot = std::process::Command::new(bin)
        .args(["plot", "power"])
        .arg(&json)
        .arg("-o")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        plot.status.success(),
        "{}",
        String::from_utf8_lossy(&plot.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("core clock (MHz)") && text.contains("limit 700 W"));
    // An unwritable --stats-json is refused before anything is simulated.
    let bad = std::process::Command::new(bin)
        .current_dir(root())
        .args([
            "gemm",
            "traces/gemm/hopper_ws_bf16/gemm.yaml",
            "--sizes",
            "512x512x512",
        ])
        .args([
            "--config",
            "configs/hopper-h100.yaml",
            "--stats-json",
            "/nonexistent/g.json",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--stats-json"));
    assert!(
        bad.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&bad.stdout)
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The GEMM trace on hopper-h100 with its `clock.l2_mhz` line removed (the L2 on the core
/// clock) and `sets`.
fn gemm_shared_l2(sets: &[(&str, &str)]) -> KernelStats {
    // Written once: the calls may run at once.
    static CONFIG: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let cfg = CONFIG.get_or_init(|| {
        let text = std::fs::read_to_string(config_path("hopper-h100")).unwrap();
        let kept: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("l2_mhz:"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(kept.len() < text.len(), "hopper-h100 sets clock.l2_mhz");
        let path = temp_dir("power-shared-l2").join("hopper-h100-shared-l2.yaml");
        std::fs::write(&path, kept).unwrap();
        path
    });
    let out = run_manifest(&root().join(GEMM), Some(cfg), &set(sets)).unwrap();
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    out.stats.kernels.into_iter().next().unwrap()
}

/// `clock.l2_mhz`: the L2 and crossbar in a clock domain of their own keep their bandwidth
/// when the core clock falls (fewer core cycles for the same product); at the core's own
/// clock they change nothing.
#[test]
fn an_l2_clock_of_its_own_keeps_its_bandwidth_when_the_core_slows() {
    let shared = gemm_shared_l2(&[("clock.fixed_mhz", "990")]);
    let own = gemm_shared_l2(&[("clock.fixed_mhz", "990"), ("clock.l2_mhz", "1980")]);
    let same = gemm_shared_l2(&[("clock.fixed_mhz", "990"), ("clock.l2_mhz", "990")]);
    assert!(
        own.counters.cycles < shared.counters.cycles,
        "{} vs {}",
        own.counters.cycles,
        shared.counters.cycles
    );
    assert_eq!(same.counters.cycles, shared.counters.cycles);
    // Under the governor the ports follow every clock change, and the run stays deterministic.
    let governed = [
        FAST[0],
        FAST[1],
        ("power.limit_watts", "80"),
        ("clock.l2_mhz", "1980"),
    ];
    let a = gemm(&governed);
    assert!(a.clock.changes > 0, "{:?}", a.clock);
    assert_eq!(gemm(&governed).counters.cycles, a.counters.cycles);
}

/// Every shipped config with a power model: an idle GPU with every SM holding work fits its
/// limit at the boost clock (else nothing could run at boost), and a small kernel reports a
/// power between the constant power and the limit, at a clock in the governor's range.
#[test]
fn shipped_power_models_leave_room_under_their_limits() {
    let mut n = 0;
    for name in [
        "volta-v100",
        "ampere-a100",
        "hopper-h100",
        "fermi-gtx480",
        "tiny",
    ] {
        let path = config_path(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let cfg =
            gpusim::config::Config::from_yaml(&path.display().to_string(), &text, &[]).unwrap();
        let Some(p) = &cfg.power else { continue };
        let limit = p.limit_watts.expect("a shipped power model has a limit");
        let all_active = p.constant_watts + cfg.sm.count as f64 * p.sm_active_watts;
        assert!(
            all_active < 0.5 * limit,
            "{name}: static {all_active} W, limit {limit} W"
        );
        let out = run_manifest(
            &root().join("traces/kernels/vecadd/vecadd.yaml"),
            Some(&path),
            &[],
        )
        .unwrap();
        assert!(out.failures.is_empty(), "{name}: {:?}", out.failures);
        let k = &out.stats.kernels[0];
        let w = k.power.as_ref().expect("a power report").average_watts;
        assert!(w > p.constant_watts && w < limit, "{name}: {w} W");
        assert!(k.clock.governed, "{name}");
        let (lowest, boost) = (cfg.clock.min_mhz.unwrap(), cfg.clock_mhz.unwrap());
        assert!(
            k.clock.min_mhz >= lowest && k.clock.max_mhz <= boost,
            "{name}"
        );
        n += 1;
    }
    assert!(n >= 3, "{n} configs with a power model");
}
