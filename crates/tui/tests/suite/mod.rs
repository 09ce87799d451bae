mod pty;
mod screens;
