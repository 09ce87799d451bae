mod apply_patch;
mod common;
mod exec_errors;
mod exec_turns;
mod policy;
mod sdk;
mod tools_exec;
