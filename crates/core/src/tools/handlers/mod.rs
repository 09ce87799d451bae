//! One file per tool family. Adding a tool: a spec in `osprey-tools`, a handler here, one
//! line in `build_registry`, one test.

pub mod apply_patch;
pub mod collab;
pub mod edit_file;
pub mod files;
pub mod local;
pub mod mcp;
pub mod one_shot;
pub mod plan;
pub mod shell;
pub mod unified_exec;
pub mod write_file;
