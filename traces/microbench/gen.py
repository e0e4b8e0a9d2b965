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
each mma adds 16 to every accumulator element.

The memory pair (`memory.ptx`, timed by sim/tests/memory_timing.rs): `shared_stride{S}` fills a
4 KiB shared array (word i holds i), then runs `n` iterations of 32 independent
`ld.shared.u32` where lane t reads word t·S (bank conflict degree S for S = 1, 2, 4, 8, 16, 32:
the S-word stride folds 32 lanes onto 32/S banks); `global_stride{S}` runs 32 independent
`ld.global.u32` where lane t reads in[t·S] (S = 1, 2, 4, 8, 32 words: 4·S sectors of 32 B, up
to 32). Each lane sums its 32 registers: out[t] = 32·t·S.

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


def tensor_kernel(chains):
    """The tensor unit's chain (chains = 1) or stream: D of each mma is C of the next one."""
    name = f"{'chain' if chains == 1 else 'stream'}_tensor"
    acc = [[f"%d{c}_{j}" for j in range(4)] for c in range(chains)]
    lines = [
        f".visible .entry {name}(.param .u64 out, .param .u32 n)",
        "{",
        "    .reg .pred %p;",
        "    .reg .b32 %r_tid, %i, %n, %a<4>, %b<2>;",
        "    .reg .b64 %o, %off;",
        "    .reg .f32 " + ", ".join(r for regs in acc for r in regs) + ";",
        "    mov.u32 %r_tid, %tid.x;",
        "    ld.param.u32 %n, [n];",
    ]
    lines += [f"    mov.b32 %a{j}, {ONE_F16X2};" for j in range(4)]
    lines += [f"    mov.b32 %b{j}, {ONE_F16X2};" for j in range(2)]
    lines += [f"    mov.f32 {r}, 0f00000000;" for regs in acc for r in regs]
    lines += ["    mov.u32 %i, 0;", f"{name}_loop:"]
    for k in range(BODY):
        d = "{" + ", ".join(acc[k % chains]) + "}"
        lines.append(f"    {MMA} {d}, {{%a0, %a1, %a2, %a3}}, {{%b0, %b1}}, {d};")
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


def expected(kind, chains, n, lanes=32):
    f = KINDS[kind][3]
    return [sum(f(t, n, chains) for _ in range(chains)) if kind != "sfu" else 2.0 * chains for t in range(lanes)]


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
    tensor = [
        "// Tensor-unit microbenchmarks, generated by gen.py: a dependent chain and independent",
        "// streams of mma.sync (D of one is C of the next; see gen.py).",
        ".version 7.0",
        ".target sm_80",
        ".address_size 64",
        "",
    ]
    for chains in (1, CHAINS):
        name, text = tensor_kernel(chains)
        tensor += [text, ""]
        total = 16.0 * BODY * n  # 16 per mma, BODY / chains mma per chain and iteration, summed over chains
        (HERE / f"{name}.yaml").write_text(
            f"# {name}: {'one dependent chain' if chains == 1 else f'{chains} independent chains'} of mma.sync (tensor unit),\n"
            f"# {BODY} per loop iteration (generated by gen.py; timed by sim/tests/microbench.rs).\n"
            "kernel: tensor.ptx\n"
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
    (HERE / "tensor.ptx").write_text("\n".join(tensor))
    memory_benchmarks()
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
