//! The UI's own settings: the `[tui]` table of the user's `config.toml`
//! (`$OSPREY_HOME/config.toml`, by default `~/.osprey/config.toml`). The app server does
//! not report that table, so the UI reads it itself; profiles and project layers do not
//! change it.
//!
//! ```toml
//! hide_agent_reasoning = true  # top level, as in Codex: no reasoning summaries
//!
//! [history]
//! persistence = "none"       # do not save sent messages in history.jsonl
//!
//! [tui]
//! alternate_screen = true    # full-screen view, as `--alt-screen`
//! share_shell_output = true  # every !cmd reaches the model, as !!cmd does
//! theme = "light"            # "auto" (COLORFGBG, else the terminal), "light" or "dark"
//! ```

use std::collections::HashMap;
use std::path::PathBuf;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TuiSettings {
    pub alternate_screen: bool,
    pub share_shell_output: bool,
    pub hide_agent_reasoning: bool,
    /// `[history] persistence = "none"`: sent messages are not saved in history.jsonl.
    pub no_history: bool,
    /// `[tui] theme`: the background the colours are chosen for.
    pub theme: crate::render::theme::ThemeSetting,
}

/// Where the user's config.toml is, from the environment the server was given.
pub fn config_path(env: &HashMap<String, String>) -> Option<PathBuf> {
    if let Some(home) = env.get("OSPREY_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(home).join("config.toml"));
    }
    env.get("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".osprey").join("config.toml"))
}

/// The settings, or why the `[tui]` table could not be used (the UI then runs with the
/// defaults and shows the reason as a warning).
pub fn load(env: &HashMap<String, String>) -> Result<TuiSettings, String> {
    let Some(path) = config_path(env) else {
        return Ok(TuiSettings::default());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TuiSettings::default()),
        Err(e) => return Err(format!("could not read {}: {e}", path.display())),
    };
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn parse(text: &str) -> Result<TuiSettings, String> {
    let value: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| e.message().to_owned())?;
    let hide_agent_reasoning = match value.get("hide_agent_reasoning") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(other) => {
            return Err(format!(
                "hide_agent_reasoning must be true or false, not {other}"
            ));
        }
    };
    let no_history = value
        .get("history")
        .and_then(|h| h.get("persistence"))
        .and_then(toml::Value::as_str)
        == Some("none");
    let Some(tui) = value.get("tui") else {
        return Ok(TuiSettings {
            hide_agent_reasoning,
            no_history,
            ..TuiSettings::default()
        });
    };
    let Some(tui) = tui.as_table() else {
        return Err("`tui` must be a table ([tui])".to_owned());
    };
    let flag = |key: &str| match tui.get(key) {
        None => Ok(false),
        Some(toml::Value::Boolean(b)) => Ok(*b),
        Some(other) => Err(format!(
            "[tui] {key} must be true or false, not {other}; the UI uses false"
        )),
    };
    use crate::render::theme::ThemeSetting;
    let theme = match tui.get("theme") {
        None => ThemeSetting::Auto,
        Some(toml::Value::String(s)) if s == "auto" => ThemeSetting::Auto,
        Some(toml::Value::String(s)) if s == "light" => ThemeSetting::Light,
        Some(toml::Value::String(s)) if s == "dark" => ThemeSetting::Dark,
        Some(other) => {
            return Err(format!(
                "[tui] theme must be \"auto\", \"light\" or \"dark\", not {other}"
            ));
        }
    };
    Ok(TuiSettings {
        alternate_screen: flag("alternate_screen")?,
        share_shell_output: flag("share_shell_output")?,
        hide_agent_reasoning,
        no_history,
        theme,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_tui_table_is_read_and_a_wrong_type_is_reported() {
        assert_eq!(parse("model = \"x\"\n"), Ok(TuiSettings::default()));
        assert_eq!(
            parse("[tui]\nalternate_screen = true\nshare_shell_output = true\n"),
            Ok(TuiSettings {
                alternate_screen: true,
                share_shell_output: true,
                hide_agent_reasoning: false,
                no_history: false,
                theme: crate::render::theme::ThemeSetting::Auto,
            })
        );
        assert_eq!(
            parse("[tui]\ntheme = \"light\"\n").map(|s| s.theme),
            Ok(crate::render::theme::ThemeSetting::Light)
        );
        let err = parse("[tui]\ntheme = \"solarized\"\n").unwrap_err();
        assert!(err.contains("[tui] theme must be"), "{err}");
        assert_eq!(
            parse("[history]\npersistence = \"none\"\n").map(|s| s.no_history),
            Ok(true)
        );
        assert_eq!(
            parse("hide_agent_reasoning = true\n").map(|s| s.hide_agent_reasoning),
            Ok(true)
        );
        let err = parse("[tui]\nalternate_screen = \"yes\"\n").unwrap_err();
        assert!(
            err.contains("[tui] alternate_screen must be true or false"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_config_file_means_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let env = HashMap::from([("OSPREY_HOME".to_owned(), dir.path().display().to_string())]);
        assert_eq!(load(&env), Ok(TuiSettings::default()));
        std::fs::write(
            dir.path().join("config.toml"),
            "[tui]\nalternate_screen = true\n",
        )
        .unwrap();
        assert_eq!(load(&env).map(|s| s.alternate_screen), Ok(true));
    }
}
