//! Looking through commands that only wrap another command.
//!
//! `env X=1 timeout 5 nice -n 3 rm x` runs `rm x`; `bash -c 'rm x'` too. Wrappers that change
//! nothing about *what* runs are removed from the list; wrappers that matter in themselves
//! (`sudo`, `find -exec`, `trap`) are reported and so is the command they run. Commands that
//! run code we cannot see (`source file`, `bash` reading standard input, PowerShell) end the
//! analysis.

use super::walker::{Accumulator, Context, analyse_script, check_assigned_name};
use super::words::Word;
use super::{Refusal, refuse};
use crate::command_basename;

/// Resolves one command's evaluated words (name first) under `ctx`.
pub(crate) fn resolve_in(
    acc: &mut Accumulator,
    words: Vec<Word>,
    ctx: &Context,
    nesting: usize,
) -> Result<(), Refusal> {
    let Some(first) = words.first() else {
        return Ok(());
    };
    if first.dynamic {
        return refuse(format!(
            "the command name `{}` is only known when the script runs",
            first.text
        ));
    }
    let name = command_basename(&first.text).to_string();
    match name.as_str() {
        "env" => env(acc, words, ctx, nesting),
        "command" => {
            let rest = skip_options(&words, 1, "", &[], "command")?;
            let lookup_only = words[1..rest]
                .iter()
                .any(|w| w.text.starts_with('-') && (w.text.contains('v') || w.text.contains('V')));
            if lookup_only {
                acc.push(&words, ctx, &[]);
                Ok(())
            } else {
                look_through(acc, &words, rest, ctx, nesting)
            }
        }
        "builtin" | "nohup" | "setsid" | "coproc" => {
            let rest = skip_options(&words, 1, "", &[], &name)?;
            look_through(acc, &words, rest, ctx, nesting)
        }
        "exec" => {
            let rest = skip_options(&words, 1, "a", &[], "exec")?;
            // `exec {fd}>file` only opens a descriptor (the parser reads `{fd}` as a word).
            let opens_descriptor = words.get(rest).is_some_and(|w| {
                w.text.len() > 2
                    && w.text.starts_with('{')
                    && w.text.ends_with('}')
                    && w.text[1..w.text.len() - 1]
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            if opens_descriptor && words.len() == rest + 1 {
                acc.push(&words, ctx, &[]);
                return Ok(());
            }
            look_through(acc, &words, rest, ctx, nesting)
        }
        "nice" => {
            let rest = skip_options(&words, 1, "n", &["--adjustment"], "nice")?;
            look_through(acc, &words, rest, ctx, nesting)
        }
        "stdbuf" => {
            let rest = skip_options(
                &words,
                1,
                "ioe",
                &["--input", "--output", "--error"],
                "stdbuf",
            )?;
            look_through(acc, &words, rest, ctx, nesting)
        }
        "time" => {
            let rest = skip_options(&words, 1, "of", &["--output", "--format"], "time")?;
            let writes = words[1..rest]
                .iter()
                .any(|w| w.text == "-o" || w.text.starts_with("--output"));
            let mut inner = ctx.clone();
            inner.redirect |= writes;
            look_through(acc, &words, rest, &inner, nesting)
        }
        "timeout" => {
            let rest = skip_options(&words, 1, "sk", &["--signal", "--kill-after"], "timeout")?;
            // The first operand is the duration.
            look_through(acc, &words, rest + 1, ctx, nesting)
        }
        "ionice" => {
            let rest = skip_options(
                &words,
                1,
                "cnpPu",
                &["--class", "--classdata", "--pid", "--pgid", "--uid"],
                "ionice",
            )?;
            let targets_process = words[1..rest].iter().any(|w| {
                matches!(
                    w.text.as_str(),
                    "-p" | "-P" | "-u" | "--pid" | "--pgid" | "--uid"
                )
            });
            if targets_process {
                acc.push(&words, ctx, &[]);
                Ok(())
            } else {
                look_through(acc, &words, rest, ctx, nesting)
            }
        }
        "busybox" if words.get(1).is_some_and(|w| !w.text.starts_with('-')) => {
            look_through(acc, &words, 1, ctx, nesting)
        }
        "xargs" => xargs(acc, words, ctx, nesting),
        "sudo" | "doas" | "pkexec" | "run0" => privileged(acc, words, ctx, nesting, &name),
        "su" | "runuser" => su(acc, words, ctx, nesting),
        "chroot" => {
            acc.push(&words, ctx, &[]);
            let rest = skip_options(&words, 1, "", &["--userspec", "--groups"], "chroot")?;
            // The first operand is the new root; a command may follow.
            if words.len() > rest + 1 {
                look_through(acc, &words, rest + 1, ctx, nesting)
            } else {
                Ok(())
            }
        }
        "find" => find(acc, words, ctx, nesting),
        "eval" => {
            let script = constant_script(&words[1..], "eval")?;
            analyse_script(acc, &script, nesting + 1, ctx)
        }
        "trap" => trap(acc, words, ctx, nesting),
        "source" | "." => refuse(format!(
            "`{}` runs the shell file `{}` in this shell, and its contents are not visible here",
            first.text,
            words.get(1).map_or("", |w| w.text.as_str())
        )),
        "alias" if words.len() > 1 => refuse(
            "the script defines an alias, so a command name may not mean the program it names",
        ),
        "hash"
            if words[1..]
                .iter()
                .any(|w| w.dynamic || w.text.starts_with('-') && w.text.contains('p')) =>
        {
            refuse("`hash -p` binds a command name to another program")
        }
        "enable"
            if words
                .iter()
                .skip(1)
                .any(|w| w.text.starts_with('-') && w.text.contains('f')) =>
        {
            refuse("`enable -f` loads new builtin commands from a shared library")
        }
        "fc" | "watch" => refuse(format!(
            "`{name}` runs commands that are only known when the script runs"
        )),
        "read" | "printf" | "mapfile" | "readarray" | "getopts" | "let" => {
            // These builtins assign variables named by their arguments (`printf` only the
            // one after `-v`).
            let targets: Vec<&Word> = if name == "printf" {
                words
                    .iter()
                    .skip_while(|w| w.text != "-v")
                    .nth(1)
                    .into_iter()
                    .chain(words.iter().filter_map(|w| {
                        w.text
                            .strip_prefix("-v")
                            .filter(|rest| !rest.is_empty())
                            .map(|_| w)
                    }))
                    .collect()
            } else {
                words[1..].iter().collect()
            };
            for word in targets {
                let text = if name == "printf" {
                    word.text.strip_prefix("-v").unwrap_or(&word.text)
                } else {
                    &word.text
                };
                let target = text.split(['=', '[', '+']).next().unwrap_or("");
                if !word.dynamic {
                    check_assigned_name(target, true)?;
                }
            }
            if name == "let" {
                acc.arithmetic = true;
            }
            acc.push(&words, ctx, &[]);
            Ok(())
        }
        "pwsh" | "powershell" | "pwsh.exe" | "powershell.exe" | "pwsh-preview" => refuse(
            "PowerShell scripts are not analysed: there is no PowerShell parser available here",
        ),
        "cmd" | "cmd.exe" => refuse("cmd.exe command lines are not analysed"),
        "fish" | "csh" | "tcsh" | "nu" | "xonsh" | "elvish" => refuse(format!(
            "`{name}` scripts are not analysed: only POSIX-style shells (sh, bash, zsh) are"
        )),
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "yash" | "posh" | "rbash"
        | "lksh" | "oksh" | "ksh93" => posix_shell(acc, words, ctx, nesting, &name),
        _ => {
            acc.push(&words, ctx, &[]);
            Ok(())
        }
    }
}

/// Continues with `words[start..]` as the command that a wrapper runs. A wrapper with no
/// command is reported as itself (`nice` alone prints the niceness).
fn look_through(
    acc: &mut Accumulator,
    words: &[Word],
    start: usize,
    ctx: &Context,
    nesting: usize,
) -> Result<(), Refusal> {
    if start >= words.len() {
        acc.push(words, ctx, &[]);
        return Ok(());
    }
    if words[start].dynamic {
        return refuse(format!(
            "the command that `{}` runs (`{}`) is only known when the script runs",
            words[0].text, words[start].text
        ));
    }
    resolve_in(acc, words[start..].to_vec(), ctx, nesting)
}

/// Skips the options of a wrapper starting at `start`; returns the index of the first
/// operand. `short_with_value` lists short options that take a value (attached or as the next
/// word); `long_with_value` lists long options that take the next word as value when written
/// without `=`.
fn skip_options(
    words: &[Word],
    start: usize,
    short_with_value: &str,
    long_with_value: &[&str],
    wrapper: &str,
) -> Result<usize, Refusal> {
    let mut i = start;
    while let Some(word) = words.get(i) {
        let text = word.text.as_str();
        if word.dynamic {
            return refuse(format!(
                "an option of `{wrapper}` (`{text}`) is only known when the script runs"
            ));
        }
        if text == "--" {
            return Ok(i + 1);
        }
        if let Some(long) = text.strip_prefix("--") {
            let takes_value = !long.contains('=') && long_with_value.contains(&text);
            i += if takes_value { 2 } else { 1 };
            continue;
        }
        if let Some(flags) = text.strip_prefix('-')
            && !flags.is_empty()
        {
            i += 1;
            for (offset, flag) in flags.char_indices() {
                if short_with_value.contains(flag) {
                    if offset + flag.len_utf8() == flags.len() {
                        i += 1;
                    }
                    break;
                }
            }
            continue;
        }
        return Ok(i);
    }
    Ok(i)
}

fn env(
    acc: &mut Accumulator,
    words: Vec<Word>,
    ctx: &Context,
    nesting: usize,
) -> Result<(), Refusal> {
    let mut i = 1;
    let mut assigned = Vec::new();
    while let Some(word) = words.get(i) {
        let text = word.text.as_str();
        if word.dynamic {
            return refuse(format!(
                "an argument of `env` (`{text}`) is only known when the script runs"
            ));
        }
        match text {
            "--" => {
                i += 1;
                break;
            }
            "-" | "-i" | "-0" | "-v" | "--ignore-environment" | "--null" | "--debug" => i += 1,
            "-u" | "--unset" | "-C" | "--chdir" => i += 2,
            _ if text.starts_with("-S") || text.starts_with("--split-string") => {
                return refuse("`env -S` splits a string into a command line at run time");
            }
            _ if text.starts_with("-P") => {
                return refuse("`env -P` searches another PATH for the command");
            }
            _ if text.starts_with("--unset=")
                || text.starts_with("--chdir=")
                || text.starts_with("-u")
                || text.starts_with("-C")
                || text.starts_with("--default-signal")
                || text.starts_with("--ignore-signal")
                || text.starts_with("--block-signal")
                || text.starts_with("--list-signal-handling") =>
            {
                i += 1
            }
            _ if text.starts_with('-') => {
                return refuse(format!("`env` option `{text}` is not understood here"));
            }
            _ => break,
        }
    }
    while let Some(word) = words.get(i) {
        let Some((name, value)) = word.text.split_once('=') else {
            break;
        };
        if name.is_empty() {
            break;
        }
        check_assigned_name(name, false)?;
        assigned.push((name.to_string(), value.to_string()));
        i += 1;
    }
    if i >= words.len() {
        acc.push(&words, ctx, &[]);
        return Ok(());
    }
    let mut inner = ctx.clone();
    inner.env.extend(assigned);
    look_through(acc, &words, i, &inner, nesting)
}

fn xargs(
    acc: &mut Accumulator,
    words: Vec<Word>,
    ctx: &Context,
    nesting: usize,
) -> Result<(), Refusal> {
    const WITH_VALUE: &str = "dEILnPsa";
    const LONG_WITH_VALUE: &[&str] = &[
        "--arg-file",
        "--delimiter",
        "--eof",
        "--replace",
        "--max-lines",
        "--max-args",
        "--max-procs",
        "--max-chars",
        "--process-slot-var",
    ];
    let mut replace: Option<String> = None;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let text = word.text.as_str();
        if word.dynamic {
            return refuse(format!(
                "an argument of `xargs` (`{text}`) is only known when the script runs"
            ));
        }
        if text == "--" {
            i += 1;
            break;
        }
        if let Some(rest) = text.strip_prefix("--replace") {
            replace = Some(rest.strip_prefix('=').unwrap_or("{}").to_string());
            i += 1;
            continue;
        }
        if text.starts_with("--") {
            let takes_value = !text.contains('=') && LONG_WITH_VALUE.contains(&text);
            i += if takes_value { 2 } else { 1 };
            continue;
        }
        let Some(flags) = text.strip_prefix('-').filter(|f| !f.is_empty()) else {
            break;
        };
        i += 1;
        for (offset, flag) in flags.char_indices() {
            let attached = &flags[offset + flag.len_utf8()..];
            if flag == 'i' {
                replace = Some(if attached.is_empty() { "{}" } else { attached }.to_string());
                break;
            }
            if WITH_VALUE.contains(flag) {
                let value = if attached.is_empty() {
                    i += 1;
                    words.get(i - 1).map(|w| w.text.clone()).unwrap_or_default()
                } else {
                    attached.to_string()
                };
                if flag == 'I' {
                    replace = Some(value);
                }
                break;
            }
        }
    }
    if i >= words.len() {
        // Without a command xargs runs `echo`.
        acc.push(&[Word::fixed("echo")], ctx, &[]);
        return Ok(());
    }
    let mut inner: Vec<Word> = words[i..].to_vec();
    if let Some(replace) = replace.filter(|r| !r.is_empty()) {
        mark_placeholder(&mut inner, &replace, "xargs")?;
    }
    resolve_in(acc, inner, ctx, nesting)
}

/// Words that contain a placeholder (`{}` of `find -exec`, xargs' replace string) receive
/// input at run time, so they are dynamic; a command name with one is refused.
fn mark_placeholder(words: &mut [Word], placeholder: &str, wrapper: &str) -> Result<(), Refusal> {
    for (index, word) in words.iter_mut().enumerate() {
        if word.text.contains(placeholder) {
            if index == 0 {
                return refuse(format!(
                    "the command that `{wrapper}` runs is taken from its input"
                ));
            }
            word.dynamic = true;
        }
    }
    Ok(())
}

fn privileged(
    acc: &mut Accumulator,
    words: Vec<Word>,
    ctx: &Context,
    nesting: usize,
    name: &str,
) -> Result<(), Refusal> {
    acc.push(&words, ctx, &[]);
    let (short, long): (&str, &[&str]) = match name {
        "sudo" | "run0" => (
            "ugCDhprtTUR",
            &[
                "--user",
                "--group",
                "--close-from",
                "--chdir",
                "--host",
                "--prompt",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--chroot",
                "--unit",
                "--property",
                "--description",
                "--slice",
                "--setenv",
                "--nice",
                "--background",
            ],
        ),
        "doas" => ("uC", &[]),
        _ => ("", &["--user"]),
    };
    let rest = skip_options(&words, 1, short, long, name)?;
    let edits = words[1..rest].iter().any(|w| {
        w.text == "--edit"
            || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('e'))
    });
    if edits || rest >= words.len() {
        return Ok(());
    }
    let mut i = rest;
    let mut assigned = Vec::new();
    while let Some((key, value)) = words.get(i).and_then(|w| w.text.split_once('=')) {
        if key.is_empty() || key.contains('/') {
            break;
        }
        check_assigned_name(key, false)?;
        assigned.push((key.to_string(), value.to_string()));
        i += 1;
    }
    let mut inner = ctx.clone();
    inner.env.extend(assigned);
    if i >= words.len() {
        return Ok(());
    }
    look_through(acc, &words, i, &inner, nesting)
}

