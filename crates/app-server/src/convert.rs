//! Plain conversions between the wire types (`osprey-app-server-protocol`) and core's
//! (`osprey-protocol`): policies, user input, approval decisions, token usage.

use std::path::{Path, PathBuf};

use osprey_app_server_protocol as wire;
use osprey_protocol as core;

/// A wire approval policy as core's; `granular` is not supported.
pub fn approval_policy(policy: &wire::AskForApproval) -> Result<core::AskForApproval, String> {
    Ok(match policy {
        wire::AskForApproval::UnlessTrusted => core::AskForApproval::Untrusted,
        wire::AskForApproval::OnFailure => core::AskForApproval::OnFailure,
        wire::AskForApproval::OnRequest => core::AskForApproval::OnRequest,
        wire::AskForApproval::Never => core::AskForApproval::Never,
        wire::AskForApproval::Granular(_) => {
            return Err(
                "approvalPolicy `granular` is not supported by Osprey; use `untrusted`, `on-request`, `on-failure` or `never`"
                    .to_owned(),
            );
        }
    })
}

pub fn wire_approval_policy(policy: core::AskForApproval) -> wire::AskForApproval {
    match policy {
        core::AskForApproval::Untrusted => wire::AskForApproval::UnlessTrusted,
        core::AskForApproval::OnFailure => wire::AskForApproval::OnFailure,
        core::AskForApproval::OnRequest => wire::AskForApproval::OnRequest,
        _ => wire::AskForApproval::Never,
    }
}

pub fn sandbox_mode(mode: wire::SandboxMode) -> core::SandboxMode {
    match mode {
        wire::SandboxMode::ReadOnly => core::SandboxMode::ReadOnly,
        wire::SandboxMode::WorkspaceWrite => core::SandboxMode::WorkspaceWrite,
        wire::SandboxMode::DangerFullAccess => core::SandboxMode::DangerFullAccess,
    }
}

pub fn wire_sandbox_mode(mode: core::SandboxMode) -> wire::SandboxMode {
    match mode {
        core::SandboxMode::ReadOnly => wire::SandboxMode::ReadOnly,
        core::SandboxMode::WorkspaceWrite => wire::SandboxMode::WorkspaceWrite,
        core::SandboxMode::DangerFullAccess => wire::SandboxMode::DangerFullAccess,
    }
}

/// A wire sandbox policy as core's. `externalSandbox` (the client confines the process
/// itself) is refused: Osprey does not run unconfined on a client's word.
pub fn sandbox_policy(
    policy: &wire::SandboxPolicy,
    cwd: &Path,
) -> Result<core::SandboxPolicy, String> {
    Ok(match policy {
        wire::SandboxPolicy::DangerFullAccess => core::SandboxPolicy::DangerFullAccess,
        wire::SandboxPolicy::ReadOnly { .. } => core::SandboxPolicy::ReadOnly,
        wire::SandboxPolicy::WorkspaceWrite {
            writable_roots,
            network_access,
            exclude_tmpdir_env_var,
            exclude_slash_tmp,
        } => core::SandboxPolicy::WorkspaceWrite {
            writable_roots: writable_roots
                .iter()
                .map(|root| osprey_config::absolute(cwd, Path::new(root)))
                .collect(),
            network_access: *network_access,
            exclude_tmpdir_env_var: *exclude_tmpdir_env_var,
            exclude_slash_tmp: *exclude_slash_tmp,
        },
        wire::SandboxPolicy::ExternalSandbox { .. } => {
            return Err(
                "sandboxPolicy `externalSandbox` is not supported: Osprey confines commands itself; use `workspaceWrite`, `readOnly` or `dangerFullAccess`"
                    .to_owned(),
            );
        }
    })
}

pub fn wire_sandbox_policy(policy: &core::SandboxPolicy) -> wire::SandboxPolicy {
    match policy {
        core::SandboxPolicy::ReadOnly => wire::SandboxPolicy::ReadOnly {
            network_access: false,
        },
        core::SandboxPolicy::WorkspaceWrite {
            writable_roots,
            network_access,
            exclude_tmpdir_env_var,
            exclude_slash_tmp,
        } => wire::SandboxPolicy::WorkspaceWrite {
            writable_roots: writable_roots
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            network_access: *network_access,
            exclude_tmpdir_env_var: *exclude_tmpdir_env_var,
            exclude_slash_tmp: *exclude_slash_tmp,
        },
        core::SandboxPolicy::DangerFullAccess => wire::SandboxPolicy::DangerFullAccess,
    }
}

pub fn reasoning_effort(effort: &str) -> Result<core::ReasoningEffort, String> {
    serde_json::from_value(serde_json::Value::String(effort.to_owned())).map_err(|_| {
        format!(
            "unknown reasoning effort `{effort}`; use none, minimal, low, medium, high or xhigh"
        )
    })
}

