#!/usr/bin/env python3
"""Writes gemm_phases{,_cluster2}.{ptx,yaml} and their expected files: where the cycles of a
warp-specialised Hopper GEMM tile go, CTA by CTA.

Why (issue 14): Nsight Compute counts 326 K SM cycles for hopper_ws_bf16 at 4096³ on an H200
(docs/correlation/h200-2026-11-28/clocks), 80 % of the tensor peak; its most-loaded SMs run 4
tiles of 65.5 K tensor cycles, so ~16 K cycles per tile go elsewhere — ~15 K at 6144³ and 8192³
and for tf32 too: a cost per CTA, not per k-step. Which part of a CTA's life it is (start and
pipeline fill, the main loop, the epilogue's shared-memory stores, the TMA store, the switch to
the SM's next CTA) is not published.

The kernel is traces/gemm/hopper_ws_bf16's (gen.py) with one more parameter, `stamps` (8 u64 per
CTA, indexed ctaid.y * nctaid.x + ctaid.x), written by thread 0 (consumer warpgroup 0, which also
inits the barriers and issues the TMA store):
  [0] %smid; [1] %clock64 at entry; [2] after the first full-stage wait; [3] at the end of the
  main loop; [4] after the epilogue's shared-memory stores and barrier; [5] after the TMA store's
  wait_group 0; [6] %globaltimer at entry; [7] %globaltimer after [5].
Two launches of 288 CTAs (M = 2048, N = 4608: 2.2 CTAs per SM on 132 SMs), K = 128 and K = 512
(2 and 8 k-steps): their loop times differ by 6 k-steps' steady state; what is left is per CTA.
A and B are all ones (bf16 1.0), so C = K everywhere: after its TMA store has completed, thread 0
reads its tile's first element of C back (one more parameter, C's address) into tile_c_k<K>[c],
which the check compares with K (C itself, 36 MiB, has no expected file).

gemm_phases_cluster2 is traces/gemm/hopper_ws_bf16_cluster2's kernel (clusters of 2 CTAs along
M, B multicast, stages released in both CTAs) instrumented the same way, one launch at K = 128:
what a CTA pair costs beside the non-cluster tile. Its stamps are indexed by the tile the CTA
computes (the kernel's grouped tile order), which is one per CTA as well.
"""

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
M, N = 2048, 4608
# name: (source kernel, Ks, cluster dimensions, rows of B's TMA box: its gemm.yaml's)
VARIANTS = {
    "gemm_phases": ("hopper_ws_bf16", (128, 512), None, 256),
    "gemm_phases_cluster2": ("hopper_ws_bf16_cluster2", (128,), (1, 2, 1), 128),
}


def instrument(ptx: str, source: str, name: str) -> str:
    ptx = ptx.replace(source, name)
    head = (f"// {name}.ptx: written by gen_gemm_phases.py from traces/gemm/{source} (see its\n"
            "// docstring). Do not edit.\n")
    ptx = head + ptx[ptx.index(".version"):]

    def once(old: str, new: str) -> None:
        nonlocal ptx
        old, new = old.replace("{P}", name), new.replace("{P}", name)
        assert ptx.count(old) == 1, old
        ptx = ptx.replace(old, new)

    once("\t.param .u32 {P}_param_3\n", "\t.param .u32 {P}_param_3,\n\t.param .u64 {P}_param_4,\n"
         "\t.param .u64 {P}_param_5,\n\t.param .u64 {P}_param_6\n")
    once("\t.reg .f32 \t%d<128>;\n", "\t.reg .f32 \t%d<128>;\n\t.reg .b64 \t%st<8>;\n")
    once("\tmov.u32 \t%r0, %tid.x;\n", "\tmov.u32 \t%r0, %tid.x;\n\tmov.u64 \t%st0, %clock64;\n\tmov.u64 \t%st6, %globaltimer;\n")
    once("\t@!%p4 bra \t$L_wfull;\n",
         "\t@!%p4 bra \t$L_wfull;\n\tsetp.eq.u32 \t%p7, %r15, %r12;\n\t@%p7 mov.u64 \t%st1, %clock64;\n")
    once("$L_cdone:\n", "$L_cdone:\n\tmov.u64 \t%st2, %clock64;\n")
    once("\tfence.proxy.async.shared::cta;\n\tbar.sync \t1, 256;\n",
         "\tfence.proxy.async.shared::cta;\n\tbar.sync \t1, 256;\n\tmov.u64 \t%st3, %clock64;\n")
    stamps = ["%rd29", "%st0", "%st1", "%st2", "%st3", "%st4", "%st6", "%st7"]
    write = "".join(f"\tst.global.u64 \t[%rd30+{8 * i}], {r};\n" for i, r in enumerate(stamps))
    once("\tcp.async.bulk.wait_group \t0;\n",
         "\tcp.async.bulk.wait_group \t0;\n"
         "\tmov.u64 \t%st4, %clock64;\n\tmov.u64 \t%st7, %globaltimer;\n"
         "\tld.param.u64 \t%rd30, [{P}_param_4];\n\tcvta.to.global.u64 \t%rd30, %rd30;\n"
         "\tmov.u32 \t%r60, %nctaid.x;\n\tmad.lo.u32 \t%r61, %r5, %r60, %r3;\n"
         "\tmul.wide.u32 \t%rd31, %r61, 64;\n\tadd.s64 \t%rd30, %rd30, %rd31;\n"
         "\tmov.u32 \t%r62, %smid;\n\tcvt.u64.u32 \t%rd29, %r62;\n" + write +
         # C[ctaid.y * 128][ctaid.x * 256] = C + 4 (ctaid.y * 128 * (nctaid.x * 256) + ctaid.x * 256)
         "\tld.param.u64 \t%rd28, [{P}_param_5];\n\tcvta.to.global.u64 \t%rd28, %rd28;\n"
         "\tshl.b32 \t%r63, %r60, 8;\n\tmul.wide.u32 \t%rd27, %r6, %r63;\n\tcvt.u64.u32 \t%rd26, %r4;\n"
         "\tadd.s64 \t%rd27, %rd27, %rd26;\n\tshl.b64 \t%rd27, %rd27, 2;\n\tadd.s64 \t%rd28, %rd28, %rd27;\n"
         "\tld.global.f32 \t%d0, [%rd28];\n"
         "\tld.param.u64 \t%rd25, [{P}_param_6];\n\tcvta.to.global.u64 \t%rd25, %rd25;\n"
         "\tmul.wide.u32 \t%rd24, %r61, 4;\n\tadd.s64 \t%rd25, %rd25, %rd24;\n\tst.global.f32 \t[%rd25], %d0;\n")
    return ptx


