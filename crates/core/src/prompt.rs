//! What the model is told before the conversation: base instructions, permissions and the
//! environment.

use crate::turn_context::TurnContext;
use osprey_protocol::{AskForApproval, ResponseItem, SandboxPolicy};
use std::fmt::Write as _;

/// Osprey's own base instructions, used when the config sets none.
pub const DEFAULT_BASE_INSTRUCTIONS: &str = include_str!("../prompts/base_instructions.md");

/// The developer message that tells the model what it may do without asking.
pub fn permissions_message(approval: AskForApproval, sandbox: &SandboxPolicy) -> ResponseItem {
    let mut text = String::from("<permissions>\n");
    let sandbox_line = match sandbox {
        SandboxPolicy::ReadOnly => {
            "Sandbox: read-only. Commands may read any file but cannot write files or use the network.".to_string()
        }
        SandboxPolicy::WorkspaceWrite {
            writable_roots,
            network_access,
            ..
        } => {
            let mut line = String::from(
                "Sandbox: workspace-write. Commands may read any file and write inside the working directory",
            );
            if !writable_roots.is_empty() {
                let roots: Vec<String> = writable_roots
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                let _ = write!(line, " and {}", roots.join(", "));
            }
            line.push_str(if *network_access {
                "; network access is allowed."
            } else {
                "; network access is blocked."
            });
            line
        }
        SandboxPolicy::DangerFullAccess => {
            "Sandbox: none. Commands run with the user's full permissions, network included."
                .to_string()
        }
    };
    text.push_str(&sandbox_line);
    text.push('\n');
    let approval_line = match approval {
        AskForApproval::Untrusted => {
            "Approvals: untrusted. Anything but known read-only commands asks the user first."
        }
        AskForApproval::OnFailure => {
            "Approvals: on-failure. Commands run in the sandbox; if one fails, the user may allow a rerun without it."
        }
        AskForApproval::OnRequest => {
            "Approvals: on-request. Commands run in the sandbox. If one needs more (writing elsewhere, network), call it again with sandbox_permissions \"require_escalated\" and a one-sentence justification; the user decides."
        }
        AskForApproval::Never => {
            "Approvals: never. Nobody will be asked. Anything the sandbox or policy blocks is refused; work within the limits and say what you could not do."
        }
        _ => "Approvals: ask the user before anything risky.",
    };
    text.push_str(approval_line);
    text.push_str("\n</permissions>");
    ResponseItem::developer_text(text)
}

/// The user-context message with the environment (and project instructions, when present).
/// With a remote environment, the cwd and shell are the exec server's (its paths as the
/// model writes them there: `C:\\…` on Windows), and an `<environments>` entry (Codex's
/// form) names where the tools act.
pub fn environment_context(
    turn: &TurnContext,
    shell_name: &str,
    environment: &crate::environment::ToolEnvironment,
) -> String {
    let now = chrono::Local::now();
    let cwd = environment.path_for_model(&turn.cwd);
    let mut text = String::from("<environment_context>\n");
    let _ = writeln!(text, "  <cwd>{cwd}</cwd>");
    let _ = writeln!(text, "  <shell>{shell_name}</shell>");
    if let Some(remote) = environment.remote() {
        let _ = writeln!(
            text,
            "  <environments>\n    <environment id=\"{}\" primary=\"true\"><cwd>{cwd}</cwd><shell>{shell_name}</shell></environment>\n  </environments>",
            remote.id()
        );
    }
    let _ = writeln!(
        text,
        "  <current_date>{}</current_date>",
        now.format("%Y-%m-%d")
    );
    let _ = writeln!(text, "  <timezone>{}</timezone>", now.format("%:z"));
    let _ = writeln!(
        text,
        "  <approval_policy>{}</approval_policy>",
        turn.approval_policy
    );
    let _ = writeln!(
        text,
        "  <sandbox_mode>{}</sandbox_mode>",
        turn.sandbox_policy.mode()
    );
    let network = if turn.sandbox_policy.has_full_network_access() {
        "enabled"
    } else {
        "restricted"
    };
    let _ = writeln!(text, "  <network_access>{network}</network_access>");
    if let SandboxPolicy::WorkspaceWrite { writable_roots, .. } = &turn.sandbox_policy {
        text.push_str("  <writable_roots>\n");
        let _ = writeln!(text, "    <root>{cwd}</root>");
        for root in writable_roots {
            let _ = writeln!(
                text,
                "    <root>{}</root>",
                environment.path_for_model(root)
            );
        }
        text.push_str("  </writable_roots>\n");
    }
    text.push_str("</environment_context>");
    text
}
