//! Keeps the crate map in `docs/architecture.md` true: who may depend on whom, read from
//! `cargo metadata`'s resolved dependency graph.
//!
//! Most rules are transitive: `core` must not *reach* clap or the embedded model through any
//! chain of normal or build dependencies, because whatever a crate reaches is compiled (and
//! linked) with it. Dev-dependencies do not count.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// How far a rule looks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Reach {
    /// Only the crate's own `[dependencies]`.
    Direct,
    /// Anything compiled into the crate: dependencies of dependencies, and so on.
    Transitive,
}

use Reach::{Direct, Transitive};

/// Stands for every `osprey-*` crate in a rule.
const INTERNAL: &str = "*internal*";

/// The front ends: crates that parse command lines or draw terminals. No library reaches them.
const FRONT_ENDS: &[&str] = &["exec", "tui", "app-server", "mcp-server", "cli"];

/// (crate, how far, what it must not depend on). Names without the `osprey-` prefix are
/// internal crates; `*internal*` is all of them; anything else is a crates.io package.
///
/// Keep in step with docs/architecture.md's crate map.
const RULES: &[(&str, Reach, &[&str])] = &[
    (
        "protocol",
        Transitive,
        &["tokio", "reqwest", "clap", INTERNAL],
    ),
    ("exec-events", Transitive, &["tokio", "clap", INTERNAL]),
    ("config", Transitive, &["core", "clap", "*front-ends*"]),
    (
        "model",
        Transitive,
        &["tools", "sandboxing", "core", "clap", "*front-ends*"],
    ),
    ("local-model", Transitive, &["core", "clap", "*front-ends*"]),
    (
        "tools",
        Transitive,
        &["core", "process", "clap", "*front-ends*"],
    ),
    ("apply-patch", Transitive, &["clap", INTERNAL]),
    (
        "execpolicy",
        Transitive,
        &["tokio", "core", "sandboxing", "clap", "*front-ends*"],
    ),
    ("shell", Transitive, &["core", "clap", "*front-ends*"]),
    (
        "sandboxing",
        Transitive,
        &["core", "model", "clap", "*front-ends*"],
    ),
    (
        "process",
        Transitive,
        &["core", "protocol", "clap", "*front-ends*"],
    ),
    ("rollout", Transitive, &["core", "clap", "*front-ends*"]),
    ("mcp", Transitive, &["core", "clap", "*front-ends*"]),
    ("linux-sandbox", Transitive, &["clap"]),
    (
        "core",
        Transitive,
        &[
            "clap",
            "ratatui",
            "crossterm",
            "local-model",
            "llama-cpp-2",
            "*front-ends*",
        ],
    ),
    ("exec", Direct, &["tui", "app-server"]),
    // The TUI reaches the agent only through an in-process app server, like an editor.
    ("tui", Direct, &["core", "exec"]),
    ("app-server-protocol", Transitive, &["core", "tokio"]),
    ("app-server", Direct, &["tui", "exec"]),
    ("mcp-server", Direct, &["tui"]),
    // A library (server, client, protocol) that core links for remote environments; its
    // command line lives in `cli` (and in the optional Windows binary behind `cli`).
    ("exec-server", Transitive, &["core", "clap", "*front-ends*"]),
];

/// Internal crates `linux-sandbox` may use at all: it runs between fork and exec, so it stays
/// tiny.
const LINUX_SANDBOX_ALLOWED: &[&str] = &["osprey-sandboxing", "osprey-process", "osprey-protocol"];

#[expect(clippy::disallowed_methods, reason = "the test asks cargo")]
fn cargo(args: &[&str]) -> std::process::Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    std::process::Command::new(cargo)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs")
}

/// The resolved metadata for this host (other platforms' packages may not be downloaded,
/// and `--offline` must not fetch them).
fn metadata() -> Value {
    let version = String::from_utf8(cargo(&["-vV"]).stdout).unwrap();
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("`cargo -vV` names the host");
    let out = cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--offline",
        "--filter-platform",
        host,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The resolved graph: package name → names of its normal and build dependencies on this
/// host, for every package in the build, workspace or not.
struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
    workspace: BTreeSet<String>,
}

