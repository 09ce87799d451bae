//! The approval the person is asked for, and the choices it offers.

use osprey_app_server_protocol::{
    CommandExecutionApprovalDecision, FileChangeApprovalDecision, FileUpdateChange, RequestId,
};

/// A server → client approval request waiting for the person.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingApproval {
    pub id: RequestId,
    pub kind: ApprovalKind,
    /// The highlighted choice (Up/Down move it, Enter takes it).
    pub selected: usize,
    /// The sub-agent's thread id when a sub-agent asks (not this session's own thread).
    pub from_agent: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalKind {
    Command {
        command: String,
        cwd: Option<String>,
        reason: Option<String>,
        /// The prefix rule `p` would persist (offered only when the server proposes one).
        proposed_prefix: Option<Vec<String>>,
        /// Whether "yes for this session" applies (the server lists `acceptForSession`).
        session_allowed: bool,
        /// What the sandbox blocked when the command already ran in it: accepting runs it
        /// again outside the sandbox.
        sandbox_denial: Option<String>,
    },
    Patch {
        reason: Option<String>,
        grant_root: Option<String>,
        /// The file change item's changes, when the item was seen.
        changes: Vec<FileUpdateChange>,
    },
}

/// The person's answer, in the protocol's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Command(CommandExecutionApprovalDecision),
    Patch(FileChangeApprovalDecision),
}

/// One choice of the overlay: its key, its label, and the answer it sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalChoice {
    pub key: char,
    /// The key's name as shown (`esc` for the cancel choice).
    pub key_label: &'static str,
    pub label: String,
    pub answer: Answer,
}

/// The key that cancels the turn; `Esc` on the keyboard.
pub const ESC_KEY: char = '\u{1b}';

impl ApprovalKind {
    /// The choices, in the order the overlay lists them.
    pub fn choices(&self) -> Vec<ApprovalChoice> {
        use CommandExecutionApprovalDecision as C;
        use FileChangeApprovalDecision as F;
        let choice = |key, key_label, label: &str, answer| ApprovalChoice {
            key,
            key_label,
            label: label.to_owned(),
            answer,
        };
        match self {
            ApprovalKind::Command {
                proposed_prefix,
                session_allowed,
                sandbox_denial,
                ..
            } => {
                let rerun = sandbox_denial.is_some();
                let yes = if rerun {
                    "Yes, run it again outside the sandbox"
                } else {
                    "Yes, proceed"
                };
                let mut choices = vec![choice('y', "y", yes, Answer::Command(C::Accept))];
                if *session_allowed {
                    let label = if rerun {
                        "Yes, and run this command outside the sandbox without asking for the rest of this session"
                    } else {
                        "Yes, and don't ask again for this command in this session"
                    };
                    choices.push(choice(
                        's',
                        "s",
                        label,
                        Answer::Command(C::AcceptForSession),
                    ));
                }
                if let Some(prefix) = proposed_prefix {
                    choices.push(choice(
                        'p',
                        "p",
                        &format!(
                            "Yes, and don't ask again for commands that start with `{}`",
                            prefix.join(" ")
                        ),
                        Answer::Command(C::AcceptWithExecpolicyAmendment {
                            execpolicy_amendment: prefix.clone(),
                        }),
                    ));
                }
                let no = if rerun {
                    "No, leave it blocked and tell Osprey what to do differently"
                } else {
                    "No, and tell Osprey what to do differently"
                };
                choices.push(choice('n', "n", no, Answer::Command(C::Decline)));
                choices.push(choice(
                    ESC_KEY,
                    "esc",
                    "No, and stop the turn",
                    Answer::Command(C::Cancel),
                ));
                choices
            }
            ApprovalKind::Patch { .. } => vec![
                choice('y', "y", "Yes, proceed", Answer::Patch(F::Accept)),
                choice(
                    's',
                    "s",
                    "Yes, and don't ask again for these files in this session",
                    Answer::Patch(F::AcceptForSession),
                ),
                choice(
                    'n',
                    "n",
                    "No, and tell Osprey what to do differently",
                    Answer::Patch(F::Decline),
                ),
                choice(
                    ESC_KEY,
                    "esc",
                    "No, and stop the turn",
                    Answer::Patch(F::Cancel),
                ),
            ],
        }
    }

    /// The line the transcript keeps after the person answered.
    pub fn decision_notice(&self, answer: &Answer) -> String {
        use CommandExecutionApprovalDecision as C;
        use FileChangeApprovalDecision as F;
        match (self, answer) {
            (
                ApprovalKind::Command {
                    command,
                    sandbox_denial: Some(_),
                    ..
                },
                Answer::Command(C::Accept),
            ) => format!("✔ You approved Osprey to run {command} again outside the sandbox"),
            (ApprovalKind::Command { command, .. }, Answer::Command(decision)) => match decision {
                C::Accept => format!("✔ You approved Osprey to run {command} this time"),
                C::AcceptForSession => {
                    format!("✔ You approved Osprey to run {command} for this session")
                }
                C::AcceptWithExecpolicyAmendment {
                    execpolicy_amendment,
                } => format!(
                    "✔ You approved Osprey to always run commands that start with {}",
                    execpolicy_amendment.join(" ")
                ),
                C::Decline => {
                    format!("✗ You declined to run {command}; tell Osprey what to do instead")
                }
                C::Cancel => format!("✗ You canceled the request to run {command}"),
            },
            (ApprovalKind::Patch { .. }, Answer::Patch(decision)) => match decision {
                F::Accept => "✔ You approved these edits".to_owned(),
                F::AcceptForSession => {
                    "✔ You approved edits to these files for this session".to_owned()
                }
                F::Decline => {
                    "✗ You declined these edits; tell Osprey what to do instead".to_owned()
                }
                F::Cancel => "✗ You canceled these edits".to_owned(),
            },
            // A command answer to a patch request (or the reverse) is never built.
            _ => String::new(),
        }
    }
}
