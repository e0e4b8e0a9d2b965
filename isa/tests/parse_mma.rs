//! Parser tests for `mma.sync.aligned` (PTX ISA 9.0 §9.7.14.5.14): the supported forms
//! (m16n8k16 with f16/bf16, m16n8k8 with f16/bf16/tf32, f32 accumulators) decode to the
//! expected IR and print back to text that parses to the same IR; every other form, and
//! operand vectors of the wrong length, are errors naming file:line:col.

mod common;

use gpusim_isa::{parse_module, print, MmaShape, MmaType, Module, Op, RegId};

/// A kernel whose body is `lines`, one instruction per line starting at line 10, column 3.
fn module(lines: &[&str]) -> String {
    let mut s = String::from(
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\
         \x20 .reg .b32 %a<4>;\n  .reg .b32 %b<2>;\n  .reg .f32 %c<4>;\n  .reg .f32 %d<4>;\n",
    );
    for l in lines {
        s.push_str("  ");
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("  ret;\n}\n");
    s
}

const FIRST_LINE: u32 = 10;

const D: &str = "{%d0, %d1, %d2, %d3}";
const C: &str = "{%c0, %c1, %c2, %c3}";

fn accepted() -> Vec<(String, MmaShape, MmaType, usize, usize)> {
    let a4 = "{%a0, %a1, %a2, %a3}";
    vec![
        (
            format!(
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {D}, {a4}, {{%b0, %b1}}, {C};"
            ),
            MmaShape::M16n8k16,
            MmaType::F16,
            4,
            2,
        ),
        (
            format!(
                "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {C}, {a4}, {{%b0, %b1}}, {C};"
            ),
            MmaShape::M16n8k16,
            MmaType::Bf16,
            4,
            2,
        ),
        (
            format!(
                "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {D}, {a4}, {{%b0, %b1}}, {C};"
            ),
            MmaShape::M16n8k8,
            MmaType::Tf32,
            4,
            2,
        ),
        (
            format!(
                "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {D}, {{%a0, %a1}}, {{%b0}}, {C};"
            ),
            MmaShape::M16n8k8,
            MmaType::F16,
            2,
            1,
        ),
        (
            format!(
                "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {D}, {{%a2, %a3}}, %b1, {C};"
            ),
            MmaShape::M16n8k8,
            MmaType::Bf16,
            2,
            1,
        ),
    ]
}

fn parse(lines: &[&str]) -> Module {
    parse_module("mma.ptx", &module(lines)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn supported_forms_decode_and_print_back() {
    for (line, shape, ty, na, nb) in accepted() {
        let m = parse(&[&line]);
        let f = &m.functions[0];
        let op = &f.body[0].op;
        let Op::Mma {
            shape: s,
            ty: t,
            d,
            a,
            b,
            c,
        } = op
        else {
            panic!("`{line}` parsed to {op:?}");
        };
        assert_eq!((*s, *t), (shape, ty), "{line}");
        assert_eq!((a.len as usize, b.len as usize), (na, nb), "{line}");
        assert_eq!((d.len, c.len), (4, 4), "{line}");
        // Registers are resolved in order: %c0..%c3 are 4 consecutive entries of the table.
        let name = |r: RegId| f.regs[r.0 as usize].name.clone();
        assert_eq!(name(c.regs[0]), "%c0");
        assert_eq!(name(c.regs[3]), "%c3");
        let text = print::inst_to_ptx(&m, f, &f.body[0]);
        let again = parse(&[&text]);
        assert_eq!(&again.functions[0].body[0].op, op, "{line} → {text}");
    }
}

#[test]
fn a_single_register_b_needs_no_braces() {
    let m = parse(&[&format!(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {D}, {{%a0, %a1}}, %b0, {C};"
    )]);
    let Op::Mma { b, .. } = &m.functions[0].body[0].op else {
        panic!("not an mma");
    };
    assert_eq!(b.len, 1);
}

#[test]
fn unsupported_forms_are_errors_with_locations() {
    let a4 = "{%a0, %a1, %a2, %a3}";
    let b2 = "{%b0, %b1}";
    let ops = format!("{D}, {a4}, {b2}, {C};");
    let cases: Vec<(String, &str, &str)> = vec![
        (
            format!("mma.aligned.m16n8k16.row.col.f32.f16.f16.f32 {ops}"),
            "needs .sync and .aligned",
            "",
        ),
        (
            format!("mma.sync.m16n8k16.row.col.f32.f16.f16.f32 {ops}"),
            "needs .sync and .aligned",
            "",
        ),
        (
            format!("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {ops}"),
            "operand d takes 8 registers here, found 4",
            D,
        ),
        (
            format!("mma.sync.aligned.m8n4k4.row.col.f32.f16.f16.f32 {ops}"),
            "unsupported `mma` shape",
            "",
        ),
        (
            format!("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {ops}"),
            "unsupported `mma` form .row.col.f16.f16.f16.f16",
            "",
        ),
        (
            format!("mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32 {ops}"),
            "unsupported `mma` form .col.row",
            "",
        ),
        (
            format!("mma.sync.aligned.m16n8k16.row.col.f32.bf16.f16.f32 {ops}"),
            "unsupported `mma` form",
            "",
        ),
        (
            format!("mma.sync.aligned.m16n8k16.row.col.f32.s8.s8.f32 {ops}"),
            "unsupported `mma` input type .s8",
            "",
        ),
        (
            format!("mma.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {ops}"),
            "not defined for .tf32 inputs",
            "",
        ),
        (
            format!("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {D}, {{%a0, %a1, %a2}}, {b2}, {C};"),
            "operand a takes 4 registers here, found 3",
            "{%a0, %a1, %a2}",
        ),
        (
            format!("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {D}, {{%a0, %a1}}, {b2}, {C};"),
            "operand b takes 1 register here, found 2",
            "{%b0, %b1}",
        ),
        (
            format!("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {{%d0, %d1}}, {a4}, {b2}, {C};"),
            "operand d takes 4",
            "{%d0, %d1}",
        ),
        (
            format!("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {D}, {a4}, {b2}, {{%c0, %c1, %c2, 0f00000000}};"),
            "operand c takes registers",
            "0f00000000",
        ),
        (
            format!("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {D}, {a4}, {b2};"),
            "takes 4 operands",
            "",
        ),
    ];
    common::assert_located_errors(&cases, "mov.b32 %a0, 0;", module, FIRST_LINE);
}
