//! Ctrl+V (and Ctrl+Shift+V where the terminal reports it as a key): the state asks the app
//! loop to read the system clipboard ([`Action::PasteClipboard`]) and takes the result back
//! as [`AppEvent::Clipboard`]: an image saved as a file is attached as `[Image #N]` at the
//! cursor, text goes in as a paste would (large pastes as placeholders), and anything else
//! is a one-line notice saying what to do instead. The reading itself is `crate::clipboard`.

use super::{Action, AppState, Cell};

/// What a Ctrl+V found.
#[derive(Debug, Clone, PartialEq)]
pub enum ClipboardPaste {
    /// An image, saved at `path` (or text that is the path of an image file).
    Image {
        path: String,
    },
    Text(String),
    /// Nothing could be pasted; `reason` says why and what to do instead.
    Unavailable {
        reason: String,
    },
}

impl AppState {
    /// Ctrl+V in the composer.
    pub(super) fn paste_clipboard(&mut self) -> Vec<Action> {
        vec![Action::PasteClipboard]
    }

    /// The clipboard's content, read by the app loop.
    pub(super) fn clipboard_read(&mut self, paste: ClipboardPaste) {
        match paste {
            ClipboardPaste::Image { path } => self.attach_image(&path),
            ClipboardPaste::Text(text) => self.on_paste(&text),
            ClipboardPaste::Unavailable { reason } => {
                self.history.push(Cell::Notice { text: reason });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::state::AppEvent;

    fn ctrl_v(state: &mut AppState, modifiers: KeyModifiers, c: char) -> Vec<Action> {
        state.on_key(KeyEvent::new(KeyCode::Char(c), modifiers), Instant::now())
    }

    #[test]
    fn ctrl_v_and_ctrl_shift_v_ask_for_the_clipboard_without_typing_anything() {
        let mut state = AppState::new();
        state.composer.set_text("see ");
        assert_eq!(
            ctrl_v(&mut state, KeyModifiers::CONTROL, 'v'),
            vec![Action::PasteClipboard]
        );
        assert_eq!(
            ctrl_v(&mut state, KeyModifiers::CONTROL | KeyModifiers::SHIFT, 'V'),
            vec![Action::PasteClipboard]
        );
        assert_eq!(state.composer.text(), "see ");
        // A plain v is typed.
        assert!(ctrl_v(&mut state, KeyModifiers::NONE, 'v').is_empty());
        assert_eq!(state.composer.text(), "see v");
    }

    #[test]
    fn a_clipboard_image_is_attached_at_the_cursor_and_sent_before_the_text() {
        let mut state = AppState::new();
        state.thread_id = Some("t1".to_owned());
        state.composer.set_text("look at  please");
        for _ in 0.." please".len() {
            state.composer.left();
        }
        let path = "/tmp/osprey-clipboard-x/clipboard-1.png".to_owned();
        state.apply(
            AppEvent::Clipboard(ClipboardPaste::Image { path: path.clone() }),
            Instant::now(),
        );
        assert_eq!(state.composer.text(), "look at [Image #1] please");
        let actions = state.on_key(KeyEvent::from(KeyCode::Enter), Instant::now());
        match &actions[..] {
            [Action::StartTurn { text, images, .. }] => {
                assert_eq!(text, "look at [Image #1] please");
                assert_eq!(images, &vec![path]);
            }
            other => panic!("expected one turn: {other:?}"),
        }
    }

    #[test]
    fn clipboard_text_goes_in_as_a_paste_would() {
        let mut state = AppState::new();
        state.apply(
            AppEvent::Clipboard(ClipboardPaste::Text("two\nlines".to_owned())),
            Instant::now(),
        );
        assert_eq!(state.composer.text(), "two\nlines");
        let big = "y".repeat(1500);
        state.apply(
            AppEvent::Clipboard(ClipboardPaste::Text(big)),
            Instant::now(),
        );
        assert_eq!(
            state.composer.text(),
            "two\nlines[Pasted Content 1500 chars]"
        );
    }

    #[test]
    fn no_clipboard_is_a_notice_and_the_draft_stays() {
        let mut state = AppState::new();
        state.composer.set_text("draft");
        let reason = "Ctrl+V: no clipboard here; paste or drag the image file's path instead";
        state.apply(
            AppEvent::Clipboard(ClipboardPaste::Unavailable {
                reason: reason.to_owned(),
            }),
            Instant::now(),
        );
        assert_eq!(state.composer.text(), "draft");
        assert_eq!(
            state.history.last(),
            Some(&Cell::Notice {
                text: reason.to_owned()
            })
        );
    }
}
