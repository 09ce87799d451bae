//! `@` file completion: while the word at the cursor starts with `@`, a popup lists the
//! repository's files (gitignore-aware, indexed once by the app loop) that fuzzy-match what
//! follows the `@`; Tab or Enter puts the chosen path in place of the word.

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

/// Rows the popup shows.
pub const MENTION_ROWS: usize = 8;

/// The open popup: the word it completes and the best matches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MentionPopup {
    /// What follows the `@`.
    pub query: String,
    pub matches: Vec<String>,
    pub selected: usize,
}

/// The `@word` ending at byte `cursor` of `text`: (start of the `@`, the word after it).
pub fn mention_at(text: &str, cursor: usize) -> Option<(usize, &str)> {
    let before = &text[..cursor];
    let start = before.rfind(char::is_whitespace).map_or(0, |i| {
        i + before[i..].chars().next().map_or(1, char::len_utf8)
    });
    let word = &before[start..];
    let query = word.strip_prefix('@')?;
    // The word must end at the cursor: completing in the middle of a word would split it.
    let after = text[cursor..].chars().next();
    (after.is_none_or(char::is_whitespace)).then_some((start, query))
}

/// The files matching `query` best first (shorter paths first among equals); an empty
/// query lists the first files.
pub fn best_matches(files: &[String], query: &str, limit: usize) -> Vec<String> {
    if query.is_empty() {
        return files.iter().take(limit).cloned().collect();
    }
    let matcher = SkimMatcherV2::default().ignore_case();
    let mut scored: Vec<(i64, &String)> = files
        .iter()
        .filter_map(|f| matcher.fuzzy_match(f, query).map(|score| (score, f)))
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.len().cmp(&b.1.len())));
    scored
        .into_iter()
        .take(limit)
        .map(|(_, f)| f.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_word_at_the_cursor_is_a_mention_only_when_it_starts_with_at() {
        assert_eq!(mention_at("see @src/ma", 11), Some((4, "src/ma")));
        assert_eq!(mention_at("@", 1), Some((0, "")));
        assert_eq!(mention_at("mail a@b", 8), None);
        assert_eq!(mention_at("see @src more", 8), Some((4, "src")));
        assert_eq!(mention_at("see @src more", 7), None, "mid-word");
    }

    #[test]
    fn fuzzy_matches_rank_the_closest_path_first() {
        let files: Vec<String> = [
            "crates/tui/src/app.rs",
            "crates/tui/src/state/mod.rs",
            "README.md",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            best_matches(&files, "stmod", 8),
            vec!["crates/tui/src/state/mod.rs"]
        );
        assert_eq!(best_matches(&files, "readme", 8), vec!["README.md"]);
        assert_eq!(best_matches(&files, "", 2).len(), 2);
    }
}
