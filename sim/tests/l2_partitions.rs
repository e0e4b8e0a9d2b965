//! The L2's two partitions on configs/hopper-h100.yaml (`l2.partitions`, `l2.far_latency`,
//! `l2.partition_runs`; docs/memory.md "The L2's two partitions") against the H200's figures
//! for `traces/microbench/l2_partition.yaml` (docs/correlation/h200-2026-11-28): one SM reads
//! 4 MiB in, then another SM alone walks 256 of its lines twice.

mod common;

use common::{config_path, root};
use gpusim::run_manifest;

/// The H200, one SM alone (SM 34, the other partition than the SM that read the lines in):
/// medians of the near and far first-walk loads, cycles clock to clock.
const H200_NEAR: f64 = 303.5;
const H200_FAR: f64 = 475.0;
/// Loads over this are far (the H200's near loads stay under 330, its far ones over 400).
const FAR_OVER: u32 = 380;

/// Each CTA's 2 × 256 load latencies of probe `name` (u32 words).
fn walks(o: &gpusim::RunOutput, name: &str) -> Vec<Vec<u32>> {
    let (_, _, _, bytes) = o
        .buffers
        .iter()
        .find(|b| b.0 == format!("lat_{name}"))
        .expect("a latency buffer");
    let words: Vec<u32> = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    words.chunks(256).map(|w| w.to_vec()).collect()
}

fn median(mut v: Vec<u32>) -> f64 {
    v.sort_unstable();
    v[v.len() / 2] as f64
}

#[test]
fn a_lone_sm_finds_half_the_lines_far_once_then_near() {
    let o = run_manifest(
        &root().join("traces/microbench/l2_partition.yaml"),
        Some(&config_path("hopper-h100")),
        &[],
    )
    .expect("l2_partition runs");
    assert!(o.failures.is_empty(), "{:?}", o.failures);
    // The model's SM i stands for the SM that gets CTA i: the reader (CTA 0) and CTA 8 share
    // partition 0, CTA 20 is in partition 1 (`l2.partition_runs: [16, 48, 50, 18]`), as on
    // the H200, where CTA 8 (SM 0) found every line near and CTA 20 (SM 34) 49 % far.
    for (probe, cta) in [("solo8", 8), ("solo0", 0)] {
        let w = walks(&o, probe);
        for pass in 0..2 {
            let far = w[2 * cta + pass][4..]
                .iter()
                .filter(|&&l| l > FAR_OVER)
                .count();
            assert_eq!(far, 0, "{probe}: CTA {cta}, walk {pass}: {far} far loads");
        }
    }
    let w = walks(&o, "solo20");
    let (first, second) = (&w[40][4..], &w[41][4..]);
    let far: Vec<u32> = first.iter().copied().filter(|&l| l > FAR_OVER).collect();
    let near: Vec<u32> = first.iter().copied().filter(|&l| l <= FAR_OVER).collect();
    let share = far.len() as f64 / first.len() as f64;
    let (near_m, far_m) = (median(near), median(far));
    eprintln!(
        "solo20 first walk: {:.0}% far; near {near_m}, far {far_m} cycles (H200: 49%, {H200_NEAR}, {H200_FAR})",
        100.0 * share
    );
    assert!((0.35..=0.65).contains(&share), "{share}: far share");
    assert!(
        second.iter().all(|&l| l <= FAR_OVER),
        "the second walk is near: copies serve it"
    );
    let gap = far_m - near_m;
    assert!(
        (gap - (H200_FAR - H200_NEAR)).abs() <= 10.0,
        "far − near = {gap}, H200 {}",
        H200_FAR - H200_NEAR
    );
    for (what, sim, hw) in [("near", near_m, H200_NEAR), ("far", far_m, H200_FAR)] {
        assert!(
            (sim / hw - 1.0).abs() <= 0.15,
            "{what}: {sim} cycles, H200 {hw}"
        );
    }
}

/// The copies take L2 capacity: with one partition the 48 MiB that one SM read in stay
/// resident (a 50 MiB L2), with two the copies of the far half push lines out to DRAM — as
/// on the H200, whose 60 MiB L2 sent 8.5 % of the next walk to DRAM.
#[test]
fn copies_cost_capacity() {
    let run = |parts: &str| {
        let set = [("l2.partitions".to_string(), parts.to_string())];
        let o = run_manifest(
            &root().join("traces/microbench/l2_partition.yaml"),
            Some(&config_path("hopper-h100")),
            &set,
        )
        .expect("l2_partition runs");
        let dram = walks(&o, "48m")
            .iter()
            .step_by(2)
            .flat_map(|w| w[4..].to_vec())
            .filter(|&l| l >= 600)
            .count();
        eprintln!("l2.partitions = {parts}: {dram} first-walk loads of 48m at DRAM latency");
        dram
    };
    let (one, two) = (run("1"), run("2"));
    assert!(one < 100, "{one} loads from DRAM with one partition");
    assert!(two > 1000, "{two} loads from DRAM with two partitions");
}
