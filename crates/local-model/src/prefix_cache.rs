//! Where the KV state of the fixed prompt prefix is saved, and how it is keyed.
//!
//! The prefix is the system message (our instructions + the tool list), rendered by the
//! chat template. Its KV state depends on the exact tokens and on the model file, so the
//! file name is a hash of both (plus a format version): a different tool set, different
//! instructions, or different weights simply miss and compute a new entry. On load, the
//! tokens stored in the file are compared with the expected prefix tokens as well, so a
//! collision or a corrupted entry is ignored rather than trusted.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Bump when the saved state's meaning changes (context parameters, rendering).
const FORMAT: &str = "osprey-prefix-v1";

/// The cache file for `prefix_text` under `dir`, for the model at `model_path` of
/// `model_size` bytes.
pub fn entry_path(dir: &Path, model_path: &Path, model_size: u64, prefix_text: &str) -> PathBuf {
    let mut hasher = Sha256::new();
    hasher.update(FORMAT.as_bytes());
    hasher.update([0]);
    hasher.update(
        model_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
            .as_bytes(),
    );
    hasher.update([0]);
    hasher.update(model_size.to_le_bytes());
    hasher.update(prefix_text.as_bytes());
    let digest = hasher.finalize();
    let name: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    dir.join(format!("prefix-{name}.kv"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_changes_with_prefix_and_model() {
        let dir = Path::new("/h/models");
        let m = Path::new("/h/models/q.gguf");
        let a = entry_path(dir, m, 10, "system A");
        assert_eq!(a, entry_path(dir, m, 10, "system A"));
        assert_ne!(a, entry_path(dir, m, 10, "system B"));
        assert_ne!(a, entry_path(dir, m, 11, "system A"));
        assert_ne!(
            a,
            entry_path(dir, Path::new("/h/models/r.gguf"), 10, "system A")
        );
        assert!(a.starts_with(dir));
    }
}
