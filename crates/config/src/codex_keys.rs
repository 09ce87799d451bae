//! The keys Codex's `config.toml` defines that Osprey does not use (yet), and Codex's
//! `[features]` names Osprey does not know.
//!
//! A Codex user's file carries many of them (`notify`, `[tui]`, `[history]`, `[otel]`,
//! `model_verbosity`, …). Osprey ignores them quietly — they are mentioned at
//! `RUST_LOG=debug` — and warns only about keys neither program knows, which are most likely
//! typos. Taken from Codex's `ConfigToml`, `ConfigProfile`, `ModelProviderInfo`,
//! `RawMcpServerConfig` and feature registry (`codex-rs/config`, `codex-rs/features`),
//! including keys older Codex versions wrote that newer ones still accept.
//!
//! Matching is exact, segment by segment, with `*` standing for one segment (a profile,
//! provider or server name): an entry names the key that `serde_ignored` reports, which is the
//! topmost key Osprey's schema does not have. So a whole table Osprey lacks (`tui`) is one
//! entry and covers everything in it, while inside a table Osprey reads (`tools`, a provider,
//! a profile) only the listed Codex keys are quiet and a misspelt key still warns.

/// Codex keys Osprey does not read, as dotted paths (`*` = any one name).
pub(crate) const CODEX_ONLY_KEYS: &[&str] = &[
    // Top level.
    "review_model",
    "approvals_reviewer",
    "allow_login_shell",
    "notify",
    // Inside a permission profile (`[permissions.<name>]`), what Osprey's sandbox does not
    // use: descriptions, inheritance and the network proxy.
    "permissions.*.description",
    "permissions.*.extends",
    "permissions.*.workspace_roots",
    "permissions.*.network.proxy_url",
    "permissions.*.network.enable_socks5",
    "permissions.*.network.socks_url",
    "permissions.*.network.enable_socks5_udp",
    "permissions.*.network.allow_upstream_proxy",
    "permissions.*.network.dangerously_allow_non_loopback_proxy",
    "permissions.*.network.dangerously_allow_all_unix_sockets",
    "permissions.*.network.mode",
    "permissions.*.network.domains",
    "permissions.*.network.unix_sockets",
    "permissions.*.network.allow_local_binding",
    "instructions",
    "include_permissions_instructions",
    "include_apps_instructions",
    "include_environment_context",
    "model_instructions_file",
    "compact_prompt",
    "commit_attribution",
    "forced_chatgpt_workspace_id",
    "forced_login_method",
    "cli_auth_credentials_store",
    "mcp_oauth_credentials_store",
    "mcp_oauth_callback_port",
    "mcp_oauth_callback_url",
    "tool_output_token_limit",
    "background_terminal_max_timeout",
    "js_repl_node_path",
    "js_repl_node_module_dirs",
    "zsh_path",
    "history",
    "sqlite_home",
    "log_dir",
    "file_opener",
    "tui",
    "hide_agent_reasoning",
    "show_raw_agent_reasoning",
    "plan_mode_reasoning_effort",
    "model_verbosity",
    "model_supports_reasoning_summaries",
    "model_reasoning_summary_format",
    "model_max_output_tokens",
    "model_catalog_json",
    "personality",
    "service_tier",
    "chatgpt_base_url",
    "openai_base_url",
    "audio",
    "experimental_realtime_ws_base_url",
    "experimental_realtime_ws_model",
    "realtime",
    "experimental_realtime_ws_backend_prompt",
    "experimental_realtime_ws_startup_context",
    "experimental_realtime_start_instructions",
    "web_search",
    "tool_suggest",
    "memories",
    "skills",
    "hooks",
    "plugins",
    "marketplaces",
    "suppress_unstable_features_warning",
    "ghost_snapshot",
    "project_root_markers",
    "check_for_update_on_startup",
    "disable_paste_burst",
    "analytics",
    "feedback",
    "apps",
    "otel",
    "windows",
    "windows_wsl_setup_acknowledged",
    "notice",
    "experimental_compact_prompt_file",
    "experimental_use_unified_exec_tool",
    "experimental_use_freeform_apply_patch",
    "experimental_use_exec_command_tool",
    "experimental_use_rmcp_client",
    "experimental_sandbox_command_assessment",
    "include_plan_tool",
    "include_apply_patch_tool",
    "include_view_image_tool",
    "tools_web_search_request",
    "disable_response_storage",
    "sandbox_permissions",
    "preferred_auth_method",
    "responses_originator_header_internal_override",
    // `[tools]`.
    "tools.web_search_request",
    // `[shell_environment_policy]`.
    "shell_environment_policy.experimental_use_profile",
    // `[model_providers.<id>]`.
    "model_providers.*.experimental_bearer_token",
    "model_providers.*.auth",
    "model_providers.*.aws",
    "model_providers.*.requires_openai_auth",
    "model_providers.*.supports_websockets",
    "model_providers.*.websocket_connect_timeout_ms",
    // `[mcp_servers.<name>]`.
    "mcp_servers.*.env_vars",
    "mcp_servers.*.env_http_headers",
    "mcp_servers.*.environment_id",
    "mcp_servers.*.startup_timeout_ms",
    "mcp_servers.*.required",
    "mcp_servers.*.scopes",
    "mcp_servers.*.oauth",
    "mcp_servers.*.oauth_resource",
    // `[profiles.<name>]`: Codex's `ConfigProfile` keys a profile here does not take.
    "profiles.*.service_tier",
    "profiles.*.approvals_reviewer",
    "profiles.*.plan_mode_reasoning_effort",
    "profiles.*.model_verbosity",
    "profiles.*.model_catalog_json",
    "profiles.*.personality",
    "profiles.*.chatgpt_base_url",
    "profiles.*.openai_file_api_base_url",
    "profiles.*.model_instructions_file",
    "profiles.*.js_repl_node_path",
    "profiles.*.js_repl_node_module_dirs",
    "profiles.*.zsh_path",
    "profiles.*.experimental_instructions_file",
    "profiles.*.experimental_compact_prompt_file",
    "profiles.*.include_apply_patch_tool",
    "profiles.*.include_permissions_instructions",
    "profiles.*.include_apps_instructions",
    "profiles.*.include_environment_context",
    "profiles.*.experimental_use_unified_exec_tool",
    "profiles.*.experimental_use_freeform_apply_patch",
    "profiles.*.tools_view_image",
    "profiles.*.web_search",
    "profiles.*.analytics",
    "profiles.*.windows",
    "profiles.*.oss_provider",
];

