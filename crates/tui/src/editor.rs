//! Ctrl+G: the draft edited in the person's own editor (`$VISUAL`, else `$EDITOR`), as
//! Codex's TUI does. The draft goes to a private temporary file, the terminal is handed
//! over (the TUI's input reader stopped by the caller, its modes off), the editor runs in
//! the terminal's foreground until it exits, and what the file then holds becomes the draft.
//! An editor that fails (or is missing) leaves the draft as it was and says why.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use osprey_process::ExecRequest;

use crate::terminal::Tui;

/// The editor's command line from `VISUAL` or `EDITOR` (split like a shell would, so
/// `code --wait` works).
fn editor_command() -> Result<Vec<String>, String> {
    let raw = ["VISUAL", "EDITOR"]
        .into_iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
        .ok_or_else(|| {
            "Ctrl+G edits the draft in your editor: set $VISUAL or $EDITOR (for example `export EDITOR=vim`)".to_string()
        })?;
    match shlex::split(&raw) {
        Some(words) if !words.is_empty() => Ok(words),
        _ => Err(format!(
            "cannot read the editor command `{raw}` (from $VISUAL or $EDITOR): check its quoting"
        )),
    }
}

/// A new file only this user can read, holding `text`.
fn draft_file(text: &str) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir();
    for attempt in 0..100u32 {
        let path = dir.join(format!("osprey-draft-{}-{attempt}.md", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path);
        match file {
            Ok(mut file) => {
                return file
                    .write_all(text.as_bytes())
                    .map(|()| path.clone())
                    .map_err(|e| format!("could not write the draft to {}: {e}", path.display()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(format!(
                    "could not create a file for the draft in {}: {e}",
                    dir.display()
                ));
            }
        }
    }
    Err(format!(
        "could not create a file for the draft in {}: too many left over",
        dir.display()
    ))
}

/// Runs the editor on `draft` and returns the edited text.
pub async fn edit(tui: &mut Tui, draft: &str, cwd: &Path) -> Result<String, String> {
    let command = editor_command()?;
    let path = draft_file(draft)?;
    let result = run_editor(tui, &command, &path, cwd).await;
    let text = result.and_then(|()| {
        std::fs::read_to_string(&path)
            .map_err(|e| format!("could not read the edited draft {}: {e}", path.display()))
    });
    let _ = std::fs::remove_file(&path);
    text
}

async fn run_editor(
    tui: &mut Tui,
    command: &[String],
    path: &Path,
    cwd: &Path,
) -> Result<(), String> {
    let (program, args) = command.split_first().ok_or("no editor command")?;
    let request = ExecRequest::new(program.clone(), cwd)
        .args(args.iter().cloned())
        .args([path.display().to_string()])
        .envs(std::env::vars().collect());
    let top = tui
        .suspend()
        .map_err(|e| format!("could not hand the terminal to the editor: {e}"))?;
    let outcome = osprey_process::run_in_foreground(&request).await;
    tui.resume(top)
        .map_err(|e| format!("could not take the terminal back from the editor: {e}"))?;
    match outcome {
        Ok(Some(0)) => Ok(()),
        Ok(Some(code)) => Err(format!(
            "the editor `{program}` exited with status {code}; the draft is unchanged"
        )),
        Ok(None) => Err(format!(
            "the editor `{program}` was ended by a signal; the draft is unchanged"
        )),
        Err(e) => Err(format!("{e}; the draft is unchanged")),
    }
}
