//! Commands known to only read: safe to run without asking.
//!
//! The list is deliberately short. A command is known-safe only when its program is one of a
//! few readers, its options cannot make it write, delete or run other programs, nothing it
//! prints goes to a file, and its environment has no variable that could change its behaviour.
//! Programs whose safety depends on their options refuse dynamic arguments: `find . $X` could
//! be `find . -delete`.

use crate::parse::{ParsedCommand, PlainCommand};

/// Environment variables a safe command may be given (locale and display only).
fn is_harmless_env(name: &str) -> bool {
    matches!(
        name,
        "LANG" | "LANGUAGE" | "TZ" | "NO_COLOR" | "TERM" | "COLUMNS" | "LINES" | "CLICOLOR"
    ) || name.starts_with("LC_")
}

/// Bare names, or programs in the standard system directories. `./ls` is not `ls`.
fn is_trusted_location(argv0: &str) -> bool {
    if !argv0.contains('/') {
        return true;
    }
    [
        "/bin/",
        "/usr/bin/",
        "/usr/local/bin/",
        "/opt/homebrew/bin/",
    ]
    .iter()
    .any(|dir| {
        argv0
            .strip_prefix(dir)
            .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
    })
}

/// True when `cmd` only reads: see the crate README for the table.
pub fn is_known_safe(cmd: &PlainCommand) -> bool {
    let Some(argv0) = cmd.argv.first() else {
        return false;
    };
    if cmd.redirects_to_file
        || !is_trusted_location(argv0)
        || cmd.is_dynamic(0)
        || !cmd.env.iter().all(|(name, _)| is_harmless_env(name))
    {
        return false;
    }
    let args = &cmd.argv[1..];
    let any_dynamic = !cmd.dynamic_args.is_empty();
    if evaluates_runtime_arithmetic(cmd) {
        return false;
    }
    match cmd.basename() {
        // Readers with no option that writes or runs anything.
        "ls" | "cat" | "head" | "tail" | "wc" | "pwd" | "echo" | "true" | "false" | "which"
        | "stat" | "du" | "df" | "nl" | "cut" | "tr" | "diff" | "cmp" | "basename" | "dirname"
        | "realpath" | "grep" | "egrep" | "fgrep" | "test" | "[" | "[[" | ":" | "cd" => true,
        "printf" => !args.iter().any(|a| a.starts_with("-v")),
        "file" => !any_dynamic && !args.iter().any(|a| a == "-C" || a == "--compile"),
        "tree" => !any_dynamic && !args.iter().any(|a| a == "-o" || a.starts_with("-o")),
        "sort" => !any_dynamic && sort_is_safe(args),
        "uniq" => !any_dynamic && uniq_is_safe(args),
        "rg" => !any_dynamic && ripgrep_is_safe(args),
        "find" => !any_dynamic && find_is_safe(args),
        "sed" => !any_dynamic && sed_is_safe(args),
        "git" => !any_dynamic && git_is_safe(args),
        _ => false,
    }
}

/// Arithmetic on values only known at run time can run code: bash evaluates a value such as
/// `a[$(cmd)]` by running `cmd`. So `$(( … ))`, `$[ … ]` and array subscripts in dynamic
/// words, and `[[ … -eq … ]]` with a dynamic operand, are never known-safe.
fn evaluates_runtime_arithmetic(cmd: &PlainCommand) -> bool {
    let arithmetic_word = cmd.dynamic_args.iter().any(|&index| {
        cmd.argv.get(index).is_some_and(|word| {
            word.contains("$((")
                || word.contains("$[")
                || (word.contains("${") && word.contains('['))
        })
    });
    let arithmetic_test = cmd.argv.first().is_some_and(|name| name == "[[")
        && !cmd.dynamic_args.is_empty()
        && cmd
            .argv
            .iter()
            .any(|a| matches!(a.as_str(), "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"));
    arithmetic_word || arithmetic_test
}

/// True when the script is analysable, non-empty, and every command in it is known-safe.
pub fn script_is_known_safe(parsed: &ParsedCommand) -> bool {
    match parsed {
        ParsedCommand::Commands(commands) => {
            !commands.is_empty() && commands.iter().all(is_known_safe)
        }
        ParsedCommand::NotAnalysable { .. } => false,
    }
}

/// Short option clusters (`-nro`) other than long options.
fn short_cluster(arg: &str) -> Option<&str> {
    arg.strip_prefix('-')
        .filter(|rest| !rest.is_empty() && !rest.starts_with('-'))
}

