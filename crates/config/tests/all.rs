//! Integration tests of osprey-config: one binary, modules under `suite/`.

mod suite;
