#!/usr/bin/env python3
"""Inputs, expected outputs and manifests of the tensor-core traces in traces/tensor/.

Each trace NAME/ has a hand-written NAME.ptx (.target sm_80) in which every warp loads its
A, B and C fragments from global memory with the PTX ISA layout formulas, runs mma.sync and
stores D. This script writes, from fixed seeds:
  NAME/A.npy, B.npy, C.npy   inputs: per warp A (16 x K), B (K x 8, k rows), C (16 x 8),
                             row-major and consecutive; f16/bf16 as uint16 bits, tf32 and f32
                             as float32
  NAME/expected_D.npy        D = A @ B + C (twice A @ B for mma_m16n8k8_f16, which chains two
                             mma), computed in float64 with numpy from the decoded inputs and
                             rounded to float32
  NAME/NAME.yaml             the launch manifest (4 warps: 2 CTAs of 64 threads)
and the int8 GEMM tile mma_m16n8k32_s8/ (A s8, B u8 stored transposed, C/D s32, expected
D = clip(A @ B + C) to the s32 range in int64: exact, checked with atol 0; see INT_TRACE),
and checks each NAME.ptx with `ptxas -arch=sm_80` when ptxas is found (PTXAS=..., the
nvidia-cuda-nvcc-cu12 wheel, or PATH).

The expected values are independent of the simulator: numpy's float64 matrix product of the
whole matrices, not the fragments. Tolerances (rtol 1e-3 for f16/bf16 inputs, 1e-2 for tf32)
leave room for tensor-core rounding, which differs from any fixed summation order.

Rerun: python3 traces/tensor/gen.py   (needs numpy)
"""
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
WARPS = 4
GRID, BLOCK = 2, 64

# name: (input type, K, mma count, seed)
TRACES = {
    "mma_m16n8k16": ("f16", 16, 1, 1601),
    "mma_m16n8k16_bf16": ("bf16", 16, 1, 1602),
    "mma_m16n8k8_tf32": ("tf32", 8, 1, 803),
    "mma_m16n8k8_f16": ("f16", 8, 2, 804),
}


def bf16_bits(x):
    """float32 -> bf16 bits, round to nearest even."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def tf32_round(x):
    """float32 -> the nearest tf32 value (10 mantissa bits), ties away from zero (cvt.rna)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


def inputs(ty, k, rng):
    a = rng.uniform(-2.0, 2.0, size=(WARPS, 16, k)).astype(np.float32)
    b = rng.uniform(-2.0, 2.0, size=(WARPS, k, 8)).astype(np.float32)
    c = rng.uniform(-1.0, 1.0, size=(WARPS, 16, 8)).astype(np.float32)
    if ty == "f16":
        a16, b16 = a.astype(np.float16), b.astype(np.float16)
        return (a16.view(np.uint16), b16.view(np.uint16), c,
                a16.astype(np.float64), b16.astype(np.float64))
    if ty == "bf16":
        ab, bb = bf16_bits(a), bf16_bits(b)
        return (ab, bb, c, bf16_value(ab).astype(np.float64), bf16_value(bb).astype(np.float64))
    at, bt = tf32_round(a), tf32_round(b)
    return at, bt, c, at.astype(np.float64), bt.astype(np.float64)


def manifest(name, ty, k, n_mma):
    store = "u16" if ty in ("f16", "bf16") else "f32"
    tol = ("0.01", "0.001") if ty == "tf32" else ("0.001", "0.0001")
    what = "two chained mma.sync (D = A*B + (A*B + C))" if n_mma == 2 else "one mma.sync (D = A*B + C)"
    return (
        f"# {name}: {WARPS} warps each run {what} with .{ty} inputs, K = {k}; inputs and\n"
        "# expected D from traces/tensor/gen.py (numpy, float64 matrix products).\n"
        f"kernel: {name}.ptx\n"
        "launches:\n"
        f"  - entry: {name}\n"
        f"    grid: [{GRID}, 1, 1]\n"
        f"    block: [{BLOCK}, 1, 1]\n"
        "    args: [A, B, C, D]\n"
        "buffers:\n"
        f"  A: {{ dtype: {store}, shape: [{WARPS * 16 * k}], init: {{ npy: A.npy }} }}\n"
        f"  B: {{ dtype: {store}, shape: [{WARPS * k * 8}], init: {{ npy: B.npy }} }}\n"
        f"  C: {{ dtype: f32, shape: [{WARPS * 128}], init: {{ npy: C.npy }} }}\n"
        f"  D: {{ dtype: f32, shape: [{WARPS * 128}], init: zeros }}\n"
        "checks:\n"
        "  - buffer: D\n"
        "    npy: expected_D.npy\n"
        f"    rtol: {tol[0]}\n"
        f"    atol: {tol[1]}\n"
    )


