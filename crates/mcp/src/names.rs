//! Model-visible names for MCP tools.
//!
//! An MCP tool is identified by its server's configured name and the tool's own name, and
//! either may contain characters a model API refuses in a function name (`get-tiny-image`,
//! `docs.search`, `my server`). Each tool therefore gets:
//!
//! * a **namespace** `mcp__<server>` (the Responses API groups a server's tools under it), and
//! * a **name** inside that namespace (the tool name, cleaned),
//!
//! whose concatenation `mcp__<server>__<tool>` is the **qualified name** used in flat tool lists
//! (Chat Completions). Cleaning replaces every character outside `[A-Za-z0-9_]` with `_`, and
//! the qualified name is kept within 64 characters, so the namespaced and the flat form are
//! equally valid.
//!
//! Two different tools can clean to the same name (`a-b` and `a.b`), and two servers to the
//! same namespace. Every member of such a group gets a suffix `_` + 8 hex digits of a hash of
//! its raw identity, and a name that would be too long is cut and given the same kind of
//! suffix. The hash is a fixed FNV-1a, so the same configuration always yields the same names,
//! whatever order the servers answered in. Each adjustment produces a warning for the front
//! end.

use std::collections::{BTreeMap, HashSet};

/// Prefix of every MCP namespace and qualified name.
pub const MCP_PREFIX: &str = "mcp__";
/// Separator between namespace and tool name in a qualified name.
pub const DELIMITER: &str = "__";
/// Longest function name the model APIs accept.
pub const MAX_NAME_LEN: usize = 64;

const HASH_HEX_LEN: usize = 8;
/// `_` followed by the hash digits.
const SUFFIX_LEN: usize = HASH_HEX_LEN + 1;

/// The names chosen for one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolNames {
    /// `mcp__<server>`, cleaned.
    pub namespace: String,
    /// The tool's name inside its namespace, cleaned.
    pub name: String,
}

impl ToolNames {
    /// `namespace__name`.
    pub fn qualified(&self) -> String {
        format!("{}{DELIMITER}{}", self.namespace, self.name)
    }
}

/// Replaces every character outside `[A-Za-z0-9_]` with `_`; an empty input becomes `_`.
pub fn clean_name(raw: &str) -> String {
    let cleaned: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "_".to_owned()
    } else {
        cleaned
    }
}

/// 64-bit FNV-1a; stable across platforms and releases, unlike `std`'s hasher.
fn fnv1a(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

fn suffix(identity: &str) -> String {
    let hex = format!("{:016x}", fnv1a(identity));
    format!("_{}", &hex[..HASH_HEX_LEN])
}

/// Cuts `text` (ASCII after cleaning) to `len` characters.
fn cut(text: &str, len: usize) -> &str {
    &text[..len.min(text.len())]
}

/// Chooses names for `tools` (pairs of raw server and tool names). Returns the names in the
/// same order as the input, plus warnings describing every name that had to change beyond
/// plain cleaning.
pub fn assign_names(tools: &[(String, String)]) -> (Vec<ToolNames>, Vec<String>) {
    let mut warnings = Vec::new();

    // Namespaces: one per distinct server.
    let servers: Vec<&str> = {
        let mut seen = HashSet::new();
        let mut list: Vec<&str> = tools
            .iter()
            .map(|(server, _)| server.as_str())
            .filter(|server| seen.insert(*server))
            .collect();
        list.sort_unstable();
        list
    };
    let mut by_clean: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for server in &servers {
        by_clean
            .entry(format!("{MCP_PREFIX}{}", clean_name(server)))
            .or_default()
            .push(server);
    }
    let mut namespaces: BTreeMap<&str, String> = BTreeMap::new();
    // Leave room for `__`, a minimal tool name and a hash suffix after the namespace.
    let max_namespace = MAX_NAME_LEN - DELIMITER.len() - 1 - SUFFIX_LEN;
    for (clean, group) in &by_clean {
        for server in group {
            let mut namespace = clean.clone();
            if group.len() > 1 || namespace.len() > max_namespace {
                let keep = max_namespace - SUFFIX_LEN;
                namespace = format!("{}{}", cut(clean, keep), suffix(server));
                warnings.push(if group.len() > 1 {
                    format!(
                        "MCP servers {} share the tool namespace `{clean}` once cleaned; \
                         server `{server}` uses `{namespace}`",
                        quote_list(group)
                    )
                } else {
                    format!(
                        "MCP server name `{server}` is too long for a tool namespace; \
                         it uses `{namespace}`"
                    )
                });
            }
            namespaces.insert(server, namespace);
        }
    }

    // Tool names: cleaned, then disambiguated inside each namespace.
    let mut groups: BTreeMap<(&str, String), Vec<usize>> = BTreeMap::new();
    for (index, (server, tool)) in tools.iter().enumerate() {
        groups
            .entry((server.as_str(), clean_name(tool)))
            .or_default()
            .push(index);
    }
    let mut result: Vec<Option<ToolNames>> = vec![None; tools.len()];
    let mut used: HashSet<String> = HashSet::new();
    for ((server, clean), indexes) in &groups {
        let namespace = namespaces.get(server).cloned().unwrap_or_default();
        let room = MAX_NAME_LEN - namespace.len() - DELIMITER.len();
        let distinct: HashSet<&str> = indexes.iter().map(|i| tools[*i].1.as_str()).collect();
        for index in indexes {
            let tool = &tools[*index].1;
            let identity = format!("{server}\0{tool}");
            let mut name = clean.clone();
            if distinct.len() > 1 || name.len() > room {
                name = format!("{}{}", cut(clean, room - SUFFIX_LEN), suffix(&identity));
                warnings.push(if distinct.len() > 1 {
                    format!(
                        "MCP tools {} on server `{server}` clean to the same name `{clean}`; \
                         `{tool}` is offered as `{name}`",
                        quote_list(&sorted(&distinct))
                    )
                } else {
                    format!(
                        "MCP tool `{tool}` on server `{server}` has a name too long for the \
                         model; it is offered as `{name}`"
                    )
                });
            }
            // A duplicate left after all that (two copies of one raw tool, or a hash clash)
            // gets further suffixes until it is unique.
            let mut attempt = 0u32;
            while !used.insert(format!("{namespace}{DELIMITER}{name}")) {
                attempt += 1;
                name = format!(
                    "{}{}",
                    cut(clean, room - SUFFIX_LEN),
                    suffix(&format!("{identity}\0{attempt}"))
                );
            }
            result[*index] = Some(ToolNames {
                namespace: namespace.clone(),
                name,
            });
        }
    }
    let names = result
        .into_iter()
        .map(|names| {
            names.unwrap_or_else(|| ToolNames {
                namespace: String::new(),
                name: String::new(),
            })
        })
        .collect();
    (names, warnings)
}

fn sorted<'a>(set: &HashSet<&'a str>) -> Vec<&'a str> {
    let mut list: Vec<&str> = set.iter().copied().collect();
    list.sort_unstable();
    list
}

