//! Printing IR back as PTX text (used by `gpusim ptx --tokens` to show inserted tokens, and by
//! golden tests). The output re-parses to the same IR.

mod hopper;
mod tensor;
mod wgmma;
use crate::ir::*;
use std::fmt::Write;

/// The whole function, with its register declarations, labels and body.
pub fn function_to_ptx(m: &Module, f: &Function) -> String {
    let mut s = String::new();
    let kind = match f.kind {
        FuncKind::Entry => ".entry",
        FuncKind::Func => ".func",
    };
    let params = |ps: &[Param]| -> String {
        ps.iter()
            .map(|p| {
                let sym = m.symbol(p.symbol);
                if p.count > 1 {
                    format!(
                        ".param .align {} .{} {}[{}]",
                        p.align,
                        p.ty.name(),
                        sym.name,
                        p.count
                    )
                } else {
                    format!(".param .{} {}", p.ty.name(), sym.name)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let rets = if f.rets.is_empty() {
        String::new()
    } else {
        format!("({}) ", params(&f.rets))
    };
    let _ = writeln!(s, "{kind} {rets}{}({})\n{{", f.name, params(&f.params));
    for line in reg_declarations(&f.regs) {
        let _ = writeln!(s, "\t{line}");
    }
    // The body's own `.shared` arrays (placed per kernel, `Module::shared_layout`), then its
    // frame variables.
    let id = m.find_function(&f.name);
    let body_shared = m
        .symbols
        .iter()
        .enumerate()
        .filter(|(_, s)| s.space == Space::Shared && s.owner.is_some() && s.owner == id)
        .map(|(i, _)| SymbolId(i as u32));
    for v in body_shared.chain(f.frame_vars.iter().copied()) {
        let sym = m.symbol(v);
        let _ = writeln!(
            s,
            "\t.{} .align {} .{} {}[{}];",
            sym.space.name(),
            sym.align,
            sym.ty.name(),
            sym.name,
            sym.count.max(1)
        );
    }
    for (pc, inst) in f.body.iter().enumerate() {
        for (name, lpc) in &f.labels {
            if *lpc == pc as Pc {
                let _ = writeln!(s, "{name}:");
            }
        }
        if let Op::BrxIdx {
            index,
            targets,
            uni,
        } = &inst.op
        {
            // A branch table must be a `.branchtargets` label declared before its use.
            let ts: Vec<String> = targets.iter().map(|t| label(f, *t)).collect();
            let _ = writeln!(s, "$__brxtab_{pc}: .branchtargets {};", ts.join(", "));
            let g = match inst.guard {
                Some(Guard { reg: r, negated }) => {
                    format!("@{}{} ", if negated { "!" } else { "" }, reg(f, r))
                }
                None => String::new(),
            };
            let uni = if *uni { ".uni" } else { "" };
            let _ = writeln!(
                s,
                "\t{g}brx.idx{uni} {}, $__brxtab_{pc};",
                operand(m, f, index, Type::U32)
            );
            continue;
        }
        let _ = writeln!(s, "\t{}", inst_to_ptx(m, f, inst));
    }
    s.push_str("}\n");
    s
}

fn reg(f: &Function, r: RegId) -> &str {
    f.regs
        .get(r.0 as usize)
        .map(|r| r.name.as_str())
        .unwrap_or("%?")
}

fn label(f: &Function, pc: Pc) -> String {
    f.label_at(pc)
        .map(str::to_string)
        .unwrap_or_else(|| format!("$pc{pc}"))
}

fn imm(bits: u64, ty: Type) -> String {
    match ty {
        Type::F32 => format!("0f{:08X}", bits as u32),
        Type::F64 => format!("0d{bits:016X}"),
        t if t.is_signed() => {
            let shift = 64 - t.bits();
            format!("{}", ((bits << shift) as i64) >> shift)
        }
        // masks and other large bit patterns read better in hex
        _ if bits > 0xFFFF => format!("0x{bits:X}"),
        _ => format!("{bits}"),
    }
}

fn operand(m: &Module, f: &Function, o: &Operand, ty: Type) -> String {
    match o {
        Operand::Reg(r) => reg(f, *r).to_string(),
        Operand::NotReg(r) => format!("!{}", reg(f, *r)),
        Operand::Imm(b) => imm(*b, ty),
        Operand::Special(s) => special(*s),
        Operand::Symbol(s) => m.symbol(*s).name.clone(),
        Operand::Func(id) => m.function(*id).name.clone(),
    }
}

fn special(s: SpecialReg) -> String {
    let dim = |d: Dim| match d {
        Dim::X => "x",
        Dim::Y => "y",
        Dim::Z => "z",
    };
    match s {
        SpecialReg::Tid(d) => format!("%tid.{}", dim(d)),
        SpecialReg::Ntid(d) => format!("%ntid.{}", dim(d)),
        SpecialReg::Ctaid(d) => format!("%ctaid.{}", dim(d)),
        SpecialReg::Nctaid(d) => format!("%nctaid.{}", dim(d)),
        SpecialReg::LaneId => "%laneid".into(),
        SpecialReg::WarpId => "%warpid".into(),
        SpecialReg::NWarpId => "%nwarpid".into(),
        SpecialReg::SmId => "%smid".into(),
        SpecialReg::NSmId => "%nsmid".into(),
        SpecialReg::GridId => "%gridid".into(),
        SpecialReg::Clock => "%clock".into(),
        SpecialReg::Clock64 => "%clock64".into(),
        SpecialReg::LanemaskEq => "%lanemask_eq".into(),
        SpecialReg::LanemaskLe => "%lanemask_le".into(),
        SpecialReg::LanemaskLt => "%lanemask_lt".into(),
        SpecialReg::LanemaskGe => "%lanemask_ge".into(),
        SpecialReg::LanemaskGt => "%lanemask_gt".into(),
        SpecialReg::DynamicSmemSize => "%dynamic_smem_size".into(),
        SpecialReg::TotalSmemSize => "%total_smem_size".into(),
        SpecialReg::ClusterCtarank => "%cluster_ctarank".into(),
        SpecialReg::ClusterNctarank => "%cluster_nctarank".into(),
        SpecialReg::ClusterId(d) => format!("%clusterid.{}", dim(d)),
        SpecialReg::NClusterId(d) => format!("%nclusterid.{}", dim(d)),
        SpecialReg::ClusterCtaid(d) => format!("%cluster_ctaid.{}", dim(d)),
        SpecialReg::ClusterNctaid(d) => format!("%cluster_nctaid.{}", dim(d)),
        SpecialReg::IsExplicitCluster => "%is_explicit_cluster".into(),
        SpecialReg::GlobalTimer => "%globaltimer".into(),
        SpecialReg::ClockHi => "%clock_hi".into(),
        SpecialReg::GlobalTimerLo => "%globaltimer_lo".into(),
        SpecialReg::GlobalTimerHi => "%globaltimer_hi".into(),
        SpecialReg::WarpSz => "WARP_SZ".into(),
    }
}

fn address(m: &Module, f: &Function, a: &Address) -> String {
    let base = match a.base {
        AddrBase::Reg(r) => reg(f, r).to_string(),
        AddrBase::Symbol(s) => m.symbol(s).name.clone(),
        AddrBase::Abs => return format!("[{}]", a.offset),
    };
    match a.offset {
        0 => format!("[{base}]"),
        o if o < 0 => format!("[{base}+{o}]"),
        o => format!("[{base}+{o}]"),
    }
}

fn mods_suffix(mods: &Mods) -> String {
    let mut s = String::new();
    if let Some(r) = mods.rnd {
        s.push('.');
        s.push_str(round_name(r));
    }
    if mods.approx {
        s.push_str(".approx");
    }
    if mods.ftz {
        s.push_str(".ftz");
    }
    if mods.sat {
        s.push_str(".sat");
    }
    if mods.relu {
        s.push_str(".relu");
    }
    if mods.nan {
        s.push_str(".NaN");
    }
    if mods.xorsign_abs {
        s.push_str(".xorsign.abs");
    }
    s
}

fn round_name(r: Round) -> &'static str {
    match r {
        Round::Rn => "rn",
        Round::Rz => "rz",
        Round::Rm => "rm",
        Round::Rp => "rp",
        Round::Rni => "rni",
        Round::Rzi => "rzi",
        Round::Rmi => "rmi",
        Round::Rpi => "rpi",
        Round::Rna => "rna",
    }
}

/// Mnemonic of an arithmetic op (with its width modifier), lower case as in PTX.
pub fn arith_name(op: ArithOp) -> String {
    use ArithOp::*;
    let s = match op {
        Add => "add",
        Sub => "sub",
        Mul => "mul.lo",
        MulHi => "mul.hi",
        MulWide => "mul.wide",
        Mad => "mad.lo",
        MadHi => "mad.hi",
        MadWide => "mad.wide",
        Mul24Lo => "mul24.lo",
        Mul24Hi => "mul24.hi",
        Mad24Lo => "mad24.lo",
        Mad24Hi => "mad24.hi",
        Div => "div",
        Rem => "rem",
        Abs => "abs",
        Neg => "neg",
        Min => "min",
        Max => "max",
        And => "and",
        Or => "or",
        Xor => "xor",
        Not => "not",
        Cnot => "cnot",
        Shl => "shl",
        Shr => "shr",
        Bfe => "bfe",
        Brev => "brev",
        Popc => "popc",
        Clz => "clz",
        Prmt(PrmtMode::Default) => "prmt",
        Prmt(PrmtMode::F4e) => "prmt.f4e",
        Prmt(PrmtMode::B4e) => "prmt.b4e",
        Prmt(PrmtMode::Rc8) => "prmt.rc8",
        Prmt(PrmtMode::Ecl) => "prmt.ecl",
        Prmt(PrmtMode::Ecr) => "prmt.ecr",
        Prmt(PrmtMode::Rc16) => "prmt.rc16",
        Fma => "fma",
        Rcp => "rcp",
        Sqrt => "sqrt",
        Rsqrt => "rsqrt",
        Sin => "sin",
        Cos => "cos",
        Lg2 => "lg2",
        Ex2 => "ex2",
        Tanh => "tanh",
        Copysign => "copysign",
        Sad => "sad",
        Bmsk { clamp: true } => "bmsk.clamp",
        Bmsk { clamp: false } => "bmsk.wrap",
        Szext { clamp: true } => "szext.clamp",
        Szext { clamp: false } => "szext.wrap",
        Fns => "fns",
    };
    s.to_string()
}

fn cmp_name(c: Cmp) -> &'static str {
    match c {
        Cmp::Eq => "eq",
        Cmp::Ne => "ne",
        Cmp::Lt => "lt",
        Cmp::Le => "le",
        Cmp::Gt => "gt",
        Cmp::Ge => "ge",
        Cmp::Lo => "lo",
        Cmp::Ls => "ls",
        Cmp::Hi => "hi",
        Cmp::Hs => "hs",
        Cmp::Equ => "equ",
        Cmp::Neu => "neu",
        Cmp::Ltu => "ltu",
        Cmp::Leu => "leu",
        Cmp::Gtu => "gtu",
        Cmp::Geu => "geu",
        Cmp::Num => "num",
        Cmp::Nan => "nan",
    }
}

fn bool_name(b: BoolOp) -> &'static str {
    match b {
        BoolOp::And => "and",
        BoolOp::Or => "or",
        BoolOp::Xor => "xor",
    }
}

fn cop_name(c: Option<CacheOp>) -> &'static str {
    match c {
        None => "",
        Some(CacheOp::Ca) => ".ca",
        Some(CacheOp::Cg) => ".cg",
        Some(CacheOp::Cs) => ".cs",
        Some(CacheOp::Lu) => ".lu",
        Some(CacheOp::Cv) => ".cv",
        Some(CacheOp::Wb) => ".wb",
        Some(CacheOp::Wt) => ".wt",
    }
}

