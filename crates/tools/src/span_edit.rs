//! The work of `edit_file {path, old, new}`: replace the one place in a file's text where
//! `old` occurs with `new`.
//!
//! A small model asked to change two keys of a JSON file rewrote the file with only those two
//! keys: a whole-file write loses whatever the model does not repeat. A span edit cannot lose
//! what it does not mention, so it is the local profile's way to change an existing file.
//!
//! The match must be unique, so an edit never lands in a place the model did not mean. It is
//! exact first. When that finds nothing, the model's usual slips are forgiven: the line-number
//! prefixes `read_file` (`L12: `) or `cat -n` (`    12<TAB>`) put in front of each line,
//! trailing whitespace, and blank lines around the span. The looser match is taken only when
//! it, too, is unique. Errors say what to do next, in words the model can act on.

/// The file's text after a successful edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanEdit {
    /// The whole new text of the file.
    pub text: String,
    /// 1-based line where the replaced span started.
    pub first_line: usize,
    /// The match needed the looser comparison (prefixes or trailing whitespace ignored).
    pub loose: bool,
}

/// Why an edit was not made; each message is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpanEditError {
    /// `old` is empty or only whitespace.
    #[error(
        "`old` is empty: give the exact text to replace, copied from the file (to create a \
         file or replace all of it, use write_file)"
    )]
    EmptyOld,
    /// `old` and `new` are the same text.
    #[error("`old` and `new` are the same, so nothing would change")]
    Unchanged,
    /// `old` occurs nowhere, not even loosely; `closest` holds the lines most like it
    /// (1-based number, text), empty when none is close. `suggestion` is the one-line edit
    /// (old, new) that makes the change `old` → `new` asked for on the closest line, when
    /// the changed part and some of its context occur there and nowhere else.
    #[error("{}", not_found_message(closest, suggestion.as_ref()))]
    NotFound {
        closest: Vec<(usize, String)>,
        suggestion: Option<(String, String)>,
    },
    /// `old` occurs `count` times, starting at these 1-based lines (the first few).
    #[error("{}", ambiguous_message(*count, lines))]
    Ambiguous { count: usize, lines: Vec<usize> },
}

/// Most lines shown as the closest match, and most line numbers listed for an ambiguous one.
const CLOSEST_LINES: usize = 8;
const LISTED_MATCHES: usize = 5;
/// How alike (0..=1, bigram overlap) a line must be to be shown as the closest.
const CLOSEST_SCORE: f64 = 0.5;

fn not_found_message(closest: &[(usize, String)], suggestion: Option<&(String, String)>) -> String {
    if closest.is_empty() {
        return "`old` does not occur in the file. Read the file with read_file, then copy \
                the exact text to replace into `old`."
            .to_string();
    }
    let shown: String = closest
        .iter()
        .map(|(n, line)| format!("L{n}: {line}\n"))
        .collect();
    let copy = format!(
        "`old` does not occur in the file. The lines most like it:\n{shown}Copy the text to \
         replace exactly as the file has it (without the `L{}: ` prefixes) into `old`.",
        closest[0].0
    );
    match suggestion {
        Some((old, new)) => format!(
            "{copy} Your change made on L{}: call edit_file again with\nold: {old}\nnew: {new}",
            closest[0].0
        ),
        None => copy,
    }
}

fn ambiguous_message(count: usize, lines: &[usize]) -> String {
    let listed: Vec<String> = lines.iter().map(usize::to_string).collect();
    format!(
        "`old` occurs {count} times (starting at lines {}{}). Add the lines around the place \
         you mean to `old` so that it matches only once.",
        listed.join(", "),
        if count > lines.len() { ", …" } else { "" }
    )
}

/// Replaces the one occurrence of `old` in `text` with `new`.
pub fn replace_span(text: &str, old: &str, new: &str) -> Result<SpanEdit, SpanEditError> {
    if old.trim().is_empty() {
        return Err(SpanEditError::EmptyOld);
    }
    if old == new {
        return Err(SpanEditError::Unchanged);
    }
    match occurrences(text, old).as_slice() {
        [at] => return Ok(splice(text, *at, at + old.len(), new, false)),
        [] => {}
        many => return Err(ambiguous(text, many)),
    }
    loose_replace(text, old, new)
}

