//! Managed requirements: refuse user values, adjust only defaults.

use osprey_config::{ConfigError, ConfigOverrides, ConfigSource};
use osprey_protocol::{AskForApproval, SandboxMode, SandboxPolicy};
use pretty_assertions::assert_eq;

use super::fixture::Fixture;

const STRICT: &str = "allowed_approval_policies = [\"untrusted\", \"on-request\"]\n\
                      allowed_sandbox_modes = [\"read-only\", \"workspace-write\"]\n";

fn assert_refused(
    err: &ConfigError,
    key: &str,
    value: &str,
    source: &ConfigSource,
    file: &std::path::Path,
) {
    match err {
        ConfigError::NotAllowed(violation) => {
            assert_eq!(violation.key, key);
            assert_eq!(violation.value, value);
            assert_eq!(&violation.location.source, source);
            assert_eq!(violation.requirements_file, file);
        }
        other => panic!("expected NotAllowed, got {other}"),
    }
    assert!(
        err.to_string().contains(&file.display().to_string()),
        "{err}"
    );
}

#[test]
fn refuses_a_value_from_the_user_file() {
    let mut fx = Fixture::new();
    let req = fx.write_requirements(STRICT);
    fx.write_user("approval_policy = \"never\"\n");
    let err = fx.build().unwrap_err();
    assert_refused(
        &err,
        "approval_policy",
        "never",
        &ConfigSource::UserFile(fx.user_path()),
        &req,
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}:1:1: approval_policy = \"never\" is not allowed by {}: \
             allowed_approval_policies = [\"untrusted\", \"on-request\"]; choose one of those \
             values (requirements are set by your administrator)",
            fx.user_path().display(),
            req.display()
        )
    );
}

#[test]
fn refuses_a_value_from_a_profile() {
    let mut fx = Fixture::new();
    let req = fx.write_requirements(STRICT);
    fx.write_user("profile = \"yolo\"\n[profiles.yolo]\nsandbox_mode = \"danger-full-access\"\n");
    let err = fx.build().unwrap_err();
    let source = ConfigSource::Profile {
        name: "yolo".into(),
        file: Some(fx.user_path()),
    };
    assert_refused(&err, "sandbox_mode", "danger-full-access", &source, &req);
    assert!(
        err.to_string().starts_with(&format!(
            "{}:3:1 (profile `yolo`)",
            fx.user_path().display()
        )),
        "{err}"
    );
}

#[test]
fn refuses_a_value_from_a_cli_override() {
    let mut fx = Fixture::new();
    let req = fx.write_requirements(STRICT);
    let err = fx
        .build_with(
            &["sandbox_mode=danger-full-access"],
            ConfigOverrides::default(),
        )
        .unwrap_err();
    assert_refused(
        &err,
        "sandbox_mode",
        "danger-full-access",
        &ConfigSource::CliOverride("sandbox_mode=danger-full-access".into()),
        &req,
    );
}

#[test]
fn refuses_a_value_from_an_option() {
    let mut fx = Fixture::new();
    let req = fx.write_requirements(STRICT);
    let overrides = ConfigOverrides {
        approval_policy: Some(AskForApproval::Never),
        ..Default::default()
    };
    let err = fx.build_with(&[], overrides).unwrap_err();
    assert_refused(&err, "approval_policy", "never", &ConfigSource::Flag, &req);
}

#[test]
fn allowed_values_pass() {
    let mut fx = Fixture::new();
    fx.write_requirements(STRICT);
    fx.write_user("approval_policy = \"untrusted\"\nsandbox_mode = \"workspace-write\"\n");
    let loaded = fx.build().unwrap();
    assert_eq!(loaded.config.approval_policy(), AskForApproval::Untrusted);
    assert_eq!(
        loaded.config.sandbox_policy().mode(),
        SandboxMode::WorkspaceWrite
    );
    assert!(loaded.warnings.is_empty());
}

#[test]
fn disallowed_default_falls_back_to_first_allowed_with_a_warning() {
    let mut fx = Fixture::new();
    fx.write_requirements(
        "allowed_approval_policies = [\"never\", \"untrusted\"]\n\
         allowed_sandbox_modes = [\"workspace-write\"]\n",
    );
    let loaded = fx.build().unwrap();
    assert_eq!(loaded.config.approval_policy(), AskForApproval::Never);
    assert_eq!(
        loaded.config.sandbox_policy(),
        &SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![],
            network_access: false,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: false,
        }
    );
    let keys: Vec<&str> = loaded.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(keys, vec!["approval_policy", "sandbox_mode"]);
    assert!(loaded.warnings[0].message.contains("using \"never\""));
    assert_eq!(loaded.warnings[0].location.source, ConfigSource::Default);
}

#[test]
fn runtime_changes_are_checked_too() {
    let mut fx = Fixture::new();
    fx.write_requirements(STRICT);
    let mut c = fx.build().unwrap().config;
    let err = c
        .set_sandbox_policy(SandboxPolicy::DangerFullAccess)
        .unwrap_err();
    assert!(matches!(err, ConfigError::NotAllowed(_)));
    assert_eq!(c.sandbox_policy(), &SandboxPolicy::ReadOnly);
    c.set_approval_policy(AskForApproval::Untrusted).unwrap();
    assert_eq!(c.approval_policy(), AskForApproval::Untrusted);
}

#[test]
fn invalid_requirements_file_is_located() {
    let mut fx = Fixture::new();
    let req = fx.write_requirements("allowed_sandbox_modes = [\"everything\"]\n");
    let text = fx.build().unwrap_err().to_string();
    assert!(
        text.starts_with(&format!("{}:1:26:", req.display())),
        "{text}"
    );
}
