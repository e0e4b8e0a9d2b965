#!/usr/bin/env python3
"""PTX kernels, inputs, expected outputs and manifests of the m8n8k4 and wmma traces.

Writes, from fixed seeds, into traces/tensor/NAME/: NAME.ptx (.target sm_80, written out by
this script from the templates below and checked with `ptxas -arch=sm_80` when ptxas is found:
PTXAS=..., the nvidia-cuda-nvcc-cu12 wheel, or PATH), the .npy inputs, expected_*.npy and the
manifest NAME.yaml:

  mma_m8n8k4_f32     mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32, 2 warps (8 products)
  mma_m8n8k4_f16     mma.sync.aligned.m8n8k4.col.row.f16.f16.f16.f16, 2 warps
                     (m8n8k4 fragments are defined by PTX ISA 9.0 §9.7.14.5.1: the script
                     scatters whole matrices into per-lane fragment arrays with those formulas,
                     the kernel loads and stores registers, the script gathers D back)
  wmma_f16_rowcol    wmma m16n16k16 .row.col f16 -> f32, 4 warps, from global memory
  wmma_f16_colrow    wmma m16n16k16 .col.row f16 -> f32 with A staged through shared memory,
                     C loaded column-major and D stored row-major with stride 24, 2 warps
  wmma_bf16_m32n8k16 wmma m32n8k16 .row.col bf16 -> f32, 2 warps
  wmma_tf32_m16n16k8 wmma m16n16k8 .row.row tf32 -> f32, 2 warps
  wmma_s8_m8n32k16   wmma m8n32k16 .row.col.s32.s8.s8.s32.satfinite, 2 warps
  wmma_gemm_64       a 64x64x64 f16 GEMM tile (f32 accumulators): 4 warps, each 32x32 of D as
                     2x2 wmma m16n16k16 tiles, looping over K in steps of 16 (stride 64)

Expected values are independent of the simulator: numpy float64 (int64) products of the whole
matrices, rounded to the output type (float32 / float16; int32 clipped for .satfinite).
Tolerances leave room for tensor-core rounding (rtol 1e-3, tf32 1e-2; integers exact).

Rerun: python3 traces/tensor/gen_wmma.py   (needs numpy)
"""
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
HEADER = ".version 7.0\n.target sm_80\n.address_size 64\n\n"


def find_ptxas():
    if os.environ.get("PTXAS"):
        return os.environ["PTXAS"]
    for site in sys.path:
        hits = glob.glob(os.path.join(site, "nvidia", "cuda_nvcc", "bin", "ptxas"))
        if hits:
            return hits[0]
    return shutil.which("ptxas")


def bf16_bits(x):
    """float32 -> bf16 bits, round to nearest even."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def tf32_round(x):
    """float32 -> the nearest tf32 value, ties away from zero (cvt.rna.tf32.f32)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


def regs(prefix, n):
    return "{" + ", ".join(f"%{prefix}{i}" for i in range(n)) + "}"


def manifest(name, what, grid, block, args, buffers, checks):
    lines = [f"# {name}: {what}", "# inputs and expected outputs from traces/tensor/gen_wmma.py (numpy).",
             f"kernel: {name}.ptx", "launches:", f"  - entry: {name}",
             f"    grid: [{grid}, 1, 1]", f"    block: [{block}, 1, 1]",
             f"    args: [{', '.join(args)}]", "buffers:"]
    for b, (dtype, n, init) in buffers.items():
        lines.append(f"  {b}: {{ dtype: {dtype}, shape: [{n}], init: {init} }}")
    lines.append("checks:")
    for b, rtol, atol in checks:
        lines += [f"  - buffer: {b}", f"    npy: expected_{b}.npy", f"    rtol: {rtol}",
                  f"    atol: {atol}"]
    return "\n".join(lines) + "\n"


def params(names):
    return ", ".join(f".param .u64 p{n}" for n in names)


