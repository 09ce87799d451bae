//! One approval request type for everything that needs a person's yes: commands, patches
//! and MCP tool calls.
//!
//! A handler describes what it wants to do as an [`ApprovalSubject`] and asks the
//! orchestrator ([`super::orchestrator::Orchestrator::approve`]). The steps are the same for
//! every subject: under `never`, a refusal the model can read; a subject covered by the
//! session's [`SessionApprovals`] goes ahead; otherwise the front end gets one
//! [`ApprovalRequest`] listing exactly the decisions that apply, and its answer is applied
//! here — remembered for the session, persisted as a prefix rule, declined in words the model
//! understands, or the turn aborted.

use osprey_protocol::{ApprovalRequestKind, FileChangeSummary, ReviewDecision, SandboxMode};
use serde_json::Value;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;

/// Something that needs approval.
#[derive(Debug, Clone)]
pub enum ApprovalSubject {
    /// Run a command, inside the sandbox or (`escalation`) outside it.
    Command {
        argv: Vec<String>,
        /// Where it runs.
        cwd: PathBuf,
        escalation: bool,
        /// The model's suggested prefix for "don't ask again".
        prefix_rule: Option<Vec<String>>,
        justification: Option<String>,
        /// Set when asking to rerun without the sandbox after it blocked the command.
        sandbox_denial: Option<String>,
    },
    /// Apply a patch; `paths` are every absolute path it writes, move targets included.
    Patch {
        changes: Vec<FileChangeSummary>,
        paths: Vec<PathBuf>,
    },
    /// Call a tool of an MCP server.
    McpTool {
        server: String,
        tool: String,
        arguments: Value,
    },
}

impl ApprovalSubject {
    /// The request kind front ends see.
    pub(crate) fn request_kind(&self) -> ApprovalRequestKind {
        match self {
            Self::Command {
                argv, escalation, ..
            } => ApprovalRequestKind::Exec {
                command: argv.clone(),
                escalation: *escalation,
            },
            Self::Patch { changes, paths } => ApprovalRequestKind::Patch {
                changes: changes.clone(),
                paths: paths.clone(),
            },
            Self::McpTool {
                server,
                tool,
                arguments,
            } => ApprovalRequestKind::McpTool {
                server: server.clone(),
                tool: tool.clone(),
                arguments: arguments.clone(),
            },
        }
    }

    /// The directory the action happens in, when it is not the turn's.
    pub(crate) fn cwd(&self) -> Option<&std::path::Path> {
        match self {
            Self::Command { cwd, .. } => Some(cwd),
            Self::Patch { .. } | Self::McpTool { .. } => None,
        }
    }

    /// The decisions that apply, in the order a front end should offer them. `amendment`
    /// is the prefix rule the exec policy would accept (commands only).
    pub(crate) fn available_decisions(&self, amendment: Option<&[String]>) -> Vec<ReviewDecision> {
        let mut decisions = vec![ReviewDecision::Approved, ReviewDecision::ApprovedForSession];
        if let (Self::Command { .. }, Some(prefix)) = (self, amendment) {
            decisions.push(ReviewDecision::ApprovedExecpolicyAmendment {
                prefix: prefix.to_vec(),
            });
        }
        decisions.push(ReviewDecision::Denied);
        decisions.push(ReviewDecision::Abort);
        decisions
    }

    /// What the model is told when the approval policy is `never`.
    pub(crate) fn refusal(&self, reason: &str) -> String {
        match self {
            Self::Command { .. } => format!(
                "The command was not run: it needs approval ({reason}), and the approval policy is `never`, so nobody can approve it. Work within the sandbox and the rules, or tell the user what you could not do."
            ),
            Self::Patch { .. } => format!(
                "The patch was not applied: {reason}, and the approval policy is `never`, so nobody can approve it. Change only files inside the writable roots."
            ),
            Self::McpTool { server, tool, .. } => format!(
                "The tool {server}/{tool} was not called: {reason}, and the approval policy is `never`, so nobody can approve it."
            ),
        }
    }

    /// What the model is told when the person declined.
    pub(crate) fn declined(&self) -> String {
        match self {
            Self::Command { .. } => "The user declined to run this command. Do not run it again; continue without it or ask the user what to do instead.".to_string(),
            Self::Patch { .. } => "The user declined this patch; nothing was changed. Do not apply it again; ask the user what to do instead.".to_string(),
            Self::McpTool { server, tool, .. } => format!("The user declined the call to {server}/{tool}."),
        }
    }

