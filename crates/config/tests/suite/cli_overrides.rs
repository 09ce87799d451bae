//! `-c key=value` parsing as seen through the builder.

use osprey_config::{ConfigError, ConfigOverrides, ConfigSource};
use osprey_protocol::SandboxPolicy;
use pretty_assertions::assert_eq;

use super::fixture::Fixture;

#[test]
fn bare_value_is_a_string_and_toml_values_keep_their_type() {
    let fx = Fixture::new();
    let c = fx
        .build_with(
            &[
                "model=o3",
                "sandbox_mode=workspace-write",
                "sandbox_workspace_write.network_access=true",
                "project_doc_max_bytes=100",
                "project_doc_fallback_filenames=[\"CLAUDE.md\"]",
            ],
            ConfigOverrides::default(),
        )
        .unwrap()
        .config;
    assert_eq!(c.model, "o3");
    assert_eq!(c.project_doc_max_bytes, 100);
    assert_eq!(
        c.project_doc_fallback_filenames,
        vec!["CLAUDE.md".to_owned()]
    );
    assert_eq!(
        c.sandbox_policy(),
        &SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![],
            network_access: true,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: false,
        }
    );
}

#[test]
fn nested_override_merges_into_file_table() {
    let fx = Fixture::new();
    fx.write_user("[mcp_servers.docs]\ncommand = \"docs-server\"\n");
    let c = fx
        .build_with(
            &["mcp_servers.docs.args=[\"--port\", \"1\"]"],
            ConfigOverrides::default(),
        )
        .unwrap()
        .config;
    let server = &c.mcp_servers["docs"];
    assert_eq!(
        server.transport,
        osprey_config::McpTransport::Stdio {
            command: "docs-server".into(),
            args: vec!["--port".into(), "1".into()],
            env: Default::default(),
            cwd: None,
        }
    );
}

#[test]
fn quoted_key_segment_trusts_a_project() {
    let fx = Fixture::new();
    fx.write_project("model = \"from-project\"\n");
    let arg = format!("projects.\"{}\".trust_level=trusted", fx.repo.display());
    let c = fx
        .build_with(&[arg.as_str()], ConfigOverrides::default())
        .unwrap()
        .config;
    assert!(c.active_project_trusted);
    assert_eq!(c.model, "from-project");
}

#[test]
fn missing_equals_is_a_usage_error_naming_the_argument() {
    let fx = Fixture::new();
    let err = fx
        .build_with(&["model"], ConfigOverrides::default())
        .unwrap_err();
    assert!(matches!(&err, ConfigError::OverrideSyntax { arg, .. } if arg == "model"));
    assert!(
        err.to_string()
            .starts_with("invalid -c override `model`: missing `=`"),
        "{err}"
    );
}

#[test]
fn bad_value_names_the_key() {
    let fx = Fixture::new();
    let err = fx
        .build_with(&["approval_policy=sometimes"], ConfigOverrides::default())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "-c `approval_policy=sometimes`: approval_policy: invalid value: string \
         \"sometimes\", expected one of `untrusted`, `on-failure`, `on-request`, `never`"
    );
    let err = fx
        .build_with(&["tools.read_file=maybe"], ConfigOverrides::default())
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("-c `tools.read_file=maybe`: tools.read_file: invalid type: string"),
        "{err}"
    );
}

#[test]
fn unknown_override_key_is_a_warning() {
    let fx = Fixture::new();
    let loaded = fx
        .build_with(&["tools.nope=1"], ConfigOverrides::default())
        .unwrap();
    assert_eq!(loaded.warnings.len(), 1);
    assert_eq!(loaded.warnings[0].key, "tools.nope");
    assert_eq!(
        loaded.warnings[0].location.source,
        ConfigSource::CliOverride("tools.nope=1".into())
    );
}
