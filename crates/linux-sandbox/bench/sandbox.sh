#!/usr/bin/env bash
# Sandbox overhead: median wall time of `true` run directly, through the Landlock
# helper (with and without the .git mount namespace) and through bubblewrap.
# Usage: bash crates/linux-sandbox/bench/sandbox.sh [RUNS]   (needs `bwrap` on PATH)
set -euo pipefail
cd "$(dirname "$0")/../../.."
exec cargo run --quiet --release -p osprey-linux-sandbox --example sandbox_bench -- "${1:-200}"