fn sort_is_safe(args: &[String]) -> bool {
    !args.iter().any(|a| {
        a.starts_with("--output")
            || a.starts_with("--compress-program")
            || short_cluster(a).is_some_and(|flags| flags.contains('o'))
    })
}

fn uniq_is_safe(args: &[String]) -> bool {
    // `uniq IN OUT` writes OUT: allow at most one operand.
    let mut operands = 0;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if matches!(arg.as_str(), "-f" | "-s" | "-w") {
            iter.next();
        } else if arg == "-" || !arg.starts_with('-') {
            operands += 1;
        }
    }
    operands <= 1
}

fn ripgrep_is_safe(args: &[String]) -> bool {
    !args.iter().any(|a| {
        a.starts_with("--pre")
            || a.starts_with("--hostname-bin")
            || a == "--search-zip"
            || short_cluster(a).is_some_and(|flags| flags.contains('z'))
    })
}

fn find_is_safe(args: &[String]) -> bool {
    !args.iter().any(|a| {
        matches!(
            a.as_str(),
            "-exec"
                | "-execdir"
                | "-ok"
                | "-okdir"
                | "-delete"
                | "-fls"
                | "-fprint"
                | "-fprint0"
                | "-fprintf"
        )
    })
}

/// `sed` is safe only as `sed -n SCRIPT [FILE…]` where the script prints (`p`, `=`) or
/// quits, addressed by line numbers, `$` or regular expressions.
fn sed_is_safe(args: &[String]) -> bool {
    let mut quiet = false;
    let mut scripts = Vec::new();
    let mut operands = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "-n" | "--quiet" | "--silent" => quiet = true,
            "-E" | "-r" | "--regexp-extended" | "-s" | "--separate" | "-u" | "--unbuffered"
            | "-z" | "--null-data" | "--posix" => {}
            "-e" => match iter.next() {
                Some(script) => scripts.push(script.as_str()),
                None => return false,
            },
            _ if arg.starts_with("--expression=") => {
                scripts.push(&arg["--expression=".len()..]);
            }
            _ if arg.starts_with('-') && arg != "-" => {
                // Combined flags such as `-nE`; anything with i (in place), f (script file)
                // or e (expression) attached is not accepted.
                let Some(mut flags) = short_cluster(arg) else {
                    return false;
                };
                if let Some(before) = flags.strip_suffix('e') {
                    // `-ne SCRIPT`
                    match iter.next() {
                        Some(script) => scripts.push(script.as_str()),
                        None => return false,
                    }
                    flags = before;
                }
                if !flags
                    .chars()
                    .all(|f| matches!(f, 'n' | 'E' | 'r' | 's' | 'u' | 'z'))
                {
                    return false;
                }
                quiet |= flags.contains('n');
            }
            _ => operands.push(arg.as_str()),
        }
    }
    if scripts.is_empty() {
        if operands.is_empty() {
            return false;
        }
        scripts.push(operands.remove(0));
    }
    quiet && scripts.iter().all(|script| sed_script_only_prints(script))
}

fn sed_script_only_prints(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let skip_blank = |i: &mut usize| {
        while chars
            .get(*i)
            .is_some_and(|c| c.is_whitespace() || *c == ';')
        {
            *i += 1;
        }
    };
    let address = |i: &mut usize| -> Option<()> {
        match chars.get(*i)? {
            c if c.is_ascii_digit() => {
                while chars.get(*i).is_some_and(char::is_ascii_digit) {
                    *i += 1;
                }
            }
            '$' => *i += 1,
            '/' => {
                *i += 1;
                loop {
                    match chars.get(*i)? {
                        '\\' => *i += 2,
                        '/' => {
                            *i += 1;
                            break;
                        }
                        '\n' => return None,
                        _ => *i += 1,
                    }
                }
            }
            _ => return None,
        }
        Some(())
    };
    skip_blank(&mut i);
    if i >= chars.len() {
        return false;
    }
    while i < chars.len() {
        if chars
            .get(i)
            .is_some_and(|c| c.is_ascii_digit() || *c == '$' || *c == '/')
        {
            if address(&mut i).is_none() {
                return false;
            }
            if chars.get(i) == Some(&',') {
                i += 1;
                if chars.get(i) == Some(&'+') {
                    i += 1;
                }
                if address(&mut i).is_none() {
                    return false;
                }
            }
        }
        if chars.get(i) == Some(&'!') {
            i += 1;
        }
        match chars.get(i) {
            Some('p' | '=' | 'q' | 'Q' | 'l' | 'd' | 'n' | 'N' | 'P') => i += 1,
            _ => return false,
        }
        // A command is followed by a separator or the end.
        match chars.get(i) {
            None => {}
            Some(c) if *c == ';' || c.is_whitespace() => skip_blank(&mut i),
            Some('}') | Some(_) => return false,
        }
    }
    true
}

