//! Integration tests for osprey-shell: one binary, modules under `tests/suite/`.
mod suite;
