//! `--set a.b.c=value`: edit the YAML tree before it is typed, so an override is checked by
//! exactly the same rules as the file. An error an override caused is reported where the
//! override was written (`Origin`), not in the config file.

use serde_norway::Value;

/// Top-level sections that a file may leave out and `--set` may still fill in.
const OPTIONAL_SECTIONS: [&str; 3] = ["memory_programs", "debug", "clock"];

/// Set `path` (dot-separated) to `raw`, parsed as a YAML scalar. A missing intermediate key
/// is an error naming it; a missing leaf is created so that the typed pass can reject it with
/// the list of valid keys.
pub fn apply_override(root: &mut Value, path: &str, raw: &str) -> Result<(), String> {
    let value = crate::yaml::parse_value(raw)
        .map_err(|e| format!("cannot parse value `{}`: {}", short(raw), e.message))?;
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

/// Where an override was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A manifest's `set:` section (the manifest's file name).
    Manifest(String),
    /// The command line's `--set KEY=VALUE`.
    CommandLine,
}

/// One override with its origin: `key` (dot-separated) set to `value` (YAML text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    pub key: String,
    pub value: String,
    pub origin: Origin,
}

impl Override {
    /// Whether an error at config key `path` (`message`) is this override's doing: the key
    /// itself, something inside the value it set, or the section holding it when the message
    /// names the key's next part (`unknown field `wrap_size``, a unit's `count`).
    pub fn caused(&self, path: &str, message: &str) -> bool {
        if path == self.key || path.starts_with(&format!("{}.", self.key)) {
            return true;
        }
        match self
            .key
            .strip_prefix(path)
            .and_then(|r| r.strip_prefix('.'))
        {
            Some(rest) => {
                let next = rest.split('.').next().unwrap_or(rest);
                message.contains(next)
            }
            None => false,
        }
    }

    /// The error's source and key path as the user wrote them: `FILE` and `set.KEY...` for a
    /// manifest's override; `--set KEY=VALUE` and the key path for the command line's
    /// (`ConfigError`'s `Display` leaves the path out when the source already says it).
    pub fn locate(&self, path: &str) -> (String, String) {
        let below = path
            .strip_prefix(self.key.as_str())
            .map(|r| r.trim_start_matches('.'));
        match &self.origin {
            Origin::Manifest(file) => {
                let key = match below {
                    Some("") | None => self.key.clone(),
                    Some(r) => format!("{}.{r}", self.key),
                };
                (file.clone(), format!("set.{key}"))
            }
            Origin::CommandLine => (
                format!("--set {}={}", self.key, short(&self.value)),
                path.to_string(),
            ),
        }
    }
}

/// A value as the message quotes it: at most 60 characters.
fn short(v: &str) -> String {
    if v.chars().count() <= 60 {
        v.to_string()
    } else {
        format!("{}…", v.chars().take(60).collect::<String>())
    }
}
