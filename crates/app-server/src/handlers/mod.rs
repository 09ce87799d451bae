//! Request handlers, one module per resource: threads, turns, config / models, and MCP
//! server status. Each handler returns the result to send or the error message (always
//! code `-32600`, as Codex's app-server uses it for everything).

mod config;
mod mcp;
mod thread;
mod thread_config;
mod turn;

use std::sync::Arc;

use osprey_app_server_protocol::{ClientRequest, JsonRpcRequest, ServerNotification};
use osprey_protocol::ThreadId;
use serde_json::Value;

use crate::connection::Connection;
use crate::loaded::LoadedThread;
use crate::server::Server;

/// What a handler answers: the result and notifications to send right after it, or the
/// error message.
pub(crate) type Reply = Result<Answer, String>;

pub(crate) struct Answer {
    pub result: Value,
    /// Sent to the requesting connection after the response (`thread/started`).
    pub then: Vec<ServerNotification>,
}

pub(crate) fn answer<T: serde::Serialize>(value: &T) -> Reply {
    Ok(Answer {
        result: crate::connection::to_value(value),
        then: Vec::new(),
    })
}

pub(crate) async fn dispatch(
    server: &Arc<Server>,
    connection: &Arc<Connection>,
    request: JsonRpcRequest,
) {
    let id = request.id;
    let parsed = match ClientRequest::from_parts(&request.method, request.params) {
        Ok(parsed) => parsed,
        Err(e) => return connection.error(id, e.to_string()),
    };
    let reply = match parsed {
        ClientRequest::Initialize(_) => Err("Already initialized".to_owned()),
        ClientRequest::ThreadStart(p) => thread::start(server, connection, p).await,
        ClientRequest::ThreadResume(p) => thread::resume(server, connection, p).await,
        ClientRequest::ThreadFork(p) => thread::fork(server, connection, p).await,
        ClientRequest::ThreadList(p) => thread::list(server, p),
        ClientRequest::ThreadLoadedList(p) => thread::loaded_list(server, p),
        ClientRequest::ThreadRead(p) => thread::read(server, connection, p),
        ClientRequest::ThreadArchive(p) => thread::archive(server, p).await,
        ClientRequest::ThreadUnarchive(p) => thread::unarchive(server, connection, p),
        ClientRequest::ThreadUnsubscribe(p) => thread::unsubscribe(server, connection, p).await,
        ClientRequest::ThreadShellCommand(p) => turn::shell_command(server, p).await,
        ClientRequest::ThreadCompactStart(p) => turn::compact(server, p).await,
        ClientRequest::TurnStart(p) => turn::start(server, connection, p).await,
        ClientRequest::TurnSteer(p) => turn::steer(server, p).await,
        ClientRequest::TurnInterrupt(p) => turn::interrupt(server, p).await,
        ClientRequest::ModelList(p) => config::model_list(server, p),
        ClientRequest::ConfigRead(p) => config::config_read(server, p),
        ClientRequest::McpServerStatusList(p) => mcp::status_list(server, p).await,
    };
    match reply {
        Ok(answer) => {
            connection.respond(id, answer.result);
            for note in &answer.then {
                connection.notify(note);
            }
        }
        Err(message) => connection.error(id, message),
    }
}

pub(crate) fn parse_thread_id(text: &str) -> Result<ThreadId, String> {
    text.parse::<ThreadId>().map_err(|_| {
        format!(
            "invalid thread id `{text}`: expected a UUID such as the `thread.id` of thread/start"
        )
    })
}

/// A loaded thread, or Codex's "thread not found" error.
pub(crate) fn loaded_thread(server: &Server, thread_id: &str) -> Result<Arc<LoadedThread>, String> {
    let id = parse_thread_id(thread_id)?;
    server
        .loaded(&id)
        .ok_or_else(|| format!("thread not found: {thread_id}"))
}
