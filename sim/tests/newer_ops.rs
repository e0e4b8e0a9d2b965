//! Simulator behaviour of the sm_70–sm_90 additions that values alone do not show: a
//! `nanosleep` delays its warp by min(t, 32) cycles (and is a no-op for values), `WARP_SZ`
//! follows the configured warp size, and `redux.sync` in a partial warp reduces only the lanes
//! that exist.

mod common;

use common::temp_dir;

use gpusim::run_manifest;
use std::path::{Path, PathBuf};

/// Eight `nanosleep.u32 t` (t a kernel parameter), then every thread stores WARP_SZ and the
/// redux.sync sum of its lane ids over the activemask.
const KERNEL: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 t)
{
    .reg .b32 %r<10>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [t];
    nanosleep.u32 %r1;
    nanosleep.u32 %r1;
    nanosleep.u32 %r1;
    nanosleep.u32 %r1;
    nanosleep.u32 %r1;
    nanosleep.u32 %r1;
    nanosleep.u32 %r1;
    nanosleep.u32 %r1;
    mov.u32 %r2, WARP_SZ;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %laneid;
    activemask.b32 %r5;
    redux.sync.add.u32 %r6, %r4, %r5;
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r3, 8;
    add.s64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r2;
    st.global.u32 [%rd1+4], %r6;
    ret;
}
"#;

/// A manifest for one CTA of `threads` threads with sleep request `t`, checking `expect`
/// (WARP_SZ, redux sum) pairs.
fn manifest(dir: &Path, t: u32, threads: u32, expect: &[u32]) -> PathBuf {
    std::fs::write(dir.join("k.ptx"), KERNEL).unwrap();
    let values: Vec<String> = expect.iter().map(u32::to_string).collect();
    let text = format!(
        "kernel: k.ptx\nlaunches:\n  - entry: k\n    grid: [1, 1, 1]\n    block: [{threads}, 1, 1]\n    args: [out, {t}]\nbuffers:\n  out: {{ dtype: u32, shape: [{}], init: zeros }}\nchecks:\n  - buffer: out\n    values: [{}]\n",
        2 * threads,
        values.join(", ")
    );
    let path = dir.join(format!("k_{t}_{threads}.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// (WARP_SZ, sum of the lane ids of the thread's warp) for each of `threads` threads.
fn expected(threads: u32, warp: u32) -> Vec<u32> {
    (0..threads)
        .flat_map(|g| {
            let first = g / warp * warp;
            let lanes = (threads - first).min(warp);
            [warp, lanes * (lanes - 1) / 2]
        })
        .collect()
}

#[test]
fn nanosleep_delays_the_warp_by_at_most_32_cycles() {
    let dir = temp_dir("sleep");
    let run = |t: u32| {
        let out = run_manifest(&manifest(&dir, t, 32, &expected(32, 32)), None, &[])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(out.failures.is_empty(), "t = {t}: {:?}", out.failures);
        let k = &out.stats.kernels[0];
        (k.counters.cycles, k.counters.stalls["sleeping"])
    };
    let (c0, _) = run(0);
    let (c10, _) = run(10);
    let (c32, _) = run(32);
    let (c1000, stalled) = run(1000);
    // Each of the eight sleeps adds about its length (less what issue overlaps).
    assert!(c10 > c0 && c32 > c10, "{c0} {c10} {c32}");
    assert!(
        (8 * (32 - 4)..=8 * 33).contains(&(c32 - c0)),
        "8 sleeps of 32 cycles added {} cycles",
        c32 - c0
    );
    // Longer requests are capped at NANOSLEEP_CYCLES = 32.
    assert_eq!(c1000, c32);
    assert!(
        stalled >= 8 * (32 - 4),
        "sleeping counts as the sleeping stall state: {stalled}"
    );
}

#[test]
fn warp_sz_is_the_configured_warp_size_and_redux_sees_only_real_lanes() {
    let dir = temp_dir("warpsz");
    // 40 threads: a full warp and a partial one (8 lanes) at size 32; 16 + 16 + 8 at size 16.
    for warp in [32u32, 16] {
        let m = manifest(&dir, 0, 40, &expected(40, warp));
        let sets = [("sm.warp_size".to_string(), warp.to_string())];
        let out = run_manifest(&m, None, &sets).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.failures.is_empty(), "warp {warp}: {:?}", out.failures);
    }
}
