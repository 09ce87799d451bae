//! `apply_patch`: edits files with the `*** Begin Patch` language, through approval and the
//! sandbox like any command.
//!
//! The patch is parsed and verified in-process first (nothing is written), which yields every
//! absolute path it touches, move targets included. A patch that writes only where the sandbox
//! lets commands write (the `write` paths of the permission profile when one is configured,
//! else the policy's writable roots) is applied without asking (except under `untrusted`); anything
//! else asks through the orchestrator's approval engine, where "approved for this session"
//! covers later patches that touch only already-approved paths. When the sandbox is active, an auto-approved patch is applied by
//! the `apply_patch` virtual command running inside the sandbox; an approved one, or one under
//! no sandbox, is applied in-process. Either way it is all-or-nothing.
//!
//! A model that runs `apply_patch …` through a shell tool ends up here too (see
//! [`intercept_shell_patch`]).

use crate::environment::paths::WindowsPaths;
use crate::environment::remote_files::RemoteFiles;
use crate::tools::approval::ApprovalSubject;
use crate::tools::call::{ToolError, ToolOutput, ToolPayload};
use crate::tools::context::{CommandServices, ToolInvocation};
use crate::tools::orchestrator::{Attempt, CommandPlan};
use crate::tools::registry::ToolHandler;
use async_trait::async_trait;
use osprey_apply_patch::{
    ApplyError, ChangeKind, Patch, VerifiedPatch, apply_verified, apply_verified_in,
    maybe_parse_apply_patch_invocation, parse_patch, verify_patch, verify_patch_in,
};
use osprey_config::ApplyPatchToolType;
use osprey_process::{ExecExpiration, OutputCaps, run_to_completion_with_stdin};
use osprey_protocol::{
    AskForApproval, EventMsg, FileChangeKind, FileChangeSummary, ItemStatus, ThreadItem,
};
use osprey_sandboxing::{FsAccess, WRITABLE_DEVICES};
use osprey_tools::{ApplyPatchArgs, ToolSpec};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct ApplyPatchHandler {
    pub tool_type: ApplyPatchToolType,
    pub commands: Arc<CommandServices>,
}

#[async_trait]
impl ToolHandler for ApplyPatchHandler {
    fn spec(&self) -> ToolSpec {
        match self.tool_type {
            ApplyPatchToolType::Freeform => {
                osprey_tools::apply_patch_freeform_spec(osprey_apply_patch::PATCH_LARK_GRAMMAR)
            }
            ApplyPatchToolType::Function => osprey_tools::apply_patch_function_spec(),
        }
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let text = match &inv.call.payload {
            ToolPayload::Custom { input } => input.clone(),
            ToolPayload::Function { .. } => inv.call.arguments::<ApplyPatchArgs>()?.input,
            ToolPayload::LocalShell { .. } => {
                return Err(ToolError::RespondToModel(
                    "apply_patch takes the patch text as its input".to_string(),
                ));
            }
        };
        let cwd = inv.turn.cwd.clone();
        run_patch(&inv, &self.commands, parse_patch(&text), &text, &cwd).await
    }
}

/// Parses and applies patch text as the `apply_patch` tool would (used by `write_file`).
pub async fn run_patch_text(
    inv: &ToolInvocation,
    commands: &CommandServices,
    text: &str,
    cwd: &Path,
) -> Result<ToolOutput, ToolError> {
    run_patch(inv, commands, parse_patch(text), text, cwd).await
}

/// If `argv` is an `apply_patch` invocation (also inside `bash -lc`), applies it as the tool
/// would and returns the output; otherwise `None` and the command runs normally.
pub async fn intercept_shell_patch(
    inv: &ToolInvocation,
    commands: &CommandServices,
    argv: &[String],
    cwd: &Path,
) -> Option<Result<ToolOutput, ToolError>> {
    let parsed = maybe_parse_apply_patch_invocation(argv)?;
    Some(match parsed {
        Ok(invocation) => {
            let dir = match invocation.workdir.as_deref() {
                Some(dir) if Path::new(dir).is_absolute() => PathBuf::from(dir),
                Some(dir) => cwd.join(dir),
                None => cwd.to_path_buf(),
            };
            let text = invocation.patch.text.clone();
            run_patch(inv, commands, Ok(invocation.patch), &text, &dir).await
        }
        Err(e) => Err(ToolError::RespondToModel(format!(
            "apply_patch verification failed: {e}"
        ))),
    })
}

