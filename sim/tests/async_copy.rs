//! `cp.async` and `ldmatrix` / `stmatrix` in the simulator beyond the traces: the wait holds
//! the warp for the copy's global read (cycles with `cp.async.wait_group 0` ≥ the DRAM round
//! trip of a first touch, and the bytes are there after it); a read of the destination before
//! the wait sees the old shared value while the copy is in flight and the new one once it has
//! landed (a valid outcome of that race); zero fill; a partial warp's ldmatrix faults like a
//! divergent barrier; a misaligned row address faults.

mod common;

use common::temp_dir;

use gpusim::core::fault::FaultKind;
use gpusim::{run_manifest, RunError};
use std::path::{Path, PathBuf};

/// One CTA of `threads` threads running `body` with `%rd0` = src (u32 buffer of 64), `%rd1` =
/// out (u64 buffer of 4 per thread), `%r0` = tid, `%r3` = the thread's shared word (set to 7
/// first), `%rd3` = src + 4·tid.
fn kernel(dir: &Path, body: &str, threads: u32) -> PathBuf {
    let ptx = format!(
        ".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<12>;
    .shared .align 16 .b32 sh[512];
    mov.u32 %r0, %tid.x;
    ld.param.u64 %rd0, [src];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd0, %rd0;
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r0, 4;
    add.s64 %rd3, %rd0, %rd2;
    mov.u32 %r1, sh;
    shl.b32 %r2, %r0, 2;
    add.u32 %r3, %r1, %r2;
    st.shared.u32 [%r3], 7;
    mul.wide.u32 %rd4, %r0, 32;
    add.s64 %rd5, %rd1, %rd4;
{body}
    ret;
}}
"
    );
    std::fs::write(dir.join("k.ptx"), ptx).unwrap();
    let m = dir.join("k.yaml");
    std::fs::write(
        &m,
        format!(
            "kernel: k.ptx
launches:
  - entry: k
    grid: [1, 1, 1]
    block: [{threads}, 1, 1]
    args: [src, out]
buffers:
  src: {{ dtype: u32, shape: [64], init: {{ iota: {{ start: 100, step: 1 }} }} }}
  out: {{ dtype: u64, shape: [{}], init: zeros }}
",
            threads * 4
        ),
    )
    .unwrap();
    m
}

/// out as u64 words, 4 per thread.
fn run(m: &Path) -> Vec<[u64; 4]> {
    let out = run_manifest(m, None, &[]).unwrap_or_else(|e| panic!("{e}"));
    let (_, _, _, bytes) = out.buffers.iter().find(|b| b.0 == "out").unwrap();
    bytes
        .chunks(32)
        .map(|c| {
            let w = |i: usize| u64::from_le_bytes(c[8 * i..8 * i + 8].try_into().unwrap());
            [w(0), w(1), w(2), w(3)]
        })
        .collect()
}

fn fault_of(m: &Path) -> gpusim::core::fault::Fault {
    match run_manifest(m, None, &[]) {
        Err(RunError::Fault(f)) => f,
        Err(e) => panic!("expected a fault, got {e}"),
        Ok(_) => panic!("expected a fault, the kernel ran"),
    }
}

/// Stores %r4 (read before the wait), %r5 (after), the cycles from before the copy to after
/// the wait, and %r6.
const STORE: &str = "
    cvt.u64.u32 %rd8, %r4;
    st.global.u64 [%rd5], %rd8;
    cvt.u64.u32 %rd8, %r5;
    st.global.u64 [%rd5+8], %rd8;
    sub.s64 %rd8, %rd7, %rd6;
    st.global.u64 [%rd5+16], %rd8;
    cvt.u64.u32 %rd8, %r6;
    st.global.u64 [%rd5+24], %rd8;";