/// The turn's input for core. Skills and mentions become text naming the file, the way a
/// person would point at it.
pub fn user_input(input: &[wire::UserInput], cwd: &Path) -> Result<Vec<core::UserInput>, String> {
    input
        .iter()
        .map(|item| {
            Ok(match item {
                wire::UserInput::Text { text, .. } => core::UserInput::Text { text: text.clone() },
                wire::UserInput::Image { url: Some(url), .. } => core::UserInput::Image {
                    image_url: url.clone(),
                },
                wire::UserInput::Image { .. } => {
                    return Err(
                        "an `image` input needs a `url` (uploaded `fileId`s are not supported; send a data: URL or a `localImage`)"
                            .to_owned(),
                    );
                }
                wire::UserInput::LocalImage { path, .. } => core::UserInput::LocalImage {
                    path: osprey_config::absolute(cwd, Path::new(path)),
                },
                wire::UserInput::Skill { name, path } => core::UserInput::Text {
                    text: format!("Use the skill `{name}` described in {path}."),
                },
                wire::UserInput::Mention { name, path } => core::UserInput::Text {
                    text: format!("@{name} ({path})"),
                },
            })
        })
        .collect()
}

/// Core's user input as wire input (for messages read back from a session file, where only
/// the text survives).
pub fn text_input(text: &str) -> wire::UserInput {
    wire::UserInput::Text {
        text: text.to_owned(),
        text_elements: Some(Vec::new()),
    }
}

pub fn command_decision(decision: wire::CommandExecutionApprovalDecision) -> core::ReviewDecision {
    match decision {
        wire::CommandExecutionApprovalDecision::Accept => core::ReviewDecision::Approved,
        wire::CommandExecutionApprovalDecision::AcceptForSession => {
            core::ReviewDecision::ApprovedForSession
        }
        wire::CommandExecutionApprovalDecision::AcceptWithExecpolicyAmendment {
            execpolicy_amendment,
        } => core::ReviewDecision::ApprovedExecpolicyAmendment {
            prefix: execpolicy_amendment,
        },
        wire::CommandExecutionApprovalDecision::Decline => core::ReviewDecision::Denied,
        wire::CommandExecutionApprovalDecision::Cancel => core::ReviewDecision::Abort,
    }
}

pub fn file_change_decision(decision: wire::FileChangeApprovalDecision) -> core::ReviewDecision {
    match decision {
        wire::FileChangeApprovalDecision::Accept => core::ReviewDecision::Approved,
        wire::FileChangeApprovalDecision::AcceptForSession => {
            core::ReviewDecision::ApprovedForSession
        }
        wire::FileChangeApprovalDecision::Decline => core::ReviewDecision::Denied,
        wire::FileChangeApprovalDecision::Cancel => core::ReviewDecision::Abort,
    }
}

/// The decisions core offers for a command, as the wire's list.
pub fn command_decisions(
    offered: &[core::ReviewDecision],
) -> Vec<wire::CommandExecutionApprovalDecision> {
    offered
        .iter()
        .map(|d| match d {
            core::ReviewDecision::Approved => wire::CommandExecutionApprovalDecision::Accept,
            core::ReviewDecision::ApprovedForSession => {
                wire::CommandExecutionApprovalDecision::AcceptForSession
            }
            core::ReviewDecision::ApprovedExecpolicyAmendment { prefix } => {
                wire::CommandExecutionApprovalDecision::AcceptWithExecpolicyAmendment {
                    execpolicy_amendment: prefix.clone(),
                }
            }
            core::ReviewDecision::Denied => wire::CommandExecutionApprovalDecision::Decline,
            core::ReviewDecision::Abort => wire::CommandExecutionApprovalDecision::Cancel,
        })
        .collect()
}

pub fn token_usage(usage: &core::TokenUsage) -> wire::TokenUsageBreakdown {
    let n = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    wire::TokenUsageBreakdown {
        total_tokens: n(usage.total_tokens),
        input_tokens: n(usage.input_tokens),
        cached_input_tokens: n(usage.cached_input_tokens),
        cache_write_input_tokens: 0,
        output_tokens: n(usage.output_tokens),
        reasoning_output_tokens: n(usage.reasoning_output_tokens),
    }
}

/// A path as shown to clients.
pub fn path_text(path: &Path) -> String {
    path.display().to_string()
}

pub fn resolve_cwd(base: &Path, cwd: &str) -> Result<PathBuf, String> {
    let dir = osprey_config::absolute(base, Path::new(cwd));
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "cwd {} is not a directory; pass an existing directory",
            dir.display()
        ))
    }
}
