//! The one path everything that runs goes through: approval → sandbox → attempt → escalate.
//!
//! 1. **Approval.** The [`CommandPolicy`] assesses the command (exec-policy rules, safety
//!    classification, the approval policy) as allowed, needing approval, or forbidden. A
//!    model's request to leave the sandbox (`require_escalated`) always needs approval.
//!    Approval itself is [`Orchestrator::approve`], the one engine that commands, patches and
//!    MCP calls share ([`super::approval`]): needing approval under `never` is a refusal in
//!    plain words; otherwise the session's approvals are consulted and, failing that, the
//!    front end is asked (a command's timeout stands still while it decides).
//! 2. **Sandbox.** Unless the user approved running it outside the sandbox, the request is
//!    confined by the [`Sandbox`] for the turn's policy.
//! 3. **Attempt.** The handler's own runner spawns it (one-shot or interactive).
//! 4. **Escalate.** If the sandbox denied something and the approval policy lets a person
//!    decide (`on-failure`, `on-request`), the user is asked whether to rerun it unsandboxed.
//!
//! Handlers never call `process` directly for model commands; they call
//! [`Orchestrator::run`] with a closure that performs one attempt.

use super::approval::{ApprovalSubject, SessionApprovals};
use super::call::ToolError;
use super::scope::CallScope;
use crate::approvals::ApprovalBroker;
use crate::turn_context::TurnContext;
use osprey_process::{ExecRequest, TimeoutControl};
use osprey_protocol::{ApprovalRequest, AskForApproval, ReviewDecision, SandboxPolicy};
use osprey_sandboxing::FileSystemPolicy;
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the safety policy says about a command before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assessment {
    Allow,
    /// Run it only if a person agrees; `reason` says why in plain words.
    Ask {
        reason: String,
    },
    /// Never run it; `reason` names the rule or classification.
    Forbid {
        reason: String,
    },
}

/// Decides whether a command may run. Implemented by the exec-policy layer.
pub trait CommandPolicy: Send + Sync {
    fn assess(&self, argv: &[String], turn: &TurnContext) -> Assessment;

    /// Persists "allow commands starting with `prefix`" (the amendment decision).
    fn amend(&self, prefix: &[String]) -> Result<(), String>;

    /// Whether an amendment can be offered for this command (a single plain command that no
    /// rule matches yet).
    /// `suggested` is the model's `prefix_rule`, used when it is a prefix of the command.
    fn can_offer_amendment(
        &self,
        argv: &[String],
        suggested: Option<&[String]>,
    ) -> Option<Vec<String>>;
}

/// Confines a request to a sandbox policy. Implemented by the sandboxing layer.
pub trait Sandbox: Send + Sync {
    /// Whether commands under `policy` run confined at all.
    fn is_active(&self, policy: &SandboxPolicy) -> bool;
    /// Rewrites `request` so that it runs confined.
    fn confine(
        &self,
        request: ExecRequest,
        policy: &SandboxPolicy,
        cwd: &Path,
    ) -> Result<ExecRequest, String>;
    /// What a command under `policy` in `cwd` (canonical) with environment `env` may read
    /// and write: the view the sandbox enforces, so that what a patch may write without
    /// asking is judged by the same rules. With a permission profile configured, the
    /// profile's; by default the coarse policy's.
    fn filesystem(
        &self,
        policy: &SandboxPolicy,
        cwd: &Path,
        env: &HashMap<String, String>,
    ) -> Result<FileSystemPolicy, String> {
        let tmpdir = env.get("TMPDIR").map(Path::new);
        Ok(FileSystemPolicy::from_sandbox_policy(policy, cwd, tmpdir))
    }
    /// Whether a command can be run outside this sandbox at all (escalation). An exec
    /// server confines every process itself, so a remote environment says no.
    fn allows_unsandboxed(&self) -> bool {
        true
    }
    /// A plain-words note when a failed attempt looks like the sandbox's doing; `cwd` is
    /// the command's working directory (relative paths in its messages start there).
    fn denial(
        &self,
        policy: &SandboxPolicy,
        cwd: &Path,
        exit_code: Option<i32>,
        output: &str,
    ) -> Option<String>;
}

/// A policy that allows everything (used where no exec policy is configured in tests).
#[cfg(test)]
pub struct AllowAll;

