//! The byte-addressed memory of the thread-level executor: global allocations (the launch's
//! buffers and the module's `.global` segment), one CTA's shared segment and parameter block,
//! and the generic-address windows that `cvta` maps shared and local offsets into.
//!
//! The window bases are this model's own choice (PTX leaves them to the implementation); the
//! only requirement is that windows and global allocations never overlap.

use gpusim_isa::ir::{Module, Space};

/// Generic addresses `SHARED_WINDOW + offset` name shared memory.
pub const SHARED_WINDOW: u64 = 0xA000_0000_0000;
/// Generic addresses `LOCAL_WINDOW + offset` name the thread's local frame.
pub const LOCAL_WINDOW: u64 = 0xB000_0000_0000;
const WINDOW_SIZE: u64 = 1 << 32;
/// Global allocations start here and are 256-byte aligned, with a gap between them so that
/// an access just past a buffer faults instead of reading its neighbour.
const GLOBAL_BASE: u64 = 0x1_0000_0000;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Allocation {
    name: String,
    base: u64,
    data: Vec<u8>,
}

/// Global memory: named allocations with bounds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GlobalMemory {
    allocs: Vec<Allocation>,
    module_base: Option<u64>,
}

impl GlobalMemory {
    pub fn new() -> GlobalMemory {
        GlobalMemory::default()
    }

    /// Add an allocation holding `data`; returns its global address.
    pub fn alloc(&mut self, name: &str, data: Vec<u8>) -> u64 {
        let end = self
            .allocs
            .iter()
            .map(|a| a.base + a.data.len() as u64)
            .max()
            .unwrap_or(GLOBAL_BASE);
        let base = (end + 256).div_ceil(256) * 256;
        self.allocs.push(Allocation {
            name: name.to_string(),
            base,
            data,
        });
        base
    }

    /// The bytes of allocation `name`.
    pub fn buffer(&self, name: &str) -> Option<&[u8]> {
        self.allocs
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.data.as_slice())
    }

    /// The address of allocation `name`.
    pub fn base(&self, name: &str) -> Option<u64> {
        self.allocs.iter().find(|a| a.name == name).map(|a| a.base)
    }

    /// Place the module's `.global` variables (with their initialisers) once.
    pub fn load_module_globals(&mut self, module: &Module) {
        if self.module_base.is_some() || module.global_bytes == 0 {
            return;
        }
        let mut data = vec![0u8; module.global_bytes as usize];
        for s in module.symbols.iter().filter(|s| s.space == Space::Global) {
            let o = s.offset as usize;
            let n = s.init.len().min(data.len().saturating_sub(o));
            data[o..o + n].copy_from_slice(&s.init[..n]);
        }
        self.module_base = Some(self.alloc("<module .global>", data));
    }

    fn find(&self, addr: u64, size: u32) -> Result<(usize, usize), String> {
        self.allocs
            .iter()
            .enumerate()
            .find(|(_, a)| addr >= a.base && addr + u64::from(size) <= a.base + a.data.len() as u64)
            .map(|(i, a)| (i, (addr - a.base) as usize))
            .ok_or_else(|| {
                format!("global access of {size} bytes at {addr:#x} is outside every allocation")
            })
    }

    pub fn read(&self, addr: u64, size: u32) -> Result<&[u8], String> {
        let (i, o) = self.find(addr, size)?;
        Ok(&self.allocs[i].data[o..o + size as usize])
    }

    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), String> {
        let (i, o) = self.find(addr, bytes.len() as u32)?;
        self.allocs[i].data[o..o + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }
}

/// What one CTA's threads share: global memory, the shared segment and the parameter block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtaMemory {
    pub global: GlobalMemory,
    pub shared: Vec<u8>,
    pub params: Vec<u8>,
}

impl CtaMemory {
    pub(crate) fn module_global(&self, offset: u64) -> Option<u64> {
        self.global.module_base.map(|b| b + offset)
    }

    pub(crate) fn read(&self, space: Space, addr: u64, size: u32) -> Result<Vec<u8>, String> {
        match space {
            Space::Global => self.global.read(addr, size).map(<[u8]>::to_vec),
            Space::Shared => slice(&self.shared, addr, size).map(<[u8]>::to_vec),
            Space::Param => slice(&self.params, addr, size).map(<[u8]>::to_vec),
            s => Err(format!("no {} memory here", s.name())),
        }
    }

    pub(crate) fn write(&mut self, space: Space, addr: u64, bytes: &[u8]) -> Result<(), String> {
        match space {
            Space::Global => self.global.write(addr, bytes),
            Space::Shared => {
                slice_mut(&mut self.shared, addr, bytes.len() as u32)?.copy_from_slice(bytes);
                Ok(())
            }
            s => Err(format!("{} memory cannot be written here", s.name())),
        }
    }
}

pub(crate) fn slice(mem: &[u8], addr: u64, size: u32) -> Result<&[u8], String> {
    let end = addr
        .checked_add(u64::from(size))
        .filter(|&e| e <= mem.len() as u64);
    match end {
        Some(e) => Ok(&mem[addr as usize..e as usize]),
        None => Err(format!(
            "access of {size} bytes at offset {addr:#x} is outside the {} byte segment",
            mem.len()
        )),
    }
}

pub(crate) fn slice_mut(mem: &mut [u8], addr: u64, size: u32) -> Result<&mut [u8], String> {
    let n = mem.len();
    let end = addr.checked_add(u64::from(size)).filter(|&e| e <= n as u64);
    match end {
        Some(e) => Ok(&mut mem[addr as usize..e as usize]),
        None => Err(format!(
            "access of {size} bytes at offset {addr:#x} is outside the {n} byte segment"
        )),
    }
}

/// Little-endian value of up to 8 bytes.
pub(crate) fn le(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = bytes.len().min(8);
    b[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(b)
}

/// The space and offset a generic address names.
pub(crate) fn resolve_generic(addr: u64) -> (Space, u64) {
    if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) {
        (Space::Shared, addr - SHARED_WINDOW)
    } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&addr) {
        (Space::Local, addr - LOCAL_WINDOW)
    } else {
        (Space::Global, addr)
    }
}

/// `cvta.space` (offset → generic) or `cvta.to.space` (generic → offset); `None` for spaces
/// without a window here.
pub(crate) fn cvta(to_space: bool, space: Space, v: u64) -> Option<u64> {
    let window = match space {
        Space::Global => 0,
        Space::Shared => SHARED_WINDOW,
        Space::Local => LOCAL_WINDOW,
        _ => return None,
    };
    Some(if to_space {
        v.wrapping_sub(window)
    } else {
        v.wrapping_add(window)
    })
}
