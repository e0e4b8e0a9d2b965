//! Compact, stable text for golden tests and the `--cfg` flag: a CFG with its immediate
//! post-dominators and loops, and a body listing `pc: [@p] op target`.

use super::cfg::{BasicBlock, Cfg};
use super::dom::DomTree;
use super::loops::LoopForest;
use crate::ir::*;
use crate::print::arith_name;
use std::fmt::Write;

/// Blocks with their pc ranges, labels, successors and immediate post-dominators, then the
/// loops (or why there are none: an irreducible CFG, an out-of-body target).
pub fn describe_cfg(f: &Function) -> String {
    let mut s = format!("cfg {} ({})\n", f.name, kind_name(f.kind));
    let cfg = match Cfg::build(f) {
        Ok(c) if !f.body.is_empty() => c,
        Ok(_) => return s + "  (empty body)\n",
        Err(e) => return s + &format!("  error: {e}\n"),
    };
    let pdom = DomTree::post_dominators(&cfg.succs_with_exit(), cfg.exit());
    for (b, blk) in cfg.blocks.iter().enumerate() {
        describe_block(&mut s, f, &cfg, &pdom, b, blk);
    }
    let succ = cfg.succs();
    let dom = DomTree::dominators(&succ, cfg.entry());
    match LoopForest::compute(&succ, &dom) {
        Ok(forest) => describe_loops(&mut s, &cfg, &forest),
        Err(e) => {
            let pc = cfg.blocks[e.from].last_pc();
            let line = f.body[pc as usize].span.line;
            let _ = writeln!(
                s,
                "  irreducible: edge b{} -> b{} (line {line})",
                e.from, e.to
            );
        }
    }
    s
}

fn describe_block(
    s: &mut String,
    f: &Function,
    cfg: &Cfg,
    pdom: &DomTree,
    b: usize,
    blk: &BasicBlock,
) {
    let node = |n: usize| {
        if n == cfg.exit() {
            "exit".to_string()
        } else {
            format!("b{n}")
        }
    };
    let label = f
        .label_at(blk.start)
        .map(|l| format!(" {l}"))
        .unwrap_or_default();
    let mut succ: Vec<String> = blk.succs.iter().map(|&n| node(n)).collect();
    if blk.to_exit {
        succ.push("exit".into());
    }
    let ipdom = pdom.idom(b).map_or("-".to_string(), node);
    let _ = writeln!(
        s,
        "  b{b} [{}..{}){label} -> {} ; ipdom {ipdom}",
        blk.start,
        blk.end,
        if succ.is_empty() {
            "-".to_string()
        } else {
            succ.join(" ")
        }
    );
}

fn describe_loops(s: &mut String, cfg: &Cfg, forest: &LoopForest) {
    if forest.loops.is_empty() {
        s.push_str("  no loops\n");
    }
    let list = |v: &[usize]| {
        v.iter()
            .map(|n| format!("b{n}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (id, l) in forest.loops.iter().enumerate() {
        let exits: Vec<String> = l
            .exits
            .iter()
            .map(|&(u, v)| {
                if v == cfg.exit() {
                    format!("b{u}->exit")
                } else {
                    format!("b{u}->b{v}")
                }
            })
            .collect();
        let parent = l.parent.map_or("-".to_string(), |p| format!("L{p}"));
        let _ = writeln!(
            s,
            "  loop L{id} header b{} depth {} parent {parent} body {} latches {} exits {}",
            l.header,
            l.depth,
            list(&l.body),
            list(&l.latches),
            if exits.is_empty() {
                "-".to_string()
            } else {
                exits.join(" ")
            }
        );
    }
}

/// The body, one instruction a line (`  pc: [@p] op operands`), each label on its own line
/// before the instruction it names. Targets are printed as pcs.
pub fn describe_body(f: &Function) -> String {
    let mut s = String::new();
    for (pc, inst) in f.body.iter().enumerate() {
        for (name, lpc) in &f.labels {
            if *lpc as usize == pc {
                let _ = writeln!(s, "{name}:");
            }
        }
        let guard = inst.guard.map_or(String::new(), |g| {
            format!(
                "@{}{} ",
                if g.negated { "!" } else { "" },
                reg_name(f, g.reg)
            )
        });
        let _ = writeln!(s, "{pc:>4}: {guard}{}", op_text(f, &inst.op));
    }
    for (name, lpc) in &f.labels {
        if *lpc as usize == f.body.len() {
            let _ = writeln!(s, "{name}:");
        }
    }
    s
}

fn kind_name(k: FuncKind) -> &'static str {
    match k {
        FuncKind::Entry => "entry",
        FuncKind::Func => "func",
    }
}

fn reg_name(f: &Function, r: RegId) -> String {
    f.regs
        .get(r.0 as usize)
        .map_or(format!("%reg{}", r.0), |i| i.name.clone())
}

fn operand(f: &Function, o: &Operand) -> String {
    match o {
        Operand::Reg(r) => reg_name(f, *r),
        Operand::NotReg(r) => format!("!{}", reg_name(f, *r)),
        Operand::Imm(v) => v.to_string(),
        Operand::Special(SpecialReg::Tid(d)) => format!("%tid.{}", dim(*d)),
        Operand::Special(SpecialReg::LaneId) => "%laneid".into(),
        Operand::Special(sr) => format!("%{sr:?}").to_lowercase(),
        Operand::Symbol(id) => format!("sym{}", id.0),
        Operand::Func(id) => format!("func{}", id.0),
    }
}

fn dim(d: Dim) -> &'static str {
    match d {
        Dim::X => "x",
        Dim::Y => "y",
        Dim::Z => "z",
    }
}

