//! `mma.sync` in the simulator beyond the traces: it is a whole-warp instruction (a partial
//! warp faults like a divergent barrier, a warp size other than 32 is a launch fault, a guard
//! false on every lane skips it), it occupies the tensor unit (`unit_utilisation.tensor`), and
//! the scoreboard holds its d registers for the tensor latency.

mod common;

use common::{root, temp_dir};

use gpusim::core::fault::FaultKind;
use gpusim::{run_manifest, RunError};
use std::path::{Path, PathBuf};

/// A kernel that runs one m16n8k16 on constant fragments (A and B all ones, C = 0) under the
/// guard `guard` (or none) and stores d0 of every thread; launched as one CTA of `threads`.
fn kernel(dir: &Path, guard: &str, threads: u32) -> PathBuf {
    let ptx = format!(
        ".version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{{
    .reg .pred %p;
    .reg .b32 %r<2>, %a<4>, %b<2>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<3>;
    mov.u32 %r0, %tid.x;
    setp.eq.u32 %p, %r0, 1000;
    mov.b32 %a0, 0x3C003C00;
    mov.b32 %a1, 0x3C003C00;
    mov.b32 %a2, 0x3C003C00;
    mov.b32 %a3, 0x3C003C00;
    mov.b32 %b0, 0x3C003C00;
    mov.b32 %b1, 0x3C003C00;
    mov.f32 %f0, 0f00000000;
    mov.f32 %f1, 0f00000000;
    mov.f32 %f2, 0f00000000;
    mov.f32 %f3, 0f00000000;
    {guard}mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{%f0, %f1, %f2, %f3}}, {{%a0, %a1, %a2, %a3}}, {{%b0, %b1}}, {{%f0, %f1, %f2, %f3}};
    ld.param.u64 %rd0, [out];
    cvta.to.global.u64 %rd0, %rd0;
    mul.wide.u32 %rd1, %r0, 4;
    add.s64 %rd2, %rd0, %rd1;
    st.global.f32 [%rd2], %f0;
    ret;
}}
"
    );
    std::fs::write(dir.join("k.ptx"), ptx).unwrap();
    let m = dir.join(format!("k_{threads}.yaml"));
    std::fs::write(
        &m,
        format!(
            "kernel: k.ptx
launches:
  - entry: k
    grid: [1, 1, 1]
    block: [{threads}, 1, 1]
    args: [out]
buffers:
  out: {{ dtype: f32, shape: [{threads}], init: {{ fill: 7.0 }} }}
"
        ),
    )
    .unwrap();
    m
}

fn out_values(m: &Path, sets: &[(String, String)]) -> Vec<f32> {
    let out = run_manifest(m, None, sets).unwrap_or_else(|e| panic!("{e}"));
    let (_, _, _, bytes) = out.buffers.iter().find(|b| b.0 == "out").unwrap();
    bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn fault_of(m: &Path, sets: &[(String, String)]) -> gpusim::core::fault::Fault {
    match run_manifest(m, None, sets) {
        Err(RunError::Fault(f)) => f,
        Err(e) => panic!("expected a fault, got {e}"),
        Ok(_) => panic!("expected a fault, the kernel ran"),
    }
}

#[test]
fn full_warps_compute_and_use_the_tensor_unit() {
    let dir = temp_dir("full");
    let m = kernel(&dir, "", 64);
    // every element of D = 16 products 1·1 + 0
    assert!(out_values(&m, &[]).iter().all(|&v| v == 16.0));
    let out = run_manifest(&m, None, &[]).unwrap();
    let util = out.stats.totals.unit_utilisation["tensor"];
    assert!(util > 0.0, "tensor utilisation {util}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_partial_warp_is_a_divergence_fault() {
    let dir = temp_dir("partial");
    // 48 threads: the second warp has 16 lanes
    let f = fault_of(&kernel(&dir, "", 48), &[]);
    assert_eq!(f.kind, FaultKind::BarrierDivergence, "{f}");
    assert!(f.message.contains("lanes 0xffff of a warp"), "{f}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_guard_false_on_every_lane_skips_it() {
    let dir = temp_dir("guard");
    let m = kernel(&dir, "@%p ", 32);
    // %p (tid == 1000) is false everywhere: d0 keeps C's 0
    assert!(out_values(&m, &[]).iter().all(|&v| v == 0.0));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_guard_true_on_some_lanes_is_a_divergence_fault() {
    let dir = temp_dir("someguard");
    let m = kernel(&dir, "@!%p ", 32);
    assert!(out_values(&m, &[]).iter().all(|&v| v == 16.0));
    let text = std::fs::read_to_string(dir.join("k.ptx"))
        .unwrap()
        .replace("%r0, 1000", "%r0, 5");
    std::fs::write(dir.join("k.ptx"), text).unwrap();
    let f = fault_of(&m, &[]);
    assert_eq!(f.kind, FaultKind::BarrierDivergence, "{f}");
    assert!(f.message.contains("0xffffffdf"), "{f}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn warps_other_than_32_lanes_fault() {
    let dir = temp_dir("ws");
    let m = kernel(&dir, "", 32);
    let f = fault_of(&m, &[("sm.warp_size".into(), "16".into())]);
    assert_eq!(f.kind, FaultKind::Launch, "{f}");
    assert!(f.message.contains("32-lane warps"), "{f}");
    let _ = std::fs::remove_dir_all(dir);
}

/// One warp, two dependent mma: the second waits for the first's d registers for the tensor
/// latency, so the kernel takes at least that much longer than with independent ones.
#[test]
fn dependent_mma_waits_for_the_tensor_latency() {
    let trace = root().join("traces/tensor/mma_m16n8k8_f16/mma_m16n8k8_f16.yaml");
    let cycles = |lat: &str| {
        run_manifest(
            &trace,
            None,
            &[("sm.units.tensor.latency".into(), lat.into())],
        )
        .unwrap()
        .stats
        .totals
        .cycles
    };
    // each warp runs two chained mma: the second issues `latency` cycles after the first
    let (c16, c116) = (cycles("16"), cycles("116"));
    assert!(
        c116 >= c16 + 2 * 100,
        "latency 16: {c16} cycles, latency 116: {c116} (both mma of a warp wait for 100 more)"
    );
}
