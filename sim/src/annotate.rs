//! `gpusim annotate STATS.json`: the source view of `run --stats-json` printed beside the PTX,
//! as `perf annotate` and Nsight Compute's source page show it — per line the share of the
//! kernel's warp-cycles spent waiting to issue it, the warp instructions it issued, their
//! average active lanes, and its largest stall states. `--top N` lists the N hottest lines
//! instead of the whole file.

use crate::stats::source::{SourceLine, SourceView};
use std::fmt::Write;
use std::path::Path;

/// What to print.
#[derive(Clone, Debug, Default)]
pub struct AnnotateOptions {
    /// Only the N lines with the most warp-cycles, hottest first.
    pub top: Option<usize>,
    /// Only this kernel (every kernel with a source view when None).
    pub kernel: Option<String>,
}

/// The source views of a stats document, one per kernel name (launches of the same kernel
/// summed), in the order the kernels first ran.
pub fn views(doc: &serde_json::Value) -> Result<Vec<(String, SourceView)>, String> {
    let kernels = doc
        .get("kernels")
        .and_then(|k| k.as_array())
        .ok_or("not a `run --stats-json` file: no `kernels` list")?;
    let mut out: Vec<(String, SourceView)> = Vec::new();
    for (i, k) in kernels.iter().enumerate() {
        let Some(src) = k.get("source") else { continue };
        let name = k
            .get("kernel")
            .and_then(|n| n.as_str())
            .ok_or(format!("kernels[{i}]: no `kernel` name"))?;
        let view: SourceView =
            serde_json::from_value(src.clone()).map_err(|e| format!("kernels[{i}].source: {e}"))?;
        match out.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) => v.merge(&view),
            None => out.push((name.to_string(), view)),
        }
    }
    if out.is_empty() && !kernels.is_empty() {
        return Err(
            "no kernel has a source view (`source`): it is written by `gpusim run \
                    --stats-json` since the source view was added; rerun the manifest"
                .into(),
        );
    }
    Ok(out)
}

/// The annotated listing of `doc` (a parsed `run --stats-json` file). PTX files are read
/// relative to `base` when their path is relative; a file that cannot be read is listed
/// from the instructions the view recorded.
pub fn annotate(
    doc: &serde_json::Value,
    base: &Path,
    opts: &AnnotateOptions,
) -> Result<String, String> {
    let mut views = views(doc)?;
    if let Some(k) = &opts.kernel {
        let names: Vec<String> = views.iter().map(|(n, _)| n.clone()).collect();
        views.retain(|(n, _)| n == k);
        if views.is_empty() {
            return Err(format!(
                "--kernel {k}: no such kernel in the file (kernels: {})",
                names.join(", ")
            ));
        }
    }
    let mut out = String::new();
    for (name, view) in &views {
        kernel_listing(&mut out, name, view, base, opts.top);
    }
    Ok(out)
}

fn kernel_listing(
    out: &mut String,
    name: &str,
    view: &SourceView,
    base: &Path,
    top: Option<usize>,
) {
    let total: u64 = view.lines.iter().map(SourceLine::warp_cycles).sum();
    let unattributed: u64 = view.unattributed.values().sum();
    let issued: u64 = view.lines.iter().map(|l| l.issued).sum();
    let _ = writeln!(
        out,
        "kernel {name} ({}): {issued} warp instructions, {total} warp-cycles waiting to issue a line{}",
        view.file,
        if unattributed > 0 {
            format!(" (+{unattributed} in finished warps)")
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        out,
        "{:>6} {:>10} {:>5}  {:<38} {:>5}  source",
        "cyc%", "issued", "lanes", "top stalls", "line"
    );
    match top {
        Some(n) => {
            let mut hot: Vec<&SourceLine> = view.lines.iter().collect();
            hot.sort_by(|a, b| {
                b.warp_cycles()
                    .cmp(&a.warp_cycles())
                    .then(a.line.cmp(&b.line))
            });
            for l in hot.into_iter().take(n) {
                let _ = writeln!(out, "{} {:>5}  {}", columns(l, total), l.line, l.text);
            }
        }
        None => full_listing(out, view, base, total),
    }
    out.push('\n');
}

/// Every line of the PTX file, its counters beside the lines that hold instructions.
fn full_listing(out: &mut String, view: &SourceView, base: &Path, total: u64) {
    let path = Path::new(&view.file);
    let path = if path.is_relative() && !path.exists() {
        base.join(path)
    } else {
        path.to_path_buf()
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        let _ = writeln!(
            out,
            "({} cannot be read: the recorded instructions follow)",
            path.display()
        );
        for l in &view.lines {
            let _ = writeln!(out, "{} {:>5}  {}", columns(l, total), l.line, l.text);
        }
        return;
    };
    let blank = format!("{:>6} {:>10} {:>5}  {:<38}", "", "", "", "");
    let mut lines = view.lines.iter().peekable();
    for (i, src) in text.lines().enumerate() {
        let n = i as u32 + 1;
        while lines.peek().is_some_and(|l| l.line < n) {
            lines.next();
        }
        match lines.peek() {
            Some(l) if l.line == n => {
                let _ = writeln!(out, "{} {n:>5}  {src}", columns(l, total));
            }
            _ => {
                let _ = writeln!(out, "{blank} {n:>5}  {src}");
            }
        }
    }
}

/// Share of warp-cycles, issues, average active lanes, and the two largest stall states.
fn columns(l: &SourceLine, total: u64) -> String {
    let cycles = l.warp_cycles();
    let share = if total > 0 {
        100.0 * cycles as f64 / total as f64
    } else {
        0.0
    };
    let lanes = if l.issued > 0 {
        format!("{:.1}", l.thread_instructions as f64 / l.issued as f64)
    } else {
        "-".into()
    };
    // States under half a percent of the line's cycles are left out.
    let mut stalls: Vec<(&String, &u64)> = l
        .stalls
        .iter()
        .filter(|(_, &v)| 200 * v >= cycles)
        .collect();
    stalls.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let top: Vec<String> = stalls
        .iter()
        .take(2)
        .map(|(k, &v)| format!("{k} {:.0}%", 100.0 * v as f64 / cycles.max(1) as f64))
        .collect();
    format!(
        "{share:>5.1}% {:>10} {lanes:>5}  {:<38}",
        l.issued,
        top.join(", ")
    )
}
