//! Power and clocks (docs/power.md): what the work of a launch costs in energy, how long its
//! cycles last, and the governor that lowers the core clock to hold a power limit.
//!
//! - `events`: the per-SM counts only the power model needs (lane operations by unit,
//!   register accesses, tensor multiply-adds by type and their operand bits, active cycles);
//! - `tensor`: the multiply-adds of one tensor instruction;
//! - `activity`: all priced counts, GPU-wide, and an interval's difference;
//! - `model`: energy per event and static power at a clock (voltage from the clock);
//! - `governor`: control intervals, the clock choice, time and energy totals, the reports.
//!
//! Invariant: the model reads counters and never the simulation's state, and the governor's
//! decisions depend only on those counters and the cycle, so results stay deterministic and
//! independent of the thread count.

pub mod activity;
pub mod events;
pub mod governor;
pub mod model;
pub mod tensor;

pub use activity::Activity;
pub use events::{EnergyEvents, TensorKind, TENSOR_KINDS, TENSOR_KIND_NAMES};
pub use governor::{ClockReport, Governor, Interval, PowerReport};
pub use model::{Parts, PowerModel};
