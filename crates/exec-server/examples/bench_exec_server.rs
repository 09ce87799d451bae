//! Added latency of running `true` through an exec server (stdio and WebSocket on
//! loopback) against starting it locally, and `fs/readFile` throughput over 1 000 small
//! files — for `osprey exec-server` and, given `--codex BIN`, Codex's exec server in the
//! same run. Run with `bash bench/exec_server.sh`.
//!
//! Usage: bench_exec_server --osprey BIN [--codex BIN] [--runs N] [--files N]

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use osprey_exec_server::client::{ConnectOptions, ExecServerClient, ProcessEvent};
use osprey_exec_server::protocol::method;
use osprey_exec_server::uri;
use osprey_process::{ExecRequest, StreamEvent, StreamingOptions, StreamingProcess};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

struct Args {
    osprey: PathBuf,
    codex: Option<PathBuf>,
    runs: usize,
    files: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        osprey: PathBuf::new(),
        codex: None,
        runs: 200,
        files: 1000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--osprey" => args.osprey = PathBuf::from(value),
            "--codex" => args.codex = Some(PathBuf::from(value)),
            "--runs" => args.runs = value.parse().map_err(|_| "--runs takes a number")?,
            "--files" => args.files = value.parse().map_err(|_| "--files takes a number")?,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if args.osprey.as_os_str().is_empty() {
        return Err("--osprey BIN is required".to_owned());
    }
    Ok(args)
}

fn env() -> HashMap<String, String> {
    ["PATH", "HOME", "TMPDIR"]
        .iter()
        .filter_map(|k| Some(((*k).to_owned(), std::env::var(k).ok()?)))
        .collect()
}

fn median(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let p50 = samples.get(samples.len() / 2).copied().unwrap_or_default();
    let p90 = samples
        .get(samples.len() * 9 / 10)
        .copied()
        .unwrap_or_default();
    (ms(p50), ms(p90))
}

async fn local_true(cwd: &Path) -> Duration {
    let request = ExecRequest::new("true", cwd).envs(env());
    let start = Instant::now();
    let Ok((_process, mut events)) = StreamingProcess::spawn(request, StreamingOptions::default())
    else {
        return Duration::ZERO;
    };
    while let Some(event) = events.recv().await {
        if event == StreamEvent::Closed {
            break;
        }
    }
    start.elapsed()
}

async fn remote_true(client: &ExecServerClient, id: &str, cwd: &Path) -> Duration {
    let start = Instant::now();
    let mut events = client.watch_process(id);
    let params = json!({"processId": id, "argv": ["true"], "cwd": uri::from_path(cwd),
        "env": env(), "tty": false, "arg0": null});
    if client
        .call::<Value>(method::PROCESS_START, params)
        .await
        .is_err()
    {
        return Duration::ZERO;
    }
    while let Some(event) = events.recv().await {
        if matches!(event, ProcessEvent::Closed(_) | ProcessEvent::Lost) {
            break;
        }
    }
    start.elapsed()
}

async fn read_files(client: &ExecServerClient, files: &[PathBuf]) -> Duration {
    let start = Instant::now();
    for file in files {
        let _ = client
            .call::<Value>(method::FS_READ_FILE, json!({"path": uri::from_path(file)}))
            .await;
    }
    start.elapsed()
}

/// Starts `program args… --listen ws://127.0.0.1:0` and connects to the URL it prints.
async fn connect_ws(
    program: &Path,
    args: &[&str],
    cwd: &Path,
) -> Result<(ExecServerClient, osprey_process::PipedChild), String> {
    let request = ExecRequest::new(program.to_string_lossy(), cwd)
        .args(args.iter().copied())
        .args(["--listen", "ws://127.0.0.1:0"])
        .envs(env());
    let mut child = osprey_process::spawn_piped(&request).map_err(|e| e.to_string())?;
    let stdout = child.stdout().take().ok_or("no stdout")?;
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let url = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .map_err(|_| "no URL within 30 s")?
            .map_err(|e| e.to_string())?
            .ok_or("the server printed no URL")?;
        if let Some(at) = line.find("ws://") {
            break line[at..].trim().to_owned();
        }
    };
    let client = ExecServerClient::connect_url(&url, None, ConnectOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    Ok((client, child))
}

