//! `wgmma` in the simulator beyond the traces (traces/tensor/wgmma_*): the microbenchmarks on
//! configs/hopper-h100.yaml — the latency of one m64n256k16 (128 cycles, ±5%) and a dense loop
//! of them sustaining ≥ 95% of the tensor peak — the wait holding the warp, the timing-only
//! option leaving D unchanged with identical cycles, and the `.aligned` faults (a warpgroup
//! that diverges, an incomplete warpgroup, a descriptor outside shared memory).

mod common;

use common::temp_dir;

use gpusim::core::fault::FaultKind;
use gpusim::{run_manifest, run_manifest_with, RunError, RunOptions};
use std::path::{Path, PathBuf};

fn hopper() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/hopper-h100.yaml")
}

fn dlist(n: usize) -> String {
    let r: Vec<String> = (0..n).map(|i| format!("%f{i}")).collect();
    format!("{{{}}}", r.join(", "))
}

/// A CTA of `threads` threads; `%rd1` = out (u64 × 8), `%r0` = tid, `%rd8`/`%rd9` the A/B
/// descriptors (128B swizzle, A at 0, B at 16384 of a zeroed 64 KiB shared array), `%f0..%f127`
/// the accumulators (zero); thread 0 stores `%rd2..%rd5` to out[0..4] at the end.
fn kernel(dir: &Path, body: &str, threads: u32) -> PathBuf {
    let ptx = format!(
        ".version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<16>;
  .reg .f32 %f<128>;
  .shared .align 1024 .b8 smem[65536];
  ld.param.u64 %rd1, [out];
  mov.u32 %r0, %tid.x;
  mov.u64 %rd2, 0;
  mov.u64 %rd3, 0;
  mov.u64 %rd4, 0;
  mov.u64 %rd5, 0;
  mov.u64 %rd8, 4611686293305360384;
  mov.u64 %rd9, 4611686293305361408;
{body}
  setp.ne.u32 %p0, %r0, 0;
  @%p0 bra DONE;
  st.global.u64 [%rd1], %rd2;
  st.global.u64 [%rd1+8], %rd3;
  st.global.u64 [%rd1+16], %rd4;
  st.global.u64 [%rd1+24], %rd5;
DONE:
  ret;
}}
"
    );
    std::fs::write(dir.join("k.ptx"), ptx).unwrap();
    std::fs::write(
        dir.join("k.yaml"),
        format!(
            "kernel: k.ptx\nlaunches:\n  - entry: k\n    grid: [1, 1, 1]\n    block: [{threads}, 1, 1]\n    args: [out]\nbuffers:\n  out: {{ dtype: u64, shape: [8], init: zeros }}\n"
        ),
    )
    .unwrap();
    dir.join("k.yaml")
}

