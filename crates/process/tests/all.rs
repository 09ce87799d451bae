//! Integration tests for osprey-process: real processes, real pipes, real terminals.

// `cfg(test)` marks the helpers in the suite as test code for clippy's
// allow-unwrap-in-tests, as it already does for the test functions.
#[cfg(test)]
mod suite;
