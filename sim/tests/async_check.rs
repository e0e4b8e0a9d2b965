//! `gpusim check`'s asynchronous-synchronisation checker (gpusim_models::async_sync) on the
//! traces: the correct Hopper kernels check clean, and each deliberately broken variant of the
//! warp-specialised GEMM (traces/gemm/hopper_ws_broken, from `gen.py --broken`) is reported
//! with the rule and PTX line its `expect` sidecar names; the Exo-GPU paper's bug examples
//! (traces/litmus/async, digest `exo-gpu.md` §2.3) report their rule and line and their fixed
//! counterparts check clean; the clustered GEMMs are checked with their cross-CTA traffic.

mod common;

use common::root;

use gpusim::check::{check, CheckOptions};
use gpusim_models::async_sync::{EventKind, MemSpace};

fn opts() -> CheckOptions {
    CheckOptions {
        config: None,
        sets: Vec::new(),
        policy: None,
        runs: 1,
        seed: 1,
        threads: 1,
    }
}

#[test]
fn correct_hopper_kernels_check_clean() {
    let r = root();
    for m in [
        "traces/gemm/hopper_ws_bf16/hopper_ws_bf16.yaml",
        "traces/gemm/hopper_ws_tf32/hopper_ws_tf32.yaml",
        "traces/gemm/hopper_ws_bf16_splitk/hopper_ws_bf16_splitk.yaml",
        "traces/tensor/tma_tile/tma_tile.yaml",
        "traces/tensor/wgmma_bf16_m64n128k16_ss/wgmma_bf16_m64n128k16_ss.yaml",
        "traces/tensor/wgmma_f16_rs/wgmma_f16_rs.yaml",
        "traces/tensor/cp_async_pipeline/cp_async_pipeline.yaml",
        "traces/gemm/hopper_ws_bf16_cluster2/hopper_ws_bf16_cluster2.yaml",
        "traces/gemm/hopper_ws_tf32_cluster2/hopper_ws_tf32_cluster2.yaml",
    ] {
        let rep = check(&r.join(m), &opts()).expect("the manifest loads");
        assert!(
            rep.lines
                .iter()
                .any(|l| l.contains("async sync:") && l.contains("no violation")),
            "{m}: {:?}",
            rep.lines
        );
        assert!(rep.disagreement.is_none(), "{m}: {:?}", rep.disagreement);
    }
}

#[test]
fn broken_gemm_variants_report_their_rule_and_line() {
    let dir = root().join("traces/gemm/hopper_ws_broken");
    let mut n = 0;
    for variant in [
        "no_acc_wait",
        "no_proxy_fence",
        "no_full_wait",
        "no_empty_wait",
    ] {
        let d = dir.join(variant);
        let expect = std::fs::read_to_string(d.join("expect")).expect("expect sidecar");
        let (rule, line) = expect.trim().split_once(' ').expect("`rule line`");
        let name = format!("hopper_ws_bf16_{variant}");
        let rep = check(&d.join(format!("{name}.yaml")), &opts()).expect("the manifest loads");
        let verdict = rep.disagreement.expect("a violation is reported");
        let want = format!(
            "{rule}: {}:{line} ",
            d.join(format!("{name}.ptx")).display()
        );
        assert!(
            verdict.starts_with("async sync: launch 0: ") && verdict.contains(&want),
            "{variant}: expected `{want}` in `{verdict}`"
        );
        n += 1;
    }
    assert_eq!(n, 4);
}

