//! Light and dark backgrounds. Everything is drawn with one palette made for dark
//! backgrounds; on a light one, [`Theme::adapt`] maps the colours that would read badly
//! (white text, yellow, cyan, light green) to darker ones as the frame is drawn — one place
//! for every cell kind, the scrollback and the live area alike. `NO_COLOR` still wins:
//! crossterm writes no colour at all then.
//!
//! `auto` decides from `COLORFGBG` when it names a background, else from the terminal's
//! answer to an OSC 11 query ([`parse_osc11_reply`], asked by `crate::background`).

use std::collections::HashMap;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;

/// What `[tui] theme` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ThemeSetting {
    /// Light when the terminal says its background is light (`COLORFGBG`, else its answer
    /// to OSC 11), else dark.
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
    /// The theme for `setting` without asking the terminal (dark when undecided).
    pub fn choose(setting: ThemeSetting, env: &HashMap<String, String>) -> Self {
        Self::decided(setting, env).unwrap_or_default()
    }

    /// The theme `setting` and the environment decide, or `None` when only the terminal can
    /// tell: `Auto` reads `COLORFGBG` (`fg;bg`, set by rxvt, Konsole and others), where a
    /// background of 7 or 15 is light and any other number dark; without a number there, the
    /// terminal is to be asked (OSC 11).
    pub fn decided(setting: ThemeSetting, env: &HashMap<String, String>) -> Option<Self> {
        match setting {
            ThemeSetting::Light => Some(Theme::Light),
            ThemeSetting::Dark => Some(Theme::Dark),
            ThemeSetting::Auto => {
                let background = env
                    .get("COLORFGBG")
                    .and_then(|v| v.rsplit(';').next())
                    .and_then(|bg| bg.trim().parse::<u8>().ok())?;
                Some(match background {
                    7 | 15 => Theme::Light,
                    _ => Theme::Dark,
                })
            }
        }
    }

    /// The theme for a background colour: light when its relative luminance is over 0.5.
    pub fn for_background(background: Rgb) -> Self {
        if background.luminance() > 0.5 {
            Theme::Light
        } else {
            Theme::Dark
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

/// A colour as the terminal reports it, each channel from 0.0 to 1.0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rgb {
    pub r: f64,
    pub g: f64,
    pub b: f64,
}

impl Rgb {
    /// Relative luminance (sRGB channels made linear, weighted 0.2126, 0.7152, 0.0722).
    pub fn luminance(self) -> f64 {
        fn linear(c: f64) -> f64 {
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        }
        0.2126 * linear(self.r) + 0.7152 * linear(self.g) + 0.0722 * linear(self.b)
    }
}

/// The colour in a whole OSC 11 reply: `ESC ] 11 ; rgb:RRRR/GGGG/BBBB` ended by BEL or by
/// `ESC \`, each channel 1 to 4 hex digits (`rgba:…/AAAA`, which some terminals send, is
/// read too, its alpha ignored). `None` when `reply` is anything else.
pub fn parse_osc11_reply(reply: &[u8]) -> Option<Rgb> {
    let body = reply.strip_prefix(b"\x1b]11;")?;
    let body = body
        .strip_suffix(b"\x07")
        .or_else(|| body.strip_suffix(b"\x1b\\"))?;
    parse_color_spec(std::str::from_utf8(body).ok()?)
}

/// `rgb:R/G/B` or `rgba:R/G/B/A` (X11 colour syntax, 1 to 4 hex digits a channel).
fn parse_color_spec(spec: &str) -> Option<Rgb> {
    let (channels, count) = if let Some(rest) = spec.strip_prefix("rgba:") {
        (rest, 4)
    } else {
        (spec.strip_prefix("rgb:")?, 3)
    };
    let values: Vec<f64> = channels
        .split('/')
        .map(|hex| {
            let ok = (1..=4).contains(&hex.len()) && hex.chars().all(|c| c.is_ascii_hexdigit());
            let value = u32::from_str_radix(hex, 16).ok().filter(|_| ok)?;
            // Scaled by the largest value of its width: `ff` and `ffff` are both 1.0.
            let max = (1u32 << (4 * hex.len())) - 1;
            Some(f64::from(value) / f64::from(max))
        })
        .collect::<Option<_>>()?;
    match values[..] {
        [r, g, b] if count == 3 => Some(Rgb { r, g, b }),
        [r, g, b, _] if count == 4 => Some(Rgb { r, g, b }),
        _ => None,
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
    fn without_a_background_number_auto_leaves_it_to_the_terminal() {
        let env = |v: &str| HashMap::from([("COLORFGBG".to_owned(), v.to_owned())]);
        assert_eq!(Theme::decided(ThemeSetting::Auto, &HashMap::new()), None);
        assert_eq!(
            Theme::decided(ThemeSetting::Auto, &env("default;default")),
            None
        );
        assert_eq!(
            Theme::decided(ThemeSetting::Auto, &env("0;15")),
            Some(Theme::Light)
        );
        assert_eq!(
            Theme::decided(ThemeSetting::Dark, &HashMap::new()),
            Some(Theme::Dark)
        );
    }

    #[test]
    fn osc11_replies_with_either_terminator_and_any_channel_width_are_read() {
        let white = Some(Rgb {
            r: 1.0,
            g: 1.0,
            b: 1.0,
        });
        assert_eq!(parse_osc11_reply(b"\x1b]11;rgb:ffff/ffff/ffff\x07"), white);
        assert_eq!(
            parse_osc11_reply(b"\x1b]11;rgb:ffff/ffff/ffff\x1b\\"),
            white
        );
        assert_eq!(parse_osc11_reply(b"\x1b]11;rgb:FF/ff/Ff\x07"), white);
        assert_eq!(
            parse_osc11_reply(b"\x1b]11;rgba:ffff/ffff/ffff/0000\x07"),
            white
        );
        let grey = parse_osc11_reply(b"\x1b]11;rgb:8/80/8000\x07").unwrap();
        assert!((grey.r - 8.0 / 15.0).abs() < 1e-9, "{grey:?}");
        assert!((grey.g - 128.0 / 255.0).abs() < 1e-9, "{grey:?}");
        assert!((grey.b - 32768.0 / 65535.0).abs() < 1e-9, "{grey:?}");
        for bad in [
            &b"\x1b]11;rgb:ffff/ffff/ffff"[..],
            b"\x1b]10;rgb:ffff/ffff/ffff\x07",
            b"\x1b]11;rgb:ffff/ffff\x07",
            b"\x1b]11;rgb:fffff/ffff/ffff\x07",
            b"\x1b]11;rgb:gg/00/00\x07",
            b"\x1b]11;rgb:/00/00\x07",
            b"\x1b]11;#ffffff\x07",
            b"\x1b]11;?\x07",
        ] {
            assert_eq!(parse_osc11_reply(bad), None, "{}", bad.escape_ascii());
        }
    }

    #[test]
    fn a_background_is_light_when_its_luminance_is_over_a_half() {
        let theme = |reply: &[u8]| parse_osc11_reply(reply).map(Theme::for_background);
        assert_eq!(theme(b"\x1b]11;rgb:ffff/ffff/ffff\x07"), Some(Theme::Light));
        // Solarized light's base3 and a light grey.
        assert_eq!(theme(b"\x1b]11;rgb:fdfd/f6f6/e3e3\x07"), Some(Theme::Light));
        assert_eq!(theme(b"\x1b]11;rgb:c0/c0/c0\x07"), Some(Theme::Light));
        // Mid grey is dark by luminance (0.22), as are black and Solarized dark's base03.
        assert_eq!(theme(b"\x1b]11;rgb:80/80/80\x07"), Some(Theme::Dark));
        assert_eq!(theme(b"\x1b]11;rgb:0000/0000/0000\x07"), Some(Theme::Dark));
        assert_eq!(theme(b"\x1b]11;rgb:00/2b/36\x07"), Some(Theme::Dark));
        // Pure yellow is bright (0.93), pure blue is not (0.07).
        assert_eq!(theme(b"\x1b]11;rgb:ff/ff/00\x07"), Some(Theme::Light));
        assert_eq!(theme(b"\x1b]11;rgb:00/00/ff\x07"), Some(Theme::Dark));
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
