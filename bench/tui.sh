#!/usr/bin/env bash
# The `osprey` TUI side by side with the pinned reference `codex` TUI, each in a real
# pseudo-terminal against the same mock model: launch → editable composer, key → frame
# (idle and while streaming, p50/p99), bytes written while idle, RSS after N cells.
# Usage: bash bench/tui.sh [--debug] [--keys N] [--cells N]
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
venv=.ci/cache/bench-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet pyte==0.8.2
fi
if [ "$profile" = release ]; then
  cargo build --release -p osprey-cli -p osprey-test-support --bins
else
  cargo build -p osprey-cli -p osprey-test-support --bins
fi
"$venv/bin/python" bench/tui_vs_codex.py "$root/target/$profile/osprey" "$OSPREY_CODEX_BIN" \
  "$root/target/$profile/osprey-mock-model" "${args[@]+"${args[@]}"}"
