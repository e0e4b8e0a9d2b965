//! `--set a.b.c=value`: edit the YAML tree before it is typed, so an override is checked by
//! exactly the same rules as the file.

use serde_norway::Value;

/// Top-level sections that a file may leave out and `--set` may still fill in.
const OPTIONAL_SECTIONS: [&str; 1] = ["memory_programs"];

/// Set `path` (dot-separated) to `raw`, parsed as a YAML scalar. A missing intermediate key
/// is an error naming it; a missing leaf is created so that the typed pass can reject it with
/// the list of valid keys.
pub fn apply_override(root: &mut Value, path: &str, raw: &str) -> Result<(), String> {
    let value: Value =
        serde_norway::from_str(raw).map_err(|e| format!("cannot parse value `{raw}`: {e}"))?;
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("malformed key `{path}`"));
    }
    let mut node = root;
    for (i, part) in parts.iter().enumerate() {
        let Value::Mapping(map) = node else {
            return Err(format!("`{}` is not a section", parts[..i].join(".")));
        };
        let key = Value::String(part.to_string());
        if i + 1 == parts.len() {
            map.insert(key, value);
            return Ok(());
        }
        if i == 0 && OPTIONAL_SECTIONS.contains(part) && !map.contains_key(&key) {
            map.insert(key.clone(), Value::Mapping(Default::default()));
        }
        if !map.contains_key(&key) {
            let valid: Vec<String> = map
                .keys()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect();
            return Err(format!(
                "unknown section `{part}`; valid keys here: {}",
                valid.join(", ")
            ));
        }
        node = map.get_mut(&key).unwrap();
    }
    Ok(())
}
