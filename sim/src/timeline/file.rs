//! The timeline as a Chrome trace-event JSON file (the format Perfetto UI and
//! chrome://tracing open), streamed as the records come.
//!
//! Layout: process 0 is the GPU (one slice per launch, the counter tracks, faults); process
//! `sm + 1` is an SM, its threads the CTA slots (`tid` 10000 + slot, on top) and the warp
//! slots (`tid` = slot, named and sorted by sub-partition). Warp slots hold complete (`X`)
//! slices, one per state interval, named by the stall state (docs/stats.md); CTA slots one per
//! CTA. Timestamps are microseconds at the modelled clock (`ts` = cycle / MHz), written as
//! integers of picoseconds so that consecutive slices share their boundary exactly. Launches
//! follow one another: each starts where the previous ended.

use super::{CounterSample, LaunchShape, Record, TimelineSink, Track};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// What to record (`--timeline-window`, `--timeline-sms`, `--timeline-interval`).
#[derive(Clone, Debug)]
pub struct TimelineOptions {
    /// Cycles of the run (launches laid end to end) to keep: slices are clipped to it.
    pub window: Option<(u64, u64)>,
    /// The SMs to record (all when None).
    pub sms: Option<Vec<u32>>,
    /// Cycles between counter samples.
    pub interval: u64,
    /// Memory requests as async slices (`--timeline-memory`).
    pub memory: bool,
}

impl Default for TimelineOptions {
    fn default() -> Self {
        TimelineOptions {
            window: None,
            sms: None,
            interval: 1000,
            memory: false,
        }
    }
}

impl TimelineOptions {
    /// `START:END` in cycles (END > START).
    pub fn parse_window(s: &str) -> Result<(u64, u64), String> {
        let (a, b) = s
            .split_once(':')
            .ok_or_else(|| format!("`{s}`: expected START:END in cycles"))?;
        let num = |t: &str| {
            t.trim()
                .parse::<u64>()
                .map_err(|_| format!("`{s}`: `{t}` is not a cycle count"))
        };
        let (a, b) = (num(a)?, num(b)?);
        if b <= a {
            return Err(format!("`{s}`: END must be after START"));
        }
        Ok((a, b))
    }

    /// A list of SM ids and ranges: `0,2,8-11`.
    pub fn parse_sms(s: &str) -> Result<Vec<u32>, String> {
        let mut out = Vec::new();
        for part in s.split(',') {
            let num = |t: &str| {
                t.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("`{s}`: `{t}` is not an SM id"))
            };
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if b < a {
                        return Err(format!("`{s}`: range `{part}` is empty"));
                    }
                    out.extend(a..=b);
                }
                None => out.push(num(part)?),
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }
}

/// A timeline file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the timeline {}: {source}", path.display())]
pub struct TimelineError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Streams the timeline to a file; `finish` closes the JSON document.
pub struct TimelineWriter {
    path: PathBuf,
    out: BufWriter<File>,
    error: Option<std::io::Error>,
    opts: TimelineOptions,
    first: bool,
    /// Metadata written (once per run: every launch has the same machine).
    described: bool,
    /// Cycles of the launches before the current one.
    offset: u64,
    clock_mhz: f64,
    kernel: String,
}

const CTA_TID: u32 = 10_000;

impl TimelineWriter {
    pub fn create(path: &Path, opts: TimelineOptions) -> Result<TimelineWriter, TimelineError> {
        let file = File::create(path).map_err(|source| TimelineError {
            path: path.to_path_buf(),
            source,
        })?;
        let mut w = TimelineWriter {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 16, file),
            error: None,
            opts,
            first: true,
            described: false,
            offset: 0,
            clock_mhz: 1000.0,
            kernel: String::new(),
        };
        w.raw("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        Ok(w)
    }

