#!/usr/bin/env bash
# Sandbox overhead through the real `osprey` binary: median wall time of `osprey sandbox`
# running `true` under each confinement, against the same binary unconfined
# (danger-full-access) and a bare `true`; then the cost of file creation under the
# .git/.osprey creation guard. The read-only mount view (metadata protection) is always on.
# Usage: bash bench/sandbox.sh [RUNS]   (needs `bwrap` on PATH; builds the release binary)
# OSPREY_BENCH_DIR=DIR puts the fixtures there (a tmpfs keeps disk noise out of it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo build --quiet --release -p osprey-cli
exec python3 bench/sandbox.py target/release/osprey "${1:-200}"
