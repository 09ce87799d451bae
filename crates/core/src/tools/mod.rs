//! The tool system: calls, registry, router, the parallel runtime and the handlers.
//!
//! Flow of one call: [`router`] turns a model item into a [`call::ToolCall`]; [`runtime`]
//! decides what runs concurrently; the [`registry::ToolRegistry`] finds the handler and turns
//! errors the model can act on into failed outputs; handlers that run something go through
//! the orchestrator (approval → sandbox → attempt → escalate).

pub mod call;
pub mod command_item;
pub mod context;
pub mod exec_env;
pub mod handlers;
pub mod orchestrator;
pub mod registry;
pub mod router;
pub mod runtime;
pub mod unified_exec;

pub use registry::{ToolHandler, ToolRegistry};

use handlers::apply_patch::ApplyPatchHandler;
use handlers::files::{GrepFilesHandler, ListDirHandler, ReadFileHandler, ViewImageHandler};
use handlers::plan::UpdatePlanHandler;
use handlers::shell::{ShellCommandHandler, ShellHandler};
use handlers::unified_exec::{ExecCommandHandler, WriteStdinHandler};
use osprey_config::{ApplyPatchToolType, Config, ShellToolType};
use std::sync::Arc;

/// The tools offered in a thread: the built-in ones this configuration enables, then the
/// tools of the MCP servers that started.
pub fn build_registry_with_mcp(
    config: &Config,
    mcp: &Arc<osprey_mcp::McpConnectionManager>,
) -> ToolRegistry {
    let mut registry = build_registry(config);
    if mcp.has_servers() {
        let specs = match config.model_provider.wire_api {
            osprey_config::WireApi::Responses => mcp.responses_tool_specs(),
            osprey_config::WireApi::Chat => mcp.flat_tool_specs(),
        };
        registry.register_prefixed(
            handlers::mcp::MCP_PREFIX,
            Arc::new(handlers::mcp::McpToolHandler {
                manager: Arc::clone(mcp),
            }),
            specs,
        );
        for spec in osprey_mcp::resource_tool_specs() {
            let name: &'static str = match spec["name"].as_str() {
                Some("list_mcp_resources") => "list_mcp_resources",
                Some("list_mcp_resource_templates") => "list_mcp_resource_templates",
                Some("read_mcp_resource") => "read_mcp_resource",
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

/// The built-in tools this configuration enables, in the order they are offered.
pub fn build_registry(config: &Config) -> ToolRegistry {
    let local = config.model_provider_id == osprey_config::LOCAL_PROVIDER_ID;
    if local && config.local_model.tool_profile == osprey_config::LocalToolProfile::Local {
        return local_profile();
    }
    let tools = &config.tools;
    let mut registry = ToolRegistry::default();
    match tools.shell {
        Some(ShellToolType::ExecCommand) => {
            registry.register(Arc::new(ExecCommandHandler));
            registry.register(Arc::new(WriteStdinHandler));
        }
        Some(ShellToolType::ShellCommand) => registry.register(Arc::new(ShellCommandHandler)),
        Some(ShellToolType::Shell) => registry.register(Arc::new(ShellHandler)),
        None => {}
    }
    if tools.shell.is_some() {
        // The Responses API's built-in local_shell calls run like `shell`.
        if registry.handler("shell").is_none() {
            registry.register_hidden("local_shell", Arc::new(ShellHandler));
        } else {
            registry.alias("local_shell", "shell");
        }
    }
    if let Some(mut tool_type) = tools.apply_patch {
        if local {
            // The embedded model reads calls as JSON; a freeform tool could not be called.
            tool_type = ApplyPatchToolType::Function;
        }
        registry.register(Arc::new(ApplyPatchHandler { tool_type }));
    }
    if tools.update_plan {
        registry.register(Arc::new(UpdatePlanHandler::default()));
    }
    if tools.read_file {
        registry.register(Arc::new(ReadFileHandler));
    }
    if tools.list_dir {
        registry.register(Arc::new(ListDirHandler));
    }
    if tools.grep_files {
        registry.register(Arc::new(GrepFilesHandler));
    }
    if tools.view_image {
        registry.register(Arc::new(ViewImageHandler));
    }
    registry
}

/// The small tool set the embedded local model handles well: whole-file writes instead of
/// patches, reading, listing, and one-shot commands.
fn local_profile() -> ToolRegistry {
    let mut registry = ToolRegistry::default();
    registry.register(Arc::new(handlers::write_file::WriteFileHandler));
    registry.register(Arc::new(handlers::local::LocalReadFileHandler));
    registry.register(Arc::new(handlers::local::LocalListDirHandler));
    registry.register(Arc::new(handlers::local::LocalShellCommandHandler));
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
    fn the_local_provider_gets_the_small_profile() {
        let registry = build_registry(&local_config(osprey_config::LocalToolProfile::Local));
        assert_eq!(
            registry.names(),
            ["write_file", "read_file", "list_dir", "shell_command"]
        );
    }

    #[test]
    fn the_standard_profile_offers_apply_patch_as_a_json_function() {
        let registry = build_registry(&local_config(osprey_config::LocalToolProfile::Standard));
        let names = registry.names();
        assert!(names.contains(&"apply_patch".to_string()), "{names:?}");
        assert!(!names.contains(&"write_file".to_string()), "{names:?}");
        let specs = registry.specs_json();
        let patch = specs.iter().find(|s| s["name"] == "apply_patch").unwrap();
        assert_eq!(patch["type"], "function", "{patch}");
    }
}
