//! Kernel faults: what stops a kernel (exit code 3), with a precise report.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    OutOfBounds,
    Misaligned,
    /// A warp can never proceed: the token stack's liveness is violated (Habermaier §6.5).
    Liveness,
    /// No warp can issue and nothing is in flight (e.g. a barrier that never completes).
    Deadlock,
    BarrierDivergence,
    Watchdog,
    Trap,
    /// The program is not control-flow consistent (e.g. `brk` with no break token).
    Control,
    /// A launch the machine cannot run (block too large for an SM, ...).
    Launch,
    /// A configured memory program did what the formal model leaves undefined (⊥).
    MemoryProgram,
    /// An operand's run-time value lies outside the range the PTX ISA allows (a barrier id
    /// above 15, a barrier thread count that is not a multiple of the warp size or exceeds
    /// the CTA).
    InvalidOperand,
}

impl FaultKind {
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::OutOfBounds => "out-of-bounds",
            FaultKind::Misaligned => "misaligned",
            FaultKind::Liveness => "liveness",
            FaultKind::Deadlock => "deadlock",
            FaultKind::BarrierDivergence => "barrier-divergence",
            FaultKind::Watchdog => "watchdog",
            FaultKind::MemoryProgram => "memory-program",
            FaultKind::Trap => "trap",
            FaultKind::Control => "control",
            FaultKind::Launch => "launch",
            FaultKind::InvalidOperand => "invalid-operand",
        }
    }
}

/// A fault with its report: the headline and, for deadlocks, the state of every warp.
#[derive(Clone, Debug)]
pub struct Fault {
    pub kind: FaultKind,
    pub message: String,
    pub details: Vec<String>,
}

impl Fault {
    pub fn new(kind: FaultKind, message: impl Into<String>) -> Fault {
        Fault {
            kind,
            message: message.into(),
            details: Vec::new(),
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel fault ({}): {}", self.kind.name(), self.message)?;
        for d in &self.details {
            write!(f, "\n  {d}")?;
        }
        Ok(())
    }
}

/// Unfinished warps a report lists one by one; the others are counted.
pub const MAX_LISTED_WARPS: usize = 32;
/// Characters of a warp's reconvergence state in a report; a longer one (a deep stack) keeps
/// its first and last entries and says how many it leaves out.
pub const MAX_STATE_CHARS: usize = 480;

/// A reconvergence state (`Reconvergence::describe`) of at most `MAX_STATE_CHARS`: a longer
/// one keeps its head and tail, cut where an entry starts (` (`), and counts the entries
/// between them.
pub fn summarise_state(state: &str) -> String {
    if state.len() <= MAX_STATE_CHARS {
        return state.to_string();
    }
    let head_end = cut_before_entry(state, MAX_STATE_CHARS * 2 / 3, true);
    let tail_start = cut_before_entry(state, state.len() - MAX_STATE_CHARS / 3, false);
    let omitted = &state[head_end..tail_start];
    let entries = omitted.matches(" (").count();
    format!(
        "{} … {entries} entries ({} characters) not shown …{}",
        &state[..head_end],
        omitted.len(),
        &state[tail_start..]
    )
}

/// A cut of `s` near `at`: the start of the entry (` (`) at or before it when `back`, at or
/// after it otherwise; `at` itself (on a character boundary) when there is none.
fn cut_before_entry(s: &str, at: usize, back: bool) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    let found = if back {
        s[..at].rfind(" (")
    } else {
        s[at..].find(" (").map(|i| at + i)
    };
    found.filter(|&i| i > 0).unwrap_or(at)
}

/// The detail lines of a report on the unfinished warps: at most `MAX_LISTED_WARPS` of them,
/// then how many more there are and how many warps had finished (those wait for nothing).
pub fn warp_details(lines: Vec<String>, finished: usize) -> Vec<String> {
    let total = lines.len();
    let mut out: Vec<String> = lines.into_iter().take(MAX_LISTED_WARPS).collect();
    if total > MAX_LISTED_WARPS {
        out.push(format!(
            "… and {} more unfinished warps not listed",
            total - MAX_LISTED_WARPS
        ));
    }
    if finished > 0 {
        out.push(format!(
            "({finished} finished warp(s) of resident CTAs not listed)"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 11 item 8: a watchdog report was one 25 MB line for a 492k-entry stack.
    #[test]
    fn a_deep_stack_keeps_its_ends_and_counts_the_rest() {
        let mut state =
            "pc 7 active 0x1 disabled: break 0x0 return 0x0 exit 0x0; stack (top first):"
                .to_string();
        for i in 0..492_000 {
            state.push_str(&format!(" (Call, 0x1, pc {i})"));
        }
        let s = summarise_state(&state);
        assert!(s.len() <= MAX_STATE_CHARS + 80, "{} characters", s.len());
        assert!(s.starts_with("pc 7 active 0x1"), "{s}");
        assert!(s.ends_with(" (Call, 0x1, pc 491999)"), "{s}");
        let shown = s.matches(" (Call").count();
        let omitted: usize = s
            .split(" … ")
            .nth(1)
            .and_then(|m| m.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("a count of omitted entries");
        assert_eq!(shown + omitted, 492_000, "{s}");
        // A short state is kept as it is.
        assert_eq!(
            summarise_state("pc 3 active 0xf; stack (top first): empty"),
            "pc 3 active 0xf; stack (top first): empty"
        );
    }

    #[test]
    fn a_report_lists_a_bounded_number_of_warps() {
        let lines: Vec<String> = (0..100).map(|i| format!("warp {i}")).collect();
        let d = warp_details(lines, 7);
        assert_eq!(d.len(), MAX_LISTED_WARPS + 2);
        assert_eq!(
            d[MAX_LISTED_WARPS],
            "… and 68 more unfinished warps not listed"
        );
        assert_eq!(
            d[MAX_LISTED_WARPS + 1],
            "(7 finished warp(s) of resident CTAs not listed)"
        );
        assert_eq!(warp_details(vec!["w".into()], 0), vec!["w".to_string()]);
    }
}
