//! Regression tests for the defects of issue 11 (adversarial testing and review), one module
//! per area: each test reproduces a defect as it was reported and checks the fixed behaviour.

mod common;

#[path = "defects/input.rs"]
mod input;
#[path = "defects/core.rs"]
mod core_machine;
#[path = "defects/check.rs"]
mod check;
#[path = "defects/hopper.rs"]
mod hopper;
#[path = "defects/arch.rs"]
mod arch;
