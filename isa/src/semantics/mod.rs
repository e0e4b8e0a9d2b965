//! Pure per-lane instruction semantics.
