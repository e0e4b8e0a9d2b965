//! Issue 11 regressions: third-party Hopper kernels (dynamic shared alignment, wgmma/TMA
//! swizzle agreement, tensor maps).

use crate::common::{config_path, root, temp_dir, words};
use gpusim::run_manifest;
use std::path::{Path, PathBuf};

/// A one-launch manifest of `.entry k` (32 threads, one CTA) with `decls` before the entry,
/// the body, the arguments and buffers; returns its path.
fn kernel(dir: &Path, decls: &str, params: &str, body: &str, launch: &str, bufs: &str) -> PathBuf {
    let ptx = format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n{decls}\n.visible .entry k({params})\n{{\n  .reg .pred %p<8>;\n  .reg .b32 %r<32>;\n  .reg .b64 %rd<32>;\n{body}\n  ret;\n}}\n"
    );
    std::fs::write(dir.join("k.ptx"), ptx).unwrap();
    let yaml = format!(
        "kernel: k.ptx\nlaunches:\n  - entry: k\n    grid: [1, 1, 1]\n    block: [32, 1, 1]\n{launch}\nbuffers:\n{bufs}\n"
    );
    std::fs::write(dir.join("k.yaml"), yaml).unwrap();
    dir.join("k.yaml")
}

/// Where the dynamic window starts: after the static `.shared` data, rounded up to the
/// `.extern .shared` declaration's alignment (what ptxas reports: 48 or 80 bytes of static
/// mbarriers under `.align 128` use 128 bytes). Before the fix the window started right
/// after the barriers (48, 80), so the first TMA copy into it faulted as misaligned.
#[test]
fn the_dynamic_shared_window_honours_its_alignment() {
    for (statics, align, want) in [
        (48u32, 128u32, 128u64),
        (80, 128, 128),
        (80, 1024, 1024),
        (80, 16, 80),
        (0, 128, 0),
        (130, 8, 136),
    ] {
        let dir = temp_dir(&format!("dynwin-{statics}-{align}"));
        let decls = if statics == 0 {
            format!(".extern .shared .align {align} .b8 dyn[];")
        } else {
            format!(
                ".shared .align 8 .b8 bars[{statics}];\n.extern .shared .align {align} .b8 dyn[];"
            )
        };
        // The kernel names its barriers (a variable no function of the kernel names is not
        // in its segment, `Module::shared_layout`).
        let names_bars = if statics == 0 {
            ""
        } else {
            "  mov.u32 %r4, bars;\n"
        };
        let body = names_bars.to_string() + "  mov.u32 %r1, dyn;\n  mov.u32 %r2, %total_smem_size;\n  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n  st.global.u32 [%rd1], %r1;\n  st.global.u32 [%rd1+4], %r2;\n  mov.u32 %r3, 7;\n  st.shared.u32 [%r1], %r3;";
        let m = kernel(
            &dir,
            &decls,
            ".param .u64 out",
            &body,
            "    shared_bytes: 256\n    args: [OUT]",
            "  OUT: { dtype: u32, shape: [2], init: zeros }",
        );
        let out = run_manifest(&m, None, &[]).unwrap_or_else(|e| panic!("{statics}/{align}: {e}"));
        let w = words(&out, "OUT")[0];
        assert_eq!(
            w & 0xFFFF_FFFF,
            want,
            "{statics} static bytes, .align {align}"
        );
        assert_eq!(w >> 32, want + 256, "%total_smem_size");
    }
}

/// Static `.shared` variables sit at their `.align` (default: element size × vector width),
/// in declaration order, and the dynamic window after them at its own alignment.
#[test]
fn static_shared_variables_sit_at_their_alignment() {
    let dir = temp_dir("static-align");
    let decls = ".shared .b8 s1[3];\n.shared .align 16 .b8 s2[4];\n.shared .u64 s3;\n.shared .v4 .f32 s4;\n.extern .shared .align 256 .b8 dyn[];";
    let mut body = String::from("  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n");
    for (i, v) in ["s1", "s2", "s3", "s4", "dyn"].iter().enumerate() {
        body += &format!(
            "  mov.u32 %r{i}, {v};\n  st.global.u32 [%rd1+{}], %r{i};\n",
            4 * i
        );
    }
    let m = kernel(
        &dir,
        decls,
        ".param .u64 out",
        &body,
        "    shared_bytes: 16\n    args: [OUT]",
        "  OUT: { dtype: u32, shape: [6], init: zeros }",
    );
    let out = run_manifest(&m, None, &[]).unwrap();
    let got: Vec<u64> = words(&out, "OUT")
        .iter()
        .flat_map(|w| [w & 0xFFFF_FFFF, w >> 32])
        .take(5)
        .collect();
    assert_eq!(got, [0, 16, 24, 32, 256]);
}