/// Codex `[features]` names (current and legacy aliases) that Osprey does not switch on or
/// off; the ones it does are in [`crate::features::FEATURES`].
pub(crate) const CODEX_ONLY_FEATURES: &[&str] = &[
    "undo",
    "ghost_commit",
    "shell_zsh_fork",
    "shell_snapshot",
    "js_repl",
    "code_mode",
    "code_mode_only",
    "js_repl_tools_only",
    "web_search_cached",
    "search_tool",
    "codex_git_commit",
    "runtime_metrics",
    "general_analytics",
    "sqlite",
    "memories",
    "memory_tool",
    "child_agents_md",
    "image_detail_original",
    "exec_permission_approvals",
    "request_permissions",
    "codex_hooks",
    "request_permissions_tool",
    "use_linux_sandbox_bwrap",
    "use_legacy_landlock",
    "request_rule",
    "experimental_windows_sandbox",
    "enable_experimental_windows_sandbox",
    "elevated_windows_sandbox",
    "enable_elevated_windows_sandbox",
    "remote_models",
    "remote_compaction",
    "enable_request_compression",
    "collab",
    "multi_agent_v2",
    "enable_fanout",
    "apps",
    "connectors",
    "tool_search",
    "tool_suggest",
    "plugins",
    "image_generation",
    "skill_mcp_dependency_install",
    "skill_env_var_dependency_prompt",
    "skills",
    "steer",
    "default_mode_request_user_input",
    "guardian_approval",
    "collaboration_modes",
    "tool_call_mcp_elicitation",
    "personality",
    "artifact",
    "alarm_scheduler",
    "fast_mode",
    "realtime_conversation",
    "tui_app_server",
    "prevent_idle_sleep",
    "responses_websockets",
    "responses_websockets_v2",
    "rmcp_client",
    "streamable_shell",
    "shell_command_tool",
    "plan_tool",
    "parallel",
    "warnings",
    "experimental_sandbox_command_assessment",
    "web_search",
    "include_apply_patch_tool",
    "experimental_use_unified_exec_tool",
    "experimental_use_freeform_apply_patch",
];

