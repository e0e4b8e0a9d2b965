#!/usr/bin/env python3
"""Reference runner for the traces in traces/semantics/.

This is a small, slow, executable version of the warp semantics of Habermaier (2011),
"The Model of Computation of CUDA and its Formal Semantics", ch. 5.4/5.5, restricted to the
PTX subset that the traces in this folder use.  It was used to derive and re-check every
`checks:` entry in the manifests: run

    python3 traces/semantics/expected.py            # run every manifest, compare its checks
    python3 traces/semantics/expected.py t3_indirect_bra --all-orders
    python3 traces/semantics/expected.py --mimd     # per-thread (warp size 1) cross-check

What it models (and what it does not):
* the token stack exactly as in the paper: ssy/preBrk/preRet push (sync|break|call, alpha, pc),
  sync unwinds, brk/ret/exit set the disable mask (also in the uniform case) and unwind when no
  lane is left active, a guard-divergent `bra` pushes (diverge, not-taken, pc+1) and runs the
  taken path first, an indirect branch with k targets pushes (diverge, rest, pc-of-bra) and is
  re-executed, `call` never pushes a token, `unwind` drops tokens that activate nobody and
  fails when the stack runs dry while a lane still waits on break/return;
* padding lanes of a partial last warp start inactive with delta = exit;
* vote: only active lanes with a true guard vote, ballot bit = 0 for everyone else;
* barriers per warp (one arriving lane counts the whole warp), tc defaults to
  (#non-completed warps) * warp size, bar.arrive does not wait, bar.red reduces the predicates of
  the lanes that executed it;
* memory is sequentially consistent and instantaneous (one of the behaviours the model allows);
* functions WITHOUT token instructions are run as written too (no insertion pass): they are
  only meaningful here with --mimd (warp size 1, where no divergence can occur) or when they
  never diverge (t1).  `ret` in an .entry is treated as `exit` (the paper's step 5).
* a warp that runs more than --max-steps instructions without the kernel completing is a
  `liveness` fault.
"""
import argparse
import itertools
import os
import re
import struct
import sys

import numpy as np
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))


class Stuck(Exception):
    """The formal semantics gets stuck (bottom)."""


class Fault(Exception):
    def __init__(self, kind, msg):
        super().__init__(f"{kind}: {msg}")
        self.kind = kind


# ----------------------------------------------------------------------------------------------
# Parsing
# ----------------------------------------------------------------------------------------------

TOKEN_OPS = {"ssy", "sync", "preBrk", "brk", "break", "preRet"}


def strip_comments(src):
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", "", src)


class Inst:
    def __init__(self, guard, op, args, func, text):
        self.guard = guard  # None or (reg, negated)
        self.op = op  # list of dot-separated parts
        self.args = args  # raw operand strings
        self.func = func
        self.text = text

    def __repr__(self):
        return self.text


class Func:
    def __init__(self, name, kind, params, rets):
        self.name = name
        self.kind = kind
        self.params = params  # [(name, type)]
        self.rets = rets
        self.regs = {}  # name -> type
        self.labels = {}  # name -> global pc
        self.tables = {}  # name -> [label]
        self.start = None
        self.end = None
        self.has_tokens = False
        self.shared = {}  # name -> (size)


def expand_regs(decl):
    # ".reg .b32 %r<10>, %x" -> names
    m = re.match(r"\.reg\s+\.(\w+)\s+(.*)$", decl, re.S)
    ty, rest = m.group(1), m.group(2)
    out = []
    for part in rest.split(","):
        part = part.strip()
        mm = re.match(r"(%[\w$]+)<(\d+)>$", part)
        if mm:
            out += [(f"{mm.group(1)}{i}", ty) for i in range(int(mm.group(2)))]
        else:
            out.append((part, ty))
    return out


