#!/usr/bin/env bash
# Sub-agents: 16 children each running `sleep 0.2`, spawned and waited for by one parent,
# vs the same 16 commands one after another; and the parent's peak RSS per child thread.
# Usage: bash bench/collab.sh [--runs N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo build --release -p osprey-cli -p osprey-test-support --bins
python3 bench/collab.py target/release/osprey target/release/osprey-mock-model "$@"
