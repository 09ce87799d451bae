//! docs/config.md stays true: its full example loads cleanly and its tables list every
//! environment variable and feature.

use osprey_config::{ENV_VARS, FEATURES};

use super::fixture::Fixture;

fn docs() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/config.md");
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("could not read {path}: {err}"))
}

#[test]
fn full_example_loads_without_warnings() {
    let docs = docs();
    let section = docs.split("## A complete example").nth(1).unwrap();
    let example = section
        .split("```toml\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .unwrap();
    let fx = Fixture::new();
    fx.write_user(example);
    let loaded = fx.build().unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = loaded.config;
    assert_eq!(c.profile.as_deref(), Some("work"));
    assert_eq!(c.mcp_servers.len(), 2);
    assert_eq!(c.model_providers["gateway"].name, "Company gateway");
}

#[test]
fn every_env_var_and_feature_is_documented() {
    let docs = docs();
    for var in ENV_VARS {
        assert!(
            docs.contains(&format!("`{}`", var.name)),
            "{} is not in docs/config.md",
            var.name
        );
    }
    for feature in FEATURES {
        assert!(
            docs.contains(&format!("| `{}` |", feature.name)),
            "feature {} is not in docs/config.md",
            feature.name
        );
    }
}
