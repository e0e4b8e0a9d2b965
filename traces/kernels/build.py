#!/usr/bin/env python3
"""Build the gpusim kernel corpus in traces/kernels/.

What it does
------------
For every kernel NAME registered below (one folder ``traces/kernels/NAME/``):

1. compiles the hand-written CUDA source ``NAME/NAME.cu`` to ``NAME/NAME.ptx``
   with NVRTC (``--gpu-architecture=compute_52`` plus per-kernel options such as
   ``--fmad=false`` or ``--jump-table-density=10``), called through ctypes;
2. validates the PTX with ``ptxas -arch=sm_52 NAME.ptx -o /dev/null``;
3. generates the inputs with numpy from fixed seeds and saves them as
   ``NAME/*.npy``;
4. computes the expected outputs *independently* with numpy / plain Python
   (np.cumsum, np.histogram, matrix products, np.sort, a deque BFS, exact
   rational rounding with ``fractions.Fraction`` for the conversion and
   rounding-mode kernels, ...) and saves them as ``NAME/expected_*.npy``;
5. writes the simulator's launch manifest ``NAME/NAME.yaml``;
6. checks the manifest against the PTX and the files: every referenced file
   exists, each launch's arg count equals the ``.entry``'s ``.param`` count and
   each arg suits its param type (buffer name -> .u64/.b64 pointer, float -> .f32/.f64,
   integer -> an integer type), buffer shapes/dtypes equal the .npy files, checks
   on integer buffers have no tolerances, threads per launch <= 16384,
   static + dynamic shared memory <= 48 KiB. If PyYAML is installed, the manifest
   is also parsed back and compared with what was meant to be written.

Finally it writes ``opcodes.txt``: every distinct PTX opcode (with all its
modifiers) found in the generated .ptx files, with counts and the kernels using it.

Everything generated is committed, so the simulator's tests need neither NVRTC
nor numpy. The script is deterministic: rerunning it reproduces byte-identical
files (old generated *.ptx, *.yaml, *.npy in a kernel folder are deleted first).

How to run
----------
    pip install nvidia-cuda-nvrtc-cu12 nvidia-cuda-nvcc-cu12 nvidia-cuda-runtime-cu12 numpy
    python3 traces/kernels/build.py             # rebuild every kernel
    python3 traces/kernels/build.py vecadd bfs_step   # rebuild some kernels
    python3 traces/kernels/build.py --verify    # only re-check the committed files
                                                # (needs numpy + PyYAML, no NVRTC;
                                                # runs ptxas if found)

What it needs
-------------
* Python 3.8+ and numpy (PyYAML optional, used for a round-trip check).
* libnvrtc.so.12: found in site-packages nvidia/cuda_nvrtc/lib (wheel
  ``nvidia-cuda-nvrtc-cu12``), or set NVRTC_LIB=/path/to/libnvrtc.so.12.
* ptxas: from the ``nvidia-cuda-nvcc-cu12`` wheel (nvidia/cuda_nvcc/bin), from PATH,
  or set PTXAS=/path/to/ptxas.
* cuda_fp16.h for the ``conversions`` kernel only: from the
  ``nvidia-cuda-runtime-cu12`` wheel (nvidia/cuda_runtime/include), or set
  CUDA_INCLUDE=/path/to/cuda/include.
The committed files were produced with NVRTC 12.9 (CUDA 12.9.86 wheels).
"""

import argparse
import ctypes
import glob
import math
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
from collections import OrderedDict, deque
from fractions import Fraction

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ARCH_OPTS = ["--gpu-architecture=compute_52"]
PTXAS_ARCH = "sm_52"
MAX_THREADS = 16384
MAX_SHARED = 48 * 1024

DTYPES = OrderedDict([
    ("u8", np.uint8), ("i8", np.int8), ("u16", np.uint16), ("i16", np.int16),
    ("u32", np.uint32), ("i32", np.int32), ("u64", np.uint64), ("i64", np.int64),
    ("f16", np.float16), ("f32", np.float32), ("f64", np.float64),
])
FLOAT_DTYPES = {"f16", "bf16", "f32", "f64"}
NP_TO_DT = {np.dtype(v): k for k, v in DTYPES.items()}

M32 = (1 << 32) - 1
M64 = (1 << 64) - 1


# --------------------------------------------------------------------------
# Tool discovery
# --------------------------------------------------------------------------

def _site_dirs():
    dirs = []
    try:
        dirs += site.getsitepackages()
    except AttributeError:
        pass
    try:
        dirs.append(site.getusersitepackages())
    except AttributeError:
        pass
    dirs += [p for p in sys.path if p.endswith("site-packages")]
    out = []
    for d in dirs:
        if d and d not in out and os.path.isdir(d):
            out.append(d)
    return out


def _find_in_site(rel):
    for d in _site_dirs():
        p = os.path.join(d, rel)
        if os.path.exists(p):
            return p
    return None


def find_nvrtc():
    p = os.environ.get("NVRTC_LIB") or _find_in_site("nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
    if not p:
        import ctypes.util
        p = ctypes.util.find_library("nvrtc")
    if not p:
        sys.exit("libnvrtc.so.12 not found: pip install nvidia-cuda-nvrtc-cu12 or set NVRTC_LIB")
    return p


def find_ptxas():
    p = os.environ.get("PTXAS") or _find_in_site("nvidia/cuda_nvcc/bin/ptxas") or shutil.which("ptxas")
    return p


def find_cuda_include():
    p = os.environ.get("CUDA_INCLUDE") or _find_in_site("nvidia/cuda_runtime/include")
    if not p or not os.path.exists(os.path.join(p, "cuda_fp16.h")):
        sys.exit("cuda_fp16.h not found: pip install nvidia-cuda-runtime-cu12 or set CUDA_INCLUDE")
    return p


class Nvrtc:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._ok(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)))
        self.version = (major.value, minor.value)

    def _ok(self, rc, what="nvrtc"):
        if rc != 0:
            raise RuntimeError("%s failed: %s" % (what, self.lib.nvrtcGetErrorString(rc).decode()))

    def compile(self, src, name, opts):
        prog = ctypes.c_void_p()
        self._ok(self.lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(),
                                             0, None, None), "nvrtcCreateProgram")
        try:
            copts = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
            rc = self.lib.nvrtcCompileProgram(prog, len(opts), copts)
            n = ctypes.c_size_t()
            self._ok(self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n)))
            log = ctypes.create_string_buffer(n.value)
            self._ok(self.lib.nvrtcGetProgramLog(prog, log))
            log = log.value.decode(errors="replace")
            if rc != 0:
                raise RuntimeError("NVRTC could not compile %s:\n%s" % (name, log))
            self._ok(self.lib.nvrtcGetPTXSize(prog, ctypes.byref(n)))
            ptx = ctypes.create_string_buffer(n.value)
            self._ok(self.lib.nvrtcGetPTX(prog, ptx))
            return ptx.value.decode(), log
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(prog))


# --------------------------------------------------------------------------
# Kernel context: buffers, launches, checks, manifest
# --------------------------------------------------------------------------

class Ctx:
    """Collects what one kernel's builder declares and writes its files."""

    def __init__(self, name, folder):
        self.name = name
        self.dir = folder
        self.buffers = OrderedDict()   # name -> dict(dtype, shape, init)
        self.launches = []
        self.checks = []
        self.files = {}                # npy filename -> array (written later)

    @staticmethod
    def rng(seed):
        return np.random.default_rng(seed)

    def _save(self, fname, arr):
        assert fname not in self.files, fname
        arr = np.ascontiguousarray(arr)
        assert arr.ndim == 1, "%s: buffers are flat (1-D), got shape %s" % (fname, arr.shape)
        self.files[fname] = arr
        return fname

    def input(self, name, arr):
        """A buffer initialised from NAME.npy (dtype taken from the array)."""
        arr = np.asarray(arr)
        dt = NP_TO_DT[arr.dtype]
        fname = self._save(name + ".npy", arr)
        self.buffers[name] = OrderedDict([("dtype", dt), ("shape", [int(arr.size)]),
                                          ("init", OrderedDict([("npy", fname)]))])
        return name

    def buffer(self, name, dtype, size, init="zeros"):
        """A buffer with a non-npy init: 'zeros', ('fill', x) or ('values', [...])."""
        assert dtype in DTYPES
        if init == "zeros":
            spec = "zeros"
        elif init[0] == "fill":
            spec = OrderedDict([("fill", init[1])])
        elif init[0] == "values":
            vals = [int(v) if dtype not in FLOAT_DTYPES else float(v) for v in init[1]]
            assert len(vals) == size
            spec = OrderedDict([("values", vals)])
        else:
            raise ValueError(init)
        self.buffers[name] = OrderedDict([("dtype", dtype), ("shape", [int(size)]), ("init", spec)])
        return name

    def launch(self, entry, grid, block, args, shared_bytes=0):
        grid = list(grid) + [1] * (3 - len(grid))
        block = list(block) + [1] * (3 - len(block))
        self.launches.append(OrderedDict([("entry", entry), ("grid", grid), ("block", block),
                                          ("shared_bytes", int(shared_bytes)), ("args", list(args))]))

    def check(self, buffer, expected, rtol=None, atol=None, inline=False):
        expected = np.asarray(expected)
        buf = self.buffers[buffer]
        want = DTYPES[buf["dtype"]]
        assert expected.dtype == want, "%s: expected dtype %s, buffer is %s" % (
            buffer, expected.dtype, buf["dtype"])
        assert expected.shape == tuple(buf["shape"]), "%s: expected shape %s != %s" % (
            buffer, expected.shape, buf["shape"])
        c = OrderedDict([("buffer", buffer)])
        if inline:
            if buf["dtype"] in FLOAT_DTYPES:
                c["values"] = [float(v) for v in expected]
            else:
                c["values"] = [int(v) for v in expected]
        else:
            c["npy"] = self._save("expected_%s.npy" % buffer, expected)
        if rtol is not None:
            c["rtol"] = float(rtol)
        if atol is not None:
            c["atol"] = float(atol)
        self.checks.append(c)

    def manifest(self):
        return OrderedDict([("kernel", self.name + ".ptx"), ("launches", self.launches),
                            ("buffers", self.buffers), ("checks", self.checks)])


