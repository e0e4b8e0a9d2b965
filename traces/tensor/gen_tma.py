#!/usr/bin/env python3
"""Inputs, expected outputs and manifests of the TMA / mbarrier traces in traces/tensor/
(the PTX of each NAME/NAME.ptx is hand-written and validated with ptxas -arch=sm_90a; its
header says what it does).

  tma_tile/   X.npy (40x72 float32, random); the kernel tiles X by 16x32 boxes (3x3 CTAs).
              expected_OUT.npy: per tile (row-major tile order) the 16x32 box of X starting at
              (16*ty, 32*tx), zero where it hangs over the edge (TMA's out-of-bound fill);
              expected_Y.npy: X (every in-bound element stored once by the tensor store);
              expected_Z.npy: Z0 + X with Z0 = 1.0 everywhere (the tensor reduce-add).

The expected values never use the simulator. Rerun: python3 traces/tensor/gen_tma.py
"""
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def tma_tile():
    d = HERE / "tma_tile"
    rng = np.random.default_rng(9090)
    rows, cols, br, bc = 40, 72, 16, 32
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    tiles = []
    for ty in range(3):
        for tx in range(3):
            box = np.zeros((br, bc), np.float32)
            part = x[br * ty:br * ty + br, bc * tx:bc * tx + bc]
            box[:part.shape[0], :part.shape[1]] = part
            tiles.append(box)
    out = np.stack(tiles)
    z = (np.ones_like(x) + x).astype(np.float32)
    np.save(d / "X.npy", x.reshape(-1))
    np.save(d / "expected_OUT.npy", out.reshape(-1))
    np.save(d / "expected_Y.npy", x.reshape(-1))
    np.save(d / "expected_Z.npy", z.reshape(-1))
    (d / "tma_tile.yaml").write_text(
        """# tma_tile: TMA tensor load (128B swizzle, out-of-bound zero fill) completing on an
# mbarrier, tensor store and tensor reduce-add (see the .ptx header); inputs and expected
# values from traces/tensor/gen_tma.py.
kernel: tma_tile.ptx
launches:
  - entry: tma_tile
    grid: [3, 3, 1]
    block: [128, 1, 1]
    args:
      - { tensor_map: { buffer: X, dims: [72, 40], box: [32, 16], swizzle: 128B } }
      - { tensor_map: { buffer: Y, dims: [72, 40], box: [32, 16], swizzle: 128B } }
      - { tensor_map: { buffer: Z, dims: [72, 40], box: [32, 16], swizzle: 128B } }
      - OUT
buffers:
  X: { dtype: f32, shape: [2880], init: { npy: X.npy } }
  Y: { dtype: f32, shape: [2880], init: zeros }
  Z: { dtype: f32, shape: [2880], init: { fill: 1.0 } }
  OUT: { dtype: f32, shape: [4608], init: zeros }
checks:
  - { buffer: OUT, npy: expected_OUT.npy }
  - { buffer: Y, npy: expected_Y.npy }
  - { buffer: Z, npy: expected_Z.npy }
"""
    )


if __name__ == "__main__":
    tma_tile()
