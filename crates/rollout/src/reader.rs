//! Reading a rollout file back: the header, every record, and the views resume and fork need.
//!
//! Reading never fails because of one bad line. A line cut short by a crash (the file does not
//! end in a newline), a record from a newer version or a line that is not JSON at all is
//! skipped and described in [`RolloutContents::warnings`]; only a file whose first line is not
//! a `session_meta` record is refused, because without it there is no thread to resume.

use crate::error::{Result, RolloutError};
use crate::format::{
    CompactedItem, Envelope, ParseLineError, RolloutItem, RolloutLine, SessionMeta, TurnContextItem,
};
use osprey_protocol::{EventMsg, ResponseItem, TurnId};
use std::fs;
use std::path::{Path, PathBuf};

/// How many skipped lines are described one by one before the rest are only counted.
const MAX_LINE_WARNINGS: usize = 20;

/// Text prefixes of user-role messages that the agent adds itself (environment context,
/// project instructions); they are not what the user typed.
const CONTEXTUAL_PREFIXES: [&str; 3] = [
    "<environment_context>",
    "# AGENTS.md instructions",
    "<user_instructions>",
];

/// Everything read from one rollout file.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutContents {
    /// The file that was read.
    pub path: PathBuf,
    /// The header (the first line).
    pub meta: SessionMeta,
    /// Every readable record after the header, in file order.
    pub lines: Vec<RolloutLine>,
    /// One sentence per problem found while reading (skipped lines, a cut-off last line).
    /// Worth showing the user; never fatal.
    pub warnings: Vec<String>,
    /// Records this version does not know (a newer record type, or an event written by
    /// Codex or another version): skipped, and not a problem, so not among the warnings.
    pub unrecognized_records: usize,
    /// Byte length of the file up to the end of its last record worth keeping: the last
    /// complete line, or a last record that is whole but lost its newline. What follows is a
    /// cut-off line (or blank space) that resuming removes.
    pub(crate) kept_len: u64,
    /// The kept part ends in a whole record without its newline (the writer stopped just
    /// before it); resuming appends the newline instead of cutting the record off.
    pub(crate) missing_newline: bool,
    /// Byte length of the whole file as read.
    pub(crate) file_len: u64,
    /// The last record ordinal in the file (Codex "paginated" threads), header included.
    pub(crate) last_ordinal: Option<u64>,
}

/// Reads a whole rollout file. See the module notes for what counts as an error.
pub fn read_rollout(path: &Path) -> Result<RolloutContents> {
    let bytes = fs::read(path).map_err(|e| RolloutError::io("read the session file", path, e))?;
    parse_rollout(path, &bytes)
}

pub(crate) fn parse_rollout(path: &Path, bytes: &[u8]) -> Result<RolloutContents> {
    let mut meta = None;
    let mut lines = Vec::new();
    let mut warnings = Vec::new();
    let mut skipped = 0usize;
    let mut kept_len = 0u64;
    let mut missing_newline = false;
    let mut offset = 0usize;
    let mut number = 0usize;
    let mut last_ordinal = None;
    let mut unrecognized_records = 0usize;
    let display = path.display();

    while offset < bytes.len() {
        number += 1;
        let (raw, complete) = match bytes[offset..].iter().position(|&b| b == b'\n') {
            Some(end) => (&bytes[offset..offset + end], true),
            None => (&bytes[offset..], false),
        };
        offset += raw.len() + usize::from(complete);
        let text = std::str::from_utf8(raw).map(str::trim);
        let parsed = match text {
            Ok("") => {
                if complete {
                    kept_len = offset as u64;
                }
                continue;
            }
            Ok(text) => RolloutLine::parse(text),
            Err(_) => Err(ParseLineError::Json(
                "the line is not valid UTF-8".to_string(),
            )),
        };
        if !complete {
            // A cut-off last line: the writer stopped mid-line. If it still parses, the newline
            // alone was lost and the record is kept.
            if let Err(err) = &parsed {
                warnings.push(format!(
                    "{display}:{number}: the last line is incomplete (the writing process \
                     probably stopped mid-write) and was ignored: {err}"
                ));
                if meta.is_none() {
                    return Err(RolloutError::MissingMeta {
                        path: path.to_path_buf(),
                        reason: "the header line itself is incomplete".to_string(),
                    });
                }
                break;
            }
            kept_len = offset as u64;
            missing_newline = true;
        } else {
            kept_len = offset as u64;
        }
        // Records skipped below still count in a numbered file.
        let ordinal = match (&parsed, text) {
            (Ok(line), _) => line.ordinal,
            (Err(_), Ok(text)) => Envelope::parse(text)
                .ok()
                .and_then(|e| e.rest.get("ordinal").and_then(serde_json::Value::as_u64)),
            (Err(_), Err(_)) => None,
        };
        if ordinal.is_some() {
            last_ordinal = ordinal;
        }
        match (parsed, meta.is_none()) {
            (
                Ok(RolloutLine {
                    item: RolloutItem::SessionMeta(header),
                    ..
                }),
                true,
            ) => meta = Some(header),
            (Ok(_), true) => {
                return Err(RolloutError::MissingMeta {
                    path: path.to_path_buf(),
                    reason: format!("line {number} is another kind of record"),
                });
            }
            (Err(err), true) => {
                return Err(RolloutError::MissingMeta {
                    path: path.to_path_buf(),
                    reason: format!("line {number}: {err}"),
                });
            }
            (Ok(line), false) => lines.push(line),
            (Err(err), false) if is_foreign(&err) => unrecognized_records += 1,
            (Err(err), false) => {
                skipped += 1;
                if skipped <= MAX_LINE_WARNINGS {
                    warnings.push(format!("{display}:{number}: line skipped: {err}"));
                }
            }
        }
    }
    if skipped > MAX_LINE_WARNINGS {
        warnings.push(format!(
            "{display}: {} more unreadable lines were skipped",
            skipped - MAX_LINE_WARNINGS
        ));
    }
    let meta = meta.ok_or_else(|| RolloutError::MissingMeta {
        path: path.to_path_buf(),
        reason: "the file is empty".to_string(),
    })?;
    Ok(RolloutContents {
        path: path.to_path_buf(),
        meta,
        lines,
        warnings,
        kept_len,
        missing_newline,
        file_len: bytes.len() as u64,
        last_ordinal,
        unrecognized_records,
    })
}

