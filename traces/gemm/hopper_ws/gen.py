#!/usr/bin/env python3
"""The Hopper warp-specialised GEMM kernels of traces/gemm/hopper_ws_*/ (PTX generated here,
validated with `ptxas -arch=sm_90a` when ptxas is on PATH), their verification inputs and
NumPy-computed expected outputs, and their launch manifests.

C (M x N, f32, row-major) = A (M x K, row-major) . B^T with B given as N x K (row-major,
"TN": both operands K-major, as wgmma reads them without transposition).

Kernel structure (one 128 x 256 output tile per CTA, 384 threads):
  - warpgroup 2 is the producer: `setmaxnreg.dec 40`; one elected thread loops over the
    CTA's k-tiles, waits for the stage's `empty` mbarrier, arms the `full` mbarrier with
    `arrive.expect_tx` (48 KiB) and issues two TMA tensor loads (A box 128 rows x 128 B, B box
    256 rows x 128 B, 128B swizzle) completing on it;
  - warpgroups 0 and 1 are consumers (`setmaxnreg.inc 232`), each owning 64 rows: per k-tile
    they wait on `full`, run 4 `wgmma.mma_async m64n256k{16,8}` (descriptors: 128B swizzle,
    SBO 1024, advanced 32 bytes per k-step), commit, wait, and release the stage with one
    arrive per warp on `empty` (count 8);
  - a ring of 4 stages (4 x 48 KiB of dynamic shared memory) with mbarrier parities;
  - epilogue: the consumers write the accumulators to shared memory row-major, fence the
    async proxy, and one thread issues a TMA tensor store of the 128 x 256 f32 box (split-K:
    a TMA reduce-add into C; gridDim.z splits the k-tiles).
Thread-block clusters are not used (gpusim runs each CTA as a cluster of one).

Rerun: python3 traces/gemm/hopper_ws/gen.py (and with --broken: the variants of
traces/gemm/hopper_ws_broken/, each missing one synchronisation step, for `gpusim check`).
"""
import shutil
import subprocess
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BM, BN, STAGES = 128, 256, 4
STAGE_BYTES = 49152
BAR_OFF = STAGES * STAGE_BYTES
# descriptor high word: SBO = 1024 >> 4 at bit 32, 128B swizzle (mode 1) at bit 62
DESC_HI = (1024 >> 4) << 32 | 1 << 62 | (16 >> 4) << 16

VARIANTS = {
    "hopper_ws_bf16": dict(ty="bf16", esize=2, k=16, split=False),
    "hopper_ws_tf32": dict(ty="tf32", esize=4, k=8, split=False),
    "hopper_ws_bf16_splitk": dict(ty="bf16", esize=2, k=16, split=True),
    "hopper_ws_bf16_cluster2": dict(ty="bf16", esize=2, k=16, split=False, cluster=True),
    "hopper_ws_tf32_cluster2": dict(ty="tf32", esize=4, k=8, split=False, cluster=True),
}


RASTER_PLAIN = """	mov.u32 	%r3, %ctaid.x;
	shl.b32 	%r4, %r3, 8;
	mov.u32 	%r5, %ctaid.y;
	shl.b32 	%r6, %r5, 7;
"""

RASTER_GROUPED = """	// this CTA's tile: cluster c = ctaid.x + (ctaid.y / 2) * nctaid.x walks groups of 8
	// cluster-rows: my = first + (c mod 8*ncx) mod gsize, n = (c mod 8*ncx) / gsize
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r5, %ctaid.y;
	shr.u32 	%r50, %r5, 1;
	and.b32 	%r51, %r5, 1;
	mov.u32 	%r52, %nctaid.x;
	mov.u32 	%r53, %nctaid.y;
	shr.u32 	%r53, %r53, 1;
	mad.lo.u32 	%r54, %r50, %r52, %r3;
	shl.b32 	%r55, %r52, 3;
	div.u32 	%r56, %r54, %r55;
	shl.b32 	%r57, %r56, 3;
	sub.u32 	%r58, %r53, %r57;
	min.u32 	%r58, %r58, 8;
	rem.u32 	%r59, %r54, %r55;
	rem.u32 	%r60, %r59, %r58;
	add.u32 	%r60, %r60, %r57;
	div.u32 	%r3, %r59, %r58;
	shl.b32 	%r4, %r3, 8;
	shl.b32 	%r61, %r60, 1;
	add.u32 	%r5, %r61, %r51;
	shl.b32 	%r6, %r5, 7;
"""


