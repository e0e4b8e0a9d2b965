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