# --------------------------------------------------------------------------
# YAML emitter (the manifest subset only; deterministic formatting)
# --------------------------------------------------------------------------

def yfloat(x):
    x = float(x)
    assert math.isfinite(x), x
    if x == 0:
        return "0.0"
    r = repr(x)
    if "e" in r or "E" in r:
        m, e = r.lower().split("e")
        if "." not in m:
            m += ".0"
        return "%se%d" % (m, int(e))
    if "." not in r:
        r += ".0"
    return r


def yscalar(v):
    if isinstance(v, bool):
        raise TypeError("no booleans in manifests")
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return yfloat(v)
    if isinstance(v, str):
        assert re.match(r"^[A-Za-z_][A-Za-z0-9_.]*$", v), v
        return v
    raise TypeError(type(v))


def yflow(v):
    if isinstance(v, dict):
        return "{ " + ", ".join("%s: %s" % (k, yflow(x)) for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(yflow(x) for x in v) + "]"
    return yscalar(v)


def emit_yaml(m, header):
    out = [header, "kernel: %s" % m["kernel"], "launches:"]
    for L in m["launches"]:
        out.append("  - entry: %s" % L["entry"])
        out.append("    grid: %s" % yflow(L["grid"]))
        out.append("    block: %s" % yflow(L["block"]))
        out.append("    shared_bytes: %d" % L["shared_bytes"])
        out.append("    args: %s" % yflow(L["args"]))
    out.append("buffers:")
    for name, b in m["buffers"].items():
        out.append("  %s: %s" % (name, yflow(b)))
    out.append("checks:")
    for c in m["checks"]:
        first = True
        for k, v in c.items():
            out.append(("  - " if first else "    ") + "%s: %s" % (k, yflow(v)))
            first = False
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# PTX inspection
# --------------------------------------------------------------------------

def ptx_entries(ptx):
    """{entry name: [param type, ...]} for every .entry in the module."""
    entries = OrderedDict()
    for m in re.finditer(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(([^)]*)\)", ptx):
        params = []
        for chunk in m.group(2).split(","):
            if not chunk.strip():
                continue
            assert ".param" in chunk, chunk
            types = re.findall(r"\.([usbf](?:8|16|32|64))\b", chunk)
            params.append("aggregate" if "[" in chunk else types[-1])
        entries[m.group(1)] = params
    return entries


def ptx_static_shared(ptx):
    """Total bytes of sized .shared declarations (module and function scope)."""
    total = 0
    sizes = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "b32": 4,
             "u32": 4, "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8}
    for m in re.finditer(r"^\s*(?:\.extern\s+)?\.shared\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+[\w$]+(?:\[(\d*)\])?",
                         ptx, re.M):
        count = m.group(3)
        if count == "":
            continue  # extern unsized: dynamic shared memory
        n = int(count) if count else 1
        align = int(m.group(1) or 1)
        total = (total + align - 1) // align * align + sizes[m.group(2)] * n
    return total


def ptx_opcodes(ptx):
    """Every instruction's opcode with modifiers (guard predicates removed).
    Works on ';'-terminated statements, so multi-line call sequences and
    inline-asm blocks ("{  cvt.rn.f16.f32 %rs1, %f1;}") are handled."""
    text = re.sub(r"//[^\n]*", "", ptx)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    ops = []
    for stmt in text.split(";"):
        s = stmt.strip()
        while True:
            s2 = re.sub(r"^(\{|\}|[\w$]+:)\s*", "", s)
            if s2 == s:
                break
            s = s2
        if not s:
            continue
        if s.startswith(".branchtargets"):
            ops.append(".branchtargets")
            continue
        if s.startswith("."):
            continue                       # directive / declaration
        s = re.sub(r"^@!?%[\w$]+\s+", "", s)
        tok = s.split()[0].rstrip(",")
        assert re.match(r"^[a-z][a-z0-9_]*(\.[\w:]+)*$", tok), "odd statement: %r" % s[:80]
        ops.append(tok)
    return ops


# --------------------------------------------------------------------------
# Manifest verification
# --------------------------------------------------------------------------

INT_PARAM = {"u8", "s8", "b8", "u16", "s16", "b16", "u32", "s32", "b32", "u64", "s64", "b64"}
PTR_PARAM = {"u64", "b64", "s64"}
FLOAT_PARAM = {"f32", "f64"}
INT_RANGE = {"8": 8, "16": 16, "32": 32, "64": 64}


def verify(name, folder, manifest, ptx):
    where = "[%s] " % name
    entries = ptx_entries(ptx)
    assert entries, where + "no .entry in PTX"
    assert manifest["kernel"] == name + ".ptx"
    assert os.path.exists(os.path.join(folder, manifest["kernel"])), where + "PTX missing"
    bufs = manifest["buffers"]
    used = set()
    static_shared = ptx_static_shared(ptx)
    for L in manifest["launches"]:
        e = L["entry"]
        assert e in entries, where + "entry %s not in PTX (%s)" % (e, list(entries))
        params = entries[e]
        args = L["args"]
        assert len(args) == len(params), where + "%s: %d args for %d params %s" % (
            e, len(args), len(params), params)
        for a, p in zip(args, params):
            if isinstance(a, str):
                assert a in bufs, where + "arg %s is not a buffer" % a
                assert p in PTR_PARAM, where + "buffer %s passed to a .%s param" % (a, p)
                used.add(a)
            elif isinstance(a, float):
                assert p in FLOAT_PARAM, where + "float %r passed to a .%s param" % (a, p)
                if p == "f32":
                    assert float(np.float32(a)) == a, where + "%r is not exact in f32" % a
            else:
                assert isinstance(a, int) and p in INT_PARAM, where + "%r -> .%s" % (a, p)
                bits = INT_RANGE[re.sub(r"\D", "", p)]
                lo = -(1 << (bits - 1)) if p[0] == "s" else (-(1 << (bits - 1)) if p[0] == "b" else 0)
                assert lo <= a < (1 << bits), where + "%d does not fit .%s" % (a, p)
        assert all(isinstance(v, int) and v >= 1 for v in L["grid"] + L["block"])
        tpb = L["block"][0] * L["block"][1] * L["block"][2]
        assert tpb <= 1024 and L["block"][2] <= 64, where + "block too big"
        total = tpb * L["grid"][0] * L["grid"][1] * L["grid"][2]
        assert total <= MAX_THREADS, where + "%d threads > %d" % (total, MAX_THREADS)
        assert static_shared + L["shared_bytes"] <= MAX_SHARED, where + "shared memory"
        if L["shared_bytes"]:
            assert re.search(r"\.extern\s+\.shared", ptx), where + "shared_bytes without extern .shared"
    for bname, b in bufs.items():
        assert bname in used, where + "buffer %s is never passed to a launch" % bname
        assert b["dtype"] in DTYPES, where + b["dtype"]
        assert len(b["shape"]) == 1 and b["shape"][0] >= 1
        init = b["init"]
        if isinstance(init, dict) and "npy" in init:
            path = os.path.join(folder, init["npy"])
            assert os.path.exists(path), where + "missing " + init["npy"]
            arr = np.load(path)
            assert arr.dtype == DTYPES[b["dtype"]], where + "%s dtype %s != %s" % (
                init["npy"], arr.dtype, b["dtype"])
            assert list(arr.shape) == b["shape"], where + "%s shape %s != %s" % (
                init["npy"], arr.shape, b["shape"])
        elif isinstance(init, dict) and "values" in init:
            assert len(init["values"]) == b["shape"][0]
        else:
            assert init == "zeros" or (isinstance(init, dict) and "fill" in init), init
    for c in manifest["checks"]:
        b = bufs[c["buffer"]]
        if "npy" in c:
            path = os.path.join(folder, c["npy"])
            assert os.path.exists(path), where + "missing " + c["npy"]
            arr = np.load(path)
            assert arr.dtype == DTYPES[b["dtype"]], where + "%s dtype %s" % (c["npy"], arr.dtype)
            assert list(arr.shape) == b["shape"], where + "%s shape %s" % (c["npy"], arr.shape)
        else:
            assert len(c["values"]) == b["shape"][0]
        if b["dtype"] in FLOAT_DTYPES:
            assert "rtol" in c and "atol" in c, where + "float check without tolerances"
            if "npy" in c:
                assert np.all(np.isfinite(np.load(os.path.join(folder, c["npy"])))), \
                    where + "non-finite expected value in a tolerance check"
        else:
            assert "rtol" not in c and "atol" not in c, where + "integer check with tolerance"


def load_manifest_yaml(path):
    try:
        import yaml
    except ImportError:
        return None
    with open(path) as f:
        return yaml.safe_load(f)


def to_plain(x):
    if isinstance(x, dict):
        return {k: to_plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [to_plain(v) for v in x]
    return x


# --------------------------------------------------------------------------
# Exact rounding helpers (independent of any GPU code)
# --------------------------------------------------------------------------

def _bits(x):
    x = np.asarray(x)
    return int(x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]))


