//! Turning shell words into the strings a command will receive.
//!
//! A word is either *static* — its value is fully decided by the script text, and we compute
//! it exactly as bash would after quote removal — or *dynamic*: it holds a parameter
//! expansion, a substitution, arithmetic, an unquoted glob or a brace expansion, so its value
//! (and even how many arguments it becomes) is only known at run time. Dynamic words keep their
//! literal source text so a reader can see what was written.

/// One evaluated shell word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Word {
    /// The value after quote removal (static) or the source text (dynamic).
    pub(crate) text: String,
    /// True when the value is only known at run time.
    pub(crate) dynamic: bool,
}

impl Word {
    pub(crate) fn fixed(text: impl Into<String>) -> Self {
        Word {
            text: text.into(),
            dynamic: false,
        }
    }
}

/// Removes backslash escapes from an unquoted word (`\r\m` is `rm`); a backslash-newline pair
/// disappears. Returns the value and whether an unescaped glob character (`*`, `?`, `[`) is
/// present, which would make the word expand to file names.
pub(crate) fn unescape_unquoted(raw: &str) -> (String, bool) {
    let mut out = String::with_capacity(raw.len());
    let mut glob = false;
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(next) => out.push(next),
                None => out.push('\\'),
            },
            '*' | '?' | '[' => {
                glob = true;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    (out, glob)
}

/// Removes the escapes that are special inside double quotes: `\$`, `` \` ``, `\"`, `\\` and
/// backslash-newline. Every other backslash stays.
pub(crate) fn unescape_double_quoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decodes the body of an ANSI-C string (`$'…'`, without the `$'` and `'`). Returns `None`
/// for escapes we do not decode exactly (`\c` control characters whose value would not be
/// text, or code points that are not valid), so the caller can treat the word as dynamic.
pub(crate) fn decode_ansi_c(body: &str) -> Option<String> {
    let mut out = String::with_capacity(body.len());
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&esc) = chars.get(i) else {
            out.push('\\');
            break;
        };
        i += 1;
        match esc {
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' | '?' => out.push(esc),
            '0'..='7' => {
                let mut value = esc.to_digit(8)?;
                let mut taken = 1;
                while taken < 3 {
                    match chars.get(i).and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            i += 1;
                            taken += 1;
                        }
                        None => break,
                    }
                }
                // bash keeps only the low byte; anything non-ASCII is a raw byte we cannot
                // represent as text faithfully.
                let byte = value & 0xff;
                if byte >= 0x80 {
                    return None;
                }
                out.push(char::from_u32(byte)?);
            }
            'x' | 'u' | 'U' => {
                let max = match esc {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut value: u32 = 0;
                let mut taken = 0;
                while taken < max {
                    match chars.get(i).and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            value = value.checked_mul(16)?.checked_add(d)?;
                            i += 1;
                            taken += 1;
                        }
                        None => break,
                    }
                }
                if taken == 0 {
                    out.push('\\');
                    out.push(esc);
                } else {
                    if esc == 'x' && value >= 0x80 {
                        return None;
                    }
                    out.push(char::from_u32(value)?);
                }
            }
            'c' => return None,
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

/// Removes the backslashes bash removes inside a backquoted command: those before `\\`,
/// `` ` `` and `$`.
pub(crate) fn unescape_backquoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('\\' | '`' | '$')) {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// True when an unquoted skeleton holds a brace expansion: `{a,b}` or `{1..3}`. Quoted parts
/// of the word are replaced by `\0` in the skeleton, so quoted braces do not count.
pub(crate) fn has_brace_expansion(skeleton: &str) -> bool {
    let bytes = skeleton.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] == b'{' {
            let mut depth = 0usize;
            let mut j = i;
            while j < bytes.len() {
                match bytes[j] {
                    b'\\' => j += 1,
                    b'{' => depth += 1,
                    b'}' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            let inner = &skeleton[i + 1..j];
                            if inner.contains(',') || inner.contains("..") {
                                return true;
                            }
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn unquoted_escapes_are_removed() {
        assert_eq!(unescape_unquoted(r"\rm"), ("rm".to_string(), false));
        assert_eq!(unescape_unquoted("r\\\nm"), ("rm".to_string(), false));
        assert_eq!(unescape_unquoted(r"\*.rs"), ("*.rs".to_string(), false));
        assert_eq!(unescape_unquoted("*.rs"), ("*.rs".to_string(), true));
        assert_eq!(unescape_unquoted("a\\"), ("a\\".to_string(), false));
    }

    #[test]
    fn double_quoted_escapes_follow_bash() {
        assert_eq!(unescape_double_quoted(r#"a\"b\$c\\d\e"#), r#"a"b$c\d\e"#);
        assert_eq!(unescape_double_quoted("r\\\nm"), "rm");
    }

    #[test]
    fn ansi_c_strings_decode() {
        assert_eq!(decode_ansi_c(r"\x72m").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c(r"\162\155").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c(r"\u0072m").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c(r"a\tb\'").as_deref(), Some("a\tb'"));
        assert_eq!(decode_ansi_c(r"\cA"), None);
        assert_eq!(decode_ansi_c(r"\xff"), None);
        assert_eq!(decode_ansi_c(r"\q").as_deref(), Some(r"\q"));
    }

    #[test]
    fn brace_expansion_is_detected() {
        assert!(has_brace_expansion("r{m,}"));
        assert!(has_brace_expansion("a{1..3}"));
        assert!(!has_brace_expansion("{}"));
        assert!(!has_brace_expansion("a\0\0"));
        assert!(!has_brace_expansion(r"\{a,b}"));
    }
}
