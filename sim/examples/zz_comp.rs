//! scratch: component-mode streams with overrides
use gpusim::microbench::{self as mb, Bench, Gpu};
use std::path::Path;
fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let b = Bench::new(&root.join("traces/microbench"), Path::new("/tmp/ex3")).unwrap();
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap();
    let mut g = Gpu::load(Some(&root.join(format!("configs/{name}.yaml")))).unwrap().with("memory_engine", "components").unwrap();
    for kv in args { let (k, v) = kv.split_once('=').unwrap(); g = g.with(k, v).unwrap(); }
    let l2 = mb::stream_l2(&b, &g).unwrap(); let d = mb::stream_dram(&b, &g).unwrap();
    println!("{name} L2 {:.1}/{} DRAM {:.1}/{}", l2.per_cycle(|m| m.l2_bytes), g.cfg.l2.bytes_per_cycle, d.per_cycle(|m| m.dram_bytes - m.dram_write_bytes), g.cfg.dram.bytes_per_cycle);
    for w in [&l2, &d] { println!("  {}", serde_json::to_string(&w.long.kernels[0].memory_system).unwrap().chars().take(700).collect::<String>()); }
}
