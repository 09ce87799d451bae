mod common;
mod exec_errors;
mod exec_turns;
mod tools_exec;