def ptx(name, ty, esize, k, split, cluster=False):
    bk = 128 // esize  # elements of one 128-byte swizzle row
    steps = bk // k
    lg = bk.bit_length() - 1
    d = ", ".join(f"%d{i}" for i in range(128))
    if ty == "tf32":
        mma = f"wgmma.mma_async.sync.aligned.m64n256k{k}.f32.tf32.tf32 {{{d}}}, %rd1, %rd2, %p2, 1, 1;"
    else:
        mma = f"wgmma.mma_async.sync.aligned.m64n256k{k}.f32.{ty}.{ty} {{{d}}}, %rd1, %rd2, %p2, 1, 1, 0, 0;"
    mmas = "".join(f"\t{mma}\n\tadd.u64 \t%rd1, %rd1, 2;\n\tadd.u64 \t%rd2, %rd2, 2;\n" for _ in range(steps))
    zero = "".join(f"\tmov.f32 \t%d{i}, 0f00000000;\n" for i in range(128))
    stores = "".join(
        f"\tst.shared.v2.f32 \t[%r40+{(j % 2) * 8192 + (j // 2) * 32}], {{%d{2 * j}, %d{2 * j + 1}}};\n"
        for j in range(64)
    )
    out_op = (
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group"
        if split
        else "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"
    )
    what = f"{ty} inputs, f32 accumulate, {'split-K (TMA reduce-add)' if split else 'TMA store'} epilogue"
    if cluster:
        what += "; clusters of 2 CTAs along M sharing the B tile: each CTA's producer multicasts half of B into both CTAs, consumers release a stage in both CTAs (remote mbarrier arrives)"
    directives = "\n.reqnctapercluster 1, 2, 1" if cluster else ""
    empty_count = 16 if cluster else 8
    start_sync = (
        "\tbarrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;"
        if cluster
        else "\tbar.sync \t0;"
    )
    if cluster:
        b_load = (
            "\tmov.u32 \t%r36, %cluster_ctarank;\n"
            "\tmad.lo.u32 \t%r37, %r36, 16384, %r24;\n"
            "\tmad.lo.u32 \t%r38, %r36, 128, %r4;\n"
            "\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster \t[%r37], [%rd13, {%r35, %r38}], [%r20], 3;\n"
        )
        release = (
            "\t@%p5 mbarrier.arrive.shared::cta.b64 \t%rd3, [%r26];\n"
            "\tmov.u32 \t%r42, %cluster_ctarank;\n"
            "\txor.b32 \t%r42, %r42, 1;\n"
            "\tmapa.shared::cluster.u32 \t%r43, %r26, %r42;\n"
            # Default semantics (.release.cta), as CUTLASS's ClusterBarrier::arrive: the stage's
            # reads are complete (wgmma.wait_group) before the arrive. `.release.cluster` would
            # put a GPU-scope fence (MEMBAR.ALL.GPU, ~700 cycles on an H100) before every
            # release: that kernel measured 456 TFLOP/s at 8192^3, this one 656
            # (docs/correlation/h100-sxm-2026-11-27).
            "\t@%p5 mbarrier.arrive.shared::cluster.b64 \t_, [%r43];\n"
        )
        exit_code = "\tbarrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n\tret;\n"
        producer_guard = "$L_pdone"
    else:
        b_load = "\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes \t[%r24], [%rd13, {{%r35, %r4}}], [%r20];\n".replace("{{", "{").replace("}}", "}")
        release = "\t@%p5 mbarrier.arrive.shared::cta.b64 \t%rd3, [%r26];\n"
        exit_code = "\tret;\n"
        producer_guard = "$L_exit"
    text = f"""// {name}: generated by traces/gemm/hopper_ws/gen.py: warp-specialised Hopper GEMM,
// {what}; 128x256 CTA tile, BK = {bk}, {STAGES} stages, producer warpgroup with TMA,
// two consumer warpgroups with wgmma (see gen.py for the structure).
.version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 smem[];

.visible .entry {name}(
	.param .align 64 .b8 {name}_param_0[128],
	.param .align 64 .b8 {name}_param_1[128],
	.param .align 64 .b8 {name}_param_2[128],
	.param .u32 {name}_param_3
)
.maxntid 384, 1, 1{directives}
{{
	.reg .pred 	%p<8>;
	.reg .b32 	%r<64>;
	.reg .b64 	%rd<32>;
	.reg .f32 	%d<128>;

	mov.u32 	%r0, %tid.x;
	mov.u32 	%r1, smem;
	add.u32 	%r2, %r1, {BAR_OFF};
	mov.u32 	%r3, %ctaid.x;
	shl.b32 	%r4, %r3, 8;
	mov.u32 	%r5, %ctaid.y;
	shl.b32 	%r6, %r5, 7;
	// this split's k-tiles [%r12, %r13)
	ld.param.u32 	%r7, [{name}_param_3];
	add.u32 	%r8, %r7, {bk - 1};
	shr.u32 	%r8, %r8, {lg};
	mov.u32 	%r9, %nctaid.z;
	mov.u32 	%r10, %ctaid.z;
	add.u32 	%r11, %r8, %r9;
	sub.u32 	%r11, %r11, 1;
	div.u32 	%r11, %r11, %r9;
	mul.lo.u32 	%r12, %r10, %r11;
	add.u32 	%r13, %r12, %r11;
	min.u32 	%r13, %r13, %r8;
	setp.ne.u32 	%p0, %r0, 0;
	@%p0 bra 	$L_init_done;
	mbarrier.init.shared::cta.b64 	[%r2], 1;
	mbarrier.init.shared::cta.b64 	[%r2+8], 1;
	mbarrier.init.shared::cta.b64 	[%r2+16], 1;
	mbarrier.init.shared::cta.b64 	[%r2+24], 1;
	mbarrier.init.shared::cta.b64 	[%r2+32], {empty_count};
	mbarrier.init.shared::cta.b64 	[%r2+40], {empty_count};
	mbarrier.init.shared::cta.b64 	[%r2+48], {empty_count};
	mbarrier.init.shared::cta.b64 	[%r2+56], {empty_count};
	fence.mbarrier_init.release.cluster;
$L_init_done:
{start_sync}
	shr.u32 	%r14, %r0, 7;
	setp.eq.u32 	%p1, %r14, 2;
	@%p1 bra 	$L_producer;
	// ===== consumers: warpgroups 0 and 1 =====
	setmaxnreg.inc.sync.aligned.u32 	232;
{zero}	setp.eq.u32 	%p2, %r0, %r0;
	mov.u32 	%r15, %r12;
$L_cloop:
	setp.ge.u32 	%p3, %r15, %r13;
	@%p3 bra 	$L_cdone;
	sub.u32 	%r16, %r15, %r12;
	and.b32 	%r17, %r16, 3;
	shr.u32 	%r18, %r16, 2;
	and.b32 	%r18, %r18, 1;
	shl.b32 	%r19, %r17, 3;
	add.u32 	%r20, %r2, %r19;
$L_wfull:
	mbarrier.try_wait.parity.shared::cta.b64 	%p4, [%r20], %r18;
	@!%p4 bra 	$L_wfull;
	mul.lo.u32 	%r21, %r17, {STAGE_BYTES};
	add.u32 	%r22, %r1, %r21;
	mad.lo.u32 	%r23, %r14, 8192, %r22;
	add.u32 	%r24, %r22, 16384;
	cvt.u64.u32 	%rd1, %r23;
	shr.u64 	%rd1, %rd1, 4;
	and.b64 	%rd1, %rd1, 16383;
	or.b64 	%rd1, %rd1, {DESC_HI};
	cvt.u64.u32 	%rd2, %r24;
	shr.u64 	%rd2, %rd2, 4;
	and.b64 	%rd2, %rd2, 16383;
	or.b64 	%rd2, %rd2, {DESC_HI};
	wgmma.fence.sync.aligned;
{mmas}	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 	0;
	and.b32 	%r25, %r0, 31;
	setp.eq.u32 	%p5, %r25, 0;
	add.u32 	%r26, %r20, 32;
{release}	add.u32 	%r15, %r15, 1;
	bra.uni 	$L_cloop;
$L_cdone:
	// every consumer is done reading the stages before they hold the C tile
	bar.sync 	1, 256;
	and.b32 	%r25, %r0, 31;
	shr.u32 	%r27, %r0, 5;
	shl.b32 	%r28, %r27, 4;
	shr.u32 	%r29, %r25, 2;
	add.u32 	%r30, %r28, %r29;
	and.b32 	%r31, %r25, 3;
	shl.b32 	%r32, %r31, 1;
	mad.lo.u32 	%r33, %r30, 256, %r32;
	shl.b32 	%r34, %r33, 2;
	add.u32 	%r40, %r1, %r34;
{stores}	fence.proxy.async.shared::cta;
	bar.sync 	1, 256;
	@%p0 bra 	$L_exit;
	mov.u64 	%rd20, {name}_param_2;
	cvta.param.u64 	%rd21, %rd20;
	{out_op} 	[%rd21, {{%r4, %r6}}], [%r1];
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group 	0;
	bra.uni 	$L_exit;
	// ===== producer: warpgroup 2, one thread =====
$L_producer:
	setmaxnreg.dec.sync.aligned.u32 	40;
	setp.ne.u32 	%p6, %r0, 256;
	@%p6 bra 	{producer_guard};
	mov.u64 	%rd10, {name}_param_0;
	cvta.param.u64 	%rd11, %rd10;
	mov.u64 	%rd12, {name}_param_1;
	cvta.param.u64 	%rd13, %rd12;
	mov.u32 	%r15, %r12;
$L_ploop:
	setp.ge.u32 	%p3, %r15, %r13;
	@%p3 bra 	{producer_guard};
	sub.u32 	%r16, %r15, %r12;
	and.b32 	%r17, %r16, 3;
	shr.u32 	%r18, %r16, 2;
	and.b32 	%r18, %r18, 1;
	xor.b32 	%r18, %r18, 1;
	shl.b32 	%r19, %r17, 3;
	add.u32 	%r20, %r2, %r19;
	add.u32 	%r26, %r20, 32;
$L_wempty:
	mbarrier.try_wait.parity.shared::cta.b64 	%p4, [%r26], %r18;
	@!%p4 bra 	$L_wempty;
	mbarrier.arrive.expect_tx.shared::cta.b64 	%rd4, [%r20], {STAGE_BYTES};
	mul.lo.u32 	%r21, %r17, {STAGE_BYTES};
	add.u32 	%r22, %r1, %r21;
	add.u32 	%r24, %r22, 16384;
	shl.b32 	%r35, %r15, {lg};
	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes 	[%r22], [%rd11, {{%r35, %r6}}], [%r20];
{b_load}	add.u32 	%r15, %r15, 1;
	bra.uni 	$L_ploop;
$L_pdone:
	bra.uni 	$L_exit;
$L_exit:
{exit_code}}}
"""
    if cluster:
        # Grouped rasterisation (as CUTLASS/Triton order their tiles): clusters are dispatched
        # in linear order, and consecutive clusters walk GROUP (8) cluster-rows of M before
        # moving to the next n-tile, so a wave's CTAs share A and B tiles in L2.
        text = text.replace(RASTER_PLAIN, RASTER_GROUPED, 1)
    return text