def prologue(names):
    """Loads the pointer parameters into %g<i> (global addresses) and the warp index into %w."""
    s = "    .reg .b32 %t0, %w, %lane;\n    .reg .b64 %g<8>, %o<8>;\n"
    for i, n in enumerate(names):
        s += f"    ld.param.u64 %o{i}, [p{n}];\n    cvta.to.global.u64 %g{i}, %o{i};\n"
    s += "    mov.u32 %t0, %tid.x;\n    shr.u32 %w, %t0, 5;\n    and.b32 %lane, %t0, 31;\n"
    return s


def offset(dst, base, idx, nbytes):
    """dst = base + idx * nbytes (64-bit)."""
    return (f"    mul.wide.u32 %o7, {idx}, {nbytes};\n"
            f"    add.s64 {dst}, {base}, %o7;\n")


# ---------------------------------------------------------------------------------------------
# mma.m8n8k4: fragments per PTX ISA 9.0 §9.7.14.5.1 (quad pair q: lanes 4q..4q+3, 16+4q..).

def m884_a(layout, lane, i):
    h = 4 if lane >= 16 else 0
    return (lane % 4 + h, i) if layout == "row" else (i + h, lane % 4)


def m884_b(layout, lane, i):
    h = 4 if lane >= 16 else 0
    return (lane % 4, i + h) if layout == "row" else (i, lane % 4 + h)


def m884_c(ty, lane, i):
    h = 4 if lane >= 16 else 0
    if ty == "f16":
        return (lane % 4 + h, i)
    return ((lane & 1) + (i & 2) + h, (i & 4) + (lane & 2) + (i & 1))


def gen_m884(ptxas, name, al, bl, dty, cty, seed, warps=2):
    rng = np.random.default_rng(seed)
    q = warps * 4
    a = rng.uniform(-2, 2, (q, 8, 4)).astype(np.float16)
    b = rng.uniform(-2, 2, (q, 4, 8)).astype(np.float16)
    c = rng.uniform(-1, 1, (q, 8, 8)).astype(np.float16 if cty == "f16" else np.float32)
    d = a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)
    np_d = np.float16 if dty == "f16" else np.float32
    fa = np.zeros((warps, 32, 4), np.float16)
    fb = np.zeros((warps, 32, 4), np.float16)
    fc = np.zeros((warps, 32, 8), c.dtype)
    fd = np.zeros((warps, 32, 8), np_d)
    for w in range(warps):
        for lane in range(32):
            qp = w * 4 + (lane % 16) // 4
            for i in range(4):
                fa[w, lane, i] = a[qp][m884_a(al, lane, i)]
                fb[w, lane, i] = b[qp][m884_b(bl, lane, i)]
            for i in range(8):
                fc[w, lane, i] = c[qp][m884_c(cty, lane, i)]
                fd[w, lane, i] = d[qp][m884_c(dty, lane, i)]
    out = HERE / name
    out.mkdir(exist_ok=True)
    np.save(out / "A.npy", fa.reshape(-1))
    np.save(out / "B.npy", fb.reshape(-1))
    np.save(out / "C.npy", fc.reshape(-1))
    np.save(out / "expected_D.npy", fd.reshape(-1))
    nc = 4 if cty == "f16" else 8
    nd = 4 if dty == "f16" else 8
    ct = "b32" if cty == "f16" else "f32"
    dt = "b32" if dty == "f16" else "f32"
    cbytes, dbytes = 16 if cty == "f16" else 32, 16 if dty == "f16" else 32
    body = prologue("ABCD") + f"    .reg .b32 %a<2>, %b<2>;\n    .reg .{ct} %c<{nc}>;\n    .reg .{dt} %d<{nd}>;\n"
    body += offset("%g4", "%g0", "%t0", 8) + "    ld.global.v2.b32 {%a0, %a1}, [%g4];\n"
    body += offset("%g5", "%g1", "%t0", 8) + "    ld.global.v2.b32 {%b0, %b1}, [%g5];\n"
    body += offset("%g6", "%g2", "%t0", cbytes)
    for j in range(0, nc, 4):
        body += f"    ld.global.v4.{ct} {{%c{j}, %c{j+1}, %c{j+2}, %c{j+3}}}, [%g6+{4*j}];\n"
    body += (f"    mma.sync.aligned.m8n8k4.{al}.{bl}.{dty}.f16.f16.{cty}\n"
             f"        {regs('d', nd)}, {{%a0, %a1}}, {{%b0, %b1}}, {regs('c', nc)};\n")
    body += offset("%g6", "%g3", "%t0", dbytes)
    for j in range(0, nd, 4):
        body += f"    st.global.v4.{dt} [%g6+{4*j}], {{%d{j}, %d{j+1}, %d{j+2}, %d{j+3}}};\n"
    ptx = HEADER + f".visible .entry {name}({params('ABCD')})\n{{\n{body}    ret;\n}}\n"
    (out / f"{name}.ptx").write_text(ptx)
    cdt = "f16" if cty == "f16" else "f32"
    ddt = "f16" if dty == "f16" else "f32"
    (out / f"{name}.yaml").write_text(manifest(
        name,
        f"{warps} warps each run mma.sync.aligned.m8n8k4.{al}.{bl}.{dty}.f16.f16.{cty} (4 quad\n"
        "# pairs, D = A*B + C each); A, B, C, D are the lanes' fragments (PTX ISA §9.7.14.5.1);",
        1, 32 * warps, ["A", "B", "C", "D"],
        {"A": ("f16", warps * 128, "{ npy: A.npy }"), "B": ("f16", warps * 128, "{ npy: B.npy }"),
         "C": (cdt, warps * 256, "{ npy: C.npy }"), "D": (ddt, warps * 256, "zeros")},
        [("D", "0.001" if dty == "f32" else "0.002", "0.002")]))
    check_ptx(ptxas, out / f"{name}.ptx", name)