/// Issue 14: a module's `.shared` variables were laid out once for the module, so every
/// kernel's CTAs held every kernel's arrays. ptxas gives each kernel its own segment of the
/// variables it and its callees name. Kernel `b` here finds its arrays from offset 0 and fits
/// 40000 bytes of dynamic shared memory on the tiny config (48 KiB per SM), which it did not
/// while kernel `a`'s 40000-byte array was charged to it too.
#[test]
fn a_kernel_holds_only_its_own_shared_variables() {
    let dir = temp_dir("per-kernel-shared");
    let ptx = r#".version 8.0
.target sm_90a
.address_size 64
.shared .align 4 .b8 big[40000];
.shared .align 8 .b8 small[60];
.shared .align 16 .b8 in_callee[16];
.extern .shared .align 16 .b8 dyn[];
.func (.param .b32 ret) where_callee()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, in_callee;
  st.param.b32 [ret], %r1;
  ret;
}
.visible .entry a(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  mov.u32 %r1, big;
  mov.u32 %r2, 5;
  st.shared.u32 [%r1+39996], %r2;
  ret;
}
.visible .entry b(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, small;
  { .param .b32 r; call (r), where_callee, (); ld.param.b32 %r2, [r]; }
  mov.u32 %r3, dyn;
  mov.u32 %r4, %total_smem_size;
  st.global.u32 [%rd1], %r1;
  st.global.u32 [%rd1+4], %r2;
  st.global.u32 [%rd1+8], %r3;
  st.global.u32 [%rd1+12], %r4;
  mov.u32 %r5, 9;
  st.shared.u32 [%r3+39996], %r5;
  ld.shared.u32 %r6, [%r3+39996];
  st.global.u32 [%rd1+16], %r6;
  ret;
}
"#;
    std::fs::write(dir.join("k.ptx"), ptx).unwrap();
    let yaml = "kernel: k.ptx\nlaunches:\n  - entry: a\n    grid: [2, 1, 1]\n    block: [32, 1, 1]\n    args: [OUT]\n  - entry: b\n    grid: [2, 1, 1]\n    block: [32, 1, 1]\n    shared_bytes: 40000\n    args: [OUT]\nbuffers:\n  OUT: { dtype: u32, shape: [6], init: zeros }\n";
    std::fs::write(dir.join("k.yaml"), yaml).unwrap();
    let out = run_manifest(&dir.join("k.yaml"), Some(&config_path("tiny")), &[]).unwrap();
    let got: Vec<u64> = words(&out, "OUT")
        .iter()
        .flat_map(|w| [w & 0xFFFF_FFFF, w >> 32])
        .take(5)
        .collect();
    // small at 0, the callee's array at 64, the window at 80; 80 + 40000 bytes in all.
    assert_eq!(got, [0, 64, 80, 40080, 9]);
}

