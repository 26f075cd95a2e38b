#!/usr/bin/env bash
# Set up, build and run the test suite (everything but the gpu label).
# This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh
cmake -S . -B build -DFLEETPRINT_CUDA=OFF -DFLEETPRINT_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build -LE gpu --output-on-failure -j1
