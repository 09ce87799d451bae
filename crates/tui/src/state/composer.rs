//! The composer: a multi-line draft with a cursor and a history of sent messages.
//! Enter submits; Shift+Enter, Alt+Enter and Ctrl+J insert a newline; Up on the first line
//! and Down on the last recall history.

/// The draft being typed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Composer {
    text: String,
    /// Byte offset of the cursor in `text`, always on a char boundary.
    cursor: usize,
    history: Vec<String>,
    /// Position while browsing history (`None`: editing a fresh draft).
    browsing: Option<usize>,
    /// The fresh draft put aside while browsing.
    stash: String,
}

impl Composer {
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
    }

    pub fn insert_char(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
        self.browsing = None;
    }

    pub fn insert_str(&mut self, s: &str) {
        // Pasted text keeps its newlines; carriage returns from terminals become newlines.
        let s = s.replace("\r\n", "\n").replace('\r', "\n");
        self.text.insert_str(self.cursor, &s);
        self.cursor += s.len();
        self.browsing = None;
    }

    pub fn newline(&mut self) {
        self.insert_char('\n');
    }

    pub fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    pub fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    pub fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    pub fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    pub fn home(&mut self) {
        self.cursor = self.line_start();
    }

    pub fn end(&mut self) {
        self.cursor = self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i);
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    /// Deletes from the start of the line to the cursor (Ctrl+U).
    pub fn kill_to_line_start(&mut self) {
        let start = self.line_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Up: the previous line, or on the first line the previous history entry.
    pub fn up(&mut self) {
        let start = self.line_start();
        if start == 0 {
            self.history_prev();
            return;
        }
        let column = self.text[start..self.cursor].chars().count();
        let prev_start = self.text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        self.cursor = column_offset(&self.text, prev_start, start - 1, column);
    }

    /// Down: the next line, or on the last line the next history entry.
    pub fn down(&mut self) {
        let Some(rel) = self.text[self.cursor..].find('\n') else {
            self.history_next();
            return;
        };
        let column = self.text[self.line_start()..self.cursor].chars().count();
        let next_start = self.cursor + rel + 1;
        let next_end = self.text[next_start..]
            .find('\n')
            .map_or(self.text.len(), |i| next_start + i);
        self.cursor = column_offset(&self.text, next_start, next_end, column);
    }

    fn history_prev(&mut self) {
        if self.history.is_empty() {
            return;
        }
        let index = match self.browsing {
            None => {
                self.stash = self.text.clone();
                self.history.len() - 1
            }
            Some(0) => 0,
            Some(i) => i - 1,
        };
        self.browsing = Some(index);
        let entry = self.history[index].clone();
        self.text = entry;
        self.cursor = self.text.len();
    }

    fn history_next(&mut self) {
        let Some(index) = self.browsing else {
            return;
        };
        if index + 1 < self.history.len() {
            self.browsing = Some(index + 1);
            self.text = self.history[index + 1].clone();
        } else {
            self.browsing = None;
            self.text = std::mem::take(&mut self.stash);
        }
        self.cursor = self.text.len();
    }

    /// Takes the draft for sending and remembers it in the history.
    pub fn take(&mut self) -> String {
        let text = std::mem::take(&mut self.text);
        self.cursor = 0;
        self.browsing = None;
        self.stash.clear();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        text
    }

    /// Clears the draft without sending it (Ctrl+C with a draft).
    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.browsing = None;
    }
}

/// The byte offset of `column` chars into the line `start..end` (clamped to its end).
fn column_offset(text: &str, start: usize, end: usize, column: usize) -> usize {
    text[start..end]
        .char_indices()
        .nth(column)
        .map_or(end, |(i, _)| start + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editing_moves_the_cursor_over_whole_chars() {
        let mut c = Composer::default();
        for ch in "héllo".chars() {
            c.insert_char(ch);
        }
        c.left();
        c.left();
        c.left();
        c.left();
        c.backspace();
        assert_eq!(c.text(), "éllo");
        c.end();
        c.newline();
        c.insert_str("wor\r\nld");
        assert_eq!(c.text(), "éllo\nwor\nld");
        c.up();
        c.home();
        c.kill_to_line_start();
        assert_eq!(c.text(), "éllo\nwor\nld");
        c.end();
        c.kill_to_line_start();
        assert_eq!(c.text(), "éllo\n\nld");
    }

    #[test]
    fn up_and_down_recall_history_from_the_edges() {
        let mut c = Composer::default();
        c.set_text("first");
        c.take();
        c.set_text("second");
        c.take();
        c.set_text("draft");
        c.up();
        assert_eq!(c.text(), "second");
        c.up();
        assert_eq!(c.text(), "first");
        c.up();
        assert_eq!(c.text(), "first");
        c.down();
        assert_eq!(c.text(), "second");
        c.down();
        assert_eq!(c.text(), "draft", "the fresh draft comes back");
    }

    #[test]
    fn up_inside_a_multi_line_draft_moves_between_lines() {
        let mut c = Composer::default();
        c.set_text("first");
        c.take();
        c.set_text("ab\ncdef");
        c.up();
        assert_eq!(
            c.text(),
            "ab\ncdef",
            "not history: the cursor was on line 2"
        );
        assert_eq!(c.cursor(), 2, "clamped to the end of the shorter line");
        c.down();
        assert_eq!(c.cursor(), 5);
    }
}
