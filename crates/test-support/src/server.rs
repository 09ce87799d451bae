//! The scripted mock model server: axum on 127.0.0.1, one script entry per request.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::PoisonError;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::HeaderName;
use axum::http::HeaderValue;
use axum::http::Method;
use axum::http::StatusCode;
use axum::http::Uri;
use axum::http::header;
use axum::response::Response;
use axum::routing::post;
use futures::StreamExt;
use futures::stream;
use futures::stream::BoxStream;
use serde_json::Value;
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::capture::CapturedRequest;
use crate::check::history_problems;
use crate::script::CHAT_DONE_FRAME;
use crate::script::MockResponse;
use crate::script::SseEvent;
use crate::script::WireApi;

mod routing;
use crate::script::chat_frame;
use routing::{fill_agent_ids, learn_agent_ids, serve_route};

/// Errors starting the server or loading a script file.
#[derive(Debug, thiserror::Error)]
pub enum MockServerError {
    #[error(
        "could not bind the mock model server to 127.0.0.1:{port}: {source}; \
         choose another port, or 0 for any free one"
    )]
    Bind { port: u16, source: io::Error },
    #[error("could not read the mock model server's bound address: {0}")]
    LocalAddr(io::Error),
    #[error("could not read mock script {}: {source}", path.display())]
    ReadScript { path: PathBuf, source: io::Error },
    #[error(
        "mock script {} is not a JSON array of mock responses: {source}; \
         see osprey-test-support's script module for the format",
        path.display()
    )]
    ParseScript {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// Reads a JSON script file: an array of [`MockResponse`]s.
pub fn load_script(path: &Path) -> Result<Vec<MockResponse>, MockServerError> {
    let text = std::fs::read_to_string(path).map_err(|source| MockServerError::ReadScript {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| MockServerError::ParseScript {
        path: path.to_owned(),
        source,
    })
}

/// How to run the server; [`MockModelServer::start`] uses the defaults.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Port on 127.0.0.1; 0 (the default) picks a free one.
    pub port: u16,
    /// Start the script over when it runs out instead of failing (for benchmarks).
    pub repeat: bool,
    /// Keep every request for [`MockModelServer::requests`] (the default). Benchmarks that
    /// send many requests turn this off; checks still run.
    pub capture: bool,
    /// A context window, as a body size: a request whose JSON body is larger is refused
    /// with HTTP 400 `context_length_exceeded` (as OpenAI answers), without using a script
    /// entry. The refusal is recorded in [`MockModelServer::rejected`].
    pub max_body_bytes: Option<usize>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            port: 0,
            repeat: false,
            capture: true,
            max_body_bytes: None,
        }
    }
}

#[derive(Default)]
struct ServerState {
    script: Vec<MockResponse>,
    next: usize,
    /// Sub-agents' scripts by route name ([`CapturedRequest::agent_route`]).
    routes: std::collections::BTreeMap<String, RouteScript>,
    /// Agent ids by nickname, learnt from `spawn_agent` outputs in request histories, for
    /// `{{agent:<nickname>}}` placeholders in scripted responses.
    agent_ids: std::collections::BTreeMap<String, String>,
    /// The same ids in the order their spawn outputs first appeared, for `{{agent:#N}}`.
    agent_order: Vec<String>,
    received: usize,
    requests: Vec<CapturedRequest>,
    failures: Vec<String>,
    /// Sizes of the bodies refused as too long, in arrival order.
    rejected: Vec<usize>,
}

/// One sub-agent's script and how far it has been served.
struct RouteScript {
    script: Vec<MockResponse>,
    next: usize,
    /// For the catch-all route [`EVERY_AGENT`]: how far each sub-agent thread (by thread id)
    /// has been served; each walks the script from its start.
    per_thread: std::collections::HashMap<String, usize>,
}

/// The route name that answers every sub-agent without a route of its own, each thread
/// from the start of the same script (for agents whose nicknames a test cannot know).
pub const EVERY_AGENT: &str = "*";

