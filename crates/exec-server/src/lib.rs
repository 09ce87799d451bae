//! `osprey exec-server`: runs the agent's processes and file operations on the machine
//! where the code lives, speaking Codex's exec-server protocol so that a Codex agent can
//! use an Osprey executor and the other way round.
//!
//! - [`protocol`]: the wire types (camelCase, `file://` URIs, base64 bytes).
//! - [`server`]: the per-connection handshake and methods — `environment/*`,
//!   `process/*` (streamed output notifications, buffered `process/read`, PTYs, signals),
//!   `fs/*` checked against the server's [`Roots`](server::Roots), and
//!   `capabilities/discoverV2`. Every process runs under the server's own sandbox,
//!   whatever the client asks.
//! - [`transport`]: stdio (what ssh, `docker exec -i` and `kubectl exec -i` carry) and
//!   WebSocket with an optional capability token.
//! - [`client`]: the agent side: connect to a program's stdio or a URL, initialize,
//!   decide the discovery generation with [`version_gate`], call methods, receive
//!   process notifications.
//!
//! The envelope is the app server's (`osprey-app-server-protocol::jsonrpc`): no
//! `jsonrpc` field, ids echoed. Process notifications carry no `emittedAtMs`.

pub mod client;
pub mod environments;
pub mod protocol;
mod run;
pub mod server;
pub mod transport;
pub mod uri;
pub mod version_gate;
pub mod ws_auth;

pub use run::{RunOptions, run_main};
