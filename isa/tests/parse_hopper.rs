//! Parser tests for the Hopper synchronisation and bulk-copy instructions: mbarrier.*,
//! cp.async.mbarrier.arrive, elect.sync, setmaxnreg, fence.proxy.async,
//! fence.mbarrier_init, cp.async.bulk{.tensor}, cp.reduce.async.bulk.tensor and the bulk
//! groups (PTX ISA 9.0 §9.7.9.25.4–5, §9.7.13.4, §9.7.13.15). Each accepted form decodes to the
//! expected IR and prints back to text that parses to the same IR; malformed forms are errors
//! at file:line:col.

mod common;

use gpusim_isa::{parse_module, print, BulkDir, Module, Op, Operand, Space, TensorDir, TmaReduce};

/// A kernel whose body is `lines`, one per line starting at line 12, column 3.
fn module(lines: &[&str]) -> String {
    let mut s = String::from(
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .align 64 .b8 tmap[128], .param .u64 p)\n{\n\
         \x20 .reg .b32 %r<8>;\n  .reg .b64 %rd<8>;\n  .reg .pred %p<4>;\n  .shared .align 8 .b64 bar;\n\
         \x20 .shared .align 128 .b8 buf[1024];\n  mov.u32 %r0, bar;\n",
    );
    for l in lines {
        s.push_str("  ");
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("  ret;\n}\n");
    s
}

const FIRST_LINE: u32 = 12;

fn parse(lines: &[&str]) -> Module {
    parse_module("hopper.ptx", &module(lines)).unwrap_or_else(|e| panic!("{e}"))
}

/// Parses `line`, checks that its printed form parses to the same op, and returns the op.
fn round_trip(line: &str) -> Op {
    let m = parse(&[line]);
    let f = &m.functions[0];
    let op = f.body[1].op.clone();
    let text = print::inst_to_ptx(&m, f, &f.body[1]);
    let again = parse(&[&text]);
    assert_eq!(again.functions[0].body[1].op, op, "{line} → {text}");
    op
}

#[test]
fn mbarrier_forms_decode_and_print_back() {
    assert!(matches!(
        round_trip("mbarrier.init.shared::cta.b64 [%r0], 128;"),
        Op::MbarInit {
            space: Space::Shared,
            count: Operand::Imm(128),
            ..
        }
    ));
    assert!(matches!(
        round_trip("mbarrier.inval.shared.b64 [%r0];"),
        Op::MbarInval { .. }
    ));
    assert!(matches!(
        round_trip("mbarrier.arrive.shared::cta.b64 %rd1, [%r0];"),
        Op::MbarArrive {
            state: Some(_),
            count: None,
            expect_tx: None,
            drop: false,
            no_complete: false,
            cluster: false,
            ..
        }
    ));
    assert!(matches!(
        round_trip("mbarrier.arrive.release.cta.shared::cta.b64 %rd1, [%r0], 4;"),
        Op::MbarArrive {
            count: Some(Operand::Imm(4)),
            ..
        }
    ));
    assert!(matches!(
        round_trip("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r0], 4096;"),
        Op::MbarArrive {
            state: None,
            expect_tx: Some(Operand::Imm(4096)),
            ..
        }
    ));
    assert!(matches!(
        round_trip("mbarrier.arrive.shared::cluster.b64 _, [%r0];"),
        Op::MbarArrive { cluster: true, .. }
    ));
    assert!(matches!(
        round_trip("mbarrier.arrive.noComplete.shared.b64 %rd1, [%r0], 2;"),
        Op::MbarArrive {
            no_complete: true,
            count: Some(_),
            ..
        }
    ));
    assert!(matches!(
        round_trip("mbarrier.arrive_drop.shared.b64 %rd1, [%r0];"),
        Op::MbarArrive { drop: true, .. }
    ));
    assert!(matches!(
        round_trip("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r0], 256;"),
        Op::MbarTx {
            complete: false,
            ..
        }
    ));
    assert!(matches!(
        round_trip("mbarrier.complete_tx.shared::cta.b64 [%r0], 256;"),
        Op::MbarTx { complete: true, .. }
    ));
    assert!(matches!(
        round_trip("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r0], %r1;"),
        Op::MbarWait {
            blocking: true,
            parity: true,
            hint: None,
            ..
        }
    ));
    assert!(matches!(
        round_trip("mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p1, [%r0], 1, 1000;"),
        Op::MbarWait { hint: Some(_), .. }
    ));
    assert!(matches!(
        round_trip("mbarrier.test_wait.shared.b64 %p1, [%r0], %rd1;"),
        Op::MbarWait {
            blocking: false,
            parity: false,
            ..
        }
    ));
    assert!(matches!(
        round_trip("mbarrier.pending_count.b64 %r1, %rd1;"),
        Op::MbarPendingCount { .. }
    ));
    assert!(matches!(
        round_trip("cp.async.mbarrier.arrive.noinc.shared.b64 [%r0];"),
        Op::CpAsyncMbarArrive { noinc: true, .. }
    ));
    // a generic address
    assert!(matches!(
        round_trip("mbarrier.arrive.b64 %rd1, [%rd2];"),
        Op::MbarArrive {
            space: Space::Generic,
            ..
        }
    ));
}

#[test]
fn warp_and_fence_forms_decode_and_print_back() {
    assert!(matches!(
        round_trip("elect.sync %r1|%p1, 0xffffffff;"),
        Op::ElectSync { d: Some(_), .. }
    ));
    assert!(matches!(
        round_trip("elect.sync _|%p1, -1;"),
        Op::ElectSync { d: None, .. }
    ));
    assert!(matches!(
        round_trip("setmaxnreg.inc.sync.aligned.u32 232;"),
        Op::Setmaxnreg {
            inc: true,
            count: 232
        }
    ));
    assert!(matches!(
        round_trip("setmaxnreg.dec.sync.aligned.u32 40;"),
        Op::Setmaxnreg {
            inc: false,
            count: 40
        }
    ));
    assert!(matches!(
        round_trip("fence.proxy.async.shared::cta;"),
        Op::FenceProxyAsync {
            space: Some(Space::Shared),
            mbarrier_init: false
        }
    ));
    assert!(matches!(
        round_trip("fence.proxy.async;"),
        Op::FenceProxyAsync { space: None, .. }
    ));
    assert!(matches!(
        round_trip("fence.mbarrier_init.release.cluster;"),
        Op::FenceProxyAsync {
            mbarrier_init: true,
            ..
        }
    ));
}

#[test]
fn bulk_copy_forms_decode_and_print_back() {
    assert!(matches!(
        round_trip("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 256, [%r0];"),
        Op::CpAsyncBulk { dir: BulkDir::GlobalToShared, mbar: Some(_), multicast: None, .. }
    ));
    assert!(matches!(
        round_trip("cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 512;"),
        Op::CpAsyncBulk {
            dir: BulkDir::SharedToGlobal,
            mbar: None,
            ..
        }
    ));
    assert!(matches!(
        round_trip("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r1], [%r2], 64, [%r0];"),
        Op::CpAsyncBulk { dir: BulkDir::SharedToCluster, .. }
    ));
    assert!(matches!(
        round_trip("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1], 256, [%r0], %rs1;".replace("%rs1", "1").as_str()),
        Op::CpAsyncBulk { multicast: Some(_), .. }
    ));
    assert!(matches!(
        round_trip("cp.async.bulk.commit_group;"),
        Op::CpAsyncBulkCommit
    ));
    assert!(matches!(
        round_trip("cp.async.bulk.wait_group.read 1;"),
        Op::CpAsyncBulkWait { n: 1, read: true }
    ));
    assert!(matches!(
        round_trip("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r0];"),
        Op::CpAsyncBulkTensor { dir: TensorDir::Load, rank: 2, .. }
    ));
    assert!(matches!(
        round_trip("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [tmap, {%r2, %r3, 0}], [%r0];"),
        Op::CpAsyncBulkTensor { rank: 3, .. }
    ));
    assert!(matches!(
        round_trip(
            "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%rd1, {%r2}], [%r1];"
        ),
        Op::CpAsyncBulkTensor {
            dir: TensorDir::Store,
            rank: 1,
            ..
        }
    ));
    assert!(matches!(
        round_trip("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r2, %r3}], [%r1];"),
        Op::CpAsyncBulkTensor { dir: TensorDir::Reduce(TmaReduce::Add), .. }
    ));
    assert!(matches!(
        round_trip("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1, {%r2, %r3}], [%r0], 3;"),
        Op::CpAsyncBulkTensor { multicast: Some(Operand::Imm(3)), .. }
    ));
    // a cache hint adds its policy operand
    assert!(matches!(
        round_trip("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint [%rd1, {%r2, %r3}], [%r1], %rd3;"),
        Op::CpAsyncBulkTensor { dir: TensorDir::Store, .. }
    ));
}

#[test]
fn malformed_forms_are_located_errors() {
    let cases: &[(&str, &str, &str)] = &[
        ("mbarrier.shared.b64 [%r0];", "needs an operation", "mbarrier"),
        ("mbarrier.init.shared.b32 [%r0], 1;", "takes .b64", "mbarrier"),
        ("mbarrier.init.shared.b64 [%r0];", "takes 2 operands", "mbarrier"),
        ("mbarrier.arrive.shared::cluster.b64 %rd1, [%r0];", "returns no state", "%rd1"),
        ("mbarrier.try_wait.parity.shared.b64 %p1, [%r0];", "phaseParity", "mbarrier"),
        ("setmaxnreg.inc.sync.aligned.u32 230;", "multiple of 8", "230"),
        ("setmaxnreg.sync.aligned.u32 64;", "needs .inc or .dec", "setmaxnreg"),
        ("elect.sync %r1, -1;", "d|p", "%r1"),
        ("fence.proxy.alias;", "fence.proxy.async", "fence"),
        ("cp.async.bulk.tensor.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r0];", "rank", "cp"),
        ("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r0];", "takes 2 coordinates", "[%rd1"),
        ("cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r0];", ".tile load mode", "cp"),
        ("cp.async.bulk.tensor.2d.global.shared::cta.tile [%rd1, {%r2, %r3}], [%r1];", ".bulk_group", "cp"),
        ("cp.async.bulk.shared::cluster.global [%r1], [%rd1], 256, [%r0];", "mbarrier::complete_tx", "cp"),
        ("cp.reduce.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {%r2, %r3}], [%r1];", "needs a reduction", "cp"),
        ("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1], [%r0];", "tensor operand", "[%rd1"),
    ];
    common::assert_located_errors(cases, "mov.u32 %r1, 0;", module, FIRST_LINE);
}
