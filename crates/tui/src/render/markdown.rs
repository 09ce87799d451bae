//! Markdown to terminal lines, wrapped to a width: headings (kept with their `#`s, as
//! Codex shows them), emphasis, inline code, links (the address after the text), bullet
//! and numbered lists, block quotes, fenced code (indented, not wrapped into prose), rules,
//! and tables laid out in columns whose cells wrap, instead of raw pipes.
//!
//! The same function draws a streaming answer and a finished one, so a cell never changes
//! shape when it completes.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::wrap::{plain, width, wrap_line};

/// Renders `text` to lines at most `max` columns wide.
pub fn render_markdown(text: &str, max: usize) -> Vec<Line<'static>> {
    let mut r = Renderer::new(max.max(8));
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(text, options) {
        r.event(event);
    }
    r.flush();
    while r.out.last().is_some_and(|l| plain(l).is_empty()) {
        r.out.pop();
    }
    r.out
}

pub fn code_style() -> Style {
    Style::default().fg(Color::Cyan)
}

struct ListLevel {
    /// The next number of an ordered list.
    next: Option<u64>,
}

struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Line<'static>>>,
    row: Vec<Line<'static>>,
    header_rows: usize,
}

struct Renderer {
    max: usize,
    out: Vec<Line<'static>>,
    spans: Vec<Span<'static>>,
    styles: Vec<Style>,
    lists: Vec<ListLevel>,
    /// The bullet of an item whose first line is not written yet.
    item_bullet: Option<String>,
    quote_depth: usize,
    code: Option<String>,
    /// The fenced block's info string (its language), for highlighting.
    code_lang: String,
    links: Vec<String>,
    table: Option<Table>,
}