impl RolloutContents {
    /// The model-visible history to resume with.
    ///
    /// Response items are replayed in order; a `compacted` record replaces everything before
    /// it with its `replacement_history`, or, when it has none, with one user message holding
    /// the summary. So a thread resumed after compaction continues from the compacted
    /// history, exactly as it was before the process stopped.
    pub fn reconstruct_history(&self) -> Vec<ResponseItem> {
        reconstruct(&self.lines)
    }

    /// The [`TurnContextItem`] of every turn, in order. A `turn_context` record marks the
    /// start of a turn, so index `n` here is turn `n` (counting from 0) everywhere in this
    /// crate.
    pub fn turn_contexts(&self) -> Vec<&TurnContextItem> {
        self.lines
            .iter()
            .filter_map(|line| match &line.item {
                RolloutItem::TurnContext(ctx) => Some(ctx),
                _ => None,
            })
            .collect()
    }

    /// The id of every turn, in order (`None` for records written without one).
    pub fn turn_ids(&self) -> Vec<Option<TurnId>> {
        self.turn_contexts()
            .into_iter()
            .map(|ctx| ctx.turn_id.clone())
            .collect()
    }

    /// The settings the last turn ran with; a resumed thread starts from these unless the
    /// user overrides them.
    pub fn last_turn_context(&self) -> Option<&TurnContextItem> {
        self.lines.iter().rev().find_map(|line| match &line.item {
            RolloutItem::TurnContext(ctx) => Some(ctx),
            _ => None,
        })
    }

    /// The records before turn `n` (counting from 0): everything before the `n`-th
    /// `turn_context` record. `n` equal to the number of turns gives every record; a larger
    /// `n` gives `None`.
    pub fn history_before_turn(&self, n: usize) -> Option<&[RolloutLine]> {
        let mut seen = 0usize;
        for (index, line) in self.lines.iter().enumerate() {
            if matches!(line.item, RolloutItem::TurnContext(_)) {
                if seen == n {
                    return Some(&self.lines[..index]);
                }
                seen += 1;
            }
        }
        (seen == n).then_some(&self.lines[..])
    }

    /// The persisted events, in order, for a front end replaying the thread.
    pub fn events(&self) -> impl Iterator<Item = &EventMsg> {
        self.lines.iter().filter_map(|line| match &line.item {
            RolloutItem::EventMsg(msg) => Some(msg),
            _ => None,
        })
    }

    /// The first message the user typed (context messages skipped), trimmed.
    pub fn first_user_message(&self) -> Option<String> {
        self.lines.iter().find_map(|line| match &line.item {
            RolloutItem::ResponseItem(item) => typed_user_text(item),
            _ => None,
        })
    }
}

/// Whether a line is well-formed but written by another program or version, as opposed to
/// damaged. Events are the one payload whose shape differs between Codex and Osprey.
fn is_foreign(err: &ParseLineError) -> bool {
    match err {
        ParseLineError::UnknownType(_) => true,
        ParseLineError::Payload { kind, .. } => kind == "event_msg",
        ParseLineError::Json(_) => false,
    }
}

