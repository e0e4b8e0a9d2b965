//! `wgmma` (PTX ISA 9.0 §9.7.15): the parser's forms and located errors, and the semantics of
//! a whole warpgroup (four warps' slices) against an independent reference — matrices written
//! into shared memory by a separate implementation of the canonical layouts, D assembled from
//! the fragments by cute's accumulator layout formula, and a naive f64 product.

mod common;

use gpusim_isa::semantics::{
    self as sem, element_value, wgmma_slice, MatrixDesc, Swizzle, WgmmaSpec,
};
use gpusim_isa::{parse_module, print, Module, Op, Type, WgmmaA, WgmmaType};
use half::{bf16, f16};
use proptest::prelude::*;

fn list(p: &str, n: usize) -> String {
    let r: Vec<String> = (0..n).map(|i| format!("{p}{i}")).collect();
    format!("{{{}}}", r.join(", "))
}

fn module(lines: &[&str]) -> String {
    let mut s = String::from(
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n\
         \x20 .reg .f32 %f<130>;\n  .reg .b32 %h<70>;\n  .reg .b32 %a<4>;\n  .reg .b64 %da, %db;\n\
         \x20 .reg .pred %p;\n",
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

fn reparse(m: &Module) {
    let f = &m.functions[0];
    let text = print::function_to_ptx(m, f);
    let src = format!(".version 8.0\n.target sm_90a\n.address_size 64\n{text}");
    let again = parse_module("again.ptx", &src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    for (x, y) in f.body.iter().zip(&again.functions[0].body) {
        assert_eq!(x.op, y.op, "{src}");
    }
}

/// The forms ptxas 12.x accepts for sm_90a (checked when these tests were written) decode to the
/// expected IR and print back to the same IR.
#[test]
fn accepted_forms_round_trip() {
    let lines = [
        format!(
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {}, %da, %db, %p, 1, 1, 0, 0;",
            list("%f", 64)
        ),
        format!(
            "wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16 {}, {}, %db, 1, -1, 1, 1;",
            list("%h", 16),
            list("%a", 4)
        ),
        format!(
            "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {}, %da, %db, 0, 1, 1;",
            list("%f", 32)
        ),
        format!(
            "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2 {}, %da, %db, !%p, 1, 1;",
            list("%f", 32)
        ),
        format!(
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {}, %da, %db, %p, 1, 1, 0, 1;",
            list("%f", 128)
        ),
        format!(
            "wgmma.mma_async.sync.aligned.m64n24k32.f16.e4m3.e4m3 {}, {}, %db, %p, 1, 1;",
            list("%h", 6),
            list("%a", 4)
        ),
        "wgmma.fence.sync.aligned;".into(),
        "wgmma.commit_group.sync.aligned;".into(),
        "wgmma.wait_group.sync.aligned 1;".into(),
    ];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let m = parse_module("ok.ptx", &module(&refs)).unwrap_or_else(|e| panic!("{e}"));
    let body = &m.functions[0].body;
    let Op::Wgmma(w) = &body[0].op else {
        panic!("{:?}", body[0].op)
    };
    assert_eq!(
        (w.n, w.dty, w.aty, w.bty),
        (128, Type::F32, WgmmaType::Bf16, WgmmaType::Bf16)
    );
    assert_eq!(w.d.len(), 64);
    assert!(matches!(w.a, WgmmaA::Desc(_)) && !w.trans_a && !w.trans_b && !w.neg_a);
    let Op::Wgmma(w) = &body[1].op else { panic!() };
    assert!(matches!(&w.a, WgmmaA::Regs(l) if l.len() == 4));
    assert!(w.neg_a && !w.neg_b && w.trans_b && w.d.len() == 16 && w.dty == Type::F16);
    let Op::Wgmma(w) = &body[4].op else { panic!() };
    assert_eq!((w.n, w.d.len()), (256, 128));
    assert!(w.trans_b && !w.trans_a);
    let Op::Wgmma(w) = &body[5].op else { panic!() };
    assert_eq!((w.n, w.d.len(), w.aty.k()), (24, 6, 32));
    assert_eq!(body[8].op, Op::WgmmaWait { n: 1 });
    reparse(&m);
}

#[test]
fn bad_forms_are_located_errors() {
    let f64_ = list("%f", 64);
    let f32_ = list("%f", 32);
    let cases: Vec<(String, &str, &str)> = vec![
        (
            format!("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {f32_}, %da, %db, %p, 1, 1, 0, 0;"),
            "takes 64 registers here, found 32",
            "{%f0",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n132k16.f32.f16.f16 {f64_}, %da, %db, %p, 1, 1, 0, 0;"),
            "unsupported `wgmma` shape .m64n132k16",
            ".m64n132k16",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n128k8.f32.f16.f16 {f64_}, %da, %db, %p, 1, 1, 0, 0;"),
            "expected .m64nNk16",
            ".m64n128k8",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n64k16.f32.f8.f16 {f32_}, %da, %db, %p, 1, 1, 0, 0;"),
            "unsupported `wgmma` input type .f8",
            ".f8.f16",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n64k16.f16.bf16.bf16 {f32_}, %da, %db, %p, 1, 1, 0, 0;"),
            "not defined for .f16.bf16.bf16",
            "wgmma",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {f32_}, %da, %db, %p, 1, 1, 0, 0;"),
            "takes 6 operands",
            "wgmma",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {f32_}, %da, %db, %p, 2, 1, 0, 0;"),
            "imm-scale-a is an immediate: 1 or -1",
            "2, 1, 0",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {f32_}, %da, %db, %p, 1, 1, 0, 3;"),
            "imm-trans-b is an immediate: 0 or 1",
            "3;",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {f32_}, %da, %db, %a0, 1, 1, 0, 0;"),
            "scale-d is a predicate",
            "%a0",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {f32_}, {{%a0, %a1}}, %db, %p, 1, 1, 0;"),
            "operand a takes 4 registers here, found 2",
            "{%a0",
        ),
        (
            "wgmma.mma_async.m64n64k16.f32.f16.f16 %f0, %da, %db, %p, 1, 1, 0, 0;".into(),
            "needs .sync and .aligned",
            "wgmma",
        ),
        ("wgmma.wait_group.sync.aligned %a0;".into(), "integer constant", "%a0"),
        ("wgmma.arrive.sync.aligned;".into(), "unsupported `wgmma` form", "wgmma"),
    ];
    common::assert_located_errors(&cases, "wgmma.fence.sync.aligned;", module, FIRST_LINE);
}

// ---- The independent reference ----

/// Shared memory written by the reference: the byte offset of element (mn, k) of a canonical
/// layout, written from the layout definitions (cute `Layout_{K,MN}_SW*_Atom` tiled to shape).
fn ref_offset(
    layout: (bool, Swizzle),
    size: usize,
    (mn, k): (usize, usize),
    (lbo, sbo): (usize, usize),
) -> usize {
    let (mn_major, sw) = layout;
    let row_bytes = match sw {
        Swizzle::None => 16,
        s => s.bytes() as usize,
    };
    let raw = if !mn_major {
        // 8 rows of `row_bytes` form an atom; atoms stack along mn every SBO bytes.
        let kb = k * size;
        let within = if sw == Swizzle::None {
            (kb / 16) * lbo + kb % 16
        } else {
            kb
        };
        (mn / 8) * sbo + (mn % 8) * row_bytes + within
    } else {
        let mb = mn * size;
        if sw == Swizzle::None {
            (mb / 16) * sbo + (k % 8) * 16 + (k / 8) * lbo + mb % 16
        } else {
            (mb / row_bytes) * lbo + (k / 8) * sbo + (k % 8) * row_bytes + mb % row_bytes
        }
    };
    // The XOR pattern: 16-byte chunk c of 128-byte line r goes to chunk c ^ (r mod 2^b).
    let b = sw.bits() as usize;
    let line = raw / 128;
    let chunk = (raw / 16) % 8;
    let swz = chunk ^ (line % (1 << b));
    raw - chunk * 16 + swz * 16
}

/// The accumulator layout of cute's CLayout_64xN: thread t, value v ↦ (m, n).
fn c_layout(t: usize, v: usize) -> (usize, usize) {
    let (t0, t1, t2) = (t % 4, (t / 4) % 8, t / 32);
    let (v0, v1, v2) = (v % 2, (v / 2) % 2, v / 4);
    let idx = t0 * 128 + t1 + t2 * 16 + v0 * 64 + v1 * 8 + v2 * 512;
    (idx % 64, idx / 64)
}

fn rand_bits(ty: WgmmaType, x: u64) -> u32 {
    // Small values of each type so the products and sums stay exact-ish and finite.
    let v = ((x % 15) as f32 - 7.0) / 4.0;
    match ty {
        WgmmaType::F16 => f16::from_f32(v).to_bits() as u32,
        WgmmaType::Bf16 => bf16::from_f32(v).to_bits() as u32,
        WgmmaType::Tf32 => v.to_bits() | (x as u32 & 0x1FFF),
        // fp8: any pattern but the NaNs (e4m3 S.1111.111, e5m2 exponent 31).
        WgmmaType::E4m3 => {
            let v = x as u32 & 0xFF;
            if v & 0x7F == 0x7F {
                v ^ 1
            } else {
                v
            }
        }
        WgmmaType::E5m2 => {
            let v = x as u32 & 0xFF;
            if (v >> 2) & 0x1F == 0x1F {
                v & !0x40
            } else {
                v
            }
        }
    }
}

struct Case {
    n: usize,
    dty: Type,
    aty: WgmmaType,
    bty: WgmmaType,
    sw_a: Swizzle,
    sw_b: Swizzle,
    trans_a: bool,
    trans_b: bool,
    a_regs: bool,
    neg: (bool, bool),
    scale_d: bool,
    seed: u64,
}

fn lcg(s: &mut u64) -> u64 {
    *s = s
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *s >> 24
}

/// Compact canonical (LBO, SBO) of a layout with `extent` mn elements of `size` bytes and K = `k`.
fn strides(mn_major: bool, sw: Swizzle, size: usize, extent: usize, k: usize) -> (usize, usize) {
    let row = if sw == Swizzle::None {
        16
    } else {
        sw.bytes() as usize
    };
    match (mn_major, sw) {
        // Core matrices of 8 rows × 16 bytes: the two K chunks of a row group side by side.
        (false, Swizzle::None) => (128, 256),
        // Rows of `row` bytes hold all 32 bytes of K; 8-row atoms one after the other.
        (false, _) => (16, 8 * row),
        // 8 k × 16 bytes of mn per core matrix; all mn chunks of a k group, then the next.
        (true, Swizzle::None) => (extent * size / 16 * 128, 128),
        // Atoms of `row` bytes of mn × 8 k: the K / 8 k groups of an atom, then the next atom.
        (true, _) => (k / 8 * 8 * row, 8 * row),
    }
}

fn run_case(c: &Case) {
    let k = c.aty.k();
    let (sa, sb) = (c.aty.size() as usize, c.bty.size() as usize);
    let mut seed = c.seed;
    let a: Vec<u32> = (0..64 * k)
        .map(|_| rand_bits(c.aty, lcg(&mut seed)))
        .collect();
    let b: Vec<u32> = (0..k * c.n)
        .map(|_| rand_bits(c.bty, lcg(&mut seed)))
        .collect();
    let mut smem = vec![0u8; 1 << 16];
    let a_base = 1024usize;
    let b_base = 32768usize;
    let (alay, blay) = ((c.trans_a, c.sw_a), (c.trans_b, c.sw_b));
    let (albo, asbo) = strides(c.trans_a, c.sw_a, sa, 64, k);
    let (blbo, bsbo) = strides(c.trans_b, c.sw_b, sb, c.n, k);
    let put = |smem: &mut Vec<u8>, base: usize, off: usize, size: usize, bits: u32| {
        for i in 0..size {
            smem[base + off + i] = (bits >> (8 * i)) as u8;
        }
    };
    for m in 0..64 {
        for kk in 0..k {
            let off = ref_offset(alay, sa, (m, kk), (albo, asbo));
            put(&mut smem, a_base, off, sa, a[m * k + kk]);
        }
    }
    for j in 0..c.n {
        for kk in 0..k {
            let off = ref_offset(blay, sb, (j, kk), (blbo, bsbo));
            put(&mut smem, b_base, off, sb, b[kk * c.n + j]);
        }
    }
    let desc = |base: usize, sw: Swizzle, lbo: usize, sbo: usize| MatrixDesc {
        start: base as u64,
        lbo: lbo as u64,
        sbo: sbo as u64,
        base_offset: 0,
        swizzle: sw,
    };
    let adesc = desc(a_base, c.sw_a, albo, asbo);
    let bdesc = desc(b_base, c.sw_b, blbo, bsbo);
    let read = |d: &MatrixDesc, mn_major: bool, size: usize, mn: usize, kk: usize| {
        let at = sem::element_addr(d, mn_major, size as u32, mn, kk) as usize;
        (0..size).fold(0u32, |v, i| v | (smem[at + i] as u32) << (8 * i))
    };
    let spec = WgmmaSpec {
        n: c.n,
        dty: c.dty,
        aty: c.aty,
        bty: c.bty,
        neg_a: c.neg.0,
        neg_b: c.neg.1,
    };
    let nregs = sem::d_regs(c.n, c.dty);
    let bs: Vec<u32> = (0..k * c.n)
        .map(|i| read(&bdesc, c.trans_b, sb, i % c.n, i / c.n))
        .collect();
    assert_eq!(bs, b, "B read back through the descriptor");
    // Initial D: value v of thread t holds a small number depending on (m, n).
    let c_val = |m: usize, n: usize| ((m * 7 + n * 3) % 11) as f64 / 8.0 - 0.5;
    let mut out = vec![[0f64; 256]; 64];
    for q in 0..4 {
        let aslice: Vec<u32> = if c.a_regs {
            // Each lane's registers by the fragment formula written here independently.
            let mut regs = [[0u64; 4]; 32];
            for (lane, r) in regs.iter_mut().enumerate() {
                let (g, t) = (lane / 4, lane % 4);
                for (ri, reg) in r.iter_mut().enumerate() {
                    let per = 4 / sa;
                    for e in 0..per {
                        let (row, col) = match sa {
                            2 => (g + 8 * (ri % 2), 2 * t + e + 8 * (ri / 2)),
                            4 => (g + 8 * (ri % 2), t + 4 * (ri / 2)),
                            _ => (g + 8 * (ri % 2), 4 * t + e + 16 * (ri / 2)),
                        };
                        *reg |= (a[(16 * q + row) * k + col] as u64) << (8 * sa * e);
                    }
                }
            }
            sem::a_from_regs(c.aty, &regs)
        } else {
            (0..16 * k)
                .map(|i| read(&adesc, c.trans_a, sa, 16 * q + i / k, i % k))
                .collect()
        };
        assert_eq!(
            aslice,
            a[16 * q * k..16 * (q + 1) * k],
            "A slice of warp {q}"
        );
        let mut d = vec![0u64; 32 * nregs];
        for lane in 0..32 {
            for v in 0..nregs * if c.dty == Type::F16 { 2 } else { 1 } {
                let (m, n) = c_layout(32 * q + lane, v);
                let x = c_val(m, n);
                if c.dty == Type::F16 {
                    let h = f16::from_f64(x).to_bits() as u64;
                    d[lane * nregs + v / 2] |= h << (16 * (v % 2));
                } else {
                    d[lane * nregs + v] = (x as f32).to_bits() as u64;
                }
            }
        }
        wgmma_slice(&spec, &aslice, &bs, &mut d, c.scale_d).expect("a defined form");
        for lane in 0..32 {
            for v in 0..nregs * if c.dty == Type::F16 { 2 } else { 1 } {
                let (m, n) = c_layout(32 * q + lane, v);
                out[m][n] = if c.dty == Type::F16 {
                    f16::from_bits((d[lane * nregs + v / 2] >> (16 * (v % 2))) as u16).to_f64()
                } else {
                    f32::from_bits(d[lane * nregs + v] as u32) as f64
                };
            }
        }
    }
    let (na, nb) = (
        if c.neg.0 { -1.0 } else { 1.0 },
        if c.neg.1 { -1.0 } else { 1.0 },
    );
    for (m, row) in out.iter().enumerate() {
        for (n, &got) in row.iter().enumerate().take(c.n) {
            let mut acc = if c.scale_d { c_val(m, n) } else { 0.0 };
            if c.scale_d && c.dty == Type::F16 {
                acc = f16::from_f64(acc).to_f64();
            }
            for kk in 0..k {
                acc += na
                    * element_value(c.aty, a[m * k + kk])
                    * nb
                    * element_value(c.bty, b[kk * c.n + n]);
            }
            let want = if c.dty == Type::F16 {
                f16::from_f64(acc).to_f64()
            } else {
                acc as f32 as f64
            };
            assert!(
                want == got || (want.is_nan() && got.is_nan()),
                "D[{m}][{n}] = {got}, want {want}"
            );
        }
    }
}

fn swz(i: u8) -> Swizzle {
    [Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128][i as usize % 4]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn warpgroup_matches_reference(
        n8 in 1usize..=32,
        ty in 0u8..5,
        f16_acc in any::<bool>(),
        sw_a in 0u8..4,
        sw_b in 0u8..4,
        trans in 0u8..4,
        a_regs in any::<bool>(),
        neg in 0u8..4,
        scale_d in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let (aty, bty) = match ty {
            0 => (WgmmaType::F16, WgmmaType::F16),
            1 => (WgmmaType::Bf16, WgmmaType::Bf16),
            2 => (WgmmaType::Tf32, WgmmaType::Tf32),
            3 => (WgmmaType::E4m3, WgmmaType::E5m2),
            _ => (WgmmaType::E5m2, WgmmaType::E4m3),
        };
        let dty = if f16_acc && sem::types_valid(Type::F16, aty, bty) { Type::F16 } else { Type::F32 };
        let tr = sem::transpose_allowed(aty);
        run_case(&Case {
            n: 8 * n8,
            dty,
            aty,
            bty,
            sw_a: swz(sw_a),
            sw_b: swz(sw_b),
            trans_a: tr && trans & 1 == 1 && !a_regs,
            trans_b: tr && trans & 2 == 2,
            a_regs,
            neg: (neg & 1 == 1, neg & 2 == 2),
            scale_d,
            seed,
        });
    }
}

/// TMA and `wgmma` agree wherever the tile lies (issue 11, item 3): both swizzle by the
/// CTA's shared address, so a swizzled K-major bf16 tile TMA wrote at any 128-byte aligned
/// shared address — on a 1024-byte boundary or 128·j bytes past one, as a dynamic window after
/// a few static mbarriers is — is read element for element by a descriptor starting at the
/// tile (base offset 0), at every k-step (start advanced 32 bytes) and for a second
/// warpgroup's rows (start 64 rows further), in each swizzle mode.
#[test]
fn wgmma_reads_what_tma_wrote_at_any_tile_address() {
    use gpusim_isa::semantics::tensor_map::{TensorMap, TmaType, TMA_MAX_RANK};
    for sw in [Swizzle::B32, Swizzle::B64, Swizzle::B128] {
        let span = sw.bytes();
        let map = TensorMap {
            global: 0,
            dtype: TmaType::Bf16,
            rank: 2,
            dims: [span / 2, 128, 1, 1, 1],
            strides: [span, 0, 0, 0],
            boxd: [span as u32 / 2, 128, 1, 1, 1],
            estrides: [1; TMA_MAX_RANK],
            swizzle: sw,
            oob_nan: false,
        };
        map.validate().unwrap();
        for j in 0..8u64 {
            let tile = 5 * 1024 + 128 * j;
            // (row, k) of the box is byte span·row + 2·k of its image, placed by TMA at:
            let tma = |row: u64, k: u64| map.shared_addr(tile, span * row + 2 * k);
            for half in 0..2u64 {
                for step in 0..span / 32 {
                    let d = MatrixDesc {
                        start: tile + half * 64 * span + 32 * step,
                        lbo: 16,
                        sbo: 8 * span,
                        base_offset: 0,
                        swizzle: sw,
                    };
                    for r in 0..64usize {
                        for kk in 0..16usize {
                            let got = sem::element_addr(&d, false, 2, r, kk);
                            let want = tma(64 * half + r as u64, 16 * step + kk as u64);
                            assert_eq!(
                                got, want,
                                "{sw:?} tile {tile:#x} rows {half} k-step {step} ({r}, {kk})"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// The descriptor's base offset (PTX ISA 9.0 §9.7.15.5.1.2.2) is for a swizzle pattern that
/// starts off a repeat boundary: with base offset (pattern start >> 7) & 7 the rows are
/// counted from the pattern's start. A tile a kernel swizzled itself relative to its buffer at
/// P = 1024·i + 128·j (row r's chunk c at P + 128·r + 16·(c ^ r mod 8)) is read back, at
/// every k-step; with base offset 0 the same descriptor reads the address pattern instead.
#[test]
fn base_offset_counts_rows_from_the_pattern_start() {
    for j in 1..8u64 {
        let p = 4096 + 128 * j;
        let written = |r: u64, k: u64| p + 128 * r + 16 * ((k / 8) ^ (r % 8)) + 2 * (k % 8);
        for step in 0..4u64 {
            let mut d = MatrixDesc {
                start: p + 32 * step,
                lbo: 16,
                sbo: 1024,
                base_offset: (p >> 7) & 7,
                swizzle: Swizzle::B128,
            };
            let mut differs = false;
            for r in 0..16usize {
                for kk in 0..16usize {
                    let want = written(r as u64, 16 * step + kk as u64);
                    assert_eq!(sem::element_addr(&d, false, 2, r, kk), want);
                    d.base_offset = 0;
                    differs |= sem::element_addr(&d, false, 2, r, kk) != want;
                    d.base_offset = (p >> 7) & 7;
                }
            }
            assert!(differs, "base offset {j} must change what is read");
        }
    }
}
