//! Parser tests for the sm_70–sm_90 forms: each new instruction, modifier, special register and
//! `WARP_SZ` parses to the expected IR and prints back to text that parses to the same IR;
//! each form that ptxas rejects (a missing or illegal rounding modifier, a modifier on the
//! wrong type) is rejected with an error naming file:line:col.

mod common;

use gpusim_isa::{
    parse_module, print, ArithOp, BoolOp, DotKind, Module, Op, Operand, ReduxOp, Round, Space,
    SpecialReg, TestpOp, Type,
};

/// A kernel whose body is `lines`, one instruction per line starting at line 14, column 3.
fn module(lines: &[&str]) -> String {
    let mut s = String::from(
        ".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\
         \x20 .reg .pred %p<4>;\n  .reg .b16 %h<4>;\n  .reg .b32 %r<8>;\n  .reg .f32 %f<4>;\n\
         \x20 .reg .f64 %fd<4>;\n  .reg .b64 %rd<4>;\n  .shared .b32 sh[4];\n  ld.param.u64 %rd1, [p];\n",
    );
    for l in lines {
        s.push_str("  ");
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("  ret;\n}\n");
    s
}

const FIRST_LINE: u32 = 14;

fn parse(lines: &[&str]) -> Module {
    parse_module("new.ptx", &module(lines)).unwrap_or_else(|e| panic!("{e}"))
}

/// The ops of the listed instructions (after the leading ld.param).
fn ops(m: &Module) -> Vec<Op> {
    let body = &m.functions[0].body;
    body[1..body.len() - 1]
        .iter()
        .map(|i| i.op.clone())
        .collect()
}

const ACCEPTED: &[&str] = &[
    "lop3.b32 %r1, %r2, %r3, %r4, 0x96;",
    "lop3.b32 %r1, %r2, %r3, %r4, 0x196;",
    "lop3.or.b32 %r1|%p1, %r2, %r3, %r4, 0x3f, %p2;",
    "lop3.and.b32 _|%p1, %r2, %r3, %r4, 0x80, !%p2;",
    "dp4a.u32.u32 %r1, %r2, %r3, %r4;",
    "dp4a.s32.u32 %r1, %r2, %r3, -5;",
    "dp2a.lo.u32.s32 %r1, %r2, %r3, %r4;",
    "dp2a.hi.s32.s32 %r1, %r2, %r3, %r4;",
    "redux.sync.add.u32 %r1, %r2, 0xffffffff;",
    "redux.sync.min.s32 %r1, %r2, %r3;",
    "redux.sync.max.u32 %r1, %r2, %r3;",
    "redux.sync.and.b32 %r1, %r2, %r3;",
    "redux.sync.or.b32 %r1, %r2, %r3;",
    "redux.sync.xor.b32 %r1, %r2, %r3;",
    "testp.finite.f32 %p1, %f1;",
    "testp.infinite.f64 %p1, %fd1;",
    "testp.number.f32 %p1, %f1;",
    "testp.notanumber.f64 %p1, %fd1;",
    "testp.normal.f32 %p1, %f1;",
    "testp.subnormal.f64 %p1, %fd1;",
    "isspacep.global %p1, %rd1;",
    "isspacep.shared %p1, %rd1;",
    "isspacep.shared::cta %p1, %rd1;",
    "isspacep.shared::cluster %p1, %rd1;",
    "isspacep.local %p1, %rd1;",
    "isspacep.const %p1, %rd1;",
    "isspacep.param::entry %p1, %rd1;",
    "nanosleep.u32 %r1;",
    "nanosleep.u32 100;",
    "bmsk.clamp.b32 %r1, %r2, %r3;",
    "bmsk.wrap.b32 %r1, 1, 2;",
    "szext.clamp.s32 %r1, %r2, %r3;",
    "szext.wrap.u32 %r1, %r2, 8;",
    "fns.b32 %r1, %r2, %r3, %r4;",
    "fns.b32 %r1, 0xaaaaaaaa, 3, -1;",
    "max.NaN.f32 %f1, %f2, %f3;",
    "min.ftz.NaN.f32 %f1, %f2, %f3;",
    "min.xorsign.abs.f32 %f1, %f2, %f3;",
    "max.NaN.xorsign.abs.f16 %h1, %h2, %h3;",
    "min.NaN.bf16x2 %r1, %r2, %r3;",
    "max.f16.NaN %h1, %h2, %h3;",
    "max.relu.s32 %r1, %r2, %r3;",
    "max.s32.relu %r1, %r2, %r3;",
    "min.relu.s16x2 %r1, %r2, %r3;",
    "max.u16x2 %r1, %r2, %r3;",
    "min.s16x2 %r1, %r2, %r3;",
    "fma.rn.relu.f16 %h1, %h2, %h3, %h1;",
    "fma.rn.ftz.relu.f16x2 %r1, %r2, %r3, %r4;",
    "fma.rn.relu.bf16 %h1, %h2, %h3, %h1;",
    "fma.rn.relu.bf16x2 %r1, %r2, %r3, %r4;",
    "cvt.rn.relu.f16.f32 %h1, %f1;",
    "cvt.rz.relu.bf16.f32 %h1, %f1;",
    "cvt.rn.f16x2.f32 %r1, %f1, %f2;",
    "cvt.rz.relu.f16x2.f32 %r1, %f1, 0f3F800000;",
    "cvt.rn.bf16x2.f32 %r1, %f1, %f2;",
    "cvt.rna.tf32.f32 %r1, %f1;",
    "cvt.rn.tf32.f32 %r1, %f1;",
    "cvt.rz.relu.tf32.f32 %r1, %f1;",
    "mov.u32 %r1, %clock_hi;",
    "mov.u32 %r1, %globaltimer_lo;",
    "mov.u32 %r1, %globaltimer_hi;",
    "mov.u32 %r1, WARP_SZ;",
    "add.u32 %r1, %r2, WARP_SZ;",
    "ld.shared::cta.u32 %r1, [sh];",
    "cvt.rn.f32.s16 %f1, %h1;",
    "cvt.rni.s32.f32 %r1, %f1;",
    "cvt.rn.f32.f64 %f1, %fd1;",
    "cvt.f64.f32 %fd1, %f1;",
    "cvt.rzi.f32.f32 %f1, %f1;",
    "cvt.f32.f32 %f1, %f1;",
    "cvt.bf16.f16 %h1, %h2;",
    "cvt.rn.f16.bf16 %h1, %h2;",
    "cvt.s32.s16 %r1, %h1;",
    "mad.rn.f32 %f1, %f2, %f3, %f1;",
    "div.full.f32 %f1, %f2, %f3;",
    "rcp.approx.ftz.f64 %fd1, %fd2;",
];

#[test]
fn every_new_form_parses_and_prints_back() {
    let m = parse(ACCEPTED);
    let first = ops(&m);
    assert_eq!(first.len(), ACCEPTED.len());
    let f = &m.functions[0];
    let printed: Vec<String> = f.body[1..f.body.len() - 1]
        .iter()
        .map(|i| print::inst_to_ptx(&m, f, i))
        .collect();
    let refs: Vec<&str> = printed.iter().map(String::as_str).collect();
    let again = parse(&refs);
    for (i, (a, b)) in first.iter().zip(ops(&again)).enumerate() {
        assert_eq!(
            *a, b,
            "`{}` printed as `{}` re-parses differently",
            ACCEPTED[i], printed[i]
        );
    }
}

#[test]
fn new_forms_decode_to_the_expected_ir() {
    let m = parse(&[
        "lop3.or.b32 %r1|%p1, %r2, %r3, %r4, 0x13f, !%p2;",
        "dp2a.hi.s32.u32 %r1, %r2, %r3, %r4;",
        "redux.sync.min.s32 %r1, %r2, 0xff;",
        "testp.subnormal.f64 %p1, %fd1;",
        "isspacep.shared::cluster %p1, %rd1;",
        "nanosleep.u32 42;",
        "bmsk.clamp.b32 %r1, %r2, %r3;",
        "max.NaN.xorsign.abs.f16 %h1, %h2, %h3;",
        "fma.rn.relu.bf16x2 %r1, %r2, %r3, %r4;",
        "cvt.rz.relu.f16x2.f32 %r1, %f1, %f2;",
        "cvt.rna.tf32.f32 %r1, %f1;",
        "mov.u32 %r1, WARP_SZ;",
        "mov.u32 %r1, %clock_hi;",
    ]);
    let o = ops(&m);
    let Op::Lop3 {
        lut: 0x3f,
        pred: Some((BoolOp::Or, _, Operand::NotReg(_))),
        ..
    } = o[0]
    else {
        panic!("{:?}", o[0])
    };
    assert!(matches!(
        o[1],
        Op::Dot {
            kind: DotKind::Dp2aHi,
            a_signed: true,
            b_signed: false,
            ..
        }
    ));
    assert!(matches!(
        o[2],
        Op::Redux {
            op: ReduxOp::Min,
            ty: Type::S32,
            mask: Operand::Imm(0xff),
            ..
        }
    ));
    assert!(matches!(
        o[3],
        Op::Testp {
            op: TestpOp::Subnormal,
            ty: Type::F64,
            ..
        }
    ));
    assert!(matches!(
        o[4],
        Op::Isspacep {
            space: Space::Shared,
            ..
        }
    ));
    assert!(matches!(
        o[5],
        Op::Nanosleep {
            t: Operand::Imm(42)
        }
    ));
    assert!(matches!(
        o[6],
        Op::Arith {
            op: ArithOp::Bmsk { clamp: true },
            ty: Type::B32,
            ..
        }
    ));
    let Op::Arith {
        op: ArithOp::Max,
        ty: Type::F16,
        mods,
        ..
    } = o[7]
    else {
        panic!("{:?}", o[7])
    };
    assert!(mods.nan && mods.xorsign_abs && !mods.relu);
    let Op::Arith {
        op: ArithOp::Fma,
        ty: Type::Bf16x2,
        mods,
        ..
    } = o[8]
    else {
        panic!("{:?}", o[8])
    };
    assert!(mods.relu && mods.rnd == Some(Round::Rn));
    let Op::CvtPack {
        dty: Type::F16x2,
        mods,
        ..
    } = o[9]
    else {
        panic!("{:?}", o[9])
    };
    assert!(mods.relu && mods.rnd == Some(Round::Rz));
    let Op::Cvt {
        dty: Type::B32,
        sty: Type::F32,
        mods,
        ..
    } = o[10]
    else {
        panic!("{:?}", o[10])
    };
    assert_eq!(mods.rnd, Some(Round::Rna));
    assert!(matches!(
        o[11],
        Op::Mov {
            a: Operand::Special(SpecialReg::WarpSz),
            ..
        }
    ));
    assert!(matches!(
        o[12],
        Op::Mov {
            a: Operand::Special(SpecialReg::ClockHi),
            ..
        }
    ));
}

/// (instruction, part of the message, the text the error points at: "" for the instruction
/// itself, at column 3).
const REJECTED: &[(&str, &str, &str)] = &[
    // int → float needs .rn/.rz/.rm/.rp; float → int needs .rni/.rzi/.rmi/.rpi.
    ("cvt.f32.s16 %f1, %h1;", "needs a float", ""),
    ("cvt.f32.s32 %f1, %r1;", "needs a float", ""),
    ("cvt.s32.f32 %r1, %f1;", "needs an integer", ""),
    ("cvt.sat.s32.f32 %r1, %f1;", "needs an integer", ""),
    ("cvt.s32.f16 %r1, %h1;", "needs an integer", ""),
    // narrowing float → float needs a float rounding.
    ("cvt.f32.f64 %f1, %fd1;", "needs a float", ""),
    ("cvt.f16.f32 %h1, %f1;", "needs a float", ""),
    // and the illegal ones.
    (
        "cvt.rn.s32.f32 %r1, %f1;",
        "does not take the rounding modifier `.rn`",
        "",
    ),
    (
        "cvt.rni.f32.s32 %f1, %r1;",
        "does not take the rounding modifier `.rni`",
        "",
    ),
    (
        "cvt.rn.f64.f32 %fd1, %f1;",
        "does not take the rounding modifier `.rn`",
        "",
    ),
    (
        "cvt.rn.f32.f32 %f1, %f1;",
        "does not take the rounding modifier `.rn`",
        "",
    ),
    (
        "cvt.rzi.s32.s16 %r1, %h1;",
        "does not take the rounding modifier `.rzi`",
        "",
    ),
    (
        "cvt.rni.f16.f32 %h1, %f1;",
        "does not take the rounding modifier `.rni`",
        "",
    ),
    (
        "cvt.rna.f16.f32 %h1, %f1;",
        "does not take the rounding modifier `.rna`",
        "",
    ),
    (
        "cvt.rm.f16x2.f32 %r1, %f1, %f2;",
        "does not take the rounding modifier `.rm`",
        "",
    ),
    ("cvt.f16x2.f32 %r1, %f1, %f2;", "needs an .rn or .rz", ""),
    ("cvt.tf32.f32 %r1, %f1;", "needs an .rna, .rn or .rz", ""),
    ("cvt.u32.b32 %r1, %r2;", "not .u32.b32", ""),
    (
        "cvt.relu.f32.f32 %f1, %f1;",
        "unsupported modifier `.relu`",
        ".relu",
    ),
    // float mad/fma need a rounding modifier; div/rcp/sqrt one or .approx.
    (
        "mad.f32 %f1, %f2, %f3, %f1;",
        "`mad.f32` needs a rounding modifier",
        "",
    ),
    (
        "mad.f64 %fd1, %fd2, %fd3, %fd1;",
        "`mad.f64` needs a rounding modifier",
        "",
    ),
    (
        "fma.f32 %f1, %f2, %f3, %f1;",
        "`fma.f32` needs a rounding modifier",
        "",
    ),
    (
        "fma.f16 %h1, %h2, %h3, %h1;",
        "`fma.f16` needs a rounding modifier",
        "",
    ),
    ("div.f32 %f1, %f2, %f3;", "or .approx", ""),
    ("sqrt.f64 %fd1, %fd2;", "or .approx", ""),
    ("rcp.f32 %f1, %f2;", "or .approx", ""),
    // modifiers on the wrong type or combination.
    (
        "max.NaN.f64 %fd1, %fd2, %fd3;",
        "unsupported modifier `.NaN`",
        ".NaN",
    ),
    (
        "max.relu.u32 %r1, %r2, %r3;",
        "unsupported modifier `.relu`",
        ".relu",
    ),
    (
        "min.xorsign.f32 %f1, %f2, %f3;",
        "unsupported modifier `.xorsign`",
        ".xorsign",
    ),
    (
        "fma.rn.relu.f32 %f1, %f2, %f3, %f1;",
        "unsupported modifier `.relu`",
        ".relu",
    ),
    (
        "fma.rn.sat.relu.f16 %h1, %h2, %h3, %h1;",
        "`.relu` or `.sat`, not both",
        "",
    ),
    // malformed new instructions.
    (
        "lop3.b32 %r1, %r2, %r3, %r4, %r5;",
        "immLut must be an integer constant",
        "%r5;",
    ),
    (
        "lop3.b32 %r1|%p1, %r2, %r3, %r4, 1;",
        "exactly when it has .or or .and",
        "%r1|",
    ),
    ("dp2a.u32.u32 %r1, %r2, %r3, %r4;", "needs .lo or .hi", ""),
    ("redux.sync.add.b32 %r1, %r2, -1;", "takes .u32 or .s32", ""),
    ("redux.sync.xor.u32 %r1, %r2, -1;", "takes .b32", ""),
    ("redux.add.u32 %r1, %r2, -1;", "needs .sync", ""),
    ("testp.normal.f16 %p1, %h1;", "takes .f32 or .f64", ""),
    ("bmsk.b32 %r1, %r2, %r3;", "needs .clamp or .wrap", ""),
    ("szext.wrap.b32 %r1, %r2, %r3;", "takes .u32 or .s32", ""),
];

#[test]
fn ptxas_rejections_are_errors_with_locations() {
    common::assert_located_errors(REJECTED, "add.u32 %r1, %r1, 1;", module, FIRST_LINE);
}

#[test]
fn sm1x_keeps_the_old_rounding_defaults() {
    let src = module(&["mad.f32 %f1, %f2, %f3, %f1;", "cvt.f32.s32 %f1, %r1;"])
        .replace(".target sm_90", ".target sm_13");
    parse_module("old.ptx", &src).unwrap_or_else(|e| panic!("{e}"));
}
