#!/usr/bin/env python3
r"""Generate the inputs and expected outputs of the hand-written PTX traces in traces/isa/.

How to rerun
------------
    pip install numpy                      # the only dependency
    python3 traces/isa/gen.py              # regenerate every trace's .npy files
    python3 traces/isa/gen.py warp_match   # regenerate some traces only

Every input comes from a fixed seed (or a literal table) and every expected output is
computed here, independently of the simulator: with numpy and plain Python integers,
following the PTX ISA's own pseudo-code for each instruction (noted next to each
reference function), and with exact rational arithmetic (fractions.Fraction) for every
rounded floating-point result. Rerunning the script reproduces byte-identical files.
The .ptx and .yaml files are hand-written; this script writes only *.npy files.

Then run a trace with
    cargo build --release -p gpusim
    target/release/gpusim run traces/isa/NAME/NAME.yaml

Validate the PTX (ptxas ships in the nvidia-cuda-nvcc-cu12 wheel, under
site-packages/nvidia/cuda_nvcc/bin) at each file's own .target (sm_70 unless the file says
sm_75, sm_80 or sm_90):
    for f in traces/isa/*/*.ptx; do
      ptxas -arch=$(sed -n 's/^\.target //p' "$f") "$f" -o /dev/null || echo "FAIL $f"; done
"""

import math
import os
import struct
import sys
from fractions import Fraction

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF
WARP = 32


def save(trace, name, arr):
    """Write traces/isa/<trace>/<name>.npy (C order, little endian)."""
    path = os.path.join(HERE, trace, name + ".npy")
    arr = np.ascontiguousarray(arr)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    np.save(path, arr, allow_pickle=False)


def s32(x):
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def s64(x):
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bits_f32(b):
    return struct.unpack("<f", struct.pack("<I", b & M32))[0]


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


# ---------------------------------------------------------------------------------------------
# Exact IEEE rounding of a rational to a binary format (round to nearest even, or toward zero).
# ---------------------------------------------------------------------------------------------

FMT = {
    # name: (exponent bits, fraction bits)
    "f16": (5, 10),
    "bf16": (8, 7),
    "tf32": (8, 10),
    "f32": (8, 23),
    "f64": (11, 52),
}


def round_to_bits(v, fmt, mode="rn"):
    """Round the exact value v (Fraction, or a float inf / signed zero) to `fmt`; return the
    bit pattern. mode: 'rn' nearest even, 'rz' toward zero, 'rm' toward -inf, 'rp' toward +inf.
    Overflow gives inf when the mode rounds away from zero, else the largest finite value.
    A zero result keeps the sign of v (pass a float -0.0 for an exact negative zero)."""
    ebits, fbits = FMT[fmt]
    bias = (1 << (ebits - 1)) - 1
    sign_shift = ebits + fbits
    inf_bits = ((1 << ebits) - 1) << fbits
    max_bits = (((1 << ebits) - 2) << fbits) | ((1 << fbits) - 1)
    if isinstance(v, float):
        if math.isinf(v):
            return ((1 if v < 0 else 0) << sign_shift) | inf_bits
        if v == 0.0:
            return (1 if math.copysign(1.0, v) < 0 else 0) << sign_shift
        v = Fraction(v)
    sign = 1 if v < 0 else 0
    a = -v if sign else v
    if a == 0:
        return sign << sign_shift
    emin = 1 - bias
    # exponent e with 2^e <= a < 2^(e+1)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)                      # subnormals share emin's quantum
    quantum = Fraction(2) ** (e - fbits)
    q = a / quantum                       # significand in units of the quantum
    n = q.numerator // q.denominator
    rem = q - n
    away = {"rn": None, "rz": False, "rm": bool(sign), "rp": not sign}[mode]
    if away is None:
        if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
            n += 1
    elif away and rem > 0:
        n += 1
    if n == (1 << (fbits + 1)):          # carried into the next binade
        n >>= 1
        e += 1
    if e > bias:                          # overflow
        to_inf = True if away is None else away
        return (sign << sign_shift) | (inf_bits if to_inf else max_bits)
    if n < (1 << fbits):                  # subnormal (or zero)
        return (sign << sign_shift) | n
    return (sign << sign_shift) | ((e + bias) << fbits) | (n - (1 << fbits))


def sqrt_exactish(v):
    """sqrt of a positive Fraction: exact when it is rational, else a rational strictly between
    two integers' worth of 2^-400 around the true value (never on a rounding boundary)."""
    n, d = v.numerator, v.denominator
    k = 400
    N = n * d << (2 * k)
    r = math.isqrt(N)
    if r * r == N:
        return Fraction(r, d << k)
    return Fraction(2 * r + 1, d << (k + 1))


def bits_value(b, fmt):
    """Exact value of a finite bit pattern as a Fraction; inf/nan as float."""
    ebits, fbits = FMT[fmt]
    bias = (1 << (ebits - 1)) - 1
    sign = -1 if (b >> (ebits + fbits)) & 1 else 1
    e = (b >> fbits) & ((1 << ebits) - 1)
    f = b & ((1 << fbits) - 1)
    if e == (1 << ebits) - 1:
        return float("nan") if f else sign * float("inf")
    if e == 0:
        return sign * Fraction(f) * Fraction(2) ** (1 - bias - fbits)
    return sign * Fraction((1 << fbits) | f) * Fraction(2) ** (e - bias - fbits)


def is_nan_bits(b, fmt):
    ebits, fbits = FMT[fmt]
    return ((b >> fbits) & ((1 << ebits) - 1)) == (1 << ebits) - 1 and (b & ((1 << fbits) - 1)) != 0


# =============================================================================================
# warp_match
# =============================================================================================

def match_any(vals, members):
    """match.any.sync: for each lane, the mask of member lanes holding the same value."""
    out = {}
    for i in members:
        out[i] = sum(1 << j for j in members if vals[j] == vals[i])
    return out


def match_all(vals, members):
    """match.all.sync: d = membermask if all member values are equal, else 0; p likewise."""
    same = len({vals[j] for j in members}) == 1
    mask = sum(1 << j for j in members)
    return (mask if same else 0), int(same)


def gen_warp_match():
    t = "warp_match"
    n = 80
    rng = np.random.default_rng(1001)
    a32 = rng.integers(0, 4, size=n).astype(np.uint32)
    a64 = np.zeros(n, dtype=np.uint64)
    for tid in range(n):
        w = tid // WARP
        if w == 0:      # equal low words, three different high words
            a64[tid] = (int(rng.integers(0, 3)) << 32) | 0x12345678
        elif w == 1:    # one value for the whole warp
            a64[tid] = 0xAAAABBBBCCCCDDDD
        else:           # equal high words, three different low words
            a64[tid] = (0x77 << 32) | int(rng.integers(0, 3)) * 0x01000001
    save(t, "a32", a32)
    save(t, "a64", a64)

    K = 16
    out = np.full((n, K), 0xDEADBEEF, dtype=np.uint64)
    for w in range(3):
        lanes = [l for l in range(WARP) if w * WARP + l < n]
        tids = [w * WARP + l for l in lanes]
        v32 = {l: int(a32[w * WARP + l]) for l in lanes}
        v64 = {l: int(a64[w * WARP + l]) for l in lanes}
        lo64 = {l: v64[l] & M32 for l in lanes}
        act = sum(1 << l for l in lanes)
        any32 = match_any(v32, lanes)
        all32 = match_all(v32, lanes)
        allw = match_all({l: w for l in lanes}, lanes)
        any64 = match_any(v64, lanes)
        all64 = match_all(v64, lanes)
        alllo = match_all(lo64, lanes)
        uni_w = 1                                         # (warp == 1) is warp-uniform
        odd = {int(v32[l] & 1) for l in lanes}
        uni_odd = int(len(odd) == 1)
        then = [l for l in lanes if l % 3 == 0]
        els = [l for l in lanes if l % 3 != 0]
        then_mask = sum(1 << l for l in then)
        else_mask = sum(1 << l for l in els)
        then_pred = {l: not (l < 12 or w != 0) for l in then}
        then_uni = int(len(set(then_pred.values())) == 1)
        else_any = match_any(v32, els)
        half = [l for l in lanes if l < 16]
        half_any = match_any(v32, half)
        for l, tid in zip(lanes, tids):
            row = out[tid]
            row[0] = act
            row[1] = any32[l]
            row[2], row[3] = all32
            row[4], row[5] = allw
            row[6] = any64[l]
            row[7], row[8] = all64
            row[9] = uni_w
            row[10] = uni_odd
            if l % 3 == 0:
                row[11] = then_mask
                row[12] = then_uni
            else:
                row[11] = else_mask
                row[12] = else_any[l]
            if l < 16:
                row[13] = half_any[l]
            x = tid ^ 1
            row[14] = (3 * int(a32[x]) + x) & M32
            row[15] = alllo[0]
    save(t, "expected_out", out.reshape(-1).astype(np.uint32))


# =============================================================================================
# sfu_approx, tanh_sm75
# =============================================================================================

SUB = float(np.float32(1e-40))          # an f32 subnormal


def pad64(vals, fill_lo, fill_hi, seed):
    """The listed special operands, then seeded uniform values up to 64 elements."""
    rng = np.random.default_rng(seed)
    rest = rng.uniform(fill_lo, fill_hi, size=64 - len(vals))
    return np.concatenate([np.array(vals, dtype=np.float64), rest]).astype(np.float32)


def f32_of(x64):
    with np.errstate(all="ignore"):
        return np.asarray(x64, dtype=np.float64).astype(np.float32)


def gen_sfu_approx():
    t = "sfu_approx"
    inf, nan = float("inf"), float("nan")
    xe = pad64([0.0, -0.0, 1.0, -1.0, 0.5, 10.0, -10.0, 126.0, 127.5, 128.0, -inf, inf, nan,
                -125.0, 3.3219281, 1e-3], -30.0, 30.0, 2001)
    xl = np.concatenate([
        np.array([1.0, 2.0, 0.5, 4.0, 0.75, 1.5, 0.0, -0.0, -1.0, inf, -inf, nan, SUB,
                  1e-30, 1e30, 3.0e38], dtype=np.float64),
        np.exp(np.random.default_rng(2002).uniform(-60.0, 60.0, size=48)),
    ]).astype(np.float32)
    xs = pad64([0.0, -0.0, math.pi / 2, -math.pi / 2, math.pi, -math.pi, math.pi / 6, 1.0,
                -1.0, inf, -inf, nan, 1e-3, 3.0, -3.0, 2.5], -math.pi, math.pi, 2003)
    xr = np.concatenate([
        np.array([1.0, 4.0, 0.25, 2.0, 0.0, -0.0, inf, -1.0, -inf, nan, SUB, 1e-30, 1e30,
                  100.0, 3.0, 1e-3], dtype=np.float64),
        np.exp(np.random.default_rng(2004).uniform(-40.0, 40.0, size=48)),
    ]).astype(np.float32)
    xq = np.concatenate([
        np.array([1.0, 4.0, 0.25, 2.0, 0.0, -0.0, inf, -1.0, -inf, nan, SUB, 1e-30, 1e30,
                  100.0, 3.0, 1e-3], dtype=np.float64),
        np.exp(np.random.default_rng(2005).uniform(-40.0, 40.0, size=48)),
    ]).astype(np.float32)
    for name, arr in [("xe", xe), ("xl", xl), ("xs", xs), ("xr", xr), ("xq", xq)]:
        save(t, name, arr)

    def ftz(x):                           # .ftz: a subnormal input is a sign-preserving zero
        x = np.asarray(x, dtype=np.float32).astype(np.float64)
        tiny = (x != 0) & (np.abs(x) < 2.0 ** -126)
        return np.where(tiny, np.copysign(0.0, x), x)

    with np.errstate(all="ignore"):
        e, l, s, r, q = (a.astype(np.float64) for a in (xe, xl, xs, xr, xq))
        save(t, "expected_ex2", f32_of(np.exp2(e)))
        save(t, "expected_lg2", f32_of(np.log2(l)))
        save(t, "expected_lg2f", f32_of(np.log2(ftz(xl))))
        save(t, "expected_sin", f32_of(np.sin(s)))
        save(t, "expected_cos", f32_of(np.cos(s)))
        # rsqrt(-0) = -inf, rsqrt(+0) = +inf (the PTX ISA's special-value table)
        save(t, "expected_rsq", f32_of(np.where(r == 0, np.copysign(np.inf, r), 1.0 / np.sqrt(r))))
        rf = ftz(xr)
        save(t, "expected_rsqf", f32_of(np.where(rf == 0, np.copysign(np.inf, rf), 1.0 / np.sqrt(rf))))
        save(t, "expected_sqrt", f32_of(np.sqrt(q)))
        save(t, "expected_sqrtf", f32_of(np.sqrt(ftz(xq))))


def gen_tanh_sm75():
    t = "tanh_sm75"
    inf, nan = float("inf"), float("nan")
    x = pad64([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 5.0, -5.0, 10.0, 20.0, -20.0, inf, -inf,
               nan, 1e-3, -1e-3, 1e-20, 0.25, 3.0], -4.0, 4.0, 2101)
    save(t, "x", x)
    with np.errstate(all="ignore"):
        save(t, "expected_y", f32_of(np.tanh(x.astype(np.float64))))


# =============================================================================================
# select_set
# =============================================================================================

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1