impl Renderer {
    fn new(max: usize) -> Self {
        Self {
            max,
            out: Vec::new(),
            spans: Vec::new(),
            styles: vec![Style::default()],
            lists: Vec::new(),
            item_bullet: None,
            quote_depth: 0,
            code: None,
            code_lang: String::new(),
            links: Vec::new(),
            table: None,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let style = f(self.style());
        self.styles.push(style);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn blank(&mut self) {
        if self.out.last().is_some_and(|l| !plain(l).is_empty()) {
            self.out.push(Line::default());
        }
    }

    /// The indent of lines inside the current lists and quotes; `levels` lists count.
    fn indent_of(&self, levels: usize) -> String {
        let mut s = "│ ".repeat(self.quote_depth);
        for level in self.lists.iter().take(levels) {
            s.push_str(if level.next.is_some() { "   " } else { "  " });
        }
        s
    }

    fn indent(&self) -> String {
        self.indent_of(self.lists.len())
    }

    /// Writes the pending inline text as wrapped lines.
    fn flush(&mut self) {
        if self.spans.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.spans);
        let indent = self.indent();
        let first = match self.item_bullet.take() {
            Some(bullet) => format!(
                "{}{bullet}",
                self.indent_of(self.lists.len().saturating_sub(1))
            ),
            None => indent.clone(),
        };
        let rest = " ".repeat(width(&first).max(width(&indent)));
        let inner = self.max.saturating_sub(width(&rest)).max(4);
        for (n, line) in wrap_line(&Line::from(spans), inner, "")
            .into_iter()
            .enumerate()
        {
            let lead = if n == 0 { first.clone() } else { rest.clone() };
            let mut spans = vec![Span::raw(lead)];
            spans.extend(line.spans);
            self.out.push(Line::from(spans));
        }
    }

    fn text(&mut self, text: &str) {
        if let Some(code) = &mut self.code {
            code.push_str(text);
            return;
        }
        let span = Span::styled(text.to_owned(), self.style());
        if let Some(table) = &mut self.table {
            match table.row.last_mut() {
                Some(cell) => cell.spans.push(span),
                None => table.row.push(Line::from(vec![span])),
            }
            return;
        }
        self.spans.push(span);
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                let span = Span::styled(t.into_string(), code_style());
                match &mut self.table {
                    Some(table) => match table.row.last_mut() {
                        Some(cell) => cell.spans.push(span),
                        None => table.row.push(Line::from(vec![span])),
                    },
                    None => self.spans.push(span),
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                self.blank();
                self.out.push(Line::styled(
                    "─".repeat(self.max.min(40)),
                    Style::default().add_modifier(Modifier::DIM),
                ));
                self.out.push(Line::default());
            }
            Event::Html(t) | Event::InlineHtml(t) => self.text(&t),
            Event::TaskListMarker(done) => self.text(if done { "[x] " } else { "[ ] " }),
            Event::FootnoteReference(t) => self.text(&format!("[{t}]")),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {}
            Tag::Heading { level, .. } => {
                self.flush();
                self.blank();
                let hashes = match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    HeadingLevel::H3 => 3,
                    HeadingLevel::H4 => 4,
                    HeadingLevel::H5 => 5,
                    HeadingLevel::H6 => 6,
                };
                self.push_style(|s| s.add_modifier(Modifier::BOLD));
                let prefix = format!("{} ", "#".repeat(hashes));
                self.text(&prefix);
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quote_depth += 1;
                self.push_style(|s| s.add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.blank();
                self.code_lang = match kind {
                    CodeBlockKind::Fenced(lang) => lang.into_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some(String::new());
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
                self.lists.push(ListLevel { next: start });
            }
            Tag::Item => {
                self.flush();
                let bullet = match self.lists.last_mut() {
                    Some(ListLevel { next: Some(n) }) => {
                        let b = format!("{n}. ");
                        *n += 1;
                        b
                    }
                    _ => "• ".to_owned(),
                };
                self.item_bullet = Some(bullet);
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.links.push(dest_url.into_string());
                self.push_style(|s| s.add_modifier(Modifier::UNDERLINED));
            }
            Tag::Image { dest_url, .. } => {
                self.links.push(dest_url.into_string());
                self.push_style(|s| s.add_modifier(Modifier::UNDERLINED));
            }
            Tag::Table(alignments) => {
                self.flush();
                self.blank();
                self.table = Some(Table {
                    alignments,
                    rows: Vec::new(),
                    row: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.row.clear();
                }
            }
            Tag::TableCell => {
                if let Some(t) = &mut self.table {
                    t.row.push(Line::default());
                }
            }
            Tag::FootnoteDefinition(_)
            | Tag::HtmlBlock
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_)
            | Tag::Superscript
            | Tag::Subscript => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                if self.lists.is_empty() {
                    self.out.push(Line::default());
                }
            }
            TagEnd::Heading(_) => {
                self.pop_style();
                self.flush();
                self.out.push(Line::default());
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.pop_style();
                self.quote_depth = self.quote_depth.saturating_sub(1);
            }
            TagEnd::CodeBlock => {
                let code = self.code.take().unwrap_or_default();
                let code = code.trim_end_matches('\n');
                let indent = format!("{}    ", self.indent());
                let coloured = super::highlight::highlight(code, &self.code_lang);
                for (i, line) in code.lines().enumerate() {
                    let line = match coloured.as_ref().and_then(|c| c.get(i)) {
                        Some(spans) => Line::from(spans.clone()),
                        None => Line::from(Span::styled(line.to_owned(), code_style())),
                    };
                    for (n, wrapped) in
                        wrap_line(&line, self.max.saturating_sub(width(&indent)).max(4), "")
                            .into_iter()
                            .enumerate()
                    {
                        let lead = if n == 0 {
                            indent.clone()
                        } else {
                            format!("{indent}  ")
                        };
                        let mut spans = vec![Span::raw(lead)];
                        spans.extend(wrapped.spans);
                        self.out.push(Line::from(spans));
                    }
                }
                self.out.push(Line::default());
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.out.push(Line::default());
                }
            }
            TagEnd::Item => self.flush(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                self.pop_style();
                if let Some(url) = self.links.pop() {
                    let shown: String = self.spans.iter().map(|s| s.content.as_ref()).collect();
                    if !url.is_empty() && !shown.ends_with(&url) {
                        self.spans.push(Span::styled(
                            format!(" ({url})"),
                            Style::default().add_modifier(Modifier::DIM),
                        ));
                    }
                }
            }
            TagEnd::TableCell => {}
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.rows.push(std::mem::take(&mut t.row));
                    t.header_rows = t.rows.len();
                }
            }
            TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    t.rows.push(std::mem::take(&mut t.row));
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let lines = layout_table(&table, self.max);
                    self.out.extend(lines);
                    self.out.push(Line::default());
                }
            }
            TagEnd::FootnoteDefinition
            | TagEnd::HtmlBlock
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_)
            | TagEnd::Superscript
            | TagEnd::Subscript => {}
        }
    }
}

