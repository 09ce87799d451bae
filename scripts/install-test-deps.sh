#!/usr/bin/env bash
# Installs everything the test suite needs that cargo does not bring:
# the pinned reference Codex CLI and TypeScript SDK (npm, into .ci/cache/npm),
# and Debian packages the sandbox tests use. Idempotent; safe to rerun.
# Prints `export NAME=VALUE` lines for the variables the tests read.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.ci/cache"
npm_dir="$cache/npm"
CODEX_VERSION="0.171.0"
CODEX_SDK_VERSION="0.163.0"

mkdir -p "$npm_dir"
if [ ! -f "$npm_dir/.installed-$CODEX_VERSION-$CODEX_SDK_VERSION" ]; then
  (cd "$npm_dir" && npm install --no-audit --no-fund --loglevel=error --prefix . \
    "@openai/codex@$CODEX_VERSION" "@openai/codex-sdk@$CODEX_SDK_VERSION" >&2)
  touch "$npm_dir/.installed-$CODEX_VERSION-$CODEX_SDK_VERSION"
fi

# The top-level package (not the copy the SDK may nest) is the pinned reference.
codex_bin=$(find "$npm_dir/node_modules/@openai" -maxdepth 5 -path '*/codex-linux-*/vendor/*/bin/codex' -type f | head -n 1)
if [ -z "$codex_bin" ]; then
  echo "install-test-deps: the reference Codex binary was not found under $npm_dir" >&2
  exit 1
fi
echo "export OSPREY_CODEX_BIN='$codex_bin'"
echo "export OSPREY_NPM_DIR='$npm_dir'"
echo "export OSPREY_REQUIRE_REFERENCE=1"
