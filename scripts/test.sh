#!/usr/bin/env bash
# The one command that runs every test (see README). It installs what the tests need that
# cargo does not (the pinned reference Codex CLI and SDK from npm into .ci/cache), then runs
# the whole workspace's tests once with cargo-nextest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
eval "$(bash scripts/install-test-deps.sh)"
if ! cargo nextest --version >/dev/null 2>&1; then
  cargo install --locked cargo-nextest
fi
cargo build --workspace --bins
cargo nextest run --workspace --no-fail-fast "$@"
