//! Light and dark backgrounds. Everything is drawn with one palette made for dark
//! backgrounds; on a light one, [`Theme::adapt`] maps the colours that would read badly
//! (white text, yellow, cyan, light green) to darker ones as the frame is drawn — one place
//! for every cell kind, the scrollback and the live area alike. `NO_COLOR` still wins:
//! crossterm writes no colour at all then.

use std::collections::HashMap;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;

/// What `[tui] theme` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ThemeSetting {
    /// Light when the terminal says its background is light (`COLORFGBG`), else dark.
    #[default]
    Auto,
    Light,
    Dark,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Theme {
    #[default]
    Dark,
    Light,
}

impl Theme {
    /// The theme for `setting`; `Auto` reads `COLORFGBG` (`fg;bg`, set by rxvt, Konsole and
    /// others), where a background of 7 or 15 is light.
    pub fn choose(setting: ThemeSetting, env: &HashMap<String, String>) -> Self {
        match setting {
            ThemeSetting::Light => Theme::Light,
            ThemeSetting::Dark => Theme::Dark,
            ThemeSetting::Auto => {
                let background = env
                    .get("COLORFGBG")
                    .and_then(|v| v.rsplit(';').next())
                    .and_then(|bg| bg.trim().parse::<u8>().ok());
                match background {
                    Some(7 | 15) => Theme::Light,
                    _ => Theme::Dark,
                }
            }
        }
    }

    /// Recolours the cells of `area` for this theme.
    pub fn adapt(self, buf: &mut Buffer, area: Rect) {
        if self == Theme::Dark {
            return;
        }
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                if let Some(cell) = buf.cell_mut((x, y)) {
                    cell.fg = on_light(cell.fg);
                }
            }
        }
    }
}

/// A dark-background colour as it should be on a light background.
fn on_light(color: Color) -> Color {
    match color {
        Color::White | Color::Gray => Color::Black,
        Color::Yellow | Color::LightYellow => Color::Indexed(130),
        Color::Cyan | Color::LightCyan => Color::Indexed(30),
        Color::Green | Color::LightGreen => Color::Indexed(28),
        Color::Magenta | Color::LightMagenta => Color::Indexed(127),
        Color::Blue | Color::LightBlue => Color::Indexed(25),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ratatui::style::Style;

    #[test]
    fn auto_follows_colorfgbg_and_the_settings_win() {
        let env = |v: &str| HashMap::from([("COLORFGBG".to_owned(), v.to_owned())]);
        assert_eq!(
            Theme::choose(ThemeSetting::Auto, &env("0;15")),
            Theme::Light
        );
        assert_eq!(
            Theme::choose(ThemeSetting::Auto, &env("0;default;7")),
            Theme::Light
        );
        assert_eq!(Theme::choose(ThemeSetting::Auto, &env("15;0")), Theme::Dark);
        assert_eq!(
            Theme::choose(ThemeSetting::Auto, &HashMap::new()),
            Theme::Dark
        );
        assert_eq!(Theme::choose(ThemeSetting::Dark, &env("0;15")), Theme::Dark);
        assert_eq!(
            Theme::choose(ThemeSetting::Light, &HashMap::new()),
            Theme::Light
        );
    }

    #[test]
    fn a_light_background_gets_dark_text_and_darker_accents() {
        let area = Rect::new(0, 0, 3, 1);
        let mut buf = Buffer::empty(area);
        buf.set_string(0, 0, "w", Style::default().fg(Color::White));
        buf.set_string(1, 0, "y", Style::default().fg(Color::Yellow));
        buf.set_string(2, 0, "r", Style::default().fg(Color::Red));
        let mut dark = buf.clone();
        Theme::Dark.adapt(&mut dark, area);
        assert_eq!(dark, buf, "the dark theme draws the palette as it is");
        Theme::Light.adapt(&mut buf, area);
        let fg: Vec<Color> = (0..3).map(|x| buf[(x, 0)].fg).collect();
        assert_eq!(fg, [Color::Black, Color::Indexed(130), Color::Red]);
    }
}
