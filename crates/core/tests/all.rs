//! Core integration tests: threads driven through the public API, as a front end would,
//! against the scripted mock model server.
#[cfg(test)]
mod suite;
