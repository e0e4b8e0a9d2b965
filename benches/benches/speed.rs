//! Simulation speed in warp instructions per second on representative traces: a divergent
//! loop (Mandelbrot), a barrier-heavy tiled GEMM, a memory-bound vector add, a sort, and a
//! warp-specialised Hopper GEMM on H100 (TMA loads and stores, mbarrier waits, wgmma, a
//! cluster pair: most of its warps wait most cycles). Criterion reports throughput in
//! elements/s, where an element is one simulated warp instruction.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gpusim_benches::simulate;

const TRACES: &[&str] = &[
    "kernels/mandelbrot/mandelbrot.yaml",
    "kernels/sgemm_tiled/sgemm_tiled.yaml",
    "kernels/vecadd/vecadd.yaml",
    "kernels/bitonic_sort/bitonic_sort.yaml",
    "gemm/hopper_ws_bf16_cluster2/hopper_ws_bf16_cluster2.yaml",
];

fn speed(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulate");
    group.sample_size(10);
    for t in TRACES {
        let insts = simulate(t);
        let name = t.split('/').nth(1).unwrap_or(t);
        group.throughput(Throughput::Elements(insts));
        group.bench_function(name, |b| b.iter(|| simulate(t)));
    }
    group.finish();
}

criterion_group!(benches, speed);
criterion_main!(benches);
