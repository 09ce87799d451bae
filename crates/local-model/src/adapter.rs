//! [`LocalModelAdapter`]: the embedded model behind `osprey-model`'s [`WireAdapter`].

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;
use osprey_model::{ModelError, Prompt, ResponseStream, WireAdapter};
use tokio::sync::mpsc;

use crate::engine::{self, Job, LocalModelOptions};
use crate::error::LocalModelError;
use crate::stats::Stats;

/// The embedded model. Loading happens in [`LocalModelAdapter::new`] (a few seconds);
/// requests then run one at a time on a dedicated thread. Dropping the adapter stops the
/// thread once the request in progress (if any) notices its stream was dropped.
pub struct LocalModelAdapter {
    jobs: Mutex<std::sync::mpsc::Sender<Job>>,
    model_path: PathBuf,
}

impl std::fmt::Debug for LocalModelAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModelAdapter")
            .field("model_path", &self.model_path)
            .finish_non_exhaustive()
    }
}

impl LocalModelAdapter {
    /// Loads the GGUF at `model_path` (blocking: call from a blocking context or accept a
    /// few seconds' stall). Fails with a clear message if the file is missing, the CPU
    /// lacks the instructions the build uses, or llama.cpp rejects the file.
    pub fn new(model_path: &Path, options: LocalModelOptions) -> Result<Self, LocalModelError> {
        if !model_path.is_file() {
            return Err(LocalModelError::Missing {
                path: model_path.to_path_buf(),
            });
        }
        engine::check_cpu()?;
        let (jobs_tx, jobs_rx) = std::sync::mpsc::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let path = model_path.to_path_buf();
        std::thread::Builder::new()
            .name("osprey-local-model".to_string())
            .spawn(move || engine::run(path, options, ready_tx, jobs_rx))
            .map_err(|err| LocalModelError::Thread {
                reason: err.to_string(),
            })?;
        ready_rx.recv().map_err(|_| LocalModelError::EngineGone)??;
        Ok(Self {
            jobs: Mutex::new(jobs_tx),
            model_path: model_path.to_path_buf(),
        })
    }

    /// The model file this adapter loaded.
    pub fn model_path(&self) -> &Path {
        &self.model_path
    }

    /// Like [`WireAdapter::stream`], also returning the request's measurements once it ends.
    pub fn stream_with_stats(
        &self,
        prompt: &Prompt,
    ) -> Result<(ResponseStream, std::sync::mpsc::Receiver<Stats>), ModelError> {
        let (stats_tx, stats_rx) = std::sync::mpsc::channel();
        let stream = self.submit(prompt, Some(stats_tx))?;
        Ok((stream, stats_rx))
    }

    fn submit(
        &self,
        prompt: &Prompt,
        stats: Option<std::sync::mpsc::Sender<Stats>>,
    ) -> Result<ResponseStream, ModelError> {
        let (tx, rx) = mpsc::channel(256);
        let job = Job {
            prompt: prompt.clone(),
            events: tx,
            stats,
        };
        let jobs = self.jobs.lock().map_err(|_| gone())?;
        jobs.send(job).map_err(|_| gone())?;
        Ok(ResponseStream::new(rx))
    }
}

fn gone() -> ModelError {
    ModelError::Config {
        provider: engine::PROVIDER.to_string(),
        reason: "the local model's inference thread has stopped; restart Osprey".to_string(),
    }
}

#[async_trait]
impl WireAdapter for LocalModelAdapter {
    async fn stream(&self, prompt: &Prompt) -> Result<ResponseStream, ModelError> {
        self.submit(prompt, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_model_says_how_to_fetch_it() {
        let home = tempfile::tempdir().unwrap();
        let err = crate::open(home.path()).unwrap_err();
        assert!(matches!(err, LocalModelError::Missing { .. }));
        let message = err.to_string();
        assert!(message.contains("osprey model fetch"), "{message}");
        assert!(
            message.contains("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"),
            "{message}"
        );
    }
}
