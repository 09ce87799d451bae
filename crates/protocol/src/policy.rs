//! The policies a user chooses and the decisions a user gives.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// When the agent must ask the user before running something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum AskForApproval {
    /// Ask for everything that is not known to be safe (read-only).
    #[serde(alias = "unless-trusted")]
    Untrusted,
    /// Run inside the sandbox; ask to rerun outside it when it fails.
    OnFailure,
    /// Run inside the sandbox; the model may ask to escalate, and that asks the user.
    #[default]
    OnRequest,
    /// Never ask; whatever would need approval is refused and the model is told why.
    Never,
}

impl AskForApproval {
    pub const ALL: [AskForApproval; 4] = [
        AskForApproval::Untrusted,
        AskForApproval::OnFailure,
        AskForApproval::OnRequest,
        AskForApproval::Never,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Untrusted => "untrusted",
            Self::OnFailure => "on-failure",
            Self::OnRequest => "on-request",
            Self::Never => "never",
        }
    }
}

impl fmt::Display for AskForApproval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The coarse sandbox choice of `sandbox_mode` / `--sandbox`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    #[default]
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

impl SandboxMode {
    pub const ALL: [SandboxMode; 3] = [
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
        SandboxMode::DangerFullAccess,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::DangerFullAccess => "danger-full-access",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The full sandbox policy a command runs under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum SandboxPolicy {
    /// Read anything, write nothing, no network.
    ReadOnly,
    /// Read anything; write only the working directory and the listed roots.
    WorkspaceWrite {
        #[serde(default)]
        writable_roots: Vec<PathBuf>,
        #[serde(default)]
        network_access: bool,
        #[serde(default)]
        exclude_tmpdir_env_var: bool,
        #[serde(default)]
        exclude_slash_tmp: bool,
    },
    /// No sandbox at all.
    DangerFullAccess,
}

impl SandboxPolicy {
    pub fn mode(&self) -> SandboxMode {
        match self {
            Self::ReadOnly => SandboxMode::ReadOnly,
            Self::WorkspaceWrite { .. } => SandboxMode::WorkspaceWrite,
            Self::DangerFullAccess => SandboxMode::DangerFullAccess,
        }
    }

    pub fn has_full_network_access(&self) -> bool {
        match self {
            Self::ReadOnly => false,
            Self::WorkspaceWrite { network_access, .. } => *network_access,
            Self::DangerFullAccess => true,
        }
    }

    pub fn has_full_disk_write_access(&self) -> bool {
        matches!(self, Self::DangerFullAccess)
    }
}

/// A user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewDecision {
    /// Run it this once.
    Approved,
    /// Run it, and don't ask again for this same command (or these files) in this session.
    ApprovedForSession,
    /// Run it, and persist a rule allowing every command that starts with `prefix`.
    ApprovedExecpolicyAmendment { prefix: Vec<String> },
    /// Don't run it; the model is told and the turn goes on.
    Denied,
    /// Don't run it, and stop the turn.
    Abort,
}

/// How hard a reasoning model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    None,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
}

impl ReasoningEffort {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn policies_use_codex_spellings() {
        assert_eq!(
            serde_json::to_value(AskForApproval::OnRequest).unwrap(),
            json!("on-request")
        );
        assert_eq!(
            serde_json::to_value(SandboxPolicy::ReadOnly).unwrap(),
            json!({"type":"read-only"})
        );
        let ww: SandboxPolicy = serde_json::from_value(json!({"type":"workspace-write"})).unwrap();
        assert_eq!(ww.mode(), SandboxMode::WorkspaceWrite);
        assert!(!ww.has_full_network_access());
    }
}
