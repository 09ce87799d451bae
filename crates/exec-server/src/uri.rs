//! `file://` URIs, the exec server's way of naming paths on its own machine.

use std::path::{Path, PathBuf};

use url::Url;

/// The path a `file://` URI names. A plain path or another scheme is an error whose text
/// says which (Codex: `invalid URI: relative URL without a base`).
pub fn to_path(uri: &str) -> Result<PathBuf, String> {
    let url = Url::parse(uri).map_err(|e| format!("invalid URI: {e}"))?;
    if url.scheme() != "file" {
        return Err(format!(
            "invalid URI: `{uri}` is not a file:// URI (the exec server only serves paths on its own machine)"
        ));
    }
    url.to_file_path()
        .map_err(|()| format!("invalid URI: `{uri}` does not name a local absolute path"))
}

/// The `file://` URI of an absolute path (spaces and other reserved characters escaped).
pub fn from_path(path: &Path) -> String {
    match Url::from_file_path(path) {
        Ok(url) => url.to_string(),
        // Only relative paths fail; the server never produces one, so keep it readable.
        Err(()) => format!("file://{}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn round_trips_and_escapes() {
        let path = Path::new("/tmp/a b/c#d");
        let uri = from_path(path);
        assert_eq!(uri, "file:///tmp/a%20b/c%23d");
        assert_eq!(to_path(&uri).unwrap(), path);
    }

    /// Windows (run under Wine by hand: see docs/windows.md): drive letters either way.
    #[cfg(windows)]
    #[test]
    fn drive_letters_round_trip() {
        let path = Path::new(r"C:\Users\a b\x#y.txt");
        let uri = from_path(path);
        assert_eq!(uri, "file:///C:/Users/a%20b/x%23y.txt");
        assert_eq!(to_path(&uri).unwrap(), path);
        assert_eq!(to_path("file:///z:/tmp/x").unwrap(), Path::new(r"z:\tmp\x"));
        assert!(
            to_path("file:///tmp/x").is_err(),
            "no drive: not absolute on Windows"
        );
    }

    #[test]
    fn plain_paths_and_other_schemes_are_refused() {
        assert_eq!(
            to_path("/tmp/x").unwrap_err(),
            "invalid URI: relative URL without a base"
        );
        assert!(
            to_path("http://example.com/x")
                .unwrap_err()
                .contains("not a file:// URI")
        );
    }
}
