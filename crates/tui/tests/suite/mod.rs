mod mcp;
mod pty;
mod remote;
mod restore;
mod sandbox;
mod screens;
mod sessions;
mod tmux;
