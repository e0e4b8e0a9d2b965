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
    let ok = "if (isCachedL1) { readL1; end; } else { discardL1; end; }";
    Config::from_yaml("t", TINY_YAML, &set("memory_programs.st_global_wb", ok)).unwrap();
}

/// A macro step (the statements between two `yield`s) runs atomically at one component; one
/// that acts at two places is refused at load with the key path and the step's text.
#[test]
fn step_acting_at_two_places_is_rejected() {
    let prog = "if (isCachedL1) { readL1; } else { readL2; } yield; writeToRegs; releaseRegs; end;";
    let e =
        Config::from_yaml("t", TINY_YAML, &set("memory_programs.ld_global_ca", prog)).unwrap_err();
    assert_eq!(e.path, "memory_programs.ld_global_ca", "{e}");
    assert!(e.message.contains("acts at L1 and L2"), "{e}");
    assert!(e.message.contains("put a `yield` between"), "{e}");
}

fn chase_l1(sets: &[(String, String)]) -> Result<gpusim::run::RunOutput, gpusim::run::RunError> {
    let m =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/microbench/chase_l1.yaml");
    gpusim::run_manifest(&m, None, sets)
}

/// Editing a program changes the simulated machine: with `ld.global.ca` replaced by the
/// L2-only program of `ld.global.cg`, the L1-resident pointer chase misses L1 on every load
/// and runs at the L2 latency; its result is unchanged.
#[test]
fn editing_a_program_changes_the_timing() {
    let base = chase_l1(&[]).unwrap();
    let cg = chase_l1(&set("memory_programs.ld_global_ca", library::LD_CG)).unwrap();
    assert!(base.failures.is_empty() && cg.failures.is_empty());
    let (b, c) = (&base.stats.totals, &cg.stats.totals);
    assert_eq!(c.memory.counters.l1_hits, 0, "{:?}", c.memory.counters);
    assert!(b.memory.counters.l1_hits > 0);
    // 68 dependent loads over 16 lines: the 52 that hit L1 by default each cost
    // l2 − l1 = 180 cycles more (the 16 cold misses cost the same either way).
    assert_eq!(
        c.cycles - b.cycles,
        52 * 180,
        "{} vs {}",
        c.cycles,
        b.cycles
    );
}

/// A program the formal model leaves stuck (⊥) is a fault naming the program, its config key
/// and the kernel's PTX line; it exits with code 3.
#[test]
fn a_stuck_program_is_a_located_fault() {
    let bad = "readL1; yield; writeToRegs; yield; releaseRegs; end;";
    let e = match chase_l1(&set("memory_programs.ld_global_ca", bad)) {
        Err(e) => e,
        Ok(_) => panic!("readL1 of an uncached line must fault"),
    };
    let msg = e.to_string();
    assert_eq!(e.exit_code(), 3, "{msg}");
    for want in [
        "memory-program",
        "ld.global.ca",
        "memory_programs.ld_global_ca",
        "readL1",
        "chase.ptx:",
    ] {
        assert!(msg.contains(want), "{want:?} missing from: {msg}");
    }
}
