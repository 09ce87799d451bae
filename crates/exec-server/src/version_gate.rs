//! Whether a client may use capability discovery V2 (`capabilities/discoverV2`) with a
//! given exec server, or must fall back to V1 (probing with fs calls).
//!
//! Measured against Codex 0.171 (`captures/exec-server-version-gate.txt` in the reference):
//! V2 is used only when the client has it switched on, the server advertises
//! `capabilityDiscoveryV2`, and its `executorVersion` parses as strict semver at least
//! 0.164.0. A pre-release of 0.164.0 sorts below it; `0.164`, `v0.164.0`, `0.0.0` (a dev
//! build), an empty string, a missing field and garbage are all too old. This one function
//! decides it for every caller.

use crate::protocol::EnvironmentInfo;

/// The first executor version that serves `capabilities/discoverV2`.
pub const DISCOVERY_V2_MIN_VERSION: semver::Version = semver::Version::new(0, 164, 0);

/// The capability flag a server sets when it serves V2 discovery.
pub const DISCOVERY_V2_CAPABILITY: &str = "capabilityDiscoveryV2";

/// Which discovery a client uses, and why, in words fit for a log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discovery {
    /// Use `capabilities/discoverV2`.
    V2,
    /// Probe with fs calls; the reason V2 was not used.
    V1 { reason: String },
}

/// Decides the discovery generation for a server that answered `initialize` with `info`.
pub fn choose_discovery(v2_enabled: bool, info: &EnvironmentInfo) -> Discovery {
    let v1 = |reason: String| Discovery::V1 { reason };
    if !v2_enabled {
        return v1("capability discovery V2 is switched off in this client".to_owned());
    }
    if !info.has_capability(DISCOVERY_V2_CAPABILITY) {
        return v1(format!(
            "the exec server does not advertise `{DISCOVERY_V2_CAPABILITY}`"
        ));
    }
    match version_supports_v2(info.executor_version.as_deref()) {
        Ok(()) => Discovery::V2,
        Err(reason) => v1(reason),
    }
}

/// Whether `version` (the server's `executorVersion`) is new enough for V2.
pub fn version_supports_v2(version: Option<&str>) -> Result<(), String> {
    let Some(text) = version else {
        return Err("the exec server reports no executorVersion".to_owned());
    };
    let parsed = semver::Version::parse(text).map_err(|e| {
        format!("the exec server's executorVersion `{text}` is not a semantic version ({e})")
    })?;
    if parsed < DISCOVERY_V2_MIN_VERSION {
        return Err(format!(
            "the exec server's executorVersion {parsed} is older than {DISCOVERY_V2_MIN_VERSION}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn info(version: Option<&str>, capability: bool) -> EnvironmentInfo {
        EnvironmentInfo {
            shell: None,
            executor_version: version.map(str::to_owned),
            cwd: None,
            user_home_dir: None,
            platform_os: None,
            prepend_path_dirs: Vec::new(),
            temporary_directories: Vec::new(),
            temp_dir: None,
            capabilities: BTreeMap::from([(DISCOVERY_V2_CAPABILITY.to_owned(), capability)]),
        }
    }

    /// Every row of the table measured against Codex 0.171.
    #[test]
    fn the_measured_table() {
        let rows: &[(Option<&str>, bool, bool)] = &[
            (Some("0.171.0"), true, true),
            (Some("0.163.9"), true, false),
            (Some("0.163.0"), true, false),
            (Some("0.164.0"), true, true),
            (Some("0.164.1"), true, true),
            (Some("0.164.0-rc.1"), true, false),
            (Some("0.164.0-alpha.1"), true, false),
            (Some("0.165.0-alpha.1"), true, true),
            (Some("0.171.0-beta"), true, true),
            (Some("1.0.0"), true, true),
            (Some("0.164"), true, false),
            (Some("v0.164.0"), true, false),
            (Some("0.0.0"), true, false),
            (Some("garbage"), true, false),
            (Some(""), true, false),
            (None, true, false),
            (Some("0.171.0"), false, false),
        ];
        for &(version, capability, want_v2) in rows {
            let got = choose_discovery(true, &info(version, capability));
            assert_eq!(
                got == Discovery::V2,
                want_v2,
                "{version:?} {capability}: {got:?}"
            );
        }
    }

    #[test]
    fn switched_off_in_the_client_is_always_v1() {
        let got = choose_discovery(false, &info(Some("0.171.0"), true));
        assert!(matches!(got, Discovery::V1 { reason } if reason.contains("switched off")));
    }

    #[test]
    fn reasons_name_the_version() {
        let Discovery::V1 { reason } = choose_discovery(true, &info(Some("v0.164.0"), true)) else {
            panic!("v0.164.0 must not pass");
        };
        assert!(
            reason.contains("`v0.164.0` is not a semantic version"),
            "{reason}"
        );
        let Discovery::V1 { reason } = choose_discovery(true, &info(Some("0.163.9"), true)) else {
            panic!("0.163.9 must not pass");
        };
        assert!(reason.contains("older than 0.164.0"), "{reason}");
    }
}
