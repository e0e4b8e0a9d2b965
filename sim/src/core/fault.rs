//! Kernel faults: what stops a kernel (exit code 3), with a precise report.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    OutOfBounds,
    Misaligned,
    /// A warp can never proceed: the token stack's liveness is violated (Habermaier §6.5).
    Liveness,
    /// No warp can issue and nothing is in flight (e.g. a barrier that never completes).
    Deadlock,
    BarrierDivergence,
    Watchdog,
    Trap,
    /// The program is not control-flow consistent (e.g. `brk` with no break token).
    Control,
    /// A launch the machine cannot run (block too large for an SM, ...).
    Launch,
    /// A configured memory program did what the formal model leaves undefined (⊥).
    MemoryProgram,
    /// An operand's run-time value lies outside the range the PTX ISA allows (a barrier id
    /// above 15, a barrier thread count that is not a multiple of the warp size or exceeds
    /// the CTA).
    InvalidOperand,
}

impl FaultKind {
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::OutOfBounds => "out-of-bounds",
            FaultKind::Misaligned => "misaligned",
            FaultKind::Liveness => "liveness",
            FaultKind::Deadlock => "deadlock",
            FaultKind::BarrierDivergence => "barrier-divergence",
            FaultKind::Watchdog => "watchdog",
            FaultKind::MemoryProgram => "memory-program",
            FaultKind::Trap => "trap",
            FaultKind::Control => "control",
            FaultKind::Launch => "launch",
            FaultKind::InvalidOperand => "invalid-operand",
        }
    }
}

/// A fault with its report: the headline and, for deadlocks, the state of every warp.
#[derive(Clone, Debug)]
pub struct Fault {
    pub kind: FaultKind,
    pub message: String,
    pub details: Vec<String>,
}

impl Fault {
    pub fn new(kind: FaultKind, message: impl Into<String>) -> Fault {
        Fault {
            kind,
            message: message.into(),
            details: Vec::new(),
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel fault ({}): {}", self.kind.name(), self.message)?;
        for d in &self.details {
            write!(f, "\n  {d}")?;
        }
        Ok(())
    }
}
