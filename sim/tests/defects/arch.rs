//! Issue 11 regressions: GPU generations (`sm.arch`, `sm.reconvergence: auto`, units a config
//! does not have).
