//! The report's HTML: sections written in order into one string, styles and script inline.

use super::{gantt, steps, Collect, ReportOptions};
use crate::run::RunOutput;
use crate::stats::source::SourceView;
use crate::stats::WarpEvent;
use std::fmt::Write;
use std::path::Path;

/// Everything a page shows.
pub struct View<'a> {
    pub manifest: &'a Path,
    /// The config file (None: the embedded tiny GPU), its text and the `--set` overrides.
    pub config: (Option<&'a Path>, &'a str, &'a [(String, String)]),
    pub out: &'a RunOutput,
    pub fault: Option<String>,
    /// The PTX file's text (empty when it could not be read).
    pub source: &'a str,
    pub timeline: &'a Collect,
    pub steps: Option<&'a [WarpEvent]>,
    pub opts: &'a ReportOptions,
}

const CSS: &str = include_str!("report.css");
const JS: &str = include_str!("report.js");

pub fn render(v: &View) -> String {
    let mut h = String::with_capacity(1 << 16);
    let title = format!("gpusim report: {}", v.manifest.display());
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{CSS}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    summary(&mut h, v);
    // For a small kernel the step-through is what a class looks at first.
    step_through(&mut h, v);
    charts(&mut h, v);
    source_view(&mut h, v);
    warp_timeline(&mut h, v);
    memory(&mut h, v);
    h.push_str("</body></html>\n");
    h
}

/// `<`, `>`, `&` and quotes escaped for text and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn summary(h: &mut String, v: &View) {
    let s = &v.out.stats;
    let m = &s.machine;
    h.push_str("<section id=\"summary\"><h2>Run</h2>");
    if let Some(f) = &v.fault {
        let _ = write!(h, "<p class=\"fault\">The kernel faulted; everything below covers the run up to the fault.<br>{}</p>", esc(f));
    }
    let _ = write!(
        h,
        "<table><tr><th class=\"l\">config</th><td class=\"l\">{} ({})</td></tr><tr><th class=\"l\">module target</th><td class=\"l\">{}</td></tr><tr><th class=\"l\">reconvergence</th><td class=\"l\">{} (setting: {})</td></tr><tr><th class=\"l\">cycles</th><td class=\"l\">{}</td></tr><tr><th class=\"l\">warp instructions</th><td class=\"l\">{}</td></tr><tr><th class=\"l\">IPC</th><td class=\"l\">{:.3}</td></tr><tr><th class=\"l\">SIMD efficiency</th><td class=\"l\">{:.1} %</td></tr><tr><th class=\"l\">occupancy</th><td class=\"l\">{:.1} %</td></tr></table>",
        esc(&m.config),
        esc(&m.arch),
        esc(&m.target),
        esc(&m.reconvergence),
        esc(&m.reconvergence_setting),
        s.totals.cycles,
        s.totals.warp_instructions,
        s.totals.ipc,
        100.0 * s.totals.simd_efficiency,
        100.0 * s.totals.occupancy,
    );
    h.push_str("<h3>Launches</h3><table><tr><th class=\"l\">kernel</th><th>cycles</th><th>warp insts</th><th>IPC</th><th>SIMD eff.</th></tr>");
    for k in &s.kernels {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.1} %</td></tr>",
            esc(&k.kernel),
            k.counters.cycles,
            k.counters.warp_instructions,
            k.counters.ipc,
            100.0 * k.counters.simd_efficiency
        );
    }
    h.push_str("</table>");
    if let Some(f) = &v.out.expected_fault {
        let _ = write!(
            h,
            "<p>Expected fault (the manifest's <code>expect_fault</code>): {}</p>",
            esc(&f.to_string())
        );
    }
    let checks = if v.fault.is_some() {
        "not run: the kernel faulted".to_string()
    } else if v.out.failures.is_empty() {
        "every check of the manifest passed".to_string()
    } else {
        let names: Vec<&str> = v.out.failures.iter().map(|f| f.buffer.as_str()).collect();
        format!("FAILED for {}", names.join(", "))
    };
    let _ = writeln!(h, "<p>Checks: {}</p>", esc(&checks));
    let (path, text, sets) = v.config;
    let name = path.map_or("configs/tiny.yaml (embedded)".to_string(), |p| {
        p.display().to_string()
    });
    let overrides: Vec<String> = sets.iter().map(|(k, x)| format!("{k}={x}")).collect();
    let _ = writeln!(
        h,
        "<details><summary>Config: {}{}</summary><pre>{}</pre></details></section>",
        esc(&name),
        if overrides.is_empty() {
            String::new()
        } else {
            esc(&format!(" with --set {}", overrides.join(" ")))
        },
        esc(text)
    );
}

