//! truncate_middle: properties over arbitrary UTF-8.

use osprey_tools::truncation::truncation_marker;
use osprey_tools::{approx_token_count, truncate_middle};
use proptest::prelude::*;

/// Split a truncated result into (head, removed tokens, tail), checking the header.
fn parts(text: &str, original: &str) -> (String, usize, String) {
    let header = format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {}\n\n",
        approx_token_count(original),
        original.lines().count()
    );
    let body = text.strip_prefix(&header).expect("header");
    // The marker is the first `…<digits> tokens truncated…` after which the rest is a suffix
    // of the original.
    for (start, _) in body.match_indices('…') {
        let rest = &body[start + '…'.len_utf8()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() {
            continue;
        }
        let Ok(removed) = digits.parse::<usize>() else {
            continue;
        };
        let marker = truncation_marker(removed);
        if body[start..].starts_with(&marker) {
            let tail = &body[start + marker.len()..];
            if original.ends_with(tail) && original.starts_with(&body[..start]) {
                return (body[..start].to_string(), removed, tail.to_string());
            }
        }
    }
    panic!("no marker splits {body:?} into a prefix and a suffix");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn never_panics_and_keeps_a_true_prefix_and_suffix(text in any::<String>(), max in 0usize..64) {
        let result = truncate_middle(&text, max);
        prop_assert_eq!(result.original_tokens, approx_token_count(&text));
        if text.len() <= max * 4 {
            prop_assert!(!result.truncated);
            prop_assert_eq!(&result.text, &text);
        } else {
            prop_assert!(result.truncated);
            let (head, removed, tail) = parts(&result.text, &text);
            prop_assert!(head.len() + tail.len() <= max * 4);
            prop_assert!(head.len() <= max * 2);
            prop_assert_eq!(removed, (text.len() - head.len() - tail.len()).div_ceil(4));
        }
    }

    #[test]
    fn multibyte_text_is_cut_close_to_the_budget(ch in prop::sample::select(vec!['a', 'é', '€', '😀']), n in 1usize..400, max in 1usize..50) {
        let text: String = std::iter::repeat_n(ch, n).collect();
        let result = truncate_middle(&text, max);
        if result.truncated {
            let (head, _, tail) = parts(&result.text, &text);
            // Each side loses less than one character to boundary rounding.
            prop_assert!(max * 4 - (head.len() + tail.len()) < 2 * ch.len_utf8());
        }
    }
}
