//! The server's shared state: the thread manager, the loaded threads, and what every
//! connection needs from the process (environment, home, working directory).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use osprey_app_server_protocol::{ClientInfo, InitializeResponse};
use osprey_config::EnvSnapshot;
use osprey_core::{ModelProviderFactory, ThreadManager};
use osprey_protocol::{Op, ThreadId};
use osprey_rollout::SessionSource;

use crate::connection::Connection;
use crate::loaded::LoadedThread;

/// What the server needs from its process.
#[derive(Clone)]
pub struct ServerOptions {
    /// Osprey's version, for `userAgent` and `cliVersion`.
    pub version: String,
    pub env: HashMap<String, String>,
    /// Where relative `cwd`s start, and the cwd of threads started without one.
    pub process_cwd: PathBuf,
    /// The `osprey` executable sandboxed helpers re-enter; without it, commands that need
    /// the sandbox are refused (the sandbox fails closed).
    pub osprey_exe: Option<PathBuf>,
    /// Providers that are not HTTP endpoints (the embedded local model).
    pub providers: Vec<Arc<dyn ModelProviderFactory>>,
    /// Who started the threads, as their session files and `Thread` objects say
    /// (`osprey_app_server` / `vscode` for the app server, `osprey_tui` / `cli` for the TUI).
    pub originator: String,
    pub source: SessionSource,
}

impl ServerOptions {
    /// The app server's own origin for its threads.
    pub const APP_SERVER_ORIGINATOR: &'static str = "osprey_app_server";
}

pub struct Server {
    pub(crate) manager: ThreadManager,
    /// Threads started with `ephemeral: true`: no session file.
    pub(crate) ephemeral_manager: ThreadManager,
    pub(crate) options: ServerOptions,
    pub(crate) env: EnvSnapshot,
    /// `$OSPREY_HOME` (or its default), where sessions live.
    pub(crate) home: PathBuf,
    threads: Mutex<HashMap<ThreadId, Arc<LoadedThread>>>,
}

/// How long a thread gets to stop when it is unloaded.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

impl Server {
    pub fn new(options: ServerOptions) -> Result<Arc<Self>, osprey_config::ConfigError> {
        let env = EnvSnapshot::from_pairs(options.env.clone());
        let home = osprey_config::find_osprey_home(&env, &options.process_cwd)?;
        let manager = Self::thread_manager(&options);
        let ephemeral_manager = Self::thread_manager(&options).ephemeral(true);
        let server = Arc::new(Self {
            manager,
            ephemeral_manager,
            options,
            env,
            home,
            threads: Mutex::new(HashMap::new()),
        });
        crate::subagents::follow(&server);
        Ok(server)
    }

    fn thread_manager(options: &ServerOptions) -> ThreadManager {
        let mut manager = ThreadManager::new(options.env.clone())
            .with_origin(&options.originator, options.source.clone());
        if let Some(exe) = &options.osprey_exe {
            manager = manager.with_osprey_exe(exe.clone());
        }
        for provider in &options.providers {
            manager = manager.with_provider(Arc::clone(provider));
        }
        manager
    }

    pub(crate) fn initialize_response(&self, client: &ClientInfo) -> InitializeResponse {
        let os = std::env::consts::OS;
        let arch = std::env::consts::ARCH;
        let user_agent = format!(
            "{}/{} ({os}; {arch}) ({}; {})",
            client.name, self.options.version, client.name, client.version
        );
        let home = self.home.display().to_string();
        InitializeResponse {
            user_agent,
            codex_home: home.clone(),
            osprey_home: Some(home),
            platform_family: std::env::consts::FAMILY.to_owned(),
            platform_os: os.to_owned(),
        }
    }

    pub(crate) fn loaded(&self, id: &ThreadId) -> Option<Arc<LoadedThread>> {
        self.threads.lock().ok()?.get(id).cloned()
    }

    pub(crate) fn loaded_ids(&self) -> Vec<ThreadId> {
        self.threads
            .lock()
            .map(|t| t.keys().copied().collect())
            .unwrap_or_default()
    }

    /// Keeps a new thread and starts its event pump.
    pub(crate) fn register(self: &Arc<Self>, thread: Arc<LoadedThread>) {
        if let Ok(mut threads) = self.threads.lock() {
            threads.insert(thread.info.id, Arc::clone(&thread));
        }
        tokio::spawn(crate::pump::run(Arc::downgrade(self), thread));
    }

    /// Drops a thread whose events ended — this registration only: a sub-agent reopened by
    /// `resume_agent` comes back under the same id as a new thread, registered (and pumped)
    /// while the old pump may still be finishing, and the old pump must not drop it.
    pub(crate) fn forget(&self, thread: &LoadedThread) {
        if let Ok(mut threads) = self.threads.lock()
            && threads
                .get(&thread.info.id)
                .is_some_and(|held| std::ptr::eq(held.as_ref(), thread))
        {
            threads.remove(&thread.info.id);
        }
        self.manager.remove_handle(&thread.thread);
        self.ephemeral_manager.remove_handle(&thread.thread);
    }

    /// Whether another registration now holds `thread`'s id (the same identity test as
    /// [`Server::forget`]): a sub-agent reopened while its closed registration's pump ends.
    pub(crate) fn superseded(&self, thread: &LoadedThread) -> bool {
        self.threads.lock().is_ok_and(|threads| {
            threads
                .get(&thread.info.id)
                .is_some_and(|held| !std::ptr::eq(held.as_ref(), thread))
        })
    }

    /// Whether `thread` (this registration) is still loaded.
    fn still_loaded(&self, thread: &Arc<LoadedThread>) -> bool {
        self.loaded(&thread.info.id)
            .is_some_and(|held| Arc::ptr_eq(&held, thread))
    }

    /// Stops a thread and waits (a while) until its pump saw it end.
    pub(crate) async fn shutdown_thread(&self, thread: &Arc<LoadedThread>) {
        let _ = thread.thread.submit(Op::Shutdown).await;
        let stopped = tokio::time::timeout(SHUTDOWN_GRACE, async {
            while self.still_loaded(thread) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        if stopped.is_err() {
            tracing::warn!("thread {} did not shut down in time", thread.info.id);
            self.forget(thread);
        }
    }

    /// A thread no connection watches any more and that runs no turn is unloaded; its
    /// session file stays and `thread/resume` loads it again.
    pub(crate) async fn unload_if_unwatched(&self, thread: &Arc<LoadedThread>) {
        if thread.subscribers().is_empty() && thread.state().turn.is_none() {
            let _ = thread.thread.submit(Op::Shutdown).await;
        }
    }

    /// A connection ended: it leaves every thread; threads nobody watches are unloaded once
    /// idle (a running turn goes on and is saved).
    pub(crate) fn connection_closed(self: &Arc<Self>, connection: &Connection) {
        let threads: Vec<Arc<LoadedThread>> = self
            .threads
            .lock()
            .map(|t| t.values().cloned().collect())
            .unwrap_or_default();
        for thread in threads {
            if thread.unsubscribe(connection.id) {
                let server = Arc::clone(self);
                tokio::spawn(async move { server.unload_if_unwatched(&thread).await });
            }
        }
    }

    /// Shuts every loaded thread down (the server is stopping).
    pub async fn shutdown_all(&self) {
        let threads: Vec<Arc<LoadedThread>> = self
            .threads
            .lock()
            .map(|t| t.values().cloned().collect())
            .unwrap_or_default();
        for thread in threads {
            self.shutdown_thread(&thread).await;
        }
    }
}