/// The edit when `old` matches only once its line-number prefixes, trailing whitespace and
/// surrounding blank lines are left out.
fn loose_replace(text: &str, old: &str, new: &str) -> Result<SpanEdit, SpanEditError> {
    let (old_lines, prefixed) = unnumbered(old);
    let new = if prefixed {
        without_numbers(new)
    } else {
        new.to_string()
    };
    let old_lines: Vec<&str> = trim_blank_ends(&old_lines);
    if old_lines.is_empty() {
        return Err(SpanEditError::EmptyOld);
    }
    // The span loses the newline `old` ended with; so does `new`, to keep the line count.
    let new = match old.ends_with('\n') {
        true => new.strip_suffix('\n').unwrap_or(&new),
        false => new.as_str(),
    };
    let joined = old_lines.join("\n");
    match occurrences(text, &joined).as_slice() {
        [at] => return Ok(splice(text, *at, at + joined.len(), new, true)),
        [] => {}
        many => return Err(ambiguous(text, many)),
    }
    let spans = line_windows(text, &old_lines);
    match spans.as_slice() {
        [(start, end)] => Ok(splice(text, *start, *end, new, true)),
        [] => {
            let closest = closest_lines(text, &old_lines);
            let suggestion = closest
                .first()
                .and_then(|(_, line)| suggest_on_line(text, line, old, new));
            Err(SpanEditError::NotFound {
                closest,
                suggestion,
            })
        }
        many => {
            let starts: Vec<usize> = many.iter().map(|(start, _)| *start).collect();
            Err(ambiguous(text, &starts))
        }
    }
}

/// Byte offsets where `needle` starts in `text`, overlapping ones included.
fn occurrences(text: &str, needle: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(needle) {
        let at = from + at;
        found.push(at);
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    found
}

fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

fn ambiguous(text: &str, starts: &[usize]) -> SpanEditError {
    SpanEditError::Ambiguous {
        count: starts.len(),
        lines: starts
            .iter()
            .take(LISTED_MATCHES)
            .map(|at| line_of(text, *at))
            .collect(),
    }
}

fn splice(text: &str, start: usize, end: usize, new: &str, loose: bool) -> SpanEdit {
    SpanEdit {
        text: format!("{}{new}{}", &text[..start], &text[end..]),
        first_line: line_of(text, start),
        loose,
    }
}

/// The line-number prefix of `line`, as `read_file` (`L12: `) or `cat -n` (`    12\t`)
/// show it; its length in bytes.
fn number_prefix(line: &str) -> Option<usize> {
    if let Some(rest) = line.strip_prefix('L') {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let after = &rest[digits..];
        if digits > 0 && after.starts_with(':') {
            let space = usize::from(after[1..].starts_with(' '));
            return Some(1 + digits + 1 + space);
        }
        return None;
    }
    let spaces = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[spaces..];
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    (digits > 0 && rest[digits..].starts_with('\t')).then_some(spaces + digits + 1)
}

/// `text`'s lines with trailing whitespace removed, and their line-number prefixes removed
/// when every non-blank line has one; whether they had.
fn unnumbered(text: &str) -> (Vec<&str>, bool) {
    let lines: Vec<&str> = text.lines().collect();
    let numbered = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .all(|l| number_prefix(l).is_some())
        && lines.iter().any(|l| !l.trim().is_empty());
    let lines = lines
        .into_iter()
        .map(|line| {
            let line = match number_prefix(line) {
                Some(len) if numbered => &line[len..],
                _ => line,
            };
            line.trim_end()
        })
        .collect();
    (lines, numbered)
}

/// `text` without the line-number prefixes of its lines, when every non-blank line has one
/// (the replacement text copied from `read_file` along with `old`); otherwise as it is.
fn without_numbers(text: &str) -> String {
    if !unnumbered(text).1 {
        return text.to_string();
    }
    let mut out: String = text
        .lines()
        .map(|line| number_prefix(line).map_or(line, |len| &line[len..]))
        .collect::<Vec<_>>()
        .join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn trim_blank_ends<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let start = lines.iter().position(|l| !l.trim().is_empty());
    let end = lines.iter().rposition(|l| !l.trim().is_empty());
    match (start, end) {
        (Some(start), Some(end)) => lines[start..=end].to_vec(),
        _ => Vec::new(),
    }
}

/// Byte spans of the runs of whole lines in `text` equal to `wanted` once trailing
/// whitespace is ignored; each span ends before the last line's line break.
fn line_windows(text: &str, wanted: &[&str]) -> Vec<(usize, usize)> {
    // (start, end of content) of every line.
    let mut lines: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        lines.push((start, start + content.len()));
        start += line.len();
    }
    if lines.len() < wanted.len() {
        return Vec::new();
    }
    (0..=lines.len() - wanted.len())
        .filter(|&i| {
            wanted
                .iter()
                .enumerate()
                .all(|(j, want)| text[lines[i + j].0..lines[i + j].1].trim_end() == *want)
        })
        .map(|i| (lines[i].0, lines[i + wanted.len() - 1].1))
        .collect()
}

