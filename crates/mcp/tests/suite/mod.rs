mod cli;
mod codex_parity;
mod everything;
mod failures;
mod http;
mod support;
