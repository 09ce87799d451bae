//! Walking a tree-sitter-bash syntax tree into plain commands.
//!
//! The walker knows every statement form bash has (lists, pipelines, groups, loops,
//! conditionals, `case`, tests, declarations, assignments) and every word form (quotes,
//! escapes, expansions, substitutions). Any node kind it does not know ends the analysis: an
//! unfamiliar construct is a reason to ask a person, never a reason to guess.

use tree_sitter::Node;

use super::checks;
use super::words::{
    Word, decode_ansi_c, has_brace_expansion, unescape_backquoted, unescape_double_quoted,
    unescape_unquoted,
};
use super::{MAX_SCRIPT_NESTING, MAX_TREE_DEPTH, PlainCommand, Refusal, parse_tree, refuse};

/// What the caller's command line imposes on every command of an inner script: `bash -c
/// 'ls' > out` writes `ls`'s output to a file; `env X=1 bash -c 'ls'` gives `ls` `X=1`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Context {
    pub(crate) redirect: bool,
    pub(crate) env: Vec<(String, String)>,
}

/// Everything found so far across nested scripts.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    pub(crate) commands: Vec<PlainCommand>,
    /// Some arithmetic context (`(( ))`, `$(( ))`, `let`, `[[ -eq ]]`, array subscripts)
    /// exists; bash evaluates variables there recursively, including `a[$(cmd)]`.
    pub(crate) arithmetic: bool,
    /// Some static argument or assigned value contains `$` or a backquote.
    pub(crate) literal_with_code: bool,
}

impl Accumulator {
    /// Adds one plain command built from evaluated words.
    pub(crate) fn push(&mut self, words: &[Word], ctx: &Context, own_env: &[(String, String)]) {
        let mut dynamic_args = Vec::new();
        for (index, word) in words.iter().enumerate() {
            if word.dynamic {
                dynamic_args.push(index);
            } else if index > 0 {
                self.note_literal(word);
            }
        }
        let mut env = ctx.env.clone();
        env.extend(own_env.iter().cloned());
        self.commands.push(PlainCommand {
            argv: words.iter().map(|word| word.text.clone()).collect(),
            redirects_to_file: ctx.redirect,
            env,
            dynamic_args,
        });
    }

    pub(crate) fn note_literal(&mut self, word: &Word) {
        if !word.dynamic && (word.text.contains('$') || word.text.contains('`')) {
            self.literal_with_code = true;
        }
    }

    /// Checks that need the whole script: arithmetic evaluation of a variable whose value
    /// could be a string like `a[$(rm -rf ~)]` runs that command, so arithmetic plus such a
    /// string anywhere is refused.
    pub(crate) fn final_check(&self) -> Result<(), Refusal> {
        if self.arithmetic && self.literal_with_code {
            return refuse(
                "the script evaluates arithmetic and also holds a quoted string containing `$` \
                 or a backquote; bash would run a command substitution hidden in such a string \
                 when it evaluates it as a number",
            );
        }
        Ok(())
    }
}

/// Variables that change which program a name runs or make a shell execute extra code.
/// Assigning any of them anywhere makes the script unanalysable.
pub(crate) fn is_execution_variable(name: &str) -> bool {
    matches!(
        name,
        "PATH"
            | "BASH_ENV"
            | "ENV"
            | "PS4"
            | "SHELLOPTS"
            | "BASHOPTS"
            | "PROMPT_COMMAND"
            | "BASH_LOADABLES_PATH"
            | "ZDOTDIR"
            | "EXECIGNORE"
    ) || name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || name.starts_with("BASH_FUNC_")
}

/// Variables whose prefix assignment is harmless or visible (it is recorded in
/// [`PlainCommand::env`]) but whose bare assignment changes every later command: `IFS`
/// changes how later expansions split; the others make common tools run other programs
/// (and are often already exported, so a bare assignment reaches child processes).
fn is_tool_variable(name: &str) -> bool {
    matches!(
        name,
        "IFS"
            | "PAGER"
            | "MANPAGER"
            | "EDITOR"
            | "VISUAL"
            | "LESSOPEN"
            | "LESSCLOSE"
            | "RIPGREP_CONFIG_PATH"
    ) || name.starts_with("GIT_")
}

