//! `gpusim check`'s asynchronous-synchronisation checker (gpusim_models::async_sync) on the
//! traces: the correct Hopper kernels check clean, and each deliberately broken variant of the
//! warp-specialised GEMM (traces/gemm/hopper_ws_broken, from `gen.py --broken`) is reported
//! with the rule and PTX line its `expect` sidecar names.

use gpusim::check::{check, CheckOptions};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn opts() -> CheckOptions {
    CheckOptions {
        config: None,
        sets: Vec::new(),
        policy: None,
        runs: 1,
        seed: 1,
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
