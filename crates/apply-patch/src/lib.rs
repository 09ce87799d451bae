//! The `*** Begin Patch` file-editing language: parsing, matching, and
//! all-or-nothing application.
//!
//! A language model edits files by sending a patch such as
//!
//! ```text
//! *** Begin Patch
//! *** Update File: src/main.rs
//! @@ fn main() {
//! -    println!("hi");
//! +    println!("hello");
//! *** End Patch
//! ```
//!
//! and this crate turns it into file changes. Correctness comes first: a
//! patch either applies exactly as meant or changes nothing. The work is split
//! in three steps, each a public function, so the agent can put its approval
//! and sandbox checks between them:
//!
//! 1. **Parse** — [`parse_patch`] (lenient: heredoc and `bash -lc` wrappers,
//!    padding, missing final newline) or [`parse_patch_strict`] (exactly
//!    [`PATCH_LARK_GRAMMAR`]) turn text into a [`Patch`] of [`FileOp`]s, or a
//!    [`ParseError`] naming the line and what was expected there.
//!    [`maybe_parse_apply_patch_invocation`] recognises command lines
//!    (`["apply_patch", PATCH]`, `bash -lc "cd dir && apply_patch <<'EOF' …"`).
//! 2. **Verify** — [`verify_patch`] resolves every path (`..` and symlinks
//!    first, then the allowed roots), checks that files exist or not as each
//!    operation needs, finds every chunk, and computes every new content in
//!    memory. Nothing is written. The [`VerifiedPatch`] lists the
//!    [`FileChange`]s (with unified diffs on demand) and every absolute path
//!    the patch touches, for approvals keyed by path.
//! 3. **Apply** — [`apply_verified`] writes each new content to a temporary
//!    file beside its target and renames it into place; if a rename fails,
//!    the files already replaced are restored from memory. The
//!    [`ApplySummary`] carries the `Success. Updated the following files:`
//!    text.
//!
//! [`run_cli`] puts the three together as the `apply_patch` command.
//!
//! Verification and application touch files only through the
//! [`PatchFileSystem`] trait: [`verify_patch`] and [`apply_verified`] use
//! [`LocalFileSystem`]; [`verify_patch_in`] and [`apply_verified_in`] take
//! any implementation, such as one speaking an exec server's `fs/*` calls to
//! reach files on another machine. The trait asks only for what such a
//! server offers (metadata, whole-file reads and atomic writes, directory
//! creation and removal, canonicalisation); links and permission bits are
//! optional extras of the local disk.
//!
//! Chunks are found by the matcher in passes of decreasing strictness (exact;
//! ignoring trailing whitespace; ignoring surrounding whitespace; with Unicode
//! dashes, quotes and spaces folded to ASCII), after the `@@` anchor line when
//! there is one and at the end of the file for `*** End of File`. Untouched
//! bytes are copied verbatim, so CRLF files stay CRLF, a missing final newline
//! stays missing unless an edit reaches the end, and context lines matched
//! fuzzily keep their text. Replaced files keep their permission bits.
//!
//! The crate depends on no other Osprey crate; errors display as plain words
//! fit to return to the model. The README beside this crate documents the
//! language, the command, and where we deliberately differ from Codex.

mod apply;
mod cli;
mod error;
mod fs;
mod invocation;
mod matcher;
mod parser;
mod paths;
mod verify;

pub use apply::{ApplySummary, SUCCESS_HEADER, apply_verified, apply_verified_in, summary_text};
pub use cli::{EXIT_FAILURE, EXIT_SUCCESS, EXIT_USAGE, run_cli, run_cli_with_roots};
pub use error::ApplyError;
pub use fs::{EntryKind, LocalFileSystem, PatchFileSystem};
pub use invocation::{Invocation, maybe_parse_apply_patch_invocation};
pub use matcher::MatchLevel;
pub use parser::{Chunk, FileOp, LineKind, ParseError, Patch, parse_patch, parse_patch_strict};
pub use verify::{ChangeKind, FileChange, VerifiedPatch, verify_patch, verify_patch_in};

/// Parses, verifies and applies `text` in one call (paths resolved against
/// `cwd`, limited to `allowed_roots` when given).
pub fn apply_patch_text(
    text: &str,
    cwd: &std::path::Path,
    allowed_roots: Option<&[std::path::PathBuf]>,
) -> Result<ApplySummary, ApplyError> {
    let patch = parse_patch(text)?;
    let verified = verify_patch(&patch, cwd, allowed_roots)?;
    apply_verified(&verified)
}

/// The patch language as a Lark grammar, for a freeform (custom) tool
/// definition. It describes what the strict parser accepts (checked against
/// the corpus with Python's `lark`, both LALR and Earley).
pub const PATCH_LARK_GRAMMAR: &str = r#"start: begin_marker operation+ end_marker

begin_marker: "*** Begin Patch" LF
end_marker: "*** End Patch" LF?

operation: add_file | delete_file | update_file

add_file: "*** Add File: " path LF added_line*
delete_file: "*** Delete File: " path LF
update_file: "*** Update File: " path LF move_target? chunk+

move_target: "*** Move to: " path LF
path: TEXT

chunk: chunk_header? chunk_line+ end_of_file?
chunk_header: ("@@" | "@@ " TEXT) LF
chunk_line: context_line | removed_line | added_line | empty_line
context_line: " " TEXT? LF
empty_line: LF
removed_line: "-" TEXT? LF
added_line: "+" TEXT? LF
end_of_file: "*** End of File" LF

TEXT: /[^\r\n]+/
LF: "\n"
"#;

#[cfg(test)]
mod grammar_tests {
    use super::PATCH_LARK_GRAMMAR;

    /// The grammar spells every marker exactly as the parser does.
    #[test]
    fn grammar_uses_the_parser_markers() {
        for marker in [
            "\"*** Begin Patch\"",
            "\"*** End Patch\"",
            "\"*** Add File: \"",
            "\"*** Delete File: \"",
            "\"*** Update File: \"",
            "\"*** Move to: \"",
            "\"*** End of File\"",
            "\"@@ \"",
        ] {
            assert!(PATCH_LARK_GRAMMAR.contains(marker), "{marker} missing");
        }
    }
}