async fn measure(
    name: &str,
    client: &ExecServerClient,
    cwd: &Path,
    files: &[PathBuf],
    runs: usize,
) -> (f64, f64, f64) {
    for i in 0..5 {
        remote_true(client, &format!("warm{i}"), cwd).await;
    }
    let mut samples = Vec::with_capacity(runs);
    for i in 0..runs {
        samples.push(remote_true(client, &format!("{name}{i}"), cwd).await);
    }
    let (p50, p90) = median(samples);
    read_files(client, &files[..files.len().min(50)]).await;
    let read = read_files(client, files).await.as_secs_f64() * 1000.0;
    (p50, p90, read)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "bench_exec_server: {err}");
            std::process::exit(2);
        }
    };
    let Ok(dir) = tempfile_dir() else {
        std::process::exit(1);
    };
    let cwd = dir.clone();
    let files: Vec<PathBuf> = (0..args.files)
        .map(|i| {
            let path = dir.join(format!("f{i:04}.txt"));
            let _ = std::fs::write(&path, format!("file {i}\n").repeat(8));
            path
        })
        .collect();
    for _ in 0..5 {
        local_true(&cwd).await;
    }
    let mut local = Vec::with_capacity(args.runs);
    for _ in 0..args.runs {
        local.push(local_true(&cwd).await);
    }
    let (local_p50, local_p90) = median(local);
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "local spawn of `true`: p50 {local_p50:.2} ms, p90 {local_p90:.2} ms ({} runs)",
        args.runs
    );
    let _ = writeln!(
        out,
        "| server | transport | `true` p50 | p90 | added (p50) | fs/readFile × {} |",
        args.files
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    let mut servers: Vec<(String, PathBuf, Vec<&str>)> = vec![
        (
            "osprey (no sandbox)".to_owned(),
            args.osprey.clone(),
            vec!["exec-server", "--sandbox", "danger-full-access"],
        ),
        (
            "osprey (workspace-write sandbox)".to_owned(),
            args.osprey.clone(),
            vec!["exec-server"],
        ),
    ];
    if let Some(codex) = &args.codex {
        servers.push(("codex 0.171".to_owned(), codex.clone(), vec!["exec-server"]));
    }
    for (name, program, base) in &servers {
        let mut stdio_args: Vec<String> = base.iter().map(|s| (*s).to_owned()).collect();
        stdio_args.extend(["--listen".to_owned(), "stdio".to_owned()]);
        let stdio = ExecServerClient::connect_program(
            &program.to_string_lossy(),
            &stdio_args,
            env(),
            &cwd,
            ConnectOptions::default(),
        )
        .await;
        let rows = match stdio {
            Ok(client) => vec![(
                "stdio",
                measure("s", &client, &cwd, &files, args.runs).await,
            )],
            Err(err) => {
                let _ = writeln!(out, "| {name} | stdio | failed: {err} | | | |");
                Vec::new()
            }
        };
        let ws = match connect_ws(program, base, &cwd).await {
            Ok((client, _child)) => {
                vec![("ws", measure("w", &client, &cwd, &files, args.runs).await)]
            }
            Err(err) => {
                let _ = writeln!(out, "| {name} | ws | failed: {err} | | | |");
                Vec::new()
            }
        };
        for (transport, (p50, p90, read)) in rows.into_iter().chain(ws) {
            let _ = writeln!(
                out,
                "| {name} | {transport} | {p50:.2} ms | {p90:.2} ms | +{:.2} ms | {read:.0} ms ({:.0} files/s) |",
                p50 - local_p50,
                files.len() as f64 / (read / 1000.0)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scratch folder outside /tmp (Codex will not put helpers beside a temp home).
fn tempfile_dir() -> std::io::Result<PathBuf> {
    let base = std::env::current_dir()?.join("target/bench-exec-server");
    let dir = base.join(format!("run-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
