//! Warp events: one record per issued instruction, for students stepping through a kernel and
//! for golden tests of the reconvergence state (`gpusim run --trace-warps FILE`).

use crate::simt::Mask;
use gpusim_isa::Pc;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpEvent {
    /// The launch of the run (0-based, in manifest order) and the cycle within it.
    pub launch: u32,
    pub cycle: u64,
    pub sm: u32,
    pub cta: [u32; 3],
    pub warp: u32,
    pub func: String,
    pub pc: Pc,
    pub line: u32,
    pub text: String,
    /// Lanes that executed the instruction (active and guard true).
    pub exec: Mask,
    /// The reconvergence state after the instruction, in the policy's own notation (sharing
    /// its tail with the warp's previous event: memory linear in the trace).
    pub after: gpusim_models::shared_text::SharedText,
}

impl fmt::Display for WarpEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>8} sm{} cta({},{},{}) w{} {}:{:<4} line {:<4} exec {:#x}  {:<40} | {}",
            self.cycle,
            self.sm,
            self.cta[0],
            self.cta[1],
            self.cta[2],
            self.warp,
            self.func,
            self.pc,
            self.line,
            self.exec,
            self.text,
            self.after
        )
    }
}
