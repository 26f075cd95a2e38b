#!/usr/bin/env bash
# Build the libFuzzer targets with clang (ASan + UBSan) in build-fuzz and run
# every test labelled fuzz: each target fuzzes for FP_FUZZ_SECONDS (default 20)
# from its seed corpus in tests/fuzz/corpus. Findings are written to
# build-fuzz/tests/fuzz/artifacts/. Usage: ci/fuzz.sh [seconds per target]
# 0 seconds replays every committed seed once, deterministically (CI does).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-${FP_FUZZ_SECONDS:-20}}"
jobs="${FP_FUZZ_JOBS:-$(nproc)}"
CC="${CC_FUZZ:-clang}" cmake -S . -B build-fuzz -DFLEETPRINT_CUDA=OFF -DFLEETPRINT_FUZZ=ON \
    -DFLEETPRINT_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFP_FUZZ_SECONDS="$secs" >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_targets
ctest --test-dir build-fuzz -L fuzz --output-on-failure -j"$jobs"
