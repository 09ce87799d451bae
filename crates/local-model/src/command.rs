//! `osprey model …` without its command line: what `fetch` and `serve` do. The `cli` crate
//! parses the arguments into a [`ModelCommand`].

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use crate::fetch::{FetchDisplay, FetchError, fetch_model, model_path};
use crate::serve::{ServeError, serve};
use crate::{LocalModelAdapter, LocalModelError, LocalModelOptions, PromptStyle};

/// One `osprey model` operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelCommand {
    /// Download the model into `$OSPREY_HOME/models` and verify its SHA-256.
    Fetch,
    /// Serve the model on 127.0.0.1 as an OpenAI-compatible API (`/v1/chat/completions` and
    /// `/v1/responses`, streaming) until the process is stopped.
    Serve {
        /// Port to listen on.
        port: u16,
        /// Context window in tokens (prompt + answer).
        context_tokens: u32,
        /// Sample freely instead of constraining tool calls with a grammar.
        unconstrained: bool,
    },
}

/// Why an `osprey model` command failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelCommandError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    Load(#[from] LocalModelError),
    #[error(transparent)]
    Serve(#[from] ServeError),
    #[error("could not write to the terminal: {0}")]
    Output(#[from] std::io::Error),
    #[error("loading the model was interrupted: {0}")]
    Join(String),
}

/// Runs `osprey model <command>` for the home `home`, writing progress to `out`.
pub async fn run_model_command(
    command: ModelCommand,
    home: &Path,
    out: &mut (dyn Write + Send),
) -> Result<(), ModelCommandError> {
    match command {
        ModelCommand::Fetch => {
            // Progress (a bar on a terminal) goes to stderr; stdout gets only the path.
            let mut display = FetchDisplay::stderr();
            let path = fetch_model(home, &mut |p| display.show(p)).await?;
            drop(display);
            writeln!(out, "{}", path.display())?;
            Ok(())
        }
        ModelCommand::Serve {
            port,
            context_tokens,
            unconstrained,
        } => {
            let path = model_path(home);
            let options = LocalModelOptions {
                context_tokens,
                constrained: !unconstrained,
                prompt_style: PromptStyle::Client,
                loop_guard: false,
                ..LocalModelOptions::for_home(home)
            };
            let adapter =
                tokio::task::spawn_blocking(move || LocalModelAdapter::new(&path, options))
                    .await
                    .map_err(|e| ModelCommandError::Join(e.to_string()))??;
            // One line per request on stderr (RUST_LOG overrides the level).
            let filter = tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("osprey_local_model=info"));
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_writer(std::io::stderr)
                .with_ansi(false)
                .try_init();
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
            writeln!(
                out,
                "serving the local model on http://{addr}/v1 (Ctrl-C to stop)"
            )?;
            out.flush()?;
            serve(addr, Arc::new(adapter)).await?;
            Ok(())
        }
    }
}
