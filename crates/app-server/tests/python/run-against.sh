#!/usr/bin/env bash
# Runs drive_approval_turn.py against an app-server command with the scripted mock model, the
# way the Rust test does, and prints the driver's JSON on stdout.
#
#   eval "$(bash scripts/install-test-deps.sh)"
#   cargo build -p osprey-test-support --bin osprey-mock-model
#   bash crates/app-server/tests/python/run-against.sh -- "$OSPREY_CODEX_BIN" app-server \
#     > crates/app-server/tests/python/reference-output.json
#
# Needs OSPREY_PY_APPSERVER (the venv python from install-test-deps.sh). The mock binary is
# taken from $OSPREY_MOCK_MODEL or target/debug. The scratch folder (home, workspace, the
# server's stderr, the mock's stderr) is kept and named on stderr.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
if [ "${1:-}" != "--" ] || [ "$#" -lt 2 ]; then
  echo "usage: run-against.sh -- <server command...>" >&2
  exit 2
fi
shift
py="${OSPREY_PY_APPSERVER:?run eval \"\$(bash scripts/install-test-deps.sh)\" first}"
mock="${OSPREY_MOCK_MODEL:-$root/target/debug/osprey-mock-model}"
if [ ! -x "$mock" ]; then
  echo "run-against: $mock is missing; build it with cargo build -p osprey-test-support --bin osprey-mock-model" >&2
  exit 1
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/osprey-py-appserver-XXXXXX")
mkdir -p "$scratch/home" "$scratch/ws"
"$mock" --script "$here/approval-turn.mock.json" >"$scratch/mock.out" 2>"$scratch/mock.err" &
mock_pid=$!
stop_mock() { kill -TERM "$mock_pid" 2>/dev/null || true; }
trap stop_mock EXIT
for _ in $(seq 100); do
  grep -q '^listening on ' "$scratch/mock.out" && break
  sleep 0.05
done
url=$(sed -n 's/^listening on //p' "$scratch/mock.out")
if [ -z "$url" ]; then
  echo "run-against: the mock model did not start; see $scratch/mock.err" >&2
  exit 1
fi
# One config for both servers: Codex reads CODEX_HOME, Osprey OSPREY_HOME.
cat >"$scratch/home/config.toml" <<TOML
model = "gpt-5.5"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "$url"
env_key = "OSPREY_TEST_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
TOML

status=0
CODEX_HOME="$scratch/home" OSPREY_HOME="$scratch/home" OSPREY_TEST_KEY=test \
  "$py" "$here/drive_approval_turn.py" --server-stderr "$scratch/server.err" "$scratch/ws" -- "$@" \
  || status=$?
trap - EXIT
stop_mock
mock_status=0
wait "$mock_pid" || mock_status=$?
if [ "$mock_status" -ne 0 ]; then
  echo "run-against: the mock model reported failures:" >&2
  cat "$scratch/mock.err" >&2
  [ "$status" -ne 0 ] || status=1
fi
for f in notes.txt notes.md; do
  if [ "$status" -eq 0 ] && [ ! -f "$scratch/ws/$f" ]; then
    echo "run-against: the turn completed but $scratch/ws/$f was not created" >&2
    status=1
  fi
done
echo "run-against: scratch folder $scratch" >&2
exit "$status"
