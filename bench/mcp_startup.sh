#!/usr/bin/env bash
# Startup of 5 stdio MCP servers (server-everything) in parallel through McpConnectionManager,
# against the slowest server's own start time (target: manager overhead <= 50 ms).
# Usage: bench/mcp_startup.sh [SERVERS] [ROUNDS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ -z "${OSPREY_MCP_EVERYTHING:-}" ]; then
  eval "$(bash scripts/install-test-deps.sh)"
fi
exec cargo run --quiet --release -p osprey-mcp --example bench_startup -- "$@"