/// The lines of `text` most like `wanted`: the window starting at the line most like its
/// first non-blank line, when that is alike enough.
fn closest_lines(text: &str, wanted: &[&str]) -> Vec<(usize, String)> {
    let Some(first) = wanted.iter().find(|l| !l.trim().is_empty()) else {
        return Vec::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let best = lines
        .iter()
        .enumerate()
        .map(|(i, line)| (i, likeness(first.trim(), line.trim())))
        .fold(None, |best: Option<(usize, f64)>, (i, score)| match best {
            Some((_, top)) if top >= score => best,
            _ => Some((i, score)),
        });
    let Some((at, score)) = best else {
        return Vec::new();
    };
    if score < CLOSEST_SCORE {
        return Vec::new();
    }
    lines
        .iter()
        .enumerate()
        .skip(at)
        .take(wanted.len().clamp(1, CLOSEST_LINES))
        .map(|(i, line)| (i + 1, (*line).to_string()))
        .collect()
}

/// Most characters of context, on each side of the change, tried when carrying a one-line
/// change over to the closest line.
const SUGGEST_CONTEXT: usize = 40;

/// The change `old` → `new` made on `line` instead, when both are one line: the part of
/// `old` that changes, with as much of its context as `line` shares, must occur in `line`
/// and nowhere else in `text`. Asked to replace `python: 3.10` with `python: 3.12` in a file
/// holding `python-version: "3.10"`, this gives that line with `3.12`. `None` when the change
/// cannot be placed without guessing. The pair is the line trimmed when that is unique in
/// `text` (a span edit keeps the indentation around it), else the whole line.
fn suggest_on_line(text: &str, line: &str, old: &str, new: &str) -> Option<(String, String)> {
    let (old, new) = (old.trim(), new.trim());
    if old.contains('\n') || new.contains('\n') || old == new {
        return None;
    }
    let prefix = common_prefix(old, new);
    let suffix = common_suffix(&old[prefix..], &new[prefix..]);
    let (changed_end, added) = (old.len() - suffix, &new[prefix..new.len() - suffix]);
    // Widest context first: the first window that occurs once in the file and in the line.
    let lefts = char_starts(old, prefix);
    let rights = char_ends(old, changed_end);
    let mut windows: Vec<(usize, usize)> = lefts
        .iter()
        .flat_map(|&l| rights.iter().map(move |&r| (l, r)))
        .collect();
    windows.sort_by_key(|&(l, r)| std::cmp::Reverse(r - l));
    for (l, r) in windows {
        let window = &old[l..r];
        if window.trim().chars().count() < 3 || occurrences(text, window).len() != 1 {
            continue;
        }
        let Some(at) = line.find(window) else {
            continue;
        };
        let replaced = format!("{}{added}{}", &old[l..prefix], &old[changed_end..r]);
        let changed = format!("{}{replaced}{}", &line[..at], &line[at + window.len()..]);
        let trimmed = line.trim();
        return Some(if occurrences(text, trimmed).len() == 1 {
            (trimmed.to_string(), changed.trim().to_string())
        } else {
            (line.to_string(), changed)
        });
    }
    None
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i)
        .min(b.len())
}

