//! End-to-end tests for `osprey-mcp-server`: the official Python MCP SDK (`mcp` on PyPI,
//! installed by `eval "$(bash scripts/install-test-deps.sh)"`, which exports `OSPREY_PY_MCP`)
//! drives the server binary over stdio while the scripted mock model answers. Without the
//! SDK the tests skip with a note, unless `OSPREY_REQUIRE_REFERENCE=1`.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "test helpers fail loudly on setup errors and print a note when the Python SDK \
              is not installed"
)]

mod suite;
