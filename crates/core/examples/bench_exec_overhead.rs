//! Overhead of one `exec_command` call running `true`, from the call's arrival at the
//! registry to its output being ready, against a bare spawn of `bash -c true`.
//! Run: `cargo run --release -p osprey-core --example bench_exec_overhead [runs]`.
#![expect(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark program"
)]

use osprey_core::approvals::ApprovalBroker;
use osprey_core::events::EventEmitter;
use osprey_core::exec_policy::ExecPolicy;
use osprey_core::tools::call::{ToolCall, ToolPayload};
use osprey_core::tools::context::{SessionServices, ToolInvocation};
use osprey_core::tools::orchestrator::{NoSandbox, Orchestrator};
use osprey_core::tools::unified_exec::UnifiedExecSessions;
use osprey_core::turn_context::TurnContext;
use osprey_protocol::{AskForApproval, SandboxPolicy, ThreadId, TurnId};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().unwrap();
    let config = osprey_config::Config::for_tests(dir.path(), dir.path()).unwrap();
    let registry = osprey_core::tools::build_registry(&osprey_core::tools::profile_for(&config));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let env: std::collections::HashMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let services = Arc::new(SessionServices {
        events: EventEmitter::new(ThreadId::new(), tx),
        approvals: ApprovalBroker::default(),
        orchestrator: Orchestrator::new(Arc::new(ExecPolicy::without_rules()), Arc::new(NoSandbox)),
        unified_exec: UnifiedExecSessions::new(4),
        env,
        shell: osprey_shell::Shell::new("/bin/bash"),
        mcp: Arc::new(osprey_mcp::McpConnectionManager::empty()),
        osprey_exe: None,
    });
    let turn = Arc::new(TurnContext {
        turn_id: TurnId("turn-1".into()),
        cwd: dir.path().to_path_buf(),
        model: "m".into(),
        effort: None,
        approval_policy: AskForApproval::Never,
        sandbox_policy: SandboxPolicy::DangerFullAccess,
        output_schema: None,
        config: Arc::new(config),
    });
    let call = ToolCall {
        call_id: "c".into(),
        tool_name: "exec_command".into(),
        payload: ToolPayload::Function {
            arguments: r#"{"cmd":"true","login":false}"#.into(),
        },
    };
    let mut tool = Vec::new();
    let mut bare = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        #[expect(clippy::disallowed_methods, reason = "the baseline is a bare spawn")]
        let status = std::process::Command::new("/bin/bash")
            .args(["-c", "true"])
            .status()
            .unwrap();
        assert!(status.success());
        bare.push(start.elapsed());

        let inv = ToolInvocation {
            call: call.clone(),
            turn: Arc::clone(&turn),
            services: Arc::clone(&services),
            cancel: tokio_util::sync::CancellationToken::new(),
        };
        let start = Instant::now();
        let out = registry.dispatch(inv).await.unwrap();
        tool.push(start.elapsed());
        assert!(out.text.contains("exited with code 0"), "{}", out.text);
    }
    let (t, b) = (median(tool), median(bare));
    println!(
        "exec_command `true` (registry dispatch → output): median {:.2} ms",
        t.as_secs_f64() * 1e3
    );
    println!(
        "bare spawn `bash -c true`:                        median {:.2} ms",
        b.as_secs_f64() * 1e3
    );
    println!(
        "overhead: {:+.2} ms (target ≤ +2 ms)",
        (t.as_secs_f64() - b.as_secs_f64()) * 1e3
    );
}