def round_rational(r, ftype, mode):
    """Round the exact rational r to ftype (np.float16/32/64) with IEEE mode
    'rn' (nearest even), 'rz', 'rd' (toward -inf) or 'ru' (toward +inf)."""
    r = Fraction(r)
    assert r != 0, "exact zero: caller must decide the sign"
    if r < 0:
        mirrored = {"rd": "ru", "ru": "rd"}.get(mode, mode)
        return -_round_pos(-r, ftype, mirrored)
    return _round_pos(r, ftype, mode)


def _round_pos(r, ftype, mode):
    fmax = ftype(np.finfo(ftype).max)
    M = Fraction(float(fmax))
    if r > M:
        ulp = M - Fraction(float(np.nextafter(fmax, ftype(0))))
        if mode == "rn":
            return ftype(np.inf) if r >= M + ulp / 2 else fmax
        return ftype(np.inf) if mode == "ru" else fmax
    c = ftype(float(r))
    fc = Fraction(float(c))
    if fc == r:
        return c
    if fc < r:
        lo, hi = c, np.nextafter(c, ftype(np.inf))
    else:
        lo, hi = np.nextafter(c, ftype(0)), c
    assert Fraction(float(lo)) < r < Fraction(float(hi))
    if mode in ("rz", "rd"):
        return lo
    if mode == "ru":
        return hi
    dlo, dhi = r - Fraction(float(lo)), Fraction(float(hi)) - r
    if dlo != dhi:
        return lo if dlo < dhi else hi
    return lo if _bits(lo) % 2 == 0 else hi


def convert_float(x, ftype, mode):
    """IEEE conversion of a finite-or-infinite non-NaN float x to ftype."""
    x = float(x)
    assert not math.isnan(x)
    if math.isinf(x) or x == 0.0:
        return ftype(x)
    return round_rational(Fraction(x), ftype, mode)


def f2int(x, mode, bits, signed, src_is_f64):
    """PTX cvt.{rni,rzi,rmi,rpi}.{s,u}{bits}.{f32,f64}: clamp to range; NaN gives
    0 for f32 -> 8/16/32-bit, else 1 << (bits - 1) (PTX ISA, cvt, Integer Notes)."""
    lo = -(1 << (bits - 1)) if signed else 0
    hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    x = float(x)
    if math.isnan(x):
        v = 0 if (not src_is_f64 and bits < 64) else (1 << (bits - 1))
        return v & ((1 << bits) - 1)
    if math.isinf(x):
        v = hi if x > 0 else lo
    else:
        r = Fraction(x)
        v = {"rni": round(r), "rzi": int(r), "rmi": math.floor(r), "rpi": math.ceil(r)}[mode]
        v = min(max(v, lo), hi)
    return v & ((1 << bits) - 1)


def f32_bits(x):
    return np.asarray(np.float32(x)).view(np.uint32)[()]


def f64_bits(x):
    return np.asarray(np.float64(x)).view(np.uint64)[()]


def f16_bits(x):
    return np.asarray(np.float16(x)).view(np.uint16)[()]


def to_s32(x):
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def to_s64(x):
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def c_div(a, b):
    """C integer division (truncates toward zero) and remainder."""
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    return q, a - q * b


def u32(a):
    return np.asarray(a, dtype=np.uint64).astype(np.uint32)


# --------------------------------------------------------------------------
# Kernel registry
# --------------------------------------------------------------------------

KERNELS = OrderedDict()


def kernel(name, opts=(), cuda_include=False):
    def deco(fn):
        KERNELS[name] = (fn, list(opts), cuda_include)
        return fn
    return deco


def blocks(n, b):
    return (n + b - 1) // b


@kernel("vecadd")
def build_vecadd(k):
    rng = k.rng(1)
    n = 1000
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    k.input("a", a)
    k.input("b", b)
    k.buffer("c", "f32", n)
    k.launch("vecadd", [blocks(n, 256)], [256], ["a", "b", "c", n])
    k.check("c", a + b, rtol=1e-6, atol=1e-6)


@kernel("saxpy")
def build_saxpy(k):
    rng = k.rng(2)
    n = 4000
    alpha = 2.5
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = rng.uniform(-1, 1, n).astype(np.float32)
    k.input("x", x)
    k.input("y", y)
    k.launch("saxpy", [4], [128], [n, alpha, "x", "y"])
    expect = (alpha * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)
    k.check("y", expect, rtol=1e-5, atol=1e-6)


@kernel("reduce_shared")
def build_reduce_shared(k):
    rng = k.rng(3)
    n = 4000
    x = rng.integers(-1000, 1001, n).astype(np.int32)
    k.input("x", x)
    nblk = blocks(n, 256)                                   # 16
    k.buffer("partial", "i32", nblk)
    k.buffer("total", "i32", 1)
    k.launch("reduce_shared", [nblk], [256], ["x", "partial", n])
    k.launch("reduce_shared", [1], [256], ["partial", "total", nblk])
    padded = np.zeros(nblk * 256, np.int64)
    padded[:n] = x
    k.check("partial", padded.reshape(nblk, 256).sum(axis=1).astype(np.int32))
    k.check("total", np.array([x.astype(np.int64).sum()], np.int32), inline=True)


@kernel("reduce_shfl")
def build_reduce_shfl(k):
    rng = k.rng(4)
    n = 3000
    x = rng.integers(-50000, 50001, n).astype(np.int32)
    k.input("x", x)
    nblk = blocks(n, 256)                                   # 12
    nwarps = nblk * 256 // 32                               # 96
    k.buffer("warp_sums", "i32", nwarps)
    k.buffer("total", "i32", 1)
    k.launch("reduce_shfl", [nblk], [256], ["x", "warp_sums", "total", n])
    padded = np.zeros(nwarps * 32, np.int64)
    padded[:n] = x
    k.check("warp_sums", padded.reshape(nwarps, 32).sum(axis=1).astype(np.int32))
    k.check("total", np.array([x.astype(np.int64).sum()], np.int32), inline=True)


@kernel("block_scan")
def build_block_scan(k):
    rng = k.rng(5)
    n = 1000
    x = rng.integers(-100, 101, n).astype(np.int32)
    k.input("x", x)
    k.buffer("y", "i32", n)
    k.launch("block_scan", [blocks(n, 256)], [256], ["x", "y", n])
    expect = np.concatenate([np.cumsum(x[s:s + 256], dtype=np.int64) for s in range(0, n, 256)])
    k.check("y", expect.astype(np.int32))


@kernel("histogram")
def build_histogram(k):
    rng = k.rng(6)
    n = 5000
    # skewed, clipped normal so the bins have very different counts
    data = np.clip(np.round(rng.normal(100, 45, n)), 0, 255).astype(np.uint32)
    k.input("data", data)
    k.buffer("hist", "u32", 64)
    k.launch("histogram", [8], [128], ["data", "hist", n])
    counts, _ = np.histogram(data, bins=64, range=(0, 256))
    k.check("hist", counts.astype(np.uint32))


@kernel("transpose")
def build_transpose(k):
    rng = k.rng(7)
    width, height = 80, 50
    m = rng.standard_normal((height, width)).astype(np.float32)
    k.input("src", m.ravel())
    k.buffer("out", "f32", width * height)
    k.launch("transpose", [blocks(width, 32), blocks(height, 32)], [32, 8],
             ["src", "out", width, height])
    k.check("out", np.ascontiguousarray(m.T).ravel(), rtol=0.0, atol=0.0)


