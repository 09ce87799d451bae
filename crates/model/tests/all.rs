//! Integration tests for osprey-model: the real client against a scripted server on
//! 127.0.0.1, over real HTTP and SSE.

mod suite;
