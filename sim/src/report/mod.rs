//! `gpusim report MANIFEST -o report.html`: one self-contained HTML page about a run — the
//! summary and machine, the stall and SIMD charts (plotters, inlined SVG), the source view with
//! per-line heat, a per-warp timeline of one SM for a window of cycles, the memory counters,
//! and for small kernels a warp step-through (each issued instruction of a chosen warp with
//! its line, executing lanes, active mask, per-lane disable reasons and token stack — the
//! formal report's notation). No network: styles, script, data and charts are all inline.
//!
//! The manifest runs once with the source view and the timeline collected; when it issued at
//! most `ReportOptions::step_limit` warp instructions it runs again (the same run: results
//! are deterministic) with its warp events recorded for the step-through.

mod gantt;
mod page;
mod steps;

use crate::run::{run_manifest_traced, RunError, RunOptions, RunOutput};
use crate::stats::trace::TraceSink;
use crate::stats::WarpEvent;
use crate::timeline::{CounterSample, LaunchShape, Record, TimelineSink};
use std::path::Path;

/// What the report shows.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// Cycles of the first launch drawn in the warp timeline.
    pub window: (u64, u64),
    /// The SM whose warps the timeline draws.
    pub sm: u32,
    /// The step-through is built for runs of at most this many warp instructions.
    pub step_limit: u64,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            window: (0, 4000),
            sm: 0,
            step_limit: 20_000,
        }
    }
}

/// The report of `manifest` as an HTML document, and the fault that stopped the run when the
/// manifest did not expect one: a fault does not stop the report, it shows the run up to it.
pub fn report(
    manifest: &Path,
    config: Option<&Path>,
    sets: &[(String, String)],
    run: &RunOptions,
    opts: &ReportOptions,
) -> Result<(String, Option<crate::core::fault::Fault>), RunError> {
    let first = RunOptions {
        lines: true,
        trace_warps: false,
        ..run.clone()
    };
    let mut collect = Collect::new(opts);
    let (out, fault) = run_manifest_traced(manifest, config, sets, &first, &mut collect)?;
    let steps = if out.stats.totals.warp_instructions <= opts.step_limit {
        let again = RunOptions {
            trace_warps: true,
            ..first
        };
        let mut events: Vec<WarpEvent> = Vec::new();
        run_manifest_traced(manifest, config, sets, &again, &mut events)?;
        Some(events)
    } else {
        None
    };
    let src = out
        .stats
        .kernels
        .iter()
        .find_map(|k| k.source.as_ref())
        .and_then(|v| std::fs::read_to_string(&v.file).ok())
        .unwrap_or_default();
    let config_text = match config {
        Some(p) => std::fs::read_to_string(p).unwrap_or_default(),
        None => crate::config::TINY_YAML.to_string(),
    };
    let view = page::View {
        manifest,
        config: (config, &config_text, sets),
        out: &out,
        fault: fault.as_ref().map(|f| f.to_string()),
        source: &src,
        timeline: &collect,
        steps: steps.as_deref(),
        opts,
    };
    Ok((page::render(&view), fault))
}

/// The first launch's timeline records of one SM within the window, kept in memory.
pub(crate) struct Collect {
    sm: u32,
    window: (u64, u64),
    launches: u32,
    /// The first launch's cycles, once it ended (the window is clipped to them).
    first_cycles: Option<u64>,
    pub(crate) shape: Option<LaunchShape>,
    pub(crate) records: Vec<Record>,
}

impl Collect {
    fn new(opts: &ReportOptions) -> Collect {
        Collect {
            sm: opts.sm,
            window: opts.window,
            launches: 0,
            first_cycles: None,
            shape: None,
            records: Vec::new(),
        }
    }

    /// The window drawn: the one asked for, within the first launch.
    pub(crate) fn window(&self) -> (u64, u64) {
        let (ws, we) = self.window;
        let end = self.first_cycles.map_or(we, |c| we.min(c.max(1)));
        (ws.min(end.saturating_sub(1)), end)
    }
}

impl TraceSink for Collect {
    fn event(&mut self, _: WarpEvent) {}

    fn timeline(&mut self) -> Option<&mut dyn TimelineSink> {
        Some(self)
    }
}

impl TimelineSink for Collect {
    fn records_sm(&self, sm: u32) -> bool {
        sm == self.sm
    }

    fn counter_interval(&self) -> u64 {
        u64::MAX / 4
    }

    fn launch_begin(&mut self, shape: &LaunchShape) {
        self.launches += 1;
        if self.launches == 1 {
            self.shape = Some(shape.clone());
        }
    }

    fn record(&mut self, sm: u32, r: Record) {
        if self.launches != 1 || sm != self.sm {
            return;
        }
        let (ws, we) = self.window;
        let keep = match &r {
            Record::State { start, end, .. } | Record::Cta { start, end, .. } => {
                *start < we && *end > ws
            }
            Record::Instant { cycle, .. } => (ws..we).contains(cycle),
            Record::Request { .. } => false,
        };
        if keep {
            self.records.push(r);
        }
    }

    fn counters(&mut self, _: &CounterSample) {}

    fn fault(&mut self, _: u64, _: &str) {}

    fn launch_end(&mut self, cycles: u64) {
        if self.launches == 1 {
            self.first_cycles = Some(cycles);
        }
    }
}

/// The run's statistics as the JSON document `--stats-json` writes (the charts read it).
fn stats_value(out: &RunOutput) -> serde_json::Value {
    serde_json::to_value(&out.stats).expect("stats serialise")
}
