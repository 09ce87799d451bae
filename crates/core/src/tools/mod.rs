//! The tool system: calls, registry, router, the parallel runtime and the handlers.
//!
//! Flow of one call: [`router`] turns a model item into a [`call::ToolCall`]; [`runtime`]
//! decides what runs concurrently; the [`registry::ToolRegistry`] finds the handler and turns
//! errors the model can act on into failed outputs; handlers that run something go through
//! the orchestrator (approval → sandbox → attempt → escalate).

pub mod approval;
pub mod call;
pub mod command_item;
pub mod context;
pub mod exec_env;
pub mod handlers;
pub mod orchestrator;
pub mod registry;
pub mod router;
pub mod runtime;
pub mod scope;
pub mod unified_exec;

pub use registry::{ToolHandler, ToolRegistry};

use context::HandlerDeps;
use handlers::apply_patch::ApplyPatchHandler;
use handlers::collab;
use handlers::edit_file::EditFileHandler;
use handlers::files::{GrepFilesHandler, ListDirHandler, ReadFileHandler, ViewImageHandler};
use handlers::local::{LocalListDirHandler, LocalReadFileHandler, LocalShellCommandHandler};
use handlers::plan::UpdatePlanHandler;
use handlers::shell::{ShellCommandHandler, ShellHandler};
use handlers::unified_exec::{ExecCommandHandler, WriteStdinHandler};
use handlers::write_file::WriteFileHandler;
use osprey_config::{ApplyPatchToolType, Config, ShellToolType, ToolProfileKind};
use osprey_tools::{ProfileTool, ShellTool, StandardTools, ToolProfile, ToolVariant, TurnAid};
use std::sync::Arc;

/// The tool profile this configuration gives a thread: which tools, which variants, which
/// turn aids.
pub fn profile_for(config: &Config) -> ToolProfile {
    let choice = config.tool_profile();
    let profile = match choice.kind {
        ToolProfileKind::Local => ToolProfile::local(),
        ToolProfileKind::Standard => {
            ToolProfile::standard(&standard_tools(config, choice.freeform_tools))
        }
    };
    let profile = if config.local_model.edit_tool {
        profile
    } else {
        profile.without_tool(osprey_tools::names::EDIT_FILE)
    };
    let profile = if choice.loop_guard {
        profile.with_aid(TurnAid::LoopGuard)
    } else {
        profile.without_aid(TurnAid::LoopGuard)
    };
    // The local profile's harness aids, each switched by its `[local_model]` key.
    let local = &config.local_model;
    [
        (TurnAid::ReadBeforeWrite, local.read_before_write),
        (TurnAid::RepeatNudge, local.repeat_nudge),
        (TurnAid::ProtectNamedCheck, local.protect_named_check),
        (TurnAid::VerifyNamedCheck, local.verify_named_check),
        (TurnAid::FixFailedCheck, local.fix_failed_check),
        (TurnAid::CheckExpectedOutput, local.check_expected_output),
        (TurnAid::AnswerFromEvidence, local.answer_from_evidence),
        (TurnAid::QuestionReadOnly, local.question_read_only),
        (TurnAid::RelatedFiles, local.related_files),
        (TurnAid::WriteDiff, local.write_diff),
        (TurnAid::KeepContent, local.keep_content),
        (TurnAid::MissingName, local.missing_name),
        (TurnAid::QuotedArguments, local.quoted_arguments),
        (TurnAid::ContextEcho, local.context_echo),
        (TurnAid::StripLineNumbers, local.strip_line_numbers),
        (TurnAid::HideCallNarration, local.hide_call_narration),
        (TurnAid::QuestionFocus, local.question_focus),
    ]
    .into_iter()
    .filter(|(_, on)| !on)
    .fold(profile, |profile, (aid, _)| profile.without_aid(aid))
}

fn standard_tools(config: &Config, freeform_tools: bool) -> StandardTools {
    let tools = &config.tools;
    StandardTools {
        shell: tools.shell.map(|shell| match shell {
            ShellToolType::ExecCommand => ShellTool::ExecCommand,
            ShellToolType::ShellCommand => ShellTool::ShellCommand,
            ShellToolType::Shell => ShellTool::Shell,
        }),
        apply_patch: tools.apply_patch.map(|kind| match kind {
            ApplyPatchToolType::Freeform if freeform_tools => ToolVariant::Standard,
            ApplyPatchToolType::Freeform | ApplyPatchToolType::Function => ToolVariant::Function,
        }),
        update_plan: tools.update_plan,
        read_file: tools.read_file,
        list_dir: tools.list_dir,
        grep_files: tools.grep_files,
        view_image: tools.view_image,
        collab: config.features.multi_agent(),
    }
}

