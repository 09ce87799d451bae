//! Parsing a command line into the plain commands it would run.
//!
//! Entry points are [`parse_command`] (an argv, possibly a `bash -lc "…"` invocation) and
//! [`parse_script`] (a bare script string). Both return a [`ParsedCommand`]: either the full
//! list of plain commands, or a refusal with a reason a person can read. The walker
//! (`walker.rs`) reads the tree-sitter-bash syntax tree; `resolve.rs` looks through wrapper
//! commands such as `env`, `timeout` and `bash -c`.

mod checks;
mod resolve;
mod walker;
mod words;

use std::cell::RefCell;

use tree_sitter::Parser;

/// One command the script would execute, after looking through wrappers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlainCommand {
    /// The words the command receives. `argv[0]` is the command exactly as written after
    /// quote removal: `/bin/rm` stays `/bin/rm` (use [`crate::command_basename`] to compare
    /// by name). Words listed in `dynamic_args` hold their literal source text instead.
    pub argv: Vec<String>,
    /// True when the command's output goes to a file through a redirection (`>`, `>>`, `&>`,
    /// `>|`, `<>`, or an enclosing group's redirection). Writes to `/dev/null`, `/dev/stdout`,
    /// `/dev/stderr` and descriptor duplications such as `2>&1` do not count.
    pub redirects_to_file: bool,
    /// Environment assignments that apply to this command only: prefix assignments
    /// (`LC_ALL=C sort`) and those given to `env`. Values that are dynamic keep source text.
    pub env: Vec<(String, String)>,
    /// Indices into `argv` of words whose value is only known at run time (a variable,
    /// a substitution, arithmetic, an unquoted glob or brace expansion).
    pub dynamic_args: Vec<usize>,
}

impl PlainCommand {
    /// A command with only static words and nothing else attached.
    pub fn new<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> Self {
        PlainCommand {
            argv: argv.into_iter().map(Into::into).collect(),
            redirects_to_file: false,
            env: Vec::new(),
            dynamic_args: Vec::new(),
        }
    }

    /// The command name without its directory (`/usr/bin/git` → `git`).
    pub fn basename(&self) -> &str {
        self.argv
            .first()
            .map_or("", |name| crate::command_basename(name))
    }

    /// True when `argv[index]` is only known at run time.
    pub fn is_dynamic(&self, index: usize) -> bool {
        self.dynamic_args.contains(&index)
    }
}

/// The result of analysing a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParsedCommand {
    /// Every command the line would run, in source order (substitutions before the command
    /// that uses them, wrappers such as `sudo` before the command they run).
    Commands(Vec<PlainCommand>),
    /// The line cannot be reduced to plain commands; `reason` says why in plain words.
    NotAnalysable { reason: String },
}

impl ParsedCommand {
    /// The commands, or `None` when the line is not analysable.
    pub fn commands(&self) -> Option<&[PlainCommand]> {
        match self {
            ParsedCommand::Commands(commands) => Some(commands),
            ParsedCommand::NotAnalysable { .. } => None,
        }
    }
}

/// Scripts longer than this are not analysed (the parse would still be fast, but nobody
/// reviews a megabyte of shell by reading a command list).
const MAX_SCRIPT_BYTES: usize = 256 * 1024;

/// How deep `bash -c`, `eval` and similar may nest before we give up.
const MAX_SCRIPT_NESTING: usize = 8;

/// How deep the syntax tree may nest (subshells in subshells…) before we give up, which also
/// bounds the walker's stack use.
const MAX_TREE_DEPTH: usize = 256;

/// Analyses an argv. A shell invocation (`bash -lc SCRIPT`, `sh -c`, `zsh -lc`, also under
/// wrappers like `env` or `sudo`) has its script parsed; any other argv is one plain command
/// after looking through wrappers.
pub fn parse_command(argv: &[String]) -> ParsedCommand {
    if argv.is_empty() {
        return refused("the command is empty");
    }
    let words = argv.iter().map(words::Word::fixed).collect();
    let mut acc = walker::Accumulator::default();
    let result = resolve::resolve_in(&mut acc, words, &walker::Context::default(), 0);
    finish(acc, result)
}

/// Analyses a bare script string as `bash -c` would run it.
pub fn parse_script(script: &str) -> ParsedCommand {
    let mut acc = walker::Accumulator::default();
    let result = walker::analyse_script(&mut acc, script, 0, &walker::Context::default());
    finish(acc, result)
}

fn finish(acc: walker::Accumulator, result: Result<(), Refusal>) -> ParsedCommand {
    match result.and_then(|()| acc.final_check()) {
        Ok(()) => ParsedCommand::Commands(acc.commands),
        Err(Refusal(reason)) => ParsedCommand::NotAnalysable { reason },
    }
}

fn refused(reason: &str) -> ParsedCommand {
    ParsedCommand::NotAnalysable {
        reason: reason.to_string(),
    }
}

/// Why analysis stopped; becomes [`ParsedCommand::NotAnalysable`].
#[derive(Debug)]
pub(crate) struct Refusal(pub(crate) String);

pub(crate) fn refuse<T>(reason: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal(reason.into()))
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// The first code point the bash grammar's scanner is not given (see `parse_tree`).
const FIRST_UNPARSED_CODE_POINT: u32 = 0x40000;

/// Parses `script` with a per-thread tree-sitter parser (creating one is cheap, but reusing
/// it keeps the common path allocation-light).
pub(crate) fn parse_tree(script: &str) -> Result<tree_sitter::Tree, Refusal> {
    if script.len() > MAX_SCRIPT_BYTES {
        return refuse(format!(
            "the script is {} bytes long; scripts over {MAX_SCRIPT_BYTES} bytes are not analysed",
            script.len()
        ));
    }
    // tree-sitter-bash's external scanner reads out of bounds on code points this high (a
    // `{` followed by U+E0100 crashed the process with SIGSEGV, found by the robustness
    // proptest). No real command needs planes 4–16 (unassigned, tags, variation selectors
    // supplement, private use), so such a script is not analysed: it is refused, which the
    // policy treats as unknown and asks about.
    if let Some(c) = script
        .chars()
        .find(|c| u32::from(*c) >= FIRST_UNPARSED_CODE_POINT)
    {
        return refuse(format!(
            "the script contains U+{:04X}; characters from U+{FIRST_UNPARSED_CODE_POINT:X} on are not analysed",
            u32::from(c)
        ));
    }
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            if parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .is_err()
            {
                return refuse("the bash grammar could not be loaded into tree-sitter");
            }
            *slot = Some(parser);
        }
        match slot.as_mut().and_then(|parser| parser.parse(script, None)) {
            Some(tree) => Ok(tree),
            None => refuse("tree-sitter gave up parsing the script"),
        }
    })
}
