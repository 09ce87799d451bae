//! Retry timing: exponential backoff with jitter, `Retry-After` headers, "try again in Ns"
//! hints in error messages, and reading a provider's error body.

use std::time::{Duration, SystemTime};

use rand::Rng;
use reqwest::header::HeaderMap;
use serde_json::Value;

/// No single wait is longer than this, whatever the server asks for.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(60);

/// How many characters of a non-JSON error body are shown.
const BODY_EXCERPT_CHARS: usize = 500;

/// The wait before retry number `attempt` (1-based): `base * 2^(attempt-1)`, scaled by a
/// random factor in [0.9, 1.1] so that many clients do not retry in lockstep, at most
/// [`MAX_WAIT`].
pub(crate) fn backoff(base: Duration, attempt: u64) -> Duration {
    let exponent = attempt.saturating_sub(1).min(20);
    let factor = 2f64.powi(i32::try_from(exponent).unwrap_or(20));
    let jitter = rand::rng().random_range(0.9..1.1);
    let secs = base.as_secs_f64() * factor * jitter;
    if secs.is_finite() && secs < MAX_WAIT.as_secs_f64() {
        Duration::from_secs_f64(secs.max(0.0))
    } else {
        MAX_WAIT
    }
}

/// The delay a response asks for: `retry-after-ms`, then `Retry-After` as seconds or an
/// HTTP date. Capped at [`MAX_WAIT`]; a value that is negative, not a number or unreadable
/// is ignored (the caller falls back to its own backoff).
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(wait) = text("retry-after-ms")
        .and_then(|v| v.parse::<f64>().ok())
        .and_then(|ms| capped_secs(ms / 1000.0))
    {
        return Some(wait);
    }
    let value = text("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return capped_secs(secs);
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(now)
            .unwrap_or(Duration::ZERO)
            .min(MAX_WAIT),
    )
}

/// `secs` as a wait of at most [`MAX_WAIT`], or `None` when it is negative or not finite.
/// The cap comes before the `Duration` is built: `Duration::from_secs_f64` panics on values
/// it cannot hold, and a server may send any number.
fn capped_secs(secs: f64) -> Option<Duration> {
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(secs.min(MAX_WAIT.as_secs_f64())))
}

/// Reads "try again in 1.5s" / "try again in 300ms" / "try again in 2 seconds" from a rate
/// limit message, as the Responses API writes it. Capped at [`MAX_WAIT`].
pub(crate) fn try_again_hint(message: &str) -> Option<Duration> {
    let lower = message.to_ascii_lowercase();
    let start = lower.find("try again in")? + "try again in".len();
    let rest = lower[start..].trim_start();
    let number_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let value: f64 = rest[..number_len].parse().ok()?;
    let unit = rest[number_len..].trim_start();
    let secs = if unit.starts_with("ms") || unit.starts_with("millisecond") {
        value / 1000.0
    } else if unit.starts_with('s') {
        value
    } else {
        return None;
    };
    capped_secs(secs)
}