    /// Close the document and flush; the first error of any write.
    pub fn finish(mut self) -> Result<(), TimelineError> {
        self.raw("\n]}\n");
        let flushed = match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush(),
        };
        flushed.map_err(|source| TimelineError {
            path: self.path.clone(),
            source,
        })
    }

    fn raw(&mut self, s: &str) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(s.as_bytes()) {
                self.error = Some(e);
            }
        }
    }

    fn event(&mut self, json: String) {
        let sep = if self.first { "" } else { ",\n" };
        self.first = false;
        self.raw(sep);
        self.raw(&json);
    }

    /// `cycle` of the current launch as a timestamp: microseconds, to the picosecond.
    fn ts(&self, cycle: u64) -> String {
        let ps = ((self.offset + cycle) as f64 * 1e6 / self.clock_mhz).round() as u64;
        format!("{}.{:06}", ps / 1_000_000, ps % 1_000_000)
    }

    /// The duration between two cycles, as the difference of their timestamps.
    fn dur(&self, start: u64, end: u64) -> String {
        let ps = |c: u64| ((self.offset + c) as f64 * 1e6 / self.clock_mhz).round() as u64;
        let d = ps(end) - ps(start);
        format!("{}.{:06}", d / 1_000_000, d % 1_000_000)
    }

    /// `[start, end)` clipped to the window (in launch cycles), or None when outside it.
    fn clip(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        let Some((ws, we)) = self.opts.window else {
            return Some((start, end));
        };
        let (s, e) = (
            start.max(ws.saturating_sub(self.offset)),
            end.min(we.saturating_sub(self.offset)),
        );
        (s < e).then_some((s, e))
    }

    fn in_window(&self, cycle: u64) -> bool {
        self.opts
            .window
            .is_none_or(|(ws, we)| (ws..we).contains(&(self.offset + cycle)))
    }

    fn slice(&mut self, pid: u32, tid: u32, name: &str, cat: &str, start: u64, end: u64) {
        let Some((s, e)) = self.clip(start, end) else {
            return;
        };
        let json = format!(
            "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":\"{cat}\",\"args\":{{\"start_cycle\":{s},\"cycles\":{}}}}}",
            self.ts(s),
            self.dur(s, e),
            quote(name),
            e - s
        );
        self.event(json);
    }

    fn metadata(&mut self, pid: u32, tid: Option<u32>, kind: &str, value: String) {
        let json = match tid {
            Some(t) => format!(
                "{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{t},\"name\":\"{kind}\",\"args\":{{\"{}\":{value}}}}}",
                if kind.ends_with("sort_index") { "sort_index" } else { "name" }
            ),
            None => format!(
                "{{\"ph\":\"M\",\"pid\":{pid},\"name\":\"{kind}\",\"args\":{{\"{}\":{value}}}}}",
                if kind.ends_with("sort_index") { "sort_index" } else { "name" }
            ),
        };
        self.event(json);
    }

    fn describe(&mut self, shape: &LaunchShape) {
        self.metadata(0, None, "process_name", quote("GPU"));
        self.metadata(0, None, "process_sort_index", "0".into());
        self.metadata(0, Some(0), "thread_name", quote("launches"));
        let parts = shape.sub_partitions.max(1);
        for sm in 0..shape.sms {
            if !self.records_sm(sm) {
                continue;
            }
            let pid = sm + 1;
            self.metadata(pid, None, "process_name", quote(&format!("SM {sm}")));
            self.metadata(pid, None, "process_sort_index", pid.to_string());
            for c in 0..shape.cta_slots {
                let tid = CTA_TID + c;
                self.metadata(
                    pid,
                    Some(tid),
                    "thread_name",
                    quote(&format!("CTA slot {c}")),
                );
                self.metadata(pid, Some(tid), "thread_sort_index", c.to_string());
            }
            for w in 0..shape.warp_slots {
                let part = w % parts;
                let name = format!("sub-partition {part} / warp slot {w}");
                self.metadata(pid, Some(w), "thread_name", quote(&name));
                let order = shape.cta_slots + part * shape.warp_slots + w;
                self.metadata(pid, Some(w), "thread_sort_index", order.to_string());
            }
        }
    }

    fn counter(&mut self, cycle: u64, name: &str, value: f64) {
        let json = format!(
            "{{\"ph\":\"C\",\"pid\":0,\"ts\":{},\"name\":{},\"args\":{{\"value\":{}}}}}",
            self.ts(cycle),
            quote(name),
            finite(value)
        );
        self.event(json);
    }
}

