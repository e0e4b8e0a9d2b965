//! Parser tests: real NVRTC output, scoping, and error locations.

use gpusim_isa::{parse_module, print, FuncKind, Op};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn parses_nvrtc_vecadd() {
    let m = parse_module("vecadd.ptx", &fixture("vecadd.ptx")).unwrap();
    assert_eq!(m.version, (8, 4));
    assert_eq!(m.target, "sm_52");
    let f = &m.functions[0];
    assert_eq!(f.kind, FuncKind::Entry);
    assert_eq!(f.params.len(), 4);
    assert_eq!(f.body.len(), 22);
    // `@%p1 bra $L__BB0_2` targets the final `ret`.
    assert!(matches!(
        f.body[9].op,
        Op::Bra {
            target: 21,
            uni: false
        }
    ));
    assert_eq!(f.label_at(21), Some("$L__BB0_2"));
}

#[test]
fn parses_calls_scopes_and_initialisers() {
    let m = parse_module("call.ptx", &fixture("call.ptx")).unwrap();
    let lock = m.symbols.iter().find(|s| s.name == "lock").unwrap();
    assert_eq!(lock.init, 8u32.to_le_bytes()); // 10/2+3 folded
    let k = m.functions.iter().find(|f| f.name == "k").unwrap();
    let text = print::function_to_ptx(&m, k);
    assert!(
        text.contains("call.uni (retval0), _Z3sqri, (param0);"),
        "{text}"
    );
    assert!(text.contains("setp.lt.and.s32 %p1|%p2"), "{text}");
    // the printed function parses again
    let f = m.functions.iter().find(|f| f.name == "_Z3sqri").unwrap();
    assert_eq!(f.rets.len(), 1);
}

