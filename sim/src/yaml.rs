//! Reading the YAML inputs (manifests, configs, GEMM specs, `--set` values) strictly and in
//! bounded time: a key given twice in one mapping is an error with its key path (serde would
//! keep the last for a map-typed field such as `buffers` or `set`, silently), and nesting is
//! bounded by a linear scan before the parser runs (libyaml's flow parsing takes time
//! quadratic in the depth: 100,000 nested `[` took a minute before serde's depth limit of 128
//! refused them).

use serde_norway::Value;

/// The deepest nesting a document may have (serde_norway's own limit).
pub const MAX_DEPTH: usize = 128;

/// What is wrong and where: the key path (`buffers`, `(document)` for the whole text) and the
/// message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    pub path: String,
    pub message: String,
}

/// Parse `text` as a YAML value after the depth scan; a duplicate key names its mapping's path.
pub fn parse_value(text: &str) -> Result<Value, YamlError> {
    check_depth(text)?;
    let de = serde_norway::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let message = without_path(&path, &e.into_inner().to_string());
        // Past the depth limit the path is a hundred `[0]`s: the place says more.
        if let Some(at) = message.strip_prefix("recursion limit exceeded") {
            return YamlError {
                path: "(document)".into(),
                message: format!("nested more than {MAX_DEPTH} deep{at}"),
            };
        }
        YamlError {
            path: if path == "." {
                "(document)".into()
            } else {
                path
            },
            message,
        }
    })
}

/// Check a document before it is deserialized to its type: nesting and duplicate keys.
pub fn precheck(text: &str) -> Result<(), YamlError> {
    parse_value(text).map(drop)
}

/// serde_norway's messages start with the path of the value they concern (`launches[0]:
/// invalid type ...`); `serde_path_to_error` gives the same path. Keep it once.
pub fn without_path(path: &str, message: &str) -> String {
    let m = message
        .strip_prefix(path)
        .and_then(|m| m.strip_prefix(": "))
        .unwrap_or(message);
    // serde_norway's wording for a number or an empty value where a named choice belongs
    // (`--set sm.scheduler=3`) names its own internals; say what the user must write.
    m.replace(
        "expected a Value::Tagged enum",
        "expected one of the key's named choices, written as a word (a wrong word lists them)",
    )
}

/// The flow nesting (`[`, `{`) of `text` must stay within `MAX_DEPTH`; block nesting costs
/// its indentation in bytes, so the parser's own limit finds it quickly. The scan skips
/// comments, quoted scalars, block scalars (`|`, `>`) and brackets inside plain scalars of
/// block context (`if (x) { ... }` in a program's text).
pub fn check_depth(text: &str) -> Result<(), YamlError> {
    // Bytes, not chars: every character the scan looks for is ASCII, and in UTF-8 no byte of
    // a multi-byte character is ASCII (the scan runs over every input, configs included).
    let mut depth = 0usize;
    // Indentation of the line that opened a block scalar; its more indented lines are text.
    let mut block_scalar: Option<usize> = None;
    let mut quote: Option<u8> = None;
    for (line_no, line) in text.lines().enumerate() {
        let bytes = line.as_bytes();
        let indent = bytes.iter().take_while(|&&b| b == b' ').count();
        if let Some(parent) = block_scalar {
            if indent > parent || bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            block_scalar = None;
        }
        let mut prev = b' ';
        // The last non-blank character before this one on the line: a quote opens a scalar
        // only where a value starts, not inside a plain scalar (`don't`).
        let mut last: Option<u8> = None;
        let mut col = 0;
        while col < bytes.len() {
            let c = bytes[col];
            match quote {
                // `''` is an escaped quote inside a single-quoted scalar.
                Some(b'\'') if c == b'\'' && bytes.get(col + 1) == Some(&b'\'') => col += 1,
                Some(b'\'') if c == b'\'' => quote = None,
                Some(b'"') if c == b'"' && prev != b'\\' => quote = None,
                Some(_) => {}
                None => match c {
                    b'#' if prev == b' ' || prev == b'\t' => break,
                    b'\'' | b'"'
                        if (prev.is_ascii_whitespace() || b"[{,".contains(&prev))
                            && last.is_none_or(|l| b"[{,:-?".contains(&l)) =>
                    {
                        quote = Some(c)
                    }
                    // In block context a bracket opens a flow collection only where a value
                    // starts (`key: [`, `- {`); inside one, every bracket is structural.
                    b'[' | b'{'
                        if depth > 0
                            || (prev.is_ascii_whitespace()
                                && last.is_none_or(|l| b":-?".contains(&l))) =>
                    {
                        depth += 1;
                        if depth > MAX_DEPTH {
                            return Err(YamlError {
                                path: "(document)".into(),
                                message: format!(
                                    "nested more than {MAX_DEPTH} deep at line {} column {}",
                                    line_no + 1,
                                    col + 1
                                ),
                            });
                        }
                    }
                    b']' | b'}' if depth > 0 => depth -= 1,
                    _ => {}
                },
            }
            if !c.is_ascii_whitespace() {
                last = Some(c);
            }
            prev = c;
            col += 1;
        }
        if quote.is_none() && depth == 0 && opens_block_scalar(line) {
            block_scalar = Some(indent);
        }
    }
    Ok(())
}

/// Whether a line ends with a block scalar header (`key: |`, `- >-`, `|2`), before any comment.
fn opens_block_scalar(line: &str) -> bool {
    let code = match line.find(" #") {
        Some(i) => &line[..i],
        None => line,
    };
    let Some(last) = code.split_whitespace().last() else {
        return false;
    };
    let mut chars = last.chars();
    matches!(chars.next(), Some('|' | '>'))
        && chars.all(|c| c == '-' || c == '+' || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A number where a named choice belongs gets a message in the user's terms, on any key
    /// of that kind (the shared config path, not one key).
    #[test]
    fn a_number_for_a_named_choice_says_what_to_write() {
        for key in ["sm.scheduler", "memory_engine", "debug.step_order"] {
            let sets = [(key.to_string(), "3".to_string())];
            let e = crate::config::Config::from_yaml("tiny", crate::config::TINY_YAML, &sets)
                .unwrap_err()
                .to_string();
            assert!(e.contains("named choices, written as a word"), "{key}: {e}");
            assert!(!e.contains("Value::Tagged"), "{key}: {e}");
        }
    }

    #[test]
    fn depth_is_bounded_cheaply() {
        let deep = format!("a: {}{}", "[".repeat(100_000), "]".repeat(100_000));
        let e = check_depth(&deep).unwrap_err();
        assert!(e.message.contains("line 1 column"), "{e:?}");
        let ok = format!("a: {}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(check_depth(&ok).is_ok());
        // Brackets in comments, quotes and block scalars are text.
        let text = format!(
            "a: '{0}''{0}'\nb: \"{0}\" # {0}\nc: |\n  {0}\n  {0}\nd: [1, '{0}']\ne: don't\nf: x {0}\n",
            "[".repeat(200)
        );
        assert!(check_depth(&text).is_ok(), "{:?}", check_depth(&text));
    }

    #[test]
    fn duplicate_keys_name_their_mapping() {
        let e = parse_value("a: 1\nb:\n  x: 1\n  x: 2\n").unwrap_err();
        assert_eq!(e.path, "b", "{e:?}");
        assert!(e.message.contains("duplicate"), "{e:?}");
        let e = parse_value("a: 1\na: 2\n").unwrap_err();
        assert!(e.message.contains("duplicate"), "{e:?}");
    }
}
