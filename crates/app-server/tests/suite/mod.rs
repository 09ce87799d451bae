mod approvals;
mod client;
mod handshake;
mod python_client;
mod threads;
mod turns;
