//! The measurements `tools/correlate/measure.py` writes: one CSV row per launch, read by
//! column name (the header), so that added columns do not break older readers.

use std::path::Path;

/// One measured launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The workload as `gpusim export` named it (a manifest path or `gemm:SPEC:MxNxK`).
    pub workload: String,
    pub launch: usize,
    pub entry: String,
    /// Median time of the launch on the GPU, microseconds.
    pub median_us: f64,
    /// Mean SM clock while it ran (MHz), when recorded.
    pub sm_clock_mhz: Option<f64>,
    /// Mean board power while it ran (W), when recorded.
    pub power_w: Option<f64>,
    /// `pass`, `fail`, `none` or `error` (empty when the column is absent).
    pub check: String,
    pub gpu: String,
    /// 1-based line in the CSV, for messages.
    pub line: usize,
}

/// Columns a measurement CSV must have.
const REQUIRED: [&str; 3] = ["workload", "launch", "median_us"];

/// The measured rows of `text` (from `path`, named in errors with the line). Rows without a
/// time (a workload that failed on the GPU: `check` = `error`) are left out and counted in the
/// second value.
pub fn parse(path: &Path, text: &str) -> Result<(Vec<Measured>, usize), String> {
    let file = path.display();
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err(format!(
            "{file}: empty; expected a header line with the columns {}",
            REQUIRED.join(", ")
        ));
    };
    let names = split(header).map_err(|e| format!("{file}:1: {e}"))?;
    let col = |n: &str| names.iter().position(|c| c.trim() == n);
    for r in REQUIRED {
        if col(r).is_none() {
            return Err(format!(
                "{file}:1: missing column `{r}` (required: {}; found: {})",
                REQUIRED.join(", "),
                names.join(", ")
            ));
        }
    }
    let mut rows = Vec::new();
    let mut failed = 0;
    for (i, l) in lines {
        let line = i + 1;
        let cells = split(l).map_err(|e| format!("{file}:{line}: {e}"))?;
        if cells.len() != names.len() {
            return Err(format!(
                "{file}:{line}: {} fields, the header has {}",
                cells.len(),
                names.len()
            ));
        }
        let get = |n: &str| col(n).map(|k| cells[k].trim()).unwrap_or("");
        let number = |n: &str| -> Result<Option<f64>, String> {
            match get(n) {
                "" => Ok(None),
                s => s
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .map(Some)
                    .ok_or_else(|| {
                        format!("{file}:{line}: column `{n}`: `{s}` is not a non-negative number")
                    }),
            }
        };
        let Some(median_us) = number("median_us")? else {
            failed += 1;
            continue;
        };
        if median_us == 0.0 {
            return Err(format!(
                "{file}:{line}: column `median_us`: a launch takes more than 0 µs"
            ));
        }
        let launch = get("launch").parse::<usize>().map_err(|_| {
            format!(
                "{file}:{line}: column `launch`: `{}` is not a launch index (0, 1, …)",
                get("launch")
            )
        })?;
        let workload = get("workload").to_string();
        if workload.is_empty() {
            return Err(format!("{file}:{line}: column `workload` is empty"));
        }
        rows.push(Measured {
            workload,
            launch,
            entry: get("entry").to_string(),
            median_us,
            sm_clock_mhz: number("sm_clock_mhz")?.filter(|&c| c > 0.0),
            power_w: number("power_w_mean")?,
            check: get("check").to_string(),
            gpu: get("gpu").to_string(),
            line,
        });
    }
    Ok((rows, failed))
}

/// The fields of one CSV line: comma-separated, a field in double quotes may hold commas and
/// `""` for a quote (what Python's `csv` module writes).
fn split(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.trim_end_matches('\r').chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', false) if cur.is_empty() => quoted = true,
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            ('"', true) => {
                quoted = false;
                if !matches!(chars.peek(), None | Some(',')) {
                    return Err("a closing quote must end its field".into());
                }
            }
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    if quoted {
        return Err("a quoted field is not closed".into());
    }
    out.push(cur);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_quoted_fields_as_python_writes_them() {
        assert_eq!(
            split(r#"a,"b,c","say ""hi""",,d"#).unwrap(),
            ["a", "b,c", r#"say "hi""#, "", "d"]
        );
        assert!(split(r#""open"#).is_err());
        assert!(split(r#""a"b,c"#).is_err());
    }

    #[test]
    fn reads_rows_by_column_name_and_skips_failed_workloads() {
        let text = "median_us,workload,launch,check,sm_clock_mhz,extra\n\
                    12.5,t/a.yaml,0,pass,1755.0,x\n\
                    ,t/b.yaml,0,error,,\n\
                    3,gemm:g.yaml:64x64x64,1,none,,\n";
        let (rows, failed) = parse(Path::new("m.csv"), text).unwrap();
        assert_eq!(failed, 1);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].workload, "t/a.yaml");
        assert_eq!(rows[0].median_us, 12.5);
        assert_eq!(rows[0].sm_clock_mhz, Some(1755.0));
        assert_eq!(rows[0].line, 2);
        assert_eq!((rows[1].launch, rows[1].sm_clock_mhz), (1, None));
    }

    #[test]
    fn errors_name_the_line_and_column() {
        let p = Path::new("m.csv");
        let e = parse(p, "workload,launch\n").unwrap_err();
        assert!(e.contains("m.csv:1: missing column `median_us`"), "{e}");
        let e = parse(p, "workload,launch,median_us\na,0,fast\n").unwrap_err();
        assert!(e.contains("m.csv:2: column `median_us`: `fast`"), "{e}");
        let e = parse(p, "workload,launch,median_us\na,-1,3\n").unwrap_err();
        assert!(e.contains("m.csv:2: column `launch`"), "{e}");
        let e = parse(p, "workload,launch,median_us\na,0\n").unwrap_err();
        assert!(e.contains("m.csv:2: 2 fields, the header has 3"), "{e}");
        let e = parse(p, "").unwrap_err();
        assert!(e.contains("empty"), "{e}");
    }
}
