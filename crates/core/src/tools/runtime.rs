//! Runs one response's tool calls: read-only calls side by side, mutating calls one at a
//! time, outputs returned in call order.

use super::call::{ToolCall, ToolError, ToolOutput};
use super::context::ToolInvocation;
use super::registry::ToolRegistry;
use crate::events::EventEmitter;
use crate::turn_context::TurnContext;
use futures::future::join_all;
use osprey_protocol::ResponseItem;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;

/// The text a call gets when the turn is interrupted before it finishes.
pub const ABORTED_OUTPUT: &str = "aborted: the turn was interrupted before this call finished";

/// How long an interrupted call's handler may take to wind down (its cancel path) before
/// it is dropped.
const WIND_DOWN: Duration = Duration::from_secs(2);

/// The outcome of running a batch of calls.
pub struct BatchOutcome {
    /// One output item per call, in call order (also for aborted calls).
    pub outputs: Vec<ResponseItem>,
    /// Set when a call failed fatally; the turn must end.
    pub fatal: Option<String>,
}

pub async fn run_tool_calls(
    calls: Vec<ToolCall>,
    registry: Arc<ToolRegistry>,
    turn: Arc<TurnContext>,
    events: EventEmitter,
    cancel: CancellationToken,
) -> BatchOutcome {
    // A fair lock: acquisition order follows call order, so a mutating call waits for the
    // read-only calls before it and blocks the ones after it.
    let gate = Arc::new(RwLock::new(()));
    let futures = calls.into_iter().map(|call| {
        let registry = Arc::clone(&registry);
        let gate = Arc::clone(&gate);
        // The handler gets a token of its own, cancelled only once the turn's cancellation
        // has been seen here. A handler whose work ends because of the interrupt (a killed
        // process, an aborted approval) therefore can never finish before this select has
        // chosen "aborted"; with the turn's token it sometimes did, when the interrupt
        // landed between the two branches' polls, and the killed process's output reached
        // the model as the call's result.
        let call_cancel = CancellationToken::new();
        let invocation = ToolInvocation {
            call: call.clone(),
            turn: Arc::clone(&turn),
            events: events.clone(),
            cancel: call_cancel.clone(),
        };
        let cancel = cancel.clone();
        async move {
            let mutating = registry.is_mutating(&call);
            let result = async {
                let _shared;
                let _exclusive;
                if mutating {
                    _exclusive = gate.write().await;
                } else {
                    _shared = gate.read().await;
                }
                if cancel.is_cancelled() {
                    return Ok(ToolOutput::failure(ABORTED_OUTPUT));
                }
                let dispatch = registry.dispatch(invocation);
                tokio::pin!(dispatch);
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => {
                        // The handler hears of the interrupt through its own token and gets
                        // a moment to act on it: kill and reap its process, withdraw its
                        // approval request, stop its sub-agent wait. Dropping it at once
                        // would skip that and leave a pending approval behind. A handler
                        // that ignores its token is dropped after the bound.
                        call_cancel.cancel();
                        let _ = tokio::time::timeout(WIND_DOWN, &mut dispatch).await;
                        Ok(ToolOutput::failure(ABORTED_OUTPUT))
                    }
                    result = &mut dispatch => result,
                }
            }
            .await;
            (call, result)
        }
    });
    let mut outputs = Vec::new();
    let mut fatal = None;
    for (call, result) in join_all(futures).await {
        let output = match result {
            Ok(output) => output,
            Err(ToolError::RespondToModel(message)) => ToolOutput::failure(message),
            Err(ToolError::Fatal(message)) => {
                let text = format!("aborted: {message}");
                fatal.get_or_insert(message);
                ToolOutput::failure(text)
            }
        };
        outputs.push(call.output_item(output));
    }
    BatchOutcome { outputs, fatal }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventEmitter;
    use crate::tools::call::{ToolCall, ToolPayload};
    use crate::tools::registry::ToolHandler;
    use async_trait::async_trait;
    use osprey_protocol::{AskForApproval, SandboxPolicy, ThreadId, TurnId};
    use std::sync::atomic::AtomicBool;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::sync::Barrier;

    /// Waits at a barrier with its sibling calls: only finishes if they run at the same time.
    struct Rendezvous {
        name: &'static str,
        mutating: bool,
        barrier: Arc<Barrier>,
        inside: Arc<AtomicUsize>,
        max_inside: Arc<AtomicUsize>,
    }

    #[async_trait]
    impl ToolHandler for Rendezvous {
        fn spec(&self) -> osprey_tools::ToolSpec {
            osprey_tools::ToolSpec::Function {
                name: self.name.to_string(),
                description: String::new(),
                strict: false,
                parameters: osprey_tools::JsonSchema(serde_json::json!({"type": "object"})),
            }
        }
        fn is_mutating(&self, _call: &ToolCall) -> bool {
            self.mutating
        }
        async fn handle(&self, _inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
            let now = self.inside.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_inside.fetch_max(now, Ordering::SeqCst);
            if !self.mutating {
                let waited =
                    tokio::time::timeout(Duration::from_secs(10), self.barrier.wait()).await;
                if waited.is_err() {
                    self.inside.fetch_sub(1, Ordering::SeqCst);
                    return Ok(ToolOutput::failure("ran alone"));
                }
            } else {
                tokio::task::yield_now().await;
            }
            self.inside.fetch_sub(1, Ordering::SeqCst);
            Ok(ToolOutput::success(self.name))
        }
    }

    fn setup(
        handlers: Vec<Arc<dyn ToolHandler>>,
    ) -> (
        Arc<ToolRegistry>,
        Arc<TurnContext>,
        EventEmitter,
        tempfile::TempDir,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let config = osprey_config::Config::for_tests(dir.path(), dir.path()).unwrap();
        let mut registry = ToolRegistry::default();
        for h in handlers {
            registry.register(h);
        }
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let events = EventEmitter::new(ThreadId::new(), tx);
        let turn = TurnContext {
            turn_id: TurnId("turn-1".into()),
            cwd: dir.path().to_path_buf(),
            model: "m".into(),
            effort: None,
            approval_policy: AskForApproval::Never,
            sandbox_policy: SandboxPolicy::ReadOnly,
            output_schema: None,
            config: Arc::new(config),
        };
        (Arc::new(registry), Arc::new(turn), events, dir)
    }

    fn call(id: &str, name: &str) -> ToolCall {
        ToolCall {
            call_id: id.to_string(),
            tool_name: name.to_string(),
            payload: ToolPayload::Function {
                arguments: "{}".into(),
            },
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn read_only_calls_overlap_and_mutating_calls_do_not() {
        let barrier = Arc::new(Barrier::new(2));
        let inside = Arc::new(AtomicUsize::new(0));
        let max_inside = Arc::new(AtomicUsize::new(0));
        let make = |name, mutating| -> Arc<dyn ToolHandler> {
            Arc::new(Rendezvous {
                name,
                mutating,
                barrier: Arc::clone(&barrier),
                inside: Arc::clone(&inside),
                max_inside: Arc::clone(&max_inside),
            })
        };
        let (registry, turn, services, _dir) = setup(vec![
            make("read_a", false),
            make("read_b", false),
            make("write", true),
        ]);
        let calls = vec![
            call("1", "read_a"),
            call("2", "read_b"),
            call("3", "write"),
            call("4", "write"),
        ];
        let outcome =
            run_tool_calls(calls, registry, turn, services, CancellationToken::new()).await;
        let texts: Vec<String> = outcome
            .outputs
            .iter()
            .map(|item| match item {
                ResponseItem::FunctionCallOutput { output, .. } => output.text(),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        // Both read-only calls met at the barrier, so they overlapped; outputs keep call order.
        assert_eq!(texts, ["read_a", "read_b", "write", "write"]);
        // The mutating calls never ran beside anything: the peak was the two readers.
        assert_eq!(max_inside.load(Ordering::SeqCst), 2);
        assert!(outcome.fatal.is_none());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn interrupted_calls_still_get_an_output_each() {
        let barrier = Arc::new(Barrier::new(3));
        let make = |name| -> Arc<dyn ToolHandler> {
            Arc::new(Rendezvous {
                name,
                mutating: false,
                barrier: Arc::clone(&barrier),
                inside: Arc::new(AtomicUsize::new(0)),
                max_inside: Arc::new(AtomicUsize::new(0)),
            })
        };
        let (registry, turn, services, _dir) = setup(vec![make("a"), make("b")]);
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::task::yield_now().await;
            trigger.cancel();
        });
        let outcome = run_tool_calls(
            vec![call("1", "a"), call("2", "b")],
            registry,
            turn,
            services,
            cancel,
        )
        .await;
        assert_eq!(outcome.outputs.len(), 2);
        for item in &outcome.outputs {
            let ResponseItem::FunctionCallOutput { output, .. } = item else {
                panic!()
            };
            assert_eq!(output.text(), ABORTED_OUTPUT);
        }
    }

    /// Stands for a command the interrupt kills: the interrupt lands while this handler is
    /// being polled (the turn's token is cancelled from inside it, as another thread can do
    /// at any instant), and the handler ends as soon as its own token says so.
    struct KilledByInterrupt {
        turn_cancel: CancellationToken,
    }

    #[async_trait]
    impl ToolHandler for KilledByInterrupt {
        fn spec(&self) -> osprey_tools::ToolSpec {
            osprey_tools::ToolSpec::Function {
                name: "killed".to_string(),
                description: String::new(),
                strict: false,
                parameters: osprey_tools::JsonSchema(serde_json::json!({"type": "object"})),
            }
        }
        fn is_mutating(&self, _call: &ToolCall) -> bool {
            false
        }
        async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
            self.turn_cancel.cancel();
            inv.cancel.cancelled().await;
            Ok(ToolOutput::failure("Process was killed by signal 9"))
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_ended_by_the_interrupt_reports_aborted_even_when_the_interrupt_lands_mid_poll()
    {
        let cancel = CancellationToken::new();
        let handler: Arc<dyn ToolHandler> = Arc::new(KilledByInterrupt {
            turn_cancel: cancel.clone(),
        });
        let (registry, turn, services, _dir) = setup(vec![handler]);
        let outcome =
            run_tool_calls(vec![call("1", "killed")], registry, turn, services, cancel).await;
        let ResponseItem::FunctionCallOutput { output, .. } = &outcome.outputs[0] else {
            panic!("unexpected {:?}", outcome.outputs)
        };
        assert_eq!(output.text(), ABORTED_OUTPUT);
    }

    /// Stands for a handler with cleanup to do when interrupted (an approval request to
    /// withdraw, a process to reap): it records that its cancel path ran, or, when
    /// `ignores_cancel`, never ends on its own.
    struct CleansUp {
        started: Arc<tokio::sync::Notify>,
        cleaned_up: Arc<AtomicBool>,
        ignores_cancel: bool,
    }

    #[async_trait]
    impl ToolHandler for CleansUp {
        fn spec(&self) -> osprey_tools::ToolSpec {
            osprey_tools::ToolSpec::Function {
                name: "cleans_up".to_string(),
                description: String::new(),
                strict: false,
                parameters: osprey_tools::JsonSchema(serde_json::json!({"type": "object"})),
            }
        }
        fn is_mutating(&self, _call: &ToolCall) -> bool {
            true
        }
        async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
            self.started.notify_one();
            if self.ignores_cancel {
                std::future::pending::<()>().await;
            }
            inv.cancel.cancelled().await;
            tokio::task::yield_now().await;
            self.cleaned_up.store(true, Ordering::SeqCst);
            Ok(ToolOutput::failure("withdrawn"))
        }
    }

    async fn interrupt_cleans_up(ignores_cancel: bool) -> (String, bool) {
        let started = Arc::new(tokio::sync::Notify::new());
        let cleaned_up = Arc::new(AtomicBool::new(false));
        let handler: Arc<dyn ToolHandler> = Arc::new(CleansUp {
            started: Arc::clone(&started),
            cleaned_up: Arc::clone(&cleaned_up),
            ignores_cancel,
        });
        let (registry, turn, services, _dir) = setup(vec![handler]);
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            started.notified().await;
            trigger.cancel();
        });
        let outcome = run_tool_calls(
            vec![call("1", "cleans_up")],
            registry,
            turn,
            services,
            cancel,
        )
        .await;
        let ResponseItem::FunctionCallOutput { output, .. } = &outcome.outputs[0] else {
            panic!("unexpected {:?}", outcome.outputs)
        };
        (output.text(), cleaned_up.load(Ordering::SeqCst))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_interrupted_handler_runs_its_cancel_path_before_the_batch_returns() {
        let (text, cleaned_up) = interrupt_cleans_up(false).await;
        assert_eq!(text, ABORTED_OUTPUT);
        assert!(cleaned_up, "the handler's cancel path ran to its end");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_handler_that_ignores_the_interrupt_is_dropped_after_the_wind_down() {
        let (text, cleaned_up) = interrupt_cleans_up(true).await;
        assert_eq!(text, ABORTED_OUTPUT);
        assert!(!cleaned_up);
    }
}
