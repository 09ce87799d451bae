//! Integration tests of `osprey-app-server-protocol`, one binary; the cases live in `suite/`.

mod suite;
