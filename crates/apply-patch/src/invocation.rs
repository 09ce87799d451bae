//! Recognising `apply_patch` invocations: argv forms, shell scripts with a
//! heredoc, and the wrappers models put around patch text.
//!
//! This is a deliberately small reader of the few shell shapes that carry a
//! patch (`[cd DIR &&] apply_patch <<'EOF' … EOF`, optionally inside
//! `bash -lc "…"`), not a shell parser: anything else is either "not an
//! apply_patch call" (the first command word is something else) or an error
//! that says which shape is accepted.

use crate::parser::{BEGIN_PATCH, ParseError, Patch, parse_patch};

const COMMANDS: [&str; 2] = ["apply_patch", "applypatch"];
const SHELLS: [&str; 3] = ["bash", "sh", "zsh"];

/// A recognised `apply_patch` invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The parsed patch (its `text` field holds the unwrapped patch text).
    pub patch: Patch,
    /// The directory from a leading `cd DIR &&`, as written (relative to the
    /// command's working directory unless absolute).
    pub workdir: Option<String>,
}

/// Recognises a command line that applies a patch.
///
/// Accepted: `["apply_patch", PATCH]`, `["applypatch", PATCH]` and
/// `[bash|sh|zsh, -lc|-c, SCRIPT]` where SCRIPT is
/// `[cd DIR &&] apply_patch <<'EOF'\n…\nEOF`. Returns `None` when the command
/// is not an apply_patch call at all, `Some(Err)` when it is one but the patch
/// or its wrapper is malformed (including a bare patch passed as the whole
/// command, which must be rerun with `apply_patch` in front).
pub fn maybe_parse_apply_patch_invocation(
    argv: &[String],
) -> Option<Result<Invocation, ParseError>> {
    match argv {
        [cmd, body] if is_command(cmd) => Some(parse_patch(body).map(|patch| Invocation {
            patch,
            workdir: None,
        })),
        [only] if looks_like_patch(only) => Some(Err(ParseError::ImplicitInvocation)),
        [shell, flag, script] if is_shell(shell) && matches!(flag.as_str(), "-lc" | "-c") => {
            if looks_like_patch(script) {
                return Some(Err(ParseError::ImplicitInvocation));
            }
            match parse_script(script) {
                Ok(None) => None,
                Ok(Some((body, workdir))) => {
                    Some(parse_patch(&body).map(|patch| Invocation { patch, workdir }))
                }
                Err(err) => Some(Err(err)),
            }
        }
        _ => None,
    }
}

fn is_command(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    COMMANDS.contains(&name)
}

fn is_shell(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    SHELLS.contains(&name)
}

fn looks_like_patch(text: &str) -> bool {
    text.trim_start().starts_with(BEGIN_PATCH)
}

/// Strips the wrappers a patch text may arrive in. Returns `Ok(None)` when the
/// text has no wrapper (it should be parsed as it is), or the inner patch text
/// with the `cd` directory, if any.
pub(crate) fn unwrap_patch_text(
    text: &str,
) -> Result<Option<(String, Option<String>)>, ParseError> {
    let trimmed = text.trim();
    if trimmed.starts_with(BEGIN_PATCH) {
        return Ok(None);
    }
    if trimmed.starts_with("<<") {
        return heredoc(trimmed, "<<").map(|(body, _)| Some((body, None)));
    }
    // `bash -lc "SCRIPT"` written out as text.
    let mut words = Words::new(trimmed);
    if let Some(Ok(shell)) = words.next_word()
        && is_shell(&shell)
        && let Some(Ok(flag)) = words.next_word()
        && matches!(flag.as_str(), "-lc" | "-c")
        && let Some(Ok(script)) = words.next_word()
        && words.rest().trim().is_empty()
    {
        return parse_script(&script);
    }
    parse_script(trimmed)
}

/// Reads `[cd DIR &&] apply_patch <<DELIM\nBODY\nDELIM` from a script.
fn parse_script(script: &str) -> Result<Option<(String, Option<String>)>, ParseError> {
    let mut words = Words::new(script);
    let mut workdir = None;
    let mut first = match words.next_word() {
        Some(Ok(word)) => word,
        _ => return Ok(None),
    };
    if first == "cd" {
        let dir = match words.next_word() {
            Some(Ok(dir)) => dir,
            _ => return Ok(None),
        };
        match words.next_word() {
            Some(Ok(op)) if op == "&&" => {}
            _ => return Ok(None),
        }
        workdir = Some(dir);
        first = match words.next_word() {
            Some(Ok(word)) => word,
            _ => return Ok(None),
        };
    }
    if !is_command(&first) {
        return Ok(None);
    }
    let rest = words.rest().trim_start_matches([' ', '\t']);
    if !rest.starts_with("<<") {
        return Err(ParseError::Wrapper {
            message: "expected a heredoc after apply_patch in the shell script \
                      (apply_patch <<'EOF' … EOF), or call apply_patch with the patch as its \
                      only argument"
                .to_string(),
        });
    }
    let (body, after) = heredoc(rest, "<<")?;
    if !after.trim().is_empty() {
        return Err(ParseError::Wrapper {
            message: "apply_patch must be the only command in the script; found more after \
                      the heredoc"
                .to_string(),
        });
    }
    Ok(Some((body, workdir)))
}

