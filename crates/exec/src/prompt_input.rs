//! Where the task text comes from: the argument, standard input, or both.

use std::io::Read;

#[derive(Debug, PartialEq, Eq)]
pub enum PromptError {
    /// No prompt argument and standard input is a terminal: nothing to read.
    Missing,
    /// Reading standard input failed.
    Read(String),
    /// Everything was read, and it was empty.
    Empty,
}

impl std::fmt::Display for PromptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing => f.write_str(
                "no prompt given: pass the task as an argument (osprey exec \"…\") or pipe it on standard input (echo \"…\" | osprey exec -)",
            ),
            Self::Read(e) => write!(f, "could not read the prompt from standard input: {e}"),
            Self::Empty => f.write_str(
                "the prompt is empty: pass the task as an argument or pipe it on standard input",
            ),
        }
    }
}

/// Resolves the prompt. `stdin_is_terminal` keeps us from ever blocking on a terminal.
pub fn resolve_prompt(
    arg: Option<&str>,
    stdin: &mut dyn Read,
    stdin_is_terminal: bool,
) -> Result<String, PromptError> {
    let read_all = |stdin: &mut dyn Read| -> Result<String, PromptError> {
        let mut buf = Vec::new();
        stdin
            .read_to_end(&mut buf)
            .map_err(|e| PromptError::Read(e.to_string()))?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    };
    let prompt = match arg {
        None | Some("-") => {
            if stdin_is_terminal {
                return Err(PromptError::Missing);
            }
            read_all(stdin)?
        }
        Some(text) => {
            if stdin_is_terminal {
                text.to_string()
            } else {
                let piped = read_all(stdin)?;
                if piped.trim().is_empty() {
                    text.to_string()
                } else {
                    format!(
                        "{text}\n\n<stdin>\n{}\n</stdin>",
                        piped.trim_end_matches('\n')
                    )
                }
            }
        }
    };
    if prompt.trim().is_empty() {
        return Err(PromptError::Empty);
    }
    Ok(prompt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_alone() {
        let mut empty: &[u8] = b"";
        assert_eq!(
            resolve_prompt(Some("do it"), &mut empty, true).unwrap(),
            "do it"
        );
    }

    #[test]
    fn dash_reads_stdin() {
        let mut input: &[u8] = b"from stdin\n";
        assert_eq!(
            resolve_prompt(Some("-"), &mut input, false).unwrap(),
            "from stdin\n"
        );
    }

    #[test]
    fn argument_with_piped_stdin_appends_a_block() {
        let mut input: &[u8] = b"log line\n";
        assert_eq!(
            resolve_prompt(Some("explain"), &mut input, false).unwrap(),
            "explain\n\n<stdin>\nlog line\n</stdin>"
        );
    }

    #[test]
    fn terminal_stdin_without_prompt_is_an_error_not_a_hang() {
        let mut input: &[u8] = b"never read";
        assert_eq!(
            resolve_prompt(None, &mut input, true),
            Err(PromptError::Missing)
        );
    }

    #[test]
    fn empty_prompt_is_an_error() {
        let mut input: &[u8] = b"  \n";
        assert_eq!(
            resolve_prompt(None, &mut input, false),
            Err(PromptError::Empty)
        );
    }
}
