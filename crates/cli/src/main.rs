//! The `osprey` binary: argument parsing and dispatch to the front ends, nothing else.
//!
//! Dispatch happens in two steps. First on the program name and a hidden first argument, for
//! the entry points Osprey invokes its own binary through: `apply_patch` / `applypatch` and
//! `--osprey-run-as-apply-patch` (the patch virtual command, also used inside the sandbox).
//! The sandbox helper (`osprey-linux-sandbox`) is entered the same way.
//! Without a subcommand (`osprey`, `osprey "prompt"`) the interactive terminal UI opens
//! (`osprey-tui`). Otherwise dispatch is on clap subcommands: `exec`, `resume`, `fork`, `app-server`, `exec-server`, `mcp`, `mcp-server`, `model`, `sessions`, `sandbox`,
//! `execpolicy check`, `completion`. Each subcommand's clap structs live in [`commands`] (or,
//! for `exec`, in the `osprey-exec` front end); the library crates behind them take plain
//! values.

mod commands;
mod entry;
mod logging;

use clap::{CommandFactory, Parser, Subcommand};
use std::ffi::OsString;
use std::process::ExitCode;

const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug, Parser)]
#[command(
    name = "osprey",
    version = VERSION,
    about = "Osprey: a coding agent for your terminal",
    propagate_version = true,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Without a subcommand: the interactive UI's options and first prompt.
    #[command(flatten)]
    tui: osprey_tui::TuiCli,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one task non-interactively.
    #[command(visible_alias = "e")]
    Exec(Box<osprey_exec::ExecCli>),
    /// Manage MCP servers in config.toml.
    Mcp(commands::mcp::McpCli),
    /// Serve Osprey as an MCP server over stdio (for other agents).
    McpServer,
    /// Serve Codex's app-server protocol (JSON-RPC) for editors and other clients.
    AppServer(commands::app_server::AppServerCli),
    /// Run this machine's processes and file operations for an agent elsewhere (Codex's
    /// exec-server protocol over stdio or WebSocket).
    ExecServer(commands::exec_server::ExecServerCli),
    /// The embedded local model: `fetch` it, or `serve` it as an OpenAI-compatible server.
    Model(commands::model::ModelCli),
    /// Continue a recorded session in the interactive UI.
    Resume(commands::tui::ResumeArgs),
    /// Continue a copy of a recorded session (the original stays as it was).
    Fork(commands::tui::ResumeArgs),
    /// Recorded sessions.
    Sessions {
        #[command(subcommand)]
        command: commands::sessions::SessionsCommand,
    },
    /// Run a command inside the sandbox and pass its exit code through.
    Sandbox(commands::sandbox::SandboxArgs),
    /// Work with exec-policy rules files.
    Execpolicy {
        #[command(subcommand)]
        command: ExecpolicyCommand,
    },
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completion(commands::completion::CompletionArgs),
}

#[derive(Debug, Subcommand)]
enum ExecpolicyCommand {
    /// Evaluate a command against rules files and print the decision as JSON.
    #[command(disable_help_flag = true)]
    Check {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if let Some(code) = entry::dispatch_special(&args) {
        return exit_code(code);
    }
    let cli = Cli::parse_from(args);
    let code = match cli.command {
        None => entry::block_on(commands::tui::run(
            cli.tui,
            VERSION,
            vec![osprey_local_model::LocalModelProvider::shared()],
        )),
        Some(command) => run_command(command),
    };
    exit_code(code)
}

fn run_command(command: Command) -> i32 {
    match command {
        Command::Resume(args) => entry::block_on(commands::tui::run(
            args.into_tui(false),
            VERSION,
            vec![osprey_local_model::LocalModelProvider::shared()],
        )),
        Command::Fork(args) => entry::block_on(commands::tui::run(
            args.into_tui(true),
            VERSION,
            vec![osprey_local_model::LocalModelProvider::shared()],
        )),
        Command::Exec(exec) => {
            // Its stderr is the human transcript: logs only when asked for.
            if std::env::var_os("RUST_LOG").is_some() {
                logging::to_stderr();
            }
            entry::block_on(osprey_exec::run_main(*exec, VERSION))
        }
        Command::Execpolicy {
            command: ExecpolicyCommand::Check { args },
        } => commands::execpolicy::run(&args, &mut std::io::stdout(), &mut std::io::stderr()),
        Command::Sandbox(args) => entry::block_on(commands::sandbox::run(args)),
        Command::Sessions { command } => commands::sessions::run(command),
        Command::Mcp(cli) => commands::mcp::run(cli),
        Command::Model(cli) => entry::block_on(commands::model::run(cli)),
        Command::Completion(args) => commands::completion::run(&args, &mut Cli::command()),
        Command::AppServer(cli) => {
            logging::to_stderr();
            entry::block_on(commands::app_server::run(
                cli,
                VERSION,
                vec![osprey_local_model::LocalModelProvider::shared()],
            ))
        }
        Command::ExecServer(cli) => {
            logging::to_stderr();
            entry::block_on(commands::exec_server::run(cli, VERSION))
        }
        Command::McpServer => {
            logging::to_stderr();
            entry::block_on(osprey_mcp_server::run_main(
                VERSION,
                vec![osprey_local_model::LocalModelProvider::shared()],
            ))
        }
    }
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap_complete::Shell;

    #[test]
    fn every_shell_gets_a_script_that_knows_the_subcommands() {
        for shell in [
            Shell::Bash,
            Shell::Zsh,
            Shell::Fish,
            Shell::PowerShell,
            Shell::Elvish,
        ] {
            let script = commands::completion::script(shell, &mut Cli::command());
            let script = String::from_utf8(script).unwrap();
            for word in [
                "exec",
                "execpolicy",
                "mcp",
                "model",
                "sandbox",
                "completion",
            ] {
                assert!(script.contains(word), "{shell}: no `{word}` in\n{script}");
            }
            // Flags of a subcommand are offered too.
            assert!(script.contains("skip-git-repo-check"), "{shell}");
        }
    }

    #[test]
    fn the_command_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
