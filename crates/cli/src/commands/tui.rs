//! `osprey` without a subcommand: the interactive UI (`osprey-tui`) on an in-process app
//! server set up here as `osprey app-server` sets up its own.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

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
    };
    osprey_tui::run_main(cli, options).await
}
