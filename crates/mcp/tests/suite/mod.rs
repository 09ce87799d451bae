mod cli;
mod everything;
mod failures;
mod http;
mod support;
