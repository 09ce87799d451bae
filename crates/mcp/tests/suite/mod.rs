mod codex_parity;
mod commands;
mod everything;
mod failures;
mod http;
mod support;
