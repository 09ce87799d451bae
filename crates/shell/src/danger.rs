//! Commands that destroy data or take over the machine: always worth a second look.
//!
//! Matching is by program name ([`crate::command_basename`]), so `/bin/rm` is `rm`. The list
//! is short and concrete; it complements, never replaces, the known-safe list: a command that
//! is neither known-safe nor dangerous is simply unknown.

use crate::command_basename;
use crate::parse::{ParsedCommand, PlainCommand};

/// Why `cmd` is dangerous, or `None`.
pub fn is_dangerous(cmd: &PlainCommand) -> Option<&'static str> {
    let argv0 = cmd.argv.first()?;
    let args = &cmd.argv[1..];
    match command_basename(argv0) {
        "rm" => rm_danger(cmd, args),
        "git" => git_danger(args),
        "sudo" | "doas" | "pkexec" | "su" | "run0" | "runuser" => {
            Some("runs a command with another user's (usually root's) privileges")
        }
        name if name == "mkfs" || name.starts_with("mkfs.") => {
            Some("creates a file system, erasing the device")
        }
        "mke2fs" | "mkswap" | "wipefs" | "fdisk" | "sfdisk" | "parted" | "sgdisk" => {
            Some("rewrites disk partitions or file systems")
        }
        "dd" if args.iter().any(|a| a.starts_with("of=/dev/")) => {
            Some("dd writes straight to a device")
        }
        "shred" => Some("shred overwrites files so they cannot be recovered"),
        "chmod" | "chown" | "chgrp"
            if has_flag(args, 'R', "--recursive") && args.iter().any(|a| is_broad_path(a)) =>
        {
            Some("changes ownership or permissions recursively on a top-level directory")
        }
        "find" if args.iter().any(|a| a == "-delete") => Some("find -delete removes files"),
        "shutdown" | "reboot" | "halt" | "poweroff" => Some("stops or restarts the machine"),
        _ => None,
    }
}

/// The first dangerous command of an analysed script, described with its command line.
/// Scripts that are not analysable give `None`: they are unknown, which the caller must
/// already treat with suspicion.
pub fn script_dangerous_reason(parsed: &ParsedCommand) -> Option<String> {
    let ParsedCommand::Commands(commands) = parsed else {
        return None;
    };
    commands.iter().find_map(|cmd| {
        is_dangerous(cmd).map(|reason| format!("`{}`: {reason}", cmd.argv.join(" ")))
    })
}

/// Options end at `--`; a short cluster (`-rf`) counts for each letter.
fn has_flag(args: &[String], short: char, long: &str) -> bool {
    args.iter().take_while(|a| a.as_str() != "--").any(|a| {
        a == long
            || a.strip_prefix('-')
                .is_some_and(|f| !f.starts_with('-') && f.contains(short))
    })
}

fn rm_danger(cmd: &PlainCommand, args: &[String]) -> Option<&'static str> {
    let recursive = has_flag(args, 'r', "--recursive") || has_flag(args, 'R', "--recursive");
    let force = has_flag(args, 'f', "--force");
    if args.iter().any(|a| a == "--no-preserve-root") {
        return Some("rm --no-preserve-root can delete the whole file system");
    }
    if recursive && force {
        return Some("rm with -r and -f deletes whole trees without asking");
    }
    if recursive {
        let mut after_options = false;
        for (index, arg) in args.iter().enumerate() {
            if arg == "--" {
                after_options = true;
                continue;
            }
            if !after_options && arg.starts_with('-') && !cmd.is_dynamic(index + 1) {
                continue;
            }
            if is_broad_path(arg) || cmd.is_dynamic(index + 1) {
                return Some(
                    "rm -r on a top-level, home, parent or wildcard path, or on a path only \
                     known at run time",
                );
            }
        }
    }
    None
}

/// `/`, `~`, `$HOME`, `.`, `..`, `*` and top-level system directories, with or without a
/// trailing `/` or `/*`, and with quotes left on dynamic words.
pub(crate) fn is_broad_path(arg: &str) -> bool {
    let unquoted = arg.trim_matches(|c| c == '"' || c == '\'');
    let trimmed = unquoted
        .strip_suffix("/*")
        .or_else(|| unquoted.strip_suffix("/."))
        .unwrap_or(unquoted);
    let trimmed = if trimmed.len() > 1 {
        trimmed.trim_end_matches('/')
    } else {
        trimmed
    };
    matches!(
        trimmed,
        "" | "/"
            | "~"
            | "$HOME"
            | "${HOME}"
            | "."
            | ".."
            | "*"
            | ".*"
            | "./*"
            | "../*"
            | "/bin"
            | "/boot"
            | "/dev"
            | "/etc"
            | "/home"
            | "/lib"
            | "/lib64"
            | "/opt"
            | "/proc"
            | "/root"
            | "/sbin"
            | "/srv"
            | "/sys"
            | "/usr"
            | "/var"
            | "/Users"
            | "/System"
            | "/Library"
            | "/Applications"
    )
}

/// Finds git's subcommand after its global options.
fn git_subcommand(args: &[String]) -> Option<(usize, &str)> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path"
            | "--config-env" | "--super-prefix" => i += 2,
            a if a.starts_with('-') => i += 1,
            a => return Some((i, a)),
        }
    }
    None
}