def gen_select_set():
    t = "select_set"
    n = 64
    inf, nan = float("inf"), float("nan")
    rng = np.random.default_rng(3001)
    pairs = [(1, 2), (2, 1), (3, 3), (-1, 1), (1, -1), (-5, -5), (INT_MIN, INT_MAX),
             (INT_MAX, INT_MIN), (-1, 0), (0, -1), (0, 0), (INT_MIN, 0), (7, -7)]
    ia = [p[0] for p in pairs] + [int(v) for v in rng.integers(-1000, 1000, n - len(pairs))]
    ib = [p[1] for p in pairs] + [int(v) for v in rng.integers(-1000, 1000, n - len(pairs))]
    ic = [0, -1, 1, INT_MIN, INT_MAX, -2, 2] + [int(v) for v in rng.integers(-50, 50, n - 7)]
    fpairs = [(1.0, 1.0), (1.0, 2.0), (2.0, 1.0), (nan, 1.0), (1.0, nan), (nan, nan),
              (0.0, -0.0), (-0.0, 0.0), (inf, inf), (-inf, inf), (inf, nan), (1.5, 1.5),
              (-2.0, -2.0), (3.0, -3.0)]
    fa = [p[0] for p in fpairs]
    fb = [p[1] for p in fpairs]
    for k in range(n - len(fpairs)):
        x = float(np.float32(rng.uniform(-4, 4)))
        fa.append(x)
        fb.append(x if k % 3 == 0 else float(np.float32(rng.uniform(-4, 4))))
    negnan = float(np.uint32(0xFFC00000).view(np.float32))
    fc = [0.0, -0.0, nan, negnan, -inf, inf, -SUB, SUB, -1.0, 1.0, -1e-30, 1e-30]
    fc += [float(np.float32(v)) for v in rng.uniform(-2, 2, n - len(fc))]
    dpairs = [(1.0, 1.0), (1.0, 2.0), (2.0, 1.0), (nan, 1.0), (1.0, nan), (-0.0, 0.0),
              (-inf, -inf), (1e300, -1e300)]
    da = [p[0] for p in dpairs] + list(rng.uniform(-10, 10, n - len(dpairs)))
    db = [p[1] for p in dpairs] + [x if k % 4 == 0 else float(rng.uniform(-10, 10))
                                   for k, x in enumerate(da[len(dpairs):])]
    save(t, "ia", np.array(ia, dtype=np.int32))
    save(t, "ib", np.array(ib, dtype=np.int32))
    save(t, "ic", np.array(ic, dtype=np.int32))
    fa32 = np.array(fa, dtype=np.float32)
    fb32 = np.array(fb, dtype=np.float32)
    fc32 = np.array(fc, dtype=np.float32)
    save(t, "fa", fa32)
    save(t, "fb", fb32)
    save(t, "fc", fc32)
    da64 = np.array(da, dtype=np.float64)
    db64 = np.array(db, dtype=np.float64)
    save(t, "da", da64)
    save(t, "db", db64)

    ONE = 0x3F800000
    out = np.zeros((n, 12), dtype=np.uint32)
    out64 = np.zeros((n, 2), dtype=np.uint64)
    for i in range(n):
        a, b, c = ia[i], ib[i], ic[i]
        x, y, z = float(fa32[i]), float(fb32[i]), float(fc32[i])
        xb, yb = int(fa32.view(np.uint32)[i]), int(fb32.view(np.uint32)[i])
        zftz = 0.0 if (z != 0 and abs(z) < 2.0 ** -126) else z
        p = (i % 32) % 2 == 1
        out[i, 0] = (a if c >= 0 else b) & M32
        out[i, 1] = xb if c >= 0 else yb
        out[i, 2] = (a if z >= 0 else b) & M32
        out[i, 3] = xb if z >= 0 else yb
        out[i, 4] = (a if zftz >= 0 else b) & M32
        out[i, 5] = M32 if a < b else 0
        out[i, 6] = M32 if (a & M32) < (b & M32) else 0
        out[i, 7] = M32 if (x == y) and p else 0
        out[i, 8] = ONE if (a > b) or (not p) else 0
        neu = (x != y) or math.isnan(x) or math.isnan(y)
        out[i, 9] = M32 if neu != p else 0
        out[i, 10] = ONE if (math.isnan(x) or math.isnan(y)) else 0
        out[i, 11] = M32 if float(da64[i]) <= float(db64[i]) else 0
        dab, dbb = int(da64.view(np.uint64)[i]), int(db64.view(np.uint64)[i])
        out64[i, 0] = dab if a < b else dbb
        out64[i, 1] = dab if c >= 0 else dbb
    save(t, "expected_out", out.reshape(-1))
    save(t, "expected_out64", out64.reshape(-1))


# =============================================================================================
# int_mul
# =============================================================================================

def s16(x):
    x &= 0xFFFF
    return x - (1 << 16) if x >> 15 else x


def sad(a, b, c, bits):
    """sad: d = c + ((a < b) ? b - a : a - b), wrapping at the type width (a, b signed or not
    as passed in)."""
    return (c + (b - a if a < b else a - b)) & ((1 << bits) - 1)


def gen_int_mul():
    t = "int_mul"
    n = 64
    rng = np.random.default_rng(4001)
    U24, S24 = 1 << 24, 1 << 23

    def fill(head, lo, hi, dtype):
        rest = rng.integers(lo, hi, size=n - len(head), dtype=np.int64 if hi <= 1 << 62 else np.uint64)
        return np.array(list(head) + [int(v) for v in rest], dtype=dtype)

    u24a = fill([U24 - 1, 0, 1, 0x800000, U24 - 1, 12345, 0xABCDEF], 0, U24, np.uint32)
    u24b = fill([U24 - 1, 5, 1, 0x800000, 1, 67890, 0xFEDCBA], 0, U24, np.uint32)
    s24a = fill([-S24, -S24, -1, S24 - 1, 0, -12345, 1], -S24, S24, np.int32)
    s24b = fill([-S24, S24 - 1, -1, S24 - 1, -7, 54321, -1], -S24, S24, np.int32)
    ua = fill([M32, 0x80000000, 0, 1, 0x7FFFFFFF, M32, 5, 0x80000000], 0, 1 << 32, np.uint32)
    ub = fill([M32, 0x80000000, 0, M32, 0x7FFFFFFF, 1, 9, 0], 0, 1 << 32, np.uint32)
    # uc: [0] INT_MAX-5 saturates mad24.hi.sat upward (hi = 2^30), [1] INT_MIN+3 downward
    uc = fill([INT_MAX - 5, (INT_MIN + 3) & M32, 0, M32, 0x80000000, 7, 0, 100], 0, 1 << 32, np.uint32)
    ha = fill([0xFFFF, 0x8000, 0, 1, 0x7FFF, 3, 0xFFFF, 0x1234], 0, 1 << 16, np.uint16)
    hb = fill([0xFFFF, 0x7FFF, 0, 0xFFFF, 0x8000, 0, 1, 0x4321], 0, 1 << 16, np.uint16)
    r64 = lambda: int(rng.integers(0, 1 << 63, dtype=np.int64)) * 2 + int(rng.integers(0, 2))
    a64 = np.array([M64, 1 << 63, 0, 1, M64, 0x123456789ABCDEF0, 1 << 63, 3]
                   + [r64() for _ in range(n - 8)], dtype=np.uint64)
    b64 = np.array([M64, 1 << 63, 5, M64, 1, 0xFEDCBA9876543210, 0, 0]
                   + [r64() for _ in range(n - 8)], dtype=np.uint64)
    c64 = np.array([0, M64, 1, 1 << 63, 7, 0, 0, 11] + [r64() for _ in range(n - 8)],
                   dtype=np.uint64)
    for name, arr in [("u24a", u24a), ("u24b", u24b), ("s24a", s24a), ("s24b", s24b),
                      ("ua", ua), ("ub", ub), ("uc", uc), ("ha", ha), ("hb", hb),
                      ("a64", a64), ("b64", b64), ("c64", c64)]:
        save(t, name, arr)

    out = np.zeros((n, 18), dtype=np.uint32)
    out64 = np.zeros((n, 6), dtype=np.uint64)
    for i in range(n):
        a24, b24 = int(u24a[i]), int(u24b[i])
        sa, sb = int(s24a[i]), int(s24b[i])
        a, b, c = int(ua[i]), int(ub[i]), int(uc[i])
        sc = s32(c)
        tu, ts = a24 * b24, sa * sb                    # exact 48-bit products
        out[i, 0] = tu & M32                           # t<31..0>
        out[i, 1] = (tu >> 16) & M32                   # t<47..16>
        out[i, 2] = ts & M32
        out[i, 3] = (ts >> 16) & M32
        out[i, 4] = (tu + c) & M32
        out[i, 5] = ((tu >> 16) + c) & M32
        out[i, 6] = (ts + c) & M32
        out[i, 7] = ((ts >> 16) + c) & M32
        out[i, 8] = min(max(s32(ts >> 16) + sc, INT_MIN), INT_MAX) & M32
        out[i, 9] = (((a * b) >> 32) + c) & M32
        out[i, 10] = (((s32(a) * s32(b)) >> 32) + c) & M32
        out[i, 11] = sad(a, b, c, 32)
        out[i, 12] = sad(s32(a), s32(b), c, 32)
        out[i, 13] = 1 if b == 0 else 0
        h1, h2 = int(ha[i]), int(hb[i])
        out[i, 14] = (h1 * h2 + c) & M32
        out[i, 15] = (s16(h1) * s16(h2) + c) & M32
        out[i, 16] = sad(h1, h2, c & 0xFFFF, 16)
        out[i, 17] = sad(s16(h1), s16(h2), c & 0xFFFF, 16) | ((1 if h2 == 0 else 0) << 16)
        x, y, z = int(a64[i]), int(b64[i]), int(c64[i])
        out64[i, 0] = (s32(a) * s32(b) + z) & M64
        out64[i, 1] = (x * y) >> 64
        out64[i, 2] = (((x * y) >> 64) + z) & M64
        out64[i, 3] = (((s64(x) * s64(y)) >> 64) + z) & M64
        out64[i, 4] = (x * y + z) & M64
        out64[i, 5] = sad(s64(x), s64(y), z, 64) ^ ((1 if y == 0 else 0) << 63)
    save(t, "expected_out", out.reshape(-1))
    save(t, "expected_out64", out64.reshape(-1))


# =============================================================================================
# bitfield_prmt
# =============================================================================================

def field_operands(pos, ln, width):
    """The PTX ISA takes bits 7..0 of pos and len; that holds for 32-bit bfe/bfi on an H100,
    while the 64-bit forms use the whole 32-bit values (measured on an H100:
    docs/correlation/h100-sxm-2026-11-27)."""
    return (pos & 0xFF, ln & 0xFF) if width == 32 else (pos & M32, ln & M32)


def bfe_ref(a, pos, ln, width, signed):
    """PTX ISA bfe pseudo-code (pos, len as field_operands reads them)."""
    msb = width - 1
    pos, ln = field_operands(pos, ln, width)
    sbit = 0 if (not signed or ln == 0) else (a >> min(pos + ln - 1, msb)) & 1
    d = 0
    for i in range(width):
        bit = (a >> (pos + i)) & 1 if (i < ln and pos + i <= msb) else sbit
        d |= bit << i
    return d


def bfi_ref(a, b, pos, ln, width):
    """PTX ISA bfi pseudo-code (pos, len as field_operands reads them)."""
    msb = width - 1
    pos, ln = field_operands(pos, ln, width)
    f = b
    i = 0
    while i < ln and pos + i <= msb:
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        i += 1
    return f


# The PTX ISA's prmt mode table: for c[1:0] = 0..3, the source byte of d.b3, d.b2, d.b1, d.b0.
PRMT_TABLE = {
    "f4e": [(3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)],
    "b4e": [(5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)],
    "rc8": [(0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)],
    "ecl": [(3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)],
    "ecr": [(0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)],
    "rc16": [(1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)],
}


def prmt_ref(a, b, c, mode=None):
    src = ((b & M32) << 32) | (a & M32)
    byte = lambda k: (src >> (8 * k)) & 0xFF
    d = 0
    if mode is None:
        for k in range(4):
            sel = (c >> (4 * k)) & 0xF
            v = byte(sel & 7)
            if sel & 8:
                v = 0xFF if v & 0x80 else 0x00
            d |= v << (8 * k)
    else:
        srcs = PRMT_TABLE[mode][c & 3]           # (b3, b2, b1, b0)
        for k in range(4):
            d |= byte(srcs[3 - k]) << (8 * k)
    return d


def gen_bitfield_prmt():
    t = "bitfield_prmt"
    n = 64
    rng = np.random.default_rng(5001)
    # (a, b, pos, len): the edge cases first, then random fields
    cases = [
        (0xF0F0F0F0, 0x12345678, 4, 8),
        (0x80000000, 0x00000000, 31, 1),
        (0x7FFFFFFF, 0xFFFFFFFF, 28, 8),      # pos+len past bit 31
        (0xF0000000, 0x0F0F0F0F, 28, 8),
        (0xDEADBEEF, 0x11111111, 0, 0),       # len 0
        (0xDEADBEEF, 0x22222222, 40, 5),      # pos past the msb (32-bit), inside 64-bit
        (0x12345678, 0x9ABCDEF0, 0x104, 0x108),  # only bits 7..0 of pos/len count
        (0x12345678, 0x9ABCDEF0, 0, 32),
        (0x92345678, 0x9ABCDEF0, 0, 255),     # len >= width
        (0x89ABCDEF, 0x0, 4, 0),
        (0x000000FF, 0x12345678, 8, 8),
        (0xFFFFFFFF, 0x00000000, 28, 8),
        (0x00000005, 0xFFFFFFFF, 0x104, 0x103),
        (0xFFFFFFFF, 0x00000000, 70, 4),      # pos past the msb of both widths
        (0x0000ABCD, 0x55555555, 60, 8),
        (0x00008000, 0x0, 15, 1),
        (0x12345678, 0x9ABCDEF0, 4, 0x108),   # len >= 256 inside the field: 32-bit reads 8
        (0x12345678, 0x9ABCDEF0, 0x100, 4),   # pos 256: 32-bit reads 0, 64-bit is past the msb
    ]
    a = [c[0] for c in cases]
    b = [c[1] for c in cases]
    pos = [c[2] for c in cases]
    ln = [c[3] for c in cases]
    for _ in range(n - len(cases)):
        a.append(int(rng.integers(0, 1 << 32)))
        b.append(int(rng.integers(0, 1 << 32)))
        pos.append(int(rng.integers(0, 70)))
        ln.append(int(rng.integers(0, 40)))
    a64 = [((x * 0x9E3779B97F4A7C15) ^ (x << 32)) & M64 for x in a]
    a64[1] = 1 << 63
    a64[3] = 0xF000000000000000
    b64 = [((y << 32) | (y ^ 0xA5A5A5A5)) & M64 for y in b]
    ctl = [0x3210, 0x7654, 0x0123, 0x8888, 0xBA98, 0x4C1F, 0xFFFF3210, 0x00000001,
           0x00000002, 0x00000003, 0xFFFFFFFE, 0xF7E6D5C4]
    ctl += [int(v) for v in rng.integers(0, 1 << 32, n - len(ctl))]
    # a few byte values with the sign bit set so that sign replication shows
    save(t, "a", np.array(a, dtype=np.uint32))
    save(t, "b", np.array(b, dtype=np.uint32))
    save(t, "pos", np.array(pos, dtype=np.uint32))
    save(t, "len", np.array(ln, dtype=np.uint32))
    save(t, "a64", np.array(a64, dtype=np.uint64))
    save(t, "b64", np.array(b64, dtype=np.uint64))
    save(t, "c", np.array(ctl, dtype=np.uint32))

    out = np.zeros((n, 12), dtype=np.uint32)
    out64 = np.zeros((n, 3), dtype=np.uint64)
    for i in range(n):
        x, y, p, l, c = a[i], b[i], pos[i], ln[i], ctl[i]
        out[i, 0] = bfe_ref(x, p, l, 32, False)
        out[i, 1] = bfe_ref(x, p, l, 32, True)
        out[i, 2] = bfi_ref(x, y, p, l, 32)
        out[i, 3] = prmt_ref(x, y, c)
        for k, mode in enumerate(["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"]):
            out[i, 4 + k] = prmt_ref(x, y, c, mode)
        out[i, 10] = bfe_ref(x, 28, 8, 32, True)
        out[i, 11] = prmt_ref(x, y, 0xC3A1)
        out64[i, 0] = bfe_ref(a64[i], p, l, 64, False)
        out64[i, 1] = bfe_ref(a64[i], p, l, 64, True)
        out64[i, 2] = bfi_ref(a64[i], b64[i], p, l, 64)
    save(t, "expected_out", out.reshape(-1))
    save(t, "expected_out64", out64.reshape(-1))


# =============================================================================================
# setp_minmax
# =============================================================================================

def fcmp(op, a, b):
    """PTX ISA float comparisons: ordered ones are false on NaN, unordered ones true."""
    un = math.isnan(a) or math.isnan(b)
    base = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}
    if op in base:
        return (not un) and base[op]
    if op in ("equ", "neu", "ltu", "leu", "gtu", "geu"):
        return un or base[op[:2]]
    if op == "num":
        return not un
    if op == "nan":
        return un
    raise ValueError(op)


F_CMPS = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]


