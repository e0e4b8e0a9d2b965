//! Helpers shared by the simulator's integration tests: the repository root (traces and
//! configs), a private scratch directory per test, and reading a run's output buffers.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A scratch directory for test `tag` of this test process (created).
pub fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpusim-test-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A shipped config file.
pub fn config_path(name: &str) -> PathBuf {
    root().join(format!("configs/{name}.yaml"))
}

/// Buffer `name` of a run's output as little-endian u64 words.
pub fn words(o: &gpusim::RunOutput, name: &str) -> Vec<u64> {
    let (_, _, _, bytes) = o
        .buffers
        .iter()
        .find(|b| b.0 == name)
        .unwrap_or_else(|| panic!("no buffer `{name}`"));
    bytes
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}
