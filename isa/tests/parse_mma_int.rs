//! Parser tests for the integer `mma.sync.aligned` forms (PTX ISA 9.0 §9.7.14.5.14):
//! `.m8n8k16`, `.m16n8k16` and `.m16n8k32` with `.row.col{.satfinite}.s32.{s8,u8}.{s8,u8}.s32`
//! decode to `Op::MmaInt` and print back to text that parses to the same IR; the combinations
//! PTX does not define (other layouts, other shapes or types, wrong register counts) are
//! errors naming file:line:col.

mod common;

use gpusim_isa::{parse_module, print, MmaIntShape, MmaIntType, Module, Op};

/// A kernel whose body is `lines`, one instruction per line starting at line 9, column 3.
fn module(lines: &[&str]) -> String {
    let mut s = String::from(
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\
         \x20 .reg .b32 %a<4>;\n  .reg .b32 %b<2>;\n  .reg .b32 %c<4>;\n",
    );
    for l in lines {
        s.push_str("  ");
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("  ret;\n}\n");
    s
}

const FIRST_LINE: u32 = 9;
const A4: &str = "{%a0, %a1, %a2, %a3}";
const C4: &str = "{%c0, %c1, %c2, %c3}";

fn parse(lines: &[&str]) -> Module {
    parse_module("mma.ptx", &module(lines)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn integer_forms_decode_and_print_back() {
    use MmaIntShape::*;
    use MmaIntType::*;
    let cases = [
        (
            "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%c0, %c1}, %a0, %b0, {%c2, %c3};".to_string(),
            (M8n8k16, S8, S8, false, 1, 1, 2),
        ),
        (
            "mma.sync.aligned.m8n8k16.row.col.satfinite.s32.u8.s8.s32 {%c0, %c1}, {%a0}, {%b0}, {%c0, %c1};".to_string(),
            (M8n8k16, U8, S8, true, 1, 1, 2),
        ),
        (
            format!("mma.sync.aligned.m16n8k16.row.col.s32.s8.u8.s32 {C4}, {{%a0, %a1}}, %b1, {C4};"),
            (M16n8k16, S8, U8, false, 2, 1, 4),
        ),
        (
            format!("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32 {C4}, {A4}, {{%b0, %b1}}, {C4};"),
            (M16n8k32, U8, U8, true, 4, 2, 4),
        ),
        (
            format!("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {C4}, {A4}, {{%b0, %b1}}, {C4};"),
            (M16n8k32, S8, S8, false, 4, 2, 4),
        ),
    ];
    for (line, want) in cases {
        let m = parse(&[&line]);
        let f = &m.functions[0];
        let op = &f.body[0].op;
        let Op::MmaInt {
            shape,
            aty,
            bty,
            satfinite,
            d,
            a,
            b,
            c,
        } = op
        else {
            panic!("`{line}` parsed to {op:?}");
        };
        assert_eq!(
            (*shape, *aty, *bty, *satfinite, a.len, b.len, d.len),
            want,
            "{line}"
        );
        assert_eq!(c.len, d.len, "{line}");
        let text = print::inst_to_ptx(&m, f, &f.body[0]);
        let again = parse(&[&text]);
        assert_eq!(&again.functions[0].body[0].op, op, "{line} → {text}");
    }
}

#[test]
fn undefined_integer_forms_are_errors_with_locations() {
    let ops = format!("{C4}, {A4}, {{%b0, %b1}}, {C4};");
    let cases: Vec<(String, &str, &str)> = vec![
        (
            format!("mma.sync.aligned.m16n8k32.col.row.s32.s8.s8.s32 {ops}"),
            "unsupported `mma` form .m16n8k32.col.row",
            "",
        ),
        (
            format!("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32.satfinite {ops}"),
            "unsupported `mma` form",
            "",
        ),
        (
            format!("mma.sync.aligned.m8n8k16.row.col.f32.f16.f16.f32 {ops}"),
            "unsupported `mma` form .m8n8k16",
            "",
        ),
        (
            format!("mma.sync.aligned.m16n8k32.row.col.s32.s16.s16.s32 {ops}"),
            "unsupported `mma` form",
            "",
        ),
        (
            format!("mma.sync.aligned.m16n8k8.row.col.s32.s8.s8.s32 {ops}"),
            "`mma.m16n8k8` is not defined for .s8/.u8 inputs",
            "",
        ),
        (
            format!("mma.sync.aligned.m8n8k4.row.col.s32.s8.s8.s32 {ops}"),
            "unsupported `mma.m8n8k4` form .row.col.s32.s8.s8.s32",
            "",
        ),
        (
            format!("mma.sync.aligned.m8n8k4.row.row.f32.bf16.bf16.f32 {ops}"),
            "unsupported `mma.m8n8k4` form",
            "",
        ),
        (
            format!("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {C4}, {{%a0, %a1}}, {{%b0, %b1}}, {C4};"),
            "operand a takes 4 registers here, found 2",
            "{%a0, %a1}",
        ),
        (
            format!("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {C4}, %a0, %b0, {{%c0, %c1}};"),
            "operand d takes 2 registers here, found 4",
            C4,
        ),
        (
            format!("mma.sync.aligned.m16n8k16.row.col.s32.u8.u8.s32 {C4}, {{%a0, %a1}}, {{%b0, %b1}}, {C4};"),
            "operand b takes 1 register here, found 2",
            "{%b0, %b1}",
        ),
    ];
    common::assert_located_errors(&cases, "mov.b32 %a0, 0;", module, FIRST_LINE);
}
