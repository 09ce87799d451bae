//! [`ModelVocab`]: the model's tokenizer, chat template and grammar engine without its
//! weights — for tests, benchmarks and debugging prompts.

use std::path::Path;

use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use osprey_model::{ModelError, Prompt};

use crate::conversation::{self, PromptStyle};
use crate::engine::{load_backend, render};
use crate::error::LocalModelError;
use crate::grammar::ToolDef;

/// The vocabulary and chat template of a GGUF, loaded without tensors (fast, small).
pub struct ModelVocab {
    model: LlamaModel,
    template: LlamaChatTemplate,
}

impl ModelVocab {
    pub fn load(path: &Path) -> Result<Self, LocalModelError> {
        if !path.is_file() {
            return Err(LocalModelError::Missing {
                path: path.to_path_buf(),
            });
        }
        let backend = load_backend()?;
        let params = LlamaModelParams::default().with_vocab_only(true);
        let model = LlamaModel::load_from_file(backend, path, &params).map_err(|e| {
            LocalModelError::Load {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
        })?;
        let template = model
            .chat_template(None)
            .map_err(|e| LocalModelError::NoChatTemplate {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
        Ok(Self { model, template })
    }

    /// The exact text the model is given for `prompt` in `style`, ending with the
    /// assistant header.
    pub fn render(&self, prompt: &Prompt, style: PromptStyle) -> Result<String, ModelError> {
        let tools = ToolDef::from_specs(&prompt.tools);
        render(
            &self.model,
            &self.template,
            &conversation::messages(prompt, &tools, style),
            true,
        )
    }

    /// Token ids for `text`, with special tokens such as `<|im_start|>` recognised.
    pub fn tokenize(&self, text: &str) -> Vec<i32> {
        self.model
            .vocab()
            .tokenize(text.as_bytes(), false, true)
            .into_iter()
            .map(|t| t.0)
            .collect()
    }

    /// The text of `tokens`, special tokens included.
    pub fn detokenize(&self, tokens: &[i32]) -> String {
        let vocab = self.model.vocab();
        let bytes: Vec<u8> = tokens
            .iter()
            .flat_map(|t| vocab.token_to_piece(LlamaToken::new(*t), true, None))
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Whether llama.cpp's grammar engine, running `grammar` (root rule `root`), admits the
    /// tokens of `text` one by one and then the end of the response.
    pub fn grammar_admits(&self, grammar: &str, text: &str) -> Result<bool, String> {
        let mut sampler = LlamaSampler::grammar(&self.model, grammar, "root")
            .map_err(|e| format!("llama.cpp rejected the grammar: {e}"))?;
        let vocab = self.model.vocab();
        let allowed = |sampler: &mut LlamaSampler, token: LlamaToken| {
            let mut one =
                LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 1.0, 0.0)], false);
            one.apply_sampler(sampler);
            one.data.first().is_some_and(|d| d.logit().is_finite())
        };
        for token in vocab.tokenize(text.as_bytes(), false, true) {
            if !allowed(&mut sampler, token) || sampler.try_accept(token).is_err() {
                return Ok(false);
            }
        }
        let ends = [vocab.eot(), vocab.eos()];
        Ok(ends
            .into_iter()
            .filter(|t| t.0 >= 0)
            .any(|t| allowed(&mut sampler, t)))
    }
}
