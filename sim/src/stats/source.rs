//! The source view of a launch: per PTX line of the kernel and the functions it calls, the
//! issues, thread instructions, active-lane histogram and warp-cycles per stall state waiting
//! to issue it (`stats::lines` counts them per instruction; this sums the instructions of a
//! line — the tokens the reconvergence analysis inserts carry the line of the branch or block
//! they belong to). The `source` key of a kernel in `--stats-json`; `gpusim annotate` prints
//! it beside the PTX.

use super::lines::LineCounters;
use super::Stall;
use crate::core::program::Program;
use gpusim_isa::{FuncId, Pc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceView {
    /// The PTX file, as the manifest named it.
    pub file: String,
    /// One entry per source line holding instructions of a function the kernel can run,
    /// in line order.
    pub lines: Vec<SourceLine>,
    /// Warp-cycles of warps with no instruction to issue (finished warps waiting for their
    /// CTA), by stall state: with the lines' stalls they sum to the kernel's `stalls`.
    pub unattributed: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceLine {
    /// 1-based line in `file`.
    pub line: u32,
    pub function: String,
    /// The line's instructions as the simulator read them (`;`-separated when several).
    pub text: String,
    /// Warp instructions issued.
    pub issued: u64,
    pub thread_instructions: u64,
    /// `lanes[k]`: issues with k active lanes (k = 0..=warp size).
    pub lanes: Vec<u64>,
    /// Warp-cycles per stall state spent waiting to issue this line (zero states left out).
    pub stalls: BTreeMap<String, u64>,
}

impl SourceLine {
    /// Warp-cycles waiting to issue this line, in every state (issuing included).
    pub fn warp_cycles(&self) -> u64 {
        self.stalls.values().sum()
    }
}

impl SourceView {
    /// The view of a launch of `entry` from its summed counters.
    pub fn build(prog: &Program, entry: FuncId, c: &LineCounters) -> SourceView {
        let m = &prog.module;
        let mut by_line: BTreeMap<u32, SourceLine> = BTreeMap::new();
        for f in m.reachable_functions(entry) {
            let func = m.function(f);
            for (pc, inst) in func.body.iter().enumerate() {
                let i = prog.inst_index(f, pc as Pc) as usize;
                let entry = by_line.entry(inst.span.line).or_insert_with(|| SourceLine {
                    line: inst.span.line,
                    function: func.name.clone(),
                    lanes: vec![0; c.lanes(i).len()],
                    ..SourceLine::default()
                });
                let text = gpusim_isa::print::inst_to_ptx(m, func, inst);
                if !entry.text.split("; ").any(|t| t == text) {
                    if !entry.text.is_empty() {
                        entry.text.push_str("; ");
                    }
                    entry.text.push_str(&text);
                }
                for (k, &n) in c.lanes(i).iter().enumerate() {
                    entry.lanes[k] += u64::from(n);
                    entry.issued += u64::from(n);
                    entry.thread_instructions += k as u64 * u64::from(n);
                }
                add_stalls(&mut entry.stalls, c.stalls(i));
            }
        }
        let mut unattributed = BTreeMap::new();
        add_stalls(&mut unattributed, c.unattributed());
        SourceView {
            file: m.file.clone(),
            lines: by_line.into_values().collect(),
            unattributed,
        }
    }

    /// Every stall state's warp-cycles over the lines and the unattributed ones.
    pub fn stall_totals(&self) -> BTreeMap<String, u64> {
        let mut out = self.unattributed.clone();
        for l in &self.lines {
            for (k, v) in &l.stalls {
                *out.entry(k.clone()).or_default() += v;
            }
        }
        out
    }

    /// Add another launch's view of the same file (`gpusim annotate` over launches).
    pub fn merge(&mut self, o: &SourceView) {
        let mut by_line: BTreeMap<u32, SourceLine> = std::mem::take(&mut self.lines)
            .into_iter()
            .map(|l| (l.line, l))
            .collect();
        for l in &o.lines {
            let e = by_line.entry(l.line).or_insert_with(|| SourceLine {
                line: l.line,
                function: l.function.clone(),
                text: l.text.clone(),
                ..SourceLine::default()
            });
            if e.lanes.len() < l.lanes.len() {
                e.lanes.resize(l.lanes.len(), 0);
            }
            for (a, b) in e.lanes.iter_mut().zip(&l.lanes) {
                *a += b;
            }
            e.issued += l.issued;
            e.thread_instructions += l.thread_instructions;
            for (k, v) in &l.stalls {
                *e.stalls.entry(k.clone()).or_default() += v;
            }
        }
        self.lines = by_line.into_values().collect();
        for (k, v) in &o.unattributed {
            *self.unattributed.entry(k.clone()).or_default() += v;
        }
    }
}

fn add_stalls(into: &mut BTreeMap<String, u64>, row: &[u64; Stall::ALL.len()]) {
    for s in Stall::ALL {
        let n = row[s as usize];
        if n > 0 {
            *into.entry(s.name().to_string()).or_default() += n;
        }
    }
}
