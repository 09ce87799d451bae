#!/usr/bin/env bash
# `osprey app-server` side by side with the pinned reference `codex app-server` on the same
# mock model: startup to the initialize response, turn/start → turn/started, turn/start → the
# first agentMessage delta, RSS per idle loaded thread, peak RSS with 20 turns at once.
# Usage: bash bench/app_server.sh [--bin DIR] [--runs N] [--threads N] [--active M]
#   --bin DIR  use DIR/osprey and DIR/osprey-mock-model as they are (e.g. target/debug, to
#              try the script); without it the release binaries are built first.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bin_dir=""
args=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --bin) bin_dir="${2:?--bin needs a directory}"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
eval "$(bash scripts/install-test-deps.sh)"
if [ -z "$bin_dir" ]; then
  cargo build --release -p osprey-cli -p osprey-test-support --bins
  bin_dir=target/release
fi
for b in osprey osprey-mock-model; do
  if [ ! -x "$bin_dir/$b" ]; then
    echo "app_server bench: $bin_dir/$b is missing; build it (cargo build -p osprey-cli -p osprey-test-support --bins) or drop --bin" >&2
    exit 1
  fi
done
python3 bench/app_server_vs_codex.py "$bin_dir/osprey" "$OSPREY_CODEX_BIN" "$bin_dir/osprey-mock-model" "${args[@]+"${args[@]}"}"
