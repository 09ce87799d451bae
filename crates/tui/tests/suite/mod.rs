mod mcp;
mod pty;
mod remote;
mod sandbox;
mod screens;
mod sessions;
