//! Helpers shared by the parser tests: a rejected form must be an error at its exact line and
//! column, with the file:line:col prefix users see.

use gpusim_isa::parse_module;

/// Each case `(line, message part, text the column points at)` is put into a module after `i`
/// copies of `filler` (so every error has its own line number) by `module`, whose first body
/// line is `first_line`; the parse must fail there, at the column of the pointed-at text.
pub fn assert_located_errors<S: AsRef<str>>(
    cases: &[(S, &str, &str)],
    filler: &str,
    module: impl Fn(&[&str]) -> String,
    first_line: u32,
) {
    for (i, (line, want, at)) in cases.iter().enumerate() {
        let line = line.as_ref();
        let mut lines = vec![filler; i];
        lines.push(line);
        let e = parse_module("bad.ptx", &module(&lines))
            .err()
            .unwrap_or_else(|| panic!("`{line}` was accepted"));
        let text = e.to_string();
        assert!(text.contains(want), "`{line}`: {text}");
        let col = 3 + line.find(at).expect("the pointed-at text is in the line") as u32;
        let row = first_line + i as u32;
        assert_eq!((e.line, e.col), (row, col), "`{line}`: {text}");
        assert!(
            text.starts_with(&format!("bad.ptx:{row}:{col}: ")),
            "{text}"
        );
    }
}
