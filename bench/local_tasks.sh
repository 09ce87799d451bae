#!/usr/bin/env bash
# The embedded model's task set (17 small tasks, see bench/local_tasks_set.py), in three runs:
#   1. ablation: `osprey exec` with the local model's quality aids switched on one by one
#      (constrained decoding, local tool profile, loop guard, prefix cache);
#   2. aids: the default configuration, then each harness aid of the local profile (the
#      AIDS list in local_tasks.py) switched off alone, then all of them off;
#   3. harnesses: the same model behind `osprey model serve`, driven by the reference Codex
#      CLI and by Osprey's hosted-model harness.
# Sampling is greedy, yet one pass moves by about two tasks between runs (prompt batching
# tips near-ties); pass --repeat N for N passes per configuration. Wall times depend on the
# machine's load (`uptime` is printed before each run). A pass of the set takes about 9
# minutes on two quiet cores; the whole script several hours.
# Usage: bash bench/local_tasks.sh [--timeout SECONDS] [--tasks hello,add,...] [--repeat N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
eval "$(bash scripts/install-test-deps.sh)"
cargo build --release -p osprey-cli
for mode in ablation aids; do
  uptime
  python3 bench/local_tasks.py target/release/osprey --mode "$mode" "$@"
done
uptime
python3 bench/local_tasks.py target/release/osprey --mode harness --codex "$OSPREY_CODEX_BIN" "$@"