fn common_suffix(a: &str, b: &str) -> usize {
    a.chars()
        .rev()
        .zip(b.chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum()
}

/// Char boundaries of `s` from `at` back at most [`SUGGEST_CONTEXT`] characters.
fn char_starts(s: &str, at: usize) -> Vec<usize> {
    let mut starts = vec![at];
    starts.extend(
        s[..at]
            .char_indices()
            .rev()
            .take(SUGGEST_CONTEXT)
            .map(|(i, _)| i),
    );
    starts
}

/// Char boundaries of `s` from `at` forward at most [`SUGGEST_CONTEXT`] characters.
fn char_ends(s: &str, at: usize) -> Vec<usize> {
    let mut ends = vec![at];
    ends.extend(
        s[at..]
            .char_indices()
            .take(SUGGEST_CONTEXT)
            .map(|(i, c)| at + i + c.len_utf8()),
    );
    ends
}

/// How alike two strings are: the Dice coefficient of their character bigrams (0..=1).
fn likeness(a: &str, b: &str) -> f64 {
    let bigrams = |s: &str| -> Vec<(char, char)> {
        let chars: Vec<char> = s.chars().collect();
        chars.windows(2).map(|w| (w[0], w[1])).collect()
    };
    let (a, mut b) = (bigrams(a), bigrams(b));
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let total = (a.len() + b.len()) as f64;
    let mut shared = 0usize;
    for pair in &a {
        if let Some(i) = b.iter().position(|p| p == pair) {
            b.swap_remove(i);
            shared += 1;
        }
    }
    2.0 * shared as f64 / total
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const CONFIG: &str = "{\n  \"name\": \"webapp\",\n  \"debug\": true,\n  \"port\": 8080\n}\n";

    #[test]
    fn an_exact_unique_span_is_replaced_and_the_rest_kept() {
        let edit = replace_span(CONFIG, "\"debug\": true", "\"debug\": false").unwrap();
        assert_eq!(
            edit,
            SpanEdit {
                text: CONFIG.replace("true", "false"),
                first_line: 3,
                loose: false,
            }
        );
    }

    #[test]
    fn read_file_and_cat_n_prefixes_and_trailing_spaces_are_forgiven_when_unique() {
        let text = "def pages(n, k):\n    return n // k\n\nprint(pages(10, 3))\n";
        let want = "def pages(n, k):\n    return -(-n // k)\n\nprint(pages(10, 3))\n";
        // As read_file shows the lines, the new text numbered the same way.
        let edit = replace_span(
            text,
            "L1: def pages(n, k):\nL2:     return n // k\n",
            "L1: def pages(n, k):\nL2:     return -(-n // k)\n",
        )
        .unwrap();
        assert_eq!(edit.text, want);
        assert!(edit.loose);
        // As cat -n shows them, with a trailing space the file does not have.
        let edit = replace_span(
            text,
            "     2\t    return n // k \n",
            "    return -(-n // k)\n",
        )
        .unwrap();
        assert_eq!(edit.text, want);
        assert_eq!(edit.first_line, 2);
        // The file has trailing spaces the model left out.
        let spaced = "a = 1   \nb = 2\n";
        let edit = replace_span(spaced, "a = 1\nb = 2", "a = 3\nb = 2").unwrap();
        assert_eq!(edit.text, "a = 3\nb = 2\n");
    }

    #[test]
    fn a_loose_match_that_is_not_unique_is_refused() {
        let text = "x = 1  \ny = 2\nx = 1\t\n";
        assert_eq!(
            replace_span(text, "x = 1 \n", "x = 9\n"),
            Err(SpanEditError::Ambiguous {
                count: 2,
                lines: vec![1, 3]
            })
        );
    }

    #[test]
    fn a_span_found_twice_names_the_lines_and_asks_for_more_context() {
        let text = "a = 0\nb = 0\nc = 1\n";
        let error = replace_span(text, "= 0", "= 5").unwrap_err();
        assert_eq!(
            error,
            SpanEditError::Ambiguous {
                count: 2,
                lines: vec![1, 2]
            }
        );
        let message = error.to_string();
        assert!(message.contains("occurs 2 times"), "{message}");
        assert!(message.contains("lines 1, 2"), "{message}");
        assert!(message.contains("matches only once"), "{message}");
    }

    #[test]
    fn a_missing_span_shows_the_closest_lines_or_asks_to_read_the_file() {
        let error = replace_span(CONFIG, "\"debug\": True,", "\"debug\": false,").unwrap_err();
        assert_eq!(
            error,
            SpanEditError::NotFound {
                closest: vec![(3, "  \"debug\": true,".to_string())],
                suggestion: None,
            }
        );
        let message = error.to_string();
        assert!(message.contains("L3:   \"debug\": true,"), "{message}");
        let error = replace_span(CONFIG, "retries = 3", "retries = 4").unwrap_err();
        assert_eq!(
            error,
            SpanEditError::NotFound {
                closest: vec![],
                suggestion: None
            }
        );
        assert!(error.to_string().contains("read_file"), "{error}");
    }

    #[test]
    fn a_one_line_change_aimed_at_a_misquoted_line_is_offered_on_the_closest_line() {
        let workflow =
            "jobs:\n  test:\n    steps:\n      - with:\n          python-version: \"3.10\"\n";
        let error = replace_span(workflow, "python: 3.10", "python: 3.12").unwrap_err();
        let SpanEditError::NotFound { suggestion, .. } = &error else {
            panic!("{error:?}")
        };
        assert_eq!(
            suggestion.as_ref().unwrap(),
            &(
                "python-version: \"3.10\"".to_string(),
                "python-version: \"3.12\"".to_string()
            )
        );
        let message = error.to_string();
        assert!(
            message.ends_with(
                "Your change made on L5: call edit_file again with\nold: python-version: \"3.10\"\nnew: python-version: \"3.12\""
            ),
            "{message}"
        );
        // The suggestion applies as it stands.
        let (old, new) = suggestion.clone().unwrap();
        let done = replace_span(workflow, &old, &new).unwrap();
        assert!(done.text.contains("          python-version: \"3.12\"\n"));
    }

    #[test]
    fn no_change_is_offered_when_it_could_land_in_two_places_or_spans_lines() {
        // "3.10" occurs twice: which one the model meant is a guess.
        let two = "a: \"3.10\"\nb: \"3.10\"\n";
        let error = replace_span(two, "a: 3.10", "a: 3.12").unwrap_err();
        assert!(
            matches!(&error, SpanEditError::NotFound { suggestion: None, closest } if !closest.is_empty()),
            "{error:?}"
        );
        let error = replace_span(two, "a = 3.10\nb = 3.10", "a = 3.12\nb = 3.12").unwrap_err();
        assert!(
            matches!(
                &error,
                SpanEditError::NotFound {
                    suggestion: None,
                    ..
                }
            ),
            "{error:?}"
        );
    }

    #[test]
    fn empty_and_unchanged_spans_are_refused() {
        assert_eq!(replace_span(CONFIG, "", "x"), Err(SpanEditError::EmptyOld));
        assert_eq!(
            replace_span(CONFIG, " \n", "x"),
            Err(SpanEditError::EmptyOld)
        );
        assert_eq!(
            replace_span(CONFIG, "L3:\n", "x"),
            Err(SpanEditError::EmptyOld),
            "a bare prefix is not text"
        );
        assert_eq!(
            replace_span(CONFIG, "\"port\"", "\"port\""),
            Err(SpanEditError::Unchanged)
        );
    }

    #[test]
    fn prefixes_are_only_stripped_when_every_line_has_one() {
        // A file whose own lines start with numbers keeps them.
        let text = "1\tone\n2\ttwo\n";
        let edit = replace_span(text, "2\ttwo", "2\tzwei").unwrap();
        assert_eq!(edit.text, "1\tone\n2\tzwei\n");
        assert!(!edit.loose);
        assert_eq!(number_prefix("L12: x"), Some(5));
        assert_eq!(number_prefix("L12:"), Some(4));
        assert_eq!(number_prefix("   7\tx"), Some(5));
        assert_eq!(number_prefix("Look: x"), None);
        assert_eq!(number_prefix("7 x"), None);
    }
}
