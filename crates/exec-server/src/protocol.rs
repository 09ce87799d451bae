//! The exec-server wire types: the params and results of every method and the server's
//! notifications, spelled as Codex 0.171's exec server puts them on the wire (camelCase,
//! `file://` URIs for paths, base64 for bytes). Unknown fields are accepted and ignored,
//! as Codex does, so newer clients keep working.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Method names.
pub mod method {
    pub const INITIALIZE: &str = "initialize";
    pub const INITIALIZED: &str = "initialized";
    pub const ENVIRONMENT_INFO: &str = "environment/info";
    pub const ENVIRONMENT_STATUS: &str = "environment/status";
    pub const PROCESS_START: &str = "process/start";
    pub const PROCESS_READ: &str = "process/read";
    pub const PROCESS_WRITE: &str = "process/write";
    pub const PROCESS_SIGNAL: &str = "process/signal";
    pub const PROCESS_TERMINATE: &str = "process/terminate";
    pub const PROCESS_OUTPUT: &str = "process/output";
    pub const PROCESS_EXITED: &str = "process/exited";
    pub const PROCESS_CLOSED: &str = "process/closed";
    pub const FS_READ_FILE: &str = "fs/readFile";
    pub const FS_WRITE_FILE: &str = "fs/writeFile";
    pub const FS_GET_METADATA: &str = "fs/getMetadata";
    pub const FS_READ_DIRECTORY: &str = "fs/readDirectory";
    pub const FS_CANONICALIZE: &str = "fs/canonicalize";
    pub const FS_WALK: &str = "fs/walk";
    pub const FS_CREATE_DIRECTORY: &str = "fs/createDirectory";
    pub const FS_REMOVE: &str = "fs/remove";
    pub const FS_COPY: &str = "fs/copy";
    pub const DISCOVER_V2: &str = "capabilities/discoverV2";
}

/// Error codes, as Codex's exec server uses them.
pub mod code {
    /// Lifecycle and state errors ("process p1 already exists").
    pub const INVALID_REQUEST: i64 = -32600;
    /// A method this server does not serve.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Params that do not parse or make no sense (`argv must not be empty`).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Something failed inside the server.
    pub const INTERNAL: i64 = -32603;
    /// A filesystem call failed (a missing file, a denied path).
    pub const FS_ERROR: i64 = -32004;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub client_name: String,
    #[serde(default)]
    pub resume_session_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    pub session_id: String,
    pub environment_info: EnvironmentInfo,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShellInfo {
    pub name: String,
    pub path: String,
}

/// What the executor's machine looks like. Everything but `executorVersion` and
/// `capabilities` is informational; a client that finds a field missing treats it as
/// unknown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentInfo {
    #[serde(default)]
    pub shell: Option<ShellInfo>,
    #[serde(default)]
    pub executor_version: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub user_home_dir: Option<String>,
    #[serde(default)]
    pub platform_os: Option<String>,
    #[serde(default)]
    pub prepend_path_dirs: Vec<String>,
    #[serde(default)]
    pub temporary_directories: Vec<String>,
    #[serde(default)]
    pub temp_dir: Option<String>,
    /// Capability flags by name; a flag that is absent is false.
    #[serde(default)]
    pub capabilities: BTreeMap<String, bool>,
}

