//! Issue 11 regressions: `gpusim check`, `fuzz` and `lint` (verdicts, barrier semantics under
//! independent thread scheduling, scaling).
