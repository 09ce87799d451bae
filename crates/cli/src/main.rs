//! The `osprey` binary.
fn main() {}