/// The third-party warp-specialised GEMM (NVRTC, compute_90a; traces/tensor/gen_ws_nvrtc.py):
/// dynamic window after 48 bytes of mbarriers, TMA into it, wgmma descriptors from the shared
/// address with base offset 0. Before the fix its first TMA copy faulted as misaligned, and
/// with the window padded to 128 the product was wrong (wgmma counted the swizzle rows from
/// the descriptor's start, TMA by the address). The `_bo` variant writes B itself in a
/// pattern anchored at its (not 1024-aligned) buffer and sets the base offset the ISA
/// prescribes. Both verify against NumPy on the H100 config.
#[test]
fn a_third_party_warp_specialised_gemm_runs_and_verifies_on_hopper() {
    let cfg = config_path("hopper-h100");
    for name in ["ws_gemm_nvrtc", "ws_gemm_nvrtc_bo"] {
        let m = root().join(format!("traces/tensor/ws_gemm_nvrtc/{name}.yaml"));
        let out = run_manifest(&m, Some(&cfg), &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(out.failures.is_empty(), "{name}: {:?}", out.failures);
    }
}

/// A rank-3 TMA load whose size-1 outermost dimension has stride 0 (which
/// `cuTensorMapEncodeTiled` accepts: strides need only be multiples of 16 below 2^40), and
/// whose first traversal stride is 2 (which the driver ignores in dimension 0). The box is
/// 16 x 4 x 1 f32 at (0, 0, 0), copied out by one thread.
#[test]
fn tensor_maps_take_what_the_driver_encodes() {
    let body = "
  mov.u32 %r1, tile;
  mov.u32 %r2, bar;
  mov.u32 %r3, %tid.x;
  setp.ne.u32 %p1, %r3, 0;
  @%p1 bra DONE;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  fence.mbarrier_init.release.cluster;
  mov.u64 %rd1, t;
  cvta.param.u64 %rd1, %rd1;
  mov.u32 %r4, 0;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 256;
  cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r4, %r4, %r4}], [%r2];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra WAIT;
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r5, 0;
COPY:
  shl.b32 %r6, %r5, 2;
  add.u32 %r7, %r1, %r6;
  ld.shared.u32 %r8, [%r7];
  cvt.u64.u32 %rd3, %r6;
  add.u64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r8;
  add.u32 %r5, %r5, 1;
  setp.lt.u32 %p3, %r5, 64;
  @%p3 bra COPY;
DONE:";
    let decls = ".shared .align 128 .b8 tile[256];\n.shared .align 8 .b64 bar;";
    let params = ".param .align 64 .b8 t[128], .param .u64 out";
    let bufs = "  X: { dtype: u32, shape: [64], init: { iota: { start: 0 } } }\n  OUT: { dtype: u32, shape: [64], init: zeros }";
    let want: Vec<u64> = (0..64u64).collect();
    for map in [
        "dims: [16, 4, 1], box: [16, 4, 1], strides: [64, 0]",
        "dims: [16, 4, 1], box: [16, 4, 1], strides: [64, 0], element_strides: [2, 1, 1]",
        "dims: [16, 4, 1], box: [16, 4, 1], strides: [64, 256], oob_fill: none",
    ] {
        let dir = temp_dir("tmap-driver");
        let launch = format!("    args: [{{ tensor_map: {{ buffer: X, {map} }} }}, OUT]");
        let m = kernel(&dir, decls, params, body, &launch, bufs);
        let out = run_manifest(&m, None, &[]).unwrap_or_else(|e| panic!("{map}: {e}"));
        let got: Vec<u64> = words(&out, "OUT")
            .iter()
            .flat_map(|w| [w & 0xFFFF_FFFF, w >> 32])
            .collect();
        assert_eq!(got, want, "{map}");
    }
    // What the driver rejects is still an error naming the key path.
    for (map, msg) in [
        (
            "dims: [16, 4, 1], box: [16, 4, 1], strides: [64, 8]",
            "args[0].tensor_map: strides[1] = 8",
        ),
        (
            "dims: [16, 4, 1], box: [16, 4, 1], strides: [64, -16]",
            "args[0].tensor_map.strides",
        ),
        (
            "dims: [16, 4, 0], box: [16, 4, 1]",
            "args[0].tensor_map.dims",
        ),
        (
            "dims: [16, 4, 1], box: [16, 4, 1], element_strides: [9, 1, 1]",
            "element_strides[0] = 9",
        ),
    ] {
        let dir = temp_dir("tmap-driver-bad");
        let launch = format!("    args: [{{ tensor_map: {{ buffer: X, {map} }} }}, OUT]");
        let m = kernel(&dir, decls, params, body, &launch, bufs);
        match run_manifest(&m, None, &[]) {
            Err(e) => assert!(e.to_string().contains(msg), "{map}: {e}"),
            Ok(_) => panic!("{map} was accepted"),
        }
    }
}