@kernel("sgemm_naive")
def build_sgemm_naive(k):
    rng = k.rng(8)
    M = N = K = 64
    A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    B = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    k.input("A", A.ravel())
    k.input("B", B.ravel())
    k.buffer("C", "f32", M * N)
    k.launch("sgemm_naive", [blocks(N, 16), blocks(M, 16)], [16, 16], ["A", "B", "C", M, N, K])
    C = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)
    k.check("C", C.ravel(), rtol=1e-4, atol=1e-4)


@kernel("sgemm_tiled")
def build_sgemm_tiled(k):
    rng = k.rng(9)
    M, N, K = 48, 64, 40
    A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    B = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    k.input("A", A.ravel())
    k.input("B", B.ravel())
    k.buffer("C", "f32", M * N)
    k.launch("sgemm_tiled", [blocks(N, 16), blocks(M, 16)], [16, 16], ["A", "B", "C", M, N, K])
    C = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)
    k.check("C", C.ravel(), rtol=1e-4, atol=1e-4)


@kernel("stencil")
def build_stencil(k):
    rng = k.rng(10)
    w, h = 64, 48
    c0, c1 = 0.5, 0.125
    img = rng.uniform(0, 1, (h, w)).astype(np.float32)
    k.input("img", img.ravel())
    k.buffer("out", "f32", w * h)
    k.launch("stencil", [blocks(w, 16), blocks(h, 8)], [16, 8], ["img", "out", w, h, c0, c1])
    p = np.pad(img.astype(np.float64), 1, mode="edge")
    s = p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1]
    expect = (c0 * p[1:-1, 1:-1] + c1 * s).astype(np.float32)
    k.check("out", expect.ravel(), rtol=1e-5, atol=1e-6)


@kernel("spmv_csr")
def build_spmv_csr(k):
    rng = k.rng(11)
    nrows, ncols = 500, 400
    dense = np.zeros((nrows, ncols), np.float32)
    for r in range(nrows):
        nnz = int(rng.integers(0, 17))          # 0..16, some rows empty
        cols = rng.choice(ncols, nnz, replace=False)
        dense[r, cols] = rng.uniform(-1, 1, nnz).astype(np.float32)
    x = rng.uniform(-1, 1, ncols).astype(np.float32)
    rows, cols = np.nonzero(dense)               # row-major order = CSR order
    row_ptr = np.zeros(nrows + 1, np.int32)
    row_ptr[1:] = np.cumsum(np.bincount(rows, minlength=nrows))
    k.input("row_ptr", row_ptr)
    k.input("col_idx", cols.astype(np.int32))
    k.input("vals", dense[rows, cols].astype(np.float32))
    k.input("x", x)
    k.buffer("y", "f32", nrows)
    k.launch("spmv_csr", [blocks(nrows, 128)], [128],
             [nrows, "row_ptr", "col_idx", "vals", "x", "y"])
    expect = (dense.astype(np.float64) @ x.astype(np.float64)).astype(np.float32)
    k.check("y", expect, rtol=1e-4, atol=1e-5)


@kernel("bfs_step")
def build_bfs_step(k):
    rng = k.rng(12)
    n = 1024
    nlaunch = 5
    # random sparse undirected graph (1200 edges, average degree ~2.3): its BFS
    # from node 0 is deeper than the 5 launched levels
    edges = set()
    while len(edges) < 1200:
        u, v = (int(t) for t in rng.integers(0, n, 2))
        if u != v:
            edges.add((min(u, v), max(u, v)))
    adj = [[] for _ in range(n)]
    for u, v in sorted(edges):
        adj[u].append(v)
        adj[v].append(u)
    for lst in adj:
        lst.sort()
    row_ptr = np.zeros(n + 1, np.int32)
    row_ptr[1:] = np.cumsum([len(a) for a in adj])
    col_idx = np.array([v for a in adj for v in a], np.int32)
    # reference BFS (queue based)
    level = [-1] * n
    level[0] = 0
    q = deque([0])
    while q:
        u = q.popleft()
        for v in adj[u]:
            if level[v] < 0:
                level[v] = level[u] + 1
                q.append(v)
    level = np.array(level)
    dist_exp = np.where((level >= 0) & (level <= nlaunch), level, -1).astype(np.int32)
    counts_exp = np.zeros(8, np.int32)
    for l in range(nlaunch):
        counts_exp[l] = np.count_nonzero(level == l + 1)
    assert counts_exp[nlaunch - 1] > 0 and np.count_nonzero(level > nlaunch) > 0
    k.input("row_ptr", row_ptr)
    k.input("col_idx", col_idx)
    fa = np.zeros(n, np.int32)
    fa[0] = 1
    k.input("frontier_a", fa)
    k.buffer("frontier_b", "i32", n)
    dist0 = np.full(n, -1, np.int32)
    dist0[0] = 0
    k.input("dist", dist0)
    k.buffer("counts", "i32", 8)
    bufs = ["frontier_a", "frontier_b"]
    for l in range(nlaunch):
        cur, nxt = bufs[l % 2], bufs[(l + 1) % 2]
        k.launch("bfs_step", [blocks(n, 256)], [256],
                 ["row_ptr", "col_idx", cur, nxt, "dist", "counts", l, n])
    final = bufs[nlaunch % 2]
    k.check("dist", dist_exp)
    k.check("counts", counts_exp, inline=True)
    k.check(final, (level == nlaunch).astype(np.int32))
    k.check(bufs[(nlaunch + 1) % 2], np.zeros(n, np.int32))


@kernel("bitonic_sort")
def build_bitonic_sort(k):
    rng = k.rng(13)
    keys = rng.integers(-5000, 5000, 2048).astype(np.int32)    # duplicates likely
    keys[:8] = [2147483647, -2147483648, 0, 0, -1, 1, 2147483647, -2147483648]
    k.input("keys", keys)
    k.launch("bitonic_sort", [2], [512], ["keys"])
    k.check("keys", np.concatenate([np.sort(keys[:1024]), np.sort(keys[1024:])]))


@kernel("softmax")
def build_softmax(k):
    rng = k.rng(14)
    rows, cols = 32, 200
    x = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
    k.input("x", x.ravel())
    k.buffer("y", "f32", rows * cols)
    k.launch("softmax", [rows], [128], ["x", "y", cols])
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=1, keepdims=True))
    k.check("y", (e / e.sum(axis=1, keepdims=True)).astype(np.float32).ravel(),
            rtol=1e-4, atol=1e-7)


@kernel("compact")
def build_compact(k):
    rng = k.rng(15)
    n = 2000
    x = rng.integers(-10000, 10000, n).astype(np.int32)
    k.input("x", x)
    k.buffer("out", "i32", n, ("fill", -1))
    k.buffer("count", "i32", 1)
    chunks = blocks(n, 256)
    k.buffer("warp_counts", "i32", chunks * 8)
    k.launch("compact", [1], [256], ["x", "out", "count", "warp_counts", n])
    keep = (x % 3) == 0
    kept = x[keep]
    out = np.full(n, -1, np.int32)
    out[:kept.size] = kept
    k.check("out", out)
    k.check("count", np.array([kept.size], np.int32), inline=True)
    padded = np.zeros(chunks * 256, bool)
    padded[:n] = keep
    k.check("warp_counts", padded.reshape(-1, 32).sum(axis=1).astype(np.int32))


@kernel("mandelbrot", opts=["--fmad=false"])
def build_mandelbrot(k):
    w, h, max_iter = 64, 48, 64
    x0, y0, dx, dy = -2.25, -1.5, 3.0 / 64, 3.0 / 48
    f = np.float32
    k.buffer("iters", "i32", w * h)
    k.launch("mandelbrot", [blocks(w, 16), blocks(h, 16)], [16, 16],
             ["iters", w, h, x0, y0, dx, dy, max_iter])
    # float32 escape-time loop, same operation order as the kernel (no fma)
    px, py = np.meshgrid(np.arange(w), np.arange(h))
    cx = f(x0) + px.astype(f) * f(dx)
    cy = f(y0) + py.astype(f) * f(dy)
    x = np.zeros_like(cx)
    y = np.zeros_like(cy)
    it = np.zeros(cx.shape, np.int32)
    active = np.ones(cx.shape, bool)
    for _ in range(max_iter):
        active &= (x * x + y * y) <= f(4.0)
        xt = x * x - y * y + cx
        yn = f(2.0) * x * y + cy
        x = np.where(active, xt, x)
        y = np.where(active, yn, y)
        it += active
    assert cx.dtype == np.float32 and x.dtype == np.float32
    k.check("iters", it.astype(np.int32).ravel())


HASH_MASK = M32


def _rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & M32


