//! `gpusim lint FILE`: the uniformity analysis on the command line — one line per finding
//! with file:line:column and its chain, exit 0 when clean, 1 with findings, 2 on a parse error.

mod common;

use common::root;

use std::path::Path;
use std::process::Command;

fn lint(file: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .arg("lint")
        .arg(file)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_clean_kernel_exits_0_and_prints_nothing() {
    let (code, out, _) = lint(&root().join("traces/kernels/reduce_shared/reduce_shared.ptx"));
    assert_eq!(code, 0);
    assert!(out.is_empty(), "{out}");
}

#[test]
fn a_divergent_barrier_exits_1_with_location_and_chain() {
    let file = root().join("traces/litmus/uniformity/p2_fig1b_barrier_in_if.ptx");
    let (code, out, _) = lint(&file);
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    let f = file.display().to_string();
    assert!(
        lines[0].starts_with(&format!(
            "bar.sync at {f}:21:2 is controlled by the branch at {f}:20:2 on %p2"
        )),
        "{out}"
    );
    assert!(lines[0].ends_with("which depends on %tid.x"), "{out}");
}

#[test]
fn a_parse_error_exits_2_with_file_line_col() {
    let dir = std::env::temp_dir().join(format!("gpusim-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.ptx");
    std::fs::write(
        &file,
        ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tfrobnicate;\n}\n",
    )
    .unwrap();
    let (code, out, err) = lint(&file);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains(&format!("{}:6:", file.display())), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
