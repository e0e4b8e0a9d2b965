#!/usr/bin/env python3
"""Inputs, expected outputs and manifests of the ldmatrix / stmatrix / cp.async traces in
traces/tensor/ (the PTX of each NAME/NAME.ptx is hand-written; its header says what it does).

  ldmatrix_roundtrip/   X.npy (4 random 8x8 b16 matrices as 32 rows of 8 uint16);
                        expected_F.npy: every ldmatrix register, from the PTX ISA figure
                        "ldmatrix fragment for one 8x8 matrix" written here in numpy (lane l,
                        g = l // 4, t = l % 4, holds M[g, 2t] | M[g, 2t + 1] << 16, of M.T for
                        .trans); expected_Y.npy: the rows stmatrix writes (X, each matrix
                        transposed, matrices 0 and 1 transposed, matrix 0 transposed)
  cp_async_pipeline/    A.npy (8 tiles of 256 float32); expected_out.npy: the tiles summed
                        element by element in float32, tile 0 first (the kernel's order, so
                        the check is exact)
  gemm_cp_async/        A.npy, B.npy (64x64 f16 as uint16 bits); expected_D.npy: numpy float32
                        matmul of the f16 values (rtol 1e-3 as the other tensor traces)

The expected values never use the simulator. Rerun: python3 traces/tensor/gen_async.py
"""
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def frag(m, trans):
    """The 32 lanes' ldmatrix register for one 8x8 uint16 matrix."""
    if trans:
        m = m.T
    out = np.zeros(32, np.uint32)
    for lane in range(32):
        g, t = lane // 4, lane % 4
        out[lane] = int(m[g, 2 * t]) | int(m[g, 2 * t + 1]) << 16
    return out


def ldmatrix_roundtrip():
    d = HERE / "ldmatrix_roundtrip"
    rng = np.random.default_rng(8808)
    x = rng.integers(0, 1 << 16, size=(32, 8), dtype=np.uint16)
    mats = [x[8 * i:8 * i + 8] for i in range(4)]
    regs = []
    for trans in (False, True):
        for num in (1, 2, 4):
            regs += [frag(mats[i], trans) for i in range(num)]
    f = np.concatenate(regs)
    y = np.concatenate([x] + [m.T for m in mats] + [mats[0].T, mats[1].T, mats[0].T])
    np.save(d / "X.npy", x.reshape(-1))
    np.save(d / "expected_F.npy", f)
    np.save(d / "expected_Y.npy", y.reshape(-1))
    (d / "ldmatrix_roundtrip.yaml").write_text(
        """# ldmatrix_roundtrip: ldmatrix .x1/.x2/.x4 with and without .trans, and stmatrix back
# (see the .ptx header); inputs and expected values from traces/tensor/gen_async.py.
kernel: ldmatrix_roundtrip.ptx
launches:
  - entry: ldmatrix_roundtrip
    grid: [1, 1, 1]
    block: [32, 1, 1]
    args: [X, F, Y]
buffers:
  X: { dtype: u16, shape: [256], init: { npy: X.npy } }
  F: { dtype: u32, shape: [448], init: zeros }
  Y: { dtype: u16, shape: [704], init: zeros }
checks:
  - buffer: F
    npy: expected_F.npy
  - buffer: Y
    npy: expected_Y.npy
"""
    )


def cp_async_pipeline():
    d = HERE / "cp_async_pipeline"
    rng = np.random.default_rng(2508)
    a = rng.uniform(-4, 4, size=(8, 256)).astype(np.float32)
    acc = np.zeros(256, np.float32)
    for tile in a:
        acc = (acc + tile).astype(np.float32)
    np.save(d / "A.npy", a.reshape(-1))
    np.save(d / "expected_out.npy", acc)
    (d / "cp_async_pipeline.yaml").write_text(
        """# cp_async_pipeline: a 2-stage cp.async pipeline summing 8 tiles (see the .ptx header);
# inputs and expected values from traces/tensor/gen_async.py (float32 sums in tile order).
kernel: cp_async_pipeline.ptx
launches:
  - entry: cp_async_pipeline
    grid: [1, 1, 1]
    block: [64, 1, 1]
    args: [A, out]
buffers:
  A: { dtype: f32, shape: [2048], init: { npy: A.npy } }
  out: { dtype: f32, shape: [256], init: zeros }
checks:
  - buffer: out
    npy: expected_out.npy
"""
    )


def gemm_cp_async():
    d = HERE / "gemm_cp_async"
    rng = np.random.default_rng(6464)
    a = rng.uniform(-1, 1, size=(64, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, size=(64, 64)).astype(np.float16)
    dd = a.astype(np.float32) @ b.astype(np.float32)
    np.save(d / "A.npy", a.view(np.uint16).reshape(-1))
    np.save(d / "B.npy", b.view(np.uint16).reshape(-1))
    np.save(d / "expected_D.npy", dd.astype(np.float32).reshape(-1))
    (d / "gemm_cp_async.yaml").write_text(
        """# gemm_cp_async: D = A * B, 64x64x64, f16 inputs, f32 results, through cp.async, ldmatrix
# and mma.sync.m16n8k16 (see the .ptx header); inputs and expected D (numpy float32 matmul of
# the f16 values) from traces/tensor/gen_async.py.
kernel: gemm_cp_async.ptx
launches:
  - entry: gemm_cp_async
    grid: [1, 1, 1]
    block: [128, 1, 1]
    args: [A, B, D]
buffers:
  A: { dtype: u16, shape: [4096], init: { npy: A.npy } }
  B: { dtype: u16, shape: [4096], init: { npy: B.npy } }
  D: { dtype: f32, shape: [4096], init: zeros }
checks:
  - buffer: D
    npy: expected_D.npy
    rtol: 0.001
    atol: 0.0001
"""
    )


if __name__ == "__main__":
    ldmatrix_roundtrip()
    cp_async_pipeline()
    gemm_cp_async()
