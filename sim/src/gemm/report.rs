//! The forms a GEMM prediction is reported in: aligned table lines (header first, a row per
//! size as it finishes), the anchor comparison lines, and CSV. Text only; the binary prints.

use super::metrics::Metrics;
use super::run::Verification;

/// The CSV header; `csv_row` gives the fields in this order.
pub const CSV_HEADER: &str = "kernel,config,m,n,k,ctas,ctas_per_sm,waves,wave_efficiency,cycles,time_us,tflops,peak_tflops,pct_peak,warp_instructions,sim_seconds,warp_instructions_per_second,verified,max_error,anchor_tflops,anchor_rel_diff,sampled,simulated_ctas,sample_error,simulated_warp_instructions,mean_clock_mhz,avg_watts,peak_watts,energy_j,pj_per_flop";

pub fn table_header() -> String {
    format!(
        "{:>19} {:>6} {:>4} {:>7} {:>6} {:>12} {:>11} {:>9} {:>7} {:>6} {:>6} {:>7} {:>12} {:>8} {:>10} {:>8} {:>8}",
        "M x N x K",
        "CTAs",
        "/SM",
        "waves",
        "w.eff",
        "cycles",
        "time us",
        "TFLOP/s",
        "% peak",
        "MHz",
        "W",
        "pJ/FLOP",
        "warp insts",
        "sim s",
        "winst/s",
        "verified",
        "sampled"
    )
}

fn verified(v: &Verification) -> &'static str {
    match v {
        Verification::Skipped => "skipped",
        Verification::Passed { .. } => "passed",
        Verification::Failed { .. } => "FAILED",
    }
}

fn max_error(v: &Verification) -> Option<f64> {
    match v {
        Verification::Skipped => None,
        Verification::Passed { max_error } | Verification::Failed { max_error, .. } => {
            Some(*max_error)
        }
    }
}

pub fn table_row(m: &Metrics) -> String {
    let or_dash =
        |x: Option<f64>, digits: usize| x.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    format!(
        "{:>19} {:>6} {:>4} {:>7.2} {:>5.1}% {:>12} {:>11.1} {:>9.2} {:>6.1}% {:>6.0} {:>6} {:>7} {:>12} {:>8.2} {:>10.3e} {:>8} {:>8}",
        m.size.to_string(),
        m.ctas,
        m.ctas_per_sm,
        m.waves,
        100.0 * m.wave_efficiency,
        m.cycles,
        m.seconds * 1e6,
        m.tflops,
        m.pct_peak,
        m.mean_mhz,
        or_dash(m.watts, 0),
        or_dash(m.pj_per_flop, 3),
        m.warp_instructions,
        m.sim_seconds,
        m.warp_instructions_per_second,
        verified(&m.verification),
        sampled(m)
    )
}

/// The table's sample column: `-` for a full run, else the error bound (`?` with none).
fn sampled(m: &Metrics) -> String {
    match &m.sample {
        Some(s) if s.sampled => s
            .estimated_error
            .map_or("?".to_string(), |e| format!("±{:.2}%", 100.0 * e)),
        _ => "-".to_string(),
    }
}

/// One line per size with a published figure: prediction, figure, relative difference.
pub fn anchor_lines(rows: &[Metrics]) -> Vec<String> {
    rows.iter()
        .filter_map(|m| {
            m.anchor.as_ref().map(|(tf, rel, src)| {
                format!(
                    "{:>19}  predicted {:>8.2} TFLOP/s  published {:>8.2} TFLOP/s  difference {:>+7.1}%  ({src})",
                    m.size.to_string(),
                    m.tflops,
                    tf,
                    100.0 * rel
                )
            })
        })
        .collect()
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn csv_row(kernel: &str, config: &str, m: &Metrics) -> String {
    let opt = |x: Option<f64>| x.map(|v| format!("{v:.6e}")).unwrap_or_default();
    [
        field(kernel),
        field(config),
        m.size.m.to_string(),
        m.size.n.to_string(),
        m.size.k.to_string(),
        m.ctas.to_string(),
        m.ctas_per_sm.to_string(),
        format!("{:.4}", m.waves),
        format!("{:.4}", m.wave_efficiency),
        m.cycles.to_string(),
        format!("{:.3}", m.seconds * 1e6),
        format!("{:.3}", m.tflops),
        format!("{:.3}", m.peak_tflops),
        format!("{:.2}", m.pct_peak),
        m.warp_instructions.to_string(),
        format!("{:.3}", m.sim_seconds),
        format!("{:.0}", m.warp_instructions_per_second),
        verified(&m.verification).to_lowercase(),
        opt(max_error(&m.verification)),
        opt(m.anchor.as_ref().map(|a| a.0)),
        opt(m.anchor.as_ref().map(|a| a.1)),
        m.sample.as_ref().is_some_and(|s| s.sampled).to_string(),
        m.sample
            .as_ref()
            .map_or(m.ctas, |s| s.simulated_ctas)
            .to_string(),
        opt(m.sample.as_ref().and_then(|s| s.estimated_error)),
        m.sample
            .as_ref()
            .map_or(m.warp_instructions, |s| s.simulated_warp_instructions)
            .to_string(),
        format!("{:.1}", m.mean_mhz),
        opt(m.watts),
        opt(m.peak_watts),
        opt(m.joules),
        opt(m.pj_per_flop),
    ]
    .join(",")
}

/// The whole CSV document.
pub fn csv(kernel: &str, config: &str, rows: &[Metrics]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for m in rows {
        out.push_str(&csv_row(kernel, config, m));
        out.push('\n');
    }
    out
}
