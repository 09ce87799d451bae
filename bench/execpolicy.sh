#!/usr/bin/env bash
# Exec-policy check latency: 1 000 rules, 10 000 commands, release build (target: median <= 50 us).
exec cargo run --quiet --release -p osprey-execpolicy --example bench_check "$@"
