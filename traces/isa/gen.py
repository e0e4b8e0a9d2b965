#!/usr/bin/env python3
"""Generate the inputs and expected outputs of the hand-written PTX traces in traces/isa/.

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
    "f32": (8, 23),
}


def round_to_bits(v, fmt, mode="rn"):
    """Round the exact value v (Fraction, or +-inf as float) to `fmt`; return the bit pattern.

    mode: 'rn' nearest even, 'rz' toward zero. Overflow: rn -> inf, rz -> largest finite.
    A zero result keeps the sign of v (v must not be an exact zero of unknown sign; pass
    a float -0.0 for negative zero)."""
    ebits, fbits = FMT[fmt]
    bias = (1 << (ebits - 1)) - 1
    sign_shift = ebits + fbits
    if isinstance(v, float):
        if math.isinf(v):
            return ((1 if v < 0 else 0) << sign_shift) | (((1 << ebits) - 1) << fbits)
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
    if mode == "rn":
        if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
            n += 1
    elif mode != "rz":
        raise ValueError(mode)
    if n == (1 << (fbits + 1)):          # carried into the next binade
        n >>= 1
        e += 1
    emax = bias
    if e > emax or (e == emax and n >= (1 << (fbits + 1))):
        if mode == "rz":
            return (sign << sign_shift) | (((1 << ebits) - 2) << fbits) | ((1 << fbits) - 1)
        return (sign << sign_shift) | (((1 << ebits) - 1) << fbits)
    if n < (1 << fbits):                  # subnormal (or zero)
        return (sign << sign_shift) | n
    return (sign << sign_shift) | ((e + bias) << fbits) | (n - (1 << fbits))


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


def u32_of_f32(x):
    return int(np.float32(x).view(np.uint32))


def u64_of_f64(x):
    return int(np.float64(x).view(np.uint64))


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


TRACES = {
    "warp_match": gen_warp_match,
    "sfu_approx": gen_sfu_approx,
    "tanh_sm75": gen_tanh_sm75,
    "select_set": gen_select_set,
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
