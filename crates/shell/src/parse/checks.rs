//! Checks that guard against tree-sitter-bash reading a script differently from bash.
//!
//! The grammar is good but not bash itself. Where we know it diverges (line continuations
//! inside words, backquotes in some positions), these checks refuse the script instead of
//! trusting a tree that may hide a command.

use tree_sitter::Node;

use super::{Refusal, refuse};

pub(crate) fn syntax_error_message(root: Node, script: &str) -> String {
    let mut cursor = root.walk();
    let mut found = None;
    'outer: loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            found = Some(node);
            break;
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'outer;
            }
        }
    }
    match found {
        Some(node) => {
            let at = node.start_position();
            let snippet: String = script
                .get(node.byte_range())
                .unwrap_or("")
                .chars()
                .take(30)
                .collect();
            format!(
                "the script has a shell syntax error at line {}, column {} (near `{snippet}`)",
                at.row + 1,
                at.column + 1
            )
        }
        None => "the script has a shell syntax error".to_string(),
    }
}

/// tree-sitter-bash treats a backslash-newline inside an unquoted word as a word break, while
/// bash joins the two halves (`r\<newline>m` is `rm`). Refuse such joins rather than misread.
pub(crate) fn check_line_continuations(root: Node, script: &str) -> Result<(), Refusal> {
    let bytes = script.as_bytes();
    let is_word_byte =
        |b: u8| !matches!(b, b' ' | b'\t' | b'\n' | b'|' | b'&' | b';' | b'(' | b')');
    let mut search = 0;
    while let Some(offset) = script[search..].find("\\\n") {
        let pos = search + offset;
        search = pos + 2;
        let backslashes = bytes[..=pos]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if backslashes % 2 == 0 {
            continue;
        }
        let before = pos.checked_sub(backslashes).map(|i| bytes[i]);
        let after = bytes.get(pos + 2).copied();
        let (Some(before), Some(after)) = (before, after) else {
            continue;
        };
        if !is_word_byte(before) || !is_word_byte(after) {
            continue;
        }
        let Some(mut node) = root.descendant_for_byte_range(pos, pos + 2) else {
            continue;
        };
        let mut quoted = false;
        loop {
            if matches!(
                node.kind(),
                "word" | "raw_string" | "string" | "heredoc_body" | "comment" | "ansi_c_string"
            ) {
                quoted = true;
                break;
            }
            match node.parent() {
                Some(parent) => node = parent,
                None => break,
            }
        }
        if !quoted {
            return refuse(
                "a backslash-newline joins two parts of one word; the parser would split it \
                 where bash does not",
            );
        }
    }
    Ok(())
}

