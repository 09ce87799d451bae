//! Integration tests of osprey-apply-patch, one binary.

mod suite;
