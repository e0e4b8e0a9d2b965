//! Row-buffer policies, chosen by name (`dram.row_policy`): whether a bank keeps its row open
//! after an access.
//!
//! `open`: the row stays open, so the next access to it is a row hit and one to another row a
//! conflict. `closed`: every column command auto-precharges (RDA/WRA), so every access
//! activates. Adding a policy: one type here, its name in `row_policy` and `ROW_POLICIES`.

/// Whether a bank keeps its row open after an access.
pub trait RowPolicy: Send {
    fn name(&self) -> &'static str;
    fn keep_open(&self) -> bool;
}

/// Open-page.
struct OpenPage;

/// Closed-page (auto-precharge after each access).
struct ClosedPage;

impl RowPolicy for OpenPage {
    fn name(&self) -> &'static str {
        "open"
    }
    fn keep_open(&self) -> bool {
        true
    }
}

impl RowPolicy for ClosedPage {
    fn name(&self) -> &'static str {
        "closed"
    }
    fn keep_open(&self) -> bool {
        false
    }
}

/// The row policy named `name` (`None` for an unknown name).
pub fn row_policy(name: &str) -> Option<Box<dyn RowPolicy>> {
    match name {
        "open" => Some(Box::new(OpenPage)),
        "closed" => Some(Box::new(ClosedPage)),
        _ => None,
    }
}

/// Names `row_policy` accepts.
pub const ROW_POLICIES: &[&str] = &["open", "closed"];