fn space_sfx(s: Space) -> String {
    match s {
        Space::Generic => String::new(),
        s => format!(".{}", s.name()),
    }
}

fn vec_sfx(n: u8) -> &'static str {
    match n {
        2 => ".v2",
        4 => ".v4",
        _ => "",
    }
}

/// One instruction as PTX text, with its guard.
pub fn inst_to_ptx(m: &Module, f: &Function, inst: &Inst) -> String {
    let g = match inst.guard {
        Some(Guard {
            reg: r,
            negated: true,
        }) => format!("@!{} ", reg(f, r)),
        Some(Guard {
            reg: r,
            negated: false,
        }) => format!("@{} ", reg(f, r)),
        None => String::new(),
    };
    format!("{g}{}", op_to_ptx(m, f, &inst.op))
}

fn op_to_ptx(m: &Module, f: &Function, op: &Op) -> String {
    if let Some(s) = hopper::to_ptx(m, f, op) {
        return s;
    }
    if let Some(s) = wgmma::to_ptx(m, f, op) {
        return s;
    }
    if let Some(s) = tensor::to_ptx(m, f, op) {
        return s;
    }
    let o = |x: &Operand, t: Type| operand(m, f, x, t);
    let r = |x: RegId| reg(f, x).to_string();
    // `d` or `d|p`: an optional second destination (setp, shfl, match)
    let pair = |d: RegId, p: Option<RegId>| match p {
        Some(p) => format!("{}|{}", reg(f, d), reg(f, p)),
        None => reg(f, d).to_string(),
    };
    let comb = |c: &Option<(BoolOp, Operand)>| match c {
        Some((b, p)) => (
            format!(".{}", bool_name(*b)),
            format!(", {}", o(p, Type::Pred)),
        ),
        None => (String::new(), String::new()),
    };
    match op {
        Op::Mov { ty, d, a } => format!("mov.{} {}, {};", ty.name(), r(*d), o(a, *ty)),
        Op::MovPack { ty, d, parts } => {
            let ps: Vec<String> = parts.as_slice().iter().map(|p| o(p, Type::B32)).collect();
            format!("mov.{} {}, {{{}}};", ty.name(), r(*d), ps.join(", "))
        }
        Op::MovUnpack { ty, d, a } => {
            let ds: Vec<String> = d.as_slice().iter().map(|x| r(*x)).collect();
            format!("mov.{} {{{}}}, {};", ty.name(), ds.join(", "), o(a, *ty))
        }
        Op::Arith {
            op,
            ty,
            mods,
            d,
            a,
            b,
            c,
        } => {
            let name = match (op, ty.is_float()) {
                (ArithOp::Mul, true) => "mul".to_string(),
                _ => arith_name(*op),
            };
            let srcs = [a, b, c];
            let mut s = format!("{name}{}.{} {}", mods_suffix(mods), ty.name(), r(*d));
            for (i, x) in srcs.iter().take(op.arity()).enumerate() {
                let t = match (op, i) {
                    (ArithOp::Shl | ArithOp::Shr, 1)
                    | (ArithOp::Bfe, 1 | 2)
                    | (ArithOp::Bmsk { .. } | ArithOp::Szext { .. } | ArithOp::Fns, 1) => Type::U32,
                    (ArithOp::Fns, 2) => Type::S32,
                    _ => *ty,
                };
                let _ = write!(s, ", {}", o(x, t));
            }
            s.push(';');
            s
        }
        Op::Carry {
            op,
            ty,
            cc_in,
            cc_out,
            d,
            a,
            b,
            c,
            ..
        } => {
            let (name, n) = match (op, cc_in) {
                (CarryOp::Add, false) => ("add", 2),
                (CarryOp::Add, true) => ("addc", 2),
                (CarryOp::Sub, false) => ("sub", 2),
                (CarryOp::Sub, true) => ("subc", 2),
                (CarryOp::MadLo, false) => ("mad.lo", 3),
                (CarryOp::MadLo, true) => ("madc.lo", 3),
                (CarryOp::MadHi, false) => ("mad.hi", 3),
                (CarryOp::MadHi, true) => ("madc.hi", 3),
            };
            let cc = if *cc_out { ".cc" } else { "" };
            let third = if n == 3 {
                format!(", {}", o(c, *ty))
            } else {
                String::new()
            };
            format!(
                "{name}{cc}.{} {}, {}, {}{third};",
                ty.name(),
                r(*d),
                o(a, *ty),
                o(b, *ty)
            )
        }
        Op::Bfind { ty, shiftamt, d, a } => {
            format!(
                "bfind{}.{} {}, {};",
                if *shiftamt { ".shiftamt" } else { "" },
                ty.name(),
                r(*d),
                o(a, *ty)
            )
        }
        Op::Shf {
            left,
            clamp,
            d,
            a,
            b,
            c,
        } => format!(
            "shf.{}.{}.b32 {}, {}, {}, {};",
            if *left { "l" } else { "r" },
            if *clamp { "clamp" } else { "wrap" },
            r(*d),
            o(a, Type::B32),
            o(b, Type::B32),
            o(c, Type::U32)
        ),
        Op::Bfi {
            ty,
            d,
            a,
            b,
            pos,
            len,
        } => format!(
            "bfi.{} {}, {}, {}, {}, {};",
            ty.name(),
            r(*d),
            o(a, *ty),
            o(b, *ty),
            o(pos, Type::U32),
            o(len, Type::U32)
        ),
        Op::Setp {
            cmp,
            ty,
            ftz,
            p,
            q,
            a,
            b,
            comb: c,
        } => {
            let (bo, cs) = comb(c);
            let dst = pair(*p, *q);
            let ftz = if *ftz { ".ftz" } else { "" };
            format!(
                "setp.{}{bo}{ftz}.{} {dst}, {}, {}{cs};",
                cmp_name(*cmp),
                ty.name(),
                o(a, *ty),
                o(b, *ty)
            )
        }
        Op::Set {
            cmp,
            dty,
            sty,
            ftz,
            d,
            a,
            b,
            comb: c,
        } => {
            let (bo, cs) = comb(c);
            let ftz = if *ftz { ".ftz" } else { "" };
            format!(
                "set.{}{bo}{ftz}.{}.{} {}, {}, {}{cs};",
                cmp_name(*cmp),
                dty.name(),
                sty.name(),
                r(*d),
                o(a, *sty),
                o(b, *sty)
            )
        }
        Op::Selp { ty, d, a, b, c } => format!(
            "selp.{} {}, {}, {}, {};",
            ty.name(),
            r(*d),
            o(a, *ty),
            o(b, *ty),
            o(c, Type::Pred)
        ),
        Op::Slct {
            dty,
            cty,
            ftz,
            d,
            a,
            b,
            c,
        } => format!(
            "slct{}.{}.{} {}, {}, {}, {};",
            if *ftz { ".ftz" } else { "" },
            dty.name(),
            cty.name(),
            r(*d),
            o(a, *dty),
            o(b, *dty),
            o(c, *cty)
        ),
        Op::Cvt {
            dty,
            sty,
            mods,
            d,
            a,
        } => {
            // PTX `cvt` has no .bN types: a .b32 destination from .f32 is the tf32 form.
            let tf32 = matches!(mods.rnd, Some(Round::Rna | Round::Rn | Round::Rz));
            let dname = if *dty == Type::B32 && *sty == Type::F32 && tf32 {
                "tf32"
            } else {
                dty.name()
            };
            format!(
                "cvt{}.{dname}.{} {}, {};",
                mods_suffix(mods),
                sty.name(),
                r(*d),
                o(a, *sty)
            )
        }
        Op::Cvta {
            to_space,
            space,
            ty,
            d,
            a,
        } => format!(
            "cvta{}.{}.{} {}, {};",
            if *to_space { ".to" } else { "" },
            space.name(),
            ty.name(),
            r(*d),
            o(a, *ty)
        ),
        Op::Ld {
            space,
            cop,
            volatile,
            ty,
            d,
            addr,
        } => {
            let ds: Vec<String> = d.as_slice().iter().map(|x| r(*x)).collect();
            let dst = if d.len > 1 {
                format!("{{{}}}", ds.join(", "))
            } else {
                ds[0].clone()
            };
            format!(
                "ld{}{}{}{}.{} {dst}, {};",
                if *volatile { ".volatile" } else { "" },
                space_sfx(*space),
                cop_name(*cop),
                vec_sfx(d.len),
                ty.name(),
                address(m, f, addr)
            )
        }
        Op::St {
            space,
            cop,
            volatile,
            ty,
            addr,
            src,
        } => {
            let ss: Vec<String> = src.as_slice().iter().map(|x| o(x, *ty)).collect();
            let s = if src.len > 1 {
                format!("{{{}}}", ss.join(", "))
            } else {
                ss[0].clone()
            };
            format!(
                "st{}{}{}{}.{} {}, {s};",
                if *volatile { ".volatile" } else { "" },
                space_sfx(*space),
                cop_name(*cop),
                vec_sfx(src.len),
                ty.name(),
                address(m, f, addr)
            )
        }
        Op::Atom {
            space,
            op,
            ty,
            d,
            addr,
            b,
            c,
        } => {
            let name = format!("{op:?}").to_lowercase();
            let cs = c.map(|c| format!(", {}", o(&c, *ty))).unwrap_or_default();
            match d {
                Some(d) => format!(
                    "atom{}.{name}.{} {}, {}, {}{cs};",
                    space_sfx(*space),
                    ty.name(),
                    r(*d),
                    address(m, f, addr),
                    o(b, *ty)
                ),
                None => format!(
                    "red{}.{name}.{} {}, {};",
                    space_sfx(*space),
                    ty.name(),
                    address(m, f, addr),
                    o(b, *ty)
                ),
            }
        }
        Op::Bar {
            kind,
            id,
            count,
            red,
            ..
        } => {
            let cnt = count
                .map(|c| format!(", {}", o(&c, Type::U32)))
                .unwrap_or_default();
            match (kind, red) {
                (BarKind::Red(k), Some((d, p))) => {
                    let (k, t) = match k {
                        BarRed::Popc => ("popc", "u32"),
                        BarRed::And => ("and", "pred"),
                        BarRed::Or => ("or", "pred"),
                    };
                    format!(
                        "bar.red.{k}.{t} {}, {}{cnt}, {};",
                        r(*d),
                        o(id, Type::U32),
                        o(p, Type::Pred)
                    )
                }
                (BarKind::Arrive, _) => format!("bar.arrive {}{cnt};", o(id, Type::U32)),
                _ => format!("bar.sync {}{cnt};", o(id, Type::U32)),
            }
        }
        Op::WarpSync { mask } => format!("bar.warp.sync {};", o(mask, Type::B32)),
        Op::Fence { level } => match level {
            FenceLevel::Cta => "membar.cta;".into(),
            FenceLevel::Gpu => "membar.gl;".into(),
            FenceLevel::Sys => "membar.sys;".into(),
        },
        Op::Shfl {
            mode,
            d,
            p,
            a,
            b,
            c,
            mask,
        } => {
            let dst = pair(*d, *p);
            format!(
                "shfl.sync.{}.b32 {dst}, {}, {}, {}, {};",
                format!("{mode:?}").to_lowercase(),
                o(a, Type::B32),
                o(b, Type::B32),
                o(c, Type::B32),
                o(mask, Type::B32)
            )
        }
        Op::Vote { mode, d, a, mask } => {
            let t = if *mode == VoteMode::Ballot {
                "b32"
            } else {
                "pred"
            };
            format!(
                "vote.sync.{}.{t} {}, {}, {};",
                format!("{mode:?}").to_lowercase(),
                r(*d),
                o(a, Type::Pred),
                o(mask, Type::B32)
            )
        }
        Op::Match {
            mode,
            ty,
            d,
            p,
            a,
            mask,
        } => {
            let dst = pair(*d, *p);
            format!(
                "match.{}.sync.{} {dst}, {}, {};",
                format!("{mode:?}").to_lowercase(),
                ty.name(),
                o(a, *ty),
                o(mask, Type::B32)
            )
        }
        Op::ActiveMask { d } => format!("activemask.b32 {};", r(*d)),
        Op::Redux { op, ty, d, a, mask } => format!(
            "redux.sync.{}.{} {}, {}, {};",
            format!("{op:?}").to_lowercase(),
            ty.name(),
            r(*d),
            o(a, *ty),
            o(mask, Type::B32)
        ),
        Op::Lop3 {
            lut,
            d,
            a,
            b,
            c,
            pred,
        } => {
            let abc = format!(
                "{}, {}, {}, 0x{lut:02X}",
                o(a, Type::B32),
                o(b, Type::B32),
                o(c, Type::B32)
            );
            match pred {
                Some((bop, p, q)) => format!(
                    "lop3.{}.b32 {}|{}, {abc}, {};",
                    bool_name(*bop),
                    r(*d),
                    r(*p),
                    o(q, Type::Pred)
                ),
                None => format!("lop3.b32 {}, {abc};", r(*d)),
            }
        }
        Op::Dot {
            kind,
            a_signed,
            b_signed,
            d,
            a,
            b,
            c,
        } => {
            let t = |s: bool| if s { Type::S32 } else { Type::U32 };
            let ct = if *a_signed || *b_signed {
                Type::S32
            } else {
                Type::U32
            };
            let name = match kind {
                DotKind::Dp4a => "dp4a",
                DotKind::Dp2aLo => "dp2a.lo",
                DotKind::Dp2aHi => "dp2a.hi",
            };
            format!(
                "{name}.{}.{} {}, {}, {}, {};",
                t(*a_signed).name(),
                t(*b_signed).name(),
                r(*d),
                o(a, t(*a_signed)),
                o(b, t(*b_signed)),
                o(c, ct)
            )
        }
        Op::Testp { op, ty, p, a } => {
            let name = match op {
                TestpOp::Finite => "finite",
                TestpOp::Infinite => "infinite",
                TestpOp::Number => "number",
                TestpOp::NotANumber => "notanumber",
                TestpOp::Normal => "normal",
                TestpOp::Subnormal => "subnormal",
            };
            format!("testp.{name}.{} {}, {};", ty.name(), r(*p), o(a, *ty))
        }
        Op::Isspacep { space, p, a } => {
            format!("isspacep.{} {}, {};", space.name(), r(*p), o(a, Type::U64))
        }
        Op::Nanosleep { t } => format!("nanosleep.u32 {};", o(t, Type::U32)),
        Op::Mma {
            shape,
            ty,
            d,
            a,
            b,
            c,
        } => {
            let v = |x: &RegVec| {
                let rs: Vec<String> = x.as_slice().iter().map(|y| r(*y)).collect();
                format!("{{{}}}", rs.join(", "))
            };
            format!(
                "mma.sync.aligned.{}.row.col.f32.{t}.{t}.f32 {}, {}, {}, {};",
                shape.name(),
                v(d),
                v(a),
                v(b),
                v(c),
                t = ty.name()
            )
        }
        Op::MmaInt {
            shape,
            aty,
            bty,
            satfinite,
            d,
            a,
            b,
            c,
        } => {
            let v = |x: &RegVec| {
                let rs: Vec<String> = x.as_slice().iter().map(|y| r(*y)).collect();
                format!("{{{}}}", rs.join(", "))
            };
            format!(
                "mma.sync.aligned.{}.row.col{}.s32.{}.{}.s32 {}, {}, {}, {};",
                shape.name(),
                if *satfinite { ".satfinite" } else { "" },
                aty.name(),
                bty.name(),
                v(d),
                v(a),
                v(b),
                v(c),
            )
        }
        Op::Ldmatrix {
            num,
            trans,
            space,
            d,
            addr,
        } => {
            let rs: Vec<String> = d.as_slice().iter().map(|y| r(*y)).collect();
            format!(
                "ldmatrix.sync.aligned.m8n8.x{num}{}{}.b16 {{{}}}, {};",
                if *trans { ".trans" } else { "" },
                space_sfx(*space),
                rs.join(", "),
                address(m, f, addr)
            )
        }
        Op::Stmatrix {
            num,
            trans,
            space,
            addr,
            src,
        } => {
            let rs: Vec<String> = src.as_slice().iter().map(|y| r(*y)).collect();
            format!(
                "stmatrix.sync.aligned.m8n8.x{num}{}{}.b16 {}, {{{}}};",
                if *trans { ".trans" } else { "" },
                space_sfx(*space),
                address(m, f, addr),
                rs.join(", ")
            )
        }
        Op::CpAsync {
            cop,
            size,
            dst,
            src,
            src_size,
        } => format!(
            "cp.async{}.shared.global {}, {}, {size}{};",
            cop_name(Some(*cop)),
            address(m, f, dst),
            address(m, f, src),
            match src_size {
                Some(s) => format!(", {}", o(s, Type::U32)),
                None => String::new(),
            }
        ),
        Op::CpAsyncCommit => "cp.async.commit_group;".to_string(),
        Op::CpAsyncWait { n: Some(n) } => format!("cp.async.wait_group {n};"),
        Op::CpAsyncWait { n: None } => "cp.async.wait_all;".to_string(),
        Op::MbarInit { .. }
        | Op::MbarInval { .. }
        | Op::MbarArrive { .. }
        | Op::MbarTx { .. }
        | Op::MbarWait { .. }
        | Op::MbarPendingCount { .. }
        | Op::CpAsyncMbarArrive { .. }
        | Op::FenceProxyAsync { .. }
        | Op::ElectSync { .. }
        | Op::Setmaxnreg { .. }
        | Op::CpAsyncBulk { .. }
        | Op::CpAsyncBulkTensor { .. }
        | Op::CpAsyncBulkCommit
        | Op::CpAsyncBulkWait { .. }
        | Op::BarrierCluster { .. }
        | Op::Mapa { .. } => unreachable!("printed by `hopper::to_ptx`"),
        Op::Wgmma(_) | Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } => {
            unreachable!("printed by `wgmma::to_ptx`")
        }
        Op::MmaM884 { .. } | Op::WmmaLoad { .. } | Op::WmmaStore { .. } | Op::WmmaMma { .. } => {
            unreachable!("printed by `tensor::to_ptx`")
        }
        Op::CvtPack { dty, mods, d, a, b } => format!(
            "cvt{}.{}.f32 {}, {}, {};",
            mods_suffix(mods),
            dty.name(),
            r(*d),
            o(a, Type::F32),
            o(b, Type::F32)
        ),
        Op::Bra { target, uni } => format!(
            "bra{} {};",
            if *uni { ".uni" } else { "" },
            label(f, *target)
        ),
        Op::BrxIdx {
            index,
            targets,
            uni,
        } => {
            let ts: Vec<String> = targets.iter().map(|t| label(f, *t)).collect();
            format!(
                "brx.idx{} {}, [{}];",
                if *uni { ".uni" } else { "" },
                o(index, Type::U32),
                ts.join(", ")
            )
        }
        Op::Call {
            callee,
            rets,
            args,
            uni,
        } => {
            let name = match callee {
                Callee::Direct(id) => m.function(*id).name.clone(),
                Callee::Indirect { reg: x, .. } => r(*x),
            };
            let rets: Vec<String> = rets.iter().map(|s| m.symbol(*s).name.clone()).collect();
            let args: Vec<String> = args.iter().map(|a| o(a, Type::B32)).collect();
            let mut s = format!("call{} ", if *uni { ".uni" } else { "" });
            if !rets.is_empty() {
                let _ = write!(s, "({}), ", rets.join(", "));
            }
            s.push_str(&name);
            if !args.is_empty() {
                let _ = write!(s, ", ({})", args.join(", "));
            }
            s.push(';');
            s
        }
        Op::Ret { uni } => format!("ret{};", if *uni { ".uni" } else { "" }),
        Op::Exit => "exit;".into(),
        Op::Trap => "trap;".into(),
        Op::Ssy { target } => format!("ssy {};", label(f, *target)),
        Op::Sync => "sync;".into(),
        Op::PreBrk { target } => format!("preBrk {};", label(f, *target)),
        Op::Brk => "brk;".into(),
        Op::PreRet { target } => format!("preRet {};", label(f, *target)),
        Op::Nop => "prefetch.global.L2 [0];".into(),
    }
}

