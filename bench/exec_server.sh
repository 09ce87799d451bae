#!/usr/bin/env bash
# `osprey exec-server` side by side with the pinned reference `codex exec-server`: added
# latency of running `true` through the server (stdio and WebSocket on loopback) against a
# local spawn, and fs/readFile over 1 000 small files (target: ≤ +3 ms on loopback).
# Usage: bash bench/exec_server.sh [--debug] [--runs N] [--files N]
#   --debug  use the debug build (to try the script; the numbers are not representative)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
profile=release
args=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --debug) profile=debug; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
eval "$(bash scripts/install-test-deps.sh)"
if [ "$profile" = release ]; then
  cargo build --release -p osprey-cli --bin osprey
  cargo build --release -p osprey-exec-server --example bench_exec_server
else
  cargo build -p osprey-cli --bin osprey
  cargo build -p osprey-exec-server --example bench_exec_server
fi
codex_args=()
if [ -n "${OSPREY_CODEX_BIN:-}" ]; then
  codex_args=(--codex "$OSPREY_CODEX_BIN")
fi
"target/$profile/examples/bench_exec_server" --osprey "$root/target/$profile/osprey" \
  "${codex_args[@]+"${codex_args[@]}"}" "${args[@]+"${args[@]}"}"