/// A safety net under tree-sitter: every unescaped backquote and `$(` in the script must be
/// part of a command substitution (or arithmetic) the parser recognised, or sit where it is
/// plain text (single quotes, `$'…'`, comments, a quoted heredoc). Otherwise the parser
/// misread the script — it does, for example, inside `${x:-`cmd`}` — and a command could
/// hide there.
pub(crate) fn check_substitutions_were_parsed(root: Node, script: &str) -> Result<(), Refusal> {
    let bytes = script.as_bytes();
    if !bytes.iter().any(|&b| b == b'`' || b == b'$') {
        return Ok(());
    }
    // One pass over the tree: where substitutions start, and which ranges are plain text
    // or are re-parsed on their own (backquoted bodies).
    let mut starts = Vec::new();
    let mut covered = Vec::new();
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        match node.kind() {
            "command_substitution" | "arithmetic_expansion" => {
                starts.push(node.start_byte());
                if bytes.get(node.start_byte()) == Some(&b'`') {
                    covered.push(node.start_byte()..node.end_byte());
                }
            }
            "raw_string" | "comment" | "ansi_c_string" => covered.push(node.byte_range()),
            "heredoc_redirect" => {
                let quoted = node
                    .children(&mut node.walk())
                    .find(|child| child.kind() == "heredoc_start")
                    .is_some_and(|start| {
                        script
                            .get(start.byte_range())
                            .unwrap_or("")
                            .contains(['\'', '"', '\\'])
                    });
                if quoted {
                    covered.push(node.byte_range());
                }
            }
            _ => {}
        }
        if cursor.goto_first_child() {
            continue;
        }
        let mut done = false;
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                done = true;
                break;
            }
        }
        if done {
            break;
        }
    }
    starts.sort_unstable();
    covered.sort_unstable_by_key(|range| range.start);
    // Merge into disjoint ranges so a binary search answers "is this byte covered?".
    let mut merged: Vec<std::ops::Range<usize>> = Vec::with_capacity(covered.len());
    for range in covered {
        match merged.last_mut() {
            Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    let is_covered = |pos: usize| {
        let index = merged.partition_point(|range| range.start <= pos);
        index > 0 && merged[index - 1].contains(&pos)
    };
    for (pos, &byte) in bytes.iter().enumerate() {
        let is_candidate = byte == b'`' || (byte == b'$' && bytes.get(pos + 1) == Some(&b'('));
        if !is_candidate {
            continue;
        }
        let backslashes = bytes[..pos]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if backslashes % 2 == 1 || is_covered(pos) || starts.binary_search(&pos).is_ok() {
            continue;
        }
        let what = if byte == b'`' { "backquote" } else { "`$(`" };
        return refuse(format!(
            "a {what} at byte {pos} is not part of a command substitution the parser \
             recognised, so a command could be hidden there"
        ));
    }
    Ok(())
}

/// Refuses trees nested deeper than `max` (computed without recursion), so later walks and
/// parent lookups stay cheap.
pub(crate) fn check_depth(root: Node, max: usize) -> Result<(), Refusal> {
    let mut cursor = root.walk();
    let mut depth = 0usize;
    loop {
        if cursor.goto_first_child() {
            depth += 1;
            if depth > max {
                return refuse(format!("the script nests more than {max} levels deep"));
            }
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return Ok(());
            }
            depth -= 1;
        }
    }
}

/// tree-sitter-bash does not see backquotes in a heredoc body and can misread escapes
/// there. For a heredoc whose delimiter is unquoted (so bash expands its body), refuse
/// a body with backquotes, and refuse when the body holds more `$(` than the parser
/// found command substitutions. Returns true when the body holds arithmetic.
pub(crate) fn check_heredoc_body(node: Node, src: &str) -> Result<bool, Refusal> {
    let mut start = None;
    let mut end = None;
    for child in node.children(&mut node.walk()) {
        match child.kind() {
            "heredoc_start" => start = Some(child),
            "heredoc_end" => end = Some(child),
            _ => {}
        }
    }
    let (Some(start), Some(end)) = (start, end) else {
        return Ok(false);
    };
    if src
        .get(start.byte_range())
        .unwrap_or("")
        .contains(['\'', '"', '\\'])
    {
        return Ok(false);
    }
    let after_start = start.end_byte();
    let body_start = src
        .get(after_start..)
        .unwrap_or("")
        .find('\n')
        .map_or(after_start, |offset| after_start + offset + 1);
    let body_end = end.start_byte().max(body_start);
    let body = src.get(body_start..body_end).unwrap_or("");
    if body.contains('`') {
        return refuse(
            "a heredoc body uses backquotes, which the parser cannot read reliably there",
        );
    }
    let arithmetic = body.contains("$((") || body.contains("$[");
    let bytes = body.as_bytes();
    let mut expected = 0;
    for (index, window) in bytes.windows(2).enumerate() {
        if window == b"$(" && bytes.get(index + 2) != Some(&b'(') {
            let backslashes = bytes[..index]
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count();
            if backslashes % 2 == 0 {
                expected += 1;
            }
        }
    }
    let mut found = 0;
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(current) = stack.pop() {
        if current.kind() == "command_substitution"
            && current.start_byte() >= body_start
            && current.start_byte() < body_end
        {
            found += 1;
        }
        stack.extend(current.children(&mut cursor));
    }
    if expected > found {
        return refuse(
            "a heredoc body holds command substitutions the parser could not read reliably",
        );
    }
    Ok(arithmetic)
}
