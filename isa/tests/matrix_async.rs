//! `ldmatrix` / `stmatrix` fragment layouts against a reference written from the PTX ISA's
//! figures (element by element, the other way round from `semantics::ldmatrix`), round trips
//! on random matrices, and the parser's forms of ldmatrix, stmatrix and cp.async: accepted ones
//! print back to the same IR, malformed ones are errors at file:line:col.

mod common;

use gpusim_isa::semantics::{ldmatrix, stmatrix};
use gpusim_isa::{parse_module, print, CacheOp, Module, Op, Operand, Space};
use proptest::prelude::*;

/// The PTX ISA figure "ldmatrix fragment for one 8x8 matrix": row r is held by the four
/// threads 4r..4r+3, thread 4r + j holding columns 2j (low half) and 2j + 1 (high half). With
/// `.trans` the figure applies to the transposed matrix, so element (r, c) of the stored
/// matrix is column r of row c of the fragment. Returns (lane, half) of element (r, c).
fn holder(r: usize, c: usize, trans: bool) -> (usize, usize) {
    let (fr, fc) = if trans { (c, r) } else { (r, c) };
    (4 * fr + fc / 2, fc % 2)
}

fn rows_of(vals: &[u16]) -> Vec<[u16; 8]> {
    vals.chunks(8).map(|c| c.try_into().unwrap()).collect()
}

fn check_layout(rows: &[[u16; 8]], trans: bool) {
    let regs = ldmatrix(rows, trans);
    for (k, row) in rows.iter().enumerate() {
        let (mat, r) = (k / 8, k % 8);
        for (c, &e) in row.iter().enumerate() {
            let (lane, half) = holder(r, c, trans);
            let got = (regs[lane][mat] >> (16 * half)) as u16;
            assert_eq!(got, e, "matrix {mat} ({r}, {c}), trans {trans}");
        }
    }
    // Registers beyond num are left 0.
    for lane in regs.iter() {
        assert!(lane[rows.len() / 8..].iter().all(|&v| v == 0));
    }
}

#[test]
fn ldmatrix_follows_the_isa_figure() {
    // Element value = its (matrix, row, column) index, so any misplacement shows.
    for num in [1usize, 2, 4] {
        let vals: Vec<u16> = (0..64 * num as u16).collect();
        for trans in [false, true] {
            check_layout(&rows_of(&vals), trans);
        }
    }
    // Spot checks straight from the figure: thread 0 holds (0,0),(0,1); thread 5 holds
    // (1,2),(1,3); with .trans thread 5 holds (2,1),(3,1).
    let vals: Vec<u16> = (0..64).collect();
    let plain = ldmatrix(&rows_of(&vals), false);
    assert_eq!(plain[0][0], 1 << 16);
    assert_eq!(plain[5][0], (8 + 2) | ((8 + 3) << 16));
    let trans = ldmatrix(&rows_of(&vals), true);
    assert_eq!(trans[5][0], (2 * 8 + 1) | ((3 * 8 + 1) << 16));
}

proptest! {
    #[test]
    fn layouts_and_round_trips(vals in proptest::collection::vec(any::<u16>(), 256), n in 0usize..3, trans: bool) {
        let num = [1usize, 2, 4][n];
        let rows = rows_of(&vals[..64 * num]);
        check_layout(&rows, trans);
        let regs = ldmatrix(&rows, trans);
        // stmatrix is ldmatrix's inverse, with and without .trans.
        prop_assert_eq!(stmatrix(&regs, num, trans), rows.clone());
        // ldmatrix.trans of a stmatrix (plain) transposes each matrix.
        let t = ldmatrix(&stmatrix(&regs, num, false), true);
        for (k, row) in rows.iter().enumerate() {
            for (c, &e) in row.iter().enumerate() {
                let (lane, half) = holder(c, k % 8, trans);
                let (lane2, half2) = holder(k % 8, c, !trans);
                prop_assert_eq!((lane, half), (lane2, half2));
                prop_assert_eq!((t[lane][k / 8] >> (16 * half)) as u16, e);
            }
        }
    }
}