pub(crate) fn check_assigned_name(name: &str, bare: bool) -> Result<(), Refusal> {
    if is_execution_variable(name) {
        return refuse(format!(
            "the script assigns `{name}`, which changes what commands run or how the shell \
             runs them"
        ));
    }
    if bare && is_tool_variable(name) {
        return refuse(format!(
            "the script assigns `{name}` for all later commands, which can make ordinary tools \
             run other programs"
        ));
    }
    Ok(())
}

/// Parses `script` and adds its commands to `acc`.
pub(crate) fn analyse_script(
    acc: &mut Accumulator,
    script: &str,
    nesting: usize,
    ctx: &Context,
) -> Result<(), Refusal> {
    if nesting > MAX_SCRIPT_NESTING {
        return refuse(format!(
            "scripts nest more than {MAX_SCRIPT_NESTING} levels deep (bash -c inside eval …)"
        ));
    }
    let tree = parse_tree(script)?;
    let root = tree.root_node();
    if root.has_error() {
        return refuse(checks::syntax_error_message(root, script));
    }
    checks::check_depth(root, 2 * MAX_TREE_DEPTH)?;
    checks::check_line_continuations(root, script)?;
    checks::check_substitutions_were_parsed(root, script)?;
    let mut walker = Walker {
        src: script,
        acc,
        nesting,
        depth: 0,
    };
    walker.statement(root, ctx)
}

