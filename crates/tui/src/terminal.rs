//! The terminal: raw mode, bracketed paste and the kitty keyboard protocol's
//! disambiguation (so Shift+Enter is told apart from Enter where the terminal can), an
//! inline ratatui viewport at the bottom, and restoring everything on exit, on panic and on
//! Ctrl+C.
//!
//! # Inline mode
//!
//! Finished cells are written above the viewport with `Terminal::insert_before`, so they
//! land in the terminal's own scrollback (its scrolling, search and selection work). The
//! viewport holds only the live area and is exactly as tall as what it shows: when that
//! changes, [`Tui::set_height`] rebuilds the viewport at the same top row. ratatui finds an
//! inline viewport's place by asking the terminal where the cursor is; [`InlineBackend`]
//! answers that from where it last put the cursor, so only the very first placement asks
//! the terminal.
//!
//! # Resizes
//!
//! A terminal that re-wraps its lines on a resize (tmux, kitty, VTE) moves the live area by
//! an amount only it knows. The terminal's cursor is therefore kept hidden at the live
//! area's top-left between frames (the caret is a reversed cell), and after a resize the
//! terminal is asked where that cursor is: the old live area starts there, and is cleared
//! from there down before the new one is drawn.

use std::io::{self, Stdout, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::{cursor, execute, terminal};
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Rect, Size};
use ratatui::text::Line;
use ratatui::{Terminal, TerminalOptions, Viewport};

/// A crossterm backend that remembers where it put the cursor, so ratatui's cursor queries
/// (on every `insert_before`, and when a viewport is placed) are answered without a round
/// trip to the terminal, which may be slow or never answer.
pub struct InlineBackend {
    inner: CrosstermBackend<Stdout>,
    /// Where the cursor was last put; `None` until known, when the terminal is asked once.
    cursor: Option<Position>,
}

impl Backend for InlineBackend {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }
    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        self.inner.append_lines(n)
    }
    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> io::Result<Position> {
        if let Some(known) = self.cursor {
            return Ok(known);
        }
        match self.inner.get_cursor_position() {
            Ok(position) => {
                self.cursor = Some(position);
                Ok(position)
            }
            // A terminal that does not answer: start at the bottom row, scrolling up
            // whatever was on the screen rather than drawing over it.
            Err(_) => {
                let size = self.inner.size()?;
                Ok(Position::new(0, size.height.saturating_sub(1)))
            }
        }
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        let position = position.into();
        self.cursor = Some(position);
        self.inner.set_cursor_position(position)
    }
    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }
    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }
    fn size(&self) -> io::Result<Size> {
        self.inner.size()
    }
    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}

/// Whether the terminal is in the TUI's modes; restoring twice is harmless.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether a pager holds the alternate screen.
static ALTERNATE: AtomicBool = AtomicBool::new(false);

/// Puts the terminal into the TUI's modes.
pub fn enter() -> io::Result<()> {
    terminal::enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut out = io::stdout();
    execute!(out, EnableBracketedPaste)?;
    // Terminals without the kitty protocol ignore this sequence.
    let _ = execute!(
        out,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
    );
    Ok(())
}

/// Gives the terminal back as it was: modes off, cursor visible.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if ALTERNATE.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, terminal::LeaveAlternateScreen);
    }
    let _ = execute!(
        out,
        PopKeyboardEnhancementFlags,
        DisableBracketedPaste,
        cursor::Show
    );
    let _ = terminal::disable_raw_mode();
    let _ = out.flush();
}

/// Restores the terminal before a panic message is printed.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// An inline viewport `height` rows tall whose top row is `top`, known without asking the
/// terminal.
fn inline_terminal(top: u16, height: u16) -> io::Result<Terminal<InlineBackend>> {
    let backend = InlineBackend {
        inner: CrosstermBackend::new(io::stdout()),
        cursor: Some(Position::new(0, top)),
    };
    Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )
}

/// The inline terminal and its live viewport.
pub struct Tui {
    terminal: Terminal<InlineBackend>,
    height: u16,
    /// Set by the resize handler; the next frame rebuilds the viewport.
    pub resized: Arc<AtomicBool>,
    /// A full-screen view on the alternate screen (the pager), while one is open.
    fullscreen: Option<Terminal<InlineBackend>>,
    /// The background the colours are drawn for.
    pub theme: crate::render::theme::Theme,
}

impl Tui {
    pub fn new(height: u16) -> io::Result<Self> {
        let backend = InlineBackend {
            inner: CrosstermBackend::new(io::stdout()),
            cursor: None,
        };
        let terminal = Terminal::with_options(
            backend,
            TerminalOptions {
                viewport: Viewport::Inline(height.max(1)),
            },
        )?;
        Ok(Self {
            terminal,
            height: height.max(1),
            resized: Arc::new(AtomicBool::new(false)),
            fullscreen: None,
            theme: crate::render::theme::Theme::Dark,
        })
    }

    /// The terminal's size now (never a remembered one).
    pub fn size(&self) -> io::Result<Size> {
        self.terminal.backend().size()
    }

