//! Regression tests for the defects of issue 11 (adversarial testing and review), one module
//! per area: each test reproduces a defect as it was reported and checks the fixed behaviour.

mod common;

#[path = "defects/arch.rs"]
mod arch;
#[path = "defects/check.rs"]
mod check;
#[path = "defects/core.rs"]
mod core_machine;
#[path = "defects/hopper.rs"]
mod hopper;
#[path = "defects/input.rs"]
mod input;
