//! The step-through's data: every issued instruction of every warp, grouped by warp in issue
//! order, as the JSON the page's script reads.

use crate::stats::WarpEvent;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// `{"warp_size": N, "source": [lines], "warps": [{"label", "steps": [...]}]}`, the first
/// launch's warps in (SM, CTA, warp) order.
pub fn data(events: &[WarpEvent], source: &str, warp_size: u32) -> Value {
    let mut warps: BTreeMap<(u32, [u32; 3], u32), Vec<Value>> = BTreeMap::new();
    for e in events.iter().filter(|e| e.launch == 0) {
        warps.entry((e.sm, e.cta, e.warp)).or_default().push(json!({
            "cycle": e.cycle,
            "pc": e.pc,
            "line": e.line,
            "text": e.text,
            // A string: JSON numbers lose bits past 2^53, and the page reads it as a BigInt.
            "exec": format!("{:#x}", e.exec),
            "after": e.after.to_string(),
        }));
    }
    let warps: Vec<Value> = warps
        .into_iter()
        .map(|((sm, cta, w), steps)| {
            json!({
                "label": format!("SM {sm} · CTA ({},{},{}) · warp {w}", cta[0], cta[1], cta[2]),
                "steps": steps,
            })
        })
        .collect();
    json!({
        "warp_size": warp_size,
        "source": source.lines().collect::<Vec<_>>(),
        "warps": warps,
    })
}
