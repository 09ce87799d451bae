//! Session-file speed: listing many threads and reading one long thread.
//!
//! Run with `bash bench/rollout.sh` (or `cargo run --release -p osprey-rollout --example
//! bench_rollout -- [FILES] [ITEMS]`). It generates, in a temporary home:
//!
//! * FILES (default 5 000) rollout files spread over 100 days and 5 working directories,
//!   each a realistic head (4 KiB base instructions, turn context, environment context, the
//!   prompt) and a body of 40 records;
//! * one thread of ITEMS (default 10 000) records, with a compaction in the middle.
//!
//! and prints median wall times for: listing with no index (first run), listing with the
//! index, the first page (20) and a cwd-filtered page; and reading + reconstructing the long
//! thread. Baselines from the same run: parsing every listed file whole with `read_rollout`
//! (what listing would cost without header-only reads), and parsing the long thread's lines
//! into untyped JSON (the floor for any reader). Targets: listing <= 200 ms, long thread
//! <= 300 ms.

use osprey_protocol::{
    AskForApproval, EventMsg, ResponseItem, SandboxPolicy, ThreadId, ThreadItem, TokenUsage, TurnId,
};
use osprey_rollout::{
    BaseInstructions, CompactedItem, INDEX_FILE, ListOptions, RolloutItem, RolloutLine,
    SessionMeta, SessionSource, TurnContextItem, format_timestamp, list_sessions, read_rollout,
    rollout_path, sessions_dir,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error>;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn time<T>(runs: usize, mut f: impl FnMut() -> Result<T, Error>) -> Result<Duration, Error> {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        std::hint::black_box(f()?);
        samples.push(start.elapsed());
    }
    Ok(median(samples))
}

fn turn_context(turn: usize, cwd: &Path) -> RolloutItem {
    RolloutItem::TurnContext(TurnContextItem {
        turn_id: Some(TurnId(format!("turn-{turn}"))),
        cwd: cwd.to_path_buf(),
        approval_policy: AskForApproval::OnRequest,
        sandbox_policy: SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![],
            network_access: false,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: false,
        },
        model: "gpt-5-codex".into(),
        effort: None,
        extra: Default::default(),
    })
}

/// The records of turn `n`: about ten lines of realistic size.
fn turn_records(n: usize, cwd: &Path, out: &mut Vec<RolloutItem>) -> Result<(), Error> {
    let call = format!("call_{n}");
    out.push(turn_context(n, cwd));
    out.push(RolloutItem::ResponseItem(ResponseItem::user_text(format!(
        "Please look at module {n} and fix the failing test in it; keep the public API."
    ))));
    out.push(RolloutItem::EventMsg(EventMsg::TurnStarted));
    out.push(RolloutItem::ResponseItem(serde_json::from_value(
        serde_json::json!({"type":"reasoning","id":format!("rs_{n}"),
            "summary":[{"type":"summary_text","text":"Reading the module first."}],
            "encrypted_content":"gAAAAB".repeat(60)}),
    )?));
    out.push(RolloutItem::ResponseItem(serde_json::from_value(
        serde_json::json!({"type":"function_call","id":format!("fc_{n}"),"name":"exec_command",
            "call_id":call,"arguments":"{\"cmd\":\"sed -n 1,200p src/lib.rs\"}"}),
    )?));
    out.push(RolloutItem::ResponseItem(
        ResponseItem::FunctionCallOutput {
            call_id: call,
            output: "fn main() {}\n".repeat(30).into(),
        },
    ));
    out.push(RolloutItem::EventMsg(EventMsg::ItemCompleted {
        item: ThreadItem::AgentMessage {
            id: format!("msg_{n}"),
            text: "Fixed the off-by-one in the loop; tests pass.".into(),
        },
    }));
    out.push(RolloutItem::ResponseItem(ResponseItem::assistant_text(
        "Fixed the off-by-one in the loop; tests pass.",
    )));
    out.push(RolloutItem::EventMsg(EventMsg::TokenCount {
        last: TokenUsage::default(),
        total: TokenUsage::default(),
    }));
    out.push(RolloutItem::EventMsg(EventMsg::TurnCompleted {
        last_agent_message: Some("Fixed.".into()),
        usage: TokenUsage::default(),
    }));
    Ok(())
}

