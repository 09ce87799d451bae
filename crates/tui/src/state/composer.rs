//! The composer: a multi-line draft with a cursor and a history of sent messages.
//! Enter submits; Shift+Enter, Alt+Enter and Ctrl+J insert a newline; Up on the first line
//! and Down on the last recall history; Ctrl+R searches it.
//!
//! A large paste stands in the draft as a placeholder (`[Pasted Content 1234 chars]`) that
//! Backspace at its end expands back into the text, once; the message sent carries the whole
//! paste. An attached image stands as `[Image #N]`.

/// A paste longer than this many characters (or lines) is shown as a placeholder.
pub const LARGE_PASTE_CHARS: usize = 1000;
pub const LARGE_PASTE_LINES: usize = 20;

/// Ctrl+R: the query and the history entry it found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistorySearch {
    pub query: String,
    /// Index into the history of the entry shown.
    pub hit: Option<usize>,
    /// The draft put aside, back on Esc.
    saved: String,
}

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
    /// Placeholders of large pastes and the text each stands for.
    pastes: Vec<(String, String)>,
    /// Placeholders of attached images and their paths.
    images: Vec<(String, String)>,
    /// How many images were attached so far (the `N` of `[Image #N]`).
    image_count: usize,
    search: Option<HistorySearch>,
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

    /// Pasted text: a large paste becomes a placeholder, anything else goes in as it is.
    pub fn paste(&mut self, s: &str) {
        let s = s.replace("\r\n", "\n").replace('\r', "\n");
        let chars = s.chars().count();
        if chars <= LARGE_PASTE_CHARS && s.lines().count() <= LARGE_PASTE_LINES {
            self.insert_str(&s);
            return;
        }
        let mut placeholder = format!("[Pasted Content {chars} chars]");
        let mut n = 1;
        while self.pastes.iter().any(|(p, _)| *p == placeholder) {
            n += 1;
            placeholder = format!("[Pasted Content {chars} chars #{n}]");
        }
        self.insert_str(&placeholder);
        self.pastes.push((placeholder, s));
    }

    /// Puts `[Image #N]` at the cursor for an image file; it is sent with the message.
    pub fn attach_image(&mut self, path: &str) {
        self.image_count += 1;
        let placeholder = format!("[Image #{}]", self.image_count);
        self.insert_str(&placeholder);
        self.images.push((placeholder, path.to_owned()));
    }

    /// The images whose placeholders are still in the draft, in their order in it; the
    /// attachments are forgotten (call before [`Composer::take`]).
    pub fn take_images(&mut self) -> Vec<String> {
        let mut found: Vec<(usize, String)> = self
            .images
            .drain(..)
            .filter_map(|(p, path)| self.text.find(&p).map(|at| (at, path)))
            .collect();
        found.sort();
        self.image_count = 0;
        found.into_iter().map(|(_, path)| path).collect()
    }

    pub fn backspace(&mut self) {
        // At the end of a paste placeholder: the paste comes back as text.
        if let Some(i) = self
            .pastes
            .iter()
            .position(|(p, _)| self.text[..self.cursor].ends_with(p.as_str()))
        {
            let (placeholder, content) = self.pastes.remove(i);
            let start = self.cursor - placeholder.len();
            self.text.replace_range(start..self.cursor, &content);
            self.cursor = start + content.len();
            return;
        }
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

    /// The draft with its pastes expanded, left in place (for editing it elsewhere).
    pub fn expanded(&self) -> String {
        let mut text = self.text.clone();
        for (placeholder, content) in &self.pastes {
            if let Some(at) = text.find(placeholder.as_str()) {
                text.replace_range(at..at + placeholder.len(), content);
            }
        }
        text
    }

    /// Replaces the draft with `text` as edited elsewhere: pastes are part of it now, and
    /// attached images stay attached.
    pub fn replace_edited(&mut self, text: &str) {
        self.pastes.clear();
        self.set_text(text);
        self.browsing = None;
    }

    /// Takes the draft for sending and remembers it in the history.
    pub fn take(&mut self) -> String {
        let mut text = std::mem::take(&mut self.text);
        for (placeholder, content) in self.pastes.drain(..) {
            if let Some(at) = text.find(&placeholder) {
                text.replace_range(at..at + placeholder.len(), &content);
            }
        }
        self.images.clear();
        self.image_count = 0;
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
        self.pastes.clear();
        self.images.clear();
        self.image_count = 0;
    }

    /// Earlier sessions' messages, oldest first, before this session's.
    pub fn seed_history(&mut self, entries: Vec<String>) {
        let mut history = entries;
        history.append(&mut self.history);
        self.history = history;
    }

    /// Replaces the text from byte `start` to the cursor with `with` (a completion).
    pub fn replace_before_cursor(&mut self, start: usize, with: &str) {
        let start = start.min(self.cursor);
        self.text.replace_range(start..self.cursor, with);
        self.cursor = start + with.len();
    }

    pub fn history_entry(&self, i: usize) -> Option<&str> {
        self.history.get(i).map(String::as_str)
    }

    pub fn search(&self) -> Option<&HistorySearch> {
        self.search.as_ref()
    }

    /// Ctrl+R: starts a search, or finds the next older match of the query.
    pub fn search_older(&mut self) {
        match &mut self.search {
            None => {
                self.search = Some(HistorySearch {
                    saved: self.text.clone(),
                    ..HistorySearch::default()
                });
            }
            Some(search) => {
                let before = search.hit.unwrap_or(self.history.len());
                search.hit = find_back(&self.history, &search.query, before).or(search.hit);
            }
        }
    }

    /// A key typed into the search: the newest entry containing the query.
    pub fn search_push(&mut self, c: char) {
        if let Some(search) = &mut self.search {
            search.query.push(c);
            search.hit = find_back(&self.history, &search.query, self.history.len());
        }
    }

    pub fn search_pop(&mut self) {
        if let Some(search) = &mut self.search {
            search.query.pop();
            search.hit = if search.query.is_empty() {
                None
            } else {
                find_back(&self.history, &search.query, self.history.len())
            };
        }
    }

    /// Enter: the entry found becomes the draft (not sent), or the draft stays.
    pub fn search_accept(&mut self) {
        if let Some(search) = self.search.take() {
            self.text = match search.hit {
                Some(i) => self.history[i].clone(),
                None => search.saved,
            };
            self.cursor = self.text.len();
        }
    }

    /// Esc: back to the draft as it was.
    pub fn search_cancel(&mut self) {
        if let Some(search) = self.search.take() {
            self.text = search.saved;
            self.cursor = self.text.len();
        }
    }
}

