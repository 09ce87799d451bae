mod mcp;
mod pty;
mod remote;
mod screens;
mod sessions;
