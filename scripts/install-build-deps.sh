#!/usr/bin/env bash
# System packages the build needs beyond cargo: cmake and libclang-dev for the vendored
# llama.cpp of the embedded local model (Debian packages). Idempotent.
set -euo pipefail
if ! command -v cmake >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake libclang-dev >&2
  else
    echo "install-build-deps: cmake or libclang-dev is missing and apt-get is not available" >&2
    exit 1
  fi
fi