/// The one table that binds a profile's tool (name and variant) to its handler. Adding a
/// tool: its spec and argument struct in `osprey-tools`, a handler in `handlers/`, one line
/// here, and the profile entry.
fn handler_for(tool: &ProfileTool, deps: &HandlerDeps) -> Option<Arc<dyn ToolHandler>> {
    let commands = || Arc::clone(&deps.commands);
    let agents = || deps.agents.clone();
    let environment = || deps.commands.environment.clone();
    use ToolVariant::{Compact, Function};
    use osprey_tools::names::*;
    let handler: Arc<dyn ToolHandler> = match (tool.name, tool.variant) {
        (EXEC_COMMAND, _) => Arc::new(ExecCommandHandler {
            commands: commands(),
            sessions: Arc::clone(&deps.unified_exec),
        }),
        (WRITE_STDIN, _) => Arc::new(WriteStdinHandler {
            commands: commands(),
            sessions: Arc::clone(&deps.unified_exec),
        }),
        (SHELL_COMMAND, Compact) => Arc::new(LocalShellCommandHandler {
            shell: ShellCommandHandler {
                commands: commands(),
            },
        }),
        (SHELL_COMMAND, _) => Arc::new(ShellCommandHandler {
            commands: commands(),
        }),
        (SHELL | LOCAL_SHELL, _) => Arc::new(ShellHandler {
            commands: commands(),
        }),
        (APPLY_PATCH, Function) => Arc::new(ApplyPatchHandler {
            tool_type: ApplyPatchToolType::Function,
            commands: commands(),
        }),
        (APPLY_PATCH, _) => Arc::new(ApplyPatchHandler {
            tool_type: ApplyPatchToolType::Freeform,
            commands: commands(),
        }),
        (WRITE_FILE, _) => Arc::new(WriteFileHandler {
            commands: commands(),
        }),
        (EDIT_FILE, _) => Arc::new(EditFileHandler {
            commands: commands(),
        }),
        (UPDATE_PLAN, _) => Arc::new(UpdatePlanHandler::default()),
        (READ_FILE, Compact) => Arc::new(LocalReadFileHandler {
            inner: ReadFileHandler {
                environment: environment(),
            },
        }),
        (READ_FILE, _) => Arc::new(ReadFileHandler {
            environment: environment(),
        }),
        (LIST_DIR, Compact) => Arc::new(LocalListDirHandler {
            inner: ListDirHandler {
                environment: environment(),
            },
        }),
        (LIST_DIR, _) => Arc::new(ListDirHandler {
            environment: environment(),
        }),
        (GREP_FILES, _) => Arc::new(GrepFilesHandler {
            environment: environment(),
        }),
        (VIEW_IMAGE, _) => Arc::new(ViewImageHandler {
            environment: environment(),
        }),
        (SPAWN_AGENT, _) => Arc::new(collab::SpawnAgentHandler { agents: agents() }),
        (SEND_INPUT, _) => Arc::new(collab::SendInputHandler { agents: agents() }),
        (WAIT_AGENT, _) => Arc::new(collab::WaitAgentHandler { agents: agents() }),
        (CLOSE_AGENT, _) => Arc::new(collab::CloseAgentHandler { agents: agents() }),
        (RESUME_AGENT, _) => Arc::new(collab::ResumeAgentHandler { agents: agents() }),
        _ => return None,
    };
    Some(handler)
}

/// The built-in tools of `profile`, in the order they are offered.
pub fn build_registry(profile: &ToolProfile, deps: &HandlerDeps) -> ToolRegistry {
    let mut registry = ToolRegistry::default();
    for tool in &profile.tools {
        let Some(handler) = handler_for(tool, deps) else {
            tracing::warn!(
                tool = tool.name,
                "a tool profile names a tool with no handler"
            );
            continue;
        };
        if tool.offered {
            registry.register(handler);
        } else {
            registry.register_hidden(tool.name, handler);
        }
    }
    registry
}