@kernel("device_func")
def build_device_func(k):
    rng = k.rng(16)
    n = 500
    seed = 2654435761
    pts = rng.uniform(-2, 2, 3 * n).astype(np.float32)
    d = np.array([0.6, -0.8, 0.25], np.float32)
    k.input("pts", pts)
    k.input("dir", d)
    k.buffer("hashes", "u32", n)
    k.buffer("dots", "f32", n)
    k.launch("device_func", [blocks(n, 128)], [128], ["pts", "dir", "hashes", "dots", seed, 3, n])

    def hash3(a, b, c):
        a = (a - c) & M32; a ^= _rotl(c, 4); c = (c + b) & M32
        b = (b - a) & M32; b ^= _rotl(a, 6); a = (a + c) & M32
        c = (c - b) & M32; c ^= _rotl(b, 8); b = (b + a) & M32
        return a ^ b ^ c

    hashes = np.array([hash3(i, seed, i // 128) for i in range(n)], np.uint32)
    dots = (pts.reshape(n, 3).astype(np.float64) @ d.astype(np.float64)).astype(np.float32)
    k.check("hashes", hashes)
    k.check("dots", dots, rtol=1e-5, atol=1e-6)


@kernel("recursive")
def build_recursive(k):
    n = 256
    k.buffer("fibs", "i32", n)
    k.buffer("sums", "i32", n)
    k.buffer("picks", "i32", n)
    k.launch("recursive", [2], [128], ["fibs", "sums", "picks", n])
    fib = [0, 1]
    while len(fib) < 11:
        fib.append(fib[-1] + fib[-2])

    def fill_rec(m):                       # closed form of n*n - 2*fill_rec(n-1)
        s = 0
        for j in range(1, m + 1):
            s = j * j - 2 * s
        return s

    i = np.arange(n)
    m = 1 + i % 10
    k.check("fibs", np.array([fib[v] for v in i % 11], np.int32))
    k.check("sums", np.array([fill_rec(v) for v in m], np.int32))
    j = (i * 7) % m
    k.check("picks", ((j + 1) ** 2).astype(np.int32))


@kernel("switch_case", opts=["--jump-table-density=10"])
def build_switch_case(k):
    rng = k.rng(17)
    n = 500
    x = rng.integers(-100000, 100000, n).astype(np.int32)
    k.input("x", x)
    k.buffer("dense", "i32", n)
    k.buffer("sparse", "i32", n)
    k.launch("switch_dense", [blocks(n, 128)], [128], ["x", "dense", n])
    k.launch("switch_sparse", [blocks(n, 128)], [128], ["x", "sparse", n])
    tid = np.arange(n) % 128
    xi = x.astype(np.int64)
    sel = (tid * 5 + (xi & 3)) % 9
    q, r = np.divmod(np.abs(xi), 7)
    div7 = np.sign(xi) * q                                   # C truncating division
    dense = np.select([sel == 0, sel == 1, sel == 2, sel == 3, sel == 4, sel == 5, sel == 6, sel == 7],
                      [xi + 17, xi * 3 - 1, xi ^ 0x5A5A, (xi << 3) | 1, div7, -xi, xi & 0xFF0,
                       xi * xi], 12345)
    dense = ((dense + (1 << 31)) % (1 << 32)) - (1 << 31)   # 32-bit wrap of x * x
    k.check("dense", dense.astype(np.int32))
    m = tid % 17
    key = np.left_shift(1, m)
    key = np.where(m == 3, 10, np.where(m == 5, 100, np.where(m == 9, 1000, np.where(m == 11, 5000, key))))
    rem5000 = np.sign(xi) * (np.abs(xi) % 5000)
    sparse = np.select([key == 1, key == 10, key == 100, key == 1000, key == 5000, key == 65536],
                       [xi - 1, xi * 10, xi >> 2, ~xi, rem5000, xi | 0x10000], key)
    k.check("sparse", sparse.astype(np.int32))


@kernel("bit_tricks")
def build_bit_tricks(k):
    rng = k.rng(18)
    n = 256
    A = rng.integers(0, 1 << 32, n, dtype=np.uint64)
    B = rng.integers(0, 1 << 32, n, dtype=np.uint64)
    C = rng.integers(0, 1 << 32, n, dtype=np.uint64)
    A[:16] = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x12345678, 0xDEADBEEF, 0x00010000,
              0x00FFFFFF, 0x00800000, 0xFF800000, 2, 3, 0x55555555, 0xAAAAAAAA, 0x0000FF00]
    B[:16] = [0, 0xFFFFFFFF, 1, 0x80000000, 0x7FFFFFFF, 5, 0xFFFFFFF0, 0xFFFF, 0x800001, 0x7FFFFF,
              3, 0xFFFFFFFF, 0, 0xAAAAAAAA, 0x55555555, 31]
    C[:16] = [0, 31, 32, 33, 63, 64, 1, 0xFFFFFFFF, 16, 15, 0x80000000, 7, 0x3210, 0x7654, 48, 0]
    a_l, b_l, c_l = [int(v) for v in A], [int(v) for v in B], [int(v) for v in C]
    for a, b, c in zip(a_l, b_l, c_l):
        # the kernel divides by (sb | 1) and (C64 | 1): keep INT_MIN / -1 out
        assert not (a == 0x80000000 and (b | 1) == M32)
        assert not (a == 0x80000000 and b == 0 and (c == M32 and ((a ^ b) | 1) == M32))
    k.input("A", u32(A))
    k.input("B", u32(B))
    k.input("C", u32(C))
    K32, K64 = 32, 14
    k.buffer("r32", "u32", K32 * n)
    k.buffer("r64", "u64", K64 * n)
    k.launch("bit_tricks", [2], [128], ["A", "B", "C", "r32", "r64", n])

    def popc(x):
        return bin(x).count("1")

    def clz(x, w):
        return w - x.bit_length()

    def brev(x, w):
        return int(format(x, "0%db" % w)[::-1], 2)

    def ffs(x):
        return (x & -x).bit_length()

    def sext24(x):
        return ((x & 0xFFFFFF) ^ 0x800000) - 0x800000

    r32 = np.zeros((K32, n), np.uint32)
    r64 = np.zeros((K64, n), np.uint64)
    for i, (a, b, c) in enumerate(zip(a_l, b_l, c_l)):
        sa, sb = to_s32(a), to_s32(b)
        by = [(a >> (8 * j)) & 0xFF for j in range(4)] + [(b >> (8 * j)) & 0xFF for j in range(4)]
        sel = c & 0x7777
        perm = sum(by[(sel >> (4 * j)) & 7] << (8 * j) for j in range(4))
        hl = (b << 32) | a
        sh = c & 31
        shc = min(c & 63, 32)
        d = sb | 1
        v = [
            popc(a), clz(a, 32), brev(a, 32), perm,
            ((hl << sh) >> 32) & M32, (hl >> sh) & M32,
            ((hl << shc) >> 32) & M32, (hl >> shc) & M32,
            ffs(a), (a >> (c & 15)) & 0x3FF, to_s32((a << 7) & M32) >> 19,
            min(sa, sb), max(sa, sb), min(a, b), max(a, b), abs(sa),
            (a * b) >> 32, (sa * sb) >> 32, sext24(a) * sext24(b), (a & 0xFFFFFF) * (b & 0xFFFFFF),
            a // (b | 1), a % (b | 1), c_div(sa, d)[0], c_div(sa, d)[1],
            abs(sa - sb) + c, abs(a - b) + c, (sa + sb) >> 1, (a + b + 1) >> 1,
            a >> (b & 31), sa >> (b & 31), (a << (c & 31)), ((a & 0xFF) * 0x01010101) ^ (~b & M32),
        ]
        assert len(v) == K32
        r32[:, i] = [x & M32 for x in v]
        A64 = (a << 32) | b
        C64 = (c << 32) | (a ^ b)
        SA, SC1 = to_s64(A64), to_s64(C64 | 1)
        w = [
            A64 * C64, A64 >> (c & 63), SA >> (c & 63), A64 // (C64 | 1), A64 % (C64 | 1),
            (A64 * C64) >> 64,
            popc(A64) | (clz(A64, 64) << 32) | (ffs(A64) << 48),
            brev(A64, 64), c_div(SA, SC1)[0], A64 + C64, (SA * to_s64(C64)) >> 64,
            sa * sb, a * b, c_div(SA, SC1)[1],
        ]
        assert len(w) == K64
        r64[:, i] = [x & M64 for x in w]
    k.check("r32", r32.ravel())
    k.check("r64", r64.ravel())


@kernel("conversions", cuda_include=True)
def build_conversions(k):
    rng = k.rng(19)
    n = 128
    f32, f64 = np.float32, np.float64

    def fill(special, rand):
        out = np.array(list(special) + list(rand[: n - len(special)]))
        assert out.size == n
        return out

    mags = 10.0 ** rng.uniform(-3, 21, n)
    sgn = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    xf = fill([0.0, 0.0, 0.0] + [np.inf, -np.inf, 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5,
                               0.49999997, -0.49999997, 1e-45, -1e-45, 2147483520.0, 2147483648.0,
                               -2147483648.0, -2147483904.0, 3e9, 4294967040.0, 4294967296.0,
                               -1.0, -0.9, 1e20, -1e20, 9.2233715e18, 9.223372e18, -9.223372e18,
                               -9.2233725e18, 1.8446743e19, 1.8446744e19, 16777217.0, 8388607.5,
                               -8388607.5, 0.999999940, 1.00000012, 1e-38, 3.5, -3.5, 2.4999998],
              (sgn * mags).astype(f32)).astype(f32)
    # three NaNs given by their bits: quiet, negative quiet, signalling
    xf.view(np.uint32)[:3] = [0x7FC00000, 0xFFC00000, 0x7F800001]
    xd = fill([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5,
               2147483647.4, 2147483647.5, 2147483647.6, 2147483648.0, -2147483648.4,
               -2147483648.5, -2147483649.0, 4294967295.5, 4294967296.0, -0.999, -1.0,
               9.2233720368547748e18, 9.2233720368547758e18, -9.2233720368547758e18,
               -9.223372036854777e18, 1.8446744073709550e19, 1.8446744073709552e19, 1e300,
               -1e300, 5e-324, -5e-324, 1234567.5, 1234568.5],
              sgn * 10.0 ** rng.uniform(-3, 21, n)).astype(f64)
    fmaxv = float(np.finfo(f32).max)
    xdf = fill([np.inf, -np.inf, 0.0, -0.0, 1e300, -1e300, 1e-50, -1e-50, fmaxv,
                3.4028235677973366e38, 3.4028235e38 * (1 + 2.0 ** -25), 1 + 2.0 ** -24,
                1 + 3 * 2.0 ** -24, 1 + 2.0 ** -24 + 2.0 ** -50, -(1 + 2.0 ** -24), 1.4e-45,
                7.006e-46, 7.0064923216240854e-46, 1e-45, 0.1, -0.1, 1.0 / 3, -2.0 / 3, 1e-40,
                -1e-40, 2.0 ** -149, 2.0 ** -150, 3 * 2.0 ** -151],
               sgn * 10.0 ** rng.uniform(-45, 39, n)).astype(f64)
    xff = fill([np.inf, -np.inf, 0.0, -0.0, 65504.0, 65519.996, 65520.0, -65520.0, 1e5, -1e5,
                6.1035156e-05, 5.9604645e-08, 2.9802322e-08, 2.9802326e-08, -2.9802326e-08,
                1e-10, -1e-10, 1.00048828125, 1.0014648, 1.0009766, -1.00048828125, 0.1, -0.1,
                1e-45, 3.4028235e38, 1.5e-5, -1.5e-5, 2049.0, 2051.0, 4097.0],
               (sgn * 10.0 ** rng.uniform(-9, 6, n)).astype(f32)).astype(f32)
    hb = rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
    hb[(hb & 0x7C00) == 0x7C00] &= 0xFBFF          # no NaN (and no inf) from the random part
    hb[:10] = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00]
    xh = hb.view(np.float16)
    xi = rng.integers(-(1 << 31), 1 << 31, n, dtype=np.int64)
    xi[:16] = [0, 1, -1, 2147483647, -2147483648, 16777216, 16777217, -16777217, 16777219,
               33554435, 33554434, -33554438, 2147483584, 2147483583, 2147483585, 100000001]
    xi = xi.astype(np.int32)
    xl = rng.integers(-(1 << 63), (1 << 63) - 1, n, dtype=np.int64, endpoint=True)
    sm = rng.integers(-(1 << 40), 1 << 40, 32, dtype=np.int64)
    xl[16:48] = sm                                   # some moderately sized values too
    xl[:16] = [0, 1, -1, (1 << 63) - 1, -(1 << 63), (1 << 53) + 1, -((1 << 53) + 1),
               (1 << 53) + 3, (1 << 24) + 1, -((1 << 24) + 1), (1 << 54) + 2, (1 << 54) + 6,
               (1 << 62) + (1 << 38), -(1 << 62) - (1 << 38), 0x7FFFFF8000000000, 0x7FFFFFC000000000]
    for name, arr in [("xf", xf), ("xd", xd), ("xdf", xdf), ("xff", xff), ("xh", xh),
                      ("xi", xi), ("xl", xl)]:
        k.input(name, arr)
    outs = [("f2i", "u32", 8), ("f2l", "u64", 4), ("d2i", "u32", 4), ("d2l", "u64", 2),
            ("d2f", "u32", 4), ("f2d", "u64", 1), ("f2h", "u16", 4), ("h2f", "u32", 1),
            ("i2f", "u32", 5), ("i2d", "u64", 1), ("l2f", "u32", 3), ("l2d", "u64", 2)]
    for name, dt, rows in outs:
        k.buffer(name, dt, rows * n)
    k.launch("conversions", [2], [64],
             ["xf", "xd", "xdf", "xff", "xh", "xi", "xl"] + [o[0] for o in outs] + [n])

    E = {}
    E["f2i"] = [[f2int(x, m, 32, s, False) for x in xf]
                for m, s in [("rzi", 1), ("rni", 1), ("rmi", 1), ("rpi", 1),
                             ("rzi", 0), ("rni", 0), ("rmi", 0), ("rpi", 0)]]
    E["f2l"] = [[f2int(x, m, 64, s, False) for x in xf]
                for m, s in [("rzi", 1), ("rzi", 0), ("rni", 1), ("rpi", 0)]]
    E["d2i"] = [[f2int(x, m, 32, s, True) for x in xd]
                for m, s in [("rzi", 1), ("rni", 1), ("rzi", 0), ("rmi", 1)]]
    E["d2l"] = [[f2int(x, m, 64, s, True) for x in xd] for m, s in [("rzi", 1), ("rzi", 0)]]
    E["d2f"] = [[f32_bits(convert_float(x, f32, m)) for x in xdf] for m in ("rn", "rz", "rd", "ru")]
    E["f2d"] = [[f64_bits(f64(x)) for x in xff]]
    E["f2h"] = [[f16_bits(convert_float(x, np.float16, m)) for x in xff]
                for m in ("rn", "rz", "rd", "ru")]
    E["h2f"] = [[f32_bits(f32(x)) for x in xh]]

    def int2f(v, ftype, mode):
        v = int(v)
        return ftype(0.0) if v == 0 else round_rational(Fraction(v), ftype, mode)

    E["i2f"] = [[f32_bits(int2f(x, f32, m)) for x in xi] for m in ("rn", "rz", "rd", "ru")] + \
               [[f32_bits(int2f(int(x) & M32, f32, "rn")) for x in xi]]
    E["i2d"] = [[f64_bits(int2f(x, f64, "rn")) for x in xi]]
    E["l2f"] = [[f32_bits(int2f(x, f32, "rn")) for x in xl],
                [f32_bits(int2f(int(x) & M64, f32, "rn")) for x in xl],
                [f32_bits(int2f(x, f32, "rz")) for x in xl]]
    E["l2d"] = [[f64_bits(int2f(x, f64, m)) for x in xl] for m in ("rn", "rz")]
    # sanity: numpy's own (round-to-nearest) casts agree where they apply
    with np.errstate(over="ignore"):
        rn_d2f, rn_f2h = xdf.astype(f32), xff.astype(np.float16)
    assert np.array_equal(np.array(E["d2f"][0], np.uint32), rn_d2f.view(np.uint32))
    assert np.array_equal(np.array(E["f2h"][0], np.uint16), rn_f2h.view(np.uint16))
    assert np.array_equal(np.array(E["i2f"][0], np.uint32), xi.astype(f32).view(np.uint32))
    for name, dt, rows in outs:
        arr = np.array(E[name], dtype=np.uint64 if dt == "u64" else np.int64)
        assert arr.shape == (rows, n), (name, arr.shape)
        k.check(name, arr.astype(DTYPES[dt]).ravel())


@kernel("dynamic_smem")
def build_dynamic_smem(k):
    rng = k.rng(20)
    n = 1000
    scale = 0.5
    x = rng.uniform(-2, 2, n).astype(np.float32)
    k.input("x", x)
    k.buffer("y128", "f32", n)
    k.buffer("y64", "f32", n)
    k.launch("dynamic_smem", [blocks(n, 128)], [128], ["x", "y128", scale, n], shared_bytes=2 * 128 * 4)
    k.launch("dynamic_smem", [blocks(n, 64)], [64], ["x", "y64", scale, n], shared_bytes=2 * 64 * 4)
    for bs, name in [(128, "y128"), (64, "y64")]:
        nb = blocks(n, bs)
        seg = np.zeros(nb * bs, np.float64)
        seg[:n] = x
        seg = seg.reshape(nb, bs)
        out = seg[:, ::-1] * scale + np.roll(seg, -1, axis=1) ** 2
        k.check(name, out.ravel()[:n].astype(np.float32), rtol=1e-6, atol=1e-7)


@kernel("indexing3d")
def build_indexing3d(k):
    grid, block = (2, 3, 2), (4, 4, 3)
    tpb = block[0] * block[1] * block[2]
    total = tpb * grid[0] * grid[1] * grid[2]
    for name in ("ids", "dims", "lanes"):
        k.buffer(name, "u32", total)
    k.launch("indexing3d", grid, block, ["ids", "dims", "lanes"])
    # enumerate (bz, by, bx, tz, ty, tx) in linear-id order: x fastest
    bz, by, bx, tz, ty, tx = np.meshgrid(*[np.arange(d) for d in
                                           (grid[2], grid[1], grid[0], block[2], block[1], block[0])],
                                         indexing="ij")
    bz, by, bx, tz, ty, tx = (v.ravel().astype(np.int64) for v in (bz, by, bx, tz, ty, tx))
    tid = np.arange(total) % tpb
    ids = bx | by << 4 | bz << 8 | tx << 12 | ty << 16 | tz << 20
    dims = np.full(total, grid[0] | grid[1] << 4 | grid[2] << 8 | block[0] << 12 |
                   block[1] << 16 | block[2] << 20)
    lanes = (tid % 32) | (tid // 32) << 8 | np.arange(total) << 16
    k.check("ids", ids.astype(np.uint32))
    k.check("dims", dims.astype(np.uint32))
    k.check("lanes", lanes.astype(np.uint32))


@kernel("vote_any_all")
def build_vote_any_all(k):
    rng = k.rng(21)
    n = 512
    x = rng.integers(-10, 11, n).astype(np.int32)
    x[0:32] = rng.integers(1, 10, 32)                 # warp 0: all true
    x[32:64] = rng.integers(-10, 1, 32)               # warp 1: all false
    x[64:96] = 0
    x[95] = 5                                         # warp 2: only lane 31
    x[96:128] = rng.integers(1, 10, 32)
    x[96] = -3                                        # warp 3: all but lane 0
    k.input("x", x)
    nw = n // 32
    k.buffer("ballots", "u32", nw)
    k.buffer("anys", "i32", nw)
    k.buffer("alls", "i32", nw)
    k.buffer("ranks", "i32", n)
    k.launch("vote_any_all", [n // 128], [128], ["x", "ballots", "anys", "alls", "ranks", n])
    p = (x > 0).reshape(nw, 32)
    ballots = (p.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1)
    ranks = np.where(p, np.cumsum(p, axis=1) - 1, -1)
    k.check("ballots", ballots.astype(np.uint32))
    k.check("anys", p.any(axis=1).astype(np.int32))
    k.check("alls", p.all(axis=1).astype(np.int32))
    k.check("ranks", ranks.astype(np.int32).ravel())


@kernel("bar_red")
def build_bar_red(k):
    rng = k.rng(22)
    nb, bs = 6, 128
    x = rng.integers(-300, 301, nb * bs).astype(np.int32)
    x[0:128] = rng.integers(1, 100, 128)
    x[128:256] = rng.integers(-100, 1, 128)
    x[256:384] = rng.integers(-99, 101, 128)
    x[384:512] = rng.integers(-99, 101, 128)
    x[384 + 77] = 250
    k.input("x", x)
    for name in ("counts", "ands", "ors"):
        k.buffer(name, "i32", nb)
    k.launch("bar_red", [nb], [bs], ["x", "counts", "ands", "ors"])
    blk = x.reshape(nb, bs)
    k.check("counts", (blk > 0).sum(axis=1).astype(np.int32))
    k.check("ands", (blk > 0).all(axis=1).astype(np.int32))
    k.check("ors", (blk > 100).any(axis=1).astype(np.int32))


@kernel("atomics")
def build_atomics(k):
    rng = k.rng(23)
    n, bs = 1000, 256
    x = rng.integers(-1000, 1001, n).astype(np.int32)
    k.input("x", x)
    k.buffer("ires", "i32", 5, ("values", [0, 0, -2147483648, 2147483647, 0]))
    k.buffer("ures", "u32", 8, ("values", [M32, 0, 0, 0, 0, 0, M32, 0]))
    k.buffer("fres", "f32", 1)
    k.buffer("lres", "u64", 3)
    nb = blocks(n, bs)
    k.buffer("block_max", "i32", nb)
    k.launch("atomics", [nb], [bs], ["x", "ires", "ures", "fres", "lres", "block_max", n])
    v = [int(t) for t in x]
    s = sum(v)
    k.check("ires", np.array([s, -s, max(v), min(v), s], np.int32), inline=True)
    andv, orv, xorv = M32, 0, 0
    inc, dec = 0, 0
    for t in v:
        andv &= (t & M32) | 0xFFFF00FF
        orv |= 1 << (t & 31)
        xorv ^= t & M32
        inc = 0 if inc >= 100 else inc + 1
        dec = 50 if (dec == 0 or dec > 50) else dec - 1
    uv = [t & M32 for t in v]
    k.check("ures", np.array([andv, orv, xorv, inc, dec, max(uv), min(uv), 7], np.uint32), inline=True)
    k.check("fres", np.array([sum(t & 255 for t in v)], np.float32), rtol=0.0, atol=0.0, inline=True)
    k.check("lres", np.array([sum(uv), max(t & M64 for t in v), n], np.uint64), inline=True)
    k.check("block_max", np.array([max(v[b * bs:(b + 1) * bs]) for b in range(nb)], np.int32),
            inline=True)


@kernel("const_globals")
def build_const_globals(k):
    rng = k.rng(24)
    n = 600
    x = rng.uniform(-1.5, 1.5, n).astype(np.float32)
    k.input("x", x)
    k.buffer("y", "f32", n)
    k.buffer("tags", "i32", n)
    k.buffer("out", "i32", 2)
    k.launch("const_globals", [blocks(n, 128)], [128], ["x", "y", "tags", n])
    k.launch("read_globals", [1], [1], ["out"])
    coeffs = [0.5, -1.25, 2.0, 0.75, -0.5, 1.5, -2.0, 1.0]
    lut = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]
    table = [0xDEADBEEF, 0x12345678, 7, 0x80000000]
    poly = np.polyval(coeffs, x.astype(np.float64)) * 3.0
    i = np.arange(n)
    tags = np.array([lut[j & 15] ^ table[j & 3] for j in i], np.uint64).astype(np.uint32).view(np.int32)
    k.check("y", poly.astype(np.float32), rtol=1e-5, atol=1e-5)
    k.check("tags", tags)
    k.check("out", np.array([n, to_s32(table[0])], np.int32), inline=True)


@kernel("shuffle")
def build_shuffle(k):
    rng = k.rng(25)
    n = 256
    x = rng.integers(-1000000, 1000000, n).astype(np.int32)
    f = rng.uniform(-4, 4, n).astype(np.float32)
    k.input("x", x)
    k.input("fx", f)
    k.buffer("out", "i32", 10 * n)
    k.buffer("fout", "f32", n)
    k.launch("shuffle", [2], [128], ["x", "out", "fx", "fout", n])
    lane = np.arange(n) % 32
    base = np.arange(n) - lane                       # first thread of the warp

    def shfl(mode, b, width=32):
        b = np.broadcast_to(np.asarray(b), lane.shape)
        seg = lane & ~(width - 1)
        if mode == "idx":
            src = seg | (b & (width - 1))
        elif mode == "up":
            src = np.where((lane & (width - 1)) >= b, lane - b, lane)
        elif mode == "down":
            src = np.where((lane & (width - 1)) + b < width, lane + b, lane)
        else:                                        # xor: later segments are off limits
            j = lane ^ b
            src = np.where(j <= (seg | (width - 1)), j, lane)
        return src + base

    rows = [x[shfl("idx", (lane * 7 + 3) & 31)], x[shfl("up", 3)], x[shfl("down", 5)],
            x[shfl("bfly", 9)], x[shfl("idx", 5, 8)], x[shfl("up", 2, 16)], x[shfl("down", 3, 8)],
            x[shfl("bfly", 9, 8)], x[shfl("idx", lane * 3 + 40)],
            np.repeat(x.astype(np.int64).reshape(-1, 32).sum(axis=1), 32)]
    k.check("out", np.array(rows, np.int64).astype(np.int32).ravel())
    k.check("fout", f[shfl("down", 1)] - f, rtol=0.0, atol=0.0)


@kernel("fp_math")
def build_fp_math(k):
    rng = k.rng(26)
    n = 256
    f32, f64 = np.float32, np.float64
    X = (np.where(rng.random(n) < 0.5, -1, 1) * 10.0 ** rng.uniform(-2, 2, n)).astype(f32)
    X[:12] = [123456.7, -3.0e6, 1.0e7, 7.5e5, 2.5, -2.5, 0.5, -0.5, 1.5, 3.0, -0.49999997, 0.49999997]
    Y = (np.where(rng.random(n) < 0.5, -1, 1) * rng.uniform(0.25, 8, n)).astype(f32)
    Z = rng.uniform(-3, 3, n).astype(f32)
    Z[:4] = [0.25, 1.5, -0.75, 0.999]
    DX = np.where(rng.random(n) < 0.5, -1, 1) * 10.0 ** rng.uniform(-2, 2, n)
    DX[:10] = [2.5, -2.5, 0.5, -0.5, 3.5, -1e-3, 3.0e9, -1.0e15, 1.0e22, 2147483648.0]
    DY = np.where(rng.random(n) < 0.5, -1, 1) * rng.uniform(0.25, 8, n)
    for name, arr in [("X", X), ("Y", Y), ("Z", Z), ("DX", DX), ("DY", DY)]:
        k.input(name, arr)
    KE, KA, KDE, KDA = 19, 13, 13, 4
    k.buffer("exact", "u32", KE * n)
    k.buffer("approx", "f32", KA * n)
    k.buffer("dexact", "u64", KDE * n)
    k.buffer("dapprox", "f64", KDA * n)
    k.launch("fp_math", [2], [128], ["X", "Y", "Z", "DX", "DY", "exact", "approx", "dexact",
                                     "dapprox", n])
    F = lambda v: Fraction(float(v))

    def rnd32(r, mode):
        return round_rational(r, f32, mode)

    def rnd64(r, mode):
        return round_rational(r, f64, mode)

    a, b, z = X, Y, Z
    ad = a.astype(f64)
    with np.errstate(all="raise"):
        ex = [
            a / b, np.sqrt(np.abs(a)),
            np.array([rnd32(F(p) * F(q) + F(r), "rn") for p, q, r in zip(a, b, z)], f32),
            np.minimum(a, b), np.maximum(a, b), np.floor(a), np.ceil(a), np.trunc(a), np.rint(a),
            (np.sign(ad) * np.floor(np.abs(ad) + 0.5)).astype(f32),        # half away from zero
            f32(1) / b, np.abs(a) - b, np.copysign(a, b),
            np.array([rnd32(F(p) * F(q), "rz") for p, q in zip(a, b)], f32),
            np.array([rnd32(F(p) + F(q), "rd") for p, q in zip(a, b)], f32),
            np.array([rnd32(F(p) + F(q), "ru") for p, q in zip(a, b)], f32),
            np.array([rnd32(F(p) * F(q) + F(r), "rz") for p, q, r in zip(a, b, z)], f32),
            np.clip(z, f32(0), f32(1)), np.fmod(a, b),
        ]
    ex = [np.asarray(e, f32) for e in ex]
    assert len(ex) == KE and all(e.shape == (n,) for e in ex)
    # roundf keeps the sign of a zero result (e.g. roundf(-0.4) = -0.0)
    ex[9] = np.copysign(ex[9], a)
    k.check("exact", np.array(ex).view(np.uint32).ravel())
    ap = [1 / np.sqrt(np.abs(ad) + 1), np.sin(ad), np.cos(ad), np.log(np.abs(ad) + 0.5),
          np.exp(z.astype(f64)), np.sin(z.astype(f64)), np.cos(z.astype(f64)), np.exp(z.astype(f64)),
          np.log(np.abs(z.astype(f64)) + 0.5), ad / b.astype(f64), np.exp2(z.astype(f64)),
          np.log2(np.abs(ad) + 0.5), np.tanh(z.astype(f64))]
    assert len(ap) == KA
    k.check("approx", np.array(ap).astype(f32).ravel(), rtol=2e-5, atol=2e-6)
    da, db = DX, DY
    dex = [da / db, np.sqrt(np.abs(da)),
           np.array([rnd64(F(p) * F(q) + Fraction(1, 2), "rn") for p, q in zip(da, db)]),
           np.floor(da), np.ceil(da), np.trunc(da), np.rint(da), np.minimum(da, db),
           np.maximum(da, db), 1.0 / db,
           np.array([rnd64(F(p) * F(q), "rz") for p, q in zip(da, db)]),
           np.array([rnd64(F(p) + F(q), "ru") for p, q in zip(da, db)]),
           np.abs(da) - db]
    assert len(dex) == KDE
    k.check("dexact", np.array(dex, f64).view(np.uint64).ravel())
    dap = [np.exp(-np.abs(da) * 0.01), np.sin(da), np.log(np.abs(da) + 1.0), 1 / np.sqrt(np.abs(da) + 1.0)]
    k.check("dapprox", np.array(dap, f64).ravel(), rtol=1e-13, atol=1e-15)


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------

WARN_FILTER = re.compile(r"Architectures prior to '<compute/sm>_75' are deprecated")


def header_for(name, opts, nvrtc_version):
    shown = " ".join(o for o in ARCH_OPTS + opts)
    return ("# Generated by traces/kernels/build.py from %s.cu -- do not edit; rerun build.py.\n"
            "# NVRTC %d.%d options: %s%s" % (name, nvrtc_version[0], nvrtc_version[1], shown,
                                          " -I<cuda_runtime/include>" if KERNELS[name][2] else ""))


def run_ptxas(ptxas, path):
    if not ptxas:
        return None
    r = subprocess.run([ptxas, "-arch=" + PTXAS_ARCH, path, "-o", os.devnull],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode != 0:
        raise RuntimeError("ptxas rejected %s:\n%s" % (path, r.stdout))
    return r.stdout.strip()


def build_one(name, nvrtc, ptxas):
    fn, opts, cuda_include = KERNELS[name]
    folder = os.path.join(HERE, name)
    src_path = os.path.join(folder, name + ".cu")
    with open(src_path) as f:
        src = f.read()
    all_opts = ARCH_OPTS + opts
    if cuda_include:
        all_opts = all_opts + ["-I" + find_cuda_include()]
    ptx, log = nvrtc.compile(src, name + ".cu", all_opts)
    log = "\n".join(l for l in log.splitlines() if l.strip() and not WARN_FILTER.search(l))
    if log:
        print("  [%s] NVRTC log:\n%s" % (name, log))
    for pat in ("*.ptx", "*.yaml", "*.npy"):
        for p in glob.glob(os.path.join(folder, pat)):
            os.remove(p)
    ptx_path = os.path.join(folder, name + ".ptx")
    with open(ptx_path, "w") as f:
        f.write(ptx)
    msg = run_ptxas(ptxas, ptx_path)
    if msg:
        print("  [%s] ptxas: %s" % (name, msg.replace("\n", "\n    ")))
    k = Ctx(name, folder)
    fn(k)
    for fname, arr in k.files.items():
        np.save(os.path.join(folder, fname), arr, allow_pickle=False)
    m = k.manifest()
    text = emit_yaml(m, header_for(name, opts, nvrtc.version))
    yaml_path = os.path.join(folder, name + ".yaml")
    with open(yaml_path, "w") as f:
        f.write(text)
    verify(name, folder, m, ptx)
    back = load_manifest_yaml(yaml_path)
    if back is not None:
        assert back == to_plain(m), "[%s] YAML round trip differs" % name
    return m


def verify_committed(names, ptxas):
    import yaml  # the committed-file check parses the YAML, so it needs PyYAML
    for name in names:
        folder = os.path.join(HERE, name)
        with open(os.path.join(folder, name + ".yaml")) as f:
            m = yaml.safe_load(f)
        with open(os.path.join(folder, name + ".ptx")) as f:
            ptx = f.read()
        verify(name, folder, m, ptx)
        run_ptxas(ptxas, os.path.join(folder, name + ".ptx"))
        print("  ok  %s" % name)


def write_opcodes(names):
    table = OrderedDict()
    for name in names:
        with open(os.path.join(HERE, name, name + ".ptx")) as f:
            for op in ptx_opcodes(f.read()):
                cnt, users = table.setdefault(op, [0, set()])
                table[op][0] = cnt + 1
                users.add(name)
    lines = ["# Every distinct PTX opcode (with modifiers) in traces/kernels/*/*.ptx.",
             "# Generated by build.py. Columns: opcode, static count, kernels using it.",
             "# Guard predicates (@%p / @!%p) are stripped; inline-asm lines are included;",
             "# '.branchtargets' is the jump-table directive used by brx.idx.", ""]
    for op in sorted(table):
        cnt, users = table[op]
        lines.append("%-36s %5d  %s" % (op, cnt, " ".join(sorted(users))))
    with open(os.path.join(HERE, "opcodes.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return table


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernels", nargs="*", help="kernel names (default: all)")
    ap.add_argument("--verify", action="store_true",
                    help="only verify the committed manifests/files (no NVRTC needed)")
    args = ap.parse_args()
    names = args.kernels or list(KERNELS)
    for n in names:
        if n not in KERNELS:
            sys.exit("unknown kernel %s (known: %s)" % (n, " ".join(KERNELS)))
    ptxas = find_ptxas()
    if not ptxas:
        print("warning: ptxas not found, PTX is not validated")
    if args.verify:
        verify_committed(names, ptxas)
        return
    nvrtc = Nvrtc(find_nvrtc())
    print("NVRTC %d.%d, ptxas %s" % (nvrtc.version + (ptxas,)))
    for name in names:
        m = build_one(name, nvrtc, ptxas)
        print("  built %-14s %s" % (name, ", ".join(
            "%s grid %s block %s" % (L["entry"], L["grid"], L["block"]) for L in m["launches"])))
    table = write_opcodes([n for n in KERNELS if os.path.exists(os.path.join(HERE, n, n + ".ptx"))])
    print("%d distinct opcodes -> opcodes.txt" % len(table))


if __name__ == "__main__":
    main()
