#!/usr/bin/env bash
# The Windows exec server under Wine (see docs/windows.md).
#
#   bash scripts/wine-exec-server.sh deps            # Debian packages and the Rust target
#   bash scripts/wine-exec-server.sh build           # osprey-exec-server.exe + the DLL shim
#   bash scripts/wine-exec-server.sh run [FLAGS...]  # deps, build, then serve under wine
#                                                    # (default flags: --listen stdio)
#   bash scripts/wine-exec-server.sh unit            # the unit tests of the Windows build
#                                                    # (exec-server, process, shell) under wine
#
# `build` cross-compiles crates/exec-server's osprey-exec-server binary for
# x86_64-pc-windows-gnu and puts bcryptprimitives.dll beside it: Debian's Wine 8 lacks that
# DLL, whose ProcessPrng Rust's standard library imports, and scripts/wine/bcryptprimitives.c
# provides it on top of RtlGenRandom. `run` uses a throwaway WINEPREFIX (removed on exit)
# and WINEDEBUG=-all, so Wine's chatter stays off the protocol's stdout.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target=x86_64-pc-windows-gnu
profile_dir="${CARGO_TARGET_DIR:-$root/target}/$target/debug"

deps() {
  local missing=()
  command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(gcc-mingw-w64-x86-64)
  command -v wine >/dev/null 2>&1 || missing+=(wine64)
  if [ "${#missing[@]}" -gt 0 ]; then
    if ! command -v apt-get >/dev/null 2>&1; then
      echo "wine-exec-server: install ${missing[*]} (apt-get is not available here)" >&2
      return 1
    fi
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >&2
  fi
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    timeout 300 rustup target add "$target" >&2
  fi
}

build() {
  (cd "$root" && cargo build --quiet --target "$target" -p osprey-exec-server --features cli --bin osprey-exec-server)
  x86_64-w64-mingw32-gcc -O2 -shared -o "$profile_dir/bcryptprimitives.dll" \
    "$root/scripts/wine/bcryptprimitives.c" -ladvapi32
  echo "$profile_dir/osprey-exec-server.exe"
}

run() {
  deps
  build >/dev/null
  local prefix
  prefix="$(mktemp -d "${TMPDIR:-/tmp}/osprey-wine-XXXXXX")"
  # shellcheck disable=SC2064 # expand now: the prefix is fixed
  trap "WINEPREFIX='$prefix' wineserver -k >/dev/null 2>&1 || true; rm -rf '$prefix'" EXIT
  if [ "$#" -eq 0 ]; then
    set -- --listen stdio
  fi
  WINEPREFIX="$prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" \
    wine "$profile_dir/osprey-exec-server.exe" "$@"
}

# Builds the listed crates' unit tests for Windows and runs each test program under wine.
unit() {
  deps
  local exes=() exe prefix status=0
  mapfile -t exes < <(cd "$root" && cargo test --quiet --target "$target" \
      -p osprey-exec-server -p osprey-process -p osprey-shell --lib --no-run \
      --message-format json 2>/dev/null \
    | grep -o '"executable":"[^"]*"' | sed 's/^"executable":"//; s/"$//')
  if [ "${#exes[@]}" -eq 0 ]; then
    echo "wine-exec-server: no Windows test programs were built" >&2
    return 1
  fi
  prefix="$(mktemp -d "${TMPDIR:-/tmp}/osprey-wine-XXXXXX")"
  # shellcheck disable=SC2064 # expand now: the prefix is fixed
  trap "WINEPREFIX='$prefix' wineserver -k >/dev/null 2>&1 || true; rm -rf '$prefix'" EXIT
  for exe in "${exes[@]}"; do
    x86_64-w64-mingw32-gcc -O2 -shared -o "$(dirname "$exe")/bcryptprimitives.dll" \
      "$root/scripts/wine/bcryptprimitives.c" -ladvapi32
    local log rc=0
    log="$prefix/test.log"
    WINEPREFIX="$prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" \
      wine "$exe" --test-threads=1 >"$log" 2>&1 || rc=$?
    echo "$(basename "$exe") under wine: $(grep -E '^test result:' "$log" || echo 'no result line')"
    if [ "$rc" -ne 0 ]; then
      cat "$log" >&2
      status=1
    fi
  done
  return "$status"
}

command="${1:-run}"
[ "$#" -gt 0 ] && shift
case "$command" in
  deps) deps ;;
  build) build ;;
  run) run "$@" ;;
  unit) unit ;;
  *)
    echo "usage: bash scripts/wine-exec-server.sh deps|build|run [FLAGS...]|unit" >&2
    exit 2
    ;;
esac
