//! Integration tests of `osprey-exec-events`, one binary; the cases live in `suite/`.

mod suite;