/// Whether `path` (as `serde_ignored` reports it) is a Codex key Osprey does not use.
pub(crate) fn is_codex_only_key(path: &[String]) -> bool {
    CODEX_ONLY_KEYS.iter().any(|entry| {
        let segments: Vec<&str> = entry.split('.').collect();
        segments.len() == path.len()
            && segments
                .iter()
                .zip(path)
                .all(|(want, got)| *want == "*" || want == got)
    })
}

/// Whether `name` is a Codex feature Osprey does not switch.
pub(crate) fn is_codex_only_feature(name: &str) -> bool {
    CODEX_ONLY_FEATURES.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::is_known_feature;

    fn path(dotted: &str) -> Vec<String> {
        dotted.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn entries_match_exactly_with_one_segment_wildcards() {
        assert!(is_codex_only_key(&path("tui")));
        assert!(is_codex_only_key(&path(
            "model_providers.azure.requires_openai_auth"
        )));
        assert!(is_codex_only_key(&path("profiles.work.model_verbosity")));
        // A misspelling inside a table Osprey reads is not Codex's.
        assert!(!is_codex_only_key(&path("tools.shel_type")));
        assert!(!is_codex_only_key(&path("model_providers.azure.base_ulr")));
        // A wildcard stands for exactly one name.
        assert!(!is_codex_only_key(&path(
            "model_providers.requires_openai_auth"
        )));
        assert!(!is_codex_only_key(&path("notifyy")));
    }

    /// Every entry is a key Osprey's schema really lacks: once Osprey reads a key, it must
    /// leave this table (or its typos inside would stop being reported).
    #[test]
    fn every_entry_is_a_key_osprey_does_not_read() {
        for entry in CODEX_ONLY_KEYS {
            let segments: Vec<String> = entry.split('.').map(|s| s.replace('*', "x")).collect();
            let (leaf, tables) = segments.split_last().unwrap();
            let mut text = String::new();
            if !tables.is_empty() {
                text.push_str(&format!("[{}]\n", tables.join(".")));
            }
            text.push_str(&format!("{leaf} = \"codex\"\n"));
            let source = crate::error::ConfigSource::UserFile("/h/config.toml".into());
            let (_, ignored) =
                crate::layers::deserialize_text::<crate::schema::ConfigToml>(&source, &text)
                    .unwrap_or_else(|err| panic!("{entry}: Osprey reads this key ({err})"));
            assert_eq!(
                ignored,
                vec![segments.clone()],
                "{entry}: Osprey reads this key"
            );
        }
    }

    #[test]
    fn the_tables_hold_no_duplicates_and_no_feature_osprey_switches() {
        let mut keys = CODEX_ONLY_KEYS.to_vec();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), CODEX_ONLY_KEYS.len(), "duplicate key entries");
        let mut features = CODEX_ONLY_FEATURES.to_vec();
        features.sort_unstable();
        features.dedup();
        assert_eq!(
            features.len(),
            CODEX_ONLY_FEATURES.len(),
            "duplicate features"
        );
        for name in CODEX_ONLY_FEATURES {
            assert!(!is_known_feature(name), "{name} is Osprey's own feature");
        }
    }
}