fn children_with_fields<'t>(node: Node<'t>) -> Vec<(Option<&'static str>, Node<'t>)> {
    let mut cursor = node.walk();
    let mut out = Vec::with_capacity(node.child_count());
    if cursor.goto_first_child() {
        loop {
            out.push((cursor.field_name(), cursor.node()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

fn is_statement_kind(kind: &str) -> bool {
    matches!(
        kind,
        "program"
            | "list"
            | "pipeline"
            | "subshell"
            | "compound_statement"
            | "do_group"
            | "negated_command"
            | "redirected_statement"
            | "if_statement"
            | "elif_clause"
            | "else_clause"
            | "while_statement"
            | "for_statement"
            | "c_style_for_statement"
            | "case_statement"
            | "case_item"
            | "command"
            | "declaration_command"
            | "unset_command"
            | "test_command"
            | "variable_assignment"
            | "variable_assignments"
            | "function_definition"
            | "file_redirect"
            | "heredoc_redirect"
            | "herestring_redirect"
    )
}

struct Walker<'s, 'a> {
    src: &'s str,
    acc: &'a mut Accumulator,
    nesting: usize,
    depth: usize,
}

impl Walker<'_, '_> {
    fn text(&self, node: Node) -> &str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    fn enter(&mut self) -> Result<(), Refusal> {
        self.depth += 1;
        if self.depth > MAX_TREE_DEPTH {
            return refuse(format!(
                "the script nests more than {MAX_TREE_DEPTH} levels deep"
            ));
        }
        Ok(())
    }

    fn statement(&mut self, node: Node, ctx: &Context) -> Result<(), Refusal> {
        self.enter()?;
        let result = self.statement_inner(node, ctx);
        self.depth -= 1;
        result
    }

    fn statement_inner(&mut self, node: Node, ctx: &Context) -> Result<(), Refusal> {
        match node.kind() {
            "program" | "list" | "pipeline" | "subshell" | "do_group" | "negated_command"
            | "if_statement" | "elif_clause" | "else_clause" | "while_statement" => {
                self.child_statements(node, ctx)
            }
            "compound_statement" => {
                if node.child(0).is_some_and(|first| first.kind() == "((") {
                    // `(( expr ))` evaluates arithmetic, which can run code hidden in a
                    // variable's value: report it as the command `((`.
                    self.scan(node, true)?;
                    let src = self.src;
                    let text = src.get(node.byte_range()).unwrap_or("");
                    let inner = text.get(2..text.len().saturating_sub(2)).unwrap_or("");
                    self.push_arithmetic(inner, ctx);
                    Ok(())
                } else {
                    self.child_statements(node, ctx)
                }
            }
            "redirected_statement" => {
                let mut inner = ctx.clone();
                let mut body = None;
                let mut deferred = Vec::new();
                for (field, child) in children_with_fields(node) {
                    if field == Some("body") {
                        body = Some(child);
                    } else if child.is_named() && child.kind() != "comment" {
                        inner.redirect |= self.redirect(child, &mut deferred)?;
                    }
                }
                match body {
                    Some(body) => self.statement(body, &inner)?,
                    // A statement that is only redirections (`> out.txt`) behaves like the
                    // null command `:` with those redirections.
                    None => self.acc.push(&[Word::fixed(":")], &inner, &[]),
                }
                self.deferred(deferred, ctx)
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                // Only inside `$( … )`: `$(< file)` reads a file.
                let mut inner = ctx.clone();
                let mut deferred = Vec::new();
                inner.redirect |= self.redirect(node, &mut deferred)?;
                if inner.redirect {
                    self.acc.push(&[Word::fixed(":")], &inner, &[]);
                }
                self.deferred(deferred, ctx)
            }
            "for_statement" => {
                for (field, child) in children_with_fields(node) {
                    match field {
                        Some("variable") => check_assigned_name(self.text(child), true)?,
                        Some("value") => {
                            let word = self.word(child)?;
                            self.acc.note_literal(&word);
                        }
                        _ if child.is_named() => self.statement(child, ctx)?,
                        _ => {}
                    }
                }
                Ok(())
            }
            "c_style_for_statement" => {
                let mut header_start = None;
                for (field, child) in children_with_fields(node) {
                    match (field, child.kind()) {
                        (Some("initializer" | "condition" | "update"), _) => {
                            self.scan(child, true)?;
                        }
                        (_, "((") => header_start = Some(child.end_byte()),
                        (_, "))") => {
                            let start = header_start.unwrap_or(child.start_byte());
                            let src = self.src;
                            let inner = src.get(start..child.start_byte()).unwrap_or("");
                            self.push_arithmetic(inner, ctx);
                        }
                        _ if child.is_named() => self.statement(child, ctx)?,
                        _ => {}
                    }
                }
                self.acc.arithmetic = true;
                Ok(())
            }
            "case_statement" | "case_item" => {
                for (field, child) in children_with_fields(node) {
                    if field == Some("value") {
                        self.word(child)?;
                    } else if child.is_named() {
                        self.statement(child, ctx)?;
                    }
                }
                Ok(())
            }
            "command" => self.command(node, ctx),
            "declaration_command" | "unset_command" => self.declaration(node, ctx),
            "test_command" => self.test_command(node, ctx),
            "variable_assignment" => {
                self.assignment(node, true)?;
                Ok(())
            }
            "variable_assignments" => {
                for child in node.named_children(&mut node.walk()) {
                    if child.kind() == "variable_assignment" {
                        self.assignment(child, true)?;
                    } else {
                        self.statement(child, ctx)?;
                    }
                }
                Ok(())
            }
            "function_definition" => {
                let name = node
                    .child_by_field_name("name")
                    .map(|name| self.text(name).to_string())
                    .unwrap_or_default();
                refuse(format!(
                    "the script defines a shell function `{name}`, so a command name may not \
                     mean the program it names"
                ))
            }
            "comment" => Ok(()),
            "ERROR" => refuse("the script has a shell syntax error"),
            _ if !node.is_named() => Ok(()),
            other => refuse(format!(
                "the script uses shell syntax this analyser does not handle (`{other}`)"
            )),
        }
    }

    /// Reports an arithmetic evaluation (`(( … ))`, a C-style `for` header) as the command
    /// `["((", expression, "))"]` with a dynamic expression.
    fn push_arithmetic(&mut self, expression: &str, ctx: &Context) {
        self.acc.arithmetic = true;
        let words = [
            Word::fixed("(("),
            Word {
                text: expression.trim().to_string(),
                dynamic: true,
            },
            Word::fixed("))"),
        ];
        self.acc.push(&words, ctx, &[]);
    }

    fn child_statements(&mut self, node: Node, ctx: &Context) -> Result<(), Refusal> {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.statement(child, ctx)?;
        }
        Ok(())
    }

    /// Looks inside any node for commands that bash would run while expanding it
    /// (`$( … )`, backquotes, `<( … )`) and for arithmetic. `arith` is true inside an
    /// arithmetic context, where assigning an execution variable is refused too.
    fn scan(&mut self, node: Node, arith: bool) -> Result<(), Refusal> {
        self.enter()?;
        let result = self.scan_inner(node, arith);
        self.depth -= 1;
        result
    }

    fn scan_inner(&mut self, node: Node, arith: bool) -> Result<(), Refusal> {
        let kind = node.kind();
        match kind {
            "command_substitution" if self.text(node).starts_with('`') => {
                // bash removes one level of backslashes (before `\`, `$`, `` ` ``) from a
                // backquoted command and parses the result; tree-sitter does not, so nested
                // backquotes would hide commands. Parse the unescaped text ourselves.
                let raw = self.text(node);
                let inner =
                    unescape_backquoted(raw.get(1..raw.len().saturating_sub(1)).unwrap_or(""));
                return analyse_script(self.acc, &inner, self.nesting + 1, &Context::default());
            }
            "command_substitution" | "process_substitution" => {
                return self.child_statements(node, &Context::default());
            }
            "arithmetic_expansion" | "subscript" => {
                self.acc.arithmetic = true;
                return self.scan_children(node, true);
            }
            "variable_name" | "word" if arith => {
                check_assigned_name(self.text(node), false)?;
                return Ok(());
            }
            "heredoc_body" | "string" | "concatenation" | "expansion" => {
                return self.scan_children(node, arith);
            }
            _ => {}
        }
        if arith {
            self.acc.arithmetic = true;
        }
        if is_statement_kind(kind) && !arith {
            return self.statement(node, &Context::default());
        }
        self.scan_children(node, arith)
    }

    fn scan_children(&mut self, node: Node, arith: bool) -> Result<(), Refusal> {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.scan(child, arith)?;
        }
        Ok(())
    }

    /// Evaluates a redirection; returns true when it writes to a file.
    fn redirect<'t>(
        &mut self,
        node: Node<'t>,
        deferred: &mut Vec<Node<'t>>,
    ) -> Result<bool, Refusal> {
        match node.kind() {
            "file_redirect" => {
                let mut operator = "";
                let mut destination = None;
                for (field, child) in children_with_fields(node) {
                    if field == Some("destination") {
                        destination = Some(self.word(child)?);
                    } else if !child.is_named() {
                        operator = child.kind();
                    }
                }
                let writes = matches!(operator, ">" | ">>" | "&>" | "&>>" | ">|" | "<>" | ">&");
                Ok(match destination {
                    None => false,
                    Some(_) if !writes => false,
                    Some(dest) if dest.dynamic => true,
                    Some(dest) => {
                        let harmless = matches!(
                            dest.text.as_str(),
                            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "-"
                        ) || dest.text.starts_with("/dev/fd/");
                        let duplication = operator == ">&"
                            && dest.text.chars().all(|c| c.is_ascii_digit() || c == '-');
                        !(harmless || duplication)
                    }
                })
            }
            "herestring_redirect" => {
                for child in node.named_children(&mut node.walk()) {
                    let word = self.word(child)?;
                    self.acc.note_literal(&word);
                }
                Ok(false)
            }
            "heredoc_redirect" => {
                if checks::check_heredoc_body(node, self.src)? {
                    self.acc.arithmetic = true;
                }
                let mut writes = false;
                for child in node.named_children(&mut node.walk()) {
                    match child.kind() {
                        "heredoc_start" | "heredoc_end" => {}
                        "heredoc_body" => self.scan(child, false)?,
                        "file_redirect" | "herestring_redirect" => {
                            writes |= self.redirect(child, deferred)?;
                        }
                        // `cat <<EOF | grep x` keeps the rest of the pipeline here; it runs
                        // after the command that owns the heredoc.
                        _ if is_statement_kind(child.kind()) => deferred.push(child),
                        _ => self.scan(child, false)?,
                    }
                }
                Ok(writes)
            }
            "comment" => Ok(false),
            other => refuse(format!(
                "the script uses a redirection this analyser does not handle (`{other}`)"
            )),
        }
    }

    /// Evaluates one word-like node; substitutions inside are analysed on the way.
    fn word(&mut self, node: Node) -> Result<Word, Refusal> {
        self.enter()?;
        let result = self.word_inner(node);
        self.depth -= 1;
        result
    }

    fn word_inner(&mut self, node: Node) -> Result<Word, Refusal> {
        let raw = self.text(node).to_string();
        let dynamic = |raw: String| Word {
            text: raw,
            dynamic: true,
        };
        match node.kind() {
            "word" | "extglob_pattern" => {
                let (value, glob) = unescape_unquoted(&raw);
                if glob || has_brace_expansion(&raw) {
                    Ok(dynamic(raw))
                } else {
                    Ok(Word::fixed(value))
                }
            }
            "number" | "variable_name" | "test_operator" | "regex" => Ok(Word::fixed(raw)),
            "raw_string" => Ok(Word::fixed(
                raw.get(1..raw.len().saturating_sub(1)).unwrap_or(""),
            )),
            "ansi_c_string" => {
                let body = raw.get(2..raw.len().saturating_sub(1)).unwrap_or("");
                match decode_ansi_c(body) {
                    Some(value) => Ok(Word::fixed(value)),
                    None => Ok(dynamic(raw)),
                }
            }
            "string" => self.double_quoted(node, raw),
            "concatenation" => {
                let mut value = String::new();
                let mut skeleton = String::new();
                let mut is_dynamic = false;
                for child in node.children(&mut node.walk()) {
                    let part = self.word(child)?;
                    is_dynamic |= part.dynamic;
                    value.push_str(&part.text);
                    if matches!(child.kind(), "word" | "number") {
                        skeleton.push_str(self.text(child));
                    } else {
                        skeleton.extend(std::iter::repeat_n('\0', part.text.len().max(1)));
                    }
                }
                if is_dynamic || has_brace_expansion(&skeleton) {
                    Ok(dynamic(raw))
                } else {
                    Ok(Word::fixed(value))
                }
            }
            "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
            | "brace_expression"
            | "array"
            | "translated_string" => {
                self.scan(node, false)?;
                Ok(dynamic(raw))
            }
            "$" => refuse(
                "the script uses a `$\"…\"` locale string, which this analyser cannot read \
                 reliably",
            ),
            _ if !node.is_named() => Ok(Word::fixed(raw)),
            _ => {
                self.scan(node, false)?;
                Ok(dynamic(raw))
            }
        }
    }

    fn double_quoted(&mut self, node: Node, raw: String) -> Result<Word, Refusal> {
        let start = node.start_byte() + 1;
        let end = node.end_byte().saturating_sub(1).max(start);
        let mut pos = start;
        let mut value = String::new();
        let mut is_dynamic = false;
        for child in node.children(&mut node.walk()) {
            if child.kind() == "\"" {
                continue;
            }
            if child.start_byte() > pos {
                value.push_str(&unescape_double_quoted(
                    self.src.get(pos..child.start_byte()).unwrap_or(""),
                ));
            }
            match child.kind() {
                "string_content" => value.push_str(&unescape_double_quoted(self.text(child))),
                _ if child.is_named() => {
                    self.scan(child, false)?;
                    is_dynamic = true;
                }
                _ => value.push_str(self.text(child)),
            }
            pos = pos.max(child.end_byte());
        }
        if end > pos {
            value.push_str(&unescape_double_quoted(
                self.src.get(pos..end).unwrap_or(""),
            ));
        }
        if is_dynamic {
            Ok(Word {
                text: raw,
                dynamic: true,
            })
        } else {
            Ok(Word::fixed(value))
        }
    }

    /// Evaluates `NAME=value` (or `NAME+=value`, `a[i]=value`); `bare` when it stands alone
    /// rather than prefixing a command.
    fn assignment(&mut self, node: Node, bare: bool) -> Result<(String, Word), Refusal> {
        let mut name = String::new();
        let mut value = Word::fixed("");
        for (field, child) in children_with_fields(node) {
            match field {
                Some("name") => {
                    if child.kind() == "subscript" {
                        self.scan(child, false)?;
                        if let Some(base) = child.child_by_field_name("name") {
                            name = self.text(base).to_string();
                        }
                    } else {
                        name = self.text(child).to_string();
                    }
                }
                Some("value") => value = self.word(child)?,
                _ => {}
            }
        }
        check_assigned_name(&name, bare)?;
        self.acc.note_literal(&value);
        Ok((name, value))
    }

    fn command(&mut self, node: Node, ctx: &Context) -> Result<(), Refusal> {
        let mut words = Vec::new();
        let mut env = Vec::new();
        let mut inner = ctx.clone();
        let mut deferred = Vec::new();
        for (field, child) in children_with_fields(node) {
            match (field, child.kind()) {
                (_, "variable_assignment") => {
                    let (name, value) = self.assignment(child, false)?;
                    env.push((name, value.text));
                }
                (_, "file_redirect" | "heredoc_redirect" | "herestring_redirect") => {
                    inner.redirect |= self.redirect(child, &mut deferred)?;
                }
                (_, "comment") => {}
                (Some("name"), _) => {
                    let Some(name_node) = child.named_child(0) else {
                        return refuse("a command has an empty name");
                    };
                    let word = self.word(name_node)?;
                    if word.text.starts_with('=') && !word.dynamic {
                        return refuse(format!(
                            "zsh would expand the command name `{}` to a program path",
                            word.text
                        ));
                    }
                    if word.dynamic {
                        return refuse(format!(
                            "the command name `{}` is only known when the script runs",
                            word.text
                        ));
                    }
                    words.push(word);
                }
                (Some("argument"), _) => words.push(self.word(child)?),
                (_, _) if child.is_named() => words.push(self.word(child)?),
                _ => {}
            }
        }
        if !words.is_empty() {
            inner.env.extend(env);
            super::resolve::resolve_in(self.acc, words, &inner, self.nesting)?;
        }
        // With no words the command was assignments only (`A=1 B=2`): nothing runs.
        self.deferred(deferred, ctx)
    }

    /// Statements that follow a heredoc's start on its line (`cat <<EOF | grep x`).
    fn deferred(&mut self, nodes: Vec<Node>, ctx: &Context) -> Result<(), Refusal> {
        for node in nodes {
            self.statement(node, ctx)?;
        }
        Ok(())
    }

    fn declaration(&mut self, node: Node, ctx: &Context) -> Result<(), Refusal> {
        let mut words = Vec::new();
        let keyword = node.child(0).map(|k| self.text(k).to_string());
        words.push(Word::fixed(keyword.clone().unwrap_or_default()));
        for child in node.named_children(&mut node.walk()) {
            match child.kind() {
                "variable_assignment" => {
                    let (name, value) = self.assignment(child, true)?;
                    words.push(Word {
                        text: format!("{name}={}", value.text),
                        dynamic: value.dynamic,
                    });
                }
                _ => {
                    let word = self.word(child)?;
                    if !word.dynamic && node.kind() == "declaration_command" {
                        check_assigned_name(&word.text, true)?;
                    }
                    words.push(word);
                }
            }
        }
        let is_declare = matches!(keyword.as_deref(), Some("declare" | "typeset" | "local"));
        for word in &words[1..] {
            let Some(flags) = word.text.strip_prefix('-') else {
                continue;
            };
            if word.dynamic || (is_declare && (flags.contains('n') || flags.contains('i'))) {
                return refuse(format!(
                    "`{}` with `{}` can redirect assignments to other variables or evaluate \
                     values as arithmetic",
                    words[0].text, word.text
                ));
            }
        }
        self.acc.push(&words, ctx, &[]);
        Ok(())
    }

    fn test_command(&mut self, node: Node, ctx: &Context) -> Result<(), Refusal> {
        let mut words = Vec::new();
        self.flatten_test(node, &mut words)?;
        if words.iter().any(|w| {
            matches!(
                w.text.as_str(),
                "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"
            )
        }) && words.first().is_some_and(|w| w.text == "[[")
        {
            self.acc.arithmetic = true;
        }
        self.acc.push(&words, ctx, &[]);
        Ok(())
    }

    fn flatten_test(&mut self, node: Node, words: &mut Vec<Word>) -> Result<(), Refusal> {
        self.enter()?;
        for child in node.children(&mut node.walk()) {
            match child.kind() {
                "binary_expression"
                | "unary_expression"
                | "parenthesized_expression"
                | "ternary_expression"
                | "postfix_expression" => {
                    self.flatten_test(child, words)?;
                }
                _ => words.push(self.word(child)?),
            }
        }
        self.depth -= 1;
        Ok(())
    }
}
