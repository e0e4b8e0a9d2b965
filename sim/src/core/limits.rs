//! Launch limits: the grid, block and cluster dimensions CUDA accepts and what one SM of the
//! config can hold, checked before anything is simulated. A launch the driver would refuse is
//! bad input (exit 2, the launch key, the value and the limit), never a kernel fault.
//!
//! The dimension limits are those every compute capability from 3.0 on shares (CUDA C++
//! Programming Guide, "Technical Specifications per Compute Capability"): grid x ≤ 2³¹ − 1,
//! grid y and z ≤ 65535, block x and y ≤ 1024, block z ≤ 64, 1024 threads per block; clusters
//! (sm_90, "Thread Block Clusters") of at most 8 CTAs portably, 16 where the kernel allows a
//! non-portable size (`cudaFuncAttributeNonPortableClusterSizeAllowed`).

use super::program::Program;
use crate::config::Config;
use gpusim_isa::FuncId;

/// The largest grid: x, y, z.
pub const MAX_GRID: [u64; 3] = [(1 << 31) - 1, 65535, 65535];
/// The largest block: x, y, z.
pub const MAX_BLOCK: [u64; 3] = [1024, 1024, 64];
/// Threads per block.
pub const MAX_BLOCK_THREADS: u64 = 1024;
/// CTAs of a portable cluster; up to `cluster::MAX_CLUSTER_CTAS` with the non-portable
/// attribute.
pub const MAX_PORTABLE_CLUSTER: u64 = 8;

/// A launch's shape as the manifest (or a GEMM spec) gives it.
#[derive(Clone, Copy, Debug)]
pub struct LaunchShape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// The launch's cluster shape, if it gives one.
    pub cluster: Option<[u32; 3]>,
    /// The kernel may run clusters of more than 8 CTAs (up to 16).
    pub non_portable_cluster: bool,
    pub dynamic_shared: u32,
}

/// A limit a launch exceeds: the launch key it concerns (`grid`, `block`, `cluster`,
/// `shared_bytes`) and what is wrong, with the value and the limit.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LimitError {
    pub key: &'static str,
    pub message: String,
}

fn limit(key: &'static str, message: String) -> LimitError {
    LimitError { key, message }
}

const AXES: [&str; 3] = ["x", "y", "z"];

/// The limits that hold on every GPU: grid and block dimensions and the portable cluster size.
pub fn check_dims(s: &LaunchShape) -> Result<(), LimitError> {
    for (key, dims, max) in [("grid", s.grid, MAX_GRID), ("block", s.block, MAX_BLOCK)] {
        for k in 0..3 {
            let d = dims[k] as u64;
            if d == 0 || d > max[k] {
                return Err(limit(
                    key,
                    format!(
                        "{key} {dims:?}: {} is {d}; CUDA allows 1 to {} in {key} dimension {}",
                        AXES[k], max[k], AXES[k]
                    ),
                ));
            }
        }
    }
    let threads = block_threads(s.block);
    if threads > MAX_BLOCK_THREADS {
        return Err(limit(
            "block",
            format!(
                "block {:?} has {threads} threads; CUDA allows at most {MAX_BLOCK_THREADS} threads per block",
                s.block
            ),
        ));
    }
    if let Some(c) = s.cluster {
        check_cluster(s.grid, c, s.non_portable_cluster)?;
    }
    Ok(())
}

/// Why cluster shape `c` has too many CTAs (or a zero dimension), if it does: at most 8, or 16
/// when the kernel allows a non-portable size.
pub fn cluster_size_error(c: [u32; 3], non_portable: bool) -> Option<String> {
    let n: u64 = c.iter().map(|&d| d as u64).product();
    let most = super::cluster::MAX_CLUSTER_CTAS as u64;
    if c.contains(&0) {
        return Some(format!("cluster {c:?} has a dimension of 0"));
    }
    if non_portable && n > most {
        return Some(format!(
            "cluster {c:?} has {n} CTAs; a cluster holds at most {most}"
        ));
    }
    if !non_portable && n > MAX_PORTABLE_CLUSTER {
        return Some(format!(
            "cluster {c:?} has {n} CTAs; a portable cluster holds at most {MAX_PORTABLE_CLUSTER} (at most {most} with `non_portable_cluster: true`, as cudaFuncAttributeNonPortableClusterSizeAllowed allows)"
        ));
    }
    None
}

/// A cluster's size (portable or not) and that it tiles the grid.
fn check_cluster(grid: [u32; 3], c: [u32; 3], non_portable: bool) -> Result<(), LimitError> {
    if let Some(e) = cluster_size_error(c, non_portable) {
        return Err(limit("cluster", e));
    }
    for k in 0..3 {
        if grid[k] % c[k] != 0 {
            return Err(limit(
                "cluster",
                format!(
                    "grid {grid:?} is not a whole number of clusters {c:?}: {} is {} in the grid, {} in the cluster",
                    AXES[k], grid[k], c[k]
                ),
            ));
        }
    }
    Ok(())
}

fn block_threads(block: [u32; 3]) -> u64 {
    block.iter().map(|&d| d as u64).product()
}

