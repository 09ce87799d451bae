#!/usr/bin/env bash
# Benchmarks the embedded local model (crates/local-model). Needs the model:
#   eval "$(bash scripts/install-test-deps.sh)"   # prints export OSPREY_LOCAL_MODEL=...
# Reports load time, prompt/generation tok/s next to llama.cpp's own counters, time to first
# token without and with the prefix cache, peak RSS, and the wall time of the hello.py task.
# Targets: first token <= 5 s with the prefix cache; hello.py <= 90 s; speed within 1.1x of
# llama.cpp's own (llama-bench is not available, so its internal perf counters are the
# baseline, measured in the same run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
: "${OSPREY_LOCAL_MODEL:?set OSPREY_LOCAL_MODEL (run: eval \"\$(bash scripts/install-test-deps.sh)\")}"
# CPU features for the vendored llama.cpp build (see docs/local-model.md).
export GGML_AVX=ON GGML_AVX2=ON GGML_FMA=ON GGML_F16C=ON GGML_BMI2=ON
cargo build -q -p osprey-local-model --example local_model_bench
/usr/bin/time -f "bench_process_peak_rss_kib %M" target/debug/examples/local_model_bench
start=$(date +%s.%N)
OSPREY_REQUIRE_LOCAL_MODEL=1 cargo test -q -p osprey-local-model --test all -- hello_py_task --nocapture 2>&1 \
  | grep -E "hello.py task:|test result" || true
end=$(date +%s.%N)
echo "hello_py_test_wall_s $(echo "$end - $start" | bc)"
