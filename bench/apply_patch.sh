#!/usr/bin/env bash
# Benchmark: applying one 200-chunk patch to a generated 10 MB source file,
# Osprey's apply_patch (release build of crates/apply-patch/examples/apply_patch_cli.rs)
# against the published Codex CLI (`$OSPREY_CODEX_BIN --codex-run-as-apply-patch`).
# Each run gets a fresh copy of the file; prints median wall time and peak RSS
# per tool, the time ratio (target <= 0.5) and our peak RSS over the file size
# (target <= 3).
# Usage: bash bench/apply_patch.sh [RUNS]   (needs OSPREY_CODEX_BIN; see
# scripts/install-test-deps.sh)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-7}"
if [ -z "${OSPREY_CODEX_BIN:-}" ]; then
  eval "$(bash "$root/scripts/install-test-deps.sh")"
fi
cd "$root"
cargo build --release --quiet -p osprey-apply-patch --example apply_patch_cli
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
ours="$target_dir/release/examples/apply_patch_cli"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$ours" generate "$work" 10 200

if [ ! -x /usr/bin/time ]; then
  echo "bench/apply_patch.sh needs GNU time for peak RSS: apt-get install -y time" >&2
  exit 1
fi

python3 - "$ours" "$OSPREY_CODEX_BIN" "$work" "$runs" <<'PY'
import os, shutil, statistics, subprocess, sys, time
ours, codex, work, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
patch = open(os.path.join(work, "patch.txt")).read()
size = os.path.getsize(os.path.join(work, "big.rs"))
tools = {
    "osprey": [ours, patch],
    "codex": [codex, "--codex-run-as-apply-patch", patch],
}
results = {name: {"time": [], "rss": []} for name in tools}
digests = {}
for i in range(runs):
    for name, argv in tools.items():
        d = os.path.join(work, f"{name}-{i}")
        os.mkdir(d)
        shutil.copyfile(os.path.join(work, "big.rs"), os.path.join(d, "big.rs"))
        rss_file = os.path.join(work, "rss.txt")
        # GNU time runs the tool as its own child, so the peak RSS it reports
        # is the tool's alone (not inherited from this Python process).
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file, *argv],
                              cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"{name} failed on run {i}: {proc.stderr.decode()[:500]}")
        results[name]["time"].append(elapsed)
        results[name]["rss"].append(int(open(rss_file).read().split()[-1]) * 1024)
        if name not in digests:
            digests[name] = open(os.path.join(d, "big.rs"), "rb").read()
        shutil.rmtree(d)
print(f"file: {size / 1e6:.1f} MB, patch: {len(patch) / 1e3:.1f} kB, runs: {runs}")
for name in tools:
    t = statistics.median(results[name]["time"]) * 1000
    m = statistics.median(results[name]["rss"]) / 1e6
    print(f"{name:>7}: median {t:8.1f} ms, median peak RSS {m:6.1f} MB")
ratio = statistics.median(results["osprey"]["time"]) / statistics.median(results["codex"]["time"])
mem = statistics.median(results["osprey"]["rss"]) / size
print(f"time ratio osprey/codex: {ratio:.2f} (target <= 0.50)")
print(f"osprey peak RSS / file size: {mem:.2f} (target <= 3.00)")
print(f"identical results: {digests['osprey'] == digests['codex']}")
PY
