//! Device memory: global allocations (DRAM's contents), the generic address windows, and
//! bounds and alignment checks; the caches, interconnect and DRAM timing that sit in front of
//! it (`hierarchy`, driven by the memory programs of `program`).

pub mod cache;
pub mod coalesce;
pub mod dram;
pub mod dram_ctrl;
pub mod engine;
pub mod hierarchy;
pub mod interconnect;
pub mod program;
pub mod server;
pub mod system;

/// Generic addresses: global allocations start at `GLOBAL_BASE`; shared and local memory are
/// visible through fixed windows, as `cvta` maps them.
pub const GLOBAL_BASE: u64 = 0x0000_0001_0000_0000;
pub const SHARED_WINDOW: u64 = 0x0000_7F00_0000_0000;
pub const LOCAL_WINDOW: u64 = 0x0000_7E00_0000_0000;
pub const CONST_WINDOW: u64 = 0x0000_7D00_0000_0000;
pub const PARAM_WINDOW: u64 = 0x0000_7C00_0000_0000;
const WINDOW_SIZE: u64 = 1 << 32;

/// Which space a generic address falls in, and the offset inside it.
pub fn decode_generic(addr: u64) -> (gpusim_isa::Space, u64) {
    use gpusim_isa::Space;
    for (base, space) in [
        (SHARED_WINDOW, Space::Shared),
        (LOCAL_WINDOW, Space::Local),
        (CONST_WINDOW, Space::Const),
        (PARAM_WINDOW, Space::Param),
    ] {
        if addr >= base && addr < base + WINDOW_SIZE {
            return (space, addr - base);
        }
    }
    (Space::Global, addr)
}

pub fn window_base(space: gpusim_isa::Space) -> u64 {
    use gpusim_isa::Space;
    match space {
        Space::Shared => SHARED_WINDOW,
        Space::Local => LOCAL_WINDOW,
        Space::Const => CONST_WINDOW,
        Space::Param => PARAM_WINDOW,
        _ => 0,
    }
}

#[derive(Clone, Debug)]
pub struct Allocation {
    pub name: String,
    pub start: u64,
    pub len: u64,
}

/// Global memory: one contiguous backing store; every access must fall inside an allocation.
#[derive(Default)]
pub struct GlobalMemory {
    data: Vec<u8>,
    allocs: Vec<Allocation>,
}

impl GlobalMemory {
    /// Allocate `bytes` (256-byte aligned, like cudaMalloc) and return the device address.
    pub fn alloc(&mut self, name: &str, bytes: &[u8]) -> u64 {
        let off = (self.data.len() as u64).div_ceil(256) * 256;
        self.data.resize(off as usize, 0);
        self.data.extend_from_slice(bytes);
        let start = GLOBAL_BASE + off;
        self.allocs.push(Allocation {
            name: name.to_string(),
            start,
            len: bytes.len() as u64,
        });
        start
    }

    fn in_bounds(&self, addr: u64, size: u64) -> bool {
        let i = self.allocs.partition_point(|a| a.start <= addr);
        i > 0 && {
            let a = &self.allocs[i - 1];
            addr + size <= a.start + a.len
        }
    }

    pub fn slice(&self, start: u64, len: u64) -> &[u8] {
        let off = (start - GLOBAL_BASE) as usize;
        &self.data[off..off + len as usize]
    }

    pub fn bytes_mut(&mut self, addr: u64, size: u64) -> Option<&mut [u8]> {
        if !self.in_bounds(addr, size) {
            return None;
        }
        let off = (addr - GLOBAL_BASE) as usize;
        Some(&mut self.data[off..off + size as usize])
    }

    pub fn bytes(&self, addr: u64, size: u64) -> Option<&[u8]> {
        if !self.in_bounds(addr, size) {
            return None;
        }
        let off = (addr - GLOBAL_BASE) as usize;
        Some(&self.data[off..off + size as usize])
    }

    /// The allocation containing `addr`, or the closest one to it.
    pub fn nearest(&self, addr: u64) -> Option<&Allocation> {
        self.allocs.iter().min_by_key(|a| {
            if addr < a.start {
                a.start - addr
            } else {
                addr.saturating_sub(a.start + a.len)
            }
        })
    }

    pub fn allocations(&self) -> &[Allocation] {
        &self.allocs
    }

    /// The bytes of `mask` of the line at `line` (DRAM as the caches see it): bytes outside
    /// the backing store (allocation padding past the end, local tags) read 0.
    pub fn read_raw(&self, line: u64, dst: &mut [u8], mask: cache::Mask) {
        for b in mask_bytes_of(mask) {
            let a = line + b as u64;
            dst[b] = match a.checked_sub(GLOBAL_BASE) {
                Some(off) if (off as usize) < self.data.len() => self.data[off as usize],
                _ => 0,
            };
        }
    }

    /// Write the bytes of `mask` of `src` to the line at `line`; bytes outside the backing
    /// store are dropped (they belong to no allocation, so no load can observe them).
    pub fn write_raw(&mut self, line: u64, src: &[u8], mask: cache::Mask) {
        for b in mask_bytes_of(mask) {
            if let Some(off) = (line + b as u64).checked_sub(GLOBAL_BASE) {
                if let Some(d) = self.data.get_mut(off as usize) {
                    *d = src[b];
                }
            }
        }
    }
}

/// The byte offsets set in `mask`.
fn mask_bytes_of(mut mask: cache::Mask) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let b = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(b)
    })
}

/// Little-endian load of `size` bytes (1..=8) into the low bits of a u64.
pub fn load_le(b: &[u8]) -> u64 {
    let mut v = [0u8; 8];
    v[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(v)
}

pub fn store_le(b: &mut [u8], v: u64) {
    let n = b.len();
    b.copy_from_slice(&v.to_le_bytes()[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_per_allocation() {
        let mut g = GlobalMemory::default();
        let a = g.alloc("a", &[1, 2, 3, 4]);
        let b = g.alloc("b", &[5; 8]);
        assert_eq!(b - a, 256);
        assert!(g.bytes(a, 4).is_some());
        assert!(g.bytes(a + 2, 4).is_none(), "runs past the end of a");
        assert!(g.bytes(a + 4, 1).is_none(), "padding between allocations");
        assert!(g.bytes(b + 4, 4).is_some());
        assert!(g.bytes(GLOBAL_BASE - 4, 4).is_none());
    }

    #[test]
    fn windows_decode() {
        use gpusim_isa::Space;
        assert_eq!(decode_generic(SHARED_WINDOW + 12), (Space::Shared, 12));
        assert_eq!(decode_generic(GLOBAL_BASE), (Space::Global, GLOBAL_BASE));
    }
}
