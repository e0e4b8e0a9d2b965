//! Tidy: house rules checked on the source tree — every Rust file opens with a `//!` line
//! saying what it is, no test is ignored, no stub macros ship, and neither `isa` nor the
//! reference models (`models`) depend on the simulator.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn all_sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for krate in ["isa", "models", "sim", "viz", "benches"] {
        rust_files(&workspace().join(krate), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap()))
        .collect()
}

#[test]
fn every_file_says_what_it_is() {
    let bad: Vec<String> = all_sources()
        .into_iter()
        .filter(|(_, t)| !t.trim_start().starts_with("//!"))
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert!(
        bad.is_empty(),
        "files without a leading `//!` line:\n{}",
        bad.join("\n")
    );
}

#[test]
fn nothing_ignored_and_no_stubs() {
    let ignore = ["#[", "ignore]"].concat();
    let stubs = [["todo", "!("].concat(), ["unimplemented", "!("].concat()];
    let mut bad = Vec::new();
    for (p, t) in all_sources() {
        for (i, line) in t.lines().enumerate() {
            if line.contains(&ignore) || stubs.iter().any(|s| line.contains(s.as_str())) {
                bad.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The front end knows nothing about the simulator (ARCHITECTURE.md: isa invariant).
#[test]
fn isa_does_not_depend_on_the_simulator() {
    let manifest = std::fs::read_to_string(workspace().join("isa/Cargo.toml")).unwrap();
    assert!(
        !manifest.contains("gpusim ")
            && !manifest.contains("gpusim.workspace")
            && !manifest.contains("path = \"../sim\""),
        "isa/Cargo.toml depends on the simulator"
    );
    let mut files = Vec::new();
    rust_files(&workspace().join("isa/src"), &mut files);
    for p in files {
        let t = std::fs::read_to_string(&p).unwrap();
        assert!(
            !t.contains("gpusim::"),
            "{} refers to the simulator crate",
            p.display()
        );
    }
}

/// The reference models are oracles: they depend on the front end only, never on the
/// simulator they check (ARCHITECTURE.md: models invariant).
#[test]
fn models_depend_on_the_front_end_only() {
    let manifest = std::fs::read_to_string(workspace().join("models/Cargo.toml")).unwrap();
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|d| d.split("\n[").next())
        .unwrap_or_default();
    let names: Vec<&str> = deps
        .lines()
        .filter_map(|l| l.split(['=', '.']).next())
        .map(str::trim)
        .filter(|n| !n.is_empty() && !n.starts_with('#'))
        .collect();
    assert!(
        names
            .iter()
            .all(|n| ["gpusim-isa", "thiserror"].contains(n)),
        "models/Cargo.toml [dependencies] must be gpusim-isa and thiserror only, got {names:?}"
    );
    let mut files = Vec::new();
    rust_files(&workspace().join("models/src"), &mut files);
    for p in files {
        let t = std::fs::read_to_string(&p).unwrap();
        assert!(
            !t.contains("gpusim::"),
            "{} refers to the simulator crate",
            p.display()
        );
    }
}
