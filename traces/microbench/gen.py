#!/usr/bin/env python3
"""Generate the pipeline microbenchmarks: `microbench.ptx` and one manifest per kernel.

Each kernel runs `n` iterations of a loop whose body is 64 instructions of one class:
  chain_*  — one dependent chain (each instruction reads the previous result): cycles per
             instruction = the unit's latency (or its issue interval, if larger);
  stream_* — 8 independent chains interleaved: cycles per instruction = the unit's issue
             interval (or latency / 8, if larger).
sim/tests/microbench.rs runs each with two trip counts and takes the difference, so launch
and loop overheads cancel; the loop control adds 3 instructions per 64.

The tensor unit's pair (`chain_tensor`, `stream_tensor`) lives in `tensor.ptx` (`.target
sm_80`): 64 `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` per iteration whose D is the
next one's C (chain), or 8 such accumulators interleaved (stream). A and B are all ones, so
each mma adds 16 to every accumulator element. `tensor_m884.ptx` (`.target sm_70`) has the same
pair for Volta's quad-pair `mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32`
(`chain_tensor_m884`, `stream_tensor_m884`; each mma adds 4), the shape a V100 runs.

The memory pair (`memory.ptx`, timed by sim/tests/memory_timing.rs): `shared_stride{S}` fills a
4 KiB shared array (word i holds i), then runs `n` iterations of 32 independent
`ld.shared.u32` where lane t reads word t·S (bank conflict degree S for S = 1, 2, 4, 8, 16, 32:
the S-word stride folds 32 lanes onto 32/S banks); `global_stride{S}` runs 32 independent
`ld.global.u32` where lane t reads in[t·S] (S = 1, 2, 4, 8, 32 words: 4·S sectors of 32 B, up
to 32). Each lane sums its 32 registers: out[t] = 32·t·S.

The pointer chases (`chase.ptx`, timed by sim/tests/memory_timing.rs and
sim/examples/latency_table.rs): one thread follows `n` dependent loads, each
`mad.wide.u32 %a, %next, 4, %base` (one int instruction: the index to an address) then
`ld.u32 %next, [%a]`, unrolled by 4 with the loop control after the first load, so cycles per
load = the level's load-to-use latency + the int latency. The u32 arrays (`chase_*.npy`) hold
the index of the next element: `chase_l1` cycles over 16 lines at a 128-byte stride (2 KiB);
`chase_l2` over 512 lines at 128 bytes (64 KiB: more than any config's L1, well inside its L2);
`chase_dram` never revisits a line (256 lines, 32 KiB: element 32·i holds 32·(i+1));
`chase_shared` cycles over 16 words of a shared array the thread fills first. out[0] = the
final index: 32·(n mod lines) for a cycle, 32·n for the DRAM chain, n mod 16 for shared.

The streaming read (`stream.ptx`, `stream_dram.yaml`, timed by sim/tests/memory_timing.rs):
STREAM_GRID CTAs of 256 threads each run `n` iterations of STREAM_UNROLL independent
`ld.global.u32`, thread g of T reading in[(STREAM_UNROLL·i + k)·T + g], so every warp load is one
whole 128-byte line and no line is read twice (STREAM_UNROLL·n·T·4 bytes in all: 1.25 MiB
for n = 2, `in` sized for n ≤ STREAM_MAX_N): the achieved
DRAM bandwidth is the bytes read from DRAM per cycle. in[j] = j, so out[g] = Σ over the
thread's indices = T·m(m−1)/2 + m·g with m = STREAM_UNROLL·n.

The L2 streaming read (`stream_l2.ptx`, `stream_l2.yaml`, timed by sim/tests/memory_timing.rs):
L2_GRID CTAs of 256 threads each run `n` iterations of L2_UNROLL independent `ld.global.cg.u32`
(cache-global: no L1, every load goes to L2) through an L2_WORDS-word array (64 KiB: inside
every config's L2): thread g reads in[(g mod P) + k·P] for k < L2_UNROLL, P = L2_WORDS /
L2_UNROLL, the same addresses every iteration, so every warp load is one whole 128-byte line,
the first reads bring the array into L2 (in the first CTAs' first iteration) and every later
load hits there; each line is read equally often (T / P times per iteration, T = 61440
threads). The achieved L2 bandwidth is the bytes served by L2 per cycle. in[j] = j, so thread
g's sum is n·(L2_UNROLL·(g mod P) + P·L2_UNROLL(L2_UNROLL−1)/2); each warp adds its 32 with
`shfl.sync.down` and lane 0 stores out[g / 32] (1920 words, so the stores leave the array's
lines in L2).

The expected outputs are closed forms computed here (independently of the simulator).
Rerun: python3 traces/microbench/gen.py   (no dependencies)
"""
from pathlib import Path