#[cfg(test)]
impl CommandPolicy for AllowAll {
    fn assess(&self, _argv: &[String], _turn: &TurnContext) -> Assessment {
        Assessment::Allow
    }
    fn amend(&self, _prefix: &[String]) -> Result<(), String> {
        Err("this session has no exec-policy rules file to amend".to_string())
    }
    fn can_offer_amendment(&self, _: &[String], _: Option<&[String]>) -> Option<Vec<String>> {
        None
    }
}

/// No confinement at all.
#[cfg(any(test, feature = "bench"))]
pub struct NoSandbox;

#[cfg(any(test, feature = "bench"))]
impl Sandbox for NoSandbox {
    fn is_active(&self, _policy: &SandboxPolicy) -> bool {
        false
    }
    fn confine(
        &self,
        request: ExecRequest,
        _policy: &SandboxPolicy,
        _cwd: &Path,
    ) -> Result<ExecRequest, String> {
        Ok(request)
    }
    fn denial(&self, _: &SandboxPolicy, _: &Path, _: Option<i32>, _: &str) -> Option<String> {
        None
    }
}

/// A command a handler wants to run.
#[derive(Debug, Clone)]
pub struct CommandPlan {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub env: HashMap<String, String>,
    /// The model asked to run it outside the sandbox.
    pub escalation_requested: bool,
    pub justification: Option<String>,
    /// The model's suggested rule prefix for "don't ask again".
    pub prefix_rule: Option<Vec<String>>,
}

/// What one attempt produced, plus what the orchestrator needs to spot a sandbox denial.
pub struct Attempt<T> {
    pub value: T,
    pub exit_code: Option<i32>,
    pub output: String,
    /// The executor's own verdict on a sandbox denial (an exec server reports one with the
    /// exit); `None` leaves it to [`Sandbox::denial`].
    pub denied: Option<String>,
}

/// The result of [`Orchestrator::run`].
pub struct Orchestrated<T> {
    pub value: T,
    /// Set when the sandbox blocked something and the command was not rerun without it.
    pub sandbox_denial: Option<String>,
}

pub struct Orchestrator {
    pub policy: Arc<dyn CommandPolicy>,
    pub sandbox: Arc<dyn Sandbox>,
    /// Requests waiting for a front end's decision.
    pub broker: ApprovalBroker,
    /// What was approved for this session: commands, patch paths, MCP tools.
    pub session_approvals: SessionApprovals,
    /// No person answers approval requests (`osprey exec`): a declined request is explained
    /// to the model as such, and it is not told to ask again.
    unattended: bool,
}

impl Orchestrator {
    pub fn new(policy: Arc<dyn CommandPolicy>, sandbox: Arc<dyn Sandbox>) -> Self {
        Self {
            policy,
            sandbox,
            broker: ApprovalBroker::default(),
            session_approvals: SessionApprovals::default(),
            unattended: false,
        }
    }

    /// Marks the session as run without a person to answer approval requests; its front end
    /// declines them all.
    pub fn unattended(mut self, unattended: bool) -> Self {
        self.unattended = unattended;
        self
    }

    /// Whether asking to run a command outside the sandbox can get a yes: the policy lets a
    /// person decide, and there is a person.
    pub fn may_escalate(&self, policy: AskForApproval) -> bool {
        !self.unattended && policy != AskForApproval::Never && self.sandbox.allows_unsandboxed()
    }

    pub async fn run<T, F, Fut>(
        &self,
        inv: CallScope<'_>,
        plan: &CommandPlan,
        timeout: Option<&TimeoutControl>,
        attempt: F,
    ) -> Result<Orchestrated<T>, ToolError>
    where
        F: FnMut(ExecRequest, bool) -> Fut,
        Fut: Future<Output = Result<Attempt<T>, ToolError>>,
    {
        let turn = inv.turn;
        if plan.escalation_requested && !self.sandbox.allows_unsandboxed() {
            return Err(ToolError::RespondToModel(
                "The command was not run: in this environment every command runs under the exec server's own sandbox, so running outside it cannot be granted. Run it again without require_escalated, or tell the user what needs more access.".to_string(),
            ));
        }
        let assessment = self.policy.assess(&plan.argv, turn);
        let mut unsandboxed_approved = false;
        let reason = match assessment {
            Assessment::Forbid { reason } => {
                return Err(ToolError::RespondToModel(format!(
                    "The command was not run: {reason}. Do not retry it in another form; choose a different approach or ask the user."
                )));
            }
            Assessment::Ask { reason } => Some(reason),
            Assessment::Allow if plan.escalation_requested => Some(format!(
                "the model asks to run this outside the sandbox{}",
                plan.justification
                    .as_deref()
                    .map(|j| format!(": {j}"))
                    .unwrap_or_default()
            )),
            Assessment::Allow => None,
        };
        if let Some(reason) = reason {
            let subject = plan.subject(plan.escalation_requested, None);
            self.approve(inv, &subject, reason, timeout).await?;
            unsandboxed_approved = plan.escalation_requested;
        }

        self.execute(inv, plan, timeout, unsandboxed_approved, attempt)
            .await
    }