fn write_file(
    home: &Path,
    created: chrono::DateTime<chrono::Utc>,
    cwd: &Path,
    records: &[RolloutItem],
) -> Result<PathBuf, Error> {
    let mut meta = SessionMeta::new(
        ThreadId::new(),
        cwd.to_path_buf(),
        "osprey_exec",
        "0.1.0",
        SessionSource::Exec,
    );
    meta.timestamp = format_timestamp(created);
    meta.model_provider = Some("openai".into());
    meta.base_instructions = Some(BaseInstructions {
        text: "You are a coding agent. ".repeat(170),
    });
    let path = rollout_path(home, created, &meta.id);
    let stamp = format_timestamp(created);
    let mut out = Vec::new();
    RolloutLine::new(stamp.clone(), RolloutItem::SessionMeta(meta)).write_to(&mut out)?;
    let env = ResponseItem::user_text(format!(
        "<environment_context>\n  <cwd>{}</cwd>\n</environment_context>",
        cwd.display()
    ));
    RolloutLine::new(stamp.clone(), RolloutItem::ResponseItem(env)).write_to(&mut out)?;
    for record in records {
        RolloutLine::new(stamp.clone(), record.clone()).write_to(&mut out)?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, out)?;
    Ok(path)
}

#[expect(clippy::print_stdout, reason = "the benchmark's report is its output")]
fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let files: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5_000);
    let items: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(10_000);
    let home = tempfile::tempdir()?;
    let cwds: Vec<PathBuf> = (0..5)
        .map(|i| PathBuf::from(format!("/home/dev/project-{i}")))
        .collect();
    let start = chrono::DateTime::from_timestamp(1_750_000_000, 0).unwrap_or_default();

    // FILES threads of four turns each (about 40 records).
    for i in 0..files {
        let cwd = &cwds[i % cwds.len()];
        let mut records = Vec::new();
        for turn in 0..4 {
            turn_records(turn, cwd, &mut records)?;
        }
        let created = start + chrono::Duration::seconds((i as i64) * 1_733);
        write_file(home.path(), created, cwd, &records)?;
    }
    let bytes: u64 = walk_size(&sessions_dir(home.path()));
    println!(
        "generated {files} rollout files ({:.1} MB) in {:?}",
        bytes as f64 / 1e6,
        home.path()
    );

    let all = ListOptions::default();
    let index = sessions_dir(home.path()).join(INDEX_FILE);
    let cold = time(5, || {
        let _ = std::fs::remove_file(&index);
        Ok(list_sessions(home.path(), &all)?)
    })?;
    let listed = list_sessions(home.path(), &all)?;
    let warm = time(21, || Ok(list_sessions(home.path(), &all)?))?;
    let page = ListOptions {
        cwd: None,
        limit: Some(20),
    };
    let first_page = time(21, || Ok(list_sessions(home.path(), &page)?))?;
    let filtered = ListOptions {
        cwd: Some(cwds[3].clone()),
        limit: Some(20),
    };
    let cwd_page = time(21, || Ok(list_sessions(home.path(), &filtered)?))?;
    let full_parse = time(3, || {
        let mut n = 0usize;
        for summary in &listed {
            n += read_rollout(&summary.path)?.lines.len();
        }
        Ok(n)
    })?;

    println!("sessions list over {} files:", listed.len());
    println!("  no index (rebuild)       {cold:>10.1?}");
    println!("  with index, all          {warm:>10.1?}   target <= 200 ms");
    println!("  with index, first 20     {first_page:>10.1?}");
    println!("  with index, cwd, 20      {cwd_page:>10.1?}");
    println!(
        "  baseline: read_rollout of every file {full_parse:.1?} ({:.0}x the indexed listing)",
        full_parse.as_secs_f64() / warm.as_secs_f64()
    );

    // One long thread: ITEMS records, compacted halfway.
    let cwd = &cwds[0];
    let mut records = Vec::with_capacity(items + 10);
    let mut turn = 0;
    while records.len() < items {
        if records.len() >= items / 2 && turn % 1_000 == 0 {
            records.push(RolloutItem::Compacted(CompactedItem {
                message: "Summary of the work so far.".into(),
                replacement_history: Some(vec![ResponseItem::user_text("summary")]),
            }));
        }
        turn_records(turn, cwd, &mut records)?;
        turn += 1;
    }
    records.truncate(items);
    let long_home = tempfile::tempdir()?;
    let long = write_file(long_home.path(), start, cwd, &records)?;
    let size = std::fs::metadata(&long)?.len();
    let read = time(11, || {
        let contents = read_rollout(&long)?;
        Ok(contents.reconstruct_history().len())
    })?;
    let floor = time(11, || {
        let text = std::fs::read_to_string(&long)?;
        let mut n = 0usize;
        for line in text.lines() {
            let value: serde_json::Value = serde_json::from_str(line)?;
            n += usize::from(value.is_object());
        }
        Ok(n)
    })?;
    let history = read_rollout(&long)?.reconstruct_history().len();
    println!(
        "long thread: {items} records ({:.1} MB), {history} history items after compaction",
        size as f64 / 1e6
    );
    println!("  read + reconstruct       {read:>10.1?}   target <= 300 ms");
    println!(
        "  baseline: lines to untyped JSON {floor:.1?} (ours {:.2}x)",
        read.as_secs_f64() / floor.as_secs_f64()
    );
    Ok(())
}

fn walk_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(t) if t.is_dir() => walk_size(&entry.path()),
            _ => entry.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}
