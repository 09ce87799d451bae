//! The tools' suite through an exec server listening on a WebSocket on 127.0.0.1.

mod common {
    use crate::remote::harness::{Transport, osprey_via};
    pub use crate::remote::harness::{jsonl, stderr};
    use osprey_test_support::TempHome;
    use std::path::Path;
    use std::process::Output;

    pub async fn osprey_async(home: &TempHome, cwd: &Path, args: &[&str], stdin: &str) -> Output {
        osprey_via(Transport::WebSocket, home, cwd, args, stdin).await
    }
}

#[path = "../../suite/tools_exec.rs"]
mod tools_exec;

#[path = "../../suite/apply_patch.rs"]
mod apply_patch;
