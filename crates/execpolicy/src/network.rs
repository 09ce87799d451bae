//! `network_rule(...)` entries: accepted and validated so Codex rules files load, and kept
//! for callers that enforce network policy. Command checks ignore them.

use crate::decision::Decision;

/// The protocol a network rule applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkProtocol {
    /// Plain HTTP.
    Http,
    /// HTTPS (also spelled `https_connect` or `http-connect`).
    Https,
    /// SOCKS5 TCP.
    Socks5Tcp,
    /// SOCKS5 UDP.
    Socks5Udp,
}

impl NetworkProtocol {
    pub(crate) fn from_rules_str(raw: &str) -> Option<Self> {
        match raw {
            "http" => Some(Self::Http),
            "https" | "https_connect" | "http-connect" => Some(Self::Https),
            "socks5_tcp" => Some(Self::Socks5Tcp),
            "socks5_udp" => Some(Self::Socks5Udp),
            _ => None,
        }
    }
}

/// One `network_rule(host=…, protocol=…, decision=…, justification=…)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkRule {
    /// Lower-cased host name or IP literal, without port or trailing dot.
    pub host: String,
    /// The protocol.
    pub protocol: NetworkProtocol,
    /// `deny` in the file is read as [`Decision::Forbidden`].
    pub decision: Decision,
    /// The author's reason.
    pub justification: Option<String>,
}

/// Reduces `raw` to a bare lower-case host, or says why it is not one.
pub(crate) fn normalize_host(raw: &str) -> Result<String, String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err("network_rule host cannot be empty".into());
    }
    if trimmed.contains("://") || trimmed.contains(['/', '?', '#']) {
        return Err(format!(
            "network_rule host must be a host name or IP literal without scheme or path, got {raw:?}"
        ));
    }
    let host = if let Some(bracketed) = trimmed.strip_prefix('[') {
        let Some((inside, rest)) = bracketed.split_once(']') else {
            return Err(format!(
                "network_rule host {raw:?} has an unclosed IPv6 bracket"
            ));
        };
        let port_ok = rest
            .strip_prefix(':')
            .is_some_and(|port| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()));
        if !rest.is_empty() && !port_ok {
            return Err(format!(
                "network_rule host {raw:?} has an unsupported suffix"
            ));
        }
        inside
    } else {
        match trimmed.split_once(':') {
            Some((name, port))
                if !name.is_empty()
                    && !port.is_empty()
                    && !port.contains(':')
                    && port.bytes().all(|b| b.is_ascii_digit()) =>
            {
                name
            }
            _ => trimmed,
        }
    };
    let host = host.trim_end_matches('.').trim().to_ascii_lowercase();
    if host.is_empty() {
        return Err("network_rule host cannot be empty".into());
    }
    if host.contains('*') {
        return Err(format!(
            "network_rule host {raw:?} must be a specific host, not a wildcard"
        ));
    }
    if host.chars().any(char::is_whitespace) {
        return Err(format!(
            "network_rule host {raw:?} cannot contain whitespace"
        ));
    }
    Ok(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn hosts_are_normalized_or_rejected() {
        assert_eq!(
            normalize_host(" Example.COM. "),
            Ok("example.com".to_owned())
        );
        assert_eq!(
            normalize_host("example.com:443"),
            Ok("example.com".to_owned())
        );
        assert_eq!(normalize_host("[::1]:8080"), Ok("::1".to_owned()));
        assert_eq!(normalize_host("::1"), Ok("::1".to_owned()));
        assert!(normalize_host("https://example.com").is_err());
        assert!(normalize_host("*.example.com").is_err());
        assert!(normalize_host("   ").is_err());
        assert!(normalize_host("[::1").is_err());
    }
}
