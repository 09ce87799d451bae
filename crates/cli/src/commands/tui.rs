//! `osprey` without a subcommand: the interactive UI (`osprey-tui`) on an in-process app
//! server set up here as `osprey app-server` sets up its own.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

/// `osprey resume [SESSION_ID | --last] [OPTIONS] [PROMPT]` and the same for `osprey fork`.
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// The session's id, as `osprey sessions list` and the exit line show it; without it
    /// (and without --last) a picker lists this directory's sessions.
    #[arg(id = "resume_session_id", value_name = "SESSION_ID")]
    pub session_id: Option<String>,
    /// The newest session recorded in the current directory.
    #[arg(
        id = "resume_last",
        long = "last",
        conflicts_with = "resume_session_id"
    )]
    pub last: bool,
    #[command(flatten)]
    pub tui: osprey_tui::TuiCli,
}

impl ResumeArgs {
    /// The UI's command line: these flags, the thread to open, and whether to fork it.
    pub fn into_tui(self, fork: bool) -> osprey_tui::TuiCli {
        let target = match (self.session_id, self.last) {
            (Some(id), _) => osprey_tui::ResumeTarget::Id(id),
            (None, true) => osprey_tui::ResumeTarget::Last,
            (None, false) => osprey_tui::ResumeTarget::Picker,
        };
        osprey_tui::TuiCli {
            resume: Some(target),
            fork,
            ..self.tui
        }
    }
}

pub async fn run(
    cli: osprey_tui::TuiCli,
    version: &str,
    providers: Vec<Arc<dyn osprey_core::ModelProviderFactory>>,
) -> i32 {
    let env: HashMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let process_cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "Error: cannot read the current directory: {e}"
            );
            return 1;
        }
    };
    let options = osprey_app_server::ServerOptions {
        version: version.to_owned(),
        env,
        process_cwd,
        osprey_exe: std::env::current_exe().ok(),
        providers,
        originator: "osprey_tui".to_owned(),
        source: osprey_rollout::SessionSource::Cli,
    };
    osprey_tui::run_main(cli, options).await
}
