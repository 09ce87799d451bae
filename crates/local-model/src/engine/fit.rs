//! Fitting a request into the context window before anything is processed.
//!
//! A request fits when its rendered prompt plus room for the answer fits the context:
//! `prompt tokens + answer room <= context_tokens`, where the answer room is
//! `max_output_tokens`, but never more than half the context (so a small context with the
//! default output limit still takes prompts). When the prompt is too long, the oldest tool
//! outputs are left out, fewest first, if that alone makes it fit
//! ([`conversation::fit_by_omitting_outputs`]; the outputs answering the latest calls are
//! kept). When even that is not enough, the request is refused with
//! [`ModelError::ContextWindowExceeded`] before any token is processed, so the agent
//! compacts the conversation and sends it again. The middle of a prompt is never cut and
//! llama.cpp is never handed more tokens than its context holds.

use llama_cpp_2::token::LlamaToken;
use osprey_model::{ModelError, Prompt};

use super::{Engine, PROVIDER};
use crate::conversation;
use crate::grammar::ToolDef;

/// A request that fits, tokenized.
pub(super) struct Fitted {
    pub tokens: Vec<LlamaToken>,
    /// The rendered system message (the reusable prefix) and its length in tokens, 0 when
    /// the full prompt does not start with exactly those tokens.
    pub prefix_text: String,
    pub prefix_len: usize,
    /// Most tokens the answer may have.
    pub max_out: usize,
    /// Tool outputs left out to fit.
    pub omitted_outputs: usize,
}

/// Tokens kept free for the answer in a context of `n_ctx` tokens.
pub(super) fn answer_room(max_output_tokens: u32, n_ctx: usize) -> usize {
    (max_output_tokens as usize).min(n_ctx / 2)
}

impl Engine<'_> {
    /// Renders and tokenizes `prompt`, leaving out old tool outputs if that makes it fit,
    /// or refuses it as too long for the context.
    pub(super) fn fit(&self, prompt: &Prompt, tools: &[ToolDef]) -> Result<Fitted, ModelError> {
        let n_ctx = self.ctx.n_ctx() as usize;
        let room = answer_room(self.options.max_output_tokens, n_ctx);
        let mut full_len = None;
        let mut measured = 0usize;
        // The last candidate accepted is the one returned; keep its rendering.
        let mut accepted = None;
        let fitted = conversation::fit_by_omitting_outputs(prompt, |candidate| {
            let messages = conversation::messages(candidate, tools, self.options.prompt_style);
            let text = self.render(&messages, true)?;
            let tokens = self.tokenize(&text);
            full_len.get_or_insert(tokens.len());
            measured += 1;
            let fits = tokens.len() + room <= n_ctx;
            if fits {
                accepted = Some((messages, text, tokens));
            }
            Ok::<_, ModelError>(fits)
        })?;
        let (Some((_, omitted_outputs)), Some((messages, full_text, tokens))) = (fitted, accepted)
        else {
            let omittable = conversation::omittable_outputs(prompt).len();
            let even = if omittable > 0 {
                format!(" (even with the {omittable} older tool outputs left out)")
            } else {
                String::new()
            };
            return Err(ModelError::ContextWindowExceeded {
                provider: PROVIDER.to_string(),
                message: format!(
                    "the prompt is {} tokens{even} and the answer needs room for {room} more, \
                     but the local model's context holds {n_ctx} tokens ([local_model] \
                     context_tokens)",
                    full_len.unwrap_or_default()
                ),
            });
        };
        if omitted_outputs > 0 {
            tracing::info!(
                omitted_outputs,
                measured,
                "left out the oldest tool outputs to fit the local model's context"
            );
        }
        let prefix_text = self.render(messages.get(..1).unwrap_or_default(), false)?;
        let prefix_tokens = self.tokenize(&prefix_text);
        let prefix_len =
            if full_text.starts_with(&prefix_text) && tokens.starts_with(&prefix_tokens) {
                prefix_tokens.len()
            } else {
                0
            };
        let max_out =
            (self.options.max_output_tokens as usize).min(n_ctx.saturating_sub(tokens.len() + 1));
        Ok(Fitted {
            tokens,
            prefix_text,
            prefix_len,
            max_out,
            omitted_outputs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_gets_its_limit_but_at_most_half_the_context() {
        assert_eq!(answer_room(1536, 8192), 1536);
        assert_eq!(answer_room(1536, 1024), 512);
        assert_eq!(answer_room(16, 1024), 16);
    }
}