fn finite(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.4}")
    } else {
        "0".into()
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

impl TimelineSink for TimelineWriter {
    fn records_sm(&self, sm: u32) -> bool {
        self.opts
            .sms
            .as_ref()
            .is_none_or(|l| l.binary_search(&sm).is_ok())
    }

    fn records_memory(&self) -> bool {
        self.opts.memory
    }

    fn counter_interval(&self) -> u64 {
        self.opts.interval.max(1)
    }

    fn launch_begin(&mut self, shape: &LaunchShape) {
        self.clock_mhz = shape.clock_mhz.max(1e-3);
        self.kernel = shape.kernel.clone();
        if !self.described {
            self.described = true;
            self.describe(shape);
        }
    }

    fn record(&mut self, sm: u32, r: Record) {
        let pid = sm + 1;
        match r {
            Record::State {
                slot,
                state,
                start,
                end,
            } => self.slice(pid, slot, state.name(), "warp", start, end),
            Record::Cta {
                cslot,
                ctaid,
                start,
                end,
            } => {
                let name = format!("CTA ({},{},{})", ctaid[0], ctaid[1], ctaid[2]);
                self.slice(pid, CTA_TID + cslot, &name, "cta", start, end);
            }
            Record::Request {
                slot,
                id,
                name,
                start,
                end,
            } => {
                let Some((s, e)) = self.clip(start, end) else {
                    return;
                };
                // An async pair per request (its own track in Perfetto, nested under the
                // warp's thread); the id is unique per SM while the request is in flight.
                let (ts, te) = (self.ts(s), self.ts(e));
                let id = format!("\"sm{sm}-{id:x}-{}\"", self.offset + start);
                let name = quote(&name);
                let begin = format!(
                    "{{\"ph\":\"b\",\"cat\":\"memory\",\"id\":{id},\"pid\":{pid},\"tid\":{slot},\"ts\":{ts},\"name\":{name},\"args\":{{\"start_cycle\":{s},\"cycles\":{}}}}}",
                    e - s
                );
                let end = format!(
                    "{{\"ph\":\"e\",\"cat\":\"memory\",\"id\":{id},\"pid\":{pid},\"tid\":{slot},\"ts\":{te},\"name\":{name}}}"
                );
                self.event(begin);
                self.event(end);
            }
            Record::Instant { track, name, cycle } => {
                if !self.in_window(cycle) {
                    return;
                }
                let tid = match track {
                    Track::Warp(s) => s,
                    Track::Cta(c) => CTA_TID + c,
                };
                let json = format!(
                    "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"name\":{},\"args\":{{\"cycle\":{cycle}}}}}",
                    self.ts(cycle),
                    quote(&name)
                );
                self.event(json);
            }
        }
    }

    fn counters(&mut self, c: &CounterSample) {
        if !self.in_window(c.cycle) {
            return;
        }
        self.counter(c.cycle, "IPC", c.ipc);
        self.counter(c.cycle, "active warps", c.active_warps as f64);
        if let Some(r) = c.l1_hit_rate {
            self.counter(c.cycle, "L1 hit rate", r);
        }
        if let Some(r) = c.l2_hit_rate {
            self.counter(c.cycle, "L2 hit rate", r);
        }
        self.counter(
            c.cycle,
            "interconnect bytes/cycle",
            c.interconnect_bytes_per_cycle,
        );
        self.counter(c.cycle, "DRAM bytes/cycle", c.dram_bytes_per_cycle);
        self.counter(c.cycle, "core clock MHz", c.clock_mhz);
        if let Some(w) = c.power_watts {
            self.counter(c.cycle, "power W", w);
        }
    }

    fn fault(&mut self, cycle: u64, what: &str) {
        let json = format!(
            "{{\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":{},\"name\":{},\"args\":{{\"cycle\":{cycle}}}}}",
            self.ts(cycle),
            quote(&format!("fault: {what}"))
        );
        self.event(json);
    }

    fn launch_end(&mut self, cycles: u64) {
        let kernel = std::mem::take(&mut self.kernel);
        self.slice(0, 0, &kernel, "launch", 0, cycles.max(1));
        self.offset += cycles;
    }
}
