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
# The sandbox's macOS side (Seatbelt profiles) cannot run here; keep it compiling.
if rustup target list --installed 2>/dev/null | grep -q '^x86_64-apple-darwin$' \
  || timeout 120 rustup target add x86_64-apple-darwin >/dev/null 2>&1; then
  cargo check --quiet --target x86_64-apple-darwin -p osprey-sandboxing -p osprey-process
  echo "macOS check: osprey-sandboxing and osprey-process compile for x86_64-apple-darwin"
else
  echo "macOS check skipped: the x86_64-apple-darwin target cannot be installed here (no network to the Rust toolchain servers)"
fi

cargo build --workspace --bins
# The Windows exec server for the Wine test (docs/windows.md).
if [ "${OSPREY_REQUIRE_WINE:-}" = 1 ]; then
  bash scripts/wine-exec-server.sh build >/dev/null
  echo "Windows build: osprey-exec-server.exe built for the Wine test"
  bash scripts/wine-exec-server.sh unit
fi
cargo nextest run --workspace --no-fail-fast "$@"
