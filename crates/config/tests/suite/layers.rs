//! Layer precedence: default < file < profile < trusted project < -c < options.

use osprey_config::{ConfigOverrides, ConfigSource, DEFAULT_MODEL, ShellToolType};
use osprey_protocol::{AskForApproval, SandboxPolicy};
use pretty_assertions::assert_eq;

use super::fixture::Fixture;

#[test]
fn defaults_apply_when_nothing_is_configured() {
    let fx = Fixture::new();
    let loaded = fx.build().unwrap();
    let c = loaded.config;
    assert_eq!(c.model, DEFAULT_MODEL);
    assert_eq!(c.model_provider_id, "openai");
    assert_eq!(c.model_provider.id, "openai");
    assert_eq!(c.approval_policy(), AskForApproval::OnRequest);
    assert_eq!(c.sandbox_policy(), &SandboxPolicy::ReadOnly);
    assert_eq!(c.osprey_home, fx.home);
    assert_eq!(c.cwd, fx.cwd);
    assert_eq!(c.project_root, fx.repo);
    assert_eq!(c.project_doc_max_bytes, 32768);
    assert_eq!(c.oss_provider, "ollama");
    assert!(c.profile.is_none());
    assert!(!c.active_project_trusted);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn user_file_beats_default() {
    let fx = Fixture::new();
    fx.write_user("model = \"from-file\"\napproval_policy = \"never\"\n");
    let c = fx.build().unwrap().config;
    assert_eq!(c.model, "from-file");
    assert_eq!(c.approval_policy(), AskForApproval::Never);
}

#[test]
fn profile_beats_user_file() {
    let fx = Fixture::new();
    fx.write_user(
        "model = \"from-file\"\nprofile = \"fast\"\n\
         [profiles.fast]\nmodel = \"from-profile\"\n\
         [profiles.slow]\nmodel = \"slow\"\n",
    );
    let c = fx.build().unwrap().config;
    assert_eq!(c.model, "from-profile");
    assert_eq!(c.profile.as_deref(), Some("fast"));

    // --profile beats the `profile` key
    let overrides = ConfigOverrides {
        profile: Some("slow".into()),
        ..Default::default()
    };
    let c = fx.build_with(&[], overrides).unwrap().config;
    assert_eq!(c.model, "slow");
    assert_eq!(c.profile.as_deref(), Some("slow"));
}

#[test]
fn trusted_project_file_beats_profile() {
    let fx = Fixture::new();
    fx.write_user(&format!(
        "profile = \"p\"\n[profiles.p]\nmodel = \"from-profile\"\n{}",
        fx.trust_entry()
    ));
    fx.write_project("model = \"from-project\"\n");
    let loaded = fx.build().unwrap();
    assert!(loaded.config.active_project_trusted);
    assert_eq!(loaded.config.model, "from-project");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn cli_override_beats_trusted_project_file() {
    let fx = Fixture::new();
    fx.write_user(&fx.trust_entry());
    fx.write_project("model = \"from-project\"\n");
    let c = fx
        .build_with(&["model=from-cli"], ConfigOverrides::default())
        .unwrap()
        .config;
    assert_eq!(c.model, "from-cli");
}

#[test]
fn later_cli_override_beats_earlier() {
    let fx = Fixture::new();
    let c = fx
        .build_with(&["model=first", "model=second"], ConfigOverrides::default())
        .unwrap()
        .config;
    assert_eq!(c.model, "second");
}

#[test]
fn typed_option_beats_cli_override() {
    let fx = Fixture::new();
    let overrides = ConfigOverrides {
        model: Some("from-flag".into()),
        approval_policy: Some(AskForApproval::Untrusted),
        ..Default::default()
    };
    let c = fx
        .build_with(&["model=from-cli", "approval_policy=never"], overrides)
        .unwrap()
        .config;
    assert_eq!(c.model, "from-flag");
    assert_eq!(c.approval_policy(), AskForApproval::Untrusted);
}

#[test]
fn untrusted_project_file_is_ignored_with_a_warning() {
    let fx = Fixture::new();
    fx.write_user("model = \"from-file\"\n");
    fx.write_project("model = \"from-project\"\nsandbox_mode = \"danger-full-access\"\n");
    let loaded = fx.build().unwrap();
    assert_eq!(loaded.config.model, "from-file");
    assert_eq!(loaded.config.sandbox_policy(), &SandboxPolicy::ReadOnly);
    assert!(!loaded.config.active_project_trusted);
    assert_eq!(loaded.warnings.len(), 1);
    assert_eq!(
        loaded.warnings[0].location.source,
        ConfigSource::ProjectFile(fx.project_path())
    );
    assert!(loaded.warnings[0].message.contains("not trusted"));
}

#[test]
fn explicitly_untrusted_project_is_not_loaded() {
    let fx = Fixture::new();
    fx.write_user(&fx.trust_entry().replace("\"trusted\"", "\"untrusted\""));
    fx.write_project("model = \"from-project\"\n");
    let c = fx.build().unwrap().config;
    assert_eq!(c.model, DEFAULT_MODEL);
    assert!(!c.active_project_trusted);
}

#[test]
fn project_file_cannot_trust_itself() {
    let fx = Fixture::new();
    fx.write_project(&format!("model = \"from-project\"\n{}", fx.trust_entry()));
    let c = fx.build().unwrap().config;
    assert_eq!(c.model, DEFAULT_MODEL);
}

#[test]
fn tables_merge_deeply_across_layers() {
    let fx = Fixture::new();
    fx.write_user(&format!(
        "[tools]\nshell_type = \"shell\"\nread_file = false\n{}",
        fx.trust_entry()
    ));
    fx.write_project("[tools]\nread_file = true\n");
    let c = fx.build().unwrap().config;
    assert_eq!(c.tools.shell, Some(ShellToolType::Shell));
    assert!(c.tools.read_file);
}

#[test]
fn profile_defined_in_trusted_project_and_selected_by_cli() {
    let fx = Fixture::new();
    fx.write_user(&fx.trust_entry());
    fx.write_project("[profiles.local]\nmodel = \"local-model\"\n");
    let c = fx
        .build_with(&["profile=local"], ConfigOverrides::default())
        .unwrap()
        .config;
    assert_eq!(c.model, "local-model");
    assert_eq!(c.profile.as_deref(), Some("local"));
}

#[test]
fn cwd_option_is_resolved_against_the_process_cwd() {
    let fx = Fixture::new();
    let overrides = ConfigOverrides {
        cwd: Some("..".into()),
        ..Default::default()
    };
    let c = fx.build_with(&[], overrides).unwrap().config;
    assert_eq!(c.cwd, fx.repo);
    assert_eq!(c.project_root, fx.repo);
}
