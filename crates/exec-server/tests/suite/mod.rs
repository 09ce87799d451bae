mod common;
mod fs_calls;
mod interop;
mod lifecycle;
mod processes;
mod transports;