# ---------------------------------------------------------------------------------------------
# wmma: one tile per warp.

SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16),
          "m16n16k8": (16, 16, 8)}
# registers per fragment: (A, B) per multiplicand type and shape, and per accumulator type
AB_REGS = {("f16", s): (8, 8) for s in SHAPES}
AB_REGS.update({("bf16", "m16n16k16"): (4, 4), ("bf16", "m32n8k16"): (8, 2),
                ("bf16", "m8n32k16"): (2, 8), ("tf32", "m16n16k8"): (4, 4),
                ("s8", "m16n16k16"): (2, 2), ("s8", "m32n8k16"): (4, 1), ("s8", "m8n32k16"): (1, 4)})
ACC_REGS = {"f16": 4, "f32": 8, "s32": 8}
REG_TY = {"f16": "b32", "bf16": "b32", "tf32": "b32", "s8": "b32", "f32": "f32", "s32": "s32"}
SIZE = {"f16": 2, "bf16": 2, "tf32": 4, "s8": 1, "f32": 4, "s32": 4}


def store_matrix(m, layout, stride):
    """A 2-d matrix as a flat array in row- or column-major order with `stride`."""
    rows, cols = m.shape
    n = (rows - 1) * stride + cols if layout == "row" else (cols - 1) * stride + rows
    out = np.zeros(n, m.dtype)
    for r in range(rows):
        for c in range(cols):
            out[r * stride + c if layout == "row" else c * stride + r] = m[r, c]
    return out