def find_ptxas():
    if os.environ.get("PTXAS"):
        return os.environ["PTXAS"]
    for site in sys.path:
        hits = glob.glob(os.path.join(site, "nvidia", "cuda_nvcc", "bin", "ptxas"))
        if hits:
            return hits[0]
    return shutil.which("ptxas")


# The int8 GEMM tile: A s8 (16 x 32), B u8 (32 x 8) stored transposed, C and D s32; C has a
# few entries at the ends of the s32 range so that .satfinite clamps some results.
INT_TRACE = ("mma_m16n8k32_s8", 32, 3201)
I32_MIN, I32_MAX = -(2 ** 31), 2 ** 31 - 1


def int_manifest(name, k):
    return (
        f"# {name}: {WARPS} warps each run one mma.sync.aligned.m16n8k32.row.col.satfinite\n"
        "# .s32.s8.u8.s32 (D = clamp(A*B + C) to s32); B is stored transposed (8 x K per warp);\n"
        "# inputs and expected D from traces/tensor/gen.py (numpy int64 matrix products, clipped).\n"
        f"kernel: {name}.ptx\n"
        "launches:\n"
        f"  - entry: {name}\n"
        f"    grid: [{GRID}, 1, 1]\n"
        f"    block: [{BLOCK}, 1, 1]\n"
        "    args: [A, B, C, D]\n"
        "buffers:\n"
        f"  A: {{ dtype: i8, shape: [{WARPS * 16 * k}], init: {{ npy: A.npy }} }}\n"
        f"  B: {{ dtype: u8, shape: [{WARPS * 8 * k}], init: {{ npy: B.npy }} }}\n"
        f"  C: {{ dtype: i32, shape: [{WARPS * 128}], init: {{ npy: C.npy }} }}\n"
        f"  D: {{ dtype: i32, shape: [{WARPS * 128}], init: zeros }}\n"
        "checks:\n"
        "  - buffer: D\n"
        "    npy: expected_D.npy\n"
        "    rtol: 0\n"
        "    atol: 0\n"
    )


def gen_int(ptxas):
    name, k, seed = INT_TRACE
    d = HERE / name
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, size=(WARPS, 16, k), dtype=np.int64)
    b = rng.integers(0, 256, size=(WARPS, k, 8), dtype=np.int64)
    c = rng.integers(-(10 ** 6), 10 ** 6, size=(WARPS, 16, 8), dtype=np.int64)
    c[0, 0, :] = I32_MAX - 5  # pushed over the top by any positive row sum
    c[1, 3, :] = I32_MIN + 5  # and under the bottom by any negative one
    expected = np.clip(a @ b + c, I32_MIN, I32_MAX)
    np.save(d / "A.npy", a.astype(np.int8).reshape(-1))
    np.save(d / "B.npy", b.transpose(0, 2, 1).astype(np.uint8).reshape(-1))
    np.save(d / "C.npy", c.astype(np.int32).reshape(-1))
    np.save(d / "expected_D.npy", expected.astype(np.int32).reshape(-1))
    (d / f"{name}.yaml").write_text(int_manifest(name, k))
    check_ptx(ptxas, d / f"{name}.ptx", name)


def check_ptx(ptxas, path, name):
    if ptxas:
        subprocess.run([ptxas, "-arch=sm_80", str(path), "-o", os.devnull], check=True)
        print(f"{name}: ptxas -arch=sm_80 ok")
    else:
        print(f"{name}: ptxas not found, PTX not validated")


def main():
    ptxas = find_ptxas()
    gen_int(ptxas)
    for name, (ty, k, n_mma, seed) in TRACES.items():
        d = HERE / name
        rng = np.random.default_rng(seed)
        a, b, c, a64, b64 = inputs(ty, k, rng)
        expected = c.astype(np.float64)
        for _ in range(n_mma):
            expected = a64 @ b64 + expected
        np.save(d / "A.npy", a.reshape(-1))
        np.save(d / "B.npy", b.reshape(-1))
        np.save(d / "C.npy", c.reshape(-1))
        np.save(d / "expected_D.npy", expected.astype(np.float32).reshape(-1))
        (d / f"{name}.yaml").write_text(manifest(name, ty, k, n_mma))
        check_ptx(ptxas, d / f"{name}.ptx", name)


if __name__ == "__main__":
    main()
