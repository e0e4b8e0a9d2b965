//! The `memory_programs` config section: library defaults when absent, overrides from the file
//! and from `--set`, and load-time errors naming the key path and the program's line:col.

use gpusim::config::{Config, TINY_YAML};
use gpusim::mem::program::{library, parse};

fn set(k: &str, v: &str) -> Vec<(String, String)> {
    vec![(k.to_string(), v.to_string())]
}

/// The tiny config without its `memory_programs` section (it is last in the file).
fn tiny_without_section() -> String {
    let at = TINY_YAML
        .find("\nmemory_programs:")
        .expect("tiny.yaml has the section");
    TINY_YAML[..at + 1].to_string()
}

#[test]
fn absent_section_gives_library_defaults() {
    let c = Config::from_yaml("t", &tiny_without_section(), &[]).unwrap();
    assert!(c.memory_programs.is_empty());
    for (op, text) in library::ALL {
        assert_eq!(c.memory_program(op), &parse(text).unwrap(), "{op}");
    }
}

#[test]
fn tiny_spells_out_program_4_1() {
    let c = Config::tiny();
    assert!(c.memory_programs.contains_key("st_global_wb"));
    assert_eq!(
        c.memory_program("st.global.wb"),
        &parse(library::ST_GLOBAL_WB).unwrap()
    );
}

#[test]
fn override_is_used() {
    let prog = "writeMem; yield; writeToRegs; releaseRegs; end;";
    for text in [TINY_YAML.to_string(), tiny_without_section()] {
        let c = Config::from_yaml("t", &text, &set("memory_programs.ld_shared", prog)).unwrap();
        assert_eq!(c.memory_program("ld.shared"), &parse(prog).unwrap());
        // Others keep their defaults.
        assert_eq!(
            c.memory_program("st.shared"),
            &parse(library::ST_SHARED).unwrap()
        );
    }
}

#[test]
fn syntax_error_names_key_path_and_line_col() {
    let yaml = format!(
        "{}memory_programs:\n  atom_global: |\n    evictL1; yield;\n    readL2 atomOp; end;\n",
        tiny_without_section()
    );
    let e = Config::from_yaml("t", &yaml, &[]).unwrap_err();
    assert_eq!(e.path, "memory_programs.atom_global", "{e}");
    assert!(e.message.contains("2:8"), "{e}");
}

#[test]
fn unknown_operation_lists_valid_ones() {
    let e = Config::from_yaml("t", TINY_YAML, &set("memory_programs.ld_global_xx", "end;"))
        .unwrap_err();
    assert_eq!(e.path, "memory_programs.ld_global_xx", "{e}");
    for (op, _) in library::ALL {
        let key = op.replace('.', "_");
        assert!(e.message.contains(&key), "{key} missing: {e}");
    }
}

#[test]
fn program_missing_end_is_rejected() {
    for prog in [
        "discardL1; yield; writeL2; releaseRegs;",
        "if (isCachedL1) { readL1; end; } writeToRegs;",
    ] {
        let e = Config::from_yaml("t", TINY_YAML, &set("memory_programs.st_global_wb", prog))
            .unwrap_err();
        assert_eq!(e.path, "memory_programs.st_global_wb", "{e}");
        assert!(e.message.contains("`end;`"), "{e}");
    }
    // `end` in both branches is enough.
    let ok = "if (isCachedL1) { readL1; end; } else { readL2; end; }";
    Config::from_yaml("t", TINY_YAML, &set("memory_programs.st_global_wb", ok)).unwrap();
}
