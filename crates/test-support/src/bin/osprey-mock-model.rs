//! `osprey-mock-model`: serves a JSON mock-model script over HTTP for benchmark scripts.
//!
//! ```text
//! osprey-mock-model --script FILE.json [--port N] [--repeat] [--route NICKNAME=FILE.json]…
//! ```
//!
//! Prints `listening on http://127.0.0.1:PORT/v1` on stdout once it accepts requests, then
//! serves until interrupted (Ctrl-C or SIGTERM). On exit it lists any failures on stderr
//! and exits 1 if there were some. With `--repeat` the script starts over when it runs
//! out and requests are not kept in memory, so it can serve a scenario any number of times.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use osprey_test_support::MockModelServer;
use osprey_test_support::ServerOptions;
use osprey_test_support::load_script;

const USAGE: &str = "usage: osprey-mock-model --script FILE.json [--port N] [--repeat] [--route NICKNAME=FILE.json]...\n\
\n\
Serves a scripted model (Responses API and Chat Completions) on 127.0.0.1.\n\
  --script FILE           JSON array of mock responses, one per request\n\
  --port N                port to listen on (default: any free port)\n\
  --repeat                start the script over when it runs out\n\
  --route NICKNAME=FILE   answer the sub-agent with this nickname from its own script;\n\
                          NICKNAME * answers every other sub-agent, each thread from the start\n\
Scripts may name spawned agents as {{agent:NICKNAME}} or {{agent:#N}} (N-th spawned, from 0).\n";

struct Args {
    script: PathBuf,
    port: u16,
    repeat: bool,
    routes: Vec<(String, PathBuf)>,
}

enum Parsed {
    Run(Args),
    Help,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Parsed, String> {
    let mut script = None;
    let mut port = 0u16;
    let mut repeat = false;
    let mut routes = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--script" => {
                script = Some(PathBuf::from(
                    args.next().ok_or("--script needs a file path")?,
                ));
            }
            "--port" => {
                let value = args.next().ok_or("--port needs a number")?;
                port = value
                    .parse()
                    .map_err(|_| format!("--port needs a number from 0 to 65535, got {value:?}"))?;
            }
            "--repeat" => repeat = true,
            "--route" => {
                let value = args.next().ok_or("--route needs NICKNAME=FILE.json")?;
                let (name, file) = value
                    .split_once('=')
                    .ok_or_else(|| format!("--route needs NICKNAME=FILE.json, got {value:?}"))?;
                routes.push((name.to_owned(), PathBuf::from(file)));
            }
            "-h" | "--help" => return Ok(Parsed::Help),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let script = script.ok_or("missing --script FILE.json")?;
    Ok(Parsed::Run(Args {
        script,
        port,
        repeat,
        routes,
    }))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Parsed::Run(args)) => args,
        Ok(Parsed::Help) => {
            let _ = std::io::stdout().write_all(USAGE.as_bytes());
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "osprey-mock-model: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "osprey-mock-model: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<ExitCode, String> {
    let script = load_script(&args.script).map_err(|err| err.to_string())?;
    let options = ServerOptions {
        port: args.port,
        repeat: args.repeat,
        capture: !args.repeat,
        ..ServerOptions::default()
    };
    let server = MockModelServer::start_with(script, options)
        .await
        .map_err(|err| err.to_string())?;
    for (name, file) in &args.routes {
        let script = load_script(file).map_err(|err| err.to_string())?;
        server.add_route(name, script);
    }
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on {}", server.base_url())
        .and_then(|()| stdout.flush())
        .map_err(|err| format!("could not write to stdout: {err}"))?;

    wait_for_stop_signal().await?;

    let failures = server.failures();
    server.shutdown().await;
    if failures.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let mut stderr = std::io::stderr();
    let _ = writeln!(stderr, "osprey-mock-model: {} failure(s):", failures.len());
    for failure in failures {
        let _ = writeln!(stderr, "- {failure}");
    }
    Ok(ExitCode::FAILURE)
}

#[cfg(unix)]
async fn wait_for_stop_signal() -> Result<(), String> {
    use tokio::signal::unix::SignalKind;
    use tokio::signal::unix::signal;
    let mut terminate = signal(SignalKind::terminate())
        .map_err(|err| format!("could not listen for SIGTERM: {err}"))?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => {
            result.map_err(|err| format!("could not listen for Ctrl-C: {err}"))
        }
        _ = terminate.recv() => Ok(()),
    }
}

#[cfg(not(unix))]
async fn wait_for_stop_signal() -> Result<(), String> {
    tokio::signal::ctrl_c()
        .await
        .map_err(|err| format!("could not listen for Ctrl-C: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Parsed, String> {
        parse_args(args.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn parses_all_flags() {
        let Ok(Parsed::Run(args)) = parse(&["--script", "s.json", "--port", "8080", "--repeat"])
        else {
            panic!("expected a run");
        };
        assert_eq!(args.script, PathBuf::from("s.json"));
        assert_eq!(args.port, 8080);
        assert!(args.repeat);
    }

    #[test]
    fn rejects_missing_script_and_bad_port() {
        assert!(parse(&[]).err().unwrap().contains("--script"));
        assert!(
            parse(&["--script", "s", "--port", "x"])
                .err()
                .unwrap()
                .contains("0 to 65535")
        );
        assert!(parse(&["--bogus"]).err().unwrap().contains("--bogus"));
    }
}
