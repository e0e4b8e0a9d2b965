#!/usr/bin/env python3
"""Build the GEMM kernels in traces/gemm/ (the `gpusim gemm` corpus).

What it does
------------
For every kernel NAME registered below (one folder ``traces/gemm/NAME/``):

1. compiles the hand-written CUDA source ``NAME/NAME.cu`` to ``NAME/NAME.ptx`` with NVRTC
   (``--gpu-architecture=compute_80``, cuda_bf16.h from the CUDA runtime wheel), through the
   ctypes wrapper of ``traces/kernels/build.py``;
2. validates the PTX with ``ptxas -arch=sm_80`` and prints its register and shared-memory use;
3. for each verified case of the kernel, generates the inputs with numpy from fixed seeds and
   computes the expected C independently (numpy float32 matmul of the exact input values: bf16
   inputs are rounded to nearest even first, and the matmul runs on their float32 values);
   writes ``NAME/NAME[_CASE].yaml`` (launch manifests, picked up by ``sim/tests/traces.rs``)
   and their ``.npy`` files;
4. checks that the kernel's ``gemm.yaml`` (the size-generic launch description read by
   ``gpusim gemm``, hand-written) names the entry and gives one argument per ``.param``.

Everything generated is committed, so the simulator's tests need neither NVRTC nor numpy.
Rerunning reproduces byte-identical files (old generated *.ptx, *.yaml manifests and *.npy in
a kernel folder are deleted first; gemm.yaml is kept).

How to run
----------
    pip install nvidia-cuda-nvrtc-cu12 nvidia-cuda-nvcc-cu12 nvidia-cuda-runtime-cu12 numpy pyyaml
    python3 traces/gemm/build.py                  # every kernel
    python3 traces/gemm/build.py sgemm_simt       # one kernel

The committed files were produced with NVRTC 12.9 (CUDA 12.9.86 wheels).
"""

import glob
import importlib.util
import os
import subprocess
import sys
from collections import OrderedDict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "kernels_build", os.path.join(HERE, "..", "kernels", "build.py"))
kb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kb)

ARCH_OPTS = ["--gpu-architecture=compute_80", "-std=c++17"]
PTXAS_ARCH = "sm_80"