/// A kernel whose body is `lines`, one per line from line 10, column 3.
fn module(lines: &[&str]) -> String {
    let mut s = String::from(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\
         \x20 .reg .pred %p<2>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n  .shared .align 16 .b32 sh[64];\n",
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

fn ops(m: &Module) -> Vec<Op> {
    let body = &m.functions[0].body;
    body[..body.len() - 1]
        .iter()
        .map(|i| i.op.clone())
        .collect()
}

const ACCEPTED: &[&str] = &[
    "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%r2];",
    "ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 {%r1, %r3}, [%r2+16];",
    "ldmatrix.sync.aligned.m8n8.x4.b16 {%r1, %r3, %r4, %r5}, [%rd1];",
    "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r1, %r3, %r4, %r5}, [sh];",
    "stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r2], {%r1};",
    "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r2], {%r1, %r3};",
    "stmatrix.sync.aligned.m8n8.x4.b16 [%rd1], {%r1, %r3, %r4, %r5};",
    "cp.async.ca.shared.global [%r2], [%rd1], 4;",
    "cp.async.ca.shared::cta.global [%r2], [%rd1], 8, %r3;",
    "cp.async.cg.shared.global [%r2+16], [%rd1+32], 16, 0;",
    "cp.async.cg.shared.global.L2::128B [%r2], [%rd1], 16;",
    "cp.async.commit_group;",
    "cp.async.wait_group 1;",
    "cp.async.wait_all;",
];

#[test]
fn forms_parse_and_print_back() {
    let m = parse_module("ok.ptx", &module(ACCEPTED)).unwrap_or_else(|e| panic!("{e}"));
    let first = ops(&m);
    assert_eq!(first.len(), ACCEPTED.len());
    assert!(matches!(
        first[1],
        Op::Ldmatrix {
            num: 2,
            trans: true,
            space: Space::Shared,
            ..
        }
    ));
    assert!(matches!(
        first[2],
        Op::Ldmatrix {
            num: 4,
            trans: false,
            space: Space::Generic,
            ..
        }
    ));
    assert!(matches!(
        first[5],
        Op::Stmatrix {
            num: 2,
            trans: true,
            ..
        }
    ));
    assert!(matches!(
        first[8],
        Op::CpAsync {
            cop: CacheOp::Ca,
            size: 8,
            src_size: Some(Operand::Reg(_)),
            ..
        }
    ));
    assert!(matches!(
        first[9],
        Op::CpAsync {
            cop: CacheOp::Cg,
            size: 16,
            src_size: Some(Operand::Imm(0)),
            ..
        }
    ));
    assert_eq!(first[11], Op::CpAsyncCommit);
    assert_eq!(first[12], Op::CpAsyncWait { n: Some(1) });
    assert_eq!(first[13], Op::CpAsyncWait { n: None });
    let f = &m.functions[0];
    let printed: Vec<String> = f.body[..f.body.len() - 1]
        .iter()
        .map(|i| print::inst_to_ptx(&m, f, i))
        .collect();
    let refs: Vec<&str> = printed.iter().map(String::as_str).collect();
    let again = parse_module("again.ptx", &module(&refs)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first, ops(&again), "{printed:#?}");
}

/// (line, text the error contains, the text the error points at).
const REJECTED: &[(&str, &str, &str)] = &[
    (
        "ldmatrix.aligned.m8n8.x1.shared.b16 {%r1}, [%r2];",
        "needs .sync and .aligned",
        "ldmatrix",
    ),
    (
        "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b16 {%r1}, [%r2];",
        "gpusim supports .m8n8",
        "ldmatrix",
    ),
    (
        "ldmatrix.sync.aligned.m8n8.x3.shared.b16 {%r1}, [%r2];",
        "needs .x1, .x2 or .x4",
        "ldmatrix",
    ),
    (
        "ldmatrix.sync.aligned.m8n8.x1.shared.b8 {%r1}, [%r2];",
        "gpusim supports .b16",
        "ldmatrix",
    ),
    (
        "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r1}, [%r2];",
        "operand d takes 2 registers here, found 1",
        "{%r1}",
    ),
    (
        "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r2], {%r1, %r3};",
        "operand r takes 4 registers here, found 2",
        "{%r1",
    ),
    (
        "ldmatrix.sync.aligned.m8n8.x1.global.b16 {%r1}, [%r2];",
        "unsupported modifier `.global`",
        ".global",
    ),
    (
        "cp.async.ca.shared.global [%r2], [%rd1], 12;",
        "cp-size must be 4, 8 or 16, found 12",
        "12",
    ),
    (
        "cp.async.cg.shared.global [%r2], [%rd1], 8;",
        "cp.async.cg copies 16 bytes",
        "8;",
    ),
    (
        "cp.async.shared.global [%r2], [%rd1], 4;",
        "needs .ca or .cg",
        "cp",
    ),
    (
        "cp.async.ca.global.shared [%r2], [%rd1], 4;",
        "copies from .global to .shared",
        "cp",
    ),
    (
        "cp.async.ca.shared.global [%r2], [%rd1];",
        "takes 3 or 4 operands",
        "cp",
    ),
    (
        "cp.async.wait_group %r1;",
        "group count must be an integer literal",
        "%r1",
    ),
    ("cp.async.commit_group 1;", "takes 0 operands", "cp"),
    (
        "cp.async.ca.shared.global [%r2], [%rd1], 16, %p1;",
        "ignore-src predicate form is not supported",
        "%p1",
    ),
    ("cp.ca.shared.global [%r2], [%rd1], 4;", "cp.async", "cp"),
];

#[test]
fn malformed_forms_are_errors_with_locations() {
    common::assert_located_errors(REJECTED, "add.u32 %r1, %r1, 1;", module, FIRST_LINE);
}
