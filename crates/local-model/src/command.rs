//! `osprey model …`: the subcommands, so the binary only parses and dispatches.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use crate::fetch::{FetchDisplay, FetchError, fetch_model, model_path};
use crate::serve::{ServeError, serve};
use crate::{LocalModelAdapter, LocalModelError, LocalModelOptions, PromptStyle};

/// Manage and serve the embedded local model.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct ModelCli {
    #[command(subcommand)]
    pub command: ModelCommand,
}

#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum ModelCommand {
    /// Download the local model (Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, about 1.1 GB)
    /// into $OSPREY_HOME/models and verify its SHA-256.
    Fetch,
    /// Serve the local model on 127.0.0.1 as an OpenAI-compatible API
    /// (/v1/chat/completions and /v1/responses, streaming).
    ///
    /// The server is a plain model endpoint: it keeps the client's own instructions, does
    /// not stop repeated calls (that is the client's job), and constrains tool calls to the
    /// offered tools with a grammar.
    Serve {
        /// Port to listen on.
        #[arg(long, default_value_t = 11435)]
        port: u16,
        /// Context window in tokens (prompt + answer). Harnesses with long instructions
        /// need more than the agent's 8192; each 1024 tokens cost about 28 MiB of memory.
        #[arg(long, default_value_t = 32768, value_parser = clap::value_parser!(u32).range(512..=32768))]
        context_tokens: u32,
        /// Sample freely instead of constraining tool calls with a grammar.
        #[arg(long)]
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
    cli: ModelCli,
    home: &Path,
    out: &mut (dyn Write + Send),
) -> Result<(), ModelCommandError> {
    match cli.command {
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Top {
        #[command(subcommand)]
        cmd: Sub,
    }
    #[derive(clap::Subcommand)]
    enum Sub {
        Model(ModelCli),
    }

    #[test]
    fn parses_fetch_and_serve() {
        let Sub::Model(cli) = Top::parse_from(["osprey", "model", "serve", "--port", "9000"]).cmd;
        assert_eq!(
            cli.command,
            ModelCommand::Serve {
                port: 9000,
                context_tokens: 32768,
                unconstrained: false
            }
        );
        let parsed = Top::try_parse_from(["osprey", "model", "serve", "--context-tokens", "100"]);
        assert!(parsed.is_err(), "a context below 512 tokens is refused");
        let Sub::Model(cli) = Top::parse_from(["osprey", "model", "fetch"]).cmd;
        assert_eq!(cli.command, ModelCommand::Fetch);
    }
}
