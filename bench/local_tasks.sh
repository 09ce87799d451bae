#!/usr/bin/env bash
# The embedded model's task set (hello.py, an add function with a test, a failing assertion,
# a question answered from a file), in two runs:
#   1. ablation: `osprey exec` with the local model's quality aids switched on one by one
#      (constrained decoding, local tool profile, loop guard, prefix cache);
#   2. harnesses: the same model behind `osprey model serve`, driven by the reference Codex
#      CLI and by Osprey's hosted-model harness.
# Sampling is greedy, so success counts repeat; wall times depend on the machine's load.
# Usage: bash bench/local_tasks.sh [--timeout SECONDS] [--tasks hello,add,...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
eval "$(bash scripts/install-test-deps.sh)"
cargo build --release -p osprey-cli
python3 bench/local_tasks.py target/release/osprey --mode ablation "$@"
python3 bench/local_tasks.py target/release/osprey --mode harness --codex "$OSPREY_CODEX_BIN" "$@"