#[test]
fn the_wait_covers_the_global_read_and_an_early_read_sees_the_old_value() {
    let dir = temp_dir("wait");
    let body = format!(
        "    mov.u64 %rd6, %clock64;
    cp.async.ca.shared.global [%r3], [%rd3], 4;
    cp.async.commit_group;
    ld.shared.u32 %r4, [%r3];
    cp.async.wait_group 0;
    mov.u64 %rd7, %clock64;
    ld.shared.u32 %r5, [%r3];
    mov.u32 %r6, 0;{STORE}"
    );
    let out = run(&kernel(&dir, &body, 32));
    // tiny: a first touch misses L1 and L2 (dram.latency 400 round trip)
    for (t, o) in out.iter().enumerate() {
        assert_eq!(o[0], 7, "thread {t} read before the copy landed");
        assert_eq!(o[1], 100 + t as u64, "thread {t} after the wait");
        assert!(
            o[2] >= 400,
            "thread {t}: the wait took only {} cycles",
            o[2]
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn without_the_wait_the_copy_lands_at_its_completion() {
    let dir = temp_dir("nowait");
    // No wait: read at once (old value), then again after ~1300 cycles of sleep (the copy
    // has landed by then: the new value), then the wait costs nothing more.
    let body = format!(
        "    cp.async.cg.shared.global [%r1], [%rd0], 16;
    ld.shared.u32 %r4, [%r1];
    mov.u32 %r7, 0;
SLEEP:
    nanosleep.u32 32;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p0, %r7, 40;
    @%p0 bra SLEEP;
    ld.shared.u32 %r5, [%r1+12];
    mov.u64 %rd6, %clock64;
    cp.async.wait_all;
    mov.u64 %rd7, %clock64;
    ld.shared.u32 %r6, [%r1+4];{STORE}"
    );
    let out = run(&kernel(&dir, &body, 32));
    // All 32 threads copy src[0..4] to sh[0..4]; thread 0's st.shared of 7 went to sh[0].
    for (t, o) in out.iter().enumerate() {
        assert!(o[0] == 7 || o[0] == 0, "thread {t} read {} early", o[0]);
        assert_eq!(o[1], 103, "thread {t}: the copy had landed");
        assert!(
            o[2] < 50,
            "thread {t}: the wait for landed copies took {}",
            o[2]
        );
        assert_eq!(o[3], 101);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn src_size_zero_fills_the_rest() {
    let dir = temp_dir("zfill");
    // 16-byte copies of which the first 4 · (tid % 5) bytes come from src.
    let body = format!(
        "    rem.u32 %r8, %r0, 5;
    shl.b32 %r8, %r8, 2;
    mov.u32 %r9, 0xffffffff;
    st.shared.u32 [%r1+12], %r9;
    bar.sync 0;
    and.b32 %r11, %r0, 3;
    shl.b32 %r10, %r11, 4;
    add.u32 %r10, %r1, %r10;
    setp.lt.u32 %p1, %r0, 4;
    mov.u64 %rd6, 0;
    mov.u64 %rd7, 0;
    @%p1 cp.async.ca.shared.global [%r10], [%rd0], 16, %r8;
    cp.async.wait_all;
    ld.shared.u32 %r4, [%r10];
    ld.shared.u32 %r5, [%r10+4];
    ld.shared.u32 %r6, [%r10+12];{STORE}"
    );
    let out = run(&kernel(&dir, &body, 32));
    for (t, o) in out.iter().enumerate().take(4) {
        let n = 4 * (t as u64 % 5);
        assert_eq!(o[0], if n >= 4 { 100 } else { 0 }, "thread {t}");
        assert_eq!(o[1], if n >= 8 { 101 } else { 0 }, "thread {t}");
        assert_eq!(o[3], if n >= 16 { 103 } else { 0 }, "thread {t}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_partial_warp_ldmatrix_is_a_divergence_fault() {
    let dir = temp_dir("partial");
    let body = "    setp.lt.u32 %p0, %r0, 16;
    and.b32 %r8, %r0, 7;
    shl.b32 %r8, %r8, 4;
    add.u32 %r8, %r1, %r8;
    @%p0 ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r9}, [%r8];";
    let f = fault_of(&kernel(&dir, body, 32));
    assert_eq!(f.kind, FaultKind::BarrierDivergence, "{f}");
    assert!(f.message.contains("lanes 0xffff of a warp"), "{f}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_misaligned_row_address_faults() {
    let dir = temp_dir("misaligned");
    let body = "    and.b32 %r8, %r0, 7;
    shl.b32 %r8, %r8, 4;
    add.u32 %r8, %r1, %r8;
    ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%r9}, [%r8+4];";
    let f = fault_of(&kernel(&dir, body, 32));
    assert_eq!(f.kind, FaultKind::Misaligned, "{f}");
    assert!(f.message.contains("row address"), "{f}");
    let _ = std::fs::remove_dir_all(dir);
}

/// One ldmatrix.x4 (and, with `stmatrix`, one stmatrix.x4) whose 32 rows lie `stride` bytes
/// apart: the shared conflict replays it was charged and the cycles of the launch.
fn matrix_cost(stride: u32, stmatrix: bool) -> (u64, u64) {
    let dir = temp_dir(&format!("banks{stride}{stmatrix}"));
    let mut body = format!(
        "    and.b32 %r8, %r0, 7;
    mul.lo.u32 %r8, %r8, {stride};
    shr.u32 %r9, %r0, 3;
    shl.b32 %r9, %r9, 4;
    add.u32 %r8, %r8, %r9;
    add.u32 %r8, %r1, %r8;
    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r4, %r5, %r6, %r7}}, [%r8];"
    );
    if stmatrix {
        body.push_str(
            "\n    stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%r8], {%r4, %r5, %r6, %r7};",
        );
    }
    let m = kernel(&dir, &body, 32);
    let out = run_manifest(&m, None, &[]).unwrap_or_else(|e| panic!("{e}"));
    let c = &out.stats.totals.memory.counters;
    let _ = std::fs::remove_dir_all(dir);
    (c.shared_replays, out.stats.kernels[0].counters.cycles)
}

#[test]
fn fragment_moves_pay_the_bank_conflicts_of_their_rows() {
    // Rows 16 bytes apart (8 rows of a matrix fill the 32 banks once): the 4 quarter-warp
    // passes of a 16-byte access and no replay. Rows 32 bytes apart: each matrix's 8 rows
    // (256 bytes, of which 128 are read) hit every bank twice, 1 replay per quarter; 64 bytes
    // apart 3; 128 bytes apart (an unswizzled 64-column f16 tile) all 8 rows in the same 4
    // banks: 7 replays per quarter. stmatrix pays the same again.
    let expect = [(16, 0), (32, 4), (64, 12), (128, 28)];
    let mut last = 0;
    for (stride, replays) in expect {
        let (r, cycles) = matrix_cost(stride, false);
        assert_eq!(r, replays, "stride {stride}");
        assert!(cycles >= last, "stride {stride}: {cycles} cycles < {last}");
        last = cycles;
        assert_eq!(matrix_cost(stride, true).0, 2 * replays, "stride {stride}");
    }
}

/// A wait whose guard is false in every lane is a no-op: it does not hold the warp for the
/// copy in flight (under the component memory system its hold check once ignored the guard).
#[test]
fn a_guarded_off_wait_does_not_hold_the_warp() {
    let dir = temp_dir("guarded_wait");
    let body = |guard: &str| {
        format!(
            "    mov.u64 %rd6, %clock64;
    cp.async.ca.shared.global [%r3], [%rd3], 4;
    cp.async.commit_group;
    setp.eq.u32 %p1, %r0, 1000;
    {guard} cp.async.wait_group 0;
    mov.u64 %rd7, %clock64;
    mov.u32 %r4, 0;
    mov.u32 %r5, 0;
    mov.u32 %r6, 0;{STORE}
    cp.async.wait_all;"
        )
    };
    let off = run(&kernel(&dir, &body("@%p1"), 32));
    let on = run(&kernel(&dir, &body(""), 32));
    for (t, (o, w)) in off.iter().zip(&on).enumerate() {
        // tiny: the copy's first touch takes a DRAM round trip (dram.latency 400).
        assert!(
            w[2] >= 400,
            "thread {t}: the real wait took only {} cycles",
            w[2]
        );
        assert!(
            o[2] < 50,
            "thread {t}: the guarded-off wait held the warp {} cycles",
            o[2]
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