fn git_danger(args: &[String]) -> Option<&'static str> {
    let (index, sub) = git_subcommand(args)?;
    let rest = &args[index + 1..];
    match sub {
        "reset" if rest.iter().any(|a| a == "--hard") => {
            Some("git reset --hard discards uncommitted changes")
        }
        "push"
            if rest.iter().any(|a| {
                a == "--force"
                    || a.starts_with("--force-with-lease")
                    || a == "--force-if-includes"
                    || a == "--mirror"
                    || a == "--delete"
                    || a.starts_with('+')
                    || a.strip_prefix('-').is_some_and(|f| {
                        !f.starts_with('-') && (f.contains('f') || f.contains('d'))
                    })
                    || a.starts_with(':')
            }) =>
        {
            Some("git push that overwrites or deletes remote history")
        }
        "clean" if has_flag(rest, 'f', "--force") => Some("git clean -f deletes untracked files"),
        "checkout" if rest.iter().any(|a| a == "-f" || a == "--force") => {
            Some("git checkout --force discards local changes")
        }
        "branch"
            if has_flag(rest, 'D', "-D")
                || (has_flag(rest, 'd', "--delete") && has_flag(rest, 'f', "--force")) =>
        {
            Some("git branch -D deletes a branch even when it is not merged")
        }
        "stash" if rest.first().is_some_and(|a| a == "clear" || a == "drop") => {
            Some("git stash clear/drop deletes stashed work")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_script;

    fn cmd(argv: &[&str]) -> PlainCommand {
        PlainCommand::new(argv.iter().copied())
    }

    #[test]
    fn dangerous_table() {
        for argv in [
            &["rm", "-rf", "/"][..],
            &["rm", "-r", "-f", "build"],
            &["rm", "-fr", "x"],
            &["rm", "-Rf", "x"],
            &["rm", "--recursive", "--force", "x"],
            &["/bin/rm", "-rf", "x"],
            &["rm", "-r", "/"],
            &["rm", "-r", "~"],
            &["rm", "-r", "$HOME"],
            &["rm", "-r", ".."],
            &["rm", "-r", "*"],
            &["rm", "-r", "."],
            &["rm", "-r", "/usr/"],
            &["rm", "--no-preserve-root", "-r", "/"],
            &["git", "reset", "--hard"],
            &["git", "reset", "--hard", "HEAD~3"],
            &["git", "push", "--force"],
            &["git", "push", "-f", "origin", "main"],
            &["git", "push", "--force-with-lease"],
            &["git", "push", "origin", "+main"],
            &["git", "push", "origin", "--delete", "x"],
            &["git", "-C", "repo", "push", "-f"],
            &["git", "clean", "-fdx"],
            &["git", "clean", "-f"],
            &["git", "branch", "-D", "x"],
            &["sudo", "ls"],
            &["doas", "ls"],
            &["mkfs.ext4", "/dev/sda1"],
            &["mkfs", "-t", "ext4", "/dev/sda1"],
            &["dd", "if=/dev/zero", "of=/dev/sda"],
            &["chmod", "-R", "777", "/"],
            &["chown", "-R", "me", "/home"],
            &["find", "/", "-delete"],
        ] {
            assert!(
                is_dangerous(&cmd(argv)).is_some(),
                "expected dangerous: {argv:?}"
            );
        }
    }

    #[test]
    fn ordinary_table() {
        for argv in [
            &["rm", "x"][..],
            &["rm", "-f", "x"],
            &["rm", "-r", "build"],
            &["rm", "--", "-rf"],
            &["git", "reset", "HEAD~1"],
            &["git", "push"],
            &["git", "push", "origin", "main"],
            &["git", "clean", "-n"],
            &["git", "branch", "-d", "merged"],
            &["dd", "if=/dev/zero", "of=out.img"],
            &["chmod", "-R", "755", "build"],
            &["chmod", "777", "x"],
            &["ls", "-rf"],
            &["find", ".", "-name", "x"],
        ] {
            assert_eq!(
                is_dangerous(&cmd(argv)),
                None,
                "expected ordinary: {argv:?}"
            );
        }
    }

    #[test]
    fn rm_r_on_a_dynamic_path_is_dangerous() {
        let mut rm = cmd(&["rm", "-r", "\"$DIR/\""]);
        rm.dynamic_args.push(2);
        assert!(is_dangerous(&rm).is_some());
    }

    #[test]
    fn scripts_report_the_first_dangerous_command() {
        assert_eq!(
            script_dangerous_reason(&parse_script("ls && rm -rf build")).as_deref(),
            Some("`rm -rf build`: rm with -r and -f deletes whole trees without asking")
        );
        assert!(script_dangerous_reason(&parse_script("echo $(git reset --hard)")).is_some());
        assert!(script_dangerous_reason(&parse_script("sudo make install")).is_some());
        assert_eq!(script_dangerous_reason(&parse_script("ls; make")), None);
        assert_eq!(
            script_dangerous_reason(&parse_script(":(){ :|:& };:")),
            None
        );
    }
}
