//! `osprey completion SHELL`: a script for each shell, naming the subcommands.

use assert_cmd::Command;

fn completion(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("osprey")
        .expect("osprey binary is built")
        .arg("completion")
        .args(args)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .expect("osprey runs")
}

#[test]
fn each_shell_gets_a_script_that_names_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = completion(&[shell]);
        assert!(out.status.success(), "{shell}: {out:?}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.len() > 1000, "{shell}: a short script:\n{script}");
        for word in ["exec", "mcp", "sandbox", "execpolicy", "completion"] {
            assert!(script.contains(word), "{shell}: no `{word}`");
        }
    }
    // The default is bash, as with `codex completion`.
    let default = completion(&[]);
    assert_eq!(default.stdout, completion(&["bash"]).stdout);
    assert!(
        String::from_utf8_lossy(&default.stdout).contains("complete -F"),
        "not a bash script"
    );
}

#[test]
fn an_unknown_shell_is_a_usage_error_naming_the_choices() {
    let out = completion(&["tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bash") && err.contains("powershell"), "{err}");
}