/// Git global options that take a value and are harmless.
const GIT_GLOBAL_WITH_VALUE: &[&str] = &["-C", "--namespace"];

fn git_is_safe(args: &[String]) -> bool {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "--no-pager"
            | "--no-optional-locks"
            | "--literal-pathspecs"
            | "--no-replace-objects"
            | "--bare" => i += 1,
            a if GIT_GLOBAL_WITH_VALUE.contains(&a) => i += 2,
            a if a.starts_with("--namespace=") => i += 1,
            // -c, --config-env, --exec-path, --git-dir, --work-tree, -p/--paginate and
            // anything unknown: not known to be safe.
            a if a.starts_with('-') => return false,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return false;
    };
    let rest = &args[i + 1..];
    let no_exec_or_output = rest.iter().all(|a| {
        !(a.starts_with("--output")
            || a.starts_with("--ext-diff")
            || a.starts_with("--textconv")
            || a.starts_with("--exec")
            || a.starts_with("--upload-pack")
            || a.starts_with("--receive-pack")
            || a == "--open-files-in-pager"
            || a.starts_with("--paginate")
            || a == "-p" && sub == "grep")
    });
    if !no_exec_or_output {
        return false;
    }
    match sub.as_str() {
        "status" | "log" | "diff" | "show" | "rev-parse" | "ls-files" | "blame" => true,
        "branch" => git_branch_only_lists(rest),
        _ => false,
    }
}

