mod common;
mod fs_calls;
mod interop;
mod lifecycle;
mod netns;
mod processes;
mod transports;
mod wine;
