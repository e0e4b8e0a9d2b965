#!/usr/bin/env python3
"""Writes wgmma_issue.ptx and wgmma_issue.yaml: when a warpgroup's wgmma issue returns, and what
a wgmma whose A and B come from shared memory (SS) costs against one whose A comes from
registers (RS) at small N.

Why (issue 14): the model blocks a wgmma at issue until the sub-partition's tensor unit is
free, and prices a wgmma by its FMAs alone (N/2 cycles for f16), whatever N. Whether the
hardware queues issued wgmmas, and whether at small N the shared-memory operand reads (A is
64x16 halves = 2 KiB per wgmma, at most 128 B/clk from shared memory) bound an SS wgmma, are
not published.

Entries (one CTA each; every warp's lane 0 writes 32 u64 to out[32 w ..] (out[32 w + 31]: the sum of its
      accumulators, zero, which keeps ptxas from dropping the wgmmas) and its wgmma count
to count[w]):
  issue_n<N>: one warpgroup; %clock64 before `wgmma.fence`, after each of 14 back-to-back
      m64n<N>k16 f16 SS wgmmas, and after `wait_group 0`: out[0] = the first clock, out[1..=15]
      the others minus it.
  ss_n<N>_g<G> / rs_n<N>_g1: G warpgroups each run a loop of 32 m64n<N>k16 f16 wgmmas (each
      committed, one wait at the end) with A from shared memory / from registers: out[0], out[1]
      = the clocks before and after.
Shared memory (48 KiB, zeroed and fenced to the async proxy) holds A at 0 and B at 16 KiB,
128-byte swizzled; the descriptors are built from the array's address.
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
ITERS = 32
ISSUES = 14
SLOTS = 32  # u64 words per warp in out

HEAD = """//
// wgmma_issue.ptx: written by gen_wgmma_issue.py (see its docstring). Do not edit.
//
.version 8.0
.target sm_90a
.address_size 64

// one array for every entry: each kernel that uses it gets its own 48 KiB
.shared .align 1024 .b8 smem[49152];
"""


def mma(n: int, rs: bool) -> str:
    acc = ", ".join(f"%h{i}" for i in range(n // 4))
    if rs:
        return f"\twgmma.mma_async.sync.aligned.m64n{n}k16.f16.f16.f16 {{{acc}}}, {{%a0, %a1, %a2, %a3}}, %rd9, 1, 1, 1, 0;\n"
    return f"\twgmma.mma_async.sync.aligned.m64n{n}k16.f16.f16.f16 {{{acc}}}, %rd8, %rd9, 1, 1, 1, 0, 0;\n"


def entry(name: str, body: str) -> str:
    fold = "\tmov.b32 \t%r20, 0;\n" + "".join(f"\tadd.s32 \t%r20, %r20, %h{i};\n" for i in range(64))
    zero_t = "".join(f"\tmov.u64 \t%t{i}, 0;\n" for i in range(ISSUES + 2))
    store_t = "".join(
        f"\tsub.s64 \t%rd12, %t{i}, %t0;\n\tst.global.u64 \t[%rd11+{8 * i}], %rd12;\n"
        for i in range(1, ISSUES + 2)
    )
    zero_acc = "".join(f"\tmov.b32 \t%h{i}, 0;\n" for i in range(64))
    return f"""
