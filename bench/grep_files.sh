#!/usr/bin/env bash
# Benchmark: osprey-tools' in-process grep_files against ripgrep on the same generated tree.
#
#   bash bench/grep_files.sh            # tree in $BENCH_DIR (default /tmp/osprey-grep-bench)
#   RUNS=10 FILES=20000 bash bench/grep_files.sh
#
# It generates (once) a git-style tree of FILES text files (~3 KiB each), with a
# .gitignore'd directory and hidden files (about 60 MB of text, under 100 MB on disk), builds the `grep_bench` example in release mode,
# and times, for several patterns, the median wall time of:
#   osprey  - grep_bench (one process = one grep_files call: walk, search, sort by mtime)
#   rg-sort - rg --files-with-matches --sortr=modified (what Codex runs; single-threaded)
#   rg      - rg --files-with-matches (parallel, unsorted: ripgrep at full speed)
# and reports osprey's ratio to each. Target: osprey <= 1.5x rg. Needs rg and python3.
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_DIR="${BENCH_DIR:-/tmp/osprey-grep-bench}"
FILES="${FILES:-20000}"
RUNS="${RUNS:-11}"
TREE="$BENCH_DIR/tree-v2-$FILES"

command -v rg >/dev/null || { echo "ripgrep (rg) is required: apt-get install -y ripgrep" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is required to generate the tree" >&2; exit 1; }

if [ ! -f "$TREE/.done" ]; then
  echo "generating $FILES files in $TREE ..." >&2
  rm -rf "$TREE"
  mkdir -p "$TREE"
  python3 - "$TREE" "$FILES" <<'PY'
import os, random, sys
root, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(42)
words = ("alpha beta gamma delta return value index buffer parse render token stream config "
         "handler request response error result option vector string number update create "
         "delete select insert filter collect").split()
exts = [".rs", ".py", ".ts", ".go", ".md", ".txt"]
os.makedirs(os.path.join(root, ".git"))
with open(os.path.join(root, ".gitignore"), "w") as f:
    f.write("target/\n*.log\n")
for i in range(count):
    top = "target" if i % 50 == 0 else f"pkg{i % 40:02d}"
    d = os.path.join(root, top, f"mod{(i // 40) % 25:02d}")
    os.makedirs(d, exist_ok=True)
    hidden = "." if i % 97 == 0 else ""
    name = f"{hidden}file{i:05d}{exts[i % len(exts)]}"
    lines = []
    for _ in range(rng.randint(30, 70)):
        lines.append(" ".join(rng.choice(words) for _ in range(rng.randint(4, 12))))
    if i % 1000 == 7:
        lines.insert(rng.randrange(len(lines)), "let marker = needle_7f3a(42);")
    if i % 10 == 3:
        lines.insert(rng.randrange(len(lines)), f"fn on_{rng.choice(words)}_handler(x: u32) {{}}")
    with open(os.path.join(d, name), "w") as f:
        f.write("\n".join(lines) + "\n")
PY
  touch "$TREE/.done"
fi
echo "tree: $TREE ($(du -sh "$TREE" | cut -f1), $(find "$TREE" -type f | wc -l) files)" >&2

TARGET_DIR="$(cd "$ROOT_DIR" && cargo metadata --format-version 1 --no-deps 2>/dev/null \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])' 2>/dev/null \
  || echo "${CARGO_TARGET_DIR:-$ROOT_DIR/target}")"
echo "building grep_bench (release) ..." >&2
if ! (cd "$ROOT_DIR" && cargo build --quiet --release -p osprey-tools --example grep_bench); then
  [ -x "$TARGET_DIR/release/examples/grep_bench" ] || exit 1
  echo "warning: the build failed; timing the grep_bench binary built earlier" >&2
fi
BIN="$TARGET_DIR/release/examples/grep_bench"

# Wall time of one run of "$@" in milliseconds (output discarded).
run_ms() {
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || true
  end=$(date +%s%N)
  echo $(( (end - start) / 1000000 ))
}

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Our paths must be ripgrep's (all of them when there are at most 2000, grep_files' cap;
# otherwise a subset of them).
check_same() {
  local ours theirs
  ours=$("$BIN" "$TREE" "$1" "$2" 2000 | sort)
  if [ -n "$2" ]; then
    theirs=$(rg --files-with-matches --no-messages --glob "$2" -e "$1" -- "$TREE" | sort || true)
  else
    theirs=$(rg --files-with-matches --no-messages -e "$1" -- "$TREE" | sort || true)
  fi
  if [ -z "$theirs" ]; then
    [ "$ours" = "No matches found." ] || echo "MISMATCH: rg found nothing for '$1'" >&2
  elif [ "$(printf '%s\n' "$theirs" | wc -l)" -le 2000 ]; then
    [ "$ours" = "$theirs" ] || echo "MISMATCH for pattern '$1' include '$2'" >&2
  else
    [ -z "$(comm -23 <(printf '%s\n' "$ours") <(printf '%s\n' "$theirs"))" ] \
      || echo "MISMATCH: paths rg does not report for '$1'" >&2
  fi
}

printf '%-28s %-8s %8s %8s %8s %9s %9s\n' pattern include osprey rg-sort rg "vs rg-sort" "vs rg"
for spec in "needle_7f3a|" "fn\\s+on_\\w+_handler|" "return|" "zzz_no_match_zzz|" "return|*.rs"; do
  pattern="${spec%%|*}"
  include="${spec#*|}"
  glob_args=()
  [ -n "$include" ] && glob_args=(--glob "$include")
  check_same "$pattern" "$include"
  # Warm the page cache and the binaries once.
  "$BIN" "$TREE" "$pattern" "$include" >/dev/null
  rg -l "${glob_args[@]}" -e "$pattern" "$TREE" >/dev/null || true
  # The three commands take turns in every round, so load from other processes on this
  # machine hits them alike; the median of RUNS rounds is reported.
  t_ours=(); t_sorted=(); t_fast=()
  for _ in $(seq "$RUNS"); do
    t_ours+=("$(run_ms "$BIN" "$TREE" "$pattern" "$include" 2000)")
    t_sorted+=("$(run_ms rg --files-with-matches --sortr=modified --no-messages "${glob_args[@]}" -e "$pattern" -- "$TREE")")
    t_fast+=("$(run_ms rg --files-with-matches --no-messages "${glob_args[@]}" -e "$pattern" -- "$TREE")")
  done
  ours=$(median "${t_ours[@]}")
  rg_sorted=$(median "${t_sorted[@]}")
  rg_fast=$(median "${t_fast[@]}")
  printf '%-28s %-8s %6sms %6sms %6sms %9s %9s\n' "$pattern" "${include:--}" "$ours" "$rg_sorted" "$rg_fast" \
    "$(awk -v a="$ours" -v b="$rg_sorted" 'BEGIN{printf "%.2fx", a/(b>0?b:1)}')" \
    "$(awk -v a="$ours" -v b="$rg_fast" 'BEGIN{printf "%.2fx", a/(b>0?b:1)}')"
done