fn out_words(o: &gpusim::RunOutput) -> Vec<u64> {
    let (_, _, _, bytes) = o.buffers.iter().find(|b| b.0 == "out").unwrap();
    bytes
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn mma(n: usize, scale_d: &str) -> String {
    format!(
        "  wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 {}, %rd8, %rd9, {scale_d}, 1, 1, 0, 0;\n",
        dlist(n / 2)
    )
}

/// Cycles from a clock read before `wgmma.fence` to one after `wait_group 0`, for one N.
fn latency(n: usize) -> u64 {
    let dir = temp_dir(&format!("lat{n}"));
    let body = format!(
        "  mov.u64 %rd6, %clock64;\n  wgmma.fence.sync.aligned;\n{}  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n  mov.u64 %rd7, %clock64;\n  sub.u64 %rd2, %rd7, %rd6;\n",
        mma(n, "0")
    );
    let o = run_manifest(&kernel(&dir, &body, 128), Some(&hopper()), &[]).unwrap();
    out_words(&o)[0]
}

/// hardware.md §3b: wgmma m64n256k16 latency 128.0 cycles, m64n64k16 32.0 (Jarmusch &
/// Chandrasekaran, IPDPS'26); the model gives each warp's slice N / 2 cycles at 512 FMA/clk.
#[test]
fn latency_matches_the_measurements() {
    let l256 = latency(256);
    assert!((122..=134).contains(&l256), "m64n256k16 latency {l256}");
    let l64 = latency(64);
    assert!((30..=38).contains(&l64), "m64n64k16 latency {l64}");
    eprintln!("wgmma latency: m64n256k16 {l256} cycles, m64n64k16 {l64} cycles");
}

/// A loop of 64 back-to-back m64n256k16 (each committed, the wait at the end) keeps the
/// sub-partitions' tensor units busy: ≥ 95% of 64 × 128 cycles of peak work.
#[test]
fn dense_loop_reaches_the_peak() {
    let dir = temp_dir("loop");
    let body = format!(
        "  mov.u32 %r1, 0;\n  mov.u64 %rd6, %clock64;\n  wgmma.fence.sync.aligned;\nLOOP:\n{}  wgmma.commit_group.sync.aligned;\n  add.u32 %r1, %r1, 1;\n  setp.lt.u32 %p1, %r1, 64;\n  @%p1 bra LOOP;\n  wgmma.wait_group.sync.aligned 0;\n  mov.u64 %rd7, %clock64;\n  sub.u64 %rd2, %rd7, %rd6;\n",
        mma(256, "1")
    );
    let o = run_manifest(&kernel(&dir, &body, 128), Some(&hopper()), &[]).unwrap();
    let cycles = out_words(&o)[0];
    let peak = 64 * 128;
    let eff = peak as f64 / cycles as f64;
    eprintln!(
        "wgmma dense loop: {cycles} cycles for {peak} cycles of peak work ({:.1}%)",
        100.0 * eff
    );
    assert!(
        (0.95..=1.0).contains(&eff),
        "{cycles} cycles: {:.1}% of peak",
        100.0 * eff
    );
}

/// `wait_group 1` waits only for the older group: the clock after it is about one slice after
/// the first wgmma, not two.
#[test]
fn wait_group_keeps_the_newest_groups_in_flight() {
    let dir = temp_dir("wait1");
    let body = format!(
        "  mov.u64 %rd6, %clock64;\n  wgmma.fence.sync.aligned;\n{m}  wgmma.commit_group.sync.aligned;\n{m}  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 1;\n  mov.u64 %rd7, %clock64;\n  sub.u64 %rd2, %rd7, %rd6;\n  wgmma.wait_group.sync.aligned 0;\n  mov.u64 %rd7, %clock64;\n  sub.u64 %rd3, %rd7, %rd6;\n",
        m = mma(128, "1")
    );
    let o = run_manifest(&kernel(&dir, &body, 128), Some(&hopper()), &[]).unwrap();
    let w = out_words(&o);
    assert!(
        (64..=80).contains(&w[0]),
        "wait_group 1 after {} cycles",
        w[0]
    );
    assert!(
        (128..=144).contains(&w[1]),
        "wait_group 0 after {} cycles",
        w[1]
    );
}

/// `--skip-tensor-math`: D keeps its value and every cycle is the same.
#[test]
fn skip_tensor_math_keeps_d_and_timing() {
    let dir = temp_dir("skip");
    // D = 1.0 everywhere, B's first element 1.0: D[0][0] becomes A·B (A is zero) = 0 with
    // scale-d 0, and stays 1.0 when the math is skipped.
    let mut body =
        String::from("  mov.u32 %r2, 15360;\n  st.shared.u16 [smem+16384], %r2;\n  bar.sync 0;\n");
    for i in 0..128 {
        body += &format!("  mov.f32 %f{i}, 0f3F800000;\n");
    }
    body += &format!(
        "  wgmma.fence.sync.aligned;\n{}  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n  mov.b32 %r3, %f0;\n  cvt.u64.u32 %rd3, %r3;\n  mov.u64 %rd2, %clock64;\n",
        mma(256, "0")
    );
    let m = kernel(&dir, &body, 128);
    let run = |skip: bool| {
        let opts = RunOptions {
            skip_tensor_math: skip,
            ..Default::default()
        };
        let o = run_manifest_with(&m, Some(&hopper()), &[], &opts).unwrap();
        (out_words(&o), o.stats.kernels[0].counters.cycles)
    };
    let (full, c_full) = run(false);
    let (skip, c_skip) = run(true);
    assert_eq!(full[1], 0, "D = A·B = 0");
    assert_eq!(skip[1], 0x3F80_0000, "D unchanged");
    assert_eq!((full[0], c_full), (skip[0], c_skip), "identical timing");
}

fn fault_of(body: &str, threads: u32, tag: &str) -> gpusim::core::fault::Fault {
    let dir = temp_dir(tag);
    match run_manifest(&kernel(&dir, body, threads), Some(&hopper()), &[]) {
        Err(RunError::Fault(f)) => f,
        other => panic!("expected a fault, got {:?}", other.map(|o| o.failures)),
    }
}

/// Warps 0–2 run one wgmma, warp 3 another (a different pc): a divergence fault naming both.
#[test]
fn a_diverged_warpgroup_faults() {
    let body = format!(
        "  shr.u32 %r4, %r0, 5;\n  setp.eq.u32 %p2, %r4, 3;\n  wgmma.fence.sync.aligned;\n  @%p2 bra OTHER;\n{}  bra.uni JOIN;\nOTHER:\n{}JOIN:\n  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n",
        mma(64, "0"),
        mma(64, "0")
    );
    let f = fault_of(&body, 128, "diverge");
    assert_eq!(f.kind, FaultKind::BarrierDivergence, "{f}");
    assert!(
        f.to_string().contains("warpgroup 0 diverged: warp 3"),
        "{f}"
    );
}

#[test]
fn an_incomplete_warpgroup_faults() {
    let body = format!("  wgmma.fence.sync.aligned;\n{}", mma(64, "0"));
    let f = fault_of(&body, 64, "partial");
    assert_eq!(f.kind, FaultKind::BarrierDivergence, "{f}");
    assert!(f.to_string().contains("is incomplete"), "{f}");
}

#[test]
fn a_descriptor_outside_shared_memory_faults() {
    // B's start at 0x3FFF0 (bits 0-13 all ones): past the 64 KiB array.
    let body = format!(
        "  or.b64 %rd9, %rd9, 16383;\n  wgmma.fence.sync.aligned;\n{}",
        mma(64, "0")
    );
    let f = fault_of(&body, 128, "oob");
    assert_eq!(f.kind, FaultKind::OutOfBounds, "{f}");
    let s = f.to_string();
    assert!(
        s.contains("shared address 0x3ff") && s.contains("thread (0, 0, 0)"),
        "{f}"
    );
}
