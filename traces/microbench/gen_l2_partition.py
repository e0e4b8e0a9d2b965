#!/usr/bin/env python3
"""Writes l2_partition.ptx, l2_partition.yaml and the expected sums: where an SM's L2 hits are
served from, near or far partition, and whether lines are replicated.

Why: an H100/H800 L2 is two partitions; Luo et al. (IPDPS 2024) measure 264.5 cycles for a hit
in the near partition and 445-502 in the far one (shared/notes/hardware.md §3b). What decides
which partition serves an SM's hit (the line's home, or a copy in the SM's own partition) is not
published; this trace measures it on the GPU and in the model alike.

Launches, in order:
  1. l2_warm: one CTA of 1024 threads reads every 128-byte line of the first 4 MiB of `data`
     once (ld.global.cg: L2 only), from whichever SM it lands on (its %smid -> warm_smid[0]).
  2. l2_probe: 132 CTAs of one warp; lane 0 walks 256 lines 127 lines apart (inside those
     4 MiB) twice, timing each dependent ld.global.cg between two %clock64 reads: lat_4m[cta]
     holds 2 x 256 latencies, smid_4m[cta] its SM. A line served by the near partition on pass 0
     and pass 1 is near; a line far on pass 0 and near on pass 1 was copied to the near one.
  3. l2_warm over the first 48 MiB (more than half the L2 of an H100: a partition's worth and
     then some), then 4. l2_probe over them (256 lines 1531 lines apart): lat_48m, smid_48m.
  5. l2_probe over 256 lines 31 lines apart from 48 MiB on, which nothing read before: pass 0
     is DRAM (for the first CTA to reach a line), pass 1 L2: lat_cold, smid_cold.
  6. Three times, each over a fresh 4 MiB (from 52, 56, 60 MiB): l2_warm from one SM, then
     l2_probe with only CTA `solo` (8, 20, 0) timing, so that no other SM's loads make copies
     of the lines while it walks them: lat_solo<k>, smid_solo<k>.

`data` is iota (word w holds w), so a load returns its own word index and the next address is
value + stride: a true dependence ptxas cannot fold. Checks: each warm thread's sum of the words
it read, and each probe CTA's final word index (256 x stride).
"""

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
LINE_WORDS = 32
SAMPLES = 256
CTAS = 132
WARM_THREADS = 1024
DATA_WORDS = 64 << 18  # 64 MiB of u32

MIB_WORDS = 1 << 18
ALL = 0xFFFFFFFF  # every CTA times
# name -> (warm: (first word, bytes) or None, probe: (first word, stride in words, solo CTA))
EXPERIMENTS = {
    "4m": ((0, 4 << 20), (0, 127 * LINE_WORDS, ALL)),
    "48m": ((0, 48 << 20), (0, 1531 * LINE_WORDS, ALL)),
    "cold": (None, (48 * MIB_WORDS, 31 * LINE_WORDS, ALL)),
    "solo8": ((52 * MIB_WORDS, 4 << 20), (52 * MIB_WORDS, 127 * LINE_WORDS, 8)),
    "solo20": ((56 * MIB_WORDS, 4 << 20), (56 * MIB_WORDS, 127 * LINE_WORDS, 20)),
    "solo0": ((60 * MIB_WORDS, 4 << 20), (60 * MIB_WORDS, 127 * LINE_WORDS, 0)),
}