def gen_setp_minmax():
    t = "setp_minmax"
    n = 64
    inf, nan = float("inf"), float("nan")
    rng = np.random.default_rng(6001)
    fpairs = [(1.0, 2.0), (2.0, 1.0), (1.0, 1.0), (nan, 1.0), (1.0, nan), (nan, nan),
              (0.0, -0.0), (-0.0, 0.0), (inf, inf), (-inf, inf), (inf, -inf), (inf, nan),
              (-inf, nan), (SUB, 0.0), (-SUB, SUB), (SUB, 2 * SUB), (-SUB, 0.0), (0.0, SUB),
              (-1.0, -1.0), (-2.0, -1.0), (3.0e38, inf), (1e-30, -1e-30)]
    fa = [p[0] for p in fpairs]
    fb = [p[1] for p in fpairs]
    for k in range(n - len(fpairs)):
        x = float(np.float32(rng.uniform(-3, 3)))
        fa.append(x)
        fb.append(x if k % 4 == 0 else float(np.float32(rng.uniform(-3, 3))))
    hpairs = [(0, 0), (0xFFFF, 1), (1, 0xFFFF), (0x8000, 0x7FFF), (0x7FFF, 0x8000),
              (0xFFFF, 0xFFFF), (0, 0xFFFF), (0x8000, 0x8000)]
    ha = [p[0] for p in hpairs] + [int(v) for v in rng.integers(0, 1 << 16, n - len(hpairs))]
    hb = [p[1] for p in hpairs] + [int(v) for v in rng.integers(0, 1 << 16, n - len(hpairs))]
    I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
    lpairs = [(0, 0), (-1, 1), (1, -1), (I64_MIN, I64_MAX), (I64_MAX, I64_MIN), (-1, -1),
              (1 << 40, (1 << 40) + 1), (-(1 << 40), 1 << 40)]
    la = [p[0] for p in lpairs] + [int(v) for v in rng.integers(I64_MIN, I64_MAX, n - len(lpairs))]
    lb = [p[1] for p in lpairs] + [int(v) for v in rng.integers(I64_MIN, I64_MAX, n - len(lpairs))]
    fa32, fb32 = np.array(fa, dtype=np.float32), np.array(fb, dtype=np.float32)
    save(t, "fa", fa32)
    save(t, "fb", fb32)
    save(t, "ha", np.array(ha, dtype=np.uint16))
    save(t, "hb", np.array(hb, dtype=np.uint16))
    save(t, "la", np.array(la, dtype=np.int64))
    save(t, "lb", np.array(lb, dtype=np.int64))

    def ftz(x):
        return math.copysign(0.0, x) if (x != 0 and abs(x) < 2.0 ** -126) else x

    out = np.zeros((n, 8), dtype=np.uint32)
    out64 = np.zeros((n, 2), dtype=np.int64)
    for i in range(n):
        x, y = float(fa32[i]), float(fb32[i])
        c = (i % 32) % 2 == 1
        out[i, 0] = sum(1 << k for k, op in enumerate(F_CMPS) if fcmp(op, x, y))
        out[i, 1] = sum(1 << k for k, op in enumerate(["eq", "lt", "gt"]) if fcmp(op, ftz(x), ftz(y)))
        tl = fcmp("lt", x, y)
        tg = fcmp("gtu", x, y)
        tn = fcmp("num", x, y)
        bits = [tl and c, (not tl) and c, tg != (not c), (not tg) != (not c), tn or c, (not tn) or c]
        out[i, 2] = sum(1 << k for k, v in enumerate(bits) if v)
        a, b = ha[i], hb[i]
        sa, sb = s16(a), s16(b)
        hb_bits = [a == b, a != b, a < b, a <= b, a > b, a >= b, a < b, a <= b, a > b, a >= b,
                   sa < sb, sa > sb]
        out[i, 3] = sum(1 << k for k, v in enumerate(hb_bits) if v)
        p, q = la[i], lb[i]
        pu, qu = p & M64, q & M64
        l_bits = [p == q, p != q, p < q, p <= q, p > q, p >= q, pu < qu, pu > qu]
        out[i, 4] = sum(1 << k for k, v in enumerate(l_bits) if v)
        out[i, 5] = min(a, b) | (max(a, b) << 16)
        out[i, 6] = (min(sa, sb) & 0xFFFF) | ((max(sa, sb) & 0xFFFF) << 16)
        out64[i, 0] = min(p, q)
        out64[i, 1] = max(p, q)
    save(t, "expected_out", out.reshape(-1))
    save(t, "expected_out64", out64.reshape(-1))


# =============================================================================================
# shfl_segments
# =============================================================================================

def shfl_ref(mode, vals, lane, b, c):
    """PTX ISA shfl pseudo-code for one lane; vals = the warp's a operands by lane."""
    bval = b & 0x1F
    cval = c & 0x1F
    mask = (c >> 8) & 0x1F
    max_lane = (lane & mask) | (cval & ~mask & 0x1F)
    min_lane = lane & mask
    if mode == "up":
        j = lane - bval
        p = j >= max_lane
    elif mode == "down":
        j = lane + bval
        p = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bval
        p = j <= max_lane
    else:
        j = min_lane | (bval & ~mask & 0x1F)
        p = j <= max_lane
    if not p:
        j = lane
    return vals[j], int(p)


def gen_shfl_segments():
    t = "shfl_segments"
    n = 64
    a = np.random.default_rng(7001).integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    save(t, "a", a)
    out = np.full((n, 24), 0xDEADBEEF, dtype=np.uint32)
    for w in range(n // WARP):
        vals = [int(a[w * WARP + l]) for l in range(WARP)]
        for l in range(WARP):
            tid = w * WARP + l
            cases = [("up", 3, 0x1800), ("down", 5, 0x101F), ("bfly", 4, 0x181F),
                     ("bfly", 8, 0x181F), ("idx", 2, 0x181F), ("idx", 13, 0x181F),
                     ("down", 2, 0x0F), ("up", 1, 0x04), ("idx", 37, 0x1F), None,
                     ("bfly", 2, 0x1C1F), ("down", l % 3, 0x181F)]
            for k, cs in enumerate(cases):
                if cs is None:
                    if l < 16:
                        d, p = shfl_ref("idx", vals, l, 15 - l, 0x1F)
                    else:
                        continue
                else:
                    d, p = shfl_ref(cs[0], vals, l, cs[1], cs[2])
                out[tid, 2 * k] = d
                out[tid, 2 * k + 1] = p
    save(t, "expected_out", out.reshape(-1))


# =============================================================================================
# half_cvt, bf16_sm80: exact arithmetic on 16-bit floats, rounded once
# =============================================================================================

def fsign(b, fmt):
    ebits, fbits = FMT[fmt]
    return (b >> (ebits + fbits)) & 1


def exact(b, fmt):
    v = bits_value(b, fmt)
    assert not isinstance(v, float), "finite operands only"
    return v


def zero_or(v, neg_zero):
    """v if nonzero, else a signed float zero for round_to_bits."""
    return v if v != 0 else (-0.0 if neg_zero else 0.0)


def add_ref(x, y, fmt):
    """IEEE add, round to nearest even; an exact zero is -0 only if both operands are -0."""
    s = exact(x, fmt) + exact(y, fmt)
    return round_to_bits(zero_or(s, fsign(x, fmt) and fsign(y, fmt) and s == 0), fmt)


def mul_ref(x, y, fmt):
    p = exact(x, fmt) * exact(y, fmt)
    neg = fsign(x, fmt) ^ fsign(y, fmt)
    if p == 0:
        return round_to_bits(-0.0 if neg else 0.0, fmt)
    return round_to_bits(p, fmt)        # an underflow to zero keeps the sign of p


def fma_ref(x, y, z, fmt):
    p = exact(x, fmt) * exact(y, fmt)
    s = p + exact(z, fmt)
    pneg = fsign(x, fmt) ^ fsign(y, fmt)
    if s == 0:
        both_neg_zero = p == 0 and pneg and fsign(z, fmt)
        return round_to_bits(-0.0 if both_neg_zero else 0.0, fmt)
    return round_to_bits(s, fmt)


def f32_exact(x):
    """A float32 input as an exact Fraction or a signed float zero / inf."""
    x = float(np.float32(x))
    if math.isinf(x) or x == 0.0:
        return x
    return Fraction(x)


def f16_bits_of(v):
    return int(np.array([v], dtype=np.float16).view(np.uint16)[0])


def h(v):
    """f16 bit pattern of an exactly representable value."""
    b = round_to_bits(Fraction(v) if v != 0 else float(v), "f16")
    assert bits_value(b, "f16") == v
    return b


def gen_half_cvt():
    t = "half_cvt"
    n = 64
    rng = np.random.default_rng(8001)
    inf, nan = float("inf"), float("nan")
    P = lambda e: 2.0 ** e
    x = [1 + P(-11), 1 + 3 * P(-11), 65504.0, 65519.99, 65520.0, 1e6, -1e6, P(-24), P(-25),
         3 * P(-26), 6.1e-5, -0.0, 0.0, -inf, inf, -1 - P(-11), 0.1, -0.3, 2049.0, 2051.0,
         P(-14), -P(-24) * 1.5, 1e-9]
    x += [float(v) for v in rng.uniform(-100, 100, n - len(x))]
    x32 = np.array(x, dtype=np.float32)
    xr = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.4, 0.49999997, 1e10, 3.4e38, 8388609.0,
          -8388607.5, inf, -inf, 0.0, -0.0, 4194303.5, 2.5000002]
    xr += [float(v) for v in rng.uniform(-50, 50, n - len(xr))]
    xr32 = np.array(xr, dtype=np.float32)
    xs = [nan, inf, -inf, 1e6, -1e6, 1.0, float(np.uint32(0xFFC00001).view(np.float32))]
    xs += [float(v) for v in rng.uniform(-10, 10, n - len(xs))]
    xs32 = np.array(xs, dtype=np.float32)
    iv = [0, 1, 127, 128, 255, 256, 300, -1, -128, -129, INT_MIN, INT_MAX, 0x1FF, -300, 0x180,
          -255, 200, 0x12345680]
    iv += [int(v) for v in rng.integers(-400, 400, n - len(iv))]
    ivs = np.array(iv, dtype=np.int32)

    one_p = 1 + P(-10)
    rows = [  # (h1, h2, h3)
        (1.0, P(-11), 0.0),
        (60000.0, 60000.0, 1.0),
        (P(-14), P(-10), 0.0),
        (P(-14), 0.5, P(-24)),
        (P(-24), 0.5, -P(-24)),
        (-0.0, -0.0, -0.0),
        (-1.0, 1.0, 1.0),
        (1.0, -0.0, -0.0),
        (65504.0, 1.0, 16.0),
        (one_p, one_p, -1.0),
        (one_p, 1 - P(-10), -1.0),
        (1.0 + 3 * P(-10), 1.0, P(-11)),
        (-3.0, 7.0, 21.0),
        (0.1015625, 3.0, -0.3046875),
    ]
    h1 = [h(r[0]) for r in rows]
    h2 = [h(r[1]) for r in rows]
    h3 = [h(r[2]) for r in rows]
    for _ in range(n - len(rows)):
        h1.append(f16_bits_of(rng.uniform(-8, 8)))
        h2.append(f16_bits_of(rng.uniform(-8, 8)))
        h3.append(f16_bits_of(rng.uniform(-8, 8)))
    srows = [(inf, -inf), (nan, 1.0), (inf, 1.0), (-inf, -1.0), (1.0, 2.0), (65504.0, 65504.0),
             (-0.0, 0.0)]
    s1 = [f16_bits_of(r[0]) for r in srows] + [f16_bits_of(v) for v in rng.uniform(-8, 8, n - len(srows))]
    s2 = [f16_bits_of(r[1]) for r in srows] + [f16_bits_of(v) for v in rng.uniform(-8, 8, n - len(srows))]
    for name, arr in [("x", x32), ("xr", xr32), ("xs", xs32), ("iv", ivs),
                      ("h1", np.array(h1, dtype=np.uint16)), ("h2", np.array(h2, dtype=np.uint16)),
                      ("h3", np.array(h3, dtype=np.uint16)), ("s1", np.array(s1, dtype=np.uint16)),
                      ("s2", np.array(s2, dtype=np.uint16))]:
        save(t, name, arr)

    o16 = np.zeros((n, 8), dtype=np.uint16)
    o32 = np.zeros((n, 8), dtype=np.uint32)
    sp = np.zeros((n, 2), dtype=np.float16)
    for i in range(n):
        xv = f32_exact(x32[i])
        o16[i, 0] = round_to_bits(xv, "f16", "rn")
        o16[i, 1] = round_to_bits(xv, "f16", "rz")
        a, b, c = h1[i], h2[i], h3[i]
        o16[i, 2] = add_ref(a, b, "f16")
        o16[i, 3] = mul_ref(a, b, "f16")
        o16[i, 4] = fma_ref(a, b, c, "f16")
        o16[i, 5] = add_ref(a, c, "f16")          # lo: h1 + h3
        o16[i, 6] = add_ref(b, a, "f16")          # hi: h2 + h1
        v = iv[i]
        sat8 = min(max(v, -128), 127)
        o16[i, 7] = sat8 & 0xFFFF                 # sign-extended into the .b16 register
        o32[i, 0] = round_to_bits(zero_or(exact(a, "f16"), fsign(a, "f16")), "f32")
        o32[i, 1] = v & 0xFF                      # cvt.u8.u32: chop, zero-extend
        o32[i, 2] = s32(((v & 0xFF) ^ 0x80) - 0x80) & M32   # cvt.s8.s32: chop, sign-extend
        o32[i, 3] = min(max(v, 0), 255)
        o32[i, 4] = sat8 & M32
        r = float(xr32[i])
        if math.isinf(r):
            o32[i, 5] = f32_bits(r)
        else:
            ri = round(r)                         # Python rounds ties to even
            o32[i, 5] = f32_bits(math.copysign(float(ri), r) if ri == 0 else float(ri))
        o32[i, 6] = mul_ref(a, c, "f16") | (mul_ref(b, a, "f16") << 16)
        o32[i, 7] = fma_ref(a, c, b, "f16") | (fma_ref(b, a, c, "f16") << 16)
        with np.errstate(all="ignore"):
            sp[i, 0] = np.float16(xs32[i])        # numpy float32 -> float16: round to nearest even
        sv1, sv2 = np.uint16(s1[i]).view(np.float16), np.uint16(s2[i]).view(np.float16)
        with np.errstate(all="ignore"):
            sp[i, 1] = np.float16(np.float64(sv1) + np.float64(sv2))   # exact in f64, one rounding
    save(t, "expected_o16", o16.reshape(-1))
    save(t, "expected_o32", o32.reshape(-1))
    save(t, "expected_sp", sp.reshape(-1))



def bf(v):
    """bf16 bit pattern of an exactly representable value."""
    b = round_to_bits(Fraction(v) if v != 0 else float(v), "bf16")
    assert bits_value(b, "bf16") == v
    return b


def minmax_ref(x, y, fmt, want_max):
    """max/min.{f16,bf16}: a NaN operand yields the other operand (both finite here or one NaN)."""
    if is_nan_bits(x, fmt):
        return y
    if is_nan_bits(y, fmt):
        return x
    vx, vy = bits_value(x, fmt), bits_value(y, fmt)
    if want_max:
        return x if vx > vy else y
    return x if vx < vy else y


