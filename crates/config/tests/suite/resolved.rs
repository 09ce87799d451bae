//! Resolved values: tools per model, sandbox roots, MCP servers, environment policy,
//! instructions.

use std::collections::BTreeMap;
use std::time::Duration;

use osprey_config::{
    ApplyPatchToolType, Config, ConfigOverrides, LocalModelConfig, LocalToolProfile, McpTransport,
    ShellEnvironmentInherit, ShellToolType, ToolsConfig,
};
use osprey_protocol::{ReasoningEffort, SandboxPolicy};
use pretty_assertions::assert_eq;

use super::fixture::Fixture;

#[test]
fn tool_defaults() {
    let fx = Fixture::new();
    assert_eq!(fx.build().unwrap().config.tools, ToolsConfig::default());
    let t = ToolsConfig::default();
    assert_eq!(t.shell, Some(ShellToolType::ExecCommand));
    assert_eq!(t.apply_patch, Some(ApplyPatchToolType::Freeform));
    assert_eq!(t.view_image_max_dimension, 2048);
    assert_eq!(t.unified_exec_max_sessions, 16);
    assert!(t.login_shell);
}

#[test]
fn shell_type_is_configurable_per_model() {
    let fx = Fixture::new();
    fx.write_user(
        "model = \"gpt-4.1\"\n[tools]\nshell_type = \"shell_command\"\n\
         [model_tools.\"gpt-4.1\"]\nshell_type = \"shell\"\napply_patch = \"function\"\n\
         [model_tools.\"other\"]\nshell_type = \"exec_command\"\n",
    );
    let c = fx.build().unwrap().config;
    assert_eq!(c.tools.shell, Some(ShellToolType::Shell));
    assert_eq!(c.tools.apply_patch, Some(ApplyPatchToolType::Function));

    let c = fx
        .build_with(&["model=gpt-5"], ConfigOverrides::default())
        .unwrap()
        .config;
    assert_eq!(c.tools.shell, Some(ShellToolType::ShellCommand));
    assert_eq!(c.tools.apply_patch, Some(ApplyPatchToolType::Freeform));
}

#[test]
fn tools_can_be_switched_off() {
    let fx = Fixture::new();
    fx.write_user(
        "login_shell = false\n[tools]\nexec_command = false\napply_patch = false\n\
         read_file = false\nlist_dir = false\ngrep_files = false\nview_image = false\n\
         update_plan = false\nview_image_max_dimension = 512\nunified_exec_max_sessions = 2\n",
    );
    let t = fx.build().unwrap().config.tools;
    assert_eq!(
        t,
        ToolsConfig {
            shell: None,
            apply_patch: None,
            read_file: false,
            list_dir: false,
            grep_files: false,
            view_image: false,
            update_plan: false,
            web_search: false,
            view_image_max_dimension: 512,
            unified_exec_max_sessions: 2,
            login_shell: false,
        }
    );
}

#[test]
fn features_steer_tool_defaults_and_profiles_can_set_them() {
    let fx = Fixture::new();
    fx.write_user(
        "[features]\nunified_exec = false\nweb_search_request = true\n\
         [profiles.p]\nfeatures = { apply_patch_freeform = false }\n",
    );
    let c = fx.build().unwrap().config;
    assert!(c.features.web_search_request());
    assert_eq!(c.tools.shell, Some(ShellToolType::ShellCommand));
    assert!(c.tools.web_search);
    assert_eq!(c.tools.apply_patch, Some(ApplyPatchToolType::Freeform));
    let c = fx
        .build_with(&["profile=p"], ConfigOverrides::default())
        .unwrap()
        .config;
    assert_eq!(c.tools.apply_patch, Some(ApplyPatchToolType::Function));
    assert!(
        !c.features.unified_exec(),
        "profile features merge over the file's"
    );
}

#[test]
fn workspace_write_roots_come_from_the_table_and_add_dirs() {
    let fx = Fixture::new();
    fx.write_user(
        "sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\n\
         writable_roots = [\"/opt/cache\", \"build\"]\nexclude_slash_tmp = true\n",
    );
    let overrides = ConfigOverrides {
        add_dirs: vec!["../other".into(), "/opt/cache".into()],
        ..Default::default()
    };
    let c = fx.build_with(&[], overrides).unwrap().config;
    assert_eq!(
        c.sandbox_policy(),
        &SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![
                "/opt/cache".into(),
                fx.cwd.join("build"),
                fx.repo.join("other"),
            ],
            network_access: false,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: true,
        }
    );
}

