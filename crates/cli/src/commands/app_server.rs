//! `osprey app-server`: serves Codex's app-server v2 protocol (`osprey-app-server`), and
//! `generate-json-schema` / `generate-ts` write the protocol's schema.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `osprey app-server`.
#[derive(Debug, clap::Args)]
pub struct AppServerCli {
    /// Where to serve: stdio:// (one JSON message per line), ws://IP:PORT or unix://PATH.
    #[arg(long, value_name = "URL", default_value = "stdio://")]
    pub listen: String,
    /// File holding the capability token WebSocket clients must send
    /// (`Authorization: Bearer <token>`); required to listen beyond loopback.
    #[arg(long, value_name = "FILE")]
    pub ws_token_file: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<AppServerCommand>,
}

#[derive(Debug, clap::Subcommand)]
pub enum AppServerCommand {
    /// Write the protocol's JSON Schema files into a folder.
    GenerateJsonSchema {
        #[arg(long, short = 'o', value_name = "DIR")]
        out: PathBuf,
    },
    /// Write the protocol's TypeScript types into a folder.
    GenerateTs {
        #[arg(long, short = 'o', value_name = "DIR")]
        out: PathBuf,
    },
}

pub async fn run(
    cli: AppServerCli,
    version: &str,
    providers: Vec<Arc<dyn osprey_core::ModelProviderFactory>>,
) -> i32 {
    let (out, files) = match cli.command {
        None => {
            return osprey_app_server::run_main(osprey_app_server::RunOptions {
                version: version.to_owned(),
                providers,
                listen: cli.listen,
                ws_token_file: cli.ws_token_file,
            })
            .await;
        }
        Some(AppServerCommand::GenerateJsonSchema { out }) => {
            (out, osprey_app_server::schema::json_schema_files())
        }
        Some(AppServerCommand::GenerateTs { out }) => {
            (out, osprey_app_server::schema::typescript_files())
        }
    };
    match osprey_app_server::schema::write_files(&out, &files) {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "Error: could not write the schema: {e}");
            1
        }
    }
}