fn targets(ts: &[Pc]) -> String {
    ts.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn uni(u: bool) -> &'static str {
    if u {
        ".uni"
    } else {
        ""
    }
}

/// Control and token instructions in full; data instructions as mnemonic and operands.
fn op_text(f: &Function, op: &Op) -> String {
    match op {
        Op::Bra { target, uni: u } => format!("bra{} {target}", uni(*u)),
        Op::BrxIdx {
            index,
            targets: ts,
            uni: u,
        } => {
            format!(
                "brx.idx{} {}, [{}]",
                uni(*u),
                operand(f, index),
                targets(ts)
            )
        }
        Op::Call {
            callee: Callee::Direct(id),
            ..
        } => format!("call func{}", id.0),
        Op::Call {
            callee: Callee::Indirect { reg, .. },
            ..
        } => format!("call {}", reg_name(f, *reg)),
        Op::Ret { uni: u } => format!("ret{}", uni(*u)),
        Op::Exit => "exit".into(),
        Op::Trap => "trap".into(),
        Op::Ssy { target } => format!("ssy {target}"),
        Op::Sync => "sync".into(),
        Op::PreBrk { target } => format!("preBrk {target}"),
        Op::Brk => "brk".into(),
        Op::PreRet { target } => format!("preRet {target}"),
        _ => data_text(f, op),
    }
}

fn data_text(f: &Function, op: &Op) -> String {
    let o = |x: &Operand| operand(f, x);
    match op {
        Op::Mov { ty, d, a } => format!("mov.{} {}, {}", ty.name(), reg_name(f, *d), o(a)),
        Op::Setp {
            cmp, ty, p, a, b, ..
        } => {
            format!(
                "setp.{}.{} {}, {}, {}",
                format!("{cmp:?}").to_lowercase(),
                ty.name(),
                reg_name(f, *p),
                o(a),
                o(b)
            )
        }
        Op::Arith {
            op: aop,
            ty,
            d,
            a,
            b,
            c,
            ..
        } => {
            let srcs = [a, b, c]
                .into_iter()
                .take(aop.arity())
                .map(o)
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "{}.{} {}, {srcs}",
                arith_name(*aop),
                ty.name(),
                reg_name(f, *d)
            )
        }
        _ => mnemonic(op).to_string(),
    }
}

fn mnemonic(op: &Op) -> &'static str {
    match op {
        Op::MovPack { .. } | Op::MovUnpack { .. } => "mov",
        Op::Bfi { .. } => "bfi",
        Op::Set { .. } => "set",
        Op::Selp { .. } => "selp",
        Op::Slct { .. } => "slct",
        Op::Cvt { .. } => "cvt",
        Op::Cvta { .. } => "cvta",
        Op::Ld { .. } => "ld",
        Op::St { .. } => "st",
        Op::Atom { d: Some(_), .. } => "atom",
        Op::Atom { d: None, .. } => "red",
        Op::Bar { .. } => "bar",
        Op::WarpSync { .. } => "bar.warp.sync",
        Op::Fence { .. } => "membar",
        Op::Shfl { .. } => "shfl",
        Op::Vote { .. } => "vote",
        Op::Match { .. } => "match",
        Op::ActiveMask { .. } => "activemask",
        Op::Redux { .. } => "redux.sync",
        Op::Lop3 { .. } => "lop3",
        Op::Dot {
            kind: DotKind::Dp4a,
            ..
        } => "dp4a",
        Op::Dot { .. } => "dp2a",
        Op::Testp { .. } => "testp",
        Op::Isspacep { .. } => "isspacep",
        Op::Nanosleep { .. } => "nanosleep",
        Op::Mma { .. } | Op::MmaInt { .. } => "mma.sync",
        Op::Ldmatrix { .. } => "ldmatrix",
        Op::Stmatrix { .. } => "stmatrix",
        Op::MmaM884 { .. } => "mma.sync",
        Op::WmmaLoad { .. } => "wmma.load",
        Op::WmmaStore { .. } => "wmma.store",
        Op::WmmaMma { .. } => "wmma.mma",
        Op::CpAsync { .. } => "cp.async",
        Op::CpAsyncCommit => "cp.async.commit_group",
        Op::CpAsyncWait { n: Some(_) } => "cp.async.wait_group",
        Op::CpAsyncWait { n: None } => "cp.async.wait_all",
        Op::CvtPack { .. } => "cvt",
        Op::Nop => "nop",
        Op::Bfind { .. } => "bfind",
        Op::Shf { .. } => "shf",
        Op::Carry {
            op: CarryOp::Add, ..
        } => "add.cc",
        Op::Carry {
            op: CarryOp::Sub, ..
        } => "sub.cc",
        Op::Carry {
            op: CarryOp::MadLo, ..
        } => "mad.lo.cc",
        Op::Carry {
            op: CarryOp::MadHi, ..
        } => "mad.hi.cc",
        _ => "op",
    }
}

