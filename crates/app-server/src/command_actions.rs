//! What a command does, in the words of Codex's `commandActions`: reading a file, listing
//! files, searching, or something else. Clients use them to show "Read README.md" instead of
//! a raw command line. A command line whose every command is one of the known kinds gets
//! one action per command; anything else is a single `unknown` action holding the script.

use osprey_app_server_protocol::CommandAction;
use osprey_shell::{PlainCommand, parse_script};

/// The actions of a command shown as a shell-quoted argv (`/bin/bash -lc 'cat a.txt'`).
pub fn command_actions(command: &str) -> Vec<CommandAction> {
    let script = script_of(command);
    let unknown = || {
        vec![CommandAction::Unknown {
            command: script.clone(),
        }]
    };
    let parsed = parse_script(&script);
    let Some(commands) = parsed.commands() else {
        return unknown();
    };
    if commands.is_empty() {
        return unknown();
    }
    let actions: Option<Vec<CommandAction>> = commands.iter().map(classify).collect();
    actions.unwrap_or_else(unknown)
}

/// The script inside `shell -lc SCRIPT` / `shell -c SCRIPT`, or the command itself.
fn script_of(command: &str) -> String {
    if let Some(argv) = shlex::split(command)
        && argv.len() == 3
        && matches!(argv[1].as_str(), "-lc" | "-c")
        && matches!(
            osprey_shell::command_basename(&argv[0]),
            "bash" | "sh" | "zsh" | "dash"
        )
    {
        return argv[2].clone();
    }
    command.to_owned()
}

/// The words that are not options.
fn operands(cmd: &PlainCommand) -> Vec<&str> {
    cmd.argv
        .iter()
        .skip(1)
        .map(String::as_str)
        .filter(|word| !word.starts_with('-'))
        .collect()
}

fn joined(cmd: &PlainCommand) -> String {
    shlex::try_join(cmd.argv.iter().map(String::as_str)).unwrap_or_else(|_| cmd.argv.join(" "))
}

fn classify(cmd: &PlainCommand) -> Option<CommandAction> {
    if cmd.redirects_to_file {
        return None;
    }
    let text = joined(cmd);
    match cmd.basename() {
        "cat" | "head" | "tail" | "less" | "more" | "nl" | "bat" => {
            let files = operands(cmd);
            let [path] = files.as_slice() else {
                return None;
            };
            Some(read(text, path))
        }
        "sed" if cmd.argv.iter().any(|w| w == "-n") => {
            let files = operands(cmd);
            let path = files.last()?;
            Some(read(text, path))
        }
        "ls" | "tree" | "fd" => Some(CommandAction::ListFiles {
            command: text,
            path: operands(cmd).last().map(|p| (*p).to_owned()),
        }),
        "find" => Some(CommandAction::ListFiles {
            command: text,
            path: cmd.argv.get(1).filter(|w| !w.starts_with('-')).cloned(),
        }),
        "rg" | "grep" | "ag" | "ack" => {
            let words = operands(cmd);
            Some(CommandAction::Search {
                command: text,
                query: words.first().map(|q| (*q).to_owned()),
                path: words.get(1).map(|p| (*p).to_owned()),
            })
        }
        _ => None,
    }
}

fn read(command: String, path: &str) -> CommandAction {
    let name = path.rsplit('/').next().unwrap_or(path).to_owned();
    CommandAction::Read {
        command,
        name,
        path: path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn reads_lists_and_searches_are_named() {
        assert_eq!(
            command_actions("/bin/bash -lc 'cat src/main.rs'"),
            vec![CommandAction::Read {
                command: "cat src/main.rs".into(),
                name: "main.rs".into(),
                path: "src/main.rs".into(),
            }]
        );
        assert!(matches!(
            command_actions("/bin/bash -lc 'ls -la src'").as_slice(),
            [CommandAction::ListFiles { path: Some(p), .. }] if p == "src"
        ));
        assert!(matches!(
            command_actions("/bin/bash -lc 'rg -n TODO crates'").as_slice(),
            [CommandAction::Search { query: Some(q), path: Some(p), .. }] if q == "TODO" && p == "crates"
        ));
    }

    #[test]
    fn anything_else_is_one_unknown_action_with_the_script() {
        assert_eq!(
            command_actions("/bin/bash -lc 'echo hello; echo world'"),
            vec![CommandAction::Unknown {
                command: "echo hello; echo world".into()
            }]
        );
        assert_eq!(
            command_actions("/bin/bash -lc 'cat a > b'"),
            vec![CommandAction::Unknown {
                command: "cat a > b".into()
            }]
        );
    }
}