/// The newest entry before `before` that contains `query` (case-insensitive).
fn find_back(history: &[String], query: &str, before: usize) -> Option<usize> {
    if query.is_empty() {
        return None;
    }
    let query = query.to_lowercase();
    history[..before.min(history.len())]
        .iter()
        .rposition(|entry| entry.to_lowercase().contains(&query))
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
    fn a_large_paste_is_a_placeholder_that_backspace_expands_once_and_enter_sends_whole() {
        let mut c = Composer::default();
        let big = "x".repeat(1200);
        c.insert_str("see ");
        c.paste(&big);
        assert_eq!(c.text(), "see [Pasted Content 1200 chars]");
        c.paste(&big);
        assert_eq!(
            c.text(),
            "see [Pasted Content 1200 chars][Pasted Content 1200 chars #2]"
        );
        c.backspace();
        assert_eq!(c.text(), format!("see [Pasted Content 1200 chars]{big}"));
        c.backspace();
        assert_eq!(c.text().len(), 4 + 27 + 1199, "a plain backspace now");
        c.set_text("");
        c.paste(&big);
        c.insert_str(" end");
        assert_eq!(c.take(), format!("{big} end"));
        c.paste("short\npaste");
        assert_eq!(c.text(), "short\npaste");
    }

    #[test]
    fn ctrl_r_finds_older_matches_enter_keeps_esc_restores() {
        let mut c = Composer::default();
        for m in ["cargo test", "git status", "cargo build"] {
            c.set_text(m);
            c.take();
        }
        c.set_text("draft");
        c.search_older();
        for ch in "cargo".chars() {
            c.search_push(ch);
        }
        assert_eq!(c.search().and_then(|s| s.hit), Some(2));
        c.search_older();
        assert_eq!(c.search().and_then(|s| s.hit), Some(0));
        c.search_older();
        assert_eq!(c.search().and_then(|s| s.hit), Some(0), "no older one");
        c.search_accept();
        assert_eq!(c.text(), "cargo test");
        c.set_text("mine");
        c.search_older();
        c.search_push('g');
        c.search_cancel();
        assert_eq!(c.text(), "mine");
    }

    #[test]
    fn attached_images_are_sent_in_their_order_in_the_draft() {
        let mut c = Composer::default();
        c.attach_image("/a.png");
        c.insert_str(" and ");
        c.attach_image("/b.png");
        assert_eq!(c.text(), "[Image #1] and [Image #2]");
        c.home();
        c.insert_str("[Image #2] first, ");
        c.set_text("[Image #2] only");
        assert_eq!(c.take_images(), vec!["/b.png".to_owned()]);
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