fn charts(h: &mut String, v: &View) {
    let doc = super::stats_value(v.out);
    h.push_str("<section id=\"charts\"><h2>Stalls and SIMD efficiency</h2><div class=\"charts\">");
    for chart in [gpusim_viz::Chart::Stalls, gpusim_viz::Chart::Simd] {
        match gpusim_viz::svg(chart, &doc, (960, 540)) {
            Ok(svg) => h.push_str(strip_xml_header(&svg)),
            Err(e) => {
                let _ = write!(
                    h,
                    "<p class=\"note\">chart not drawn: {}</p>",
                    esc(&e.to_string())
                );
            }
        }
    }
    h.push_str("</div></section>\n");
}

/// An SVG document's `<svg …>` element alone, for inlining.
fn strip_xml_header(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |i| &svg[i..])
}

fn source_view(h: &mut String, v: &View) {
    h.push_str("<section id=\"source-view\"><h2>Source view</h2>");
    let mut merged: Option<SourceView> = None;
    for k in &v.out.stats.kernels {
        if let Some(s) = &k.source {
            match &mut merged {
                Some(m) if m.file == s.file => m.merge(s),
                Some(_) => {}
                None => merged = Some(s.clone()),
            }
        }
    }
    let Some(view) = merged else {
        h.push_str("<p class=\"note\">No source view was collected.</p></section>\n");
        return;
    };
    let total: u64 = view.lines.iter().map(|l| l.warp_cycles()).sum();
    let _ = write!(
        h,
        "<p class=\"note\">{}: per PTX line, its share of the warp-cycles spent waiting to issue a line (heat), warp instructions issued, average active lanes and largest stall states (docs/stats.md, \"Source view\").</p><table id=\"source\"><tr><th>cyc%</th><th>issued</th><th>lanes</th><th class=\"l\">top stalls</th><th>line</th><th class=\"l\">PTX</th></tr>",
        esc(&view.file)
    );
    let text: Vec<&str> = if v.source.is_empty() {
        Vec::new()
    } else {
        v.source.lines().collect()
    };
    let by_line: std::collections::BTreeMap<u32, &crate::stats::source::SourceLine> =
        view.lines.iter().map(|l| (l.line, l)).collect();
    let n = text
        .len()
        .max(view.lines.last().map_or(0, |l| l.line as usize));
    for i in 1..=n as u32 {
        let code = text
            .get(i as usize - 1)
            .copied()
            .or_else(|| by_line.get(&i).map(|l| l.text.as_str()))
            .unwrap_or("");
        match by_line.get(&i) {
            Some(l) => {
                let share = if total > 0 {
                    l.warp_cycles() as f64 / total as f64
                } else {
                    0.0
                };
                // Heat: white to red with the line's share (a quarter of the time is full red).
                let a = (share * 4.0).min(1.0);
                let lanes = if l.issued > 0 {
                    format!("{:.1}", l.thread_instructions as f64 / l.issued as f64)
                } else {
                    "-".into()
                };
                let mut st: Vec<(&String, &u64)> = l.stalls.iter().collect();
                st.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
                let cyc = l.warp_cycles().max(1);
                let top: Vec<String> = st
                    .iter()
                    .take(2)
                    .map(|(k, &c)| format!("{k} {:.0}%", 100.0 * c as f64 / cyc as f64))
                    .collect();
                let _ = write!(
                    h,
                    "<tr data-line=\"{i}\" style=\"background:rgba(220,40,40,{a:.3})\"><td>{:.1}</td><td>{}</td><td>{lanes}</td><td class=\"l\">{}</td><td>{i}</td><td class=\"code\">{}</td></tr>",
                    100.0 * share,
                    l.issued,
                    esc(&top.join(", ")),
                    esc(code)
                );
            }
            None => {
                let _ = write!(
                    h,
                    "<tr data-line=\"{i}\"><td></td><td></td><td></td><td></td><td>{i}</td><td class=\"code\">{}</td></tr>",
                    esc(code)
                );
            }
        }
    }
    h.push_str("</table></section>\n");
}