impl EnvironmentInfo {
    /// Whether the server advertises `name`.
    pub fn has_capability(&self, name: &str) -> bool {
        self.capabilities.get(name).copied().unwrap_or(false)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentStatus {
    pub status: String,
}

/// Which variables of the server's own environment a process inherits.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvPolicy {
    /// `all`, `none` or `core` (a handful of basics: PATH, HOME, USER, LANG, …).
    #[serde(default)]
    pub inherit: Option<String>,
    #[serde(default)]
    pub ignore_default_excludes: bool,
    /// Names (or `PREFIX*` patterns) left out of the inherited set.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Set on top, after inheritance and exclusion.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// When not empty, only these inherited names survive.
    #[serde(default)]
    pub include_only: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessStartParams {
    pub process_id: String,
    pub argv: Vec<String>,
    pub cwd: String,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub env_policy: Option<EnvPolicy>,
    #[serde(default)]
    pub tty: bool,
    #[serde(default)]
    pub pipe_stdin: bool,
    #[serde(default)]
    pub arg0: Option<String>,
    /// The client's sandbox wishes. The server applies its own sandbox whatever this says.
    #[serde(default)]
    pub sandbox: Option<Value>,
    #[serde(default)]
    pub metadata: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessStartResponse {
    pub process_id: String,
    /// `none`, `linuxSeccomp` (Landlock + seccomp, Codex's name) or `macosSeatbelt`.
    pub sandbox_type: String,
}

/// The stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamName {
    Stdout,
    Stderr,
    Pty,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessOutput {
    pub process_id: String,
    pub seq: u64,
    pub stream: StreamName,
    /// Base64 of the bytes.
    pub chunk: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessExited {
    pub process_id: String,
    pub seq: u64,
    /// The exit code; 128 + N for a process killed by signal N, as a shell reports it.
    pub exit_code: i32,
    pub sandbox_denied: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessClosed {
    pub process_id: String,
    pub seq: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessReadParams {
    pub process_id: String,
    /// Only chunks after this sequence number (all when absent).
    #[serde(default)]
    pub after_seq: Option<u64>,
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// How long to wait for something new when nothing is there yet.
    #[serde(default)]
    pub wait_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputChunk {
    pub seq: u64,
    pub stream: StreamName,
    pub chunk: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessReadResponse {
    pub chunks: Vec<OutputChunk>,
    pub next_seq: u64,
    pub exited: bool,
    pub exit_code: Option<i32>,
    pub closed: bool,
    pub failure: Option<String>,
    pub sandbox_denied: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessWriteParams {
    pub process_id: String,
    pub chunk: String,
    /// The client's name for this write (required, as in Codex).
    pub write_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessWriteResponse {
    /// `accepted`, `unknownProcess`, `stdinClosed` or `starting`.
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessSignalParams {
    pub process_id: String,
    /// `interrupt` (SIGINT to the process group), `terminate` (SIGTERM) or `kill`.
    pub signal: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessIdParams {
    pub process_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessTerminateResponse {
    /// Whether the process was still running when it was told to stop.
    pub running: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PathParams {
    pub path: String,
    #[serde(default)]
    pub sandbox: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadFileResponse {
    pub data_base64: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteFileParams {
    pub path: String,
    pub data_base64: String,
    #[serde(default)]
    pub sandbox: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    pub is_directory: bool,
    pub is_file: bool,
    pub is_symlink: bool,
    pub size: u64,
    pub created_at_ms: i64,
    pub modified_at_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryEntry {
    pub file_name: String,
    pub is_directory: bool,
    pub is_file: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadDirectoryResponse {
    pub entries: Vec<DirectoryEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanonicalizeResponse {
    pub path: String,
}

/// Limits of one `fs/walk`. Every field is required, as in Codex.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WalkOptions {
    pub max_depth: usize,
    pub max_directories: usize,
    pub max_entries: usize,
    pub follow_directory_symlinks: bool,
    pub prune_hidden_directories: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WalkParams {
    pub path: String,
    pub options: WalkOptions,
    #[serde(default)]
    pub sandbox: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WalkEntry {
    pub path: String,
    /// `file`, `directory`, `symlink` or `other`.
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WalkError {
    pub path: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WalkResponse {
    pub entries: Vec<WalkEntry>,
    pub errors: Vec<WalkError>,
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateDirectoryParams {
    pub path: String,
    /// Create missing parents too (the default).
    #[serde(default)]
    pub recursive: Option<bool>,
    #[serde(default)]
    pub sandbox: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoveParams {
    pub path: String,
    #[serde(default)]
    pub recursive: Option<bool>,
    /// A missing path is not an error.
    #[serde(default)]
    pub force: Option<bool>,
    #[serde(default)]
    pub sandbox: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CopyParams {
    pub source_path: String,
    pub destination_path: String,
    #[serde(default)]
    pub recursive: bool,
    #[serde(default)]
    pub sandbox: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverV2Params {
    pub cwd: String,
    #[serde(default)]
    pub sandbox: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverV2Response {
    pub plugins: Vec<Value>,
    pub skills: Vec<Value>,
    pub warnings: Vec<String>,
}
