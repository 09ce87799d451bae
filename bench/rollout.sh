#!/usr/bin/env bash
# Benchmark: osprey-rollout listing and reading speed.
#
#   bash bench/rollout.sh              # 5 000 session files, a 10 000-record thread
#   bash bench/rollout.sh 20000 50000  # FILES ITEMS
#
# Builds crates/rollout/examples/bench_rollout.rs in release mode and runs it: it generates
# the files in a temporary home (removed afterwards) and prints median wall times for
# `sessions list` without and with the index, and for reading + reconstructing the long
# thread, each with a baseline measured in the same run. Targets: listing <= 200 ms,
# long thread <= 300 ms.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo build --release --quiet -p osprey-rollout --example bench_rollout
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
exec "$target_dir/release/examples/bench_rollout" "${1:-5000}" "${2:-10000}"