impl Graph {
    fn load() -> Self {
        let meta = metadata();
        let name_of: BTreeMap<&str, &str> = meta["packages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
            .collect();
        let workspace = meta["workspace_members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| name_of[id.as_str().unwrap()].to_owned())
            .collect();
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for node in meta["resolve"]["nodes"].as_array().unwrap() {
            let from = name_of[node["id"].as_str().unwrap()].to_owned();
            let deps = edges.entry(from).or_default();
            for dep in node["deps"].as_array().unwrap() {
                let counts = dep["dep_kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["kind"].is_null() || k["kind"] == "build");
                if counts {
                    deps.insert(name_of[dep["pkg"].as_str().unwrap()].to_owned());
                }
            }
        }
        Self { edges, workspace }
    }

    fn direct(&self, krate: &str) -> BTreeSet<String> {
        self.edges.get(krate).cloned().unwrap_or_default()
    }

    /// Everything `krate` reaches, each with one chain that leads there (for the message).
    fn reachable(&self, krate: &str) -> BTreeMap<String, Vec<String>> {
        let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut queue = vec![vec![krate.to_owned()]];
        while let Some(chain) = queue.pop() {
            let last = chain.last().unwrap();
            for dep in self.direct(last) {
                if seen.contains_key(&dep) || dep == krate {
                    continue;
                }
                let mut next = chain.clone();
                next.push(dep.clone());
                seen.insert(dep, next.clone());
                queue.push(next);
            }
        }
        seen
    }
}

/// Whether `dep` (a package name) is what the rule entry `banned` names.
fn is_banned(banned: &str, dep: &str) -> bool {
    let internal = dep.strip_prefix("osprey-");
    match banned {
        INTERNAL => internal.is_some(),
        "*front-ends*" => internal.is_some_and(|short| FRONT_ENDS.contains(&short)),
        _ => match internal {
            Some(short) => short == banned,
            None => dep == banned,
        },
    }
}

#[test]
fn crate_dependencies_follow_the_architecture_map() {
    let graph = Graph::load();
    let mut problems = Vec::new();
    let mut checked = 0;
    for (krate, reach, banned) in RULES {
        let name = format!("osprey-{krate}");
        if !graph.workspace.contains(&name) {
            continue;
        }
        checked += 1;
        let found: BTreeMap<String, Vec<String>> = match reach {
            Direct => graph
                .direct(&name)
                .into_iter()
                .map(|d| (d.clone(), vec![name.clone(), d]))
                .collect(),
            Transitive => graph.reachable(&name),
        };
        for (dep, chain) in &found {
            if banned.iter().any(|b| is_banned(b, dep)) {
                problems.push(format!(
                    "{name} must not depend on {dep} ({reach:?}): {}",
                    chain.join(" -> ")
                ));
            }
        }
    }
    assert!(
        checked >= 15,
        "only {checked} rules matched a workspace crate"
    );
    for dep in graph
        .direct("osprey-linux-sandbox")
        .iter()
        .filter(|d| d.starts_with("osprey-"))
    {
        if !LINUX_SANDBOX_ALLOWED.contains(&dep.as_str()) {
            problems.push(format!("osprey-linux-sandbox must not depend on {dep}"));
        }
    }
    for name in &graph.workspace {
        let deps = graph.direct(name);
        if deps.contains("osprey-cli") {
            problems.push(format!("{name} depends on osprey-cli; nothing may"));
        }
        if deps.contains("osprey-test-support") {
            problems.push(format!(
                "{name} has osprey-test-support as a normal dependency"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the crate map (docs/architecture.md) is broken:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_rules_catch_a_transitive_dependency() {
    // The check itself: a made-up chain a -> b -> clap is caught for a, not only for b.
    let graph = Graph {
        edges: [
            ("osprey-a".to_owned(), ["osprey-b".to_owned()].into()),
            ("osprey-b".to_owned(), ["clap".to_owned()].into()),
        ]
        .into_iter()
        .collect(),
        workspace: ["osprey-a".to_owned(), "osprey-b".to_owned()].into(),
    };
    let reached = graph.reachable("osprey-a");
    assert_eq!(reached["clap"], ["osprey-a", "osprey-b", "clap"]);
    assert!(is_banned("clap", "clap"));
    assert!(is_banned("core", "osprey-core"));
    assert!(!is_banned("core", "osprey-core-extra"));
    assert!(is_banned(INTERNAL, "osprey-protocol"));
    assert!(is_banned("*front-ends*", "osprey-exec"));
    assert!(!is_banned("*front-ends*", "osprey-exec-events"));
}

#[test]
fn every_crate_uses_the_workspace_lints_and_opens_with_an_essay() {
    let meta = metadata();
    let workspace: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let mut problems = Vec::new();
    for pkg in meta["packages"].as_array().unwrap() {
        if !workspace.contains(pkg["id"].as_str().unwrap()) {
            continue;
        }
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