PTX = """//
// l2_partition.ptx: written by gen_l2_partition.py (see its docstring). Do not edit.
//
.version 8.0
.target sm_90
.address_size 64

.visible .entry l2_warm(
	.param .u64 l2_warm_data,
	.param .u64 l2_warm_sink,
	.param .u64 l2_warm_smid,
	.param .u32 l2_warm_first,
	.param .u32 l2_warm_lines
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<12>;
	.reg .b64 	%rd<12>;

	ld.param.u64 	%rd1, [l2_warm_data];
	ld.param.u64 	%rd2, [l2_warm_sink];
	ld.param.u64 	%rd3, [l2_warm_smid];
	ld.param.u32 	%r1, [l2_warm_lines];
	ld.param.u32 	%r7, [l2_warm_first];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;
	cvta.to.global.u64 	%rd3, %rd3;
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r5, %r2;
	mov.u32 	%r3, 0;
$L_warm:
	setp.ge.u32 	%p1, %r2, %r1;
	@%p1 bra 	$L_warm_done;
	shl.b32 	%r8, %r2, 5;
	add.s32 	%r8, %r8, %r7;
	mul.wide.u32 	%rd4, %r8, 4;
	add.s64 	%rd5, %rd1, %rd4;
	ld.global.cg.u32 	%r4, [%rd5];
	add.s32 	%r3, %r3, %r4;
	add.s32 	%r2, %r2, 1024;
	bra.uni 	$L_warm;
$L_warm_done:
	mul.wide.u32 	%rd6, %r5, 4;
	add.s64 	%rd7, %rd2, %rd6;
	st.global.u32 	[%rd7], %r3;
	setp.ne.s32 	%p2, %r5, 0;
	@%p2 bra 	$L_warm_end;
	mov.u32 	%r6, %smid;
	st.global.u32 	[%rd3], %r6;
$L_warm_end:
	ret;
}

.visible .entry l2_probe(
	.param .u64 l2_probe_data,
	.param .u64 l2_probe_lat,
	.param .u64 l2_probe_smid,
	.param .u64 l2_probe_sink,
	.param .u32 l2_probe_first,
	.param .u32 l2_probe_stride,
	.param .u32 l2_probe_solo
)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<24>;
	.reg .b64 	%rd<16>;
	.shared .align 4 .b32 lat_s[512];
	.shared .align 4 .b32 sink_s;

	// lane 0 of every CTA, or of CTA `solo` alone (the others exit at once)
	mov.u32 	%r1, %tid.x;
	setp.ne.s32 	%p1, %r1, 0;
	@%p1 bra 	$L_probe_end;
	ld.param.u32 	%r17, [l2_probe_solo];
	mov.u32 	%r18, %ctaid.x;
	setp.ne.s32 	%p1, %r17, -1;
	setp.ne.s32 	%p3, %r17, %r18;
	and.pred 	%p1, %p1, %p3;
	@%p1 bra 	$L_probe_end;
	ld.param.u64 	%rd1, [l2_probe_data];
	ld.param.u64 	%rd2, [l2_probe_lat];
	ld.param.u64 	%rd3, [l2_probe_smid];
	ld.param.u64 	%rd4, [l2_probe_sink];
	ld.param.u32 	%r2, [l2_probe_first];
	ld.param.u32 	%r3, [l2_probe_stride];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;
	cvta.to.global.u64 	%rd3, %rd3;
	cvta.to.global.u64 	%rd4, %rd4;
	mov.u32 	%r4, %ctaid.x;
	mov.u32 	%r10, lat_s;
	mov.u32 	%r11, sink_s;
	mov.u32 	%r12, 0;
$L_pass:
	mov.u32 	%r5, %r2;
	mov.u32 	%r6, 0;
$L_line:
	mul.wide.u32 	%rd5, %r5, 4;
	add.s64 	%rd6, %rd1, %rd5;
	mov.u64 	%rd7, %clock64;
	ld.global.cg.u32 	%r7, [%rd6];
	st.shared.u32 	[%r11], %r7;
	mov.u64 	%rd8, %clock64;
	sub.s64 	%rd9, %rd8, %rd7;
	cvt.u32.u64 	%r8, %rd9;
	shl.b32 	%r9, %r6, 2;
	add.s32 	%r9, %r9, %r10;
	st.shared.u32 	[%r9], %r8;
	add.s32 	%r5, %r7, %r3;
	add.s32 	%r6, %r6, 1;
	setp.lt.u32 	%p2, %r6, 256;
	@%p2 bra 	$L_line;
	add.s32 	%r10, %r10, 1024;
	add.s32 	%r12, %r12, 1;
	setp.lt.u32 	%p3, %r12, 2;
	@%p3 bra 	$L_pass;
	// lat[cta][0..512) <- lat_s; smid[cta]; sink[cta] = the last word index + stride - first
	mov.u32 	%r10, lat_s;
	mul.wide.u32 	%rd10, %r4, 2048;
	add.s64 	%rd11, %rd2, %rd10;
	mov.u32 	%r6, 0;
$L_copy:
	shl.b32 	%r9, %r6, 2;
	add.s32 	%r13, %r9, %r10;
	ld.shared.u32 	%r14, [%r13];
	cvt.u64.u32 	%rd12, %r9;
	add.s64 	%rd13, %rd11, %rd12;
	st.global.u32 	[%rd13], %r14;
	add.s32 	%r6, %r6, 1;
	setp.lt.u32 	%p2, %r6, 512;
	@%p2 bra 	$L_copy;
	mul.wide.u32 	%rd14, %r4, 4;
	add.s64 	%rd15, %rd3, %rd14;
	mov.u32 	%r15, %smid;
	st.global.u32 	[%rd15], %r15;
	add.s64 	%rd15, %rd4, %rd14;
	sub.s32 	%r16, %r5, %r2;
	st.global.u32 	[%rd15], %r16;
$L_probe_end:
	ret;
}
"""


