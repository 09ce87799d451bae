//! Changing one key of a `config.toml` while keeping the user's comments and layout (for
//! commands such as `osprey mcp add` or trusting a project).
//!
//! The file is edited with `toml_edit`, then written to a temporary sibling and renamed over
//! the original, so a crash never leaves half a file.

use std::path::Path;

use toml_edit::{DocumentMut, Item, Table};

use crate::error::{ConfigError, ConfigSource, Location, line_col};
use crate::layers::read_optional;
use crate::overrides::parse_key_path;

/// Sets `dotted_key` (TOML key syntax: `a.b`, `projects."/x".trust_level`) to `item` in the
/// file at `path`, creating the file, its directory and missing tables as needed.
pub fn set_value(path: &Path, dotted_key: &str, item: Item) -> Result<(), ConfigError> {
    let keys = keys(path, dotted_key)?;
    let mut doc = read_document(path)?;
    let Some((last, parents)) = keys.split_last() else {
        return Err(bad_key(path, dotted_key));
    };
    let mut table: &mut Table = doc.as_table_mut();
    for (depth, segment) in parents.iter().enumerate() {
        let entry = table.entry(segment).or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        });
        if let Item::Value(toml_edit::Value::InlineTable(inline)) = entry {
            // Promote an inline table to a regular one so the new key can go anywhere.
            let promoted = std::mem::take(inline).into_table();
            *entry = Item::Table(promoted);
        }
        table = entry.as_table_mut().ok_or_else(|| ConfigError::Invalid {
            location: Location::new(ConfigSource::UserFile(path.to_owned())),
            message: format!(
                "cannot set `{dotted_key}`: `{}` is not a table",
                keys[..=depth].join(".")
            ),
        })?;
    }
    // Assign in place so the key keeps its comments; a replaced value keeps its own decor
    // (such as a trailing `# comment`).
    match (table.get_mut(last), item) {
        (Some(Item::Value(old)), Item::Value(mut new)) => {
            *new.decor_mut() = old.decor().clone();
            *old = new;
        }
        (Some(slot), item) => *slot = item,
        (None, item) => {
            table.insert(last, item);
        }
    }
    write_atomically(path, &doc.to_string())
}

/// Removes `dotted_key` from the file; returns whether it was there.
pub fn remove_value(path: &Path, dotted_key: &str) -> Result<bool, ConfigError> {
    let keys = keys(path, dotted_key)?;
    let mut doc = read_document(path)?;
    let Some((last, parents)) = keys.split_last() else {
        return Err(bad_key(path, dotted_key));
    };
    let mut table: &mut dyn toml_edit::TableLike = doc.as_table_mut();
    for segment in parents {
        match table.get_mut(segment).and_then(Item::as_table_like_mut) {
            Some(next) => table = next,
            None => return Ok(false),
        }
    }
    if table.remove(last).is_none() {
        return Ok(false);
    }
    write_atomically(path, &doc.to_string())?;
    Ok(true)
}

fn keys(path: &Path, dotted_key: &str) -> Result<Vec<String>, ConfigError> {
    parse_key_path(dotted_key).ok_or_else(|| bad_key(path, dotted_key))
}

fn bad_key(path: &Path, dotted_key: &str) -> ConfigError {
    ConfigError::Invalid {
        location: Location::new(ConfigSource::UserFile(path.to_owned())),
        message: format!("`{dotted_key}` is not a valid TOML key"),
    }
}

fn read_document(path: &Path) -> Result<DocumentMut, ConfigError> {
    let text = read_optional(path)?.unwrap_or_default();
    text.parse::<DocumentMut>()
        .map_err(|err| ConfigError::Invalid {
            location: Location::at(
                ConfigSource::UserFile(path.to_owned()),
                err.span().map(|s| line_col(&text, s.start)),
            ),
            message: err.message().trim_end().to_owned(),
        })
}

fn write_atomically(path: &Path, text: &str) -> Result<(), ConfigError> {
    let io_err = |source| ConfigError::Write {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io_err)?;
    }
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    std::fs::write(&tmp, text).map_err(io_err)?;
    std::fs::rename(&tmp, path).map_err(|err| {
        let _ = std::fs::remove_file(&tmp);
        io_err(err)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use toml_edit::{Array, value};

    #[test]
    fn keeps_comments_and_adds_tables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "# my settings\nmodel = \"o3\" # fast\n").unwrap();
        set_value(&path, "mcp_servers.docs.command", value("docs-server")).unwrap();
        let mut args = Array::new();
        args.push("--stdio");
        set_value(&path, "mcp_servers.docs.args", value(args)).unwrap();
        set_value(&path, "model", value("gpt-5")).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# my settings\nmodel = \"gpt-5\" # fast\n\n[mcp_servers.docs]\n\
             command = \"docs-server\"\nargs = [\"--stdio\"]\n"
        );
        assert!(remove_value(&path, "mcp_servers.docs.args").unwrap());
        assert!(!remove_value(&path, "mcp_servers.nope.args").unwrap());
    }

    #[test]
    fn quoted_keys_and_new_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new/config.toml");
        set_value(&path, "projects.\"/a/b\".trust_level", value("trusted")).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[projects.\"/a/b\"]\ntrust_level = \"trusted\"\n"
        );
    }

    #[test]
    fn refuses_to_descend_into_a_scalar() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "model = \"o3\"\n").unwrap();
        let err = set_value(&path, "model.name", value("x")).unwrap_err();
        assert!(err.to_string().contains("`model` is not a table"), "{err}");
        std::fs::write(&path, "model = \n").unwrap();
        let err = set_value(&path, "a", value("x")).unwrap_err();
        assert!(err.to_string().contains("config.toml:1:"), "{err}");
    }
}