#[test]
fn add_dirs_under_read_only_warn() {
    let fx = Fixture::new();
    let overrides = ConfigOverrides {
        add_dirs: vec!["/x".into()],
        ..Default::default()
    };
    let loaded = fx.build_with(&[], overrides).unwrap();
    assert_eq!(loaded.config.sandbox_policy(), &SandboxPolicy::ReadOnly);
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].message.contains("--add-dir"));
}

#[test]
fn mcp_servers_are_parsed_with_defaults() {
    let fx = Fixture::new();
    fx.write_user(
        "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"fs\"]\nenv = { ROOT = \"/\" }\n\
         [mcp_servers.remote]\nurl = \"https://mcp.example/mcp\"\n\
         bearer_token_env_var = \"MCP_TOKEN\"\nstartup_timeout_sec = 3\nenabled = false\n\
         require_approval = true\n",
    );
    let c = fx.build().unwrap().config;
    let fs = &c.mcp_servers["fs"];
    assert_eq!(fs.startup_timeout, Duration::from_secs(10));
    assert_eq!(fs.tool_timeout, Duration::from_secs(60));
    assert!(fs.enabled);
    assert_eq!(
        fs.transport,
        McpTransport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "fs".into()],
            env: BTreeMap::from([("ROOT".into(), "/".into())]),
            cwd: None,
        }
    );
    let remote = &c.mcp_servers["remote"];
    assert_eq!(remote.startup_timeout, Duration::from_secs(3));
    assert!(!remote.enabled);
    assert!(remote.require_approval);
    assert_eq!(
        remote.transport,
        McpTransport::StreamableHttp {
            url: "https://mcp.example/mcp".into(),
            bearer_token_env_var: Some("MCP_TOKEN".into()),
            http_headers: BTreeMap::new(),
        }
    );
}

#[test]
fn shell_environment_policy_and_model_settings() {
    let fx = Fixture::new();
    fx.write_user(
        "model_reasoning_effort = \"high\"\nmodel_reasoning_summary = \"detailed\"\n\
         model_context_window = 200000\nmodel_auto_compact_token_limit = 150000\n\
         [shell_environment_policy]\ninherit = \"core\"\nignore_default_excludes = false\n\
         exclude = [\"AWS_*\"]\ninclude_only = [\"PATH\", \"HOME\"]\nset = { CI = \"1\" }\n",
    );
    let c = fx.build().unwrap().config;
    assert_eq!(c.model_reasoning_effort, Some(ReasoningEffort::High));
    assert_eq!(
        c.model_reasoning_summary,
        Some(osprey_config::ReasoningSummaryMode::Detailed)
    );
    assert_eq!(c.model_context_window, Some(200_000));
    assert_eq!(c.model_auto_compact_token_limit, Some(150_000));
    let p = &c.shell_environment_policy;
    assert_eq!(p.inherit, ShellEnvironmentInherit::Core);
    assert!(!p.ignore_default_excludes);
    assert_eq!(p.exclude, vec!["AWS_*".to_owned()]);
    assert_eq!(p.set["CI"], "1");
}

#[test]
fn instructions_file_is_read_relative_to_its_config_file() {
    let fx = Fixture::new();
    std::fs::write(fx.home.join("prompt.md"), "You are terse.\n").unwrap();
    fx.write_user(
        "experimental_instructions_file = \"prompt.md\"\ndeveloper_instructions = \"Be kind.\"\n",
    );
    let c = fx.build().unwrap().config;
    assert_eq!(c.base_instructions.as_deref(), Some("You are terse.\n"));
    assert_eq!(c.developer_instructions.as_deref(), Some("Be kind."));

    // inline text in a higher layer wins over the file
    let overrides = ConfigOverrides {
        base_instructions: Some("inline".into()),
        ..Default::default()
    };
    let c = fx.build_with(&[], overrides).unwrap().config;
    assert_eq!(c.base_instructions.as_deref(), Some("inline"));
}