def warm_sums(first: int, lines: int) -> np.ndarray:
    words = first + np.arange(lines, dtype=np.uint64) * LINE_WORDS
    sums = np.zeros(WARM_THREADS, dtype=np.uint64)
    np.add.at(sums, np.arange(lines) % WARM_THREADS, words)
    return (sums % (1 << 32)).astype(np.uint32)


def main() -> None:
    (HERE / "l2_partition.ptx").write_text(PTX)
    launches, buffers, checks = [], [], []
    buffers.append(f"  data: {{ dtype: u32, shape: [{DATA_WORDS}], init: {{ iota: {{ start: 0, step: 1 }} }} }}")
    for name, (warm, (first, stride, solo)) in EXPERIMENTS.items():
        if warm is not None:
            wfirst, wbytes = warm
            lines = wbytes // 128
            launches.append(
                f"  - entry: l2_warm\n    grid: [1, 1, 1]\n    block: [{WARM_THREADS}, 1, 1]\n"
                f"    args: [data, warm_sums_{name}, warm_smid_{name}, {wfirst}, {lines}]"
            )
            buffers.append(f"  warm_sums_{name}: {{ dtype: u32, shape: [{WARM_THREADS}], init: zeros }}")
            buffers.append(f"  warm_smid_{name}: {{ dtype: u32, shape: [1], init: zeros }}")
            np.save(HERE / f"l2_partition_warm_{name}.npy", warm_sums(wfirst, lines))
            checks.append(f"  - buffer: warm_sums_{name}\n    npy: l2_partition_warm_{name}.npy")
        launches.append(
            f"  - entry: l2_probe\n    grid: [{CTAS}, 1, 1]\n    block: [32, 1, 1]\n"
            f"    args: [data, lat_{name}, smid_{name}, sink_{name}, {first}, {stride}, {solo}]"
        )
        buffers.append(f"  lat_{name}: {{ dtype: u32, shape: [{CTAS * 2 * SAMPLES}], init: zeros }}")
        buffers.append(f"  smid_{name}: {{ dtype: u32, shape: [{CTAS}], init: zeros }}")
        buffers.append(f"  sink_{name}: {{ dtype: u32, shape: [{CTAS}], init: zeros }}")
        sinks = [SAMPLES * stride if solo in (ALL, c) else 0 for c in range(CTAS)]
        checks.append(f"  - buffer: sink_{name}\n    values: [{', '.join(map(str, sinks))}]")
    header = "\n".join(
        "# " + line if line else "#"
        for line in [
            "l2_partition: near and far L2 hits per SM (gen_l2_partition.py writes this file; see its",
            "docstring). lat_<probe>[cta] = 2 passes x 256 per-load cycles, smid_<probe>[cta] its SM.",
        ]
    )
    text = (
        f"{header}\nkernel: l2_partition.ptx\nlaunches:\n" + "\n".join(launches)
        + "\nbuffers:\n" + "\n".join(buffers) + "\nchecks:\n" + "\n".join(checks) + "\n"
    )
    (HERE / "l2_partition.yaml").write_text(text)


if __name__ == "__main__":
    main()