/// Parses `<<[-]DELIM ...\nBODY\nDELIM` and returns the body and whatever
/// follows the closing delimiter line.
fn heredoc<'a>(text: &'a str, prefix: &str) -> Result<(String, &'a str), ParseError> {
    let rest = text.strip_prefix(prefix).unwrap_or(text);
    let (strip_tabs, rest) = match rest.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let rest = rest.trim_start_matches([' ', '\t']);
    let mut words = Words::new(rest);
    let delimiter = match words.next_word() {
        Some(Ok(word)) if !word.is_empty() => word,
        _ => {
            return Err(ParseError::Wrapper {
                message: "expected a heredoc delimiter such as 'EOF' after '<<'".to_string(),
            });
        }
    };
    let after_delim = words.rest();
    let Some(newline) = after_delim.find('\n') else {
        return Err(ParseError::Wrapper {
            message: format!("expected the patch on the lines after '<<{delimiter}'"),
        });
    };
    if !after_delim[..newline].trim().is_empty() {
        return Err(ParseError::Wrapper {
            message: format!(
                "expected a newline after '<<{delimiter}', found '{}'",
                after_delim[..newline].trim()
            ),
        });
    }
    let body_text = &after_delim[newline + 1..];
    let mut body = String::new();
    let mut offset = 0;
    for line in body_text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let candidate = if strip_tabs {
            bare.trim_start_matches('\t')
        } else {
            bare
        };
        if candidate.trim_end() == delimiter {
            return Ok((body, &body_text[offset + line.len()..]));
        }
        body.push_str(line);
        offset += line.len();
    }
    // A missing closing delimiter: bash accepts it with a warning, and so do we.
    Ok((body, ""))
}