#[test]
fn empty_instructions_file_is_an_error() {
    let fx = Fixture::new();
    std::fs::write(fx.home.join("empty.md"), " \n").unwrap();
    fx.write_user("experimental_instructions_file = \"empty.md\"\n");
    let err = fx.build().unwrap_err();
    assert!(err.to_string().contains("the file is empty"), "{err}");
}

#[test]
fn for_tests_reads_the_home_and_its_requirements() {
    // Regression: the test constructor used to skip managed requirements, and any crate
    // could turn it on through a feature.
    let mut fx = Fixture::new();
    fx.write_user("model = \"t\"\n");
    fx.write_requirements("allowed_sandbox_modes = [\"read-only\"]\n");
    let c = Config::for_tests(&fx.home, &fx.cwd).unwrap();
    assert_eq!(c.model, "t");
    assert!(!c.requirements().is_empty());
}

#[test]
fn local_model_settings_default_to_every_aid_on_but_the_write_diff() {
    let fx = Fixture::new();
    let c = fx.build().unwrap().config;
    assert_eq!(c.local_model, LocalModelConfig::default());
    assert!(c.local_model.read_before_write && c.local_model.edit_tool);
    assert!(!c.local_model.write_diff);
    assert!(c.local_model.constrained_decoding && c.local_model.loop_guard);
    assert!(c.local_model.prefix_cache);
    assert_eq!(c.local_model.tool_profile, LocalToolProfile::Local);

    fx.write_user(
        "[local_model]\ncontext_tokens = 16384\nthreads = 2\nmax_output_tokens = 800\n\
         constrained_decoding = false\ntool_profile = \"standard\"\nloop_guard = false\n\
         prefix_cache = false\nread_before_write = false\nverify_named_check = false\n\
         answer_from_evidence = false\nrelated_files = false\nwrite_diff = true\n\
         edit_tool = false\ncheck_expected_output = false\n\
         protect_named_check = false\nrepeat_nudge = false\nquestion_read_only = false\n\
         hide_call_narration = false\nquestion_focus = false\nkeep_content = false\n\
         fix_failed_check = false\nmissing_name = false\ncontext_echo = false\n\
         strip_line_numbers = false\nquoted_arguments = false\n",
    );
    let loaded = fx.build().unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(
        loaded.config.local_model,
        LocalModelConfig {
            context_tokens: 16384,
            threads: Some(2),
            max_output_tokens: 800,
            constrained_decoding: false,
            tool_profile: LocalToolProfile::Standard,
            loop_guard: false,
            repeat_nudge: false,
            prefix_cache: false,
            read_before_write: false,
            protect_named_check: false,
            context_echo: false,
            strip_line_numbers: false,
            verify_named_check: false,
            fix_failed_check: false,
            check_expected_output: false,
            answer_from_evidence: false,
            question_read_only: false,
            related_files: false,
            missing_name: false,
            quoted_arguments: false,
            write_diff: true,
            keep_content: false,
            hide_call_narration: false,
            question_focus: false,
            edit_tool: false,
        }
    );
}

#[test]
fn local_model_switches_work_from_the_command_line() {
    let fx = Fixture::new();
    let c = fx
        .build_with(
            &[
                "local_model.loop_guard=false",
                "local_model.tool_profile=standard",
            ],
            ConfigOverrides::default(),
        )
        .unwrap()
        .config;
    assert!(!c.local_model.loop_guard);
    assert_eq!(c.local_model.tool_profile, LocalToolProfile::Standard);
}

#[test]
fn local_model_values_out_of_range_are_located_errors() {
    let fx = Fixture::new();
    for (text, needle) in [
        (
            "context_tokens = 100",
            "context_tokens = 100 is outside 512..=32768",
        ),
        ("max_output_tokens = 9000", "must be at least 1 and below"),
        ("threads = 0", "threads = 0"),
        ("tool_profile = \"tiny\"", "one of `local`, `standard`"),
    ] {
        fx.write_user(&format!("[local_model]\n{text}\n"));
        let err = fx.build().unwrap_err().to_string();
        assert!(err.contains(needle), "{text}: {err}");
        assert!(err.contains(&fx.user_path().display().to_string()), "{err}");
    }
}