    /// What the model is told when a request was declined because no person can answer it
    /// (an unattended run such as `osprey exec`): why it needed approval, what the sandbox
    /// allows, and that asking again cannot help.
    pub(crate) fn declined_unattended(&self, reason: &str, sandbox: SandboxMode) -> String {
        let allows = match sandbox {
            SandboxMode::ReadOnly => " (the sandbox is read-only, so nothing can be written)",
            SandboxMode::WorkspaceWrite => {
                " (the sandbox is workspace-write, so only the workspace and its writable roots can be written)"
            }
            SandboxMode::DangerFullAccess => "",
        };
        let what = match self {
            Self::Command { .. } => "The command was not run".to_string(),
            Self::Patch { .. } => "The patch was not applied; nothing was changed".to_string(),
            Self::McpTool { server, tool, .. } => {
                format!("The tool {server}/{tool} was not called")
            }
        };
        format!(
            "{what}: it needs approval ({reason}), and this run cannot ask a person, so the request was declined without anyone seeing it{allows}. Do not try it again in another form: finish what you can without it, then tell the user what you could not do and why."
        )
    }

    /// Why the turn ends when the person chose "abort".
    pub(crate) fn aborted(&self) -> String {
        match self {
            Self::Command { .. } => "the user stopped the turn at an approval request",
            Self::Patch { .. } => "the user stopped the turn at a patch approval",
            Self::McpTool { .. } => "the user stopped the turn at an MCP tool approval",
        }
        .to_string()
    }

    fn cache_keys(&self) -> Vec<CacheKey> {
        match self {
            Self::Command {
                argv, escalation, ..
            } => vec![CacheKey::Command {
                argv: argv.clone(),
                escalation: *escalation,
            }],
            Self::Patch { paths, .. } => paths.iter().cloned().map(CacheKey::PatchPath).collect(),
            Self::McpTool { server, tool, .. } => vec![CacheKey::McpTool {
                server: server.clone(),
                tool: tool.clone(),
            }],
        }
    }
}

/// What "approved for this session" remembers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum CacheKey {
    /// This exact command line (escalated and confined runs are separate).
    Command { argv: Vec<String>, escalation: bool },
    /// Writes to this absolute path by patches.
    PatchPath(PathBuf),
    /// Calls to this MCP tool, whatever the arguments.
    McpTool { server: String, tool: String },
}

/// The session's approvals "for this session": one place for commands, patch paths and MCP
/// tools.
#[derive(Default)]
pub struct SessionApprovals {
    keys: Mutex<HashSet<CacheKey>>,
}

impl SessionApprovals {
    /// True when everything `subject` needs was approved for the session (a patch: every
    /// path it writes; an empty patch is never "covered").
    pub fn covers(&self, subject: &ApprovalSubject) -> bool {
        let keys = subject.cache_keys();
        let Ok(set) = self.keys.lock() else {
            return false;
        };
        !keys.is_empty() && keys.iter().all(|key| set.contains(key))
    }

    pub fn remember(&self, subject: &ApprovalSubject) {
        if let Ok(mut set) = self.keys.lock() {
            set.extend(subject.cache_keys());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(paths: &[&str]) -> ApprovalSubject {
        ApprovalSubject::Patch {
            changes: Vec::new(),
            paths: paths.iter().map(PathBuf::from).collect(),
        }
    }

    #[test]
    fn a_patch_is_covered_only_when_every_path_was_approved() {
        let approvals = SessionApprovals::default();
        approvals.remember(&patch(&["/r/a", "/r/moved-to"]));
        assert!(approvals.covers(&patch(&["/r/a"])));
        assert!(approvals.covers(&patch(&["/r/moved-to"])));
        assert!(!approvals.covers(&patch(&["/r/a", "/r/new"])));
        assert!(!approvals.covers(&patch(&[])));
    }

    #[test]
    fn commands_and_mcp_tools_are_remembered_separately() {
        let approvals = SessionApprovals::default();
        let command = |escalation| ApprovalSubject::Command {
            argv: vec!["make".into()],
            cwd: PathBuf::from("/r"),
            escalation,
            prefix_rule: None,
            justification: None,
            sandbox_denial: None,
        };
        let mcp = |tool: &str| ApprovalSubject::McpTool {
            server: "s".into(),
            tool: tool.into(),
            arguments: Value::Null,
        };
        approvals.remember(&command(false));
        approvals.remember(&mcp("echo"));
        assert!(approvals.covers(&command(false)));
        assert!(!approvals.covers(&command(true)), "escalation asks again");
        assert!(approvals.covers(&mcp("echo")));
        assert!(!approvals.covers(&mcp("delete")));
    }

    #[test]
    fn amendments_are_offered_for_commands_only() {
        let prefix = vec!["cargo".to_string(), "test".to_string()];
        let command = ApprovalSubject::Command {
            argv: vec!["cargo".into(), "test".into()],
            cwd: PathBuf::from("/r"),
            escalation: false,
            prefix_rule: None,
            justification: None,
            sandbox_denial: None,
        };
        assert!(command.available_decisions(Some(&prefix)).contains(
            &ReviewDecision::ApprovedExecpolicyAmendment {
                prefix: prefix.clone()
            }
        ));
        let decisions = patch(&["/a"]).available_decisions(Some(&prefix));
        assert_eq!(
            decisions,
            vec![
                ReviewDecision::Approved,
                ReviewDecision::ApprovedForSession,
                ReviewDecision::Denied,
                ReviewDecision::Abort
            ]
        );
    }
}
