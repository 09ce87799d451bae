//! Keeps the crate map in DESIGN.md true: who may depend on whom, read from `cargo metadata`.

use serde_json::Value;
use std::collections::BTreeMap;

/// (crate, dependencies it must not have as normal dependencies). Names without the
/// `osprey-` prefix are internal crates.
const FORBIDDEN: &[(&str, &[&str])] = &[
    ("protocol", &["tokio", "reqwest", "*internal*"]),
    (
        "config",
        &["core", "exec", "tui", "app-server", "mcp-server", "cli"],
    ),
    ("model", &["tools", "sandboxing", "core"]),
    ("local-model", &["core"]),
    ("tools", &["core", "process"]),
    ("apply-patch", &["*internal*"]),
    ("execpolicy", &["tokio", "core", "sandboxing"]),
    ("shell", &["core"]),
    ("sandboxing", &["core", "model"]),
    ("process", &["core", "protocol"]),
    ("rollout", &["core"]),
    ("mcp", &["core"]),
    (
        "core",
        &[
            "clap",
            "ratatui",
            "crossterm",
            "exec",
            "tui",
            "app-server",
            "mcp-server",
            "cli",
        ],
    ),
    ("exec", &["tui", "app-server"]),
    ("tui", &["app-server", "exec"]),
    ("app-server-protocol", &["core", "tokio"]),
    ("app-server", &["tui", "exec"]),
    ("mcp-server", &["tui"]),
    ("exec-server", &["core"]),
];

/// Internal crates `linux-sandbox` may use: it runs between fork and exec, so it stays tiny.
const LINUX_SANDBOX_ALLOWED: &[&str] = &["osprey-sandboxing", "osprey-process", "osprey-protocol"];

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    #[expect(clippy::disallowed_methods, reason = "the test reads cargo metadata")]
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn crate_dependencies_follow_the_design_map() {
    let meta = metadata();
    let packages = meta["packages"].as_array().unwrap();
    let mut normal_deps: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pkg in packages {
        let name = pkg["name"].as_str().unwrap().to_string();
        let deps = pkg["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null())
            .map(|d| d["name"].as_str().unwrap().to_string())
            .collect();
        normal_deps.insert(name, deps);
    }
    let mut problems = Vec::new();
    for (krate, forbidden) in FORBIDDEN {
        let Some(deps) = normal_deps.get(&format!("osprey-{krate}")) else {
            continue;
        };
        for dep in deps {
            let internal = dep.starts_with("osprey-");
            let short = dep.trim_start_matches("osprey-");
            let banned = forbidden.iter().any(|f| {
                if internal {
                    *f == "*internal*" || *f == short
                } else {
                    *f == dep
                }
            });
            if banned {
                problems.push(format!("osprey-{krate} must not depend on {dep}"));
            }
        }
    }
    if let Some(deps) = normal_deps.get("osprey-linux-sandbox") {
        for dep in deps.iter().filter(|d| d.starts_with("osprey-")) {
            if !LINUX_SANDBOX_ALLOWED.contains(&dep.as_str()) {
                problems.push(format!("osprey-linux-sandbox must not depend on {dep}"));
            }
        }
    }
    for (name, deps) in &normal_deps {
        if deps.iter().any(|d| d == "osprey-cli") {
            problems.push(format!("{name} depends on osprey-cli; nothing may"));
        }
        if deps.iter().any(|d| d == "osprey-test-support") {
            problems.push(format!(
                "{name} has osprey-test-support as a normal dependency"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the crate map is broken:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_crate_uses_the_workspace_lints_and_opens_with_an_essay() {
    let meta = metadata();
    let mut problems = Vec::new();
    for pkg in meta["packages"].as_array().unwrap() {
        let manifest = std::path::PathBuf::from(pkg["manifest_path"].as_str().unwrap());
        let text = std::fs::read_to_string(&manifest).unwrap();
        if !text.contains("[lints]") || !text.contains("workspace = true") {
            problems.push(format!(
                "{}: no `[lints] workspace = true`",
                manifest.display()
            ));
        }
        for target in pkg["targets"].as_array().unwrap() {
            let kinds: Vec<&str> = target["kind"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            if kinds.contains(&"lib") {
                let src = std::fs::read_to_string(target["src_path"].as_str().unwrap()).unwrap();
                if !src.trim_start().starts_with("//!") {
                    problems.push(format!("{}: lib.rs has no `//!` header", pkg["name"]));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