fn warp_timeline(h: &mut String, v: &View) {
    let (ws, we) = v.timeline.window();
    let _ = write!(
        h,
        "<section id=\"timeline\"><h2>Warps of SM {} over cycles {ws}–{we}</h2><p class=\"note\">The first launch; one row per CTA slot and warp slot, one bar per state interval (hover for its cycles). The whole run as a Perfetto trace: <code>gpusim run … --timeline FILE.json</code> (docs/timeline.md).</p>",
        v.opts.sm
    );
    h.push_str(&gantt::legend());
    h.push_str("<div class=\"gantt\">");
    h.push_str(&gantt::svg(&v.timeline.records, (ws, we)));
    h.push_str("</div></section>\n");
}

fn memory(h: &mut String, v: &View) {
    let doc = super::stats_value(v.out);
    h.push_str("<section id=\"memory\"><h2>Memory system</h2><table><tr><th class=\"l\">counter</th><th>value</th></tr>");
    let mut rows = Vec::new();
    flatten("", &doc["memory"], &mut rows);
    for (k, val) in rows {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td></tr>",
            esc(&k),
            esc(&val)
        );
    }
    h.push_str("</table></section>\n");
}

/// Scalar leaves of a JSON object as (dotted key, value); arrays are summarised by length.
fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        serde_json::Value::Array(a) => {
            out.push((prefix.to_string(), format!("[{} values]", a.len())))
        }
        serde_json::Value::Number(n) => {
            let s = match n.as_f64() {
                Some(f) if n.is_f64() => format!("{f:.4}"),
                _ => n.to_string(),
            };
            out.push((prefix.to_string(), s));
        }
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

fn step_through(h: &mut String, v: &View) {
    h.push_str("<section id=\"step-through\"><h2>Warp step-through</h2>");
    let Some(events) = v.steps else {
        let _ = writeln!(
            h,
            "<p class=\"note\">Not built: the run issued {} warp instructions, more than the {} a step-through is built for (<code>--step-limit</code>).</p></section>",
            v.out.stats.totals.warp_instructions, v.opts.step_limit
        );
        return;
    };
    let warp_size = v
        .out
        .stats
        .kernels
        .first()
        .map_or(32, |k| k.counters.simd_lanes.len().saturating_sub(1) as u32);
    let data = steps::data(events, v.source, warp_size);
    h.push_str("<div id=\"stepper\"><label>Warp <select id=\"warp\"></select></label> <button id=\"prev\" title=\"previous (←)\">◀ prev</button> <button id=\"next\" title=\"next (→)\">next ▶</button> <span id=\"step-info\"></span>");
    h.push_str("<div id=\"step-line\"></div><div>Lanes that executed it:</div><div class=\"lanes\" id=\"exec\"></div>");
    h.push_str("<div>After it — active mask α, and each disabled lane's reason δ (b: break, r: return, e: exit):</div><div class=\"lanes\" id=\"alpha\"></div>");
    h.push_str("<div>Token stack, top first (kind, mask, pc):</div><ol id=\"stack\"></ol><pre id=\"state-raw\"></pre><div id=\"context\"></div></div>");
    // `</` cannot end the script early: JSON escapes it.
    let json = data.to_string().replace("</", "<\\/");
    let _ = writeln!(
        h,
        "<script type=\"application/json\" id=\"steps-data\">{json}</script><script>{JS}</script></section>"
    );
}
