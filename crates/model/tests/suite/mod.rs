mod chat;
mod common;
mod errors;
mod request;
mod responses_stream;
mod retries;
