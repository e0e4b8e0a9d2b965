//! The events the power model prices that the SM counts itself (`SmStats::energy`); the
//! memory events come from the counters the memory system keeps anyway (`Activity`).

use serde::Serialize;

use crate::stats::N_UNITS;

/// Tensor-core multiply-add kinds, by input type: what one costs differs by type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorKind {
    /// `.f16` and `.bf16` inputs.
    F16 = 0,
    Tf32 = 1,
    /// `.e4m3` and `.e5m2` inputs.
    Fp8 = 2,
    /// `.s8`/`.u8` (and narrower) integer inputs.
    Int8 = 3,
}

pub const TENSOR_KINDS: usize = 4;
pub const TENSOR_KIND_NAMES: [&str; TENSOR_KINDS] = ["f16", "tf32", "fp8", "int8"];

/// Per-SM event counts the power model needs beyond the other counters (plain integers on
/// the hot path).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EnergyEvents {
    /// Lanes that executed, by functional unit (`program::Unit as usize`).
    pub lane_ops: [u64; N_UNITS],
    /// 32-bit register reads and writes of the lanes that executed.
    pub register_accesses: u64,
    /// Tensor-core multiply-adds by `TensorKind`.
    pub tensor_fmas: [u64; TENSOR_KINDS],
    /// Set bits and all bits of the tensor operands (A and B) whose values were read; none in
    /// a timing-only run.
    pub tensor_set_bits: u64,
    pub tensor_bits: u64,
    /// Cycles with work resident on the SM (its static power is the active one then).
    pub active_cycles: u64,
}

impl EnergyEvents {
    pub fn add(&mut self, o: &EnergyEvents) {
        for (a, b) in self.lane_ops.iter_mut().zip(o.lane_ops) {
            *a += b;
        }
        for (a, b) in self.tensor_fmas.iter_mut().zip(o.tensor_fmas) {
            *a += b;
        }
        self.register_accesses += o.register_accesses;
        self.tensor_set_bits += o.tensor_set_bits;
        self.tensor_bits += o.tensor_bits;
        self.active_cycles += o.active_cycles;
    }

    /// Operand bits seen by a tensor instruction: `words` of `width` bits each.
    #[inline]
    pub fn tensor_operands(&mut self, words: impl Iterator<Item = u64>, width: u32) {
        let mask = if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        for w in words {
            self.tensor_set_bits += (w & mask).count_ones() as u64;
            self.tensor_bits += width as u64;
        }
    }
}