    /// Sandbox → attempt → escalate for a command whose approval was settled by the caller
    /// (a patch approved by path, say).
    pub async fn run_preapproved<T, F, Fut>(
        &self,
        inv: CallScope<'_>,
        plan: &CommandPlan,
        attempt: F,
    ) -> Result<Orchestrated<T>, ToolError>
    where
        F: FnMut(ExecRequest, bool) -> Fut,
        Fut: Future<Output = Result<Attempt<T>, ToolError>>,
    {
        self.execute(inv, plan, None, false, attempt).await
    }

    async fn execute<T, F, Fut>(
        &self,
        inv: CallScope<'_>,
        plan: &CommandPlan,
        timeout: Option<&TimeoutControl>,
        unsandboxed_approved: bool,
        mut attempt: F,
    ) -> Result<Orchestrated<T>, ToolError>
    where
        F: FnMut(ExecRequest, bool) -> Fut,
        Fut: Future<Output = Result<Attempt<T>, ToolError>>,
    {
        let turn = inv.turn;
        let policy = &turn.sandbox_policy;
        let sandboxed = !unsandboxed_approved && self.sandbox.is_active(policy);
        let request = self.request_for(plan, sandboxed, policy)?;
        let first = attempt(request, sandboxed).await?;
        if !sandboxed {
            return Ok(Orchestrated {
                value: first.value,
                sandbox_denial: None,
            });
        }
        let denial = first.denied.clone().or_else(|| {
            self.sandbox
                .denial(policy, &plan.cwd, first.exit_code, &first.output)
        });
        let Some(denial) = denial else {
            return Ok(Orchestrated {
                value: first.value,
                sandbox_denial: None,
            });
        };
        let may_escalate = self.sandbox.allows_unsandboxed()
            && matches!(
                turn.approval_policy,
                AskForApproval::OnFailure | AskForApproval::OnRequest
            );
        if !may_escalate {
            return Ok(Orchestrated {
                value: first.value,
                sandbox_denial: Some(denial),
            });
        }
        let reason =
            format!("the sandbox blocked it ({denial}); run it again without the sandbox?");
        let subject = plan.subject(true, Some(denial.clone()));
        match self.approve(inv, &subject, reason, timeout).await {
            Ok(()) => {
                let request = self.request_for(plan, false, policy)?;
                let second = attempt(request, false).await?;
                Ok(Orchestrated {
                    value: second.value,
                    sandbox_denial: None,
                })
            }
            Err(ToolError::RespondToModel(_)) => Ok(Orchestrated {
                value: first.value,
                sandbox_denial: Some(denial),
            }),
            Err(fatal) => Err(fatal),
        }
    }

    fn request_for(
        &self,
        plan: &CommandPlan,
        sandboxed: bool,
        policy: &SandboxPolicy,
    ) -> Result<ExecRequest, ToolError> {
        let Some((program, args)) = plan.argv.split_first() else {
            return Err(ToolError::RespondToModel(
                "The command is empty; pass the program and its arguments.".to_string(),
            ));
        };
        let request = ExecRequest::new(program.clone(), plan.cwd.clone())
            .args(args.iter().cloned())
            .envs(plan.env.clone());
        if !sandboxed {
            return Ok(request);
        }
        self.sandbox
            .confine(request, policy, &plan.cwd)
            .map_err(|reason| {
                ToolError::RespondToModel(format!(
                    "The command was not run because the sandbox could not be set up: {reason}"
                ))
            })
    }