/// `.reg` declarations of `regs` as compact as the source's, in the same order (register ids
/// follow declaration order, so a reprinted function parses to the same ids): a run of
/// `%r0, %r1, …, %r{K-1}` of one type is `%r<K>`; other consecutive registers of one type share
/// a line.
pub fn reg_declarations(regs: &[RegInfo]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < regs.len() {
        let ty = regs[i].ty;
        let mut names = Vec::new();
        while i < regs.len() && regs[i].ty == ty {
            // A `%p<K>` run: numbers 0, 1, … of one prefix.
            let run = numbered_run(&regs[i..]);
            if run.1 > 1 {
                names.push(format!("{}<{}>", run.0, run.1));
                i += run.1;
            } else {
                names.push(regs[i].name.clone());
                i += 1;
            }
        }
        out.push(format!(".reg .{} {};", ty.name(), names.join(", ")));
    }
    out
}

/// The prefix and length of the run `prefix0, prefix1, …` of one type at the start of `regs`
/// (length 0 when the first is not `prefix0`).
fn numbered_run(regs: &[RegInfo]) -> (&str, usize) {
    let first = &regs[0].name;
    let Some(prefix) = first.strip_suffix('0') else {
        return ("", 0);
    };
    if prefix.is_empty() || prefix.ends_with(|c: char| c.is_ascii_digit()) {
        return ("", 0);
    }
    let n = regs
        .iter()
        .enumerate()
        .take_while(|(k, r)| r.ty == regs[0].ty && r.name == format!("{prefix}{k}"))
        .count();
    (prefix, n)
}