fn git_branch_only_lists(args: &[String]) -> bool {
    let mut listing = false;
    let mut operands = 0;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "-l" | "--list" => listing = true,
            "-a" | "--all" | "-r" | "--remotes" | "-v" | "-vv" | "--verbose" | "--show-current"
            | "--no-color" | "--color" | "--no-abbrev" | "-i" | "--ignore-case"
            | "--omit-empty" => {}
            "--contains" | "--no-contains" | "--merged" | "--no-merged" | "--points-at"
            | "--sort" | "--format" => {
                iter.next();
            }
            a if a.starts_with("--contains=")
                || a.starts_with("--no-contains=")
                || a.starts_with("--merged=")
                || a.starts_with("--no-merged=")
                || a.starts_with("--points-at=")
                || a.starts_with("--sort=")
                || a.starts_with("--format=")
                || a.starts_with("--color=")
                || a.starts_with("--abbrev=") => {}
            a if a.starts_with('-') => return false,
            _ => operands += 1,
        }
    }
    operands == 0 || listing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(argv: &[&str]) -> PlainCommand {
        PlainCommand::new(argv.iter().copied())
    }

    #[test]
    fn safe_table() {
        for argv in [
            &["ls", "-la"][..],
            &["/bin/ls"],
            &["/usr/bin/cat", "Cargo.toml"],
            &["head", "-n", "5", "x"],
            &["tail", "-f", "log"],
            &["wc", "-l"],
            &["grep", "-rn", "foo", "src"],
            &["rg", "-n", "foo"],
            &["rg", "--files"],
            &["find", ".", "-name", "*.rs"],
            &["sed", "-n", "1,5p", "f"],
            &["sed", "-n", "$p", "f"],
            &["sed", "-n", "/start/,/end/p", "f"],
            &["sed", "-ne", "10p"],
            &["sed", "-n", "-e", "1p", "-e", "3p", "f"],
            &["sort", "-u", "f"],
            &["uniq", "-c", "f"],
            &["git", "status"],
            &["git", "-C", "repo", "log", "--oneline", "-5"],
            &["git", "diff", "--stat"],
            &["git", "show", "HEAD:README.md"],
            &["git", "branch"],
            &["git", "branch", "-a", "-v"],
            &["git", "branch", "--list", "feat*"],
            &["git", "rev-parse", "HEAD"],
            &["git", "ls-files", "-o"],
            &["git", "blame", "src/lib.rs"],
            &["tree", "-L", "2"],
            &["diff", "-u", "a", "b"],
            &["printf", "%s\\n", "x"],
        ] {
            assert!(is_known_safe(&cmd(argv)), "expected safe: {argv:?}");
        }
    }

    #[test]
    fn unsafe_table() {
        for argv in [
            &["rm", "x"][..],
            &["./ls"],
            &["/tmp/ls"],
            &["cargo", "check"],
            &["python3", "-c", "print(1)"],
            &["rg", "--pre", "sh", "x"],
            &["rg", "--pre=sh", "x"],
            &["rg", "-z", "x"],
            &["rg", "-nz", "x"],
            &["rg", "--hostname-bin=x", "y"],
            &["find", ".", "-delete"],
            &["find", ".", "-exec", "rm", "{}", ";"],
            &["find", ".", "-execdir", "x", "+"],
            &["find", ".", "-fprint", "out"],
            &["sed", "-i", "s/a/b/", "f"],
            &["sed", "-n", "-i", "1p", "f"],
            &["sed", "-ni", "1p", "f"],
            &["sed", "s/a/b/", "f"],
            &["sed", "-n", "1w out", "f"],
            &["sed", "-n", "s/a/b/e", "f"],
            &["sed", "-n", "1e date", "f"],
            &["sed", "-n", "-f", "script.sed", "f"],
            &["sort", "-o", "out", "f"],
            &["sort", "-uo", "out", "f"],
            &["sort", "--output=out", "f"],
            &["sort", "--compress-program=sh", "f"],
            &["uniq", "in", "out"],
            &["git", "push"],
            &["git", "commit", "-m", "x"],
            &["git", "-c", "core.pager=sh", "log"],
            &["git", "--exec-path=/tmp", "status"],
            &["git", "-p", "log"],
            &["git", "diff", "--ext-diff"],
            &["git", "diff", "--output=x"],
            &["git", "log", "--output", "x"],
            &["git", "branch", "new-branch"],
            &["git", "branch", "-D", "old"],
            &["git", "branch", "-m", "a", "b"],
            &["git", "checkout", "x"],
            &["tree", "-o", "out"],
            &["file", "-C", "-m", "magic"],
            &["printf", "-v", "x", "y"],
            &["tee", "x"],
            &["xargs"],
        ] {
            assert!(!is_known_safe(&cmd(argv)), "expected not safe: {argv:?}");
        }
    }

    #[test]
    fn redirection_env_and_dynamic_arguments_break_safety() {
        let mut redirected = cmd(&["echo", "hi"]);
        redirected.redirects_to_file = true;
        assert!(!is_known_safe(&redirected));

        let mut with_env = cmd(&["rg", "x"]);
        with_env
            .env
            .push(("RIPGREP_CONFIG_PATH".into(), "evil".into()));
        assert!(!is_known_safe(&with_env));

        let mut locale = cmd(&["sort", "f"]);
        locale.env.push(("LC_ALL".into(), "C".into()));
        assert!(is_known_safe(&locale));

        let mut dynamic_find = cmd(&["find", ".", "$X"]);
        dynamic_find.dynamic_args.push(2);
        assert!(!is_known_safe(&dynamic_find));

        let mut dynamic_cat = cmd(&["cat", "$f"]);
        dynamic_cat.dynamic_args.push(1);
        assert!(is_known_safe(&dynamic_cat));

        let mut arithmetic = cmd(&["echo", "$((x + 1))"]);
        arithmetic.dynamic_args.push(1);
        assert!(!is_known_safe(&arithmetic));

        let mut subscript = cmd(&["echo", "${a[$i]}"]);
        subscript.dynamic_args.push(1);
        assert!(!is_known_safe(&subscript));

        let mut numeric_test = cmd(&["[[", "$x", "-eq", "1", "]]"]);
        numeric_test.dynamic_args.push(1);
        assert!(!is_known_safe(&numeric_test));
    }

    #[test]
    fn scripts_are_safe_only_when_every_part_is() {
        use crate::parse_script;
        assert!(script_is_known_safe(&parse_script("ls && pwd | wc -l")));
        assert!(script_is_known_safe(&parse_script(
            "grep -rn x src 2>/dev/null || true"
        )));
        assert!(!script_is_known_safe(&parse_script("ls > out.txt")));
        assert!(!script_is_known_safe(&parse_script("ls; rm x")));
        assert!(!script_is_known_safe(&parse_script("echo $(rm x)")));
        assert!(!script_is_known_safe(&parse_script("x=ls; $x")));
        assert!(!script_is_known_safe(&parse_script("")));
        assert!(!script_is_known_safe(&parse_script("x=$(cat f); (( x ))")));
        assert!(!script_is_known_safe(&parse_script(
            "x=$(cat f); echo $((x))"
        )));
    }
}