HERE = Path(__file__).resolve().parent
BODY = 64
CHAINS = 8

# name: (register type, init per lane as PTX, op template on (dst, src), result(tid, n))
KINDS = {
    "int": (".u32", "mov.u32 {x}, %r_tid;", "add.u32 {x}, {x}, 3;", lambda t, n, c: t + 3 * n * (BODY // c)),
    "fp32": (".f32", "cvt.rn.f32.u32 {x}, %r_tid;", "fma.rn.f32 {x}, {x}, 0f3F800000, 0f3F800000;", lambda t, n, c: float(t + n * (BODY // c))),
    "fp64": (".f64", "cvt.rn.f64.u32 {x}, %r_tid;", "fma.rn.f64 {x}, {x}, 0d3FF0000000000000, 0d3FF0000000000000;", lambda t, n, c: float(t + n * (BODY // c))),
    "sfu": (".f32", "mov.f32 {x}, 0f40000000;", "rcp.approx.f32 {x}, {x};", lambda t, n, c: 2.0),
}


def kernel(kind, chains):
    ty, init, op, _ = KINDS[kind]
    name = f"{'chain' if chains == 1 else 'stream'}_{kind}"
    xs = [f"%x{i}" for i in range(chains)]
    st = "st.global.u32" if ty == ".u32" else f"st.global{ty}"
    lines = [
        f".visible .entry {name}(.param .u64 out, .param .u32 n)",
        "{",
        "    .reg .pred %p;",
        "    .reg .b32 %r_tid, %i, %n;",
        "    .reg .b64 %o, %off;",
        f"    .reg {ty} " + ", ".join(xs) + ";",
        "    mov.u32 %r_tid, %tid.x;",
        "    ld.param.u32 %n, [n];",
    ]
    lines += ["    " + init.format(x=x) for x in xs]
    lines += ["    mov.u32 %i, 0;", f"{name}_loop:"]
    for k in range(BODY):
        lines.append("    " + op.format(x=xs[k % chains]))
    lines += [
        "    add.u32 %i, %i, 1;",
        "    setp.lt.u32 %p, %i, %n;",
        f"    @%p bra {name}_loop;",
    ]
    # combine the chains into x0 so one value per lane is checked
    for x in xs[1:]:
        add = "add.u32" if ty == ".u32" else f"add.rn{ty}"
        lines.append(f"    {add} {xs[0]}, {xs[0]}, {x};")
    size = 4 if ty in (".u32", ".f32") else 8
    lines += [
        "    ld.param.u64 %o, [out];",
        "    cvta.to.global.u64 %o, %o;",
        f"    mul.wide.u32 %off, %r_tid, {size};",
        "    add.s64 %o, %o, %off;",
        f"    {st} [%o], {xs[0]};",
        "    ret;",
        "}",
    ]
    return name, "\n".join(lines)


MMA = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
ONE_F16X2 = "0x3C003C00"  # two f16 1.0
# The tensor shapes timed: (kernel-name suffix, mma, accumulators per lane, A and B registers,
# K: what each mma adds to every accumulator element when A and B are all ones).
TENSOR_SHAPES = {
    "tensor": (MMA, 4, 4, 2, 16),
    # Volta's quad-pair shape (sm_70): the V100's tensor unit, which has no m16n8k16.
    "tensor_m884": ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", 8, 2, 2, 4),
}


def tensor_kernel(chains, kind="tensor"):
    """The tensor unit's chain (chains = 1) or stream: D of each mma is C of the next one."""
    mma, n_acc, n_a, n_b, _ = TENSOR_SHAPES[kind]
    name = f"{'chain' if chains == 1 else 'stream'}_{kind}"
    acc = [[f"%d{c}_{j}" for j in range(n_acc)] for c in range(chains)]
    lines = [
        f".visible .entry {name}(.param .u64 out, .param .u32 n)",
        "{",
        "    .reg .pred %p;",
        f"    .reg .b32 %r_tid, %i, %n, %a<{n_a}>, %b<{n_b}>;",
        "    .reg .b64 %o, %off;",
        "    .reg .f32 " + ", ".join(r for regs in acc for r in regs) + ";",
        "    mov.u32 %r_tid, %tid.x;",
        "    ld.param.u32 %n, [n];",
    ]
    lines += [f"    mov.b32 %a{j}, {ONE_F16X2};" for j in range(n_a)]
    lines += [f"    mov.b32 %b{j}, {ONE_F16X2};" for j in range(n_b)]
    lines += [f"    mov.f32 {r}, 0f00000000;" for regs in acc for r in regs]
    lines += ["    mov.u32 %i, 0;", f"{name}_loop:"]
    a_regs = "{" + ", ".join(f"%a{j}" for j in range(n_a)) + "}"
    b_regs = "{" + ", ".join(f"%b{j}" for j in range(n_b)) + "}"
    for k in range(BODY):
        d = "{" + ", ".join(acc[k % chains]) + "}"
        lines.append(f"    {mma} {d}, {a_regs}, {b_regs}, {d};")
    lines += [
        "    add.u32 %i, %i, 1;",
        "    setp.lt.u32 %p, %i, %n;",
        f"    @%p bra {name}_loop;",
    ]
    # every accumulator element holds 16 per mma of its chain; sum the chains' first ones
    for regs in acc[1:]:
        lines.append(f"    add.rn.f32 {acc[0][0]}, {acc[0][0]}, {regs[0]};")
    lines += [
        "    ld.param.u64 %o, [out];",
        "    cvta.to.global.u64 %o, %o;",
        "    mul.wide.u32 %off, %r_tid, 4;",
        "    add.s64 %o, %o, %off;",
        f"    st.global.f32 [%o], {acc[0][0]};",
        "    ret;",
        "}",
    ]
    return name, "\n".join(lines)


def tensor_benchmarks(kind, ptx_name, target, n):
    """`chain_KIND`/`stream_KIND` manifests and their PTX file for one tensor shape."""
    k_per_mma = TENSOR_SHAPES[kind][4]
    tensor = [
        "// Tensor-unit microbenchmarks, generated by gen.py: a dependent chain and independent",
        "// streams of mma.sync (D of one is C of the next; see gen.py).",
        ".version 7.0",
        f".target {target}",
        ".address_size 64",
        "",
    ]
    for chains in (1, CHAINS):
        name, text = tensor_kernel(chains, kind)
        tensor += [text, ""]
        total = float(k_per_mma) * BODY * n  # K per mma, BODY / chains mma per chain and iteration, summed over chains
        (HERE / f"{name}.yaml").write_text(
            f"# {name}: {'one dependent chain' if chains == 1 else f'{chains} independent chains'} of mma.sync (tensor unit),\n"
            f"# {BODY} per loop iteration (generated by gen.py; timed by sim/tests/microbench.rs).\n"
            f"kernel: {ptx_name}\n"
            "launches:\n"
            f"  - entry: {name}\n"
            "    grid: [1, 1, 1]\n"
            "    block: [32, 1, 1]\n"
            f"    args: [out, {n}]\n"
            "buffers:\n"
            "  out: { dtype: f32, shape: [32], init: zeros }\n"
            "checks:\n"
            "  - buffer: out\n"
            f"    values: [{', '.join([repr(total)] * 32)}]\n"
        )
    (HERE / ptx_name).write_text("\n".join(tensor))


MEM_BODY = 32
SHARED_STRIDES = (1, 2, 4, 8, 16, 32)
GLOBAL_STRIDES = (1, 2, 4, 8, 32)


def memory_kernel(space, stride):
    """32 independent loads per iteration; lane t reads word t·stride of a shared array or of `in`."""
    name = f"{space}_stride{stride}"
    xs = [f"%x{i}" for i in range(MEM_BODY)]
    params = ".param .u64 out, .param .u64 in, .param .u32 n" if space == "global" else ".param .u64 out, .param .u32 n"
    lines = [
        f".visible .entry {name}({params})",
        "{",
        "    .reg .pred %p;",
        "    .reg .b32 %r_tid, %i, %n, %v, " + ", ".join(xs) + ";",
        "    .reg .b64 %o, %off, %a;",
    ]
    if space == "shared":
        lines += [f"    .shared .align 4 .b8 {name}_smem[4096];"]
    lines += ["    mov.u32 %r_tid, %tid.x;", "    ld.param.u32 %n, [n];"]
    if space == "shared":
        # fill: thread t writes words t + 32k (k = 0..31) with their index
        lines += [
            f"    mov.u64 %a, {name}_smem;",
            "    mul.wide.u32 %off, %r_tid, 4;",
            "    add.s64 %a, %a, %off;",
        ]
        for k in range(32):
            lines += [f"    add.u32 %v, %r_tid, {32 * k};", f"    st.shared.u32 [%a+{128 * k}], %v;"]
        lines += [
            "    bar.sync 0;",
            f"    mov.u64 %a, {name}_smem;",
            f"    mul.wide.u32 %off, %r_tid, {4 * stride};",
            "    add.s64 %a, %a, %off;",
        ]
        ld = "ld.shared.u32"
    else:
        lines += [
            "    ld.param.u64 %a, [in];",
            "    cvta.to.global.u64 %a, %a;",
            f"    mul.wide.u32 %off, %r_tid, {4 * stride};",
            "    add.s64 %a, %a, %off;",
        ]
        ld = "ld.global.u32"
    lines += ["    mov.u32 %i, 0;", f"{name}_loop:"]
    lines += [f"    {ld} {x}, [%a];" for x in xs]
    lines += [
        "    add.u32 %i, %i, 1;",
        "    setp.lt.u32 %p, %i, %n;",
        f"    @%p bra {name}_loop;",
    ]
    lines += [f"    add.u32 %x0, %x0, {x};" for x in xs[1:]]
    lines += [
        "    ld.param.u64 %o, [out];",
        "    cvta.to.global.u64 %o, %o;",
        "    mul.wide.u32 %off, %r_tid, 4;",
        "    add.s64 %o, %o, %off;",
        "    st.global.u32 [%o], %x0;",
        "    ret;",
        "}",
    ]
    return name, "\n".join(lines)


def memory_benchmarks(n=4):
    ptx = [
        "// Memory microbenchmarks, generated by gen.py: strided shared loads (bank conflicts) and",
        "// strided global loads (sectors per request); see gen.py.",
        ".version 7.0",
        ".target sm_52",
        ".address_size 64",
        "",
    ]
    for space, strides in (("shared", SHARED_STRIDES), ("global", GLOBAL_STRIDES)):
        for stride in strides:
            name, text = memory_kernel(space, stride)
            ptx += [text, ""]
            args = "[out, in, 4]" if space == "global" else "[out, 4]"
            buffers = "  out: { dtype: u32, shape: [32], init: zeros }\n"
            if space == "global":
                buffers += "  in: { dtype: u32, shape: [1024], init: { iota: { start: 0, step: 1 } } }\n"
            what = "bank conflicts" if space == "shared" else "sectors per request"
            (HERE / f"{name}.yaml").write_text(
                f"# {name}: {MEM_BODY} independent {space} loads per iteration, lane t at word t*{stride} ({what};\n"
                "# generated by gen.py; timed by sim/tests/memory_timing.rs).\n"
                "kernel: memory.ptx\n"
                "launches:\n"
                f"  - entry: {name}\n"
                "    grid: [1, 1, 1]\n"
                "    block: [32, 1, 1]\n"
                f"    args: {args}\n"
                "buffers:\n"
                + buffers
                + "checks:\n"
                "  - buffer: out\n"
                f"    values: [{', '.join(str(MEM_BODY * t * stride) for t in range(32))}]\n"
            )
    (HERE / "memory.ptx").write_text("\n".join(ptx))


CHASE_UNROLL = 4
CHASE_WORDS = 32  # u32 words per 128-byte line: the chase's stride
# name: (space, lines in the chain, lines in the array, loads in the manifest)
CHASES = {
    "l1": ("global", 16, 16, 68),
    "l2": ("global", 512, 512, 516),
    "dram": ("global", None, 256, 128),
    "shared": ("shared", 16, None, 68),
}


def write_npy_u32(path, values):
    """A version 1.0 `.npy` of little-endian u32 (no numpy needed)."""
    header = "{'descr': '<u4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    body = b"".join(v.to_bytes(4, "little") for v in values)
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + body)


def chase_array(cycle, lines):
    """Element 32·i holds the index of the next line's first element (the rest are zero)."""
    words = [0] * (lines * CHASE_WORDS)
    for i in range(lines):
        words[i * CHASE_WORDS] = CHASE_WORDS * ((i + 1) % cycle if cycle else i + 1)
    return words


def chase_final(name, n):
    """out[0] after n loads from index 0."""
    space, cycle, _, _ = CHASES[name]
    if space == "shared":
        return n % cycle
    return CHASE_WORDS * (n % cycle if cycle else n)


def chase_kernel(name):
    space, cycle, _, _ = CHASES[name]
    entry = f"chase_{name}"
    params = ".param .u64 out, .param .u64 in, .param .u32 n" if space == "global" else ".param .u64 out, .param .u32 n"
    lines = [
        f".visible .entry {entry}({params})",
        "{",
        "    .reg .pred %q;",
        "    .reg .b32 %i, %n, %next, %v;",
        "    .reg .b64 %base, %a, %o;",
    ]
    if space == "shared":
        lines += [
            f"    .shared .align 4 .b32 {entry}_smem[{cycle}];",
            f"    mov.u64 %base, {entry}_smem;",
        ]
        for k in range(cycle):
            lines += [f"    mov.u32 %v, {(k + 1) % cycle};", f"    st.shared.u32 [%base+{4 * k}], %v;"]
    else:
        lines += ["    ld.param.u64 %base, [in];", "    cvta.to.global.u64 %base, %base;"]
    lines += ["    ld.param.u32 %n, [n];", "    mov.u32 %next, 0;", "    mov.u32 %i, 0;", f"{entry}_loop:"]
    for k in range(CHASE_UNROLL):
        lines += ["    mad.wide.u32 %a, %next, 4, %base;", f"    ld.{space}.u32 %next, [%a];"]
        if k == 0:
            lines += [f"    add.u32 %i, %i, {CHASE_UNROLL};", "    setp.lt.u32 %q, %i, %n;"]
    lines += [
        f"    @%q bra {entry}_loop;",
        "    ld.param.u64 %o, [out];",
        "    cvta.to.global.u64 %o, %o;",
        "    st.global.u32 [%o], %next;",
        "    ret;",
        "}",
    ]
    return entry, "\n".join(lines)


def chase_benchmarks():
    ptx = [
        "// Pointer-chase microbenchmarks, generated by gen.py: one thread follows dependent",
        "// loads through an L1-, L2- or DRAM-sized chain, or a shared array (see gen.py).",
        ".version 7.0",
        ".target sm_52",
        ".address_size 64",
        "",
    ]
    for name, (space, cycle, array_lines, n) in CHASES.items():
        entry, text = chase_kernel(name)
        ptx += [text, ""]
        buffers = "  out: { dtype: u32, shape: [1], init: zeros }\n"
        if space == "global":
            words = chase_array(cycle, array_lines)
            write_npy_u32(HERE / f"{entry}.npy", words)
            buffers += f"  in: {{ dtype: u32, shape: [{len(words)}], init: {{ npy: {entry}.npy }} }}\n"
        args = f"[out, in, {n}]" if space == "global" else f"[out, {n}]"
        what = f"a cycle of {cycle}" if cycle else f"{array_lines} never revisited"
        unit = "words" if space == "shared" else "128-byte lines"
        (HERE / f"{entry}.yaml").write_text(
            f"# {entry}: one thread, {n} dependent {space} loads through {what} {unit}\n"
            "# (generated by gen.py; timed by sim/tests/memory_timing.rs).\n"
            "kernel: chase.ptx\n"
            "launches:\n"
            f"  - entry: {entry}\n"
            "    grid: [1, 1, 1]\n"
            "    block: [1, 1, 1]\n"
            f"    args: {args}\n"
            "buffers:\n"
            + buffers
            + "checks:\n"
            "  - buffer: out\n"
            f"    values: [{chase_final(name, n)}]\n"
        )
    (HERE / "chase.ptx").write_text("\n".join(ptx))


def expected(kind, chains, n, lanes=32):
    f = KINDS[kind][3]
    return [sum(f(t, n, chains) for _ in range(chains)) if kind != "sfu" else 2.0 * chains for t in range(lanes)]


STREAM_GRID = 160
STREAM_BLOCK = 256
STREAM_UNROLL = 4
STREAM_MAX_N = 8  # `in` holds enough lines for n up to this (the test runs n = 2 and 8)


def stream_benchmark(n=2):
    xs = [f"%x{k}" for k in range(STREAM_UNROLL)]
    threads = STREAM_GRID * STREAM_BLOCK
    ptx = [
        "// Streaming-read microbenchmark, generated by gen.py: every warp load is a new",
        "// 128-byte line (DRAM bandwidth; see gen.py).",
        ".version 7.0",
        ".target sm_52",
        ".address_size 64",
        "",
        ".visible .entry stream_dram(.param .u64 out, .param .u64 in, .param .u32 n)",
        "{",
        "    .reg .pred %p;",
        "    .reg .b32 %g, %t, %c, %i, %n, %s, " + ", ".join(xs) + ";",
        "    .reg .b64 %a, %o, %off, %step;",
        "    mov.u32 %g, %tid.x;",
        "    mov.u32 %t, %ntid.x;",
        "    mov.u32 %c, %ctaid.x;",
        "    mad.lo.u32 %g, %c, %t, %g;",
        "    mov.u32 %c, %nctaid.x;",
        "    mul.lo.u32 %t, %t, %c;",
        "    ld.param.u32 %n, [n];",
        "    ld.param.u64 %a, [in];",
        "    cvta.to.global.u64 %a, %a;",
        "    mul.wide.u32 %off, %g, 4;",
        "    add.s64 %a, %a, %off;",
        "    mul.wide.u32 %step, %t, 4;",
        "    mov.u32 %s, 0;",
        "    mov.u32 %i, 0;",
        "stream_dram_loop:",
    ]
    for x in xs:
        ptx += [f"    ld.global.u32 {x}, [%a];", "    add.s64 %a, %a, %step;"]
    ptx += [f"    add.u32 %s, %s, {x};" for x in xs]
    ptx += [
        "    add.u32 %i, %i, 1;",
        "    setp.lt.u32 %p, %i, %n;",
        "    @%p bra stream_dram_loop;",
        "    ld.param.u64 %o, [out];",
        "    cvta.to.global.u64 %o, %o;",
        "    add.s64 %o, %o, %off;",
        "    st.global.u32 [%o], %s;",
        "    ret;",
        "}",
        "",
    ]
    (HERE / "stream.ptx").write_text("\n".join(ptx))
    m = STREAM_UNROLL * n
    words = STREAM_UNROLL * STREAM_MAX_N * threads
    write_npy_u32(HERE / "stream_dram_out.npy", [threads * m * (m - 1) // 2 + m * g for g in range(threads)])
    (HERE / "stream_dram.yaml").write_text(
        f"# stream_dram: {STREAM_GRID} x {STREAM_BLOCK} threads, {STREAM_UNROLL} independent loads per iteration, each\n"
        "# warp load a new 128-byte line (generated by gen.py; timed by sim/tests/memory_timing.rs).\n"
        "kernel: stream.ptx\n"
        "launches:\n"
        "  - entry: stream_dram\n"
        f"    grid: [{STREAM_GRID}, 1, 1]\n"
        f"    block: [{STREAM_BLOCK}, 1, 1]\n"
        f"    args: [out, in, {n}]\n"
        "buffers:\n"
        f"  out: {{ dtype: u32, shape: [{threads}], init: zeros }}\n"
        f"  in: {{ dtype: u32, shape: [{words}], init: {{ iota: {{ start: 0, step: 1 }} }} }}\n"
        "checks:\n"
        "  - buffer: out\n"
        "    npy: stream_dram_out.npy\n"
    )


L2_GRID = 240  # a multiple of volta-v100's 80 SMs and of tiny's 2 × 6 resident CTAs: full waves
L2_BLOCK = 256
L2_UNROLL = 8
L2_WORDS = 16384  # 64 KiB: fits every config's L2, many times each L1 (which .cg bypasses anyway)


def stream_l2_expected(g, n):
    """Thread g's sum in `stream_l2`: n times the sum of its L2_UNROLL indices (plain Python)."""
    p = L2_WORDS // L2_UNROLL
    return n * sum(g % p + k * p for k in range(L2_UNROLL)) % (1 << 32)


def stream_l2_benchmark(n=1):
    xs = [f"%x{k}" for k in range(L2_UNROLL)]
    threads = L2_GRID * L2_BLOCK
    p = L2_WORDS // L2_UNROLL
    ptx = [
        "// L2 streaming-read microbenchmark, generated by gen.py: every warp load is a whole",
        "// 128-byte line of an L2-resident array, read with ld.global.cg (L2 bandwidth; see gen.py).",
        ".version 7.0",
        ".target sm_52",
        ".address_size 64",
        "",
        ".visible .entry stream_l2(.param .u64 out, .param .u64 in, .param .u32 n)",
        "{",
        "    .reg .pred %p;",
        "    .reg .b32 %g, %t, %c, %j, %i, %n, %s, " + ", ".join(xs) + ";",
        "    .reg .b64 %a, %o, %off;",
        "    mov.u32 %g, %tid.x;",
        "    mov.u32 %t, %ntid.x;",
        "    mov.u32 %c, %ctaid.x;",
        "    mad.lo.u32 %g, %c, %t, %g;",
        "    ld.param.u32 %n, [n];",
        "    ld.param.u64 %a, [in];",
        "    cvta.to.global.u64 %a, %a;",
        f"    rem.u32 %j, %g, {p};",
        "    mul.wide.u32 %off, %j, 4;",
        "    add.s64 %a, %a, %off;",
        "    mov.u32 %s, 0;",
        "    mov.u32 %i, 0;",
        "stream_l2_loop:",
    ]
    ptx += [f"    ld.global.cg.u32 {x}, [%a+{4 * p * k}];" for k, x in enumerate(xs)]
    ptx += [f"    add.u32 %s, %s, {x};" for x in xs]
    ptx += [
        "    add.u32 %i, %i, 1;",
        "    setp.lt.u32 %p, %i, %n;",
        "    @%p bra stream_l2_loop;",
    ]
    # the warp's sum (a small `out`, so the stores leave the array alone in L2)
    for d in (16, 8, 4, 2, 1):
        ptx += [f"    shfl.sync.down.b32 %x0, %s, {d}, 31, 0xffffffff;", "    add.u32 %s, %s, %x0;"]
    ptx += [
        "    and.b32 %j, %g, 31;",
        "    setp.eq.u32 %p, %j, 0;",
        "    shr.u32 %g, %g, 5;",
        "    ld.param.u64 %o, [out];",
        "    cvta.to.global.u64 %o, %o;",
        "    mul.wide.u32 %off, %g, 4;",
        "    add.s64 %o, %o, %off;",
        "    @%p st.global.u32 [%o], %s;",
        "    ret;",
        "}",
        "",
    ]
    (HERE / "stream_l2.ptx").write_text("\n".join(ptx))
    warps = threads // 32
    write_npy_u32(
        HERE / "stream_l2_out.npy",
        [sum(stream_l2_expected(g, n) for g in range(32 * w, 32 * w + 32)) % (1 << 32) for w in range(warps)],
    )
    (HERE / "stream_l2.yaml").write_text(
        f"# stream_l2: {L2_GRID} x {L2_BLOCK} threads, {L2_UNROLL} independent ld.global.cg per iteration, each warp load\n"
        f"# a whole 128-byte line of a {L2_WORDS * 4 // 1024} KiB array that stays in L2 (generated by gen.py; timed by\n"
        "# sim/tests/memory_timing.rs).\n"
        "kernel: stream_l2.ptx\n"
        "launches:\n"
        "  - entry: stream_l2\n"
        f"    grid: [{L2_GRID}, 1, 1]\n"
        f"    block: [{L2_BLOCK}, 1, 1]\n"
        f"    args: [out, in, {n}]\n"
        "buffers:\n"
        f"  out: {{ dtype: u32, shape: [{warps}], init: zeros }}\n"
        f"  in: {{ dtype: u32, shape: [{L2_WORDS}], init: {{ iota: {{ start: 0, step: 1 }} }} }}\n"
        "checks:\n"
        "  - buffer: out\n"
        "    npy: stream_l2_out.npy\n"
    )


def main():
    ptx = [
        "// Pipeline microbenchmarks, generated by gen.py: dependent chains and independent",
        "// streams of one instruction class each (see gen.py for what they measure).",
        ".version 7.0",
        ".target sm_52",
        ".address_size 64",
        "",
    ]
    manifests = []
    for kind in KINDS:
        for chains in (1, CHAINS):
            name, text = kernel(kind, chains)
            ptx += [text, ""]
            manifests.append((name, kind, chains))
    (HERE / "microbench.ptx").write_text("\n".join(ptx))
    n = 4
    for kind, ptx_name, target in (("tensor", "tensor.ptx", "sm_80"), ("tensor_m884", "tensor_m884.ptx", "sm_70")):
        tensor_benchmarks(kind, ptx_name, target, n)
    memory_benchmarks()
    chase_benchmarks()
    stream_benchmark()
    stream_l2_benchmark()
    for name, kind, chains in manifests:
        dtype = {"int": "u32", "fp32": "f32", "fp64": "f64", "sfu": "f32"}[kind]
        vals = expected(kind, chains, n)
        fmt = (lambda v: str(int(v))) if dtype == "u32" else (lambda v: repr(float(v)))
        (HERE / f"{name}.yaml").write_text(
            f"# {name}: {'one dependent chain' if chains == 1 else f'{chains} independent chains'} of {kind} instructions,\n"
            f"# {BODY} per loop iteration (generated by gen.py; timed by sim/tests/microbench.rs).\n"
            "kernel: microbench.ptx\n"
            "launches:\n"
            f"  - entry: {name}\n"
            "    grid: [1, 1, 1]\n"
            "    block: [32, 1, 1]\n"
            f"    args: [out, {n}]\n"
            "buffers:\n"
            f"  out: {{ dtype: {dtype}, shape: [32], init: zeros }}\n"
            "checks:\n"
            "  - buffer: out\n"
            f"    values: [{', '.join(fmt(v) for v in vals)}]\n"
        )


if __name__ == "__main__":
    main()
