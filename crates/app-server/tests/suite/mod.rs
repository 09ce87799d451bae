mod approvals;
mod client;
mod handshake;
mod threads;
mod turns;