fn su(
    acc: &mut Accumulator,
    words: Vec<Word>,
    ctx: &Context,
    nesting: usize,
) -> Result<(), Refusal> {
    acc.push(&words, ctx, &[]);
    let mut script = None;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let text = word.text.as_str();
        if text == "-c" || text == "--command" {
            script = words.get(i + 1);
            i += 2;
        } else if let Some(value) = text.strip_prefix("--command=") {
            return analyse_script(acc, value, nesting + 1, ctx);
        } else {
            i += 1;
        }
    }
    match script {
        Some(word) if word.dynamic => {
            refuse("the script given to `su -c` is only known at run time")
        }
        Some(word) => analyse_script(acc, &word.text.clone(), nesting + 1, ctx),
        None => Ok(()),
    }
}

fn find(
    acc: &mut Accumulator,
    words: Vec<Word>,
    ctx: &Context,
    nesting: usize,
) -> Result<(), Refusal> {
    acc.push(&words, ctx, &[]);
    let mut i = 1;
    while i < words.len() {
        if matches!(
            words[i].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let start = i + 1;
            let mut end = start;
            while end < words.len() && !matches!(words[end].text.as_str(), ";" | "+") {
                end += 1;
            }
            let mut inner = words[start..end].to_vec();
            if !inner.is_empty() {
                mark_placeholder(&mut inner, "{}", "find -exec")?;
                resolve_in(acc, inner, ctx, nesting)?;
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    Ok(())
}

fn trap(
    acc: &mut Accumulator,
    words: Vec<Word>,
    ctx: &Context,
    nesting: usize,
) -> Result<(), Refusal> {
    acc.push(&words, ctx, &[]);
    let mut args = &words[1..];
    if args.first().is_some_and(|w| w.text == "--") {
        args = &args[1..];
    }
    if args.len() < 2 || args[0].text.starts_with('-') && !args[0].dynamic {
        return Ok(());
    }
    let script = constant_script(&args[..1], "trap")?;
    analyse_script(acc, &script, nesting + 1, ctx)
}

/// Joins words that form a script (`eval a b` runs `a b`); any dynamic word refuses.
fn constant_script(words: &[Word], what: &str) -> Result<String, Refusal> {
    if let Some(word) = words.iter().find(|w| w.dynamic) {
        return refuse(format!(
            "`{what}` runs code built at run time (`{}`)",
            word.text
        ));
    }
    Ok(words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" "))
}

fn posix_shell(
    acc: &mut Accumulator,
    words: Vec<Word>,
    ctx: &Context,
    nesting: usize,
    name: &str,
) -> Result<(), Refusal> {
    let mut has_command_string = false;
    let mut reads_stdin = false;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let text = word.text.as_str();
        if word.dynamic {
            return refuse(format!(
                "an argument of `{name}` (`{text}`) is only known when the script runs"
            ));
        }
        if text == "--" || text == "-" {
            i += 1;
            break;
        }
        if text.starts_with("--") {
            match text {
                "--version" | "--help" => {
                    acc.push(&words, ctx, &[]);
                    return Ok(());
                }
                "--rcfile" | "--init-file" => i += 2,
                _ => i += 1,
            }
            continue;
        }
        let flags = match text.strip_prefix('-').or_else(|| text.strip_prefix('+')) {
            Some(flags) if !flags.is_empty() => flags,
            _ => break,
        };
        i += 1;
        for flag in flags.chars() {
            match flag {
                'c' if text.starts_with('-') => has_command_string = true,
                's' | 'i' => reads_stdin = true,
                'o' | 'O' => i += 1,
                _ => {}
            }
        }
    }
    if has_command_string {
        let Some(script) = words.get(i) else {
            return refuse(format!(
                "`{name} -c` has no script argument, so the script comes from elsewhere"
            ));
        };
        if script.dynamic {
            return refuse(format!(
                "the script given to `{name} -c` (`{}`) is only known when it runs",
                script.text
            ));
        }
        let script = script.text.clone();
        return analyse_script(acc, &script, nesting + 1, ctx);
    }
    if reads_stdin || i >= words.len() {
        return refuse(format!(
            "`{name}` without `-c` reads its script from standard input, which is not visible \
             here"
        ));
    }
    // `bash file.sh`: runs a script file; report it as the command it is.
    acc.push(&words, ctx, &[]);
    Ok(())
}
