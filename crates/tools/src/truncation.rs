//! Keeping tool output within a token budget by cutting out its middle.
//!
//! Tokens are *approximated* as `ceil(bytes / 4)`: no tokenizer runs here, the count is the same
//! on every platform, and it matches what Codex reports. A budget of `n` tokens therefore
//! allows `4 * n` bytes. When the text is longer, we keep the first half of the byte budget and
//! the last half, each cut at a UTF-8 character boundary (never inside a character, possibly in
//! the middle of a line), join them with a marker `…N tokens truncated…` where `N` counts the
//! bytes removed, and put a two-line warning in front:
//!
//! ```text
//! Warning: truncated output (original token count: 2500)
//! Total output lines: 130
//!
//! <head>…1500 tokens truncated…<tail>
//! ```

/// Bytes per approximate token.
pub const APPROX_BYTES_PER_TOKEN: usize = 4;

/// Approximate token count of `text`: `ceil(bytes / 4)`.
pub fn approx_token_count(text: &str) -> usize {
    text.len().div_ceil(APPROX_BYTES_PER_TOKEN)
}

/// The outcome of [`truncate_middle`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruncationResult {
    /// The text to show: the input unchanged, or the warning header, head, marker and tail.
    pub text: String,
    /// Approximate token count of the input.
    pub original_tokens: usize,
    /// Whether anything was cut.
    pub truncated: bool,
}

/// Fit `text` into `max_tokens` approximate tokens, keeping its head and tail.
///
/// Never panics. Text within the budget comes back unchanged (and empty text always does). A
/// budget of 0 keeps nothing but the header and marker.
pub fn truncate_middle(text: &str, max_tokens: usize) -> TruncationResult {
    let original_tokens = approx_token_count(text);
    let budget = max_tokens.saturating_mul(APPROX_BYTES_PER_TOKEN);
    if text.len() <= budget {
        return TruncationResult {
            text: text.to_string(),
            original_tokens,
            truncated: false,
        };
    }

    let head_budget = budget / 2;
    let tail_budget = budget - head_budget;
    let head_end = floor_char_boundary(text, head_budget);
    let tail_start = ceil_char_boundary(text, text.len() - tail_budget).max(head_end);
    let removed_tokens = (tail_start - head_end).div_ceil(APPROX_BYTES_PER_TOKEN);
    let total_lines = text.lines().count();

    let head = &text[..head_end];
    let tail = &text[tail_start..];
    let mut out = String::with_capacity(head.len() + tail.len() + 128);
    out.push_str(&format!(
        "Warning: truncated output (original token count: {original_tokens})\n\
         Total output lines: {total_lines}\n\n"
    ));
    out.push_str(head);
    out.push_str(&truncation_marker(removed_tokens));
    out.push_str(tail);
    TruncationResult {
        text: out,
        original_tokens,
        truncated: true,
    }
}

/// The marker put where text was cut out.
pub fn truncation_marker(removed_tokens: usize) -> String {
    format!("…{removed_tokens} tokens truncated…")
}

/// The largest char boundary `<= index` (clamped to the text's length).
pub(crate) fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut i = index.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary `>= index` (clamped to the text's length).
fn ceil_char_boundary(text: &str, index: usize) -> usize {
    let mut i = index.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn short_text_is_unchanged() {
        let r = truncate_middle("hello\n", 10);
        assert_eq!(
            r,
            TruncationResult {
                text: "hello\n".into(),
                original_tokens: 2,
                truncated: false
            }
        );
    }

    #[test]
    fn long_text_keeps_head_and_tail_on_char_boundaries() {
        let text = "😀😀😀😀😀😀😀😀😀😀\nsecond line with text\n";
        let r = truncate_middle(text, 8);
        assert_eq!(
            r.text,
            "Warning: truncated output (original token count: 16)\nTotal output lines: 2\n\n\
             😀😀😀😀…8 tokens truncated… line with text\n"
        );
        assert!(r.truncated);
        assert_eq!(r.original_tokens, 16);
    }

    #[test]
    fn zero_budget_keeps_only_the_marker() {
        let r = truncate_middle("abcdef", 0);
        assert!(r.text.ends_with("\n\n…2 tokens truncated…"), "{}", r.text);
    }

    #[test]
    fn a_budget_smaller_than_one_character_cuts_cleanly() {
        let r = truncate_middle("ééé", 0);
        assert!(r.text.ends_with("…2 tokens truncated…"));
        let r = truncate_middle("éééééé", 1);
        assert!(r.text.ends_with("é…2 tokens truncated…é"), "{}", r.text);
    }
}