def gen_bf16_sm80():
    t = "bf16_sm80"
    n = 64
    rng = np.random.default_rng(9001)
    inf, nan = float("inf"), float("nan")
    P = lambda e: 2.0 ** e
    FLT_MAX = float(np.finfo(np.float32).max)
    x = [1 + P(-8), 1 + 3 * P(-8), FLT_MAX, -FLT_MAX, 3.3895e38, 1e-40, -1e-40, P(-133),
         P(-134), 3 * P(-135), -0.0, 0.0, inf, -inf, 1.0, -1 - P(-8), 0.1, 1 + P(-8) + P(-20),
         255.5, 257.0]
    x += [float(v) for v in rng.uniform(-1000, 1000, n - len(x))]
    x32 = np.array(x, dtype=np.float32)
    xs = [nan, inf, -inf, FLT_MAX, -FLT_MAX, float(np.uint32(0xFF800001).view(np.float32))]
    xs += [float(v) for v in rng.uniform(-10, 10, n - len(xs))]
    xs32 = np.array(xs, dtype=np.float32)
    rows = [
        (1.0, P(-8), 1.0),
        (1 + P(-7), 1 + P(-7), -1.0),
        (1 + P(-7), 1 - P(-7), -1.0),
        (P(127), 10.0, 0.0),
        (P(-126), 0.25, 0.0),
        (-0.0, 5.0, -0.0),
        (2.0, 3.0, -6.0),
        (-1.5, 2.5, 0.375),
    ]
    b1 = [bf(r[0]) for r in rows]
    b2 = [bf(r[1]) for r in rows]
    b3 = [bf(r[2]) for r in rows]
    rnd_bf = lambda lo, hi: round_to_bits(Fraction(float(rng.uniform(lo, hi))), "bf16")
    for _ in range(n - len(rows)):
        b1.append(rnd_bf(-8, 8))
        b2.append(rnd_bf(-8, 8))
        b3.append(rnd_bf(-8, 8))
    mrows = [(nan, 1.0), (1.0, nan), (-inf, 3.0), (inf, -inf), (2.0, 2.0), (-1.0, -2.0),
             (65504.0, -65504.0), (P(-24), P(-23))]
    m1 = [f16_bits_of(r[0]) for r in mrows] + [f16_bits_of(v) for v in rng.uniform(-8, 8, n - len(mrows))]
    m2 = [f16_bits_of(r[1]) for r in mrows] + [f16_bits_of(v) for v in rng.uniform(-8, 8, n - len(mrows))]
    for name, arr in [("x", x32), ("xs", xs32), ("b1", np.array(b1, dtype=np.uint16)),
                      ("b2", np.array(b2, dtype=np.uint16)), ("b3", np.array(b3, dtype=np.uint16)),
                      ("m1", np.array(m1, dtype=np.uint16)), ("m2", np.array(m2, dtype=np.uint16))]:
        save(t, name, arr)

    o16 = np.zeros((n, 8), dtype=np.uint16)
    o32 = np.zeros((n, 2), dtype=np.uint32)
    sp = np.zeros(n, dtype=np.float32)
    for i in range(n):
        xv = f32_exact(x32[i])
        rn = round_to_bits(xv, "bf16", "rn")
        o16[i, 0] = rn
        o16[i, 1] = round_to_bits(xv, "bf16", "rz")
        a, b, c = b1[i], b2[i], b3[i]
        o16[i, 2] = fma_ref(a, b, c, "bf16")
        o16[i, 3] = minmax_ref(m1[i], m2[i], "f16", True)
        o16[i, 4] = minmax_ref(m1[i], m2[i], "f16", False)
        o16[i, 5] = minmax_ref(a, b, "bf16", True)
        o16[i, 6] = fma_ref(a, b, c, "bf16")      # lo: b1*b2 + b3
        o16[i, 7] = fma_ref(b, c, a, "bf16")      # hi: b2*b3 + b1
        o32[i, 0] = a << 16                        # bf16 is the upper half of an f32
        o32[i, 1] = rn << 16
        s = float(xs32[i])
        if math.isnan(s):
            sp[i] = np.nan
        else:
            sp[i] = bits_f32(round_to_bits(f32_exact(s), "bf16", "rn") << 16)
    save(t, "expected_o16", o16.reshape(-1))
    save(t, "expected_o32", o32.reshape(-1))
    save(t, "expected_sp", sp)


# =============================================================================================
# mem_spaces
# =============================================================================================

def gen_mem_spaces():
    t = "mem_spaces"
    n = 128
    rng = np.random.default_rng(10001)
    inp = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    in4 = rng.integers(0, 1 << 32, size=4 * n, dtype=np.uint64).astype(np.uint32)
    save(t, "inp", inp)
    save(t, "in4", in4)
    gtab = [1, 2, 3, 0xFFFFFFFF, 0x80000000, 7, 8, 9]      # the initialisers in mem_spaces.ptx
    gsh = [-1, 2, -3, 32767]
    ctab = [10, -20, 30, -40, 50, -60]
    out = np.zeros((n, 18), dtype=np.uint32)
    for g in range(n):
        blk, tt = divmod(g, 64)
        out[g, 0] = gtab[g % 8]
        out[g, 1] = gtab[3]
        out[g, 2] = ctab[g % 6] & M32
        out[g, 3] = ctab[2]
        out[g, 4] = 0x40490FDB
        out[g, 5] = gsh[g % 4] & M32
        out[g, 6] = 1
        out[g, 7] = inp[5]
        out[g, 8] = inp[2]
        out[g, 9] = inp[3]
        out[g, 10] = inp[g]
        out[g, 11] = (3 * int(inp[blk * 64 + (tt ^ 1)])) & M32
        out[g, 12] = (int(inp[blk * 64 + (tt ^ 3)]) + 1) & M32
        out[g, 13] = g * 7
        out[g, 14] = g * 5
        out[g, 15] = gtab[2]
        out[g, 16] = (g ^ 1) + 100
        out[g, 17] = (g ^ 1) + 200
    save(t, "expected_out", out.reshape(-1))
    save(t, "expected_fout", in4.astype(np.float32))        # round to nearest even
    save(t, "expected_seen", np.ones(n, dtype=np.uint32))
    d = f64_bits(-2.25)
    save(t, "expected_back", np.array([n, 99, d & M32, d >> 32], dtype=np.uint32))


# =============================================================================================
# atomics_more
# =============================================================================================

def atom_inc(r, b):
    return 0 if r >= b else r + 1


def atom_dec(r, b):
    return b if (r == 0 or r > b) else r - 1


def gen_atomics_more():
    t = "atomics_more"
    n, blk = 128, 64
    rng = np.random.default_rng(11001)
    v = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    v[3] = 0x80000000            # the most negative s32 and ...
    v[90] = 0xFFFFFFFF           # ... the largest u32
    save(t, "v", v)
    gsum = sum(g + 1 for g in range(n)) & M32
    gmin = min([INT_MAX] + [s32(int(x)) for x in v]) & M32
    gmax = max([0] + [int(x) for x in v])
    gor = 0
    gand = M32
    gxor = 0
    for g in range(n):
        gor |= (1 << (g % 32)) | (0x80000000 if g == 77 else 0)
        gand &= ~(1 << (g % 32)) & M32
        gxor ^= (g * 0x01010101) & M32
    save(t, "expected_gred", np.array([gsum, gmin, gmax, gor, gand, gxor], dtype=np.uint32))
    save(t, "expected_g64", np.array([(5 + sum(g << 33 for g in range(n))) & M64], dtype=np.uint64))
    fsum = Fraction(1, 2) + sum(Fraction(g, 8) - 3 for g in range(n))
    save(t, "expected_fsum", np.array([float(fsum)], dtype=np.float64))

    out = np.zeros((n, 4), dtype=np.uint32)
    res = np.zeros((2, 32), dtype=np.uint32)
    for b in range(2):
        for tt in range(blk):
            g = b * blk + tt
            out[g, 0] = tt
            out[g, 1] = 2 * (tt ^ 1)
            out[g, 2] = 1000 + tt if tt % 2 == 0 else tt
            out[g, 3] = 500 + (tt ^ 1)
        res[b, 0] = sum(b * blk + tt for tt in range(blk))
        # 64 incs / decs with bound 9: the sequence of old values is fixed even though which
        # lane gets which old value is not; only the final value and the histogram are checked
        r, hist = 0, [0] * 10
        for _ in range(blk):
            hist[r] += 1
            r = atom_inc(r, 9)
        res[b, 1] = r
        res[b, 8:18] = hist
        r, hist = 0, [0] * 10
        for _ in range(blk):
            hist[r] += 1
            r = atom_dec(r, 9)
        res[b, 2] = r
        res[b, 18:28] = hist
        res[b, 3] = sum(tt + 1 for tt in range(blk))
        res[b, 4], res[b, 5] = 50, atom_inc(50, 9)
        res[b, 6], res[b, 7] = 50, atom_dec(50, 9)
    save(t, "expected_out", out.reshape(-1))
    save(t, "expected_res", res.reshape(-1))


# =============================================================================================
# barriers
# =============================================================================================

def gen_barriers():
    t = "barriers"
    nb, bs = 2, 128
    out = np.full((nb * bs, 5), 0xDEADBEEF, dtype=np.uint32)
    data = np.zeros(nb * 32, dtype=np.uint32)
    for b in range(nb):
        base = b * bs
        for tt in range(bs):
            g, l, w = base + tt, tt % 32, tt // 32
            out[g, 0] = 3 * (base + (tt + 37) % 128)
            out[g, 1] = 5 * (base + 127 - tt) + 1
            if w < 2:
                out[g, 2] = (base + 63 - tt) + 11
            else:
                out[g, 2] = (base + 64 + ((tt - 64) ^ 5)) + 22
            if w == 1:
                out[g, 3] = 7 * (base + 31 - l)
            elif w == 0:                      # sQ[l] = sP[l] + 1, written by consumer lane 31-l
                out[g, 3] = 7 * (base + l) + 1
            if w == 3:
                out[g, 4] = 9 * (base + 64 + l)
            elif w == 2:
                out[g, 4] = 13 * (base + 96 + l)
        for l in range(32):
            data[b * 32 + l] = 9 * (base + 64 + l)
    save(t, "expected_out", out.reshape(-1))
    save(t, "expected_data", data)


# =============================================================================================
# sregs
# =============================================================================================

def gen_sregs():
    t = "sregs"
    gx, gy, bs = 3, 2, 48
    out = np.zeros((gx * gy * bs, 16), dtype=np.uint32)
    for cy in range(gy):
        for cx in range(gx):
            for tt in range(bs):
                f = (cy * gx + cx) * bs + tt
                l = tt % WARP
                row = out[f]
                row[0] = l
                row[1] = 1 << l
                row[2] = (1 << (l + 1)) - 1
                row[3] = (1 << l) - 1
                row[4] = (M32 << l) & M32
                row[5] = (M32 << (l + 1)) & M32
                row[6], row[7], row[8] = gx, gy, 1
                row[9] = 768
                row[10] = 256 + 768
                row[11] = row[12] = row[13] = row[14] = 1
                row[15] = bs + 1000 * cx + 100000 * cy
    save(t, "expected_out", out.reshape(-1))


# =============================================================================================
# calls_brx
# =============================================================================================

def gen_calls_brx():
    t = "calls_brx"
    n = 128
    rng = np.random.default_rng(12001)
    a = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    b[::7] = rng.integers(1, 100, size=len(b[::7]))   # small divisors
    b[5] = 0
    b[40] = 0
    b[41] = 1
    a[42] = 0xFFFFFFFF
    b[42] = 0xFFFFFFFF
    save(t, "a", a)
    save(t, "b", b)
    out = np.zeros((n, 6), dtype=np.uint32)
    for g in range(n):
        x, y = int(a[g]), int(b[g])
        if y == 0:
            out[g, 0:4] = M32
        else:
            p = x * y
            out[g, 0], out[g, 1] = x // y, x % y
            out[g, 2], out[g, 3] = p & M32, p >> 32
        out[g, 4] = [(x + y), (x - y), (x * y)][g % 3] & M32
        out[g, 5] = [x + 100, 3 * x, x ^ y, x >> 3, y - 7][g % 5] & M32
    save(t, "expected_out", out.reshape(-1))


# =============================================================================================
# int_misc
# =============================================================================================

def bfind_ref(a, width, signed, shiftamt):
    """PTX ISA bfind pseudo-code."""
    msb = width - 1
    if signed and (a >> msb) & 1:
        a = ~a & ((1 << width) - 1)
    d = M32
    for i in range(msb, -1, -1):
        if (a >> i) & 1:
            d = i
            break
    if shiftamt and d != M32:
        d = msb - d
    return d


def tdiv(a, b):
    """C division: truncate toward zero; remainder has the dividend's sign."""
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    return q, a - q * b


def shift_ref(kind, a, n, width):
    """shl/shr with the shift amount clamped to the register width."""
    m = (1 << width) - 1
    n = min(n, width)
    if kind == "shl":
        return (a << n) & m
    if kind == "shr.u":
        return (a & m) >> n
    sa = a & m
    if sa >> (width - 1):
        sa -= 1 << width
    return (sa >> n) & m


