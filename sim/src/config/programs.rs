//! The `memory_programs` config section: per-operation memory programs (the formal model's
//! scripts, `mem::program`) given as text, parsed and checked when the config loads.
//!
//! Keys are the library's operation names with `_` for `.` (`st.global.wb` is written
//! `st_global_wb`), so that `--set 'memory_programs.st_global_wb=...'` addresses one program:
//! `--set` splits its key at dots. Absent entries take `mem::program::library` defaults.

use std::collections::BTreeMap;

use crate::mem::program::library;
use crate::mem::program::{parse, Program, Stm};

/// The config key of an operation name: dots become underscores.
pub fn key_of(op: &str) -> String {
    op.replace('.', "_")
}

/// The valid config keys under `memory_programs`, in library order.
pub fn valid_keys() -> Vec<String> {
    library::ALL.iter().map(|(op, _)| key_of(op)).collect()
}

/// Whether every path through `prog` reaches `end`.
pub fn ends_on_every_path(prog: &[Stm]) -> bool {
    prog.iter().any(|s| match s {
        Stm::End => true,
        Stm::If(_, then, els) => ends_on_every_path(then) && ends_on_every_path(els),
        _ => false,
    })
}

/// Parse the configured programs (and the defaults for absent ones), keyed by operation
/// name. An error is `(key path, message)`.
pub fn load(
    section: &BTreeMap<String, String>,
) -> Result<BTreeMap<&'static str, Program>, (String, String)> {
    let valid = valid_keys();
    if let Some(bad) = section.keys().find(|k| !valid.contains(k)) {
        return Err((
            format!("memory_programs.{bad}"),
            format!(
                "unknown memory operation `{bad}`; valid ones (operation names with `_` for `.`): {}",
                valid.join(", ")
            ),
        ));
    }
    let mut out = BTreeMap::new();
    for (op, default) in library::ALL {
        let key = key_of(op);
        let (text, origin) = match section.get(&key) {
            Some(t) => (t.as_str(), "configured"),
            None => (default, "library default"),
        };
        let path = format!("memory_programs.{key}");
        let prog =
            parse(text).map_err(|e| (path.clone(), format!("{origin} program for `{op}`: {e}")))?;
        if !ends_on_every_path(&prog) {
            return Err((
                path,
                format!("{origin} program for `{op}` does not reach `end;` on every path"),
            ));
        }
        crate::mem::program::Compiled::new(&prog)
            .map_err(|e| (path.clone(), format!("{origin} program for `{op}`: {e}")))?;
        out.insert(op, prog);
    }
    Ok(out)
}
