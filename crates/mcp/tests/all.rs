//! Integration tests for osprey-mcp against real MCP servers: the official
//! `@modelcontextprotocol/server-everything` (npm) and a small server on the official Python
//! SDK (`tests/servers/py_server.py`). Install both with
//! `eval "$(bash scripts/install-test-deps.sh)"`; without them the tests that need them skip
//! with a note, unless `OSPREY_REQUIRE_REFERENCE=1`.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "test helpers fail loudly on setup errors and print a note when a reference \
              server is not installed"
)]

mod suite;
