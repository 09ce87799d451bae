//! Integration tests: real commands run through the helper, trying to escape.
#![cfg(target_os = "linux")]

mod suite;