def gen_int_misc():
    t = "int_misc"
    n = 64
    rng = np.random.default_rng(13001)
    rnd = lambda bits: int(rng.integers(0, 1 << bits, dtype=np.uint64)) if bits < 64 else \
        (int(rng.integers(0, 1 << 32, dtype=np.uint64)) << 32) | int(rng.integers(0, 1 << 32, dtype=np.uint64))
    rows = [  # (a, b, c)
        (INT_MAX, 1, INT_MAX), (INT_MIN & M32, M32, (INT_MIN + 1) & M32), (INT_MIN & M32, INT_MAX, 0),
        (INT_MAX, M32, 5), (0, 0, 0), (M32, M32, 0), (1, 1, 1), (0x80000000, 0x80000000, INT_MAX),
        (0x7FFFFFFF, 0x7FFFFFFF, INT_MAX), (0x7FFFFFFF, 0x80000000, INT_MIN & M32),
        (0x00012345, 0xFFFFFFFB, 7), (0x40000000, 0x40000000, 0x70000000),
    ]
    a = [r[0] for r in rows] + [rnd(32) for _ in range(n - len(rows))]
    b = [r[1] for r in rows] + [rnd(32) for _ in range(n - len(rows))]
    c = [r[2] for r in rows] + [rnd(32) for _ in range(n - len(rows))]
    sh = [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, M32, 8, 48, 7]
    sh += [int(v) for v in rng.integers(0, 70, n - len(sh))]
    a16 = [0x8000, 0x7FFF, 0xFFFF, 0, 1, 0x1234, 0x8001, 0xFFFE] + [rnd(16) for _ in range(n - 8)]
    b16 = [0x8000, 0x7FFF, 1, 0, 0xFFFF, 0x4321, 0x0002, 0xFFFE] + [rnd(16) for _ in range(n - 8)]
    d16 = [3, 0xFFF0, 7, 1, 0x8000, 0x10, 0x0100, 5]
    d16 += [int(v) for v in rng.integers(1, 0xFFFF, n - len(d16))]       # never 0 or 0xffff
    I64_MIN = 1 << 63
    a64 = [I64_MIN, M64, 0, 1, (1 << 63) - 1, 0x00000001_00000000, M64, 0x8000_0000_0000_0001]
    a64 += [rnd(64) for _ in range(n - len(a64))]
    b64 = [M64, M64, 5, M64, 1, 0xFFFF_FFFF, 0, I64_MIN] + [rnd(64) for _ in range(n - 8)]
    c64 = [1, 1, M64, 0, M64, 0xFFFF_FFFF_0000_0000, 7, 3] + [rnd(64) for _ in range(n - 8)]
    d64 = [3, 0xFFFF_FFFF_FFFF_FFF0, 7, 2, 1 << 62, 10, 0x100, I64_MIN]
    d64 += [rnd(40) + 1 for _ in range(n - len(d64))]          # never 0 or -1
    for name, arr, dt in [("a", a, np.uint32), ("b", b, np.uint32), ("c", c, np.uint32),
                          ("sh", sh, np.uint32), ("a16", a16, np.uint16), ("b16", b16, np.uint16),
                          ("d16", d16, np.uint16), ("a64", a64, np.uint64), ("b64", b64, np.uint64),
                          ("c64", c64, np.uint64), ("d64", d64, np.uint64)]:
        save(t, name, np.array(arr, dtype=dt))

    sat = lambda v: min(max(v, INT_MIN), INT_MAX) & M32
    out = np.zeros((n, 26), dtype=np.uint32)
    out64 = np.zeros((n, 18), dtype=np.uint64)
    for i in range(n):
        x, y, z, s = a[i], b[i], c[i], sh[i]
        sx, sy, sz = s32(x), s32(y), s32(z)
        o = out[i]
        o[0] = sat(sx + sy)
        o[1] = sat(sx - sy)
        o[2] = sat(((sx * sy) >> 32) + sz)
        o[3] = bfind_ref(x, 32, False, False)
        o[4] = bfind_ref(x, 32, True, False)
        o[5] = bfind_ref(x, 32, True, True)
        o[6] = bfind_ref(a64[i], 64, False, False)
        o[7] = bfind_ref(a64[i], 64, True, False)
        o[8] = bfind_ref(a64[i], 64, True, True)
        o[9] = bfind_ref(a64[i], 64, False, True)
        o[10] = shift_ref("shl", x, s, 32)
        o[11] = shift_ref("shr.s", x, s, 32)
        o[12] = shift_ref("shr.u", x, s, 32)
        h1, h2, h3 = a16[i], b16[i], d16[i]
        sh1, sh2, sh3 = s16(h1), s16(h2), s16(h3)
        o[13] = (abs(sh1) & 0xFFFF) | ((-sh1 & 0xFFFF) << 16)
        o[14] = ((h1 * h2) & 0xFFFF) | ((((sh1 * sh2) >> 16) & 0xFFFF) << 16)
        o[15] = (sh1 * sh2) & M32
        o[16] = h1 * h2
        o[17] = ((h1 * h2 + (z & 0xFFFF)) & 0xFFFF) | (((h1 * h2) >> 16) << 16)
        q, r = tdiv(sh1, sh3)
        o[18] = (q & 0xFFFF) | ((r & 0xFFFF) << 16)
        o[19] = (h1 // h3) | ((h1 % h3) << 16)
        o[20] = shift_ref("shl", h1, s, 16) | (shift_ref("shr.s", h1, s, 16) << 16)
        o[21] = shift_ref("shr.u", h1, s, 16) | ((h1 ^ h2) << 16)
        o[22] = M32 if h1 == h2 else 0
        o[23] = (h1 if sx < sy else h2) | ((h1 if sy >= 0 else h2) << 16)
        o[24] = min(sx, -5) & M32
        o[25] = max(sx, -5) & M32
        p, q64, r64, d = a64[i], b64[i], c64[i], d64[i]
        sp, sd = s64(p), s64(d)
        w = out64[i]
        w[0] = shift_ref("shl", p, s, 64)
        w[1] = shift_ref("shr.s", p, s, 64)
        w[2] = shift_ref("shr.u", p, s, 64)
        w[3] = abs(sp) & M64
        qq, rr = tdiv(sp, sd)
        w[4] = qq & M64
        w[5] = rr & M64
        w[6] = p // d
        w[7] = p % d
        w[8] = sad(p, q64, r64, 64)
        w[9] = min(p, q64)
        w[10] = max(p, q64)
        w[11] = ~p & M64
        X = (q64 << 64) | p                 # (b64:a64)
        Y = (p << 64) | r64                 # (a64:c64)
        S = (X + Y) & ((1 << 128) - 1)
        D = (X - Y) & ((1 << 128) - 1)
        Mv = p * q64 + r64
        w[12], w[13] = S & M64, S >> 64
        w[14], w[16] = D & M64, D >> 64
        w[15], w[17] = Mv & M64, (Mv >> 64) & M64
    save(t, "expected_out", out.reshape(-1))
    save(t, "expected_out64", out64.reshape(-1))


# =============================================================================================
# fp_misc
# =============================================================================================

def fexact(x):
    """A finite or infinite float as an exact Fraction, or the float itself (inf, +-0)."""
    x = float(x)
    if math.isinf(x) or x == 0.0 or math.isnan(x):
        return x
    return Fraction(x)


def neg_of(x):
    return math.copysign(1.0, float(x)) < 0


def div_round(x, y, fmt, mode):
    """IEEE division with one rounding (no NaN cases)."""
    x, y = float(x), float(y)
    sign = neg_of(x) != neg_of(y)
    if y == 0.0 or math.isinf(x):
        return round_to_bits(-math.inf if sign else math.inf, fmt)
    if x == 0.0 or math.isinf(y):
        return round_to_bits(-0.0 if sign else 0.0, fmt)
    return round_to_bits(Fraction(x) / Fraction(y), fmt, mode)


def sqrt_round(x, fmt, mode):
    x = float(x)
    if x == 0.0 or math.isinf(x):
        return round_to_bits(x, fmt)       # sqrt(+-0) = +-0, sqrt(inf) = inf
    return round_to_bits(sqrt_exactish(Fraction(x)), fmt, mode)


def is_sub_bits(b, fmt):
    ebits, fbits = FMT[fmt]
    return ((b >> fbits) & ((1 << ebits) - 1)) == 0 and (b & ((1 << fbits) - 1)) != 0


def ftz_bits(b, fmt):
    """.ftz: a subnormal becomes a zero of the same sign."""
    ebits, fbits = FMT[fmt]
    return b & (1 << (ebits + fbits)) if is_sub_bits(b, fmt) else b


def val_of_bits(b, fmt):
    """A bit pattern as an exact Fraction, or a float for +-0 / inf / nan."""
    v = bits_value(b, fmt)
    if isinstance(v, float):
        return v
    if v == 0:
        return -0.0 if fsign(b, fmt) else 0.0
    return v


def add_any(x, y, fmt, mode="rn"):
    """x + y for bit patterns that may be zero or infinite (never inf - inf)."""
    vx, vy = val_of_bits(x, fmt), val_of_bits(y, fmt)
    for v in (vx, vy):
        if isinstance(v, float) and math.isinf(v):
            return round_to_bits(v, fmt)
    fx = Fraction(0) if isinstance(vx, float) else vx
    fy = Fraction(0) if isinstance(vy, float) else vy
    s = fx + fy
    if s == 0:
        both = fsign(x, fmt) and fsign(y, fmt)
        return round_to_bits(-0.0 if (both or (mode == "rm" and fx != 0)) else 0.0, fmt)
    return round_to_bits(s, fmt, mode)


def mul_any(x, y, fmt):
    vx, vy = val_of_bits(x, fmt), val_of_bits(y, fmt)
    sign = fsign(x, fmt) ^ fsign(y, fmt)
    if any(isinstance(v, float) and math.isinf(v) for v in (vx, vy)):
        return round_to_bits(-math.inf if sign else math.inf, fmt)
    if any(isinstance(v, float) for v in (vx, vy)):
        return round_to_bits(-0.0 if sign else 0.0, fmt)
    return round_to_bits(vx * vy, fmt)


def fma_any(x, y, z, fmt):
    """x*y + z rounded once; handles zeros and infinities (never NaN here); None for NaN."""
    vx, vy, vz = val_of_bits(x, fmt), val_of_bits(y, fmt), val_of_bits(z, fmt)
    psign = fsign(x, fmt) ^ fsign(y, fmt)
    isinf = lambda v: isinstance(v, float) and math.isinf(v)
    if isinf(vx) or isinf(vy):
        if (isinstance(vx, float) and vx == 0) or (isinstance(vy, float) and vy == 0):
            return None
        if isinf(vz) and (vz < 0) != bool(psign):
            return None
        return round_to_bits(-math.inf if psign else math.inf, fmt)
    if isinf(vz):
        return round_to_bits(vz, fmt)
    p = Fraction(0) if isinstance(vx, float) or isinstance(vy, float) else vx * vy
    fz = Fraction(0) if isinstance(vz, float) else vz
    s = p + fz
    if s == 0:
        both = (p == 0 and psign) and fsign(z, fmt)
        return round_to_bits(-0.0 if both else 0.0, fmt)
    return round_to_bits(s, fmt)


def sat_bits(b, fmt):
    """.sat: clamp to [0.0, 1.0]; NaN (None) -> +0.0."""
    one = round_to_bits(Fraction(1), fmt)
    if b is None or is_nan_bits(b, fmt):
        return 0
    v = val_of_bits(b, fmt)
    if isinstance(v, float):
        if math.isinf(v):
            return one if v > 0 else 0
        return 0                                   # +-0 -> +0
    if v < 0:
        return 0
    return one if v > 1 else b


def gen_fp_misc():
    t = "fp_misc"
    n = 64
    rng = np.random.default_rng(14001)
    inf, nan = float("inf"), float("nan")
    FMAX = float(np.finfo(np.float32).max)
    DMAX = float(np.finfo(np.float64).max)
    rows = [  # x, y, z, q, xn
        (1.0, 3.0, 0.5, 2.0, nan), (-1.0, 3.0, -0.25, 3.0, -0.3), (2.0, 3.0, 1.0, 0.0, 0.2),
        (1.0, 0.0, 0.0, -0.0, 0.9), (-1.0, 0.0, 2.0, inf, 2.0), (FMAX, 0.5, 1.0, 1e-40, -5.0),
        (-FMAX, 0.5, -1.0, 1e38, 1.0), (1e-38, 1e10, 3.0, 0.25, inf), (SUB, 3.0, 0.0, 10.0, -inf),
        (-0.0, 3.0, 1.0, 7.0, 0.5), (0.0, -2.0, -0.0, 5.0, 0.25), (1e-20, 1e-20, 0.0, 1.5, -0.5),
        (-1e-20, 1e-20, 0.0, 2.5, 0.75), (3e38, 1.0, -3e38, 123.0, 0.5),
        (1.0, 3e38, 0.0, 1e-30, 0.5), (-SUB, 1.0, 0.0, 3.0, 0.5), (1e38, 7.0, 0.0, 2e-45, 0.5),
    ]
    cols = list(zip(*rows))
    m = n - len(rows)
    x = list(cols[0]) + [float(v) for v in rng.uniform(-10, 10, m)]
    y = list(cols[1]) + [float(v) for v in rng.uniform(-10, 10, m)]
    z = list(cols[2]) + [float(v) for v in rng.uniform(-10, 10, m)]
    q = list(cols[3]) + [float(v) for v in rng.uniform(0, 100, m)]
    xn = list(cols[4]) + [float(v) for v in rng.uniform(-1, 2, m)]
    x32, y32, z32, q32, xn32 = (np.array(a, dtype=np.float32) for a in (x, y, z, q, xn))
    drows = [(1.0, 3.0, 2.0), (-1.0, 3.0, 3.0), (2.0, 3.0, 0.0), (1.0, 0.0, -0.0),
             (-1.0, 0.0, inf), (DMAX, 0.5, 1e-320), (-DMAX, 0.5, 1e308), (1e-300, 1e10, 0.25),
             (1e308, 7.0, 10.0), (-0.0, 3.0, 7.0), (0.0, -2.0, 5.0), (5e-324, 3.0, 2.5)]
    dcols = list(zip(*drows))
    dm = n - len(drows)
    dx = np.array(list(dcols[0]) + list(rng.uniform(-10, 10, dm)), dtype=np.float64)
    dy = np.array(list(dcols[1]) + list(rng.uniform(-10, 10, dm)), dtype=np.float64)
    dq = np.array(list(dcols[2]) + list(rng.uniform(0, 100, dm)), dtype=np.float64)
    P = lambda e: 2.0 ** e
    hrows = [(1.0, 1.0, 0.5), (-0.0, 0.0, 0.0), (P(-10), P(-10), 0.0), (P(-15), 4.0, -1.0),
             (-P(-15), 4.0, 0.0), (65504.0, -65504.0, 1.0), (3.0, -2.0, 0.25),
             (0.5, 0.25, 0.125), (-2.0, -2.0, 5.0), (0.75, 1.25, -0.0625)]
    h1 = [h(r[0]) for r in hrows] + [f16_bits_of(v) for v in rng.uniform(-4, 4, n - len(hrows))]
    h2 = [h(r[1]) for r in hrows] + [f16_bits_of(v) for v in rng.uniform(-4, 4, n - len(hrows))]
    h3 = [h(r[2]) for r in hrows] + [f16_bits_of(v) for v in rng.uniform(-4, 4, n - len(hrows))]
    for name, arr in [("x", x32), ("y", y32), ("z", z32), ("q", q32), ("xn", xn32), ("dx", dx),
                      ("dy", dy), ("dq", dq), ("h1", np.array(h1, dtype=np.uint16)),
                      ("h2", np.array(h2, dtype=np.uint16)), ("h3", np.array(h3, dtype=np.uint16))]:
        save(t, name, arr)

    b32 = lambda a: [int(v) for v in a.view(np.uint32)]
    xb, yb, zb, qb, nb = b32(x32), b32(y32), b32(z32), b32(q32), b32(xn32)
    o32 = np.zeros((n, 22), dtype=np.uint32)
    o64 = np.zeros((n, 10), dtype=np.uint64)
    o16 = np.zeros((n, 8), dtype=np.uint16)
    fa = np.zeros((n, 2), dtype=np.float32)
    for i in range(n):
        X, Y, Q = float(x32[i]), float(y32[i]), float(q32[i])
        o = o32[i]
        for k, md in enumerate(["rz", "rm", "rp"]):
            o[k] = div_round(X, Y, "f32", md)
            o[3 + k] = div_round(1.0, X, "f32", md)
            o[6 + k] = sqrt_round(Q, "f32", md)
        o[9] = sat_bits(None if math.isnan(float(xn32[i])) else add_any(nb[i], yb[i], "f32"), "f32")
        o[10] = sat_bits(None if math.isnan(float(xn32[i])) else mul_any(nb[i], yb[i], "f32"), "f32")
        o[11] = sat_bits(None if math.isnan(float(xn32[i])) else fma_any(nb[i], yb[i], zb[i], "f32"), "f32")
        fx, fy, fq = ftz_bits(xb[i], "f32"), ftz_bits(yb[i], "f32"), ftz_bits(qb[i], "f32")
        o[12] = ftz_bits(add_any(fx, fy, "f32"), "f32")
        o[13] = ftz_bits(mul_any(fx, fy, "f32"), "f32")
        o[14] = fx & 0x7FFFFFFF
        o[15] = fx ^ 0x80000000
        vx, vy = val_of_bits(fx, "f32"), val_of_bits(fy, "f32")
        o[16] = fx if float(vx) < float(vy) else fy        # no +-0 ties in the inputs
        o[17] = fma_any(xb[i], yb[i], zb[i], "f32")
        o[18] = ftz_bits(div_round(bits_f32(fx), bits_f32(fy), "f32", "rn"), "f32")
        o[19] = ftz_bits(sqrt_round(bits_f32(fq), "f32", "rn"), "f32")
        DX, DY, DQ = float(dx[i]), float(dy[i]), float(dq[i])
        o[20] = 0x3F800000 if DX < DY else 0
        lt_u = DX < DY                                        # no NaN operands
        o[21] = (1 if lt_u else 0) | (0 if lt_u else 2)
        w = o64[i]
        for k, md in enumerate(["rz", "rm", "rp"]):
            w[k] = div_round(DX, DY, "f64", md)
            w[3 + k] = div_round(1.0, DX, "f64", md)
            w[6 + k] = sqrt_round(DQ, "f64", md)
        w[9] = (f64_bits(DY) & 0x7FFFFFFFFFFFFFFF) | (f64_bits(DX) & (1 << 63))
        a, b, c = h1[i], h2[i], h3[i]
        hv = o16[i]
        hv[0] = add_any(a, b ^ 0x8000, "f16")
        hv[1] = a & 0x7FFF
        hv[2] = a ^ 0x8000
        hv[3] = sat_bits(fma_any(a, b, c, "f16"), "f16")
        hv[4] = ftz_bits(mul_any(ftz_bits(a, "f16"), ftz_bits(b, "f16"), "f16"), "f16")
        hv[5] = add_any(a, b ^ 0x8000, "f16")               # lo: h1 - h2
        hv[6] = add_any(b, c ^ 0x8000, "f16")               # hi: h2 - h3
        va, vb = float(bits_value(a, "f16")), float(bits_value(b, "f16"))
        hv[7] = (va < vb) | ((va == vb) << 1) | ((va > vb) << 2)
        with np.errstate(all="ignore"):
            fa[i, 0] = np.float32(np.float64(x32[i]) / np.float64(y32[i]))
            fa[i, 1] = np.float32(1.0 / np.float64(x32[i]))
    save(t, "expected_o32", o32.reshape(-1))
    save(t, "expected_o64", o64.reshape(-1))
    save(t, "expected_o16", o16.reshape(-1))
    save(t, "expected_fa", fa.reshape(-1))


# =============================================================================================
# cvt_more
# =============================================================================================

def round_int(v, mode):
    """Round an exact Fraction to an integer: rni (ties to even), rzi, rmi, rpi."""
    fl = v.numerator // v.denominator
    frac = v - fl
    if mode == "rmi":
        return fl
    if mode == "rpi":
        return fl + (1 if frac else 0)
    if mode == "rzi":
        return fl if v >= 0 else fl + (1 if frac else 0)
    if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and fl % 2 == 1):
        return fl + 1
    return fl


