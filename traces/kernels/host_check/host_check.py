#!/usr/bin/env python3
"""Cross-check the corpus on the host, without a GPU and without the simulator.

For each kernel it turns NAME.cu into host C++ (cuda_emu.h: one OS thread per
CUDA thread, real barriers, emulated warp votes/shuffles/atomics), generates a
main() from NAME.yaml (buffers, launches in order, args), compiles it with g++,
runs it and compares every buffer named in the manifest's checks with the
expected .npy / values, using the manifest's tolerances (numpy.isclose) or exact
equality for integers. A mismatch means the CUDA source, the manifest and
build.py's numpy reference disagree about what the kernel computes.

This checks CUDA-level semantics (what the .cu says), not the PTX: the PTX-level
rules that the reference relies on are written out in README.md.

Usage:  python3 traces/kernels/host_check/host_check.py [NAME ...]
Needs:  g++ with C++20 (std::barrier), numpy, PyYAML. Takes about a minute for all.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
KDIR = os.path.dirname(HERE)
CT = {"u8": "unsigned char", "i8": "signed char", "u16": "unsigned short", "i16": "short",
      "u32": "unsigned", "i32": "int", "u64": "unsigned long long", "i64": "long long",
      "f16": "_Float16", "f32": "float", "f64": "double"}
NP = {"u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16, "u32": np.uint32,
      "i32": np.int32, "u64": np.uint64, "i64": np.int64, "f16": np.float16, "f32": np.float32,
      "f64": np.float64}
# plain C casts whose out-of-range behaviour is UB on the host: use PTX-semantics helpers
CONV_REWRITES = [
    ("#include <cuda_fp16.h>", '#include "%s"' % os.path.join(HERE, "emu_conv.h")),
    ("(unsigned)(int)x", "(unsigned)__float2int_rz(x)"), ("= (unsigned)x;", "= __float2uint_rz(x);"),
    ("(unsigned long long)(long long)x", "(unsigned long long)__float2ll_rz(x)"),
    ("= (unsigned long long)x;", "= __float2ull_rz(x);"),
    ("(unsigned)(int)d", "(unsigned)__double2int_rz(d)"), ("= (unsigned)d;", "= __double2uint_rz(d);"),
    ("(unsigned long long)(long long)d", "(unsigned long long)__double2ll_rz(d)"),
    ("= (unsigned long long)d;", "= __double2ull_rz(d);"), ("(float)df", "__double2float_rn(df)"),
]


def host_source(name, src):
    src = re.sub(r'asm\("mov\.u32 %0, %%laneid;" : "=r"\((\w+)\)\);', r"\1 = emu_laneid();", src)
    src = re.sub(r'asm\("mov\.u32 %0, %%lanemask_lt;" : "=r"\((\w+)\)\);', r"\1 = emu_lanemask_lt();", src)
    src = re.sub(r"extern __shared__ float (\w+)\[\];", r"float* \1 = (float*)g_dyn_smem.data();", src)
    src = src.replace("#pragma unroll 1", "")
    if name == "conversions":
        for a, b in CONV_REWRITES:
            assert a in src, a
            src = src.replace(a, b)
    assert "asm(" not in src, "%s: inline asm left for the host" % name
    return src


def literal(v, dtype=None):
    if isinstance(v, float):
        return repr(v)
    if dtype in ("f32", "f64"):
        return repr(float(v))
    return "%dull" % (v & ((1 << 64) - 1)) if v < 0 else "%dull" % v


def check_kernel(name, work):
    d = os.path.join(KDIR, name)
    m = yaml.safe_load(open(os.path.join(d, name + ".yaml")))
    src = host_source(name, open(os.path.join(d, name + ".cu")).read())
    lines = ['#include "%s"' % os.path.join(HERE, "cuda_emu.h"), src, "int main() {"]
    for b, spec in m["buffers"].items():
        t, n, init = CT[spec["dtype"]], spec["shape"][0], spec["init"]
        if isinstance(init, dict) and "npy" in init:
            np.load(os.path.join(d, init["npy"])).tofile(os.path.join(work, b + ".in"))
            lines.append('  auto B_%s = load_bin<%s>("%s", %d);' % (b, t, os.path.join(work, b + ".in"), n))
        elif init == "zeros":
            lines.append("  std::vector<%s> B_%s(%d);" % (t, b, n))
        elif "fill" in init:
            lines.append("  std::vector<%s> B_%s(%d, (%s)(%s));" % (t, b, n, t, init["fill"]))
        else:
            vals = ", ".join("(%s)%s" % (t, literal(v, spec["dtype"])) for v in init["values"])
            lines.append("  std::vector<%s> B_%s = {%s};" % (t, b, vals))
    for L in m["launches"]:
        args = ", ".join("B_%s.data()" % a if isinstance(a, str) else
                         (repr(a) if isinstance(a, float) else "%dll" % a) for a in L["args"])
        g, bl = L["grid"], L["block"]
        lines.append("  launch(dim3(%d,%d,%d), dim3(%d,%d,%d), %d, [&] { %s(%s); });" % (
            g[0], g[1], g[2], bl[0], bl[1], bl[2], L["shared_bytes"], L["entry"], args))
    for b in m["buffers"]:
        lines.append('  save_bin("%s", B_%s);' % (os.path.join(work, b + ".out"), b))
    lines.append("  return 0;\n}")
    cpp, exe = os.path.join(work, "main.cpp"), os.path.join(work, "main")
    with open(cpp, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = subprocess.run(["g++", "-std=c++20", "-O1", "-pthread", "-ffp-contract=off", "-frounding-math",
                        "-w", "-o", exe, cpp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if r.returncode:
        print("%-14s COMPILE FAILED\n%s" % (name, r.stdout[:3000]))
        return False
    r = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode:
        print("%-14s RUN FAILED\n%s" % (name, r.stdout[:2000]))
        return False
    ok = True
    for c in m["checks"]:
        spec = m["buffers"][c["buffer"]]
        got = np.fromfile(os.path.join(work, c["buffer"] + ".out"), NP[spec["dtype"]])
        exp = (np.load(os.path.join(d, c["npy"])) if "npy" in c
               else np.array(c["values"], NP[spec["dtype"]]))
        if "rtol" in c:
            good = np.isclose(got.astype(np.float64), exp.astype(np.float64), rtol=c["rtol"], atol=c["atol"])
        else:
            good = got == exp
        if not good.all():
            ok = False
            bad = np.nonzero(~good)[0]
            print("%-14s %s: %d/%d mismatches, first at %s: got %s expected %s" % (
                name, c["buffer"], bad.size, got.size, bad[:5], got[bad[:5]], exp[bad[:5]]))
    print("%-14s %s" % (name, "ok" if ok else "MISMATCH"))
    return ok


def main():
    names = sys.argv[1:] or sorted(n for n in os.listdir(KDIR)
                                   if os.path.exists(os.path.join(KDIR, n, n + ".yaml")))
    failed = []
    for name in names:
        with tempfile.TemporaryDirectory() as work:
            if not check_kernel(name, work):
                failed.append(name)
    if failed:
        sys.exit("host check failed: " + " ".join(failed))
    print("all %d kernels agree with their expected outputs" % len(names))


if __name__ == "__main__":
    main()
