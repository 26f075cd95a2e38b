#!/usr/bin/env bash
# Configure and build with FLEETPRINT_CUDA=ON, so every .cu file compiles and
# the cuda and nccl backends link (no GPU is needed to build).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-cuda -DFLEETPRINT_CUDA=ON -DFLEETPRINT_WERROR=ON >/dev/null
cmake --build build-cuda -j"$(nproc)"
version=$(build-cuda/fleetprint version)
symbols=$(nm build-cuda/fleetprint)
grep -q 'device backends: host cuda' <<<"$version"
grep -q 'fp_comm_nccl' <<<"$symbols" && grep -q 'ncclCommInitRankConfig' <<<"$symbols"
echo "cuda build: ok (cuda and nccl backends linked)"