def f2i(x, mode, lo, hi):
    """PTX float -> integer: round, saturate to [lo, hi], NaN -> 0."""
    x = float(x)
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    return min(max(round_int(Fraction(x), mode), lo), hi)


def sext(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def gen_cvt_more():
    t = "cvt_more"
    n = 64
    rng = np.random.default_rng(15001)
    inf, nan = float("inf"), float("nan")
    P = lambda e: 2.0 ** e
    x = [nan, inf, -inf, 127.5, 127.49, -128.5, -129.0, 300.7, -300.7, 0.5, 1.5, 2.5, -0.5,
         -1.5, 65535.4, 65535.5, 65536.0, -1.0, 3e9, -3e9, 2147483520.0, -0.0, 1e-40]
    x += [float(v) for v in rng.uniform(-300, 300, n - len(x))]
    x32 = np.array(x, dtype=np.float32)
    xf = [SUB, -SUB, 1e-45, -1e-45, 1.0, -0.0, 2.0 ** -126, -(2.0 ** -127)]
    xf += [float(v) for v in rng.uniform(-5, 5, n - len(xf))]
    xf32 = np.array(xf, dtype=np.float32)
    d = [1 + P(-11) + P(-40), 1 + P(-11), 1 + P(-11) - P(-40), 65519.9999, 65520.0, -65520.0,
         P(-25), P(-25) + P(-60), 3 * P(-26), 1e300, -1e300, inf, -inf, -0.0, 1e-320,
         -1e30, 9.3e18, -2.5, 0.1]
    d += [float(v) for v in rng.uniform(-70000, 70000, n - len(d))]
    d64 = np.array(d, dtype=np.float64)
    hv = [h(2.5), h(0.5), h(-1.5), h(-0.5), h(3.5), h(512.5), h(513.5), h(-0.375), h(65504.0),
          0x1280, 0x12FF, 0x00FF, 0x0080, 0xBB7F, 0x7C00, 0xFC00, 0x8000, 0x0001]
    hv += [f16_bits_of(v) for v in rng.uniform(-600, 600, n - len(hv))]
    iv = [65519, 65520, 65535, 2049, 2051, -2049, 100000, -100000, 0, -1, INT_MIN, INT_MAX,
          0x12345, 70000, -32769, 4097]
    iv += [int(v) for v in rng.integers(-200000, 200000, n - len(iv))]
    lv = [-1, -(1 << 63), (1 << 63) - 1, 32767, 32768, -32768, -32769, (1 << 32) - 1, 1 << 32,
          0, 1, (1 << 53) + 1, (1 << 24) + 1, 0x7FFFFFBFFFFFFFFF, -5]
    lv += [int(v) for v in rng.integers(-(1 << 62), 1 << 62, n - len(lv))]
    for name, arr in [("x", x32), ("xf", xf32), ("d", d64), ("hv", np.array(hv, dtype=np.uint16)),
                      ("iv", np.array(iv, dtype=np.int32)), ("lv", np.array(lv, dtype=np.int64))]:
        save(t, name, arr)

    o16 = np.zeros((n, 8), dtype=np.uint16)
    o32 = np.zeros((n, 10), dtype=np.uint32)
    o64 = np.zeros((n, 4), dtype=np.uint64)
    for i in range(n):
        X, D, H, I, Lv = float(x32[i]), float(d64[i]), hv[i], iv[i], lv[i]
        dv = fexact(D)
        o = o16[i]
        o[0] = f2i(X, "rzi", -128, 127) & 0xFFFF           # .s8 result sign-extended in .b16
        o[1] = f2i(X, "rni", 0, 0xFFFF)
        o[2] = round_to_bits(dv, "f16", "rn")
        o[3] = round_to_bits(dv, "f16", "rz")
        o[4] = round_to_bits(Fraction(I) if I else 0.0, "f16", "rn")
        o[5] = round_to_bits(Fraction(I & M32) if I else 0.0, "f16", "rz")
        hvv = val_of_bits(H, "f16")
        if isinstance(hvv, float):
            o[6] = H                                        # +-0 and +-inf are unchanged
        else:
            r = round_int(hvv, "rni")
            o[6] = round_to_bits(Fraction(r) if r else (-0.0 if hvv < 0 else 0.0), "f16")
        o[7] = sext(H, 8) & 0xFFFF
        w = o32[i]
        w[0] = f2i(X, "rzi", INT_MIN, INT_MAX) & M32
        xfb = int(xf32.view(np.uint32)[i])
        w[1] = ftz_bits(xfb, "f32")
        w[2] = xfb
        w[3] = sext(H, 8) & M32
        w[4] = H & 0xFF
        w[5] = sext(H, 16) & M32
        w[6] = min(max(Lv, -32768), 32767) & 0xFFFF
        w[7] = min(max(Lv, 0), M32)
        w[8] = I & 0xFFFF
        w[9] = round_to_bits(Fraction(Lv & M64) if Lv else 0.0, "f32", "rz")
        v = o64[i]
        v[0] = f2i(D, "rmi", -(1 << 63), (1 << 63) - 1) & M64
        v[1] = round_to_bits(hvv, "f64")                   # exact
        v[2] = round_to_bits(Fraction(Lv & M64) if Lv else 0.0, "f64", "rn")
        v[3] = sext(H, 8) & M64
    save(t, "expected_o16", o16.reshape(-1))
    save(t, "expected_o32", o32.reshape(-1))
    save(t, "expected_o64", o64.reshape(-1))


# =============================================================================================
# cvt_f2i, cvt_f2i_bf16
# =============================================================================================

F2I_MODES = ["rni", "rzi", "rmi", "rpi"]
F2I_SMALL = ["s8", "u8", "s16", "u16", "s32", "u32"]
F2I_BIG = ["s64", "u64"]


def f2i_reg(b, fmt, dst, mode, ftz=False):
    """The destination register of `cvt.mode{.ftz}.dst.fmt` on bit pattern b: a .b32 register
    for 8- to 32-bit destinations (sign-extended for s8/s16, zero-extended for u8/u16), a .b64
    one for s64/u64. PTX ISA cvt: the rounded value is clamped to the destination range; NaN
    gives 0 when the source is not .f64 and the destination is at most 32 bits wide, otherwise
    1 << (BitWidth(dst) - 1) (the integer notes); .ftz reads an f32 subnormal as zero."""
    w = int(dst[1:])
    signed = dst[0] == "s"
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    regmask = M32 if w <= 32 else M64
    if is_nan_bits(b, fmt):
        if fmt != "f64" and w <= 32:
            return 0
        return (lo if signed else 1 << (w - 1)) & regmask
    v = bits_value(b, fmt)
    if isinstance(v, float):                                   # +-inf
        return (hi if v > 0 else lo) & regmask
    ebits, fbits = FMT[fmt]
    if ftz and fmt == "f32" and abs(v) < Fraction(2) ** (2 - (1 << (ebits - 1))):
        v = Fraction(0)
    return min(max(round_int(v, mode), lo), hi) & regmask


def f2i_inputs(fmt, specials, rng, n=64):
    """Bit patterns in `fmt`: the given specials, halves and the values around every
    destination range's ends (rounded to the format), then random magnitudes up to 2^70."""
    P = lambda e: Fraction(2) ** e
    vals = [Fraction(1, 2), Fraction(3, 2), Fraction(5, 2), Fraction(7, 2), Fraction(49, 100),
            Fraction(255, 2), Fraction(257, 2), Fraction(511, 2), P(15) - Fraction(1, 2),
            P(16) - Fraction(1, 2), P(31) - Fraction(1, 2), P(31), P(32) - Fraction(1, 2),
            P(32), P(63) - P(10), P(63), P(64) - P(11), P(64), Fraction(10) ** 30]
    bits = list(specials)
    for v in vals:
        bits += [round_to_bits(v, fmt), round_to_bits(-v, fmt)]
    while len(bits) < n:
        e = int(rng.integers(-3, 70))
        m = Fraction(int(rng.integers(1 << 20, 1 << 21)), 1 << 20)
        v = m * Fraction(2) ** e
        bits.append(round_to_bits(-v if rng.integers(0, 2) else v, fmt))
    assert len(bits) == n, (fmt, len(bits))
    return bits


F2I_SPECIALS = {
    # qNaN, -qNaN, sNaN, +inf, -inf, +0, -0, +-min subnormal, max subnormal, +-max finite
    "f16": [0x7E00, 0xFE00, 0x7C01, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001, 0x8001, 0x03FF,
            0x7BFF, 0xFBFF],
    "bf16": [0x7FC0, 0xFFC0, 0x7F81, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x0001, 0x8001, 0x007F,
             0x7F7F, 0xFF7F],
    "f32": [0x7FC00000, 0xFFC00000, 0x7F800001, 0x7F800000, 0xFF800000, 0, 0x80000000, 1,
            0x80000001, 0x007FFFFF, 0x7F7FFFFF, 0xFF7FFFFF],
    "f64": [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0x7FF0000000000000,
            0xFFF0000000000000, 0, 1 << 63, 1, (1 << 63) | 1, (1 << 52) - 1, 0x7FEFFFFFFFFFFFFF,
            0xFFEFFFFFFFFFFFFF],
}


def gen_cvt_f2i():
    t = "cvt_f2i"
    n = 64
    rng = np.random.default_rng(30001)
    srcs = [("hv", "f16", np.uint16), ("fv", "f32", np.uint32), ("dv", "f64", np.uint64)]
    inputs = {}
    for name, fmt, dtype in srcs:
        inputs[fmt] = f2i_inputs(fmt, F2I_SPECIALS[fmt], rng, n)
        save(t, name, np.array(inputs[fmt], dtype=dtype))
    o32 = np.zeros((n, 75), dtype=np.uint32)
    o64 = np.zeros((n, 24), dtype=np.uint64)
    for i in range(n):
        for s, (_, fmt, _) in enumerate(srcs):
            b = inputs[fmt][i]
            for d, dst in enumerate(F2I_SMALL):
                for m, mode in enumerate(F2I_MODES):
                    o32[i, (s * 6 + d) * 4 + m] = f2i_reg(b, fmt, dst, mode)
            for d, dst in enumerate(F2I_BIG):
                for m, mode in enumerate(F2I_MODES):
                    o64[i, (s * 2 + d) * 4 + m] = f2i_reg(b, fmt, dst, mode)
        b = inputs["f32"][i]
        o32[i, 72] = f2i_reg(b, "f32", "s32", "rmi", ftz=True)
        o32[i, 73] = f2i_reg(b, "f32", "s32", "rpi", ftz=True)
        o32[i, 74] = f2i_reg(b, "f32", "u8", "rpi", ftz=True)
    save(t, "expected_o32", o32.reshape(-1))
    save(t, "expected_o64", o64.reshape(-1))


def gen_cvt_f2i_bf16():
    t = "cvt_f2i_bf16"
    n = 64
    rng = np.random.default_rng(30002)
    bv = f2i_inputs("bf16", F2I_SPECIALS["bf16"], rng, n)
    save(t, "bv", np.array(bv, dtype=np.uint16))
    o32 = np.zeros((n, 24), dtype=np.uint32)
    o64 = np.zeros((n, 8), dtype=np.uint64)
    for i in range(n):
        for d, dst in enumerate(F2I_SMALL):
            for m, mode in enumerate(F2I_MODES):
                o32[i, d * 4 + m] = f2i_reg(bv[i], "bf16", dst, mode)
        for d, dst in enumerate(F2I_BIG):
            for m, mode in enumerate(F2I_MODES):
                o64[i, d * 4 + m] = f2i_reg(bv[i], "bf16", dst, mode)
    save(t, "expected_o32", o32.reshape(-1))
    save(t, "expected_o64", o64.reshape(-1))


# =============================================================================================
# mem_more
# =============================================================================================

def gen_mem_more():
    t = "mem_more"
    n, bs = 128, 64
    rng = np.random.default_rng(16001)
    inp = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    gq = np.array([(g << 33) + 1 for g in range(n)], dtype=np.uint64)
    gq2 = np.array([0xA5A5_0000_0000_0000 | (g * 0x1234567) for g in range(n)], dtype=np.uint64)
    lv = rng.integers(-(1 << 62), 1 << 62, size=n, dtype=np.int64)
    lv[17] = -(1 << 63)
    h16 = np.array([g if g % 2 == 0 else g + 0x1000 for g in range(n)], dtype=np.uint16)
    dvb = [f64_bits(float(v)) for v in rng.uniform(-1e6, 1e6, 2 * n)]
    dvb[3] = 0x7FF0000000000001        # a signalling NaN: its bits must survive ld/mov/st
    dvb[4] = 0xFFF8000000000123        # a quiet NaN with a payload
    dvb[5] = 0x8000000000000000        # -0.0
    dv = np.array(dvb, dtype=np.uint64)
    hv4 = rng.integers(0, 1 << 16, size=4 * n, dtype=np.uint64).astype(np.uint16)
    byts = rng.integers(0, 256, size=n, dtype=np.uint64).astype(np.uint8)
    byts[0], byts[1] = 0x80, 0x7F
    for name, arr in [("inp", inp), ("gq", gq), ("gq2", gq2), ("lv", lv), ("h16", h16),
                      ("dv", dv), ("hv4", hv4), ("bytes", byts)]:
        save(t, name, arr)

    ctab = [11, 22, 33, 44]
    out = np.zeros((n, 26), dtype=np.uint32)
    o2 = np.zeros((n, 4), dtype=np.uint32)
    o3 = np.zeros((n, 2), dtype=np.uint32)
    for g in range(n):
        o = out[g]
        tt = g % bs
        for k in range(9):
            o[k] = inp[g ^ k]
        o[9] = 3 * g
        o[10], o[11] = int(gq[g]) & M32, int(gq[g]) >> 32
        o[12] = int(gq2[g]) & M32
        o[13] = h16[g]
        for k in range(4):
            o[14 + k] = (g ^ 1) + k          # integer bits read back as f32 and stored as is
        o[18] = int(hv4[4 * g]) | (int(hv4[4 * g + 1]) << 16)
        o[19] = int(hv4[4 * g + 2]) | (int(hv4[4 * g + 3]) << 16)
        o[20] = byts[g]
        o[21] = sext(int(byts[g]), 8) & 0xFFFF
        o[22] = ctab[g % 4]
        if tt < 32 and tt % 2 == 0:          # survivors: even lanes of warp 0
            o[23] = 0x55555555
            o[24] = 9 * (g ^ 2)
        for k in range(4):
            o2[g, k] = (int(inp[g]) + 1 + k) & M32
        o3[g, 0] = (int(inp[g]) + 5) & M32
        o3[g, 1] = (int(inp[g]) + 6) & M32
    save(t, "expected_out", out.reshape(-1))
    save(t, "expected_o2", o2.reshape(-1))
    save(t, "expected_o3", o3.reshape(-1))
    save(t, "expected_gx", np.array([g + 1000 for g in range(n)], dtype=np.uint32))
    save(t, "expected_gq", np.array([(~int(gq[g]) & M64) if g % 2 == 0 else int(gq[g])
                                     for g in range(n)], dtype=np.uint64))
    save(t, "expected_gq2", np.array([g << 40 for g in range(n)], dtype=np.uint64))
    a = -1
    for v in lv:
        a &= int(v)
    save(t, "expected_g64", np.array([min(int(v) for v in lv), a], dtype=np.int64))
    save(t, "expected_hs", np.array([h(128.0), 0, h(128.0), h(64.0)], dtype=np.uint16))
    save(t, "expected_h16", np.array([0xBEEF if g % 2 == 0 else int(h16[g]) for g in range(n)],
                                     dtype=np.uint16))
    d = f64_bits(sum(g / 8 for g in range(n)))
    save(t, "expected_gf", np.array([f32_bits(sum(g / 4 for g in range(n))), 0, d & M32, d >> 32],
                                    dtype=np.uint32))
    save(t, "expected_o64", dv)
    save(t, "expected_bout", np.array([(7 * g + 256) & 0xFF for g in range(n)], dtype=np.uint8))
    res = np.zeros((2, 8), dtype=np.uint32)
    for b in range(2):
        gs = range(b * bs, (b + 1) * bs)
        s = sum(gs)
        res[b, 0] = 3 * bs
        res[b, 1] = sum(range(bs))
        res[b, 2], res[b, 3] = s & M32, s >> 32
        res[b, 4] = f32_bits(s / 2)
        res[b, 5] = min(int(inp[g]) for g in gs)
        x = 0
        for g in gs:
            x ^= (g * 0x01010101) & M32
        res[b, 6] = x
        res[b, 7] = 0x55555555
    save(t, "expected_res", res.reshape(-1))
    r = 0
    for _ in range(n):
        r = atom_inc(r, 50)
    save(t, "expected_gcnt", np.array([n, sum(range(n)), r], dtype=np.uint32))


# =============================================================================================
# prefetch_levels, hexfloat_bits
# =============================================================================================

def gen_prefetch_levels():
    save("prefetch_levels", "expected_out", np.array([7 + 3 * g + 1 for g in range(64)], dtype=np.uint32))


def gen_hexfloat_bits():
    t = "hexfloat_bits"
    rows = [[0x3F800000, 0xC0490FDB, 0x3F800000, f32_bits(3.0), 0x40490FDB,
             0x3F800000 if tt % 2 else 0xBF800000] for tt in range(32)]
    save(t, "expected_out32", np.array(rows, dtype=np.uint32).reshape(-1))
    save(t, "expected_out64", np.array([0x400921FB54442D18, f64_bits(-1.0)] * 32, dtype=np.uint64))


# =============================================================================================
# operand_forms
# =============================================================================================

def gen_operand_forms():
    t = "operand_forms"
    n = 64
    rng = np.random.default_rng(17001)
    inp = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    v = rng.integers(0, 1 << 32, size=4 * n, dtype=np.uint64).astype(np.uint32)
    save(t, "inp", inp)
    save(t, "v", v)
    out = np.full((n, 12), 0xDEADBEEF, dtype=np.uint32)
    for g in range(n):
        o = out[g]
        o[0], o[1], o[2], o[3] = 0o17, 0b101, 5, 100 - 0x10
        o[4] = f32_bits(1500.0)
        o[5] = 0x3F800000
        o[6] = g % 32
        if g > 0:
            o[7] = inp[g - 1]
        if g < 60:
            o[8] = inp[g + 4]
        lt = int(inp[g]) < int(inp[g ^ 1])
        o[9] = (1 if lt else 0) | (0 if lt else 2)
        o[10] = inp[g ^ 1]
        o[11] = v[4 * g + 3]
    save(t, "expected_out", out.reshape(-1))
    save(t, "expected_vst", np.array([[g, 5] for g in range(n)], dtype=np.uint32).reshape(-1))



# =============================================================================================
# newer_bits (sm_70): lop3, dp4a/dp2a, bmsk, szext, fns, testp, isspacep, sregs, WARP_SZ
# =============================================================================================

def lop3_ref(lut, a, b, c):
    """PTX ISA lop3: immLut = F(0xF0, 0xCC, 0xAA), so bit i of d is bit (4a_i + 2b_i + c_i) of
    the table; ptxas keeps the low 8 bits of a wider constant."""
    lut &= 0xFF
    d = 0
    for i in range(32):
        k = 4 * ((a >> i) & 1) + 2 * ((b >> i) & 1) + ((c >> i) & 1)
        d |= ((lut >> k) & 1) << i
    return d


def ext_ref(v, bits, signed):
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def dp4a_ref(a, b, c, sa, sb):
    """PTX ISA dp4a: d = c + sum of the four byte products (c is s32 unless both are u32)."""
    d = ext_ref(c, 32, sa or sb)
    for i in range(4):
        d += ext_ref(a >> (8 * i), 8, sa) * ext_ref(b >> (8 * i), 8, sb)
    return d & M32


def dp2a_ref(a, b, c, sa, sb, hi):
    """PTX ISA dp2a: the halfwords of a times bytes 0-1 (.lo) or 2-3 (.hi) of b, plus c."""
    d = ext_ref(c, 32, sa or sb)
    sel = 2 if hi else 0
    for i in range(2):
        d += ext_ref(a >> (16 * i), 16, sa) * ext_ref(b >> (8 * (sel + i)), 8, sb)
    return d & M32


def bmsk_ref(a, b, clamp):
    """PTX ISA bmsk pseudo-code."""
    a1 = a & 0x1F
    mask0 = (M32 << a1) & M32
    b1 = b & 0x1F
    s = a1 + b1
    mask1 = (M32 << s) & M32 if s < 32 else 0
    overflow = s >= 32
    if clamp:
        if a >= 32:
            overflow = True
            mask0 = 0
        if b >= 32:
            overflow = True
    if overflow:
        mask1 = 0
    elif b1 == 0:
        mask1 = M32
    return mask0 & ~mask1 & M32


def szext_ref(a, b, clamp, signed):
    """PTX ISA szext pseudo-code."""
    b1 = b & 0x1F
    too_large = b >= 32 and clamp
    mask = 0 if too_large else (M32 << b1) & M32
    sign_pos = (b1 - 1) & 0x1F
    sign = not (b1 == 0 or too_large or not signed) and (a >> sign_pos) & 1
    return ((a & ~mask) | (mask if sign else 0)) & M32


def fns_ref(mask, base, offset):
    """PTX ISA fns pseudo-code (base in 0..31)."""
    if offset == 0:
        return base if (mask >> base) & 1 else M32
    pos, count, inc = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if (mask >> pos) & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return M32


def testp_bits(x, fmt):
    """testp finite, infinite, number, notanumber, normal, subnormal as bits 0-5; +-0 is
    normal (PTX ISA testp)."""
    ebits, fbits = FMT[fmt]
    e = (x >> fbits) & ((1 << ebits) - 1)
    f = x & ((1 << fbits) - 1)
    nan = e == (1 << ebits) - 1 and f != 0
    inf = e == (1 << ebits) - 1 and f == 0
    sub = e == 0 and f != 0
    flags = [not nan and not inf, inf, not nan, nan, not nan and not inf and not sub, sub]
    return sum(1 << i for i, v in enumerate(flags) if v)


def gen_newer_bits():
    t = "newer_bits"
    n = 64
    rng = np.random.default_rng(23001)
    u32 = lambda k: [int(v) for v in rng.integers(0, 1 << 32, size=k, dtype=np.uint64)]
    a = [0, M32, 0x80808080, 0x7F7F7F7F, 0x12345678, 0xAAAAAAAA, 0x00010001, 0xFFFF8000]
    b = [M32, M32, 0x80808080, 0x01FF01FF, 0x87654321, 0x55555555, 0xFFFF0001, 0x7FFF0080]
    c = [0, 5, M32, 0x80000000, 0x7FFFFFFF, 0xF0F0F0F0, 1, 0x10000]
    a += u32(n - len(a))
    b += u32(n - len(b))
    c += u32(n - len(c))
    sa = [0, 1, 31, 32, 33, 40, 0xFFFFFFFF, 0x80000003, 8, 24, 30, 16, 4, 64, 100, 2]
    sb = [0, 2, 1, 8, 40, 32, 4, 0xFFFFFFFF, 31, 16, 3, 33, 0, 1, 0x80000005, 24]
    sa += [int(v) for v in rng.integers(0, 40, size=n - len(sa))]
    sb += [int(v) for v in rng.integers(0, 40, size=n - len(sb))]
    off = [0, 1, -1, 2, -2, 31, -31, 32, -32, 40, -40, 3, -3]
    off += [int(v) for v in rng.integers(-40, 41, size=n - len(off))]
    ft = [0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F800000,
          0xFF800000, 0x7F800001, 0x7FC00000, 0xFFFFFFFF, 0x3F800000, 0xBF800000]
    ft += [f32_bits(float(v)) for v in rng.uniform(-1e3, 1e3, size=n - len(ft))]
    fd = [0, 1 << 63, 1, 0x800FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF,
          0x7FF0000000000000, 0xFFF0000000000000, 0x7FF0000000000001, 0x7FF8000000000000,
          0x3FF0000000000000]
    fd += [f64_bits(float(v)) for v in rng.uniform(-1e3, 1e3, size=n - len(fd))]
    for name, arr, dt in [("a", a, np.uint32), ("b", b, np.uint32), ("c", c, np.uint32),
                          ("sa", sa, np.uint32), ("sb", sb, np.uint32), ("off", off, np.int32),
                          ("ft", ft, np.uint32), ("fd", fd, np.uint64)]:
        save(t, name, np.array(arr, dtype=dt))
    # isspacep: address j (global, shared, local, const, param) in space k; the param window
    # lies inside the global one, the others are separate windows.
    spaces = 0
    for j, ks in enumerate([[0], [1], [2], [3], [0, 4]]):
        for k in ks:
            spaces |= 1 << (5 * j + k)
    out = np.zeros((n, 24), dtype=np.uint32)
    for g in range(n):
        x, y, z = a[g], b[g], c[g]
        o = out[g]
        for k, lut in enumerate([0x96, 0xE8, 0x1A, 0xCA, 0x1E1]):
            o[k] = lop3_ref(lut, x, y, z)
        d = lop3_ref(0x80, x, y, z)
        o[5] = d
        p1 = (d != 0) or (g & 1 == 1)
        p2 = (lop3_ref(0x3F, x, y, z) != 0) and not (g & 2)
        o[6] = int(p1) | (int(p2) << 1)
        o[7] = dp4a_ref(x, y, z, False, False)
        o[8] = dp4a_ref(x, y, z, True, True)
        o[9] = dp4a_ref(x, y, z, False, True)
        o[10] = dp4a_ref(x, y, z, True, False)
        o[11] = dp2a_ref(x, y, z, False, False, False)
        o[12] = dp2a_ref(x, y, z, True, True, True)
        o[13] = dp2a_ref(x, y, z, True, False, False)
        o[14] = dp2a_ref(x, y, z, False, True, True)
        o[15] = bmsk_ref(sa[g], sb[g], True)
        o[16] = bmsk_ref(sa[g], sb[g], False)
        o[17] = szext_ref(x, sb[g], True, True)
        o[18] = szext_ref(x, sb[g], False, False)
        o[19] = szext_ref(x, sb[g], False, True)
        o[20] = fns_ref(x, sa[g] & 31, off[g])
        o[21] = testp_bits(ft[g], "f32") | (testp_bits(fd[g], "f64") << 8)
        o[22] = spaces
        o[23] = 32 * 1000 + 15
    save(t, "expected_out", out.reshape(-1))



# =============================================================================================
# newer_sm80 (sm_80): redux.sync, min/max .NaN, fma/cvt .relu, packed cvt, tf32
# =============================================================================================

def canon_nan(fmt):
    ebits, fbits = FMT[fmt]
    return (1 << (ebits + fbits)) - 1


def minmax_nan_ref(x, y, fmt, want_max):
    """min/max.NaN: the canonical NaN if either input is NaN, else the smaller/larger value
    with +0 > -0 (PTX ISA min, max)."""
    if is_nan_bits(x, fmt) or is_nan_bits(y, fmt):
        return canon_nan(fmt)
    vx, vy = bits_value(x, fmt), bits_value(y, fmt)
    if vx == vy:                       # equal values differ at most in the sign of zero
        x_first = fsign(x, fmt) != want_max
    else:
        x_first = (vx > vy) == want_max
    return x if x_first else y


def relu_ref(b, fmt):
    """.relu: a negative result (-0 included) becomes +0; NaN is the canonical NaN."""
    if is_nan_bits(b, fmt):
        return canon_nan(fmt)
    return 0 if fsign(b, fmt) else b


def cvt_f32_ref(x, fmt, mode):
    """cvt.{rn,rz}.{f16,bf16}.f32 of f32 bits x; NaN gives the canonical NaN."""
    if is_nan_bits(x, "f32"):
        return canon_nan(fmt)
    return round_to_bits(f32_exact(bits_f32(x)), fmt, mode)


def tf32_rna_ref(x):
    """cvt.rna.tf32.f32: round to 10 fraction bits (8-bit exponent, f32 range), ties away from
    zero, as an f32 bit pattern; NaN keeps its tf32 bits, quieted (as measured on an H100:
    docs/correlation/h100-sxm-2026-11-27)."""
    if is_nan_bits(x, "f32"):
        return (x | 0x00400000) & ~0x1FFF & M32
    v = f32_exact(bits_f32(x))
    if isinstance(v, float):           # +-0, +-inf are exact
        return x
    sign = x & 0x80000000
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, -126)                    # f32 subnormals share the quantum of 2^-126
    quantum = Fraction(2) ** (e - 10)
    q = a / quantum
    n = q.numerator // q.denominator
    if q - n >= Fraction(1, 2):
        n += 1
    return sign | round_to_bits(n * quantum, "f32")


