//! Exec policy: which commands Osprey may run without asking, which need a person's
//! approval, and which must never run.
//!
//! Users write the policy as Starlark `.rules` files in the same language as Codex's
//! execpolicy, so files written for Codex load here unchanged. The heart of the language is
//! one builtin:
//!
//! ```starlark
//! prefix_rule(
//!     pattern = ["git", ["status", "log"]],   # argv prefix; a list is a set of alternatives
//!     decision = "allow",                     # allow (default) | prompt | forbidden
//!     justification = "read-only git",       # optional; shown to people
//!     match = ["git status", ["git", "log", "-1"]],  # must match (checked at load)
//!     not_match = ["git push"],                       # must not match (checked at load)
//! )
//! ```
//!
//! `host_executable(name=…, paths=[…])` and `network_rule(…)` are accepted too, because
//! Codex files use them; only the first affects command checks.
//!
//! # Shape
//!
//! - [`Policy`] holds the rules of many files in load order, indexed by program name so a
//!   check only looks at rules that can match `argv[0]`. [`Policy::check`] returns an
//!   [`Evaluation`]: every matching rule in load order, and the strictest decision
//!   (`forbidden` > `prompt` > `allow`), or none when nothing matched. Its JSON form is
//!   exactly Codex's `execpolicy check` output.
//! - Loading ([`Policy::load_dirs`], [`Policy::load_files`], [`Policy::from_source`])
//!   evaluates each file in its own Starlark module. A file either loads completely or
//!   contributes nothing and yields a [`LoadError`] carrying file, line and column. A
//!   broken file never widens what is allowed; since it may have held a `forbidden` rule,
//!   callers treat a policy with [`Policy::has_load_errors`] as "prompt for everything".
//! - [`append_allow_prefix_rule`] is how approvals become permanent: it appends one
//!   `allow` rule under a lock file, through a temp file and an atomic rename.
//! - [`run_check`] is `osprey execpolicy check` once its arguments are parsed (the `cli`
//!   crate owns the command line): it writes to the streams it is given, so tests call it
//!   in-process.
//!
//! Nothing here spawns processes, touches the network or depends on an async runtime.

mod amend;
mod check;
mod decision;
mod error;
mod network;
mod parser;
mod policy;
mod rule;

pub use amend::AmendError;
pub use amend::AmendOutcome;
pub use amend::allow_rule_line;
pub use amend::append_allow_prefix_rule;
pub use check::CheckRequest;
pub use check::run_check;
pub use decision::Decision;
pub use error::LoadError;
pub use error::TextPosition;
pub use network::NetworkProtocol;
pub use network::NetworkRule;
pub use policy::Evaluation;
pub use policy::HostExecutables;
pub use policy::MatchOptions;
pub use policy::Policy;
pub use rule::PatternToken;
pub use rule::PrefixRule;
pub use rule::RuleMatch;
pub use rule::RuleOrigin;
pub use rule::starlark_string;
