//! `osprey model fetch | serve`: the command line; `osprey-local-model` fetches and serves.

use std::io::Write;

use osprey_local_model::ModelCommand;

/// Manage and serve the embedded local model.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct ModelCli {
    #[command(subcommand)]
    pub command: ModelSubcommand,
}

#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum ModelSubcommand {
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

impl ModelSubcommand {
    /// The plain operation these arguments describe.
    pub fn to_command(&self) -> ModelCommand {
        match *self {
            ModelSubcommand::Fetch => ModelCommand::Fetch,
            ModelSubcommand::Serve {
                port,
                context_tokens,
                unconstrained,
            } => ModelCommand::Serve {
                port,
                context_tokens,
                unconstrained,
            },
        }
    }
}

/// Runs `osprey model …` for the Osprey home; progress goes to stderr.
pub async fn run(cli: ModelCli) -> i32 {
    let home = match super::osprey_home() {
        Ok(home) => home,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "Error: {message}");
            return 1;
        }
    };
    let mut out = std::io::stderr();
    match osprey_local_model::run_model_command(cli.command.to_command(), &home, &mut out).await {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "Error: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use pretty_assertions::assert_eq;

    #[derive(Parser)]
    struct Top {
        #[command(subcommand)]
        cmd: Sub,
    }
    #[derive(clap::Subcommand)]
    enum Sub {
        Model(ModelCli),
    }

    fn parse(args: &[&str]) -> Result<ModelCommand, clap::Error> {
        let Sub::Model(cli) = Top::try_parse_from(args)?.cmd;
        Ok(cli.command.to_command())
    }

    #[test]
    fn parses_fetch_and_serve() {
        assert_eq!(
            parse(&["osprey", "model", "serve", "--port", "9000"]).unwrap(),
            ModelCommand::Serve {
                port: 9000,
                context_tokens: 32768,
                unconstrained: false
            }
        );
        assert_eq!(
            parse(&[
                "osprey",
                "model",
                "serve",
                "--context-tokens",
                "4096",
                "--unconstrained"
            ])
            .unwrap(),
            ModelCommand::Serve {
                port: 11435,
                context_tokens: 4096,
                unconstrained: true
            }
        );
        let parsed = parse(&["osprey", "model", "serve", "--context-tokens", "100"]);
        assert!(parsed.is_err(), "a context below 512 tokens is refused");
        assert_eq!(
            parse(&["osprey", "model", "fetch"]).unwrap(),
            ModelCommand::Fetch
        );
    }
}