def split_operands(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_params(s):
    s = s.strip()
    if not s:
        return []
    out = []
    for p in split_operands(s):
        m = re.match(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([\w$]+)", p)
        if not m:
            raise SyntaxError(f"bad param {p!r}")
        out.append((m.group(2), m.group(1)))
    return out


class Module:
    def __init__(self, path):
        self.path = path
        self.insts = []
        self.funcs = {}
        self.globals = {}  # name -> (type, init value, size)
        src = strip_comments(open(path).read())
        src = re.sub(r"^\s*\.(version|target|address_size)\b[^\n]*", "", src, flags=re.M)
        src = src.replace("{", ";{;").replace("}", ";};")
        stmts = [s.strip() for s in src.split(";")]
        cur = None
        depth = 0
        pending_labels = []
        header = None
        for st in stmts:
            if not st:
                continue
            if st == "{":
                depth += 1
                if depth == 1:
                    cur = self._open_func(header)
                    header = None
                continue
            if st == "}":
                depth -= 1
                if depth == 0:
                    if pending_labels:
                        raise SyntaxError(f"label(s) {pending_labels} at end of {cur.name}")
                    cur.end = len(self.insts)
                    cur = None
                continue
            if depth == 0:
                if st.startswith((".version", ".target", ".address_size")):
                    continue
                if st.startswith(".global"):
                    m = re.match(r"\.global\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([\w$]+)\s*(?:=\s*(\S+))?$", st)
                    if not m:
                        raise SyntaxError(st)
                    self.globals[m.group(2)] = (m.group(1), int(m.group(3), 0) if m.group(3) else 0)
                    continue
                header = st
                continue
            # inside a function
            while True:
                m = re.match(r"([A-Za-z_$][\w$]*)\s*:(?!:)\s*(.*)$", st, re.S)
                if not m:
                    break
                lbl, st = m.group(1), m.group(2).strip()
                if st.startswith(".branchtargets"):
                    cur.tables[lbl] = [x.strip() for x in st[len(".branchtargets"):].split(",")]
                    st = ""
                    break
                pending_labels.append(lbl)
            if not st:
                continue
            if st.startswith(".reg"):
                for n, t in expand_regs(st):
                    if n in cur.regs:
                        raise SyntaxError(f"{cur.name}: register {n} declared twice")
                    cur.regs[n] = t
                continue
            if st.startswith(".param"):
                m = re.match(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([\w$]+)$", st)
                cur.regs[m.group(2)] = "param:" + m.group(1)
                continue
            if st.startswith(".shared"):
                m = re.match(r"\.shared\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([\w$]+)\[(\d+)\]$", st)
                cur.shared[m.group(2)] = int(m.group(3)) * type_size(m.group(1))
                continue
            if st.startswith("."):
                raise SyntaxError(f"unsupported directive {st!r}")
            for lbl in pending_labels:
                if lbl in cur.labels:
                    raise SyntaxError(f"{cur.name}: label {lbl} defined twice")
                cur.labels[lbl] = len(self.insts)
            pending_labels = []
            self.insts.append(self._parse_inst(st, cur))
        self._resolve()

    def _open_func(self, header):
        m = re.match(r"(?:\.visible\s+|\.weak\s+)?\.(entry|func)\s+(?:\((.*?)\)\s*)?([\w$]+)\s*\((.*)\)\s*$", header, re.S)
        if not m:
            m2 = re.match(r"(?:\.visible\s+|\.weak\s+)?\.(entry|func)\s+(?:\((.*?)\)\s*)?([\w$]+)\s*$", header, re.S)
            if not m2:
                raise SyntaxError(f"bad function header {header!r}")
            kind, rets, name, params = m2.group(1), m2.group(2), m2.group(3), ""
        else:
            kind, rets, name, params = m.group(1), m.group(2), m.group(3), m.group(4)
        f = Func(name, kind, parse_params(params), parse_params(rets or ""))
        f.start = len(self.insts)
        self.funcs[name] = f
        return f

    def _parse_inst(self, st, func):
        text = " ".join(st.split())
        guard = None
        m = re.match(r"@(!?)(%[\w$]+)\s+(.*)$", text)
        if m:
            guard = (m.group(2), m.group(1) == "!")
            text2 = m.group(3)
        else:
            text2 = text
        parts = text2.split(None, 1)
        op = parts[0].split(".")
        args = split_operands(parts[1]) if len(parts) > 1 else []
        if op[0] in TOKEN_OPS:
            func.has_tokens = True
        return Inst(guard, op, args, func, text)

    def _resolve(self):
        # check register use, labels
        for i, inst in enumerate(self.insts):
            f = inst.func
            regs = re.findall(r"%[A-Za-z_$][\w$]*(?:\.[xyz])?", inst.text)
            for r in regs:
                base = r
                if base in ("%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x",
                            "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid"):
                    continue
                if base not in f.regs:
                    raise SyntaxError(f"{f.name}: undeclared register {r} in `{inst.text}`")
            o = inst.op[0]
            if o in ("bra", "ssy", "preBrk", "preRet"):
                if inst.args[0] not in f.labels:
                    raise SyntaxError(f"{f.name}: undefined label {inst.args[0]} in `{inst.text}`")
            if o == "brx":
                tbl = inst.args[1]
                if tbl not in f.tables:
                    raise SyntaxError(f"{f.name}: undefined table {tbl}")
                for l in f.tables[tbl]:
                    if l not in f.labels:
                        raise SyntaxError(f"{f.name}: undefined label {l} in table {tbl}")


def type_size(t):
    return {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "b32": 4, "u32": 4, "s32": 4, "f32": 4,
            "b64": 8, "u64": 8, "s64": 8, "f64": 8, "pred": 1}[t]


# ----------------------------------------------------------------------------------------------
# Values
# ----------------------------------------------------------------------------------------------

def mask(v, t):
    return v & ((1 << (8 * type_size(t))) - 1)


def signed(v, t):
    bits = 8 * type_size(t)
    v = mask(v, t)
    return v - (1 << bits) if v >> (bits - 1) else v


def f32_from_bits(b):
    return struct.unpack("<f", struct.pack("<I", b & 0xFFFFFFFF))[0]


def bits_from_f32(x):
    return struct.unpack("<I", struct.pack("<f", np.float32(x)))[0]


def parse_imm(s, t):
    if re.fullmatch(r"0[fF][0-9a-fA-F]{8}", s):
        return int(s[2:], 16)
    if t == "f32" and re.fullmatch(r"-?\d+\.\d*(e-?\d+)?", s):
        return bits_from_f32(float(s))
    return mask(int(s, 0), t) if t else int(s, 0)


# ----------------------------------------------------------------------------------------------
# Execution
# ----------------------------------------------------------------------------------------------

class Frame:
    def __init__(self, func, ret_slots=None):
        self.func = func
        self.regs = {}
        self.ret_slots = ret_slots  # caller-side names of the return params


class Thread:
    def __init__(self, tid, ctaid, lane):
        self.tid = tid
        self.ctaid = ctaid
        self.lane = lane
        self.frames = []


class Warp:
    def __init__(self, wid, ws, threads, entry_pc):
        self.wid = wid
        self.ws = ws
        self.threads = threads  # list indexed by lane; None for padding lanes
        self.pc = entry_pc
        self.alpha = {l for l, t in enumerate(threads) if t is not None}
        self.delta = {l: ("en" if t is not None else "exit") for l, t in enumerate(threads)}
        self.stack = []
        self.state = "active"
        self.waiting = set()
        self.steps = 0
        # PDOM mode (kernels without token instructions): GPGPU-Sim style SIMT stack of
        # [pc, reconvergence pc, lanes]; the taken path is pushed last so it runs first.
        self.pstack = [[entry_pc, None, set(self.alpha)]]
        self.exited = set()


class Oracle:
    """All non-determinism: the order of the targets of an indirect branch."""

    def __init__(self, order=None):
        self.order = order  # list of labels by priority; None = lowest lane first

    def pick(self, targets_by_lane, labels_by_pc):
        distinct = []
        for l in sorted(targets_by_lane):
            if targets_by_lane[l] not in distinct:
                distinct.append(targets_by_lane[l])
        if self.order:
            for lbl in self.order:
                for t in distinct:
                    if labels_by_pc.get(t) == lbl:
                        return t
        return distinct[0]


class Machine:
    def __init__(self, mod, ws, oracle, max_steps, trace=False, chunk=1):
        self.chunk = chunk
        self.mod = mod
        self.ws = ws
        self.oracle = oracle
        self.max_steps = max_steps
        self.trace = trace
        self.mem = {}  # byte address -> byte
        self.symaddr = {}
        self.next_addr = 0x100000
        self.labels_by_pc = {}
        for f in mod.funcs.values():
            for l, pc in f.labels.items():
                self.labels_by_pc.setdefault(pc, l)
        for name, (t, init) in mod.globals.items():
            a = self.alloc(type_size(t))
            self.symaddr[name] = a
            self.store(a, init, type_size(t))

    def alloc(self, size):
        a = self.next_addr
        self.next_addr += (size + 255) // 256 * 256 + 256
        return a

    def store(self, a, v, n):
        for i in range(n):
            self.mem[a + i] = (v >> (8 * i)) & 0xFF

    def load(self, a, n):
        v = 0
        for i in range(n):
            if a + i not in self.mem:
                raise Fault("out-of-bounds", f"load at {a + i:#x}")
            v |= self.mem[a + i] << (8 * i)
        return v

    # ---- operands
    def reg_read(self, th, name):
        fr = th.frames[-1]
        if name not in fr.regs:
            raise Stuck(f"read of unwritten register {name} in {fr.func.name} (lane tid {th.tid})")
        return fr.regs[name]

    def reg_write(self, th, name, v):
        fr = th.frames[-1]
        t = fr.func.regs[name]
        if t == "pred":
            v = 1 if v else 0
        elif not t.startswith("param"):
            v = mask(v, t)
        fr.regs[name] = v

    def value(self, th, s, t, cta=None):
        neg = False
        if s.startswith("!"):
            neg, s = True, s[1:]
        if s.startswith("%"):
            sp = {"%tid.x": lambda: th.tid[0], "%tid.y": lambda: th.tid[1], "%tid.z": lambda: th.tid[2],
                  "%ntid.x": lambda: cta.block[0], "%ntid.y": lambda: cta.block[1],
                  "%ntid.z": lambda: cta.block[2], "%ctaid.x": lambda: th.ctaid[0],
                  "%ctaid.y": lambda: th.ctaid[1], "%ctaid.z": lambda: th.ctaid[2],
                  "%nctaid.x": lambda: cta.grid[0], "%nctaid.y": lambda: cta.grid[1],
                  "%nctaid.z": lambda: cta.grid[2], "%laneid": lambda: th.lane}
            v = sp[s]() if s in sp else self.reg_read(th, s)
        elif s in self.symaddr:
            v = self.symaddr[s]
        elif cta is not None and s in cta.shared_addr:
            v = cta.shared_addr[s]
        else:
            v = parse_imm(s, t)
        if neg:
            return 0 if v else 1
        return v

    def address(self, th, s, cta):
        m = re.fullmatch(r"\[\s*([%\w$]+)\s*(?:\+\s*(-?\w+))?\s*\]", s)
        if not m:
            raise SyntaxError(f"bad address {s}")
        base, off = m.group(1), (int(m.group(2), 0) if m.group(2) else 0)
        if base.startswith("%"):
            return ("mem", self.reg_read(th, base) + off)
        if base in self.symaddr:
            return ("mem", self.symaddr[base] + off)
        if base in cta.shared_addr:
            return ("mem", cta.shared_addr[base] + off)
        return ("param", base, off)

    # ---- kernel launch
    def launch(self, entry, grid, block, argvals):
        f = self.mod.funcs[entry]
        assert f.kind == "entry"
        self.entry_has_tokens = f.has_tokens or self.ws == 1
        if not self.entry_has_tokens:
            for g in self.mod.funcs.values():
                if g.has_tokens:
                    raise SyntaxError("PDOM mode supports token-free modules only")
            self.ipdom = compute_ipdom(self.mod)
        ctas = []
        for cz in range(grid[2]):
            for cy in range(grid[1]):
                for cx in range(grid[0]):
                    ctas.append(CTA(self, f, (cx, cy, cz), grid, block, argvals))
        # round-robin over all warps of all CTAs (all CTAs resident)
        total = 0
        while True:
            progressed = False
            live = False
            for cta in (reversed(ctas) if self.chunk > 1 else ctas):
                for w in (reversed(cta.warps) if self.chunk > 1 else cta.warps):
                    if w.state != "active":
                        continue
                    live = True
                    # run this warp for up to `chunk` instructions (1 = strict round robin;
                    # larger = a less regular schedule that exposes missing barriers)
                    for _ in range(self.chunk):
                        if w.state != "active" or w.waiting:
                            break
                        self.step(cta, w)
                        cta.end_barriers()
                        progressed = True
                        total += 1
                    if w.steps > self.max_steps:
                        raise Fault("liveness", f"warp {w.wid} of CTA {cta.ctaid} ran {w.steps} "
                                    f"instructions without completing (pc {w.pc}: {self.mod.insts[w.pc]}, "
                                    f"stack {[(t[0], sorted(t[1]), t[2]) for t in w.stack]})")
                cta.end_barriers()
            if not live:
                return
            if not progressed:
                raise Fault("barrier-deadlock", "every live warp waits on a barrier")

    # ---- warp step
    def step(self, cta, w):
        if not self.entry_has_tokens:
            return self.step_pdom(cta, w)
        inst = self.mod.insts[w.pc]
        w.steps += 1
        lanes = sorted(w.alpha)
        if self.trace:
            print(f"  cta{cta.ctaid[0]} w{w.wid} pc{w.pc:3d} a={''.join('1' if l in w.alpha else '0' for l in range(self.ws))} "
                  f"stack(top first)={[(t[0], ''.join('1' if l in t[1] else '0' for l in range(self.ws)), t[2]) for t in reversed(w.stack)]}  {inst}")
        on = []
        for l in lanes:
            th = w.threads[l]
            if inst.guard is None:
                on.append(l)
            else:
                g = self.reg_read(th, inst.guard[0])
                if bool(g) != inst.guard[1]:
                    on.append(l)
        o = inst.op[0]
        if o in ("ssy", "preBrk", "preRet"):
            if on:
                kind = {"ssy": "sync", "preBrk": "break", "preRet": "call"}[o]
                tgt = inst.func.labels[inst.args[0]]
                w.stack.append((kind, set(w.alpha), tgt))
            w.pc += 1
            return
        if o == "sync":
            if on:
                self.unwind(w)
            else:
                w.pc += 1
            return
        if o in ("brk", "break", "ret", "exit"):
            if o == "ret" and inst.func.kind == "entry":
                o = "exit"
            if not on:
                w.pc += 1
                return
            reason = {"brk": "brk", "break": "brk", "ret": "ret", "exit": "exit"}[o]
            for l in on:
                w.alpha.discard(l)
                w.delta[l] = reason
                if reason == "ret":
                    self.do_return(w.threads[l])
            if not w.alpha:
                self.unwind(w)
            else:
                w.pc += 1
            return
        if o == "bra":
            if not on:
                w.pc += 1
                return
            tgt = inst.func.labels[inst.args[0]]
            if set(on) == w.alpha:
                w.pc = tgt
            else:
                w.stack.append(("diverge", w.alpha - set(on), w.pc + 1))
                w.alpha = set(on)
                w.pc = tgt
            return
        if o == "brx":
            if not on:
                w.pc += 1
                return
            tbl = inst.func.tables[inst.args[1]]
            tg = {}
            for l in on:
                idx = self.value(w.threads[l], inst.args[0], "u32", cta)
                if idx >= len(tbl):
                    raise Stuck(f"brx.idx index {idx} out of range")
                tg[l] = inst.func.labels[tbl[idx]]
            if len(set(tg.values())) == 1:
                t = next(iter(tg.values()))
                if set(on) == w.alpha:
                    w.pc = t
                else:
                    w.stack.append(("diverge", w.alpha - set(on), w.pc + 1))
                    w.alpha = set(on)
                    w.pc = t
            else:
                t = self.oracle.pick(tg, self.labels_by_pc)
                taken = {l for l in on if tg[l] == t}
                w.stack.append(("diverge", w.alpha - taken, w.pc))
                w.alpha = taken
                w.pc = t
            return
        if o == "call":
            if not on:
                w.pc += 1
                return
            rets, callee, args = parse_call(inst)
            cf = self.mod.funcs[callee]
            for l in on:
                th = w.threads[l]
                caller = th.frames[-1]
                fr = Frame(cf, rets)
                for (pname, pty), a in zip(cf.params, args):
                    fr.regs[pname] = caller.regs[a]
                th.frames.append(fr)
            if set(on) != w.alpha:
                w.alpha = set(on)
            w.pc = cf.start
            return
        # data / memory / communication instruction
        if o == "bar":
            self.barrier(cta, w, inst, on)
            w.pc += 1
            return
        if o == "vote":
            self.vote(w, inst, on, cta)
            w.pc += 1
            return
        for l in on:
            self.exec_lane(cta, w.threads[l], inst)
        w.pc += 1

    def step_pdom(self, cta, w):
        """Immediate-post-dominator reconvergence (what a token-insertion pass is expected to
        reproduce for structured code).  Only used for token-free kernels without calls."""
        while w.pstack and (w.pstack[-1][0] == w.pstack[-1][1] or not (w.pstack[-1][2] - w.exited)):
            w.pstack.pop()
        if not w.pstack:
            w.state = "completed"
            return
        top = w.pstack[-1]
        w.pc = top[0]
        w.alpha = top[2] - w.exited
        inst = self.mod.insts[w.pc]
        w.steps += 1
        if self.trace:
            print(f"  cta{cta.ctaid[0]} w{w.wid} pc{w.pc:3d} a={''.join('1' if l in w.alpha else '0' for l in range(self.ws))} "
                  f"pdom-stack(top first)={[(e[0], e[1], ''.join('1' if l in e[2] else '0' for l in range(self.ws))) for e in reversed(w.pstack)]}  {inst}")
        on = [l for l in sorted(w.alpha) if inst.guard is None
              or bool(self.reg_read(w.threads[l], inst.guard[0])) != inst.guard[1]]
        o = inst.op[0]
        if o in ("ret", "exit"):
            if o == "ret" and inst.func.kind != "entry":
                raise SyntaxError("PDOM mode: calls are not supported")
            for l in on:
                w.exited.add(l)
                w.delta[l] = "exit"
            top[0] += 1
            return
        if o in ("bra", "brx", "call"):
            if o == "call":
                raise SyntaxError("PDOM mode: calls are not supported")
            tgt = {}
            for l in sorted(w.alpha):
                if l not in on:
                    tgt[l] = w.pc + 1
                elif o == "bra":
                    tgt[l] = inst.func.labels[inst.args[0]]
                else:
                    tbl = inst.func.tables[inst.args[1]]
                    tgt[l] = inst.func.labels[tbl[self.value(w.threads[l], inst.args[0], "u32", cta)]]
            groups = {}
            for l, t in tgt.items():
                groups.setdefault(t, set()).add(l)
            if len(groups) == 1:
                top[0] = next(iter(groups))
                return
            r = self.ipdom[w.pc]
            top[0] = r
            # fall-through group first (bottom), taken groups on top, lowest lane's target on top
            order = sorted(groups, key=lambda t: (t != w.pc + 1, -min(groups[t])))
            for t in order:
                w.pstack.append([t, r, groups[t]])
            return
        if o == "bar":
            self.barrier(cta, w, inst, on)
        elif o == "vote":
            self.vote(w, inst, on, cta)
        else:
            for l in on:
                self.exec_lane(cta, w.threads[l], inst)
        top[0] += 1

    def do_return(self, th):
        fr = th.frames.pop()
        if fr.ret_slots:
            caller = th.frames[-1]
            for slot, (rname, _) in zip(fr.ret_slots, fr.func.rets):
                if rname in fr.regs:
                    caller.regs[slot] = fr.regs[rname]

    def unwind(self, w):
        while True:
            if not w.stack:
                if all(d == "exit" for d in w.delta.values()):
                    w.state = "completed"
                    w.alpha = set()
                    return
                raise Stuck(f"stack empty while lanes wait: {w.delta}")
            kind, ta, pc = w.stack.pop()
            delta = dict(w.delta)
            if kind in ("call", "break"):
                want = "ret" if kind == "call" else "brk"
                for l in ta:
                    if delta[l] == want:
                        delta[l] = "en"
            act = {l for l in ta if delta[l] == "en"}
            if act:
                w.delta = delta
                w.alpha = act
                w.pc = pc
                return

    def vote(self, w, inst, on, cta):
        mode = inst.op[1]
        preds = {l: bool(self.value(w.threads[l], inst.args[1], "pred", cta)) for l in on}
        if mode == "ballot":
            res = sum(1 << l for l, p in preds.items() if p)
        elif mode == "all":
            res = int(all(preds.values()))
        elif mode == "any":
            res = int(any(preds.values()))
        elif mode == "uni":
            res = int(len(set(preds.values())) <= 1)
        else:
            raise SyntaxError(inst.text)
        for l in on:
            self.reg_write(w.threads[l], inst.args[0], res)

    def barrier(self, cta, w, inst, on):
        if not on:
            return
        kind = inst.op[1]
        th0 = w.threads[on[0]]
        if kind == "red":
            rop = inst.op[2]
            d, rest = inst.args[0], inst.args[1:]
        else:
            rop, d, rest = None, None, inst.args
        bid = self.value(th0, rest[0], "u32", cta)
        cnt = self.value(th0, rest[1], "u32", cta) if (len(rest) == 3 or (kind != "red" and len(rest) == 2)) else None
        if kind == "arrive" and cnt is None:
            raise Stuck("bar.arrive needs a count")
        tc_default = sum(1 for x in cta.warps if x.state == "active") * self.ws
        b = cta.bars.get(bid)
        if b is None:
            b = {"tc": cnt if cnt is not None else tc_default, "ac": 0, "red": rop, "acts": []}
            cta.bars[bid] = b
        else:
            if cnt is not None and cnt != b["tc"]:
                raise Stuck(f"barrier {bid}: count {cnt} != {b['tc']}")
            if b["red"] != rop:
                raise Stuck(f"barrier {bid}: bar.red mixed with bar.sync/arrive")
        if kind == "red":
            for l in on:
                b["acts"].append((w, l, d, bool(self.value(w.threads[l], rest[-1], "pred", cta))))
        b["ac"] += self.ws
        if kind in ("sync", "red"):
            w.waiting.add(bid)

    def exec_lane(self, cta, th, inst):
        op = inst.op
        o = op[0]
        a = inst.args
        if o == "mov":
            t = op[1]
            self.reg_write(th, a[0], self.value(th, a[1], t, cta))
        elif o == "cvta":
            self.reg_write(th, a[0], self.value(th, a[1], "u64", cta))
        elif o in ("add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr", "min", "max", "mad", "neg", "not"):
            self.arith(cta, th, inst)
        elif o == "setp":
            cmp, t = op[1], op[2]
            x, y = self.value(th, a[1], t, cta), self.value(th, a[2], t, cta)
            if t == "f32":
                x, y = f32_from_bits(x), f32_from_bits(y)
            elif t.startswith("s"):
                x, y = signed(x, t), signed(y, t)
            else:
                x, y = mask(x, t), mask(y, t)
            r = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp]
            self.reg_write(th, a[0], r)
        elif o == "selp":
            t = op[1]
            c = self.value(th, a[3], "pred", cta)
            self.reg_write(th, a[0], self.value(th, a[1], t, cta) if c else self.value(th, a[2], t, cta))
        elif o == "ld":
            t = op[-1]
            where = self.address(th, a[1], cta)
            if where[0] == "param":
                fr = th.frames[-1]
                # an unwritten .param (e.g. the return value of a call this lane did not make)
                # reads as garbage
                v = fr.regs.get(where[1], 0xDEADBEEF)
            else:
                v = self.load(where[1], type_size(t))
            self.reg_write(th, a[0], v)
        elif o == "st":
            t = op[-1]
            where = self.address(th, a[0], cta)
            v = self.value(th, a[1], t, cta)
            if where[0] == "param":
                th.frames[-1].regs[where[1]] = mask(v, t)
            else:
                if where[1] not in self.mem:
                    raise Fault("out-of-bounds", f"store at {where[1]:#x} by tid {th.tid}")
                self.store(where[1], v, type_size(t))
        elif o in ("atom", "red"):
            aop, t = op[-2], op[-1]
            where = self.address(th, a[1] if o == "atom" else a[0], cta)
            addr = where[1]
            if addr not in self.mem:
                raise Fault("out-of-bounds", f"atom at {addr:#x}")
            n = type_size(t)
            old = self.load(addr, n)
            b = self.value(th, a[2] if o == "atom" else a[1], t, cta)
            if aop == "add":
                new = old + b
            elif aop == "cas":
                c = self.value(th, a[3], t, cta)
                new = c if old == mask(b, t) else old
            elif aop == "exch":
                new = b
            elif aop == "or":
                new = old | b
            elif aop == "and":
                new = old & b
            else:
                raise SyntaxError(inst.text)
            self.store(addr, mask(new, t), n)
            if o == "atom":
                self.reg_write(th, a[0], old)
        elif o == "membar":
            pass
        else:
            raise SyntaxError(f"unsupported instruction {inst.text}")

    def arith(self, cta, th, inst):
        op, a = inst.op, inst.args
        o = op[0]
        t = op[-1]
        if o == "mul" and op[1] == "wide":
            x, y = self.value(th, a[1], t, cta), self.value(th, a[2], t, cta)
            if t.startswith("s"):
                x, y = signed(x, t), signed(y, t)
            self.reg_write(th, a[0], x * y)
            return
        if t == "f32":
            xs = [f32_from_bits(self.value(th, s, t, cta)) for s in a[1:]]
            x = np.float32(xs[0])
            if o == "mul":
                r = x * np.float32(xs[1])
            elif o == "add":
                r = x + np.float32(xs[1])
            elif o == "sub":
                r = x - np.float32(xs[1])
            else:
                raise SyntaxError(inst.text)
            self.reg_write(th, a[0], bits_from_f32(r))
            return
        vals = [self.value(th, s, t, cta) for s in a[1:]]
        sv = [signed(v, t) if t.startswith("s") else mask(v, t) for v in vals]
        if o == "add":
            r = sv[0] + sv[1]
        elif o == "sub":
            r = sv[0] - sv[1]
        elif o == "mul":
            r = sv[0] * sv[1]
        elif o == "mad":
            r = sv[0] * sv[1] + sv[2]
        elif o == "div":
            if sv[1] == 0:
                r = -1
            else:
                q = abs(sv[0]) // abs(sv[1])
                r = q if (sv[0] >= 0) == (sv[1] >= 0) else -q
        elif o == "rem":
            r = abs(sv[0]) % abs(sv[1]) * (1 if sv[0] >= 0 else -1)
        elif o == "neg":
            r = -sv[0]
        elif o == "not":
            r = ~vals[0]
        elif o == "and":
            r = vals[0] & vals[1]
        elif o == "or":
            r = vals[0] | vals[1]
        elif o == "xor":
            r = vals[0] ^ vals[1]
        elif o == "shl":
            r = vals[0] << mask(vals[1], "u32")
        elif o == "shr":
            r = sv[0] >> mask(vals[1], "u32")
        elif o == "min":
            r = min(sv[0], sv[1])
        elif o == "max":
            r = max(sv[0], sv[1])
        else:
            raise SyntaxError(inst.text)
        self.reg_write(th, a[0], r)


def compute_ipdom(mod):
    """Immediate post-dominator (an instruction index, or None for the function exit) of every
    instruction of every function."""
    ipdom = {}
    for f in mod.funcs.values():
        n = list(range(f.start, f.end))
        EXIT = -1
        succ = {}
        for pc in n:
            inst = mod.insts[pc]
            o = inst.op[0]
            nxt = pc + 1 if pc + 1 < f.end else EXIT
            if o in ("ret", "exit"):
                succ[pc] = {EXIT} | ({nxt} if inst.guard else set())
            elif o == "bra":
                succ[pc] = {f.labels[inst.args[0]]} | ({nxt} if inst.guard else set())
            elif o == "brx":
                succ[pc] = {f.labels[l] for l in f.tables[inst.args[1]]} | ({nxt} if inst.guard else set())
            else:
                succ[pc] = {nxt}
        allnodes = set(n) | {EXIT}
        pdom = {x: set(allnodes) for x in n}
        pdom[EXIT] = {EXIT}
        changed = True
        while changed:
            changed = False
            for x in reversed(n):
                new = {x} | set.intersection(*[pdom[y] for y in succ[x]])
                if new != pdom[x]:
                    pdom[x] = new
                    changed = True
        for x in n:
            strict = pdom[x] - {x}
            # the immediate one is the strict post-dominator that all others post-dominate
            best = None
            for c in strict:
                if all(o2 in pdom[c] for o2 in strict):
                    best = c
            ipdom[x] = None if best in (None, EXIT) else best
    return ipdom


def parse_call(inst):
    m = re.fullmatch(r"(?:\((.*?)\)\s*,\s*)?([\w$]+)\s*(?:,\s*\((.*)\))?", ", ".join(inst.args).strip())
    if not m:
        raise SyntaxError(inst.text)
    rets = [x.strip() for x in m.group(1).split(",")] if m.group(1) else []
    args = [x.strip() for x in m.group(3).split(",")] if m.group(3) else []
    return rets, m.group(2), args


class CTA:
    def __init__(self, m, f, ctaid, grid, block, argvals):
        self.m = m
        self.ctaid = ctaid
        self.grid = grid
        self.block = block
        self.bars = {}
        self.shared_addr = {}
        for name, size in f.shared.items():
            a = m.alloc(size)
            m.store(a, 0, size)
            self.shared_addr[name] = a
        nthreads = block[0] * block[1] * block[2]
        ws = m.ws
        self.warps = []
        tids = [(x, y, z) for z in range(block[2]) for y in range(block[1]) for x in range(block[0])]
        for wi in range((nthreads + ws - 1) // ws):
            lanes = []
            for l in range(ws):
                k = wi * ws + l
                if k < nthreads:
                    th = Thread(tids[k], ctaid, l)
                    fr = Frame(f)
                    for (pname, pty), v in zip(f.params, argvals):
                        fr.regs[pname] = v
                    th.frames.append(fr)
                    lanes.append(th)
                else:
                    lanes.append(None)
            self.warps.append(Warp(wi, ws, lanes, f.start))

    def end_barriers(self):
        for bid in list(self.bars):
            b = self.bars[bid]
            if b["ac"] >= b["tc"]:
                del self.bars[bid]
                for w in self.warps:
                    w.waiting.discard(bid)
                if b["red"]:
                    ps = [p for (_, _, _, p) in b["acts"]]
                    res = {"popc": sum(ps), "and": int(all(ps)), "or": int(any(ps))}[b["red"]]
                    for (w, l, d, _) in b["acts"]:
                        self.m.reg_write(w.threads[l], d, res)


# ----------------------------------------------------------------------------------------------
# Manifests
# ----------------------------------------------------------------------------------------------

NP = {"i32": np.int32, "u32": np.uint32, "f32": np.float32, "i64": np.int64, "u64": np.uint64,
      "f64": np.float64}


def make_buffer(spec):
    dt = NP[spec["dtype"]]
    n = int(np.prod(spec["shape"]))
    init = spec.get("init", "zeros")
    if init == "zeros":
        return np.zeros(n, dt)
    if "values" in init:
        v = np.array(init["values"], dt)
        assert v.size == n, spec
        return v
    if "fill" in init:
        return np.full(n, init["fill"], dt)
    if "iota" in init:
        return (init["iota"].get("start", 0) + init["iota"].get("step", 1) * np.arange(n)).astype(dt)
    raise ValueError(init)


def run_manifest(path, ws_override=None, order=None, max_steps=20000, trace=False, quiet=False, chunk=1):
    man = yaml.safe_load(open(path))
    d = os.path.dirname(path)
    mod = Module(os.path.join(d, man["kernel"]))
    ws = ws_override or man.get("set", {}).get("sm.warp_size", 32)
    m = Machine(mod, ws, Oracle(order), max_steps, trace, chunk)
    bufs = {}
    addrs = {}
    for name, spec in man.get("buffers", {}).items():
        arr = make_buffer(spec)
        a = m.alloc(arr.nbytes)
        raw = arr.tobytes()
        for i, byte in enumerate(raw):
            m.mem[a + i] = byte
        bufs[name] = arr
        addrs[name] = a
    fault = None
    try:
        for ln in man["launches"]:
            f = mod.funcs[ln["entry"]]
            argv = []
            for (pname, pty), v in zip(f.params, ln.get("args", [])):
                argv.append(addrs[v] if isinstance(v, str) else mask(int(v), pty) if pty != "f32" else bits_from_f32(v))
            assert len(argv) == len(f.params), f"{path}: {len(argv)} args for {len(f.params)} params"
            m.launch(ln["entry"], ln["grid"], ln["block"], argv)
    except Fault as e:
        fault = e
    exp = man.get("expect_fault")
    ok = True
    msgs = []
    if fault is not None:
        if exp is None or exp != fault.kind:
            ok = False
        msgs.append(f"fault {fault}")
    elif exp:
        ok = False
        msgs.append(f"expected fault {exp} but the kernel completed")
    results = {}
    for name, arr in bufs.items():
        raw = bytes(m.mem[addrs[name] + i] for i in range(arr.nbytes))
        results[name] = np.frombuffer(raw, arr.dtype)
    if fault is None:
        for chk in man.get("checks", []):
            got = results[chk["buffer"]]
            want = np.array(chk["values"], got.dtype)
            if got.dtype.kind == "f":
                good = np.allclose(got, want, rtol=chk.get("rtol", 0), atol=chk.get("atol", 0))
            else:
                good = np.array_equal(got, want)
            if not good:
                ok = False
                msgs.append(f"check {chk['buffer']}: got {got.tolist()} want {want.tolist()}")
    if not quiet:
        print(f"{'PASS' if ok else 'FAIL'} {os.path.relpath(path, HERE)} (warp {ws}){'' if not msgs else ': ' + '; '.join(msgs)}")
    return ok, results, fault


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--all-orders", action="store_true", help="try every target order of indirect branches")
    ap.add_argument("--mimd", action="store_true", help="warp size 1: per-thread semantics")
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--dump", action="store_true")
    ap.add_argument("--max-steps", type=int, default=20000)
    ap.add_argument("--chunk", type=int, default=1,
                    help="instructions a warp runs before the next warp gets its turn (1 = round robin; "
                         "warps and CTAs are visited in reverse order when > 1)")
    args = ap.parse_args()
    names = args.names or sorted(n for n in os.listdir(HERE) if os.path.isfile(os.path.join(HERE, n, n + ".yaml")))
    allok = True
    for n in names:
        p = os.path.join(HERE, n, n + ".yaml")
        if args.mimd:
            man = yaml.safe_load(open(p))
            okm, res, fault = run_manifest(p, ws_override=1, max_steps=args.max_steps, quiet=True)
            # compare only the per-thread results (not masks / event logs which depend on the warp)
            bad = []
            if fault:
                bad.append(str(fault))
            else:
                for chk in man.get("checks", []):
                    if chk["buffer"] in ("mask", "ev", "seq", "evcnt", "vote", "votes"):
                        continue
                    if not np.array_equal(res[chk["buffer"]], np.array(chk["values"], res[chk["buffer"]].dtype)):
                        bad.append(f"{chk['buffer']}: {res[chk['buffer']].tolist()}")
            note = ""
            if man.get("expect_fault") and not fault:
                note = f"terminates with per-thread scheduling (SIMT: expect_fault {man['expect_fault']})"
            print(f"{'same' if not bad else 'DIFF'} (per-thread) {n}: {'; '.join(bad) or note}")
            continue
        orders = [None]
        if args.all_orders:
            mod = Module(os.path.join(HERE, n, yaml.safe_load(open(p))["kernel"]))
            tl = sorted({l for f in mod.funcs.values() for t in f.tables.values() for l in t})
            orders = [list(o) for o in itertools.permutations(tl)] or [None]
        for o in orders:
            ok, res, _ = run_manifest(p, order=o, max_steps=args.max_steps, trace=args.trace, chunk=args.chunk)
            if o:
                print(f"     target order {o}")
            if args.dump or not ok:
                for k, v in res.items():
                    print(f"     {k} = {v.tolist()}")
            allok &= ok
    sys.exit(0 if allok else 1)


if __name__ == "__main__":
    main()
