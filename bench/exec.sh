#!/usr/bin/env bash
# `osprey exec --json` side by side with the pinned reference Codex CLI on the same mock
# scenarios: text-only turn, a turn with two tool calls, --version, binary size.
# Usage: bash bench/exec.sh [--runs N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
eval "$(bash scripts/install-test-deps.sh)"
cargo build --release -p osprey-cli -p osprey-test-support --bins
python3 bench/exec_vs_codex.py target/release/osprey "$OSPREY_CODEX_BIN" target/release/osprey-mock-model "$@"
