//! The module header (PTX ISA §11.1): `.version` first, then `.target`, each checked against
//! the PTX ISA versions and architectures that exist, as ptxas checks them.

use super::cursor::PResult;
use super::ModuleParser;
use crate::ir::TargetArch;
use crate::lexer::Tok;
use crate::span::Span;

/// Every PTX ISA version: those ptxas 12.9 accepts (1.0 … 8.8, with 1.5 and 5.1) and the
/// later ones of the PTX ISA document (9.0, 9.1).
const VERSIONS: &[(u32, &[u32])] = &[
    (1, &[0, 1, 2, 3, 4, 5]),
    (2, &[0, 1, 2, 3]),
    (3, &[0, 1, 2]),
    (4, &[0, 1, 2, 3]),
    (5, &[0, 1]),
    (6, &[0, 1, 2, 3, 4, 5]),
    (7, &[0, 1, 2, 3, 4, 5, 6, 7, 8]),
    (8, &[0, 1, 2, 3, 4, 5, 6, 7, 8]),
    (9, &[0, 1]),
];

/// Every `.target` architecture (PTX ISA §11.1.2, plus `sm_21`, which ptxas accepts), its
/// suffix, and the first PTX ISA version that knows it (what ptxas 12.9 reports as "PTX
/// .version X does not support .target"; sm_88 and sm_110 from the PTX ISA 9.0 notes).
const ARCHS: &[(u32, Option<char>, (u32, u32))] = &[
    (10, None, (1, 0)),
    (11, None, (1, 0)),
    (12, None, (1, 2)),
    (13, None, (1, 2)),
    (20, None, (2, 0)),
    (21, None, (2, 0)),
    (30, None, (3, 0)),
    (32, None, (4, 0)),
    (35, None, (3, 1)),
    (37, None, (4, 1)),
    (50, None, (4, 0)),
    (52, None, (4, 1)),
    (53, None, (4, 2)),
    (60, None, (5, 0)),
    (61, None, (5, 0)),
    (62, None, (5, 0)),
    (70, None, (6, 0)),
    (72, None, (6, 1)),
    (75, None, (6, 3)),
    (80, None, (7, 0)),
    (86, None, (7, 1)),
    (87, None, (7, 4)),
    (88, None, (9, 0)),
    (89, None, (7, 8)),
    (90, None, (7, 8)),
    (90, Some('a'), (8, 0)),
    (100, None, (8, 6)),
    (100, Some('a'), (8, 6)),
    (100, Some('f'), (8, 8)),
    (101, None, (8, 6)),
    (101, Some('a'), (8, 6)),
    (101, Some('f'), (8, 8)),
    (103, None, (8, 8)),
    (103, Some('a'), (8, 8)),
    (103, Some('f'), (8, 8)),
    (110, None, (9, 0)),
    (110, Some('a'), (9, 0)),
    (110, Some('f'), (9, 0)),
    (120, None, (8, 7)),
    (120, Some('a'), (8, 7)),
    (120, Some('f'), (8, 8)),
    (121, None, (8, 8)),
    (121, Some('a'), (8, 8)),
    (121, Some('f'), (8, 8)),
];

fn known_version(v: (u32, u32)) -> bool {
    VERSIONS
        .iter()
        .any(|(major, minors)| *major == v.0 && minors.contains(&v.1))
}

/// "1.0–1.5, 2.0–2.3, …": each major version's minor range.
fn version_list() -> String {
    let ranges: Vec<String> = VERSIONS
        .iter()
        .map(|(major, minors)| {
            let last = minors[minors.len() - 1];
            format!("{major}.{}–{major}.{last}", minors[0])
        })
        .collect();
    ranges.join(", ")
}