struct Shared {
    state: Mutex<ServerState>,
    options: ServerOptions,
    shutdown: CancellationToken,
    received: watch::Sender<usize>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, ServerState> {
        // A panicking test thread must not hide the recorded failures from the others.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Publishes that request `number` has been recorded. Concurrent handlers may finish
    /// out of order, so the count only ever grows.
    fn note_received(&self, number: usize) {
        self.received.send_if_modified(|seen| {
            let grew = number > *seen;
            *seen = (*seen).max(number);
            grew
        });
    }

    fn record_failure(&self, failure: String) {
        self.lock().failures.push(failure);
    }
}

/// A scripted model server on 127.0.0.1 speaking the Responses API and Chat Completions.
///
/// Stops when dropped. Call [`MockModelServer::verify`] at the end of a test: it panics
/// listing every recorded failure (malformed tool-call history, exhausted script, unknown
/// path) and any script entries left unused.
pub struct MockModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: Option<JoinHandle<()>>,
}

impl MockModelServer {
    /// Starts a server on a free port that answers requests with `script`, in order.
    ///
    /// # Panics
    /// When no port on 127.0.0.1 can be bound; this is a test helper.
    pub async fn start(script: Vec<MockResponse>) -> Self {
        match Self::start_with(script, ServerOptions::default()).await {
            Ok(server) => server,
            Err(err) => panic!("{err}"),
        }
    }

    /// Starts a server that answers each thread from its own script: requests of a root
    /// thread from `script`, requests of a sub-agent from the route named by its nickname
    /// (`[("Planck", …), ("Goodall", …)]`, see [`CapturedRequest::agent_route`]). A route
    /// named [`EVERY_AGENT`] (`*`) answers every other sub-agent, each thread (told apart by
    /// the thread id of its turn metadata) from the start of that script. A request from a
    /// sub-agent with no route is refused and recorded as a failure.
    ///
    /// # Panics
    /// When no port on 127.0.0.1 can be bound; this is a test helper.
    pub async fn start_routed(
        script: Vec<MockResponse>,
        routes: Vec<(&str, Vec<MockResponse>)>,
    ) -> Self {
        let server = Self::start(script).await;
        for (name, script) in routes {
            server.add_route(name, script);
        }
        server
    }

    /// Answers the sub-agent named `route` from `script` (see [`Self::start_routed`]).
    pub fn add_route(&self, route: &str, script: Vec<MockResponse>) {
        self.shared.lock().routes.insert(
            route.to_owned(),
            RouteScript {
                script,
                next: 0,
                per_thread: std::collections::HashMap::new(),
            },
        );
    }

