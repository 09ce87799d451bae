mod approvals;
mod client;
mod handshake;
mod python_client;
mod schema;
mod threads;
mod transports;
mod turns;
