//! Word wrapping of styled lines to a width, measured in terminal columns
//! (`unicode-width`), so heights are known before anything is drawn.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Display width of `text` in columns.
pub fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// Wraps `line` to `width` columns, breaking at spaces where it can and inside words where
/// it must. Every output line after the first starts with `indent` (styled as the prefix).
pub fn wrap_line(line: &Line<'static>, max: usize, indent: &str) -> Vec<Line<'static>> {
    let max = max.max(1);
    let indent_width = width(indent);
    // Split into (char, style) pairs: simple, and exact for any mix of spans.
    let chars: Vec<(char, Style)> = line
        .spans
        .iter()
        .flat_map(|s| {
            let style = line.style.patch(s.style);
            s.content.chars().map(move |c| (c, style))
        })
        .collect();
    let mut out: Vec<Vec<(char, Style)>> = Vec::new();
    let mut current: Vec<(char, Style)> = Vec::new();
    let mut current_width = 0usize;
    let mut i = 0;
    while i < chars.len() {
        // The next word (up to and including its trailing spaces).
        let start = i;
        while i < chars.len() && chars[i].0 != ' ' {
            i += 1;
        }
        while i < chars.len() && chars[i].0 == ' ' {
            i += 1;
        }
        let word = &chars[start..i];
        let word_width: usize = word.iter().map(|(c, _)| c.width().unwrap_or(0)).sum();
        let trimmed_width: usize = word
            .iter()
            .rev()
            .skip_while(|(c, _)| *c == ' ')
            .map(|(c, _)| c.width().unwrap_or(0))
            .sum();
        let limit = if out.is_empty() {
            max
        } else {
            max.saturating_sub(indent_width).max(1)
        };
        if current_width + trimmed_width <= limit {
            current.extend_from_slice(word);
            current_width += word_width;
            continue;
        }
        if !current.is_empty() {
            out.push(std::mem::take(&mut current));
            current_width = 0;
        }
        let limit = max.saturating_sub(indent_width).max(1);
        if trimmed_width <= limit {
            current.extend_from_slice(word);
            current_width = word_width;
            continue;
        }
        // A word longer than a line: break it.
        for &(c, style) in word {
            let w = c.width().unwrap_or(0);
            let limit = if out.is_empty() { max } else { limit };
            if current_width + w > limit && !current.is_empty() {
                out.push(std::mem::take(&mut current));
                current_width = 0;
            }
            current.push((c, style));
            current_width += w;
        }
    }
    if !current.is_empty() || out.is_empty() {
        out.push(current);
    }
    out.into_iter()
        .enumerate()
        .map(|(n, chars)| {
            // Trailing spaces are dropped: they would only wrap again.
            let end = chars
                .iter()
                .rposition(|(c, _)| *c != ' ')
                .map_or(0, |p| p + 1);
            let mut body: Vec<Span<'static>> = Vec::new();
            for (c, style) in &chars[..end] {
                match body.last_mut() {
                    Some(last) if last.style == *style => last.content.to_mut().push(*c),
                    _ => body.push(Span::styled(c.to_string(), *style)),
                }
            }
            if n > 0 && !indent.is_empty() {
                body.insert(0, Span::raw(indent.to_owned()));
            }
            Line::from(body)
        })
        .collect()
}

/// Prefixes the first line with `first` and the rest with `rest`, wrapping to `max`.
pub fn prefixed(
    lines: Vec<Line<'static>>,
    max: usize,
    first: Span<'static>,
    rest: &str,
) -> Vec<Line<'static>> {
    let inner = max.saturating_sub(width(rest)).max(1);
    let mut out = Vec::new();
    for (n, line) in lines.into_iter().enumerate() {
        for (m, wrapped) in wrap_line(&line, inner, "").into_iter().enumerate() {
            let lead = if n == 0 && m == 0 {
                first.clone()
            } else {
                Span::raw(rest.to_owned())
            };
            let mut spans = vec![lead];
            spans.extend(wrapped.spans);
            out.push(Line::from(spans));
        }
    }
    out
}

/// The plain text of a line (for tests and for measuring).
pub fn plain(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(plain).collect()
    }

    #[test]
    fn wraps_at_spaces_and_breaks_long_words() {
        let line = Line::from("the quick brown fox jumps");
        assert_eq!(
            texts(&wrap_line(&line, 10, "")),
            ["the quick", "brown fox", "jumps"]
        );
        let line = Line::from("abcdefghijklmnop end");
        assert_eq!(
            texts(&wrap_line(&line, 6, "  ")),
            ["abcdef", "  ghij", "  klmn", "  op", "  end"]
        );
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let line = Line::from("日本語のテキスト");
        let wrapped = wrap_line(&line, 6, "");
        assert_eq!(texts(&wrapped), ["日本語", "のテキ", "スト"]);
    }
}
