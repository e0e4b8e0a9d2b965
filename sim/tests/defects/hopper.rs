//! Issue 11 regressions: third-party Hopper kernels (dynamic shared alignment, wgmma/TMA
//! swizzle agreement, tensor maps).