def gen_newer_sm80():
    t = "newer_sm80"
    n = 80
    rng = np.random.default_rng(24001)
    warps = [range(0, 32), range(32, 64), range(64, 80)]
    rv = [0x80000000, 0x7FFFFFFF, M32, 0, 1, 0xFFFFFFFE] + \
        [int(v) for v in rng.integers(0, 1 << 32, size=n - 6, dtype=np.uint64)]
    rv[70], rv[75] = 0x80000000, 0xFFFFFFF0      # extremes in the partial warp too
    nanf, qn = 0x7FC00000, 0xFFC00001
    pairs = [(nanf, 0x3F800000), (0x3F800000, qn), (nanf, qn), (0, 0x80000000),
             (0x80000000, 0), (0x7F800000, 0xFF800000), (0xBF800000, 0xC0000000), (1, 0x80000001),
             (0x7F7FFFFF, 0x7F800000), (0x80000000, 0x80000000)]
    fx = [p[0] for p in pairs] + [f32_bits(float(v)) for v in rng.uniform(-10, 10, n - len(pairs))]
    fy = [p[1] for p in pairs] + [f32_bits(float(v)) for v in rng.uniform(-10, 10, n - len(pairs))]
    # per thread: hx, hy (f16), bx, by (bf16), ha, hb, hc (f16), ba, bb, bc (bf16)
    hnan, hqn, bnan = 0x7E00, 0xFD01, 0x7FC1
    hpairs = [(hnan, h(1.0)), (h(2.0), hqn), (hnan, hqn), (0, 0x8000), (0x8000, 0),
              (0x7C00, 0xFC00), (h(-1.0), h(-2.0)), (1, 0x8001)]
    bpairs = [(bnan, bf(1.0)), (bf(-3.0), 0xFF81), (0x8000, 0), (0, 0x8000), (bf(2.0), bf(2.0)),
              (0xFF80, 0x7F80), (bf(0.5), bnan), (1, 0x8001)]
    fma_h = [(1.0, 1.0, -1.0), (2.0, 3.0, -7.0), (-0.0, 5.0, -0.0), (0.0, -5.0, 0.0),
             (-1.5, 2.0, 1.0), (256.0, 256.0, -1.0), (-256.0, 256.0, 0.0),
             (2.0 ** -14, -2.0 ** -10, 0.0), (0.5, 0.5, 0.25)]
    fma_b = [(1.0, 1.0, -1.0), (2.0, 3.0, -7.0), (-0.0, 5.0, -0.0), (2.0 ** 100, -2.0 ** 100, 1.0),
             (-1.5, 2.0, 1.0), (3.0, 3.0, -8.0), (2.0 ** -120, -2.0 ** -20, 0.0)]
    rnd16 = lambda: h(float(np.float16(rng.uniform(-8, 8))))
    rndb = lambda: round_to_bits(Fraction(float(rng.uniform(-8, 8))), "bf16")
    h16 = np.zeros((n, 10), dtype=np.uint16)
    for g in range(n):
        hx, hy = hpairs[g] if g < len(hpairs) else (rnd16(), rnd16())
        bx, by = bpairs[g] if g < len(bpairs) else (rndb(), rndb())
        ha = [h(v) for v in fma_h[g]] if g < len(fma_h) else [rnd16() for _ in range(3)]
        ba = [bf(v) for v in fma_b[g]] if g < len(fma_b) else [rndb() for _ in range(3)]
        h16[g] = [hx, hy, bx, by] + ha + ba
    P = lambda e: 2.0 ** e
    cvals = [-1.0, -0.0, 0.0, 1.0, float("nan"), float("-inf"), float("inf"), 65520.0, -65520.0,
             1 + P(-11), -(1 + 3 * P(-11)), P(-25), -P(-25), 3.0e38, -1e-40, 1 + P(-8),
             1 + P(-11) + P(-30), 1 + 3 * P(-12), -(1 + 3 * P(-12)), 1.5 * P(-140)]
    cvals += [float(v) for v in rng.uniform(-100, 100, 2 * n - len(cvals))]
    cf = [f32_bits(v) for v in cvals]
    for name, arr, dt in [("rv", rv, np.uint32), ("fx", fx, np.uint32), ("fy", fy, np.uint32),
                          ("cf", cf, np.uint32)]:
        save(t, name, np.array(arr, dtype=dt))
    save(t, "h16", h16.reshape(-1))

    def red(vals, op, signed=False):
        key = (lambda v: s32(v)) if signed else (lambda v: v)
        if op == "add":
            return sum(vals) & M32
        if op == "min":
            return min(vals, key=key)
        if op == "max":
            return max(vals, key=key)
        acc = vals[0]
        for v in vals[1:]:
            acc = {"and": acc & v, "or": acc | v, "xor": acc ^ v}[op]
        return acc

    out = np.zeros((n, 24), dtype=np.uint32)
    for w in warps:
        vals = [rv[g] for g in w]
        for g in w:
            o = out[g]
            o[0] = red(vals, "add")
            o[1] = red(vals, "min", True)
            o[2] = red(vals, "max", True)
            o[3] = red(vals, "min")
            o[4] = red(vals, "max")
            o[5] = red(vals, "and")
            o[6] = red(vals, "or")
            o[7] = red(vals, "xor")
            side = [v for k, v in zip(w, vals) if (k % 32 < 16) == (g % 32 < 16)]
            o[8] = red(side, "add")
    for g in range(n):
        o = out[g]
        o[9] = minmax_nan_ref(fx[g], fy[g], "f32", True)
        o[10] = minmax_nan_ref(fx[g], fy[g], "f32", False)
        hx, hy, bx, by, ha, hb, hc, ba, bb, bc = [int(v) for v in h16[g]]
        o[11] = minmax_nan_ref(hx, hy, "f16", True) | (minmax_nan_ref(hx, hy, "f16", False) << 16)
        o[12] = minmax_nan_ref(hx, hy, "f16", False) | (minmax_nan_ref(hy, hx, "f16", False) << 16)
        o[13] = minmax_nan_ref(bx, by, "bf16", True) | (minmax_nan_ref(bx, by, "bf16", False) << 16)
        o[14] = relu_ref(fma_ref(ha, hb, hc, "f16"), "f16") | \
            (relu_ref(fma_ref(ba, bb, bc, "bf16"), "bf16") << 16)
        o[15] = relu_ref(fma_ref(ha, hb, hc, "f16"), "f16") | \
            (relu_ref(fma_ref(hb, hc, ha, "f16"), "f16") << 16)
        o[16] = relu_ref(fma_ref(ba, bb, bc, "bf16"), "bf16") | \
            (relu_ref(fma_ref(bb, bc, ba, "bf16"), "bf16") << 16)
        x, y = cf[2 * g], cf[2 * g + 1]
        o[17] = relu_ref(cvt_f32_ref(x, "f16", "rn"), "f16") | \
            (relu_ref(cvt_f32_ref(x, "bf16", "rz"), "bf16") << 16)
        o[18] = (cvt_f32_ref(x, "f16", "rn") << 16) | cvt_f32_ref(y, "f16", "rn")
        o[19] = (relu_ref(cvt_f32_ref(x, "bf16", "rn"), "bf16") << 16) | \
            relu_ref(cvt_f32_ref(y, "bf16", "rn"), "bf16")
        o[20] = tf32_rna_ref(x)
        o[21] = (relu_ref(cvt_f32_ref(x, "f16", "rn"), "f16") << 16) | \
            relu_ref(cvt_f32_ref(y, "f16", "rn"), "f16")
        o[22] = minmax_nan_ref(bx, by, "bf16", False) | (minmax_nan_ref(by, bx, "bf16", False) << 16)
        o[23] = (relu_ref(cvt_f32_ref(y, "f16", "rz"), "f16") << 16) | \
            relu_ref(cvt_f32_ref(x, "f16", "rz"), "f16")
    save(t, "expected_out", out.reshape(-1))



