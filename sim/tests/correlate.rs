//! Hardware correlation without a GPU (docs/correlation.md): `gpusim export` writes what
//! tools/correlate/measure.py runs, `gpusim correlate` compares a measurement CSV with the
//! simulation, and the script's GPU-free parts pass their unit tests.

mod common;

use common::{root, temp_dir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh scratch directory for test `tag` (emptied: `export` must not see old files).
fn scratch(tag: &str) -> PathBuf {
    let d = temp_dir(&format!("correlate-{tag}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn gpusim<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run gpusim");
    let r = Run {
        code: out.status.code().expect("exited"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    eprintln!("--- stdout\n{}\n--- stderr\n{}", r.stdout, r.stderr);
    r
}

const VECADD: &str = "traces/kernels/vecadd/vecadd.yaml";
const CLUSTER: &str = "traces/gemm/hopper_ws_bf16_cluster2/hopper_ws_bf16_cluster2.yaml";
const GEMM: &str = "traces/gemm/hopper_ws_bf16_cluster2/gemm.yaml";

fn npy_data(path: &Path) -> Vec<u8> {
    gpusim::launch::npy::read(path).expect("read npy").data
}

#[test]
fn export_writes_buffers_launches_parameters_and_checks() {
    let dir = scratch("export");
    let r = gpusim(&[
        "export",
        "--out",
        dir.to_str().unwrap(),
        VECADD,
        CLUSTER,
        "traces/faults/oob_global_load_past_end/oob_global_load_past_end.yaml",
        "traces/semantics/t12_votes/t12_votes.yaml",
        "--gemm",
        GEMM,
        "--sizes",
        "512x512x512,4096x4096x4096",
    ]);
    assert_eq!(r.code, 0);
    assert!(
        r.stderr.contains("expects a fault") && r.stderr.contains("not exported"),
        "{}",
        r.stderr
    );
    // A trace on 4-lane warps would run on 32-lane warps on a GPU: not exported either.
    assert!(r.stderr.contains("sets sm.warp_size: 4"), "{}", r.stderr);
    let plan: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("plan.json")).unwrap()).unwrap();
    assert_eq!(plan["format"], "gpusim-export/1");
    let w = plan["workloads"].as_array().unwrap();
    assert_eq!(w.len(), 4, "vecadd, the cluster trace and two GEMM sizes");

    // The vector add: its inputs are the manifest's .npy data, `c` starts at zero, the
    // scalar n = 1000 is four little-endian bytes after three pointers.
    let v = &w[0];
    assert_eq!(v["workload"], VECADD);
    let kdir = root().join("traces/kernels/vecadd");
    let a = v["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "a")
        .unwrap();
    assert_eq!(
        std::fs::read(dir.join(a["file"].as_str().unwrap())).unwrap(),
        npy_data(&kdir.join("a.npy"))
    );
    let c = v["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "c")
        .unwrap();
    assert_eq!(
        (c["zeros"].as_bool(), c["bytes"].as_u64()),
        (Some(true), Some(4000))
    );
    let params = v["launches"][0]["params"].as_array().unwrap();
    let kinds: Vec<String> = params
        .iter()
        .map(|p| {
            format!(
                "{}@{}:{}",
                p.get("pointer").or(p.get("hex")).unwrap(),
                p["offset"],
                p["size"]
            )
        })
        .collect();
    assert_eq!(
        kinds,
        ["\"a\"@0:8", "\"b\"@8:8", "\"c\"@16:8", "\"e8030000\"@24:4"]
    );
    assert_eq!(v["launches"][0]["grid"], serde_json::json!([4, 1, 1]));
    assert_eq!(
        std::fs::read(dir.join(v["checks"][0]["expected"].as_str().unwrap())).unwrap(),
        npy_data(&kdir.join("expected_c.npy"))
    );
    assert_eq!(
        std::fs::read_to_string(dir.join(v["ptx"].as_str().unwrap())).unwrap(),
        std::fs::read_to_string(kdir.join("vecadd.ptx")).unwrap()
    );

    // Tensor maps by value, with the manifest's geometry and the buffer they read.
    let tm = &w[1]["launches"][0]["params"][0]["tensor_map"];
    assert_eq!(tm["buffer"], "A");
    assert_eq!(tm["dtype"], "bf16");
    assert_eq!(tm["dims"], serde_json::json!([320, 512]));
    assert_eq!(tm["strides"], serde_json::json!([640]));
    assert_eq!(tm["box"], serde_json::json!([64, 128]));
    assert_eq!(tm["swizzle"], "128B");
    assert_eq!(w[1]["launches"][0]["shared_bytes"], 196672);

    // GEMM sizes: random inputs drawn on the GPU machine, a NumPy check only up to
    // --verify-up-to (2048 by default), the grid of the size.
    let g = &w[2];
    assert_eq!(g["workload"], format!("gemm:{GEMM}:512x512x512"));
    assert!(g["buffers"][0]["random"].is_object());
    assert_eq!(g["buffers"][0]["bytes"], 512 * 512 * 2);
    assert_eq!(g["checks"][0]["gemm"]["b_layout"], "nk");
    assert_eq!(w[3]["checks"].as_array().unwrap().len(), 0);
    assert_eq!(w[3]["launches"][0]["grid"], serde_json::json!([16, 32, 1]));
    assert_eq!(w[3]["launches"][0]["params"][3]["hex"], "00100000");
}

#[test]
fn export_rejects_bad_input_with_exit_2() {
    let dir = scratch("export-bad");
    let out = dir.to_str().unwrap();
    let r = gpusim(&["export", "--out", out]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("nothing to export"), "{}", r.stderr);
    let r = gpusim(&["export", "--out", out, "--gemm", GEMM, "--sizes", "12x"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--sizes"), "{}", r.stderr);
    // Sizes the spec's constraints rule out name the spec and the size.
    let r = gpusim(&[
        "export",
        "--out",
        out,
        "--gemm",
        GEMM,
        "--sizes",
        "100x100x100",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("gemm.yaml: size 100x100x100"),
        "{}",
        r.stderr
    );
    let r = gpusim(&["export", "--out", out, "traces/no/such.yaml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("cannot read"), "{}", r.stderr);
}

/// Cycles of each launch of `manifest` on the tiny config (`run --stats-json`).
fn simulated_cycles(manifest: &str, dir: &Path, set: &[&str]) -> u64 {
    let stats = dir.join("stats.json");
    let mut args = vec!["run", manifest, "--stats-json", stats.to_str().unwrap()];
    for kv in set {
        args.extend(["--set", kv]);
    }
    let r = gpusim(&args);
    assert_eq!(r.code, 0);
    let s: Value = serde_json::from_str(&std::fs::read_to_string(stats).unwrap()).unwrap();
    s["kernels"][0]["cycles"].as_u64().unwrap()
}

/// The line of `text` that mentions `what`.
fn line_with(text: &str, what: &str) -> String {
    let found = text.lines().find(|l| l.contains(what));
    found
        .unwrap_or_else(|| panic!("no line with {what}:\n{text}"))
        .to_string()
}

const HEADER: &str = "workload,launch,entry,grid,block,cluster,median_us,min_us,max_us,repeats,check,mismatches,sm_clock_mhz,mem_clock_mhz,power_w_mean,power_w_max,power_limit_w,gpu,driver,cuda_driver,timestamp";

#[test]
fn correlate_compares_each_launch_and_summarises() {
    let dir = scratch("compare");
    const MANDEL: &str = "traces/kernels/mandelbrot/mandelbrot.yaml";
    let (vec_cycles, mandel_cycles) = (
        simulated_cycles(VECADD, &dir, &[]),
        simulated_cycles(MANDEL, &dir, &[]),
    );
    // The tiny config runs at 1400 MHz: the GPU is 25 % slower than the model on the vector
    // add and 10 % faster on Mandelbrot (measured at 700 MHz: the model's time there is
    // twice its time at 1400 MHz).
    let us = |cycles: u64| cycles as f64 / 1400.0;
    let csv = format!(
        "{HEADER}\n\
         {VECADD},0,vecadd,4x1x1,256x1x1,,{},0,0,20,pass,0,700,,,,,Test GPU,1,1,t\n\
         traces/kernels/mandelbrot/mandelbrot.yaml,0,mandelbrot,1x1x1,1x1x1,,{},0,0,20,pass,0,700,,,,,Test GPU,1,1,t\n\
         traces/kernels/bitonic_sort/bitonic_sort.yaml,0,bitonic,1x1x1,1x1x1,,,,,,error,,,,,,,Test GPU,1,1,t\n",
        us(vec_cycles) / 0.8,
        us(mandel_cycles) / 1.1,
    );
    let m = dir.join("measured.csv");
    std::fs::write(&m, csv).unwrap();
    let (plot, out) = (dir.join("corr.svg"), dir.join("cmp.csv"));
    let r = gpusim(&[
        "correlate",
        m.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
        "--write-csv",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("(Test GPU)"), "{}", r.stdout);
    assert!(
        r.stdout.contains("1 launch row(s) have no time"),
        "{}",
        r.stdout
    );
    let line = |w: &str| line_with(&r.stdout, w);
    assert!(line(VECADD).contains("-20.0%"), "{}", line(VECADD));
    assert!(
        line("mandelbrot.yaml").contains("+10.0%"),
        "{}",
        line("mandelbrot.yaml")
    );
    assert!(
        r.stdout
            .contains("2 launch(es): mean absolute error 15.0 %, mean error -5.0 %"),
        "{}",
        r.stdout
    );
    assert!(r
        .stdout
        .contains("max |error| 20.0 % (traces/kernels/vecadd/vecadd.yaml launch 0)"));
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("Test GPU"),
        "the chart has its title"
    );
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.starts_with(
        "workload,launch,entry,measured_us,simulated_us,cycles,clock_mhz,error,sampled\n"
    ));
    assert!(
        written.contains(&format!("{VECADD},0,vecadd,")),
        "{written}"
    );
    assert!(
        written.contains(&format!(",{vec_cycles},1400,-0.20000,false")),
        "{written}"
    );

    // At the measured clock (700 MHz) each workload is simulated locked there (its cycles
    // change: the DRAM keeps its own clock) and its cycles converted at 700 MHz.
    let locked = ["clock.fixed_mhz=700"];
    let (vec_700, mandel_700) = (
        simulated_cycles(VECADD, &dir, &locked),
        simulated_cycles(MANDEL, &dir, &locked),
    );
    assert_ne!(vec_700, vec_cycles, "the vector add waits on DRAM");
    let error = |cycles: u64, measured: f64| {
        format!("{:+.1}%", 100.0 * (cycles as f64 / 700.0 / measured - 1.0))
    };
    let r = gpusim(&["correlate", m.to_str().unwrap(), "--at-measured-clock"]);
    assert_eq!(r.code, 0);
    let line = |w: &str| line_with(&r.stdout, w);
    let want = error(vec_700, us(vec_cycles) / 0.8);
    assert!(line(VECADD).contains(&want), "{want}: {}", line(VECADD));
    let want = error(mandel_700, us(mandel_cycles) / 1.1);
    assert!(line(MANDEL).contains(&want), "{want}: {}", line(MANDEL));
}

#[test]
fn correlate_reports_bad_measurements_and_unknown_workloads() {
    let dir = scratch("compare-bad");
    let m = dir.join("bad.csv");
    std::fs::write(&m, "workload,launch\nx,0\n").unwrap();
    let r = gpusim(&["correlate", m.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("bad.csv:1: missing column `median_us`"),
        "{}",
        r.stderr
    );
    std::fs::write(
        &m,
        format!("{HEADER}\n{VECADD},0,vecadd,,,,soon,,,,,,,,,,,,,,\n"),
    )
    .unwrap();
    let r = gpusim(&["correlate", m.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("bad.csv:2: column `median_us`: `soon`"),
        "{}",
        r.stderr
    );

    // A workload that is not there, or a launch it does not have: exit 1, the others compared.
    std::fs::write(
        &m,
        format!(
            "{HEADER}\n{VECADD},0,vecadd,,,,5,,,,,,,,,,,,,,\n\
             traces/none.yaml,0,k,,,,5,,,,,,,,,,,,,,\n\
             {VECADD},3,vecadd,,,,5,,,,,,,,,,,,,,\n"
        ),
    )
    .unwrap();
    // An output the chart cannot take is refused before anything is simulated.
    let r = gpusim(&["correlate", m.to_str().unwrap(), "--plot", "chart.gif"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--plot: chart.gif: the output must end in .png or .svg"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "nothing simulated: {}", r.stdout);
    let r = gpusim(&["correlate", m.to_str().unwrap()]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("traces/none.yaml: "), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("launch 3 — the workload has 1 launch(es)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.contains("2 workload(s) could not be compared"),
        "{}",
        r.stdout
    );
}

/// The measurement script's parts that need no GPU (plan reading, parameter bytes, checks,
/// CSV rows): its unit tests, run with the machine's Python when there is one.
#[test]
fn measure_script_unit_tests_pass() {
    let Ok(out) = Command::new("python3")
        .args([
            "-m",
            "unittest",
            "discover",
            "-s",
            "tools/correlate",
            "-p",
            "test_*.py",
        ])
        .current_dir(root())
        .output()
    else {
        eprintln!("python3 is not installed: tools/correlate's unit tests not run");
        return;
    };
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("OK"), "{text}");
}

/// The two ends of the plan format agree: the script's validator (`measure.load_plan`)
/// accepts what `gpusim export` writes for manifests of every kind of argument (pointers,
/// scalars, tensor maps) and for GEMM sizes.
#[test]
fn exported_plans_pass_the_scripts_validation() {
    let dir = scratch("validate");
    let r = gpusim(&[
        "export",
        "--out",
        dir.to_str().unwrap(),
        VECADD,
        CLUSTER,
        "traces/kernels/histogram/histogram.yaml",
        "--gemm",
        GEMM,
        "--sizes",
        "512x512x512",
    ]);
    assert_eq!(r.code, 0);
    let script = format!(
        "import sys; sys.path.insert(0, 'tools/correlate'); import measure; from pathlib import Path; \
         print(len(measure.load_plan(Path({:?}))['workloads']))",
        dir.to_str().unwrap()
    );
    let Ok(out) = Command::new("python3")
        .args(["-c", &script])
        .current_dir(root())
        .output()
    else {
        eprintln!("python3 is not installed: the plan's validation by the script not run");
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), "4");
}