def bf16_bits(x):
    """float32 -> bf16 bits, round to nearest even (no NaNs in the inputs)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
    return r.astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def case_sgemm(k, name, m, n, kk, alpha, beta, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, kk)).astype(np.float32)
    b = rng.uniform(-1, 1, (kk, n)).astype(np.float32)
    c0 = rng.uniform(-1, 1, (m, n)).astype(np.float32) if beta != 0 else None
    prod = (a.astype(np.float64) @ b.astype(np.float64))
    want = alpha * prod + (beta * c0.astype(np.float64) if c0 is not None else 0.0)
    k.input("A", a.reshape(-1))
    k.input("B", b.reshape(-1))
    if c0 is not None:
        k.input("C", c0.reshape(-1))
    else:
        k.buffer("C", "f32", m * n)
    grid = ((n + 127) // 128, (m + 127) // 128)
    k.launch(name, grid, (256,), ["A", "B", "C", m, n, kk, float(alpha), float(beta)])
    k.check("C", want.astype(np.float32).reshape(-1), rtol=1e-4, atol=1e-4)


def case_hgemm(k, name, m, n, kk, seed):
    rng = np.random.default_rng(seed)
    a = bf16_bits(rng.uniform(-1, 1, (m, kk)).astype(np.float32))
    b = bf16_bits(rng.uniform(-1, 1, (kk, n)).astype(np.float32))
    want = bf16_value(a) @ bf16_value(b)          # float32 matmul of the exact bf16 values
    k.input("A", a.reshape(-1))
    k.input("B", b.reshape(-1))
    k.buffer("C", "f32", m * n)
    grid = ((n + 127) // 128, (m + 127) // 128)
    k.launch(name, grid, (256,), ["A", "B", "C", m, n, kk], shared_bytes=3 * 16384)
    k.check("C", want.astype(np.float32).reshape(-1), rtol=1e-3, atol=1e-3)


# Config overrides a kernel's manifests carry (manifest `set`, applied over every config).
MANIFEST_SET = {
    # gpusim estimates registers from the PTX's virtual-register live ranges
    # (core/program.rs register_estimate): 183 per thread here, where ptxas allocates 128,
    # because the 64 loop-carried accumulators and their next values are both counted. A
    # 256-thread CTA then needs 46848 registers: more than the 32768 of configs/tiny.yaml and
    # fermi-gtx480.yaml, less than the 65536 of volta/ampere/hopper.
    "sgemm_simt": "set:\n  sm.registers: 65536\n",
}

# name -> [(case suffix, builder(ctx, entry))]; the first case's manifest is NAME.yaml.
KERNELS = OrderedDict([
    ("sgemm_simt", [
        ("", lambda k, e: case_sgemm(k, e, 256, 256, 128, 1.0, 0.0, 7001)),
        ("_ragged", lambda k, e: case_sgemm(k, e, 200, 136, 100, 1.5, -0.5, 7002)),
    ]),
    ("hgemm_mma_multistage", [
        ("", lambda k, e: case_hgemm(k, e, 256, 256, 128, 7101)),
        ("_ragged", lambda k, e: case_hgemm(k, e, 200, 136, 104, 7102)),
    ]),
])


def header(name, case, nvrtc_version):
    return ("# Generated by traces/gemm/build.py from %s.cu (case `%s`) -- do not edit; rerun "
            "build.py.\n# NVRTC %d.%d options: %s -I<cuda_runtime/include>"
            % (name, case or "default", nvrtc_version[0], nvrtc_version[1], " ".join(ARCH_OPTS)))


def run_ptxas(ptxas, path):
    r = subprocess.run([ptxas, "-arch=" + PTXAS_ARCH, "-v", path, "-o", os.devnull],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode != 0:
        raise RuntimeError("ptxas rejected %s:\n%s" % (path, r.stdout))
    return r.stdout.strip()


def check_spec(name, folder, ptx):
    import yaml
    with open(os.path.join(folder, "gemm.yaml")) as f:
        spec = yaml.safe_load(f)
    entries = kb.ptx_entries(ptx)
    assert spec["ptx"] == name + ".ptx", spec["ptx"]
    assert spec["entry"] in entries, "gemm.yaml entry %s not in %s" % (spec["entry"], list(entries))
    params = entries[spec["entry"]]
    assert len(spec["args"]) == len(params), "gemm.yaml: %d args for %d params" % (
        len(spec["args"]), len(params))


class Case(kb.Ctx):
    """A manifest of one kernel; several share the kernel's folder and PTX."""

    def __init__(self, name, suffix, folder):
        super().__init__(name, folder)
        self.suffix = suffix

    def _save(self, fname, arr):
        return super()._save(fname if not self.suffix else
                             fname.replace(".npy", self.suffix + ".npy"), arr)


def build_one(name, nvrtc, ptxas):
    folder = os.path.join(HERE, name)
    with open(os.path.join(folder, name + ".cu")) as f:
        src = f.read()
    opts = ARCH_OPTS + ["-I" + kb.find_cuda_include()]
    ptx, log = nvrtc.compile(src, name + ".cu", opts)
    if log.strip():
        print("  [%s] NVRTC log:\n%s" % (name, log))
    for pat in ("*.ptx", "*.npy"):
        for p in glob.glob(os.path.join(folder, pat)):
            os.remove(p)
    for p in glob.glob(os.path.join(folder, name + "*.yaml")):
        os.remove(p)
    ptx_path = os.path.join(folder, name + ".ptx")
    with open(ptx_path, "w") as f:
        f.write(ptx)
    if ptxas:
        print("  [%s] ptxas: %s" % (name, run_ptxas(ptxas, ptx_path).replace("\n", "\n    ")))
    for suffix, builder in KERNELS[name]:
        k = Case(name, suffix, folder)
        builder(k, name)
        for fname, arr in k.files.items():
            np.save(os.path.join(folder, fname), arr, allow_pickle=False)
        text = kb.emit_yaml(k.manifest(), header(name, suffix.lstrip("_"), nvrtc.version))
        text += MANIFEST_SET.get(name, "")
        with open(os.path.join(folder, name + suffix + ".yaml"), "w") as f:
            f.write(text)
    check_spec(name, folder, ptx)


def main():
    names = sys.argv[1:] or list(KERNELS)
    for n in names:
        if n not in KERNELS:
            sys.exit("unknown kernel %s (known: %s)" % (n, " ".join(KERNELS)))
    ptxas = kb.find_ptxas()
    if not ptxas:
        print("warning: ptxas not found, PTX is not validated")
    nvrtc = kb.Nvrtc(kb.find_nvrtc())
    print("NVRTC %d.%d, ptxas %s" % (nvrtc.version + (ptxas,)))
    for name in names:
        build_one(name, nvrtc, ptxas)
        print("  built %s" % name)


if __name__ == "__main__":
    main()
