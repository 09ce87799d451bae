#!/usr/bin/env bash
# Sub-agents: 16 children each running `sleep 0.2`, spawned and waited for by one parent,
# vs the same 16 commands one after another; the parent's peak RSS per child thread; and the
# same scenarios through the reference Codex (installed by scripts/install-test-deps.sh) for
# a ratio, Osprey and Codex runs alternating; every run must leave 16 done files. Builds the
# release binaries first (to reuse existing ones, run bench/collab.py directly).
# Usage: bash bench/collab.sh [--runs N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo build --release -p osprey-cli -p osprey-test-support --bins
eval "$(bash scripts/install-test-deps.sh)"
python3 bench/collab.py target/release/osprey target/release/osprey-mock-model \
  "$OSPREY_CODEX_BIN" "$@"