def manifest(name: str, ks: tuple, cluster, b_rows: int) -> str:
    ctas = (N // 256) * (M // 128)
    out = [f"# {name}: a Hopper GEMM tile's phases per CTA (gen_gemm_phases.py writes this file;",
           "# see its docstring). stamps_k<K>[8 c ..]: CTA c's SM and clocks.",
           f"kernel: {name}.ptx", "set:",
           "  sm.shared_bytes: 233472   # the kernel's 192 KiB of stages need Hopper's shared memory",
           "launches:"]
    for k in ks:
        out += [f"  - entry: {name}", f"    grid: [{N // 256}, {M // 128}, 1]", "    block: [384, 1, 1]"]
        if cluster:
            out.append(f"    cluster: [{cluster[0]}, {cluster[1]}, {cluster[2]}]")
        out += ["    shared_bytes: 196672", "    args:",
                f"      - {{ tensor_map: {{ buffer: A{k}, dtype: bf16, dims: [{k}, {M}], box: [64, 128], swizzle: 128B }} }}",
                f"      - {{ tensor_map: {{ buffer: B{k}, dtype: bf16, dims: [{k}, {N}], box: [64, {b_rows}], swizzle: 128B }} }}",
                f"      - {{ tensor_map: {{ buffer: C{k}, dims: [{N}, {M}], box: [256, 128] }} }}",
                f"      - {k}", f"      - stamps_k{k}", f"      - C{k}", f"      - tile_c_k{k}"]
    out.append("buffers:")
    for k in ks:
        out += [f"  A{k}: {{ dtype: u16, shape: [{M * k}], init: {{ fill: 0x3F80 }} }}   # bf16 1.0",
                f"  B{k}: {{ dtype: u16, shape: [{N * k}], init: {{ fill: 0x3F80 }} }}",
                f"  C{k}: {{ dtype: f32, shape: [{M * N}], init: zeros }}",
                f"  stamps_k{k}: {{ dtype: u64, shape: [{8 * ctas}], init: zeros }}",
                f"  tile_c_k{k}: {{ dtype: f32, shape: [{ctas}], init: zeros }}"]
    out.append("checks:")
    for k in ks:
        out.append(f"  - {{ buffer: tile_c_k{k}, npy: gemm_phases_tiles_k{k}.npy }}")
    return "\n".join(out) + "\n"


def main() -> None:
    ctas = (N // 256) * (M // 128)
    for name, (source, ks, cluster, b_rows) in VARIANTS.items():
        ptx = (HERE.parent / "gemm" / source / f"{source}.ptx").read_text()
        (HERE / f"{name}.ptx").write_text(instrument(ptx, source, name))
        (HERE / f"{name}.yaml").write_text(manifest(name, ks, cluster, b_rows))
        for k in ks:
            np.save(HERE / f"gemm_phases_tiles_k{k}.npy", np.full(ctas, float(k), dtype=np.float32))


if __name__ == "__main__":
    main()
