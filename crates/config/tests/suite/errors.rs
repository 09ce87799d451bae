//! Error and warning messages: positions, expected values, known names.

use osprey_config::{ConfigError, ConfigOverrides, ConfigSource};
use pretty_assertions::assert_eq;

use super::fixture::Fixture;

#[test]
fn invalid_toml_reports_file_line_and_column() {
    let fx = Fixture::new();
    fx.write_user("model = \"ok\"\napproval_policy = on-request\n");
    let err = fx.build().unwrap_err();
    let text = err.to_string();
    let prefix = format!("{}:2:19: ", fx.user_path().display());
    assert!(text.starts_with(&prefix), "{text}");
    assert!(matches!(err, ConfigError::Invalid { .. }));
}

#[test]
fn unterminated_table_header_is_located() {
    let fx = Fixture::new();
    fx.write_user("[tools\nread_file = true\n");
    let text = fx.build().unwrap_err().to_string();
    assert!(
        text.starts_with(&format!("{}:1:", fx.user_path().display())),
        "{text}"
    );
}

#[test]
fn wrong_type_names_position_key_and_expected_values() {
    let fx = Fixture::new();
    fx.write_user("model = \"m\"\n\napproval_policy = 3\n");
    assert_eq!(
        fx.build().unwrap_err().to_string(),
        format!(
            "{}:3:19: approval_policy: invalid type: integer `3`, expected one of \
             `untrusted`, `on-failure`, `on-request`, `never`",
            fx.user_path().display()
        )
    );
}

#[test]
fn unknown_enum_value_lists_the_choices() {
    let fx = Fixture::new();
    fx.write_user("sandbox_mode = \"bogus\"\n");
    assert_eq!(
        fx.build().unwrap_err().to_string(),
        format!(
            "{}:1:16: sandbox_mode: invalid value: string \"bogus\", expected one of \
             `read-only`, `workspace-write`, `danger-full-access`",
            fx.user_path().display()
        )
    );
}

#[test]
fn type_error_inside_a_table_names_the_dotted_key() {
    let fx = Fixture::new();
    fx.write_user("[tools]\nshell_type = \"zsh\"\n");
    let text = fx.build().unwrap_err().to_string();
    assert_eq!(
        text,
        format!(
            "{}:2:14: tools.shell_type: invalid value: string \"zsh\", expected one of \
             `exec_command`, `shell_command`, `shell`",
            fx.user_path().display()
        )
    );
}

#[test]
fn type_error_in_trusted_project_file_names_that_file() {
    let fx = Fixture::new();
    fx.write_user(&fx.trust_entry());
    fx.write_project("login_shell = \"yes\"\n");
    let text = fx.build().unwrap_err().to_string();
    assert!(
        text.starts_with(&format!(
            "{}:1:15: login_shell:",
            fx.project_path().display()
        )),
        "{text}"
    );
}

#[test]
fn unknown_keys_are_warnings_with_file_and_dotted_path() {
    let fx = Fixture::new();
    fx.write_user(
        "model = \"m\"\nmodle = \"typo\"\n[sandbox_workspace_write]\nnetwork = true\n\
         [profiles.p]\nmodel_verbosty = \"low\"\n[features]\nteleport = true\n",
    );
    let loaded = fx.build().unwrap();
    assert_eq!(loaded.config.model, "m");
    type Row<'a> = (Option<&'a std::path::Path>, &'a str, Option<(usize, usize)>);
    let got: Vec<Row<'_>> = loaded
        .warnings
        .iter()
        .map(|w| (w.file(), w.key.as_str(), w.location.line_col))
        .collect();
    let file = Some(fx.user_path());
    assert_eq!(
        got,
        vec![
            (file.as_deref(), "modle", Some((2, 1))),
            (
                file.as_deref(),
                "sandbox_workspace_write.network",
                Some((4, 1))
            ),
            (file.as_deref(), "profiles.p.model_verbosty", Some((6, 1))),
            (file.as_deref(), "features.teleport", Some((8, 1))),
        ]
    );
}

#[test]
fn unknown_profile_names_the_known_ones() {
    let fx = Fixture::new();
    fx.write_user("[profiles.b]\nmodel = \"x\"\n[profiles.a]\nmodel = \"y\"\n");
    let overrides = ConfigOverrides {
        profile: Some("x".into()),
        ..Default::default()
    };
    let err = fx.build_with(&[], overrides).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown profile \"x\"; known profiles: a, b"
    );
}

#[test]
fn unknown_profile_without_any_profiles_says_so() {
    let fx = Fixture::new();
    fx.write_user("profile = \"work\"\n");
    let err = fx.build().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown profile \"work\"; no profiles are defined; add a [profiles.<name>] table \
         to config.toml"
    );
}

#[test]
fn unknown_provider_names_the_known_ones_and_where_it_was_set() {
    let fx = Fixture::new();
    fx.write_user("model = \"m\"\nmodel_provider = \"azure\"\n");
    let err = fx.build().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:2:1: unknown model provider \"azure\"; known providers: lmstudio, local, ollama, openai",
            fx.user_path().display()
        )
    );
}

#[test]
fn missing_instructions_file_is_an_error_naming_it() {
    let fx = Fixture::new();
    fx.write_user("experimental_instructions_file = \"prompt.md\"\n");
    let err = fx.build().unwrap_err();
    let missing = fx.home.join("prompt.md");
    match &err {
        ConfigError::InstructionsFile { path, location, .. } => {
            assert_eq!(path, &missing);
            assert_eq!(location.source, ConfigSource::UserFile(fx.user_path()));
        }
        other => panic!("unexpected error: {other}"),
    }
    assert!(
        err.to_string().contains(&format!(
            "could not read experimental_instructions_file {}",
            missing.display()
        )),
        "{err}"
    );
}

#[test]
fn invalid_mcp_server_is_located() {
    let fx = Fixture::new();
    fx.write_user("model = \"m\"\n[mcp_servers.both]\ncommand = \"a\"\nurl = \"http://x\"\n");
    assert_eq!(
        fx.build().unwrap_err().to_string(),
        format!(
            "{}:2:14: mcp_servers.both: set either `command` (stdio) or `url` (HTTP), not both",
            fx.user_path().display()
        )
    );
}

#[test]
fn unreadable_user_file_is_an_error_naming_it() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.user_path()).unwrap();
    let err = fx.build().unwrap_err();
    assert!(matches!(&err, ConfigError::Read { path, .. } if *path == fx.user_path()));
}
