mod cli;
mod common;
mod corpus;
mod differential;
#[cfg(unix)]
mod file_system;
mod properties;
