//! Problem sizes for `gpusim gemm --sizes`: the named sweeps and `MxNxK` lists, and the
//! check of a size against a spec's constraints.

use super::spec::GemmSpec;

/// One GEMM problem: C (M×N) = A (M×K) · B (K×N).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub m: u64,
    pub n: u64,
    pub k: u64,
}

impl Size {
    pub fn new(m: u64, n: u64, k: u64) -> Size {
        Size { m, n, k }
    }
    /// Floating-point operations of the product: 2·M·N·K.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{}", self.m, self.n, self.k)
    }
}

/// `square`: M = N = K, the usual GEMM benchmark sweep.
pub const SQUARE: [u64; 5] = [512, 1024, 2048, 4096, 8192];

/// `skinny`: the Exo-GPU shapes, M = N = 1536 with a short (512) and a very long (65536)
/// reduction — one tile-starved, one reduction-dominated problem.
pub const SKINNY: [(u64, u64, u64); 2] = [(1536, 1536, 512), (1536, 1536, 65536)];

/// The largest dimension accepted (the buffers must fit the simulator's device memory, and
/// the kernels take 32-bit sizes).
pub const MAX_DIM: u64 = 1 << 20;

/// Parse `square`, `skinny` or `MxNxK`, comma-separated (`square,100x200x300`).
pub fn parse_sizes(text: &str) -> Result<Vec<Size>, String> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        match item {
            "square" => out.extend(SQUARE.iter().map(|&s| Size::new(s, s, s))),
            "skinny" => out.extend(SKINNY.iter().map(|&(m, n, k)| Size::new(m, n, k))),
            _ => out.push(parse_one(item)?),
        }
    }
    Ok(out)
}

fn parse_one(item: &str) -> Result<Size, String> {
    let bad =
        || format!("`{item}` is not a size: expected square, skinny or MxNxK (e.g. 256x256x128)");
    let parts: Vec<&str> = item.split(['x', 'X']).collect();
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut d = [0u64; 3];
    for (slot, p) in d.iter_mut().zip(&parts) {
        *slot = p.trim().parse().map_err(|_| bad())?;
        if *slot == 0 || *slot > MAX_DIM {
            return Err(format!(
                "`{item}`: every dimension must be between 1 and {MAX_DIM}"
            ));
        }
    }
    Ok(Size::new(d[0], d[1], d[2]))
}

/// Why `size` cannot run with `spec`, naming the constraint.
pub fn check_size(spec: &GemmSpec, size: Size) -> Result<(), String> {
    let c = &spec.constraints;
    for (dim, v, mult, key) in [
        ("M", size.m, c.m_multiple, "m_multiple"),
        ("N", size.n, c.n_multiple, "n_multiple"),
        ("K", size.k, c.k_multiple, "k_multiple"),
    ] {
        if v % mult as u64 != 0 {
            return Err(format!(
                "size {size}: {dim} = {v} is not a multiple of {mult} (constraints.{key} of {})",
                spec.path.display()
            ));
        }
    }
    Ok(())
}