async fn run_patch(
    inv: &ToolInvocation,
    commands: &CommandServices,
    parsed: Result<Patch, osprey_apply_patch::ParseError>,
    text: &str,
    cwd: &Path,
) -> Result<ToolOutput, ToolError> {
    let started = Instant::now();
    let item_id = inv.events.call_item_id(&inv.call.call_id);
    let patch = match parsed {
        Ok(patch) => patch,
        Err(e) => {
            emit_file_change(
                inv,
                &item_id,
                Vec::new(),
                ItemStatus::Failed,
                Some(e.to_string()),
            );
            return Err(ToolError::RespondToModel(format!(
                "apply_patch verification failed: {e}"
            )));
        }
    };
    let remote = commands
        .environment
        .remote()
        .map(|env| RemoteFiles::new(Arc::clone(env)));
    let patch = match commands.environment.windows_paths() {
        Some(windows) => windows_patch(patch, windows),
        None => patch,
    };
    let verified = match verify(remote.as_ref(), &patch, cwd).await {
        Ok(v) => v,
        Err(e) => {
            let changes = planned_changes(&patch, cwd);
            emit_file_change(
                inv,
                &item_id,
                changes,
                ItemStatus::Failed,
                Some(e.to_string()),
            );
            return Err(ToolError::RespondToModel(format!(
                "apply_patch verification failed: {e}"
            )));
        }
    };
    let changes = summaries(&verified);
    // Started before it is approved and applied: a front end that wants the turn's diff reads
    // the files' old contents now, while they are still unchanged.
    inv.emit(EventMsg::ItemStarted {
        item: ThreadItem::FileChange {
            id: item_id.clone(),
            changes: changes.clone(),
            status: ItemStatus::InProgress,
            error: None,
        },
    });

    // Approval, keyed by absolute path.
    let turn = &inv.turn;
    let touched: Vec<PathBuf> = verified.touched_paths().to_vec();
    // The same filesystem policy the sandbox enforces decides what needs asking: the
    // permission profile's when one is configured, not just the coarse policy's roots.
    // A remote cwd names a directory there: this machine's file system says nothing of it.
    let cwd_real = match &remote {
        Some(_) => turn.cwd.clone(),
        None => turn.cwd.canonicalize().unwrap_or_else(|_| turn.cwd.clone()),
    };
    let fs_policy = match commands.orchestrator.sandbox.filesystem(
        &turn.sandbox_policy,
        &cwd_real,
        &commands.env,
    ) {
        Ok(policy) => policy,
        Err(message) => {
            let message = format!(
                "apply_patch was not applied: the sandbox's filesystem policy could not be worked out ({message})"
            );
            emit_file_change(
                inv,
                &item_id,
                changes,
                ItemStatus::Failed,
                Some(message.clone()),
            );
            return Err(ToolError::RespondToModel(message));
        }
    };
    let outside: Vec<&PathBuf> = touched
        .iter()
        .filter(|p| fs_policy.access(p) != FsAccess::Write)
        .collect();
    let needs_approval = turn.approval_policy == AskForApproval::Untrusted || !outside.is_empty();
    let mut approved_outside = false;
    if needs_approval {
        let reason = if outside.is_empty() {
            "the approval policy asks before every file change".to_string()
        } else {
            format!(
                "the patch writes outside the sandbox's writable roots: {}",
                outside
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let subject = ApprovalSubject::Patch {
            changes: changes.clone(),
            paths: touched.clone(),
        };
        let orchestrator = &commands.orchestrator;
        match orchestrator
            .approve(inv.scope(), &subject, reason, None)
            .await
        {
            Ok(()) => approved_outside = !outside.is_empty(),
            Err(ToolError::RespondToModel(message)) => {
                emit_file_change(
                    inv,
                    &item_id,
                    changes,
                    ItemStatus::Declined,
                    Some(message.clone()),
                );
                return Err(ToolError::RespondToModel(message));
            }
            Err(fatal) => {
                emit_file_change(inv, &item_id, changes, ItemStatus::Declined, None);
                return Err(fatal);
            }
        }
    }

    // Apply: inside the sandbox when it is active and the user did not approve leaving it.
    let sandbox_active = commands
        .orchestrator
        .sandbox
        .is_active(&turn.sandbox_policy);
    let result = match (
        &remote,
        &commands.osprey_exe,
        sandbox_active && !approved_outside,
    ) {
        // The exec server checks every write against its own roots.
        (Some(files), _, _) => apply_remotely(files, &verified).await,
        (None, Some(exe), true) => apply_in_sandbox(inv, commands, exe, text, cwd).await,
        _ => apply_in_process(&verified).await,
    };
    match result {
        Ok(summary) => {
            emit_file_change(inv, &item_id, changes, ItemStatus::Completed, None);
            Ok(ToolOutput::success(format!(
                "Exit code: 0\nWall time: {:.1} seconds\nOutput:\n{summary}",
                started.elapsed().as_secs_f64()
            )))
        }
        Err(message) => {
            emit_file_change(
                inv,
                &item_id,
                changes,
                ItemStatus::Failed,
                Some(message.clone()),
            );
            Err(ToolError::RespondToModel(message))
        }
    }
}

/// A patch for a Windows server with its paths (`C:\\x\\y.txt`, `src\\a.rs`) in this side's
/// form of that server's paths.
fn windows_patch(mut patch: Patch, windows: WindowsPaths) -> Patch {
    use osprey_apply_patch::FileOp;
    let fix =
        |path: &mut PathBuf| *path = PathBuf::from(windows.local_form(&path.to_string_lossy()));
    for op in &mut patch.operations {
        match op {
            FileOp::Add { path, .. } | FileOp::Delete { path } => fix(path),
            FileOp::Update { path, move_to, .. } => {
                fix(path);
                if let Some(to) = move_to {
                    fix(to);
                }
            }
        }
    }
    patch
}

/// Verifies `patch` against the files it touches, here or on the exec server (off the
/// runtime either way: a remote check makes one call per file).
async fn verify(
    remote: Option<&RemoteFiles>,
    patch: &Patch,
    cwd: &Path,
) -> Result<VerifiedPatch, ApplyError> {
    let Some(files) = remote else {
        return verify_patch(patch, cwd, None);
    };
    let (files, patch, cwd) = (files.clone(), patch.clone(), cwd.to_path_buf());
    tokio::task::spawn_blocking(move || verify_patch_in(&files, &patch, &cwd, None))
        .await
        .map_err(|e| ApplyError::Io {
            path: PathBuf::new(),
            action: "verify",
            source: std::io::Error::other(format!("the check stopped unexpectedly: {e}")),
        })?
}

/// Applies a verified patch through the exec server's fs calls, all or nothing.
async fn apply_remotely(files: &RemoteFiles, verified: &VerifiedPatch) -> Result<String, String> {
    let (files, verified) = (files.clone(), verified.clone());
    tokio::task::spawn_blocking(move || {
        apply_verified_in(&files, &verified)
            .map(|summary| summary.text)
            .map_err(|e: ApplyError| format!("apply_patch failed: {e}"))
    })
    .await
    .map_err(|e| format!("apply_patch stopped unexpectedly: {e}"))?
}

async fn apply_in_process(verified: &VerifiedPatch) -> Result<String, String> {
    let verified = verified.clone();
    tokio::task::spawn_blocking(move || {
        apply_verified(&verified)
            .map(|summary| summary.text)
            .map_err(|e: ApplyError| format!("apply_patch failed: {e}"))
    })
    .await
    .map_err(|e| format!("apply_patch stopped unexpectedly: {e}"))?
}

/// Runs the `apply_patch` virtual command inside the sandbox, with the patch on its stdin:
/// Linux refuses a single argument over 128 KiB, and patches can be bigger. The command may
/// write where the sandbox lets it (the same writable roots that decided no approval was
/// needed, temp dirs included), devices aside; the sandbox still guards `.git` and `.osprey`.
async fn apply_in_sandbox(
    inv: &ToolInvocation,
    commands: &CommandServices,
    exe: &Path,
    text: &str,
    cwd: &Path,
) -> Result<String, String> {
    let mut env = commands.env.clone();
    let turn_cwd = inv
        .turn
        .cwd
        .canonicalize()
        .unwrap_or_else(|_| inv.turn.cwd.clone());
    let fs_policy =
        commands
            .orchestrator
            .sandbox
            .filesystem(&inv.turn.sandbox_policy, &turn_cwd, &env)?;
    let roots: Vec<&Path> = fs_policy
        .writable_paths()
        .filter(|p| !WRITABLE_DEVICES.iter().any(|d| Path::new(d) == *p))
        .collect();
    if let Ok(joined) = std::env::join_paths(&roots) {
        env.insert(
            APPLY_PATCH_ROOTS_ENV.to_string(),
            joined.to_string_lossy().into_owned(),
        );
    }
    let plan = CommandPlan {
        argv: vec![
            exe.display().to_string(),
            "--osprey-run-as-apply-patch".to_string(),
        ],
        cwd: cwd.to_path_buf(),
        env,
        escalation_requested: false,
        justification: None,
        prefix_rule: None,
    };
    let run = commands
        .orchestrator
        .run_preapproved(inv.scope(), &plan, |request, _| async move {
            let outcome = run_to_completion_with_stdin(
                request,
                text.as_bytes().to_vec(),
                ExecExpiration::timeout(Duration::from_secs(60)),
                OutputCaps::default(),
                None,
            )
            .await
            .map_err(|e| ToolError::RespondToModel(e.to_string()))?;
            let output = outcome.output_lossy();
            Ok(Attempt {
                denied: None,
                exit_code: outcome.exit_code,
                output,
                value: outcome,
            })
        })
        .await
        .map_err(|e| e.to_string())?;
    let output = run.value.output_lossy();
    if run.value.success() {
        Ok(output)
    } else if let Some(denial) = run.sandbox_denial {
        Err(format!(
            "apply_patch was blocked by the sandbox ({denial}); nothing was changed.\n{output}"
        ))
    } else {
        Err(format!("apply_patch failed:\n{output}"))
    }
}

/// Tells the `apply_patch` virtual command which roots it may write (the sandbox enforces
/// them too); matches the CLI's `OSPREY_APPLY_PATCH_ROOTS`.
const APPLY_PATCH_ROOTS_ENV: &str = osprey_config::env_vars::OSPREY_APPLY_PATCH_ROOTS;

fn summaries(verified: &VerifiedPatch) -> Vec<FileChangeSummary> {
    verified
        .changes()
        .iter()
        .map(|change| FileChangeSummary {
            path: change
                .move_to()
                .unwrap_or_else(|| change.path())
                .to_path_buf(),
            kind: match change.kind() {
                ChangeKind::Add => FileChangeKind::Add,
                ChangeKind::Update => FileChangeKind::Update,
                ChangeKind::Delete => FileChangeKind::Delete,
            },
            diff: Some(change.unified_diff()),
            move_path: change.move_to().map(Path::to_path_buf),
        })
        .collect()
}

/// What a patch meant to change, for the failed item when verification fails.
fn planned_changes(patch: &Patch, cwd: &Path) -> Vec<FileChangeSummary> {
    patch
        .operations
        .iter()
        .map(|op| {
            let path = op.path();
            let path = if path.is_absolute() {
                path.clone()
            } else {
                cwd.join(path)
            };
            let kind = match op {
                osprey_apply_patch::FileOp::Add { .. } => FileChangeKind::Add,
                osprey_apply_patch::FileOp::Delete { .. } => FileChangeKind::Delete,
                osprey_apply_patch::FileOp::Update { .. } => FileChangeKind::Update,
            };
            FileChangeSummary {
                path,
                kind,
                diff: None,
                move_path: None,
            }
        })
        .collect()
}

fn emit_file_change(
    inv: &ToolInvocation,
    id: &str,
    changes: Vec<FileChangeSummary>,
    status: ItemStatus,
    error: Option<String>,
) {
    inv.emit(EventMsg::ItemCompleted {
        item: ThreadItem::FileChange {
            id: id.to_string(),
            changes,
            status,
            error,
        },
    });
}