/// `sm_90a` → `TargetArch { sm: 90, suffix: Some('a'), compute: false }`; None for anything else.
fn arch_of(name: &str) -> Option<TargetArch> {
    let (compute, rest) = match name.strip_prefix("sm_") {
        Some(r) => (false, r),
        None => (true, name.strip_prefix("compute_")?),
    };
    let digits = rest.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = match &rest[digits.len()..] {
        "" => None,
        "a" => Some('a'),
        "f" => Some('f'),
        _ => return None,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(TargetArch {
        sm: digits.parse().ok()?,
        suffix,
        compute,
    })
}

fn min_version(t: TargetArch) -> Option<(u32, u32)> {
    ARCHS
        .iter()
        .find(|(sm, suffix, _)| *sm == t.sm && *suffix == t.suffix)
        .map(|(_, _, v)| *v)
}

impl<'a> ModuleParser<'a> {
    /// `.version major.minor`, after the `.version` token.
    pub(super) fn version(&mut self) -> PResult<(u32, u32)> {
        let (tok, s) = self.c.bump()?;
        let text = &self.c.src[s.start as usize..s.end as usize];
        let parsed = match tok {
            Tok::Float(_) => text
                .split_once('.')
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?))),
            _ => None,
        };
        let Some(v) = parsed else {
            return Err(self.c.err(
                s,
                format!("expected a PTX ISA version such as 8.0, found `{text}`"),
            ));
        };
        if !known_version(v) {
            return Err(self.c.err(
                s,
                format!(
                    "unknown PTX ISA version {}.{} (known: {})",
                    v.0,
                    v.1,
                    version_list()
                ),
            ));
        }
        Ok(v)
    }

    /// `.target arch {, option}`, after the `.target` token: one architecture, and the options
    /// `texmode_unified` or `texmode_independent` and `debug`.
    pub(super) fn target(&mut self, directive: Span) -> PResult<(TargetArch, String)> {
        let mut arch: Option<(TargetArch, String, Span)> = None;
        let mut texmode: Option<String> = None;
        loop {
            let (name, s) = self.c.expect_ident("a target such as sm_52")?;
            match name.as_str() {
                "texmode_unified" | "texmode_independent" => {
                    if let Some(prev) = texmode.replace(name.clone()) {
                        return Err(self.c.err(
                            s,
                            format!("`.target` names two texture modes, `{prev}` and `{name}`"),
                        ));
                    }
                }
                "debug" => {}
                "map_f64_to_f32" => {
                    return Err(self.c.err(
                        s,
                        "`.target` option `map_f64_to_f32` (f64 demoted to f32, sm_1x only) is \
                         not supported",
                    ))
                }
                _ => {
                    let t = arch_of(&name).filter(|t| min_version(*t).is_some());
                    let Some(t) = t else {
                        return Err(self.c.err(
                            s,
                            format!(
                                "unknown `.target` `{name}`: expected an architecture such as \
                                 sm_52, sm_90a or compute_80 (sm_10 … sm_121f), or the option \
                                 texmode_unified, texmode_independent or debug"
                            ),
                        ));
                    };
                    if let Some((_, prev, _)) = &arch {
                        return Err(self.c.err(
                            s,
                            format!("`.target` names two architectures, `{prev}` and `{name}`"),
                        ));
                    }
                    arch = Some((t, name, s));
                }
            }
            if !self.c.eat(&Tok::Comma) {
                break;
            }
        }
        let Some((t, name, s)) = arch else {
            return Err(self
                .c
                .err(directive, "`.target` names no architecture such as sm_52"));
        };
        let need = min_version(t).unwrap_or((0, 0));
        let have = self.module.version;
        if have < need {
            return Err(self.c.err(
                s,
                format!(
                    "PTX ISA {}.{} does not know `.target {name}` (it needs `.version {}.{}` or later)",
                    have.0, have.1, need.0, need.1
                ),
            ));
        }
        Ok((t, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architecture_names() {
        let t = |sm, suffix, compute| {
            Some(TargetArch {
                sm,
                suffix,
                compute,
            })
        };
        assert_eq!(arch_of("sm_90a"), t(90, Some('a'), false));
        assert_eq!(arch_of("compute_80"), t(80, None, true));
        assert_eq!(arch_of("sm_100f"), t(100, Some('f'), false));
        assert_eq!(arch_of("sm_"), None);
        assert_eq!(arch_of("sm_90b"), None);
        assert_eq!(arch_of("sm_9x0"), None);
        assert_eq!(arch_of("gfx90"), None);
        assert!(min_version(arch_of("sm_52a").unwrap()).is_none());
        assert!(min_version(arch_of("sm_91").unwrap()).is_none());
        assert!(known_version((8, 8)) && known_version((5, 1)) && !known_version((7, 9)));
    }
}