    /// Rebuilds the viewport `height` rows tall, starting where the current one starts
    /// (clamped to the screen). After a resize the rebuild happens even at the same height.
    pub fn set_height(&mut self, height: u16) -> io::Result<()> {
        let size = self.size()?;
        let height = height.clamp(1, size.height.max(1));
        let resized = self.resized.swap(false, Ordering::SeqCst);
        if height == self.height && !resized {
            return Ok(());
        }
        let top = if resized {
            // The terminal may have re-wrapped its lines (tmux, kitty, VTE do), moving the
            // live area. Its first row starts where the parked cursor now is (a cell at
            // column 0 stays at the start of its line when lines re-wrap); ask for it.
            match crossterm::cursor::position() {
                Ok((_, row)) => row,
                Err(_) => self.terminal.get_frame().area().y,
            }
        } else {
            self.terminal.get_frame().area().y
        };
        let top = top.min(size.height.saturating_sub(1));
        // Clears from the viewport's top to the end of the screen.
        self.terminal
            .backend_mut()
            .set_cursor_position(Position::new(0, top))?;
        self.terminal
            .backend_mut()
            .clear_region(ClearType::AfterCursor)?;
        self.terminal = inline_terminal(top, height)?;
        self.height = height;
        Ok(())
    }

    /// Writes finished lines into the scrollback, above the live area.
    pub fn insert_history(&mut self, lines: Vec<Line<'static>>) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let size = self.size()?;
        // insert_before draws one buffer; very long cells go in screen-sized pieces.
        for chunk in lines.chunks(usize::from(size.height.max(1))) {
            let chunk = chunk.to_vec();
            let height = u16::try_from(chunk.len()).unwrap_or(u16::MAX);
            let theme = self.theme;
            self.terminal.insert_before(height, |buf| {
                crate::render::draw_lines(&chunk, buf.area, buf);
                theme.adapt(buf, buf.area);
            })?;
        }
        Ok(())
    }

    /// Draws the live area; `cursor` (column, row within the area) is where the caret is
    /// drawn (a reversed cell). The terminal's own cursor is hidden and parked at the live
    /// area's top-left, so that after a resize its position tells where the terminal moved
    /// the live area ([`Tui::set_height`]).
    pub fn draw(&mut self, lines: &[Line<'static>], cursor: Option<(u16, u16)>) -> io::Result<()> {
        let theme = self.theme;
        self.terminal.draw(|frame| {
            let area: Rect = frame.area();
            crate::render::draw_lines(lines, area, frame.buffer_mut());
            theme.adapt(frame.buffer_mut(), area);
            if let Some((x, y)) = cursor
                && y < area.height
            {
                let caret = Position::new(area.x + x.min(area.width.saturating_sub(1)), area.y + y);
                if let Some(cell) = frame.buffer_mut().cell_mut(caret) {
                    cell.modifier.insert(ratatui::style::Modifier::REVERSED);
                }
            }
        })?;
        let top = self.terminal.get_frame().area().y;
        self.terminal
            .backend_mut()
            .set_cursor_position(Position::new(0, top))?;
        Backend::flush(self.terminal.backend_mut())
    }

    /// Draws a full-screen view on the alternate screen, entering it first; the inline
    /// screen and its scrollback stay as they were underneath.
    pub fn draw_fullscreen(
        &mut self,
        lines: &[Line<'static>],
        cursor: Option<(u16, u16)>,
    ) -> io::Result<()> {
        let fullscreen = match &mut self.fullscreen {
            Some(t) => t,
            None => {
                execute!(io::stdout(), terminal::EnterAlternateScreen)?;
                ALTERNATE.store(true, Ordering::SeqCst);
                // The same remembering backend: ratatui's clear asks where the cursor is,
                // and a query while the event reader runs would wait for its timeout.
                let mut t = Terminal::new(InlineBackend {
                    inner: CrosstermBackend::new(io::stdout()),
                    cursor: Some(Position::ORIGIN),
                })?;
                t.clear()?;
                self.fullscreen.insert(t)
            }
        };
        let theme = self.theme;
        fullscreen.draw(|frame| {
            let area = frame.area();
            crate::render::draw_lines(lines, area, frame.buffer_mut());
            theme.adapt(frame.buffer_mut(), area);
            if let Some((x, y)) = cursor
                && y < area.height
            {
                frame.set_cursor_position(Position::new(x.min(area.width.saturating_sub(1)), y));
            }
        })?;
        Ok(())
    }

    /// Back from the alternate screen (if there); the live area is drawn again whole.
    pub fn leave_fullscreen(&mut self) -> io::Result<()> {
        if self.fullscreen.take().is_some() {
            ALTERNATE.store(false, Ordering::SeqCst);
            execute!(io::stdout(), terminal::LeaveAlternateScreen)?;
            self.resized.store(true, Ordering::SeqCst);
        }
        Ok(())
    }

    /// Hands the terminal to another program (the person's editor): the live area cleared,
    /// the alternate screen left, the TUI's modes off. Returns the row to come back to.
    pub fn suspend(&mut self) -> io::Result<u16> {
        self.leave_fullscreen()?;
        self.clear_live()?;
        let top = self.terminal.get_frame().area().y;
        restore();
        Ok(top)
    }

    /// Takes the terminal back after [`Tui::suspend`]: modes on again, and the live area
    /// rebuilt at row `top` (a full-screen editor restores the screen and the cursor when it
    /// leaves its alternate screen; the row is not asked of the terminal, whose answer the
    /// event reader would swallow).
    pub fn resume(&mut self, top: u16) -> io::Result<()> {
        enter()?;
        let size = self.size()?;
        let top = top.min(size.height.saturating_sub(1));
        self.terminal = inline_terminal(top, self.height)?;
        self.resized.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Clears the live area and leaves the cursor at its top, for the exit message.
    pub fn clear_live(&mut self) -> io::Result<()> {
        let top = self.terminal.get_frame().area().y;
        self.terminal
            .backend_mut()
            .set_cursor_position(Position::new(0, top))?;
        self.terminal
            .backend_mut()
            .clear_region(ClearType::AfterCursor)?;
        self.terminal.backend_mut().show_cursor()?;
        Backend::flush(self.terminal.backend_mut())
    }
}
