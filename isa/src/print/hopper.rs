//! Printing the Hopper synchronisation and bulk-copy instructions (mbarrier, elect, setmaxnreg,
//! the async-proxy fences, cp.async.bulk{.tensor}); kept apart from the long `op_to_ptx`.

use super::{address, operand, reg};
use crate::ir::*;

fn mbar_space(space: Space, cluster: bool) -> &'static str {
    match (space, cluster) {
        (_, true) => ".shared::cluster",
        (Space::Shared, false) => ".shared::cta",
        _ => "",
    }
}

/// The PTX text of `op` if it is one of this module's instructions.
pub(super) fn to_ptx(m: &Module, f: &Function, op: &Op) -> Option<String> {
    let o = |x: &Operand, t: Type| operand(m, f, x, t);
    let a = |x: &Address| address(m, f, x);
    let r = |x: RegId| reg(f, x).to_string();
    Some(match op {
        Op::MbarInit { space, addr, count } => format!(
            "mbarrier.init{}.b64 {}, {};",
            mbar_space(*space, false),
            a(addr),
            o(count, Type::U32)
        ),
        Op::MbarInval { space, addr } => format!(
            "mbarrier.inval{}.b64 {};",
            mbar_space(*space, false),
            a(addr)
        ),
        Op::MbarArrive {
            space,
            cluster,
            fence,
            addr,
            state,
            count,
            expect_tx,
            drop,
            no_complete,
        } => {
            let mut s = format!("mbarrier.{}", if *drop { "arrive_drop" } else { "arrive" });
            if expect_tx.is_some() {
                s += ".expect_tx";
            }
            if *no_complete {
                s += ".noComplete";
            }
            s += if fence.is_some() {
                ".release.cluster"
            } else {
                ".release.cta"
            };
            s += mbar_space(*space, *cluster);
            s += ".b64 ";
            s += &state.map_or("_".to_string(), r);
            s += ", ";
            s += &a(addr);
            if let Some(t) = expect_tx {
                s += &format!(", {}", o(t, Type::U32));
            }
            if let Some(c) = count {
                s += &format!(", {}", o(c, Type::U32));
            }
            s + ";"
        }
        Op::MbarTx {
            complete,
            space,
            cluster,
            addr,
            bytes,
        } => format!(
            "mbarrier.{}.relaxed.cta{}.b64 {}, {};",
            if *complete {
                "complete_tx"
            } else {
                "expect_tx"
            },
            mbar_space(*space, *cluster),
            a(addr),
            o(bytes, Type::U32)
        ),
        Op::MbarWait {
            blocking,
            parity,
            done,
            space,
            addr,
            phase,
            hint,
        } => format!(
            "mbarrier.{}{}{}.b64 {}, {}, {}{};",
            if *blocking { "try_wait" } else { "test_wait" },
            if *parity { ".parity" } else { "" },
            mbar_space(*space, false),
            r(*done),
            a(addr),
            o(phase, if *parity { Type::U32 } else { Type::B64 }),
            hint.as_ref()
                .map_or(String::new(), |h| format!(", {}", o(h, Type::U32)))
        ),
        Op::MbarPendingCount { d, state } => format!(
            "mbarrier.pending_count.b64 {}, {};",
            r(*d),
            o(state, Type::B64)
        ),
        Op::CpAsyncMbarArrive { noinc, space, addr } => format!(
            "cp.async.mbarrier.arrive{}{}.b64 {};",
            if *noinc { ".noinc" } else { "" },
            mbar_space(*space, false),
            a(addr)
        ),
        Op::FenceProxyAsync {
            mbarrier_init: true,
            ..
        } => "fence.mbarrier_init.release.cluster;".to_string(),
        Op::FenceProxyAsync { space, .. } => format!(
            "fence.proxy.async{};",
            match space {
                Some(Space::Global) => ".global",
                Some(Space::Shared) => ".shared::cta",
                _ => "",
            }
        ),
        Op::ElectSync { d, p, mask } => format!(
            "elect.sync {}|{}, {};",
            d.map_or("_".to_string(), r),
            r(*p),
            o(mask, Type::B32)
        ),
        Op::Setmaxnreg { inc, count } => format!(
            "setmaxnreg.{}.sync.aligned.u32 {count};",
            if *inc { "inc" } else { "dec" }
        ),
        Op::CpAsyncBulk {
            dir,
            dst,
            src,
            size,
            mbar,
            multicast,
        } => {
            let head = match dir {
                BulkDir::GlobalToShared => {
                    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                }
                BulkDir::SharedToGlobal => "cp.async.bulk.global.shared::cta.bulk_group",
                BulkDir::SharedToCluster => {
                    "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes"
                }
            };
            let mc = if multicast.is_some() {
                ".multicast::cluster"
            } else {
                ""
            };
            let mut s = format!("{head}{mc} {}, {}, {}", a(dst), a(src), o(size, Type::U32));
            if let Some(b) = mbar {
                s += &format!(", {}", a(b));
            }
            if let Some(c) = multicast {
                s += &format!(", {}", o(c, Type::B16));
            }
            s + ";"
        }
        Op::CpAsyncBulkTensor {
            dir,
            rank,
            smem,
            tmap,
            coords,
            mbar,
            multicast,
        } => {
            let cs: Vec<String> = coords[..*rank as usize]
                .iter()
                .map(|c| o(c, Type::S32))
                .collect();
            let tensor = format!("{}, {{{}}}]", a(tmap).trim_end_matches(']'), cs.join(", "));
            match dir {
                TensorDir::Load => {
                    let mc = if multicast.is_some() {
                        ".multicast::cluster"
                    } else {
                        ""
                    };
                    let mut s = format!(
                        "cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes{mc} {}, {tensor}, {}",
                        a(smem),
                        mbar.as_ref().map_or("[?]".to_string(), a)
                    );
                    if let Some(c) = multicast {
                        s += &format!(", {}", o(c, Type::B16));
                    }
                    s + ";"
                }
                TensorDir::Store => format!(
                    "cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group {tensor}, {};",
                    a(smem)
                ),
                TensorDir::Reduce(red) => format!(
                    "cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta.{}.tile.bulk_group {tensor}, {};",
                    red.name(),
                    a(smem)
                ),
            }
        }
        Op::BarrierCluster { wait: false } => "barrier.cluster.arrive.release.aligned;".to_string(),
        Op::BarrierCluster { wait: true } => "barrier.cluster.wait.acquire.aligned;".to_string(),
        Op::Mapa {
            generic,
            d,
            a,
            rank,
        } => {
            let ty = if *generic { Type::U64 } else { Type::U32 };
            format!(
                "mapa{}.{} {}, {}, {};",
                if *generic { "" } else { ".shared::cluster" },
                ty.name(),
                r(*d),
                o(a, ty),
                o(rank, Type::U32)
            )
        }
        Op::CpAsyncBulkCommit => "cp.async.bulk.commit_group;".to_string(),
        Op::CpAsyncBulkWait { n, read } => format!(
            "cp.async.bulk.wait_group{} {n};",
            if *read { ".read" } else { "" }
        ),
        _ => return None,
    })
}
