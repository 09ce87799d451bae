//! Syntax highlighting of fenced code: syntect's built-in syntaxes parse the code into
//! scopes, and a small palette of our own colours them (no theme files in the binary).
//! An unknown language is left to the plain code style.

use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::parsing::{ParseState, ScopeStack, SyntaxSet};
use syntect::util::LinesWithEndings;

/// Code longer than this is not highlighted (it is shown plain): parsing is per frame for
/// a streaming answer.
const MAX_HIGHLIGHT_BYTES: usize = 64 * 1024;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// The colour of the innermost scope that has one.
fn style_for(stack: &ScopeStack) -> Style {
    for scope in stack.as_slice().iter().rev() {
        let name = scope.build_string();
        let style = if name.starts_with("comment") {
            Some(
                Style::default()
                    .add_modifier(Modifier::DIM)
                    .add_modifier(Modifier::ITALIC),
            )
        } else if name.starts_with("string") {
            Some(Style::default().fg(Color::Green))
        } else if name.starts_with("constant.numeric")
            || name.starts_with("constant.language")
            || name.starts_with("constant.character")
        {
            Some(Style::default().fg(Color::Cyan))
        } else if name.starts_with("keyword") || name.starts_with("storage") {
            Some(Style::default().fg(Color::Magenta))
        } else if name.starts_with("entity.name.function") || name.starts_with("support.function") {
            Some(Style::default().fg(Color::Blue))
        } else if name.starts_with("entity.name.type")
            || name.starts_with("entity.name.class")
            || name.starts_with("support.type")
        {
            Some(Style::default().fg(Color::Yellow))
        } else {
            None
        };
        if let Some(style) = style {
            return style;
        }
    }
    Style::default()
}

/// The code's lines as styled spans, or `None` when the language is not known (or the
/// code is too long, or does not parse).
pub fn highlight(code: &str, lang: &str) -> Option<Vec<Vec<Span<'static>>>> {
    let token = lang
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .filter(|t| !t.is_empty())?;
    if code.len() > MAX_HIGHLIGHT_BYTES {
        return None;
    }
    let set = syntaxes();
    let syntax = set
        .find_syntax_by_token(token)
        .or_else(|| set.find_syntax_by_extension(token))?;
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut lines = Vec::new();
    for line in LinesWithEndings::from(code) {
        let ops = state.parse_line(line, set).ok()?;
        let mut spans = Vec::new();
        let mut at = 0;
        for (offset, op) in ops {
            let offset = offset.min(line.len());
            if offset > at {
                spans.push(Span::styled(line[at..offset].to_owned(), style_for(&stack)));
                at = offset;
            }
            stack.apply(&op).ok()?;
        }
        if at < line.len() {
            spans.push(Span::styled(line[at..].to_owned(), style_for(&stack)));
        }
        // The newline is not drawn.
        if let Some(last) = spans.last_mut() {
            let trimmed = last.content.trim_end_matches(['\n', '\r']).to_owned();
            last.content = trimmed.into();
        }
        spans.retain(|s| !s.content.is_empty());
        lines.push(spans);
    }
    Some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_keywords_strings_and_comments_get_their_colours() {
        let lines = highlight("fn main() {\n    let s = \"hi\"; // greet\n}\n", "rust").unwrap();
        assert_eq!(lines.len(), 3);
        let style_of = |text: &str| {
            lines
                .iter()
                .flatten()
                .find(|s| s.content.contains(text))
                .map(|s| s.style)
                .unwrap()
        };
        assert_eq!(style_of("fn").fg, Some(Color::Magenta));
        assert_eq!(style_of("hi").fg, Some(Color::Green));
        assert!(style_of("greet").add_modifier.contains(Modifier::DIM));
        let text: String = lines[1].iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "    let s = \"hi\"; // greet");
    }

    #[test]
    fn an_unknown_language_is_not_highlighted() {
        assert!(highlight("x", "no-such-language").is_none());
        assert!(highlight("x", "").is_none());
    }
}