.visible .entry {name}(
	.param .u64 {name}_out,
	.param .u64 {name}_count
)
{{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<24>;
	.reg .b32 	%a<4>;
	.reg .b32 	%h<64>;
	.reg .b64 	%rd<32>;
	.reg .b64 	%t<17>;

	ld.param.u64 	%rd1, [{name}_out];
	ld.param.u64 	%rd2, [{name}_count];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;
	mov.u32 	%r0, %tid.x;
	mov.u32 	%r1, %ntid.x;
	// zero the shared array (16 bytes a thread a step), then make it visible to the async proxy
	mov.u32 	%r2, smem;
	shl.b32 	%r3, %r0, 4;
	mov.u32 	%r4, 0;
$L_zero_{name}:
	setp.ge.u32 	%p1, %r3, 49152;
	@%p1 bra 	$L_zeroed_{name};
	add.s32 	%r5, %r2, %r3;
	st.shared.v4.u32 	[%r5], {{%r4, %r4, %r4, %r4}};
	shl.b32 	%r6, %r1, 4;
	add.s32 	%r3, %r3, %r6;
	bra.uni 	$L_zero_{name};
$L_zeroed_{name}:
	fence.proxy.async.shared::cta;
	bar.sync 	0;
	// descriptors: 128-byte swizzle, LBO 16 B, SBO 1024 B; A at the array, B 16 KiB further
	shr.u32 	%r7, %r2, 4;
	and.b32 	%r7, %r7, 16383;
	cvt.u64.u32 	%rd3, %r7;
	mov.u64 	%rd4, 4611686293305360384;
	or.b64 	%rd8, %rd4, %rd3;
	add.s64 	%rd9, %rd8, 1024;
	mov.b32 	%a0, 0;
	mov.b32 	%a1, 0;
	mov.b32 	%a2, 0;
	mov.b32 	%a3, 0;
{zero_acc}{zero_t}	mov.u32 	%r10, 0;
{body}	// lane 0 of each warp: out[32 w + i] = %t_i - %t0 (i = 1..15), out[32 w] = %t0; count[w]
	and.b32 	%r12, %r0, 31;
	setp.ne.u32 	%p2, %r12, 0;
	@%p2 bra 	$L_done_{name};
	shr.u32 	%r13, %r0, 5;
	mul.wide.u32 	%rd10, %r13, 256;
	add.s64 	%rd11, %rd1, %rd10;
	st.global.u64 	[%rd11], %t0;
{store_t}	mul.wide.u32 	%rd13, %r13, 4;
	add.s64 	%rd14, %rd2, %rd13;
	st.global.u32 	[%rd14], %r10;
	// the accumulators' sum (zero: A and B are zero) keeps ptxas from dropping the wgmmas
{fold}	cvt.u64.u32 	%rd15, %r20;
	st.global.u64 	[%rd11+248], %rd15;
$L_done_{name}:
	ret;
}}
"""


def issue_body(n: int) -> str:
    out = "\tmov.u64 \t%t0, %clock64;\n\twgmma.fence.sync.aligned;\n"
    for i in range(ISSUES):
        out += mma(n, False) + f"\tmov.u64 \t%t{i + 1}, %clock64;\n"
    out += "\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n"
    out += f"\tmov.u64 \t%t{ISSUES + 1}, %clock64;\n\tmov.u32 \t%r10, {ISSUES};\n"
    return out


def loop_body(name: str, n: int, rs: bool) -> str:
    return (
        "\tmov.u64 \t%t0, %clock64;\n\twgmma.fence.sync.aligned;\n"
        f"$L_loop_{name}:\n{mma(n, rs)}\twgmma.commit_group.sync.aligned;\n"
        "\tadd.s32 \t%r10, %r10, 1;\n"
        f"\tsetp.lt.u32 \t%p3, %r10, {ITERS};\n\t@%p3 bra \t$L_loop_{name};\n"
        "\twgmma.wait_group.sync.aligned 0;\n\tmov.u64 \t%t1, %clock64;\n"
    )


def main() -> None:
    entries = []  # (name, body, warpgroups)
    for n in (64, 256):
        entries.append((f"issue_n{n}", issue_body(n), 1))
    for rs in (False, True):
        for n in (8, 16, 32, 64, 128, 256):
            # RS at one warpgroup only: ptxas gives its loops 158-218 registers, more than
            # four warpgroups of 128 threads may hold
            for g in (1,) if rs else (1, 4):
                name = f"{'rs' if rs else 'ss'}_n{n}_g{g}"
                entries.append((name, loop_body(name, n, rs), g))
    (HERE / "wgmma_issue.ptx").write_text(HEAD + "".join(entry(name, body) for name, body, _ in entries))
    launches, buffers, checks = [], [], []
    for name, _, g in entries:
        warps = 4 * g
        count = ISSUES if name.startswith("issue") else ITERS
        launches.append(
            f"  - entry: {name}\n    grid: [1, 1, 1]\n    block: [{128 * g}, 1, 1]\n    args: [out_{name}, count_{name}]"
        )
        buffers.append(f"  out_{name}: {{ dtype: u64, shape: [{SLOTS * warps}], init: zeros }}")
        buffers.append(f"  count_{name}: {{ dtype: u32, shape: [{warps}], init: zeros }}")
        checks.append(f"  - buffer: count_{name}\n    values: [{', '.join([str(count)] * warps)}]")
    text = (
        "# wgmma_issue: when wgmma issue returns; SS vs RS wgmma cost at small N (gen_wgmma_issue.py\n"
        "# writes this file; see its docstring). out_<entry>[32 w + i]: warp w's clocks.\n"
        "kernel: wgmma_issue.ptx\n"
        "# an H100's register file (hopper-h100.yaml's own value), so that four warpgroups of\n"
        "# m64n256 accumulators fit on any config that runs sm_90a (the test default, tiny, has half)\n"
        "set:\n  sm.registers: 65536\nlaunches:\n" + "\n".join(launches)
        + "\nbuffers:\n" + "\n".join(buffers) + "\nchecks:\n" + "\n".join(checks) + "\n"
    )
    (HERE / "wgmma_issue.yaml").write_text(text)


if __name__ == "__main__":
    main()
