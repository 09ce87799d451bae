use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use osprey_local_model::{LocalModelAdapter, LocalModelOptions, ModelVocab};

/// The model file, or `None` (with a note) when the tests that need it should skip.
pub fn model_file() -> Option<PathBuf> {
    match std::env::var_os("OSPREY_LOCAL_MODEL") {
        Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ => {
            assert!(
                std::env::var("OSPREY_REQUIRE_LOCAL_MODEL").as_deref() != Ok("1"),
                "OSPREY_REQUIRE_LOCAL_MODEL=1 but OSPREY_LOCAL_MODEL is unset; run \
                 `eval \"$(bash scripts/install-test-deps.sh)\"` first"
            );
            eprintln!("skipped: OSPREY_LOCAL_MODEL is unset (the local model is not fetched)");
            None
        }
    }
}

pub fn vocab() -> Option<&'static ModelVocab> {
    static VOCAB: OnceLock<ModelVocab> = OnceLock::new();
    let path = model_file()?;
    Some(VOCAB.get_or_init(|| ModelVocab::load(&path).unwrap()))
}

/// One loaded model shared by the tests of this binary (loading costs seconds and RAM),
/// with its prefix cache in `dir`.
pub fn adapter_with_cache(dir: &std::path::Path) -> Option<Arc<LocalModelAdapter>> {
    let path = model_file()?;
    let options = LocalModelOptions {
        prefix_cache_dir: Some(dir.to_path_buf()),
        ..LocalModelOptions::default()
    };
    Some(Arc::new(LocalModelAdapter::new(&path, options).unwrap()))
}