def inputs(rng, ty, shape):
    """Element bits and exact values: multiples of 1/8 in [-2, 2] (exact in bf16 and tf32)."""
    v = rng.integers(-16, 17, size=shape) / 8.0
    if ty == "bf16":
        return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16), v
    return v.astype(np.float32), v


def manifest(name, tag, m, n, k, splits, ty, esize, bk, cluster=False):
    grid_x, grid_y = -(-n // BN), -(-m // BM)
    adt = "u16" if ty == "bf16" else "f32"
    mdt = "bf16" if ty == "bf16" else "tf32"
    init_c = "zeros"
    return f"""# {name}{tag}: C = A . B^T for M={m}, N={n}, K={k}{f', {splits} K-splits' if splits > 1 else ''};
# kernel, inputs and expected C (numpy) from traces/gemm/hopper_ws/gen.py.
kernel: {name}.ptx
set:
  sm.shared_bytes: 233472   # the kernel's 192 KiB of stages need Hopper's shared memory
launches:
  - entry: {name}
    grid: [{grid_x}, {grid_y}, {splits}]
    block: [384, 1, 1]
    shared_bytes: {BAR_OFF + 64}
    args:
      - {{ tensor_map: {{ buffer: A, dtype: {mdt}, dims: [{k}, {m}], box: [{bk}, {BM}], swizzle: 128B }} }}
      - {{ tensor_map: {{ buffer: B, dtype: {mdt}, dims: [{k}, {n}], box: [{bk}, {BN // 2 if cluster else BN}], swizzle: 128B }} }}
      - {{ tensor_map: {{ buffer: C, dims: [{n}, {m}], box: [{BN}, {BM}] }} }}
      - {k}
buffers:
  A: {{ dtype: {adt}, shape: [{m * k}], init: {{ npy: A{tag}.npy }} }}
  B: {{ dtype: {adt}, shape: [{n * k}], init: {{ npy: B{tag}.npy }} }}
  C: {{ dtype: f32, shape: [{m * n}], init: {init_c} }}
checks:
  - {{ buffer: C, npy: expected_C{tag}.npy, rtol: 0.0001, atol: 0.0001 }}
"""


def build(name, ty, esize, k, split, cluster=False):
    d = ROOT / name
    d.mkdir(exist_ok=True)
    text = ptx(name, ty, esize, k, split, cluster)
    (d / f"{name}.ptx").write_text(text)
    ptxas = shutil.which("ptxas")
    if ptxas:
        subprocess.run([ptxas, "-arch=sm_90a", str(d / f"{name}.ptx"), "-o", "/dev/null"], check=True)
    bk = 128 // esize
    cases = [("", 256, 512, 256, 1), ("_ragged", 200, 300, 200, 1)]
    if split:
        cases = [("", 128, 256, 512, 2), ("_ragged", 200, 300, 392, 3)]
    if cluster:
        cases = [("", 512, 512, 320, 1), ("_ragged", 456, 300, 200, 1)]
    seed = sum(map(ord, name))
    for tag, m, n, kk, splits in cases:
        rng = np.random.default_rng(seed + m + n + kk)
        abits, a = inputs(rng, ty, (m, kk))
        bbits, b = inputs(rng, ty, (n, kk))
        c = (a @ b.T).astype(np.float32)
        np.save(d / f"A{tag}.npy", abits.reshape(-1))
        np.save(d / f"B{tag}.npy", bbits.reshape(-1))
        np.save(d / f"expected_C{tag}.npy", c.reshape(-1))
        (d / f"{name}{tag}.yaml").write_text(manifest(name, tag, m, n, kk, splits, ty, esize, bk, cluster))


# Deliberately broken variants of hopper_ws_bf16 for the asynchronous-synchronisation checker
# (`gpusim check`, models::async_sync): each drops one synchronisation step; `expect` names
# the rule check must report first and the PTX line of the offending instruction.
# (variant, K, [(text to find, replacement)], rule, the offending line's text)
BROKEN = [
    ("no_acc_wait", 256,
     [("\twgmma.wait_group.sync.aligned \t0;\n\tand.b32", "\twgmma.wait_group.sync.aligned \t1;\n\tand.b32")],
     "accumulator-before-wait", "st.shared.v2.f32 \t[%r40+0], {%d0, %d1};"),
    ("no_proxy_fence", 256,
     [("\tfence.proxy.async.shared::cta;\n", "")],
     "missing-proxy-fence", "cp.async.bulk.tensor.2d.global.shared::cta"),
    ("no_full_wait", 256,
     [("\tmbarrier.try_wait.parity.shared::cta.b64 \t%p4, [%r20], %r18;\n\t@!%p4 bra \t$L_wfull;\n", "")],
     "early-tma-consumption", "wgmma.mma_async"),
    # The producer waits for the stage's previous load to land (the full barrier's previous
    # phase, which keeps the mbarrier protocol legal) instead of for the consumers to release
    # the stage (the empty barrier). K = 320: five k-tiles reuse one stage once, so it can run
    # at most one phase ahead (further, consumers waiting by parity would miss a phase).
    ("no_empty_wait", 320,
     [("\tmbarrier.try_wait.parity.shared::cta.b64 \t%p4, [%r26], %r18;", "\tmbarrier.try_wait.parity.shared::cta.b64 \t%p4, [%r20], %r18;")],
     # It runs ahead: its next load into the stage is issued before the consumers' wgmmas read
     # the previous one, so they read bytes of a phase they did not observe.
     "early-tma-consumption", "wgmma.mma_async"),
]


def build_broken():
    base = ptx("hopper_ws_bf16", "bf16", 2, 16, False)
    root = ROOT / "hopper_ws_broken"
    root.mkdir(exist_ok=True)
    for variant, k, edits, rule, marker in BROKEN:
        name = f"hopper_ws_bf16_{variant}"
        text = base.replace("hopper_ws_bf16", name)
        for old, new in edits:
            assert text.count(old) == 1, (variant, old)
            text = text.replace(old, new)
        line = next(i + 1 for i, l in enumerate(text.splitlines()) if marker in l)
        d = root / variant
        d.mkdir(exist_ok=True)
        (d / f"{name}.ptx").write_text(text)
        ptxas = shutil.which("ptxas")
        if ptxas:
            subprocess.run([ptxas, "-arch=sm_90a", str(d / f"{name}.ptx"), "-o", "/dev/null"], check=True)
        rng = np.random.default_rng(sum(map(ord, name)))
        m, n = 256, 512
        abits, _ = inputs(rng, "bf16", (m, k))
        bbits, _ = inputs(rng, "bf16", (n, k))
        np.save(d / "A.npy", abits.reshape(-1))
        np.save(d / "B.npy", bbits.reshape(-1))
        man = manifest(name, "", m, n, k, 1, "bf16", 2, 64)
        # No value checks: the point is the synchronisation, which `check` reports.
        man = man[: man.index("checks:")]
        man = man.replace(f"# {name}:", f"# {name} (broken: {variant.replace('_', ' ')}):", 1)
        (d / f"{name}.yaml").write_text(man)
        (d / "expect").write_text(f"{rule} {line}\n")


if __name__ == "__main__":
    import sys

    if "--broken" in sys.argv:
        build_broken()
    else:
        for name, v in VARIANTS.items():
            build(name, **v)
