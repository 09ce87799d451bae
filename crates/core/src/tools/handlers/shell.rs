//! `shell` (an argv), `shell_command` (a script for the user's shell) and `local_shell`
//! (the Responses API's built-in call): one-shot commands.

use super::one_shot::{OneShot, run_one_shot};
use crate::tools::call::{ToolError, ToolOutput, ToolPayload};
use crate::tools::context::{CommandServices, ToolInvocation};
use crate::tools::registry::ToolHandler;
use async_trait::async_trait;
use osprey_tools::{
    DEFAULT_MAX_OUTPUT_TOKENS, SandboxPermissions, ShellArgs, ShellCommandArgs, ToolSpec,
    shell_command_spec, shell_spec,
};
use std::sync::Arc;

/// `shell {command: [argv], …}`; also serves `local_shell` calls.
pub struct ShellHandler {
    pub commands: Arc<CommandServices>,
}

#[async_trait]
impl ToolHandler for ShellHandler {
    fn spec(&self) -> ToolSpec {
        shell_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let shot = match &inv.call.payload {
            ToolPayload::LocalShell { action } => OneShot {
                argv: action.command.clone(),
                workdir: action.working_directory.clone(),
                timeout_ms: action.timeout_ms,
                escalation_requested: false,
                justification: None,
                prefix_rule: None,
                max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            },
            ToolPayload::Function { .. } => {
                let args: ShellArgs = inv.call.arguments()?;
                OneShot {
                    escalation_requested: args.sandbox_permissions()
                        == SandboxPermissions::RequireEscalated,
                    argv: args.command,
                    workdir: args.workdir,
                    timeout_ms: args.timeout_ms,
                    justification: args.justification,
                    prefix_rule: args.prefix_rule,
                    max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
                }
            }
            ToolPayload::Custom { .. } => {
                return Err(ToolError::RespondToModel(
                    "shell takes JSON arguments: {\"command\": [\"program\", \"arg\", …]}"
                        .to_string(),
                ));
            }
        };
        run_one_shot(&inv, &self.commands, shot).await
    }
}

/// `shell_command {command: "script", …}` run through the user's shell.
pub struct ShellCommandHandler {
    pub commands: Arc<CommandServices>,
}

#[async_trait]
impl ToolHandler for ShellCommandHandler {
    fn spec(&self) -> ToolSpec {
        shell_command_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: ShellCommandArgs = inv.call.arguments()?;
        let login = args.login.unwrap_or(inv.turn.config.tools.login_shell);
        let argv = self.commands.shell.derive_exec_args(&args.command, login);
        run_one_shot(
            &inv,
            &self.commands,
            OneShot {
                escalation_requested: args.sandbox_permissions()
                    == SandboxPermissions::RequireEscalated,
                argv,
                workdir: args.workdir,
                timeout_ms: args.timeout_ms,
                justification: args.justification,
                prefix_rule: args.prefix_rule,
                max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            },
        )
        .await
    }
}