/// Rebuilds the model-visible history from records; see
/// [`RolloutContents::reconstruct_history`].
pub fn reconstruct(lines: &[RolloutLine]) -> Vec<ResponseItem> {
    // Only what follows the last compaction survives it, so start there.
    let start = lines
        .iter()
        .rposition(|line| matches!(line.item, RolloutItem::Compacted(_)));
    let mut history = Vec::new();
    let rest = match start {
        Some(index) => {
            if let RolloutItem::Compacted(compacted) = &lines[index].item {
                history.extend(compacted_history(compacted));
            }
            &lines[index + 1..]
        }
        None => lines,
    };
    history.extend(rest.iter().filter_map(|line| match &line.item {
        RolloutItem::ResponseItem(item) => Some(item.clone()),
        _ => None,
    }));
    history
}

fn compacted_history(compacted: &CompactedItem) -> Vec<ResponseItem> {
    match &compacted.replacement_history {
        Some(items) => items.clone(),
        None => vec![ResponseItem::user_text(compacted.message.clone())],
    }
}

/// The text of a user message the user typed, trimmed; `None` for other items and for
/// messages the agent added as context.
pub(crate) fn typed_user_text(item: &ResponseItem) -> Option<String> {
    let ResponseItem::Message { role, content, .. } = item else {
        return None;
    };
    if role != "user" {
        return None;
    }
    // The labels around attached images (`<image name=[Image #1] …>`, `</image>`) are not
    // typed text.
    let text: String = content
        .iter()
        .filter_map(|part| part.text())
        .filter(|text| !is_image_label(text))
        .collect();
    let text = text.trim();
    if text.is_empty() || CONTEXTUAL_PREFIXES.iter().any(|p| text.starts_with(p)) {
        return None;
    }
    Some(text.to_string())
}

/// Whether a text part is one of the tags the core wraps an attached image in.
fn is_image_label(text: &str) -> bool {
    text == "</image>" || (text.starts_with("<image name=") && text.ends_with('>'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn meta_line() -> String {
        let meta = SessionMeta::new(
            osprey_protocol::ThreadId::new(),
            "/w".into(),
            "test",
            "0",
            crate::SessionSource::Exec,
        );
        RolloutLine::new("t".into(), RolloutItem::SessionMeta(meta))
            .to_json()
            .unwrap()
    }

    #[test]
    fn a_file_without_header_is_refused() {
        let err = parse_rollout(Path::new("f"), b"").unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
        let item = RolloutLine::new(
            "t".into(),
            RolloutItem::ResponseItem(ResponseItem::user_text("x")),
        );
        let text = item.to_json().unwrap() + "\n";
        let err = parse_rollout(Path::new("f"), text.as_bytes()).unwrap_err();
        assert!(matches!(err, RolloutError::MissingMeta { .. }), "{err}");
    }

    #[test]
    fn bad_middle_lines_are_counted_past_the_cap() {
        let mut text = meta_line() + "\n";
        for _ in 0..25 {
            text.push_str("garbage\n");
        }
        text.push_str("\n\u{0}\n");
        let contents = parse_rollout(Path::new("f"), text.as_bytes()).unwrap();
        assert_eq!(contents.warnings.len(), MAX_LINE_WARNINGS + 1);
        assert!(contents.warnings[MAX_LINE_WARNINGS].contains("6 more"));
        assert_eq!(contents.kept_len, text.len() as u64);
        assert!(!contents.missing_newline);
    }

    #[test]
    fn contextual_user_messages_are_not_typed_text() {
        let env = ResponseItem::user_text("<environment_context>\n<cwd>/w</cwd>");
        let agents = ResponseItem::user_text("# AGENTS.md instructions for /w\n...");
        assert_eq!(typed_user_text(&env), None);
        assert_eq!(typed_user_text(&agents), None);
        assert_eq!(
            typed_user_text(&ResponseItem::user_text("  fix it \n")).as_deref(),
            Some("fix it")
        );
        assert_eq!(typed_user_text(&ResponseItem::assistant_text("hi")), None);
    }

    #[test]
    fn image_labels_are_not_typed_text() {
        use osprey_protocol::ContentItem;
        let text = |t: &str| ContentItem::InputText { text: t.into() };
        let message = ResponseItem::message(
            "user",
            vec![
                text("<image name=[Image #1] path=\"/w/a.png\">"),
                ContentItem::InputImage {
                    image_url: "data:image/png;base64,AA==".into(),
                },
                text("</image>"),
                text("describe it"),
            ],
        );
        assert_eq!(typed_user_text(&message).as_deref(), Some("describe it"));
    }
}