def wmma_tile(ptxas, name, shape, ab, dty, cty, lay, seed, warps=2, shared_a=False,
              d_stride=None, satfinite=False):
    """lay = (A, B, C, D) layouts."""
    m, n, k = SHAPES[shape]
    rng = np.random.default_rng(seed)
    if ab == "s8":
        a = rng.integers(-128, 128, (warps, m, k)).astype(np.int8)
        b = rng.integers(-128, 128, (warps, k, n)).astype(np.int8)
        c = rng.integers(-10 ** 6, 10 ** 6, (warps, m, n)).astype(np.int32)
        c[0, 0, :] = 2 ** 31 - 100
        c[-1, -1, :] = -(2 ** 31) + 100
        d = a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64)
        d = np.clip(d, -(2 ** 31), 2 ** 31 - 1).astype(np.int32)
        a_st, b_st, dt_np = a, b, np.int32
    else:
        af = rng.uniform(-2, 2, (warps, m, k)).astype(np.float32)
        bf = rng.uniform(-2, 2, (warps, k, n)).astype(np.float32)
        if ab == "f16":
            a_st, b_st = af.astype(np.float16), bf.astype(np.float16)
            a64, b64 = a_st.astype(np.float64), b_st.astype(np.float64)
        elif ab == "bf16":
            a_st, b_st = bf16_bits(af), bf16_bits(bf)
            a64, b64 = bf16_value(a_st).astype(np.float64), bf16_value(b_st).astype(np.float64)
        else:
            a_st, b_st = tf32_round(af), tf32_round(bf)
            a64, b64 = a_st.astype(np.float64), b_st.astype(np.float64)
        c = rng.uniform(-1, 1, (warps, m, n)).astype(np.float16 if cty == "f16" else np.float32)
        d = a64 @ b64 + c.astype(np.float64)
        dt_np = np.float16 if dty == "f16" else np.float32
        d = d.astype(dt_np)
    strides = [k if lay[0] == "row" else m, n if lay[1] == "row" else k,
               n if lay[2] == "row" else m, d_stride or (n if lay[3] == "row" else m)]
    flat = [np.concatenate([store_matrix(x[w], l, s) for w in range(warps)])
            for x, l, s in ((a_st, lay[0], strides[0]), (b_st, lay[1], strides[1]),
                            (c, lay[2], strides[2]))]
    dflat = np.concatenate([store_matrix(d[w], lay[3], strides[3]) for w in range(warps)])
    sizes = [len(x) // warps for x in flat] + [len(dflat) // warps]
    out = HERE / name
    out.mkdir(exist_ok=True)
    for nm, arr in zip("ABC", flat):
        np.save(out / f"{nm}.npy", arr)
    np.save(out / "expected_D.npy", dflat)
    na, nb = AB_REGS[(ab, shape)]
    nc, nd = ACC_REGS[cty], ACC_REGS[dty]
    body = prologue("ABCD")
    body += (f"    .reg .b32 %a<{na}>, %b<{nb}>;\n    .reg .{REG_TY[cty]} %c<{nc}>;\n"
             f"    .reg .{REG_TY[dty]} %d<{nd}>;\n")
    esz = SIZE
    body += offset("%g4", "%g0", "%w", sizes[0] * esz[ab])
    body += offset("%g5", "%g1", "%w", sizes[1] * esz[ab])
    body += offset("%g6", "%g2", "%w", sizes[2] * esz[cty])
    a_space, a_addr = ".global", "%g4"
    if shared_a:
        # Each lane copies 16 bytes of the warp's A into the warp's slot of shared memory.
        abytes = sizes[0] * esz[ab]
        body = body.replace(".reg .b64 %g<8>, %o<8>;", ".reg .b64 %g<8>, %o<8>, %s<3>;")
        body += (f"    .shared .align 32 .b8 sA[{abytes * warps}];\n"
                 "    .reg .b32 %x<4>;\n    .reg .pred %cp;\n"
                 f"    mov.u64 %s0, sA;\n" + offset("%s1", "%s0", "%w", abytes) +
                 f"    setp.lt.u32 %cp, %lane, {abytes // 16};\n"
                 "    mul.wide.u32 %o6, %lane, 16;\n    add.s64 %o5, %g4, %o6;\n"
                 "    add.s64 %s2, %s1, %o6;\n"
                 "    @%cp ld.global.v4.b32 {%x0, %x1, %x2, %x3}, [%o5];\n"
                 "    @%cp st.shared.v4.b32 [%s2], {%x0, %x1, %x2, %x3};\n"
                 "    bar.sync 0;\n")
        a_space, a_addr = ".shared", "%s1"
    body += (f"    wmma.load.a.sync.aligned.{lay[0]}.{shape}{a_space}.{ab} {regs('a', na)}, [{a_addr}];\n"
             f"    wmma.load.b.sync.aligned.{lay[1]}.{shape}.global.{ab} {regs('b', nb)}, [%g5];\n"
             f"    wmma.load.c.sync.aligned.{lay[2]}.{shape}.global.{cty} {regs('c', nc)}, [%g6];\n")
    types = f"{dty}.{cty}" if ab == "f16" else f"{dty}.{ab}.{ab}.{cty}"
    sat = ".satfinite" if satfinite else ""
    body += (f"    wmma.mma.sync.aligned.{lay[0]}.{lay[1]}.{shape}.{types}{sat}\n"
             f"        {regs('d', nd)}, {regs('a', na)}, {regs('b', nb)}, {regs('c', nc)};\n")
    body += offset("%g7", "%g3", "%w", sizes[3] * esz[dty])
    st = f", {d_stride}" if d_stride else ""
    body += f"    wmma.store.d.sync.aligned.{lay[3]}.{shape}.global.{dty} [%g7], {regs('d', nd)}{st};\n"
    ptx = HEADER + f".visible .entry {name}({params('ABCD')})\n{{\n{body}    ret;\n}}\n"
    (out / f"{name}.ptx").write_text(ptx)
    npdt = {"f16": "f16", "bf16": "u16", "tf32": "f32", "s8": "i8", "f32": "f32", "s32": "i32"}
    tol = ("0", "0") if ab == "s8" else (("0.01", "0.001") if ab == "tf32" else ("0.001", "0.0005"))
    (out / f"{name}.yaml").write_text(manifest(
        name,
        f"{warps} warps each run wmma.load a/b/c, wmma.mma.sync.aligned.{lay[0]}.{lay[1]}.{shape}.{types}{sat}\n"
        f"# and wmma.store.d (layouts A {lay[0]}, B {lay[1]}, C {lay[2]}, D {lay[3]}"
        f"{', A through shared memory' if shared_a else ''}{f', D stride {d_stride}' if d_stride else ''});",
        1, 32 * warps, ["A", "B", "C", "D"],
        {"A": (npdt[ab], len(flat[0]), "{ npy: A.npy }"), "B": (npdt[ab], len(flat[1]), "{ npy: B.npy }"),
         "C": (npdt[cty], len(flat[2]), "{ npy: C.npy }"), "D": (npdt[dty], len(dflat), "zeros")},
        [("D",) + tol]))
    check_ptx(ptxas, out / f"{name}.ptx", name)


# ---------------------------------------------------------------------------------------------
# A 64x64x64 GEMM tile: D = A (row-major) * B (row-major) + C, 4 warps of 2x2 16x16 tiles.

def gen_gemm(ptxas, name="wmma_gemm_64", seed=6464):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (64, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, (64, 64)).astype(np.float16)
    c = rng.uniform(-1, 1, (64, 64)).astype(np.float32)
    d = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    out = HERE / name
    out.mkdir(exist_ok=True)
    for nm, arr in (("A", a), ("B", b), ("C", c)):
        np.save(out / f"{nm}.npy", arr.reshape(-1))
    np.save(out / "expected_D.npy", d.reshape(-1))
    body = prologue("ABCD")
    body += ("    .reg .b32 %a<8>, %b<8>, %kk, %wr, %wc;\n    .reg .f32 %acc<32>;\n"
             "    .reg .pred %more;\n    .reg .b64 %pa, %pb, %pc;\n")
    # warp w: rows 32*(w/2).., columns 32*(w%2)..; element offsets row*64 + col
    body += ("    shr.u32 %wr, %w, 1;\n    and.b32 %wc, %w, 1;\n"
             "    mul.lo.u32 %wr, %wr, 2048;\n    mul.lo.u32 %wc, %wc, 32;\n"
             "    add.u32 %kk, %wr, %wc;\n")
    for t in range(4):
        i, j = t // 2, t % 2
        body += (offset("%pc", "%g2", "%kk", 4) +
                 f"    wmma.load.c.sync.aligned.row.m16n16k16.global.f32 "
                 f"{{{', '.join(f'%acc{8*t+r}' for r in range(8))}}}, [%pc+{(16*i*64 + 16*j)*4}], 64;\n")
    body += ("    mov.u32 %kk, 0;\nLOOP:\n" + offset("%pa", "%g0", "%wr", 2) +
             "    mul.wide.u32 %o6, %kk, 2;\n    add.s64 %pa, %pa, %o6;\n" +
             offset("%pb", "%g1", "%wc", 2) +
             "    mul.wide.u32 %o6, %kk, 128;\n    add.s64 %pb, %pb, %o6;\n")
    for t in range(4):
        i, j = t // 2, t % 2
        acc = "{" + ", ".join(f"%acc{8*t+r}" for r in range(8)) + "}"
        body += (f"    wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {regs('a', 8)}, [%pa+{16*i*64*2}], 64;\n"
                 f"    wmma.load.b.sync.aligned.row.m16n16k16.global.f16 {regs('b', 8)}, [%pb+{16*j*2}], 64;\n"
                 f"    wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 {acc}, {regs('a', 8)}, {regs('b', 8)}, {acc};\n")
    body += ("    add.u32 %kk, %kk, 16;\n    setp.lt.u32 %more, %kk, 64;\n    @%more bra LOOP;\n"
             "    add.u32 %kk, %wr, %wc;\n")
    for t in range(4):
        i, j = t // 2, t % 2
        body += (offset("%pc", "%g3", "%kk", 4) +
                 f"    wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%pc+{(16*i*64 + 16*j)*4}], "
                 f"{{{', '.join(f'%acc{8*t+r}' for r in range(8))}}}, 64;\n")
    ptx = HEADER + f".visible .entry {name}({params('ABCD')})\n{{\n{body}    ret;\n}}\n"
    (out / f"{name}.ptx").write_text(ptx)
    (out / f"{name}.yaml").write_text(manifest(
        name,
        "a 64x64x64 f16 GEMM tile, D = A*B + C with f32 accumulators: 4 warps, each\n"
        "# 32x32 of D as 2x2 wmma m16n16k16 tiles (A, B row-major, stride 64), K in steps of 16;",
        1, 128, ["A", "B", "C", "D"],
        {"A": ("f16", 4096, "{ npy: A.npy }"), "B": ("f16", 4096, "{ npy: B.npy }"),
         "C": ("f32", 4096, "{ npy: C.npy }"), "D": ("f32", 4096, "zeros")},
        [("D", "0.001", "0.001")]))
    check_ptx(ptxas, out / f"{name}.ptx", name)


def check_ptx(ptxas, path, name):
    if ptxas:
        subprocess.run([ptxas, "-arch=sm_80", str(path), "-o", os.devnull], check=True)
        print(f"{name}: ptxas -arch=sm_80 ok")
    else:
        print(f"{name}: ptxas not found, PTX not validated")


def main():
    ptxas = find_ptxas()
    gen_m884(ptxas, "mma_m8n8k4_f32", "row", "col", "f32", "f32", 884)
    gen_m884(ptxas, "mma_m8n8k4_f16", "col", "row", "f16", "f16", 885)
    wmma_tile(ptxas, "wmma_f16_rowcol", "m16n16k16", "f16", "f32", "f32",
              ("row", "col", "row", "row"), 1616, warps=4)
    wmma_tile(ptxas, "wmma_f16_colrow", "m16n16k16", "f16", "f32", "f32",
              ("col", "row", "col", "row"), 1617, shared_a=True, d_stride=24)
    wmma_tile(ptxas, "wmma_bf16_m32n8k16", "m32n8k16", "bf16", "f32", "f32",
              ("row", "col", "row", "col"), 3281)
    wmma_tile(ptxas, "wmma_tf32_m16n16k8", "m16n16k8", "tf32", "f32", "f32",
              ("row", "row", "row", "row"), 1688)
    wmma_tile(ptxas, "wmma_s8_m8n32k16", "m8n32k16", "s8", "s32", "s32",
              ("row", "col", "row", "row"), 8321, satfinite=True)
    gen_gemm(ptxas)


if __name__ == "__main__":
    main()
