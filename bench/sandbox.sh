#!/usr/bin/env bash
# Overhead of running `true` sandboxed (Landlock path, bubblewrap path) vs unsandboxed.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../crates/linux-sandbox/bench/sandbox.sh" "$@"
