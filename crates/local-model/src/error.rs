//! [`LocalModelError`]: why the embedded model could not start.

use std::path::PathBuf;

/// Why the embedded model could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalModelError {
    #[error(
        "the local model is not installed at {}; run `osprey model fetch` to download it \
         (about 1.1 GB)",
        path.display()
    )]
    Missing { path: PathBuf },
    #[error(
        "this CPU lacks {missing}, which the embedded model's llama.cpp build uses; run a \
         hosted model instead (set an API key), or serve a model elsewhere and point an \
         OpenAI-compatible provider at it"
    )]
    UnsupportedCpu { missing: String },
    #[error("could not initialise llama.cpp: {reason}")]
    Backend { reason: String },
    #[error(
        "could not load the model file {}: {reason}; delete it and run `osprey model fetch` again",
        path.display()
    )]
    Load { path: PathBuf, reason: String },
    #[error("could not create the model's context: {reason}; try a smaller context size")]
    Context { reason: String },
    #[error("the model file {} carries no usable chat template: {reason}", path.display())]
    NoChatTemplate { path: PathBuf, reason: String },
    #[error("could not start the inference thread: {reason}")]
    Thread { reason: String },
    #[error("the inference thread stopped unexpectedly")]
    EngineGone,
}