fn quote_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|item| format!("`{item}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(s, t)| ((*s).to_owned(), (*t).to_owned()))
            .collect()
    }

    fn qualified(items: &[(&str, &str)]) -> (Vec<String>, Vec<String>) {
        let (names, warnings) = assign_names(&pairs(items));
        (names.iter().map(ToolNames::qualified).collect(), warnings)
    }

    #[test]
    fn plain_names_are_cleaned_only() {
        let (names, warnings) =
            qualified(&[("everything", "get-tiny-image"), ("my docs", "search.v2")]);
        assert_eq!(
            names,
            vec!["mcp__everything__get_tiny_image", "mcp__my_docs__search_v2"]
        );
        assert!(warnings.is_empty());
        assert_eq!(clean_name(""), "_");
        assert_eq!(clean_name("ünï"), "_n_");
    }

    #[test]
    fn colliding_tools_get_distinct_stable_suffixes() {
        let (names, warnings) = qualified(&[("s", "a-b"), ("s", "a.b"), ("s", "c")]);
        assert_eq!(names[2], "mcp__s__c");
        assert_ne!(names[0], names[1]);
        for name in &names[..2] {
            assert!(name.starts_with("mcp__s__a_b_"), "{name}");
            assert_eq!(name.len(), "mcp__s__a_b_".len() + 8);
        }
        assert_eq!(warnings.len(), 2);
        // Input order does not matter.
        let (reversed, _) = qualified(&[("s", "c"), ("s", "a.b"), ("s", "a-b")]);
        assert_eq!(reversed[1], names[1]);
        assert_eq!(reversed[2], names[0]);
    }

    #[test]
    fn colliding_servers_get_distinct_namespaces() {
        let (names, warnings) = assign_names(&pairs(&[("a-b", "t"), ("a.b", "t")]));
        assert_ne!(names[0].namespace, names[1].namespace);
        assert!(names[0].namespace.starts_with("mcp__a_b_"));
        assert_eq!(names[0].name, "t");
        assert_eq!(warnings.len(), 2);
    }

    #[test]
    fn long_names_fit_in_64_characters() {
        let long_tool = "x".repeat(100);
        let long_server = "s".repeat(100);
        let (names, warnings) = qualified(&[
            ("srv", long_tool.as_str()),
            (long_server.as_str(), "tool"),
            (long_server.as_str(), long_tool.as_str()),
        ]);
        for name in &names {
            assert!(name.len() <= MAX_NAME_LEN, "{name} is {} long", name.len());
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        }
        let unique: HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), 3);
        assert!(!warnings.is_empty());
    }

    #[test]
    fn duplicate_raw_tools_stay_unique() {
        let (names, _) = qualified(&[("s", "t"), ("s", "t")]);
        assert_eq!(names[0], "mcp__s__t");
        assert_ne!(names[0], names[1]);
    }
}