/// The CFG as a Graphviz DOT digraph: one box per block (its pcs, source lines, label and
/// instructions), solid edges for control flow (`taken` / `fall` where a block has two), a
/// dashed edge per token push (`ssy`, `preBrk`, `preRet`) from its block to the block its
/// token reconverges at, and the virtual exit as a node. `dot -Tsvg` draws it.
pub fn cfg_dot(f: &Function) -> String {
    let mut s = format!("digraph \"{}\" {{\n", dot_escape(&f.name));
    s.push_str("  node [shape=box, fontname=\"monospace\", fontsize=10];\n");
    let cfg = match Cfg::build(f) {
        Ok(c) if !f.body.is_empty() => c,
        Ok(_) => return s + "  empty [label=\"(empty body)\"];\n}\n",
        Err(e) => return s + &format!("  error [label=\"{}\"];\n}}\n", dot_escape(&e.to_string())),
    };
    let pdom = DomTree::post_dominators(&cfg.succs_with_exit(), cfg.exit());
    for (b, blk) in cfg.blocks.iter().enumerate() {
        let mut label = format!("b{b} [{}..{})", blk.start, blk.end);
        if let Some(l) = f.label_at(blk.start) {
            let _ = write!(label, " {l}");
        }
        let lines: Vec<u32> = (blk.start..blk.end)
            .map(|pc| f.body[pc as usize].span.line)
            .filter(|&l| l > 0)
            .collect();
        if let (Some(lo), Some(hi)) = (lines.iter().min(), lines.iter().max()) {
            let _ = write!(label, "  lines {lo}–{hi}");
        }
        let ipdom = pdom.idom(b).map_or("-".to_string(), |n| {
            if n == cfg.exit() {
                "exit".into()
            } else {
                format!("b{n}")
            }
        });
        let _ = write!(label, "  ipdom {ipdom}\\l");
        for pc in blk.start..blk.end {
            let inst = &f.body[pc as usize];
            let guard = inst.guard.map_or(String::new(), |g| {
                format!(
                    "@{}{} ",
                    if g.negated { "!" } else { "" },
                    reg_name(f, g.reg)
                )
            });
            let text = format!("{pc}: {guard}{}", op_text(f, &inst.op));
            let _ = write!(label, "{}\\l", dot_escape(&text));
        }
        let _ = writeln!(s, "  b{b} [label=\"{label}\"];");
        let two = blk.succs.len() + usize::from(blk.to_exit) > 1;
        for (i, &n) in blk.succs.iter().enumerate() {
            let to = if n == cfg.exit() {
                "exit".to_string()
            } else {
                format!("b{n}")
            };
            let label = match (two, i) {
                (false, _) => String::new(),
                (true, 0) => " [label=\"taken\"]".into(),
                (true, _) => " [label=\"fall\"]".into(),
            };
            let _ = writeln!(s, "  b{b} -> {to}{label};");
        }
        if blk.to_exit {
            let _ = writeln!(s, "  b{b} -> exit;");
        }
        for pc in blk.start..blk.end {
            let (kind, target) = match f.body[pc as usize].op {
                Op::Ssy { target } => ("ssy", target),
                Op::PreBrk { target } => ("preBrk", target),
                Op::PreRet { target } => ("preRet", target),
                _ => continue,
            };
            let to = if (target as usize) < f.body.len() {
                format!("b{}", cfg.block_of(target))
            } else {
                "exit".into()
            };
            let _ = writeln!(
                s,
                "  b{b} -> {to} [style=dashed, color=\"#c0392b\", fontcolor=\"#c0392b\", label=\"{kind} @{pc}\"];"
            );
        }
    }
    s.push_str("  exit [shape=doublecircle, label=\"exit\"];\n}\n");
    s
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