/// The useful part of an error body: `error.message` (and `error.code`) from an
/// OpenAI-style JSON body, otherwise the first 500 characters of the text.
pub(crate) fn error_body_message(body: &str) -> (String, Option<String>) {
    if let Ok(json) = serde_json::from_str::<Value>(body) {
        let error = json.get("error").unwrap_or(&json);
        let code = error.get("code").and_then(code_text);
        let message = match error {
            Value::String(text) => Some(text.clone()),
            _ => error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        if let Some(message) = message.filter(|m| !m.trim().is_empty()) {
            return (message, code);
        }
        if code.is_some() {
            return (excerpt(body), code);
        }
    }
    let trimmed = body.trim();
    if trimmed.is_empty() {
        ("(empty response body)".to_owned(), None)
    } else {
        (excerpt(trimmed), None)
    }
}

/// An error code given as a string or a number.
pub(crate) fn code_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

fn excerpt(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(BODY_EXCERPT_CHARS).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn backoff_grows_exponentially_within_jitter_and_is_capped() {
        let base = Duration::from_millis(100);
        for attempt in 1..=4u32 {
            let wait = backoff(base, u64::from(attempt)).as_secs_f64();
            let nominal = 0.1 * f64::from(1u32 << (attempt - 1));
            assert!(
                wait >= nominal * 0.9 - 1e-9 && wait <= nominal * 1.1 + 1e-9,
                "{wait}"
            );
        }
        assert_eq!(backoff(base, 40), MAX_WAIT);
        assert_eq!(backoff(Duration::from_secs(3600), 1), MAX_WAIT);
    }

    #[test]
    fn retry_after_reads_seconds_dates_and_milliseconds() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            retry_after(&headers(&[("retry-after", "3")]), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "7200")]), now),
            Some(MAX_WAIT)
        );
        let date = httpdate::fmt_http_date(now + Duration::from_secs(12));
        assert_eq!(
            retry_after(&headers(&[("retry-after", &date)]), now),
            Some(Duration::from_secs(12))
        );
        let past = httpdate::fmt_http_date(now - Duration::from_secs(12));
        assert_eq!(
            retry_after(&headers(&[("retry-after", &past)]), now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after-ms", "250"), ("retry-after", "9")]),
                now
            ),
            Some(Duration::from_millis(250))
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&headers(&[("retry-after", "-1")]), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    /// Regression: a huge `retry-after-ms` built a `Duration` before capping and panicked.
    #[test]
    fn retry_after_survives_huge_negative_and_garbage_values() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        for huge in ["1e300", "18446744073709551616000", "9".repeat(300).as_str()] {
            assert_eq!(
                retry_after(&headers(&[("retry-after-ms", huge)]), now),
                Some(MAX_WAIT),
                "retry-after-ms: {huge}"
            );
            assert_eq!(
                retry_after(&headers(&[("retry-after", huge)]), now),
                Some(MAX_WAIT),
                "retry-after: {huge}"
            );
        }
        for ignored in [
            "-1", "-1e300", "NaN", "inf", "-inf", "soon", "", "0x10", "1,5",
        ] {
            assert_eq!(
                retry_after(&headers(&[("retry-after-ms", ignored)]), now),
                None,
                "retry-after-ms: {ignored:?}"
            );
            assert_eq!(
                retry_after(&headers(&[("retry-after", ignored)]), now),
                None,
                "retry-after: {ignored:?}"
            );
        }
        // An unusable `retry-after-ms` falls back to `Retry-After`.
        assert_eq!(
            retry_after(
                &headers(&[("retry-after-ms", "-5"), ("retry-after", "2")]),
                now
            ),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            try_again_hint(&format!("try again in {}s", "9".repeat(300))),
            Some(MAX_WAIT)
        );
    }

    #[test]
    fn try_again_hints_in_messages() {
        let hint = |m| try_again_hint(m);
        assert_eq!(
            hint("Rate limit reached. Please try again in 1.5s. Visit …"),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(hint("Try again in 20ms"), Some(Duration::from_millis(20)));
        assert_eq!(hint("try again in 2 seconds"), Some(Duration::from_secs(2)));
        assert_eq!(hint("try again in 9000s"), Some(MAX_WAIT));
        assert_eq!(hint("try again in a while"), None);
        assert_eq!(hint("try again in 3 minutes"), None);
        assert_eq!(hint("slow down"), None);
    }

    #[test]
    fn error_bodies_yield_the_server_message() {
        assert_eq!(
            error_body_message(r#"{"error":{"message":"bad model","code":"model_not_found"}}"#),
            ("bad model".to_owned(), Some("model_not_found".to_owned()))
        );
        assert_eq!(
            error_body_message(r#"{"error":"plain"}"#),
            ("plain".to_owned(), None)
        );
        assert_eq!(
            error_body_message(r#"{"message":"ollama style"}"#),
            ("ollama style".to_owned(), None)
        );
        let long = "x".repeat(800);
        let (message, code) = error_body_message(&long);
        assert_eq!((message.chars().count(), code), (501, None));
        assert_eq!(error_body_message("  ").0, "(empty response body)");
    }
}