    /// The approval engine: policy `never` → refusal; approved for the session → go
    /// ahead; otherwise ask the front end (with `timeout` suspended meanwhile) and apply its
    /// decision. `Ok` means go ahead; a decline is an error the model reads, an abort a
    /// fatal one.
    pub async fn approve(
        &self,
        inv: CallScope<'_>,
        subject: &ApprovalSubject,
        reason: String,
        timeout: Option<&TimeoutControl>,
    ) -> Result<(), ToolError> {
        let turn = inv.turn;
        // A call winding down after an interrupt goes no further, not even on an approval
        // remembered for the session.
        if inv.cancel.is_cancelled() {
            return Err(ToolError::Fatal(subject.aborted()));
        }
        if turn.approval_policy == AskForApproval::Never {
            return Err(ToolError::RespondToModel(subject.refusal(&reason)));
        }
        if self.session_approvals.covers(subject) {
            return Ok(());
        }
        let (amendment, justification, sandbox_denial) = match subject {
            ApprovalSubject::Command {
                argv,
                prefix_rule,
                justification,
                sandbox_denial,
                ..
            } => (
                self.policy
                    .can_offer_amendment(argv, prefix_rule.as_deref()),
                justification.clone(),
                sandbox_denial.clone(),
            ),
            _ => (None, None, None),
        };
        let request = ApprovalRequest {
            id: inv.call_id.to_string(),
            call_id: inv.call_id.to_string(),
            kind: subject.request_kind(),
            cwd: subject
                .cwd()
                .map_or_else(|| turn.cwd.clone(), std::path::Path::to_path_buf),
            reason: reason.clone(),
            available_decisions: subject.available_decisions(amendment.as_deref()),
            justification,
            proposed_execpolicy_amendment: amendment,
            sandbox_denial,
        };
        let _paused = timeout.map(TimeoutControl::suspend);
        let decision = self
            .broker
            .request(inv.events, &turn.turn_id, request, inv.cancel)
            .await;
        match decision {
            ReviewDecision::Approved => Ok(()),
            ReviewDecision::ApprovedForSession => {
                self.session_approvals.remember(subject);
                Ok(())
            }
            ReviewDecision::ApprovedExecpolicyAmendment { prefix } => {
                if let Err(e) = self.policy.amend(&prefix) {
                    inv.emit(osprey_protocol::EventMsg::Warning {
                        message: format!(
                            "the command was approved, but the rule could not be saved: {e}"
                        ),
                    });
                }
                Ok(())
            }
            ReviewDecision::Denied if self.unattended => Err(ToolError::RespondToModel(
                subject.declined_unattended(&reason, turn.sandbox_policy.mode()),
            )),
            ReviewDecision::Denied => Err(ToolError::RespondToModel(subject.declined())),
            ReviewDecision::Abort => Err(ToolError::Fatal(subject.aborted())),
        }
    }
}

impl CommandPlan {
    /// This plan as an approval subject.
    fn subject(&self, escalation: bool, sandbox_denial: Option<String>) -> ApprovalSubject {
        ApprovalSubject::Command {
            argv: self.argv.clone(),
            cwd: self.cwd.clone(),
            escalation,
            prefix_rule: self.prefix_rule.clone(),
            justification: self.justification.clone(),
            sandbox_denial,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventEmitter;
    use osprey_protocol::{ThreadId, TurnId};
    use tokio_util::sync::CancellationToken;

    fn turn(dir: &Path) -> TurnContext {
        TurnContext {
            turn_id: TurnId("turn-1".into()),
            cwd: dir.to_path_buf(),
            model: "m".into(),
            effort: None,
            approval_policy: AskForApproval::OnRequest,
            sandbox_policy: SandboxPolicy::ReadOnly,
            output_schema: None,
            config: Arc::new(osprey_config::Config::for_tests(dir, dir).unwrap()),
        }
    }

    #[tokio::test]
    async fn an_interrupted_call_is_not_let_through_by_a_session_approval() {
        let dir = tempfile::tempdir().unwrap();
        let turn = turn(dir.path());
        let orchestrator = Orchestrator::new(Arc::new(AllowAll), Arc::new(NoSandbox));
        let subject = ApprovalSubject::Command {
            argv: vec!["make".into(), "deploy".into()],
            cwd: dir.path().to_path_buf(),
            escalation: true,
            prefix_rule: None,
            justification: None,
            sandbox_denial: None,
        };
        orchestrator.session_approvals.remember(&subject);
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let events = EventEmitter::new(ThreadId::new(), tx);
        let cancel = CancellationToken::new();
        let scope = CallScope {
            turn: &turn,
            call_id: "call-1",
            events: &events,
            cancel: &cancel,
        };
        let approved = orchestrator
            .approve(scope, &subject, "why".into(), None)
            .await;
        assert!(approved.is_ok(), "remembered for the session");
        cancel.cancel();
        let after_interrupt = orchestrator
            .approve(scope, &subject, "why".into(), None)
            .await;
        assert!(
            matches!(after_interrupt, Err(ToolError::Fatal(_))),
            "the interrupt wins over the session approval"
        );
    }
}
