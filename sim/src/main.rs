//! The gpusim command line.
fn main() {}
