#!/usr/bin/env python3
"""Writes the asynchronous-synchronisation regression traces of traces/litmus/async/: the
Exo-GPU paper's three bug examples (digest shared/notes/exo-gpu.md §2.3) as hand-written PTX,
each with its fixed counterpart, a manifest with expected outputs and an `expect` sidecar
(`<rule> <line>` of the violation `gpusim check` must report, or `clean`).

Run from anywhere: python3 traces/litmus/async/gen.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# Shared layout (one static array): A 64x16 bf16 (2048 B), B 8x16 bf16 (256 B), two mbarriers.
# Descriptors: K-major, no swizzle, LBO 128 B, SBO 256 B (encoded >> 4 at bits 16 and 32).
DESC_HI = (8 << 16) | (16 << 32)

HEAD = """//{title}
// traces/litmus/async/gen.py writes this file; README.md maps it to the Exo-GPU paper (digest
// shared/notes/exo-gpu.md §2.3).{notes}
.version 8.0
.target sm_90a
.address_size 64

.visible .entry {name}(
\t.param .u64 {name}_pA,
\t.param .u64 {name}_pB,
\t.param .u64 {name}_pB2,
\t.param .u64 {name}_pOut,
\t.param .u64 {name}_pOut2
)
.maxntid {threads}, 1, 1
{cluster}{{
\t.reg .pred \t%p<8>;
\t.reg .b32 \t%r<32>;
\t.reg .b64 \t%rd<24>;
\t.reg .f32 \t%d<8>;
\t.shared .align 128 .b8 smem[2320];
\tld.param.u64 \t%rd1, [{name}_pA];
\tld.param.u64 \t%rd2, [{name}_pB];
\tld.param.u64 \t%rd3, [{name}_pB2];
\tld.param.u64 \t%rd4, [{name}_pOut];
\tld.param.u64 \t%rd5, [{name}_pOut2];
\tcvta.to.global.u64 \t%rd1, %rd1;
\tcvta.to.global.u64 \t%rd2, %rd2;
\tcvta.to.global.u64 \t%rd3, %rd3;
\tcvta.to.global.u64 \t%rd4, %rd4;
\tcvta.to.global.u64 \t%rd5, %rd5;
\tmov.u32 \t%r0, %tid.x;
\tmov.u32 \t%r6, %ctaid.x;
\tmad.lo.u32 \t%r7, %r6, {threads}, %r0;
\tmul.wide.u32 \t%rd6, %r7, 4;
\tadd.u64 \t%rd7, %rd4, %rd6;
\tadd.u64 \t%rd8, %rd5, %rd6;
\tmov.u32 \t%r2, smem;
\tadd.u32 \t%r3, %r2, 2048;
\tadd.u32 \t%r4, %r2, 2304;
\tadd.u32 \t%r5, %r2, 2312;
\tsetp.eq.u32 \t%p0, %r0, 0;
\tmov.u32 \t%r8, 0;
\t@%p0 mbarrier.init.shared::cta.b64 \t[%r4], 1;
\t@%p0 mbarrier.init.shared::cta.b64 \t[%r5], 1;
"""

# The fill: thread 0 loads A and B with bulk copies completing on bar0 (and, in a cluster,
# expects the multicast on bar1); everyone waits for bar0's phase 0.
FILL = """\t@%p0 mbarrier.arrive.expect_tx.shared::cta.b64 \t%rd9, [%r4], 2304;
\t@%p0 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes \t[%r2], [%rd1], 2048, [%r4];
\t@%p0 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes \t[%r3], [%rd2], 256, [%r4];
$L_fill:
\tmbarrier.try_wait.parity.shared::cta.b64 \t%p1, [%r4], %r8;
\t@!%p1 bra \t$L_fill;
"""

CLUSTER_SYNC = """\tbarrier.cluster.arrive.release.aligned;
\tbarrier.cluster.wait.acquire.aligned;
"""

# A descriptor's start address is 14 bits of (address >> 4): the address is masked first,
# since on sm_90 a shared address carries the CTA's cluster rank at bit 24 and would spill
# into the LBO field in every CTA but rank 0 (an H100 faulted on the unmasked form).
WGMMA = """\tshr.u32 \t%r9, %r2, 4;
\tand.b32 \t%r9, %r9, 16383;
\tcvt.u64.u32 \t%rd10, %r9;
\tor.b64 \t%rd10, %rd10, {hi};
\tshr.u32 \t%r10, %r3, 4;
\tand.b32 \t%r10, %r10, 16383;
\tcvt.u64.u32 \t%rd11, %r10;
\tor.b64 \t%rd11, %rd11, {hi};
\tsetp.ne.u32 \t%p2, %r8, 0;
\twgmma.fence.sync.aligned;
\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 \t{{%d0, %d1, %d2, %d3}}, %rd10, %rd11, %p2, 1, 1, 0, 0;
\twgmma.commit_group.sync.aligned;
""".format(hi=DESC_HI)

WAIT = "\twgmma.wait_group.sync.aligned \t0;\n"

STORE_D = """@D@\tadd.f32 \t%d4, %d0, %d1;
\tadd.f32 \t%d4, %d4, %d2;
\tadd.f32 \t%d4, %d4, %d3;
\tst.global.f32 \t[%rd7], %d4;
"""

# Rank 0's thread 0 multicasts B2 over B in both CTAs (ctaMask 3), completing on each CTA's
# bar1; everyone waits for its bar1 phase 0 and reads the new B.
MULTICAST = """\tmov.u32 \t%r11, %cluster_ctarank;
\tsetp.eq.and.u32 \t%p3, %r11, 0, %p0;
\tmov.u16 \t%rs0, 3;
@MC@\t@%p3 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster \t[%r3], [%rd3], 256, [%r5], %rs0;
$L_mc:
\tmbarrier.try_wait.parity.shared::cta.b64 \t%p4, [%r5], %r8;
\t@!%p4 bra \t$L_mc;
\tand.b32 \t%r12, %r0, 63;
\tshl.b32 \t%r12, %r12, 2;
\tadd.u32 \t%r12, %r3, %r12;
\tld.shared.u32 \t%r13, [%r12];
\tst.global.u32 \t[%rd8], %r13;
"""

# Bug 1's in-order reads of the first B.
READ_B = """\tand.b32 \t%r14, %r0, 63;
\tshl.b32 \t%r14, %r14, 2;
\tadd.u32 \t%r14, %r3, %r14;
\tld.shared.u32 \t%r15, [%r14];
\tst.global.u32 \t[%rd7], %r15;
"""

TAIL = "\tret;\n}\n"


def kernel(name, variant):
    """(PTX body, threads, cluster?); `@MC@`/`@D@` mark the multicast and the first read of D."""
    cluster = variant.startswith(("dsmem", "cluster"))
    threads = 64 if variant.startswith("dsmem") else 128
    body = ""
    if cluster:
        body += "\tfence.mbarrier_init.release.cluster;\n" + CLUSTER_SYNC
        body += "\t@%p0 mbarrier.arrive.expect_tx.shared::cta.b64 \t%rd12, [%r5], 256;\n"
    body += FILL
    if variant.startswith("dsmem"):
        body += READ_B
        if variant == "dsmem_war":
            body += "\tbar.sync \t0;\n"
        else:
            body += CLUSTER_SYNC
        body += MULTICAST
    elif variant.startswith("cluster"):
        body += WGMMA
        if variant == "cluster_wgmma_war":
            body += "\tbarrier.cluster.arrive.release.aligned;\n" + WAIT
            body += "\tbarrier.cluster.wait.acquire.aligned;\n"
        else:
            body += WAIT + CLUSTER_SYNC
        body += STORE_D + MULTICAST
    else:
        body += WGMMA
        if variant == "acc_fixed":
            body += WAIT
        body += STORE_D
    if cluster:
        # No CTA exits while a peer may still reach its shared memory.
        body += CLUSTER_SYNC
    return body, threads, cluster


TRACES = {
    # name: (variant, title, notes, rule or None)
    "dsmem_war_bug": (
        "dsmem_war",
        " dsmem_war_bug: Exo-GPU §2.3 bug 1 (inter-CTA WAR through DSMEM), the bug.",
        "\n// Each CTA reads its shard of B, then only a CTA-scope barrier (bar.sync) before rank 0's TMA\n// multicast overwrites B in both CTAs: the peer CTA may still be reading. `gpusim check`:\n// buffer-overwrite at the multicast.",
        "buffer-overwrite",
    ),
    "dsmem_war_fixed": (
        "dsmem_war_fixed",
        " dsmem_war_fixed: Exo-GPU §2.3 bug 1 fixed: a cluster barrier (barrier.cluster.arrive/wait)\n// before the multicast orders every CTA's reads of B before the overwrite.",
        "",
        None,
    ),
    "acc_no_wait_bug": (
        "acc_no_wait",
        " acc_no_wait_bug: Exo-GPU §2.3 bug 2 (intra-thread async RAW), the bug.",
        "\n// The warpgroup issues wgmma into D and commits it, then in-order adds read D with no\n// wgmma.wait_group. `gpusim check`: accumulator-before-wait at the first add.",
        "accumulator-before-wait",
    ),
    "acc_wait_fixed": (
        "acc_fixed",
        " acc_wait_fixed: Exo-GPU §2.3 bug 2 fixed: wgmma.wait_group 0 before D is read.",
        "",
        None,
    ),
    "cluster_wgmma_war_bug": (
        "cluster_wgmma_war",
        " cluster_wgmma_war_bug: Exo-GPU §2.2/§2.3 bug 3 (async read not covered by transitivity).",
        "\n// Each warpgroup reads B with wgmma and commits; it arrives on the cluster barrier, then waits\n// for its wgmma group, then waits on the cluster barrier; rank 0's TMA multicast then overwrites\n// B in both CTAs. At the arrive the wgmma reads were unordered on wgS only, so the transitive\n// cuda_in_order arrive does not carry them. `gpusim check`: buffer-overwrite at the multicast.",
        "buffer-overwrite",
    ),
    "cluster_wgmma_war_fixed": (
        "cluster_wgmma_fixed",
        " cluster_wgmma_war_fixed: Exo-GPU §2.3 bug 3 fixed: wgmma.wait_group 0 before\n// barrier.cluster.arrive (\"we must not arrive on the epilogue cluster sync until all wgmma retire\").",
        "",
        None,
    ),
}

BF16_ONE, BF16_TWO = 0x3F80, 0x4000


def write(name, variant, title, notes, rule):
    body, threads, cluster = kernel(name, variant)
    head = HEAD.format(
        title=title,
        notes=notes,
        name=name,
        threads=threads,
        cluster=".reqnctapercluster 2, 1, 1\n" if cluster else "",
    )
    text = head.replace("\t.reg .b64", "\t.reg .b16 \t%rs<2>;\n\t.reg .b64", 1) + body + TAIL
    # The bug is reported at the multicast (clusters) or at the first read of D.
    mark = "@MC@" if cluster else "@D@"
    lines = text.split("\n")
    at = next(i for i, l in enumerate(lines) if mark in l)
    lines = [l.replace("@MC@", "").replace("@D@", "") for l in lines]
    text = "\n".join(lines).replace("§", "Sec. ")
    line = at + 1  # the instruction the violation is reported at (1-based)
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name + ".ptx"), "w") as f:
        f.write(text)
    ctas = 2 if cluster else 1
    n = ctas * threads
    if variant.startswith("dsmem"):
        out = [BF16_ONE | BF16_ONE << 16] * n  # the first B, read in order
        out_dtype = "u32"
    else:
        out = [64.0] * n  # sum of the thread's four D elements: 4 x (16 ones . ones)
        out_dtype = "f32"
    checks = [f"  - buffer: out\n    values: {out}\n"]
    if cluster:
        checks.append(f"  - buffer: out2\n    values: {[BF16_TWO | BF16_TWO << 16] * n}\n")
    expect = "clean" if rule is None else f"{rule} {line}"
    manifest = f"""# {name}: {title.strip().splitlines()[0].split(': ', 1)[1]}
# traces/litmus/async/gen.py writes this manifest; `expect` says what `gpusim check` reports
# ({expect}); README.md maps it to the paper. A and B hold bf16 ones, B2 bf16 twos.
kernel: {name}.ptx
launches:
  - entry: {name}
    grid: [{ctas}, 1, 1]
    block: [{threads}, 1, 1]
{"    cluster: [2, 1, 1]" + chr(10) if cluster else ""}    args: [A, B, B2, out, out2]
buffers:
  A: {{ dtype: u16, shape: [1024], init: {{ fill: {BF16_ONE} }} }}
  B: {{ dtype: u16, shape: [128], init: {{ fill: {BF16_ONE} }} }}
  B2: {{ dtype: u16, shape: [128], init: {{ fill: {BF16_TWO} }} }}
  out: {{ dtype: {out_dtype}, shape: [{n}], init: zeros }}
  out2: {{ dtype: u32, shape: [{n}], init: zeros }}
checks:
{"".join(checks)}"""
    with open(os.path.join(d, name + ".yaml"), "w") as f:
        f.write(manifest)
    with open(os.path.join(d, "expect"), "w") as f:
        f.write(expect + "\n")


for name, (variant, title, notes, rule) in TRACES.items():
    write(name, variant, title, notes, rule)
