//! Issue 11 regressions: `gpusim check`, `fuzz` and `lint` (verdicts, barrier semantics under
//! independent thread scheduling, scaling).

/// Item 1 sibling: the semantic models wrote a `.s8`/`.s16` `cvt` result into a wider register
/// without sign extension, so `gpusim check` disagreed with the simulator on `cvt_more` and on
/// the float → integer trace (0x00000080 vs 0xffffff80).
#[test]
fn narrow_signed_cvt_results_agree_between_simulator_and_models() {
    for t in ["cvt_f2i", "cvt_f2i_bf16", "cvt_more"] {
        let manifest = crate::common::root().join(format!("traces/isa/{t}/{t}.yaml"));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpusim"))
            .args(["check", manifest.to_str().unwrap(), "--runs", "1"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{t}:\n{stdout}");
        assert!(
            stdout.contains("verdict             agree"),
            "{t}:\n{stdout}"
        );
    }
}