/// A minimal reader of shell words: unquoted runs, '…' and "…" strings
/// (with the usual backslash escapes inside double quotes), and `&&`.
struct Words<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Words<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn next_word(&mut self) -> Option<Result<String, ()>> {
        let rest = self.rest();
        let trimmed = rest.trim_start_matches([' ', '\t']);
        self.pos += rest.len() - trimmed.len();
        if trimmed.is_empty() || trimmed.starts_with(['\n', ';', '|', '<', '>']) {
            return None;
        }
        if trimmed.starts_with("&&") {
            self.pos += 2;
            return Some(Ok("&&".to_string()));
        }
        let mut word = String::new();
        let mut chars = trimmed.char_indices().peekable();
        let mut consumed = trimmed.len();
        while let Some((i, c)) = chars.next() {
            match c {
                ' ' | '\t' | '\n' | ';' | '|' | '&' | '<' | '>' => {
                    consumed = i;
                    break;
                }
                '\'' => {
                    let mut closed = false;
                    for (_, c) in chars.by_ref() {
                        if c == '\'' {
                            closed = true;
                            break;
                        }
                        word.push(c);
                    }
                    if !closed {
                        return Some(Err(()));
                    }
                }
                '"' => {
                    let mut closed = false;
                    while let Some((_, c)) = chars.next() {
                        match c {
                            '"' => {
                                closed = true;
                                break;
                            }
                            '\\' => match chars.peek().map(|(_, c)| *c) {
                                Some(next @ ('"' | '\\' | '$' | '`')) => {
                                    word.push(next);
                                    chars.next();
                                }
                                Some('\n') => {
                                    chars.next();
                                }
                                _ => word.push('\\'),
                            },
                            other => word.push(other),
                        }
                    }
                    if !closed {
                        return Some(Err(()));
                    }
                }
                '\\' => {
                    if let Some((_, next)) = chars.next() {
                        word.push(next);
                    }
                }
                other => word.push(other),
            }
        }
        self.pos += consumed;
        Some(Ok(word))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn argv(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_string()).collect()
    }

    const PATCH: &str = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch";

    #[test]
    fn direct_argv_forms_are_recognised() {
        for cmd in ["apply_patch", "applypatch", "/usr/bin/apply_patch"] {
            let got = maybe_parse_apply_patch_invocation(&argv(&[cmd, PATCH]));
            let inv = got.expect("recognised").expect("parsed");
            assert_eq!(inv.patch.operations.len(), 1);
            assert_eq!(inv.workdir, None);
        }
    }

    #[test]
    fn shell_heredoc_with_cd_gives_workdir() {
        let script = format!("cd sub/dir && apply_patch <<'EOF'\n{PATCH}\nEOF\n");
        for (shell, flag) in [
            ("bash", "-lc"),
            ("sh", "-c"),
            ("zsh", "-lc"),
            ("/bin/bash", "-c"),
        ] {
            let got = maybe_parse_apply_patch_invocation(&argv(&[shell, flag, &script]));
            let inv = got.expect("recognised").expect("parsed");
            assert_eq!(inv.workdir.as_deref(), Some("sub/dir"));
            assert_eq!(inv.patch.text, PATCH);
        }
    }

    #[test]
    fn heredoc_delimiter_variants() {
        for open in ["<<EOF", "<<'EOF'", "<<\"EOF\"", "<< 'EOF'", "<<-EOF"] {
            let script = format!("apply_patch {open}\n{PATCH}\nEOF");
            let got = maybe_parse_apply_patch_invocation(&argv(&["bash", "-lc", &script]));
            assert!(matches!(got, Some(Ok(_))), "{open}: {got:?}");
        }
        let script = format!("applypatch <<'PATCH'\n{PATCH}\nPATCH\n");
        let got = maybe_parse_apply_patch_invocation(&argv(&["bash", "-lc", &script]));
        assert!(matches!(got, Some(Ok(_))), "{got:?}");
    }

    #[test]
    fn other_commands_are_not_apply_patch() {
        for args in [
            argv(&["ls", "-la"]),
            argv(&["bash", "-lc", "echo hi"]),
            argv(&["bash", "-lc", "cd x && ls"]),
            argv(&["python", "-c", "print(1)"]),
            argv(&["apply_patch"]),
        ] {
            assert_eq!(maybe_parse_apply_patch_invocation(&args), None, "{args:?}");
        }
    }

    #[test]
    fn bare_patch_as_command_is_an_error() {
        let got = maybe_parse_apply_patch_invocation(&argv(&[PATCH]));
        assert_eq!(got, Some(Err(ParseError::ImplicitInvocation)));
        let got = maybe_parse_apply_patch_invocation(&argv(&["bash", "-lc", PATCH]));
        assert_eq!(got, Some(Err(ParseError::ImplicitInvocation)));
    }

    #[test]
    fn trailing_commands_after_heredoc_are_rejected() {
        let script = format!("apply_patch <<'EOF'\n{PATCH}\nEOF\necho done\n");
        let got = maybe_parse_apply_patch_invocation(&argv(&["bash", "-lc", &script]));
        assert!(
            matches!(got, Some(Err(ParseError::Wrapper { .. }))),
            "{got:?}"
        );
    }

    #[test]
    fn apply_patch_without_heredoc_in_script_is_an_error() {
        let got = maybe_parse_apply_patch_invocation(&argv(&["bash", "-lc", "apply_patch foo"]));
        assert!(
            matches!(got, Some(Err(ParseError::Wrapper { .. }))),
            "{got:?}"
        );
    }

    #[test]
    fn unwrap_text_forms() {
        let forms = [
            format!("<<'EOF'\n{PATCH}\nEOF\n"),
            format!("apply_patch <<'EOF'\n{PATCH}\nEOF"),
            format!("  apply_patch <<EOF\n{PATCH}\nEOF\n  "),
            format!("bash -lc \"apply_patch <<'EOF'\n{PATCH}\nEOF\n\""),
            format!("bash -lc 'apply_patch <<EOF\n{PATCH}\nEOF\n'"),
        ];
        for form in forms {
            let got = unwrap_patch_text(&form).expect("ok").expect("unwrapped");
            assert_eq!(got.0.trim_end(), PATCH, "{form}");
        }
        assert_eq!(unwrap_patch_text(PATCH), Ok(None));
    }

    #[test]
    fn double_quoted_script_unescapes() {
        let text = "bash -lc \"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: q.txt\n+say \\\"hi\\\" \\$HOME\n*** End Patch\nEOF\n\"";
        let (body, _) = unwrap_patch_text(text).expect("ok").expect("unwrapped");
        assert!(body.contains("+say \"hi\" $HOME"), "{body}");
    }
}