/// Digest §2.3's three bugs and their fixes (traces/litmus/async): each bug's `expect` names
/// the rule and PTX line of the first violation, each fix's says `clean`.
#[test]
fn exo_gpu_bug_examples_report_their_rule_and_line() {
    let dir = root().join("traces/litmus/async");
    let mut bugs = 0;
    let mut fixed = 0;
    for name in [
        "dsmem_war_bug",
        "dsmem_war_fixed",
        "acc_no_wait_bug",
        "acc_wait_fixed",
        "cluster_wgmma_war_bug",
        "cluster_wgmma_war_fixed",
    ] {
        let d = dir.join(name);
        let expect = std::fs::read_to_string(d.join("expect")).expect("expect sidecar");
        let rep = check(&d.join(format!("{name}.yaml")), &opts()).expect("the manifest loads");
        if expect.trim() == "clean" {
            assert!(
                rep.lines
                    .iter()
                    .any(|l| l.contains("async sync:") && l.contains("no violation")),
                "{name}: {:?}",
                rep.lines
            );
            assert!(rep.disagreement.is_none(), "{name}: {:?}", rep.disagreement);
            fixed += 1;
            continue;
        }
        let (rule, line) = expect.trim().split_once(' ').expect("`rule line`");
        let verdict = rep.disagreement.expect("a violation is reported");
        let want = format!(
            "{rule}: {}:{line} ",
            d.join(format!("{name}.ptx")).display()
        );
        assert!(
            verdict.starts_with("async sync: launch 0: ") && verdict.contains(&want),
            "{name}: expected `{want}` in `{verdict}`"
        );
        // What the multicast conflicts with: bug 1, CTA 1's in-order reads of its own B
        // (a location of the peer CTA); bug 3, the other warps' wgmma reads of B.
        let earlier = match name {
            "dsmem_war_bug" => {
                Some("of CTA 1 (linear id) as tmaS; it conflicts with the earlier read as cuda2")
            }
            "cluster_wgmma_war_bug" => Some("as tmaS; it conflicts with the earlier read as wgS"),
            _ => None,
        };
        if let Some(e) = earlier {
            assert!(
                rep.lines.iter().any(|l| l.contains(&want) && l.contains(e)),
                "{name}: no `{e}` in {:?}",
                rep.lines
            );
        }
        bugs += 1;
    }
    assert_eq!((bugs, fixed), (3, 3));
}

/// The clustered GEMMs' recorded events carry their cross-CTA traffic: B multicast into both
/// CTAs, stages released by remote arrives on the peer's empty barrier, and the cluster
/// barriers — so their clean verdict above covers it.
#[test]
fn clustered_gemm_events_include_cross_cta_traffic() {
    let m = root().join("traces/gemm/hopper_ws_bf16_cluster2/hopper_ws_bf16_cluster2.yaml");
    let opts = gpusim::RunOptions {
        record_async: true,
        ..Default::default()
    };
    let out = gpusim::run_manifest_with(&m, None, &[], &opts).expect("the GEMM runs");
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    let evs = &out.async_events[0];
    let multicast = evs
        .iter()
        .filter(|e| matches!(&e.kind, EventKind::TmaLoadCluster { ctas, .. } if ctas.len() == 2 && ctas.contains(&e.cta)))
        .count();
    let remote_arrives = evs
        .iter()
        .filter(|e| matches!(&e.kind, EventKind::MbarArriveCluster { targets } if targets.iter().any(|t| t.0 != e.cta)))
        .count();
    let cluster_barriers = evs
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ClusterBarrier { .. }))
        .count();
    assert!(multicast > 0 && remote_arrives > 0 && cluster_barriers > 0);
    // Every multicast names the two CTAs of the issuer's cluster: CTAs 2k and 2k + 1 of
    // the grid's y pairs, (x, 2k) and (x, 2k + 1).
    let gx = 2; // grid [2, 4, 1] in the manifest, clusters (1, 2, 1)
    for e in evs {
        if let EventKind::TmaLoadCluster { ctas, .. } = &e.kind {
            let mut c = ctas.clone();
            c.sort_unstable();
            assert_eq!(c[1] - c[0], gx, "{e:?}");
        }
        if let EventKind::Generic { reads, writes, .. } = &e.kind {
            assert!(reads
                .iter()
                .chain(writes)
                .all(|r| r.space != MemSpace::Shared || r.end() < 1 << 24));
        }
    }
}
