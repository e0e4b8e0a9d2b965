//! The report's per-warp timeline: one row per warp slot of the chosen SM (plus one per CTA
//! slot above them), one rectangle per state interval within the window, coloured by state,
//! as inline SVG.

use crate::stats::Stall;
use crate::timeline::Record;
use std::collections::BTreeSet;
use std::fmt::Write;

/// A colour per stall state (`Stall::ALL` order), chosen to tell issuing (green) from waiting
/// on memory (reds), on other warps (blues) and being done (grey).
pub const COLOURS: [&str; Stall::ALL.len()] = [
    "#2e9e5b", // issued
    "#9fd8b4", // not_selected
    "#f2b134", // scoreboard_short
    "#d9534f", // scoreboard_long
    "#f7e08a", // pipe_busy
    "#4a7fc1", // barrier
    "#b48ad8", // no_instruction
    "#e48ad1", // reconvergence
    "#8a5a44", // membar
    "#ff7f0e", // memory_backpressure
    "#9ec9e2", // sleeping
    "#c8c8c8", // finished
];

const ROW: u32 = 14;
const LABEL: u32 = 130;
const WIDTH: u32 = 1000;

/// The SVG of `records` (one SM, clipped to `window`), or a note when there is nothing.
pub fn svg(records: &[Record], window: (u64, u64)) -> String {
    let (ws, we) = window;
    let span = (we - ws).max(1) as f64;
    let warp_rows: BTreeSet<u32> = records
        .iter()
        .filter_map(|r| match r {
            Record::State { slot, .. } => Some(*slot),
            _ => None,
        })
        .collect();
    let cta_rows: BTreeSet<u32> = records
        .iter()
        .filter_map(|r| match r {
            Record::Cta { cslot, .. } => Some(*cslot),
            _ => None,
        })
        .collect();
    if warp_rows.is_empty() {
        return "<p class=\"note\">No warp of this SM was resident in the window.</p>".into();
    }
    let rows: Vec<(String, bool, u32)> = cta_rows
        .iter()
        .map(|&c| (format!("CTA slot {c}"), true, c))
        .chain(
            warp_rows
                .iter()
                .map(|&w| (format!("warp slot {w}"), false, w)),
        )
        .collect();
    let height = ROW * rows.len() as u32 + 24;
    let x = |c: u64| LABEL as f64 + (c.clamp(ws, we) - ws) as f64 / span * WIDTH as f64;
    let row_of = |cta: bool, id: u32| rows.iter().position(|r| r.1 == cta && r.2 == id);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"10\">",
        LABEL + WIDTH + 10
    );
    for (i, (label, _, _)) in rows.iter().enumerate() {
        let y = i as u32 * ROW;
        let _ = write!(s, "<text x=\"2\" y=\"{}\">{label}</text>", y + 10);
    }
    for r in records {
        match r {
            Record::State {
                slot,
                state,
                start,
                end,
            } => {
                let Some(i) = row_of(false, *slot) else {
                    continue;
                };
                let (x0, x1) = (x(*start), x(*end));
                let _ = write!(
                    s,
                    "<rect x=\"{x0:.2}\" y=\"{}\" width=\"{:.2}\" height=\"{}\" fill=\"{}\"><title>{}: cycles {start}–{end}</title></rect>",
                    i as u32 * ROW + 1,
                    (x1 - x0).max(0.5),
                    ROW - 2,
                    COLOURS[*state as usize],
                    state.name()
                );
            }
            Record::Cta {
                cslot,
                ctaid,
                start,
                end,
            } => {
                let Some(i) = row_of(true, *cslot) else {
                    continue;
                };
                let (x0, x1) = (x(*start), x(*end));
                let _ = write!(
                    s,
                    "<rect x=\"{x0:.2}\" y=\"{}\" width=\"{:.2}\" height=\"{}\" fill=\"#ddd\" stroke=\"#888\"><title>CTA ({},{},{}): cycles {start}–{end}</title></rect>",
                    i as u32 * ROW + 1,
                    (x1 - x0).max(0.5),
                    ROW - 2,
                    ctaid[0],
                    ctaid[1],
                    ctaid[2]
                );
            }
            Record::Instant { .. } | Record::Request { .. } => {}
        }
    }
    let axis = ROW * rows.len() as u32 + 14;
    for k in 0..=4u64 {
        let c = ws + (we - ws) * k / 4;
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{axis}\" text-anchor=\"middle\">{c}</text>",
            x(c)
        );
    }
    s.push_str("</svg>");
    s
}

/// The colour legend.
pub fn legend() -> String {
    let mut s = String::from("<div class=\"legend\">");
    for k in Stall::ALL {
        let _ = write!(
            s,
            "<span><i style=\"background:{}\"></i>{}</span>",
            COLOURS[k as usize],
            k.name()
        );
    }
    s.push_str("</div>");
    s
}
