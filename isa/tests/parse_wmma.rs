//! Parser tests for `mma.sync.aligned.m8n8k4` (PTX ISA 9.0 §9.7.14.5.14) and the `wmma`
//! family (§9.7.14.4): the supported forms decode to the expected IR and print back to text
//! that parses to the same IR; wrong register counts, shapes, types and layouts are errors
//! naming file:line:col.

mod common;

use gpusim_isa::{
    parse_module, print, AccType, MatLayout, Module, Op, Operand, Space, WmmaFrag, WmmaShape,
    WmmaType,
};

/// A kernel whose body is `lines`, one instruction per line starting at line 11, column 3.
fn module(lines: &[&str]) -> String {
    let mut s = String::from(
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\
         \x20 .reg .b32 %a<8>;\n  .reg .b32 %b<8>;\n  .reg .f32 %c<8>;\n  .reg .f32 %d<8>;\n\
         \x20 .reg .b64 %p;\n",
    );
    for l in lines {
        s.push_str("  ");
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("  ret;\n}\n");
    s
}

const FIRST_LINE: u32 = 11;

/// `{%x0, ..., %x(n-1)}`.
fn v(x: &str, n: usize) -> String {
    let rs: Vec<String> = (0..n).map(|i| format!("%{x}{i}")).collect();
    format!("{{{}}}", rs.join(", "))
}

fn parse(lines: &[&str]) -> Module {
    parse_module("wmma.ptx", &module(lines)).unwrap_or_else(|e| panic!("{e}"))
}

/// Parses `line`, checks that its printed form parses to the same op, and returns the op.
fn round_trip(line: &str) -> Op {
    let m = parse(&[line]);
    let f = &m.functions[0];
    let op = f.body[0].op.clone();
    let text = print::inst_to_ptx(&m, f, &f.body[0]);
    let again = parse(&[&text]);
    assert_eq!(again.functions[0].body[0].op, op, "{line} → {text}");
    op
}

#[test]
fn m8n8k4_forms_decode_and_print_back() {
    for (dt, ct) in [
        (AccType::F32, AccType::F32),
        (AccType::F16, AccType::F16),
        (AccType::F32, AccType::F16),
        (AccType::F16, AccType::F32),
    ] {
        for (al, bl) in [
            (MatLayout::Row, MatLayout::Col),
            (MatLayout::Col, MatLayout::Row),
        ] {
            let n = |t: AccType| if t == AccType::F16 { 4 } else { 8 };
            let line = format!(
                "mma.sync.aligned.m8n8k4.{}.{}.{}.f16.f16.{} {}, {}, {}, {};",
                al.name(),
                bl.name(),
                dt.name(),
                ct.name(),
                v("d", n(dt)),
                v("a", 2),
                v("b", 2),
                v("c", n(ct))
            );
            let Op::MmaM884 {
                alayout,
                blayout,
                dty,
                cty,
                d,
                a,
                b,
                c,
            } = round_trip(&line)
            else {
                panic!("`{line}` is not mma.m8n8k4");
            };
            assert_eq!((alayout, blayout, dty, cty), (al, bl, dt, ct), "{line}");
            assert_eq!(
                (d.len as usize, a.len, b.len, c.len as usize),
                (n(dt), 2, 2, n(ct))
            );
        }
    }
}

#[test]
fn wmma_loads_and_stores_decode_and_print_back() {
    // (instruction, frag (None = store), layout, shape, space, type, registers, stride given)
    let cases = [
        (
            format!(
                "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {}, [%p];",
                v("a", 8)
            ),
            Some(WmmaFrag::A),
            MatLayout::Row,
            WmmaShape::M16n16k16,
            Space::Global,
            WmmaType::F16,
            8,
            false,
        ),
        (
            // shape before layout, as in the PTX ISA's own examples
            format!(
                "wmma.load.b.sync.aligned.m16n16k16.shared.col.f16 {}, [%p+64], 32;",
                v("b", 8)
            ),
            Some(WmmaFrag::B),
            MatLayout::Col,
            WmmaShape::M16n16k16,
            Space::Shared,
            WmmaType::F16,
            8,
            true,
        ),
        (
            format!(
                "wmma.load.c.sync.aligned.col.m32n8k16.f32 {}, [%p], %a0;",
                v("c", 8)
            ),
            Some(WmmaFrag::C),
            MatLayout::Col,
            WmmaShape::M32n8k16,
            Space::Generic,
            WmmaType::F32,
            8,
            true,
        ),
        (
            format!(
                "wmma.load.a.sync.aligned.row.m8n32k16.shared::cta.bf16 {}, [%p];",
                v("a", 2)
            ),
            Some(WmmaFrag::A),
            MatLayout::Row,
            WmmaShape::M8n32k16,
            Space::Shared,
            WmmaType::Bf16,
            2,
            false,
        ),
        (
            format!(
                "wmma.load.b.sync.aligned.row.m16n16k8.global.tf32 {}, [%p];",
                v("b", 4)
            ),
            Some(WmmaFrag::B),
            MatLayout::Row,
            WmmaShape::M16n16k8,
            Space::Global,
            WmmaType::Tf32,
            4,
            false,
        ),
        (
            format!(
                "wmma.load.a.sync.aligned.row.m32n8k16.global.u8 {}, [%p];",
                v("a", 4)
            ),
            Some(WmmaFrag::A),
            MatLayout::Row,
            WmmaShape::M32n8k16,
            Space::Global,
            WmmaType::U8,
            4,
            false,
        ),
        (
            format!(
                "wmma.store.d.sync.aligned.row.m16n16k16.global.f16 [%p], {}, 24;",
                v("d", 4)
            ),
            None,
            MatLayout::Row,
            WmmaShape::M16n16k16,
            Space::Global,
            WmmaType::F16,
            4,
            true,
        ),
        (
            format!(
                "wmma.store.d.sync.aligned.col.m8n32k16.s32 [%p], {};",
                v("d", 8)
            ),
            None,
            MatLayout::Col,
            WmmaShape::M8n32k16,
            Space::Generic,
            WmmaType::S32,
            8,
            false,
        ),
    ];
    for (line, frag, lay, shape, space, ty, n, has_stride) in cases {
        match (round_trip(&line), frag) {
            (
                Op::WmmaLoad {
                    frag: f,
                    layout,
                    shape: s,
                    space: sp,
                    ty: t,
                    d,
                    stride,
                    ..
                },
                Some(want),
            ) => {
                assert_eq!(
                    (f, layout, s, sp, t),
                    (want, lay, shape, space, ty),
                    "{line}"
                );
                assert_eq!(
                    (d.len as usize, stride.is_some()),
                    (n, has_stride),
                    "{line}"
                );
            }
            (
                Op::WmmaStore {
                    layout,
                    shape: s,
                    space: sp,
                    ty: t,
                    src,
                    stride,
                    ..
                },
                None,
            ) => {
                assert_eq!((layout, s, sp, t), (lay, shape, space, ty), "{line}");
                assert_eq!(
                    (src.len as usize, stride.is_some()),
                    (n, has_stride),
                    "{line}"
                );
            }
            (op, _) => panic!("`{line}` parsed to {op:?}"),
        }
    }
    // An immediate stride is kept as its bits.
    let op = round_trip(&format!(
        "wmma.load.b.sync.aligned.m16n16k16.shared.col.f16 {}, [%p], 32;",
        v("b", 8)
    ));
    let Op::WmmaLoad { stride, .. } = op else {
        panic!("not a load")
    };
    assert_eq!(stride, Some(Operand::Imm(32)));
}

#[test]
fn wmma_mma_forms_decode_and_print_back() {
    use WmmaType::*;
    // (types text, shape, ab, dty, cty, satfinite, a regs, b regs)
    let cases = [
        (
            "m16n16k16.f32.f32",
            WmmaShape::M16n16k16,
            F16,
            F32,
            F32,
            false,
            8,
            8,
        ),
        (
            "m16n16k16.f16.f32",
            WmmaShape::M16n16k16,
            F16,
            F16,
            F32,
            false,
            8,
            8,
        ),
        (
            "m32n8k16.f16.f16",
            WmmaShape::M32n8k16,
            F16,
            F16,
            F16,
            false,
            8,
            8,
        ),
        (
            "m8n32k16.f32.f16.satfinite",
            WmmaShape::M8n32k16,
            F16,
            F32,
            F16,
            true,
            8,
            8,
        ),
        (
            "m16n16k16.f32.bf16.bf16.f32",
            WmmaShape::M16n16k16,
            Bf16,
            F32,
            F32,
            false,
            4,
            4,
        ),
        (
            "m32n8k16.f32.bf16.bf16.f32",
            WmmaShape::M32n8k16,
            Bf16,
            F32,
            F32,
            false,
            8,
            2,
        ),
        (
            "m16n16k8.f32.tf32.tf32.f32",
            WmmaShape::M16n16k8,
            Tf32,
            F32,
            F32,
            false,
            4,
            4,
        ),
        (
            "m16n16k16.s32.s8.s8.s32",
            WmmaShape::M16n16k16,
            S8,
            S32,
            S32,
            false,
            2,
            2,
        ),
        (
            "m8n32k16.s32.u8.u8.s32.satfinite",
            WmmaShape::M8n32k16,
            U8,
            S32,
            S32,
            true,
            1,
            4,
        ),
    ];
    for (types, shape, ab, dt, ct, sat, na, nb) in cases {
        let n = |t: WmmaType| if t == F16 { 4 } else { 8 };
        let line = format!(
            "wmma.mma.sync.aligned.col.row.{types} {}, {}, {}, {};",
            v("d", n(dt)),
            v("a", na),
            v("b", nb),
            v("c", n(ct))
        );
        let Op::WmmaMma {
            alayout,
            blayout,
            shape: s,
            ab: t,
            dty,
            cty,
            satfinite,
            a,
            b,
            ..
        } = round_trip(&line)
        else {
            panic!("`{line}` is not wmma.mma");
        };
        assert_eq!(
            (alayout, blayout),
            (MatLayout::Col, MatLayout::Row),
            "{line}"
        );
        assert_eq!(
            (s, t, dty, cty, satfinite),
            (shape, ab, dt, ct, sat),
            "{line}"
        );
        assert_eq!((a.len as usize, b.len as usize), (na, nb), "{line}");
    }
}

#[test]
fn unsupported_forms_are_errors_with_locations() {
    let (a8, b8, c8, d8) = (v("a", 8), v("b", 8), v("c", 8), v("d", 8));
    let a4 = v("a", 4);
    let cases: Vec<(String, &str, &str)> = vec![
        (
            format!("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {d8}, {}, {}, {};", v("a", 2), v("b", 2), v("c", 4)),
            "operand c takes 8 registers here, found 4",
            "{%c0, %c1, %c2, %c3}",
        ),
        (
            format!("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {}, {a4}, {}, {};", v("d", 4), v("b", 2), v("c", 4)),
            "operand a takes 2 registers here, found 4",
            "{%a0, %a1, %a2, %a3}",
        ),
        (
            format!("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {d8}, {a8}, {b8}, {c8};"),
            "unsupported `mma.m8n8k4` form .row.col.f64.f64.f64.f64",
            "",
        ),
        (
            format!("wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {a4}, [%p];"),
            "`wmma.load` operand r takes 8 registers here, found 4",
            "{%a0",
        ),
        (
            format!("wmma.load.a.sync.aligned.row.m8n8k32.global.s4 {a4}, [%p];"),
            "unsupported `wmma` shape",
            "",
        ),
        (
            format!("wmma.load.a.sync.aligned.row.m16n16k8.global.f16 {a8}, [%p];"),
            "`wmma.load` of matrix a is not defined for .m16n16k8 with .f16",
            "",
        ),
        (
            format!("wmma.load.c.sync.aligned.row.m16n16k16.global.bf16 {c8}, [%p];"),
            "not defined for .m16n16k16 with .bf16",
            "",
        ),
        (
            format!("wmma.load.a.sync.aligned.m16n16k16.global.f16 {a8}, [%p];"),
            "needs .row or .col",
            "",
        ),
        (
            format!("wmma.load.a.aligned.row.m16n16k16.f16 {a8}, [%p];"),
            "needs .sync and .aligned",
            "",
        ),
        (
            format!("wmma.load.a.sync.aligned.row.m16n16k16.f64 {a8}, [%p];"),
            "unsupported `wmma.load` element type .f64",
            "",
        ),
        (
            format!("wmma.load.a.sync.aligned.row.m16n16k16.f16 {a8}, [%p], 16, 16;"),
            "takes 2 or 3 operands",
            "",
        ),
        (
            format!("wmma.store.d.sync.aligned.row.m16n16k16.f16 [%p], {d8};"),
            "`wmma.store` operand r takes 4 registers here, found 8",
            "{%d0",
        ),
        (
            format!("wmma.store.sync.aligned.row.m16n16k16.f32 [%p], {d8};"),
            "`wmma.store` needs .d",
            "",
        ),
        (
            format!("wmma.store.d.sync.aligned.row.m16n16k16.u8 [%p], {d8};"),
            "`wmma.store` of matrix d is not defined for .m16n16k16 with .u8",
            "",
        ),
        (
            format!("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {d8}, {a8}, {a4}, {c8};"),
            "`wmma.mma` operand b takes 8 registers here, found 4",
            "{%a0, %a1, %a2, %a3}",
        ),
        (
            format!("wmma.mma.sync.aligned.row.col.m16n16k16.f32.bf16.bf16.f16 {d8}, {a4}, {a4}, {c8};"),
            "unsupported `wmma.mma.m16n16k16` form .f32.bf16.bf16.f16",
            "",
        ),
        (
            format!("wmma.mma.sync.aligned.row.col.m16n16k16.s32.s8.u8.s32 {d8}, {a4}, {a4}, {c8};"),
            "unsupported `wmma.mma.m16n16k16` form",
            "",
        ),
        (
            format!("wmma.mma.sync.aligned.row.col.m16n16k16.f32.bf16.bf16.f32.satfinite {d8}, {a4}, {a4}, {c8};"),
            "unsupported `wmma.mma.m16n16k16` form",
            "",
        ),
        (
            format!("wmma.mma.sync.aligned.row.m16n16k16.f32.f32 {d8}, {a8}, {b8}, {c8};"),
            "needs two layouts",
            "",
        ),
        (
            format!("wmma.mma.sync.aligned.row.col.m16n16k8.f32.f32 {d8}, {a8}, {b8}, {c8};"),
            "unsupported `wmma.mma.m16n16k8` form .f32.f32",
            "",
        ),
        (
            format!("wmma.sync.aligned.row.col.m16n16k16.f32.f32 {d8}, {a8}, {b8}, {c8};"),
            "`wmma` needs .load, .store or .mma",
            "wmma",
        ),
    ];
    common::assert_located_errors(&cases, "mov.b32 %a0, 0;", module, FIRST_LINE);
}