# =============================================================================================
# newer_sm90 (sm_86/sm_90): .xorsign.abs, packed 16-bit integers, integer .relu, tf32 rn/rz,
# isspacep sub-qualifiers
# =============================================================================================

def minmax_xorsign_ref(x, y, fmt, want_max, nan=False):
    """min/max{.NaN}.xorsign.abs: min/max of |x| and |y| (a NaN input yields the other one,
    or the canonical NaN with .NaN), signed with sign(x) XOR sign(y) unless it is NaN."""
    ebits, fbits = FMT[fmt]
    sbit = 1 << (ebits + fbits)
    if nan and (is_nan_bits(x, fmt) or is_nan_bits(y, fmt)):
        return canon_nan(fmt)
    ax, ay = x & (sbit - 1), y & (sbit - 1)
    if is_nan_bits(ax, fmt) and is_nan_bits(ay, fmt):
        return canon_nan(fmt)
    r = minmax_ref(ax, ay, fmt, want_max)
    return (r & (sbit - 1)) | ((x ^ y) & sbit)


def tf32_ref(x, mode):
    """cvt.{rn,rz}.tf32.f32: round to 10 fraction bits with the f32 exponent range; NaN gives
    the canonical NaN in tf32 layout (as measured on an H100: docs/correlation/h100-sxm-2026-11-27)."""
    if is_nan_bits(x, "f32"):
        return (M32 >> 1) & ~0x1FFF
    v = f32_exact(bits_f32(x))
    if isinstance(v, float):
        return x
    return round_to_bits(v, "tf32", mode) << 13


def gen_newer_sm90():
    t = "newer_sm90"
    n = 64
    rng = np.random.default_rng(25001)
    rv = [0x80000000, 0x7FFFFFFF, M32, 0, 0x80007FFF, 0x0001FFFF, 0x12348000, 5]
    rw = [0x7FFFFFFF, 0x80000000, 0, M32, 0x7FFF8000, 0xFFFF0001, 0x8000FFFF, 0xFFFFFFFB]
    rv += [int(v) for v in rng.integers(0, 1 << 32, size=n - len(rv), dtype=np.uint64)]
    rw += [int(v) for v in rng.integers(0, 1 << 32, size=n - len(rw), dtype=np.uint64)]
    nanf = 0x7FC00000
    pairs = [(0xBF800000, 0x40000000), (0x3F800000, 0xC0000000), (0xC0400000, 0xC0000000),
             (0, 0x80000000), (0x80000000, 0x80000000), (nanf, 0xBF800000),
             (0xBF800000, 0xFFC00001), (nanf, nanf), (0xFF800000, 0x3F800000), (1, 0x80000002)]
    fx = [p[0] for p in pairs] + [f32_bits(float(v)) for v in rng.uniform(-10, 10, n - len(pairs))]
    fy = [p[1] for p in pairs] + [f32_bits(float(v)) for v in rng.uniform(-10, 10, n - len(pairs))]
    hpairs = [(h(-1.0), h(2.0)), (h(3.0), h(-2.0)), (0x7E00, h(-1.0)), (0x8000, 0),
              (h(-0.5), h(-0.25)), (0xFC00, h(1.0)), (0x7E00, 0x7E01)]
    bpairs = [(bf(-1.0), bf(2.0)), (0x7FC0, bf(-3.0)), (0x8000, 0x8000), (bf(4.0), bf(-4.0)),
              (0xFFC1, 0x7FC1)]
    rnd16 = lambda: h(float(np.float16(rng.uniform(-8, 8))))
    rndb = lambda: round_to_bits(Fraction(float(rng.uniform(-8, 8))), "bf16")
    h16 = np.zeros((n, 4), dtype=np.uint16)
    for g in range(n):
        hx, hy = hpairs[g] if g < len(hpairs) else (rnd16(), rnd16())
        bx, by = bpairs[g] if g < len(bpairs) else (rndb(), rndb())
        h16[g] = [hx, hy, bx, by]
    P = lambda e: 2.0 ** e
    cvals = [-1.0, -0.0, 0.0, float("nan"), float("inf"), float("-inf"), 1 + P(-11),
             1 + 3 * P(-11), -(1 + 3 * P(-11)), 1 + P(-11) + P(-23), 3.4e38, -1e-40,
             1.5 * P(-140), float(np.finfo(np.float32).max)]
    cvals += [float(v) for v in rng.uniform(-100, 100, n - len(cvals))]
    cf = [f32_bits(v) for v in cvals]
    for name, arr, dt in [("rv", rv, np.uint32), ("rw", rw, np.uint32), ("fx", fx, np.uint32),
                          ("fy", fy, np.uint32), ("cf", cf, np.uint32)]:
        save(t, name, np.array(arr, dtype=dt))
    save(t, "h16", h16.reshape(-1))

    def halves(x, y, f):
        return f(x & 0xFFFF, y & 0xFFFF) | (f(x >> 16, y >> 16) << 16)

    u16max = lambda a, b: max(a, b)
    s16 = lambda v: v - 0x10000 if v & 0x8000 else v
    s16min = lambda a, b: min(s16(a), s16(b)) & 0xFFFF
    s16relu = lambda a, b: max(s16(a), s16(b), 0) & 0xFFFF
    out = np.zeros((n, 12), dtype=np.uint32)
    for g in range(n):
        o = out[g]
        o[0] = minmax_xorsign_ref(fx[g], fy[g], "f32", True)
        o[1] = minmax_xorsign_ref(fx[g], fy[g], "f32", False)
        hx, hy, bx, by = [int(v) for v in h16[g]]
        o[2] = minmax_xorsign_ref(hx, hy, "f16", True, nan=True) | \
            (minmax_xorsign_ref(hx, hy, "f16", False) << 16)
        o[3] = minmax_xorsign_ref(bx, by, "bf16", False) | \
            (minmax_xorsign_ref(by, bx, "bf16", False) << 16)
        x, y = rv[g], rw[g]
        o[4] = halves(x, y, u16max)
        o[5] = halves(x, y, s16min)
        o[6] = halves(x, y, s16relu)
        o[7] = max(s32(x), s32(y), 0) & M32
        o[8] = max(min(s32(x), s32(y)), 0) & M32
        o[9] = tf32_ref(cf[g], "rn")
        r = tf32_ref(cf[g], "rz")
        o[10] = r if is_nan_bits(r, "f32") or not r >> 31 else 0
        # &smem[g]: shared (both sub-spaces); out: neither; a kernel parameter: param::entry;
        # the ld.shared::cta check holds.
        o[11] = 1 | 2 | 256 | 512
    save(t, "expected_out", out.reshape(-1))


TRACES = {
    "warp_match": gen_warp_match,
    "sfu_approx": gen_sfu_approx,
    "tanh_sm75": gen_tanh_sm75,
    "select_set": gen_select_set,
    "int_mul": gen_int_mul,
    "bitfield_prmt": gen_bitfield_prmt,
    "setp_minmax": gen_setp_minmax,
    "shfl_segments": gen_shfl_segments,
    "half_cvt": gen_half_cvt,
    "bf16_sm80": gen_bf16_sm80,
    "mem_spaces": gen_mem_spaces,
    "atomics_more": gen_atomics_more,
    "barriers": gen_barriers,
    "sregs": gen_sregs,
    "calls_brx": gen_calls_brx,
    "int_misc": gen_int_misc,
    "fp_misc": gen_fp_misc,
    "cvt_more": gen_cvt_more,
    "cvt_f2i": gen_cvt_f2i,
    "cvt_f2i_bf16": gen_cvt_f2i_bf16,
    "mem_more": gen_mem_more,
    "prefetch_levels": gen_prefetch_levels,
    "hexfloat_bits": gen_hexfloat_bits,
    "operand_forms": gen_operand_forms,
    "newer_bits": gen_newer_bits,
    "newer_sm80": gen_newer_sm80,
    "newer_sm90": gen_newer_sm90,
}


def main(argv):
    names = argv[1:] or list(TRACES)
    for name in names:
        if name not in TRACES:
            sys.exit(f"unknown trace {name!r}; known: {', '.join(TRACES)}")
        os.makedirs(os.path.join(HERE, name), exist_ok=True)
        TRACES[name]()
        print(f"{name}: written")


if __name__ == "__main__":
    main(sys.argv)