/// Every limit of a launch of `entry` on `cfg`: the dimensions, the kernel's `.maxntid` and
/// `.reqnctapercluster`, the config's SM count for clusters, and whether one CTA fits an SM
/// (threads, warps, registers, static + dynamic shared memory).
pub fn check_launch(
    prog: &Program,
    cfg: &Config,
    entry: FuncId,
    s: &LaunchShape,
) -> Result<(), LimitError> {
    check_dims(s)?;
    let f = prog.module.function(entry);
    let threads = block_threads(s.block);
    if let Some(ntid) = f.max_ntid {
        let max: u64 = ntid.iter().map(|&d| d as u64).product();
        if threads > max {
            return Err(limit(
                "block",
                format!(
                    "block {:?} has {threads} threads; kernel `{}` declares .maxntid/.reqntid {ntid:?} ({max} threads)",
                    s.block, f.name
                ),
            ));
        }
    }
    if let Some(req) = f.req_cluster {
        check_cluster(s.grid, req, true)?;
    }
    super::cluster::cluster_shape(s.grid, s.cluster, f.req_cluster, cfg.sm.count)
        .map_err(|e| limit("cluster", format!("kernel `{}`: {e}", f.name)))?;
    check_fits(prog, cfg, entry, s)
}

/// One CTA must fit an empty SM, or the launch could never run.
fn check_fits(
    prog: &Program,
    cfg: &Config,
    entry: FuncId,
    s: &LaunchShape,
) -> Result<(), LimitError> {
    let sm = &cfg.sm;
    let kernel = &prog.module.function(entry).name;
    let threads = block_threads(s.block);
    let ws = sm.warp_size.max(1) as u64;
    let n_warps = threads.div_ceil(ws);
    if threads > sm.max_threads as u64 || n_warps > sm.max_warps as u64 {
        return Err(limit(
            "block",
            format!(
                "a CTA of kernel `{kernel}` has {threads} threads ({n_warps} warps of {ws}); an SM of config `{}` holds {} threads (sm.max_threads) and {} warps (sm.max_warps)",
                cfg.name, sm.max_threads, sm.max_warps
            ),
        ));
    }
    // On an empty SM the CTA's warps spread round robin over the sub-partitions, whose
    // register files hold sm.registers / sm.schedulers each.
    let per_thread = super::gpu::regs_per_thread(prog, cfg, entry) as u64;
    let regs = per_thread * n_warps * ws;
    let parts = sm.schedulers.max(1) as u64;
    let per_part = n_warps.div_ceil(parts) * ws * per_thread;
    if regs > sm.registers as u64 || per_part > sm.registers as u64 / parts {
        return Err(limit(
            "block",
            format!(
                "a CTA of kernel `{kernel}` needs {regs} registers ({per_thread} per thread × {} threads in whole warps; {per_part} in one of the {parts} sub-partitions); an SM of config `{}` has {} (sm.registers, {} per sub-partition)",
                n_warps * ws,
                cfg.name,
                sm.registers,
                sm.registers as u64 / parts
            ),
        ));
    }
    // The dynamic window starts after the static data, at its declared alignment.
    let static_shared = prog.shared_layout(entry).dynamic_offset;
    let shared = static_shared + s.dynamic_shared as u64;
    if shared > sm.shared_bytes as u64 {
        return Err(limit(
            "shared_bytes",
            format!(
                "a CTA of kernel `{kernel}` needs {shared} bytes of shared memory ({static_shared} static + {} dynamic); an SM of config `{}` has {} (sm.shared_bytes)",
                s.dynamic_shared, cfg.name, sm.shared_bytes
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(grid: [u32; 3], block: [u32; 3], cluster: Option<[u32; 3]>) -> LaunchShape {
        LaunchShape {
            grid,
            block,
            cluster,
            non_portable_cluster: false,
            dynamic_shared: 0,
        }
    }

    #[test]
    fn cuda_dimension_limits() {
        assert!(check_dims(&shape([(1 << 31) - 1, 65535, 65535], [1024, 1, 1], None)).is_ok());
        assert!(check_dims(&shape([1, 1, 1], [1, 1, 64], None)).is_ok());
        for (grid, block, key) in [
            ([1 << 31, 1, 1], [1, 1, 1], "grid"),
            ([1, 65536, 1], [1, 1, 1], "grid"),
            ([1, 1, 65536], [1, 1, 1], "grid"),
            ([0, 1, 1], [1, 1, 1], "grid"),
            ([1, 1, 1], [1025, 1, 1], "block"),
            ([1, 1, 1], [1, 1, 65], "block"),
            ([1, 1, 1], [32, 32, 2], "block"),
        ] {
            let e = check_dims(&shape(grid, block, None)).unwrap_err();
            assert_eq!(e.key, key, "{grid:?} {block:?}: {e}");
        }
    }

    #[test]
    fn cluster_sizes() {
        assert!(check_dims(&shape([8, 1, 1], [32, 1, 1], Some([8, 1, 1]))).is_ok());
        let e = check_dims(&shape([16, 1, 1], [32, 1, 1], Some([16, 1, 1]))).unwrap_err();
        assert_eq!(e.key, "cluster");
        assert!(e.message.contains("non_portable_cluster"), "{e}");
        let mut s = shape([16, 1, 1], [32, 1, 1], Some([16, 1, 1]));
        s.non_portable_cluster = true;
        assert!(check_dims(&s).is_ok());
        s.cluster = Some([32, 1, 1]);
        assert!(check_dims(&s).is_err());
        let e = check_dims(&shape([6, 1, 1], [32, 1, 1], Some([4, 1, 1]))).unwrap_err();
        assert!(e.message.contains("whole number of clusters"), "{e}");
    }
}
