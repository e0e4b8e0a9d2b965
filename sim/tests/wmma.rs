//! `wmma.load` / `wmma.store` / `wmma.mma` in the simulator beyond the traces: misaligned and
//! out-of-bounds fragment accesses are faults naming the lane, the instruction and the
//! address (PTX ISA 9.0 §9.7.14.4.2), a local-space generic address is refused, a partial
//! warp is a divergence fault, and `wmma.mma` occupies the tensor unit.

mod common;

use common::temp_dir;

use gpusim::core::fault::FaultKind;
use gpusim::{run_manifest, RunError};
use std::path::{Path, PathBuf};

/// A kernel that loads A (16×16 f16) and C (16×16 f32) from `buf` + `offset` bytes with the
/// optional `stride`, multiplies by B = A's registers, and stores D at `buf` + 2048;
/// launched as one CTA of `threads` with `buf` a 4096-byte f32 buffer.
fn kernel(dir: &Path, offset: i64, stride: &str, threads: u32) -> PathBuf {
    let ptx = format!(
        ".version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 buf)
{{
    .reg .b32 %a<8>;
    .reg .f32 %c<8>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd0, [buf];
    cvta.to.global.u64 %rd1, %rd0;
    wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {{%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}}, [%rd1+{offset}]{stride};
    wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {{%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7}}, [%rd1+1024];
    wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {{%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7}}, {{%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}}, {{%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}}, {{%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7}};
    wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1+2048], {{%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7}};
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
    args: [buf]
buffers:
  buf: {{ dtype: f32, shape: [1024], init: {{ fill: 0.5 }} }}
"
        ),
    )
    .unwrap();
    m
}

fn fault_of(m: &Path) -> gpusim::core::fault::Fault {
    match run_manifest(m, None, &[]) {
        Err(RunError::Fault(f)) => f,
        Err(e) => panic!("expected a fault, got {e}"),
        Ok(_) => panic!("expected a fault, the kernel ran"),
    }
}

#[test]
fn a_full_warp_computes_on_the_tensor_unit() {
    let dir = temp_dir("ok");
    let m = kernel(&dir, 0, "", 32);
    let out = run_manifest(&m, None, &[]).unwrap_or_else(|e| panic!("{e}"));
    let (_, _, _, bytes) = out.buffers.iter().find(|b| b.0 == "buf").unwrap();
    // f32 0.5 (0x3F000000) read as f16 is 0 and 1.75 alternating, the same in every row of A
    // and every column of B (A's registers): D = C (0.5) plus one positive sum everywhere.
    let d: Vec<f32> = bytes[2048..3072]
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert!(d.iter().all(|&v| v == d[0]), "{d:?}");
    assert!(d[0] > 0.5, "{}", d[0]);
    assert!(out.stats.totals.unit_utilisation["tensor"] > 0.0);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_misaligned_base_is_a_located_fault() {
    let dir = temp_dir("mis");
    // the f16 A fragment is 8 registers: 32-byte alignment
    let f = fault_of(&kernel(&dir, 16, "", 32));
    assert_eq!(f.kind, FaultKind::Misaligned, "{f}");
    assert!(
        f.message.contains("misaligned `wmma.load` of lane 0"),
        "{f}"
    );
    assert!(f.message.contains("32-byte fragment"), "{f}");
    let text = f.to_string();
    assert!(text.contains("k.ptx:11") && text.contains("pc 2"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_misaligned_stride_is_a_fault() {
    let dir = temp_dir("stride");
    // stride 24 f16 elements = 48 bytes, not a multiple of 32
    let f = fault_of(&kernel(&dir, 0, ", 24", 32));
    assert_eq!(f.kind, FaultKind::Misaligned, "{f}");
    assert!(f.message.contains("stride 24"), "{f}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn rows_past_the_buffer_are_an_out_of_bounds_fault() {
    let dir = temp_dir("oob");
    // stride 256 f16 elements = 512 bytes per row: row 8 starts at 4096, past the buffer
    let f = fault_of(&kernel(&dir, 0, ", 256", 32));
    assert_eq!(f.kind, FaultKind::OutOfBounds, "{f}");
    assert!(f.message.contains("global load at address"), "{f}");
    assert!(f.message.contains("nearest buffer `buf`"), "{f}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_partial_warp_is_a_divergence_fault() {
    let dir = temp_dir("partial");
    let f = fault_of(&kernel(&dir, 0, "", 16));
    assert_eq!(f.kind, FaultKind::BarrierDivergence, "{f}");
    assert!(f.message.contains("wmma.load.sync"), "{f}");
    let _ = std::fs::remove_dir_all(dir);
}