/// Narrowest a column gets before the table overflows.
const MIN_COLUMN: usize = 3;

/// Column widths that fit `max` columns (borders included): natural widths when they fit,
/// otherwise the widest columns give way first.
fn column_widths(natural: &[usize], max: usize) -> Vec<usize> {
    let overhead = 3 * natural.len() + 1;
    let available = max.saturating_sub(overhead);
    let mut widths: Vec<usize> = natural.iter().map(|w| (*w).max(1)).collect();
    while widths.iter().sum::<usize>() > available {
        let Some((index, widest)) = widths
            .iter()
            .enumerate()
            .max_by_key(|(_, w)| **w)
            .map(|(i, w)| (i, *w))
        else {
            break;
        };
        if widest <= MIN_COLUMN {
            break;
        }
        widths[index] -= 1;
    }
    widths
}

fn layout_table(table: &Table, max: usize) -> Vec<Line<'static>> {
    let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
    if columns == 0 {
        return Vec::new();
    }
    let natural: Vec<usize> = (0..columns)
        .map(|c| {
            table
                .rows
                .iter()
                .filter_map(|r| r.get(c))
                .map(|cell| width(&plain(cell)))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let widths = column_widths(&natural, max);
    let border = Style::default().add_modifier(Modifier::DIM);
    let rule = |left: &str, mid: &str, right: &str| {
        let inner: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
        Line::styled(format!("{left}{}{right}", inner.join(mid)), border)
    };
    let mut out = vec![rule("┌", "┬", "┐")];
    for (r, row) in table.rows.iter().enumerate() {
        let header = r < table.header_rows;
        let wrapped: Vec<Vec<Line<'static>>> = (0..columns)
            .map(|c| {
                let mut cell = row.get(c).cloned().unwrap_or_default();
                if header {
                    cell = cell.patch_style(Style::default().add_modifier(Modifier::BOLD));
                }
                wrap_line(&cell, widths[c], "")
            })
            .collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
        for l in 0..height {
            let mut spans = vec![Span::styled("│", border)];
            for c in 0..columns {
                let part = wrapped[c].get(l).cloned().unwrap_or_default();
                let pad = widths[c].saturating_sub(width(&plain(&part)));
                let (before, after) = match table.alignments.get(c) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                spans.push(Span::raw(" ".repeat(1 + before)));
                spans.extend(part.spans);
                spans.push(Span::raw(" ".repeat(1 + after)));
                spans.push(Span::styled("│", border));
            }
            out.push(Line::from(spans));
        }
        if header && r + 1 == table.header_rows {
            out.push(rule("├", "┼", "┤"));
        }
    }
    out.push(rule("└", "┴", "┘"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn texts(md: &str, max: usize) -> Vec<String> {
        render_markdown(md, max).iter().map(plain).collect()
    }

    #[test]
    fn lists_emphasis_and_code_lose_their_markers() {
        assert_eq!(
            texts(
                "## Summary\n\nSome **bold** and `code`.\n\n- one\n- two\n  1. nested\n",
                40
            ),
            [
                "## Summary",
                "",
                "Some bold and code.",
                "",
                "• one",
                "• two",
                "  1. nested"
            ]
        );
    }

    #[test]
    fn a_table_is_laid_out_and_its_cells_wrap() {
        let md = "| name | what it does |\n|---|---|\n| tui | draws the terminal user interface for people |\n";
        let lines = texts(md, 32);
        assert_eq!(
            lines,
            [
                "┌──────┬───────────────────────┐",
                "│ name │ what it does          │",
                "├──────┼───────────────────────┤",
                "│ tui  │ draws the terminal    │",
                "│      │ user interface for    │",
                "│      │ people                │",
                "└──────┴───────────────────────┘",
            ]
        );
        assert!(lines.iter().all(|l| width(l) <= 32), "{lines:#?}");
    }

    #[test]
    fn links_show_their_address() {
        assert_eq!(
            texts("See [the docs](https://example.com/docs).", 80),
            ["See the docs (https://example.com/docs)."]
        );
    }
}
