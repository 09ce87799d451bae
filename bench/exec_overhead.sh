#!/usr/bin/env bash
# Overhead of one exec_command call running `true` vs a bare `bash -c true` (target ≤ +2 ms).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec cargo run --quiet --release -p osprey-core --features bench --example bench_exec_overhead -- "$@"
