//! A benchmark of the tool path that needs the crate's internals: one `exec_command` call
//! running `true`, from the call's arrival at the registry to its output, against a bare
//! spawn of `bash -c true`. Built only with the `bench` feature (see
//! `examples/bench_exec_overhead.rs`); nothing here is part of the API front ends use.

use crate::events::EventEmitter;
use crate::exec_policy::ExecPolicy;
use crate::tools::call::{ToolCall, ToolPayload};
use crate::tools::context::{CommandServices, HandlerDeps, ToolInvocation};
use crate::tools::orchestrator::{NoSandbox, Orchestrator};
use crate::tools::unified_exec::UnifiedExecSessions;
use crate::turn_context::TurnContext;
use osprey_protocol::{AskForApproval, SandboxPolicy, ThreadId, TurnId};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Per-run times of the tool path and of the bare spawn, `runs` of each.
pub async fn exec_overhead(runs: usize) -> Result<(Vec<Duration>, Vec<Duration>), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let env = osprey_config::EnvSnapshot::from_pairs([(
        osprey_config::env_vars::OSPREY_HOME,
        dir.path().to_string_lossy().into_owned(),
    )]);
    // A hosted model, so the standard tool profile (with exec_command) is chosen; with no
    // model at all the embedded model's profile would be.
    let config = osprey_config::ConfigBuilder::new(env)
        .process_cwd(dir.path())
        .cli_overrides(["model=\"gpt-5.5\""])
        .build()
        .map_err(|e| e.to_string())?
        .config;
    let env: std::collections::HashMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let deps = HandlerDeps {
        commands: Arc::new(CommandServices {
            orchestrator: Orchestrator::new(
                Arc::new(ExecPolicy::without_rules()),
                Arc::new(NoSandbox),
            ),
            env,
            shell: osprey_shell::Shell::new("/bin/bash"),
            osprey_exe: None,
            environment: Default::default(),
        }),
        unified_exec: Arc::new(UnifiedExecSessions::new(4)),
        agents: crate::agents::AgentControl::detached(),
    };
    let registry = crate::tools::build_registry(&crate::tools::profile_for(&config), &deps);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let events = EventEmitter::new(ThreadId::new(), tx);
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
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err("bash -c true failed".to_string());
        }
        bare.push(start.elapsed());

        let inv = ToolInvocation {
            call: call.clone(),
            turn: Arc::clone(&turn),
            events: events.clone(),
            cancel: tokio_util::sync::CancellationToken::new(),
        };
        let start = Instant::now();
        let out = registry.dispatch(inv).await.map_err(|e| e.to_string())?;
        tool.push(start.elapsed());
        if !out.text.contains("exited with code 0") {
            return Err(format!("the command failed: {}", out.text));
        }
    }
    Ok((tool, bare))
}