#[test]
fn errors_carry_line_and_column() {
    let src = ".version 7.0\n.target sm_52\n.address_size 64\n.entry k()\n{\n  .reg .b32 %r<2>;\n  frobnicate.u32 %r1, %r0;\n}\n";
    let e = parse_module("bad.ptx", src).unwrap_err();
    assert_eq!((e.line, e.col), (7, 3), "{e}");
    assert!(
        e.to_string()
            .contains("unsupported instruction `frobnicate`"),
        "{e}"
    );
    let e = parse_module(
        "bad.ptx",
        &src.replace("frobnicate.u32 %r1, %r0", "add.u32 %r1, %r9, 1"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("undefined register `%r9`"), "{e}");
    assert_eq!((e.line, e.col), (7, 16));
}

#[test]
fn inner_scope_shadows_and_labels_are_scoped() {
    // Habermaier Listing 5.4 (T8): an inner declaration shadows the outer register, and the
    // branch targets the inner label.
    let src = r#".version 7.0
.target sm_52
.address_size 64
.entry k()
{
  .reg .u64 r;
  .reg .pred p;
  BLOCK: add.u64 r, r, 1;
  {
    bra.uni SKIP;
    .reg .u64 r;
    SKIP: add.u64 r, r, r;
    @!p bra BLOCK;
    BLOCK: exit;
  }
}
"#;
    let m = parse_module("scope.ptx", src).unwrap();
    let f = &m.functions[0];
    let Op::Arith { d, .. } = f.body[2].op else {
        panic!()
    };
    assert_eq!(d.0, 2, "inner r is the third register");
    assert!(matches!(f.body[3].op, Op::Bra { target: 4, .. }));
}

/// Issue 11 item 8: sizes wrapped in 32 bits (`.shared .b8 s[4294967296]` became an empty
/// array). Element counts, alignments, parameters and frames that do not fit are errors at
/// the declaration, with the size.
#[test]
fn oversized_declarations_are_errors_not_wrapped_sizes() {
    let module = |decl: &str| {
        format!(
            ".version 7.0\n.target sm_52\n.address_size 64\n.entry k()\n{{\n  {decl}\n  ret;\n}}\n"
        )
    };
    let cases = [
        (
            ".shared .align 4 .b8 big[4294967296];",
            "an array of 4294967296 elements is too large",
        ),
        (
            ".global .b8 g[65536][65536];",
            "an array of 4294967296 elements is too large",
        ),
        (
            ".shared .v4 .b32 s[1073741824];",
            "an array of 4294967296 elements is too large",
        ),
        (
            ".shared .align 3 .b8 s[4];",
            "alignment 3 is not a power of two",
        ),
        (
            ".local .align 8589934592 .b8 s[4];",
            "alignment 8589934592 is not a power of two",
        ),
        (".local .b64 l[600000000];", "a frame holds at most 4 GiB"),
    ];
    for (decl, want) in cases {
        let e = parse_module("big.ptx", &module(decl)).unwrap_err();
        assert_eq!(e.line, 6, "{decl}: {e}");
        assert!(e.message.contains(want), "{decl}: {e}");
    }
    let param = ".version 7.0\n.target sm_52\n.address_size 64\n.entry k(.param .b64 p[600000000])\n{\n  ret;\n}\n";
    let e = parse_module("big.ptx", param).unwrap_err();
    assert!(e.message.contains("larger than 4 GiB"), "{e}");
    // ptxas allows 64 KiB of module constant data.
    let consts = |n: u32| {
        format!(".version 7.0\n.target sm_52\n.address_size 64\n.const .b8 c0[16];\n.const .b8 c1[{n}];\n.entry k()\n{{\n  ret;\n}}\n")
    };
    let e = parse_module("big.ptx", &consts(65521)).unwrap_err();
    assert_eq!(e.line, 5, "{e}");
    assert!(
        e.message.contains(
            "`c1` brings the module's constant data to 65537 bytes; constant memory holds 65536"
        ),
        "{e}"
    );
    parse_module("big.ptx", &consts(65520)).unwrap();
    // The largest count that fits is still accepted (a size in bytes beyond 4 GiB is the
    // simulator's business: it does not fit an SM).
    parse_module("big.ptx", &module(".shared .b32 s[1073741824];")).unwrap();
}

/// Issue 11 item 8: `bar.sync 16` was accepted and reported at run time as barrier divergence.
/// As ptxas does, an immediate barrier number outside 0..15 and an immediate thread count
/// that is not a multiple of the warp size (or zero for `bar.arrive`) are errors at the
/// operand (PTX ISA `barrier`).
#[test]
fn immediate_barrier_operands_out_of_range_are_errors() {
    let module = |inst: &str| {
        format!(".version 7.0\n.target sm_52\n.address_size 64\n.entry k()\n{{\n  .reg .b32 %r<2>;\n  .reg .pred %p<2>;\n  {inst}\n  ret;\n}}\n")
    };
    let bad = [
        (
            "bar.sync 16;",
            12,
            "barrier number 16 is out of range 0..15",
        ),
        (
            "barrier.sync.aligned 31, 64;",
            24,
            "barrier number 31 is out of range 0..15",
        ),
        (
            "bar.red.popc.u32 %r1, 16, %p1;",
            25,
            "barrier number 16 is out of range 0..15",
        ),
        (
            "bar.sync 1, 48;",
            15,
            "thread count 48 is not a multiple of the warp size (32)",
        ),
        (
            "bar.arrive 1, 33;",
            17,
            "thread count 33 is not a multiple of the warp size (32)",
        ),
        (
            "bar.arrive 1, 0;",
            17,
            "`bar.arrive` needs a non-zero thread count",
        ),
    ];
    for (inst, col, want) in bad {
        let e = parse_module("bar.ptx", &module(inst)).unwrap_err();
        assert_eq!((e.line, e.col), (8, col), "{inst}: {e}");
        assert!(e.message.contains(want), "{inst}: {e}");
    }
    for ok in [
        "bar.sync 15;",
        "bar.sync 1, 0;",
        "bar.sync 1, 2048;",
        "bar.sync %r1, %r1;",
    ] {
        parse_module("bar.ptx", &module(ok)).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
}

// ------------------------------------------------------------------------------------------
// Issue 11: PTX that ptxas rejects is rejected with its location (each negative case below was
// run through ptxas 12.9, which rejects it; each positive one is accepted by ptxas).
// ------------------------------------------------------------------------------------------

mod common;

use gpusim_isa::{PtxError, TargetArch, MAX_NESTING};

const BODY: &str = ".visible .entry k()\n{\n  ret;\n}\n";

fn rejected(src: &str) -> PtxError {
    parse_module("bad.ptx", src)
        .err()
        .unwrap_or_else(|| panic!("accepted:\n{src}"))
}

/// `src` is rejected at `line`:`col` with a message containing `want`.
fn assert_rejected_at(src: &str, line: u32, col: u32, want: &str) {
    let e = rejected(src);
    let text = e.to_string();
    assert!(text.contains(want), "{text}\n{src}");
    assert_eq!((e.line, e.col), (line, col), "{text}\n{src}");
    assert!(
        text.starts_with(&format!("bad.ptx:{line}:{col}: ")),
        "{text}"
    );
}

#[test]
fn module_header_is_checked_as_ptxas_checks_it() {
    let h = |v: &str, t: &str| format!(".version {v}\n.target {t}\n.address_size 64\n{BODY}");
    assert_rejected_at(
        &format!(".target sm_90\n.version 8.0\n{BODY}"),
        1,
        1,
        "starts with a `.version`",
    );
    assert_rejected_at(
        &format!(".version 8.0\n.address_size 64\n{BODY}"),
        2,
        1,
        "followed by a `.target`",
    );
    assert_rejected_at(BODY, 1, 1, "starts with a `.version`");
    assert_rejected_at("", 1, 1, "starts with a `.version`");
    assert_rejected_at(&h("8.0", "sm_91"), 2, 9, "unknown `.target` `sm_91`");
    assert_rejected_at(&h("8.0", "sm_80a"), 2, 9, "unknown `.target` `sm_80a`");
    assert_rejected_at(&h("8.8", "sm_90f"), 2, 9, "unknown `.target` `sm_90f`");
    assert_rejected_at(&h("8.0", "foo"), 2, 9, "unknown `.target` `foo`");
    assert_rejected_at(
        &h("8.0", "sm_90, bogus"),
        2,
        16,
        "unknown `.target` `bogus`",
    );
    assert_rejected_at(&h("8.0", "sm_90, sm_80"), 2, 16, "two architectures");
    assert_rejected_at(
        &h("8.0", "sm_90, texmode_unified, texmode_independent"),
        2,
        33,
        "two texture modes",
    );
    assert_rejected_at(&h("8.0", "sm_13, map_f64_to_f32"), 2, 16, "map_f64_to_f32");
    assert_rejected_at(&h("9.9", "sm_90"), 1, 10, "unknown PTX ISA version 9.9");
    assert_rejected_at(&h("8.9", "sm_90"), 1, 10, "unknown PTX ISA version 8.9");
    assert_rejected_at(&h("7.9", "sm_52"), 1, 10, "unknown PTX ISA version 7.9");
    assert_rejected_at(&h("10.0", "sm_52"), 1, 10, "unknown PTX ISA version 10.0");
    assert_rejected_at(&h("8", "sm_52"), 1, 10, "expected a PTX ISA version");
    assert_rejected_at(&h("7.7", "sm_90"), 2, 9, "needs `.version 7.8` or later");
    assert_rejected_at(&h("8.0", "sm_120"), 2, 9, "needs `.version 8.7` or later");
    assert_rejected_at(&h("7.8", "sm_90a"), 2, 9, "needs `.version 8.0` or later");
    assert_rejected_at(
        &format!(".version 8.0\n.target sm_90\n.target sm_80\n{BODY}"),
        3,
        1,
        "a second `.target`",
    );
    assert_rejected_at(
        &format!(".version 8.0\n.target sm_90\n{BODY}.version 8.0\n"),
        7,
        1,
        "a second `.version`",
    );

    let arch = |v: &str, t: &str| parse_module("ok.ptx", &h(v, t)).unwrap().arch;
    let t = |sm, suffix, compute| TargetArch {
        sm,
        suffix,
        compute,
    };
    assert_eq!(arch("8.0", "sm_90a"), t(90, Some('a'), false));
    assert_eq!(arch("7.8", "sm_90"), t(90, None, false));
    assert_eq!(arch("8.8", "compute_100f"), t(100, Some('f'), true));
    assert_eq!(
        arch("7.0", "sm_52, texmode_independent, debug"),
        t(52, None, false)
    );
    assert_eq!(arch("8.00", "compute_80"), t(80, None, true));
    assert_eq!(arch("1.4", "sm_10"), t(10, None, false));
    assert_eq!(arch("9.1", "sm_121a"), t(121, Some('a'), false));
    assert_eq!(t(90, Some('a'), false).to_string(), "sm_90a");
    assert_eq!(t(80, None, true).to_string(), "compute_80");
    let m = parse_module("ok.ptx", &h("8.5", "sm_90a")).unwrap();
    assert_eq!((m.version, m.target.as_str()), ((8, 5), "sm_90a"));
}

/// A kernel body with registers of every kind, then `lines`.
fn typed_module(lines: &[&str]) -> String {
    let mut s = String::from(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\
         \x20 .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n  .reg .f32 %f<4>;\n  .reg .f64 %fd<4>;\n\
         \x20 .reg .pred %p<4>;\n  .reg .b16 %h<4>;\n  .reg .u32 %u<4>;\n  .reg .u16 %us<4>;\n\
         \x20 .reg .f16 %hf<4>;\n  .reg .b8 %q<2>;\n",
    );
    for l in lines {
        s.push_str("  ");
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("  ret;\n}\n");
    s
}

const TYPED_FIRST_LINE: u32 = 16;

#[test]
fn register_types_follow_the_operand_type_rules() {
    let cases = [
        (
            "add.u64 %r0, %r1, %r2;",
            "`%r0` is a .b32 register, but this operand is .u64",
            "%r0",
        ),
        (
            "add.u32 %r0, %rd1, %r2;",
            "`%rd1` is a .b64 register",
            "%rd1",
        ),
        (
            "add.u32 %rd0, %r1, %r2;",
            "`%rd0` is a .b64 register",
            "%rd0",
        ),
        ("add.s32 %f0, %f1, %f2;", "`%f0` is a .f32 register", "%f0"),
        ("add.u16 %r0, %r1, %r2;", "this operand is .u16", "%r0"),
        (
            "add.rn.bf16 %hf0, %hf1, %hf1;",
            "this operand is .bf16",
            "%hf0",
        ),
        (
            "min.u16x2 %r0, %r1, %u1;",
            "`%u1` is a .u32 register",
            "%u1",
        ),
        ("mov.u32 %f0, %r1;", "`%f0` is a .f32 register", "%f0"),
        ("mov.u64 %r0, %rd1;", "`%r0` is a .b32 register", "%r0"),
        ("mov.b16 %h0, %q1;", "`%q1` is a .b8 register", "%q1"),
        ("mov.u32 %r0, %p1;", "`%p1` is a .pred register", "%p1"),
        ("mov.pred %p0, %r1;", "it needs a .pred register", "%r1"),
        ("mul.wide.u32 %r0, %r1, %r2;", "this operand is .u64", "%r0"),
        (
            "mad.wide.u32 %rd0, %r1, %r2, %r3;",
            "this operand is .u64",
            "%r3",
        ),
        ("popc.b64 %rd0, %rd1;", "this operand is .u32", "%rd0"),
        ("bfind.u64 %rd0, %rd1;", "this operand is .u32", "%rd0"),
        ("shl.b64 %rd0, %rd1, %rd1;", "this operand is .u32", "%rd1;"),
        (
            "bfe.u64 %rd0, %rd1, %rd1, %r2;",
            "this operand is .u32",
            "%rd1, %r2",
        ),
        (
            "setp.eq.u32 %r0, %r1, %r1;",
            "it needs a .pred register",
            "%r0",
        ),
        (
            "setp.eq.f32 %p0, %u1, %u1;",
            "`%u1` is a .u32 register",
            "%u1",
        ),
        (
            "selp.u32 %r0, %r1, %r2, %r3;",
            "it needs a .pred register",
            "%r3",
        ),
        (
            "and.pred %p0, %p1, %r2;",
            "it needs a .pred register",
            "%r2",
        ),
        ("not.pred %p0, %r1;", "it needs a .pred register", "%r1"),
        (
            "slct.u32.s32 %r0, %r1, %r2, %f1;",
            "`%f1` is a .f32 register",
            "%f1",
        ),
        (
            "testp.finite.f32 %r0, %f1;",
            "it needs a .pred register",
            "%r0",
        ),
        ("cvt.u32.u64 %r0, %r1;", "at least 64 bits", "%r1"),
        (
            "cvt.rzi.s32.f32 %r0, %fd1;",
            "`%fd1` is a .f64 register",
            "%fd1",
        ),
        (
            "cvt.f32.f16 %f0, %us1;",
            "`%us1` is a .u16 register",
            "%us1",
        ),
        (
            "cvt.rni.s32.bf16 %rd0, %h1;",
            "`%rd0` is a .b64 register",
            "%rd0",
        ),
        ("ld.param.u64 %r0, [p];", "at least 64 bits", "%r0"),
        (
            "ld.global.f32 %fd0, [%rd1];",
            "`%fd0` is a .f64 register",
            "%fd0",
        ),
        (
            "st.global.f32 [%rd1], %fd1;",
            "`%fd1` is a .f64 register",
            "%fd1",
        ),
        ("st.global.u64 [%rd1], %r1;", "at least 64 bits", "%r1"),
        (
            "atom.global.add.u32 %rd0, [%rd1], %r2;",
            "`%rd0` is a .b64 register",
            "%rd0",
        ),
        (
            "atom.global.cas.b32 %r0, [%rd1], %r2, %rd3;",
            "`%rd3` is a .b64 register",
            "%rd3",
        ),
        (
            "shfl.sync.idx.b32 %rd0, %r1, %r2, %r3, %r1;",
            "`%rd0` is a .b64",
            "%rd0",
        ),
        (
            "vote.sync.ballot.b32 %rd0, %p1, %r1;",
            "`%rd0` is a .b64",
            "%rd0",
        ),
        (
            "vote.sync.all.pred %p0, %r1, %r1;",
            "it needs a .pred register",
            "%r1, %r1",
        ),
        (
            "dp4a.u32.u32 %rd0, %r1, %r2, %r3;",
            "`%rd0` is a .b64",
            "%rd0",
        ),
        ("cvta.to.global.u64 %rd0, %r1;", "`%r1` is a .b32", "%r1"),
        ("@%r1 bra $L;\n$L:", "it needs a .pred register", "%r1"),
        (
            "add.u7 %r0, %r1, %r2;",
            "unknown type `.u7` for `add`",
            ".u7",
        ),
        (
            "cvt.rn.f8.f32 %r0, %f1;",
            "unknown type `.f8` for `cvt`",
            ".f8",
        ),
        (
            "ld.global.s7 %r0, [%rd1];",
            "unknown type `.s7` for `ld`",
            ".s7",
        ),
        (
            "add.u32.b5 %r0, %r1, %r2;",
            "unknown type `.b5` for `add`",
            ".b5",
        ),
        (
            "cvt.rzi.ftz.s32.f16 %r0, %h1;",
            "does not take `.ftz`",
            "cvt",
        ),
        ("cvt.ftz.s32.s16 %r0, %h1;", "does not take `.ftz`", "cvt"),
        ("cvt.sat.s32.s16 %r0, %h1;", "does not take `.sat`", "cvt"),
        ("cvt.sat.s64.s32 %rd0, %r1;", "does not take `.sat`", "cvt"),
        ("cvt.sat.s16.u8 %h0, %h1;", "does not take `.sat`", "cvt"),
    ];
    common::assert_located_errors(&cases, "mov.b32 %r0, %r1;", typed_module, TYPED_FIRST_LINE);

    // What ptxas accepts: bit-size registers with any type of their size, signed and unsigned
    // integers interchangeably, wider registers for ld/st/cvt, and the fixed operand types.
    let accepted = [
        "add.f32 %r0, %r1, %f2;",
        "add.f64 %rd0, %rd1, %fd2;",
        "add.s32 %u0, %u1, %r2;",
        "add.u16 %h0, %us1, %h2;",
        "add.f16x2 %r0, %r1, %r2;",
        "add.rn.bf16 %h0, %h1, %h1;",
        "and.b32 %r0, %f1, %r2;",
        "not.b32 %r0, %f1;",
        "mov.b32 %f0, %r1;",
        "mov.f32 %r0, %f1;",
        "mov.b64 %rd0, {%r1, %r2};",
        "mov.b32 {%h0, %h1}, %r1;",
        "mov.u32 %r0, %tid.x;",
        "mov.u64 %rd0, p;",
        "cvt.u32.u8 %r0, %r1;",
        "cvt.u8.u32 %rd0, %r1;",
        "cvt.u64.u32 %rd0, %rd1;",
        "cvt.rn.f32.u32 %f0, %rd1;",
        "cvt.rzi.s32.f32 %r0, %r1;",
        "cvt.f64.f32 %rd0, %f1;",
        "cvt.f32.f16 %f0, %r1;",
        "cvt.rn.f16.f32 %r0, %f1;",
        "cvt.rn.f16x2.f32 %rd0, %f1, %f2;",
        "cvt.rni.s16.bf16 %h0, %h1;",
        "cvt.rni.s8.bf16 %q0, %h1;",
        "cvt.rzi.sat.s32.f64 %r0, %fd1;",
        "cvt.sat.u32.s16 %r0, %h1;",
        "cvt.u8.u16 %q0, %us1;",
        "ld.param.u32 %rd0, [p];",
        "ld.param.f32 %rd0, [p];",
        "ld.param.u8 %r0, [p];",
        "ld.global.b8 %us0, [%rd1];",
        "ld.global.v2.f32 {%f0, %r1}, [%rd1];",
        "st.global.u32 [%rd1], %rd1;",
        "atom.global.add.f32 %r0, [%rd1], %r2;",
        "setp.eq.f32 %p0, %r1, %r1;",
        "setp.eq.u32 %p0|%p1, %r1, %u2;",
        "shl.b64 %rd0, %rd1, %r1;",
        "shr.u16 %us0, %us1, %r1;",
        "bfe.u64 %rd0, %rd1, %r1, %r2;",
        "popc.b64 %r0, %rd1;",
        "bfind.u64 %r0, %rd1;",
        "mul.wide.u32 %rd0, %r1, %u2;",
        "mad.wide.u32 %rd0, %r1, %r2, %rd3;",
        "selp.f32 %f0, %r1, %f2, %p1;",
        "slct.u32.f32 %r0, %r1, %r2, %f1;",
        "shfl.sync.idx.b32 %f0|%p1, %f1, %r2, %r3, %r1;",
        "vote.sync.ballot.b32 %r0, %p1, %r1;",
        "testp.finite.f32 %p0, %r1;",
        "isspacep.global %p0, %r1;",
        "copysign.f32 %f0, %f1, %r1;",
        "lop3.b32 %r0, %r1, %r2, %f1, 0xff;",
    ];
    for line in accepted {
        let src = typed_module(&[line]);
        if let Err(e) = parse_module("ok.ptx", &src) {
            panic!("`{line}` was rejected: {e}");
        }
    }
}

#[test]
fn names_are_declared_once_per_scope() {
    let m = |decls: &str, body: &str| {
        format!(".version 8.0\n.target sm_90\n.address_size 64\n{decls}.visible .entry k(.param .u32 x)\n{{\n{body}  ret;\n}}\n")
    };
    let cases = [
        (m("", "  .reg .b32 %r;\n  .reg .b32 %r;\n"), 7, 13, "`%r` is declared twice"),
        (m("", "  .reg .b32 %r<3>;\n  .reg .b64 %r1;\n"), 7, 13, "`%r1` is declared twice"),
        (m("", "  .reg .b32 %r<3>;\n  .reg .b32 %r<3>;\n"), 7, 13, "`%r0` is declared twice"),
        (m("", "  .reg .b32 %a, %a;\n"), 6, 17, "`%a` is declared twice"),
        (m("", "  .reg .pred %p;\n  .reg .b32 %p;\n"), 7, 13, "`%p` is declared twice"),
        (m("", "  .local .u32 y;\n  .local .u32 y;\n"), 7, 15, "`y` is declared twice"),
        (m("", "  .shared .u32 y;\n  .shared .u32 y;\n"), 7, 16, "`y` is declared twice"),
        (m("", "  .local .u32 x;\n"), 6, 15, "it already names a variable or parameter"),
        (m("", "  .reg .b32 x;\n"), 6, 13, "it already names a variable or parameter"),
        (m("", "  .reg .b32 L;\nL:\n"), 6, 13, "it already names a label"),
        (m(".global .u32 g;\n.global .u32 g;\n", ""), 5, 14, "module variable `g` is declared twice (first at line 4)"),
        (m(".global .u32 g;\n.shared .u32 g;\n", ""), 5, 14, "declared twice"),
        (m(".weak .global .u32 g;\n.global .u32 g;\n", ""), 5, 14, "declared twice"),
        (m(".global .u32 k;\n", ""), 5, 17, "names both a module variable and a function"),
        (
            ".version 8.0\n.target sm_90\n.address_size 64\n.func f(.param .u32 a, .param .u32 a)\n{\n  ret;\n}\n".to_string(),
            4,
            36,
            "parameter `a` is declared twice",
        ),
        (
            ".version 8.0\n.target sm_90\n.address_size 64\n.func (.param .u32 a) f(.param .u32 a)\n{\n  ret;\n}\n".to_string(),
            4,
            37,
            "parameter `a` is declared twice",
        ),
    ];
    for (src, line, col, want) in &cases {
        assert_rejected_at(src, *line, *col, want);
    }
    // An inner scope may shadow an outer name, a module name may be shadowed in a function, and
    // `.extern` declarations may repeat (all accepted by ptxas).
    for (decls, body) in [
        ("", "  .reg .b32 %r;\n  {\n  .reg .b32 %r;\n  }\n"),
        ("", "  .local .u32 y;\n  {\n  .local .u32 y;\n  }\n"),
        (".global .u32 g;\n", "  .reg .b32 g;\n"),
        (".global .u32 x;\n", ""),
        (
            ".extern .shared .align 16 .b8 s[];\n.extern .shared .align 16 .b8 s[];\n",
            "",
        ),
        ("", "  .reg .b32 %r<3>;\n  .reg .b32 %r;\n"),
    ] {
        let src = m(decls, body);
        parse_module("ok.ptx", &src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    }
}

/// Every recursive construct nested 100,000 deep is a located error, not a host stack
/// overflow (issue 11, item 9). The test runs on an ordinary test thread's stack.
#[test]
fn deep_nesting_is_a_located_error() {
    const N: usize = 100_000;
    let head = ".version 8.0\n.target sm_90\n.address_size 64\n";
    let open = |s: &str| s.repeat(N);
    let body = |inst: &str| {
        format!("{head}.visible .entry k()\n{{\n  .reg .b32 %r;\n  .reg .pred %p;\n{inst}\n}}\n")
    };
    let cases = [
        (
            format!("{head}.global .u32 g = {}1{};\n", open("("), open(")")),
            4,
            ".global .u32 g = ",
        ),
        (
            format!("{head}.global .u32 g = {}1;\n", open("-")),
            4,
            ".global .u32 g = ",
        ),
        (
            format!("{head}.global .u32 g[1] = {}1{};\n", open("{"), open("}")),
            4,
            ".global .u32 g[1] = ",
        ),
        (
            body(&format!("  add.u32 %r, %r, {}1;", open("-"))),
            8,
            "  add.u32 %r, %r, ",
        ),
        (
            body(&format!("  add.u32 %r, %r, {}1{};", open("("), open(")"))),
            8,
            "  add.u32 %r, %r, ",
        ),
        (
            body(&format!("  mov.b32 %r, {}%r{};", open("{"), open("}"))),
            8,
            "  mov.b32 %r, ",
        ),
        (
            body(&format!("  call f, {}{};", open("("), open(")"))),
            8,
            "  call f, ",
        ),
        (
            body(&format!(
                "  ld.global.u32 %r, [{}1{}];",
                open("("),
                open(")")
            )),
            8,
            "  ld.global.u32 %r, [",
        ),
        (
            body(&format!(
                "  ld.global.u32 %r, [%r, {{{}%r{}}}];",
                open("{"),
                open("}")
            )),
            8,
            "  ld.global.u32 %r, [%r, {",
        ),
    ];
    for (src, line, prefix) in &cases {
        let e = rejected(src);
        assert!(
            e.to_string()
                .contains(&format!("nesting deeper than {MAX_NESTING} levels")),
            "{e}"
        );
        // The error points into the run of openers, at the first one past the limit.
        assert_eq!(e.line, *line, "{e}");
        let col = e.col as usize;
        assert!(
            col > prefix.len() && col <= prefix.len() + MAX_NESTING + 1,
            "{e}"
        );
    }
    let scopes = body(&format!("{}  ret;\n{}", open("{\n"), open("}\n")));
    let e = rejected(&scopes);
    assert!(
        e.to_string()
            .contains("scopes nested deeper than 256 levels"),
        "{e}"
    );
    assert_eq!((e.line, e.col), (8 + MAX_NESTING as u32 - 1, 1), "{e}");
    // `!` is not an operator of PTX constant expressions: a long run of them is an ordinary
    // error at the first one.
    let e = rejected(&body(&format!("  @{}%p ret;", open("!"))));
    assert_eq!((e.line, e.col), (8, 5), "{e}");
    // At the limit itself everything still parses.
    let deep_ok = format!(
        "{head}.global .u32 g = {}7{};\n",
        "(".repeat(MAX_NESTING),
        ")".repeat(MAX_NESTING)
    );
    let m = parse_module("ok.ptx", &deep_ok).unwrap();
    assert_eq!(m.symbols[0].init, 7u32.to_le_bytes());
}

/// A long line's tokens get exact columns (the lexer counts columns from the previous token).
#[test]
fn columns_on_long_lines() {
    let head = ".version 8.0\n.target sm_90\n.address_size 64\n";
    let terms = "1+".repeat(50_000);
    let src = format!("{head}.global .u32 g = {terms}1 # x;\n");
    let e = rejected(&src);
    assert_eq!(e.line, 4);
    assert_eq!(e.col as usize, ".global .u32 g = ".len() + terms.len() + 3);
    let m = parse_module("ok.ptx", &format!("{head}.global .u32 g = {terms}1;\n")).unwrap();
    assert_eq!(m.symbols[0].init, 50_001u32.to_le_bytes());
}