    /// Every request a route (sub-agent nickname) received, in arrival order.
    pub fn requests_for(&self, route: &str) -> Vec<CapturedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.agent_route().as_deref() == Some(route))
            .collect()
    }

    /// Every request of root threads (no sub-agent route), in arrival order.
    pub fn root_requests(&self) -> Vec<CapturedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.agent_route().is_none())
            .collect()
    }

    /// Starts a server with explicit [`ServerOptions`].
    pub async fn start_with(
        script: Vec<MockResponse>,
        options: ServerOptions,
    ) -> Result<Self, MockServerError> {
        let port = options.port;
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|source| MockServerError::Bind { port, source })?;
        let addr = listener.local_addr().map_err(MockServerError::LocalAddr)?;
        let shutdown = CancellationToken::new();
        let shared = Arc::new(Shared {
            state: Mutex::new(ServerState {
                script,
                ..ServerState::default()
            }),
            options,
            shutdown: shutdown.clone(),
            received: watch::Sender::new(0),
        });
        let app = Router::new()
            .route("/v1/responses", post(handle_model_request))
            .route("/responses", post(handle_model_request))
            .route("/v1/chat/completions", post(handle_model_request))
            .route("/chat/completions", post(handle_model_request))
            .fallback(handle_unexpected)
            .with_state(Arc::clone(&shared));
        let task_shared = Arc::clone(&shared);
        let task = tokio::spawn(async move {
            let serve =
                axum::serve(listener, app).with_graceful_shutdown(shutdown.cancelled_owned());
            if let Err(err) = serve.await {
                task_shared.record_failure(format!("the mock model server stopped early: {err}"));
            }
        });
        Ok(Self {
            addr,
            shared,
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:PORT/v1`, the value for a provider's `base_url`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order (empty when capture is off).
    pub fn requests(&self) -> Vec<CapturedRequest> {
        self.shared.lock().requests.clone()
    }

    /// The single request received; panics when there were zero or several.
    pub fn single_request(&self) -> CapturedRequest {
        let mut requests = self.requests();
        match requests.len() {
            1 => requests.remove(0),
            n => panic!("expected exactly one request to the mock model server, got {n}"),
        }
    }

    /// Waits until at least `count` requests have arrived (and been recorded).
    pub async fn wait_for_requests(&self, count: usize) {
        let mut received = self.shared.received.subscribe();
        // The sender lives as long as `self`, so this cannot fail while we wait.
        let _ = received.wait_for(|seen| *seen >= count).await;
    }

    /// Failures recorded so far, one readable paragraph each.
    /// The body sizes of the requests refused for exceeding `max_body_bytes`.
    pub fn rejected(&self) -> Vec<usize> {
        self.shared.lock().rejected.clone()
    }

    pub fn failures(&self) -> Vec<String> {
        self.shared.lock().failures.clone()
    }

    /// How many script entries have not been served yet (0 in repeat mode).
    pub fn unused(&self) -> usize {
        let state = self.shared.lock();
        let routes: usize = state
            .routes
            .iter()
            .map(|(name, r)| {
                if name == EVERY_AGENT {
                    r.per_thread
                        .values()
                        .map(|served| r.script.len().saturating_sub(*served))
                        .sum()
                } else {
                    r.script.len().saturating_sub(r.next)
                }
            })
            .sum();
        if self.shared.options.repeat {
            0
        } else {
            state.script.len().saturating_sub(state.next) + routes
        }
    }

    /// Panics listing every recorded failure and the script entries never requested.
    pub fn verify(&self) {
        self.verify_inner(false);
    }

    /// Like [`MockModelServer::verify`], but unused script entries are fine (for tests that
    /// end early on purpose).
    pub fn verify_allow_unused(&self) {
        self.verify_inner(true);
    }

    fn verify_inner(&self, allow_unused: bool) {
        let mut problems = self.failures();
        if !allow_unused {
            let state = self.shared.lock();
            for (name, route) in &state.routes {
                if name == EVERY_AGENT {
                    // Each thread the catch-all served runs the whole script.
                    let mut threads: Vec<_> = route.per_thread.iter().collect();
                    threads.sort();
                    for (thread, served) in threads {
                        let left = route.script.len().saturating_sub(*served);
                        if left > 0 {
                            problems.push(format!(
                                "{left} of the catch-all route's {} scripted responses were \
                                 never requested by thread {thread}",
                                route.script.len()
                            ));
                        }
                    }
                    continue;
                }
                let left = route.script.len().saturating_sub(route.next);
                if left > 0 {
                    problems.push(format!(
                        "{left} of sub-agent {name}'s {} scripted responses were never requested",
                        route.script.len()
                    ));
                }
            }
        }
        let unused = {
            let state = self.shared.lock();
            state.script.len().saturating_sub(state.next)
        };
        let unused = if self.shared.options.repeat {
            0
        } else {
            unused
        };
        if !allow_unused && unused > 0 {
            let total = self.shared.lock().script.len();
            problems.push(format!(
                "{unused} of {total} scripted responses were never requested \
                 (entries #{} to #{total}); the client sent fewer requests than the test expected",
                total - unused + 1
            ));
        }
        if !problems.is_empty() {
            panic!(
                "mock model server at {} found {} problem(s):\n- {}",
                self.base_url(),
                problems.len(),
                problems.join("\n- ")
            );
        }
    }

    /// Stops accepting requests, ends hanging streams and waits for the server task.
    pub async fn shutdown(mut self) {
        self.shared.shutdown.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for MockModelServer {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}

impl std::fmt::Debug for MockModelServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockModelServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

/// What to do with a request once it has been recorded and checked.
enum Plan {
    Serve(MockResponse),
    Reject(StatusCode, String),
    /// The body is over `max_body_bytes`.
    ContextTooLong(String),
}

async fn handle_model_request(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let plan = plan_request(&shared, &path, &headers, &body);
    match plan {
        Plan::Reject(status, message) => error_response(status, &message),
        Plan::ContextTooLong(message) => context_too_long(&message),
        Plan::Serve(response) => match serve(response, &shared.shutdown).await {
            Ok(response) => response,
            Err(problem) => {
                shared.record_failure(problem.clone());
                error_response(StatusCode::INTERNAL_SERVER_ERROR, &problem)
            }
        },
    }
}

/// Records the request, checks it and takes the script entry that answers it.
fn plan_request(shared: &Shared, path: &str, headers: &HeaderMap, body: &Bytes) -> Plan {
    let wire = WireApi::from_path(path);
    let raw_len = body.len();
    let parsed = serde_json::from_slice::<Value>(body);
    let mut state = shared.lock();
    state.received += 1;
    let number = state.received;
    let label = format!("request #{number} (POST {path})");
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let route = crate::capture::route_of(header);
    let thread = crate::capture::thread_of(header);

    let mut problems = Vec::new();
    let body = match parsed {
        Ok(body) => {
            if let Some(wire) = wire {
                problems.extend(history_problems(wire, &body));
            }
            body
        }
        Err(err) => {
            problems.push(format!("body is not JSON: {err}"));
            Value::Null
        }
    };
    learn_agent_ids(&mut state, &body);
    if shared.options.capture {
        state.requests.push(CapturedRequest {
            path: path.to_owned(),
            headers: headers
                .iter()
                .map(|(name, value)| {
                    (
                        name.as_str().to_owned(),
                        String::from_utf8_lossy(value.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body,
        });
    }

    let too_long = shared.options.max_body_bytes.filter(|max| raw_len > *max);
    let plan = if let Some(max) = too_long {
        state.rejected.push(raw_len);
        Plan::ContextTooLong(format!(
            "This model's maximum context length is {max} bytes in this test, but the request has {raw_len}."
        ))
    } else if !problems.is_empty() {
        let failure = format!(
            "{label} has a malformed history:\n  {}",
            problems.join("\n  ")
        );
        state.failures.push(failure.clone());
        Plan::Reject(StatusCode::INTERNAL_SERVER_ERROR, failure)
    } else if let Some(route) = route.as_deref() {
        serve_route(&mut state, &label, route, thread.as_deref())
    } else if let Some(response) = take_next(&mut state, shared.options.repeat) {
        let entry = state.next;
        if let (Some(expected), Some(actual)) = (response.wire(), wire)
            && expected != actual
        {
            state.failures.push(format!(
                "{label} is a {actual:?} request but script entry #{entry} is a {expected:?} \
                 response; the provider's wire_api and the script disagree"
            ));
        }
        Plan::Serve(response)
    } else {
        let failure = format!(
            "{label} arrived after the script's {} responses were used up; \
             the client sent more requests than the test scripted",
            state.script.len()
        );
        state.failures.push(failure.clone());
        Plan::Reject(StatusCode::INTERNAL_SERVER_ERROR, failure)
    };
    let plan = match plan {
        Plan::Serve(response) => match fill_agent_ids(&response, &state) {
            Ok(response) => Plan::Serve(response),
            Err(problem) => {
                let failure = format!("{label}: {problem}");
                state.failures.push(failure.clone());
                Plan::Reject(StatusCode::INTERNAL_SERVER_ERROR, failure)
            }
        },
        other => other,
    };
    drop(state);
    shared.note_received(number);
    plan
}

fn take_next(state: &mut ServerState, repeat: bool) -> Option<MockResponse> {
    if repeat && state.next >= state.script.len() && !state.script.is_empty() {
        state.next = 0;
    }
    let response = state.script.get(state.next).cloned()?;
    state.next += 1;
    Some(response)
}

async fn handle_unexpected(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
) -> Response {
    let failure = format!(
        "unexpected request {method} {}: the mock model server only answers POST \
         /v1/responses and POST /v1/chat/completions (with or without /v1)",
        uri.path()
    );
    {
        let mut state = shared.lock();
        state.received += 1;
        state.failures.push(failure.clone());
        let number = state.received;
        drop(state);
        shared.note_received(number);
    }
    error_response(StatusCode::NOT_FOUND, &failure)
}

/// An OpenAI-style JSON error body.
fn error_response(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {"message": message, "type": "mock_server_error", "code": null}});
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// OpenAI's answer to a request over the context window.
fn context_too_long(message: &str) -> Response {
    let body = json!({"error": {
        "message": message,
        "type": "invalid_request_error",
        "param": "input",
        "code": "context_length_exceeded",
    }});
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// How a streamed body ends after its frames.
enum Ending {
    /// End the body normally.
    Clean,
    /// Fail the body so the server aborts the connection.
    Abort,
    /// Send nothing more until the server stops (or the client leaves).
    Hang,
}

async fn serve(
    mut response: MockResponse,
    shutdown: &CancellationToken,
) -> Result<Response, String> {
    loop {
        response = match response {
            MockResponse::Delayed(delay, inner) => {
                wait_or_shutdown(delay, shutdown).await;
                *inner
            }
            MockResponse::Sse(events) => {
                return Ok(sse_response(event_frames(&events), Ending::Clean, shutdown));
            }
            MockResponse::ChatSse(chunks) => {
                let mut frames: Vec<String> = chunks.iter().map(chat_frame).collect();
                frames.push(CHAT_DONE_FRAME.to_owned());
                return Ok(sse_response(frames, Ending::Clean, shutdown));
            }
            MockResponse::DropAfter(events) => {
                return Ok(sse_response(event_frames(&events), Ending::Abort, shutdown));
            }
            MockResponse::Hang(events) => {
                return Ok(sse_response(event_frames(&events), Ending::Hang, shutdown));
            }
            MockResponse::Malformed(raw) => {
                return Ok(sse_response(vec![raw], Ending::Clean, shutdown));
            }
            MockResponse::Http {
                status,
                headers,
                body,
            } => return http_response(status, &headers, body),
        };
    }
}

async fn wait_or_shutdown(delay: Duration, shutdown: &CancellationToken) {
    tokio::select! {
        () = tokio::time::sleep(delay) => {}
        () = shutdown.cancelled() => {}
    }
}

fn event_frames(events: &[SseEvent]) -> Vec<String> {
    events.iter().map(SseEvent::to_frame).collect()
}

fn sse_response(frames: Vec<String>, ending: Ending, shutdown: &CancellationToken) -> Response {
    let frames = stream::iter(frames.into_iter().map(|frame| Ok(Bytes::from(frame))));
    let body: BoxStream<'static, Result<Bytes, io::Error>> = match ending {
        Ending::Clean => frames.boxed(),
        Ending::Abort => frames
            .chain(stream::once(async {
                // Let the server flush the frames already written before the body fails;
                // a failed body makes hyper close the connection without ending the
                // chunked encoding, which the client sees as a broken stream.
                tokio::task::yield_now().await;
                Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "mock model server dropping the connection as scripted",
                ))
            }))
            .boxed(),
        Ending::Hang => {
            let shutdown = shutdown.clone();
            frames
                .chain(
                    stream::once(async move { shutdown.cancelled_owned().await })
                        .filter_map(|()| futures::future::ready(None)),
                )
                .boxed()
        }
    };
    let mut response = Response::new(Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn http_response(
    status: u16,
    headers: &[(String, String)],
    body: String,
) -> Result<Response, String> {
    let status = StatusCode::from_u16(status)
        .map_err(|_| format!("script entry has invalid HTTP status {status}; use 100 to 999"))?;
    let has_content_type = headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("content-type"));
    let default_type = if body.is_empty() || has_content_type {
        None
    } else if serde_json::from_str::<Value>(&body).is_ok() {
        Some("application/json")
    } else {
        Some("text/plain; charset=utf-8")
    };
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let map = response.headers_mut();
    if let Some(content_type) = default_type {
        map.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|err| format!("script entry has invalid header name {name:?}: {err}"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|err| format!("script entry has invalid value for header {name}: {err}"))?;
        map.append(name, value);
    }
    Ok(response)
}