/// The tools offered in a thread: the profile's built-in ones, then the tools of the MCP
/// servers that started.
pub fn build_registry_with_mcp(
    config: &Config,
    profile: &ToolProfile,
    mcp: &Arc<osprey_mcp::McpConnectionManager>,
    deps: &HandlerDeps,
) -> ToolRegistry {
    let mut registry = build_registry(profile, deps);
    if mcp.has_servers() {
        let specs = match config.model_provider.wire_api {
            osprey_config::WireApi::Responses => mcp.responses_tool_specs(),
            osprey_config::WireApi::Chat => mcp.flat_tool_specs(),
        };
        registry.register_prefixed(
            handlers::mcp::MCP_PREFIX,
            Arc::new(handlers::mcp::McpToolHandler {
                manager: Arc::clone(mcp),
                commands: Arc::clone(&deps.commands),
            }),
            specs,
        );
        for spec in osprey_mcp::resource_tool_specs() {
            use osprey_tools::names::{
                LIST_MCP_RESOURCE_TEMPLATES, LIST_MCP_RESOURCES, READ_MCP_RESOURCE,
            };
            let name: &'static str = match spec["name"].as_str() {
                Some(LIST_MCP_RESOURCES) => LIST_MCP_RESOURCES,
                Some(LIST_MCP_RESOURCE_TEMPLATES) => LIST_MCP_RESOURCE_TEMPLATES,
                Some(READ_MCP_RESOURCE) => READ_MCP_RESOURCE,
                _ => continue,
            };
            registry.register(Arc::new(handlers::mcp::McpResourceHandler {
                manager: Arc::clone(mcp),
                name,
                spec,
            }));
        }
    }
    registry
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn local_config(profile: osprey_config::LocalToolProfile) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::for_tests(dir.path(), dir.path()).unwrap();
        config.model_provider_id = osprey_config::LOCAL_PROVIDER_ID.to_string();
        config.local_model.tool_profile = profile;
        config
    }

    #[test]
    fn every_tool_a_profile_can_name_has_a_handler() {
        let standard = profile_for(&local_config(osprey_config::LocalToolProfile::Standard));
        for tool in ToolProfile::local().tools.iter().chain(&standard.tools) {
            let handler = handler_for(tool, &HandlerDeps::for_tests()).unwrap();
            if tool.offered {
                assert_eq!(handler.spec().name(), tool.name);
            }
        }
    }

    #[test]
    fn the_local_provider_gets_the_small_profile() {
        let registry = build_registry(
            &profile_for(&local_config(osprey_config::LocalToolProfile::Local)),
            &HandlerDeps::for_tests(),
        );
        assert_eq!(
            registry.names(),
            [
                "write_file",
                "edit_file",
                "read_file",
                "list_dir",
                "shell_command"
            ]
        );
    }

    #[test]
    fn the_edit_tool_has_its_own_switch() {
        let mut config = local_config(osprey_config::LocalToolProfile::Local);
        config.local_model.edit_tool = false;
        let registry = build_registry(&profile_for(&config), &HandlerDeps::for_tests());
        assert_eq!(
            registry.names(),
            ["write_file", "read_file", "list_dir", "shell_command"]
        );
    }

    #[test]
    fn each_harness_aid_has_its_own_switch() {
        let aids = [
            TurnAid::ReadBeforeWrite,
            TurnAid::RepeatNudge,
            TurnAid::ProtectNamedCheck,
            TurnAid::VerifyNamedCheck,
            TurnAid::CheckExpectedOutput,
            TurnAid::AnswerFromEvidence,
            TurnAid::QuestionReadOnly,
            TurnAid::RelatedFiles,
            TurnAid::WriteDiff,
            TurnAid::HideCallNarration,
            TurnAid::QuestionFocus,
            TurnAid::KeepContent,
            TurnAid::FixFailedCheck,
            TurnAid::MissingName,
            TurnAid::ContextEcho,
            TurnAid::StripLineNumbers,
            TurnAid::QuotedArguments,
        ];
        // Every aid on: the defaults, plus write_diff, which is off by default.
        let all_on = || {
            let mut config = local_config(osprey_config::LocalToolProfile::Local);
            config.local_model.write_diff = true;
            config
        };
        let all = profile_for(&all_on());
        assert!(aids.iter().all(|aid| all.has_aid(*aid)), "each can be on");
        let defaults = profile_for(&local_config(osprey_config::LocalToolProfile::Local));
        let off_by_default: Vec<_> = aids.iter().filter(|aid| !defaults.has_aid(**aid)).collect();
        assert_eq!(off_by_default, [&TurnAid::WriteDiff]);
        for (i, aid) in aids.iter().enumerate() {
            let mut config = all_on();
            let switches = [
                &mut config.local_model.read_before_write,
                &mut config.local_model.repeat_nudge,
                &mut config.local_model.protect_named_check,
                &mut config.local_model.verify_named_check,
                &mut config.local_model.check_expected_output,
                &mut config.local_model.answer_from_evidence,
                &mut config.local_model.question_read_only,
                &mut config.local_model.related_files,
                &mut config.local_model.write_diff,
                &mut config.local_model.hide_call_narration,
                &mut config.local_model.question_focus,
                &mut config.local_model.keep_content,
                &mut config.local_model.fix_failed_check,
                &mut config.local_model.missing_name,
                &mut config.local_model.context_echo,
                &mut config.local_model.strip_line_numbers,
                &mut config.local_model.quoted_arguments,
            ];
            *switches.into_iter().nth(i).unwrap() = false;
            let profile = profile_for(&config);
            assert!(!profile.has_aid(*aid), "{aid:?} off");
            let others_on = aids
                .iter()
                .filter(|other| *other != aid)
                .all(|other| profile.has_aid(*other));
            assert!(others_on, "only {aid:?} is off");
        }
    }

    #[test]
    fn the_standard_profile_offers_apply_patch_as_a_json_function() {
        let profile = profile_for(&local_config(osprey_config::LocalToolProfile::Standard));
        assert!(profile.has_aid(TurnAid::LoopGuard));
        assert!(!profile.has_aid(TurnAid::FinishNudge));
        let registry = build_registry(&profile, &HandlerDeps::for_tests());
        let names = registry.names();
        assert!(names.contains(&"apply_patch".to_string()), "{names:?}");
        assert!(!names.contains(&"write_file".to_string()), "{names:?}");
        let specs = registry.specs_json();
        let patch = specs.iter().find(|s| s["name"] == "apply_patch").unwrap();
        assert_eq!(patch["type"], "function", "{patch}");
    }
}
