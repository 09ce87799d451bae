//! Which model `osprey exec` runs when no API key is set: the embedded model only when
//! nothing chooses a model; a user who named a model or a provider gets the missing-key
//! error naming the variable, never a silent 1.1 GB download.

use super::common::*;
use osprey_test_support::*;

/// Runs `osprey exec` with `config_toml` as the whole config and without `OPENAI_API_KEY`.
/// `--no-fetch` keeps a regression from starting the real download; the assertions check
/// that the local model was not chosen at all.
fn exec_without_key(config_toml: &str, extra: &[&str]) -> std::process::Output {
    let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
    std::fs::write(home.config_path(), config_toml).unwrap();
    let repo = temp_git_repo();
    let mut args = vec!["exec", "--no-fetch"];
    args.extend_from_slice(extra);
    args.push("hi");
    let mut cmd = assert_cmd::Command::cargo_bin("osprey").unwrap();
    cmd.current_dir(repo.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("OSPREY_HOME", home.path())
        .env("NO_COLOR", "1")
        .args(&args)
        .write_stdin(Vec::new())
        .timeout(std::time::Duration::from_secs(60));
    cmd.output().unwrap()
}

fn assert_missing_openai_key(case: &str, out: &std::process::Output) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{case}: {err}");
    assert!(
        err.contains("needs an API key, but the environment variable OPENAI_API_KEY is not set"),
        "{case}: {err}"
    );
    assert!(
        !err.contains("local model"),
        "{case}: the local model was chosen: {err}"
    );
}

#[test]
fn a_configured_model_without_a_key_names_the_missing_variable() {
    assert_missing_openai_key(
        "model in config.toml",
        &exec_without_key("model = \"gpt-5.1\"\n", &[]),
    );
    assert_missing_openai_key(
        "-m on the command line",
        &exec_without_key("", &["-m", "gpt-5.1"]),
    );
    assert_missing_openai_key(
        "-c model=…",
        &exec_without_key("", &["-c", "model=\"gpt-5.1\""]),
    );
    assert_missing_openai_key(
        "model_provider in config.toml",
        &exec_without_key("model_provider = \"openai\"\n", &[]),
    );
    assert_missing_openai_key(
        "a profile's model",
        &exec_without_key(
            "profile = \"hosted\"\n[profiles.hosted]\nmodel = \"gpt-5.1\"\n",
            &[],
        ),
    );
}

#[test]
fn with_nothing_configured_and_no_key_the_embedded_model_is_chosen() {
    let out = exec_without_key("", &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the embedded local model runs"), "{err}");
    assert!(err.contains("the local model is not downloaded"), "{err}");
}
